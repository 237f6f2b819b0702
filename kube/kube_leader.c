/* kube_leader.c - leader election over a Lease (kube_leader.h): the
 * acquire-or-renew round, the elector's thread, the watch that sees
 * renewals as they happen, the fence a client's writes pass, and the
 * release on shutdown.
 *
 * What the elector knows is `seen`: the last record read (by a GET, a
 * write's answer or the watch) and `seen_ms`, the local time it last
 * CHANGED. A Lease held by someone else counts as expired only when
 * seen_ms + its leaseDurationSeconds has passed on our clock; a record that
 * merely moved to a newer resourceVersion with the same content (a label
 * someone added) does not restart the countdown, as in client-go, where
 * the raw record is compared. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "kube_internal.h"
#include "kube_leader.h"
#include "obs_log.h"
#include "timestamp.h"

#define HOLDER_MAX 256
/* No attempt waits on the API server for less than this. */
#define MIN_REQUEST_MS 200

/* The parts of a Lease's spec that leader election reads and writes. */
struct record {
	char holder[HOLDER_MAX];        /* "" not held */
	int64_t duration_s;             /* leaseDurationSeconds */
	char acquire[TIMESTAMP_MAX], renew[TIMESTAMP_MAX];
	int64_t transitions;
};

struct kube_leader {
	struct kube_client *c;
	struct kube_leader_opts o;
	char *ns, *name, *identity;     /* the options' strings, copied */
	struct kube_fence fence;        /* what kube_leader_fence installs */

	pthread_mutex_t lock;
	pthread_cond_t wake;            /* a change seen, or stop */
	bool poked;
	/* What was last seen of the Lease, under lock. */
	bool have_seen;
	struct record seen;
	int64_t seen_ms;                /* when seen last changed (our clock) */
	json_object *obj;               /* the Lease as last read or written */
	char announced[HOLDER_MAX];     /* the holder on_new_holder was told of */
	bool announced_any;
	/* Leadership: set under lock, read without it by the fence. */
	atomic_bool leading;
	atomic_bool closing;            /* released, or releasing: no more writes */
	_Atomic int64_t fence_until_ms; /* writes may start before this */
	_Atomic int64_t expiry_ms;      /* the Lease cannot have expired before this */
	atomic_int inflight;            /* fenced writes in flight */
	/* Counters, under lock. */
	uint64_t acquired, lost, renewals, failures;
	/* The thread and the watch. */
	pthread_t thread;
	bool running;
	bool stop;
	struct kube_informer *inf;
};

/* ---- clocks ---- */

static int64_t boottime_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t clock_ms(const struct kube_leader *le)
{
	return le->o.now_ms ? le->o.now_ms(le->o.clock_arg) : boottime_ms();
}

static void wall_time(const struct kube_leader *le, char *buf)
{
	struct timespec ts;
	int64_t ns;

	if (le->o.wall_ns) {
		ns = le->o.wall_ns(le->o.clock_arg);
	} else {
		clock_gettime(CLOCK_REALTIME, &ts);
		ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	}
	timestamp_format(ns, 6, buf, TIMESTAMP_MAX);
}

/* A value in [0, 1). */
static double unit_random(void)
{
	uint32_t r = 0;

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r))
		r = (uint32_t)boottime_ms() * 2654435761u;
	return r / 4294967296.0;
}

/* ---- options ---- */

static int64_t or_default(int64_t v, int64_t def)
{
	return v ? v : def;
}

static void fill_defaults(struct kube_leader_opts *o)
{
	o->lease_duration_ms = or_default(o->lease_duration_ms, KUBE_LEADER_LEASE_DURATION_MS);
	o->renew_deadline_ms = or_default(o->renew_deadline_ms, KUBE_LEADER_RENEW_DEADLINE_MS);
	o->retry_period_ms = or_default(o->retry_period_ms, KUBE_LEADER_RETRY_PERIOD_MS);
}

