/* doc_impl.h - what the files of the document module share with each other
 * and nobody else: the arena's insides, scalar resolution, number
 * formatting and the stream under construction. Not part of the public
 * interface (that is doc.h). */
#ifndef DT_DOC_IMPL_H
#define DT_DOC_IMPL_H

#include <yaml.h>

#include "array.h"
#include "doc.h"
#include "escape.h"

/* Capacity of a node's item or pair array holding n entries. Every array
 * (parsed, built or cloned) is allocated with this capacity, so that
 * doc_seq_push()/doc_map_set() can grow any node without a stored field. */
size_t doc_array_cap(size_t n);

/* A node of the given kind, zeroed, at line/col. NULL on OOM. */
struct doc_node *doc_node_alloc(struct doc_arena *a, enum doc_kind kind, int line, int col);
/* Copy len bytes of s into the arena and NUL-terminate them. */
char *doc_arena_memdup(struct doc_arena *a, const char *s, size_t len);

/* ---- Plain-scalar resolution (YAML 1.1 as go-yaml v2 does it) ---- */

enum doc_resolved {
	DOC_RES_STRING,
	DOC_RES_NULL,
	DOC_RES_BOOL,
	DOC_RES_INT,            /* fits int64 */
	DOC_RES_BIGINT,         /* an integer beyond int64: kept as a float */
	DOC_RES_FLOAT,
	DOC_RES_MERGE,          /* "<<" */
	DOC_RES_TIMESTAMP,      /* read as a string, but quoted on output */
};

struct doc_scalar_value {
	bool b;
	int64_t i;
	double f;
};

/* What the untagged plain scalar s[0..len) means. */
enum doc_resolved doc_resolve_plain(const char *s, size_t len, struct doc_scalar_value *v);
/* YAML 1.1 sexagesimal numbers ("1:20"): not read as numbers, but quoted
 * on output for other YAML 1.1 readers, as go-yaml does. */
bool doc_is_base60(const char *s, size_t len);

/* ---- Number formatting ---- */

#define DOC_NUM_BUF 40

/* The shortest decimal digits that read back as v (f32: as a float).
 * Writes digits (no sign, no dot) and returns the decimal exponent of
 * the first digit, like %e. v must be finite and non-zero. */
int doc_shortest_digits(double v, bool f32, char *digits, size_t cap);
/* Go's strconv.FormatFloat(v, 'g', -1, 64 or 32): "1e+06", "0.5", "3".
 * Infinities and NaN as YAML writes them (.inf, -.inf, .nan). */
void doc_fmt_float_yaml(double v, bool f32, char *buf);
/* Go's encoding/json form: "1e-07", "0.5", "1e+21"; NaN and infinities
 * have no JSON form, return -ERANGE. */
int doc_fmt_float_json(double v, char *buf);
/* Whether a float's source text is an integer too big for int64, printed
 * with all its digits rather than from the value. */
bool doc_keep_big_int_text(const struct doc_node *n);
/* Does s[0..len) follow the JSON number grammar? */
bool doc_is_json_number(const char *s, size_t len);

/* ---- Streams under construction (the parsers) ---- */

/* A new empty stream owning a fresh arena, or NULL on OOM. */
struct doc_stream *doc_stream_new(const char *filename);
/* Append a document starting at line; returns it or NULL on OOM. */
struct doc_document *doc_stream_add(struct doc_stream *s, int line);
/* Set d->error to "line L, column C: <msg>" (allocated in s's arena). */
void doc_doc_fail(struct doc_stream *s, struct doc_document *d, int line, int col,
		  const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Line and column (1-based, counting UTF-8 characters) of byte off in buf. */
void doc_offset_pos(const char *buf, size_t len, size_t off, int *line, int *col);

/* Key text for messages: printable, escaped, cut to fit (escape.h). */
#define DOC_KEY_QUOTING (SB_QUOTE_BARE | SB_QUOTE_DEL)

/* Finds the first pair whose key repeats an earlier one among pairs[0..n).
 * Returns 0 with *dup = index of the repeat and *first = the original, or
 * 1 when all keys differ, or -ENOMEM. */
int doc_find_dup_key(const struct doc_pair *pairs, size_t n, size_t *dup, size_t *first);
/* Keys by their text: bytewise order, and equality. */
int doc_key_cmp(const struct doc_node *x, const struct doc_node *y);
bool doc_key_eq(const struct doc_node *x, const struct doc_node *y);

int doc_parse_yaml(const char *buf, size_t len, struct doc_stream *s, struct dt_err *err);
/* The same with libyaml alone (fast false), for the tests that compare
 * both readers. */
int doc_parse_yaml_with(const char *buf, size_t len, struct doc_stream *s, struct dt_err *err,
			bool fast);

/* Takes one event; a nonzero return stops the reading. */
typedef int (*doc_fast_take)(void *arg, const yaml_event_t *ev);

/* The events of a stream written in the common subset of YAML
 * (doc_yaml_fast.c), as libyaml would give them, handed to take one at a
 * time as they are read (scalars point into buf). 0 when the whole stream
 * was read, -ENOMEM when take stopped it, 1 when the stream is outside the
 * subset: then libyaml must read it all again (take has had the events up
 * to where the stream left the subset: what they built is to be thrown
 * away, but for the documents already complete). */
int doc_yaml_fast_read(const char *buf, size_t len, doc_fast_take take, void *arg);
/* Empty s again (documents, nodes) for a second reading; -ENOMEM. */
int doc_stream_reset(struct doc_stream *s);

/* doc_parse_each's state (doc.c), which the stream (doc_stream.c) uses to
 * hand each complete document over. */
struct doc_each {
	doc_each_fn fn;
	void *arg;
	int rc;                         /* fn's first nonzero return */
	size_t next;                    /* the index of the next document to hand over */
	struct doc_arena *own;          /* the stream's arena (its filename); s->arena
					 * is the current document's: */
	struct doc_arena *doc;          /* one arena for every document, emptied after each */
};
/* Hand the last document over, if complete and not yet handed over. */
void doc_each_flush(struct doc_stream *s);
/* Empty a, keeping its largest chunk's memory (not zeroed) for reuse. */
void doc_arena_empty(struct doc_arena *a);
int doc_parse_json(const char *buf, size_t len, struct doc_stream *s, struct dt_err *err);

#endif
