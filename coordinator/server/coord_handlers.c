/* coord_handlers.c - the coordinator's RPC methods: Coordinator.Report (the
 * agents) and the Fleet queries (dratopo nodes, types, hwdb show); the
 * method table the server is started with (Planner.Plan is coord_plan.c).
 *
 * A response is built in a struct resp that also owns what the message
 * points to (the reconciler's lists, copied strings), so one release frees
 * it all after the glue has packed it.
 *
 * Report answers late: the handler reconciles and queues the report, then
 * returns RPC_DEFERRED; the committer thread answers the call (report_done)
 * once the group commit holding the report is durable, so no worker
 * sleeps through a commit. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "coord.h"
#include "doc.h"
#include "hwdb.h"
#include "hwdb_catalog.h"
#include "obs_log.h"
#include "strbuf.h"

struct resp {
	union {
		ProtobufCMessage base;
		Dratopo__V1__ReportAck ack;
		Dratopo__V1__ListNodesResponse nodes;
		Dratopo__V1__GetNodeResponse node;
		Dratopo__V1__ListTypesResponse types;
		Dratopo__V1__GetHwdbEntryResponse entry;
		Dratopo__V1__RemediesResponse remedies;
		Dratopo__V1__ForgetResponse forget;
	} m;                            /* first: the glue hands &m.base back */
	struct doc_arena *arena;        /* the message's arrays and strings */
	struct rec_outcome outcome;
	bool has_outcome;
	struct coord *c;                /* Report: for report_done */
	struct rpc_deferred *call;
	int64_t sequence;
	struct rec_node_list list;
	struct rec_node one;
	bool has_one;
	struct rec_type_list type_list;
	Dratopo__V1__TopologyReport *report;
	struct strbuf text;
	struct coord_remedies rem;
	bool has_rem;
};

static struct resp *resp_new(void)
{
	struct resp *r = calloc(1, sizeof(*r));

	if (r && !(r->arena = doc_arena_new())) {
		free(r);
		return NULL;
	}
	if (r)
		sb_init(&r->text);
	return r;
}

static void resp_free(ProtobufCMessage *msg, void *user)
{
	struct resp *r = (struct resp *)msg;

	(void)user;
	if (!r)
		return;
	if (r->has_outcome)
		rec_outcome_free(&r->outcome);
	rec_node_list_free(&r->list);
	if (r->has_one)
		rec_node_free(&r->one);
	rec_type_list_free(&r->type_list);
	if (r->report)
		dratopo__v1__topology_report__free_unpacked(r->report, NULL);
	sb_free(&r->text);
	if (r->has_rem)
		coord_remedies_free(&r->rem);
	doc_arena_free(r->arena);
	free(r);
}

static void *alloc_array(struct resp *r, size_t n, size_t size)
{
	return doc_arena_alloc(r->arena, (n ? n : 1) * size);
}

