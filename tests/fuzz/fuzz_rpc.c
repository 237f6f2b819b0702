/* fuzz_rpc.c - the coordinator's gRPC handlers, decoding and handling, fed
 * fuzzed requests in-process (no network).
 *
 * An input is up to 8 calls against one fresh coordinator (in-memory store,
 * the committer thread running), so that sequences such as Report then
 * GetNode/ListTypes/Plan are reachable and every input replays alone:
 *
 *     call := method:u8 len:u16le bytes[len]
 *
 * method % the number of methods picks the entry of coord_methods; its top
 * bit makes the call come from a client certificate with CN "node-01" on a
 * secure server (otherwise the server is insecure: no identity checks). The
 * bytes are unpacked as the glue does (a payload that is not the request
 * type ends the call as INVALID_ARGUMENT there, without the handler), then
 * the handler runs, and its answer is packed and released, all by
 * coord_invoke (rpc_invoke: the server's own code path, without gRPC).
 * Invariants: a handler that says OK gives a response, a status is a gRPC
 * status, and nothing crashes, leaks or hangs (ASan/UBSan, libFuzzer's
 * timeouts).
 *
 * The real dt_rpc is linked, so a handler sees exactly the call context
 * the server gives it. Built two ways: with libFuzzer (-DDRATOPO_FUZZ=ON,
 * clang) and, without it, as fuzz_rpc_replay, which runs every file it is
 * given through the same entry point (the ctest replay of
 * tests/fuzz/rpc_corpus/) and with --seeds DIR writes that corpus. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coord.h"
#include "obs_log.h"

#define MAX_CALLS 8
#define IDENTITY_BIT 0x80
#define PEER_CN "node-01"

/* FUZZ_RPC_TRACE=1: one line per call on stderr (what a seed reaches). */
static int trace;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* One call as the server makes it once its message has arrived. */
static void one_call(struct coord *c, uint8_t sel, const uint8_t *p, size_t n)
{
	static const struct rpc_peer node = { .addr = "ipv4:127.0.0.1:1", .cn = PEER_CN };
	const struct rpc_method *m = &coord_methods[(sel & ~IDENTITY_BIT) % coord_n_methods];
	struct rpc_invoke_result r;
	char no_resp[256];

	/* The handlers read c->insecure on each call: flipping it between
	 * calls is a server without identities, then one with them. */
	c->insecure = !(sel & IDENTITY_BIT);
	if (coord_invoke(c, m->path, p, n, c->insecure ? NULL : &node, &r))
		return;                 /* -ENOMEM */
	if (trace)
		fprintf(stderr, "fuzz_rpc: %s: %s %s\n", m->path, rpc_status_name(r.status), r.details);
	/* rpc_invoke turns OK without a response into INTERNAL "PATH gave no
	 * response". Compared whole: details often echo request bytes, and a
	 * name holding "gave no response" is not a finding (it was one, of
	 * this harness: regress-details-echo). */
	snprintf(no_resp, sizeof(no_resp), "%s gave no response", m->path);
	if ((unsigned)r.status > GRPC_STATUS_UNAUTHENTICATED ||
	    (r.status == GRPC_STATUS_INTERNAL && !strcmp(r.details, no_resp))) {
		fprintf(stderr, "fuzz_rpc: %s answered %d: %s\n", m->path, r.status, r.details);
		abort();
	}
	rpc_invoke_result_free(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct coord_opts opts = { .db = "memory:" };  /* rec: the defaults */
	static int quiet = -1;
	struct dt_err err = { 0 };
	struct coord c;

	if (quiet < 0 && (quiet = open("/dev/null", O_WRONLY | O_CLOEXEC)) >= 0) {
		obs_log_set_fd(quiet);  /* one logfmt line per report is noise here */
		trace = getenv("FUZZ_RPC_TRACE") != NULL;
	}
	if (coord_open(&c, &opts, &err)) {
		fprintf(stderr, "fuzz_rpc: coordinator set-up: %s\n", err.msg);
		abort();        /* an in-memory store must open: a bug, not an input */
	}
	for (int k = 0; k < MAX_CALLS && size >= 3; k++) {
		uint8_t sel = data[0];
		size_t len = (size_t)data[1] | (size_t)data[2] << 8;

		data += 3;
		size -= 3;
		if (len > size)
			len = size;
		one_call(&c, sel, data, len);
		data += len;
		size -= len;
	}
	coord_close(&c);
	return 0;
}

#ifndef DT_FUZZ_LIBFUZZER
/* ---- fuzz_rpc_replay: the corpus without libFuzzer, and the seeds ---- */

#include <dirent.h>
#include <sys/stat.h>

#include "dratopo/v1/agent.pb-c.h"
#include "dratopo/v1/fleet.pb-c.h"
#include "dratopo/v1/plan.pb-c.h"

static int method_index(const char *path)
{
	for (size_t i = 0; i < coord_n_methods; i++)
		if (!strcmp(coord_methods[i].path, path))
			return (int)i;
	abort();
}

/* Append one call record to buf. */
static size_t put_call(uint8_t *buf, size_t at, const char *path, bool identity,
		       const ProtobufCMessage *msg)
{
	size_t len = protobuf_c_message_get_packed_size(msg);

	buf[at] = (uint8_t)(method_index(path) | (identity ? IDENTITY_BIT : 0));
	buf[at + 1] = (uint8_t)(len & 0xff);
	buf[at + 2] = (uint8_t)(len >> 8);
	protobuf_c_message_pack(msg, buf + at + 3);
	return at + 3 + len;
}

static int write_seed(const char *dir, const char *name, const uint8_t *buf, size_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (!(f = fopen(path, "wb")) || fwrite(buf, 1, len, f) != len || fclose(f)) {
		fprintf(stderr, "fuzz_rpc_replay: %s: %s\n", path, strerror(errno));
		return 1;
	}
	return 0;
}

/* A p5.48xlarge-like report: one root with a GPU and an EFA. */
static void seed_report(Dratopo__V1__TopologyReport *r, Dratopo__V1__Device *d,
			Dratopo__V1__Device **dp, const char *node)
{
	dratopo__v1__topology_report__init(r);
	dratopo__v1__device__init(&d[0]);
	dratopo__v1__device__init(&d[1]);
	d[0].bdf = (char *)"0000:53:00.0";
	d[0].kind = DRATOPO__V1__DEVICE_KIND__DEVICE_KIND_GPU;
	d[0].vendor = 0x10de;
	d[0].device = 0x2330;
	d[0].pcie_root = (char *)"pci0000:44";
	d[0].numa_case = DRATOPO__V1__DEVICE__NUMA_NUMA_NODE;
	d[0].link_speed = (char *)"32.0 GT/s PCIe";
	d[0].link_width = 16;
	d[1].bdf = (char *)"0000:4f:00.0";
	d[1].kind = DRATOPO__V1__DEVICE_KIND__DEVICE_KIND_EFA;
	d[1].vendor = 0x1d0f;
	d[1].device = 0xefa1;
	d[1].pcie_root = (char *)"pci0000:44";
	d[1].rdma_device = (char *)"rdmap79s0";
	dp[0] = &d[0];
	dp[1] = &d[1];
	r->node_name = (char *)node;
	r->instance_type = (char *)"p5.48xlarge";
	r->n_devices = 2;
	r->devices = dp;
	r->sequence = 1;
	r->agent_version = (char *)"0.1.0";
	r->boot_id = (char *)"seed";
}

static int make_seeds(const char *dir)
{
	static uint8_t buf[1 << 16];
	Dratopo__V1__TopologyReport r, r2;
	Dratopo__V1__Device d[2], d2[2], *dp[2], *dp2[2];
	Dratopo__V1__GetNodeRequest gn = DRATOPO__V1__GET_NODE_REQUEST__INIT;
	Dratopo__V1__ListNodesRequest ln = DRATOPO__V1__LIST_NODES_REQUEST__INIT;
	Dratopo__V1__ListTypesRequest lt = DRATOPO__V1__LIST_TYPES_REQUEST__INIT;
	Dratopo__V1__GetHwdbEntryRequest he = DRATOPO__V1__GET_HWDB_ENTRY_REQUEST__INIT;
	Dratopo__V1__PlanRequest pr = DRATOPO__V1__PLAN_REQUEST__INIT;
	Dratopo__V1__Manifest man = DRATOPO__V1__MANIFEST__INIT, *mp = &man;
	size_t n;
	int rc = 0;

	mkdir(dir, 0755);
	seed_report(&r, d, dp, "node-01");
	seed_report(&r2, d2, dp2, "node-02");
	r2.instance_type = (char *)"p7.48xlarge";       /* unknown to hwdb */
	gn.name = (char *)"node-01";
	ln.verdict = DRATOPO__V1__VERDICT__VERDICT_DRIFT;
	ln.plannable_filter_case = DRATOPO__V1__LIST_NODES_REQUEST__PLANNABLE_FILTER_PLANNABLE;
	ln.plannable = true;
	he.instance_type = (char *)"p5.48xlarge";
	man.name = (char *)"pods.yaml";
	man.content = (char *)"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
		      "spec: {containers: [{name: c, image: x}]}\n";
	pr.n_manifests = 1;
	pr.manifests = &mp;

	n = put_call(buf, 0, "/dratopo.v1.Coordinator/Report", true, &r.base);
	n = put_call(buf, n, "/dratopo.v1.Fleet/GetNode", false, &gn.base);
	rc |= write_seed(dir, "report-then-get", buf, n);
	n = put_call(buf, 0, "/dratopo.v1.Coordinator/Report", false, &r2.base);
	r2.node_name = (char *)"node-03";
	n = put_call(buf, n, "/dratopo.v1.Coordinator/Report", false, &r2.base);
	n = put_call(buf, n, "/dratopo.v1.Fleet/ListTypes", false, &lt.base);
	he.instance_type = (char *)"p7.48xlarge";
	n = put_call(buf, n, "/dratopo.v1.Fleet/GetHwdbEntry", false, &he.base);
	rc |= write_seed(dir, "learn-unknown-type", buf, n);
	n = put_call(buf, 0, "/dratopo.v1.Coordinator/Report", true, &r2.base);
	rc |= write_seed(dir, "report-wrong-identity", buf, n);
	n = put_call(buf, 0, "/dratopo.v1.Fleet/ListNodes", false, &ln.base);
	he.instance_type = (char *)"p5.48xlarge";
	n = put_call(buf, n, "/dratopo.v1.Fleet/GetHwdbEntry", false, &he.base);
	gn.name = (char *)"nobody";
	n = put_call(buf, n, "/dratopo.v1.Fleet/GetNode", false, &gn.base);
	rc |= write_seed(dir, "queries", buf, n);
	n = put_call(buf, 0, "/dratopo.v1.Coordinator/Report", false, &r.base);
	n = put_call(buf, n, "/dratopo.v1.Planner/Plan", false, &pr.base);
	rc |= write_seed(dir, "report-then-plan", buf, n);
	return rc;
}

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	static uint8_t buf[1 << 20];
	size_t n;

	if (!f) {
		fprintf(stderr, "fuzz_rpc_replay: %s: %s\n", path, strerror(errno));
		return 1;
	}
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	LLVMFuzzerTestOneInput(buf, n);
	return 0;
}

/* Every regular file of dir, in no particular order. */
static int replay_dir(const char *dir, unsigned *count)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int rc = 0;

	if (!d)
		return replay_file(dir) || (++*count, 0);
	while ((e = readdir(d))) {
		char path[4096];
		struct stat st;

		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (e->d_name[0] != '.' && !stat(path, &st) && S_ISREG(st.st_mode)) {
			rc |= replay_file(path);
			++*count;
		}
	}
	closedir(d);
	return rc;
}

int main(int argc, char **argv)
{
	unsigned count = 0;
	int rc = 0;

	if (argc == 3 && !strcmp(argv[1], "--seeds"))
		return make_seeds(argv[2]);
	if (argc < 2) {
		fprintf(stderr, "usage: fuzz_rpc_replay DIR|FILE... | --seeds DIR\n");
		return 2;
	}
	for (int i = 1; i < argc; i++)
		rc |= replay_dir(argv[i], &count);
	printf("fuzz_rpc_replay: %u inputs, no crash\n", count);
	return rc || !count;
}
#endif
