/* ctrl_internal.h - what the controller's files share: its state and
 * the indices of its informers. Nothing outside coordinator/ctrl includes
 * it. */
#ifndef DT_CTRL_INTERNAL_H
#define DT_CTRL_INTERNAL_H

#include <pthread.h>
#include <stdint.h>

#include "ctrl.h"

#define KIND_COUNT 12
#define AVOID_MAX  64
#define JUDGED_MAX 4096         /* nodes whose slices were compared */
/* How long an instance type whose launch failed is avoided: Karpenter's
 * unavailable-offerings cache keeps an offering 3 minutes. */
#define AVOID_MS   (3 * 60 * 1000)

/* The informers, in the order objects join the planner's set (ctrl.c's
 * watched[]). */
enum { W_NODES = 4, W_TAINT_RULES = 6, W_PODS = 10, W_NODECLAIMS = 11 };

struct ctrl {
	struct ctrl_opts o;
	char instance[128];
	struct kube_client *kc;
	struct kube_recorder *rec;
	struct kube_informer *inf[KIND_COUNT];
	pthread_t thread;
	bool running;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool dirty, stop;
	int64_t first_dirty_ms, last_event_ms;
	struct ctrl_stats stats;
	/* Instance types a NodeClaim of ours failed to launch (deleted before
	 * it became a node), and until when they are avoided. Under lock. */
	struct { char type[64]; int64_t until_ms; } avoid[AVOID_MAX];
	size_t n_avoid;
	struct obs_metric *m_dry;               /* by verb and resource */
	struct obs_series *s_cycles, *s_written, *s_errors, *s_unsched;   /* NULL: no registry */
	struct obs_series *s_mismatch;
	/* Nodes whose published slices were compared with the plan's (hashes
	 * of their names). Under lock. */
	uint64_t judged[JUDGED_MAX];
	size_t n_judged;
};

/* Append key=value to a map of a set's object (labels, annotations). */
int ctrl_add_kv(struct model_set *set, struct model_kv **items, size_t *n, const char *key,
		const char *value);
/* The instance type a NodeClaim asks for (its one In value), or NULL. */
const char *ctrl_claim_type(const struct model_node_claim *nc);
/* Whether an object carries app.kubernetes.io/managed-by=dratopo. */
bool ctrl_ours(const struct model_object *o);
/* Registered NodeClaims of ours: their live slices against the plan's
 * (ctrl_verify.c). */
void ctrl_verify_registered(struct ctrl *c, struct model_set *set);
/* One round of remedies (ctrl_remedy.c). */
void ctrl_remedies(struct ctrl *c);

#endif
