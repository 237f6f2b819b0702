/* test_alloc_diff.c - the structured allocator against a brute-force
 * search on thousands of small random problems (tests/fuzz/gen_alloc.c):
 * the same answer (allocatable or not) on every one, and every result
 * valid when replayed through the rules (selectors, classes, taints,
 * exclusivity, capacity, counters, constraints, counts), also for a second
 * pod on top of the committed first. Seeds are fixed: a failure prints
 * its seed and the manifests, which `dratopo allocate -f - --node node-1`
 * reads as they are. */
#include <stdio.h>

#include "dt_test.h"
#include "gen_alloc.h"

#define CASES 10000

static void test_against_brute_force(void)
{
	struct gen_alloc_stats st = { 0 };
	size_t failed = 0;

	for (uint64_t seed = 1; seed <= CASES; seed++) {
		struct strbuf why = STRBUF_INIT;
		struct gen_src src;
		struct gen_alloc g;

		gen_src_seed(&src, seed);
		CU_ASSERT_EQUAL_FATAL(gen_alloc_make(&src, &g), 0);
		if (gen_alloc_check(&g, &st, &why) == GEN_FAIL && failed++ < 3)
			fprintf(stderr, "\n  seed %llu: %s\n", (unsigned long long)seed, sb_str(&why));
		gen_alloc_free(&g);
		sb_free(&why);
	}
	fprintf(stderr, "\n  %d problems: %zu allocations, %zu unallocatable, %zu skipped, "
		"%zu failed\n", CASES, st.allocated, st.unallocatable, st.skipped, failed);
	CU_ASSERT_EQUAL(failed, 0);
	/* Both answers must be common, or the comparison proves little. */
	CU_ASSERT_TRUE(st.allocated > CASES / 5);
	CU_ASSERT_TRUE(st.unallocatable > CASES / 10);
	CU_ASSERT_TRUE(st.skipped < CASES / 100);
}

DT_SUITE_MAIN("alloc_diff", DT_TEST(test_against_brute_force))
