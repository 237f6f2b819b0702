/* model_decode_dra.c - resource.k8s.io/v1 objects from their trees:
 * DeviceClass, ResourceSlice (devices, attributes, capacity, counters),
 * ResourceClaim (requests, constraints, config, allocation status) and
 * ResourceClaimTemplate, DeviceTaintRule; v1beta1's shapes (basic devices, flat requests)
 * read into the same structs. These types are closed: a key dratopo does
 * not know is warned about. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"
#include "strbuf.h"

/* The field lists of the closed DRA types, NULL-terminated. */
static const char *const f_class_spec[] = { "selectors", "config", "extendedResourceName",
					    NULL };
static const char *const f_selector[] = { "cel", NULL };
static const char *const f_cel[] = { "expression", NULL };
static const char *const f_config[] = { "requests", "opaque", "source", NULL };
static const char *const f_opaque[] = { "driver", "parameters", NULL };
/* Every field of the 1.37 API (its OpenAPI, alpha fields included: an API
 * server without their feature gates drops them without a word, and so does
 * dratopo); a field not listed is the API server's strict decoding error. */
static const char *const f_slice_spec[] = {
	"driver", "pool", "nodeName", "nodeSelector", "allNodes", "perDeviceNodeSelection",
	"devices", "sharedCounters", "partitionTypeAttribute", "skipNodeOperations", NULL
};
static const char *const f_pool[] = { "name", "generation", "resourceSliceCount", NULL };
static const char *const f_name[] = { "name", NULL };
static const char *const f_device_body[] = {
	"attributes", "capacity", "consumesCounters", "nodeName", "nodeSelector", "allNodes",
	"taints", "bindsToNode", "bindingConditions", "bindingFailureConditions",
	"allowMultipleAllocations", "nodeAllocatableResources", NULL
};
static const char *const f_v1beta1_device[] = { "name", "basic", NULL };
static const char *const f_attribute[] = { "int", "bool", "string", "version", "ints", "bools",
					    "strings", "versions", NULL };
static const char *const f_capacity[] = { "value", "requestPolicy", NULL };
static const char *const f_request_policy[] = { "default", "validValues", "validRange", NULL };
static const char *const f_range[] = { "min", "max", "step", NULL };
static const char *const f_counter[] = { "value", NULL };
static const char *const f_counters[] = { "counters", "compatibilityGroups", NULL };

static const char *const f_claim_spec[] = { "devices", NULL };
static const char *const f_device_claim[] = { "requests", "constraints", "config", NULL };
static const char *const f_request[] = { "name", "exactly", "firstAvailable", NULL };
static const char *const f_v1beta1_request[] = { "name", "firstAvailable", NULL };
static const char *const f_exact[] = {
	"deviceClassName", "selectors", "allocationMode", "count", "adminAccess", "tolerations",
	"capacity", "derivedAttributes", NULL
};
static const char *const f_capacity_requirements[] = { "requests", NULL };
static const char *const f_constraint[] = { "requests", "matchAttribute", "distinctAttribute",
					    NULL };
static const char *const f_template_spec[] = { "metadata", "spec", NULL };
static const char *const f_taint_rule_spec[] = { "deviceSelector", "taint", NULL };
static const char *const f_taint_selector[] = { "driver", "pool", "device", NULL };
/* Alpha fields 1.35 removed: validation refuses them. */
static const char *const f_taint_selector_removed[] = { "deviceClassName", "selectors", NULL };
static const char *const f_taint_rule_status[] = { "conditions", NULL };
static const char *const f_condition[] = { "type", "status", "observedGeneration",
					   "lastTransitionTime", "reason", "message", NULL };

/* ---- resource.k8s.io/v1 ---- */

