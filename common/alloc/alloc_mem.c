/* alloc_mem.c - the allocator's memory: a bump allocator whose chunks are
 * freed together (a ctx's tables, an outcome's results), and a small
 * open-addressing hash from byte strings to indices (devices by ID,
 * selectors by expression, classes by name). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "alloc_internal.h"
#include "hash.h"
#include "hex.h"

#define CHUNK_MIN (4u << 10)

struct alloc_mem_chunk {
	struct alloc_mem_chunk *next;
	size_t used, size;
	max_align_t data[];
};

struct alloc_mem *alloc_mem_new(void)
{
	return calloc(1, sizeof(struct alloc_mem));
}

void *alloc_mem_raw(struct alloc_mem *m, size_t size)
{
	struct alloc_mem_chunk *c = m->chunks;
	const size_t align = sizeof(max_align_t);
	size_t need = (size + align - 1) / align * align;
	void *p;

	if (need < size)
		return NULL;
	if (!c || c->size - c->used < need) {
		size_t sz = need > CHUNK_MIN ? need : CHUNK_MIN;

		if (sz > SIZE_MAX - sizeof(*c))
			return NULL;
		c = malloc(sizeof(*c) + sz);
		if (!c)
			return NULL;
		c->used = 0;
		c->size = sz;
		c->next = m->chunks;
		m->chunks = c;
	}
	p = (char *)c->data + c->used;
	c->used += need;
	return p;
}

void *alloc_mem_get(struct alloc_mem *m, size_t size)
{
	void *p = alloc_mem_raw(m, size);

	if (p)
		memset(p, 0, size);
	return p;
}

char *alloc_mem_strdup(struct alloc_mem *m, const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = alloc_mem_get(m, n);

	if (p)
		memcpy(p, s, n);
	return p;
}

void alloc_mem_reset(struct alloc_mem *m)
{
	struct alloc_mem_chunk *c, *next, *keep = NULL;

	for (c = m->chunks; c; c = next) {
		next = c->next;
		if (!keep && c->size == CHUNK_MIN) {
			keep = c;
			continue;
		}
		free(c);
	}
	m->chunks = keep;
	if (keep) {
		keep->used = 0;
		keep->next = NULL;
	}
}

void alloc_mem_free(struct alloc_mem *m)
{
	struct alloc_mem_chunk *c, *next;

	if (!m)
		return;
	for (c = m->chunks; c; c = next) {
		next = c->next;
		free(c);
	}
	free(m);
}

struct alloc_hash_slot {
	const char *key;        /* NULL: empty */
	size_t len;
	uint64_t hash;
	uint32_t val;
};

static uint64_t hash_bytes(const char *s, size_t len)
{
	return hash_fnv1a(HASH_FNV_OFFSET, s, len);
}

void alloc_hash_init(struct alloc_hash *h)
{
	memset(h, 0, sizeof(*h));
}

static struct alloc_hash_slot *find_slot(struct alloc_hash_slot *slots, size_t cap,
					 const char *key, size_t len, uint64_t hash)
{
	size_t i = hash & (cap - 1);

	for (;;) {
		struct alloc_hash_slot *s = &slots[i];

		if (!s->key || (s->hash == hash && s->len == len && !memcmp(s->key, key, len)))
			return s;
		i = (i + 1) & (cap - 1);
	}
}

static int grow(struct alloc_hash *h)
{
	size_t cap = h->cap ? h->cap * 2 : 16;
	struct alloc_hash_slot *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < h->cap; i++) {
		struct alloc_hash_slot *o = &h->slots[i];

		if (o->key)
			*find_slot(slots, cap, o->key, o->len, o->hash) = *o;
	}
	free(h->slots);
	h->slots = slots;
	h->cap = cap;
	return 0;
}

int alloc_hash_put(struct alloc_hash *h, const char *key, size_t len, uint32_t val)
{
	uint64_t hash = hash_bytes(key, len);
	struct alloc_hash_slot *s;

	if ((h->n + 1) * 4 > h->cap * 3 && grow(h))
		return -ENOMEM;
	s = find_slot(h->slots, h->cap, key, len, hash);
	if (!s->key)
		h->n++;
	s->key = key;
	s->len = len;
	s->hash = hash;
	s->val = val;
	return 0;
}

bool alloc_hash_get(const struct alloc_hash *h, const char *key, size_t len, uint32_t *val)
{
	struct alloc_hash_slot *s;

	if (!h->cap)
		return false;
	s = find_slot(h->slots, h->cap, key, len, hash_bytes(key, len));
	if (!s->key)
		return false;
	*val = s->val;
	return true;
}

void alloc_hash_free(struct alloc_hash *h)
{
	free(h->slots);
	alloc_hash_init(h);
}

/* A random (version 4, variant 10) UUID, as the scheduler makes share IDs. */
void alloc_random_share_id(void *arg, char out[ALLOC_SHARE_ID_LEN + 1])
{
	unsigned char b[16];
	size_t got = 0;
	char *p = out;

	(void)arg;
	while (got < sizeof(b)) {
		ssize_t n = getrandom(b + got, sizeof(b) - got, 0);

		if (n <= 0) {
			/* No entropy source at all: fall back to something unique
			 * enough within one process rather than failing. */
			static uint64_t seq;
			uint64_t v = ++seq ^ (uint64_t)(uintptr_t)out;

			memcpy(b, &v, sizeof(v));
			memcpy(b + 8, &v, sizeof(v));
			break;
		}
		got += (size_t)n;
	}
	b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
	b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
	for (int i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			*p++ = '-';
		*p++ = hex_lower[b[i] >> 4];
		*p++ = hex_lower[b[i] & 15];
	}
	*p = '\0';
}
