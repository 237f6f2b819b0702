/* hash.h - FNV-1a, 64 bits: the one non-cryptographic string hash of the
 * tree (hash tables, deduplication, names derived from content). Names
 * made from it must stay stable across versions, so the constants are
 * FNV's own and never change. */
#ifndef DT_HASH_H
#define DT_HASH_H

#include <stddef.h>
#include <stdint.h>

#define HASH_FNV_OFFSET 14695981039346656037ull  /* FNV-1a's 64-bit offset basis */

/* h continued over n bytes of p. */
uint64_t hash_fnv1a(uint64_t h, const void *p, size_t n);
/* h continued over the string s (NULL as "") and a terminator, so that
 * fields hash apart: ("ab", "c") and ("a", "bc") differ. */
uint64_t hash_field(uint64_t h, const char *s);

#endif
