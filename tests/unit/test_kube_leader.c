/* test_kube_leader.c - leader election without an API server: electors
 * driven round by round (kube_leader_step) on a fake clock, against a
 * scripted server that keeps one Lease with resourceVersions as the API
 * server does (a PUT with a stale one is 409 Conflict, a second create 409
 * AlreadyExists). The options checked as client-go checks them; creating,
 * renewing (without a read, acquireTime and leaseTransitions kept), taking
 * over only after the lease duration on the local clock whatever the
 * record's times say, the fence closing before anyone else may take over,
 * stepping down when a renewal finds another holder, the release that
 * hands the Lease over at once, and a fenced client that sends nothing
 * while not leading. */
#include <fcntl.h>
#include <stdatomic.h>

#include "dt_test.h"
#include "kube_fake.h"
#include "kube_internal.h"
#include "kube_leader.h"
#include "obs_log.h"
#include "timestamp.h"

/* ---- a server that keeps one Lease ---- */

struct lease_server {
	pthread_mutex_t lock;
	json_object *lease;             /* NULL: none */
	long rv;
	bool fail;                      /* answer 503 to everything */
	int gets, puts, posts, others;
};

static struct lease_server ls = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void respond_json(int fd, int status, json_object *o)
{
	fake_respond(fd, status, NULL, json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
}

static void respond_status(int fd, int code, const char *reason, const char *msg)
{
	char body[512];

	snprintf(body, sizeof(body), "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":"
		 "\"Failure\",\"message\":\"%s\",\"reason\":\"%s\",\"code\":%d}", msg, reason, code);
	fake_respond(fd, code, NULL, body);
}

/* Store body as the Lease, with the next resourceVersion. */
static void store(const struct fake_req *rq, int fd, int status)
{
	json_object *o = json_tokener_parse(rq->body), *meta = kube_json_get(o, "metadata", NULL);
	char rv[32];

	snprintf(rv, sizeof(rv), "%ld", ++ls.rv);
	json_object_object_add(meta, "resourceVersion", json_object_new_string(rv));
	json_object_put(ls.lease);
	ls.lease = o;
	respond_json(fd, status, o);
}

static void lease_handler(struct fake_server *fs, const struct fake_req *rq, int fd)
{
	const char *want;

	(void)fs;
	pthread_mutex_lock(&ls.lock);
	if (ls.fail) {
		respond_status(fd, 503, "ServiceUnavailable", "etcd is away");
	} else if (!strstr(rq->target, "/apis/coordination.k8s.io/v1/namespaces/default/leases")) {
		ls.others++;
		fake_respond(fd, 201, NULL, "{\"metadata\":{\"name\":\"x\"}}");
	} else if (!strcmp(rq->method, "GET")) {
		ls.gets++;
		if (ls.lease)
			respond_json(fd, 200, ls.lease);
		else
			respond_status(fd, 404, "NotFound", "leases.coordination.k8s.io \\\"l\\\" "
				       "not found");
	} else if (!strcmp(rq->method, "POST")) {
		ls.posts++;
		if (ls.lease)
			respond_status(fd, 409, "AlreadyExists", "already exists");
		else
			store(rq, fd, 201);
	} else if (!strcmp(rq->method, "PUT")) {
		json_object *o = json_tokener_parse(rq->body);

		ls.puts++;
		want = kube_json_str(ls.lease, "metadata", "resourceVersion", NULL);
		if (!ls.lease || !want ||
		    strcmp(want, kube_json_str(o, "metadata", "resourceVersion", NULL) ?: ""))
			respond_status(fd, 409, "Conflict", "the object has been modified; please "
				       "apply your changes to the latest version and try again");
		else
			store(rq, fd, 200);
		json_object_put(o);
	}
	pthread_mutex_unlock(&ls.lock);
}

static struct fake_server fs;

static int suite_init(void)
{
	/* the electors' log lines are not what this suite checks */
	obs_log_set_fd(open("/dev/null", O_WRONLY));
	return fake_start(&fs, lease_handler, NULL);
}

static int suite_cleanup(void)
{
	fake_stop(&fs);
	json_object_put(ls.lease);
	return 0;
}

static void reset_server(void)
{
	pthread_mutex_lock(&ls.lock);
	json_object_put(ls.lease);
	ls.lease = NULL;
	ls.fail = false;
	ls.gets = ls.puts = ls.posts = ls.others = 0;
	pthread_mutex_unlock(&ls.lock);
}

/* The Lease's spec field, as the server holds it. */
static const char *spec_str(const char *key)
{
	return kube_json_str(ls.lease, "spec", key, NULL);
}

static int64_t spec_int(const char *key)
{
	json_object *v = kube_json_get(ls.lease, "spec", key, NULL);

	return v ? json_object_get_int64(v) : -1;
}

/* ---- electors on a fake clock ---- */

static int64_t fake_ms;                 /* the local clock of every elector */

struct elector {
	int64_t wall_offset_ns;         /* its wall clock, off by this much */
	int64_t clock_offset_ms;        /* its local clock, ahead by this much */
	int started, stopped, holders;
	char last_holder[256];
	struct kube_client *c;
	struct kube_leader *le;
};

static int64_t clock_now(void *arg)
{
	const struct elector *e = arg;

	return fake_ms + e->clock_offset_ms;
}

static int64_t clock_wall(void *arg)
{
	const struct elector *e = arg;

	return (int64_t)1798000000 * 1000000000 + fake_ms * 1000000 + e->wall_offset_ns;
}

static void on_started(void *arg)
{
	((struct elector *)arg)->started++;
}

static void on_stopped(void *arg)
{
	((struct elector *)arg)->stopped++;
}

static void on_holder(void *arg, const char *holder)
{
	struct elector *e = arg;

	e->holders++;
	snprintf(e->last_holder, sizeof(e->last_holder), "%s", holder);
}

static struct kube_client *client(void)
{
	struct kube_config cfg = { 0 };
	struct kube_client_opts opts = { .backoff_base_s = 0.01, .backoff_max_s = 0.02 };
	struct kube_client *c = NULL;
	struct dt_err err = { 0 };

