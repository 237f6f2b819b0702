/* coord_cluster.c - the coordinator in a cluster: the fleet kept in
 * NodeTopology and LearnedType objects (dt_cluster), leader election over
 * a Lease (kube_leader), and what a replica does in each role.
 *
 * Roles (coord.h): without --leader-elect the coordinator is SOLE: its
 * store stays the truth and the objects follow it. With it, a replica is a
 * FOLLOWER until the Lease is its own: it keeps the objects' informers warm
 * and refuses every call with UNAVAILABLE, naming the leader (the Service
 * routes agents to the pod labelled dratopo.io/role=leader; an agent whose
 * connection still reaches a follower reconnects on UNAVAILABLE). On
 * winning the Lease it TAKES OVER: a fresh fleet and an in-memory store are
 * rebuilt from the cached objects (a few hundred ms for 10,000 nodes: no
 * API request), what re-verification against this build's hwdb changed is
 * written back, the leader label moves to its pod, and it LEADS. On losing
 * the Lease it is a follower again at once; its fence already refuses
 * every write (kube_leader.h).
 *
 * What reaches the API server: a report that changed its node (or made a
 * stale node fresh, or was the first of a node the cluster lacks) writes
 * that node's object, other nodes whose state it changed and any type it
 * taught, from the committer, before the store's transaction and before
 * the answer: an acknowledged report is in the API server. Heartbeats
 * write nothing. A sweep every few seconds writes the nodes that went
 * stale (and any written stale that are not), and a full pass every few
 * minutes (and after a takeover) writes whatever differs. Each write is
 * made only where the API server's content differs (dt_cluster). What a
 * commit writes is coord_cluster_writes.c's; what the role means to the
 * handlers, the committer and /readyz is coord_role.c's. */
#include <errno.h>
#include <json-c/json.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "array.h"
#include "cluster.h"
#include "coord_cluster.h"
#include "kube_leader.h"
#include "obs_log.h"
#include "timestamp.h"

#define LEASE_NAME "dratopo-coordinator"
#define ROLE_LABEL "dratopo.io/role"
#define SYNC_WAIT_MS 30000
#define SWEEP_MS 5000
#define FULL_PASS_MS (5 * 60 * 1000)
#define CHUNK 64                /* nodes written per committer job by a sweep */
#define SWEEP_BACKLOG 64        /* jobs queued beyond which a stale sweep waits */
#define RELEASE_DRAIN_MS 5000

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- the sweeps ---- */

struct chunk {
	char **names;
	size_t n;
};

static int chunk_writes(struct coord *c, void *arg, struct coord_cws *w)
{
	const struct chunk *ch = arg;
	int64_t now = coord_now_ns();
	int rc = 0;

	for (size_t i = 0; !rc && i < ch->n; i++)
		rc = coord_cluster_add_node(c, ch->names[i], now, true, w);
	return rc;
}

/* Write the nodes named whose objects differ, a chunk at a time: each
 * chunk is one job of the committer, so reports wait for a chunk's worth
 * of writes at most, never for a whole sweep. */
static int sync_names(struct coord *c, char **names, size_t n, struct dt_err *err)
{
	int rc = 0;

	for (size_t i = 0; !rc && i < n; i += CHUNK) {
		struct chunk ch = { names + i, n - i < CHUNK ? n - i : CHUNK };

		rc = coord_commit_with(c, chunk_writes, &ch, err);
	}
	return rc;
}

static void free_names(char **names, size_t n)
{
	for (size_t i = 0; names && i < n; i++)
		free(names[i]);
	free(names);
}

/* Nodes whose staleness the API server has wrong: gone stale, or written
 * stale and heard from since. */
