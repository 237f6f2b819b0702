/* test_alloc.c - the structured allocator without CEL: pools and
 * generations, ExactCount and All, the search's combinations and budget,
 * limits, firstAvailable, admin access, constraints, taints, consumable
 * capacity, counters, result node selectors, the allocated state, and
 * node-uniform attributes. Classes here have no selectors (they select
 * every device); test_alloc_cel.c covers selectors. Expected devices are
 * derived from the inputs each test builds. */
#include <stdio.h>

#include "test_alloc_util.h"

#define D "driver-a"

/* n devices device-0.. in one slice of pool-1 on node-1. */
static struct model_object *pool_of(struct ta *t, int n)
{
	struct model_object *s = ta_slice(t, "slice-1", D, "pool-1", 1, 1, "node-1");
	char name[32];

	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "device-%d", i);
		ta_device(t, s, name);
	}
	return s;
}

static void test_basic_first_device(void)
{
	struct ta t;

	ta_init(&t);
	pool_of(&t, 2);
	ta_class(&t, "class-a", NULL);
	ta_request(&t, ta_claim(&t, "claim-0"), "req-0", "class-a", 1);
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_TRUE_FATAL(t.out.allocated);
	CU_ASSERT_EQUAL(t.out.n_claims, 1);
	CU_ASSERT_EQUAL(t.out.claims[0].n_results, 1);
	DT_ASSERT_STR(ta_dev(&t, 0, 0), D "/pool-1/device-0");
	DT_ASSERT_STR(t.out.claims[0].results[0].request, "req-0");
	CU_ASSERT_PTR_NULL(t.out.claims[0].results[0].share_id);
	/* nodeName slice: the result is pinned to the node. */
	CU_ASSERT_PTR_NOT_NULL_FATAL(t.out.claims[0].node_selector);
	DT_ASSERT_STR(t.out.claims[0].node_selector->terms[0].match_fields[0].key,
		      "metadata.name");
	DT_ASSERT_STR(t.out.claims[0].node_selector->terms[0].match_fields[0].values[0],
		      "node-1");
	ta_done(&t);
}

static void test_claims_share_nothing(void)
{
	struct ta t;

	ta_init(&t);
	pool_of(&t, 2);
	ta_class(&t, "class-a", NULL);
	for (int i = 0; i < 3; i++) {
		char name[16];

		snprintf(name, sizeof(name), "claim-%d", i);
		ta_request(&t, ta_claim(&t, name), "req-0", "class-a", 1);
	}
	/* Two claims: two different devices. */
	CU_ASSERT_EQUAL_FATAL(ta_try_range(&t, 0, 2), 0);
	CU_ASSERT_TRUE_FATAL(t.out.allocated);
	DT_ASSERT_STR(ta_dev(&t, 0, 0), D "/pool-1/device-0");
	DT_ASSERT_STR(ta_dev(&t, 1, 0), D "/pool-1/device-1");
	/* Three claims on two devices: unallocatable, with a reason. */
	CU_ASSERT_EQUAL_FATAL(ta_try_range(&t, 0, 3), 0);
	CU_ASSERT_FALSE(t.out.allocated);
	DT_ASSERT_STR(t.out.reason, "cannot allocate all claims together: each fits on its "
		      "own, but not all of them at once on the node's free devices");
	ta_done(&t);
}

