/* model_validate_dra.c - the API server's validation of resource.k8s.io/v1
 * (pkg/apis/resource/validation): DeviceClass, ResourceSlice (devices,
 * attributes, capacity, counters, binding conditions), ResourceClaim and
 * ResourceClaimTemplate (requests, constraints, config, allocation).
 * A list over its size limit is reported once and its items are not looked
 * at, as the API server does to bound its work. */
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"
#include "strbuf.h"

/* ---- Selectors and configuration ---- */

static void v_cel(struct model_val *v, const struct model_selector *s)
{
	size_t f = P_FIELD(v, "cel");
	size_t e;
	char msg[4096];
	int rc;

	if (!s->expression) {
		model_e_required(v, "");
		P_POP(v, f);
		return;
	}
	e = P_FIELD(v, "expression");
	if (s->expression_len > MAX_CEL_LEN) {
		model_e_too_long(v, MAX_CEL_LEN);
	} else if (v->opts && v->opts->check_cel) {
		msg[0] = '\0';
		rc = v->opts->check_cel(s->expression, s->expression_len, msg, sizeof(msg),
					v->opts->cel_ctx);
		if (rc == -E2BIG) {
			model_e_forbidden(v, msg[0] ? msg : "too complex, exceeds cost limit");
		} else if (rc) {
			struct strbuf sb = STRBUF_INIT;

			sb_puts(&sb, "Invalid value: ");
			model_quote(&sb, s->expression, s->expression_len);
			model_val_detail(&sb, msg[0] ? msg : "compilation failed");
			model_val_emit(v, &sb);
		}
	}
	P_POP(v, e);
	P_POP(v, f);
}

static void v_selectors(struct model_val *v, const struct model_selector *sel, size_t n)
{
	size_t f = P_FIELD(v, "selectors");

	if (n > MAX_SELECTORS) {
		model_e_too_many(v, n, MAX_SELECTORS);
	} else {
		for (size_t i = 0; i < n; i++) {
			size_t ix = P_INDEX(v, i);

			v_cel(v, &sel[i]);
			P_POP(v, ix);
		}
	}
	P_POP(v, f);
}

/* Bytes of the compact JSON form of a tree (what the API server measures
 * for raw parameters), counted without building it and capped at limit+1. */
static size_t json_size(const struct doc_node *n, size_t limit, int depth)
{
	size_t total = 0;

	if (depth > DOC_MAX_DEPTH)
		return limit + 1;
	switch (n->kind) {
	case DOC_NULL:
		return 4;
	case DOC_BOOL:
		return n->u.b ? 4 : 5;
	case DOC_INT:
	case DOC_FLOAT:
		return n->text ? n->text_len : 1;
	case DOC_STRING:
		total = 2;
		for (size_t i = 0; n->text && i < n->text_len; i++) {
			unsigned char c = (unsigned char)n->text[i];

			total += c == '"' || c == '\\' ? 2 : c < 0x20 ? 6 : 1;
		}
		return total;
	case DOC_SEQ:
		total = 2;
		for (size_t i = 0; i < n->u.seq.n && total <= limit; i++)
			total += (i ? 1 : 0) + json_size(n->u.seq.items[i], limit, depth + 1);
		return total;
	case DOC_MAP:
		total = 2;
		for (size_t i = 0; i < n->u.map.n && total <= limit; i++)
			total += (i ? 1 : 0) + json_size(n->u.map.pairs[i].key, limit, depth + 1) + 1 +
				 json_size(n->u.map.pairs[i].value, limit, depth + 1);
		return total;
	}
	return total;
}

static void v_opaque(struct model_val *v, const struct model_device_config *c)
{
	size_t f = P_FIELD(v, "opaque");
	size_t g;

	if (!c->has_opaque) {
		model_e_required(v, "");
		P_POP(v, f);
		return;
	}
	g = P_FIELD(v, "driver");
	model_v_driver_name(v, c->driver);
	P_POP(v, g);
	g = P_FIELD(v, "parameters");
	if (!c->parameters || c->parameters->kind == DOC_NULL) {
		model_e_required(v, "");
	} else {
		if (json_size(c->parameters, MAX_OPAQUE_LEN, 0) > MAX_OPAQUE_LEN)
			model_e_too_long(v, MAX_OPAQUE_LEN);
		else if (c->parameters->kind != DOC_MAP)
			model_e_invalid_str(v, "<value omitted>", "must be a valid JSON object");
	}
	P_POP(v, g);
	P_POP(v, f);
}

/* ---- ResourceSlice ---- */

static void v_node_name(struct model_val *v, const char *name)
{
	model_v_dns_subdomain(v, name);
}

static void v_counter_map(struct model_val *v, const struct model_counter_set *cs, int max)
{
	size_t f = P_FIELD(v, "counters");

	if (cs->n_counters == 0) {
		model_e_required(v, "");
	} else if (cs->n_counters > (size_t)max) {
		model_e_too_many(v, cs->n_counters, max);
	} else {
		for (size_t i = 0; i < cs->n_counters; i++) {
			size_t k = model_p_key_cut(v, cs->counters[i].name, LABEL_KEY_MAX);

			model_v_dns_label(v, cs->counters[i].name);
			P_POP(v, k);
		}
	}
	P_POP(v, f);
}

static void v_counter_sets(struct model_val *v, const char *field, const char *name_field,
			   const struct model_counter_set *cs, size_t n, int max_sets,
			   int max_counters)
{
	size_t f = P_FIELD(v, field);

	if (n > (size_t)max_sets) {
		model_e_too_many(v, n, max_sets);
		P_POP(v, f);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		size_t ix = P_INDEX(v, i);
		size_t g = P_FIELD(v, name_field);

		if (model_empty(cs[i].name))
			model_e_required(v, "");
		else
			model_v_dns_label(v, cs[i].name);
		P_POP(v, g);
		v_counter_map(v, &cs[i], max_counters);
		P_POP(v, ix);
	}
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < i; j++)
			if (model_str_eq(cs[i].name, cs[j].name)) {
				size_t ix = P_INDEX(v, i);

				model_e_duplicate(v, cs[i].name);
				P_POP(v, ix);
				break;
			}
	P_POP(v, f);
}

