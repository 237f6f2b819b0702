/* test_alloc_cel.c - the allocator with CEL selectors: class selectors by
 * driver, request selectors on attributes and capacity, a CEL runtime
 * error is fatal and names claim, request, selector and device, the same
 * error on a device lacking a node-uniform attribute means "no match",
 * and compile errors. */
#include <stdio.h>

#include "test_alloc_util.h"

#define GPU "gpu.example.com"
#define NIC "nic.example.com"

/* gpu-0..3 (model A100 x2, H100 x2, memory 40Gi / 80Gi) and nic-0. */
static void node(struct ta *t)
{
	struct model_object *g = ta_slice(t, "gpus", GPU, "node-1", 1, 1, "node-1");
	struct model_object *n = ta_slice(t, "nics", NIC, "node-1", 1, 1, "node-1");

	for (int i = 0; i < 4; i++) {
		struct model_device *d;
		char name[16];

		snprintf(name, sizeof(name), "gpu-%d", i);
		d = ta_device(t, g, name);
		ta_attr_str(t, g, d, "model", i < 2 ? "A100" : "H100", false);
		ta_attr_int(t, g, d, "index", i);
		ta_capacity(t, g, d, "memory", i < 2 ? "40Gi" : "80Gi");
	}
	ta_device(t, n, "nic-0");
	ta_class(t, GPU, "device.driver == \"" GPU "\"");
	ta_class(t, NIC, "device.driver == \"" NIC "\"");
}

static void test_class_selects_driver(void)
{
	struct model_object *c;
	struct ta t;

	ta_init(&t);
	node(&t);
	c = ta_claim(&t, "claim-0");
	ta_request(&t, c, "nic", NIC, 1);
	ta_request(&t, c, "gpu", GPU, 1);
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_TRUE_FATAL(t.out.allocated);
	DT_ASSERT_STR(ta_dev(&t, 0, 0), NIC "/node-1/nic-0");
	DT_ASSERT_STR(ta_dev(&t, 0, 1), GPU "/node-1/gpu-0");
	/* Only one NIC. */
	c->u.claim.spec.requests[0].exactly->count = 2;
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_FALSE(t.out.allocated);
	CU_ASSERT_PTR_NOT_NULL(strstr(t.out.reason, "request nic: 2 devices of class "
				      NIC " requested, 1 of the node's 5 devices match"));
	ta_done(&t);
}

static void test_request_selectors(void)
{
	struct model_exact_request *er;
	struct ta t;

	ta_init(&t);
	node(&t);
	er = ta_request(&t, ta_claim(&t, "claim-0"), "gpu", GPU, 2);
	ta_selector(&t, er, "device.attributes[\"" GPU "\"].model == \"H100\"");
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_TRUE_FATAL(t.out.allocated);
	DT_ASSERT_STR(ta_dev(&t, 0, 0), GPU "/node-1/gpu-2");
	DT_ASSERT_STR(ta_dev(&t, 0, 1), GPU "/node-1/gpu-3");
	/* All selectors must match. */
	ta_selector(&t, er, "device.capacity[\"" GPU "\"].memory.compareTo(quantity(\"80Gi\")) == 0"
		    " && device.attributes[\"" GPU "\"].index > 2");
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_FALSE(t.out.allocated);
	er->count = 1;
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_TRUE_FATAL(t.out.allocated);
	DT_ASSERT_STR(ta_dev(&t, 0, 0), GPU "/node-1/gpu-3");
	/* The results are cached per device x selector: a second try on the
	 * same ctx gives the same answer. */
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	DT_ASSERT_STR(ta_dev(&t, 0, 0), GPU "/node-1/gpu-3");
	ta_done(&t);
}

static void test_cel_runtime_error_is_fatal(void)
{
	struct model_exact_request *er;
	struct ta t;

	ta_init(&t);
	node(&t);
	er = ta_request(&t, ta_claim(&t, "claim-0"), "gpu", GPU, 1);
	ta_selector(&t, er, "device.attributes[\"" GPU "\"].modle == \"A100\"");
	CU_ASSERT_TRUE(ta_try(&t) < 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(t.err.msg, "claim default/claim-0, request gpu: selector "
				      "#0 on device " GPU "/node-1/gpu-0: CEL runtime error: "));
	CU_ASSERT_PTR_NOT_NULL(strstr(t.err.msg, "modle"));
	ta_done(&t);
}

