/* plan_output.c - a plan as JSON (design.md's shape), as karpenter.sh/v1
 * NodeClaims ready for `kubectl apply`, or as a table for people. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "plan_internal.h"
#include "quantity.h"

/* Prices in hwdb have at most 6 decimals; keep sums from printing noise. */
static double price_round(double v)
{
	return round(v * 1e6) / 1e6;
}

static struct doc_node *str_seq(struct doc_arena *a, const char *const *v, size_t n)
{
	struct doc_node *seq = doc_new_seq(a);

	for (size_t i = 0; seq && i < n; i++)
		if (doc_seq_push(a, seq, doc_new_string(a, v[i])))
			return NULL;
	return seq;
}

static struct doc_node *claims_json(struct doc_arena *a, const struct plan_claim *c, size_t n)
{
	struct doc_node *seq = doc_new_seq(a);

	for (size_t i = 0; seq && i < n; i++) {
		struct doc_node *m = doc_new_map(a), *rs = doc_new_seq(a);

		if (!m || !rs || doc_map_set(a, m, "claim", doc_new_string(a, c[i].claim)))
			return NULL;
		for (size_t k = 0; k < c[i].n_results; k++) {
			const struct plan_device *d = &c[i].results[k];
			struct doc_node *r = doc_new_map(a);

			if (!r || doc_map_set(a, r, "request", doc_new_string(a, d->request)) ||
			    doc_map_set(a, r, "driver", doc_new_string(a, d->driver)) ||
			    doc_map_set(a, r, "pool", doc_new_string(a, d->pool)) ||
			    doc_map_set(a, r, "device", doc_new_string(a, d->device)) ||
			    (d->share_id &&
			     doc_map_set(a, r, "shareID", doc_new_string(a, d->share_id))) ||
			    doc_seq_push(a, rs, r))
				return NULL;
		}
		if (doc_map_set(a, m, "results", rs) || doc_seq_push(a, seq, m))
			return NULL;
	}
	return seq;
}

static struct doc_node *requirement_node(struct doc_arena *a, const char *key, const char *op,
					 const char *const *vals, size_t n)
{
	struct doc_node *m = doc_new_map(a);

	if (!m || doc_map_set(a, m, "key", doc_new_string(a, key)) ||
	    doc_map_set(a, m, "operator", doc_new_string(a, op)))
		return NULL;
	if (n && doc_map_set(a, m, "values", str_seq(a, vals, n)))
		return NULL;
	return m;
}

static bool narrowed_key(const struct plan_node_claim *nc, const char *key)
{
	for (size_t i = 0; i < nc->n_narrowed; i++)
		if (!strcmp(nc->narrowed[i].key, key))
			return true;
	return false;
}

/* nc's narrowed requirements onto seq. 0 or -ENOMEM. */
static int narrowed_reqs(struct doc_arena *a, const struct plan_node_claim *nc,
			 struct doc_node *seq)
{
	for (size_t i = 0; i < nc->n_narrowed; i++) {
		const struct model_requirement *r = &nc->narrowed[i];

		if (doc_seq_push(a, seq, requirement_node(a, r->key, r->operator_text, r->values,
							  r->n_values)))
			return -ENOMEM;
	}
	return 0;
}

/* "requirements": the keys the pods narrowed (zone, ...), when any. */
static int json_narrowed(struct doc_arena *a, const struct plan_node_claim *nc,
			 struct doc_node *m)
{
	struct doc_node *seq = doc_new_seq(a);

	if (!seq || narrowed_reqs(a, nc, seq))
		return -ENOMEM;
	return doc_map_set(a, m, "requirements", seq);
}

static struct doc_node *json_tree(const struct plan_result *r, struct doc_arena *a)
{
	struct doc_node *root = doc_new_map(a), *ncs = doc_new_seq(a), *ex = doc_new_seq(a);
	struct doc_node *un = doc_new_seq(a);

