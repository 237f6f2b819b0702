/* diag.h - an ordered list of error messages.
 *
 * Validation reports every problem it finds, not just the first, so it
 * collects messages here; the CLI prints them one per line. */
#ifndef DT_DIAG_H
#define DT_DIAG_H

#include <stddef.h>

/* Past this many messages further ones are counted, not stored, so a
 * hostile input cannot make the list grow without bound. */
#define DT_DIAG_MAX 10000

struct dt_diags {
	char **msgs;
	size_t n, cap;
	size_t dropped;     /* messages not stored (limit or out of memory) */
};

void dt_diags_init(struct dt_diags *d);
/* Append one formatted message. Returns 0 (also past DT_DIAG_MAX, where it
 * is only counted), or -ENOMEM (out of memory: message dropped). */
int dt_diags_add(struct dt_diags *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Total number of problems seen, including dropped ones. */
size_t dt_diags_count(const struct dt_diags *d);
void dt_diags_free(struct dt_diags *d);

#endif
