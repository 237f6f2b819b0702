/* test_reconcile.c - the coordinator's fleet logic, fed device arrays made
 * from hwdb entries: verdicts and their exact differences, learning from a
 * quorum, conflicts, the wrong-hwdb flag, staleness, replays, restore from
 * the records a store would keep, and a fleet of 10,000 nodes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt_test.h"
#include "hwdb.h"
#include "hwdb_catalog.h"
#include "model.h"
#include "reconcile.h"

#define S ((int64_t)1000000000)
#define T0 (1700000000 * S)
#define P5_KEY "v1 8*(gpu1x10de:2330+efa4x1d0f:efa1)"

/* The devices of a node, as a decoded report holds them. */
struct devs {
	struct rec_device d[64];
	char bdf[64][16], root[64][48], rdma[64][16];
	size_t n;
};

/* A node like hwdb's entry for type: GPUs then EFAs at 0000:10:00.0
 * onwards, on the entry's roots. */
static void from_type(const char *type, struct devs *v)
{
	const struct hwdb_type *t = hwdb_lookup(type);

	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	memset(v, 0, sizeof(*v));
	for (size_t i = 0; i < t->n_gpus + t->n_efas; i++) {
		int gpu = i < t->n_gpus;
		const struct hwdb_device *h = gpu ? &t->gpus[i] : &t->efas[i - t->n_gpus];
		struct rec_device *d = &v->d[i];

		snprintf(v->bdf[i], sizeof(v->bdf[i]), "0000:%02zx:00.0", 0x10 + i);
		snprintf(v->root[i], sizeof(v->root[i]), "%s", h->pcie_root ? h->pcie_root : "");
		if (gpu)
			v->rdma[i][0] = '\0';  /* GPUs have no RDMA device */
		else
			snprintf(v->rdma[i], sizeof(v->rdma[i]), "rdmap%zus0", i);
		d->bdf = v->bdf[i];
		d->kind = gpu ? TOPO_GPU : TOPO_EFA;
		d->vendor = gpu ? t->gpu_vendor : HWDB_PCI_VENDOR_AMAZON;
		d->device = gpu ? t->gpu_device : t->efa_device;
		d->pcie_root = v->root[i];
		d->numa_node = h->numa_node;
		d->link_speed = "32.0 GT/s PCIe";
		d->link_width = 16;
		d->rdma_device = v->rdma[i];
	}
	v->n = t->n_gpus + t->n_efas;
}

/* Take device i out (the pointers into v stay right: they are per slot). */
static void drop(struct devs *v, size_t i)
{
	for (size_t k = i; k + 1 < v->n; k++) {
		v->d[k] = v->d[k + 1];
		memcpy(v->bdf[k], v->bdf[k + 1], sizeof(v->bdf[k]));
		memcpy(v->root[k], v->root[k + 1], sizeof(v->root[k]));
		memcpy(v->rdma[k], v->rdma[k + 1], sizeof(v->rdma[k]));
		v->d[k].bdf = v->bdf[k];
		v->d[k].pcie_root = v->root[k];
		v->d[k].rdma_device = v->rdma[k];
	}
	v->n--;
}

static struct rec_report report(const char *node, const char *type, const struct devs *v,
				uint64_t seq, int64_t at)
{
	return (struct rec_report){
		.node_name = node, .instance_type = type, .devices = v->d, .n_devices = v->n,
		.cpus = 192, .memory_mib = 2097152, .agent_version = "0.1.0",
		.boot_id = "boot-1", .sequence = seq, .probed_ns = at, .received_ns = at,
	};
}

/* Report and check the verdict; the outcome is the caller's. */
static void send(struct rec_fleet *f, const struct rec_report *r, enum rec_verdict want,
		 struct rec_outcome *o)
{
	struct dt_err err = { 0 };
	int rc = rec_report(f, r, o, &err);

	if (rc)
		fprintf(stderr, "\n  rec_report %s: %s\n", r->node_name, err.msg);
	CU_ASSERT_EQUAL_FATAL(rc, 0);
	if (o->node.verdict != want)
		fprintf(stderr, "\n  %s: verdict %s, want %s\n", r->node_name,
			rec_verdict_name(o->node.verdict), rec_verdict_name(want));
	CU_ASSERT_EQUAL(o->node.verdict, want);
}

static void send1(struct rec_fleet *f, const struct rec_report *r, enum rec_verdict want)
{
	struct rec_outcome o;

	send(f, r, want, &o);
	rec_outcome_free(&o);
}

static void assert_diffs(const struct dt_diags *d, const char *const *want, size_t n)
{
	CU_ASSERT_EQUAL(d->n, n);
	for (size_t i = 0; i < d->n && i < n; i++)
		DT_ASSERT_STR(d->msgs[i], want[i]);
}

/* A type hwdb knows without its grouping (draMetadata false, the EFA-only
 * types): its nodes match hwdb's entry, the quorum teaches the roots, the
 * nodes are then held to the learned entry, and a plan's catalogue merges
 * the learned devices into hwdb's entry, prices and size kept. A node that
 * contradicts what hwdb does know teaches nothing. */
