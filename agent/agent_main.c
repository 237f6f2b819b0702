/* agent_main.c - the dratopo-agent command: probe, verify and slices.
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
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent_report.h"
#include "agent_run.h"
#include "doc.h"
#include "draw.h"
#include "hwdb.h"
#include "probe.h"
#include "topo_slices.h"
#include "strbuf.h"
#include "topo.h"
#include "topo_verify.h"

#define EXIT_USAGE 2
#define EXIT_DRIFT 4
#define EXIT_UNKNOWN_TYPE 5

static const char usage_text[] =
	"usage: dratopo-agent COMMAND [options]\n"
	"\n"
	"Commands:\n"
	"  probe    print the node's GPUs and EFAs grouped by PCIe root\n"
	"  verify   compare the node with hwdb's entry for its instance type\n"
	"           (exit 4: drift; exit 5: unknown type, proposed hwdb entry on stdout)\n"
	"  slices   print the ResourceSlices the NVIDIA driver and DRANET would publish\n"
	"  run      report to a coordinator at start, every interval and on change\n"
	"           (dratopo-agent run --help)\n"
	"\n"
	"Options:\n"
	"  --sysfs-root DIR          read DIR/sys instead of /sys\n"
	"  --instance-type T         assume type T instead of the DMI product name\n"
	"  --hwdb-extra FILE         add or override hwdb entries (verify, slices, probe -o svg)\n"
	"  --node-name N             node name for the slices (default $NODE_NAME, hostname)\n"
	"  --consumable-capacity M   disabled, N, memory or unlimited (slices)\n"
	"  -o FORMAT                 probe: text|json|yaml|svg (a picture, drift drawn against\n"
	"                            hwdb); verify: text|json; slices: yaml|json\n";

struct args {
	const char *cmd;
	const char *root;
	const char *instance_type;
	const char *hwdb_extra;
	const char *node_name;
	const char *cc;
	const char *output;
};

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "dratopo-agent: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n%s", usage_text);
	return EXIT_USAGE;
}

static int parse_args(int argc, char **argv, struct args *a)
{
	static const struct option opts[] = {
		{ "sysfs-root", required_argument, NULL, 'r' },
		{ "instance-type", required_argument, NULL, 't' },
		{ "hwdb-extra", required_argument, NULL, 'x' },
		{ "node-name", required_argument, NULL, 'n' },
		{ "consumable-capacity", required_argument, NULL, 'c' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	a->root = "/";
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'r':
			a->root = optarg;
			break;
		case 't':
			a->instance_type = optarg;
			break;
		case 'x':
			a->hwdb_extra = optarg;
			break;
		case 'n':
			a->node_name = optarg;
			break;
		case 'c':
			a->cc = optarg;
			break;
		case 'o':
			a->output = optarg;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return -1;
		case ':':
			return usage_error("option %s needs a value", argv[optind - 1]);
		default:
			return usage_error("unknown option %s", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error("unexpected argument %s", argv[optind]);
	if (!*a->root)
		return usage_error("%s", "--sysfs-root must not be empty");
	return 0;
}

/* Pick a format among the allowed ones (NULL-terminated, first is the
 * default). Returns its index or -1. */
static int pick_format(const char *given, const char *const *allowed)
{
	if (!given)
		return 0;
	for (int i = 0; allowed[i]; i++)
		if (strcmp(given, allowed[i]) == 0)
			return i;
	return -1;
}

static void print_warnings(const struct dt_diags *w)
{
	for (size_t i = 0; i < w->n; i++)
		fprintf(stderr, "warning: %s\n", w->msgs[i]);
	if (w->dropped)
		fprintf(stderr, "warning: %zu more warnings not shown\n", w->dropped);
}

static int write_out(struct strbuf *sb)
{
	if (sb_error(sb)) {
		fprintf(stderr, "dratopo-agent: out of memory\n");
		return 1;
	}
	if (fwrite(sb_str(sb), 1, sb->len, stdout) != sb->len || fflush(stdout) != 0) {
		fprintf(stderr, "dratopo-agent: cannot write the output: %s\n", strerror(errno));
		return 1;
	}
	return 0;
}

