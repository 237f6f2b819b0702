/* plan_existing.c - placement on existing nodes: whether a unit may use a
 * node at all (selectors, affinity, taints; shared with new nodes and the
 * reasons), and the first-fit pass that puts units, by priority, on the
 * nodes where CPU, memory, pod slots and the real allocator say they fit,
 * as the scheduler would. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan_state.h"

/* ---- Whether a unit may use a node at all ---- */

/* Every pod of the unit against the node; NULL when fine, else the
 * category, and why in buf unless buf is NULL (placing asks only whether,
 * for every unit and node it passes over). */
const char *plan_unit_static(struct planner *pl, const struct plan_unit *u,
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

void plan_res_text(const char *dim, const struct plan_res *need, const struct plan_res *cap,
		   const char *const *ext_names, char *buf, size_t sz)
{
	if (!strcmp(dim, "extended")) {
		for (size_t i = 0; i < PLAN_MAX_NODE_EXT; i++)
			if (need->ext[i] > cap->ext[i]) {
				snprintf(buf, sz, "%s: needs %" PRId64 ", %" PRId64 " allocatable",
					 ext_names[i] ? ext_names[i] : "?", need->ext[i], cap->ext[i]);
				return;
			}
	}
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
	bool sorted = true;     /* the common case: one priority for all */

	if (!v || !tmp || !pr) {
		free(v);
		v = NULL;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		v[i] = i;
		pr[i] = unit_priority(pl, &pl->pods.units[i]);
		sorted = sorted && (!i || pr[i - 1] >= pr[i]);
	}
	for (size_t w = 1; w < n && !sorted; w *= 2) {
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

int plan_place_existing(struct planner *pl)
{
	size_t *cursor = calloc(pl->pods.n_places + 1, sizeof(size_t));
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
		size_t *cur = &cursor[u->place];

		if (u->problem)
			continue;
		for (; *cur < pl->n_nodes; ++*cur) {
			struct exnode *en = &pl->nodes[*cur];
			struct plan_node_spec spec = { .labels = en->labels, .n_labels = en->n_labels };
			/* alloc_try_opts sets it: not zeroed here, it holds a
			 * reason buffer of a kilobyte. */
			struct alloc_outcome out;

			if (en->obj->u.node.unschedulable ||
			    plan_unit_static(pl, u, &spec, en->obj->u.node.taints,
					en->obj->u.node.n_taints, NULL, 0) ||
			    !plan_res_fits(&u->req, &en->used, &en->cap))
				continue;
			if (u->n_claims) {
				if ((rc = plan_exnode_ctx(pl, en)))
					goto out;
				/* Reasons are asked again for the pods left over. */
				rc = alloc_try_opts(en->actx, en->state, u->claims, u->n_claims,
						    &plan_no_reasons, &out, pl->err);
				if (rc) {
					alloc_outcome_free(&out);
					if (rc == -ENOMEM)
						goto out;
					/* The scheduler fails such a pod: so does the plan. */
					u->problem = plan_afmt(pl, "the allocator fails the pod's claims "
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
				rc = plan_share_outcome(pl, en, &out);      /* QA-100 */
				if (!rc)
					rc = plan_record_outcome(pl, &out, &en->claims, NULL);
				alloc_outcome_free(&out);
				if (rc)
					goto oom;
			}
			plan_res_add(&en->used, &u->req);
			for (size_t i = 0; i < u->n_pods; i++)
				if (plan_push_str(&en->pods,
						  plan_pod_id(pl, &pl->pods.pods[u->pods[i]])))
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
