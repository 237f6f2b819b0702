/* test_coord.c - the coordinator's RPC handlers (dt_coord) called directly,
 * without the network (coord_invoke): the report's identity check (the
 * certificate's CN or a DNS SAN against the node name), bytes that are not
 * the method's message, the verdict flow over the agent's sysfs fixtures,
 * heartbeats and replays, the fleet queries, and a store that fails its
 * commits: the report is answered UNAVAILABLE and the fleet in memory is
 * set back to what the store holds; plans that bring their own hwdb
 * extras (a learned type priced for one plan, concurrent plans that must
 * not see each other's). The failing store is a stub backend over a real
 * memory: store (store_wrap, the store's backend interface). */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dt_test.h"

#include "agent_report.h"
#include "coord.h"
#include "hwdb.h"
#include "model.h"
#include "probe.h"
#include "remedy.h"
#include "store_backend.h"

#define FIXTURES DT_BINARY_DIR "/fixtures/agent"
#define REPORT "/dratopo.v1.Coordinator/Report"
#define LIST_NODES "/dratopo.v1.Fleet/ListNodes"
#define GET_NODE "/dratopo.v1.Fleet/GetNode"

static int suite_init(void)
{
	struct stat st;
	char cmd[8192];

	if (stat(FIXTURES "/p5.48xlarge-degraded/sys", &st) == 0)
		return 0;
	snprintf(cmd, sizeof(cmd), "bash '%s/tests/fixtures/agent/mksysfs.sh' '%s' >/dev/null",
		 DT_SOURCE_DIR, FIXTURES);
	return system(cmd) == 0 ? 0 : -1;
}

/* ---- a store that fails on demand ---- */

struct flaky {
	struct store *real;             /* a memory: store */
	int fail;                       /* commits fail with this while non-zero */
	int commits;
};

static int fl_commit(void *impl, const struct store_batch *b, size_t n, struct dt_err *err)
{
	struct flaky *f = impl;

	f->commits++;
	if (f->fail)
		return dt_err_set(err, f->fail, "flaky: commit refused");
	return store_commit(f->real, b, n, err);
}

static int fl_get(void *impl, const char *name, struct store_node *out, struct dt_err *err)
{
	return store_get_node(((struct flaky *)impl)->real, name, out, err);
}

static int fl_nodes(void *impl, store_node_fn fn, void *arg, struct dt_err *err)
{
	return store_list_nodes(((struct flaky *)impl)->real, fn, arg, err);
}

static int fl_learned(void *impl, store_learned_fn fn, void *arg, struct dt_err *err)
{
	return store_list_learned(((struct flaky *)impl)->real, fn, arg, err);
}

static int fl_conflicts(void *impl, store_conflict_fn fn, void *arg, struct dt_err *err)
{
	return store_list_conflicts(((struct flaky *)impl)->real, fn, arg, err);
}

static int fl_ready(void *impl, struct dt_err *err)
{
	struct flaky *f = impl;

	return f->fail ? dt_err_set(err, f->fail, "flaky") : store_ready(f->real, err);
}

static void fl_close(void *impl)
{
	struct flaky *f = impl;

	store_close(f->real);
	f->real = NULL;
}

static const struct store_ops flaky_ops = {
	"flaky", fl_commit, fl_get, fl_nodes, fl_learned, fl_conflicts, fl_ready, fl_close,
};

static struct flaky flaky;

/* A coordinator over the flaky store (insecure: no identities checked). */
static void open_coord(struct coord *c, bool insecure)
{
	struct dt_err err = { 0 };
	struct coord_opts o = { .insecure = insecure };

	memset(&flaky, 0, sizeof(flaky));
	CU_ASSERT_EQUAL_FATAL(store_open("memory:", NULL, &flaky.real, &err), 0);
	CU_ASSERT_EQUAL_FATAL(store_wrap(&flaky_ops, &flaky, "flaky", &o.store, &err), 0);
	if (coord_open(c, &o, &err))
		fprintf(stderr, "\n  coord_open: %s\n", err.msg);
	CU_ASSERT_TRUE_FATAL(c->fleet != NULL);
}

/* ---- reports from the fixtures ---- */

/* The packed report of fixture as node, sequence seq of run. */
static uint8_t *report_of(const char *fixture, const char *node, const char *run, uint64_t seq,
			  size_t *len)
{
	struct agent_report_info info = { node, run, seq, 1700000000000000000LL, "test" };
	struct topo t;
	struct dt_diags w;
	struct dt_err err = { 0 };
	uint8_t *buf = NULL;
	char root[4096];

	snprintf(root, sizeof(root), "%s/%s", FIXTURES, fixture);
	dt_diags_init(&w);
	CU_ASSERT_EQUAL_FATAL(probe_run(root, NULL, &t, &err), 0);
	CU_ASSERT_EQUAL(agent_report_pack(&t, &info, &buf, len, &w, &err), 0);
	topo_free(&t);
	dt_diags_free(&w);
	CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
	return buf;
}

/* Report and return the status; *ack (may be NULL) gets the answer. */
static grpc_status_code report(struct coord *c, const char *fixture, const char *node,
			       uint64_t seq, const struct rpc_peer *peer,
			       Dratopo__V1__ReportAck **ack, char *details)
{
	struct rpc_invoke_result res;
	size_t len;
	uint8_t *buf = report_of(fixture, node, "run-1", seq, &len);

	CU_ASSERT_EQUAL_FATAL(coord_invoke(c, REPORT, buf, len, peer, &res), 0);
	free(buf);
	if (ack)
		*ack = res.status == GRPC_STATUS_OK
			? dratopo__v1__report_ack__unpack(NULL, res.response_len, res.response)
			: NULL;
	if (details)
		snprintf(details, 512, "%s", res.details);
	rpc_invoke_result_free(&res);
	return res.status;
}

