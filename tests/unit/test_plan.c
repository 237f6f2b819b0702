/* test_plan.c - the planner on real manifests: the seed's three examples,
 * existing nodes, shared claims, the price optimizer against hwdb's real
 * prices, and the reasons for pods that fit nowhere.
 *
 * Expectations are derived from hwdb's facts where the seed states a rule
 * ("the cheapest H200 or Blackwell type the pool allows"), not copied from
 * the planner's output. */
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "dt_test.h"
#include "hwdb.h"
#include "hwdb_catalog.h"
#include "model.h"
#include "plan.h"
#include "plan_internal.h"
#include "strbuf.h"

struct loaded {
	struct model_set *set;
	struct plan_result *res;
};

/* Load files (paths relative to the source tree) and plan with catalogue
 * cat (NULL: the process's). */
static struct loaded plan_vfiles(const struct hwdb_catalog *cat, const char *first, va_list ap)
{
	struct loaded l = { model_set_new(), NULL };
	struct plan_options opts = { .catalog = cat };
	struct dt_diags errs;
	struct dt_err err = { 0 };
	char path[4096];

	dt_diags_init(&errs);
	for (const char *f = first; f; f = va_arg(ap, const char *)) {
		snprintf(path, sizeof(path), "%s/%s", DT_SOURCE_DIR, f);
		CU_ASSERT_EQUAL(model_set_load_file(l.set, path, &errs, &err), 0);
	}
	for (size_t i = 0; i < errs.n; i++)
		fprintf(stderr, "\n  load: %s", errs.msgs[i]);
	CU_ASSERT_EQUAL(dt_diags_count(&errs), 0);
	dt_diags_free(&errs);
	if (plan_run(l.set, &opts, &l.res, &err))
		fprintf(stderr, "\n  plan_run: %s\n", err.msg);
	CU_ASSERT_PTR_NOT_NULL(l.res);
	return l;
}

/* plan_vfiles with the process's catalogue; the list ends with NULL. */
static struct loaded plan_files(const char *first, ...)
{
	struct loaded l;
	va_list ap;

	va_start(ap, first);
	l = plan_vfiles(NULL, first, ap);
	va_end(ap);
	return l;
}

static struct loaded plan_files_in(const struct hwdb_catalog *cat, const char *first, ...)
{
	struct loaded l;
	va_list ap;

	va_start(ap, first);
	l = plan_vfiles(cat, first, ap);
	va_end(ap);
	return l;
}

static void loaded_free(struct loaded *l)
{
	plan_result_free(l->res);
	model_set_free(l->set);
}

static const char *const seed_families[] = { "g6", "g6e", "p5", "p5en", "p6-b200" };

static bool seed_pool_allows(const struct hwdb_type *t)
{
	for (size_t i = 0; i < sizeof(seed_families) / sizeof(seed_families[0]); i++)
		if (!strcmp(t->family, seed_families[i]))
			return true;
	return false;
}

static int version_major(const char *v)
{
	return v ? atoi(v) : -1;
}

/* A GPU of compute capability >= 9.0 with >= 100Gi, per hwdb. */
static bool has_large_hopper(const struct hwdb_type *t)
{
	for (size_t i = 0; i < t->n_gpus; i++) {
		const struct hwdb_attr *cc = hwdb_device_attr(&t->gpus[i], "cudaComputeCapability");

		if (cc && version_major(cc->str) >= 9 && t->gpus[i].memory_mib >= 100 * 1024)
			return true;
	}
	return false;
}

static bool has_shared_root(const struct hwdb_type *t)
{
	struct hwdb_root roots[64];
	size_t n = hwdb_type_roots(t, roots, 64);

	if (!t->dra_metadata)
		return false;
	for (size_t i = 0; i < n && i < 64; i++)
		if (roots[i].n_gpus && roots[i].n_efas)
			return true;
	return false;
}

/* The cheapest priced type the seed pool allows that satisfies pred. */
static const struct hwdb_type *cheapest(bool (*pred)(const struct hwdb_type *))
{
	for (size_t i = 0; i < hwdb_count(); i++) {
		const struct hwdb_type *t = hwdb_at(i);

		if (t->has_price && seed_pool_allows(t) && pred(t))
			return t;
	}
	return NULL;
}

static void test_seed_large_gpu(void)
{
	struct loaded l = plan_files("examples/seed/nodepool.yaml", "examples/seed/ec2nodeclass.yaml",
				     "examples/seed/large-gpu.yaml", NULL);
	const struct hwdb_type *want = cheapest(has_large_hopper), *got;

	CU_ASSERT_PTR_NOT_NULL_FATAL(l.res);
	CU_ASSERT_PTR_NOT_NULL_FATAL(want);
	CU_ASSERT_EQUAL(l.res->n_unschedulable, 0);
	CU_ASSERT_EQUAL_FATAL(l.res->n_node_claims, 1);
	got = hwdb_lookup(l.res->node_claims[0].instance_type);
	CU_ASSERT_PTR_NOT_NULL_FATAL(got);
	/* The seed: H200 (p5e, p5en) or Blackwell (p6-b200, p6-b300). */
	CU_ASSERT_TRUE(has_large_hopper(got));
	CU_ASSERT_TRUE(strstr(got->gpu_model, "H200") || strstr(got->gpu_model, "B200") ||
		       strstr(got->gpu_model, "B300"));
	DT_ASSERT_STR(got->name, want->name);
	DT_ASSERT_STR(l.res->node_claims[0].node_pool, "gpu-dra");
	CU_ASSERT_EQUAL(l.res->node_claims[0].n_pods, 1);
	CU_ASSERT_EQUAL_FATAL(l.res->node_claims[0].n_claims, 1);
	CU_ASSERT_EQUAL(l.res->node_claims[0].claims[0].n_results, 1);
	DT_ASSERT_STR(l.res->node_claims[0].claims[0].results[0].driver, "gpu.nvidia.com");
	CU_ASSERT_DOUBLE_EQUAL(l.res->total_price, want->price, 1e-6);
	loaded_free(&l);
}

static void test_seed_gpu_efa_aligned(void)
{
	struct loaded l = plan_files("examples/seed/nodepool.yaml", "examples/seed/ec2nodeclass.yaml",
				     "examples/seed/gpu-efa-aligned.yaml", NULL);
	const struct hwdb_type *want = cheapest(has_shared_root), *got;
	const struct plan_node_claim *nc;

	CU_ASSERT_PTR_NOT_NULL_FATAL(l.res);
	CU_ASSERT_PTR_NOT_NULL_FATAL(want);
	CU_ASSERT_EQUAL_FATAL(l.res->n_node_claims, 1);
	nc = &l.res->node_claims[0];
	got = hwdb_lookup(nc->instance_type);
	CU_ASSERT_PTR_NOT_NULL_FATAL(got);
	CU_ASSERT_TRUE(has_shared_root(got));
	DT_ASSERT_STR(got->name, want->name);
	/* Both drivers requested, sorted. */
	CU_ASSERT_EQUAL_FATAL(nc->n_drivers, 2);
	DT_ASSERT_STR(nc->drivers[0], "dra.net");
	DT_ASSERT_STR(nc->drivers[1], "gpu.nvidia.com");
	/* The GPU and the EFA allocated sit on one PCIe root of the type. */
	CU_ASSERT_EQUAL_FATAL(nc->n_claims, 1);
	CU_ASSERT_EQUAL_FATAL(nc->claims[0].n_results, 2);
	{
		const char *roots[2] = { NULL, NULL };

		for (size_t k = 0; k < 2; k++) {
			const struct plan_device *d = &nc->claims[0].results[k];
			const struct hwdb_device *list = strcmp(d->driver, "dra.net") ? got->gpus
										      : got->efas;
			size_t n = strcmp(d->driver, "dra.net") ? got->n_gpus : got->n_efas;

			for (size_t i = 0; i < n; i++)
				if (!strcmp(list[i].name, d->device))
					roots[k] = list[i].pcie_root;
		}
		CU_ASSERT_PTR_NOT_NULL_FATAL(roots[0]);
		CU_ASSERT_PTR_NOT_NULL_FATAL(roots[1]);
		DT_ASSERT_STR(roots[0], roots[1]);
	}
	/* Every cheaper type the pool allows lacks a shared root. */
	for (size_t i = 0; i < hwdb_count(); i++) {
		const struct hwdb_type *t = hwdb_at(i);

		if (t->has_price && t->price < got->price && seed_pool_allows(t))
			CU_ASSERT_FALSE(has_shared_root(t));
	}
	loaded_free(&l);
}

static void test_seed_timesliced(void)
{
	struct loaded l = plan_files("examples/seed/nodepool.yaml", "examples/seed/timesliced.yaml",
				     NULL);
	char gpus[16][160];
	size_t n_gpus = 0, pods = 0;
	double one_gpu = -1, multi_gpu = -1;

	CU_ASSERT_PTR_NOT_NULL_FATAL(l.res);
	CU_ASSERT_EQUAL(l.res->n_unschedulable, 0);
	for (size_t i = 0; i < l.res->n_node_claims; i++) {
		const struct plan_node_claim *nc = &l.res->node_claims[i];

		pods += nc->n_pods;
		for (size_t c = 0; c < nc->n_claims; c++)
			for (size_t k = 0; k < nc->claims[c].n_results; k++) {
				const struct plan_device *d = &nc->claims[c].results[k];
				char id[160];
				bool seen = false;

				CU_ASSERT_PTR_NOT_NULL(d->share_id);
				snprintf(id, sizeof(id), "%s/%s/%s", nc->name, d->pool, d->device);
				for (size_t g = 0; g < n_gpus; g++)
					seen = seen || !strcmp(gpus[g], id);
				if (!seen && n_gpus < 16)
					snprintf(gpus[n_gpus++], sizeof(gpus[0]), "%s", id);
			}
	}
	CU_ASSERT_EQUAL(pods, 8);
	/* Four shares a GPU: eight replicas take two GPUs. */
	CU_ASSERT_EQUAL(n_gpus, 2);
	/* Lowest total price: no dearer than two of the cheapest one-GPU type
	 * or one of the cheapest multi-GPU type the pool allows. */
	for (size_t i = 0; i < hwdb_count(); i++) {
		const struct hwdb_type *t = hwdb_at(i);

		if (!t->has_price || !seed_pool_allows(t) || !t->n_gpus)
			continue;
		if (one_gpu < 0)
			one_gpu = t->price;
		if (t->n_gpus >= 2 && multi_gpu < 0)
			multi_gpu = t->price;
	}
	CU_ASSERT_TRUE(l.res->total_price <= 2 * one_gpu + 1e-6);
	CU_ASSERT_TRUE(l.res->total_price <= multi_gpu + 1e-6);
	loaded_free(&l);
}

