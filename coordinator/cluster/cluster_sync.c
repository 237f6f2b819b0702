/* cluster_sync.c - what the API server holds of the fleet's objects, and
 * the writes that make it hold what the coordinator decided (cluster.h).
 *
 * Two informers (NodeTopology, LearnedType) keep the objects' JSON; beside
 * them a small map per kind keeps, for every object, what a write needs to
 * know at once: its uid and resourceVersion, the digest of its status's
 * content and whether it was written stale. The informers' events and the
 * answers to our own writes both update the map. A write is a PUT of the
 * status with the resourceVersion last seen, so a coordinator working from
 * a stale view (one that lost its Lease and does not know it yet, past
 * its fence) is refused with 409 rather than overwriting a newer state; on
 * 409 the object is read afresh and the write made again only if the
 * content still differs. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster.h"
#include "obs_log.h"

#define BUCKETS_MIN 64
#define WRITE_ATTEMPTS 3

struct have_entry {
	struct have_entry *next;
	char *name, *uid, *rv;
	uint64_t digest;
	bool stale;
};

struct have_map {
	struct have_entry **b;
	size_t nb, n;
};

struct cluster_sync;

/* An informer's callback argument: the sync and which kind. */
struct watch_arg {
	struct cluster_sync *s;
	int kind;
};

struct cluster_sync {
	struct kube_client *c;
	struct kube_informer *inf[2];   /* [0] NodeTopology, [1] LearnedType */
	struct watch_arg wa[2];
	pthread_mutex_t lock;
	struct have_map map[2];
	struct cluster_sync_stats st;
};

/* ---- the maps ---- */

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h;
}

static void entry_free(struct have_entry *e)
{
	if (!e)
		return;
	free(e->name);
	free(e->uid);
	free(e->rv);
	free(e);
}

static void map_fini(struct have_map *m)
{
	for (size_t i = 0; i < m->nb; i++)
		for (struct have_entry *e = m->b[i], *next; e; e = next) {
			next = e->next;
			entry_free(e);
		}
	free(m->b);
	memset(m, 0, sizeof(*m));
}

static struct have_entry **map_slot(struct have_map *m, const char *name)
{
	struct have_entry **p;

	if (!m->nb)
		return NULL;
	for (p = &m->b[hash(name) & (m->nb - 1)]; *p; p = &(*p)->next)
		if (!strcmp((*p)->name, name))
			return p;
	return p;
}

static struct have_entry *map_get(struct have_map *m, const char *name)
{
	struct have_entry **p = map_slot(m, name);

	return p ? *p : NULL;
}

static int map_grow(struct have_map *m)
{
	size_t nb = m->nb ? m->nb * 2 : BUCKETS_MIN;
	struct have_entry **b = calloc(nb, sizeof(*b));

	if (!b)
		return -ENOMEM;
	for (size_t i = 0; i < m->nb; i++)
		for (struct have_entry *e = m->b[i], *next; e; e = next) {
			size_t k = hash(e->name) & (nb - 1);

			next = e->next;
			e->next = b[k];
			b[k] = e;
		}
	free(m->b);
	m->b = b;
	m->nb = nb;
	return 0;
}

static void map_remove(struct have_map *m, const char *name)
{
	struct have_entry **p = map_slot(m, name), *e;

	if (!p || !*p)
		return;
	e = *p;
	*p = e->next;
	entry_free(e);
	m->n--;
}

static int set_str(char **dst, const char *s)
{
	char *d = strdup(s ? s : "");

	if (!d)
		return -ENOMEM;
	free(*dst);
	*dst = d;
	return 0;
}

/* Record what the server holds of name: uid, resourceVersion, status. */
static int map_put(struct have_map *m, const char *name, const char *uid, const char *rv,
		   json_object *status)
{
	struct have_entry **p, *e;

	if (m->n + 1 > m->nb && map_grow(m))
		return -ENOMEM;
	p = map_slot(m, name);
	e = *p;
	if (!e) {
		e = calloc(1, sizeof(*e));
		if (!e || !(e->name = strdup(name))) {
			free(e);
			return -ENOMEM;
		}
		*p = e;
		m->n++;
	}
	e->digest = status ? cluster_status_digest(status) : 0;
	e->stale = status && cluster_status_stale(status);
	return set_str(&e->uid, uid) || set_str(&e->rv, rv) ? -ENOMEM : 0;
}