static void test_learn_incomplete_hwdb(void)
{
	const struct hwdb_type *hw = hwdb_lookup("c6in.32xlarge"), *e, *m;
	struct rec_fleet *f = rec_fleet_new(NULL);
	struct hwdb_catalog *cat = NULL;
	struct rec_outcome o;
	struct devs v, odd;
	struct rec_report r;
	bool learned;
	double p;

	CU_ASSERT_PTR_NOT_NULL_FATAL(hw);
	CU_ASSERT_FATAL(hwdb_type_incomplete(hw));
	CU_ASSERT_FALSE(hwdb_type_incomplete(hwdb_lookup("p5.48xlarge")));
	from_type("c6in.32xlarge", &v);
	CU_ASSERT_EQUAL_FATAL(v.n, 2);
	snprintf(v.root[0], sizeof(v.root[0]), "pci0000:00");
	snprintf(v.root[1], sizeof(v.root[1]), "pci0000:80");

	r = report("hpc-a", "c6in.32xlarge", &v, 1, T0);
	send(f, &r, REC_MATCH, &o);
	CU_ASSERT(o.node.plannable);
	CU_ASSERT_EQUAL(o.also.n_learned, 0);
	rec_outcome_free(&o);
	CU_ASSERT_PTR_EQUAL(rec_fleet_hwdb_lookup(f, "c6in.32xlarge", &learned), hw);
	CU_ASSERT_FALSE(learned);

	r = report("hpc-b", "c6in.32xlarge", &v, 1, T0 + S);
	send(f, &r, REC_LEARNED, &o);
	CU_ASSERT_EQUAL_FATAL(o.also.n_learned, 1);
	DT_ASSERT_STR(o.also.learned[0].shape_key, "v1 2*(efa1x1d0f:efa1)");
	CU_ASSERT_EQUAL_FATAL(o.also.n_nodes, 1);       /* hpc-a: match -> learned */
	CU_ASSERT_EQUAL(o.also.nodes[0].verdict, REC_LEARNED);
	rec_outcome_free(&o);

	e = rec_fleet_hwdb_lookup(f, "c6in.32xlarge", &learned);
	CU_ASSERT_PTR_NOT_NULL_FATAL(e);
	CU_ASSERT(learned);
	CU_ASSERT(e->dra_metadata);
	CU_ASSERT_EQUAL_FATAL(e->n_efas, 2);
	DT_ASSERT_STR(e->efas[0].pcie_root, "pci0000:00");
	DT_ASSERT_STR(e->efas[1].pcie_root, "pci0000:80");

	/* The plan's view: hwdb's entry completed, its prices and size kept. */
	CU_ASSERT_EQUAL_FATAL(hwdb_catalog_new(NULL, &cat, NULL), 0);
	CU_ASSERT_EQUAL(rec_fleet_add_learned(f, cat, NULL), 0);
	m = hwdb_catalog_lookup(cat, "c6in.32xlarge");
	CU_ASSERT_PTR_NOT_NULL_FATAL(m);
	CU_ASSERT(m->learned);
	CU_ASSERT(m->dra_metadata);
	CU_ASSERT_FALSE(hwdb_type_incomplete(m));
	CU_ASSERT_EQUAL(m->vcpu, hw->vcpu);             /* hwdb's, not the report's 192 */
	CU_ASSERT_EQUAL(m->memory_mib, hw->memory_mib);
	CU_ASSERT(hwdb_type_price(m, NULL, &p));
	CU_ASSERT_DOUBLE_EQUAL(p, hw->price, 1e-9);
	CU_ASSERT(hwdb_type_price(m, "eu-west-1", &p));
	CU_ASSERT_EQUAL(m->network_cards, hw->network_cards);
	DT_ASSERT_STR(m->efas[1].pcie_root, "pci0000:80");
	CU_ASSERT_PTR_EQUAL(hwdb_lookup("c6in.32xlarge"), hw);  /* the process's: untouched */
	hwdb_catalog_free(cat);

	/* c6in.metal nodes with one EFA gone: drift from what hwdb knows, so
	 * however many there are, they teach nothing. */
	from_type("c6in.metal", &odd);
	drop(&odd, 1);
	for (int i = 0; i < 3; i++) {
		char name[16];

		snprintf(name, sizeof(name), "odd-%d", i);
		r = report(name, "c6in.metal", &odd, 1, T0 + (2 + i) * S);
		send(f, &r, REC_DRIFT, &o);
		CU_ASSERT_EQUAL(o.also.n_learned, 0);
		rec_outcome_free(&o);
	}
	CU_ASSERT_PTR_EQUAL(rec_fleet_hwdb_lookup(f, "c6in.metal", &learned), hwdb_lookup("c6in.metal"));
	CU_ASSERT_FALSE(learned);
	rec_fleet_free(f);
}

/* ---- Verdicts ---- */

static void test_match_and_drift(void)
{
	static const char *const missing_gpu[] = {
		"GPU count: hwdb has 8 for p5.48xlarge, this node has 7",
		"grouping: roots with 0 GPUs + 4 EFAs: hwdb has 0, this node has 1 (pci0000:44)",
		"grouping: roots with 1 GPU + 4 EFAs: hwdb has 8, this node has 7",
	};
	static const char *const moved_efa[] = {
		"grouping: roots with 1 GPU + 3 EFAs: hwdb has 0, this node has 1 (pci0000:44)",
		"grouping: roots with 1 GPU + 4 EFAs: hwdb has 8, this node has 6",
		"grouping: roots with 1 GPU + 5 EFAs: hwdb has 0, this node has 1 (pci0000:55)",
	};
	struct rec_fleet *f = rec_fleet_new(NULL);
	struct devs ok, lost, moved;
	struct rec_report r;
	struct rec_outcome o;

	from_type("p5.48xlarge", &ok);
	r = report("healthy", "p5.48xlarge", &ok, 1, T0);
	send(f, &r, REC_MATCH, &o);
	CU_ASSERT(o.changed);
	CU_ASSERT(o.node.plannable);
	DT_ASSERT_STR(o.node.why, "");
	DT_ASSERT_STR(o.node.shape_key, P5_KEY);
	CU_ASSERT_EQUAL(o.node.gpus, 8);
	CU_ASSERT_EQUAL(o.node.efas, 32);
	CU_ASSERT_EQUAL(o.also.n_nodes + o.also.n_learned + o.also.n_conflicts, 0);
	rec_outcome_free(&o);

	from_type("p5.48xlarge", &lost);
	drop(&lost, 0);                 /* gpu-0, on pci0000:44 */
	r = report("lost-gpu", "p5.48xlarge", &lost, 1, T0);
	send(f, &r, REC_DRIFT, &o);
	assert_diffs(&o.node.differences, missing_gpu, 3);
	CU_ASSERT_FALSE(o.node.plannable);
	DT_ASSERT_STR(o.node.why, "drift: GPU count: hwdb has 8 for p5.48xlarge, this node "
		      "has 7 (and 2 more)");
	CU_ASSERT_EQUAL(o.node.gpus, 7);
	rec_outcome_free(&o);

	from_type("p5.48xlarge", &moved);
	snprintf(moved.root[8], sizeof(moved.root[8]), "pci0000:55");   /* efa-0 */
	r = report("moved-efa", "p5.48xlarge", &moved, 1, T0);
	send(f, &r, REC_DRIFT, &o);
	assert_diffs(&o.node.differences, moved_efa, 3);
	rec_outcome_free(&o);

	/* A GPU off the bus is named, and counted as missing. */
	from_type("p5.48xlarge", &lost);
	lost.d[1].fell_off_bus = true;
	r = report("dead-gpu", "p5.48xlarge", &lost, 1, T0);
	send(f, &r, REC_DRIFT, &o);
	CU_ASSERT_FATAL(o.node.differences.n > 0);
	DT_ASSERT_STR(o.node.differences.msgs[0],
		      "GPU 0000:11:00.0 fell off the bus (config space reads 0xffff)");
	CU_ASSERT_EQUAL(o.node.gpus, 7);
	rec_outcome_free(&o);

	/* The healthy node repaired the lost one: match again, plannable. */
	r = report("lost-gpu", "p5.48xlarge", &ok, 2, T0 + S);
	send(f, &r, REC_MATCH, &o);
	CU_ASSERT(o.changed);
	CU_ASSERT(o.node.plannable);
	rec_outcome_free(&o);
	rec_fleet_free(f);
}

