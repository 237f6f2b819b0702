/* plan_extres.c - extended resources backed by DRA (DRAExtendedResource,
 * KEP-5004), as kube-scheduler handles them: a container that requests an
 * extended resource named by a DeviceClass's spec.extendedResourceName, or
 * the implicit name deviceclass.resource.kubernetes.io/<class> of any
 * class, gets its devices through a ResourceClaim the scheduler makes for
 * the pod: one request per (container, resource), exactly that class,
 * allocationMode ExactCount, count the requested quantity.
 *
 * A resource no class backs (nvidia.com/gpu without such a class) stays a
 * device-plugin resource: the node's to serve, which dratopo counts only
 * where a NodeOverlay gives nodes capacity of it (plan_overlay.c). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "plan_internal.h"
#include "timestamp.h"

#define IMPLICIT_PREFIX         "deviceclass.resource.kubernetes.io/"
#define ANNOTATION_EXT_CLAIM    "resource.kubernetes.io/extended-resource-claim"
#define MAX_EXT_REQUESTS        32      /* a claim's requests */

static bool is_extended(const char *r)
{
	return strcmp(r, "cpu") && strcmp(r, "memory") && strcmp(r, "ephemeral-storage") &&
	       strncmp(r, "hugepages-", 10);
}

/* A class's creation time in seconds; one without (a manifest that was
 * never applied) counts as the newest: applying it makes it so. */
static int64_t created(const struct model_object *o)
{
	const char *ts = o->meta.creation_timestamp;
	struct timestamp t;

	if (!ts || timestamp_parse(ts, strlen(ts), &t, NULL))
		return INT64_MAX;
	return timestamp_unix(&t);
}

/* Whether class a wins over b for one extendedResourceName: the API's
 * rule (DeviceClassSpec.extendedResourceName) is the class created
 * later, and of two created at once the name that sorts first. */
static bool preferred(const struct model_object *a, const struct model_object *b)
{
	int64_t ta = created(a), tb = created(b);

	return ta != tb ? ta > tb : strcmp(a->meta.name, b->meta.name) < 0;
}

const struct model_object *plan_extres_class(const struct model_set *set, const char *name)
{
	size_t lp = strlen(IMPLICIT_PREFIX);
	bool implicit = !strncmp(name, IMPLICIT_PREFIX, lp);
	const struct model_object *o, *best = NULL;

	/* A walk, not model_set_find: claims are added to the set between
	 * calls, and every addition would rebuild its lookup index. */
	for (o = NULL; (o = model_set_next(set, MODEL_DEVICE_CLASS, o));) {
		const char *ern = o->u.device_class.extended_resource_name;

		if (implicit && !strcmp(o->meta.name, name + lp))
			return o;
		if (!implicit && ern && !strcmp(ern, name) && (!best || preferred(o, best)))
			best = o;       /* QA-97 */
	}
	return best;
}

bool plan_extres_backed(const struct model_set *set, const char *name)
{
	return plan_extres_class(set, name) != NULL;
}

/* One extended resource of one container: its quantity is the request, or
 * the limit where no request is given (the API server defaults one from
 * the other; they must be equal). */
struct ext_item {
	const char *name;
	const struct quantity *value;
	size_t container;               /* index over containers, then init containers */
};

/* The extended resources with a non-zero quantity, in container order,
 * into items[0..cap); returns how many there are. */
static size_t ext_items(const struct model_pod_spec *spec, struct ext_item *items, size_t cap)
{
	size_t n = 0, ci = 0;

	for (int init = 0; init < 2; init++) {
		const struct model_container *cs = init ? spec->init_containers : spec->containers;
		size_t nc = init ? spec->n_init_containers : spec->n_containers;

		for (size_t i = 0; i < nc; i++, ci++) {
			const struct model_resource_list *l[2] = { &cs[i].requests, &cs[i].limits };

			for (int k = 0; k < 2; k++)
				for (size_t j = 0; j < l[k]->n_items; j++) {
					const struct model_quantity_entry *e = &l[k]->items[j];
					bool dup = false;

					if (!is_extended(e->name) || quantity_is_zero(&e->value))
						continue;
					for (size_t d = 0; k && d < l[0]->n_items && !dup; d++)
						dup = !strcmp(l[0]->items[d].name, e->name);
					if (dup)
						continue;
					if (n < cap)
						items[n] = (struct ext_item){ e->name, &e->value, ci };
					n++;
				}
		}
	}
	return n;
}

