/* test_plan_overlay.c - NodeOverlays as the planner applies them
 * (plan_overlay.c): precedence by weight and name, which offerings an
 * overlay's requirements select, absolute prices and adjustments (percent
 * and amount, never below 0, none without a price to adjust), the
 * extended resources of spec.capacity merged across overlays, and the
 * overlays Karpenter ignores as conflicting. */
#include <string.h>

#include "dt_test.h"
#include "plan_internal.h"

static struct model_set *load(const char *yaml)
{
	struct model_set *set = model_set_new();
	struct dt_diags errs;
	struct dt_err err = { 0 };

	CU_ASSERT_PTR_NOT_NULL_FATAL(set);
	dt_diags_init(&errs);
	CU_ASSERT_EQUAL_FATAL(model_set_load_buffer(set, yaml, strlen(yaml), "o.yaml", &errs,
						    &err), 0);
	CU_ASSERT_EQUAL(model_validate_set(set, NULL, &errs), 0);
	for (size_t i = 0; i < errs.n; i++)
		fprintf(stderr, "\n  %s", errs.msgs[i]);
	dt_diags_free(&errs);
	return set;
}

#define OVERLAY(name, body) "---\napiVersion: karpenter.sh/v1alpha1\nkind: NodeOverlay\n" \
			    "metadata: {name: " name "}\nspec:\n" body

/* The labels of an on-demand g6.xlarge of NodePool gpu (a subset of what
 * plan_type_labels writes, which is enough to select on). */
static const struct model_kv g6[] = {
	{ "node.kubernetes.io/instance-type", "g6.xlarge" },
	{ "karpenter.k8s.aws/instance-family", "g6" },
	{ "karpenter.k8s.aws/instance-gpu-count", "1" },
	{ "karpenter.sh/capacity-type", "on-demand" },
	{ "karpenter.sh/nodepool", "gpu" },
};
#define N_G6 (sizeof(g6) / sizeof(g6[0]))

static const struct model_kv spot_g6[] = {
	{ "node.kubernetes.io/instance-type", "g6.xlarge" },
	{ "karpenter.sh/capacity-type", "spot" },
	{ "karpenter.sh/nodepool", "gpu" },
};

struct priced {
	bool ok;
	struct plan_price p;
	char why[256];
};

static struct priced price_of(const char *yaml, const struct model_kv *labels, size_t n,
			      const char *ct, const double *base)
{
	struct model_set *set = load(yaml);
	struct plan_overlays ov;
	struct priced r = { .why = "" };

	CU_ASSERT_EQUAL_FATAL(plan_overlays_init(&ov, set), 0);
	r.ok = plan_overlay_price(&ov, labels, n, ct, base, &r.p, r.why, sizeof(r.why));
	/* The overlay's name is the set's: keep a copy past the set. */
	if (r.p.overlay) {
		static char names[8][64];
		static int k;

		snprintf(names[k % 8], sizeof(names[0]), "%s", r.p.overlay);
		r.p.overlay = names[k++ % 8];
	}
	plan_overlays_free(&ov);
	model_set_free(set);
	return r;
}

static const double base_g6 = 0.8048;

static void test_precedence(void)
{
	struct model_set *set = load(OVERLAY("a", "  requirements: []\n  price: '1'\n")
				     OVERLAY("b", "  requirements: []\n  price: '2'\n  weight: 5\n")
				     OVERLAY("c", "  requirements: []\n  price: '3'\n  weight: 5\n")
				     OVERLAY("d", "  requirements: []\n  price: '4'\n  weight: 1\n"));
	struct plan_overlays ov;

	CU_ASSERT_EQUAL_FATAL(plan_overlays_init(&ov, set), 0);
	CU_ASSERT_EQUAL_FATAL(ov.n, 4);
	/* weight 5 first, the name later in the alphabet before; absent is 0 */
	DT_ASSERT_STR(ov.v[0]->meta.name, "c");
	DT_ASSERT_STR(ov.v[1]->meta.name, "b");
	DT_ASSERT_STR(ov.v[2]->meta.name, "d");
	DT_ASSERT_STR(ov.v[3]->meta.name, "a");
	plan_overlays_free(&ov);
	CU_ASSERT_PTR_NULL(ov.v);
	model_set_free(set);

	set = load("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
		   "spec: {containers: [{name: c, image: i}]}\n");
	CU_ASSERT_EQUAL(plan_overlays_init(&ov, set), 0);
	CU_ASSERT_EQUAL(ov.n, 0);
	plan_overlays_free(&ov);
	model_set_free(set);
}

