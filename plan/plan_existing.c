/* plan_existing.c - placement on existing nodes: whether a unit may use a
 * node at all (selectors, affinity, taints; shared with new nodes and the
 * reasons), and the first-fit pass that puts units, by priority, on the
 * nodes where CPU, memory, pod slots and the real allocator say they fit,
 * as the scheduler would. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "plan_state.h"
#include "u64map.h"

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

/* "50Ti", "17Gi", "1.5Gi", "100Mi": bytes in the largest binary unit
 * (Mi at least) they make one of, to a tenth, rounded up or down (a
 * request up, what is left down, so that the text never says it fits). */
static const char *bytes_text(int64_t bytes, bool up, char buf[32])
{
	static const char *const units[] = { "Mi", "Gi", "Ti", "Pi", "Ei" };
	int u = 0;
	double tenths;

	while (u + 1 < 5 && bytes >= (INT64_C(1) << (10 * (u + 3))))
		u++;
	tenths = (double)bytes * 10 / (double)(INT64_C(1) << (10 * (u + 2)));
	tenths = up ? ceil(tenths - 1e-9) : floor(tenths + 1e-9);
	if (fmod(tenths, 10) == 0)
		snprintf(buf, 32, "%.0f%s", tenths / 10, units[u]);
	else
		snprintf(buf, 32, "%.1f%s", tenths / 10, units[u]);
	return buf;
}

void plan_res_text(const char *dim, const struct plan_res *need, const struct plan_res *cap,
		   const char *const *ext_names, char *buf, size_t sz)
{
	char nb[32], cb[32];

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
	else if (!strcmp(dim, "ephemeral-storage"))
		snprintf(buf, sz, "ephemeral-storage: needs %s, %s allocatable",
			 bytes_text(need->storage_bytes, true, nb), bytes_text(cap->storage_bytes, false, cb));
	else
		snprintf(buf, sz, "pods: needs %" PRId64 ", the node takes %" PRId64,
			 need->pods, cap->pods);
}

/* ---- Existing nodes ---- */

static int64_t unit_priority(const struct planner *pl, const struct plan_unit *u)
{
	int64_t best = INT64_MIN;

	for (size_t i = 0; i < u->n_pods; i++) {
		int64_t p = pl->pods.pods[u->pods[i]].priority;

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

/* Unit u on node en if it fits there: 1 placed, 0 not, 2 a problem the
 * scheduler would fail the pod for (u->problem set), < 0 an error. */
static int try_node(struct planner *pl, struct plan_unit *u, size_t ui, struct exnode *en)
{
	struct plan_node_spec spec = { .labels = en->labels, .n_labels = en->n_labels };
	/* alloc_try_opts sets it: not zeroed here, it holds a reason buffer
	 * of a kilobyte. */
	struct alloc_outcome out;
	int rc;

	if (en->obj->u.node.unschedulable ||
	    plan_unit_static(pl, u, &spec, en->obj->u.node.taints, en->obj->u.node.n_taints,
			     NULL, 0) ||
	    !plan_res_fits(&u->req, &en->used, &en->cap))
		return 0;
	if (u->n_claims) {
		if ((rc = plan_exnode_ctx(pl, en)))
			return rc;
		/* Reasons are asked again for the pods left over. */
		rc = alloc_try_opts(en->actx, en->state, u->claims, u->n_claims, &plan_no_reasons,
				    &out, pl->err);
		if (rc) {
			alloc_outcome_free(&out);
			if (rc == -ENOMEM)
				return rc;
			/* The scheduler fails such a pod: so does the plan. */
			u->problem = plan_afmt(pl, "the allocator fails the pod's claims on node %s: %s",
					       en->obj->meta.name, pl->err->msg);
			return u->problem ? 2 : -ENOMEM;
		}
		if (!out.allocated) {
			alloc_outcome_free(&out);
			return 0;
		}
		alloc_state_commit(en->state, &out);
		rc = plan_share_outcome(pl, en, &out);      /* QA-100 */
		if (!rc)
			rc = plan_record_outcome(pl, &out, &en->claims, NULL);
		alloc_outcome_free(&out);
		if (rc)
			return -ENOMEM;
	}
	plan_res_add(&en->used, &u->req);
	for (size_t i = 0; i < u->n_pods; i++)
		if (plan_push_str(&en->pods, plan_pod_id(pl, &pl->pods.pods[u->pods[i]])))
			return -ENOMEM;
	pl->placed[ui] = true;
	return 1;
}

/* A name's key in a u64map (0 means empty there). */
static uint64_t name_key(const char *s)
{
	uint64_t h = hash_field(HASH_FNV_OFFSET, s);

	return h ? h : 1;
}

/* made: pod id's key -> 1 + the index of the node made for it. */
static int made_for_map(struct planner *pl, struct u64map *made)
{
	struct u64map byname = U64MAP_INIT;
	const struct plan_options *o = pl->opts;
	uint64_t v;
	int rc = 0;

	if (!o || !o->n_made_for)
		return 0;
	for (size_t i = 0; !rc && i < pl->n_nodes; i++)
		rc = u64map_put(&byname, name_key(pl->nodes[i].obj->meta.name),
				i + 1);
	for (size_t i = 0; !rc && i < o->n_made_for; i++)
		if (u64map_get(&byname, name_key(o->made_for[i].node), &v))
			rc = u64map_put(made, name_key(o->made_for[i].pod), v);
	u64map_free(&byname);
	return rc;
}

/* The node made for one of u's pods that is still there; NULL: none. */
static struct exnode *made_node(struct planner *pl, const struct u64map *made,
				const struct plan_unit *u)
{
	uint64_t v;

	for (size_t i = 0; i < u->n_pods; i++)
		if (u64map_get(made, name_key(plan_pod_id(pl, &pl->pods.pods[u->pods[i]])), &v) &&
		    v && v <= pl->n_nodes)
			return &pl->nodes[v - 1];
	return NULL;
}

int plan_place_existing(struct planner *pl)
{
	size_t *cursor = calloc(pl->pods.n_places + 1, sizeof(size_t));
	size_t *order = pl->n_nodes ? unit_order(pl) : NULL;
	struct u64map made = U64MAP_INIT;
	int rc = 0;

	if (!cursor || (pl->n_nodes && !order) || made_for_map(pl, &made)) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t oi = 0; oi < pl->pods.n_units && pl->n_nodes && rc >= 0; oi++) {
		size_t ui = order[oi];
		struct plan_unit *u = &pl->pods.units[ui];
		size_t *cur = &cursor[u->place];
		struct exnode *mine = made.n ? made_node(pl, &made, u) : NULL;

		if (u->problem)
			continue;
		/* its own node first (the cursor stays: others may still fit) */
		if (mine && (rc = try_node(pl, u, ui, mine)) != 0)
			continue;
		for (; *cur < pl->n_nodes; ++*cur)
			if (&pl->nodes[*cur] != mine && (rc = try_node(pl, u, ui, &pl->nodes[*cur])) != 0)
				break;
	}
out:
	free(cursor);
	free(order);
	u64map_free(&made);
	if (rc == -ENOMEM && !pl->err->code)
		return dt_err_set(pl->err, -ENOMEM, "out of memory");
	return rc < 0 ? rc : 0;
}
