/* coord_cluster_writes.c - what a commit writes to the cluster: the
 * NodeTopology and LearnedType statuses a report, a restore's changes or a
 * forgotten node make (queued with the commit's job, under the locks that
 * order the jobs), and their writes, made on the committer before the
 * store's transaction: of several writes of one object only the last, the
 * objects in parallel. Without leader election a write the API server
 * refuses holds no report up (the store is the truth; the next sweep
 * writes it again); with it the commit fails and nothing is acknowledged.
 * The sweeps and the takeover are coord_cluster.c's. */
#include <errno.h>
#include <json-c/json.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "cluster.h"
#include "coord_cluster.h"
#include "obs_log.h"

/* Writes of one commit in flight at once (besides the committer's). */
#define APPLY_THREADS 7

int64_t coord_cluster_stale_after(const struct coord *c)
{
	return c->rec_opts.stale_after_ns > 0 ? c->rec_opts.stale_after_ns
					      : REC_DEFAULT_STALE_AFTER_NS;
}

static int cw_add(struct coord_cws *w, enum coord_cw_kind kind, const char *name,
		  json_object *status)
{
	char *n = strdup(name);

	if (!n || (!status && kind != COORD_CW_FORGET) || DT_GROW(w->v, w->cap, w->n + 1)) {
		free(n);
		json_object_put(status);
		return -ENOMEM;
	}
	w->v[w->n++] = (struct coord_cw){ kind, n, status };
	return 0;
}

static bool cw_has(const struct coord_cws *w, const char *name)
{
	for (size_t i = 0; i < w->n; i++)
		if (w->v[i].kind == COORD_CW_NODE && !strcmp(w->v[i].name, name))
			return true;
	return false;
}

/* The status node name has in fleet f now; NULL when it has none. */
static json_object *node_status(struct coord *c, struct rec_fleet *f, const char *name,
				int64_t now)
{
	struct rec_node n;
	struct topo t;
	const struct hwdb_type *entry;
	json_object *st = NULL;

	if (rec_fleet_node(f, name, 0, &n, NULL))      /* at 0: why without staleness */
		return NULL;
	if (!rec_node_topology(f, name, &t, &entry, NULL)) {
		st = cluster_node_status(&(struct cluster_node_view){
			&n, &t, now - n.received_ns > coord_cluster_stale_after(c), coord_cluster_stale_after(c) });
		topo_free(&t);
	}
	rec_node_free(&n);
	return st;
}

int coord_cluster_add_node(struct coord *c, const char *name, int64_t now, bool only_if_differs,
		    struct coord_cws *w)
{
	struct cluster_have have;
	json_object *st;

	if (cw_has(w, name))
		return 0;
	st = node_status(c, c->fleet, name, now);
	if (!st)
		return 0;               /* not in the fleet (any more) */
	if (only_if_differs) {
		cluster_sync_node_have(c->cluster->sync, name, &have);
		if (have.exists && have.digest == cluster_status_digest(st)) {
			json_object_put(st);
			return 0;
		}
	}
	return cw_add(w, COORD_CW_NODE, name, st);
}

/* Every node of type whose verdict is v (-1 any): their why names counts
 * of the type's nodes (an unknown type's quorum, a conflict's shapes). */
static int add_type(struct coord *c, const char *type, int v, int64_t now, struct coord_cws *w)
{
	struct rec_filter flt = { type, v, -1, NULL, 0 };
	struct rec_node_list l = { 0 };
	int rc = rec_fleet_nodes(c->fleet, &flt, 0, &l, NULL);

	for (size_t i = 0; !rc && i < l.n; i++)
		rc = coord_cluster_add_node(c, l.nodes[i].name, now, true, w);
	rec_node_list_free(&l);
	return rc;
}

int coord_cluster_add_learned(struct coord *c, const struct rec_learned *l, struct coord_cws *w)
{
	const struct hwdb_type *t = rec_fleet_hwdb_lookup(c->fleet, l->type, NULL);

	return cw_add(w, COORD_CW_LEARNED, l->type,
		      cluster_learned_status(l, t ? t->n_gpus : 0, t ? t->n_efas : 0));
}

static int add_changes(struct coord *c, const struct rec_changes *ch, int64_t now,
		       struct coord_cws *w)
{
	int rc = 0;

	for (size_t i = 0; !rc && i < ch->n_nodes; i++)
		rc = coord_cluster_add_node(c, ch->nodes[i].name, now, false, w);
	for (size_t i = 0; !rc && i < ch->n_conflicts; i++)
		rc = add_type(c, ch->conflicts[i].type, -1, now, w);
	for (size_t i = 0; !rc && i < ch->n_learned; i++)
		rc = coord_cluster_add_learned(c, &ch->learned[i], w);
	return rc;
}

