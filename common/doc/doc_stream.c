/* doc_stream.c - streams of documents as the readers fill them: adding a
 * document (and, while doc_parse_each reads, handing the one before over),
 * failing one with a positioned message, turning a byte offset
 * into a line and column. */
#include "doc_impl.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Streams ---- */

struct doc_stream *doc_stream_new(const char *filename)
{
	struct doc_stream *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->arena = doc_arena_new();
	if (!s->arena)
		goto fail;
	s->filename = doc_arena_strdup(s->arena, filename ? filename : "-");
	if (!s->filename)
		goto fail;
	return s;
fail:
	doc_stream_free(s);
	return NULL;
}

void doc_stream_free(struct doc_stream *s)
{
	if (!s)
		return;
	free(s->docs);
	doc_arena_free(s->arena);
	free(s);
}

/* Hand the last document over, if it is complete and not yet handed over,
 * and give its memory back. */
void doc_each_flush(struct doc_stream *s)
{
	struct doc_each *e = s->each;
	size_t i = s->n_docs - 1;

	if (!s->n_docs || s->arena == e->own)
		return;                 /* no document open */
	if (i >= e->next) {             /* (after a reset the first ones are read again) */
		if (!e->rc)
			e->rc = e->fn(e->arg, s, i);
		e->next = i + 1;
	}
	s->docs[i].root = NULL;
	s->docs[i].error = NULL;
	doc_arena_empty(e->doc);
	s->arena = e->own;
}

static void drop_docs(struct doc_stream *s)
{
	free(s->docs);
	s->docs = NULL;
	s->n_docs = 0;
	s->cap_docs = 0;
}

int doc_stream_reset(struct doc_stream *s)
{
	struct doc_arena *a;
	char *name;

	if (s->each) {                  /* the documents handed over stay handed over */
		doc_arena_empty(s->each->doc);
		s->arena = s->each->own;
		drop_docs(s);
		return 0;
	}
	a = doc_arena_new();
	name = a ? doc_arena_strdup(a, s->filename) : NULL;
	if (!name) {
		doc_arena_free(a);
		return -ENOMEM;
	}
	drop_docs(s);
	doc_arena_free(s->arena);
	s->arena = a;
	s->filename = name;
	return 0;
}

struct doc_document *doc_stream_add(struct doc_stream *s, int line)
{
	struct doc_document *d;

	if (s->each) {
		doc_each_flush(s);      /* the one before is complete */
		s->arena = s->each->doc;
	}
	if (DT_GROW(s->docs, s->cap_docs, s->n_docs + 1))
		return NULL;
	d = &s->docs[s->n_docs++];
	d->root = NULL;
	d->line = line;
	d->error = NULL;
	return d;
}

void doc_doc_fail(struct doc_stream *s, struct doc_document *d, int line, int col,
		  const char *fmt, ...)
{
	char msg[DT_ERR_MSG_MAX];
	char full[DT_ERR_MSG_MAX + 64];
	va_list ap;

	if (d->error)
		return;         /* the first problem of a document is the one told */
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(full, sizeof(full), "line %d, column %d: %s", line, col, msg);
	d->root = NULL;
	d->error = doc_arena_strdup(s->arena, full);
	if (!d->error)
		d->error = (char *)"out of memory";
}

void doc_offset_pos(const char *buf, size_t len, size_t off, int *line, int *col)
{
	int l = 1, c = 1;
	size_t i = 0;

	if (off > len)
		off = len;
	/* A byte-order mark takes no column, as in libyaml's marks. */
	if (off >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0)
		i = 3;
	for (; i < off; i++) {
		unsigned char ch = (unsigned char)buf[i];

		if (ch == '\n') {
			l++;
			c = 1;
		} else if ((ch & 0xC0) != 0x80) {
			c++;
		}
	}
	*line = l;
	*col = c;
}
