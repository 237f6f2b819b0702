/* rpc_client.c - the blocking unary client: one pluck completion queue per
 * call, so calls on one channel from several threads never meet. A call
 * that fails UNAVAILABLE before any answer is diagnosed (rpc_tlsdiag.h), so
 * its error says what is wrong instead of "Socket closed". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpc_client.h"
#include "rpc_internal.h"
#include "rpc_tlsdiag.h"

/* A trusted server's answers (node lists, plans of a large fleet) may pass
 * gRPC's 4 MiB default. */
#define CLIENT_MAX_RECV (64 << 20)
/* How long the diagnosis of a failed connection may take: a few round trips. */
#define DIAGNOSE_MS 3000

struct rpc_channel {
	grpc_channel *ch;
	char *addr;
	struct rpc_tls tls;             /* copies of the paths, for the diagnosis */
	bool diagnose;                  /* rpc_call diagnoses connection failures */
};

static void tls_free(struct rpc_tls *t)
{
	free((char *)t->cert);
	free((char *)t->key);
	free((char *)t->ca);
	free((char *)t->server_name);
}

static int tls_copy(struct rpc_tls *dst, const struct rpc_tls *src)
{
	*dst = (struct rpc_tls){ .insecure = src->insecure };
	if ((src->cert && !(dst->cert = strdup(src->cert))) ||
	    (src->key && !(dst->key = strdup(src->key))) ||
	    (src->ca && !(dst->ca = strdup(src->ca))) ||
	    (src->server_name && !(dst->server_name = strdup(src->server_name)))) {
		tls_free(dst);
		return -ENOMEM;
	}
	return 0;
}

/* The core channel to addr, TLS files read now. Its subchannels are its
 * own (not gRPC's process-wide pool), so that a new channel starts without
 * the reconnect backoff an old one to the same address built up. */
static grpc_channel *core_channel(const char *addr, const struct rpc_tls *tls,
				  struct dt_err *err)
{
	grpc_arg arg[] = {
		{ .type = GRPC_ARG_INTEGER, .key = (char *)GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH,
		  .value.integer = CLIENT_MAX_RECV },
		{ .type = GRPC_ARG_INTEGER, .key = (char *)GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL,
		  .value.integer = 1 },
		/* the name checked in the server's certificate, and the SNI */
		{ .type = GRPC_ARG_STRING, .key = (char *)GRPC_SSL_TARGET_NAME_OVERRIDE_ARG,
		  .value.string = (char *)tls->server_name },
	};
	grpc_channel_args args = { sizeof(arg) / sizeof(arg[0]) - !tls->server_name, arg };
	grpc_channel_credentials *creds = rpc_channel_creds(tls, err);
	grpc_channel *ch;

	if (!creds)
		return NULL;
	ch = grpc_channel_create(addr, creds, &args);
	grpc_channel_credentials_release(creds);
	if (!ch)
		dt_err_set(err, -ENOMEM, "cannot create a channel");
	return ch;
}

int rpc_channel_open(const char *addr, const struct rpc_tls *tls, struct rpc_channel **out,
		     struct dt_err *err)
{
	struct rpc_channel *c;

	*out = NULL;
	if (!addr || !*addr)
		return dt_err_set(err, -EINVAL, "no coordinator address");
	if (rpc_addr_check(addr, err))
		return dt_err_prefix(err, "coordinator: ");
	grpc_init();
	if (!(c = calloc(1, sizeof(*c))) || !(c->addr = strdup(addr)) || tls_copy(&c->tls, tls)) {
		dt_err_set(err, -ENOMEM, "out of memory");
	} else {
		c->diagnose = true;
		c->ch = core_channel(addr, tls, err);
	}
	if (!c || !c->ch) {
		if (c) {
			free(c->addr);
			tls_free(&c->tls);
		}
		free(c);
		grpc_shutdown();
		return dt_err_prefix(err, "coordinator %s: ", addr);
	}
	*out = c;
	return 0;
}

