/* gen_alloc.h - small structured-allocator problems, generated from a
 * gen_src, and the two oracles they are checked with:
 *
 *   - a brute-force search written independently of common/alloc (every
 *     combination of devices for every request and subrequest choice),
 *     which says whether the claims can be allocated at all;
 *   - a replay of the allocator's result through the same rules, which
 *     says whether the result is valid: each device satisfies its
 *     request's class and selectors and tolerates no taint it should not,
 *     no exclusive device is given twice, no shared device's capacity and
 *     no pool's counter is oversubscribed, every constraint holds, each
 *     request got its count (All: every device it matches).
 *
 * A problem is one node with 1-2 pools (drivers d.example.com and
 * e.example.com) holding at most 6 devices with int, string and version
 * attributes, a memory capacity, a taint, sharing (allowMultipleAllocations)
 * and counter consumption, some of them in use by claims allocated before
 * (status.allocation, with shareID and consumedCapacity); 1-3 claims of 1-3 requests (ExactCount 1-2,
 * All, firstAvailable with two subrequests), selectors from a small
 * grammar and matchAttribute / distinctAttribute constraints. It is
 * written as YAML manifests and loaded and validated the way
 * `dratopo allocate` loads them, so a failing case is a file to replay:
 * gen_alloc_check() returns the YAML in its message.
 *
 * The grammar avoids the allocator's fatal errors on purpose (selectors
 * guard every attribute that may be absent, constraints never cover an
 * All request), so a fatal error is a finding too. Used by
 * tests/unit/test_alloc_diff.c (PRNG) and tests/fuzz/fuzz_alloc.c (bytes). */
#ifndef DT_GEN_ALLOC_H
#define DT_GEN_ALLOC_H

#include <stdbool.h>
#include <stddef.h>

#include "gen_src.h"
#include "strbuf.h"

#define GEN_MAX_POOLS  2
#define GEN_MAX_DEVS   6
#define GEN_MAX_CLAIMS 3
#define GEN_MAX_REQS   3
#define GEN_MAX_SUBS   2
#define GEN_MAX_CONS   2
#define GEN_MAX_TOTAL_REQS 5

struct gen_sel {
	int kind;               /* -1: none; see sel_expr() in gen_alloc.c */
	int drv;                /* 0: d.example.com, 1: e.example.com */
	int k;
};

struct gen_dev {
	int pool;
	int num;                /* attribute num (int) */
	int kind;               /* attribute kind (string): "a", "b" */
	int ver;                /* attribute ver (version): index, -1 absent */
	int mem;                /* capacity mem in Gi; 0: none */
	bool shared;            /* allowMultipleAllocations */
	bool tainted;           /* t=v:NoSchedule */
	int uses;               /* counter units drawn from its pool's set */
};

struct gen_pool {
	int drv;
	int counter;            /* value of counter c in set cs; 0: no set */
};

struct gen_exact {
	int cls;                /* index into the fixed classes */
	struct gen_sel sel;
	bool all;               /* allocationMode All */
	int count;
	bool tolerate;          /* toleration t Exists */
	int mem;                /* capacity request in Gi; 0: none */
};

struct gen_req {
	bool first;             /* firstAvailable (subs) or exactly (sub[0]) */
	int n_subs;
	struct gen_exact sub[GEN_MAX_SUBS];
};

struct gen_cons {
	bool distinct;
	int attr;               /* index into the constraint attributes */
	unsigned mask;          /* requests it names; 0: all of them */
};

struct gen_claim {
	int n_reqs;
	struct gen_req req[GEN_MAX_REQS];
	int n_cons;
	struct gen_cons cons[GEN_MAX_CONS];
};

/* A claim already allocated (status.allocation) to one device: in use. */
struct gen_used {
	int dev;
	int mem;                /* consumedCapacity of a shared device, Gi */
};

#define GEN_MAX_USED 2

struct gen_alloc {
	int n_pools, n_devs, n_claims, n_used;
	struct gen_pool pools[GEN_MAX_POOLS];
	struct gen_dev devs[GEN_MAX_DEVS];
	struct gen_claim claims[GEN_MAX_CLAIMS];
	struct gen_used used[GEN_MAX_USED];
	bool twice;             /* allocate, commit, and allocate again */
	struct strbuf yaml;     /* the manifests; owned, gen_alloc_free */
};

/* Draw a problem from src and write its manifests. 0 or -ENOMEM. */
int gen_alloc_make(struct gen_src *src, struct gen_alloc *g);
void gen_alloc_free(struct gen_alloc *g);

enum gen_verdict {
	GEN_PASS,               /* allocator and oracles agree */
	GEN_SKIP,               /* the brute force ran past its budget */
	GEN_FAIL,               /* a finding: why says what, with the YAML */
};

struct gen_alloc_stats {
	size_t allocated, unallocatable, skipped, tries;
};

/* The validator's CEL hook, as `dratopo validate` uses it. */
int gen_check_cel(const char *expr, size_t len, char *msg, size_t msgsz, void *ctx);

/* Load, validate and allocate g; compare with the brute force and check
 * the result (and, with g->twice, a second allocation on top of the
 * committed first). why gets the finding. */
enum gen_verdict gen_alloc_check(const struct gen_alloc *g, struct gen_alloc_stats *st,
				 struct strbuf *why);

#endif
