/* alloc_capacity.c - consumable capacity (KEP-5075). For every capacity
 * of a device, what one allocation consumes:
 *   - not requested: the policy's default, else the whole capacity;
 *   - requested without a policy: the request as is;
 *   - validRange: below min -> min; with step, rounded up to the next
 *     min + n*step; above max (after rounding) violates the policy;
 *   - validValues: the smallest valid value >= the request; above all of
 *     them violates the policy.
 * The arithmetic is exact (quantities are decimals), where the scheduler
 * rounds to int64 Value() first; the two agree on integer quantities. */
#include <stdio.h>
#include <string.h>

#include "alloc_internal.h"

static __int128 pow10_i128(int e)
{
	__int128 p = 1;

	while (e-- > 0)
		p *= 10;
	return p;
}

/* a and b as integers at a common exponent. -ERANGE when they do not fit. */
static int align(const struct quantity *a, const struct quantity *b, __int128 *x, __int128 *y)
{
	int e = a->exp < b->exp ? a->exp : b->exp;
	int da = a->exp - e, db = b->exp - e;

	if (da > 36 || db > 36)
		return -ERANGE;
	if (__builtin_mul_overflow(a->mant, pow10_i128(da), x) ||
	    __builtin_mul_overflow(b->mant, pow10_i128(db), y))
		return -ERANGE;
	return 0;
}

/* min + ceil((req - min) / step) * step. */
static int round_up_step(const struct quantity *req, const struct quantity *min,
			 const struct quantity *step, struct quantity *out)
{
	struct quantity diff, add;
	__int128 x, y, n;
	int rc;

	rc = quantity_sub(req, min, &diff);
	if (rc)
		return rc;
	rc = align(&diff, step, &x, &y);
	if (rc)
		return rc;
	if (y <= 0)
		return -ERANGE;
	n = x / y + (x % y != 0);
	add = *step;
	if (__builtin_mul_overflow(step->mant, n, &add.mant))
		return -ERANGE;
	return quantity_add(min, &add, out);
}

static bool multiple_of_step(const struct quantity *v, const struct quantity *min,
			     const struct quantity *step)
{
	struct quantity diff;
	__int128 x, y;

	if (quantity_sub(v, min, &diff) || align(&diff, step, &x, &y) || y <= 0)
		return false;
	return x % y == 0;
}

/* What a request (NULL: none) consumes of capacity c; false when the
 * request violates the policy. */
static bool consumed_for(const struct model_capacity *c, const struct quantity *req,
			 struct quantity *out)
{
	const struct model_request_policy *p = &c->request_policy;
	bool policy = c->has_request_policy;

	if (!req) {
		*out = policy && p->has_default ? p->def : c->value;
		return true;
	}
	*out = *req;
	if (!policy)
		return true;
	if (p->has_valid_range && p->has_min) {
		if (quantity_cmp(req, &p->min) < 0)
			*out = p->min;
		else if (p->has_step && round_up_step(req, &p->min, &p->step, out))
			return false;
	} else if (p->n_valid_values) {
		size_t i;

		for (i = 0; i < p->n_valid_values; i++)
			if (quantity_cmp(&p->valid_values[i], req) >= 0)
				break;
		if (i == p->n_valid_values)
			return false;   /* above every valid value */
		*out = p->valid_values[i];
	}
	/* violatesPolicy */
	if (p->has_default && !quantity_cmp(out, &p->def))
		return true;
	if (p->has_valid_range && p->has_min) {
		if (p->has_max && quantity_cmp(out, &p->max) > 0)
			return false;
		if (p->has_step && !multiple_of_step(out, &p->min, &p->step))
			return false;
	}
	return true;
}

int alloc_capacity_consumed(const struct adev *d, const struct model_resource_list *requests,
			    struct quantity *consumed, bool *ok)
{
	const struct model_device *md = d->dev;
	const struct quantity *req[64];

