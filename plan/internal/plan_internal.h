/* plan_internal.h - the planner's parts, for its own files and its unit
 * tests: the pipeline's steps behind plan_execute (plan_run, the input
 * checks, the writers), NodePool requirements, labels and taints
 * (plan_nodepool.c), NodeOverlays (plan_overlay.c), node overhead and pod
 * requests (plan_fit.c), pods, claims and units (plan_pods.c), and the
 * packing optimizer (plan_pack.c). */
#ifndef DT_PLAN_INTERNAL_H
#define DT_PLAN_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "array.h"
#include "plan.h"

struct hwdb_type;

/* ---- The pipeline's steps (plan.c runs them in order) ---- */

/* The plan itself (plan_run.c): plan for everything in set. The set must
 * stay alive while the result is used (the result borrows names from it);
 * the planner adds generated objects (claims from templates, default
 * classes, hypothetical slices) to the set. Errors: -EINVAL with a message naming the object for input
 * the planner cannot work with (a pod naming a claim or template that does
 * not exist is not an error: the pod is unschedulable with that reason),
 * and -ENOMEM. The allocator's errors for one pod (a CEL runtime error,
 * an unknown class, its step budget) make that pod unschedulable with
 * the error as its reason, as the scheduler fails such a pod; the rest is
 * still planned. */
int plan_run(struct model_set *set, const struct plan_options *opts,
	     struct plan_result **out, struct dt_err *err);
void plan_result_free(struct plan_result *r);

/* The input checks (plan_check.c). After loading a plan's input into set
 * (load problems in errs): 0 when it may be planned, -EINVAL with every problem in errs (load problems, then
 * the API server's validation with CEL compiled, then
 * plan_nodeclass_check's errors: all of them, also when loading failed),
 * or -ENOMEM. warnings (may be NULL) as plan_nodeclass_check's. */
int plan_input_check(const struct model_set *set, struct dt_diags *errs,
		     struct dt_diags *warnings);
/* The EC2NodeClass annotations the planner reads,
 * karpenter.k8s.aws/nvidia-consumable-capacity and -mig-layout, checked
 * with the parsers plan uses: each malformed value is added to errs as
 * "FILE: document N (EC2NodeClass NAME): metadata.annotations[KEY]:
 * message"; a layout naming a profile no hwdb GPU has goes to warnings
 * (which may be NULL). Returns the number of errors. */
int plan_nodeclass_check(const struct model_set *set, struct dt_diags *errs,
			 struct dt_diags *warnings);

/* The writers (plan_output.c). The JSON of design.md: {"nodeClaims", "existingNodes", "unschedulable",
 * "totalPricePerHour"}; unschedulable entries carry "details". */
int plan_emit_json(const struct plan_result *r, int style, struct strbuf *out);
/* karpenter.sh/v1 NodeClaims, one YAML document each. */
int plan_emit_yaml(const struct plan_result *r, struct strbuf *out);
/* One row per node claim and per unschedulable pod. */
int plan_emit_table(const struct plan_result *r, struct strbuf *out);

/* ---- Requirements, labels, taints (plan_nodepool.c) ---- */

/* The set of states a label may take on a node: absent (when absent_ok),
 * or a value x with (complement ? x not in vals : x in vals) that, when
 * gt/lt bounds are set, is an integer strictly inside them. This is how
 * Karpenter reasons about NodePool requirements before a node exists. */
struct plan_vset {
	bool complement;
	bool absent_ok;
	const char *const *vals;        /* borrowed */
	size_t n_vals;
	bool has_gt, has_lt;
	int64_t gt, lt;
};

/* The set one requirement allows. -EINVAL for a Gt/Lt value that is not
 * an integer or an unknown operator. */
int plan_vset_from_req(const struct model_requirement *r, struct plan_vset *out);
/* Whether a and b allow a common state. */
bool plan_vset_intersects(const struct plan_vset *a, const struct plan_vset *b);
/* Whether the state (value, or absent when value is NULL) is in s. */
bool plan_vset_has(const struct plan_vset *s, const char *value);
/* Whether v is one of the n values (NULL entries never match). */
bool plan_in_list(const char *const *vals, size_t n, const char *v);

/* The keys a new node gets its value for only at launch, whatever its pods
 * ask: the zone, the region, the zone id. */
bool plan_is_open_key(const char *key);

/* Label lookup in a map written as model_kv pairs; NULL when absent. */
const char *plan_label(const struct model_kv *kv, size_t n, const char *key);

