/* doc_arena.c - the arena document nodes live in, and the node and array
 * allocation every reader and builder of trees uses. */
#include "doc_impl.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- Arena ---- */

/* Nodes are bump-allocated from big zeroed chunks: a 10 MB manifest makes
 * hundreds of thousands of nodes and per-node malloc would dominate. */
#define ARENA_FIRST_CHUNK  (16u << 10)
#define ARENA_MAX_CHUNK    (1u << 20)
#define ARENA_ALIGN        16u

struct doc_chunk {
	struct doc_chunk *next;
	size_t used, cap;
	_Alignas(16) unsigned char data[];
};

struct doc_arena {
	struct doc_chunk *head;     /* the chunk being filled; owns the list */
	size_t next_cap;            /* size of the next ordinary chunk */
};

struct doc_arena *doc_arena_new(void)
{
	struct doc_arena *a = calloc(1, sizeof(*a));

	if (a)
		a->next_cap = ARENA_FIRST_CHUNK;
	return a;
}

void doc_arena_free(struct doc_arena *a)
{
	struct doc_chunk *c, *next;

	if (!a)
		return;
	for (c = a->head; c; c = next) {
		next = c->next;
		free(c);
	}
	free(a);
}

static struct doc_chunk *chunk_new(size_t cap)
{
	struct doc_chunk *c = calloc(1, sizeof(*c) + cap);

	if (c)
		c->cap = cap;
	return c;
}

void *doc_arena_alloc(struct doc_arena *a, size_t size)
{
	struct doc_chunk *c;
	void *p;

	if (!a || size > ((size_t)1 << 40))
		return NULL;
	size = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
	if (!size)
		size = ARENA_ALIGN;
	c = a->head;
	if (c && c->cap - c->used >= size) {
		p = c->data + c->used;
		c->used += size;
		return p;
	}
	if (size > a->next_cap / 4) {
		/* A big block gets a chunk of its own, kept behind the current
		 * one so the current one's free space is not thrown away. */
		c = chunk_new(size);
		if (!c)
			return NULL;
		c->used = size;
		if (a->head) {
			c->next = a->head->next;
			a->head->next = c;
		} else {
			a->head = c;
		}
		return c->data;
	}
	c = chunk_new(a->next_cap);
	if (!c)
		return NULL;
	if (a->next_cap < ARENA_MAX_CHUNK)
		a->next_cap *= 2;
	c->next = a->head;
	a->head = c;
	c->used = size;
	return c->data;
}

/* The memory of the largest chunk is kept for what comes next, the other
 * chunks go. The kept memory is not zeroed again: only the parsers
 * allocate from a document's arena, and they set what they allocate
 * (doc_node_alloc every field, arrays up to their count). */
void doc_arena_empty(struct doc_arena *a)
{
	struct doc_chunk *keep = a->head, *c, *next;

	for (c = a->head; c; c = c->next)
		if (c->cap > keep->cap)
			keep = c;
	for (c = a->head; c; c = next) {
		next = c->next;
		if (c != keep)
			free(c);
	}
	if (keep) {
		keep->used = 0;
		keep->next = NULL;
	}
	a->head = keep;
}

char *doc_arena_memdup(struct doc_arena *a, const char *s, size_t len)
{
	char *p = doc_arena_alloc(a, len + 1);

	if (!p)
		return NULL;
	if (len)
		memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

char *doc_arena_strdup(struct doc_arena *a, const char *s)
{
	return s ? doc_arena_memdup(a, s, strlen(s)) : NULL;
}

size_t doc_array_cap(size_t n)
{
	size_t cap = 4;

	while (cap < n)
		cap *= 2;
	return cap;
}

struct doc_node *doc_node_alloc(struct doc_arena *a, enum doc_kind kind, int line, int col)
{
	struct doc_node *n = doc_arena_alloc(a, sizeof(*n));

	/* Every field: a document's arena is reused, unzeroed, by
	 * doc_parse_each. */
	if (n)
		*n = (struct doc_node){ .kind = kind, .line = line, .col = col };
	return n;
}
