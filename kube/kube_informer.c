/* kube_informer.c - one kind's cache, kept by list and watch on a thread
 * of its own (the contract client-go's reflector keeps):
 *
 *   list (pages, consistent read) -> watch from the list's resourceVersion
 *   -> the watch ends (its timeout, 5-10 minutes at random) -> watch again
 *   from the last resourceVersion seen (an event's or a bookmark's)
 *   -> 410 Gone (the HTTP status, or an ERROR event) -> list again, and
 *   report a delete for every cached object the new list lacks.
 *
 * Failures back off with jitter and resume from the last resourceVersion.
 * Each object is decoded and validated by the model as a manifest file is;
 * objects the model refuses stay in the cache (so that deletes still match)
 * but are left out of snapshots, and their problems are logged once. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube_internal.h"
#include "obs_log.h"

#define ORIGIN "kube-apiserver"

struct kube_informer {
	struct kube_client *c;
	const struct kube_resource *res;
	int model_kind;                 /* -1: the model does not know the kind */
	char *ns, *label_selector, *field_selector;
	kube_event_fn on_event;
	void *arg;
	const struct model_validate_opts *validate;
	unsigned min_watch_s;
	size_t max_event;
	unsigned page_size;

	pthread_mutex_t lock;           /* store, synced, stats */
	pthread_cond_t cond;
	struct kube_store store;        /* written by the thread only */
	bool synced;
	struct kube_informer_stats stats;

	pthread_t thread;
	bool running;
	atomic_bool stop;
	char rv[64];                    /* where the next watch starts; "" = list */
	char what[160];                 /* "pods" for log lines */
};

static char *dup_opt(const char *s)
{
	return s && s[0] ? strdup(s) : NULL;
}

int kube_informer_new(struct kube_client *c, const struct kube_resource *res,
		      const struct kube_informer_opts *opts, struct kube_informer **out,
		      struct dt_err *err)
{
	struct kube_informer_opts none = { 0 };
	struct kube_informer *inf = calloc(1, sizeof(*inf));

	*out = NULL;
	if (!opts)
		opts = &none;
	if (!inf)
		return dt_err_set(err, -ENOMEM, "out of memory");
	inf->c = c;
	inf->res = res;
	inf->model_kind = kube_resource_model_kind(res);
	inf->ns = dup_opt(opts->ns);
	inf->label_selector = dup_opt(opts->label_selector);
	inf->field_selector = dup_opt(opts->field_selector);
	inf->on_event = opts->on_event;
	inf->arg = opts->arg;
	inf->validate = opts->validate;
	inf->min_watch_s = opts->min_watch_timeout_s ? opts->min_watch_timeout_s : 300;
	inf->max_event = opts->max_event_bytes ? opts->max_event_bytes : (32u << 20);
	inf->page_size = opts->page_size ? opts->page_size : 500;
	kube_resource_name(res, inf->what, sizeof(inf->what));
	pthread_mutex_init(&inf->lock, NULL);
	pthread_cond_init(&inf->cond, NULL);
	atomic_init(&inf->stop, false);
	*out = inf;
	return 0;
}

/* ---- applying objects ---- */

/* An entry for a JSON object from a list or a watch event; *model gets the
 * decoded object in a set the caller frees (*set). */
static int make_entry(struct kube_informer *inf, json_object *o, struct kube_entry **out,
		      struct model_set **set, struct model_object **model)
{
	const char *ns = kube_json_str(o, "metadata", "namespace", NULL);
	const char *name = kube_json_str(o, "metadata", "name", NULL);
	const char *uid = kube_json_str(o, "metadata", "uid", NULL);
	const char *rv = kube_json_str(o, "metadata", "resourceVersion", NULL);
	json_object *meta = kube_json_get(o, "metadata", NULL);
	struct dt_diags diags;
	struct strbuf problems = STRBUF_INIT;
	const char *json;
	int rc = 0;

