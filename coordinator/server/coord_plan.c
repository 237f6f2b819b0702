/* coord_plan.c - Planner.Plan: `dratopo plan` against the live fleet.
 *
 * The manifests go through plan_execute, the pipeline `dratopo plan -f`
 * runs, so they are loaded, checked and answered exactly as offline. Its
 * prepare step (prepare_fleet) adds, once they passed, what the cluster
 * runs when a controller set the cluster source (coord_set_cluster_source),
 * then the fleet: every plannable node joins the set as an existing Node
 * (labels and allocatable of its effective hwdb entry) with the
 * ResourceSlices predicted from its last report. Nodes in drift, stale,
 * unknown or in conflict are left out. Devices in use count as offline,
 * from the manifests and the cluster source alike: claims allocated, and
 * the claims of pods bound to a node (the planner allocates on that node
 * first those the input shows unallocated). The plan's instance types are
 * a catalogue of its own (plan_catalog): the coordinator's hwdb, the types
 * the fleet learned, and the request's extras; nothing any other call
 * reads changes. Learned types have no price: their nodes serve pods as
 * existing capacity, and they become launch candidates only when an extra
 * (the coordinator's --hwdb-extra or the request's) or a NodeOverlay in the
 * manifests gives them one; until then the plan's reasons say so. A Node of
 * the same name in the manifests wins over the fleet's. The answer is the
 * CLI's output in the requested format and the exit code it would have.
 * Plans run side by side, at most --max-plans at once (coord_plan). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "coord.h"
#include "hwdb.h"
#include "hwdb_catalog.h"
#include "model.h"
#include "plan.h"
#include "strbuf.h"

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
			plan_node_yaml(list.nodes[i].name, list.nodes[i].instance_type,
				       rec_fleet_hwdb_lookup(f, list.nodes[i].instance_type, NULL),
				       &sb);
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

/* One extra of the request into cat; a bad one is the caller's input
 * error, worded as the CLI words it. */
static int load_extra(struct hwdb_catalog *cat, const Dratopo__V1__Manifest *m,
		      struct dt_diags *diags)
{
	struct dt_err err = { 0 };

	if (!m)
		return 0;
	if (hwdb_catalog_load_buf(cat, m->content, strlen(m->content),
				  m->name[0] ? m->name : "(hwdb extra)", &err)) {
		dt_diags_add(diags, "dratopo plan: --hwdb-extra: %s", err.msg);
		return -EINVAL;
	}
	return 0;
}

/* The instance types of this plan: the coordinator's hwdb (built-in and
 * its --hwdb-extra), then the types the fleet learned (unless hwdb has the
 * name), then the request's extras in order, which replace entries of the
 * same name: that is how a request gives a learned type its price. */
static int plan_catalog(struct rec_fleet *f, const Dratopo__V1__PlanRequest *q,
			struct hwdb_catalog **out, struct dt_diags *diags)
{
	struct dt_err err = { 0 };
	int rc;

	if ((rc = hwdb_catalog_new(hwdb_catalog_process(), out, &err)) ||
	    (rc = rec_fleet_add_learned(f, *out, &err))) {
		dt_diags_add(diags, "dratopo plan: %s", err.msg);
		return rc;
	}
	rc = load_extra(*out, q->hwdb_extra, diags);
	for (size_t i = 0; !rc && i < q->n_hwdb_extras; i++)
		rc = load_extra(*out, q->hwdb_extras[i], diags);
	return rc;
}

/* What plan_execute's prepare step needs: the request, and the catalogue
 * it builds (freed after the report, which borrows from it). */
struct fleet_prep {
	struct coord *c;
	const Dratopo__V1__PlanRequest *q;
	struct hwdb_catalog *cat;
};

void coord_set_cluster_source(struct coord *c, const struct coord_cluster_source *src)
{
	c->plan_source = src ? *src : (struct coord_cluster_source){ 0 };
}

/* What the cluster runs (when a controller set the source), then the
 * plan's catalogue and the fleet's nodes, under one hold of the fleet so
 * that both see the same fleet. */
static int prepare_fleet(void *arg, struct model_set *set, struct plan_options *opts,
			 struct dt_diags *diags)
{
	struct fleet_prep *p = arg;
	const struct coord_cluster_source *cs = &p->c->plan_source;
	struct rec_fleet *f;
	struct dt_err err = { 0 };
	int rc;

