/* coord.h - dratopo-coordinator's state and the parts of the daemon that
 * share it: the RPC handlers (coord_handlers.c, coord_plan.c), the durable
 * report path with its group commit (coord_commit.c), the conversions
 * between protobuf messages, reconciler records and store records
 * (coord_convert.c), the restore from the store (coord_restore.c) and the
 * metrics (coord_metrics.c). coordinator_main.c owns the process: options,
 * start-up, signals.
 *
 * The rule everything here keeps: a report is acknowledged only once what
 * it changed is durable in the store. The reconciler (dt_reconcile) is
 * applied first, in memory, in the order reports arrive; the effects queue
 * up for the committer thread, which writes every queued report in one
 * transaction (group commit) and then wakes their handlers. When a commit
 * fails, the fleet is rebuilt from the store (the truth), so memory never
 * holds a report the store lacks; the handlers of every report not stored
 * answer UNAVAILABLE. See docs/coordinator.md. */
#ifndef DT_COORD_H
#define DT_COORD_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "obs_metrics.h"
#include "reconcile.h"
#include "rpc_server.h"
#include "store.h"
#include "strbuf.h"

#include "dratopo/v1/agent.pb-c.h"
#include "dratopo/v1/fleet.pb-c.h"
#include "dratopo/v1/plan.pb-c.h"

struct coord_commit;
struct coord_cluster;
struct json_object;

/* Who this coordinator is among its replicas (coord_cluster.c). */
enum coord_role {
	COORD_SOLE,             /* no leader election: it serves and writes */
	COORD_FOLLOWER,         /* another leads: calls are refused, caches kept warm */
	COORD_TAKING_OVER,      /* it leads; the fleet is being rebuilt from the cluster */
	COORD_LEADER,
};
struct dt_diags;
struct model_set;
struct obs_http;
struct page_inflight;

/* What a cluster runs that a plan against the fleet must count: the hook
 * the Kubernetes controller fills (coord_set_cluster_source). add() puts
 * into set, from its informers, the Pods bound to nodes and the
 * ResourceClaims, leaving out every object whose kind, namespace and name
 * the set already has (the request's manifests win). It may add Nodes
 * with their ResourceSlices too: those then stand for the nodes instead
 * of the fleet's prediction, as a Node in the manifests does. The planner
 * counts these objects as it counts them in `plan -f` manifests
 * (docs/coordinator.md, "Devices in use"). It runs on a handler thread in
 * the plan's prepare step, before the fleet's nodes are added: 0, or a
 * negative code with its message added to diags, which fails the plan. */
struct coord_cluster_source {
	int (*add)(void *arg, struct model_set *set, struct dt_diags *diags);
	void *arg;
};

/* Whoever watches the cluster (the Kubernetes controller) fills out with
 * what it has in flight: the pods it cannot place yet with the planner's
 * reasons, the NodeClaims being launched (page_inflight_add_pod/_claim;
 * the page frees it). Called on the HTTP thread for each fleet page: it
 * must be safe to call from there while the controller runs, and quick
 * (a copy of what the controller holds, not a call to the API server). */
typedef int (*coord_inflight_fn)(void *arg, struct page_inflight *out, struct dt_err *err);

/* The metrics the daemon updates directly (the gauges over the fleet are
 * computed at scrape time). */
struct coord_metrics {
	struct obs_registry *reg;
	struct obs_metric *reports;         /* {verdict} */
	struct obs_metric *refused;         /* {method, code} */
	struct obs_metric *rpc_seconds;     /* {method} histogram */
	struct obs_metric *store_errors;    /* {op} */
	struct obs_metric *commit_seconds;  /* histogram */
	struct obs_metric *commit_reports;  /* reports per commit, histogram */
};

struct coord {
	bool open;                          /* coord_open ran: coord_close undoes it */
	struct store *store;
	struct rec_options rec_opts;
	bool insecure;                      /* no client identities to check */
	/* The fleet, rebuilt and swapped when a commit fails: readers take
	 * the lock shared, the rebuild takes it exclusive. */
	pthread_rwlock_t fleet_lock;
	struct rec_fleet *fleet;
	bool fleet_stale;                   /* a rebuild failed: retry first */
	/* rec_report() and the enqueueing of its effects, in one order. */
	pthread_mutex_t apply_lock;
	struct coord_commit *commit;
	/* Plans are CPU-bound and run on the handlers' threads: at most
	 * max_plans at once, so that reports always find a free worker. */
	atomic_uint plans_running;
	unsigned max_plans;
	struct coord_cluster_source plan_source;   /* add NULL: no controller */
	struct coord_metrics m;
	/* In a cluster: the fleet's objects, the Lease (NULL out of one). */
	struct coord_cluster *cluster;
	_Atomic int role;               /* enum coord_role */
	/* --forget-after: the sweeper (coord_forget.c) forgets nodes silent
	 * that long; 0: never. */
	int64_t forget_after_ns;
	pthread_t sweep_thread;
	pthread_mutex_t sweep_lock;
	pthread_cond_t sweep_cond;
	bool sweep_inited, sweep_running, sweep_stop;
	/* The fleet page's pending pods and NodeClaims (coord_set_inflight);
	 * NULL: no controller, the page says so. */
	coord_inflight_fn inflight;
	void *inflight_arg;
};

