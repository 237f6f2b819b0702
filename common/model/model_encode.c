/* model_encode.c - objects back to document trees, in the form kubectl
 * prints them: apiVersion, kind, metadata, spec, status in that order,
 * fields in the API's order, defaults included, quantities canonical, and
 * optional fields that are empty left out (the API's omitempty).
 *
 * The trees are built in the caller's doc_arena; doc_emit_yaml and
 * doc_emit_json print them. */
#include <stdint.h>
#include <stdlib.h>

#include "model_internal.h"

struct enc {
	struct doc_arena *a;
	bool oom;
};

/* ---- Building blocks: each tolerates an earlier OOM ---- */

static struct doc_node *new_map(struct enc *e)
{
	struct doc_node *m = doc_new_map(e->a);

	if (!m)
		e->oom = true;
	return m;
}

static struct doc_node *new_seq(struct enc *e)
{
	struct doc_node *s = doc_new_seq(e->a);

	if (!s)
		e->oom = true;
	return s;
}

static void put(struct enc *e, struct doc_node *map, const char *key, struct doc_node *v)
{
	if (!map || !v || doc_map_set(e->a, map, key, v))
		e->oom = true;
}

static void push(struct enc *e, struct doc_node *seq, struct doc_node *v)
{
	if (!seq || !v || doc_seq_push(e->a, seq, v))
		e->oom = true;
}

/* Put only when the map or list received something. */
static void put_nonempty(struct enc *e, struct doc_node *map, const char *key,
			 struct doc_node *v)
{
	if (!v)
		return;
	if ((v->kind == DOC_MAP && v->u.map.n == 0) || (v->kind == DOC_SEQ && v->u.seq.n == 0))
		return;
	put(e, map, key, v);
}

static void put_str(struct enc *e, struct doc_node *map, const char *key, const char *s)
{
	if (s && s[0])
		put(e, map, key, doc_new_string(e->a, s));
}

static void put_int(struct enc *e, struct doc_node *map, const char *key, int64_t i)
{
	put(e, map, key, doc_new_int(e->a, i));
}

static void put_bool(struct enc *e, struct doc_node *map, const char *key, bool b)
{
	put(e, map, key, doc_new_bool(e->a, b));
}

static struct doc_node *quantity_node(struct enc *e, const struct quantity *q)
{
	char buf[QUANTITY_STR_MAX];

	quantity_format(q, buf);
	return doc_new_string(e->a, buf);
}

static void put_quantity(struct enc *e, struct doc_node *map, const char *key,
			 const struct quantity *q)
{
	put(e, map, key, quantity_node(e, q));
}

static void put_str_list(struct enc *e, struct doc_node *map, const char *key,
			 const char *const *items, size_t n)
{
	struct doc_node *seq;

	if (!n)
		return;
	seq = new_seq(e);
	for (size_t i = 0; i < n; i++)
		push(e, seq, doc_new_string(e->a, items[i] ? items[i] : ""));
	put(e, map, key, seq);
}

static void put_kv(struct enc *e, struct doc_node *map, const char *key,
		   const struct model_kv *kv, size_t n)
{
	struct doc_node *m;

	if (!n)
		return;
	m = new_map(e);
	for (size_t i = 0; i < n; i++)
		put(e, m, kv[i].key, doc_new_string(e->a, kv[i].value ? kv[i].value : ""));
	put(e, map, key, m);
}

static void put_resources(struct enc *e, struct doc_node *map, const char *key,
			  const struct model_resource_list *l)
{
	struct doc_node *m;

	if (!l->n_items)
		return;
	m = new_map(e);
	for (size_t i = 0; i < l->n_items; i++)
		put(e, m, l->items[i].name, quantity_node(e, &l->items[i].value));
	put(e, map, key, m);
}

static void put_clone(struct enc *e, struct doc_node *map, const char *key,
		      const struct doc_node *n)
{
	if (n)
		put(e, map, key, doc_clone(e->a, n));
}

/* Encodes one element of an array (a const struct model_... *). */
typedef struct doc_node *(*enc_item_fn)(struct enc *e, const void *item);

/* The n items of an array, each encoded by one, as the list under key;
 * nothing when there are none. Use PUT_LIST, which passes the item size. */
static void put_list(struct enc *e, struct doc_node *map, const char *key, const void *items,
		     size_t n, size_t size, enc_item_fn one)
{
	struct doc_node *seq;

	if (!n)
		return;
	seq = new_seq(e);
	for (size_t i = 0; i < n; i++)
		push(e, seq, one(e, (const char *)items + i * size));
	put(e, map, key, seq);
}

#define PUT_LIST(e, map, key, items, n, one) \
	put_list((e), (map), (key), (items), (n), sizeof(*(items)), (one))

/* ---- Shared pieces ---- */

static struct doc_node *enc_owner_ref(struct enc *e, const void *item)
{
	const struct model_owner_ref *r = item;
	struct doc_node *o = new_map(e);