/* A node before it exists: its concrete labels (instance type, template
 * labels) and the NodePool's requirements on keys it leaves open. */
struct plan_node_spec {
	const struct model_kv *labels;
	size_t n_labels;
	const struct model_requirement *reqs;   /* the pool's */
	size_t n_reqs;
	bool hypothetical;      /* a new node: matchFields can never match,
				 * well-known open keys (zone) take any value,
				 * its host name is none a pod names */
};

/* Whether a pod's requirement can hold on the node. */
bool plan_req_compatible(const struct plan_node_spec *node, const struct model_requirement *r);
/* A pod's nodeSelector and required node affinity against the node. On a
 * mismatch returns false and writes why ("nodeSelector team=ml: label
 * team is not set", "node affinity: no term matches") into why. */
bool plan_pod_selects(const struct plan_node_spec *node, const struct model_pod_spec *pod,
		      char *why, size_t whysz);
/* The EC2NodeClass annotations naming the GPUs' MIG layout (hwdb_mig.h)
 * and their consumable-capacity mode (hwdb_cc_parse). */
#define PLAN_ANNOTATION_MIG_LAYOUT "karpenter.k8s.aws/nvidia-mig-layout"
#define PLAN_ANNOTATION_CONSUMABLE_CAPACITY "karpenter.k8s.aws/nvidia-consumable-capacity"

struct hwdb_mig_layout;
/* The MIG layout a pool's layout gives a node of type t, in *out: the
 * layout itself, or none when t's GPUs have no MIG (they stay whole). A
 * layout the GPUs cannot take returns -EINVAL with the reason in why. */
struct hwdb_type;
int plan_mig_for_type(const struct hwdb_mig_layout *pool, const struct hwdb_type *t,
		      struct hwdb_mig_layout *out, char *why, size_t whysz);
/* Whether the pool's requirements accept the concrete labels; on failure
 * writes the failing requirement ("karpenter.k8s.aws/instance-family In
 * [g6 p5]") into why. */
bool plan_pool_accepts(const struct model_requirement *reqs, size_t n,
		       const struct model_kv *labels, size_t n_labels, char *why, size_t whysz);

/* Whether one toleration tolerates one taint (core/v1 semantics). */
bool plan_tolerates(const struct model_toleration *t, const struct model_taint *taint);
/* The first NoSchedule/NoExecute taint no toleration tolerates, or NULL.
 * PreferNoSchedule never keeps a pod off a node. */
const struct model_taint *plan_untolerated(const struct model_taint *taints, size_t n,
					   const struct model_toleration *tols, size_t m);

/* Well-known label keys. */
#define PLAN_LABEL_INSTANCE_TYPE   "node.kubernetes.io/instance-type"
#define PLAN_LABEL_ARCH            "kubernetes.io/arch"
#define PLAN_LABEL_OS              "kubernetes.io/os"
#define PLAN_LABEL_CAPACITY_TYPE   "karpenter.sh/capacity-type"
#define PLAN_LABEL_NODEPOOL        "karpenter.sh/nodepool"
#define PLAN_LABEL_NODECLASS       "karpenter.k8s.aws/ec2nodeclass"
#define PLAN_LABEL_FAMILY          "karpenter.k8s.aws/instance-family"
#define PLAN_LABEL_CATEGORY        "karpenter.k8s.aws/instance-category"
#define PLAN_LABEL_GENERATION      "karpenter.k8s.aws/instance-generation"
#define PLAN_LABEL_SIZE            "karpenter.k8s.aws/instance-size"
#define PLAN_LABEL_CPU             "karpenter.k8s.aws/instance-cpu"
#define PLAN_LABEL_MEMORY          "karpenter.k8s.aws/instance-memory"
#define PLAN_LABEL_GPU_COUNT       "karpenter.k8s.aws/instance-gpu-count"
#define PLAN_LABEL_GPU_NAME        "karpenter.k8s.aws/instance-gpu-name"
#define PLAN_LABEL_GPU_MANUFACTURER "karpenter.k8s.aws/instance-gpu-manufacturer"
#define PLAN_LABEL_GPU_MEMORY      "karpenter.k8s.aws/instance-gpu-memory"
#define PLAN_LABEL_EFA_COUNT       "karpenter.k8s.aws/instance-efa-count"
#define PLAN_LABEL_REGION          "topology.kubernetes.io/region"

#define PLAN_MAX_TYPE_LABELS 20
#define PLAN_LABEL_VALUE_MAX 64