static void test_cel_compile_error_is_fatal(void)
{
	struct model_exact_request *er;
	struct ta t;

	ta_init(&t);
	node(&t);
	er = ta_request(&t, ta_claim(&t, "claim-0"), "gpu", GPU, 1);
	ta_selector(&t, er, "device.driver ==");
	CU_ASSERT_EQUAL(ta_try(&t), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(t.err.msg, "claim default/claim-0, request gpu: "
				      "selector #0: "));
	ta_done(&t);
}

/* On a hypothetical node, a selector reading the unknown driverVersion
 * cannot be decided: the device does not match, nothing is fatal. */
static void test_uniform_attribute_in_selector(void)
{
	struct model_exact_request *er;
	struct model_kv *ann;
	struct ta t;

	ta_init(&t);
	node(&t);
	ann = model_set_calloc(t.set, 1, sizeof(*ann));
	ann->key = ALLOC_ANNOTATION_NODE_UNIFORM;
	ann->value = "driverVersion";
	((struct model_object *)t.slices[0])->meta.annotations = ann;
	((struct model_object *)t.slices[0])->meta.n_annotations = 1;
	er = ta_request(&t, ta_claim(&t, "claim-0"), "gpu", GPU, 1);
	ta_selector(&t, er, "device.attributes[\"" GPU "\"].driverVersion.isGreaterThan("
		    "semver(\"1.0.0\"))");
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_FALSE(t.out.allocated);
	/* Guarded reads are fine. */
	er->selectors[0].expression = "!has(device.attributes[\"" GPU "\"].driverVersion)";
	er->selectors[0].expression_len = strlen(er->selectors[0].expression);
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_TRUE(t.out.allocated);
	ta_done(&t);
}

/* On the same node, a read of an attribute that is neither on the device
 * nor node-uniform (a typo) stays fatal, with the scheduler's hint. */
static void test_typo_on_uniform_node_is_fatal(void)
{
	struct model_exact_request *er;
	struct model_kv *ann;
	struct ta t;

	ta_init(&t);
	node(&t);
	ann = model_set_calloc(t.set, 1, sizeof(*ann));
	ann->key = ALLOC_ANNOTATION_NODE_UNIFORM;
	ann->value = "driverVersion,cudaDriverVersion";
	((struct model_object *)t.slices[0])->meta.annotations = ann;
	((struct model_object *)t.slices[0])->meta.n_annotations = 1;
	er = ta_request(&t, ta_claim(&t, "claim-0"), "gpu", GPU, 1);
	ta_selector(&t, er, "device.attributes[\"" GPU "\"].productNmae == \"H100\"");
	CU_ASSERT_TRUE(ta_try(&t) < 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(t.err.msg, "claim default/claim-0, request gpu: selector "
				      "#0 on device " GPU "/node-1/gpu-0: CEL runtime error: "
				      "no such key: productNmae (consider using CEL optional "
				      "chaining"));
	/* The uniform one is still "no match". */
	er->selectors[0].expression = "device.attributes[\"" GPU "\"].cudaDriverVersion == "
				      "semver(\"12.0.0\")";
	er->selectors[0].expression_len = strlen(er->selectors[0].expression);
	alloc_state_free(t.state);
	alloc_ctx_free(t.ctx);
	t.ctx = NULL;
	t.state = NULL;
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_FALSE(t.out.allocated);
	ta_done(&t);
}

/* Without reasons, a node that has fewer free devices (5, the NIC
 * included) than the claims ask for is turned away without a search; one
 * that has them still allocates. */
