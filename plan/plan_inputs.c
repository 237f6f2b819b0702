/* plan_inputs.c - the planner's setup: the cluster's classes, slices and
 * allocated claims, indexed by node; an exnode per existing Node (labels,
 * allocatable, what bound pods and allocated claims already use, its
 * allocator context); a pool per NodePool (its EC2NodeClass, kubelet
 * settings, limits); a hypo per (instance type, consumable-capacity mode)
 * with the slices hwdb predicts; and a cand per (pool, instance type,
 * capacity type) the pool's requirements and offerings allow. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan_state.h"

static bool spec_has_quantity(const struct model_resource_list *l, const char *name,
			      int64_t *out, bool milli)
{
	for (size_t i = 0; i < l->n_items; i++) {
		if (strcmp(l->items[i].name, name))
			continue;
		if (milli) {
			double v = quantity_to_double(&l->items[i].value) * 1000.0;

			*out = v >= (double)PLAN_RES_MAX ? PLAN_RES_MAX : v <= 0 ? 0 : (int64_t)(v + 0.5);
		} else {
			int64_t v = quantity_value_ceil(&l->items[i].value);

			*out = v > PLAN_RES_MAX ? PLAN_RES_MAX : v < 0 ? 0 : v;
		}
		return true;
	}
	return false;
}

/* ---- Inputs ---- */

static int cmp_slice_node(const void *a, const void *b)
{
	const char *x = (*(const struct model_object *const *)a)->u.slice.node_name;
	const char *y = (*(const struct model_object *const *)b)->u.slice.node_name;

	if (!x || !y)
		return !x && !y ? 0 : !x ? -1 : 1;
	return strcmp(x, y);
}

static int cmp_node_claim(const void *a, const void *b)
{
	return strcmp(((const struct node_claim *)a)->node, ((const struct node_claim *)b)->node);
}

struct pool_node { const char *driver, *pool, *node; };

static int cmp_pool_node(const void *a, const void *b)
{
	const struct pool_node *x = a, *y = b;
	int c = strcmp(x->driver, y->driver);

	return c ? c : strcmp(x->pool, y->pool);
}

/* Which node each allocated claim's devices are on: through the pools of
 * node-local slices; a claim using any other device counts everywhere. */
static int index_allocated(struct planner *pl)
{
	struct pool_node *pools = calloc(pl->n_slices + 1, sizeof(*pools));
	size_t np = 0, cap = 0;
	int rc = -ENOMEM;

	pl->global_claims = calloc(pl->n_allocated + 1, sizeof(*pl->global_claims));
	if (!pools || !pl->global_claims)
		goto out;
	for (size_t i = pl->n_global_slices; i < pl->n_slices; i++) {
		const struct model_resource_slice_spec *sp = &pl->slices[i]->u.slice;

		if (sp->driver && sp->pool.name)
			pools[np++] = (struct pool_node){ sp->driver, sp->pool.name, sp->node_name };
	}
	qsort(pools, np, sizeof(*pools), cmp_pool_node);
	for (size_t i = 0; i < pl->n_allocated; i++) {
		const struct model_allocation *a = pl->allocated[i]->u.claim.status.allocation;
		const char *node = NULL;
		bool global = false;

		for (size_t k = 0; k < a->n_results && !global; k++) {
			struct pool_node key = { a->results[k].driver, a->results[k].pool, NULL };
			const struct pool_node *hit;

			if (!key.driver || !key.pool) {
				global = true;
				break;
			}
			hit = bsearch(&key, pools, np, sizeof(*pools), cmp_pool_node);
			if (!hit || (node && strcmp(node, hit->node)))
				global = true;
			else
				node = hit->node;
		}
		if (global || !node) {
			pl->global_claims[pl->n_global_claims++] = pl->allocated[i];
			continue;
		}
		if (DT_GROW(pl->by_node, cap, pl->n_by_node + 1))
			goto out;
		pl->by_node[pl->n_by_node++] = (struct node_claim){ node, pl->allocated[i] };
	}
	if (pl->n_by_node)
		qsort(pl->by_node, pl->n_by_node, sizeof(*pl->by_node), cmp_node_claim);
	rc = 0;
out:
	free(pools);
	return rc ? dt_err_set(pl->err, rc, "out of memory") : 0;
}

