/* agent_loop.c - the report schedule of `dratopo-agent run` (agent_loop.h):
 * probes, sends, backoff with jitter, reconnects, and the status the
 * health checks and metrics read. All time comes from ops->now. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "agent_loop.h"
#include "duration.h"
#include "obs_log.h"

#define NS_PER_S 1000000000LL

/* The failures a running agent meets: their series show 0 from the start. */
static const char *const failure_codes[] = {
	"UNAVAILABLE", "DEADLINE_EXCEEDED", "PERMISSION_DENIED", "INVALID_ARGUMENT",
	"RESOURCE_EXHAUSTED", "UNAUTHENTICATED", "INTERNAL", "BAD_ANSWER", NULL,
};
static const char *const verdicts[] = { "match", "drift", "unknown", "learned", NULL };

struct loop_metrics {
	struct obs_series *reports, *probe_failures, *last_report, *failures_now, *backoff;
	struct obs_metric *failures, *verdict;
};

struct agent_loop {
	const struct agent_loop_ops *ops;
	void *env;
	struct agent_loop_opts o;
	atomic_bool tls_changed;

	/* Only the turning thread writes these; readers copy under lock. */
	pthread_mutex_t lock;
	struct agent_loop_status st;
	uint8_t *pending;               /* the one report not yet acknowledged */
	size_t pending_len;
	bool unreachable;               /* the latest failure was a connection failure */
	struct loop_metrics m;
};

const char *agent_verdict_name(int verdict)
{
	return verdict >= AGENT_VERDICT_MATCH && verdict <= AGENT_VERDICT_LEARNED
		       ? verdicts[verdict - AGENT_VERDICT_MATCH]
		       : "none";
}

static int metrics_init(struct agent_loop *l, struct obs_registry *reg, struct dt_err *err)
{
	static const char *const by_code[] = { "code", NULL };
	static const char *const by_verdict[] = { "verdict", NULL };
	struct obs_metric *reports, *probe_failures, *last, *now, *backoff;
	int rc;

	rc = obs_counter_new(reg, "dratopo_agent_reports_total",
			     "Reports the coordinator acknowledged.", NULL, &reports, err);
	if (!rc)
		rc = obs_counter_new(reg, "dratopo_agent_report_failures_total",
				     "Reports that failed, by gRPC status.", by_code,
				     &l->m.failures, err);
	if (!rc)
		rc = obs_counter_new(reg, "dratopo_agent_probe_failures_total",
				     "Probes of sysfs that failed (no report made).", NULL,
				     &probe_failures, err);
	if (!rc)
		rc = obs_gauge_new(reg, "dratopo_agent_last_report_timestamp_seconds",
				   "When the coordinator last acknowledged a report (Unix time; "
				   "0: not yet).", NULL, &last, err);
	if (!rc)
		rc = obs_gauge_new(reg, "dratopo_agent_consecutive_failures",
				   "Failed sends since the last acknowledged report.", NULL, &now, err);
	if (!rc)
		rc = obs_gauge_new(reg, "dratopo_agent_backoff_seconds",
				   "The current backoff step while the coordinator is away (0: none).",
				   NULL, &backoff, err);
	if (!rc)
		rc = obs_gauge_new(reg, "dratopo_agent_verdict",
				   "1 for the coordinator's latest verdict on this node.", by_verdict,
				   &l->m.verdict, err);
	if (rc)
		return rc;
	l->m.reports = obs_series(reports, NULL);
	l->m.probe_failures = obs_series(probe_failures, NULL);
	l->m.last_report = obs_series(last, NULL);
	l->m.failures_now = obs_series(now, NULL);
	l->m.backoff = obs_series(backoff, NULL);
	for (size_t i = 0; failure_codes[i]; i++)
		obs_add(obs_series(l->m.failures, failure_codes[i], NULL), 0);
	for (size_t i = 0; verdicts[i]; i++)
		obs_set(obs_series(l->m.verdict, verdicts[i], NULL), 0);
	return 0;
}

int agent_loop_new(const struct agent_loop_ops *ops, void *env,
		   const struct agent_loop_opts *opts, struct agent_loop **out,
		   struct dt_err *err)
{
	struct agent_loop *l;
	int rc;