static void item_selector(struct model_dec *d, const struct doc_node *it, void *slot,
			  const void *ctx)
{
	struct model_selector *sel = slot;
	const struct doc_node *cel = model_get_map(d, it, "cel");
	const struct doc_node *e = model_child(cel, "expression");

	model_closed_fields(d, it, f_selector, NULL);
	if (cel) {
		size_t cm = model_path_field(&d->path, "cel");

		model_closed_fields(d, cel, f_cel, NULL);
		model_path_pop(&d->path, cm);
	}
	if (e) {
		size_t cm = model_path_field(&d->path, "cel");
		size_t em = model_path_field(&d->path, "expression");

		if (e->kind != DOC_STRING) {
			model_dec_report(d, e, "must be a string");
		} else {
			sel->expression = model_dstrdup(d, e);
			sel->expression_len = e->text ? e->text_len : 0;
		}
		model_path_pop(&d->path, em);
		model_path_pop(&d->path, cm);
	} else if (cel) {
		sel->expression = "";   /* cel: {} - an empty expression */
	}
	(void)ctx;
}

static void get_selectors(struct model_dec *d, const struct doc_node *m, const char *key,
			  struct model_selector **out, size_t *n_out)
{
	GET_LIST(d, m, key, *out, *n_out, item_selector, NULL);
}

static void item_config(struct model_dec *d, const struct doc_node *it, void *slot, const void *ctx)
{
	struct model_device_config *c = slot;
	const struct doc_node *op = model_get_map(d, it, "opaque");

	model_closed_if(d, it, f_config);
	model_get_str_list(d, it, "requests", &c->requests, &c->n_requests);
	c->source = model_get_str(d, it, "source");
	if (op) {
		const struct doc_node *params = doc_get(op, "parameters");
		size_t om = model_path_field(&d->path, "opaque");

		c->has_opaque = true;
		model_closed_if(d, op, f_opaque);
		c->driver = model_get_str(d, op, "driver");
		if (params) {
			struct doc_arena *a = model_set_doc_arena(d->set);

			c->parameters = a ? doc_clone(a, params) : NULL;
			if (!c->parameters)
				d->oom = 1;
		}
		model_path_pop(&d->path, om);
	}
	(void)ctx;
}

static void get_configs(struct model_dec *d, const struct doc_node *m, const char *key,
			struct model_device_config **out, size_t *n_out)
{
	GET_LIST(d, m, key, *out, *n_out, item_config, NULL);
}

void model_dec_device_class(struct model_dec *d, const struct doc_node *spec,
			     struct model_device_class_spec *c)
{
	model_closed_fields(d, spec, f_class_spec, NULL);
	get_selectors(d, spec, "selectors", &c->selectors, &c->n_selectors);
	get_configs(d, spec, "config", &c->config, &c->n_config);
	c->extended_resource_name = model_get_str(d, spec, "extendedResourceName");
}

/* One scalar value (or list item) n of element kind k into v. */
static void dec_attr_value(struct model_dec *d, const struct doc_node *n, enum cel_attr_kind k,
			   struct model_attr_value *v)
{
	if (k == CEL_ATTR_INT) {
		model_node_int(d, n, 64, &v->v.i);
	} else if (k == CEL_ATTR_BOOL) {
		if (n->kind == DOC_BOOL)
			v->v.b = n->u.b;
		else
			model_dec_report(d, n, "must be a boolean");
	} else if (n->kind != DOC_STRING) {
		model_dec_report(d, n, "must be a string");
	} else {
		v->v.str.s = model_dstrdup(d, n);
		v->v.str.len = n->text ? n->text_len : 0;
		if (k == CEL_ATTR_VERSION && v->v.str.s)
			v->version_ok = semver_parse(v->v.str.s, v->v.str.len, &v->version,
						     NULL) == 0;
	}
}

/* ints|bools|strings|versions: the items (an empty list stays empty, for
 * validation to refuse; a value that is no list is reported here and
 * leaves items NULL). */
