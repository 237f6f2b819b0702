/* test_agent_loop.c - the agent's report schedule (agent_loop.c) on a fake
 * clock against a fake coordinator: heartbeats at the interval, backoff
 * and its jitter bounds, re-probes while the coordinator is away (the
 * newest report is the one sent), reconnects, a TLS change ending an
 * outage at once, health and readiness, and the metrics. No real time
 * passes and nothing is read from logs: every assertion is on what the
 * fake coordinator received and what the loop says. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent_loop.h"
#include "dt_test.h"
#include "obs_log.h"
#include "obs_metrics.h"
#include "strbuf.h"

#define S 1000000000LL
#define MAX_GOT 4096

enum { RND_ZERO, RND_MAX, RND_LCG };

/* The fake world: a clock, a node, a coordinator. */
struct fake {
	int64_t now;                    /* monotonic ns, moved only by the test and calls */
	int64_t call_ns;                /* how long a call takes */
	int rnd_mode;
	uint64_t lcg;

	unsigned probes;
	bool probe_fails;

	bool down;                      /* the coordinator cannot be reached */
	int refuse;                     /* else: answer this status (0: accept) */
	int verdict;
	unsigned sends, reconnects;
	bool reconnect_fails;
	size_t n_got;                   /* reports the coordinator acknowledged */
	uint64_t got_seq[MAX_GOT];
	int64_t got_at[MAX_GOT];
	int64_t tried_at[MAX_GOT];      /* every send, also failed ones */
};

static int64_t f_now(void *env)
{
	return ((struct fake *)env)->now;
}

static int64_t f_wall(void *env)
{
	return 1700000000 * S + ((struct fake *)env)->now;
}

static uint64_t f_random(void *env)
{
	struct fake *f = env;

	switch (f->rnd_mode) {
	case RND_ZERO:
		return 0;
	case RND_MAX:
		return UINT64_MAX;
	default:
		f->lcg = f->lcg * 6364136223846793005ULL + 1442695040888963407ULL;
		return f->lcg >> 11;
	}
}

/* A report is the text "seq N". */
static int f_probe(void *env, uint64_t sequence, uint8_t **buf, size_t *len)
{
	struct fake *f = env;
	char text[32];

	f->probes++;
	if (f->probe_fails)
		return -1;
	*len = (size_t)snprintf(text, sizeof(text), "seq %llu", (unsigned long long)sequence);
	*buf = (uint8_t *)strdup(text);
	return *buf ? 0 : -1;
}

static void f_send(void *env, const uint8_t *buf, size_t len, struct agent_sent *out)
{
	struct fake *f = env;
	unsigned long long seq = 0;
	char text[32];

	if (f->sends < MAX_GOT)
		f->tried_at[f->sends] = f->now;
	f->sends++;
	f->now += f->call_ns;
	if (f->down) {
		out->code = 14;
		out->code_name = "UNAVAILABLE";
		out->unreachable = true;
		snprintf(out->error, sizeof(out->error), "connection refused");
		return;
	}
	if (f->refuse) {
		out->code = f->refuse;
		out->code_name = "PERMISSION_DENIED";
		snprintf(out->error, sizeof(out->error), "not yours");
		return;
	}
	snprintf(text, sizeof(text), "%.*s", (int)len, (const char *)buf);
	CU_ASSERT_EQUAL(sscanf(text, "seq %llu", &seq), 1);
	if (f->n_got < MAX_GOT) {
		f->got_seq[f->n_got] = seq;
		f->got_at[f->n_got] = f->now;
	}
	f->n_got++;
	out->code = 0;
	out->ack = (struct agent_ack){ f->verdict, seq, 0, false };
}

static int f_reconnect(void *env, struct dt_err *err)
{
	struct fake *f = env;

	f->reconnects++;
	return f->reconnect_fails ? dt_err_set(err, -ENOENT, "tls.crt: gone") : 0;
}

static const struct agent_loop_ops fake_ops = {
	f_now, f_wall, f_random, f_probe, f_send, f_reconnect, NULL,
};

static struct agent_loop *start(struct fake *f, int64_t interval, struct obs_registry *reg)
{
	struct agent_loop_opts o = { "node-1", "coord:7443", interval, 0, reg, false };
	struct agent_loop *l = NULL;
	struct dt_err err = { 0 };

