/* test_plan_pack.c - the planner's pure parts with hand-built structs:
 * requirement matching, taints, Karpenter's node overhead, and the price
 * optimizer on a toy resource model (CPU and GPUs per node). */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "dt_test.h"
#include "hwdb.h"
#include "plan_internal.h"

/* ---- Requirements ---- */

static struct model_requirement req(const char *key, enum model_selector_op op,
				    const char *text, const char **vals, size_t n)
{
	struct model_requirement r = { .key = key, .operator_text = text, .op = op,
				       .values = vals, .n_values = n };
	return r;
}

static void test_vset_operators(void)
{
	const char *ab[] = { "a", "b" }, *b[] = { "b" }, *five[] = { "5" }, *ten[] = { "10" };
	struct model_requirement in = req("k", MODEL_OP_IN, "In", ab, 2);
	struct model_requirement notin = req("k", MODEL_OP_NOT_IN, "NotIn", b, 1);
	struct model_requirement gt = req("k", MODEL_OP_GT, "Gt", five, 1);
	struct model_requirement lt = req("k", MODEL_OP_LT, "Lt", ten, 1);
	struct model_requirement lt5 = req("k", MODEL_OP_LT, "Lt", five, 1);
	struct model_requirement dne = req("k", MODEL_OP_DOES_NOT_EXIST, "DoesNotExist", NULL, 0);
	struct model_requirement ex = req("k", MODEL_OP_EXISTS, "Exists", NULL, 0);
	struct plan_vset s_in, s_notin, s_gt, s_lt, s_lt5, s_dne, s_ex;

	CU_ASSERT_EQUAL(plan_vset_from_req(&in, &s_in), 0);
	CU_ASSERT_EQUAL(plan_vset_from_req(&notin, &s_notin), 0);
	CU_ASSERT_EQUAL(plan_vset_from_req(&gt, &s_gt), 0);
	CU_ASSERT_EQUAL(plan_vset_from_req(&lt, &s_lt), 0);
	CU_ASSERT_EQUAL(plan_vset_from_req(&lt5, &s_lt5), 0);
	CU_ASSERT_EQUAL(plan_vset_from_req(&dne, &s_dne), 0);
	CU_ASSERT_EQUAL(plan_vset_from_req(&ex, &s_ex), 0);

	CU_ASSERT_TRUE(plan_vset_has(&s_in, "a"));
	CU_ASSERT_FALSE(plan_vset_has(&s_in, "c"));
	CU_ASSERT_FALSE(plan_vset_has(&s_in, NULL));
	CU_ASSERT_TRUE(plan_vset_has(&s_notin, NULL));
	CU_ASSERT_FALSE(plan_vset_has(&s_notin, "b"));
	CU_ASSERT_TRUE(plan_vset_has(&s_gt, "6"));
	CU_ASSERT_FALSE(plan_vset_has(&s_gt, "5"));
	CU_ASSERT_FALSE(plan_vset_has(&s_gt, "x"));
	CU_ASSERT_FALSE(plan_vset_has(&s_gt, NULL));
	CU_ASSERT_TRUE(plan_vset_has(&s_dne, NULL));
	CU_ASSERT_FALSE(plan_vset_has(&s_ex, NULL));

	/* In [a b] and NotIn [b] leave a. */
	CU_ASSERT_TRUE(plan_vset_intersects(&s_in, &s_notin));
	CU_ASSERT_FALSE(plan_vset_intersects(&s_in, &s_dne));
	/* Gt 5 and Lt 10 leave 6..9; Gt 5 and Lt 5 leave nothing. */
	CU_ASSERT_TRUE(plan_vset_intersects(&s_gt, &s_lt));
	CU_ASSERT_FALSE(plan_vset_intersects(&s_gt, &s_lt5));
	CU_ASSERT_TRUE(plan_vset_intersects(&s_notin, &s_dne));
	CU_ASSERT_FALSE(plan_vset_intersects(&s_ex, &s_dne));

	/* A Gt value that is no integer is refused. */
	const char *bad[] = { "x" };
	struct model_requirement gtbad = req("k", MODEL_OP_GT, "Gt", bad, 1);

	CU_ASSERT_NOT_EQUAL(plan_vset_from_req(&gtbad, &s_gt), 0);
}

