/* coord_commit.c - the durable report path: reconcile in memory, queue the
 * effects, group commit them, acknowledge.
 *
 * A handler reconciles its report (rec_report) and queues a job holding the
 * store batches for what changed, both under apply_lock so that the queue is
 * in the order the fleet saw the reports. The committer thread takes every
 * queued job, writes them all in one store_commit (one transaction, one
 * fdatasync) and then completes each job: a report's job calls its done
 * function on the committer thread (the handler answers its deferred call
 * there, so no handler thread sleeps on a commit and none is woken for it);
 * coord_persist_changes waits for its job instead. Concurrent reports
 * therefore share one disk flush, which is what keeps a durable ack cheap.
 *
 * A commit that fails rolls memory back to the store: with fleet_lock held
 * exclusively (so no report is between its reconcile and its enqueue), every
 * job of the failed transaction and every job queued after it fails, and the
 * fleet is rebuilt from the store. When even that fails (the store cannot be
 * read), fleet_stale stays set and reports are refused until a rebuild works.
 *
 * Records of other nodes that a report changed (the quorum becoming
 * `learned`) carry no report blob of their own: the committer takes the
 * newest one, from an earlier job of the same transaction or from the store,
 * which is right because a transaction is always a prefix of the queue.
 *
 * In a cluster a job also carries what it makes the API server hold (the
 * NodeTopology and LearnedType objects it changed: coord_cluster.c). The
 * committer writes those first, then the store's transaction, and only then
 * answers: a write the API server refused (or a fence that closed: this
 * coordinator no longer leads) fails the commit as a store failure does. The
 * committer is the only writer of those objects, so they change in the
 * order the reports came. */
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "array.h"
#include "coord.h"
#include "obs_log.h"

#define MAX_JOBS_PER_COMMIT 512
#define MAX_CLUSTER_WRITES_PER_COMMIT 64

struct job {
	struct job *next;
	struct store_batch *batches;
	size_t n_batches, cap_batches;
	struct store_node *nodes;           /* [0] the reporter, when there is one */
	bool touch;                         /* nodes[0] is a heartbeat: no blob */
	bool *need_blob;
	size_t n_nodes;
	struct store_learned *learned;
	struct store_conflict *rows;
	struct store_node *fetched;         /* records read for their blobs */
	uint8_t *blob;                      /* the reporter's packed report, owned */
	size_t n_fetched;
	struct coord_cws cw;                /* written to the cluster first */
	int rc;
	struct dt_err err;
	/* Completion: done_fn(done_arg, rc, err) on the committer thread, after
	 * which the committer frees the job; or, without done_fn, a waiter on
	 * its own condition (so a commit wakes exactly the waiters it answers). */
	coord_report_done_fn done_fn;
	void *done_arg;
	bool done;
	pthread_cond_t cond;
};

struct coord_commit {
	struct coord *c;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t work;
	pthread_cond_t idle;                /* nothing queued, nothing being written */
	struct job *head, *tail;
	size_t queued;                      /* jobs between head and tail */
	bool busy;
	bool stop;
};

void coord_cws_free(struct coord_cws *w)
{
	for (size_t i = 0; i < w->n; i++) {
		free(w->v[i].name);
		json_object_put(w->v[i].status);
	}
	free(w->v);
	memset(w, 0, sizeof(*w));
}

static void job_free(struct job *j)
{
	if (!j)
		return;
	for (size_t i = 0; i < j->n_fetched; i++)
		store_node_done(&j->fetched[i]);
	free(j->fetched);
	free(j->blob);
	free(j->batches);
	free(j->nodes);
	free(j->need_blob);
	free(j->learned);
	free(j->rows);
	coord_cws_free(&j->cw);
	pthread_cond_destroy(&j->cond);
	free(j);
}

static void learned_record(const struct rec_learned *l, struct store_learned *out)
{
	*out = (struct store_learned){ l->type, l->shape_key, l->source, l->nodes, l->n_nodes,
				       l->learned_ns };
}

/* The store batches for what one report (node, may be NULL) and its side
 * effects changed: node's whole record with blob, or, for a heartbeat
 * (touch), only its sequence and times. Everything is borrowed from node,
 * blob and ch. */