static int kind_of(const struct kube_resource *res)
{
	return res == &cluster_res_learnedtypes;
}

/* ---- the informers ---- */

static void on_event(void *arg, enum kube_event_type type, const struct kube_object *obj)
{
	struct cluster_sync *s = ((struct watch_arg *)arg)->s;
	int kind = ((struct watch_arg *)arg)->kind;
	json_object *o;

	if (type == KUBE_SYNCED || !obj)
		return;
	pthread_mutex_lock(&s->lock);
	if (type == KUBE_DELETED) {
		map_remove(&s->map[kind], obj->name);
	} else if ((o = json_tokener_parse(obj->json))) {
		map_put(&s->map[kind], obj->name, obj->uid, obj->resource_version,
			kube_json_get(o, "status", NULL));
		json_object_put(o);
	}
	pthread_mutex_unlock(&s->lock);
}

int cluster_sync_new(struct kube_client *c, struct cluster_sync **out, struct dt_err *err)
{
	static const struct kube_resource *const res[2] = {
		&cluster_res_nodetopologies, &cluster_res_learnedtypes,
	};
	struct cluster_sync *s = calloc(1, sizeof(*s));
	int rc = 0;

	*out = NULL;
	if (!s)
		return dt_err_set(err, -ENOMEM, "out of memory");
	s->c = c;
	pthread_mutex_init(&s->lock, NULL);
	for (int k = 0; k < 2 && !rc; k++) {
		struct kube_informer_opts io = { .on_event = on_event, .arg = &s->wa[k] };

		s->wa[k] = (struct watch_arg){ s, k };
		rc = kube_informer_new(c, res[k], &io, &s->inf[k], err);
		if (!rc)
			rc = kube_informer_start(s->inf[k], err);
	}
	if (rc) {
		cluster_sync_free(s);
		return rc;
	}
	*out = s;
	return 0;
}

void cluster_sync_free(struct cluster_sync *s)
{
	if (!s)
		return;
	for (int k = 0; k < 2; k++) {
		if (s->inf[k]) {
			kube_informer_stop(s->inf[k]);
			kube_informer_free(s->inf[k]);
		}
		map_fini(&s->map[k]);
	}
	pthread_mutex_destroy(&s->lock);
	free(s);
}

bool cluster_sync_wait_synced(struct cluster_sync *s, long timeout_ms)
{
	return kube_informer_wait_synced(s->inf[0], timeout_ms) &&
	       kube_informer_wait_synced(s->inf[1], timeout_ms);
}

void cluster_sync_node_have(struct cluster_sync *s, const char *name, struct cluster_have *out)
{
	struct have_entry *e;

	pthread_mutex_lock(&s->lock);
	e = map_get(&s->map[0], name);
	*out = (struct cluster_have){ e != NULL, e && e->stale, e ? e->digest : 0 };
	pthread_mutex_unlock(&s->lock);
}

/* ---- writes ---- */

/* What a write starts from: the entry as the map has it now. */
struct known {
	bool exists;
	char rv[64], uid[64];
	uint64_t digest;
};

static void known_of(struct cluster_sync *s, int kind, const char *name, struct known *k)
{
	struct have_entry *e;

	memset(k, 0, sizeof(*k));
	pthread_mutex_lock(&s->lock);
	e = map_get(&s->map[kind], name);
	if (e) {
		k->exists = true;
		k->digest = e->digest;
		snprintf(k->rv, sizeof(k->rv), "%s", e->rv);
		snprintf(k->uid, sizeof(k->uid), "%s", e->uid);
	}
	pthread_mutex_unlock(&s->lock);
}