static void test_price_decided_by_weight(void)
{
	struct priced r;

	/* hwdb's price stands without overlays */
	r = price_of("apiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n", g6, N_G6,
		     "on-demand", &base_g6);
	CU_ASSERT(r.ok);
	CU_ASSERT_DOUBLE_EQUAL(r.p.value, 0.8048, 1e-9);
	CU_ASSERT_PTR_NULL(r.p.overlay);
	/* the higher weight decides, whatever the order written */
	r = price_of(OVERLAY("low", "  requirements: []\n  price: '9'\n  weight: 1\n")
		     OVERLAY("high", "  requirements: [{key: karpenter.k8s.aws/instance-family, "
			     "operator: In, values: [g6]}]\n  priceAdjustment: '+1'\n  weight: 2\n"),
		     g6, N_G6, "on-demand", &base_g6);
	CU_ASSERT(r.ok);
	CU_ASSERT_DOUBLE_EQUAL(r.p.value, 1.8048, 1e-9);
	DT_ASSERT_STR(r.p.overlay, "high");
	/* equal weights: the name later in the alphabet */
	r = price_of(OVERLAY("alpha", "  requirements: []\n  price: '1'\n  weight: 3\n")
		     OVERLAY("beta", "  requirements: []\n  price: '2'\n  weight: 3\n"),
		     g6, N_G6, "on-demand", &base_g6);
	DT_ASSERT_STR(r.p.overlay, "beta");
	CU_ASSERT_DOUBLE_EQUAL(r.p.value, 2, 1e-9);
	/* an overlay that only adds capacity does not decide the price */
	r = price_of(OVERLAY("cap", "  requirements: []\n  capacity: {example.com/x: 1}\n"
			     "  weight: 100\n")
		     OVERLAY("price", "  requirements: []\n  price: '0.5'\n"),
		     g6, N_G6, "on-demand", &base_g6);
	DT_ASSERT_STR(r.p.overlay, "price");
	CU_ASSERT_DOUBLE_EQUAL(r.p.value, 0.5, 1e-9);
	/* an overlay that does not select the offering is passed over */
	r = price_of(OVERLAY("p5", "  requirements: [{key: karpenter.k8s.aws/instance-family, "
			     "operator: In, values: [p5]}]\n  price: '1'\n  weight: 10\n"),
		     g6, N_G6, "on-demand", &base_g6);
	CU_ASSERT_PTR_NULL(r.p.overlay);
	CU_ASSERT_DOUBLE_EQUAL(r.p.value, 0.8048, 1e-9);
}

