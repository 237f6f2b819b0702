/* utf8.c - the one UTF-8 decoder and encoder (utf8.h). */
#include "utf8.h"

size_t utf8_decode(const char *s, size_t len, uint32_t *cp)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n;
	uint32_t v;

	*cp = UTF8_REPLACEMENT;
	if (!len)
		return 0;
	if (u[0] < 0x80) {
		*cp = u[0];
		return 1;
	}
	if (u[0] >= 0xC2 && u[0] <= 0xDF) {
		n = 2;
		v = u[0] & 0x1F;
	} else if (u[0] >= 0xE0 && u[0] <= 0xEF) {
		n = 3;
		v = u[0] & 0x0F;
	} else if (u[0] >= 0xF0 && u[0] <= 0xF4) {
		n = 4;
		v = u[0] & 0x07;
	} else {
		return 0;       /* a continuation byte, C0/C1 (overlong), F5.. */
	}
	if (len < n)
		return 0;
	for (size_t k = 1; k < n; k++) {
		if ((u[k] & 0xC0) != 0x80)
			return 0;
		v = v << 6 | (u[k] & 0x3F);
	}
	/* Overlong forms, surrogates, beyond Unicode. */
	if ((n == 3 && (v < 0x800 || (v >= 0xD800 && v <= 0xDFFF))) ||
	    (n == 4 && (v < 0x10000 || v > 0x10FFFF)))
		return 0;
	*cp = v;
	return n;
}

size_t utf8_encode(uint32_t cp, char out[UTF8_MAX])
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xC0 | cp >> 6);
		out[1] = (char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if ((cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
		return 0;
	if (cp < 0x10000) {
		out[0] = (char)(0xE0 | cp >> 12);
		out[1] = (char)(0x80 | (cp >> 6 & 0x3F));
		out[2] = (char)(0x80 | (cp & 0x3F));
		return 3;
	}
	out[0] = (char)(0xF0 | cp >> 18);
	out[1] = (char)(0x80 | (cp >> 12 & 0x3F));
	out[2] = (char)(0x80 | (cp >> 6 & 0x3F));
	out[3] = (char)(0x80 | (cp & 0x3F));
	return 4;
}

bool utf8_valid(const char *s, size_t len)
{
	uint32_t cp;

	for (size_t i = 0, k; i < len; i += k)
		if (!(k = utf8_decode(s + i, len - i, &cp)))
			return false;
	return true;
}

size_t utf8_char_start(const char *s, size_t i)
{
	while (i > 0 && ((unsigned char)s[i] & 0xC0) == 0x80)
		i--;
	return i;
}

size_t utf8_count(const char *s, size_t len)
{
	size_t n = 0;
	uint32_t cp;

	for (size_t i = 0; i < len; n++) {
		size_t k = utf8_decode(s + i, len - i, &cp);

		i += k ? k : 1;
	}
	return n;
}
