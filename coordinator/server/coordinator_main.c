/* coordinator_main.c - dratopo-coordinator: the process around the
 * handlers. Options, start-up (store, restore, the cluster, HTTP, gRPC),
 * and the signal loop: SIGTERM/SIGINT stop accepting, drain the calls in
 * flight, hand the Lease over, flush the store and exit 0; SIGHUP re-reads
 * the TLS files.
 *
 * Signals are blocked in every thread (they are blocked before any thread
 * starts) and taken synchronously by the main thread with sigwaitinfo, so no
 * handler runs in signal context. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord.h"
#include "ctrl.h"
#include "duration.h"
#include "hwdb.h"
#include "kube_leader.h"
#include "obs_http.h"
#include "obs_log.h"
#include "remedy.h"
#include "rpc_tlsdiag.h"

#define EXIT_USAGE 2
#define DEFAULT_LISTEN "0.0.0.0:7443"
#define DEFAULT_DB "/var/lib/dratopo/coordinator.db"
#define DEFAULT_INTERVAL_NS (30 * 1000000000LL)
#define DEFAULT_WORKERS 16
#define DRAIN_MS 5000

static const char usage_text[] =
	"usage: dratopo-coordinator [options]\n"
	"\n"
	"The cluster's coordinator: agents report their nodes' GPU/EFA topology over gRPC\n"
	"(mTLS); it re-verifies each report against hwdb, learns types hwdb lacks, keeps\n"
	"drifted and silent nodes out of planning, and answers `dratopo nodes|types|\n"
	"hwdb show|plan --coordinator`.\n"
	"\n"
	"Options:\n"
	"  --listen ADDR          gRPC address (default " DEFAULT_LISTEN "; port 0 picks one)\n"
	"  --db FILE              SQLite database (default " DEFAULT_DB ")\n"
	"  --http ADDR            serve the status pages (/), /metrics, /healthz and /readyz\n"
	"                         on ADDR, read-only (default: off)\n"
	"  --tls-cert FILE        server certificate (PEM)\n"
	"  --tls-key FILE         its private key\n"
	"  --tls-ca FILE          CA bundle that client certificates must chain to\n"
	"  --insecure             plaintext, no client certificates (tests, never production)\n"
	"  --learn-quorum N       agreeing nodes that make a learned entry (default 2)\n"
	"  --interval D           the agents' reporting interval (default 30s)\n"
	"  --stale-after D        silence after which a node is stale (default 3 x interval)\n"
	"  --hwdb-extra FILE      more instance types, in hwdb's source format\n"
	"  --workers N            threads running handlers (default 16)\n"
	"  --max-plans N          Plan calls running at once; more are refused with\n"
	"                         RESOURCE_EXHAUSTED (default 4, at most half the workers)\n"
	"  --call-timeout D       longest a call may take, whatever its deadline (default 60s)\n"
	"  --kubeconfig FILE      run in this cluster: the fleet kept in it (NodeTopology\n"
	"                         and LearnedType objects) and the controller that writes\n"
	"                         NodeClaims for pending pods; in a pod the service\n"
	"                         account is used, no flag needed\n"
	"  --context NAME         the kubeconfig's context (default: its current-context)\n"
	"  --kube on|off          the cluster: on needs one, off never uses one\n"
	"                         (default: on with --kubeconfig or in a pod)\n"
	"  --dry-run              plan the cluster's pending pods but write nothing: each\n"
	"                         write is a log line (event=kube_dry_run) and a metric\n"
	"  --leader-elect[=BOOL]  replicas elect a leader over a Lease; only it serves and\n"
	"                         writes, and the fleet lives in the cluster, not in --db\n"
	"                         (default: true in a pod, false elsewhere)\n"
	"  --leader-elect-lease-duration D   how long a Lease not renewed holds (default 15s)\n"
	"  --leader-elect-renew-deadline D   a leader that cannot renew within D stops\n"
	"                                    writing and leading (default 10s)\n"
	"  --leader-elect-retry-period D     between tries to renew or acquire (default 2s)\n"
	"  --leader-elect-resource-name N    the Lease (default dratopo-coordinator)\n"
	"  --leader-elect-resource-namespace NS  its namespace (default: the pod's own,\n"
	"                         or the kubeconfig context's)\n"
	"  --log-level L          debug, info (default), warn, error\n"
	"  -h, --help             this help\n"
	"  --version              print the version\n"
	"\n"
	"Exit codes: 0 stopped by SIGTERM/SIGINT, 1 start-up failure, 2 usage error.\n";

struct args {
	const char *listen, *db, *http, *hwdb_extra;
	const char *kubeconfig, *context, *kube;        /* kube: "on", "off" or NULL (auto) */
	int leader_elect;                               /* -1 unset, 0, 1 */
	bool db_given;
	struct coord_cluster_opts cluster;
	bool dry_run;
	struct rpc_tls tls;
	unsigned learn_quorum, workers, max_plans;
	int64_t interval_ns, stale_after_ns, call_timeout_ns;
};