	*out = NULL;
	if (opts->interval_ns <= 0)
		return dt_err_set(err, -EINVAL, "the interval must be positive");
	if (!(l = calloc(1, sizeof(*l))))
		return dt_err_set(err, -ENOMEM, "out of memory");
	l->ops = ops;
	l->env = env;
	l->o = *opts;
	if (!l->o.unhealthy_after_ns)
		l->o.unhealthy_after_ns = 3 * l->o.interval_ns;
	pthread_mutex_init(&l->lock, NULL);
	l->st.started_ns = l->st.next_probe_ns = ops->now(env);
	l->st.last_ack.verdict = AGENT_VERDICT_NONE;
	if (opts->reg && (rc = metrics_init(l, opts->reg, err))) {
		agent_loop_free(l);
		return rc;
	}
	*out = l;
	return 0;
}

void agent_loop_free(struct agent_loop *l)
{
	if (!l)
		return;
	pthread_mutex_destroy(&l->lock);
	free(l->pending);
	free(l);
}

/* Equal jitter: a delay in [b/2, b], the random value scaled onto the
 * range (multiply and shift: no modulo bias). */
static int64_t jittered(struct agent_loop *l, int64_t b)
{
	unsigned __int128 r = l->ops->random(l->env);

	return b / 2 + (int64_t)((r * (uint64_t)(b / 2 + 1)) >> 64);
}

static void reconnect(struct agent_loop *l, const char *why)
{
	struct dt_err err = { 0 };

	if (l->ops->reconnect(l->env, &err)) {
		obs_log(OBS_WARN, "reconnect_failed", "reason", why, "error", err.msg, NULL);
		return;
	}
	pthread_mutex_lock(&l->lock);
	l->st.reconnects++;
	pthread_mutex_unlock(&l->lock);
}

static void probe(struct agent_loop *l)
{
	uint8_t *buf = NULL;
	size_t len = 0;

	if (l->ops->probe(l->env, l->st.sequence + 1, &buf, &len)) {
		obs_inc(l->m.probe_failures);
		pthread_mutex_lock(&l->lock);
		l->st.probes++;
		l->st.probe_failures++;
		pthread_mutex_unlock(&l->lock);
		return;
	}
	free(l->pending);               /* a newer probe replaces the one not sent */
	pthread_mutex_lock(&l->lock);
	l->pending = buf;
	l->pending_len = len;
	l->st.pending = true;
	l->st.sequence++;
	l->st.probes++;
	pthread_mutex_unlock(&l->lock);
}

/* A failure is news, logged at warn and diagnosed, when it starts a run of
 * failures or its status differs from the one before; the rest of a long
 * outage is debug, so that it neither fills the log nor probes the
 * coordinator at every retry. */
static void send_failed(struct agent_loop *l, const struct agent_sent *s, int64_t now)
{
	bool news = l->st.failures == 0 || s->code != l->st.last_code;
	const char *msg = s->error;
	char why[512], buf[32];
	int64_t backoff;

	if (news && s->unreachable && l->ops->diagnose && l->ops->diagnose(l->env, why, sizeof(why)))
		msg = why;
	obs_log(news ? OBS_WARN : OBS_DEBUG, "report_failed", "coordinator", l->o.coordinator,
		"status", s->code_name, "error", msg, NULL);
	obs_inc(obs_series(l->m.failures, s->code_name, NULL));
	backoff = l->st.backoff_ns ? 2 * l->st.backoff_ns : AGENT_BACKOFF_MIN_NS;
	if (backoff > AGENT_BACKOFF_MAX_NS)
		backoff = AGENT_BACKOFF_MAX_NS;
	pthread_mutex_lock(&l->lock);
	l->st.failures++;
	l->st.last_code = s->code;
	l->st.backoff_ns = backoff;
	l->st.retry_at_ns = now + jittered(l, backoff);
	pthread_mutex_unlock(&l->lock);
	l->unreachable = s->unreachable;
	obs_set(l->m.failures_now, l->st.failures);
	obs_set(l->m.backoff, (double)backoff / NS_PER_S);
	if (!l->o.once)
		obs_log(OBS_INFO, "backoff", "retry_in",
			duration_format((l->st.retry_at_ns - now) / 1000000 * 1000000, buf,
					sizeof(buf)), NULL);
}

