/* fuzz_alloc.c - libFuzzer target for the structured allocator: the bytes
 * choose a small problem (gen_alloc.c: pools, devices with attributes,
 * capacity, sharing, taints and counters, claims with ExactCount, All and
 * firstAvailable requests, selectors and constraints), which is loaded,
 * validated and allocated, then checked against the brute-force oracle
 * and replayed through the rules. Any disagreement or broken rule is
 * printed with the manifests and abort()s, so libFuzzer keeps the input.
 *
 *   build-fuzz/tests/fuzz_alloc -max_total_time=600 tests/fuzz/alloc_corpus */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "gen_alloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gen_alloc_stats stats = { 0 };
	struct strbuf why = STRBUF_INIT;
	struct gen_src src;
	struct gen_alloc g;

	gen_src_bytes(&src, data, size);
	if (gen_alloc_make(&src, &g) == 0 && gen_alloc_check(&g, &stats, &why) == GEN_FAIL) {
		fprintf(stderr, "fuzz_alloc: %s\n", sb_str(&why));
		abort();
	}
	gen_alloc_free(&g);
	sb_free(&why);
	return 0;
}
