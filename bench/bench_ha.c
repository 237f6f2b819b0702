/* bench_ha.c - the fleet in the cluster, at scale: N nodes reporting every
 * INTERVAL to two dratopo-coordinators with --leader-elect against a real
 * kube-apiserver, and what that costs the API server in writes: while the
 * fleet first reports, in steady state, and after the leader is killed and
 * the other takes over. Not a test (it takes minutes and a control plane).
 *
 *   bench_ha BUILD [--nodes 10000] [--interval 30] [--steady 60] [--after 90]
 *                  [--kube-dir DIR]
 *
 * The control plane is tools/kube/cluster.sh's (started under a temporary
 * directory and stopped at the end, unless --kube-dir names a running one).
 * Writes are counted by the API server itself: apiserver_request_total of
 * the write verbs (POST, PUT, PATCH, APPLY, DELETE) from its /metrics,
 * before and after each phase, by resource. The agents are simulated as
 * ha_agents does (the p5.48xlarge fixture, 1 node in 100 degraded), each
 * node's reports spread evenly over the interval; a report refused or
 * unanswered goes to the other coordinator, as an agent reconnecting
 * through the Service would.
 *
 * Prints, per phase: seconds, reports acknowledged, attempts refused or
 * timed out (each tried again, as an agent does), the API server's writes
 * by resource (NodeTopology, LearnedType, Lease, DeviceTaintRule, other)
 * and per second in all and for the fleet's objects, and for the takeover
 * the time from SIGKILL to the new leader and its rebuild time. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent_report.h"
#include "bench_spawn.h"
#include "dratopo/v1/agent.pb-c.h"
#include "probe.h"
#include "rpc_async.h"
#include "rpc_client.h"

#define REPORT "/dratopo.v1.Coordinator/Report"
#define CALL_MS 30000

static const char *build;
static long n_nodes = 10000;
static double interval_s = 30, steady_s = 60, after_s = 90;
static char kube_dir[1024], ns[64], kubectl[1200], api[256], pki[1024];
static bool own_cluster;
static uint8_t *tmpl[2];                /* packed reports: healthy, degraded */
static size_t tmpl_len[2];
static struct bench_coord coord[2];
static atomic_int leader_hint;          /* the coordinator to try first */
static volatile sig_atomic_t interrupted;       /* SIGINT/SIGTERM: clean up and go */

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

/* Sleep secs, or until interrupted: false then. */
static bool wait_s(double secs)
{
	struct timespec ts = { 0, 200 * 1000000 };

	for (double t = 0; t < secs && !interrupted; t += 0.2)
		nanosleep(&ts, NULL);
	return !interrupted;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

/* ---- the API server's count of writes ---- */

struct writes {
	double leases, nodetopologies, learnedtypes, taint_rules, other;
};

static double total(const struct writes *w)
{
	return w->leases + w->nodetopologies + w->learnedtypes + w->taint_rules + w->other;
}

static void label(const char *line, const char *key, char *out, size_t size)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "%s=\"", key);
	p = strstr(line, pat);
	out[0] = '\0';
	if (p)
		snprintf(out, size, "%.*s", (int)strcspn(p + strlen(pat), "\""), p + strlen(pat));
}

static int count_writes(struct writes *w)
{
	char cmd[4096], line[2048];
	FILE *f;

	memset(w, 0, sizeof(*w));
	snprintf(cmd, sizeof(cmd), "curl -s --cacert %s/ca.crt --cert %s/admin.crt --key "
		 "%s/admin.key %s/metrics", pki, pki, pki, api);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char verb[32], res[128];
		const char *v;

		if (strncmp(line, "apiserver_request_total{", 24))
			continue;
		label(line, "verb", verb, sizeof(verb));
		label(line, "resource", res, sizeof(res));
		if (strcmp(verb, "POST") && strcmp(verb, "PUT") && strcmp(verb, "PATCH") &&
		    strcmp(verb, "APPLY") && strcmp(verb, "DELETE"))
			continue;
		v = strrchr(line, ' ');
		if (!v)
			continue;
		if (!strcmp(res, "leases"))
			w->leases += atof(v);
		else if (!strcmp(res, "nodetopologies"))
			w->nodetopologies += atof(v);
		else if (!strcmp(res, "learnedtypes"))
			w->learnedtypes += atof(v);
		else if (!strcmp(res, "devicetaintrules"))
			w->taint_rules += atof(v);
		else
			w->other += atof(v);
	}
	return pclose(f) == 0 ? 0 : -1;
}