static void test_pool_and_pod_requirements(void)
{
	const char *fam[] = { "g6", "p5" };
	struct model_requirement pool_reqs[] = {
		req(PLAN_LABEL_FAMILY, MODEL_OP_IN, "In", fam, 2),
	};
	struct model_kv g6[] = { { PLAN_LABEL_FAMILY, "g6" }, { PLAN_LABEL_ARCH, "amd64" } };
	struct model_kv g5[] = { { PLAN_LABEL_FAMILY, "g5" }, { PLAN_LABEL_ARCH, "amd64" } };
	char why[256] = "";

	CU_ASSERT_TRUE(plan_pool_accepts(pool_reqs, 1, g6, 2, why, sizeof(why)));
	CU_ASSERT_FALSE(plan_pool_accepts(pool_reqs, 1, g5, 2, why, sizeof(why)));
	CU_ASSERT_PTR_NOT_NULL(strstr(why, PLAN_LABEL_FAMILY));

	/* A pod asking for a team label the pool sets through a requirement
	 * with two values is compatible; one it never sets is not. */
	const char *teams[] = { "ml", "infra" }, *ml[] = { "ml" }, *web[] = { "web" };
	struct model_requirement pool2[] = { req("team", MODEL_OP_IN, "In", teams, 2) };
	struct plan_node_spec node = { .labels = g6, .n_labels = 2, .reqs = pool2, .n_reqs = 1,
				       .hypothetical = true };
	struct model_requirement want_ml = req("team", MODEL_OP_IN, "In", ml, 1);
	struct model_requirement want_web = req("team", MODEL_OP_IN, "In", web, 1);
	struct model_requirement want_zone = req("topology.kubernetes.io/zone", MODEL_OP_IN, "In",
						 web, 1);
	struct model_requirement want_other = req("other", MODEL_OP_EXISTS, "Exists", NULL, 0);
	struct model_requirement not_other = req("other", MODEL_OP_DOES_NOT_EXIST,
						 "DoesNotExist", NULL, 0);

	CU_ASSERT_TRUE(plan_req_compatible(&node, &want_ml));
	CU_ASSERT_FALSE(plan_req_compatible(&node, &want_web));
	CU_ASSERT_TRUE(plan_req_compatible(&node, &want_zone));
	CU_ASSERT_FALSE(plan_req_compatible(&node, &want_other));
	CU_ASSERT_TRUE(plan_req_compatible(&node, &not_other));

	/* nodeSelector and affinity through a pod spec. */
	struct model_kv sel[] = { { PLAN_LABEL_ARCH, "arm64" } };
	struct model_pod_spec pod = { .node_selector = sel, .n_node_selector = 1 };

	CU_ASSERT_FALSE(plan_pod_selects(&node, &pod, why, sizeof(why)));
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "arm64"));
	sel[0].value = "amd64";
	CU_ASSERT_TRUE(plan_pod_selects(&node, &pod, why, sizeof(why)));

	struct model_requirement terms0[] = { want_web }, terms1[] = { want_ml };
	struct model_node_selector_term terms[] = {
		{ .match_expressions = terms0, .n_match_expressions = 1 },
		{ .match_expressions = terms1, .n_match_expressions = 1 },
	};
	struct model_node_selector aff = { .terms = terms, .n_terms = 2 };

	pod.required_node_affinity = &aff;
	CU_ASSERT_TRUE(plan_pod_selects(&node, &pod, why, sizeof(why)));  /* second term */
	aff.n_terms = 1;
	CU_ASSERT_FALSE(plan_pod_selects(&node, &pod, why, sizeof(why)));
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "team"));
}

static void test_pool_gt_lt_on_type_labels(void)
{
	/* instance-gpu-count Gt 1 and instance-cpu Lt 64, against the labels
	 * plan_type_labels writes for real-looking types. */
	const char *one[] = { "1" }, *sixtyfour[] = { "64" }, *p5[] = { "p5" };
	struct model_requirement reqs[] = {
		req(PLAN_LABEL_GPU_COUNT, MODEL_OP_GT, "Gt", one, 1),
		req(PLAN_LABEL_CPU, MODEL_OP_LT, "Lt", sixtyfour, 1),
		req(PLAN_LABEL_FAMILY, MODEL_OP_NOT_IN, "NotIn", p5, 1),
	};
	struct hwdb_device gpus[4] = { { .name = "gpu-0" }, { .name = "gpu-1" },
				       { .name = "gpu-2" }, { .name = "gpu-3" } };
	struct hwdb_type g6_12 = { .name = "g6.12xlarge", .family = "g6", .arch = "amd64",
				   .vcpu = 48, .memory_mib = 196608, .gpu_model = "NVIDIA L4",
				   .gpus = gpus, .n_gpus = 4 };
	struct hwdb_type g6_1 = g6_12, g6_48 = g6_12, p5_4 = g6_12;
	struct model_kv kv[PLAN_MAX_TYPE_LABELS];
	char vals[PLAN_MAX_TYPE_LABELS][PLAN_LABEL_VALUE_MAX], why[256];
	size_t n;

	g6_1.name = "g6.xlarge";
	g6_1.vcpu = 4;
	g6_1.n_gpus = 1;
	g6_48.name = "g6.48xlarge";
	g6_48.vcpu = 192;
	p5_4.name = "p5.4xlarge";
	p5_4.family = "p5";
	p5_4.vcpu = 16;
	n = plan_type_labels(&g6_12, "on-demand", kv, vals);
	CU_ASSERT_TRUE(plan_pool_accepts(reqs, 3, kv, n, why, sizeof(why)));
	n = plan_type_labels(&g6_1, "on-demand", kv, vals);
	CU_ASSERT_FALSE(plan_pool_accepts(reqs, 3, kv, n, why, sizeof(why)));
	CU_ASSERT_PTR_NOT_NULL(strstr(why, PLAN_LABEL_GPU_COUNT));
	n = plan_type_labels(&g6_48, "on-demand", kv, vals);
	CU_ASSERT_FALSE(plan_pool_accepts(reqs, 3, kv, n, why, sizeof(why)));
	CU_ASSERT_PTR_NOT_NULL(strstr(why, PLAN_LABEL_CPU));
	n = plan_type_labels(&p5_4, "on-demand", kv, vals);
	CU_ASSERT_FALSE(plan_pool_accepts(reqs, 3, kv, n, why, sizeof(why)));
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "NotIn"));
}