static Dratopo__V1__ListNodesResponse *list_nodes(struct coord *c)
{
	Dratopo__V1__ListNodesRequest q = DRATOPO__V1__LIST_NODES_REQUEST__INIT;
	struct rpc_invoke_result res;
	uint8_t buf[64];
	size_t len = protobuf_c_message_pack(&q.base, buf);
	Dratopo__V1__ListNodesResponse *r;

	CU_ASSERT_EQUAL_FATAL(coord_invoke(c, LIST_NODES, buf, len, NULL, &res), 0);
	CU_ASSERT_EQUAL_FATAL(res.status, GRPC_STATUS_OK);
	r = dratopo__v1__list_nodes_response__unpack(NULL, res.response_len, res.response);
	rpc_invoke_result_free(&res);
	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	return r;
}

static Dratopo__V1__GetNodeResponse *get_node(struct coord *c, const char *name)
{
	Dratopo__V1__GetNodeRequest q = DRATOPO__V1__GET_NODE_REQUEST__INIT;
	struct rpc_invoke_result res;
	uint8_t buf[512];
	size_t len;
	Dratopo__V1__GetNodeResponse *r = NULL;

	q.name = (char *)name;
	len = protobuf_c_message_pack(&q.base, buf);
	CU_ASSERT_EQUAL_FATAL(coord_invoke(c, GET_NODE, buf, len, NULL, &res), 0);
	if (res.status == GRPC_STATUS_OK)
		r = dratopo__v1__get_node_response__unpack(NULL, res.response_len, res.response);
	rpc_invoke_result_free(&res);
	return r;
}

/* ---- tests ---- */

static void test_identity(void)
{
	static const char *const sans[] = { "gpu-a.cluster.local", "ip-10-0-0-1.ec2.internal" };
	const struct rpc_peer by_cn = { "test", "gpu-a", NULL, 0 };
	const struct rpc_peer by_san = { "test", "someone", sans, 2 };
	const struct rpc_peer other = { "test", "gpu-b", NULL, 0 };
	const struct rpc_peer none = { "test", NULL, NULL, 0 };
	struct coord c;
	char details[512];

	open_coord(&c, false);
	CU_ASSERT_EQUAL(report(&c, "p5.48xlarge", "gpu-a", 1, &by_cn, NULL, NULL), GRPC_STATUS_OK);
	CU_ASSERT_EQUAL(report(&c, "p5.48xlarge", "ip-10-0-0-1.ec2.internal", 1, &by_san, NULL,
			       NULL), GRPC_STATUS_OK);
	CU_ASSERT_EQUAL(report(&c, "p5.48xlarge", "gpu-a", 2, &other, NULL, details),
			GRPC_STATUS_PERMISSION_DENIED);
	CU_ASSERT_PTR_NOT_NULL(strstr(details, "gpu-b may not report for node gpu-a"));
	CU_ASSERT_EQUAL(report(&c, "p5.48xlarge", "gpu-c", 1, &none, NULL, details),
			GRPC_STATUS_PERMISSION_DENIED);
	CU_ASSERT_PTR_NOT_NULL(strstr(details, "(none)"));
	CU_ASSERT_EQUAL(report(&c, "p5.48xlarge", "gpu-c", 1, NULL, NULL, NULL),
			GRPC_STATUS_PERMISSION_DENIED);
	coord_close(&c);
}

static void test_garbage(void)
{
	static const uint8_t junk[] = { 0xff, 0xff, 0xff, 0xff, 0x0f, 0x12, 0x80 };
	struct rpc_invoke_result res;
	struct coord c;

	open_coord(&c, true);
	CU_ASSERT_EQUAL(coord_invoke(&c, REPORT, junk, sizeof(junk), NULL, &res), 0);
	CU_ASSERT_EQUAL(res.status, GRPC_STATUS_INVALID_ARGUMENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(res.details, "dratopo.v1.TopologyReport"));
	rpc_invoke_result_free(&res);
	/* An empty message is a report without a node name. */
	CU_ASSERT_EQUAL(coord_invoke(&c, REPORT, NULL, 0, NULL, &res), 0);
	CU_ASSERT_EQUAL(res.status, GRPC_STATUS_INVALID_ARGUMENT);
	DT_ASSERT_STR(res.details, "node_name is empty");
	rpc_invoke_result_free(&res);
	CU_ASSERT_EQUAL(coord_invoke(&c, "/dratopo.v1.Fleet/Nope", junk, sizeof(junk), NULL,
				     &res), 0);
	CU_ASSERT_EQUAL(res.status, GRPC_STATUS_UNIMPLEMENTED);
	rpc_invoke_result_free(&res);
	CU_ASSERT_EQUAL(coord_invoke(&c, LIST_NODES, junk, sizeof(junk), NULL, &res), 0);
	CU_ASSERT_EQUAL(res.status, GRPC_STATUS_INVALID_ARGUMENT);
	rpc_invoke_result_free(&res);
	CU_ASSERT_EQUAL(flaky.commits, 0);              /* nothing reached the store */
	coord_close(&c);
}