	*out = NULL;
	*set = NULL;
	*model = NULL;
	if (!name)
		return KUBE_EPROTO;
	/* managedFields are the server's bookkeeping: half an object's size
	 * and nothing dratopo reads. */
	if (meta)
		json_object_object_del(meta, "managedFields");
	/* List items come without apiVersion and kind; the model needs both. */
	if (!kube_json_get(o, "kind", NULL)) {
		char gv[128];

		snprintf(gv, sizeof(gv), "%s%s%s", inf->res->group, inf->res->group[0] ? "/" : "",
			 inf->res->version);
		json_object_object_add(o, "apiVersion", json_object_new_string(gv));
		json_object_object_add(o, "kind", json_object_new_string(inf->res->kind));
	}
	json = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
					      JSON_C_TO_STRING_NOSLASHESCAPE);
	if (!json)
		return -ENOMEM;
	dt_diags_init(&diags);
	if (inf->model_kind >= 0) {
		*set = model_set_new();
		if (!*set)
			return -ENOMEM;
		rc = kube_decode(*set, json, strlen(json), ORIGIN, inf->validate, model, &diags);
		for (size_t i = 0; i < diags.n; i++)
			sb_printf(&problems, "%s%s", i ? "; " : "", diags.msgs[i]);
		if (rc < 0)
			sb_printf(&problems, "%scannot decode: %s", problems.len ? "; " : "",
				  strerror(-rc));
		rc = 0;
	}
	*out = kube_entry_new(ns ? ns : "", name, uid, rv, json, strlen(json),
			      problems.len ? sb_str(&problems) : NULL);
	if (!*out)
		rc = -ENOMEM;
	dt_diags_free(&diags);
	sb_free(&problems);
	return rc;
}

static void emit(struct kube_informer *inf, enum kube_event_type type, struct kube_entry *e,
		 const struct model_object *model)
{
	if (!inf->on_event)
		return;
	e->obj.model = model;
	inf->on_event(inf->arg, type, &e->obj);
	e->obj.model = NULL;
}

static void log_problems(struct kube_informer *inf, const struct kube_entry *e,
			 const struct kube_entry *old)
{
	if (!e->problems || (old && old->problems && !strcmp(old->problems, e->problems)))
		return;
	obs_log(OBS_WARN, "kube_object_refused", "resource", inf->what, "namespace", e->obj.ns,
		"name", e->obj.name, "problems", e->problems, NULL);
}

/* Store an object (ADDED or MODIFIED); an unchanged one (same
 * resourceVersion, as a relist sees most) is only marked seen. */
static int upsert(struct kube_informer *inf, json_object *o, bool from_list)
{
	struct kube_entry *e, *old = NULL, *cur;
	struct model_set *set = NULL;
	struct model_object *model = NULL;
	const char *ns = kube_json_str(o, "metadata", "namespace", NULL);
	const char *name = kube_json_str(o, "metadata", "name", NULL);
	const char *rv = kube_json_str(o, "metadata", "resourceVersion", NULL);
	int rc;

	if (!name)
		return 0;               /* nothing to key it by: ignore */
	cur = kube_store_get(&inf->store, ns ? ns : "", name);
	if (from_list && cur && rv && !strcmp(cur->obj.resource_version, rv)) {
		cur->seen = true;
		return 0;
	}
	rc = make_entry(inf, o, &e, &set, &model);
	if (rc) {
		model_set_free(set);
		return rc;
	}
	e->seen = true;
	pthread_mutex_lock(&inf->lock);
	rc = kube_store_put(&inf->store, e, &old);
	if (!rc)
		inf->stats.events++;
	pthread_mutex_unlock(&inf->lock);
	if (rc) {
		kube_entry_free(e);
		model_set_free(set);
		return rc;
	}
	log_problems(inf, e, old);
	emit(inf, old ? KUBE_MODIFIED : KUBE_ADDED, e, model);
	kube_entry_free(old);
	model_set_free(set);
	return 0;
}

static void remove_entry(struct kube_informer *inf, const char *ns, const char *name,
			 json_object *last)
{
	struct kube_entry *e, *fresh = NULL;
	struct model_set *set = NULL;
	struct model_object *model = NULL;

	pthread_mutex_lock(&inf->lock);
	e = kube_store_take(&inf->store, ns, name);
	if (e)
		inf->stats.events++;
	pthread_mutex_unlock(&inf->lock);
	if (!e)
		return;
	/* The delete event carries the object's final state; report that. */
	if (last && make_entry(inf, last, &fresh, &set, &model) == 0) {
		emit(inf, KUBE_DELETED, fresh, model);
		kube_entry_free(fresh);
	} else {
		emit(inf, KUBE_DELETED, e, NULL);
	}
	model_set_free(set);
	kube_entry_free(e);
}

/* ---- list ---- */

static int list_item(void *arg, json_object *item)
{
	return upsert(arg, item, true);
}

