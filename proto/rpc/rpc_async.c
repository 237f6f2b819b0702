/* rpc_async.c - unary calls completing on a caller-driven queue
 * (rpc_async.h). One call is one batch of the six unary ops with one tag,
 * so it completes exactly once; the queue keeps its calls on a list so
 * that rpc_async_free can cancel and collect what is left. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpc_async.h"
#include "rpc_internal.h"

/* As rpc_client.c: a trusted server's answers may pass gRPC's 4 MiB. */
#define ASYNC_MAX_RECV (64 << 20)

struct rpc_async_channel {
	grpc_channel *ch;
};

struct async_call {
	struct rpc_async *q;
	struct async_call *prev, *next;
	grpc_call *call;
	void *tag;
	const ProtobufCMessageDescriptor *response_type;
	grpc_metadata_array md_init, md_trail;
	grpc_byte_buffer *req, *resp;
	grpc_status_code code;
	grpc_slice details;
};

struct rpc_async {
	grpc_completion_queue *cq;
	struct async_call *calls;       /* in flight */
	unsigned n;
};

int rpc_async_new(struct rpc_async **out, struct dt_err *err)
{
	struct rpc_async *q = calloc(1, sizeof(*q));

	*out = NULL;
	if (!q)
		return dt_err_set(err, -ENOMEM, "async queue: out of memory");
	grpc_init();
	q->cq = grpc_completion_queue_create_for_next(NULL);
	if (!q->cq) {
		free(q);
		grpc_shutdown();
		return dt_err_set(err, -ENOMEM, "async queue: gRPC cannot create a completion queue");
	}
	*out = q;
	return 0;
}

static void call_free(struct async_call *c)
{
	struct rpc_async *q = c->q;

	if (c->prev)
		c->prev->next = c->next;
	else
		q->calls = c->next;
	if (c->next)
		c->next->prev = c->prev;
	q->n--;
	if (c->call)
		grpc_call_unref(c->call);
	grpc_metadata_array_destroy(&c->md_init);
	grpc_metadata_array_destroy(&c->md_trail);
	if (c->req)
		grpc_byte_buffer_destroy(c->req);
	if (c->resp)
		grpc_byte_buffer_destroy(c->resp);
	grpc_slice_unref(c->details);
	free(c);
}

void rpc_async_free(struct rpc_async *q)
{
	struct rpc_async_result r;

	if (!q)
		return;
	for (struct async_call *c = q->calls; c; c = c->next)
		grpc_call_cancel(c->call, NULL);
	while (q->n)
		if (rpc_async_next(q, 1000, &r) == 1 && r.response)
			protobuf_c_message_free_unpacked(r.response, NULL);
	grpc_completion_queue_shutdown(q->cq);
	while (grpc_completion_queue_next(q->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL).type !=
	       GRPC_QUEUE_SHUTDOWN)
		;
	grpc_completion_queue_destroy(q->cq);
	free(q);
	grpc_shutdown();
}

unsigned rpc_async_in_flight(const struct rpc_async *q)
{
	return q->n;
}

#define OWN_ARGS 2

int rpc_async_channel_open_with(const char *addr, const struct rpc_tls *tls,
				const grpc_channel_args *extra, struct rpc_async_channel **out,
				struct dt_err *err)
{
	grpc_arg args[OWN_ARGS + 8] = {
		{ .type = GRPC_ARG_INTEGER, .key = (char *)GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH,
		  .value.integer = ASYNC_MAX_RECV },
		/* Its own connection: without this, channels with equal settings
		 * share one subchannel, so N "agents" would be one TCP stream. */
		{ .type = GRPC_ARG_INTEGER, .key = (char *)GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL,
		  .value.integer = 1 },
	};
	grpc_channel_args cargs = { OWN_ARGS, args };
	grpc_channel_credentials *creds;
	struct rpc_async_channel *c;

	*out = NULL;
	if (!addr || !*addr)
		return dt_err_set(err, -EINVAL, "no coordinator address");
	if (extra && extra->num_args > sizeof(args) / sizeof(args[0]) - OWN_ARGS)
		return dt_err_set(err, -EINVAL, "coordinator %s: too many channel arguments", addr);
	for (size_t i = 0; extra && i < extra->num_args; i++)
		args[cargs.num_args++] = extra->args[i];
	grpc_init();
	if (!(creds = rpc_channel_creds(tls, err))) {
		grpc_shutdown();
		return dt_err_prefix(err, "coordinator %s: ", addr);
	}
	c = calloc(1, sizeof(*c));
	if (c)
		c->ch = grpc_channel_create(addr, creds, &cargs);
	grpc_channel_credentials_release(creds);
	if (!c || !c->ch) {
		free(c);
		grpc_shutdown();
		return dt_err_set(err, -ENOMEM, "coordinator %s: cannot create a channel", addr);
	}
	*out = c;
	return 0;
}

