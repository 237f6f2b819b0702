/* plan.c - plan_execute, the planner's one entry point: the pipeline every
 * user of the planner shares (load the manifests, check them, let the
 * caller add what it knows, plan, write, exit code), written once so that
 * `dratopo plan -f`, `dratopo validate`, the Plan RPC, the Kubernetes
 * controller and the bench accept, refuse and answer the same input the
 * same way, in the same words. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "plan_internal.h"

/* CPU time of this process: the figures the bench prints, which wall-clock
 * time on a shared machine would blur. */
static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void copy_diags(struct dt_diags *dst, const struct dt_diags *src)
{
	for (size_t i = 0; i < src->n; i++)
		dt_diags_add(dst, "%s", src->msgs[i]);
	dst->dropped += src->dropped;
}

static int load(const struct plan_request *rq, struct plan_report *rep)
{
	for (size_t i = 0; i < rq->n_manifests; i++) {
		const struct plan_manifest *m = &rq->manifests[i];
		struct dt_err err = { 0 };
		int rc;

		if (m->content)
			rc = model_set_load_buffer(rep->set, m->content, m->len,
						   m->name ? m->name : "(manifest)", &rep->diags,
						   &err);
		else
			rc = model_set_load_file(rep->set, m->name, &rep->diags, &err);
		if (rc == -ENOMEM)
			return rc;
		/* An unreadable file: said in diags already, or only in err.
		 * The rest is still read, so that one run reports everything. */
		if (rc < 0 && !rep->diags.n)
			dt_diags_add(&rep->diags, "%s", err.msg);
	}
	return 0;
}

/* The input's problems in the order users read them: by manifest,
 * document and item, as given. */
static void sort_diags(const struct plan_request *rq, struct plan_report *rep)
{
	const char **names = calloc(rq->n_manifests + 1, sizeof(*names));

	if (!names)
		return;         /* unsorted is still correct */
	for (size_t i = 0; i < rq->n_manifests; i++)
		names[i] = rq->manifests[i].name ? rq->manifests[i].name : "(manifest)";
	model_diags_sort(&rep->diags, names, rq->n_manifests);
	free(names);
}

static int emit(const struct plan_result *res, enum plan_format fmt, struct strbuf *out)
{
	switch (fmt) {
	case PLAN_FORMAT_TABLE:
		return plan_emit_table(res, out);
	case PLAN_FORMAT_YAML:
		return plan_emit_yaml(res, out);
	case PLAN_FORMAT_JSON:
		return plan_emit_json(res, DOC_JSON_PRETTY, out);
	case PLAN_FORMAT_JSON_COMPACT:
		return plan_emit_json(res, DOC_JSON_LINE, out);
	case PLAN_FORMAT_NONE:
		break;
	}
	return 0;
}

/* Load and check: PLAN_EXIT_OK when the input may be planned. */
static int take_input(const struct plan_request *rq, struct plan_report *rep, const char *who)
{
	double t0 = cpu_now();
	int rc = load(rq, rep);

	rep->cpu_s[PLAN_PHASE_LOAD] = cpu_now() - t0;
	if (rc)
		goto oom;
	copy_diags(&rep->warnings, &rep->set->warnings);
	t0 = cpu_now();
	rc = plan_input_check(rep->set, &rep->diags, rq->check_only ? &rep->warnings : NULL);
	rep->cpu_s[PLAN_PHASE_CHECK] = cpu_now() - t0;
	sort_diags(rq, rep);
	if (rc == -ENOMEM)
		goto oom;
	return rc ? PLAN_EXIT_FAIL : PLAN_EXIT_OK;
oom:
	dt_diags_add(&rep->diags, "%s: out of memory", who);
	return PLAN_EXIT_FAIL;
}

/* Prepare, plan and write, on input that passed its checks. */
static int plan_input(const struct plan_request *rq, struct plan_report *rep, const char *who)
{
	struct plan_options opts = rq->opts;
	struct dt_err err = { 0 };
	double t0;

	if (rq->prepare && rq->prepare(rq->prepare_arg, rep->set, &opts, &rep->diags))
		return PLAN_EXIT_FAIL;
	t0 = cpu_now();
	if (plan_run(rep->set, &opts, &rep->result, &err)) {
		dt_diags_add(&rep->diags, "%s: %s", who, err.msg);
		return PLAN_EXIT_FAIL;
	}
	rep->cpu_s[PLAN_PHASE_RUN] = cpu_now() - t0;
	copy_diags(&rep->warnings, &rep->result->warnings);
	t0 = cpu_now();
	if (emit(rep->result, rq->format, &rep->output) || sb_error(&rep->output)) {
		sb_free(&rep->output);
		dt_diags_add(&rep->diags, "%s: out of memory", who);
		return PLAN_EXIT_FAIL;
	}
	rep->cpu_s[PLAN_PHASE_EMIT] = cpu_now() - t0;
	if (!rep->result->n_unschedulable)
		return PLAN_EXIT_OK;
	/* NodeClaims have no place for the pods that fit nowhere: say why
	 * the exit code is not 0. */
	if (rq->format == PLAN_FORMAT_YAML)
		dt_diags_add(&rep->diags, "%s: %zu pod%s unschedulable", who,
			     rep->result->n_unschedulable,
			     rep->result->n_unschedulable == 1 ? "" : "s");
	return PLAN_EXIT_UNSCHEDULABLE;
}

int plan_execute(const struct plan_request *rq, struct plan_report *rep)
{
	const char *who = rq->who ? rq->who : "plan";

	memset(rep, 0, sizeof(*rep));
	sb_init(&rep->output);
	dt_diags_init(&rep->diags);
	dt_diags_init(&rep->warnings);
	rep->set = rq->set;
	if (!rep->set) {
		rep->set = model_set_new();
		rep->owns_set = true;
	}
	if (!rep->set) {
		dt_diags_add(&rep->diags, "%s: out of memory", who);
		return rep->exit_code = PLAN_EXIT_FAIL;
	}
	rep->exit_code = take_input(rq, rep, who);
	if (rep->exit_code == PLAN_EXIT_OK && !rq->check_only)
		rep->exit_code = plan_input(rq, rep, who);
	return rep->exit_code;
}

void plan_report_free(struct plan_report *rep)
{
	if (!rep)
		return;
	plan_result_free(rep->result);          /* before the set it borrows from */
	if (rep->owns_set)
		model_set_free(rep->set);
	sb_free(&rep->output);
	dt_diags_free(&rep->diags);
	dt_diags_free(&rep->warnings);
	memset(rep, 0, sizeof(*rep));
}
