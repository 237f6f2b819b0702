/* hash.c - FNV-1a (see hash.h). */
#include <string.h>

#include "hash.h"

#define FNV_PRIME 1099511628211ull

uint64_t hash_fnv1a(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * FNV_PRIME;
	return h;
}

uint64_t hash_field(uint64_t h, const char *s)
{
	if (s)
		h = hash_fnv1a(h, s, strlen(s));
	return (h ^ 0xff) * FNV_PRIME;  /* 0xff never occurs in UTF-8 text */
}
