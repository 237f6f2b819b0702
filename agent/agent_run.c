/* agent_run.c - `dratopo-agent run`: probe, report, repeat.
 *
 *   dratopo-agent run --coordinator ADDR [--interval D] [--node-name N]
 *       [--instance-type T] [--sysfs-root DIR]
 *       [--tls-cert F --tls-key F --tls-ca F | --insecure] [--once]
 *
 * The agent probes at start and every interval and reports each probe: a
 * changed topology reaches the coordinator within one interval, and an
 * unchanged one is the heartbeat that keeps the node from going stale.
 * While the coordinator cannot be reached it retries with exponential
 * backoff and jitter (1 s doubling up to 5 min), and keeps exactly one
 * report: a newer probe replaces the one not yet sent, so memory stays flat
 * however long the outage. Each retry after an UNAVAILABLE failure opens a
 * new connection (rpc_channel_reconnect): the agent's backoff is the only
 * one, and renewed TLS files are read. A failure is logged at warn when it starts a run
 * of failures (or changes its status), with what rpc_channel_diagnose found
 * wrong with the connection (a refused certificate, TLS against plaintext,
 * ...), and at debug for the rest of the run; the first report that gets
 * through is logged at info. It reads sysfs and nothing else: the run id that
 * lets the coordinator tell agent restarts apart is random, not /proc's boot
 * id.
 *
 * Signals: SIGTERM and SIGINT end the process at once with exit 0, also in
 * the middle of a backoff sleep or a call; a dedicated thread waits for them
 * (they are blocked everywhere else), logs and exits. Nothing the agent
 * holds needs flushing: the coordinator owns the durable state. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "agent_report.h"
#include "agent_run.h"
#include "doc.h"
#include "dratopo/v1/agent.pb-c.h"
#include "duration.h"
#include "obs_log.h"
#include "opts.h"
#include "probe.h"
#include "rpc_client.h"
#include "rpc_tlsdiag.h"

#define EXIT_USAGE 2
#define NS_PER_S 1000000000LL
#define DEFAULT_INTERVAL_NS (30 * NS_PER_S)
#define BACKOFF_MIN_NS (1 * NS_PER_S)
#define BACKOFF_MAX_NS (300 * NS_PER_S)
#define CALL_DEADLINE_MS 10000
#define DIAGNOSE_MS 3000
#define REPORT_METHOD "/dratopo.v1.Coordinator/Report"

struct run_args {
	const char *coordinator, *node_name, *instance_type, *root;
	struct rpc_tls tls;
	int64_t interval_ns;
	bool once, compact;
};

static const struct opt run_opts[] = {
	{ .name = "coordinator", .type = OPT_STR, .arg = "ADDR", .flags = OPT_REQUIRED,
	  .at = OPTS_AT(struct run_args, coordinator), .help = "host:port of dratopo-coordinator" },
	{ .name = "interval", .type = OPT_DURATION, .arg = "D",
	  .at = OPTS_AT(struct run_args, interval_ns),
	  .help = "probe and report every D (default 30s)" },
	{ .name = "node-name", .type = OPT_STR, .arg = "N", .at = OPTS_AT(struct run_args, node_name),
	  .help = "the node reported (default $NODE_NAME, else the host name)" },
	{ .name = "instance-type", .type = OPT_STR, .arg = "T",
	  .at = OPTS_AT(struct run_args, instance_type),
	  .help = "assume type T instead of the DMI product name" },
	{ .name = "sysfs-root", .type = OPT_STR, .arg = "DIR", .at = OPTS_AT(struct run_args, root),
	  .help = "read DIR/sys instead of /sys" },
	{ .name = "tls-cert", .type = OPT_STR, .arg = "FILE", .at = OPTS_AT(struct run_args, tls.cert),
	  .help = "this node's client certificate (CN or a DNS SAN = node\nname)" },
	{ .name = "tls-key", .type = OPT_STR, .arg = "FILE", .at = OPTS_AT(struct run_args, tls.key),
	  .help = "its private key" },
	{ .name = "tls-ca", .type = OPT_STR, .arg = "FILE", .at = OPTS_AT(struct run_args, tls.ca),
	  .help = "CA bundle that verifies the coordinator" },
	{ .name = "insecure", .type = OPT_FLAG, .at = OPTS_AT(struct run_args, tls.insecure),
	  .help = "plaintext (the coordinator must run with --insecure too)" },
	{ .name = "once", .type = OPT_FLAG, .at = OPTS_AT(struct run_args, once),
	  .help = "one probe and one report; print the coordinator's verdict\n"
		  "as JSON and exit 0 (1 when the report was not taken)" },
	OPTS_COMPACT(struct run_args, compact),
	{ 0 }
};

static const struct opts_cmd run_cmd = {
	.prog = "dratopo-agent run",
	.synopsis = "dratopo-agent run --coordinator ADDR [--interval D] [--node-name N]\n"
		    "                         [--instance-type T] [--sysfs-root DIR]\n"
		    "                         [--tls-cert F --tls-key F --tls-ca F | --insecure]\n"
		    "                         [--once [--compact]]",
	.about = "Report this node's GPUs, EFAs and predicted ResourceSlices to the coordinator at\n"
		 "start and every interval, with backoff while it is away.",
	.opts = run_opts,
	.epilog = "Exit codes: 0 stopped by SIGTERM/SIGINT (or --once reported), 1 failure,\n"
		  "2 usage error.",
};

/* false to run; true and *rc when the command ends here. */
static bool parse_run_args(int argc, char **argv, struct run_args *a, int *rc)
{
	struct dt_err err = { 0 };

	*a = (struct run_args){ .root = "/", .interval_ns = DEFAULT_INTERVAL_NS };
	if (opts_parse(&run_cmd, argc, argv, a, rc))
		return true;
	if (!*a->root)
		*rc = opts_usage_error(&run_cmd, "--sysfs-root must not be empty");
	else if (a->compact && !a->once)
		*rc = opts_usage_error(&run_cmd, "--compact goes with --once");
	else if (rpc_tls_check(&a->tls, &err))
		*rc = opts_usage_error(&run_cmd, "%s", err.msg);
	return *rc != 0;
}