void model_q_str(const struct quantity *q, char *buf)
{
	quantity_format(q, buf);
}

static void v_range_step(struct model_val *v, const struct quantity *value,
			 const struct quantity *min,
			 const struct quantity *step)
{
	int64_t s = quantity_value_ceil(step);
	int64_t diff = quantity_value_ceil(value) - quantity_value_ceil(min);
	char vb[QUANTITY_STR_MAX], sb[QUANTITY_STR_MAX], mb[QUANTITY_STR_MAX], msg[256];

	if (s <= 0)
		return;         /* reported once by the caller */
	if (diff % s != 0) {
		model_q_str(value, vb);
		model_q_str(step, sb);
		model_q_str(min, mb);
		snprintf(msg, sizeof(msg), "value is not a multiple of a given step (%s) from (%s)",
			 sb, mb);
		model_e_invalid_str(v, vb, msg);
	}
}

static void v_valid_range(struct model_val *v, const struct model_capacity *c)
{
	const struct model_request_policy *p = &c->request_policy;
	char a[QUANTITY_STR_MAX], b[QUANTITY_STR_MAX], msg[256];
	size_t f;

	if (!p->has_min) {
		f = P_FIELD(v, "min");
		model_e_required(v, "required when validRange is defined");
		P_POP(v, f);
		return;
	}
	f = P_FIELD(v, "min");
	if (quantity_cmp(&p->min, &c->value) > 0) {
		model_q_str(&p->min, a);
		model_q_str(&c->value, b);
		snprintf(msg, sizeof(msg), "min is larger than capacity value: %s", b);
		model_e_invalid_str(v, a, msg);
	}
	if (quantity_cmp(&p->def, &p->min) < 0) {
		model_q_str(&p->def, a);
		model_q_str(&p->min, b);
		snprintf(msg, sizeof(msg), "default is less than min: %s", b);
		model_e_invalid_str(v, a, msg);
	}
	P_POP(v, f);
	if (p->has_max) {
		f = P_FIELD(v, "max");
		if (quantity_cmp(&p->min, &p->max) > 0) {
			model_q_str(&p->min, a);
			model_q_str(&p->max, b);
			snprintf(msg, sizeof(msg), "min is larger than max: %s", b);
			model_e_invalid_str(v, a, msg);
		}
		if (quantity_cmp(&p->max, &c->value) > 0) {
			model_q_str(&p->max, a);
			model_q_str(&c->value, b);
			snprintf(msg, sizeof(msg), "max is larger than capacity value: %s", b);
			model_e_invalid_str(v, a, msg);
		}
		if (quantity_cmp(&p->def, &p->max) > 0) {
			model_q_str(&p->def, a);
			model_q_str(&p->max, b);
			snprintf(msg, sizeof(msg), "default is more than max: %s", b);
			model_e_invalid_str(v, a, msg);
		}
		P_POP(v, f);
	}
	if (p->has_step) {
		struct quantity added;

		f = P_FIELD(v, "step");
		if (quantity_sign(&p->step) <= 0) {
			model_q_str(&p->step, a);
			model_e_invalid_str(v, a, "must be greater than zero");
			P_POP(v, f);
			return;
		}
		if (quantity_add(&p->min, &p->step, &added) == 0 &&
		    quantity_cmp(&added, &c->value) > 0) {
			char s[QUANTITY_STR_MAX];

			model_q_str(&p->step, a);
			model_q_str(&added, s);
			model_q_str(&c->value, b);
			snprintf(msg, sizeof(msg), "one step %s is larger than capacity value: %s",
				 s, b);
			model_e_invalid_str(v, a, msg);
		}
		v_range_step(v, &p->def, &p->min, &p->step);
		if (p->has_max)
			v_range_step(v, &p->max, &p->min, &p->step);
		P_POP(v, f);
	}
}

static void v_valid_values(struct model_val *v, const struct model_capacity *c)
{
	const struct model_request_policy *p = &c->request_policy;
	char a[QUANTITY_STR_MAX], b[QUANTITY_STR_MAX], msg[256];
	bool found = false;
	size_t f = P_FIELD(v, "validValues");

	for (size_t i = 0; i + 1 < p->n_valid_values; i++)
		if (quantity_cmp(&p->valid_values[i], &p->valid_values[i + 1]) > 0) {
			size_t ix = P_INDEX(v, i + 1);

			model_q_str(&p->valid_values[i + 1], a);
			model_e_invalid_str(v, a, "values must be sorted in ascending order");
			P_POP(v, ix);
		}
	if (p->n_valid_values > MAX_VALID_VALUES) {
		model_e_too_many(v, p->n_valid_values, MAX_VALID_VALUES);
	} else {
		for (size_t i = 0; i < p->n_valid_values; i++) {
			size_t ix = P_INDEX(v, i);

			if (quantity_cmp(&p->valid_values[i], &c->value) > 0) {
				model_q_str(&p->valid_values[i], a);
				model_q_str(&c->value, b);
				snprintf(msg, sizeof(msg),
					 "option is larger than capacity value: %s", b);
				model_e_invalid_str(v, a, msg);
			}
			if (quantity_cmp(&p->valid_values[i], &p->def) == 0)
				found = true;
			P_POP(v, ix);
		}
		/* Duplicates compare by integer value, as the API server keys them. */
		for (size_t i = 0; i < p->n_valid_values; i++)
			for (size_t j = 0; j < i; j++)
				if (quantity_value_ceil(&p->valid_values[i]) ==
				    quantity_value_ceil(&p->valid_values[j])) {
					size_t ix = P_INDEX(v, i);

					snprintf(a, sizeof(a), "%" PRId64,
						 quantity_value_ceil(&p->valid_values[i]));
					model_e_duplicate(v, a);
					P_POP(v, ix);
					break;
				}
	}
	if (!found) {
		model_q_str(&p->def, a);
		model_e_invalid_str(v, a,
				    "default value is not valid according to the requestPolicy");
	}
	P_POP(v, f);
}

