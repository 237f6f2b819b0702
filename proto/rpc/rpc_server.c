/* rpc_server.c - the unary gRPC server: call state machine, worker pool,
 * deadline cap, peer identity and the shutdown order.
 *
 * Every call is one struct rpc_ctx that walks three completion-queue tags:
 *   t_new   the call arrived (metadata only: methods are registered with
 *           GRPC_SRM_PAYLOAD_NONE, so a call is seen, and its deadline
 *           checked, before its message comes - or never comes);
 *   t_recv  its request message arrived, or the call died waiting;
 *   t_done  the answer (status, maybe a message) went out and the call
 *           closed; the observer is told and the context freed.
 * Only one tag of a call is outstanding at a time, so the worker holding it
 * owns the call without a lock; the one other thread that touches a call
 * is the watchdog, and it only cancels (thread-safe in gRPC) under its own
 * lock, which t_recv takes before going on. A handler that returns
 * RPC_DEFERRED hands that ownership on with the rpc_deferred handle (the
 * context itself): whoever holds it starts the final batch, from any
 * thread, and t_done comes back to a worker as usual.
 *
 * Workers are N threads blocked in grpc_completion_queue_next on one queue:
 * a handler that takes its time holds one worker and the others go on
 * serving. Unknown methods are caught by a generic grpc_server_request_call
 * that is always outstanding; without it gRPC would hold them until their
 * deadline. */
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <grpc/support/string_util.h>

#include "array.h"
#include "rpc_internal.h"
#include "rpc_server.h"

#define DEFAULT_MAX_RECV (4u << 20)
#define DEFAULT_MAX_DEADLINE_MS 60000u
#define DEFAULT_WORKERS 4u
#define HANDSHAKE_TIMEOUT_MS 10000
#define DETAILS_MAX 512

struct cq_tag {
	void (*fn)(struct cq_tag *tag, bool ok);
};

#define CTX_OF(tag, member) \
	((struct rpc_ctx *)((char *)(tag) - offsetof(struct rpc_ctx, member)))

struct method_slot {
	const struct rpc_method *m;
	void *handle;                   /* from grpc_server_register_method */
};

struct rpc_server {
	grpc_server *server;
	grpc_completion_queue *cq;
	struct rpc_tls_source *tls;     /* NULL when insecure */
	struct method_slot *slots;
	size_t n_slots;
	struct rpc_server_opts opts;
	int port;
	unsigned armed_per_method;      /* requests kept outstanding per method */

	pthread_t *workers;
	unsigned n_workers;
	atomic_bool stopping;

	struct cq_tag shutdown_tag;
	pthread_mutex_t lock;           /* shutdown_seen; the wait for held */
	pthread_cond_t shutdown_cond;   /* shutdown_seen set, or held 0 while stopping */
	bool shutdown_seen;
	/* Calls a handler holds (running, or deferred and not yet finished):
	 * gRPC's shutdown tag does not wait for them once their clients are
	 * gone, but they still answer, and the server must outlive them. An
	 * atomic, not under the lock: it changes twice a call. */
	atomic_uint held;
	/* Calls that arrived and are not done: with none, a shutdown has
	 * nothing to drain and closes idle connections at once (gRPC's tag
	 * would wait for the clients to hang up, seconds for an idle agent). */
	atomic_uint active;
	/* Taken shared around every batch, exclusive to shut the queue down:
	 * after that a late answer is dropped, as starting a batch on a shut
	 * queue is an assertion in gRPC. */
	pthread_rwlock_t batch_lock;
	bool cq_closed;

	/* The watchdog cancels calls still waiting for their message at the
	 * server's cap: a client's own deadline gRPC enforces by itself. */
	pthread_t watchdog;
	bool watchdog_running;
	pthread_mutex_t wd_lock;
	pthread_cond_t wd_cond;         /* on CLOCK_MONOTONIC */
	bool wd_stop;
	struct rpc_ctx *waiting;        /* calls with a cap, in no order */
};

/* rpc_invoke's thread waiting for a deferred answer. */
struct invoke_wait {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool done;
	struct rpc_invoke_result *out;
};

struct rpc_ctx {
	struct rpc_server *srv;         /* NULL: rpc_invoke, no network */
	struct invoke_wait *wait;       /* rpc_invoke only */
	const struct method_slot *slot; /* NULL: the unknown-method catcher, or rpc_invoke */
	const struct rpc_method *m;     /* the method (NULL: unknown) */
	void *user;                     /* the handlers' user pointer */
	struct cq_tag t_new, t_recv, t_done;
	grpc_call *call;
	gpr_timespec deadline;
	grpc_metadata_array md;
	grpc_call_details details;      /* unknown-method path only */
	grpc_byte_buffer *payload, *reply;
	int cancelled;
	struct timespec started;        /* monotonic, for the observer */
	int64_t cap_ms;                 /* monotonic ms of the server cap; 0 if none */

