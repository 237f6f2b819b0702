/* array.c - dt_grow, the one array growth of the codebase, and
 * dt_strv_free (array.h). */
#include "array.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define GROW_MIN 8

int dt_grow(void **v, size_t *cap, size_t need, size_t size)
{
	size_t ncap = *cap;
	void *nv;

	if (need <= *cap)
		return 0;
	if (!size || need > SIZE_MAX / size)
		return -ENOMEM;
	ncap = ncap < GROW_MIN ? GROW_MIN : ncap;
	while (ncap < need)
		ncap = ncap > SIZE_MAX / 2 ? need : ncap * 2;
	if (ncap > SIZE_MAX / size)
		ncap = need;
	nv = realloc(*v, ncap * size);
	if (!nv)
		return -ENOMEM;
	memset((char *)nv + *cap * size, 0, (ncap - *cap) * size);
	*v = nv;
	*cap = ncap;
	return 0;
}

void dt_strv_free(char **v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}