int plan_collect_objects(struct planner *pl)
{
	struct model_set *set = pl->set;
	const struct model_object *o;
	size_t nc = model_set_count(set, MODEL_DEVICE_CLASS);
	size_t ns = model_set_count(set, MODEL_RESOURCE_SLICE);
	size_t na = 0, i;

	pl->classes = calloc(nc + 1, sizeof(*pl->classes));
	pl->slices = calloc(ns + 1, sizeof(*pl->slices));
	pl->allocated = calloc(model_set_count(set, MODEL_RESOURCE_CLAIM) + 1,
			       sizeof(*pl->allocated));
	pl->taint_rules = calloc(model_set_count(set, MODEL_DEVICE_TAINT_RULE) + 1,
				 sizeof(*pl->taint_rules));
	if (!pl->classes || !pl->slices || !pl->allocated || !pl->taint_rules)
		return dt_err_set(pl->err, -ENOMEM, "out of memory");
	for (i = 0, o = NULL; (o = model_set_next(set, MODEL_DEVICE_CLASS, o));)
		pl->classes[i++] = o;
	pl->n_classes = i;
	/* Rules apply to existing and hypothetical nodes alike: a rule for a
	 * driver taints that driver's devices on new nodes too. */
	for (i = 0, o = NULL; (o = model_set_next(set, MODEL_DEVICE_TAINT_RULE, o));)
		pl->taint_rules[i++] = o;
	pl->n_taint_rules = i;
	pl->aopts.taint_rules = pl->taint_rules;
	pl->aopts.n_taint_rules = pl->n_taint_rules;
	for (i = 0, o = NULL; (o = model_set_next(set, MODEL_RESOURCE_SLICE, o));)
		pl->slices[i++] = o;
	pl->n_slices = i;
	/* Stable order within a node: qsort is not stable, but the
	 * allocator sorts pools itself. */
	qsort(pl->slices, pl->n_slices, sizeof(*pl->slices), cmp_slice_node);
	while (pl->n_global_slices < pl->n_slices &&
	       !pl->slices[pl->n_global_slices]->u.slice.node_name)
		pl->n_global_slices++;
	for (o = NULL; (o = model_set_next(set, MODEL_RESOURCE_CLAIM, o));)
		if (o->u.claim.status.allocation)
			pl->allocated[na++] = o;
	pl->n_allocated = na;
	return index_allocated(pl);
}

/* [*lo, *hi) of the sorted slices whose nodeName is name. */
static void slice_range(const struct planner *pl, const char *name, size_t *lo, size_t *hi)
{
	size_t a = pl->n_global_slices, b = pl->n_slices;

	while (a < b) {
		size_t m = a + (b - a) / 2;

		if (strcmp(pl->slices[m]->u.slice.node_name, name) < 0)
			a = m + 1;
		else
			b = m;
	}
	*lo = a;
	for (b = a; b < pl->n_slices && !strcmp(pl->slices[b]->u.slice.node_name, name); b++)
		;
	*hi = b;
}

static int cmp_node_name(const void *a, const void *b)
{
	const struct exnode *x = *(const struct exnode *const *)a;
	const struct exnode *y = *(const struct exnode *const *)b;

	int c = strcmp(x->obj->meta.name, y->obj->meta.name);

	/* Input order among equal names: the first such node is charged. */
	return c ? c : x < y ? -1 : x > y;
}

/* Shared claims (named, or a PodGroup's) allocated for bound pods so far:
 * a claim several of them hold is allocated once. */
struct held {
	const struct model_object **v;
	size_t n, cap;
};

static bool held_has(const struct held *h, const struct model_object *claim)
{
	for (size_t i = 0; i < h->n; i++)
		if (h->v[i] == claim)
			return true;
	return false;
}

/* The claims of bound pod b that the input does not show allocated: the
 * scheduler allocated them on b's node when it bound the pod, so the plan
 * does the same before it places anything, and their devices are held.
 * What cannot be done (a claim the input lacks, claims that do not fit
 * what is left there) is a warning: those devices count as free then. */
static int hold_bound_claims(struct planner *pl, struct exnode *en, const struct plan_bound *b,
			     struct held *h)
{
	const struct plan_pod *p = &b->pod;
	const struct model_object **todo;
	struct alloc_outcome out;
	size_t n = 0;
	int rc;

	if (p->problem)
		dt_diags_add(&pl->res->warnings, "pod %s/%s runs on node %s: %s: the devices it "
			     "holds there are not counted", p->ns, p->name, b->node, p->problem);
	if (!p->n_claims)
		return 0;
	if (!(todo = malloc(p->n_claims * sizeof(*todo))))
		return dt_err_set(pl->err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < p->n_claims && i < p->spec->n_resource_claims; i++) {
		const struct model_object *cl = p->claims[i];
		/* a claim it names, or its PodGroup's: others may hold it too */
		bool shared = p->spec->resource_claims[i].resource_claim_name ||
			      (p->group_claim && p->group_claim[i]);

		if (!cl || cl->u.claim.status.allocation || (shared && held_has(h, cl)))
			continue;
		if (shared && DT_GROW(h->v, h->cap, h->n + 1)) {
			free(todo);
			return dt_err_set(pl->err, -ENOMEM, "out of memory");
		}
		if (shared)
			h->v[h->n++] = cl;
		todo[n++] = cl;
	}
	rc = n ? plan_exnode_ctx(pl, en) : 0;
	if (rc || !n) {
		free(todo);
		return rc;
	}
	rc = alloc_try(en->actx, en->state, todo, n, &out, pl->err);
	if (!rc && out.allocated) {
		alloc_state_commit(en->state, &out);
		rc = plan_share_outcome(pl, en, &out);
	} else if (rc != -ENOMEM)
		dt_diags_add(&pl->res->warnings, "pod %s/%s runs on node %s, but its claims do not "
			     "fit what the input leaves there (%s): their devices count as free",
			     p->ns, p->name, b->node, rc ? pl->err->msg : out.reason);
	alloc_outcome_free(&out);
	free(todo);
	return rc == -ENOMEM ? rc : 0;
}

