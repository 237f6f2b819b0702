/* model_validate_karpenter.c - the schema and CEL rules of the Karpenter
 * CRDs: NodePool (template labels, requirements, node class reference,
 * taints, limits, durations, disruption), NodeClaim and NodeOverlay
 * (requirements, price or priceAdjustment, capacity, weight). The
 * EC2NodeClass is model_validate_ec2.c's. */
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

/* The label keys Karpenter keeps to itself and Kubernetes (the CRDs' CEL
 * rules, kubernetes-sigs/karpenter hack/validation): the kubernetes.io and
 * k8s.io domains but for the well-known labels, karpenter.sh but for the
 * capacity type and the pool, the pool's own label (a NodePool may not set
 * or require it; a NodeClaim requires it) and the host name, which every
 * node gets for itself. The rules differ a little between template labels
 * (a domain suffix) and requirement keys (a prefix). */
enum key_rules { KEYS_POOL_LABELS, KEYS_POOL_REQS, KEYS_CLAIM_REQS };

#define N_KEY_RULES 5

static const char *const key_rule_msgs[N_KEY_RULES] = {
	"label domain \"kubernetes.io\" is restricted",
	"label domain \"k8s.io\" is restricted",
	"label domain \"karpenter.sh\" is restricted",
	"label \"karpenter.sh/nodepool\" is restricted",
	"label \"kubernetes.io/hostname\" is restricted",
};

static bool domain_ends(const char *key, const char *suffix)
{
	size_t d = strcspn(key, "/"), n = strlen(suffix);

	return d >= n && !strncmp(key + d - n, suffix, n);
}

static bool has_prefix(const char *key, const char *prefix)
{
	return !strncmp(key, prefix, strlen(prefix));
}

static bool k8s_well_known(const char *key, bool labels)
{
	static const char *const keys[] = {
		"beta.kubernetes.io/instance-type", "failure-domain.beta.kubernetes.io/region",
		"beta.kubernetes.io/os", "beta.kubernetes.io/arch",
		"failure-domain.beta.kubernetes.io/zone", "topology.kubernetes.io/zone",
		"topology.kubernetes.io/region", "node.kubernetes.io/instance-type",
		"kubernetes.io/arch", "kubernetes.io/os", "node.kubernetes.io/windows-build",
	};

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!strcmp(key, keys[i]))
			return true;
	if (labels)
		return domain_ends(key, "node.kubernetes.io") ||
		       domain_ends(key, "node-restriction.kubernetes.io");
	return has_prefix(key, "node.kubernetes.io/") ||
	       has_prefix(key, "node-restriction.kubernetes.io/");
}

/* The rules key breaks, as bits of key_rule_msgs. */
static unsigned restricted_key(const char *key, enum key_rules rules)
{
	bool labels = rules == KEYS_POOL_LABELS;
	unsigned bad = 0;

	if (domain_ends(key, "kubernetes.io") && !k8s_well_known(key, labels))
		bad |= 1u << 0;
	if (domain_ends(key, "k8s.io") &&
	    !(labels ? domain_ends(key, "kops.k8s.io") : has_prefix(key, "kops.k8s.io/")))
		bad |= 1u << 1;
	if (domain_ends(key, "karpenter.sh") && strcmp(key, "karpenter.sh/capacity-type") &&
	    strcmp(key, "karpenter.sh/nodepool"))
		bad |= 1u << 2;
	if (rules != KEYS_CLAIM_REQS && !strcmp(key, "karpenter.sh/nodepool"))
		bad |= 1u << 3;
	if (!strcmp(key, "kubernetes.io/hostname"))
		bad |= 1u << 4;
	return bad;
}

static void e_restricted(struct model_val *v, const char *key, unsigned bad)
{
	for (int i = 0; i < N_KEY_RULES; i++)
		if (bad & (1u << i))
			model_e_invalid_str(v, key, key_rule_msgs[i]);
}

static void v_template_labels(struct model_val *v, const struct model_kv *kv, size_t n)
{
	model_v_labels(v, kv, n);
	for (size_t i = 0; i < n; i++)
		if (kv[i].key)
			e_restricted(v, kv[i].key, restricted_key(kv[i].key, KEYS_POOL_LABELS));
}

static void v_karpenter_requirements(struct model_val *v, const struct model_requirement *r,
				     size_t n, enum key_rules rules)
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
		else {
			model_v_label_name(v, r[i].key);
			e_restricted(v, r[i].key, restricted_key(r[i].key, rules));
		}
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

