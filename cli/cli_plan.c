/* cli_plan.c - `dratopo plan -f FILE... [--hwdb-extra FILE]
 * [--coordinator ADDR] [-o table|yaml|json]`: where pending DRA pods run,
 * and the cheapest nodes to launch for the rest. The options and the
 * printing are here; the plan is plan_execute's (plan.h), or the
 * coordinator's, which runs the same. -o json --compact: the JSON on one
 * line.
 *
 * exit PLAN_EXIT_OK (0): every pod has a place; PLAN_EXIT_UNSCHEDULABLE
 * (3): some pod is unschedulable (the plan is still printed, with a reason
 * per pod); 1: invalid input or failure (messages on stderr); 2: usage
 * error. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_remote.h"
#include "doc.h"
#include "dratopo/v1/plan.pb-c.h"
#include "hwdb_catalog.h"
#include "model.h"
#include "opts.h"
#include "plan.h"
#include "strbuf.h"

/* What the command line says. */
struct plan_args {
	struct opts_list files, extras;
	int format;                     /* enum plan_format: table, yaml, json */
	bool compact;
	const char *region;             /* --region: the cluster's */
	struct cli_remote remote;
};

static const struct opt plan_opts[] = {
	{ .name = "filename", .key = 'f', .type = OPT_LIST, .arg = "FILE",
	  .flags = OPT_GREEDY | OPT_REQUIRED, .at = OPTS_AT(struct plan_args, files),
	  .help = "manifests (repeatable; FILEs may follow one -f)" },
	{ .name = "hwdb-extra", .type = OPT_LIST, .arg = "FILE",
	  .at = OPTS_AT(struct plan_args, extras),
	  .help = "more instance types, in hwdb's source format\n(repeatable)" },
	{ .name = "region", .type = OPT_STR, .arg = "REGION",
	  .at = OPTS_AT(struct plan_args, region),
	  .help = "the region the cluster runs in: new nodes are priced\n"
		  "there, and a NodePool whose\n"
		  "topology.kubernetes.io/region excludes it launches\n"
		  "nothing (default: each NodePool's region requirement,\n"
		  "else us-east-1; `dratopo hwdb list --region` shows\n"
		  "the regions hwdb prices)" },
	{ .name = "output", .key = 'o', .type = OPT_CHOICE, .arg = "FORMAT",
	  .choices = "table|yaml|json", .at = OPTS_AT(struct plan_args, format),
	  .help = "table (default), yaml (NodeClaims) or json" },
	OPTS_COMPACT(struct plan_args, compact),
	CLI_REMOTE_OPTS(struct plan_args, remote),
	{ 0 }
};

static const struct opts_cmd plan_cmd = {
	.prog = "dratopo plan",
	.synopsis = "dratopo plan -f FILE... [--hwdb-extra FILE]... [--region REGION]\n"
		    "                    [--coordinator ADDR] [-o table|yaml|json] [--compact]",
	.about = "Plan pending pods: existing nodes first (their ResourceSlices minus what is\n"
		 "allocated), then the lowest-priced set of new nodes the NodePools allow, with\n"
		 "the devices hwdb predicts for each instance type.\n\n"
		 "Input kinds: Pod, Deployment, ReplicaSet, StatefulSet, Job, ResourceClaim,\n"
		 "ResourceClaimTemplate, DeviceClass, DeviceTaintRule, ResourceSlice, Node,\n"
		 "DaemonSet (node overhead), NodePool, EC2NodeClass, NodeOverlay (YAML or\n"
		 "JSON, multi-document, kind: List).\n"
		 "\"-\" reads standard input.",
	.opts = plan_opts,
	.epilog = "With --coordinator the plan is made by a running coordinator, over its live\n"
		  "fleet (the nodes that match, with their predicted slices) plus the manifests,\n"
		  "with its hwdb and the types its fleet learned; --hwdb-extra files go with the\n"
		  "request and apply to this plan only (a learned type is launched once one\n"
		  "gives it a price).\n\n" CLI_REMOTE_NOTE "\n\n"
		  "Exit codes: 0 every pod placed, 1 invalid input or failure, 2 usage error,\n"
		  "3 some pod is unschedulable.",
	.operand_hint = "manifests follow -f",
};