static void dec_attr_list(struct model_dec *d, const struct doc_node *seq, enum cel_attr_kind k,
			  struct model_attribute *a)
{
	if (seq->kind != DOC_SEQ) {
		model_dec_report(d, seq, "must be a list");
		return;
	}
	/* Never NULL for a list, empty or not: NULL says it was no list. */
	a->items = model_dalloc(d, seq->u.seq.n ? seq->u.seq.n : 1, sizeof(*a->items));
	if (!a->items)
		return;
	for (size_t i = 0; i < seq->u.seq.n; i++) {
		size_t im = model_path_index(&d->path, i);

		dec_attr_value(d, seq->u.seq.items[i], model_attr_elem_kind(k), &a->items[i]);
		model_path_pop(&d->path, im);
	}
	a->n_items = seq->u.seq.n;
}

/* attributes: {name: {int|bool|string|version|ints|bools|strings|versions: value}} */
static void dec_attribute(struct model_dec *d, const struct doc_node *v, struct model_attribute *a)
{
	static const enum cel_attr_kind kinds[8] = {
		CEL_ATTR_INT, CEL_ATTR_BOOL, CEL_ATTR_STRING, CEL_ATTR_VERSION,
		CEL_ATTR_INTS, CEL_ATTR_BOOLS, CEL_ATTR_STRINGS, CEL_ATTR_VERSIONS,
	};
	const struct doc_node *set[8], *n = NULL;
	int n_set = 0, which = -1;
	size_t mark;

	model_closed_fields(d, v, f_attribute, NULL);
	for (int f = 0; f < 8; f++) {
		set[f] = model_child(v, f_attribute[f]);
		n_set += set[f] != NULL;
		if (set[f] && which < 0)
			which = f;
	}
	/* The API server's wording (validateDeviceAttribute): the bad value is
	 * the attribute when several are set, "" when none is. */
	if (n_set > 1)
		model_dec_report(d, v, "exactly one value must be specified");
	else if (n_set == 0)
		model_dec_report(d, NULL,
				 "Invalid value: \"\": exactly one value must be specified");
	if (which < 0) {
		a->type = CEL_ATTR_STRING;
		a->v.str.s = "";
		return;
	}
	a->type = kinds[which];
	n = set[which];
	mark = model_path_field(&d->path, f_attribute[which]);
	if (cel_attr_is_list(a->type)) {
		dec_attr_list(d, n, a->type, a);
	} else {
		struct model_attr_value val = { 0 };

		dec_attr_value(d, n, a->type, &val);
		a->v = val.v;
		a->version = val.version;
		a->version_ok = val.version_ok;
	}
	model_path_pop(&d->path, mark);
}

static void get_attributes(struct model_dec *d, const struct doc_node *dev,
			   struct model_device *out)
{
	const struct doc_node *map = model_get_map(d, dev, "attributes");
	size_t mark;

	if (!map || !map->u.map.n)
		return;
	DALLOC(d, out->attributes, map->u.map.n);
	if (!out->attributes)
		return;
	mark = model_path_field(&d->path, "attributes");
	for (size_t i = 0; i < map->u.map.n; i++) {
		const struct doc_pair *p = &map->u.map.pairs[i];
		struct model_attribute *a = &out->attributes[out->n_attributes];
		size_t km = model_path_key(&d->path, p->key->text ? p->key->text : "");

		a->name = model_dstrdup(d, p->key);
		if (a->name && p->value->kind == DOC_NULL) {
			/* name: null reads as an attribute without a value. */
			model_dec_report(d, NULL, "Invalid value: \"\": exactly one value must be specified");
		} else if (a->name && model_is_map(d, p->value)) {
			dec_attribute(d, p->value, a);
			out->n_attributes++;
		}
		model_path_pop(&d->path, km);
	}
	model_path_pop(&d->path, mark);
}

static void dec_request_policy(struct model_dec *d, const struct doc_node *m,
			       struct model_request_policy *p)
{
	const struct doc_node *vv = model_get_seq(d, m, "validValues");
	const struct doc_node *range = model_get_map(d, m, "validRange");