	cfg.server = fs.url;
	cfg.ns = (char *)"default";
	CU_ASSERT_EQUAL(kube_client_new(&cfg, &opts, &c, &err), 0);
	return c;
}

static void elector_new(struct elector *e, const char *identity)
{
	struct kube_leader_opts o = {
		.name = "dratopo-coordinator", .identity = identity, .no_watch = true,
		.on_started = on_started, .on_stopped = on_stopped, .on_new_holder = on_holder,
		.arg = e, .now_ms = clock_now, .wall_ns = clock_wall, .clock_arg = e,
	};
	struct dt_err err = { 0 };

	e->c = client();
	CU_ASSERT_EQUAL_FATAL(kube_leader_new(e->c, &o, &e->le, &err), 0);
}

static void elector_free(struct elector *e)
{
	kube_leader_free(e->le);
	kube_client_free(e->c);
}

static bool leading(struct elector *e)
{
	return kube_leader_leading(e->le);
}

/* ---- tests ---- */

static void expect_invalid(struct kube_leader_opts o, const char *msg)
{
	struct dt_err err = { 0 };

	CU_ASSERT_EQUAL(kube_leader_validate(&o, &err), -EINVAL);
	DT_ASSERT_STR(err.msg, msg);
}

static void test_validate(void)
{
	struct kube_leader_opts o = { .name = "l", .identity = "me" };
	struct dt_err err = { 0 };

	CU_ASSERT_EQUAL(kube_leader_validate(&o, &err), 0);     /* 15 s, 10 s, 2 s */
	expect_invalid((struct kube_leader_opts){ .identity = "me" },
		       "leader election: the Lease needs a name");
	expect_invalid((struct kube_leader_opts){ .name = "l", .identity = "" },
		       "leader election: the holder identity is empty");
	expect_invalid((struct kube_leader_opts){ .name = "l", .identity = "me",
						  .lease_duration_ms = 10000 },
		       "leader election: the lease duration (10000ms) must be greater than the "
		       "renew deadline (10000ms)");
	expect_invalid((struct kube_leader_opts){ .name = "l", .identity = "me",
						  .renew_deadline_ms = 2400 },
		       "leader election: the renew deadline (2400ms) must be greater than 1.2 x "
		       "the retry period (2000ms)");
	expect_invalid((struct kube_leader_opts){ .name = "l", .identity = "me",
						  .retry_period_ms = -1 },
		       "leader election: the lease duration must be at least 1s, the renew "
		       "deadline and the retry period greater than zero");
	o.renew_deadline_ms = 2401;     /* just above 1.2 x 2 s */
	CU_ASSERT_EQUAL(kube_leader_validate(&o, &err), 0);
}

/* Nobody holds it: the first round creates it, later rounds renew it
 * without reading it first, keeping acquireTime and leaseTransitions. */
static void test_create_then_renew(void)
{
	struct elector a = { 0 };
	char acquire[64];
	int64_t next;

	reset_server();
	fake_ms = 1000;
	elector_new(&a, "a");
	CU_ASSERT_FALSE(leading(&a));
	next = kube_leader_step(a.le);
	CU_ASSERT_TRUE(leading(&a));
	CU_ASSERT_EQUAL(a.started, 1);
	CU_ASSERT_EQUAL(next, 2000);
	CU_ASSERT_EQUAL(ls.gets, 1);
	CU_ASSERT_EQUAL(ls.posts, 1);
	DT_ASSERT_STR(spec_str("holderIdentity"), "a");
	CU_ASSERT_EQUAL(spec_int("leaseDurationSeconds"), 15);
	CU_ASSERT_EQUAL(spec_int("leaseTransitions"), 0);
	DT_ASSERT_STR(spec_str("acquireTime"), "2026-12-23T04:26:41.000000Z");
	DT_ASSERT_STR(spec_str("renewTime"), spec_str("acquireTime"));
	snprintf(acquire, sizeof(acquire), "%s", spec_str("acquireTime"));
	for (int i = 1; i <= 5; i++) {
		fake_ms += 2000;
		CU_ASSERT_EQUAL(kube_leader_step(a.le), 2000);
	}
	CU_ASSERT_TRUE(leading(&a));
	CU_ASSERT_EQUAL(ls.gets, 1);    /* renewals write over what they hold */
	CU_ASSERT_EQUAL(ls.puts, 5);
	DT_ASSERT_STR(spec_str("acquireTime"), acquire);
	DT_ASSERT_STR(spec_str("renewTime"), "2026-12-23T04:26:51.000000Z");
	CU_ASSERT_EQUAL(spec_int("leaseTransitions"), 0);
	CU_ASSERT_EQUAL(a.started, 1);
	CU_ASSERT_EQUAL(a.stopped, 0);
	elector_free(&a);
}

/* A takeover waits the lease duration on the follower's own clock from
 * when it saw the record change; the leader's fence has closed by then. At
 * no instant do both lead. */
static void test_takeover_after_lease_duration(void)
{
	struct elector a = { 0 }, b = { 0 };
	int64_t t0, next;

	reset_server();
	fake_ms = 50000;
	elector_new(&a, "a");
	elector_new(&b, "b");
	kube_leader_step(a.le);                 /* a leads, renews once more at +2 s */
	fake_ms += 2000;
	kube_leader_step(a.le);
	t0 = fake_ms;                           /* a's last renewal: a then stops */
	next = kube_leader_step(b.le);          /* b sees it held */
	CU_ASSERT_FALSE(leading(&b));
	CU_ASSERT_TRUE(next <= 2000 && next >= 1600);
	DT_ASSERT_STR(b.last_holder, "a");
	for (fake_ms = t0; fake_ms < t0 + 15000; fake_ms += 500) {
		CU_ASSERT_FALSE(leading(&a) && leading(&b));
		kube_leader_step(b.le);
		CU_ASSERT_FALSE(leading(&b));
		/* a's fence: its last renewal's send time + the renew deadline */
		CU_ASSERT_EQUAL(leading(&a), fake_ms < t0 + 10000);
	}
	fake_ms = t0 + 15000;
	kube_leader_step(b.le);
	CU_ASSERT_TRUE(leading(&b));
	CU_ASSERT_EQUAL(b.started, 1);
	DT_ASSERT_STR(spec_str("holderIdentity"), "b");
	CU_ASSERT_EQUAL(spec_int("leaseTransitions"), 1);
	DT_ASSERT_STR(spec_str("acquireTime"), spec_str("renewTime"));
	/* a comes back: it reads the Lease, sees b, and steps down without
	 * writing */
	ls.puts = 0;
	kube_leader_step(a.le);
	CU_ASSERT_FALSE(leading(&a));
	CU_ASSERT_EQUAL(a.stopped, 1);
	CU_ASSERT_EQUAL(ls.puts, 0);
	DT_ASSERT_STR(a.last_holder, "b");
	elector_free(&a);
	elector_free(&b);
}

/* renewTime is never compared with the local clock: a record written by a
 * clock an hour behind (or ahead) is waited for the same 15 s. */
static void test_clock_skew_ignored(void)
{
	static const int64_t offsets[] = { -3600LL * 1000000000, 3600LL * 1000000000 };

	for (size_t i = 0; i < 2; i++) {
		struct elector a = { .wall_offset_ns = offsets[i] }, b = { 0 };

		reset_server();
		fake_ms = 100000;
		elector_new(&a, "a");
		elector_new(&b, "b");
		kube_leader_step(a.le);
		kube_leader_step(b.le);
		CU_ASSERT_FALSE(leading(&b));
		fake_ms += 14999;
		kube_leader_step(b.le);
		CU_ASSERT_FALSE(leading(&b));
		fake_ms += 1;
		kube_leader_step(b.le);
		CU_ASSERT_TRUE(leading(&b));
		elector_free(&a);
		elector_free(&b);
	}
}

/* Every renewal fails (the API server answers 503): the leader stops
 * writing at its last renewal's send time + the renew deadline, whether or
 * not a round runs then, and says so once. */
static void test_renew_deadline(void)
{
	struct elector a = { 0 };
	struct kube_client *w = client();
	struct kube_ref cm = { &kube_res_configmaps, NULL, NULL, NULL };
	json_object *body = json_tokener_parse("{\"metadata\":{\"name\":\"x\"}}");
	struct dt_err err = { 0 };
	int64_t t0, next;

	reset_server();
	fake_ms = 7000;
	elector_new(&a, "a");
	kube_leader_fence(a.le, w);
	kube_leader_step(a.le);
	t0 = fake_ms;
	CU_ASSERT_EQUAL(kube_create(w, &cm, body, NULL, &err), 0);
	ls.fail = true;
	for (int i = 1; i < 5; i++) {
		fake_ms = t0 + 2000 * i;
		next = kube_leader_step(a.le);
		CU_ASSERT_TRUE(leading(&a));
		CU_ASSERT_EQUAL(next, 2000);
	}
	fake_ms = t0 + 9999;
	CU_ASSERT_TRUE(leading(&a));
	fake_ms = t0 + 10000;                   /* no round ran: the fence is a time */
	CU_ASSERT_FALSE(leading(&a));
	ls.fail = false;
	ls.others = 0;
	CU_ASSERT_EQUAL(kube_create(w, &cm, body, NULL, &err), KUBE_ENOTLEADER);
	CU_ASSERT_EQUAL(ls.others, 0);          /* refused before sending */
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "not written: this process does not lead"));
	CU_ASSERT_EQUAL(a.stopped, 0);
	ls.fail = true;
	kube_leader_step(a.le);
	CU_ASSERT_EQUAL(a.stopped, 1);
	kube_leader_step(a.le);
	CU_ASSERT_EQUAL(a.stopped, 1);
	/* the API server is back and nobody took the Lease: a renews it,
	 * keeping its acquire time */
	ls.fail = false;
	fake_ms += 1000;
	kube_leader_step(a.le);
	CU_ASSERT_TRUE(leading(&a));
	CU_ASSERT_EQUAL(a.started, 2);
	CU_ASSERT_EQUAL(spec_int("leaseTransitions"), 0);
	CU_ASSERT_EQUAL(kube_create(w, &cm, body, NULL, &err), 0);
	CU_ASSERT_EQUAL(ls.others, 1);
	kube_client_free(w);
	json_object_put(body);
	elector_free(&a);
}