/* ---- the state as a whole (coord_state.c) ---- */

struct coord_opts {
	const char *db;                 /* store URI (store_open); unused when store is set */
	struct store *store;            /* an open store to take over (tests' stubs), or NULL */
	struct rec_options rec;
	bool insecure;                  /* no client identities to check */
	unsigned max_plans;             /* plans at once; 0: COORD_DEFAULT_MAX_PLANS */
	int64_t forget_after_ns;        /* forget nodes silent that long; 0: never */
};

#define COORD_DEFAULT_MAX_PLANS 4

/* Metrics, store, the fleet restored from it, the committer. hwdb extras
 * are the caller's (hwdb_load_extra into the process's catalogue, before;
 * a plan's own come with its request). On error, coord_close still
 * frees what was opened (a given store included). */
int coord_open(struct coord *c, const struct coord_opts *o, struct dt_err *err);
/* Flush the queued reports, stop the committer, close the store. */
void coord_close(struct coord *c);
/* Run one call on c as the server would, without the network: path, the
 * request's bytes, who calls (NULL: no identity). 0 with *out (free with
 * rpc_invoke_result_free), -ENOMEM. For tests and fuzzing. */
int coord_invoke(struct coord *c, const char *path, const uint8_t *request, size_t len,
		 const struct rpc_peer *peer, struct rpc_invoke_result *out);

/* ---- the fleet (coord_restore.c) ---- */

/* A fresh fleet holding everything the store holds. *changes (may be
 * NULL) gets what re-verification against today's hwdb changed, for the
 * caller to write back. */
int coord_fleet_load(struct coord *c, struct rec_fleet **out, struct rec_changes *changes,
		     struct dt_err *err);
/* The fleet for reading, with fleet_lock held shared; coord_fleet_put
 * releases it. */
struct rec_fleet *coord_fleet_get(struct coord *c);
void coord_fleet_put(struct coord *c);

/* ---- the durable report path (coord_commit.c) ---- */

/* Writes to the cluster that a job makes before its store batches (a
 * report's effects are acknowledged only once both are durable). */
/* A NodeTopology's status, a LearnedType's, or a NodeTopology to delete
 * (a node forgotten; status NULL). */
enum coord_cw_kind { COORD_CW_NODE, COORD_CW_LEARNED, COORD_CW_FORGET };
struct coord_cw {
	enum coord_cw_kind kind;
	char *name;                     /* the node, or the learned type */
	struct json_object *status;     /* owned */
};
struct coord_cws {
	struct coord_cw *v;
	size_t n, cap;
};
void coord_cws_free(struct coord_cws *w);

int coord_commit_start(struct coord *c, struct dt_err *err);
/* Flush what is queued and stop the committer thread. */
void coord_commit_stop(struct coord *c);

/* Called once a queued report is durable (rc 0) or is not stored (rc
 * -EAGAIN, err says why: the store failed, and the fleet is as if the
 * report never came), on the committer thread: keep it short, never block. */
typedef void (*coord_report_done_fn)(void *arg, int rc, const struct dt_err *err);

/* Reconcile one decoded report r (from msg) and queue its effects for the
 * committer: 0 with *out filled (the caller frees it with
 * rec_outcome_free, not before done ran) and done(arg, ...) to come
 * exactly once, maybe before coord_report returns; or, with nothing queued
 * and done never called, -EINVAL (the report cannot be taken), -EAGAIN
 * (the fleet cannot be read back from the store), -ENOMEM. msg is packed
 * for the store (coord_report_pack) only when the node's
 * record is written whole; a heartbeat stores its sequence and times
 * only. The ack must wait for done: nothing is durable before. */
int coord_report(struct coord *c, const Dratopo__V1__TopologyReport *msg,
		 const struct rec_report *r, struct rec_outcome *out,
		 coord_report_done_fn done, void *arg, struct dt_err *err);
/* Write changes (from a restore) durably. */
int coord_persist_changes(struct coord *c, const struct rec_changes *changes,
			  struct dt_err *err);