static void test_no_reasons_rejects_short_node(void)
{
	struct alloc_options o;
	struct alloc_outcome out;
	struct alloc_ctx *ctx = NULL;
	const struct model_object *claim;
	struct ta t;

	ta_init(&t);
	node(&t);
	ta_request(&t, ta_claim(&t, "claim-0"), "gpu", GPU, 6);
	ta_request(&t, ta_claim(&t, "claim-1"), "gpu", GPU, 4);
	memset(&o, 0, sizeof(o));
	o.no_reasons = true;
	CU_ASSERT_EQUAL_FATAL(alloc_ctx_new(&t.node, t.slices, t.n_slices, t.classes, t.n_classes,
					    &o, &ctx, &t.err), 0);
	claim = t.claims[0];
	CU_ASSERT_EQUAL(alloc_try(ctx, NULL, &claim, 1, &out, &t.err), 0);
	CU_ASSERT_FALSE(out.allocated);
	CU_ASSERT_EQUAL(out.steps, 0);
	alloc_outcome_free(&out);
	claim = t.claims[1];
	CU_ASSERT_EQUAL(alloc_try(ctx, NULL, &claim, 1, &out, &t.err), 0);
	CU_ASSERT_TRUE(out.allocated);
	alloc_outcome_free(&out);
	alloc_ctx_free(ctx);
	ta_done(&t);
}

/* A per-call no_reasons gives the same answer without the explanation,
 * and, unlike the ctx-wide option, still prepares the claims on a node too
 * small for them: an unknown class fails there as it does with reasons. */
static void test_try_opts_no_reasons(void)
{
	const struct alloc_try_options quiet = { .no_reasons = true };
	struct dt_err e2 = { 0 };
	struct alloc_outcome out;
	const struct model_object *claim;
	struct ta t;

	ta_init(&t);
	node(&t);
	ta_request(&t, ta_claim(&t, "claim-0"), "gpu", GPU, 6);
	ta_request(&t, ta_claim(&t, "claim-1"), "gpu", GPU, 4);
	ta_request(&t, ta_claim(&t, "claim-2"), "gpu", "no-such-class", 6);
	CU_ASSERT_EQUAL_FATAL(ta_try_range(&t, 0, 1), 0);
	CU_ASSERT_FALSE(t.out.allocated);
	CU_ASSERT_PTR_NOT_NULL(strstr(t.out.reason, "6 devices of class " GPU " requested"));
	claim = t.claims[0];
	CU_ASSERT_EQUAL(alloc_try_opts(t.ctx, t.state, &claim, 1, &quiet, &out, &t.err), 0);
	CU_ASSERT_FALSE(out.allocated);
	DT_ASSERT_STR(out.reason, "");
	alloc_outcome_free(&out);
	claim = t.claims[1];
	CU_ASSERT_EQUAL(alloc_try_opts(t.ctx, t.state, &claim, 1, &quiet, &out, &t.err), 0);
	CU_ASSERT_TRUE_FATAL(out.allocated);
	DT_ASSERT_STR(out.claims[0].results[3].device, "gpu-3");
	alloc_outcome_free(&out);
	claim = t.claims[2];
	CU_ASSERT_EQUAL(alloc_try(t.ctx, t.state, &claim, 1, &out, &t.err), -ENOENT);
	alloc_outcome_free(&out);
	CU_ASSERT_EQUAL(alloc_try_opts(t.ctx, t.state, &claim, 1, &quiet, &out, &e2), -ENOENT);
	alloc_outcome_free(&out);
	DT_ASSERT_STR(e2.msg, t.err.msg);
	ta_done(&t);
}

/* Two nodes sharing one program table: each selects with the shared
 * programs, the table outlives the first ctx freed, a compile error is
 * reported by each ctx alike (errors are not kept). */
static void test_shared_programs(void)
{
	struct alloc_programs *progs = alloc_programs_new();
	struct alloc_options o = { 0 };
	struct alloc_ctx *ctx[2] = { 0 };
	struct model_exact_request *er;
	struct alloc_outcome out;
	const struct model_object *claim;
	char msg[2][DT_ERR_MSG_MAX];
	struct ta t;

	CU_ASSERT_PTR_NOT_NULL_FATAL(progs);
	ta_init(&t);
	node(&t);
	er = ta_request(&t, ta_claim(&t, "claim-0"), "gpu", GPU, 1);
	ta_selector(&t, er, "device.attributes[\"" GPU "\"].model == \"H100\"");
	er = ta_request(&t, ta_claim(&t, "claim-1"), "gpu", GPU, 1);
	ta_selector(&t, er, "device.driver ==");
	o.programs = progs;
	for (int n = 0; n < 2; n++)
		CU_ASSERT_EQUAL_FATAL(alloc_ctx_new(&t.node, t.slices, t.n_slices, t.classes,
						    t.n_classes, &o, &ctx[n], &t.err), 0);
	for (int n = 0; n < 2; n++) {
		claim = t.claims[0];
		CU_ASSERT_EQUAL_FATAL(alloc_try(ctx[n], NULL, &claim, 1, &out, &t.err), 0);
		CU_ASSERT_TRUE_FATAL(out.allocated);
		DT_ASSERT_STR(out.claims[0].results[0].device, "gpu-2");
		alloc_outcome_free(&out);
		claim = t.claims[1];
		CU_ASSERT_EQUAL(alloc_try(ctx[n], NULL, &claim, 1, &out, &t.err), -EINVAL);
		alloc_outcome_free(&out);
		snprintf(msg[n], sizeof(msg[n]), "%s", t.err.msg);
		if (!n) {
			/* The second ctx reads the programs the first compiled. */
			alloc_ctx_free(ctx[0]);
			ctx[0] = NULL;
		}
	}
	DT_ASSERT_STR(msg[0], msg[1]);
	CU_ASSERT_PTR_NOT_NULL(strstr(msg[0], "request gpu: selector #0: "));
	alloc_ctx_free(ctx[1]);
	alloc_programs_free(progs);
	ta_done(&t);
}