/* A renewal over a stale resourceVersion is refused (409); the read that
 * follows shows the Lease held by another, and the elector steps down at
 * once instead of at its deadline. (b's clock jumps 16 s ahead here, which
 * is how b can take a Lease that a still counts as fresh: the scheme
 * assumes clocks that run at about the same rate, not clocks that agree.) */
static void test_conflict_steps_down(void)
{
	struct elector a = { 0 }, b = { 0 };

	reset_server();
	fake_ms = 30000;
	elector_new(&a, "a");
	elector_new(&b, "b");
	kube_leader_step(a.le);
	kube_leader_step(b.le);
	b.clock_offset_ms = 16000;
	kube_leader_step(b.le);
	CU_ASSERT_TRUE(leading(&b));
	CU_ASSERT_EQUAL(spec_int("leaseTransitions"), 1);
	fake_ms += 2000;
	ls.puts = ls.gets = 0;
	kube_leader_step(a.le);
	CU_ASSERT_FALSE(leading(&a));
	CU_ASSERT_EQUAL(a.stopped, 1);
	CU_ASSERT_EQUAL(ls.puts, 1);            /* the renewal, refused */
	CU_ASSERT_EQUAL(ls.gets, 1);            /* the read that showed b */
	DT_ASSERT_STR(spec_str("holderIdentity"), "b");
	DT_ASSERT_STR(a.last_holder, "b");
	elector_free(&a);
	elector_free(&b);
}