static void test_taints(void)
{
	struct model_taint gpu = { .key = "nvidia.com/gpu", .effect = "NoSchedule" };
	struct model_taint pref = { .key = "soft", .effect = "PreferNoSchedule" };
	struct model_taint both[] = { pref, gpu };
	struct model_toleration exists = { .key = "nvidia.com/gpu", .operator_text = "Exists",
					   .effect = "NoSchedule" };
	struct model_toleration equal_wrong = { .key = "nvidia.com/gpu", .operator_text = "Equal",
						.value = "x" };
	struct model_toleration all = { .key = "", .operator_text = "Exists" };
	struct model_toleration other_effect = { .key = "nvidia.com/gpu",
						 .operator_text = "Exists", .effect = "NoExecute" };

	CU_ASSERT_TRUE(plan_tolerates(&exists, &gpu));
	CU_ASSERT_FALSE(plan_tolerates(&equal_wrong, &gpu));
	CU_ASSERT_TRUE(plan_tolerates(&all, &gpu));
	CU_ASSERT_FALSE(plan_tolerates(&other_effect, &gpu));
	CU_ASSERT_PTR_EQUAL(plan_untolerated(both, 2, NULL, 0), &both[1]);
	CU_ASSERT_PTR_NULL(plan_untolerated(both, 2, &exists, 1));
	CU_ASSERT_PTR_NULL(plan_untolerated(&pref, 1, NULL, 0));
}

/* ---- Overhead ---- */

static void test_kube_reserved(void)
{
	/* 6% of the first core, 1% of the second, 0.5% of cores 3-4, 0.25%
	 * of the rest, in millicores. */
	CU_ASSERT_EQUAL(plan_kube_reserved_cpu(1), 60);
	CU_ASSERT_EQUAL(plan_kube_reserved_cpu(2), 60 + 10);
	CU_ASSERT_EQUAL(plan_kube_reserved_cpu(4), 60 + 10 + 10);
	CU_ASSERT_EQUAL(plan_kube_reserved_cpu(8), 80 + 10);
	CU_ASSERT_EQUAL(plan_kube_reserved_cpu(192), 80 + (192 - 4) * 25 / 10);
	CU_ASSERT_EQUAL(plan_kube_reserved_mem(110), (11LL * 110 + 255) << 20);
	CU_ASSERT_EQUAL(plan_kube_reserved_mem(29), (11LL * 29 + 255) << 20);
}

static void test_node_allocatable(void)
{
	struct plan_kubelet k;
	struct plan_res r;
	int64_t mib = 16384, overhead = (mib * 75 + 999) / 1000;

	plan_kubelet_defaults(&k);
	plan_node_allocatable(4, mib, &k, &r);
	CU_ASSERT_EQUAL(r.pods, PLAN_DEFAULT_MAX_PODS);
	CU_ASSERT_EQUAL(r.cpu_milli, 4000 - plan_kube_reserved_cpu(4));
	CU_ASSERT_EQUAL(r.mem_bytes, ((mib - overhead) << 20) - plan_kube_reserved_mem(110) -
				     PLAN_EVICTION_HARD_MEM);

	/* maxPods and podsPerCore, explicit reservations, a percentage eviction. */
	k.max_pods = 50;
	k.pods_per_core = 4;
	CU_ASSERT_EQUAL(plan_max_pods(&k, 4), 16);
	CU_ASSERT_EQUAL(plan_max_pods(&k, 100), 50);
	k.kube_reserved_cpu = 500;
	k.system_reserved_cpu = 100;
	k.kube_reserved_mem = 1LL << 30;
	k.eviction_mem_percent = 0.10;
	plan_node_allocatable(4, mib, &k, &r);
	CU_ASSERT_EQUAL(r.cpu_milli, 4000 - 600);
	CU_ASSERT_TRUE(r.mem_bytes < ((mib - overhead) << 20) - (1LL << 30) -
				     ((mib - overhead) << 20) / 10 + 1);
}

