/* hash.h - FNV-1a, the string hash of the codebase's hash tables and of
 * the planner's deterministic names: one copy instead of one per table. */
#ifndef DT_HASH_H
#define DT_HASH_H

#include <stddef.h>
#include <stdint.h>

#define DT_HASH_INIT 0xcbf29ce484222325ULL     /* FNV-1a 64's offset basis */

/* FNV-1a (64 bits) over len bytes of s, continuing from h (DT_HASH_INIT
 * to start), so that several fields hash as one. */
uint64_t dt_hash(uint64_t h, const void *s, size_t len);

#endif