static int usage_error(const char *what, const char *arg)
{
	fprintf(stderr, "dratopo-coordinator: %s%s%s\n\n%s", what, arg ? " " : "", arg ? arg : "",
		usage_text);
	return EXIT_USAGE;
}

static int parse_count(const char *opt, const char *v, unsigned max, unsigned *out)
{
	char *end;
	unsigned long n = strtoul(v, &end, 10);

	if (!*v || *end || n < 1 || n > max) {
		fprintf(stderr, "dratopo-coordinator: %s: '%s' is not a count from 1 to %u\n", opt, v,
			max);
		return EXIT_USAGE;
	}
	*out = (unsigned)n;
	return 0;
}

static int parse_dur(const char *opt, const char *v, int64_t *out)
{
	struct dt_err err = { 0 };

	if (duration_parse(v, out, &err) || !*out) {
		fprintf(stderr, "dratopo-coordinator: %s: %s\n", opt,
			err.msg[0] ? err.msg : "must not be 0");
		return EXIT_USAGE;
	}
	return 0;
}

static int parse_bool(const char *opt, const char *v, int *out)
{
	if (!v || !strcmp(v, "true")) {
		*out = 1;
	} else if (!strcmp(v, "false")) {
		*out = 0;
	} else {
		fprintf(stderr, "dratopo-coordinator: %s: '%s' is neither true nor false\n", opt, v);
		return EXIT_USAGE;
	}
	return 0;
}

static int parse_ms(const char *opt, const char *v, int64_t *out)
{
	int64_t ns;
	int rc = parse_dur(opt, v, &ns);

	*out = ns / 1000000;
	return rc;
}

static bool in_pod(void)
{
	const char *host = getenv("KUBERNETES_SERVICE_HOST");

	return host && host[0];
}

/* Whether the cluster is used: --kube says, else a kubeconfig or a pod. */
static bool kube_wanted(const struct args *a)
{
	if (a->kube)
		return !strcmp(a->kube, "on");
	return a->kubeconfig || in_pod();
}

/* Leader election: on by default in a pod, only with a cluster, and with
 * the fleet in the cluster rather than in a database file. */
static int cluster_args(struct args *a)
{
	struct kube_leader_opts lo = { .name = "x", .identity = "x" };
	struct dt_err err = { 0 };

	a->cluster.kubeconfig = a->kubeconfig;
	a->cluster.context = a->context;
	a->cluster.leader_elect = a->leader_elect < 0 ? in_pod() && kube_wanted(a)
						      : a->leader_elect == 1;
	if (!a->cluster.leader_elect)
		return 0;
	if (!kube_wanted(a))
		return usage_error("--leader-elect needs a cluster:", "--kubeconfig FILE, or run in a pod");
	if (a->db_given)
		return usage_error("--db: with --leader-elect the fleet lives in the cluster "
				   "(NodeTopology objects); a database file is for a coordinator "
				   "without leader election", NULL);
	a->db = "memory:";
	lo.lease_duration_ms = a->cluster.lease_duration_ms;
	lo.renew_deadline_ms = a->cluster.renew_deadline_ms;
	lo.retry_period_ms = a->cluster.retry_period_ms;
	return kube_leader_validate(&lo, &err) ? usage_error(err.msg, NULL) : 0;
}

/* Half the workers, 1 to COORD_DEFAULT_MAX_PLANS: a burst of plans
 * leaves threads for the agents' reports. */
static unsigned default_max_plans(unsigned workers)
{
	unsigned n = workers / 2;

	return n < 1 ? 1 : n > COORD_DEFAULT_MAX_PLANS ? COORD_DEFAULT_MAX_PLANS : n;
}

