/* plan_overlay.c - Karpenter NodeOverlays as the planner applies them to
 * its launch candidates: which overlays select an offering (by its
 * labels), the price the deciding one sets or adjusts, and the extended
 * resources they give its nodes.
 *
 * Karpenter orders overlays by weight (highest first; absent is 0) and,
 * among equal weights, by name, the one later in the alphabet first; for
 * each offering the first overlay with a price field decides its price,
 * and each resource of spec.capacity comes from the first overlay giving
 * it. Two overlays of one weight that both price an offering, or both
 * give one resource to a node of one type, are a conflict: Karpenter
 * marks the second one (ValidationSucceeded False, reason Conflict) and
 * ignores all of it, on every offering; plan_overlays_resolve does the
 * same before anything is priced. An adjustment never takes a price
 * below 0. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan_internal.h"

static int64_t weight_of(const struct model_object *o)
{
	return o->u.node_overlay.has_weight ? o->u.node_overlay.weight : 0;
}

static int cmp_precedence(const void *pa, const void *pb)
{
	const struct model_object *a = *(const struct model_object *const *)pa;
	const struct model_object *b = *(const struct model_object *const *)pb;
	int64_t wa = weight_of(a), wb = weight_of(b);

	if (wa != wb)
		return wa > wb ? -1 : 1;
	return -strcmp(a->meta.name ? a->meta.name : "", b->meta.name ? b->meta.name : "");
}

int plan_overlays_init(struct plan_overlays *ov, const struct model_set *set)
{
	size_t n = model_set_count(set, MODEL_NODE_OVERLAY);
	const struct model_object *o = NULL;

	ov->v = NULL;
	ov->n = 0;
	if (!n)
		return 0;
	if (!(ov->v = malloc(n * sizeof(*ov->v))))
		return -ENOMEM;
	while ((o = model_set_next(set, MODEL_NODE_OVERLAY, o)) && ov->n < n)
		ov->v[ov->n++] = o;
	qsort(ov->v, ov->n, sizeof(*ov->v), cmp_precedence);
	return 0;
}

void plan_overlays_free(struct plan_overlays *ov)
{
	free(ov->v);
	ov->v = NULL;
	ov->n = 0;
}

/* Whether the overlay's requirements select a node with these labels, as
 * Karpenter checks them against the offering's requirements: a key the
 * labels do not set is absent, except the well-known keys a new node
 * gets at launch (the zone), which take any value. */
static bool selects(const struct model_node_overlay *o, const struct model_kv *labels, size_t n)
{
	struct plan_node_spec node = { .labels = labels, .n_labels = n, .hypothetical = true };

	for (size_t i = 0; i < o->n_requirements; i++)
		if (!plan_req_compatible(&node, &o->requirements[i]))
			return false;
	return true;
}

/* ---- conflicts ---- */

static bool sets_price(const struct model_node_overlay *o)
{
	return o->price || o->price_adjustment;
}

/* A resource both overlays give, or NULL. */
static const char *shared_resource(const struct model_node_overlay *a,
				   const struct model_node_overlay *b)
{
	for (size_t i = 0; i < a->capacity.n_items; i++)
		for (size_t k = 0; k < b->capacity.n_items; k++)
			if (!strcmp(a->capacity.items[i].name, b->capacity.items[k].name))
				return a->capacity.items[i].name;
	return NULL;
}

/* What a and b (of one weight) both change on offering f, or NULL. */
static const char *clash(const struct model_object *a, const struct model_object *b,
			 const struct plan_offering *f, char *buf, size_t sz)
{
	const struct model_node_overlay *x = &a->u.node_overlay, *y = &b->u.node_overlay;
	const char *res;

	if (!selects(x, f->labels, f->n_labels) || !selects(y, f->labels, f->n_labels))
		return NULL;
	if (sets_price(x) && sets_price(y)) {
		snprintf(buf, sz, "the price of %s in NodePool %s", f->type, f->pool);
		return buf;
	}
	if ((res = shared_resource(x, y))) {
		snprintf(buf, sz, "the %s capacity of %s in NodePool %s", res, f->type, f->pool);
		return buf;
	}
	return NULL;
}

/* The first overlay kept before i that clashes with v[i] on some offering;
 * what they both change goes to buf. */
static const struct model_object *first_clash(const struct plan_overlays *ov, size_t i,
					      const bool *dropped, const struct plan_offering *offs,
					      size_t n_offs, char *buf, size_t sz)
{
	for (size_t j = 0; j < i; j++) {
		if (dropped[j] || weight_of(ov->v[j]) != weight_of(ov->v[i]))
			continue;
		for (size_t f = 0; f < n_offs; f++)
			if (clash(ov->v[j], ov->v[i], &offs[f], buf, sz))
				return ov->v[j];
	}
	return NULL;
}

