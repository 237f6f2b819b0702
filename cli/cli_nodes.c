/* cli_nodes.c - `dratopo nodes` and `dratopo types`: the live fleet as a
 * running coordinator reconciled it.
 *
 *   dratopo nodes --coordinator ADDR [TLS options] [-o table|json]
 *                 [--type T] [--verdict match|drift|unknown|learned]
 *   dratopo types --coordinator ADDR [TLS options] [-o table|json]
 *
 * nodes JSON: {"nodes": [{"name", "instanceType", "verdict", "differences",
 * "lastReport", "gpus", "efas", "plannable", "why"}]}, lastReport in RFC
 * 3339 UTC; the table has one row per node. types JSON: {"types": [...]},
 * one object per instance type with its counts, its most common shape and
 * where its hwdb entry comes from; the table one row per type. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "cli_remote.h"
#include "doc.h"
#include "dratopo/v1/fleet.pb-c.h"
#include "fleet_doc.h"
#include "opts.h"
#include "strbuf.h"

#define QUERY_DEADLINE_MS 10000

enum output { OUT_TABLE, OUT_JSON, OUT_YAML };

struct query_opts {
	struct cli_remote remote;
	int output;                     /* enum output; yaml: nodes' remedies */
	bool compact;
	bool lifts;                     /* nodes --lifts: for kubectl delete */
	const char *forget;             /* nodes --forget NAME */
	const char *type;
	int verdict;                    /* a Dratopo__V1__Verdict, 0: any */
};

/* --verdict: the proto's value, as fleet_doc names it. */
static int set_verdict(void *dst, const char *v, struct dt_err *err)
{
	struct query_opts *o = dst;

	for (int i = 1; strcmp(fleet_doc_verdict((Dratopo__V1__Verdict)i), "unspecified"); i++)
		if (!strcmp(v, fleet_doc_verdict((Dratopo__V1__Verdict)i))) {
			o->verdict = i;
			return 0;
		}
	return dt_err_set(err, -EINVAL, "unknown value '%s' (match, drift, unknown or learned)", v);
}

static const struct opt nodes_opts[] = {
	CLI_REMOTE_OPTS(struct query_opts, remote),
	{ .name = "output", .key = 'o', .type = OPT_CHOICE, .arg = "FORMAT",
	  .choices = "table|json|yaml", .at = OPTS_AT(struct query_opts, output),
	  .help = "table (default), json, or yaml (the remedies)" },
	OPTS_COMPACT(struct query_opts, compact),
	{ .name = "type", .type = OPT_STR, .arg = "TYPE", .at = OPTS_AT(struct query_opts, type),
	  .help = "only nodes of this instance type" },
	{ .name = "verdict", .type = OPT_FUNC, .arg = "VERDICT", .set = set_verdict,
	  .help = "only nodes with this verdict: match, drift, unknown\nor learned" },
	{ .name = "lifts", .type = OPT_FLAG, .at = OPTS_AT(struct query_opts, lifts),
	  .help = "what lifts the remedies of nodes that match again,\n"
		  "for `kubectl delete --ignore-not-found -f -`" },
	{ .name = "forget", .type = OPT_STR, .arg = "NODE", .at = OPTS_AT(struct query_opts, forget),
	  .help = "forget a node that left the cluster" },
	{ 0 }
};

static const struct opt types_opts[] = {
	CLI_REMOTE_OPTS(struct query_opts, remote),
	{ .name = "output", .key = 'o', .type = OPT_CHOICE, .arg = "FORMAT",
	  .choices = "table|json", .at = OPTS_AT(struct query_opts, output),
	  .help = "table (default) or json" },
	OPTS_COMPACT(struct query_opts, compact),
	{ 0 }
};

static const struct opts_cmd nodes_cmd = {
	.prog = "dratopo nodes",
	.synopsis = "dratopo nodes --coordinator ADDR [TLS options] [-o table|json|yaml]\n"
		    "                     [--compact] [--type TYPE]\n"
		    "                     [--verdict match|drift|unknown|learned]\n"
		    "       dratopo nodes --coordinator ADDR [TLS options] --lifts\n"
		    "       dratopo nodes --coordinator ADDR [TLS options] --forget NODE",
	.about = "The nodes a running coordinator knows: instance type, its verdict on the\n"
		 "last report (with the differences for a drift), when that report came,\n"
		 "and whether planning may use the node (and why not).\n"
		 "-o yaml prints the remedies instead, for `kubectl apply -f -`: a\n"
		 "DeviceTaintRule per affected device of every drifted node, as a\n"
		 "comment the Node taint of unfit nodes, and last the rule dratopo-drift,\n"
		 "which selects no device: kubectl apply refuses an input without objects.\n"
		 "--lifts prints what lifts the remedies of nodes that match again, for\n"
		 "`kubectl delete --ignore-not-found -f -`: their DeviceTaintRules as\n"
		 "objects, and as a comment the command that removes the Node taint.\n"
		 "--forget NODE forgets a node that left the cluster (the coordinator's\n"
		 "--forget-after does it for nodes silent that long).",
	.opts = nodes_opts,
	.epilog = CLI_REMOTE_NOTE,
};

