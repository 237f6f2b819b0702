/* rpc.h - what the gRPC glue's server (rpc_server.h) and client
 * (rpc_client.h) share: the TLS file set both sides are configured with,
 * and the names of gRPC status codes for messages and logs.
 *
 * The glue is written on the gRPC C core API (libgrpc 1.51) and protobuf-c;
 * see docs/rpc.md for the threading, deadline and identity rules. */
#ifndef DT_RPC_H
#define DT_RPC_H

#include <grpc/status.h>
#include <protobuf-c/protobuf-c.h>
#include <stdbool.h>

#include "err.h"

/* The certificate files of one side. mTLS needs all three; plaintext needs
 * insecure set and no file at all, so that a half-configured side is an
 * error rather than a silent downgrade. */
struct rpc_tls {
	const char *cert;       /* PEM certificate chain this side presents */
	const char *key;        /* PEM private key of that certificate */
	const char *ca;         /* PEM bundle that verifies the other side */
	bool insecure;          /* plaintext, only when explicitly asked for */
	/* Client only: the name the server's certificate must carry (and the
	 * SNI), when it is not the address's host (an IP, or a port-forward
	 * to localhost). NULL: the host. */
	const char *server_name;
};

/* "OK", "INVALID_ARGUMENT", ... ("STATUS_<n>" for a code gRPC does not name). */
const char *rpc_status_name(grpc_status_code code);

/* 0 when tls is a complete mTLS set or an explicit insecure one; -EINVAL
 * naming what is missing or contradictory otherwise. */
int rpc_tls_check(const struct rpc_tls *tls, struct dt_err *err);

/* Read and check tls's files as a channel or a server would (the chain
 * parses, the key is unencrypted and belongs to the first certificate, the
 * CA bundle holds one): 0, or -errno with err naming the file. 0 for an
 * insecure set. For a client that reconnects later with what it checked. */
int rpc_tls_files_check(const struct rpc_tls *tls, struct dt_err *err);

/* 0 when addr can name a gRPC endpoint; -EINVAL for an empty address or
 * a port over 65535 (gRPC would take 99999 as 99999 mod 65536 without a
 * word: QA-21). Only that is checked: target schemes (dns:///, unix:) and
 * names are gRPC's to resolve. */
int rpc_addr_check(const char *addr, struct dt_err *err);

/* gRPC's own log lines (a refused handshake, a bind error) go to fn instead
 * of stderr, so a daemon can write them as logfmt; NULL gives them back to
 * gRPC's default. Which severities reach fn is GRPC_VERBOSITY's (default
 * ERROR). fn runs on any gRPC thread and must not call gRPC. */
/* rpc_addr_check, and a port is required (a server binding "127.0.0.1"
 * would get gRPC's default, 443, without a word): -EINVAL naming the
 * address. unix: addresses need none. */
int rpc_listen_check(const char *addr, struct dt_err *err);

typedef void (*rpc_log_fn)(const char *severity, const char *file, int line, const char *message);
void rpc_set_log(rpc_log_fn fn);

#endif
