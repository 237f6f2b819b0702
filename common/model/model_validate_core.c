/* model_validate_core.c - the parts of core/v1, apps/v1 and batch/v1
 * validation that matter for placing pods: pod specs (containers, resource
 * lists, claims), workloads (Deployment, ReplicaSet, StatefulSet, Job) and
 * nodes. */
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"
#include "strbuf.h"

/* ---- Pods and workloads ---- */

/* Index a list of structs by their name member. */
#define NAME_INDEX(v, ix, arr, n, member)                                             \
	(model_name_index_build((ix), (arr), (n), sizeof(*(arr)),                     \
				offsetof(__typeof__(*(arr)), member)) ? ((v)->oom = true) : 0)

static bool is_native_resource(const char *name)
{
	return !strchr(name, '/') || strstr(name, "kubernetes.io/");
}

void model_v_resource_list(struct model_val *v, const char *field,
			   const struct model_resource_list *l)
{
	size_t f = P_FIELD(v, field);

	for (size_t i = 0; i < l->n_items; i++) {
		const struct model_quantity_entry *e = &l->items[i];
		size_t k = P_KEY(v, e->name);
		char q[QUANTITY_STR_MAX];

		if (quantity_sign(&e->value) < 0) {
			model_q_str(&e->value, q);
			model_e_invalid_str(v, q, "must be greater than or equal to 0");
		} else if (!is_native_resource(e->name) && !quantity_is_integer(&e->value)) {
			model_q_str(&e->value, q);
			model_e_invalid_str(v, q, "must be an integer");
		}
		P_POP(v, k);
	}
	P_POP(v, f);
}

/* The API server's IsOvercommitAllowed: native resources but hugepages
 * may be requested below their limit; extended ones may not. */
static bool overcommit_allowed(const char *name)
{
	return is_native_resource(name) && strncmp(name, "hugepages-", 10) != 0;
}

/* A request of a resource that cannot be overcommitted needs its limit. */
static void v_limit_required(struct model_val *v)
{
	size_t f = P_FIELD(v, "limits");

	model_e_required(v, "Limit must be set for non overcommitable resources");
	P_POP(v, f);
}

/* requests <= limits; extended resources and hugepages need requests ==
 * limits, and a limit. */
static void v_requests_vs_limits(struct model_val *v, const struct model_container *c)
{
	struct model_name_index limits = { 0 };
	size_t f;

	if (!c->requests.n_items ||
	    NAME_INDEX(v, &limits, c->limits.items, c->limits.n_items, name))
		return;
	for (size_t i = 0; i < c->requests.n_items; i++) {
		const struct model_quantity_entry *req = &c->requests.items[i];
		size_t li = model_name_index_find(&limits, req->name);
		const struct model_quantity_entry *lim;
		char a[QUANTITY_STR_MAX], b[QUANTITY_STR_MAX], msg[512];
		size_t k;

		if (li == SIZE_MAX) {
			if (!overcommit_allowed(req->name))
				v_limit_required(v);
			continue;
		}
		lim = &c->limits.items[li];
		f = P_FIELD(v, "requests");
		k = P_KEY(v, req->name);
		model_q_str(&req->value, a);
		model_q_str(&lim->value, b);
		if (!overcommit_allowed(req->name) && quantity_cmp(&req->value, &lim->value)) {
			snprintf(msg, sizeof(msg), "must be equal to %s limit of %s", req->name, b);
			model_e_invalid_str(v, a, msg);
		} else if (quantity_cmp(&req->value, &lim->value) > 0) {
			snprintf(msg, sizeof(msg), "must be less than or equal to %s limit of %s",
				 req->name, b);
			model_e_invalid_str(v, a, msg);
		}
		P_POP(v, k);
		P_POP(v, f);
	}
	model_name_index_free(&limits);
}

/* Keys "name\x1frequest" of a container's claims, for finding a claim
 * referenced twice for one request: keys[i] into kb. 0 or -ENOMEM. */
static int claim_keys(const struct model_container *c, struct strbuf *kb, const char **keys)
{
	for (size_t i = 0; i < c->n_claims; i++) {
		const char *name = c->claims[i].name, *req = c->claims[i].request;

		sb_puts(kb, name ? name : "");
		sb_putc(kb, '\x1f');
		sb_puts(kb, req ? req : "");
		sb_append(kb, "", 1);   /* the key's NUL */
	}
	if (sb_error(kb))
		return -ENOMEM;
	for (size_t i = 0, off = 0; i < c->n_claims; i++) {
		keys[i] = kb->buf + off;
		off += strlen(keys[i]) + 1;
	}
	return 0;
}

