/* model_validate_karpenter.c - the schema and CEL rules of the Karpenter
 * CRDs: NodePool (requirements, node class reference, taints, limits),
 * NodeClaim and NodeOverlay (requirements, price or priceAdjustment,
 * capacity, weight). */
#include <errno.h>
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

/* ---- NodeOverlay (karpenter.sh/v1alpha1, nodeoverlays.karpenter.sh) ----
 *
 * The CRD's schema: patterns and limits on each field, and CEL rules
 * whose messages the API server prints as `Invalid value: "object"` (or
 * "array", "string": the type of the value the rule is on). As for the
 * NodePool, the "FIELD in body" prefix kube-openapi puts before a schema
 * message is left out. */

#define OVERLAY_MAX_REQUIREMENTS        100
#define OVERLAY_MAX_KEY_LEN             316
#define OVERLAY_MAX_VALUE_LEN           63
#define OVERLAY_MAX_WEIGHT              10000

static const char overlay_key_pattern[] =
	"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*(\\/))?"
	"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$";
static const char overlay_value_pattern[] = "^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$";
static const char overlay_price_pattern[] = "^\\d+(\\.\\d+)?$";
static const char overlay_adjust_pattern[] =
	"^(([+-]{1}(\\d*\\.?\\d+))|(\\+{1}\\d*\\.?\\d+%)|(^(-\\d{1,2}(\\.\\d+)?%)$)|(-100%))$";

static bool is_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static size_t digits(const char *s)
{
	return strspn(s, "0123456789");
}

/* [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])? over s[0..n): a label value
 * or the name part of a key (n > 0). */
