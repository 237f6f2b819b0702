/* agent_loop.h - when `dratopo-agent run` probes and reports, and what it
 * knows about how that went, with no clock, prober or network of its own.
 *
 *   probe at start and every interval; send each probe (an unchanged one
 *   is the heartbeat that keeps the node from going stale);
 *   while the coordinator is away: retry with backoff (1 s doubling to
 *   5 min), each delay drawn in [d/2, d] (equal jitter), a new connection
 *   before each retry after a connection failure, and keep exactly one
 *   report: a newer probe replaces the one not yet sent;
 *   when the TLS files change: a new connection now, and a retry now when
 *   a report is waiting (a renewed certificate ends an outage at once).
 *
 * The process (agent_run.c) gives it the monotonic clock, the sysfs probe
 * and the gRPC call; the unit suite (test_agent_loop.c) gives it a fake
 * clock and a fake coordinator. One thread turns the loop
 * (agent_loop_turn); any thread may read its status or flag a TLS change. */
#ifndef DT_AGENT_LOOP_H
#define DT_AGENT_LOOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "obs_metrics.h"

#define AGENT_BACKOFF_MIN_NS (1LL * 1000000000)
#define AGENT_BACKOFF_MAX_NS (300LL * 1000000000)

/* The coordinator's answer to one report. */
struct agent_ack {
	int verdict;                    /* AGENT_VERDICT_* */
	uint64_t sequence;              /* the report now stored durably */
	size_t n_differences;
	bool conflict;
};

enum { AGENT_VERDICT_NONE = -1, AGENT_VERDICT_MATCH = 1, AGENT_VERDICT_DRIFT,
       AGENT_VERDICT_UNKNOWN, AGENT_VERDICT_LEARNED };

/* How one send ended, filled by the send operation. */
struct agent_sent {
	int code;                       /* gRPC status code; 0 (OK): ack is the answer */
	const char *code_name;          /* "UNAVAILABLE"; a static string */
	bool unreachable;               /* the connection failed: reconnect before retrying */
	char error[512];                /* why, in words */
	struct agent_ack ack;
};

struct agent_loop_ops {
	int64_t (*now)(void *env);      /* monotonic ns */
	int64_t (*wall)(void *env);     /* Unix ns, for the metrics' timestamps */
	uint64_t (*random)(void *env);  /* for the jitter */
	/* A new report numbered sequence into *buf (malloc'd, the loop owns
	 * it); 0, or -1 when the node could not be probed (the op logs why). */
	int (*probe)(void *env, uint64_t sequence, uint8_t **buf, size_t *len);
	void (*send)(void *env, const uint8_t *buf, size_t len, struct agent_sent *out);
	/* A new connection with the TLS files read again; 0 or -1 with err. */
	int (*reconnect)(void *env, struct dt_err *err);
	/* What is wrong with the connection, for the first failure of a run:
	 * true with the sentence in msg when something was found. May be NULL. */
	bool (*diagnose)(void *env, char *msg, size_t len);
};

struct agent_loop_opts {
	const char *node;               /* for the log lines */
	const char *coordinator;
	int64_t interval_ns;            /* probe and report every interval (> 0) */
	/* /healthz fails when no report was acknowledged for this long (from
	 * the start for the first one); 0: 3 x interval. */
	int64_t unhealthy_after_ns;
	struct obs_registry *reg;       /* NULL: no metrics */
	bool once;                      /* --once: a failure is not followed by a retry */
};

/* A copy of what the loop knows, for health checks and tests. */
struct agent_loop_status {
	int64_t started_ns;             /* monotonic */
	int64_t last_ack_ns;            /* monotonic; 0 before the first ack */
	int64_t next_probe_ns;          /* monotonic */
	int64_t retry_at_ns;            /* monotonic; when a waiting report is sent */
	int64_t backoff_ns;             /* the current backoff step; 0 when none */
	uint64_t sequence;              /* of the latest probe */
	uint64_t acked_sequence;        /* of the latest acknowledged report */
	uint64_t probes, probe_failures, sends, acks, reconnects;
	unsigned failures;              /* failed sends since the last ack */
	int last_code;                  /* status of the latest failure */
	bool pending;                   /* a report waits to be sent */
	struct agent_ack last_ack;      /* verdict AGENT_VERDICT_NONE before the first */
};

struct agent_loop;

int agent_loop_new(const struct agent_loop_ops *ops, void *env,
		   const struct agent_loop_opts *opts, struct agent_loop **out,
		   struct dt_err *err);
void agent_loop_free(struct agent_loop *l);

/* Do what is due now (a probe, a send, a reconnect) and return the
 * monotonic time at which the next turn is due. */
int64_t agent_loop_turn(struct agent_loop *l);

/* The TLS files changed (any thread): the next turn reconnects and, when
 * a report is waiting, sends it at once. The caller wakes the thread that
 * turns the loop. */
void agent_loop_tls_changed(struct agent_loop *l);

void agent_loop_status(struct agent_loop *l, struct agent_loop_status *out);

/* Whether the agent is healthy at now (monotonic): a report was
 * acknowledged within unhealthy_after (or the agent started that
 * recently). Ready: the latest send was acknowledged. Both write a
 * one-line reason into why when not. */
bool agent_loop_healthy(struct agent_loop *l, int64_t now_ns, char *why, size_t len);
bool agent_loop_ready(struct agent_loop *l, char *why, size_t len);

/* "match", "drift", "unknown", "learned"; "none" for AGENT_VERDICT_NONE. */
const char *agent_verdict_name(int verdict);

#endif