	put_str(e, o, "apiVersion", r->api_version);
	if (r->has_block_owner_deletion)
		put_bool(e, o, "blockOwnerDeletion", r->block_owner_deletion);
	if (r->has_controller)
		put_bool(e, o, "controller", r->controller);
	put_str(e, o, "kind", r->kind);
	put_str(e, o, "name", r->name);
	put_str(e, o, "uid", r->uid);
	return o;
}

static struct doc_node *enc_meta(struct enc *e, const struct model_meta *m, bool namespaced)
{
	struct doc_node *md = new_map(e);

	put_kv(e, md, "annotations", m->annotations, m->n_annotations);
	put_str(e, md, "creationTimestamp", m->creation_timestamp);
	put_str(e, md, "deletionTimestamp", m->deletion_timestamp);
	put_str(e, md, "generateName", m->generate_name);
	put_kv(e, md, "labels", m->labels, m->n_labels);
	put_str(e, md, "name", m->name);
	if (namespaced)
		put_str(e, md, "namespace", m->ns);
	PUT_LIST(e, md, "ownerReferences", m->owner_refs, m->n_owner_refs, enc_owner_ref);
	put_str(e, md, "resourceVersion", m->resource_version);
	put_str(e, md, "uid", m->uid);
	return md;
}

static struct doc_node *enc_requirement(struct enc *e, const void *item)
{
	const struct model_requirement *r = item;
	struct doc_node *m = new_map(e);

	put_str(e, m, "key", r->key);
	if (r->has_min_values)
		put_int(e, m, "minValues", r->min_values);
	put_str(e, m, "operator", r->operator_text);
	put_str_list(e, m, "values", r->values, r->n_values);
	return m;
}

static struct doc_node *enc_node_selector(struct enc *e, const struct model_node_selector *ns)
{
	struct doc_node *m = new_map(e);
	struct doc_node *terms = new_seq(e);

	for (size_t i = 0; i < ns->n_terms; i++) {
		struct doc_node *t = new_map(e);
		const struct model_node_selector_term *term = &ns->terms[i];

		PUT_LIST(e, t, "matchExpressions", term->match_expressions,
			 term->n_match_expressions, enc_requirement);
		PUT_LIST(e, t, "matchFields", term->match_fields, term->n_match_fields,
			 enc_requirement);
		push(e, terms, t);
	}
	put(e, m, "nodeSelectorTerms", terms);
	return m;
}

static struct doc_node *enc_taint(struct enc *e, const void *item)
{
	const struct model_taint *t = item;
	struct doc_node *m = new_map(e);

	put_str(e, m, "effect", t->effect);
	put_str(e, m, "key", t->key);
	put_str(e, m, "timeAdded", t->time_added);
	put_str(e, m, "value", t->value);
	return m;
}

static struct doc_node *enc_toleration(struct enc *e, const void *item)
{
	const struct model_toleration *t = item;
	struct doc_node *m = new_map(e);

	put_str(e, m, "effect", t->effect);
	put_str(e, m, "key", t->key);
	put_str(e, m, "operator", t->operator_text);
	if (t->has_toleration_seconds)
		put_int(e, m, "tolerationSeconds", t->toleration_seconds);
	put_str(e, m, "value", t->value);
	return m;
}

/* ---- resource.k8s.io/v1 ---- */

static struct doc_node *enc_selector(struct enc *e, const void *item)
{
	const struct model_selector *s = item;
	struct doc_node *m = new_map(e);

	if (s->expression) {
		struct doc_node *cel = new_map(e);

		put(e, cel, "expression", doc_new_string(e->a, s->expression));
		put(e, m, "cel", cel);
	}
	return m;
}

static struct doc_node *enc_config(struct enc *e, const void *item)
{
	const struct model_device_config *c = item;
	struct doc_node *m = new_map(e);

	if (c->has_opaque) {
		struct doc_node *op = new_map(e);

		put_str(e, op, "driver", c->driver);
		put_clone(e, op, "parameters", c->parameters);
		put(e, m, "opaque", op);
	}
	put_str_list(e, m, "requests", c->requests, c->n_requests);
	put_str(e, m, "source", c->source);
	return m;
}

static struct doc_node *enc_device_class(struct enc *e, const struct model_device_class_spec *c)
{
	struct doc_node *spec = new_map(e);

	PUT_LIST(e, spec, "config", c->config, c->n_config, enc_config);
	put_str(e, spec, "extendedResourceName", c->extended_resource_name);
	PUT_LIST(e, spec, "selectors", c->selectors, c->n_selectors, enc_selector);
	return spec;
}

/* One value (scalar or list item) of element kind k. */
static struct doc_node *attr_value_node(struct enc *e, enum cel_attr_kind k,
					const union model_attr_scalar *v)
{
	switch (k) {
	case CEL_ATTR_INT:
		return doc_new_int(e->a, v->i);
	case CEL_ATTR_BOOL:
		return doc_new_bool(e->a, v->b);
	default:
		return doc_new_string(e->a, v->str.s ? v->str.s : "");
	}
}

