/* rpc_server.h - a gRPC server of unary protobuf-c methods on the C core.
 *
 *   static const struct rpc_method methods[] = {
 *       { "/dratopo.v1.Coordinator/Report", &dratopo__v1__topology_report__descriptor,
 *         on_report, NULL },
 *   };
 *   struct rpc_server_opts o = { .listen = "0.0.0.0:7443", .tls = {cert, key, ca},
 *                                .methods = methods, .n_methods = 1, .user = state };
 *   rpc_server_start(&o, &srv, &err);  ...  rpc_server_shutdown(srv, 5000);
 *
 * A handler runs on one of the server's worker threads with the request
 * already unpacked; it fills *response (or leaves it NULL on failure) and
 * returns a gRPC status, with details set through rpc_ctx_fail. What the
 * glue answers by itself, before any handler runs:
 *   - a method not in the table: UNIMPLEMENTED, at once;
 *   - a call without a deadline: INVALID_ARGUMENT ("call has no deadline");
 *   - a payload that is not the method's request message: INVALID_ARGUMENT;
 *   - a message over max_recv_bytes: RESOURCE_EXHAUSTED (gRPC core's limit);
 *   - a call whose message has not arrived when its deadline, or the
 *     server's max_deadline_ms cap, is reached: DEADLINE_EXCEEDED.
 * See docs/rpc.md. */
#ifndef DT_RPC_SERVER_H
#define DT_RPC_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "rpc.h"

struct rpc_server;
struct rpc_ctx;             /* one call, as its handler sees it */

typedef grpc_status_code (*rpc_handler_fn)(struct rpc_ctx *ctx, const ProtobufCMessage *request,
					   ProtobufCMessage **response);

/* What a handler returns when it answers later, from any thread, through
 * the handle rpc_ctx_defer gave it: the worker is free at once. Not a gRPC
 * status; never sent. */
#define RPC_DEFERRED ((grpc_status_code)0x7fff)
struct rpc_deferred;        /* a call whose handler returned RPC_DEFERRED */

struct rpc_method {
	const char *path;       /* "/dratopo.v1.Coordinator/Report" */
	const ProtobufCMessageDescriptor *request;
	rpc_handler_fn handler;
	/* Frees a response once it is packed. NULL: protobuf_c_message_free_unpacked,
	 * right for a response whose every string, array and submessage was
	 * malloc'd on its own (as protobuf-c's unpack does). */
	void (*release)(ProtobufCMessage *response, void *user);
};

/* Called once per finished call, on a worker thread: the method's path,
 * the status the server settled on (CANCELLED when the client went away or
 * its message was refused by the transport), and the seconds since the call
 * arrived. */
typedef void (*rpc_observer_fn)(void *user, const char *method, grpc_status_code code,
				double seconds);

struct rpc_server_opts {
	const char *listen;             /* "0.0.0.0:7443", "127.0.0.1:0", "unix:/run/x.sock" */
	struct rpc_tls tls;             /* mTLS requiring client certificates, or insecure */
	size_t max_recv_bytes;          /* 0: 4 MiB */
	unsigned max_deadline_ms;       /* 0: 60 s; longer client deadlines are cut to it */
	unsigned workers;               /* threads running handlers; 0: 4 */
	const struct rpc_method *methods;
	size_t n_methods;
	void *user;                     /* for handlers (rpc_ctx_user) and release */
	rpc_observer_fn observe;        /* may be NULL */
	void *observe_user;
};

/* Bind, start the workers and serve. -EADDRINUSE and friends name the
 * address; bad TLS files are named too. */
int rpc_server_start(const struct rpc_server_opts *opts, struct rpc_server **out,
		     struct dt_err *err);

/* The bound TCP port (the one picked for ":0"); 1 for a unix socket. */
int rpc_server_port(const struct rpc_server *srv);

/* Read the TLS files again; new handshakes use them, open connections keep
 * theirs. On error the old files stay in use. -EINVAL for an insecure server. */
int rpc_server_reload_tls(struct rpc_server *srv, struct dt_err *err);

/* Stop accepting, let calls in flight finish for up to drain_ms, cancel the
 * rest, give handlers still holding calls up to drain_ms more, then tear
 * everything down and free srv, once every handler has returned and every
 * deferred call is finished (an answer that comes after the teardown began
 * is dropped). NULL is a no-op. */
