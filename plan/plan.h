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
 * plan_execute (plan.c) is the one way in, for every user of the planner:
 * `dratopo plan -f` and `dratopo validate` (cli/), the coordinator's Plan
 * RPC, the Kubernetes controller (which hands it objects read from the API
 * server, decoded by the same loader as files) and bench/. It runs the
 * pipeline, written once: load the manifests, check them as the API
 * server would, let the caller add what it knows (the live fleet), plan
 * (plan_run.c drives steps 1-4), write the output (step 5) and give back
 * the exit code. The parts live in internal/plan_internal.h and the
 * planner's state in internal/plan_state.h.
 *
 * The struct plan_result owns everything it points to (one doc_arena).
 * Library code never prints or exits; the callers talk to the user. */
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

/* An offering that recently failed to launch (Karpenter's
 * unavailable-offerings cache: insufficient capacity): instance type,
 * capacity type (NULL: any) and zone (NULL: every zone). */
struct plan_unavailable {
	const char *instance_type;
	const char *capacity_type;
	const char *zone;
};

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
	/* Offerings to leave out: a (NodePool, type) candidate whose offering
	 * is unavailable in every zone is rejected ("unavailable"); one
	 * unavailable in some zones launches elsewhere (its NodeClaim says
	 * topology.kubernetes.io/zone NotIn them). Borrowed; may be NULL. */
	const struct plan_unavailable *unavailable;
	size_t n_unavailable;
	/* Nodes made for given pods (the controller's NodeClaims in flight
	 * and their Nodes): a pod tries its node before the others, so that
	 * first fit does not hand it to another pod that then needs a node
	 * of its own. Borrowed; may be NULL. */
	const struct plan_made_for *made_for;
	size_t n_made_for;
};

/* A pod ("NS/NAME") and the node (its name) made for it. */
struct plan_made_for {
	const char *pod, *node;
};

/* Node extended resources the planner counts: the names NodeOverlays give
 * nodes capacity of (spec.capacity, e.g. example.com/fuse), the first ones
 * of the input. */
#define PLAN_MAX_NODE_EXT 8

/* CPU (millicores), memory and ephemeral-storage (bytes) and pod slots:
 * what a pod asks for and what a node offers; ext[i]: the count of the
 * i-th node extended resource (plan_result.ext_names). */