static void acknowledged(struct agent_loop *l, const struct agent_ack *ack, int64_t now)
{
	bool news = ack->verdict != l->st.last_ack.verdict || l->st.failures;
	struct obs_ev ev;

	obs_ev_begin(&ev, news ? OBS_INFO : OBS_DEBUG, "reported");
	obs_ev_str(&ev, "node", l->o.node);
	obs_ev_int(&ev, "seq", (long long)ack->sequence);
	obs_ev_str(&ev, "verdict", agent_verdict_name(ack->verdict));
	if (ack->n_differences)
		obs_ev_int(&ev, "differences", (long long)ack->n_differences);
	if (ack->conflict)
		obs_ev_str(&ev, "conflict", "true");
	if (l->st.failures)
		obs_ev_int(&ev, "after_failures", (long long)l->st.failures);
	obs_ev_end(&ev);

	if (ack->verdict != l->st.last_ack.verdict) {
		obs_set(obs_series(l->m.verdict, agent_verdict_name(l->st.last_ack.verdict), NULL), 0);
		obs_set(obs_series(l->m.verdict, agent_verdict_name(ack->verdict), NULL), 1);
	}
	obs_inc(l->m.reports);
	obs_set(l->m.last_report, (double)l->ops->wall(l->env) / NS_PER_S);
	obs_set(l->m.failures_now, 0);
	obs_set(l->m.backoff, 0);
	free(l->pending);
	pthread_mutex_lock(&l->lock);
	l->pending = NULL;
	l->pending_len = 0;
	l->st.pending = false;
	l->st.last_ack = *ack;
	l->st.last_ack_ns = now;
	l->st.acked_sequence = ack->sequence;
	l->st.acks++;
	l->st.failures = 0;
	l->st.backoff_ns = 0;
	pthread_mutex_unlock(&l->lock);
	l->unreachable = false;
}

static void send_pending(struct agent_loop *l)
{
	struct agent_sent s = { .ack = { .verdict = AGENT_VERDICT_NONE } };

	if (l->st.failures && l->unreachable)
		reconnect(l, "retry");  /* connect now, with the TLS files as they are now */
	l->ops->send(l->env, l->pending, l->pending_len, &s);
	pthread_mutex_lock(&l->lock);
	l->st.sends++;
	pthread_mutex_unlock(&l->lock);
	if (s.code == 0)
		acknowledged(l, &s.ack, l->ops->now(l->env));
	else
		send_failed(l, &s, l->ops->now(l->env));
}

int64_t agent_loop_turn(struct agent_loop *l)
{
	int64_t now = l->ops->now(l->env), due;

	if (atomic_exchange(&l->tls_changed, false)) {
		reconnect(l, "tls_changed");
		l->unreachable = false;             /* that was the reconnect */
		pthread_mutex_lock(&l->lock);
		l->st.retry_at_ns = now;            /* a waiting report goes now */
		l->st.backoff_ns = 0;
		pthread_mutex_unlock(&l->lock);
	}
	if (now >= l->st.next_probe_ns) {
		probe(l);
		pthread_mutex_lock(&l->lock);
		/* A steady cadence; after a stall (a suspended host) start again. */
		l->st.next_probe_ns += l->o.interval_ns;
		if (l->st.next_probe_ns <= now)
			l->st.next_probe_ns = now + l->o.interval_ns;
		pthread_mutex_unlock(&l->lock);
	}
	if (l->pending && now >= l->st.retry_at_ns)
		send_pending(l);
	due = l->st.next_probe_ns;
	if (l->pending && l->st.retry_at_ns < due)
		due = l->st.retry_at_ns;
	return due;
}

void agent_loop_tls_changed(struct agent_loop *l)
{
	atomic_store(&l->tls_changed, true);
}

void agent_loop_status(struct agent_loop *l, struct agent_loop_status *out)
{
	pthread_mutex_lock(&l->lock);
	*out = l->st;
	pthread_mutex_unlock(&l->lock);
}

bool agent_loop_healthy(struct agent_loop *l, int64_t now_ns, char *why, size_t len)
{
	struct agent_loop_status st;
	char a[32], b[32];
	int64_t since;

	agent_loop_status(l, &st);
	since = now_ns - (st.last_ack_ns ? st.last_ack_ns : st.started_ns);
	if (since <= l->o.unhealthy_after_ns)
		return true;
	duration_format(since / NS_PER_S * NS_PER_S, a, sizeof(a));
	duration_format(l->o.unhealthy_after_ns, b, sizeof(b));
	if (st.last_ack_ns)
		snprintf(why, len, "no report acknowledged for %s (unhealthy after %s)", a, b);
	else
		snprintf(why, len, "no report acknowledged since the start %s ago (unhealthy after %s)",
			 a, b);
	return false;
}

bool agent_loop_ready(struct agent_loop *l, char *why, size_t len)
{
	struct agent_loop_status st;

	agent_loop_status(l, &st);
	if (st.last_ack_ns && !st.failures)
		return true;
	if (!st.last_ack_ns && !st.failures)
		snprintf(why, len, "no report acknowledged yet");
	else
		snprintf(why, len, "%u report%s failed since the last acknowledged one", st.failures,
			 st.failures == 1 ? "" : "s");
	return false;
}
