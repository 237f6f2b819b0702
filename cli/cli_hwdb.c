/* cli_hwdb.c - `dratopo hwdb`: the instance types hwdb knows and the
 * ResourceSlices their drivers publish.
 *
 *   dratopo hwdb list [-o table|json] [--family F] [--efa] [--gpu] [--region R]
 *                     [--hwdb-extra FILE]...
 *   dratopo hwdb show TYPE [-o yaml|json|svg] [--consumable-capacity MODE]
 *                     [--mig LAYOUT] [--node NAME] [--hwdb-extra FILE]...
 *   dratopo hwdb export [TYPE...] [--hwdb-extra FILE]...
 *   show and export TYPE also take --coordinator ADDR: the coordinator's entry.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_remote.h"
#include "dratopo/v1/fleet.pb-c.h"
#include "doc.h"
#include "draw.h"
#include "hwdb.h"
#include "hwdb_mig.h"
#include "model.h"
#include "opts.h"
#include "strbuf.h"

/* -o: list's table|json, show's yaml|json|svg (json is 1 in both). */
enum { OUT_JSON = 1, SHOW_SVG = 2 };

struct opts {
	int output;                     /* list: table, json; show: yaml, json, svg */
	bool compact;
	const char *family;
	const char *region;             /* list: price column and filter */
	bool efa, gpu;                  /* list: only types with EFAs / GPUs */
	const char *cc;
	const char *mig;
	const char *node;
	struct opts_list extras;
	struct opts_list names;         /* the TYPE operands */
	struct cli_remote remote;       /* show/export --coordinator: the live entry */
	const char *remote_source;      /* its source as the coordinator names it */
};

#define HWDB_EXTRA_OPT                                                          \
	{ .name = "hwdb-extra", .type = OPT_LIST, .arg = "FILE",                \
	  .at = OPTS_AT(struct opts, extras),                                   \
	  .help = "add or override instance types from FILE (repeatable)" }

static const struct opt list_opts[] = {
	{ .name = "output", .key = 'o', .type = OPT_CHOICE, .arg = "FORMAT", .choices = "table|json",
	  .at = OPTS_AT(struct opts, output), .help = "table (default) or json" },
	OPTS_COMPACT(struct opts, compact),
	{ .name = "family", .type = OPT_STR, .arg = "FAMILY", .at = OPTS_AT(struct opts, family),
	  .help = "only that family (p5, g6e, ...)" },
	{ .name = "efa", .type = OPT_FLAG, .at = OPTS_AT(struct opts, efa),
	  .help = "only types with EFAs" },
	{ .name = "gpu", .type = OPT_FLAG, .at = OPTS_AT(struct opts, gpu),
	  .help = "only types with NVIDIA GPUs" },
	{ .name = "region", .type = OPT_STR, .arg = "REGION", .at = OPTS_AT(struct opts, region),
	  .help = "prices in REGION (default us-east-1); only types\nwith a price there" },
	HWDB_EXTRA_OPT,
	{ 0 }
};

static const struct opt show_opts[] = {
	{ .name = "output", .key = 'o', .type = OPT_CHOICE, .arg = "FORMAT",
	  .choices = "yaml|json|svg", .at = OPTS_AT(struct opts, output),
	  .help = "yaml (default), json (with the type's facts), or svg\n"
		  "(the type's PCIe topology drawn: NUMA nodes, roots,\n"
		  "GPUs and EFAs, as hwdb has it)" },
	OPTS_COMPACT(struct opts, compact),
	{ .name = "consumable-capacity", .type = OPT_STR, .arg = "MODE",
	  .at = OPTS_AT(struct opts, cc),
	  .help = "the NVIDIA driver's GPU sharing: disabled, memory,\n"
		  "unlimited, or a number of shares N (default disabled)" },
	{ .name = "mig", .type = OPT_STR, .arg = "LAYOUT", .at = OPTS_AT(struct opts, mig),
	  .help = "the GPUs' MIG partitioning: dynamic (every placement,\n"
		  "drawing on per-GPU counters), all-PROFILE,\n"
		  "PROFILE,PROFILE,... (every GPU), or one such entry per\n"
		  "GPU separated by ';' (disabled: that GPU stays whole)" },
	{ .name = "node", .type = OPT_STR, .arg = "NAME", .at = OPTS_AT(struct opts, node),
	  .help = "node (and pool) name of the slices (default: TYPE)" },
	HWDB_EXTRA_OPT,
	CLI_REMOTE_OPTS(struct opts, remote),
	{ 0 }
};

