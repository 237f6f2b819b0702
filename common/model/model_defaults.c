/* model_defaults.c - the defaults the API server applies before it
 * validates and stores an object (pkg/apis/resource/v1/defaults.go,
 * core/v1 and apps/v1 defaults, Karpenter's CRD defaults), so that every
 * later stage sees objects the way the cluster would hold them.
 *
 * An object with only metadata.generateName is named here as the API
 * server names it before validation (model_set_generate_name).
 *
 * Left out on purpose: values that are not facts of the manifest
 * (taint timeAdded "now", uids). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "model_internal.h"

static enum model_allocation_mode parse_mode(const char *s)
{
	if (!strcmp(s, "ExactCount"))
		return MODEL_ALLOC_EXACT_COUNT;
	if (!strcmp(s, "All"))
		return MODEL_ALLOC_ALL;
	return MODEL_ALLOC_INVALID;
}

/* SetDefaults_ExactDeviceRequest / SetDefaults_DeviceSubRequest. */
static void default_request(struct model_exact_request *r)
{
	if (!r->allocation_mode_text || !r->allocation_mode_text[0])
		r->allocation_mode_text = "ExactCount";
	r->allocation_mode = parse_mode(r->allocation_mode_text);
	if (r->allocation_mode == MODEL_ALLOC_EXACT_COUNT && (!r->has_count || r->count == 0)) {
		r->has_count = true;
		r->count = 1;
	}
	/* DeviceToleration: operator defaults to Equal. */
	for (size_t i = 0; i < r->n_tolerations; i++)
		if (!r->tolerations[i].operator_text || !r->tolerations[i].operator_text[0])
			r->tolerations[i].operator_text = "Equal";
}

static void default_claim_spec(struct model_claim_spec *c)
{
	for (size_t i = 0; i < c->n_requests; i++) {
		struct model_device_request *r = &c->requests[i];

		if (r->exactly)
			default_request(r->exactly);
		for (size_t j = 0; j < r->n_first_available; j++)
			default_request(&r->first_available[j].req);
	}
}

/* SetDefaults_Pod: a container that gives limits but no request for a
 * resource requests its limit (how GPUs are usually asked for). */
static int default_container(struct model_set *s, struct model_container *c)
{
	struct model_name_index have;
	struct model_quantity_entry *items;
	size_t missing = 0, n;
	int rc = -ENOMEM;

	if (!c->limits.n_items)
		return 0;
	if (model_name_index_build(&have, c->requests.items, c->requests.n_items,
				   sizeof(*c->requests.items),
				   offsetof(struct model_quantity_entry, name)))
		return -ENOMEM;
	for (size_t i = 0; i < c->limits.n_items; i++)
		missing += model_name_index_find(&have, c->limits.items[i].name) == SIZE_MAX;
	rc = 0;
	if (!missing)
		goto out;
	rc = -ENOMEM;
	items = model_set_calloc(s, c->requests.n_items + missing, sizeof(*items));
	if (!items)
		goto out;
	if (c->requests.n_items)
		memcpy(items, c->requests.items, c->requests.n_items * sizeof(*items));
	n = c->requests.n_items;
	for (size_t i = 0; i < c->limits.n_items; i++)
		if (model_name_index_find(&have, c->limits.items[i].name) == SIZE_MAX)
			items[n++] = c->limits.items[i];
	c->requests.items = items;
	c->requests.n_items = n;
	rc = 0;
out:
	model_name_index_free(&have);
	return rc;
}

static int default_pod_spec(struct model_set *s, struct model_pod_spec *p)
{
	for (size_t i = 0; i < p->n_containers; i++)
		if (default_container(s, &p->containers[i]))
			return -ENOMEM;
	for (size_t i = 0; i < p->n_init_containers; i++)
		if (default_container(s, &p->init_containers[i]))
			return -ENOMEM;
	if (!p->scheduler_name)
		p->scheduler_name = "default-scheduler";
	if (!p->restart_policy || !*p->restart_policy)
		p->restart_policy = "Always";
	return 0;
}

int model_object_default(struct model_set *s, struct model_object *o)
{
	struct model_workload *w = &o->u.workload;

	if (model_kind_namespaced(o->kind) && (!o->meta.ns || !o->meta.ns[0]))
		o->meta.ns = "default";
	if (model_empty(o->meta.name) && !model_empty(o->meta.generate_name) &&
	    model_set_generate_name(s, o))
		return -ENOMEM;
	switch (o->kind) {
	case MODEL_RESOURCE_CLAIM:
		default_claim_spec(&o->u.claim.spec);
		break;
	case MODEL_RESOURCE_CLAIM_TEMPLATE:
		default_claim_spec(&o->u.claim_template.spec);
		break;
	case MODEL_POD:
		return default_pod_spec(s, &o->u.pod.spec);
	case MODEL_DEPLOYMENT:
	case MODEL_REPLICA_SET:
	case MODEL_STATEFUL_SET:
		if (!w->has_replicas) {
			w->has_replicas = true;
			w->replicas = 1;
		}
		/* The pods made from the template are defaulted as Pods are. */
		return default_pod_spec(s, &w->template_.spec);
	case MODEL_DAEMON_SET:
		return default_pod_spec(s, &w->template_.spec);
	case MODEL_JOB:
		/* SetDefaults_Job: both unset is a single-pod job. */
		if (!w->has_completions && !w->has_parallelism) {
			w->has_completions = true;
			w->completions = 1;
		}
		if (!w->has_parallelism) {
			w->has_parallelism = true;
			w->parallelism = 1;
		}
		return default_pod_spec(s, &w->template_.spec);
	case MODEL_NODE_POOL:
		/* karpenter.sh/v1 CRD default. */
		if (!o->u.node_pool.expire_after)
			o->u.node_pool.expire_after = "720h";
		break;
	default:
		break;
	}
	return 0;
}
