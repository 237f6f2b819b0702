/* gen_src.h - where the problem generators (gen_alloc.c, gen_plan.c) take
 * their choices from: the fuzzer's bytes, one byte per choice and 0 once
 * they run out (so every input, the empty one included, is a valid
 * problem), or a seeded PRNG (splitmix64) for the differential suites,
 * which makes every case reproducible from its seed. */
#ifndef DT_GEN_SRC_H
#define DT_GEN_SRC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct gen_src {
	const uint8_t *data;    /* fuzzer bytes; NULL: PRNG */
	size_t n, pos;
	uint64_t rng;
};

static inline void gen_src_bytes(struct gen_src *s, const uint8_t *data, size_t n)
{
	s->data = data;
	s->n = n;
	s->pos = 0;
	s->rng = 0;
}

static inline void gen_src_seed(struct gen_src *s, uint64_t seed)
{
	s->data = NULL;
	s->n = s->pos = 0;
	s->rng = seed;
}

static inline uint64_t gen_src_next(struct gen_src *s)
{
	uint64_t z;

	if (s->data)
		return s->pos < s->n ? s->data[s->pos++] : 0;
	z = (s->rng += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* A choice in [0, n); n >= 1. */
static inline unsigned gen_pick(struct gen_src *s, unsigned n)
{
	return (unsigned)(gen_src_next(s) % n);
}

/* A choice in [lo, hi]. */
static inline int gen_range(struct gen_src *s, int lo, int hi)
{
	return lo + (int)gen_pick(s, (unsigned)(hi - lo + 1));
}

static inline bool gen_bool(struct gen_src *s, unsigned percent)
{
	return gen_pick(s, 100) < percent;
}

#endif