static void test_bad_reports(void)
{
	struct rec_fleet *f = rec_fleet_new(NULL);
	struct dt_err err = { 0 };
	struct rec_device many[REC_MAX_DEVICES + 1];
	struct rec_outcome o;
	struct devs v;
	struct rec_report r;

	from_type("p5.48xlarge", &v);
	snprintf(v.bdf[2], sizeof(v.bdf[2]), "0000:12:00.9");
	r = report("n1", "p5.48xlarge", &v, 1, T0);
	CU_ASSERT_EQUAL(rec_report(f, &r, &o, &err), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "node n1: devices[2] (0000:12:00.9)"));
	from_type("p5.48xlarge", &v);
	snprintf(v.bdf[2], sizeof(v.bdf[2]), "%s", v.bdf[3]);
	CU_ASSERT_EQUAL(rec_report(f, &r, &o, &err), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "listed twice"));
	from_type("p5.48xlarge", &v);
	v.d[0].vendor = 0x10000;
	CU_ASSERT_EQUAL(rec_report(f, &r, &o, &err), -EINVAL);
	from_type("p5.48xlarge", &v);
	memset(v.root[0], 'r', 40);         /* longer than a root name may be */
	CU_ASSERT_EQUAL(rec_report(f, &r, &o, &err), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "pcieRoot"));
	from_type("p5.48xlarge", &v);
	r.node_name = "bad name";
	CU_ASSERT_EQUAL(rec_report(f, &r, &o, &err), -EINVAL);
	r.node_name = "Bad_Name";           /* printable, but no Node's name */
	CU_ASSERT_EQUAL(rec_report(f, &r, &o, &err), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "node name \"Bad_Name\": a lowercase RFC 1123 "
				      "subdomain must consist of"));
	r.node_name = "n1";
	r.instance_type = "";
	CU_ASSERT_EQUAL(rec_report(f, &r, &o, &err), -EINVAL);
	r = report("n1", "p5.48xlarge", &v, 1, T0);
	memset(many, 0, sizeof(many));
	r.devices = many;
	r.n_devices = REC_MAX_DEVICES + 1;
	CU_ASSERT_EQUAL(rec_report(f, &r, &o, &err), -E2BIG);
	/* Nothing was taken. */
	CU_ASSERT_EQUAL(rec_fleet_node(f, "n1", T0, &o.node, &err), -ENOENT);
	rec_fleet_free(f);
}

/* ---- Learning and conflicts ---- */

