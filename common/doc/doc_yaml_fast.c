/* doc_yaml_fast.c - the YAML most manifests are written in, scanned into
 * libyaml's events without libyaml, which spends most of a large plan's
 * time on its own tokens and allocations.
 *
 * The subset: ASCII, no tabs or carriage returns; "---" lines between
 * documents; comments; block mappings with plain keys, block sequences
 * (compact "- key: v" items and indentless ones under a key); plain
 * scalars on one line; quoted scalars on one line without escapes; flow
 * collections on one line. Anything else (anchors, tags, block scalars,
 * multi-line scalars, escapes, empty values, directives, errors of any
 * kind) makes the whole stream go to libyaml instead, so every error is
 * still libyaml's, at libyaml's position. Inside the subset the events are
 * libyaml's, marks included (test_doc compares both readers' trees and
 * positions over every YAML file of the tree). */
#include "doc_impl.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct fast {
	const char *buf;
	size_t len;
	size_t pos;                 /* start of the current line */
	size_t line;                /* 0-based, as yaml_mark_t */
	size_t eol_of, eol;         /* line_end's last answer: the line at eol_of ends at eol */
	doc_fast_take take;         /* where the events go, one at a time */
	void *arg;
	yaml_event_t ev;            /* the event being handed over */
	bool bail;                  /* outside the subset */
	bool stop;                  /* take said so */
};

/* Hand one event to take, as libyaml's: the fields the tree builder
 * reads (doc_yaml.c) are set, the anchor and tag, which the subset never
 * has, stay NULL (every start event keeps its anchor first, as a scalar
 * does). */
static void emit(struct fast *f, yaml_event_type_t type, size_t line, size_t col,
		 const char *value, size_t len, yaml_scalar_style_t style)
{
	yaml_event_t *e = &f->ev;

	if (f->bail || f->stop)
		return;
	e->type = type;
	e->start_mark.line = line;
	e->start_mark.column = col;
	e->end_mark = e->start_mark;
	e->data.scalar.value = (yaml_char_t *)value;
	e->data.scalar.length = len;
	e->data.scalar.style = style;
	e->data.scalar.plain_implicit = style == YAML_PLAIN_SCALAR_STYLE;
	e->data.scalar.quoted_implicit = style != YAML_PLAIN_SCALAR_STYLE;
	if (f->take(f->arg, e))
		f->stop = true;
}

/* ---- Lines ---- */

/* The end of the line at p (its '\n', or the end of the input). The
 * readers below ask for each line's end several times: the last answer
 * is kept (eol_of starts past any p, at SIZE_MAX). */
static size_t line_end(struct fast *f, size_t p)
{
	const char *nl;

	if (p == f->eol_of)
		return f->eol;
	nl = memchr(f->buf + p, '\n', f->len - p);
	f->eol_of = p;
	f->eol = nl ? (size_t)(nl - f->buf) : f->len;
	return f->eol;
}

static void next_line(struct fast *f)
{
	size_t e = line_end(f, f->pos);

	f->pos = e < f->len ? e + 1 : f->len;
	f->line++;
}

/* Skip blank and comment lines; false at the end of the input. */
static bool skip_blank(struct fast *f)
{
	while (f->pos < f->len) {
		size_t p = f->pos, e = line_end(f, p);

		while (p < e && f->buf[p] == ' ')
			p++;
		if (p < e && f->buf[p] != '#')
			return true;
		next_line(f);
	}
	return false;
}

static size_t indent(const struct fast *f)
{
	size_t p = f->pos;

	while (p < f->len && f->buf[p] == ' ')
		p++;
	return p - f->pos;
}

static bool is_doc_marker(const struct fast *f)
{
	return f->len - f->pos >= 3 && !memcmp(f->buf + f->pos, "---", 3);
}

/* The end of a line's content at p: before a " #" comment and trailing
 * spaces. */
static size_t content_end(const struct fast *f, size_t p, size_t e)
{
	for (size_t q = p; q < e; q++)
		if (f->buf[q] == '#' && q > p && f->buf[q - 1] == ' ') {
			e = q;
			break;
		}
	while (e > p && f->buf[e - 1] == ' ')
		e--;
	return e;
}

/* ---- Scalars and flows ---- */

/* Whether a plain scalar cannot start at p (an indicator, or "-", "?",
 * ":" before a space, which libyaml reads as something else). */
