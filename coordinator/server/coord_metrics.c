/* coord_metrics.c - what /metrics shows about the coordinator: reports by
 * verdict, RPC latency per method and refusals per status, store errors
 * and commit times, and, computed at scrape time from the fleet, nodes by
 * type and verdict, learned types and conflicts. */
#include <string.h>

#include "coord.h"
#include "obs_log.h"

static const char *const by_verdict[] = { "verdict", NULL };
static const char *const by_method[] = { "method", NULL };
static const char *const by_method_code[] = { "method", "code", NULL };
static const char *const by_op[] = { "op", NULL };
static const char *const by_type_verdict[] = { "instance_type", "verdict", NULL };
static const char *const by_type[] = { "instance_type", NULL };
static const double batch_bounds[] = { 1, 2, 4, 8, 16, 32, 64, 128, 256, 512 };

/* The method's short name for a label; "unknown" for paths not in the
 * table, so a client cannot make up series. */
static const char *method_label(const char *path)
{
	for (size_t i = 0; i < coord_n_methods; i++)
		if (!strcmp(coord_methods[i].path, path))
			return strrchr(path, '/') + 1;
	return "unknown";
}

void coord_observe_rpc(void *user, const char *method, grpc_status_code code, double seconds)
{
	struct coord *c = user;
	const char *m = method_label(method);

	obs_observe(obs_series(c->m.rpc_seconds, m, NULL), seconds);
	if (code != GRPC_STATUS_OK)
		obs_inc(obs_series(c->m.refused, m, rpc_status_name(code), NULL));
}

static void collect_nodes(struct obs_collector *col, void *arg)
{
	struct coord *c = arg;
	struct rec_type_list tl = { 0 };
	int rc = rec_fleet_types(coord_fleet_get(c), coord_now_ns(), &tl, NULL);

	coord_fleet_put(c);
	for (size_t i = 0; !rc && i < tl.n; i++)
		for (int v = 0; v < REC_N_VERDICTS; v++)
			obs_collect(col, (double)tl.types[i].by_verdict[v], tl.types[i].type,
				    rec_verdict_name((enum rec_verdict)v), NULL);
	rec_type_list_free(&tl);
}

static void collect_plannable(struct obs_collector *col, void *arg)
{
	struct coord *c = arg;
	struct rec_type_list tl = { 0 };
	int rc = rec_fleet_types(coord_fleet_get(c), coord_now_ns(), &tl, NULL);

	coord_fleet_put(c);
	for (size_t i = 0; !rc && i < tl.n; i++)
		obs_collect(col, (double)tl.types[i].plannable, tl.types[i].type, NULL);
	rec_type_list_free(&tl);
}

/* Types whose entry was learned, and unknown types in conflict. */
static void count_types(struct coord *c, size_t *learned, size_t *conflicts)
{
	struct rec_type_list tl = { 0 };
	int rc = rec_fleet_types(coord_fleet_get(c), coord_now_ns(), &tl, NULL);

	coord_fleet_put(c);
	*learned = *conflicts = 0;
	for (size_t i = 0; !rc && i < tl.n; i++) {
		*learned += tl.types[i].source == REC_SOURCE_LEARNED;
		*conflicts += tl.types[i].conflicted;
	}
	rec_type_list_free(&tl);
}

static void collect_learned(struct obs_collector *col, void *arg)
{
	size_t learned, conflicts;

	count_types(arg, &learned, &conflicts);
	obs_collect(col, (double)learned, NULL);
}

static void collect_conflicts(struct obs_collector *col, void *arg)
{
	size_t learned, conflicts;

	count_types(arg, &learned, &conflicts);
	obs_collect(col, (double)conflicts, NULL);
}

/* The remedies advised now (computed per scrape: only drifted nodes cost). */
static void count_remedies(struct coord *c, size_t *rules, size_t *node_taints)
{
	struct coord_remedies r;

	*rules = *node_taints = 0;
	if (coord_remedies(c, NULL, &r, NULL))
		return;
	*rules = r.device_taint_rules;
	*node_taints = r.node_taints;
	coord_remedies_free(&r);
}

static void collect_rules(struct obs_collector *col, void *arg)
{
	size_t rules, node_taints;

	count_remedies(arg, &rules, &node_taints);
	obs_collect(col, (double)rules, NULL);
}