/* The kubelet settings and ephemeral storage of an EC2NodeClass whose
 * spec is the flow mapping spec; 0 or the error of plan_kubelet_from_nodeclass. */
static int nodeclass_kubelet(const char *spec, struct plan_kubelet *k, struct dt_err *err)
{
	char yaml[1024];
	struct model_set *s = model_set_new();
	const struct model_object *o;
	int rc;

	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	snprintf(yaml, sizeof(yaml), "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\n"
		 "metadata: {name: c}\nspec: %s\n", spec);
	CU_ASSERT_EQUAL(model_set_load_buffer(s, yaml, strlen(yaml), "c.yaml", NULL, NULL), 0);
	o = model_set_find(s, MODEL_EC2_NODE_CLASS, NULL, "c");
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	rc = plan_kubelet_from_nodeclass(o, k, err);
	model_set_free(s);
	return rc;
}

/* QA-105: a new node's ephemeral-storage, as Karpenter's AWS provider
 * sizes it from the EC2NodeClass. */
static void test_node_storage(void)
{
	const int64_t gi = 1LL << 30;
	struct plan_kubelet k;
	struct plan_res r;
	struct dt_err err = { 0 };

	/* No class: the 20Gi default, less 1Gi kubeReserved and 10% nodefs. */
	plan_kubelet_defaults(&k);
	plan_node_allocatable(4, 16384, &k, &r);
	CU_ASSERT_EQUAL(r.storage_bytes, 20 * gi - gi - 2 * gi);
	/* AL2023: /dev/xvda's volume. */
	CU_ASSERT_EQUAL(nodeclass_kubelet("{amiSelectorTerms: [{alias: al2023@latest}], "
		"blockDeviceMappings: [{deviceName: /dev/xvdb, ebs: {volumeSize: 500Gi}}, "
		"{deviceName: /dev/xvda, ebs: {volumeSize: 100Gi}}]}", &k, &err), 0);
	CU_ASSERT_EQUAL(k.storage, 100 * gi);
	plan_node_allocatable(4, 16384, &k, &r);
	CU_ASSERT_EQUAL(r.storage_bytes, 89 * gi);
	/* Bottlerocket keeps it on its data volume, /dev/xvdb. */
	CU_ASSERT_EQUAL(nodeclass_kubelet("{amiSelectorTerms: [{alias: bottlerocket@latest}], "
		"blockDeviceMappings: [{deviceName: /dev/xvda, ebs: {volumeSize: 4Gi}}, "
		"{deviceName: /dev/xvdb, ebs: {volumeSize: 60Gi}}]}", &k, &err), 0);
	CU_ASSERT_EQUAL(k.storage, 60 * gi);
	/* rootVolume: true wins wherever it is. */
	CU_ASSERT_EQUAL(nodeclass_kubelet("{amiFamily: AL2023, blockDeviceMappings: ["
		"{deviceName: /dev/xvda, ebs: {volumeSize: 30Gi}}, "
		"{deviceName: /dev/sdf, rootVolume: true, ebs: {volumeSize: 200Gi}}]}", &k, &err), 0);
	CU_ASSERT_EQUAL(k.storage, 200 * gi);
	/* Custom: the last mapping. */
	CU_ASSERT_EQUAL(nodeclass_kubelet("{amiFamily: Custom, blockDeviceMappings: ["
		"{deviceName: /dev/xvda, ebs: {volumeSize: 30Gi}}, "
		"{deviceName: /dev/sdf, ebs: {volumeSize: 70Gi}}]}", &k, &err), 0);
	CU_ASSERT_EQUAL(k.storage, 70 * gi);
	/* No mapping on the device: the default. */
	CU_ASSERT_EQUAL(nodeclass_kubelet("{blockDeviceMappings: ["
		"{deviceName: /dev/sdf, ebs: {volumeSize: 70Gi}}]}", &k, &err), 0);
	CU_ASSERT_EQUAL(k.storage, 20 * gi);
	/* The instance store, whose size hwdb does not know: unlimited. */
	CU_ASSERT_EQUAL(nodeclass_kubelet("{instanceStorePolicy: RAID0}", &k, &err), 0);
	CU_ASSERT_EQUAL(k.storage, -1);
	plan_node_allocatable(4, 16384, &k, &r);
	CU_ASSERT_EQUAL(r.storage_bytes, PLAN_RES_MAX);
	/* spec.kubelet: reservations, and the larger of the nodefs thresholds. */
	CU_ASSERT_EQUAL(nodeclass_kubelet("{blockDeviceMappings: [{deviceName: /dev/xvda, "
		"ebs: {volumeSize: 100Gi}}], kubelet: {kubeReserved: {ephemeral-storage: 2Gi}, "
		"systemReserved: {ephemeral-storage: 1Gi}, "
		"evictionHard: {nodefs.available: 5Gi}, "
		"evictionSoft: {nodefs.available: 20%}}}", &k, &err), 0);
	plan_node_allocatable(4, 16384, &k, &r);
	CU_ASSERT_EQUAL(r.storage_bytes, 100 * gi - 2 * gi - gi - 20 * gi);
	/* A size that is no quantity, named by its path. */
	CU_ASSERT_EQUAL(nodeclass_kubelet("{blockDeviceMappings: [{deviceName: /dev/xvda, "
		"ebs: {volumeSize: lots}}]}", &k, &err), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "spec.blockDeviceMappings[0].ebs.volumeSize: "));
	CU_ASSERT_EQUAL(nodeclass_kubelet("{kubelet: {evictionHard: {nodefs.available: 120%}}}",
					  &k, &err), -EINVAL);
	DT_ASSERT_STR(err.msg, "spec.kubelet.evictionHard.nodefs.available: invalid percentage 120%");
}

