/* alloc_constraint.c - a claim's constraints during the search.
 *
 * Attributes are sets, as the scheduler's allocator with list-type
 * attributes (DRAListTypeAttributes) treats them: a scalar is a
 * one-element set, a list attribute (ints, bools, strings, versions) the
 * set of its items; int and ints, string and strings... hold the same
 * element type. matchAttribute: every device of the requests it names has
 * the attribute, and the intersection of their sets stays non-empty (for
 * scalars: the same type and value; versions compare as their text, as
 * the scheduler does). distinctAttribute: every device has it, and the
 * sets are pairwise disjoint (scalars: no two share a value). Both are
 * monotonic, which the search relies on: once adding a device fails,
 * adding more cannot help; removing the last device restores the state
 * before it.
 *
 * Attribute lookup: the fully qualified name "domain/id" matches an
 * attribute written as "domain/id", or as bare "id" when domain is the
 * device's driver (the model splits bare names into the driver's domain,
 * so both are one comparison). A device lacking a node-uniform attribute
 * has the node's single unknown value (AVAL_UNIFORM). */
#include <stdlib.h>
#include <string.h>

#include "alloc_internal.h"

static enum aval_kind elem_kind(enum cel_attr_kind k)
{
	switch (model_attr_elem_kind(k)) {
	case CEL_ATTR_INT: return AVAL_INT;
	case CEL_ATTR_BOOL: return AVAL_BOOL;
	case CEL_ATTR_STRING: return AVAL_STRING;
	default: return AVAL_VERSION;
	}
}

struct aval alloc_dev_attr(const struct alloc_ctx *ctx, uint32_t dev, const char *domain,
			   const char *id)
{
	const struct adev *d = &ctx->devs[dev];
	struct aval v = { AVAL_NONE, NULL };

	for (size_t i = 0; i < d->dev->n_attributes; i++) {
		const struct model_attribute *a = &d->dev->attributes[i];

		if (!a->domain || !a->id || strcmp(a->id, id) || strcmp(a->domain, domain))
			continue;
		v.kind = elem_kind(a->type);
		v.attr = a;
		return v;
	}
	for (uint32_t i = 0; i < d->n_uni; i++) {
		const struct auniform *u = &ctx->uni_attrs[d->uni[i]];

		if (!strcmp(u->domain, domain) && !strcmp(u->id, id)) {
			v.kind = AVAL_UNIFORM;
			return v;
		}
	}
	return v;
}

static size_t set_size(const struct aval *s)
{
	if (s->kind == AVAL_UNIFORM)
		return 1;
	return s->attr ? model_attr_n_values(s->attr) : 0;
}

/* Is value i of a equal to value j of b? */
static bool elem_equal(const struct aval *a, size_t i, const struct aval *b, size_t j)
{
	struct model_attr_item x, y;

	if (a->kind != b->kind)
		return false;
	if (a->kind == AVAL_UNIFORM)
		return true;    /* one node, one value */
	x = model_attr_item_at(a->attr, i);
	y = model_attr_item_at(b->attr, j);
	if (a->kind == AVAL_INT || a->kind == AVAL_BOOL)
		return x.i == y.i;
	return x.len == y.len && !memcmp(x.s, y.s, x.len);
}

static bool set_has(const struct aval *s, const struct aval *of, size_t j)
{
	size_t n = set_size(s);

	for (size_t i = 0; i < n; i++)
		if (elem_equal(s, i, of, j))
			return true;
	return false;
}

static bool sets_intersect(const struct aval *a, const struct aval *b)
{
	size_t n = set_size(b);

	for (size_t j = 0; j < n; j++)
		if (set_has(a, b, j))
			return true;
	return false;
}

bool alloc_constraint_applies(const struct aconstraint *c, const char *main, const char *sub)
{
	size_t ml = strlen(main);

	if (!c->src->n_requests)
		return true;
	for (size_t i = 0; i < c->src->n_requests; i++) {
		const char *r = c->src->requests[i];

		if (!r)
			continue;
		if (!strcmp(r, main))
			return true;
		if (sub && !strncmp(r, main, ml) && r[ml] == '/' && !strcmp(r + ml + 1, sub))
			return true;
	}
	return false;
}

/* matchAttribute: the values of the first device that v also has, out of
 * those in mask. */
static uint64_t intersect(const struct aconstraint *c, uint64_t mask, const struct aval *v)
{
	uint64_t out = 0;

	for (size_t i = 0; i < ALLOC_MATCH_MAX_VALUES; i++)
		if ((mask & (UINT64_C(1) << i)) && set_has(v, &c->vals[0], i))
			out |= UINT64_C(1) << i;
	return out;
}

bool alloc_constraint_add(struct aconstraint *c, const struct alloc_ctx *ctx, uint32_t dev)
{
	struct aval v = alloc_dev_attr(ctx, dev, c->domain, c->id);
	uint64_t mask;

	if (v.kind == AVAL_NONE || set_size(&v) == 0 || c->count >= c->cap_vals)
		return false;   /* (the last: more devices than a claim may have) */
	if (!c->distinct) {
		if (c->count == 0) {
			size_t n = set_size(&v);

			c->vals[0] = v;
			mask = n >= ALLOC_MATCH_MAX_VALUES ? UINT64_MAX : (UINT64_C(1) << n) - 1;
		} else {
			mask = intersect(c, c->masks[c->count - 1], &v);
			if (!mask)
				return false;
		}
		c->masks[c->count++] = mask;
		return true;
	}
	for (uint32_t i = 0; i < c->count; i++)
		if (sets_intersect(&c->vals[i], &v))
			return false;
	c->vals[c->count++] = v;
	return true;
}

void alloc_constraint_remove(struct aconstraint *c)
{
	if (c->count)
		c->count--;
}
