/* test_rpc_tlsdiag.c - rpc_diagnose (proto/rpc/rpc_tlsdiag.c) against the
 * servers it must tell apart, with the exact sentence for each:
 *   - dt_rpc's own gRPC server: mTLS (a good client: nothing found; a client
 *     certificate of another CA, an expired one, plaintext, an untrusting
 *     --tls-ca), plaintext (a TLS client; over a unix socket too), an expired
 *     and a wrong-name server certificate;
 *   - tiny servers for what gRPC never does: an OpenSSL TLS 1.2 server that
 *     alerts "unknown ca", one without ALPN, a plain HTTP/1 answer, a
 *     listener that never answers (the timeout is the outcome, not measured);
 *   - connection refused, a missing unix socket, an address it cannot read;
 *   - rpc_tls_refusal_parse on gRPC's server-side log lines.
 * Certificates come from the rpc_certs fixture (tests/tls/mkcerts.sh). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dratopo/v1/agent.pb-c.h"
#include "dt_test.h"
#include "rpc_client.h"
#include "rpc_server.h"
#include "rpc_tlsdiag.h"

#define DIAG_MS 5000

static char cert_dir[1024];

/* "dir/name" in a static buffer per slot (a test names up to 3 files at once). */
static const char *cert(int slot, const char *name)
{
	static char buf[4][1200];

	snprintf(buf[slot], sizeof(buf[slot]), "%s/%s", cert_dir, name);
	return buf[slot];
}

struct tls_set {
	char cert[1200], key[1200], ca[1200];
	struct rpc_tls tls;
};

static const struct rpc_tls *tls_of(struct tls_set *s, const char *base, const char *ca)
{
	snprintf(s->cert, sizeof(s->cert), "%s/%s.pem", cert_dir, base);
	snprintf(s->key, sizeof(s->key), "%s/%s.key", cert_dir, base);
	snprintf(s->ca, sizeof(s->ca), "%s/%s.pem", cert_dir, ca);
	s->tls = (struct rpc_tls){ s->cert, s->key, s->ca, false };
	return &s->tls;
}

static const struct rpc_tls insecure = { NULL, NULL, NULL, true };

/* rpc_diagnose's code; its message in msg. */
static char msg[DT_ERR_MSG_MAX];

static int diagnose(const char *addr, const struct rpc_tls *tls, int64_t ms)
{
	struct dt_err err = { 0 };
	int rc = rpc_diagnose(addr, tls, ms, &err);

	snprintf(msg, sizeof(msg), "%s", rc ? err.msg : "");
	return rc;
}

static char want[DT_ERR_MSG_MAX];

#define WANT(...) (snprintf(want, sizeof(want), __VA_ARGS__), want)

/* ---- dt_rpc's gRPC server ---- */

static grpc_status_code on_report(struct rpc_ctx *ctx, const ProtobufCMessage *request,
				  ProtobufCMessage **response)
{
	(void)ctx, (void)request, (void)response;
	return GRPC_STATUS_UNIMPLEMENTED;       /* never reached: the tests only connect */
}

static const struct rpc_method methods[] = {
	{ "/dratopo.v1.Coordinator/Report", &dratopo__v1__topology_report__descriptor, on_report,
	  NULL },
};

struct grpc_fx {
	struct rpc_server *srv;
	char addr[1100];
};

/* A server with certificate base (NULL: insecure) on listen. */
static int grpc_start(struct grpc_fx *f, const char *base, const char *listen)
{
	struct tls_set s;
	struct rpc_server_opts o = { .listen = listen, .workers = 1, .methods = methods,
				     .n_methods = 1 };
	struct dt_err err = { 0 };
	int rc;

	o.tls = base ? *tls_of(&s, base, "ca") : insecure;
	rc = rpc_server_start(&o, &f->srv, &err);
	if (rc)
		fprintf(stderr, "\n  server: %s\n", err.msg);
	else if (!strncmp(listen, "unix:", 5))
		snprintf(f->addr, sizeof(f->addr), "%s", listen);
	else
		snprintf(f->addr, sizeof(f->addr), "127.0.0.1:%d", rpc_server_port(f->srv));
	return rc;
}

