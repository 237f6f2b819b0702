/* alloc_constraint.c - a claim's constraints during the search.
 *
 * matchAttribute: every device of the requests it names has the
 * attribute, with the same type and value (versions compare as their
 * text, as the scheduler does). distinctAttribute: every device has it,
 * and no two share a value. Both are monotonic, which the search relies
 * on: once adding a device fails, adding more cannot help.
 *
 * Attribute lookup: the fully qualified name "domain/id" matches an
 * attribute written as "domain/id", or as bare "id" when domain is the
 * device's driver (the model splits bare names into the driver's domain,
 * so both are one comparison). A device lacking a node-uniform attribute
 * has the node's single unknown value (AVAL_UNIFORM). */
#include <stdlib.h>
#include <string.h>

#include "alloc_internal.h"

struct aval alloc_dev_attr(const struct alloc_ctx *ctx, uint32_t dev, const char *domain,
			   const char *id)
{
	const struct adev *d = &ctx->devs[dev];
	struct aval v = { AVAL_NONE, 0, NULL, 0 };

	for (size_t i = 0; i < d->dev->n_attributes; i++) {
		const struct model_attribute *a = &d->dev->attributes[i];

		if (!a->domain || !a->id || strcmp(a->id, id) || strcmp(a->domain, domain))
			continue;
		switch (a->type) {
		case CEL_ATTR_INT:
			v.kind = AVAL_INT;
			v.i = a->v.i;
			break;
		case CEL_ATTR_BOOL:
			v.kind = AVAL_BOOL;
			v.i = a->v.b;
			break;
		case CEL_ATTR_STRING:
		case CEL_ATTR_VERSION:
			v.kind = a->type == CEL_ATTR_STRING ? AVAL_STRING : AVAL_VERSION;
			v.s = a->v.str.s ? a->v.str.s : "";
			v.len = a->v.str.s ? a->v.str.len : 0;
			break;
		}
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

bool alloc_aval_equal(const struct aval *a, const struct aval *b)
{
	if (a->kind != b->kind)
		return false;
	switch (a->kind) {
	case AVAL_INT:
	case AVAL_BOOL:
		return a->i == b->i;
	case AVAL_STRING:
	case AVAL_VERSION:
		return a->len == b->len && !memcmp(a->s, b->s, a->len);
	case AVAL_UNIFORM:
		return true;    /* one node, one value */
	default:
		return false;
	}
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

bool alloc_constraint_add(struct aconstraint *c, const struct alloc_ctx *ctx, uint32_t dev)
{
	struct aval v = alloc_dev_attr(ctx, dev, c->domain, c->id);

	if (v.kind == AVAL_NONE)
		return false;
	if (!c->distinct) {
		if (c->count && !alloc_aval_equal(&c->vals[0], &v))
			return false;
		if (!c->count)
			c->vals[0] = v;
		c->count++;
		return true;
	}
	for (uint32_t i = 0; i < c->count; i++)
		if (alloc_aval_equal(&c->vals[i], &v))
			return false;
	if (c->count >= c->cap_vals)
		return false;   /* more devices than a claim may have */
	c->vals[c->count++] = v;
	return true;
}

void alloc_constraint_remove(struct aconstraint *c)
{
	if (c->count)
		c->count--;
}
