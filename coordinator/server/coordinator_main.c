/* coordinator_main.c - dratopo-coordinator: the process around the
 * handlers. Options, start-up (store, restore, HTTP, gRPC), and the signal
 * loop: SIGTERM/SIGINT stop accepting, drain the calls in flight, flush the
 * store and exit 0; SIGHUP re-reads the TLS files.
 *
 * Signals are blocked in every thread (they are blocked before any thread
 * starts) and taken synchronously by the main thread with sigwaitinfo, so no
 * handler runs in signal context. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord.h"
#include "duration.h"
#include "hwdb.h"
#include "obs_http.h"
#include "obs_log.h"
#include "opts.h"
#include "rpc_tlsdiag.h"

#define EXIT_USAGE 2
#define DEFAULT_LISTEN "0.0.0.0:7443"
#define DEFAULT_DB "/var/lib/dratopo/coordinator.db"
#define DEFAULT_INTERVAL_NS (30 * 1000000000LL)
#define DEFAULT_WORKERS 16
#define DRAIN_MS 5000

struct args {
	const char *listen, *db, *http;
	struct opts_list extras;        /* --hwdb-extra */
	struct rpc_tls tls;
	uint64_t learn_quorum, workers, max_plans;
	int64_t interval_ns, stale_after_ns, call_timeout_ns;
	bool version;
};

static int set_log_level(void *dst, const char *v, struct dt_err *err)
{
	enum obs_level level;

	(void)dst;
	if (obs_log_parse_level(v, &level, err))
		return -EINVAL;
	obs_log_set_level(level);
	return 0;
}

static const struct opt coord_opts[] = {
	{ .name = "listen", .type = OPT_STR, .arg = "ADDR", .at = OPTS_AT(struct args, listen),
	  .help = "gRPC address (default " DEFAULT_LISTEN "; port 0 picks one)" },
	{ .name = "db", .type = OPT_STR, .arg = "FILE", .at = OPTS_AT(struct args, db),
	  .help = "SQLite database (default " DEFAULT_DB ")" },
	{ .name = "http", .type = OPT_STR, .arg = "ADDR", .at = OPTS_AT(struct args, http),
	  .help = "serve the status pages (/), /metrics, /healthz and /readyz\n"
		  "on ADDR, read-only (default: off)" },
	{ .name = "tls-cert", .type = OPT_STR, .arg = "FILE", .at = OPTS_AT(struct args, tls.cert),
	  .help = "server certificate (PEM)" },
	{ .name = "tls-key", .type = OPT_STR, .arg = "FILE", .at = OPTS_AT(struct args, tls.key),
	  .help = "its private key" },
	{ .name = "tls-ca", .type = OPT_STR, .arg = "FILE", .at = OPTS_AT(struct args, tls.ca),
	  .help = "CA bundle that client certificates must chain to" },
	{ .name = "insecure", .type = OPT_FLAG, .at = OPTS_AT(struct args, tls.insecure),
	  .help = "plaintext, no client certificates (tests, never production)" },
	{ .name = "learn-quorum", .type = OPT_UINT, .arg = "N", .min = 1, .max = 1000,
	  .at = OPTS_AT(struct args, learn_quorum),
	  .help = "agreeing nodes that make a learned entry (default 2)" },
	{ .name = "interval", .type = OPT_DURATION, .arg = "D", .at = OPTS_AT(struct args, interval_ns),
	  .help = "the agents' reporting interval (default 30s)" },
	{ .name = "stale-after", .type = OPT_DURATION, .arg = "D",
	  .at = OPTS_AT(struct args, stale_after_ns),
	  .help = "silence after which a node is stale (default 3 x interval)" },
	{ .name = "hwdb-extra", .type = OPT_LIST, .arg = "FILE", .at = OPTS_AT(struct args, extras),
	  .help = "more instance types, in hwdb's source format (repeatable)" },
	{ .name = "workers", .type = OPT_UINT, .arg = "N", .min = 1, .max = 1024,
	  .at = OPTS_AT(struct args, workers), .help = "threads running handlers (default 16)" },
	{ .name = "max-plans", .type = OPT_UINT, .arg = "N", .min = 1, .max = 1024,
	  .at = OPTS_AT(struct args, max_plans),
	  .help = "Plan calls running at once; more are refused with\n"
		  "RESOURCE_EXHAUSTED (default 4, at most half the workers)" },
	{ .name = "call-timeout", .type = OPT_DURATION, .arg = "D",
	  .at = OPTS_AT(struct args, call_timeout_ns),
	  .help = "longest a call may take, whatever its deadline (default 60s)" },
	{ .name = "log-level", .type = OPT_FUNC, .arg = "L", .set = set_log_level,
	  .help = "debug, info (default), warn, error" },
	{ .name = "version", .type = OPT_FLAG, .at = OPTS_AT(struct args, version),
	  .help = "print the version" },
	{ 0 }
};

