/* coordinator_main.c - dratopo-coordinator: the process around the
 * handlers. Options, start-up (store, restore, the cluster, HTTP, gRPC),
 * and the signal loop: SIGTERM/SIGINT stop accepting, drain the calls in
 * flight, hand the Lease over, flush the store and exit 0; SIGHUP re-reads
 * the TLS files, which are also watched (certwatch: reloaded when they
 * change, their validity in /readyz).
 *
 * Signals are blocked in every thread (they are blocked before any thread
 * starts) and taken synchronously by the main thread with sigwaitinfo, so no
 * handler runs in signal context. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "certwatch.h"
#include "coord.h"
#include "ctrl.h"
#include "duration.h"
#include "hwdb.h"
#include "kube_leader.h"
#include "obs_http.h"
#include "obs_log.h"
#include "opts.h"
#include "page.h"
#include "remedy.h"
#include "rpc_tlsdiag.h"

#define DEFAULT_LISTEN "0.0.0.0:7443"
#define DEFAULT_DB "/var/lib/dratopo/coordinator.db"
#define DEFAULT_INTERVAL_NS (30 * 1000000000LL)
#define DEFAULT_WORKERS 16
#define DRAIN_MS 5000

struct args {
	const char *listen, *db, *http;
	struct opts_list extras;        /* --hwdb-extra */
	const char *kubeconfig, *context;
	int kube;                       /* enum kube_mode */
	bool dry_run, version;
	int leader_elect;               /* -1 unset (true in a pod), 0, 1 */
	int64_t lease_duration_ns, renew_deadline_ns, retry_period_ns;
	struct coord_cluster_opts cluster;
	struct rpc_tls tls;
	uint64_t learn_quorum, workers, max_plans;
	int64_t interval_ns, stale_after_ns, call_timeout_ns, forget_after_ns;
};

/* --kube: unset (on with a kubeconfig or in a pod), on, off. */
enum kube_mode { KUBE_AUTO, KUBE_ON, KUBE_OFF };

static int set_kube(void *dst, const char *v, struct dt_err *err)
{
	struct args *a = dst;

	if (!strcmp(v, "on"))
		a->kube = KUBE_ON;
	else if (!strcmp(v, "off"))
		a->kube = KUBE_OFF;
	else
		return dt_err_set(err, -EINVAL, "unknown value '%s' (on or off)", v);
	return 0;
}

#define ARG_AT(f) OPTS_AT(struct args, f)

