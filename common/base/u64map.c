/* u64map.c - the 64-bit hash map of u64map.h. Keys are hashes already, so
 * their low bits index the table; it doubles at 3/4 full. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "u64map.h"

static size_t slot_of(const struct u64map *m, uint64_t key)
{
	size_t mask = m->cap - 1, i = (size_t)(key ^ (key >> 29)) & mask;

	while (m->keys[i] && m->keys[i] != key)
		i = (i + 1) & mask;
	return i;
}

static int grow(struct u64map *m)
{
	struct u64map big = { .cap = m->cap ? m->cap * 2 : 16, .n = m->n };

	big.keys = calloc(big.cap, sizeof(*big.keys));
	big.vals = calloc(big.cap, sizeof(*big.vals));
	if (!big.keys || !big.vals) {
		free(big.keys);
		free(big.vals);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->cap; i++) {
		if (m->keys[i]) {
			size_t s = slot_of(&big, m->keys[i]);

			big.keys[s] = m->keys[i];
			big.vals[s] = m->vals[i];
		}
	}
	free(m->keys);
	free(m->vals);
	*m = big;
	return 0;
}

int u64map_put(struct u64map *m, uint64_t key, uint64_t val)
{
	size_t s;

	if (!key)
		return -EINVAL;
	if ((m->n + 1) * 4 > m->cap * 3 && grow(m))
		return -ENOMEM;
	s = slot_of(m, key);
	if (!m->keys[s]) {
		m->keys[s] = key;
		m->n++;
	}
	m->vals[s] = val;
	return 0;
}

bool u64map_get(const struct u64map *m, uint64_t key, uint64_t *val)
{
	size_t s;

	if (!m->cap || !key)
		return false;
	s = slot_of(m, key);
	if (!m->keys[s])
		return false;
	if (val)
		*val = m->vals[s];
	return true;
}

bool u64map_del(struct u64map *m, uint64_t key)
{
	size_t mask, i, j;

	if (!m->cap || !key)
		return false;
	mask = m->cap - 1;
	i = slot_of(m, key);
	if (!m->keys[i])
		return false;
	m->keys[i] = 0;
	m->n--;
	/* Shift back the entries of the run after i that belong before it. */
	for (j = (i + 1) & mask; m->keys[j]; j = (j + 1) & mask) {
		uint64_t k = m->keys[j];
		size_t home = (size_t)(k ^ (k >> 29)) & mask;

		if (((j - home) & mask) >= ((j - i) & mask)) {
			m->keys[i] = k;
			m->vals[i] = m->vals[j];
			m->keys[j] = 0;
			i = j;
		}
	}
	return true;
}

int u64map_copy(struct u64map *dst, const struct u64map *src)
{
	if (dst->cap != src->cap) {
		u64map_free(dst);
		if (!src->cap)
			return 0;
		dst->keys = malloc(src->cap * sizeof(*dst->keys));
		dst->vals = malloc(src->cap * sizeof(*dst->vals));
		if (!dst->keys || !dst->vals) {
			u64map_free(dst);
			return -ENOMEM;
		}
		dst->cap = src->cap;
	}
	if (src->cap) {
		memcpy(dst->keys, src->keys, src->cap * sizeof(*dst->keys));
		memcpy(dst->vals, src->vals, src->cap * sizeof(*dst->vals));
	}
	dst->n = src->n;
	return 0;
}

void u64map_clear(struct u64map *m)
{
	if (m->cap)
		memset(m->keys, 0, m->cap * sizeof(*m->keys));
	m->n = 0;
}

void u64map_free(struct u64map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

bool u64map_next(const struct u64map *m, size_t *i, uint64_t *key, uint64_t *val)
{
	while (*i < m->cap) {
		size_t s = (*i)++;

		if (m->keys[s]) {
			*key = m->keys[s];
			if (val)
				*val = m->vals[s];
			return true;
		}
	}
	return false;
}
