/* cli_plan.c - `dratopo plan -f FILE... [--hwdb-extra FILE]
 * [--coordinator ADDR] [-o table|yaml|json]`: where pending DRA pods run,
 * and the cheapest nodes to launch for the rest.
 *
 * exit 0: every pod has a place; 3: some pod is unschedulable (the plan is
 * still printed, with a reason per pod); 1: invalid input or failure
 * (messages on stderr); 2: usage error. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cel.h"
#include "cli.h"
#include "hwdb.h"
#include "model.h"
#include "plan.h"
#include "strbuf.h"

#define CLI_EXIT_UNSCHEDULABLE 3
#define MAX_FILES 4096

enum output { OUT_TABLE, OUT_YAML, OUT_JSON };

static void usage(FILE *out)
{
	fprintf(out,
		"usage: dratopo plan -f FILE... [--hwdb-extra FILE] [--coordinator ADDR]\n"
		"                    [-o table|yaml|json]\n\n"
		"Plan pending pods: existing nodes first (their ResourceSlices minus what is\n"
		"allocated), then the lowest-priced set of new nodes the NodePools allow, with\n"
		"the devices hwdb predicts for each instance type.\n\n"
		"Input kinds: Pod, Deployment, ReplicaSet, StatefulSet, Job, ResourceClaim,\n"
		"ResourceClaimTemplate, DeviceClass, ResourceSlice, Node, NodePool, EC2NodeClass\n"
		"(YAML or JSON, multi-document, kind: List). \"-\" reads standard input.\n\n"
		"options:\n"
		"  -f, --filename FILE...  manifests (repeatable; FILEs may follow one -f)\n"
		"      --hwdb-extra FILE   more instance types, in hwdb's source format\n"
		"      --coordinator ADDR  plan against a running coordinator's fleet\n"
		"  -o, --output FORMAT     table (default), yaml (NodeClaims) or json\n"
		"  -h, --help              this help\n\n"
		"Exit codes: 0 every pod placed, 1 invalid input or failure, 2 usage error,\n"
		"3 some pod is unschedulable.\n");
}

/* The validator's CEL hook, as `dratopo validate` uses it. */
static int check_cel(const char *expr, size_t len, char *msg, size_t msgsz, void *ctx)
{
	struct cel_program *p = NULL;
	struct dt_err err = { 0 };
	int rc;

	(void)ctx;
	rc = cel_compile_selector(expr, len, true, &p, &err);
	cel_program_free(p);
	if (!rc)
		return 0;
	if (strstr(err.msg, "cost limit")) {
		snprintf(msg, msgsz, "too complex, exceeds cost limit");
		return -E2BIG;
	}
	snprintf(msg, msgsz, "compilation failed: %s", err.msg[0] ? err.msg : "invalid expression");
	return -EINVAL;
}

static void print_diags(const struct dt_diags *d)
{
	for (size_t i = 0; i < d->n; i++)
		fprintf(stderr, "%s\n", d->msgs[i]);
	if (d->dropped)
		fprintf(stderr, "... and %zu more\n", d->dropped);
}