	f->now = 1000 * S;              /* a monotonic clock does not start at 0 */
	f->verdict = AGENT_VERDICT_MATCH;
	CU_ASSERT_EQUAL_FATAL(agent_loop_new(&fake_ops, f, &o, &l, &err), 0);
	return l;
}

/* Turn the loop, jumping the clock to each due time, until the clock
 * passes until. */
static void run_until(struct agent_loop *l, struct fake *f, int64_t until)
{
	for (int guard = 0; guard < 100000 && f->now <= until; guard++) {
		int64_t due = agent_loop_turn(l);

		CU_ASSERT_FATAL(due > f->now);  /* never a busy loop */
		f->now = due;
	}
}

static int quiet_logs(void)
{
	int fd = open("/dev/null", O_WRONLY);

	obs_log_set_fd(fd);
	obs_log_set_level(OBS_DEBUG);   /* every line is built, none is shown */
	return 0;
}

static void test_heartbeat_cadence(void)
{
	struct fake f = { 0 };
	struct agent_loop *l = start(&f, 30 * S, NULL);
	struct agent_loop_status st;
	int64_t t0 = f.now;

	f.call_ns = 40 * 1000000;       /* a call takes 40 ms: the cadence does not drift */
	run_until(l, &f, t0 + 300 * S);
	CU_ASSERT_EQUAL(f.n_got, 11);   /* at 0, 30, ..., 300 s */
	for (size_t i = 0; i < f.n_got && i < 11; i++) {
		CU_ASSERT_EQUAL(f.got_seq[i], i + 1);
		CU_ASSERT_EQUAL(f.got_at[i], t0 + (int64_t)i * 30 * S + f.call_ns);
	}
	agent_loop_status(l, &st);
	CU_ASSERT_EQUAL(st.acks, 11);
	CU_ASSERT_EQUAL(st.acked_sequence, 11);
	CU_ASSERT_EQUAL(st.failures, 0);
	CU_ASSERT_FALSE(st.pending);
	CU_ASSERT_EQUAL(st.next_probe_ns, t0 + 330 * S);
	CU_ASSERT_EQUAL(f.reconnects, 0);
	CU_ASSERT_EQUAL(st.last_ack.verdict, AGENT_VERDICT_MATCH);
	agent_loop_free(l);
}

/* The delays between the sends of an outage, in seconds. */
static void outage_delays(int rnd_mode, int64_t *delays, size_t n)
{
	struct fake f = { 0 };
	struct agent_loop *l = start(&f, 3600 * S, NULL);  /* no probe in between */

	f.rnd_mode = rnd_mode;
	f.lcg = 42;
	f.down = true;
	run_until(l, &f, f.now + 2 * 3600 * S);
	CU_ASSERT_FATAL(f.sends > n);
	for (size_t i = 0; i < n; i++)
		delays[i] = f.tried_at[i + 1] - f.tried_at[i];
	agent_loop_free(l);
}

static void test_backoff_doubles_to_five_minutes(void)
{
	static const int64_t steps[] = { 1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300, 300 };
	size_t n = sizeof(steps) / sizeof(steps[0]);
	int64_t longest[12], shortest[12], jittered[12];

	outage_delays(RND_MAX, longest, n);
	outage_delays(RND_ZERO, shortest, n);
	outage_delays(RND_LCG, jittered, n);
	for (size_t i = 0; i < n; i++) {
		/* equal jitter: the delay is drawn in [d/2, d] */
		CU_ASSERT_EQUAL(longest[i], steps[i] * S);
		CU_ASSERT_EQUAL(shortest[i], steps[i] * S / 2);
		CU_ASSERT(jittered[i] >= steps[i] * S / 2 && jittered[i] <= steps[i] * S);
	}
	/* the draws differ from step to step: it is jitter, not a fixed factor */
	CU_ASSERT(jittered[9] != jittered[10] || jittered[10] != jittered[11]);
}