static int stale_candidates(struct coord *c, char ***out, size_t *n_out)
{
	struct rec_filter flt = { NULL, -1, 0, NULL, 0 };
	struct rec_node_list l = { 0 };
	int64_t now = coord_now_ns();
	char **stale = NULL, **v = NULL;
	size_t n_stale = 0, n = 0, cap = 0;
	int rc = rec_fleet_nodes(coord_fleet_get(c), &flt, now, &l, NULL);

	coord_fleet_put(c);
	if (!rc)
		rc = cluster_sync_node_names(c->cluster->sync, true, &stale, &n_stale);
	for (size_t i = 0; !rc && i < l.n; i++) {
		struct cluster_have have;

		cluster_sync_node_have(c->cluster->sync, l.nodes[i].name, &have);
		if (have.exists && have.stale == (now - l.nodes[i].received_ns > coord_cluster_stale_after(c)))
			continue;
		if (DT_GROW(v, cap, n + 1) || !(v[n] = strdup(l.nodes[i].name)))
			rc = -ENOMEM;
		else
			n++;
	}
	for (size_t i = 0; !rc && i < n_stale; i++) {     /* maybe fresh again */
		if (DT_GROW(v, cap, n + 1))
			rc = -ENOMEM;
		else
			v[n++] = stale[i], stale[i] = NULL;
	}
	free_names(stale, n_stale);
	rec_node_list_free(&l);
	if (rc) {
		free_names(v, n);
		return rc;
	}
	*out = v;
	*n_out = n;
	return 0;
}

static int learned_writes(struct coord *c, void *arg, struct coord_cws *w)
{
	struct rec_type_list tl = { 0 };
	int rc = rec_fleet_types(c->fleet, 0, &tl, NULL);

	(void)arg;
	for (size_t i = 0; !rc && i < tl.n; i++) {
		struct rec_learned l;

		if (tl.types[i].source != REC_SOURCE_LEARNED ||
		    rec_fleet_learned(c->fleet, tl.types[i].type, &l, NULL))
			continue;
		rc = coord_cluster_add_learned(c, &l, w);
		rec_learned_free(&l);
	}
	rec_type_list_free(&tl);
	return rc;
}

/* Every node (full) or those whose staleness is wrong, and with full the
 * learned types: written where their objects differ. */
static int sweep_pass(struct coord *c, bool full, struct dt_err *err)
{
	struct rec_node_list l = { 0 };
	char **names = NULL;
	size_t n = 0;
	int rc;

	if (!full) {
		rc = stale_candidates(c, &names, &n);
		if (!rc)
			rc = sync_names(c, names, n, err);
		free_names(names, n);
		return rc == -ENOMEM ? dt_err_set(err, rc, "out of memory") : rc;
	}
	rc = rec_fleet_nodes(coord_fleet_get(c), &(struct rec_filter)REC_FILTER_ALL, 0, &l, err);
	coord_fleet_put(c);
	if (rc)
		return rc;
	names = calloc(l.n + 1, sizeof(*names));
	for (size_t i = 0; names && i < l.n; i++)
		names[i] = l.nodes[i].name;
	rc = names ? sync_names(c, names, l.n, err) : dt_err_set(err, -ENOMEM, "out of memory");
	if (!rc)
		rc = coord_commit_with(c, learned_writes, NULL, err);
	free(names);
	rec_node_list_free(&l);
	return rc;
}

/* ---- the takeover ---- */

struct node_blob {
	char *name;
	uint8_t *blob;
	size_t len;
	int64_t first_seen_ns;
};

struct rebuild {
	struct coord *c;
	struct rec_fleet *f;
	int64_t now;
	struct node_blob *blobs;
	size_t n_blobs, cap_blobs;
	struct rec_learned *learned;
	size_t n_learned, cap_learned;
	size_t bad;
	struct dt_err *err;
};

static int restore_learned(void *arg, json_object *obj)
{
	struct rebuild *rb = arg;
	struct rec_learned l;
	struct dt_err e = { 0 };
	int rc = cluster_learned_parse(obj, &l, &e);

	if (!rc)
		rc = rec_fleet_restore_learned(rb->f, &l, &e);
	if (rc == -ENOMEM)
		return dt_err_set(rb->err, rc, "%s", e.msg);
	if (rc) {
		obs_log(OBS_WARN, "takeover_skipped", "error", e.msg, NULL);
		rb->bad++;
		return 0;
	}
	if (DT_GROW(rb->learned, rb->cap_learned, rb->n_learned + 1)) {
		rec_learned_free(&l);
		return dt_err_set(rb->err, -ENOMEM, "out of memory");
	}
	rb->learned[rb->n_learned++] = l;
	return 0;
}

static int64_t created_ns(json_object *obj)
{
	const char *s = kube_json_str(obj, "metadata", "creationTimestamp", NULL);
	struct timestamp t;

	return s && !timestamp_parse(s, strlen(s), &t, NULL) ? timestamp_unix_ns(&t) : 0;
}

/* A node as its object says; one not written stale counts as heard from
 * now (heartbeats are never written: the next round of reports comes
 * within an interval, and staleness counts from the takeover). */
