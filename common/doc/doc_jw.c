/* doc_jw.c - the JSON writer (doc_jw.h) and doc_emit_json, a tree written
 * with it. Fast because nothing goes through printf: strings are copied in
 * runs (sb_json_string), integers converted by hand, and the line breaks
 * with their indentation copied from one constant. */
#include "doc_impl.h"
#include "doc_jw.h"

#include "escape.h"

/* Deeper than any tree doc_parse makes (aliases included). */
#define JW_MAX_DEPTH (4 * DOC_MAX_DEPTH)
#define JW_INDENT 4

/* ",\n" and the spaces of 32 levels: a separator and its indentation in
 * one append. */
static const char breaks[] = ",\n"
	"                                                                "
	"                                                                ";

static void line_break(struct doc_jw *w, bool comma, unsigned depth)
{
	size_t n = (size_t)depth * JW_INDENT, chunk = sizeof(breaks) - 3;
	const char *from = comma ? breaks : breaks + 1;

	sb_append(w->out, from, (size_t)(breaks + 2 - from) + (n < chunk ? n : chunk));
	for (n = n < chunk ? 0 : n - chunk; n; n -= n < chunk ? n : chunk)
		sb_append(w->out, breaks + 2, n < chunk ? n : chunk);
}

/* What goes before a value or a key: nothing after a key, else the comma
 * after the previous one and, indented, the line break. */
static void prefix(struct doc_jw *w)
{
	if (w->after_key) {
		w->after_key = false;
		return;
	}
	if (w->pretty && w->depth)
		line_break(w, w->comma, w->depth);
	else if (w->comma)
		sb_putc(w->out, ',');
}

void doc_jw_begin(struct doc_jw *w, struct strbuf *out, int style)
{
	*w = (struct doc_jw){ .out = out, .start = out->len, .pretty = style > 0,
			      .newline = style != DOC_JSON_COMPACT };
}

int doc_jw_end(struct doc_jw *w)
{
	int rc = w->err;

	if (!rc && w->newline)
		sb_putc(w->out, '\n');
	if (!rc)
		rc = sb_error(w->out);
	if (rc && !sb_error(w->out))
		sb_truncate(w->out, w->start);  /* nothing half-written */
	return rc;
}

static void jw_open(struct doc_jw *w, char c)
{
	prefix(w);
	sb_putc(w->out, c);
	if (++w->depth > JW_MAX_DEPTH && !w->err)
		w->err = -ELOOP;
	w->comma = false;
}

static void jw_close(struct doc_jw *w, char c)
{
	if (w->depth)
		w->depth--;
	if (w->pretty && w->comma)
		line_break(w, false, w->depth);
	sb_putc(w->out, c);
	w->comma = true;
}

void doc_jw_map(struct doc_jw *w)
{
	jw_open(w, '{');
}

void doc_jw_end_map(struct doc_jw *w)
{
	jw_close(w, '}');
}

void doc_jw_seq(struct doc_jw *w)
{
	jw_open(w, '[');
}

void doc_jw_end_seq(struct doc_jw *w)
{
	jw_close(w, ']');
}

void doc_jw_keyn(struct doc_jw *w, const char *key, size_t len)
{
	prefix(w);
	sb_json_string(w->out, key, len);
	sb_append(w->out, ": ", w->pretty ? 2 : 1);
	w->after_key = true;
}

void doc_jw_key(struct doc_jw *w, const char *key)
{
	doc_jw_keyn(w, key, strlen(key));
}

/* A scalar's text, after its prefix. */
static void scalar(struct doc_jw *w, const char *text, size_t len)
{
	prefix(w);
	sb_append(w->out, text, len);
	w->comma = true;
}

void doc_jw_strn(struct doc_jw *w, const char *s, size_t len)
{
	prefix(w);
	sb_json_string(w->out, s, len);
	w->comma = true;
}

void doc_jw_str(struct doc_jw *w, const char *s)
{
	if (!s)
		doc_jw_null(w);
	else
		doc_jw_strn(w, s, strlen(s));
}

void doc_jw_int(struct doc_jw *w, int64_t v)
{
	char buf[24], *p = buf + sizeof(buf);
	uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;

	do
		*--p = (char)('0' + u % 10);
	while (u /= 10);
	if (v < 0)
		*--p = '-';
	scalar(w, p, (size_t)(buf + sizeof(buf) - p));
}

void doc_jw_float(struct doc_jw *w, double v)
{
	char buf[DOC_NUM_BUF];

	if (doc_fmt_float_json(v, buf) < 0) {
		if (!w->err)
			w->err = -ERANGE;   /* NaN and infinities have no JSON form */
		return;
	}
	scalar(w, buf, strlen(buf));
}

void doc_jw_bool(struct doc_jw *w, bool v)
{
	scalar(w, v ? "true" : "false", v ? 4 : 5);
}

void doc_jw_null(struct doc_jw *w)
{
	scalar(w, "null", 4);
}

void doc_jw_node(struct doc_jw *w, const struct doc_node *n)
{
	if (!n) {
		doc_jw_null(w);
		return;
	}
	switch (n->kind) {
	case DOC_NULL:
		doc_jw_null(w);
		break;
	case DOC_BOOL:
		doc_jw_bool(w, n->u.b);
		break;
	case DOC_INT:
		doc_jw_int(w, n->u.i);
		break;
	case DOC_FLOAT:
		if (doc_keep_big_int_text(n))
			scalar(w, n->text, n->text_len);
		else
			doc_jw_float(w, n->u.f);
		break;
	case DOC_STRING:
		doc_jw_strn(w, n->text ? n->text : "", n->text ? n->text_len : 0);
		break;
	case DOC_SEQ:
		doc_jw_seq(w);
		for (size_t i = 0; i < n->u.seq.n && !w->err; i++)
			doc_jw_node(w, n->u.seq.items[i]);
		doc_jw_end_seq(w);
		break;
	case DOC_MAP:
		doc_jw_map(w);
		for (size_t i = 0; i < n->u.map.n && !w->err; i++) {
			const struct doc_node *k = n->u.map.pairs[i].key;

			doc_jw_keyn(w, k && k->text ? k->text : "", k && k->text ? k->text_len : 0);
			doc_jw_node(w, n->u.map.pairs[i].value);
		}
		doc_jw_end_map(w);
		break;
	}
}

int doc_emit_json(const struct doc_node *n, int style, struct strbuf *out)
{
	struct doc_jw w;

	doc_jw_begin(&w, out, style);
	doc_jw_node(&w, n);
	return doc_jw_end(&w);
}
