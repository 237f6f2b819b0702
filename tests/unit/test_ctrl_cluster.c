/* test_ctrl_cluster.c - the controller's remedy path against the real API
 * server of the kube fixture ($DT_KUBE_DIR), with the fleet played by a
 * hook: an unfit node's taint merged into the Node's own taints and taken
 * out again, a DeviceTaintRule applied and deleted, and --dry-run writing
 * nothing. */
#include <pthread.h>
#include <unistd.h>

#include "ctrl.h"
#include "dt_test.h"

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

static struct ctrl *start(bool dry_run)
{
	struct ctrl_opts o = { .kubeconfig = kubeconfig, .dry_run = dry_run, .remedies = fleet,
			       .remedy_period_s = 0.2 };
	struct ctrl *c = NULL;
	struct dt_err err = { 0 };

	CU_ASSERT_EQUAL(ctrl_start(&o, &c, &err), 0);
	if (err.code)
		fprintf(stderr, "\n  %s\n", err.msg);
	return c;
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

DT_SUITE_MAIN_WITH("ctrl_cluster", suite_init, suite_cleanup,
	DT_TEST(test_node_taint_and_rule),
	DT_TEST(test_dry_run_writes_nothing))