static void collect_node_taints(struct obs_collector *col, void *arg)
{
	size_t rules, node_taints;

	count_remedies(arg, &rules, &node_taints);
	obs_collect(col, (double)node_taints, NULL);
}

/* Every verdict, and the failures a running coordinator meets, show from
 * the start at 0: an alert on rate() needs the series before the first
 * failure, not from it. */
static void zero_series(struct coord *c)
{
	static const char *const codes[] = {
		"CANCELLED", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "PERMISSION_DENIED",
		"RESOURCE_EXHAUSTED", "UNAVAILABLE", "INTERNAL", NULL,
	};
	static const char *const store_ops[] = { "commit", "get_node", NULL };

	for (int v = 0; v < REC_N_VERDICTS; v++)
		obs_add(obs_series(c->m.reports, rec_verdict_name((enum rec_verdict)v), NULL), 0);
	for (size_t i = 0; i < coord_n_methods; i++)
		for (size_t k = 0; codes[k]; k++)
			obs_add(obs_series(c->m.refused, method_label(coord_methods[i].path),
					   codes[k], NULL), 0);
	for (size_t i = 0; store_ops[i]; i++)
		obs_add(obs_series(c->m.store_errors, store_ops[i], NULL), 0);
}

int coord_metrics_init(struct coord *c, struct dt_err *err)
{
	struct obs_registry *reg;
	int rc = obs_registry_new(&c->m.reg, err);

	if (rc)
		return rc;
	reg = c->m.reg;
	rc = obs_counter_new(reg, "dratopo_reports_total",
			     "Reports acknowledged (durable), by the coordinator's verdict.",
			     by_verdict, &c->m.reports, err);
	if (!rc)
		rc = obs_counter_new(reg, "dratopo_rpc_failed_total",
				     "Calls answered with a status other than OK.", by_method_code,
				     &c->m.refused, err);
	if (!rc)
		rc = obs_histogram_new(reg, "dratopo_rpc_duration_seconds",
				       "Time from a call's arrival to its answer.", by_method,
				       obs_latency_bounds, obs_latency_nbounds, &c->m.rpc_seconds,
				       err);
	if (!rc)
		rc = obs_counter_new(reg, "dratopo_store_errors_total",
				     "Store operations that failed.", by_op, &c->m.store_errors, err);
	if (!rc)
		rc = obs_histogram_new(reg, "dratopo_store_commit_seconds",
				       "Durable commits (one transaction, one flush).", NULL,
				       obs_latency_bounds, obs_latency_nbounds, &c->m.commit_seconds,
				       err);
	if (!rc)
		rc = obs_histogram_new(reg, "dratopo_store_commit_reports",
				       "Reports written by one commit (group commit).", NULL,
				       batch_bounds, sizeof(batch_bounds) / sizeof(batch_bounds[0]),
				       &c->m.commit_reports, err);
	if (!rc)
		rc = obs_gauge_func_new(reg, "dratopo_nodes", "Nodes by instance type and verdict.",
					by_type_verdict, collect_nodes, c, err);
	if (!rc)
		rc = obs_gauge_func_new(reg, "dratopo_nodes_plannable",
					"Nodes planning may use now, by instance type.", by_type,
					collect_plannable, c, err);
	if (!rc)
		rc = obs_gauge_func_new(reg, "dratopo_learned_types",
					"Instance types whose entry was learned from the fleet.", NULL,
					collect_learned, c, err);
	if (!rc)
		rc = obs_gauge_func_new(reg, "dratopo_conflicts",
					"Unknown instance types whose nodes disagree on the shape.",
					NULL, collect_conflicts, c, err);
	if (!rc)
		rc = obs_gauge_func_new(reg, "dratopo_remedy_device_taint_rules",
					"DeviceTaintRules advised now for devices of drifted nodes.",
					NULL, collect_rules, c, err);
	if (!rc)
		rc = obs_gauge_func_new(reg, "dratopo_remedy_node_taints",
					"Node taints advised now (drifted nodes unfit as a whole).",
					NULL, collect_node_taints, c, err);
	if (!rc)
		zero_series(c);
	return rc;
}

void coord_metrics_free(struct coord *c)
{
	obs_registry_free(c->m.reg);
	c->m.reg = NULL;
}