/* The object the server answered with becomes what we know of it. */
static void learn(struct cluster_sync *s, int kind, json_object *o, struct known *k)
{
	const char *name = kube_json_str(o, "metadata", "name", NULL);

	if (!name)
		return;
	pthread_mutex_lock(&s->lock);
	map_put(&s->map[kind], name, kube_json_str(o, "metadata", "uid", NULL),
		kube_json_str(o, "metadata", "resourceVersion", NULL),
		kube_json_get(o, "status", NULL));
	pthread_mutex_unlock(&s->lock);
	known_of(s, kind, name, k);
}

static json_object *object_body(const struct kube_resource *res, const char *name,
				const char *rv)
{
	json_object *o = json_object_new_object(), *meta = json_object_new_object();

	json_object_object_add(o, "apiVersion", json_object_new_string(CLUSTER_API_VERSION));
	json_object_object_add(o, "kind", json_object_new_string(res->kind));
	json_object_object_add(meta, "name", json_object_new_string(name));
	if (rv)
		json_object_object_add(meta, "resourceVersion", json_object_new_string(rv));
	json_object_object_add(o, "metadata", meta);
	return o;
}

/* Read name afresh: what we know of it (k->exists false when it is gone). */
static int refresh(struct cluster_sync *s, const struct kube_resource *res, const char *name,
		   struct known *k, struct dt_err *err)
{
	struct kube_ref ref = { res, NULL, name, NULL };
	json_object *o = NULL;
	int rc = kube_get(s->c, &ref, &o, err);

	if (rc == KUBE_ENOTFOUND) {
		pthread_mutex_lock(&s->lock);
		map_remove(&s->map[kind_of(res)], name);
		pthread_mutex_unlock(&s->lock);
		memset(k, 0, sizeof(*k));
		rc = 0;
	} else if (!rc) {
		learn(s, kind_of(res), o, k);
	}
	json_object_put(o);
	return rc;
}

/* Create name, empty (status comes with the next write). */
static int create(struct cluster_sync *s, const struct kube_resource *res, const char *name,
		  struct known *k, struct dt_err *err)
{
	struct kube_ref ref = { res, NULL, NULL, NULL };
	json_object *body = object_body(res, name, NULL), *labels = json_object_new_object();
	json_object *meta = kube_json_get(body, "metadata", NULL), *o = NULL;
	int rc;

	json_object_object_add(labels, "app.kubernetes.io/managed-by",
			       json_object_new_string("dratopo-coordinator"));
	json_object_object_add(meta, "labels", labels);
	json_object_object_add(body, "spec", json_object_new_object());
	rc = kube_create(s->c, &ref, body, &o, err);
	json_object_put(body);
	if (rc == KUBE_EEXISTS)                 /* our cache is behind: read it */
		return refresh(s, res, name, k, err);
	if (!rc) {
		pthread_mutex_lock(&s->lock);
		s->st.creates++;
		pthread_mutex_unlock(&s->lock);
		learn(s, kind_of(res), o, k);
	}
	json_object_put(o);
	return rc;
}

static int put_status(struct cluster_sync *s, const struct kube_resource *res, const char *name,
		      const struct known *k, json_object *status, struct known *after,
		      struct dt_err *err)
{
	struct kube_ref ref = { res, NULL, name, "status" };
	json_object *body = object_body(res, name, k->rv), *o = NULL;
	int rc;

	json_object_object_add(body, "status", json_object_get(status));
	rc = kube_update(s->c, &ref, body, &o, err);
	json_object_put(body);
	if (!rc) {
		pthread_mutex_lock(&s->lock);
		s->st.updates++;
		pthread_mutex_unlock(&s->lock);
		learn(s, kind_of(res), o, after);
	}
	json_object_put(o);
	return rc;
}

static void count(struct cluster_sync *s, uint64_t *field)
{
	pthread_mutex_lock(&s->lock);
	(*field)++;
	pthread_mutex_unlock(&s->lock);
}

