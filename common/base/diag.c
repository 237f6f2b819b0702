/* diag.c - the list of collected error messages. */
#include "diag.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "array.h"

void dt_diags_init(struct dt_diags *d)
{
	d->msgs = NULL;
	d->n = d->cap = d->dropped = 0;
}

int dt_diags_add(struct dt_diags *d, const char *fmt, ...)
{
	va_list ap;
	char *msg;
	int r;

	/* A full list is no failure: the message is counted, not stored, and
	 * the caller goes on finding the others (QA-102). */
	if (d->n >= DT_DIAG_MAX) {
		d->dropped++;
		return 0;
	}
	if (DT_GROW(d->msgs, d->cap, d->n + 1)) {
		d->dropped++;
		return -ENOMEM;
	}
	va_start(ap, fmt);
	r = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (r < 0) {
		d->dropped++;
		return -ENOMEM;
	}
	d->msgs[d->n++] = msg;
	return 0;
}

size_t dt_diags_count(const struct dt_diags *d)
{
	return d->n + d->dropped;
}

void dt_diags_free(struct dt_diags *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->msgs[i]);
	free(d->msgs);
	dt_diags_init(d);
}