static void test_verdicts(void)
{
	Dratopo__V1__ReportAck *ack;
	Dratopo__V1__ListNodesResponse *nodes;
	Dratopo__V1__GetNodeResponse *one;
	struct coord c;
	int commits;

	open_coord(&c, true);
	CU_ASSERT_EQUAL(report(&c, "p5.48xlarge", "good", 1, NULL, &ack, NULL), GRPC_STATUS_OK);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ack);
	CU_ASSERT_EQUAL(ack->verdict, DRATOPO__V1__VERDICT__VERDICT_MATCH);
	CU_ASSERT_EQUAL(ack->sequence, 1);
	CU_ASSERT_FALSE(ack->conflict);
	dratopo__v1__report_ack__free_unpacked(ack, NULL);
	CU_ASSERT_EQUAL(report(&c, "p5.48xlarge-degraded", "bad", 1, NULL, &ack, NULL),
			GRPC_STATUS_OK);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ack);
	CU_ASSERT_EQUAL(ack->verdict, DRATOPO__V1__VERDICT__VERDICT_DRIFT);
	CU_ASSERT(ack->n_differences > 0);
	dratopo__v1__report_ack__free_unpacked(ack, NULL);

	/* A heartbeat and a replay: both acknowledged; the record follows
	 * the heartbeat, the replay changes nothing. */
	commits = flaky.commits;
	CU_ASSERT_EQUAL(report(&c, "p5.48xlarge", "good", 7, NULL, NULL, NULL), GRPC_STATUS_OK);
	CU_ASSERT_EQUAL(flaky.commits, commits + 1);
	CU_ASSERT_EQUAL(report(&c, "p5.48xlarge", "good", 3, NULL, &ack, NULL), GRPC_STATUS_OK);
	CU_ASSERT_EQUAL(ack->sequence, 3);
	dratopo__v1__report_ack__free_unpacked(ack, NULL);
	one = get_node(&c, "good");
	CU_ASSERT_PTR_NOT_NULL_FATAL(one);
	CU_ASSERT_PTR_NOT_NULL_FATAL(one->last_report);
	CU_ASSERT_EQUAL(one->last_report->sequence, 7);
	DT_ASSERT_STR(one->last_report->boot_id, "run-1");
	dratopo__v1__get_node_response__free_unpacked(one, NULL);
	CU_ASSERT_PTR_NULL(get_node(&c, "nobody"));

	nodes = list_nodes(&c);
	CU_ASSERT_EQUAL_FATAL(nodes->n_nodes, 2);
	DT_ASSERT_STR(nodes->nodes[0]->name, "bad");
	CU_ASSERT_FALSE(nodes->nodes[0]->plannable);
	CU_ASSERT_PTR_NOT_NULL(strstr(nodes->nodes[0]->why, "drift:"));
	DT_ASSERT_STR(nodes->nodes[1]->name, "good");
	CU_ASSERT(nodes->nodes[1]->plannable);
	dratopo__v1__list_nodes_response__free_unpacked(nodes, NULL);
	coord_close(&c);
}

/* agent.proto reserves field 12, an older agent's predicted slices: the
 * agent sends no such field, and a report from an older agent that does is
 * taken, and stored with the fields the coordinator knows only. */
static void test_reserved_slices_field(void)
{
	static const char yaml[] = "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\n";
	Dratopo__V1__TopologyReport *m;
	Dratopo__V1__GetNodeResponse *one;
	struct rpc_invoke_result res;
	struct coord c;
	size_t len;
	uint8_t *buf = report_of("p5.48xlarge", "old", "run-1", 1, &len), *old;

	m = dratopo__v1__topology_report__unpack(NULL, len, buf);
	CU_ASSERT_PTR_NOT_NULL_FATAL(m);
	CU_ASSERT_EQUAL(m->base.n_unknown_fields, 0);
	dratopo__v1__topology_report__free_unpacked(m, NULL);

	/* Field 12, wire type 2 (tag 0x62), as an older agent wrote it. */
	old = malloc(len + 2 + sizeof(yaml));
	CU_ASSERT_PTR_NOT_NULL_FATAL(old);
	memcpy(old, buf, len);
	old[len] = 0x62;
	old[len + 1] = (uint8_t)(sizeof(yaml) - 1);
	memcpy(old + len + 2, yaml, sizeof(yaml) - 1);
	m = dratopo__v1__topology_report__unpack(NULL, len + 1 + sizeof(yaml), old);
	CU_ASSERT_PTR_NOT_NULL_FATAL(m);
	CU_ASSERT_EQUAL(m->base.n_unknown_fields, 1);    /* what the coordinator sees */
	dratopo__v1__topology_report__free_unpacked(m, NULL);

	open_coord(&c, true);
	CU_ASSERT_EQUAL_FATAL(coord_invoke(&c, REPORT, old, len + 1 + sizeof(yaml), NULL, &res), 0);
	CU_ASSERT_EQUAL(res.status, GRPC_STATUS_OK);
	rpc_invoke_result_free(&res);
	one = get_node(&c, "old");
	CU_ASSERT_PTR_NOT_NULL_FATAL(one);
	CU_ASSERT_PTR_NOT_NULL_FATAL(one->last_report);
	CU_ASSERT_EQUAL(one->last_report->base.n_unknown_fields, 0);
	CU_ASSERT_EQUAL(one->last_report->n_devices, 40);
	dratopo__v1__get_node_response__free_unpacked(one, NULL);
	coord_close(&c);
	free(old);
	free(buf);
}

