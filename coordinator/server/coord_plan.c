/* coord_plan.c - Planner.Plan: `dratopo plan` against the live fleet.
 *
 * The manifests are loaded and checked exactly as `dratopo plan -f` does
 * (plan_input_check); then every plannable node of the fleet joins the set
 * as an existing Node (labels and allocatable of its effective hwdb entry)
 * with the ResourceSlices predicted from its last report. Nodes in drift,
 * stale, unknown or in conflict are left out. Claims the manifests show as
 * allocated count as in use, as offline. Learned types have no price: their
 * nodes serve pods as existing capacity, and they become launch candidates
 * only when --hwdb-extra (loaded at start) gives them one. A Node of the
 * same name in the manifests wins over the fleet's. The answer is the CLI's
 * output in the requested format and the exit code it would have. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "coord.h"
#include "hwdb.h"
#include "model.h"
#include "plan.h"
#include "strbuf.h"

#define PLAN_EXIT_FAIL 1
#define PLAN_EXIT_UNSCHEDULABLE 3

struct plan_resp {
	Dratopo__V1__PlanResponse m;    /* first */
	struct strbuf out;
	struct dt_diags diags;
};

void coord_plan_release(ProtobufCMessage *response, void *user)
{
	struct plan_resp *r = (struct plan_resp *)response;

	(void)user;
	if (!r)
		return;
	sb_free(&r->out);
	dt_diags_free(&r->diags);
	free(r);
}

/* A YAML double-quoted scalar. */
static void put_quoted(struct strbuf *sb, const char *s)
{
	sb_putc(sb, '"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			sb_putc(sb, '\\');
		sb_putc(sb, *s);
	}
	sb_putc(sb, '"');
}

/* One live node as a v1 Node: the labels a node of its type carries and
 * what it leaves for pods. */
static void node_yaml(const struct rec_node *n, const struct hwdb_type *t, struct strbuf *sb)
{
	struct model_kv kv[PLAN_MAX_TYPE_LABELS];
	char vals[PLAN_MAX_TYPE_LABELS][PLAN_LABEL_VALUE_MAX];
	size_t nl = t ? plan_type_labels(t, NULL, kv, vals) : 0;

	sb_puts(sb, "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: ");
	put_quoted(sb, n->name);
	sb_puts(sb, "\n  labels:\n    kubernetes.io/hostname: ");
	put_quoted(sb, n->name);
	if (!t) {
		sb_puts(sb, "\n    " PLAN_LABEL_INSTANCE_TYPE ": ");
		put_quoted(sb, n->instance_type);
	}
	for (size_t i = 0; i < nl; i++) {
		sb_printf(sb, "\n    %s: ", kv[i].key);
		put_quoted(sb, kv[i].value);
	}
	sb_putc(sb, '\n');
	if (t) {
		struct plan_kubelet k;
		struct plan_res a;

		plan_kubelet_defaults(&k);
		plan_node_allocatable(t->vcpu, t->memory_mib, &k, &a);
		sb_printf(sb, "status:\n  allocatable:\n    cpu: \"%" PRId64 "m\"\n"
			  "    memory: \"%" PRId64 "\"\n    pods: \"%" PRId64 "\"\n",
			  a.cpu_milli, a.mem_bytes, a.pods);
	}
}

/* The plannable fleet into set. */
static int add_fleet(struct rec_fleet *f, struct model_set *set, struct dt_diags *diags,
		     struct dt_err *err)
{
	struct rec_filter flt = REC_FILTER_ALL;
	struct rec_node_list list = { 0 };
	struct strbuf sb = STRBUF_INIT;
	bool *skip = NULL;
	int rc;

