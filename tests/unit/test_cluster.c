/* test_cluster.c - NodeTopology and LearnedType objects without an API
 * server: the status made from a node's record and topology (verdict,
 * differences, why, devices by PCIe root with their attributes, host
 * facts), read back into a report that a fresh fleet restores to the same
 * state, so that the node's next report there is a heartbeat and the
 * status it makes has the same digest; staleness worded the same however
 * long the silence; digests blind to moments and key order; bad objects
 * refused with the field named; learned types and their names. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cluster.h"
#include "dt_test.h"
#include "hwdb.h"

#define S ((int64_t)1000000000)
#define T0 (1790000000 * S)

/* A p5.48xlarge-like node: hwdb's devices, numbered so that address order
 * and root order differ (the highest root holds the lowest addresses), one
 * GPU with subsystem ids; without GPU drop_gpu, and the last EFA without a
 * root when unroot. */
struct node_devs {
	struct rec_device d[64];
	char bdf[64][16], root[64][48], rdma[64][16];
	size_t n;
};

static void p5_devices(struct node_devs *v, size_t drop_gpu, bool unroot)
{
	const struct hwdb_type *t = hwdb_lookup("p5.48xlarge");
	size_t total;

	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	memset(v, 0, sizeof(*v));
	total = t->n_gpus + t->n_efas;
	for (size_t i = 0; i < total; i++) {
		bool gpu = i < t->n_gpus;
		const struct hwdb_device *h = gpu ? &t->gpus[i] : &t->efas[i - t->n_gpus];
		struct rec_device *d = &v->d[v->n];

		if (gpu && i == drop_gpu)
			continue;
		snprintf(v->bdf[v->n], 16, "0000:%02zx:00.0", 0xf0 - i * 4);
		snprintf(v->root[v->n], 48, "%s", unroot && i == total - 1 ? "" : h->pcie_root);
		snprintf(v->rdma[v->n], 16, gpu ? "" : "rdmap%zus0", i);
		*d = (struct rec_device){
			.bdf = v->bdf[v->n], .kind = gpu ? TOPO_GPU : TOPO_EFA,
			.vendor = gpu ? t->gpu_vendor : HWDB_PCI_VENDOR_AMAZON,
			.device = gpu ? t->gpu_device : t->efa_device,
			.subsystem_vendor = i == 0 ? 0x10de : 0, .subsystem_device = i == 0 ? 0x16c1 : 0,
			.pcie_root = v->root[v->n], .numa_node = h->numa_node,
			.link_speed = "32.0 GT/s PCIe", .link_width = 16, .rdma_device = v->rdma[v->n],
		};
		v->n++;
	}
}

/* Devices in address order, as an agent sends them. */
static int by_bdf(const void *a, const void *b)
{
	return strcmp(((const struct rec_device *)a)->bdf, ((const struct rec_device *)b)->bdf);
}

static struct rec_report p5_report(const char *node, struct node_devs *v, uint64_t seq,
				   int64_t at)
{
	qsort(v->d, v->n, sizeof(v->d[0]), by_bdf);
	return (struct rec_report){
		.node_name = node, .instance_type = "p5.48xlarge", .devices = v->d,
		.n_devices = v->n, .cpus = 192, .memory_mib = 2097152, .agent_version = "0.1.0",
		.boot_id = "run-1", .sequence = seq, .probed_ns = at - S, .received_ns = at,
	};
}

static void report(struct rec_fleet *f, const struct rec_report *r, struct rec_outcome *o)
{
	struct dt_err err = { 0 };

	CU_ASSERT_EQUAL_FATAL(rec_report(f, r, o, &err), 0);
}

