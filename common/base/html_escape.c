/* html_escape.c - HTML/XML text escaping (html_escape.h). */
#include "html_escape.h"

#include <stdbool.h>
#include <string.h>

#define REPLACEMENT "\xef\xbf\xbd"     /* U+FFFD */

size_t utf8_seq_len(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t len;
	unsigned cp;

	if (!n)
		return 0;
	if (u[0] < 0x80)
		return 1;
	if (u[0] >= 0xc2 && u[0] <= 0xdf)
		len = 2, cp = u[0] & 0x1f;
	else if (u[0] >= 0xe0 && u[0] <= 0xef)
		len = 3, cp = u[0] & 0x0f;
	else if (u[0] >= 0xf0 && u[0] <= 0xf4)
		len = 4, cp = u[0] & 0x07;
	else
		return 0;
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((u[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (u[i] & 0x3f);
	}
	/* overlong forms, surrogates, beyond U+10FFFF */
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	/* XML 1.0 refuses U+FFFE and U+FFFF as characters */
	if (cp == 0xfffe || cp == 0xffff)
		return 0;
	return len;
}

static const char *entity(char c)
{
	switch (c) {
	case '&': return "&amp;";
	case '<': return "&lt;";
	case '>': return "&gt;";
	case '"': return "&quot;";
	case '\'': return "&#39;";
	default: return NULL;
	}
}

void sb_put_html_n(struct strbuf *sb, const char *s, size_t n)
{
	size_t i = 0, plain = 0;

	while (i < n) {
		unsigned char c = (unsigned char)s[i];
		size_t len = utf8_seq_len(s + i, n - i);
		const char *ent = len == 1 ? entity((char)c) : NULL;
		bool bad = !len || (c < 0x20 && c != '\t' && c != '\n') || c == 0x7f;

		if (!ent && !bad) {
			i += len;
			continue;
		}
		sb_append(sb, s + plain, i - plain);
		sb_puts(sb, ent ? ent : REPLACEMENT);
		i += len ? len : 1;
		plain = i;
	}
	sb_append(sb, s + plain, i - plain);
}

void sb_put_html(struct strbuf *sb, const char *s)
{
	if (s)
		sb_put_html_n(sb, s, strlen(s));
}