static void v_request_policy(struct model_val *v, const struct model_capacity *c)
{
	const struct model_request_policy *p = &c->request_policy;
	size_t f = P_FIELD(v, "requestPolicy");
	size_t g;

	if (p->n_valid_values > 0 && p->has_valid_range) {
		model_e_forbidden(v, "exactly one policy can be specified, cannot specify \"validValues\" "
			    "and \"validRange\" at the same time");
	} else if (p->n_valid_values > 0) {
		if (!p->has_default) {
			g = P_FIELD(v, "default");
			model_e_required(v, "required when validValues is defined");
			P_POP(v, g);
		} else {
			v_valid_values(v, c);
		}
	} else if (p->has_valid_range) {
		if (!p->has_default) {
			g = P_FIELD(v, "default");
			model_e_required(v, "required when validRange is defined");
			P_POP(v, g);
		} else {
			g = P_FIELD(v, "validRange");
			v_valid_range(v, c);
			P_POP(v, g);
		}
	}
	P_POP(v, f);
}

/* A string or version value (scalar or list item) at the current path. */
static void v_attr_text(struct model_val *v, enum cel_attr_kind k, const union model_attr_scalar *x)
{
	if (!x->str.s)
		return;
	if (k == CEL_ATTR_VERSION && !model_semver_regex(x->str.s, x->str.len))
		model_e_invalid_str(v, x->str.s,
				    "must be a string compatible with semver.org spec 2.0.0");
	if (x->str.len > MAX_ATTR_VALUE_LEN)
		model_e_too_long(v, MAX_ATTR_VALUE_LEN);
}

static void v_attribute(struct model_val *v, const struct model_attribute *a)
{
	static const char *const fields[] = { "int", "bool", "string", "version", "ints", "bools",
					      "strings", "versions" };
	enum cel_attr_kind k = model_attr_elem_kind(a->type);
	size_t f = P_FIELD(v, fields[a->type]);

	if (!cel_attr_is_list(a->type)) {
		if (k == CEL_ATTR_STRING || k == CEL_ATTR_VERSION)
			v_attr_text(v, k, &a->v);
	} else if (a->n_items == 0) {
		if (a->items)   /* NULL: not a list, which decoding reported */
			model_e_required(v, "must not be empty");
	} else if (k == CEL_ATTR_STRING || k == CEL_ATTR_VERSION) {
		for (size_t i = 0; i < a->n_items; i++) {
			size_t ix = P_INDEX(v, i);

			v_attr_text(v, k, &a->items[i].v);
			P_POP(v, ix);
		}
	}
	P_POP(v, f);
}

/* Does the device use what limits its slice to MAX_DEVICES_ADVANCED? */
static bool device_is_advanced(const struct model_device *d)
{
	if (d->n_taints || d->n_consumes_counters)
		return true;
	for (size_t i = 0; i < d->n_attributes; i++)
		if (cel_attr_is_list(d->attributes[i].type))
			return true;
	return false;
}

static void v_string_list(struct model_val *v, const char *field, const char *const *items,
			  size_t n, int max)
{
	size_t f = P_FIELD(v, field);

	if (n > (size_t)max) {
		model_e_too_many(v, n, max);
	} else {
		for (size_t i = 0; i < n; i++) {
			size_t ix = P_INDEX(v, i);

			model_v_label_name(v, items[i]);
			P_POP(v, ix);
		}
	}
	P_POP(v, f);
}

static bool list_has(const char *const *items, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (model_str_eq(items[i], s))
			return true;
	return false;
}

/* validateDeviceBindingParameters, at the device's (or result's) path. */
static void v_binding(struct model_val *v, const char *const *cond, size_t n_cond,
		      const char *const *fail, size_t n_fail)
{
	size_t f;

	v_string_list(v, "bindingConditions", cond, n_cond, MAX_BINDING_CONDITIONS);
	v_string_list(v, "bindingFailureConditions", fail, n_fail, MAX_BINDING_CONDITIONS);
	if (n_cond > MAX_BINDING_CONDITIONS || n_fail > MAX_BINDING_CONDITIONS)
		return;         /* reported; the pairwise checks would be unbounded */
	f = P_FIELD(v, "bindingConditions");
	for (size_t i = 0; i < n_cond; i++)
		if (list_has(cond, i, cond[i])) {
			size_t ix = P_INDEX(v, i);

			model_e_duplicate(v, cond[i]);
			P_POP(v, ix);
		}
	P_POP(v, f);
	f = P_FIELD(v, "bindingFailureConditions");
	for (size_t i = 0; i < n_fail; i++) {
		size_t ix = P_INDEX(v, i);

		if (list_has(fail, i, fail[i]))
			model_e_duplicate(v, fail[i]);
		if (list_has(cond, n_cond, fail[i]))
			model_e_invalid_str(v, fail[i],
					    "bindingFailureConditions must not overlap with "
				      "bindingConditions");
		P_POP(v, ix);
	}
	P_POP(v, f);
	if (n_cond == 0 && n_fail > 0) {
		f = P_FIELD(v, "bindingConditions");
		model_e_invalid_raw(v, "[]string(nil)", "bindingConditions are required to use "
			      "bindingFailureConditions");
		P_POP(v, f);
	}
	if (n_fail == 0 && n_cond > 0) {
		f = P_FIELD(v, "bindingFailureConditions");
		model_e_invalid_raw(v, "[]string(nil)",
				    "bindingFailureConditions are required to use "
			      "bindingConditions");
		P_POP(v, f);
	}
}