static void print_writes(const char *phase, double secs, const struct writes *a,
			 const struct writes *b, long ok, long failed)
{
	struct writes d = { b->leases - a->leases, b->nodetopologies - a->nodetopologies,
			    b->learnedtypes - a->learnedtypes, b->taint_rules - a->taint_rules,
			    b->other - a->other };

	printf("%-10s %7.1f %9ld %7ld %7.0f %7.0f %7.0f %7.0f %7.0f %9.2f %9.2f\n", phase, secs,
	       ok, failed, d.nodetopologies, d.learnedtypes, d.leases, d.taint_rules, d.other,
	       total(&d) / secs, (d.nodetopologies + d.learnedtypes) / secs);
}

/* ---- the agents ---- */

/* The simulated fleet, as the real agents behave: every node probes every
 * interval (at its own offset) and keeps one report in flight; a newer
 * probe replaces one not yet sent; a report refused or timed out is tried
 * again after a second (the agent's first backoff step), at the other
 * coordinator when this one refused it (an agent reconnecting through the
 * Service reaches the leader). One thread drives them all through
 * completion queues (rpc_async), so ten thousand reports can wait on slow
 * acknowledgements at once, as ten thousand agents would. */
#define CHANNELS 8              /* connections per coordinator */
#define RETRY_S 1.0

static atomic_bool load_stop;
static atomic_long load_ok, load_failed;
static double load_start;
static pthread_t load_thread;

struct node {
	double next_probe, retry_at;
	uint64_t seq;
	bool in_flight, pending;
	int target;                     /* the coordinator it reports to */
};

static struct node *nodes;
static struct rpc_async *queue;
static struct rpc_async_channel *chans[2][CHANNELS];

static void node_name(long i, char *buf, size_t size)
{
	snprintf(buf, size, "bench-%05ld", i);
}

static void send_report(long i)
{
	struct node *n = &nodes[i];
	int k = i % 100 == 7;
	Dratopo__V1__TopologyReport *m =
		dratopo__v1__topology_report__unpack(NULL, tmpl_len[k], tmpl[k]);
	char name[32], *old_name;

	if (!m)
		return;
	node_name(i, name, sizeof(name));
	old_name = m->node_name;
	m->node_name = name;
	m->sequence = n->seq;
	if (!rpc_async_start(queue, chans[n->target][i % CHANNELS], REPORT, &m->base,
			     &dratopo__v1__report_ack__descriptor, CALL_MS, (void *)(intptr_t)i,
			     NULL)) {
		n->in_flight = true;
		n->pending = false;
	}
	m->node_name = old_name;
	dratopo__v1__topology_report__free_unpacked(m, NULL);
}

static void finished(const struct rpc_async_result *r, double now)
{
	long i = (long)(intptr_t)r->tag;
	struct node *n = &nodes[i];

	n->in_flight = false;
	if (r->response)
		protobuf_c_message_free_unpacked(r->response, NULL);
	if (r->st.code == GRPC_STATUS_OK) {
		atomic_fetch_add(&load_ok, 1);
		atomic_store(&leader_hint, n->target);
		return;
	}
	atomic_fetch_add(&load_failed, 1);
	if (r->st.code == GRPC_STATUS_UNAVAILABLE)
		n->target = atomic_load(&leader_hint) == n->target ? 1 - n->target
								   : atomic_load(&leader_hint);
	n->pending = true;              /* the same report again, after a backoff */
	n->retry_at = now + RETRY_S;
}

