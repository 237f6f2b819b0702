/* plan_reasons.c - why each pod left over fits nowhere: per existing node
 * and per (NodePool, instance type), a category and a sentence (resources,
 * selectors, taints, devices, the selector or constraint that no predicted
 * device meets, CEL errors the allocator reads as no match), summarized
 * into the pod's one-line reason the way the scheduler words it. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan_state.h"

#define MAX_DETAILS_NODES 50    /* existing nodes listed per unschedulable pod */

/* ---- Reasons ---- */

struct reasons {
	struct plan_reject *v;
	const char **cat;
	size_t n, cap, cap_cat;
};

static int reason_add(struct planner *pl, struct reasons *r, const char *pool, const char *node,
		      const char *type, const char *cat, const char *why)
{
	if (DT_GROW(r->v, r->cap, r->n + 1) ||
	    DT_GROW(r->cat, r->cap_cat, r->n + 1))
		return -ENOMEM;
	r->v[r->n].node_pool = pool;
	r->v[r->n].node = node;
	r->v[r->n].instance_type = type;
	r->v[r->n].reason = plan_astr(pl, why);
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

static const struct model_object *find_class(const struct planner *pl, const char *name)
{
	for (size_t i = 0; name && i < pl->n_classes; i++)
		if (!strcmp(pl->classes[i]->meta.name, name))
			return pl->classes[i];
	return NULL;
}

/* The first device of the slice that the request's class selects (NULL:
 * none, or no such class): only there may the request's own selectors
 * run, as in the allocator, which evaluates them after the class's. */
static const struct model_device *class_device(struct planner *pl, const char *class_name,
					       const struct model_resource_slice_spec *sp)
{
	const struct model_object *cls = find_class(pl, class_name);

	for (size_t d = 0; cls && d < sp->n_devices; d++) {
		const struct model_device_class_spec *cs = &cls->u.device_class;
		struct dt_err e = { 0 };
		int m = 1;

		for (size_t i = 0; m == 1 && i < cs->n_selectors; i++)
			m = sel_eval(pl, &cs->selectors[i], &sp->devices[d], &e);
		if (m == 1)
			return &sp->devices[d];
	}
	return NULL;
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
					const struct model_device *d =
						class_device(pl, ex->device_class_name, sp);

					if (!d || sel_eval(pl, sel, d, &e) >= 0)
						continue;
					size_t len = strlen(buf);

					snprintf(buf + len, sz - len, "; request %s: the selector fails on "
						 "%s device %s: %s", cs->requests[q].name, sp->driver,
						 d->name, e.msg);
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
	const char *ann = plan_annotation(&slice->meta, HWDB_ANNOTATION_NODE_UNIFORM);
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
	*cat = plan_cand_static(pl, u->shape, ci, buf, sz);
	pl->shape_rep[u->shape] = rep;
	if (*cat)
		return 0;
	if (!plan_pool_takes(&pl->pools[c->pool], c->type)) {
		*cat = "limits";
		snprintf(buf, sz, "the NodePool's limits are reached");
		return 0;
	}
	if ((rc = plan_pack_open(pl, ci, &node)))
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
	plan_pack_close(pl, node);
	return rc;
}

static const char *cat_phrase(const char *cat)
{
	static const struct { const char *cat, *phrase; } t[] = {
		{ "requirement", "excluded by the NodePool's requirements" },
		{ "offering", "without an offering" },
		{ "learned", "learned by the fleet, without a price" },
		{ "mig", "whose GPUs cannot take the MIG layout" },
		{ "unavailable", "whose offering recently ran out of capacity" },
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
		} else if (!(cat = plan_unit_static(pl, u, &spec, en->obj->u.node.taints,
					       en->obj->u.node.n_taints, why, sizeof(why)))) {
			if ((dim = plan_res_short(&u->req, &en->used, &en->cap))) {
				struct plan_res left = {
					.cpu_milli = en->cap.cpu_milli - en->used.cpu_milli,
					.mem_bytes = en->cap.mem_bytes - en->used.mem_bytes,
					.pods = en->cap.pods - en->used.pods,
				};

				for (size_t k = 0; k < PLAN_MAX_NODE_EXT; k++)
					left.ext[k] = en->cap.ext[k] - en->used.ext[k];
				cat = "resources";
				plan_res_text(dim, &u->req, &left, pl->pods.ext_names, why, sizeof(why));
			} else if (!u->n_claims) {
				cat = "resources";
				snprintf(why, sizeof(why), "does not fit");
			} else {
				struct alloc_outcome out = { 0 };

				cat = "devices";
				if ((rc = plan_exnode_ctx(pl, en)))
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
	out = sb_error(&sb) ? NULL : plan_astr(pl, sb_str(&sb));
	sb_free(&sb);
	return out;
}

int plan_explain(struct planner *pl)
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
			last_reason = plan_astr(pl, sb_str(&sb));
			last_details = doc_arena_alloc(pl->res->arena, (r.n + 1) * sizeof(*r.v));
			if (!last_reason || !last_details) {
				rc = -ENOMEM;
				goto out;
			}
			plan_copy(last_details, r.v, r.n * sizeof(*r.v));
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

			if (DT_GROW(pl->uns, pl->cap_uns, pl->n_uns + 1)) {
				rc = -ENOMEM;
				goto out;
			}
			x = &pl->uns[pl->n_uns++];
			x->pod = plan_pod_id(pl, &pl->pods.pods[u->pods[i]]);
			x->reason = u->n_pods > 1 && i == 0 ? plan_afmt(pl, "%s (with %zu pod%s sharing "
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
