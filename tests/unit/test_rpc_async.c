/* test_rpc_async.c - rpc_async.h over real loopback gRPC: many calls in
 * flight on one queue driven by one thread, each channel on its own
 * connection, statuses reported per call, and a queue freed with calls in
 * flight. Certificates come from the rpc_certs fixture (tests/rpc.cmake). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dratopo/v1/agent.pb-c.h"
#include "dt_test.h"
#include "rpc_async.h"
#include "rpc_server.h"

#define REPORT "/dratopo.v1.Coordinator/Report"
#define HOLD "/dratopo.v1.Test/Hold"
#define CALL_MS 10000
#define N_CHANNELS 4
#define N_CALLS 64

static char cert_dir[1024];

/* The transport peers the server saw, to tell connections apart. */
static struct {
	pthread_mutex_t lock;
	char peers[16][64];
	size_t n;
} seen = { PTHREAD_MUTEX_INITIALIZER, { { 0 } }, 0 };

static void note_peer(const char *peer)
{
	pthread_mutex_lock(&seen.lock);
	for (size_t i = 0; i < seen.n; i++)
		if (!strcmp(seen.peers[i], peer))
			goto out;
	if (seen.n < 16)
		snprintf(seen.peers[seen.n++], sizeof(seen.peers[0]), "%s", peer);
out:
	pthread_mutex_unlock(&seen.lock);
}

/* Answers with the report's sequence; PERMISSION_DENIED for a node name
 * that is not the certificate's. */
static grpc_status_code on_report(struct rpc_ctx *ctx, const ProtobufCMessage *request,
				  ProtobufCMessage **response)
{
	const Dratopo__V1__TopologyReport *r = (const void *)request;
	Dratopo__V1__ReportAck *ack;

	note_peer(rpc_ctx_peer(ctx));
	if (!rpc_ctx_peer_is(ctx, r->node_name))
		return rpc_ctx_fail(ctx, GRPC_STATUS_PERMISSION_DENIED, "not %s", r->node_name);
	if (!(ack = malloc(sizeof(*ack))))
		return GRPC_STATUS_RESOURCE_EXHAUSTED;
	dratopo__v1__report_ack__init(ack);
	ack->sequence = r->sequence;
	ack->verdict = DRATOPO__V1__VERDICT__VERDICT_MATCH;
	*response = &ack->base;
	return GRPC_STATUS_OK;
}

/* Never answers before the client gives up: a call to free in flight. */
static grpc_status_code on_hold(struct rpc_ctx *ctx, const ProtobufCMessage *request,
				ProtobufCMessage **response)
{
	while (rpc_ctx_ms_left(ctx) > 0)
		usleep(10000);
	return on_report(ctx, request, response);
}

static const struct rpc_method methods[] = {
	{ REPORT, &dratopo__v1__topology_report__descriptor, on_report, NULL },
	{ HOLD, &dratopo__v1__topology_report__descriptor, on_hold, NULL },
};

struct tls_paths {
	char cert[1200], key[1200], ca[1200];
	struct rpc_tls tls;
};

static const struct rpc_tls *paths(struct tls_paths *p, const char *base)
{
	snprintf(p->cert, sizeof(p->cert), "%s/%s.pem", cert_dir, base);
	snprintf(p->key, sizeof(p->key), "%s/%s.key", cert_dir, base);
	snprintf(p->ca, sizeof(p->ca), "%s/ca.pem", cert_dir);
	p->tls = (struct rpc_tls){ p->cert, p->key, p->ca, false };
	return &p->tls;
}

static struct rpc_server *start_server(char *addr, size_t len)
{
	struct tls_paths tp;
	struct rpc_server_opts o = {
		.listen = "127.0.0.1:0", .tls = *paths(&tp, "server"), .workers = 3,
		.methods = methods, .n_methods = sizeof(methods) / sizeof(methods[0]),
	};
	struct dt_err err = { 0 };
	struct rpc_server *srv = NULL;

