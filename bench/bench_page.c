/* bench_page.c - the coordinator's status pages over a fleet of 10,000
 * simulated nodes, against peers in the same run: the ListNodes RPC
 * `dratopo nodes -o json` makes (the ratio column), and the endpoint's own
 * /metrics, which also walks the whole fleet for its gauges.
 *
 *   bench_page BUILD_DIR [--fleet N] [--rounds R]
 *
 * The coordinator is the real binary (--insecure, a durable SQLite file in a
 * temporary directory, --http on a free port). The fleet is reported over
 * gRPC from the agent's sysfs fixtures, node sim-NNNNN taking fixture N mod
 * 20: 14 of 20 a healthy p5.48xlarge, 2 the degraded one (drift), 2 a
 * g6e.48xlarge, 1 a p4d.24xlarge and 1 the unknown type (learned after
 * two). Then each page is fetched R times, the pages interleaved, over a
 * fresh HTTP/1.0 connection each (as a browser or curl would); the median
 * and the slowest are printed with the size, and each page's median over
 * ListNodes'. Not a test (no timed assertion): numbers go to docs/page.md. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent_report.h"
#include "bench_spawn.h"
#include "dratopo/v1/fleet.pb-c.h"
#include "probe.h"
#include "rpc_client.h"

#define REPORT "/dratopo.v1.Coordinator/Report"
#define LIST "/dratopo.v1.Fleet/ListNodes"
#define THREADS 16
#define MAX_ROUNDS 1000

static const char *const fixtures[] = {
	"p5.48xlarge", "p5.48xlarge-degraded", "g6e.48xlarge", "p4d.24xlarge", "unknown",
};
/* node i takes fixture mix[i % 20] */
static const int mix[20] = { 0, 1, 0, 0, 2, 0, 0, 0, 3, 0, 0, 1, 0, 0, 2, 0, 0, 0, 4, 0 };
static struct topo topos[5];

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmp_d(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

/* ---- the coordinator and its fleet ---- */

struct part {
	pthread_t thread;
	struct rpc_channel *ch;
	long from, to, errors;
};

static void *report_part(void *arg)
{
	struct part *p = arg;

	for (long i = p->from; i < p->to; i++) {
		char name[32];
		struct agent_report_info info = { name, "bench-page", 1,
						  (int64_t)time(NULL) * 1000000000, "bench" };
		struct dt_diags w;
		uint8_t *buf = NULL;
		size_t len = 0;

		snprintf(name, sizeof(name), "sim-%05ld", i);
		dt_diags_init(&w);
		if (agent_report_pack(&topos[mix[i % 20]], &info, &buf, &len, &w, NULL) ||
		    rpc_call_bytes(p->ch, REPORT, buf, len, 30000, NULL, NULL, NULL, NULL))
			p->errors++;
		dt_diags_free(&w);
		free(buf);
	}
	return NULL;
}

static long report_fleet(struct rpc_channel *ch, long n)
{
	struct part parts[THREADS];
	long errors = 0;

	for (int t = 0; t < THREADS; t++) {
		parts[t] = (struct part){ .ch = ch, .from = n * t / THREADS,
					  .to = n * (t + 1) / THREADS };
		pthread_create(&parts[t].thread, NULL, report_part, &parts[t]);
	}
	for (int t = 0; t < THREADS; t++) {
		pthread_join(parts[t].thread, NULL);
		errors += parts[t].errors;
	}
	return errors;
}

/* ---- fetching ---- */

/* GET path over a fresh connection: the seconds it took, the status and
 * the body's size; -1 when it failed. */
static double http_get(int port, const char *path, int *status, size_t *bytes)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	char buf[65536];
	size_t total = 0, head = 0;
	double t0 = now_s();
	ssize_t n;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	snprintf(buf, sizeof(buf), "GET %s HTTP/1.0\r\nHost: bench\r\n\r\n", path);
	if (write(fd, buf, strlen(buf)) < 0) {
		close(fd);
		return -1;
	}
	*status = 0;
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		if (!total) {
			char *end = memmem(buf, (size_t)n, "\r\n\r\n", 4);

			sscanf(buf, "HTTP/1.%*d %d", status);
			head = end ? (size_t)(end + 4 - buf) : 0;
		}
		total += (size_t)n;
	}
	close(fd);
	*bytes = total - head;
	return now_s() - t0;
}

/* ListNodes, as `dratopo nodes -o json` asks for it (the RPC alone, no
 * JSON: the page's own JSON is timed as /nodes.json). */