static int bad_region(const char *region)
{
	struct strbuf sb = STRBUF_INIT;
	int rc;

	for (size_t k = 0; hwdb_regions[k]; k++)
		sb_printf(&sb, "%s%s", k ? ", " : "", hwdb_regions[k]);
	rc = opts_usage_error(&plan_cmd, "--region: hwdb has no prices for '%s'; it has: %s",
			      region, sb_str(&sb));
	sb_free(&sb);
	return rc;
}

/* The offline plan: plan_execute over the files, with hwdb and the
 * extras. */
static int plan_local(const char **files, size_t n_files, const char **extras, size_t n_extras,
		      const char *region,
		      enum plan_format fmt)
{
	struct plan_manifest *m = calloc(n_files, sizeof(*m));
	struct plan_request rq = { .manifests = m, .n_manifests = n_files, .format = fmt,
				   .who = "dratopo plan" };
	struct plan_report rep = { 0 };
	struct hwdb_catalog *cat = NULL;
	struct dt_err err = { 0 };
	int rc = CLI_EXIT_FAIL;

	if (!m) {
		fprintf(stderr, "dratopo plan: out of memory\n");
		return CLI_EXIT_FAIL;
	}
	if (hwdb_catalog_new(NULL, &cat, &err)) {
		fprintf(stderr, "dratopo plan: %s\n", err.msg);
		goto out;
	}
	for (size_t i = 0; i < n_extras; i++)
		if (hwdb_catalog_load(cat, extras[i], &err)) {
			fprintf(stderr, "dratopo plan: --hwdb-extra: %s\n", err.msg);
			goto out;
		}
	for (size_t i = 0; i < n_files; i++)
		m[i].name = files[i];
	rq.opts.catalog = cat;
	rq.opts.region = region;
	rc = plan_execute(&rq, &rep);
	opts_print_diags(stderr, "dratopo plan", "warning: ", "warnings", &rep.warnings);
	opts_print_diags(stderr, "dratopo plan", "", "errors", &rep.diags);
	fputs(sb_str(&rep.output), stdout);
	if (fflush(stdout)) {
		perror("dratopo plan: stdout");
		rc = CLI_EXIT_FAIL;
	}
out:
	plan_report_free(&rep);
	hwdb_catalog_free(cat);         /* after what borrows from it */
	free(m);
	return rc;
}

/* A whole file ("-": standard input) into *out (malloc'd, NUL-ended). */
static int read_all(const char *path, char **out)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	struct strbuf sb = STRBUF_INIT;
	char buf[65536];
	size_t n;

	if (!f) {
		fprintf(stderr, "dratopo plan: %s: %s\n", path, strerror(errno));
		return -1;
	}
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0 && sb.len <= DOC_MAX_FILE_SIZE)
		sb_append(&sb, buf, n);
	if (ferror(f) || sb.len > DOC_MAX_FILE_SIZE || sb_error(&sb)) {
		fprintf(stderr, "dratopo plan: %s: %s\n", path, ferror(f) ? strerror(errno)
			: "too large or out of memory");
		if (f != stdin)
			fclose(f);
		sb_free(&sb);
		return -1;
	}
	if (f != stdin)
		fclose(f);
	*out = sb_detach(&sb);
	return *out ? 0 : -1;
}

/* Files as Manifests, read whole: m[0..*n) filled, mp[i] = &m[i]; -1 when
 * one cannot be read (said on stderr; what was read is in m[0..*n)). */
static int read_manifests(const char **files, size_t n_files, Dratopo__V1__Manifest *m,
			  Dratopo__V1__Manifest **mp, size_t *n)
{
	for (*n = 0; *n < n_files; (*n)++) {
		dratopo__v1__manifest__init(&m[*n]);
		m[*n].name = (char *)files[*n];
		mp[*n] = &m[*n];
		if (read_all(files[*n], &m[*n].content)) {
			(*n)++;
			return -1;
		}
	}
	return 0;
}

static void free_manifests(Dratopo__V1__Manifest *m, size_t n)
{
	for (size_t i = 0; m && i < n; i++)
		free(m[i].content != protobuf_c_empty_string ? m[i].content : NULL);
	free(m);
}

