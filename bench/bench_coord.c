/* bench_coord.c - reports per second into dratopo-coordinator from many
 * concurrent agents (one process, one channel per agent), side by side with
 * the limit: an empty Report handler on the same dt_rpc server, same worker
 * count, same machine, same run. Then a fleet of 10,000 simulated nodes: the
 * coordinator's RSS and the time `dratopo nodes -o json` takes on it.
 *
 *   bench_coord BUILD_DIR [--clients N] [--seconds S] [--fleet N] [--pairs N]
 *
 * Each pair is a run against the empty handler, then one against the
 * coordinator; the ratio of a pair is the first's rate over the second's,
 * and the last line gives the median over the pairs (the machine's load
 * moves from one minute to the next; a pair shares its minute).
 *
 * The coordinator runs as its own process (the real binary, --insecure, a
 * durable SQLite file in a temporary directory); the empty server runs in
 * this process. Each agent thread sends real reports (the p5.48xlarge
 * fixture's probe, one node name per thread) back to back, waiting for each
 * ack. Not a test: numbers go to docs/coordinator.md. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent_report.h"
#include "array.h"
#include "bench_spawn.h"
#include "dratopo/v1/agent.pb-c.h"
#include "probe.h"
#include "rpc_client.h"
#include "rpc_server.h"

#define REPORT "/dratopo.v1.Coordinator/Report"
#define WORKERS 64

static pid_t coord_pid;
static int coord_http_port;

struct agent {
	pthread_t thread;
	const char *addr;
	Dratopo__V1__TopologyReport *report;    /* sent with sequence 2, 3, ... */
	uint8_t *buf;
	size_t len;
	double *lat;            /* seconds per call */
	size_t n, cap;
	size_t errors;
	double until;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static struct topo topo;

static uint8_t *pack_for(const char *node, const char *run, size_t *len)
{
	struct agent_report_info info = { node, run, 1, (int64_t)time(NULL) * 1000000000,
					  "bench" };
	struct dt_diags w;
	uint8_t *buf = NULL;

	dt_diags_init(&w);
	if (agent_report_pack(&topo, &info, &buf, len, &w, NULL))
		buf = NULL;
	dt_diags_free(&w);
	return buf;
}

static void *agent_main(void *arg)
{
	struct agent *a = arg;
	struct rpc_tls tls = { .insecure = true };
	struct rpc_channel *ch;

	if (rpc_channel_open(a->addr, &tls, &ch, NULL))
		return NULL;
	while (now_s() < a->until) {
		struct rpc_status st;
		double t0 = now_s();

		/* A heartbeat, as a running agent sends: same devices, a newer
		 * sequence (packing it is a few µs, the same for both servers). */
		a->report->sequence++;
		a->len = protobuf_c_message_pack(&a->report->base, a->buf);
		if (rpc_call_bytes(ch, REPORT, a->buf, a->len, 10000, NULL, NULL, &st, NULL)) {
			a->errors++;
			continue;
		}
		if (DT_GROW(a->lat, a->cap, a->n + 1))
			break;          /* out of memory: report what was measured */
		a->lat[a->n++] = now_s() - t0;
	}
	rpc_channel_close(ch);
	return NULL;
}

static int cmp_d(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

/* utime + stime of pid, in seconds. */
static double cpu_s(pid_t pid)
{
	char path[64], buf[2048], *p;
	unsigned long ut = 0, st = 0;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "r")))
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')');
	/* after the comm: state ppid pgrp session tty tpgid flags minflt
	 * cminflt majflt cmajflt utime stime */
	if (p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut,
			&st) != 2)
		return 0;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* Run n agents against addr for seconds; print one result row, with the
 * CPU time pid (when not 0) spent per report. */