/* ---- NodePool durations and disruption (karpenter.sh/v1 nodepool.go) ----
 *
 * The patterns are the CRD's, matched here by hand; they are printed as
 * the CRD writes them. */

#define POOL_MAX_BUDGETS        50
#define POOL_MAX_REASONS        50

static const char pool_duration_pattern[] = "^(([0-9]+(s|m|h))+|Never)$";
static const char grace_period_pattern[] = "^([0-9]+(s|m|h))+$";
static const char budget_nodes_pattern[] = "^((100|[0-9]{1,2})%|[0-9]+)$";
static const char budget_duration_pattern[] = "^((([0-9]+(h|m))|([0-9]+h[0-9]+m))(0s)?)$";
static const char budget_schedule_pattern[] =
	"^(@(annually|yearly|monthly|weekly|daily|midnight|hourly))|((.+)\\s(.+)\\s(.+)\\s(.+)"
	"\\s(.+))$";

static const char *const consolidation_policies[] = { "WhenEmpty", "WhenEmptyOrUnderutilized",
						      NULL };
static const char *const disruption_reasons[] = { "Underutilized", "Empty", "Drifted", NULL };

/* The digits at the start of s[0..n). */
static size_t digits_in(const char *s, size_t n)
{
	size_t i = 0;

	while (i < n && s[i] >= '0' && s[i] <= '9')
		i++;
	return i;
}

/* ([0-9]+(s|m|h))+, the whole of s: Go-style durations without fractions. */
static bool unit_terms(const char *s)
{
	if (!*s)
		return false;
	while (*s) {
		size_t d = digits_in(s, strlen(s));

		if (!d || !s[d] || !strchr("smh", s[d]))
			return false;
		s += d + 1;
	}
	return true;
}

static bool pool_duration_ok(const char *s)
{
	return !strcmp(s, "Never") || unit_terms(s);
}

/* Nh, Nm or NhNm, then an optional "0s" (what Go's Duration.String adds). */
static bool budget_duration_ok(const char *s)
{
	size_t n = strlen(s), a, b;

	if (n >= 2 && !strcmp(s + n - 2, "0s"))
		n -= 2;
	a = digits_in(s, n);
	if (!a || a == n)
		return false;
	if (a + 1 == n)
		return s[a] == 'h' || s[a] == 'm';
	b = digits_in(s + a + 1, n - a - 1);
	return s[a] == 'h' && b && a + 1 + b + 1 == n && s[n - 1] == 'm';
}

static bool budget_nodes_ok(const char *s)
{
	size_t d = digits_in(s, strlen(s));

	if (d && !s[d])
		return true;
	return ((d && d <= 2) || (d == 3 && !strncmp(s, "100", 3))) && !strcmp(s + d, "%");
}

/* The schedule's pattern anchors its first branch at the start only
 * ("@daily" and whatever follows) and its second at the end only: five
 * non-empty fields of any characters but a newline, each pair split by one
 * whitespace character (RE2's \s: tab, newline, form feed, return, space),
 * the last ending the text. The second branch runs as a small NFA: bit 2k
 * is "inside field k", bit 2k+1 "just past the separator after it". */
static bool budget_schedule_ok(const char *s)
{
	static const char *const macros[] = { "annually", "yearly", "monthly", "weekly", "daily",
					      "midnight", "hourly" };
	unsigned in = 0;

	for (size_t i = 0; *s == '@' && i < sizeof(macros) / sizeof(macros[0]); i++)
		if (has_prefix(s + 1, macros[i]))
			return true;
	for (; *s; s++) {
		unsigned next = 0;

		for (int k = 0; k < 5 && *s != '\n'; k++)
			if (k == 0 || (in & (1u << (2 * k))) || (in & (1u << (2 * k - 1))))
				next |= 1u << (2 * k);
		for (int k = 0; k < 4 && strchr("\t\n\f\r ", *s); k++)
			if (in & (1u << (2 * k)))
				next |= 1u << (2 * k + 1);
		in = next;
	}
	return in & (1u << 8);
}

/* A string field against its pattern, at the current path. */
static void v_pattern_field(struct model_val *v, const char *field, const char *value,
			    bool (*ok)(const char *), const char *pattern)
{
	size_t f;

	if (!value || ok(value))
		return;
	f = P_FIELD(v, field);
	model_e_pattern(v, value, pattern);
	P_POP(v, f);
}