static bool bad_plain_start(const struct fast *f, size_t p)
{
	static const unsigned char indicator[256] = {
		['['] = 1, [']'] = 1, ['{'] = 1, ['}'] = 1, [','] = 1, ['#'] = 1, ['&'] = 1,
		['*'] = 1, ['!'] = 1, ['|'] = 1, ['>'] = 1, ['\''] = 1, ['"'] = 1, ['%'] = 1,
		['@'] = 1, ['`'] = 1, ['-'] = 2, ['?'] = 2, [':'] = 2,
	};
	unsigned char k = indicator[(unsigned char)f->buf[p]];

	if (k == 2)     /* "-", "?", ":" before a space or a flow character */
		return p + 1 >= f->len || memchr(" \n,[]{}", f->buf[p + 1], 7);
	return k;
}

/* ',', ']', '}': what ends a plain scalar in a flow. */
static bool flow_end(char c)
{
	return c == ',' || c == ']' || c == '}';
}

/* A quoted scalar at q (its quote), on one line, without escapes; the
 * index after the closing quote, or 0 to bail. */
static size_t quoted(struct fast *f, size_t q, size_t e)
{
	char quote = f->buf[q];
	const char *close = memchr(f->buf + q + 1, quote, e - q - 1);

	if (!close || memchr(f->buf + q + 1, '\\', (size_t)(close - f->buf) - q - 1))
		return 0;
	if (quote == '\'' && (size_t)(close - f->buf) + 1 < e && close[1] == '\'')
		return 0;       /* '' escape */
	emit(f, YAML_SCALAR_EVENT, f->line, q - f->pos, f->buf + q + 1,
	     (size_t)(close - f->buf) - q - 1,
	     quote == '"' ? YAML_DOUBLE_QUOTED_SCALAR_STYLE : YAML_SINGLE_QUOTED_SCALAR_STYLE);
	return (size_t)(close - f->buf) + 1;
}

static size_t skip_spaces(const struct fast *f, size_t p, size_t e)
{
	while (p < e && f->buf[p] == ' ')
		p++;
	return p;
}

static size_t flow(struct fast *f, size_t p, size_t e, int depth);

/* One flow item (a scalar or a nested flow) at p; the index after it, or
 * 0 to bail. A plain one ends before ',', ']', '}' or (in a map, key)
 * ': '. */
static size_t flow_item(struct fast *f, size_t p, size_t e, bool key, int depth)
{
	size_t s = p;
	char c = f->buf[p];

	if (c == '[' || c == '{')
		return flow(f, p, e, depth + 1);
	if (c == '"' || c == '\'')
		return quoted(f, p, e);
	if (bad_plain_start(f, p) || c == ' ')
		return 0;
	while (p < e && !flow_end(f->buf[p]) &&
	       !(f->buf[p] == ':' && (p + 1 >= e || f->buf[p + 1] == ' ' ||
				      flow_end(f->buf[p + 1]))) &&
	       !(f->buf[p] == '#' && f->buf[p - 1] == ' '))
		p++;
	if (f->buf[p - 1] == ' ') {     /* trailing spaces are not the scalar's */
		size_t t = p;

		while (f->buf[t - 1] == ' ')
			t--;
		emit(f, YAML_SCALAR_EVENT, f->line, s - f->pos, f->buf + s, t - s,
		     YAML_PLAIN_SCALAR_STYLE);
	} else {
		emit(f, YAML_SCALAR_EVENT, f->line, s - f->pos, f->buf + s, p - s,
		     YAML_PLAIN_SCALAR_STYLE);
	}
	(void)key;
	return p;
}

/* A flow sequence or mapping at p ('[' or '{') that closes on this line;
 * the index after it, or 0 to bail. */
static size_t flow(struct fast *f, size_t p, size_t e, int depth)
{
	bool map = f->buf[p] == '{';
	char close = map ? '}' : ']';

	if (depth > 32)
		return 0;
	emit(f, map ? YAML_MAPPING_START_EVENT : YAML_SEQUENCE_START_EVENT, f->line, p - f->pos,
	     NULL, 0, 0);
	p = skip_spaces(f, p + 1, e);
	if (p < e && f->buf[p] == close) {
		emit(f, map ? YAML_MAPPING_END_EVENT : YAML_SEQUENCE_END_EVENT, f->line,
		     p - f->pos, NULL, 0, 0);
		return p + 1;
	}
	while (p < e) {
		p = flow_item(f, p, e, map, depth);
		if (!p || p >= e)
			return 0;
		if (map) {
			if (f->buf[p] != ':' || p + 1 >= e || f->buf[p + 1] != ' ')
				return 0;       /* a key without a value, or {a:b} */
			p = skip_spaces(f, p + 1, e);
			if (p >= e || f->buf[p] == ',' || f->buf[p] == '}')
				return 0;       /* an empty value */
			p = flow_item(f, p, e, false, depth);
			if (!p || p >= e)
				return 0;
		}
		p = skip_spaces(f, p, e);
		if (p < e && f->buf[p] == close) {
			emit(f, map ? YAML_MAPPING_END_EVENT : YAML_SEQUENCE_END_EVENT, f->line,
			     p - f->pos, NULL, 0, 0);
			return p + 1;
		}
		if (p >= e || f->buf[p] != ',')
			return 0;
		p = skip_spaces(f, p + 1, e);
		if (p < e && f->buf[p] == close)
			return 0;       /* a trailing comma */
	}
	return 0;
}