	grpc_status_code status;
	char msg[DETAILS_MAX];
	grpc_slice msg_slice;

	char *peer, *peer_cn;
	char **peer_dns;
	size_t n_peer_dns, cap_peer_dns;

	struct rpc_ctx *wd_prev, *wd_next;
	bool watched, capped;
	bool counted;                   /* in srv->active */
};

static void on_new(struct cq_tag *tag, bool ok);
static void on_recv(struct cq_tag *tag, bool ok);
static void on_done(struct cq_tag *tag, bool ok);

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- accessors for handlers ---- */

void *rpc_ctx_user(const struct rpc_ctx *ctx) { return ctx->user; }
const char *rpc_ctx_method(const struct rpc_ctx *ctx) { return ctx->m->path; }
const char *rpc_ctx_peer(const struct rpc_ctx *ctx) { return ctx->peer ? ctx->peer : ""; }
const char *rpc_ctx_peer_cn(const struct rpc_ctx *ctx) { return ctx->peer_cn; }
size_t rpc_ctx_peer_dns_count(const struct rpc_ctx *ctx) { return ctx->n_peer_dns; }

const char *rpc_ctx_peer_dns(const struct rpc_ctx *ctx, size_t i)
{
	return i < ctx->n_peer_dns ? ctx->peer_dns[i] : NULL;
}

bool rpc_ctx_peer_is(const struct rpc_ctx *ctx, const char *name)
{
	if (!name || !*name)
		return false;
	if (ctx->peer_cn && strcmp(ctx->peer_cn, name) == 0)
		return true;
	for (size_t i = 0; i < ctx->n_peer_dns; i++)
		if (strcmp(ctx->peer_dns[i], name) == 0)
			return true;
	return false;
}

int64_t rpc_ctx_ms_left(const struct rpc_ctx *ctx)
{
	int64_t left = rpc_ms_until(ctx->deadline);

	if (ctx->cap_ms && ctx->cap_ms - mono_ms() < left)
		left = ctx->cap_ms - mono_ms();
	return left;
}

grpc_status_code rpc_ctx_fail(struct rpc_ctx *ctx, grpc_status_code code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ctx->msg, sizeof(ctx->msg), fmt, ap);
	va_end(ap);
	return code;
}

struct rpc_deferred *rpc_ctx_defer(struct rpc_ctx *ctx)
{
	return (struct rpc_deferred *)ctx;
}

grpc_status_code rpc_deferred_fail(struct rpc_deferred *d, grpc_status_code code,
				   const char *fmt, ...)
{
	struct rpc_ctx *c = (struct rpc_ctx *)d;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->msg, sizeof(c->msg), fmt, ap);
	va_end(ap);
	return code;
}

/* ---- per-call lifetime ---- */

static struct rpc_ctx *ctx_new(struct rpc_server *srv, const struct method_slot *slot)
{
	struct rpc_ctx *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->srv = srv;
	c->slot = slot;
	c->m = slot ? slot->m : NULL;
	c->user = srv->opts.user;
	c->t_new.fn = on_new;
	c->t_recv.fn = on_recv;
	c->t_done.fn = on_done;
	c->msg_slice = grpc_empty_slice();
	grpc_metadata_array_init(&c->md);
	grpc_call_details_init(&c->details);
	return c;
}

static void wake_shutdown(struct rpc_server *s)
{
	pthread_mutex_lock(&s->lock);
	pthread_cond_broadcast(&s->shutdown_cond);
	pthread_mutex_unlock(&s->lock);
}

static void ctx_free(struct rpc_ctx *c)
{
	if (c->counted && atomic_fetch_sub(&c->srv->active, 1) == 1 &&
	    atomic_load(&c->srv->stopping))
		wake_shutdown(c->srv);  /* the last call: shutdown may close the rest */
	if (c->call)
		grpc_call_unref(c->call);
	grpc_metadata_array_destroy(&c->md);
	grpc_call_details_destroy(&c->details);
	if (c->payload)
		grpc_byte_buffer_destroy(c->payload);
	if (c->reply)
		grpc_byte_buffer_destroy(c->reply);
	grpc_slice_unref(c->msg_slice);
	if (c->peer)
		gpr_free(c->peer);
	free(c->peer_cn);
	for (size_t i = 0; i < c->n_peer_dns; i++)
		free(c->peer_dns[i]);
	free(c->peer_dns);
	free(c);
}

