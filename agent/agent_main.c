/* agent_main.c - the dratopo-agent command: probe, verify and slices, and
 * `run`, which it hands to the program beside it (dratopo-agent-run) so
 * that these one-shot commands never load gRPC or OpenSSL.
 *
 *   dratopo-agent probe  [--sysfs-root DIR] [--instance-type T] [-o text|json|yaml|svg]
 *   dratopo-agent verify [--sysfs-root DIR] [--instance-type T] [--hwdb-extra FILE]
 *                        [-o text|json]
 *   dratopo-agent slices [--sysfs-root DIR] [--instance-type T] [--hwdb-extra FILE]
 *                        [--node-name N] [--consumable-capacity MODE] [-o yaml|json]
 *
 * Exit codes (../shared/design.md): 0 success, 1 runtime failure, 2 usage;
 * verify: 4 drift, 5 the type is unknown to hwdb (a proposed entry on
 * stdout). Warnings about the host go to stderr, one per line. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "agent_node.h"
#include "doc.h"
#include "draw.h"
#include "hwdb.h"
#include "opts.h"
#include "probe.h"
#include "topo_slices.h"
#include "strbuf.h"
#include "topo.h"
#include "topo_verify.h"

#define EXIT_DRIFT 4
#define EXIT_UNKNOWN_TYPE 5

struct args {
	const char *root;
	const char *instance_type;
	struct opts_list extras;        /* --hwdb-extra */
	const char *node_name;
	const char *cc;
	int output;                     /* the index in the command's -o choices */
	bool compact;
};

/* The rows probe, verify and slices share. */
#define ROOT_OPT                                                                \
	{ .name = "sysfs-root", .type = OPT_STR, .arg = "DIR",                  \
	  .at = OPTS_AT(struct args, root), .help = "read DIR/sys instead of /sys" }
#define TYPE_OPT                                                                \
	{ .name = "instance-type", .type = OPT_STR, .arg = "T",                 \
	  .at = OPTS_AT(struct args, instance_type),                            \
	  .help = "assume type T instead of the DMI product name" }
#define EXTRA_OPT(what)                                                         \
	{ .name = "hwdb-extra", .type = OPT_LIST, .arg = "FILE",                \
	  .at = OPTS_AT(struct args, extras),                                   \
	  .help = "add or override hwdb entries" what " (repeatable)" }

enum { PROBE_TEXT, PROBE_JSON, PROBE_YAML, PROBE_SVG };

static const struct opt probe_opts[] = {
	ROOT_OPT,
	TYPE_OPT,
	EXTRA_OPT(" (for -o svg)"),
	{ .name = "output", .key = 'o', .type = OPT_CHOICE, .arg = "FORMAT",
	  .choices = "text|json|yaml|svg", .at = OPTS_AT(struct args, output),
	  .help = "text (default), json, yaml, or svg (a picture, drift\n"
		  "drawn against hwdb)" },
	OPTS_COMPACT(struct args, compact),
	{ 0 }
};

enum { VERIFY_TEXT, VERIFY_JSON };

static const struct opt verify_opts[] = {
	ROOT_OPT,
	TYPE_OPT,
	EXTRA_OPT(""),
	{ .name = "output", .key = 'o', .type = OPT_CHOICE, .arg = "FORMAT", .choices = "text|json",
	  .at = OPTS_AT(struct args, output), .help = "text (default) or json" },
	OPTS_COMPACT(struct args, compact),
	{ 0 }
};

enum { SLICES_YAML, SLICES_JSON };

static const struct opt slices_opts[] = {
	ROOT_OPT,
	TYPE_OPT,
	EXTRA_OPT(""),
	{ .name = "node-name", .type = OPT_STR, .arg = "N", .at = OPTS_AT(struct args, node_name),
	  .help = "node name for the slices (default $NODE_NAME, else\nthe host name)" },
	{ .name = "consumable-capacity", .type = OPT_STR, .arg = "M", .at = OPTS_AT(struct args, cc),
	  .help = "disabled (default), N, memory or unlimited" },
	{ .name = "output", .key = 'o', .type = OPT_CHOICE, .arg = "FORMAT", .choices = "yaml|json",
	  .at = OPTS_AT(struct args, output), .help = "yaml (default) or json" },
	OPTS_COMPACT(struct args, compact),
	{ 0 }
};

static const struct opts_cmd probe_cmd = {
	.prog = "dratopo-agent probe",
	.synopsis = "dratopo-agent probe [--sysfs-root DIR] [--instance-type T]\n"
		    "                           [--hwdb-extra FILE]... [-o text|json|yaml|svg]\n"
		    "                           [--compact]",
	.about = "The node's NVIDIA GPUs and EFAs, grouped by the PCIe root each sits under, as\n"
		 "sysfs shows them.",
	.opts = probe_opts,
	.epilog = "Exit codes: 0 printed, 1 sysfs cannot be read, 2 usage error.",
};

