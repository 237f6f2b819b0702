/* gen_plan.h - small planning problems from a gen_src, and the oracles the
 * planner's answer is checked with:
 *
 *   - the exhaustive optimum: every partition of the pods into nodes, each
 *     part on the cheapest instance type that holds it (CPU, memory and
 *     pod slots after Karpenter's overhead, computed here from docs/plan.md's
 *     formula; GPUs by count and model); the plan's total price must equal
 *     the minimum, and the pods that fit no type alone must be exactly the
 *     unschedulable ones;
 *   - the invariants of any plan: every pod placed once or reported
 *     unschedulable, every placed pod's claim allocated with its count of
 *     devices of the node it runs on, each node's pods fitting its type,
 *     no device (of a new or an existing node) given twice, the total
 *     price the sum of the node claims' prices.
 *
 * A problem is 2-4 synthetic instance types (an --hwdb-extra file: 1-4 L4
 * or H100 GPUs, random vCPUs, memory and price), one NodePool allowing
 * exactly those, 1-5 pods with CPU and memory requests and, for most, a
 * ResourceClaimTemplate asking for 1-2 GPUs (any model or one by
 * productName) or a named ResourceClaim shared with other pods (which
 * must then share a node: the oracle keeps them in one part), some pinned
 * to zones (In or NotIn z0..z2: the pods of one node must share a zone,
 * and its NodeClaim must name exactly the zones they leave); optionally an
 * existing node with its own slice of GPUs
 * whose first GPUs a claim already holds (then only the invariants are
 * checked, and that no pod gets a GPU in use: the existing-nodes-first
 * phase is greedy by design). Used by tests/unit/test_plan_diff.c and
 * tests/fuzz/fuzz_plan.c. */
#ifndef DT_GEN_PLAN_H
#define DT_GEN_PLAN_H

#include <stdbool.h>

#include "gen_alloc.h"
#include "gen_src.h"
#include "strbuf.h"

#define GEN_PLAN_MAX_TYPES 4
#define GEN_PLAN_MAX_PODS  5

struct gen_ptype {
	int vcpu;
	int mem_gib;
	int price_cents;
	int n_gpus;
	int model;              /* 0: L4, 1: H100 */
};

/* A claim's request: count GPUs of a model. */
struct gen_pclaim {
	int gpus;               /* 0: no claim */
	int model;              /* -1: any GPU; else a productName selector */
};

#define GEN_PLAN_MAX_SHARED 2

/* A pod's zone constraint: In or NotIn a set of the zones z0, z1, z2
 * (bit i: zi), as a nodeSelector (In one zone) or a node affinity term. */
enum gen_zone_op { GEN_ZONE_ANY, GEN_ZONE_IN, GEN_ZONE_NOT_IN };

struct gen_ppod {
	int cpu_m;              /* millicores */
	int mem_mib;
	struct gen_pclaim own;  /* its template's claim */
	int shared;             /* -1, or the named claim shared-N it uses instead */
	enum gen_zone_op zone_op;
	unsigned zones;         /* non-empty subset of z0..z2 */
	bool zone_selector;     /* In one zone, written as a nodeSelector */
};

struct gen_plan {
	int n_types, n_pods;
	struct gen_ptype types[GEN_PLAN_MAX_TYPES];
	struct gen_ppod pods[GEN_PLAN_MAX_PODS];
	struct gen_pclaim shared[GEN_PLAN_MAX_SHARED];
	bool existing;          /* node-x with ex_gpus L4s, ex_cpu cores */
	int ex_gpus, ex_cpu;
	int ex_busy;            /* its gpu-0.. already allocated to claim busy */
	struct strbuf extra;    /* the --hwdb-extra file */
	struct strbuf yaml;     /* the manifests */
};

int gen_plan_make(struct gen_src *src, struct gen_plan *g, bool may_exist);
void gen_plan_free(struct gen_plan *g);

struct gen_plan_stats {
	size_t checked, priced, proven, unschedulable, on_existing;
};

/* Load the extra types and the manifests, plan, and check. hwdb's extras
 * are reset afterwards. */
enum gen_verdict gen_plan_check(const struct gen_plan *g, struct gen_plan_stats *st,
				struct strbuf *why);

#endif