static void test_existing_nodes_first(void)
{
	struct loaded l = plan_files("examples/seed/nodepool.yaml", "examples/seed/ec2nodeclass.yaml",
				     "tests/fixtures/plan/existing-node.yaml",
				     "tests/fixtures/plan/one-gpu-pods.yaml", NULL);
	const struct plan_existing *e;

	CU_ASSERT_PTR_NOT_NULL_FATAL(l.res);
	CU_ASSERT_EQUAL(l.res->n_unschedulable, 0);
	CU_ASSERT_EQUAL_FATAL(l.res->n_existing, 1);
	e = &l.res->existing[0];
	DT_ASSERT_STR(e->node, "gpu-node-1");
	/* gpu-0 is taken by the running claim: two pods fit. */
	CU_ASSERT_EQUAL(e->n_pods, 2);
	DT_ASSERT_STR(e->pods[0], "default/worker-0");
	DT_ASSERT_STR(e->pods[1], "default/worker-1");
	for (size_t c = 0; c < e->n_claims; c++)
		for (size_t k = 0; k < e->claims[c].n_results; k++)
			CU_ASSERT_STRING_NOT_EQUAL(e->claims[c].results[k].device, "gpu-0");
	CU_ASSERT_EQUAL_FATAL(l.res->n_node_claims, 1);
	DT_ASSERT_STR(l.res->node_claims[0].pods[0], "default/worker-2");
	loaded_free(&l);
}

/* A pod bound to the node holds an L4 there too (its claim made from the
 * template and allocated on its node first): one worker fits, not two. */
static void test_bound_pod_holds_devices(void)
{
	struct loaded l = plan_files("examples/seed/nodepool.yaml", "examples/seed/ec2nodeclass.yaml",
				     "tests/fixtures/plan/existing-node.yaml",
				     "tests/fixtures/plan/one-gpu-pods.yaml",
				     "tests/fixtures/plan/bound-pod.yaml", NULL);
	size_t new_pods = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(l.res);
	CU_ASSERT_EQUAL(l.res->n_unschedulable, 0);
	CU_ASSERT_EQUAL_FATAL(l.res->n_existing, 1);
	CU_ASSERT_EQUAL(l.res->existing[0].n_pods, 1);
	DT_ASSERT_STR(l.res->existing[0].pods[0], "default/worker-0");
	for (size_t i = 0; i < l.res->n_node_claims; i++)
		new_pods += l.res->node_claims[i].n_pods;
	CU_ASSERT_EQUAL(new_pods, 2);
	CU_ASSERT_EQUAL(l.res->warnings.n, 0);
	loaded_free(&l);
}

static void test_priority_first_on_existing(void)
{
	struct loaded l = plan_files("examples/seed/nodepool.yaml", "examples/seed/ec2nodeclass.yaml",
				     "tests/fixtures/plan/existing-node.yaml",
				     "tests/fixtures/plan/one-gpu-pods.yaml",
				     "tests/fixtures/plan/urgent-pod.yaml", NULL);
	bool urgent = false;

	CU_ASSERT_PTR_NOT_NULL_FATAL(l.res);
	CU_ASSERT_EQUAL_FATAL(l.res->n_existing, 1);
	CU_ASSERT_EQUAL(l.res->existing[0].n_pods, 2);
	for (size_t i = 0; i < l.res->existing[0].n_pods; i++)
		urgent = urgent || !strcmp(l.res->existing[0].pods[i], "default/urgent");
	CU_ASSERT_TRUE(urgent);
	CU_ASSERT_EQUAL(l.res->n_unschedulable, 0);
	loaded_free(&l);
}

/* QA-62: a pod naming a PriorityClass gets the class's value, as the API
 * server's Priority admission sets it, and the free GPU before a pod of
 * priority 0 listed ahead of it. */
static void test_priority_class_first_on_existing(void)
{
	struct loaded l = plan_files("tests/fixtures/qa/plan-priority-class.yaml", NULL);

	CU_ASSERT_PTR_NOT_NULL_FATAL(l.res);
	CU_ASSERT_EQUAL(l.set->warnings.n, 0);      /* PriorityClass is read */
	CU_ASSERT_EQUAL(l.res->warnings.n, 0);
	CU_ASSERT_EQUAL(l.res->n_unschedulable, 0);
	CU_ASSERT_EQUAL_FATAL(l.res->n_existing, 1);
	CU_ASSERT_EQUAL_FATAL(l.res->existing[0].n_pods, 1);
	DT_ASSERT_STR(l.res->existing[0].pods[0], "default/important");
	CU_ASSERT_EQUAL_FATAL(l.res->n_node_claims, 1);
	DT_ASSERT_STR(l.res->node_claims[0].pods[0], "default/low");
	loaded_free(&l);
}

static void test_two_small_nodes_beat_one_big(void)
{
	struct loaded l = plan_files("tests/fixtures/plan/two-small.yaml", NULL);
	double cheapest_l4 = -1, cheapest_multi = -1;

	CU_ASSERT_PTR_NOT_NULL_FATAL(l.res);
	for (size_t i = 0; i < hwdb_count(); i++) {
		const struct hwdb_type *t = hwdb_at(i);

		if (!t->has_price || !t->dra_metadata || !t->gpu_model ||
		    strcmp(t->gpu_model, "NVIDIA L4"))
			continue;
		if (cheapest_l4 < 0)
			cheapest_l4 = t->price;
		if (t->n_gpus >= 2 && cheapest_multi < 0)
			cheapest_multi = t->price;
	}
	CU_ASSERT_FATAL(cheapest_l4 > 0 && cheapest_multi > 2 * cheapest_l4);
	CU_ASSERT_EQUAL(l.res->n_node_claims, 2);
	CU_ASSERT_DOUBLE_EQUAL(l.res->total_price, 2 * cheapest_l4, 1e-6);
	CU_ASSERT_TRUE(l.res->optimal);
	/* No NodePool given: the default one. */
	DT_ASSERT_STR(l.res->node_claims[0].node_pool, "default");
	/* Deployment replicas: <name>-<template hash>-<suffix>, distinct. */
	CU_ASSERT_EQUAL(strncmp(l.res->node_claims[0].pods[0], "default/infer-", 14), 0);
	CU_ASSERT_STRING_NOT_EQUAL(l.res->node_claims[0].pods[0], l.res->node_claims[1].pods[0]);
	loaded_free(&l);
}

static void test_shared_claim_one_node(void)
{
	struct loaded l = plan_files("tests/fixtures/plan/shared-claim.yaml", NULL);

	CU_ASSERT_PTR_NOT_NULL_FATAL(l.res);
	CU_ASSERT_EQUAL(l.res->n_unschedulable, 0);
	CU_ASSERT_EQUAL_FATAL(l.res->n_node_claims, 1);
	CU_ASSERT_EQUAL(l.res->node_claims[0].n_pods, 2);
	/* The claim is allocated once. */
	CU_ASSERT_EQUAL(l.res->node_claims[0].n_claims, 1);
	loaded_free(&l);
}

static const struct plan_unschedulable *find_uns(const struct plan_result *r, const char *pod)
{
	for (size_t i = 0; i < r->n_unschedulable; i++)
		if (!strcmp(r->unschedulable[i].pod, pod))
			return &r->unschedulable[i];
	return NULL;
}

static bool details_have(const struct plan_unschedulable *u, const char *type, const char *text)
{
	for (size_t i = 0; i < u->n_details; i++)
		if ((!type || (u->details[i].instance_type &&
			       !strcmp(u->details[i].instance_type, type))) &&
		    strstr(u->details[i].reason, text))
			return true;
	return false;
}

static void test_reasons(void)
{
	struct loaded l = plan_files("examples/seed/nodepool.yaml", "examples/seed/ec2nodeclass.yaml",
				     "tests/fixtures/plan/unschedulable.yaml", NULL);
	const struct plan_unschedulable *u;

	CU_ASSERT_PTR_NOT_NULL_FATAL(l.res);
	CU_ASSERT_EQUAL(l.res->n_unschedulable, 5);
	CU_ASSERT_EQUAL(l.res->n_node_claims, 0);

	u = find_uns(l.res, "default/too-many-gpus");
	CU_ASSERT_PTR_NOT_NULL_FATAL(u);
	CU_ASSERT_PTR_NOT_NULL(strstr(u->reason, "NodePool gpu-dra"));
	CU_ASSERT_PTR_NOT_NULL(strstr(u->reason, "devices cannot satisfy"));
	CU_ASSERT_PTR_NOT_NULL(strstr(u->reason, "requirements"));
	CU_ASSERT_TRUE(details_have(u, "g5.xlarge", "requirement"));
	CU_ASSERT_TRUE(details_have(u, "p5.48xlarge", "16"));
	CU_ASSERT_PTR_NULL(strchr(u->reason, '\n'));

	u = find_uns(l.res, "default/no-toleration");
	CU_ASSERT_PTR_NOT_NULL_FATAL(u);
	CU_ASSERT_PTR_NOT_NULL(strstr(u->reason, "nvidia.com/gpu"));
	CU_ASSERT_TRUE(details_have(u, "g6.xlarge", "taint"));

	u = find_uns(l.res, "default/wants-arm");
	CU_ASSERT_PTR_NOT_NULL_FATAL(u);
	CU_ASSERT_TRUE(details_have(u, "g6.xlarge", "arm64"));

	u = find_uns(l.res, "default/missing-template");
	CU_ASSERT_PTR_NOT_NULL_FATAL(u);
	CU_ASSERT_PTR_NOT_NULL(strstr(u->reason, "does-not-exist"));

	u = find_uns(l.res, "default/device-plugin");
	CU_ASSERT_PTR_NOT_NULL_FATAL(u);
	CU_ASSERT_PTR_NOT_NULL(strstr(u->reason, "nvidia.com/gpu"));
	CU_ASSERT_PTR_NOT_NULL(strstr(u->reason, "not a DRA pod"));
	loaded_free(&l);
}

