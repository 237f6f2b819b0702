/* test_plan_diff.c - the planner's price against the exhaustive optimum on
 * small random problems (tests/fuzz/gen_plan.c: synthetic instance types
 * as an --hwdb-extra file, one NodePool allowing them, 1-5 pods with CPU,
 * memory and GPU claims): the plan's total price equals the cheapest
 * partition of the pods into nodes, the unschedulable pods are exactly
 * those no type holds, and every plan (also with an existing node) keeps
 * the invariants: every pod placed once, every placed pod's claim
 * allocated on its node, no device given twice, each node's pods fit its
 * type, the total the sum of the node claims. Seeds are fixed; a failure
 * prints the seed, the plan, the extra file and the manifests. */
#include <stdio.h>

#include "dt_test.h"
#include "gen_plan.h"

#define CASES 3000

static void test_against_exhaustive_optimum(void)
{
	struct gen_plan_stats st = { 0 };
	size_t failed = 0;

	for (uint64_t seed = 1; seed <= CASES; seed++) {
		struct strbuf why = STRBUF_INIT;
		struct gen_src src;
		struct gen_plan g;

		gen_src_seed(&src, seed);
		CU_ASSERT_EQUAL_FATAL(gen_plan_make(&src, &g, true), 0);
		if (gen_plan_check(&g, &st, &why) == GEN_FAIL && failed++ < 3)
			fprintf(stderr, "\n  seed %llu: %s\n", (unsigned long long)seed, sb_str(&why));
		gen_plan_free(&g);
		sb_free(&why);
	}
	fprintf(stderr, "\n  %d plans: %zu checked, %zu priced against the optimum, %zu proven "
		"optimal by the planner, %zu unschedulable pods, %zu on the existing node, "
		"%zu failed\n", CASES, st.checked, st.priced, st.proven, st.unschedulable,
		st.on_existing, failed);
	CU_ASSERT_EQUAL(failed, 0);
	CU_ASSERT_TRUE(st.priced > CASES / 2);
	CU_ASSERT_TRUE(st.unschedulable > 0);
	CU_ASSERT_TRUE(st.on_existing > CASES / 20);
}

DT_SUITE_MAIN("plan_diff", DT_TEST(test_against_exhaustive_optimum))