static const struct opt coord_opts[] = {
	{ .name = "listen", .type = OPT_STR, .arg = "ADDR", .at = ARG_AT(listen),
	  .help = "gRPC address (default " DEFAULT_LISTEN "; port 0 picks one)" },
	{ .name = "db", .type = OPT_STR, .arg = "FILE", .at = ARG_AT(db),
	  .help = "SQLite database (default " DEFAULT_DB ";\n"
		  "none with --leader-elect: the fleet lives in the cluster)" },
	{ .name = "http", .type = OPT_STR, .arg = "ADDR", .at = ARG_AT(http),
	  .help = "serve the status pages (/), /metrics, /healthz and /readyz\n"
		  "on ADDR, read-only (default: off)" },
	{ .name = "tls-cert", .type = OPT_STR, .arg = "FILE", .at = ARG_AT(tls.cert),
	  .help = "server certificate (PEM)" },
	{ .name = "tls-key", .type = OPT_STR, .arg = "FILE", .at = ARG_AT(tls.key),
	  .help = "its private key" },
	{ .name = "tls-ca", .type = OPT_STR, .arg = "FILE", .at = ARG_AT(tls.ca),
	  .help = "CA bundle that client certificates must chain to\n"
		  "(the three files are watched and reloaded when they change)" },
	{ .name = "insecure", .type = OPT_FLAG, .at = ARG_AT(tls.insecure),
	  .help = "plaintext, no client certificates (tests, never production)" },
	{ .name = "learn-quorum", .type = OPT_UINT, .arg = "N", .min = 1, .max = 1000,
	  .at = ARG_AT(learn_quorum), .help = "agreeing nodes that make a learned entry (default 2)" },
	{ .name = "interval", .type = OPT_DURATION, .arg = "D", .at = ARG_AT(interval_ns),
	  .help = "the agents' reporting interval (default 30s)" },
	{ .name = "stale-after", .type = OPT_DURATION, .arg = "D", .at = ARG_AT(stale_after_ns),
	  .help = "silence after which a node is stale (default 3 x interval;\n"
		  "not shorter than the interval)" },
	{ .name = "forget-after", .type = OPT_DURATION, .arg = "D", .at = ARG_AT(forget_after_ns),
	  .help = "forget nodes silent that long (default: never; at least\n--stale-after)" },
	{ .name = "hwdb-extra", .type = OPT_LIST, .arg = "FILE", .at = ARG_AT(extras),
	  .help = "more instance types, in hwdb's source format (repeatable)" },
	{ .name = "workers", .type = OPT_UINT, .arg = "N", .min = 1, .max = 1024,
	  .at = ARG_AT(workers), .help = "threads running handlers (default 16)" },
	{ .name = "max-plans", .type = OPT_UINT, .arg = "N", .min = 1, .max = 1024,
	  .at = ARG_AT(max_plans),
	  .help = "Plan calls running at once; more are refused with\n"
		  "RESOURCE_EXHAUSTED (default 4, at most half the workers)" },
	{ .name = "call-timeout", .type = OPT_DURATION, .arg = "D", .at = ARG_AT(call_timeout_ns),
	  .help = "longest a call may take, whatever its deadline (default 60s)" },
	{ .name = "kubeconfig", .type = OPT_STR, .arg = "FILE", .at = ARG_AT(kubeconfig),
	  .help = "run in this cluster: the fleet kept in it (NodeTopology and\n"
		  "LearnedType objects) and the controller that writes\n"
		  "NodeClaims for pending pods; in a pod the service account\n"
		  "is used, no flag needed" },
	{ .name = "context", .type = OPT_STR, .arg = "NAME", .at = ARG_AT(context),
	  .help = "the kubeconfig's context (default: its current-context)" },
	{ .name = "kube", .type = OPT_FUNC, .arg = "on|off", .set = set_kube,
	  .help = "the cluster: on needs one, off never uses one\n"
		  "(default: on with --kubeconfig or in a pod)" },
	{ .name = "dry-run", .type = OPT_FLAG, .at = ARG_AT(dry_run),
	  .help = "plan the cluster's pending pods but write nothing: each\n"
		  "write is a log line (event=kube_dry_run) and a metric" },
	{ .name = "leader-elect", .type = OPT_BOOL, .at = ARG_AT(leader_elect),
	  .help = "replicas elect a leader over a Lease; only it serves and\n"
		  "writes (default: true in a pod, false elsewhere)" },
	{ .name = "leader-elect-lease-duration", .type = OPT_DURATION, .arg = "D",
	  .at = ARG_AT(lease_duration_ns),
	  .help = "how long a Lease not renewed holds (default 15s)" },
	{ .name = "leader-elect-renew-deadline", .type = OPT_DURATION, .arg = "D",
	  .at = ARG_AT(renew_deadline_ns),
	  .help = "a leader that cannot renew within D stops writing\n"
		  "and leading (default 10s)" },
	{ .name = "leader-elect-retry-period", .type = OPT_DURATION, .arg = "D",
	  .at = ARG_AT(retry_period_ns),
	  .help = "between tries to renew or acquire (default 2s)" },
	{ .name = "leader-elect-resource-name", .type = OPT_STR, .arg = "NAME",
	  .at = ARG_AT(cluster.lease_name), .help = "the Lease (default dratopo-coordinator)" },
	{ .name = "leader-elect-resource-namespace", .type = OPT_STR, .arg = "NS",
	  .at = ARG_AT(cluster.lease_namespace),
	  .help = "its namespace (default: the pod's own, or the\n"
		  "kubeconfig context's)" },
	OBS_LOG_LEVEL_OPT,
	{ .name = "version", .type = OPT_FLAG, .at = ARG_AT(version), .help = "print the version" },
	{ 0 }
};