static void test_no_efa_on_gpu_root(void)
{
	struct loaded l = plan_files("tests/fixtures/plan/g6-pool.yaml",
				     "examples/seed/gpu-efa-aligned.yaml", NULL);
	const struct plan_unschedulable *u;

	CU_ASSERT_PTR_NOT_NULL_FATAL(l.res);
	CU_ASSERT_EQUAL(l.res->n_node_claims, 0);
	u = find_uns(l.res, "default/rdma-worker");
	CU_ASSERT_PTR_NOT_NULL_FATAL(u);
	/* g6.48xlarge has GPUs and an EFA, on different roots. */
	CU_ASSERT_TRUE(details_have(u, "g6.48xlarge", "no EFA on a GPU's PCIe root"));
	/* g6.xlarge has no EFA at all: the efa request matches nothing. */
	CU_ASSERT_TRUE(details_have(u, "g6.xlarge", "request efa"));
	CU_ASSERT_PTR_NOT_NULL(strstr(u->reason, "NodePool g6-only"));
	loaded_free(&l);
}

static void test_selector_error_named(void)
{
	struct loaded l = plan_files("tests/fixtures/plan/typo-selector.yaml", NULL);
	const struct plan_unschedulable *u;

	CU_ASSERT_PTR_NOT_NULL_FATAL(l.res);
	u = find_uns(l.res, "default/typo");
	CU_ASSERT_PTR_NOT_NULL_FATAL(u);
	/* a CEL runtime error fails the pod, as in the scheduler: the reason
	 * carries it rather than a count of non-matching devices */
	CU_ASSERT_PTR_NOT_NULL(strstr(u->reason, "productNmae"));
	CU_ASSERT_PTR_NOT_NULL(strstr(u->reason, "CEL runtime error"));
	loaded_free(&l);
}

static void test_allocator_error_fails_pod_only(void)
{
	struct loaded l = plan_files("tests/fixtures/plan/existing-node.yaml",
				     "tests/fixtures/plan/cel-error.yaml",
				     "tests/fixtures/plan/two-small.yaml", NULL);
	const struct plan_unschedulable *u;

	CU_ASSERT_PTR_NOT_NULL_FATAL(l.res);
	u = find_uns(l.res, "default/divzero");
	CU_ASSERT_PTR_NOT_NULL_FATAL(u);
	CU_ASSERT_PTR_NOT_NULL(strstr(u->reason, "division by zero"));
	/* The other pods are still planned. */
	CU_ASSERT_EQUAL(l.res->n_unschedulable, 1);
	CU_ASSERT_EQUAL(l.res->n_node_claims, 2);
	loaded_free(&l);
}

/* QA-8: a claim already allocated on node-1 only pins its pods there;
 * they are placed one at a time, so the pod that does not tolerate
 * node-1's taint fails alone. */
static void test_allocated_claim_pods_placed_alone(void)
{
	struct loaded l = plan_files("tests/fixtures/plan/p5-node1-slices.yaml",
				     "tests/fixtures/plan/allocated-claim.yaml", NULL);
	const struct plan_unschedulable *u;

	CU_ASSERT_PTR_NOT_NULL_FATAL(l.res);
	CU_ASSERT_EQUAL_FATAL(l.res->n_existing, 1);
	DT_ASSERT_STR(l.res->existing[0].node, "node-1");
	CU_ASSERT_EQUAL_FATAL(l.res->existing[0].n_pods, 1);
	DT_ASSERT_STR(l.res->existing[0].pods[0], "default/user");
	CU_ASSERT_EQUAL(l.res->n_unschedulable, 1);
	CU_ASSERT_EQUAL(l.res->n_node_claims, 0);
	u = find_uns(l.res, "default/intolerant-user");
	CU_ASSERT_PTR_NOT_NULL_FATAL(u);
	CU_ASSERT_PTR_NOT_NULL(strstr(u->reason, "taint nvidia.com/gpu:NoSchedule not tolerated"));
	CU_ASSERT_PTR_NULL(strstr(u->reason, "sharing"));
	loaded_free(&l);
}

/* QA-5: a claim over the 32-result limit fails only its pods, each with
 * the limit's message naming its own claim; the rest is planned. */
static void test_claim_over_limit_fails_its_pods(void)
{
	struct loaded l = plan_files("tests/fixtures/plan/over-limit.yaml", NULL);
	size_t placed = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(l.res);
	CU_ASSERT_EQUAL_FATAL(l.res->n_unschedulable, 2);
	for (size_t i = 0; i < l.res->n_unschedulable; i++) {
		const struct plan_unschedulable *u = &l.res->unschedulable[i];
		char own[128];

		CU_ASSERT_PTR_NOT_NULL(strstr(u->reason, "exceeds the claim limit of 32"));
		/* "team/train-1" names claim team/train-1-node-...: its own. */
		snprintf(own, sizeof(own), "claim %s-node-", u->pod);
		CU_ASSERT_PTR_NOT_NULL(strstr(u->reason, own));
	}
	CU_ASSERT_PTR_NOT_NULL(find_uns(l.res, "team/train-0"));
	CU_ASSERT_PTR_NOT_NULL(find_uns(l.res, "team/train-1"));
	for (size_t i = 0; i < l.res->n_node_claims; i++)
		placed += l.res->node_claims[i].n_pods;
	CU_ASSERT_EQUAL(placed + 2, l.res->n_pods);
	CU_ASSERT_TRUE(placed > 0);
	loaded_free(&l);
}

/* QA-7: a selector reading an attribute the devices do not have (and that
 * is not node-uniform) is a CEL runtime error on the real node: the pod's
 * reason is that error, and the pod fails there as the scheduler fails it. */
static void test_selector_typo_is_runtime_error(void)
{
	struct loaded l = plan_files("tests/fixtures/plan/typo-attribute.yaml", NULL);
	const struct plan_unschedulable *u;

	CU_ASSERT_PTR_NOT_NULL_FATAL(l.res);
	CU_ASSERT_EQUAL_FATAL(l.res->n_unschedulable, 1);
	u = &l.res->unschedulable[0];
	CU_ASSERT_PTR_NOT_NULL(strstr(u->reason, "CEL runtime error: no such key: productNmae"));
	CU_ASSERT_PTR_NOT_NULL(strstr(u->reason, "optional chaining"));
	CU_ASSERT_PTR_NULL(strstr(u->reason, "devices match the selectors"));
	loaded_free(&l);
}

static void test_no_on_demand_offering(void)
{
	struct loaded l = plan_files("tests/fixtures/plan/spot-only-pool.yaml", NULL);
	const struct plan_unschedulable *u;

	CU_ASSERT_PTR_NOT_NULL_FATAL(l.res);
	u = find_uns(l.res, "default/any-gpu");
	CU_ASSERT_PTR_NOT_NULL_FATAL(u);
	CU_ASSERT_TRUE(details_have(u, "p5e.48xlarge", "no on-demand offering"));
	CU_ASSERT_PTR_NOT_NULL(strstr(u->reason, "offering"));
	loaded_free(&l);
}

/* A catalogue with an extra type: the plan launches it, the process's
 * hwdb (and a plan without the catalogue) never sees it. */