/* The labels a node of type t gets from its instance type, with the given
 * capacity type. Values are written into vals (PLAN_MAX_TYPE_LABELS
 * strings of PLAN_LABEL_VALUE_MAX bytes); returns how many. */
size_t plan_type_labels(const struct hwdb_type *t, const char *capacity_type,
			struct model_kv *kv, char vals[][PLAN_LABEL_VALUE_MAX]);

/* ---- NodeOverlays (plan_overlay.c) ----
 *
 * What Karpenter's scheduling simulation takes from NodeOverlays: an
 * overlay applies to an offering (pool x instance type x capacity type)
 * whose labels (plan_type_labels, the pool's template labels,
 * karpenter.sh/nodepool, the node class) its requirements select; of the
 * overlays that apply, the one of highest weight (absent: 0; equal
 * weights: the name later in the alphabet) with a price or
 * priceAdjustment decides the price, and each extended resource of
 * spec.capacity is taken from the first overlay in that order giving it. */

/* The set's NodeOverlays in precedence order. The array is malloc'ed;
 * the objects are the set's. */
struct plan_overlays {
	const struct model_object **v;
	size_t n;
};

int plan_overlays_init(struct plan_overlays *ov, const struct model_set *set);   /* -ENOMEM */
void plan_overlays_free(struct plan_overlays *ov);

/* One offering as the conflict check sees it: its labels, and names for
 * the message. */
struct plan_offering {
	const struct model_kv *labels;
	size_t n_labels;
	const char *type, *pool;
};

/* Drop from ov the overlays Karpenter ignores as conflicting: one that,
 * on any of the offerings, sets a price an overlay of the same weight kept
 * before it sets too, or gives a resource such an overlay gives. Each one
 * dropped is a warning naming both and what they share. 0 or -ENOMEM. */
int plan_overlays_resolve(struct plan_overlays *ov, const struct plan_offering *offs,
			  size_t n_offs, struct dt_diags *warnings);

/* An offering's price and where it came from. */
struct plan_price {
	double value;
	const char *overlay;            /* the NodeOverlay that set or adjusted it (or failed
					 * to: see plan_overlay_price); NULL: hwdb's */
};

/* The price of the offering with these labels and capacity type: base
 * (hwdb's price; NULL when hwdb has none for it) as the deciding overlay
 * sets or adjusts it. false when it ends up without a price (no base and
 * no overlay's spec.price), with the reason in why; out->overlay then
 * names the overlay that tried, if one did. */
bool plan_overlay_price(const struct plan_overlays *ov, const struct model_kv *labels, size_t n,
			const char *capacity_type, const double *base, struct plan_price *out,
			char *why, size_t whysz);
/* ext[i] = the count of names[i] the overlays give a node with these
 * labels (0 where none does). */
void plan_overlay_capacity(const struct plan_overlays *ov, const struct model_kv *labels,
			   size_t n, const char *const *names, size_t n_names, int64_t *ext);
/* The extended resources NodeOverlays give capacity of, distinct, in
 * load order, at most max; returns how many (names are the set's). */
size_t plan_overlay_ext_names(const struct model_set *set, const char **names, size_t max);

/* ---- Node overhead and pod requests (plan_fit.c) ---- */


/* The kubelet settings of an EC2NodeClass (spec.kubelet) that change what
 * a node can hold; -1 = not set. */
struct plan_kubelet {
	int64_t max_pods;
	int64_t pods_per_core;
	int64_t kube_reserved_cpu, kube_reserved_mem;       /* milli, bytes */
	int64_t system_reserved_cpu, system_reserved_mem;
	int64_t eviction_mem;           /* bytes; */
	double eviction_mem_percent;    /* or a percentage of capacity, -1 unset */
};

#define PLAN_DEFAULT_MAX_PODS       110     /* kubelet's default */
#define PLAN_VM_OVERHEAD_PERCENT    0.075   /* Karpenter's vmMemoryOverheadPercent */
#define PLAN_EVICTION_HARD_MEM      (100LL << 20)   /* memory.available 100Mi */

void plan_kubelet_defaults(struct plan_kubelet *k);
/* Read spec.kubelet of an EC2NodeClass (may be NULL). -EINVAL with the
 * field path for values that do not parse. */
int plan_kubelet_from_nodeclass(const struct model_object *nc, struct plan_kubelet *k,
				struct dt_err *err);
/* Karpenter's AWS kube-reserved: CPU from the vCPU count, memory from the
 * pod count (see docs/plan.md for the formula). */
