/* bench_load.c - one coordinator and N simulated agents in one process.
 *
 *   bench_load --coordinator-bin build/bin/dratopo-coordinator --tls-dir DIR
 *              [--agents 1000] [--duration 600] [--per-cert 10] [--check] ...
 *
 * Every agent has its own channel, on its own connection (rpc_async), with
 * mTLS; it reports a realistic TopologyReport (the devices of an hwdb type,
 * packed as the real agent packs them: agent_report_pack) every
 * interval, sequence incrementing, at most one report in flight as the
 * real agent. A few threads drive all the channels through completion
 * queues. Prints calls, failures by status, report latency p50/p99/max, the
 * coordinator's RSS after warm-up and at the end, and a verdict.
 *
 * Certificates: DIR holds mkcerts.sh's output (bench/bench_load.sh makes
 * it), with one client certificate per --per-cert agents: CN the first
 * agent of the group, DNS SANs every agent of it, so the coordinator still
 * checks each report's node name against the connection's certificate.
 *
 * Faults it can inject while the agents report (the fault tests use them):
 *   --restart-at S     SIGKILL the coordinator at S seconds; every report it
 *                      acknowledged must be in its database (read with
 *                      dt_store) before it is started again on the same port;
 *                      every agent must be acknowledged again afterwards
 *   --silent N         N calls held open that never send their message
 *   --noread N         N calls whose answers are never read (a tiny window)
 *   --slow N           N connections that dribble one byte every 200 ms
 * Failures while the coordinator is down count as injected; any other
 * failure fails the verdict.
 *
 * Exit: 0 verdict PASS, 1 FAIL, 2 usage or set-up error. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
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
#include "dratopo/v1/fleet.pb-c.h"
#include "hwdb.h"
#include "load_faults.h"
#include "rpc_async.h"
#include "rpc_client.h"
#include "store.h"

#define REPORT "/dratopo.v1.Coordinator/Report"
#define GET_NODE "/dratopo.v1.Fleet/GetNode"
#define N_CODES 17
#define START_WAIT_MS 20000
#define DRAIN_MS 10000

struct opts {
	unsigned agents, threads, per_cert;
	double duration_s, warmup_s, restart_at_s;
	int64_t interval_ms, deadline_ms;
	const char *bin, *target, *tls_dir, *type, *workdir;
	pid_t pid;
	bool insecure, check, rss_check;
	unsigned silent, noread, slow;
};

struct agent {
	char name[32];
	Dratopo__V1__TopologyReport *msg;       /* the template, sequence bumped per call */
	struct rpc_async_channel *ch;
	int64_t next_ms, sent_ms;               /* monotonic, since the start */
	bool in_flight;
	bool outage;                            /* failures now are injected */
	bool back;                              /* acknowledged after a restart */
	uint64_t sent_seq;
	_Atomic uint64_t acked_seq;
};

struct lat {
	uint32_t *us;
	size_t n, cap;
};

struct worker {
	pthread_t th;
	struct rpc_async *q;
	struct agent **agents;
	size_t n;
	struct lat all, steady;
	uint64_t calls, ok, failed[N_CODES + 1], injected, wrong_ack, late;
	uint64_t verdicts[5];                   /* acks by the coordinator's verdict */
};

static struct {
	struct opts o;
	struct agent *agents;
	struct worker *workers;
	struct timespec t0;
	atomic_bool stop;
	atomic_bool outage;
	char addr[64];
	char db[1200], log[1200];
	pid_t child;                            /* a coordinator this bench started */
	char tmpdir[64];                        /* made here: removed after a PASS */
	int port;
} B;

static int64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - B.t0.tv_sec) * 1000 + (t.tv_nsec - B.t0.tv_nsec) / 1000000;
}

static int64_t now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - B.t0.tv_sec) * 1000000LL + (t.tv_nsec - B.t0.tv_nsec) / 1000;
}

static int64_t unix_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "bench_load: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 2;
}

/* ---- the reports ---- */

/* The devices hwdb lists for type t, with PCI addresses made up under each
 * root (the coordinator checks roots and ids, not bus numbers). */
