/* hash.c - FNV-1a (hash.h). */
#include "hash.h"

#define FNV_PRIME 0x100000001b3ULL

uint64_t dt_hash(uint64_t h, const void *s, size_t len)
{
	const unsigned char *p = s;

	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * FNV_PRIME;
	return h;
}
