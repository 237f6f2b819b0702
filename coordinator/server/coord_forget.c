/* coord_forget.c - nodes that left: forgotten on request (Fleet.Forget,
 * `dratopo nodes --forget NAME`; the Kubernetes controller calls
 * coord_forget when a Node is deleted) and, with --forget-after, by a
 * sweeper thread once they have been silent that long. Forgetting is a
 * change like a report's: the fleet drops the node under apply_lock and
 * the committer deletes its record (and rewrites its type's conflict) in
 * one durable transaction before the caller hears "done". */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coord.h"
#include "obs_log.h"

int coord_forget(struct coord *c, const char *node, struct dt_err *err)
{
	struct rec_changes changes = { 0 };
	int rc;

	rc = coord_persist_forget(c, node, &changes, err);
	if (!rc) {
		obs_log(OBS_INFO, "node_forgotten", "node", node, NULL);
		for (size_t i = 0; i < changes.n_conflicts; i++)
			obs_log(OBS_WARN, changes.conflicts[i].n_shapes ? "conflict"
				: "conflict_resolved", "type", changes.conflicts[i].type, NULL);
	}
	rec_changes_free(&changes);
	return rc;
}

/* One sweep: every node silent for longer than forget_after. */
static void sweep(struct coord *c)
{
	struct dt_err err = { 0 };
	char **names = NULL;
	size_t n = 0;

	if (coord_serving(c, &err))
		return;                 /* a follower: the leader forgets */
	if (rec_fleet_silent(coord_fleet_get(c), coord_now_ns(), c->forget_after_ns, &names, &n,
			     &err))
		obs_log(OBS_ERROR, "forget_sweep_failed", "error", err.msg, NULL);
	coord_fleet_put(c);
	for (size_t i = 0; i < n; i++) {
		/* -ENOENT: it reported (or was forgotten) meanwhile. */
		if (coord_forget(c, names[i], &err) && err.code != -ENOENT)
			obs_log(OBS_ERROR, "forget_failed", "node", names[i], "error", err.msg,
				NULL);
		free(names[i]);
	}
	free(names);
}

static void *sweeper(void *arg)
{
	struct coord *c = arg;
	/* Often enough that a node goes within a quarter of --forget-after
	 * of its due time, at most once a minute. */
	int64_t period = c->forget_after_ns / 4;

	if (period > 60 * (int64_t)1000000000)
		period = 60 * (int64_t)1000000000;
	if (period < 100000000)
		period = 100000000;
	pthread_mutex_lock(&c->sweep_lock);
	while (!c->sweep_stop) {
		struct timespec until;

		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += (time_t)(period / 1000000000);
		until.tv_nsec += (long)(period % 1000000000);
		if (until.tv_nsec >= 1000000000) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000;
		}
		if (pthread_cond_timedwait(&c->sweep_cond, &c->sweep_lock, &until) != ETIMEDOUT)
			continue;
		pthread_mutex_unlock(&c->sweep_lock);
		sweep(c);
		pthread_mutex_lock(&c->sweep_lock);
	}
	pthread_mutex_unlock(&c->sweep_lock);
	return NULL;
}

int coord_sweeper_start(struct coord *c, struct dt_err *err)
{
	int rc;

	pthread_mutex_init(&c->sweep_lock, NULL);
	pthread_cond_init(&c->sweep_cond, NULL);
	c->sweep_inited = true;
	if (c->forget_after_ns <= 0)
		return 0;
	rc = pthread_create(&c->sweep_thread, NULL, sweeper, c);
	if (rc)
		return dt_err_set(err, -rc, "cannot start the forget sweeper: %s", strerror(rc));
	c->sweep_running = true;
	return 0;
}

void coord_sweeper_stop(struct coord *c)
{
	if (!c->sweep_inited)
		return;
	if (c->sweep_running) {
		pthread_mutex_lock(&c->sweep_lock);
		c->sweep_stop = true;
		pthread_cond_signal(&c->sweep_cond);
		pthread_mutex_unlock(&c->sweep_lock);
		pthread_join(c->sweep_thread, NULL);
		c->sweep_running = false;
	}
	pthread_cond_destroy(&c->sweep_cond);
	pthread_mutex_destroy(&c->sweep_lock);
	c->sweep_inited = false;
}
