/* bench_ha.c - the fleet in the cluster, at scale: N nodes reporting every
 * INTERVAL to two dratopo-coordinators with --leader-elect against a real
 * kube-apiserver, and what that costs the API server in writes: while the
 * fleet first reports, in steady state, and after the leader is killed and
 * the other takes over. Not a test (it takes minutes and a control plane).
 *
 *   bench_ha BUILD [--nodes 10000] [--interval 30] [--steady 60] [--after 90]
 *                  [--threads 64] [--kube-dir DIR]
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
 * Prints, per phase: seconds, reports acknowledged and failed, the API
 * server's writes by resource and per second, and for the takeover the
 * time from SIGKILL to the new leader and its rebuild time. */
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
#include "rpc_client.h"

#define REPORT "/dratopo.v1.Coordinator/Report"
#define CALL_MS 10000
#define MAX_THREADS 64

static const char *build;
static long n_nodes = 10000, n_threads = 64;
static double interval_s = 30, steady_s = 60, after_s = 90;
static char kube_dir[1024], ns[64], kubectl[1200], api[256], pki[1024];
static bool own_cluster;
static uint8_t *tmpl[2];                /* packed reports: healthy, degraded */
static size_t tmpl_len[2];
static struct bench_coord coord[2];
static atomic_int leader_hint;          /* the coordinator to try first */

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

/* The simulated fleet reports from the start to the end, each node every
 * interval at its own offset; counters for the phases to read. */
static atomic_bool load_stop;
static atomic_long load_ok, load_failed;
static double load_start;

struct worker {
	long first, n;                  /* its nodes */
	pthread_t thread;
	struct rpc_channel *ch[2];
};

static void node_name(long i, char *buf, size_t size)
{
	snprintf(buf, size, "bench-%05ld", i);
}

/* One report of node i, to whichever coordinator takes it, tried until
 * it gets through (an agent retries until it does) or the load stops. */
static int report(struct worker *w, long i, uint64_t seq)
{
	int k = i % 100 == 7;
	Dratopo__V1__TopologyReport *m =
		dratopo__v1__topology_report__unpack(NULL, tmpl_len[k], tmpl[k]);
	char name[32], *old_name;
	uint8_t *buf;
	size_t len;
	int rc = -1;

	if (!m)
		return -1;
	node_name(i, name, sizeof(name));
	old_name = m->node_name;
	m->node_name = name;
	m->sequence = seq;
	len = protobuf_c_message_get_packed_size(&m->base);
	buf = malloc(len);
	if (buf) {
		protobuf_c_message_pack(&m->base, buf);
		for (int attempt = 0; rc && !atomic_load(&load_stop); attempt++) {
			int c = (atomic_load(&leader_hint) + attempt) % 2;
			struct rpc_status st = { 0 };

			if (!rpc_call_bytes(w->ch[c], REPORT, buf, len, CALL_MS, NULL, NULL, &st,
					    NULL) && st.code == GRPC_STATUS_OK) {
				rc = 0;
				atomic_store(&leader_hint, c);
			} else {
				rpc_channel_reconnect(w->ch[c], NULL);
				usleep(100000);
			}
		}
	}
	free(buf);
	m->node_name = old_name;
	dratopo__v1__topology_report__free_unpacked(m, NULL);
	return rc;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	for (long round = 0; !atomic_load(&load_stop); round++) {
		for (long i = w->first; i < w->first + w->n && !atomic_load(&load_stop); i++) {
			double due = load_start + ((double)i / (double)n_nodes + (double)round) *
					interval_s;
			double now = now_s();

			if (due > now)
				usleep((useconds_t)((due - now) * 1e6));
			if (report(w, i, (uint64_t)round + 1))
				atomic_fetch_add(&load_failed, 1);
			else
				atomic_fetch_add(&load_ok, 1);
		}
	}
	return NULL;
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
		else if (!strcmp(argv[i], "--threads"))
			n_threads = atol(argv[i + 1]);
		else if (!strcmp(argv[i], "--kube-dir"))
			snprintf(kube_dir, sizeof(kube_dir), "%s", argv[i + 1]);
		else
			return -1;
	}
	return n_nodes > 0 && n_threads > 0 && n_threads <= MAX_THREADS && interval_s > 0 ? 0 : -1;
}

/* Until the leader's fleet writes stop for quiet_s (the transient of
 * the first reports is over), at most limit_s. */
static void settle(int c, double quiet_s, double limit_s)
{
	double start = now_s(), since = now_s();
	double last = metric(c, "dratopo_cluster_writes{verb=\"update\"}");

	while (now_s() - since < quiet_s && now_s() - start < limit_s) {
		double v;

		sleep(1);
		v = metric(c, "dratopo_cluster_writes{verb=\"update\"}");
		if (v != last) {
			last = v;
			since = now_s();
		}
	}
}

int main(int argc, char **argv)
{
	struct worker ws[MAX_THREADS];
	struct mark m0, m1, m2, m3, m4;
	char dir[] = "/tmp/bench-ha-XXXXXX";
	long per;
	int lead, other, rc = 1;

	if (args(argc, argv)) {
		fprintf(stderr, "usage: bench_ha BUILD [--nodes N] [--interval S] [--steady S] "
			"[--after S] [--threads N] [--kube-dir DIR]\n");
		return 2;
	}
	if (!mkdtemp(dir) || templates())
		return 1;
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
	per = (n_nodes + n_threads - 1) / n_threads;
	for (long t = 0; t < n_threads; t++) {
		struct rpc_tls tls = { .insecure = true };

		ws[t] = (struct worker){ .first = t * per,
					 .n = t * per + per > n_nodes ? n_nodes - t * per : per };
		for (int c = 0; c < 2; c++)
			rpc_channel_open(coord[c].addr, &tls, &ws[t].ch[c], NULL);
	}
	printf("%ld nodes reporting every %.0f s (%.0f reports/s) to 2 coordinators, %ld agent "
	       "threads\n", n_nodes, interval_s, (double)n_nodes / interval_s, n_threads);
	printf("%-10s %7s %9s %7s %7s %7s %7s %7s %7s %9s %9s\n", "phase", "seconds", "reports",
	       "failed", "ntopo", "learned", "lease", "dtrule", "other", "writes/s", "fleet/s");
	fflush(stdout);

	mark(&m0);
	load_start = m0.t;
	for (long t = 0; t < n_threads; t++)
		pthread_create(&ws[t].thread, NULL, worker_main, &ws[t]);
	/* the fleet is written once the leader holds an object per node and
	 * the first reports' transient is over */
	while (metric(lead, "dratopo_cluster_objects{kind=\"NodeTopology\"}") < (double)n_nodes &&
	       now_s() - m0.t < 3600)
		sleep(1);
	settle(lead, 15, 600);
	mark(&m1);
	print_phase("first", &m0, &m1);
	fflush(stdout);

	sleep((unsigned)steady_s);
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
	sleep((unsigned)after_s);
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
	atomic_store(&load_stop, true);
	for (long t = 0; t < n_threads; t++) {
		pthread_join(ws[t].thread, NULL);
		for (int c = 0; c < 2; c++)
			rpc_channel_close(ws[t].ch[c]);
	}
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