static void test_catalog_extra_type(void)
{
	struct hwdb_catalog *cat = NULL;
	struct dt_err err = { 0 };
	struct loaded l;

	CU_ASSERT_EQUAL_FATAL(hwdb_catalog_new(NULL, &cat, &err), 0);
	CU_ASSERT_EQUAL_FATAL(hwdb_catalog_load(cat, dt_fixture("plan/hwdb-extra.yaml"), &err), 0);
	l = plan_files_in(cat, "examples/seed/nodepool.yaml", "examples/seed/ec2nodeclass.yaml",
			  "examples/seed/large-gpu.yaml", NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(l.res);
	CU_ASSERT_EQUAL_FATAL(l.res->n_node_claims, 1);
	DT_ASSERT_STR(l.res->node_claims[0].instance_type, "p5.2xlarge");
	CU_ASSERT_DOUBLE_EQUAL(l.res->total_price, 4.5, 1e-9);
	loaded_free(&l);
	hwdb_catalog_free(cat);
	CU_ASSERT_PTR_NULL(hwdb_lookup("p5.2xlarge"));
	l = plan_files("examples/seed/nodepool.yaml", "examples/seed/ec2nodeclass.yaml",
		       "examples/seed/large-gpu.yaml", NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(l.res);
	CU_ASSERT_EQUAL_FATAL(l.res->n_node_claims, 1);
	CU_ASSERT_PTR_NOT_NULL(hwdb_lookup(l.res->node_claims[0].instance_type));
	loaded_free(&l);
}

/* p5.2xlarge as a fleet learns it: the same facts, no price. */
static struct hwdb_entry *learned_p5_2xlarge(void)
{
	struct hwdb_catalog *cat = NULL;
	struct hwdb_entry *e = NULL;
	struct strbuf sb = STRBUF_INIT;
	struct dt_err err = { 0 };
	struct hwdb_type t;
	const struct hwdb_type *tp = &t;

	if (!hwdb_catalog_new(NULL, &cat, &err) &&
	    !hwdb_catalog_load(cat, dt_fixture("plan/hwdb-extra.yaml"), &err)) {
		t = *hwdb_catalog_lookup(cat, "p5.2xlarge");
		t.has_price = false;
		if (!hwdb_file_write_yaml(&tp, 1, &sb) &&
		    hwdb_entry_parse(sb_str(&sb), "p5.2xlarge", "learned", &e, &err))
			fprintf(stderr, "\n  learned entry: %s\n", err.msg);
	}
	sb_free(&sb);
	hwdb_catalog_free(cat);
	return e;
}

/* The small-h200 pod of learned-pool.yaml (with overlay, or NULL) planned
 * on cat: it must stay unschedulable, its details for p5.2xlarge holding
 * want and, when not NULL, not unwanted. */
static void learned_rejected(struct hwdb_catalog *cat, const char *overlay, const char *want,
			     const char *unwanted)
{
	struct loaded l = plan_files_in(cat, "tests/fixtures/plan/learned-pool.yaml", overlay,
					NULL);
	const struct plan_unschedulable *u;

	CU_ASSERT_PTR_NOT_NULL_FATAL(l.res);
	CU_ASSERT_EQUAL(l.res->n_node_claims, 0);
	u = find_uns(l.res, "default/small-h200");
	CU_ASSERT_PTR_NOT_NULL_FATAL(u);
	CU_ASSERT_TRUE(details_have(u, "p5.2xlarge", want));
	if (unwanted)
		CU_ASSERT_FALSE(details_have(u, "p5.2xlarge", unwanted));
	if (!overlay)
		CU_ASSERT_PTR_NOT_NULL(strstr(u->reason, "1 learned by the fleet, without a "
					      "price (p5.2xlarge: learned type, no price"));
	loaded_free(&l);
}

/* The same pod launched on one p5.2xlarge at price (< 0: any). */
static void learned_launched(struct hwdb_catalog *cat, const char *overlay, double price)
{
	struct loaded l = plan_files_in(cat, "tests/fixtures/plan/learned-pool.yaml", overlay,
					NULL);

	CU_ASSERT_PTR_NOT_NULL_FATAL(l.res);
	CU_ASSERT_EQUAL(l.res->n_unschedulable, 0);
	CU_ASSERT_EQUAL_FATAL(l.res->n_node_claims, 1);
	DT_ASSERT_STR(l.res->node_claims[0].instance_type, "p5.2xlarge");
	if (price >= 0)
		CU_ASSERT_DOUBLE_EQUAL(l.res->node_claims[0].price, price, 1e-9);
	loaded_free(&l);
}

/* A learned type without a price is no launch candidate, and the reason
 * says so and how to give it one; a NodeOverlay's price, or an extra on
 * top, makes it one; an overlay that can only adjust names itself. */
static void test_catalog_learned_type(void)
{
	struct hwdb_entry *e = learned_p5_2xlarge();
	struct hwdb_catalog *cat = NULL;
	struct dt_err err = { 0 };

	CU_ASSERT_PTR_NOT_NULL_FATAL(e);
	CU_ASSERT_EQUAL_FATAL(hwdb_catalog_new(NULL, &cat, &err), 0);
	CU_ASSERT_EQUAL_FATAL(hwdb_catalog_add_learned(cat, hwdb_entry_type(e), &err), 0);
	hwdb_entry_free(e);
	learned_rejected(cat, NULL, "learned type, no price: give one with --hwdb-extra or a "
			 "NodeOverlay", NULL);
	learned_launched(cat, "tests/fixtures/plan/learned-overlay.yaml", 3.25);
	learned_rejected(cat, "tests/fixtures/plan/learned-adjust.yaml", "learned type, no "
			 "price: no on-demand offering: NodeOverlay p5-2xl-discount adjusts the "
			 "price", "give one with");
	/* an extra of its name makes it a candidate */
	CU_ASSERT_EQUAL_FATAL(hwdb_catalog_load(cat, dt_fixture("plan/hwdb-extra.yaml"), &err), 0);
	learned_launched(cat, NULL, -1);
	hwdb_catalog_free(cat);
}

/* ---- zones: a new node lives in one (QA-37) ---- */

static struct loaded plan_yaml_opts(const char *yaml, const struct plan_options *opts)
{
	struct loaded l = { model_set_new(), NULL };
	struct dt_diags errs;
	struct dt_err err = { 0 };

	dt_diags_init(&errs);
	CU_ASSERT_EQUAL(model_set_load_buffer(l.set, yaml, strlen(yaml), "zones.yaml", &errs,
					      &err), 0);
	CU_ASSERT_EQUAL(dt_diags_count(&errs), 0);
	dt_diags_free(&errs);
	if (plan_run(l.set, opts, &l.res, &err))
		fprintf(stderr, "\n  plan_run: %s\n", err.msg);
	CU_ASSERT_PTR_NOT_NULL(l.res);
	return l;
}

static struct loaded plan_yaml(const char *yaml)
{
	return plan_yaml_opts(yaml, NULL);
}

/* The node claims' narrowed requirements, "KEY OP V,V;" each, the claims
 * separated by " | ", into buf. */
static void narrowed_text(const struct plan_result *r, char *buf, size_t sz)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < r->n_node_claims; i++) {
		const struct plan_node_claim *nc = &r->node_claims[i];

		len += (size_t)snprintf(buf + len, sz - len, "%s", i ? " | " : "");
		for (size_t k = 0; k < nc->n_narrowed; k++) {
			const struct model_requirement *q = &nc->narrowed[k];

			len += (size_t)snprintf(buf + len, sz - len, "%s %s ", q->key,
						q->operator_text);
			for (size_t v = 0; v < q->n_values; v++)
				len += (size_t)snprintf(buf + len, sz - len, "%s%s", v ? "," : "",
							q->values[v]);
			len += (size_t)snprintf(buf + len, sz - len, ";");
		}
	}
}

#define ZPOD(name, sched) "---\napiVersion: v1\nkind: Pod\nmetadata: {name: " name "}\n" \
	"spec:\n" sched "  containers: [{name: c, image: x, resources: {requests: {cpu: '1'}}}]\n"
#define ZSEL(z) "  nodeSelector: {topology.kubernetes.io/zone: " z "}\n"
#define ZAFF(op, vals) "  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuring" \
	"Execution: {nodeSelectorTerms: [{matchExpressions: [{key: topology.kubernetes.io/zone, " \
	"operator: " op vals "}]}]}}}\n"
#define ZAFF2(z1, z2) "  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuring" \
	"Execution: {nodeSelectorTerms: [{matchExpressions: [{key: topology.kubernetes.io/zone, " \
	"operator: In, values: [" z1 "]}]}, {matchExpressions: [{key: topology.kubernetes.io/zone, " \
	"operator: In, values: [" z2 "]}]}]}}}\n"
#define ZPOOL(reqs) "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: default}\n" \
	"spec:\n  template:\n    spec:\n      nodeClassRef: {group: karpenter.k8s.aws, " \
	"kind: EC2NodeClass, name: default}\n      requirements:\n" \
	"      - {key: karpenter.k8s.aws/instance-family, operator: In, values: [g6f]}\n" reqs \
	"---\napiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: {name: default}\n" \
	"spec:\n  role: r\n  amiSelectorTerms: [{alias: al2023@latest}]\n" \
	"  subnetSelectorTerms: [{tags: {k: v}}]\n  securityGroupSelectorTerms: [{tags: {k: v}}]\n"

static void test_zones_narrow_node_claims(void)
{
	static const struct {
		const char *what, *yaml;
		size_t claims;
		const char *narrowed;   /* narrowed_text; claims in the planner's order */
	} cases[] = {
		{ "two zones, two nodes", ZPOD("a", ZSEL("us-east-1a")) ZPOD("b", ZSEL("us-east-1b")),
		  2, "topology.kubernetes.io/zone In us-east-1a; | "
		     "topology.kubernetes.io/zone In us-east-1b;" },
		{ "one zone, one node", ZPOD("a", ZSEL("us-east-1a")) ZPOD("b", ZSEL("us-east-1a")),
		  1, "topology.kubernetes.io/zone In us-east-1a;" },
		{ "overlapping In lists meet in their common zone",
		  ZPOD("a", ZAFF("In", ", values: [us-east-1a, us-east-1b]"))
		  ZPOD("b", ZAFF("In", ", values: [us-east-1b, us-east-1c]")),
		  1, "topology.kubernetes.io/zone In us-east-1b;" },
		{ "NotIn narrows the pool's In list",
		  ZPOOL("      - {key: topology.kubernetes.io/zone, operator: In, values: "
			"[us-east-1a, us-east-1b]}\n")
		  ZPOD("a", ZAFF("NotIn", ", values: [us-east-1a]")),
		  1, "topology.kubernetes.io/zone In us-east-1b;" },
		{ "NotIn alone stays NotIn, the exclusions merged",
		  ZPOD("a", ZAFF("NotIn", ", values: [us-east-1a]"))
		  ZPOD("b", ZAFF("NotIn", ", values: [us-east-1b]")),
		  1, "topology.kubernetes.io/zone NotIn us-east-1a,us-east-1b;" },
		{ "ORed terms allow the union of their zones: one is the other pod's",
		  ZPOD("a", ZAFF2("us-east-1a", "us-east-1b")) ZPOD("b", ZSEL("us-east-1b")),
		  1, "topology.kubernetes.io/zone In us-east-1b;" },
		{ "ORed terms allow the union of their zones: none is the other pod's",
		  ZPOD("a", ZAFF2("us-east-1a", "us-east-1b")) ZPOD("b", ZSEL("us-east-1c")),
		  2, "topology.kubernetes.io/zone In us-east-1a,us-east-1b; | "
		     "topology.kubernetes.io/zone In us-east-1c;" },
		{ "Exists narrows nothing", ZPOD("a", ZAFF("Exists", "")), 1, "" },
		{ "unpinned pods name no zone", ZPOD("a", "") ZPOD("b", ""), 1, "" },
	};
	char got[512];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct loaded l = plan_yaml(cases[i].yaml);

		CU_ASSERT_PTR_NOT_NULL_FATAL(l.res);
		narrowed_text(l.res, got, sizeof(got));
		if (l.res->n_node_claims != cases[i].claims || strcmp(got, cases[i].narrowed))
			fprintf(stderr, "\n  %s: %zu claims \"%s\"", cases[i].what,
				l.res->n_node_claims, got);
		CU_ASSERT_EQUAL(l.res->n_node_claims, cases[i].claims);
		DT_ASSERT_STR(got, cases[i].narrowed);
		CU_ASSERT_EQUAL(l.res->n_unschedulable, 0);
		loaded_free(&l);
	}
}

/* A new node always has a zone: a pod asking for none fits no new node. */
static void test_zone_does_not_exist(void)
{
	struct loaded l = plan_yaml(ZPOD("a", ZAFF("DoesNotExist", "")));

	CU_ASSERT_PTR_NOT_NULL_FATAL(l.res);
	CU_ASSERT_EQUAL(l.res->n_node_claims, 0);
	CU_ASSERT_EQUAL_FATAL(l.res->n_unschedulable, 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(l.res->unschedulable[0].reason, "node affinity "
				      "topology.kubernetes.io/zone DoesNotExist does not match"));
	loaded_free(&l);
}

/* A pod asking for a zone the NodePool excludes: the reason names the
 * pool's requirement, not a label "not set". */
static void test_zone_pool_excludes(void)
{
	struct loaded l = plan_yaml(ZPOOL("      - {key: topology.kubernetes.io/zone, operator: NotIn, "
					  "values: [us-east-1a]}\n")
				    ZPOD("a", ZSEL("us-east-1a")));

	CU_ASSERT_PTR_NOT_NULL_FATAL(l.res);
	CU_ASSERT_EQUAL_FATAL(l.res->n_unschedulable, 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(l.res->unschedulable[0].reason, "nodeSelector "
				      "topology.kubernetes.io/zone=us-east-1a: the NodePool requires "
				      "topology.kubernetes.io/zone NotIn [us-east-1a]"));
	loaded_free(&l);
}