	model_closed_fields(d, m, f_request_policy, NULL);
	model_get_quantity(d, m, "default", &p->has_default, &p->def);
	if (vv) {
		size_t mark = model_path_field(&d->path, "validValues");

		DALLOC(d, p->valid_values, vv->u.seq.n);
		for (size_t i = 0; p->valid_values && i < vv->u.seq.n; i++) {
			size_t im = model_path_index(&d->path, i);

			if (model_node_quantity(d, vv->u.seq.items[i],
						&p->valid_values[p->n_valid_values]))
				p->n_valid_values++;
			model_path_pop(&d->path, im);
		}
		model_path_pop(&d->path, mark);
	}
	if (range) {
		size_t mark = model_path_field(&d->path, "validRange");

		p->has_valid_range = true;
		model_closed_fields(d, range, f_range, NULL);
		model_get_quantity(d, range, "min", &p->has_min, &p->min);
		model_get_quantity(d, range, "max", &p->has_max, &p->max);
		model_get_quantity(d, range, "step", &p->has_step, &p->step);
		model_path_pop(&d->path, mark);
	}
}

static void get_capacity(struct model_dec *d, const struct doc_node *dev, struct model_device *out)
{
	const struct doc_node *map = model_get_map(d, dev, "capacity");
	size_t mark;

	if (!map || !map->u.map.n)
		return;
	DALLOC(d, out->capacity, map->u.map.n);
	if (!out->capacity)
		return;
	mark = model_path_field(&d->path, "capacity");
	for (size_t i = 0; i < map->u.map.n; i++) {
		const struct doc_pair *p = &map->u.map.pairs[i];
		struct model_capacity *c = &out->capacity[out->n_capacity];
		size_t km = model_path_key(&d->path, p->key->text ? p->key->text : "");

		c->name = model_dstrdup(d, p->key);
		if (c->name && p->value->kind != DOC_NULL && model_is_map(d, p->value)) {
			const struct doc_node *pol = model_get_map(d, p->value, "requestPolicy");
			bool has_value = false;

			model_closed_fields(d, p->value, f_capacity, NULL);
			model_get_quantity(d, p->value, "value", &has_value, &c->value);
			if (!has_value && !model_child(p->value, "value")) {
				size_t vm = model_path_field(&d->path, "value");

				model_dec_report(d, NULL, "Required value");
				model_path_pop(&d->path, vm);
			}
			if (pol) {
				size_t pm = model_path_field(&d->path, "requestPolicy");

				c->has_request_policy = true;
				dec_request_policy(d, pol, &c->request_policy);
				model_path_pop(&d->path, pm);
			}
			out->n_capacity++;
		}
		model_path_pop(&d->path, km);
	}
	model_path_pop(&d->path, mark);
}

/* counters: {name: {value: quantity}} */
static void get_counters(struct model_dec *d, const struct doc_node *m,
			 struct model_counter_set *cs)
{
	const struct doc_node *map = model_get_map(d, m, "counters");
	size_t mark;

	if (!map || !map->u.map.n)
		return;
	DALLOC(d, cs->counters, map->u.map.n);
	if (!cs->counters)
		return;
	mark = model_path_field(&d->path, "counters");
	for (size_t i = 0; i < map->u.map.n; i++) {
		const struct doc_pair *p = &map->u.map.pairs[i];
		struct model_counter *c = &cs->counters[cs->n_counters];
		size_t km = model_path_key(&d->path, p->key->text ? p->key->text : "");

		c->name = model_dstrdup(d, p->key);
		if (c->name && p->value->kind != DOC_NULL && model_is_map(d, p->value)) {
			bool has = false;

			model_closed_fields(d, p->value, f_counter, NULL);
			model_get_quantity(d, p->value, "value", &has, &c->value);
			if (!has && !model_child(p->value, "value")) {
				size_t vm = model_path_field(&d->path, "value");

				model_dec_report(d, NULL, "Required value");
				model_path_pop(&d->path, vm);
			}
			cs->n_counters++;
		}
		model_path_pop(&d->path, km);
	}
	model_path_pop(&d->path, mark);
}

