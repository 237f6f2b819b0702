/* kube_events.c - events.k8s.io/v1 Events, as client-go's recorder writes
 * them: the same event again within the dedup window is dropped, each
 * object has a token bucket (burst 25, one more every 5 minutes), and a
 * background thread writes them so that a caller never waits on the
 * network. Events are best effort: a failed write is counted and logged,
 * never returned to the reconcile that asked for it. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hash.h"
#include "kube_internal.h"
#include "obs_log.h"
#include "utf8.h"

#define NOTE_MAX  1024
#define TABLE_CAP 8192                  /* objects and events remembered */

struct pending {
	struct pending *next;
	char ns[256];
	json_object *event;
};

struct slot {
	uint64_t key;                   /* 0: empty */
	int64_t at_ms;                  /* last seen (dedup) / last refill (bucket) */
	double tokens;
};

struct kube_recorder {
	struct kube_client *c;
	char *controller, *instance;
	unsigned burst, refill_s, dedup_s, queue_max;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct pending *head, **tail;
	unsigned queued;
	struct slot buckets[TABLE_CAP], seen[TABLE_CAP];
	size_t n_buckets, n_seen;
	struct kube_recorder_stats stats;
	bool stopping;
	int64_t drain_until_ms;
	pthread_t thread;
};

/* The slot for key in table t (n entries), inserting it; a full table is
 * wiped, forgetting old buckets rather than refusing events. */
static struct slot *slot_for(struct slot *t, size_t *n, uint64_t key, bool *fresh)
{
	size_t i;

	key |= 1;                       /* 0 marks an empty slot */
	if (*n * 4 >= TABLE_CAP * 3) {
		memset(t, 0, sizeof(struct slot) * TABLE_CAP);
		*n = 0;
	}
	for (i = key % TABLE_CAP; t[i].key && t[i].key != key; i = (i + 1) % TABLE_CAP)
		;
	*fresh = !t[i].key;
	if (*fresh) {
		t[i].key = key;
		(*n)++;
	}
	return &t[i];
}

static void *writer(void *arg);

int kube_recorder_new(struct kube_client *c, const struct kube_recorder_opts *opts,
		      struct kube_recorder **out, struct dt_err *err)
{
	struct kube_recorder *r = calloc(1, sizeof(*r));
	int rc;

	*out = NULL;
	if (!r)
		return dt_err_set(err, -ENOMEM, "out of memory");
	r->c = c;
	r->controller = strdup(opts && opts->controller ? opts->controller : "dratopo.io/coordinator");
	r->instance = strdup(opts && opts->instance ? opts->instance : "dratopo");
	r->burst = opts && opts->burst ? opts->burst : 25;
	r->refill_s = opts && opts->refill_s ? opts->refill_s : 300;
	r->dedup_s = opts && opts->dedup_s ? opts->dedup_s : 600;
	r->queue_max = opts && opts->queue_max ? opts->queue_max : 1000;
	r->tail = &r->head;
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->cond, NULL);
	if (!r->controller || !r->instance) {
		rc = dt_err_set(err, -ENOMEM, "out of memory");
		goto fail;
	}
	rc = pthread_create(&r->thread, NULL, writer, r);
	if (rc) {
		rc = dt_err_set(err, -rc, "events: cannot start a thread: %s", strerror(rc));
		goto fail;
	}
	*out = r;
	return 0;
fail:
	free(r->controller);
	free(r->instance);
	pthread_cond_destroy(&r->cond);
	pthread_mutex_destroy(&r->lock);
	free(r);
	return rc;
}

void kube_recorder_free(struct kube_recorder *r, long timeout_ms)
{
	struct pending *p, *next;

	if (!r)
		return;
	pthread_mutex_lock(&r->lock);
	r->stopping = true;
	r->drain_until_ms = kube_now_ms() + timeout_ms;
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
	pthread_join(r->thread, NULL);
	for (p = r->head; p; p = next) {
		next = p->next;
		json_object_put(p->event);
		free(p);
	}
	pthread_cond_destroy(&r->cond);
	pthread_mutex_destroy(&r->lock);
	free(r->controller);
	free(r->instance);
	free(r);
}

static void write_one(struct kube_recorder *r, struct pending *p)
{
	struct kube_ref ref = { &kube_res_events, p->ns, NULL, NULL };
	struct dt_err err = { 0 };
	int rc = kube_create(r->c, &ref, p->event, NULL, &err);

	pthread_mutex_lock(&r->lock);
	if (rc)
		r->stats.failed++;
	else
		r->stats.written++;
	pthread_mutex_unlock(&r->lock);
	if (rc)
		obs_log(OBS_WARN, "kube_event_failed", "error", err.msg, NULL);
}