static void test_learn_and_conflict(void)
{
	static const char *const against_learned[] = {
		"GPU count: hwdb has 8 for p9.test, this node has 7",
		"grouping: roots with 0 GPUs + 4 EFAs: hwdb has 0, this node has 1 (pci0000:44)",
		"grouping: roots with 1 GPU + 4 EFAs: hwdb has 8, this node has 7",
	};
	struct rec_fleet *f = rec_fleet_new(NULL);
	struct devs v, other;
	struct rec_report r;
	struct rec_outcome o;
	struct rec_learned l;
	const struct hwdb_type *e;
	struct strbuf why = STRBUF_INIT;
	bool learned;

	CU_ASSERT_PTR_NULL_FATAL(hwdb_lookup("p9.test"));
	from_type("p5.48xlarge", &v);
	r = report("a", "p9.test", &v, 1, T0);
	send(f, &r, REC_UNKNOWN, &o);
	CU_ASSERT_FALSE(o.node.plannable);
	DT_ASSERT_STR(o.node.why, "unknown: p9.test is not in hwdb; 1 of the 2 nodes of one "
		      "shape needed to learn it have reported");
	CU_ASSERT_EQUAL(o.also.n_learned, 0);
	rec_outcome_free(&o);
	CU_ASSERT_PTR_NULL(rec_fleet_hwdb_lookup(f, "p9.test", &learned));

	/* The second node of the shape: learned, both of them. */
	r = report("b", "p9.test", &v, 1, T0 + S);
	send(f, &r, REC_LEARNED, &o);
	CU_ASSERT(o.node.plannable);
	CU_ASSERT_EQUAL_FATAL(o.also.n_learned, 1);
	DT_ASSERT_STR(o.also.learned[0].type, "p9.test");
	DT_ASSERT_STR(o.also.learned[0].shape_key, P5_KEY);
	CU_ASSERT_EQUAL_FATAL(o.also.learned[0].n_nodes, 2);
	DT_ASSERT_STR(o.also.learned[0].nodes[0], "a");
	DT_ASSERT_STR(o.also.learned[0].nodes[1], "b");
	CU_ASSERT_PTR_NOT_NULL(strstr(o.also.learned[0].source, "instanceTypes:"));
	CU_ASSERT_EQUAL(o.also.learned[0].learned_ns, T0 + S);
	CU_ASSERT_EQUAL_FATAL(o.also.n_nodes, 1);       /* a: unknown -> learned */
	DT_ASSERT_STR(o.also.nodes[0].name, "a");
	CU_ASSERT_EQUAL(o.also.nodes[0].verdict, REC_LEARNED);
	rec_outcome_free(&o);

	e = rec_fleet_hwdb_lookup(f, "p9.test", &learned);
	CU_ASSERT_PTR_NOT_NULL_FATAL(e);
	CU_ASSERT(learned);
	CU_ASSERT_FALSE(e->has_price);
	CU_ASSERT_EQUAL(e->n_gpus, 8);
	CU_ASSERT_EQUAL(e->n_efas, 32);
	CU_ASSERT_EQUAL(e->vcpu, 192);
	CU_ASSERT(e->dra_metadata);
	CU_ASSERT_PTR_NOT_NULL(rec_fleet_hwdb_lookup(f, "p5.48xlarge", &learned));
	CU_ASSERT_FALSE(learned);
	CU_ASSERT_EQUAL(rec_fleet_learned(f, "p9.test", &l, NULL), 0);
	CU_ASSERT_EQUAL(l.n_nodes, 2);
	rec_learned_free(&l);
	CU_ASSERT_EQUAL(rec_fleet_learned(f, "p5.48xlarge", &l, NULL), -ENOENT);

	/* A later node of the shape is learned at once. */
	r = report("c", "p9.test", &v, 1, T0 + 2 * S);
	send(f, &r, REC_LEARNED, &o);
	CU_ASSERT_EQUAL(o.also.n_learned + o.also.n_nodes + o.also.n_conflicts, 0);
	rec_outcome_free(&o);

	/* A node of another shape: drift against the learned entry, and the
	 * type is in conflict. */
	from_type("p5.48xlarge", &other);
	drop(&other, 0);
	r = report("d", "p9.test", &other, 1, T0 + 3 * S);
	send(f, &r, REC_DRIFT, &o);
	assert_diffs(&o.node.differences, against_learned, 3);
	CU_ASSERT_EQUAL_FATAL(o.also.n_conflicts, 1);
	DT_ASSERT_STR(o.also.conflicts[0].type, "p9.test");
	CU_ASSERT_EQUAL_FATAL(o.also.conflicts[0].n_shapes, 2);
	DT_ASSERT_STR(o.also.conflicts[0].shapes[0].shape_key, P5_KEY);
	CU_ASSERT_EQUAL(o.also.conflicts[0].shapes[0].n_nodes, 3);
	CU_ASSERT_EQUAL_FATAL(o.also.conflicts[0].shapes[1].n_nodes, 1);
	DT_ASSERT_STR(o.also.conflicts[0].shapes[1].nodes[0], "d");
	CU_ASSERT_EQUAL(o.also.n_learned, 0);           /* the entry stays */
	rec_outcome_free(&o);

	/* Before learning, a disagreement blocks it: x and z agree (the
	 * quorum), y does not. */
	r = report("x", "p9.split", &v, 1, T0);
	send1(f, &r, REC_UNKNOWN);
	r = report("y", "p9.split", &other, 1, T0);
	send(f, &r, REC_UNKNOWN, &o);
	CU_ASSERT_EQUAL_FATAL(o.also.n_conflicts, 1);
	CU_ASSERT_EQUAL(o.also.conflicts[0].n_shapes, 2);
	CU_ASSERT(o.node.conflicted);
	rec_outcome_free(&o);
	r = report("z", "p9.split", &v, 1, T0);
	send(f, &r, REC_UNKNOWN, &o);
	CU_ASSERT_EQUAL(o.also.n_learned, 0);
	CU_ASSERT_EQUAL_FATAL(o.also.n_conflicts, 1);   /* updated: x and z now */
	CU_ASSERT_EQUAL(o.also.conflicts[0].shapes[0].n_nodes, 2);
	DT_ASSERT_STR(o.node.why, "conflict: the nodes of p9.split report 2 different shapes; "
		      "nothing is learned until they agree");
	rec_outcome_free(&o);
	CU_ASSERT_EQUAL(rec_node_plannable(f, "z", T0, &why, NULL), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(sb_str(&why), "conflict:"));
	/* y is repaired: the conflict ends and the type is learned. */
	r = report("y", "p9.split", &v, 2, T0 + S);
	send(f, &r, REC_LEARNED, &o);
	CU_ASSERT_EQUAL_FATAL(o.also.n_conflicts, 1);
	CU_ASSERT_EQUAL(o.also.conflicts[0].n_shapes, 0);      /* resolved */
	CU_ASSERT_FALSE(o.node.conflicted);
	CU_ASSERT_EQUAL_FATAL(o.also.n_learned, 1);
	CU_ASSERT_EQUAL(o.also.learned[0].n_nodes, 3);
	CU_ASSERT_EQUAL(o.also.n_nodes, 2);                    /* x and z */
	rec_outcome_free(&o);
	sb_free(&why);
	rec_fleet_free(f);
}

static void test_no_host_facts(void)
{
	struct rec_fleet *f = rec_fleet_new(NULL);
	struct rec_outcome o;
	struct devs v;
	struct rec_report r;

	from_type("p5.48xlarge", &v);
	r = report("a", "p9.bare", &v, 1, T0);
	r.cpus = 0;
	send1(f, &r, REC_UNKNOWN);
	r.node_name = "b";
	send(f, &r, REC_UNKNOWN, &o);
	CU_ASSERT_EQUAL(o.also.n_learned, 0);
	CU_ASSERT_EQUAL_FATAL(o.warnings.n, 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(o.warnings.msgs[0], "no CPU count"));
	rec_outcome_free(&o);
	rec_fleet_free(f);
}

/* ---- Summaries ---- */

static const struct rec_type_summary *find_type(const struct rec_type_list *l, const char *t)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->types[i].type, t) == 0)
			return &l->types[i];
	return NULL;
}

static void test_wrong_hwdb(void)
{
	struct rec_options opts = { .learn_quorum = 2 };
	struct rec_fleet *f = rec_fleet_new(&opts);
	struct rec_type_list tl;
	const struct rec_type_summary *s;
	struct devs ok, lost;
	struct rec_report r;
	char name[16];

	from_type("p5.48xlarge", &ok);
	from_type("p5.48xlarge", &lost);
	drop(&lost, 0);
	r = report("p5-ok", "p5.48xlarge", &ok, 1, T0);
	send1(f, &r, REC_MATCH);
	for (int i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "p5-%d", i);
		r = report(name, "p5.48xlarge", &lost, 1, T0);
		send1(f, &r, REC_DRIFT);
	}
	/* One drifting node of another type is only a drift. */
	from_type("p4d.24xlarge", &ok);
	from_type("p4d.24xlarge", &lost);
	drop(&lost, 0);
	r = report("p4-ok", "p4d.24xlarge", &ok, 1, T0);
	send1(f, &r, REC_MATCH);
	r = report("p4-bad", "p4d.24xlarge", &lost, 1, T0);
	send1(f, &r, REC_DRIFT);

	CU_ASSERT_EQUAL_FATAL(rec_fleet_types(f, T0, &tl, NULL), 0);
	CU_ASSERT_EQUAL(tl.n, 2);
	s = find_type(&tl, "p5.48xlarge");
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_EQUAL(s->source, REC_SOURCE_HWDB);
	CU_ASSERT_EQUAL(s->nodes, 4);
	CU_ASSERT_EQUAL(s->by_verdict[REC_MATCH], 1);
	CU_ASSERT_EQUAL(s->by_verdict[REC_DRIFT], 3);
	CU_ASSERT_EQUAL(s->plannable, 1);
	CU_ASSERT_EQUAL(s->n_shapes, 2);
	CU_ASSERT_EQUAL(s->common_count, 3);
	DT_ASSERT_STR(s->common_shape, "v1 1*(efa4x1d0f:efa1) 7*(gpu1x10de:2330+efa4x1d0f:efa1)");
	CU_ASSERT(s->hwdb_suspect);
	CU_ASSERT_FALSE(s->conflicted);
	s = find_type(&tl, "p4d.24xlarge");
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_FALSE(s->hwdb_suspect);
	CU_ASSERT_EQUAL(s->by_verdict[REC_DRIFT], 1);
	rec_type_list_free(&tl);
	rec_fleet_free(f);
}