static void test_outage_reprobes_and_sends_the_newest(void)
{
	struct fake f = { 0 };
	struct agent_loop *l = start(&f, 30 * S, NULL);
	struct agent_loop_status st;
	int64_t t0 = f.now;

	f.rnd_mode = RND_MAX;
	f.down = true;
	run_until(l, &f, t0 + 600 * S);
	agent_loop_status(l, &st);
	/* probes go on at the interval while the reports wait */
	CU_ASSERT_EQUAL(f.probes, 21);
	CU_ASSERT_EQUAL(st.sequence, 21);
	CU_ASSERT_TRUE(st.pending);
	CU_ASSERT_EQUAL(f.n_got, 0);
	/* retries at 0, 1, 3, 7, 15, 31, 63, 127, 255, 511 s: ten sends, and
	 * every retry after the first failure on a new connection */
	CU_ASSERT_EQUAL(f.sends, 10);
	CU_ASSERT_EQUAL(f.reconnects, 9);
	CU_ASSERT_EQUAL(st.failures, 10);
	CU_ASSERT_EQUAL(st.last_code, 14);
	CU_ASSERT_EQUAL(st.backoff_ns, 300 * S);         /* 512 s, capped */
	CU_ASSERT_EQUAL(st.retry_at_ns, t0 + 811 * S);

	/* back: the next retry carries the newest probe, and only that */
	f.down = false;
	run_until(l, &f, t0 + 850 * S);
	CU_ASSERT_FATAL(f.n_got >= 1);
	CU_ASSERT_EQUAL(f.got_at[0], t0 + 811 * S);
	CU_ASSERT_EQUAL(f.got_seq[0], 28);  /* probed at 810 s */
	agent_loop_status(l, &st);
	CU_ASSERT_EQUAL(st.failures, 0);
	CU_ASSERT_EQUAL(st.backoff_ns, 0);
	/* and the heartbeat goes on at the old cadence: 840 s */
	CU_ASSERT_EQUAL(f.n_got, 2);
	CU_ASSERT_EQUAL(f.got_at[1], t0 + 840 * S);
	CU_ASSERT_EQUAL(f.got_seq[1], 29);
	agent_loop_free(l);
}

static void test_refusal_backs_off_without_reconnecting(void)
{
	struct fake f = { 0 };
	struct agent_loop *l = start(&f, 30 * S, NULL);
	struct agent_loop_status st;

	f.rnd_mode = RND_MAX;
	f.refuse = 7;                   /* PERMISSION_DENIED: the connection is fine */
	run_until(l, &f, f.now + 100 * S);
	agent_loop_status(l, &st);
	CU_ASSERT(f.sends >= 5);
	CU_ASSERT_EQUAL(f.reconnects, 0);
	CU_ASSERT_EQUAL(st.last_code, 7);
	CU_ASSERT_EQUAL(f.n_got, 0);
	agent_loop_free(l);
}

static void test_tls_change_ends_the_outage_now(void)
{
	struct fake f = { 0 };
	struct agent_loop *l = start(&f, 30 * S, NULL);
	struct agent_loop_status st;
	int64_t t0 = f.now, at;

	f.rnd_mode = RND_MAX;
	f.down = true;                  /* an expired client certificate: every handshake fails */
	run_until(l, &f, t0 + 200 * S);
	agent_loop_status(l, &st);
	CU_ASSERT_EQUAL(st.backoff_ns, 128 * S);  /* next retry only at 255 s */
	CU_ASSERT_EQUAL(st.retry_at_ns, t0 + 255 * S);

	/* the certificate is renewed in place: the watcher flags it */
	f.down = false;
	f.now = at = t0 + 201 * S;
	agent_loop_tls_changed(l);
	agent_loop_turn(l);
	CU_ASSERT_EQUAL(f.n_got, 1);
	CU_ASSERT_EQUAL(f.got_at[0], at);
	CU_ASSERT_EQUAL(f.got_seq[0], 7);         /* probed at 180 s */
	agent_loop_status(l, &st);
	CU_ASSERT_EQUAL(st.reconnects, f.reconnects);
	CU_ASSERT_EQUAL(st.failures, 0);
	CU_ASSERT_EQUAL(st.backoff_ns, 0);
	agent_loop_free(l);
}