static bool in_names(const char *name, const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return true;
	return false;
}

int plan_extres_scan(const struct model_set *set, const struct model_pod_spec *spec,
		     const char *const *node_res, size_t n_node_res, bool *backed,
		     const char **problem_resource, const char **why)
{
	struct ext_item items[MAX_EXT_REQUESTS + 1];
	size_t n = ext_items(spec, items, MAX_EXT_REQUESTS + 1);

	*backed = false;
	*problem_resource = *why = NULL;
	if (n > MAX_EXT_REQUESTS) {
		*problem_resource = items[0].name;
		*why = "more extended resources than the 32 requests of one ResourceClaim";
		return -EINVAL;
	}
	for (size_t i = 0; i < n; i++) {
		int64_t count;

		if (!plan_extres_class(set, items[i].name)) {
			if (in_names(items[i].name, node_res, n_node_res))
				continue;       /* the node serves it */
			*problem_resource = items[i].name;
			return -ENOENT;
		}
		if (!quantity_is_integer(items[i].value) ||
		    quantity_to_int64(items[i].value, &count) || count <= 0) {
			*problem_resource = items[i].name;
			*why = "its quantity must be a positive whole number";
			return -EINVAL;
		}
		*backed = true;
	}
	return 0;
}

/* The claim's name as the scheduler makes it: "<pod>-extended-resources-"
 * and a 5-character suffix, the pod's name cut to fit 63 characters. */
static const char *claim_name(struct model_set *set, const struct plan_pod *p)
{
	static const char mid[] = "-extended-resources-";
	char name[64], suffix[6];
	size_t lp = strlen(p->name), max = 63 - (sizeof(mid) - 1) - 5;

	if (lp > max)
		lp = max;
	plan_name_suffix(p->name, "extended-resources", 0, suffix);
	snprintf(name, sizeof(name), "%.*s%s%s", (int)lp, p->name, mid, suffix);
	return model_set_strdup(set, name);
}

struct model_object *plan_extres_claim(struct model_set *set, const struct plan_pod *p)
{
	struct ext_item items[MAX_EXT_REQUESTS];
	size_t n = ext_items(p->spec, items, MAX_EXT_REQUESTS);
	struct model_object *o = model_set_add(set, MODEL_RESOURCE_CLAIM);
	struct model_claim_spec *cs;

	if (!o || n > MAX_EXT_REQUESTS)
		return NULL;
	o->meta.name = claim_name(set, p);
	o->meta.ns = p->ns;
	o->meta.annotations = model_set_calloc(set, 1, sizeof(*o->meta.annotations));
	cs = &o->u.claim.spec;
	cs->requests = model_set_calloc(set, n, sizeof(*cs->requests));
	if (!o->meta.name || !o->meta.annotations || !cs->requests)
		return NULL;
	o->meta.annotations[0].key = ANNOTATION_EXT_CLAIM;
	o->meta.annotations[0].value = "true";
	o->meta.n_annotations = 1;
	for (size_t i = 0; i < n; i++) {
		const struct model_object *cls = plan_extres_class(set, items[i].name);
		struct model_device_request *r = &cs->requests[cs->n_requests];
		size_t same = 0;
		char rname[64];

		/* plan_extres_scan said every one without a class is a node's. */
		if (!cls)
			continue;
		/* container-<c>-request-<k>: the k-th DRA resource of container c */
		for (size_t j = 0; j < i; j++)
			same += items[j].container == items[i].container &&
				plan_extres_class(set, items[j].name);
		snprintf(rname, sizeof(rname), "container-%zu-request-%zu", items[i].container, same);
		r->name = model_set_strdup(set, rname);
		r->exactly = model_set_calloc(set, 1, sizeof(*r->exactly));
		if (!r->name || !r->exactly)
			return NULL;
		r->exactly->device_class_name = cls->meta.name;
		r->exactly->allocation_mode_text = "ExactCount";
		r->exactly->allocation_mode = MODEL_ALLOC_EXACT_COUNT;
		r->exactly->has_count = true;
		if (quantity_to_int64(items[i].value, &r->exactly->count))
			return NULL;
		cs->n_requests++;
	}
	o->src = p->obj ? p->obj->src : o->src;
	if (model_object_default(set, o))
		return NULL;
	return o;
}
