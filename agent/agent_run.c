/* agent_run.c - dratopo-agent-run, the program behind `dratopo-agent run`:
 * the options, and the process around the report loop (agent_loop.c): the
 * sysfs probe and the gRPC call it is given, the TLS files watched
 * (certwatch), the --http endpoint, and the signals.
 *
 *   dratopo-agent run --coordinator ADDR [--interval D] [--node-name N]
 *       [--instance-type T] [--sysfs-root DIR]
 *       [--tls-cert F --tls-key F --tls-ca F [--tls-server-name S] | --insecure]
 *       [--http ADDR] [--unhealthy-after D] [--log-level L] [--once]
 *
 * It is its own program so that `dratopo-agent probe|verify|slices`, one-shot
 * commands, never load gRPC, OpenSSL or libmicrohttpd: dratopo-agent execs
 * it for `run` (docs/agent.md, "Two programs").
 *
 * It reads sysfs and nothing else of the host (and its TLS files): the run
 * id that lets the coordinator tell agent restarts apart is random, not
 * /proc's boot id.
 *
 * Signals: SIGTERM and SIGINT end the process at once with exit 0, also in
 * the middle of a backoff sleep or a call: a dedicated thread waits for
 * them (they are blocked everywhere else), logs and exits. Nothing the
 * agent holds needs flushing: the coordinator owns the durable state.
 * SIGHUP reads the TLS files again (a new connection for the next report). */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "agent_loop.h"
#include "agent_node.h"
#include "agent_report.h"
#include "certwatch.h"
#include "doc.h"
#include "dratopo/v1/agent.pb-c.h"
#include "duration.h"
#include "obs_http.h"
#include "obs_log.h"
#include "opts.h"
#include "probe.h"
#include "rpc_client.h"
#include "rpc_tlsdiag.h"

#define NS_PER_S 1000000000LL
#define DEFAULT_INTERVAL_NS (30 * NS_PER_S)
#define CALL_DEADLINE_MS 10000
#define DIAGNOSE_MS 3000
#define REPORT_METHOD "/dratopo.v1.Coordinator/Report"

struct run_args {
	const char *coordinator, *node_name, *instance_type, *root, *http;
	struct rpc_tls tls;
	int64_t interval_ns, unhealthy_after_ns;
	bool once, compact, version;
};

#define RUN_AT(f) OPTS_AT(struct run_args, f)

static const struct opt run_opts[] = {
	{ .name = "coordinator", .type = OPT_STR, .arg = "ADDR", .at = RUN_AT(coordinator),
	  .help = "host:port of dratopo-coordinator" },
	{ .name = "interval", .type = OPT_DURATION, .arg = "D", .at = RUN_AT(interval_ns),
	  .help = "probe and report every D (default 30s)" },
	{ .name = "node-name", .type = OPT_STR, .arg = "N", .at = RUN_AT(node_name),
	  .help = "the node reported (default $NODE_NAME, else the host name)" },
	{ .name = "instance-type", .type = OPT_STR, .arg = "T", .at = RUN_AT(instance_type),
	  .help = "assume type T instead of the DMI product name" },
	{ .name = "sysfs-root", .type = OPT_STR, .arg = "DIR", .at = RUN_AT(root),
	  .help = "read DIR/sys instead of /sys" },
	{ .name = "tls-cert", .type = OPT_STR, .arg = "FILE", .at = RUN_AT(tls.cert),
	  .help = "this node's client certificate (CN or a DNS SAN = node\nname)" },
	{ .name = "tls-key", .type = OPT_STR, .arg = "FILE", .at = RUN_AT(tls.key),
	  .help = "its private key" },
	{ .name = "tls-ca", .type = OPT_STR, .arg = "FILE", .at = RUN_AT(tls.ca),
	  .help = "CA bundle that verifies the coordinator" },
	{ .name = "tls-server-name", .type = OPT_STR, .arg = "S", .at = RUN_AT(tls.server_name),
	  .help = "the name the coordinator's certificate must carry\n"
		  "(default: the host of --coordinator)" },
	{ .name = "insecure", .type = OPT_FLAG, .at = RUN_AT(tls.insecure),
	  .help = "plaintext (the coordinator must run with --insecure too)" },
	{ .name = "http", .type = OPT_STR, .arg = "ADDR", .at = RUN_AT(http),
	  .help = "serve /healthz, /readyz and /metrics on ADDR (default: off)" },
	{ .name = "unhealthy-after", .type = OPT_DURATION, .arg = "D",
	  .at = RUN_AT(unhealthy_after_ns),
	  .help = "/healthz fails when no report was acknowledged for D\n(default 3 x interval)" },
	OBS_LOG_LEVEL_OPT,
	{ .name = "once", .type = OPT_FLAG, .at = RUN_AT(once),
	  .help = "one probe and one report; print the coordinator's verdict\n"
		  "as JSON and exit 0 (1 when the report was not taken)" },
	OPTS_COMPACT(struct run_args, compact),
	{ .name = "version", .type = OPT_FLAG, .at = RUN_AT(version), .help = "print the version" },
	{ 0 }
};