int64_t plan_kube_reserved_cpu(int vcpu);
int64_t plan_kube_reserved_mem(int64_t max_pods);
/* The pods a node of vcpu vCPUs may run. */
int64_t plan_max_pods(const struct plan_kubelet *k, int vcpu);
/* What a new node of vcpu/memory_mib leaves for pods. */
void plan_node_allocatable(int vcpu, int64_t memory_mib, const struct plan_kubelet *k,
			   struct plan_res *out);
/* A pod's effective requests: max(sum of containers, largest init
 * container) + overhead; limits stand in for missing requests. pods = 1. */
void plan_pod_requests(const struct model_pod_spec *spec, struct plan_res *out);
/* out->ext[i]: the pod's request of names[i], counted like cpu. */
void plan_pod_node_ext(const struct model_pod_spec *spec, const char *const *names, size_t n,
		       struct plan_res *out);
/* Every amount is kept at or below PLAN_RES_MAX, so sums of two never
 * overflow: absurd requests ("cpu: 1e18") simply never fit. */
#define PLAN_RES_MAX (INT64_C(1) << 60)
/* a += b, saturating at PLAN_RES_MAX. */
void plan_res_add(struct plan_res *a, const struct plan_res *b);
/* a -= b, never below 0. */
void plan_res_take(struct plan_res *a, const struct plan_res *b);
bool plan_res_fits(const struct plan_res *need, const struct plan_res *used,
		   const struct plan_res *cap);
/* "cpu", "memory", "pods" or "extended" (a node extended resource): the
 * first dimension that does not fit. */
const char *plan_res_short(const struct plan_res *need, const struct plan_res *used,
			   const struct plan_res *cap);

/* ---- Pods, claims and units (plan_pods.c) ---- */

/* One pending pod (a Pod, or a replica a workload makes). */
struct plan_pod {
	const struct model_object *obj;         /* the Pod or the workload */
	const char *ns, *name;                  /* replicas get generated names */
	const struct model_pod_spec *spec;
	struct plan_res req;
	bool dra;                               /* spec.resourceClaims or container claims */
	/* Extended resources backed by DRA: the last of claims is the claim
	 * kube-scheduler makes for them (plan_extres.c). */
	bool ext;
	/* The claims it needs, one per spec.resourceClaims entry (NULL when
	 * missing): a template's generated claim, or the named claim
	 * (shared). Objects of the set. tmpl: the template, when used. */
	const struct model_object **claims;
	const struct model_object **tmpl;
	/* Per claim, when it is its PodGroup's (spec.schedulingGroup, the
	 * claim equal to one of the group's): that entry, whose claim every
	 * pod of the group shares; NULL otherwise. NULL array: none. */
	const struct model_pod_claim **group_claim;
	size_t n_claims;
	/* Set when the pod cannot be planned at all (a claim or template
	 * that does not exist, an extended resource): the reason. */
	const char *problem;
	size_t unit;
};

/* ---- Extended resources backed by DRA (plan_extres.c) ---- */

/* The DeviceClass backing extended resource name (its
 * spec.extendedResourceName, or deviceclass.resource.kubernetes.io/<class>);
 * NULL when none does. */
const struct model_object *plan_extres_class(const struct model_set *set, const char *name);
/* The pod's extended resources: *backed when some are and every one is
 * backed by a class (0), but for those no class backs that are among
 * node_res (nodes serve them: NodeOverlay capacity). -ENOENT:
 * *problem_resource has no class (a device-plugin resource); -EINVAL:
 * *problem_resource cannot be a device request, *why says why. */
int plan_extres_scan(const struct model_set *set, const struct model_pod_spec *spec,
		     const char *const *node_res, size_t n_node_res, bool *backed,
		     const char **problem_resource, const char **why);
/* The ResourceClaim kube-scheduler makes for p's backed extended
 * resources, added to set (annotated resource.kubernetes.io/
 * extended-resource-claim: "true"); NULL on OOM. */
struct model_object *plan_extres_claim(struct model_set *set, const struct plan_pod *p);

/* Pods that must land on one node together: a pod, or the pods sharing
 * a named ResourceClaim (transitively). */
struct plan_unit {
	size_t *pods;                           /* indices into plan_pods.pods */
	size_t n_pods;
	struct plan_res req;                    /* summed */
	const struct model_object **claims;     /* to allocate, distinct */
	size_t n_claims;
	const struct model_object **allocated;  /* claims with status.allocation */
	size_t n_allocated;
	const char *problem;                    /* first pod problem, if any */
	size_t shape;                           /* interchangeable units share it */
	/* Units a node turns away alike (single pods whose claims have equal
	 * specs, template-made or not): the existing-node pass keeps one
	 * cursor per place, so no pod re-asks the nodes filled before it. */
	size_t place;
};