/* resources.claims: names of the pod's claims, each (name, request) once. */
static void v_container_claims(struct model_val *v, const struct model_container *c,
			       const struct model_name_index *pod_claims)
{
	struct model_name_index seen = { 0 };
	const char **keys = NULL;
	struct strbuf kb = STRBUF_INIT;
	size_t f;

	if (!c->n_claims)
		return;
	/* A repeat needs two; most containers have one claim. */
	if (c->n_claims > 1 &&
	    (!(keys = calloc(c->n_claims, sizeof(*keys))) || claim_keys(c, &kb, keys) ||
	     model_name_index_build(&seen, keys, c->n_claims, sizeof(*keys), 0))) {
		v->oom = true;
		goto out;
	}
	f = P_FIELD(v, "claims");
	for (size_t i = 0; i < c->n_claims; i++) {
		const char *name = c->claims[i].name;
		size_t ix = P_INDEX(v, i);

		if (model_empty(name))
			model_e_required(v, "");
		else if (model_name_index_find(pod_claims, name) == SIZE_MAX)
			model_e_not_found(v, name,
					  "must be one of the names in pod.spec.resourceClaims");
		else if (keys && model_name_index_find(&seen, keys[i]) != i)
			model_e_duplicate(v, name);
		P_POP(v, ix);
	}
	P_POP(v, f);
out:
	model_name_index_free(&seen);
	sb_free(&kb);
	free(keys);
}

static void v_container(struct model_val *v, const struct model_container *c,
			const struct model_name_index *pod_claims)
{
	size_t f = P_FIELD(v, "name");
	size_t r;

	if (model_empty(c->name))
		model_e_required(v, "");
	else
		model_v_dns_label(v, c->name);
	P_POP(v, f);
	if (model_empty(c->image)) {
		f = P_FIELD(v, "image");
		model_e_required(v, "");
		P_POP(v, f);
	}
	r = P_FIELD(v, "resources");
	model_v_resource_list(v, "limits", &c->limits);
	model_v_resource_list(v, "requests", &c->requests);
	v_requests_vs_limits(v, c);
	v_container_claims(v, c, pod_claims);
	P_POP(v, r);
}

static const char *const restart_policies[] = { "Always", "OnFailure", "Never", NULL };

void model_v_pod_spec(struct model_val *v, const struct model_pod_spec *p)
{
	struct model_name_index claims;
	size_t f;

	if (NAME_INDEX(v, &claims, p->resource_claims, p->n_resource_claims, name))
		return;
	if (p->restart_policy && !model_in_list(p->restart_policy, restart_policies)) {
		f = P_FIELD(v, "restartPolicy");
		model_e_not_supported(v, p->restart_policy, restart_policies);
		P_POP(v, f);
	}
	f = P_FIELD(v, "containers");
	if (p->n_containers == 0)
		model_e_required(v, "");
	for (size_t i = 0; i < p->n_containers; i++) {
		size_t ix = P_INDEX(v, i);

		v_container(v, &p->containers[i], &claims);
		P_POP(v, ix);
	}
	P_POP(v, f);
	f = P_FIELD(v, "initContainers");
	for (size_t i = 0; i < p->n_init_containers; i++) {
		size_t ix = P_INDEX(v, i);

		v_container(v, &p->init_containers[i], &claims);
		P_POP(v, ix);
	}
	P_POP(v, f);
	f = P_FIELD(v, "nodeSelector");
	model_v_labels(v, p->node_selector, p->n_node_selector);
	P_POP(v, f);
	if (p->required_node_affinity) {
		f = P_FIELD(v, "affinity");
		size_t g = P_FIELD(v, "nodeAffinity");
		size_t h = P_FIELD(v, "requiredDuringSchedulingIgnoredDuringExecution");

		model_v_node_selector(v, p->required_node_affinity);
		P_POP(v, h);
		P_POP(v, g);
		P_POP(v, f);
	}
	f = P_FIELD(v, "tolerations");
	for (size_t i = 0; i < p->n_tolerations; i++) {
		size_t ix = P_INDEX(v, i);

		model_v_core_toleration(v, &p->tolerations[i]);
		P_POP(v, ix);
	}
	P_POP(v, f);
	f = P_FIELD(v, "resourceClaims");
	for (size_t i = 0; i < p->n_resource_claims; i++) {
		const struct model_pod_claim *c = &p->resource_claims[i];
		size_t ix = P_INDEX(v, i);
		size_t g = P_FIELD(v, "name");

		model_v_dns_label(v, c->name);
		P_POP(v, g);
		if (c->name && model_name_index_find(&claims, c->name) != i)
			model_e_duplicate(v, c->name);
		if (!model_empty(c->resource_claim_name) && !model_empty(c->resource_claim_template_name))
			model_e_invalid_raw(v, "{...}", "at most one of `resourceClaimName` or "
				      "`resourceClaimTemplateName` may be specified");
		else if (model_empty(c->resource_claim_name) && model_empty(c->resource_claim_template_name))
			model_e_required(v, "must specify one of: `resourceClaimName`, "
				   "`resourceClaimTemplateName`");
		else if (!model_empty(c->resource_claim_name)) {
			g = P_FIELD(v, "resourceClaimName");
			model_v_dns_subdomain(v, c->resource_claim_name);
			P_POP(v, g);
		} else {
			g = P_FIELD(v, "resourceClaimTemplateName");
			model_v_dns_subdomain(v, c->resource_claim_template_name);
			P_POP(v, g);
		}
		P_POP(v, ix);
	}
	P_POP(v, f);
	model_v_resource_list(v, "overhead", &p->overhead);
	if (p->pod_requests.n_items || p->pod_limits.n_items) {
		f = P_FIELD(v, "resources");
		model_v_resource_list(v, "requests", &p->pod_requests);
		model_v_resource_list(v, "limits", &p->pod_limits);
		P_POP(v, f);
	}
	if (p->pod_group_name) {
		f = P_FIELD(v, "schedulingGroup");
		size_t g = P_FIELD(v, "podGroupName");

		model_v_dns_subdomain(v, p->pod_group_name);
		P_POP(v, g);
		P_POP(v, f);
	}
	if (p->node_name && p->node_name[0]) {
		f = P_FIELD(v, "nodeName");
		model_v_dns_subdomain(v, p->node_name);
		P_POP(v, f);
	}
	model_name_index_free(&claims);
}

