/* alloc_counters.c - partitionable devices (KEP-4815): a device consumes
 * counters from its pool's counter sets; a device fits while every
 * counter it draws on stays within its set's value. A shared device
 * consumes its counters once, with its first allocation, however many
 * shares follow. */
#include "alloc_internal.h"

bool alloc_counters_fit(const struct alloc_state *s, uint32_t dev)
{
	const struct alloc_ctx *ctx = s->ctx;
	const struct adev *d = &ctx->devs[dev];

	if (s->n_alloc[dev])
		return true;    /* already counted */
	for (uint32_t i = 0; i < d->n_cons; i++) {
		const struct aconsume *c = &ctx->cons[d->cons_first + i];
		struct quantity sum;

		if (quantity_add(&s->counter_used[c->counter], c->amount, &sum))
			return false;
		if (quantity_cmp(&sum, ctx->counters[c->counter].value) > 0)
			return false;
	}
	return true;
}

void alloc_counters_apply(struct alloc_state *s, uint32_t dev, int sign)
{
	const struct alloc_ctx *ctx = s->ctx;
	const struct adev *d = &ctx->devs[dev];

	for (uint32_t i = 0; i < d->n_cons; i++) {
		const struct aconsume *c = &ctx->cons[d->cons_first + i];
		struct quantity *u = &s->counter_used[c->counter];
		struct quantity r;

		if (!(sign > 0 ? quantity_add(u, c->amount, &r) : quantity_sub(u, c->amount, &r)))
			*u = r;
	}
}
