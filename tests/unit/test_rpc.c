/* test_rpc.c - the gRPC glue (dt_rpc) over real loopback gRPC with mTLS.
 *
 * Certificates come from tests/tls/mkcerts.sh, run by the rpc_certs ctest
 * fixture into the build tree. Every test starts its own server on
 * 127.0.0.1:0 with two methods: Report (answers with the peer identity the
 * handler saw, so the client can check it), Slow (blocks until the test
 * lets it go) and Later (defers its answer: the test finishes it). Every assertion on a call is on its exact status code. */
#include <grpc/grpc.h>
#include <grpc/support/time.h>
#include <grpc/support/log.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dratopo/v1/agent.pb-c.h"
#include "dratopo/v1/fleet.pb-c.h"
#include "dt_test.h"
#include "rpc_client.h"
#include "rpc_server.h"

#define REPORT "/dratopo.v1.Coordinator/Report"
#define SLOW "/dratopo.v1.Test/Slow"
#define LATER "/dratopo.v1.Test/Later"
#define N_LATER 6               /* deferred calls held at once: more than the workers */
#define TEST_MAX_RECV (64 * 1024)
#define CALL_MS 10000

static char cert_dir[1024];

/* ---- the test service ---- */

/* Slow blocks until released: lets a test hold a call in flight. */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool entered, released;
} slow = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false, false };

/* What the observer saw, per status code. */
static struct {
	pthread_mutex_t lock;
	unsigned by_code[32];
	unsigned report_calls;
} seen = { PTHREAD_MUTEX_INITIALIZER, { 0 }, 0 };

static char *xstrdup(const char *s)
{
	char *d = strdup(s);

	CU_ASSERT_PTR_NOT_NULL_FATAL(d);
	return d;
}

/* The ack carries the identity the handler saw: differences = [CN, SANs...],
 * or ["no-identity"]; built with malloc throughout so the default release
 * (protobuf_c_message_free_unpacked) frees it. */
static grpc_status_code on_report(struct rpc_ctx *ctx, const ProtobufCMessage *request,
				  ProtobufCMessage **response)
{
	const Dratopo__V1__TopologyReport *r = (const Dratopo__V1__TopologyReport *)request;
	Dratopo__V1__ReportAck *ack;
	size_t n = rpc_ctx_peer_dns_count(ctx);

	if (r->node_name[0] && !rpc_ctx_peer_is(ctx, r->node_name))
		return rpc_ctx_fail(ctx, GRPC_STATUS_PERMISSION_DENIED, "certificate %s may not report for %s",
				    rpc_ctx_peer_cn(ctx) ? rpc_ctx_peer_cn(ctx) : "(none)", r->node_name);
	ack = malloc(sizeof(*ack));
	if (!ack)
		return GRPC_STATUS_RESOURCE_EXHAUSTED;
	dratopo__v1__report_ack__init(ack);
	ack->sequence = r->sequence;
	ack->verdict = DRATOPO__V1__VERDICT__VERDICT_MATCH;
	ack->differences = calloc(n + 1, sizeof(char *));
	if (ack->differences) {
		ack->differences[ack->n_differences++] =
			xstrdup(rpc_ctx_peer_cn(ctx) ? rpc_ctx_peer_cn(ctx) : "no-identity");
		for (size_t i = 0; i < n; i++)
			ack->differences[ack->n_differences++] = xstrdup(rpc_ctx_peer_dns(ctx, i));
	}
	*response = &ack->base;
	return GRPC_STATUS_OK;
}

static grpc_status_code on_slow(struct rpc_ctx *ctx, const ProtobufCMessage *request,
				ProtobufCMessage **response)
{
	pthread_mutex_lock(&slow.lock);
	slow.entered = true;
	pthread_cond_broadcast(&slow.cond);
	while (!slow.released)
		pthread_cond_wait(&slow.cond, &slow.lock);
	pthread_mutex_unlock(&slow.lock);
	return on_report(ctx, request, response);
}

/* Later's calls, held until the test finishes them. */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct rpc_deferred *calls[N_LATER];
	ProtobufCMessage *acks[N_LATER];
	size_t n;
} later = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, { NULL }, { NULL }, 0 };

/* Builds Report's answer now (the request is gone once it returns) and
 * hands the call to the test. */
static grpc_status_code on_later(struct rpc_ctx *ctx, const ProtobufCMessage *request,
				 ProtobufCMessage **response)
{
	ProtobufCMessage *ack = NULL;
	grpc_status_code code = on_report(ctx, request, &ack);

	(void)response;
	if (code != GRPC_STATUS_OK)
		return code;
	pthread_mutex_lock(&later.lock);
	if (later.n == N_LATER) {
		pthread_mutex_unlock(&later.lock);
		protobuf_c_message_free_unpacked(ack, NULL);
		return rpc_ctx_fail(ctx, GRPC_STATUS_RESOURCE_EXHAUSTED, "too many held");
	}
	later.calls[later.n] = rpc_ctx_defer(ctx);
	later.acks[later.n++] = ack;
	pthread_cond_broadcast(&later.cond);
	pthread_mutex_unlock(&later.lock);
	return RPC_DEFERRED;
}

/* Wait until n calls are held. */
static void later_wait(size_t n)
{
	pthread_mutex_lock(&later.lock);
	while (later.n < n)
		pthread_cond_wait(&later.cond, &later.lock);
	pthread_mutex_unlock(&later.lock);
}

/* Even calls answer OK with their ack, odd ones FAILED_PRECONDITION
 * (their ack released unsent); the held list is emptied. */
static void later_finish_all(void)
{
	pthread_mutex_lock(&later.lock);
	for (size_t i = 0; i < later.n; i++) {
		struct rpc_deferred *d = later.calls[i];

		if (i % 2 == 0)
			rpc_deferred_finish(d, GRPC_STATUS_OK, later.acks[i]);
		else
			rpc_deferred_finish(d, rpc_deferred_fail(d, GRPC_STATUS_FAILED_PRECONDITION,
						"held call %zu refused", i), later.acks[i]);
	}
	later.n = 0;
	pthread_mutex_unlock(&later.lock);
}

static void observe(void *user, const char *method, grpc_status_code code, double seconds)
{
	(void)user;
	pthread_mutex_lock(&seen.lock);
	if ((unsigned)code < 32)
		seen.by_code[code]++;
	if (strcmp(method, REPORT) == 0 && seconds >= 0)
		seen.report_calls++;
	pthread_mutex_unlock(&seen.lock);
}

