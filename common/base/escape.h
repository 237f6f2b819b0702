/* escape.h - writing a string into a format that must keep it intact, as
 * git's quote.h does: Go-quoted text (the API server's and CEL's messages),
 * JSON strings, YAML double-quoted scalars, logfmt values, HTML text and
 * attribute values. Each appends to a strbuf (errors are the strbuf's:
 * sb_error). The one copy of each escaper; nothing else in the codebase
 * escapes by hand. */
#ifndef DT_ESCAPE_H
#define DT_ESCAPE_H

#include <stddef.h>
#include <stdint.h>

#include "strbuf.h"

/* ---- Go-style quoting ----
 *
 * '"' and '\\' always get a backslash, bytes below 0x20 are \xHH unless
 * named; the flags choose among the quotings Go (and so the API server and
 * CEL) uses in messages. */
enum sb_quote_flags {
	SB_QUOTE_BARE  = 1u << 0,  /* no surrounding double quotes */
	SB_QUOTE_NAMED = 1u << 1,  /* \n \r \t by name, not \xHH */
	SB_QUOTE_DEL   = 1u << 2,  /* DEL (0x7f) as \x7f */
	SB_QUOTE_ASCII = 1u << 3,  /* every byte >= 0x80 as \xHH (Go's time.quote,
				    * CEL bytes literals) */
	/* strconv.Quote (Go's %q): \a \b \f \n \r \t \v by name, invalid
	 * UTF-8 bytes as \xHH, code points Go does not print (controls, odd
	 * spaces, format characters, noncharacters) as \uHHHH / \UHHHHHHHH;
	 * implies SB_QUOTE_DEL. */
	SB_QUOTE_GO    = 1u << 4,
};
void sb_quote(struct strbuf *sb, const char *s, size_t len, unsigned flags);
/* sb_quote into out (cap bytes, always NUL-terminated, also when cap is
 * small): when the whole does not fit, it is cut after the last escape
 * that fits and "..." marks the cut (before the closing quote). Returns the
 * length written. For messages built in fixed buffers. */
size_t dt_quote_buf(char *out, size_t cap, const char *s, size_t len, unsigned flags);

/* ---- JSON ----
 *
 * A JSON string, quotes included, as Go's encoding/json writes it (and so
 * kubectl): \" \\ \n \r \t, other controls and < > & as \u00hh, U+2028 and
 * U+2029 as \u2028 \u2029, invalid UTF-8 as \ufffd. */
void sb_json_string(struct strbuf *sb, const char *s, size_t len);

/* ---- YAML ----
 *
 * The escape of code point cp inside a YAML double-quoted scalar, as
 * libyaml's emitter writes it (\0 \a \b \t \n \v \f \r \e \" \\ \N \L \P,
 * other unprintable characters \xHH, \uHHHH, \UHHHHHHHH), into buf (room
 * for 11 bytes); NULL when cp is printable and stands for itself. */
const char *yaml_escape(uint32_t cp, char buf[11]);
/* Whether YAML may hold cp unescaped (its c-printable set). */
int yaml_printable(uint32_t cp);
/* A YAML double-quoted scalar, quotes included, on one line; invalid UTF-8
 * as U+FFFD (YAML text cannot hold it). */
void sb_yaml_dquote(struct strbuf *sb, const char *s, size_t len);

/* ---- logfmt ----
 *
 * A logfmt value: as is when it needs no quotes, else double-quoted with
 * \" \\ \n \r \t and \u00hh for other controls and DEL, so that one event
 * stays one line whatever a value holds. */
void sb_logfmt_value(struct strbuf *sb, const char *value);

/* ---- HTML ----
 *
 * Text or a double- or single-quoted attribute value: & < > " ' as
 * &amp; &lt; &gt; &quot; &#39;; invalid UTF-8 and what XML 1.0 cannot
 * hold (controls but tab, newline and CR; DEL; U+FFFE, U+FFFF) as U+FFFD,
 * so that the same text serves HTML and a standalone SVG file. Safe in
 * element content and in quoted attributes, not in <script> or <style>
 * nor in an unquoted attribute. */
void sb_html(struct strbuf *sb, const char *s, size_t len);

#endif