	if (rpc_server_start(&o, &srv, &err))
		fprintf(stderr, "\n  server: %s\n", err.msg);
	else
		snprintf(addr, len, "127.0.0.1:%d", rpc_server_port(srv));
	return srv;
}

static int start_report(struct rpc_async *q, struct rpc_async_channel *ch, const char *method,
			const char *node, uint64_t seq, intptr_t tag, int64_t deadline_ms)
{
	Dratopo__V1__TopologyReport req = DRATOPO__V1__TOPOLOGY_REPORT__INIT;
	struct dt_err err = { 0 };
	int rc;

	req.node_name = (char *)node;
	req.sequence = seq;
	rc = rpc_async_start(q, ch, method, &req.base, &dratopo__v1__report_ack__descriptor,
			     deadline_ms, (void *)tag, &err);
	if (rc && deadline_ms > 0)
		fprintf(stderr, "\n  start: %s\n", err.msg);
	return rc;
}

/* 64 calls over 4 channels in flight at once, collected by one thread:
 * each finishes once, OK, with its own sequence; the server saw 4
 * connections. */
static void test_many_in_flight(void)
{
	char addr[64];
	struct rpc_server *srv = start_server(addr, sizeof(addr));
	struct rpc_async_channel *ch[N_CHANNELS] = { 0 };
	struct rpc_async *q = NULL;
	struct rpc_async_result r;
	struct dt_err err = { 0 };
	struct tls_paths tp;
	bool done[N_CALLS] = { false };
	unsigned ok = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(srv);
	seen.n = 0;
	CU_ASSERT_EQUAL_FATAL(rpc_async_new(&q, &err), 0);
	for (int i = 0; i < N_CHANNELS; i++)
		CU_ASSERT_EQUAL_FATAL(rpc_async_channel_open(addr, paths(&tp, "client-node-02"),
							     &ch[i], &err), 0);
	for (intptr_t i = 0; i < N_CALLS; i++)
		CU_ASSERT_EQUAL(start_report(q, ch[i % N_CHANNELS], REPORT, "node-02",
					     1000 + (uint64_t)i, i, CALL_MS), 0);
	CU_ASSERT_EQUAL(rpc_async_in_flight(q), N_CALLS);
	while (rpc_async_in_flight(q) && rpc_async_next(q, CALL_MS, &r) == 1) {
		intptr_t i = (intptr_t)r.tag;
		const Dratopo__V1__ReportAck *ack = (const void *)r.response;

		CU_ASSERT(i >= 0 && i < N_CALLS && !done[i]);
		if (i >= 0 && i < N_CALLS)
			done[i] = true;
		CU_ASSERT_EQUAL(r.st.code, GRPC_STATUS_OK);
		if (ack && ack->sequence == 1000 + (uint64_t)i)
			ok++;
		if (r.response)
			protobuf_c_message_free_unpacked(r.response, NULL);
	}
	CU_ASSERT_EQUAL(ok, N_CALLS);
	CU_ASSERT_EQUAL(rpc_async_next(q, 0, &r), 0);
	CU_ASSERT_EQUAL(seen.n, N_CHANNELS);
	for (int i = 0; i < N_CHANNELS; i++)
		rpc_async_channel_close(ch[i]);
	rpc_async_free(q);
	rpc_server_shutdown(srv, 1000);
}

/* Each call ends with its own status: a refused identity, an unknown
 * method, a server that is gone; a deadline of 0 is refused at once. */