static struct doc_node *enc_attribute(struct enc *e, const struct model_attribute *a)
{
	static const char *const fields[] = { "int", "bool", "string", "version", "ints", "bools",
					      "strings", "versions" };
	struct doc_node *m = new_map(e), *seq;

	if (!cel_attr_is_list(a->type)) {
		put(e, m, fields[a->type], attr_value_node(e, a->type, &a->v));
		return m;
	}
	/* Written even when empty, so that what was read prints back. */
	seq = new_seq(e);
	for (size_t i = 0; seq && i < a->n_items; i++)
		push(e, seq, attr_value_node(e, model_attr_elem_kind(a->type), &a->items[i].v));
	put(e, m, fields[a->type], seq);
	return m;
}

static struct doc_node *enc_capacity(struct enc *e, const struct model_capacity *c)
{
	struct doc_node *m = new_map(e);

	if (c->has_request_policy) {
		const struct model_request_policy *p = &c->request_policy;
		struct doc_node *pol = new_map(e);

		if (p->has_default)
			put_quantity(e, pol, "default", &p->def);
		if (p->has_valid_range) {
			struct doc_node *r = new_map(e);

			if (p->has_max)
				put_quantity(e, r, "max", &p->max);
			if (p->has_min)
				put_quantity(e, r, "min", &p->min);
			if (p->has_step)
				put_quantity(e, r, "step", &p->step);
			put(e, pol, "validRange", r);
		}
		if (p->n_valid_values) {
			struct doc_node *vv = new_seq(e);

			for (size_t i = 0; i < p->n_valid_values; i++)
				push(e, vv, quantity_node(e, &p->valid_values[i]));
			put(e, pol, "validValues", vv);
		}
		put(e, m, "requestPolicy", pol);
	}
	put_quantity(e, m, "value", &c->value);
	return m;
}

/* A counter set, its name under name_field: a device's consumesCounters
 * names its set "counterSet", a slice's sharedCounters "name". */
static struct doc_node *enc_counter_set(struct enc *e, const struct model_counter_set *cs,
					const char *name_field)
{
	struct doc_node *m = new_map(e);
	struct doc_node *counters = new_map(e);

	put_str(e, m, name_field, cs->name);
	for (size_t j = 0; j < cs->n_counters; j++) {
		struct doc_node *c = new_map(e);

		put_quantity(e, c, "value", &cs->counters[j].value);
		put(e, counters, cs->counters[j].name, c);
	}
	put(e, m, "counters", counters);
	return m;
}

static struct doc_node *enc_consumed_counters(struct enc *e, const void *item)
{
	return enc_counter_set(e, item, "counterSet");
}

static struct doc_node *enc_shared_counters(struct enc *e, const void *item)
{
	return enc_counter_set(e, item, "name");
}

static struct doc_node *enc_device(struct enc *e, const void *item)
{
	const struct model_device *d = item;
	struct doc_node *m = new_map(e);

	if (d->has_all_nodes)
		put_bool(e, m, "allNodes", d->all_nodes);
	if (d->has_allow_multiple_allocations)
		put_bool(e, m, "allowMultipleAllocations", d->allow_multiple_allocations);
	if (d->n_attributes) {
		struct doc_node *attrs = new_map(e);

		for (size_t i = 0; i < d->n_attributes; i++)
			put(e, attrs, d->attributes[i].name, enc_attribute(e, &d->attributes[i]));
		put(e, m, "attributes", attrs);
	}
	put_str_list(e, m, "bindingConditions", d->binding_conditions, d->n_binding_conditions);
	put_str_list(e, m, "bindingFailureConditions", d->binding_failure_conditions,
		     d->n_binding_failure_conditions);
	if (d->has_binds_to_node)
		put_bool(e, m, "bindsToNode", d->binds_to_node);
	if (d->n_capacity) {
		struct doc_node *caps = new_map(e);

		for (size_t i = 0; i < d->n_capacity; i++)
			put(e, caps, d->capacity[i].name, enc_capacity(e, &d->capacity[i]));
		put(e, m, "capacity", caps);
	}
	PUT_LIST(e, m, "consumesCounters", d->consumes_counters, d->n_consumes_counters,
		 enc_consumed_counters);
	put_str(e, m, "name", d->name);
	put_str(e, m, "nodeName", d->node_name);
	if (d->node_selector)
		put(e, m, "nodeSelector", enc_node_selector(e, d->node_selector));
	PUT_LIST(e, m, "taints", d->taints, d->n_taints, enc_taint);
	return m;
}

static struct doc_node *enc_slice(struct enc *e, const struct model_resource_slice_spec *s)
{
	struct doc_node *spec = new_map(e);
	struct doc_node *pool = new_map(e);