static void *load_main(void *arg)
{
	(void)arg;
	while (!atomic_load(&load_stop)) {
		struct rpc_async_result r;
		double now = now_s(), wake = now + 0.05;

		for (long i = 0; i < n_nodes; i++) {
			struct node *n = &nodes[i];

			if (now >= n->next_probe) {     /* a new probe: a newer report */
				n->seq++;
				n->pending = true;
				n->retry_at = now;
				n->next_probe += interval_s;
			}
			if (n->pending && !n->in_flight && now >= n->retry_at)
				send_report(i);
		}
		while (rpc_async_next(queue, (int64_t)((wake - now_s()) * 1000), &r) == 1)
			finished(&r, now_s());
	}
	return NULL;
}

static int start_load(void)
{
	struct rpc_tls tls = { .insecure = true };

	nodes = calloc((size_t)n_nodes, sizeof(*nodes));
	if (!nodes || rpc_async_new(&queue, NULL))
		return -1;
	for (int c = 0; c < 2; c++)
		for (int k = 0; k < CHANNELS; k++)
			if (rpc_async_channel_open(coord[c].addr, &tls, &chans[c][k], NULL))
				return -1;
	load_start = now_s();
	for (long i = 0; i < n_nodes; i++) {
		nodes[i].next_probe = load_start + (double)i / (double)n_nodes * interval_s;
		nodes[i].target = atomic_load(&leader_hint);
	}
	return pthread_create(&load_thread, NULL, load_main, NULL) ? -1 : 0;
}

static void stop_load(void)
{
	atomic_store(&load_stop, true);
	pthread_join(load_thread, NULL);
	rpc_async_free(queue);
	for (int c = 0; c < 2; c++)
		for (int k = 0; k < CHANNELS; k++)
			rpc_async_channel_close(chans[c][k]);
	free(nodes);
}

/* A phase's account: its start's counters and writes. */
struct mark {
	double t;
	long ok, failed;
	struct writes w;
};

static void mark(struct mark *m)
{
	m->t = now_s();
	m->ok = atomic_load(&load_ok);
	m->failed = atomic_load(&load_failed);
	count_writes(&m->w);
}

static void print_phase(const char *name, const struct mark *a, const struct mark *b)
{
	print_writes(name, b->t - a->t, &a->w, &b->w, b->ok - a->ok, b->failed - a->failed);
}

/* ---- the coordinators ---- */

static double metric(int c, const char *name)
{
	char cmd[512], line[512];
	double v = -1;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "curl -s -m 2 127.0.0.1:%d/metrics", coord[c].http_port);
	f = popen(cmd, "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, name, strlen(name)) && line[strlen(name)] == ' ')
			v = atof(line + strlen(name) + 1);
	if (f)
		pclose(f);
	return v;
}

static int leader(void)
{
	for (int c = 0; c < 2; c++)
		if (metric(c, "dratopo_leader") == 1)
			return c;
	return -1;
}

static int start_coordinators(const char *dir)
{
	char kubeconfig[1200];

	snprintf(kubeconfig, sizeof(kubeconfig), "%s/kubeconfig", kube_dir);
	for (int c = 0; c < 2; c++) {
		char log[1200];
		const char *args[] = { "--insecure", "--listen", "127.0.0.1:0", "--http",
				       "127.0.0.1:0", "--kubeconfig", kubeconfig, "--leader-elect",
				       "--leader-elect-resource-namespace", ns,
				       "--interval", "30s", NULL };

		snprintf(log, sizeof(log), "%s/coord%d.log", dir, c);
		if (bench_coord_spawn(build, log, args, &coord[c]))
			return fprintf(stderr, "bench_ha: coordinator %d did not start (%s)\n", c,
				       log), -1;
	}
	return 0;
}