static void test_adjustments(void)
{
	struct priced r;

	r = price_of(OVERLAY("o", "  requirements: []\n  priceAdjustment: '+150%'\n"), g6, N_G6,
		     "on-demand", &base_g6);
	CU_ASSERT_DOUBLE_EQUAL(r.p.value, 0.8048 * 2.5, 1e-9);
	r = price_of(OVERLAY("o", "  requirements: []\n  priceAdjustment: '-12.5%'\n"), g6, N_G6,
		     "on-demand", &base_g6);
	CU_ASSERT_DOUBLE_EQUAL(r.p.value, 0.8048 * 0.875, 1e-9);
	r = price_of(OVERLAY("o", "  requirements: []\n  priceAdjustment: '-100%'\n"), g6, N_G6,
		     "on-demand", &base_g6);
	CU_ASSERT(r.ok);
	CU_ASSERT_DOUBLE_EQUAL(r.p.value, 0, 1e-12);
	r = price_of(OVERLAY("o", "  requirements: []\n  priceAdjustment: '-0.3'\n"), g6, N_G6,
		     "on-demand", &base_g6);
	CU_ASSERT_DOUBLE_EQUAL(r.p.value, 0.5048, 1e-9);
	/* never below 0 */
	r = price_of(OVERLAY("o", "  requirements: []\n  priceAdjustment: '-5'\n"), g6, N_G6,
		     "on-demand", &base_g6);
	CU_ASSERT(r.ok);
	CU_ASSERT_DOUBLE_EQUAL(r.p.value, 0, 1e-12);
	DT_ASSERT_STR(r.p.overlay, "o");
}

/* p5e.48xlarge has no hwdb price: spec.price gives it one, an adjustment
 * cannot, and the reason says so. */
static void test_no_base_price(void)
{
	static const struct model_kv p5e[] = {
		{ "node.kubernetes.io/instance-type", "p5e.48xlarge" },
		{ "karpenter.sh/capacity-type", "on-demand" },
		{ "karpenter.sh/nodepool", "h200" },
	};
	struct priced r;

	r = price_of("apiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n", p5e, 3,
		     "on-demand", NULL);
	CU_ASSERT(!r.ok);
	DT_ASSERT_STR(r.why, "no on-demand offering");
	r = price_of(OVERLAY("res", "  requirements: [{key: karpenter.sh/nodepool, operator: In, "
			     "values: [h200]}]\n  price: '40'\n"), p5e, 3, "on-demand", NULL);
	CU_ASSERT(r.ok);
	CU_ASSERT_DOUBLE_EQUAL(r.p.value, 40, 1e-9);
	DT_ASSERT_STR(r.p.overlay, "res");
	r = price_of(OVERLAY("cut", "  requirements: []\n  priceAdjustment: '-20%'\n"), p5e, 3,
		     "on-demand", NULL);
	CU_ASSERT(!r.ok);
	DT_ASSERT_STR(r.why, "no on-demand offering: NodeOverlay cut adjusts the price (-20%) but "
		      "there is none to adjust; spec.price would set one");
	/* a spot offering: hwdb has no spot prices, an overlay may set one */
	r = price_of("apiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n", spot_g6, 3, "spot",
		     NULL);
	CU_ASSERT(!r.ok);
	DT_ASSERT_STR(r.why, "no spot offering (hwdb has on-demand prices only)");
	r = price_of(OVERLAY("spot", "  requirements: [{key: karpenter.sh/capacity-type, operator: "
			     "In, values: [spot]}]\n  price: '0.3'\n"), spot_g6, 3, "spot", NULL);
	CU_ASSERT(r.ok);
	CU_ASSERT_DOUBLE_EQUAL(r.p.value, 0.3, 1e-9);
}

/* Requirements select as Karpenter matches them to an offering: by its
 * labels, a key they lack being absent unless launch fills it in (zone). */