static const struct opt export_opts[] = {
	HWDB_EXTRA_OPT,
	CLI_REMOTE_OPTS(struct opts, remote),
	{ 0 }
};

static const struct opts_cmd list_cmd = {
	.prog = "dratopo hwdb list",
	.synopsis = "dratopo hwdb list [-o table|json] [--compact] [--family FAMILY] [--efa] [--gpu]\n"
		    "                         [--region REGION] [--hwdb-extra FILE]...",
	.about = "The known EC2 GPU and EFA instance types, cheapest first (no on-demand price\n"
		 "last).\n\n"
		 "VCPU, MEMORY or ARCH '?': no source has them (the type cannot be planned until\n"
		 "--hwdb-extra or a fleet gives them); ROOTS '?': PCIe grouping unknown; GPU\n"
		 "'NAME*': accelerators hwdb names but does not model (Trainium, Inferentia).",
	.opts = list_opts,
};

static const struct opts_cmd show_cmd = {
	.prog = "dratopo hwdb show",
	.synopsis = "dratopo hwdb show TYPE [-o yaml|json|svg] [--compact]\n"
		    "                         [--consumable-capacity MODE] [--mig LAYOUT]\n"
		    "                         [--node NAME] [--hwdb-extra FILE]...\n"
		    "                         [--coordinator ADDR [TLS options]]",
	.about = "The resource.k8s.io/v1 ResourceSlices the NVIDIA GPU driver (gpu.nvidia.com)\n"
		 "and DRANET (dra.net) publish on a node of TYPE; -o json adds the type's facts:\n"
		 "{\"instanceType\": {...}, \"resourceSlices\": [...]}.",
	.opts = show_opts,
	.epilog = "--coordinator: the coordinator's effective entry for TYPE (hwdb's, or the one\n"
		  "it learned from its fleet).\n\n" CLI_REMOTE_NOTE,
	.operands = OPTS_AT(struct opts, names),
	.max_operands = 1,
	.operand_hint = "one instance type",
};

static const struct opts_cmd export_cmd = {
	.prog = "dratopo hwdb export",
	.synopsis = "dratopo hwdb export [TYPE...] [--hwdb-extra FILE]...\n"
		    "                           [--coordinator ADDR [TLS options]]",
	.about = "Entries in hwdb's source format, the format --hwdb-extra reads (every type\n"
		 "without TYPE).",
	.opts = export_opts,
	.epilog = "--coordinator: the coordinator's effective entry for TYPE (hwdb's, or the one\n"
		  "it learned from its fleet); export it, add onDemandPricePerHour, and give it\n"
		  "to plan --coordinator --hwdb-extra to launch a learned type.\n\n" CLI_REMOTE_NOTE,
	.operands = OPTS_AT(struct opts, names),
	.max_operands = SIZE_MAX,
};

static int load_extras(const struct opts *o)
{
	for (size_t i = 0; i < o->extras.n; i++) {
		struct dt_err err = { 0 };

		if (hwdb_load_extra(o->extras.v[i], &err)) {
			fprintf(stderr, "dratopo hwdb: %s\n", err.msg);
			return -1;
		}
	}
	return 0;
}

/* The type named, or NULL, told on stderr by the command c. */
static const struct hwdb_type *find_type(const struct opts_cmd *c, const char *name)
{
	const struct hwdb_type *t = hwdb_lookup(name);
	const char *hint;

	if (t)
		return t;
	hint = hwdb_suggest(name);
	if (hint)
		fprintf(stderr, "%s: unknown instance type '%s' (did you mean '%s'?)\n",
			c->prog, name, hint);
	else
		fprintf(stderr, "%s: unknown instance type '%s' (see 'dratopo hwdb list')\n",
			c->prog, name);
	return NULL;
}

/* ---- list ---- */

/* Column widths of the table: wide enough for every row shown. */
struct widths {
	int name, family, gpu;
};