/* ---- set-up ---- */

static int read_env(void)
{
	char path[1200], line[1200];
	FILE *f;

	snprintf(path, sizeof(path), "%s/cluster.env", kube_dir);
	f = fopen(path, "r");
	if (!f)
		return fprintf(stderr, "bench_ha: %s: %s\n", path, strerror(errno)), -1;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!strncmp(line, "API_SERVER=", 11))
			snprintf(api, sizeof(api), "%s", line + 11);
		else if (!strncmp(line, "PKI=", 4))
			snprintf(pki, sizeof(pki), "%s", line + 4);
	}
	fclose(f);
	snprintf(kubectl, sizeof(kubectl), "%s/bin/kubectl --kubeconfig %s/kubeconfig", kube_dir,
		 kube_dir);
	return api[0] && pki[0] ? 0 : -1;
}

static int templates(void)
{
	static const char *const fixtures[2] = { "p5.48xlarge", "p5.48xlarge-degraded" };

	for (int k = 0; k < 2; k++) {
		struct agent_report_info info = { "x", "bench-run", 1, (int64_t)time(NULL) * 1000000000,
						  "bench" };
		struct dt_diags w;
		struct dt_err err = { 0 };
		struct topo t;
		char root[1200];
		int rc;

		snprintf(root, sizeof(root), "%s/fixtures/agent/%s", build, fixtures[k]);
		if (probe_run(root, NULL, &t, &err))
			return fprintf(stderr, "bench_ha: %s (run ctest -R agent_fixtures first)\n",
				       err.msg), -1;
		dt_diags_init(&w);
		rc = agent_report_pack(&t, &info, &tmpl[k], &tmpl_len[k], &w, &err);
		dt_diags_free(&w);
		topo_free(&t);
		if (rc)
			return fprintf(stderr, "bench_ha: %s\n", err.msg), -1;
	}
	return 0;
}

static int args(int argc, char **argv)
{
	if (argc < 2)
		return -1;
	build = argv[1];
	for (int i = 2; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--nodes"))
			n_nodes = atol(argv[i + 1]);
		else if (!strcmp(argv[i], "--interval"))
			interval_s = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "--steady"))
			steady_s = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "--after"))
			after_s = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "--kube-dir"))
			snprintf(kube_dir, sizeof(kube_dir), "%s", argv[i + 1]);
		else
			return -1;
	}
	return n_nodes > 0 && interval_s > 0 ? 0 : -1;
}

/* Until the leader's fleet writes stop for quiet_s (the transient of
 * the first reports is over), at most limit_s. */
static void settle(int c, double quiet_s, double limit_s)
{
	double start = now_s(), since = now_s();
	double last = metric(c, "dratopo_cluster_writes{verb=\"update\"}");

	while (now_s() - since < quiet_s && now_s() - start < limit_s && wait_s(1)) {
		double v;

		v = metric(c, "dratopo_cluster_writes{verb=\"update\"}");
		if (v != last) {
			last = v;
			since = now_s();
		}
	}
}