static void test_selection(void)
{
	static const struct { const char *req; bool selects; } cases[] = {
		{ "{key: karpenter.sh/nodepool, operator: In, values: [gpu]}", true },
		{ "{key: karpenter.sh/nodepool, operator: In, values: [cpu]}", false },
		{ "{key: karpenter.sh/capacity-type, operator: In, values: [spot]}", false },
		{ "{key: karpenter.sh/capacity-type, operator: NotIn, values: [spot]}", true },
		{ "{key: karpenter.k8s.aws/instance-gpu-count, operator: Gt, values: ['0']}", true },
		{ "{key: karpenter.k8s.aws/instance-gpu-count, operator: Lt, values: ['1']}", false },
		{ "{key: team, operator: In, values: [ml]}", false },
		{ "{key: team, operator: DoesNotExist}", true },
		{ "{key: team, operator: NotIn, values: [ml]}", true },
		{ "{key: topology.kubernetes.io/zone, operator: In, values: [us-east-1a]}", true },
		{ "{key: node.kubernetes.io/instance-type, operator: Exists}", true },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char yaml[512];
		struct priced r;

		snprintf(yaml, sizeof(yaml), OVERLAY("o", "  requirements: [%s]\n  price: '7'\n"),
			 cases[i].req);
		r = price_of(yaml, g6, N_G6, "on-demand", &base_g6);
		if ((r.p.overlay != NULL) != cases[i].selects)
			fprintf(stderr, "\n  %s: want %s", cases[i].req,
				cases[i].selects ? "selected" : "not selected");
		CU_ASSERT_EQUAL(r.p.overlay != NULL, cases[i].selects);
	}
}

static void test_capacity(void)
{
	struct model_set *set = load(
		OVERLAY("a", "  requirements: []\n  capacity: {example.com/fuse: 1, "
			"example.com/slot: 4, hugepages-2Mi: 100Mi}\n  weight: 1\n")
		OVERLAY("b", "  requirements: [{key: karpenter.k8s.aws/instance-family, operator: In, "
			"values: [g6]}]\n  capacity: {example.com/fuse: 2}\n  weight: 9\n")
		OVERLAY("c", "  requirements: [{key: karpenter.k8s.aws/instance-family, operator: In, "
			"values: [p5]}]\n  capacity: {example.com/dongle: 3}\n"));
	const char *names[PLAN_MAX_NODE_EXT];
	size_t n = plan_overlay_ext_names(set, names, PLAN_MAX_NODE_EXT);
	struct plan_overlays ov;
	int64_t ext[PLAN_MAX_NODE_EXT] = { -1, -1, -1, -1 };

	/* distinct, in load order, the node's own resources left out */
	CU_ASSERT_EQUAL_FATAL(n, 3);
	DT_ASSERT_STR(names[0], "example.com/fuse");
	DT_ASSERT_STR(names[1], "example.com/slot");
	DT_ASSERT_STR(names[2], "example.com/dongle");
	CU_ASSERT_EQUAL(plan_overlay_ext_names(set, names, 1), 1);
	n = plan_overlay_ext_names(set, names, PLAN_MAX_NODE_EXT);
	CU_ASSERT_EQUAL_FATAL(plan_overlays_init(&ov, set), 0);
	plan_overlay_capacity(&ov, g6, N_G6, names, n, ext);
	/* fuse from b (weight 9 over 1), slot from a: merged; c not selected */
	CU_ASSERT_EQUAL(ext[0], 2);
	CU_ASSERT_EQUAL(ext[1], 4);
	CU_ASSERT_EQUAL(ext[2], 0);
	CU_ASSERT_EQUAL(ext[3], -1);   /* only n written */
	plan_overlays_free(&ov);
	model_set_free(set);
}

static const struct model_kv p5[] = {
	{ "node.kubernetes.io/instance-type", "p5.48xlarge" },
	{ "karpenter.k8s.aws/instance-family", "p5" },
	{ "karpenter.sh/capacity-type", "on-demand" },
	{ "karpenter.sh/nodepool", "gpu" },
};

/* The names plan_overlays_resolve keeps of yaml's overlays, over the g6
 * and p5 offerings, in precedence order and comma-separated, into kept;
 * the warnings into w. */
