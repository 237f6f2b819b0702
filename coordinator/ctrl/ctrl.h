/* ctrl.h - the coordinator as a Kubernetes controller: it watches the
 * cluster (pods, their claims and templates, DeviceClasses,
 * ResourceSlices, Nodes, DeviceTaintRules, DaemonSets, Karpenter's
 * NodePools, EC2NodeClasses, NodeOverlays and NodeClaims), gathers the
 * pending DRA pods in batches as Karpenter's provisioner does (a pod new
 * to the window extends it to 1 s after, at most 10 s; other changes
 * never hold it open), plans them with the planner against the live Nodes
 * and the NodeClaims in flight, and writes a karpenter.sh/v1 NodeClaim for
 * each new node of the plan, which Karpenter launches.
 *
 *   struct ctrl_opts o = { .kubeconfig = path, .registry = reg };
 *   ctrl_start(&o, &c, &err);     // informers and the planning thread
 *   ...
 *   ctrl_stop(c);
 *
 * NodeClaims it writes are named for what they hold (the pool, and a hash
 * of the instance type, capacity type, zone and pods), so planning the
 * same pods again, after a restart, say, applies the same object instead
 * of a second one; and in-flight NodeClaims count as capacity (a node of
 * their type, with the slices hwdb predicts for it), so pods they were
 * meant for are not planned twice. It only ever writes NodeClaims labelled
 * app.kubernetes.io/managed-by=dratopo. A pod no node can take gets a
 * Warning Event with the planner's reasons; a NodeClaim a Normal one naming
 * its pods. With dry_run nothing is written: each write it would make is a
 * logfmt line (event=kube_dry_run) and a metric, once per change. */
#ifndef DT_CTRL_H
#define DT_CTRL_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"
#include "kube.h"
#include "kube_leader.h"
#include "plan.h"
#include "strbuf.h"

struct obs_registry;
struct ctrl;

/* Labels and annotations on what the controller writes. */
#define CTRL_MANAGED_BY_KEY   "app.kubernetes.io/managed-by"
#define CTRL_MANAGED_BY       "dratopo"
#define CTRL_PLAN_LABEL       "dratopo.io/plan"     /* the plan that made it */
#define CTRL_PODS_ANNOTATION  "dratopo.io/pods"     /* "ns/name,ns/name" */
#define CTRL_DRIFT_TAINT      "dratopo.io/drift"    /* the Node taint of remedies */
#define CTRL_RULE_PREFIX      "dratopo-drift."      /* remedy DeviceTaintRules */

struct ctrl_opts {
	const char *kubeconfig;         /* NULL: $KUBECONFIG, in-cluster, ~/.kube/config */
	const char *context;            /* NULL: current-context */
	bool dry_run;                   /* plan and log, write nothing */
	double batch_idle_s;            /* 0: 1 s */
	double batch_max_s;             /* 0: 10 s */
	const char *instance;           /* Events' reportingInstance; NULL: $HOSTNAME */
	struct obs_registry *registry;  /* metrics; may be NULL */
	/* Called before each plan with the cluster's objects: adds what the
	 * caller knows (the coordinator's fleet) and may set opts->catalog.
	 * NULL: nothing. */
	int (*prepare)(void *arg, struct model_set *set, struct plan_options *opts,
		       struct dt_diags *diags);
	void *prepare_arg;
	/* A Node deleted from the API server (on the informer's thread, also
	 * for one a relist found gone): the fleet forgets a node that left
	 * the cluster. NULL: nothing. */
	void (*node_deleted)(void *arg, const char *node);
	void *node_deleted_arg;
	/* A Node to leave out of planning (a node in drift); NULL: none. */
	bool (*node_excluded)(void *arg, const char *node);
	void *node_arg;
	/* The remedies of the fleet's nodes in drift, as `dratopo nodes -o yaml`
	 * gives them: DeviceTaintRules to apply and, for an unfit node, a Node
	 * carrying the taint to add. The controller applies them (rules by
	 * server-side apply, the Node taint by a read-modify-write of the
	 * Node's atomic taint list) and takes back what it applied once a node
	 * is no longer in the YAML. NULL: no remedies. */
	int (*remedies)(void *arg, struct strbuf *yaml, struct dt_err *err);
	void *remedies_arg;
	double remedy_period_s;         /* how often they are compared; 0: 10 s */
	/* The min watch timeout (tests shorten it); 0: 300 s. */
	unsigned min_watch_timeout_s;
	/* Leader election (kube_leader.h), or NULL: always write. With it the
	 * informers run on every replica (a takeover plans at once, from warm
	 * caches), and every write of the controller's client passes its
	 * fence. It must outlive the controller. */
	struct kube_leader *leader;
	/* Whether to plan and write now: the caller leads and its own state
	 * (the fleet, rebuilt at a takeover) is ready. NULL: always. A change
	 * to true plans at once. */
	bool (*leading)(void *arg);
	void *leading_arg;
};

/* Connect, start the informers and the planning thread. Errors say what
 * could not be reached or read (the kubeconfig, the API server). */
int ctrl_start(const struct ctrl_opts *o, struct ctrl **out, struct dt_err *err);
/* Stop planning and watching, write the Events still queued (2 s). */
void ctrl_stop(struct ctrl *c);
/* Every informer has listed once (for /readyz). */
bool ctrl_synced(struct ctrl *c);

struct ctrl_stats {
	unsigned long long cycles;              /* plans made */
	unsigned long long nodeclaims_written;  /* applied (a dry run applies none) */
	unsigned long long unschedulable;       /* pods of the last plan */
	unsigned long long write_errors;
	unsigned long long remedy_writes;       /* rules applied or deleted, taints set or lifted */
};
void ctrl_stats(struct ctrl *c, struct ctrl_stats *out);

/* What the controller has in flight as of its last plan, for the status
 * page: each pending pod it plans, with the planner's reason it cannot run
 * yet (where the plan puts it, or why nowhere), and each NodeClaim of
 * ours not yet a node ("launching", "launched", "deleting"). The callbacks
 * get borrowed strings, under a lock the planning thread takes only to
 * swap in a new view: quick and safe from any thread, no request to the
 * API server. A non-zero return of a callback stops and is returned. */
struct ctrl_inflight_cb {
	int (*pod)(void *arg, const char *ns, const char *name, const char *reason,
		   int64_t since_ns);
	int (*claim)(void *arg, const char *name, const char *nodepool,
		     const char *instance_type, const char *state, int64_t created_ns);
	void *arg;
};
struct ctrl_inflight_info {
	int64_t as_of_ns;               /* when the last plan was made (Unix ns); 0: none */
	size_t more_pods, more_claims;  /* beyond what the view keeps (1000 each) */
};
int ctrl_inflight(struct ctrl *c, const struct ctrl_inflight_cb *cb,
		  struct ctrl_inflight_info *info);

/* What runs in the cluster, for a plan against the fleet (the add of a
 * coord_cluster_source; arg is the struct ctrl): the Pods bound to a node
 * that have not finished and the allocated ResourceClaims, each unless
 * set has it already. -EAGAIN, said in diags, before the first lists. */
int ctrl_cluster_add(void *arg, struct model_set *set, struct dt_diags *diags);

#endif