/* One load run: prints its row, returns its reports per second. */
static double load(const char *what, const char *addr, int n, double seconds, pid_t pid)
{
	double cpu0 = pid ? cpu_s(pid) : 0, self0 = cpu_s(getpid());
	struct agent *ag = calloc((size_t)n, sizeof(*ag));
	double *all, t0 = now_s();
	size_t total = 0, errors = 0, k = 0;
	double rate;
	static int runs;
	char run[32];

	/* Each load run is a new agent run (boot id), so that its sequences
	 * are new, not replays of the last run's. */
	snprintf(run, sizeof(run), "bench-%d", ++runs);

	for (int i = 0; i < n; i++) {
		char name[32];
		uint8_t *packed;
		size_t len;

		snprintf(name, sizeof(name), "load-%04d", i);
		packed = pack_for(name, run, &len);
		ag[i].addr = addr;
		ag[i].report = dratopo__v1__topology_report__unpack(NULL, len, packed);
		ag[i].buf = malloc(len + 16);
		free(packed);
		ag[i].until = t0 + seconds;
		pthread_create(&ag[i].thread, NULL, agent_main, &ag[i]);
	}
	for (int i = 0; i < n; i++) {
		pthread_join(ag[i].thread, NULL);
		total += ag[i].n;
		errors += ag[i].errors;
	}
	all = malloc((total + 1) * sizeof(*all));
	for (int i = 0; i < n; i++) {
		memcpy(all + k, ag[i].lat, ag[i].n * sizeof(*all));
		k += ag[i].n;
		free(ag[i].lat);
		free(ag[i].buf);
		dratopo__v1__topology_report__free_unpacked(ag[i].report, NULL);
	}
	qsort(all, total, sizeof(*all), cmp_d);
	rate = total / (now_s() - t0);
	printf("%-22s %7d %11.0f %9.2f %9.2f %7zu", what, n, rate,
	       total ? all[total / 2] * 1e3 : 0, total ? all[total * 99 / 100] * 1e3 : 0, errors);
	if (total)
		printf(" %9.0f", (cpu_s(getpid()) - self0) / (double)total * 1e6);
	if (pid && total)
		printf(" %9.0f", (cpu_s(pid) - cpu0) / (double)total * 1e6);
	printf("\n");
	free(all);
	free(ag);
	return rate;
}

/* ---- the limit: an empty handler on the same glue ---- */

static grpc_status_code empty_report(struct rpc_ctx *ctx, const ProtobufCMessage *req,
				     ProtobufCMessage **resp)
{
	Dratopo__V1__ReportAck *ack = malloc(sizeof(*ack));

	(void)ctx;
	(void)req;
	if (!ack)
		return GRPC_STATUS_RESOURCE_EXHAUSTED;
	dratopo__v1__report_ack__init(ack);
	ack->verdict = DRATOPO__V1__VERDICT__VERDICT_MATCH;
	*resp = &ack->base;
	return GRPC_STATUS_OK;
}

/* ---- the coordinator process ---- */


static int start_coordinator(const char *build, const char *dir, char *addr, size_t len)
{
	static const char *const workers[] = { "--workers", "64", NULL };
	struct bench_coord c;

	if (bench_coord_start(build, dir, workers, &c))
		return -1;
	coord_pid = c.pid;
	coord_http_port = c.http_port;
	snprintf(addr, len, "%s", c.addr);
	return 0;
}

/* The coordinator's group commits so far: how many, reports per commit,
 * mean commit time (from its /metrics). */
static void commit_stats(void)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "curl -s http://127.0.0.1:%d/metrics | awk '"
		 "/^dratopo_store_commit_seconds_sum/ {s=$2} /^dratopo_store_commit_seconds_count/ {n=$2}"
		 " /^dratopo_store_commit_reports_sum/ {r=$2}"
		 " END {if (n) printf \"  commits so far: %%d, %%.1f reports each, %%.2f ms each\\n\","
		 " n, r/n, 1000*s/n}'", coord_http_port);
	fflush(stdout);
	if (coord_http_port && system(cmd))
		printf("  (no commit metrics)\n");
}

/* n distinct nodes, reported by FLEET_THREADS threads on one channel. */
#define FLEET_THREADS 32

struct fleet_part {
	pthread_t thread;
	struct rpc_channel *ch;
	long from, to, errors;
};

static void *fleet_main(void *arg)
{
	struct fleet_part *p = arg;

	for (long i = p->from; i < p->to; i++) {
		char name[32];
		size_t len;
		uint8_t *r;

		snprintf(name, sizeof(name), "fleet-%05ld", i);
		r = pack_for(name, "bench-fleet", &len);
		if (!r || rpc_call_bytes(p->ch, REPORT, r, len, 10000, NULL, NULL, NULL, NULL))
			p->errors++;
		free(r);
	}
	return NULL;
}

static void fleet(const char *addr, long n)
{
	struct rpc_tls tls = { .insecure = true };
	struct fleet_part parts[FLEET_THREADS];
	struct rpc_channel *ch;
	double t0 = now_s();
	long errors = 0;

	if (rpc_channel_open(addr, &tls, &ch, NULL))
		return;
	for (int t = 0; t < FLEET_THREADS; t++) {
		parts[t] = (struct fleet_part){ .ch = ch, .from = n * t / FLEET_THREADS,
						.to = n * (t + 1) / FLEET_THREADS };
		pthread_create(&parts[t].thread, NULL, fleet_main, &parts[t]);
	}
	for (int t = 0; t < FLEET_THREADS; t++) {
		pthread_join(parts[t].thread, NULL);
		errors += parts[t].errors;
	}
	rpc_channel_close(ch);
	printf("fleet: %ld nodes reported in %.1f s (%ld errors)\n", n, now_s() - t0, errors);
}