	if (s->has_all_nodes)
		put_bool(e, spec, "allNodes", s->all_nodes);
	PUT_LIST(e, spec, "devices", s->devices, s->n_devices, enc_device);
	put_str(e, spec, "driver", s->driver);
	put_str(e, spec, "nodeName", s->node_name);
	if (s->node_selector)
		put(e, spec, "nodeSelector", enc_node_selector(e, s->node_selector));
	if (s->has_per_device_node_selection)
		put_bool(e, spec, "perDeviceNodeSelection", s->per_device_node_selection);
	put_int(e, pool, "generation", s->pool.generation);
	put_str(e, pool, "name", s->pool.name);
	put_int(e, pool, "resourceSliceCount", s->pool.resource_slice_count);
	put(e, spec, "pool", pool);
	PUT_LIST(e, spec, "sharedCounters", s->shared_counters, s->n_shared_counters,
		 enc_shared_counters);
	return spec;
}

/* The fields of an exact request or subrequest; name (subrequests only,
 * NULL otherwise) goes where kubectl's key order puts it. */
static void enc_exact_fields(struct enc *e, struct doc_node *m, const struct model_exact_request *r,
			     bool exactly, const char *name)
{
	if (exactly && r->has_admin_access)
		put_bool(e, m, "adminAccess", r->admin_access);
	put_str(e, m, "allocationMode", r->allocation_mode_text);
	if (r->capacity_requests.n_items) {
		struct doc_node *cap = new_map(e);

		put_resources(e, cap, "requests", &r->capacity_requests);
		put(e, m, "capacity", cap);
	}
	if (r->has_count)
		put_int(e, m, "count", r->count);
	put_str(e, m, "deviceClassName", r->device_class_name);
	put_str(e, m, "name", name);
	PUT_LIST(e, m, "selectors", r->selectors, r->n_selectors, enc_selector);
	PUT_LIST(e, m, "tolerations", r->tolerations, r->n_tolerations, enc_toleration);
}

static struct doc_node *enc_subrequest(struct enc *e, const void *item)
{
	const struct model_subrequest *sr = item;
	struct doc_node *m = new_map(e);

	enc_exact_fields(e, m, &sr->req, false, sr->name);
	return m;
}

static struct doc_node *enc_request(struct enc *e, const void *item)
{
	const struct model_device_request *r = item;
	struct doc_node *m = new_map(e);

	if (r->exactly) {
		struct doc_node *ex = new_map(e);

		enc_exact_fields(e, ex, r->exactly, true, NULL);
		put(e, m, "exactly", ex);
	}
	PUT_LIST(e, m, "firstAvailable", r->first_available, r->n_first_available,
		 enc_subrequest);
	put_str(e, m, "name", r->name);
	return m;
}

static struct doc_node *enc_constraint(struct enc *e, const void *item)
{
	const struct model_constraint *k = item;
	struct doc_node *m = new_map(e);

	put_str(e, m, "distinctAttribute", k->distinct_attribute);
	put_str(e, m, "matchAttribute", k->match_attribute);
	put_str_list(e, m, "requests", k->requests, k->n_requests);
	return m;
}

static struct doc_node *enc_claim_spec(struct enc *e, const struct model_claim_spec *c)
{
	struct doc_node *spec = new_map(e);
	struct doc_node *devices = new_map(e);

	PUT_LIST(e, devices, "config", c->config, c->n_config, enc_config);
	PUT_LIST(e, devices, "constraints", c->constraints, c->n_constraints, enc_constraint);
	PUT_LIST(e, devices, "requests", c->requests, c->n_requests, enc_request);
	put_nonempty(e, spec, "devices", devices);
	return spec;
}

static struct doc_node *enc_result(struct enc *e, const void *item)
{
	const struct model_allocation_result *r = item;
	struct doc_node *m = new_map(e);

	if (r->has_admin_access)
		put_bool(e, m, "adminAccess", r->admin_access);
	put_str_list(e, m, "bindingConditions", r->binding_conditions, r->n_binding_conditions);
	put_str_list(e, m, "bindingFailureConditions", r->binding_failure_conditions,
		     r->n_binding_failure_conditions);
	put_resources(e, m, "consumedCapacity", &r->consumed_capacity);
	put_str(e, m, "device", r->device);
	put_str(e, m, "driver", r->driver);
	put_str(e, m, "pool", r->pool);
	put_str(e, m, "request", r->request);
	put_str(e, m, "shareID", r->share_id);
	PUT_LIST(e, m, "tolerations", r->tolerations, r->n_tolerations, enc_toleration);
	return m;
}

static struct doc_node *enc_allocation(struct enc *e, const struct model_allocation *a)
{
	struct doc_node *m = new_map(e);
	struct doc_node *devices = new_map(e);

	put_str(e, m, "allocationTimestamp", a->allocation_timestamp);
	PUT_LIST(e, devices, "config", a->config, a->n_config, enc_config);
	PUT_LIST(e, devices, "results", a->results, a->n_results, enc_result);
	put_nonempty(e, m, "devices", devices);
	if (a->node_selector)
		put(e, m, "nodeSelector", enc_node_selector(e, a->node_selector));
	return m;
}