/* ---- Time and sequence ---- */

static void test_stale(void)
{
	struct rec_options opts = { .stale_after_ns = 90 * S };
	struct rec_fleet *f = rec_fleet_new(&opts);
	struct rec_node_list nl;
	struct rec_filter flt = REC_FILTER_ALL;
	struct strbuf why = STRBUF_INIT;
	struct rec_report r;
	struct rec_node n;
	struct devs v;

	from_type("p5.48xlarge", &v);
	r = report("n1", "p5.48xlarge", &v, 1, T0);
	send1(f, &r, REC_MATCH);
	CU_ASSERT_EQUAL(rec_node_plannable(f, "n1", T0 + 90 * S, &why, NULL), 1);
	CU_ASSERT_EQUAL(rec_node_plannable(f, "n1", T0 + 95 * S, &why, NULL), 0);
	DT_ASSERT_STR(sb_str(&why), "stale: last report 95s ago (stale after 90s)");
	CU_ASSERT_EQUAL(rec_node_plannable(f, "nobody", T0, NULL, NULL), -ENOENT);
	CU_ASSERT_EQUAL(rec_fleet_node(f, "n1", T0 + 95 * S, &n, NULL), 0);
	CU_ASSERT_FALSE(n.plannable);
	CU_ASSERT_EQUAL(n.verdict, REC_MATCH);
	rec_node_free(&n);
	flt.plannable = 0;
	CU_ASSERT_EQUAL(rec_fleet_nodes(f, &flt, T0 + 95 * S, &nl, NULL), 0);
	CU_ASSERT_EQUAL(nl.n, 1);
	rec_node_list_free(&nl);

	/* A heartbeat brings it back. */
	r = report("n1", "p5.48xlarge", &v, 2, T0 + 100 * S);
	send1(f, &r, REC_MATCH);
	sb_reset(&why);
	CU_ASSERT_EQUAL(rec_node_plannable(f, "n1", T0 + 101 * S, &why, NULL), 1);
	DT_ASSERT_STR(sb_str(&why), "");
	sb_free(&why);
	rec_fleet_free(f);
}

static void test_replay_and_heartbeat(void)
{
	struct rec_fleet *f = rec_fleet_new(NULL);
	struct rec_outcome o;
	struct rec_report r;
	struct devs v, lost;

	from_type("p5.48xlarge", &v);
	from_type("p5.48xlarge", &lost);
	drop(&lost, 0);
	r = report("n1", "p5.48xlarge", &lost, 5, T0);
	send1(f, &r, REC_DRIFT);

	/* The same sequence again, or an older one, with other contents:
	 * a re-ack of what is stored. */
	r = report("n1", "p5.48xlarge", &v, 5, T0 + S);
	send(f, &r, REC_DRIFT, &o);
	CU_ASSERT(o.replay);
	CU_ASSERT_FALSE(o.changed);
	CU_ASSERT_FALSE(o.heartbeat);
	CU_ASSERT_EQUAL(o.node.sequence, 5);
	CU_ASSERT_EQUAL(o.node.received_ns, T0);
	CU_ASSERT_EQUAL(o.node.differences.n, 3);
	rec_outcome_free(&o);
	r.sequence = 4;
	send(f, &r, REC_DRIFT, &o);
	CU_ASSERT(o.replay);
	rec_outcome_free(&o);

	/* A heartbeat: newer, same devices; not changed, times move. */
	r = report("n1", "p5.48xlarge", &lost, 6, T0 + 2 * S);
	send(f, &r, REC_DRIFT, &o);
	CU_ASSERT_FALSE(o.replay);
	CU_ASSERT_FALSE(o.changed);
	CU_ASSERT(o.heartbeat);
	CU_ASSERT_EQUAL(o.node.sequence, 6);
	CU_ASSERT_EQUAL(o.node.received_ns, T0 + 2 * S);
	rec_outcome_free(&o);
	/* Same devices but other host facts: not changed, yet the record
	 * (with the report that carries them) is written whole. */
	r = report("n1", "p5.48xlarge", &lost, 7, T0 + 2 * S);
	r.memory_mib += 1024;
	send(f, &r, REC_DRIFT, &o);
	CU_ASSERT_FALSE(o.changed);
	CU_ASSERT_FALSE(o.heartbeat);
	rec_outcome_free(&o);

	/* A new agent run starts its sequence again. */
	r = report("n1", "p5.48xlarge", &v, 1, T0 + 3 * S);
	r.boot_id = "boot-2";
	send(f, &r, REC_MATCH, &o);
	CU_ASSERT_FALSE(o.replay);
	CU_ASSERT(o.changed);
	DT_ASSERT_STR(o.node.boot_id, "boot-2");
	rec_outcome_free(&o);
	rec_fleet_free(f);
}

/* Heartbeats are recognised against the node's packed devices without
 * packing the report: any change of any field is not one, a value that
 * would have been refused is still refused, and devices in another order
 * than by address take the full path (same verdict, not a heartbeat). */