int kube_leader_validate(const struct kube_leader_opts *in, struct dt_err *err)
{
	struct kube_leader_opts o = *in;

	fill_defaults(&o);
	if (!o.name || !o.name[0])
		return dt_err_set(err, -EINVAL, "leader election: the Lease needs a name");
	if (!o.identity || !o.identity[0])
		return dt_err_set(err, -EINVAL, "leader election: the holder identity is empty");
	if (strlen(o.identity) >= HOLDER_MAX)
		return dt_err_set(err, -EINVAL, "leader election: the holder identity is longer "
				  "than %d bytes", HOLDER_MAX - 1);
	if (o.lease_duration_ms < 1000 || o.renew_deadline_ms <= 0 || o.retry_period_ms <= 0)
		return dt_err_set(err, -EINVAL, "leader election: the lease duration must be at "
				  "least 1s, the renew deadline and the retry period greater than "
				  "zero");
	if (o.lease_duration_ms <= o.renew_deadline_ms)
		return dt_err_set(err, -EINVAL, "leader election: the lease duration (%lldms) "
				  "must be greater than the renew deadline (%lldms)",
				  (long long)o.lease_duration_ms, (long long)o.renew_deadline_ms);
	if ((double)o.renew_deadline_ms <= KUBE_LEADER_JITTER_FACTOR * (double)o.retry_period_ms)
		return dt_err_set(err, -EINVAL, "leader election: the renew deadline (%lldms) "
				  "must be greater than %.1f x the retry period (%lldms)",
				  (long long)o.renew_deadline_ms, KUBE_LEADER_JITTER_FACTOR,
				  (long long)o.retry_period_ms);
	return 0;
}

/* ---- the record ---- */

static void copy_str(char *dst, size_t size, const char *s)
{
	snprintf(dst, size, "%s", s ? s : "");
}

static void record_of(json_object *lease, struct record *r)
{
	json_object *spec = kube_json_get(lease, "spec", NULL), *v;

	memset(r, 0, sizeof(*r));
	copy_str(r->holder, sizeof(r->holder), kube_json_str(spec, "holderIdentity", NULL));
	copy_str(r->acquire, sizeof(r->acquire), kube_json_str(spec, "acquireTime", NULL));
	copy_str(r->renew, sizeof(r->renew), kube_json_str(spec, "renewTime", NULL));
	if (spec && json_object_object_get_ex(spec, "leaseDurationSeconds", &v))
		r->duration_s = json_object_get_int64(v);
	if (spec && json_object_object_get_ex(spec, "leaseTransitions", &v))
		r->transitions = json_object_get_int64(v);
}

static bool record_equal(const struct record *a, const struct record *b)
{
	return !strcmp(a->holder, b->holder) && a->duration_s == b->duration_s &&
	       !strcmp(a->acquire, b->acquire) && !strcmp(a->renew, b->renew) &&
	       a->transitions == b->transitions;
}

/* The Lease o with r as its spec's election fields; its other fields
 * (labels, a preferred holder) are kept, managedFields dropped. */
static json_object *lease_body(const struct kube_leader *le, json_object *o,
			       const struct record *r)
{
	json_object *b = NULL, *meta, *spec;

	if (o && json_object_deep_copy(o, &b, NULL))
		return NULL;
	if (!b) {
		b = json_object_new_object();
		meta = json_object_new_object();
		json_object_object_add(b, "apiVersion",
				       json_object_new_string("coordination.k8s.io/v1"));
		json_object_object_add(b, "kind", json_object_new_string("Lease"));
		json_object_object_add(meta, "name", json_object_new_string(le->name));
		json_object_object_add(meta, "namespace", json_object_new_string(le->ns));
		json_object_object_add(b, "metadata", meta);
	}
	meta = kube_json_get(b, "metadata", NULL);
	if (meta)
		json_object_object_del(meta, "managedFields");
	spec = kube_json_get(b, "spec", NULL);
	if (!spec) {
		spec = json_object_new_object();
		json_object_object_add(b, "spec", spec);
	}
	json_object_object_add(spec, "holderIdentity", json_object_new_string(r->holder));
	json_object_object_add(spec, "leaseDurationSeconds", json_object_new_int64(r->duration_s));
	json_object_object_add(spec, "acquireTime", json_object_new_string(r->acquire));
	json_object_object_add(spec, "renewTime", json_object_new_string(r->renew));
	json_object_object_add(spec, "leaseTransitions", json_object_new_int64(r->transitions));
	return b;
}

/* ---- requests ---- */