/* A commit that fails: UNAVAILABLE, and memory set back to the store. */
static void test_store_failure_rolls_back(void)
{
	Dratopo__V1__ListNodesResponse *nodes;
	Dratopo__V1__GetNodeResponse *one;
	struct coord c;
	char details[512];

	open_coord(&c, true);
	CU_ASSERT_EQUAL(report(&c, "p5.48xlarge", "n1", 1, NULL, NULL, NULL), GRPC_STATUS_OK);
	flaky.fail = -ENOSPC;
	CU_ASSERT_EQUAL(report(&c, "p5.48xlarge", "n2", 1, NULL, NULL, details),
			GRPC_STATUS_UNAVAILABLE);
	CU_ASSERT_PTR_NOT_NULL(strstr(details, "flaky: commit refused"));
	/* n1 turns degraded: refused too, and n1 stays as stored. */
	CU_ASSERT_EQUAL(report(&c, "p5.48xlarge-degraded", "n1", 2, NULL, NULL, NULL),
			GRPC_STATUS_UNAVAILABLE);
	/* a heartbeat as well */
	CU_ASSERT_EQUAL(report(&c, "p5.48xlarge", "n1", 3, NULL, NULL, NULL),
			GRPC_STATUS_UNAVAILABLE);
	nodes = list_nodes(&c);
	CU_ASSERT_EQUAL_FATAL(nodes->n_nodes, 1);
	DT_ASSERT_STR(nodes->nodes[0]->name, "n1");
	CU_ASSERT_EQUAL(nodes->nodes[0]->verdict, DRATOPO__V1__VERDICT__VERDICT_MATCH);
	dratopo__v1__list_nodes_response__free_unpacked(nodes, NULL);
	one = get_node(&c, "n1");
	CU_ASSERT_PTR_NOT_NULL_FATAL(one);
	CU_ASSERT_EQUAL(one->last_report->sequence, 1);
	dratopo__v1__get_node_response__free_unpacked(one, NULL);

	/* The disk has room again: the same reports are taken. */
	flaky.fail = 0;
	CU_ASSERT_EQUAL(report(&c, "p5.48xlarge", "n2", 1, NULL, NULL, NULL), GRPC_STATUS_OK);
	CU_ASSERT_EQUAL(report(&c, "p5.48xlarge-degraded", "n1", 2, NULL, NULL, NULL),
			GRPC_STATUS_OK);
	nodes = list_nodes(&c);
	CU_ASSERT_EQUAL_FATAL(nodes->n_nodes, 2);
	CU_ASSERT_EQUAL(nodes->nodes[0]->verdict, DRATOPO__V1__VERDICT__VERDICT_DRIFT);
	dratopo__v1__list_nodes_response__free_unpacked(nodes, NULL);
	coord_close(&c);
}

/* A restart on the same store keeps what heartbeats moved (sequence,
 * boot id) although they store no report, so replays stay replays. */
static void test_restart_after_heartbeats(void)
{
	struct coord c;
	struct dt_err err = { 0 };
	struct coord_opts o = { .insecure = true };
	struct store *keep;
	int commits;

	open_coord(&c, true);
	CU_ASSERT_EQUAL(report(&c, "p5.48xlarge", "n1", 1, NULL, NULL, NULL), GRPC_STATUS_OK);
	CU_ASSERT_EQUAL(report(&c, "p5.48xlarge", "n1", 9, NULL, NULL, NULL), GRPC_STATUS_OK);
	/* Reopen over the same real store: take it out of the flaky one. */
	keep = flaky.real;
	flaky.real = NULL;
	CU_ASSERT_EQUAL(store_open("memory:", NULL, &flaky.real, &err), 0);
	coord_close(&c);
	memset(&flaky, 0, sizeof(flaky));
	flaky.real = keep;
	CU_ASSERT_EQUAL_FATAL(store_wrap(&flaky_ops, &flaky, "flaky", &o.store, &err), 0);
	CU_ASSERT_EQUAL_FATAL(coord_open(&c, &o, &err), 0);
	commits = flaky.commits;
	/* seq 5 < 9 of the same run: a replay, nothing written */
	CU_ASSERT_EQUAL(report(&c, "p5.48xlarge", "n1", 5, NULL, NULL, NULL), GRPC_STATUS_OK);
	CU_ASSERT_EQUAL(flaky.commits, commits);
	coord_close(&c);
}

static Dratopo__V1__RemediesResponse *remedies(struct coord *c)
{
	Dratopo__V1__RemediesRequest q = DRATOPO__V1__REMEDIES_REQUEST__INIT;
	struct rpc_invoke_result res;
	uint8_t buf[64];
	size_t len = protobuf_c_message_pack(&q.base, buf);
	Dratopo__V1__RemediesResponse *r;

	CU_ASSERT_EQUAL_FATAL(coord_invoke(c, "/dratopo.v1.Fleet/Remedies", buf, len, NULL, &res),
			      0);
	CU_ASSERT_EQUAL_FATAL(res.status, GRPC_STATUS_OK);
	r = dratopo__v1__remedies_response__unpack(NULL, res.response_len, res.response);
	rpc_invoke_result_free(&res);
	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	return r;
}

/* The apply stream of r loads as n_rules rules and, last, the anchor
 * (test_remedy has its fields) summing them up as summary says. */