static void test_heartbeat_recognised_exactly(void)
{
	struct rec_fleet *f = rec_fleet_new(NULL);
	struct dt_err err = { 0 };
	struct rec_outcome o;
	struct rec_report r;
	struct devs v, w;
	uint64_t seq = 0;

	from_type("p5.48xlarge", &v);
	r = report("n1", "p5.48xlarge", &v, ++seq, T0);
	send1(f, &r, REC_MATCH);

	for (int change = 0; change < 6; change++) {
		w = v;
		for (size_t i = 0; i < w.n; i++) {
			w.d[i].bdf = w.bdf[i];
			w.d[i].pcie_root = w.root[i];
			w.d[i].rdma_device = w.rdma[i];
		}
		switch (change) {
		case 0: w.d[3].link_width = 8; break;
		case 1: w.d[9].numa_node = w.d[9].numa_node == 7 ? 6 : 7; break;
		case 2: snprintf(w.rdma[12], sizeof(w.rdma[12]), "rdmap99s0"); break;
		case 3: w.d[2].link_speed = "16.0 GT/s PCIe"; break;
		case 4: w.d[0].subsystem_vendor = 0x10de; break;
		case 5: w.d[20].fell_off_bus = true; break;
		}
		++seq;
		r = report("n1", "p5.48xlarge", &w, seq, T0 + (int64_t)seq * S);
		CU_ASSERT_EQUAL_FATAL(rec_report(f, &r, &o, &err), 0);
		if (o.heartbeat)
			fprintf(stderr, "\n  change %d taken for a heartbeat\n", change);
		CU_ASSERT_FALSE(o.heartbeat);
		rec_outcome_free(&o);
		/* and back: the stored devices are w's now */
		++seq;
		r = report("n1", "p5.48xlarge", &v, seq, T0 + (int64_t)seq * S);
		CU_ASSERT_EQUAL_FATAL(rec_report(f, &r, &o, &err), 0);
		CU_ASSERT_FALSE(o.heartbeat);
		rec_outcome_free(&o);
	}

	/* The same devices: a heartbeat. */
	r = report("n1", "p5.48xlarge", &v, ++seq, T0 + 100 * S);
	send(f, &r, REC_MATCH, &o);
	CU_ASSERT(o.heartbeat);
	rec_outcome_free(&o);

	/* A PCI id that truncates to the stored one is refused, not a heartbeat. */
	w = v;
	w.d[0].vendor = 0x10000 | v.d[0].vendor;
	r = report("n1", "p5.48xlarge", &w, ++seq, T0 + 101 * S);
	CU_ASSERT_EQUAL(rec_report(f, &r, &o, &err), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "larger than 0xffff"));

	/* Reversed: the same devices, the full path. */
	w = v;
	for (size_t i = 0; i < v.n; i++)
		w.d[i] = v.d[v.n - 1 - i];
	r = report("n1", "p5.48xlarge", &w, ++seq, T0 + 102 * S);
	send(f, &r, REC_MATCH, &o);
	CU_ASSERT_FALSE(o.changed);
	rec_outcome_free(&o);
	rec_fleet_free(f);
}

/* ---- Restore ---- */

/* What a store keeps per node: the last report (the devices are static
 * here), and the verdict and shape key of its record. */
struct record {
	char name[32], type[32], boot[16], key[256];
	const struct devs *devs;
	struct rec_report last;
	enum rec_verdict verdict;
};

struct store {
	struct record nodes[32];
	size_t n;
	struct rec_learned learned[4];
	size_t n_learned;
	size_t n_conflict_writes;
};

static struct record *record_of(struct store *st, const char *name)
{
	for (size_t i = 0; i < st->n; i++)
		if (strcmp(st->nodes[i].name, name) == 0)
			return &st->nodes[i];
	CU_ASSERT_FATAL(st->n < 32);
	snprintf(st->nodes[st->n].name, sizeof(st->nodes[0].name), "%s", name);
	return &st->nodes[st->n++];
}

static void persist_node(struct store *st, const struct rec_node *n)
{
	struct record *rec = record_of(st, n->name);

	rec->verdict = n->verdict;
	snprintf(rec->key, sizeof(rec->key), "%s", n->shape_key);
}

/* Send a report and write what the outcome says, as the daemon does. */
static void send_stored(struct rec_fleet *f, struct store *st, const char *node,
			const char *type, const struct devs *v, uint64_t seq, int64_t at)
{
	struct rec_report r = report(node, type, v, seq, at);
	struct rec_outcome o;
	struct record *rec;

	CU_ASSERT_EQUAL_FATAL(rec_report(f, &r, &o, NULL), 0);
	if (!o.replay) {
		rec = record_of(st, node);
		snprintf(rec->type, sizeof(rec->type), "%s", type);
		rec->devs = v;
		rec->last = r;
		rec->last.node_name = rec->name;
		rec->last.instance_type = rec->type;
		persist_node(st, &o.node);
		for (size_t i = 0; i < o.also.n_nodes; i++)
			persist_node(st, &o.also.nodes[i]);
		for (size_t i = 0; i < o.also.n_learned; i++) {
			CU_ASSERT_FATAL(st->n_learned < 4);
			st->learned[st->n_learned++] = o.also.learned[i];
			memset(&o.also.learned[i], 0, sizeof(o.also.learned[i]));
		}
		st->n_conflict_writes += o.also.n_conflicts;
	}
	rec_outcome_free(&o);
}