static void item_counter_set(struct model_dec *d, const struct doc_node *it, void *slot,
			     const void *ctx)
{
	struct model_counter_set *cs = slot;
	const char *name_field = ctx;
	const char *const own[] = { name_field, NULL };

	model_closed_fields(d, it, f_counters, own);
	cs->name = model_get_str(d, it, name_field);
	get_counters(d, it, cs);
}

/* Counter sets are named by name_field ("name" or "counterSet"). */
static void get_counter_sets(struct model_dec *d, const struct doc_node *m, const char *key,
			     const char *name_field, struct model_counter_set **out, size_t *n_out)
{
	GET_LIST(d, m, key, *out, *n_out, item_counter_set, name_field);
}

/* Everything of a device but its name: v1's Device, v1beta1's BasicDevice. */
static void dec_device_body(struct model_dec *d, const struct doc_node *m, const char *driver,
			    struct model_device *dev)
{
	get_attributes(d, m, dev);
	get_capacity(d, m, dev);
	get_counter_sets(d, m, "consumesCounters", "counterSet", &dev->consumes_counters,
			 &dev->n_consumes_counters);
	dev->node_name = model_get_str(d, m, "nodeName");
	dev->node_selector = model_get_node_selector(d, m, "nodeSelector");
	model_get_bool(d, m, "allNodes", &dev->has_all_nodes, &dev->all_nodes);
	model_get_taints(d, m, "taints", &dev->taints, &dev->n_taints);
	model_get_bool(d, m, "bindsToNode", &dev->has_binds_to_node, &dev->binds_to_node);
	model_get_str_list(d, m, "bindingConditions", &dev->binding_conditions,
		     &dev->n_binding_conditions);
	model_get_str_list(d, m, "bindingFailureConditions", &dev->binding_failure_conditions,
		     &dev->n_binding_failure_conditions);
	model_get_bool(d, m, "allowMultipleAllocations", &dev->has_allow_multiple_allocations,
		 &dev->allow_multiple_allocations);
	if (model_device_cel_init(d->set, driver ? driver : "", dev))
		d->oom = 1;
}

/* v1: {name, attributes, capacity, ...}; v1beta1: {name, basic: {attributes,
 * capacity, ...}}, the body moved up a level as v1 has it. */
static void dec_device(struct model_dec *d, const struct doc_node *m, const char *driver,
		       struct model_device *dev)
{
	const struct doc_node *body = m;
	size_t mark = d->path.len;

	dev->name = model_get_str(d, m, "name");
	if (d->v1beta1) {
		model_closed_fields(d, m, f_v1beta1_device, NULL);
		body = model_get_map(d, m, "basic");
		mark = model_path_field(&d->path, "basic");
		model_closed_fields(d, body, f_device_body, NULL);
	} else {
		model_closed_fields(d, m, f_device_body, f_name);
	}
	dec_device_body(d, body, driver, dev);
	model_path_pop(&d->path, mark);
}

/* ctx: the slice's driver. */
static void item_device(struct model_dec *d, const struct doc_node *it, void *slot,
			const void *ctx)
{
	dec_device(d, it, ctx, slot);
}

void model_dec_slice(struct model_dec *d, const struct doc_node *spec,
		      struct model_resource_slice_spec *s)
{
	const struct doc_node *pool = model_get_map(d, spec, "pool");