static int hwdb_devices(const struct hwdb_type *t, struct topo_device **out, size_t *n)
{
	struct topo_device *d = calloc(t->n_gpus + t->n_efas + 1, sizeof(*d));
	unsigned next_bus[256] = { 0 };

	if (!d)
		return -ENOMEM;
	*n = 0;
	for (size_t i = 0; i < t->n_gpus + t->n_efas; i++) {
		bool gpu = i < t->n_gpus;
		const struct hwdb_device *h = gpu ? &t->gpus[i] : &t->efas[i - t->n_gpus];
		struct topo_device *p = &d[(*n)++];
		unsigned root = 0;

		if (h->pcie_root)
			sscanf(h->pcie_root, "pci%*4x:%2x", &root);
		root &= 0xff;
		p->kind = gpu ? TOPO_GPU : TOPO_EFA;
		snprintf(p->bdf_str, sizeof(p->bdf_str), "0000:%02x:00.0",
			 (root + 1 + next_bus[root]++) & 0xff);
		p->vendor = gpu ? t->gpu_vendor : 0x1d0f;
		p->device = gpu ? t->gpu_device : t->efa_device;
		snprintf(p->pcie_root, sizeof(p->pcie_root), "%s", h->pcie_root ? h->pcie_root : "");
		p->numa_node = h->numa_node;
		snprintf(p->link_speed, sizeof(p->link_speed), "32.0 GT/s PCIe");
		p->link_width = 16;
		if (!gpu)
			snprintf(p->rdma_device, sizeof(p->rdma_device), "rdmap%ss0", p->bdf_str + 5);
	}
	*out = d;
	return 0;
}

/* Every agent's report, as the real agent would build it for such a node. */
static int build_reports(void)
{
	const struct hwdb_type *t = hwdb_lookup(B.o.type);
	struct topo topo = { 0 };
	struct topo_device *devs = NULL;
	struct dt_err err = { 0 };
	char run_id[64];
	size_t n = 0;
	int rc;

	if (!t)
		return fail("--type %s: not in hwdb", B.o.type);
	if (hwdb_devices(t, &devs, &n) ||
	    topo_from_devices(t->name, devs, n, &topo, &err)) {
		free(devs);
		return fail("cannot build the devices of %s: %s", t->name, err.msg);
	}
	free(devs);
	topo.cpus = t->vcpu;
	topo.memory_mib = t->memory_mib;
	snprintf(run_id, sizeof(run_id), "bench-%d", (int)getpid());
	rc = 0;
	for (unsigned i = 0; !rc && i < B.o.agents; i++) {
		struct agent *a = &B.agents[i];
		struct agent_report_info info = { a->name, run_id, 0, unix_ns(), "bench" };
		struct dt_diags warn;
		uint8_t *buf = NULL;
		size_t len = 0;

		snprintf(a->name, sizeof(a->name), "agent-%05u", i);
		dt_diags_init(&warn);
		if (agent_report_pack(&topo, &info, &buf, &len, &warn, &err))
			rc = fail("report of %s: %s", a->name, err.msg);
		else if (!(a->msg = dratopo__v1__topology_report__unpack(NULL, len, buf)))
			rc = fail("report of %s does not unpack", a->name);
		free(buf);
		dt_diags_free(&warn);
	}
	if (!rc)
		printf("report: %s, %zu devices, %zu bytes packed\n", t->name, topo.n_devices,
		       protobuf_c_message_get_packed_size(&B.agents[0].msg->base));
	topo_free(&topo);
	return rc;
}

/* ---- TLS files ---- */

struct tls_paths {
	char cert[1200], key[1200], ca[1200];
	struct rpc_tls tls;
};

static const struct rpc_tls *tls_for(struct tls_paths *p, const char *base)
{
	if (B.o.insecure) {
		p->tls = (struct rpc_tls){ NULL, NULL, NULL, true };
		return &p->tls;
	}
	snprintf(p->cert, sizeof(p->cert), "%s/%s.pem", B.o.tls_dir, base);
	snprintf(p->key, sizeof(p->key), "%s/%s.key", B.o.tls_dir, base);
	snprintf(p->ca, sizeof(p->ca), "%s/ca.pem", B.o.tls_dir);
	p->tls = (struct rpc_tls){ p->cert, p->key, p->ca, false };
	return &p->tls;
}

/* The certificate of agent i's group: client-agent-<first of the group>. */
static const struct rpc_tls *agent_tls(struct tls_paths *p, unsigned i)
{
	char base[64];

	snprintf(base, sizeof(base), "client-agent-%05u", i - i % B.o.per_cert);
	return tls_for(p, base);
}

/* ---- the coordinator ---- */