static void check_apply_stream(const Dratopo__V1__RemediesResponse *r, size_t n_rules,
			       const char *summary)
{
	struct model_set *set = model_set_new();
	const struct model_object *last = NULL;
	struct dt_diags errs;
	struct dt_err err = { 0 };

	CU_ASSERT_PTR_NOT_NULL_FATAL(set);
	dt_diags_init(&errs);
	CU_ASSERT_EQUAL_FATAL(model_set_load_buffer(set, r->yaml, strlen(r->yaml), "remedies.yaml",
						    &errs, &err), 0);
	CU_ASSERT_EQUAL(model_set_count(set, MODEL_DEVICE_TAINT_RULE), n_rules + 1);
	for (const struct model_object *o = NULL;
	     (o = model_set_next(set, MODEL_DEVICE_TAINT_RULE, o));)
		last = o;
	CU_ASSERT_PTR_NOT_NULL_FATAL(last);
	DT_ASSERT_STR(last->meta.name, REM_ANCHOR_NAME);
	for (size_t i = 0; i < last->meta.n_annotations; i++)
		if (!strcmp(last->meta.annotations[i].key, REM_ANNOTATION_REMEDIES))
			DT_ASSERT_STR(last->meta.annotations[i].value, summary);
	CU_ASSERT_EQUAL(model_validate_set(set, NULL, &errs), 0);
	dt_diags_free(&errs);
	model_set_free(set);
}

/* The degraded fixture's rules (test_remedy has the exact set), and the
 * lift once the node matches again; the apply stream always holds an
 * object, kubectl apply refusing one without. */
static void test_remedies(void)
{
	Dratopo__V1__RemediesResponse *r;
	struct coord c;

	open_coord(&c, true);
	CU_ASSERT_EQUAL(report(&c, "p5.48xlarge", "good", 1, NULL, NULL, NULL), GRPC_STATUS_OK);
	r = remedies(&c);
	CU_ASSERT_EQUAL(strncmp(r->yaml, "# no node in drift\n---\n", 23), 0);
	check_apply_stream(r, 0, "nodes in drift: 0, DeviceTaintRules: 0, Node taints: 0, "
			   "nodes to lift: 0");
	CU_ASSERT_EQUAL(r->n_lifted, 0);
	dratopo__v1__remedies_response__free_unpacked(r, NULL);

	CU_ASSERT_EQUAL(report(&c, "p5.48xlarge-degraded", "bad", 1, NULL, NULL, NULL),
			GRPC_STATUS_OK);
	r = remedies(&c);
	CU_ASSERT_EQUAL(r->device_taint_rules, 5);
	CU_ASSERT_EQUAL(r->node_taints, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(r->yaml, "kind: DeviceTaintRule"));
	CU_ASSERT_PTR_NOT_NULL(strstr(r->yaml, "name: dratopo-drift.bad.gpu-0"));
	CU_ASSERT_PTR_NULL(strstr(r->yaml, "dratopo-drift.good."));
	check_apply_stream(r, 5, "nodes in drift: 1, DeviceTaintRules: 5, Node taints: 0, "
			   "nodes to lift: 0");
	dratopo__v1__remedies_response__free_unpacked(r, NULL);

	CU_ASSERT_EQUAL(report(&c, "p5.48xlarge", "bad", 2, NULL, NULL, NULL), GRPC_STATUS_OK);
	r = remedies(&c);
	CU_ASSERT_EQUAL(r->device_taint_rules, 0);
	CU_ASSERT_EQUAL_FATAL(r->n_lifted, 1);
	DT_ASSERT_STR(r->lifted[0], "bad");
	/* The lift: objects for kubectl delete, apart from what to apply. */
	CU_ASSERT_PTR_NOT_NULL(strstr(r->lifts_yaml, "kind: DeviceTaintRule\nmetadata:\n"
				      "  name: dratopo-drift.bad.gpu-0\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(r->lifts_yaml, "# and its Node taint: kubectl taint nodes bad "
				      "dratopo.io/drift:NoSchedule-"));
	CU_ASSERT_PTR_NOT_NULL(strstr(r->yaml, "# node bad matches again"));
	/* nothing to apply but the anchor */
	check_apply_stream(r, 0, "nodes in drift: 0, DeviceTaintRules: 0, Node taints: 0, "
			   "nodes to lift: 1");
	dratopo__v1__remedies_response__free_unpacked(r, NULL);
	coord_close(&c);
}

/* ---- plans with their own instance types ---- */

#define PLAN "/dratopo.v1.Planner/Plan"

/* A pool that may launch only the type the fleet learns from the unknown
 * fixture (p7.48xlarge) and a pod that must go to a new node of it. */
static const char p7_pool[] =
	"apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: p7}\n"
	"spec:\n  template:\n    spec:\n"
	"      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}\n"
	"      requirements:\n"
	"      - {key: node.kubernetes.io/instance-type, operator: In, values: [p7.48xlarge]}\n"
	"---\napiVersion: v1\nkind: Pod\nmetadata: {name: trainer}\nspec:\n"
	"  nodeSelector: {karpenter.sh/nodepool: p7}\n"
	"  resourceClaims: [{name: gpus, resourceClaimTemplateName: eight}]\n"
	"  containers: [{name: c, image: busybox, resources: {claims: [{name: gpus}]}}]\n"
	"---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\n"
	"metadata: {name: eight}\nspec:\n  spec:\n    devices:\n      requests:\n"
	"      - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com, count: 8}}\n";

/* Plan manifest with the extra (NULL: none) as the CLI sends it: the exit
 * code; *out (may be NULL) gets the JSON and the diagnostics. */
static int plan_with(struct coord *c, const char *manifest, const char *extra,
		     struct strbuf *out)
{
	Dratopo__V1__PlanRequest q = DRATOPO__V1__PLAN_REQUEST__INIT;
	Dratopo__V1__Manifest m = DRATOPO__V1__MANIFEST__INIT;
	Dratopo__V1__Manifest x = DRATOPO__V1__MANIFEST__INIT;
	Dratopo__V1__Manifest *mp = &m, *xp = &x;
	Dratopo__V1__PlanResponse *r;
	struct rpc_invoke_result res;
	uint8_t *buf;
	size_t len;
	int code = -1;

