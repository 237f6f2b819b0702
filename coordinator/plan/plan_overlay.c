/* plan_overlay.c - Karpenter NodeOverlays as the planner applies them to
 * its launch candidates: which overlays select an offering (by its
 * labels), the price the deciding one sets or adjusts, and the extended
 * resources they give its nodes.
 *
 * Karpenter orders overlays by weight (highest first; absent is 0) and,
 * among equal weights, by name, the one later in the alphabet first; for
 * each offering the first overlay with a price field decides its price,
 * and each resource of spec.capacity comes from the first overlay giving
 * it. (Two overlays of one weight that both price an offering, or both
 * give one resource, are a conflict Karpenter reports on the second one,
 * which it then ignores; here the first one decides that offering, the
 * same result there.) An adjustment never takes a price below 0. */
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