static const struct opts_cmd run_cmd = {
	.prog = "dratopo-agent run",
	.synopsis = "dratopo-agent run --coordinator ADDR [--interval D] [--node-name N]\n"
		    "                         [--instance-type T] [--sysfs-root DIR]\n"
		    "                         [--tls-cert F --tls-key F --tls-ca F\n"
		    "                          [--tls-server-name S] | --insecure]\n"
		    "                         [--http ADDR] [--unhealthy-after D] [--log-level L]\n"
		    "                         [--once [--compact]]",
	.about = "Report this node's GPUs, EFAs and predicted ResourceSlices to the coordinator at\n"
		 "start and every interval, with backoff while it is away.",
	.opts = run_opts,
	.epilog = "The TLS files are watched: a renewed certificate is used for the next report\n"
		  "without a restart (SIGHUP forces a reload).\n\n"
		  "Exit codes: 0 stopped by SIGTERM/SIGINT (or --once reported), 1 failure,\n"
		  "2 usage error.",
};

/* false to run; true and *rc when the process ends here. */
static bool parse_run_args(int argc, char **argv, struct run_args *a, int *rc)
{
	struct dt_err err = { 0 };

	*a = (struct run_args){ .root = "/", .interval_ns = DEFAULT_INTERVAL_NS };
	/* argv[0] is this program's path: the grammar's argv[0] is "run" */
	if (opts_parse(&run_cmd, argc, argv, a, rc))
		return true;
	if (a->version) {
		printf("dratopo-agent %s\n", DRATOPO_VERSION);
		return true;
	}
	if (!a->coordinator)
		*rc = opts_usage_error(&run_cmd, "--coordinator ADDR is required");
	else if (!*a->root)
		*rc = opts_usage_error(&run_cmd, "--sysfs-root must not be empty");
	else if (a->compact && !a->once)
		*rc = opts_usage_error(&run_cmd, "--compact goes with --once");
	else if (rpc_tls_check(&a->tls, &err))
		*rc = opts_usage_error(&run_cmd, "%s", err.msg);
	else if (a->unhealthy_after_ns && a->unhealthy_after_ns < a->interval_ns)
		*rc = opts_usage_error(&run_cmd, "--unhealthy-after must not be shorter than "
				       "--interval (a healthy agent reports once per interval)");
	return *rc != 0;
}

static int64_t clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (int64_t)ts.tv_sec * NS_PER_S + ts.tv_nsec;
}

/* ---- the loop's operations: the real clock, sysfs, gRPC ---- */