/* Offerings that ran out of capacity lately (Karpenter's unavailable-
 * offerings cache, fed by NodeClaims deleted for it): in every zone, the
 * type is another; in one zone, the same type launches elsewhere (its
 * NodeClaim says so), unless the pod needs that zone; another capacity
 * type's failure changes nothing; every type gone is a reason. */
static void test_unavailable_offerings(void)
{
	struct loaded l = plan_yaml(ZPOD("a", ""));
	struct plan_unavailable u[8];
	struct plan_options o = { .unavailable = u };
	char first[64], got[512];

	CU_ASSERT_EQUAL_FATAL(l.res->n_node_claims, 1);
	snprintf(first, sizeof(first), "%s", l.res->node_claims[0].instance_type);
	loaded_free(&l);

	u[0] = (struct plan_unavailable){ first, "on-demand", NULL };
	o.n_unavailable = 1;
	l = plan_yaml_opts(ZPOD("a", ""), &o);
	CU_ASSERT_EQUAL_FATAL(l.res->n_node_claims, 1);
	CU_ASSERT_STRING_NOT_EQUAL(l.res->node_claims[0].instance_type, first);
	loaded_free(&l);

	u[0] = (struct plan_unavailable){ first, "spot", NULL };
	l = plan_yaml_opts(ZPOD("a", ""), &o);
	CU_ASSERT_EQUAL_FATAL(l.res->n_node_claims, 1);
	DT_ASSERT_STR(l.res->node_claims[0].instance_type, first);
	loaded_free(&l);

	u[0] = (struct plan_unavailable){ first, NULL, "us-east-1a" };
	u[1] = (struct plan_unavailable){ first, "on-demand", "us-east-1c" };
	o.n_unavailable = 2;
	l = plan_yaml_opts(ZPOD("a", ""), &o);
	CU_ASSERT_EQUAL_FATAL(l.res->n_node_claims, 1);
	DT_ASSERT_STR(l.res->node_claims[0].instance_type, first);
	narrowed_text(l.res, got, sizeof(got));
	DT_ASSERT_STR(got, "topology.kubernetes.io/zone NotIn us-east-1a,us-east-1c;");
	loaded_free(&l);

	l = plan_yaml_opts(ZPOD("a", ZAFF("In", ", values: [us-east-1a, us-east-1b]")), &o);
	CU_ASSERT_EQUAL_FATAL(l.res->n_node_claims, 1);
	DT_ASSERT_STR(l.res->node_claims[0].instance_type, first);
	narrowed_text(l.res, got, sizeof(got));
	DT_ASSERT_STR(got, "topology.kubernetes.io/zone In us-east-1b;");
	loaded_free(&l);

	l = plan_yaml_opts(ZPOD("a", ZSEL("us-east-1a")), &o);
	CU_ASSERT_EQUAL_FATAL(l.res->n_node_claims, 1);
	CU_ASSERT_STRING_NOT_EQUAL(l.res->node_claims[0].instance_type, first);
	loaded_free(&l);

	/* the pool's one family, every type of it out of capacity */
	o.n_unavailable = 0;
	for (size_t i = 0; i < hwdb_count() && o.n_unavailable < 8; i++) {
		const struct hwdb_type *t = hwdb_at(i);

		if (!strncmp(t->name, "g6f.", 4))
			u[o.n_unavailable++] = (struct plan_unavailable){ t->name, NULL, NULL };
	}
	CU_ASSERT(o.n_unavailable > 0);
	l = plan_yaml_opts(ZPOOL("") ZPOD("a", ""), &o);
	CU_ASSERT_EQUAL(l.res->n_node_claims, 0);
	CU_ASSERT_EQUAL_FATAL(l.res->n_unschedulable, 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(l.res->unschedulable[0].reason,
				      "whose offering recently ran out of capacity"));
	loaded_free(&l);
}

/* ---- DaemonSets: what their pods take on every new node ---- */

#define DS(name, sched, cpu) "---\napiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: " \
	name "}\nspec:\n  selector: {matchLabels: {app: " name "}}\n  template:\n" \
	"    metadata: {labels: {app: " name "}}\n    spec:\n" sched \
	"      containers: [{name: c, image: x, resources: {requests: {cpu: '" cpu "'}}}]\n"
#define CPU_POD "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n" \
	"  containers: [{name: c, image: x, resources: {requests: {cpu: 1500m}}}]\n"

/* The cheapest type for a 1.5-CPU pod, and its NodeClaim's CPU request. */
static void daemon_case(const char *yaml, const char *type, int64_t cpu_milli)
{
	struct loaded l = plan_yaml(yaml);

	CU_ASSERT_PTR_NOT_NULL_FATAL(l.res);
	CU_ASSERT_EQUAL_FATAL(l.res->n_node_claims, 1);
	DT_ASSERT_STR(l.res->node_claims[0].instance_type, type);
	CU_ASSERT_EQUAL(l.res->node_claims[0].requests.cpu_milli, cpu_milli);
	loaded_free(&l);
}

/* As Karpenter's daemon overhead: a DaemonSet whose pods would run on the
 * pool's nodes takes its requests from every new node (the 1.5-CPU pod no
 * longer fits the 2-vCPU type beside a 1-CPU daemon), and the NodeClaim
 * requests both; one selecting a label the pool never sets takes nothing. */
static void test_daemonset_overhead(void)
{
	daemon_case(CPU_POD, "g6f.large", 1500);
	daemon_case(DS("logs", "", "1") CPU_POD, "g6f.xlarge", 2500);
	daemon_case(DS("gfd", "      nodeSelector: {nvidia.com/gpu.present: 'true'}\n", "1")
		    CPU_POD, "g6f.large", 1500);
}

/* A NodeOverlay's spec.price makes p5e.48xlarge (no hwdb price) a
 * candidate, and the cheaper one for an H200: it is launched at the
 * overlay's price, which the output names. */
static void test_overlay_prices_p5e(void)
{
	struct loaded l = plan_files("tests/fixtures/plan/overlay-h200.yaml",
				     "examples/seed/ec2nodeclass.yaml",
				     "examples/seed/large-gpu.yaml", NULL);
	const struct hwdb_type *p5en = hwdb_lookup("p5en.48xlarge");
	struct strbuf sb = STRBUF_INIT;

	CU_ASSERT_PTR_NOT_NULL_FATAL(l.res);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p5en);
	CU_ASSERT_FALSE(hwdb_lookup("p5e.48xlarge")->has_price);
	CU_ASSERT_EQUAL_FATAL(l.res->n_node_claims, 1);
	CU_ASSERT_TRUE(40.0 < p5en->price);
	DT_ASSERT_STR(l.res->node_claims[0].instance_type, "p5e.48xlarge");
	CU_ASSERT_DOUBLE_EQUAL(l.res->node_claims[0].price, 40.0, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(l.res->total_price, 40.0, 1e-9);
	DT_ASSERT_STR(l.res->node_claims[0].price_overlay, "p5e-reserved");
	CU_ASSERT_EQUAL(plan_emit_json(l.res, DOC_JSON_PRETTY, &sb), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(sb_str(&sb), "\"pricePerHour\": 40"));
	CU_ASSERT_PTR_NOT_NULL(strstr(sb_str(&sb), "\"priceOverlay\": \"p5e-reserved\""));
	sb_reset(&sb);
	CU_ASSERT_EQUAL(plan_emit_yaml(l.res, &sb), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(sb_str(&sb),
				      "# price: 40.0000 per hour, from NodeOverlay p5e-reserved\n"));
	sb_free(&sb);
	loaded_free(&l);
}

/* +150% on the g6 family: the two L4 pods of two-small.yaml go to the
 * cheapest other L4 type instead, at its hwdb price. */
static void test_overlay_makes_type_dearer(void)
{
	struct loaded l = plan_files("tests/fixtures/plan/two-small.yaml",
				     "tests/fixtures/plan/overlay-g6-dearer.yaml", NULL);
	double best = 0;

	for (size_t i = 0; i < hwdb_count(); i++) {
		const struct hwdb_type *t = hwdb_at(i);

		if (t->has_price && t->n_gpus == 1 && strcmp(t->family, "g6") && t->gpu_model &&
		    !strcmp(t->gpu_model, "NVIDIA L4") && (!best || t->price < best))
			best = t->price;
	}
	CU_ASSERT_PTR_NOT_NULL_FATAL(l.res);
	CU_ASSERT_TRUE_FATAL(best > 0);
	CU_ASSERT_EQUAL_FATAL(l.res->n_node_claims, 2);
	CU_ASSERT_EQUAL(l.res->n_unschedulable, 0);
	for (size_t i = 0; i < l.res->n_node_claims; i++) {
		const struct hwdb_type *t = hwdb_lookup(l.res->node_claims[i].instance_type);

		CU_ASSERT_PTR_NOT_NULL_FATAL(t);
		CU_ASSERT_STRING_NOT_EQUAL(t->family, "g6");
		CU_ASSERT_DOUBLE_EQUAL(l.res->node_claims[i].price, best, 1e-9);
		CU_ASSERT_PTR_NULL(l.res->node_claims[i].price_overlay);
	}
	/* the dearer g6.xlarge would cost 0.8048 x 2.5 each */
	CU_ASSERT_TRUE(best < hwdb_lookup("g6.xlarge")->price * 2.5);
	loaded_free(&l);
}

/* Overlay capacity: each example.com/fuse pod needs a node that has one,
 * and only g6.2xlarge nodes do, one each. */
static void test_overlay_capacity(void)
{
	struct loaded l = plan_files("tests/fixtures/plan/overlay-fuse.yaml", NULL);
	size_t fuse_pods = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(l.res);
	CU_ASSERT_EQUAL(l.res->n_unschedulable, 0);
	CU_ASSERT_EQUAL_FATAL(l.res->n_ext_names, 1);
	DT_ASSERT_STR(l.res->ext_names[0], "example.com/fuse");
	for (size_t i = 0; i < l.res->n_node_claims; i++) {
		const struct plan_node_claim *nc = &l.res->node_claims[i];
		size_t here = 0;

		for (size_t k = 0; k < nc->n_pods; k++)
			here += !strncmp(nc->pods[k], "default/fuse-user-", 18);
		CU_ASSERT_TRUE(here <= 1);
		CU_ASSERT_EQUAL(nc->requests.ext[0], (int64_t)here);
		if (here)
			DT_ASSERT_STR(nc->instance_type, "g6.2xlarge");
		fuse_pods += here;
	}
	CU_ASSERT_EQUAL(fuse_pods, 2);
	loaded_free(&l);
}

