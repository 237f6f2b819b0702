/* doc_json.c - JSON streams into document trees.
 *
 * A strict RFC 8259 reader: one document per top-level value, values may
 * follow each other as they do for kubectl's stream decoder. It is written
 * here rather than taken from json-c's tokener because the tree needs what
 * json-c does not keep: the line and column of every value (for messages
 * that point into the file), the original text of every number (so that
 * 99999999999999999999999 or 1.50 are not silently rounded), and repeated
 * object keys, which json-c quietly overwrites and which we report as an
 * error, as for YAML.
 *
 * Bounds: nesting to DOC_MAX_DEPTH (so the recursion is bounded), nodes to
 * DOC_MAX_NODES per stream, strings must be valid UTF-8. A syntax error
 * ends the stream: the rest of it is one failed document. */
#include "doc_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hex.h"
#include "utf8.h"

struct jctx {
	struct doc_stream *s;
	const char *buf;
	size_t len, pos;
	int line;                   /* line of pos */
	size_t line_start;          /* offset where that line starts */
	size_t col_off;             /* column cache: byte offset ... */
	int col;                    /* ... and its column */
	bool wide_line;             /* the line has a byte >= 0x80 before pos */
	size_t cur;                 /* the document being read */
	size_t total;               /* nodes of the stream */
	bool failed, oom;
	struct doc_node **scratch;  /* children of open arrays/objects (owned) */
	size_t n_scratch, cap_scratch;
};

/* Column of byte offset off on the current line; cached because a
 * minified file is one long line. */
static int col_of(struct jctx *c, size_t off)
{
	if (!c->wide_line && off >= c->line_start)
		return (int)(off - c->line_start) + 1;      /* ASCII so far: one byte, one column */
	if (c->col_off < c->line_start || c->col_off > off) {
		c->col_off = c->line_start;
		c->col = 1;
	}
	for (; c->col_off < off && c->col_off < c->len; c->col_off++)
		if (((unsigned char)c->buf[c->col_off] & 0xC0) != 0x80)
			c->col++;
	return c->col;
}

