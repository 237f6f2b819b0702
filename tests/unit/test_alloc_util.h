/* test_alloc_util.h - building allocator inputs in code for the alloc
 * suites: slices, devices, classes and claims as model objects of one
 * set, the way the loader would have made them (defaults applied, the
 * CEL view of each device built). Everything lives in the set. */
#ifndef DT_TEST_ALLOC_UTIL_H
#define DT_TEST_ALLOC_UTIL_H

#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "dt_test.h"

#define TA_MAX 64

struct ta {
	struct model_set *set;
	const struct model_object *slices[TA_MAX];
	size_t n_slices;
	const struct model_object *classes[TA_MAX];
	size_t n_classes;
	const struct model_object *claims[TA_MAX];
	size_t n_claims;
	const struct model_object *rules[TA_MAX];       /* DeviceTaintRules */
	size_t n_rules;
	struct alloc_ctx *ctx;
	struct alloc_state *state;
	struct alloc_outcome out;
	struct dt_err err;
	unsigned share_seq;
	struct alloc_node node;
	struct model_kv labels[8];
};

static inline void ta_share_id(void *arg, char out[ALLOC_SHARE_ID_LEN + 1])
{
	struct ta *t = arg;

	snprintf(out, ALLOC_SHARE_ID_LEN + 1, "00000000-0000-4000-8000-%012u", ++t->share_seq);
}

static inline void ta_init(struct ta *t)
{
	memset(t, 0, sizeof(*t));
	t->set = model_set_new();
	t->node.name = "node-1";
	t->labels[0].key = "region";
	t->labels[0].value = "region-1";
	t->node.labels = t->labels;
	t->node.n_labels = 1;
}

static inline void ta_done(struct ta *t)
{
	alloc_outcome_free(&t->out);
	alloc_state_free(t->state);
	alloc_ctx_free(t->ctx);
	model_set_free(t->set);
}

static inline const char *ta_str(struct ta *t, const char *s)
{
	return s ? model_set_strdup(t->set, s) : NULL;
}

static inline struct quantity ta_q(const char *s)
{
	struct quantity q;

	memset(&q, 0, sizeof(q));
	CU_ASSERT_FATAL(quantity_parse_str(s, &q, NULL) == 0);
	return q;
}

/* A slice of one pool; node NULL: allNodes. */
static inline struct model_object *ta_slice(struct ta *t, const char *name, const char *driver,
					    const char *pool, int64_t gen, int64_t count,
					    const char *node)
{
	struct model_object *o = model_set_add(t->set, MODEL_RESOURCE_SLICE);
	struct model_resource_slice_spec *s = &o->u.slice;

	o->meta.name = ta_str(t, name);
	s->driver = ta_str(t, driver);
	s->pool.name = ta_str(t, pool);
	s->pool.generation = gen;
	s->pool.resource_slice_count = count;
	if (node) {
		s->node_name = ta_str(t, node);
	} else {
		s->has_all_nodes = true;
		s->all_nodes = true;
	}
	s->devices = model_set_calloc(t->set, TA_MAX, sizeof(*s->devices));
	t->slices[t->n_slices++] = o;
	return o;
}

static inline struct model_device *ta_device(struct ta *t, struct model_object *slice,
					     const char *name)
{
	struct model_device *d = &slice->u.slice.devices[slice->u.slice.n_devices++];

	d->name = ta_str(t, name);
	d->attributes = model_set_calloc(t->set, 16, sizeof(*d->attributes));
	d->capacity = model_set_calloc(t->set, 8, sizeof(*d->capacity));
	model_device_cel_init(t->set, slice->u.slice.driver, d);
	return d;
}

/* Rebuild the CEL view after changing a device. */
static inline void ta_sync(struct ta *t, struct model_object *slice, struct model_device *d)
{
	model_device_cel_init(t->set, slice->u.slice.driver, d);
}

static inline void ta_attr_int(struct ta *t, struct model_object *s, struct model_device *d,
			       const char *name, int64_t v)
{
	struct model_attribute *a = &d->attributes[d->n_attributes++];

	a->name = ta_str(t, name);
	a->type = CEL_ATTR_INT;
	a->v.i = v;
	ta_sync(t, s, d);
}

static inline void ta_attr_str(struct ta *t, struct model_object *s, struct model_device *d,
			       const char *name, const char *v, bool version)
{
	struct model_attribute *a = &d->attributes[d->n_attributes++];

	a->name = ta_str(t, name);
	a->type = version ? CEL_ATTR_VERSION : CEL_ATTR_STRING;
	a->v.str.s = ta_str(t, v);
	a->v.str.len = strlen(v);
	if (version)
		a->version_ok = semver_parse(v, strlen(v), &a->version, NULL) == 0;
	ta_sync(t, s, d);
}

/* A list attribute: kind CEL_ATTR_INTS (vals are "1", "2"...),
 * CEL_ATTR_STRINGS or CEL_ATTR_VERSIONS; n values. */
