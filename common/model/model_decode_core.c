/* model_decode_core.c - core/v1 and workload objects from their trees:
 * pods (containers, resources, claims, scheduling fields), the pod
 * templates of Deployment, ReplicaSet, StatefulSet and Job, and nodes. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"
#include "strbuf.h"

/* The field lists of the closed parts of a pod, NULL-terminated. */
static const char *const f_pod_claim[] = { "name", "resourceClaimName",
					   "resourceClaimTemplateName", NULL };
static const char *const f_resources[] = { "limits", "requests", "claims", NULL };
static const char *const f_container_claim[] = { "name", "request", NULL };

/* ---- core/v1 and workloads ---- */

static void item_container_claim(struct model_dec *d, const struct doc_node *it, void *slot,
				 const void *ctx)
{
	struct model_container_claim *cc = slot;

	model_closed_fields(d, it, f_container_claim, NULL);
	cc->name = model_get_str(d, it, "name");
	cc->request = model_get_str(d, it, "request");
	(void)ctx;
}

static void item_container(struct model_dec *d, const struct doc_node *it, void *slot,
			   const void *ctx)
{
	struct model_container *c = slot;
	const struct doc_node *res = model_get_map(d, it, "resources");

	c->name = model_get_str(d, it, "name");
	c->image = model_get_str(d, it, "image");
	c->restart_policy = model_get_str(d, it, "restartPolicy");
	if (res) {
		size_t rm = model_path_field(&d->path, "resources");
		const struct doc_node *claims = model_get_seq(d, res, "claims");

		model_closed_fields(d, res, f_resources, NULL);
		model_get_resource_list(d, res, "requests", &c->requests);
		model_get_resource_list(d, res, "limits", &c->limits);
		LIST_ITEMS(d, claims, "claims", c->claims, c->n_claims, item_container_claim, NULL);
		model_path_pop(&d->path, rm);
	}
	(void)ctx;
}

/* spec.resources: requests and limits of the pod as a whole (no claims). */
static void get_pod_resources(struct model_dec *d, const struct doc_node *spec,
			      struct model_pod_spec *p)
{
	static const char *const f_pod_resources[] = { "limits", "requests", NULL };
	const struct doc_node *res = model_get_map(d, spec, "resources");
	size_t rm;

	if (!res)
		return;
	rm = model_path_field(&d->path, "resources");
	model_closed_fields(d, res, f_pod_resources, NULL);
	model_get_resource_list(d, res, "requests", &p->pod_requests);
	model_get_resource_list(d, res, "limits", &p->pod_limits);
	model_path_pop(&d->path, rm);
}

static void get_containers(struct model_dec *d, const struct doc_node *m, const char *key,
			   struct model_container **out, size_t *n_out)
{
	GET_LIST(d, m, key, *out, *n_out, item_container, NULL);
}

static void item_pod_claim(struct model_dec *d, const struct doc_node *it, void *slot,
			   const void *ctx)
{
	struct model_pod_claim *c = slot;

	model_closed_fields(d, it, f_pod_claim, NULL);
	c->name = model_get_str(d, it, "name");
	c->resource_claim_name = model_get_str(d, it, "resourceClaimName");
	c->resource_claim_template_name = model_get_str(d, it, "resourceClaimTemplateName");
	(void)ctx;
}

/* spec.schedulingGroup.podGroupName. */
static void dec_scheduling_group(struct model_dec *d, const struct doc_node *spec,
				 struct model_pod_spec *p)
{
	const struct doc_node *sg = model_get_map(d, spec, "schedulingGroup");

	if (sg) {
		size_t mark = model_path_field(&d->path, "schedulingGroup");

		p->pod_group_name = model_get_str(d, sg, "podGroupName");
		model_path_pop(&d->path, mark);
	}
}

static void dec_pod_spec(struct model_dec *d, const struct doc_node *spec, struct model_pod_spec *p)
{
	const struct doc_node *aff = model_get_map(d, spec, "affinity");
	const struct doc_node *rc = model_get_seq(d, spec, "resourceClaims");
	const struct doc_node *gates = model_get_seq(d, spec, "schedulingGates");

	p->node_name = model_get_str(d, spec, "nodeName");
	model_get_kv(d, spec, "nodeSelector", &p->node_selector, &p->n_node_selector);
	if (aff) {
		size_t am = model_path_field(&d->path, "affinity");
		const struct doc_node *na = model_get_map(d, aff, "nodeAffinity");

		if (na) {
			size_t nm = model_path_field(&d->path, "nodeAffinity");

			p->required_node_affinity = model_get_node_selector(d, na,
				"requiredDuringSchedulingIgnoredDuringExecution");
			model_path_pop(&d->path, nm);
		}
		model_path_pop(&d->path, am);
	}
	model_get_tolerations(d, spec, "tolerations", &p->tolerations, &p->n_tolerations);
	LIST_ITEMS(d, rc, "resourceClaims", p->resource_claims, p->n_resource_claims,
		   item_pod_claim, NULL);
	get_containers(d, spec, "containers", &p->containers, &p->n_containers);
	get_containers(d, spec, "initContainers", &p->init_containers, &p->n_init_containers);
	model_get_resource_list(d, spec, "overhead", &p->overhead);
	get_pod_resources(d, spec, p);
	model_get_int(d, spec, "priority", 32, &p->has_priority, &p->priority);
	p->priority_class_name = model_get_str(d, spec, "priorityClassName");
	p->scheduler_name = model_get_str(d, spec, "schedulerName");
	p->restart_policy = model_get_str(d, spec, "restartPolicy");
	dec_scheduling_group(d, spec, p);
	p->n_scheduling_gates = gates ? gates->u.seq.n : 0;
}