static void v_device(struct model_val *v, const struct model_device *d, bool per_device)
{
	bool multi = d->has_allow_multiple_allocations && d->allow_multiple_allocations;
	size_t f, total = d->n_attributes + d->n_capacity, values = 0;

	f = P_FIELD(v, "name");
	model_v_dns_label(v, d->name);
	P_POP(v, f);
	if (total > MAX_ATTRS_AND_CAPS) {
		char msg[96];

		snprintf(msg, sizeof(msg), "the total number of attributes and capacities must "
			 "not exceed %d", MAX_ATTRS_AND_CAPS);
		model_e_invalid_int(v, (int64_t)total, msg);
	}
	f = P_FIELD(v, "attributes");
	for (size_t i = 0; i < d->n_attributes; i++) {
		size_t k = model_p_key_cut(v, d->attributes[i].name, ATTR_KEY_MAX);

		model_v_qualified_name(v, d->attributes[i].name);
		v_attribute(v, &d->attributes[i]);
		P_POP(v, k);
		values += model_attr_n_values(&d->attributes[i]);
	}
	if (values > MAX_ATTR_VALUES) {
		char msg[96];

		snprintf(msg, sizeof(msg), "the total number of attribute values (list items "
			 "count individually) must not exceed %d", MAX_ATTR_VALUES);
		model_e_invalid_int(v, (int64_t)values, msg);
	}
	P_POP(v, f);
	f = P_FIELD(v, "capacity");
	for (size_t i = 0; i < d->n_capacity; i++) {
		const struct model_capacity *c = &d->capacity[i];
		size_t k = model_p_key_cut(v, c->name, ATTR_KEY_MAX);

		model_v_qualified_name(v, c->name);
		if (c->has_request_policy) {
			if (multi) {
				v_request_policy(v, c);
			} else {
				size_t g = P_FIELD(v, "requestPolicy");

				model_e_forbidden(v, "allowMultipleAllocations must be true");
				P_POP(v, g);
			}
		}
		P_POP(v, k);
	}
	P_POP(v, f);
	model_v_taints(v, "taints", d->taints, d->n_taints, MAX_DEVICE_TAINTS,
		       model_device_effects);
	v_counter_sets(v, "consumesCounters", "counterSet", d->consumes_counters,
		       d->n_consumes_counters, MAX_CONSUMPTIONS, MAX_COUNTERS_PER_CONS);
	if (per_device) {
		const char *set[3];
		int n_set = 0;

		if (d->node_name) {
			f = P_FIELD(v, "nodeName");
			if (d->node_name[0]) {
				set[n_set++] = "`nodeName`";
				v_node_name(v, d->node_name);
			} else {
				model_e_invalid_str(v, "", "must not be empty");
			}
			P_POP(v, f);
		}
		if (d->node_selector) {
			set[n_set++] = "`nodeSelector`";
			f = P_FIELD(v, "nodeSelector");
			model_v_node_selector(v, d->node_selector);
			P_POP(v, f);
		}
		if (d->has_all_nodes) {
			if (d->all_nodes) {
				set[n_set++] = "`allNodes`";
			} else {
				f = P_FIELD(v, "allNodes");
				model_e_invalid_raw(v, "false",
						    "must be either unset or set to true");
				P_POP(v, f);
			}
		}
		if (n_set == 0) {
			model_e_required(v, "exactly one of `nodeName`, `nodeSelector`, or `allNodes` is "
				   "required when `perDeviceNodeSelection` is set to true in the "
				   "ResourceSlice spec");
		} else if (n_set > 1) {
			char which[128];

			snprintf(which, sizeof(which), "{%s, %s%s%s}", set[0], set[1],
				 n_set > 2 ? ", " : "", n_set > 2 ? set[2] : "");
			model_e_invalid_str(v, which,
					    "exactly one of `nodeName`, `nodeSelector`, or "
				      "`allNodes` is required when `perDeviceNodeSelection` is set "
				      "to true in the ResourceSlice spec");
		}
	} else if (d->node_name || d->node_selector || d->has_all_nodes) {
		model_e_invalid_raw(v, "null",
				    "`nodeName`, `nodeSelector` and `allNodes` can only be "
			      "set if `perDeviceNodeSelection` is set to true in the ResourceSlice "
			      "spec");
	}
	v_binding(v, d->binding_conditions, d->n_binding_conditions,
		  d->binding_failure_conditions, d->n_binding_failure_conditions);
}