static void test_mtls_server(void)
{
	struct grpc_fx f;
	struct tls_set s;

	CU_ASSERT_EQUAL_FATAL(grpc_start(&f, "server", "127.0.0.1:0"), 0);
	CU_ASSERT_EQUAL(diagnose(f.addr, tls_of(&s, "client-admin", "ca"), DIAG_MS), 0);
	DT_ASSERT_STR(msg, "");
	/* dns:/// targets are read as gRPC reads them */
	CU_ASSERT_EQUAL(diagnose(WANT("dns:///%s", f.addr), &s.tls, DIAG_MS), 0);

	CU_ASSERT_EQUAL(diagnose(f.addr, tls_of(&s, "other-client", "ca"), DIAG_MS), -EACCES);
	DT_ASSERT_STR(msg, WANT("the coordinator refused this client's certificate during the TLS "
				"handshake: is --tls-cert %s signed by the CA the coordinator trusts "
				"(its --tls-ca)? It is not signed by --tls-ca %s either (unable to get "
				"local issuer certificate)", s.cert, s.ca));

	CU_ASSERT_EQUAL(diagnose(f.addr, tls_of(&s, "expired-client", "ca"), DIAG_MS), -EACCES);
	CU_ASSERT_PTR_NOT_NULL(strstr(msg, WANT("the coordinator refused this client's certificate "
						"during the TLS handshake: --tls-cert %s has "
						"expired (not after ", s.cert)));
	CU_ASSERT_PTR_NOT_NULL(strstr(msg, "Z): renew it"));

	CU_ASSERT_EQUAL(diagnose(f.addr, &insecure, DIAG_MS), -EPROTO);
	DT_ASSERT_STR(msg, "the coordinator speaks TLS: drop --insecure and give --tls-cert, "
			   "--tls-key and --tls-ca");

	/* The coordinator's certificate checked against a CA that did not sign it. */
	CU_ASSERT_EQUAL(diagnose(f.addr, tls_of(&s, "client-admin", "other-ca"), DIAG_MS), -EACCES);
	CU_ASSERT_PTR_NOT_NULL(strstr(msg, WANT("the coordinator's certificate is not trusted by "
						"--tls-ca %s: ", s.ca)));
	CU_ASSERT_PTR_NOT_NULL(strstr(msg, "(is that the CA that signed the coordinator's --tls-cert?)"));
	rpc_server_shutdown(f.srv, 1000);
}

static void test_server_certificates(void)
{
	struct grpc_fx f;
	struct tls_set s;

	CU_ASSERT_EQUAL_FATAL(grpc_start(&f, "expired-server", "127.0.0.1:0"), 0);
	CU_ASSERT_EQUAL(diagnose(f.addr, tls_of(&s, "client-admin", "ca"), DIAG_MS), -EACCES);
	DT_ASSERT_STR(msg, "the coordinator's certificate is not valid now: certificate has expired "
			   "(renew the coordinator's --tls-cert, or check the clocks)");
	rpc_server_shutdown(f.srv, 1000);

	CU_ASSERT_EQUAL_FATAL(grpc_start(&f, "wrongname-server", "127.0.0.1:0"), 0);
	CU_ASSERT_EQUAL(diagnose(f.addr, &s.tls, DIAG_MS), -EACCES);
	DT_ASSERT_STR(msg, "the coordinator's certificate is not for 127.0.0.1 (name mismatch: it "
			   "names DNS:elsewhere.example): connect by one of those names, or give the "
			   "coordinator a certificate with IP:127.0.0.1");
	rpc_server_shutdown(f.srv, 1000);
}

static void test_plaintext_server(void)
{
	static const char not_tls[] = "the coordinator is not speaking TLS (started with "
				      "--insecure?): give --insecure instead of the --tls-* files, "
				      "or start it with --tls-cert, --tls-key and --tls-ca";
	char dir[] = "/tmp/test_rpc_tlsdiag.XXXXXX", listen[128];
	struct grpc_fx f;
	struct tls_set s;

	CU_ASSERT_EQUAL_FATAL(grpc_start(&f, NULL, "127.0.0.1:0"), 0);
	CU_ASSERT_EQUAL(diagnose(f.addr, &insecure, DIAG_MS), 0);
	CU_ASSERT_EQUAL(diagnose(f.addr, tls_of(&s, "client-admin", "ca"), DIAG_MS), -EPROTO);
	DT_ASSERT_STR(msg, not_tls);
	rpc_server_shutdown(f.srv, 1000);

	/* The same over a unix socket (the name checked would be localhost). */
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	snprintf(listen, sizeof(listen), "unix:%s/coord.sock", dir);
	CU_ASSERT_EQUAL_FATAL(grpc_start(&f, NULL, listen), 0);
	CU_ASSERT_EQUAL(diagnose(f.addr, &insecure, DIAG_MS), 0);
	CU_ASSERT_EQUAL(diagnose(f.addr, &s.tls, DIAG_MS), -EPROTO);
	DT_ASSERT_STR(msg, not_tls);
	rpc_server_shutdown(f.srv, 1000);
	unlink(listen + 5);
	rmdir(dir);
}