/* Two candidates read the same expired Lease and both write: the
 * resourceVersion lets exactly one through. */
static void test_race_one_winner(void)
{
	struct elector a = { 0 }, b = { 0 }, c = { 0 };

	reset_server();
	fake_ms = 0;
	elector_new(&a, "a");
	elector_new(&b, "b");
	elector_new(&c, "c");
	kube_leader_step(c.le);                 /* c leads, then dies */
	kube_leader_step(a.le);
	kube_leader_step(b.le);
	fake_ms = 15000;
	kube_leader_step(a.le);
	kube_leader_step(b.le);
	CU_ASSERT_TRUE(leading(&a));
	CU_ASSERT_FALSE(leading(&b));
	CU_ASSERT_EQUAL(spec_int("leaseTransitions"), 1);
	/* the same race through the server: b writes over the version it read
	 * before a's write */
	pthread_mutex_lock(&ls.lock);
	{
		json_object *stale;
		const char *v;
		char rv[32];
		struct kube_ref ref = { &kube_res_leases, NULL, "dratopo-coordinator", NULL };
		struct dt_err err = { 0 };

		json_object_deep_copy(ls.lease, &stale, NULL);
		v = kube_json_str(stale, "metadata", "resourceVersion", NULL);
		snprintf(rv, sizeof(rv), "%ld", strtol(v, NULL, 10) - 1);
		json_object_object_add(kube_json_get(stale, "metadata", NULL), "resourceVersion",
				       json_object_new_string(rv));
		pthread_mutex_unlock(&ls.lock);
		CU_ASSERT_EQUAL(kube_update(b.c, &ref, stale, NULL, &err), KUBE_ECONFLICT);
		json_object_put(stale);
	}
	elector_free(&a);
	elector_free(&b);
	elector_free(&c);
}