static double list_nodes(struct rpc_channel *ch, int *status, size_t *bytes)
{
	Dratopo__V1__ListNodesRequest req = DRATOPO__V1__LIST_NODES_REQUEST__INIT;
	ProtobufCMessage *resp = NULL;
	struct rpc_status st = { 0 };
	double t0 = now_s();

	if (rpc_call(ch, LIST, &req.base, &dratopo__v1__list_nodes_response__descriptor, 30000,
		     &resp, &st, NULL))
		return -1;
	*status = 200;
	*bytes = protobuf_c_message_get_packed_size(resp);
	protobuf_c_message_free_unpacked(resp, NULL);
	return now_s() - t0;
}

struct target {
	const char *what, *path;        /* path NULL: the ListNodes RPC */
	double t[MAX_ROUNDS];
	size_t bytes;
	int status;
};

int main(int argc, char **argv)
{
	const char *build = argc > 1 ? argv[1] : "build";
	long fleet_n = 10000;
	int rounds = 20;
	char dir[] = "/tmp/bench_page.XXXXXX", root[4096];
	struct bench_coord coord;
	struct rpc_tls tls = { .insecure = true };
	struct rpc_channel *ch = NULL;
	struct dt_err err = { 0 };
	static struct target targets[] = {
		{ "ListNodes RPC (peer)", NULL },
		{ "/metrics (peer)", "/metrics" },
		{ "fleet page", "/" },
		{ "fleet page, drift, deep", "/?verdict=drift&after=sim-05000" },
		{ "fleet page, 1000 rows", "/?limit=1000" },
		{ "node page (p5, drift)", "/nodes/sim-00001" },
		{ "type page (p5)", "/types/p5.48xlarge" },
		{ "/nodes.json (all)", "/nodes.json" },
		{ "/types.json", "/types.json" },
	};
	size_t n_targets = sizeof(targets) / sizeof(targets[0]);
	double t0;
	long errors;

	for (int i = 2; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--fleet"))
			fleet_n = atol(argv[i + 1]);
		else if (!strcmp(argv[i], "--rounds"))
			rounds = atoi(argv[i + 1]);
	}
	if (rounds < 1 || rounds > MAX_ROUNDS || fleet_n < 20) {
		fprintf(stderr, "bench_page: --rounds 1..%d, --fleet at least 20\n", MAX_ROUNDS);
		return 2;
	}
	for (size_t f = 0; f < sizeof(fixtures) / sizeof(fixtures[0]); f++) {
		snprintf(root, sizeof(root), "%s/fixtures/agent/%s", build, fixtures[f]);
		if (probe_run(root, NULL, &topos[f], &err)) {
			fprintf(stderr, "bench_page: %s (run ctest -R agent_fixtures first)\n", err.msg);
			return 1;
		}
	}
	if (!mkdtemp(dir) || bench_coord_start(build, dir, NULL, &coord) ||
	    rpc_channel_open(coord.addr, &tls, &ch, &err)) {
		fprintf(stderr, "bench_page: cannot start %s/bin/dratopo-coordinator\n", build);
		return 1;
	}
	t0 = now_s();
	errors = report_fleet(ch, fleet_n);
	printf("fleet: %ld nodes reported in %.1f s (%ld errors)\n", fleet_n, now_s() - t0, errors);
	printf("%-26s %8s %10s %10s %12s %s\n", "page", "median", "slowest", "bytes",
	       "/ ListNodes", "status");
	for (int r = 0; r < rounds; r++) {
		for (size_t i = 0; i < n_targets; i++) {
			struct target *tg = &targets[i];

			tg->t[r] = tg->path ? http_get(coord.http_port, tg->path, &tg->status,
						       &tg->bytes)
					    : list_nodes(ch, &tg->status, &tg->bytes);
		}
	}
	for (size_t i = 0; i < n_targets; i++) {
		struct target *tg = &targets[i];
		double med;

		qsort(tg->t, (size_t)rounds, sizeof(double), cmp_d);
		med = tg->t[rounds / 2];
		printf("%-26s %6.1fms %8.1fms %10zu %11.2fx %d\n", tg->what, med * 1e3,
		       tg->t[rounds - 1] * 1e3, tg->bytes, med / targets[0].t[rounds / 2],
		       tg->status);
	}
	rpc_channel_close(ch);
	kill(coord.pid, SIGTERM);
	waitpid(coord.pid, NULL, 0);
	for (size_t f = 0; f < sizeof(fixtures) / sizeof(fixtures[0]); f++)
		topo_free(&topos[f]);
	snprintf(root, sizeof(root), "rm -rf %s", dir);
	return system(root) ? 1 : 0;
}