/* The status a fleet's node makes, stale or not as of now. */
static json_object *status_of(struct rec_fleet *f, const char *name, int64_t now)
{
	struct rec_node n;
	struct topo t;
	const struct hwdb_type *entry;
	json_object *st;

	CU_ASSERT_EQUAL_FATAL(rec_fleet_node(f, name, 0, &n, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(rec_node_topology(f, name, &t, &entry, NULL), 0);
	st = cluster_node_status(&(struct cluster_node_view){
		&n, &t, now - n.received_ns > 90 * S, 90 * S });
	rec_node_free(&n);
	topo_free(&t);
	return st;
}

static json_object *object_of(const char *name, json_object *status)
{
	json_object *o = json_object_new_object(), *meta = json_object_new_object();

	json_object_object_add(meta, "name", json_object_new_string(name));
	json_object_object_add(o, "metadata", meta);
	json_object_object_add(o, "status", json_object_get(status));
	return o;
}

static const char *str_at(json_object *o, const char *key)
{
	return kube_json_str(o, key, NULL);
}

static void test_status_fields(void)
{
	struct rec_fleet *f = rec_fleet_new(NULL);
	struct node_devs v;
	struct rec_report r;
	struct rec_outcome o;
	json_object *st, *roots, *root0, *gpu;

	p5_devices(&v, 99, false);
	r = p5_report("gpu-a", &v, 7, T0);
	report(f, &r, &o);
	rec_outcome_free(&o);
	st = status_of(f, "gpu-a", T0);
	DT_ASSERT_STR(str_at(st, "instanceType"), "p5.48xlarge");
	DT_ASSERT_STR(str_at(st, "verdict"), "match");
	CU_ASSERT_EQUAL(json_object_get_int(json_object_object_get(st, "gpus")), 8);
	CU_ASSERT_EQUAL(json_object_get_int(json_object_object_get(st, "efas")), 32);
	CU_ASSERT_TRUE(json_object_get_boolean(json_object_object_get(st, "plannable")));
	CU_ASSERT_PTR_NULL(json_object_object_get(st, "why"));
	CU_ASSERT_PTR_NULL(json_object_object_get(st, "differences"));
	DT_ASSERT_STR(str_at(st, "shape"), "v1 8*(gpu1x10de:2330+efa4x1d0f:efa1)");
	DT_ASSERT_STR(kube_json_str(st, "agent", "runId", NULL), "run-1");
	CU_ASSERT_EQUAL(json_object_get_int(kube_json_get(st, "agent", "sequence", NULL)), 7);
	CU_ASSERT_EQUAL(json_object_get_int(kube_json_get(st, "host", "cpus", NULL)), 192);
	DT_ASSERT_STR(str_at(st, "lastReportTime"), "2026-09-21T14:13:20Z");
	DT_ASSERT_STR(str_at(st, "probeTime"), "2026-09-21T14:13:19Z");
	roots = json_object_object_get(st, "pcieRoots");
	CU_ASSERT_EQUAL(json_object_array_length(roots), 8);
	root0 = json_object_array_get_idx(roots, 0);
	gpu = json_object_array_get_idx(json_object_object_get(root0, "gpus"), 0);
	DT_ASSERT_STR(str_at(gpu, "vendor"), "10de");
	DT_ASSERT_STR(str_at(gpu, "device"), "2330");
	DT_ASSERT_STR(str_at(gpu, "linkSpeed"), "32.0 GT/s PCIe");
	CU_ASSERT_EQUAL(json_object_get_int(json_object_object_get(gpu, "linkWidth")), 16);
	CU_ASSERT_PTR_NOT_NULL(str_at(gpu, "model"));
	CU_ASSERT_EQUAL(json_object_array_length(json_object_object_get(root0, "efas")), 4);
	CU_ASSERT_PTR_NULL(json_object_object_get(st, "unrooted"));
	json_object_put(st);
	rec_fleet_free(f);
}

/* Written, read back by a new leader, restored: the same node, the same
 * status, and the agent's next report of the same devices a heartbeat. */
static void test_round_trip_restores_heartbeat(void)
{
	struct rec_fleet *a = rec_fleet_new(NULL), *b = rec_fleet_new(NULL);
	struct node_devs v, w;
	struct rec_report r, again;
	struct rec_outcome o;
	struct cluster_node_rec rec;
	struct rec_changes ch = { 0 };
	struct dt_err err = { 0 };
	json_object *st, *obj, *st_b, *unrooted;

	p5_devices(&v, 3, true);                      /* drift: a GPU is missing */
	r = p5_report("gpu-b", &v, 41, T0);
	report(a, &r, &o);
	CU_ASSERT_EQUAL(o.node.verdict, REC_DRIFT);
	rec_outcome_free(&o);
	st = status_of(a, "gpu-b", T0);
	DT_ASSERT_STR(str_at(st, "verdict"), "drift");
	CU_ASSERT_FALSE(json_object_get_boolean(json_object_object_get(st, "plannable")));
	DT_ASSERT_STR(str_at(st, "why"), "drift: EFA 0000:54:00.0: no PCIe root (and 4 more)");
	CU_ASSERT(json_object_array_length(json_object_object_get(st, "differences")) >= 1);
	unrooted = json_object_object_get(st, "unrooted");
	CU_ASSERT_EQUAL(json_object_array_length(json_object_object_get(unrooted, "efas")), 1);
	CU_ASSERT_PTR_NULL(json_object_object_get(unrooted, "gpus"));
	CU_ASSERT_TRUE(json_object_get_boolean(json_object_object_get(st, "drifted")));
	obj = object_of("gpu-b", st);
	CU_ASSERT_EQUAL_FATAL(cluster_node_parse(obj, &rec, &err), 0);
	CU_ASSERT_EQUAL(rec.report.n_devices, v.n);
	CU_ASSERT_EQUAL(rec.stored.verdict, REC_DRIFT);
	CU_ASSERT_FALSE(rec.stale);
	for (size_t i = 1; i < rec.report.n_devices; i++)
		CU_ASSERT(strcmp(rec.devices[i - 1].bdf, rec.devices[i].bdf) < 0);
	CU_ASSERT_EQUAL(rec.report.sequence, 41);
	CU_ASSERT_EQUAL(rec.report.received_ns, T0);
	CU_ASSERT_EQUAL_FATAL(rec_fleet_restore_node(b, &rec.report, &rec.stored, &err), 0);
	CU_ASSERT_EQUAL_FATAL(rec_fleet_restore_done(b, &ch, &err), 0);
	CU_ASSERT_EQUAL(ch.n_nodes, 0);         /* re-verified: nothing to write back */
	rec_changes_free(&ch);
	cluster_node_rec_free(&rec);
	st_b = status_of(b, "gpu-b", T0);
	CU_ASSERT_EQUAL(cluster_status_digest(st_b), cluster_status_digest(st));
	/* the agent's next report: same devices, as it sends them */
	p5_devices(&w, 3, true);
	again = p5_report("gpu-b", &w, 42, T0 + 30 * S);
	report(b, &again, &o);
	CU_ASSERT_TRUE(o.heartbeat);
	CU_ASSERT_FALSE(o.changed);
	CU_ASSERT_FALSE(o.replay);
	rec_outcome_free(&o);
	/* and an older one is a replay */
	again = p5_report("gpu-b", &w, 40, T0 + 31 * S);
	report(b, &again, &o);
	CU_ASSERT_TRUE(o.replay);
	rec_outcome_free(&o);
	json_object_put(st_b);
	json_object_put(obj);
	json_object_put(st);
	rec_fleet_free(a);
	rec_fleet_free(b);
}

/* Staleness is worded from the last report heard, so the text (and the
 * digest) stays the same however long the node stays silent. */
static void test_stale_wording(void)
{
	struct rec_fleet *f = rec_fleet_new(NULL);
	struct node_devs v;
	struct rec_report r;
	struct rec_outcome o;
	struct cluster_node_rec rec;
	struct dt_err err = { 0 };
	json_object *fresh, *st1, *st2, *obj;

	p5_devices(&v, 99, false);
	r = p5_report("gpu-c", &v, 1, T0);
	report(f, &r, &o);
	rec_outcome_free(&o);
	fresh = status_of(f, "gpu-c", T0 + 90 * S);
	st1 = status_of(f, "gpu-c", T0 + 91 * S);
	st2 = status_of(f, "gpu-c", T0 + 3600 * S);
	CU_ASSERT_FALSE(cluster_status_stale(fresh));
	CU_ASSERT_TRUE(cluster_status_stale(st1));
	DT_ASSERT_STR(str_at(st1, "why"), "stale: silent since 2026-09-21T14:13:20Z (stale after 90s)");
	CU_ASSERT_FALSE(json_object_get_boolean(json_object_object_get(st1, "plannable")));
	CU_ASSERT_NOT_EQUAL(cluster_status_digest(fresh), cluster_status_digest(st1));
	CU_ASSERT_EQUAL(cluster_status_digest(st1), cluster_status_digest(st2));
	obj = object_of("gpu-c", st1);
	CU_ASSERT_EQUAL(cluster_node_parse(obj, &rec, &err), 0);
	CU_ASSERT_TRUE(rec.stale);
	cluster_node_rec_free(&rec);
	json_object_put(obj);
	json_object_put(fresh);
	json_object_put(st1);
	json_object_put(st2);
	rec_fleet_free(f);
}

static void test_digest(void)
{
	json_object *a = json_tokener_parse("{\"verdict\":\"match\",\"gpus\":8,\"pcieRoots\":"
					    "[{\"name\":\"r\",\"gpus\":[{\"bdf\":\"x\"}]}],"
					    "\"lastReportTime\":\"2026-01-01T00:00:00Z\","
					    "\"agent\":{\"sequence\":1}}");
	json_object *b = json_tokener_parse("{\"agent\":{\"sequence\":9,\"runId\":\"z\"},"
					    "\"pcieRoots\":[{\"gpus\":[{\"bdf\":\"x\"}],\"name\":"
					    "\"r\"}],\"gpus\":8,\"verdict\":\"match\"}");
	json_object *c = json_tokener_parse("{\"verdict\":\"match\",\"gpus\":7,\"pcieRoots\":"
					    "[{\"name\":\"r\",\"gpus\":[{\"bdf\":\"x\"}]}]}");
	json_object *d = json_tokener_parse("{\"verdict\":\"match\",\"gpus\":\"8\",\"pcieRoots\":"
					    "[{\"name\":\"r\",\"gpus\":[{\"bdf\":\"x\"}]}]}");

	CU_ASSERT_EQUAL(cluster_status_digest(a), cluster_status_digest(b));
	CU_ASSERT_NOT_EQUAL(cluster_status_digest(a), cluster_status_digest(c));
	CU_ASSERT_NOT_EQUAL(cluster_status_digest(a), cluster_status_digest(d));
	CU_ASSERT_NOT_EQUAL(cluster_status_digest(a), 0);
	CU_ASSERT_EQUAL(cluster_status_digest(NULL), 0);
	json_object_put(a);
	json_object_put(b);
	json_object_put(c);
	json_object_put(d);
}

static void expect_refused(const char *json, const char *msg)
{
	json_object *o = json_tokener_parse(json);
	struct cluster_node_rec rec;
	struct dt_err err = { 0 };

	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT_EQUAL(cluster_node_parse(o, &rec, &err), -EINVAL);
	DT_ASSERT_STR(err.msg, msg);
	json_object_put(o);
}

static void test_bad_objects(void)
{
	expect_refused("{\"metadata\":{\"name\":\"n\"}}", "NodeTopology n: status: none yet");
	expect_refused("{\"metadata\":{\"name\":\"n\"},\"status\":{\"verdict\":\"match\"}}",
		       "NodeTopology n: status.instanceType: required");
	expect_refused("{\"metadata\":{\"name\":\"n\"},\"status\":{\"instanceType\":\"t\","
		       "\"verdict\":\"fine\"}}", "NodeTopology n: status.verdict: \"fine\" is none "
		       "of match, drift, unknown, learned");
	expect_refused("{\"metadata\":{\"name\":\"n\"},\"status\":{\"instanceType\":\"t\","
		       "\"verdict\":\"match\",\"pcieRoots\":[{\"name\":\"r\",\"gpus\":[{\"bdf\":"
		       "\"0000:01:00.0\",\"vendor\":\"10de\",\"device\":\"23\"}]}]}}",
		       "NodeTopology n: status.pcieRoots[0].gpus[0].device: \"23\" is not 4 hex "
		       "digits");
	expect_refused("{\"metadata\":{\"name\":\"n\"},\"status\":{\"instanceType\":\"t\","
		       "\"verdict\":\"match\",\"pcieRoots\":[{\"gpus\":[]}]}}",
		       "NodeTopology n: status.pcieRoots[0]: name: required");
	expect_refused("{\"metadata\":{\"name\":\"n\"},\"status\":{\"instanceType\":\"t\","
		       "\"verdict\":\"match\",\"lastReportTime\":\"yesterday\"}}",
		       "NodeTopology n: status.lastReportTime: parsing time \"yesterday\" as "
		       "\"2006-01-02T15:04:05Z07:00\": cannot parse \"yesterday\" as \"2006\"");
}

static void test_learned(void)
{
	char n1[] = "gpu-x", n2[] = "gpu-y", type[] = "p9.test", key[] = "v1 2*(gpu1x10de:2330)";
	char src[] = "instanceTypes: []\n";
	char *nodes[] = { n1, n2 };
	struct rec_learned l = { type, key, src, nodes, 2, T0 }, back;
	json_object *st = cluster_learned_status(&l, 2, 0), *obj;
	struct dt_err err = { 0 };
	char name[256];

	DT_ASSERT_STR(str_at(st, "learnedTime"), "2026-09-21T14:13:20Z");
	obj = object_of("p9.test", st);
	CU_ASSERT_EQUAL_FATAL(cluster_learned_parse(obj, &back, &err), 0);
	DT_ASSERT_STR(back.type, "p9.test");
	DT_ASSERT_STR(back.shape_key, l.shape_key);
	DT_ASSERT_STR(back.source, l.source);
	CU_ASSERT_EQUAL(back.n_nodes, 2);
	DT_ASSERT_STR(back.nodes[1], "gpu-y");
	CU_ASSERT_EQUAL(back.learned_ns, T0);
	rec_learned_free(&back);
	json_object_put(obj);
	json_object_put(st);
	DT_ASSERT_STR(cluster_learned_name("p5e.48xlarge", name, sizeof(name)), "p5e.48xlarge");
	DT_ASSERT_STR(cluster_learned_name("Custom_Box", name, sizeof(name)),
		      cluster_learned_name("Custom_Box", name, sizeof(name)));
	CU_ASSERT_EQUAL(strncmp(name, "type-", 5), 0);
	CU_ASSERT_EQUAL(strlen(name), 21);
}

DT_SUITE_MAIN("cluster", DT_TEST(test_status_fields), DT_TEST(test_round_trip_restores_heartbeat),
	      DT_TEST(test_stale_wording), DT_TEST(test_digest), DT_TEST(test_bad_objects),
	      DT_TEST(test_learned))