static struct doc_node *enc_consumer_ref(struct enc *e, const void *item)
{
	const struct model_consumer_ref *r = item;
	struct doc_node *m = new_map(e);

	put_str(e, m, "apiGroup", r->api_group);
	put_str(e, m, "name", r->name);
	put_str(e, m, "resource", r->resource);
	put_str(e, m, "uid", r->uid);
	return m;
}

static struct doc_node *enc_claim_status(struct enc *e, const struct model_claim_status *s)
{
	struct doc_node *m = new_map(e);

	if (s->allocation)
		put(e, m, "allocation", enc_allocation(e, s->allocation));
	PUT_LIST(e, m, "reservedFor", s->reserved_for, s->n_reserved_for, enc_consumer_ref);
	return m;
}

/* ---- core/v1 and workloads ---- */

static struct doc_node *enc_container_claim(struct enc *e, const void *item)
{
	const struct model_container_claim *c = item;
	struct doc_node *m = new_map(e);

	put_str(e, m, "name", c->name);
	put_str(e, m, "request", c->request);
	return m;
}

static struct doc_node *enc_container(struct enc *e, const void *item)
{
	const struct model_container *c = item;
	struct doc_node *m = new_map(e);
	struct doc_node *res = new_map(e);

	put_str(e, m, "image", c->image);
	put_str(e, m, "name", c->name);
	put_str(e, m, "restartPolicy", c->restart_policy);
	PUT_LIST(e, res, "claims", c->claims, c->n_claims, enc_container_claim);
	put_resources(e, res, "limits", &c->limits);
	put_resources(e, res, "requests", &c->requests);
	put(e, m, "resources", res);
	return m;
}

static struct doc_node *enc_pod_claim(struct enc *e, const void *item)
{
	const struct model_pod_claim *c = item;
	struct doc_node *m = new_map(e);

	put_str(e, m, "name", c->name);
	put_str(e, m, "resourceClaimName", c->resource_claim_name);
	put_str(e, m, "resourceClaimTemplateName", c->resource_claim_template_name);
	return m;
}

static struct doc_node *enc_pod_spec(struct enc *e, const struct model_pod_spec *p)
{
	struct doc_node *spec = new_map(e);

	if (p->required_node_affinity) {
		struct doc_node *aff = new_map(e);
		struct doc_node *na = new_map(e);

		put(e, na, "requiredDuringSchedulingIgnoredDuringExecution",
		    enc_node_selector(e, p->required_node_affinity));
		put(e, aff, "nodeAffinity", na);
		put(e, spec, "affinity", aff);
	}
	PUT_LIST(e, spec, "containers", p->containers, p->n_containers, enc_container);
	PUT_LIST(e, spec, "initContainers", p->init_containers, p->n_init_containers,
		 enc_container);
	put_str(e, spec, "nodeName", p->node_name);
	put_kv(e, spec, "nodeSelector", p->node_selector, p->n_node_selector);
	put_resources(e, spec, "overhead", &p->overhead);
	if (p->pod_requests.n_items || p->pod_limits.n_items) {
		struct doc_node *res = new_map(e);

		put_resources(e, res, "limits", &p->pod_limits);
		put_resources(e, res, "requests", &p->pod_requests);
		put(e, spec, "resources", res);
	}
	if (p->has_priority)
		put_int(e, spec, "priority", p->priority);
	put_str(e, spec, "priorityClassName", p->priority_class_name);
	PUT_LIST(e, spec, "resourceClaims", p->resource_claims, p->n_resource_claims,
		 enc_pod_claim);
	put_str(e, spec, "restartPolicy", p->restart_policy);
	put_str(e, spec, "schedulerName", p->scheduler_name);
	if (p->pod_group_name) {
		struct doc_node *sg = new_map(e);

		put_str(e, sg, "podGroupName", p->pod_group_name);
		put(e, spec, "schedulingGroup", sg);
	}
	PUT_LIST(e, spec, "tolerations", p->tolerations, p->n_tolerations, enc_toleration);
	return spec;
}

static struct doc_node *enc_pod_claim_status(struct enc *e, const void *item)
{
	const struct model_pod_claim_status *c = item;
	struct doc_node *m = new_map(e);

	put_str(e, m, "name", c->name);
	put_str(e, m, "resourceClaimName", c->resource_claim_name);
	return m;
}

static struct doc_node *enc_pod_status(struct enc *e, const struct model_pod_status *s)
{
	struct doc_node *m = new_map(e);

	put_str(e, m, "phase", s->phase);
	PUT_LIST(e, m, "resourceClaimStatuses", s->resource_claim_statuses,
		 s->n_resource_claim_statuses, enc_pod_claim_status);
	return m;
}