/* How long one request may wait: a retry period (a slower API server fails
 * the round, and the next one tries again), and a leader's never past its
 * fence. */
static long request_ms(struct kube_leader *le, int64_t now)
{
	int64_t t = le->o.retry_period_ms;

	if (atomic_load(&le->leading)) {
		int64_t left = atomic_load(&le->fence_until_ms) - now;

		if (left < t)
			t = left;
	}
	return (long)(t < MIN_REQUEST_MS ? MIN_REQUEST_MS : t);
}

/* GET, POST or PUT of the Lease, once (the elector's own rounds retry). */
static int lease_call(struct kube_leader *le, const char *verb, const char *method,
		      json_object *body, int64_t now, json_object **out, struct dt_err *err)
{
	struct kube_ref ref = { &kube_res_leases, le->ns, le->name, NULL };
	const char *text = NULL;
	struct kube_req rq = {
		.verb = verb, .method = method, .ref = &ref, .no_retry = true,
		.timeout_ms = request_ms(le, now),
	};

	if (body) {
		text = json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN);
		if (!text)
			return dt_err_set(err, -ENOMEM, "out of memory");
		rq.content_type = "application/json";
		rq.body = text;
		rq.body_len = strlen(text);
	}
	if (!strcmp(method, "POST"))
		ref.name = NULL;
	return kube_do(le->c, &rq, out, NULL, err);
}

/* ---- what was seen ---- */

/* With lock held: r (of the Lease o, reference taken) is what the server
 * holds now. A different record restarts the countdown: true then. */
static bool see_locked(struct kube_leader *le, const struct record *r, json_object *o,
		       int64_t now)
{
	bool changed = !le->have_seen || !record_equal(&le->seen, r);

	if (changed) {
		le->seen = *r;
		le->seen_ms = now;
		le->have_seen = true;
	}
	json_object_put(le->obj);
	le->obj = o;
	return changed;
}

static bool held_by_other_locked(const struct kube_leader *le, int64_t now)
{
	return le->have_seen && le->seen.holder[0] && strcmp(le->seen.holder, le->identity) &&
	       now < le->seen_ms + le->seen.duration_s * 1000;
}

/* A write of ours went through: sent at send_ms, answered with o. */
static void written(struct kube_leader *le, json_object *o, int64_t send_ms)
{
	struct record r;

	record_of(o, &r);
	pthread_mutex_lock(&le->lock);
	see_locked(le, &r, o, send_ms);
	le->seen_ms = send_ms;
	le->renewals++;
	atomic_store(&le->fence_until_ms, send_ms + le->o.renew_deadline_ms);
	atomic_store(&le->expiry_ms, send_ms + le->o.lease_duration_ms);
	if (!atomic_load(&le->leading)) {
		atomic_store(&le->leading, true);
		le->acquired++;
	}
	pthread_mutex_unlock(&le->lock);
}

/* ---- one round ---- */

/* The record to write: ours, renewed now. Holding it already keeps the
 * acquire time and the transitions; taking it over counts one more. */
static void next_record(struct kube_leader *le, const struct record *cur, struct record *r)
{
	char now[TIMESTAMP_MAX];

	wall_time(le, now);
	memset(r, 0, sizeof(*r));
	copy_str(r->holder, sizeof(r->holder), le->identity);
	r->duration_s = le->o.lease_duration_ms / 1000;
	copy_str(r->renew, sizeof(r->renew), now);
	if (cur && !strcmp(cur->holder, le->identity)) {
		copy_str(r->acquire, sizeof(r->acquire), cur->acquire);
		r->transitions = cur->transitions;
	} else {
		copy_str(r->acquire, sizeof(r->acquire), now);
		r->transitions = cur ? cur->transitions + 1 : 0;
	}
}

/* PUT r over the Lease o (its resourceVersion the condition): *answer
 * gets the Lease as written, *send_ms when the request was made. */
static int put_record(struct kube_leader *le, json_object *o, const struct record *r,
		      json_object **answer, int64_t *send_ms, struct dt_err *err)
{
	json_object *body = lease_body(le, o, r);
	int rc;

	*answer = NULL;
	if (!body)
		return dt_err_set(err, -ENOMEM, "out of memory");
	*send_ms = clock_ms(le);
	rc = lease_call(le, "update", "PUT", body, *send_ms, answer, err);
	json_object_put(body);
	if (rc) {
		json_object_put(*answer);
		*answer = NULL;
	}
	return rc;
}