static void test_type_labels(void)
{
	struct hwdb_device gpus[1] = { { .name = "gpu-0", .memory_mib = 81152 } };
	struct hwdb_type t = { .name = "p5.48xlarge", .family = "p5", .arch = "amd64",
			       .vcpu = 192, .memory_mib = 2097152,
			       .gpu_model = "NVIDIA H100 80GB HBM3", .gpus = gpus, .n_gpus = 1 };
	struct model_kv kv[PLAN_MAX_TYPE_LABELS];
	char vals[PLAN_MAX_TYPE_LABELS][PLAN_LABEL_VALUE_MAX];
	size_t n = plan_type_labels(&t, "on-demand", kv, vals);

	DT_ASSERT_STR(plan_label(kv, n, PLAN_LABEL_INSTANCE_TYPE), "p5.48xlarge");
	DT_ASSERT_STR(plan_label(kv, n, PLAN_LABEL_SIZE), "48xlarge");
	DT_ASSERT_STR(plan_label(kv, n, PLAN_LABEL_CATEGORY), "p");
	DT_ASSERT_STR(plan_label(kv, n, PLAN_LABEL_GENERATION), "5");
	DT_ASSERT_STR(plan_label(kv, n, PLAN_LABEL_GPU_NAME), "h100");
	DT_ASSERT_STR(plan_label(kv, n, PLAN_LABEL_GPU_COUNT), "1");
	DT_ASSERT_STR(plan_label(kv, n, PLAN_LABEL_CAPACITY_TYPE), "on-demand");
	t.family = "p6-b200";
	t.name = "p6-b200.48xlarge";
	t.gpu_model = "NVIDIA B200";
	n = plan_type_labels(&t, NULL, kv, vals);
	DT_ASSERT_STR(plan_label(kv, n, PLAN_LABEL_GENERATION), "6");
	DT_ASSERT_STR(plan_label(kv, n, PLAN_LABEL_GPU_NAME), "b200");
	CU_ASSERT_PTR_NULL(plan_label(kv, n, PLAN_LABEL_CAPACITY_TYPE));
}

/* ---- The optimizer on a toy model ---- */

#define TOY_MAX_NODES 64
#define TOY_MAX_STACK 256

struct toy_res { int cpu, gpu; };

struct toy {
	const struct toy_res *cand_cap;         /* per candidate */
	const struct toy_res *shape_need;       /* per shape */
	struct { bool open; size_t cand; struct toy_res used;
		 size_t stack[TOY_MAX_STACK]; size_t depth; } nodes[TOY_MAX_NODES];
	size_t adds;
};

static int toy_open(void *ctx, size_t cand, size_t *node)
{
	struct toy *t = ctx;

	for (size_t i = 0; i < TOY_MAX_NODES; i++) {
		if (t->nodes[i].open)
			continue;
		memset(&t->nodes[i], 0, sizeof(t->nodes[i]));
		t->nodes[i].open = true;
		t->nodes[i].cand = cand;
		*node = i;
		return 0;
	}
	return -ENOSPC;
}

