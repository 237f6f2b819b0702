/* model_validate_karpenter.c - the schema and CEL rules of the Karpenter
 * CRDs: NodePool (requirements, node class reference, taints, limits) and
 * NodeClaim. */
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"
#include "strbuf.h"

/* ---- Karpenter (the CRDs' schema and CEL rules) ---- */

static const char *const requirement_ops[] = {
	"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", NULL
};

/* Gt and Lt compare a label with a number: the CRD's rule is
 * `values.size() == 1 && int(values[0]) >= 0`, CEL's int() of a string
 * being Go's strconv.ParseInt (an optional sign, decimal digits, 64 bits). */
static bool is_nonnegative_int(const char *s)
{
	size_t digits;

	if (*s == '+')
		s++;
	else if (*s == '-')
		return !strcmp(s, "-0") || (s[1] && strspn(s + 1, "0") == strlen(s + 1));
	digits = strspn(s, "0123456789");
	if (!digits || s[digits])
		return false;
	while (*s == '0' && s[1])
		s++;
	/* 9223372036854775807 has 19 digits. */
	digits = strlen(s);
	return digits < 19 || (digits == 19 && strcmp(s, "9223372036854775807") <= 0);
}

/* The values a requirement's operator takes: the Karpenter CRD's rules
 * (In needs values, Gt/Lt one non-negative integer, its messages) and the
 * core NodeSelectorRequirement rules Karpenter's scheduling relies on
 * (NotIn needs values, Exists/DoesNotExist take none). */
static void v_karpenter_values(struct model_val *v, const struct model_requirement *r)
{
	size_t g = P_FIELD(v, "values");

	switch (r->op) {
	case MODEL_OP_IN:
	case MODEL_OP_NOT_IN:
		if (r->n_values == 0)
			model_e_required(v, r->op == MODEL_OP_IN ?
				   "requirements with operator 'In' must have a value defined" :
				   "requirements with operator 'NotIn' must have a value defined");
		break;
	case MODEL_OP_EXISTS:
	case MODEL_OP_DOES_NOT_EXIST:
		if (r->n_values > 0)
			model_e_forbidden(v, "may not be specified when `operator` is 'Exists' or "
				    "'DoesNotExist'");
		break;
	case MODEL_OP_GT:
	case MODEL_OP_LT:
		if (r->n_values != 1) {
			model_e_required(v, "must be specified single value when `operator` is 'Lt' or 'Gt'");
		} else if (!is_nonnegative_int(r->values[0])) {
			size_t ix = P_INDEX(v, 0);

			model_e_invalid_str(v, r->values[0],
					    "requirements operator 'Gt' or 'Lt' must have "
				      "a single positive integer value");
			P_POP(v, ix);
		}
		break;
	default:
		break;
	}
	P_POP(v, g);
}

static void v_karpenter_requirements(struct model_val *v, const struct model_requirement *r,
				     size_t n)
{
	size_t f = P_FIELD(v, "requirements");

	if (n > 100) {
		model_e_too_many(v, n, 100);
		P_POP(v, f);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		size_t ix = P_INDEX(v, i);
		size_t g;

		g = P_FIELD(v, "key");
		if (model_empty(r[i].key))
			model_e_required(v, "");
		else
			model_v_label_name(v, r[i].key);
		P_POP(v, g);
		g = P_FIELD(v, "operator");
		if (model_empty(r[i].operator_text))
			model_e_required(v, "");
		else if (r[i].op == MODEL_OP_INVALID)
			model_e_not_supported(v, r[i].operator_text, requirement_ops);
		P_POP(v, g);
		v_karpenter_values(v, &r[i]);
		if (r[i].has_min_values) {
			g = P_FIELD(v, "minValues");
			if (r[i].min_values < 1)
				model_e_invalid_int(v, r[i].min_values,
						    "should be greater than or equal to 1");
			else if (r[i].min_values > 50)
				model_e_invalid_int(v, r[i].min_values,
						    "should be less than or equal to 50");
			else if (r[i].op == MODEL_OP_IN && (size_t)r[i].min_values > r[i].n_values)
				model_e_invalid_int(v, r[i].min_values,
						    "requirements with 'minValues' must "
					      "have at least that many values specified in the "
					      "'values' field");
			P_POP(v, g);
		}
		P_POP(v, ix);
	}
	P_POP(v, f);
}

static void v_node_class_ref(struct model_val *v, const struct model_node_class_ref *r)
{
	size_t f = P_FIELD(v, "nodeClassRef");
	static const char *const fields[] = { "group", "kind", "name" };
	const char *values[] = { r->group, r->kind, r->name };

	if (!r->group && !r->kind && !r->name) {
		model_e_required(v, "");
		P_POP(v, f);
		return;
	}
	for (int i = 0; i < 3; i++)
		if (model_empty(values[i])) {
			size_t g = P_FIELD(v, fields[i]);

			model_e_required(v, "");
			P_POP(v, g);
		}
	P_POP(v, f);
}

void model_v_node_pool(struct model_val *v, const struct model_node_pool *p)
{
	size_t sp = P_FIELD(v, "spec");
	size_t t = P_FIELD(v, "template");
	size_t f = P_FIELD(v, "metadata");
	size_t g = P_FIELD(v, "labels");

	model_v_labels(v, p->template_labels, p->n_template_labels);
	P_POP(v, g);
	P_POP(v, f);
	f = P_FIELD(v, "spec");
	v_node_class_ref(v, &p->node_class_ref);
	v_karpenter_requirements(v, p->requirements, p->n_requirements);
	model_v_taints(v, "taints", p->taints, p->n_taints, -1, model_core_effects);
	model_v_taints(v, "startupTaints", p->startup_taints, p->n_startup_taints, -1,
		       model_core_effects);
	P_POP(v, f);
	P_POP(v, t);
	model_v_resource_list(v, "limits", &p->limits);
	if (p->has_weight && (p->weight < 1 || p->weight > 100)) {
		f = P_FIELD(v, "weight");
		model_e_invalid_int(v, p->weight,
				    p->weight < 1 ? "should be greater than or equal to 1" :
			      "should be less than or equal to 100");
		P_POP(v, f);
	}
	P_POP(v, sp);
}

void model_v_node_claim(struct model_val *v, const struct model_node_claim *c)
{
	size_t sp = P_FIELD(v, "spec");

	v_node_class_ref(v, &c->node_class_ref);
	v_karpenter_requirements(v, c->requirements, c->n_requirements);
	model_v_taints(v, "taints", c->taints, c->n_taints, -1, model_core_effects);
	model_v_taints(v, "startupTaints", c->startup_taints, c->n_startup_taints, -1,
		       model_core_effects);
	P_POP(v, sp);
}