static void assert_same_types(struct rec_fleet *a, struct rec_fleet *b, int64_t now)
{
	struct rec_type_list x, y;

	CU_ASSERT_EQUAL_FATAL(rec_fleet_types(a, now, &x, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(rec_fleet_types(b, now, &y, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(x.n, y.n);
	for (size_t i = 0; i < x.n; i++) {
		const struct rec_type_summary *s = &x.types[i], *t = &y.types[i];

		DT_ASSERT_STR(s->type, t->type);
		CU_ASSERT_EQUAL(s->source, t->source);
		CU_ASSERT_EQUAL(s->nodes, t->nodes);
		CU_ASSERT_EQUAL(memcmp(s->by_verdict, t->by_verdict, sizeof(s->by_verdict)), 0);
		CU_ASSERT_EQUAL(s->plannable, t->plannable);
		CU_ASSERT_EQUAL(s->stale, t->stale);
		DT_ASSERT_STR(s->common_shape, t->common_shape);
		CU_ASSERT_EQUAL(s->common_count, t->common_count);
		CU_ASSERT_EQUAL(s->conflicted, t->conflicted);
		CU_ASSERT_EQUAL(s->hwdb_suspect, t->hwdb_suspect);
	}
	rec_type_list_free(&x);
	rec_type_list_free(&y);
}

static void test_restore(void)
{
	static struct store st;
	static struct devs ok, lost;
	struct rec_fleet *f = rec_fleet_new(NULL), *g;
	struct rec_conflict_list ca, cb;
	struct rec_changes ch;
	struct rec_outcome o;
	struct rec_report r;
	struct dt_err err = { 0 };

	memset(&st, 0, sizeof(st));
	from_type("p5.48xlarge", &ok);
	from_type("p5.48xlarge", &lost);
	drop(&lost, 0);
	send_stored(f, &st, "m1", "p5.48xlarge", &ok, 1, T0);
	send_stored(f, &st, "m2", "p5.48xlarge", &lost, 1, T0);
	send_stored(f, &st, "m3", "p5.48xlarge", &lost, 1, T0);
	send_stored(f, &st, "u1", "p9.test", &ok, 1, T0);
	send_stored(f, &st, "u2", "p9.test", &ok, 1, T0 + S);
	send_stored(f, &st, "u3", "p9.test", &lost, 1, T0 + S);
	send_stored(f, &st, "s1", "p9.split", &ok, 1, T0);
	send_stored(f, &st, "s2", "p9.split", &lost, 1, T0);
	send_stored(f, &st, "s3", "p9.split", &ok, 1, T0);
	send_stored(f, &st, "m1", "p5.48xlarge", &ok, 2, T0 + 50 * S);
	CU_ASSERT_EQUAL(st.n, 9);
	CU_ASSERT_EQUAL(st.n_learned, 1);
	CU_ASSERT(st.n_conflict_writes >= 3);

	/* A new coordinator from the records, in another order. */
	g = rec_fleet_new(NULL);
	for (size_t i = 0; i < st.n_learned; i++)
		CU_ASSERT_EQUAL(rec_fleet_restore_learned(g, &st.learned[i], &err), 0);
	for (size_t i = st.n; i-- > 0;) {
		struct rec_stored rs = { st.nodes[i].verdict, st.nodes[i].key, false };
		int rc = rec_fleet_restore_node(g, &st.nodes[i].last, &rs, &err);

		if (rc)
			fprintf(stderr, "\n  restore %s: %s\n", st.nodes[i].name, err.msg);
		CU_ASSERT_EQUAL(rc, 0);
	}
	/* Reports wait for the restore to end. */
	r = report("m9", "p5.48xlarge", &ok, 1, T0);
	CU_ASSERT_EQUAL(rec_report(g, &r, &o, NULL), -EBUSY);
	CU_ASSERT_EQUAL(rec_fleet_restore_node(g, &st.nodes[0].last,
					       &(struct rec_stored){ st.nodes[0].verdict,
								     st.nodes[0].key, false },
					       NULL), -EEXIST);
	CU_ASSERT_EQUAL_FATAL(rec_fleet_restore_done(g, &ch, &err), 0);
	CU_ASSERT_EQUAL(ch.n_nodes, 0);         /* every record as the fleet sees it */
	CU_ASSERT_EQUAL(ch.n_learned, 0);
	CU_ASSERT_EQUAL(ch.n_conflicts, 2);     /* p9.split and p9.test, as they stand */
	rec_changes_free(&ch);

	assert_same_types(f, g, T0 + 60 * S);
	assert_same_types(f, g, T0 + 200 * S);
	CU_ASSERT_EQUAL(rec_fleet_conflicts(f, &ca, NULL), 0);
	CU_ASSERT_EQUAL(rec_fleet_conflicts(g, &cb, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(ca.n, cb.n);
	for (size_t i = 0; i < ca.n; i++) {
		DT_ASSERT_STR(ca.conflicts[i].type, cb.conflicts[i].type);
		CU_ASSERT_EQUAL(ca.conflicts[i].n_shapes, cb.conflicts[i].n_shapes);
	}
	rec_conflict_list_free(&ca);
	rec_conflict_list_free(&cb);
	CU_ASSERT_PTR_NOT_NULL(rec_fleet_hwdb_lookup(g, "p9.test", NULL));

	/* A replay of the last stored report is still a replay after the
	 * restart. */
	r = st.nodes[0].last;
	CU_ASSERT_EQUAL(rec_report(g, &r, &o, NULL), 0);
	CU_ASSERT(o.replay);
	rec_outcome_free(&o);

	/* A record whose verdict or shape key the fleet no longer agrees with
	 * (written by an older hwdb) is handed back to be rewritten. */
	rec_fleet_free(g);
	g = rec_fleet_new(NULL);
	CU_ASSERT_EQUAL(rec_fleet_restore_node(g, &st.nodes[0].last,
					       &(struct rec_stored){ REC_DRIFT, "v1 stale", true },
					       NULL), 0);
	CU_ASSERT_EQUAL(rec_fleet_restore_done(g, &ch, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(ch.n_nodes, 1);
	CU_ASSERT_EQUAL(ch.nodes[0].verdict, REC_MATCH);
	/* It was in drift when its record was written, and matches now: its
	 * remedies are still to be lifted after the restart. */
	CU_ASSERT(ch.nodes[0].drifted);
	CU_ASSERT(ch.nodes[0].recovered);
	rec_changes_free(&ch);
	rec_fleet_free(g);

	for (size_t i = 0; i < st.n_learned; i++)
		rec_learned_free(&st.learned[i]);
	rec_fleet_free(f);
}

static void test_restore_learns_later(void)
{
	static struct devs ok;
	static const struct rec_stored unknown = { REC_UNKNOWN, P5_KEY, false };
	struct rec_fleet *g = rec_fleet_new(NULL);
	struct rec_changes ch;
	struct rec_report r;

	/* Two unknown records of one shape (written under a quorum of 3):
	 * with today's quorum of 2 the type is learned when the restore ends,
	 * whatever the order. */
	from_type("p5.48xlarge", &ok);
	r = report("b", "p9.late", &ok, 1, T0);
	CU_ASSERT_EQUAL(rec_fleet_restore_node(g, &r, &unknown, NULL), 0);
	r = report("a", "p9.late", &ok, 1, T0);
	CU_ASSERT_EQUAL(rec_fleet_restore_node(g, &r, &unknown, NULL), 0);
	CU_ASSERT_PTR_NULL(rec_fleet_hwdb_lookup(g, "p9.late", NULL));
	CU_ASSERT_EQUAL_FATAL(rec_fleet_restore_done(g, &ch, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(ch.n_learned, 1);
	CU_ASSERT_EQUAL(ch.learned[0].n_nodes, 2);
	CU_ASSERT_EQUAL_FATAL(ch.n_nodes, 2);
	CU_ASSERT_EQUAL(ch.nodes[0].verdict, REC_LEARNED);
	CU_ASSERT_EQUAL(ch.nodes[1].verdict, REC_LEARNED);
	rec_changes_free(&ch);
	rec_fleet_free(g);
}

/* ---- Slices ---- */

static void test_slices(void)
{
	struct rec_fleet *f = rec_fleet_new(NULL);
	struct model_object *slices[HWDB_MAX_SLICES];
	struct model_set *set = model_set_new();
	struct rec_report r;
	struct devs v;
	size_t n = 0;

	from_type("p5.48xlarge", &v);
	r = report("gpu-node-1", "p5.48xlarge", &v, 1, T0);
	send1(f, &r, REC_MATCH);
	CU_ASSERT_EQUAL(rec_node_slices(f, "gpu-node-1", NULL, set, slices, &n, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(n, 2);
	DT_ASSERT_STR(slices[0]->u.slice.node_name, "gpu-node-1");
	CU_ASSERT_EQUAL(slices[0]->u.slice.n_devices, 8);
	CU_ASSERT_EQUAL(slices[1]->u.slice.n_devices, 32);
	CU_ASSERT_EQUAL(rec_node_slices(f, "nobody", NULL, set, slices, &n, NULL), -ENOENT);
	model_set_free(set);
	rec_fleet_free(f);
}

/* ---- Scale ---- */

static void test_ten_thousand(void)
{
	static struct devs ok, lost;
	struct rec_fleet *f = rec_fleet_new(NULL);
	struct rec_filter flt = REC_FILTER_ALL;
	struct rec_node_list nl;
	struct rec_type_list tl;
	struct rec_outcome o;
	char name[32];
	size_t drift = 0, learned = 0;

	from_type("p5.48xlarge", &ok);
	from_type("p5.48xlarge", &lost);
	drop(&lost, 0);
	for (int i = 0; i < 10000; i++) {
		const char *type = i % 10 == 9 ? "p9.fleet" : "p5.48xlarge";
		const struct devs *v = i % 10 == 3 ? &lost : &ok;
		struct rec_report r;

		snprintf(name, sizeof(name), "node-%05d", i);
		r = report(name, type, v, 1, T0 + i);
		CU_ASSERT_EQUAL_FATAL(rec_report(f, &r, &o, NULL), 0);
		drift += o.node.verdict == REC_DRIFT;
		learned += o.node.verdict == REC_LEARNED;
		rec_outcome_free(&o);
		/* and a heartbeat each */
		r.sequence = 2;
		CU_ASSERT_EQUAL_FATAL(rec_report(f, &r, &o, NULL), 0);
		CU_ASSERT_FALSE(o.changed);
		rec_outcome_free(&o);
	}
	CU_ASSERT_EQUAL(drift, 1000);
	CU_ASSERT_EQUAL(learned, 999);  /* node-00009 was unknown until node-00019 */

	CU_ASSERT_EQUAL(rec_fleet_nodes(f, NULL, T0 + S, &nl, NULL), 0);
	CU_ASSERT_EQUAL(nl.n, 10000);
	CU_ASSERT_FALSE(nl.more);
	DT_ASSERT_STR(nl.nodes[0].name, "node-00000");
	DT_ASSERT_STR(nl.nodes[9999].name, "node-09999");
	rec_node_list_free(&nl);
	flt.verdict = REC_DRIFT;
	CU_ASSERT_EQUAL(rec_fleet_nodes(f, &flt, T0 + S, &nl, NULL), 0);
	CU_ASSERT_EQUAL(nl.n, 1000);
	rec_node_list_free(&nl);
	flt = (struct rec_filter)REC_FILTER_ALL;
	flt.instance_type = "p9.fleet";
	flt.plannable = 1;
	CU_ASSERT_EQUAL(rec_fleet_nodes(f, &flt, T0 + S, &nl, NULL), 0);
	CU_ASSERT_EQUAL(nl.n, 1000);
	rec_node_list_free(&nl);
	flt = (struct rec_filter)REC_FILTER_ALL;
	flt.after = "node-00099";
	flt.limit = 100;
	CU_ASSERT_EQUAL(rec_fleet_nodes(f, &flt, T0 + S, &nl, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(nl.n, 100);
	CU_ASSERT(nl.more);
	DT_ASSERT_STR(nl.nodes[0].name, "node-00100");
	DT_ASSERT_STR(nl.nodes[99].name, "node-00199");
	rec_node_list_free(&nl);
	/* Everyone is stale a day later. */
	flt = (struct rec_filter)REC_FILTER_ALL;
	flt.plannable = 1;
	CU_ASSERT_EQUAL(rec_fleet_nodes(f, &flt, T0 + 86400 * S, &nl, NULL), 0);
	CU_ASSERT_EQUAL(nl.n, 0);
	rec_node_list_free(&nl);

	CU_ASSERT_EQUAL_FATAL(rec_fleet_types(f, T0 + S, &tl, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(tl.n, 2);
	DT_ASSERT_STR(tl.types[0].type, "p5.48xlarge");
	CU_ASSERT_EQUAL(tl.types[0].nodes, 9000);
	CU_ASSERT_EQUAL(tl.types[0].by_verdict[REC_MATCH], 8000);
	CU_ASSERT_EQUAL(tl.types[0].by_verdict[REC_DRIFT], 1000);
	CU_ASSERT_EQUAL(tl.types[0].plannable, 8000);
	CU_ASSERT_FALSE(tl.types[0].hwdb_suspect);
	DT_ASSERT_STR(tl.types[1].type, "p9.fleet");
	CU_ASSERT_EQUAL(tl.types[1].source, REC_SOURCE_LEARNED);
	CU_ASSERT_EQUAL(tl.types[1].by_verdict[REC_LEARNED], 1000);
	CU_ASSERT_EQUAL(tl.types[1].common_count, 1000);
	rec_type_list_free(&tl);
	rec_fleet_free(f);
}

DT_SUITE_MAIN("reconcile",
	      DT_TEST(test_match_and_drift),
	      DT_TEST(test_bad_reports),
	      DT_TEST(test_learn_and_conflict),
	      DT_TEST(test_learn_incomplete_hwdb),
	      DT_TEST(test_no_host_facts),
	      DT_TEST(test_wrong_hwdb),
	      DT_TEST(test_stale),
	      DT_TEST(test_replay_and_heartbeat),
	      DT_TEST(test_heartbeat_recognised_exactly),
	      DT_TEST(test_restore),
	      DT_TEST(test_restore_learns_later),
	      DT_TEST(test_slices),
	      DT_TEST(test_ten_thousand))