static int restore_node(void *arg, json_object *obj)
{
	struct rebuild *rb = arg;
	struct cluster_node_rec rec;
	struct node_blob *b;
	struct dt_err e = { 0 };
	int rc = cluster_node_parse(obj, &rec, &e);

	if (!rc) {
		if (!rec.stale && rec.report.received_ns < rb->now)
			rec.report.received_ns = rb->now;
		rc = rec_fleet_restore_node(rb->f, &rec.report, &rec.stored, &e);
	}
	if (rc == -ENOMEM || (!rc && DT_GROW(rb->blobs, rb->cap_blobs, rb->n_blobs + 1))) {
		cluster_node_rec_free(&rec);
		return dt_err_set(rb->err, -ENOMEM, "out of memory");
	}
	if (rc) {
		obs_log(OBS_WARN, "takeover_skipped", "error", e.msg, NULL);
		rb->bad++;
		cluster_node_rec_free(&rec);
		return 0;
	}
	b = &rb->blobs[rb->n_blobs];
	b->first_seen_ns = created_ns(obj);
	b->name = strdup(rec.report.node_name);
	rc = b->name ? coord_report_pack_rec(&rec.report, &b->blob, &b->len) : -ENOMEM;
	cluster_node_rec_free(&rec);
	if (rc) {
		free(b->name);
		return dt_err_set(rb->err, -ENOMEM, "out of memory");
	}
	rb->n_blobs++;
	return 0;
}

static int blob_order(const void *a, const void *b)
{
	return strcmp(((const struct node_blob *)a)->name, ((const struct node_blob *)b)->name);
}

/* The store's records of the rebuilt fleet, in one transaction. */
static int fill_store(struct rebuild *rb, struct store *s, struct dt_err *err)
{
	struct rec_node_list l = { 0 };
	struct store_batch *b = NULL;
	struct store_node *recs = NULL;
	struct store_learned *ls = NULL;
	size_t nb = 0, k = 0;
	int rc = rec_fleet_nodes(rb->f, &(struct rec_filter)REC_FILTER_ALL, 0, &l, err);

	if (rc)
		return rc;
	if (rb->n_blobs)         /* qsort of NULL, 0 is undefined */
		qsort(rb->blobs, rb->n_blobs, sizeof(*rb->blobs), blob_order);
	b = calloc(l.n + rb->n_learned + 1, sizeof(*b));
	recs = calloc(l.n + 1, sizeof(*recs));
	ls = calloc(rb->n_learned + 1, sizeof(*ls));
	if (!b || !recs || !ls) {
		rc = dt_err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < rb->n_learned; i++) {
		const struct rec_learned *x = &rb->learned[i];

		ls[i] = (struct store_learned){ x->type, x->shape_key, x->source, x->nodes,
						x->n_nodes, x->learned_ns };
		b[nb++].learned = &ls[i];
	}
	for (size_t i = 0; i < l.n; i++) {
		/* both in name order */
		while (k < rb->n_blobs && strcmp(rb->blobs[k].name, l.nodes[i].name) < 0)
			k++;
		if (k == rb->n_blobs || strcmp(rb->blobs[k].name, l.nodes[i].name))
			continue;
		coord_node_record(&l.nodes[i], rb->blobs[k].blob, rb->blobs[k].len, &recs[i]);
		if (rb->blobs[k].first_seen_ns)
			recs[i].first_seen_ns = rb->blobs[k].first_seen_ns;
		b[nb++].node = &recs[i];
	}
	rc = nb ? store_commit(s, b, nb, err) : 0;
out:
	free(b);
	free(recs);
	free(ls);
	rec_node_list_free(&l);
	return rc;
}

static void rebuild_free(struct rebuild *rb)
{
	for (size_t i = 0; i < rb->n_blobs; i++) {
		free(rb->blobs[i].name);
		free(rb->blobs[i].blob);
	}
	free(rb->blobs);
	for (size_t i = 0; i < rb->n_learned; i++)
		rec_learned_free(&rb->learned[i]);
	free(rb->learned);
	rec_fleet_free(rb->f);
}

/* A fleet and a store as the cluster's objects say, in place of the ones
 * this replica had (which may be a term behind). */