	model_closed_fields(d, spec, f_slice_spec, NULL);
	s->driver = model_get_str(d, spec, "driver");
	if (pool) {
		size_t mark = model_path_field(&d->path, "pool");

		model_closed_fields(d, pool, f_pool, NULL);
		s->pool.name = model_get_str(d, pool, "name");
		model_get_int(d, pool, "generation", 64, NULL, &s->pool.generation);
		model_get_int(d, pool, "resourceSliceCount", 64, NULL,
			      &s->pool.resource_slice_count);
		model_path_pop(&d->path, mark);
	}
	s->node_name = model_get_str(d, spec, "nodeName");
	s->node_selector = model_get_node_selector(d, spec, "nodeSelector");
	model_get_bool(d, spec, "allNodes", &s->has_all_nodes, &s->all_nodes);
	model_get_bool(d, spec, "perDeviceNodeSelection", &s->has_per_device_node_selection,
		 &s->per_device_node_selection);
	GET_LIST(d, spec, "devices", s->devices, s->n_devices, item_device, s->driver);
	get_counter_sets(d, spec, "sharedCounters", "name", &s->shared_counters,
			 &s->n_shared_counters);
}

/* own: the fields of the struct holding the request besides its own
 * (a subrequest's name, a v1beta1 request's name and firstAvailable). */
static void dec_exact(struct model_dec *d, const struct doc_node *m, const char *const *own,
		      struct model_exact_request *r)
{
	const struct doc_node *cap = model_get_map(d, m, "capacity");

	model_closed_fields(d, m, f_exact, own);
	r->device_class_name = model_get_str(d, m, "deviceClassName");
	get_selectors(d, m, "selectors", &r->selectors, &r->n_selectors);
	r->allocation_mode_text = model_get_str(d, m, "allocationMode");
	model_get_int(d, m, "count", 64, &r->has_count, &r->count);
	model_get_bool(d, m, "adminAccess", &r->has_admin_access, &r->admin_access);
	model_get_tolerations(d, m, "tolerations", &r->tolerations, &r->n_tolerations);
	if (cap) {
		size_t mark = model_path_field(&d->path, "capacity");

		model_closed_fields(d, cap, f_capacity_requirements, NULL);
		model_get_resource_list(d, cap, "requests", &r->capacity_requests);
		model_path_pop(&d->path, mark);
	}
}

/* A v1beta1 DeviceRequest holds v1's ExactDeviceRequest fields itself; it
 * is one unless it only lists firstAvailable subrequests. */
static const struct doc_node *v1beta1_exact_request(const struct doc_node *req)
{
	static const char *const exact_fields[] = {
		"deviceClassName", "selectors", "allocationMode", "count", "adminAccess",
		"tolerations", "capacity", "derivedAttributes",
	};

	if (!model_child(req, "firstAvailable"))
		return req;
	for (size_t i = 0; i < sizeof(exact_fields) / sizeof(exact_fields[0]); i++)
		if (model_child(req, exact_fields[i]))
			return req;
	return NULL;
}

static void item_constraint(struct model_dec *d, const struct doc_node *it, void *slot,
			    const void *ctx)
{
	struct model_constraint *k = slot;

	model_closed_fields(d, it, f_constraint, NULL);
	model_get_str_list(d, it, "requests", &k->requests, &k->n_requests);
	k->match_attribute = model_get_str(d, it, "matchAttribute");
	k->distinct_attribute = model_get_str(d, it, "distinctAttribute");
	(void)ctx;
}

static void item_subrequest(struct model_dec *d, const struct doc_node *it, void *slot,
			    const void *ctx)
{
	struct model_subrequest *sr = slot;

	sr->name = model_get_str(d, it, "name");
	dec_exact(d, it, f_name, &sr->req);
	(void)ctx;
}