static void resolve(const char *yaml, char *kept, size_t sz, struct dt_diags *w)
{
	const struct plan_offering offs[] = {
		{ g6, N_G6, "g6.xlarge", "gpu" },
		{ p5, sizeof(p5) / sizeof(p5[0]), "p5.48xlarge", "gpu" },
	};
	struct model_set *set = load(yaml);
	struct plan_overlays ov;
	size_t len = 0;

	dt_diags_init(w);
	CU_ASSERT_EQUAL_FATAL(plan_overlays_init(&ov, set), 0);
	CU_ASSERT_EQUAL_FATAL(plan_overlays_resolve(&ov, offs, 2, w), 0);
	kept[0] = '\0';
	for (size_t i = 0; i < ov.n; i++)
		len += (size_t)snprintf(kept + len, sz - len, "%s%s", i ? "," : "",
					ov.v[i]->meta.name);
	plan_overlays_free(&ov);
	model_set_free(set);
}

#define FAMILY(f) "  requirements: [{key: karpenter.k8s.aws/instance-family, operator: In, " \
		  "values: [" f "]}]\n"

static void test_conflicts(void)
{
	static const struct {
		const char *yaml, *kept;
		size_t n_warnings;
		const char *warning;    /* the first one's text, or a part of it */
	} cases[] = {
		/* one weight, both price g6: the second in precedence (the
		 * earlier name) is dropped, also where it alone prices p5 */
		{ OVERLAY("beta", FAMILY("g6") "  price: '2'\n  weight: 3\n")
		  OVERLAY("alpha", "  requirements: []\n  priceAdjustment: '-10%'\n  weight: 3\n"),
		  "beta", 1,
		  "NodeOverlay alpha: conflicts with NodeOverlay beta (both of weight 3 set the "
		  "price of g6.xlarge in NodePool gpu): Karpenter ignores alpha "
		  "(ValidationSucceeded False, reason Conflict), and so does this plan" },
		/* other weights, or offerings neither shares: no conflict */
		{ OVERLAY("beta", FAMILY("g6") "  price: '2'\n  weight: 3\n")
		  OVERLAY("alpha", "  requirements: []\n  price: '1'\n  weight: 2\n")
		  OVERLAY("gamma", FAMILY("p5") "  price: '9'\n  weight: 3\n"),
		  "gamma,beta,alpha", 0, NULL },
		/* capacity: one resource at one weight clashes, different ones
		 * merge, and a price beside a capacity is no clash */
		{ OVERLAY("a", "  requirements: []\n  capacity: {example.com/fuse: 1}\n")
		  OVERLAY("b", FAMILY("g6") "  capacity: {example.com/slot: 2}\n  price: '1'\n")
		  OVERLAY("c", FAMILY("g6") "  capacity: {example.com/fuse: 3}\n"),
		  "c,b", 1,
		  "NodeOverlay a: conflicts with NodeOverlay c (both of weight 0 set the "
		  "example.com/fuse capacity of g6.xlarge in NodePool gpu)" },
		/* a dropped overlay conflicts with nothing after it */
		{ OVERLAY("c", FAMILY("g6") "  price: '3'\n  weight: 7\n")
		  OVERLAY("b", "  requirements: []\n  price: '2'\n  weight: 7\n")
		  OVERLAY("a", FAMILY("p5") "  price: '1'\n  weight: 7\n"),
		  "c,a", 1, "NodeOverlay b: conflicts with NodeOverlay c" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct dt_diags w;
		char kept[128];

		resolve(cases[i].yaml, kept, sizeof(kept), &w);
		DT_ASSERT_STR(kept, cases[i].kept);
		CU_ASSERT_EQUAL(w.n, cases[i].n_warnings);
		if (cases[i].warning && w.n)
			CU_ASSERT_PTR_NOT_NULL(strstr(w.msgs[0], cases[i].warning));
		dt_diags_free(&w);
	}
}

DT_SUITE_MAIN("plan_overlay",
	      DT_TEST(test_precedence),
	      DT_TEST(test_price_decided_by_weight),
	      DT_TEST(test_adjustments),
	      DT_TEST(test_no_base_price),
	      DT_TEST(test_selection),
	      DT_TEST(test_capacity),
	      DT_TEST(test_conflicts))