static const struct opts_cmd verify_cmd = {
	.prog = "dratopo-agent verify",
	.synopsis = "dratopo-agent verify [--sysfs-root DIR] [--instance-type T]\n"
		    "                            [--hwdb-extra FILE]... [-o text|json] [--compact]",
	.about = "The node against hwdb's entry for its instance type: GPUs, EFAs, their models\n"
		 "and their grouping by PCIe root.",
	.opts = verify_opts,
	.epilog = "Exit codes: 0 match, 1 failure, 2 usage error, 4 drift (each difference\n"
		  "listed), 5 the type is unknown to hwdb (a proposed entry, learned from this\n"
		  "node, on stdout in hwdb's source format).",
};

static const struct opts_cmd slices_cmd = {
	.prog = "dratopo-agent slices",
	.synopsis = "dratopo-agent slices [--sysfs-root DIR] [--instance-type T]\n"
		    "                            [--hwdb-extra FILE]... [--node-name N]\n"
		    "                            [--consumable-capacity M] [-o yaml|json] [--compact]",
	.about = "The ResourceSlices the NVIDIA GPU driver and DRANET would publish on this node,\n"
		 "from its probed devices.",
	.opts = slices_opts,
	.epilog = "Exit codes: 0 printed, 1 failure, 2 usage error.",
};

/* false to go on with the command; true and *rc when it ends here. */
static bool parse(const struct opts_cmd *c, int argc, char **argv, struct args *a, int *rc)
{
	a->root = "/";
	if (opts_parse(c, argc, argv, a, rc))
		return true;
	if (!*a->root)
		*rc = opts_usage_error(c, "--sysfs-root must not be empty");
	else if (a->compact && !(c->opts == probe_opts ? a->output == PROBE_JSON
				 : c->opts == verify_opts ? a->output == VERIFY_JSON
				 : a->output == SLICES_JSON))
		*rc = opts_usage_error(c, "--compact goes with -o json");
	return *rc != 0;
}

static void print_warnings(const struct dt_diags *w)
{
	opts_print_diags(stderr, "dratopo-agent", "warning: ", "warnings", w);
}

static int write_out(struct strbuf *sb)
{
	return opts_write_out("dratopo-agent", sb);
}

/* n as JSON (compact: on one line) or YAML. */
static int emit_doc(const struct doc_node *n, int json, bool compact, struct strbuf *sb)
{
	if (!n)
		return -ENOMEM;
	if (json)
		return doc_emit_json(n, DOC_JSON_OUTPUT(compact), sb);
	return doc_emit_yaml(n, sb);
}

static int load_extra(const struct args *a)
{
	struct dt_err err = { 0 };

	for (size_t i = 0; i < a->extras.n; i++)
		if (hwdb_load_extra(a->extras.v[i], &err)) {
			fprintf(stderr, "dratopo-agent: %s\n", err.msg);
			return 1;
		}
	return 0;
}

static int probe_or_fail(const struct args *a, struct topo *t)
{
	struct probe_options po = { a->instance_type };
	struct dt_err err = { 0 };

	if (probe_run(a->root, &po, t, &err)) {
		fprintf(stderr, "dratopo-agent: %s\n", err.msg);
		return 1;
	}
	print_warnings(&t->warnings);
	return 0;
}

/* probe -o svg: the node drawn against hwdb's entry (drift where it is),
 * verify's verdict and differences under it. */
static int probe_svg(const struct topo *t, struct strbuf *sb)
{
	const struct hwdb_type *e = t->instance_type ? hwdb_lookup(t->instance_type) : NULL;
	struct topo_verify_result vr = { 0 };
	struct draw_picture pic = { 0 };
	struct dt_err err = { 0 };
	const char **lines = NULL;
	char verdict[160];
	int rc = e ? topo_verify_entry(t, e, &vr, &err) : 0;

	if (!rc)
		rc = draw_node(t, e, NULL, &pic, &err);
	if (!rc && (lines = calloc(vr.differences.n + 1, sizeof(*lines)))) {
		snprintf(verdict, sizeof(verdict), !e ? "%s: not in hwdb, drawn as probed"
			 : vr.verdict == TOPO_MATCH ? "%s: match: as hwdb says"
			 : "%s: drift from hwdb:", t->instance_type ? t->instance_type : "unknown type");
		lines[0] = verdict;
		for (size_t i = 0; i < vr.differences.n; i++)
			lines[i + 1] = vr.differences.msgs[i];
		rc = draw_svg(&pic, &(struct draw_svg_opts){ .standalone = true, .caption = lines,
							     .n_caption = vr.differences.n + 1 }, sb);
	} else if (!rc) {
		rc = -ENOMEM;
	}
	draw_picture_free(&pic);
	free(lines);
	topo_verify_result_free(&vr);
	return rc;
}