/* Post one request for slot's method (slot NULL: for any unknown method). */
static int arm(struct rpc_server *srv, const struct method_slot *slot)
{
	struct rpc_ctx *c = ctx_new(srv, slot);
	grpc_call_error e;

	if (!c)
		return -ENOMEM;
	if (slot)
		e = grpc_server_request_registered_call(srv->server, slot->handle, &c->call,
							&c->deadline, &c->md, NULL, srv->cq,
							srv->cq, &c->t_new);
	else
		e = grpc_server_request_call(srv->server, &c->call, &c->details, &c->md,
					     srv->cq, srv->cq, &c->t_new);
	if (e != GRPC_CALL_OK) {
		ctx_free(c);
		return -EIO;
	}
	return 0;
}

/* ---- the watchdog ---- */

static void watch(struct rpc_ctx *c)
{
	struct rpc_server *s = c->srv;

	pthread_mutex_lock(&s->wd_lock);
	c->wd_next = s->waiting;
	if (s->waiting)
		s->waiting->wd_prev = c;
	s->waiting = c;
	c->watched = true;
	pthread_cond_signal(&s->wd_cond);
	pthread_mutex_unlock(&s->wd_lock);
}

static void unlink_watched(struct rpc_ctx *c)    /* wd_lock held */
{
	if (c->wd_prev)
		c->wd_prev->wd_next = c->wd_next;
	else
		c->srv->waiting = c->wd_next;
	if (c->wd_next)
		c->wd_next->wd_prev = c->wd_prev;
	c->wd_prev = c->wd_next = NULL;
	c->watched = false;
}

/* After this returns the watchdog no longer knows c; true if it capped it. */
static bool unwatch(struct rpc_ctx *c)
{
	bool capped;

	pthread_mutex_lock(&c->srv->wd_lock);
	if (c->watched)
		unlink_watched(c);
	capped = c->capped;
	pthread_mutex_unlock(&c->srv->wd_lock);
	return capped;
}

static void *watchdog_main(void *arg)
{
	struct rpc_server *s = arg;

	pthread_mutex_lock(&s->wd_lock);
	while (!s->wd_stop) {
		int64_t now = mono_ms(), next = INT64_MAX;
		struct rpc_ctx *c = s->waiting, *n;
		struct timespec ts;

		for (; c; c = n) {
			n = c->wd_next;
			if (c->cap_ms <= now) {
				unlink_watched(c);
				c->capped = true;
				grpc_call_cancel_with_status(c->call, GRPC_STATUS_DEADLINE_EXCEEDED,
							     "server deadline cap reached before the request arrived",
							     NULL);
			} else if (c->cap_ms < next) {
				next = c->cap_ms;
			}
		}
		if (next == INT64_MAX) {
			pthread_cond_wait(&s->wd_cond, &s->wd_lock);
			continue;
		}
		ts.tv_sec = next / 1000;
		ts.tv_nsec = (next % 1000) * 1000000;
		pthread_cond_timedwait(&s->wd_cond, &s->wd_lock, &ts);
	}
	pthread_mutex_unlock(&s->wd_lock);
	return NULL;
}

/* ---- the call's steps ---- */

/* A batch on c's call; false when it did not start (no tag will come). */
static bool start_batch(struct rpc_ctx *c, const grpc_op *ops, size_t n, struct cq_tag *tag)
{
	struct rpc_server *s = c->srv;
	bool started;

	pthread_rwlock_rdlock(&s->batch_lock);
	started = !s->cq_closed &&
		  grpc_call_start_batch(c->call, ops, n, tag, NULL) == GRPC_CALL_OK;
	pthread_rwlock_unlock(&s->batch_lock);
	return started;
}

static void hold(struct rpc_server *s)
{
	atomic_fetch_add(&s->held, 1);
}

/* The last one out wakes a shutdown waiting for it (the lock after the
 * decrement: a waiter either saw the count or is waiting by then). */
static void unhold(struct rpc_server *s)
{
	if (atomic_fetch_sub(&s->held, 1) != 1 || !atomic_load(&s->stopping))
		return;
	wake_shutdown(s);
}

/* Send the final status (with c->reply when there is one) and close. */
static void finish(struct rpc_ctx *c, grpc_status_code code)
{
	grpc_op ops[4];
	size_t n = 0;

	c->status = code;
	if (!c->msg[0] && code != GRPC_STATUS_OK)
		snprintf(c->msg, sizeof(c->msg), "%s", rpc_status_name(code));
	grpc_slice_unref(c->msg_slice);
	c->msg_slice = grpc_slice_from_copied_string(c->msg);
	memset(ops, 0, sizeof(ops));
	ops[n++].op = GRPC_OP_SEND_INITIAL_METADATA;
	if (c->reply) {
		ops[n].op = GRPC_OP_SEND_MESSAGE;
		ops[n++].data.send_message.send_message = c->reply;
	}
	ops[n].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
	ops[n].data.send_status_from_server.status = code;
	ops[n++].data.send_status_from_server.status_details = &c->msg_slice;
	ops[n].op = GRPC_OP_RECV_CLOSE_ON_SERVER;
	ops[n++].data.recv_close_on_server.cancelled = &c->cancelled;
	if (!start_batch(c, ops, n, &c->t_done))
		ctx_free(c);    /* no tag will come for a batch that did not start */
}

