/* cel_lex.c - the CEL lexer: tokens, number literals and string/bytes
 * literals with every escape of the cel-spec lexis, decoded into the
 * compile pool. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cel_ast.h"
#include "hex.h"
#include "utf8.h"

static const char *const reserved_words[] = {
	"as", "break", "const", "continue", "else", "for", "function", "if",
	"import", "let", "loop", "package", "namespace", "return", "var", "void",
	"while",
};

void cel_lex_init(struct cel_lexer *lx, const char *src, size_t len, struct cel_arena *pool)
{
	memset(lx, 0, sizeof(*lx));
	lx->src = src;
	lx->len = len;
	lx->pool = pool;
}

static struct cel_token lex_error(struct cel_lexer *lx, size_t pos, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static struct cel_token lex_error(struct cel_lexer *lx, size_t pos, const char *fmt, ...)
{
	struct cel_token t = { .kind = TK_ERROR, .pos = (uint32_t)pos };
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(lx->errmsg, sizeof(lx->errmsg), fmt, ap);
	va_end(ap);
	lx->errpos = (uint32_t)pos;
	return t;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_ident_start(char c)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* Skip whitespace and // comments. */
static void skip_space(struct cel_lexer *lx)
{
	while (lx->pos < lx->len) {
		char c = lx->src[lx->pos];

		if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f') {
			lx->pos++;
		} else if (c == '/' && lx->pos + 1 < lx->len && lx->src[lx->pos + 1] == '/') {
			while (lx->pos < lx->len && lx->src[lx->pos] != '\n')
				lx->pos++;
		} else {
			break;
		}
	}
}

/* After the high surrogate hi (a \u escape ending at s[*i]), a \u escape of
 * a low surrogate completes the pair: consumes it and returns the code
 * point. Anything else leaves *i and returns hi, which the caller refuses. */
static uint32_t lex_low_surrogate(const char *s, size_t *i, size_t end, uint32_t hi)
{
	uint32_t lo = 0;

	if (*i + 6 > end || s[*i] != '\\' || s[*i + 1] != 'u')
		return hi;
	for (int k = 2; k < 6; k++) {
		int h = hex_value(s[*i + k]);

		if (h < 0)
			return hi;
		lo = lo * 16 + (uint32_t)h;
	}
	if (lo < 0xdc00 || lo > 0xdfff)
		return hi;
	*i += 6;
	return 0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00);
}

/* One escape sequence at src[*i] (just after the backslash). Appends the
 * decoded bytes to out. */
static int lex_escape(struct cel_lexer *lx, size_t *i, size_t end, bool bytes, char *out,
		      size_t *olen)
{
	const char *s = lx->src;
	char c;
	uint32_t cp = 0;
	int ndig = 0;

	if (*i >= end)
		return -1;
	c = s[(*i)++];
	switch (c) {
	case 'a': out[(*olen)++] = '\a'; return 0;
	case 'b': out[(*olen)++] = '\b'; return 0;
	case 'f': out[(*olen)++] = '\f'; return 0;
	case 'n': out[(*olen)++] = '\n'; return 0;
	case 'r': out[(*olen)++] = '\r'; return 0;
	case 't': out[(*olen)++] = '\t'; return 0;
	case 'v': out[(*olen)++] = '\v'; return 0;
	case '\\': case '?': case '"': case '\'': case '`':
		out[(*olen)++] = c;
		return 0;
	case 'x': case 'X':
		ndig = 2;
		break;
	case 'u':
		if (bytes)
			return -1;
		ndig = 4;
		break;
	case 'U':
		if (bytes)
			return -1;
		ndig = 8;
		break;
	default:
		if (c >= '0' && c <= '3') {
			if (*i + 2 > end || s[*i] < '0' || s[*i] > '7' || s[*i + 1] < '0' ||
			    s[*i + 1] > '7')
				return -1;
			cp = (uint32_t)((c - '0') * 64 + (s[*i] - '0') * 8 + (s[*i + 1] - '0'));
			*i += 2;
			goto emit_byte_or_cp;
		}
		return -1;
	}
	for (int k = 0; k < ndig; k++) {
		int h;

		if (*i >= end || (h = hex_value(s[*i])) < 0)
			return -1;
		cp = cp * 16 + (uint32_t)h;
		(*i)++;
	}
	if (ndig > 2) {
		/* The spec: \u names a BMP code point, characters of other
		 * planes are written as a surrogate pair (\ud83d\ude00); a
		 * surrogate alone is no code point and so a parse error
		 * (cel-go would substitute U+FFFD). */
		if (ndig == 4 && cp >= 0xd800 && cp <= 0xdbff)
			cp = lex_low_surrogate(s, i, end, cp);
		if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return -1;
		*olen += utf8_encode(cp, out + *olen);
		return 0;
	}
emit_byte_or_cp:
	if (bytes)
		out[(*olen)++] = (char)cp;
	else
		*olen += utf8_encode(cp, out + *olen);
	return 0;
}