void model_v_slice(struct model_val *v, const struct model_resource_slice_spec *s)
{
	size_t sp = P_FIELD(v, "spec");
	size_t f, g;
	const char *set[4];
	int n_set = 0;
	bool advanced = false;
	int max_devices;

	f = P_FIELD(v, "driver");
	model_v_driver_name(v, s->driver);
	P_POP(v, f);
	f = P_FIELD(v, "pool");
	g = P_FIELD(v, "name");
	model_v_pool_name(v, s->pool.name);
	P_POP(v, g);
	if (s->pool.resource_slice_count <= 0) {
		g = P_FIELD(v, "resourceSliceCount");
		model_e_invalid_int(v, s->pool.resource_slice_count, "must be greater than zero");
		P_POP(v, g);
	}
	if (s->pool.generation < 0) {
		g = P_FIELD(v, "generation");
		model_e_invalid_int(v, s->pool.generation, "must be greater than or equal to zero");
		P_POP(v, g);
	}
	P_POP(v, f);

	if (s->node_name) {
		f = P_FIELD(v, "nodeName");
		if (s->node_name[0]) {
			set[n_set++] = "`nodeName`";
			v_node_name(v, s->node_name);
		} else {
			model_e_invalid_str(v, "",
					    "must be either unset or set to a non-empty string");
		}
		P_POP(v, f);
	}
	if (s->node_selector) {
		set[n_set++] = "`nodeSelector`";
		f = P_FIELD(v, "nodeSelector");
		model_v_node_selector(v, s->node_selector);
		if (s->node_selector->n_terms != 1) {
			g = P_FIELD(v, "nodeSelectorTerms");
			model_e_invalid_raw(v, "[...]", "must have exactly one node selector term");
			P_POP(v, g);
		}
		P_POP(v, f);
	}
	if (s->has_all_nodes) {
		if (s->all_nodes) {
			set[n_set++] = "`allNodes`";
		} else {
			f = P_FIELD(v, "allNodes");
			model_e_invalid_raw(v, "false", "must be either unset or set to true");
			P_POP(v, f);
		}
	}
	if (s->has_per_device_node_selection) {
		if (s->per_device_node_selection) {
			set[n_set++] = "`perDeviceNodeSelection`";
		} else {
			f = P_FIELD(v, "perDeviceNodeSelection");
			model_e_invalid_raw(v, "false", "must be either unset or set to true");
			P_POP(v, f);
		}
	}
	if (n_set == 0) {
		model_e_required(v, "exactly one of `nodeName`, `nodeSelector`, `allNodes`, "
			   "`perDeviceNodeSelection` is required");
	} else if (n_set > 1) {
		struct strbuf which = STRBUF_INIT;

		sb_putc(&which, '{');
		for (int i = 0; i < n_set; i++) {
			if (i)
				sb_puts(&which, ", ");
			sb_puts(&which, set[i]);
		}
		sb_putc(&which, '}');
		model_e_invalid_str(v, sb_str(&which), "exactly one of `nodeName`, `nodeSelector`, "
			      "`allNodes`, `perDeviceNodeSelection` is required, but multiple "
			      "fields are set");
		sb_free(&which);
	}
	if (s->n_shared_counters && s->n_devices)
		model_e_invalid_str(v, "", "only one of `sharedCounters` or `devices` is allowed");

	for (size_t i = 0; i < s->n_devices; i++)
		advanced |= device_is_advanced(&s->devices[i]);
	max_devices = advanced ? MAX_DEVICES_ADVANCED : MAX_DEVICES;
	f = P_FIELD(v, "devices");
	if (s->n_devices > (size_t)max_devices) {
		model_e_too_many(v, s->n_devices, max_devices);
	} else {
		bool per_device = s->has_per_device_node_selection && s->per_device_node_selection;

		for (size_t i = 0; i < s->n_devices; i++) {
			size_t ix = P_INDEX(v, i);

			v_device(v, &s->devices[i], per_device);
			P_POP(v, ix);
		}
		for (size_t i = 0; i < s->n_devices; i++)
			for (size_t j = 0; j < i; j++)
				if (model_str_eq(s->devices[i].name, s->devices[j].name)) {
					size_t ix = P_INDEX(v, i);

					model_e_duplicate(v, s->devices[i].name);
					P_POP(v, ix);
					break;
				}
	}
	P_POP(v, f);
	v_counter_sets(v, "sharedCounters", "name", s->shared_counters, s->n_shared_counters,
		       MAX_COUNTER_SETS, MAX_COUNTERS_PER_SET);
	P_POP(v, sp);
}

/* ---- DeviceClass ---- */

static bool is_extended_resource_name(const char *name)
{
	char prefixed[512];
	struct names_msgs m;

	if (!strchr(name, '/') || strstr(name, "kubernetes.io/") || !strncmp(name, "requests.", 9))
		return false;
	snprintf(prefixed, sizeof(prefixed), "requests.%s", name);
	return names_qualified_name(prefixed, strlen(prefixed), &m) == 0;
}

static void v_class_configs(struct model_val *v, const struct model_device_config *c, size_t n)
{
	size_t f = P_FIELD(v, "config");

	if (n > MAX_CONFIG) {
		model_e_too_many(v, n, MAX_CONFIG);
	} else {
		for (size_t i = 0; i < n; i++) {
			size_t ix = P_INDEX(v, i);

			v_opaque(v, &c[i]);
			P_POP(v, ix);
		}
	}
	P_POP(v, f);
}

void model_v_device_class(struct model_val *v, const struct model_device_class_spec *c)
{
	size_t sp = P_FIELD(v, "spec");

	v_selectors(v, c->selectors, c->n_selectors);
	v_class_configs(v, c->config, c->n_config);
	if (c->extended_resource_name && !is_extended_resource_name(c->extended_resource_name)) {
		size_t f = P_FIELD(v, "extendedResourceName");

		model_e_invalid_str(v, c->extended_resource_name,
				    "must be a valid extended resource name");
		P_POP(v, f);
	}
	P_POP(v, sp);
}

/* ---- ResourceClaim ---- */

/* Whether "req" or "req/sub" names a request of the claim. */
static bool claim_has_request(const struct model_claim_spec *c, const char *ref)
{
	const char *slash = strchr(ref, '/');
	size_t n = slash ? (size_t)(slash - ref) : strlen(ref);

	if (slash && strchr(slash + 1, '/'))
		return false;
	for (size_t i = 0; i < c->n_requests; i++) {
		const struct model_device_request *r = &c->requests[i];

		if (!r->name || strlen(r->name) != n || strncmp(r->name, ref, n))
			continue;
		if (!slash)
			return true;
		for (size_t j = 0; j < r->n_first_available; j++)
			if (model_str_eq(r->first_available[j].name, slash + 1))
				return true;
		return false;
	}
	return false;
}

#define REQUEST_REF_MSG "must be the name of a request in the claim or the name of a " \
			"request and a subrequest separated by '/'"

static void v_request_ref(struct model_val *v, const struct model_claim_spec *c, const char *ref)
{
	const char *p = ref;
	int slashes = 0;

	for (const char *q = ref; *q; q++)
		slashes += *q == '/';
	if (slashes > 1) {
		model_e_invalid_str(v, ref, REQUEST_REF_MSG);
		return;
	}
	for (;;) {
		const char *slash = strchr(p, '/');
		char seg[300];
		size_t n = slash ? (size_t)(slash - p) : strlen(p);

		if (n >= sizeof(seg))
			n = sizeof(seg) - 1;
		memcpy(seg, p, n);
		seg[n] = '\0';
		model_v_dns_label(v, seg);
		if (!slash)
			break;
		p = slash + 1;
	}
	if (!claim_has_request(c, ref))
		model_e_invalid_str(v, ref, REQUEST_REF_MSG);
}

