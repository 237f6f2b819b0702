/* plan.h - the planner: where pending DRA pods run, and the cheapest nodes
 * to launch for the ones that fit nowhere yet (`dratopo plan`).
 *
 * Input is a model_set holding everything the user gave: Pods and the
 * workloads that make them, ResourceClaims and their templates,
 * DeviceClasses, existing Nodes and their ResourceSlices, Karpenter
 * NodePools, EC2NodeClasses and NodeOverlays. The planner
 *
 *   1. expands workloads to pods and resolves every pod's claims
 *      (plan_pods.c): a template gives each pod a claim of its own, a named
 *      claim is shared by every pod naming it, so those pods travel as one
 *      unit;
 *   2. places units on existing nodes first (plan_existing.c: their slices
 *      minus what is already allocated, taints, selectors, CPU, memory,
 *      pod count);
 *   3. for the rest, builds the launch candidates (plan_inputs.c): every
 *      (NodePool, hwdb instance type, capacity type) the pool's
 *      requirements allow, priced by hwdb or a NodeOverlay
 *      (plan_overlay.c), with the node's allocatable after Karpenter's
 *      overhead (plan_fit.c) and the slices hwdb predicts for the type
 *      under the EC2NodeClass's consumable-capacity mode (plan_nodepool.c
 *      does the matching);
 *   4. chooses the set of new nodes of lowest total price that holds every
 *      unit that can be held (plan_pack.c, plan_new.c), and explains each
 *      unit that cannot (plan_reasons.c: per node, NodePool and instance
 *      type);
 *   5. writes the plan as JSON, Karpenter NodeClaims or a table
 *      (plan_output.c).
 *
 * plan.c drives the steps. This header is what the CLI, the bench and the
 * coordinator use; the parts live in internal/plan_internal.h and the
 * planner's state in internal/plan_state.h.
 *
 * The struct plan_result owns everything it points to (one doc_arena).
 * Library code never prints or exits; cli_plan.c talks to the user. */
#ifndef DT_PLAN_H
#define DT_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "doc.h"
#include "err.h"
#include "model.h"
#include "strbuf.h"

/* ------------------------------------------------------------------ */
/* Running a plan                                                      */
/* ------------------------------------------------------------------ */

#define PLAN_DEFAULT_EXACT_STEPS 200000u   /* branch-and-bound budget */
#define PLAN_MAX_PODS            1000000u  /* pods after expanding workloads */
#define PLAN_MAX_REPLICAS        100000    /* one workload */

struct hwdb_catalog;

struct plan_options {
	/* Steps the exact optimizer may take before it settles for the
	 * heuristic plan; 0: PLAN_DEFAULT_EXACT_STEPS. */
	uint64_t exact_steps;
	/* Units above which the exact search is not even tried (0: 24). */
	size_t exact_max_units;
	/* Share IDs of shared-device results: NULL writes deterministic
	 * ones (plans are meant to be diffed). */
	void (*share_id)(void *arg, char out[37]);
	void *share_id_arg;
	/* The instance types to plan with (hwdb_catalog.h): the launch
	 * candidates and what a Node without status has. NULL: the process's
	 * (hwdb_lookup's). It must stay alive and unchanged while the result
	 * is used: the result borrows type names from it. */
	const struct hwdb_catalog *catalog;
	/* The region the cluster runs in (--region): what new nodes are
	 * priced in, and a NodePool whose topology.kubernetes.io/region
	 * requirement excludes it launches nothing. NULL: each NodePool's
	 * requirement names its region (one value of In), else
	 * HWDB_DEFAULT_REGION. */
	const char *region;
};

/* Node extended resources the planner counts: the names NodeOverlays give
 * nodes capacity of (spec.capacity, e.g. example.com/fuse), the first ones
 * of the input. */
#define PLAN_MAX_NODE_EXT 8

/* CPU (millicores), memory (bytes) and pod slots: what a pod asks for and
 * what a node offers; ext[i]: the count of the i-th node extended resource
 * (plan_result.ext_names). */
struct plan_res {
	int64_t cpu_milli;
	int64_t mem_bytes;
	int64_t pods;
	int64_t ext[PLAN_MAX_NODE_EXT];
};

/* One allocated device of a claim. */
struct plan_device {
	const char *request, *driver, *pool, *device;
	const char *share_id;           /* NULL for exclusive devices */
};

struct plan_claim {
	const char *claim;              /* "NS/NAME" */
	struct plan_device *results;
	size_t n_results;
};

