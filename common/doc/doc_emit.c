/* doc_emit.c - document trees printed as kubectl prints objects.
 *
 * YAML follows `kubectl get -o yaml`, which is go-yaml v2 marshalling a
 * JSON-decoded object: block style, keys sorted in go-yaml's "natural"
 * order (runs of digits compare as numbers), two-space indent, sequences
 * under a key at the key's own column, strings plain unless they would
 * read back as something else (then double-quoted, like "80" or "true")
 * or cannot be plain (then single-quoted, like '*x' or 'a: b'), strings
 * with line breaks as literal blocks, and anything unprintable
 * double-quoted with escapes; past column 80 a space between words
 * becomes a line break, as go-yaml folds long strings.
 *
 * JSON is doc_jw.c's.
 *
 * Whatever is printed reads back (doc_parse) as an equal tree. */
#include "doc_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"

#define EMIT_MAX_DEPTH (4 * DOC_MAX_DEPTH)
#define YAML_SIMPLE_KEY_MAX 128     /* longer keys are written as "? key" */

/* ---- Numbers ---- */

/* The source text of a float that is an integer too big for int64 keeps
 * all its digits; other floats are printed from their value. */
bool doc_keep_big_int_text(const struct doc_node *n)
{
	size_t i = 0;

	if (!n->text || !n->text_len || n->text_len > 400)
		return false;
	if (n->text[0] == '-')
		i = 1;
	if (i == n->text_len || (n->text[i] == '0' && n->text_len > i + 1))
		return false;
	for (; i < n->text_len; i++)
		if (n->text[i] < '0' || n->text[i] > '9')
			return false;
	return strtod(n->text, NULL) == n->u.f;
}

/* ---- YAML ---- */

enum ystyle { Y_PLAIN, Y_SINGLE, Y_DOUBLE, Y_LITERAL };

static bool y_break(uint32_t c)
{
	return c == '\n' || c == '\r' || c == 0x85 || c == 0x2028 || c == 0x2029;
}

static bool y_blank_or_end(const char *s, size_t len, size_t i)
{
	return i >= len || s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r';
}

/* Would s read back as something other than this string? */
static bool y_ambiguous(const char *s, size_t len)
{
	struct doc_scalar_value v;

	return doc_resolve_plain(s, len, &v) != DOC_RES_STRING || doc_is_base60(s, len);
}

/* How a string is written, as go-yaml v2 and its libyaml emitter choose. */
static enum ystyle y_style(const char *s, size_t len, bool key)
{
	bool special = false, indicator = false, has_nl = false;
	bool space_break = false, prev_space = false, prev_blank = true;

	if (len == 0)
		return Y_DOUBLE;
	if (len >= 3 && (memcmp(s, "---", 3) == 0 || memcmp(s, "...", 3) == 0))
		indicator = true;
	for (size_t i = 0; i < len;) {
		uint32_t c;
		size_t k = utf8_decode(s + i, len - i, &c);

		if (!k) {               /* c is U+FFFD */
			special = true;
			k = 1;
		}
		if (!yaml_printable(c) || (y_break(c) && c != '\n'))
			special = true;
		if (c == '\n') {
			has_nl = true;
			if (prev_space)
				space_break = true;
		}
		if (i == 0) {
			if (c < 0x80 && c && strchr("#,[]{}&*!|>'\"%@`", (int)c))
				indicator = true;
			if ((c == '?' || c == ':' || c == '-') && y_blank_or_end(s, len, i + 1))
				indicator = true;
		} else {
			if (c == ':' && y_blank_or_end(s, len, i + 1))
				indicator = true;
			if (c == '#' && prev_blank)
				indicator = true;
		}
		prev_space = c == ' ';
		prev_blank = c == ' ' || c == '\t' || c == '\n';
		i += k;
	}
	if (special)
		return Y_DOUBLE;
	if (has_nl) {
		if (key || space_break || s[len - 1] == ' ')
			return Y_DOUBLE;
		return Y_LITERAL;
	}
	if (y_ambiguous(s, len))
		return Y_DOUBLE;
	if (indicator || s[0] == ' ' || s[len - 1] == ' ')
		return Y_SINGLE;
	return Y_PLAIN;
}

