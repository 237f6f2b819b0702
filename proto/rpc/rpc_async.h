/* rpc_async.h - unary calls that finish on a completion queue the caller
 * drives, so that one thread keeps many calls, on many channels, in flight
 * (the load bench's simulated agents; rpc_call blocks a thread per call).
 *
 *   struct rpc_async *q;
 *   struct rpc_async_channel *ch;
 *   rpc_async_new(&q, &err);
 *   rpc_async_channel_open("127.0.0.1:7443", &tls, &ch, &err);
 *   rpc_async_start(q, ch, "/dratopo.v1.Coordinator/Report", &report.base,
 *                   &dratopo__v1__report_ack__descriptor, 5000, my_tag, &err);
 *   while (rpc_async_next(q, 100, &res) == 1) { ... res.tag, res.st, res.response ... }
 *
 * Unlike rpc_channel_open, every channel opened here has a connection of its
 * own (gRPC would otherwise share one between channels to the same address
 * with the same settings), as separate agents would. A queue is driven by
 * one thread; several threads may start calls on one channel through their
 * own queues. */
#ifndef DT_RPC_ASYNC_H
#define DT_RPC_ASYNC_H

#include <stdint.h>

#include "rpc.h"
#include "rpc_client.h"

struct rpc_async;
struct rpc_async_channel;

/* One finished call. */
struct rpc_async_result {
	void *tag;                      /* as given to rpc_async_start */
	struct rpc_status st;           /* the status on the wire */
	/* On OK, the answer unpacked (the caller frees it with
	 * protobuf_c_message_free_unpacked); NULL with st.code INTERNAL and
	 * details saying so when the answer is not a response_type. */
	ProtobufCMessage *response;
};

int rpc_async_new(struct rpc_async **out, struct dt_err *err);
/* Cancels what is still in flight, waits for it, and frees q. */
void rpc_async_free(struct rpc_async *q);

/* A channel with its own connection to addr; TLS files read and checked
 * now, connected at the first call, reconnected by gRPC after a failure. */
int rpc_async_channel_open(const char *addr, const struct rpc_tls *tls,
			   struct rpc_async_channel **out, struct dt_err *err);
/* The same with more channel arguments (a tiny flow-control window for a
 * test's client that never reads, say). */
int rpc_async_channel_open_with(const char *addr, const struct rpc_tls *tls,
				const grpc_channel_args *extra, struct rpc_async_channel **out,
				struct dt_err *err);
/* Calls still in flight on ch are cancelled (they finish on their queue). */
void rpc_async_channel_close(struct rpc_async_channel *ch);
/* The core channel, for a call shape this module does not offer. */
grpc_channel *rpc_async_channel_core(struct rpc_async_channel *ch);

/* Start one call (request packed now, deadline_ms > 0); it finishes, always
 * exactly once, as a result of rpc_async_next on q. -EINVAL for a bad
 * deadline, -ENOMEM, -EIO when gRPC refuses to start it. */
int rpc_async_start(struct rpc_async *q, struct rpc_async_channel *ch, const char *method,
		    const ProtobufCMessage *request, const ProtobufCMessageDescriptor *response_type,
		    int64_t deadline_ms, void *tag, struct dt_err *err);

/* Wait up to timeout_ms (0: poll) for a call to finish: 1 and *out, 0 when
 * none finished in time. */
int rpc_async_next(struct rpc_async *q, int64_t timeout_ms, struct rpc_async_result *out);

/* Calls started on q and not yet returned by rpc_async_next. */
unsigned rpc_async_in_flight(const struct rpc_async *q);

#endif