/* One node to launch. */
struct plan_node_claim {
	const char *name;               /* "<nodepool>-<5 chars>", deterministic */
	const char *node_pool;
	const struct model_object *pool; /* NULL for the default NodePool */
	const char *instance_type;
	const char *capacity_type;      /* "on-demand" */
	const char *region;             /* the region it is priced in */
	double price;
	const char *price_overlay;      /* the NodeOverlay that set or adjusted it; NULL: hwdb's */
	const char **pods;              /* "NS/NAME" */
	size_t n_pods;
	struct plan_claim *claims;
	size_t n_claims;
	const char **drivers;           /* sorted, distinct: requested-dra-drivers */
	size_t n_drivers;
	const char *node_class;         /* the EC2NodeClass it launches with */
	struct plan_res requests;       /* what its pods and DaemonSets request, summed */
	/* Its requirements on the keys a node gets at launch (zone, region,
	 * zone id) as its pods and pool narrow them; these replace the
	 * pool's requirements on those keys. */
	const struct model_requirement *narrowed;
	size_t n_narrowed;
};

struct plan_existing {
	const char *node;
	const char **pods;
	size_t n_pods;
	struct plan_claim *claims;
	size_t n_claims;
};

/* Why one option was rejected for an unschedulable pod. */
struct plan_reject {
	const char *node_pool;          /* NULL for an existing node */
	const char *node;               /* existing node, else NULL */
	const char *instance_type;      /* NULL when the whole pool was rejected */
	const char *reason;
};

struct plan_unschedulable {
	const char *pod;                /* "NS/NAME" */
	const char *reason;             /* one line */
	struct plan_reject *details;
	size_t n_details;
};

struct plan_result {
	struct plan_node_claim *node_claims;
	size_t n_node_claims;
	struct plan_existing *existing;
	size_t n_existing;
	struct plan_unschedulable *unschedulable;
	size_t n_unschedulable;
	double total_price;
	bool optimal;                   /* the exact search proved the price lowest */
	size_t n_pods;                  /* pending pods considered */
	/* The names of plan_res.ext (strings of the input set). */
	const char *ext_names[PLAN_MAX_NODE_EXT];
	size_t n_ext_names;
	struct doc_arena *arena;        /* owns everything above */
	/* What the input asks that Karpenter would not do (a NodeOverlay it
	 * ignores as conflicting), one message each; the CLI prints them to
	 * stderr as "warning: ...". */
	struct dt_diags warnings;
};

/* Plan for everything in set. The set must stay alive while the result is
 * used (the result borrows names from it); the planner adds generated
 * objects (claims from templates, default classes, hypothetical slices)
 * to the set. Errors: -EINVAL with a message naming the object for input
 * the planner cannot work with (a pod naming a claim or template that does
 * not exist is not an error: the pod is unschedulable with that reason),
 * and -ENOMEM. The allocator's errors for one pod (a CEL runtime error,
 * an unknown class, its step budget) make that pod unschedulable with
 * the error as its reason, as the scheduler fails such a pod; the rest is
 * still planned. */
int plan_run(struct model_set *set, const struct plan_options *opts,
	     struct plan_result **out, struct dt_err *err);
void plan_result_free(struct plan_result *r);

/* ---- Live nodes ---- */

/* A running node of instance type t (NULL: a type hwdb does not know) as a
 * v1 Node document appended to sb: the labels a node of that type carries
 * and what it leaves for pods under the default kubelet settings; the
 * coordinator feeds its fleet to the planner this way (plan_nodepool.c). */
struct hwdb_type;
void plan_node_yaml(const char *name, const char *instance_type, const struct hwdb_type *t,
		    struct strbuf *sb);

/* ---- Input checks (plan_check.c) ---- */

/* After loading a plan's input into set (load problems in errs): 0 when it
 * may be planned, -EINVAL with every problem in errs (load problems, then
 * the API server's validation with CEL compiled, then
 * plan_nodeclass_check's errors: all of them, also when loading failed),
 * or -ENOMEM. */
int plan_input_check(const struct model_set *set, struct dt_diags *errs);
/* The EC2NodeClass annotations the planner reads,
 * karpenter.k8s.aws/nvidia-consumable-capacity and -mig-layout, checked
 * with the parsers plan uses: each malformed value is added to errs as
 * "FILE: document N (EC2NodeClass NAME): metadata.annotations[KEY]:
 * message"; a layout naming a profile no hwdb GPU has goes to warnings
 * (which may be NULL). Returns the number of errors. */
int plan_nodeclass_check(const struct model_set *set, struct dt_diags *errs,
			 struct dt_diags *warnings);

/* ---- Output (plan_output.c) ---- */

/* The JSON of design.md: {"nodeClaims", "existingNodes", "unschedulable",
 * "totalPricePerHour"}; unschedulable entries carry "details". */
int plan_emit_json(const struct plan_result *r, struct strbuf *out);
/* karpenter.sh/v1 NodeClaims, one YAML document each. */
int plan_emit_yaml(const struct plan_result *r, struct strbuf *out);
/* One row per node claim and per unschedulable pod. */
int plan_emit_table(const struct plan_result *r, struct strbuf *out);

#endif