static void toy_close(void *ctx, size_t node)
{
	((struct toy *)ctx)->nodes[node].open = false;
}

static int toy_add(void *ctx, size_t node, size_t shape)
{
	struct toy *t = ctx;
	const struct toy_res *cap = &t->cand_cap[t->nodes[node].cand];
	const struct toy_res *need = &t->shape_need[shape];

	t->adds++;
	if (t->nodes[node].used.cpu + need->cpu > cap->cpu ||
	    t->nodes[node].used.gpu + need->gpu > cap->gpu ||
	    t->nodes[node].depth == TOY_MAX_STACK)
		return 0;
	t->nodes[node].used.cpu += need->cpu;
	t->nodes[node].used.gpu += need->gpu;
	t->nodes[node].stack[t->nodes[node].depth++] = shape;
	return 1;
}

static void toy_undo(void *ctx, size_t node)
{
	struct toy *t = ctx;
	size_t s = t->nodes[node].stack[--t->nodes[node].depth];

	t->nodes[node].used.cpu -= t->shape_need[s].cpu;
	t->nodes[node].used.gpu -= t->shape_need[s].gpu;
}

static void solve_toy(struct toy *t, size_t n_shapes, const size_t *count, size_t n_cands,
		      const double *price, uint64_t steps, struct plan_pack_solution *sol)
{
	bool allowed[64];
	struct plan_pack_problem p = {
		.n_shapes = n_shapes, .n_cands = n_cands, .count = count, .price = price,
		.allowed = allowed, .exact_steps = steps,
		.ops = { .ctx = t, .open = toy_open, .close = toy_close, .add = toy_add,
			 .undo = toy_undo },
	};
	struct dt_err err;

	for (size_t i = 0; i < n_shapes * n_cands; i++)
		allowed[i] = true;
	CU_ASSERT_EQUAL_FATAL(plan_pack_solve(&p, sol, &err), 0);
	/* Every node the optimizer opened was closed again. */
	for (size_t i = 0; i < TOY_MAX_NODES; i++)
		CU_ASSERT_FALSE(t->nodes[i].open);
}

/* Verify a solution holds what it claims on the toy model. */
static void check_feasible(const struct toy *t, const struct plan_pack_solution *sol,
			   size_t n_shapes, const size_t *count, const double *price)
{
	double cost = 0;

	for (size_t s = 0; s < n_shapes; s++) {
		size_t placed = sol->unplaced[s];

		for (size_t n = 0; n < sol->n_nodes; n++)
			placed += sol->nodes[n].per_shape[s];
		CU_ASSERT_EQUAL(placed, count[s]);
	}
	for (size_t n = 0; n < sol->n_nodes; n++) {
		struct toy_res used = { 0, 0 };
		const struct toy_res *cap = &t->cand_cap[sol->nodes[n].cand];

		for (size_t s = 0; s < n_shapes; s++) {
			used.cpu += (int)sol->nodes[n].per_shape[s] * t->shape_need[s].cpu;
			used.gpu += (int)sol->nodes[n].per_shape[s] * t->shape_need[s].gpu;
		}
		CU_ASSERT_TRUE(used.cpu <= cap->cpu && used.gpu <= cap->gpu);
		cost += price[sol->nodes[n].cand];
	}
	CU_ASSERT_DOUBLE_EQUAL(cost, sol->cost, 1e-9);
}

static void test_two_small_beat_one_big(void)
{
	/* Big: 8 GPUs for 10.0; small: 1 GPU for 1.0. Two 1-GPU pods: greedy
	 * "first candidate that fits all" would take the big node. */
	static const struct toy_res caps[] = { { 96, 8 }, { 8, 1 } };
	static const struct toy_res need[] = { { 1, 1 } };
	const double price[] = { 10.0, 1.0 };
	const size_t count[] = { 2 };
	struct toy t = { .cand_cap = caps, .shape_need = need };
	struct plan_pack_solution sol;

	solve_toy(&t, 1, count, 2, price, 100000, &sol);
	check_feasible(&t, &sol, 1, count, price);
	CU_ASSERT_EQUAL(sol.n_nodes, 2);
	CU_ASSERT_DOUBLE_EQUAL(sol.cost, 2.0, 1e-9);
	CU_ASSERT_TRUE(sol.optimal);
	/* Capacity is measured up to the demand: 2 of the big node's 8. */
	CU_ASSERT_EQUAL(sol.capacity[0], 2);
	CU_ASSERT_EQUAL(sol.capacity[1], 1);
	plan_pack_solution_free(&sol);
}

