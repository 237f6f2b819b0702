/* load_faults.c - the bench's misbehaving clients (load_faults.h), on the
 * gRPC core API directly: these are call shapes no well-behaved client
 * (rpc_client, rpc_async) makes. */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <grpc/byte_buffer.h>
#include <grpc/grpc.h>
#include <grpc/support/time.h>

#include "load_faults.h"
#include "rpc_async.h"

#define LIST_NODES "/dratopo.v1.Fleet/ListNodes"
#define SILENT_DEADLINE_S 3600          /* the server cuts it to its cap */
#define NOREAD_HOLD_S 10
#define TICK_MS 200

struct held {
	grpc_call *call;
	grpc_metadata_array md;
	grpc_status_code code;
	grpc_slice details;
	time_t started;
	bool done;                      /* its batch completed */
};

struct load_faults {
	pthread_t th;
	atomic_bool stop;
	grpc_completion_queue *cq;
	struct rpc_async_channel *silent_ch, *noread_ch;
	struct held *silent, *noread;
	unsigned n_silent, n_noread, n_slow;
	int *slow_fd;
	size_t *slow_pos;
	int port;
	/* what they saw */
	unsigned long silent_ended, noread_sent, slow_dropped;
};

static gpr_timespec in_s(int64_t s)
{
	return gpr_time_add(gpr_now(GPR_CLOCK_REALTIME), gpr_time_from_seconds(s, GPR_TIMESPAN));
}

static grpc_call *new_call(grpc_channel *ch, grpc_completion_queue *cq, const char *method,
			   int64_t deadline_s)
{
	grpc_slice path = grpc_slice_from_static_string(method);
	grpc_call *c = grpc_channel_create_call(ch, NULL, GRPC_PROPAGATE_DEFAULTS, cq, path, NULL,
						in_s(deadline_s), NULL);

	grpc_slice_unref(path);
	return c;
}

static void held_clear(struct held *h)
{
	if (h->call) {
		grpc_call_cancel(h->call, NULL);
		grpc_call_unref(h->call);
	}
	grpc_metadata_array_destroy(&h->md);
	grpc_slice_unref(h->details);
	memset(h, 0, sizeof(*h));
}

/* Headers only, then wait for the status the server gives up with. */
static void silent_arm(struct load_faults *f, struct held *h)
{
	grpc_op ops[2];

	memset(ops, 0, sizeof(ops));
	grpc_metadata_array_init(&h->md);
	h->details = grpc_empty_slice();
	h->call = new_call(rpc_async_channel_core(f->silent_ch), f->cq,
			   "/dratopo.v1.Coordinator/Report", SILENT_DEADLINE_S);
	ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
	ops[1].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
	ops[1].data.recv_status_on_client.trailing_metadata = &h->md;
	ops[1].data.recv_status_on_client.status = &h->code;
	ops[1].data.recv_status_on_client.status_details = &h->details;
	if (h->call)
		grpc_call_start_batch(h->call, ops, 2, h, NULL);
}

/* A whole request and no receive op at all: the answer is never read. */
static void noread_arm(struct load_faults *f, struct held *h)
{
	static const uint8_t empty_request[1];
	grpc_slice s = grpc_slice_from_copied_buffer((const char *)empty_request, 0);
	grpc_byte_buffer *bb = grpc_raw_byte_buffer_create(&s, 1);
	grpc_op ops[3];

	grpc_slice_unref(s);
	memset(ops, 0, sizeof(ops));
	grpc_metadata_array_init(&h->md);
	h->details = grpc_empty_slice();
	h->started = time(NULL);
	h->call = new_call(rpc_async_channel_core(f->noread_ch), f->cq, LIST_NODES, NOREAD_HOLD_S + 5);
	ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
	ops[1].op = GRPC_OP_SEND_MESSAGE;
	ops[1].data.send_message.send_message = bb;
	ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
	if (h->call && grpc_call_start_batch(h->call, ops, 3, h, NULL) == GRPC_CALL_OK)
		f->noread_sent++;
	grpc_byte_buffer_destroy(bb);   /* the batch holds its own reference */
}