/* A pod already bound (spec.nodeName): it uses its node's resources and
 * holds its claims' devices there. pod: its claims, resolved as a
 * pending pod's are, and linked to the claims Kubernetes made for it
 * (pod.status.resourceClaimStatuses, else a claim reserved for it that
 * names the pod's claim); a template claim the input lacks is generated
 * (plan_setup_nodes allocates the ones the input shows unallocated on the
 * node, as the scheduler did). pod.problem: a claim the input lacks. */
struct plan_bound {
	const char *node;
	struct plan_res req;
	struct plan_pod pod;
};

struct plan_pods {
	struct plan_pod *pods;
	size_t n_pods;
	struct plan_unit *units;
	size_t n_units;
	size_t n_shapes;
	size_t n_places;
	struct plan_bound *bound;
	size_t n_bound;
	/* The node extended resources (plan_res.ext): what NodeOverlays give
	 * capacity of. Strings of the set. */
	const char *ext_names[PLAN_MAX_NODE_EXT];
	size_t n_ext_names;
	/* What the units' pods, claims and allocated point into. */
	size_t *unit_pods;
	const struct model_object **unit_claims, **unit_allocated;
};

/* Expand workloads, resolve claims (generating one claim per pod and
 * template into set), group pods into units and units into shapes. */
int plan_pods_collect(struct model_set *set, struct plan_pods *out, struct dt_err *err);
void plan_pods_free(struct plan_pods *p);
/* Add the DeviceClasses the drivers' charts create (gpu.nvidia.com,
 * efa.networking.k8s.aws) unless a class of that name is in set. */
int plan_default_classes(struct model_set *set, struct dt_err *err);
/* Whether a pod spec uses DRA (the definition Karpenter uses). */
bool plan_pod_is_dra(const struct model_pod_spec *spec);

/* ---- String helpers (plan_strings.c) ---- */

/* Names Kubernetes would generate, made deterministic: 5 characters of
 * its "bcdfghjklmnpqrstvwxz2456789" alphabet from a hash of the seeds. */
void plan_name_suffix(const char *a, const char *b, uint64_t n, char out[6]);
/* v in decimal, into out; returns out. */
char *plan_u64_str(uint64_t v, char out[24]);
/* The NULL-terminated strings after sz, concatenated into buf (cut to
 * sz - 1 bytes); returns the length written. */
size_t plan_concat(char *buf, size_t sz, ...);

/* ---- The optimizer (plan_pack.c) ----
 *
 * Abstract over what a node is: the caller supplies the operations, the
 * optimizer decides which candidates to open and which shapes to place. */

struct plan_pack_ops {
	void *ctx;
	/* Open a fresh node of candidate c; writes its handle. 0 or <0. */
	int (*open)(void *ctx, size_t cand, size_t *node);
	/* Discard a node (any order). */
	void (*close)(void *ctx, size_t node);
	/* Place one unit of shape s on node: 1 placed, 0 does not fit, <0
	 * fatal error. */
	int (*add)(void *ctx, size_t node, size_t shape);
	/* Undo the latest add on node that is not yet undone (LIFO). */
	void (*undo)(void *ctx, size_t node);
	/* An upper bound on how many units of shape s a fresh node of c
	 * holds (from CPU, memory and pods alone); SIZE_MAX when unknown. */
	size_t (*bound)(void *ctx, size_t shape, size_t cand);
};

struct plan_pack_problem {
	size_t n_shapes, n_cands;
	const size_t *count;            /* units per shape */
	const double *price;            /* per candidate */
	const bool *allowed;            /* [shape * n_cands + cand] */
	uint64_t exact_steps;           /* 0: no exact search */
	size_t exact_max_units;
	struct plan_pack_ops ops;
};

struct plan_pack_node {
	size_t cand;
	size_t *per_shape;              /* n_shapes counts */
};

struct plan_pack_solution {
	struct plan_pack_node *nodes;
	size_t n_nodes;
	size_t *unplaced;               /* per shape: units no candidate holds */
	double cost;
	bool optimal;                   /* proven by the exact search */
	uint64_t steps;
	size_t *capacity;               /* [shape * n_cands + cand]: units a fresh node
					 * holds, measured up to the demand */
};

int plan_pack_solve(const struct plan_pack_problem *p, struct plan_pack_solution *out,
		    struct dt_err *err);
void plan_pack_solution_free(struct plan_pack_solution *s);

#endif
