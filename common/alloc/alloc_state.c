/* alloc_state.c - what is already allocated on a node: per device the
 * number of allocations (exclusive devices 0 or 1, shared ones one per
 * share), per capacity slot what the shares consume, per counter what
 * the allocated devices consume. One block of flat arrays, so that a
 * copy is one memcpy and a caller can try a pod and roll back. */
#include <stdlib.h>
#include <string.h>

#include "alloc_internal.h"

static size_t state_bytes(const struct alloc_ctx *ctx, size_t *cap_off, size_t *cnt_off)
{
	size_t a = ctx->n_devs * sizeof(uint32_t);
	size_t al = _Alignof(struct quantity);

	a = (a + al - 1) / al * al;
	*cap_off = a;
	a += ctx->n_caps * sizeof(struct quantity);
	*cnt_off = a;
	a += ctx->n_counters * sizeof(struct quantity);
	return a ? a : 1;
}

struct alloc_state *alloc_state_new(const struct alloc_ctx *ctx)
{
	size_t cap_off, cnt_off, bytes = state_bytes(ctx, &cap_off, &cnt_off);
	struct alloc_state *s = calloc(1, sizeof(*s));
	char *block;

	if (!s)
		return NULL;
	block = aligned_alloc(_Alignof(struct quantity),
			      (bytes + _Alignof(struct quantity) - 1) /
			      _Alignof(struct quantity) * _Alignof(struct quantity));
	if (!block) {
		free(s);
		return NULL;
	}
	memset(block, 0, bytes);
	s->ctx = ctx;
	s->n_alloc = (uint32_t *)(void *)block;
	s->cap_used = (struct quantity *)(void *)(block + cap_off);
	s->counter_used = (struct quantity *)(void *)(block + cnt_off);
	return s;
}

int alloc_state_copy(struct alloc_state *dst, const struct alloc_state *src)
{
	size_t cap_off, cnt_off;

	if (!dst || !src || dst->ctx != src->ctx)
		return -EINVAL;
	memcpy(dst->n_alloc, src->n_alloc, state_bytes(src->ctx, &cap_off, &cnt_off));
	dst->n_busy = src->n_busy;
	return 0;
}

void alloc_state_clear(struct alloc_state *s)
{
	size_t cap_off, cnt_off;

	memset(s->n_alloc, 0, state_bytes(s->ctx, &cap_off, &cnt_off));
	s->n_busy = 0;
}

struct alloc_state *alloc_state_clone(const struct alloc_state *src)
{
	struct alloc_state *s = alloc_state_new(src->ctx);

	if (s)
		alloc_state_copy(s, src);
	return s;
}

void alloc_state_free(struct alloc_state *s)
{
	if (!s)
		return;
	free(s->n_alloc);
	free(s);
}

/* An exclusive device of the node that is taken counts as busy. */
static bool counts_busy(const struct alloc_state *s, uint32_t dev)
{
	const struct adev *d = &s->ctx->devs[dev];

	return d->targets_node && !d->allow_multi;
}

void alloc_state_take(struct alloc_state *s, uint32_t dev, const struct quantity *consumed)
{
	if (s->n_alloc[dev] == 0) {
		alloc_counters_apply(s, dev, 1);
		s->n_busy += counts_busy(s, dev);
	}
	s->n_alloc[dev]++;
	if (consumed)
		alloc_capacity_apply(s, dev, consumed, 1);
}

void alloc_state_release(struct alloc_state *s, uint32_t dev, const struct quantity *consumed)
{
	if (consumed)
		alloc_capacity_apply(s, dev, consumed, -1);
	if (s->n_alloc[dev] && --s->n_alloc[dev] == 0) {
		alloc_counters_apply(s, dev, -1);
		s->n_busy -= counts_busy(s, dev);
	}
}

bool alloc_state_in_use(const struct alloc_state *s, uint32_t dev)
{
	uint32_t n = s->n_alloc[dev];

	return s->ctx->devs[dev].allow_multi ? (n & ALLOC_HELD_WHOLE) != 0 : n != 0;
}

/* A persisted dedicated result on a shared device: one allocation (so its
 * counters are drawn) that also bars every further one. */
static void hold_whole(struct alloc_state *s, uint32_t dev)
{
	if (s->n_alloc[dev] & ALLOC_HELD_WHOLE)
		return;
	alloc_state_take(s, dev, NULL);
	s->n_alloc[dev] |= ALLOC_HELD_WHOLE;
}

int alloc_state_add_allocation(struct alloc_state *s, const struct model_allocation *a,
			       struct dt_err *err)
{
	struct quantity consumed[64];

	(void)err;
	for (size_t i = 0; a && i < a->n_results; i++) {
		const struct model_allocation_result *r = &a->results[i];
		const struct adev *d;
		int64_t dev;

		if (!r->driver || !r->pool || !r->device)
			continue;
		if (r->has_admin_access && r->admin_access)
			continue;       /* admin access uses nothing */
		dev = alloc_ctx_find_device(s->ctx, r->driver, r->pool, r->device);
		if (dev < 0)
			continue;
		d = &s->ctx->devs[dev];
		if (d->allow_multi && !r->share_id) {
			hold_whole(s, (uint32_t)dev);
			continue;
		}
		if (!d->allow_multi || d->dev->n_capacity > 64) {
			alloc_state_take(s, (uint32_t)dev, NULL);
			continue;
		}
		/* A share: what it consumed, by capacity name. */
		memset(consumed, 0, sizeof(consumed));
		for (size_t k = 0; k < r->consumed_capacity.n_items; k++) {
			const struct model_quantity_entry *e = &r->consumed_capacity.items[k];
			int ci = e->name ? alloc_dev_capacity_index(d, e->name) : -1;

			if (ci >= 0)
				consumed[ci] = e->value;
		}
		alloc_state_take(s, (uint32_t)dev, consumed);
	}
	return 0;
}