struct run_env {
	const struct run_args *a;
	const char *node;
	char run_id[33];
	struct rpc_channel *ch;
	struct agent_loop *loop;
	struct certwatch *certs;                /* set once; the signal thread loads it */
	Dratopo__V1__ReportAck *last_ack;       /* --once: the answer to print */

	/* Wakes the loop's thread early (a TLS change). */
	pthread_mutex_t wake_lock;
	pthread_cond_t wake_cond;               /* on CLOCK_MONOTONIC */
	bool woken;
};

static int64_t op_now(void *env)
{
	(void)env;
	return clock_ns(CLOCK_MONOTONIC);
}

static int64_t op_wall(void *env)
{
	(void)env;
	return clock_ns(CLOCK_REALTIME);
}

static uint64_t op_random(void *env)
{
	uint64_t r = 0;

	(void)env;
	if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
		r = (uint64_t)clock_ns(CLOCK_MONOTONIC);
	return r;
}

static void make_run_id(char out[33])
{
	unsigned char b[16] = { 0 };

	if (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b)) {
		int64_t t = clock_ns(CLOCK_REALTIME);

		memcpy(b, &t, sizeof(t));
	}
	for (int i = 0; i < 16; i++)
		snprintf(out + 2 * i, 3, "%02x", b[i]);
}

/* Probe sysfs and pack the report. 0, or -1 (logged). */
static int op_probe(void *envp, uint64_t sequence, uint8_t **buf, size_t *len)
{
	struct run_env *env = envp;
	struct probe_options po = { env->a->instance_type };
	struct topo t;
	struct dt_diags w;
	struct dt_err err = { 0 };
	struct agent_report_info info = { env->node, env->run_id, sequence,
					  clock_ns(CLOCK_REALTIME), DRATOPO_VERSION };
	int rc;

	if (probe_run(env->a->root, &po, &t, &err)) {
		obs_log(OBS_ERROR, "probe_failed", "root", env->a->root, "error", err.msg, NULL);
		return -1;
	}
	dt_diags_init(&w);
	rc = agent_report_pack(&t, &info, buf, len, &w, &err);
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
	return 0;
}

static void op_send(void *envp, const uint8_t *buf, size_t len, struct agent_sent *out)
{
	struct run_env *env = envp;
	struct rpc_status st = { 0 };
	struct dt_err err = { 0 };
	Dratopo__V1__ReportAck *ack;
	char *resp = NULL;
	size_t resp_len = 0;

	if (rpc_call_bytes(env->ch, REPORT_METHOD, buf, len, CALL_DEADLINE_MS, &resp, &resp_len,
			   &st, &err)) {
		out->code = st.code ? (int)st.code : GRPC_STATUS_UNKNOWN;
		out->code_name = rpc_status_name(st.code);
		out->unreachable = st.code == GRPC_STATUS_UNAVAILABLE;
		snprintf(out->error, sizeof(out->error), "%s", err.msg);
		return;
	}
	ack = dratopo__v1__report_ack__unpack(NULL, resp_len, (const uint8_t *)resp);
	free(resp);
	if (!ack) {
		out->code = GRPC_STATUS_INTERNAL;
		out->code_name = "BAD_ANSWER";
		snprintf(out->error, sizeof(out->error), "the coordinator's answer is not a ReportAck");
		return;
	}
	out->code = 0;
	out->ack = (struct agent_ack){ (int)ack->verdict, ack->sequence, ack->n_differences,
				       ack->conflict };
	if (env->a->once && !env->last_ack)
		env->last_ack = ack;
	else
		dratopo__v1__report_ack__free_unpacked(ack, NULL);
}

static int op_reconnect(void *envp, struct dt_err *err)
{
	struct run_env *env = envp;

	return rpc_channel_reconnect(env->ch, err);
}

static bool op_diagnose(void *envp, char *msg, size_t len)
{
	struct run_env *env = envp;
	struct dt_err why = { 0 };

	if (rpc_channel_diagnose(env->ch, DIAGNOSE_MS, &why) >= 0 || why.code == -EINVAL)
		return false;
	snprintf(msg, len, "%s", why.msg);
	return true;
}

