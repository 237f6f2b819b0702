/* test_ctrl_cluster.c - the controller against the real API server of the
 * kube fixture ($DT_KUBE_DIR), with the fleet played by a hook: an unfit
 * node's taint merged into the Node's own taints and taken out again, a
 * DeviceTaintRule applied and deleted, --dry-run writing nothing and
 * logging each would-be write once per change; the batch window, which a
 * stream of ResourceClaim updates does not hold open, a pod that waits for
 * the claim it names, and the status page's view of the last plan. */
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <unistd.h>

#include "ctrl.h"
#include "dt_test.h"
#include "obs_metrics.h"

static char kubeconfig[600], node[64];
static struct kube_client *admin;
static pthread_mutex_t want_lock = PTHREAD_MUTEX_INITIALIZER;
static char want[4096];                 /* what the fleet asks for now */

static int fleet(void *arg, struct strbuf *yaml, struct dt_err *err)
{
	(void)arg;
	(void)err;
	pthread_mutex_lock(&want_lock);
	sb_puts(yaml, want);
	pthread_mutex_unlock(&want_lock);
	return 0;
}

static void ask(const char *yaml)
{
	pthread_mutex_lock(&want_lock);
	snprintf(want, sizeof(want), "%s", yaml);
	pthread_mutex_unlock(&want_lock);
}

static int suite_init(void)
{
	const char *dir = getenv("DT_KUBE_DIR");
	struct kube_config cfg;
	struct dt_err err = { 0 };
	struct kube_ref ref = { &kube_res_nodes, NULL, NULL, NULL };
	json_object *body;
	char text[512];
	int rc;

	if (!dir)
		return -1;
	snprintf(kubeconfig, sizeof(kubeconfig), "%s/kubeconfig", dir);
	if (kube_config_from_kubeconfig(kubeconfig, NULL, &cfg, &err) ||
	    kube_client_new(&cfg, NULL, &admin, &err))
		return fprintf(stderr, "%s\n", err.msg), -1;
	kube_config_free(&cfg);
	snprintf(node, sizeof(node), "dt-unfit-%d", (int)getpid());
	snprintf(text, sizeof(text), "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":"
		 "{\"name\":\"%s\"},\"spec\":{\"taints\":[{\"key\":\"example.com/other\","
		 "\"value\":\"keep\",\"effect\":\"NoSchedule\"}]}}", node);
	body = json_tokener_parse(text);
	rc = kube_create(admin, &ref, body, NULL, &err);
	json_object_put(body);
	if (rc)
		fprintf(stderr, "%s\n", err.msg);
	return rc ? -1 : 0;
}

static int suite_cleanup(void)
{
	struct kube_ref ref = { &kube_res_nodes, NULL, node, NULL };

	kube_delete(admin, &ref, NULL, NULL, NULL);
	kube_client_free(admin);
	return 0;
}

/* The node's taint keys joined with ',' (without the API server's own). */
static void taint_keys(char *buf, size_t size)
{
	struct kube_ref ref = { &kube_res_nodes, NULL, node, NULL };
	json_object *n = NULL, *t;
	size_t used = 0;

	buf[0] = '\0';
	if (kube_get(admin, &ref, &n, NULL))
		return;
	t = kube_json_get(n, "spec", "taints", NULL);
	for (size_t i = 0; t && i < json_object_array_length(t); i++) {
		const char *k = kube_json_str(json_object_array_get_idx(t, i), "key", NULL);

		if (k && strncmp(k, "node.kubernetes.io/", 19) && used < size)
			used += (size_t)snprintf(buf + used, size - used, "%s%s", used ? "," : "", k);
	}
	json_object_put(n);
}

static bool wait_taints(const char *expected, int seconds)
{
	char got[512];

	for (int i = 0; i < seconds * 10; i++) {
		taint_keys(got, sizeof(got));
		if (!strcmp(got, expected))
			return true;
		usleep(100000);
	}
	fprintf(stderr, "\n  taints \"%s\", want \"%s\"\n", got, expected);
	return false;
}

static bool rule_exists(const char *name)
{
	struct kube_ref ref = { &kube_res_devicetaintrules, NULL, name, NULL };

	return kube_get(admin, &ref, NULL, NULL) == 0;
}

static bool wait_rule(const char *name, bool exists, int seconds)
{
	for (int i = 0; i < seconds * 10; i++) {
		if (rule_exists(name) == exists)
			return true;
		usleep(100000);
	}
	return false;
}

static struct ctrl *start_with(bool dry_run, struct obs_registry *reg, double batch_max_s)
{
	struct ctrl_opts o = { .kubeconfig = kubeconfig, .dry_run = dry_run, .remedies = fleet,
			       .remedy_period_s = 0.2, .registry = reg,
			       .batch_max_s = batch_max_s };
	struct ctrl *c = NULL;
	struct dt_err err = { 0 };

	CU_ASSERT_EQUAL(ctrl_start(&o, &c, &err), 0);
	if (err.code)
		fprintf(stderr, "\n  %s\n", err.msg);
	return c;
}

static struct ctrl *start(bool dry_run)
{
	return start_with(dry_run, NULL, 0);
}