	if (!root || !ncs || !ex || !un)
		return NULL;
	for (size_t i = 0; i < r->n_node_claims; i++) {
		const struct plan_node_claim *nc = &r->node_claims[i];
		struct doc_node *m = doc_new_map(a);

		if (!m || doc_map_set(a, m, "name", doc_new_string(a, nc->name)) ||
		    doc_map_set(a, m, "nodePool", doc_new_string(a, nc->node_pool)) ||
		    doc_map_set(a, m, "instanceType", doc_new_string(a, nc->instance_type)) ||
		    doc_map_set(a, m, "capacityType", doc_new_string(a, nc->capacity_type)) ||
		    doc_map_set(a, m, "region", doc_new_string(a, nc->region)) ||
		    doc_map_set(a, m, "pricePerHour", doc_new_float(a, price_round(nc->price))) ||
		    (nc->price_overlay &&
		     doc_map_set(a, m, "priceOverlay", doc_new_string(a, nc->price_overlay))) ||
		    doc_map_set(a, m, "pods", str_seq(a, nc->pods, nc->n_pods)) ||
		    doc_map_set(a, m, "claims", claims_json(a, nc->claims, nc->n_claims)) ||
		    doc_map_set(a, m, "requestedDRADrivers", str_seq(a, nc->drivers, nc->n_drivers)) ||
		    (nc->n_narrowed && json_narrowed(a, nc, m)) || doc_seq_push(a, ncs, m))
			return NULL;
	}
	for (size_t i = 0; i < r->n_existing; i++) {
		const struct plan_existing *e = &r->existing[i];
		struct doc_node *m = doc_new_map(a);

		if (!m || doc_map_set(a, m, "node", doc_new_string(a, e->node)) ||
		    doc_map_set(a, m, "pods", str_seq(a, e->pods, e->n_pods)) ||
		    doc_map_set(a, m, "claims", claims_json(a, e->claims, e->n_claims)) ||
		    doc_seq_push(a, ex, m))
			return NULL;
	}
	for (size_t i = 0; i < r->n_unschedulable; i++) {
		const struct plan_unschedulable *u = &r->unschedulable[i];
		struct doc_node *m = doc_new_map(a), *det = doc_new_seq(a);

		if (!m || !det || doc_map_set(a, m, "pod", doc_new_string(a, u->pod)) ||
		    doc_map_set(a, m, "reason", doc_new_string(a, u->reason)))
			return NULL;
		for (size_t k = 0; k < u->n_details; k++) {
			const struct plan_reject *x = &u->details[k];
			struct doc_node *d = doc_new_map(a);

			if (!d || (x->node_pool &&
				   doc_map_set(a, d, "nodePool", doc_new_string(a, x->node_pool))) ||
			    (x->instance_type && doc_map_set(a, d, "instanceType",
							     doc_new_string(a, x->instance_type))) ||
			    (x->node && doc_map_set(a, d, "node", doc_new_string(a, x->node))) ||
			    doc_map_set(a, d, "reason", doc_new_string(a, x->reason)) ||
			    doc_seq_push(a, det, d))
				return NULL;
		}
		if (doc_map_set(a, m, "details", det) || doc_seq_push(a, un, m))
			return NULL;
	}
	if (doc_map_set(a, root, "nodeClaims", ncs) || doc_map_set(a, root, "existingNodes", ex) ||
	    doc_map_set(a, root, "unschedulable", un) ||
	    doc_map_set(a, root, "totalPricePerHour",
			doc_new_float(a, price_round(r->total_price))) ||
	    doc_map_set(a, root, "optimal", doc_new_bool(a, r->optimal)))
		return NULL;
	return root;
}

int plan_emit_json(const struct plan_result *r, struct strbuf *out)
{
	struct doc_arena *a = doc_arena_new();
	struct doc_node *t;
	int rc = -ENOMEM;

	if (!a)
		return -ENOMEM;
	if ((t = json_tree(r, a)) && !(rc = doc_emit_json(t, 4, out)))
		sb_putc(out, '\n');
	doc_arena_free(a);
	return rc ? rc : sb_error(out);
}

/* ---- NodeClaims ---- */

static struct doc_node *taints_node(struct doc_arena *a, const struct model_taint *t, size_t n)
{
	struct doc_node *seq = doc_new_seq(a);

	for (size_t i = 0; seq && i < n; i++) {
		struct doc_node *m = doc_new_map(a);

		if (!m || doc_map_set(a, m, "key", doc_new_string(a, t[i].key)) ||
		    (t[i].value && *t[i].value &&
		     doc_map_set(a, m, "value", doc_new_string(a, t[i].value))) ||
		    doc_map_set(a, m, "effect", doc_new_string(a, t[i].effect)) ||
		    doc_seq_push(a, seq, m))
			return NULL;
	}
	return seq;
}