static const struct rpc_method methods[] = {
	{ REPORT, &dratopo__v1__topology_report__descriptor, on_report, NULL },
	{ SLOW, &dratopo__v1__topology_report__descriptor, on_slow, NULL },
	{ LATER, &dratopo__v1__topology_report__descriptor, on_later, NULL },
};

/* ---- fixtures ---- */

struct tls_paths {
	char cert[1200], key[1200], ca[1200];
	struct rpc_tls tls;
};

/* TLS set "dir/base.pem", "dir/base.key", "dir/ca.pem". */
static const struct rpc_tls *paths_in(struct tls_paths *p, const char *dir, const char *base,
				      const char *ca)
{
	snprintf(p->cert, sizeof(p->cert), "%s/%s.pem", dir, base);
	snprintf(p->key, sizeof(p->key), "%s/%s.key", dir, base);
	snprintf(p->ca, sizeof(p->ca), "%s/%s.pem", dir, ca);
	p->tls = (struct rpc_tls){ p->cert, p->key, p->ca, false };
	return &p->tls;
}

static const struct rpc_tls *paths(struct tls_paths *p, const char *base, const char *ca)
{
	return paths_in(p, cert_dir, base, ca);
}

static const struct rpc_tls insecure = { NULL, NULL, NULL, true };

struct fixture {
	struct rpc_server *srv;
	char addr[64];
	struct tls_paths tp;
};

static int fx_start_with(struct fixture *f, const struct rpc_tls *tls, unsigned cap_ms)
{
	struct rpc_server_opts o = {
		.listen = "127.0.0.1:0", .tls = *tls, .max_recv_bytes = TEST_MAX_RECV,
		.max_deadline_ms = cap_ms, .workers = 3, .methods = methods,
		.n_methods = sizeof(methods) / sizeof(methods[0]), .observe = observe,
	};
	struct dt_err err = { 0 };
	int rc = rpc_server_start(&o, &f->srv, &err);

	if (rc)
		fprintf(stderr, "\n  server: %s\n", err.msg);
	else
		snprintf(f->addr, sizeof(f->addr), "127.0.0.1:%d", rpc_server_port(f->srv));
	return rc;
}

static int fx_start(struct fixture *f)
{
	return fx_start_with(f, paths(&f->tp, "server", "ca"), 0);
}

static void reset_seen(void)
{
	pthread_mutex_lock(&seen.lock);
	memset(seen.by_code, 0, sizeof(seen.by_code));
	seen.report_calls = 0;
	pthread_mutex_unlock(&seen.lock);
}

static char last_err[DT_ERR_MSG_MAX];

/* One Report call as client cert `who` (NULL: insecure) for node; the
 * status code, with the ack in *ack when asked and OK. */
static grpc_status_code call_report(const char *addr, const char *who, const char *method,
				    const char *node, Dratopo__V1__ReportAck **ack)
{
	Dratopo__V1__TopologyReport req = DRATOPO__V1__TOPOLOGY_REPORT__INIT;
	struct rpc_status st = { GRPC_STATUS_UNKNOWN, "" };
	struct dt_err err = { 0 };
	struct rpc_channel *ch;
	struct tls_paths tp;
	ProtobufCMessage *resp = NULL;

	last_err[0] = '\0';
	if (rpc_channel_open(addr, who ? paths(&tp, who, "ca") : &insecure, &ch, &err)) {
		snprintf(last_err, sizeof(last_err), "%s", err.msg);
		return GRPC_STATUS_INTERNAL;
	}
	req.node_name = (char *)node;
	req.sequence = 42;
	if (rpc_call(ch, method, &req.base, &dratopo__v1__report_ack__descriptor, CALL_MS, &resp,
		     &st, &err))
		snprintf(last_err, sizeof(last_err), "%s", err.msg);
	if (ack)
		*ack = (Dratopo__V1__ReportAck *)resp;
	else if (resp)
		protobuf_c_message_free_unpacked(resp, NULL);
	rpc_channel_close(ch);
	return st.code;
}

static grpc_status_code report_ok(const char *addr)
{
	return call_report(addr, "client-admin", REPORT, "", NULL);
}

/* A channel as client-admin to f's server. */
static struct rpc_channel *admin_channel(const struct fixture *f)
{
	struct tls_paths tp;
	struct dt_err err = { 0 };
	struct rpc_channel *ch = NULL;

	CU_ASSERT_EQUAL(rpc_channel_open(f->addr, paths(&tp, "client-admin", "ca"), &ch, &err), 0);
	return ch;
}

/* rpc_call of Report with req; the status code, *st filled. A non-OK status
 * must come back as -EREMOTEIO, and no response with it. */
static grpc_status_code report_with(struct rpc_channel *ch, const Dratopo__V1__TopologyReport *req,
				    struct rpc_status *st)
{
	struct dt_err err = { 0 };
	ProtobufCMessage *resp = NULL;
	int rc = rpc_call(ch, REPORT, &req->base, &dratopo__v1__report_ack__descriptor, CALL_MS,
			  &resp, st, &err);

	CU_ASSERT_EQUAL(rc, st->code == GRPC_STATUS_OK ? 0 : -EREMOTEIO);
	CU_ASSERT_EQUAL(resp != NULL, st->code == GRPC_STATUS_OK);
	if (resp)
		protobuf_c_message_free_unpacked(resp, NULL);
	snprintf(last_err, sizeof(last_err), "%s", err.msg);
	return st->code;
}

/* ---- tests ---- */

