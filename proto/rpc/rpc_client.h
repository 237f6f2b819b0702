/* rpc_client.h - blocking unary calls to the coordinator over gRPC C core.
 *
 *   struct rpc_channel *ch;
 *   rpc_channel_open("coord:7443", &(struct rpc_tls){cert, key, ca}, &ch, &err);
 *   rpc_call(ch, "/dratopo.v1.Fleet/ListNodes", &req.base,
 *            &dratopo__v1__list_nodes_response__descriptor, 5000, &resp, &st, &err);
 *
 * A channel connects lazily and reconnects by itself; one channel may be
 * used by several threads at once (every call has its own completion
 * queue). A call fails fast (UNAVAILABLE) while the coordinator cannot be
 * reached: retrying, with backoff, is the caller's choice. When the
 * connection itself failed, the call's error says why (rpc_tlsdiag.h:
 * refused, a certificate refused or untrusted, TLS against plaintext). */
#ifndef DT_RPC_CLIENT_H
#define DT_RPC_CLIENT_H

#include <grpc/grpc.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rpc.h"

struct rpc_channel;

/* How a call ended on the wire. */
struct rpc_status {
	grpc_status_code code;
	char details[512];
};

/* A channel to addr ("host:port", "unix:/path"); the TLS files are read and
 * checked now, the connection is made at the first call. */
int rpc_channel_open(const char *addr, const struct rpc_tls *tls, struct rpc_channel **out,
		     struct dt_err *err);
void rpc_channel_close(struct rpc_channel *ch);
/* A new connection for the channel: the TLS files read again (a renewed
 * certificate is used from now on) and gRPC's own reconnect backoff
 * dropped, so that a caller retrying on its own schedule connects when it
 * retries. Not while a call on ch is running. On error (a TLS file that
 * cannot be read now) the channel is as before. */
int rpc_channel_reconnect(struct rpc_channel *ch, struct dt_err *err);
const char *rpc_channel_addr(const struct rpc_channel *ch);
/* The core channel, for a call shape this module does not offer (tests use
 * it for a call that never sends its message). */
grpc_channel *rpc_channel_core(struct rpc_channel *ch);

/* Whether a call that fails UNAVAILABLE before any answer runs
 * rpc_diagnose (up to 3 s) and puts what it found in its err (default on).
 * A caller that retries turns it off and calls rpc_channel_diagnose once
 * per run of failures. */
void rpc_channel_set_diagnose(struct rpc_channel *ch, bool on);
/* rpc_diagnose on the channel's address and TLS files: 0 when nothing is
 * wrong with the connection, else its code and err "coordinator ADDR: ...". */
int rpc_channel_diagnose(struct rpc_channel *ch, int64_t timeout_ms, struct dt_err *err);

/* One unary call with a deadline of deadline_ms (> 0). 0 and *response
 * (free with protobuf_c_message_free_unpacked) when the server answered OK;
 * -EREMOTEIO when it answered another status, -EBADMSG when its answer is
 * not a response_type. err reads "coordinator ADDR: STATUS: details", or
 * "coordinator ADDR: " and the diagnosis when the connection failed (st
 * keeps gRPC's status and details). st may be NULL. */
int rpc_call(struct rpc_channel *ch, const char *method, const ProtobufCMessage *request,
	     const ProtobufCMessageDescriptor *response_type, int64_t deadline_ms,
	     ProtobufCMessage **response, struct rpc_status *st, struct dt_err *err);

/* The same with raw bytes both ways; deadline_ms 0 sends no deadline at all
 * (a server of this module refuses such a call). *response (malloc'd, may be
 * NULL with *response_len 0) only on OK; response may be NULL. */
int rpc_call_bytes(struct rpc_channel *ch, const char *method, const void *request, size_t len,
		   int64_t deadline_ms, char **response, size_t *response_len,
		   struct rpc_status *st, struct dt_err *err);

#endif