/* SIGTERM: the fence shuts, then the Lease is written unheld with a lease
 * duration of 1 s; a follower takes it at its next round, no wait. */
static void test_release_hands_over(void)
{
	struct elector a = { 0 }, b = { 0 };
	struct kube_client *w = client();
	struct kube_ref cm = { &kube_res_configmaps, NULL, NULL, NULL };
	json_object *body = json_tokener_parse("{\"metadata\":{\"name\":\"x\"}}");
	struct dt_err err = { 0 };

	reset_server();
	fake_ms = 1000;
	elector_new(&a, "a");
	elector_new(&b, "b");
	kube_leader_fence(a.le, w);
	kube_leader_step(a.le);
	kube_leader_step(b.le);
	CU_ASSERT_EQUAL(kube_leader_release(a.le, 100, &err), 0);
	CU_ASSERT_FALSE(leading(&a));
	CU_ASSERT_EQUAL(a.stopped, 1);
	DT_ASSERT_STR(spec_str("holderIdentity"), "");
	CU_ASSERT_EQUAL(spec_int("leaseDurationSeconds"), 1);
	CU_ASSERT_EQUAL(spec_int("leaseTransitions"), 0);
	CU_ASSERT_EQUAL(kube_create(w, &cm, body, NULL, &err), KUBE_ENOTLEADER);
	fake_ms += 1;
	kube_leader_step(b.le);
	CU_ASSERT_TRUE(leading(&b));
	DT_ASSERT_STR(spec_str("holderIdentity"), "b");
	CU_ASSERT_EQUAL(spec_int("leaseTransitions"), 1);
	CU_ASSERT_EQUAL(spec_int("leaseDurationSeconds"), 15);
	/* releasing what it no longer holds writes nothing */
	ls.puts = 0;
	CU_ASSERT_EQUAL(kube_leader_release(a.le, 100, &err), 0);
	CU_ASSERT_EQUAL(ls.puts, 0);
	DT_ASSERT_STR(spec_str("holderIdentity"), "b");
	kube_client_free(w);
	json_object_put(body);
	elector_free(&a);
	elector_free(&b);
}