static int64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (int64_t)ts.tv_sec * NS_PER_S + ts.tv_nsec;
}

static void sleep_ns(int64_t ns)
{
	struct timespec ts = { (time_t)(ns / NS_PER_S), (long)(ns % NS_PER_S) };

	while (ns > 0 && nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* ---- signals: a thread that exits the process ---- */

static sigset_t stop_sigs;

static void *signal_main(void *arg)
{
	int sig;

	(void)arg;
	if (sigwait(&stop_sigs, &sig) == 0) {
		obs_log(OBS_INFO, "stop", "signal", strsignal(sig), NULL);
		_exit(0);
	}
	return NULL;
}

static int start_signal_thread(void)
{
	pthread_t t;

	sigemptyset(&stop_sigs);
	sigaddset(&stop_sigs, SIGTERM);
	sigaddset(&stop_sigs, SIGINT);
	pthread_sigmask(SIG_BLOCK, &stop_sigs, NULL);
	if (pthread_create(&t, NULL, signal_main, NULL))
		return -1;
	pthread_detach(t);
	return 0;
}

/* gRPC's own log lines as events of ours. Its line for a failed handshake
 * comes at every retry and report_failed already says what is wrong, in
 * words: that one is debug. */
static void grpc_log(const char *severity, const char *file, int line, const char *message)
{
	struct rpc_tls_refusal r;

	obs_logf(rpc_tls_refusal_parse(message, &r) ? OBS_DEBUG : OBS_WARN, "grpc", "message",
		 "%s: %s (%s:%d)", severity, message, file, line);
}

/* ---- one probe, one report ---- */

struct run_state {
	const struct run_args *a;
	const char *node;
	char run_id[33];
	uint64_t sequence;
	struct rpc_channel *ch;
	uint8_t *pending;               /* the one report not yet acknowledged */
	size_t pending_len;
	int last_verdict;               /* -1 before the first ack */
	unsigned failures;              /* failed sends since the last ack */
	grpc_status_code last_failure;  /* the status of the latest of them */
};

static void make_run_id(char out[33])
{
	unsigned char b[16] = { 0 };

	if (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b)) {
		int64_t t = now_ns(CLOCK_REALTIME);

		memcpy(b, &t, sizeof(t));
	}
	for (int i = 0; i < 16; i++)
		snprintf(out + 2 * i, 3, "%02x", b[i]);
}

/* Probe and replace the pending report. 0 or -1 (logged). */
static int probe_once(struct run_state *s)
{
	struct probe_options po = { s->a->instance_type };
	struct topo t;
	struct dt_diags w;
	struct dt_err err = { 0 };
	struct agent_report_info info = { s->node, s->run_id, s->sequence + 1,
					  now_ns(CLOCK_REALTIME), DRATOPO_VERSION };
	uint8_t *buf = NULL;
	size_t len = 0;
	int rc;

	if (probe_run(s->a->root, &po, &t, &err)) {
		obs_log(OBS_ERROR, "probe_failed", "root", s->a->root, "error", err.msg, NULL);
		return -1;
	}
	dt_diags_init(&w);
	rc = agent_report_pack(&t, &info, &buf, &len, &w, &err);
	for (size_t i = 0; i < t.warnings.n; i++)
		obs_log(OBS_WARN, "probe_warning", "warning", t.warnings.msgs[i], NULL);
	for (size_t i = 0; i < w.n; i++)
		obs_log(OBS_WARN, "report_warning", "warning", w.msgs[i], NULL);
	dt_diags_free(&w);
	topo_free(&t);
	if (rc) {
		obs_log(OBS_ERROR, "probe_failed", "error", err.msg, NULL);
		return -1;
	}
	free(s->pending);
	s->pending = buf;
	s->pending_len = len;
	s->sequence++;
	return 0;
}

static const char *verdict_name(Dratopo__V1__Verdict v)
{
	switch (v) {
	case DRATOPO__V1__VERDICT__VERDICT_MATCH: return "match";
	case DRATOPO__V1__VERDICT__VERDICT_DRIFT: return "drift";
	case DRATOPO__V1__VERDICT__VERDICT_UNKNOWN_TYPE: return "unknown";
	case DRATOPO__V1__VERDICT__VERDICT_LEARNED: return "learned";
	default: return "unspecified";
	}
}

/* --once: the coordinator's answer on stdout. */
static int print_ack(const char *node, const Dratopo__V1__ReportAck *ack, bool compact)
{
	struct doc_arena *a = doc_arena_new();
	struct doc_node *m = a ? doc_new_map(a) : NULL, *d = a ? doc_new_seq(a) : NULL;
	struct strbuf sb = STRBUF_INIT;
	int rc = m && d ? 0 : -ENOMEM;

	for (size_t i = 0; !rc && i < ack->n_differences; i++)
		rc = doc_seq_push(a, d, doc_new_string(a, ack->differences[i]));
	if (!rc)
		rc = doc_map_set(a, m, "node", doc_new_string(a, node)) ||
		     doc_map_set(a, m, "verdict", doc_new_string(a, verdict_name(ack->verdict))) ||
		     doc_map_set(a, m, "differences", d) ||
		     doc_map_set(a, m, "conflict", doc_new_bool(a, ack->conflict)) ||
		     doc_map_set(a, m, "sequence", doc_new_int(a, (int64_t)ack->sequence)) ||
		     doc_emit_json(m, DOC_JSON_OUTPUT(compact), &sb);
	if (!rc)
		fputs(sb_str(&sb), stdout);
	sb_free(&sb);
	doc_arena_free(a);
	return rc || fflush(stdout) ? -1 : 0;
}

/* One failed send: at warn, diagnosed, when it starts a run of failures or
 * its status differs from the one before; at debug otherwise, so that a long
 * outage neither fills the log nor probes the coordinator on every retry. */
static void report_failed(struct run_state *s, const struct rpc_status *st,
			  const struct dt_err *err)
{
	bool news = s->failures == 0 || st->code != s->last_failure;
	struct dt_err why = { 0 };
	const char *msg = err->msg;

	if (news && st->code == GRPC_STATUS_UNAVAILABLE &&
	    rpc_channel_diagnose(s->ch, DIAGNOSE_MS, &why) < 0 && why.code != -EINVAL)
		msg = why.msg;
	s->failures++;
	s->last_failure = st->code;
	obs_log(news ? OBS_WARN : OBS_DEBUG, "report_failed", "coordinator", s->a->coordinator,
		"status", rpc_status_name(st->code), "error", msg, NULL);
}

/* Send the pending report. 0 once acknowledged (pending dropped). */
static int send_pending(struct run_state *s)
{
	struct rpc_status st = { 0 };
	struct dt_err err = { 0 };
	Dratopo__V1__ReportAck *ack;
	char *resp = NULL;
	size_t resp_len = 0;
	int rc = rpc_call_bytes(s->ch, REPORT_METHOD, s->pending, s->pending_len,
				CALL_DEADLINE_MS, &resp, &resp_len, &st, &err);

	if (rc) {
		report_failed(s, &st, &err);
		return -1;
	}
	ack = dratopo__v1__report_ack__unpack(NULL, resp_len, (const uint8_t *)resp);
	free(resp);
	if (!ack) {
		obs_log(OBS_WARN, "report_failed", "error", "the coordinator's answer is not a ReportAck",
			NULL);
		return -1;
	}
	{
		bool news = (int)ack->verdict != s->last_verdict || s->failures;
		struct obs_ev ev;

		obs_ev_begin(&ev, news ? OBS_INFO : OBS_DEBUG, "reported");
		obs_ev_str(&ev, "node", s->node);
		obs_ev_int(&ev, "seq", (long long)ack->sequence);
		obs_ev_str(&ev, "verdict", verdict_name(ack->verdict));
		if (ack->n_differences)
			obs_ev_int(&ev, "differences", (long long)ack->n_differences);
		if (ack->conflict)
			obs_ev_str(&ev, "conflict", "true");
		if (s->failures)
			obs_ev_int(&ev, "after_failures", (long long)s->failures);
		obs_ev_end(&ev);
	}
	s->last_verdict = (int)ack->verdict;
	s->failures = 0;
	rc = s->a->once ? print_ack(s->node, ack, s->a->compact) : 0;
	dratopo__v1__report_ack__free_unpacked(ack, NULL);
	free(s->pending);
	s->pending = NULL;
	s->pending_len = 0;
	return rc;
}

/* Before a retry after the coordinator was unreachable: a new connection,
 * so that the retry connects now rather than when gRPC's own reconnect
 * backoff (beside ours) would let it, and with the TLS files as they are
 * now (cert-manager renews them in place). */
static void reconnect(struct run_state *s)
{
	struct dt_err err = { 0 };

	if (!s->failures || s->last_failure != GRPC_STATUS_UNAVAILABLE)
		return;
	if (rpc_channel_reconnect(s->ch, &err))
		obs_log(OBS_WARN, "reconnect_failed", "error", err.msg, NULL);
}

/* Equal jitter: a delay in [b/2, b]. */
static int64_t jittered(int64_t b)
{
	uint64_t r = 0;

	if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
		r = (uint64_t)now_ns(CLOCK_MONOTONIC);
	return b / 2 + (int64_t)(r % (uint64_t)(b / 2 + 1));
}

static void run_loop(struct run_state *s)
{
	int64_t next_probe = now_ns(CLOCK_MONOTONIC), backoff = 0, retry_at = 0;

	for (;;) {
		int64_t now = now_ns(CLOCK_MONOTONIC), wake;

		if (now >= next_probe) {
			probe_once(s);
			next_probe = now + s->a->interval_ns;
		}
		if (s->pending && now >= retry_at) {
			reconnect(s);
			if (send_pending(s) == 0) {
				backoff = 0;
			} else {
				char buf[32];

				backoff = backoff ? backoff * 2 : BACKOFF_MIN_NS;
				if (backoff > BACKOFF_MAX_NS)
					backoff = BACKOFF_MAX_NS;
				retry_at = now_ns(CLOCK_MONOTONIC) + jittered(backoff);
				obs_log(OBS_INFO, "backoff", "retry_in",
					duration_format((retry_at - now_ns(CLOCK_MONOTONIC)) /
							1000000 * 1000000, buf, sizeof(buf)), NULL);
			}
		}
		wake = next_probe;
		if (s->pending && retry_at < wake)
			wake = retry_at;
		sleep_ns(wake - now_ns(CLOCK_MONOTONIC));
	}
}

int agent_run(int argc, char **argv)
{
	struct run_args a;
	struct run_state s = { .a = &a, .last_verdict = -1 };
	struct dt_err err = { 0 };
	char host[256], buf[32];
	int rc;

	if (parse_run_args(argc, argv, &a, &rc))
		return rc;
	if (start_signal_thread()) {
		fprintf(stderr, "dratopo-agent run: cannot start the signal thread\n");
		return 1;
	}
	if (!(s.node = agent_node_name(a.node_name, host, sizeof(host), &err))) {
		fprintf(stderr, "dratopo-agent run: %s\n", err.msg);
		return EXIT_USAGE;
	}
	make_run_id(s.run_id);
	rpc_set_log(grpc_log);
	if (rpc_channel_open(a.coordinator, &a.tls, &s.ch, &err)) {
		obs_log(OBS_ERROR, "start_failed", "error", err.msg, NULL);
		fprintf(stderr, "dratopo-agent run: %s\n", err.msg);
		return 1;
	}
	rpc_channel_set_diagnose(s.ch, false);  /* report_failed diagnoses, once per run */
	obs_log(OBS_INFO, "start", "version", DRATOPO_VERSION, "node", s.node, "coordinator",
		a.coordinator, "interval", duration_format(a.interval_ns, buf, sizeof(buf)), "tls",
		a.tls.insecure ? "insecure" : "mtls", NULL);
	if (a.once) {
		rc = probe_once(&s) || send_pending(&s) ? 1 : 0;
		free(s.pending);
		rpc_channel_close(s.ch);
		return rc;
	}
	run_loop(&s);
	return 0;
}