static void enc_pod_group(struct enc *e, struct doc_node *root, const struct model_pod_group *g)
{
	struct doc_node *spec = new_map(e), *pol = new_map(e), *status = new_map(e);

	if (g->basic)
		put(e, pol, "basic", new_map(e));
	if (g->gang) {
		struct doc_node *gang = new_map(e);

		if (g->has_min_count)
			put_int(e, gang, "minCount", g->min_count);
		put(e, pol, "gang", gang);
	}
	put_nonempty(e, spec, "schedulingPolicy", pol);
	PUT_LIST(e, spec, "resourceClaims", g->resource_claims, g->n_resource_claims,
		 enc_pod_claim);
	put(e, root, "spec", spec);
	PUT_LIST(e, status, "resourceClaimStatuses", g->resource_claim_statuses,
		 g->n_resource_claim_statuses, enc_pod_claim_status);
	put_nonempty(e, root, "status", status);
}

static struct doc_node *enc_workload(struct enc *e, enum model_kind k,
				     const struct model_workload *w)
{
	struct doc_node *spec = new_map(e);
	struct doc_node *tmpl = new_map(e);

	if (k == MODEL_JOB) {
		if (w->has_completions)
			put_int(e, spec, "completions", w->completions);
		if (w->has_parallelism)
			put_int(e, spec, "parallelism", w->parallelism);
	} else if (w->has_replicas) {
		put_int(e, spec, "replicas", w->replicas);
	}
	if (w->selector) {
		struct doc_node *sel = new_map(e);

		PUT_LIST(e, sel, "matchExpressions", w->selector->match_expressions,
			 w->selector->n_match_expressions, enc_requirement);
		put_kv(e, sel, "matchLabels", w->selector->match_labels,
		       w->selector->n_match_labels);
		put(e, spec, "selector", sel);
	}
	put_nonempty(e, tmpl, "metadata", enc_meta(e, &w->template_.meta, true));
	put(e, tmpl, "spec", enc_pod_spec(e, &w->template_.spec));
	put(e, spec, "template", tmpl);
	return spec;
}

static void enc_node(struct enc *e, struct doc_node *root, const struct model_node *n)
{
	struct doc_node *spec = new_map(e);
	struct doc_node *status = new_map(e);

	put_str(e, spec, "providerID", n->provider_id);
	PUT_LIST(e, spec, "taints", n->taints, n->n_taints, enc_taint);
	if (n->unschedulable)
		put_bool(e, spec, "unschedulable", true);
	put_nonempty(e, root, "spec", spec);
	put_resources(e, status, "allocatable", &n->allocatable);
	put_resources(e, status, "capacity", &n->capacity);
	put_nonempty(e, root, "status", status);
}

/* ---- DeviceTaintRule ---- */

static struct doc_node *enc_condition(struct enc *e, const void *item)
{
	const struct model_condition *c = item;
	struct doc_node *m = new_map(e);

	put_str(e, m, "lastTransitionTime", c->last_transition_time);
	put_str(e, m, "message", c->message);
	if (c->has_observed_generation)
		put_int(e, m, "observedGeneration", c->observed_generation);
	put_str(e, m, "reason", c->reason);
	put_str(e, m, "status", c->status);
	put_str(e, m, "type", c->type);
	return m;
}

static void enc_taint_rule(struct enc *e, struct doc_node *root,
			   const struct model_device_taint_rule *r)
{
	struct doc_node *spec = new_map(e);
	struct doc_node *status = new_map(e);

	/* An empty selector selects every device, an absent one none: the
	 * empty map is printed. */
	if (r->device_selector) {
		struct doc_node *sel = new_map(e);

		put_str(e, sel, "device", r->device_selector->device);
		put_str(e, sel, "driver", r->device_selector->driver);
		put_str(e, sel, "pool", r->device_selector->pool);
		put(e, spec, "deviceSelector", sel);
	}
	put(e, spec, "taint", enc_taint(e, &r->taint));
	put(e, root, "spec", spec);
	PUT_LIST(e, status, "conditions", r->conditions, r->n_conditions, enc_condition);
	put_nonempty(e, root, "status", status);
}

/* ---- Karpenter ---- */

static void put_node_class_ref(struct enc *e, struct doc_node *map,
			       const struct model_node_class_ref *r)
{
	struct doc_node *m;

	if (!r->group && !r->kind && !r->name)
		return;
	m = new_map(e);
	put_str(e, m, "group", r->group);
	put_str(e, m, "kind", r->kind);
	put_str(e, m, "name", r->name);
	put(e, map, "nodeClassRef", m);
}

static struct doc_node *enc_budget(struct enc *e, const void *item)
{
	const struct model_disruption_budget *b = item;
	struct doc_node *m = new_map(e);

	put_str(e, m, "duration", b->duration);
	put_str(e, m, "nodes", b->nodes);
	put_str_list(e, m, "reasons", b->reasons, b->n_reasons);
	put_str(e, m, "schedule", b->schedule);
	return m;
}

static void put_disruption(struct enc *e, struct doc_node *spec, const struct model_node_pool *p)
{
	struct doc_node *m;

	if (!p->has_disruption)
		return;
	m = new_map(e);
	PUT_LIST(e, m, "budgets", p->budgets, p->n_budgets, enc_budget);
	put_str(e, m, "consolidateAfter", p->consolidate_after);
	put_str(e, m, "consolidationPolicy", p->consolidation_policy);
	put(e, spec, "disruption", m);
}