/* Write r as our holding of the Lease o. */
static int hold(struct kube_leader *le, json_object *o, const struct record *r,
		struct dt_err *err)
{
	json_object *answer;
	int64_t send;
	int rc = put_record(le, o, r, &answer, &send, err);

	if (!rc)
		written(le, answer, send);
	return rc;
}

static int create_lease(struct kube_leader *le, struct dt_err *err)
{
	struct record r;
	json_object *body, *answer = NULL;
	int64_t send = clock_ms(le);
	int rc;

	next_record(le, NULL, &r);
	body = lease_body(le, NULL, &r);
	if (!body)
		return dt_err_set(err, -ENOMEM, "out of memory");
	rc = lease_call(le, "create", "POST", body, send, &answer, err);
	json_object_put(body);
	if (!rc)
		written(le, answer, send);
	else
		json_object_put(answer);
	return rc;
}

/* The leader's shortcut (client-go's too): while the Lease is ours and
 * valid by what we saw, renew over the object we hold without reading it
 * first. 1 renewed, 0 take the long way. */
static int renew_fast(struct kube_leader *le, int64_t now)
{
	struct record cur, r;
	json_object *o = NULL;
	struct dt_err err = { 0 };
	bool ours;

	pthread_mutex_lock(&le->lock);
	ours = atomic_load(&le->leading) && le->have_seen && le->obj &&
	       !strcmp(le->seen.holder, le->identity) &&
	       now < le->seen_ms + le->seen.duration_s * 1000;
	if (ours) {
		cur = le->seen;
		o = json_object_get(le->obj);
	}
	pthread_mutex_unlock(&le->lock);
	if (!ours)
		return 0;
	next_record(le, &cur, &r);
	ours = hold(le, o, &r, &err) == 0;
	json_object_put(o);
	return ours;
}

/* client-go's tryAcquireOrRenew: true when this process holds the Lease
 * after it. *other: a read showed it held by someone else (the watch may
 * lag, a read does not). */
static bool try_acquire_or_renew(struct kube_leader *le, bool *other, struct dt_err *err)
{
	int64_t now = clock_ms(le);
	json_object *o = NULL;
	struct record got, cur, r;
	int rc;

	if (renew_fast(le, now))
		return true;
	rc = lease_call(le, "get", "GET", NULL, now, &o, err);
	if (rc == KUBE_ENOTFOUND)
		return create_lease(le, err) == 0;
	if (rc) {
		json_object_put(o);
		return false;
	}
	record_of(o, &got);
	now = clock_ms(le);
	pthread_mutex_lock(&le->lock);
	see_locked(le, &got, json_object_get(o), now);
	*other = got.holder[0] && strcmp(got.holder, le->identity);
	if (held_by_other_locked(le, now)) {
		pthread_mutex_unlock(&le->lock);
		json_object_put(o);
		return false;
	}
	cur = le->seen;
	pthread_mutex_unlock(&le->lock);
	next_record(le, &cur, &r);
	rc = hold(le, o, &r, err);
	json_object_put(o);
	return rc == 0;
}

/* Followers skip the read while the watch shows the Lease held and fresh:
 * the round at its expiry reads it anyway before taking it. */
static bool watch_says_held(struct kube_leader *le, int64_t now)
{
	bool held;

	if (!le->inf || !kube_informer_synced(le->inf) || atomic_load(&le->leading))
		return false;
	pthread_mutex_lock(&le->lock);
	held = held_by_other_locked(le, now);
	pthread_mutex_unlock(&le->lock);
	return held;
}

struct notices {
	bool started, stopped, holder;
	char who[HOLDER_MAX];
};

/* With lock held: end a leadership whose fence has closed, or that a read
 * showed someone else holding; what to tell. */
static void settle_locked(struct kube_leader *le, int64_t now, bool was_leading, bool other,
			  struct notices *n)
{
	bool leading = atomic_load(&le->leading);

