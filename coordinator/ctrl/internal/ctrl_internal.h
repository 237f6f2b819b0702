/* ctrl_internal.h - what the controller's files share: its state, the
 * informers' order, and the parts of a plan cycle. Nothing outside
 * coordinator/ctrl includes it (its test suite may: INTERNAL). */
#ifndef DT_CTRL_INTERNAL_H
#define DT_CTRL_INTERNAL_H

#include <pthread.h>
#include <stdint.h>

#include "ctrl.h"
#include "u64map.h"

#define KIND_COUNT 12
#define OFFERS_MAX 256          /* unavailable offerings remembered */
/* How long an offering whose launch failed is avoided: Karpenter's
 * unavailable-offerings cache keeps one 3 minutes (UnavailableOfferingsTTL). */
#define OFFER_TTL_MS (3 * 60 * 1000)
/* How long a pending pod waits for what its plan needs (a ResourceClaim it
 * names, its template) before it is planned anyway, and its Warning says
 * what is missing. */
#define WAIT_GRACE_MS (30 * 1000)
#define WAITING_MAX 4096
/* NodeClaims applied at once (the API server takes writes in parallel). */
#define WRITERS 8

/* The informers, in the order objects join the planner's set (ctrl.c's
 * watched[]). */
enum {
	W_DEVICE_CLASSES, W_NODEPOOLS, W_EC2NODECLASSES, W_NODEOVERLAYS, W_NODES,
	W_SLICES, W_TAINT_RULES, W_DAEMONSETS, W_TEMPLATES, W_CLAIMS, W_PODS, W_NODECLAIMS,
};

struct ctrl;

/* The argument of one informer's events: which kind they are. */
struct ctrl_watch {
	struct ctrl *c;
	size_t which;
};

/* The batch window (ctrl_batch.c), under ctrl.lock. */
struct ctrl_batch {
	bool open;
	int64_t opened_ms, last_ms;     /* monotonic */
	struct u64map uids;             /* pods that triggered this window */
	struct u64map prints;           /* object key -> what a plan reads of it */
	/* Pods waiting for what their plan needs. */
	struct { uint64_t key; char ns[64], name[256], uid[64]; int64_t since_ms; } *waiting;
	size_t n_waiting, cap_waiting;
};

/* An offering that failed to launch, and until when it is avoided. */
struct ctrl_offer {
	char type[64], zone[64], ct[16];        /* "" zone or ct: any */
	int64_t until_ms;
};

/* Dry run's record of the writes it logged, so each is logged once per
 * change (ctrl_write.c): this round's and the last one's, by scope. */
enum ctrl_scope { SCOPE_PLAN, SCOPE_REMEDY, SCOPE_COUNT };
struct ctrl_ledger {
	struct u64map last, now;
};

/* What the status page shows (ctrl_view.c), under view_lock. An entry's
 * strings are one block, owned by its first (ns, name). */
struct ctrl_view_pod {
	char *ns, *name, *reason;
	int64_t since_ns;
};
struct ctrl_view_claim {
	char *name, *pool, *type, *state;
	int64_t created_ns;
};
struct ctrl_view {
	int64_t as_of_ns;               /* 0: no plan yet */
	struct ctrl_view_pod *pods;
	size_t n_pods, more_pods, cap_pods;
	struct ctrl_view_claim *claims;
	size_t n_claims, more_claims, cap_claims;
};

struct ctrl {
	struct ctrl_opts o;
	char instance[128];
	struct kube_client *kc;
	struct kube_recorder *rec;
	struct kube_informer *inf[KIND_COUNT];
	struct ctrl_watch watch[KIND_COUNT];
	pthread_t thread;
	bool running;
	pthread_mutex_t lock;           /* batch, offers, stats, judged */
	pthread_cond_t cond;
	bool stop;
	struct ctrl_batch batch;
	struct ctrl_stats stats;
	struct ctrl_offer offers[OFFERS_MAX];
	size_t n_offers;
	struct u64map judged;           /* nodes whose slices were compared */
	struct ctrl_ledger ledger[SCOPE_COUNT];         /* the planning thread's */
	pthread_mutex_t view_lock;
	struct ctrl_view view;
	struct obs_metric *m_dry;               /* by verb and resource */
	struct obs_series *s_cycles, *s_written, *s_errors, *s_unsched;   /* NULL: no registry */
	struct obs_series *s_mismatch;
};

/* ---- ctrl_objects.c: what every file reads of objects ---- */

/* Append key=value to a map of a set's object (labels, annotations). */
int ctrl_add_kv(struct model_set *set, struct model_kv **items, size_t *n, const char *key,
		const char *value);
/* The value of a NodeClaim's requirement on key when it is In one value,
 * or NULL: its instance type, its capacity type. */
const char *ctrl_claim_req(const struct model_node_claim *nc, const char *key);
const char *ctrl_claim_type(const struct model_node_claim *nc);
/* Whether an object carries app.kubernetes.io/managed-by=dratopo. */
bool ctrl_ours(const struct model_object *o);

/* ---- ctrl_batch.c: when to plan ---- */