/* The plan made by the coordinator: the files (and the extras, for this
 * plan only) go as they are, the answer is printed as an offline plan
 * would be. */
static int plan_remote(const struct cli_remote *remote, const char **files, size_t n_files,
		       const char **extras, size_t n_extras, enum plan_format fmt)
{
	static const Dratopo__V1__PlanFormat formats[] = {
		[PLAN_FORMAT_TABLE] = DRATOPO__V1__PLAN_FORMAT__PLAN_FORMAT_TABLE,
		[PLAN_FORMAT_YAML] = DRATOPO__V1__PLAN_FORMAT__PLAN_FORMAT_YAML,
		[PLAN_FORMAT_JSON] = DRATOPO__V1__PLAN_FORMAT__PLAN_FORMAT_JSON,
		[PLAN_FORMAT_JSON_COMPACT] = DRATOPO__V1__PLAN_FORMAT__PLAN_FORMAT_JSON_COMPACT,
	};
	Dratopo__V1__PlanRequest req = DRATOPO__V1__PLAN_REQUEST__INIT;
	Dratopo__V1__Manifest *m = calloc(n_files, sizeof(*m));
	Dratopo__V1__Manifest **mp = calloc(n_files, sizeof(*mp));
	Dratopo__V1__Manifest *x = calloc(n_extras + 1, sizeof(*x));
	Dratopo__V1__Manifest **xp = calloc(n_extras + 1, sizeof(*xp));
	Dratopo__V1__PlanResponse *resp;
	ProtobufCMessage *msg = NULL;
	size_t n_m = 0, n_x = 0;
	int rc = m && mp && x && xp ? 0 : CLI_EXIT_FAIL;

	if (rc)
		fprintf(stderr, "dratopo plan: out of memory\n");
	else if (read_manifests(files, n_files, m, mp, &n_m) ||
		 read_manifests(extras, n_extras, x, xp, &n_x))
		rc = CLI_EXIT_FAIL;
	req.n_manifests = n_files;
	req.manifests = mp;
	req.n_hwdb_extras = n_extras;
	req.hwdb_extras = xp;
	req.format = formats[fmt];
	if (!rc)
		rc = cli_remote_call(remote, "plan", "/dratopo.v1.Planner/Plan", &req.base,
				     &dratopo__v1__plan_response__descriptor, 60000, &msg);
	free_manifests(m, n_m);
	free_manifests(x, n_x);
	free(mp);
	free(xp);
	if (rc)
		return rc;
	resp = (void *)msg;
	for (size_t i = 0; i < resp->n_diagnostics; i++)
		fprintf(stderr, "%s\n", resp->diagnostics[i]);
	fputs(resp->output, stdout);
	rc = resp->exit_code;
	protobuf_c_message_free_unpacked(msg, NULL);
	if (fflush(stdout)) {
		perror("dratopo plan: stdout");
		return CLI_EXIT_FAIL;
	}
	return rc;
}

/* The format plan_execute and the coordinator write. */
static enum plan_format plan_format(const struct plan_args *a)
{
	static const enum plan_format formats[] = { PLAN_FORMAT_TABLE, PLAN_FORMAT_YAML,
						    PLAN_FORMAT_JSON };

	return a->compact && a->format == 2 ? PLAN_FORMAT_JSON_COMPACT : formats[a->format];
}

int cli_plan(int argc, char **argv)
{
	struct plan_args a = { 0 };
	int rc;

	if (opts_parse(&plan_cmd, argc, argv, &a, &rc))
		goto out;
	if (a.compact && a.format != 2)
		rc = opts_usage_error(&plan_cmd, "--compact goes with -o json");
	else if (a.region && !hwdb_region_known(a.region))
		rc = bad_region(a.region);
	else if (a.remote.addr && a.region)
		rc = opts_usage_error(&plan_cmd, "--region plans locally only; a coordinator "
				      "prices in each NodePool's region requirement, else us-east-1");
	else if (a.remote.addr)
		rc = plan_remote(&a.remote, a.files.v, a.files.n, a.extras.v, a.extras.n,
				 plan_format(&a));
	else
		rc = plan_local(a.files.v, a.files.n, a.extras.v, a.extras.n, a.region,
				plan_format(&a));
out:
	opts_free(&plan_cmd, &a);
	return rc;
}
