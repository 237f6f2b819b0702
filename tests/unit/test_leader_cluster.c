/* test_leader_cluster.c - leader election against a real kube-apiserver
 * (tools/kube/cluster.sh up $DT_KUBE_DIR): three electors, each with its
 * own client, watch and thread, on shortened timings (lease 5 s, renew
 * deadline 4 s, retry 1 s). Sampled every 20 ms: never two leaders at
 * once; a leader that stops renewing (its thread gone, as in a crash) is
 * replaced within lease duration + retry period, and its fenced client
 * writes nothing once its fence closed; a release hands the Lease over at
 * the followers' next look, which the watch makes at once. */
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#include "dt_test.h"
#include "kube_internal.h"
#include "kube_leader.h"

#define N 3
#define LEASE_MS 5000
#define RENEW_MS 4000
#define RETRY_MS 1000

static char ns[64];
static struct kube_config cfg;
static struct kube_client *admin;

struct elector {
	char id[32];
	struct kube_client *lease_client, *writer;
	struct kube_leader *le;
	atomic_int started, stopped;
};

static struct elector el[N];

static int suite_init(void)
{
	const char *dir = getenv("DT_KUBE_DIR");
	char path[600], body[256];
	struct dt_err err = { 0 };
	struct kube_ref ref = { &kube_res_namespaces, NULL, NULL, NULL };
	json_object *o;
	int rc;

	if (!dir)
		return fprintf(stderr, "DT_KUBE_DIR is not set\n"), -1;
	snprintf(path, sizeof(path), "%s/kubeconfig", dir);
	if (kube_config_from_kubeconfig(path, NULL, &cfg, &err) ||
	    kube_client_new(&cfg, NULL, &admin, &err))
		return fprintf(stderr, "%s\n", err.msg), -1;
	snprintf(ns, sizeof(ns), "dt-leader-%d", (int)getpid());
	snprintf(body, sizeof(body), "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":"
		 "{\"name\":\"%s\"}}", ns);
	o = json_tokener_parse(body);
	rc = kube_create(admin, &ref, o, NULL, &err);
	json_object_put(o);
	if (rc)
		fprintf(stderr, "%s\n", err.msg);
	return rc ? -1 : 0;
}

static int suite_cleanup(void)
{
	struct kube_ref ref = { &kube_res_namespaces, NULL, ns, NULL };

	kube_delete(admin, &ref, NULL, NULL, NULL);
	kube_client_free(admin);
	kube_config_free(&cfg);
	return 0;
}

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void on_started(void *arg)
{
	atomic_fetch_add(&((struct elector *)arg)->started, 1);
}

static void on_stopped(void *arg)
{
	atomic_fetch_add(&((struct elector *)arg)->stopped, 1);
}

static void start(struct elector *e, int i)
{
	struct kube_leader_opts o = {
		.ns = ns, .name = "dratopo-test", .identity = e->id,
		.lease_duration_ms = LEASE_MS, .renew_deadline_ms = RENEW_MS,
		.retry_period_ms = RETRY_MS, .on_started = on_started, .on_stopped = on_stopped,
		.arg = e,
	};
	struct dt_err err = { 0 };

	snprintf(e->id, sizeof(e->id), "elector-%d_%d", i, (int)getpid());
	CU_ASSERT_EQUAL_FATAL(kube_client_new(&cfg, NULL, &e->lease_client, &err), 0);
	CU_ASSERT_EQUAL_FATAL(kube_client_new(&cfg, NULL, &e->writer, &err), 0);
	CU_ASSERT_EQUAL_FATAL(kube_leader_new(e->lease_client, &o, &e->le, &err), 0);
	kube_leader_fence(e->le, e->writer);
	CU_ASSERT_EQUAL_FATAL(kube_leader_start(e->le, &err), 0);
}

static void finish(struct elector *e)
{
	kube_client_free(e->writer);
	kube_leader_free(e->le);
	kube_client_free(e->lease_client);
	memset(e, 0, sizeof(*e));
}

/* Sample every elector for ms milliseconds; the index of the one leading
 * at the end (-1 none). Two at once fails the test. */
static int watch_leaders(int64_t ms, int alive_mask, int *changes)
{
	int64_t end = mono_ms() + ms;
	int last = -2;

	*changes = 0;
	for (;;) {
		int n = 0, who = -1;

		for (int i = 0; i < N; i++)
			if ((alive_mask >> i & 1) && kube_leader_leading(el[i].le)) {
				n++;
				who = i;
			}
		CU_ASSERT(n <= 1);
		if (n > 1)
			fprintf(stderr, "two leaders at once\n");
		if (who != last && last != -2)
			(*changes)++;
		last = who;
		if (mono_ms() >= end)
			return who;
		usleep(20000);
	}
}

/* Wait up to ms for one of alive_mask to lead; its index, and *took the
 * time it took. */
static int wait_leader(int64_t ms, int alive_mask, int64_t *took)
{
	int64_t t0 = mono_ms();

	while (mono_ms() - t0 < ms) {
		for (int i = 0; i < N; i++)
			if ((alive_mask >> i & 1) && kube_leader_leading(el[i].le)) {
				*took = mono_ms() - t0;
				return i;
			}
		usleep(10000);
	}
	*took = mono_ms() - t0;
	return -1;
}

