/* escape.c - the escapers (escape.h): Go-quoted, JSON, YAML, logfmt,
 * HTML. */
#include "escape.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "hex.h"
#include "utf8.h"

static void put_hex_byte(struct strbuf *sb, unsigned char c)
{
	char e[4] = { '\\', 'x', hex_lower[c >> 4], hex_lower[c & 15] };

	sb_append(sb, e, 4);
}

/* ---- Go-style quoting ---- */

/* Code points Go's strconv.IsPrint rejects that text may plausibly carry:
 * controls, non-ASCII spaces, format characters, separators, noncharacters.
 * (Unassigned and private-use ones are not listed and print as is.) */
static bool go_unprintable(uint32_t cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp <= 0xa0) || cp == 0xad ||
	       (cp >= 0x600 && cp <= 0x605) || cp == 0x61c || cp == 0x6dd || cp == 0x70f ||
	       cp == 0x180e || (cp >= 0x2000 && cp <= 0x200f) ||
	       (cp >= 0x2028 && cp <= 0x202f) || (cp >= 0x205f && cp <= 0x206f) ||
	       cp == 0x3000 || cp == 0xfeff || (cp >= 0xfff9 && cp <= 0xfffb) ||
	       (cp & 0xfffe) == 0xfffe || (cp >= 0xfdd0 && cp <= 0xfdef) ||
	       (cp >= 0xe0000 && cp <= 0xe007f);
}

/* The name of a control byte's escape ("n" for '\n'), or NULL. */
static const char *named_escape(unsigned char c, unsigned flags)
{
	static const char from[] = "\a\b\f\n\r\t\v", to[] = "abfnrtv";
	const char *e = c ? strchr(from, c) : NULL;

	if (!e)
		return NULL;
	if (!(flags & SB_QUOTE_GO) && c != '\n' && c != '\r' && c != '\t')
		return NULL;
	return &to[e - from];
}

/* strconv.Quote's rule for the code point at s: its length, written. */
static size_t quote_go_char(struct strbuf *sb, const char *s, size_t len)
{
	uint32_t cp;
	size_t k = utf8_decode(s, len, &cp);

	if (!k || (k == 1 && go_unprintable(cp))) {
		put_hex_byte(sb, (unsigned char)s[0]);
		return 1;
	}
	if (go_unprintable(cp))
		sb_printf(sb, cp > 0xffff ? "\\U%08x" : "\\u%04x", (unsigned)cp);
	else
		sb_append(sb, s, k);
	return k;
}

/* The character at s quoted; the bytes of s it took. */
static size_t quote_char(struct strbuf *sb, const char *s, size_t len, unsigned flags)
{
	unsigned char c = (unsigned char)s[0];
	const char *name = flags & SB_QUOTE_NAMED ? named_escape(c, flags) : NULL;

	if (c == '"' || c == '\\') {
		sb_putc(sb, '\\');
		sb_putc(sb, (char)c);
	} else if (name) {
		sb_putc(sb, '\\');
		sb_putc(sb, *name);
	} else if (c < 0x20 || (c == 0x7f && (flags & SB_QUOTE_DEL)) ||
		   (c >= 0x80 && (flags & SB_QUOTE_ASCII))) {
		put_hex_byte(sb, c);
	} else if (c >= 0x80 && (flags & SB_QUOTE_GO)) {
		return quote_go_char(sb, s, len);
	} else {
		sb_putc(sb, (char)c);
	}
	return 1;
}

static unsigned quote_flags(unsigned flags)
{
	return flags & SB_QUOTE_GO ? flags | SB_QUOTE_NAMED | SB_QUOTE_DEL : flags;
}

void sb_quote(struct strbuf *sb, const char *s, size_t len, unsigned flags)
{
	flags = quote_flags(flags);
	if (!(flags & SB_QUOTE_BARE))
		sb_putc(sb, '"');
	for (size_t i = 0; i < len;)
		i += quote_char(sb, s + i, len - i, flags);
	if (!(flags & SB_QUOTE_BARE))
		sb_putc(sb, '"');
}

size_t dt_quote_buf(char *out, size_t cap, const char *s, size_t len, unsigned flags)
{
	struct strbuf sb = STRBUF_INIT;
	size_t q = flags & SB_QUOTE_BARE ? 0 : 1;       /* the closing quote */
	size_t keep, n;

	if (!cap)
		return 0;
	flags = quote_flags(flags);
	sb_append(&sb, "\"", q);
	keep = sb.len;
	/* Whole escapes only, leaving room for "..." while more is to come,
	 * and for the closing quote. */
	for (size_t i = 0; i < len;) {
		i += quote_char(&sb, s + i, len - i, flags);
		if (sb.len + (i < len ? 3 : 0) + q >= cap)
			break;
		keep = sb.len;
	}
	n = sb_error(&sb) ? 0 : keep;
	if (n + q >= cap) {
		n = 0;          /* not even the quotes fit */
		q = 0;
	}
	memcpy(out, sb_str(&sb), n);
	if (keep < sb.len && n + 3 + q < cap) {
		memcpy(out + n, "...", 3);
		n += 3;
	}
	if (q && n + 1 < cap)
		out[n++] = '"';
	out[n] = '\0';
	sb_free(&sb);
	return n;
}

/* ---- JSON ---- */

/* 1 for the ASCII bytes a JSON string holds as they are: printable, and
 * none of the quote, the backslash and what encoding/json escapes for
 * HTML. Bytes from 0x80 need a look (invalid UTF-8, U+2028, U+2029). */