static void v_request_refs(struct model_val *v, const struct model_claim_spec *c,
			   const char *const *refs, size_t n)
{
	size_t f = P_FIELD(v, "requests");

	if (n > MAX_REQUESTS) {
		model_e_too_many(v, n, MAX_REQUESTS);
	} else {
		for (size_t i = 0; i < n; i++) {
			size_t ix = P_INDEX(v, i);

			v_request_ref(v, c, refs[i]);
			P_POP(v, ix);
		}
		for (size_t i = 0; i < n; i++)
			if (list_has(refs, i, refs[i])) {
				size_t ix = P_INDEX(v, i);

				model_e_duplicate(v, refs[i]);
				P_POP(v, ix);
			}
	}
	P_POP(v, f);
}

static const char *const allocation_modes[] = { "All", "ExactCount", NULL };

static void v_exact(struct model_val *v, const struct model_exact_request *r, bool sub)
{
	size_t f = P_FIELD(v, "deviceClassName");

	if (model_empty(r->device_class_name))
		model_e_required(v, "");
	else
		model_v_dns_subdomain(v, r->device_class_name);
	P_POP(v, f);
	v_selectors(v, r->selectors, r->n_selectors);
	switch (r->allocation_mode) {
	case MODEL_ALLOC_ALL:
		if (r->has_count && r->count != 0) {
			f = P_FIELD(v, "count");
			model_e_invalid_int(v, r->count,
					    "must not be specified when allocationMode is 'All'");
			P_POP(v, f);
		}
		break;
	case MODEL_ALLOC_EXACT_COUNT:
		if (r->count <= 0) {
			f = P_FIELD(v, "count");
			model_e_invalid_int(v, r->count, "must be greater than zero");
			P_POP(v, f);
		}
		break;
	default:
		f = P_FIELD(v, "allocationMode");
		model_e_not_supported(v, r->allocation_mode_text, allocation_modes);
		P_POP(v, f);
	}
	if (sub && r->has_admin_access) {
		f = P_FIELD(v, "adminAccess");
		model_e_forbidden(v, "only allowed in `exactly` requests, not in subrequests");
		P_POP(v, f);
	}
	f = P_FIELD(v, "tolerations");
	if (r->n_tolerations > MAX_TOLERATIONS) {
		model_e_too_many(v, r->n_tolerations, MAX_TOLERATIONS);
	} else {
		for (size_t i = 0; i < r->n_tolerations; i++) {
			size_t ix = P_INDEX(v, i);

			model_v_device_toleration(v, &r->tolerations[i]);
			P_POP(v, ix);
		}
	}
	P_POP(v, f);
	if (r->capacity_requests.n_items) {
		f = P_FIELD(v, "capacity");
		size_t g = P_FIELD(v, "requests");

		for (size_t i = 0; i < r->capacity_requests.n_items; i++) {
			size_t k = P_KEY(v, r->capacity_requests.items[i].name);

			model_v_qualified_name(v, r->capacity_requests.items[i].name);
			P_POP(v, k);
		}
		P_POP(v, g);
		P_POP(v, f);
	}
}

static void v_request(struct model_val *v, const struct model_device_request *r)
{
	size_t f = P_FIELD(v, "name");
	bool has_exactly = r->exactly != NULL;
	bool has_first = r->n_first_available > 0;

	model_v_dns_label(v, r->name);
	P_POP(v, f);
	if (!has_exactly && !has_first) {
		model_e_required(v, "exactly one of `exactly` or `firstAvailable` is required");
	} else if (has_exactly && has_first) {
		model_e_invalid_raw(v, "null",
				    "exactly one of `exactly` or `firstAvailable` is required, "
			      "but multiple fields are set");
	} else if (has_first) {
		f = P_FIELD(v, "firstAvailable");
		if (r->n_first_available > MAX_SUBREQUESTS) {
			model_e_too_many(v, r->n_first_available, MAX_SUBREQUESTS);
		} else {
			for (size_t i = 0; i < r->n_first_available; i++) {
				size_t ix = P_INDEX(v, i);
				size_t g = P_FIELD(v, "name");

				model_v_dns_label(v, r->first_available[i].name);
				P_POP(v, g);
				v_exact(v, &r->first_available[i].req, true);
				P_POP(v, ix);
			}
			for (size_t i = 0; i < r->n_first_available; i++)
				for (size_t j = 0; j < i; j++)
					if (model_str_eq(r->first_available[i].name,
						   r->first_available[j].name)) {
						size_t ix = P_INDEX(v, i);

						model_e_duplicate(v, r->first_available[i].name);
						P_POP(v, ix);
						break;
					}
		}
		P_POP(v, f);
	} else {
		f = P_FIELD(v, "exactly");
		v_exact(v, r->exactly, false);
		P_POP(v, f);
	}
}