static int write_cm(struct kube_client *c, const char *name, struct dt_err *err)
{
	struct kube_ref ref = { &kube_res_configmaps, ns, NULL, NULL };
	char body[256];
	json_object *o;
	int rc;

	snprintf(body, sizeof(body), "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":"
		 "{\"name\":\"%s\"}}", name);
	o = json_tokener_parse(body);
	rc = kube_create(c, &ref, o, NULL, err);
	json_object_put(o);
	return rc;
}

static json_object *get_lease(void)
{
	struct kube_ref ref = { &kube_res_leases, ns, "dratopo-test", NULL };
	json_object *o = NULL;

	CU_ASSERT_EQUAL(kube_get(admin, &ref, &o, NULL), 0);
	return o;
}

static int64_t lease_int(json_object *o, const char *key)
{
	json_object *v = kube_json_get(o, "spec", key, NULL);

	return v ? json_object_get_int64(v) : -1;
}

static void test_failover(void)
{
	struct dt_err err = { 0 };
	struct kube_leader_status before, after;
	int leader, next, changes, all = (1 << N) - 1;
	int64_t took, transitions;
	json_object *lease;

	for (int i = 0; i < N; i++)
		start(&el[i], i);
	leader = wait_leader(10000, all, &took);
	CU_ASSERT_FATAL(leader >= 0);
	/* steady: the same one leads, renewing once a retry period (the watch
	 * showing its own renewals does not hurry it), for several lease
	 * durations */
	kube_leader_status(el[leader].le, &before);
	CU_ASSERT_EQUAL(watch_leaders(3 * LEASE_MS, all, &changes), leader);
	CU_ASSERT_EQUAL(changes, 0);
	kube_leader_status(el[leader].le, &after);
	fprintf(stderr, "renewals in %d ms: %llu\n", 3 * LEASE_MS,
		(unsigned long long)(after.renewals - before.renewals));
	CU_ASSERT(after.renewals - before.renewals <= 3 * LEASE_MS / RETRY_MS + 1);
	CU_ASSERT(after.renewals - before.renewals >= 3 * LEASE_MS / RETRY_MS / 2);
	CU_ASSERT_EQUAL(write_cm(el[leader].writer, "by-leader", &err), 0);
	for (int i = 0; i < N; i++)
		if (i != leader) {
			CU_ASSERT_EQUAL(write_cm(el[i].writer, "by-follower", &err), KUBE_ENOTLEADER);
		}
	lease = get_lease();
	DT_ASSERT_STR(kube_json_str(lease, "spec", "holderIdentity", NULL), el[leader].id);
	CU_ASSERT_EQUAL(lease_int(lease, "leaseDurationSeconds"), LEASE_MS / 1000);
	transitions = lease_int(lease, "leaseTransitions");
	json_object_put(lease);

	/* the leader stops renewing (its thread is gone, as in a crash): its
	 * fence closes by itself, then another takes over */
	kube_leader_stop(el[leader].le);
	next = wait_leader(LEASE_MS + RETRY_MS, all & ~(1 << leader), &took);
	fprintf(stderr, "takeover after a crash: %lld ms (lease %d + retry %d)\n",
		(long long)took, LEASE_MS, RETRY_MS);
	CU_ASSERT(next >= 0 && next != leader);
	CU_ASSERT_FALSE(kube_leader_leading(el[leader].le));
	CU_ASSERT_EQUAL(write_cm(el[leader].writer, "by-old-leader", &err), KUBE_ENOTLEADER);
	lease = get_lease();
	CU_ASSERT_EQUAL(lease_int(lease, "leaseTransitions"), transitions + 1);
	DT_ASSERT_STR(kube_json_str(lease, "spec", "renewTime", NULL),
		      kube_json_str(lease, "spec", "acquireTime", NULL));
	json_object_put(lease);
	CU_ASSERT_EQUAL(watch_leaders(LEASE_MS, all & ~(1 << leader), &changes), next);
	CU_ASSERT_EQUAL(changes, 0);

	/* a release: the last one standing takes it at once (the watch shows
	 * the unheld Lease), well before a lease duration */
	CU_ASSERT_EQUAL(kube_leader_release(el[next].le, 1000, &err), 0);
	CU_ASSERT_EQUAL(atomic_load(&el[next].stopped), 1);
	/* a release keeps the transitions (+1 from the crash); the follower
	 * may have taken it already (+2) */
	lease = get_lease();
	CU_ASSERT(lease_int(lease, "leaseTransitions") == transitions + 1 ||
		  lease_int(lease, "leaseTransitions") == transitions + 2);
	json_object_put(lease);
	leader = wait_leader(LEASE_MS, all & ~(1 << leader) & ~(1 << next), &took);
	fprintf(stderr, "takeover after a release: %lld ms\n", (long long)took);
	CU_ASSERT(leader >= 0);
	CU_ASSERT(took < RETRY_MS);
	lease = get_lease();
	CU_ASSERT_EQUAL(lease_int(lease, "leaseTransitions"), transitions + 2);
	CU_ASSERT_EQUAL(lease_int(lease, "leaseDurationSeconds"), LEASE_MS / 1000);
	json_object_put(lease);
	for (int i = 0; i < N; i++)
		finish(&el[i]);
}

DT_SUITE_MAIN_WITH("leader_cluster", suite_init, suite_cleanup, DT_TEST(test_failover))