/* A value that ends its line, at p: a flow, a quoted or a plain scalar.
 * False to bail. */
static bool inline_value(struct fast *f, size_t p, size_t e)
{
	size_t end = content_end(f, p, e), q;
	char c = f->buf[p];

	if (c == '[' || c == '{' || c == '"' || c == '\'') {
		q = c == '[' || c == '{' ? flow(f, p, end, 0) : quoted(f, p, end);
		return q && skip_spaces(f, q, end) == end;
	}
	if (bad_plain_start(f, p))
		return false;
	for (q = p; q < end; q++)
		if (f->buf[q] == ':' && (q + 1 == end || f->buf[q + 1] == ' '))
			return false;   /* "mapping values are not allowed here" */
	emit(f, YAML_SCALAR_EVENT, f->line, p - f->pos, f->buf + p, end - p,
	     YAML_PLAIN_SCALAR_STYLE);
	return true;
}

/* ---- Block collections ---- */

static void block_node(struct fast *f, size_t min_indent, int depth);

/* The key of a block mapping entry at p ("key: ..." or "key:"): its end,
 * or 0 when the line is not one. */
static size_t key_end(const struct fast *f, size_t p, size_t e)
{
	if (bad_plain_start(f, p))
		return 0;
	for (size_t q = p; q < e; q++) {
		if (f->buf[q] == '#' && f->buf[q - 1] == ' ')
			return 0;
		if (f->buf[q] == ':' && (q + 1 == e || f->buf[q + 1] == ' '))
			return f->buf[q - 1] == ' ' ? 0 : q;
	}
	return 0;
}

/* After an entry's inline value: the next content line must not be more
 * indented than the entry (that would continue a plain scalar). */
static void after_value(struct fast *f, size_t col)
{
	next_line(f);
	if (skip_blank(f) && !is_doc_marker(f) && indent(f) > col)
		f->bail = true;
}

/* The value of a key or a "- " with nothing after it on its line: the
 * block below (more indented; for a key also an indentless sequence). */
static void value_below(struct fast *f, size_t col, bool key, int depth)
{
	next_line(f);
	if (!skip_blank(f) || is_doc_marker(f)) {
		f->bail = true;         /* an empty value: libyaml places its null */
		return;
	}
	if (indent(f) > col ||
	    (key && indent(f) == col && f->buf[f->pos + col] == '-' &&
	     (f->pos + col + 1 == f->len || f->buf[f->pos + col + 1] == ' ' ||
	      f->buf[f->pos + col + 1] == '\n')))
		block_node(f, col + (indent(f) > col), depth + 1);
	else
		f->bail = true;
}

/* A block mapping whose keys sit at column col, its first key at p on the
 * current line. */
static void block_map(struct fast *f, size_t col, size_t p, int depth)
{
	emit(f, YAML_MAPPING_START_EVENT, f->line, col, NULL, 0, 0);
	for (;;) {
		size_t e = line_end(f, f->pos), k = key_end(f, p, e), v;

		if (!k) {
			f->bail = true;
			return;
		}
		emit(f, YAML_SCALAR_EVENT, f->line, col, f->buf + p, k - p,
		     YAML_PLAIN_SCALAR_STYLE);
		v = skip_spaces(f, k + 1, e);
		if (v == content_end(f, v, e))
			value_below(f, col, true, depth);
		else if (inline_value(f, v, e))
			after_value(f, col);
		else
			f->bail = true;
		if (f->bail)
			return;
		if (f->pos >= f->len || is_doc_marker(f) || indent(f) < col)
			break;
		if (indent(f) > col) {
			f->bail = true;
			return;
		}
		p = f->pos + col;
		if (f->buf[p] == '-') {         /* an indentless sequence ends here */
			f->bail = true;
			return;
		}
	}
	emit(f, YAML_MAPPING_END_EVENT, f->line, 0, NULL, 0, 0);
}

static bool is_dash(const struct fast *f, size_t p)
{
	return f->buf[p] == '-' && (p + 1 == f->len || f->buf[p + 1] == ' ' ||
				    f->buf[p + 1] == '\n');
}

