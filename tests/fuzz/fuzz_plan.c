/* fuzz_plan.c - libFuzzer target for the planner: the bytes choose
 * instance types (an --hwdb-extra file), pods with CPU, memory and GPU
 * claims and, sometimes, an existing node with GPUs (gen_plan.c); the plan
 * must keep its invariants (every placed pod's claims allocated, the total
 * price the sum of the node claims, no device given twice, each node's
 * pods fitting its type) and, without an existing node, cost exactly the
 * exhaustive optimum. A violation prints the inputs and abort()s.
 *
 *   build-fuzz/tests/fuzz_plan -max_total_time=600 tests/fuzz/plan_corpus */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "gen_plan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gen_plan_stats stats = { 0 };
	struct strbuf why = STRBUF_INIT;
	struct gen_src src;
	struct gen_plan g;

	gen_src_bytes(&src, data, size);
	if (gen_plan_make(&src, &g, true) == 0 && gen_plan_check(&g, &stats, &why) == GEN_FAIL) {
		fprintf(stderr, "fuzz_plan: %s\n", sb_str(&why));
		abort();
	}
	gen_plan_free(&g);
	sb_free(&why);
	return 0;
}
