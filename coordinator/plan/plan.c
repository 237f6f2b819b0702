/* plan.c - the planner's driver: existing nodes first, then the cheapest
 * new nodes, then a reason for every pod left over.
 *
 * Objects: an exnode per existing Node (its allocator context over its
 * slices, the state of what is allocated there, CPU/memory/pods in use);
 * a pool per NodePool (its EC2NodeClass's consumable-capacity mode and
 * kubelet settings); a cand per (pool, instance type, capacity type) the
 * pool's requirements allow; a hypo per (instance type, consumable-capacity
 * mode): the allocator context over the slices hwdb predicts there, shared
 * by every pool with that mode. The optimizer (plan_pack.c) sees only
 * shapes and candidates and calls back into pack_open/pack_add/... here,
 * which run the real allocator on hypothetical nodes. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "cel.h"
#include "hwdb.h"
#include "hwdb_mig.h"
#include "plan.h"

#define MAX_DETAILS_NODES 50    /* existing nodes listed per unschedulable pod */

struct vec_claims {
	struct plan_claim *v;
	size_t n, cap;
};

struct vec_str {
	const char **v;
	size_t n, cap;
};

struct exnode {
	const struct model_object *obj;
	struct model_kv *labels;        /* the node's labels + metadata.name */
	size_t n_labels;
	struct plan_res cap, used;
	struct alloc_ctx *actx;         /* built when a claim first needs it */
	struct alloc_node an;           /* what actx borrows */
	const struct model_object **slices;
	struct alloc_state *state;
	struct vec_str pods;
	struct vec_claims claims;
};

struct pool {
	const struct model_object *obj; /* NULL: the default NodePool */
	const char *name;
	const struct model_object *nc;
	struct hwdb_cc_mode cc;
	struct hwdb_mig_layout mig;     /* karpenter.k8s.aws/nvidia-mig-layout */
	struct plan_kubelet kubelet;
	const char *problem;            /* the whole pool is unusable */
	bool on_demand, spot;
	const struct model_requirement *reqs;
	size_t n_reqs;
	const struct model_taint *taints;
	size_t n_taints;
	const struct model_kv *tlabels;
	size_t n_tlabels;
	/* limits (-1: none) and what the plan launched so far */
	int64_t lim_cpu, lim_mem, lim_gpu, lim_nodes;
	int64_t use_cpu, use_mem, use_gpu, use_nodes;
};

struct cand {
	size_t pool;
	const struct hwdb_type *type;
	const char *ct;
	struct model_kv *labels;        /* values point into vals */
	size_t n_labels;
	char (*vals)[PLAN_LABEL_VALUE_MAX];     /* PLAN_MAX_TYPE_LABELS, owned */
	struct plan_res alloc;
	size_t hypo;
};

struct hypo {
	const struct hwdb_type *type;
	struct hwdb_cc_mode cc;
	struct hwdb_mig_layout mig;     /* NONE where the type has no MIG */
	char node[128];
	struct alloc_ctx *actx;
	/* what actx borrows */
	struct alloc_node an;
	struct alloc_uniform_attr ua[8];
	const struct model_object *slices[HWDB_MAX_SLICES];
	struct alloc_state *fresh;      /* nothing allocated, to reset nodes */
};

/* A type a pool cannot launch whatever the pod (requirements, offering). */
struct type_reject {
	size_t pool;
	const struct hwdb_type *type;
	const char *category;
	char reason[256];
};

struct pnode {
	bool open;
	size_t cand;
	struct alloc_state *state;
	struct plan_res used;
	struct { struct alloc_state *st; struct plan_res used; } *stack;
	size_t depth, cap;
};

struct planner {
	struct model_set *set;
	const struct plan_options *opts;
	struct plan_result *res;
	struct dt_err *err;
	struct cel_cache *cel;
	struct alloc_options aopts;
	uint64_t share_counter;

	const struct model_object **classes;
	size_t n_classes;
	const struct model_object **slices;     /* the cluster's */
	size_t n_slices;
	const struct model_object **allocated;  /* claims with status.allocation */
	size_t n_allocated;
	/* Indexes so that each node finds its slices and allocated claims
	 * without scanning the cluster: slices sorted by nodeName (those
	 * without one first, n_global_slices of them); (node, claim) pairs
	 * sorted by node, and the claims not tied to one node. */
	size_t n_global_slices;
	struct node_claim { const char *node; const struct model_object *claim; } *by_node;
	size_t n_by_node;
	const struct model_object **global_claims;
	size_t n_global_claims;

	struct plan_pods pods;
	bool *placed;                           /* per unit */
	size_t *shape_rep;                      /* per shape: a unit */

	struct exnode *nodes;
	size_t n_nodes;
	struct pool *pools;
	size_t n_pools;
	struct cand *cands;
	size_t n_cands;
	struct hypo *hypos;
	size_t n_hypos;
	struct type_reject *rejects;
	size_t n_rejects, cap_rejects;

	struct pnode *pn;
	size_t n_pn;
	int fatal;                              /* first fatal error of a callback */
	/* Per shape: the allocator's error (CEL runtime error, unknown class,
	 * step budget) that makes the scheduler fail such a pod; the units of
	 * that shape are unschedulable with it. */
	const char **shape_error;

	/* output being built (malloc'ed, copied into the arena at the end) */
	struct plan_node_claim *ncs;
	size_t n_ncs, cap_ncs;
	struct plan_unschedulable *uns;
	size_t n_uns, cap_uns;
	bool settled;                           /* ncs arrays moved into the arena */
};

/* ---- Small helpers ---- */

/* memcpy that accepts NULL when there is nothing to copy. */
static void copy(void *dst, const void *src, size_t n)
{
	if (n)
		memcpy(dst, src, n);
}

static const char *astr(struct planner *pl, const char *s)
{
	return doc_arena_strdup(pl->res->arena, s ? s : "");
}

static const char *afmt(struct planner *pl, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static const char *afmt(struct planner *pl, const char *fmt, ...)
{
	char buf[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return astr(pl, buf);
}

/* "ns/name" in the result's arena, made for every pod and claim placed:
 * no printf. */
static const char *ns_name(struct planner *pl, const char *ns, const char *name)
{
	size_t ln = strlen(ns), lm = strlen(name);
	char *s = doc_arena_alloc(pl->res->arena, ln + lm + 2);

	if (!s)
		return NULL;
	memcpy(s, ns, ln);
	s[ln] = '/';
	memcpy(s + ln + 1, name, lm + 1);
	return s;
}

static const char *pod_id(struct planner *pl, const struct plan_pod *p)
{
	return ns_name(pl, p->ns, p->name);
}

static void share_id_counter(void *arg, char out[ALLOC_SHARE_ID_LEN + 1])
{
	struct planner *pl = arg;

	snprintf(out, ALLOC_SHARE_ID_LEN + 1, "00000000-0000-4000-8000-%012" PRIx64,
		 (uint64_t)(++pl->share_counter & 0xffffffffffffULL));
}

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

/* ---- Recording placements ---- */

static int record_outcome(struct planner *pl, const struct alloc_outcome *o,
			  struct vec_claims *vc, struct vec_str *drivers)
{
	struct doc_arena *a = pl->res->arena;

	for (size_t i = 0; i < o->n_claims; i++) {
		const struct alloc_claim_result *cr = &o->claims[i];
		struct plan_claim *pc;

		if (plan_grow((void **)&vc->v, &vc->cap, vc->n + 1, sizeof(*vc->v)))
			return -ENOMEM;
		pc = &vc->v[vc->n++];
		pc->claim = ns_name(pl, cr->claim->meta.ns, cr->claim->meta.name);
		pc->n_results = cr->n_results;
		pc->results = doc_arena_alloc(a, (cr->n_results + 1) * sizeof(*pc->results));
		if (!pc->claim || !pc->results)
			return -ENOMEM;
		for (size_t k = 0; k < cr->n_results; k++) {
			const struct alloc_device_result *r = &cr->results[k];
			struct plan_device *d = &pc->results[k];
			bool seen = false;

			d->request = astr(pl, r->request);
			d->driver = astr(pl, r->driver);
			d->pool = astr(pl, r->pool);
			d->device = astr(pl, r->device);
			d->share_id = r->share_id ? astr(pl, r->share_id) : NULL;
			if (!d->request || !d->driver || !d->pool || !d->device)
				return -ENOMEM;
			if (!drivers)
				continue;
			for (size_t j = 0; j < drivers->n && !seen; j++)
				seen = !strcmp(drivers->v[j], d->driver);
			if (seen)
				continue;
			if (plan_grow((void **)&drivers->v, &drivers->cap, drivers->n + 1,
				 sizeof(*drivers->v)))
				return -ENOMEM;
			drivers->v[drivers->n++] = d->driver;
		}
	}
	return 0;
}

static int push_str(struct vec_str *v, const char *s)
{
	if (!s || plan_grow((void **)&v->v, &v->cap, v->n + 1, sizeof(*v->v)))
		return -ENOMEM;
	v->v[v->n++] = s;
	return 0;
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
		if (plan_grow((void **)&pl->by_node, &cap, pl->n_by_node + 1, sizeof(*pl->by_node)))
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

static int collect_objects(struct planner *pl)
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
	if (!pl->classes || !pl->slices || !pl->allocated)
		return dt_err_set(pl->err, -ENOMEM, "out of memory");
	for (i = 0, o = NULL; (o = model_set_next(set, MODEL_DEVICE_CLASS, o));)
		pl->classes[i++] = o;
	pl->n_classes = i;
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

/* Bound pods use their node's resources: found by name in a sorted index,
 * as there may be thousands of both. */
static int charge_bound(struct planner *pl)
{
	struct exnode **by_name;

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
		if (lo < pl->n_nodes && !strcmp(by_name[lo]->obj->meta.name, pl->pods.bound[b].node))
			plan_res_add(&by_name[lo]->used, &pl->pods.bound[b].req);
	}
	free(by_name);
	return 0;
}

static int setup_nodes(struct planner *pl)
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
		copy(en->labels, o->meta.labels, o->meta.n_labels * sizeof(*en->labels));
		en->labels[o->meta.n_labels].key = "metadata.name";
		en->labels[o->meta.n_labels].value = o->meta.name;
		en->n_labels = o->meta.n_labels + 1;
		/* A Node written by hand may leave out its status: then what a
		 * node of its instance type has, as for a new one, and no
		 * limit when the type is not known either. */
		const struct hwdb_type *t = hwdb_lookup(plan_label(o->meta.labels, o->meta.n_labels,
								   PLAN_LABEL_INSTANCE_TYPE) ?: "");
		struct plan_res guess = { PLAN_RES_MAX, PLAN_RES_MAX, PLAN_DEFAULT_MAX_PODS };

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
	}
	pl->n_nodes = i;
	return charge_bound(pl);
}