static const struct opts_cmd coord_cmd = {
	.prog = "dratopo-coordinator",
	.synopsis = "dratopo-coordinator [--listen ADDR] [--db FILE] [--http ADDR]\n"
		    "                           [--tls-cert F --tls-key F --tls-ca F | --insecure]\n"
		    "                           [options]",
	.about = "The cluster's coordinator: agents report their nodes' GPU/EFA topology over gRPC\n"
		 "(mTLS); it re-verifies each report against hwdb, learns types hwdb lacks, keeps\n"
		 "drifted and silent nodes out of planning, and answers `dratopo nodes|types|\n"
		 "hwdb show|plan --coordinator`.",
	.opts = coord_opts,
	.epilog = "Exit codes: 0 stopped by SIGTERM/SIGINT, 1 start-up failure, 2 usage error.",
};

/* Half the workers, 1 to COORD_DEFAULT_MAX_PLANS: a burst of plans
 * leaves threads for the agents' reports. */
static unsigned default_max_plans(uint64_t workers)
{
	uint64_t n = workers / 2;

	return n < 1 ? 1 : n > COORD_DEFAULT_MAX_PLANS ? COORD_DEFAULT_MAX_PLANS : (unsigned)n;
}

/* false to run; true and *rc when the process ends here. */
static bool parse_args(int argc, char **argv, struct args *a, int *rc)
{
	struct dt_err err = { 0 };

	*a = (struct args){ .listen = DEFAULT_LISTEN, .db = DEFAULT_DB,
			    .learn_quorum = REC_DEFAULT_LEARN_QUORUM, .workers = DEFAULT_WORKERS,
			    .interval_ns = DEFAULT_INTERVAL_NS };
	if (opts_parse(&coord_cmd, argc, argv, a, rc))
		return true;
	if (a->version) {
		printf("dratopo-coordinator %s\n", DRATOPO_VERSION);
		return true;
	}
	if (rpc_tls_check(&a->tls, &err))
		*rc = opts_usage_error(&coord_cmd, "%s (mTLS needs --tls-cert, --tls-key and "
				       "--tls-ca; plaintext needs --insecure)", err.msg);
	else if (a->max_plans && a->max_plans >= a->workers)
		*rc = opts_usage_error(&coord_cmd, "--max-plans must be below --workers (reports "
				       "need a thread too)");
	if (*rc)
		return true;
	if (!a->stale_after_ns)
		a->stale_after_ns = 3 * a->interval_ns;
	if (!a->max_plans)
		a->max_plans = default_max_plans(a->workers);
	return false;
}

/* gRPC's own log lines, as events of ours; a refused TLS handshake as its
 * own event with the reason and what it usually means. */
static void grpc_log(const char *severity, const char *file, int line, const char *message)
{
	struct rpc_tls_refusal r;
	struct obs_ev ev;

	if (rpc_tls_refusal_parse(message, &r)) {
		obs_ev_begin(&ev, OBS_WARN, "tls_handshake_failed");  /* gRPC names no peer */
		obs_ev_str(&ev, "reason", r.reason);
		if (r.hint)
			obs_ev_str(&ev, "hint", r.hint);
		obs_ev_end(&ev);
		return;
	}
	obs_logf(OBS_WARN, "grpc", "message", "%s: %s (%s:%d)", severity, message, file, line);
}

static bool ready(void *arg, char *why, size_t whylen)
{
	struct coord *c = arg;
	struct dt_err err = { 0 };
	bool stale;

	pthread_rwlock_rdlock(&c->fleet_lock);
	stale = c->fleet_stale;
	pthread_rwlock_unlock(&c->fleet_lock);
	if (stale) {
		snprintf(why, whylen, "the fleet could not be read back from the store");
		return false;
	}
	if (store_ready(c->store, &err)) {
		snprintf(why, whylen, "store: %s", err.msg);
		return false;
	}
	return true;
}

static void log_start(const struct args *a, struct coord *c, struct rpc_server *srv,
		      struct obs_http *http)
{
	struct rec_type_list tl = { 0 };
	struct obs_ev ev;
	size_t nodes = 0;
	char buf[32];