/* A string or bytes literal starting at lx->pos (after any r/b prefix). */
static struct cel_token lex_string(struct cel_lexer *lx, size_t start, bool raw, bool bytes)
{
	const char *s = lx->src;
	char q = s[lx->pos];
	bool triple = lx->pos + 2 < lx->len && s[lx->pos + 1] == q && s[lx->pos + 2] == q;
	size_t i = lx->pos + (triple ? 3 : 1);
	size_t cap, olen = 0;
	struct cel_token t = { .kind = bytes ? TK_BYTES : TK_STRING, .pos = (uint32_t)start };
	char *out;

	/* Decoded output is never longer than the source text (an escape
	 * like \u0800 is 6 bytes in, 3 out; \x80 4 in, 2 out). */
	cap = lx->len - i + 8;
	out = cel_arena_alloc(lx->pool, cap);
	if (!out)
		return lex_error(lx, start, "expression too large");
	for (;;) {
		if (i >= lx->len)
			return lex_error(lx, start, "Syntax error: token recognition error at: '%.*s'",
					 (int)(lx->len - start > 40 ? 40 : lx->len - start),
					 s + start);
		if (triple) {
			if (s[i] == q && i + 2 < lx->len && s[i + 1] == q && s[i + 2] == q) {
				i += 3;
				break;
			}
		} else if (s[i] == q) {
			i++;
			break;
		} else if (s[i] == '\n' || s[i] == '\r') {
			return lex_error(lx, start, "Syntax error: token recognition error at: '%.*s'",
					 (int)(i - start), s + start);
		}
		if (s[i] == '\\' && !raw) {
			size_t at = i;

			i++;
			if (lex_escape(lx, &i, lx->len, bytes, out, &olen) < 0)
				return lex_error(lx, at, "Syntax error: token recognition error at: '%.*s'",
						 (int)(i - start + 1 > 40 ? 40 : i - start + 1),
						 s + start);
			continue;
		}
		if (raw && s[i] == '\\' && i + 1 < lx->len && s[i + 1] == q && !triple) {
			/* A raw string still cannot end at an escaped quote. */
			out[olen++] = s[i++];
			out[olen++] = s[i++];
			continue;
		}
		if (s[i] == '\r') {
			/* Newlines in literals read as \n, whatever the source used. */
			i++;
			if (i < lx->len && s[i] == '\n')
				continue;
			out[olen++] = '\n';
			continue;
		}
		out[olen++] = s[i++];
	}
	if (!bytes && !utf8_valid(out, olen))
		return lex_error(lx, start, "invalid UTF-8 in string literal");
	out[olen] = 0;
	t.v.str.s = out;
	t.v.str.len = olen;
	t.len = (uint32_t)(i - start);
	lx->pos = i;
	return t;
}

static struct cel_token lex_number(struct cel_lexer *lx)
{
	const char *s = lx->src;
	size_t start = lx->pos, i = lx->pos;
	struct cel_token t = { .pos = (uint32_t)start };
	bool is_float = false;
	char buf[128];

