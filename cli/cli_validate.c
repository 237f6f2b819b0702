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
#include "plan.h"
#include "strbuf.h"

enum output { OUT_TEXT, OUT_JSON };

static void usage(FILE *out)
{
	fprintf(out,
		"usage: dratopo validate -f FILE... [-o text|json]\n\n"
		"Load every document of the manifests (YAML or JSON, multi-document streams\n"
		"and kind: List), apply the API server's defaults and validate them with its\n"
		"rules and limits. \"-\" reads standard input.\n\n"
		"options:\n"
		"  -f, --filename FILE...  manifests to read (repeatable; FILEs may follow one -f)\n"
		"  -o, --output FORMAT     text (default) or json\n"
		"  -h, --help              this help\n\n"
		"Exit codes: 0 all valid, 1 invalid input, 2 usage error.\n");
}

static void json_list(struct strbuf *sb, const char *name, const struct dt_diags *d)
{
	sb_printf(sb, "    \"%s\": [", name);
	for (size_t i = 0; i < d->n; i++) {
		sb_puts(sb, i ? ",\n        " : "\n        ");
		sb_json_string(sb, d->msgs[i], strlen(d->msgs[i]));
	}
	sb_puts(sb, d->n ? "\n    ]" : "]");
}

static void report_json(const struct model_set *set, const struct dt_diags *errs,
			const struct dt_diags *warnings, FILE *out)
{
	struct strbuf sb = STRBUF_INIT;
	bool first = true;

	sb_printf(&sb, "{\n    \"valid\": %s,\n    \"objects\": {",
		  dt_diags_count(errs) ? "false" : "true");
	for (int k = 0; k < MODEL_KIND_COUNT; k++) {
		size_t n = model_set_count(set, (enum model_kind)k);

		if (!n)
			continue;
		sb_printf(&sb, "%s\n        \"%s\": %zu", first ? "" : ",",
			  model_kind_name((enum model_kind)k), n);
		first = false;
	}
	sb_puts(&sb, first ? "},\n" : "\n    },\n");
	sb_printf(&sb, "    \"errorCount\": %zu,\n", dt_diags_count(errs));
	json_list(&sb, "errors", errs);
	sb_puts(&sb, ",\n");
	json_list(&sb, "warnings", warnings);
	sb_puts(&sb, "\n}\n");
	fputs(sb_str(&sb), out);
	sb_free(&sb);
}

static void report_text(const struct model_set *set, const struct dt_diags *errs)
{
	for (size_t i = 0; i < errs->n; i++)
		fprintf(stderr, "%s\n", errs->msgs[i]);
	if (errs->dropped)
		fprintf(stderr, "dratopo validate: %zu more errors not shown\n", errs->dropped);
	if (dt_diags_count(errs))
		return;
	for (int k = 0; k < MODEL_KIND_COUNT; k++) {
		size_t n = model_set_count(set, (enum model_kind)k);

		if (n)
			printf("%s: %zu valid\n", model_kind_name((enum model_kind)k), n);
	}
	if (!set->n_objects)
		printf("no objects\n");
}

int cli_validate(int argc, char **argv)
{
	enum output output = OUT_TEXT;
	const char **files = NULL;
	size_t n_files = 0;
	bool in_files = false;
	struct plan_manifest *m = NULL;
	struct plan_request rq = { .check_only = true, .format = PLAN_FORMAT_NONE,
				   .who = "dratopo validate" };
	struct plan_report rep = { 0 };
	int rc = CLI_EXIT_USAGE;

	files = calloc((size_t)argc + 1, sizeof(*files));
	rq.manifests = m = calloc((size_t)argc + 1, sizeof(*m));
	if (!files || !m) {
		fprintf(stderr, "dratopo validate: out of memory\n");
		rc = CLI_EXIT_FAIL;
		goto out;
	}
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			rc = CLI_EXIT_OK;
			goto out;
		} else if (!strcmp(a, "-f") || !strcmp(a, "--filename")) {
			if (i + 1 >= argc) {
				fprintf(stderr, "dratopo validate: %s needs a file\n", a);
				goto usage;
			}
			files[n_files++] = argv[++i];
			in_files = true;
		} else if (!strncmp(a, "--filename=", 11)) {
			files[n_files++] = a + 11;
			in_files = true;
		} else if (!strncmp(a, "-o", 2) || !strcmp(a, "--output") ||
			   !strncmp(a, "--output=", 9)) {
			const char *v;

			if (!strncmp(a, "--output=", 9))
				v = a + 9;
			else if (a[1] == 'o' && a[2])
				v = a + 2;                      /* -ojson, as kubectl takes it */
			else
				v = i + 1 < argc ? argv[++i] : NULL;

			if (v && !strcmp(v, "text")) {
				output = OUT_TEXT;
			} else if (v && !strcmp(v, "json")) {
				output = OUT_JSON;
			} else {
				fprintf(stderr, "dratopo validate: -o takes text or json%s%s\n",
					v ? ", not " : "", v ? v : "");
				goto usage;
			}
			in_files = false;
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "dratopo validate: unknown option %s\n", a);
			goto usage;
		} else if (in_files) {
			files[n_files++] = a;
		} else {
			fprintf(stderr, "dratopo validate: unexpected argument %s (files follow -f)\n", a);
			goto usage;
		}
	}
	if (!n_files) {
		fprintf(stderr, "dratopo validate: no input; give -f FILE\n");
		goto usage;
	}
	rq.n_manifests = n_files;

	for (size_t i = 0; i < n_files; i++)
		m[i].name = files[i];
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
	for (size_t i = 0; i < rep.warnings.n; i++)
		fprintf(stderr, "warning: %s\n", rep.warnings.msgs[i]);
	if (output == OUT_JSON)
		report_json(rep.set, &rep.diags, &rep.warnings, stdout);
	else
		report_text(rep.set, &rep.diags);
	rc = dt_diags_count(&rep.diags) ? CLI_EXIT_FAIL : CLI_EXIT_OK;
	goto out;
usage:
	fprintf(stderr, "Run 'dratopo validate --help' for usage.\n");
	rc = CLI_EXIT_USAGE;
out:
	plan_report_free(&rep);
	free(m);
	free(files);
	return rc;
}