static struct job *job_new(const struct rec_node *node, bool touch, const uint8_t *blob,
			   size_t blob_len, const struct rec_changes *ch)
{
	struct job *j = calloc(1, sizeof(*j));
	size_t n_rows = 0, b = 0, r = 0, k = 0;
	int64_t now = coord_now_ns();

	if (!j)
		return NULL;
	pthread_cond_init(&j->cond, NULL);
	j->touch = node && touch;
	for (size_t i = 0; i < ch->n_conflicts; i++)
		for (size_t s = 0; s < ch->conflicts[i].n_shapes; s++)
			n_rows += ch->conflicts[i].shapes[s].n_nodes;
	j->n_nodes = (node ? 1 : 0) + ch->n_nodes;
	j->n_batches = j->n_nodes + ch->n_learned + ch->n_conflicts;
	j->cap_batches = j->n_batches + 1;
	j->batches = calloc(j->cap_batches, sizeof(*j->batches));
	j->nodes = calloc(j->n_nodes + 1, sizeof(*j->nodes));
	j->need_blob = calloc(j->n_nodes + 1, sizeof(*j->need_blob));
	j->learned = calloc(ch->n_learned + 1, sizeof(*j->learned));
	j->rows = calloc(n_rows + 1, sizeof(*j->rows));
	j->fetched = calloc(j->n_nodes + 1, sizeof(*j->fetched));
	if (!j->batches || !j->nodes || !j->need_blob || !j->learned || !j->rows || !j->fetched) {
		job_free(j);
		return NULL;
	}
	if (node)
		coord_node_record(node, blob, blob_len, &j->nodes[k++]);
	for (size_t i = 0; i < ch->n_nodes; i++, k++) {
		coord_node_record(&ch->nodes[i], NULL, 0, &j->nodes[k]);
		j->need_blob[k] = true;
	}
	for (size_t i = 0; i < j->n_nodes; i++) {
		if (i == 0 && j->touch)
			j->batches[b++].touch = &j->nodes[i];
		else
			j->batches[b++].node = &j->nodes[i];
	}
	for (size_t i = 0; i < ch->n_learned; i++) {
		learned_record(&ch->learned[i], &j->learned[i]);
		j->batches[b++].learned = &j->learned[i];
	}
	for (size_t i = 0; i < ch->n_conflicts; i++) {
		const struct rec_conflict *cf = &ch->conflicts[i];
		struct store_batch *sb = &j->batches[b++];

		sb->clear_conflicts_type = cf->type;
		sb->conflicts = &j->rows[r];
		for (size_t s = 0; s < cf->n_shapes; s++)
			for (size_t n = 0; n < cf->shapes[s].n_nodes; n++)
				j->rows[r++] = (struct store_conflict){ cf->type,
					cf->shapes[s].shape_key, cf->shapes[s].nodes[n], now };
		sb->n_conflicts = (size_t)(&j->rows[r] - sb->conflicts);
	}
	return j;
}

/* ---- the committer ---- */

/* The newest blob of node name written before jobs[ji].nodes[ni] in this
 * transaction, or NULL. A heartbeat writes none: the blob before it (here
 * or in the store) holds the same devices. */
static const struct store_node *earlier_blob(struct job **jobs, size_t ji, size_t ni,
					     const char *name)
{
	for (size_t j = ji + 1; j-- > 0;) {
		for (size_t k = (j == ji ? ni : jobs[j]->n_nodes); k-- > 0;) {
			const struct store_node *n = &jobs[j]->nodes[k];

			if (!jobs[j]->need_blob[k] && !(k == 0 && jobs[j]->touch) &&
			    !strcmp(n->name, name))
				return n;
		}
	}
	return NULL;
}

