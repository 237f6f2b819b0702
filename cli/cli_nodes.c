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
#include "strbuf.h"

#define QUERY_DEADLINE_MS 10000

struct query_opts {
	struct cli_remote remote;
	bool json;
	bool yaml;                      /* nodes: the remedies, for kubectl apply */
	const char *type, *verdict;
};

static const char *const verdicts[] = { "unspecified", "match", "drift", "unknown", "learned" };

static void usage(FILE *f, const char *cmd)
{
	if (!strcmp(cmd, "nodes"))
		fprintf(f, "usage: dratopo nodes --coordinator ADDR [TLS options] [-o table|json|yaml]\n"
			   "                     [--type TYPE] [--verdict match|drift|unknown|learned]\n\n"
			   "The nodes a running coordinator knows: instance type, its verdict on the\n"
			   "last report (with the differences for a drift), when that report came,\n"
			   "and whether planning may use the node (and why not).\n"
			   "-o yaml prints the remedies instead, for `kubectl apply -f -`: a\n"
			   "DeviceTaintRule per affected device of every drifted node, and as\n"
			   "comments the Node taint of unfit nodes and the kubectl commands that\n"
			   "lift the remedies of nodes that match again.\n\n");
	else
		fprintf(f, "usage: dratopo types --coordinator ADDR [TLS options] [-o table|json]\n\n"
			   "Per instance type: nodes, how many match or drift, the most common live\n"
			   "shape, and whether hwdb knows the type, it was learned, its nodes\n"
			   "disagree (conflict), or hwdb's entry looks wrong (most nodes drift the\n"
			   "same way).\n\n");
	fprintf(f, "options:\n%s"
		   "  -o, --output FORMAT     table (default) or json\n"
		   "  -h, --help              this help\n", cli_remote_help);
}

/* 0, or the exit code (usage printed). */
static int parse(int argc, char **argv, struct query_opts *o, bool *help)
{
	const char *cmd = argv[0];

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], **val = NULL;
		int r = cli_remote_take(&o->remote, argc, argv, &i);

		if (r > 0)
			continue;
		if (r < 0 || (a[0] == '-' && i + 1 >= argc && strcmp(a, "-h") && strcmp(a, "--help"))) {
			fprintf(stderr, "dratopo %s: option '%s' needs a value\n\n", cmd, a);
			goto usage;
		}
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			*help = true;
			return 0;
		}
		if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
			a = argv[++i];
			if (strcmp(a, "json") && strcmp(a, "table") &&
			    (strcmp(cmd, "nodes") || strcmp(a, "yaml"))) {
				fprintf(stderr, "dratopo %s: unknown output format '%s' (table%s or "
					"json)\n", cmd, a, strcmp(cmd, "nodes") ? "" : ", yaml");
				return CLI_EXIT_USAGE;
			}
			o->json = !strcmp(a, "json");
			o->yaml = !strcmp(a, "yaml");
			continue;
		}
		if (!strcmp(cmd, "nodes") && !strcmp(a, "--type"))
			val = &o->type;
		else if (!strcmp(cmd, "nodes") && !strcmp(a, "--verdict"))
			val = &o->verdict;
		if (!val) {
			fprintf(stderr, "dratopo %s: unexpected argument '%s'\n\n", cmd, a);
			goto usage;
		}
		*val = argv[++i];
	}
	if (!o->remote.addr) {
		fprintf(stderr, "dratopo %s: --coordinator ADDR is required\n\n", cmd);
		goto usage;
	}
	return 0;
usage:
	usage(stderr, cmd);
	return CLI_EXIT_USAGE;
}

static int flush_out(const char *cmd, struct strbuf *sb)
{
	int rc = CLI_EXIT_OK;

	if (sb_error(sb)) {
		fprintf(stderr, "dratopo %s: out of memory\n", cmd);
		rc = CLI_EXIT_FAIL;
	} else if (fwrite(sb_str(sb), 1, sb->len, stdout) != sb->len || fflush(stdout)) {
		perror("dratopo: stdout");
		rc = CLI_EXIT_FAIL;
	}
	sb_free(sb);
	return rc;
}

/* nodes -o yaml: the coordinator's remedies, as it wrote them. */
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
	sb_puts(&sb, r->yaml);
	protobuf_c_message_free_unpacked(resp, NULL);
	return flush_out("nodes", &sb);
}

/* ---- nodes ---- */

/* top (built in a by fleet_doc, NULL when that ran out of memory) as
 * JSON; frees a. */
static int emit_json(struct doc_arena *a, struct doc_node *top, struct strbuf *sb)
{
	int rc = top ? doc_emit_json(top, 2, sb) : -1;

	sb_putc(sb, '\n');
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
	bool help = false;
	int rc = parse(argc, argv, &o, &help);

	if (rc || help)
		return help ? (usage(stdout, "nodes"), CLI_EXIT_OK) : rc;
	if (o.yaml)
		return remedies(&o);
	if (o.type)
		req.instance_type = (char *)o.type;
	if (o.verdict) {
		for (size_t v = 1; v < sizeof(verdicts) / sizeof(verdicts[0]); v++)
			if (!strcmp(o.verdict, verdicts[v]))
				req.verdict = (Dratopo__V1__Verdict)v;
		if (!req.verdict) {
			fprintf(stderr, "dratopo nodes: --verdict: '%s' is not match, drift, unknown or "
				"learned\n", o.verdict);
			return CLI_EXIT_USAGE;
		}
	}
	rc = cli_remote_call(&o.remote, "nodes", "/dratopo.v1.Fleet/ListNodes", &req.base,
			     &dratopo__v1__list_nodes_response__descriptor, QUERY_DEADLINE_MS, &resp);
	if (rc)
		return rc;
	if (o.json) {
		const Dratopo__V1__ListNodesResponse *r = (const void *)resp;
		struct doc_arena *a = doc_arena_new();

		emit_json(a, a ? fleet_doc_nodes(a, r->nodes, r->n_nodes) : NULL, &sb);
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
	bool help = false;
	int rc = parse(argc, argv, &o, &help);

	if (rc || help)
		return help ? (usage(stdout, "types"), CLI_EXIT_OK) : rc;
	rc = cli_remote_call(&o.remote, "types", "/dratopo.v1.Fleet/ListTypes", &req.base,
			     &dratopo__v1__list_types_response__descriptor, QUERY_DEADLINE_MS, &resp);
	if (rc)
		return rc;
	if (o.json) {
		const Dratopo__V1__ListTypesResponse *r = (const void *)resp;
		struct doc_arena *a = doc_arena_new();

		emit_json(a, a ? fleet_doc_types(a, r->types, r->n_types) : NULL, &sb);
	}
	else
		types_table((const void *)resp, &sb);
	protobuf_c_message_free_unpacked(resp, NULL);
	return flush_out("types", &sb);
}