/* ---- tiny servers for what gRPC never does ---- */

enum mini_kind { MINI_ALERT, MINI_NO_ALPN, MINI_HTTP1, MINI_SILENT };

struct mini {
	enum mini_kind kind;
	int lfd;
	char addr[64];
	SSL_CTX *ctx;
	pthread_t thread;
};

/* One connection: a TLS server's handshake, or the plain HTTP/1 answer. */
static void mini_serve(struct mini *m, int fd)
{
	char buf[512];
	SSL *ssl;

	if (m->kind == MINI_HTTP1) {
		static const char answer[] = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n";

		if (recv(fd, buf, sizeof(buf), 0) > 0)
			(void)!send(fd, answer, sizeof(answer) - 1, MSG_NOSIGNAL);
		return;
	}
	ssl = SSL_new(m->ctx);
	if (!ssl)
		return;
	SSL_set_fd(ssl, fd);
	if (SSL_accept(ssl) == 1)
		while (SSL_read(ssl, buf, sizeof(buf)) > 0)
			;       /* until the client hangs up */
	SSL_free(ssl);
}

static void *mini_main(void *arg)
{
	struct mini *m = arg;
	sigset_t pipe;
	int fd;

	/* This OpenSSL server writes with write(2): a client that hung up must
	 * not kill the suite. Only this thread: the diagnosis, on the test's
	 * thread, must never raise SIGPIPE by itself. */
	sigemptyset(&pipe);
	sigaddset(&pipe, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe, NULL);
	/* shutdown(2) on the listener ends accept with an error. */
	while ((fd = accept(m->lfd, NULL, NULL)) >= 0) {
		mini_serve(m, fd);
		close(fd);
	}
	return NULL;
}

static SSL_CTX *mini_ctx(enum mini_kind kind)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());

	if (!ctx)
		return NULL;
	if (SSL_CTX_use_certificate_chain_file(ctx, cert(0, "server.pem")) != 1 ||
	    SSL_CTX_use_PrivateKey_file(ctx, cert(0, "server.key"), SSL_FILETYPE_PEM) != 1) {
		SSL_CTX_free(ctx);
		return NULL;
	}
	if (kind == MINI_ALERT) {
		/* TLS 1.2: the client certificate is judged inside the handshake,
		 * and OpenSSL says so with an alert (gRPC's server just closes). */
		SSL_CTX_set_max_proto_version(ctx, TLS1_2_VERSION);
		SSL_CTX_load_verify_locations(ctx, cert(0, "other-ca.pem"), NULL);
		SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
	}
	return ctx;
}

static int mini_start(struct mini *m, enum mini_kind kind)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sin);

	memset(m, 0, sizeof(*m));
	m->kind = kind;
	m->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (m->lfd < 0 || bind(m->lfd, (struct sockaddr *)&sin, sizeof(sin)) ||
	    listen(m->lfd, 4) || getsockname(m->lfd, (struct sockaddr *)&sin, &len))
		return -1;
	snprintf(m->addr, sizeof(m->addr), "127.0.0.1:%d", ntohs(sin.sin_port));
	if (kind == MINI_SILENT)
		return 0;       /* the kernel completes connects; nobody ever answers */
	if (kind != MINI_HTTP1 && !(m->ctx = mini_ctx(kind)))
		return -1;
	return pthread_create(&m->thread, NULL, mini_main, m) ? -1 : 0;
}

static void mini_stop(struct mini *m)
{
	shutdown(m->lfd, SHUT_RDWR);
	if (m->kind != MINI_SILENT)
		pthread_join(m->thread, NULL);
	close(m->lfd);
	SSL_CTX_free(m->ctx);
}

static void test_alerting_server(void)
{
	struct mini m;
	struct tls_set s;

	CU_ASSERT_EQUAL_FATAL(mini_start(&m, MINI_ALERT), 0);
	CU_ASSERT_EQUAL(diagnose(m.addr, tls_of(&s, "client-admin", "ca"), DIAG_MS), -EACCES);
	DT_ASSERT_STR(msg, WANT("the coordinator refused this client's certificate during the TLS "
				"handshake (alert: unknown ca): is --tls-cert %s signed by the CA the "
				"coordinator trusts (its --tls-ca), and still valid?", s.cert));
	mini_stop(&m);
}