/* A type's GPU column: its GPU model, or the accelerators hwdb names but
 * does not model, marked with '*'. */
static const char *gpu_column(const struct hwdb_type *t, char *buf, size_t len)
{
	if (t->gpu_model)
		return t->gpu_model;
	if (!t->accel_kind)
		return "-";
	snprintf(buf, len, "%s*", t->accel_kind);
	return buf;
}

static void table_row(struct strbuf *sb, const struct widths *w, const struct hwdb_type *t,
		      const char *region)
{
	size_t n_roots = hwdb_type_roots(t, NULL, 0);
	char mem[32], price[32], roots_s[16], vcpu[16], gpu[96];
	double p;

	/* "?": no source has the size; the planner cannot use the type */
	snprintf(vcpu, sizeof(vcpu), t->vcpu ? "%d" : "?", t->vcpu);
	if (t->memory_mib)
		snprintf(mem, sizeof(mem), "%lldGi", (long long)(t->memory_mib / 1024));
	else
		snprintf(mem, sizeof(mem), "?");
	if (hwdb_type_price(t, region, &p))
		snprintf(price, sizeof(price), "%.4f", p);
	else
		snprintf(price, sizeof(price), "-");
	/* "?": the topology of a type without scraped data is unknown */
	if (t->dra_metadata)
		snprintf(roots_s, sizeof(roots_s), "%zu", n_roots);
	else
		snprintf(roots_s, sizeof(roots_s), "?");
	sb_printf(sb, "%-*s  %-*s %5s %7s %-5s %4zu  %-*s %-9s %4zu %5s %10s\n", w->name, t->name,
		  w->family, t->family, vcpu, mem, t->arch ? t->arch : "?", t->n_gpus, w->gpu,
		  gpu_column(t, gpu, sizeof(gpu)),
		  t->n_gpus && t->gpus[0].memory ? t->gpus[0].memory : "-", t->n_efas, roots_s,
		  price);
}

static void table_widths(const struct hwdb_type *const *ts, size_t n_ts, struct widths *w)
{
	char buf[96];

	*w = (struct widths){ (int)strlen("NAME"), (int)strlen("FAMILY"), (int)strlen("GPU") };
	for (size_t i = 0; i < n_ts; i++) {
		const struct hwdb_type *t = ts[i];
		int n;

		if ((n = (int)strlen(t->name)) > w->name)
			w->name = n;
		if ((n = (int)strlen(t->family)) > w->family)
			w->family = n;
		if ((n = (int)strlen(gpu_column(t, buf, sizeof(buf)))) > w->gpu)
			w->gpu = n;
	}
}

/* Whether list shows t: every filter given holds. */
static bool shown(const struct opts *o, const struct hwdb_type *t)
{
	double p;

	return (!o->family || !strcmp(t->family, o->family)) && (!o->efa || t->n_efas) &&
	       (!o->gpu || t->n_gpus) && (!o->region || hwdb_type_price(t, o->region, &p));
}

/* The order of a list in a region: cheapest there first, no price last,
 * ties by name (hwdb's own order is us-east-1's). */
static const char *sort_region;

