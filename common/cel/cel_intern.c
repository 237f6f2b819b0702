/* cel_intern.c - canonical copies of attribute and capacity names.
 *
 * A device view whose names are all canonical (struct cel_device.interned)
 * lets a compiled selector find an attribute by comparing two pointers
 * instead of two strings: the program interns its constant domain and id
 * at compile time, the model interns each device's names once when it
 * builds the view. Canonical strings are never freed, so equal pointers
 * always mean equal names, whatever memory the callers free and reuse.
 * The table is bounded (CEL_INTERN_MAX names); past that cel_intern says
 * no and callers keep comparing strings. Thread-safe (one mutex). */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cel_device.h"
#include "hash.h"

#define CEL_INTERN_MAX 65536            /* names; a power of two */
#define CEL_INTERN_MAX_LEN 256           /* longer strings are no names */

static pthread_mutex_t intern_lock = PTHREAD_MUTEX_INITIALIZER;
static const char **intern_slots;        /* open addressing, 2 x CEL_INTERN_MAX */
static size_t intern_count;

static uint32_t name_hash(const char *s, size_t len)
{
	return (uint32_t)hash_fnv1a(HASH_FNV_OFFSET, s, len);
}

const char *cel_intern(const char *s)
{
	const size_t mask = 2 * CEL_INTERN_MAX - 1;
	const char *out = NULL;
	size_t len, i;

	if (!s || (len = strnlen(s, CEL_INTERN_MAX_LEN + 1)) > CEL_INTERN_MAX_LEN)
		return NULL;
	pthread_mutex_lock(&intern_lock);
	if (!intern_slots)
		intern_slots = calloc(mask + 1, sizeof(*intern_slots));
	if (!intern_slots)
		goto out;
	for (i = name_hash(s, len) & mask; intern_slots[i]; i = (i + 1) & mask)
		if (!strcmp(intern_slots[i], s)) {
			out = intern_slots[i];
			goto out;
		}
	if (intern_count < CEL_INTERN_MAX) {
		char *copy = malloc(len + 1);

		if (copy) {
			memcpy(copy, s, len + 1);
			intern_slots[i] = out = copy;
			intern_count++;
		}
	}
out:
	pthread_mutex_unlock(&intern_lock);
	return out;
}