static void test_round_trip_and_identity(void)
{
	struct fixture f;
	Dratopo__V1__ReportAck *ack = NULL;

	reset_seen();
	CU_ASSERT_EQUAL_FATAL(fx_start(&f), 0);
	CU_ASSERT_EQUAL(call_report(f.addr, "client-node-01", REPORT, "node-01", &ack), GRPC_STATUS_OK);
	CU_ASSERT_PTR_NOT_NULL(ack);
	if (ack) {
		CU_ASSERT_EQUAL(ack->sequence, 42);
		CU_ASSERT_EQUAL(ack->verdict, DRATOPO__V1__VERDICT__VERDICT_MATCH);
		CU_ASSERT_EQUAL(ack->n_differences, 3);
		if (ack->n_differences == 3) {
			DT_ASSERT_STR(ack->differences[0], "node-01");
			DT_ASSERT_STR(ack->differences[1], "node-01.cluster.local");
			DT_ASSERT_STR(ack->differences[2], "ip-10-0-0-1.ec2.internal");
		}
		protobuf_c_message_free_unpacked(&ack->base, NULL);
	}
	/* A DNS SAN is an identity too; another node's name is not. */
	CU_ASSERT_EQUAL(call_report(f.addr, "client-node-01", REPORT, "ip-10-0-0-1.ec2.internal", NULL),
			GRPC_STATUS_OK);
	CU_ASSERT_EQUAL(call_report(f.addr, "client-node-01", REPORT, "node-02", NULL),
			GRPC_STATUS_PERMISSION_DENIED);
	CU_ASSERT_PTR_NOT_NULL(strstr(last_err, "certificate node-01 may not report for node-02"));
	rpc_server_shutdown(f.srv, 5000);
	/* Shutdown joined the workers: every call was observed. */
	CU_ASSERT_EQUAL(seen.report_calls, 3);
	CU_ASSERT_EQUAL(seen.by_code[GRPC_STATUS_OK], 2);
	CU_ASSERT_EQUAL(seen.by_code[GRPC_STATUS_PERMISSION_DENIED], 1);
}

static void test_insecure_round_trip(void)
{
	struct fixture f;
	Dratopo__V1__ReportAck *ack = NULL;

	CU_ASSERT_EQUAL_FATAL(fx_start_with(&f, &insecure, 0), 0);
	CU_ASSERT_EQUAL(call_report(f.addr, NULL, REPORT, "", &ack), GRPC_STATUS_OK);
	if (ack) {
		CU_ASSERT_EQUAL(ack->n_differences, 1);
		if (ack->n_differences == 1)
			DT_ASSERT_STR(ack->differences[0], "no-identity");
		protobuf_c_message_free_unpacked(&ack->base, NULL);
	}
	/* A plaintext client of the TLS server, and the reverse, do not connect. */
	rpc_server_shutdown(f.srv, 5000);
	CU_ASSERT_EQUAL_FATAL(fx_start(&f), 0);
	CU_ASSERT_EQUAL(call_report(f.addr, NULL, REPORT, "", NULL), GRPC_STATUS_UNAVAILABLE);
	rpc_server_shutdown(f.srv, 5000);
}

/* gRPC's log lines, as a daemon would receive them through rpc_set_log. */
static atomic_int handshake_logs;

static void log_sink(const char *severity, const char *file, int line, const char *message)
{
	(void)file, (void)line;
	if (strcmp(severity, "E") == 0 && strstr(message, "Handshake failed"))
		atomic_fetch_add(&handshake_logs, 1);
}

static void test_other_ca_refused(void)
{
	struct fixture f;
	struct tls_paths tp;
	struct rpc_status st;
	struct dt_err err = { 0 };
	struct rpc_channel *ch;
	Dratopo__V1__TopologyReport req = DRATOPO__V1__TOPOLOGY_REPORT__INIT;

	CU_ASSERT_EQUAL_FATAL(fx_start(&f), 0);
	rpc_set_log(log_sink);
	gpr_set_log_verbosity(GPR_LOG_SEVERITY_ERROR);  /* ctest sets GRPC_VERBOSITY=NONE */
	/* CN node-01, but signed by a CA the server does not trust. */
	CU_ASSERT_EQUAL_FATAL(rpc_channel_open(f.addr, paths(&tp, "other-client", "ca"), &ch, &err), 0);
	CU_ASSERT_EQUAL(report_with(ch, &req, &st), GRPC_STATUS_UNAVAILABLE);
	gpr_set_log_verbosity(GPR_LOG_SEVERITY_ERROR + 1);
	rpc_set_log(NULL);
	CU_ASSERT(atomic_load(&handshake_logs) > 0);    /* the refusal was logged, to us */
	CU_ASSERT_EQUAL(strncmp(last_err, "coordinator ", 12), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(last_err, f.addr));
	/* The call's error says what the diagnosis found (test_rpc_tlsdiag has the rest). */
	CU_ASSERT_PTR_NOT_NULL(strstr(last_err, ": the coordinator refused this client's certificate"));
	rpc_channel_close(ch);
	/* The server keeps serving its own clients. */
	CU_ASSERT_EQUAL(report_ok(f.addr), GRPC_STATUS_OK);
	rpc_server_shutdown(f.srv, 5000);
}

static void test_garbage_payload(void)
{
	struct fixture f;
	struct rpc_status st;
	struct dt_err err = { 0 };
	struct rpc_channel *ch;
	char *resp = (char *)"unset";
	size_t len = 7;

	CU_ASSERT_EQUAL_FATAL(fx_start(&f), 0);
	ch = admin_channel(&f);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ch);
	CU_ASSERT_EQUAL(rpc_call_bytes(ch, REPORT, "\xff\xff\xff\xff", 4, CALL_MS, &resp, &len, &st, &err),
			-EREMOTEIO);
	CU_ASSERT_EQUAL(st.code, GRPC_STATUS_INVALID_ARGUMENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(st.details, "not a valid dratopo.v1.TopologyReport"));
	CU_ASSERT_PTR_NULL(resp);
	CU_ASSERT_EQUAL(len, 0);
	/* The same channel and the server go on working. */
	CU_ASSERT_EQUAL(rpc_call_bytes(ch, REPORT, "", 0, CALL_MS, &resp, &len, &st, &err), 0);
	CU_ASSERT_EQUAL(st.code, GRPC_STATUS_OK);
	free(resp);
	rpc_channel_close(ch);
	CU_ASSERT_EQUAL(report_ok(f.addr), GRPC_STATUS_OK);
	rpc_server_shutdown(f.srv, 5000);
}

static void test_oversized_message(void)
{
	struct fixture f;
	struct rpc_status st;
	struct rpc_channel *ch;
	Dratopo__V1__TopologyReport req = DRATOPO__V1__TOPOLOGY_REPORT__INIT;
	char *big = malloc(TEST_MAX_RECV + 1);

	CU_ASSERT_PTR_NOT_NULL_FATAL(big);
	memset(big, 'x', TEST_MAX_RECV);
	big[TEST_MAX_RECV] = '\0';
	req.learned_entry = big;
	CU_ASSERT_EQUAL_FATAL(fx_start(&f), 0);
	ch = admin_channel(&f);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ch);
	CU_ASSERT_EQUAL(report_with(ch, &req, &st), GRPC_STATUS_RESOURCE_EXHAUSTED);
	req.learned_entry = (char *)"small";
	CU_ASSERT_EQUAL(report_with(ch, &req, &st), GRPC_STATUS_OK);
	rpc_channel_close(ch);
	free(big);
	CU_ASSERT_EQUAL(report_ok(f.addr), GRPC_STATUS_OK);
	rpc_server_shutdown(f.srv, 5000);
}