static void v_claim_spec(struct model_val *v, const struct model_claim_spec *c)
{
	size_t dv = P_FIELD(v, "devices");
	size_t f = P_FIELD(v, "requests");

	if (c->n_requests > MAX_REQUESTS) {
		model_e_too_many(v, c->n_requests, MAX_REQUESTS);
	} else {
		for (size_t i = 0; i < c->n_requests; i++) {
			size_t ix = P_INDEX(v, i);

			v_request(v, &c->requests[i]);
			P_POP(v, ix);
		}
		for (size_t i = 0; i < c->n_requests; i++)
			for (size_t j = 0; j < i; j++)
				if (model_str_eq(c->requests[i].name, c->requests[j].name)) {
					size_t ix = P_INDEX(v, i);

					model_e_duplicate(v, c->requests[i].name);
					P_POP(v, ix);
					break;
				}
	}
	P_POP(v, f);

	f = P_FIELD(v, "constraints");
	if (c->n_constraints > MAX_CONSTRAINTS) {
		model_e_too_many(v, c->n_constraints, MAX_CONSTRAINTS);
	} else {
		for (size_t i = 0; i < c->n_constraints; i++) {
			const struct model_constraint *k = &c->constraints[i];
			size_t ix = P_INDEX(v, i);
			size_t g;

			v_request_refs(v, c, k->requests, k->n_requests);
			if (k->match_attribute && k->distinct_attribute) {
				model_e_invalid_raw(v, "null",
						    "exactly one of \"matchAttribute\" or "
					      "\"distinctAttribute\" is required, but multiple "
					      "fields are set");
			} else if (k->match_attribute) {
				g = P_FIELD(v, "matchAttribute");
				model_v_fully_qualified_name(v, k->match_attribute);
				P_POP(v, g);
			} else if (k->distinct_attribute) {
				g = P_FIELD(v, "distinctAttribute");
				model_v_fully_qualified_name(v, k->distinct_attribute);
				P_POP(v, g);
			} else {
				model_e_required(v, "exactly one of \"matchAttribute\" or "
					   "\"distinctAttribute\" is required");
			}
			P_POP(v, ix);
		}
	}
	P_POP(v, f);

	f = P_FIELD(v, "config");
	if (c->n_config > MAX_CONFIG) {
		model_e_too_many(v, c->n_config, MAX_CONFIG);
	} else {
		for (size_t i = 0; i < c->n_config; i++) {
			size_t ix = P_INDEX(v, i);

			v_request_refs(v, c, c->config[i].requests, c->config[i].n_requests);
			v_opaque(v, &c->config[i]);
			P_POP(v, ix);
		}
	}
	P_POP(v, f);
	P_POP(v, dv);
}

static const char *const config_sources[] = { "FromClaim", "FromClass", NULL };

static void v_allocation(struct model_val *v, const struct model_claim_spec *c,
			 const struct model_allocation *a)
{
	size_t al = P_FIELD(v, "allocation");
	size_t dv = P_FIELD(v, "devices");
	size_t f = P_FIELD(v, "results");

	if (a->n_results > MAX_RESULTS) {
		model_e_too_many(v, a->n_results, MAX_RESULTS);
	} else {
		for (size_t i = 0; i < a->n_results; i++) {
			const struct model_allocation_result *r = &a->results[i];
			size_t ix = P_INDEX(v, i);
			size_t g;

			g = P_FIELD(v, "request");
			v_request_ref(v, c, r->request ? r->request : "");
			P_POP(v, g);
			g = P_FIELD(v, "driver");
			model_v_driver_name(v, r->driver);
			P_POP(v, g);
			g = P_FIELD(v, "pool");
			model_v_pool_name(v, r->pool);
			P_POP(v, g);
			g = P_FIELD(v, "device");
			model_v_dns_label(v, r->device);
			P_POP(v, g);
			v_binding(v, r->binding_conditions, r->n_binding_conditions,
				  r->binding_failure_conditions, r->n_binding_failure_conditions);
			if (r->share_id) {
				g = P_FIELD(v, "shareID");
				model_v_uid(v, r->share_id);
				P_POP(v, g);
			}
			P_POP(v, ix);
		}
	}
	P_POP(v, f);
	f = P_FIELD(v, "config");
	if (a->n_config > 2 * MAX_CONFIG) {
		model_e_too_many(v, a->n_config, 2 * MAX_CONFIG);
	} else {
		for (size_t i = 0; i < a->n_config; i++) {
			const struct model_device_config *k = &a->config[i];
			size_t ix = P_INDEX(v, i);
			size_t g = P_FIELD(v, "source");

			if (model_empty(k->source))
				model_e_required(v, "");
			else if (!model_in_list(k->source, config_sources))
				model_e_not_supported(v, k->source, config_sources);
			P_POP(v, g);
			v_request_refs(v, c, k->requests, k->n_requests);
			v_opaque(v, k);
			P_POP(v, ix);
		}
	}
	P_POP(v, f);
	P_POP(v, dv);
	if (a->node_selector) {
		f = P_FIELD(v, "nodeSelector");
		model_v_node_selector(v, a->node_selector);
		P_POP(v, f);
	}
	P_POP(v, al);
}

void model_v_claim(struct model_val *v, const struct model_resource_claim *c)
{
	size_t f = P_FIELD(v, "spec");
	size_t st, g;

	v_claim_spec(v, &c->spec);
	P_POP(v, f);
	st = P_FIELD(v, "status");
	if (c->status.allocation)
		v_allocation(v, &c->spec, c->status.allocation);
	g = P_FIELD(v, "reservedFor");
	if (c->status.n_reserved_for > MAX_RESERVED_FOR) {
		model_e_too_many(v, c->status.n_reserved_for, MAX_RESERVED_FOR);
	} else {
		for (size_t i = 0; i < c->status.n_reserved_for; i++) {
			const struct model_consumer_ref *r = &c->status.reserved_for[i];
			size_t ix = P_INDEX(v, i);
			size_t h;

			if (model_empty(r->resource)) {
				h = P_FIELD(v, "resource");
				model_e_required(v, "");
				P_POP(v, h);
			}
			if (model_empty(r->name)) {
				h = P_FIELD(v, "name");
				model_e_required(v, "");
				P_POP(v, h);
			}
			if (model_empty(r->uid)) {
				h = P_FIELD(v, "uid");
				model_e_required(v, "");
				P_POP(v, h);
			}
			for (size_t j = 0; j < i; j++)
				if (model_str_eq(r->uid, c->status.reserved_for[j].uid)) {
					model_e_duplicate(v, r->uid);
					break;
				}
			P_POP(v, ix);
		}
		if (c->status.n_reserved_for && !c->status.allocation)
			model_e_forbidden(v, "may not be specified when `allocated` is not set");
	}
	P_POP(v, g);
	P_POP(v, st);
}