	m.name = (char *)"p7.yaml";
	m.content = (char *)manifest;
	x.name = (char *)"extra.yaml";
	x.content = (char *)extra;
	q.n_manifests = 1;
	q.manifests = &mp;
	q.n_hwdb_extras = extra ? 1 : 0;
	q.hwdb_extras = &xp;
	q.format = DRATOPO__V1__PLAN_FORMAT__PLAN_FORMAT_JSON;
	buf = malloc(protobuf_c_message_get_packed_size(&q.base));
	if (!buf)
		return -1;
	len = protobuf_c_message_pack(&q.base, buf);
	if (coord_invoke(c, PLAN, buf, len, NULL, &res) == 0 && res.status == GRPC_STATUS_OK &&
	    (r = dratopo__v1__plan_response__unpack(NULL, res.response_len, res.response))) {
		code = r->exit_code;
		if (out) {
			sb_reset(out);
			sb_puts(out, r->output);
			for (size_t i = 0; i < r->n_diagnostics; i++)
				sb_printf(out, "\n%s", r->diagnostics[i]);
		}
		dratopo__v1__plan_response__free_unpacked(r, NULL);
	}
	rpc_invoke_result_free(&res);
	free(buf);
	return code;
}

static int plan_p7(struct coord *c, const char *extra, struct strbuf *out)
{
	return plan_with(c, p7_pool, extra, out);
}

/* ---- devices that running pods hold ---- */

/* A pod pinned to the fleet's node gpu-a wanting %d GPUs. */
#define PINNED \
	"apiVersion: v1\nkind: Pod\nmetadata: {name: new}\nspec:\n" \
	"  nodeSelector: {kubernetes.io/hostname: gpu-a}\n" \
	"  resourceClaims: [{name: gpus, resourceClaimTemplateName: want}]\n" \
	"  containers: [{name: c, image: busybox, resources: {claims: [{name: gpus}]}}]\n" \
	"---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\n" \
	"metadata: {name: want}\nspec:\n  spec:\n    devices:\n      requests:\n" \
	"      - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com, count: %d}}\n"
/* A pod running on gpu-a with a claim of 2 GPUs from a template. */
#define RUNNING \
	"---\napiVersion: v1\nkind: Pod\nmetadata: {name: running}\nspec:\n" \
	"  nodeName: gpu-a\n" \
	"  resourceClaims: [{name: gpus, resourceClaimTemplateName: two}]\n" \
	"  containers: [{name: c, image: busybox, resources: {claims: [{name: gpus}]}}]\n" \
	"status: {phase: Running}\n" \
	"---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\n" \
	"metadata: {name: two}\nspec:\n  spec:\n    devices:\n      requests:\n" \
	"      - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com, count: 2}}\n"
/* The claim Kubernetes made for it, allocated and reserved for it (the
 * pod's status, trimmed here, does not link it). */
#define RUNNING_CLAIM \
	"---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata:\n" \
	"  name: running-gpus-x7k2q\n" \
	"  annotations: {resource.kubernetes.io/pod-claim-name: gpus}\n" \
	"spec:\n  devices:\n    requests:\n" \
	"    - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com, count: 2}}\n" \
	"status:\n  allocation:\n    devices:\n      results:\n" \
	"      - {request: gpu, driver: gpu.nvidia.com, pool: gpu-a, device: gpu-0}\n" \
	"      - {request: gpu, driver: gpu.nvidia.com, pool: gpu-a, device: gpu-1}\n" \
	"  reservedFor: [{resource: pods, name: running, uid: 4a1b}]\n"

static int plan_pinned(struct coord *c, int gpus, const char *more, struct strbuf *out)
{
	char yaml[4096];

	snprintf(yaml, sizeof(yaml), PINNED "%s", gpus, more);
	return plan_with(c, yaml, NULL, out);
}

struct fake_cluster {
	const char *yaml;               /* what it runs */
	int calls, fail;
};

static int fake_cluster_add(void *arg, struct model_set *set, struct dt_diags *diags)
{
	struct fake_cluster *fc = arg;
	struct dt_err err = { 0 };

	fc->calls++;
	if (fc->fail) {
		dt_diags_add(diags, "dratopo plan: the cluster's pods: not synced yet");
		return -EAGAIN;
	}
	return model_set_load_buffer(set, fc->yaml, strlen(fc->yaml), "(cluster)", diags, &err);
}

/* A running pod's devices are not free: from the manifests (its claim
 * generated and allocated on its node, or the allocated claim given and
 * counted once), and from the cluster source the controller sets. */