	if (s[i] == '0' && i + 1 < lx->len && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
		uint64_t v = 0;
		bool over = false;
		size_t d0;

		i += 2;
		d0 = i;
		while (i < lx->len && hex_value(s[i]) >= 0) {
			if (v >> 60)
				over = true;
			v = v * 16 + (uint64_t)hex_value(s[i]);
			i++;
		}
		if (i == d0)
			return lex_error(lx, start, "Syntax error: token recognition error at: '0x'");
		t.v.u = v;
		if (i < lx->len && (s[i] == 'u' || s[i] == 'U')) {
			i++;
			t.kind = TK_UINT;
		} else {
			t.kind = TK_INT;
		}
		if (over)
			return lex_error(lx, start, "invalid %s literal", t.kind == TK_UINT ? "uint" : "int");
		goto done;
	}
	while (i < lx->len && is_digit(s[i]))
		i++;
	if (i + 1 < lx->len && s[i] == '.' && is_digit(s[i + 1])) {
		is_float = true;
		i++;
		while (i < lx->len && is_digit(s[i]))
			i++;
	}
	if (i < lx->len && (s[i] == 'e' || s[i] == 'E')) {
		size_t j = i + 1;

		if (j < lx->len && (s[j] == '+' || s[j] == '-'))
			j++;
		if (j < lx->len && is_digit(s[j])) {
			is_float = true;
			i = j;
			while (i < lx->len && is_digit(s[i]))
				i++;
		}
	}
	if (i - start >= sizeof(buf))
		return lex_error(lx, start, "number literal too long");
	memcpy(buf, s + start, i - start);
	buf[i - start] = 0;
	if (is_float) {
		t.kind = TK_DOUBLE;
		t.v.d = strtod(buf, NULL);
		goto done;
	}
	{
		uint64_t v = 0;
		bool over = false;

		for (size_t k = 0; buf[k]; k++) {
			uint64_t d = (uint64_t)(buf[k] - '0');

			if (v > (UINT64_MAX - d) / 10)
				over = true;
			v = v * 10 + d;
		}
		t.v.u = v;
		if (i < lx->len && (s[i] == 'u' || s[i] == 'U')) {
			i++;
			t.kind = TK_UINT;
		} else {
			t.kind = TK_INT;
		}
		if (over)
			return lex_error(lx, start, "invalid %s literal", t.kind == TK_UINT ? "uint" : "int");
	}
done:
	t.len = (uint32_t)(i - start);
	lx->pos = i;
	return t;
}

static struct cel_token punct(struct cel_lexer *lx, enum cel_tok k, size_t n)
{
	struct cel_token t = { .kind = k, .pos = (uint32_t)lx->pos, .len = (uint32_t)n };

	lx->pos += n;
	return t;
}

struct cel_token cel_lex_next(struct cel_lexer *lx)
{
	const char *s = lx->src;
	size_t start;
	char c, n;

	skip_space(lx);
	start = lx->pos;
	if (lx->pos >= lx->len) {
		struct cel_token t = { .kind = TK_EOF, .pos = (uint32_t)lx->pos };
		return t;
	}
	c = s[lx->pos];
	n = lx->pos + 1 < lx->len ? s[lx->pos + 1] : 0;