static struct doc_node *node_claim_tree(const struct plan_result *plan,
				       const struct plan_node_claim *nc, struct doc_arena *a)
{
	const struct model_node_pool *np = nc->pool ? &nc->pool->u.node_pool : NULL;
	struct doc_node *root = doc_new_map(a), *meta = doc_new_map(a), *labels = doc_new_map(a);
	struct doc_node *ann = doc_new_map(a), *spec = doc_new_map(a), *reqs = doc_new_seq(a);
	struct doc_node *ref = doc_new_map(a);
	char drivers[1024] = "";
	size_t len = 0;

	if (!root || !meta || !labels || !ann || !spec || !reqs || !ref)
		return NULL;
	for (size_t i = 0; i < nc->n_drivers; i++) {
		snprintf(drivers + len, sizeof(drivers) - len, "%s%s", i ? "," : "", nc->drivers[i]);
		len = strlen(drivers);
	}
	if (doc_map_set(a, root, "apiVersion", doc_new_string(a, "karpenter.sh/v1")) ||
	    doc_map_set(a, root, "kind", doc_new_string(a, "NodeClaim")) ||
	    doc_map_set(a, meta, "name", doc_new_string(a, nc->name)))
		return NULL;
	if (doc_map_set(a, labels, PLAN_LABEL_NODEPOOL, doc_new_string(a, nc->node_pool)) ||
	    doc_map_set(a, labels, PLAN_LABEL_INSTANCE_TYPE, doc_new_string(a, nc->instance_type)) ||
	    doc_map_set(a, labels, PLAN_LABEL_CAPACITY_TYPE, doc_new_string(a, nc->capacity_type)))
		return NULL;
	for (size_t i = 0; np && i < np->n_template_labels; i++)
		if (doc_map_set(a, labels, np->template_labels[i].key,
				doc_new_string(a, np->template_labels[i].value)))
			return NULL;
	for (size_t i = 0; np && i < np->n_template_annotations; i++)
		if (doc_map_set(a, ann, np->template_annotations[i].key,
				doc_new_string(a, np->template_annotations[i].value)))
			return NULL;
	if (nc->n_drivers &&
	    doc_map_set(a, ann, "karpenter.sh/requested-dra-drivers", doc_new_string(a, drivers)))
		return NULL;
	if (doc_map_set(a, meta, "labels", labels) ||
	    (ann->u.map.n && doc_map_set(a, meta, "annotations", ann)) ||
	    doc_map_set(a, root, "metadata", meta))
		return NULL;
	/* The NodeClaim's requirements: the pool's, narrowed to the chosen
	 * instance type and capacity type. */
	if (doc_seq_push(a, reqs, requirement_node(a, PLAN_LABEL_INSTANCE_TYPE, "In",
						   &nc->instance_type, 1)) ||
	    doc_seq_push(a, reqs, requirement_node(a, PLAN_LABEL_CAPACITY_TYPE, "In",
						   &nc->capacity_type, 1)) ||
	    doc_seq_push(a, reqs, requirement_node(a, PLAN_LABEL_NODEPOOL, "In",
						   &nc->node_pool, 1)))
		return NULL;
	for (size_t i = 0; np && i < np->n_requirements; i++) {
		const struct model_requirement *r = &np->requirements[i];

		if (!strcmp(r->key, PLAN_LABEL_INSTANCE_TYPE) ||
		    !strcmp(r->key, PLAN_LABEL_CAPACITY_TYPE) || !strcmp(r->key, PLAN_LABEL_NODEPOOL) ||
		    narrowed_key(nc, r->key))
			continue;
		if (doc_seq_push(a, reqs, requirement_node(a, r->key, r->operator_text,
							   r->values, r->n_values)))
			return NULL;
	}
	/* The zone (region, zone id) as the pods narrowed it. */
	if (narrowed_reqs(a, nc, reqs))
		return NULL;
	if (doc_map_set(a, ref, "group", doc_new_string(a, np && np->node_class_ref.group
							       ? np->node_class_ref.group
							       : "karpenter.k8s.aws")) ||
	    doc_map_set(a, ref, "kind", doc_new_string(a, np && np->node_class_ref.kind
							      ? np->node_class_ref.kind
							      : "EC2NodeClass")) ||
	    doc_map_set(a, ref, "name", doc_new_string(a, nc->node_class)) ||
	    doc_map_set(a, spec, "nodeClassRef", ref) || doc_map_set(a, spec, "requirements", reqs))
		return NULL;
	/* spec.resources.requests: what the pods placed there ask for, summed
	 * and printed as Karpenter (Quantity.String) prints them: "16", "128Gi". */
	{
		struct doc_node *res = doc_new_map(a), *rq = doc_new_map(a);
		struct quantity qcpu = { .mant = nc->requests.cpu_milli, .exp = -3,
					 .format = QUANTITY_DECIMAL_SI };
		struct quantity qmem = quantity_from_int(nc->requests.mem_bytes, QUANTITY_BINARY_SI);
		char cpu[QUANTITY_STR_MAX], mem[QUANTITY_STR_MAX], pods[32];

		quantity_format(&qcpu, cpu);
		quantity_format(&qmem, mem);
		snprintf(pods, sizeof(pods), "%" PRId64, nc->requests.pods);
		if (!res || !rq || doc_map_set(a, rq, "cpu", doc_new_string(a, cpu)) ||
		    doc_map_set(a, rq, "memory", doc_new_string(a, mem)) ||
		    doc_map_set(a, rq, "pods", doc_new_string(a, pods)))
			return NULL;
		for (size_t i = 0; i < plan->n_ext_names; i++) {
			char n[24];

			snprintf(n, sizeof(n), "%" PRId64, nc->requests.ext[i]);
			if (nc->requests.ext[i] &&
			    doc_map_set(a, rq, plan->ext_names[i], doc_new_string(a, n)))
				return NULL;
		}
		if (doc_map_set(a, res, "requests", rq) || doc_map_set(a, spec, "resources", res))
			return NULL;
	}
	if (np && np->n_taints && doc_map_set(a, spec, "taints", taints_node(a, np->taints,
									    np->n_taints)))
		return NULL;
	if (np && np->n_startup_taints &&
	    doc_map_set(a, spec, "startupTaints", taints_node(a, np->startup_taints,
							       np->n_startup_taints)))
		return NULL;
	if (doc_map_set(a, root, "spec", spec))
		return NULL;
	return root;
}