/* Bound pods use their node's resources and devices: found by name in a
 * sorted index, as there may be thousands of both. */
static int charge_bound(struct planner *pl)
{
	struct exnode **by_name;
	struct held held = { 0 };
	int rc = 0;

	if (!pl->pods.n_bound || !pl->n_nodes)
		return 0;
	if (!(by_name = malloc(pl->n_nodes * sizeof(*by_name))))
		return dt_err_set(pl->err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < pl->n_nodes; i++)
		by_name[i] = &pl->nodes[i];
	qsort(by_name, pl->n_nodes, sizeof(*by_name), cmp_node_name);
	for (size_t b = 0; b < pl->pods.n_bound; b++) {
		size_t lo = 0, hi = pl->n_nodes;

		while (lo < hi) {
			size_t m = lo + (hi - lo) / 2;

			if (strcmp(by_name[m]->obj->meta.name, pl->pods.bound[b].node) < 0)
				lo = m + 1;
			else
				hi = m;
		}
		if (lo == pl->n_nodes || strcmp(by_name[lo]->obj->meta.name, pl->pods.bound[b].node))
			continue;       /* on a node the plan does not know */
		plan_res_add(&by_name[lo]->used, &pl->pods.bound[b].req);
		if ((rc = hold_bound_claims(pl, by_name[lo], &pl->pods.bound[b], &held)))
			break;
	}
	free(held.v);
	free(by_name);
	return rc;
}

int plan_setup_nodes(struct planner *pl)
{
	const struct model_object *o;
	size_t n = model_set_count(pl->set, MODEL_NODE), i = 0;

	pl->nodes = calloc(n + 1, sizeof(*pl->nodes));
	if (!pl->nodes)
		return dt_err_set(pl->err, -ENOMEM, "out of memory");
	for (o = NULL; (o = model_set_next(pl->set, MODEL_NODE, o)); i++) {
		struct exnode *en = &pl->nodes[i];
		const struct model_resource_list *al = o->u.node.allocatable.n_items
							       ? &o->u.node.allocatable
							       : &o->u.node.capacity;

		en->obj = o;
		en->labels = calloc(o->meta.n_labels + 1, sizeof(*en->labels));
		if (!en->labels)
			return dt_err_set(pl->err, -ENOMEM, "out of memory");
		plan_copy(en->labels, o->meta.labels, o->meta.n_labels * sizeof(*en->labels));
		en->labels[o->meta.n_labels].key = "metadata.name";
		en->labels[o->meta.n_labels].value = o->meta.name;
		en->n_labels = o->meta.n_labels + 1;
		/* A Node written by hand may leave out its status: then what a
		 * node of its instance type has, as for a new one, and no
		 * limit when the type is not known either. */
		const struct hwdb_type *t = hwdb_catalog_lookup(pl->catalog,
				plan_label(o->meta.labels, o->meta.n_labels,
					   PLAN_LABEL_INSTANCE_TYPE) ?: "");
		struct plan_res guess = { .cpu_milli = PLAN_RES_MAX, .mem_bytes = PLAN_RES_MAX,
					  .pods = PLAN_DEFAULT_MAX_PODS };

		if (t) {
			struct plan_kubelet k;

			plan_kubelet_defaults(&k);
			plan_node_allocatable(t->vcpu, t->memory_mib, &k, &guess);
		}
		if (!spec_has_quantity(al, "cpu", &en->cap.cpu_milli, true))
			en->cap.cpu_milli = guess.cpu_milli;
		if (!spec_has_quantity(al, "memory", &en->cap.mem_bytes, false))
			en->cap.mem_bytes = guess.mem_bytes;
		if (!spec_has_quantity(al, "pods", &en->cap.pods, false))
			en->cap.pods = guess.pods;
		/* Extended resources the node really has (its device plugins'). */
		for (size_t k = 0; k < pl->pods.n_ext_names; k++)
			if (!spec_has_quantity(al, pl->pods.ext_names[k], &en->cap.ext[k], false))
				en->cap.ext[k] = 0;
	}
	pl->n_nodes = i;
	return charge_bound(pl);
}