static void read_identity(struct rpc_ctx *c)
{
	grpc_auth_context *ac = grpc_call_auth_context(c->call);
	grpc_auth_property_iterator it;
	const grpc_auth_property *p;

	c->peer = grpc_call_get_peer(c->call);
	if (!ac)
		return;
	if (!grpc_auth_context_peer_is_authenticated(ac))
		goto out;
	it = grpc_auth_context_find_properties_by_name(ac, GRPC_X509_CN_PROPERTY_NAME);
	p = grpc_auth_property_iterator_next(&it);
	if (p)
		c->peer_cn = strndup(p->value, p->value_length);
	it = grpc_auth_context_find_properties_by_name(ac, GRPC_PEER_DNS_PROPERTY_NAME);
	while ((p = grpc_auth_property_iterator_next(&it))) {
		char *name = strndup(p->value, p->value_length);

		if (!name || DT_GROW(c->peer_dns, c->cap_peer_dns, c->n_peer_dns + 1)) {
			free(name);         /* an identity cut short only denies more */
			break;
		}
		c->peer_dns[c->n_peer_dns++] = name;
	}
out:
	grpc_auth_context_release(ac);
}

static void on_new(struct cq_tag *tag, bool ok)
{
	struct rpc_ctx *c = CTX_OF(tag, t_new);
	struct rpc_server *s = c->srv;
	int64_t left;
	grpc_op op;

	if (!ok) {                  /* the server is shutting down */
		ctx_free(c);
		return;
	}
	c->counted = true;
	atomic_fetch_add(&s->active, 1);
	clock_gettime(CLOCK_MONOTONIC, &c->started);
	if (!atomic_load(&s->stopping))
		arm(s, c->slot);    /* re-arm first; a failure leaves one fewer slot */
	if (!c->slot) {
		char *m = grpc_slice_to_c_string(c->details.method);

		rpc_ctx_fail(c, GRPC_STATUS_UNIMPLEMENTED, "unknown method %s", m);
		gpr_free(m);
		finish(c, GRPC_STATUS_UNIMPLEMENTED);
		return;
	}
	left = rpc_ms_until(c->deadline);
	if (left == INT64_MAX) {
		finish(c, rpc_ctx_fail(c, GRPC_STATUS_INVALID_ARGUMENT,
				       "call has no deadline: every call must set one (the server caps it at %u ms)",
				       s->opts.max_deadline_ms));
		return;
	}
	read_identity(c);
	memset(&op, 0, sizeof(op));
	op.op = GRPC_OP_RECV_MESSAGE;
	op.data.recv_message.recv_message = &c->payload;
	/* Watched before the batch starts: once it has, another worker may
	 * take t_recv and free c. */
	if (left > (int64_t)s->opts.max_deadline_ms) {
		c->cap_ms = mono_ms() + s->opts.max_deadline_ms;
		watch(c);
	}
	if (!start_batch(c, &op, 1, &c->t_recv)) {
		unwatch(c);
		finish(c, rpc_ctx_fail(c, GRPC_STATUS_INTERNAL, "cannot read the request"));
	}
}

/* Unpack bytes as the method's request and run its handler: the status,
 * and on OK *resp for the caller to settle. RPC_DEFERRED: c belongs to
 * the handle's holder now, and the caller must not touch it. */
static grpc_status_code run_method(struct rpc_ctx *c, const uint8_t *bytes, size_t len,
				   ProtobufCMessage **resp)
{
	const struct rpc_method *m = c->m;
	ProtobufCMessage *req;
	grpc_status_code code;

	*resp = NULL;
	req = protobuf_c_message_unpack(m->request, NULL, len, bytes);
	if (!req)
		return rpc_ctx_fail(c, GRPC_STATUS_INVALID_ARGUMENT,
				    "request is not a valid %s message", m->request->name);
	code = m->handler(c, req, resp);
	protobuf_c_message_free_unpacked(req, NULL);
	return code;
}

static grpc_status_code check_response(struct rpc_ctx *c, grpc_status_code code,
				       const ProtobufCMessage *resp)
{
	if (code == GRPC_STATUS_OK && !resp)
		return rpc_ctx_fail(c, GRPC_STATUS_INTERNAL, "%s gave no response", c->m->path);
	return code;
}