static void item_request(struct model_dec *d, const struct doc_node *it, void *slot,
			 const void *ctx)
{
	struct model_device_request *r = slot;
	const struct doc_node *ex;

	if (!d->v1beta1)
		model_closed_fields(d, it, f_request, NULL);
	else if (!v1beta1_exact_request(it))    /* else dec_exact checks */
		model_closed_fields(d, it, f_v1beta1_request, NULL);
	r->name = model_get_str(d, it, "name");
	ex = d->v1beta1 ? v1beta1_exact_request(it) : model_get_map(d, it, "exactly");
	if (ex && ex == it) {
		/* v1beta1: the request's own fields are v1's `exactly`. */
		DALLOC(d, r->exactly, 1);
		if (r->exactly)
			dec_exact(d, ex, f_v1beta1_request, r->exactly);
	} else if (ex) {
		size_t em = model_path_field(&d->path, "exactly");

		DALLOC(d, r->exactly, 1);
		if (r->exactly)
			dec_exact(d, ex, NULL, r->exactly);
		model_path_pop(&d->path, em);
	}
	GET_LIST(d, it, "firstAvailable", r->first_available, r->n_first_available,
		 item_subrequest, NULL);
	(void)ctx;
}

static void dec_claim_spec(struct model_dec *d, const struct doc_node *spec,
			   struct model_claim_spec *c)
{
	const struct doc_node *devices = model_get_map(d, spec, "devices");
	size_t dm;

	model_closed_fields(d, spec, f_claim_spec, NULL);
	if (!devices)
		return;
	dm = model_path_field(&d->path, "devices");
	model_closed_fields(d, devices, f_device_claim, NULL);
	GET_LIST(d, devices, "requests", c->requests, c->n_requests, item_request, NULL);
	GET_LIST(d, devices, "constraints", c->constraints, c->n_constraints, item_constraint,
		 NULL);
	get_configs(d, devices, "config", &c->config, &c->n_config);
	model_path_pop(&d->path, dm);
}

static void item_result(struct model_dec *d, const struct doc_node *it, void *slot,
			const void *ctx)
{
	struct model_allocation_result *r = slot;

	r->request = model_get_str(d, it, "request");
	r->driver = model_get_str(d, it, "driver");
	r->pool = model_get_str(d, it, "pool");
	r->device = model_get_str(d, it, "device");
	model_get_bool(d, it, "adminAccess", &r->has_admin_access, &r->admin_access);
	model_get_tolerations(d, it, "tolerations", &r->tolerations, &r->n_tolerations);
	model_get_str_list(d, it, "bindingConditions", &r->binding_conditions,
			   &r->n_binding_conditions);
	model_get_str_list(d, it, "bindingFailureConditions", &r->binding_failure_conditions,
			   &r->n_binding_failure_conditions);
	r->share_id = model_get_str(d, it, "shareID");
	model_get_resource_list(d, it, "consumedCapacity", &r->consumed_capacity);
	(void)ctx;
}

static void dec_allocation(struct model_dec *d, const struct doc_node *m,
			   struct model_allocation *a)
{
	const struct doc_node *devices = model_get_map(d, m, "devices");

	a->node_selector = model_get_node_selector(d, m, "nodeSelector");
	a->allocation_timestamp = model_get_time(d, m, "allocationTimestamp");
	if (!devices)
		return;
	size_t dm = model_path_field(&d->path, "devices");

	GET_LIST(d, devices, "results", a->results, a->n_results, item_result, NULL);
	get_configs(d, devices, "config", &a->config, &a->n_config);
	model_path_pop(&d->path, dm);
}

static void item_consumer_ref(struct model_dec *d, const struct doc_node *it, void *slot,
			      const void *ctx)
{
	struct model_consumer_ref *r = slot;

	r->api_group = model_get_str(d, it, "apiGroup");
	r->resource = model_get_str(d, it, "resource");
	r->name = model_get_str(d, it, "name");
	r->uid = model_get_str(d, it, "uid");
	(void)ctx;
}

void model_dec_claim(struct model_dec *d, const struct doc_node *root,
		     struct model_resource_claim *c)
{
	const struct doc_node *spec = model_get_map(d, root, "spec");
	const struct doc_node *status = model_get_map(d, root, "status");

