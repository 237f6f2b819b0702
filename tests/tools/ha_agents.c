/* ha_agents.c - the HA test's agents and its checks (tests/e2e/ha.sh).
 *
 *   ha_agents send FIXTURES ADDR[,ADDR...] NODES ROUNDS PAUSE_MS
 *       NODES simulated agents (ha-000 ...) report ROUNDS times each, with a
 *       pause between rounds, to whichever coordinator answers: a call
 *       refused (a follower: UNAVAILABLE) or timed out (a process stopped
 *       or killed) goes to the next address, as an agent reconnecting
 *       through the Service would. All but the last three nodes are
 *       p5.48xlarge, healthy or, in some rounds, the degraded fixture (a
 *       GPU and two EFAs gone: drift); the last three report the unknown
 *       fixture's type, which the fleet learns from two of them. Prints
 *       "sent NODE SEQ VARIANT" before each try and "ack NODE SEQ VERDICT
 *       VARIANT ADDR" once acknowledged (flushed: the test reads it live).
 *   ha_agents check KUBECONFIG LOG
 *       Every node's NodeTopology reflects its last acknowledged report in
 *       LOG (verdict and GPU count), or a newer report it sent (one that
 *       was written but whose ack was lost with the leader); the learned
 *       type's nodes are `learned`. Prints one line per problem; exit 1.
 *   ha_agents audit AUDIT_LOG WHO SINCE
 *       Write requests (create, update, patch, delete) in the API server's
 *       audit log whose user agent contains WHO and that were received
 *       after SINCE (RFC 3339, as the log writes times): one line each,
 *       and their count last. Exit 0. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent_report.h"
#include "cluster.h"
#include "dratopo/v1/agent.pb-c.h"
#include "kube.h"
#include "probe.h"
#include "rpc_client.h"

#define REPORT "/dratopo.v1.Coordinator/Report"
#define CALL_MS 5000
#define GIVE_UP_MS 120000
#define MAX_NODES 512
#define MAX_ADDRS 8
#define N_UNKNOWN 3

enum variant { HEALTHY, DEGRADED, UNKNOWN_TYPE };
static const char *const variant_names[] = { "healthy", "degraded", "unknown" };
static const int variant_gpus[] = { 8, 7, 8 };

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static const char *verdict_name(Dratopo__V1__Verdict v)
{
	switch (v) {
	case DRATOPO__V1__VERDICT__VERDICT_MATCH: return "match";
	case DRATOPO__V1__VERDICT__VERDICT_DRIFT: return "drift";
	case DRATOPO__V1__VERDICT__VERDICT_UNKNOWN_TYPE: return "unknown";
	case DRATOPO__V1__VERDICT__VERDICT_LEARNED: return "learned";
	default: return "unspecified";
	}
}

/* ---- send ---- */

struct sender {
	struct topo t[3];               /* by variant */
	char *addrs[MAX_ADDRS];
	struct rpc_channel *ch[MAX_ADDRS];
	int n_addrs, cur;
	char run[32];
};

static enum variant variant_of(int node, int nodes, int round)
{
	if (node >= nodes - N_UNKNOWN)
		return UNKNOWN_TYPE;
	return (round + node) % 5 == 4 ? DEGRADED : HEALTHY;
}

/* One report, tried until a coordinator acknowledges it. */
static int send_one(struct sender *s, const char *node, uint64_t seq, enum variant v)
{
	struct agent_report_info info = { node, s->run, seq, (int64_t)time(NULL) * 1000000000,
					  "ha-test" };
	struct dt_diags w;
	struct dt_err err = { 0 };
	uint8_t *buf = NULL;
	size_t len = 0;
	int64_t give_up = now_ms() + GIVE_UP_MS;
	int rc;

	dt_diags_init(&w);
	rc = agent_report_pack(&s->t[v], &info, &buf, &len, &w, &err);
	dt_diags_free(&w);
	if (rc)
		return fprintf(stderr, "ha_agents: %s\n", err.msg), 1;
	while (now_ms() < give_up) {
		struct rpc_status st = { 0 };
		char *resp = NULL;
		size_t rlen = 0;

		printf("sent %s %llu %s\n", node, (unsigned long long)seq, variant_names[v]);
		fflush(stdout);
		rc = rpc_call_bytes(s->ch[s->cur], REPORT, buf, len, CALL_MS, &resp, &rlen, &st,
				    &err);
		if (!rc && st.code == GRPC_STATUS_OK) {
			Dratopo__V1__ReportAck *ack =
				dratopo__v1__report_ack__unpack(NULL, rlen, (const uint8_t *)resp);

			if (ack) {
				printf("ack %s %llu %s %s %s\n", node, (unsigned long long)seq,
				       verdict_name(ack->verdict), variant_names[v],
				       s->addrs[s->cur]);
				fflush(stdout);
				dratopo__v1__report_ack__free_unpacked(ack, NULL);
			}
			free(resp);
			free(buf);
			return ack ? 0 : 1;
		}
		free(resp);
		/* refused or unreachable: the next coordinator, on a new connection */
		rpc_channel_reconnect(s->ch[s->cur], NULL);
		s->cur = (s->cur + 1) % s->n_addrs;
		usleep(100000);
	}
	free(buf);
	fprintf(stderr, "ha_agents: %s seq %llu: no coordinator took it in %d s\n", node,
		(unsigned long long)seq, GIVE_UP_MS / 1000);
	return 1;
}