static const struct opts_cmd types_cmd = {
	.prog = "dratopo types",
	.synopsis = "dratopo types --coordinator ADDR [TLS options] [-o table|json] [--compact]",
	.about = "Per instance type: nodes, how many match or drift, the most common live\n"
		 "shape, and whether hwdb knows the type, it was learned, its nodes\n"
		 "disagree (conflict), or hwdb's entry looks wrong (most nodes drift the\n"
		 "same way).",
	.opts = types_opts,
	.epilog = CLI_REMOTE_NOTE,
};

/* false to go on; true and *rc when the command ends here. */
static bool parse(const struct opts_cmd *c, int argc, char **argv, struct query_opts *o, int *rc)
{
	if (opts_parse(c, argc, argv, o, rc))
		return true;
	if (!o->remote.addr)
		*rc = opts_usage_error(c, "--coordinator ADDR is required");
	else if (o->compact && o->output != OUT_JSON)
		*rc = opts_usage_error(c, "--compact goes with -o json");
	return *rc != 0;
}

static int flush_out(const char *cmd, struct strbuf *sb)
{
	char prog[32];
	int rc;

	snprintf(prog, sizeof(prog), "dratopo %s", cmd);
	rc = opts_write_out(prog, sb);
	sb_free(sb);
	return rc;
}

/* nodes -o yaml / --lifts: the coordinator's remedies or lifts, as it
 * wrote them. */
static int remedies(struct query_opts *o)
{
	Dratopo__V1__RemediesRequest req = DRATOPO__V1__REMEDIES_REQUEST__INIT;
	Dratopo__V1__RemediesResponse *r;
	ProtobufCMessage *resp = NULL;
	struct strbuf sb = STRBUF_INIT;
	int rc = cli_remote_call(&o->remote, "nodes", "/dratopo.v1.Fleet/Remedies", &req.base,
				 &dratopo__v1__remedies_response__descriptor, QUERY_DEADLINE_MS,
				 &resp);

	if (rc)
		return rc;
	r = (Dratopo__V1__RemediesResponse *)resp;
	sb_puts(&sb, o->lifts ? r->lifts_yaml : r->yaml);
	/* kubectl delete -f - takes a comment as "nothing"; the apply stream
	 * ends with an object, empty only from a coordinator before that. */
	if (!sb.len)
		sb_puts(&sb, o->lifts ? "# no node to lift\n" : "# no node in drift\n");
	protobuf_c_message_free_unpacked(resp, NULL);
	return flush_out("nodes", &sb);
}

/* nodes --forget NODE. */
static int forget(struct query_opts *o)
{
	Dratopo__V1__ForgetRequest req = DRATOPO__V1__FORGET_REQUEST__INIT;
	ProtobufCMessage *resp = NULL;
	int rc;

	req.node = (char *)o->forget;
	rc = cli_remote_call(&o->remote, "nodes", "/dratopo.v1.Fleet/Forget", &req.base,
			     &dratopo__v1__forget_response__descriptor, QUERY_DEADLINE_MS, &resp);
	if (rc)
		return rc;
	protobuf_c_message_free_unpacked(resp, NULL);
	fprintf(stderr, "dratopo nodes: forgot %s\n", o->forget);
	return CLI_EXIT_OK;
}

/* ---- nodes ---- */

/* top (built in a by fleet_doc, NULL when that ran out of memory) as
 * JSON; frees a. */
static int emit_json(struct doc_arena *a, struct doc_node *top, bool compact, struct strbuf *sb)
{
	int rc = top ? doc_emit_json(top, DOC_JSON_OUTPUT(compact), sb) : -1;

	if (rc)
		sb->oom = true;         /* said as out of memory */
	doc_arena_free(a);
	return rc;
}

static void nodes_table(const Dratopo__V1__ListNodesResponse *r, struct strbuf *sb)
{
	int wn = 4, wt = 13;

	for (size_t i = 0; i < r->n_nodes; i++) {
		int n = (int)strlen(r->nodes[i]->name), t = (int)strlen(r->nodes[i]->instance_type);

		wn = n > wn ? n : wn;
		wt = t > wt ? t : wt;
	}
	sb_printf(sb, "%-*s  %-*s  %-8s  %4s  %4s  %-9s  %-20s  %s\n", wn, "NAME", wt,
		  "INSTANCE-TYPE", "VERDICT", "GPUS", "EFAS", "PLANNABLE", "LAST-REPORT", "WHY");
	for (size_t i = 0; i < r->n_nodes; i++) {
		const Dratopo__V1__Node *n = r->nodes[i];
		char ts[32];

		sb_printf(sb, "%-*s  %-*s  %-8s  %4" PRIu32 "  %4" PRIu32 "  %-9s  %s", wn, n->name, wt,
			  n->instance_type, fleet_doc_verdict(n->verdict), n->gpus, n->efas,
			  n->plannable ? "yes" : "no",
			  fleet_doc_time(n->last_report_unix_nanos, ts, sizeof(ts)));
		sb_printf(sb, n->plannable || !n->why[0] ? "\n" : "  %s\n", n->why);
	}
}

