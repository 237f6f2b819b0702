/* u64map.h - a hash map from 64-bit keys to 64-bit values (open
 * addressing, linear probing, backward-shift deletion): sets of hashes
 * (uids, names, fingerprints of objects) and small counters keyed by a
 * hash, without a hand-written table each time. Key 0 is reserved (it
 * marks an empty slot): hash_field never gives 0 for real input, and
 * callers map a 0 to 1 where it could.
 *
 *	struct u64map m = U64MAP_INIT;
 *	u64map_put(&m, h, 1);           // 0 or -ENOMEM
 *	if (u64map_get(&m, h, &v)) ...
 *	u64map_del(&m, h);
 *	u64map_free(&m);
 */
#ifndef DT_U64MAP_H
#define DT_U64MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct u64map {
	uint64_t *keys;                 /* 0: empty */
	uint64_t *vals;
	size_t cap, n;                  /* cap: 0 or a power of two */
};

#define U64MAP_INIT { NULL, NULL, 0, 0 }

/* Insert or replace key's value. 0, or -ENOMEM (the map unchanged). */
int u64map_put(struct u64map *m, uint64_t key, uint64_t val);
/* Whether key is in the map; *val (may be NULL) gets its value. */
bool u64map_get(const struct u64map *m, uint64_t key, uint64_t *val);
/* Remove key; whether it was there. */
bool u64map_del(struct u64map *m, uint64_t key);
/* dst (empty or not) becomes a copy of src. 0 or -ENOMEM (dst emptied). */
int u64map_copy(struct u64map *dst, const struct u64map *src);
/* Empty the map, keeping its room. */
void u64map_clear(struct u64map *m);
void u64map_free(struct u64map *m);
/* Iterate: *i = 0 first; false at the end. The map must not change
 * meanwhile (collect the keys to delete, then delete them). */
bool u64map_next(const struct u64map *m, size_t *i, uint64_t *key, uint64_t *val);

#endif