static const struct agent_loop_ops run_ops = {
	op_now, op_wall, op_random, op_probe, op_send, op_reconnect, op_diagnose,
};

/* ---- waking the loop early ---- */

static void wake_loop(struct run_env *env)
{
	pthread_mutex_lock(&env->wake_lock);
	env->woken = true;
	pthread_cond_signal(&env->wake_cond);
	pthread_mutex_unlock(&env->wake_lock);
}

static void sleep_until(struct run_env *env, int64_t due)
{
	struct timespec ts = { (time_t)(due / NS_PER_S), (long)(due % NS_PER_S) };

	pthread_mutex_lock(&env->wake_lock);
	while (!env->woken && clock_ns(CLOCK_MONOTONIC) < due)
		if (pthread_cond_timedwait(&env->wake_cond, &env->wake_lock, &ts) == ETIMEDOUT)
			break;
	env->woken = false;
	pthread_mutex_unlock(&env->wake_lock);
}

static int init_wake(struct run_env *env)
{
	pthread_condattr_t ca;

	pthread_mutex_init(&env->wake_lock, NULL);
	if (pthread_condattr_init(&ca) || pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) ||
	    pthread_cond_init(&env->wake_cond, &ca))
		return -1;
	pthread_condattr_destroy(&ca);
	return 0;
}

/* certwatch's reload: the files are checked here, the loop's thread
 * reconnects with them (a call may be running on the channel now). */
static int tls_reload(void *envp, struct dt_err *err)
{
	struct run_env *env = envp;
	int rc = rpc_tls_files_check(&env->a->tls, err);

	if (rc)
		return rc;
	agent_loop_tls_changed(env->loop);
	wake_loop(env);
	return 0;
}

/* ---- health ---- */

static bool healthy(void *envp, char *why, size_t len)
{
	struct run_env *env = envp;

	if (env->certs && certwatch_check(env->certs, clock_ns(CLOCK_REALTIME), why, len))
		return false;
	return agent_loop_healthy(env->loop, clock_ns(CLOCK_MONOTONIC), why, len);
}

static bool ready(void *envp, char *why, size_t len)
{
	struct run_env *env = envp;

	if (env->certs && certwatch_check(env->certs, clock_ns(CLOCK_REALTIME), why, len))
		return false;
	return agent_loop_ready(env->loop, why, len);
}

/* ---- signals: a thread that exits the process or reloads TLS ---- */

static sigset_t run_sigs;

static void *signal_main(void *arg)
{
	struct run_env *env = arg;
	int sig;

	while (sigwait(&run_sigs, &sig) == 0) {
		struct certwatch *certs = __atomic_load_n(&env->certs, __ATOMIC_ACQUIRE);

		if (sig != SIGHUP) {
			obs_log(OBS_INFO, "stop", "signal", strsignal(sig), NULL);
			_exit(0);
		}
		if (certs)
			certwatch_poke(certs);
		else
			obs_log(OBS_INFO, "tls_reload", "result", env->a->tls.insecure ?
				"skipped: --insecure" : "skipped: not started yet", NULL);
	}
	return NULL;
}