static void y_indent(struct strbuf *out, int n)
{
	static const char spaces[] = "                                ";

	while (n > 0) {
		int k = n < 32 ? n : 32;

		sb_append(out, spaces, (size_t)k);
		n -= k;
	}
}

/* Line folding as go-yaml's emitter does it: once a line is past column
 * 80, a lone space between two words becomes a line break and the
 * continuation indent. The reader folds the break back into one space. */
#define YAML_WIDTH 80

struct yfold {
	struct strbuf *out;
	int col;                /* column of the next character, 0-based */
	int indent;             /* continuation indent; negative: never fold */
};

static struct yfold fold_start(struct strbuf *out, int indent)
{
	struct yfold f = { out, 0, indent };

	for (size_t i = out->len; i > 0 && out->buf[i - 1] != '\n'; i--)
		if (((unsigned char)out->buf[i - 1] & 0xC0) != 0x80)
			f.col++;
	return f;
}

/* Should the space at s[i] become a line break? Quoted scalars never fold
 * at their first or last character; plain and single-quoted ones not
 * before another space (double-quoted ones escape it instead). */
static bool fold_here(const struct yfold *f, const char *s, size_t len, size_t i, char quote)
{
	if (f->indent < 0 || f->col <= YAML_WIDTH || (i > 0 && s[i - 1] == ' '))
		return false;
	if (quote && (i == 0 || i + 1 == len))
		return false;
	return quote == '"' || i + 1 == len || s[i + 1] != ' ';
}

static void fold_break(struct yfold *f)
{
	sb_putc(f->out, '\n');
	y_indent(f->out, f->indent);
	f->col = f->indent;
}

/* Writes bytes that are one character (or an escape) wide each. */
static void fold_put(struct yfold *f, const char *p, size_t n, int width)
{
	sb_append(f->out, p, n);
	f->col += width;
}

static void y_plain(struct yfold *f, const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (s[i] == ' ' && fold_here(f, s, len, i, 0)) {
			fold_break(f);
			continue;
		}
		fold_put(f, s + i, 1, ((unsigned char)s[i] & 0xC0) != 0x80);
	}
}

static void y_double(struct yfold *f, const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	char esc[11], enc[UTF8_MAX];

	fold_put(f, "\"", 1, 1);
	for (size_t i = 0; i < len;) {
		const char *e;
		uint32_t c;
		/* YAML text cannot hold invalid UTF-8: U+FFFD instead. */
		size_t k = utf8_decode(s + i, len - i, &c);

		if (!k)
			k = 1;
		if (c == ' ' && fold_here(f, s, len, i, '"')) {
			fold_break(f);
			if (i + 1 < len && s[i + 1] == ' ')
				fold_put(f, "\\", 1, 1);  /* keeps the next space */
			i += k;
			continue;
		}
		e = yaml_escape(c, esc);
		if (e)
			fold_put(f, e, strlen(e), (int)strlen(e));
		else if (k == 1 && u[i] < 0x80)
			fold_put(f, s + i, 1, 1);
		else {
			sb_append(f->out, enc, utf8_encode(c, enc));
			f->col++;
		}
		i += k;
	}
	fold_put(f, "\"", 1, 1);
}

static void y_single(struct yfold *f, const char *s, size_t len)
{
	fold_put(f, "'", 1, 1);
	for (size_t i = 0; i < len; i++) {
		if (s[i] == ' ' && fold_here(f, s, len, i, '\'')) {
			fold_break(f);
			continue;
		}
		if (s[i] == '\'')
			fold_put(f, "'", 1, 1);
		fold_put(f, s + i, 1, ((unsigned char)s[i] & 0xC0) != 0x80);
	}
	fold_put(f, "'", 1, 1);
}

/* A literal block: header already preceded by the caller's text; the
 * content goes at column `indent`. */