static int cmd_probe(const struct args *a)
{
	struct topo t;
	struct strbuf sb = STRBUF_INIT;
	struct doc_arena *arena = NULL;
	int rc;

	if (probe_or_fail(a, &t))
		return 1;
	if (a->output == PROBE_TEXT) {
		rc = topo_emit_text(&t, &sb);
	} else if (a->output == PROBE_SVG) {
		rc = load_extra(a) ? -EINVAL : probe_svg(&t, &sb);
	} else {
		arena = doc_arena_new();
		rc = arena ? emit_doc(topo_to_doc(&t, arena), a->output == PROBE_JSON, a->compact,
				      &sb) : -ENOMEM;
	}
	rc = rc ? (fprintf(stderr, "dratopo-agent: cannot print the topology\n"), 1)
		: write_out(&sb);
	doc_arena_free(arena);
	sb_free(&sb);
	topo_free(&t);
	return rc;
}

static int verify_unknown(const struct topo *t, const char *type_name,
			  struct strbuf *sb)
{
	struct topo_learned learned;
	struct dt_diags w;
	struct dt_err err = { 0 };
	const struct hwdb_type *one;
	int rc;

	dt_diags_init(&w);
	rc = topo_learn(t, type_name, &learned, &w, &err);
	print_warnings(&w);
	dt_diags_free(&w);
	if (rc) {
		fprintf(stderr, "dratopo-agent: %s\n", err.msg);
		return 1;
	}
	one = &learned.type;
	fprintf(stderr, "%s: unknown to hwdb; a proposed entry learned from this node is on "
		"stdout (save it and pass it with --hwdb-extra)\n", type_name);
	rc = hwdb_file_write_yaml(&one, 1, sb);
	topo_learned_free(&learned);
	if (rc) {
		fprintf(stderr, "dratopo-agent: cannot write the proposed entry\n");
		return 1;
	}
	rc = write_out(sb);
	return rc ? rc : EXIT_UNKNOWN_TYPE;
}

static int verify_report(const struct topo *t, const struct topo_verify_result *r,
			 int json, bool compact, struct strbuf *sb)
{
	const struct dt_diags *d = &r->differences;

	if (json) {
		struct doc_arena *arena = doc_arena_new();
		struct doc_node *top = arena ? doc_new_map(arena) : NULL;
		struct doc_node *seq = arena ? doc_new_seq(arena) : NULL;
		int rc = top && seq ? 0 : -ENOMEM;

		for (size_t i = 0; !rc && i < d->n; i++)
			rc = doc_seq_push(arena, seq, doc_new_string(arena, d->msgs[i]));
		if (!rc)
			rc = doc_map_set(arena, top, "instanceType",
					 doc_new_string(arena, r->instance_type)) ||
			     doc_map_set(arena, top, "verdict",
					 doc_new_string(arena, topo_verdict_name(r->verdict))) ||
			     doc_map_set(arena, top, "gpus", doc_new_int(arena, (int64_t)t->n_gpus)) ||
			     doc_map_set(arena, top, "efas", doc_new_int(arena, (int64_t)t->n_efas)) ||
			     doc_map_set(arena, top, "differences", seq);
		if (!rc)
			rc = emit_doc(top, 1, compact, sb);
		doc_arena_free(arena);
		if (rc) {
			fprintf(stderr, "dratopo-agent: cannot print the verdict\n");
			return 1;
		}
	} else if (r->verdict == TOPO_MATCH) {
		sb_printf(sb, "%s: match: %zu GPUs, %zu EFAs on %zu PCIe roots, as hwdb says\n",
			  r->instance_type, t->n_gpus, t->n_efas, t->n_roots);
	} else {
		sb_printf(sb, "%s: drift: %zu difference%s from hwdb\n", r->instance_type,
			  dt_diags_count(d), dt_diags_count(d) == 1 ? "" : "s");
		for (size_t i = 0; i < d->n; i++)
			sb_printf(sb, "  - %s\n", d->msgs[i]);
	}
	if (write_out(sb))
		return 1;
	return r->verdict == TOPO_MATCH ? 0 : EXIT_DRIFT;
}