static void test_tls_change_when_healthy_reconnects_only(void)
{
	struct fake f = { 0 };
	struct agent_loop *l = start(&f, 30 * S, NULL);
	int64_t due;

	due = agent_loop_turn(l);
	CU_ASSERT_EQUAL(f.n_got, 1);
	f.now += 5 * S;
	agent_loop_tls_changed(l);
	CU_ASSERT_EQUAL(agent_loop_turn(l), due);  /* nothing sent early */
	CU_ASSERT_EQUAL(f.reconnects, 1);
	CU_ASSERT_EQUAL(f.n_got, 1);
	/* a reconnect that fails (a file half written) keeps the channel */
	f.reconnect_fails = true;
	agent_loop_tls_changed(l);
	agent_loop_turn(l);
	CU_ASSERT_EQUAL(f.reconnects, 2);
	f.now = due;
	agent_loop_turn(l);
	CU_ASSERT_EQUAL(f.n_got, 2);
	agent_loop_free(l);
}

static void test_probe_failure_sends_nothing(void)
{
	struct fake f = { 0 };
	struct agent_loop *l = start(&f, 30 * S, NULL);
	struct agent_loop_status st;
	int64_t t0 = f.now;

	f.probe_fails = true;           /* sysfs unmounted */
	run_until(l, &f, t0 + 60 * S);
	agent_loop_status(l, &st);
	CU_ASSERT_EQUAL(f.probes, 3);
	CU_ASSERT_EQUAL(st.probe_failures, 3);
	CU_ASSERT_EQUAL(f.sends, 0);
	CU_ASSERT_FALSE(st.pending);
	f.probe_fails = false;
	run_until(l, &f, t0 + 90 * S);
	CU_ASSERT_EQUAL(f.n_got, 1);
	CU_ASSERT_EQUAL(f.got_seq[0], 1);  /* sequences count reports, not attempts */
	agent_loop_free(l);
}

static void test_stall_does_not_burst(void)
{
	struct fake f = { 0 };
	struct agent_loop *l = start(&f, 30 * S, NULL);
	int64_t due;

	agent_loop_turn(l);
	f.now += 3600 * S;              /* the host was suspended for an hour */
	due = agent_loop_turn(l);
	CU_ASSERT_EQUAL(f.probes, 2);   /* one probe, not 120 to catch up */
	CU_ASSERT_EQUAL(due, f.now + 30 * S);
	agent_loop_free(l);
}

static void test_health_and_readiness(void)
{
	struct fake f = { 0 };
	struct agent_loop *l = start(&f, 30 * S, NULL);
	char why[256];
	int64_t t0 = f.now;

	f.rnd_mode = RND_MAX;
	/* before the first report: healthy (starting), not ready */
	CU_ASSERT_TRUE(agent_loop_healthy(l, f.now, why, sizeof(why)));
	CU_ASSERT_FALSE(agent_loop_ready(l, why, sizeof(why)));
	DT_ASSERT_STR(why, "no report acknowledged yet");
	agent_loop_turn(l);
	CU_ASSERT_TRUE(agent_loop_ready(l, why, sizeof(why)));
	CU_ASSERT_TRUE(agent_loop_healthy(l, f.now, why, sizeof(why)));

	/* the coordinator goes away: not ready at the first failure (30 s),
	 * unhealthy once nothing was acknowledged for 3 intervals */
	f.down = true;
	run_until(l, &f, t0 + 30 * S);
	CU_ASSERT_FALSE(agent_loop_ready(l, why, sizeof(why)));
	DT_ASSERT_STR(why, "1 report failed since the last acknowledged one");
	CU_ASSERT_TRUE(agent_loop_healthy(l, t0 + 90 * S, why, sizeof(why)));
	CU_ASSERT_FALSE(agent_loop_healthy(l, t0 + 91 * S, why, sizeof(why)));
	DT_ASSERT_STR(why, "no report acknowledged for 91s (unhealthy after 90s)");
	f.down = false;
	run_until(l, &f, t0 + 100 * S);
	CU_ASSERT_TRUE(agent_loop_healthy(l, f.now, why, sizeof(why)));
	CU_ASSERT_TRUE(agent_loop_ready(l, why, sizeof(why)));
	agent_loop_free(l);

	/* never acknowledged: unhealthy after that long from the start */
	l = start(&f, 30 * S, NULL);
	f.down = true;
	t0 = f.now;
	run_until(l, &f, t0 + 100 * S);
	CU_ASSERT_FALSE(agent_loop_healthy(l, t0 + 100 * S, why, sizeof(why)));
	DT_ASSERT_STR(why, "no report acknowledged since the start 100s ago (unhealthy after 90s)");
	agent_loop_free(l);
}