int plan_exnode_ctx(struct planner *pl, struct exnode *en)
{
	size_t k = 0;
	int rc;

	if (en->actx)
		return 0;
	/* Only the node's own slices and those not bound to a node matter
	 * here; other nodes' pools cannot serve it. */
	size_t lo, hi;

	slice_range(pl, en->obj->meta.name, &lo, &hi);
	en->slices = calloc(pl->n_global_slices + (hi - lo) + 1, sizeof(*en->slices));
	if (!en->slices)
		return dt_err_set(pl->err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < pl->n_global_slices; i++)
		en->slices[k++] = pl->slices[i];
	for (size_t i = lo; i < hi; i++)
		en->slices[k++] = pl->slices[i];
	en->an.name = en->obj->meta.name;
	en->an.labels = en->obj->meta.labels;
	en->an.n_labels = en->obj->meta.n_labels;
	rc = alloc_ctx_new(&en->an, en->slices, k, pl->classes, pl->n_classes, &pl->aopts,
			   &en->actx, pl->err);
	if (rc)
		return rc;
	if (!(en->state = alloc_state_new(en->actx)))
		return dt_err_set(pl->err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < pl->n_global_claims; i++)
		if ((rc = alloc_state_add_allocation(en->state,
				pl->global_claims[i]->u.claim.status.allocation, pl->err)))
			return rc;
	struct node_claim key = { en->obj->meta.name, NULL };
	const struct node_claim *hit = pl->n_by_node ? bsearch(&key, pl->by_node, pl->n_by_node,
							      sizeof(key), cmp_node_claim) : NULL;

	while (hit && hit > pl->by_node && !strcmp(hit[-1].node, key.node))
		hit--;
	for (; hit && hit < pl->by_node + pl->n_by_node && !strcmp(hit->node, key.node); hit++)
		if ((rc = alloc_state_add_allocation(en->state,
				hit->claim->u.claim.status.allocation, pl->err)))
			return rc;
	for (size_t i = 0; i < pl->n_run_allocs; i++)
		if ((rc = alloc_state_add_allocation(en->state, pl->run_allocs[i], pl->err)))
			return rc;
	return 0;
}

int plan_share_outcome(struct planner *pl, const struct exnode *en,
		       const struct alloc_outcome *out)
{
	int rc;

	/* Without such slices every device is its node's (the common case):
	 * nothing to share, and nothing to pay per node. */
	if (!pl->n_global_slices)
		return 0;
	for (size_t c = 0; c < out->n_claims; c++) {
		struct model_allocation *a;

		if (alloc_result_to_model(&out->claims[c], pl->set, &a) ||
		    DT_GROW(pl->run_allocs, pl->cap_run_allocs, pl->n_run_allocs + 1))
			return dt_err_set(pl->err, -ENOMEM, "out of memory");
		pl->run_allocs[pl->n_run_allocs++] = a;
		/* The other nodes' own devices are unknown to each other's
		 * states, which pass over them. */
		for (size_t i = 0; i < pl->n_nodes; i++)
			if (&pl->nodes[i] != en && pl->nodes[i].state &&
			    (rc = alloc_state_add_allocation(pl->nodes[i].state, a, pl->err)))
				return rc;
	}
	return 0;
}

static const struct model_object *find_nodeclass(struct planner *pl, const char *name)
{
	const struct model_object *o;

	/* None given (the common case): no find, which would index every
	 * object added since the last one (the generated claims). */
	if (!model_set_count(pl->set, MODEL_EC2_NODE_CLASS))
		return NULL;
	if (name)
		return model_set_find(pl->set, MODEL_EC2_NODE_CLASS, NULL, name);
	if (model_set_count(pl->set, MODEL_EC2_NODE_CLASS) == 1)
		return model_set_next(pl->set, MODEL_EC2_NODE_CLASS, NULL);
	o = model_set_find(pl->set, MODEL_EC2_NODE_CLASS, NULL, "default");
	return o;
}

const char *plan_annotation(const struct model_meta *m, const char *key)
{
	return plan_label(m->annotations, m->n_annotations, key);
}

/* The pool's limits, and what its nodes already use of them: as Karpenter
 * counts a NodePool's resources, every node labelled with the pool (the
 * coordinator's NodeClaims in flight among them) by its type's size. */
static void pool_limits(const struct planner *pl, struct pool *p)
{
	const struct model_resource_list *l;
	const struct model_object *o;

	p->lim_cpu = p->lim_mem = p->lim_gpu = p->lim_nodes = -1;
	if (!p->obj)
		return;
	l = &p->obj->u.node_pool.limits;
	if (!spec_has_quantity(l, "cpu", &p->lim_cpu, true))
		p->lim_cpu = -1;
	if (!spec_has_quantity(l, "memory", &p->lim_mem, false))
		p->lim_mem = -1;
	if (!spec_has_quantity(l, "nvidia.com/gpu", &p->lim_gpu, false))
		p->lim_gpu = -1;
	if (!spec_has_quantity(l, "nodes", &p->lim_nodes, false))
		p->lim_nodes = -1;
	for (o = NULL; (o = model_set_next(pl->set, MODEL_NODE, o));) {
		const char *pool = plan_label(o->meta.labels, o->meta.n_labels, PLAN_LABEL_NODEPOOL);
		const struct hwdb_type *t;

		if (!pool || strcmp(pool, p->name))
			continue;
		p->use_nodes++;
		t = hwdb_catalog_lookup(pl->catalog, plan_label(o->meta.labels, o->meta.n_labels,
								PLAN_LABEL_INSTANCE_TYPE) ?: "");
		if (t) {
			p->use_cpu += (int64_t)t->vcpu * 1000;
			p->use_mem += t->memory_mib << 20;
			p->use_gpu += (int64_t)t->n_gpus;
		}
	}
}

