/* rpc_common.c - the small pieces both halves of the glue use: status
 * names, the TLS set check, message packing and deadline arithmetic. */
#include <grpc/support/log.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpc_internal.h"

const char *rpc_status_name(grpc_status_code code)
{
	static const char *const names[] = {
		"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED",
		"NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED",
		"FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED",
		"INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED",
	};
	static _Thread_local char other[32];

	if ((unsigned)code < sizeof(names) / sizeof(names[0]))
		return names[code];
	snprintf(other, sizeof(other), "STATUS_%d", (int)code);
	return other;
}

int rpc_tls_check(const struct rpc_tls *tls, struct dt_err *err)
{
	int have;

	if (!tls)
		return dt_err_set(err, -EINVAL, "no TLS settings: give --tls-cert, --tls-key and --tls-ca, or --insecure");
	have = !!tls->cert + !!tls->key + !!tls->ca;
	if (tls->insecure && have)
		return dt_err_set(err, -EINVAL, "--insecure contradicts the TLS files given");
	if (tls->insecure && tls->server_name)
		return dt_err_set(err, -EINVAL, "--insecure contradicts --tls-server-name");
	if (tls->insecure)
		return 0;
	if (have != 3)
		return dt_err_set(err, -EINVAL, "mTLS needs --tls-cert, --tls-key and --tls-ca (missing %s); plaintext needs --insecure",
				  !tls->cert ? "--tls-cert" : !tls->key ? "--tls-key" : "--tls-ca");
	return 0;
}

int rpc_addr_check(const char *addr, struct dt_err *err)
{
	const char *port;
	size_t n;

	if (!addr || !*addr)
		return dt_err_set(err, -EINVAL, "no address");
	if (!strncmp(addr, "unix:", 5) || !strncmp(addr, "unix-abstract:", 14))
		return 0;
	port = strrchr(addr, ':');
	if (!port || !port[1] || port[-1] == ':')
		return 0;       /* no port (gRPC's default), or a bare IPv6 address */
	n = strlen(++port);
	if (strspn(port, "0123456789") != n)
		return 0;
	if (n > 5 || strtol(port, NULL, 10) > 65535)
		return dt_err_set(err, -EINVAL, "address \"%s\": port %s is not 0-65535", addr, port);
	return 0;
}

int rpc_listen_check(const char *addr, struct dt_err *err)
{
	const char *colon;
	bool v6;
	int rc = rpc_addr_check(addr, err);

	if (rc || !strncmp(addr, "unix:", 5) || !strncmp(addr, "unix-abstract:", 14))
		return rc;
	colon = strrchr(addr, ':');
	v6 = addr[0] == '[';
	if (!colon || !colon[1] || strspn(colon + 1, "0123456789") != strlen(colon + 1) ||
	    (v6 ? colon[-1] != ']' : memchr(addr, ':', (size_t)(colon - addr)) != NULL))
		return dt_err_set(err, -EINVAL, "address \"%s\" has no port (HOST:PORT or "
				  "[IPV6]:PORT; port 0 picks a free one)", addr);
	return 0;
}

static _Atomic(rpc_log_fn) log_sink;

static void forward_log(gpr_log_func_args *a)
{
	rpc_log_fn fn = log_sink;

	if (fn)
		fn(gpr_log_severity_string(a->severity), a->file, a->line, a->message);
}

void rpc_set_log(rpc_log_fn fn)
{
	log_sink = fn;
	gpr_set_log_function(fn ? forward_log : NULL);
}

grpc_byte_buffer *rpc_bytes(const void *data, size_t len)
{
	grpc_slice s = grpc_slice_from_copied_buffer(data, len);
	grpc_byte_buffer *bb = grpc_raw_byte_buffer_create(&s, 1);

	grpc_slice_unref(s);            /* the buffer holds its own reference */
	return bb;
}

grpc_byte_buffer *rpc_pack(const ProtobufCMessage *msg)
{
	size_t len = protobuf_c_message_get_packed_size(msg);
	grpc_slice s = grpc_slice_malloc(len);
	grpc_byte_buffer *bb;

	protobuf_c_message_pack(msg, GRPC_SLICE_START_PTR(s));
	bb = grpc_raw_byte_buffer_create(&s, 1);
	grpc_slice_unref(s);
	return bb;
}

grpc_slice rpc_buffer_slice(grpc_byte_buffer *bb)
{
	grpc_byte_buffer_reader r;
	grpc_slice all;

	if (!bb || !grpc_byte_buffer_reader_init(&r, bb))
		return grpc_empty_slice();
	all = grpc_byte_buffer_reader_readall(&r);   /* protobuf-c wants it contiguous */
	grpc_byte_buffer_reader_destroy(&r);
	return all;
}

gpr_timespec rpc_deadline_in(int64_t ms)
{
	return gpr_time_add(gpr_now(GPR_CLOCK_REALTIME), gpr_time_from_millis(ms, GPR_TIMESPAN));
}

int64_t rpc_ms_until(gpr_timespec t)
{
	gpr_timespec left;

	if (t.tv_sec == INT64_MAX)      /* gpr_inf_future of any clock */
		return INT64_MAX;
	left = gpr_time_sub(t, gpr_now(t.clock_type));
	return left.tv_sec * 1000 + left.tv_nsec / 1000000;
}
