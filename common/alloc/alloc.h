/* alloc.h - the structured allocator: which devices of one node serve a
 * pod's ResourceClaims, with the semantics of the Kubernetes scheduler's
 * allocator (k8s.io/dynamic-resource-allocation/structured, the
 * "incubating" variant plus the fixes its known bugs need).
 *
 * Three objects:
 *
 *   struct alloc_ctx    one node: the pools gathered from the ResourceSlices
 *                       (generations, incomplete and invalid pools), every
 *                       device flattened once, the DeviceClasses, the
 *                       compiled selectors and their result per device. Built once per
 *                       node and reused for every pod tried there.
 *   struct alloc_state  what is already allocated on that node: devices in
 *                       use, capacity consumed on shared devices, counters
 *                       consumed. Flat arrays: copying one (to try a pod and
 *                       roll back) is a memcpy.
 *   struct alloc_outcome  the answer for one set of claims: the results, or
 *                       "unallocatable" with a reason a person can act on.
 *
 *   alloc_ctx_new(node, slices, classes) -> ctx
 *   alloc_state_new(ctx) -> state; alloc_state_add_allocation() per claim
 *                       that already has status.allocation
 *   alloc_try(ctx, state, claims) -> outcome
 *   alloc_state_commit(state, outcome) when the pod is placed there.
 *
 * `dratopo allocate` runs that once; the planner packs pods one after
 * another onto a node (real, or hypothetical with hwdb's predicted
 * slices) by committing each outcome into the node's state.
 *
 * Error convention: functions return 0 or a negative errno code and fill
 * struct dt_err. alloc_try returns 0 both when the claims were allocated
 * and when they cannot be on this node (outcome->allocated says which);
 * a negative return is a fatal error for which the scheduler would fail
 * the pod: a CEL runtime error, an unknown DeviceClass, more than 32
 * devices for one claim, the step budget exhausted.
 *
 * Unknown-but-uniform attributes (Karpenter's AttributeBindings): on a
 * hypothetical node some attributes (the GPU driver's driverVersion,
 * cudaDriverVersion) are unknown, but equal on every device of the node.
 * A slice names them in the annotation ALLOC_ANNOTATION_NODE_UNIFORM
 * (comma-separated, bare names in the slice driver's domain), or the
 * caller lists them in struct alloc_node. A device that lacks such an
 * attribute gets the node's one unknown value:
 *   - matchAttribute: satisfied among devices of the node (any number,
 *     one included: unlike Karpenter we do not require two devices);
 *   - distinctAttribute: two devices of the node always violate it;
 *   - a CEL selector that reads it gets a runtime error, and on such a
 *     device the error means "does not match" rather than a fatal error
 *     (as Karpenter does): the value cannot be known before the node runs.
 *
 * Threads: a ctx, its states and outcomes are used by one thread at a
 * time; different ctxs are independent. */
#ifndef DT_ALLOC_H
#define DT_ALLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cel.h"
#include "err.h"
#include "model.h"

/* AllocationResultsMaxSize: devices one claim may get. */
#define ALLOC_MAX_RESULTS       32
/* Default bound on allocateOne steps for one alloc_try. */
#define ALLOC_DEFAULT_MAX_STEPS 1000000
/* "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa" */
#define ALLOC_SHARE_ID_LEN      36
/* Slice annotation listing the node-uniform unknown attributes. */
#define ALLOC_ANNOTATION_NODE_UNIFORM "dratopo.io/node-uniform-attributes"

/* Writes a new share ID (36 characters and a NUL) into out. The default
 * is a random UUIDv4 from getrandom(); tests inject a counter. */
typedef void (*alloc_share_id_fn)(void *arg, char out[ALLOC_SHARE_ID_LEN + 1]);

struct alloc_uniform_attr {
	const char *driver;     /* devices of this driver */
	const char *attribute;  /* qualified ("gpu.nvidia.com/driverVersion") or bare */
};

/* The node the claims are allocated for. Everything is borrowed and must
 * outlive the ctx. */
struct alloc_node {
	const char *name;                       /* required */
	const struct model_kv *labels;          /* for slice/device nodeSelectors */
	size_t n_labels;
	const struct alloc_uniform_attr *uniform_attrs;
	size_t n_uniform_attrs;
};

struct alloc_options {
	uint64_t max_steps;             /* 0: ALLOC_DEFAULT_MAX_STEPS */
	alloc_share_id_fn share_id;     /* NULL: random UUIDv4 */
	void *share_id_arg;
	/* Not used any more (kept so that callers setting it still build):
	 * an LRU cache may evict and free a program that a ctx still holds.
	 * Share programs across ctxs with `programs` instead. */
	struct cel_cache *cel_cache;
	/* Compiled selectors shared by every ctx built with these options
	 * (the planner's nodes all read the same classes): each distinct
	 * expression is compiled once for all of them. NULL: each ctx
	 * compiles its own. Borrowed; must outlive those ctxs. */
	struct alloc_programs *programs;
	/* Leave alloc_outcome.reason empty when the claims do not fit: the
	 * explanation costs about as much as the search, and a caller that
	 * tries many nodes only needs it for the pods it cannot place. */
	bool no_reasons;
	/* DeviceTaintRules (MODEL_DEVICE_TAINT_RULE objects, borrowed like the
	 * slices): each one's taint is added to every device its selector
	 * selects, as if the slice had it (the scheduler's tracker does the
	 * same); a reason names the rule of an untolerated taint. */
	const struct model_object *const *taint_rules;
	size_t n_taint_rules;
};

struct alloc_ctx;
struct alloc_state;

/* A table of compiled selectors, one per distinct expression, for
 * alloc_options.programs. Nothing is ever evicted (a ctx holds its
 * programs for its whole life); compile errors are not kept, so each ctx
 * reports them as it would alone. One thread at a time, like the ctxs that
 * share it. Free it after the last of them. */
