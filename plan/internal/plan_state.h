/* plan_state.h - the planner's state while it runs, shared by the files of
 * one plan_run: plan_run.c (driver), plan_result.c (its helpers),
 * plan_inputs.c, plan_existing.c, plan_new.c and plan_reasons.c.
 *
 * Objects: an exnode per existing Node (its allocator context over its
 * slices, the state of what is allocated there, CPU/memory/pods in use);
 * a pool per NodePool (its EC2NodeClass's consumable-capacity mode and
 * kubelet settings); a cand per (pool, instance type, capacity type) the
 * pool's requirements allow; a hypo per (instance type, consumable-capacity
 * mode): the allocator context over the slices hwdb predicts there, shared
 * by every pool with that mode; a pnode per node the optimizer opens. */
#ifndef DT_PLAN_STATE_H
#define DT_PLAN_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alloc.h"
#include "cel.h"
#include "hwdb.h"
#include "hwdb_catalog.h"
#include "hwdb_mig.h"
#include "plan_internal.h"

struct vec_claims {
	struct plan_claim *v;
	size_t n, cap;
};

struct vec_str {
	const char **v;
	size_t n, cap;
};

struct exnode {
	const struct model_object *obj;
	struct model_kv *labels;        /* the node's labels + metadata.name */
	size_t n_labels;
	struct plan_res cap, used;
	struct alloc_ctx *actx;         /* built when a claim first needs it */
	struct alloc_node an;           /* what actx borrows */
	const struct model_object **slices;
	struct alloc_state *state;
	struct vec_str pods;
	struct vec_claims claims;
};

struct pool {
	const struct model_object *obj; /* NULL: the default NodePool */
	const char *name;
	const struct model_object *nc;
	struct hwdb_cc_mode cc;
	struct hwdb_mig_layout mig;     /* karpenter.k8s.aws/nvidia-mig-layout */
	struct plan_kubelet kubelet;
	const char *region;             /* what its nodes are priced in */
	const char *problem;            /* the whole pool is unusable */
	bool on_demand, spot;
	const struct model_requirement *reqs;
	size_t n_reqs;
	const struct model_taint *taints;
	size_t n_taints;
	const struct model_kv *tlabels;
	size_t n_tlabels;
	/* What the DaemonSets that would run on its nodes request: taken
	 * from every new node's allocatable (Karpenter's daemon overhead). */
	struct plan_res daemons;
	size_t n_daemons;
	/* limits (-1: none) and what the plan launched so far */
	int64_t lim_cpu, lim_mem, lim_gpu, lim_nodes;
	int64_t use_cpu, use_mem, use_gpu, use_nodes;
};

struct cand {
	size_t pool;
	const struct hwdb_type *type;
	const char *ct;
	struct model_kv *labels;        /* values point into vals */
	size_t n_labels;
	char (*vals)[PLAN_LABEL_VALUE_MAX];     /* PLAN_MAX_TYPE_LABELS, owned */
	struct plan_res alloc;          /* ext: what NodeOverlays give the node */
	struct plan_price price;        /* hwdb's or a NodeOverlay's */
	size_t hypo;
	/* The zones its offering recently failed in (plan_options.unavailable):
	 * zone NotIn [...], values in the result's arena; n_away 0 or 1. */
	struct model_requirement away;
	size_t n_away;
};

struct hypo {
	const struct hwdb_type *type;
	struct hwdb_cc_mode cc;
	struct hwdb_mig_layout mig;     /* NONE where the type has no MIG */
	char node[128];
	struct alloc_ctx *actx;
	/* what actx borrows */
	struct alloc_node an;
	struct alloc_uniform_attr ua[8];
	const struct model_object *slices[HWDB_MAX_SLICES];
	struct alloc_state *fresh;      /* nothing allocated, to reset nodes */
};

/* A type a pool cannot launch whatever the pod (requirements, offering). */
struct type_reject {
	size_t pool;
	const struct hwdb_type *type;
	const char *category;
	char reason[256];
};

