/* coord_client.c - a test client for dratopo-coordinator that does what a
 * well-behaved agent never does, and a report streamer for the crash test.
 *
 *   coord_client MODE ADDR (--insecure | CERT KEY CA) [ARGS]
 *
 * MODE
 *   garbage          a Report whose payload is not a TopologyReport
 *   oversized        a Report of 5 MiB (over the 4 MiB limit)
 *   nodeadline       a Report without a deadline
 *   silent           opens a Report and never sends its message; while it
 *                    hangs, a ListNodes on another channel must succeed
 *   stream N SYSFS   reports nodes sim-00000 ... sim-N-1 (the probe of the
 *                    fixture SYSFS, one after the other), printing each
 *                    acknowledged name on its own flushed line
 *   hostile NODE SYSFS ROOT  one report for NODE of the probe of SYSFS with
 *                    every string a hostile agent controls set to markup
 *                    and quotes: models, link speeds, RDMA devices, the
 *                    agent version, and the first PCIe root renamed ROOT
 *                    (the instance type is the fixture's DMI product name)
 *
 * The raw modes print "status=NAME" for the refused call (silent: also
 * "others=NAME" for the call made meanwhile) and exit 0 when a status came
 * back; the test compares the names. */
#include <grpc/grpc.h>
#include <grpc/support/time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent_report.h"
#include "dratopo/v1/fleet.pb-c.h"
#include "probe.h"
#include "rpc_client.h"

#define REPORT "/dratopo.v1.Coordinator/Report"
#define LIST "/dratopo.v1.Fleet/ListNodes"
#define CALL_MS 10000

static int raw(struct rpc_channel *ch, const char *mode)
{
	struct rpc_status st = { 0 };
	struct dt_err err = { 0 };
	size_t len = 0;
	char *buf = NULL;
	int64_t deadline = CALL_MS;

	if (!strcmp(mode, "garbage")) {
		buf = strdup("\xff\xff\xff\xff garbage");
		len = strlen(buf);
	} else if (!strcmp(mode, "oversized")) {
		len = 5u << 20;
		buf = calloc(1, len);
		if (buf)
			buf[0] = 0x0a;      /* field 1 (node_name), then a length that lies */
	} else {
		buf = strdup("");
		deadline = 0;
	}
	if (!buf)
		return 1;
	rpc_call_bytes(ch, REPORT, buf, len, deadline, NULL, NULL, &st, &err);
	free(buf);
	printf("status=%s\n", rpc_status_name(st.code));
	return 0;
}