static void test_no_deadline_refused(void)
{
	struct fixture f;
	struct rpc_status st;
	struct dt_err err = { 0 };
	struct rpc_channel *ch;
	ProtobufCMessage *resp = NULL;
	Dratopo__V1__TopologyReport req = DRATOPO__V1__TOPOLOGY_REPORT__INIT;

	CU_ASSERT_EQUAL_FATAL(fx_start(&f), 0);
	ch = admin_channel(&f);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ch);
	CU_ASSERT_EQUAL(rpc_call_bytes(ch, REPORT, "", 0, 0, NULL, NULL, &st, &err), -EREMOTEIO);
	CU_ASSERT_EQUAL(st.code, GRPC_STATUS_INVALID_ARGUMENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(st.details, "no deadline"));
	/* rpc_call does not even try. */
	CU_ASSERT_EQUAL(rpc_call(ch, REPORT, &req.base, &dratopo__v1__report_ack__descriptor, 0,
				 &resp, &st, &err), -EINVAL);
	rpc_channel_close(ch);
	rpc_server_shutdown(f.srv, 5000);
}

static void test_unknown_method(void)
{
	struct fixture f;

	CU_ASSERT_EQUAL_FATAL(fx_start(&f), 0);
	CU_ASSERT_EQUAL(call_report(f.addr, "client-admin", "/dratopo.v1.Coordinator/Nope", "", NULL),
			GRPC_STATUS_UNIMPLEMENTED);
	CU_ASSERT_PTR_NOT_NULL(strstr(last_err, "unknown method /dratopo.v1.Coordinator/Nope"));
	CU_ASSERT_EQUAL(call_report(f.addr, "client-admin", "/other.Svc/M", "", NULL),
			GRPC_STATUS_UNIMPLEMENTED);
	CU_ASSERT_EQUAL(report_ok(f.addr), GRPC_STATUS_OK);
	rpc_server_shutdown(f.srv, 5000);
}

/* A Report call that sends its metadata and then nothing, with a client
 * deadline of a minute. */
struct silent_call {
	grpc_call *call;
	grpc_metadata_array md_init, md_trail;
	grpc_status_code code;
	grpc_slice details;
};

static void silent_start(struct silent_call *sc, struct rpc_channel *ch, grpc_completion_queue *cq)
{
	grpc_op ops[3];

	grpc_metadata_array_init(&sc->md_init);
	grpc_metadata_array_init(&sc->md_trail);
	sc->code = GRPC_STATUS_OK;
	sc->details = grpc_empty_slice();
	sc->call = grpc_channel_create_call(rpc_channel_core(ch), NULL, GRPC_PROPAGATE_DEFAULTS, cq,
					    grpc_slice_from_static_string(REPORT), NULL,
					    gpr_time_add(gpr_now(GPR_CLOCK_REALTIME),
							 gpr_time_from_millis(60000, GPR_TIMESPAN)),
					    NULL);
	memset(ops, 0, sizeof(ops));
	ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
	ops[1].op = GRPC_OP_RECV_INITIAL_METADATA;
	ops[1].data.recv_initial_metadata.recv_initial_metadata = &sc->md_init;
	ops[2].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
	ops[2].data.recv_status_on_client.trailing_metadata = &sc->md_trail;
	ops[2].data.recv_status_on_client.status = &sc->code;
	ops[2].data.recv_status_on_client.status_details = &sc->details;
	CU_ASSERT_EQUAL(grpc_call_start_batch(sc->call, ops, 3, sc, NULL), GRPC_CALL_OK);
}

/* Wait (30 s at most) for the call's end; its status code. */
static grpc_status_code silent_finish(struct silent_call *sc, grpc_completion_queue *cq)
{
	grpc_event ev = grpc_completion_queue_pluck(cq, sc,
						    gpr_time_add(gpr_now(GPR_CLOCK_REALTIME),
								 gpr_time_from_millis(30000, GPR_TIMESPAN)),
						    NULL);

	CU_ASSERT_EQUAL(ev.type, GRPC_OP_COMPLETE);
	if (ev.type != GRPC_OP_COMPLETE)
		grpc_call_cancel(sc->call, NULL);   /* and take the tag, so the queue can go */
	if (ev.type != GRPC_OP_COMPLETE)
		grpc_completion_queue_pluck(cq, sc, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
	grpc_call_unref(sc->call);
	grpc_slice_unref(sc->details);
	grpc_metadata_array_destroy(&sc->md_init);
	grpc_metadata_array_destroy(&sc->md_trail);
	return sc->code;
}

static void test_silent_client(void)
{
	struct fixture f;
	struct rpc_channel *ch;
	grpc_completion_queue *cq = grpc_completion_queue_create_for_pluck(NULL);
	struct silent_call calls[4];    /* more than the server's 3 workers */

	/* The server caps every call at 1.5 s; the silent clients ask for 60. */
	CU_ASSERT_EQUAL_FATAL(fx_start_with(&f, paths(&f.tp, "server", "ca"), 1500), 0);
	ch = admin_channel(&f);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ch);
	for (int i = 0; i < 4; i++)
		silent_start(&calls[i], ch, cq);
	/* Everyone else is answered meanwhile, on that channel's server too. */
	for (int i = 0; i < 5; i++)
		CU_ASSERT_EQUAL(report_ok(f.addr), GRPC_STATUS_OK);
	/* The silent calls end at the server's cap, not the client's minute. */
	for (int i = 0; i < 4; i++)
		CU_ASSERT_EQUAL(silent_finish(&calls[i], cq), GRPC_STATUS_DEADLINE_EXCEEDED);
	grpc_completion_queue_shutdown(cq);
	grpc_completion_queue_destroy(cq);
	rpc_channel_close(ch);
	CU_ASSERT_EQUAL(report_ok(f.addr), GRPC_STATUS_OK);
	rpc_server_shutdown(f.srv, 5000);
}