void model_v_claim_template(struct model_val *v, const struct model_resource_claim_template *t)
{
	size_t sp = P_FIELD(v, "spec");
	size_t md = P_FIELD(v, "metadata");
	size_t f = P_FIELD(v, "labels");

	model_v_labels(v, t->claim_meta.labels, t->claim_meta.n_labels);
	P_POP(v, f);
	f = P_FIELD(v, "annotations");
	model_v_annotations(v, t->claim_meta.annotations, t->claim_meta.n_annotations);
	P_POP(v, f);
	P_POP(v, md);
	f = P_FIELD(v, "spec");
	v_claim_spec(v, &t->spec);
	P_POP(v, f);
	P_POP(v, sp);
}

/* ---- DeviceTaintRule (validateDeviceTaintRuleSpec, and the status as
 * ValidateDeviceTaintRuleStatusUpdate checks it) ---- */

#define CONDITION_REASON_MAX    1024
#define CONDITION_MESSAGE_MAX   (32 * 1024)
#define CONDITION_REASON_MSG \
	"a condition reason must start with alphabetic character, optionally followed by a " \
	"string of alphanumeric characters or '_,:', and must end with an alphanumeric " \
	"character or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName',  or " \
	"'ReasonA,ReasonB',  or 'ReasonA:ReasonB', regex used for validation is " \
	"'[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?')"

static const char *const condition_statuses[] = { "False", "True", "Unknown", NULL };

static void v_taint_selector(struct model_val *v, const struct model_device_taint_selector *s)
{
	size_t f = P_FIELD(v, "deviceSelector"), g;

	if (s->driver) {
		g = P_FIELD(v, "driver");
		model_v_driver_name(v, s->driver);
		P_POP(v, g);
	}
	if (s->pool) {
		g = P_FIELD(v, "pool");
		model_v_pool_name(v, s->pool);
		P_POP(v, g);
	}
	if (s->device) {
		g = P_FIELD(v, "device");
		model_v_dns_label(v, s->device);
		P_POP(v, g);
	}
	/* Ignoring them would select more devices than the author meant. */
	if (s->has_device_class_name) {
		g = P_FIELD(v, "deviceClassName");
		model_e_forbidden(v, "removed in Kubernetes 1.35: a DeviceTaintRule selects by "
				  "driver, pool and device");
		P_POP(v, g);
	}
	if (s->has_selectors) {
		g = P_FIELD(v, "selectors");
		model_e_forbidden(v, "removed in Kubernetes 1.35: a DeviceTaintRule selects by "
				  "driver, pool and device");
		P_POP(v, g);
	}
	P_POP(v, f);
}

static bool condition_reason_ok(const char *s)
{
	size_t n = strlen(s);

	if (!n || !((s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z')))
		return false;
	for (size_t i = 1; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		bool word = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
			    (c >= '0' && c <= '9') || c == '_';

		if (!word && (i == n - 1 || (c != ',' && c != ':')))
			return false;
	}
	return true;
}

/* metav1 validation's ValidateCondition. */
static void v_condition(struct model_val *v, const struct model_condition *c)
{
	size_t f = P_FIELD(v, "type");

	model_v_label_name(v, c->type);
	P_POP(v, f);
	if (!model_in_list(c->status ? c->status : "", condition_statuses)) {
		f = P_FIELD(v, "status");
		model_e_not_supported(v, c->status ? c->status : "", condition_statuses);
		P_POP(v, f);
	}
	if (c->has_observed_generation && c->observed_generation < 0) {
		f = P_FIELD(v, "observedGeneration");
		model_e_invalid_int(v, c->observed_generation,
				    "must be greater than or equal to zero");
		P_POP(v, f);
	}
	if (model_empty(c->last_transition_time)) {
		f = P_FIELD(v, "lastTransitionTime");
		model_e_required(v, "must be set");
		P_POP(v, f);
	}
	f = P_FIELD(v, "reason");
	if (model_empty(c->reason)) {
		model_e_required(v, "must be set");
	} else {
		if (!condition_reason_ok(c->reason))
			model_e_invalid_str(v, c->reason, CONDITION_REASON_MSG);
		if (strlen(c->reason) > CONDITION_REASON_MAX)
			model_e_too_long(v, CONDITION_REASON_MAX);
	}
	P_POP(v, f);
	if (c->message && strlen(c->message) > CONDITION_MESSAGE_MAX) {
		f = P_FIELD(v, "message");
		model_e_too_long(v, CONDITION_MESSAGE_MAX);
		P_POP(v, f);
	}
}

/* Over the limit, the list is reported once and its items are not looked
 * at (the model's rule for every list; it also keeps the duplicate check
 * from being quadratic on hostile input). */
static void v_conditions(struct model_val *v, const struct model_condition *c, size_t n)
{
	size_t st = P_FIELD(v, "status"), f = P_FIELD(v, "conditions");

	if (n > MAX_RULE_CONDITIONS)
		model_e_too_many(v, n, MAX_RULE_CONDITIONS);
	for (size_t i = 0; n <= MAX_RULE_CONDITIONS && i < n; i++) {
		size_t ix = P_INDEX(v, i);

		for (size_t j = 0; j < i; j++)
			if (!strcmp(c[j].type ? c[j].type : "", c[i].type ? c[i].type : "")) {
				size_t t = P_FIELD(v, "type");

				model_e_duplicate(v, c[i].type ? c[i].type : "");
				P_POP(v, t);
				break;
			}
		v_condition(v, &c[i]);
		P_POP(v, ix);
	}
	P_POP(v, f);
	P_POP(v, st);
}

void model_v_taint_rule(struct model_val *v, const struct model_device_taint_rule *r)
{
	size_t sp = P_FIELD(v, "spec"), f;

	if (r->device_selector)
		v_taint_selector(v, r->device_selector);
	f = P_FIELD(v, "taint");
	model_v_taint(v, &r->taint, model_device_effects);
	P_POP(v, f);
	P_POP(v, sp);
	if (r->n_conditions)
		v_conditions(v, r->conditions, r->n_conditions);
}