static void v_nonneg(struct model_val *v, const char *field, bool has, int64_t value)
{
	if (has && value < 0) {
		size_t f = P_FIELD(v, field);

		model_e_invalid_int(v, value, "must be greater than or equal to 0");
		P_POP(v, f);
	}
}

static bool selector_matches_labels(struct model_val *v, const struct model_label_selector *s,
				    const struct model_kv *labels, size_t n)
{
	struct model_name_index ix;
	bool match = true;

	if (NAME_INDEX(v, &ix, labels, n, key))
		return true;    /* out of memory: reported, nothing more to say */
	for (size_t i = 0; i < s->n_match_labels && match; i++) {
		size_t j = model_name_index_find(&ix, s->match_labels[i].key);

		match = j != SIZE_MAX && model_str_eq(labels[j].value, s->match_labels[i].value);
	}
	model_name_index_free(&ix);
	return match;
}

/* What a workload's pods may do when they end (at template.spec): a Job's
 * must say OnFailure or Never (the pod default Always is refused as
 * missing); the apps/v1 controllers' restart them, Always. */
static void v_template_restart(struct model_val *v, const char *policy)
{
	static const char *const job[] = { "OnFailure", "Never", NULL };
	static const char *const apps[] = { "Always", NULL };
	size_t f;

	if (!policy || !model_in_list(policy, restart_policies))
		return;         /* absent: not defaulted; unknown: told above */
	f = P_FIELD(v, "restartPolicy");
	if (v->o->kind == MODEL_JOB && !strcmp(policy, "Always"))
		model_e_required(v, "valid values: \"OnFailure\", \"Never\"");
	else if (v->o->kind != MODEL_JOB && strcmp(policy, "Always"))
		model_e_not_supported(v, policy, apps);
	else if (v->o->kind == MODEL_JOB && !model_in_list(policy, job))
		model_e_not_supported(v, policy, job);
	P_POP(v, f);
}