struct slow_call {
	const char *addr;
	grpc_status_code code;
};

static void *slow_caller(void *arg)
{
	struct slow_call *sc = arg;

	sc->code = call_report(sc->addr, "client-admin", SLOW, "", NULL);
	return NULL;
}

struct shutdown_job {
	struct rpc_server *srv;
	bool done;
};

static void *shutdown_runner(void *arg)
{
	struct shutdown_job *job = arg;

	rpc_server_shutdown(job->srv, 30000);
	job->done = true;
	return NULL;
}

static void test_slow_handler_and_shutdown_drain(void)
{
	struct fixture f;
	struct slow_call sc = { NULL, GRPC_STATUS_UNKNOWN };
	struct shutdown_job job = { NULL, false };
	pthread_t caller, stopper;
	grpc_status_code after = GRPC_STATUS_OK;

	slow.entered = slow.released = false;
	CU_ASSERT_EQUAL_FATAL(fx_start(&f), 0);
	sc.addr = f.addr;
	CU_ASSERT_EQUAL_FATAL(pthread_create(&caller, NULL, slow_caller, &sc), 0);
	pthread_mutex_lock(&slow.lock);
	while (!slow.entered)
		pthread_cond_wait(&slow.cond, &slow.lock);
	pthread_mutex_unlock(&slow.lock);
	/* One handler is stuck; the other workers still answer. */
	CU_ASSERT_EQUAL(report_ok(f.addr), GRPC_STATUS_OK);

	job.srv = f.srv;
	CU_ASSERT_EQUAL_FATAL(pthread_create(&stopper, NULL, shutdown_runner, &job), 0);
	/* Wait until the server stops accepting: new connections are refused. */
	for (int i = 0; i < 500 && after != GRPC_STATUS_UNAVAILABLE; i++) {
		after = report_ok(f.addr);
		if (after != GRPC_STATUS_UNAVAILABLE)
			usleep(10000);
	}
	CU_ASSERT_EQUAL(after, GRPC_STATUS_UNAVAILABLE);
	CU_ASSERT_FALSE(job.done);          /* still draining the slow call */
	pthread_mutex_lock(&slow.lock);
	slow.released = true;
	pthread_cond_broadcast(&slow.cond);
	pthread_mutex_unlock(&slow.lock);
	pthread_join(caller, NULL);
	pthread_join(stopper, NULL);
	CU_ASSERT_EQUAL(sc.code, GRPC_STATUS_OK);  /* the call in flight finished */
	CU_ASSERT_TRUE(job.done);
}

struct idle_shutdown {
	struct rpc_server *srv;
	atomic_bool done;
};

static void *idle_shutdown_runner(void *arg)
{
	struct idle_shutdown *job = arg;

	rpc_server_shutdown(job->srv, 30000);
	atomic_store(&job->done, true);
	return NULL;
}

/* A client that opens an HTTP/2 connection and then neither calls nor
 * answers nor hangs up (an agent between two reports, a stopped process):
 * with no call in flight, a shutdown has nothing to drain and closes the
 * connection at once, rather than waiting out its 30 s drain for the
 * client to go (the coordinator took 3-5 s on SIGTERM with idle agents). */