static void release_response(struct rpc_ctx *c, ProtobufCMessage *resp)
{
	if (!resp)
		return;
	if (c->m->release)
		c->m->release(resp, c->user);
	else
		protobuf_c_message_free_unpacked(resp, NULL);
}

/* Pack a handler's answer into c->reply and release it: the status to send. */
static grpc_status_code settle(struct rpc_ctx *c, grpc_status_code code, ProtobufCMessage *resp)
{
	code = check_response(c, code, resp);
	if (code == GRPC_STATUS_OK) {
		c->reply = rpc_pack(resp);
		if (!c->reply)
			code = rpc_ctx_fail(c, GRPC_STATUS_RESOURCE_EXHAUSTED, "cannot pack the response");
	}
	release_response(c, resp);
	return code;
}

/* The status to send, or RPC_DEFERRED (then c is no longer this thread's). */
static grpc_status_code handle(struct rpc_ctx *c)
{
	ProtobufCMessage *resp;
	grpc_status_code code;
	grpc_slice bytes = rpc_buffer_slice(c->payload);

	code = run_method(c, GRPC_SLICE_START_PTR(bytes), GRPC_SLICE_LENGTH(bytes), &resp);
	grpc_slice_unref(bytes);
	if (code == RPC_DEFERRED)
		return code;
	return settle(c, code, resp);
}

static void invoke_settle(struct rpc_ctx *c, grpc_status_code code, ProtobufCMessage *resp);

void rpc_deferred_finish(struct rpc_deferred *d, grpc_status_code code,
			 ProtobufCMessage *response)
{
	struct rpc_ctx *c = (struct rpc_ctx *)d;
	struct rpc_server *s = c->srv;  /* c may be gone once finish returns */

	if (!s) {
		invoke_settle(c, code, response);
		return;
	}
	finish(c, settle(c, code, response));
	unhold(s);
}

static void on_recv(struct cq_tag *tag, bool ok)
{
	struct rpc_ctx *c = CTX_OF(tag, t_recv);
	bool capped = unwatch(c);

	if (capped)
		finish(c, rpc_ctx_fail(c, GRPC_STATUS_DEADLINE_EXCEEDED,
				       "server deadline cap reached before the request arrived"));
	else if (!ok)           /* client gone, its deadline, or a message over the limit */
		finish(c, rpc_ctx_fail(c, GRPC_STATUS_CANCELLED, "call ended before its request arrived"));
	else if (!c->payload)
		finish(c, rpc_ctx_fail(c, GRPC_STATUS_INVALID_ARGUMENT, "no request message"));
	else {
		struct rpc_server *s = c->srv;
		grpc_status_code code;

		hold(s);
		if ((code = handle(c)) != RPC_DEFERRED) {
			finish(c, code);
			unhold(s);
		}
	}
}

static void on_done(struct cq_tag *tag, bool ok)
{
	struct rpc_ctx *c = CTX_OF(tag, t_done);
	struct rpc_server *s = c->srv;
	grpc_status_code code = c->status;
	struct timespec now;

	if ((!ok || c->cancelled) && code == GRPC_STATUS_OK)
		code = GRPC_STATUS_CANCELLED;   /* the answer never reached the client */
	if (s->opts.observe) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		s->opts.observe(s->opts.observe_user,
				c->m ? c->m->path : "unknown", code,
				(double)(now.tv_sec - c->started.tv_sec) +
				(double)(now.tv_nsec - c->started.tv_nsec) / 1e9);
	}
	ctx_free(c);
}

static void on_shutdown(struct cq_tag *tag, bool ok)
{
	struct rpc_server *s = (struct rpc_server *)((char *)tag - offsetof(struct rpc_server, shutdown_tag));

	(void)ok;
	pthread_mutex_lock(&s->lock);
	s->shutdown_seen = true;
	pthread_cond_broadcast(&s->shutdown_cond);
	pthread_mutex_unlock(&s->lock);
}

static void *worker_main(void *arg)
{
	struct rpc_server *s = arg;

	for (;;) {
		grpc_event ev = grpc_completion_queue_next(s->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);

		if (ev.type == GRPC_QUEUE_SHUTDOWN)
			return NULL;
		if (ev.type == GRPC_OP_COMPLETE)
			((struct cq_tag *)ev.tag)->fn(ev.tag, ev.success);
	}
}

/* ---- start and stop ---- */

static int bind_port(struct rpc_server *s, struct dt_err *err)
{
	grpc_server_credentials *creds;
	int rc;

	if (s->opts.tls.insecure) {
		creds = grpc_insecure_server_credentials_create();
	} else {
		rc = rpc_tls_source_open(&s->opts.tls, &s->tls, err);
		if (rc)
			return rc;
		creds = rpc_tls_source_creds(s->tls);
	}
	if (!creds)
		return dt_err_set(err, -EINVAL, "listen %s: gRPC refused the credentials", s->opts.listen);
	s->port = grpc_server_add_http2_port(s->server, s->opts.listen, creds);
	grpc_server_credentials_release(creds);     /* the server holds its own */
	if (s->port <= 0)
		return dt_err_set(err, -EADDRINUSE, "listen %s: cannot bind (in use, or not an address)",
				  s->opts.listen);
	return 0;
}

