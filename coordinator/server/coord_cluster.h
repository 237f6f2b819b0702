/* coord_cluster.h - what coord_cluster.c (the elector, the sweeps, the
 * takeover) and coord_cluster_writes.c (what a commit writes to the
 * cluster) share inside dt_coord: the cluster's state and the writes the
 * sweeps queue. Not for other modules: coord.h is dt_coord's interface. */
#ifndef DT_COORD_CLUSTER_H
#define DT_COORD_CLUSTER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "coord.h"

struct kube_client;
struct kube_leader;
struct cluster_sync;

struct coord_cluster {
	struct coord *c;
	struct kube_client *kc;         /* objects, labels; fenced when electing */
	struct kube_client *lease_kc;   /* the elector's own */
	struct kube_leader *le;         /* NULL without --leader-elect */
	struct cluster_sync *sync;
	char identity[300];
	char pod[254], pod_ns[254];     /* this pod (for the leader label); "" outside one */
	char lease[600];                /* "ns/name", for messages */
	pthread_t thread;
	bool running;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool stop, takeover;            /* under lock */
	char holder[256];               /* the leader last seen, under lock */
	double takeover_s;              /* the last rebuild's duration */
	uint64_t takeovers;
	atomic_bool resync;             /* SOLE: a write failed, the next sweep is a full pass */
	int64_t resync_logged_ms;
};

/* How long a node may be silent before it is stale (--stale-after). */
int64_t coord_cluster_stale_after(const struct coord *c);
/* Add node name's status to w (once), with fleet_lock held. only_if_differs:
 * not when the API server holds the same content (the sweeps; a report's
 * own changes are always queued, since what the server holds may be behind
 * the queue). */
int coord_cluster_add_node(struct coord *c, const char *name, int64_t now, bool only_if_differs,
			   struct coord_cws *w);
/* Add learned type l's LearnedType status to w. */
int coord_cluster_add_learned(struct coord *c, const struct rec_learned *l, struct coord_cws *w);

#endif