	flt.plannable = 1;
	rc = rec_fleet_nodes(f, &flt, coord_now_ns(), &list, err);
	if (!rc && !(skip = calloc(list.n + 1, sizeof(*skip))))
		rc = dt_err_set(err, -ENOMEM, "out of memory");
	for (size_t i = 0; !rc && i < list.n; i++) {
		skip[i] = model_set_find(set, MODEL_NODE, NULL, list.nodes[i].name) != NULL;
		if (!skip[i])
			node_yaml(&list.nodes[i],
				  rec_fleet_hwdb_lookup(f, list.nodes[i].instance_type, NULL), &sb);
	}
	if (!rc && sb_error(&sb))
		rc = dt_err_set(err, -ENOMEM, "out of memory");
	if (!rc && sb.len)
		rc = model_set_load_buffer(set, sb_str(&sb), sb.len, "(coordinator fleet)", diags,
					   err);
	for (size_t i = 0; !rc && i < list.n; i++) {
		struct model_object *slices[HWDB_MAX_SLICES];
		size_t n = 0;

		if (!skip[i])
			rc = rec_node_slices(f, list.nodes[i].name, NULL, set, slices, &n, err);
	}
	free(skip);
	sb_free(&sb);
	rec_node_list_free(&list);
	return rc;
}

static int emit(const struct plan_result *res, Dratopo__V1__PlanFormat fmt, struct strbuf *out)
{
	switch (fmt) {
	case DRATOPO__V1__PLAN_FORMAT__PLAN_FORMAT_YAML:
		return plan_emit_yaml(res, out);
	case DRATOPO__V1__PLAN_FORMAT__PLAN_FORMAT_TABLE:
		return plan_emit_table(res, out);
	default:
		return plan_emit_json(res, out);
	}
}

/* Plan; the exit code the CLI would have. Problems go to r->diags. */
static int run_plan(struct coord *c, const Dratopo__V1__PlanRequest *q, struct plan_resp *r)
{
	struct model_set *set = model_set_new();
	struct plan_result *res = NULL;
	struct dt_err err = { 0 };
	int code = PLAN_EXIT_FAIL, rc;

	if (!set)
		return dt_diags_add(&r->diags, "out of memory"), PLAN_EXIT_FAIL;
	for (size_t i = 0; i < q->n_manifests; i++) {
		const Dratopo__V1__Manifest *m = q->manifests[i];

		if (model_set_load_buffer(set, m->content, strlen(m->content),
					  m->name[0] ? m->name : "(manifest)", &r->diags, &err) < 0 &&
		    !r->diags.n)
			dt_diags_add(&r->diags, "%s", err.msg);
	}
	if (plan_input_check(set, &r->diags))
		goto out;
	for (size_t i = 0; i < set->warnings.n; i++)
		dt_diags_add(&r->diags, "warning: %s", set->warnings.msgs[i]);
	rc = add_fleet(coord_fleet_get(c), set, &r->diags, &err);
	coord_fleet_put(c);
	if (rc || plan_run(set, NULL, &res, &err)) {
		dt_diags_add(&r->diags, "dratopo plan: %s", err.msg);
		goto out;
	}
	if (emit(res, q->format, &r->out) || sb_error(&r->out)) {
		dt_diags_add(&r->diags, "dratopo plan: out of memory");
		goto out;
	}
	code = res->n_unschedulable ? PLAN_EXIT_UNSCHEDULABLE : 0;
out:
	plan_result_free(res);
	model_set_free(set);
	return code;
}

grpc_status_code coord_plan(struct rpc_ctx *ctx, const ProtobufCMessage *request,
			    ProtobufCMessage **response)
{
	struct coord *c = rpc_ctx_user(ctx);
	const Dratopo__V1__PlanRequest *q = (const void *)request;
	struct plan_resp *r;

	/* hwdb extras are process-wide and must not change while reports are
	 * verified against them: they are the coordinator's --hwdb-extra. */
	if (q->hwdb_extra && q->hwdb_extra->content[0])
		return rpc_ctx_fail(ctx, GRPC_STATUS_FAILED_PRECONDITION,
				    "hwdb extras cannot be sent with a plan: start the coordinator "
				    "with --hwdb-extra FILE");
	if (!(r = calloc(1, sizeof(*r))))
		return rpc_ctx_fail(ctx, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
	sb_init(&r->out);
	dt_diags_init(&r->diags);
	pthread_mutex_lock(&c->plan_lock);
	dratopo__v1__plan_response__init(&r->m);
	r->m.exit_code = run_plan(c, q, r);
	pthread_mutex_unlock(&c->plan_lock);
	r->m.output = (char *)sb_str(&r->out);
	r->m.n_diagnostics = r->diags.n;
	r->m.diagnostics = r->diags.msgs;
	*response = &r->m.base;
	return GRPC_STATUS_OK;
}