static int create_server(struct rpc_server *s, struct dt_err *err)
{
	grpc_arg args[3];
	grpc_channel_args ca = { 3, args };

	args[0].type = GRPC_ARG_INTEGER;
	args[0].key = (char *)GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH;
	args[0].value.integer = s->opts.max_recv_bytes > INT32_MAX ? INT32_MAX : (int)s->opts.max_recv_bytes;
	args[1].type = GRPC_ARG_INTEGER;    /* a second server on the port is an error */
	args[1].key = (char *)GRPC_ARG_ALLOW_REUSEPORT;
	args[1].value.integer = 0;
	args[2].type = GRPC_ARG_INTEGER;    /* a connection that never finishes TLS */
	args[2].key = (char *)GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS;
	args[2].value.integer = HANDSHAKE_TIMEOUT_MS;
	s->server = grpc_server_create(&ca, NULL);
	s->cq = grpc_completion_queue_create_for_next(NULL);
	if (!s->server || !s->cq)
		return dt_err_set(err, -ENOMEM, "cannot create the gRPC server");
	grpc_server_register_completion_queue(s->server, s->cq, NULL);
	for (size_t i = 0; i < s->n_slots; i++) {
		const struct rpc_method *m = &s->opts.methods[i];

		if (!m->path || m->path[0] != '/' || !m->request || !m->handler)
			return dt_err_set(err, -EINVAL, "method %zu (%s): needs a /pkg.Service/Method path, a request descriptor and a handler",
					  i, m->path ? m->path : "no path");
		s->slots[i].m = m;
		s->slots[i].handle = grpc_server_register_method(s->server, m->path, NULL,
								 GRPC_SRM_PAYLOAD_NONE, 0);
		if (!s->slots[i].handle)
			return dt_err_set(err, -EINVAL, "method %s: registered twice", m->path);
	}
	return bind_port(s, err);
}

static int start_threads(struct rpc_server *s, struct dt_err *err)
{
	if (pthread_create(&s->watchdog, NULL, watchdog_main, s))
		return dt_err_set(err, -EAGAIN, "cannot start the watchdog thread");
	s->watchdog_running = true;
	for (; s->n_workers < s->opts.workers; s->n_workers++)
		if (pthread_create(&s->workers[s->n_workers], NULL, worker_main, s))
			return dt_err_set(err, -EAGAIN, "cannot start worker thread %u", s->n_workers);
	return 0;
}

static int arm_all(struct rpc_server *s, struct dt_err *err)
{
	for (unsigned k = 0; k < s->armed_per_method; k++) {
		for (size_t i = 0; i < s->n_slots; i++)
			if (arm(s, &s->slots[i]))
				return dt_err_set(err, -ENOMEM, "cannot post requests for %s",
						  s->slots[i].m->path);
		if (arm(s, NULL))
			return dt_err_set(err, -ENOMEM, "cannot post the unknown-method request");
	}
	return 0;
}

static void init_sync(struct rpc_server *s)
{
	pthread_condattr_t ca;

	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->shutdown_cond, NULL);
	pthread_rwlock_init(&s->batch_lock, NULL);
	pthread_mutex_init(&s->wd_lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->wd_cond, &ca);
	pthread_condattr_destroy(&ca);
}

/* What is left once gRPC's objects are gone. */
static void server_free(struct rpc_server *s)
{
	rpc_tls_source_free(s->tls);
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->shutdown_cond);
	pthread_rwlock_destroy(&s->batch_lock);
	pthread_mutex_destroy(&s->wd_lock);
	pthread_cond_destroy(&s->wd_cond);
	free(s->slots);
	free(s->workers);
	free(s);
	grpc_shutdown();
}

static void set_defaults(struct rpc_server_opts *o)
{
	if (!o->max_recv_bytes)
		o->max_recv_bytes = DEFAULT_MAX_RECV;
	if (!o->max_deadline_ms)
		o->max_deadline_ms = DEFAULT_MAX_DEADLINE_MS;
	if (!o->workers)
		o->workers = DEFAULT_WORKERS;
}

int rpc_server_start(const struct rpc_server_opts *opts, struct rpc_server **out,
		     struct dt_err *err)
{
	struct rpc_server *s;
	int rc;