/* 0 to run, -1 after --help/--version, else the exit code. */
static int parse_args(int argc, char **argv, struct args *a)
{
	enum { O_LISTEN = 256, O_DB, O_HTTP, O_CERT, O_KEY, O_CA, O_INSECURE, O_QUORUM,
	       O_INTERVAL, O_STALE, O_EXTRA, O_WORKERS, O_LOG, O_VERSION, O_CALL,
	       O_PLANS, O_KUBECONFIG, O_CONTEXT, O_KUBE, O_DRY_RUN, O_ELECT, O_LEASE_DURATION,
	       O_RENEW_DEADLINE, O_RETRY_PERIOD, O_LEASE_NAME, O_LEASE_NS };
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, O_LISTEN },
		{ "db", required_argument, NULL, O_DB },
		{ "http", required_argument, NULL, O_HTTP },
		{ "tls-cert", required_argument, NULL, O_CERT },
		{ "tls-key", required_argument, NULL, O_KEY },
		{ "tls-ca", required_argument, NULL, O_CA },
		{ "insecure", no_argument, NULL, O_INSECURE },
		{ "learn-quorum", required_argument, NULL, O_QUORUM },
		{ "interval", required_argument, NULL, O_INTERVAL },
		{ "stale-after", required_argument, NULL, O_STALE },
		{ "hwdb-extra", required_argument, NULL, O_EXTRA },
		{ "workers", required_argument, NULL, O_WORKERS },
		{ "max-plans", required_argument, NULL, O_PLANS },
		{ "call-timeout", required_argument, NULL, O_CALL },
		{ "log-level", required_argument, NULL, O_LOG },
		{ "kubeconfig", required_argument, NULL, O_KUBECONFIG },
		{ "context", required_argument, NULL, O_CONTEXT },
		{ "kube", required_argument, NULL, O_KUBE },
		{ "dry-run", no_argument, NULL, O_DRY_RUN },
		{ "leader-elect", optional_argument, NULL, O_ELECT },
		{ "leader-elect-lease-duration", required_argument, NULL, O_LEASE_DURATION },
		{ "leader-elect-renew-deadline", required_argument, NULL, O_RENEW_DEADLINE },
		{ "leader-elect-retry-period", required_argument, NULL, O_RETRY_PERIOD },
		{ "leader-elect-resource-name", required_argument, NULL, O_LEASE_NAME },
		{ "leader-elect-resource-namespace", required_argument, NULL, O_LEASE_NS },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, O_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	struct dt_err err = { 0 };
	enum obs_level level;
	int c, rc = 0;

	*a = (struct args){ .listen = DEFAULT_LISTEN, .db = DEFAULT_DB, .leader_elect = -1,
			    .learn_quorum = REC_DEFAULT_LEARN_QUORUM, .workers = DEFAULT_WORKERS,
			    .interval_ns = DEFAULT_INTERVAL_NS };
	opterr = 0;
	while (!rc && (c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case O_LISTEN: a->listen = optarg; break;
		case O_DB: a->db = optarg; a->db_given = true; break;
		case O_HTTP: a->http = optarg; break;
		case O_CERT: a->tls.cert = optarg; break;
		case O_KEY: a->tls.key = optarg; break;
		case O_CA: a->tls.ca = optarg; break;
		case O_INSECURE: a->tls.insecure = true; break;
		case O_EXTRA: a->hwdb_extra = optarg; break;
		case O_KUBECONFIG: a->kubeconfig = optarg; break;
		case O_CONTEXT: a->context = optarg; break;
		case O_DRY_RUN: a->dry_run = true; break;
		case O_KUBE:
			if (strcmp(optarg, "on") && strcmp(optarg, "off"))
				return usage_error("--kube: 'on' or 'off', not", optarg);
			a->kube = optarg;
			break;
		case O_ELECT: rc = parse_bool("--leader-elect", optarg, &a->leader_elect); break;
		case O_LEASE_DURATION:
			rc = parse_ms("--leader-elect-lease-duration", optarg,
				      &a->cluster.lease_duration_ms);
			break;
		case O_RENEW_DEADLINE:
			rc = parse_ms("--leader-elect-renew-deadline", optarg,
				      &a->cluster.renew_deadline_ms);
			break;
		case O_RETRY_PERIOD:
			rc = parse_ms("--leader-elect-retry-period", optarg,
				      &a->cluster.retry_period_ms);
			break;
		case O_LEASE_NAME: a->cluster.lease_name = optarg; break;
		case O_LEASE_NS: a->cluster.lease_namespace = optarg; break;
		case O_QUORUM: rc = parse_count("--learn-quorum", optarg, 1000, &a->learn_quorum); break;
		case O_WORKERS: rc = parse_count("--workers", optarg, 1024, &a->workers); break;
		case O_PLANS: rc = parse_count("--max-plans", optarg, 1024, &a->max_plans); break;
		case O_INTERVAL: rc = parse_dur("--interval", optarg, &a->interval_ns); break;
		case O_STALE: rc = parse_dur("--stale-after", optarg, &a->stale_after_ns); break;
		case O_CALL: rc = parse_dur("--call-timeout", optarg, &a->call_timeout_ns); break;
		case O_LOG:
			if (obs_log_parse_level(optarg, &level, &err))
				return usage_error(err.msg, NULL);
			obs_log_set_level(level);
			break;
		case 'h':
			fputs(usage_text, stdout);
			return -1;
		case O_VERSION:
			printf("dratopo-coordinator %s\n", DRATOPO_VERSION);
			return -1;
		case ':':
			return usage_error("option needs a value:", argv[optind - 1]);
		default:
			return usage_error("unknown option", argv[optind - 1]);
		}
	}
	if (rc)
		return rc;
	if (optind < argc)
		return usage_error("unexpected argument", argv[optind]);
	if (rpc_tls_check(&a->tls, &err))
		return usage_error(err.msg, "(mTLS needs --tls-cert, --tls-key and --tls-ca; "
				   "plaintext needs --insecure)");
	if (!a->stale_after_ns)
		a->stale_after_ns = 3 * a->interval_ns;
	if (a->max_plans >= a->workers)
		return usage_error("--max-plans must be below --workers", "(reports need a thread too)");
	if (!a->max_plans)
		a->max_plans = default_max_plans(a->workers);
	return cluster_args(a);
}