static int relist(struct kube_informer *inf, struct dt_err *err)
{
	struct kube_ref ref = { inf->res, inf->ns ? inf->ns : "", NULL, NULL };
	char rv[sizeof(inf->rv)] = "";
	struct kube_entry *e;
	size_t i = 0, gone = 0;
	int rc;

	pthread_mutex_lock(&inf->lock);
	inf->stats.lists++;
	pthread_mutex_unlock(&inf->lock);
	for (i = 0; (e = kube_store_next(&inf->store, &i));)
		e->seen = false;
	rc = kube_list_ex(inf->c, &ref, inf->label_selector, inf->field_selector, inf->page_size,
			  &inf->stop, list_item, inf, rv, sizeof(rv), err);
	if (rc)
		return rc;
	/* What the cache has and the list lacks was deleted meanwhile. Take
	 * the names first: removing while iterating would skip entries. */
	for (;;) {
		char ns[256], name[256];
		bool found = false;

		for (i = 0; (e = kube_store_next(&inf->store, &i));) {
			if (!e->seen) {
				snprintf(ns, sizeof(ns), "%s", e->obj.ns);
				snprintf(name, sizeof(name), "%s", e->obj.name);
				found = true;
				break;
			}
		}
		if (!found)
			break;
		remove_entry(inf, ns, name, NULL);
		gone++;
	}
	snprintf(inf->rv, sizeof(inf->rv), "%s", rv);
	pthread_mutex_lock(&inf->lock);
	snprintf(inf->stats.resource_version, sizeof(inf->stats.resource_version), "%s", rv);
	inf->synced = true;
	pthread_cond_broadcast(&inf->cond);
	pthread_mutex_unlock(&inf->lock);
	{
		struct obs_ev ev;

		obs_ev_begin(&ev, OBS_INFO, "kube_listed");
		obs_ev_str(&ev, "resource", inf->what);
		obs_ev_int(&ev, "objects", (long long)inf->store.n);
		obs_ev_int(&ev, "deleted", (long long)gone);
		obs_ev_str(&ev, "resource_version", rv);
		obs_ev_end(&ev);
	}
	if (inf->on_event)
		inf->on_event(inf->arg, KUBE_SYNCED, NULL);
	return 0;
}

/* ---- watch ---- */

struct watch_state {
	struct kube_informer *inf;
	struct kube_stream stream;
	struct dt_err *err;
	unsigned events;
};

static void set_rv(struct kube_informer *inf, const char *rv)
{
	if (!rv || !rv[0])
		return;
	snprintf(inf->rv, sizeof(inf->rv), "%s", rv);
	pthread_mutex_lock(&inf->lock);
	snprintf(inf->stats.resource_version, sizeof(inf->stats.resource_version), "%s", rv);
	pthread_mutex_unlock(&inf->lock);
}

static int on_watch_event(void *arg, json_object *ev)
{
	struct watch_state *ws = arg;
	struct kube_informer *inf = ws->inf;
	const char *type = kube_json_str(ev, "type", NULL);
	json_object *o = kube_json_get(ev, "object", NULL);
	const char *rv = kube_json_str(o, "metadata", "resourceVersion", NULL);
	int rc = 0;

	if (!type || !o || !json_object_is_type(o, json_type_object))
		return dt_err_set(ws->err, KUBE_EPROTO, "watch %s: an event without type or object",
				  inf->what);
	ws->events++;
	if (!strcmp(type, "ADDED") || !strcmp(type, "MODIFIED")) {
		rc = upsert(inf, o, false);
	} else if (!strcmp(type, "DELETED")) {
		const char *ns = kube_json_str(o, "metadata", "namespace", NULL);
		const char *name = kube_json_str(o, "metadata", "name", NULL);

		if (name)
			remove_entry(inf, ns ? ns : "", name, o);
	} else if (!strcmp(type, "BOOKMARK")) {
		pthread_mutex_lock(&inf->lock);
		inf->stats.bookmarks++;
		pthread_mutex_unlock(&inf->lock);
	} else if (!strcmp(type, "ERROR")) {
		json_object *code = kube_json_get(o, "code", NULL);
		const char *msg = kube_json_str(o, "message", NULL);
		int http = code ? json_object_get_int(code) : 0;

		return dt_err_set(ws->err, http == 410 ? KUBE_EEXPIRED :
				  kube_code_for_status(http ? http : 500,
						       kube_json_str(o, "reason", NULL)),
				  "watch %s: %s (%d)", inf->what, msg ? msg : "error event", http);
	} else {
		return dt_err_set(ws->err, KUBE_EPROTO, "watch %s: unknown event type \"%s\"",
				  inf->what, type);
	}
	if (rc)
		return dt_err_set(ws->err, rc, "watch %s: out of memory", inf->what);
	set_rv(inf, rv);
	return 0;
}