static void test_other_servers(void)
{
	struct mini m;
	struct tls_set s;

	tls_of(&s, "client-admin", "ca");
	CU_ASSERT_EQUAL_FATAL(mini_start(&m, MINI_NO_ALPN), 0);
	CU_ASSERT_EQUAL(diagnose(m.addr, &s.tls, DIAG_MS), -EPROTO);
	DT_ASSERT_STR(msg, "the server took TLS but not HTTP/2 (no ALPN h2): is this the "
			   "coordinator's gRPC address (--listen, not --http)?");
	mini_stop(&m);

	CU_ASSERT_EQUAL_FATAL(mini_start(&m, MINI_HTTP1), 0);
	CU_ASSERT_EQUAL(diagnose(m.addr, &s.tls, DIAG_MS), -EPROTO);
	DT_ASSERT_STR(msg, "the server answers HTTP/1, not gRPC: is this the coordinator's "
			   "--listen address (not its --http one)?");
	CU_ASSERT_EQUAL(diagnose(m.addr, &insecure, DIAG_MS), -EPROTO);
	DT_ASSERT_STR(msg, "the server answers HTTP/1, not gRPC: is this the coordinator's "
			   "--listen address (not its --http one)?");
	mini_stop(&m);

	CU_ASSERT_EQUAL_FATAL(mini_start(&m, MINI_SILENT), 0);
	CU_ASSERT_EQUAL(diagnose(m.addr, &s.tls, 200), -ETIMEDOUT);
	DT_ASSERT_STR(msg, "no answer to the TLS handshake within 200 ms");
	mini_stop(&m);
}

static void test_cannot_connect(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sin);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	char addr[64];
	struct tls_set s;

	/* Bound, never listening: the port is ours and connects are refused. */
	CU_ASSERT_FATAL(fd >= 0 && !bind(fd, (struct sockaddr *)&sin, sizeof(sin)) &&
			!getsockname(fd, (struct sockaddr *)&sin, &len));
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", ntohs(sin.sin_port));
	tls_of(&s, "client-admin", "ca");
	CU_ASSERT_EQUAL(diagnose(addr, &s.tls, DIAG_MS), -ECONNREFUSED);
	DT_ASSERT_STR(msg, "connection refused: is the coordinator running, and is this its "
			   "--listen address?");
	CU_ASSERT_EQUAL(diagnose(addr, &insecure, DIAG_MS), -ECONNREFUSED);
	close(fd);

	CU_ASSERT_EQUAL(diagnose("unix:/nonexistent/coord.sock", &insecure, DIAG_MS), -ENOENT);
	DT_ASSERT_STR(msg, "no socket /nonexistent/coord.sock: is the coordinator running there?");
	CU_ASSERT_EQUAL(diagnose("[::1", &insecure, DIAG_MS), -EINVAL);
	DT_ASSERT_STR(msg, "cannot tell host and port in \"[::1\"");
	CU_ASSERT_EQUAL(diagnose("127.0.0.1:1", &insecure, 0), -EINVAL);
	CU_ASSERT_EQUAL(diagnose("127.0.0.1:1", &(struct rpc_tls){ .cert = "x" }, DIAG_MS), -EINVAL);
}

/* ---- the server's side: gRPC's log lines ---- */

static void test_refusal_parse(void)
{
	struct rpc_tls_refusal r;

	CU_ASSERT_TRUE(rpc_tls_refusal_parse("Handshake failed with fatal error SSL_ERROR_SSL: "
					     "error:0A000086:SSL routines::certificate verify "
					     "failed.", &r));
	DT_ASSERT_STR(r.reason, "certificate verify failed");
	DT_ASSERT_STR(r.hint, "a client certificate that --tls-ca does not verify (another CA's, "
			      "or expired)");
	CU_ASSERT_TRUE(rpc_tls_refusal_parse("Handshake failed with fatal error SSL_ERROR_SSL: "
					     "error:0A00010B:SSL routines::wrong version number.",
					     &r));
	DT_ASSERT_STR(r.hint, "a client not speaking TLS (one given --insecure?)");
	/* OpenSSL 1.1's form has a function name between the colons */
	CU_ASSERT_TRUE(rpc_tls_refusal_parse("Handshake failed with fatal error SSL_ERROR_SSL: "
					     "error:1417C0C7:SSL routines:tls_process_client_"
					     "certificate:peer did not return a certificate.", &r));
	DT_ASSERT_STR(r.reason, "peer did not return a certificate");
	CU_ASSERT_TRUE(rpc_tls_refusal_parse("Handshake failed with fatal error SSL_ERROR_SYSCALL",
					     &r));
	DT_ASSERT_STR(r.reason, "SSL_ERROR_SYSCALL");
	CU_ASSERT_PTR_NULL(r.hint);
	CU_ASSERT_TRUE(rpc_tls_refusal_parse("No match found for server name: 10.0.0.5.", &r));
	DT_ASSERT_STR(r.reason, "No match found for server name: 10.0.0.5");
	CU_ASSERT_FALSE(rpc_tls_refusal_parse("grpc epoll fd: 6", &r));
	CU_ASSERT_FALSE(rpc_tls_refusal_parse(NULL, &r));
}