/* The gRPC port from the coordinator's start line, once it is written. */
static int wait_started(pid_t pid, long from)
{
	for (int waited = 0; waited < START_WAIT_MS; waited += 20) {
		char line[2048];
		const char *p;
		int status;
		FILE *f = fopen(B.log, "r");

		if (f && fseek(f, from, SEEK_SET)) {
			fclose(f);
			f = NULL;
		}
		while (f && fgets(line, sizeof(line), f))
			if (strstr(line, "event=start ") && (p = strstr(line, " grpc_port="))) {
				fclose(f);
				return atoi(p + 11);
			}
		if (f)
			fclose(f);
		if (waitpid(pid, &status, WNOHANG) == pid) {
			fprintf(stderr, "bench_load: the coordinator exited at start (status %d); see %s\n",
				status, B.log);
			return -1;
		}
		usleep(20000);
	}
	fprintf(stderr, "bench_load: the coordinator did not start in %d ms; see %s\n",
		START_WAIT_MS, B.log);
	return -1;
}

/* Start the coordinator on port (0: any), its log appended to B.log. */
static int start_coordinator(int port)
{
	char listen[64], cert[1200], key[1200], ca[1200];
	const char *argv[24];
	int n = 0, fd;
	long from;
	pid_t pid;

	snprintf(listen, sizeof(listen), "127.0.0.1:%d", port);
	argv[n++] = B.o.bin;
	argv[n++] = "--listen";
	argv[n++] = listen;
	argv[n++] = "--db";
	argv[n++] = B.db;
	argv[n++] = "--interval";
	argv[n++] = "1s";
	if (B.o.insecure) {
		argv[n++] = "--insecure";
	} else {
		snprintf(cert, sizeof(cert), "%s/server.pem", B.o.tls_dir);
		snprintf(key, sizeof(key), "%s/server.key", B.o.tls_dir);
		snprintf(ca, sizeof(ca), "%s/ca.pem", B.o.tls_dir);
		argv[n++] = "--tls-cert";
		argv[n++] = cert;
		argv[n++] = "--tls-key";
		argv[n++] = key;
		argv[n++] = "--tls-ca";
		argv[n++] = ca;
	}
	argv[n] = NULL;
	if ((fd = open(B.log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)) < 0)
		return fail("%s: %s", B.log, strerror(errno));
	/* A restart appends to the same log: only a start line after here counts. */
	from = lseek(fd, 0, SEEK_END);
	if ((pid = fork()) < 0) {
		close(fd);
		return fail("fork: %s", strerror(errno));
	}
	if (pid == 0) {
		dup2(fd, 2);
		dup2(open("/dev/null", O_RDONLY), 0);
		execv(B.o.bin, (char *const *)argv);
		_exit(127);
	}
	close(fd);
	if ((B.port = wait_started(pid, from)) < 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return 2;
	}
	B.child = pid;
	B.o.pid = pid;
	snprintf(B.addr, sizeof(B.addr), "127.0.0.1:%d", B.port);
	return 0;
}