	if (spec) {
		size_t mark = model_path_field(&d->path, "spec");

		dec_claim_spec(d, spec, &c->spec);
		model_path_pop(&d->path, mark);
	}
	if (status) {
		size_t mark = model_path_field(&d->path, "status");
		const struct doc_node *alloc = model_get_map(d, status, "allocation");
		bool closed = d->closed;

		d->closed = false;      /* status is the API server's, not typed by users */

		if (alloc) {
			size_t am = model_path_field(&d->path, "allocation");

			DALLOC(d, c->status.allocation, 1);
			if (c->status.allocation)
				dec_allocation(d, alloc, c->status.allocation);
			model_path_pop(&d->path, am);
		}
		GET_LIST(d, status, "reservedFor", c->status.reserved_for, c->status.n_reserved_for,
			 item_consumer_ref, NULL);
		d->closed = closed;
		model_path_pop(&d->path, mark);
	}
}

void model_dec_claim_template(struct model_dec *d, const struct doc_node *root,
			       struct model_resource_claim_template *t)
{
	const struct doc_node *spec = model_get_map(d, root, "spec");
	const struct doc_node *inner;
	size_t mark;

	if (!spec)
		return;
	mark = model_path_field(&d->path, "spec");
	model_closed_fields(d, spec, f_template_spec, NULL);
	model_get_meta(d, spec, "metadata", &t->claim_meta);
	inner = model_get_map(d, spec, "spec");
	if (inner) {
		size_t im = model_path_field(&d->path, "spec");

		dec_claim_spec(d, inner, &t->spec);
		model_path_pop(&d->path, im);
	}
	model_path_pop(&d->path, mark);
}

/* ---- DeviceTaintRule ---- */

static void dec_taint_selector(struct model_dec *d, const struct doc_node *m,
			       struct model_device_taint_selector *s)
{
	model_closed_fields(d, m, f_taint_selector, f_taint_selector_removed);
	s->driver = model_get_str(d, m, "driver");
	s->pool = model_get_str(d, m, "pool");
	s->device = model_get_str(d, m, "device");
	s->has_device_class_name = model_child(m, "deviceClassName") != NULL;
	s->has_selectors = model_child(m, "selectors") != NULL;
}

static void item_condition(struct model_dec *d, const struct doc_node *it, void *slot,
			   const void *ctx)
{
	struct model_condition *c = slot;

	model_closed_fields(d, it, f_condition, NULL);
	c->type = model_get_str(d, it, "type");
	c->status = model_get_str(d, it, "status");
	model_get_int(d, it, "observedGeneration", 64, &c->has_observed_generation,
		      &c->observed_generation);
	c->last_transition_time = model_get_time(d, it, "lastTransitionTime");
	c->reason = model_get_str(d, it, "reason");
	c->message = model_get_str(d, it, "message");
	(void)ctx;
}

void model_dec_taint_rule(struct model_dec *d, const struct doc_node *root,
			  struct model_device_taint_rule *r)
{
	const struct doc_node *spec = model_get_map(d, root, "spec");
	const struct doc_node *status = model_get_map(d, root, "status");

	if (spec) {
		size_t mark = model_path_field(&d->path, "spec");
		const struct doc_node *sel = model_get_map(d, spec, "deviceSelector");
		const struct doc_node *taint = model_get_map(d, spec, "taint");

		model_closed_fields(d, spec, f_taint_rule_spec, NULL);
		if (sel) {
			size_t sm = model_path_field(&d->path, "deviceSelector");

			DALLOC(d, r->device_selector, 1);
			if (r->device_selector)
				dec_taint_selector(d, sel, r->device_selector);
			model_path_pop(&d->path, sm);
		}
		if (taint) {
			size_t tm = model_path_field(&d->path, "taint");

			model_dec_taint(d, taint, &r->taint);
			model_path_pop(&d->path, tm);
		}
		model_path_pop(&d->path, mark);
	}
	if (status) {
		size_t mark = model_path_field(&d->path, "status");

		model_closed_fields(d, status, f_taint_rule_status, NULL);
		GET_LIST(d, status, "conditions", r->conditions, r->n_conditions, item_condition,
			 NULL);
		model_path_pop(&d->path, mark);
	}
}
