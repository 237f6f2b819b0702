/* cel_cache.c - a bounded LRU cache of compiled DRA selectors keyed by the
 * expression text (the scheduler's cel.NewCache). Compile errors are not
 * cached. One thread at a time. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cel_ast.h"
#include "hash.h"

struct cache_entry {
	struct cache_entry *prev, *next;        /* LRU list, most recent first */
	struct cache_entry *chain;              /* hash bucket */
	uint64_t hash;
	char *expr;
	size_t len;
	struct cel_program *prog;
};

struct cel_cache {
	size_t capacity, count, n_buckets;
	struct cache_entry **buckets;
	struct cache_entry *head, *tail;
};

static uint64_t hash_text(const char *s, size_t len)
{
	return hash_fnv1a(HASH_FNV_OFFSET, s, len);
}

struct cel_cache *cel_cache_new(size_t capacity)
{
	struct cel_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->capacity = capacity ? capacity : 1;
	c->n_buckets = 16;
	while (c->n_buckets < c->capacity * 2)
		c->n_buckets *= 2;
	c->buckets = calloc(c->n_buckets, sizeof(*c->buckets));
	if (!c->buckets) {
		free(c);
		return NULL;
	}
	return c;
}

static void unlink_lru(struct cel_cache *c, struct cache_entry *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else
		c->head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		c->tail = e->prev;
	e->prev = e->next = NULL;
}

static void push_front(struct cel_cache *c, struct cache_entry *e)
{
	e->next = c->head;
	e->prev = NULL;
	if (c->head)
		c->head->prev = e;
	c->head = e;
	if (!c->tail)
		c->tail = e;
}

static void drop(struct cel_cache *c, struct cache_entry *e)
{
	struct cache_entry **pp = &c->buckets[e->hash & (c->n_buckets - 1)];

	while (*pp && *pp != e)
		pp = &(*pp)->chain;
	if (*pp)
		*pp = e->chain;
	unlink_lru(c, e);
	cel_program_free(e->prog);
	free(e->expr);
	free(e);
	c->count--;
}

int cel_cache_get(struct cel_cache *c, const char *expr, size_t len,
		  const struct cel_program **out, struct dt_err *err)
{
	uint64_t h = hash_text(expr, len);
	struct cache_entry *e;
	struct cel_program *p;
	int rc;

	for (e = c->buckets[h & (c->n_buckets - 1)]; e; e = e->chain)
		if (e->hash == h && e->len == len && !memcmp(e->expr, expr, len)) {
			unlink_lru(c, e);
			push_front(c, e);
			*out = e->prog;
			return 0;
		}
	/* The scheduler compiles without cost estimation. */
	rc = cel_compile_selector(expr, len, false, &p, err);
	if (rc < 0)
		return rc;
	e = calloc(1, sizeof(*e));
	if (e)
		e->expr = malloc(len + 1);
	if (!e || !e->expr) {
		free(e);
		cel_program_free(p);
		return dt_err_set(err, -ENOMEM, "out of memory");
	}
	memcpy(e->expr, expr, len);
	e->expr[len] = 0;
	e->len = len;
	e->hash = h;
	e->prog = p;
	if (c->count == c->capacity)
		drop(c, c->tail);
	e->chain = c->buckets[h & (c->n_buckets - 1)];
	c->buckets[h & (c->n_buckets - 1)] = e;
	push_front(c, e);
	c->count++;
	*out = p;
	return 0;
}

void cel_cache_free(struct cel_cache *c)
{
	if (!c)
		return;
	while (c->head)
		drop(c, c->head);
	free(c->buckets);
	free(c);
}