int plan_emit_yaml(const struct plan_result *r, struct strbuf *out)
{
	struct doc_arena *a = doc_arena_new();
	int rc = 0;

	if (!a)
		return -ENOMEM;
	for (size_t i = 0; i < r->n_node_claims && !rc; i++) {
		struct doc_node *t = node_claim_tree(r, &r->node_claims[i], a);

		if (!t) {
			rc = -ENOMEM;
			break;
		}
		sb_printf(out, "---\n# pods: ");
		for (size_t k = 0; k < r->node_claims[i].n_pods; k++)
			sb_printf(out, "%s%s", k ? ", " : "", r->node_claims[i].pods[k]);
		sb_printf(out, "\n# priced in %s\n", r->node_claims[i].region);
		if (r->node_claims[i].price_overlay)
			sb_printf(out, "# price: %.4f per hour, from NodeOverlay %s\n",
				  price_round(r->node_claims[i].price),
				  r->node_claims[i].price_overlay);
		rc = doc_emit_yaml(t, out);
	}
	for (size_t i = 0; i < r->n_unschedulable && !rc; i++)
		sb_printf(out, "# unschedulable %s: %s\n", r->unschedulable[i].pod,
			  r->unschedulable[i].reason);
	doc_arena_free(a);
	return rc ? rc : sb_error(out);
}

/* ---- Table ---- */

/* The narrowed keys in short: "zone=us-east-1a; ", "zone!=us-east-1a|us-east-1b; ". */
static void table_narrowed(const struct plan_node_claim *nc, struct strbuf *out)
{
	for (size_t i = 0; i < nc->n_narrowed; i++) {
		const struct model_requirement *r = &nc->narrowed[i];
		const char *key = strrchr(r->key, '/');

		sb_printf(out, "%s%s", key ? key + 1 : r->key, r->op == MODEL_OP_IN ? "=" : "!=");
		for (size_t k = 0; k < r->n_values; k++)
			sb_printf(out, "%s%s", k ? "|" : "", r->values[k]);
		sb_puts(out, "; ");
	}
}