static struct doc_node *enc_node_pool(struct enc *e, const struct model_node_pool *p)
{
	struct doc_node *spec = new_map(e);
	struct doc_node *tmpl = new_map(e);
	struct doc_node *md = new_map(e);
	struct doc_node *ts = new_map(e);

	put_disruption(e, spec, p);
	put_resources(e, spec, "limits", &p->limits);
	put_kv(e, md, "annotations", p->template_annotations, p->n_template_annotations);
	put_kv(e, md, "labels", p->template_labels, p->n_template_labels);
	put_nonempty(e, tmpl, "metadata", md);
	put_str(e, ts, "expireAfter", p->expire_after);
	put_node_class_ref(e, ts, &p->node_class_ref);
	PUT_LIST(e, ts, "requirements", p->requirements, p->n_requirements, enc_requirement);
	PUT_LIST(e, ts, "startupTaints", p->startup_taints, p->n_startup_taints, enc_taint);
	PUT_LIST(e, ts, "taints", p->taints, p->n_taints, enc_taint);
	put_str(e, ts, "terminationGracePeriod", p->termination_grace_period);
	put(e, tmpl, "spec", ts);
	put(e, spec, "template", tmpl);
	if (p->has_weight)
		put_int(e, spec, "weight", p->weight);
	return spec;
}

static void enc_node_claim(struct enc *e, struct doc_node *root, const struct model_node_claim *c)
{
	struct doc_node *spec = new_map(e);
	struct doc_node *status = new_map(e);

	put_node_class_ref(e, spec, &c->node_class_ref);
	PUT_LIST(e, spec, "requirements", c->requirements, c->n_requirements, enc_requirement);
	if (c->resource_requests.n_items) {
		struct doc_node *res = new_map(e);

		put_resources(e, res, "requests", &c->resource_requests);
		put(e, spec, "resources", res);
	}
	PUT_LIST(e, spec, "startupTaints", c->startup_taints, c->n_startup_taints, enc_taint);
	PUT_LIST(e, spec, "taints", c->taints, c->n_taints, enc_taint);
	put(e, root, "spec", spec);
	put_str(e, status, "nodeName", c->node_name);
	put_str(e, status, "providerID", c->status_provider_id);
	put_nonempty(e, root, "status", status);
}

static struct doc_node *enc_node_overlay(struct enc *e, const struct model_node_overlay *o)
{
	struct doc_node *spec = new_map(e);

	put_resources(e, spec, "capacity", &o->capacity);
	put_str(e, spec, "price", o->price);
	put_str(e, spec, "priceAdjustment", o->price_adjustment);
	/* [] selects every type and is written, as the field is required. */
	if (o->n_requirements)
		PUT_LIST(e, spec, "requirements", o->requirements, o->n_requirements,
			 enc_requirement);
	else if (o->has_requirements)
		put(e, spec, "requirements", new_seq(e));
	if (o->has_weight)
		put_int(e, spec, "weight", o->weight);
	return spec;
}

/* ---- Key order ----
 *
 * kubectl prints YAML through a JSON map, so every map's keys come out in
 * go-yaml's order: letters by code, a non-letter before a letter, and runs
 * of digits by their number ("gpu-2" before "gpu-10"). */

static bool key_letter(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80;
}

static bool key_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static int key_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
	const unsigned char *x = (const unsigned char *)a, *y = (const unsigned char *)b;

	for (size_t i = 0; i < alen && i < blen; i++) {
		bool xl, yl;
		size_t xi, yi;
		uint64_t xn = 0, yn = 0;

		if (x[i] == y[i])
			continue;
		xl = key_letter(x[i]);
		yl = key_letter(y[i]);
		if (xl && yl)
			return x[i] < y[i] ? -1 : 1;
		if (xl || yl)
			return yl ? -1 : 1;
		/* Digits continuing a number that has a non-zero digit before
		 * them compare as that number's tail. */
		if (x[i] == '0' || y[i] == '0')
			for (size_t j = i; j-- > 0 && key_digit(x[j]);)
				if (x[j] != '0') {
					xn = yn = 1;
					break;
				}
		for (xi = i; xi < alen && key_digit(x[xi]) && xn < UINT64_MAX / 10; xi++)
			xn = xn * 10 + (uint64_t)(x[xi] - '0');
		for (yi = i; yi < blen && key_digit(y[yi]) && yn < UINT64_MAX / 10; yi++)
			yn = yn * 10 + (uint64_t)(y[yi] - '0');
		if (xn != yn)
			return xn < yn ? -1 : 1;
		if (xi != yi)
			return xi < yi ? -1 : 1;
		return x[i] < y[i] ? -1 : 1;
	}
	return alen < blen ? -1 : alen > blen;
}