/* A call that sends its headers and never its message. */
static int silent(struct rpc_channel *ch, struct rpc_channel *other)
{
	grpc_completion_queue *cq = grpc_completion_queue_create_for_pluck(NULL);
	grpc_metadata_array md_init, md_trail;
	grpc_status_code code = GRPC_STATUS_OK;
	grpc_slice details = grpc_empty_slice();
	grpc_op ops[3];
	grpc_call *call;
	struct rpc_status st = { 0 };
	struct dt_err err = { 0 };
	Dratopo__V1__ListNodesRequest req = DRATOPO__V1__LIST_NODES_REQUEST__INIT;
	ProtobufCMessage *resp = NULL;
	int tag;

	grpc_metadata_array_init(&md_init);
	grpc_metadata_array_init(&md_trail);
	call = grpc_channel_create_call(rpc_channel_core(ch), NULL, GRPC_PROPAGATE_DEFAULTS, cq,
					grpc_slice_from_static_string(REPORT), NULL,
					gpr_time_add(gpr_now(GPR_CLOCK_REALTIME),
						     gpr_time_from_millis(120000, GPR_TIMESPAN)),
					NULL);
	memset(ops, 0, sizeof(ops));
	ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
	ops[1].op = GRPC_OP_RECV_INITIAL_METADATA;
	ops[1].data.recv_initial_metadata.recv_initial_metadata = &md_init;
	ops[2].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
	ops[2].data.recv_status_on_client.trailing_metadata = &md_trail;
	ops[2].data.recv_status_on_client.status = &code;
	ops[2].data.recv_status_on_client.status_details = &details;
	if (grpc_call_start_batch(call, ops, 3, &tag, NULL) != GRPC_CALL_OK)
		return 1;
	/* Everyone else is still served. */
	rpc_call(other, LIST, &req.base, &dratopo__v1__list_nodes_response__descriptor, CALL_MS,
		 &resp, &st, &err);
	if (resp)
		protobuf_c_message_free_unpacked(resp, NULL);
	printf("others=%s\n", rpc_status_name(st.code));
	grpc_completion_queue_pluck(cq, &tag, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
	printf("status=%s\n", rpc_status_name(code));
	grpc_call_unref(call);
	grpc_slice_unref(details);
	grpc_metadata_array_destroy(&md_init);
	grpc_metadata_array_destroy(&md_trail);
	grpc_completion_queue_shutdown(cq);
	grpc_completion_queue_destroy(cq);
	return 0;
}

/* Report t as node (the run's sequence 1): 0, or the call's error. */
static int send_report(struct rpc_channel *ch, const struct topo *t,
		       const struct agent_report_info *info, struct rpc_status *st,
		       struct dt_err *err)
{
	struct dt_diags w;
	uint8_t *buf = NULL;
	size_t len = 0;
	int rc;

	dt_diags_init(&w);
	rc = agent_report_pack(t, info, &buf, &len, &w, err);
	dt_diags_free(&w);
	if (!rc)
		rc = rpc_call_bytes(ch, REPORT, buf, len, CALL_MS, NULL, NULL, st, err);
	free(buf);
	return rc;
}

static int stream(struct rpc_channel *ch, long n, const char *root)
{
	struct topo t;
	struct dt_err err = { 0 };
	int rc = 0;

	if (probe_run(root, NULL, &t, &err)) {
		fprintf(stderr, "coord_client: %s\n", err.msg);
		return 1;
	}
	for (long i = 0; i < n && !rc; i++) {
		char name[32];
		struct agent_report_info info = { name, "stream", 1, (int64_t)time(NULL) * 1000000000,
						  "test" };
		struct rpc_status st = { 0 };

		snprintf(name, sizeof(name), "sim-%05ld", i);
		rc = send_report(ch, &t, &info, &st, &err);
		if (!rc) {
			printf("%s\n", name);
			fflush(stdout);
		}
	}
	topo_free(&t);
	if (rc)
		fprintf(stderr, "coord_client: %s\n", err.msg);
	return rc ? 1 : 0;
}

/* Markup that does something when a page fails to escape it, without
 * blanks (the coordinator refuses an agent version with one). */
#define HOSTILE(what) "<script>document.body.dataset.pwned='" what "'</script>\"'><img/src=\"x\"/" \
	"onerror=\"document.body.dataset.pwned='" what "'\">"

static int hostile(struct rpc_channel *ch, const char *node, const char *sysfs,
		   const char *root)
{
	struct topo t;
	struct agent_report_info info = { node, "hostile", 1, (int64_t)time(NULL) * 1000000000,
					  HOSTILE("version") };
	struct rpc_status st = { 0 };
	struct dt_err err = { 0 };
	int rc;

	if (probe_run(sysfs, NULL, &t, &err)) {
		fprintf(stderr, "coord_client: %s\n", err.msg);
		return 1;
	}
	for (size_t i = 0; i < t.n_devices; i++) {
		struct topo_device *d = &t.devices[i];

		if (t.n_roots && !strcmp(d->pcie_root, t.roots[0].name))
			snprintf(d->pcie_root, sizeof(d->pcie_root), "%s", root);
		t.devices[i].model = HOSTILE("model");
		snprintf(t.devices[i].link_speed, sizeof(t.devices[i].link_speed), "<b>x</b>");
		snprintf(t.devices[i].rdma_device, sizeof(t.devices[i].rdma_device), "%s",
			 HOSTILE("rdma"));
	}
	rc = send_report(ch, &t, &info, &st, &err);
	topo_free(&t);
	if (rc)
		fprintf(stderr, "coord_client: %s\n", err.msg);
	printf("status=%s\n", rpc_status_name(st.code));
	return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct rpc_tls tls = { 0 };
	struct rpc_channel *ch = NULL, *other = NULL;
	struct dt_err err = { 0 };
	int next, rc;

	if (argc < 4)
		goto usage;
	if (!strcmp(argv[3], "--insecure")) {
		tls.insecure = true;
		next = 4;
	} else if (argc >= 6) {
		tls = (struct rpc_tls){ argv[3], argv[4], argv[5], false };
		next = 6;
	} else {
		goto usage;
	}
	if (rpc_channel_open(argv[2], &tls, &ch, &err) ||
	    rpc_channel_open(argv[2], &tls, &other, &err)) {
		fprintf(stderr, "coord_client: %s\n", err.msg);
		return 1;
	}
	if (!strcmp(argv[1], "stream") && argc == next + 2)
		rc = stream(ch, strtol(argv[next], NULL, 10), argv[next + 1]);
	else if (!strcmp(argv[1], "hostile") && argc == next + 3)
		rc = hostile(ch, argv[next], argv[next + 1], argv[next + 2]);
	else if (!strcmp(argv[1], "silent"))
		rc = silent(ch, other);
	else if (!strcmp(argv[1], "garbage") || !strcmp(argv[1], "oversized") ||
		 !strcmp(argv[1], "nodeadline"))
		rc = raw(ch, argv[1]);
	else
		goto usage;
	rpc_channel_close(ch);
	rpc_channel_close(other);
	return rc;
usage:
	fprintf(stderr, "usage: coord_client garbage|oversized|nodeadline|silent|stream|hostile "
		"ADDR (--insecure | CERT KEY CA) [N SYSFS | NODE SYSFS ROOT]\n");
	return 2;
}