static bool name_part_ok(const char *s, size_t n)
{
	if (!n || !is_alnum(s[0]) || !is_alnum(s[n - 1]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
			return false;
	return true;
}

/* The key pattern: an optional prefix of dot-separated lowercase DNS
 * labels and a slash, then a name part. */
static bool overlay_key_ok(const char *k)
{
	const char *slash = strchr(k, '/');
	const char *name = slash ? slash + 1 : k;

	if (slash) {
		for (const char *l = k; l < slash;) {
			const char *end = memchr(l, '.', (size_t)(slash - l));
			size_t n = end ? (size_t)(end - l) : (size_t)(slash - l);

			if (!n || !((l[0] >= 'a' && l[0] <= 'z') || (l[0] >= '0' && l[0] <= '9')) ||
			    !((l[n - 1] >= 'a' && l[n - 1] <= 'z') || (l[n - 1] >= '0' && l[n - 1] <= '9')))
				return false;
			for (size_t i = 0; i < n; i++)
				if (!((l[i] >= 'a' && l[i] <= 'z') || (l[i] >= '0' && l[i] <= '9') ||
				      l[i] == '-'))
					return false;
			l += n + (end ? 1 : 0);
			if (end && l == slash)
				return false;   /* "a./x" */
		}
	}
	return name_part_ok(name, strlen(name));
}

/* \d*\.?\d+ from s: the length matched (the whole rest), 0 when none. */
static size_t unsigned_number(const char *s)
{
	size_t a = digits(s), b;

	if (s[a] != '.')
		return a;
	b = digits(s + a + 1);
	return b ? a + 1 + b : 0;
}

static bool price_ok(const char *s)
{
	size_t a = digits(s);

	if (!a)
		return false;
	if (!s[a])
		return true;
	return s[a] == '.' && digits(s + a + 1) && !s[a + 1 + digits(s + a + 1)];
}

static bool adjustment_ok(const char *s)
{
	size_t n;

	if (*s != '+' && *s != '-')
		return false;
	n = unsigned_number(s + 1);
	if (!n)
		return false;
	if (!s[1 + n])
		return true;                    /* +5, -0.5: an amount */
	if (strcmp(s + 1 + n, "%"))
		return false;
	if (*s == '+' || !strcmp(s, "-100%"))
		return true;                    /* any increase; all of the price */
	/* A decrease below 100%: one or two digits, then a fraction. */
	n = digits(s + 1);
	return n >= 1 && n <= 2 &&
	       (s[1 + n] == '%' || (s[1 + n] == '.' && digits(s + 2 + n) &&
				    s[2 + n + digits(s + 2 + n)] == '%'));
}

int model_overlay_parse_price(const char *s, double *price)
{
	if (!s || !price_ok(s))
		return -EINVAL;
	*price = strtod(s, NULL);
	return 0;
}

int model_overlay_parse_adjustment(const char *s, double *amount, bool *percent)
{
	if (!s || !adjustment_ok(s))
		return -EINVAL;
	*amount = strtod(s, NULL);      /* the sign included, the % not read */
	*percent = s[strlen(s) - 1] == '%';
	return 0;
}

static void e_pattern(struct model_val *v, const char *value, const char *pattern)
{
	struct strbuf sb = STRBUF_INIT;

	sb_printf(&sb, "should match '%s'", pattern);
	model_e_invalid_str(v, value, sb_error(&sb) ? "should match its pattern" : sb_str(&sb));
	sb_free(&sb);
}

/* The key's CEL rules: karpenter.sh's labels are Karpenter's to set,
 * but for the two an overlay may select on; the hostname is no type's. */
static void v_overlay_key(struct model_val *v, const char *k)
{
	size_t dom = strcspn(k, "/");

	if (strlen(k) > OVERLAY_MAX_KEY_LEN) {
		model_e_too_long(v, OVERLAY_MAX_KEY_LEN);
		return;
	}
	if (!overlay_key_ok(k)) {
		e_pattern(v, k, overlay_key_pattern);
		return;
	}
	if (strcmp(k, "karpenter.sh/capacity-type") && strcmp(k, "karpenter.sh/nodepool") &&
	    dom >= 12 && !strncmp(k + dom - 12, "karpenter.sh", 12))
		model_e_invalid_str(v, "string", "label domain \"karpenter.sh\" is restricted");
	if (!strcmp(k, "kubernetes.io/hostname"))
		model_e_invalid_str(v, "string", "label \"kubernetes.io/hostname\" is restricted");
}

static void v_overlay_requirement(struct model_val *v, const struct model_requirement *r)
{
	size_t g = P_FIELD(v, "key");

	if (model_empty(r->key))
		model_e_required(v, "");
	else
		v_overlay_key(v, r->key);
	P_POP(v, g);
	g = P_FIELD(v, "operator");
	if (model_empty(r->operator_text))
		model_e_required(v, "");
	else if (r->op == MODEL_OP_INVALID)
		model_e_not_supported(v, r->operator_text, requirement_ops);
	P_POP(v, g);
	g = P_FIELD(v, "values");
	for (size_t i = 0; i < r->n_values; i++) {
		size_t ix = P_INDEX(v, i);
		size_t len = strlen(r->values[i]);

		if (len > OVERLAY_MAX_VALUE_LEN)
			model_e_too_long(v, OVERLAY_MAX_VALUE_LEN);
		else if (len && !name_part_ok(r->values[i], len))
			e_pattern(v, r->values[i], overlay_value_pattern);
		P_POP(v, ix);
	}
	P_POP(v, g);
}

/* The list's CEL rules: each holds for every item or fails once. */
static void v_overlay_requirement_rules(struct model_val *v, const struct model_requirement *r,
					size_t n)
{
	bool notin = true, in = true, cmp = true;

	for (size_t i = 0; i < n; i++) {
		notin = notin && !(r[i].op == MODEL_OP_NOT_IN && !r[i].n_values);
		in = in && !(r[i].op == MODEL_OP_IN && !r[i].n_values);
		cmp = cmp && !((r[i].op == MODEL_OP_GT || r[i].op == MODEL_OP_LT) &&
			       (r[i].n_values != 1 || !is_nonnegative_int(r[i].values[0])));
	}
	if (!notin)
		model_e_invalid_str(v, "array",
				    "requirements with operator 'NotIn' must have a value defined");
	if (!in)
		model_e_invalid_str(v, "array",
				    "requirements with operator 'In' must have a value defined");
	if (!cmp)
		model_e_invalid_str(v, "array", "requirements operator 'Gt' or 'Lt' must have a "
				    "single positive integer value");
}

static void v_overlay_requirements(struct model_val *v, const struct model_node_overlay *o)
{
	size_t f = P_FIELD(v, "requirements");

	if (!o->has_requirements) {
		model_e_required(v, "");
	} else if (o->n_requirements > OVERLAY_MAX_REQUIREMENTS) {
		model_e_too_many(v, o->n_requirements, OVERLAY_MAX_REQUIREMENTS);
	} else {
		for (size_t i = 0; i < o->n_requirements; i++) {
			size_t ix = P_INDEX(v, i);

			v_overlay_requirement(v, &o->requirements[i]);
			P_POP(v, ix);
		}
		v_overlay_requirement_rules(v, o->requirements, o->n_requirements);
	}
	P_POP(v, f);
}

void model_v_node_overlay(struct model_val *v, const struct model_node_overlay *o)
{
	static const char *const restricted[] = { "cpu", "memory", "ephemeral-storage", "pods",
						  NULL };
	size_t sp = P_FIELD(v, "spec"), f;

	if (!o->has_spec) {
		model_e_required(v, "");
		P_POP(v, sp);
		return;
	}
	v_overlay_requirements(v, o);
	if (o->price && !price_ok(o->price)) {
		f = P_FIELD(v, "price");
		e_pattern(v, o->price, overlay_price_pattern);
		P_POP(v, f);
	}
	if (o->price_adjustment && !adjustment_ok(o->price_adjustment)) {
		f = P_FIELD(v, "priceAdjustment");
		e_pattern(v, o->price_adjustment, overlay_adjust_pattern);
		P_POP(v, f);
	}
	for (size_t i = 0; i < o->capacity.n_items; i++)
		if (model_in_list(o->capacity.items[i].name, restricted)) {
			f = P_FIELD(v, "capacity");
			model_e_invalid_str(v, "object", "invalid resource restricted");
			P_POP(v, f);
			break;
		}
	if (o->has_weight && (o->weight < 1 || o->weight > OVERLAY_MAX_WEIGHT)) {
		f = P_FIELD(v, "weight");
		model_e_invalid_int(v, o->weight,
				    o->weight < 1 ? "should be greater than or equal to 1" :
				    "should be less than or equal to 10000");
		P_POP(v, f);
	}
	if (o->price && o->price_adjustment)
		model_e_invalid_str(v, "object", "cannot set both 'price' and 'priceAdjustment'");
	P_POP(v, sp);
}