/* Whether a DaemonSet's pods would run on the pool's nodes, as Karpenter
 * decides it for a NodePool: its taints tolerated (PreferNoSchedule never
 * counts), its requirements and template labels compatible with the
 * pod's node selection. */
static bool daemon_runs_on(const struct pool *p, const struct plan_node_spec *node,
			   const struct model_pod_spec *pod)
{
	char why[256];

	return !plan_untolerated(p->taints, p->n_taints, pod->tolerations, pod->n_tolerations) &&
	       plan_pod_selects(node, pod, why, sizeof(why));
}

/* p->daemons: the summed requests of the DaemonSets whose pods its nodes
 * would run (each pod takes a pod slot too). -ENOMEM. */
static int pool_daemons(struct planner *pl, struct pool *p)
{
	const struct model_object *o = NULL;
	struct plan_node_spec node = { .reqs = p->reqs, .n_reqs = p->n_reqs, .hypothetical = true };
	struct model_kv *labels;

	memset(&p->daemons, 0, sizeof(p->daemons));
	p->n_daemons = 0;
	if (!model_set_count(pl->set, MODEL_DAEMON_SET))
		return 0;
	if (!(labels = calloc(p->n_tlabels + 1, sizeof(*labels))))
		return -ENOMEM;
	plan_copy(labels, p->tlabels, p->n_tlabels * sizeof(*labels));
	labels[p->n_tlabels] = (struct model_kv){ PLAN_LABEL_NODEPOOL, p->name };
	node.labels = labels;
	node.n_labels = p->n_tlabels + 1;
	while ((o = model_set_next(pl->set, MODEL_DAEMON_SET, o))) {
		const struct model_pod_spec *pod = &o->u.workload.template_.spec;
		struct plan_res r = { 0 };

		if (!daemon_runs_on(p, &node, pod))
			continue;
		plan_pod_requests(pod, &r);
		plan_pod_node_ext(pod, pl->pods.ext_names, pl->pods.n_ext_names, &r);
		plan_res_add(&p->daemons, &r);
		p->n_daemons++;
	}
	free(labels);
	return 0;
}

/* The region p's nodes are priced in: --region, else the one value of its
 * topology.kubernetes.io/region In requirement, else the default; a pool
 * that excludes --region gets a problem instead. 0 or -ENOMEM. */
static int pool_region(struct planner *pl, struct pool *p)
{
	const char *cluster = pl->opts ? pl->opts->region : NULL;

	p->region = cluster ? cluster : HWDB_DEFAULT_REGION;
	for (size_t i = 0; i < p->n_reqs; i++) {
		struct plan_vset r;

		if (strcmp(p->reqs[i].key, PLAN_LABEL_REGION) || plan_vset_from_req(&p->reqs[i], &r))
			continue;
		if (cluster && !plan_vset_has(&r, cluster)) {
			p->problem = plan_afmt(pl, "it requires %s %s, and the cluster runs in %s "
					       "(--region)", PLAN_LABEL_REGION,
					       p->reqs[i].n_values == 1 ? p->reqs[i].values[0]
					       : "values without it", cluster);
			return p->problem ? 0 : -ENOMEM;
		}
		if (!cluster && p->reqs[i].op == MODEL_OP_IN && p->reqs[i].n_values == 1)
			p->region = p->reqs[i].values[0];
	}
	return 0;
}

/* What an EC2NodeClass (NULL: none) says of its nodes' GPUs: the
 * consumable-capacity mode and the MIG layout of its annotations. A bad
 * annotation returns -EINVAL with "EC2NodeClass NAME: annotation KEY:
 * reason" in why. */
static int class_modes(const struct model_object *nc, struct hwdb_cc_mode *cc,
		       struct hwdb_mig_layout *mig, char *why, size_t whysz)
{
	static const char *const keys[] = { PLAN_ANNOTATION_CONSUMABLE_CAPACITY,
					     PLAN_ANNOTATION_MIG_LAYOUT };
	struct dt_err e = { 0 };

	for (size_t i = 0; i < 2; i++) {
		const char *v = nc ? plan_annotation(&nc->meta, keys[i]) : NULL;

		if (i ? hwdb_mig_parse(v, mig, &e) : hwdb_cc_parse(v, cc, &e)) {
			snprintf(why, whysz, "EC2NodeClass %s: annotation %s: %s", nc->meta.name,
				 keys[i], e.msg);
			return -EINVAL;
		}
	}
	return 0;
}

int plan_node_slices(const struct hwdb_type *t, const struct model_object *nc, const char *node,
		     struct model_set *set, struct model_object **out, size_t *n,
		     struct dt_err *err)
{
	struct hwdb_cc_mode cc;
	struct hwdb_mig_layout mig, use;
	struct hwdb_slice_opts so = { .cc = &cc, .mig = &use };
	char why[512];