	if (leading && (other || now >= atomic_load(&le->fence_until_ms))) {
		atomic_store(&le->leading, false);
		le->lost++;
		leading = false;
	}
	n->started = leading && !was_leading;
	n->stopped = !leading && was_leading;
	if (le->have_seen && (!le->announced_any || strcmp(le->announced, le->seen.holder))) {
		copy_str(le->announced, sizeof(le->announced), le->seen.holder);
		le->announced_any = true;
		n->holder = strcmp(le->seen.holder, le->identity) != 0;
		copy_str(n->who, sizeof(n->who), le->seen.holder);
	}
}

static void notify(struct kube_leader *le, const struct notices *n)
{
	if (n->stopped) {
		obs_log(OBS_WARN, "leader_lost", "lease", le->name, "identity", le->identity, NULL);
		if (le->o.on_stopped)
			le->o.on_stopped(le->o.arg);
	}
	if (n->holder) {
		obs_log(OBS_INFO, "leader_seen", "lease", le->name, "holder",
			n->who[0] ? n->who : "(released)", NULL);
		if (le->o.on_new_holder)
			le->o.on_new_holder(le->o.arg, n->who);
	}
	if (n->started) {
		obs_log(OBS_INFO, "leader_acquired", "lease", le->name, "identity", le->identity,
			NULL);
		if (le->o.on_started)
			le->o.on_started(le->o.arg);
	}
}

int64_t kube_leader_step(struct kube_leader *le)
{
	struct dt_err err = { 0 };
	struct notices n = { 0 };
	bool was_leading = atomic_load(&le->leading), ok = false, skipped, other = false;
	int64_t now = clock_ms(le), next = le->o.retry_period_ms;

	skipped = watch_says_held(le, now);
	if (!skipped && !atomic_load(&le->closing))
		ok = try_acquire_or_renew(le, &other, &err);
	now = clock_ms(le);
	pthread_mutex_lock(&le->lock);
	if (!ok && !skipped) {
		le->failures += err.code != 0;
		if (err.code && was_leading)
			obs_log(OBS_WARN, "leader_renew_failed", "lease", le->name, "error", err.msg,
				NULL);
	}
	settle_locked(le, now, was_leading, other && !ok, &n);
	if (atomic_load(&le->leading)) {
		if (!ok && atomic_load(&le->fence_until_ms) - now < next)
			next = atomic_load(&le->fence_until_ms) - now;
	} else {
		/* A fifth less at random: candidates spread out, and never
		 * later than a retry period. */
		next -= (int64_t)(unit_random() * 0.2 * (double)next);
		/* wake when the Lease seen expires; once it has, a failed try
		 * (the API server away) waits a retry period like any other */
		if (le->have_seen && le->seen.holder[0] && strcmp(le->seen.holder, le->identity)) {
			int64_t expires = le->seen_ms + le->seen.duration_s * 1000 - now;

			if (expires > 0 && (skipped || expires < next))
				next = expires;
		}
	}
	pthread_mutex_unlock(&le->lock);
	notify(le, &n);
	return next > 0 ? next : 0;
}

/* ---- the watch ---- */

static void on_lease_event(void *arg, enum kube_event_type type, const struct kube_object *obj)
{
	struct kube_leader *le = arg;
	json_object *o;
	struct record r;

	if (type == KUBE_SYNCED || !obj)
		return;
	pthread_mutex_lock(&le->lock);
	if (type == KUBE_DELETED) {
		le->have_seen = false;
		json_object_put(le->obj);
		le->obj = NULL;
		le->poked = true;
	} else if ((o = json_tokener_parse(obj->json))) {
		record_of(o, &r);
		/* A change someone else made is worth a round now (a release, a
		 * new holder); our own renewals keep their cadence. */
		if (see_locked(le, &r, o, clock_ms(le)) && strcmp(r.holder, le->identity))
			le->poked = true;
	}
	if (le->poked)
		pthread_cond_signal(&le->wake);
	pthread_mutex_unlock(&le->lock);
}

static int start_watch(struct kube_leader *le, struct dt_err *err)
{
	char selector[300];
	struct kube_informer_opts io = {
		.ns = le->ns, .field_selector = selector, .on_event = on_lease_event, .arg = le,
	};
	int rc;

	snprintf(selector, sizeof(selector), "metadata.name=%s", le->name);
	rc = kube_informer_new(le->c, &kube_res_leases, &io, &le->inf, err);
	if (!rc)
		rc = kube_informer_start(le->inf, err);
	return rc;
}