static void test_plan_devices_in_use(void)
{
	struct fake_cluster fc = { .yaml = RUNNING };
	struct coord_cluster_source src = { fake_cluster_add, &fc };
	struct strbuf out = STRBUF_INIT;
	struct coord c;

	open_coord(&c, true);
	CU_ASSERT_EQUAL(report(&c, "p5.48xlarge", "gpu-a", 1, NULL, NULL, NULL), GRPC_STATUS_OK);
	CU_ASSERT_EQUAL(plan_pinned(&c, 7, "", &out), 0);
	/* 2 of 8 held by the running pod: 7 do not fit, 6 do. */
	CU_ASSERT_EQUAL(plan_pinned(&c, 7, RUNNING, &out), 3);
	CU_ASSERT_EQUAL(plan_pinned(&c, 6, RUNNING, &out), 0);
	CU_ASSERT_PTR_NULL(strstr(sb_str(&out), "\"device\": \"gpu-0\""));
	/* Its claim given: the same 2 GPUs (gpu-0, gpu-1), not 2 more. */
	CU_ASSERT_EQUAL(plan_pinned(&c, 7, RUNNING RUNNING_CLAIM, &out), 3);
	CU_ASSERT_EQUAL(plan_pinned(&c, 6, RUNNING RUNNING_CLAIM, &out), 0);
	CU_ASSERT_PTR_NULL(strstr(sb_str(&out), "\"device\": \"gpu-1\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(sb_str(&out), "\"device\": \"gpu-7\""));
	/* A claim the input lacks: said, and its devices count as free. */
	CU_ASSERT_EQUAL(plan_pinned(&c, 7, "---\napiVersion: v1\nkind: Pod\n"
				    "metadata: {name: lost}\nspec:\n  nodeName: gpu-a\n"
				    "  resourceClaims: [{name: g, resourceClaimName: gone}]\n"
				    "  containers: [{name: c, image: busybox}]\n", &out), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(sb_str(&out), "warning: pod default/lost runs on node "
				      "gpu-a: resourceClaim default/gone not found"));

	/* The cluster's running pods, through the controller's hook. */
	coord_set_cluster_source(&c, &src);
	CU_ASSERT_EQUAL(plan_pinned(&c, 7, "", &out), 3);
	CU_ASSERT_EQUAL(plan_pinned(&c, 6, "", &out), 0);
	CU_ASSERT_EQUAL(fc.calls, 2);
	fc.fail = 1;
	CU_ASSERT_EQUAL(plan_pinned(&c, 6, "", &out), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(sb_str(&out), "the cluster's pods: not synced yet"));
	coord_set_cluster_source(&c, NULL);
	CU_ASSERT_EQUAL(plan_pinned(&c, 7, "", &out), 0);
	CU_ASSERT_EQUAL(fc.calls, 3);
	sb_free(&out);
	coord_close(&c);
}

/* The learned entry as `dratopo hwdb export --coordinator` gives it, with
 * a price added (malloc'd). */
static char *priced_p7(struct coord *c)
{
	Dratopo__V1__GetHwdbEntryRequest q = DRATOPO__V1__GET_HWDB_ENTRY_REQUEST__INIT;
	Dratopo__V1__GetHwdbEntryResponse *r;
	struct rpc_invoke_result res;
	struct strbuf sb = STRBUF_INIT;
	const char *null_price;
	uint8_t buf[256];
	size_t len;

	q.instance_type = (char *)"p7.48xlarge";
	len = protobuf_c_message_pack(&q.base, buf);
	CU_ASSERT_EQUAL_FATAL(coord_invoke(c, "/dratopo.v1.Fleet/GetHwdbEntry", buf, len, NULL,
					   &res), 0);
	CU_ASSERT_EQUAL_FATAL(res.status, GRPC_STATUS_OK);
	r = dratopo__v1__get_hwdb_entry_response__unpack(NULL, res.response_len, res.response);
	rpc_invoke_result_free(&res);
	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	CU_ASSERT_EQUAL(r->source, DRATOPO__V1__HWDB_SOURCE__HWDB_SOURCE_LEARNED);
	null_price = strstr(r->entry_yaml, "onDemandPricePerHour: null");
	CU_ASSERT_PTR_NOT_NULL_FATAL(null_price);
	sb_append(&sb, r->entry_yaml, (size_t)(null_price - r->entry_yaml));
	sb_printf(&sb, "onDemandPricePerHour: 98.5%s",
		  null_price + strlen("onDemandPricePerHour: null"));
	dratopo__v1__get_hwdb_entry_response__free_unpacked(r, NULL);
	return sb_detach(&sb);
}

/* Two nodes of the unknown fixture: p7.48xlarge learned. */
static void learn_p7(struct coord *c)
{
	Dratopo__V1__ReportAck *ack = NULL;

	CU_ASSERT_EQUAL(report(c, "unknown", "new-1", 1, NULL, NULL, NULL), GRPC_STATUS_OK);
	CU_ASSERT_EQUAL_FATAL(report(c, "unknown", "new-2", 1, NULL, &ack, NULL), GRPC_STATUS_OK);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ack);
	CU_ASSERT_EQUAL(ack->verdict, DRATOPO__V1__VERDICT__VERDICT_LEARNED);
	dratopo__v1__report_ack__free_unpacked(ack, NULL);
}

/* A learned type is no launch candidate without a price, and the plan says
 * why; the request's extra prices it for that plan only; a bad extra is
 * the plan's input error, not the call's. */
static void test_plan_learned_type(void)
{
	struct strbuf out = STRBUF_INIT;
	struct coord c;
	char *priced;

	open_coord(&c, true);
	learn_p7(&c);
	priced = priced_p7(&c);
	CU_ASSERT_EQUAL(plan_p7(&c, NULL, &out), 3);
	CU_ASSERT_PTR_NOT_NULL(strstr(sb_str(&out), "learned type, no price: give one with "
				      "--hwdb-extra or a NodeOverlay"));
	CU_ASSERT_EQUAL(plan_p7(&c, priced, &out), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(sb_str(&out), "\"instanceType\": \"p7.48xlarge\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(sb_str(&out), "\"pricePerHour\": 98.5"));
	CU_ASSERT_EQUAL(plan_p7(&c, "instanceTypes: [{name: x}]\n", &out), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(sb_str(&out), "dratopo plan: --hwdb-extra: extra.yaml"));
	CU_ASSERT_EQUAL(plan_p7(&c, NULL, NULL), 3);   /* nothing stayed behind */
	CU_ASSERT_PTR_NULL(hwdb_lookup("p7.48xlarge"));
	free(priced);
	sb_free(&out);
	coord_close(&c);
}