	*n = 0;
	if (class_modes(nc, &cc, &mig, why, sizeof(why)))
		return dt_err_set(err, -EINVAL, "%s", why);
	if (plan_mig_for_type(&mig, t, &use, why, sizeof(why)))
		return dt_err_set(err, -EINVAL, "%s", why);
	return hwdb_slices_opts(t, &so, node, set, out, n, err);
}

static int setup_pool(struct planner *pl, struct pool *p, const struct model_object *o)
{
	struct dt_err e;
	char why[512];
	bool has_ct = false;

	p->obj = o;
	p->name = o ? o->meta.name : "default";
	p->on_demand = true;
	if (o) {
		const struct model_node_pool *np = &o->u.node_pool;

		p->reqs = np->requirements;
		p->n_reqs = np->n_requirements;
		p->taints = np->taints;
		p->n_taints = np->n_taints;
		p->tlabels = np->template_labels;
		p->n_tlabels = np->n_template_labels;
		p->nc = find_nodeclass(pl, np->node_class_ref.name);
	} else {
		p->nc = find_nodeclass(pl, NULL);
	}
	pool_limits(pl, p);
	if (pool_daemons(pl, p) || pool_region(pl, p))
		return -ENOMEM;
	if (p->problem)
		return 0;
	/* karpenter.sh/capacity-type: on-demand unless the pool says. */
	for (size_t i = 0; i < p->n_reqs; i++) {
		struct plan_vset r;

		if (strcmp(p->reqs[i].key, PLAN_LABEL_CAPACITY_TYPE))
			continue;
		if (plan_vset_from_req(&p->reqs[i], &r))
			continue;
		if (!has_ct) {
			p->on_demand = plan_vset_has(&r, "on-demand");
			p->spot = plan_vset_has(&r, "spot");
			has_ct = true;
		} else {
			p->on_demand = p->on_demand && plan_vset_has(&r, "on-demand");
			p->spot = p->spot && plan_vset_has(&r, "spot");
		}
	}
	if (class_modes(p->nc, &p->cc, &p->mig, why, sizeof(why))) {
		p->problem = plan_astr(pl, why);
		return p->problem ? 0 : -ENOMEM;
	}
	if (plan_kubelet_from_nodeclass(p->nc, &p->kubelet, &e)) {
		p->problem = plan_afmt(pl, "EC2NodeClass %s: %s", p->nc->meta.name, e.msg);
		return p->problem ? 0 : -ENOMEM;
	}
	if (!p->on_demand && !p->spot)
		p->problem = plan_afmt(pl, "requirement %s allows neither on-demand nor spot",
				  PLAN_LABEL_CAPACITY_TYPE);
	return 0;
}

static int add_reject(struct planner *pl, size_t pool, const struct hwdb_type *t,
		      const char *category, const char *reason)
{
	struct type_reject *r;

	if (DT_GROW(pl->rejects, pl->cap_rejects, pl->n_rejects + 1))
		return -ENOMEM;
	r = &pl->rejects[pl->n_rejects++];
	r->pool = pool;
	r->type = t;
	r->category = category;
	snprintf(r->reason, sizeof(r->reason), "%s", reason);
	return 0;
}

static size_t get_hypo(struct planner *pl, const struct hwdb_type *t,
		       const struct hwdb_cc_mode *cc, const struct hwdb_mig_layout *mig,
		       size_t *cap)
{
	for (size_t i = 0; i < pl->n_hypos; i++)
		if (pl->hypos[i].type == t && pl->hypos[i].cc.kind == cc->kind &&
		    pl->hypos[i].cc.shares == cc->shares && hwdb_mig_equal(&pl->hypos[i].mig, mig))
			return i;
	if (DT_GROW(pl->hypos, *cap, pl->n_hypos + 1))
		return SIZE_MAX;
	pl->hypos[pl->n_hypos].type = t;
	pl->hypos[pl->n_hypos].cc = *cc;
	pl->hypos[pl->n_hypos].mig = *mig;
	/* A DNS subdomain whatever the type is called (extra files may use
	 * names hwdb_slices would refuse as a node name). */
	char *nn = pl->hypos[pl->n_hypos].node;

	snprintf(nn, sizeof(pl->hypos[0].node), "new-%.100s", t->name);
	for (char *c = nn; *c; c++) {
		if (*c >= 'A' && *c <= 'Z')
			*c = (char)(*c - 'A' + 'a');
		else if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '.' ||
			   *c == '-'))
			*c = '-';
	}
	for (size_t n = strlen(nn); n > 0 && (nn[n - 1] == '-' || nn[n - 1] == '.'); n--)
		nn[n - 1] = 0;
	return pl->n_hypos++;
}