static int pair_cmp(const void *pa, const void *pb)
{
	const struct doc_pair *a = pa, *b = pb;

	return key_cmp(a->key->text ? a->key->text : "", a->key->text ? a->key->text_len : 0,
		       b->key->text ? b->key->text : "", b->key->text ? b->key->text_len : 0);
}

static void sort_keys(struct doc_node *n, int depth)
{
	if (depth > DOC_MAX_DEPTH)
		return;
	if (n->kind == DOC_MAP) {
		if (n->u.map.n > 1)
			qsort(n->u.map.pairs, n->u.map.n, sizeof(*n->u.map.pairs), pair_cmp);
		for (size_t i = 0; i < n->u.map.n; i++)
			sort_keys(n->u.map.pairs[i].value, depth + 1);
	} else if (n->kind == DOC_SEQ) {
		for (size_t i = 0; i < n->u.seq.n; i++)
			sort_keys(n->u.seq.items[i], depth + 1);
	}
}

/* ---- Objects ---- */

struct doc_node *model_encode(const struct model_object *o, struct doc_arena *a)
{
	struct enc e = { .a = a };
	struct doc_node *root = new_map(&e);

	put(&e, root, "apiVersion", doc_new_string(a, model_kind_api_version(o->kind)));
	put(&e, root, "kind", doc_new_string(a, model_kind_name(o->kind)));
	put(&e, root, "metadata", enc_meta(&e, &o->meta, model_kind_namespaced(o->kind)));
	switch (o->kind) {
	case MODEL_DEVICE_CLASS:
		put(&e, root, "spec", enc_device_class(&e, &o->u.device_class));
		break;
	case MODEL_RESOURCE_SLICE:
		put(&e, root, "spec", enc_slice(&e, &o->u.slice));
		break;
	case MODEL_RESOURCE_CLAIM:
		put(&e, root, "spec", enc_claim_spec(&e, &o->u.claim.spec));
		put_nonempty(&e, root, "status", enc_claim_status(&e, &o->u.claim.status));
		break;
	case MODEL_RESOURCE_CLAIM_TEMPLATE: {
		struct doc_node *spec = new_map(&e);

		put_nonempty(&e, spec, "metadata", enc_meta(&e, &o->u.claim_template.claim_meta,
							    false));
		put(&e, spec, "spec", enc_claim_spec(&e, &o->u.claim_template.spec));
		put(&e, root, "spec", spec);
		break;
	}
	case MODEL_DEVICE_TAINT_RULE:
		enc_taint_rule(&e, root, &o->u.taint_rule);
		break;
	case MODEL_POD:
		put(&e, root, "spec", enc_pod_spec(&e, &o->u.pod.spec));
		put_nonempty(&e, root, "status", enc_pod_status(&e, &o->u.pod.status));
		break;
	case MODEL_NODE:
		enc_node(&e, root, &o->u.node);
		break;
	case MODEL_DEPLOYMENT:
	case MODEL_REPLICA_SET:
	case MODEL_STATEFUL_SET:
	case MODEL_JOB:
	case MODEL_DAEMON_SET:
		put(&e, root, "spec", enc_workload(&e, o->kind, &o->u.workload));
		break;
	case MODEL_NODE_POOL:
		put(&e, root, "spec", enc_node_pool(&e, &o->u.node_pool));
		break;
	case MODEL_NODE_CLAIM:
		enc_node_claim(&e, root, &o->u.node_claim);
		break;
	case MODEL_EC2_NODE_CLASS:
		put_clone(&e, root, "spec", o->u.ec2_node_class.spec);
		break;
	case MODEL_NODE_OVERLAY:
		if (o->u.node_overlay.has_spec)
			put(&e, root, "spec", enc_node_overlay(&e, &o->u.node_overlay));
		break;
	case MODEL_POD_GROUP:
		enc_pod_group(&e, root, &o->u.pod_group);
		break;
	case MODEL_KIND_COUNT:
		break;
	}
	if (e.oom)
		return NULL;
	sort_keys(root, 0);
	return root;
}

int model_emit(const struct model_object *o, enum doc_format fmt, struct strbuf *out)
{
	struct doc_arena *a = doc_arena_new();
	struct doc_node *n;
	int rc = -ENOMEM;

	if (!a)
		return -ENOMEM;
	n = model_encode(o, a);
	if (!n)
		goto out;
	if (fmt == DOC_FORMAT_JSON) {
		rc = doc_emit_json(n, 4, out);
		sb_putc(out, '\n');
	} else {
		if (out->len)
			sb_puts(out, "---\n");
		rc = doc_emit_yaml(n, out);
	}
	if (!rc)
		rc = sb_error(out);
out:
	doc_arena_free(a);
	return rc;
}

bool model_object_equal(const struct model_object *x, const struct model_object *y)
{
	struct doc_arena *a = doc_arena_new();
	const struct doc_node *nx, *ny;
	bool eq = false;

	if (!a)
		return false;
	nx = model_encode(x, a);
	ny = model_encode(y, a);
	if (nx && ny)
		eq = doc_equal(nx, ny);
	doc_arena_free(a);
	return eq;
}