/* ---- the thread ---- */

static void *elector_main(void *arg)
{
	struct kube_leader *le = arg;

	for (;;) {
		int64_t wait_ms;
		struct timespec ts;

		pthread_mutex_lock(&le->lock);
		if (le->stop) {
			pthread_mutex_unlock(&le->lock);
			return NULL;
		}
		le->poked = false;
		pthread_mutex_unlock(&le->lock);
		wait_ms = kube_leader_step(le);
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec += wait_ms / 1000;
		ts.tv_nsec += (wait_ms % 1000) * 1000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_mutex_lock(&le->lock);
		while (!le->stop && !le->poked &&
		       pthread_cond_timedwait(&le->wake, &le->lock, &ts) != ETIMEDOUT)
			;
		pthread_mutex_unlock(&le->lock);
	}
}

/* ---- the fence ---- */

static bool fence_open(struct kube_leader *le, int64_t now)
{
	return atomic_load(&le->leading) && !atomic_load(&le->closing) &&
	       now < atomic_load(&le->fence_until_ms);
}

int kube_leader_write_begin(struct kube_leader *le, int64_t *budget_ms)
{
	int64_t now, budget;

	/* Counted before the check: a release that saw no write in flight
	 * has closed the fence before any write can pass it. */
	atomic_fetch_add(&le->inflight, 1);
	now = clock_ms(le);
	budget = atomic_load(&le->expiry_ms) - le->o.retry_period_ms - now;
	if (!fence_open(le, now) || budget <= 0) {
		atomic_fetch_sub(&le->inflight, 1);
		return KUBE_ENOTLEADER;
	}
	if (budget_ms)
		*budget_ms = budget;
	return 0;
}

void kube_leader_write_end(struct kube_leader *le)
{
	atomic_fetch_sub(&le->inflight, 1);
}

static int fence_enter(void *arg, int64_t *budget_ms)
{
	return kube_leader_write_begin(arg, budget_ms);
}

static bool fence_holds(void *arg)
{
	struct kube_leader *le = arg;

	return fence_open(le, clock_ms(le));
}

static void fence_leave(void *arg)
{
	kube_leader_write_end(arg);
}

void kube_leader_fence(struct kube_leader *le, struct kube_client *c)
{
	kube_client_set_fence(c, le ? &le->fence : NULL);
}

bool kube_leader_leading(struct kube_leader *le)
{
	return fence_open(le, clock_ms(le));
}

/* ---- life cycle ---- */

static char *dup_or_null(const char *s, bool *oom)
{
	char *d = strdup(s);

	*oom |= !d;
	return d;
}

int kube_leader_new(struct kube_client *c, const struct kube_leader_opts *o,
		    struct kube_leader **out, struct dt_err *err)
{
	struct kube_leader *le;
	pthread_condattr_t ca;
	bool oom = false;
	int rc;

	*out = NULL;
	if ((rc = kube_leader_validate(o, err)))
		return rc;
	le = calloc(1, sizeof(*le));
	if (!le)
		return dt_err_set(err, -ENOMEM, "out of memory");
	le->c = c;
	le->o = *o;
	fill_defaults(&le->o);
	le->ns = dup_or_null(o->ns && o->ns[0] ? o->ns : kube_client_namespace(c), &oom);
	le->name = dup_or_null(o->name, &oom);
	le->identity = dup_or_null(o->identity, &oom);
	le->o.ns = le->ns;
	le->o.name = le->name;
	le->o.identity = le->identity;
	le->fence = (struct kube_fence){ fence_enter, fence_holds, fence_leave, le };
	pthread_mutex_init(&le->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&le->wake, &ca);
	pthread_condattr_destroy(&ca);
	if (oom) {
		kube_leader_free(le);
		return dt_err_set(err, -ENOMEM, "out of memory");
	}
	*out = le;
	return 0;
}