static bool has_line(const char *text, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = text; (p = strstr(p, line)); p += n)
		if ((p == text || p[-1] == '\n') && p[n] == '\n')
			return true;
	return false;
}

static void test_metrics(void)
{
	struct obs_registry *reg = NULL;
	struct strbuf sb = STRBUF_INIT;
	struct fake f = { 0 };
	struct dt_err err = { 0 };
	struct agent_loop *l;

	CU_ASSERT_EQUAL_FATAL(obs_registry_new(&reg, &err), 0);
	l = start(&f, 30 * S, reg);
	/* failure counters show 0 before any failure */
	CU_ASSERT_EQUAL(obs_registry_render(reg, &sb, &err), 0);
	CU_ASSERT(has_line(sb_str(&sb), "dratopo_agent_report_failures_total{code=\"UNAVAILABLE\"} 0"));
	CU_ASSERT(has_line(sb_str(&sb), "dratopo_agent_probe_failures_total 0"));
	CU_ASSERT(has_line(sb_str(&sb), "dratopo_agent_reports_total 0"));
	CU_ASSERT(has_line(sb_str(&sb), "dratopo_agent_verdict{verdict=\"match\"} 0"));

	f.rnd_mode = RND_MAX;
	f.down = true;
	run_until(l, &f, f.now + 3 * S);        /* sends at 0, 1, 3 s */
	f.down = false;
	f.verdict = AGENT_VERDICT_DRIFT;
	run_until(l, &f, f.now + 5 * S);        /* the one at 7 s goes through */
	sb.len = 0;
	CU_ASSERT_EQUAL(obs_registry_render(reg, &sb, &err), 0);
	CU_ASSERT(has_line(sb_str(&sb), "dratopo_agent_report_failures_total{code=\"UNAVAILABLE\"} 3"));
	CU_ASSERT(has_line(sb_str(&sb), "dratopo_agent_reports_total 1"));
	CU_ASSERT(has_line(sb_str(&sb), "dratopo_agent_verdict{verdict=\"drift\"} 1"));
	CU_ASSERT(has_line(sb_str(&sb), "dratopo_agent_verdict{verdict=\"match\"} 0"));
	CU_ASSERT(has_line(sb_str(&sb), "dratopo_agent_consecutive_failures 0"));
	CU_ASSERT(has_line(sb_str(&sb), "dratopo_agent_last_report_timestamp_seconds 1.700001007e+09"));
	sb_free(&sb);
	agent_loop_free(l);
	obs_registry_free(reg);
}

static void test_bad_options(void)
{
	struct agent_loop_opts o = { "n", "c", 0, 0, NULL, false };
	struct agent_loop *l = (struct agent_loop *)&o;
	struct fake f = { 0 };
	struct dt_err err = { 0 };

	CU_ASSERT_EQUAL(agent_loop_new(&fake_ops, &f, &o, &l, &err), -EINVAL);
	CU_ASSERT_PTR_NULL(l);
	DT_ASSERT_STR(err.msg, "the interval must be positive");
	DT_ASSERT_STR(agent_verdict_name(AGENT_VERDICT_NONE), "none");
	DT_ASSERT_STR(agent_verdict_name(AGENT_VERDICT_LEARNED), "learned");
}

DT_SUITE_MAIN_WITH("agent_loop", quiet_logs, NULL,
		   DT_TEST(test_heartbeat_cadence),
		   DT_TEST(test_backoff_doubles_to_five_minutes),
		   DT_TEST(test_outage_reprobes_and_sends_the_newest),
		   DT_TEST(test_refusal_backs_off_without_reconnecting),
		   DT_TEST(test_tls_change_ends_the_outage_now),
		   DT_TEST(test_tls_change_when_healthy_reconnects_only),
		   DT_TEST(test_probe_failure_sends_nothing),
		   DT_TEST(test_stall_does_not_burst),
		   DT_TEST(test_health_and_readiness),
		   DT_TEST(test_metrics),
		   DT_TEST(test_bad_options))