void rpc_channel_close(struct rpc_channel *ch)
{
	if (!ch)
		return;
	grpc_channel_destroy(ch->ch);
	free(ch->addr);
	tls_free(&ch->tls);
	free(ch);
	grpc_shutdown();
}

int rpc_channel_reconnect(struct rpc_channel *ch, struct dt_err *err)
{
	grpc_channel *fresh = core_channel(ch->addr, &ch->tls, err);

	if (!fresh)
		return dt_err_prefix(err, "coordinator %s: ", ch->addr);
	grpc_channel_destroy(ch->ch);
	ch->ch = fresh;
	return 0;
}

const char *rpc_channel_addr(const struct rpc_channel *ch)
{
	return ch->addr;
}

grpc_channel *rpc_channel_core(struct rpc_channel *ch)
{
	return ch->ch;
}

void rpc_channel_set_diagnose(struct rpc_channel *ch, bool on)
{
	ch->diagnose = on;
}

int rpc_channel_diagnose(struct rpc_channel *ch, int64_t timeout_ms, struct dt_err *err)
{
	int rc = rpc_diagnose(ch->addr, &ch->tls, timeout_ms, err);

	return rc ? dt_err_prefix(err, "coordinator %s: ", ch->addr) : 0;
}

/* Run one unary exchange; *resp_bb is the server's message (or NULL).
 * *answered: the server sent headers, so the connection was made. */