static int write_status(struct cluster_sync *s, const struct kube_resource *res, const char *name,
			json_object *status, struct dt_err *err)
{
	uint64_t want = cluster_status_digest(status);
	struct known k;
	int rc = 0;

	known_of(s, kind_of(res), name, &k);
	for (int attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
		if (k.exists && k.digest == want) {
			count(s, &s->st.unchanged);
			return 0;
		}
		rc = k.exists ? 0 : create(s, res, name, &k, err);
		if (!rc && k.exists && k.digest != want)
			rc = put_status(s, res, name, &k, status, &k, err);
		if (!rc)
			return 0;
		if (rc == KUBE_ECONFLICT) {
			count(s, &s->st.conflicts);
			rc = refresh(s, res, name, &k, err);
		} else if (rc == KUBE_ENOTFOUND) {
			memset(&k, 0, sizeof(k));       /* deleted meanwhile: create it */
			rc = 0;
		}
		if (rc)
			break;
	}
	count(s, &s->st.failures);
	return rc ? rc : dt_err_set(err, KUBE_ECONFLICT, "%s %s: still changing after %d "
				    "attempts", res->kind, name, WRITE_ATTEMPTS);
}

int cluster_sync_put_node(struct cluster_sync *s, const char *name, json_object *status,
			  struct dt_err *err)
{
	return write_status(s, &cluster_res_nodetopologies, name, status, err);
}

int cluster_sync_put_learned(struct cluster_sync *s, const char *type, json_object *status,
			     struct dt_err *err)
{
	char name[256];

	return write_status(s, &cluster_res_learnedtypes,
			    cluster_learned_name(type, name, sizeof(name)), status, err);
}

int cluster_sync_delete_node(struct cluster_sync *s, const char *name, struct dt_err *err)
{
	struct kube_ref ref = { &cluster_res_nodetopologies, NULL, name, NULL };
	struct known k;
	int rc;

	known_of(s, 0, name, &k);
	if (!k.exists)
		return 0;
	rc = kube_delete(s->c, &ref, k.uid[0] ? k.uid : NULL, NULL, err);
	if (rc == KUBE_ENOTFOUND)
		rc = 0;
	pthread_mutex_lock(&s->lock);
	if (!rc) {
		map_remove(&s->map[0], name);
		s->st.deletes++;
	} else {
		s->st.failures++;
	}
	pthread_mutex_unlock(&s->lock);
	return rc;
}

/* ---- reading the caches ---- */

struct each {
	int (*fn)(void *arg, json_object *obj);
	void *arg;
};

static int each_object(void *arg, const struct kube_object *obj)
{
	struct each *e = arg;
	json_object *o = json_tokener_parse(obj->json);
	int rc;

	if (!o)
		return 0;
	rc = e->fn(e->arg, o);
	json_object_put(o);
	return rc;
}

int cluster_sync_foreach(struct cluster_sync *s, const struct kube_resource *res,
			 int (*fn)(void *arg, json_object *obj), void *arg)
{
	struct each e = { fn, arg };

	return kube_informer_foreach(s->inf[kind_of(res)], each_object, &e);
}

static int name_order(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int cluster_sync_node_names(struct cluster_sync *s, bool only_stale, char ***names, size_t *n)
{
	struct have_map *m = &s->map[0];
	size_t k = 0;
	char **v;

	pthread_mutex_lock(&s->lock);
	v = calloc(m->n + 1, sizeof(*v));
	for (size_t i = 0; v && i < m->nb; i++)
		for (struct have_entry *e = m->b[i]; e; e = e->next)
			if ((!only_stale || e->stale) && !(v[k++] = strdup(e->name)))
				k--;
	pthread_mutex_unlock(&s->lock);
	if (!v)
		return -ENOMEM;
	qsort(v, k, sizeof(*v), name_order);
	*names = v;
	*n = k;
	return 0;
}

void cluster_sync_stats(struct cluster_sync *s, struct cluster_sync_stats *out)
{
	pthread_mutex_lock(&s->lock);
	*out = s->st;
	out->nodes = s->map[0].n;
	out->learned = s->map[1].n;
	pthread_mutex_unlock(&s->lock);
}