static inline void ta_attr_list(struct ta *t, struct model_object *s, struct model_device *d,
				const char *name, enum cel_attr_kind kind, const char *const *vals,
				size_t n)
{
	struct model_attribute *a = &d->attributes[d->n_attributes++];

	a->name = ta_str(t, name);
	a->type = kind;
	a->items = model_set_calloc(t->set, n ? n : 1, sizeof(*a->items));
	a->n_items = n;
	for (size_t i = 0; i < n; i++) {
		struct model_attr_value *v = &a->items[i];

		if (kind == CEL_ATTR_INTS) {
			v->v.i = strtoll(vals[i], NULL, 10);
		} else {
			v->v.str.s = ta_str(t, vals[i]);
			v->v.str.len = strlen(vals[i]);
			if (kind == CEL_ATTR_VERSIONS)
				v->version_ok = semver_parse(vals[i], strlen(vals[i]), &v->version,
							     NULL) == 0;
		}
	}
	ta_sync(t, s, d);
}

static inline struct model_capacity *ta_capacity(struct ta *t, struct model_object *s,
						 struct model_device *d, const char *name,
						 const char *value)
{
	struct model_capacity *c = &d->capacity[d->n_capacity++];

	c->name = ta_str(t, name);
	c->value = ta_q(value);
	ta_sync(t, s, d);
	return c;
}

static inline void ta_taint(struct ta *t, struct model_device *d, const char *key,
			    const char *value, const char *effect)
{
	if (!d->taints)
		d->taints = model_set_calloc(t->set, 8, sizeof(*d->taints));
	d->taints[d->n_taints].key = ta_str(t, key);
	d->taints[d->n_taints].value = ta_str(t, value);
	d->taints[d->n_taints].effect = ta_str(t, effect);
	d->n_taints++;
}

/* A DeviceTaintRule. selector false: the rule has none (selects nothing);
 * NULL driver, pool or device: that field is not set. */
static inline struct model_object *ta_taint_rule(struct ta *t, const char *name, bool selector,
						 const char *driver, const char *pool,
						 const char *device, const char *key,
						 const char *value, const char *effect)
{
	struct model_object *o = model_set_add(t->set, MODEL_DEVICE_TAINT_RULE);
	struct model_device_taint_rule *r = &o->u.taint_rule;

	o->meta.name = ta_str(t, name);
	if (selector) {
		r->device_selector = model_set_calloc(t->set, 1, sizeof(*r->device_selector));
		r->device_selector->driver = driver ? ta_str(t, driver) : NULL;
		r->device_selector->pool = pool ? ta_str(t, pool) : NULL;
		r->device_selector->device = device ? ta_str(t, device) : NULL;
	}
	r->taint.key = ta_str(t, key);
	r->taint.value = value ? ta_str(t, value) : NULL;
	r->taint.effect = ta_str(t, effect);
	t->rules[t->n_rules++] = o;
	return o;
}

/* A class; selector NULL: selects every device. */
static inline struct model_object *ta_class(struct ta *t, const char *name, const char *selector)
{
	struct model_object *o = model_set_add(t->set, MODEL_DEVICE_CLASS);

	o->meta.name = ta_str(t, name);
	if (selector) {
		o->u.device_class.selectors = model_set_calloc(t->set, 1, sizeof(struct model_selector));
		o->u.device_class.selectors[0].expression = ta_str(t, selector);
		o->u.device_class.selectors[0].expression_len = strlen(selector);
		o->u.device_class.n_selectors = 1;
	}
	t->classes[t->n_classes++] = o;
	return o;
}

static inline struct model_object *ta_claim(struct ta *t, const char *name)
{
	struct model_object *o = model_set_add(t->set, MODEL_RESOURCE_CLAIM);
	struct model_claim_spec *s = &o->u.claim.spec;

	o->meta.name = ta_str(t, name);
	o->meta.ns = "default";
	s->requests = model_set_calloc(t->set, 40, sizeof(*s->requests));
	s->constraints = model_set_calloc(t->set, 8, sizeof(*s->constraints));
	t->claims[t->n_claims++] = o;
	return o;
}

static inline void ta_exact_init(struct model_exact_request *er, const char *cls, int64_t count)
{
	er->device_class_name = cls;
	er->allocation_mode_text = count ? "ExactCount" : "All";
	er->allocation_mode = count ? MODEL_ALLOC_EXACT_COUNT : MODEL_ALLOC_ALL;
	er->has_count = count != 0;
	er->count = count;
}

/* count 0: allocationMode All. */
static inline struct model_exact_request *ta_request(struct ta *t, struct model_object *claim,
						     const char *name, const char *cls,
						     int64_t count)
{
	struct model_claim_spec *s = &claim->u.claim.spec;
	struct model_device_request *r = &s->requests[s->n_requests++];

	r->name = ta_str(t, name);
	r->exactly = model_set_calloc(t->set, 1, sizeof(*r->exactly));
	ta_exact_init(r->exactly, ta_str(t, cls), count);
	return r->exactly;
}