static int on_watch_data(void *arg, const char *buf, size_t len)
{
	struct watch_state *ws = arg;

	return kube_stream_feed(&ws->stream, buf, len, on_watch_event, ws, ws->err);
}

static unsigned random_timeout(unsigned min_s)
{
	static _Thread_local unsigned seed;

	if (!seed)
		seed = (unsigned)time(NULL) ^ (unsigned)(uintptr_t)&seed;
	return min_s + (unsigned)(rand_r(&seed) % (min_s ? min_s : 1));
}

/* One watch, until it ends. *events gets how many events it brought. */
static int watch(struct kube_informer *inf, unsigned *events, struct dt_err *err)
{
	struct kube_ref ref = { inf->res, inf->ns ? inf->ns : "", NULL, NULL };
	struct watch_state ws = { .inf = inf, .err = err };
	struct strbuf q = STRBUF_INIT;
	unsigned timeout = random_timeout(inf->min_watch_s);
	struct kube_req rq = {
		.verb = "watch", .method = "GET", .ref = &ref, .idempotent = true,
		.cancel = &inf->stop, .on_data = on_watch_data, .data_arg = &ws,
		.timeout_ms = (long)(timeout + 30) * 1000, .no_retry = true,
	};
	long status = 0;
	int rc;

	*events = 0;
	if (kube_stream_init(&ws.stream, inf->max_event))
		return dt_err_set(err, -ENOMEM, "out of memory");
	sb_printf(&q, "watch=1&allowWatchBookmarks=true&timeoutSeconds=%u", timeout);
	kube_query_add(&q, "resourceVersion", inf->rv);
	kube_query_add(&q, "labelSelector", inf->label_selector);
	kube_query_add(&q, "fieldSelector", inf->field_selector);
	pthread_mutex_lock(&inf->lock);
	inf->stats.watches++;
	pthread_mutex_unlock(&inf->lock);
	rq.query = sb_str(&q);
	rc = sb_error(&q) ? dt_err_set(err, -ENOMEM, "out of memory") :
	     kube_do(inf->c, &rq, NULL, &status, err);
	*events = ws.events;
	sb_free(&q);
	kube_stream_fini(&ws.stream);
	return rc;
}

/* ---- the thread ---- */

static void log_error(struct kube_informer *inf, const char *event, const struct dt_err *err,
		      int64_t retry_ms)
{
	struct obs_ev ev;

	obs_ev_begin(&ev, OBS_WARN, event);
	obs_ev_str(&ev, "resource", inf->what);
	obs_ev_str(&ev, "error", err->msg);
	if (retry_ms >= 0)
		obs_ev_int(&ev, "retry_ms", (long long)retry_ms);
	obs_ev_end(&ev);
}

static void *run(void *arg)
{
	struct kube_informer *inf = arg;
	unsigned attempt = 0;

	while (!atomic_load(&inf->stop)) {
		struct dt_err err = { 0 };
		unsigned events = 0;
		int64_t started = kube_now_ms(), wait;
		int rc;

		if (!inf->rv[0]) {
			rc = relist(inf, &err);
			if (rc == KUBE_ECANCELED || atomic_load(&inf->stop))
				break;
			if (rc) {
				wait = kube_backoff_ms(0.8, 30, attempt++);
				pthread_mutex_lock(&inf->lock);
				inf->stats.errors++;
				pthread_mutex_unlock(&inf->lock);
				log_error(inf, "kube_list_error", &err, wait);
				kube_sleep_ms(wait, &inf->stop);
				continue;
			}
		}
		rc = watch(inf, &events, &err);
		if (rc == KUBE_ECANCELED || atomic_load(&inf->stop))
			break;
		if (rc == KUBE_EEXPIRED) {
			/* History is gone: only a fresh, consistent list is right. */
			pthread_mutex_lock(&inf->lock);
			inf->stats.relists_expired++;
			pthread_mutex_unlock(&inf->lock);
			log_error(inf, "kube_watch_expired", &err, -1);
			inf->rv[0] = '\0';
			continue;
		}
		if (rc || (!events && kube_now_ms() - started < 1000)) {
			/* A failure, or a stream that ends at once again and again. */
			if (!rc)
				dt_err_set(&err, KUBE_EUNAVAILABLE, "watch %s: closed at once",
					   inf->what);
			wait = kube_backoff_ms(0.8, 30, attempt++);
			pthread_mutex_lock(&inf->lock);
			inf->stats.errors++;
			pthread_mutex_unlock(&inf->lock);
			log_error(inf, "kube_watch_error", &err, wait);
			kube_sleep_ms(wait, &inf->stop);
			continue;
		}
		attempt = 0;
	}
	return NULL;
}