static const unsigned char json_plain[256] = {
	[' '] = 1, ['!'] = 1, ['#' ... '%'] = 1, ['\''] = 1, ['(' ... ';'] = 1, ['='] = 1,
	['?' ... '['] = 1, [']' ... 0x7f] = 1,
};

/* The escapes JSON and logfmt share: \" \\ \n \r \t; NULL for others. */
static const char *backslash_escape(uint32_t c)
{
	switch (c) {
	case '"': return "\\\"";
	case '\\': return "\\\\";
	case '\n': return "\\n";
	case '\r': return "\\r";
	case '\t': return "\\t";
	default: return NULL;
	}
}

void sb_json_string(struct strbuf *sb, const char *s, size_t len)
{
	sb_append(sb, "\"", 1);
	for (size_t i = 0; i < len;) {
		size_t run = i, k;
		const char *e;
		uint32_t c;

		while (run < len && json_plain[(unsigned char)s[run]])
			run++;
		if (run > i) {                  /* most strings are one run */
			sb_append(sb, s + i, run - i);
			i = run;
			if (i == len)
				break;
		}
		k = utf8_decode(s + i, len - i, &c);
		if (!k) {
			sb_append(sb, "\\ufffd", 6);
			i++;
			continue;
		}
		if ((e = backslash_escape(c))) {
			sb_append(sb, e, 2);
		} else if (c < 0x20 || c == '<' || c == '>' || c == '&') {
			char u[6] = { '\\', 'u', '0', '0', hex_lower[c >> 4], hex_lower[c & 15] };

			sb_append(sb, u, 6);
		} else if (c == 0x2028 || c == 0x2029) {
			sb_append(sb, c == 0x2028 ? "\\u2028" : "\\u2029", 6);
		} else {
			sb_append(sb, s + i, k);
		}
		i += k;
	}
	sb_putc(sb, '"');
}

/* ---- YAML ---- */

int yaml_printable(uint32_t c)
{
	return c == 0x0A || (c >= 0x20 && c <= 0x7E) || c == 0x85 ||
	       (c >= 0xA0 && c <= 0xD7FF) || (c >= 0xE000 && c <= 0xFFFD && c != 0xFEFF) ||
	       (c >= 0x10000 && c <= 0x10FFFF);
}

const char *yaml_escape(uint32_t c, char buf[11])
{
	switch (c) {
	case 0: return "\\0";
	case 0x07: return "\\a";
	case 0x08: return "\\b";
	case 0x09: return "\\t";
	case 0x0A: return "\\n";
	case 0x0B: return "\\v";
	case 0x0C: return "\\f";
	case 0x0D: return "\\r";
	case 0x1B: return "\\e";
	case '"': return "\\\"";
	case '\\': return "\\\\";
	case 0x85: return "\\N";
	case 0x2028: return "\\L";
	case 0x2029: return "\\P";
	default:
		break;
	}
	if (yaml_printable(c))
		return NULL;
	if (c <= 0xFF)
		snprintf(buf, 11, "\\x%02X", (unsigned)c);
	else if (c <= 0xFFFF)
		snprintf(buf, 11, "\\u%04X", (unsigned)c);
	else
		snprintf(buf, 11, "\\U%08X", (unsigned)c);
	return buf;
}

void sb_yaml_dquote(struct strbuf *sb, const char *s, size_t len)
{
	sb_putc(sb, '"');
	for (size_t i = 0; i < len;) {
		char buf[11], enc[UTF8_MAX];
		uint32_t c;
		size_t k = utf8_decode(s + i, len - i, &c);
		const char *e = yaml_escape(c, buf);

		if (e)
			sb_puts(sb, e);
		else if (k)
			sb_append(sb, s + i, k);
		else
			sb_append(sb, enc, utf8_encode(c, enc));
		i += k ? k : 1;
	}
	sb_putc(sb, '"');
}

/* ---- logfmt ---- */

static bool logfmt_needs_quotes(const char *s)
{
	if (!*s)
		return true;
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c <= ' ' || c == 0x7f || c == '"' || c == '=')
			return true;
	}
	return false;
}

void sb_logfmt_value(struct strbuf *sb, const char *value)
{
	if (!logfmt_needs_quotes(value)) {
		sb_puts(sb, value);
		return;
	}
	sb_putc(sb, '"');
	for (const char *p = value; *p; p++) {
		unsigned char c = (unsigned char)*p;
		const char *e = backslash_escape(c);

		if (e)
			sb_puts(sb, e);
		else if (c < ' ' || c == 0x7f)
			sb_printf(sb, "\\u%04x", c);
		else
			sb_putc(sb, (char)c);
	}
	sb_putc(sb, '"');
}

/* ---- HTML ---- */

void sb_html(struct strbuf *sb, const char *s, size_t len)
{
	for (size_t i = 0; i < len;) {
		uint32_t c;
		size_t k = utf8_decode(s + i, len - i, &c);

		/* what XML 1.0 cannot hold either (so that an SVG file stays
		 * well-formed): controls but tab, newline and CR, U+FFFE/F */
		if (!k || (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f ||
		    c == 0xfffe || c == 0xffff)
			c = UTF8_REPLACEMENT;
		switch (c) {
		case '&': sb_puts(sb, "&amp;"); break;
		case '<': sb_puts(sb, "&lt;"); break;
		case '>': sb_puts(sb, "&gt;"); break;
		case '"': sb_puts(sb, "&quot;"); break;
		case '\'': sb_puts(sb, "&#39;"); break;
		case UTF8_REPLACEMENT:
			sb_puts(sb, "\xef\xbf\xbd");
			break;
		default:
			sb_append(sb, s + i, k);
		}
		i += k ? k : 1;
	}
}