static int rebuild(struct coord_cluster *cc, struct rec_changes *changes, size_t *nodes,
		   struct dt_err *err)
{
	struct coord *c = cc->c;
	struct rebuild rb = { c, rec_fleet_new(&c->rec_opts), coord_now_ns(), .err = err };
	struct store *s = NULL;
	int rc = rb.f ? 0 : dt_err_set(err, -ENOMEM, "out of memory");

	if (!rc)
		rc = cluster_sync_foreach(cc->sync, &cluster_res_learnedtypes, restore_learned, &rb);
	if (!rc)
		rc = cluster_sync_foreach(cc->sync, &cluster_res_nodetopologies, restore_node, &rb);
	if (!rc)
		rc = rec_fleet_restore_done(rb.f, changes, err);
	if (!rc)
		rc = store_open("memory:", NULL, &s, err);
	if (!rc)
		rc = fill_store(&rb, s, err);
	if (!rc) {
		coord_replace(c, rb.f, s);
		rb.f = NULL;
		s = NULL;
		*nodes = rb.n_blobs;
	}
	if (rb.bad)
		obs_logf(OBS_WARN, "takeover_incomplete", "skipped", "%zu", rb.bad);
	store_close(s);
	rebuild_free(&rb);
	return rc;
}

/* Patch pod's labels: the role label on (value) or off (NULL). */
static int label_pod(struct coord_cluster *cc, const char *pod, const char *value,
		     struct dt_err *err)
{
	struct kube_ref ref = { &kube_res_pods, cc->pod_ns, pod, NULL };
	json_object *body = json_object_new_object(), *meta = json_object_new_object();
	json_object *labels = json_object_new_object();
	int rc;

	json_object_object_add(labels, ROLE_LABEL, value ? json_object_new_string(value) : NULL);
	json_object_object_add(meta, "labels", labels);
	json_object_object_add(body, "metadata", meta);
	rc = kube_merge_patch(cc->kc, &ref, body, NULL, err);
	json_object_put(body);
	return rc;
}

struct others {
	struct coord_cluster *cc;
	int failed;
};

static int unlabel_other(void *arg, json_object *pod)
{
	struct others *o = arg;
	const char *name = kube_json_str(pod, "metadata", "name", NULL);
	struct dt_err err = { 0 };

	if (name && strcmp(name, o->cc->pod) && label_pod(o->cc, name, NULL, &err)) {
		obs_log(OBS_WARN, "leader_label_failed", "pod", name, "error", err.msg, NULL);
		o->failed++;
	}
	return 0;
}

/* The Service sends agents to the pod labelled dratopo.io/role=leader:
 * this one now, no other (a leader that lost the Lease cannot take its own
 * label off: it may not write any more). */
static void move_leader_label(struct coord_cluster *cc)
{
	struct kube_ref pods = { &kube_res_pods, cc->pod_ns, NULL, NULL };
	struct others o = { cc, 0 };
	struct dt_err err = { 0 };

	if (!cc->pod[0])
		return;
	if (label_pod(cc, cc->pod, "leader", &err) ||
	    kube_list(cc->kc, &pods, ROLE_LABEL "=leader", unlabel_other, &o, NULL, 0, &err))
		obs_log(OBS_WARN, "leader_label_failed", "pod", cc->pod, "error", err.msg, NULL);
	else if (!o.failed)
		obs_log(OBS_INFO, "leader_label", "pod", cc->pod, NULL);
}

/* false when it failed while the Lease is still ours: try again later
 * (the objects not listed yet, the API server refusing a write back). */
static bool take_over(struct coord_cluster *cc)
{
	struct coord *c = cc->c;
	struct rec_changes changes = { 0 };
	struct dt_err err = { 0 };
	int expected = COORD_FOLLOWER;
	int64_t t0 = mono_ms();
	size_t nodes = 0;
	int rc;

	if (!atomic_compare_exchange_strong(&c->role, &expected, COORD_TAKING_OVER))
		return true;
	rc = cluster_sync_wait_synced(cc->sync, SYNC_WAIT_MS) ? 0 :
	     dt_err_set(&err, -ETIMEDOUT, "the fleet's objects are not listed yet");
	if (!rc)
		rc = rebuild(cc, &changes, &nodes, &err);
	if (!rc)
		rc = coord_persist_changes(c, &changes, &err);
	rec_changes_free(&changes);
	expected = COORD_TAKING_OVER;
	if (rc || !kube_leader_leading(cc->le) ||
	    !atomic_compare_exchange_strong(&c->role, &expected, COORD_LEADER)) {
		atomic_store(&c->role, COORD_FOLLOWER);
		obs_log(OBS_ERROR, "takeover_failed", "error", rc ? err.msg : "lost the Lease meanwhile",
			"then", rc ? "tried again in 5s while the Lease is ours" : "following", NULL);
		return !rc || !kube_leader_leading(cc->le);
	}
	pthread_mutex_lock(&cc->lock);
	cc->takeover_s = (double)(mono_ms() - t0) / 1000.0;
	cc->takeovers++;
	pthread_mutex_unlock(&cc->lock);
	obs_logf(OBS_INFO, "takeover", "nodes", "%zu", nodes);
	obs_logf(OBS_INFO, "leading", "rebuilt_in", "%.3fs", (double)(mono_ms() - t0) / 1000.0);
	move_leader_label(cc);
	return true;
}

