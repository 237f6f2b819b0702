/* rpc_tlsdiag.h - why a connection to the coordinator fails, in words.
 *
 * gRPC C core 1.51 reports nearly every failed connection as "UNAVAILABLE:
 * failed to connect to all addresses; ... Socket closed": a client
 * certificate the server refused, a plaintext client on a TLS port, a TLS
 * client on a plaintext port, an untrusted or expired server certificate,
 * a certificate for another name. rpc_diagnose finds out which, with a
 * short connection of its own made the way gRPC makes it (same address,
 * same files, same server-name rule, ALPN h2), and says what to check:
 *
 *   coordinator 127.0.0.1:7443: the coordinator refused this client's
 *   certificate during the TLS handshake: is --tls-cert c.pem signed by the
 *   CA the coordinator trusts (its --tls-ca)?
 *
 * rpc_call does this by itself on a connection failure (rpc_client.h); the
 * agent, which retries, calls rpc_channel_diagnose on the first failure of
 * a run. The server side only has gRPC's log line for a refused handshake:
 * rpc_tls_refusal_parse turns it into a reason and a hint. */
#ifndef DT_RPC_TLSDIAG_H
#define DT_RPC_TLSDIAG_H

#include <stdbool.h>
#include <stdint.h>

#include "rpc.h"

/* Connect to addr ("host:port", "[v6]:port", "dns:///host:port",
 * "unix:/path") as a channel with tls would, within timeout_ms, and see how
 * far it gets. 0 when the connection, the handshake and the server's first
 * HTTP/2 frame all arrive as they should (nothing found: the failure was
 * something else); otherwise err says what failed and what to check, and
 * the code is the kind of failure:
 *   -ECONNREFUSED, -EHOSTUNREACH, -ENETUNREACH, ... the connect(2) error
 *   -EADDRNOTAVAIL  the host name does not resolve
 *   -ETIMEDOUT      no answer in time
 *   -EPROTO         the server speaks something else (TLS vs plaintext, HTTP/1)
 *   -EACCES         a certificate was refused, by either side
 *   -EINVAL         addr or tls unusable (the message says which)
 * The message does not repeat the address; callers prefix it. */
int rpc_diagnose(const char *addr, const struct rpc_tls *tls, int64_t timeout_ms,
		 struct dt_err *err);

/* gRPC's server-side line for a refused handshake ("Handshake failed with
 * fatal error SSL_ERROR_SSL: error:0A000086:SSL routines::certificate verify
 * failed.", "No match found for server name: x."), taken apart. gRPC 1.51
 * does not say which peer it was, at any log level that names the reason. */
struct rpc_tls_refusal {
	char reason[128];       /* OpenSSL's reason: "certificate verify failed" */
	const char *hint;       /* what it usually means, or NULL */
};

/* true and *out when message is such a line. */
bool rpc_tls_refusal_parse(const char *message, struct rpc_tls_refusal *out);

#endif