void rpc_server_shutdown(struct rpc_server *srv, unsigned drain_ms);

/* ---- inside a handler ---- */

void *rpc_ctx_user(const struct rpc_ctx *ctx);
const char *rpc_ctx_method(const struct rpc_ctx *ctx);
/* The transport address ("ipv4:127.0.0.1:40312"). */
const char *rpc_ctx_peer(const struct rpc_ctx *ctx);
/* The client certificate's CN; NULL on an insecure server. */
const char *rpc_ctx_peer_cn(const struct rpc_ctx *ctx);
/* The client certificate's DNS SANs (IP SANs are not identities here). */
size_t rpc_ctx_peer_dns_count(const struct rpc_ctx *ctx);
const char *rpc_ctx_peer_dns(const struct rpc_ctx *ctx, size_t i);
/* Whether the client certificate's CN or one of its DNS SANs is name. */
bool rpc_ctx_peer_is(const struct rpc_ctx *ctx, const char *name);
/* Milliseconds left before the call's effective deadline (the client's,
 * cut to the server's cap). */
int64_t rpc_ctx_ms_left(const struct rpc_ctx *ctx);
/* Set the status details and return code: `return rpc_ctx_fail(ctx,
 * GRPC_STATUS_PERMISSION_DENIED, "certificate %s may not report for %s", ...)`. */
grpc_status_code rpc_ctx_fail(struct rpc_ctx *ctx, grpc_status_code code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* ---- answering later ---- */

/* The handle of ctx's call for answering it later. The handler then hands
 * it on (a queue, another thread) and returns RPC_DEFERRED; from then on
 * neither ctx nor the request may be used (the request is freed when the
 * handler returns: copy what the answer needs). Exactly one
 * rpc_deferred_finish must follow, on any thread, also while the server
 * shuts down: rpc_server_shutdown waits for deferred calls like for any
 * call in flight, and rpc_invoke waits on its thread. If the handler
 * returns anything but RPC_DEFERRED, the handle must not be used. */
struct rpc_deferred *rpc_ctx_defer(struct rpc_ctx *ctx);
/* As rpc_ctx_fail, for a deferred call before it is finished. */
grpc_status_code rpc_deferred_fail(struct rpc_deferred *d, grpc_status_code code,
				   const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Answer the call: code, and on OK response (packed, then freed with the
 * method's release, whatever the code; may be NULL when code is not OK).
 * OK without a response answers INTERNAL, as for a direct handler. d is
 * gone afterwards. */
void rpc_deferred_finish(struct rpc_deferred *d, grpc_status_code code,
			 ProtobufCMessage *response);

/* ---- without the network (unit tests, fuzzing) ---- */

/* Who the caller is, as a TLS handshake would have said. */
struct rpc_peer {
	const char *addr;               /* rpc_ctx_peer; NULL: "" */
	const char *cn;                 /* NULL: no certificate (as on an insecure server) */
	const char *const *dns;         /* DNS SANs */
	size_t n_dns;
};

struct rpc_invoke {
	const struct rpc_method *methods;
	size_t n_methods;
	void *user;                     /* rpc_ctx_user, and release's */
	const char *path;               /* "/dratopo.v1.Coordinator/Report" */
	const uint8_t *request;         /* the request message's bytes, as on the wire */
	size_t request_len;
	const struct rpc_peer *peer;    /* NULL: no identity */
	int64_t deadline_ms;            /* rpc_ctx_ms_left; <= 0: none */
};

struct rpc_invoke_result {
	grpc_status_code status;
	char details[512];              /* the status details when not OK */
	uint8_t *response;              /* packed response on OK (malloc'd) */
	size_t response_len;
};

/* Run one call as the server does once its message has arrived (the same
 * unpack, handler, pack and release), on this thread, without gRPC: an
 * unknown path answers UNIMPLEMENTED, bytes that are not the method's
 * request INVALID_ARGUMENT, like the server. 0 with *out filled (free with
 * rpc_invoke_result_free), or -ENOMEM. */
int rpc_invoke(const struct rpc_invoke *in, struct rpc_invoke_result *out);
void rpc_invoke_result_free(struct rpc_invoke_result *r);

#endif