static int cmd_verify(const struct args *a)
{
	struct topo_verify_result r;
	struct topo t;
	struct strbuf sb = STRBUF_INIT;
	struct dt_err err = { 0 };
	int rc;

	if (load_extra(a) || probe_or_fail(a, &t))
		return 1;
	if (topo_verify(&t, a->instance_type, &r, &err)) {
		fprintf(stderr, "dratopo-agent: %s\n", err.msg);
		topo_free(&t);
		return 1;
	}
	if (r.verdict == TOPO_UNKNOWN_TYPE)
		rc = verify_unknown(&t, r.instance_type, &sb);
	else
		rc = verify_report(&t, &r, a->output == VERIFY_JSON, a->compact, &sb);
	topo_verify_result_free(&r);
	topo_free(&t);
	sb_free(&sb);
	return rc;
}

static int cmd_slices(const struct args *a)
{
	struct hwdb_cc_mode mode = { HWDB_CC_DISABLED, 0 };
	struct topo t;
	struct strbuf sb = STRBUF_INIT;
	struct dt_diags w;
	struct dt_err err = { 0 };
	char host[256];
	const char *node;
	int rc;

	if (a->cc && hwdb_cc_parse(a->cc, &mode, &err))
		return opts_usage_error(&slices_cmd, "--consumable-capacity: %s", err.msg);
	if (!(node = agent_node_name(a->node_name, host, sizeof(host), &err)))
		return opts_usage_error(&slices_cmd, "%s", err.msg);
	if (load_extra(a) || probe_or_fail(a, &t))
		return 1;
	dt_diags_init(&w);
	rc = topo_slices_emit(&t, &mode, node, a->output == SLICES_JSON ? DOC_FORMAT_JSON
			      : DOC_FORMAT_YAML, a->compact, &sb, &w, &err);
	print_warnings(&w);
	if (rc)
		fprintf(stderr, "dratopo-agent: %s\n", err.msg);
	else
		rc = write_out(&sb);
	dt_diags_free(&w);
	sb_free(&sb);
	topo_free(&t);
	return rc ? 1 : 0;
}

/* `run` is dratopo-agent-run, beside this program: the directory of the
 * path this process was started by (AT_EXECFN, from the kernel: no file
 * is read to find it). argv[0] is "run"; its options pass on unchanged, to
 * be read there by the same grammar. */
static int exec_run(int argc, char **argv)
{
	const char *self = (const char *)getauxval(AT_EXECFN);
	const char *slash = self ? strrchr(self, '/') : NULL;
	char path[4096];

	(void)argc;
	if (slash)
		snprintf(path, sizeof(path), "%.*s/dratopo-agent-run", (int)(slash - self), self);
	else
		snprintf(path, sizeof(path), "dratopo-agent-run");
	argv[0] = path;
	execv(path, argv);
	fprintf(stderr, "dratopo-agent: run: cannot start %s: %s (dratopo-agent-run is installed "
		"beside dratopo-agent)\n", path, strerror(errno));
	return 1;
}

/* Parse, run, free. */
static int run(const struct opts_cmd *c, int (*cmd)(const struct args *), int argc, char **argv)
{
	struct args a = { 0 };
	int rc;

	if (!parse(c, argc, argv, &a, &rc))
		rc = cmd(&a);
	opts_free(c, &a);
	return rc;
}

static int probe_main(int argc, char **argv)
{
	return run(&probe_cmd, cmd_probe, argc, argv);
}

static int verify_main(int argc, char **argv)
{
	return run(&verify_cmd, cmd_verify, argc, argv);
}

static int slices_main(int argc, char **argv)
{
	return run(&slices_cmd, cmd_slices, argc, argv);
}

int main(int argc, char **argv)
{
	static const struct opts_sub commands[] = {
		{ "probe", probe_main, "print the node's GPUs and EFAs grouped by PCIe root" },
		{ "verify", verify_main, "compare the node with hwdb's entry for its instance type\n"
					 "(exit 4: drift; exit 5: unknown type, proposed hwdb\n"
					 "entry on stdout)" },
		{ "slices", slices_main, "print the ResourceSlices the NVIDIA driver and DRANET\n"
					 "would publish" },
		{ "run", exec_run, "report to a coordinator at start, every interval and on\n"
				   "change (dratopo-agent-run, installed beside)" },
	};
	static const struct opts_prog agent = {
		.prog = "dratopo-agent",
		.about = "The node agent: reads the PCIe topology from sysfs, checks it against hwdb,\n"
			 "and reports it to the coordinator.",
		.subs = commands, .n_subs = sizeof(commands) / sizeof(commands[0]),
		.version = DRATOPO_VERSION,
	};

	return opts_dispatch(&agent, argc, argv);
}
