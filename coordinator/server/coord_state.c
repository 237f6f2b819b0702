/* coord_state.c - the coordinator's state as a whole: opened (metrics,
 * store, the fleet restored from it, the committer, what the restore
 * changed written back) and closed, and one RPC run on it without the
 * network (rpc_invoke over coord_methods), for the unit suite and the
 * handlers' fuzz target. coordinator_main.c adds the process around it:
 * options, hwdb extras, HTTP, the gRPC server, signals. */
#include <errno.h>
#include <string.h>

#include "coord.h"

int coord_open(struct coord *c, const struct coord_opts *o, struct dt_err *err)
{
	struct rec_changes changes = { 0 };
	pthread_rwlockattr_t rwa;
	int rc;

	memset(c, 0, sizeof(*c));
	c->rec_opts = o->rec;
	c->insecure = o->insecure;
	/* Writers first: a rebuild after a failed commit must not starve
	 * behind a stream of readers. */
	pthread_rwlockattr_init(&rwa);
	pthread_rwlockattr_setkind_np(&rwa, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&c->fleet_lock, &rwa);
	pthread_rwlockattr_destroy(&rwa);
	pthread_mutex_init(&c->apply_lock, NULL);
	c->max_plans = o->max_plans ? o->max_plans : COORD_DEFAULT_MAX_PLANS;
	c->forget_after_ns = o->forget_after_ns;
	c->open = true;
	c->store = o->store;
	if ((rc = coord_metrics_init(c, err)))
		return rc;
	if (!c->store && (rc = store_open(o->db, NULL, &c->store, err)))
		return dt_err_prefix(err, "--db %s: ", o->db);
	if ((rc = coord_fleet_load(c, &c->fleet, &changes, err)))
		return rc;
	rc = coord_commit_start(c, err);
	if (!rc)
		rc = coord_persist_changes(c, &changes, err);
	if (!rc)
		rc = coord_sweeper_start(c, err);
	rec_changes_free(&changes);
	return rc;
}

void coord_close(struct coord *c)
{
	if (!c->open)
		return;
	coord_sweeper_stop(c);
	coord_commit_stop(c);
	rec_fleet_free(c->fleet);
	store_close(c->store);
	coord_metrics_free(c);
	pthread_mutex_destroy(&c->apply_lock);
	pthread_rwlock_destroy(&c->fleet_lock);
	memset(c, 0, sizeof(*c));
}

int coord_invoke(struct coord *c, const char *path, const uint8_t *request, size_t len,
		 const struct rpc_peer *peer, struct rpc_invoke_result *out)
{
	struct rpc_invoke in = {
		.methods = coord_methods, .n_methods = coord_n_methods, .user = c, .path = path,
		.request = request, .request_len = len, .peer = peer, .deadline_ms = 60000,
	};
	int rc = rpc_invoke(&in, out);

	if (!rc)
		coord_observe_rpc(c, path, out->status, 0);
	return rc;
}