int coord_cluster_report(struct coord *c, const struct rec_outcome *o, struct coord_cws *w)
{
	int64_t now = coord_now_ns();
	const struct rec_node *n = &o->node;
	struct cluster_have have;
	int rc = 0;

	if (o->replay)
		return 0;
	cluster_sync_node_have(c->cluster->sync, n->name, &have);
	if (!o->heartbeat || !have.exists || have.stale)
		rc = coord_cluster_add_node(c, n->name, now, false, w);
	if (!rc && o->changed && n->verdict == REC_UNKNOWN)
		rc = add_type(c, n->instance_type, REC_UNKNOWN, now, w);
	if (!rc)
		rc = add_changes(c, &o->also, now, w);
	return rc;
}

int coord_cluster_forget(struct coord *c, const char *node, const struct rec_changes *ch,
			 struct coord_cws *w)
{
	int rc = cw_add(w, COORD_CW_FORGET, node, NULL);

	return rc ? rc : add_changes(c, ch, coord_now_ns(), w);
}

int coord_cluster_changes(struct coord *c, const struct rec_changes *ch, struct coord_cws *w)
{
	int rc;

	pthread_rwlock_rdlock(&c->fleet_lock);
	rc = add_changes(c, ch, coord_now_ns(), w);
	pthread_rwlock_unlock(&c->fleet_lock);
	return rc;
}

/* Without leader election the store is the truth and the objects follow
 * it: a write the API server refuses holds no report up; it is logged
 * (once a minute) and the next sweep writes everything that differs. */
static int sole_failure(struct coord_cluster *cc, const struct dt_err *err)
{
	int64_t now = coord_now_ns() / 1000000;    /* a log's pace: any clock will do */

	atomic_store(&cc->resync, true);
	if (now - cc->resync_logged_ms >= 60000) {
		cc->resync_logged_ms = now;
		obs_log(OBS_WARN, "cluster_write_failed", "error", err->msg, "then",
			"the store has it; the next sweep writes it again", NULL);
	}
	return 0;
}

/* The writes of one commit, spread over a few threads. */
struct apply {
	struct coord_cluster *cc;
	const struct coord_cw **v;      /* one per object, the last one queued */
	size_t n;
	atomic_size_t next;
	pthread_mutex_t lock;
	int rc;                         /* the first failure */
	struct dt_err err;
};

static void *apply_main(void *arg)
{
	struct apply *a = arg;
	size_t i;

	while ((i = atomic_fetch_add(&a->next, 1)) < a->n) {
		const struct coord_cw *cw = a->v[i];
		struct dt_err err = { 0 };
		int rc = cw->kind == COORD_CW_NODE
			 ? cluster_sync_put_node(a->cc->sync, cw->name, cw->status, &err)
			 : cw->kind == COORD_CW_FORGET
			 ? cluster_sync_delete_node(a->cc->sync, cw->name, &err)
			 : cluster_sync_put_learned(a->cc->sync, cw->name, cw->status, &err);

		pthread_mutex_lock(&a->lock);
		if (rc && !a->rc) {
			a->rc = rc;
			a->err = err;
		}
		pthread_mutex_unlock(&a->lock);
	}
	return NULL;
}

/* Whether a and b write one object (a node's put and its deletion do). */
static bool same_object(const struct coord_cw *a, const struct coord_cw *b)
{
	return (a->kind == COORD_CW_LEARNED) == (b->kind == COORD_CW_LEARNED) &&
	       !strcmp(a->name, b->name);
}

/* Later writes of an object replace earlier ones in the list. */
static int collect(const struct coord_cws *const *ws, size_t n, struct apply *a)
{
	size_t cap = 0;

	for (size_t j = 0; j < n; j++)
		for (size_t i = 0; i < ws[j]->n; i++) {
			const struct coord_cw *cw = &ws[j]->v[i];
			size_t k;

			for (k = 0; k < a->n; k++)
				if (same_object(a->v[k], cw))
					break;
			if (k == a->n && DT_GROW(a->v, cap, a->n + 1))
				return -ENOMEM;
			a->v[k] = cw;
			a->n += k == a->n;
		}
	return 0;
}

int coord_cluster_apply(struct coord *c, const struct coord_cws *const *ws, size_t n,
			struct dt_err *err)
{
	struct apply a = { .cc = c->cluster };
	pthread_t th[APPLY_THREADS];
	size_t n_th = 0;

	if (collect(ws, n, &a)) {
		free(a.v);
		return dt_err_set(err, -ENOMEM, "out of memory");
	}
	pthread_mutex_init(&a.lock, NULL);
	while (n_th < APPLY_THREADS && n_th + 1 < a.n &&
	       !pthread_create(&th[n_th], NULL, apply_main, &a))
		n_th++;
	apply_main(&a);
	for (size_t i = 0; i < n_th; i++)
		pthread_join(th[i], NULL);
	pthread_mutex_destroy(&a.lock);
	free(a.v);
	if (a.rc && atomic_load(&c->role) == COORD_SOLE)
		return sole_failure(c->cluster, &a.err);
	if (a.rc) {
		*err = a.err;
		return dt_err_prefix(err, "kube: ");
	}
	return 0;
}