static void y_literal(struct strbuf *out, const char *s, size_t len, int indent)
{
	size_t start = 0;

	sb_putc(out, '|');
	if (s[0] == ' ' || s[0] == '\n')
		sb_putc(out, '2');      /* content indent relative to the parent */
	if (s[len - 1] != '\n')
		sb_putc(out, '-');
	else if (len == 1 || s[len - 2] == '\n')
		sb_putc(out, '+');
	sb_putc(out, '\n');
	while (start < len) {
		const char *nl = memchr(s + start, '\n', len - start);
		size_t end = nl ? (size_t)(nl - s) : len;

		if (end > start) {
			y_indent(out, indent);
			sb_append(out, s + start, end - start);
		}
		sb_putc(out, '\n');
		start = end + 1;
	}
}

static void y_string(struct strbuf *out, const char *s, size_t len, bool key, int indent)
{
	/* Keys are simple keys: one line, never folded. */
	struct yfold f = fold_start(out, key ? -1 : indent);

	switch (y_style(s, len, key)) {
	case Y_PLAIN:
		y_plain(&f, s, len);
		break;
	case Y_SINGLE:
		y_single(&f, s, len);
		break;
	case Y_DOUBLE:
		y_double(&f, s, len);
		break;
	case Y_LITERAL:
		y_literal(out, s, len, indent);
		return;
	}
	if (!key)
		sb_putc(out, '\n');
}

/* A scalar or an empty collection, ending its line (a literal block ends
 * with its last line). indent is where a literal's content goes. */
static int y_scalar(struct strbuf *out, const struct doc_node *n, int indent)
{
	char buf[DOC_NUM_BUF];

	if (!n) {
		sb_puts(out, "null\n");
		return 0;
	}
	switch (n->kind) {
	case DOC_NULL:
		sb_puts(out, "null\n");
		break;
	case DOC_BOOL:
		sb_puts(out, n->u.b ? "true\n" : "false\n");
		break;
	case DOC_INT:
		sb_printf(out, "%lld\n", (long long)n->u.i);
		break;
	case DOC_FLOAT:
		if (doc_keep_big_int_text(n)) {
			sb_append(out, n->text, n->text_len);
		} else {
			doc_fmt_float_yaml(n->u.f, false, buf);
			sb_puts(out, buf);
		}
		sb_putc(out, '\n');
		break;
	case DOC_STRING:
		y_string(out, n->text ? n->text : "", n->text ? n->text_len : 0, false, indent);
		break;
	case DOC_SEQ:
		sb_puts(out, "[]\n");
		break;
	case DOC_MAP:
		sb_puts(out, "{}\n");
		break;
	}
	return 0;
}

static bool y_block(const struct doc_node *n)
{
	return n && ((n->kind == DOC_MAP && n->u.map.n) || (n->kind == DOC_SEQ && n->u.seq.n));
}

static int y_node(struct strbuf *out, const struct doc_node *n, int indent, bool inline_first,
		  int depth);

/* go-yaml v2's key order: letters after other characters, digit runs by
 * numeric value, otherwise by code point. */
static bool is_letter(uint32_t c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80;
}

static bool is_dig(uint32_t c)
{
	return c >= '0' && c <= '9';
}

/* Code points of s (at most cap); invalid bytes become U+FFFD. */
static size_t runes(const char *s, size_t len, uint32_t *r, size_t cap)
{
	size_t n = 0;

	for (size_t i = 0; i < len && n < cap;) {
		size_t k = utf8_decode(s + i, len - i, &r[n]);     /* U+FFFD if invalid */

		n++;
		i += k ? k : 1;
	}
	return n;
}

static bool key_less(const struct doc_node *ka, const struct doc_node *kb)
{
	uint32_t ra[256], rb[256];
	size_t na = runes(ka->text, ka->text_len, ra, 256);
	size_t nb = runes(kb->text, kb->text_len, rb, 256);

	for (size_t i = 0; i < na && i < nb; i++) {
		bool al, bl;
		uint64_t an = 0, bn = 0;
		size_t ai, bi;

		if (ra[i] == rb[i])
			continue;
		al = is_letter(ra[i]);
		bl = is_letter(rb[i]);
		if (al && bl)
			return ra[i] < rb[i];
		if (al || bl)
			return bl;
		if (ra[i] == '0' || rb[i] == '0') {
			/* Inside a number with a non-zero lead, zeros are digits
			 * like any other. */
			for (size_t j = i; j-- > 0 && is_dig(ra[j]);)
				if (ra[j] != '0') {
					an = bn = 1;
					break;
				}
		}
		for (ai = i; ai < na && is_dig(ra[ai]); ai++)
			an = an * 10 + (ra[ai] - '0');
		for (bi = i; bi < nb && is_dig(rb[bi]); bi++)
			bn = bn * 10 + (rb[bi] - '0');
		if (an != bn)
			return (int64_t)an < (int64_t)bn;
		if (ai != bi)
			return ai < bi;
		return ra[i] < rb[i];
	}
	if (na == nb && (na == 256 || nb == 256)) {
		/* Alike in their first 256 characters: settle it bytewise so
		 * that distinct keys never compare equal. */
		size_t n = ka->text_len < kb->text_len ? ka->text_len : kb->text_len;
		int c = memcmp(ka->text, kb->text, n);

		return c ? c < 0 : ka->text_len < kb->text_len;
	}
	return na < nb;
}

