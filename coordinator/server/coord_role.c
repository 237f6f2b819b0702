/* coord_role.c - what a coordinator's role (coord.h) means to its callers:
 * whether it writes now (a leader whose fence is open, or one without
 * election), whether calls are served and why not (a follower names the
 * leader), and its part of /readyz. Read by the handlers, the committer,
 * the controller's fence and the cluster's own thread alike. */
#include <errno.h>
#include <stdio.h>

#include "cluster.h"
#include "coord_cluster.h"
#include "kube_leader.h"

bool coord_leading(void *arg)
{
	const struct coord *c = arg;
	int role = atomic_load(&c->role);

	return role == COORD_SOLE ||
	       (role == COORD_LEADER && c->cluster && kube_leader_leading(c->cluster->le));
}

int coord_serving(struct coord *c, struct dt_err *err)
{
	struct coord_cluster *cc = c->cluster;
	int role = atomic_load(&c->role);
	char holder[256];

	/* a leader whose fence closed before its elector said so is refused */
	if (coord_leading(c))
		return 0;
	if (role == COORD_TAKING_OVER)
		return dt_err_set(err, -EAGAIN, "this coordinator is taking over: its fleet is being "
				  "rebuilt from the cluster; try again");
	if (!cc)
		return dt_err_set(err, -EAGAIN, "this coordinator is stopping");
	pthread_mutex_lock(&cc->lock);
	snprintf(holder, sizeof(holder), "%s", cc->holder);
	pthread_mutex_unlock(&cc->lock);
	return dt_err_set(err, -EAGAIN, "this coordinator does not lead (Lease %s is held by %s): "
			  "the leader serves; try again", cc->lease, holder[0] ? holder : "nobody yet");
}

grpc_status_code coord_refuse(struct rpc_ctx *ctx, struct coord *c)
{
	struct dt_err err = { 0 };

	return coord_serving(c, &err) ? rpc_ctx_fail(ctx, GRPC_STATUS_UNAVAILABLE, "%s", err.msg)
				      : GRPC_STATUS_OK;
}

bool coord_cluster_ready(struct coord *c, char *why, size_t len)
{
	struct coord_cluster *cc = c->cluster;

	if (!cc)
		return true;
	if (atomic_load(&c->role) == COORD_TAKING_OVER) {
		snprintf(why, len, "taking over: rebuilding the fleet from the cluster");
		return false;
	}
	if (!cluster_sync_wait_synced(cc->sync, 0)) {
		snprintf(why, len, "the fleet's objects (nodetopologies, learnedtypes) are not "
			 "listed yet");
		return false;
	}
	return true;
}