static void exchange(struct rpc_channel *ch, const char *method, grpc_byte_buffer *req_bb,
		     int64_t deadline_ms, grpc_byte_buffer **resp_bb, struct rpc_status *st,
		     bool *answered)
{
	grpc_completion_queue *cq = grpc_completion_queue_create_for_pluck(NULL);
	grpc_metadata_array md_init, md_trail;
	grpc_slice path = grpc_slice_from_copied_string(method);
	grpc_slice details = grpc_empty_slice();
	grpc_op ops[6];
	grpc_call *call;
	int tag;

	grpc_metadata_array_init(&md_init);
	grpc_metadata_array_init(&md_trail);
	call = grpc_channel_create_call(ch->ch, NULL, GRPC_PROPAGATE_DEFAULTS, cq, path, NULL,
					deadline_ms > 0 ? rpc_deadline_in(deadline_ms)
							: gpr_inf_future(GPR_CLOCK_REALTIME),
					NULL);
	memset(ops, 0, sizeof(ops));
	ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
	ops[1].op = GRPC_OP_SEND_MESSAGE;
	ops[1].data.send_message.send_message = req_bb;
	ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
	ops[3].op = GRPC_OP_RECV_INITIAL_METADATA;
	ops[3].data.recv_initial_metadata.recv_initial_metadata = &md_init;
	ops[4].op = GRPC_OP_RECV_MESSAGE;
	ops[4].data.recv_message.recv_message = resp_bb;
	ops[5].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
	ops[5].data.recv_status_on_client.trailing_metadata = &md_trail;
	ops[5].data.recv_status_on_client.status = &st->code;
	ops[5].data.recv_status_on_client.status_details = &details;
	if (!call || grpc_call_start_batch(call, ops, 6, &tag, NULL) != GRPC_CALL_OK) {
		st->code = GRPC_STATUS_INTERNAL;
		snprintf(st->details, sizeof(st->details), "cannot start the call");
	} else {
		/* RECV_STATUS_ON_CLIENT makes the batch always complete. */
		grpc_completion_queue_pluck(cq, &tag, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
		snprintf(st->details, sizeof(st->details), "%.*s", (int)GRPC_SLICE_LENGTH(details),
			 (const char *)GRPC_SLICE_START_PTR(details));
	}
	*answered = md_init.count > 0;
	if (call)
		grpc_call_unref(call);
	grpc_slice_unref(details);
	grpc_slice_unref(path);
	grpc_metadata_array_destroy(&md_init);
	grpc_metadata_array_destroy(&md_trail);
	grpc_completion_queue_shutdown(cq);     /* every tag was plucked */
	grpc_completion_queue_destroy(cq);
}

/* The error of a failed call: what the diagnosis found when the connection
 * itself failed (UNAVAILABLE before any header), gRPC's status otherwise
 * (also when the diagnosis found nothing wrong: then it was something else). */
static int call_failed(struct rpc_channel *ch, const struct rpc_status *st, bool answered,
		       struct dt_err *err)
{
	struct dt_err why = { 0 };

	if (ch->diagnose && !answered && st->code == GRPC_STATUS_UNAVAILABLE &&
	    rpc_channel_diagnose(ch, DIAGNOSE_MS, &why) < 0 && why.code != -EINVAL)
		return dt_err_set(err, -EREMOTEIO, "%s", why.msg);
	return dt_err_set(err, -EREMOTEIO, "coordinator %s: %s: %s", ch->addr,
			  rpc_status_name(st->code), st->details);
}

static int call_buffer(struct rpc_channel *ch, const char *method, grpc_byte_buffer *req_bb,
		       int64_t deadline_ms, grpc_slice *resp, struct rpc_status *st,
		       struct dt_err *err)
{
	grpc_byte_buffer *resp_bb = NULL;
	struct rpc_status local;
	bool answered = false;

	if (!st)
		st = &local;
	memset(st, 0, sizeof(*st));
	*resp = grpc_empty_slice();
	if (!req_bb)
		return dt_err_set(err, -ENOMEM, "coordinator %s: %s: out of memory", ch->addr, method);
	exchange(ch, method, req_bb, deadline_ms, &resp_bb, st, &answered);
	grpc_byte_buffer_destroy(req_bb);
	if (st->code != GRPC_STATUS_OK) {
		if (resp_bb)
			grpc_byte_buffer_destroy(resp_bb);
		return call_failed(ch, st, answered, err);
	}
	*resp = rpc_buffer_slice(resp_bb);
	if (resp_bb)
		grpc_byte_buffer_destroy(resp_bb);
	return 0;
}

int rpc_call(struct rpc_channel *ch, const char *method, const ProtobufCMessage *request,
	     const ProtobufCMessageDescriptor *response_type, int64_t deadline_ms,
	     ProtobufCMessage **response, struct rpc_status *st, struct dt_err *err)
{
	grpc_slice bytes;
	int rc;

	*response = NULL;
	if (deadline_ms <= 0)
		return dt_err_set(err, -EINVAL, "coordinator %s: %s: a call needs a deadline", ch->addr, method);
	rc = call_buffer(ch, method, rpc_pack(request), deadline_ms, &bytes, st, err);
	if (rc)
		return rc;
	*response = protobuf_c_message_unpack(response_type, NULL, GRPC_SLICE_LENGTH(bytes),
					      GRPC_SLICE_START_PTR(bytes));
	grpc_slice_unref(bytes);
	if (!*response)
		return dt_err_set(err, -EBADMSG, "coordinator %s: %s: the answer is not a valid %s",
				  ch->addr, method, response_type->name);
	return 0;
}

int rpc_call_bytes(struct rpc_channel *ch, const char *method, const void *request, size_t len,
		   int64_t deadline_ms, char **response, size_t *response_len,
		   struct rpc_status *st, struct dt_err *err)
{
	grpc_slice bytes;
	size_t n;
	int rc;

	if (response)
		*response = NULL;
	if (response_len)
		*response_len = 0;
	rc = call_buffer(ch, method, rpc_bytes(request, len), deadline_ms, &bytes, st, err);
	if (rc)
		return rc;
	n = GRPC_SLICE_LENGTH(bytes);
	if (response && n) {
		*response = malloc(n);
		if (!*response)
			rc = dt_err_set(err, -ENOMEM, "coordinator %s: %s: out of memory", ch->addr, method);
		else
			memcpy(*response, GRPC_SLICE_START_PTR(bytes), n);
	}
	if (!rc && response_len)
		*response_len = n;
	grpc_slice_unref(bytes);
	return rc;
}