/* A block sequence whose dashes sit at column col. */
static void block_seq(struct fast *f, size_t col, int depth)
{
	emit(f, YAML_SEQUENCE_START_EVENT, f->line, col, NULL, 0, 0);
	while (!f->bail) {
		size_t e = line_end(f, f->pos), p = f->pos + col, v = skip_spaces(f, p + 1, e);

		if (v == content_end(f, v, e)) {
			value_below(f, col, false, depth);
		} else if (v != p + 2) {
			f->bail = true;         /* "-   x": keep to the common form */
		} else if (key_end(f, v, e)) {
			if (depth > 90)
				f->bail = true;
			else
				block_map(f, v - f->pos, v, depth + 1);
		} else if (f->buf[v] == '-') {
			f->bail = true;         /* "- - x" */
		} else if (inline_value(f, v, e)) {
			after_value(f, col + 1);
		} else {
			f->bail = true;
		}
		if (f->bail || f->pos >= f->len || is_doc_marker(f) || indent(f) < col)
			break;
		if (indent(f) > col || !is_dash(f, f->pos + col)) {
			/* More indented, or a key after an indentless sequence:
			 * the parent decides (a key at col ends the sequence). */
			if (indent(f) > col)
				f->bail = true;
			break;
		}
	}
	emit(f, YAML_SEQUENCE_END_EVENT, f->line, 0, NULL, 0, 0);
}

/* The block node on the current line, indented at least min_indent. */
static void block_node(struct fast *f, size_t min_indent, int depth)
{
	size_t col = indent(f), p = f->pos + col;

	if (col < min_indent || depth > 90) {
		f->bail = true;
		return;
	}
	if (is_dash(f, p)) {
		block_seq(f, col, depth);
		return;
	}
	if (key_end(f, p, line_end(f, f->pos))) {
		block_map(f, col, p, depth);
		return;
	}
	/* A document that is one scalar or one flow collection. */
	if (depth == 0 && inline_value(f, p, line_end(f, f->pos)))
		after_value(f, col);
	else
		f->bail = true;
}

/* ---- The stream ---- */

/* Bytes libyaml reads differently or that this reader does not handle,
 * and lines it does not: directives ("%") and document ends ("..."). */
static bool outside_subset(const char *buf, size_t len)
{
	/* 1: a byte that may stand anywhere; 2: a line break; 0: outside */
	static const unsigned char byte_class[256] = { [' ' ... '~'] = 1, ['\n'] = 2 };

	for (size_t i = 0; i < len; i++) {
		unsigned char k = byte_class[(unsigned char)buf[i]];

		if (k == 1)
			continue;
		if (!k)
			return true;
		/* the next line's start */
		if (i + 1 < len && (buf[i + 1] == '%' ||
				    (len - i - 1 >= 3 && !memcmp(buf + i + 1, "...", 3))))
			return true;
	}
	return len && (buf[0] == '%' || (len >= 3 && !memcmp(buf, "...", 3)));
}

int doc_yaml_fast_read(const char *buf, size_t len, doc_fast_take take, void *arg)
{
	struct fast f = { .buf = buf, .len = len, .eol_of = SIZE_MAX, .take = take, .arg = arg };

	if (outside_subset(buf, len) || (len && buf[len - 1] != '\n'))
		return 1;
	emit(&f, YAML_STREAM_START_EVENT, 0, 0, NULL, 0, 0);
	while (!f.bail && !f.stop && skip_blank(&f)) {
		bool marker = is_doc_marker(&f);

		if (marker && line_end(&f, f.pos) != f.pos + 3) {
			f.bail = true;  /* "--- x" */
			break;
		}
		emit(&f, YAML_DOCUMENT_START_EVENT, f.line, 0, NULL, 0, 0);
		if (marker) {
			next_line(&f);
			if (!skip_blank(&f) || is_doc_marker(&f)) {
				/* "---" and nothing: an empty document. */
				emit(&f, YAML_SCALAR_EVENT, f.line, 0, "", 0,
				     YAML_PLAIN_SCALAR_STYLE);
				emit(&f, YAML_DOCUMENT_END_EVENT, f.line, 0, NULL, 0, 0);
				continue;
			}
		}
		if (indent(&f) != 0) {
			f.bail = true;
			break;
		}
		block_node(&f, 0, 0);
		if (!f.bail && f.pos < f.len && !is_doc_marker(&f))
			f.bail = true;  /* less indented than the root: an error */
		emit(&f, YAML_DOCUMENT_END_EVENT, f.line, 0, NULL, 0, 0);
	}
	emit(&f, YAML_STREAM_END_EVENT, f.line, 0, NULL, 0, 0);
	return f.bail ? 1 : f.stop ? -ENOMEM : 0;
}
