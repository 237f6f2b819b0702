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

/* ---- JSON, written straight (a plan of 5,000 pods is 2 MB of it) ---- */

static void jw_strs(struct doc_jw *w, const char *key, const char *const *v, size_t n)
{
	doc_jw_key(w, key);
	doc_jw_seq(w);
	for (size_t i = 0; i < n; i++)
		doc_jw_str(w, v[i]);
	doc_jw_end_seq(w);
}

static void jw_field(struct doc_jw *w, const char *key, const char *value)
{
	doc_jw_key(w, key);
	doc_jw_str(w, value);
}

static void jw_claims(struct doc_jw *w, const struct plan_claim *c, size_t n)
{
	doc_jw_key(w, "claims");
	doc_jw_seq(w);
	for (size_t i = 0; i < n; i++) {
		doc_jw_map(w);
		jw_field(w, "claim", c[i].claim);
		doc_jw_key(w, "results");
		doc_jw_seq(w);
		for (size_t k = 0; k < c[i].n_results; k++) {
			const struct plan_device *d = &c[i].results[k];

			doc_jw_map(w);
			jw_field(w, "request", d->request);
			jw_field(w, "driver", d->driver);
			jw_field(w, "pool", d->pool);
			jw_field(w, "device", d->device);
			if (d->share_id)
				jw_field(w, "shareID", d->share_id);
			doc_jw_end_map(w);
		}
		doc_jw_end_seq(w);
		doc_jw_end_map(w);
	}
	doc_jw_end_seq(w);
}

static void jw_requirement(struct doc_jw *w, const struct model_requirement *r)
{
	doc_jw_map(w);
	jw_field(w, "key", r->key);
	jw_field(w, "operator", r->operator_text);
	if (r->n_values)
		jw_strs(w, "values", r->values, r->n_values);
	doc_jw_end_map(w);
}

static void jw_node_claim(struct doc_jw *w, const struct plan_node_claim *nc)
{
	doc_jw_map(w);
	jw_field(w, "name", nc->name);
	jw_field(w, "nodePool", nc->node_pool);
	jw_field(w, "instanceType", nc->instance_type);
	jw_field(w, "capacityType", nc->capacity_type);
	jw_field(w, "region", nc->region);
	doc_jw_key(w, "pricePerHour");
	doc_jw_float(w, price_round(nc->price));
	if (nc->price_overlay)
		jw_field(w, "priceOverlay", nc->price_overlay);
	jw_strs(w, "pods", nc->pods, nc->n_pods);
	jw_claims(w, nc->claims, nc->n_claims);
	jw_strs(w, "requestedDRADrivers", nc->drivers, nc->n_drivers);
	if (nc->n_narrowed) {         /* the keys the pods narrowed (zone, ...) */
		doc_jw_key(w, "requirements");
		doc_jw_seq(w);
		for (size_t i = 0; i < nc->n_narrowed; i++)
			jw_requirement(w, &nc->narrowed[i]);
		doc_jw_end_seq(w);
	}
	doc_jw_end_map(w);
}

static void jw_unschedulable(struct doc_jw *w, const struct plan_unschedulable *u)
{
	doc_jw_map(w);
	jw_field(w, "pod", u->pod);
	jw_field(w, "reason", u->reason);
	doc_jw_key(w, "details");
	doc_jw_seq(w);
	for (size_t k = 0; k < u->n_details; k++) {
		const struct plan_reject *x = &u->details[k];

		doc_jw_map(w);
		if (x->node_pool)
			jw_field(w, "nodePool", x->node_pool);
		if (x->instance_type)
			jw_field(w, "instanceType", x->instance_type);
		if (x->node)
			jw_field(w, "node", x->node);
		jw_field(w, "reason", x->reason);
		doc_jw_end_map(w);
	}
	doc_jw_end_seq(w);
	doc_jw_end_map(w);
}

int plan_emit_json(const struct plan_result *r, int style, struct strbuf *out)
{
	struct doc_jw w;

	doc_jw_begin(&w, out, style);
	doc_jw_map(&w);
	doc_jw_key(&w, "nodeClaims");
	doc_jw_seq(&w);
	for (size_t i = 0; i < r->n_node_claims; i++)
		jw_node_claim(&w, &r->node_claims[i]);
	doc_jw_end_seq(&w);
	doc_jw_key(&w, "existingNodes");
	doc_jw_seq(&w);
	for (size_t i = 0; i < r->n_existing; i++) {
		doc_jw_map(&w);
		jw_field(&w, "node", r->existing[i].node);
		jw_strs(&w, "pods", r->existing[i].pods, r->existing[i].n_pods);
		jw_claims(&w, r->existing[i].claims, r->existing[i].n_claims);
		doc_jw_end_map(&w);
	}
	doc_jw_end_seq(&w);
	doc_jw_key(&w, "unschedulable");
	doc_jw_seq(&w);
	for (size_t i = 0; i < r->n_unschedulable; i++)
		jw_unschedulable(&w, &r->unschedulable[i]);
	doc_jw_end_seq(&w);
	doc_jw_key(&w, "totalPricePerHour");
	doc_jw_float(&w, price_round(r->total_price));
	doc_jw_key(&w, "optimal");
	doc_jw_bool(&w, r->optimal);
	doc_jw_end_map(&w);
	return doc_jw_end(&w);
}

/* ---- NodeClaims ---- */

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
		snprintf(pods, sizeof(pods), "%" PRId64, nc->efas);
		if (nc->efas && !doc_get(rq, "vpc.amazonaws.com/efa") &&
		    doc_map_set(a, rq, "vpc.amazonaws.com/efa", doc_new_string(a, pods)))
			return NULL;
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