int cli_nodes(int argc, char **argv)
{
	struct query_opts o = { 0 };
	Dratopo__V1__ListNodesRequest req = DRATOPO__V1__LIST_NODES_REQUEST__INIT;
	ProtobufCMessage *resp = NULL;
	struct strbuf sb = STRBUF_INIT;
	int rc;

	if (parse(&nodes_cmd, argc, argv, &o, &rc))
		return rc;
	if ((o.forget != NULL) + o.lifts + (o.output == OUT_YAML) > 1)
		return opts_usage_error(&nodes_cmd, "--forget, --lifts and -o yaml go alone");
	/* What these print is not the node list: -o json or a filter would
	 * be silently ignored (QA-93). */
	if ((o.forget || o.lifts) && o.output == OUT_JSON)
		return opts_usage_error(&nodes_cmd, "%s prints no JSON (no -o with it)",
					o.forget ? "--forget" : "--lifts");
	if ((o.forget || o.lifts || o.output == OUT_YAML) && (o.type || o.verdict))
		return opts_usage_error(&nodes_cmd, "--type and --verdict filter the node list, "
					"not %s", o.forget ? "--forget" : o.lifts ? "--lifts" : "-o yaml");
	if (o.forget)
		return forget(&o);
	if (o.output == OUT_YAML || o.lifts)
		return remedies(&o);
	if (o.type)
		req.instance_type = (char *)o.type;
	req.verdict = (Dratopo__V1__Verdict)o.verdict;
	rc = cli_remote_call(&o.remote, "nodes", "/dratopo.v1.Fleet/ListNodes", &req.base,
			     &dratopo__v1__list_nodes_response__descriptor, QUERY_DEADLINE_MS, &resp);
	if (rc)
		return rc;
	if (o.output == OUT_JSON) {
		const Dratopo__V1__ListNodesResponse *r = (const void *)resp;
		struct doc_arena *a = doc_arena_new();

		emit_json(a, a ? fleet_doc_nodes(a, r->nodes, r->n_nodes) : NULL, o.compact, &sb);
	}
	else
		nodes_table((const void *)resp, &sb);
	protobuf_c_message_free_unpacked(resp, NULL);
	return flush_out("nodes", &sb);
}

/* ---- types ---- */

static void types_table(const Dratopo__V1__ListTypesResponse *r, struct strbuf *sb)
{
	int wt = 13, ws = 12;

	for (size_t i = 0; i < r->n_types; i++) {
		int t = (int)strlen(r->types[i]->instance_type);
		int s = (int)strlen(r->types[i]->common_shape);

		wt = t > wt ? t : wt;
		ws = s > ws ? s : ws;
	}
	sb_printf(sb, "%-*s  %-7s  %5s  %5s  %5s  %9s  %-*s  %s\n", wt, "INSTANCE-TYPE", "HWDB",
		  "NODES", "MATCH", "DRIFT", "PLANNABLE", ws, "COMMON-SHAPE", "NOTE");
	for (size_t i = 0; i < r->n_types; i++) {
		const Dratopo__V1__TypeSummary *t = r->types[i];
		char shape[300];

		snprintf(shape, sizeof(shape), "%s", t->common_shape);
		sb_printf(sb, "%-*s  %-7s  %5" PRIu32 "  %5" PRIu32 "  %5" PRIu32 "  %9" PRIu32
			  "  %-*s", wt, t->instance_type, fleet_doc_source(t->hwdb), t->nodes,
			  t->matching, t->drifting, t->plannable, *fleet_doc_type_note(t) ? ws : 0,
			  shape);
		sb_printf(sb, *fleet_doc_type_note(t) ? "  %s\n" : "\n", fleet_doc_type_note(t));
	}
}

int cli_types(int argc, char **argv)
{
	struct query_opts o = { 0 };
	Dratopo__V1__ListTypesRequest req = DRATOPO__V1__LIST_TYPES_REQUEST__INIT;
	ProtobufCMessage *resp = NULL;
	struct strbuf sb = STRBUF_INIT;
	int rc;

	if (parse(&types_cmd, argc, argv, &o, &rc))
		return rc;
	rc = cli_remote_call(&o.remote, "types", "/dratopo.v1.Fleet/ListTypes", &req.base,
			     &dratopo__v1__list_types_response__descriptor, QUERY_DEADLINE_MS, &resp);
	if (rc)
		return rc;
	if (o.output == OUT_JSON) {
		const Dratopo__V1__ListTypesResponse *r = (const void *)resp;
		struct doc_arena *a = doc_arena_new();

		emit_json(a, a ? fleet_doc_types(a, r->types, r->n_types) : NULL, o.compact, &sb);
	}
	else
		types_table((const void *)resp, &sb);
	protobuf_c_message_free_unpacked(resp, NULL);
	return flush_out("types", &sb);
}