void model_v_workload(struct model_val *v, const struct model_workload *w)
{
	size_t sp = P_FIELD(v, "spec");
	size_t f;

	if (v->o->kind == MODEL_JOB) {
		v_nonneg(v, "parallelism", w->has_parallelism, w->parallelism);
		v_nonneg(v, "completions", w->has_completions, w->completions);
	} else {
		v_nonneg(v, "replicas", w->has_replicas, w->replicas);
		if (!w->selector) {
			f = P_FIELD(v, "selector");
			model_e_required(v, "");
			P_POP(v, f);
		} else if (w->selector->n_match_labels + w->selector->n_match_expressions == 0) {
			f = P_FIELD(v, "selector");
			model_e_invalid_str(v, "", v->o->kind == MODEL_STATEFUL_SET
					    ? "empty selector is invalid for statefulset"
					    : v->o->kind == MODEL_DAEMON_SET
					    ? "empty selector is invalid for daemonset"
					    : "empty selector is invalid for deployment");
			P_POP(v, f);
		} else if (!selector_matches_labels(v, w->selector, w->template_.meta.labels,
						    w->template_.meta.n_labels)) {
			f = P_FIELD(v, "template");
			size_t g = P_FIELD(v, "metadata");
			size_t h = P_FIELD(v, "labels");

			model_e_invalid_raw(v, "map[string]string{...}",
					    "`selector` does not match "
				      "template `labels`");
			P_POP(v, h);
			P_POP(v, g);
			P_POP(v, f);
		}
	}
	f = P_FIELD(v, "template");
	size_t g = P_FIELD(v, "metadata");
	size_t h = P_FIELD(v, "labels");

	model_v_labels(v, w->template_.meta.labels, w->template_.meta.n_labels);
	P_POP(v, h);
	P_POP(v, g);
	g = P_FIELD(v, "spec");
	model_v_pod_spec(v, &w->template_.spec);
	v_template_restart(v, w->template_.spec.restart_policy);
	P_POP(v, g);
	P_POP(v, f);
	P_POP(v, sp);
}

void model_v_node(struct model_val *v, const struct model_node *n)
{
	size_t sp = P_FIELD(v, "spec");

	model_v_taints(v, "taints", n->taints, n->n_taints, -1, model_core_effects);
	P_POP(v, sp);
}

/* ---- scheduling.k8s.io PodGroup ----
 * Its rules are declarative upstream (+k8s tags of the v1beta1 types):
 * union members worded by validate.Union, maxItems 4, map-list keys. */

#define MAX_POD_GROUP_CLAIMS 4

static void v_pod_group_claim(struct model_val *v, const struct model_pod_claim *c)
{
	size_t f = P_FIELD(v, "name");
	bool by_name = !model_empty(c->resource_claim_name);
	bool by_tmpl = !model_empty(c->resource_claim_template_name);

	if (model_empty(c->name))
		model_e_required(v, "");
	else
		model_v_dns_label(v, c->name);
	P_POP(v, f);
	if (by_name && by_tmpl) {
		model_e_invalid_raw(v, "\"{resourceClaimName, resourceClaimTemplateName}\"",
				    "must specify exactly one of: `resourceClaimName`, "
				    "`resourceClaimTemplateName`");
	} else if (!by_name && !by_tmpl) {
		model_e_invalid_str(v, "", "must specify one of: `resourceClaimName`, "
				    "`resourceClaimTemplateName`");
	} else {
		f = P_FIELD(v, by_name ? "resourceClaimName" : "resourceClaimTemplateName");
		model_v_dns_subdomain(v, by_name ? c->resource_claim_name
				      : c->resource_claim_template_name);
		P_POP(v, f);
	}
}

void model_v_pod_group(struct model_val *v, const struct model_pod_group *g)
{
	size_t sp = P_FIELD(v, "spec"), f = P_FIELD(v, "schedulingPolicy");

	if (g->basic && g->gang) {
		model_e_invalid_raw(v, "\"{basic, gang}\"",
				    "must specify exactly one of: `basic`, `gang`");
	} else if (!g->basic && !g->gang) {
		model_e_invalid_str(v, "", "must specify one of: `basic`, `gang`");
	} else if (g->gang) {
		size_t gf = P_FIELD(v, "gang"), mf = P_FIELD(v, "minCount");

		if (!g->has_min_count)
			model_e_required(v, "");
		else if (g->min_count < 1)
			model_e_invalid_int(v, g->min_count, "must be greater than or equal to 1");
		P_POP(v, mf);
		P_POP(v, gf);
	}
	P_POP(v, f);
	f = P_FIELD(v, "resourceClaims");
	if (g->n_resource_claims > MAX_POD_GROUP_CLAIMS) {
		model_e_too_many(v, g->n_resource_claims, MAX_POD_GROUP_CLAIMS);
	} else {
		for (size_t i = 0; i < g->n_resource_claims; i++) {
			size_t ix = P_INDEX(v, i);

			for (size_t j = 0; j < i; j++)
				if (g->resource_claims[i].name && g->resource_claims[j].name &&
				    !strcmp(g->resource_claims[i].name, g->resource_claims[j].name)) {
					model_e_duplicate(v, g->resource_claims[i].name);
					break;
				}
			v_pod_group_claim(v, &g->resource_claims[i]);
			P_POP(v, ix);
		}
	}
	P_POP(v, f);
	P_POP(v, sp);
}
