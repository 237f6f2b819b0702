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

const char cli_remote_help[] =
	"      --coordinator ADDR  the coordinator (host:port)\n"
	"      --tls-cert FILE     client certificate (PEM), with --tls-key and --tls-ca\n"
	"      --tls-key FILE      its private key\n"
	"      --tls-ca FILE       CA bundle that verifies the coordinator\n"
	"      --insecure          plaintext (a coordinator started with --insecure)\n";

static int take_value(int argc, char **argv, int *i, const char *name, const char **out)
{
	const char *a = argv[*i];
	size_t n = strlen(name);

	if (strncmp(a, name, n) || (a[n] && a[n] != '='))
		return 0;
	if (a[n] == '=') {
		*out = a + n + 1;
		return 1;
	}
	if (*i + 1 >= argc)
		return -1;
	*out = argv[++*i];
	return 1;
}

int cli_remote_take(struct cli_remote *r, int argc, char **argv, int *i)
{
	int rc;

	if (!strcmp(argv[*i], "--insecure")) {
		r->tls.insecure = true;
		return 1;
	}
	if ((rc = take_value(argc, argv, i, "--coordinator", &r->addr)))
		return rc;
	if ((rc = take_value(argc, argv, i, "--tls-cert", &r->tls.cert)))
		return rc;
	if ((rc = take_value(argc, argv, i, "--tls-key", &r->tls.key)))
		return rc;
	return take_value(argc, argv, i, "--tls-ca", &r->tls.ca);
}

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