/* A node the fleet knows and may not plan on (drift, conflict, silence)
 * stays out of the controller's plans; Nodes no agent reports are planned
 * as the API server shows them. */
static bool node_excluded(void *arg, const char *node)
{
	struct coord *c = arg;
	int plannable = rec_node_plannable(coord_fleet_get(c), node, coord_now_ns(), NULL, NULL);

	coord_fleet_put(c);
	return plannable == 0;
}

/* The fleet's remedies for the controller to make real in the cluster. */
static int fleet_remedies(void *arg, struct strbuf *yaml, struct dt_err *err)
{
	struct coord_remedies r;
	int rc = coord_remedies(arg, NULL, &r, err);

	if (rc)
		return rc;
	sb_append(yaml, r.yaml.buf ? r.yaml.buf : "", r.yaml.len);
	/* an unfit node: the taint to add, as a Node the controller merges
	 * into the node's own taints (never applied whole) */
	for (size_t i = 0; i < r.n_unfit; i++)
		sb_printf(yaml, "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: \"%s\"\nspec:\n"
			  "  taints:\n  - {key: " REM_TAINT_KEY ", value: " REM_NODE_TAINT_VALUE
			  ", effect: NoSchedule}\n", r.unfit[i]);
	coord_remedies_free(&r);
	return sb_error(yaml) ? dt_err_set(err, -ENOMEM, "out of memory") : 0;
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
	return coord_cluster_ready(c, why, whylen);
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
	struct ctrl *kube = NULL;
	struct dt_err err = { 0 };
	sigset_t sigs;
	int rc = parse_args(argc, argv, &a);

	if (rc)
		return rc < 0 ? 0 : rc;
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
	if (a.hwdb_extra && (rc = hwdb_load_extra(a.hwdb_extra, &err)))
		dt_err_prefix(&err, "--hwdb-extra: ");
	if (!rc) {
		struct coord_opts co = { .db = a.db, .insecure = a.tls.insecure,
					 .max_plans = a.max_plans,
					 .rec = { a.learn_quorum, a.stale_after_ns } };

		rc = coord_open(&c, &co, &err);
	}
	/* The fleet in the cluster (a dry run without election leaves it out:
	 * it writes nothing); the controller's writes pass the Lease's fence. */
	if (!rc && kube_wanted(&a) && (a.cluster.leader_elect || !a.dry_run) &&
	    (rc = coord_cluster_start(&c, &a.cluster, &err)))
		dt_err_prefix(&err, "kube: ");
	if (!rc && kube_wanted(&a)) {
		struct ctrl_opts ko = { .kubeconfig = a.kubeconfig, .context = a.context,
					.dry_run = a.dry_run, .registry = c.m.reg,
					.node_excluded = node_excluded, .node_arg = &c,
					.remedies = fleet_remedies, .remedies_arg = &c,
					.leader = coord_cluster_leader(&c),
					.leading = coord_leading, .leading_arg = &c };

		if ((rc = ctrl_start(&ko, &kube, &err)))
			dt_err_prefix(&err, "kube: ");
	}
	if (!rc && a.http)
		rc = coord_http_start(&c, a.http, ready, &http, &err);
	if (!rc) {
		struct rpc_server_opts o = {
			.listen = a.listen, .tls = a.tls, .workers = a.workers,
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
	/* Drain the calls in flight (their reports commit), hand the Lease
	 * over (the controller's writes in flight finish first), then the
	 * rest. */
	rpc_server_shutdown(srv, DRAIN_MS);
	coord_cluster_release(&c);
	ctrl_stop(kube);
	obs_http_stop(http);
	coord_cluster_stop(&c);
	coord_close(&c);
	hwdb_reset();
	if (!rc)
		obs_log(OBS_INFO, "stopped", NULL);
	return rc ? 1 : 0;
}