static int do_send(char **argv)
{
	static const char *const fixtures[3] = { "p5.48xlarge", "p5.48xlarge-degraded", "unknown" };
	struct sender s = { .cur = 0 };
	struct rpc_tls tls = { .insecure = true };
	struct dt_err err = { 0 };
	int nodes = atoi(argv[3]), rounds = atoi(argv[4]), pause_ms = atoi(argv[5]), rc = 0;
	char *list = strdup(argv[2]), *save = NULL;

	if (nodes <= N_UNKNOWN || nodes > MAX_NODES || rounds < 1 || !list)
		return fprintf(stderr, "ha_agents: NODES must be %d to %d\n", N_UNKNOWN + 1,
			       MAX_NODES), 2;
	for (int v = 0; v < 3; v++) {
		char root[600];

		snprintf(root, sizeof(root), "%s/%s", argv[1], fixtures[v]);
		if (probe_run(root, NULL, &s.t[v], &err))
			return fprintf(stderr, "ha_agents: %s\n", err.msg), 1;
	}
	for (char *a = strtok_r(list, ",", &save); a && s.n_addrs < MAX_ADDRS;
	     a = strtok_r(NULL, ",", &save)) {
		s.addrs[s.n_addrs] = a;
		if (rpc_channel_open(a, &tls, &s.ch[s.n_addrs], &err))
			return fprintf(stderr, "ha_agents: %s\n", err.msg), 1;
		s.n_addrs++;
	}
	snprintf(s.run, sizeof(s.run), "ha-run-%d", (int)getpid());
	for (int r = 0; r < rounds && !rc; r++) {
		for (int i = 0; i < nodes && !rc; i++) {
			char name[16];

			snprintf(name, sizeof(name), "ha-%03d", i);
			rc = send_one(&s, name, (uint64_t)r + 1, variant_of(i, nodes, r));
		}
		usleep((useconds_t)pause_ms * 1000);
	}
	for (int i = 0; i < s.n_addrs; i++)
		rpc_channel_close(s.ch[i]);
	for (int v = 0; v < 3; v++)
		topo_free(&s.t[v]);
	free(list);
	return rc;
}

/* ---- check ---- */

struct seen {
	char node[16];
	unsigned long long ack_seq;
	char ack_verdict[16], ack_variant[16];
	char sent_variant[256][16];     /* by seq, what was sent */
};

static struct seen seen[MAX_NODES];
static int n_seen;

static struct seen *seen_of(const char *node)
{
	for (int i = 0; i < n_seen; i++)
		if (!strcmp(seen[i].node, node))
			return &seen[i];
	if (n_seen == MAX_NODES)
		return NULL;
	snprintf(seen[n_seen].node, sizeof(seen[0].node), "%s", node);
	return &seen[n_seen++];
}

static int read_log(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[512], node[64], verdict[32], variant[32];
	unsigned long long seq;

	if (!f)
		return fprintf(stderr, "ha_agents: %s: %s\n", path, strerror(errno)), -1;
	while (fgets(line, sizeof(line), f)) {
		struct seen *s;

		if (sscanf(line, "ack %63s %llu %31s %31s", node, &seq, verdict, variant) == 4 &&
		    (s = seen_of(node))) {
			s->ack_seq = seq;
			snprintf(s->ack_verdict, sizeof(s->ack_verdict), "%s", verdict);
			snprintf(s->ack_variant, sizeof(s->ack_variant), "%s", variant);
		} else if (sscanf(line, "sent %63s %llu %31s", node, &seq, variant) == 3 &&
			   seq < 256 && (s = seen_of(node))) {
			snprintf(s->sent_variant[seq], sizeof(s->sent_variant[0]), "%s", variant);
		}
	}
	fclose(f);
	return 0;
}

static int gpus_of(const char *variant)
{
	for (int v = 0; v < 3; v++)
		if (!strcmp(variant, variant_names[v]))
			return variant_gpus[v];
	return -1;
}

struct check {
	int problems, checked, newer;
	int learned_nodes;
};