static int exnode_ctx(struct planner *pl, struct exnode *en)
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
	return 0;
}

static const struct model_object *find_nodeclass(struct planner *pl, const char *name)
{
	const struct model_object *o;

	if (name)
		return model_set_find(pl->set, MODEL_EC2_NODE_CLASS, NULL, name);
	if (model_set_count(pl->set, MODEL_EC2_NODE_CLASS) == 1)
		return model_set_next(pl->set, MODEL_EC2_NODE_CLASS, NULL);
	o = model_set_find(pl->set, MODEL_EC2_NODE_CLASS, NULL, "default");
	return o;
}

static const char *annotation(const struct model_meta *m, const char *key)
{
	return plan_label(m->annotations, m->n_annotations, key);
}

static void pool_limits(struct pool *p)
{
	const struct model_resource_list *l;

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
}

static int setup_pool(struct planner *pl, struct pool *p, const struct model_object *o)
{
	struct dt_err e;
	const char *ccs;
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
	pool_limits(p);
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
	ccs = p->nc ? annotation(&p->nc->meta, "karpenter.k8s.aws/nvidia-consumable-capacity")
		    : NULL;
	if (hwdb_cc_parse(ccs, &p->cc, &e)) {
		p->problem = afmt(pl, "EC2NodeClass %s: annotation "
				  "karpenter.k8s.aws/nvidia-consumable-capacity: %s",
				  p->nc->meta.name, e.msg);
		return p->problem ? 0 : -ENOMEM;
	}
	ccs = p->nc ? annotation(&p->nc->meta, PLAN_ANNOTATION_MIG_LAYOUT) : NULL;
	if (hwdb_mig_parse(ccs, &p->mig, &e)) {
		p->problem = afmt(pl, "EC2NodeClass %s: annotation %s: %s", p->nc->meta.name,
				  PLAN_ANNOTATION_MIG_LAYOUT, e.msg);
		return p->problem ? 0 : -ENOMEM;
	}
	if (plan_kubelet_from_nodeclass(p->nc, &p->kubelet, &e)) {
		p->problem = afmt(pl, "EC2NodeClass %s: %s", p->nc->meta.name, e.msg);
		return p->problem ? 0 : -ENOMEM;
	}
	if (!p->on_demand && !p->spot)
		p->problem = afmt(pl, "requirement %s allows neither on-demand nor spot",
				  PLAN_LABEL_CAPACITY_TYPE);
	return 0;
}

static int add_reject(struct planner *pl, size_t pool, const struct hwdb_type *t,
		      const char *category, const char *reason)
{
	struct type_reject *r;

	if (plan_grow((void **)&pl->rejects, &pl->cap_rejects, pl->n_rejects + 1,
		 sizeof(*pl->rejects)))
		return -ENOMEM;
	r = &pl->rejects[pl->n_rejects++];
	r->pool = pool;
	r->type = t;
	r->category = category;
	snprintf(r->reason, sizeof(r->reason), "%s", reason);
	return 0;
}