	*out = NULL;
	if (!opts->listen || !*opts->listen)
		return dt_err_set(err, -EINVAL, "no listen address");
	if (rpc_listen_check(opts->listen, err))
		return dt_err_prefix(err, "listen: ");
	rc = rpc_tls_check(&opts->tls, err);
	if (rc)
		return rc;
	s = calloc(1, sizeof(*s));
	if (!s)
		return dt_err_set(err, -ENOMEM, "out of memory");
	s->opts = *opts;
	set_defaults(&s->opts);
	s->n_slots = opts->n_methods;
	s->armed_per_method = s->opts.workers;
	s->shutdown_tag.fn = on_shutdown;
	init_sync(s);
	s->slots = calloc(s->n_slots ? s->n_slots : 1, sizeof(*s->slots));
	s->workers = calloc(s->opts.workers, sizeof(*s->workers));
	grpc_init();
	if (!s->slots || !s->workers) {
		rc = dt_err_set(err, -ENOMEM, "out of memory");
		goto fail_unstarted;
	}
	rc = create_server(s, err);
	if (rc)
		goto fail_unstarted;
	grpc_server_start(s->server);
	rc = start_threads(s, err);
	if (!rc)
		rc = arm_all(s, err);
	if (rc) {
		dt_err_prefix(err, "listen %s: ", s->opts.listen);
		rpc_server_shutdown(s, 0);
		return rc;
	}
	*out = s;
	return 0;

fail_unstarted:
	/* No listener is bound on any failure path before start: destroy directly. */
	if (s->server)
		grpc_server_destroy(s->server);
	if (s->cq) {
		grpc_completion_queue_shutdown(s->cq);
		grpc_completion_queue_destroy(s->cq);
	}
	server_free(s);
	return rc;
}

int rpc_server_port(const struct rpc_server *srv)
{
	return srv->port;
}

int rpc_server_reload_tls(struct rpc_server *srv, struct dt_err *err)
{
	if (!srv->tls)
		return dt_err_set(err, -EINVAL, "listen %s: an insecure server has no TLS files to reload",
				  srv->opts.listen);
	return rpc_tls_source_reload(srv->tls, err);
}

/* Wait until done(s) (s->lock held); false if ms passed first. */
static bool wait_until(struct rpc_server *s, bool (*done)(const struct rpc_server *),
		       unsigned ms)
{
	struct timespec until;
	bool seen;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += ms / 1000;
	until.tv_nsec += (long)(ms % 1000) * 1000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&s->lock);
	while (!done(s))
		if (pthread_cond_timedwait(&s->shutdown_cond, &s->lock, &until))
			break;
	seen = done(s);
	pthread_mutex_unlock(&s->lock);
	return seen;
}

static bool tag_seen(const struct rpc_server *s)
{
	return s->shutdown_seen;
}

static bool none_held(const struct rpc_server *s)
{
	return atomic_load(&s->held) == 0;
}

static bool tag_seen_or_idle(const struct rpc_server *s)
{
	return s->shutdown_seen || atomic_load(&s->active) == 0;
}

/* The order of the gRPC notes (docs/rpc.md): shutdown_and_notify, drain,
 * cancel what is left, the tag, destroy the server, shut the queue down, the
 * workers see GRPC_QUEUE_SHUTDOWN after the last tag and exit, join, destroy
 * the queue, grpc_shutdown. Two steps of our own: before the server goes,
 * handlers still holding calls get up to drain_ms more to answer while the
 * queue lives (the tag comes without them once their clients are gone);
 * and before the server is freed, every one of them has returned (a late
 * answer is dropped at the shut queue, see start_batch). */
void rpc_server_shutdown(struct rpc_server *srv, unsigned drain_ms)
{
	if (!srv)
		return;
	atomic_store(&srv->stopping, true);
	grpc_server_shutdown_and_notify(srv->server, srv->cq, &srv->shutdown_tag);
	if (!srv->n_workers) {      /* a start that failed early: poll here */
		grpc_server_cancel_all_calls(srv->server);
		while (!srv->shutdown_seen) {
			grpc_event ev = grpc_completion_queue_next(srv->cq,
					gpr_inf_future(GPR_CLOCK_REALTIME), NULL);

			if (ev.type == GRPC_OP_COMPLETE)
				((struct cq_tag *)ev.tag)->fn(ev.tag, ev.success);
		}
	} else {
		wait_until(srv, tag_seen_or_idle, drain_ms);
		/* Past the drain, or nothing left to drain while connections
		 * stay open (the tag waits for their clients to go): cancel
		 * what is left, which closes the connections too. */
		if (!wait_until(srv, tag_seen, 0)) {
			grpc_server_cancel_all_calls(srv->server);
			while (!wait_until(srv, tag_seen, 1000))
				;
		}
	}
	wait_until(srv, none_held, drain_ms);
	grpc_server_destroy(srv->server);
	pthread_rwlock_wrlock(&srv->batch_lock);
	srv->cq_closed = true;
	grpc_completion_queue_shutdown(srv->cq);
	pthread_rwlock_unlock(&srv->batch_lock);
	for (unsigned i = 0; i < srv->n_workers; i++)
		pthread_join(srv->workers[i], NULL);
	while (!wait_until(srv, none_held, 1000))
		;
	grpc_completion_queue_destroy(srv->cq);
	if (srv->watchdog_running) {
		pthread_mutex_lock(&srv->wd_lock);
		srv->wd_stop = true;
		pthread_cond_signal(&srv->wd_cond);
		pthread_mutex_unlock(&srv->wd_lock);
		pthread_join(srv->watchdog, NULL);
	}
	server_free(srv);
}