/* ---- the elector's callbacks ---- */

static void on_started(void *arg)
{
	struct coord_cluster *cc = arg;

	pthread_mutex_lock(&cc->lock);
	cc->takeover = true;
	pthread_cond_signal(&cc->wake);
	pthread_mutex_unlock(&cc->lock);
}

static void on_stopped(void *arg)
{
	struct coord_cluster *cc = arg;

	atomic_store(&cc->c->role, COORD_FOLLOWER);
}

static void on_new_holder(void *arg, const char *holder)
{
	struct coord_cluster *cc = arg;

	pthread_mutex_lock(&cc->lock);
	snprintf(cc->holder, sizeof(cc->holder), "%s", holder);
	pthread_mutex_unlock(&cc->lock);
}

/* ---- the thread ---- */

/* It writes: without election, or leading with the fence open. */
static void sweep(struct coord_cluster *cc, bool full)
{
	struct dt_err err = { 0 };
	int rc;

	/* behind a backlog (the API server slower than the reports' changes)
	 * the next sweep will do: what it would write is what is queued */
	if (!full && coord_commit_pending(cc->c) > SWEEP_BACKLOG)
		return;
	rc = sweep_pass(cc->c, full, &err);
	if (rc && rc != KUBE_ENOTLEADER)
		obs_log(OBS_WARN, "cluster_sync_failed", "pass", full ? "full" : "stale", "error",
			err.msg, NULL);
}

static void *cluster_main(void *arg)
{
	struct coord_cluster *cc = arg;
	int64_t next_sweep = 0, next_full = 0;
	bool again = false;             /* a takeover that failed, to try again */

	if (atomic_load(&cc->c->role) == COORD_SOLE && !cluster_sync_wait_synced(cc->sync, SYNC_WAIT_MS))
		obs_log(OBS_WARN, "cluster_sync_failed", "error", "the fleet's objects are not listed "
			"yet", NULL);
	for (;;) {
		bool takeover;
		int64_t now;
		struct timespec ts;

		pthread_mutex_lock(&cc->lock);
		takeover = cc->takeover || again;
		cc->takeover = false;
		if (cc->stop) {
			pthread_mutex_unlock(&cc->lock);
			return NULL;
		}
		pthread_mutex_unlock(&cc->lock);
		if (takeover) {
			again = !take_over(cc);
			next_full = 0;
		}
		now = mono_ms();
		if (atomic_exchange(&cc->resync, false))
			next_full = now;
		if (coord_leading(cc->c) && now >= next_full) {
			sweep(cc, true);
			next_full = now + FULL_PASS_MS;
			next_sweep = now + SWEEP_MS;
		} else if (coord_leading(cc->c) && now >= next_sweep) {
			sweep(cc, false);
			next_sweep = now + SWEEP_MS;
		}
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += SWEEP_MS / 1000;
		pthread_mutex_lock(&cc->lock);
		if (!cc->stop && !cc->takeover)
			pthread_cond_timedwait(&cc->wake, &cc->lock, &ts);
		pthread_mutex_unlock(&cc->lock);
	}
}

/* ---- metrics ---- */

static void collect_leader(struct obs_collector *col, void *arg)
{
	struct coord *c = arg;

	obs_collect(col, coord_leading(c) ? 1.0 : 0.0, NULL);
}