/* Under the locks a report's effects are queued with (so in the same
 * order as reports), fn says what to write to the cluster; queue it and
 * wait until it is written. */
int coord_commit_with(struct coord *c,
		      int (*fn)(struct coord *c, void *arg, struct coord_cws *w), void *arg,
		      struct dt_err *err);
/* Wait until nothing is queued or being written. */
void coord_commit_idle(struct coord *c);
/* Jobs queued and not yet taken by the committer. */
size_t coord_commit_pending(struct coord *c);
/* Take f and s as the fleet and the store (a takeover), once the committer
 * is idle; the old ones are freed. */
void coord_replace(struct coord *c, struct rec_fleet *f, struct store *s);
/* Forget node in the fleet (rec_fleet_forget: *changes, its type's
 * conflict) and delete its record with those changes in one durable
 * transaction; returns once it is durable or failed. */
int coord_persist_forget(struct coord *c, const char *node, struct rec_changes *changes,
			 struct dt_err *err);

/* ---- Nodes that left (coord_forget.c) ---- */

/* Forget node: out of the fleet, its record deleted, durable before it
 * returns. -ENOENT: no such node. The hook for whatever learns that a node
 * left (the Kubernetes controller on a Node's deletion; Fleet.Forget). */
int coord_forget(struct coord *c, const char *node, struct dt_err *err);
/* The --forget-after sweeper: started by coord_open when
 * forget_after_ns > 0, stopped (and joined) by coord_close. */
int coord_sweeper_start(struct coord *c, struct dt_err *err);
void coord_sweeper_stop(struct coord *c);

/* ---- conversions (coord_convert.c) ---- */

/* A report as the reconciler takes it, pointing into msg; devs must have
 * room for msg->n_devices (at most REC_MAX_DEVICES). -EINVAL naming the
 * field for a report that cannot be one. */
int coord_report_from_pb(const Dratopo__V1__TopologyReport *msg, int64_t received_ns,
			 struct rec_device *devs, struct rec_report *out, struct dt_err *err);
/* The report as stored: msg packed with the fields this coordinator knows
 * only (not an older agent's predicted slices, field 12: the coordinator
 * predicts slices itself, from the devices). malloc'd. */
int coord_report_pack(const Dratopo__V1__TopologyReport *msg, uint8_t **out, size_t *len);
Dratopo__V1__Verdict coord_verdict_pb(enum rec_verdict v);
/* A Node message for a record; strings borrowed from n. */
void coord_node_pb(const struct rec_node *n, Dratopo__V1__Node *out);
/* A TypeSummary message for t; strings borrowed from t. */
void coord_type_pb(const struct rec_type_summary *t, Dratopo__V1__TypeSummary *out);
/* A store record for n (borrowing from it), with the report blob. */
void coord_node_record(const struct rec_node *n, const uint8_t *blob, size_t blob_len,
		       struct store_node *out);
/* A report as the store keeps it, packed from the reconciler's form (a
 * report read back from the cluster). malloc'd. */
int coord_report_pack_rec(const struct rec_report *r, uint8_t **out, size_t *len);

/* ---- the handlers ---- */

extern const struct rpc_method coord_methods[];
extern const size_t coord_n_methods;

/* GRPC_STATUS_OK when c serves calls, else the call failed UNAVAILABLE
 * saying why (a follower names the leader). */
grpc_status_code coord_refuse(struct rpc_ctx *ctx, struct coord *c);
/* Planner.Plan (coord_plan.c). */
grpc_status_code coord_plan(struct rpc_ctx *ctx, const ProtobufCMessage *request,
			    ProtobufCMessage **response);
void coord_plan_release(ProtobufCMessage *response, void *user);

/* Unix ns, CLOCK_REALTIME. */
int64_t coord_now_ns(void);

/* ---- plans (coord_plan.c) ---- */

/* Plans count what src adds from now on; set once, before the server
 * takes calls, and valid until coord_close. NULL: plans see only their
 * manifests and the fleet. */
void coord_set_cluster_source(struct coord *c, const struct coord_cluster_source *src);

/* ---- remedies (coord_remedy.c) ---- */

struct coord_remedies {
	struct strbuf yaml;             /* for kubectl apply (see coord_remedies_anchor) */
	struct strbuf lifts;            /* for kubectl delete --ignore-not-found -f - */
	size_t nodes_in_drift, device_taint_rules, node_taints;
	char **lifted;                  /* nodes matching again after a drift */
	size_t n_lifted, cap_lifted;
	char **unfit;                   /* nodes in drift that get the node taint */
	size_t n_unfit, cap_unfit;
};

/* The remedies of node (NULL or "": every node) as of now. Free with
 * coord_remedies_free (not needed after an error). */