/* The 5000pods_500nodes shape in small: placing pods node after node
 * fills each node's 10 devices before the next, and every pod lands. */
static void test_pack_pods_node_after_node(void)
{
	struct alloc_ctx *ctx[3] = { 0 };
	struct alloc_state *st[3] = { 0 };
	int per_node[3] = { 0 };
	struct ta t;
	int n_dev = 4, pods = 10;

	ta_init(&t);
	for (int n = 0; n < 3; n++) {
		char name[16];
		struct model_object *s;

		snprintf(name, sizeof(name), "node-%d", n);
		s = ta_slice(&t, name, GPU, name, 1, 1, name);
		for (int i = 0; i < n_dev; i++) {
			char dn[16];

			snprintf(dn, sizeof(dn), "instance-%d", i);
			ta_device(&t, s, dn);
		}
	}
	ta_class(&t, "test-class", "device.driver == \"" GPU "\"");
	for (int p = 0; p < pods; p++) {
		char name[16];

		snprintf(name, sizeof(name), "pod-%d", p);
		ta_request(&t, ta_claim(&t, name), "req-0", "test-class", 1);
	}
	for (int n = 0; n < 3; n++) {
		struct alloc_node nd = { t.slices[n]->u.slice.node_name, NULL, 0, NULL, 0 };

		CU_ASSERT_EQUAL_FATAL(alloc_ctx_new(&nd, t.slices, t.n_slices, t.classes,
						    t.n_classes, NULL, &ctx[n], &t.err), 0);
		st[n] = alloc_state_new(ctx[n]);
	}
	for (int p = 0; p < pods; p++) {
		for (int n = 0; n < 3; n++) {
			struct alloc_outcome out;

			CU_ASSERT_EQUAL_FATAL(alloc_try(ctx[n], st[n], &t.claims[p], 1, &out,
							&t.err), 0);
			if (out.allocated) {
				DT_ASSERT_STR(out.claims[0].results[0].pool,
					      t.slices[n]->u.slice.pool.name);
				alloc_state_commit(st[n], &out);
				per_node[n]++;
				alloc_outcome_free(&out);
				break;
			}
			alloc_outcome_free(&out);
		}
	}
	CU_ASSERT_EQUAL(per_node[0], n_dev);
	CU_ASSERT_EQUAL(per_node[1], n_dev);
	CU_ASSERT_EQUAL(per_node[2], pods - 2 * n_dev);
	for (int n = 0; n < 3; n++) {
		alloc_state_free(st[n]);
		alloc_ctx_free(ctx[n]);
	}
	ta_done(&t);
}

DT_SUITE_MAIN("alloc_cel",
	DT_TEST(test_class_selects_driver),
	DT_TEST(test_request_selectors),
	DT_TEST(test_cel_runtime_error_is_fatal),
	DT_TEST(test_cel_compile_error_is_fatal),
	DT_TEST(test_uniform_attribute_in_selector),
	DT_TEST(test_typo_on_uniform_node_is_fatal),
	DT_TEST(test_no_reasons_rejects_short_node),
	DT_TEST(test_try_opts_no_reasons),
	DT_TEST(test_shared_programs),
	DT_TEST(test_pack_pods_node_after_node))