static void collect_writes(struct obs_collector *col, void *arg)
{
	struct coord_cluster *cc = arg;
	struct cluster_sync_stats st;

	cluster_sync_stats(cc->sync, &st);
	obs_collect(col, (double)st.creates, "create", NULL);
	obs_collect(col, (double)st.updates, "update", NULL);
	obs_collect(col, (double)st.deletes, "delete", NULL);
	obs_collect(col, (double)st.unchanged, "unchanged", NULL);
	obs_collect(col, (double)st.conflicts, "conflict", NULL);
	obs_collect(col, (double)st.failures, "failure", NULL);
}

static void collect_objects(struct obs_collector *col, void *arg)
{
	struct coord_cluster *cc = arg;
	struct cluster_sync_stats st;

	cluster_sync_stats(cc->sync, &st);
	obs_collect(col, (double)st.nodes, "NodeTopology", NULL);
	obs_collect(col, (double)st.learned, "LearnedType", NULL);
}

static void collect_election(struct obs_collector *col, void *arg)
{
	struct coord_cluster *cc = arg;
	struct kube_leader_status st;
	double takeover_s;
	uint64_t takeovers;

	pthread_mutex_lock(&cc->lock);
	takeover_s = cc->takeover_s;
	takeovers = cc->takeovers;
	pthread_mutex_unlock(&cc->lock);
	obs_collect(col, (double)takeovers, "takeovers", NULL);
	obs_collect(col, takeover_s, "last_takeover_seconds", NULL);
	if (!cc->le)
		return;
	kube_leader_status(cc->le, &st);
	obs_collect(col, (double)st.renewals, "lease_writes", NULL);
	obs_collect(col, (double)st.failures, "lease_failures", NULL);
	obs_collect(col, (double)st.lost, "leaderships_lost", NULL);
	obs_collect(col, (double)st.transitions, "lease_transitions", NULL);
}

static int metrics_init(struct coord_cluster *cc, struct dt_err *err)
{
	static const char *const by_verb[] = { "verb", NULL };
	static const char *const by_kind[] = { "kind", NULL };
	static const char *const by_what[] = { "what", NULL };
	struct obs_registry *reg = cc->c->m.reg;
	int rc = obs_gauge_func_new(reg, "dratopo_leader", "1 while this coordinator writes (it "
				    "leads, or runs without leader election), else 0.", NULL,
				    collect_leader, cc->c, err);

	if (!rc)
		rc = obs_gauge_func_new(reg, "dratopo_cluster_writes", "Writes of NodeTopology and "
					"LearnedType objects since start, by verb (unchanged: the "
					"API server held the content already).", by_verb,
					collect_writes, cc, err);
	if (!rc)
		rc = obs_gauge_func_new(reg, "dratopo_cluster_objects", "NodeTopology and "
					"LearnedType objects the API server holds.", by_kind,
					collect_objects, cc, err);
	if (!rc)
		rc = obs_gauge_func_new(reg, "dratopo_leader_election", "Takeovers, the last one's "
					"rebuild time, Lease writes and failures, leaderships lost, "
					"the Lease's transitions.", by_what, collect_election, cc,
					err);
	return rc;
}

/* ---- start and stop ---- */

static void make_identity(struct coord_cluster *cc)
{
	const char *pod = getenv("POD_NAME");
	char host[256] = "";
	uint32_t r = 0;

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r))
		r = (uint32_t)mono_ms() ^ (uint32_t)getpid();
	if (!pod || !pod[0]) {
		gethostname(host, sizeof(host) - 1);
		pod = host;
	}
	snprintf(cc->identity, sizeof(cc->identity), "%.200s_%08x", pod, r);
}

static int clients(struct coord_cluster *cc, const struct coord_cluster_opts *o,
		   struct kube_config *cfg, struct dt_err *err)
{
	char ua[400];
	struct kube_client_opts ko = { .user_agent = ua, .field_manager = "dratopo-coordinator" };
	int rc;

	snprintf(ua, sizeof(ua), "dratopo-coordinator/%s (%s)", DRATOPO_VERSION, cc->identity);
	rc = kube_config_auto(o->kubeconfig, o->context, cfg, err);
	if (!rc)
		rc = kube_client_new(cfg, &ko, &cc->kc, err);
	if (!rc && o->leader_elect)
		rc = kube_client_new(cfg, &ko, &cc->lease_kc, err);
	return rc;
}

