/* doc_jw.h - the one JSON printer every program's JSON goes through: a
 * streaming writer in encoding/json's words (kubectl's -o json: keys in the
 * order written, <, > and & escaped, invalid UTF-8 as U+FFFD, floats as Go
 * prints them), in one of two layouts: kubectl's four-space indentation, or
 * everything on one line. doc_emit_json (doc.h) writes a tree with it; a
 * large output (the plan's) is written straight, value by value, without
 * building a tree first.
 *
 *	struct doc_jw w;
 *
 *	doc_jw_begin(&w, &sb, DOC_JSON_PRETTY);
 *	doc_jw_map(&w);
 *	doc_jw_key(&w, "pods");
 *	doc_jw_seq(&w);
 *	doc_jw_str(&w, "default/a");
 *	doc_jw_end_seq(&w);
 *	doc_jw_end_map(&w);
 *	if (doc_jw_end(&w))     // -ERANGE (a NaN), -ELOOP, -ENOMEM: sb as before
 *		...
 *
 * The caller keeps the calls balanced (a key before each value in a map,
 * none in a sequence); the writer keeps the commas, line breaks and
 * indentation. Nothing is written half: on an error doc_jw_end takes back
 * everything since doc_jw_begin. */
#ifndef DT_DOC_JW_H
#define DT_DOC_JW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "strbuf.h"

struct doc_node;

enum doc_json_style {
	/* One line, and nothing after it: what goes inside something else
	 * (an API request's body, a log field). */
	DOC_JSON_COMPACT = 0,
	/* kubectl's -o json: four spaces per level, a newline at the end.
	 * Any positive value means this layout. */
	DOC_JSON_PRETTY = 4,
	/* One line ending with a newline: a program's --compact output. */
	DOC_JSON_LINE = -1,
};

/* A program's JSON output: one line with --compact, else indented. */
#define DOC_JSON_OUTPUT(compact) ((compact) ? DOC_JSON_LINE : DOC_JSON_PRETTY)

struct doc_jw {
	struct strbuf *out;
	size_t start;           /* out->len at doc_jw_begin: what an error takes back to */
	bool pretty, newline;   /* the layout */
	unsigned depth;         /* containers open */
	bool comma;             /* a value came before, at this depth */
	bool after_key;         /* a key was written; its value comes next */
	int err;                /* the first error (-ERANGE, -ELOOP), 0 */
};

void doc_jw_begin(struct doc_jw *w, struct strbuf *out, int style);
/* 0, or the first error (out's memory too): then out is as it was before
 * doc_jw_begin. */
int doc_jw_end(struct doc_jw *w);

void doc_jw_map(struct doc_jw *w);
void doc_jw_end_map(struct doc_jw *w);
void doc_jw_seq(struct doc_jw *w);
void doc_jw_end_seq(struct doc_jw *w);
void doc_jw_key(struct doc_jw *w, const char *key);
void doc_jw_keyn(struct doc_jw *w, const char *key, size_t len);
/* A string value; NULL writes null. */
void doc_jw_str(struct doc_jw *w, const char *s);
void doc_jw_strn(struct doc_jw *w, const char *s, size_t len);
void doc_jw_int(struct doc_jw *w, int64_t v);
/* As encoding/json prints a float64 ("0.5", "1e-07", "3"); NaN and the
 * infinities have no JSON form: -ERANGE. */
void doc_jw_float(struct doc_jw *w, double v);
void doc_jw_bool(struct doc_jw *w, bool v);
void doc_jw_null(struct doc_jw *w);
/* The tree n (NULL: null) as one value. */
void doc_jw_node(struct doc_jw *w, const struct doc_node *n);

#endif