/* ---- rpc_call: the diagnosis in the call's error ---- */

static void test_call_error(void)
{
	Dratopo__V1__TopologyReport req = DRATOPO__V1__TOPOLOGY_REPORT__INIT;
	struct rpc_status st = { 0 };
	struct dt_err err = { 0 };
	struct rpc_channel *ch;
	ProtobufCMessage *resp = NULL;
	struct grpc_fx f;
	struct tls_set s;

	CU_ASSERT_EQUAL_FATAL(grpc_start(&f, "server", "127.0.0.1:0"), 0);
	CU_ASSERT_EQUAL_FATAL(rpc_channel_open(f.addr, &insecure, &ch, &err), 0);
	CU_ASSERT_EQUAL(rpc_call(ch, methods[0].path, &req.base,
				 &dratopo__v1__report_ack__descriptor, 10000, &resp, &st, &err),
			-EREMOTEIO);
	CU_ASSERT_EQUAL(st.code, GRPC_STATUS_UNAVAILABLE);     /* gRPC's status is kept */
	DT_ASSERT_STR(err.msg, WANT("coordinator %s: the coordinator speaks TLS: drop --insecure "
				    "and give --tls-cert, --tls-key and --tls-ca", f.addr));
	/* Turned off, the call says what gRPC said. */
	rpc_channel_set_diagnose(ch, false);
	CU_ASSERT_EQUAL(rpc_call(ch, methods[0].path, &req.base,
				 &dratopo__v1__report_ack__descriptor, 10000, &resp, &st, &err),
			-EREMOTEIO);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, WANT("coordinator %s: UNAVAILABLE: ", f.addr)));
	CU_ASSERT_EQUAL(rpc_channel_diagnose(ch, DIAG_MS, &err), -EPROTO);
	DT_ASSERT_STR(err.msg, WANT("coordinator %s: the coordinator speaks TLS: drop --insecure "
				    "and give --tls-cert, --tls-key and --tls-ca", f.addr));
	rpc_channel_close(ch);
	/* A call that reached the server is not diagnosed: its status is the answer. */
	CU_ASSERT_EQUAL_FATAL(rpc_channel_open(f.addr, tls_of(&s, "client-admin", "ca"), &ch, &err), 0);
	CU_ASSERT_EQUAL(rpc_call(ch, methods[0].path, &req.base,
				 &dratopo__v1__report_ack__descriptor, 10000, &resp, &st, &err),
			-EREMOTEIO);
	CU_ASSERT_EQUAL(st.code, GRPC_STATUS_UNIMPLEMENTED);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, ": UNIMPLEMENTED: "));
	rpc_channel_close(ch);
	rpc_server_shutdown(f.srv, 1000);
}

static int suite_init(void)
{
	snprintf(cert_dir, sizeof(cert_dir), "%s/fixtures/tls", DT_BINARY_DIR);
	if (access(cert(0, "wrongname-server.pem"), R_OK) != 0) {
		fprintf(stderr, "test_rpc_tlsdiag: no certificates in %s (run the rpc_certs test "
			"first)\n", cert_dir);
		return 1;
	}
	return 0;
}

DT_SUITE_MAIN_WITH("rpc_tlsdiag", suite_init, NULL,
		   DT_TEST(test_mtls_server),
		   DT_TEST(test_server_certificates),
		   DT_TEST(test_plaintext_server),
		   DT_TEST(test_alerting_server),
		   DT_TEST(test_other_servers),
		   DT_TEST(test_cannot_connect),
		   DT_TEST(test_refusal_parse),
		   DT_TEST(test_call_error))