struct alloc_programs;
struct alloc_programs *alloc_programs_new(void);       /* NULL on OOM */
void alloc_programs_free(struct alloc_programs *p);

/* Build the allocator context for node. slices: every ResourceSlice of the
 * cluster (MODEL_RESOURCE_SLICE objects; those of other nodes matter for
 * pool completeness and shared counters); classes: the DeviceClasses. The
 * objects are borrowed and must outlive the ctx. opts may be NULL.
 * Errors: -ENOMEM, -EINVAL (node without a name). Invalid or incomplete
 * pools are not errors here: they are remembered and reported when a
 * claim needs them. */
int alloc_ctx_new(const struct alloc_node *node,
		  const struct model_object *const *slices, size_t n_slices,
		  const struct model_object *const *classes, size_t n_classes,
		  const struct alloc_options *opts, struct alloc_ctx **out,
		  struct dt_err *err);
void alloc_ctx_free(struct alloc_ctx *ctx);

/* Devices of the node's pools (complete or not), for reporting. */
size_t alloc_ctx_device_count(const struct alloc_ctx *ctx);

/* ---- Allocated state ---- */

/* A state with nothing allocated, sized for ctx. NULL on OOM. */
struct alloc_state *alloc_state_new(const struct alloc_ctx *ctx);
struct alloc_state *alloc_state_clone(const struct alloc_state *s);
/* dst = src; both of the same ctx (-EINVAL otherwise). No allocation. */
int alloc_state_copy(struct alloc_state *dst, const struct alloc_state *src);
void alloc_state_free(struct alloc_state *s);

/* Count an existing allocation (a claim's status.allocation) as in use:
 * exclusive devices become unavailable, shared ones (shareID) consume
 * their consumedCapacity, and counters are consumed. Results naming
 * devices this ctx does not know (other nodes' devices) are ignored;
 * adminAccess results use nothing. 0 or -ENOMEM. */
int alloc_state_add_allocation(struct alloc_state *s, const struct model_allocation *a,
			       struct dt_err *err);

/* ---- Allocating ---- */

/* One allocated device. Strings are borrowed from the ctx's slices and
 * the claim, or owned by the outcome (request, share_id, consumed). */
struct alloc_device_result {
	const char *request;            /* "req" or "req/subreq" */
	const char *driver;
	const char *pool;
	const char *device;
	uint32_t device_index;          /* the ctx's, for alloc_state_commit */
	bool admin_access;
	const struct model_toleration *tolerations;     /* the request's */
	size_t n_tolerations;
	const char *const *binding_conditions;
	size_t n_binding_conditions;
	const char *const *binding_failure_conditions;
	size_t n_binding_failure_conditions;
	const char *share_id;           /* NULL unless the device allows multiple allocations */
	/* Every capacity of a shared device with what this result consumes
	 * (names as the device writes them); none for exclusive devices. */
	const struct model_quantity_entry *consumed;
	size_t n_consumed;
};

struct alloc_claim_result {
	const struct model_object *claim;
	struct alloc_device_result *results;
	size_t n_results;
	/* status.allocation.devices.config: the classes' configs (FromClass)
	 * and the claim's (FromClaim) that apply to what was allocated. */
	struct model_device_config *config;
	size_t n_config;
	/* NULL: the devices are available on every node. */
	struct model_node_selector *node_selector;
};

struct alloc_outcome {
	bool allocated;
	/* When !allocated: why, for a person ("claim default/gpu, request
	 * gpu: 2 devices requested, 1 of 8 free devices match"). */
	char reason[DT_ERR_MSG_MAX];
	struct alloc_claim_result *claims;      /* n_claims, in input order */
	size_t n_claims;
	uint64_t steps;                         /* allocateOne invocations */
	struct alloc_mem *mem;                  /* owns what the results own */
};

/* Allocate claims (MODEL_RESOURCE_CLAIM objects, without status.allocation)
 * together on ctx's node, on top of state (which is not changed). out is
 * overwritten (free it with alloc_outcome_free, also after an error).
 * Returns 0 (see out->allocated) or a negative fatal error. */
int alloc_try(struct alloc_ctx *ctx, const struct alloc_state *state,
	      const struct model_object *const *claims, size_t n_claims,
	      struct alloc_outcome *out, struct dt_err *err);

/* Options of one alloc_try_opts call. */
struct alloc_try_options {
	/* Leave out->reason empty when the claims do not fit: only the
	 * explanation (which costs about as much as the search) is skipped;
	 * the answer, the results and the errors are those of alloc_try.
	 * Unlike alloc_options.no_reasons no node is turned away before the
	 * claims are prepared, so an invalid claim fails on the same node as
	 * with reasons. A caller trying many nodes asks again with reasons
	 * only for the pods it reports. */
	bool no_reasons;
};

/* alloc_try with per-call options (NULL: as alloc_try). */
int alloc_try_opts(struct alloc_ctx *ctx, const struct alloc_state *state,
		   const struct model_object *const *claims, size_t n_claims,
		   const struct alloc_try_options *topts, struct alloc_outcome *out,
		   struct dt_err *err);
void alloc_outcome_free(struct alloc_outcome *out);

/* Count an allocated outcome into s (s of the outcome's ctx). 0 or
 * -EINVAL (outcome not allocated). Never fails otherwise. */
int alloc_state_commit(struct alloc_state *s, const struct alloc_outcome *o);

/* The result as a model_allocation in set's arena (for model_encode and
 * `dratopo allocate -o yaml`). 0 or -ENOMEM. */
int alloc_result_to_model(const struct alloc_claim_result *r, struct model_set *set,
			  struct model_allocation **out);

#endif