int main(int argc, char **argv)
{
	struct mark m0, m1, m2, m3, m4;
	char dir[] = "/tmp/bench-ha-XXXXXX";
	int lead, other, rc = 1;

	if (args(argc, argv)) {
		fprintf(stderr, "usage: bench_ha BUILD [--nodes N] [--interval S] [--steady S] "
			"[--after S] [--kube-dir DIR]\n");
		return 2;
	}
	if (!mkdtemp(dir) || templates())
		return 1;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (!kube_dir[0]) {
		snprintf(kube_dir, sizeof(kube_dir), "%s/kube", dir);
		if (sh("bash %s/tools/kube/cluster.sh up %s >/dev/null", DT_SOURCE_DIR, kube_dir))
			return fprintf(stderr, "bench_ha: cannot start a control plane\n"), 1;
		own_cluster = true;
	}
	if (read_env())
		goto out;
	/* a fleet from an earlier run would be taken over, not written */
	for (int k = 0; k < 2; k++)
		sh("curl -s -o /dev/null -X DELETE --cacert %s/ca.crt --cert %s/admin.crt --key "
		   "%s/admin.key %s/apis/dratopo.io/v1alpha1/%s", pki, pki, pki, api,
		   k ? "learnedtypes" : "nodetopologies");
	snprintf(ns, sizeof(ns), "bench-ha-%d", (int)getpid());
	sh("%s create namespace %s >/dev/null", kubectl, ns);
	if (start_coordinators(dir))
		goto out;
	for (int i = 0; i < 100 && leader() < 0; i++)
		usleep(200000);
	lead = leader();
	if (lead < 0) {
		fprintf(stderr, "bench_ha: nobody leads\n");
		goto out;
	}
	other = 1 - lead;
	atomic_store(&leader_hint, lead);
	printf("%ld nodes reporting every %.0f s (%.0f reports/s) to 2 coordinators\n", n_nodes,
	       interval_s, (double)n_nodes / interval_s);
	printf("%-10s %7s %9s %7s %7s %7s %7s %7s %7s %9s %9s\n", "phase", "seconds", "acked",
	       "retried", "ntopo", "learned", "lease", "dtrule", "other", "writes/s", "fleet/s");
	fflush(stdout);

	mark(&m0);
	if (start_load()) {
		fprintf(stderr, "bench_ha: cannot start the agents\n");
		goto out;
	}
	/* the fleet is written once the leader holds an object per node and
	 * the first reports' transient is over */
	while (metric(lead, "dratopo_cluster_objects{kind=\"NodeTopology\"}") < (double)n_nodes &&
	       now_s() - m0.t < 3600 && wait_s(1))
		;
	settle(lead, 15, 600);
	if (interrupted)
		goto stop;
	mark(&m1);
	print_phase("first", &m0, &m1);
	fflush(stdout);

	if (!wait_s(steady_s))
		goto stop;
	mark(&m2);
	print_phase("steady", &m1, &m2);
	fflush(stdout);

	/* the leader dies; the load goes on, to the other once it leads */
	kill(coord[lead].pid, SIGKILL);
	waitpid(coord[lead].pid, NULL, 0);
	coord[lead].pid = 0;
	while (metric(other, "dratopo_leader") != 1 && now_s() - m2.t < 120)
		usleep(100000);
	mark(&m3);
	if (!wait_s(after_s))
		goto stop;
	mark(&m4);
	print_phase("takeover", &m2, &m4);
	print_phase(" ..after", &m3, &m4);
	printf("new leader after %.2f s; its rebuild from the objects: %.3f s\n", m3.t - m2.t,
	       metric(other, "dratopo_leader_election{what=\"last_takeover_seconds\"}"));
	printf("objects the new leader wrote: %.0f updates, %.0f creates (and %.0f found "
	       "unchanged)\n", metric(other, "dratopo_cluster_writes{verb=\"update\"}"),
	       metric(other, "dratopo_cluster_writes{verb=\"create\"}"),
	       metric(other, "dratopo_cluster_writes{verb=\"unchanged\"}"));
	rc = 0;
stop:
	stop_load();
out:
	for (int c = 0; c < 2; c++)
		if (coord[c].pid > 0) {
			kill(coord[c].pid, SIGTERM);
			waitpid(coord[c].pid, NULL, 0);
		}
	if (kubectl[0])
		sh("%s delete namespace %s --wait=false >/dev/null 2>&1", kubectl, ns);
	if (own_cluster)
		sh("bash %s/tools/kube/cluster.sh down %s >/dev/null 2>&1", DT_SOURCE_DIR, kube_dir);
	if (rc)
		fprintf(stderr, "bench_ha: logs kept in %s\n", dir);
	else
		sh("rm -rf %s", dir);
	return rc;
}