static int emit_doc(const struct doc_node *n, int json, struct strbuf *sb)
{
	if (!n)
		return -ENOMEM;
	if (json) {
		int rc = doc_emit_json(n, 2, sb);

		sb_putc(sb, '\n');
		return rc;
	}
	return doc_emit_yaml(n, sb);
}

static int load_extra(const struct args *a)
{
	struct dt_err err = { 0 };

	if (!a->hwdb_extra)
		return 0;
	if (hwdb_load_extra(a->hwdb_extra, &err)) {
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
	static const char *const formats[] = { "text", "json", "yaml", "svg", NULL };
	struct topo t;
	struct strbuf sb = STRBUF_INIT;
	struct doc_arena *arena = NULL;
	int fmt = pick_format(a->output, formats), rc;

	if (fmt < 0)
		return usage_error("probe: unknown output format %s (text, json, yaml, svg)",
				   a->output);
	if (probe_or_fail(a, &t))
		return 1;
	if (fmt == 0) {
		rc = topo_emit_text(&t, &sb);
	} else if (fmt == 3) {
		rc = load_extra(a) ? -EINVAL : probe_svg(&t, &sb);
	} else {
		arena = doc_arena_new();
		rc = arena ? emit_doc(topo_to_doc(&t, arena), fmt == 1, &sb) : -ENOMEM;
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
			 int json, struct strbuf *sb)
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
			rc = emit_doc(top, 1, sb);
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
	static const char *const formats[] = { "text", "json", NULL };
	struct topo_verify_result r;
	struct topo t;
	struct strbuf sb = STRBUF_INIT;
	struct dt_err err = { 0 };
	int fmt = pick_format(a->output, formats), rc;

	if (fmt < 0)
		return usage_error("verify: unknown output format %s (text, json)", a->output);
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
		rc = verify_report(&t, &r, fmt == 1, &sb);
	topo_verify_result_free(&r);
	topo_free(&t);
	sb_free(&sb);
	return rc;
}

static int cmd_slices(const struct args *a)
{
	static const char *const formats[] = { "yaml", "json", NULL };
	struct hwdb_cc_mode mode = { HWDB_CC_DISABLED, 0 };
	struct topo t;
	struct strbuf sb = STRBUF_INIT;
	struct dt_diags w;
	struct dt_err err = { 0 };
	char host[256];
	const char *node;
	int fmt = pick_format(a->output, formats), rc;

	if (fmt < 0)
		return usage_error("slices: unknown output format %s (yaml, json)", a->output);
	if (a->cc && hwdb_cc_parse(a->cc, &mode, &err)) {
		fprintf(stderr, "dratopo-agent: --consumable-capacity: %s\n", err.msg);
		return EXIT_USAGE;
	}
	if (!(node = agent_node_name(a->node_name, host, sizeof(host), &err))) {
		fprintf(stderr, "dratopo-agent: %s\n", err.msg);
		return EXIT_USAGE;
	}
	if (load_extra(a) || probe_or_fail(a, &t))
		return 1;
	dt_diags_init(&w);
	rc = topo_slices_emit(&t, &mode, node, fmt == 1 ? DOC_FORMAT_JSON : DOC_FORMAT_YAML, &sb,
			       &w, &err);
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

int main(int argc, char **argv)
{
	struct args a = { 0 };
	int rc;

	if (argc < 2)
		return usage_error("%s", "a command is needed");
	a.cmd = argv[1];
	if (strcmp(a.cmd, "-h") == 0 || strcmp(a.cmd, "--help") == 0 ||
	    strcmp(a.cmd, "help") == 0) {
		fputs(usage_text, stdout);
		return 0;
	}
	if (strcmp(a.cmd, "run") == 0)
		return agent_run(argc - 1, argv + 1);
	if (strcmp(a.cmd, "probe") && strcmp(a.cmd, "verify") && strcmp(a.cmd, "slices"))
		return usage_error("unknown command %s", a.cmd);
	rc = parse_args(argc - 1, argv + 1, &a);
	if (rc)
		return rc < 0 ? 0 : rc;
	if (strcmp(a.cmd, "probe") == 0)
		return cmd_probe(&a);
	if (strcmp(a.cmd, "verify") == 0)
		return cmd_verify(&a);
	return cmd_slices(&a);
}
