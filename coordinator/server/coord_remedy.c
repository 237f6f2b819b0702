/* coord_remedy.c - Fleet.Remedies and the remedy gauges: for every node in
 * drift, the DeviceTaintRules (and the Node taint when it is unfit) that
 * dt_remedy makes from its last report, verified again against its
 * type's effective entry; for every node that matches again after a drift,
 * the DeviceTaintRules to delete as objects (Fleet.Remedies' lifts_yaml,
 * `dratopo nodes --lifts` for `kubectl delete --ignore-not-found -f -`).
 * The apply stream holds the rules as documents and the Node taint's
 * command as a comment; the RPC ends it with dt_remedy's anchor, a rule
 * that selects nothing, so that it is never empty for kubectl apply
 * (coord_remedies_anchor; the controller applies the rules itself and
 * needs none). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "coord.h"
#include "model.h"
#include "remedy.h"
#include "topo_verify.h"

static int push_name(char ***list, size_t *n, size_t *cap, const char *name,
		     struct dt_err *err)
{
	if (DT_GROW(*list, *cap, *n + 1) || !((*list)[*n] = strdup(name)))
		return dt_err_set(err, -ENOMEM, "out of memory");
	(*n)++;
	return 0;
}

static int drift_objects(struct rec_fleet *f, const char *name, struct model_set *set,
			 struct coord_remedies *out, struct dt_err *err)
{
	struct topo t;
	struct topo_verify_result vr = { 0 };
	struct rem_objects o = { 0 };
	const struct hwdb_type *entry;
	int rc = rec_node_topology(f, name, &t, &entry, err);

	if (rc)
		return rc;
	if (entry)
		rc = topo_verify_entry(&t, entry, &vr, err);
	if (!rc)
		rc = rem_node_objects(name, &vr, &t, entry, set, &o, err);
	if (!rc && (rc = rem_emit(&o, name, DOC_FORMAT_YAML, &out->yaml)))
		rc = dt_err_set(err, rc, "out of memory");
	if (!rc) {
		out->device_taint_rules += o.n_rules;
		out->node_taints += o.node != NULL;
	}
	if (!rc && o.node)
		rc = push_name(&out->unfit, &out->n_unfit, &out->cap_unfit, name, err);
	rem_objects_free(&o);
	topo_verify_result_free(&vr);
	topo_free(&t);
	return rc;
}

static int lift(struct rec_fleet *f, const char *name, struct coord_remedies *out,
		struct dt_err *err)
{
	struct topo t;
	struct rem_lift l = { 0 };
	const struct hwdb_type *entry;
	int rc = rec_node_topology(f, name, &t, &entry, err);

	if (rc)
		return rc;
	rc = rem_lift(name, entry, &t, &l, err);
	if (!rc && !rem_lift_emit(&l, &out->lifts)) {
		sb_printf(&out->yaml, "%s# node %s matches again: its remedies are lifted by "
			  "dratopo nodes --lifts (kubectl delete --ignore-not-found -f -)\n",
			  out->yaml.len ? "---\n" : "", name);
	} else if (!rc) {
		rc = dt_err_set(err, -ENOMEM, "out of memory");
	}
	if (!rc)
		rc = push_name(&out->lifted, &out->n_lifted, &out->cap_lifted, name, err);
	rem_lift_free(&l);
	topo_free(&t);
	return rc;
}

int coord_remedies(struct coord *c, const char *node, struct coord_remedies *out,
		   struct dt_err *err)
{
	struct rec_filter flt = REC_FILTER_ALL;
	struct rec_node_list list = { 0 };
	struct rec_node one = { 0 };
	struct model_set *set = model_set_new();
	struct rec_fleet *f = coord_fleet_get(c);
	int rc;

	if (!set) {
		rc = dt_err_set(err, -ENOMEM, "out of memory");
	} else if (node && *node) {     /* one node: no need to copy the fleet */
		rc = rec_fleet_node(f, node, coord_now_ns(), &one, err);
		if (!rc)
			list = (struct rec_node_list){ .nodes = &one, .n = 1 };
		else if (rc == -ENOENT)
			rc = 0;
	} else {
		rc = rec_fleet_nodes(f, &flt, coord_now_ns(), &list, err);
	}
	memset(out, 0, sizeof(*out));
	sb_init(&out->yaml);
	sb_init(&out->lifts);
	for (size_t i = 0; !rc && i < list.n; i++) {
		const struct rec_node *n = &list.nodes[i];

		if (node && *node && strcmp(node, n->name))
			continue;
		if (n->verdict == REC_DRIFT) {
			rc = drift_objects(f, n->name, set, out, err);
			out->nodes_in_drift++;
		} else if (n->recovered) {
			rc = lift(f, n->name, out, err);
		}
	}
	coord_fleet_put(c);
	if (list.nodes == &one)
		rec_node_free(&one);
	else
		rec_node_list_free(&list);
	model_set_free(set);
	if (!rc && (sb_error(&out->yaml) || sb_error(&out->lifts)))
		rc = dt_err_set(err, -ENOMEM, "out of memory");
	if (rc)
		coord_remedies_free(out);
	return rc;
}

int coord_remedies_anchor(struct coord_remedies *r, struct dt_err *err)
{
	struct rem_summary sum = { r->nodes_in_drift, r->device_taint_rules, r->node_taints,
				   r->n_lifted };

	if (!r->yaml.len)
		sb_puts(&r->yaml, "# no node in drift\n");
	if (rem_anchor_emit(&sum, &r->yaml) || sb_error(&r->yaml))
		return dt_err_set(err, -ENOMEM, "out of memory");
	return 0;
}

void coord_remedies_free(struct coord_remedies *r)
{
	sb_free(&r->yaml);
	sb_free(&r->lifts);
	for (size_t i = 0; i < r->n_lifted; i++)
		free(r->lifted[i]);
	free(r->lifted);
	for (size_t i = 0; i < r->n_unfit; i++)
		free(r->unfit[i]);
	free(r->unfit);
	memset(r, 0, sizeof(*r));
}