static void test_one_big_beats_many_small(void)
{
	/* Nine 1-GPU pods: nine small nodes cost 9.0, one big (8) + one small
	 * cost 11.0; with the big one at 6.0 the mix wins (7.0). */
	static const struct toy_res caps[] = { { 96, 8 }, { 8, 1 } };
	static const struct toy_res need[] = { { 1, 1 } };
	const double price[] = { 6.0, 1.0 };
	const size_t count[] = { 9 };
	struct toy t = { .cand_cap = caps, .shape_need = need };
	struct plan_pack_solution sol;

	solve_toy(&t, 1, count, 2, price, 100000, &sol);
	check_feasible(&t, &sol, 1, count, price);
	CU_ASSERT_DOUBLE_EQUAL(sol.cost, 7.0, 1e-9);
	CU_ASSERT_EQUAL(sol.n_nodes, 2);
	plan_pack_solution_free(&sol);
}

static void test_mixing_shapes(void)
{
	/* A CPU-heavy pod (6 CPU, no GPU) and a GPU pod (1 CPU, 1 GPU).
	 * Candidates: cpu-only (8 CPU) at 1.0, gpu node (8 CPU, 1 GPU) at 1.5.
	 * Separately: 1.0 + 1.5; together on one gpu node: 1.5. */
	static const struct toy_res caps[] = { { 8, 0 }, { 8, 1 } };
	static const struct toy_res need[] = { { 6, 0 }, { 1, 1 } };
	const double price[] = { 1.0, 1.5 };
	const size_t count[] = { 1, 1 };
	struct toy t = { .cand_cap = caps, .shape_need = need };
	struct plan_pack_solution sol;

	solve_toy(&t, 2, count, 2, price, 100000, &sol);
	check_feasible(&t, &sol, 2, count, price);
	CU_ASSERT_EQUAL(sol.n_nodes, 1);
	CU_ASSERT_DOUBLE_EQUAL(sol.cost, 1.5, 1e-9);
	plan_pack_solution_free(&sol);
}

static void test_exact_beats_heuristic(void)
{
	/* Shapes A (3 CPU) x2 and B (2 CPU) x3, candidates 6 CPU at 1.0 and
	 * 12 CPU at 1.9. Per shape: A fits one 6-CPU node, B needs one
	 * 6-CPU node: 2.0, and merging two partial nodes fails (12 > 6)...
	 * one 12-CPU node holds everything for 1.9. The search must find it
	 * (and prove it) whatever stage 2 did. */
	static const struct toy_res caps[] = { { 6, 0 }, { 12, 0 } };
	static const struct toy_res need[] = { { 3, 0 }, { 2, 0 } };
	const double price[] = { 1.0, 1.9 };
	const size_t count[] = { 2, 3 };
	struct toy t = { .cand_cap = caps, .shape_need = need };
	struct plan_pack_solution sol;

	solve_toy(&t, 2, count, 2, price, 1000000, &sol);
	check_feasible(&t, &sol, 2, count, price);
	CU_ASSERT_DOUBLE_EQUAL(sol.cost, 1.9, 1e-9);
	CU_ASSERT_TRUE(sol.optimal);
	plan_pack_solution_free(&sol);
}

static void test_unplaceable(void)
{
	/* A 2-GPU pod fits no candidate; the three 1-GPU pods need three
	 * nodes, and the lower bound proves that without searching. */
	static const struct toy_res caps[] = { { 8, 1 } };
	static const struct toy_res need[] = { { 1, 2 }, { 1, 1 } };
	const double price[] = { 1.0 };
	const size_t count[] = { 1, 3 };
	struct toy t = { .cand_cap = caps, .shape_need = need };
	struct plan_pack_solution sol;

	solve_toy(&t, 2, count, 1, price, 1000, &sol);
	CU_ASSERT_EQUAL(sol.unplaced[0], 1);
	CU_ASSERT_EQUAL(sol.unplaced[1], 0);
	CU_ASSERT_EQUAL(sol.n_nodes, 3);
	CU_ASSERT_TRUE(sol.optimal);
	check_feasible(&t, &sol, 2, count, price);
	plan_pack_solution_free(&sol);
}

static void test_budget_keeps_heuristic(void)
{
	/* test_exact_beats_heuristic's input with a budget of one step: the
	 * search stops, the stage-2 plan (2.0) stands, unproven. */
	static const struct toy_res caps[] = { { 6, 0 }, { 12, 0 } };
	static const struct toy_res need[] = { { 3, 0 }, { 2, 0 } };
	const double price[] = { 1.0, 1.9 };
	const size_t count[] = { 2, 3 };
	struct toy t = { .cand_cap = caps, .shape_need = need };
	struct plan_pack_solution sol;

	solve_toy(&t, 2, count, 2, price, 1, &sol);
	check_feasible(&t, &sol, 2, count, price);
	CU_ASSERT_DOUBLE_EQUAL(sol.cost, 2.0, 1e-9);
	CU_ASSERT_FALSE(sol.optimal);
	plan_pack_solution_free(&sol);
}