static const struct opts_cmd coord_cmd = {
	.prog = "dratopo-coordinator",
	.synopsis = "dratopo-coordinator [--listen ADDR] [--db FILE] [--http ADDR]\n"
		    "                           [--tls-cert F --tls-key F --tls-ca F | --insecure]\n"
		    "                           [--kubeconfig FILE] [options]",
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

static bool in_pod(void)
{
	const char *host = getenv("KUBERNETES_SERVICE_HOST");

	return host && host[0];
}

/* Whether the cluster is used: --kube says, else a kubeconfig or a pod. */
static bool kube_wanted(const struct args *a)
{
	if (a->kube != KUBE_AUTO)
		return a->kube == KUBE_ON;
	return a->kubeconfig || in_pod();
}

/* Leader election: on by default in a pod, only with a cluster, and with
 * the fleet in the cluster rather than in a database file. 0 or the usage
 * error's exit code. */
static int cluster_args(struct args *a)
{
	struct kube_leader_opts lo = { .name = "x", .identity = "x" };
	struct dt_err err = { 0 };

	a->cluster.kubeconfig = a->kubeconfig;
	a->cluster.context = a->context;
	a->cluster.leader_elect = a->leader_elect < 0 ? in_pod() && kube_wanted(a)
						      : a->leader_elect == 1;
	a->cluster.lease_duration_ms = a->lease_duration_ns / 1000000;
	a->cluster.renew_deadline_ms = a->renew_deadline_ns / 1000000;
	a->cluster.retry_period_ms = a->retry_period_ns / 1000000;
	if (!a->cluster.leader_elect) {
		if (!a->db)
			a->db = DEFAULT_DB;
		return 0;
	}
	if (!kube_wanted(a))
		return opts_usage_error(&coord_cmd, "--leader-elect needs a cluster: --kubeconfig "
					"FILE, or run in a pod");
	if (a->db)
		return opts_usage_error(&coord_cmd, "--db: with --leader-elect the fleet lives in "
					"the cluster (NodeTopology objects); a database file is "
					"for a coordinator without leader election");
	a->db = "memory:";
	lo.lease_duration_ms = a->cluster.lease_duration_ms;
	lo.renew_deadline_ms = a->cluster.renew_deadline_ms;
	lo.retry_period_ms = a->cluster.retry_period_ms;
	if (kube_leader_validate(&lo, &err))
		return opts_usage_error(&coord_cmd, "%s", err.msg);
	return 0;
}

/* false to run; true and *rc when the process ends here. */
static bool parse_args(int argc, char **argv, struct args *a, int *rc)
{
	struct dt_err err = { 0 };

	*a = (struct args){ .listen = DEFAULT_LISTEN, .leader_elect = -1,
			    .learn_quorum = REC_DEFAULT_LEARN_QUORUM, .workers = DEFAULT_WORKERS,
			    .interval_ns = DEFAULT_INTERVAL_NS };
	if (opts_parse(&coord_cmd, argc, argv, a, rc))
		return true;
	if (a->version) {
		printf("dratopo-coordinator %s\n", DRATOPO_VERSION);
		return true;
	}
	if (rpc_listen_check(a->listen, &err))
		*rc = opts_usage_error(&coord_cmd, "--listen: %s", err.msg);
	else if (rpc_tls_check(&a->tls, &err))
		*rc = opts_usage_error(&coord_cmd, "%s", err.msg);
	else if (a->stale_after_ns && a->stale_after_ns < a->interval_ns)
		*rc = opts_usage_error(&coord_cmd, "--stale-after must not be shorter than "
				       "--interval (every node would be stale between two reports)");
	/* A node is stale (out of planning) before it is forgotten. */
	else if (a->forget_after_ns &&
		 a->forget_after_ns < (a->stale_after_ns ? a->stale_after_ns : 3 * a->interval_ns))
		*rc = opts_usage_error(&coord_cmd, "--forget-after must be at least --stale-after "
				       "(a node is stale, out of planning, before it is forgotten)");
	else if (a->max_plans && a->max_plans >= a->workers)
		*rc = opts_usage_error(&coord_cmd, "--max-plans must be below --workers (reports "
				       "need a thread too)");
	else
		*rc = cluster_args(a);
	if (*rc)
		return true;
	if (!a->stale_after_ns)
		a->stale_after_ns = 3 * a->interval_ns;
	if (!a->max_plans)
		a->max_plans = default_max_plans(a->workers);
	return false;
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

/* A Node deleted from the cluster: its node left, the fleet forgets it
 * (a Node no agent reported is not in the fleet: nothing to say). Only
 * the leader forgets, as with the sweep: it deletes the NodeTopology,
 * from which a follower's fleet is rebuilt when it takes over. */
static void node_deleted(void *arg, const char *node)
{
	struct dt_err err = { 0 };

	if (coord_serving(arg, &err))
		return;
	if (coord_forget(arg, node, &err) && err.code != -ENOENT)
		obs_log(OBS_ERROR, "forget_failed", "node", node, "error", err.msg, NULL);
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

/* The status page's pending pods and NodeClaims: a copy of the
 * controller's view of its last plan (ctrl_inflight), on the HTTP thread. */
static int inflight_pod(void *arg, const char *ns, const char *name, const char *reason,
			int64_t since_ns)
{
	return page_inflight_add_pod(arg, ns, name, reason, since_ns);
}

static int inflight_claim(void *arg, const char *name, const char *pool, const char *type,
			  const char *state, int64_t created_ns)
{
	return page_inflight_add_claim(arg, name, pool, type, state, created_ns);
}

static int kube_inflight(void *arg, struct page_inflight *out, struct dt_err *err)
{
	struct ctrl_inflight_cb cb = { inflight_pod, inflight_claim, out };
	struct ctrl_inflight_info info;

	if (ctrl_inflight(arg, &cb, &info))
		return dt_err_set(err, -ENOMEM, "in-flight view: out of memory");
	out->watching = true;
	out->as_of_ns = info.as_of_ns;
	out->more_pods += info.more_pods;
	out->more_claims += info.more_claims;
	return 0;
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

/* What the process holds beside the coordinator's state: readiness asks
 * all of it. */
struct proc {
	struct coord c;
	struct rpc_server *srv;
	struct certwatch *certs;        /* NULL when --insecure */
	/* The controller, when it runs: /readyz waits for its first lists. Set
	 * before the HTTP server starts. */
	struct ctrl *kube;
};

static bool ready(void *arg, char *why, size_t whylen)
{
	struct proc *p = arg;
	struct coord *c = &p->c;
	struct dt_err err = { 0 };
	struct timespec now;
	bool stale;

	clock_gettime(CLOCK_REALTIME, &now);
	if (p->certs && certwatch_check(p->certs, (int64_t)now.tv_sec * 1000000000 + now.tv_nsec,
					why, whylen))
		return false;
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
	if (p->kube && !ctrl_synced(p->kube)) {
		snprintf(why, whylen, "kube: the informers have not listed the cluster yet");
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

/* Wait for signals; returns on SIGTERM or SIGINT. SIGHUP has the watcher
 * reload the TLS files now (it logs the result). */
static void signal_loop(const sigset_t *set, struct certwatch *certs)
{
	for (;;) {
		siginfo_t si;
		int sig = sigwaitinfo(set, &si);

		if (sig == SIGTERM || sig == SIGINT) {
			obs_log(OBS_INFO, "shutdown", "signal", strsignal(sig), NULL);
			return;
		}
		if (sig != SIGHUP)
			continue;
		if (certs)
			certwatch_poke(certs);
		else
			obs_log(OBS_INFO, "tls_reload", "result", "skipped: --insecure", NULL);
	}
}

static int reload_tls(void *srv, struct dt_err *err)
{
	return rpc_server_reload_tls(srv, err);
}

int main(int argc, char **argv)
{
	struct args a;
	static struct proc p;
	struct coord *c = &p.c;
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
					 .rec = { (unsigned)a.learn_quorum, a.stale_after_ns },
					 .forget_after_ns = a.forget_after_ns };

		rc = coord_open(c, &co, &err);
	}
	/* The fleet in the cluster (a dry run without election leaves it out:
	 * it writes nothing); the controller's writes pass the Lease's fence. */
	if (!rc && kube_wanted(&a) && (a.cluster.leader_elect || !a.dry_run) &&
	    (rc = coord_cluster_start(c, &a.cluster, &err)))
		dt_err_prefix(&err, "kube: ");
	if (!rc && kube_wanted(&a)) {
		struct ctrl_opts ko = { .kubeconfig = a.kubeconfig, .context = a.context,
					.dry_run = a.dry_run, .registry = c->m.reg,
					.node_excluded = node_excluded, .node_arg = c,
					.node_deleted = node_deleted, .node_deleted_arg = c,
					.remedies = fleet_remedies, .remedies_arg = c,
					.leader = coord_cluster_leader(c),
					.leading = coord_leading, .leading_arg = c };

		if ((rc = ctrl_start(&ko, &p.kube, &err)))
			dt_err_prefix(&err, "kube: ");
		else {
			struct coord_cluster_source src = { ctrl_cluster_add, p.kube };

			coord_set_inflight(c, kube_inflight, p.kube);
			coord_set_cluster_source(c, &src);     /* plans count the pods running */
		}
	}
	if (!rc) {
		struct rpc_server_opts o = {
			.listen = a.listen, .tls = a.tls, .workers = (unsigned)a.workers,
			.max_deadline_ms = (unsigned)(a.call_timeout_ns / 1000000),
			.methods = coord_methods, .n_methods = coord_n_methods, .user = c,
			.observe = coord_observe_rpc, .observe_user = c,
		};

		rc = rpc_server_start(&o, &p.srv, &err);
	}
	if (!rc && !a.tls.insecure) {
		struct certwatch_opts wo = { a.tls.cert, a.tls.key, a.tls.ca, "server", reload_tls,
					     p.srv, c->m.reg, 0, 0 };

		rc = certwatch_start(&wo, &p.certs, &err);
	}
	if (!rc && a.http)
		rc = coord_http_start(c, a.http, ready, &p, &http, &err);
	if (rc) {
		obs_log(OBS_ERROR, "start_failed", "error", err.msg, NULL);
		fprintf(stderr, "dratopo-coordinator: %s\n", err.msg);
	} else {
		log_start(&a, c, p.srv, http);
		signal_loop(&sigs, p.certs);
	}
	/* The HTTP server before the watcher its gauges read, the watcher
	 * before the server it reloads; then drain the calls in flight (their
	 * reports commit), hand the Lease over (the controller's writes in
	 * flight finish first), then the rest. */
	obs_http_stop(http);
	certwatch_stop(p.certs);
	rpc_server_shutdown(p.srv, DRAIN_MS);
	coord_cluster_release(c);
	ctrl_stop(p.kube);
	coord_cluster_stop(c);
	coord_close(c);
	hwdb_reset();
	opts_free(&coord_cmd, &a);
	if (!rc)
		obs_log(OBS_INFO, "stopped", NULL);
	return rc ? 1 : 0;
}