/* The monotonic clock in ms: the window's, the offerings' and the loop's. */
int64_t ctrl_now_ms(void);

/* A pod the controller plans: pending (not bound, not finished, not
 * going, no scheduling gate holding it) and asking for claims, or for
 * extended resources (POD_EXTRES: its only when a DeviceClass backs one,
 * which the snapshot decides; nvidia.com/gpu of the device plugin is
 * Karpenter's); bound pods stay in the plan as capacity in use; the others
 * are not its. The class fits in two bits (ctrl_batch.c's fingerprints). */
enum ctrl_pod_class { POD_OTHER, POD_BOUND, POD_PENDING, POD_EXTRES };
enum ctrl_pod_class ctrl_pod_class(const struct model_object *pod);
/* Whether a container of the pod asks for an extended resource; with set,
 * only for one a DeviceClass of set backs (plan_extres_backed). */
bool ctrl_pod_asks_extended(const struct model_object *pod, const struct model_set *set);
/* The key of an object of informer which in the batch's maps. */
uint64_t ctrl_object_key(size_t which, const char *ns, const char *name);

/* An informer's event (on its thread): triggers, nudges, waiting pods. */
void ctrl_batch_event(struct ctrl *c, size_t which, enum kube_event_type type,
		      const struct kube_object *obj);
/* When the open window is due (INT64_MAX: none open). Under lock. */
int64_t ctrl_batch_due(struct ctrl *c);
/* The window closes (a plan starts): what triggered it is forgotten, and
 * waiting pods past their grace are let in. Under lock. */
void ctrl_batch_close(struct ctrl *c);
/* Plan at the next look (a takeover, a test). Under lock. */
void ctrl_batch_now(struct ctrl *c);
/* Whether the pod ns/name waits for what its plan needs. Under lock. */
bool ctrl_batch_waiting(struct ctrl *c, const char *ns, const char *name);
void ctrl_batch_free(struct ctrl_batch *b);

/* ---- ctrl_offers.c: offerings that failed to launch ---- */

/* A NodeClaim of ours was deleted before it became a node: its offerings
 * (type, capacity type, each zone it allowed or every zone) are avoided
 * for OFFER_TTL_MS. Under lock. */
void ctrl_offers_failed(struct ctrl *c, const struct model_object *claim);
/* The offerings avoided now, copied into set's arena for the planner. */
int ctrl_offers_list(struct ctrl *c, struct model_set *set, struct plan_unavailable **out,
		     size_t *n);

/* ---- ctrl_snapshot.c: the cluster as the planner's input ---- */

struct ctrl_cycle {
	struct model_set *set;          /* the planner's input */
	struct u64map in_flight;        /* names of NodeClaims counted as nodes */
	struct plan_unavailable *unavailable;
	size_t n_unavailable;
	struct plan_made_for *made_for; /* our NodeClaims' pods, in set's arena */
	size_t n_made_for;
};
int ctrl_snapshot(struct ctrl *c, struct ctrl_cycle *cy, struct dt_err *err);
/* The slices the drivers will publish on a node launched for claim (its
 * type, and its EC2NodeClass's consumable-capacity mode and MIG layout,
 * the class found in classes), built in into, named for node. 0, or a negative code (-ENOENT: a type hwdb does not
 * know). */
int ctrl_predict(const struct model_set *classes, struct model_set *into,
		 const struct model_object *claim, const char *node, struct model_object **out,
		 size_t *n, struct dt_err *err);

/* ---- ctrl_write.c: what the controller writes ---- */

/* The one gate of every write: false in dry run (the write is logged
 * once per change in its scope, and counted), true otherwise. detail:
 * extra logfmt pairs (key, value, ..., NULL) for the dry run's line. */
bool ctrl_gate(struct ctrl *c, enum ctrl_scope scope, const char *verb, const char *resource,
	       const char *name, ...) __attribute__((sentinel));
/* A round of a scope ended: what was not asked again is forgotten. */
void ctrl_gate_round(struct ctrl *c, enum ctrl_scope scope);
/* The plan's new NodeClaims, applied (WRITERS at once); *written gets
 * how many. ncs: the plan's NodeClaims decoded. */
void ctrl_write_claims(struct ctrl *c, struct ctrl_cycle *cy, const struct plan_result *res,
		       struct model_set *ncs, const char *plan_id, size_t *written);
/* Warning Events for the pods the plan cannot place. */
void ctrl_warn_unschedulable(struct ctrl *c, const struct plan_result *res);

/* ---- ctrl_view.c: the status page's view ---- */

/* Rebuilt after each plan from its result and the cycle's cluster. */
void ctrl_view_update(struct ctrl *c, const struct ctrl_cycle *cy,
		      const struct plan_result *res);
void ctrl_view_free(struct ctrl_view *v);

/* ---- ctrl_verify.c, ctrl_remedy.c ---- */

/* Registered NodeClaims of ours: their live slices against the plan's. */
void ctrl_verify_registered(struct ctrl *c, struct model_set *set);
/* One round of remedies (the caller waits until the informers listed). */
void ctrl_remedies(struct ctrl *c);

#endif