int cli_plan(int argc, char **argv)
{
	const char *files[MAX_FILES], *extra = NULL, *coordinator = NULL;
	size_t n_files = 0;
	enum output fmt = OUT_TABLE;
	bool after_f = false;
	struct model_set *set = NULL;
	struct dt_diags errs;
	struct dt_err err = { 0 };
	struct plan_result *res = NULL;
	struct strbuf out = STRBUF_INIT;
	struct model_validate_opts vopts = { .check_cel = check_cel };
	int rc = CLI_EXIT_FAIL;

	dt_diags_init(&errs);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return CLI_EXIT_OK;
		}
		if (!strcmp(a, "-f") || !strcmp(a, "--filename") || !strncmp(a, "--filename=", 11)) {
			const char *v = !strncmp(a, "--filename=", 11) ? a + 11 : NULL;

			if (!v && ++i >= argc)
				goto usage;
			if (n_files == MAX_FILES)
				goto usage;
			files[n_files++] = v ? v : argv[i];
			after_f = true;
			continue;
		}
		if (!strcmp(a, "-o") || !strcmp(a, "--output") || !strncmp(a, "--output=", 9) ||
		    !strncmp(a, "-o", 2)) {
			const char *v = !strncmp(a, "--output=", 9) ? a + 9
					: (a[1] == 'o' && a[2]) ? a + 2 : NULL;

			if (!v && ++i >= argc)
				goto usage;
			v = v ? v : argv[i];
			if (!strcmp(v, "table"))
				fmt = OUT_TABLE;
			else if (!strcmp(v, "yaml"))
				fmt = OUT_YAML;
			else if (!strcmp(v, "json"))
				fmt = OUT_JSON;
			else {
				fprintf(stderr, "dratopo plan: unknown output format '%s' "
					"(table, yaml or json)\n", v);
				return CLI_EXIT_USAGE;
			}
			after_f = false;
			continue;
		}
		if (!strcmp(a, "--hwdb-extra") || !strcmp(a, "--coordinator")) {
			if (++i >= argc)
				goto usage;
			*(a[2] == 'h' ? &extra : &coordinator) = argv[i];
			after_f = false;
			continue;
		}
		if (a[0] == '-' && a[1]) {
			fprintf(stderr, "dratopo plan: unknown option '%s'\n\n", a);
			goto usage;
		}
		if (!after_f || n_files == MAX_FILES)
			goto usage;
		files[n_files++] = a;
	}
	if (!n_files) {
		fprintf(stderr, "dratopo plan: no input: give manifests with -f FILE\n\n");
		goto usage;
	}
	if (coordinator) {
		fprintf(stderr, "dratopo plan: --coordinator: planning against a coordinator "
			"is not available in this build; plan offline from manifests\n");
		return CLI_EXIT_FAIL;
	}
	if (extra && hwdb_load_extra(extra, &err)) {
		fprintf(stderr, "dratopo plan: --hwdb-extra: %s\n", err.msg);
		return CLI_EXIT_FAIL;
	}
	if (!(set = model_set_new())) {
		fprintf(stderr, "dratopo plan: out of memory\n");
		goto out;
	}
	for (size_t i = 0; i < n_files; i++) {
		if (model_set_load_file(set, files[i], &errs, &err) < 0 && !errs.n)
			fprintf(stderr, "%s\n", err.msg);
	}
	if (dt_diags_count(&errs)) {
		print_diags(&errs);
		goto out;
	}
	if (model_validate_set(set, &vopts, &errs) != 0) {
		print_diags(&errs);
		goto out;
	}
	for (size_t i = 0; i < set->warnings.n; i++)
		fprintf(stderr, "warning: %s\n", set->warnings.msgs[i]);
	if (plan_run(set, NULL, &res, &err)) {
		fprintf(stderr, "dratopo plan: %s\n", err.msg);
		goto out;
	}
	if (fmt == OUT_JSON)
		rc = plan_emit_json(res, &out);
	else if (fmt == OUT_YAML)
		rc = plan_emit_yaml(res, &out);
	else
		rc = plan_emit_table(res, &out);
	if (rc) {
		fprintf(stderr, "dratopo plan: out of memory\n");
		rc = CLI_EXIT_FAIL;
		goto out;
	}
	fputs(sb_str(&out), stdout);
	if (fflush(stdout)) {
		perror("dratopo plan: stdout");
		rc = CLI_EXIT_FAIL;
		goto out;
	}
	rc = res->n_unschedulable ? CLI_EXIT_UNSCHEDULABLE : CLI_EXIT_OK;
	if (rc && fmt == OUT_YAML)
		fprintf(stderr, "dratopo plan: %zu pod%s unschedulable\n", res->n_unschedulable,
			res->n_unschedulable == 1 ? "" : "s");
out:
	sb_free(&out);
	plan_result_free(res);
	model_set_free(set);
	dt_diags_free(&errs);
	return rc;
usage:
	usage(stderr);
	dt_diags_free(&errs);
	return CLI_EXIT_USAGE;
}
