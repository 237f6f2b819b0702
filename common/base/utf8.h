/* utf8.h - decoding and encoding UTF-8, strictly (RFC 3629): no overlong
 * forms, no surrogates, nothing above U+10FFFF. The decoder every module
 * that looks at characters uses (the JSON reader, the emitters, CEL's
 * strings, the semver and Go-quote messages, the metrics' label checks). */
#ifndef DT_UTF8_H
#define DT_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define UTF8_MAX 4              /* bytes of one encoded code point */
#define UTF8_REPLACEMENT 0xFFFDu

/* The code point at s (at most len bytes available) in *cp and its length
 * in bytes; 0 when the bytes there are not valid UTF-8 (or len is 0), with
 * *cp set to UTF8_REPLACEMENT. */
size_t utf8_decode(const char *s, size_t len, uint32_t *cp);
/* cp as UTF-8 into out (room for UTF8_MAX bytes); its length, or 0 for a
 * surrogate or a value above U+10FFFF (nothing written). */
size_t utf8_encode(uint32_t cp, char out[UTF8_MAX]);
/* Whether s[0..len) is valid UTF-8 throughout. */
bool utf8_valid(const char *s, size_t len);
/* The number of code points in s[0..len), an invalid byte counting as
 * one. */
size_t utf8_count(const char *s, size_t len);
/* The offset of the character holding byte i of s: i when a character
 * starts there, else back over continuation bytes (never before 0). Where
 * to cut a string so that no character is split. */
size_t utf8_char_start(const char *s, size_t i);

#endif