struct plan_res {
	int64_t cpu_milli;
	int64_t mem_bytes;
	int64_t storage_bytes;          /* ephemeral-storage */
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
	/* vpc.amazonaws.com/efa to request: every EFA of its type when its
	 * pods use dra.net devices, as DRA-enabled Karpenter attaches every
	 * EFA for them (with its DRA support off, the default, Karpenter
	 * attaches EFAs only for this request); 0: none. */
	int64_t efas;
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

/* ------------------------------------------------------------------ */
/* The entry point                                                     */
/* ------------------------------------------------------------------ */

/* What a plan exits with: `dratopo plan`'s exit status and the Plan RPC's
 * exit_code. (2, a usage error, is the command line's own.) */
#define PLAN_EXIT_OK            0  /* every pod has a place */
#define PLAN_EXIT_FAIL          1  /* invalid input, or a failure */
#define PLAN_EXIT_UNSCHEDULABLE 3  /* some pod has none; the plan is still written */

enum plan_format {
	PLAN_FORMAT_TABLE,      /* one row per node claim and unschedulable pod */
	PLAN_FORMAT_YAML,       /* karpenter.sh/v1 NodeClaims */
	PLAN_FORMAT_JSON,       /* design.md's plan JSON */
	PLAN_FORMAT_NONE,       /* no output: the caller reads report.result */
	PLAN_FORMAT_JSON_COMPACT, /* the same JSON on one line (-o json --compact) */
};

/* One manifest: a file or bytes already in memory. */
struct plan_manifest {
	/* The file to read ("-": standard input; a directory: its *.yaml,
	 * *.yml and *.json files, as model_set_load_file), or, with content,
	 * the name messages give the bytes. */
	const char *name;
	const char *content;    /* NULL: read the file name */
	size_t len;             /* of content */
};

struct plan_request {
	const struct plan_manifest *manifests;
	size_t n_manifests;
	/* Objects the caller built already (decoded with model_set_load_*,
	 * e.g. from the API server's JSON): the manifests are loaded into it
	 * and it is checked and planned with them. Borrowed: it stays the
	 * caller's and must outlive the report. NULL: the report owns a set
	 * of its own. */
	struct model_set *set;
	/* The instance types (opts.catalog; NULL: the process's, hwdb's)
	 * and the optimizer's settings. */
	struct plan_options opts;
	enum plan_format format;
	/* Load and check only, as `dratopo validate` does: no plan, exit
	 * PLAN_EXIT_OK or PLAN_EXIT_FAIL, and an EC2NodeClass's MIG layout
	 * naming a profile no hwdb GPU has is a warning (a plan gives that
	 * as the reason of each type it rejects instead). */
	bool check_only;
	/* Called once the input passed its checks, before planning, with the
	 * set and a copy of opts: adds what the caller knows (the
	 * coordinator's live fleet) and may set opts->catalog to the types
	 * that go with it; NULL: nothing. Nonzero fails the plan, with its
	 * messages added to diags. */
	int (*prepare)(void *arg, struct model_set *set, struct plan_options *opts,
		       struct dt_diags *diags);
	void *prepare_arg;
	/* What failures that are not input problems are prefixed with
	 * ("dratopo plan: out of memory"); NULL: "plan". */
	const char *who;
};

/* The phases plan_execute times (report.cpu_s). */
enum plan_phase { PLAN_PHASE_LOAD, PLAN_PHASE_CHECK, PLAN_PHASE_RUN, PLAN_PHASE_EMIT,
		  PLAN_PHASE_COUNT };

/* What a plan gives back; plan_report_free frees what it owns. */
struct plan_report {
	int exit_code;                  /* PLAN_EXIT_* */
	struct strbuf output;           /* the plan in the requested format */
	/* What went wrong, one line each, in the order to print them: the
	 * input's problems sorted by manifest (as given), document and item,
	 * then failures prefixed with who; with YAML output, how many pods
	 * are unschedulable (NodeClaims cannot say). */
	struct dt_diags diags;
	/* What is not an error, one line each (printed "warning: ..."):
	 * documents skipped, NodeOverlays Karpenter would ignore, with
	 * check_only MIG profiles no hwdb GPU has. */
	struct dt_diags warnings;
	/* The plan; NULL when there is none (invalid input, a failure,
	 * check_only). It borrows names from set and the catalogue. */
	struct plan_result *result;
	/* The objects checked and planned: the request's set, or the
	 * report's own (owns_set). */
	struct model_set *set;
	bool owns_set;
	double cpu_s[PLAN_PHASE_COUNT]; /* CPU seconds of this process per phase */
};

/* Run the pipeline of rq: load, check, prepare, plan, write. Returns
 * report->exit_code; every outcome, failures included, is in the report,
 * which the caller frees with plan_report_free in any case. */
int plan_execute(const struct plan_request *rq, struct plan_report *report);
void plan_report_free(struct plan_report *report);

/* ---- Live nodes ---- */

/* A running node of instance type t (NULL: a type hwdb does not know) as a
 * v1 Node document appended to sb: the labels a node of that type carries
 * and what it leaves for pods under the default kubelet settings; the
 * coordinator feeds its fleet to the planner this way (plan_nodepool.c). */
struct hwdb_type;
void plan_node_yaml(const char *name, const char *instance_type, const struct hwdb_type *t,
		    struct strbuf *sb);
/* The ResourceSlices the drivers publish on a new node of type t named
 * node, launched with the EC2NodeClass nc (NULL: none), as the planner
 * predicts them for its launch candidates: hwdb's, under the class's
 * consumable-capacity mode and MIG layout (a layout the type's GPUs have
 * no MIG for leaves them whole). Built in set; out gets at most
 * HWDB_MAX_SLICES. 0, or a negative code with err (-EINVAL: a bad
 * annotation, or a layout the GPUs cannot take). */
int plan_node_slices(const struct hwdb_type *t, const struct model_object *nc, const char *node,
		     struct model_set *set, struct model_object **out, size_t *n,
		     struct dt_err *err);

/* ---- Extended resources ---- */

/* Whether a DeviceClass of set backs the extended resource name (its
 * spec.extendedResourceName, or deviceclass.resource.kubernetes.io/<class>):
 * a pod asking for it is a DRA pod, as kube-scheduler decides
 * (plan_extres.c). */
bool plan_extres_backed(const struct model_set *set, const char *name);

#endif