static void test_node_taint_and_rule(void)
{
	char yaml[2048], rule[96];
	struct ctrl *c;

	snprintf(rule, sizeof(rule), "dratopo-drift.%s.gpu-0", node);
	snprintf(yaml, sizeof(yaml),
		 "apiVersion: resource.k8s.io/v1\nkind: DeviceTaintRule\nmetadata:\n  name: %s\n"
		 "spec:\n  deviceSelector: {driver: gpu.nvidia.com, pool: %s, device: gpu-0}\n"
		 "  taint: {key: dratopo.io/drift, value: gpu-off-bus, effect: NoSchedule}\n"
		 "---\napiVersion: v1\nkind: Node\nmetadata: {name: %s}\nspec:\n"
		 "  taints: [{key: dratopo.io/drift, value: unfit, effect: NoSchedule}]\n",
		 rule, node, node);
	ask(yaml);
	c = start(false);
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	/* merged into the node's own taints: the other one stays */
	CU_ASSERT_TRUE(wait_taints("example.com/other,dratopo.io/drift", 30));
	CU_ASSERT_TRUE(wait_rule(rule, true, 30));
	/* the node matches again: both taken back */
	ask("");
	CU_ASSERT_TRUE(wait_taints("example.com/other", 30));
	CU_ASSERT_TRUE(wait_rule(rule, false, 30));
	ctrl_stop(c);
}

static void test_dry_run_writes_nothing(void)
{
	char yaml[512];
	struct ctrl *c;
	struct ctrl_stats st;

	snprintf(yaml, sizeof(yaml), "apiVersion: v1\nkind: Node\nmetadata: {name: %s}\nspec:\n"
		 "  taints: [{key: dratopo.io/drift, value: unfit, effect: NoSchedule}]\n", node);
	ask(yaml);
	c = start(true);
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	sleep(2);
	ctrl_stats(c, &st);
	ctrl_stop(c);
	CU_ASSERT(st.remedy_writes == 0);
	CU_ASSERT_TRUE(wait_taints("example.com/other", 1));
}

/* The value of dratopo_kube_dry_run_writes_total{verb,resource}. */
static long dry_runs(struct obs_registry *reg, const char *verb, const char *resource)
{
	struct strbuf sb = STRBUF_INIT;
	char series[256];
	const char *at;
	long n = 0;

	snprintf(series, sizeof(series),
		 "dratopo_kube_dry_run_writes_total{verb=\"%s\",resource=\"%s\"} ", verb,
		 resource);
	if (!obs_registry_render(reg, &sb, NULL) && (at = strstr(sb_str(&sb), series)))
		n = strtol(at + strlen(series), NULL, 10);
	sb_free(&sb);
	return n;
}

/* A would-be write asked for round after round (every 0.2 s here) is
 * logged and counted once; asked again after a round without it, once
 * more. */