	if (!rec_fleet_types(c->fleet, coord_now_ns(), &tl, NULL))
		for (size_t i = 0; i < tl.n; i++)
			nodes += tl.types[i].nodes;
	obs_ev_begin(&ev, OBS_INFO, "start");
	obs_ev_str(&ev, "version", DRATOPO_VERSION);
	obs_ev_str(&ev, "listen", a->listen);
	obs_ev_int(&ev, "grpc_port", rpc_server_port(srv));
	if (http)
		obs_ev_int(&ev, "http_port", obs_http_port(http));
	obs_ev_str(&ev, "db", store_location(c->store));
	obs_ev_str(&ev, "tls", a->tls.insecure ? "insecure" : "mtls");
	obs_ev_int(&ev, "nodes", (long long)nodes);
	obs_ev_int(&ev, "types", (long long)tl.n);
	obs_ev_int(&ev, "learn_quorum", a->learn_quorum);
	obs_ev_str(&ev, "stale_after", duration_format(a->stale_after_ns, buf, sizeof(buf)));
	obs_ev_end(&ev);
	rec_type_list_free(&tl);
}

/* Wait for signals; returns on SIGTERM or SIGINT. */
static void signal_loop(const sigset_t *set, struct rpc_server *srv, bool insecure)
{
	for (;;) {
		siginfo_t si;
		struct dt_err err = { 0 };
		int sig = sigwaitinfo(set, &si);

		if (sig == SIGTERM || sig == SIGINT) {
			obs_log(OBS_INFO, "shutdown", "signal", strsignal(sig), NULL);
			return;
		}
		if (sig != SIGHUP)
			continue;
		if (insecure)
			obs_log(OBS_INFO, "tls_reload", "result", "skipped: --insecure", NULL);
		else if (rpc_server_reload_tls(srv, &err))
			obs_log(OBS_ERROR, "tls_reload", "result", "failed, old files kept", "error",
				err.msg, NULL);
		else
			obs_log(OBS_INFO, "tls_reload", "result", "ok", NULL);
	}
}

int main(int argc, char **argv)
{
	struct args a;
	struct coord c = { 0 };
	struct rpc_server *srv = NULL;
	struct obs_http *http = NULL;
	struct dt_err err = { 0 };
	sigset_t sigs;
	int rc;

	if (parse_args(argc, argv, &a, &rc)) {
		opts_free(&coord_cmd, &a);
		return rc;
	}
	/* Before any thread exists, so every thread inherits the mask. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);
	rpc_set_log(grpc_log);

	/* Into the process's catalogue, before any thread: reports are
	 * verified against it, and every plan's catalogue starts from it. */
	for (size_t i = 0; !rc && i < a.extras.n; i++)
		if ((rc = hwdb_load_extra(a.extras.v[i], &err)))
			dt_err_prefix(&err, "--hwdb-extra: ");
	if (!rc) {
		struct coord_opts co = { .db = a.db, .insecure = a.tls.insecure,
					 .max_plans = (unsigned)a.max_plans,
					 .rec = { (unsigned)a.learn_quorum, a.stale_after_ns } };

		rc = coord_open(&c, &co, &err);
	}
	if (!rc && a.http)
		rc = coord_http_start(&c, a.http, ready, &http, &err);
	if (!rc) {
		struct rpc_server_opts o = {
			.listen = a.listen, .tls = a.tls, .workers = (unsigned)a.workers,
			.max_deadline_ms = (unsigned)(a.call_timeout_ns / 1000000),
			.methods = coord_methods, .n_methods = coord_n_methods, .user = &c,
			.observe = coord_observe_rpc, .observe_user = &c,
		};

		rc = rpc_server_start(&o, &srv, &err);
	}
	if (rc) {
		obs_log(OBS_ERROR, "start_failed", "error", err.msg, NULL);
		fprintf(stderr, "dratopo-coordinator: %s\n", err.msg);
	} else {
		log_start(&a, &c, srv, http);
		signal_loop(&sigs, srv, a.tls.insecure);
	}
	/* Drain the calls in flight (their reports commit), then the rest. */
	rpc_server_shutdown(srv, DRAIN_MS);
	obs_http_stop(http);
	coord_close(&c);
	hwdb_reset();
	opts_free(&coord_cmd, &a);
	if (!rc)
		obs_log(OBS_INFO, "stopped", NULL);
	return rc ? 1 : 0;
}