static void v_reasons(struct model_val *v, const struct model_disruption_budget *b)
{
	size_t f = P_FIELD(v, "reasons");

	if (b->n_reasons > POOL_MAX_REASONS) {
		model_e_too_many(v, b->n_reasons, POOL_MAX_REASONS);
		P_POP(v, f);
		return;
	}
	for (size_t i = 0; i < b->n_reasons; i++) {
		size_t ix = P_INDEX(v, i);

		if (!model_in_list(b->reasons[i], disruption_reasons))
			model_e_not_supported(v, b->reasons[i], disruption_reasons);
		for (size_t j = 0; j < i; j++)
			if (!strcmp(b->reasons[j], b->reasons[i])) {
				model_e_duplicate(v, b->reasons[i]);   /* listType=set */
				break;
			}
		P_POP(v, ix);
	}
	P_POP(v, f);
}

static void v_budgets(struct model_val *v, const struct model_node_pool *p)
{
	size_t f = P_FIELD(v, "budgets");
	bool paired = true;

	if (p->n_budgets > POOL_MAX_BUDGETS) {
		model_e_too_many(v, p->n_budgets, POOL_MAX_BUDGETS);
		P_POP(v, f);
		return;
	}
	for (size_t i = 0; i < p->n_budgets; i++) {
		const struct model_disruption_budget *b = &p->budgets[i];
		size_t ix = P_INDEX(v, i);

		v_pattern_field(v, "nodes", b->nodes, budget_nodes_ok, budget_nodes_pattern);
		v_pattern_field(v, "schedule", b->schedule, budget_schedule_ok,
				budget_schedule_pattern);
		v_pattern_field(v, "duration", b->duration, budget_duration_ok,
				budget_duration_pattern);
		v_reasons(v, b);
		paired = paired && !b->schedule == !b->duration;
		P_POP(v, ix);
	}
	if (!paired)
		model_e_rule(v, "array", "'schedule' must be set with 'duration'");
	P_POP(v, f);
}

/* spec.disruption: when absent the CRD defaults it whole (consolidateAfter
 * 0s), when present consolidateAfter is required. */
static void v_disruption(struct model_val *v, const struct model_node_pool *p)
{
	size_t f, g;

	if (!p->has_disruption)
		return;
	f = P_FIELD(v, "disruption");
	if (!p->consolidate_after) {
		g = P_FIELD(v, "consolidateAfter");
		model_e_required(v, "");
		P_POP(v, g);
	}
	v_pattern_field(v, "consolidateAfter", p->consolidate_after, pool_duration_ok,
			pool_duration_pattern);
	if (p->consolidation_policy &&
	    !model_in_list(p->consolidation_policy, consolidation_policies)) {
		g = P_FIELD(v, "consolidationPolicy");
		model_e_not_supported(v, p->consolidation_policy, consolidation_policies);
		P_POP(v, g);
	}
	v_budgets(v, p);
	P_POP(v, f);
}

void model_v_node_pool(struct model_val *v, const struct model_node_pool *p)
{
	size_t sp = P_FIELD(v, "spec");
	size_t t = P_FIELD(v, "template");
	size_t f = P_FIELD(v, "metadata");
	size_t g = P_FIELD(v, "labels");

	v_template_labels(v, p->template_labels, p->n_template_labels);
	P_POP(v, g);
	P_POP(v, f);
	f = P_FIELD(v, "spec");
	v_node_class_ref(v, &p->node_class_ref);
	v_karpenter_requirements(v, p->requirements, p->n_requirements, KEYS_POOL_REQS);
	model_v_taints(v, "taints", p->taints, p->n_taints, -1, model_core_effects);
	model_v_taints(v, "startupTaints", p->startup_taints, p->n_startup_taints, -1,
		       model_core_effects);
	v_pattern_field(v, "expireAfter", p->expire_after, pool_duration_ok, pool_duration_pattern);
	v_pattern_field(v, "terminationGracePeriod", p->termination_grace_period, unit_terms,
			grace_period_pattern);
	P_POP(v, f);
	P_POP(v, t);
	v_disruption(v, p);
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
	v_karpenter_requirements(v, c->requirements, c->n_requirements, KEYS_CLAIM_REQS);
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
		model_e_pattern(v, k, overlay_key_pattern);
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
			model_e_pattern(v, r->values[i], overlay_value_pattern);
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
		model_e_pattern(v, o->price, overlay_price_pattern);
		P_POP(v, f);
	}
	if (o->price_adjustment && !adjustment_ok(o->price_adjustment)) {
		f = P_FIELD(v, "priceAdjustment");
		model_e_pattern(v, o->price_adjustment, overlay_adjust_pattern);
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
