/* cli_remote.c - connection options and one call to the coordinator
 * (cli_remote.h). gRPC's own log lines (a failed handshake, ...) are kept
 * off stderr unless GRPC_VERBOSITY is set: the call's error already says
 * what went wrong, in the CLI's words (rpc_tlsdiag.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_remote.h"
#include "rpc_client.h"

static void grpc_log_quiet(const char *severity, const char *file, int line, const char *message)
{
	(void)severity, (void)file, (void)line, (void)message;
}

static void grpc_log_shown(const char *severity, const char *file, int line, const char *message)
{
	fprintf(stderr, "dratopo: grpc %s %s:%d: %s\n", severity, file, line, message);
}

int cli_remote_call(const struct cli_remote *r, const char *cmd, const char *method,
		    const ProtobufCMessage *req, const ProtobufCMessageDescriptor *resp_type,
		    int64_t deadline_ms, ProtobufCMessage **resp)
{
	struct rpc_channel *ch = NULL;
	struct dt_err err = { 0 };
	int rc;

	if (rpc_tls_check(&r->tls, &err)) {
		fprintf(stderr, "dratopo %s: %s\n", cmd, err.msg);
		return CLI_EXIT_USAGE;
	}
	rpc_set_log(getenv("GRPC_VERBOSITY") ? grpc_log_shown : grpc_log_quiet);
	if (rpc_channel_open(r->addr, &r->tls, &ch, &err)) {
		fprintf(stderr, "dratopo %s: %s\n", cmd, err.msg);
		return CLI_EXIT_FAIL;
	}
	rc = rpc_call(ch, method, req, resp_type, deadline_ms, resp, NULL, &err);
	rpc_channel_close(ch);
	if (rc) {
		fprintf(stderr, "dratopo %s: %s\n", cmd, err.msg);
		return CLI_EXIT_FAIL;
	}
	return 0;
}
