/* doc_stream.c - streams of documents as the readers fill them: adding a
 * document, failing one with a positioned message, turning a byte offset
 * into a line and column. */
#include "doc_impl.h"

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

struct doc_document *doc_stream_add(struct doc_stream *s, int line)
{
	struct doc_document *d;

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