static size_t get_hypo(struct planner *pl, const struct hwdb_type *t,
		       const struct hwdb_cc_mode *cc, const struct hwdb_mig_layout *mig, size_t *cap)
{
	for (size_t i = 0; i < pl->n_hypos; i++)
		if (pl->hypos[i].type == t && pl->hypos[i].cc.kind == cc->kind &&
		    pl->hypos[i].cc.shares == cc->shares && hwdb_mig_equal(&pl->hypos[i].mig, mig))
			return i;
	if (plan_grow((void **)&pl->hypos, cap, pl->n_hypos + 1, sizeof(*pl->hypos)))
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

static int hypo_ctx(struct planner *pl, struct hypo *h)
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

static int setup_candidates(struct planner *pl)
{
	size_t n_np = model_set_count(pl->set, MODEL_NODE_POOL), cap_c = 0, cap_h = 0;
	const struct model_object *o = NULL;
	int rc;

	pl->n_pools = n_np ? n_np : 1;
	pl->pools = calloc(pl->n_pools, sizeof(*pl->pools));
	if (!pl->pools)
		return dt_err_set(pl->err, -ENOMEM, "out of memory");
	for (size_t p = 0; p < pl->n_pools; p++) {
		struct pool *pool = &pl->pools[p];

		o = n_np ? model_set_next(pl->set, MODEL_NODE_POOL, o) : NULL;
		if ((rc = setup_pool(pl, pool, o)))
			return dt_err_set(pl->err, rc, "out of memory");
		if (pool->problem)
			continue;
		for (size_t i = 0; i < hwdb_count(); i++) {
			const struct hwdb_type *t = hwdb_at(i);
			struct hwdb_mig_layout mig;
			struct cand *c;
			char why[512];
			size_t nl;

			if (plan_grow((void **)&pl->cands, &cap_c, pl->n_cands + 1, sizeof(*pl->cands)))
				return dt_err_set(pl->err, -ENOMEM, "out of memory");
			c = &pl->cands[pl->n_cands];
			memset(c, 0, sizeof(*c));
			c->labels = calloc(PLAN_MAX_TYPE_LABELS + pool->n_tlabels + 2,
					   sizeof(*c->labels));
			c->vals = calloc(PLAN_MAX_TYPE_LABELS, sizeof(*c->vals));
			if (!c->labels || !c->vals) {
				free(c->labels);
				free(c->vals);
				return dt_err_set(pl->err, -ENOMEM, "out of memory");
			}
			c->ct = pool->on_demand ? "on-demand" : "spot";
			nl = plan_type_labels(t, c->ct, c->labels, c->vals);
			copy(c->labels + nl, pool->tlabels, pool->n_tlabels * sizeof(*c->labels));
			nl += pool->n_tlabels;
			c->labels[nl].key = PLAN_LABEL_NODEPOOL;
			c->labels[nl++].value = pool->name;
			if (pool->nc) {
				c->labels[nl].key = PLAN_LABEL_NODECLASS;
				c->labels[nl++].value = pool->nc->meta.name;
			}
			c->n_labels = nl;
			if (!plan_pool_accepts(pool->reqs, pool->n_reqs, c->labels, nl, why,
					       sizeof(why))) {
				free(c->labels);
				free(c->vals);
				if (add_reject(pl, p, t, "requirement", why))
					return dt_err_set(pl->err, -ENOMEM, "out of memory");
				continue;
			}
			if (!pool->on_demand || !t->has_price) {
				free(c->labels);
				free(c->vals);
				if (add_reject(pl, p, t, "offering",
					       pool->on_demand ? "no on-demand offering"
							       : "no spot offering (hwdb has on-demand prices only)"))
					return dt_err_set(pl->err, -ENOMEM, "out of memory");
				continue;
			}
			if ((rc = plan_mig_for_type(&pool->mig, t, &mig, why, sizeof(why)))) {
				free(c->labels);
				free(c->vals);
				if (add_reject(pl, p, t, "mig", why))
					return dt_err_set(pl->err, -ENOMEM, "out of memory");
				continue;
			}
			c->pool = p;
			c->type = t;
			c->hypo = get_hypo(pl, t, &pool->cc, &mig, &cap_h);
			if (c->hypo == SIZE_MAX)
				return dt_err_set(pl->err, -ENOMEM, "out of memory");
			plan_node_allocatable(t->vcpu, t->memory_mib, &pool->kubelet, &c->alloc);
			pl->n_cands++;
		}
	}
	return 0;
}

/* ---- Whether a unit may use a node at all ---- */

/* Every pod of the unit against the node; NULL when fine, else the
 * category, and why in buf unless buf is NULL (placing asks only whether,
 * for every unit and node it passes over). */
static const char *unit_static(struct planner *pl, const struct plan_unit *u,
			       const struct plan_node_spec *spec, const struct model_taint *taints,
			       size_t n_taints, char *buf, size_t sz)
{
	for (size_t i = 0; i < u->n_pods; i++) {
		const struct plan_pod *p = &pl->pods.pods[u->pods[i]];
		const struct model_taint *t = plan_untolerated(taints, n_taints,
							       p->spec->tolerations,
							       p->spec->n_tolerations);
		char why[512];

		if (t) {
			if (buf)
				snprintf(buf, sz, "taint %s%s%s:%s not tolerated", t->key,
					 t->value && *t->value ? "=" : "",
					 t->value ? t->value : "", t->effect);
			return "taint";
		}
		if (!plan_pod_selects(spec, p->spec, why, sizeof(why))) {
			if (buf)
				snprintf(buf, sz, "%s", why);
			return "selector";
		}
	}
	for (size_t i = 0; i < u->n_allocated; i++) {
		const struct model_allocation *a = u->allocated[i]->u.claim.status.allocation;
		bool ok = !a->node_selector || !a->node_selector->n_terms;

		for (size_t t = 0; !ok && t < a->node_selector->n_terms; t++) {
			const struct model_node_selector_term *term = &a->node_selector->terms[t];

			ok = true;
			for (size_t k = 0; ok && k < term->n_match_expressions; k++)
				ok = plan_req_compatible(spec, &term->match_expressions[k]);
			for (size_t k = 0; ok && k < term->n_match_fields; k++) {
				struct plan_vset vs;

				ok = !spec->hypothetical &&
				     !plan_vset_from_req(&term->match_fields[k], &vs) &&
				     plan_vset_has(&vs, plan_label(spec->labels, spec->n_labels,
								   "metadata.name"));
			}
		}
		if (!ok) {
			if (buf)
				snprintf(buf, sz, "claim %s/%s is already allocated on another node",
					 u->allocated[i]->meta.ns, u->allocated[i]->meta.name);
			return "allocated";
		}
	}
	return NULL;
}

static void res_text(const char *dim, const struct plan_res *need, const struct plan_res *cap,
		     char *buf, size_t sz)
{
	if (!strcmp(dim, "cpu"))
		snprintf(buf, sz, "cpu: needs %" PRId64 "m, %" PRId64 "m allocatable",
			 need->cpu_milli, cap->cpu_milli);
	else if (!strcmp(dim, "memory"))
		snprintf(buf, sz, "memory: needs %" PRId64 "Mi, %" PRId64 "Mi allocatable",
			 (need->mem_bytes + (1 << 20) - 1) >> 20, cap->mem_bytes >> 20);
	else
		snprintf(buf, sz, "pods: needs %" PRId64 ", the node takes %" PRId64,
			 need->pods, cap->pods);
}

/* ---- Existing nodes ---- */

static int64_t unit_priority(const struct planner *pl, const struct plan_unit *u)
{
	int64_t best = INT64_MIN;

	for (size_t i = 0; i < u->n_pods; i++) {
		const struct model_pod_spec *sp = pl->pods.pods[u->pods[i]].spec;
		int64_t p = sp->has_priority ? sp->priority : 0;

		best = p > best ? p : best;
	}
	return best;
}

/* Units in the order the scheduler would take them: higher priority
 * first, input order among equals (a stable merge sort by priority). */
static size_t *unit_order(const struct planner *pl)
{
	size_t n = pl->pods.n_units, *v = malloc((n + 1) * sizeof(*v));
	size_t *tmp = malloc((n + 1) * sizeof(*tmp));
	int64_t *pr = malloc((n + 1) * sizeof(*pr));

	if (!v || !tmp || !pr) {
		free(v);
		v = NULL;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		v[i] = i;
		pr[i] = unit_priority(pl, &pl->pods.units[i]);
	}
	for (size_t w = 1; w < n; w *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * w) {
			size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
			size_t a = lo, b = mid, k = lo;

			while (a < mid || b < hi)
				tmp[k++] = b >= hi || (a < mid && pr[v[a]] >= pr[v[b]]) ? v[a++] : v[b++];
		}
		memcpy(v, tmp, n * sizeof(*v));
	}
out:
	free(tmp);
	free(pr);
	return v;
}

static int place_existing(struct planner *pl)
{
	size_t *cursor = calloc(pl->pods.n_shapes + 1, sizeof(size_t));
	size_t *order = pl->n_nodes ? unit_order(pl) : NULL;
	int rc = 0;

	if (!cursor || (pl->n_nodes && !order)) {
		free(cursor);
		free(order);
		return dt_err_set(pl->err, -ENOMEM, "out of memory");
	}
	for (size_t oi = 0; oi < pl->pods.n_units && pl->n_nodes; oi++) {
		size_t ui = order[oi];
		struct plan_unit *u = &pl->pods.units[ui];
		size_t *cur = &cursor[u->shape];

		if (u->problem)
			continue;
		for (; *cur < pl->n_nodes; ++*cur) {
			struct exnode *en = &pl->nodes[*cur];
			struct plan_node_spec spec = { .labels = en->labels, .n_labels = en->n_labels };
			struct alloc_outcome out = { 0 };

			if (en->obj->u.node.unschedulable ||
			    unit_static(pl, u, &spec, en->obj->u.node.taints,
					en->obj->u.node.n_taints, NULL, 0) ||
			    !plan_res_fits(&u->req, &en->used, &en->cap))
				continue;
			if (u->n_claims) {
				if ((rc = exnode_ctx(pl, en)))
					goto out;
				rc = alloc_try(en->actx, en->state, u->claims, u->n_claims, &out,
					       pl->err);
				if (rc) {
					alloc_outcome_free(&out);
					if (rc == -ENOMEM)
						goto out;
					/* The scheduler fails such a pod: so does the plan. */
					u->problem = afmt(pl, "the allocator fails the pod's claims "
							  "on node %s: %s", en->obj->meta.name,
							  pl->err->msg);
					rc = 0;
					if (!u->problem)
						goto oom;
					break;
				}
				if (!out.allocated) {
					alloc_outcome_free(&out);
					continue;
				}
				alloc_state_commit(en->state, &out);
				rc = record_outcome(pl, &out, &en->claims, NULL);
				alloc_outcome_free(&out);
				if (rc)
					goto oom;
			}
			plan_res_add(&en->used, &u->req);
			for (size_t i = 0; i < u->n_pods; i++)
				if (push_str(&en->pods, pod_id(pl, &pl->pods.pods[u->pods[i]])))
					goto oom;
			pl->placed[ui] = true;
			break;
		}
	}
out:
	free(cursor);
	free(order);
	return rc;
oom:
	free(cursor);
	free(order);
	return dt_err_set(pl->err, -ENOMEM, "out of memory");
}

/* ---- The optimizer's view of new nodes ---- */