int plan_overlays_resolve(struct plan_overlays *ov, const struct plan_offering *offs,
			  size_t n_offs, struct dt_diags *warnings)
{
	bool *dropped = calloc(ov->n + 1, sizeof(*dropped));
	const struct model_object *other;
	char what[256];
	size_t kept = 0;

	if (!dropped)
		return -ENOMEM;
	/* In precedence order: whether an overlay is kept depends only on
	 * those kept before it, as in Karpenter's validation pass. */
	for (size_t i = 0; i < ov->n; i++) {
		if (!(other = first_clash(ov, i, dropped, offs, n_offs, what, sizeof(what))))
			continue;
		dropped[i] = true;
		if (dt_diags_add(warnings, "NodeOverlay %s: conflicts with NodeOverlay %s (both of "
				 "weight %lld set %s): Karpenter ignores %s (ValidationSucceeded "
				 "False, reason Conflict), and so does this plan",
				 ov->v[i]->meta.name, other->meta.name,
				 (long long)weight_of(ov->v[i]), what, ov->v[i]->meta.name) < 0) {
			free(dropped);
			return -ENOMEM;
		}
	}
	for (size_t i = 0; i < ov->n; i++)
		if (!dropped[i])
			ov->v[kept++] = ov->v[i];
	ov->n = kept;
	free(dropped);
	return 0;
}

static void no_offering(const char *ct, char *why, size_t whysz)
{
	if (!strcmp(ct, "on-demand"))
		snprintf(why, whysz, "no on-demand offering");
	else
		snprintf(why, whysz, "no %s offering (hwdb has on-demand prices only)", ct);
}

bool plan_overlay_price(const struct plan_overlays *ov, const struct model_kv *labels, size_t n,
			const char *capacity_type, const double *base, struct plan_price *out,
			char *why, size_t whysz)
{
	const struct model_object *dec = NULL;
	const struct model_node_overlay *o;
	double amount;
	bool percent;

	for (size_t i = 0; i < ov->n && !dec; i++) {
		o = &ov->v[i]->u.node_overlay;
		if ((o->price || o->price_adjustment) && selects(o, labels, n))
			dec = ov->v[i];
	}
	out->overlay = NULL;
	if (!dec) {
		if (base)
			out->value = *base;
		else
			no_offering(capacity_type, why, whysz);
		return base != NULL;
	}
	o = &dec->u.node_overlay;
	out->overlay = dec->meta.name;
	if (o->price) {
		if (model_overlay_parse_price(o->price, &out->value)) {
			snprintf(why, whysz, "NodeOverlay %s: spec.price \"%s\" is not a price",
				 dec->meta.name, o->price);
			return false;
		}
		return true;
	}
	if (model_overlay_parse_adjustment(o->price_adjustment, &amount, &percent)) {
		snprintf(why, whysz, "NodeOverlay %s: spec.priceAdjustment \"%s\" is not an adjustment",
			 dec->meta.name, o->price_adjustment);
		return false;
	}
	if (!base) {
		/* Karpenter adjusts offerings the cloud prices; an adjustment
		 * makes none. */
		no_offering(capacity_type, why, whysz);
		size_t len = strlen(why);

		snprintf(why + len, whysz - len, ": NodeOverlay %s adjusts the price (%s) but there "
			 "is none to adjust; spec.price would set one", dec->meta.name,
			 o->price_adjustment);
		return false;
	}
	out->value = percent ? *base * (1.0 + amount / 100.0) : *base + amount;
	if (out->value < 0)
		out->value = 0;
	return true;
}

/* A count of an extended resource: whole, clamped to what plan_res holds. */
static int64_t count_of(const struct quantity *q)
{
	int64_t v = quantity_value_ceil(q);

	return v < 0 ? 0 : v > PLAN_RES_MAX ? PLAN_RES_MAX : v;
}

void plan_overlay_capacity(const struct plan_overlays *ov, const struct model_kv *labels,
			   size_t n, const char *const *names, size_t n_names, int64_t *ext)
{
	bool given[PLAN_MAX_NODE_EXT] = { false };

	if (n_names > PLAN_MAX_NODE_EXT)
		n_names = PLAN_MAX_NODE_EXT;
	memset(ext, 0, n_names * sizeof(*ext));
	for (size_t i = 0; i < ov->n; i++) {
		const struct model_node_overlay *o = &ov->v[i]->u.node_overlay;

		if (!o->capacity.n_items || !selects(o, labels, n))
			continue;
		for (size_t k = 0; k < o->capacity.n_items; k++)
			for (size_t r = 0; r < n_names; r++)
				if (!given[r] && !strcmp(names[r], o->capacity.items[k].name)) {
					ext[r] = count_of(&o->capacity.items[k].value);
					given[r] = true;
				}
	}
}

size_t plan_overlay_ext_names(const struct model_set *set, const char **names, size_t max)
{
	const struct model_object *o = NULL;
	size_t n = 0;

	while ((o = model_set_next(set, MODEL_NODE_OVERLAY, o))) {
		const struct model_resource_list *c = &o->u.node_overlay.capacity;

		for (size_t k = 0; k < c->n_items; k++) {
			const char *name = c->items[k].name;
			bool seen = false;

			/* Extended resources have a domain; hugepages-* and the
			 * rest are a node's own (and cpu, memory, pods are
			 * refused by validation). */
			if (!name || !strchr(name, '/'))
				continue;
			for (size_t i = 0; i < n && !seen; i++)
				seen = !strcmp(names[i], name);
			if (!seen && n < max)
				names[n++] = name;
		}
	}
	return n;
}