static void test_shutdown_with_idle_connection(void)
{
	static const char hello[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
				    "\0\0\0\4\0\0\0\0\0";      /* an empty SETTINGS frame */
	struct idle_shutdown job = { NULL, false };
	struct sockaddr_in sa = { .sin_family = AF_INET };
	struct fixture f;
	struct pollfd pfd;
	pthread_t stopper;
	char buf[64];
	int fd, ms;

	CU_ASSERT_EQUAL_FATAL(fx_start_with(&f, &insecure, 0), 0);
	sa.sin_port = htons((uint16_t)rpc_server_port(f.srv));
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL_FATAL(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	CU_ASSERT_EQUAL(write(fd, hello, sizeof(hello) - 1), (ssize_t)(sizeof(hello) - 1));
	pfd = (struct pollfd){ fd, POLLIN, 0 };
	CU_ASSERT_EQUAL(poll(&pfd, 1, 10000), 1);       /* the server's SETTINGS: connected */
	CU_ASSERT(read(fd, buf, sizeof(buf)) > 0);

	job.srv = f.srv;
	CU_ASSERT_EQUAL_FATAL(pthread_create(&stopper, NULL, idle_shutdown_runner, &job), 0);
	for (ms = 0; ms < 15000 && !atomic_load(&job.done); ms += 10)
		usleep(10000);
	CU_ASSERT_TRUE(atomic_load(&job.done));  /* long before the 30 s drain */
	pthread_join(stopper, NULL);
	close(fd);
}

struct later_call {
	const char *addr;
	grpc_status_code code;
	char details[512];
	int64_t deadline_ms;            /* 0: CALL_MS */
};

/* A Later call as node-01 (call_report's last_err is not for threads). */
static void *later_caller(void *arg)
{
	Dratopo__V1__TopologyReport req = DRATOPO__V1__TOPOLOGY_REPORT__INIT;
	struct later_call *lc = arg;
	struct rpc_status st = { GRPC_STATUS_UNKNOWN, "" };
	struct dt_err err = { 0 };
	struct rpc_channel *ch;
	struct tls_paths tp;
	ProtobufCMessage *resp = NULL;

	if (rpc_channel_open(lc->addr, paths(&tp, "client-node-01", "ca"), &ch, &err))
		return NULL;
	req.node_name = (char *)"node-01";
	rpc_call(ch, LATER, &req.base, &dratopo__v1__report_ack__descriptor,
		 lc->deadline_ms ? lc->deadline_ms : CALL_MS, &resp, &st, &err);
	lc->code = st.code;
	snprintf(lc->details, sizeof(lc->details), "%s", st.details);
	if (resp)
		protobuf_c_message_free_unpacked(resp, NULL);
	rpc_channel_close(ch);
	return NULL;
}

/* Deferred calls hold no worker: twice as many are held as there are
 * workers while a direct call is answered; each ends with the status its
 * finisher gave, its details included. */
static void test_deferred_calls(void)
{
	struct fixture f;
	struct later_call lc[N_LATER];
	pthread_t t[N_LATER];

	reset_seen();
	CU_ASSERT_EQUAL_FATAL(fx_start(&f), 0);
	for (size_t i = 0; i < N_LATER; i++) {
		lc[i] = (struct later_call){ f.addr, GRPC_STATUS_UNKNOWN, "" };
		CU_ASSERT_EQUAL_FATAL(pthread_create(&t[i], NULL, later_caller, &lc[i]), 0);
	}
	later_wait(N_LATER);
	CU_ASSERT_EQUAL(report_ok(f.addr), GRPC_STATUS_OK);
	later_finish_all();
	for (size_t i = 0; i < N_LATER; i++)
		pthread_join(t[i], NULL);
	/* Which caller's call was held i-th is not known: count the statuses. */
	{
		unsigned ok = 0, refused = 0;

		for (size_t i = 0; i < N_LATER; i++) {
			ok += lc[i].code == GRPC_STATUS_OK;
			if (lc[i].code == GRPC_STATUS_FAILED_PRECONDITION) {
				refused++;
				CU_ASSERT_PTR_NOT_NULL(strstr(lc[i].details, "refused"));
			}
		}
		CU_ASSERT_EQUAL(ok, N_LATER / 2);
		CU_ASSERT_EQUAL(refused, N_LATER / 2);
	}
	rpc_server_shutdown(f.srv, 1000);
	pthread_mutex_lock(&seen.lock);
	CU_ASSERT_EQUAL(seen.by_code[GRPC_STATUS_OK], N_LATER / 2 + 1);
	CU_ASSERT_EQUAL(seen.by_code[GRPC_STATUS_FAILED_PRECONDITION], N_LATER / 2);
	pthread_mutex_unlock(&seen.lock);
}

static void *later_finisher(void *arg)
{
	(void)arg;
	later_wait(1);
	later_finish_all();
	return NULL;
}

/* Finishes the held calls after the shutdown's drains (2 x 100 ms) are
 * over, so that in the usual run the queue is shut by then. (Sooner under
 * load, and the answer is dropped at the cancelled call instead: the test
 * then checks less, but still holds.) */
static void *late_finisher(void *arg)
{
	(void)arg;
	usleep(400000);
	later_finish_all();
	return NULL;
}

/* A handler still holding a call whose client has gone when the server
 * shuts down: gRPC's shutdown tag does not wait for it, but the server
 * does (it must outlive the handle), and the late answer is dropped at the
 * shut queue instead of tripping gRPC's assertion on it. */
static void test_shutdown_outlives_held_call(void)
{
	struct fixture f;
	struct later_call lc = { NULL, GRPC_STATUS_UNKNOWN, "", 200 };
	pthread_t caller, fin;

	CU_ASSERT_EQUAL_FATAL(fx_start(&f), 0);
	lc.addr = f.addr;
	CU_ASSERT_EQUAL_FATAL(pthread_create(&caller, NULL, later_caller, &lc), 0);
	later_wait(1);
	pthread_join(caller, NULL);     /* gone at its 200 ms deadline */
	CU_ASSERT_EQUAL(lc.code, GRPC_STATUS_DEADLINE_EXCEEDED);
	CU_ASSERT_EQUAL_FATAL(pthread_create(&fin, NULL, late_finisher, NULL), 0);
	rpc_server_shutdown(f.srv, 100);
	pthread_join(fin, NULL);
	pthread_mutex_lock(&later.lock);
	CU_ASSERT_EQUAL(later.n, 0);    /* the finisher ran before the server went */
	pthread_mutex_unlock(&later.lock);
}

/* rpc_invoke waits for a call deferred to another thread. */
static void test_deferred_invoke(void)
{
	Dratopo__V1__TopologyReport req = DRATOPO__V1__TOPOLOGY_REPORT__INIT;
	struct rpc_peer peer = { "test", "node-01", NULL, 0 };
	struct rpc_invoke_result res;
	Dratopo__V1__ReportAck *ack;
	uint8_t buf[64];
	pthread_t fin;

	req.node_name = (char *)"node-01";
	req.sequence = 7;
	CU_ASSERT_EQUAL_FATAL(pthread_create(&fin, NULL, later_finisher, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(rpc_invoke(&(struct rpc_invoke){ methods,
				sizeof(methods) / sizeof(methods[0]), NULL, LATER, buf,
				protobuf_c_message_pack(&req.base, buf), &peer, 1000 }, &res), 0);
	pthread_join(fin, NULL);
	CU_ASSERT_EQUAL(res.status, GRPC_STATUS_OK);
	ack = dratopo__v1__report_ack__unpack(NULL, res.response_len, res.response);
	CU_ASSERT_PTR_NOT_NULL(ack);
	if (ack) {
		CU_ASSERT_EQUAL(ack->sequence, 7);
		CU_ASSERT_EQUAL(ack->n_differences, 1);     /* the CN the handler saw */
		dratopo__v1__report_ack__free_unpacked(ack, NULL);
	}
	rpc_invoke_result_free(&res);
}

static void copy_file(const char *from, const char *to, bool append)
{
	FILE *in = fopen(from, "r"), *out = fopen(to, append ? "a" : "w");
	char buf[4096];
	size_t n;

	CU_ASSERT_PTR_NOT_NULL_FATAL(in);
	CU_ASSERT_PTR_NOT_NULL_FATAL(out);
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		CU_ASSERT_EQUAL(fwrite(buf, 1, n, out), n);
	fclose(in);
	fclose(out);
}

static void test_tls_reload(void)
{
	char dir[] = "/tmp/dt_rpc_reload.XXXXXX", a[1200], b[1200];
	struct fixture f;
	struct dt_err err = { 0 };
	const char *files[] = { "server.pem", "server.key", "ca.pem" };

	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	for (size_t i = 0; i < 3; i++) {
		snprintf(a, sizeof(a), "%s/%s", cert_dir, files[i]);
		snprintf(b, sizeof(b), "%s/%s", dir, files[i]);
		copy_file(a, b, false);
	}
	CU_ASSERT_EQUAL_FATAL(fx_start_with(&f, paths_in(&f.tp, dir, "server", "ca"), 0), 0);
	CU_ASSERT_EQUAL(call_report(f.addr, "other-client", REPORT, "", NULL), GRPC_STATUS_UNAVAILABLE);

	/* A broken CA file is refused and the old files stay in use. */
	snprintf(b, sizeof(b), "%s/ca.pem", dir);
	copy_file(f.tp.key, b, false);
	CU_ASSERT_EQUAL(rpc_server_reload_tls(f.srv, &err), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "ca.pem"));
	CU_ASSERT_EQUAL(report_ok(f.addr), GRPC_STATUS_OK);

	/* Trust the other CA too: its client gets in on a new connection. */
	snprintf(a, sizeof(a), "%s/ca.pem", cert_dir);
	copy_file(a, b, false);
	snprintf(a, sizeof(a), "%s/other-ca.pem", cert_dir);
	copy_file(a, b, true);
	CU_ASSERT_EQUAL(rpc_server_reload_tls(f.srv, &err), 0);
	CU_ASSERT_EQUAL(call_report(f.addr, "other-client", REPORT, "node-01", NULL), GRPC_STATUS_OK);
	CU_ASSERT_EQUAL(report_ok(f.addr), GRPC_STATUS_OK);
	rpc_server_shutdown(f.srv, 5000);
	for (size_t i = 0; i < 3; i++) {
		snprintf(b, sizeof(b), "%s/%s", dir, files[i]);
		unlink(b);
	}
	rmdir(dir);
}

/* --tls-server-name: the name checked in the server's certificate (and
 * sent by SNI) when the address is not one of its names. */
static void test_server_name(void)
{
	Dratopo__V1__TopologyReport req = DRATOPO__V1__TOPOLOGY_REPORT__INIT;
	struct fixture f;
	struct tls_paths tp;
	struct rpc_tls tls;
	struct rpc_status st = { 0 };
	struct dt_err err = { 0 };
	struct rpc_channel *ch = NULL;
	ProtobufCMessage *resp = NULL;

	CU_ASSERT_EQUAL_FATAL(fx_start_with(&f, paths(&f.tp, "wrongname-server", "ca"), 0), 0);
	CU_ASSERT_EQUAL(report_ok(f.addr), GRPC_STATUS_UNAVAILABLE);  /* not for 127.0.0.1 */
	tls = *paths(&tp, "client-admin", "ca");
	tls.server_name = "elsewhere.example";
	CU_ASSERT_EQUAL_FATAL(rpc_channel_open(f.addr, &tls, &ch, &err), 0);
	CU_ASSERT_EQUAL(rpc_call(ch, REPORT, &req.base, &dratopo__v1__report_ack__descriptor,
				 CALL_MS, &resp, &st, &err), 0);
	if (resp)
		protobuf_c_message_free_unpacked(resp, NULL);
	/* and a reconnect keeps it */
	CU_ASSERT_EQUAL(rpc_channel_reconnect(ch, &err), 0);
	resp = NULL;
	CU_ASSERT_EQUAL(rpc_call(ch, REPORT, &req.base, &dratopo__v1__report_ack__descriptor,
				 CALL_MS, &resp, &st, &err), 0);
	if (resp)
		protobuf_c_message_free_unpacked(resp, NULL);
	rpc_channel_close(ch);
	/* a name the certificate does not carry fails, and the diagnosis says so */
	tls.server_name = "nowhere.example";
	CU_ASSERT_EQUAL_FATAL(rpc_channel_open(f.addr, &tls, &ch, &err), 0);
	CU_ASSERT_EQUAL(rpc_call(ch, REPORT, &req.base, &dratopo__v1__report_ack__descriptor,
				 CALL_MS, &resp, &st, &err), -EREMOTEIO);
	CU_ASSERT_EQUAL(st.code, GRPC_STATUS_UNAVAILABLE);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "the coordinator's certificate is not for "
				      "nowhere.example (--tls-server-name) (name mismatch: it names "
				      "DNS:elsewhere.example): name one of those with --tls-server-name"));
	rpc_channel_close(ch);
	rpc_server_shutdown(f.srv, 1000);
}

/* A client's certificate renewed in place (as cert-manager renews it)
 * is used once the channel reconnects, not before; a reconnect that cannot
 * read its files leaves the channel working as it was. */
static void test_client_reconnect(void)
{
	char dir[] = "/tmp/dt_rpc_client.XXXXXX", a[1200];
	Dratopo__V1__TopologyReport req = DRATOPO__V1__TOPOLOGY_REPORT__INIT;
	struct rpc_status st = { 0 };
	struct rpc_channel *ch = NULL;
	struct tls_paths cp;
	struct fixture f;
	struct dt_err err = { 0 };

	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	CU_ASSERT_EQUAL_FATAL(fx_start(&f), 0);
	paths_in(&cp, dir, "me", "ca");
	snprintf(a, sizeof(a), "%s/other-client.pem", cert_dir);
	copy_file(a, cp.cert, false);
	snprintf(a, sizeof(a), "%s/other-client.key", cert_dir);
	copy_file(a, cp.key, false);
	snprintf(a, sizeof(a), "%s/ca.pem", cert_dir);
	copy_file(a, cp.ca, false);
	CU_ASSERT_EQUAL_FATAL(rpc_channel_open(f.addr, &cp.tls, &ch, &err), 0);
	rpc_channel_set_diagnose(ch, false);
	CU_ASSERT_EQUAL(report_with(ch, &req, &st), GRPC_STATUS_UNAVAILABLE);

	/* renewed: the channel still holds the old certificate ... */
	snprintf(a, sizeof(a), "%s/client-admin.pem", cert_dir);
	copy_file(a, cp.cert, false);
	snprintf(a, sizeof(a), "%s/client-admin.key", cert_dir);
	copy_file(a, cp.key, false);
	CU_ASSERT_EQUAL(report_with(ch, &req, &st), GRPC_STATUS_UNAVAILABLE);
	/* ... until it reconnects */
	CU_ASSERT_EQUAL(rpc_channel_reconnect(ch, &err), 0);
	CU_ASSERT_EQUAL(report_with(ch, &req, &st), GRPC_STATUS_OK);

	unlink(cp.key);
	CU_ASSERT_EQUAL(rpc_channel_reconnect(ch, &err), -ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "me.key"));
	CU_ASSERT_EQUAL(report_with(ch, &req, &st), GRPC_STATUS_OK);

	rpc_channel_close(ch);
	rpc_server_shutdown(f.srv, 5000);
	unlink(cp.cert);
	unlink(cp.ca);
	rmdir(dir);
}

