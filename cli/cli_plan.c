/* cli_plan.c - `dratopo plan -f FILE... [--hwdb-extra FILE]
 * [--coordinator ADDR] [-o table|yaml|json]`: where pending DRA pods run,
 * and the cheapest nodes to launch for the rest. The options and the
 * printing are here; the plan is plan_execute's (plan.h), or the
 * coordinator's, which runs the same.
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
#include "plan.h"
#include "strbuf.h"

#define MAX_FILES 4096
#define MAX_EXTRAS 16

static void usage(FILE *out)
{
	fprintf(out,
		"usage: dratopo plan -f FILE... [--hwdb-extra FILE]... [--region REGION]\n"
		"                    [--coordinator ADDR] [-o table|yaml|json]\n\n"
		"Plan pending pods: existing nodes first (their ResourceSlices minus what is\n"
		"allocated), then the lowest-priced set of new nodes the NodePools allow, with\n"
		"the devices hwdb predicts for each instance type.\n\n"
		"Input kinds: Pod, Deployment, ReplicaSet, StatefulSet, Job, ResourceClaim,\n"
		"ResourceClaimTemplate, DeviceClass, DeviceTaintRule, ResourceSlice, Node,\n"
		"DaemonSet (node overhead), NodePool, EC2NodeClass, NodeOverlay (YAML or\n"
		"JSON, multi-document, kind: List).\n"
		"\"-\" reads standard input.\n\n"
		"options:\n"
		"  -f, --filename FILE...  manifests (repeatable; FILEs may follow one -f)\n"
		"      --hwdb-extra FILE   more instance types, in hwdb's source format\n"
		"                          (repeatable)\n"
		"      --region REGION     the region the cluster runs in: new nodes are priced\n"
		"                          there, and a NodePool whose\n"
		"                          topology.kubernetes.io/region excludes it launches\n"
		"                          nothing (default: each NodePool's region requirement,\n"
		"                          else us-east-1; `dratopo hwdb list --region` shows\n"
		"                          the regions hwdb prices)\n"
		"  -o, --output FORMAT     table (default), yaml (NodeClaims) or json\n"
		"  -h, --help              this help\n\n"
		"With --coordinator the plan is made by a running coordinator, over its live\n"
		"fleet (the nodes that match, with their predicted slices) plus the manifests,\n"
		"with its hwdb and the types its fleet learned; --hwdb-extra files go with the\n"
		"request and apply to this plan only (a learned type is launched once one\n"
		"gives it a price):\n"
		"%s\n"
		"Exit codes: 0 every pod placed, 1 invalid input or failure, 2 usage error,\n"
		"3 some pod is unschedulable.\n", cli_remote_help);
}

static void print_diags(const char *prefix, const struct dt_diags *d)
{
	for (size_t i = 0; i < d->n; i++)
		fprintf(stderr, "%s%s\n", prefix, d->msgs[i]);
	if (d->dropped)
		fprintf(stderr, "... and %zu more\n", d->dropped);
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
	print_diags("warning: ", &rep.warnings);
	print_diags("", &rep.diags);
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

int cli_plan(int argc, char **argv)
{
	const char *files[MAX_FILES], *extras[MAX_EXTRAS];
	size_t n_extras = 0;
	struct cli_remote remote = { 0 };
	size_t n_files = 0;
	enum plan_format fmt = PLAN_FORMAT_TABLE;
	bool after_f = false;
	const char *opt = NULL; /* the option whose value is missing */
	const char *region = NULL;     /* --region: the cluster's */

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		int r;

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return CLI_EXIT_OK;
		}
		if (!strcmp(a, "-f") || !strcmp(a, "--filename") || !strncmp(a, "--filename=", 11)) {
			const char *v = !strncmp(a, "--filename=", 11) ? a + 11 : NULL;

			if (!v && ++i >= argc) {
				opt = a;
				goto no_value;
			}
			if (n_files == MAX_FILES)
				goto too_many;
			files[n_files++] = v ? v : argv[i];
			after_f = true;
			continue;
		}
		if (!strcmp(a, "-o") || !strcmp(a, "--output") || !strncmp(a, "--output=", 9) ||
		    !strncmp(a, "-o", 2)) {
			const char *v = !strncmp(a, "--output=", 9) ? a + 9
					: (a[1] == 'o' && a[2]) ? a + 2 : NULL;

			if (!v && ++i >= argc) {
				opt = a;
				goto no_value;
			}
			v = v ? v : argv[i];
			if (!strcmp(v, "table"))
				fmt = PLAN_FORMAT_TABLE;
			else if (!strcmp(v, "yaml"))
				fmt = PLAN_FORMAT_YAML;
			else if (!strcmp(v, "json"))
				fmt = PLAN_FORMAT_JSON;
			else {
				fprintf(stderr, "dratopo plan: unknown output format '%s' "
					"(table, yaml or json)\n", v);
				return CLI_EXIT_USAGE;
			}
			after_f = false;
			continue;
		}
		if (!strcmp(a, "--region") || !strncmp(a, "--region=", 9)) {
			if (!a[8] && ++i >= argc) {
				opt = a;
				goto no_value;
			}
			region = a[8] ? a + 9 : argv[i];
			if (!hwdb_region_known(region)) {
				fprintf(stderr, "dratopo plan: --region: hwdb has no prices for '%s'; "
					"it has:", region);
				for (size_t k = 0; hwdb_regions[k]; k++)
					fprintf(stderr, "%s %s", k ? "," : "", hwdb_regions[k]);
				fputc('\n', stderr);
				return CLI_EXIT_USAGE;
			}
			after_f = false;
			continue;
		}
		if (!strcmp(a, "--hwdb-extra")) {
			if (++i >= argc) {
				opt = a;
				goto no_value;
			}
			if (n_extras == MAX_EXTRAS) {
				fprintf(stderr, "dratopo plan: at most %d --hwdb-extra files\n",
					MAX_EXTRAS);
				return CLI_EXIT_USAGE;
			}
			extras[n_extras++] = argv[i];
			after_f = false;
			continue;
		}
		if ((r = cli_remote_take(&remote, argc, argv, &i))) {
			if (r < 0)
				goto usage;
			after_f = false;
			continue;
		}
		if (a[0] == '-' && a[1]) {
			fprintf(stderr, "dratopo plan: unknown option '%s'\n\n", a);
			goto usage;
		}
		if (!after_f) {
			fprintf(stderr, "dratopo plan: unexpected argument '%s' (manifests follow -f)\n\n",
				a);
			goto usage;
		}
		if (n_files == MAX_FILES)
			goto too_many;
		files[n_files++] = a;
	}
	if (!n_files) {
		fprintf(stderr, "dratopo plan: no input: give manifests with -f FILE\n\n");
		goto usage;
	}
	if (remote.addr && region) {
		fprintf(stderr, "dratopo plan: --region plans locally only; a coordinator prices in "
			"each NodePool's region requirement, else us-east-1\n");
		return CLI_EXIT_USAGE;
	}
	if (remote.addr)
		return plan_remote(&remote, files, n_files, extras, n_extras, fmt);
	return plan_local(files, n_files, extras, n_extras, region, fmt);
no_value:
	fprintf(stderr, "dratopo plan: option '%s' needs a value\n\n", opt);
	goto usage;
too_many:
	fprintf(stderr, "dratopo plan: at most %d manifest files\n\n", MAX_FILES);
usage:
	usage(stderr);
	return CLI_EXIT_USAGE;
}
