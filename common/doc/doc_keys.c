/* doc_keys.c - mapping keys: their order and equality (by text, as the
 * readers and doc_equal compare them) and the duplicates the YAML and JSON
 * readers must refuse (doc_find_dup_key). */
#include "doc_impl.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

int doc_key_cmp(const struct doc_node *x, const struct doc_node *y)
{
	size_t n = x->text_len < y->text_len ? x->text_len : y->text_len;
	int c = n ? memcmp(x->text, y->text, n) : 0;

	if (c)
		return c;
	return x->text_len < y->text_len ? -1 : x->text_len > y->text_len;
}

bool doc_key_eq(const struct doc_node *x, const struct doc_node *y)
{
	return x->text_len == y->text_len &&
	       (x->text_len == 0 || memcmp(x->text, y->text, x->text_len) == 0);
}

static int pair_idx_cmp(const void *a, const void *b, void *ctx)
{
	const struct doc_pair *pairs = ctx;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	int c = doc_key_cmp(pairs[i].key, pairs[j].key);

	if (c)
		return c;
	return i < j ? -1 : i > j;
}

int doc_find_dup_key(const struct doc_pair *pairs, size_t n, size_t *dup, size_t *first)
{
	size_t *idx, best = (size_t)-1, orig = 0;

	if (n <= 16) {
		/* Small maps (most of a manifest): compare every pair. */
		for (size_t i = 1; i < n; i++)
			for (size_t j = 0; j < i; j++)
				if (doc_key_eq(pairs[i].key, pairs[j].key)) {
					*dup = i;
					*first = j;
					return 0;
				}
		return 1;
	}
	idx = malloc(n * sizeof(*idx));
	if (!idx)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		idx[i] = i;
	/* Ordering by (key, index) makes equal keys adjacent, earliest first. */
	qsort_r(idx, n, sizeof(*idx), pair_idx_cmp, (void *)pairs);
	for (size_t i = 1; i < n; i++) {
		if (!doc_key_eq(pairs[idx[i]].key, pairs[idx[i - 1]].key))
			continue;
		/* Report the repeat that comes first in the source. */
		if (idx[i] < best) {
			size_t j = i;

			while (j > 0 && doc_key_eq(pairs[idx[j - 1]].key, pairs[idx[i]].key))
				j--;
			best = idx[i];
			orig = idx[j];
		}
	}
	free(idx);
	if (best == (size_t)-1)
		return 1;
	*dup = best;
	*first = orig;
	return 0;
}