/* ---- without the network ---- */

static int copy_peer(struct rpc_ctx *c, const struct rpc_peer *peer)
{
	if (!peer)
		return 0;
	if (peer->addr && !(c->peer = gpr_strdup(peer->addr)))
		return -ENOMEM;
	if (peer->cn && !(c->peer_cn = strdup(peer->cn)))
		return -ENOMEM;
	if (peer->n_dns && !(c->peer_dns = calloc(peer->n_dns, sizeof(*c->peer_dns))))
		return -ENOMEM;
	for (size_t i = 0; i < peer->n_dns; i++, c->n_peer_dns++)
		if (!(c->peer_dns[i] = strdup(peer->dns[i])))
			return -ENOMEM;
	return 0;
}

static void invoke_fail(struct rpc_invoke_result *out, grpc_status_code code, const char *msg)
{
	out->status = code;
	snprintf(out->details, sizeof(out->details), "%s", msg);
}

/* The answer into the waiting rpc_invoke's result, on whichever thread
 * gives it; the waiter frees c. */
static void invoke_settle(struct rpc_ctx *c, grpc_status_code code, ProtobufCMessage *resp)
{
	struct invoke_wait *w = c->wait;
	struct rpc_invoke_result *out = w->out;

	out->status = check_response(c, code, resp);
	if (out->status == GRPC_STATUS_OK) {
		out->response_len = protobuf_c_message_get_packed_size(resp);
		out->response = malloc(out->response_len ? out->response_len : 1);
		if (out->response)
			protobuf_c_message_pack(resp, out->response);
		else
			invoke_fail(out, GRPC_STATUS_RESOURCE_EXHAUSTED, "cannot pack the response");
	} else {
		snprintf(out->details, sizeof(out->details), "%s", c->msg);
	}
	release_response(c, resp);
	pthread_mutex_lock(&w->lock);
	w->done = true;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
}

int rpc_invoke(const struct rpc_invoke *in, struct rpc_invoke_result *out)
{
	struct rpc_ctx *c = calloc(1, sizeof(*c));
	struct invoke_wait w = { .out = out };
	ProtobufCMessage *resp = NULL;
	grpc_status_code code;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if (!c)
		return -ENOMEM;
	pthread_mutex_init(&w.lock, NULL);
	pthread_cond_init(&w.cond, NULL);
	c->wait = &w;
	c->msg_slice = grpc_empty_slice();
	grpc_metadata_array_init(&c->md);
	grpc_call_details_init(&c->details);
	c->user = in->user;
	for (size_t i = 0; i < in->n_methods && !c->m; i++)
		if (!strcmp(in->methods[i].path, in->path))
			c->m = &in->methods[i];
	c->deadline = in->deadline_ms > 0
		? gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC),
			       gpr_time_from_millis(in->deadline_ms, GPR_TIMESPAN))
		: gpr_inf_future(GPR_CLOCK_MONOTONIC);
	if (!c->m) {
		snprintf(out->details, sizeof(out->details), "unknown method %s", in->path);
		out->status = GRPC_STATUS_UNIMPLEMENTED;
		goto out;
	}
	if ((rc = copy_peer(c, in->peer)))
		goto out;
	code = run_method(c, in->request ? in->request : (const uint8_t *)"", in->request_len,
			  &resp);
	if (code != RPC_DEFERRED)
		invoke_settle(c, code, resp);
	pthread_mutex_lock(&w.lock);
	while (!w.done)
		pthread_cond_wait(&w.cond, &w.lock);
	pthread_mutex_unlock(&w.lock);
out:
	ctx_free(c);
	pthread_cond_destroy(&w.cond);
	pthread_mutex_destroy(&w.lock);
	if (rc)
		rpc_invoke_result_free(out);
	return rc;
}

void rpc_invoke_result_free(struct rpc_invoke_result *r)
{
	if (!r)
		return;
	free(r->response);
	r->response = NULL;
	r->response_len = 0;
}
