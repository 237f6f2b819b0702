/* cli_validate.c - `dratopo validate -f FILE... [-o text|json]`: load every
 * document, apply the API server's defaults and validate with its rules:
 * the checks `dratopo plan` runs on its input, through the planner's entry
 * point (plan_execute, check_only), so that validate accepts exactly what
 * plan accepts, in the same words.
 *
 * exit 0: all valid, one summary line per kind on stdout.
 * exit 1: every problem on its own line on stderr (or in the JSON report),
 *         as "FILE: document N (KIND NS/NAME): FIELD.PATH: message".
 * exit 2: usage error. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "doc.h"
#include "escape.h"
#include "model.h"
#include "opts.h"
#include "plan.h"
#include "strbuf.h"

enum output { OUT_TEXT, OUT_JSON };

struct validate_args {
	struct opts_list files;
	int output;                     /* enum output */
	bool compact;
};

static const struct opt validate_opts[] = {
	{ .name = "filename", .key = 'f', .type = OPT_LIST, .arg = "FILE",
	  .flags = OPT_GREEDY | OPT_REQUIRED, .at = OPTS_AT(struct validate_args, files),
	  .help = "manifests to read (repeatable; FILEs may follow one -f)" },
	{ .name = "output", .key = 'o', .type = OPT_CHOICE, .arg = "FORMAT", .choices = "text|json",
	  .at = OPTS_AT(struct validate_args, output), .help = "text (default) or json" },
	OPTS_COMPACT(struct validate_args, compact),
	{ 0 }
};

static const struct opts_cmd validate_cmd = {
	.prog = "dratopo validate",
	.synopsis = "dratopo validate -f FILE... [-o text|json] [--compact]",
	.about = "Load every document of the manifests (YAML or JSON, multi-document streams\n"
		 "and kind: List), apply the API server's defaults and validate them with its\n"
		 "rules and limits. \"-\" reads standard input.",
	.opts = validate_opts,
	.epilog = "Exit codes: 0 all valid, 1 invalid input, 2 usage error.",
	.operand_hint = "files follow -f",
};

static void json_list(struct doc_jw *w, const char *name, const struct dt_diags *d)
{
	doc_jw_key(w, name);
	doc_jw_seq(w);
	for (size_t i = 0; i < d->n; i++)
		doc_jw_str(w, d->msgs[i]);
	doc_jw_end_seq(w);
}

static int report_json(const struct model_set *set, const struct dt_diags *errs,
		       const struct dt_diags *warnings, bool compact)
{
	struct strbuf sb = STRBUF_INIT;
	struct doc_jw w;
	int rc;

	doc_jw_begin(&w, &sb, DOC_JSON_OUTPUT(compact));
	doc_jw_map(&w);
	doc_jw_key(&w, "valid");
	doc_jw_bool(&w, !dt_diags_count(errs));
	doc_jw_key(&w, "objects");
	doc_jw_map(&w);
	for (int k = 0; k < MODEL_KIND_COUNT; k++) {
		size_t n = model_set_count(set, (enum model_kind)k);

		if (!n)
			continue;
		doc_jw_key(&w, model_kind_name((enum model_kind)k));
		doc_jw_int(&w, (int64_t)n);
	}
	doc_jw_end_map(&w);
	doc_jw_key(&w, "errorCount");
	doc_jw_int(&w, (int64_t)dt_diags_count(errs));
	json_list(&w, "errors", errs);
	json_list(&w, "warnings", warnings);
	doc_jw_end_map(&w);
	doc_jw_end(&w);
	rc = opts_write_out("dratopo validate", &sb);
	sb_free(&sb);
	return rc;
}

static int report_text(const struct model_set *set, const struct dt_diags *errs)
{
	struct strbuf sb = STRBUF_INIT;
	int rc;

	opts_print_diags(stderr, "dratopo validate", "", "errors", errs);
	if (dt_diags_count(errs))
		return 0;
	for (int k = 0; k < MODEL_KIND_COUNT; k++) {
		size_t n = model_set_count(set, (enum model_kind)k);

		if (n)
			sb_printf(&sb, "%s: %zu valid\n", model_kind_name((enum model_kind)k), n);
	}
	if (!set->n_objects)
		sb_puts(&sb, "no objects\n");
	rc = opts_write_out("dratopo validate", &sb);
	sb_free(&sb);
	return rc;
}

int cli_validate(int argc, char **argv)
{
	struct validate_args a = { 0 };
	struct plan_manifest *m = NULL;
	struct plan_request rq = { .check_only = true, .format = PLAN_FORMAT_NONE,
				   .who = "dratopo validate" };
	struct plan_report rep = { 0 };
	int rc;

	if (opts_parse(&validate_cmd, argc, argv, &a, &rc))
		goto out;
	if (a.compact && a.output != OUT_JSON) {
		rc = opts_usage_error(&validate_cmd, "--compact goes with -o json");
		goto out;
	}
	rq.manifests = m = calloc(a.files.n, sizeof(*m));
	if (!m) {
		fprintf(stderr, "dratopo validate: out of memory\n");
		rc = CLI_EXIT_FAIL;
		goto out;
	}
	rq.n_manifests = a.files.n;
	for (size_t i = 0; i < a.files.n; i++)
		m[i].name = a.files.v[i];
	plan_execute(&rq, &rep);
	if (!rep.set) {
		fprintf(stderr, "dratopo validate: out of memory\n");
		rc = CLI_EXIT_FAIL;
		goto out;
	}
	/* A file whose documents were all skipped was not checked at all:
	 * never call that valid. (Unknown-field warnings belong to objects, so
	 * with no objects every warning is a skipped document.) */
	if (!rep.set->n_objects && rep.set->warnings.n &&
	    dt_diags_add(&rep.diags, "dratopo validate: no object to validate: %s%zu document%s "
			 "skipped (dratopo reads resource.k8s.io/v1, v1beta2 and v1beta1, v1, "
			 "apps/v1, batch/v1, karpenter.sh/v1 and karpenter.k8s.aws/v1 objects)",
			 rep.set->warnings.n == 1 ? "the " : "all ", rep.set->warnings.n,
			 rep.set->warnings.n == 1 ? " was" : "s were")) {
		fprintf(stderr, "dratopo validate: out of memory\n");
		rc = CLI_EXIT_FAIL;
		goto out;
	}
	opts_print_diags(stderr, "dratopo validate", "warning: ", "warnings", &rep.warnings);
	if (a.output == OUT_JSON)
		rc = report_json(rep.set, &rep.diags, &rep.warnings, a.compact);
	else
		rc = report_text(rep.set, &rep.diags);
	if (!rc)
		rc = dt_diags_count(&rep.diags) ? CLI_EXIT_FAIL : CLI_EXIT_OK;
out:
	plan_report_free(&rep);
	free(m);
	opts_free(&validate_cmd, &a);
	return rc;
}