static void test_config_errors(void)
{
	struct rpc_tls half = { "a.pem", NULL, "ca.pem", false };
	struct rpc_tls both = { "a.pem", "a.key", "ca.pem", true };
	struct rpc_server_opts o = { .listen = "127.0.0.1:0", .methods = methods, .n_methods = 1 };
	struct tls_paths tp;
	struct dt_err err = { 0 };
	struct rpc_channel *ch = NULL;
	struct rpc_server *srv = NULL, *second = NULL;
	char addr[64];

	CU_ASSERT_EQUAL(rpc_tls_check(&half, &err), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "--tls-key"));
	CU_ASSERT_EQUAL(rpc_tls_check(&both, &err), -EINVAL);
	CU_ASSERT_EQUAL(rpc_tls_check(&insecure, &err), 0);
	/* QA-21: a port over 65535 is refused, not wrapped around */
	CU_ASSERT_EQUAL(rpc_addr_check("127.0.0.1:99999", &err), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "port 99999 is not 0-65535"));
	CU_ASSERT_EQUAL(rpc_addr_check("[::1]:65536", &err), -EINVAL);
	CU_ASSERT_EQUAL(rpc_addr_check("", &err), -EINVAL);
	CU_ASSERT_EQUAL(rpc_addr_check("localhost:65535", &err), 0);
	CU_ASSERT_EQUAL(rpc_addr_check("[::1]:0", &err), 0);
	CU_ASSERT_EQUAL(rpc_addr_check("::1", &err), 0);
	CU_ASSERT_EQUAL(rpc_addr_check("dns:///coord.example:7443", &err), 0);
	CU_ASSERT_EQUAL(rpc_addr_check("unix:/run/x.sock", &err), 0);
	/* a server address names its port: "127.0.0.1" alone would bind 443 */
	CU_ASSERT_EQUAL(rpc_listen_check("127.0.0.1", &err), -EINVAL);
	DT_ASSERT_STR(err.msg, "address \"127.0.0.1\" has no port (HOST:PORT or [IPV6]:PORT; "
		      "port 0 picks a free one)");
	CU_ASSERT_EQUAL(rpc_listen_check("::1", &err), -EINVAL);
	CU_ASSERT_EQUAL(rpc_listen_check("[::1]", &err), -EINVAL);
	CU_ASSERT_EQUAL(rpc_listen_check("coord:", &err), -EINVAL);
	CU_ASSERT_EQUAL(rpc_listen_check("[::1]:7443", &err), 0);
	CU_ASSERT_EQUAL(rpc_listen_check("0.0.0.0:0", &err), 0);
	CU_ASSERT_EQUAL(rpc_listen_check("unix:/run/x.sock", &err), 0);
	o.listen = "127.0.0.1";
	CU_ASSERT_EQUAL(rpc_server_start(&o, &srv, &err), -EINVAL);
	CU_ASSERT_PTR_NULL(srv);
	o.listen = "127.0.0.1:0";
	CU_ASSERT_EQUAL(rpc_tls_check(&(struct rpc_tls){ .insecure = true, .server_name = "x" },
				      &err), -EINVAL);
	DT_ASSERT_STR(err.msg, "--insecure contradicts --tls-server-name");
	CU_ASSERT_EQUAL(rpc_channel_open("127.0.0.1:70000", &insecure, &ch, &err), -EINVAL);
	CU_ASSERT_PTR_NULL(ch);
	/* A key that is not the certificate's is named at open. */
	paths(&tp, "client-node-01", "ca");
	snprintf(tp.key, sizeof(tp.key), "%s/client-admin.key", cert_dir);
	CU_ASSERT_EQUAL(rpc_channel_open("127.0.0.1:1", &tp.tls, &ch, &err), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "does not belong to certificate"));
	CU_ASSERT_PTR_NULL(ch);
	paths(&tp, "missing", "ca");
	o.tls = tp.tls;
	CU_ASSERT_EQUAL(rpc_server_start(&o, &srv, &err), -ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "missing.pem"));
	/* A second server on a bound port fails instead of sharing it. */
	o.tls = insecure;
	CU_ASSERT_EQUAL_FATAL(rpc_server_start(&o, &srv, &err), 0);
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", rpc_server_port(srv));
	o.listen = addr;
	CU_ASSERT_EQUAL(rpc_server_start(&o, &second, &err), -EADDRINUSE);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, addr));
	CU_ASSERT_EQUAL(rpc_server_reload_tls(srv, &err), -EINVAL);
	rpc_server_shutdown(srv, 1000);
	/* Nobody listens there now: UNAVAILABLE, named with the address, said plainly. */
	CU_ASSERT_EQUAL(call_report(addr, NULL, REPORT, "", NULL), GRPC_STATUS_UNAVAILABLE);
	CU_ASSERT_EQUAL(strncmp(last_err, "coordinator ", 12), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(last_err, addr));
	CU_ASSERT_PTR_NOT_NULL(strstr(last_err, ": connection refused: "));
	DT_ASSERT_STR(rpc_status_name(GRPC_STATUS_RESOURCE_EXHAUSTED), "RESOURCE_EXHAUSTED");
	DT_ASSERT_STR(rpc_status_name((grpc_status_code)99), "STATUS_99");
}

