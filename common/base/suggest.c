/* suggest.c - edit distance and the closest name (suggest.h). */
#include <ctype.h>
#include <stdint.h>
#include <string.h>

#include "suggest.h"

#define MAX_NAME 64

size_t dt_edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), row[MAX_NAME + 1];

	if (la > MAX_NAME || lb > MAX_NAME)
		return SIZE_MAX;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];

		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t cost = tolower((unsigned char)a[i - 1]) ==
				      tolower((unsigned char)b[j - 1]) ? 0 : 1;
			size_t best = diag + cost;

			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

int dt_suggest_close(const char *name, size_t d)
{
	return d <= strlen(name) / 2 + 1;
}

const char *dt_suggest(const char *name, const char *const *cands, size_t n)
{
	const char *best = NULL;
	size_t best_d = SIZE_MAX;

	if (!name)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		size_t d = dt_edit_distance(name, cands[i]);

		if (d < best_d) {
			best_d = d;
			best = cands[i];
		}
	}
	return best && dt_suggest_close(name, best_d) ? best : NULL;
}