static void test_statuses(void)
{
	char addr[64];
	struct rpc_server *srv = start_server(addr, sizeof(addr));
	struct rpc_async_channel *ch = NULL;
	struct rpc_async *q = NULL;
	struct rpc_async_result r;
	struct dt_err err = { 0 };
	struct tls_paths tp;
	grpc_status_code got[3] = { GRPC_STATUS_OK, GRPC_STATUS_OK, GRPC_STATUS_OK };

	CU_ASSERT_PTR_NOT_NULL_FATAL(srv);
	CU_ASSERT_EQUAL_FATAL(rpc_async_new(&q, &err), 0);
	CU_ASSERT_EQUAL_FATAL(rpc_async_channel_open(addr, paths(&tp, "client-node-02"), &ch, &err), 0);
	CU_ASSERT_EQUAL(start_report(q, ch, REPORT, "node-01", 1, 0, CALL_MS), 0);
	CU_ASSERT_EQUAL(start_report(q, ch, "/dratopo.v1.Nope/Nope", "node-02", 1, 1, CALL_MS), 0);
	CU_ASSERT_EQUAL(start_report(q, ch, REPORT, "node-02", 1, 2, 0), -EINVAL);
	while (rpc_async_in_flight(q) && rpc_async_next(q, CALL_MS, &r) == 1) {
		got[(intptr_t)r.tag] = r.st.code;
		CU_ASSERT_PTR_NULL(r.response);
	}
	CU_ASSERT_EQUAL(got[0], GRPC_STATUS_PERMISSION_DENIED);
	CU_ASSERT_EQUAL(got[1], GRPC_STATUS_UNIMPLEMENTED);
	rpc_server_shutdown(srv, 1000);
	CU_ASSERT_EQUAL(start_report(q, ch, REPORT, "node-02", 2, 2, CALL_MS), 0);
	CU_ASSERT_EQUAL(rpc_async_next(q, CALL_MS, &r), 1);
	CU_ASSERT_EQUAL(r.st.code, GRPC_STATUS_UNAVAILABLE);
	rpc_async_channel_close(ch);
	rpc_async_free(q);
}

/* A queue freed with calls the server holds: they are cancelled and
 * collected, nothing leaks (ASan), free returns. */
static void test_free_in_flight(void)
{
	char addr[64];
	struct rpc_server *srv = start_server(addr, sizeof(addr));
	struct rpc_async_channel *ch = NULL;
	struct rpc_async *q = NULL;
	struct dt_err err = { 0 };
	struct tls_paths tp;

	CU_ASSERT_PTR_NOT_NULL_FATAL(srv);
	CU_ASSERT_EQUAL_FATAL(rpc_async_new(&q, &err), 0);
	CU_ASSERT_EQUAL_FATAL(rpc_async_channel_open(addr, paths(&tp, "client-node-02"), &ch, &err), 0);
	for (intptr_t i = 0; i < 2; i++)
		CU_ASSERT_EQUAL(start_report(q, ch, HOLD, "node-02", 1, i, 2000), 0);
	CU_ASSERT_EQUAL(rpc_async_in_flight(q), 2);
	rpc_async_free(q);
	rpc_async_channel_close(ch);
	rpc_server_shutdown(srv, 3000);
}

/* A channel with a missing TLS file is refused naming it. */
static void test_open_errors(void)
{
	struct rpc_tls bad = { "/nonexistent/c.pem", "/nonexistent/c.key", "/nonexistent/ca.pem", false };
	struct rpc_async_channel *ch = (void *)1;
	struct dt_err err = { 0 };

	CU_ASSERT_NOT_EQUAL(rpc_async_channel_open("127.0.0.1:1", &bad, &ch, &err), 0);
	CU_ASSERT_PTR_NULL(ch);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "/nonexistent/"));
	CU_ASSERT_EQUAL(rpc_async_channel_open("", &bad, &ch, &err), -EINVAL);
}

static int suite_init(void)
{
	char ca[1200];

	snprintf(cert_dir, sizeof(cert_dir), "%s/fixtures/tls", DT_BINARY_DIR);
	snprintf(ca, sizeof(ca), "%s/ca.pem", cert_dir);
	if (access(ca, R_OK)) {
		fprintf(stderr, "test_rpc_async: no certificates in %s (run the rpc_certs test first)\n",
			cert_dir);
		return 1;
	}
	return 0;
}

DT_SUITE_MAIN_WITH("rpc_async", suite_init, NULL,
	DT_TEST(test_many_in_flight),
	DT_TEST(test_statuses),
	DT_TEST(test_free_in_flight),
	DT_TEST(test_open_errors))
