/* plan_run.c - the planner's driver: plan_run reads the inputs (plan_inputs.c),
 * places units on existing nodes first (plan_existing.c), then on the
 * cheapest new nodes (plan_new.c), then gives a reason for every pod left
 * over (plan_reasons.c), and moves what it built into the result. What
 * those steps share to build the result is plan_result.c's. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "plan_state.h"

static void share_id_counter(void *arg, char out[ALLOC_SHARE_ID_LEN + 1])
{
	struct planner *pl = arg;

	snprintf(out, ALLOC_SHARE_ID_LEN + 1, "00000000-0000-4000-8000-%012" PRIx64,
		 (uint64_t)(++pl->share_counter & 0xffffffffffffULL));
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
	plan_copy(res->node_claims, pl->ncs, pl->n_ncs * sizeof(*pl->ncs));
	res->n_node_claims = pl->n_ncs;
	plan_copy(res->unschedulable, pl->uns, pl->n_uns * sizeof(*pl->uns));
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
		plan_copy(e->pods, en->pods.v, en->pods.n * sizeof(*e->pods));
		e->n_pods = en->pods.n;
		plan_copy(e->claims, en->claims.v, en->claims.n * sizeof(*e->claims));
		e->n_claims = en->claims.n;
	}
	res->n_existing = n_ex;
	res->n_pods = pl->pods.n_pods;
	plan_copy(res->ext_names, pl->pods.ext_names, pl->pods.n_ext_names * sizeof(*res->ext_names));
	res->n_ext_names = pl->pods.n_ext_names;
	return 0;
}

static void planner_free(struct planner *pl)
{
	for (size_t i = 0; i < pl->n_pn; i++) {
		alloc_state_free(pl->pn[i].state);
		for (size_t k = 0; k < pl->pn[i].cap; k++)
			alloc_state_free(pl->pn[i].stack[k].st);
		free(pl->pn[i].stack);
		free(pl->pn[i].open_reqs);
	}
	free(pl->pn);
	plan_narrow_free(pl);
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
	plan_overlays_free(&pl->overlays);
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
	free(pl->taint_rules);
	free(pl->slices);
	free(pl->allocated);
	free(pl->by_node);
	free(pl->global_claims);
	free(pl->run_allocs);
	free(pl->placed);
	free(pl->shape_rep);
	free(pl->shape_error);
	plan_pods_free(&pl->pods);
	cel_cache_free(pl->cel);
	alloc_programs_free(pl->programs);     /* after every ctx */
}

int plan_run(struct model_set *set, const struct plan_options *opts,
	     struct plan_result **out, struct dt_err *err)
{
	struct planner pl = { .set = set, .opts = opts, .err = err };
	int rc;

	*out = NULL;
	pl.res = calloc(1, sizeof(*pl.res));
	if (!pl.res || !(pl.res->arena = doc_arena_new()) || !(pl.cel = cel_cache_new(4096)) ||
	    !(pl.programs = alloc_programs_new())) {
		rc = dt_err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	/* Every node's ctx reads the same classes and claims: compile each
	 * selector once per plan, not once per node. */
	pl.aopts.programs = pl.programs;
	pl.catalog = opts && opts->catalog ? opts->catalog : hwdb_catalog_process();
	pl.aopts.share_id = opts && opts->share_id ? opts->share_id : share_id_counter;
	pl.aopts.share_id_arg = opts && opts->share_id ? opts->share_id_arg : &pl;
	if ((rc = plan_default_classes(set, err)) || (rc = plan_pods_collect(set, &pl.pods, err)) ||
	    (rc = plan_collect_objects(&pl)))
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
	if ((rc = plan_setup_nodes(&pl)) || (rc = plan_setup_candidates(&pl)) ||
	    (rc = plan_place_existing(&pl)) || (rc = plan_new_nodes(&pl)) ||
	    (rc = plan_explain(&pl)))
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
	dt_diags_free(&r->warnings);
	free(r);
}
