/* plan_new.c - new nodes: the optimizer's view of them (plan_pack.c sees
 * only shapes and candidates and calls back into plan_pack_open/pack_add/...
 * here, which run the real allocator on hypothetical nodes), the NodePools'
 * limits, and the NodeClaims of the chosen nodes, replayed unit by unit so
 * that each claim gets its devices. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan_state.h"

/* ---- The optimizer's view of new nodes ---- */

int plan_pack_open(void *ctx, size_t cand, size_t *node)
{
	struct planner *pl = ctx;
	struct cand *c = &pl->cands[cand];
	struct hypo *h = &pl->hypos[c->hypo];
	size_t i;
	int rc;

	if ((rc = plan_hypo_ctx(pl, h))) {
		pl->fatal = rc;
		return rc;
	}
	for (i = 0; i < pl->n_pn; i++)
		if (!pl->pn[i].open)
			break;
	if (i == pl->n_pn) {
		if (DT_GROW(pl->pn, pl->cap_pn, pl->n_pn + 1))
			return -ENOMEM;
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
	pn->n_open_reqs = 0;
	memset(&pn->used, 0, sizeof(pn->used));
	*node = i;
	return 0;
}

void plan_pack_close(void *ctx, size_t node)
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
	size_t ui = (size_t)(u - pl->pods.units);
	int rc;

	if (!plan_res_fits(&u->req, &pn->used, &c->alloc) || !plan_narrow_fits(pl, pn, ui))
		return 0;
	if (DT_GROW(pn->stack, pn->cap, pn->depth + 1))
		return -ENOMEM;
	if (u->n_claims) {
		rc = alloc_try_opts(pl->hypos[c->hypo].actx, pn->state, u->claims, u->n_claims,
				    &plan_no_reasons, &out, pl->err);
		if (rc) {
			alloc_outcome_free(&out);
			if (rc == -ENOMEM) {
				pl->fatal = rc;
				return rc;
			}
			/* Not fatal to the plan: the shape does not fit here, and
			 * its pods are reported with the error. */
			if (!pl->shape_error[u->shape])
				pl->shape_error[u->shape] = plan_afmt(pl, "the allocator fails the pod's "
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
	pn->stack[pn->depth].n_open_reqs = pn->n_open_reqs;
	if (plan_narrow_push(pl, pn, ui)) {
		alloc_outcome_free(&out);
		return -ENOMEM;
	}
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
	pn->n_open_reqs = pn->stack[pn->depth].n_open_reqs;
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
	for (size_t i = 0; i < pl->pods.n_ext_names; i++) {
		size_t e = per_dim(c->ext[i], n->ext[i]);

		b = e < b ? e : b;
	}
	return p < b ? p : b;
}

/* Whether a unit's claims constrain devices to match each other (a
 * matchAttribute or distinctAttribute): on a type whose device topology
 * hwdb does not know, such a claim cannot be judged. Claims that only count
 * and select devices can: the predicted slices hold what the drivers
 * publish there, and a selector on an attribute they lack matches nothing,
 * as on the node. */
static bool unit_constrains(const struct plan_unit *u)
{
	for (size_t i = 0; i < u->n_claims; i++)
		if (u->claims[i]->u.claim.spec.n_constraints)
			return true;
	return false;
}

/* Static fit of a shape on a candidate: NULL or the category (why in buf). */
const char *plan_cand_static(struct planner *pl, size_t shape, size_t ci, char *buf,
			       size_t sz)
{
	const struct plan_unit *u = &pl->pods.units[pl->shape_rep[shape]];
	const struct cand *c = &pl->cands[ci];
	const struct pool *p = &pl->pools[c->pool];
	struct plan_node_spec spec = { .labels = c->labels, .n_labels = c->n_labels,
				       .reqs = p->reqs, .n_reqs = p->n_reqs, .hypothetical = true };
	const char *cat = plan_unit_static(pl, u, &spec, p->taints, p->n_taints, buf, sz);
	const char *dim;

	if (cat)
		return cat;
	if (!c->type->dra_metadata && unit_constrains(u)) {
		snprintf(buf, sz, "device topology unknown (no DRA metadata for %s) and the claim "
			 "constrains its devices to match", c->type->name);
		return "topology";
	}
	struct plan_res zero = { .pods = 0 };

	if ((dim = plan_res_short(&u->req, &zero, &c->alloc))) {
		plan_res_text(dim, &u->req, &c->alloc, pl->pods.ext_names, buf, sz);
		return "resources";
	}
	return NULL;
}

/* ---- Pool limits ---- */

bool plan_pool_takes(const struct pool *p, const struct hwdb_type *t)
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
	return plan_afmt(pl, "%s-%s", p->name, sfx);
}

static int emit_node_claim(struct planner *pl, size_t node, const char *name,
			   struct vec_str *pods, struct vec_claims *claims, struct vec_str *drivers)
{
	struct cand *c = &pl->cands[pl->pn[node].cand];
	struct pool *p = &pl->pools[c->pool];
	struct plan_node_claim *nc;

	if (DT_GROW(pl->ncs, pl->cap_ncs, pl->n_ncs + 1))
		return -ENOMEM;
	nc = &pl->ncs[pl->n_ncs];
	nc->name = name;
	nc->node_pool = p->name;
	nc->pool = p->obj;
	nc->instance_type = c->type->name;
	nc->capacity_type = c->ct;
	nc->price = c->price.value;
	nc->region = pl->pools[c->pool].region;
	nc->price_overlay = c->price.overlay;
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
	for (size_t i = 0; i < drivers->n; i++)
		if (!strcmp(drivers->v[i], "dra.net"))
			nc->efas = (int64_t)c->type->n_efas;
	nc->node_class = p->nc ? p->nc->meta.name
			       : p->obj && p->obj->u.node_pool.node_class_ref.name
				 ? p->obj->u.node_pool.node_class_ref.name : "default";
	/* As Karpenter's NodeClaims: the daemons' requests, then the pods'. */
	nc->requests = p->daemons;
	plan_res_add(&nc->requests, &pl->pn[node].used);
	pl->n_ncs++;            /* its arrays are the planner's to free from here */
	pl->res->total_price += nc->price;
	return nc->name && !plan_narrow_claim(pl, &pl->pn[node], nc) ? 0 : -ENOMEM;
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
	if ((rc = plan_pack_open(pl, sn->cand, &node)))
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
			rc = plan_record_outcome(pl, &out, &claims, &drivers);
			alloc_outcome_free(&out);
			if (rc)
				goto out;
			for (size_t i = 0; i < u->n_pods; i++)
				if ((rc = plan_push_str(&pods, plan_pod_id(pl, &pl->pods.pods[u->pods[i]]))))
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
	plan_pack_close(pl, node);
	free(pods.v);
	free(claims.v);
	free(drivers.v);
	return rc;
}

/* The arrays of a node claim were malloc'ed; move them into the arena. */
int plan_settle_node_claims(struct planner *pl)
{
	struct doc_arena *a = pl->res->arena;

	for (size_t i = 0; i < pl->n_ncs; i++) {
		struct plan_node_claim *nc = &pl->ncs[i];
		const char **pods = doc_arena_alloc(a, (nc->n_pods + 1) * sizeof(*pods));
		struct plan_claim *cl = doc_arena_alloc(a, (nc->n_claims + 1) * sizeof(*cl));
		const char **dr = doc_arena_alloc(a, (nc->n_drivers + 1) * sizeof(*dr));

		if (!pods || !cl || !dr)
			return -ENOMEM;
		plan_copy(pods, nc->pods, nc->n_pods * sizeof(*pods));
		plan_copy(cl, nc->claims, nc->n_claims * sizeof(*cl));
		plan_copy(dr, nc->drivers, nc->n_drivers * sizeof(*dr));
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

int plan_new_nodes(struct planner *pl)
{
	size_t ns = pl->pods.n_shapes, nc = pl->n_cands;
	size_t *count = calloc(ns + 1, sizeof(size_t)), **queue = calloc(ns + 1, sizeof(size_t *));
	size_t *qlen = calloc(ns + 1, sizeof(size_t)), *qpos = calloc(ns + 1, sizeof(size_t));
	size_t *qcap = calloc(ns + 1, sizeof(size_t));
	bool *allowed = calloc(ns * nc + 1, sizeof(bool));
	double *price = calloc(nc + 1, sizeof(double));
	struct plan_pack_solution sol = { 0 };
	int rc = -ENOMEM;

	if (!count || !queue || !qlen || !qpos || !qcap || !allowed || !price ||
	    plan_narrow_setup(pl))
		goto oom;
	for (size_t c = 0; c < nc; c++)
		price[c] = pl->cands[c].price.value;
	for (size_t round = 0; round < 8; round++) {
		size_t pending = 0;

		memset(count, 0, ns * sizeof(size_t));
		for (size_t s = 0; s < ns; s++) {
			free(queue[s]);
			queue[s] = NULL;
			qlen[s] = qpos[s] = qcap[s] = 0;
		}
		for (size_t ui = 0; ui < pl->pods.n_units; ui++) {
			struct plan_unit *u = &pl->pods.units[ui];
			size_t s = u->shape;

			if (pl->placed[ui] || u->problem)
				continue;
			if (!count[s])
				pl->shape_rep[s] = ui;
			if (DT_GROW(queue[s], qcap[s], qlen[s] + 1))
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
					plan_pool_takes(&pl->pools[pl->cands[c].pool],
							pl->cands[c].type) &&
					!plan_cand_static(pl, s, c, why, sizeof(why));
			}
		struct plan_pack_problem prob = {
			.n_shapes = ns, .n_cands = nc, .count = count, .price = price,
			.allowed = allowed,
			.exact_steps = pl->opts && pl->opts->exact_steps ? pl->opts->exact_steps
									  : PLAN_DEFAULT_EXACT_STEPS,
			.exact_max_units = pl->opts ? pl->opts->exact_max_units : 0,
			.ops = { .ctx = pl, .open = plan_pack_open, .close = plan_pack_close,
				 .add = pack_add, .undo = pack_undo, .bound = pack_bound },
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

			if (!plan_pool_takes(&pl->pools[c->pool], c->type)) {
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
	rc = plan_settle_node_claims(pl);
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
	free(qcap);
	free(allowed);
	free(price);
	return rc;
}