/* " in eu-west-1" (each region the node claims are priced in, once, in
 * order of first use); nothing without node claims. */
static void regions_priced(const struct plan_result *r, struct strbuf *out)
{
	for (size_t i = 0; i < r->n_node_claims; i++) {
		bool seen = false;

		for (size_t k = 0; k < i && !seen; k++)
			seen = !strcmp(r->node_claims[k].region, r->node_claims[i].region);
		if (!seen)
			sb_printf(out, "%s%s", i ? " and " : " in ", r->node_claims[i].region);
	}
}

int plan_emit_table(const struct plan_result *r, struct strbuf *out)
{
	size_t w_name = 4, w_pool = 8, w_type = 13;

	for (size_t i = 0; i < r->n_node_claims; i++) {
		const struct plan_node_claim *nc = &r->node_claims[i];

		w_name = strlen(nc->name) > w_name ? strlen(nc->name) : w_name;
		w_pool = strlen(nc->node_pool) > w_pool ? strlen(nc->node_pool) : w_pool;
		w_type = strlen(nc->instance_type) > w_type ? strlen(nc->instance_type) : w_type;
	}
	for (size_t i = 0; i < r->n_existing; i++)
		w_name = strlen(r->existing[i].node) > w_name ? strlen(r->existing[i].node) : w_name;
	for (size_t i = 0; i < r->n_unschedulable; i++)
		w_name = strlen(r->unschedulable[i].pod) > w_name ? strlen(r->unschedulable[i].pod)
								  : w_name;
	sb_printf(out, "%-13s %-*s %-*s %-*s %10s %5s  %s\n", "KIND", (int)w_name, "NAME",
		  (int)w_pool, "NODEPOOL", (int)w_type, "INSTANCE-TYPE", "PRICE/H", "PODS", "DETAIL");
	for (size_t i = 0; i < r->n_node_claims; i++) {
		const struct plan_node_claim *nc = &r->node_claims[i];

		sb_printf(out, "%-13s %-*s %-*s %-*s %10.4f %5zu  ", "nodeclaim", (int)w_name,
			  nc->name, (int)w_pool, nc->node_pool, (int)w_type, nc->instance_type,
			  nc->price, nc->n_pods);
		table_narrowed(nc, out);
		for (size_t k = 0; k < nc->n_pods && k < 4; k++)
			sb_printf(out, "%s%s", k ? ", " : "", nc->pods[k]);
		sb_printf(out, "%s\n", nc->n_pods > 4 ? ", ..." : "");
	}
	for (size_t i = 0; i < r->n_existing; i++) {
		const struct plan_existing *e = &r->existing[i];

		sb_printf(out, "%-13s %-*s %-*s %-*s %10s %5zu  ", "existing", (int)w_name, e->node,
			  (int)w_pool, "-", (int)w_type, "-", "-", e->n_pods);
		for (size_t k = 0; k < e->n_pods && k < 4; k++)
			sb_printf(out, "%s%s", k ? ", " : "", e->pods[k]);
		sb_printf(out, "%s\n", e->n_pods > 4 ? ", ..." : "");
	}
	for (size_t i = 0; i < r->n_unschedulable; i++)
		sb_printf(out, "%-13s %-*s %-*s %-*s %10s %5s  %s\n", "unschedulable", (int)w_name,
			  r->unschedulable[i].pod, (int)w_pool, "-", (int)w_type, "-", "-", "-",
			  r->unschedulable[i].reason);
	sb_printf(out, "total %.4f per hour", price_round(r->total_price));
	regions_priced(r, out);
	sb_printf(out, ", %zu node claim%s, %zu of %zu pod%s unschedulable%s\n",
		  r->n_node_claims, r->n_node_claims == 1 ? "" : "s",
		  r->n_unschedulable, r->n_pods, r->n_pods == 1 ? "" : "s",
		  r->optimal && r->n_node_claims ? " (price proven lowest)" : "");
	return sb_error(out);
}