struct pnode {
	bool open;
	size_t cand;
	struct alloc_state *state;
	struct plan_res used;
	/* The requirements its units bring on the open keys (plan_narrow.c):
	 * pointers into planner.unit_open. */
	const struct model_requirement **open_reqs;
	size_t n_open_reqs, cap_open_reqs;
	struct { struct alloc_state *st; struct plan_res used; size_t n_open_reqs; } *stack;
	size_t depth, cap;
};

/* A unit's requirements on the open keys (zone, region, zone id); vals
 * holds the values of the ones made for ORed terms. */
struct plan_open_reqs {
	struct model_requirement *r;
	size_t n;
	const char **vals;
};

struct planner {
	struct model_set *set;
	const struct plan_options *opts;
	const struct hwdb_catalog *catalog;     /* the instance types */
	struct plan_result *res;
	struct dt_err *err;
	struct cel_cache *cel;                  /* the reasons' selector hints */
	struct alloc_programs *programs;        /* every ctx's selectors */
	struct alloc_options aopts;
	uint64_t share_counter;

	const struct model_object **classes;
	size_t n_classes;
	const struct model_object **taint_rules;        /* DeviceTaintRules, for aopts */
	size_t n_taint_rules;
	const struct model_object **slices;     /* the cluster's */
	size_t n_slices;
	const struct model_object **allocated;  /* claims with status.allocation */
	size_t n_allocated;
	/* Indexes so that each node finds its slices and allocated claims
	 * without scanning the cluster: slices sorted by nodeName (those
	 * without one first, n_global_slices of them); (node, claim) pairs
	 * sorted by node, and the claims not tied to one node. */
	size_t n_global_slices;
	struct node_claim { const char *node; const struct model_object *claim; } *by_node;
	size_t n_by_node;
	const struct model_object **global_claims;
	size_t n_global_claims;
	/* The allocations this run makes on existing nodes while some slice
	 * is not bound to one node: every node's state counts them, as the
	 * scheduler's one set of allocated devices does (plan_share_outcome). */
	struct model_allocation **run_allocs;
	size_t n_run_allocs, cap_run_allocs;

	struct plan_pods pods;
	bool *placed;                           /* per unit */
	size_t *shape_rep;                      /* per shape: a unit */

	struct exnode *nodes;
	size_t n_nodes;
	struct pool *pools;
	size_t n_pools;
	struct plan_overlays overlays;
	struct cand *cands;
	size_t n_cands;
	struct hypo *hypos;
	size_t n_hypos;
	struct type_reject *rejects;
	size_t n_rejects, cap_rejects;

	struct pnode *pn;
	size_t n_pn, cap_pn;
	struct plan_open_reqs *unit_open;       /* per unit (plan_narrow_setup) */
	int fatal;                              /* first fatal error of a callback */
	/* Per shape: the allocator's error (CEL runtime error, unknown class,
	 * step budget) that makes the scheduler fail such a pod; the units of
	 * that shape are unschedulable with it. */
	const char **shape_error;

	/* output being built (malloc'ed, copied into the arena at the end) */
	struct plan_node_claim *ncs;
	size_t n_ncs, cap_ncs;
	struct plan_unschedulable *uns;
	size_t n_uns, cap_uns;
	bool settled;                           /* ncs arrays moved into the arena */
};

/* ---- New nodes' zones (plan_narrow.c) ---- */

/* Each unit's requirements on the open keys, into pl->unit_open. -ENOMEM. */
int plan_narrow_setup(struct planner *pl);
void plan_narrow_free(struct planner *pl);
/* Whether unit still leaves every open key it constrains a value on pn. */
bool plan_narrow_fits(const struct planner *pl, const struct pnode *pn, size_t unit);
/* unit's requirements onto pn (pack_undo pops them). -ENOMEM. */
int plan_narrow_push(const struct planner *pl, struct pnode *pn, size_t unit);
/* nc->narrowed: one requirement per open key pn's pool and units
 * constrain, In what is left or NotIn what is excluded (arena). -ENOMEM. */