	*ok = false;
	if (md->n_capacity > 64)
		return 0;
	for (size_t i = 0; i < md->n_capacity; i++)
		req[i] = NULL;
	for (size_t i = 0; requests && i < requests->n_items; i++) {
		const struct model_quantity_entry *e = &requests->items[i];
		int ci = e->name ? alloc_dev_capacity_index(d, e->name) : -1;

		if (ci < 0)
			return 0;       /* the device has no such capacity */
		req[ci] = &e->value;
	}
	for (size_t i = 0; i < md->n_capacity; i++)
		if (!consumed_for(&md->capacity[i], req[i], &consumed[i]))
			return 0;
	*ok = true;
	return 0;
}

bool alloc_capacity_fits(const struct alloc_state *s, uint32_t dev, const struct quantity *consumed)
{
	const struct adev *d = &s->ctx->devs[dev];

	for (size_t i = 0; i < d->dev->n_capacity; i++) {
		struct quantity sum;

		if (quantity_add(&s->cap_used[d->cap_first + i], &consumed[i], &sum))
			return false;
		if (quantity_cmp(&sum, &d->dev->capacity[i].value) > 0)
			return false;
	}
	return true;
}

void alloc_capacity_apply(struct alloc_state *s, uint32_t dev, const struct quantity *consumed,
			  int sign)
{
	const struct adev *d = &s->ctx->devs[dev];

	for (size_t i = 0; i < d->dev->n_capacity; i++) {
		struct quantity *u = &s->cap_used[d->cap_first + i];
		struct quantity r;

		if (!(sign > 0 ? quantity_add(u, &consumed[i], &r) : quantity_sub(u, &consumed[i], &r)))
			*u = r;
	}
}

/* Why the device's capacity refuses these requests, for a reason text:
 * "memory: 41Gi asked, no valid value" or "memory: 41Gi asked, 8Gi left".
 * Empty when it does not. */
void alloc_capacity_explain(const struct alloc_state *s, uint32_t dev,
			    const struct model_resource_list *requests, char *buf, size_t n)
{
	const struct adev *d = &s->ctx->devs[dev];
	const struct model_device *md = d->dev;
	char a[QUANTITY_STR_MAX], l[QUANTITY_STR_MAX];

	buf[0] = '\0';
	for (size_t i = 0; requests && i < requests->n_items; i++) {
		const struct model_quantity_entry *e = &requests->items[i];

		if (!e->name || alloc_dev_capacity_index(d, e->name) < 0) {
			snprintf(buf, n, "no capacity %s", e->name ? e->name : "");
			return;
		}
	}
	for (size_t i = 0; i < md->n_capacity && i < 64; i++) {
		const struct model_capacity *c = &md->capacity[i];
		const struct quantity *req = NULL;
		struct quantity q, left;

		for (size_t k = 0; requests && k < requests->n_items; k++)
			if (alloc_dev_capacity_index(d, requests->items[k].name) == (int)i)
				req = &requests->items[k].value;
		if (!consumed_for(c, req, &q)) {
			quantity_format(req ? req : &q, a);
			snprintf(buf, n, "%s: %s asked, no valid value", c->name, a);
			return;
		}
		/* A device for one claim has all of its capacity left (it is
		 * free, or "in use" would have said so). */
		if (!d->allow_multi)
			left = c->value;
		else if (quantity_sub(&c->value, &s->cap_used[d->cap_first + i], &left))
			continue;
		if (quantity_cmp(&q, &left) <= 0)
			continue;
		/* Earlier shares may already exceed the capacity (an allocation
		 * made before a driver shrank the device): nothing is left. */
		if (quantity_sign(&left) < 0) {
			left.mant = 0;
			left.exp = 0;
		}
		quantity_format(&q, a);
		quantity_format(&left, l);
		snprintf(buf, n, "%s: %s asked, %s left", c->name, a, l);
		return;
	}
}
