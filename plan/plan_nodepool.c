/* plan_nodepool.c - does a node (existing, or one a NodePool would
 * launch) accept a pod: NodePool requirements against instance-type
 * labels, a pod's nodeSelector and required node affinity, taints against
 * tolerations.
 *
 * A node that does not exist yet is not a label map but a set of
 * possibilities: its instance-type labels are fixed, the NodePool's
 * requirements narrow the keys the type leaves open, and well-known keys
 * such as the zone take whatever value is asked for, except the host name,
 * which is the new node's own. A pod requirement is compatible when some
 * possible state satisfies it (struct plan_vset).
 * Also: which MIG layout a NodePool's EC2NodeClass gives each type. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwdb.h"
#include "escape.h"
#include "hwdb_mig.h"
#include "plan_internal.h"

/* Keys Karpenter fills in when it launches, whatever the pod asks. */
static const char *const open_well_known[] = {
	"topology.kubernetes.io/zone",
	"topology.kubernetes.io/region",
	"failure-domain.beta.kubernetes.io/zone",
	"failure-domain.beta.kubernetes.io/region",
	"topology.k8s.aws/zone-id",
};

/* A new node's host name is its own and unknown (Karpenter gives every
 * NodeClaim a placeholder hostname requirement): the label exists, but no
 * name a pod can ask for is it. The stand-in is no valid label value, so no
 * In list holds it, while NotIn and Exists hold. */
#define HOSTNAME_KEY "kubernetes.io/hostname"
#define NEW_NODE_HOSTNAME "<new node>"

bool plan_is_open_key(const char *key)
{
	for (size_t i = 0; i < sizeof(open_well_known) / sizeof(open_well_known[0]); i++)
		if (!strcmp(key, open_well_known[i]))
			return true;
	return false;
}