static void fail_at(struct jctx *c, size_t off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void fail_at(struct jctx *c, size_t off, const char *fmt, ...)
{
	char msg[DT_ERR_MSG_MAX];
	va_list ap;
	int line, col;

	if (c->failed)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (off >= c->line_start) {
		line = c->line;
		col = col_of(c, off);
	} else {
		doc_offset_pos(c->buf, c->len, off, &line, &col);
	}
	doc_doc_fail(c->s, &c->s->docs[c->cur], line, col, "%s", msg);
	c->failed = true;
}

/* 'x' for a printable character, else its escape. */
static const char *char_desc(unsigned char ch, char *buf, size_t cap)
{
	if (ch >= 0x20 && ch < 0x7f && ch != '\'')
		snprintf(buf, cap, "'%c'", ch);
	else if (ch == '\n')
		snprintf(buf, cap, "'\\n'");
	else if (ch == '\t')
		snprintf(buf, cap, "'\\t'");
	else if (ch == '\r')
		snprintf(buf, cap, "'\\r'");
	else if (ch == '\'')
		snprintf(buf, cap, "'\\''");
	else
		snprintf(buf, cap, "byte 0x%02X", ch);
	return buf;
}

static void fail_char(struct jctx *c, const char *looking)
{
	char d[16];

	if (c->pos >= c->len)
		fail_at(c, c->pos, "unexpected end of JSON input");
	else
		fail_at(c, c->pos, "invalid character %s %s",
			char_desc((unsigned char)c->buf[c->pos], d, sizeof(d)), looking);
}

static void skip_ws(struct jctx *c)
{
	while (c->pos < c->len) {
		char ch = c->buf[c->pos];

		if (ch == '\n') {
			c->line++;
			c->line_start = c->pos + 1;
			c->wide_line = false;
		} else if (ch != ' ' && ch != '\t' && ch != '\r') {
			return;
		}
		c->pos++;
	}
}

/* A node at byte off. Values count against DOC_MAX_NODES, keys do not
 * (they are labels, and bounded by the values they label). */
static struct doc_node *new_node_as(struct jctx *c, enum doc_kind kind, size_t off, bool key)
{
	struct doc_node *n;

	if (!key && ++c->total > DOC_MAX_NODES) {
		fail_at(c, off, "document too large: more than %u nodes in the stream",
			DOC_MAX_NODES);
		return NULL;
	}
	n = doc_node_alloc(c->s->arena, kind, c->line, col_of(c, off));
	if (!n)
		c->oom = true;
	return n;
}

static struct doc_node *new_node(struct jctx *c, enum doc_kind kind, size_t off)
{
	return new_node_as(c, kind, off, false);
}

static int scratch_push(struct jctx *c, struct doc_node *n)
{
	if (DT_GROW(c->scratch, c->cap_scratch, c->n_scratch + 1)) {
		c->oom = true;
		return -ENOMEM;
	}
	c->scratch[c->n_scratch++] = n;
	return 0;
}

/* ---- Strings ---- */

/* The four hex digits of a \u escape at p, or -1. */
static int hex4(const char *p, const char *end)
{
	unsigned long v;

	return end - p >= 4 && !hex_parse(p, 4, &v) ? (int)v : -1;
}

/* Reads the string at pos (which is '"'), a value or an object key. */
/* The bytes a string's scan stops at: the closing quote, a backslash, a
 * control character (an error), a byte of UTF-8 (to be checked). */
static const unsigned char string_stop[256] = {
	[0 ... 0x1f] = 1, ['"'] = 1, ['\\'] = 1, [0x80 ... 0xff] = 1,
};

static struct doc_node *parse_string(struct jctx *c, bool key)
{
	size_t start = c->pos, i = c->pos + 1, o = 0;
	const char *end = c->buf + c->len;
	unsigned char seen = 0;         /* the bits of every byte: 0x80, a '\\'? */
	bool escaped = false;
	struct doc_node *n;
	char *out;

	/* Find the closing quote first: the decoded text is never longer.
	 * A raw control character (a newline, say) cannot be in a string. */
	for (const unsigned char *b = (const unsigned char *)c->buf;; i++) {
		while (i < c->len && !string_stop[b[i]])
			i++;
		if (i >= c->len || b[i] == '"' || b[i] < 0x20)
			break;
		seen |= b[i];
		if (b[i] == '\\') {
			escaped = true;
			i++;
		}
	}
	if (seen & 0x80)
		c->wide_line = true;        /* columns count characters from here */
	if (i >= c->len) {
		fail_at(c, start, "unexpected end of JSON input (unterminated string)");
		return NULL;
	}
	if (c->buf[i] != '"') {
		char d[16];

		fail_at(c, i, "invalid character %s in string literal",
			char_desc((unsigned char)c->buf[i], d, sizeof(d)));
		return NULL;
	}
	n = new_node_as(c, DOC_STRING, start, key);
	if (!n)
		return NULL;
	out = doc_arena_alloc(c->s->arena, i - start);
	if (!out) {
		c->oom = true;
		return NULL;
	}
	if (!escaped && !(seen & 0x80)) {       /* plain ASCII: the text is the source */
		o = i - start - 1;
		memcpy(out, c->buf + start + 1, o);
		goto done;
	}
	for (size_t p = start + 1; p < i;) {
		unsigned char ch = (unsigned char)c->buf[p];
		size_t k;
		uint32_t cp;
		int u, u2;

		if (ch < 0x20) {
			char d[16];

			fail_at(c, p, "invalid character %s in string literal",
				char_desc(ch, d, sizeof(d)));
			return NULL;
		}
		if (ch >= 0x80) {
			k = utf8_decode(c->buf + p, (size_t)(end - (c->buf + p)), &cp);
			if (!k || p + k > i) {
				fail_at(c, p, "invalid UTF-8 in string literal (byte 0x%02X)", ch);
				return NULL;
			}
			memcpy(out + o, c->buf + p, k);
			o += k;
			p += k;
			continue;
		}
		if (ch != '\\') {
			out[o++] = (char)ch;
			p++;
			continue;
		}
		switch (c->buf[p + 1]) {
		case '"': out[o++] = '"'; break;
		case '\\': out[o++] = '\\'; break;
		case '/': out[o++] = '/'; break;
		case 'b': out[o++] = '\b'; break;
		case 'f': out[o++] = '\f'; break;
		case 'n': out[o++] = '\n'; break;
		case 'r': out[o++] = '\r'; break;
		case 't': out[o++] = '\t'; break;
		case 'u':
			u = hex4(c->buf + p + 2, c->buf + i);
			if (u < 0) {
				fail_at(c, p, "invalid \\u escape in string literal");
				return NULL;
			}
			p += 6;
			if (u >= 0xD800 && u <= 0xDBFF && p + 1 < i && c->buf[p] == '\\' &&
			    c->buf[p + 1] == 'u' && (u2 = hex4(c->buf + p + 2, c->buf + i)) >= 0xDC00 &&
			    u2 <= 0xDFFF) {
				o += utf8_encode(0x10000 + (((uint32_t)u - 0xD800) << 10) +
						 ((uint32_t)u2 - 0xDC00), out + o);
				p += 6;
			} else if (u >= 0xD800 && u <= 0xDFFF) {
				o += utf8_encode(UTF8_REPLACEMENT, out + o);  /* a lone surrogate, as Go */
			} else {
				o += utf8_encode((uint32_t)u, out + o);
			}
			continue;
		default: {
			char d[16];

			fail_at(c, p, "invalid escape %s in string literal",
				char_desc((unsigned char)c->buf[p + 1], d, sizeof(d)));
			return NULL;
		}
		}
		p += 2;
	}
done:
	out[o] = '\0';
	n->text = out;
	n->text_len = o;
	n->quoted = true;
	c->pos = i + 1;
	return n;
}

/* ---- Numbers and words ---- */

static bool is_digit(char ch)
{
	return ch >= '0' && ch <= '9';
}

static struct doc_node *parse_number(struct jctx *c)
{
	size_t start = c->pos, i = c->pos;
	bool integral = true;
	struct doc_node *n;

	if (i < c->len && c->buf[i] == '-')
		i++;
	if (i < c->len && c->buf[i] == '0') {
		i++;
	} else if (i < c->len && is_digit(c->buf[i])) {
		while (i < c->len && is_digit(c->buf[i]))
			i++;
	} else {
		c->pos = i;
		fail_char(c, "in numeric literal");
		return NULL;
	}
	if (i < c->len && c->buf[i] == '.') {
		integral = false;
		if (++i >= c->len || !is_digit(c->buf[i])) {
			c->pos = i;
			fail_char(c, "after decimal point in numeric literal");
			return NULL;
		}
		while (i < c->len && is_digit(c->buf[i]))
			i++;
	}
	if (i < c->len && (c->buf[i] == 'e' || c->buf[i] == 'E')) {
		integral = false;
		if (++i < c->len && (c->buf[i] == '+' || c->buf[i] == '-'))
			i++;
		if (i >= c->len || !is_digit(c->buf[i])) {
			c->pos = i;
			fail_char(c, "in exponent of numeric literal");
			return NULL;
		}
		while (i < c->len && is_digit(c->buf[i]))
			i++;
	}
	n = new_node(c, DOC_INT, start);
	if (!n)
		return NULL;
	n->text = doc_arena_memdup(c->s->arena, c->buf + start, i - start);
	if (!n->text) {
		c->oom = true;
		return NULL;
	}
	n->text_len = i - start;
	if (integral) {
		bool neg = n->text[0] == '-';
		uint64_t u = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
		bool fits = true;

		for (const char *p = n->text + neg; *p && fits; p++) {
			unsigned d = (unsigned)(*p - '0');

			if (u > (lim - d) / 10)
				fits = false;
			else
				u = u * 10 + d;
		}
		if (fits) {
			n->u.i = !neg ? (int64_t)u : u == lim ? INT64_MIN : -(int64_t)u;
			c->pos = i;
			return n;
		}
	}
	n->kind = DOC_FLOAT;
	n->u.f = strtod(n->text, NULL);
	if (isinf(n->u.f)) {
		fail_at(c, start, "number %.*s is out of range", (int)(i - start < 64 ? i - start : 64),
			n->text);
		return NULL;
	}
	c->pos = i;
	return n;
}

static struct doc_node *parse_word(struct jctx *c)
{
	static const struct { const char *w; enum doc_kind k; bool b; } words[] = {
		{ "true", DOC_BOOL, true }, { "false", DOC_BOOL, false }, { "null", DOC_NULL, false },
	};

	for (size_t w = 0; w < 3; w++) {
		size_t l = strlen(words[w].w);
		struct doc_node *n;

		if (c->buf[c->pos] != words[w].w[0])
			continue;
		for (size_t k = 0; k < l; k++)
			if (c->pos + k >= c->len || c->buf[c->pos + k] != words[w].w[k]) {
				c->pos += k;
				fail_char(c, "in literal (expecting true, false or null)");
				return NULL;
			}
		n = new_node(c, words[w].k, c->pos);
		if (!n)
			return NULL;
		n->u.b = words[w].b;
		n->text = words[w].w;
		n->text_len = l;
		c->pos += l;
		return n;
	}
	fail_char(c, "looking for beginning of value");
	return NULL;
}

/* ---- Arrays and objects ---- */

static struct doc_node *parse_value(struct jctx *c, int depth);

/* Past the '[' or '{' at c->pos: true when the closing bracket follows at
 * once (it is consumed: the array or object is empty). */
static bool open_empty(struct jctx *c, char close)
{
	c->pos++;
	skip_ws(c);
	if (c->pos < c->len && c->buf[c->pos] == close) {
		c->pos++;
		return true;
	}
	return false;
}

/* After an element of an array or object: 1 when a ',' says another one
 * follows, 0 at the closing bracket (consumed), -1 on an error, which names
 * what was expected (looking, for fail_char). */
static int next_element(struct jctx *c, char close, const char *looking)
{
	skip_ws(c);
	if (c->pos < c->len && c->buf[c->pos] == ',') {
		c->pos++;
		skip_ws(c);
		if (c->pos < c->len && c->buf[c->pos] == close) {
			fail_at(c, c->pos, "invalid character '%c' after ',' "
				"(JSON allows no trailing comma)", close);
			return -1;
		}
		return 1;
	}
	if (c->pos < c->len && c->buf[c->pos] == close) {
		c->pos++;
		return 0;
	}
	fail_char(c, looking);
	return -1;
}

static struct doc_node *parse_array(struct jctx *c, int depth)
{
	struct doc_node *n = new_node(c, DOC_SEQ, c->pos), *v;
	size_t base = c->n_scratch, cnt;
	int more;

	if (!n)
		return NULL;
	if (open_empty(c, ']'))
		return n;
	do {
		v = parse_value(c, depth + 1);
		if (!v || scratch_push(c, v) < 0)
			return NULL;
	} while ((more = next_element(c, ']', "after array element (expecting ',' or ']')")) > 0);
	if (more < 0)
		return NULL;
	cnt = c->n_scratch - base;
	n->u.seq.items = doc_arena_alloc(c->s->arena, doc_array_cap(cnt) * sizeof(*n->u.seq.items));
	if (!n->u.seq.items) {
		c->oom = true;
		return NULL;
	}
	memcpy(n->u.seq.items, c->scratch + base, cnt * sizeof(*n->u.seq.items));
	n->u.seq.n = cnt;
	c->n_scratch = base;
	return n;
}

static struct doc_node *parse_object(struct jctx *c, int depth)
{
	struct doc_node *n = new_node(c, DOC_MAP, c->pos), *k, *v;
	size_t base = c->n_scratch, np, dup, first;
	struct doc_pair *pairs;
	int rc, more;

	if (!n)
		return NULL;
	if (open_empty(c, '}'))
		return n;
	do {
		if (c->pos >= c->len || c->buf[c->pos] != '"') {
			fail_char(c, "looking for beginning of object key string");
			return NULL;
		}
		k = parse_string(c, true);
		if (!k || scratch_push(c, k) < 0)
			return NULL;
		skip_ws(c);
		if (c->pos >= c->len || c->buf[c->pos] != ':') {
			fail_char(c, "after object key (expecting ':')");
			return NULL;
		}
		c->pos++;
		v = parse_value(c, depth + 1);
		if (!v || scratch_push(c, v) < 0)
			return NULL;
	} while ((more = next_element(c, '}',
				      "after object key:value pair (expecting ',' or '}')")) > 0);
	if (more < 0)
		return NULL;
	np = (c->n_scratch - base) / 2;
	pairs = doc_arena_alloc(c->s->arena, doc_array_cap(np) * sizeof(*pairs));
	if (!pairs) {
		c->oom = true;
		return NULL;
	}
	for (size_t i = 0; i < np; i++) {
		pairs[i].key = c->scratch[base + 2 * i];
		pairs[i].value = c->scratch[base + 2 * i + 1];
	}
	c->n_scratch = base;
	rc = doc_find_dup_key(pairs, np, &dup, &first);
	if (rc < 0) {
		c->oom = true;
		return NULL;
	}
	if (rc == 0) {
		char shown[128];

		dt_quote_buf(shown, sizeof(shown), pairs[dup].key->text, pairs[dup].key->text_len,
			     DOC_KEY_QUOTING);
		doc_doc_fail(c->s, &c->s->docs[c->cur], pairs[dup].key->line, pairs[dup].key->col,
			     "mapping key \"%s\" already defined at line %d", shown,
			     pairs[first].key->line);
		c->failed = true;
		return NULL;
	}
	n->u.map.pairs = pairs;
	n->u.map.n = np;
	return n;
}

static struct doc_node *parse_value(struct jctx *c, int depth)
{
	skip_ws(c);
	if (c->pos >= c->len) {
		fail_at(c, c->pos, "unexpected end of JSON input");
		return NULL;
	}
	switch (c->buf[c->pos]) {
	case '{':
	case '[':
		if (depth >= DOC_MAX_DEPTH) {
			fail_at(c, c->pos, "nesting deeper than %d levels", DOC_MAX_DEPTH);
			return NULL;
		}
		return c->buf[c->pos] == '{' ? parse_object(c, depth) : parse_array(c, depth);
	case '"':
		return parse_string(c, false);
	case '-':
	case '0': case '1': case '2': case '3': case '4':
	case '5': case '6': case '7': case '8': case '9':
		return parse_number(c);
	default:
		return parse_word(c);
	}
}

int doc_parse_json(const char *buf, size_t len, struct doc_stream *s, struct dt_err *err)
{
	struct jctx c = { .s = s, .buf = buf, .len = len, .line = 1, .col = 1 };
	struct doc_node *root;
	int rc = 0;

	if (len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0)
		c.pos = c.line_start = c.col_off = 3;
	for (;;) {
		skip_ws(&c);
		if (c.pos >= c.len)
			break;
		if (!doc_stream_add(s, c.line)) {
			c.oom = true;
			break;
		}
		c.cur = s->n_docs - 1;
		root = parse_value(&c, 0);
		if (c.oom || c.failed)
			break;
		s->docs[c.cur].root = root;
	}
	if (!c.oom && s->n_docs == 0 && !doc_stream_add(s, 1))
		c.oom = true;
	if (c.oom)
		rc = dt_err_set(err, -ENOMEM, "out of memory");
	free(c.scratch);
	return rc;
}