/* A write's budget ends a retry period before the Lease could expire; a
 * release waits for the writes in flight. */
static void test_write_budget(void)
{
	struct elector a = { 0 };
	int64_t budget = 0;

	reset_server();
	fake_ms = 0;
	elector_new(&a, "a");
	CU_ASSERT_EQUAL(kube_leader_write_begin(a.le, &budget), KUBE_ENOTLEADER);
	kube_leader_step(a.le);
	CU_ASSERT_EQUAL(kube_leader_write_begin(a.le, &budget), 0);
	CU_ASSERT_EQUAL(budget, 13000);
	kube_leader_write_end(a.le);
	fake_ms = 9000;
	CU_ASSERT_EQUAL(kube_leader_write_begin(a.le, &budget), 0);
	CU_ASSERT_EQUAL(budget, 4000);
	kube_leader_write_end(a.le);
	elector_free(&a);
}

/* A follower wakes when the Lease it saw expires, and no sooner; once it
 * has expired, a try that fails (the API server away) waits a retry
 * period like any other instead of spinning. */
static void test_follower_wakes(void)
{
	struct elector a = { 0 }, b = { 0 };
	int64_t next;

	reset_server();
	fake_ms = 0;
	elector_new(&a, "a");
	elector_new(&b, "b");
	kube_leader_step(a.le);
	fake_ms = 14500;
	kube_leader_step(b.le);                 /* first sight: 15 s to wait */
	fake_ms = 28000;
	next = kube_leader_step(b.le);
	CU_ASSERT_EQUAL(next, 1500);            /* 14500 + 15000 - 28000 */
	fake_ms = 29499;
	next = kube_leader_step(b.le);
	CU_ASSERT_EQUAL(next, 1);               /* expires at 14500 + 15000 */
	ls.fail = true;
	fake_ms = 29500;
	next = kube_leader_step(b.le);
	CU_ASSERT_FALSE(leading(&b));
	CU_ASSERT(next >= 1600 && next <= 2000);
	ls.fail = false;
	fake_ms += next;
	kube_leader_step(b.le);
	CU_ASSERT_TRUE(leading(&b));
	elector_free(&a);
	elector_free(&b);
}

/* The elector refuses a client it fences itself: it could never renew. */
static void test_own_client_refused(void)
{
	struct elector a = { 0 };
	struct dt_err err = { 0 };

	reset_server();
	elector_new(&a, "a");
	kube_leader_fence(a.le, a.c);
	CU_ASSERT_EQUAL(kube_leader_start(a.le, &err), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "give it a client of its own"));
	kube_leader_fence(NULL, a.c);
	elector_free(&a);
}

DT_SUITE_MAIN_WITH("kube_leader", suite_init, suite_cleanup,
		   DT_TEST(test_validate),
		   DT_TEST(test_create_then_renew),
		   DT_TEST(test_takeover_after_lease_duration),
		   DT_TEST(test_clock_skew_ignored),
		   DT_TEST(test_renew_deadline),
		   DT_TEST(test_conflict_steps_down),
		   DT_TEST(test_race_one_winner),
		   DT_TEST(test_release_hands_over),
		   DT_TEST(test_write_budget),
		   DT_TEST(test_follower_wakes),
		   DT_TEST(test_own_client_refused))