int kube_informer_start(struct kube_informer *inf, struct dt_err *err)
{
	int rc;

	if (inf->running)
		return 0;
	atomic_store(&inf->stop, false);
	rc = pthread_create(&inf->thread, NULL, run, inf);
	if (rc)
		return dt_err_set(err, -rc, "informer %s: cannot start a thread: %s", inf->what,
				  strerror(rc));
	inf->running = true;
	return 0;
}

void kube_informer_stop(struct kube_informer *inf)
{
	if (!inf || !inf->running)
		return;
	atomic_store(&inf->stop, true);
	pthread_join(inf->thread, NULL);
	inf->running = false;
}

void kube_informer_free(struct kube_informer *inf)
{
	if (!inf)
		return;
	kube_informer_stop(inf);
	kube_store_fini(&inf->store);
	pthread_cond_destroy(&inf->cond);
	pthread_mutex_destroy(&inf->lock);
	free(inf->ns);
	free(inf->label_selector);
	free(inf->field_selector);
	free(inf);
}

bool kube_informer_synced(struct kube_informer *inf)
{
	bool s;

	pthread_mutex_lock(&inf->lock);
	s = inf->synced;
	pthread_mutex_unlock(&inf->lock);
	return s;
}

bool kube_informer_wait_synced(struct kube_informer *inf, long timeout_ms)
{
	struct timespec until;
	bool s;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += timeout_ms / 1000;
	until.tv_nsec += (timeout_ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&inf->lock);
	while (!inf->synced)
		if (pthread_cond_timedwait(&inf->cond, &inf->lock, &until))
			break;
	s = inf->synced;
	pthread_mutex_unlock(&inf->lock);
	return s;
}

size_t kube_informer_count(struct kube_informer *inf)
{
	size_t n;

	pthread_mutex_lock(&inf->lock);
	n = inf->store.n;
	pthread_mutex_unlock(&inf->lock);
	return n;
}

char *kube_informer_get(struct kube_informer *inf, const char *ns, const char *name)
{
	struct kube_entry *e;
	char *json = NULL;

	if (!inf->res->namespaced || !ns)
		ns = "";
	pthread_mutex_lock(&inf->lock);
	e = kube_store_get(&inf->store, ns, name);
	if (e)
		json = strdup(e->obj.json);
	pthread_mutex_unlock(&inf->lock);
	return json;
}

bool kube_informer_has(struct kube_informer *inf, const char *ns, const char *name)
{
	bool have;

	if (!inf->res->namespaced || !ns)
		ns = "";
	pthread_mutex_lock(&inf->lock);
	have = kube_store_get(&inf->store, ns, name) != NULL;
	pthread_mutex_unlock(&inf->lock);
	return have;
}

int kube_informer_foreach(struct kube_informer *inf,
			  int (*fn)(void *arg, const struct kube_object *obj), void *arg)
{
	struct kube_entry *e;
	size_t i = 0;
	int rc = 0;

	pthread_mutex_lock(&inf->lock);
	while (!rc && (e = kube_store_next(&inf->store, &i)))
		rc = fn(arg, &e->obj);
	pthread_mutex_unlock(&inf->lock);
	return rc;
}

int kube_informer_snapshot(struct kube_informer *inf, struct model_set *s, struct dt_err *err)
{
	struct kube_entry *e;
	size_t i = 0;
	int added = 0, rc = 0;
	bool server = s->server_objects;

	if (inf->model_kind < 0)
		return dt_err_set(err, -EINVAL, "snapshot: the model has no kind for %s", inf->what);
	s->server_objects = true;       /* a newer API's field is no error */
	pthread_mutex_lock(&inf->lock);
	while ((e = kube_store_next(&inf->store, &i))) {
		if (e->problems)
			continue;
		rc = model_set_load_buffer(s, e->obj.json, e->obj.json_len, ORIGIN, NULL, err);
		if (rc < 0)
			break;
		added++;
	}
	pthread_mutex_unlock(&inf->lock);
	s->server_objects = server;
	return rc < 0 ? rc : added;
}

void kube_informer_stats(struct kube_informer *inf, struct kube_informer_stats *out)
{
	pthread_mutex_lock(&inf->lock);
	*out = inf->stats;
	pthread_mutex_unlock(&inf->lock);
}