static void *writer(void *arg)
{
	struct kube_recorder *r = arg;

	pthread_mutex_lock(&r->lock);
	for (;;) {
		struct pending *p;

		while (!r->head && !r->stopping)
			pthread_cond_wait(&r->cond, &r->lock);
		if (!r->head || (r->stopping && kube_now_ms() >= r->drain_until_ms))
			break;
		p = r->head;
		r->head = p->next;
		if (!r->head)
			r->tail = &r->head;
		r->queued--;
		pthread_mutex_unlock(&r->lock);
		write_one(r, p);
		json_object_put(p->event);
		free(p);
		pthread_mutex_lock(&r->lock);
	}
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

/* 0: allowed; 1: deduplicated or rate limited (counted). Under r->lock. */
static int admit(struct kube_recorder *r, const struct kube_objref *ref, const char *type,
		 const char *reason, const char *note)
{
	uint64_t obj = hash_field(hash_field(hash_field(hash_field(HASH_FNV_OFFSET, ref->kind),
							     ref->ns), ref->name), ref->uid);
	uint64_t ev = hash_field(hash_field(hash_field(obj, type), reason), note);
	int64_t now = kube_now_ms();
	struct slot *s;
	bool fresh;

	s = slot_for(r->seen, &r->n_seen, ev, &fresh);
	if (!fresh && now - s->at_ms < (int64_t)r->dedup_s * 1000) {
		r->stats.deduplicated++;
		return 1;
	}
	s->at_ms = now;
	s = slot_for(r->buckets, &r->n_buckets, obj, &fresh);
	if (fresh) {
		s->tokens = r->burst;
		s->at_ms = now;
	} else {
		s->tokens += (double)(now - s->at_ms) / (r->refill_s * 1000.0);
		if (s->tokens > r->burst)
			s->tokens = r->burst;
		s->at_ms = now;
	}
	if (s->tokens < 1) {
		r->stats.rate_limited++;
		return 1;
	}
	s->tokens -= 1;
	return 0;
}

static void cut_utf8(char *s, size_t max)
{
	size_t n = strlen(s);

	if (n <= max)
		return;
	s[utf8_char_start(s, max)] = '\0';        /* never end inside a character */
}

static json_object *build(struct kube_recorder *r, const struct kube_objref *ref,
			  const char *type, const char *reason, const char *action,
			  const char *note, const char *ns)
{
	json_object *o = json_object_new_object(), *meta = json_object_new_object();
	json_object *reg = json_object_new_object();
	struct timespec ts;
	char name[300], when[40];

	clock_gettime(CLOCK_REALTIME, &ts);
	kube_micro_time(&ts, when, sizeof(when));
	snprintf(name, sizeof(name), "%.200s.%llx", ref->name,
		 (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec);
	json_object_object_add(o, "apiVersion", json_object_new_string("events.k8s.io/v1"));
	json_object_object_add(o, "kind", json_object_new_string("Event"));
	json_object_object_add(meta, "name", json_object_new_string(name));
	json_object_object_add(meta, "namespace", json_object_new_string(ns));
	json_object_object_add(o, "metadata", meta);
	json_object_object_add(o, "eventTime", json_object_new_string(when));
	json_object_object_add(o, "reportingController", json_object_new_string(r->controller));
	json_object_object_add(o, "reportingInstance", json_object_new_string(r->instance));
	json_object_object_add(o, "action", json_object_new_string(action));
	json_object_object_add(o, "reason", json_object_new_string(reason));
	json_object_object_add(o, "type", json_object_new_string(type));
	json_object_object_add(o, "note", json_object_new_string(note));
	json_object_object_add(reg, "apiVersion", json_object_new_string(ref->api_version));
	json_object_object_add(reg, "kind", json_object_new_string(ref->kind));
	if (ref->ns)
		json_object_object_add(reg, "namespace", json_object_new_string(ref->ns));
	json_object_object_add(reg, "name", json_object_new_string(ref->name));
	if (ref->uid)
		json_object_object_add(reg, "uid", json_object_new_string(ref->uid));
	json_object_object_add(o, "regarding", reg);
	return o;
}

int kube_event(struct kube_recorder *r, const struct kube_objref *regarding,
	       const char *type, const char *reason, const char *action,
	       const char *fmt, ...)
{
	char note[NOTE_MAX * 2];
	struct pending *p;
	va_list ap;
	int rc;

	if (!regarding || !regarding->name || !regarding->kind || !regarding->api_version ||
	    !type || !reason || !action)
		return -EINVAL;
	va_start(ap, fmt);
	vsnprintf(note, sizeof(note), fmt, ap);
	va_end(ap);
	cut_utf8(note, NOTE_MAX);
	pthread_mutex_lock(&r->lock);
	rc = admit(r, regarding, type, reason, note);
	if (!rc && r->queued >= r->queue_max) {
		r->stats.dropped++;
		rc = 1;
	}
	pthread_mutex_unlock(&r->lock);
	if (rc)
		return rc;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	snprintf(p->ns, sizeof(p->ns), "%s", regarding->ns && regarding->ns[0] ?
		 regarding->ns : "default");
	p->event = build(r, regarding, type, reason, action, note, p->ns);
	if (!p->event) {
		free(p);
		return -ENOMEM;
	}
	pthread_mutex_lock(&r->lock);
	*r->tail = p;
	r->tail = &p->next;
	r->queued++;
	pthread_cond_signal(&r->cond);
	pthread_mutex_unlock(&r->lock);
	return 0;
}

void kube_recorder_stats(struct kube_recorder *r, struct kube_recorder_stats *out)
{
	pthread_mutex_lock(&r->lock);
	*out = r->stats;
	pthread_mutex_unlock(&r->lock);
}