static void test_absorb_into_spare_room(void)
{
	/* 30 GPU pods (1 CPU, 1 GPU) and 30 CPU pods (6 CPU): per shape, 30
	 * GPU nodes (8 CPU, 1 GPU) at 1.5 and 30 CPU nodes at 1.0. Each GPU
	 * node has room for one CPU pod: 30 x 1.5 in all. Too many units for
	 * the exact search, so stage 2 must find it. */
	static const struct toy_res caps[] = { { 8, 0 }, { 8, 1 } };
	static const struct toy_res need[] = { { 1, 1 }, { 6, 0 } };
	const double price[] = { 1.0, 1.5 };
	const size_t count[] = { 30, 30 };
	struct toy t = { .cand_cap = caps, .shape_need = need };
	struct plan_pack_solution sol;

	solve_toy(&t, 2, count, 2, price, 100000, &sol);
	check_feasible(&t, &sol, 2, count, price);
	CU_ASSERT_EQUAL(sol.n_nodes, 30);
	CU_ASSERT_DOUBLE_EQUAL(sol.cost, 45.0, 1e-9);
	plan_pack_solution_free(&sol);
}

static void test_absorb_asks_each_question_once(void)
{
	/* test_absorb_into_spare_room at 20,000 + 20,000 units: every GPU
	 * node still takes one CPU pod, and since the GPU nodes are all
	 * alike, the pass asks "does a GPU node take a CPU node's pod" a few
	 * times, not once per pair of nodes: the allocator's work (adds)
	 * stays proportional to the units (QA-13). */
	static const struct toy_res caps[] = { { 8, 0 }, { 8, 1 } };
	static const struct toy_res need[] = { { 1, 1 }, { 6, 0 } };
	const double price[] = { 1.0, 1.5 };
	const size_t count[] = { 20000, 20000 };
	struct toy t = { .cand_cap = caps, .shape_need = need };
	struct plan_pack_solution sol;

	solve_toy(&t, 2, count, 2, price, 100000, &sol);
	check_feasible(&t, &sol, 2, count, price);
	CU_ASSERT_EQUAL(sol.n_nodes, 20000);
	CU_ASSERT_DOUBLE_EQUAL(sol.cost, 20000 * 1.5, 1e-6);
	CU_ASSERT_TRUE(t.adds < 1000);
	plan_pack_solution_free(&sol);
}

static void test_large_shape_is_fast_path(void)
{
	/* 5000 units of one shape: the dynamic program answers without the
	 * exact search (beyond exact_max_units) and the plan is the covering
	 * optimum: 625 big nodes (8 each) at 6.0 beat 5000 small at 1.0. */
	static const struct toy_res caps[] = { { 96, 8 }, { 8, 1 } };
	static const struct toy_res need[] = { { 1, 1 } };
	const double price[] = { 6.0, 1.0 };
	const size_t count[] = { 5000 };
	struct toy t = { .cand_cap = caps, .shape_need = need };
	struct plan_pack_solution sol;

	solve_toy(&t, 1, count, 2, price, 100000, &sol);
	CU_ASSERT_EQUAL(sol.n_nodes, 625);
	CU_ASSERT_DOUBLE_EQUAL(sol.cost, 625 * 6.0, 1e-6);
	CU_ASSERT_FALSE(sol.optimal);   /* not proven: too many units */
	plan_pack_solution_free(&sol);
}

DT_SUITE_MAIN("plan_pack",
	      DT_TEST(test_vset_operators),
	      DT_TEST(test_pool_and_pod_requirements),
	      DT_TEST(test_pool_gt_lt_on_type_labels),
	      DT_TEST(test_taints),
	      DT_TEST(test_kube_reserved),
	      DT_TEST(test_node_allocatable),
	      DT_TEST(test_node_storage),
	      DT_TEST(test_type_labels),
	      DT_TEST(test_two_small_beat_one_big),
	      DT_TEST(test_one_big_beats_many_small),
	      DT_TEST(test_mixing_shapes),
	      DT_TEST(test_exact_beats_heuristic),
	      DT_TEST(test_unplaceable),
	      DT_TEST(test_budget_keeps_heuristic),
	      DT_TEST(test_absorb_into_spare_room),
	      DT_TEST(test_absorb_asks_each_question_once),
	      DT_TEST(test_large_shape_is_fast_path))