static int fill_blobs(struct coord *c, struct job **jobs, size_t n_jobs, struct dt_err *err)
{
	for (size_t ji = 0; ji < n_jobs; ji++) {
		struct job *j = jobs[ji];

		for (size_t k = 0; k < j->n_nodes; k++) {
			const struct store_node *src;
			int rc;

			if (!j->need_blob[k])
				continue;
			src = earlier_blob(jobs, ji, k, j->nodes[k].name);
			if (!src) {
				struct store_node *f = &j->fetched[j->n_fetched];

				rc = store_get_node(c->store, j->nodes[k].name, f, err);
				if (rc == -ENOENT)
					continue;       /* never stored: nothing to keep */
				if (rc)
					return rc;
				j->n_fetched++;
				src = f;
			}
			j->nodes[k].report = src->report;
			j->nodes[k].report_len = src->report_len;
			j->nodes[k].first_seen_ns = src->first_seen_ns;
		}
	}
	return 0;
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int commit_jobs(struct coord *c, struct job **jobs, size_t n_jobs, struct dt_err *err)
{
	struct store_batch *all;
	size_t n = 0;
	double t0 = mono_s();
	int rc = 0;

	if (c->cluster) {
		const struct coord_cws *ws[MAX_JOBS_PER_COMMIT];

		for (size_t i = 0; i < n_jobs; i++)
			ws[i] = &jobs[i]->cw;
		rc = coord_cluster_apply(c, ws, n_jobs, err);
	}
	if (!rc)
		rc = fill_blobs(c, jobs, n_jobs, err);
	if (rc)
		return rc;
	for (size_t i = 0; i < n_jobs; i++)
		n += jobs[i]->n_batches;
	if (!n)
		return 0;
	all = malloc(n * sizeof(*all));
	if (!all)
		return dt_err_set(err, -ENOMEM, "out of memory");
	n = 0;
	for (size_t i = 0; i < n_jobs; i++) {
		memcpy(all + n, jobs[i]->batches, jobs[i]->n_batches * sizeof(*all));
		n += jobs[i]->n_batches;
	}
	rc = store_commit(c->store, all, n, err);
	free(all);
	obs_observe(obs_series(c->m.commit_seconds, NULL), mono_s() - t0);
	obs_observe(obs_series(c->m.commit_reports, NULL), (double)n_jobs);
	return rc;
}

/* Rebuild the fleet from the store, with fleet_lock held exclusively. */
static void rebuild_locked(struct coord *c)
{
	struct rec_fleet *nf = NULL;
	struct dt_err err = { 0 };

	if (coord_fleet_load(c, &nf, NULL, &err)) {
		c->fleet_stale = true;
		obs_log(OBS_ERROR, "fleet_rebuild_failed", "error", err.msg, NULL);
		return;
	}
	rec_fleet_free(c->fleet);
	c->fleet = nf;
	c->fleet_stale = false;
	obs_log(OBS_WARN, "fleet_rebuilt", "reason", "a commit failed: memory set back to the store",
		NULL);
}

/* With cm->lock held: wake j's waiter, or put j on *callbacks for
 * run_callbacks once the locks are released. */
static void job_done(struct job *j, int rc, const struct dt_err *err, struct job **callbacks)
{
	j->rc = rc;
	if (rc && err)
		j->err = *err;
	if (j->done_fn) {
		j->next = *callbacks;
		*callbacks = j;
		return;
	}
	j->done = true;
	pthread_cond_signal(&j->cond);
}

/* Without locks: the done functions answer calls, log, count. */
static void run_callbacks(struct job *j)
{
	for (struct job *next; j; j = next) {
		next = j->next;
		j->done_fn(j->done_arg, j->rc, j->rc ? &j->err : NULL);
		job_free(j);
	}
}

static void finish(struct coord_commit *cm, struct job **jobs, size_t n, int rc,
		   const struct dt_err *err, struct job **callbacks)
{
	pthread_mutex_lock(&cm->lock);
	for (size_t i = n; i-- > 0;)    /* pushed in reverse: run in queue order */
		job_done(jobs[i], rc, err, callbacks);
	pthread_mutex_unlock(&cm->lock);
}

/* The commit failed: fail its jobs and every queued one, then set the
 * fleet back to what the store holds. */
static void roll_back(struct coord_commit *cm, struct job **jobs, size_t n, int rc,
		      const struct dt_err *err)
{
	struct coord *c = cm->c;
	struct job *q, *next, *callbacks = NULL, *behind_cb = NULL;
	struct dt_err behind = *err;

	dt_err_prefix(&behind, "an earlier report in the same commit failed: ");
	obs_inc(obs_series(c->m.store_errors, "commit", NULL));
	obs_log(OBS_ERROR, "store_error", "op", "commit", "error", err->msg, NULL);
	pthread_rwlock_wrlock(&c->fleet_lock);
	finish(cm, jobs, n, rc, err, &callbacks);
	pthread_mutex_lock(&cm->lock);
	q = cm->head;
	cm->head = cm->tail = NULL;
	cm->queued = 0;
	for (; q; q = next) {
		next = q->next;         /* q may be freed once done */
		job_done(q, rc, &behind, &behind_cb);
	}
	pthread_mutex_unlock(&cm->lock);
	rebuild_locked(c);
	pthread_rwlock_unlock(&c->fleet_lock);
	run_callbacks(callbacks);
	run_callbacks(behind_cb);       /* in reverse queue order: all fail alike */
}

static void *committer_main(void *arg)
{
	struct coord_commit *cm = arg;
	struct job *jobs[MAX_JOBS_PER_COMMIT];

	for (;;) {
		struct dt_err err = { 0 };
		size_t n = 0;
		int rc;

		pthread_mutex_lock(&cm->lock);
		cm->busy = false;
		while (!cm->head && !cm->stop) {
			pthread_cond_broadcast(&cm->idle);
			pthread_cond_wait(&cm->work, &cm->lock);
		}
		if (!cm->head) {
			pthread_mutex_unlock(&cm->lock);
			return NULL;
		}
		cm->busy = true;
		/* a commit writes at most so many objects to the API server, so
		 * that the reports behind it are answered in steps, not after
		 * one long burst */
		for (size_t writes = 0; cm->head && n < MAX_JOBS_PER_COMMIT &&
		     (n == 0 || writes + cm->head->cw.n <= MAX_CLUSTER_WRITES_PER_COMMIT);) {
			writes += cm->head->cw.n;
			jobs[n++] = cm->head;
			cm->head = cm->head->next;
			cm->queued--;
		}
		if (!cm->head)
			cm->tail = NULL;
		pthread_mutex_unlock(&cm->lock);
		rc = commit_jobs(cm->c, jobs, n, &err);
		if (rc) {
			roll_back(cm, jobs, n, rc, &err);
		} else {
			struct job *callbacks = NULL;

			finish(cm, jobs, n, 0, NULL, &callbacks);
			run_callbacks(callbacks);
		}
	}
}

int coord_commit_start(struct coord *c, struct dt_err *err)
{
	struct coord_commit *cm = calloc(1, sizeof(*cm));

	if (!cm)
		return dt_err_set(err, -ENOMEM, "out of memory");
	cm->c = c;
	pthread_mutex_init(&cm->lock, NULL);
	pthread_cond_init(&cm->work, NULL);
	pthread_cond_init(&cm->idle, NULL);
	if (pthread_create(&cm->thread, NULL, committer_main, cm)) {
		free(cm);
		return dt_err_set(err, -EAGAIN, "cannot start the committer thread");
	}
	c->commit = cm;
	return 0;
}

void coord_commit_stop(struct coord *c)
{
	struct coord_commit *cm = c->commit;

	if (!cm)
		return;
	pthread_mutex_lock(&cm->lock);
	cm->stop = true;
	pthread_cond_signal(&cm->work);
	pthread_mutex_unlock(&cm->lock);
	pthread_join(cm->thread, NULL);
	pthread_cond_destroy(&cm->work);
	pthread_cond_destroy(&cm->idle);
	pthread_mutex_destroy(&cm->lock);
	free(cm);
	c->commit = NULL;
}

static void enqueue(struct coord_commit *cm, struct job *j)
{
	pthread_mutex_lock(&cm->lock);
	if (cm->tail)
		cm->tail->next = j;
	else
		cm->head = j;
	cm->tail = j;
	cm->queued++;
	pthread_cond_signal(&cm->work);
	pthread_mutex_unlock(&cm->lock);
}

/* Wait for j, take its result, free it. */
static int wait_job(struct coord_commit *cm, struct job *j, struct dt_err *err)
{
	int rc;

	pthread_mutex_lock(&cm->lock);
	while (!j->done)
		pthread_cond_wait(&j->cond, &cm->lock);
	pthread_mutex_unlock(&cm->lock);
	rc = j->rc;
	if (rc && err)
		*err = j->err;
	job_free(j);
	return rc;
}

/* A stale fleet (a rebuild failed) gets another try before any report. */
static int fresh_fleet(struct coord *c, struct dt_err *err)
{
	bool stale;

	pthread_rwlock_rdlock(&c->fleet_lock);
	stale = c->fleet_stale;
	pthread_rwlock_unlock(&c->fleet_lock);
	if (!stale)
		return 0;
	pthread_rwlock_wrlock(&c->fleet_lock);
	if (c->fleet_stale)
		rebuild_locked(c);
	stale = c->fleet_stale;
	pthread_rwlock_unlock(&c->fleet_lock);
	return stale ? dt_err_set(err, -EAGAIN, "the store cannot be read back after a failed "
				  "write; reports wait until it can") : 0;
}

/* The job for a reconciled report, with fleet_lock and apply_lock held. A
 * report whose record is written whole is packed here, and only then:
 * heartbeats and replays, the steady state, never are. */
static struct job *report_job(const Dratopo__V1__TopologyReport *msg,
			      const struct rec_outcome *o)
{
	static const struct rec_changes none;
	uint8_t *blob = NULL;
	size_t len = 0;
	struct job *j;

	/* A replay changes nothing, but is acknowledged only once whatever
	 * it replays (maybe still queued) is durable: an empty job. */
	if (o->replay)
		return job_new(NULL, false, NULL, 0, &none);
	if (o->heartbeat)
		return job_new(&o->node, true, NULL, 0, &o->also);
	if (coord_report_pack(msg, &blob, &len))
		return NULL;
	j = job_new(&o->node, false, blob, len, &o->also);
	if (j)
		j->blob = blob;
	else
		free(blob);
	return j;
}

int coord_report(struct coord *c, const Dratopo__V1__TopologyReport *msg,
		 const struct rec_report *r, struct rec_outcome *out,
		 coord_report_done_fn done, void *arg, struct dt_err *err)
{
	struct job *j;
	int rc = coord_serving(c, err);

	if (!rc)
		rc = fresh_fleet(c, err);
	if (rc)
		return rc;
	pthread_rwlock_rdlock(&c->fleet_lock);
	pthread_mutex_lock(&c->apply_lock);
	rc = rec_report(c->fleet, r, out, err);
	if (rc) {
		pthread_mutex_unlock(&c->apply_lock);
		pthread_rwlock_unlock(&c->fleet_lock);
		return rc;
	}
	j = report_job(msg, out);
	if (j && c->cluster && coord_cluster_report(c, out, &j->cw)) {
		job_free(j);
		j = NULL;
	}
	if (j) {
		j->done_fn = done;
		j->done_arg = arg;
		enqueue(c->commit, j);
	}
	pthread_mutex_unlock(&c->apply_lock);
	pthread_rwlock_unlock(&c->fleet_lock);
	if (!j) {
		/* Applied but not queued: the fleet is ahead of the store. */
		pthread_rwlock_wrlock(&c->fleet_lock);
		rebuild_locked(c);
		pthread_rwlock_unlock(&c->fleet_lock);
		rec_outcome_free(out);
		return dt_err_set(err, -ENOMEM, "out of memory");
	}
	return 0;       /* done is called once the job is durable, or failed */
}

int coord_persist_changes(struct coord *c, const struct rec_changes *changes,
			  struct dt_err *err)
{
	struct job *j = job_new(NULL, false, NULL, 0, changes);

	if (!j)
		return dt_err_set(err, -ENOMEM, "out of memory");
	if (c->cluster && coord_cluster_changes(c, changes, &j->cw)) {
		job_free(j);
		return dt_err_set(err, -ENOMEM, "out of memory");
	}
	if (!j->n_batches && !j->cw.n) {
		job_free(j);
		return 0;
	}
	enqueue(c->commit, j);
	return wait_job(c->commit, j, err);
}

int coord_commit_with(struct coord *c,
		      int (*fn)(struct coord *c, void *arg, struct coord_cws *w), void *arg,
		      struct dt_err *err)
{
	static const struct rec_changes none;
	struct job *j = job_new(NULL, false, NULL, 0, &none);
	int rc;

	if (!j)
		return dt_err_set(err, -ENOMEM, "out of memory");
	pthread_rwlock_rdlock(&c->fleet_lock);
	pthread_mutex_lock(&c->apply_lock);
	rc = fn(c, arg, &j->cw);
	if (!rc && j->cw.n)
		enqueue(c->commit, j);
	pthread_mutex_unlock(&c->apply_lock);
	pthread_rwlock_unlock(&c->fleet_lock);
	if (rc || !j->cw.n) {
		job_free(j);
		return rc ? dt_err_set(err, rc, "out of memory") : 0;
	}
	return wait_job(c->commit, j, err);
}

size_t coord_commit_pending(struct coord *c)
{
	struct coord_commit *cm = c->commit;
	size_t n;

	if (!cm)
		return 0;
	pthread_mutex_lock(&cm->lock);
	n = cm->queued;
	pthread_mutex_unlock(&cm->lock);
	return n;
}

void coord_commit_idle(struct coord *c)
{
	struct coord_commit *cm = c->commit;

	if (!cm)
		return;
	pthread_mutex_lock(&cm->lock);
	while (cm->head || cm->busy)
		pthread_cond_wait(&cm->idle, &cm->lock);
	pthread_mutex_unlock(&cm->lock);
}

void coord_replace(struct coord *c, struct rec_fleet *f, struct store *s)
{
	struct coord_commit *cm = c->commit;
	struct rec_fleet *old_f;
	struct store *old_s;

	/* The committer takes fleet_lock to roll back: wait for it to be idle
	 * before taking the lock, and again under it until nothing slipped in
	 * between (reports queue with the lock held shared). */
	for (;;) {
		pthread_mutex_lock(&cm->lock);
		while (cm->head || cm->busy)
			pthread_cond_wait(&cm->idle, &cm->lock);
		pthread_mutex_unlock(&cm->lock);
		pthread_rwlock_wrlock(&c->fleet_lock);
		pthread_mutex_lock(&cm->lock);
		if (!cm->head && !cm->busy)
			break;
		pthread_mutex_unlock(&cm->lock);
		pthread_rwlock_unlock(&c->fleet_lock);
	}
	old_f = c->fleet;
	old_s = c->store;
	c->fleet = f;
	c->store = s;
	c->fleet_stale = false;
	pthread_mutex_unlock(&cm->lock);
	pthread_rwlock_unlock(&c->fleet_lock);
	rec_fleet_free(old_f);
	store_close(old_s);
}

int coord_persist_forget(struct coord *c, const char *node, struct rec_changes *changes,
			 struct dt_err *err)
{
	struct job *j;
	int rc = coord_serving(c, err);

	if (rc)
		return rc;
	/* As for a report: the fleet's change and its place in the queue in
	 * one order, so a report of the node queued before is not undone. In
	 * a cluster its NodeTopology goes with it. */
	pthread_mutex_lock(&c->apply_lock);
	rc = rec_fleet_forget(coord_fleet_get(c), node, changes, err);
	j = rc ? NULL : job_new(NULL, false, NULL, 0, changes);
	if (!rc && (!j || DT_GROW(j->batches, j->cap_batches, j->n_batches + 1) ||
		    (c->cluster && coord_cluster_forget(c, node, changes, &j->cw)))) {
		coord_fleet_put(c);
		job_free(j);
		pthread_mutex_unlock(&c->apply_lock);
		return dt_err_set(err, -ENOMEM, "out of memory");
	}
	coord_fleet_put(c);
	if (!rc) {
		j->batches[j->n_batches++] = (struct store_batch){ .delete_node = node };
		enqueue(c->commit, j);
	}
	pthread_mutex_unlock(&c->apply_lock);
	return rc ? rc : wait_job(c->commit, j, err);
}