static int suite_init(void)
{
	snprintf(cert_dir, sizeof(cert_dir), "%s/fixtures/tls", DT_BINARY_DIR);
	snprintf(last_err, sizeof(last_err), "%s/ca.pem", cert_dir);
	if (access(last_err, R_OK) != 0) {
		fprintf(stderr, "test_rpc: no certificates in %s (run the rpc_certs test first)\n", cert_dir);
		return 1;
	}
	return 0;
}

DT_SUITE_MAIN_WITH("rpc", suite_init, NULL,
		   DT_TEST(test_round_trip_and_identity),
		   DT_TEST(test_insecure_round_trip),
		   DT_TEST(test_other_ca_refused),
		   DT_TEST(test_garbage_payload),
		   DT_TEST(test_oversized_message),
		   DT_TEST(test_no_deadline_refused),
		   DT_TEST(test_unknown_method),
		   DT_TEST(test_silent_client),
		   DT_TEST(test_slow_handler_and_shutdown_drain),
		   DT_TEST(test_shutdown_with_idle_connection),
		   DT_TEST(test_deferred_calls),
		   DT_TEST(test_deferred_invoke),
		   DT_TEST(test_shutdown_outlives_held_call),
		   DT_TEST(test_tls_reload),
		   DT_TEST(test_client_reconnect),
		   DT_TEST(test_server_name),
		   DT_TEST(test_config_errors))
