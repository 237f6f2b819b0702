/* doc.h - the document tree: what a YAML or JSON manifest says, before it
 * means anything.
 *
 * The loader parses a file (libyaml for YAML, json-c for JSON) into a tree
 * of doc_node values, one tree per document of a multi-document stream.
 * Scalars keep their source text, their position and whether they were
 * quoted, because Kubernetes gives meaning to text ("80Gi", "1.0" as a
 * string vs. 1.0 as a number). The model decoder (model_decode.c) turns
 * trees into typed objects; the encoders build trees and doc_emit_*()
 * print them the way kubectl does.
 *
 * Memory: every node of a stream lives in the stream's arena and is freed
 * with the stream. Trees built for output live in a struct doc_arena that
 * the builder owns. */
#ifndef DT_DOC_H
#define DT_DOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "doc_jw.h"
#include "strbuf.h"

/* Limits that keep hostile input from exhausting the machine. */
#define DOC_MAX_DEPTH      100          /* nesting of maps and sequences */
#define DOC_MAX_FILE_SIZE  (64u << 20)  /* bytes read from one file */
#define DOC_MAX_NODES      (4u << 20)   /* nodes in one stream (after aliases) */

enum doc_kind {
	DOC_NULL,
	DOC_BOOL,
	DOC_INT,        /* fits int64 */
	DOC_FLOAT,      /* any other number (including ints beyond int64) */
	DOC_STRING,
	DOC_SEQ,
	DOC_MAP,
};

struct doc_node;

struct doc_pair {
	struct doc_node *key;           /* always DOC_STRING (YAML keys are stringified) */
	struct doc_node *value;
};

struct doc_node {
	enum doc_kind kind;
	bool quoted;            /* scalar was quoted (YAML '..'/".." or a JSON string) */
	int line, col;          /* 1-based position in the source; 0 when built */
	const char *text;       /* scalar source text (NUL-terminated); NULL for seq/map */
	size_t text_len;        /* bytes of text (a string may contain NUL) */
	union {
		bool b;
		int64_t i;
		double f;
		struct { struct doc_node **items; size_t n; } seq;
		struct { struct doc_pair *pairs; size_t n; } map;
	} u;
};

/* One parsed document of a stream. */
struct doc_document {
	struct doc_node *root;          /* NULL for an empty document */
	int line;                       /* where the document starts */
	/* A document that failed to parse has root NULL and error set; the
	 * other documents of the stream are still usable. */
	char *error;
};

struct doc_arena;

struct doc_each;

struct doc_stream {
	char *filename;                 /* as given to the loader, for messages */
	struct doc_document *docs;
	size_t n_docs, cap_docs;
	struct doc_arena *arena;        /* owns every node */
	/* While doc_parse_each reads: its handler, and the stream's own
	 * arena (the parsers' business; NULL otherwise). */
	struct doc_each *each;
};

enum doc_format { DOC_FORMAT_AUTO, DOC_FORMAT_YAML, DOC_FORMAT_JSON };

/* Parse buf (len bytes, need not be NUL-terminated). AUTO picks JSON when
 * the first non-blank byte is '{' or '[', YAML otherwise. Returns 0 and a
 * stream even when some documents failed (see doc_document.error); returns
 * a negative code only when nothing could be read (err says why). */
int doc_parse(const char *buf, size_t len, enum doc_format fmt,
	      const char *filename, struct doc_stream **out, struct dt_err *err);
/* Read and parse a file; "-" reads standard input. */
int doc_load_file(const char *path, struct doc_stream **out, struct dt_err *err);

/* The same reading, a document at a time: each(arg, s, i) gets document i
 * (s->docs[i]: its root or its error) as soon as it is complete, in order,
 * and its nodes and error text live only until each returns: their memory
 * goes back before the next document is read, so a stream of any size is
 * read in the memory of its largest document. A nonzero return from each
 * stops the handing over (the rest is still read, and dropped). Returns 0,
 * that first nonzero return, or a negative code when nothing could be read
 * (as doc_parse and doc_load_file). */
typedef int (*doc_each_fn)(void *arg, const struct doc_stream *s, size_t i);
int doc_parse_each(const char *buf, size_t len, enum doc_format fmt, const char *filename,
		   doc_each_fn each, void *arg, struct dt_err *err);
int doc_load_file_each(const char *path, doc_each_fn each, void *arg, struct dt_err *err);
void doc_stream_free(struct doc_stream *s);

/* ---- Reading a tree ---- */

/* The value under key in a map, or NULL (also when node is not a map). */
const struct doc_node *doc_get(const struct doc_node *map, const char *key);
/* Follows a path of keys: doc_get_path(n, "spec", "devices", NULL). */
const struct doc_node *doc_get_path(const struct doc_node *n, ...);
/* A string value (DOC_STRING) or NULL. */
const char *doc_str(const struct doc_node *n);
const char *doc_kind_name(enum doc_kind k);  /* "string", "integer", "map", ... */

/* ---- Building a tree (for output) ---- */

struct doc_arena *doc_arena_new(void);
void doc_arena_free(struct doc_arena *a);
/* Allocation in an arena; NULL on OOM. The arena frees it all at once. */
void *doc_arena_alloc(struct doc_arena *a, size_t size);
char *doc_arena_strdup(struct doc_arena *a, const char *s);

struct doc_node *doc_new_null(struct doc_arena *a);
struct doc_node *doc_new_bool(struct doc_arena *a, bool b);
struct doc_node *doc_new_int(struct doc_arena *a, int64_t i);
struct doc_node *doc_new_float(struct doc_arena *a, double f);
struct doc_node *doc_new_string(struct doc_arena *a, const char *s);
struct doc_node *doc_new_seq(struct doc_arena *a);
struct doc_node *doc_new_map(struct doc_arena *a);
/* Append to a sequence / add a key (in insertion order) to a map.
 * Return 0 or -ENOMEM. A NULL value is an error (-ENOMEM), so builders can
 * nest calls and check once. */
int doc_seq_push(struct doc_arena *a, struct doc_node *seq, struct doc_node *v);
int doc_map_set(struct doc_arena *a, struct doc_node *map, const char *key,
		struct doc_node *v);
/* Deep copy of a node (and its subtree) into arena a. */
struct doc_node *doc_clone(struct doc_arena *a, const struct doc_node *n);
/* Structural equality (maps compare as unordered key sets; numbers by value). */
bool doc_equal(const struct doc_node *x, const struct doc_node *y);

/* ---- Printing ---- */

/* YAML the way kubectl prints it: block style, two-space indent, sequences
 * of maps as "- key: v", strings quoted only when they would otherwise read
 * back as something else. No leading "---"; the caller separates documents. */
int doc_emit_yaml(const struct doc_node *n, struct strbuf *out);
/* JSON through the one JSON printer (doc_jw.h): style DOC_JSON_PRETTY
 * (kubectl's four-space indentation, ending with a newline; any positive
 * value), DOC_JSON_COMPACT (one line, nothing after) or DOC_JSON_LINE (one
 * line and a newline). Keys in insertion order. 0, or -ERANGE for a NaN
 * or an infinity, -ELOOP, -ENOMEM, with out as it was. */
int doc_emit_json(const struct doc_node *n, int style, struct strbuf *out);

#endif
