/* rpc_internal.h - helpers the server and client halves of dt_rpc share:
 * protobuf-c <-> grpc_byte_buffer, deadlines, and credentials built from
 * PEM files (checked with OpenSSL before gRPC sees them). Not installed,
 * not for other modules. */
#ifndef DT_RPC_INTERNAL_H
#define DT_RPC_INTERNAL_H

#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/support/alloc.h>
#include <grpc/support/time.h>
#include <stddef.h>
#include <stdint.h>

#include "rpc.h"

/* A byte buffer holding msg packed (NULL on OOM); the caller destroys it. */
grpc_byte_buffer *rpc_pack(const ProtobufCMessage *msg);

/* A byte buffer holding a copy of len bytes. */
grpc_byte_buffer *rpc_bytes(const void *data, size_t len);

/* The contiguous contents of bb (decompressed); the caller unrefs the slice.
 * An empty slice for a NULL buffer. */
grpc_slice rpc_buffer_slice(grpc_byte_buffer *bb);

/* Now plus ms on the realtime clock. */
gpr_timespec rpc_deadline_in(int64_t ms);

/* Milliseconds from now until t (negative when past, INT64_MAX for infinite). */
int64_t rpc_ms_until(gpr_timespec t);

/* An OpenSSL passphrase callback that refuses: an encrypted key is never
 * prompted for on a terminal (gRPC could not use one anyway). */
int rpc_pem_no_passphrase(char *buf, int size, int rwflag, void *u);

/* The channel credentials of tls (insecure ones when tls->insecure). */
grpc_channel_credentials *rpc_channel_creds(const struct rpc_tls *tls, struct dt_err *err);

/* Server TLS whose files can be read again while the server runs: gRPC asks
 * the source for a new configuration at each handshake (the SSL config
 * fetcher), and gets one only after rpc_tls_source_reload checked the new
 * files. */
struct rpc_tls_source;

int rpc_tls_source_open(const struct rpc_tls *tls, struct rpc_tls_source **out,
			struct dt_err *err);
/* Server credentials that require and verify client certificates; the
 * source must outlive the server they are given to. */
grpc_server_credentials *rpc_tls_source_creds(struct rpc_tls_source *src);
/* Read and check the files again; on failure the old ones stay in use. */
int rpc_tls_source_reload(struct rpc_tls_source *src, struct dt_err *err);
void rpc_tls_source_free(struct rpc_tls_source *src);

#endif