int plan_hypo_ctx(struct planner *pl, struct hypo *h)
{
	struct model_object *sl[HWDB_MAX_SLICES];
	struct hwdb_slice_opts so = { .cc = &h->cc, .mig = &h->mig };
	size_t n = 0, nua = 0;
	int rc;

	if (h->actx)
		return 0;
	rc = hwdb_slices_opts(h->type, &so, h->node, pl->set, sl, &n, pl->err);
	if (rc)
		return rc;
	for (size_t i = 0; i < n && i < HWDB_MAX_SLICES; i++)
		h->slices[i] = sl[i];
	for (size_t i = 0; hwdb_gpu_node_uniform_attrs[i] && nua < 8; i++) {
		h->ua[nua].driver = HWDB_DRIVER_GPU;
		h->ua[nua++].attribute = hwdb_gpu_node_uniform_attrs[i];
	}
	h->an.name = h->node;
	h->an.uniform_attrs = h->ua;
	h->an.n_uniform_attrs = nua;
	rc = alloc_ctx_new(&h->an, h->slices, n, pl->classes, pl->n_classes, &pl->aopts,
			   &h->actx, pl->err);
	if (rc)
		return rc;
	if (!(h->fresh = alloc_state_new(h->actx)))
		return dt_err_set(pl->err, -ENOMEM, "out of memory");
	return 0;
}

/* Why t has no priced offering, from plan_overlay_price's why. A type the
 * fleet learned has no price of its own: say so and how to give it one,
 * unless a NodeOverlay (overlay) tried and failed: then why says how. */
static const char *no_offering(const struct hwdb_type *t, const struct pool *pool,
			       const char *overlay, char *why, size_t sz)
{
	char was[512];
	double p;

	/* Priced elsewhere, but not in this pool's region. */
	if (!overlay && pool->on_demand && !hwdb_type_price(t, pool->region, &p) &&
	    (t->has_price || t->n_prices)) {
		snprintf(why, sz, "no on-demand price in %s in hwdb (not offered there, or no "
			 "public price data); a NodeOverlay can set one", pool->region);
		return why;
	}
	if (!t->learned || t->has_price)
		return why;
	if (!overlay)
		return "learned type, no price: give one with --hwdb-extra or a NodeOverlay";
	snprintf(was, sizeof(was), "%s", why);
	snprintf(why, sz, "learned type, no price: %s", was);
	return why;
}

/* A candidate of pool p and type t with its offering's labels, at the end
 * of pl->cands (not yet counted: plan_setup_candidates admits it). */
static int cand_new(struct planner *pl, size_t p, const struct hwdb_type *t, size_t *cap)
{
	const struct pool *pool = &pl->pools[p];
	struct cand *c;
	size_t nl;

	if (DT_GROW(pl->cands, *cap, pl->n_cands + 1))
		return -ENOMEM;
	c = &pl->cands[pl->n_cands];
	memset(c, 0, sizeof(*c));
	c->labels = calloc(PLAN_MAX_TYPE_LABELS + pool->n_tlabels + 2, sizeof(*c->labels));
	c->vals = calloc(PLAN_MAX_TYPE_LABELS, sizeof(*c->vals));
	if (!c->labels || !c->vals) {
		free(c->labels);
		free(c->vals);
		return -ENOMEM;
	}
	c->pool = p;
	c->type = t;
	c->ct = pool->on_demand ? "on-demand" : "spot";
	nl = plan_type_labels(t, c->ct, c->labels, c->vals);
	plan_copy(c->labels + nl, pool->tlabels, pool->n_tlabels * sizeof(*c->labels));
	nl += pool->n_tlabels;
	c->labels[nl].key = PLAN_LABEL_NODEPOOL;
	c->labels[nl++].value = pool->name;
	if (pool->nc) {
		c->labels[nl].key = PLAN_LABEL_NODECLASS;
		c->labels[nl++].value = pool->nc->meta.name;
	}
	c->n_labels = nl;
	pl->n_cands++;
	return 0;
}

/* Every pool's offerings, whatever its requirements (Karpenter checks
 * overlays against all the types of a NodePool's class), into the
 * NodeOverlays' conflict check. */
static int resolve_overlays(struct planner *pl)
{
	struct plan_offering *offs;
	int rc;

	if (pl->overlays.n < 2 || !pl->n_cands)
		return 0;
	if (!(offs = calloc(pl->n_cands, sizeof(*offs))))
		return -ENOMEM;
	for (size_t i = 0; i < pl->n_cands; i++)
		offs[i] = (struct plan_offering){ pl->cands[i].labels, pl->cands[i].n_labels,
						  pl->cands[i].type->name,
						  pl->pools[pl->cands[i].pool].name };
	rc = plan_overlays_resolve(&pl->overlays, offs, pl->n_cands, &pl->res->warnings);
	free(offs);
	return rc;
}

/* The zones c's offering (type, capacity type) recently failed to launch
 * in: none, some (c->away: zone NotIn them), or every zone (true). */