/* Before any other thread, so that every thread inherits the mask. */
static int start_signal_thread(struct run_env *env)
{
	pthread_t t;

	sigemptyset(&run_sigs);
	sigaddset(&run_sigs, SIGTERM);
	sigaddset(&run_sigs, SIGINT);
	sigaddset(&run_sigs, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &run_sigs, NULL);
	if (pthread_create(&t, NULL, signal_main, env))
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
		     doc_map_set(a, m, "verdict",
				 doc_new_string(a, agent_verdict_name((int)ack->verdict))) ||
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

static void log_start(const struct run_env *env, struct obs_http *http)
{
	struct obs_ev ev;
	char buf[32];

	obs_ev_begin(&ev, OBS_INFO, "start");
	obs_ev_str(&ev, "version", DRATOPO_VERSION);
	obs_ev_str(&ev, "node", env->node);
	obs_ev_str(&ev, "coordinator", env->a->coordinator);
	obs_ev_str(&ev, "interval", duration_format(env->a->interval_ns, buf, sizeof(buf)));
	obs_ev_str(&ev, "tls", env->a->tls.insecure ? "insecure" : "mtls");
	if (http)
		obs_ev_int(&ev, "http_port", obs_http_port(http));
	obs_ev_end(&ev);
}

/* The watcher, the loop and the HTTP endpoint, in that order. */
static int start_parts(struct run_env *env, struct obs_registry *reg, struct obs_http **http,
		       struct dt_err *err)
{
	struct agent_loop_opts lo = { env->node, env->a->coordinator, env->a->interval_ns,
				      env->a->unhealthy_after_ns, reg, env->a->once };
	int rc = agent_loop_new(&run_ops, env, &lo, &env->loop, err);

	if (!rc && !env->a->tls.insecure && !env->a->once) {
		struct certwatch_opts co = { env->a->tls.cert, env->a->tls.key, env->a->tls.ca,
					     "client", tls_reload, env, reg, 0, 0 };

		struct certwatch *w = NULL;

		rc = certwatch_start(&co, &w, err);
		__atomic_store_n(&env->certs, w, __ATOMIC_RELEASE);
	}
	if (!rc && env->a->http) {
		struct obs_http_opts ho = { .addr = env->a->http, .reg = reg, .ready = ready,
					    .ready_arg = env, .live = healthy, .live_arg = env };

		rc = obs_http_start_opts(&ho, http, err);
	}
	return rc;
}

static int run_once(struct run_env *env)
{
	struct agent_loop_status st;
	int rc;

	agent_loop_turn(env->loop);
	agent_loop_status(env->loop, &st);
	rc = st.acks && env->last_ack ? print_ack(env->node, env->last_ack, env->a->compact) : -1;
	if (env->last_ack)
		dratopo__v1__report_ack__free_unpacked(env->last_ack, NULL);
	return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct run_args a;
	struct run_env env = { .a = &a };
	struct obs_registry *reg = NULL;
	struct obs_http *http = NULL;
	struct dt_err err = { 0 };
	char host[256];
	int rc;

	if (parse_run_args(argc, argv, &a, &rc))
		return rc;
	if (!(env.node = agent_node_name(a.node_name, host, sizeof(host), &err)))
		return opts_usage_error(&run_cmd, "%s", err.msg);
	if (init_wake(&env) || start_signal_thread(&env)) {
		fprintf(stderr, "dratopo-agent run: cannot start its threads\n");
		return 1;
	}
	make_run_id(env.run_id);
	rpc_set_log(grpc_log);
	rc = obs_registry_new(&reg, &err);
	if (!rc)
		rc = rpc_channel_open(a.coordinator, &a.tls, &env.ch, &err);
	if (!rc) {
		rpc_channel_set_diagnose(env.ch, false);  /* the loop diagnoses, once per run */
		rc = start_parts(&env, reg, &http, &err);
	}
	if (rc) {
		obs_log(OBS_ERROR, "start_failed", "error", err.msg, NULL);
		fprintf(stderr, "dratopo-agent run: %s\n", err.msg);
		rc = 1;
		goto out;
	}
	log_start(&env, http);
	if (a.once) {
		rc = run_once(&env);
		goto out;
	}
	for (;;)
		sleep_until(&env, agent_loop_turn(env.loop));
out:
	obs_http_stop(http);
	certwatch_stop(env.certs);
	agent_loop_free(env.loop);
	rpc_channel_close(env.ch);
	obs_registry_free(reg);
	return rc;
}