static grpc_status_code no_memory(struct rpc_ctx *ctx, struct resp *r)
{
	resp_free(r ? &r->m.base : NULL, NULL);
	return rpc_ctx_fail(ctx, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
}

/* ---- Coordinator.Report ---- */

static grpc_status_code report_status(int rc)
{
	switch (rc) {
	case -EINVAL:
		return GRPC_STATUS_INVALID_ARGUMENT;
	case -ENOMEM:
		return GRPC_STATUS_RESOURCE_EXHAUSTED;
	default:
		return GRPC_STATUS_UNAVAILABLE;  /* not stored: the agent retries */
	}
}

static void log_report(const struct rec_outcome *o, int64_t sequence)
{
	struct obs_ev ev;

	obs_ev_begin(&ev, o->changed ? OBS_INFO : OBS_DEBUG, "report");
	obs_ev_str(&ev, "node", o->node.name);
	obs_ev_str(&ev, "type", o->node.instance_type);
	obs_ev_str(&ev, "verdict", rec_verdict_name(o->node.verdict));
	obs_ev_int(&ev, "seq", (long long)sequence);
	obs_ev_str(&ev, "changed", o->changed ? "true" : "false");
	if (o->node.differences.n)
		obs_ev_int(&ev, "differences", (long long)o->node.differences.n);
	if (o->node.why && *o->node.why)
		obs_ev_str(&ev, "why", o->node.why);
	obs_ev_end(&ev);
	for (size_t i = 0; i < o->also.n_learned; i++)
		obs_log(OBS_INFO, "learned", "type", o->also.learned[i].type, "shape",
			o->also.learned[i].shape_key, NULL);
	for (size_t i = 0; i < o->also.n_conflicts; i++)
		obs_log(OBS_WARN, o->also.conflicts[i].n_shapes ? "conflict" : "conflict_resolved",
			"type", o->also.conflicts[i].type, NULL);
	for (size_t i = 0; i < o->warnings.n; i++)
		obs_log(OBS_WARN, "report_warning", "node", o->node.name, "warning",
			o->warnings.msgs[i], NULL);
}

static grpc_status_code refuse_identity(struct rpc_ctx *ctx, const char *node)
{
	const char *cn = rpc_ctx_peer_cn(ctx);

	obs_log(OBS_WARN, "auth_refused", "method", "Report", "peer", rpc_ctx_peer(ctx),
		"cn", cn, "node", node, NULL);
	return rpc_ctx_fail(ctx, GRPC_STATUS_PERMISSION_DENIED,
			    "certificate %s may not report for node %s (its CN or a DNS SAN "
			    "must be the node name)", cn ? cn : "(none)", node);
}

static void refused_log(int rc, const char *node, const char *why)
{
	obs_log(rc == -EINVAL ? OBS_WARN : OBS_ERROR, "report_refused", "node", node, "error",
		why, NULL);
}

/* On the committer thread, once r's report is durable (rc 0) or not
 * stored: answer the deferred call, which frees r. */
static void report_done(void *arg, int rc, const struct dt_err *err)
{
	struct resp *r = arg;
	const struct rec_node *n = &r->outcome.node;

	if (rc) {
		const char *why = err && err->msg[0] ? err->msg : "not stored";

		refused_log(rc, n->name, why);
		rpc_deferred_finish(r->call, rpc_deferred_fail(r->call, report_status(rc),
				    "report of %s not taken: %s", n->name, why), &r->m.base);
		return;
	}
	log_report(&r->outcome, r->sequence);
	obs_inc(obs_series(r->c->m.reports, rec_verdict_name(n->verdict), NULL));
	dratopo__v1__report_ack__init(&r->m.ack);
	r->m.ack.sequence = r->sequence;
	r->m.ack.verdict = coord_verdict_pb(n->verdict);
	r->m.ack.n_differences = n->differences.n;
	r->m.ack.differences = n->differences.msgs;
	r->m.ack.conflict = n->conflicted;
	rpc_deferred_finish(r->call, GRPC_STATUS_OK, &r->m.base);
}

static grpc_status_code on_report(struct rpc_ctx *ctx, const ProtobufCMessage *request,
				  ProtobufCMessage **response)
{
	struct coord *c = rpc_ctx_user(ctx);
	const Dratopo__V1__TopologyReport *msg = (const void *)request;
	struct rec_device *devs = NULL;
	struct rec_report rr;
	struct dt_err err = { 0 };
	struct resp *r;
	int rc;

	(void)response;
	/* a follower (or a leader taking over) says so and logs nothing: the
	 * agent reconnects and reaches the leader */
	if (coord_refuse(ctx, c) != GRPC_STATUS_OK)
		return GRPC_STATUS_UNAVAILABLE;
	if (!msg->node_name[0])
		return rpc_ctx_fail(ctx, GRPC_STATUS_INVALID_ARGUMENT, "node_name is empty");
	if (!c->insecure && !rpc_ctx_peer_is(ctx, msg->node_name))
		return refuse_identity(ctx, msg->node_name);
	if (!(r = resp_new()))
		return no_memory(ctx, NULL);
	/* Set before queuing: report_done may run before coord_report returns,
	 * and from then on r is the committer's. */
	r->c = c;
	r->call = rpc_ctx_defer(ctx);
	r->sequence = msg->sequence;
	r->has_outcome = true;
	devs = calloc(msg->n_devices + 1, sizeof(*devs));
	rc = devs ? coord_report_from_pb(msg, coord_now_ns(), devs, &rr, &err) : -ENOMEM;
	if (!rc)
		rc = coord_report(c, msg, &rr, &r->outcome, report_done, r, &err);
	free(devs);
	if (rc) {       /* nothing queued: answered here, directly */
		const char *why = err.msg[0] ? err.msg : "out of memory";

		r->has_outcome = false;     /* coord_report kept none */
		resp_free(&r->m.base, NULL);
		refused_log(rc, msg->node_name, why);
		return rpc_ctx_fail(ctx, report_status(rc), "report of %s not taken: %s",
				    msg->node_name, why);
	}
	return RPC_DEFERRED;
}

/* ---- Fleet ---- */

static int verdict_from_pb(Dratopo__V1__Verdict v)
{
	for (int i = 0; i < REC_N_VERDICTS; i++)
		if (coord_verdict_pb((enum rec_verdict)i) == v)
			return i;
	return -1;
}

static grpc_status_code on_list_nodes(struct rpc_ctx *ctx, const ProtobufCMessage *request,
				      ProtobufCMessage **response)
{
	struct coord *c = rpc_ctx_user(ctx);
	const Dratopo__V1__ListNodesRequest *q = (const void *)request;
	struct rec_filter flt = REC_FILTER_ALL;
	struct dt_err err = { 0 };
	Dratopo__V1__Node *nodes;
	struct resp *r = resp_new();
	int rc;
	grpc_status_code refused = coord_refuse(ctx, c);

	if (refused != GRPC_STATUS_OK) {
		resp_free(r ? &r->m.base : NULL, NULL);
		return refused;
	}
	if (!r)
		return no_memory(ctx, NULL);
	if (q->instance_type[0])
		flt.instance_type = q->instance_type;
	if (q->verdict != DRATOPO__V1__VERDICT__VERDICT_UNSPECIFIED &&
	    (flt.verdict = verdict_from_pb(q->verdict)) < 0) {
		resp_free(&r->m.base, NULL);
		return rpc_ctx_fail(ctx, GRPC_STATUS_INVALID_ARGUMENT, "unknown verdict %d",
				    q->verdict);
	}
	if (q->plannable_filter_case == DRATOPO__V1__LIST_NODES_REQUEST__PLANNABLE_FILTER_PLANNABLE)
		flt.plannable = q->plannable;
	rc = rec_fleet_nodes(coord_fleet_get(c), &flt, coord_now_ns(), &r->list, &err);
	coord_fleet_put(c);
	if (rc)
		return no_memory(ctx, r);
	dratopo__v1__list_nodes_response__init(&r->m.nodes);
	nodes = alloc_array(r, r->list.n, sizeof(*nodes));
	r->m.nodes.nodes = alloc_array(r, r->list.n, sizeof(*r->m.nodes.nodes));
	if (!nodes || !r->m.nodes.nodes)
		return no_memory(ctx, r);
	for (size_t i = 0; i < r->list.n; i++) {
		coord_node_pb(&r->list.nodes[i], &nodes[i]);
		r->m.nodes.nodes[i] = &nodes[i];
	}
	r->m.nodes.n_nodes = r->list.n;
	*response = &r->m.base;
	return GRPC_STATUS_OK;
}

/* The stored blob is the last report that changed the record; heartbeats
 * since moved only these, which the record has. */
static int heartbeat_fields(Dratopo__V1__TopologyReport *m, const struct rec_node *n)
{
	char *boot = strdup(n->boot_id), *ver = strdup(n->agent_version);

	if (!boot || !ver) {
		free(boot);
		free(ver);
		return -ENOMEM;
	}
	/* Unpacked strings are malloc'd, absent ones protobuf-c's default. */
	if (m->boot_id != protobuf_c_empty_string)
		free(m->boot_id);
	if (m->agent_version != protobuf_c_empty_string)
		free(m->agent_version);
	m->boot_id = boot;
	m->agent_version = ver;
	m->sequence = n->sequence;
	m->probed_unix_nanos = n->probed_ns;
	return 0;
}

static grpc_status_code on_get_node(struct rpc_ctx *ctx, const ProtobufCMessage *request,
				    ProtobufCMessage **response)
{
	struct coord *c = rpc_ctx_user(ctx);
	const Dratopo__V1__GetNodeRequest *q = (const void *)request;
	struct store_node rec = { 0 };
	struct dt_err err = { 0 };
	Dratopo__V1__Node *node;
	struct resp *r = resp_new();
	int rc;
	grpc_status_code refused = coord_refuse(ctx, c);

	if (refused != GRPC_STATUS_OK) {
		resp_free(r ? &r->m.base : NULL, NULL);
		return refused;
	}
	if (!r)
		return no_memory(ctx, NULL);
	rc = rec_fleet_node(coord_fleet_get(c), q->name, coord_now_ns(), &r->one, &err);
	coord_fleet_put(c);
	if (rc == -ENOENT) {
		resp_free(&r->m.base, NULL);
		return rpc_ctx_fail(ctx, GRPC_STATUS_NOT_FOUND, "no node %s", q->name);
	}
	if (rc)
		return no_memory(ctx, r);
	r->has_one = true;
	rc = store_get_node(c->store, q->name, &rec, &err);
	if (rc && rc != -ENOENT) {
		obs_inc(obs_series(c->m.store_errors, "get_node", NULL));
		resp_free(&r->m.base, NULL);
		return rpc_ctx_fail(ctx, GRPC_STATUS_UNAVAILABLE, "%s", err.msg);
	}
	if (!rc)
		r->report = dratopo__v1__topology_report__unpack(NULL, rec.report_len, rec.report);
	store_node_done(&rec);
	if (r->report && heartbeat_fields(r->report, &r->one))
		return no_memory(ctx, r);
	node = doc_arena_alloc(r->arena, sizeof(*node));
	if (!node)
		return no_memory(ctx, r);
	coord_node_pb(&r->one, node);
	dratopo__v1__get_node_response__init(&r->m.node);
	r->m.node.node = node;
	r->m.node.last_report = r->report;
	*response = &r->m.base;
	return GRPC_STATUS_OK;
}

static grpc_status_code on_list_types(struct rpc_ctx *ctx, const ProtobufCMessage *request,
				      ProtobufCMessage **response)
{
	struct coord *c = rpc_ctx_user(ctx);
	struct dt_err err = { 0 };
	Dratopo__V1__TypeSummary *types;
	struct resp *r = resp_new();
	int rc;
	grpc_status_code refused = coord_refuse(ctx, c);

	if (refused != GRPC_STATUS_OK) {
		resp_free(r ? &r->m.base : NULL, NULL);
		return refused;
	}
	(void)request;
	if (!r)
		return no_memory(ctx, NULL);
	rc = rec_fleet_types(coord_fleet_get(c), coord_now_ns(), &r->type_list, &err);
	coord_fleet_put(c);
	if (rc)
		return no_memory(ctx, r);
	dratopo__v1__list_types_response__init(&r->m.types);
	types = alloc_array(r, r->type_list.n, sizeof(*types));
	r->m.types.types = alloc_array(r, r->type_list.n, sizeof(*r->m.types.types));
	if (!types || !r->m.types.types)
		return no_memory(ctx, r);
	for (size_t i = 0; i < r->type_list.n; i++) {
		coord_type_pb(&r->type_list.types[i], &types[i]);
		r->m.types.types[i] = &types[i];
	}
	r->m.types.n_types = r->type_list.n;
	*response = &r->m.base;
	return GRPC_STATUS_OK;
}

/* Write the coordinator's entry t: a learned entry that completes hwdb's
 * incomplete one is written merged into it (hwdb's prices and network
 * facts, the fleet's devices), as a plan's catalogue holds it. */
static int write_entry(const struct hwdb_type *t, bool learned, struct strbuf *text)
{
	struct hwdb_catalog *cat = NULL;
	const struct hwdb_type *m = t;
	int rc;

	if (learned && hwdb_lookup(t->name)) {
		if ((rc = hwdb_catalog_new(hwdb_catalog_process(), &cat, NULL)) ||
		    (rc = hwdb_catalog_add_learned(cat, t, NULL)))
			goto out;
		m = hwdb_catalog_lookup(cat, t->name);
	}
	rc = hwdb_file_write_yaml(&m, 1, text);
out:
	hwdb_catalog_free(cat);
	return rc;
}

static grpc_status_code on_get_hwdb_entry(struct rpc_ctx *ctx, const ProtobufCMessage *request,
					  ProtobufCMessage **response)
{
	struct coord *c = rpc_ctx_user(ctx);
	const Dratopo__V1__GetHwdbEntryRequest *q = (const void *)request;
	const struct hwdb_type *t;
	bool learned = false;
	struct resp *r = resp_new();
	int rc;
	grpc_status_code refused = coord_refuse(ctx, c);

	if (refused != GRPC_STATUS_OK) {
		resp_free(r ? &r->m.base : NULL, NULL);
		return refused;
	}
	if (!r)
		return no_memory(ctx, NULL);
	/* The entry lives as long as the fleet: write it with the fleet held. */
	t = rec_fleet_hwdb_lookup(coord_fleet_get(c), q->instance_type, &learned);
	rc = t ? write_entry(t, learned, &r->text) : -ENOENT;
	coord_fleet_put(c);
	if (rc == -ENOENT) {
		resp_free(&r->m.base, NULL);
		return rpc_ctx_fail(ctx, GRPC_STATUS_NOT_FOUND,
				    "%s: not in hwdb and not learned (yet)", q->instance_type);
	}
	if (rc || sb_error(&r->text))
		return no_memory(ctx, r);
	dratopo__v1__get_hwdb_entry_response__init(&r->m.entry);
	r->m.entry.instance_type = doc_arena_strdup(r->arena, q->instance_type);
	r->m.entry.source = learned ? DRATOPO__V1__HWDB_SOURCE__HWDB_SOURCE_LEARNED
				    : DRATOPO__V1__HWDB_SOURCE__HWDB_SOURCE_KNOWN;
	r->m.entry.entry_yaml = (char *)sb_str(&r->text);
	if (!r->m.entry.instance_type)
		return no_memory(ctx, r);
	*response = &r->m.base;
	return GRPC_STATUS_OK;
}

static grpc_status_code on_remedies(struct rpc_ctx *ctx, const ProtobufCMessage *request,
				    ProtobufCMessage **response)
{
	struct coord *c = rpc_ctx_user(ctx);
	const Dratopo__V1__RemediesRequest *q = (const void *)request;
	struct dt_err err = { 0 };
	struct resp *r = resp_new();
	grpc_status_code refused = coord_refuse(ctx, c);

	if (refused != GRPC_STATUS_OK) {
		resp_free(r ? &r->m.base : NULL, NULL);
		return refused;
	}
	if (!r)
		return no_memory(ctx, NULL);
	if (coord_remedies(c, q->node, &r->rem, &err)) {
		resp_free(&r->m.base, NULL);
		return rpc_ctx_fail(ctx, GRPC_STATUS_INTERNAL, "remedies: %s", err.msg);
	}
	r->has_rem = true;
	if (coord_remedies_anchor(&r->rem, &err)) {
		resp_free(&r->m.base, NULL);
		return rpc_ctx_fail(ctx, GRPC_STATUS_INTERNAL, "remedies: %s", err.msg);
	}
	dratopo__v1__remedies_response__init(&r->m.remedies);
	r->m.remedies.yaml = (char *)sb_str(&r->rem.yaml);
	r->m.remedies.device_taint_rules = (uint32_t)r->rem.device_taint_rules;
	r->m.remedies.node_taints = (uint32_t)r->rem.node_taints;
	r->m.remedies.lifted = r->rem.lifted;
	r->m.remedies.n_lifted = r->rem.n_lifted;
	r->m.remedies.lifts_yaml = (char *)sb_str(&r->rem.lifts);
	*response = &r->m.base;
	return GRPC_STATUS_OK;
}

/* Agents report; they do not administer: a certificate that names a node
 * of the fleet may not forget one. */
static bool peer_is_agent(struct coord *c, struct rpc_ctx *ctx)
{
	const char *cn = rpc_ctx_peer_cn(ctx);
	struct rec_node n;
	bool agent;

	if (c->insecure || !cn)
		return false;
	agent = rec_fleet_node(coord_fleet_get(c), cn, coord_now_ns(), &n, NULL) == 0;
	coord_fleet_put(c);
	if (agent)
		rec_node_free(&n);
	return agent;
}

static grpc_status_code on_forget(struct rpc_ctx *ctx, const ProtobufCMessage *request,
				  ProtobufCMessage **response)
{
	struct coord *c = rpc_ctx_user(ctx);
	const Dratopo__V1__ForgetRequest *q = (const void *)request;
	struct dt_err err = { 0 };
	struct resp *r;
	int rc;

	if (!q->node[0])
		return rpc_ctx_fail(ctx, GRPC_STATUS_INVALID_ARGUMENT, "node is empty");
	if (peer_is_agent(c, ctx)) {
		obs_log(OBS_WARN, "auth_refused", "method", "Forget", "peer", rpc_ctx_peer(ctx),
			"cn", rpc_ctx_peer_cn(ctx), "node", q->node, NULL);
		return rpc_ctx_fail(ctx, GRPC_STATUS_PERMISSION_DENIED,
				    "certificate %s is a node's: agents may not forget nodes",
				    rpc_ctx_peer_cn(ctx));
	}
	rc = coord_forget(c, q->node, &err);
	if (rc == -ENOENT)
		return rpc_ctx_fail(ctx, GRPC_STATUS_NOT_FOUND, "no node %s", q->node);
	if (rc)
		return rpc_ctx_fail(ctx, rc == -EBUSY || rc == -EAGAIN ? GRPC_STATUS_UNAVAILABLE
				    : GRPC_STATUS_INTERNAL, "forget %s: %s", q->node, err.msg);
	if (!(r = resp_new()))
		return no_memory(ctx, NULL);
	dratopo__v1__forget_response__init(&r->m.forget);
	r->m.forget.node = doc_arena_strdup(r->arena, q->node);
	if (!r->m.forget.node)
		return no_memory(ctx, r);
	*response = &r->m.base;
	return GRPC_STATUS_OK;
}

const struct rpc_method coord_methods[] = {
	{ "/dratopo.v1.Coordinator/Report", &dratopo__v1__topology_report__descriptor,
	  on_report, resp_free },
	{ "/dratopo.v1.Fleet/ListNodes", &dratopo__v1__list_nodes_request__descriptor,
	  on_list_nodes, resp_free },
	{ "/dratopo.v1.Fleet/GetNode", &dratopo__v1__get_node_request__descriptor,
	  on_get_node, resp_free },
	{ "/dratopo.v1.Fleet/ListTypes", &dratopo__v1__list_types_request__descriptor,
	  on_list_types, resp_free },
	{ "/dratopo.v1.Fleet/GetHwdbEntry", &dratopo__v1__get_hwdb_entry_request__descriptor,
	  on_get_hwdb_entry, resp_free },
	{ "/dratopo.v1.Fleet/Remedies", &dratopo__v1__remedies_request__descriptor,
	  on_remedies, resp_free },
	{ "/dratopo.v1.Planner/Plan", &dratopo__v1__plan_request__descriptor,
	  coord_plan, coord_plan_release },
	/* New methods go last: the fuzz corpus picks methods by index. */
	{ "/dratopo.v1.Fleet/Forget", &dratopo__v1__forget_request__descriptor,
	  on_forget, resp_free },
};
const size_t coord_n_methods = sizeof(coord_methods) / sizeof(coord_methods[0]);