int kube_leader_start(struct kube_leader *le, struct dt_err *err)
{
	int rc;

	if (le->running)
		return 0;
	if (kube_client_fenced(le->c, le))
		return dt_err_set(err, -EINVAL, "leader election: its own client is fenced by "
				  "it, so it could never write the Lease: give it a client of "
				  "its own");
	if (!le->o.no_watch && (rc = start_watch(le, err)))
		return dt_err_prefix(err, "leader election: watching Lease %s/%s: ", le->ns,
				     le->name);
	le->stop = false;
	if (pthread_create(&le->thread, NULL, elector_main, le))
		return dt_err_set(err, -EAGAIN, "leader election: cannot start a thread");
	le->running = true;
	return 0;
}

static void stop_thread(struct kube_leader *le)
{
	if (!le->running)
		return;
	pthread_mutex_lock(&le->lock);
	le->stop = true;
	pthread_cond_signal(&le->wake);
	pthread_mutex_unlock(&le->lock);
	pthread_join(le->thread, NULL);
	le->running = false;
}

void kube_leader_stop(struct kube_leader *le)
{
	if (!le)
		return;
	stop_thread(le);
	if (le->inf) {
		kube_informer_stop(le->inf);
		kube_informer_free(le->inf);
		le->inf = NULL;
	}
}

/* Wait until no fenced write is in flight, or drain_ms passed. */
static void drain(struct kube_leader *le, long drain_ms)
{
	struct timespec ts = { 0, 5 * 1000000 };

	for (long waited = 0; atomic_load(&le->inflight) > 0 && waited < drain_ms; waited += 5)
		nanosleep(&ts, NULL);
}

int kube_leader_release(struct kube_leader *le, long drain_ms, struct dt_err *err)
{
	struct record r = { 0 };
	struct notices n = { 0 };
	json_object *o = NULL;
	char now[TIMESTAMP_MAX];
	bool was_leading, ours;
	int rc = 0;

	stop_thread(le);            /* the watch may run on: cutting it takes a while */
	atomic_store(&le->closing, true);
	drain(le, drain_ms);
	pthread_mutex_lock(&le->lock);
	was_leading = atomic_load(&le->leading);
	ours = le->have_seen && le->obj && !strcmp(le->seen.holder, le->identity);
	if (ours) {
		r = le->seen;
		o = json_object_get(le->obj);
	}
	pthread_mutex_unlock(&le->lock);
	if (ours) {
		json_object *answer;
		int64_t send;

		wall_time(le, now);
		r.holder[0] = '\0';
		r.duration_s = 1;
		copy_str(r.acquire, sizeof(r.acquire), now);
		copy_str(r.renew, sizeof(r.renew), now);
		rc = put_record(le, o, &r, &answer, &send, err);
		json_object_put(o);
		if (rc) {
			dt_err_prefix(err, "releasing Lease %s/%s: ", le->ns, le->name);
		} else {
			obs_log(OBS_INFO, "leader_released", "lease", le->name, "identity",
				le->identity, NULL);
			record_of(answer, &r);
			pthread_mutex_lock(&le->lock);
			see_locked(le, &r, answer, send);
			pthread_mutex_unlock(&le->lock);
		}
	}
	pthread_mutex_lock(&le->lock);
	atomic_store(&le->leading, false);
	if (was_leading)
		le->lost++;
	n.stopped = was_leading;
	pthread_mutex_unlock(&le->lock);
	notify(le, &n);
	return rc;
}

void kube_leader_free(struct kube_leader *le)
{
	if (!le)
		return;
	kube_leader_stop(le);
	json_object_put(le->obj);
	pthread_cond_destroy(&le->wake);
	pthread_mutex_destroy(&le->lock);
	free(le->ns);
	free(le->name);
	free(le->identity);
	free(le);
}

void kube_leader_status(struct kube_leader *le, struct kube_leader_status *out)
{
	int64_t now = clock_ms(le);

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&le->lock);
	out->leading = fence_open(le, now);
	if (le->have_seen) {
		copy_str(out->holder, sizeof(out->holder), le->seen.holder);
		out->transitions = le->seen.transitions;
	}
	if (out->leading)
		out->fence_left_ms = atomic_load(&le->fence_until_ms) - now;
	out->acquired = le->acquired;
	out->lost = le->lost;
	out->renewals = le->renewals;
	out->failures = le->failures;
	pthread_mutex_unlock(&le->lock);
}