static int slow_connect(int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	if (fd >= 0)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* One more byte of a TLS ClientHello-ish stream on every slow connection. */
static void slow_tick(struct load_faults *f)
{
	static const char dribble[] = "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03PRI * HTTP/2.0";

	for (unsigned i = 0; i < f->n_slow; i++) {
		if (f->slow_fd[i] < 0 && (f->slow_fd[i] = slow_connect(f->port)) >= 0)
			f->slow_pos[i] = 0;
		if (f->slow_fd[i] < 0)
			continue;
		if (send(f->slow_fd[i], dribble + f->slow_pos[i] % (sizeof(dribble) - 1), 1,
			 MSG_NOSIGNAL) != 1) {
			close(f->slow_fd[i]);
			f->slow_fd[i] = -1;
			f->slow_dropped++;
			continue;
		}
		f->slow_pos[i]++;
	}
}

static void *faults_main(void *arg)
{
	struct load_faults *f = arg;

	for (unsigned i = 0; i < f->n_silent; i++)
		silent_arm(f, &f->silent[i]);
	for (unsigned i = 0; i < f->n_noread; i++)
		noread_arm(f, &f->noread[i]);
	while (!atomic_load(&f->stop)) {
		grpc_event ev = grpc_completion_queue_next(
			f->cq, gpr_time_add(gpr_now(GPR_CLOCK_REALTIME),
					    gpr_time_from_millis(TICK_MS, GPR_TIMESPAN)), NULL);
		time_t now = time(NULL);

		if (ev.type == GRPC_OP_COMPLETE) {
			struct held *h = ev.tag;

			if (h >= f->silent && h < f->silent + f->n_silent) {
				f->silent_ended++;      /* the server ended it: open another */
				held_clear(h);
				silent_arm(f, h);
			} else {
				h->done = true;
			}
			continue;
		}
		for (unsigned i = 0; i < f->n_noread; i++)
			if (f->noread[i].done && now - f->noread[i].started >= NOREAD_HOLD_S) {
				held_clear(&f->noread[i]);
				noread_arm(f, &f->noread[i]);
			}
		slow_tick(f);
	}
	return NULL;
}

int load_faults_start(const char *addr, const struct rpc_tls *tls, unsigned silent,
		      unsigned noread, unsigned slow, struct load_faults **out, struct dt_err *err)
{
	grpc_arg window[] = {
		{ .type = GRPC_ARG_INTEGER, .key = (char *)GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES,
		  .value.integer = 1024 },
		{ .type = GRPC_ARG_INTEGER, .key = (char *)GRPC_ARG_HTTP2_BDP_PROBE,
		  .value.integer = 0 },
	};
	grpc_channel_args wargs = { 2, window };
	struct load_faults *f = calloc(1, sizeof(*f));
	const char *colon = strrchr(addr, ':');
	int rc = 0;

	*out = NULL;
	if (!f)
		return dt_err_set(err, -ENOMEM, "out of memory");
	grpc_init();
	f->port = colon ? atoi(colon + 1) : 0;
	f->n_silent = silent;
	f->n_noread = noread;
	f->n_slow = slow;
	f->cq = grpc_completion_queue_create_for_next(NULL);
	f->silent = calloc(silent + 1, sizeof(*f->silent));
	f->noread = calloc(noread + 1, sizeof(*f->noread));
	f->slow_fd = calloc(slow + 1, sizeof(*f->slow_fd));
	f->slow_pos = calloc(slow + 1, sizeof(*f->slow_pos));
	if (!f->cq || !f->silent || !f->noread || !f->slow_fd || !f->slow_pos)
		rc = dt_err_set(err, -ENOMEM, "out of memory");
	for (unsigned i = 0; i < slow; i++)
		f->slow_fd[i] = -1;
	if (!rc)
		rc = rpc_async_channel_open(addr, tls, &f->silent_ch, err);
	if (!rc)
		rc = rpc_async_channel_open_with(addr, tls, &wargs, &f->noread_ch, err);
	if (!rc && pthread_create(&f->th, NULL, faults_main, f))
		rc = dt_err_set(err, -EAGAIN, "cannot start the faults thread");
	if (rc) {
		f->th = 0;
		load_faults_stop(f);
		return rc;
	}
	printf("faults: %u silent calls, %u calls never read, %u slow connections\n", silent,
	       noread, slow);
	*out = f;
	return 0;
}

void load_faults_stop(struct load_faults *f)
{
	if (!f)
		return;
	atomic_store(&f->stop, true);
	if (f->th)
		pthread_join(f->th, NULL);
	printf("faults: silent calls ended by the server %lu, never-read calls sent %lu, "
	       "slow connections dropped by the server %lu\n", f->silent_ended, f->noread_sent,
	       f->slow_dropped);
	for (unsigned i = 0; f->silent && i < f->n_silent; i++)
		if (f->silent[i].call)
			grpc_call_cancel(f->silent[i].call, NULL);
	/* Collect the cancelled silent calls' batches before freeing them. */
	for (unsigned left = f->n_silent; f->cq && f->silent && left;) {
		unsigned pending = 0;

		for (unsigned i = 0; i < f->n_silent; i++)
			pending += f->silent[i].call != NULL;
		if (!pending)
			break;
		grpc_event ev = grpc_completion_queue_next(f->cq, in_s(5), NULL);

		if (ev.type != GRPC_OP_COMPLETE)
			break;
		if ((struct held *)ev.tag >= f->silent && (struct held *)ev.tag < f->silent + f->n_silent)
			held_clear(ev.tag);
		else
			((struct held *)ev.tag)->done = true;
		left = pending;
	}
	for (unsigned i = 0; f->noread && i < f->n_noread; i++)
		held_clear(&f->noread[i]);
	for (unsigned i = 0; f->silent && i < f->n_silent; i++)
		held_clear(&f->silent[i]);
	for (unsigned i = 0; f->slow_fd && i < f->n_slow; i++)
		if (f->slow_fd[i] >= 0)
			close(f->slow_fd[i]);
	rpc_async_channel_close(f->silent_ch);
	rpc_async_channel_close(f->noread_ch);
	if (f->cq) {
		grpc_completion_queue_shutdown(f->cq);
		while (grpc_completion_queue_next(f->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL).type !=
		       GRPC_QUEUE_SHUTDOWN)
			;
		grpc_completion_queue_destroy(f->cq);
	}
	free(f->silent);
	free(f->noread);
	free(f->slow_fd);
	free(f->slow_pos);
	free(f);
	grpc_shutdown();
}