	if (is_digit(c) || (c == '.' && is_digit(n)))
		return lex_number(lx);
	if (c == '"' || c == '\'')
		return lex_string(lx, start, false, false);
	if ((c == 'r' || c == 'R' || c == 'b' || c == 'B') && (n == '"' || n == '\'' ||
	    ((n == 'r' || n == 'R' || n == 'b' || n == 'B') && lx->pos + 2 < lx->len &&
	     (s[lx->pos + 2] == '"' || s[lx->pos + 2] == '\'')))) {
		bool raw = false, bytes = false;

		while (s[lx->pos] != '"' && s[lx->pos] != '\'') {
			char p = s[lx->pos];

			if (p == 'r' || p == 'R') {
				if (raw)
					break;
				raw = true;
			} else {
				if (bytes)
					break;
				bytes = true;
			}
			lx->pos++;
		}
		if (s[lx->pos] == '"' || s[lx->pos] == '\'')
			return lex_string(lx, start, raw, bytes);
		lx->pos = start;
	}
	if (is_ident_start(c)) {
		struct cel_token t = { .kind = TK_IDENT, .pos = (uint32_t)start };
		size_t i = lx->pos;

		while (i < lx->len && (is_ident_start(s[i]) || is_digit(s[i])))
			i++;
		t.len = (uint32_t)(i - start);
		lx->pos = i;
		if (t.len == 4 && !memcmp(s + start, "true", 4))
			t.kind = TK_TRUE;
		else if (t.len == 5 && !memcmp(s + start, "false", 5))
			t.kind = TK_FALSE;
		else if (t.len == 4 && !memcmp(s + start, "null", 4))
			t.kind = TK_NULL;
		else if (t.len == 2 && !memcmp(s + start, "in", 2))
			t.kind = TK_IN;
		else
			for (size_t k = 0; k < CEL_ARRAY_LEN(reserved_words); k++)
				if (strlen(reserved_words[k]) == t.len &&
				    !memcmp(reserved_words[k], s + start, t.len))
					t.kind = TK_RESERVED;
		t.v.str.s = cel_arena_strdup(lx->pool, s + start, t.len);
		if (!t.v.str.s)
			return lex_error(lx, start, "expression too large");
		t.v.str.len = t.len;
		return t;
	}
	if (c == '`') {
		/* Quoted identifier for field names: letters, digits, _ . - / and space. */
		struct cel_token t = { .kind = TK_IDENT, .pos = (uint32_t)start };
		size_t i = lx->pos + 1;

		while (i < lx->len && s[i] != '`') {
			char q = s[i];

			if (!(is_ident_start(q) || is_digit(q) || q == '.' || q == '-' || q == '/' ||
			      q == ' '))
				return lex_error(lx, start,
						 "Syntax error: token recognition error at: '`%c'", q);
			i++;
		}
		if (i >= lx->len || i == lx->pos + 1)
			return lex_error(lx, start, "Syntax error: token recognition error at: '`'");
		t.v.str.s = cel_arena_strdup(lx->pool, s + start + 1, i - start - 1);
		if (!t.v.str.s)
			return lex_error(lx, start, "expression too large");
		t.v.str.len = i - start - 1;
		t.len = (uint32_t)(i + 1 - start);
		t.quoted = true;
		lx->pos = i + 1;
		return t;
	}
	switch (c) {
	case '(': return punct(lx, TK_LPAREN, 1);
	case ')': return punct(lx, TK_RPAREN, 1);
	case '[': return punct(lx, TK_LBRACKET, 1);
	case ']': return punct(lx, TK_RBRACKET, 1);
	case '{': return punct(lx, TK_LBRACE, 1);
	case '}': return punct(lx, TK_RBRACE, 1);
	case '.': return punct(lx, TK_DOT, 1);
	case ',': return punct(lx, TK_COMMA, 1);
	case ':': return punct(lx, TK_COLON, 1);
	case '?': return punct(lx, TK_QUESTION, 1);
	case '+': return punct(lx, TK_PLUS, 1);
	case '-': return punct(lx, TK_MINUS, 1);
	case '*': return punct(lx, TK_STAR, 1);
	case '/': return punct(lx, TK_SLASH, 1);
	case '%': return punct(lx, TK_PERCENT, 1);
	case '!': return n == '=' ? punct(lx, TK_NE, 2) : punct(lx, TK_NOT, 1);
	case '=':
		if (n == '=')
			return punct(lx, TK_EQ, 2);
		break;
	case '<': return n == '=' ? punct(lx, TK_LE, 2) : punct(lx, TK_LT, 1);
	case '>': return n == '=' ? punct(lx, TK_GE, 2) : punct(lx, TK_GT, 1);
	case '&':
		if (n == '&')
			return punct(lx, TK_AND, 2);
		break;
	case '|':
		if (n == '|')
			return punct(lx, TK_OR, 2);
		break;
	default:
		break;
	}
	{
		uint32_t cp;
		size_t l = utf8_decode(s + start, lx->len - start, &cp);

		if (!l) {       /* invalid UTF-8: the lead byte and its continuations */
			l = 1;
			while (start + l < lx->len && l < 4 &&
			       ((unsigned char)s[start + l] & 0xc0) == 0x80)
				l++;
		}
		return lex_error(lx, start, "Syntax error: token recognition error at: '%.*s'",
				 (int)l, s + start);
	}
}