static int parse_int(const char *s, int64_t *out)
{
	char *end;
	long long v;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

const char *plan_label(const struct model_kv *kv, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (kv[i].key && !strcmp(kv[i].key, key))
			return kv[i].value ? kv[i].value : "";
	return NULL;
}

/* ---- Value sets ---- */

int plan_vset_from_req(const struct model_requirement *r, struct plan_vset *out)
{
	memset(out, 0, sizeof(*out));
	switch (r->op) {
	case MODEL_OP_IN:
		out->vals = r->values;
		out->n_vals = r->n_values;
		return 0;
	case MODEL_OP_NOT_IN:
		out->complement = true;
		out->absent_ok = true;
		out->vals = r->values;
		out->n_vals = r->n_values;
		return 0;
	case MODEL_OP_EXISTS:
		out->complement = true;
		return 0;
	case MODEL_OP_DOES_NOT_EXIST:
		out->absent_ok = true;
		return 0;
	case MODEL_OP_GT:
	case MODEL_OP_LT:
		out->complement = true;
		if (r->n_values != 1)
			return -EINVAL;
		if (r->op == MODEL_OP_GT) {
			out->has_gt = true;
			return parse_int(r->values[0], &out->gt);
		}
		out->has_lt = true;
		return parse_int(r->values[0], &out->lt);
	default:
		return -EINVAL;
	}
}

bool plan_in_list(const char *const *vals, size_t n, const char *v)
{
	for (size_t i = 0; i < n; i++)
		if (vals[i] && !strcmp(vals[i], v))
			return true;
	return false;
}

static bool in_bounds(const struct plan_vset *s, const char *v)
{
	int64_t x;

	if (!s->has_gt && !s->has_lt)
		return true;
	if (parse_int(v, &x))
		return false;
	return (!s->has_gt || x > s->gt) && (!s->has_lt || x < s->lt);
}

bool plan_vset_has(const struct plan_vset *s, const char *value)
{
	if (!value)
		return s->absent_ok;
	if (!in_bounds(s, value))
		return false;
	return s->complement ? !plan_in_list(s->vals, s->n_vals, value)
			     : plan_in_list(s->vals, s->n_vals, value);
}

/* Whether two complemented sets share a value: the integers inside both
 * bounds must outnumber the values either excludes. */
static bool complements_intersect(const struct plan_vset *a, const struct plan_vset *b)
{
	bool bounded = a->has_gt || a->has_lt || b->has_gt || b->has_lt;
	int64_t lo = INT64_MIN, hi = INT64_MAX, excluded = 0;

	if (!bounded)
		return true;    /* infinitely many strings left */
	if (a->has_gt && a->gt > lo)
		lo = a->gt;
	if (b->has_gt && b->gt > lo)
		lo = b->gt;
	if (a->has_lt && a->lt < hi)
		hi = a->lt;
	if (b->has_lt && b->lt < hi)
		hi = b->lt;
	if (lo >= hi || hi - lo <= 1)
		return false;
	/* Count distinct excluded integers inside (lo, hi). */
	for (int pass = 0; pass < 2; pass++) {
		const struct plan_vset *s = pass ? b : a;

		for (size_t i = 0; i < s->n_vals; i++) {
			int64_t x;

			if (parse_int(s->vals[i], &x) || x <= lo || x >= hi)
				continue;
			if (pass && plan_in_list(a->vals, a->n_vals, s->vals[i]))
				continue;
			excluded++;
		}
	}
	/* hi - lo - 1 integers lie strictly inside; beware overflow. */
	if ((uint64_t)hi - (uint64_t)lo - 1 > (uint64_t)excluded)
		return true;
	return false;
}

bool plan_vset_intersects(const struct plan_vset *a, const struct plan_vset *b)
{
	if (a->absent_ok && b->absent_ok)
		return true;
	if (!a->complement) {
		for (size_t i = 0; i < a->n_vals; i++)
			if (in_bounds(a, a->vals[i]) && plan_vset_has(b, a->vals[i]))
				return true;
		return false;
	}
	if (!b->complement)
		return plan_vset_intersects(b, a);
	return complements_intersect(a, b);
}

/* ---- Requirements against nodes ---- */

/* Standard label selection: does the state (value or absent) satisfy r? */
static bool req_matches_value(const struct model_requirement *r, const char *value)
{
	struct plan_vset s;

	if (plan_vset_from_req(r, &s))
		return false;
	return plan_vset_has(&s, value);
}

/* The pool requirement of a future node that leaves want no value on its
 * key, or NULL; *constrained says whether any pool requirement bounds it. */
static const struct model_requirement *pool_excludes(const struct plan_node_spec *node,
						     const char *key, const struct plan_vset *want,
						     bool *constrained)
{
	struct plan_vset have;

	for (size_t i = 0; i < node->n_reqs; i++) {
		const struct model_requirement *pr = &node->reqs[i];

		if (strcmp(pr->key, key))
			continue;
		*constrained = true;
		if (plan_vset_from_req(pr, &have) || !plan_vset_intersects(&have, want))
			return pr;
	}
	return NULL;
}

bool plan_req_compatible(const struct plan_node_spec *node, const struct model_requirement *r)
{
	const char *v = plan_label(node->labels, node->n_labels, r->key);
	struct plan_vset want;
	bool constrained = false;

	if (plan_vset_from_req(r, &want))
		return false;
	if (v || !node->hypothetical)
		return plan_vset_has(&want, v);
	if (!strcmp(r->key, HOSTNAME_KEY))
		return plan_vset_has(&want, NEW_NODE_HOSTNAME);
	/* A key set at launch always gets a value: never absent. */
	if (plan_is_open_key(r->key) && r->op == MODEL_OP_DOES_NOT_EXIST)
		return false;
	/* Open key on a future node: every pool requirement on it narrows it. */
	if (pool_excludes(node, r->key, &want, &constrained))
		return false;
	if (constrained || plan_is_open_key(r->key))
		return true;
	/* Nobody sets the label: it stays absent. */
	return want.absent_ok;
}

static void describe_req(const struct model_requirement *r, char *buf, size_t sz)
{
	size_t len;

	snprintf(buf, sz, "%s %s", r->key, r->operator_text ? r->operator_text : "?");
	if (r->op == MODEL_OP_EXISTS || r->op == MODEL_OP_DOES_NOT_EXIST)
		return;
	len = strlen(buf);
	snprintf(buf + len, sz - len, " [");
	for (size_t i = 0; i < r->n_values && i < 8; i++) {
		len = strlen(buf);
		snprintf(buf + len, sz - len, "%s%s", i ? " " : "", r->values[i]);
	}
	len = strlen(buf);
	snprintf(buf + len, sz - len, "%s]", r->n_values > 8 ? " ..." : "");
}

/* Why a future node cannot meet r when its pool's requirements are the
 * cause (a pod pinned to a zone the pool leaves out), else "". */
static void pool_exclusion(const struct plan_node_spec *node, const struct model_requirement *r,
			   char *buf, size_t sz)
{
	const struct model_requirement *pr = NULL;
	struct plan_vset want;
	bool constrained = false;
	char d[256];

	buf[0] = '\0';
	if (node->hypothetical && !plan_vset_from_req(r, &want))
		pr = pool_excludes(node, r->key, &want, &constrained);
	if (!pr)
		return;
	describe_req(pr, d, sizeof(d));
	snprintf(buf, sz, ": the NodePool requires %s", d);
}

bool plan_pod_selects(const struct plan_node_spec *node, const struct model_pod_spec *pod,
		      char *why, size_t whysz)
{
	const struct model_node_selector *aff = pod->required_node_affinity;

	for (size_t i = 0; i < pod->n_node_selector; i++) {
		const struct model_kv *kv = &pod->node_selector[i];
		const char *val = kv->value ? kv->value : "";
		struct model_requirement r = {
			.key = kv->key, .operator_text = "In", .op = MODEL_OP_IN,
			.values = &val, .n_values = 1,
		};

		if (!plan_req_compatible(node, &r)) {
			const char *have = plan_label(node->labels, node->n_labels, kv->key);
			char pool[300];

			pool_exclusion(node, &r, pool, sizeof(pool));
			if (have)
				snprintf(why, whysz, "nodeSelector %s=%s: the node has %s=%s",
					 kv->key, val, kv->key, have);
			else if (node->hypothetical && !strcmp(kv->key, HOSTNAME_KEY))
				snprintf(why, whysz, "nodeSelector %s=%s: a new node has a host "
					 "name of its own", kv->key, val);
			else if (pool[0])
				snprintf(why, whysz, "nodeSelector %s=%s%s", kv->key, val, pool);
			else
				snprintf(why, whysz, "nodeSelector %s=%s: label %s is not set",
					 kv->key, val, kv->key);
			return false;
		}
	}
	if (!aff || !aff->n_terms)
		return true;
	for (size_t t = 0; t < aff->n_terms; t++) {
		const struct model_node_selector_term *term = &aff->terms[t];
		bool ok = term->n_match_expressions || term->n_match_fields;

		for (size_t i = 0; ok && i < term->n_match_expressions; i++)
			ok = plan_req_compatible(node, &term->match_expressions[i]);
		/* matchFields name a node (metadata.name); a new node has no
		 * name yet, an existing one carries it as a pseudo label. */
		for (size_t i = 0; ok && i < term->n_match_fields; i++) {
			const struct model_requirement *f = &term->match_fields[i];

			ok = !node->hypothetical &&
			     req_matches_value(f, plan_label(node->labels, node->n_labels,
							     "metadata.name"));
		}
		if (ok)
			return true;
	}
	if (aff->n_terms == 1 && aff->terms[0].n_match_expressions) {
		const struct model_node_selector_term *term = &aff->terms[0];

		for (size_t i = 0; i < term->n_match_expressions; i++) {
			if (plan_req_compatible(node, &term->match_expressions[i]))
				continue;
			char d[256], pool[300];

			describe_req(&term->match_expressions[i], d, sizeof(d));
			pool_exclusion(node, &term->match_expressions[i], pool, sizeof(pool));
			snprintf(why, whysz, "node affinity %s does not match%s", d, pool);
			return false;
		}
	}
	snprintf(why, whysz, "none of the %zu node affinity terms matches", aff->n_terms);
	return false;
}

bool plan_pool_accepts(const struct model_requirement *reqs, size_t n,
		       const struct model_kv *labels, size_t n_labels, char *why, size_t whysz)
{
	for (size_t i = 0; i < n; i++) {
		const char *v = plan_label(labels, n_labels, reqs[i].key);

		/* Keys the type does not define are left for the pod to meet. */
		if (!v)
			continue;
		if (!req_matches_value(&reqs[i], v)) {
			char d[256];

			describe_req(&reqs[i], d, sizeof(d));
			snprintf(why, whysz, "requirement %s (type has %s)", d, v);
			return false;
		}
	}
	return true;
}

/* ---- Taints ---- */

bool plan_tolerates(const struct model_toleration *t, const struct model_taint *taint)
{
	const char *op = t->operator_text ? t->operator_text : "Equal";

	if (t->effect && *t->effect && (!taint->effect || strcmp(t->effect, taint->effect)))
		return false;
	if (!t->key || !*t->key)
		return !strcmp(op, "Exists");   /* empty key + Exists: everything */
	if (!taint->key || strcmp(t->key, taint->key))
		return false;
	if (!strcmp(op, "Exists"))
		return true;
	if (strcmp(op, "Equal"))
		return false;
	return !strcmp(t->value ? t->value : "", taint->value ? taint->value : "");
}

const struct model_taint *plan_untolerated(const struct model_taint *taints, size_t n,
					   const struct model_toleration *tols, size_t m)
{
	for (size_t i = 0; i < n; i++) {
		const struct model_taint *tt = &taints[i];
		bool ok = false;

		if (!tt->effect || (strcmp(tt->effect, "NoSchedule") &&
				    strcmp(tt->effect, "NoExecute")))
			continue;
		for (size_t j = 0; j < m && !ok; j++)
			ok = plan_tolerates(&tols[j], tt);
		if (!ok)
			return tt;
	}
	return NULL;
}

/* ---- Instance-type labels ---- */

/* "NVIDIA H100 80GB HBM3" -> "h100", "Tesla T4" -> "t4": the first word
 * after the vendor words, as Karpenter's instance-gpu-name reads. */
static void gpu_short_name(const char *model, char *out, size_t sz)
{
	const char *p = model;
	size_t n = 0;

	out[0] = 0;
	while (*p) {
		const char *w;
		size_t len;

		while (*p == ' ')
			p++;
		w = p;
		while (*p && *p != ' ' && *p != '-')
			p++;
		len = (size_t)(p - w);
		if (*p == '-')
			p++;
		if (!len || (len == 6 && !strncasecmp(w, "NVIDIA", 6)) ||
		    (len == 5 && !strncasecmp(w, "Tesla", 5)))
			continue;
		for (size_t i = 0; i < len && n + 1 < sz; i++)
			out[n++] = (char)tolower((unsigned char)w[i]);
		out[n] = 0;
		return;
	}
}

size_t plan_type_labels(const struct hwdb_type *t, const char *capacity_type,
			struct model_kv *kv, char vals[][PLAN_LABEL_VALUE_MAX])
{
	const char *dot = strchr(t->name, '.');
	const char *f = t->family;
	size_t n = 0, cat = 0;

#define PUT(k, ...) do {                                                  \
		snprintf(vals[n], PLAN_LABEL_VALUE_MAX, __VA_ARGS__);     \
		kv[n].key = (k);                                          \
		kv[n].value = vals[n];                                    \
		n++;                                                      \
	} while (0)

	PUT(PLAN_LABEL_INSTANCE_TYPE, "%s", t->name);
	PUT(PLAN_LABEL_FAMILY, "%s", f);
	if (dot)
		PUT(PLAN_LABEL_SIZE, "%s", dot + 1);
	while (f[cat] && isalpha((unsigned char)f[cat]))
		cat++;
	PUT(PLAN_LABEL_CATEGORY, "%.*s", (int)cat, f);
	if (isdigit((unsigned char)f[cat]))
		PUT(PLAN_LABEL_GENERATION, "%ld", strtol(f + cat, NULL, 10));
	PUT(PLAN_LABEL_ARCH, "%s", t->arch ? t->arch : "amd64");
	PUT(PLAN_LABEL_OS, "linux");
	PUT(PLAN_LABEL_CPU, "%d", t->vcpu);
	PUT(PLAN_LABEL_MEMORY, "%" PRId64, t->memory_mib);
	PUT(PLAN_LABEL_GPU_COUNT, "%zu", t->n_gpus);
	if (t->n_gpus) {
		char g[PLAN_LABEL_VALUE_MAX];

		gpu_short_name(t->gpu_model ? t->gpu_model : "", g, sizeof(g));
		if (g[0])
			PUT(PLAN_LABEL_GPU_NAME, "%s", g);
		PUT(PLAN_LABEL_GPU_MANUFACTURER, "nvidia");
		if (t->gpus[0].memory_mib)
			PUT(PLAN_LABEL_GPU_MEMORY, "%" PRId64, t->gpus[0].memory_mib);
	}
	PUT(PLAN_LABEL_EFA_COUNT, "%zu", t->n_efas);
	if (capacity_type)
		PUT(PLAN_LABEL_CAPACITY_TYPE, "%s", capacity_type);
#undef PUT
	return n;
}