static int check_object(void *arg, json_object *o)
{
	struct check *ck = arg;
	const char *name = kube_json_str(o, "metadata", "name", NULL);
	const char *verdict = kube_json_str(o, "status", "verdict", NULL);
	json_object *g = kube_json_get(o, "status", "gpus", NULL);
	json_object *sq = kube_json_get(o, "status", "agent", "sequence", NULL);
	unsigned long long seq = sq ? (unsigned long long)json_object_get_int64(sq) : 0;
	int gpus = g ? json_object_get_int(g) : -1;
	struct seen *s = NULL;
	const char *want_variant;

	for (int i = 0; name && i < n_seen; i++)
		if (!strcmp(seen[i].node, name))
			s = &seen[i];
	if (!s || !s->ack_seq)
		return 0;               /* not ours, or never acknowledged */
	ck->checked++;
	want_variant = s->ack_variant;
	if (seq > s->ack_seq && seq < 256 && s->sent_variant[seq][0]) {
		want_variant = s->sent_variant[seq];    /* written, its ack lost with a leader */
		ck->newer++;
	}
	if (!strcmp(want_variant, "unknown")) {
		ck->learned_nodes++;
		if (!verdict || strcmp(verdict, "learned")) {
			printf("%s: verdict %s, the learned type's node should be learned\n", name,
			       verdict ? verdict : "(none)");
			ck->problems++;
		}
	} else if (!verdict ||
		   strcmp(verdict, !strcmp(want_variant, "degraded") ? "drift" : "match")) {
		printf("%s: verdict %s, its last acknowledged report (seq %llu, %s) says %s\n", name,
		       verdict ? verdict : "(none)", s->ack_seq, s->ack_variant, s->ack_verdict);
		ck->problems++;
	}
	if (gpus != gpus_of(want_variant)) {
		printf("%s: %d GPUs, its report (seq %llu, %s) has %d\n", name, gpus, s->ack_seq,
		       want_variant, gpus_of(want_variant));
		ck->problems++;
	}
	return 0;
}

static int do_check(char **argv)
{
	struct kube_config cfg;
	struct kube_client *c = NULL;
	struct kube_ref ref = { &cluster_res_nodetopologies, NULL, NULL, NULL };
	struct dt_err err = { 0 };
	struct check ck = { 0 };
	int acked = 0;

	if (read_log(argv[2]))
		return 2;
	if (kube_config_from_kubeconfig(argv[1], NULL, &cfg, &err) ||
	    kube_client_new(&cfg, NULL, &c, &err) ||
	    kube_list(c, &ref, NULL, (kube_item_fn)check_object, &ck, NULL, 0, &err))
		return fprintf(stderr, "ha_agents: %s\n", err.msg), 2;
	for (int i = 0; i < n_seen; i++)
		acked += seen[i].ack_seq > 0;
	if (ck.checked != acked) {
		printf("%d nodes were acknowledged, %d have a NodeTopology\n", acked, ck.checked);
		ck.problems++;
	}
	printf("%d nodes checked, %d reflect a report newer than their last ack, %d problems\n",
	       ck.checked, ck.newer, ck.problems);
	kube_client_free(c);
	kube_config_free(&cfg);
	return ck.problems ? 1 : 0;
}

/* ---- audit ---- */

static int do_audit(char **argv)
{
	FILE *f = fopen(argv[1], "r");
	static char line[1 << 16];
	int n = 0;

	if (!f)
		return fprintf(stderr, "ha_agents: %s: %s\n", argv[1], strerror(errno)), 2;
	while (fgets(line, sizeof(line), f)) {
		json_object *o = json_tokener_parse(line);
		const char *ua = kube_json_str(o, "userAgent", NULL);
		const char *verb = kube_json_str(o, "verb", NULL);
		const char *at = kube_json_str(o, "requestReceivedTimestamp", NULL);

		if (ua && verb && at && strstr(ua, argv[2]) && strcmp(at, argv[3]) > 0 &&
		    (!strcmp(verb, "create") || !strcmp(verb, "update") || !strcmp(verb, "patch") ||
		     !strcmp(verb, "delete"))) {
			printf("%s %s %s/%s %s\n", at, verb,
			       kube_json_str(o, "objectRef", "resource", NULL) ?: "?",
			       kube_json_str(o, "objectRef", "name", NULL) ?: "",
			       kube_json_str(o, "responseStatus", "code", NULL) ?: "");
			n++;
		}
		json_object_put(o);
	}
	fclose(f);
	printf("%d writes\n", n);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 7 && !strcmp(argv[1], "send"))
		return do_send(argv + 1);
	if (argc == 4 && !strcmp(argv[1], "check"))
		return do_check(argv + 1);
	if (argc == 5 && !strcmp(argv[1], "audit"))
		return do_audit(argv + 1);
	fprintf(stderr, "usage: ha_agents send FIXTURES ADDR[,ADDR...] NODES ROUNDS PAUSE_MS\n"
		"       ha_agents check KUBECONFIG LOG\n"
		"       ha_agents audit AUDIT_LOG WHO SINCE\n");
	return 2;
}