static int pair_cmp(const void *a, const void *b)
{
	const struct doc_pair *x = *(const struct doc_pair *const *)a;
	const struct doc_pair *y = *(const struct doc_pair *const *)b;

	if (key_less(x->key, y->key))
		return -1;
	if (key_less(y->key, x->key))
		return 1;
	return 0;
}

static int y_map(struct strbuf *out, const struct doc_node *n, int indent, bool inline_first,
		 int depth)
{
	size_t cnt = n->u.map.n;
	const struct doc_pair **sorted = malloc(cnt * sizeof(*sorted));
	int rc = 0;

	if (!sorted)
		return -ENOMEM;
	for (size_t i = 0; i < cnt; i++)
		sorted[i] = &n->u.map.pairs[i];
	qsort(sorted, cnt, sizeof(*sorted), pair_cmp);
	for (size_t i = 0; i < cnt && rc == 0; i++) {
		const struct doc_node *k = sorted[i]->key, *v = sorted[i]->value;
		const char *kt = k && k->text ? k->text : "";
		size_t kl = k && k->text ? k->text_len : 0;
		bool complex = kl > YAML_SIMPLE_KEY_MAX;

		if (i > 0 || !inline_first)
			y_indent(out, indent);
		if (complex) {
			/* libyaml reads simple keys of at most 1024 characters. */
			sb_puts(out, "? ");
			y_string(out, kt, kl, true, indent + 2);
			sb_putc(out, '\n');
			y_indent(out, indent);
		} else {
			y_string(out, kt, kl, true, indent + 2);
		}
		sb_putc(out, ':');
		if (!y_block(v)) {
			sb_putc(out, ' ');
			rc = y_scalar(out, v, indent + 2);
		} else {
			sb_putc(out, '\n');
			if (v->kind == DOC_MAP)
				rc = y_node(out, v, indent + 2, false, depth + 1);
			else
				rc = y_node(out, v, complex ? indent + 2 : indent, false, depth + 1);
		}
	}
	free(sorted);
	return rc;
}

static int y_seq(struct strbuf *out, const struct doc_node *n, int indent, bool inline_first,
		 int depth)
{
	int rc = 0;

	for (size_t i = 0; i < n->u.seq.n && rc == 0; i++) {
		const struct doc_node *v = n->u.seq.items[i];

		if (i > 0 || !inline_first)
			y_indent(out, indent);
		sb_puts(out, "- ");
		if (y_block(v))
			rc = y_node(out, v, indent + 2, true, depth + 1);
		else
			rc = y_scalar(out, v, indent + 2);
	}
	return rc;
}

static int y_node(struct strbuf *out, const struct doc_node *n, int indent, bool inline_first,
		  int depth)
{
	if (depth > EMIT_MAX_DEPTH)
		return -ELOOP;
	if (!y_block(n))
		return y_scalar(out, n, indent);
	if (n->kind == DOC_MAP)
		return y_map(out, n, indent, inline_first, depth);
	return y_seq(out, n, indent, inline_first, depth);
}

int doc_emit_yaml(const struct doc_node *n, struct strbuf *out)
{
	/* A top-level literal block needs indented content. */
	int rc = y_block(n) ? y_node(out, n, 0, false, 0) : y_scalar(out, n, 2);

	if (rc < 0)
		return rc;
	return sb_error(out);
}