int coord_remedies(struct coord *c, const char *node, struct coord_remedies *out,
		   struct dt_err *err);
/* End r->yaml with dt_remedy's anchor (rem_anchor_emit), summing r up,
 * after "# no node in drift" when r holds nothing: what Fleet.Remedies
 * sends, so that `kubectl apply -f -` always gets an object. Not for the
 * controller, which applies r's rules itself. 0 or -ENOMEM. */
int coord_remedies_anchor(struct coord_remedies *r, struct dt_err *err);
void coord_remedies_free(struct coord_remedies *r);

/* ---- in a cluster (coord_cluster.c) ---- */

struct coord_cluster_opts {
	const char *kubeconfig;         /* NULL: $KUBECONFIG, in-cluster, ~/.kube/config */
	const char *context;
	bool leader_elect;
	const char *lease_name;         /* NULL: "dratopo-coordinator" */
	const char *lease_namespace;    /* NULL: the configuration's (a pod's own) */
	int64_t lease_duration_ms, renew_deadline_ms, retry_period_ms;   /* 0: 15 s, 10 s, 2 s */
};

/* Connect, start the fleet's informers and, with leader_elect, the
 * election: until it leads, the coordinator is a follower. Without it, the
 * store stays the truth and the objects follow it. */
int coord_cluster_start(struct coord *c, const struct coord_cluster_opts *o,
			struct dt_err *err);
/* SIGTERM, once the calls in flight are drained: what they queued is
 * written, then the Lease is handed over (nothing is written after). */
void coord_cluster_release(struct coord *c);
void coord_cluster_stop(struct coord *c);
/* The elector (NULL without --leader-elect, or out of a cluster): other
 * writers fence their clients with it (kube_leader_fence). */
struct kube_leader *coord_cluster_leader(struct coord *c);
/* Whether this coordinator writes now: it runs without election, or it
 * leads, its fence open and its fleet rebuilt (not while taking over).
 * void * for a controller's callback. */
bool coord_leading(void *c);
/* Whether calls are served: 0, or -EAGAIN with why ("this coordinator does
 * not lead: X does ..."). */
int coord_serving(struct coord *c, struct dt_err *err);
/* /readyz's part: false with why while not serving its role. */
bool coord_cluster_ready(struct coord *c, char *why, size_t len);
/* With fleet_lock and apply_lock held: what a report's outcome makes the
 * cluster write (its node's object unless it is a heartbeat of a node not
 * written stale, other nodes it changed, learned types). */
int coord_cluster_report(struct coord *c, const struct rec_outcome *o, struct coord_cws *w);
/* With fleet_lock and apply_lock held, node just forgotten: its object
 * deleted, and what ch (rec_fleet_forget's) changed of other nodes. */
int coord_cluster_forget(struct coord *c, const char *node, const struct rec_changes *ch,
			 struct coord_cws *w);
/* What a restore's changes make the cluster write. */
int coord_cluster_changes(struct coord *c, const struct rec_changes *ch, struct coord_cws *w);
/* On the committer, before the store's transaction: the writes of ws[0..n)
 * (a transaction's jobs, in queue order): of several writes of one object
 * only the last is made, and the objects are written in parallel. 0 once
 * all are in the API server; else KUBE_ENOTLEADER (the fence closed) or
 * what the API server said. */
int coord_cluster_apply(struct coord *c, const struct coord_cws *const *ws, size_t n,
			struct dt_err *err);
/* ---- the status pages (coord_http.c) ---- */

/* The --http endpoint: /metrics, /healthz, /readyz (ready may be NULL;
 * it gets ready_arg),
 * and the pages: / (the fleet), /nodes/NAME, /types/NAME (?o=svg: the
 * picture alone, ?o=json: the node as `dratopo nodes -o json` has it),
 * /nodes.json and /types.json (exactly `dratopo nodes|types -o json`;
 * nodes.json takes the fleet page's filters). Read-only: GET and HEAD. */
int coord_http_start(struct coord *c, const char *addr, bool (*ready)(void *, char *, size_t),
		     void *ready_arg, struct obs_http **out, struct dt_err *err);
/* Where the fleet page gets what a controller has in flight; set it
 * before coord_http_start. */
void coord_set_inflight(struct coord *c, coord_inflight_fn fn, void *arg);

/* ---- metrics (coord_metrics.c) ---- */

int coord_metrics_init(struct coord *c, struct dt_err *err);
void coord_metrics_free(struct coord *c);
/* The rpc server's observer: latency per method, refusals per code. */
void coord_observe_rpc(void *user, const char *method, grpc_status_code code, double seconds);

#endif