static void test_pool_limits(void)
{
	struct loaded l = plan_files("tests/fixtures/plan/limited-pool.yaml", NULL);
	const struct hwdb_type *t;

	CU_ASSERT_PTR_NOT_NULL_FATAL(l.res);
	CU_ASSERT_EQUAL_FATAL(l.res->n_node_claims, 1);
	t = hwdb_lookup(l.res->node_claims[0].instance_type);
	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	CU_ASSERT_TRUE(t->vcpu <= 8);
	CU_ASSERT_EQUAL_FATAL(l.res->n_unschedulable, 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(l.res->unschedulable[0].reason, "limits"));
	CU_ASSERT_FALSE(l.res->optimal);
	loaded_free(&l);
}

/* QA-78: the pool's running nodes count against its limits (its own only). */
static void test_pool_limits_count_nodes(void)
{
	struct loaded l = plan_files("tests/fixtures/qa/plan-limit-existing.yaml", NULL);

	CU_ASSERT_PTR_NOT_NULL_FATAL(l.res);
	CU_ASSERT_EQUAL_FATAL(l.res->n_node_claims, 1);
	CU_ASSERT_EQUAL(hwdb_lookup(l.res->node_claims[0].instance_type)->n_gpus, 1);
	CU_ASSERT_EQUAL_FATAL(l.res->n_unschedulable, 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(l.res->unschedulable[0].reason,
				      "the NodePool's limits are reached"));
	loaded_free(&l);
}

/* QA-75: a pod tries the node made for it before first fit hands that
 * node to another pod (tests/fixtures/qa/plan-made-for.yaml). */