static inline struct model_exact_request *ta_subrequest(struct ta *t, struct model_object *claim,
							const char *main, const char *sub,
							const char *cls, int64_t count)
{
	struct model_claim_spec *s = &claim->u.claim.spec;
	struct model_device_request *r = NULL;
	struct model_subrequest *sr;

	for (size_t i = 0; i < s->n_requests; i++)
		if (!strcmp(s->requests[i].name, main))
			r = &s->requests[i];
	if (!r) {
		r = &s->requests[s->n_requests++];
		r->name = ta_str(t, main);
		r->first_available = model_set_calloc(t->set, 8, sizeof(*r->first_available));
	}
	sr = &r->first_available[r->n_first_available++];
	sr->name = ta_str(t, sub);
	ta_exact_init(&sr->req, ta_str(t, cls), count);
	return &sr->req;
}

static inline void ta_selector(struct ta *t, struct model_exact_request *er, const char *expr)
{
	if (!er->selectors)
		er->selectors = model_set_calloc(t->set, 4, sizeof(*er->selectors));
	er->selectors[er->n_selectors].expression = ta_str(t, expr);
	er->selectors[er->n_selectors].expression_len = strlen(expr);
	er->n_selectors++;
}

static inline void ta_toleration(struct ta *t, struct model_exact_request *er, const char *key,
				 const char *op, const char *value, const char *effect)
{
	if (!er->tolerations)
		er->tolerations = model_set_calloc(t->set, 4, sizeof(*er->tolerations));
	er->tolerations[er->n_tolerations].key = ta_str(t, key);
	er->tolerations[er->n_tolerations].operator_text = ta_str(t, op);
	er->tolerations[er->n_tolerations].value = ta_str(t, value);
	er->tolerations[er->n_tolerations].effect = ta_str(t, effect);
	er->n_tolerations++;
}

static inline void ta_capacity_request(struct ta *t, struct model_exact_request *er,
				       const char *name, const char *value)
{
	struct model_resource_list *l = &er->capacity_requests;

	if (!l->items)
		l->items = model_set_calloc(t->set, 4, sizeof(*l->items));
	l->items[l->n_items].name = ta_str(t, name);
	l->items[l->n_items].value = ta_q(value);
	l->n_items++;
}

/* requests: NULL-terminated list of names, or NULL for all requests. */
static inline void ta_constraint(struct ta *t, struct model_object *claim, const char *attr,
				 bool distinct, const char *const *requests)
{
	struct model_claim_spec *s = &claim->u.claim.spec;
	struct model_constraint *c = &s->constraints[s->n_constraints++];
	size_t n = 0;

	while (requests && requests[n])
		n++;
	if (n) {
		c->requests = model_set_calloc(t->set, n, sizeof(*c->requests));
		for (size_t i = 0; i < n; i++)
			c->requests[i] = ta_str(t, requests[i]);
		c->n_requests = n;
	}
	if (distinct)
		c->distinct_attribute = ta_str(t, attr);
	else
		c->match_attribute = ta_str(t, attr);
}

/* Build ctx (once) and state, with a deterministic share ID generator. */
static inline int ta_ctx(struct ta *t, uint64_t max_steps)
{
	struct alloc_options o;
	int rc;

	memset(&o, 0, sizeof(o));
	o.max_steps = max_steps;
	o.share_id = ta_share_id;
	o.share_id_arg = t;
	o.taint_rules = t->rules;
	o.n_taint_rules = t->n_rules;
	rc = alloc_ctx_new(&t->node, t->slices, t->n_slices, t->classes, t->n_classes, &o,
			   &t->ctx, &t->err);
	if (rc)
		return rc;
	t->state = alloc_state_new(t->ctx);
	return t->state ? 0 : -ENOMEM;
}

/* Allocate claims [first, first+n) of t->claims on top of t->state. */
static inline int ta_try_range(struct ta *t, size_t first, size_t n)
{
	if (!t->ctx) {
		int rc = ta_ctx(t, 0);

		if (rc)
			return rc;
	}
	alloc_outcome_free(&t->out);
	return alloc_try(t->ctx, t->state, t->claims + first, n, &t->out, &t->err);
}

static inline int ta_try(struct ta *t)
{
	return ta_try_range(t, 0, t->n_claims);
}

/* "driver/pool/device" of claim c's result k. */
static inline const char *ta_dev(struct ta *t, size_t c, size_t k)
{
	static char buf[8][256];
	static int i;
	const struct alloc_device_result *r;

	if (!t->out.allocated || c >= t->out.n_claims || k >= t->out.claims[c].n_results)
		return "(none)";
	r = &t->out.claims[c].results[k];
	i = (i + 1) % 8;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s/%s", r->driver, r->pool, r->device);
	return buf[i];
}

#endif