static int elector(struct coord_cluster *cc, const struct coord_cluster_opts *o,
		   struct dt_err *err)
{
	struct kube_leader_opts lo = {
		.ns = o->lease_namespace, .name = o->lease_name ? o->lease_name : LEASE_NAME,
		.identity = cc->identity, .lease_duration_ms = o->lease_duration_ms,
		.renew_deadline_ms = o->renew_deadline_ms, .retry_period_ms = o->retry_period_ms,
		.on_started = on_started, .on_stopped = on_stopped, .on_new_holder = on_new_holder,
		.arg = cc,
	};
	int rc = kube_leader_new(cc->lease_kc, &lo, &cc->le, err);

	if (rc)
		return rc;
	snprintf(cc->lease, sizeof(cc->lease), "%s/%s",
		 o->lease_namespace ? o->lease_namespace : kube_client_namespace(cc->kc), lo.name);
	kube_leader_fence(cc->le, cc->kc);
	return 0;
}

int coord_cluster_start(struct coord *c, const struct coord_cluster_opts *o,
			struct dt_err *err)
{
	struct coord_cluster *cc = calloc(1, sizeof(*cc));
	struct kube_config cfg = { 0 };
	const char *pod = getenv("POD_NAME"), *pod_ns = getenv("POD_NAMESPACE");
	int rc;

	if (!cc)
		return dt_err_set(err, -ENOMEM, "out of memory");
	cc->c = c;
	pthread_mutex_init(&cc->lock, NULL);
	pthread_cond_init(&cc->wake, NULL);
	make_identity(cc);
	c->cluster = cc;
	atomic_store(&c->role, o->leader_elect ? COORD_FOLLOWER : COORD_SOLE);
	rc = clients(cc, o, &cfg, err);
	if (!rc && pod && pod[0]) {
		snprintf(cc->pod, sizeof(cc->pod), "%s", pod);
		snprintf(cc->pod_ns, sizeof(cc->pod_ns), "%s",
			 pod_ns && pod_ns[0] ? pod_ns : kube_client_namespace(cc->kc));
	}
	if (!rc && o->leader_elect)
		rc = elector(cc, o, err);
	if (!rc)
		rc = cluster_sync_new(cc->kc, &cc->sync, err);
	if (!rc)
		rc = metrics_init(cc, err);
	if (!rc && pthread_create(&cc->thread, NULL, cluster_main, cc))
		rc = dt_err_set(err, -EAGAIN, "cannot start a thread");
	cc->running = !rc;
	if (!rc && cc->le)
		rc = kube_leader_start(cc->le, err);
	kube_config_free(&cfg);
	if (rc)
		coord_cluster_stop(c);
	else
		obs_log(OBS_INFO, "cluster", "server", kube_client_server(cc->kc), "identity",
			cc->identity, "leader_elect", cc->le ? cc->lease : "off", NULL);
	return rc;
}

static void stop_thread(struct coord_cluster *cc)
{
	if (!cc->running)
		return;
	pthread_mutex_lock(&cc->lock);
	cc->stop = true;
	pthread_cond_signal(&cc->wake);
	pthread_mutex_unlock(&cc->lock);
	pthread_join(cc->thread, NULL);
	cc->running = false;
}

struct kube_leader *coord_cluster_leader(struct coord *c)
{
	return c->cluster ? c->cluster->le : NULL;
}

void coord_cluster_release(struct coord *c)
{
	struct coord_cluster *cc = c->cluster;
	struct dt_err err = { 0 };

	if (!cc)
		return;
	stop_thread(cc);
	/* what the last reports queued is written while the fence is open */
	coord_commit_idle(c);
	if (cc->le && kube_leader_release(cc->le, RELEASE_DRAIN_MS, &err))
		obs_log(OBS_WARN, "leader_release_failed", "error", err.msg, NULL);
	if (atomic_load(&c->role) != COORD_SOLE)
		atomic_store(&c->role, COORD_FOLLOWER);
}

void coord_cluster_stop(struct coord *c)
{
	struct coord_cluster *cc = c->cluster;

	if (!cc)
		return;
	stop_thread(cc);
	coord_commit_idle(c);
	kube_leader_stop(cc->le);
	if (atomic_load(&c->role) != COORD_SOLE)
		atomic_store(&c->role, COORD_FOLLOWER);
	/* writes from here on are refused; the store closes after this */
	c->cluster = NULL;
	cluster_sync_free(cc->sync);
	kube_client_free(cc->kc);
	kube_leader_free(cc->le);
	kube_client_free(cc->lease_kc);
	pthread_cond_destroy(&cc->wake);
	pthread_mutex_destroy(&cc->lock);
	free(cc);
}