struct planner_thread {
	struct coord *c;
	const char *extra;      /* NULL: none */
	int want;               /* the exit code every plan must have */
	int wrong;              /* plans that had another */
};

static void *plan_many(void *arg)
{
	struct planner_thread *p = arg;

	for (int i = 0; i < 6; i++)
		if (plan_p7(p->c, p->extra, NULL) != p->want)
			p->wrong++;
	return NULL;
}

/* Plans with and without the extra at once, with heartbeats coming in:
 * neither sees the other's instance types. */
static void test_plan_extras_concurrent(void)
{
	struct planner_thread p[2];
	pthread_t th[2];
	struct coord c;
	char *priced;

	open_coord(&c, true);
	learn_p7(&c);
	priced = priced_p7(&c);
	p[0] = (struct planner_thread){ &c, priced, 0, 0 };
	p[1] = (struct planner_thread){ &c, NULL, 3, 0 };
	for (int i = 0; i < 2; i++)
		CU_ASSERT_EQUAL_FATAL(pthread_create(&th[i], NULL, plan_many, &p[i]), 0);
	for (uint64_t seq = 2; seq < 12; seq++)
		CU_ASSERT_EQUAL(report(&c, "unknown", "new-1", seq, NULL, NULL, NULL),
				GRPC_STATUS_OK);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	CU_ASSERT_EQUAL(p[0].wrong, 0);
	CU_ASSERT_EQUAL(p[1].wrong, 0);
	CU_ASSERT_PTR_NULL(hwdb_lookup("p7.48xlarge"));
	free(priced);
	coord_close(&c);
}

/* Two NodeOverlays of one weight pricing the learned type conflict: the
 * plan over the fleet ignores the second, as Karpenter does, and its
 * warning comes back among the diagnostics. */
static void test_plan_overlay_conflict(void)
{
	static const char overlays[] =
		"---\napiVersion: karpenter.sh/v1alpha1\nkind: NodeOverlay\nmetadata: {name: b-price}\n"
		"spec: {weight: 5, price: '40', requirements: [{key: node.kubernetes.io/instance-type, "
		"operator: In, values: [p7.48xlarge]}]}\n"
		"---\napiVersion: karpenter.sh/v1alpha1\nkind: NodeOverlay\nmetadata: {name: a-price}\n"
		"spec: {weight: 5, price: '30', requirements: [{key: node.kubernetes.io/instance-type, "
		"operator: In, values: [p7.48xlarge]}]}\n";
	struct strbuf manifest = STRBUF_INIT, out = STRBUF_INIT;
	struct coord c;

	open_coord(&c, true);
	learn_p7(&c);
	sb_puts(&manifest, p7_pool);
	sb_puts(&manifest, overlays);
	CU_ASSERT_EQUAL(plan_with(&c, sb_str(&manifest), NULL, &out), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(sb_str(&out), "\"priceOverlay\": \"b-price\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(sb_str(&out), "warning: NodeOverlay a-price: conflicts with "
				      "NodeOverlay b-price (both of weight 5 set the price of "
				      "p7.48xlarge in NodePool p7)"));
	sb_free(&manifest);
	sb_free(&out);
	coord_close(&c);
}

/* Past --max-plans running plans, a Plan is refused at once with
 * RESOURCE_EXHAUSTED (the handlers' threads stay free for reports), and
 * the refusal leaves the count as it found it. */
static void test_plan_limit(void)
{
	Dratopo__V1__PlanRequest q = DRATOPO__V1__PLAN_REQUEST__INIT;
	struct rpc_invoke_result res;
	uint8_t buf[16];
	size_t len = protobuf_c_message_pack(&q.base, buf);
	struct coord c;

	open_coord(&c, true);
	CU_ASSERT_EQUAL(c.max_plans, COORD_DEFAULT_MAX_PLANS);
	atomic_store(&c.plans_running, c.max_plans);     /* as if that many ran */
	CU_ASSERT_EQUAL_FATAL(coord_invoke(&c, PLAN, buf, len, NULL, &res), 0);
	CU_ASSERT_EQUAL(res.status, GRPC_STATUS_RESOURCE_EXHAUSTED);
	CU_ASSERT_PTR_NOT_NULL(strstr(res.details, "plans are running already (--max-plans)"));
	rpc_invoke_result_free(&res);
	CU_ASSERT_EQUAL(atomic_load(&c.plans_running), c.max_plans);
	atomic_store(&c.plans_running, c.max_plans - 1);
	CU_ASSERT_EQUAL(plan_p7(&c, NULL, NULL), 3);     /* one more fits, and ran */
	CU_ASSERT_EQUAL(atomic_load(&c.plans_running), c.max_plans - 1);
	atomic_store(&c.plans_running, 0);
	coord_close(&c);
}

DT_SUITE_MAIN_WITH("coord", suite_init, NULL,
		   DT_TEST(test_remedies),
		   DT_TEST(test_plan_devices_in_use),
		   DT_TEST(test_identity),
		   DT_TEST(test_garbage),
		   DT_TEST(test_verdicts),
		   DT_TEST(test_reserved_slices_field),
		   DT_TEST(test_store_failure_rolls_back),
		   DT_TEST(test_restart_after_heartbeats),
		   DT_TEST(test_plan_learned_type),
		   DT_TEST(test_plan_extras_concurrent),
		   DT_TEST(test_plan_overlay_conflict),
		   DT_TEST(test_plan_limit))