static void test_dry_run_once_per_change(void)
{
	char yaml[512];
	struct obs_registry *reg = NULL;
	struct ctrl *c;

	CU_ASSERT_EQUAL_FATAL(obs_registry_new(&reg, NULL), 0);
	snprintf(yaml, sizeof(yaml), "apiVersion: v1\nkind: Node\nmetadata: {name: %s}\nspec:\n"
		 "  taints: [{key: dratopo.io/drift, value: unfit, effect: NoSchedule}]\n", node);
	ask(yaml);
	c = start_with(true, reg, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	for (int i = 0; i < 300 && !dry_runs(reg, "update", "nodes"); i++)
		usleep(100000);
	sleep(2);                       /* ten rounds more */
	CU_ASSERT_EQUAL(dry_runs(reg, "update", "nodes"), 1);
	ask("");
	sleep(1);
	ask(yaml);
	for (int i = 0; i < 300 && dry_runs(reg, "update", "nodes") < 2; i++)
		usleep(100000);
	sleep(1);
	CU_ASSERT_EQUAL(dry_runs(reg, "update", "nodes"), 2);
	ctrl_stop(c);
	obs_registry_free(reg);
	ask("");
}

/* ---- the batch window ---- */

static char ns[64];
static atomic_bool updating;
static int updates;

static int create_json(const struct kube_resource *res, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int create_json(const struct kube_resource *res, const char *fmt, ...)
{
	struct kube_ref ref = { res, ns, NULL, NULL };
	struct dt_err err = { 0 };
	char text[2048];
	json_object *body;
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	body = json_tokener_parse(text);
	rc = kube_create(admin, &ref, body, NULL, &err);
	json_object_put(body);
	if (rc)
		fprintf(stderr, "\n  %s\n", err.msg);
	return rc;
}

static int make_claim(const char *name)
{
	return create_json(&kube_res_resourceclaims,
			   "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\","
			   "\"metadata\":{\"name\":\"%s\"},\"spec\":{\"devices\":{\"requests\":"
			   "[{\"name\":\"gpu\",\"exactly\":{\"deviceClassName\":"
			   "\"gpu.nvidia.com\"}}]}}}", name);
}

static int make_pod(const char *name, const char *claim)
{
	return create_json(&kube_res_pods,
			   "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\"},"
			   "\"spec\":{\"resourceClaims\":[{\"name\":\"gpu\",\"resourceClaimName\":"
			   "\"%s\"}],\"containers\":[{\"name\":\"c\",\"image\":\"busybox\","
			   "\"resources\":{\"claims\":[{\"name\":\"gpu\"}]}}]}}", name, claim);
}

/* kube-controller-manager's kind of traffic: the claim updated again and
 * again (a label here), until told to stop. */
static void *update_claim(void *arg)
{
	struct kube_ref ref = { &kube_res_resourceclaims, ns, "c0", NULL };

	(void)arg;
	while (atomic_load(&updating)) {
		char text[128];
		json_object *p;

		snprintf(text, sizeof(text), "{\"metadata\":{\"labels\":{\"n\":\"%d\"}}}",
			 updates);
		p = json_tokener_parse(text);
		if (!kube_merge_patch(admin, &ref, p, NULL, NULL))
			updates++;
		json_object_put(p);
		usleep(50000);
	}
	return NULL;
}

struct seen {
	const char *pod;
	bool found;
};

static int seen_pod(void *arg, const char *pns, const char *name, const char *reason,
		    int64_t since_ns)
{
	struct seen *s = arg;

	(void)reason;
	(void)since_ns;
	s->found |= !strcmp(pns, ns) && !strcmp(name, s->pod);
	return 0;
}

static bool in_view(struct ctrl *c, const char *pod)
{
	struct seen s = { pod, false };
	struct ctrl_inflight_cb cb = { seen_pod, NULL, &s };
	struct ctrl_inflight_info info;

	CU_ASSERT_EQUAL(ctrl_inflight(c, &cb, &info), 0);
	CU_ASSERT(info.as_of_ns > 0);
	return s.found;
}

static unsigned long long cycles(struct ctrl *c)
{
	struct ctrl_stats st;

	ctrl_stats(c, &st);
	return st.cycles;
}

static bool wait_cycles(struct ctrl *c, unsigned long long n, int seconds)
{
	for (int i = 0; i < seconds * 20 && cycles(c) < n; i++)
		usleep(50000);
	return cycles(c) >= n;
}

/* With a 10-minute batch limit, a pending pod is planned 1 s after it
 * came, while its claim keeps changing: claim updates do not hold the
 * window open. A pod naming a claim not there yet waits for it (it is in
 * no plan, so it gets no Warning) and is planned when it comes. */
static void test_batch_window(void)
{
	struct kube_ref nsref = { &kube_res_namespaces, NULL, NULL, NULL };
	pthread_t t;
	unsigned long long before;
	struct ctrl *c;
	char text[256];
	json_object *body;
	bool still_updating;

	snprintf(ns, sizeof(ns), "dt-batch-%d", (int)getpid());
	snprintf(text, sizeof(text), "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\","
		 "\"metadata\":{\"name\":\"%s\"}}", ns);
	body = json_tokener_parse(text);
	CU_ASSERT_EQUAL_FATAL(kube_create(admin, &nsref, body, NULL, NULL), 0);
	json_object_put(body);
	for (int i = 0; i < 100; i++) {         /* pods need the default service account */
		struct kube_ref sa = { &kube_res_serviceaccounts, ns, "default", NULL };

		if (!kube_get(admin, &sa, NULL, NULL))
			break;
		usleep(100000);
	}
	CU_ASSERT_EQUAL_FATAL(make_claim("c0"), 0);
	ask("");
	c = start_with(true, NULL, 600);        /* dry run: plans, writes nothing */
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_TRUE_FATAL(wait_cycles(c, 1, 60));   /* the first lists' plan */
	atomic_store(&updating, true);
	pthread_create(&t, NULL, update_claim, NULL);
	sleep(1);
	before = cycles(c);
	CU_ASSERT_EQUAL(make_pod("p1", "c0"), 0);
	CU_ASSERT_EQUAL(make_pod("p2", "late"), 0);
	CU_ASSERT_TRUE(wait_cycles(c, before + 1, 60));
	still_updating = atomic_load(&updating);
	atomic_store(&updating, false);
	pthread_join(t, NULL);
	CU_ASSERT_TRUE(still_updating);
	CU_ASSERT(updates > 10);
	CU_ASSERT_TRUE(in_view(c, "p1"));
	CU_ASSERT_FALSE(in_view(c, "p2"));      /* waits for "late" */
	before = cycles(c);
	CU_ASSERT_EQUAL(make_claim("late"), 0);
	CU_ASSERT_TRUE(wait_cycles(c, before + 1, 30));
	CU_ASSERT_TRUE(in_view(c, "p2"));
	ctrl_stop(c);
	nsref.name = ns;
	kube_delete(admin, &nsref, NULL, NULL, NULL);
}

DT_SUITE_MAIN_WITH("ctrl_cluster", suite_init, suite_cleanup,
	DT_TEST(test_node_taint_and_rule),
	DT_TEST(test_dry_run_writes_nothing),
	DT_TEST(test_dry_run_once_per_change),
	DT_TEST(test_batch_window))