/* SIGTERM and the exit status: 0 when it stopped cleanly. */
static int stop_coordinator(void)
{
	int status = 0;

	if (!B.child)
		return 0;
	kill(B.child, SIGTERM);
	waitpid(B.child, &status, 0);
	B.child = 0;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* ---- the agents ---- */

static void lat_push(struct lat *l, uint32_t us)
{
	if (DT_GROW(l->us, l->cap, l->n + 1))
		return;                 /* a sample less, not a crash */
	l->us[l->n++] = us;
}

static void send_report(struct worker *w, struct agent *a, int64_t now)
{
	struct dt_err err = { 0 };

	a->msg->sequence = a->sent_seq + 1;
	a->msg->probed_unix_nanos = unix_ns();
	a->sent_ms = now;
	w->calls++;
	if (rpc_async_start(w->q, a->ch, REPORT, &a->msg->base, &dratopo__v1__report_ack__descriptor,
			    B.o.deadline_ms, a, &err)) {
		fprintf(stderr, "bench_load: %s: %s\n", a->name, err.msg);
		w->failed[N_CODES]++;
		return;
	}
	a->sent_seq++;
	a->in_flight = true;
}

static void on_done(struct worker *w, const struct rpc_async_result *r)
{
	struct agent *a = r->tag;
	const Dratopo__V1__ReportAck *ack = (const void *)r->response;
	int64_t us = now_us() - a->sent_ms * 1000;

	a->in_flight = false;
	if (r->st.code == GRPC_STATUS_OK) {
		w->ok++;
		if (!ack || ack->sequence != a->sent_seq ||
		    ack->verdict == DRATOPO__V1__VERDICT__VERDICT_UNSPECIFIED)
			w->wrong_ack++;
		else
			atomic_store(&a->acked_seq, ack->sequence);
		if (ack && (unsigned)ack->verdict < 5)
			w->verdicts[ack->verdict]++;
		if (a->outage && !atomic_load(&B.outage)) {
			a->outage = false;
			a->back = true;
		}
		lat_push(&w->all, (uint32_t)(us > 0 ? us : 0));
		if (a->sent_ms >= B.o.warmup_s * 1000)
			lat_push(&w->steady, (uint32_t)(us > 0 ? us : 0));
	} else if (a->outage) {
		w->injected++;
	} else {
		w->failed[(unsigned)r->st.code < N_CODES ? r->st.code : N_CODES]++;
		if (w->failed[(unsigned)r->st.code < N_CODES ? r->st.code : N_CODES] <= 3)
			fprintf(stderr, "bench_load: %s seq %llu: %s: %s\n", a->name,
				(unsigned long long)a->sent_seq, rpc_status_name(r->st.code),
				r->st.details);
	}
	if (r->response)
		protobuf_c_message_free_unpacked(r->response, NULL);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct rpc_async_result r;
	int64_t end = (int64_t)(B.o.duration_s * 1000);

	for (;;) {
		int64_t now = now_ms(), wake = now + 50;
		bool sending = now < end && !atomic_load(&B.stop);

		for (size_t i = 0; sending && i < w->n; i++) {
			struct agent *a = w->agents[i];

			if (now >= a->next_ms) {
				if (a->in_flight)
					w->late++;      /* the last one still pending: as the agent, skip */
				else
					send_report(w, a, now);
				while (a->next_ms <= now)
					a->next_ms += B.o.interval_ms;
			}
			if (a->next_ms < wake)
				wake = a->next_ms;
		}
		if (!sending && !rpc_async_in_flight(w->q))
			break;
		if (!sending && now > end + DRAIN_MS)
			break;
		while (rpc_async_next(w->q, wake > now ? wake - now : 0, &r) == 1) {
			on_done(w, &r);
			if (now_ms() >= wake)
				break;
		}
	}
	return NULL;
}

/* ---- checks ---- */

/* After a SIGKILL: every acknowledged sequence is in the database. */
struct db_seqs {
	uint64_t *seq;
	unsigned n;
};

static int note_seq(struct store_node *rec, void *arg)
{
	struct db_seqs *s = arg;
	unsigned i;

	if (sscanf(rec->name, "agent-%u", &i) == 1 && i < s->n)
		s->seq[i] = rec->last_seq;
	return 0;
}

static unsigned check_db_after_kill(void)
{
	struct db_seqs s = { calloc(B.o.agents, sizeof(uint64_t)), B.o.agents };
	struct dt_err err = { 0 };
	struct store *st = NULL;
	unsigned lost = 0, acked = 0;

	if (!s.seq || store_open(B.db, NULL, &st, &err) ||
	    store_list_nodes(st, note_seq, &s, &err)) {
		fprintf(stderr, "bench_load: reading %s after the kill: %s\n", B.db, err.msg);
		lost = B.o.agents;
	}
	for (unsigned i = 0; !lost && i < B.o.agents; i++) {
		uint64_t a = atomic_load(&B.agents[i].acked_seq);

		acked += a > 0;
		if (s.seq[i] < a && lost++ < 5)
			fprintf(stderr, "bench_load: %s: acknowledged %llu, the database has %llu\n",
				B.agents[i].name, (unsigned long long)a, (unsigned long long)s.seq[i]);
	}
	printf("kill check: %u agents acknowledged before the kill, %u acknowledged reports "
	       "missing from the database\n", acked, lost);
	store_close(st);
	free(s.seq);
	return lost;
}

/* After the run: each agent's last acknowledged report is the one the
 * coordinator holds (GetNode), or a later one whose answer was lost. */
static unsigned check_nodes(void)
{
	struct rpc_channel *ch = NULL;
	struct dt_err err = { 0 };
	struct tls_paths tp;
	unsigned bad = 0;

	if (rpc_channel_open(B.addr, tls_for(&tp, "client-admin"), &ch, &err)) {
		fprintf(stderr, "bench_load: check: %s\n", err.msg);
		return B.o.agents;
	}
	for (unsigned i = 0; i < B.o.agents; i++) {
		struct agent *a = &B.agents[i];
		Dratopo__V1__GetNodeRequest q = DRATOPO__V1__GET_NODE_REQUEST__INIT;
		Dratopo__V1__GetNodeResponse *resp = NULL;
		uint64_t acked = atomic_load(&a->acked_seq), held = 0;

		q.name = a->name;
		if (rpc_call(ch, GET_NODE, &q.base, &dratopo__v1__get_node_response__descriptor, 10000,
			     (ProtobufCMessage **)&resp, NULL, &err) == 0 && resp->last_report)
			held = resp->last_report->sequence;
		if (resp)
			protobuf_c_message_free_unpacked(&resp->base, NULL);
		if ((held < acked || held > a->sent_seq || (acked && !held)) && bad++ < 5)
			fprintf(stderr, "bench_load: %s: acknowledged %llu, sent %llu, the coordinator "
				"holds %llu%s%s\n", a->name, (unsigned long long)acked,
				(unsigned long long)a->sent_seq, (unsigned long long)held,
				err.msg[0] ? ": " : "", err.msg);
		err.msg[0] = '\0';
	}
	rpc_channel_close(ch);
	printf("check: %u agents, %u whose last acknowledged report the coordinator lacks\n",
	       B.o.agents, bad);
	return bad;
}

/* ---- the run ---- */

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static void print_latency(const char *what, struct lat *l)
{
	if (!l->n) {
		printf("latency %s: no calls\n", what);
		return;
	}
	qsort(l->us, l->n, sizeof(*l->us), cmp_u32);
	printf("latency %s: n=%zu p50=%.2f ms p99=%.2f ms max=%.2f ms\n", what, l->n,
	       l->us[l->n / 2] / 1000.0, l->us[(size_t)((double)l->n * 0.99)] / 1000.0,
	       l->us[l->n - 1] / 1000.0);
}

static void merge(struct lat *into, const struct lat *from)
{
	for (size_t i = 0; i < from->n; i++)
		lat_push(into, from->us[i]);
}

/* SIGKILL, check the database, start again on the same port. */
static int restart(void)
{
	unsigned lost;
	int rc;

	atomic_store(&B.outage, true);
	for (unsigned i = 0; i < B.o.agents; i++)
		B.agents[i].outage = true;      /* racy by design: a flag, read by its worker */
	kill(B.child, SIGKILL);
	waitpid(B.child, NULL, 0);
	B.child = 0;
	printf("t=%.1fs coordinator killed (SIGKILL)\n", now_ms() / 1000.0);
	usleep(300000);                         /* answers already on the wire are counted */
	lost = check_db_after_kill();
	rc = start_coordinator(B.port);
	atomic_store(&B.outage, false);
	printf("t=%.1fs coordinator restarted on port %d\n", now_ms() / 1000.0, B.port);
	return rc ? -1 : (int)lost;
}

struct totals {
	uint64_t calls, ok, failed[N_CODES + 1], injected, wrong_ack, late, failed_all;
	uint64_t verdicts[5];
	struct lat all, steady;
};

static void sum(struct totals *t)
{
	memset(t, 0, sizeof(*t));
	for (unsigned k = 0; k < B.o.threads; k++) {
		struct worker *w = &B.workers[k];

		t->calls += w->calls;
		t->ok += w->ok;
		t->injected += w->injected;
		t->wrong_ack += w->wrong_ack;
		t->late += w->late;
		for (int v = 0; v < 5; v++)
			t->verdicts[v] += w->verdicts[v];
		for (int c = 0; c <= N_CODES; c++) {
			t->failed[c] += w->failed[c];
			t->failed_all += w->failed[c];
		}
		merge(&t->all, &w->all);
		merge(&t->steady, &w->steady);
	}
}

static int run(void)
{
	long rss_warm = -1, rss_end;
	bool restarted = B.o.restart_at_s <= 0, warm = false;
	int lost = 0, exit_code = 0;
	unsigned missing = 0, not_back = 0;
	struct totals t;
	struct load_faults *faults = NULL;
	struct tls_paths tp;
	struct dt_err err = { 0 };
	double last_progress = 0;

	if (B.o.silent + B.o.noread + B.o.slow &&
	    load_faults_start(B.addr, tls_for(&tp, "client-admin"), B.o.silent, B.o.noread,
			      B.o.slow, &faults, &err))
		return fail("faults: %s", err.msg);
	for (unsigned k = 0; k < B.o.threads; k++)
		pthread_create(&B.workers[k].th, NULL, worker_main, &B.workers[k]);
	while (now_ms() < B.o.duration_s * 1000) {
		double s = now_ms() / 1000.0;

		usleep(100000);
		if (!warm && s >= B.o.warmup_s) {
			warm = true;
			rss_warm = bench_rss_kib(B.o.pid);
			printf("t=%.1fs warm-up over: coordinator RSS %ld KiB\n", s, rss_warm);
		}
		if (!restarted && s >= B.o.restart_at_s) {
			restarted = true;
			if ((lost = restart()) < 0) {
				atomic_store(&B.stop, true);
				break;
			}
		}
		if (s - last_progress >= 10) {
			last_progress = s;
			printf("t=%.0fs rss=%ld KiB\n", s, bench_rss_kib(B.o.pid));
			fflush(stdout);
		}
	}
	rss_end = bench_rss_kib(B.o.pid);
	for (unsigned k = 0; k < B.o.threads; k++)
		pthread_join(B.workers[k].th, NULL);
	load_faults_stop(faults);
	sum(&t);
	if (B.o.restart_at_s > 0)
		for (unsigned i = 0; i < B.o.agents; i++)
			not_back += !B.agents[i].back;
	if (B.o.check)
		missing = check_nodes();

	printf("agents: %u over %u threads, interval %lld ms, duration %.0f s, warm-up %.0f s\n",
	       B.o.agents, B.o.threads, (long long)B.o.interval_ms, B.o.duration_s, B.o.warmup_s);
	printf("calls: %llu (%.1f/s), ok %llu, failed %llu, injected failures %llu, "
	       "wrong acks %llu, skipped (previous still pending) %llu\n",
	       (unsigned long long)t.calls, t.calls / B.o.duration_s, (unsigned long long)t.ok,
	       (unsigned long long)t.failed_all, (unsigned long long)t.injected,
	       (unsigned long long)t.wrong_ack, (unsigned long long)t.late);
	printf("acks by verdict: match %llu, drift %llu, unknown %llu, learned %llu\n",
	       (unsigned long long)t.verdicts[1], (unsigned long long)t.verdicts[2],
	       (unsigned long long)t.verdicts[3], (unsigned long long)t.verdicts[4]);
	for (int c = 0; c <= N_CODES; c++)
		if (t.failed[c])
			printf("  failed %s: %llu\n", c < N_CODES ? rpc_status_name(c) : "(not started)",
			       (unsigned long long)t.failed[c]);
	print_latency("all", &t.all);
	print_latency("after warm-up", &t.steady);
	double growth = rss_warm > 0 ? 100.0 * (double)(rss_end - rss_warm) / (double)rss_warm : 0;
	printf("coordinator RSS: %ld KiB after warm-up, %ld KiB at the end, growth %+.2f%%%s\n",
	       rss_warm, rss_end, growth, B.o.restart_at_s > 0 ? " (restarted: not comparable)" : "");
	if (B.o.restart_at_s > 0)
		printf("restart: %d acknowledged reports lost, %u agents never acknowledged again\n",
		       lost, not_back);
	if (B.child) {
		int st = stop_coordinator();

		printf("coordinator stopped with SIGTERM: exit %d\n", st);
		exit_code = st;
	}

	bool pass = t.failed_all == 0 && t.wrong_ack == 0 && missing == 0 && lost == 0 &&
		    not_back == 0 && exit_code == 0 && t.ok > 0;
	bool rss_ok = !B.o.rss_check || B.o.restart_at_s > 0 || (rss_warm > 0 && growth < 5.0);

	printf("verdict: %s (failed %llu, wrong acks %llu, missing %u, lost %d, not back %u, "
	       "coordinator exit %d, RSS growth %+.2f%% %s)\n", pass && rss_ok ? "PASS" : "FAIL",
	       (unsigned long long)t.failed_all, (unsigned long long)t.wrong_ack, missing, lost,
	       not_back, exit_code, growth,
	       B.o.rss_check && B.o.restart_at_s <= 0 ? "< 5% required" : "not asserted");
	free(t.all.us);
	free(t.steady.us);
	return pass && rss_ok ? 0 : 1;
}

/* ---- set-up ---- */

static const char usage_text[] =
	"usage: bench_load (--coordinator-bin PATH | --target HOST:PORT [--pid PID])\n"
	"                  (--tls-dir DIR | --insecure) [options]\n"
	"  --agents N        simulated agents (1000)\n"
	"  --duration S      seconds of reporting (600)\n"
	"  --warmup S        seconds before the first RSS sample (duration/5, at most 60)\n"
	"  --interval-ms MS  each agent's reporting interval (1000)\n"
	"  --deadline-ms MS  deadline of each report (5000)\n"
	"  --threads N       threads driving the channels (4)\n"
	"  --per-cert N      agents sharing one client certificate (10)\n"
	"  --type T          the hwdb type the agents report (p5.48xlarge)\n"
	"  --workdir DIR     database and log of a coordinator started here (a temp dir)\n"
	"  --check           afterwards, GetNode for every agent (needs client-admin)\n"
	"  --no-rss-check    print RSS growth without making it part of the verdict\n"
	"  --restart-at S    SIGKILL the coordinator at S seconds and start it again\n"
	"  --silent N, --noread N, --slow N   misbehaving clients (see bench_load.c)\n";

static int parse_args(int argc, char **argv)
{
	enum { O_BIN = 256, O_TARGET, O_PID, O_TLS, O_INSECURE, O_AGENTS, O_DURATION, O_WARMUP,
	       O_INTERVAL, O_DEADLINE, O_THREADS, O_PER_CERT, O_TYPE, O_WORKDIR, O_CHECK,
	       O_NO_RSS, O_RESTART, O_SILENT, O_NOREAD, O_SLOW };
	static const struct option lo[] = {
		{ "coordinator-bin", 1, NULL, O_BIN }, { "target", 1, NULL, O_TARGET },
		{ "pid", 1, NULL, O_PID }, { "tls-dir", 1, NULL, O_TLS },
		{ "insecure", 0, NULL, O_INSECURE }, { "agents", 1, NULL, O_AGENTS },
		{ "duration", 1, NULL, O_DURATION }, { "warmup", 1, NULL, O_WARMUP },
		{ "interval-ms", 1, NULL, O_INTERVAL }, { "deadline-ms", 1, NULL, O_DEADLINE },
		{ "threads", 1, NULL, O_THREADS }, { "per-cert", 1, NULL, O_PER_CERT },
		{ "type", 1, NULL, O_TYPE }, { "workdir", 1, NULL, O_WORKDIR },
		{ "check", 0, NULL, O_CHECK }, { "no-rss-check", 0, NULL, O_NO_RSS },
		{ "restart-at", 1, NULL, O_RESTART }, { "silent", 1, NULL, O_SILENT },
		{ "noread", 1, NULL, O_NOREAD }, { "slow", 1, NULL, O_SLOW },
		{ "help", 0, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	struct opts *o = &B.o;
	int c;

	*o = (struct opts){ .agents = 1000, .threads = 4, .per_cert = 10, .duration_s = 600,
			    .warmup_s = -1, .interval_ms = 1000, .deadline_ms = 5000,
			    .type = "p5.48xlarge", .rss_check = true };
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case O_BIN: o->bin = optarg; break;
		case O_TARGET: o->target = optarg; break;
		case O_PID: o->pid = atoi(optarg); break;
		case O_TLS: o->tls_dir = optarg; break;
		case O_INSECURE: o->insecure = true; break;
		case O_AGENTS: o->agents = (unsigned)atoi(optarg); break;
		case O_DURATION: o->duration_s = atof(optarg); break;
		case O_WARMUP: o->warmup_s = atof(optarg); break;
		case O_INTERVAL: o->interval_ms = atoll(optarg); break;
		case O_DEADLINE: o->deadline_ms = atoll(optarg); break;
		case O_THREADS: o->threads = (unsigned)atoi(optarg); break;
		case O_PER_CERT: o->per_cert = (unsigned)atoi(optarg); break;
		case O_TYPE: o->type = optarg; break;
		case O_WORKDIR: o->workdir = optarg; break;
		case O_CHECK: o->check = true; break;
		case O_NO_RSS: o->rss_check = false; break;
		case O_RESTART: o->restart_at_s = atof(optarg); break;
		case O_SILENT: o->silent = (unsigned)atoi(optarg); break;
		case O_NOREAD: o->noread = (unsigned)atoi(optarg); break;
		case O_SLOW: o->slow = (unsigned)atoi(optarg); break;
		case 'h': fputs(usage_text, stdout); exit(0);
		default: fputs(usage_text, stderr); return 2;
		}
	}
	if (optind < argc || !o->bin == !o->target || !o->tls_dir == !o->insecure || !o->agents ||
	    !o->threads || !o->per_cert || o->duration_s <= 0 || o->interval_ms <= 0 ||
	    o->deadline_ms <= 0 || (o->restart_at_s > 0 && !o->bin)) {
		fputs(usage_text, stderr);
		return 2;
	}
	if (o->threads > o->agents)
		o->threads = o->agents;
	if (o->warmup_s < 0)
		o->warmup_s = o->duration_s / 5 < 60 ? o->duration_s / 5 : 60;
	return 0;
}

static int setup(void)
{
	static char tmpl[] = "/tmp/bench_load.XXXXXX";
	const char *dir = B.o.workdir;
	struct dt_err err = { 0 };
	int64_t ramp_ms = (int64_t)(B.o.warmup_s * 500);
	int rc;

	if (ramp_ms < B.o.interval_ms)
		ramp_ms = B.o.interval_ms;
	if (!dir && !(dir = mkdtemp(tmpl)))
		return fail("mkdtemp: %s", strerror(errno));
	if (dir == tmpl)
		snprintf(B.tmpdir, sizeof(B.tmpdir), "%s", tmpl);
	snprintf(B.db, sizeof(B.db), "%s/coordinator.db", dir);
	snprintf(B.log, sizeof(B.log), "%s/coordinator.log", dir);
	B.agents = calloc(B.o.agents, sizeof(*B.agents));
	B.workers = calloc(B.o.threads, sizeof(*B.workers));
	if (!B.agents || !B.workers)
		return fail("out of memory");
	if ((rc = build_reports()))
		return rc;
	if (B.o.bin && (rc = start_coordinator(0)))
		return rc;
	if (B.o.target)
		snprintf(B.addr, sizeof(B.addr), "%s", B.o.target);
	printf("coordinator: %s pid %d%s%s\n", B.addr, (int)B.o.pid, B.o.bin ? ", log " : "",
	       B.o.bin ? B.log : "");
	clock_gettime(CLOCK_MONOTONIC, &B.t0);
	for (unsigned i = 0; i < B.o.agents; i++) {
		struct agent *a = &B.agents[i];
		struct worker *w = &B.workers[i % B.o.threads];
		struct tls_paths tp;

		if (rpc_async_channel_open(B.addr, agent_tls(&tp, i), &a->ch, &err))
			return fail("%s: %s", a->name, err.msg);
		/* Agents come up one after another over the first half of the
		 * warm-up (at least one interval), as a fleet does, rather than
		 * N TLS handshakes in the same millisecond. */
		a->next_ms = (int64_t)i * ramp_ms / B.o.agents;
		if (!w->agents && !(w->agents = calloc(B.o.agents / B.o.threads + 1, sizeof(*w->agents))))
			return fail("out of memory");
		w->agents[w->n++] = a;
	}
	for (unsigned k = 0; k < B.o.threads; k++)
		if (rpc_async_new(&B.workers[k].q, &err))
			return fail("%s", err.msg);
	return 0;
}

/* The temporary database and log, kept after a FAIL to look at. */
static void remove_tmpdir(void)
{
	static const char *const suffix[] = { "", "-wal", "-shm" };
	char path[1300];

	for (size_t i = 0; i < sizeof(suffix) / sizeof(suffix[0]); i++) {
		snprintf(path, sizeof(path), "%s%s", B.db, suffix[i]);
		unlink(path);
	}
	unlink(B.log);
	rmdir(B.tmpdir);
}

static void teardown(void)
{
	for (unsigned k = 0; B.workers && k < B.o.threads; k++) {
		rpc_async_free(B.workers[k].q);
		free(B.workers[k].agents);
		free(B.workers[k].all.us);
		free(B.workers[k].steady.us);
	}
	for (unsigned i = 0; B.agents && i < B.o.agents; i++) {
		rpc_async_channel_close(B.agents[i].ch);
		if (B.agents[i].msg)
			dratopo__v1__topology_report__free_unpacked(B.agents[i].msg, NULL);
	}
	if (B.child)
		stop_coordinator();
	free(B.workers);
	free(B.agents);
}

int main(int argc, char **argv)
{
	int rc = parse_args(argc, argv);

	if (rc)
		return rc;
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);
	rc = setup();
	if (!rc)
		rc = run();
	teardown();
	if (B.tmpdir[0] && !rc)
		remove_tmpdir();
	else if (B.tmpdir[0])
		fprintf(stderr, "bench_load: database and log kept in %s\n", B.tmpdir);
	return rc;
}