static void time_nodes(const char *build, const char *addr)
{
	char cmd[8192];
	double t0 = now_s();
	int rc;

	snprintf(cmd, sizeof(cmd), "%s/bin/dratopo nodes --coordinator %s --insecure -o json "
		 "| wc -c", build, addr);
	printf("dratopo nodes -o json: ");
	fflush(stdout);
	rc = system(cmd);
	printf("  (%.2f s, exit %d)\n", now_s() - t0, rc);
	snprintf(cmd, sizeof(cmd), "%s/bin/dratopo nodes --coordinator %s --insecure | wc -l",
		 build, addr);
	t0 = now_s();
	printf("dratopo nodes (table lines): ");
	fflush(stdout);
	rc = system(cmd);
	printf("  (%.2f s, exit %d)\n", now_s() - t0, rc);
}

int main(int argc, char **argv)
{
	const char *build = argc > 1 ? argv[1] : "build";
	int clients = 64;
	double seconds = 5;
	long fleet_n = 10000;
	int pairs = 2;
	double ratio[64];
	char dir[] = "/tmp/bench_coord.XXXXXX", root[4096], addr[64], empty_addr[64];
	static const struct rpc_method m[] = {
		{ REPORT, &dratopo__v1__topology_report__descriptor, empty_report, NULL },
	};
	struct rpc_server *srv;
	struct dt_err err = { 0 };

	for (int i = 2; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--clients"))
			clients = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--seconds"))
			seconds = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "--fleet"))
			fleet_n = atol(argv[i + 1]);
		else if (!strcmp(argv[i], "--pairs"))
			pairs = atoi(argv[i + 1]);
	}
	if (pairs < 1 || pairs > (int)(sizeof(ratio) / sizeof(ratio[0]))) {
		fprintf(stderr, "bench_coord: --pairs must be 1..%zu\n", sizeof(ratio) / sizeof(ratio[0]));
		return 2;
	}
	snprintf(root, sizeof(root), "%s/fixtures/agent/p5.48xlarge", build);
	if (probe_run(root, NULL, &topo, &err)) {
		fprintf(stderr, "bench_coord: %s (run ctest -R agent_fixtures first)\n", err.msg);
		return 1;
	}
	if (!mkdtemp(dir) || start_coordinator(build, dir, addr, sizeof(addr))) {
		fprintf(stderr, "bench_coord: cannot start %s/bin/dratopo-coordinator\n", build);
		return 1;
	}
	{
		struct rpc_server_opts o = { .listen = "127.0.0.1:0", .tls = { .insecure = true },
					     .workers = WORKERS, .methods = m, .n_methods = 1 };

		if (rpc_server_start(&o, &srv, &err)) {
			fprintf(stderr, "bench_coord: %s\n", err.msg);
			return 1;
		}
		snprintf(empty_addr, sizeof(empty_addr), "127.0.0.1:%d", rpc_server_port(srv));
	}
	printf("%-22s %7s %11s %9s %9s %7s %9s %9s\n", "server", "agents", "reports/s", "p50 ms",
	       "p99 ms", "errors", "bench us", "coord us");
	for (int i = 0; i < pairs; i++) {
		double limit = load("empty handler (limit)", empty_addr, clients, seconds, 0);
		double got = load("dratopo-coordinator", addr, clients, seconds, coord_pid);

		ratio[i] = got > 0 ? limit / got : 0;
		commit_stats();
		printf("  ratio: %.2fx\n", ratio[i]);
	}
	qsort(ratio, (size_t)pairs, sizeof(*ratio), cmp_d);
	printf("median ratio over %d pairs: %.2fx\n", pairs,
	       pairs % 2 ? ratio[pairs / 2] : (ratio[pairs / 2 - 1] + ratio[pairs / 2]) / 2);
	rpc_server_shutdown(srv, 1000);
	printf("coordinator RSS after the load runs: %ld KiB\n", bench_rss_kib(coord_pid));
	fleet(addr, fleet_n);
	printf("coordinator RSS holding %ld nodes: %ld KiB\n", fleet_n + clients, bench_rss_kib(coord_pid));
	time_nodes(build, addr);
	kill(coord_pid, SIGTERM);
	waitpid(coord_pid, NULL, 0);
	topo_free(&topo);
	snprintf(root, sizeof(root), "rm -rf %s", dir);
	return system(root) ? 1 : 0;
}