	if (cs->add && (rc = cs->add(cs->arg, set, diags)))
		return rc;
	f = coord_fleet_get(p->c);
	rc = plan_catalog(f, p->q, &p->cat, diags);

	if (!rc && (rc = add_fleet(f, set, diags, &err)))
		dt_diags_add(diags, "dratopo plan: %s", err.msg);
	coord_fleet_put(p->c);
	opts->catalog = p->cat;
	return rc;
}

static enum plan_format plan_format(Dratopo__V1__PlanFormat fmt)
{
	switch (fmt) {
	case DRATOPO__V1__PLAN_FORMAT__PLAN_FORMAT_YAML:
		return PLAN_FORMAT_YAML;
	case DRATOPO__V1__PLAN_FORMAT__PLAN_FORMAT_TABLE:
		return PLAN_FORMAT_TABLE;
	case DRATOPO__V1__PLAN_FORMAT__PLAN_FORMAT_JSON_COMPACT:
		return PLAN_FORMAT_JSON_COMPACT;
	default:
		return PLAN_FORMAT_JSON;
	}
}

/* Plan; the exit code the CLI would have. Its output goes to r->out, its
 * messages to r->diags as the CLI prints them. */
static int run_plan(struct coord *c, const Dratopo__V1__PlanRequest *q, struct plan_resp *r)
{
	struct plan_manifest *m = calloc(q->n_manifests + 1, sizeof(*m));
	struct fleet_prep prep = { .c = c, .q = q };
	struct plan_request rq = { .manifests = m, .n_manifests = q->n_manifests,
				   .format = plan_format(q->format), .prepare = prepare_fleet,
				   .prepare_arg = &prep, .who = "dratopo plan" };
	struct plan_report rep;
	int code;

	if (!m) {
		dt_diags_add(&r->diags, "dratopo plan: out of memory");
		return PLAN_EXIT_FAIL;
	}
	for (size_t i = 0; i < q->n_manifests; i++) {
		m[i].name = q->manifests[i]->name[0] ? q->manifests[i]->name : "(manifest)";
		m[i].content = q->manifests[i]->content;
		m[i].len = strlen(m[i].content);
	}
	code = plan_execute(&rq, &rep);
	for (size_t i = 0; i < rep.warnings.n; i++)
		dt_diags_add(&r->diags, "warning: %s", rep.warnings.msgs[i]);
	for (size_t i = 0; i < rep.diags.n; i++)
		dt_diags_add(&r->diags, "%s", rep.diags.msgs[i]);
	r->diags.dropped += rep.warnings.dropped + rep.diags.dropped;
	r->out = rep.output;            /* the response's now */
	sb_init(&rep.output);
	plan_report_free(&rep);
	hwdb_catalog_free(prep.cat);    /* after the report, which borrows from it */
	free(m);
	return code;
}

grpc_status_code coord_plan(struct rpc_ctx *ctx, const ProtobufCMessage *request,
			    ProtobufCMessage **response)
{
	struct coord *c = rpc_ctx_user(ctx);
	const Dratopo__V1__PlanRequest *q = (const void *)request;
	struct plan_resp *r;
	grpc_status_code refused = coord_refuse(ctx, c);

	if (refused != GRPC_STATUS_OK)
		return refused;
	if (atomic_fetch_add(&c->plans_running, 1) >= c->max_plans) {
		atomic_fetch_sub(&c->plans_running, 1);
		return rpc_ctx_fail(ctx, GRPC_STATUS_RESOURCE_EXHAUSTED,
				    "%u plans are running already (--max-plans): try again",
				    c->max_plans);
	}
	if (!(r = calloc(1, sizeof(*r)))) {
		atomic_fetch_sub(&c->plans_running, 1);
		return rpc_ctx_fail(ctx, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
	}
	sb_init(&r->out);
	dt_diags_init(&r->diags);
	dratopo__v1__plan_response__init(&r->m);
	r->m.exit_code = run_plan(c, q, r);
	atomic_fetch_sub(&c->plans_running, 1);
	r->m.output = (char *)sb_str(&r->out);
	r->m.n_diagnostics = r->diags.n;
	r->m.diagnostics = r->diags.msgs;
	*response = &r->m.base;
	return GRPC_STATUS_OK;
}
