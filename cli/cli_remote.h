/* cli_remote.h - what the commands that ask a running coordinator share:
 * the connection options (--coordinator ADDR, --tls-cert/--tls-key/--tls-ca
 * [--tls-server-name] or --insecure, and their environment and config file)
 * and one blocking call that reports failures the CLI way (a message on
 * stderr naming the coordinator and the gRPC status). */
#ifndef DT_CLI_REMOTE_H
#define DT_CLI_REMOTE_H

#include <protobuf-c/protobuf-c.h>
#include <stdint.h>

#include "opts.h"
#include "rpc.h"

struct cli_remote {
	const char *addr;               /* NULL: not given */
	struct rpc_tls tls;
};

/* The connection options as rows of a command's option table (opts.h),
 * filling the struct cli_remote field f of the command's options struct T. */
#define CLI_REMOTE_OPTS(T, f)                                                   \
	{ .name = "coordinator", .type = OPT_STR, .arg = "ADDR",                \
	  .at = OPTS_AT(T, f.addr), .help = "the coordinator (host:port)" },     \
	{ .name = "tls-cert", .type = OPT_STR, .arg = "FILE",                   \
	  .at = OPTS_AT(T, f.tls.cert),                                         \
	  .help = "client certificate (PEM), with --tls-key and --tls-ca" },    \
	{ .name = "tls-key", .type = OPT_STR, .arg = "FILE",                    \
	  .at = OPTS_AT(T, f.tls.key), .help = "its private key" },             \
	{ .name = "tls-ca", .type = OPT_STR, .arg = "FILE",                     \
	  .at = OPTS_AT(T, f.tls.ca),                                           \
	  .help = "CA bundle that verifies the coordinator" },                  \
	{ .name = "tls-server-name", .type = OPT_STR, .arg = "S",              \
	  .at = OPTS_AT(T, f.tls.server_name),                                  \
	  .help = "the name the coordinator's certificate must carry, when\n"  \
		  "ADDR is not one (kubectl port-forward to localhost)" },      \
	{ .name = "insecure", .type = OPT_FLAG, .at = OPTS_AT(T, f.tls.insecure), \
	  .help = "plaintext (a coordinator started with --insecure)" }

/* For the epilog of a command with those options. */
#define CLI_REMOTE_NOTE                                                         \
	"TLS settings also come from $DRATOPO_TLS_CERT, _KEY, _CA, _SERVER_NAME,\n" \
	"$DRATOPO_INSECURE or $DRATOPO_CONFIG (default ~/.config/dratopo/config.yaml:\n" \
	"tlsCert, tlsKey, tlsCA, tlsServerName, insecure); flags win."

/* One call to r->addr. 0 and *resp (free with
 * protobuf_c_message_free_unpacked), or the exit code after printing
 * "dratopo CMD: ..." (CLI_EXIT_USAGE for incomplete TLS options). */
int cli_remote_call(const struct cli_remote *r, const char *cmd, const char *method,
		    const ProtobufCMessage *req, const ProtobufCMessageDescriptor *resp_type,
		    int64_t deadline_ms, ProtobufCMessage **resp);

#endif