static void item_pod_claim_status(struct model_dec *d, const struct doc_node *it, void *slot,
				  const void *ctx)
{
	struct model_pod_claim_status *c = slot;

	c->name = model_get_str(d, it, "name");
	c->resource_claim_name = model_get_str(d, it, "resourceClaimName");
	(void)ctx;
}

void model_dec_pod(struct model_dec *d, const struct doc_node *root, struct model_pod *p)
{
	const struct doc_node *spec = model_get_map(d, root, "spec");
	const struct doc_node *status = model_get_map(d, root, "status");

	if (spec) {
		size_t mark = model_path_field(&d->path, "spec");

		dec_pod_spec(d, spec, &p->spec);
		model_path_pop(&d->path, mark);
	}
	if (status) {
		size_t mark = model_path_field(&d->path, "status");
		const struct doc_node *rcs = model_get_seq(d, status, "resourceClaimStatuses");

		p->status.phase = model_get_str(d, status, "phase");
		LIST_ITEMS(d, rcs, "resourceClaimStatuses", p->status.resource_claim_statuses,
			   p->status.n_resource_claim_statuses, item_pod_claim_status, NULL);
		model_path_pop(&d->path, mark);
	}
}

void model_dec_workload(struct model_dec *d, const struct doc_node *root, enum model_kind k,
			 struct model_workload *w)
{
	const struct doc_node *spec = model_get_map(d, root, "spec");
	const struct doc_node *sel, *tmpl;
	size_t mark;

	if (!spec)
		return;
	mark = model_path_field(&d->path, "spec");
	if (k == MODEL_JOB) {
		model_get_int(d, spec, "parallelism", 32, &w->has_parallelism, &w->parallelism);
		model_get_int(d, spec, "completions", 32, &w->has_completions, &w->completions);
	} else if (k != MODEL_DAEMON_SET) {
		model_get_int(d, spec, "replicas", 32, &w->has_replicas, &w->replicas);
	}
	sel = model_get_map(d, spec, "selector");
	if (sel) {
		size_t sm = model_path_field(&d->path, "selector");

		DALLOC(d, w->selector, 1);
		if (w->selector) {
			model_get_kv(d, sel, "matchLabels", &w->selector->match_labels,
			       &w->selector->n_match_labels);
			model_get_requirements(d, sel, "matchExpressions",
					       &w->selector->match_expressions,
					 &w->selector->n_match_expressions);
		}
		model_path_pop(&d->path, sm);
	}
	tmpl = model_get_map(d, spec, "template");
	if (tmpl) {
		size_t tm = model_path_field(&d->path, "template");
		const struct doc_node *ps = model_get_map(d, tmpl, "spec");

		model_get_meta(d, tmpl, "metadata", &w->template_.meta);
		if (ps) {
			size_t pm = model_path_field(&d->path, "spec");

			dec_pod_spec(d, ps, &w->template_.spec);
			model_path_pop(&d->path, pm);
		}
		model_path_pop(&d->path, tm);
	}
	model_path_pop(&d->path, mark);
}

void model_dec_node(struct model_dec *d, const struct doc_node *root, struct model_node *n)
{
	const struct doc_node *spec = model_get_map(d, root, "spec");
	const struct doc_node *status = model_get_map(d, root, "status");

	if (spec) {
		size_t mark = model_path_field(&d->path, "spec");

		n->provider_id = model_get_str(d, spec, "providerID");
		model_get_taints(d, spec, "taints", &n->taints, &n->n_taints);
		model_get_bool(d, spec, "unschedulable", NULL, &n->unschedulable);
		model_path_pop(&d->path, mark);
	}
	if (status) {
		size_t mark = model_path_field(&d->path, "status");

		model_get_resource_list(d, status, "capacity", &n->capacity);
		model_get_resource_list(d, status, "allocatable", &n->allocatable);
		model_path_pop(&d->path, mark);
	}
}

/* scheduling.k8s.io PodGroup: the scheduling policy and the shared claims
 * (the rest of the spec does not change where pods fit). */
void model_dec_pod_group(struct model_dec *d, const struct doc_node *root,
			 struct model_pod_group *g)
{
	const struct doc_node *spec = model_get_map(d, root, "spec");
	const struct doc_node *status = model_get_map(d, root, "status");

	if (spec) {
		size_t mark = model_path_field(&d->path, "spec");
		const struct doc_node *pol = model_get_map(d, spec, "schedulingPolicy");
		const struct doc_node *rc = model_get_seq(d, spec, "resourceClaims");

		if (pol) {
			size_t pm = model_path_field(&d->path, "schedulingPolicy");
			const struct doc_node *gang = model_get_map(d, pol, "gang");

			g->basic = model_get_map(d, pol, "basic") != NULL;
			g->gang = gang != NULL;
			if (gang) {
				size_t gm = model_path_field(&d->path, "gang");

				model_get_int(d, gang, "minCount", 32, &g->has_min_count,
					      &g->min_count);
				model_path_pop(&d->path, gm);
			}
			model_path_pop(&d->path, pm);
		}
		LIST_ITEMS(d, rc, "resourceClaims", g->resource_claims, g->n_resource_claims,
			   item_pod_claim, NULL);
		model_path_pop(&d->path, mark);
	}
	if (status) {
		size_t mark = model_path_field(&d->path, "status");
		const struct doc_node *rcs = model_get_seq(d, status, "resourceClaimStatuses");

		LIST_ITEMS(d, rcs, "resourceClaimStatuses", g->resource_claim_statuses,
			   g->n_resource_claim_statuses, item_pod_claim_status, NULL);
		model_path_pop(&d->path, mark);
	}
}