static void test_made_for_first(void)
{
	static const struct plan_made_for made[] = {
		{ "default/zonal-1", "node-a" }, { "default/big", "node-b" },
		{ "default/gone", "node-c" },   /* a node not there: ignored */
	};
	struct plan_options o = { .made_for = made, .n_made_for = 3 };
	struct loaded l;
	struct dt_diags errs;
	struct dt_err err = { 0 };
	char path[4096];

	/* first fit: big takes node-a, the zonal pods get new nodes */
	l = plan_files("tests/fixtures/qa/plan-made-for.yaml", NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(l.res);
	CU_ASSERT_EQUAL(l.res->n_node_claims, 2);
	loaded_free(&l);

	l = (struct loaded){ model_set_new(), NULL };
	dt_diags_init(&errs);
	snprintf(path, sizeof(path), "%s/tests/fixtures/qa/plan-made-for.yaml", DT_SOURCE_DIR);
	CU_ASSERT_EQUAL(model_set_load_file(l.set, path, &errs, &err), 0);
	dt_diags_free(&errs);
	CU_ASSERT_EQUAL_FATAL(plan_run(l.set, &o, &l.res, &err), 0);
	CU_ASSERT_EQUAL(l.res->n_node_claims, 0);
	CU_ASSERT_EQUAL(l.res->n_unschedulable, 0);
	CU_ASSERT_EQUAL_FATAL(l.res->n_existing, 2);
	for (size_t i = 0; i < l.res->n_existing; i++) {
		const struct plan_existing *e = &l.res->existing[i];

		if (!strcmp(e->node, "node-b")) {
			CU_ASSERT_EQUAL_FATAL(e->n_pods, 1);
			DT_ASSERT_STR(e->pods[0], "default/big");
		} else {
			CU_ASSERT_EQUAL(e->n_pods, 2);  /* zonal-1, and zonal-2 beside it */
		}
	}
	loaded_free(&l);
}

/* QA-31: a new node's host name is none a pod can name. */
static void test_hostname_pins_to_existing(void)
{
	struct loaded l = plan_files("tests/fixtures/qa/plan-hostname.yaml", NULL);
	const struct plan_unschedulable *u;
	size_t on_new = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(l.res);
	CU_ASSERT_EQUAL(l.res->n_unschedulable, 2);
	u = find_uns(l.res, "default/pinned-elsewhere");
	CU_ASSERT_PTR_NOT_NULL_FATAL(u);
	CU_ASSERT_PTR_NOT_NULL(strstr(u->reason, "a new node has a host name of its own"));
	CU_ASSERT_PTR_NOT_NULL(find_uns(l.res, "default/affinity-elsewhere"));
	CU_ASSERT_EQUAL_FATAL(l.res->n_existing, 1);
	CU_ASSERT_EQUAL_FATAL(l.res->existing[0].n_pods, 1);
	DT_ASSERT_STR(l.res->existing[0].pods[0], "default/pinned-node-a");
	for (size_t i = 0; i < l.res->n_node_claims; i++)
		on_new += l.res->node_claims[i].n_pods;
	CU_ASSERT_EQUAL(on_new, 2);     /* not-there (NotIn), any-host (Exists) */
	loaded_free(&l);
}

static void test_output_formats(void)
{
	struct loaded l = plan_files("examples/seed/nodepool.yaml", "examples/seed/ec2nodeclass.yaml",
				     "examples/seed/gpu-efa-aligned.yaml", NULL);
	struct strbuf sb = STRBUF_INIT;

	CU_ASSERT_PTR_NOT_NULL_FATAL(l.res);
	CU_ASSERT_EQUAL(plan_emit_json(l.res, DOC_JSON_PRETTY, &sb), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(sb_str(&sb), "\"nodeClaims\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(sb_str(&sb), "\"totalPricePerHour\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(sb_str(&sb), "\"existingNodes\""));
	sb_reset(&sb);
	CU_ASSERT_EQUAL(plan_emit_yaml(l.res, &sb), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(sb_str(&sb), "kind: NodeClaim"));
	CU_ASSERT_PTR_NOT_NULL(strstr(sb_str(&sb), "karpenter.sh/requested-dra-drivers: dra.net,gpu.nvidia.com"));
	CU_ASSERT_PTR_NOT_NULL(strstr(sb_str(&sb), "nodeClassRef"));
	CU_ASSERT_PTR_NOT_NULL(strstr(sb_str(&sb), "nvidia.com/gpu"));     /* the pool's taint */
	sb_reset(&sb);
	CU_ASSERT_EQUAL(plan_emit_table(l.res, &sb), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(sb_str(&sb), l.res->node_claims[0].instance_type));
	sb_free(&sb);
	loaded_free(&l);
}

/* ---- kube-scheduler's DRA shape (bench_plan sched), small ----
 * Nodes of 10 devices (instance-0..9, dra.example.com/numa = the index),
 * class test-class by driver; pods with one claim each, from a template
 * or made up front. A pod that fits nowhere stays unschedulable (no hwdb
 * type has this driver). */

enum sched_claim { SCHED_TEMPLATE, SCHED_NAMED, SCHED_NAMED_TWO_SPECS };

static struct loaded plan_sched(unsigned nodes, unsigned pods, enum sched_claim how)
{
	struct loaded l = { model_set_new(), NULL };
	struct strbuf sb = STRBUF_INIT;
	struct dt_diags errs;
	struct dt_err err = { 0 };
	char ref[64];

	sb_puts(&sb, "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: test-class}\n"
		"spec:\n  selectors:\n  - cel: {expression: 'device.driver == \"test.example.com\"'}\n"
		"---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\n"
		"metadata: {name: one}\nspec:\n  spec:\n    devices:\n"
		"      requests: [{name: r, exactly: {deviceClassName: test-class}}]\n");
	for (unsigned n = 0; n < nodes; n++) {
		sb_printf(&sb, "---\napiVersion: v1\nkind: Node\nmetadata: {name: node-%u}\n"
			  "status: {allocatable: {cpu: '32', memory: 128Gi, pods: '110'}}\n"
			  "---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\n"
			  "metadata: {name: node-%u-slice}\nspec:\n  driver: test.example.com\n"
			  "  nodeName: node-%u\n  pool: {name: node-%u, generation: 1, "
			  "resourceSliceCount: 1}\n  devices:\n", n, n, n, n);
		for (unsigned d = 0; d < 10; d++)
			sb_printf(&sb, "  - {name: instance-%u, attributes: "
				  "{dra.example.com/numa: {int: %u}}}\n", d, d);
	}
	for (unsigned p = 0; p < pods; p++) {
		/* Two specs: odd pods any device, even pods one of numa 8 and 9. */
		bool high = how == SCHED_NAMED_TWO_SPECS && p % 2 == 0;

		if (how != SCHED_TEMPLATE)
			sb_printf(&sb, "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
				  "metadata: {name: claim-%u}\nspec:\n  devices:\n    requests:\n"
				  "    - name: r\n      exactly:\n        deviceClassName: test-class\n%s",
				  p, high ? "        selectors: [{cel: {expression: "
				  "'device.attributes[\"dra.example.com\"].numa >= 8'}}]\n" : "");
		if (how == SCHED_TEMPLATE)
			snprintf(ref, sizeof(ref), "resourceClaimTemplateName: one");
		else
			snprintf(ref, sizeof(ref), "resourceClaimName: claim-%u", p);
		sb_printf(&sb, "---\napiVersion: v1\nkind: Pod\nmetadata: {name: pod-%u}\nspec:\n"
			  "  resourceClaims: [{name: c, %s}]\n"
			  "  containers: [{name: m, image: pause, resources: {claims: [{name: c}]}}]\n",
			  p, ref);
	}
	dt_diags_init(&errs);
	CU_ASSERT_EQUAL(sb_error(&sb), 0);
	CU_ASSERT_EQUAL(model_set_load_buffer(l.set, sb.buf, sb.len, "sched.yaml", &errs, &err), 0);
	for (size_t i = 0; i < errs.n; i++)
		fprintf(stderr, "\n  load: %s", errs.msgs[i]);
	CU_ASSERT_EQUAL(dt_diags_count(&errs), 0);
	dt_diags_free(&errs);
	sb_free(&sb);
	if (plan_run(l.set, NULL, &l.res, &err))
		fprintf(stderr, "\n  plan_run: %s\n", err.msg);
	CU_ASSERT_PTR_NOT_NULL(l.res);
	return l;
}

static const struct plan_existing *find_existing(const struct plan_result *r, const char *node)
{
	for (size_t i = 0; i < r->n_existing; i++)
		if (!strcmp(r->existing[i].node, node))
			return &r->existing[i];
	return NULL;
}

/* As the scheduler places them one after another: node-k takes pods 10k to
 * 10k+9, each on a device of its own; the pod after the last fits nowhere. */
static void check_sched_fill(enum sched_claim how)
{
	struct loaded l = plan_sched(3, 31, how);
	char name[64];

	CU_ASSERT_PTR_NOT_NULL_FATAL(l.res);
	CU_ASSERT_EQUAL(l.res->n_existing, 3);
	CU_ASSERT_EQUAL(l.res->n_node_claims, 0);
	CU_ASSERT_EQUAL_FATAL(l.res->n_unschedulable, 1);
	DT_ASSERT_STR(l.res->unschedulable[0].pod, "default/pod-30");
	for (unsigned n = 0; n < 3; n++) {
		const struct plan_existing *e;
		bool used[10] = { false };

		snprintf(name, sizeof(name), "node-%u", n);
		e = find_existing(l.res, name);
		CU_ASSERT_PTR_NOT_NULL_FATAL(e);
		CU_ASSERT_EQUAL_FATAL(e->n_pods, 10);
		CU_ASSERT_EQUAL_FATAL(e->n_claims, 10);
		for (unsigned i = 0; i < 10; i++) {
			unsigned d;

			snprintf(name, sizeof(name), "default/pod-%u", 10 * n + i);
			DT_ASSERT_STR(e->pods[i], name);
			CU_ASSERT_EQUAL_FATAL(e->claims[i].n_results, 1);
			DT_ASSERT_STR(e->claims[i].results[0].pool, e->node);
			CU_ASSERT_EQUAL_FATAL(sscanf(e->claims[i].results[0].device, "instance-%u",
						     &d), 1);
			CU_ASSERT_FATAL(d < 10);
			CU_ASSERT(!used[d]);
			used[d] = true;
		}
	}
	loaded_free(&l);
}

static void test_sched_shape_template(void)
{
	check_sched_fill(SCHED_TEMPLATE);
}

static void test_sched_shape_named_claims(void)
{
	check_sched_fill(SCHED_NAMED);
}

/* Claims made up front with two specs, interleaved: the even pods need
 * one of the two devices of numa >= 8 of a node, the odd ones any device.
 * Even pods fill node-0's two, then node-1's, then fit nowhere; odd pods
 * keep filling node-0 meanwhile (a node full for one spec is not full for
 * the other). */
static void test_sched_shape_two_specs(void)
{
	struct loaded l = plan_sched(2, 12, SCHED_NAMED_TWO_SPECS);
	static const char *const on0[] = { "default/pod-0", "default/pod-1", "default/pod-2",
					   "default/pod-3", "default/pod-5", "default/pod-7",
					   "default/pod-9", "default/pod-11" };
	const struct plan_existing *e0, *e1;

	CU_ASSERT_PTR_NOT_NULL_FATAL(l.res);
	e0 = find_existing(l.res, "node-0");
	e1 = find_existing(l.res, "node-1");
	CU_ASSERT_PTR_NOT_NULL_FATAL(e0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(e1);
	CU_ASSERT_EQUAL_FATAL(e0->n_pods, 8);
	for (size_t i = 0; i < 8; i++)
		DT_ASSERT_STR(e0->pods[i], on0[i]);
	CU_ASSERT_EQUAL_FATAL(e1->n_pods, 2);
	DT_ASSERT_STR(e1->pods[0], "default/pod-4");
	DT_ASSERT_STR(e1->pods[1], "default/pod-6");
	for (size_t i = 0; i < e1->n_claims; i++)
		CU_ASSERT(!strcmp(e1->claims[i].results[0].device, "instance-8") ||
			  !strcmp(e1->claims[i].results[0].device, "instance-9"));
	CU_ASSERT_EQUAL_FATAL(l.res->n_unschedulable, 2);
	DT_ASSERT_STR(l.res->unschedulable[0].pod, "default/pod-8");
	DT_ASSERT_STR(l.res->unschedulable[1].pod, "default/pod-10");
	loaded_free(&l);
}

/* The result keeps what the allocator's outcome owned (a firstAvailable
 * subrequest's "req/sub", a shared device's share ID) after the outcome
 * is gone, and names the slices' driver, pool and device. */
static void test_result_outlives_outcome(void)
{
	static const char yaml[] =
		"apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: c}\n"
		"spec:\n  selectors:\n  - cel: {expression: 'device.driver == \"t.example.com\"'}\n"
		"---\napiVersion: v1\nkind: Node\nmetadata: {name: node-a}\n"
		"status: {allocatable: {cpu: '8', memory: 8Gi, pods: '10'}}\n"
		"---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\n"
		"spec:\n  driver: t.example.com\n  nodeName: node-a\n"
		"  pool: {name: p, generation: 1, resourceSliceCount: 1}\n  devices:\n"
		"  - {name: d0}\n  - {name: shared, allowMultipleAllocations: true}\n"
		"---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: fa}\n"
		"spec:\n  devices:\n    requests:\n    - name: r\n      firstAvailable:\n"
		"      - {name: two, deviceClassName: c, count: 3}\n"
		"      - {name: one, deviceClassName: c, count: 1}\n"
		"---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: sh}\n"
		"spec:\n  devices:\n    requests:\n    - name: r\n      exactly:\n"
		"        deviceClassName: c\n"
		"        selectors: [{cel: {expression: 'device.allowMultipleAllocations'}}]\n"
		"---\napiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec:\n"
		"  resourceClaims: [{name: x, resourceClaimName: fa}]\n"
		"  containers: [{name: m, image: pause, resources: {claims: [{name: x}]}}]\n"
		"---\napiVersion: v1\nkind: Pod\nmetadata: {name: b}\nspec:\n"
		"  resourceClaims: [{name: x, resourceClaimName: sh}]\n"
		"  containers: [{name: m, image: pause, resources: {claims: [{name: x}]}}]\n";
	struct model_set *set = model_set_new();
	struct plan_result *res = NULL;
	const struct plan_existing *e;
	struct dt_diags errs;
	struct dt_err err = { 0 };

	dt_diags_init(&errs);
	CU_ASSERT_EQUAL(model_set_load_buffer(set, yaml, sizeof(yaml) - 1, "t.yaml", &errs, &err),
			0);
	for (size_t i = 0; i < errs.n; i++)
		fprintf(stderr, "\n  load: %s", errs.msgs[i]);
	CU_ASSERT_EQUAL(dt_diags_count(&errs), 0);
	dt_diags_free(&errs);
	CU_ASSERT_EQUAL_FATAL(plan_run(set, NULL, &res, &err), 0);
	e = find_existing(res, "node-a");
	CU_ASSERT_PTR_NOT_NULL_FATAL(e);
	CU_ASSERT_EQUAL_FATAL(e->n_claims, 2);
	DT_ASSERT_STR(e->claims[0].claim, "default/fa");
	CU_ASSERT_EQUAL_FATAL(e->claims[0].n_results, 1);
	DT_ASSERT_STR(e->claims[0].results[0].request, "r/one");
	DT_ASSERT_STR(e->claims[0].results[0].driver, "t.example.com");
	DT_ASSERT_STR(e->claims[0].results[0].pool, "p");
	DT_ASSERT_STR(e->claims[0].results[0].device, "d0");
	CU_ASSERT_PTR_NULL(e->claims[0].results[0].share_id);
	CU_ASSERT_EQUAL_FATAL(e->claims[1].n_results, 1);
	DT_ASSERT_STR(e->claims[1].results[0].request, "r");
	DT_ASSERT_STR(e->claims[1].results[0].device, "shared");
	CU_ASSERT_PTR_NOT_NULL_FATAL(e->claims[1].results[0].share_id);
	CU_ASSERT_EQUAL(strlen(e->claims[1].results[0].share_id), 36);
	plan_result_free(res);
	model_set_free(set);
}

/* ---- plan_execute: the one entry point ---- */

static void src_path(char *buf, size_t sz, const char *rel)
{
	snprintf(buf, sz, "%s/%s", DT_SOURCE_DIR, rel);
}

/* Files in, the output, the result and the exit code out: the seed's
 * examples place every pod. */
static void test_execute_files(void)
{
	char p[3][4096];
	struct plan_manifest m[3] = { { p[0] }, { p[1] }, { p[2] } };
	struct plan_request rq = { .manifests = m, .n_manifests = 3, .format = PLAN_FORMAT_JSON };
	struct plan_report rep;

	src_path(p[0], sizeof(p[0]), "examples/seed/nodepool.yaml");
	src_path(p[1], sizeof(p[1]), "examples/seed/ec2nodeclass.yaml");
	src_path(p[2], sizeof(p[2]), "examples/seed/large-gpu.yaml");
	CU_ASSERT_EQUAL(plan_execute(&rq, &rep), PLAN_EXIT_OK);
	CU_ASSERT_EQUAL(rep.exit_code, PLAN_EXIT_OK);
	CU_ASSERT_EQUAL(rep.diags.n, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(rep.result);
	CU_ASSERT_EQUAL(rep.result->n_node_claims, 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(sb_str(&rep.output), "\"nodeClaims\""));
	CU_ASSERT_TRUE(rep.owns_set);
	CU_ASSERT_TRUE(model_set_count(rep.set, MODEL_NODE_POOL) == 1);
	plan_report_free(&rep);
	CU_ASSERT_PTR_NULL(rep.result);
}

#define BAD_POD(name) \
	"---\napiVersion: v1\nkind: Pod\nmetadata: {name: " name "}\n" \
	"spec: {containers: [{name: m, image: pause, resources: {requests: {cpu: lots}}}]}\n"

/* Bytes in memory, with problems in both manifests: every problem, sorted
 * by manifest (as given) and document, no plan, exit 1. */
static void test_execute_buffers_sorted_diags(void)
{
	static const char a[] = BAD_POD("a1") BAD_POD("a2");
	static const char b[] = BAD_POD("b1");
	struct plan_manifest m[2] = { { "b.yaml", b, sizeof(b) - 1 }, { "a.yaml", a, sizeof(a) - 1 } };
	struct plan_request rq = { .manifests = m, .n_manifests = 2, .format = PLAN_FORMAT_TABLE };
	struct plan_report rep;

	CU_ASSERT_EQUAL(plan_execute(&rq, &rep), PLAN_EXIT_FAIL);
	CU_ASSERT_PTR_NULL(rep.result);
	CU_ASSERT_EQUAL(rep.output.len, 0);
	CU_ASSERT_EQUAL_FATAL(rep.diags.n, 3);
	CU_ASSERT_EQUAL(strncmp(rep.diags.msgs[0], "b.yaml: document 1 ", 19), 0);
	CU_ASSERT_EQUAL(strncmp(rep.diags.msgs[1], "a.yaml: document 1 ", 19), 0);
	CU_ASSERT_EQUAL(strncmp(rep.diags.msgs[2], "a.yaml: document 2 ", 19), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(rep.diags.msgs[2], "Pod default/a2"));
	plan_report_free(&rep);
}

#define SIXTEEN_GPUS \
	"apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: t}\n" \
	"spec: {spec: {devices: {requests: [{name: g, exactly: " \
	"{deviceClassName: gpu.nvidia.com, count: 64}}]}}}\n---\n" \
	"apiVersion: v1\nkind: Pod\nmetadata: {name: big}\nspec:\n" \
	"  resourceClaims: [{name: c, resourceClaimTemplateName: t}]\n" \
	"  containers: [{name: m, image: pause, resources: {claims: [{name: c}]}}]\n"

/* A set the caller built (as the controller decodes the API server's
 * objects) plus a manifest: both are planned, the set stays the caller's;
 * a pod that fits nowhere makes exit 3, and YAML output says why. */
static void test_execute_caller_set_unschedulable(void)
{
	static const char pod[] = SIXTEEN_GPUS;
	struct model_set *set = model_set_new();
	struct plan_manifest m = { "pod.yaml", pod, sizeof(pod) - 1 };
	struct plan_request rq = { .manifests = &m, .n_manifests = 1, .set = set,
				   .format = PLAN_FORMAT_YAML, .who = "dratopo plan" };
	struct plan_report rep;
	char np[4096];

	src_path(np, sizeof(np), "examples/seed/nodepool.yaml");
	CU_ASSERT_EQUAL_FATAL(model_set_load_file(set, np, NULL, NULL), 0);
	CU_ASSERT_EQUAL(plan_execute(&rq, &rep), PLAN_EXIT_UNSCHEDULABLE);
	CU_ASSERT_FALSE(rep.owns_set);
	CU_ASSERT_PTR_EQUAL(rep.set, set);
	CU_ASSERT_PTR_NOT_NULL_FATAL(rep.result);
	CU_ASSERT_EQUAL(rep.result->n_unschedulable, 1);
	CU_ASSERT_EQUAL_FATAL(rep.diags.n, 1);
	DT_ASSERT_STR(rep.diags.msgs[0], "dratopo plan: 1 pod unschedulable");
	plan_report_free(&rep);
	CU_ASSERT_EQUAL(model_set_count(set, MODEL_NODE_POOL), 1);       /* still the caller's */
	model_set_free(set);
}

/* check_only (validate): the checks and nothing more; a MIG layout naming
 * a profile no GPU has is a warning there. */
static void test_execute_check_only(void)
{
	static const char nc[] =
		"apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: mig\n"
		"  annotations: {karpenter.k8s.aws/nvidia-mig-layout: 'all-9g.99gb'}\n"
		"spec:\n  role: r\n  amiSelectorTerms: [{alias: al2023@latest}]\n"
		"  subnetSelectorTerms: [{tags: {a: b}}]\n  securityGroupSelectorTerms: [{tags: {a: b}}]\n";
	struct plan_manifest m = { "nc.yaml", nc, sizeof(nc) - 1 };
	struct plan_request rq = { .manifests = &m, .n_manifests = 1, .check_only = true };
	struct plan_report rep;

	CU_ASSERT_EQUAL(plan_execute(&rq, &rep), PLAN_EXIT_OK);
	for (size_t i = 0; i < rep.diags.n; i++)
		fprintf(stderr, "\n  %s", rep.diags.msgs[i]);
	CU_ASSERT_EQUAL(rep.diags.n, 0);
	CU_ASSERT_PTR_NULL(rep.result);
	CU_ASSERT_EQUAL(rep.output.len, 0);
	CU_ASSERT_EQUAL_FATAL(rep.warnings.n, 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(rep.warnings.msgs[0], "9g.99gb"));
	plan_report_free(&rep);
}

struct prep_seen {
	int calls;
	const struct hwdb_catalog *cat;
	bool fail;
};

#define FLEET_NODE \
	"apiVersion: v1\nkind: Node\nmetadata: {name: fleet-1}\n" \
	"status: {allocatable: {cpu: '8', memory: 32Gi, pods: '110'}}\n"

static int prep_add_node(void *arg, struct model_set *set, struct plan_options *opts,
			 struct dt_diags *diags)
{
	struct prep_seen *s = arg;

	s->calls++;
	if (s->fail) {
		dt_diags_add(diags, "the fleet is away");
		return -EIO;
	}
	opts->catalog = s->cat;
	return model_set_load_buffer(set, FLEET_NODE, sizeof(FLEET_NODE) - 1, "(fleet)", diags,
				     NULL);
}

/* The prepare step (the coordinator's fleet): called once the input
 * passed, before planning, its objects planned with the rest and its
 * catalogue used; its failure is the plan's, in its words; never called
 * for input that failed its checks. */
static void test_execute_prepare(void)
{
	static const char pod[] =
		"apiVersion: v1\nkind: Pod\nmetadata: {name: small}\n"
		"spec: {containers: [{name: m, image: pause, resources: {requests: {cpu: '1'}}}]}\n";
	static const char bad[] = BAD_POD("x");
	struct hwdb_catalog *cat = NULL;
	struct prep_seen seen = { 0 };
	struct plan_manifest m = { "pod.yaml", pod, sizeof(pod) - 1 };
	struct plan_request rq = { .manifests = &m, .n_manifests = 1, .format = PLAN_FORMAT_NONE,
				   .prepare = prep_add_node, .prepare_arg = &seen };
	struct plan_report rep;

	CU_ASSERT_EQUAL_FATAL(hwdb_catalog_new(NULL, &cat, NULL), 0);
	seen.cat = cat;
	CU_ASSERT_EQUAL(plan_execute(&rq, &rep), PLAN_EXIT_OK);
	CU_ASSERT_EQUAL(seen.calls, 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(rep.result);
	CU_ASSERT_EQUAL_FATAL(rep.result->n_existing, 1);
	DT_ASSERT_STR(rep.result->existing[0].node, "fleet-1");
	CU_ASSERT_EQUAL(rep.result->n_node_claims, 0);
	plan_report_free(&rep);

	seen.fail = true;
	CU_ASSERT_EQUAL(plan_execute(&rq, &rep), PLAN_EXIT_FAIL);
	CU_ASSERT_EQUAL(seen.calls, 2);
	CU_ASSERT_PTR_NULL(rep.result);
	CU_ASSERT_EQUAL_FATAL(rep.diags.n, 1);
	DT_ASSERT_STR(rep.diags.msgs[0], "the fleet is away");
	plan_report_free(&rep);

	m.content = bad;
	m.len = sizeof(bad) - 1;
	CU_ASSERT_EQUAL(plan_execute(&rq, &rep), PLAN_EXIT_FAIL);
	CU_ASSERT_EQUAL(seen.calls, 2);
	plan_report_free(&rep);
	hwdb_catalog_free(cat);
}

/* A file that cannot be read is named (after the problems found in
 * documents); the others are still checked. */
static void test_execute_unreadable_file(void)
{
	static const char bad[] = BAD_POD("why");
	struct plan_manifest m[2] = { { "/nonexistent/dratopo.yaml" }, { "b.yaml", bad, sizeof(bad) - 1 } };
	struct plan_request rq = { .manifests = m, .n_manifests = 2, .format = PLAN_FORMAT_JSON };
	struct plan_report rep;

	CU_ASSERT_EQUAL(plan_execute(&rq, &rep), PLAN_EXIT_FAIL);
	CU_ASSERT_EQUAL_FATAL(rep.diags.n, 2);
	CU_ASSERT_EQUAL(strncmp(rep.diags.msgs[0], "b.yaml: document 1 ", 19), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(rep.diags.msgs[1], "cannot read /nonexistent/dratopo.yaml"));
	plan_report_free(&rep);
}

DT_SUITE_MAIN("plan",
	      DT_TEST(test_execute_files),
	      DT_TEST(test_execute_buffers_sorted_diags),
	      DT_TEST(test_execute_caller_set_unschedulable),
	      DT_TEST(test_execute_check_only),
	      DT_TEST(test_execute_prepare),
	      DT_TEST(test_execute_unreadable_file),
	      DT_TEST(test_result_outlives_outcome),
	      DT_TEST(test_sched_shape_template),
	      DT_TEST(test_sched_shape_named_claims),
	      DT_TEST(test_sched_shape_two_specs),
	      DT_TEST(test_seed_large_gpu),
	      DT_TEST(test_seed_gpu_efa_aligned),
	      DT_TEST(test_seed_timesliced),
	      DT_TEST(test_existing_nodes_first),
	      DT_TEST(test_bound_pod_holds_devices),
	      DT_TEST(test_priority_first_on_existing),
	      DT_TEST(test_priority_class_first_on_existing),
	      DT_TEST(test_two_small_nodes_beat_one_big),
	      DT_TEST(test_shared_claim_one_node),
	      DT_TEST(test_reasons),
	      DT_TEST(test_no_efa_on_gpu_root),
	      DT_TEST(test_selector_error_named),
	      DT_TEST(test_allocator_error_fails_pod_only),
	      DT_TEST(test_allocated_claim_pods_placed_alone),
	      DT_TEST(test_claim_over_limit_fails_its_pods),
	      DT_TEST(test_selector_typo_is_runtime_error),
	      DT_TEST(test_no_on_demand_offering),
	      DT_TEST(test_overlay_prices_p5e),
	      DT_TEST(test_overlay_makes_type_dearer),
	      DT_TEST(test_overlay_capacity),
	      DT_TEST(test_pool_limits),
	      DT_TEST(test_pool_limits_count_nodes),
	      DT_TEST(test_hostname_pins_to_existing),
	      DT_TEST(test_made_for_first),
	      DT_TEST(test_catalog_extra_type),
	      DT_TEST(test_catalog_learned_type),
	      DT_TEST(test_zones_narrow_node_claims),
	      DT_TEST(test_zone_does_not_exist),
	      DT_TEST(test_zone_pool_excludes),
	      DT_TEST(test_unavailable_offerings),
	      DT_TEST(test_daemonset_overhead),
	      DT_TEST(test_output_formats))