static void test_state_in_use_commit_rollback(void)
{
	struct model_allocation_result res;
	struct model_allocation a;
	struct alloc_state *snap;
	struct ta t;

	ta_init(&t);
	pool_of(&t, 3);
	ta_class(&t, "class-a", NULL);
	ta_request(&t, ta_claim(&t, "claim-0"), "req-0", "class-a", 1);
	CU_ASSERT_EQUAL_FATAL(ta_ctx(&t, 0), 0);
	/* device-0 already allocated by a claim outside this pod. */
	memset(&res, 0, sizeof(res));
	memset(&a, 0, sizeof(a));
	res.request = "x";
	res.driver = D;
	res.pool = "pool-1";
	res.device = "device-0";
	a.results = &res;
	a.n_results = 1;
	CU_ASSERT_EQUAL(alloc_state_add_allocation(t.state, &a, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	DT_ASSERT_STR(ta_dev(&t, 0, 0), D "/pool-1/device-1");
	/* The planner: snapshot, commit, try again, roll back. */
	snap = alloc_state_clone(t.state);
	CU_ASSERT_PTR_NOT_NULL_FATAL(snap);
	CU_ASSERT_EQUAL(alloc_state_commit(t.state, &t.out), 0);
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	DT_ASSERT_STR(ta_dev(&t, 0, 0), D "/pool-1/device-2");
	CU_ASSERT_EQUAL(alloc_state_commit(t.state, &t.out), 0);
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_FALSE(t.out.allocated);
	CU_ASSERT_EQUAL(alloc_state_commit(t.state, &t.out), -EINVAL);
	CU_ASSERT_EQUAL(alloc_state_copy(t.state, snap), 0);
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	DT_ASSERT_STR(ta_dev(&t, 0, 0), D "/pool-1/device-1");
	/* Admin-access results use nothing. */
	res.device = "device-1";
	res.has_admin_access = res.admin_access = true;
	CU_ASSERT_EQUAL(alloc_state_add_allocation(t.state, &a, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	DT_ASSERT_STR(ta_dev(&t, 0, 0), D "/pool-1/device-1");
	/* Devices of other nodes are ignored. */
	res.has_admin_access = res.admin_access = false;
	res.pool = "pool-elsewhere";
	CU_ASSERT_EQUAL(alloc_state_add_allocation(t.state, &a, NULL), 0);
	alloc_state_free(snap);
	ta_done(&t);
}

/* n devices, the last lacking the attribute a matchAttribute constraint
 * needs, and a request for all n: every device is free (so nothing
 * rejects the node up front), but no choice works. */
static void unsatisfiable_pool(struct ta *t, int n)
{
	struct model_object *s = ta_slice(t, "slice-1", D, "pool-1", 1, 1, "node-1");
	struct model_object *c;
	char name[32];

	for (int i = 0; i < n; i++) {
		struct model_device *d;

		snprintf(name, sizeof(name), "device-%d", i);
		d = ta_device(t, s, name);
		if (i < n - 1)
			ta_attr_int(t, s, d, "numa", 0);
	}
	ta_class(t, "class-a", NULL);
	c = ta_claim(t, "claim-0");
	ta_request(t, c, "req-0", "class-a", n);
	ta_constraint(t, c, D "/numa", false, NULL);
}

/* The search visits every subset of the n-1 usable devices exactly once
 * (2^(n-1) steps), where permutations would take sum m!/(m-j)! (m = n-1). */
static void test_combinations_not_permutations(void)
{
	for (int n = 2; n <= 9; n++) {
		uint64_t perms = 1, term = 1;
		int m = n - 1;
		struct ta t;

		for (int j = 1; j <= m; j++) {
			term *= (uint64_t)(m - j + 1);
			perms += term;
		}
		ta_init(&t);
		unsatisfiable_pool(&t, n);
		CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
		CU_ASSERT_FALSE(t.out.allocated);
		CU_ASSERT_EQUAL(t.out.steps, (uint64_t)1 << m);
		if (m > 2)
			CU_ASSERT(t.out.steps < perms);
		ta_done(&t);
	}
}

/* Asking for more devices than are free is answered without a search
 * (the scheduler would walk every subset: issue #131730). */
static void test_too_few_free_devices_is_immediate(void)
{
	struct ta t;

	ta_init(&t);
	pool_of(&t, 30);
	ta_class(&t, "class-a", NULL);
	ta_request(&t, ta_claim(&t, "claim-0"), "req-0", "class-a", 31);
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_FALSE(t.out.allocated);
	CU_ASSERT_EQUAL(t.out.steps, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(t.out.reason, "31 devices of class class-a requested, "
				      "30 of the node's 30 devices match"));
	ta_done(&t);
}

/* Backtracking: the first choice for req-0 blocks req-1 through a
 * matchAttribute constraint, so the search must undo it. */
static void test_backtracking(void)
{
	const char *both[] = { "req-0", "req-1", NULL };
	struct model_object *s, *c;
	struct model_device *d;
	struct ta t;

	ta_init(&t);
	s = ta_slice(&t, "slice-1", D, "pool-1", 1, 1, "node-1");
	d = ta_device(&t, s, "device-0");
	ta_attr_int(&t, s, d, "numa", 0);
	d = ta_device(&t, s, "device-1");
	ta_attr_int(&t, s, d, "numa", 1);
	d = ta_device(&t, s, "device-2");
	ta_attr_int(&t, s, d, "numa", 1);
	ta_class(&t, "class-a", NULL);
	c = ta_claim(&t, "claim-0");
	ta_request(&t, c, "req-0", "class-a", 1);
	ta_request(&t, c, "req-1", "class-a", 1);
	ta_constraint(&t, c, D "/numa", false, both);
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_TRUE_FATAL(t.out.allocated);
	DT_ASSERT_STR(ta_dev(&t, 0, 0), D "/pool-1/device-1");
	DT_ASSERT_STR(ta_dev(&t, 0, 1), D "/pool-1/device-2");
	ta_done(&t);
}

static void test_step_budget(void)
{
	struct ta t;

	ta_init(&t);
	unsatisfiable_pool(&t, 20);
	CU_ASSERT_EQUAL_FATAL(ta_ctx(&t, 1000), 0);
	CU_ASSERT_EQUAL(ta_try(&t), -ETIME);
	CU_ASSERT_PTR_NOT_NULL(strstr(t.err.msg, "gave up after 1000 steps"));
	ta_done(&t);
}

static void test_result_limit(void)
{
	struct model_object *c;
	struct ta t;

	ta_init(&t);
	pool_of(&t, 40);
	ta_class(&t, "class-a", NULL);
	ta_request(&t, ta_claim(&t, "claim-0"), "req-0", "class-a", ALLOC_MAX_RESULTS + 1);
	CU_ASSERT_EQUAL(ta_try(&t), -E2BIG);
	DT_ASSERT_STR(t.err.msg, "claim default/claim-0: number of requested devices 33 "
		      "exceeds the claim limit of 32");
	/* Two requests that together exceed it. */
	c = ta_claim(&t, "claim-1");
	ta_request(&t, c, "req-0", "class-a", 20);
	ta_request(&t, c, "req-1", "class-a", 13);
	CU_ASSERT_EQUAL(ta_try_range(&t, 1, 1), -E2BIG);
	CU_ASSERT_PTR_NOT_NULL(strstr(t.err.msg, "number of requested devices 33"));
	/* All on 40 devices: over the limit too, with the real count. */
	c = ta_claim(&t, "claim-all");
	ta_request(&t, c, "req-0", "class-a", 0);
	CU_ASSERT_EQUAL(ta_try_range(&t, t.n_claims - 1, 1), -E2BIG);
	DT_ASSERT_STR(t.err.msg, "claim default/claim-all: number of requested devices 40 "
		      "exceeds the claim limit of 32");
	/* Exactly 32 is fine. */
	c = ta_claim(&t, "claim-2");
	ta_request(&t, c, "req-0", "class-a", ALLOC_MAX_RESULTS);
	CU_ASSERT_EQUAL_FATAL(ta_try_range(&t, t.n_claims - 1, 1), 0);
	CU_ASSERT_TRUE(t.out.allocated);
	CU_ASSERT_EQUAL(t.out.claims[0].n_results, ALLOC_MAX_RESULTS);
	ta_done(&t);
}

static void test_all_mode(void)
{
	struct model_object *s;
	struct ta t;

	ta_init(&t);
	s = pool_of(&t, 3);
	ta_class(&t, "class-a", NULL);
	ta_request(&t, ta_claim(&t, "claim-0"), "req-0", "class-a", 0);
	ta_request(&t, ta_claim(&t, "claim-1"), "req-0", "class-a", 1);
	CU_ASSERT_EQUAL_FATAL(ta_try_range(&t, 0, 1), 0);
	CU_ASSERT_TRUE_FATAL(t.out.allocated);
	CU_ASSERT_EQUAL(t.out.claims[0].n_results, s->u.slice.n_devices);
	DT_ASSERT_STR(ta_dev(&t, 0, 2), D "/pool-1/device-2");
	/* One of them in use: All cannot be satisfied. */
	CU_ASSERT_EQUAL_FATAL(ta_try_range(&t, 1, 1), 0);
	CU_ASSERT_EQUAL(alloc_state_commit(t.state, &t.out), 0);
	CU_ASSERT_EQUAL_FATAL(ta_try_range(&t, 0, 1), 0);
	CU_ASSERT_FALSE(t.out.allocated);
	CU_ASSERT_PTR_NOT_NULL(strstr(t.out.reason, "asks for all 3 matching devices"));
	ta_done(&t);

	/* No device at all: All needs at least one. */
	ta_init(&t);
	ta_slice(&t, "slice-1", D, "pool-1", 1, 1, "node-1");
	ta_class(&t, "class-a", NULL);
	ta_request(&t, ta_claim(&t, "claim-0"), "req-0", "class-a", 0);
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_FALSE(t.out.allocated);
	ta_done(&t);

	/* An incomplete pool makes All fail outright. */
	ta_init(&t);
	s = ta_slice(&t, "slice-1", D, "pool-1", 1, 2, "node-1");
	ta_device(&t, s, "device-0");
	ta_class(&t, "class-a", NULL);
	ta_request(&t, ta_claim(&t, "claim-0"), "req-0", "class-a", 0);
	CU_ASSERT_EQUAL(ta_try(&t), -EAGAIN);
	DT_ASSERT_STR(t.err.msg, "claim default/claim-0, request req-0: asks for all devices, "
		      "but resource pool " D "/pool-1 is currently being updated");
	ta_done(&t);
}

static void test_generations_and_incomplete_pools(void)
{
	struct model_object *s;
	struct ta t;

	/* Only the newest generation counts. */
	ta_init(&t);
	s = ta_slice(&t, "slice-old", D, "pool-1", 1, 1, "node-1");
	ta_device(&t, s, "old-0");
	s = ta_slice(&t, "slice-new", D, "pool-1", 2, 1, "node-1");
	ta_device(&t, s, "new-0");
	ta_class(&t, "class-a", NULL);
	ta_request(&t, ta_claim(&t, "claim-0"), "req-0", "class-a", 0);
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_TRUE_FATAL(t.out.allocated);
	CU_ASSERT_EQUAL(t.out.claims[0].n_results, 1);
	DT_ASSERT_STR(ta_dev(&t, 0, 0), D "/pool-1/new-0");
	ta_done(&t);

	/* Incomplete (1 of 2 slices): skipped by ExactCount, named in the reason. */
	ta_init(&t);
	s = ta_slice(&t, "slice-1", D, "pool-1", 1, 2, "node-1");
	ta_device(&t, s, "device-0");
	ta_class(&t, "class-a", NULL);
	ta_request(&t, ta_claim(&t, "claim-0"), "req-0", "class-a", 1);
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_FALSE(t.out.allocated);
	CU_ASSERT_PTR_NOT_NULL(strstr(t.out.reason, "1 resource pool is being updated"));
	/* The second slice arrives (for another node): complete now. */
	alloc_ctx_free(t.ctx);
	alloc_state_free(t.state);
	t.ctx = NULL;
	t.state = NULL;
	ta_slice(&t, "slice-2", D, "pool-1", 1, 2, "node-2");
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_TRUE(t.out.allocated);
	DT_ASSERT_STR(ta_dev(&t, 0, 0), D "/pool-1/device-0");
	ta_done(&t);

	/* A newer generation published for another node only: the pool is
	 * being replaced, ours is obsolete. */
	ta_init(&t);
	s = ta_slice(&t, "slice-1", D, "pool-1", 1, 1, "node-1");
	ta_device(&t, s, "device-0");
	ta_slice(&t, "slice-2", D, "pool-1", 2, 1, "node-2");
	ta_class(&t, "class-a", NULL);
	ta_request(&t, ta_claim(&t, "claim-0"), "req-0", "class-a", 1);
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_FALSE(t.out.allocated);
	CU_ASSERT_EQUAL(alloc_ctx_device_count(t.ctx), 0);
	ta_done(&t);
}

static void test_invalid_pool(void)
{
	struct model_object *s;
	struct ta t;

	ta_init(&t);
	s = ta_slice(&t, "slice-1", D, "pool-1", 1, 2, "node-1");
	ta_device(&t, s, "device-0");
	s = ta_slice(&t, "slice-2", D, "pool-1", 1, 2, "node-1");
	ta_device(&t, s, "device-0");
	ta_class(&t, "class-a", NULL);
	ta_request(&t, ta_claim(&t, "claim-0"), "req-0", "class-a", 1);
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_FALSE(t.out.allocated);
	CU_ASSERT_PTR_NOT_NULL(strstr(t.out.reason, "invalid resource pools were encountered"));
	CU_ASSERT_PTR_NOT_NULL(strstr(t.out.reason, "duplicate device name device-0"));
	/* Another valid pool still serves the claim. */
	alloc_ctx_free(t.ctx);
	alloc_state_free(t.state);
	t.ctx = NULL;
	t.state = NULL;
	s = ta_slice(&t, "slice-3", D, "pool-2", 1, 1, "node-1");
	ta_device(&t, s, "device-9");
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_TRUE(t.out.allocated);
	DT_ASSERT_STR(ta_dev(&t, 0, 0), D "/pool-2/device-9");
	ta_done(&t);
}

static void test_pool_order(void)
{
	struct model_object *s;
	struct ta t;

	ta_init(&t);
	/* Pools are tried by (driver, pool) name, slices by name. */
	s = ta_slice(&t, "slice-z", "driver-b", "pool-1", 1, 1, "node-1");
	ta_device(&t, s, "b-0");
	s = ta_slice(&t, "slice-y", D, "pool-2", 1, 1, "node-1");
	ta_device(&t, s, "a2-0");
	s = ta_slice(&t, "slice-b", D, "pool-1", 1, 2, "node-1");
	ta_device(&t, s, "a1-b");
	s = ta_slice(&t, "slice-a", D, "pool-1", 1, 2, "node-1");
	ta_device(&t, s, "a1-a");
	ta_class(&t, "class-a", NULL);
	ta_request(&t, ta_claim(&t, "claim-0"), "req-0", "class-a", 4);
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_TRUE_FATAL(t.out.allocated);
	DT_ASSERT_STR(ta_dev(&t, 0, 0), D "/pool-1/a1-a");
	DT_ASSERT_STR(ta_dev(&t, 0, 1), D "/pool-1/a1-b");
	DT_ASSERT_STR(ta_dev(&t, 0, 2), D "/pool-2/a2-0");
	DT_ASSERT_STR(ta_dev(&t, 0, 3), "driver-b/pool-1/b-0");
	ta_done(&t);
}

/* A slice selecting nodes with region=region-1. */
static struct model_object *regional_slice(struct ta *t)
{
	struct model_object *s = ta_slice(t, "slice-3", D, "pool-3", 1, 1, NULL);
	struct model_node_selector_term *term;
	struct model_requirement *req;

	s->u.slice.has_all_nodes = s->u.slice.all_nodes = false;
	s->u.slice.node_selector = model_set_calloc(t->set, 1, sizeof(*s->u.slice.node_selector));
	term = model_set_calloc(t->set, 1, sizeof(*term));
	req = model_set_calloc(t->set, 1, sizeof(*req));
	req->key = "region";
	req->operator_text = "In";
	req->op = MODEL_OP_IN;
	req->values = model_set_calloc(t->set, 1, sizeof(*req->values));
	req->values[0] = "region-1";
	req->n_values = 1;
	term->match_expressions = req;
	term->n_match_expressions = 1;
	s->u.slice.node_selector->terms = term;
	s->u.slice.node_selector->n_terms = 1;
	ta_device(t, s, "regional");
	return s;
}

static void test_node_selection(void)
{
	struct model_object *s;
	struct ta t;

	ta_init(&t);
	/* A slice for another node is not ours; allNodes is everybody's. */
	s = ta_slice(&t, "slice-1", D, "pool-1", 1, 1, "node-2");
	ta_device(&t, s, "other");
	s = ta_slice(&t, "slice-2", D, "pool-2", 1, 1, NULL);
	ta_device(&t, s, "everywhere");
	regional_slice(&t);
	ta_class(&t, "class-a", NULL);
	ta_request(&t, ta_claim(&t, "claim-0"), "req-0", "class-a", 1);
	ta_request(&t, ta_claim(&t, "claim-1"), "req-0", "class-a", 1);
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_TRUE_FATAL(t.out.allocated);
	DT_ASSERT_STR(ta_dev(&t, 0, 0), D "/pool-2/everywhere");
	CU_ASSERT_PTR_NULL(t.out.claims[0].node_selector);
	DT_ASSERT_STR(ta_dev(&t, 1, 0), D "/pool-3/regional");
	CU_ASSERT_PTR_NOT_NULL_FATAL(t.out.claims[1].node_selector);
	CU_ASSERT_EQUAL(t.out.claims[1].node_selector->terms[0].n_match_expressions, 1);
	DT_ASSERT_STR(t.out.claims[1].node_selector->terms[0].match_expressions[0].key, "region");
	ta_done(&t);

	/* The same slice seen from a node in another region. */
	ta_init(&t);
	t.labels[0].value = "region-2";
	regional_slice(&t);
	ta_class(&t, "class-a", NULL);
	ta_request(&t, ta_claim(&t, "claim-0"), "req-0", "class-a", 1);
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_FALSE(t.out.allocated);
	ta_done(&t);
}

static void test_first_available(void)
{
	struct model_object *c;
	struct ta t;

	ta_init(&t);
	pool_of(&t, 2);
	ta_class(&t, "class-a", NULL);
	c = ta_claim(&t, "claim-0");
	ta_subrequest(&t, c, "req-0", "sub-0", "class-a", 3);
	ta_subrequest(&t, c, "req-0", "sub-1", "class-a", 2);
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_TRUE_FATAL(t.out.allocated);
	CU_ASSERT_EQUAL(t.out.claims[0].n_results, 2);
	DT_ASSERT_STR(t.out.claims[0].results[0].request, "req-0/sub-1");
	DT_ASSERT_STR(t.out.claims[0].results[1].request, "req-0/sub-1");
	ta_done(&t);

	/* The first subrequest over the 32 limit is skipped, not fatal. */
	ta_init(&t);
	pool_of(&t, 2);
	ta_class(&t, "class-a", NULL);
	c = ta_claim(&t, "claim-0");
	ta_subrequest(&t, c, "req-0", "huge", "class-a", 40);
	ta_subrequest(&t, c, "req-0", "small", "class-a", 1);
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_TRUE_FATAL(t.out.allocated);
	DT_ASSERT_STR(t.out.claims[0].results[0].request, "req-0/small");
	ta_done(&t);
}

static void test_admin_access(void)
{
	struct model_exact_request *er;
	struct model_object *c;
	struct ta t;

	ta_init(&t);
	pool_of(&t, 1);
	ta_class(&t, "class-a", NULL);
	ta_request(&t, ta_claim(&t, "claim-0"), "req-0", "class-a", 1);
	c = ta_claim(&t, "admin");
	er = ta_request(&t, c, "req-0", "class-a", 1);
	er->has_admin_access = er->admin_access = true;
	/* The device is in use... */
	CU_ASSERT_EQUAL_FATAL(ta_try_range(&t, 0, 1), 0);
	CU_ASSERT_EQUAL(alloc_state_commit(t.state, &t.out), 0);
	/* ...admin access gets it anyway, flagged, and uses nothing. */
	CU_ASSERT_EQUAL_FATAL(ta_try_range(&t, 1, 1), 0);
	CU_ASSERT_TRUE_FATAL(t.out.allocated);
	CU_ASSERT_TRUE(t.out.claims[0].results[0].admin_access);
	DT_ASSERT_STR(ta_dev(&t, 0, 0), D "/pool-1/device-0");
	/* But not twice within one request. */
	er->count = 2;
	CU_ASSERT_EQUAL_FATAL(ta_try_range(&t, 1, 1), 0);
	CU_ASSERT_FALSE(t.out.allocated);
	ta_done(&t);
}

static void test_match_attribute(void)
{
	struct model_object *s, *c;
	struct model_device *d;
	struct ta t;
	int numa[] = { 0, 1, 2, 1 };

	ta_init(&t);
	s = ta_slice(&t, "slice-1", D, "pool-1", 1, 1, "node-1");
	for (int i = 0; i < 4; i++) {
		char name[16];

		snprintf(name, sizeof(name), "device-%d", i);
		d = ta_device(&t, s, name);
		/* Bare names are in the driver's domain... */
		ta_attr_int(&t, s, d, i % 2 ? "numa" : D "/numa", numa[i]);
		ta_attr_str(&t, s, d, "driverVersion", i == 3 ? "1.2.3" : "1.2.4", true);
	}
	ta_class(&t, "class-a", NULL);
	c = ta_claim(&t, "claim-0");
	ta_request(&t, c, "req-0", "class-a", 2);
	/* ...and found by the fully qualified name either way. */
	ta_constraint(&t, c, D "/numa", false, NULL);
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_TRUE_FATAL(t.out.allocated);
	DT_ASSERT_STR(ta_dev(&t, 0, 0), D "/pool-1/device-1");
	DT_ASSERT_STR(ta_dev(&t, 0, 1), D "/pool-1/device-3");
	/* Versions compare by value text: device-3 differs. */
	c->u.claim.spec.constraints[0].match_attribute = D "/driverVersion";
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	DT_ASSERT_STR(ta_dev(&t, 0, 0), D "/pool-1/device-0");
	DT_ASSERT_STR(ta_dev(&t, 0, 1), D "/pool-1/device-1");
	/* A missing attribute never matches. */
	c->u.claim.spec.constraints[0].match_attribute = D "/missing";
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_FALSE(t.out.allocated);
	/* Another domain is not the driver's. */
	c->u.claim.spec.constraints[0].match_attribute = "other.example.com/numa";
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_FALSE(t.out.allocated);
	ta_done(&t);
}

/* List-type attributes as sets (the experimental allocator's semantics):
 * matchAttribute keeps the running intersection non-empty and restores it
 * on backtrack; a scalar is a one-element set of the same element type. */
static void test_match_attribute_sets(void)
{
	static const char *const v0[] = { "1", "2" }, *const v1[] = { "1" },
		*const v2[] = { "2" }, *const v3[] = { "2", "9" };
	static const char *const *const sets[] = { v0, v1, v2, v3 };
	static const size_t sizes[] = { 2, 1, 1, 2 };
	struct model_object *s, *c;
	struct model_device *d[4];
	struct ta t;

	ta_init(&t);
	s = ta_slice(&t, "slice-1", D, "pool-1", 1, 1, "node-1");
	for (int i = 0; i < 4; i++) {
		char name[16];

		snprintf(name, sizeof(name), "device-%d", i);
		d[i] = ta_device(&t, s, name);
		ta_attr_list(&t, s, d[i], "numa", CEL_ATTR_INTS, sets[i], sizes[i]);
	}
	ta_class(&t, "class-a", NULL);
	c = ta_claim(&t, "claim-0");
	ta_request(&t, c, "req-0", "class-a", 3);
	ta_constraint(&t, c, D "/numa", false, NULL);
	/* {1,2} & {1} = {1}: device-2 and device-3 do not have 1; back to
	 * {1,2} without device-1, & {2} & {2,9} = {2}. */
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_TRUE_FATAL(t.out.allocated);
	DT_ASSERT_STR(ta_dev(&t, 0, 0), D "/pool-1/device-0");
	DT_ASSERT_STR(ta_dev(&t, 0, 1), D "/pool-1/device-2");
	DT_ASSERT_STR(ta_dev(&t, 0, 2), D "/pool-1/device-3");
	/* Four: no value is in all of them. */
	c->u.claim.spec.requests[0].exactly->count = 4;
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_FALSE(t.out.allocated);
	ta_done(&t);

	/* A scalar int matches a list of ints that holds it; a string "1"
	 * does not (another element type); versions compare as text. */
	ta_init(&t);
	s = ta_slice(&t, "slice-1", D, "pool-1", 1, 1, "node-1");
	d[0] = ta_device(&t, s, "device-0");
	ta_attr_int(&t, s, d[0], "numa", 1);
	d[1] = ta_device(&t, s, "device-1");
	ta_attr_list(&t, s, d[1], "numa", CEL_ATTR_STRINGS, v1, 1);
	d[2] = ta_device(&t, s, "device-2");
	ta_attr_list(&t, s, d[2], "numa", CEL_ATTR_INTS, v3, 2);
	d[3] = ta_device(&t, s, "device-3");
	ta_attr_list(&t, s, d[3], "numa", CEL_ATTR_INTS, v0, 2);
	ta_class(&t, "class-a", NULL);
	c = ta_claim(&t, "claim-0");
	ta_request(&t, c, "req-0", "class-a", 2);
	ta_constraint(&t, c, D "/numa", false, NULL);
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_TRUE_FATAL(t.out.allocated);
	DT_ASSERT_STR(ta_dev(&t, 0, 0), D "/pool-1/device-0");
	DT_ASSERT_STR(ta_dev(&t, 0, 1), D "/pool-1/device-3");
	ta_done(&t);

	ta_init(&t);
	s = ta_slice(&t, "slice-1", D, "pool-1", 1, 1, "node-1");
	{
		static const char *const va[] = { "1.2.3", "2.0.0" }, *const vb[] = { "2.0.0" };

		d[0] = ta_device(&t, s, "device-0");
		ta_attr_list(&t, s, d[0], "ver", CEL_ATTR_VERSIONS, va, 2);
		d[1] = ta_device(&t, s, "device-1");
		ta_attr_str(&t, s, d[1], "ver", "2.0.0+build", true);
		d[2] = ta_device(&t, s, "device-2");
		ta_attr_list(&t, s, d[2], "ver", CEL_ATTR_VERSIONS, vb, 1);
	}
	ta_class(&t, "class-a", NULL);
	c = ta_claim(&t, "claim-0");
	ta_request(&t, c, "req-0", "class-a", 2);
	ta_constraint(&t, c, D "/ver", false, NULL);
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_TRUE_FATAL(t.out.allocated);
	DT_ASSERT_STR(ta_dev(&t, 0, 1), D "/pool-1/device-2");
	ta_done(&t);
}

/* distinctAttribute with sets: pairwise disjoint. */
static void test_distinct_attribute_sets(void)
{
	static const char *const v0[] = { "1", "2" }, *const v1[] = { "2", "3" },
		*const v2[] = { "3" }, *const v3[] = { "4", "5" };
	static const char *const *const sets[] = { v0, v1, v2, v3 };
	struct model_object *s, *c;
	struct ta t;

	ta_init(&t);
	s = ta_slice(&t, "slice-1", D, "pool-1", 1, 1, "node-1");
	for (int i = 0; i < 4; i++) {
		char name[16];
		struct model_device *d;

		snprintf(name, sizeof(name), "device-%d", i);
		d = ta_device(&t, s, name);
		if (i == 2)
			ta_attr_int(&t, s, d, "numa", 3);       /* the scalar 3 */
		else
			ta_attr_list(&t, s, d, "numa", CEL_ATTR_INTS, sets[i], 2);
	}
	ta_class(&t, "class-a", NULL);
	c = ta_claim(&t, "claim-0");
	ta_request(&t, c, "req-0", "class-a", 3);
	ta_constraint(&t, c, D "/numa", true, NULL);
	/* {1,2} {2,3} share 2; {1,2} {3} {4,5} are disjoint. */
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_TRUE_FATAL(t.out.allocated);
	DT_ASSERT_STR(ta_dev(&t, 0, 0), D "/pool-1/device-0");
	DT_ASSERT_STR(ta_dev(&t, 0, 1), D "/pool-1/device-2");
	DT_ASSERT_STR(ta_dev(&t, 0, 2), D "/pool-1/device-3");
	/* {2,3} and the scalar 3 overlap: four disjoint ones do not exist. */
	c->u.claim.spec.requests[0].exactly->count = 4;
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_FALSE(t.out.allocated);
	ta_done(&t);
}

static void test_constraint_scope(void)
{
	const char *only0[] = { "req-0", NULL };
	const char *sub[] = { "req-1/b", NULL };
	struct model_object *s, *c;
	struct model_device *d;
	struct ta t;

	ta_init(&t);
	s = ta_slice(&t, "slice-1", D, "pool-1", 1, 1, "node-1");
	for (int i = 0; i < 4; i++) {
		char name[16];

		snprintf(name, sizeof(name), "device-%d", i);
		d = ta_device(&t, s, name);
		ta_attr_int(&t, s, d, "numa", i);
	}
	ta_class(&t, "class-a", NULL);
	c = ta_claim(&t, "claim-0");
	ta_request(&t, c, "req-0", "class-a", 1);
	ta_subrequest(&t, c, "req-1", "a", "class-a", 2);
	ta_subrequest(&t, c, "req-1", "b", "class-a", 1);
	/* Applies to req-0 only: one device, always satisfied. */
	ta_constraint(&t, c, D "/numa", false, only0);
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_TRUE_FATAL(t.out.allocated);
	DT_ASSERT_STR(t.out.claims[0].results[1].request, "req-1/a");
	/* Applies to req-0 and the subrequest req-1/b: a distinct numa for
	 * req-1/a is fine, req-1/b never gets a matching one. */
	c->u.claim.spec.constraints[0].requests = (const char **)sub;
	c->u.claim.spec.constraints[0].n_requests = 1;
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_TRUE_FATAL(t.out.allocated);
	DT_ASSERT_STR(t.out.claims[0].results[1].request, "req-1/a");
	ta_done(&t);
}

static void test_distinct_attribute(void)
{
	struct model_object *s, *c;
	struct model_device *d;
	struct ta t;
	int root[] = { 0, 0, 1, 1, 2 };

	ta_init(&t);
	s = ta_slice(&t, "slice-1", D, "pool-1", 1, 1, "node-1");
	for (int i = 0; i < 5; i++) {
		char name[16];

		snprintf(name, sizeof(name), "device-%d", i);
		d = ta_device(&t, s, name);
		ta_attr_int(&t, s, d, "root", root[i]);
	}
	ta_class(&t, "class-a", NULL);
	c = ta_claim(&t, "claim-0");
	ta_request(&t, c, "req-0", "class-a", 3);
	ta_constraint(&t, c, D "/root", true, NULL);
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_TRUE_FATAL(t.out.allocated);
	DT_ASSERT_STR(ta_dev(&t, 0, 0), D "/pool-1/device-0");
	DT_ASSERT_STR(ta_dev(&t, 0, 1), D "/pool-1/device-2");
	DT_ASSERT_STR(ta_dev(&t, 0, 2), D "/pool-1/device-4");
	/* Four distinct values do not exist. */
	c->u.claim.spec.requests[0].exactly->count = 4;
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_FALSE(t.out.allocated);
	DT_ASSERT_STR(t.out.reason, "claim default/claim-0: no combination of the matching "
		      "devices satisfies its constraints, capacity and counters "
		      "(distinctAttribute " D "/root)");
	ta_done(&t);
}

/* DeviceTaintRules: their taints join the slice's on the devices they
 * select (driver, pool, device: every field set must match; no selector
 * selects nothing, an empty one everything), are tolerated like slice
 * taints, None is ignored, and a reason names the rule. */
static void test_taint_rules(void)
{
	struct model_exact_request *er;
	struct model_object *s;
	struct ta t;

	ta_init(&t);
	s = ta_slice(&t, "slice-1", D, "pool-1", 1, 1, "node-1");
	ta_device(&t, s, "gpu-0");
	ta_device(&t, s, "gpu-1");
	ta_device(&t, s, "gpu-2");
	ta_class(&t, "class-a", NULL);
	er = ta_request(&t, ta_claim(&t, "claim-0"), "req-0", "class-a", 3);
	ta_taint_rule(&t, "no-selector", false, NULL, NULL, NULL, "a/everything", NULL,
		      "NoExecute");
	ta_taint_rule(&t, "other-driver", true, "other.example.com", NULL, NULL, "a/x", NULL,
		      "NoSchedule");
	ta_taint_rule(&t, "other-pool", true, D, "pool-2", NULL, "a/x", NULL, "NoSchedule");
	ta_taint_rule(&t, "informational", true, NULL, NULL, NULL, "a/info", "x", "None");
	ta_taint_rule(&t, "gpu-1-bad", true, D, "pool-1", "gpu-1", "dratopo.io/drift",
		      "gpu-off-bus", "NoSchedule");
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_FALSE(t.out.allocated);
	DT_ASSERT_STR(t.out.reason, "claim default/claim-0, request req-0: 3 devices of class "
		      "class-a requested, 3 of the node's 3 devices match the selectors, 2 of those "
		      "are available: 1 with the taint dratopo.io/drift=gpu-off-bus:NoSchedule "
		      "(DeviceTaintRule gpu-1-bad) not tolerated");
	/* Two devices: the search skips the tainted one. */
	er->count = 2;
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_TRUE_FATAL(t.out.allocated);
	DT_ASSERT_STR(ta_dev(&t, 0, 0), D "/pool-1/gpu-0");
	DT_ASSERT_STR(ta_dev(&t, 0, 1), D "/pool-1/gpu-2");
	/* A toleration for the rule's taint makes the device usable again. */
	er->count = 3;
	ta_toleration(&t, er, "dratopo.io/drift", "Exists", NULL, "NoSchedule");
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_TRUE(t.out.allocated);
	ta_done(&t);

	/* An empty selector selects every device of every driver. */
	ta_init(&t);
	s = ta_slice(&t, "slice-1", D, "pool-1", 1, 1, "node-1");
	ta_device(&t, s, "gpu-0");
	ta_class(&t, "class-a", NULL);
	ta_request(&t, ta_claim(&t, "claim-0"), "req-0", "class-a", 1);
	ta_taint_rule(&t, "all", true, NULL, NULL, NULL, "a/maintenance", NULL, "NoExecute");
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_FALSE(t.out.allocated);
	CU_ASSERT_PTR_NOT_NULL(strstr(t.out.reason, "1 with the taint a/maintenance:NoExecute "
				      "(DeviceTaintRule all) not tolerated"));
	ta_done(&t);
}

static void test_taints(void)
{
	struct model_exact_request *er;
	struct model_object *s;
	struct model_device *d;
	struct ta t;

	ta_init(&t);
	s = ta_slice(&t, "slice-1", D, "pool-1", 1, 1, "node-1");
	d = ta_device(&t, s, "no-schedule");
	ta_taint(&t, d, "example.com/unhealthy", "true", "NoSchedule");
	d = ta_device(&t, s, "no-execute");
	ta_taint(&t, d, "example.com/maintenance", "soon", "NoExecute");
	d = ta_device(&t, s, "none");
	ta_taint(&t, d, "example.com/info", "x", "None");
	ta_class(&t, "class-a", NULL);
	er = ta_request(&t, ta_claim(&t, "claim-0"), "req-0", "class-a", 1);
	/* Effect None does not keep a device. */
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	DT_ASSERT_STR(ta_dev(&t, 0, 0), D "/pool-1/none");
	/* Exists with the key tolerates any value of it, Equal needs the value. */
	er->count = 2;
	ta_toleration(&t, er, "example.com/unhealthy", "Exists", NULL, NULL);
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_TRUE_FATAL(t.out.allocated);
	DT_ASSERT_STR(ta_dev(&t, 0, 0), D "/pool-1/no-schedule");
	DT_ASSERT_STR(ta_dev(&t, 0, 1), D "/pool-1/none");
	CU_ASSERT_EQUAL(t.out.claims[0].results[0].n_tolerations, 1);
	er->count = 3;
	ta_toleration(&t, er, "example.com/maintenance", "Equal", "later", NULL);
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_FALSE(t.out.allocated);
	/* The reason names the taint and how many devices it keeps. */
	DT_ASSERT_STR(t.out.reason, "claim default/claim-0, request req-0: 3 devices of class "
		      "class-a requested, 3 of the node's 3 devices match the selectors, 2 of those "
		      "are available: 1 with the taint example.com/maintenance=soon:NoExecute not "
		      "tolerated");
	er->tolerations[1].value = "soon";
	er->tolerations[1].effect = "NoSchedule";       /* wrong effect */
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_FALSE(t.out.allocated);
	er->tolerations[1].effect = "NoExecute";
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_TRUE(t.out.allocated);
	/* An empty key with Exists tolerates everything. */
	er->n_tolerations = 0;
	ta_toleration(&t, er, NULL, "Exists", NULL, NULL);
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_TRUE(t.out.allocated);
	ta_done(&t);
}

/* A shared device: memory 8Gi, allowMultipleAllocations. */
static struct model_capacity *shared_gpu(struct ta *t, struct model_object *s, const char *name)
{
	struct model_device *d = ta_device(t, s, name);
	struct model_capacity *c;

	d->has_allow_multiple_allocations = d->allow_multiple_allocations = true;
	c = ta_capacity(t, s, d, "memory", "8Gi");
	return c;
}

static const char *consumed(struct ta *t, size_t c, size_t k, char *buf)
{
	const struct alloc_device_result *r = &t->out.claims[c].results[k];

	if (!r->n_consumed)
		return "(none)";
	quantity_format(&r->consumed[0].value, buf);
	return buf;
}

static void test_capacity_range_rounding(void)
{
	struct model_exact_request *er;
	struct model_capacity *cap;
	struct model_object *s;
	char buf[QUANTITY_STR_MAX];
	struct ta t;

	ta_init(&t);
	s = ta_slice(&t, "slice-1", D, "pool-1", 1, 1, "node-1");
	cap = shared_gpu(&t, s, "gpu-0");
	cap->has_request_policy = true;
	cap->request_policy.has_default = true;
	cap->request_policy.def = ta_q("2Gi");
	cap->request_policy.has_valid_range = true;
	cap->request_policy.has_min = cap->request_policy.has_step = cap->request_policy.has_max = true;
	cap->request_policy.min = ta_q("1Gi");
	cap->request_policy.step = ta_q("2Gi");
	cap->request_policy.max = ta_q("6Gi");
	ta_class(&t, "class-a", NULL);
	er = ta_request(&t, ta_claim(&t, "claim-0"), "req-0", "class-a", 1);
	/* No request: the default. */
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_TRUE_FATAL(t.out.allocated);
	DT_ASSERT_STR(consumed(&t, 0, 0, buf), "2Gi");
	DT_ASSERT_STR(t.out.claims[0].results[0].share_id, "00000000-0000-4000-8000-000000000001");
	/* Below min: min. */
	ta_capacity_request(&t, er, "memory", "100Mi");
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	DT_ASSERT_STR(consumed(&t, 0, 0, buf), "1Gi");
	/* 1Gi + 1 step = 3Gi covers 1500Mi... */
	er->capacity_requests.items[0].value = ta_q("1500Mi");
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	DT_ASSERT_STR(consumed(&t, 0, 0, buf), "3Gi");
	/* ...an exact step stays. */
	er->capacity_requests.items[0].value = ta_q("5Gi");
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	DT_ASSERT_STR(consumed(&t, 0, 0, buf), "5Gi");
	/* Rounded above max: violates the policy. */
	er->capacity_requests.items[0].value = ta_q("5500Mi");
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_FALSE(t.out.allocated);
	/* A capacity the device does not have. */
	er->capacity_requests.items[0].name = "bandwidth";
	er->capacity_requests.items[0].value = ta_q("1");
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_FALSE(t.out.allocated);
	ta_done(&t);
}

static void test_capacity_valid_values_and_sharing(void)
{
	struct model_exact_request *er;
	struct model_capacity *cap;
	struct model_object *s;
	char buf[QUANTITY_STR_MAX];
	struct ta t;
	int placed = 0;

	ta_init(&t);
	s = ta_slice(&t, "slice-1", D, "pool-1", 1, 1, "node-1");
	cap = shared_gpu(&t, s, "gpu-0");
	cap->has_request_policy = true;
	cap->request_policy.valid_values = model_set_calloc(t.set, 3, sizeof(struct quantity));
	cap->request_policy.valid_values[0] = ta_q("1Gi");
	cap->request_policy.valid_values[1] = ta_q("2Gi");
	cap->request_policy.valid_values[2] = ta_q("4Gi");
	cap->request_policy.n_valid_values = 3;
	cap->request_policy.has_default = true;
	cap->request_policy.def = ta_q("1Gi");
	ta_class(&t, "class-a", NULL);
	er = ta_request(&t, ta_claim(&t, "claim-0"), "req-0", "class-a", 1);
	ta_capacity_request(&t, er, "memory", "1500Mi");
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_TRUE_FATAL(t.out.allocated);
	DT_ASSERT_STR(consumed(&t, 0, 0, buf), "2Gi");
	/* Above every valid value. */
	er->capacity_requests.items[0].value = ta_q("5Gi");
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_FALSE(t.out.allocated);
	CU_ASSERT_PTR_NOT_NULL(strstr(t.out.reason, "0 of those are available: 1 without the "
				      "capacity (memory: 5Gi asked, no valid value)"));
	/* Shares pack until the capacity is used up: 8Gi / 2Gi = 4. */
	er->capacity_requests.items[0].value = ta_q("2Gi");
	for (int i = 0; i < 10; i++) {
		CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
		if (!t.out.allocated)
			break;
		CU_ASSERT_EQUAL(alloc_state_commit(t.state, &t.out), 0);
		placed++;
	}
	CU_ASSERT_EQUAL(placed, 4);
	/* Full: what is left is named. */
	CU_ASSERT_PTR_NOT_NULL(strstr(t.out.reason, "1 without the capacity (memory: 2Gi asked, "
				      "0 left)"));
	ta_done(&t);
}

static void test_capacity_without_policy(void)
{
	struct model_exact_request *er;
	struct model_device *d;
	struct model_object *s;
	char buf[QUANTITY_STR_MAX];
	struct ta t;

	ta_init(&t);
	s = ta_slice(&t, "slice-1", D, "pool-1", 1, 1, "node-1");
	shared_gpu(&t, s, "gpu-0");
	d = ta_device(&t, s, "exclusive");
	ta_capacity(&t, s, d, "memory", "4Gi");
	ta_class(&t, "class-a", NULL);
	er = ta_request(&t, ta_claim(&t, "claim-0"), "req-0", "class-a", 1);
	/* No request, no policy: the whole capacity. */
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	DT_ASSERT_STR(consumed(&t, 0, 0, buf), "8Gi");
	CU_ASSERT_EQUAL(alloc_state_commit(t.state, &t.out), 0);
	/* The shared device is full; the exclusive one has no consumedCapacity. */
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	DT_ASSERT_STR(ta_dev(&t, 0, 0), D "/pool-1/exclusive");
	CU_ASSERT_EQUAL(t.out.claims[0].results[0].n_consumed, 0);
	CU_ASSERT_PTR_NULL(t.out.claims[0].results[0].share_id);
	/* A request above an exclusive device's capacity filters it out. */
	ta_capacity_request(&t, er, "memory", "5Gi");
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_FALSE(t.out.allocated);
	ta_done(&t);
}

static void test_shared_allocation_from_status(void)
{
	struct model_allocation_result res;
	struct model_quantity_entry used;
	struct model_allocation a;
	struct model_exact_request *er;
	struct model_object *s;
	struct ta t;

	ta_init(&t);
	s = ta_slice(&t, "slice-1", D, "pool-1", 1, 1, "node-1");
	shared_gpu(&t, s, "gpu-0");
	ta_class(&t, "class-a", NULL);
	er = ta_request(&t, ta_claim(&t, "claim-0"), "req-0", "class-a", 1);
	ta_capacity_request(&t, er, "memory", "3Gi");
	CU_ASSERT_EQUAL_FATAL(ta_ctx(&t, 0), 0);
	memset(&res, 0, sizeof(res));
	memset(&a, 0, sizeof(a));
	res.request = "x";
	res.driver = D;
	res.pool = "pool-1";
	res.device = "gpu-0";
	res.share_id = "11111111-1111-4111-8111-111111111111";
	used.name = "memory";
	used.value = ta_q("6Gi");
	res.consumed_capacity.items = &used;
	res.consumed_capacity.n_items = 1;
	a.results = &res;
	a.n_results = 1;
	CU_ASSERT_EQUAL(alloc_state_add_allocation(t.state, &a, NULL), 0);
	/* 6Gi of 8Gi used: 3Gi does not fit, 2Gi does. */
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_FALSE(t.out.allocated);
	er->capacity_requests.items[0].value = ta_q("2Gi");
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_TRUE(t.out.allocated);
	ta_done(&t);
}

/* A persisted result without shareID on a device that allows multiple
 * allocations holds it as a dedicated device (the scheduler's
 * AllocatedDevices): no other claim gets it, shared or not; admin access
 * still does, and a result with a shareID leaves room for more shares. */
static void test_shared_device_held_dedicated(void)
{
	struct model_allocation_result res;
	struct model_allocation a;
	struct model_exact_request *er, *admin;
	struct model_object *s, *c;
	struct ta t;

	ta_init(&t);
	s = ta_slice(&t, "slice-1", D, "pool-1", 1, 1, "node-1");
	shared_gpu(&t, s, "gpu-0");
	shared_gpu(&t, s, "gpu-1");
	ta_class(&t, "class-a", NULL);
	er = ta_request(&t, ta_claim(&t, "claim-0"), "req-0", "class-a", 1);
	c = ta_claim(&t, "admin");
	admin = ta_request(&t, c, "req-0", "class-a", 1);
	admin->has_admin_access = admin->admin_access = true;
	CU_ASSERT_EQUAL_FATAL(ta_ctx(&t, 0), 0);
	memset(&res, 0, sizeof(res));
	memset(&a, 0, sizeof(a));
	res.request = "x";
	res.driver = D;
	res.pool = "pool-1";
	res.device = "gpu-0";
	a.results = &res;
	a.n_results = 1;
	CU_ASSERT_EQUAL(alloc_state_add_allocation(t.state, &a, NULL), 0);
	/* gpu-0 is held whole: the share goes to gpu-1. */
	CU_ASSERT_EQUAL_FATAL(ta_try_range(&t, 0, 1), 0);
	CU_ASSERT_TRUE_FATAL(t.out.allocated);
	DT_ASSERT_STR(ta_dev(&t, 0, 0), D "/pool-1/gpu-1");
	CU_ASSERT_PTR_NOT_NULL(t.out.claims[0].results[0].share_id);
	/* Both held whole: nothing left, and the reason says in use. */
	res.device = "gpu-1";
	CU_ASSERT_EQUAL(alloc_state_add_allocation(t.state, &a, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(ta_try_range(&t, 0, 1), 0);
	CU_ASSERT_FALSE(t.out.allocated);
	CU_ASSERT_PTR_NOT_NULL(strstr(t.out.reason, "2 in use"));
	/* A second request for two devices fails the same way. */
	er->count = 2;
	CU_ASSERT_EQUAL_FATAL(ta_try_range(&t, 0, 1), 0);
	CU_ASSERT_FALSE(t.out.allocated);
	er->count = 1;
	/* Admin access is not kept out by allocations. */
	CU_ASSERT_EQUAL_FATAL(ta_try_range(&t, 1, 1), 0);
	CU_ASSERT_TRUE(t.out.allocated);
	/* Copies of the state keep the hold. */
	{
		struct alloc_state *cp = alloc_state_clone(t.state);

		CU_ASSERT_PTR_NOT_NULL_FATAL(cp);
		alloc_state_free(t.state);
		t.state = cp;
	}
	CU_ASSERT_EQUAL_FATAL(ta_try_range(&t, 0, 1), 0);
	CU_ASSERT_FALSE(t.out.allocated);
	ta_done(&t);
}

/* A counter set "mem" of 8Gi, devices consuming 4Gi, 4Gi and 8Gi. */
static void test_counters(void)
{
	static const char *const names[] = { "part-0", "part-1", "whole" };
	static const char *const amounts[] = { "4Gi", "4Gi", "8Gi" };
	struct model_counter_set *cs;
	struct model_object *s, *c;
	struct ta t;

	ta_init(&t);
	s = ta_slice(&t, "slice-1", D, "pool-1", 1, 1, "node-1");
	cs = model_set_calloc(t.set, 1, sizeof(*cs));
	cs->name = "gpu-0-counters";
	cs->counters = model_set_calloc(t.set, 1, sizeof(*cs->counters));
	cs->counters[0].name = "memory";
	cs->counters[0].value = ta_q("8Gi");
	cs->n_counters = 1;
	s->u.slice.shared_counters = cs;
	s->u.slice.n_shared_counters = 1;
	for (int i = 0; i < 3; i++) {
		struct model_device *d = ta_device(&t, s, names[i]);
		struct model_counter_set *use = model_set_calloc(t.set, 1, sizeof(*use));

		use->name = "gpu-0-counters";
		use->counters = model_set_calloc(t.set, 1, sizeof(*use->counters));
		use->counters[0].name = "memory";
		use->counters[0].value = ta_q(amounts[i]);
		use->n_counters = 1;
		d->consumes_counters = use;
		d->n_consumes_counters = 1;
	}
	ta_class(&t, "class-a", NULL);
	c = ta_claim(&t, "claim-0");
	ta_request(&t, c, "req-0", "class-a", 2);
	/* Both halves fit (8Gi); the whole one then does not. */
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_TRUE_FATAL(t.out.allocated);
	DT_ASSERT_STR(ta_dev(&t, 0, 0), D "/pool-1/part-0");
	DT_ASSERT_STR(ta_dev(&t, 0, 1), D "/pool-1/part-1");
	c->u.claim.spec.requests[0].exactly->count = 3;
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_FALSE(t.out.allocated);
	/* One half allocated: the whole one cannot be, the other half can. */
	c->u.claim.spec.requests[0].exactly->count = 1;
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_EQUAL(alloc_state_commit(t.state, &t.out), 0);
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	DT_ASSERT_STR(ta_dev(&t, 0, 0), D "/pool-1/part-1");
	CU_ASSERT_EQUAL(alloc_state_commit(t.state, &t.out), 0);
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_FALSE(t.out.allocated);
	ta_done(&t);
}

/* Counters reserved for a device that a later check (a taint) rejects
 * must be released: the scheduler's bug #140436 would leak them. */
static void test_counters_released_on_reject(void)
{
	struct model_counter_set *cs;
	struct model_object *s;
	struct model_device *d;
	struct ta t;

	ta_init(&t);
	s = ta_slice(&t, "slice-1", D, "pool-1", 1, 1, "node-1");
	cs = model_set_calloc(t.set, 1, sizeof(*cs));
	cs->name = "set";
	cs->counters = model_set_calloc(t.set, 1, sizeof(*cs->counters));
	cs->counters[0].name = "c";
	cs->counters[0].value = ta_q("1");
	cs->n_counters = 1;
	s->u.slice.shared_counters = cs;
	s->u.slice.n_shared_counters = 1;
	for (int i = 0; i < 2; i++) {
		struct model_counter_set *use = model_set_calloc(t.set, 1, sizeof(*use));

		d = ta_device(&t, s, i ? "clean" : "tainted");
		if (!i)
			ta_taint(&t, d, "bad", "yes", "NoSchedule");
		use->name = "set";
		use->counters = model_set_calloc(t.set, 1, sizeof(*use->counters));
		use->counters[0].name = "c";
		use->counters[0].value = ta_q("1");
		use->n_counters = 1;
		d->consumes_counters = use;
		d->n_consumes_counters = 1;
	}
	ta_class(&t, "class-a", NULL);
	ta_request(&t, ta_claim(&t, "claim-0"), "req-0", "class-a", 1);
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_TRUE_FATAL(t.out.allocated);
	DT_ASSERT_STR(ta_dev(&t, 0, 0), D "/pool-1/clean");
	ta_done(&t);
}

/* A counter set of 1 unit; every device draws the one unit. */
static struct model_object *one_unit_pool(struct ta *t, int n, bool shared)
{
	struct model_object *s = ta_slice(t, "slice-1", D, "pool-1", 1, 1, "node-1");
	struct model_counter_set *cs = model_set_calloc(t->set, 1, sizeof(*cs));

	cs->name = "set";
	cs->counters = model_set_calloc(t->set, 1, sizeof(*cs->counters));
	cs->counters[0].name = "c";
	cs->counters[0].value = ta_q("1");
	cs->n_counters = 1;
	s->u.slice.shared_counters = cs;
	s->u.slice.n_shared_counters = 1;
	for (int i = 0; i < n; i++) {
		struct model_counter_set *use = model_set_calloc(t->set, 1, sizeof(*use));
		struct model_device *d;
		char name[16];

		snprintf(name, sizeof(name), "device-%d", i);
		d = ta_device(t, s, name);
		if (shared) {
			d->has_allow_multiple_allocations = d->allow_multiple_allocations = true;
			ta_capacity(t, s, d, "memory", "8Gi");
		}
		use->name = "set";
		use->counters = model_set_calloc(t->set, 1, sizeof(*use->counters));
		use->counters[0].name = "c";
		use->counters[0].value = ta_q("1");
		use->n_counters = 1;
		d->consumes_counters = use;
		d->n_consumes_counters = 1;
	}
	return s;
}

/* A shared device draws its counters once, however many shares it serves
 * (the scheduler's bug #134100 refused the second share). */
static void test_shared_device_counters_once(void)
{
	struct model_exact_request *er;
	struct ta t;
	int placed = 0;

	ta_init(&t);
	one_unit_pool(&t, 2, true);
	ta_class(&t, "class-a", NULL);
	er = ta_request(&t, ta_claim(&t, "claim-0"), "req-0", "class-a", 1);
	ta_capacity_request(&t, er, "memory", "2Gi");
	for (int i = 0; i < 8; i++) {
		CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
		if (!t.out.allocated)
			break;
		/* The counter allows one device: every share lands on device-0. */
		DT_ASSERT_STR(ta_dev(&t, 0, 0), D "/pool-1/device-0");
		CU_ASSERT_EQUAL(alloc_state_commit(t.state, &t.out), 0);
		placed++;
	}
	CU_ASSERT_EQUAL(placed, 4);     /* 8Gi / 2Gi */
	ta_done(&t);
}

/* Admin access consumes no counters (#140729 would). */
static void test_admin_access_uses_no_counters(void)
{
	struct model_exact_request *er;
	struct ta t;

	ta_init(&t);
	one_unit_pool(&t, 2, false);
	ta_class(&t, "class-a", NULL);
	er = ta_request(&t, ta_claim(&t, "admin"), "req-0", "class-a", 2);
	er->has_admin_access = er->admin_access = true;
	ta_request(&t, ta_claim(&t, "user"), "req-0", "class-a", 1);
	/* Both devices for admin access though the counter allows one. */
	CU_ASSERT_EQUAL_FATAL(ta_try_range(&t, 0, 1), 0);
	CU_ASSERT_TRUE_FATAL(t.out.allocated);
	CU_ASSERT_EQUAL(t.out.claims[0].n_results, 2);
	/* And together with a normal claim in the same pod. */
	er->count = 1;
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_TRUE_FATAL(t.out.allocated);
	DT_ASSERT_STR(ta_dev(&t, 1, 0), D "/pool-1/device-0");
	ta_done(&t);
}

static void test_per_device_node_selection(void)
{
	struct model_object *s;
	struct model_device *d;
	struct ta t;

	ta_init(&t);
	s = ta_slice(&t, "slice-1", D, "pool-1", 1, 1, NULL);
	s->u.slice.has_all_nodes = s->u.slice.all_nodes = false;
	s->u.slice.has_per_device_node_selection = s->u.slice.per_device_node_selection = true;
	d = ta_device(&t, s, "elsewhere");
	d->node_name = "node-2";
	d = ta_device(&t, s, "here");
	d->node_name = "node-1";
	d = ta_device(&t, s, "anywhere");
	d->has_all_nodes = d->all_nodes = true;
	ta_class(&t, "class-a", NULL);
	ta_request(&t, ta_claim(&t, "claim-0"), "req-0", "class-a", 1);
	ta_request(&t, ta_claim(&t, "claim-1"), "req-0", "class-a", 1);
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_TRUE_FATAL(t.out.allocated);
	DT_ASSERT_STR(ta_dev(&t, 0, 0), D "/pool-1/here");
	CU_ASSERT_PTR_NOT_NULL(t.out.claims[0].node_selector);
	DT_ASSERT_STR(ta_dev(&t, 1, 0), D "/pool-1/anywhere");
	CU_ASSERT_PTR_NULL(t.out.claims[1].node_selector);
	ta_done(&t);
}

/* Pools with binding conditions are tried after the others. */
static void test_binding_condition_pools_last(void)
{
	struct model_object *s;
	struct model_device *d;
	struct ta t;

	ta_init(&t);
	s = ta_slice(&t, "slice-1", D, "pool-a", 1, 1, "node-1");
	d = ta_device(&t, s, "needs-prep");
	d->binding_conditions = model_set_calloc(t.set, 1, sizeof(char *));
	d->binding_conditions[0] = "IsPrepared";
	d->n_binding_conditions = 1;
	s = ta_slice(&t, "slice-2", D, "pool-b", 1, 1, "node-1");
	ta_device(&t, s, "ready");
	ta_class(&t, "class-a", NULL);
	ta_request(&t, ta_claim(&t, "claim-0"), "req-0", "class-a", 2);
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_TRUE_FATAL(t.out.allocated);
	DT_ASSERT_STR(ta_dev(&t, 0, 0), D "/pool-b/ready");
	DT_ASSERT_STR(ta_dev(&t, 0, 1), D "/pool-a/needs-prep");
	CU_ASSERT_EQUAL(t.out.claims[0].results[1].n_binding_conditions, 1);
	ta_done(&t);
}

/* A pool spanning two nodes shares one counter set: a device of node-2
 * that is allocated uses counters node-1's devices need. */
static void test_counters_across_nodes_of_a_pool(void)
{
	struct model_allocation_result res;
	struct model_allocation a;
	struct model_counter_set *cs;
	struct model_object *s;
	struct ta t;

	ta_init(&t);
	s = ta_slice(&t, "counters", D, "pool-1", 1, 3, NULL);
	cs = model_set_calloc(t.set, 1, sizeof(*cs));
	cs->name = "set";
	cs->counters = model_set_calloc(t.set, 1, sizeof(*cs->counters));
	cs->counters[0].name = "c";
	cs->counters[0].value = ta_q("1");
	cs->n_counters = 1;
	s->u.slice.shared_counters = cs;
	s->u.slice.n_shared_counters = 1;
	for (int n = 1; n <= 2; n++) {
		struct model_counter_set *use = model_set_calloc(t.set, 1, sizeof(*use));
		struct model_device *d;
		char node[16], name[16];

		snprintf(node, sizeof(node), "node-%d", n);
		snprintf(name, sizeof(name), "dev-%d", n);
		s = ta_slice(&t, name, D, "pool-1", 1, 3, node);
		d = ta_device(&t, s, name);
		use->name = "set";
		use->counters = model_set_calloc(t.set, 1, sizeof(*use->counters));
		use->counters[0].name = "c";
		use->counters[0].value = ta_q("1");
		use->n_counters = 1;
		d->consumes_counters = use;
		d->n_consumes_counters = 1;
	}
	ta_class(&t, "class-a", NULL);
	ta_request(&t, ta_claim(&t, "claim-0"), "req-0", "class-a", 1);
	CU_ASSERT_EQUAL_FATAL(ta_ctx(&t, 0), 0);
	/* Only dev-1 targets node-1; the pool (3 slices) is complete. */
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_TRUE_FATAL(t.out.allocated);
	DT_ASSERT_STR(ta_dev(&t, 0, 0), D "/pool-1/dev-1");
	/* dev-2 (node-2's) allocated: the one counter is gone. */
	memset(&res, 0, sizeof(res));
	memset(&a, 0, sizeof(a));
	res.driver = D;
	res.pool = "pool-1";
	res.device = "dev-2";
	a.results = &res;
	a.n_results = 1;
	CU_ASSERT_EQUAL(alloc_state_add_allocation(t.state, &a, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_FALSE(t.out.allocated);
	ta_done(&t);
}

static void test_dangling_counter_makes_pool_invalid(void)
{
	struct model_counter_set *use;
	struct model_object *s;
	struct model_device *d;
	struct ta t;

	ta_init(&t);
	s = ta_slice(&t, "slice-1", D, "pool-1", 1, 1, "node-1");
	d = ta_device(&t, s, "device-0");
	use = model_set_calloc(t.set, 1, sizeof(*use));
	use->name = "nowhere";
	use->counters = model_set_calloc(t.set, 1, sizeof(*use->counters));
	use->counters[0].name = "c";
	use->counters[0].value = ta_q("1");
	use->n_counters = 1;
	d->consumes_counters = use;
	d->n_consumes_counters = 1;
	ta_class(&t, "class-a", NULL);
	ta_request(&t, ta_claim(&t, "claim-0"), "req-0", "class-a", 1);
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_FALSE(t.out.allocated);
	CU_ASSERT_PTR_NOT_NULL(strstr(t.out.reason, "invalid resource pools"));
	/* All mode refuses an invalid pool outright. */
	t.claims[0]->u.claim.spec.requests[0].exactly->allocation_mode = MODEL_ALLOC_ALL;
	CU_ASSERT_EQUAL(ta_try(&t), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(t.err.msg, "is invalid"));
	ta_done(&t);
}

static void test_errors(void)
{
	struct model_exact_request *er;
	struct model_object *c;
	struct ta t;

	ta_init(&t);
	pool_of(&t, 1);
	ta_class(&t, "class-a", NULL);
	er = ta_request(&t, ta_claim(&t, "claim-0"), "req-0", "no-such-class", 1);
	CU_ASSERT_EQUAL(ta_try(&t), -ENOENT);
	DT_ASSERT_STR(t.err.msg, "claim default/claim-0, request req-0: could not retrieve "
		      "device class no-such-class: not found");
	er->device_class_name = "";
	CU_ASSERT_EQUAL(ta_try(&t), -EINVAL);
	DT_ASSERT_STR(t.err.msg, "claim default/claim-0, request req-0: missing device class "
		      "name (unsupported request type?)");
	er->device_class_name = "class-a";
	er->allocation_mode = MODEL_ALLOC_INVALID;
	er->allocation_mode_text = "Some";
	CU_ASSERT_EQUAL(ta_try(&t), -EINVAL);
	DT_ASSERT_STR(t.err.msg, "claim default/claim-0, request req-0: unsupported count "
		      "mode Some");
	er->allocation_mode = MODEL_ALLOC_EXACT_COUNT;
	ta_selector(&t, er, "true");
	er->selectors[0].expression = NULL;
	CU_ASSERT_EQUAL(ta_try(&t), -EINVAL);
	DT_ASSERT_STR(t.err.msg, "claim default/claim-0, request req-0: selector #0: CEL "
		      "expression empty (unsupported selector type?)");
	er->n_selectors = 0;
	c = (struct model_object *)t.claims[0];
	c->u.claim.spec.constraints[0].match_attribute = NULL;
	c->u.claim.spec.n_constraints = 1;
	CU_ASSERT_EQUAL(ta_try(&t), -EINVAL);
	DT_ASSERT_STR(t.err.msg, "claim default/claim-0: constraint #0: empty constraint "
		      "(unsupported constraint type?)");
	c->u.claim.spec.constraints[0].match_attribute = "numa";
	CU_ASSERT_EQUAL(ta_try(&t), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(t.err.msg, "must be a fully qualified name"));
	ta_done(&t);
}

static void test_reason_names_the_request(void)
{
	struct ta t;

	ta_init(&t);
	pool_of(&t, 3);
	ta_class(&t, "class-a", NULL);
	ta_request(&t, ta_claim(&t, "claim-0"), "gpus", "class-a", 4);
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_FALSE(t.out.allocated);
	DT_ASSERT_STR(t.out.reason, "claim default/claim-0, request gpus: 4 devices of class "
		      "class-a requested, 3 of the node's 3 devices match the selectors, 3 of "
		      "those are available");
	ta_done(&t);
}

/* hwdb's hypothetical nodes: driverVersion is unknown but the same on
 * every GPU of the node. */
static void test_node_uniform_attributes(void)
{
	struct model_object *s, *c;
	struct model_kv *ann;
	struct ta t;

	ta_init(&t);
	s = pool_of(&t, 3);
	ann = model_set_calloc(t.set, 1, sizeof(*ann));
	ann->key = ALLOC_ANNOTATION_NODE_UNIFORM;
	ann->value = "driverVersion, cudaDriverVersion";
	s->meta.annotations = ann;
	s->meta.n_annotations = 1;
	ta_class(&t, "class-a", NULL);
	c = ta_claim(&t, "claim-0");
	ta_request(&t, c, "req-0", "class-a", 3);
	ta_constraint(&t, c, D "/driverVersion", false, NULL);
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_TRUE(t.out.allocated);
	/* One device is fine too (Karpenter would need two). */
	c->u.claim.spec.requests[0].exactly->count = 1;
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_TRUE(t.out.allocated);
	/* Distinct on it: two devices of one node can never differ. */
	c->u.claim.spec.requests[0].exactly->count = 2;
	c->u.claim.spec.constraints[0].match_attribute = NULL;
	c->u.claim.spec.constraints[0].distinct_attribute = D "/cudaDriverVersion";
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_FALSE(t.out.allocated);
	/* An attribute not declared uniform is simply missing. */
	c->u.claim.spec.constraints[0].distinct_attribute = NULL;
	c->u.claim.spec.constraints[0].match_attribute = D "/other";
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_FALSE(t.out.allocated);
	ta_done(&t);

	/* The same declared through struct alloc_node. */
	{
		struct alloc_uniform_attr u = { D, D "/driverVersion" };

		ta_init(&t);
		pool_of(&t, 2);
		t.node.uniform_attrs = &u;
		t.node.n_uniform_attrs = 1;
		ta_class(&t, "class-a", NULL);
		c = ta_claim(&t, "claim-0");
		ta_request(&t, c, "req-0", "class-a", 2);
		ta_constraint(&t, c, D "/driverVersion", false, NULL);
		CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
		CU_ASSERT_TRUE(t.out.allocated);
		ta_done(&t);
	}
}

static void test_config(void)
{
	struct model_device_config *cc;
	struct model_object *cls, *c;
	struct ta t;

	ta_init(&t);
	pool_of(&t, 3);
	cls = ta_class(&t, "class-a", NULL);
	cls->u.device_class.config = model_set_calloc(t.set, 1, sizeof(struct model_device_config));
	cls->u.device_class.config[0].has_opaque = true;
	cls->u.device_class.config[0].driver = D;
	cls->u.device_class.n_config = 1;
	ta_class(&t, "class-b", NULL);
	c = ta_claim(&t, "claim-0");
	ta_request(&t, c, "req-0", "class-a", 1);
	ta_subrequest(&t, c, "req-1", "x", "class-b", 5);
	ta_subrequest(&t, c, "req-1", "y", "class-b", 1);
	cc = model_set_calloc(t.set, 2, sizeof(*cc));
	cc[0].requests = model_set_calloc(t.set, 1, sizeof(char *));
	cc[0].requests[0] = "req-1/x";      /* not chosen */
	cc[0].n_requests = 1;
	cc[1].requests = model_set_calloc(t.set, 1, sizeof(char *));
	cc[1].requests[0] = "req-1";
	cc[1].n_requests = 1;
	c->u.claim.spec.config = cc;
	c->u.claim.spec.n_config = 2;
	CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
	CU_ASSERT_TRUE_FATAL(t.out.allocated);
	CU_ASSERT_EQUAL_FATAL(t.out.claims[0].n_config, 2);
	DT_ASSERT_STR(t.out.claims[0].config[0].source, "FromClass");
	CU_ASSERT_EQUAL(t.out.claims[0].config[0].n_requests, 1);
	DT_ASSERT_STR(t.out.claims[0].config[0].requests[0], "req-0");
	DT_ASSERT_STR(t.out.claims[0].config[1].source, "FromClaim");
	DT_ASSERT_STR(t.out.claims[0].config[1].requests[0], "req-1");
	ta_done(&t);
}

/* ---- the search against brute force on small random nodes ---- */

struct bf {
	int n_dev, numa[8], root[8];
	bool used[8];
	int n_req, count[3];
	bool match, distinct;
};

static uint32_t lcg(uint32_t *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 16;
}

/* Does some choice of distinct free devices satisfy the claim? slot walks
 * every request's slots; chosen[] holds the devices so far. */
static bool bf_solve(const struct bf *b, int slot, int *chosen, int total)
{
	if (slot == total) {
		for (int i = 1; i < total; i++)
			if (b->match && b->numa[chosen[i]] != b->numa[chosen[0]])
				return false;
		for (int i = 0; i < total; i++)
			for (int j = i + 1; j < total; j++)
				if (b->distinct && b->root[chosen[i]] == b->root[chosen[j]])
					return false;
		return true;
	}
	for (int d = 0; d < b->n_dev; d++) {
		bool taken = b->used[d];

		for (int i = 0; i < slot && !taken; i++)
			taken = chosen[i] == d;
		if (taken)
			continue;
		chosen[slot] = d;
		if (bf_solve(b, slot + 1, chosen, total))
			return true;
	}
	return false;
}

static void test_matches_brute_force(void)
{
	uint32_t seed = 12345;
	int agree = 0, solvable = 0;

	for (int iter = 0; iter < 300; iter++) {
		struct model_allocation_result res[8];
		struct model_allocation a;
		struct model_object *s, *c;
		struct bf b;
		struct ta t;
		int chosen[8], total = 0, n_used = 0;
		bool want;

		memset(&b, 0, sizeof(b));
		b.n_dev = 2 + (int)(lcg(&seed) % 5);
		b.n_req = 1 + (int)(lcg(&seed) % 3);
		b.match = lcg(&seed) % 2;
		b.distinct = lcg(&seed) % 2;
		ta_init(&t);
		s = ta_slice(&t, "slice-1", D, "pool-1", 1, 1, "node-1");
		memset(&a, 0, sizeof(a));
		for (int d = 0; d < b.n_dev; d++) {
			struct model_device *md;
			char name[16];

			snprintf(name, sizeof(name), "device-%d", d);
			md = ta_device(&t, s, name);
			b.numa[d] = (int)(lcg(&seed) % 3);
			b.root[d] = (int)(lcg(&seed) % 3);
			ta_attr_int(&t, s, md, "numa", b.numa[d]);
			ta_attr_int(&t, s, md, "root", b.root[d]);
			b.used[d] = lcg(&seed) % 4 == 0;
			if (b.used[d]) {
				memset(&res[n_used], 0, sizeof(res[n_used]));
				res[n_used].driver = D;
				res[n_used].pool = "pool-1";
				res[n_used].device = md->name;
				n_used++;
			}
		}
		ta_class(&t, "class-a", NULL);
		c = ta_claim(&t, "claim-0");
		for (int r = 0; r < b.n_req; r++) {
			char name[16];

			snprintf(name, sizeof(name), "req-%d", r);
			b.count[r] = 1 + (int)(lcg(&seed) % 2);
			total += b.count[r];
			ta_request(&t, c, name, "class-a", b.count[r]);
		}
		if (b.match)
			ta_constraint(&t, c, D "/numa", false, NULL);
		if (b.distinct)
			ta_constraint(&t, c, D "/root", true, NULL);
		CU_ASSERT_EQUAL_FATAL(ta_ctx(&t, 0), 0);
		a.results = res;
		a.n_results = (size_t)n_used;
		CU_ASSERT_EQUAL(alloc_state_add_allocation(t.state, &a, NULL), 0);
		want = total <= b.n_dev && bf_solve(&b, 0, chosen, total);
		CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
		CU_ASSERT_EQUAL(t.out.allocated, want);
		agree += t.out.allocated == want;
		solvable += want;
		if (t.out.allocated) {
			/* The answer itself satisfies everything. */
			const struct alloc_claim_result *cr = &t.out.claims[0];

			CU_ASSERT_EQUAL(cr->n_results, (size_t)total);
			for (size_t i = 0; i < cr->n_results; i++) {
				int di = atoi(cr->results[i].device + strlen("device-"));

				CU_ASSERT_FALSE(b.used[di]);
				chosen[i] = di;
				for (size_t j = 0; j < i; j++)
					CU_ASSERT_NOT_EQUAL(chosen[j], di);
			}
			for (int i = 1; i < total; i++)
				if (b.match)
					CU_ASSERT_EQUAL(b.numa[chosen[i]], b.numa[chosen[0]]);
			for (int i = 0; i < total; i++)
				for (int j = i + 1; j < total; j++)
					if (b.distinct)
						CU_ASSERT_NOT_EQUAL(b.root[chosen[i]], b.root[chosen[j]]);
		}
		ta_done(&t);
	}
	CU_ASSERT_EQUAL(agree, 300);
	/* The generator makes both kinds of cases. */
	CU_ASSERT(solvable > 30 && solvable < 270);
}

/* Two claims, firstAvailable, per-claim matchAttribute: allocatable iff
 * some choice of subrequests and distinct free devices works. */
struct bf2 {
	int n_dev, numa[8];
	bool used[8];
	int n_slots, slot_claim[16];
	bool match[2];
};

static bool bf2_solve(const struct bf2 *b, int slot, int *chosen)
{
	if (slot == b->n_slots) {
		for (int i = 0; i < b->n_slots; i++)
			for (int j = 0; j < i; j++)
				if (b->slot_claim[i] == b->slot_claim[j] && b->match[b->slot_claim[i]] &&
				    b->numa[chosen[i]] != b->numa[chosen[j]])
					return false;
		return true;
	}
	for (int d = 0; d < b->n_dev; d++) {
		bool taken = b->used[d];

		for (int i = 0; i < slot && !taken; i++)
			taken = chosen[i] == d;
		if (taken)
			continue;
		chosen[slot] = d;
		if (bf2_solve(b, slot + 1, chosen))
			return true;
	}
	return false;
}

static void test_first_available_matches_brute_force(void)
{
	uint32_t seed = 777;
	int agree = 0, solvable = 0, iters = 200;

	for (int iter = 0; iter < iters; iter++) {
		int numa[8], n_dev = 3 + (int)(lcg(&seed) % 4);
		int fa_counts[2][2], fixed[2];
		bool has_fa[2], match[2], want = false, feasible[4] = { false };
		struct model_object *s;
		struct ta t;

		ta_init(&t);
		s = ta_slice(&t, "slice-1", D, "pool-1", 1, 1, "node-1");
		for (int d = 0; d < n_dev; d++) {
			char name[16];

			snprintf(name, sizeof(name), "device-%d", d);
			numa[d] = (int)(lcg(&seed) % 2);
			ta_attr_int(&t, s, ta_device(&t, s, name), "numa", numa[d]);
		}
		ta_class(&t, "class-a", NULL);
		for (int c = 0; c < 2; c++) {
			char name[16];
			struct model_object *cl;

			snprintf(name, sizeof(name), "claim-%d", c);
			cl = ta_claim(&t, name);
			fixed[c] = 1 + (int)(lcg(&seed) % 2);
			ta_request(&t, cl, "fixed", "class-a", fixed[c]);
			has_fa[c] = lcg(&seed) % 2;
			if (has_fa[c]) {
				fa_counts[c][0] = 1 + (int)(lcg(&seed) % 3);
				fa_counts[c][1] = 1 + (int)(lcg(&seed) % 2);
				ta_subrequest(&t, cl, "alt", "a", "class-a", fa_counts[c][0]);
				ta_subrequest(&t, cl, "alt", "b", "class-a", fa_counts[c][1]);
			}
			match[c] = lcg(&seed) % 2;
			if (match[c])
				ta_constraint(&t, cl, D "/numa", false, NULL);
		}
		/* Every combination of subrequest choices. */
		for (int choice = 0; choice < 4; choice++) {
			struct bf2 b;
			int chosen[16];

			memset(&b, 0, sizeof(b));
			b.n_dev = n_dev;
			memcpy(b.numa, numa, sizeof(numa));
			for (int c = 0; c < 2; c++) {
				int n = fixed[c] + (has_fa[c] ? fa_counts[c][(choice >> c) & 1] : 0);

				b.match[c] = match[c];
				for (int k = 0; k < n; k++)
					b.slot_claim[b.n_slots++] = c;
			}
			feasible[choice] = b.n_slots <= n_dev && bf2_solve(&b, 0, chosen);
			want |= feasible[choice];
		}
		CU_ASSERT_EQUAL_FATAL(ta_try(&t), 0);
		CU_ASSERT_EQUAL(t.out.allocated, want);
		agree += t.out.allocated == want;
		solvable += want;
		if (t.out.allocated && has_fa[0]) {
			/* claim-0's first subrequest wins whenever some choice for
			 * claim-1 lets it (choices with bit 0 clear). */
			const char *r = t.out.claims[0].results[t.out.claims[0].n_results - 1].request;

			DT_ASSERT_STR(r, feasible[0] || feasible[2] ? "alt/a" : "alt/b");
		}
		ta_done(&t);
	}
	CU_ASSERT_EQUAL(agree, iters);
	CU_ASSERT(solvable > 20 && solvable < iters - 20);
}

DT_SUITE_MAIN("alloc",
	DT_TEST(test_basic_first_device),
	DT_TEST(test_claims_share_nothing),
	DT_TEST(test_state_in_use_commit_rollback),
	DT_TEST(test_combinations_not_permutations),
	DT_TEST(test_too_few_free_devices_is_immediate),
	DT_TEST(test_backtracking),
	DT_TEST(test_step_budget),
	DT_TEST(test_result_limit),
	DT_TEST(test_all_mode),
	DT_TEST(test_generations_and_incomplete_pools),
	DT_TEST(test_invalid_pool),
	DT_TEST(test_pool_order),
	DT_TEST(test_node_selection),
	DT_TEST(test_first_available),
	DT_TEST(test_admin_access),
	DT_TEST(test_match_attribute),
	DT_TEST(test_match_attribute_sets),
	DT_TEST(test_distinct_attribute_sets),
	DT_TEST(test_constraint_scope),
	DT_TEST(test_distinct_attribute),
	DT_TEST(test_taints),
	DT_TEST(test_taint_rules),
	DT_TEST(test_capacity_range_rounding),
	DT_TEST(test_capacity_valid_values_and_sharing),
	DT_TEST(test_capacity_without_policy),
	DT_TEST(test_shared_allocation_from_status),
	DT_TEST(test_shared_device_held_dedicated),
	DT_TEST(test_counters),
	DT_TEST(test_counters_released_on_reject),
	DT_TEST(test_shared_device_counters_once),
	DT_TEST(test_admin_access_uses_no_counters),
	DT_TEST(test_per_device_node_selection),
	DT_TEST(test_binding_condition_pools_last),
	DT_TEST(test_counters_across_nodes_of_a_pool),
	DT_TEST(test_dangling_counter_makes_pool_invalid),
	DT_TEST(test_errors),
	DT_TEST(test_reason_names_the_request),
	DT_TEST(test_node_uniform_attributes),
	DT_TEST(test_config),
	DT_TEST(test_matches_brute_force),
	DT_TEST(test_first_available_matches_brute_force))