static int pack_open(void *ctx, size_t cand, size_t *node)
{
	struct planner *pl = ctx;
	struct cand *c = &pl->cands[cand];
	struct hypo *h = &pl->hypos[c->hypo];
	size_t i;
	int rc;

	if ((rc = hypo_ctx(pl, h))) {
		pl->fatal = rc;
		return rc;
	}
	for (i = 0; i < pl->n_pn; i++)
		if (!pl->pn[i].open)
			break;
	if (i == pl->n_pn) {
		struct pnode *nv = realloc(pl->pn, (pl->n_pn + 1) * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		pl->pn = nv;
		memset(&pl->pn[i], 0, sizeof(pl->pn[i]));
		pl->n_pn++;
	}
	struct pnode *pn = &pl->pn[i];

	/* A node keeps its states; they are only reused for the same ctx. */
	if (pn->state && pl->cands[pn->cand].hypo != c->hypo) {
		alloc_state_free(pn->state);
		pn->state = NULL;
		for (size_t k = 0; k < pn->cap; k++) {
			alloc_state_free(pn->stack[k].st);
			pn->stack[k].st = NULL;
		}
	}
	if (!pn->state) {
		if (!(pn->state = alloc_state_clone(h->fresh)))
			return -ENOMEM;
	} else {
		alloc_state_copy(pn->state, h->fresh);
	}
	pn->open = true;
	pn->cand = cand;
	pn->depth = 0;
	memset(&pn->used, 0, sizeof(pn->used));
	*node = i;
	return 0;
}

static void pack_close(void *ctx, size_t node)
{
	struct planner *pl = ctx;

	pl->pn[node].open = false;
}

static int node_add_unit(struct planner *pl, size_t node, const struct plan_unit *u,
			 struct alloc_outcome *keep)
{
	struct pnode *pn = &pl->pn[node];
	struct cand *c = &pl->cands[pn->cand];
	struct alloc_outcome out = { 0 };
	int rc;

	if (!plan_res_fits(&u->req, &pn->used, &c->alloc))
		return 0;
	if (plan_grow((void **)&pn->stack, &pn->cap, pn->depth + 1, sizeof(*pn->stack)))
		return -ENOMEM;
	if (u->n_claims) {
		rc = alloc_try(pl->hypos[c->hypo].actx, pn->state, u->claims, u->n_claims, &out,
			       pl->err);
		if (rc) {
			alloc_outcome_free(&out);
			if (rc == -ENOMEM) {
				pl->fatal = rc;
				return rc;
			}
			/* Not fatal to the plan: the shape does not fit here, and
			 * its pods are reported with the error. */
			if (!pl->shape_error[u->shape])
				pl->shape_error[u->shape] = afmt(pl, "the allocator fails the pod's "
								 "claims on a new %s: %s",
								 c->type->name, pl->err->msg);
			return 0;
		}
		if (!out.allocated) {
			alloc_outcome_free(&out);
			return 0;
		}
	}
	if (!pn->stack[pn->depth].st) {
		pn->stack[pn->depth].st = alloc_state_clone(pn->state);
		if (!pn->stack[pn->depth].st) {
			alloc_outcome_free(&out);
			return -ENOMEM;
		}
	} else {
		alloc_state_copy(pn->stack[pn->depth].st, pn->state);
	}
	pn->stack[pn->depth].used = pn->used;
	pn->depth++;
	if (u->n_claims)
		alloc_state_commit(pn->state, &out);
	plan_res_add(&pn->used, &u->req);
	if (keep)
		*keep = out;
	else
		alloc_outcome_free(&out);
	return 1;
}

static int pack_add(void *ctx, size_t node, size_t shape)
{
	struct planner *pl = ctx;

	return node_add_unit(pl, node, &pl->pods.units[pl->shape_rep[shape]], NULL);
}

static void pack_undo(void *ctx, size_t node)
{
	struct planner *pl = ctx;
	struct pnode *pn = &pl->pn[node];

	if (!pn->depth)
		return;
	pn->depth--;
	alloc_state_copy(pn->state, pn->stack[pn->depth].st);
	pn->used = pn->stack[pn->depth].used;
}

static size_t per_dim(int64_t cap, int64_t need)
{
	if (need <= 0)
		return SIZE_MAX;
	return cap <= 0 ? 0 : (size_t)(cap / need);
}

static size_t pack_bound(void *ctx, size_t shape, size_t cand)
{
	struct planner *pl = ctx;
	const struct plan_res *n = &pl->pods.units[pl->shape_rep[shape]].req;
	const struct plan_res *c = &pl->cands[cand].alloc;
	size_t b = per_dim(c->cpu_milli, n->cpu_milli), m = per_dim(c->mem_bytes, n->mem_bytes);
	size_t p = per_dim(c->pods, n->pods);

	if (m < b)
		b = m;
	return p < b ? p : b;
}

/* Static fit of a shape on a candidate: NULL or the category (why in buf). */
static const char *cand_static(struct planner *pl, size_t shape, size_t ci, char *buf,
			       size_t sz)
{
	const struct plan_unit *u = &pl->pods.units[pl->shape_rep[shape]];
	const struct cand *c = &pl->cands[ci];
	const struct pool *p = &pl->pools[c->pool];
	struct plan_node_spec spec = { .labels = c->labels, .n_labels = c->n_labels,
				       .reqs = p->reqs, .n_reqs = p->n_reqs, .hypothetical = true };
	const char *cat = unit_static(pl, u, &spec, p->taints, p->n_taints, buf, sz);
	const char *dim;

	if (cat)
		return cat;
	if (u->n_claims && !c->type->dra_metadata) {
		snprintf(buf, sz, "device topology unknown (no DRA metadata for %s)", c->type->name);
		return "topology";
	}
	struct plan_res zero = { 0, 0, 0 };

	if ((dim = plan_res_short(&u->req, &zero, &c->alloc))) {
		res_text(dim, &u->req, &c->alloc, buf, sz);
		return "resources";
	}
	return NULL;
}

/* ---- Pool limits ---- */

static bool pool_takes(const struct pool *p, const struct hwdb_type *t)
{
	int64_t cpu = (int64_t)t->vcpu * 1000, mem = t->memory_mib << 20;

	return (p->lim_cpu < 0 || p->use_cpu + cpu <= p->lim_cpu) &&
	       (p->lim_mem < 0 || p->use_mem + mem <= p->lim_mem) &&
	       (p->lim_gpu < 0 || p->use_gpu + (int64_t)t->n_gpus <= p->lim_gpu) &&
	       (p->lim_nodes < 0 || p->use_nodes + 1 <= p->lim_nodes);
}

static void pool_use(struct pool *p, const struct hwdb_type *t)
{
	p->use_cpu += (int64_t)t->vcpu * 1000;
	p->use_mem += t->memory_mib << 20;
	p->use_gpu += (int64_t)t->n_gpus;
	p->use_nodes++;
}

/* ---- New nodes ---- */

static const char *node_claim_name(struct planner *pl, size_t cand)
{
	const struct cand *c = &pl->cands[cand];
	const struct pool *p = &pl->pools[c->pool];
	char sfx[6];

	plan_name_suffix(p->name, c->type->name, pl->n_ncs, sfx);
	return afmt(pl, "%s-%s", p->name, sfx);
}

static int emit_node_claim(struct planner *pl, size_t node, const char *name,
			   struct vec_str *pods, struct vec_claims *claims, struct vec_str *drivers)
{
	struct cand *c = &pl->cands[pl->pn[node].cand];
	struct pool *p = &pl->pools[c->pool];
	struct plan_node_claim *nc;

	if (plan_grow((void **)&pl->ncs, &pl->cap_ncs, pl->n_ncs + 1, sizeof(*pl->ncs)))
		return -ENOMEM;
	nc = &pl->ncs[pl->n_ncs];
	nc->name = name;
	nc->node_pool = p->name;
	nc->pool = p->obj;
	nc->instance_type = c->type->name;
	nc->capacity_type = c->ct;
	nc->price = c->type->price;
	nc->pods = pods->v;
	nc->n_pods = pods->n;
	nc->claims = claims->v;
	nc->n_claims = claims->n;
	/* Sorted, as Karpenter writes karpenter.sh/requested-dra-drivers. */
	for (size_t i = 1; i < drivers->n; i++)
		for (size_t j = i; j > 0 && strcmp(drivers->v[j - 1], drivers->v[j]) > 0; j--) {
			const char *t = drivers->v[j];

			drivers->v[j] = drivers->v[j - 1];
			drivers->v[j - 1] = t;
		}
	nc->drivers = drivers->v;
	nc->n_drivers = drivers->n;
	nc->node_class = p->nc ? p->nc->meta.name
			       : p->obj && p->obj->u.node_pool.node_class_ref.name
				 ? p->obj->u.node_pool.node_class_ref.name : "default";
	nc->requests = pl->pn[node].used;
	pl->n_ncs++;
	pl->res->total_price += nc->price;
	return nc->name ? 0 : -ENOMEM;
}

/* Place the chosen units on one node for real and record the claim. */
static int replay_node(struct planner *pl, const struct plan_pack_node *sn, size_t **queue,
		       size_t *qpos, const size_t *qlen)
{
	struct vec_str pods = { 0 }, drivers = { 0 };
	struct vec_claims claims = { 0 };
	const char *name = node_claim_name(pl, sn->cand);
	const char *hnode = pl->hypos[pl->cands[sn->cand].hypo].node;
	size_t node;
	int rc;

	if (!name)
		return -ENOMEM;
	if ((rc = pack_open(pl, sn->cand, &node)))
		return rc;
	for (size_t s = 0; s < pl->pods.n_shapes; s++) {
		for (size_t k = 0; k < sn->per_shape[s] && qpos[s] < qlen[s]; k++) {
			size_t ui = queue[s][qpos[s]++];
			const struct plan_unit *u = &pl->pods.units[ui];
			struct alloc_outcome out = { 0 };

			rc = node_add_unit(pl, node, u, &out);
			if (rc < 0)
				goto out;
			if (rc == 0) {
				/* Cannot happen when the optimizer's adds were
				 * faithful; leave the unit for the next round. */
				qpos[s]--;
				alloc_outcome_free(&out);
				break;
			}
			rc = record_outcome(pl, &out, &claims, &drivers);
			alloc_outcome_free(&out);
			if (rc)
				goto out;
			for (size_t i = 0; i < u->n_pods; i++)
				if ((rc = push_str(&pods, pod_id(pl, &pl->pods.pods[u->pods[i]]))))
					goto out;
			pl->placed[ui] = true;
		}
	}
	/* The drivers name their pools after the node: here the NodeClaim. */
	for (size_t i = 0; i < claims.n; i++)
		for (size_t k = 0; k < claims.v[i].n_results; k++)
			if (!strcmp(claims.v[i].results[k].pool, hnode))
				claims.v[i].results[k].pool = name;
	pool_use(&pl->pools[pl->cands[sn->cand].pool], pl->cands[sn->cand].type);
	rc = emit_node_claim(pl, node, name, &pods, &claims, &drivers);
	pods.v = NULL;
	claims.v = NULL;
	drivers.v = NULL;
out:
	pack_close(pl, node);
	free(pods.v);
	free(claims.v);
	free(drivers.v);
	return rc;
}

/* The arrays of a node claim were malloc'ed; move them into the arena. */
static int settle_node_claims(struct planner *pl)
{
	struct doc_arena *a = pl->res->arena;

	for (size_t i = 0; i < pl->n_ncs; i++) {
		struct plan_node_claim *nc = &pl->ncs[i];
		const char **pods = doc_arena_alloc(a, (nc->n_pods + 1) * sizeof(*pods));
		struct plan_claim *cl = doc_arena_alloc(a, (nc->n_claims + 1) * sizeof(*cl));
		const char **dr = doc_arena_alloc(a, (nc->n_drivers + 1) * sizeof(*dr));

		if (!pods || !cl || !dr)
			return -ENOMEM;
		copy(pods, nc->pods, nc->n_pods * sizeof(*pods));
		copy(cl, nc->claims, nc->n_claims * sizeof(*cl));
		copy(dr, nc->drivers, nc->n_drivers * sizeof(*dr));
		free((void *)nc->pods);
		free(nc->claims);
		free((void *)nc->drivers);
		nc->pods = pods;
		nc->claims = cl;
		nc->drivers = dr;
	}
	pl->settled = true;
	return 0;
}

static int plan_new_nodes(struct planner *pl)
{
	size_t ns = pl->pods.n_shapes, nc = pl->n_cands;
	size_t *count = calloc(ns + 1, sizeof(size_t)), **queue = calloc(ns + 1, sizeof(size_t *));
	size_t *qlen = calloc(ns + 1, sizeof(size_t)), *qpos = calloc(ns + 1, sizeof(size_t));
	bool *allowed = calloc(ns * nc + 1, sizeof(bool));
	double *price = calloc(nc + 1, sizeof(double));
	struct plan_pack_solution sol = { 0 };
	int rc = -ENOMEM;

	if (!count || !queue || !qlen || !qpos || !allowed || !price)
		goto oom;
	for (size_t c = 0; c < nc; c++)
		price[c] = pl->cands[c].type->price;
	for (size_t round = 0; round < 8; round++) {
		size_t pending = 0;

		memset(count, 0, ns * sizeof(size_t));
		for (size_t s = 0; s < ns; s++) {
			free(queue[s]);
			queue[s] = NULL;
			qlen[s] = qpos[s] = 0;
		}
		for (size_t ui = 0; ui < pl->pods.n_units; ui++) {
			struct plan_unit *u = &pl->pods.units[ui];
			size_t s = u->shape;

			if (pl->placed[ui] || u->problem)
				continue;
			if (!count[s])
				pl->shape_rep[s] = ui;
			if (!(queue[s] = realloc(queue[s], (qlen[s] + 1) * sizeof(size_t))))
				goto oom;
			queue[s][qlen[s]++] = ui;
			count[s]++;
			pending++;
		}
		if (!pending) {
			if (round == 0)
				pl->res->optimal = true;    /* nothing to launch */
			break;
		}
		for (size_t s = 0; s < ns; s++)
			for (size_t c = 0; c < nc; c++) {
				char why[512];

				allowed[s * nc + c] = count[s] &&
					pool_takes(&pl->pools[pl->cands[c].pool], pl->cands[c].type) &&
					!cand_static(pl, s, c, why, sizeof(why));
			}
		struct plan_pack_problem prob = {
			.n_shapes = ns, .n_cands = nc, .count = count, .price = price,
			.allowed = allowed,
			.exact_steps = pl->opts && pl->opts->exact_steps ? pl->opts->exact_steps
									  : PLAN_DEFAULT_EXACT_STEPS,
			.exact_max_units = pl->opts ? pl->opts->exact_max_units : 0,
			.ops = { .ctx = pl, .open = pack_open, .close = pack_close, .add = pack_add,
				 .undo = pack_undo, .bound = pack_bound },
		};

		rc = plan_pack_solve(&prob, &sol, pl->err);
		if (pl->fatal) {
			rc = pl->fatal;
			goto out;
		}
		if (rc)
			goto out;
		if (round == 0)
			pl->res->optimal = sol.optimal;
		bool dropped = false;

		for (size_t i = 0; i < sol.n_nodes; i++) {
			struct cand *c = &pl->cands[sol.nodes[i].cand];

			if (!pool_takes(&pl->pools[c->pool], c->type)) {
				dropped = true;     /* over the pool's limits: next round */
				pl->res->optimal = false;
				continue;
			}
			if ((rc = replay_node(pl, &sol.nodes[i], queue, qpos, qlen)))
				goto out;
		}
		plan_pack_solution_free(&sol);
		if (!dropped)
			break;
	}
	rc = settle_node_claims(pl);
	if (rc)
		goto oom;
	goto out;
oom:
	rc = dt_err_set(pl->err, -ENOMEM, "out of memory");
out:
	plan_pack_solution_free(&sol);
	if (queue)
		for (size_t s = 0; s < ns; s++)
			free(queue[s]);
	free(queue);
	free(count);
	free(qlen);
	free(qpos);
	free(allowed);
	free(price);
	return rc;
}

/* ---- Reasons ---- */

struct reasons {
	struct plan_reject *v;
	const char **cat;
	size_t n, cap, cap_cat;
};

static int reason_add(struct planner *pl, struct reasons *r, const char *pool, const char *node,
		      const char *type, const char *cat, const char *why)
{
	if (plan_grow((void **)&r->v, &r->cap, r->n + 1, sizeof(*r->v)) ||
	    plan_grow((void **)&r->cat, &r->cap_cat, r->n + 1, sizeof(*r->cat)))
		return -ENOMEM;
	r->v[r->n].node_pool = pool;
	r->v[r->n].node = node;
	r->v[r->n].instance_type = type;
	r->v[r->n].reason = astr(pl, why);
	r->cat[r->n] = cat;
	r->n++;
	return r->v[r->n - 1].reason ? 0 : -ENOMEM;
}

/* The allocator says "no combination satisfies the constraints"; say
 * which, in the terms of the seed: a GPU and an EFA on one PCIe root. */
static void constraint_hint(const struct plan_unit *u, const struct hwdb_type *t,
			    const char *reason, char *buf, size_t sz)
{
	size_t len;

	snprintf(buf, sz, "%s", reason);
	if (!strstr(reason, "constraint"))
		return;
	for (size_t i = 0; i < u->n_claims; i++) {
		const struct model_claim_spec *cs = &u->claims[i]->u.claim.spec;

		for (size_t k = 0; k < cs->n_constraints; k++) {
			const struct model_constraint *con = &cs->constraints[k];
			const char *attr = con->match_attribute ? con->match_attribute
								: con->distinct_attribute;

			if (!attr)
				continue;
			len = strlen(buf);
			if (con->match_attribute && !strcmp(attr, "resource.kubernetes.io/pcieRoot") &&
			    t->n_gpus && t->n_efas) {
				struct hwdb_root roots[64];
				size_t n = hwdb_type_roots(t, roots, 64), shared = 0;

				for (size_t r = 0; r < n && r < 64; r++)
					shared += roots[r].n_gpus && roots[r].n_efas;
				if (!shared) {
					snprintf(buf + len, sz - len, "; no EFA on a GPU's PCIe root: "
						 "the %zu GPU%s and %zu EFA%s sit on different roots",
						 t->n_gpus, t->n_gpus == 1 ? "" : "s", t->n_efas,
						 t->n_efas == 1 ? "" : "s");
					continue;
				}
			}
			snprintf(buf + len, sz - len, "; %s %s of requests ",
				 con->match_attribute ? "matchAttribute" : "distinctAttribute", attr);
			for (size_t q = 0; q < con->n_requests; q++) {
				len = strlen(buf);
				snprintf(buf + len, sz - len, "%s%s", q ? "," : "", con->requests[q]);
			}
			if (!con->n_requests) {
				len = strlen(buf);
				snprintf(buf + len, sz - len, "(all)");
			}
			len = strlen(buf);
			snprintf(buf + len, sz - len, " cannot be met on %s", t->name);
		}
	}
}

/* Evaluate one selector on a device: 1 match, 0 no match, <0 runtime
 * error (message in e). Selectors that do not compile were reported by
 * validation: they count as no match here. */
static int sel_eval(struct planner *pl, const struct model_selector *sel,
		    const struct model_device *d, struct dt_err *e)
{
	const struct cel_program *prog;
	bool match = false;
	int rc;

	if (!sel->expression || cel_cache_get(pl->cel, sel->expression, sel->expression_len, &prog, e))
		return 0;
	rc = cel_eval_selector(prog, &d->cel, &match, e);
	return rc ? (rc < 0 ? rc : -EINVAL) : match;
}

/* "0 of the node's N devices match the selectors": a selector that fails
 * on every device may be a typo (an attribute the driver does not publish
 * is a CEL runtime error, which on a node yet to exist means "no match").
 * Evaluate the request's selectors on the type's devices and name the
 * first error. */
static void selector_hint(struct planner *pl, const struct plan_unit *u, const struct hypo *h,
			  char *buf, size_t sz)
{
	if (!strstr(buf, " 0 of "))
		return;
	for (size_t i = 0; i < u->n_claims; i++) {
		const struct model_claim_spec *cs = &u->claims[i]->u.claim.spec;

		for (size_t q = 0; q < cs->n_requests; q++) {
			const struct model_exact_request *ex = cs->requests[q].exactly;

			for (size_t k = 0; ex && k < ex->n_selectors; k++) {
				const struct model_selector *sel = &ex->selectors[k];
				struct dt_err e = { 0 };

				for (size_t sl = 0; sl < HWDB_MAX_SLICES && h->slices[sl]; sl++) {
					const struct model_resource_slice_spec *sp = &h->slices[sl]->u.slice;

					if (!sp->n_devices || sel_eval(pl, sel, &sp->devices[0], &e) >= 0)
						continue;
					size_t len = strlen(buf);

					snprintf(buf + len, sz - len, "; request %s: the selector fails on "
						 "%s device %s: %s", cs->requests[q].name, sp->driver,
						 sp->devices[0].name, e.msg);
					return;
				}
			}
		}
	}
}

/* ---- Selector errors the allocator reads as "no match" ---- */

/* Whether the runtime error e is the read of an attribute the node's
 * devices leave unknown but uniform (driverVersion): on a node that does
 * not exist yet that means "cannot match", not a fatal error. */
static bool uniform_read(const struct model_object *slice, const char *msg)
{
	const struct model_resource_slice_spec *sp = &slice->u.slice;
	const char *k = strstr(msg, "no such key: ");
	const char *ann = annotation(&slice->meta, HWDB_ANNOTATION_NODE_UNIFORM);
	size_t len;

	if (!k)
		return false;
	k += strlen("no such key: ");
	len = strcspn(k, " ,;:()\"'");
	if (sp->driver && !strcmp(sp->driver, HWDB_DRIVER_GPU))
		for (size_t i = 0; hwdb_gpu_node_uniform_attrs[i]; i++)
			if (strlen(hwdb_gpu_node_uniform_attrs[i]) == len &&
			    !strncmp(hwdb_gpu_node_uniform_attrs[i], k, len))
				return true;
	for (const char *a = ann; a && *a;) {
		size_t n = strcspn(a, ",");

		while (n && a[n - 1] == ' ')
			n--;
		if (n == len && !strncmp(a, k, len))
			return true;
		a += strcspn(a, ",");
		a += *a == ',';
		a += strspn(a, " ");
	}
	return false;
}

static const struct model_object *find_class(const struct planner *pl, const char *name)
{
	for (size_t i = 0; name && i < pl->n_classes; i++)
		if (!strcmp(pl->classes[i]->meta.name, name))
			return pl->classes[i];
	return NULL;
}

/* The first selector of one request (exactly or a subrequest) that fails
 * on a device of the slice with an error a real node would raise too. */
static bool request_fails(struct planner *pl, const struct model_exact_request *rq,
			  const struct model_object *slice, const char *claim, const char *req,
			  char *buf, size_t sz)
{
	const struct model_resource_slice_spec *sp = &slice->u.slice;
	const struct model_object *cls = find_class(pl, rq->device_class_name);

	for (size_t d = 0; cls && d < sp->n_devices; d++) {
		const struct model_device *dev = &sp->devices[d];
		const struct model_device_class_spec *cs = &cls->u.device_class;
		struct dt_err e = { 0 };
		int m = 1;
		size_t i;

		for (i = 0; m == 1 && i < cs->n_selectors; i++)
			m = sel_eval(pl, &cs->selectors[i], dev, &e);
		if (m < 0 && !uniform_read(slice, e.msg)) {
			snprintf(buf, sz, "claim %s, request %s: class %s: selector #%zu on device "
				 "%s/%s/%s: CEL runtime error: %s", claim, req, cls->meta.name, i - 1,
				 sp->driver, sp->pool.name, dev->name, e.msg);
			return true;
		}
		for (i = 0; m == 1 && i < rq->n_selectors; i++)
			m = sel_eval(pl, &rq->selectors[i], dev, &e);
		if (m < 0 && !uniform_read(slice, e.msg)) {
			snprintf(buf, sz, "claim %s, request %s: selector #%zu on device %s/%s/%s: "
				 "CEL runtime error: %s", claim, req, i - 1, sp->driver, sp->pool.name,
				 dev->name, e.msg);
			return true;
		}
	}
	return false;
}

/* The allocator (on hypothetical slices) reads every selector error as
 * "the device does not match". The scheduler on the real node would fail
 * the pod with the error unless it is the read of a node-uniform
 * attribute, so find such an error on the types the pod was tried on:
 * true with the scheduler's message in buf. */
static bool selector_error(struct planner *pl, const struct plan_unit *u, char *buf, size_t sz)
{
	for (size_t h = 0; h < pl->n_hypos; h++) {
		const struct hypo *hy = &pl->hypos[h];

		if (!hy->actx)
			continue;       /* never tried: no devices were looked at */
		for (size_t i = 0; i < u->n_claims; i++) {
			const struct model_object *cl = u->claims[i];
			const struct model_claim_spec *cs = &cl->u.claim.spec;
			char name[512];

			snprintf(name, sizeof(name), "%s/%s", cl->meta.ns, cl->meta.name);
			for (size_t q = 0; q < cs->n_requests; q++) {
				const struct model_device_request *r = &cs->requests[q];

				for (size_t sl = 0; sl < HWDB_MAX_SLICES && hy->slices[sl]; sl++) {
					char sub[256];

					if (r->exactly && request_fails(pl, r->exactly, hy->slices[sl],
									name, r->name, buf, sz))
						goto found;
					for (size_t k = 0; k < r->n_first_available; k++) {
						snprintf(sub, sizeof(sub), "%s/%s", r->name,
							 r->first_available[k].name);
						if (request_fails(pl, &r->first_available[k].req,
								  hy->slices[sl], name, sub, buf, sz))
							goto found;
					}
				}
			}
		}
	}
	return false;
found:
	if (strstr(buf, "no such key") && !strstr(buf, "optional chaining")) {
		size_t len = strlen(buf);

		snprintf(buf + len, sz - len, " (consider using CEL optional chaining (.? followed "
			 "by orValue()) or guarding the check with has())");
	}
	return true;
}

/* Why a unit fits on no new node of one candidate. */
static int cand_reason(struct planner *pl, size_t ui, size_t ci, const char **cat, char *buf,
		       size_t sz)
{
	const struct plan_unit *u = &pl->pods.units[ui];
	const struct cand *c = &pl->cands[ci];
	size_t rep = pl->shape_rep[u->shape], node;
	struct alloc_outcome out = { 0 };
	int rc;

	pl->shape_rep[u->shape] = ui;
	*cat = cand_static(pl, u->shape, ci, buf, sz);
	pl->shape_rep[u->shape] = rep;
	if (*cat)
		return 0;
	if (!pool_takes(&pl->pools[c->pool], c->type)) {
		*cat = "limits";
		snprintf(buf, sz, "the NodePool's limits are reached");
		return 0;
	}
	if ((rc = pack_open(pl, ci, &node)))
		return rc;
	*cat = "devices";
	if (u->n_claims) {
		rc = alloc_try(pl->hypos[c->hypo].actx, pl->pn[node].state, u->claims,
			       u->n_claims, &out, pl->err);
		if (rc == 0 && !out.allocated) {
			constraint_hint(u, c->type, out.reason, buf, sz);
			selector_hint(pl, u, &pl->hypos[c->hypo], buf, sz);
		}
		else if (rc == 0)
			snprintf(buf, sz, "the claims fit, but not next to the other pods");
		else if (rc != -ENOMEM) {
			snprintf(buf, sz, "the allocator fails: %s", pl->err->msg);
			rc = 0;
		}
		alloc_outcome_free(&out);
	} else {
		snprintf(buf, sz, "does not fit");
	}
	pack_close(pl, node);
	return rc;
}

static const char *cat_phrase(const char *cat)
{
	static const struct { const char *cat, *phrase; } t[] = {
		{ "requirement", "excluded by the NodePool's requirements" },
		{ "offering", "without an offering" },
		{ "mig", "whose GPUs cannot take the MIG layout" },
		{ "topology", "with unknown device topology" },
		{ "taint", "with a taint not tolerated" },
		{ "selector", "not matching the pod's node selection" },
		{ "allocated", "away from an already allocated claim" },
		{ "resources", "too small" },
		{ "devices", "whose devices cannot satisfy the claims" },
		{ "limits", "beyond the NodePool's limits" },
		{ "node", "unschedulable" },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!strcmp(cat, t[i].cat))
			return t[i].phrase;
	return cat;
}

/* "NodePool gpu-dra: 70 instance types: 60 excluded by ..., 5 whose
 * devices cannot satisfy the claims (g6.xlarge: ...)". */
static void summarize(struct strbuf *sb, const struct reasons *r, size_t from, size_t to,
		      bool types)
{
	struct { const char *cat; size_t n, first; } cats[16];
	size_t nc = 0;

	for (size_t i = from; i < to; i++) {
		size_t k = 0;

		while (k < nc && strcmp(cats[k].cat, r->cat[i]))
			k++;
		if (k == nc) {
			if (nc == sizeof(cats) / sizeof(cats[0]))
				continue;
			cats[nc].cat = r->cat[i];
			cats[nc].n = 0;
			cats[nc++].first = i;
		}
		cats[k].n++;
		/* The largest type (the last in price order) says best how far
		 * the claims are from fitting. */
		if (!strcmp(r->cat[i], "devices") || !strcmp(r->cat[i], "resources"))
			cats[k].first = i;
	}
	for (size_t k = 0; k < nc; k++) {
		const struct plan_reject *x = &r->v[cats[k].first];

		sb_printf(sb, "%s%zu %s", k ? ", " : "", cats[k].n, cat_phrase(cats[k].cat));
		if (strcmp(cats[k].cat, "requirement"))
			sb_printf(sb, " (%s: %s)", types ? x->instance_type : x->node, x->reason);
	}
}

static int explain_unit(struct planner *pl, size_t ui, struct reasons *r, struct strbuf *sb)
{
	const struct plan_unit *u = &pl->pods.units[ui];
	size_t first;
	int rc;

	r->n = 0;
	sb_reset(sb);
	if (u->problem || pl->shape_error[u->shape]) {
		sb_printf(sb, "%s", u->problem ? u->problem : pl->shape_error[u->shape]);
		return 0;
	}
	/* Existing nodes. */
	for (size_t i = 0; i < pl->n_nodes && i < MAX_DETAILS_NODES; i++) {
		struct exnode *en = &pl->nodes[i];
		struct plan_node_spec spec = { .labels = en->labels, .n_labels = en->n_labels };
		const char *cat, *dim;
		char why[1024] = "";

		if (en->obj->u.node.unschedulable) {
			cat = "node";
			snprintf(why, sizeof(why), "cordoned (spec.unschedulable)");
		} else if (!(cat = unit_static(pl, u, &spec, en->obj->u.node.taints,
					       en->obj->u.node.n_taints, why, sizeof(why)))) {
			if ((dim = plan_res_short(&u->req, &en->used, &en->cap))) {
				struct plan_res left = {
					en->cap.cpu_milli - en->used.cpu_milli,
					en->cap.mem_bytes - en->used.mem_bytes,
					en->cap.pods - en->used.pods,
				};

				cat = "resources";
				res_text(dim, &u->req, &left, why, sizeof(why));
			} else if (!u->n_claims) {
				cat = "resources";
				snprintf(why, sizeof(why), "does not fit");
			} else {
				struct alloc_outcome out = { 0 };

				cat = "devices";
				if ((rc = exnode_ctx(pl, en)))
					return rc;
				rc = alloc_try(en->actx, en->state, u->claims, u->n_claims, &out,
					       pl->err);
				snprintf(why, sizeof(why), "%s",
					 rc == 0 && !out.allocated ? out.reason
					 : rc ? pl->err->msg : "does not fit");
				alloc_outcome_free(&out);
				if (rc == -ENOMEM)
					return rc;
			}
		}
		if ((rc = reason_add(pl, r, NULL, en->obj->meta.name, NULL, cat, why)))
			return rc;
	}
	if (pl->n_nodes > MAX_DETAILS_NODES) {
		sb_printf(sb, "the first %d of %zu existing nodes: ", MAX_DETAILS_NODES, pl->n_nodes);
		summarize(sb, r, 0, r->n, false);
		sb_puts(sb, "; ");
	} else if (pl->n_nodes) {
		sb_printf(sb, "%zu existing node%s: ", pl->n_nodes, pl->n_nodes == 1 ? "" : "s");
		summarize(sb, r, 0, r->n, false);
		sb_puts(sb, "; ");
	}
	/* NodePools. */
	for (size_t p = 0; p < pl->n_pools; p++) {
		struct pool *pool = &pl->pools[p];
		size_t ntypes = 0;

		first = r->n;
		if (pool->problem) {
			if ((rc = reason_add(pl, r, pool->name, NULL, NULL, "pool", pool->problem)))
				return rc;
			sb_printf(sb, "NodePool %s: %s; ", pool->name, pool->problem);
			continue;
		}
		for (size_t k = 0; k < pl->n_rejects; k++) {
			if (pl->rejects[k].pool != p)
				continue;
			ntypes++;
			if ((rc = reason_add(pl, r, pool->name, NULL, pl->rejects[k].type->name,
					     pl->rejects[k].category, pl->rejects[k].reason)))
				return rc;
		}
		for (size_t c = 0; c < pl->n_cands; c++) {
			const char *cat;
			char why[1024] = "";

			if (pl->cands[c].pool != p)
				continue;
			ntypes++;
			if ((rc = cand_reason(pl, ui, c, &cat, why, sizeof(why))))
				return rc;
			if ((rc = reason_add(pl, r, pool->name, NULL, pl->cands[c].type->name, cat,
					     why)))
				return rc;
		}
		sb_printf(sb, "NodePool %s: %zu instance type%s: ", pool->name, ntypes,
			  ntypes == 1 ? "" : "s");
		summarize(sb, r, first, r->n, true);
		sb_puts(sb, "; ");
	}
	if (sb->len >= 2)
		sb->buf[sb->len -= 2] = 0;
	/* A selector that fails on the new nodes' devices fails the pod, as
	 * the scheduler would on the real node; the details still list every
	 * type. */
	{
		char err[1024];

		if (u->n_claims && selector_error(pl, u, err, sizeof(err))) {
			sb_reset(sb);
			sb_printf(sb, "the allocator fails the pod's claims on the new nodes: %s", err);
		}
	}
	return sb_error(sb);
}

/* The reason explained for unit from, told of unit to of the same shape:
 * the units' claims are made from the same templates in the same order,
 * so each of from's claim names becomes to's. NULL: no memory. */
static const char *own_claims(struct planner *pl, const char *reason,
			      const struct plan_unit *from, const struct plan_unit *to)
{
	struct strbuf sb = STRBUF_INIT;
	const char *out;

	sb_puts(&sb, reason);
	for (size_t i = 0; i < from->n_claims && i < to->n_claims; i++) {
		char a[512], b[512];
		size_t la;

		snprintf(a, sizeof(a), "%s/%s", from->claims[i]->meta.ns, from->claims[i]->meta.name);
		snprintf(b, sizeof(b), "%s/%s", to->claims[i]->meta.ns, to->claims[i]->meta.name);
		la = strlen(a);
		if (!strcmp(a, b))
			continue;
		/* From after each replacement on: b may contain a. */
		for (size_t at = 0; !sb_error(&sb);) {
			const char *hit = strstr(sb_str(&sb) + at, a);
			struct strbuf nb = STRBUF_INIT;

			if (!hit)
				break;
			at = (size_t)(hit - sb_str(&sb));
			sb_printf(&nb, "%.*s%s%s", (int)at, sb_str(&sb), b, hit + la);
			at += strlen(b);
			sb_free(&sb);
			sb = nb;
		}
	}
	out = sb_error(&sb) ? NULL : astr(pl, sb_str(&sb));
	sb_free(&sb);
	return out;
}

static int explain(struct planner *pl)
{
	struct reasons r = { 0 };
	struct strbuf sb = STRBUF_INIT;
	const char *last_reason = NULL;
	struct plan_reject *last_details = NULL;
	size_t last_n = 0, last_shape = SIZE_MAX, last_unit = SIZE_MAX;
	int rc = 0;

	for (size_t ui = 0; ui < pl->pods.n_units; ui++) {
		const struct plan_unit *u = &pl->pods.units[ui];

		if (pl->placed[ui])
			continue;
		/* Units of one shape fail for one reason: explain once. */
		if (u->shape != last_shape || u->problem) {
			if ((rc = explain_unit(pl, ui, &r, &sb)))
				goto out;
			last_reason = astr(pl, sb_str(&sb));
			last_details = doc_arena_alloc(pl->res->arena, (r.n + 1) * sizeof(*r.v));
			if (!last_reason || !last_details) {
				rc = -ENOMEM;
				goto out;
			}
			copy(last_details, r.v, r.n * sizeof(*r.v));
			last_n = r.n;
			last_shape = u->problem ? SIZE_MAX : u->shape;
			last_unit = ui;
		}
		const char *reason = last_reason;

		if (u->shape == last_shape && ui != last_unit &&
		    !(reason = own_claims(pl, last_reason, &pl->pods.units[last_unit], u))) {
			rc = -ENOMEM;
			goto out;
		}
		for (size_t i = 0; i < u->n_pods; i++) {
			struct plan_unschedulable *x;

			if (plan_grow((void **)&pl->uns, &pl->cap_uns, pl->n_uns + 1, sizeof(*pl->uns))) {
				rc = -ENOMEM;
				goto out;
			}
			x = &pl->uns[pl->n_uns++];
			x->pod = pod_id(pl, &pl->pods.pods[u->pods[i]]);
			x->reason = u->n_pods > 1 && i == 0 ? afmt(pl, "%s (with %zu pod%s sharing "
								   "its claims)", reason,
								   u->n_pods - 1,
								   u->n_pods == 2 ? "" : "s")
							  : reason;
			x->details = last_details;
			x->n_details = last_n;
			if (!x->pod || !x->reason) {
				rc = -ENOMEM;
				goto out;
			}
		}
	}
out:
	if (rc == -ENOMEM)
		dt_err_set(pl->err, rc, "out of memory");
	free(r.v);
	free(r.cat);
	sb_free(&sb);
	return rc;
}

/* ---- Result ---- */

static int finish(struct planner *pl)
{
	struct plan_result *res = pl->res;
	struct doc_arena *a = res->arena;
	size_t n_ex = 0;

	res->node_claims = doc_arena_alloc(a, (pl->n_ncs + 1) * sizeof(*res->node_claims));
	res->unschedulable = doc_arena_alloc(a, (pl->n_uns + 1) * sizeof(*res->unschedulable));
	res->existing = doc_arena_alloc(a, (pl->n_nodes + 1) * sizeof(*res->existing));
	if (!res->node_claims || !res->unschedulable || !res->existing)
		return -ENOMEM;
	copy(res->node_claims, pl->ncs, pl->n_ncs * sizeof(*pl->ncs));
	res->n_node_claims = pl->n_ncs;
	copy(res->unschedulable, pl->uns, pl->n_uns * sizeof(*pl->uns));
	res->n_unschedulable = pl->n_uns;
	for (size_t i = 0; i < pl->n_nodes; i++) {
		struct exnode *en = &pl->nodes[i];
		struct plan_existing *e;

		if (!en->pods.n)
			continue;
		e = &res->existing[n_ex++];
		e->node = en->obj->meta.name;
		e->pods = doc_arena_alloc(a, en->pods.n * sizeof(*e->pods));
		e->claims = doc_arena_alloc(a, (en->claims.n + 1) * sizeof(*e->claims));
		if (!e->pods || !e->claims)
			return -ENOMEM;
		copy(e->pods, en->pods.v, en->pods.n * sizeof(*e->pods));
		e->n_pods = en->pods.n;
		copy(e->claims, en->claims.v, en->claims.n * sizeof(*e->claims));
		e->n_claims = en->claims.n;
	}
	res->n_existing = n_ex;
	res->n_pods = pl->pods.n_pods;
	return 0;
}

static void planner_free(struct planner *pl)
{
	for (size_t i = 0; i < pl->n_pn; i++) {
		alloc_state_free(pl->pn[i].state);
		for (size_t k = 0; k < pl->pn[i].cap; k++)
			alloc_state_free(pl->pn[i].stack[k].st);
		free(pl->pn[i].stack);
	}
	free(pl->pn);
	for (size_t i = 0; i < pl->n_nodes; i++) {
		alloc_state_free(pl->nodes[i].state);
		alloc_ctx_free(pl->nodes[i].actx);
		free(pl->nodes[i].labels);
		free(pl->nodes[i].slices);
		free(pl->nodes[i].pods.v);
		free(pl->nodes[i].claims.v);
	}
	free(pl->nodes);
	for (size_t i = 0; i < pl->n_hypos; i++) {
		alloc_state_free(pl->hypos[i].fresh);
		alloc_ctx_free(pl->hypos[i].actx);
	}
	free(pl->hypos);
	for (size_t i = 0; i < pl->n_cands; i++) {
		free(pl->cands[i].labels);
		free(pl->cands[i].vals);
	}
	free(pl->cands);
	free(pl->pools);
	free(pl->rejects);
	for (size_t i = 0; !pl->settled && i < pl->n_ncs; i++) {
		/* Before settle_node_claims the arrays are still malloc'ed. */
		free((void *)pl->ncs[i].pods);
		free(pl->ncs[i].claims);
		free((void *)pl->ncs[i].drivers);
	}
	free(pl->ncs);
	free(pl->uns);
	free(pl->classes);
	free(pl->slices);
	free(pl->allocated);
	free(pl->by_node);
	free(pl->global_claims);
	free(pl->placed);
	free(pl->shape_rep);
	free(pl->shape_error);
	plan_pods_free(&pl->pods);
	cel_cache_free(pl->cel);
}

int plan_run(struct model_set *set, const struct plan_options *opts,
	     struct plan_result **out, struct dt_err *err)
{
	struct planner pl = { .set = set, .opts = opts, .err = err };
	int rc;

	*out = NULL;
	pl.res = calloc(1, sizeof(*pl.res));
	if (!pl.res || !(pl.res->arena = doc_arena_new()) || !(pl.cel = cel_cache_new(4096))) {
		rc = dt_err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	pl.aopts.cel_cache = pl.cel;
	pl.aopts.share_id = opts && opts->share_id ? opts->share_id : share_id_counter;
	pl.aopts.share_id_arg = opts && opts->share_id ? opts->share_id_arg : &pl;
	if ((rc = plan_default_classes(set, err)) || (rc = plan_pods_collect(set, &pl.pods, err)) ||
	    (rc = collect_objects(&pl)))
		goto out;
	pl.placed = calloc(pl.pods.n_units + 1, sizeof(bool));
	pl.shape_rep = calloc(pl.pods.n_shapes + 1, sizeof(size_t));
	pl.shape_error = calloc(pl.pods.n_shapes + 1, sizeof(*pl.shape_error));
	if (!pl.placed || !pl.shape_rep || !pl.shape_error) {
		rc = dt_err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = pl.pods.n_units; i-- > 0;)
		pl.shape_rep[pl.pods.units[i].shape] = i;
	if ((rc = setup_nodes(&pl)) || (rc = setup_candidates(&pl)) ||
	    (rc = place_existing(&pl)) || (rc = plan_new_nodes(&pl)) || (rc = explain(&pl)))
		goto out;
	if ((rc = finish(&pl))) {
		rc = dt_err_set(err, rc, "out of memory");
		goto out;
	}
	*out = pl.res;
	pl.res = NULL;
out:
	planner_free(&pl);
	plan_result_free(pl.res);
	return rc;
}

void plan_result_free(struct plan_result *r)
{
	if (!r)
		return;
	doc_arena_free(r->arena);
	free(r);
}
