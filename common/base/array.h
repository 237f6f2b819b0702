/* array.h - growing a malloc'ed array (DT_GROW), in the spirit of git's
 * ALLOC_GROW and systemd's GREEDY_REALLOC: one place that doubles the
 * capacity, checks the size arithmetic for overflow and zeroes the new
 * room, instead of a hand-written realloc at every array that grows;
 * and freeing an array of strings. */
#ifndef DT_ARRAY_H
#define DT_ARRAY_H

#include <stddef.h>

/* Make room for need elements of size bytes in *v, whose capacity is *cap
 * elements: the capacity at least doubles (and is at least 8), the new
 * elements are zeroed. 0, or -ENOMEM with *v and *cap unchanged (also
 * when need * size would overflow). Does nothing when need <= *cap. */
int dt_grow(void **v, size_t *cap, size_t need, size_t size);

/* DT_GROW(arr, cap, need): dt_grow on a typed array and its size_t
 * capacity, e.g.
 *
 *	if (DT_GROW(s->items, s->cap, s->n + 1))
 *		return -ENOMEM;
 *	s->items[s->n++] = item;
 *
 * arr and cap are evaluated more than once. */
#define DT_GROW(arr, cap, need)                                                 \
	({                                                                      \
		void *dt_grow_p_ = (arr);                                       \
		int dt_grow_rc_ = dt_grow(&dt_grow_p_, &(cap), (need), sizeof(*(arr))); \
		(arr) = dt_grow_p_;                                             \
		dt_grow_rc_;                                                    \
	})

/* Free the n strings of v (NULL ones are skipped) and v itself: the one
 * owner's release of a malloc'ed array of malloc'ed strings. v may be
 * NULL. */
void dt_strv_free(char **v, size_t n);

#endif