static int cmp_region_price(const void *a, const void *b)
{
	const struct hwdb_type *x = *(const struct hwdb_type *const *)a;
	const struct hwdb_type *y = *(const struct hwdb_type *const *)b;
	double px, py;
	bool hx = hwdb_type_price(x, sort_region, &px), hy = hwdb_type_price(y, sort_region, &py);

	if (hx != hy)
		return hx ? -1 : 1;
	if (hx && px != py)
		return px < py ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* The regions hwdb prices, for an error message. */
static void regions_text(struct strbuf *sb)
{
	for (size_t i = 0; hwdb_regions[i]; i++)
		sb_printf(sb, "%s%s", i ? ", " : "", hwdb_regions[i]);
}

static bool family_known(const char *family)
{
	for (size_t i = 0; i < hwdb_count(); i++)
		if (!strcmp(hwdb_at(i)->family, family))
			return true;
	return false;
}

static int cmd_list(const struct opts *o)
{
	bool json = o->output == OUT_JSON;
	struct strbuf sb = STRBUF_INIT;
	struct doc_arena *a = NULL;
	struct doc_node *root = NULL, *list = NULL;
	const struct hwdb_type **ts;
	size_t n_ts = 0;
	struct widths w = { 0 };
	int rc;

	if (o->region && !hwdb_region_known(o->region)) {
		struct strbuf r = STRBUF_INIT;

		regions_text(&r);
		rc = opts_usage_error(&list_cmd, "--region: hwdb has no prices for '%s'; it has: %s",
				      o->region, sb_str(&r));
		sb_free(&r);
		return rc;
	}
	/* An empty table would read as "hwdb has none", not "no such family". */
	if (o->family && !family_known(o->family)) {
		fprintf(stderr, "dratopo hwdb list: no instance type of family '%s' "
			"(families are the part of the name before the dot: p5, g6e, ...)\n",
			o->family);
		return CLI_EXIT_FAIL;
	}
	if (json) {
		a = doc_arena_new();
		root = a ? doc_new_map(a) : NULL;
		list = a ? doc_new_seq(a) : NULL;
		if (!root || !list || doc_map_set(a, root, "instanceTypes", list)) {
			doc_arena_free(a);
			fprintf(stderr, "dratopo hwdb: out of memory\n");
			return CLI_EXIT_FAIL;
		}
	}
	if (!(ts = calloc(hwdb_count() + 1, sizeof(*ts)))) {
		doc_arena_free(a);
		fprintf(stderr, "dratopo hwdb: out of memory\n");
		return CLI_EXIT_FAIL;
	}
	for (size_t i = 0; i < hwdb_count(); i++)
		if (shown(o, hwdb_at(i)))
			ts[n_ts++] = hwdb_at(i);
	if (o->region) {
		sort_region = o->region;
		qsort(ts, n_ts, sizeof(*ts), cmp_region_price);
	}
	/* An empty result is a result (exit 0), but say so: a bare header
	 * reads as a failure to print. */
	if (!n_ts)
		fprintf(stderr, "dratopo hwdb list: no instance type matches these filters%s%s%s\n",
			o->region ? " (--region " : "", o->region ? o->region : "",
			o->region ? " lists only the types with a price there)" : "");
	if (json && o->region && doc_map_set(a, root, "region", doc_new_string(a, o->region)))
		sb.oom = true;
	if (!json) {
		table_widths(ts, n_ts, &w);
		sb_printf(&sb, "%-*s  %-*s %5s %7s %-5s %4s  %-*s %-9s %4s %5s %10s\n", w.name,
			  "NAME", w.family, "FAMILY", "VCPU", "MEMORY", "ARCH", "GPUS", w.gpu, "GPU",
			  "GPU-MEM", "EFAS", "ROOTS", "PRICE/H");
	}
	for (size_t i = 0; i < n_ts; i++) {
		if (json) {
			if (doc_seq_push(a, list, hwdb_type_encode(ts[i], a)))
				sb.oom = true;
		} else {
			table_row(&sb, &w, ts[i], o->region);
		}
	}
	if (json && !sb.oom && doc_emit_json(root, DOC_JSON_OUTPUT(o->compact), &sb))
		sb.oom = true;
	rc = opts_write_out("dratopo hwdb", &sb);
	sb_free(&sb);
	doc_arena_free(a);
	free(ts);
	return rc;
}

/* ---- show ---- */

/* The type's facts for show -o json; an entry from the coordinator carries
 * the coordinator's word for where it came from, not "extra" (which is how
 * this process holds it). */
static struct doc_node *type_facts(const struct opts *o, const struct hwdb_type *t,
				   struct doc_arena *a)
{
	struct doc_node *m = hwdb_type_encode(t, a);

	if (m && o->remote_source && doc_map_set(a, m, "source", doc_new_string(a, o->remote_source)))
		return NULL;
	return m;
}

/* show -o svg: what the entry says a node of the type has, drawn. */
static int show_svg(const struct hwdb_type *t)
{
	struct strbuf sb = STRBUF_INIT;
	struct draw_picture pic;
	struct dt_err err = { 0 };
	int rc;

	if (draw_type(t, &pic, &err)) {
		fprintf(stderr, "dratopo hwdb show: %s\n", err.msg);
		return CLI_EXIT_FAIL;
	}
	if (draw_svg(&pic, &(struct draw_svg_opts){ .standalone = true }, &sb))
		sb.oom = true;
	draw_picture_free(&pic);
	rc = opts_write_out("dratopo hwdb show", &sb);
	sb_free(&sb);
	return rc;
}

static int cmd_show(const struct opts *o)
{
	struct model_object *slices[HWDB_MAX_SLICES];
	struct strbuf sb = STRBUF_INIT;
	struct model_set *set = NULL;
	struct doc_arena *a = NULL;
	struct dt_err err = { 0 };
	struct hwdb_cc_mode mode;
	struct hwdb_mig_layout mig;
	struct hwdb_slice_opts sopts = { .cc = &mode, .mig = &mig };
	const struct hwdb_type *t;
	bool json = o->output == OUT_JSON;
	char ccbuf[24];
	size_t n = 0;
	int rc = CLI_EXIT_FAIL;

	/* value errors of options: usage errors, worded as the parser's */
	if (hwdb_cc_parse(o->cc, &mode, &err))
		return opts_usage_error(&show_cmd, "--consumable-capacity: %s", err.msg);
	if (hwdb_mig_parse(o->mig, &mig, &err))
		return opts_usage_error(&show_cmd, "--mig: %s", err.msg);
	t = find_type(&show_cmd, o->names.v[0]);
	if (!t)
		return CLI_EXIT_FAIL;
	if (o->output == SHOW_SVG)
		return show_svg(t);
	set = model_set_new();
	if (!set) {
		fprintf(stderr, "dratopo hwdb: out of memory\n");
		return CLI_EXIT_FAIL;
	}
	if (hwdb_slices_opts(t, &sopts, o->node, set, slices, &n, &err)) {
		fprintf(stderr, "dratopo hwdb show: %s\n", err.msg);
		/* a bad --node, --mig or mode combination is the caller's */
		rc = (err.code == -EINVAL && (o->node || o->mig)) || err.code == -ENOTSUP
			     ? CLI_EXIT_USAGE : CLI_EXIT_FAIL;
		goto out;
	}
	if (json) {
		struct doc_node *root, *list;

		a = doc_arena_new();
		root = a ? doc_new_map(a) : NULL;
		list = a ? doc_new_seq(a) : NULL;
		if (!root || !list || doc_map_set(a, root, "instanceType", type_facts(o, t, a)) ||
		    doc_map_set(a, root, "resourceSlices", list))
			sb.oom = true;
		for (size_t i = 0; i < n && !sb.oom; i++)
			if (doc_seq_push(a, list, model_encode(slices[i], a)))
				sb.oom = true;
		if (!sb.oom && doc_emit_json(root, DOC_JSON_OUTPUT(o->compact), &sb))
			sb.oom = true;
	} else {
		sb_printf(&sb, "# ResourceSlices a %s node publishes (consumable capacity: %s%s%s%s%s)\n",
			  t->name, hwdb_cc_name(&mode, ccbuf, sizeof(ccbuf)),
			  mig.kind != HWDB_MIG_NONE ? "; MIG layout: " : "", mig.text,
			  t->dra_metadata ? "" : "; topology unknown: no scraped device data",
			  o->remote_source && !strcmp(o->remote_source, "learned")
				  ? "; learned by the coordinator from its nodes" : "");
		/* model_emit separates documents itself ("---" before each
		 * one, as the buffer already holds the comment). */
		for (size_t i = 0; i < n; i++)
			if (model_emit(slices[i], DOC_FORMAT_YAML, &sb))
				sb.oom = true;
	}
	rc = opts_write_out("dratopo hwdb", &sb);
out:
	sb_free(&sb);
	doc_arena_free(a);
	model_set_free(set);
	return rc;
}

/* ---- export ---- */

static int cmd_export(const struct opts *o)
{
	const struct hwdb_type **types;
	struct strbuf sb = STRBUF_INIT;
	size_t n = 0, cap = o->names.n ? o->names.n : hwdb_count();
	int rc = CLI_EXIT_FAIL;

	types = calloc(cap ? cap : 1, sizeof(*types));
	if (!types) {
		fprintf(stderr, "dratopo hwdb: out of memory\n");
		return CLI_EXIT_FAIL;
	}
	for (size_t i = 0; i < cap; i++) {
		const struct hwdb_type *t = o->names.n ? find_type(&export_cmd, o->names.v[i])
							   : hwdb_at(i);

		if (!t)
			goto out;
		types[n++] = t;
	}
	if (hwdb_file_write_yaml(types, n, &sb))
		sb.oom = true;
	rc = opts_write_out("dratopo hwdb", &sb);
out:
	sb_free(&sb);
	free(types);
	return rc;
}

/* The coordinator's HwdbSource as show -o json words it. */
static const char *remote_source_name(Dratopo__V1__HwdbSource s)
{
	return s == DRATOPO__V1__HWDB_SOURCE__HWDB_SOURCE_LEARNED ? "learned" : "coordinator";
}

/* show/export --coordinator: the coordinator's entry for the type becomes
 * an extra, so that show and export print it as they print any entry. */
static int load_remote(const struct opts_cmd *c, struct opts *o)
{
	Dratopo__V1__GetHwdbEntryRequest req = DRATOPO__V1__GET_HWDB_ENTRY_REQUEST__INIT;
	Dratopo__V1__GetHwdbEntryResponse *resp;
	ProtobufCMessage *m = NULL;
	struct dt_err err = { 0 };
	int rc;

	if (o->names.n != 1)
		return opts_usage_error(c, "--coordinator needs exactly one TYPE");
	req.instance_type = (char *)o->names.v[0];
	rc = cli_remote_call(&o->remote, c->prog + strlen("dratopo "),
			     "/dratopo.v1.Fleet/GetHwdbEntry", &req.base,
			     &dratopo__v1__get_hwdb_entry_response__descriptor, 10000, &m);
	if (rc)
		return rc;
	resp = (void *)m;
	if (hwdb_load_extra_buf(resp->entry_yaml, strlen(resp->entry_yaml), "coordinator", &err)) {
		fprintf(stderr, "%s: the coordinator's entry: %s\n", c->prog, err.msg);
		rc = CLI_EXIT_FAIL;
	}
	o->remote_source = remote_source_name(resp->source);
	protobuf_c_message_free_unpacked(m, NULL);
	return rc;
}

/* Parse, load the extra types (and the coordinator's entry), run. */
static int run(const struct opts_cmd *c, int (*cmd)(const struct opts *), int argc, char **argv)
{
	struct opts o = { 0 };
	int rc;

	if (opts_parse(c, argc, argv, &o, &rc))
		goto out;
	if (o.compact && o.output != OUT_JSON) {
		rc = opts_usage_error(c, "--compact goes with -o json");
		goto out;
	}
	if (cmd == cmd_show && !o.names.n) {
		rc = opts_usage_error(c, "which instance type? (dratopo hwdb list shows them)");
		goto out;
	}
	rc = CLI_EXIT_FAIL;
	if (!load_extras(&o) && !(o.remote.addr && (rc = load_remote(c, &o))))
		rc = cmd(&o);
	hwdb_reset();
out:
	opts_free(c, &o);
	return rc;
}

static int hwdb_list(int argc, char **argv)
{
	return run(&list_cmd, cmd_list, argc, argv);
}

static int hwdb_show(int argc, char **argv)
{
	return run(&show_cmd, cmd_show, argc, argv);
}

static int hwdb_export(int argc, char **argv)
{
	return run(&export_cmd, cmd_export, argc, argv);
}

int cli_hwdb(int argc, char **argv)
{
	static const struct opts_sub subs[] = {
		{ "list", hwdb_list, "the known EC2 GPU and EFA instance types, cheapest first" },
		{ "show", hwdb_show, "the ResourceSlices the NVIDIA GPU driver and DRANET publish\n"
				     "on a node of a type" },
		{ "export", hwdb_export, "entries in hwdb's source format (what --hwdb-extra reads)" },
	};
	static const struct opts_prog hwdb = {
		.prog = "dratopo hwdb",
		.about = "The instance-type metadata dratopo plans with.",
		.subs = subs, .n_subs = sizeof(subs) / sizeof(subs[0]),
	};

	return opts_dispatch(&hwdb, argc, argv);
}