int plan_narrow_claim(struct planner *pl, const struct pnode *pn, struct plan_node_claim *nc);

/* ---- Building the result (plan_result.c) ---- */

/* alloc_try_opts without the explanation, for placing (the reasons for
 * the pods left over are asked again with it). */
extern const struct alloc_try_options plan_no_reasons;

/* memcpy that accepts NULL when there is nothing to copy. */
void plan_copy(void *dst, const void *src, size_t n);
/* Strings in the result's arena; NULL when out of memory. */
const char *plan_astr(struct planner *pl, const char *s);
const char *plan_afmt(struct planner *pl, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* "ns/name" of a pod. */
const char *plan_pod_id(struct planner *pl, const struct plan_pod *p);
int plan_push_str(struct vec_str *v, const char *s);
/* Append the allocator's results of a placed unit to vc as plan_claims
 * (strings in the arena), and each new driver to drivers (may be NULL). */
int plan_record_outcome(struct planner *pl, const struct alloc_outcome *o,
			struct vec_claims *vc, struct vec_str *drivers);

/* ---- Setup (plan_inputs.c), in this order ---- */

/* Classes, slices and allocated claims of the set, indexed by node. */
int plan_collect_objects(struct planner *pl);
/* An exnode per Node, charged with its bound pods and allocated claims. */
int plan_setup_nodes(struct planner *pl);
/* Pools, hypos and launch candidates; type rejects for the reasons. */
int plan_setup_candidates(struct planner *pl);
/* The allocator context of a node, built when first needed. */
int plan_exnode_ctx(struct planner *pl, struct exnode *en);
/* After out was committed on en: what it took from pools that are not
 * en's alone (slices with a nodeSelector, allNodes or per-device node
 * selection) is taken on every other existing node too. 0 or -ENOMEM. */
int plan_share_outcome(struct planner *pl, const struct exnode *en,
		       const struct alloc_outcome *out);
int plan_hypo_ctx(struct planner *pl, struct hypo *h);
const char *plan_annotation(const struct model_meta *m, const char *key);

/* ---- Existing nodes (plan_existing.c) ---- */

/* Every pod of the unit against the node; NULL when fine, else the
 * category, and why in buf unless buf is NULL (placing asks only whether,
 * for every unit and node it passes over). */
const char *plan_unit_static(struct planner *pl, const struct plan_unit *u,
			     const struct plan_node_spec *spec, const struct model_taint *taints,
			     size_t n_taints, char *buf, size_t sz);
/* "cpu: needs 4000m, 2000m allocatable" for the dimension dim (cap: what
 * is left); for "extended", the first of ext_names that is short. */
void plan_res_text(const char *dim, const struct plan_res *need, const struct plan_res *cap,
		   const char *const *ext_names, char *buf, size_t sz);
/* Units by priority onto the first existing node that takes them. */
int plan_place_existing(struct planner *pl);

/* ---- New nodes (plan_new.c) ---- */

/* The optimizer's operations, also used to try a unit on a fresh node. */
int plan_pack_open(void *ctx, size_t cand, size_t *node);
void plan_pack_close(void *ctx, size_t node);
/* Static fit of a shape on a candidate: NULL or the category (why in buf). */
const char *plan_cand_static(struct planner *pl, size_t shape, size_t ci, char *buf,
			     size_t sz);
/* Whether the pool's limits leave room for one more node of type t. */
bool plan_pool_takes(const struct pool *p, const struct hwdb_type *t);
/* Choose the new nodes for the units left and emit their NodeClaims. */
int plan_new_nodes(struct planner *pl);
/* The arrays of a node claim were malloc'ed; move them into the arena. */
int plan_settle_node_claims(struct planner *pl);

/* ---- Reasons (plan_reasons.c) ---- */

/* A reason and details for every unit not placed. */
int plan_explain(struct planner *pl);

#endif