static int offering_away(struct planner *pl, struct cand *c, bool *everywhere)
{
	const struct plan_options *o = pl->opts;
	const char **zones = NULL;
	size_t n = 0;

	*everywhere = false;
	for (size_t i = 0; o && i < o->n_unavailable; i++) {
		const struct plan_unavailable *u = &o->unavailable[i];

		if (!u->instance_type || strcmp(u->instance_type, c->type->name) ||
		    (u->capacity_type && strcmp(u->capacity_type, c->ct)))
			continue;
		if (!u->zone) {
			*everywhere = true;
			return 0;
		}
		if (!zones && !(zones = doc_arena_alloc(pl->res->arena,
							 o->n_unavailable * sizeof(*zones))))
			return -ENOMEM;
		if (!plan_in_list(zones, n, u->zone))
			zones[n++] = u->zone;
	}
	if (n) {
		c->away = (struct model_requirement){ .key = "topology.kubernetes.io/zone",
						      .operator_text = "NotIn",
						      .op = MODEL_OP_NOT_IN, .values = zones,
						      .n_values = n };
		c->n_away = 1;
	}
	return 0;
}

/* Whether candidate c can be launched: its pool's requirements, a price,
 * a MIG layout, an offering not known to be out of capacity; false with
 * the reason recorded as a reject. */
static int cand_admit(struct planner *pl, struct cand *c, size_t *cap_h, bool *ok)
{
	const struct pool *pool = &pl->pools[c->pool];
	const struct hwdb_type *t = c->type;
	const char *kind = NULL, *reason = NULL;
	struct hwdb_mig_layout mig;
	bool priced, gone;
	double base;
	char why[512];

	if (offering_away(pl, c, &gone))
		return -ENOMEM;

	/* hwdb prices on-demand offerings in the pool's region; NodeOverlays
	 * set or adjust. */
	priced = pool->on_demand && hwdb_type_price(t, pool->region, &base);
	if (!plan_pool_accepts(pool->reqs, pool->n_reqs, c->labels, c->n_labels, why,
			       sizeof(why)))
		kind = "requirement", reason = why;
	else if (!hwdb_type_sized(t))
		kind = "size", reason = "hwdb does not know its vCPUs, memory or architecture: give "
				      "them with --hwdb-extra (a fleet's agents report them)";
	else if (!plan_overlay_price(&pl->overlays, c->labels, c->n_labels, c->ct,
				     priced ? &base : NULL, &c->price, why, sizeof(why)))
		kind = t->learned && !t->has_price ? "learned" : "offering",
		reason = no_offering(t, pool, c->price.overlay, why, sizeof(why));
	else if (plan_mig_for_type(&pool->mig, t, &mig, why, sizeof(why)))
		kind = "mig", reason = why;
	else if (gone)
		kind = "unavailable", reason = "a launch of this offering recently failed for lack "
					       "of capacity (avoided for a while, as Karpenter's "
					       "unavailable-offerings cache does)";
	*ok = !kind;
	if (kind)
		return add_reject(pl, c->pool, t, kind, reason);
	c->hypo = get_hypo(pl, t, &pool->cc, &mig, cap_h);
	if (c->hypo == SIZE_MAX)
		return -ENOMEM;
	plan_node_allocatable(t->vcpu, t->memory_mib, &pool->kubelet, &c->alloc);
	plan_overlay_capacity(&pl->overlays, c->labels, c->n_labels, pl->pods.ext_names,
			      pl->pods.n_ext_names, c->alloc.ext);
	plan_res_take(&c->alloc, &pool->daemons);
	return 0;
}

int plan_setup_candidates(struct planner *pl)
{
	size_t n_np = model_set_count(pl->set, MODEL_NODE_POOL), cap_c = 0, cap_h = 0, kept = 0;
	const struct model_object *o = NULL;
	size_t i = 0;
	int rc = 0;

	pl->n_pools = n_np ? n_np : 1;
	pl->pools = calloc(pl->n_pools, sizeof(*pl->pools));
	if (!pl->pools || plan_overlays_init(&pl->overlays, pl->set))
		return dt_err_set(pl->err, -ENOMEM, "out of memory");
	for (size_t p = 0; !rc && p < pl->n_pools; p++) {
		o = n_np ? model_set_next(pl->set, MODEL_NODE_POOL, o) : NULL;
		if ((rc = setup_pool(pl, &pl->pools[p], o)) || pl->pools[p].problem)
			continue;
		for (size_t k = 0; !rc && k < hwdb_catalog_count(pl->catalog); k++)
			rc = cand_new(pl, p, hwdb_catalog_at(pl->catalog, k), &cap_c);
	}
	if (!rc)
		rc = resolve_overlays(pl);
	/* Admitted candidates move down over the rejected ones, in order;
	 * after an error the ones not seen stay too, for planner_free. */
	for (; !rc && i < pl->n_cands; i++) {
		struct cand c = pl->cands[i];
		bool ok = false;

		rc = cand_admit(pl, &c, &cap_h, &ok);
		if (ok) {
			pl->cands[kept++] = c;
		} else {
			free(c.labels);
			free(c.vals);
		}
	}
	while (i < pl->n_cands)
		pl->cands[kept++] = pl->cands[i++];
	pl->n_cands = kept;
	return rc ? dt_err_set(pl->err, rc, "out of memory") : 0;
}