int rpc_async_channel_open(const char *addr, const struct rpc_tls *tls,
			   struct rpc_async_channel **out, struct dt_err *err)
{
	return rpc_async_channel_open_with(addr, tls, NULL, out, err);
}

grpc_channel *rpc_async_channel_core(struct rpc_async_channel *ch)
{
	return ch->ch;
}

void rpc_async_channel_close(struct rpc_async_channel *ch)
{
	if (!ch)
		return;
	grpc_channel_destroy(ch->ch);
	free(ch);
	grpc_shutdown();
}

int rpc_async_start(struct rpc_async *q, struct rpc_async_channel *ch, const char *method,
		    const ProtobufCMessage *request, const ProtobufCMessageDescriptor *response_type,
		    int64_t deadline_ms, void *tag, struct dt_err *err)
{
	grpc_slice path;
	grpc_op ops[6];
	struct async_call *c;

	if (deadline_ms <= 0)
		return dt_err_set(err, -EINVAL, "%s: a call needs a deadline", method);
	if (!(c = calloc(1, sizeof(*c))))
		return dt_err_set(err, -ENOMEM, "%s: out of memory", method);
	c->q = q;
	c->tag = tag;
	c->response_type = response_type;
	c->details = grpc_empty_slice();
	grpc_metadata_array_init(&c->md_init);
	grpc_metadata_array_init(&c->md_trail);
	if ((c->next = q->calls))
		c->next->prev = c;
	q->calls = c;
	q->n++;
	if (!(c->req = rpc_pack(request))) {
		call_free(c);
		return dt_err_set(err, -ENOMEM, "%s: out of memory", method);
	}
	path = grpc_slice_from_copied_string(method);
	c->call = grpc_channel_create_call(ch->ch, NULL, GRPC_PROPAGATE_DEFAULTS, q->cq, path,
					   NULL, rpc_deadline_in(deadline_ms), NULL);
	grpc_slice_unref(path);
	memset(ops, 0, sizeof(ops));
	ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
	ops[1].op = GRPC_OP_SEND_MESSAGE;
	ops[1].data.send_message.send_message = c->req;
	ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
	ops[3].op = GRPC_OP_RECV_INITIAL_METADATA;
	ops[3].data.recv_initial_metadata.recv_initial_metadata = &c->md_init;
	ops[4].op = GRPC_OP_RECV_MESSAGE;
	ops[4].data.recv_message.recv_message = &c->resp;
	ops[5].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
	ops[5].data.recv_status_on_client.trailing_metadata = &c->md_trail;
	ops[5].data.recv_status_on_client.status = &c->code;
	ops[5].data.recv_status_on_client.status_details = &c->details;
	if (!c->call || grpc_call_start_batch(c->call, ops, 6, c, NULL) != GRPC_CALL_OK) {
		call_free(c);
		return dt_err_set(err, -EIO, "%s: gRPC refused to start the call", method);
	}
	return 0;
}

/* The result of a finished call; the call is freed. */
static void finish(struct async_call *c, struct rpc_async_result *out)
{
	grpc_slice bytes;

	memset(out, 0, sizeof(*out));
	out->tag = c->tag;
	out->st.code = c->code;
	snprintf(out->st.details, sizeof(out->st.details), "%.*s",
		 (int)GRPC_SLICE_LENGTH(c->details), (const char *)GRPC_SLICE_START_PTR(c->details));
	if (c->code == GRPC_STATUS_OK) {
		bytes = rpc_buffer_slice(c->resp);
		out->response = protobuf_c_message_unpack(c->response_type, NULL,
							  GRPC_SLICE_LENGTH(bytes),
							  GRPC_SLICE_START_PTR(bytes));
		grpc_slice_unref(bytes);
		if (!out->response) {
			out->st.code = GRPC_STATUS_INTERNAL;
			snprintf(out->st.details, sizeof(out->st.details),
				 "the answer is not a valid %s", c->response_type->name);
		}
	}
	call_free(c);
}

int rpc_async_next(struct rpc_async *q, int64_t timeout_ms, struct rpc_async_result *out)
{
	grpc_event ev = grpc_completion_queue_next(q->cq, rpc_deadline_in(timeout_ms), NULL);

	if (ev.type != GRPC_OP_COMPLETE)
		return 0;
	/* RECV_STATUS_ON_CLIENT makes a batch complete even when the call
	 * failed, so ev.success carries nothing the status does not. */
	finish(ev.tag, out);
	return 1;
}