int plan_mig_for_type(const struct hwdb_mig_layout *pool, const struct hwdb_type *t,
		      struct hwdb_mig_layout *out, char *why, size_t whysz)
{
	struct dt_err e = { 0 };
	int rc = hwdb_mig_check(pool, t, &e);

	*out = *pool;
	if (rc == -ENOTSUP) {
		/* MIG Manager leaves GPUs without MIG alone: whole GPUs */
		memset(out, 0, sizeof(*out));
		return 0;
	}
	if (rc)
		snprintf(why, whysz, "%s", e.msg);
	return rc;
}

void plan_node_yaml(const char *name, const char *instance_type, const struct hwdb_type *t,
		    struct strbuf *sb)
{
	struct model_kv kv[PLAN_MAX_TYPE_LABELS];
	char vals[PLAN_MAX_TYPE_LABELS][PLAN_LABEL_VALUE_MAX];
	size_t nl = t ? plan_type_labels(t, NULL, kv, vals) : 0;

	/* Values double-quoted, so that a name an agent reported cannot end
	 * the scalar or the line. */
	sb_puts(sb, "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: ");
	sb_yaml_dquote(sb, name, strlen(name));
	sb_puts(sb, "\n  labels:\n    kubernetes.io/hostname: ");
	sb_yaml_dquote(sb, name, strlen(name));
	if (!t) {
		sb_puts(sb, "\n    " PLAN_LABEL_INSTANCE_TYPE ": ");
		sb_yaml_dquote(sb, instance_type, strlen(instance_type));
	}
	for (size_t i = 0; i < nl; i++) {
		sb_printf(sb, "\n    %s: ", kv[i].key);
		sb_yaml_dquote(sb, kv[i].value, strlen(kv[i].value));
	}
	sb_putc(sb, '\n');
	if (t) {
		struct plan_kubelet k;
		struct plan_res a;

		plan_kubelet_defaults(&k);
		plan_node_allocatable(t->vcpu, t->memory_mib, &k, &a);
		sb_printf(sb, "status:\n  allocatable:\n    cpu: \"%" PRId64 "m\"\n"
			  "    memory: \"%" PRId64 "\"\n    pods: \"%" PRId64 "\"\n",
			  a.cpu_milli, a.mem_bytes, a.pods);
	}
}
