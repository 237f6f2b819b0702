/* test_kube_cluster.c - the kube client against a real kube-apiserver,
 * etcd and kube-controller-manager (tools/kube/cluster.sh up $DT_KUBE_DIR):
 * list and watch, a 410 forced by an etcd compaction, the API server
 * restarted mid-watch, server-side apply of a NodeClaim that Karpenter's
 * own CRD validates, optimistic concurrency, the status subresource,
 * deletes with a uid precondition, the in-cluster path with a TokenRequest
 * token bound to a ClusterRole, a missing permission named, and a pod read
 * from the API server equal to the same pod read from YAML. */
#include <stdatomic.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dt_test.h"
#include "kube_internal.h"

static char kube_dir[512], ns[64], server[128], api_port[16], etcd[128], pki[512];
static struct kube_client *admin;

static void env_value(const char *text, const char *key, char *out, size_t size)
{
	const char *p = strstr(text, key);

	out[0] = '\0';
	while (p && p != text && p[-1] != '\n')
		p = strstr(p + 1, key);
	if (p && p[strlen(key)] == '=')
		snprintf(out, size, "%.*s", (int)strcspn(p + strlen(key) + 1, "\n"),
			 p + strlen(key) + 1);
}

static json_object *json_of(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static json_object *json_of(const char *fmt, ...)
{
	char buf[8192];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return json_tokener_parse(buf);
}

static int suite_init(void)
{
	const char *dir = getenv("DT_KUBE_DIR");
	char path[600], *env = NULL;
	struct kube_config cfg;
	struct dt_err err = { 0 };
	struct kube_ref nsref = { &kube_res_namespaces, NULL, NULL, NULL };
	json_object *body;
	int rc;

	if (!dir)
		return fprintf(stderr, "DT_KUBE_DIR is not set\n"), -1;
	snprintf(kube_dir, sizeof(kube_dir), "%s", dir);
	snprintf(path, sizeof(path), "%s/cluster.env", dir);
	if (kube_read_file(path, 65536, &env, &err))
		return fprintf(stderr, "%s\n", err.msg), -1;
	env_value(env, "API_SERVER", server, sizeof(server));
	env_value(env, "API_PORT", api_port, sizeof(api_port));
	env_value(env, "ETCD_ENDPOINT", etcd, sizeof(etcd));
	env_value(env, "PKI", pki, sizeof(pki));
	free(env);
	snprintf(path, sizeof(path), "%s/kubeconfig", dir);
	if (kube_config_from_kubeconfig(path, NULL, &cfg, &err) ||
	    kube_client_new(&cfg, NULL, &admin, &err))
		return fprintf(stderr, "%s\n", err.msg), -1;
	kube_config_free(&cfg);
	snprintf(ns, sizeof(ns), "dt-test-%d", (int)getpid());
	body = json_of("{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"%s\"}}",
		       ns);
	rc = kube_create(admin, &nsref, body, NULL, &err);
	json_object_put(body);
	if (rc)
		fprintf(stderr, "%s\n", err.msg);
	return rc ? -1 : 0;
}

static int suite_cleanup(void)
{
	struct kube_ref nsref = { &kube_res_namespaces, NULL, ns, NULL };

	if (admin)
		kube_delete(admin, &nsref, NULL, NULL, NULL);
	kube_client_free(admin);
	return 0;
}

static int create_cm(struct kube_client *c, const char *name, const char *value,
		     struct dt_err *err)
{
	struct kube_ref ref = { &kube_res_configmaps, ns, NULL, NULL };
	json_object *body = json_of("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":"
				    "{\"name\":\"%s\",\"labels\":{\"dt\":\"test\"}},\"data\":"
				    "{\"v\":\"%s\"}}", name, value);
	int rc = kube_create(c, &ref, body, NULL, err);

	json_object_put(body);
	return rc;
}

static int delete_cm(const char *name)
{
	struct kube_ref ref = { &kube_res_configmaps, ns, name, NULL };

	return kube_delete(admin, &ref, NULL, NULL, NULL);
}

/* Events an informer reported, by "TYPE name". */
struct seen {
	pthread_mutex_t lock;
	char log[256][96];
	int n;
};

static void on_event(void *arg, enum kube_event_type type, const struct kube_object *o)
{
	static const char *const names[] = { "ADDED", "MODIFIED", "DELETED", "SYNCED" };
	struct seen *s = arg;

	pthread_mutex_lock(&s->lock);
	if (s->n < 256)
		snprintf(s->log[s->n++], sizeof(s->log[0]), "%s %s", names[type],
			 o ? o->name : "");
	pthread_mutex_unlock(&s->lock);
}

static bool seen_has(struct seen *s, const char *line)
{
	bool found = false;

	pthread_mutex_lock(&s->lock);
	for (int i = 0; i < s->n; i++)
		found |= !strcmp(s->log[i], line);
	pthread_mutex_unlock(&s->lock);
	return found;
}

static bool wait_seen(struct seen *s, const char *line, int seconds)
{
	for (int i = 0; i < seconds * 20; i++) {
		if (seen_has(s, line))
			return true;
		usleep(50000);
	}
	fprintf(stderr, "\n  never saw \"%s\"\n", line);
	return false;
}

static struct kube_informer *cm_informer(struct kube_client *c, struct seen *s)
{
	struct kube_informer_opts opts = {
		.ns = ns, .label_selector = "dt=test", .on_event = on_event, .arg = s,
		.page_size = 2,
	};
	struct kube_informer *inf = NULL;
	struct dt_err err = { 0 };

	CU_ASSERT_EQUAL(kube_informer_new(c, &kube_res_configmaps, &opts, &inf, &err), 0);
	CU_ASSERT_EQUAL(kube_informer_start(inf, &err), 0);
	CU_ASSERT_TRUE(kube_informer_wait_synced(inf, 30000));
	return inf;
}

static void test_list_watch(void)
{
	struct seen s = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct kube_informer *inf;
	struct dt_err err = { 0 };
	char name[32];

	/* more objects than one page holds */
	for (int i = 0; i < 5; i++) {
		snprintf(name, sizeof(name), "pre-%d", i);
		CU_ASSERT_EQUAL(create_cm(admin, name, "1", &err), 0);
	}
	inf = cm_informer(admin, &s);
	CU_ASSERT_EQUAL(kube_informer_count(inf), 5);
	CU_ASSERT_TRUE(seen_has(&s, "ADDED pre-4"));
	CU_ASSERT_EQUAL(create_cm(admin, "live", "1", &err), 0);
	CU_ASSERT_TRUE(wait_seen(&s, "ADDED live", 30));
	CU_ASSERT_EQUAL(delete_cm("pre-0"), 0);
	CU_ASSERT_TRUE(wait_seen(&s, "DELETED pre-0", 30));
	CU_ASSERT_EQUAL(kube_informer_count(inf), 5);
	kube_informer_free(inf);
}

/* The etcd revision now, from etcd's JSON gateway. */
static long etcd_revision(void)
{
	char cmd[400], out[4096] = "";
	const char *p;
	FILE *f;
	size_t n;

	snprintf(cmd, sizeof(cmd), "curl -s -X POST %s/v3/kv/range -d '{\"key\":\"AA==\"}'", etcd);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	n = fread(out, 1, sizeof(out) - 1, f);
	out[n] = '\0';
	pclose(f);
	p = strstr(out, "\"revision\":\"");
	return p ? strtol(p + 12, NULL, 10) : -1;
}

static void test_410_after_compaction(void)
{
	struct seen s = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct kube_informer *inf;
	struct kube_informer_stats st;
	struct dt_err err = { 0 };
	char cmd[400], *doomed;
	long rev;

	CU_ASSERT_EQUAL(create_cm(admin, "keep", "1", &err), 0);
	CU_ASSERT_EQUAL(create_cm(admin, "doomed", "1", &err), 0);
	inf = cm_informer(admin, &s);
	doomed = kube_informer_get(inf, ns, "doomed");
	CU_ASSERT_PTR_NOT_NULL(doomed);
	free(doomed);
	kube_informer_stop(inf);
	/* while nobody watches: changes, then etcd forgets their history
	 * (configmaps bypass the watch cache in cluster.sh's API server) */
	CU_ASSERT_EQUAL(delete_cm("doomed"), 0);
	CU_ASSERT_EQUAL(create_cm(admin, "born", "1", &err), 0);
	rev = etcd_revision();
	CU_ASSERT_FATAL(rev > 0);
	snprintf(cmd, sizeof(cmd), "curl -sf -X POST %s/v3/kv/compaction -d "
		 "'{\"revision\":\"%ld\",\"physical\":true}' >/dev/null", etcd, rev);
	CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
	s.n = 0;
	CU_ASSERT_EQUAL(kube_informer_start(inf, &err), 0);
	CU_ASSERT_TRUE(wait_seen(&s, "DELETED doomed", 30));
	CU_ASSERT_TRUE(seen_has(&s, "ADDED born"));
	CU_ASSERT_FALSE(seen_has(&s, "DELETED keep"));
	kube_informer_stats(inf, &st);
	CU_ASSERT(st.relists_expired >= 1);
	CU_ASSERT_PTR_NULL(kube_informer_get(inf, ns, "doomed"));
	kube_informer_free(inf);
}

static void test_apiserver_restart(void)
{
	struct seen s = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct kube_informer *inf;
	struct kube_informer_stats st;
	struct dt_err err = { 0 };
	char cmd[700];

	inf = cm_informer(admin, &s);
	snprintf(cmd, sizeof(cmd), "bash tools/kube/cluster.sh restart '%s' kube-apiserver",
		 kube_dir);
	CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
	CU_ASSERT_EQUAL(create_cm(admin, "after-restart", "1", &err), 0);
	CU_ASSERT_TRUE(wait_seen(&s, "ADDED after-restart", 60));
	CU_ASSERT_EQUAL(delete_cm("after-restart"), 0);
	CU_ASSERT_TRUE(wait_seen(&s, "DELETED after-restart", 30));
	kube_informer_stats(inf, &st);
	CU_ASSERT(st.watches >= 2);
	kube_informer_free(inf);
}

static void test_conflict_on_stale_update(void)
{
	struct kube_ref ref = { &kube_res_configmaps, ns, "occ", NULL };
	json_object *first = NULL, *second = NULL;
	struct dt_err err = { 0 };

	CU_ASSERT_EQUAL(create_cm(admin, "occ", "1", &err), 0);
	CU_ASSERT_EQUAL_FATAL(kube_get(admin, &ref, &first, &err), 0);
	CU_ASSERT_EQUAL_FATAL(kube_get(admin, &ref, &second, &err), 0);
	json_object_object_add(kube_json_get(first, "data", NULL), "v", json_object_new_string("2"));
	CU_ASSERT_EQUAL(kube_update(admin, &ref, first, NULL, &err), 0);
	/* the second copy's resourceVersion is stale now */
	json_object_object_add(kube_json_get(second, "data", NULL), "v", json_object_new_string("3"));
	CU_ASSERT_EQUAL(kube_update(admin, &ref, second, NULL, &err), KUBE_ECONFLICT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "update configmaps "));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "the object has been modified"));
	json_object_put(first);
	json_object_put(second);
}

static const char NODECLAIM[] =
	"apiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata:\n  name: dt-claim-%d\n"
	"  labels: {dratopo.io/plan: test}\nspec:\n"
	"  nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}\n"
	"  requirements:\n"
	"  - {key: node.kubernetes.io/instance-type, operator: In, values: [%s]}\n"
	"  - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}\n"
	"  resources:\n    requests: {cpu: '1', vpc.amazonaws.com/efa: '32'}\n";

static void test_nodeclaim_apply(void)
{
	char yaml[2048], name[64];
	struct model_set *set = model_set_new();
	struct dt_diags d;
	struct model_object *o;
	struct kube_ref ref = { &kube_res_nodeclaims, NULL, name, NULL };
	struct kube_ref status = { &kube_res_nodeclaims, NULL, name, "status" };
	json_object *got = NULL, *patch;
	struct dt_err err = { 0 };
	const char *uid;
	char uidbuf[64];

	snprintf(name, sizeof(name), "dt-claim-%d", (int)getpid());
	snprintf(yaml, sizeof(yaml), NODECLAIM, (int)getpid(), "p5.48xlarge");
	dt_diags_init(&d);
	CU_ASSERT_EQUAL_FATAL(model_set_load_buffer(set, yaml, strlen(yaml), "nc.yaml", &d, NULL), 0);
	o = model_set_find(set, MODEL_NODE_CLAIM, NULL, name);
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	/* server-side apply of the model's object; Karpenter's CRD accepts it */
	CU_ASSERT_EQUAL(kube_apply_object(admin, o, &got, &err), 0);
	if (err.code)
		fprintf(stderr, "\n  %s\n", err.msg);
	DT_ASSERT_STR(kube_json_str(got, "spec", "nodeClassRef", "kind", NULL), "EC2NodeClass");
	json_object_put(got);
	got = NULL;
	/* applying it again changes nothing */
	CU_ASSERT_EQUAL(kube_apply_object(admin, o, NULL, &err), 0);
	/* the spec is immutable (the CRD's CEL rule) */
	model_set_free(set);
	set = model_set_new();
	snprintf(yaml, sizeof(yaml), NODECLAIM, (int)getpid(), "p4d.24xlarge");
	model_set_load_buffer(set, yaml, strlen(yaml), "nc.yaml", &d, NULL);
	o = model_set_find(set, MODEL_NODE_CLAIM, NULL, name);
	CU_ASSERT_EQUAL(kube_apply_object(admin, o, NULL, &err), KUBE_EINVALID);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "immutable"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "apply nodeclaims.karpenter.sh dt-claim-"));
	/* status through its subresource */
	patch = json_of("{\"status\":{\"providerID\":\"aws:///us-east-1a/i-0123\"}}");
	CU_ASSERT_EQUAL(kube_merge_patch(admin, &status, patch, NULL, &err), 0);
	json_object_put(patch);
	CU_ASSERT_EQUAL_FATAL(kube_get(admin, &ref, &got, &err), 0);
	DT_ASSERT_STR(kube_json_str(got, "status", "providerID", NULL), "aws:///us-east-1a/i-0123");
	uid = kube_json_str(got, "metadata", "uid", NULL);
	snprintf(uidbuf, sizeof(uidbuf), "%s", uid ? uid : "");
	json_object_put(got);
	/* a delete for another object of that name is refused */
	CU_ASSERT_EQUAL(kube_delete(admin, &ref, "00000000-0000-0000-0000-000000000000", NULL, &err),
			KUBE_ECONFLICT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "the UID in the precondition"));
	CU_ASSERT_EQUAL(kube_delete(admin, &ref, uidbuf, "Background", &err), 0);
	CU_ASSERT_EQUAL(kube_get(admin, &ref, NULL, &err), KUBE_ENOTFOUND);
	model_set_free(set);
	dt_diags_free(&d);
}

static int mkfile(const char *dir, const char *name, const char *text)
{
	char path[700];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

/* A client that reaches the API server as a pod of service account
 * sa_ns/sa would: a TokenRequest token, the CA and the namespace in a
 * folder as the kubelet mounts them, KUBERNETES_SERVICE_HOST/PORT. */
static struct kube_client *in_cluster_client(const char *sa_ns, const char *sa, char *dir,
					     size_t dir_size)
{
	struct kube_ref tr = { &kube_res_serviceaccounts, sa_ns, sa, "token" };
	json_object *body, *tok = NULL;
	struct kube_config cfg;
	struct kube_client *c = NULL;
	struct dt_err err = { 0 };
	char path[700], *ca = NULL;

	body = json_of("{\"apiVersion\":\"authentication.k8s.io/v1\",\"kind\":\"TokenRequest\","
		       "\"spec\":{\"expirationSeconds\":3600}}");
	CU_ASSERT_EQUAL(kube_create(admin, &tr, body, &tok, &err), 0);
	json_object_put(body);
	if (!tok)
		return NULL;
	snprintf(dir, dir_size, "%s/sa-%s-%d", kube_dir, sa, (int)getpid());
	mkdir(dir, 0700);
	CU_ASSERT_EQUAL(mkfile(dir, "token", kube_json_str(tok, "status", "token", NULL)), 0);
	CU_ASSERT_EQUAL(mkfile(dir, "namespace", sa_ns), 0);
	json_object_put(tok);
	snprintf(path, sizeof(path), "%s/ca.crt", pki);
	CU_ASSERT_EQUAL(kube_read_file(path, 1 << 20, &ca, &err), 0);
	CU_ASSERT_EQUAL(mkfile(dir, "ca.crt", ca ? ca : ""), 0);
	free(ca);
	setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1", 1);
	setenv("KUBERNETES_SERVICE_PORT", api_port, 1);
	CU_ASSERT_EQUAL(kube_config_in_cluster(dir, &cfg, &err), 0);
	unsetenv("KUBERNETES_SERVICE_HOST");
	unsetenv("KUBERNETES_SERVICE_PORT");
	if (err.code)
		return NULL;
	DT_ASSERT_STR(cfg.ns, sa_ns);
	CU_ASSERT_EQUAL(kube_client_new(&cfg, NULL, &c, &err), 0);
	kube_config_free(&cfg);
	return c;
}

static void remove_dir(const char *dir)
{
	char cmd[700];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CU_ASSERT_EQUAL(system(cmd), 0);
}

/* The kubeconfig forms people have, against the real server: files
 * named relative to the kubeconfig, tls-server-name (right and wrong),
 * insecure-skip-tls-verify, and an exec plugin that hands out a client
 * certificate. */
static int get_ns(const char *kubeconfig, struct dt_err *err)
{
	struct kube_config cfg;
	struct kube_client *c = NULL;
	struct kube_ref ref = { &kube_res_namespaces, NULL, "default", NULL };
	int rc = kube_config_from_kubeconfig(kubeconfig, NULL, &cfg, err);

	if (rc)
		return rc;
	rc = kube_client_new(&cfg, NULL, &c, err);
	kube_config_free(&cfg);
	if (!rc)
		rc = kube_get(c, &ref, NULL, err);
	kube_client_free(c);
	return rc;
}

static void write_kubeconfig(const char *dir, const char *cluster, const char *user)
{
	char text[4096];

	snprintf(text, sizeof(text),
		 "apiVersion: v1\nkind: Config\ncurrent-context: t\n"
		 "clusters:\n- name: c\n  cluster:\n    server: %s\n%s"
		 "users:\n- name: u\n  user:\n%s"
		 "contexts:\n- name: t\n  context: {cluster: c, user: u}\n", server, cluster, user);
	CU_ASSERT_EQUAL(mkfile(dir, "config", text), 0);
}

static void test_kubeconfig_forms(void)
{
	char dir[600], cfg[700], cmd[1400], plugin[4096];
	struct dt_err err = { 0 };

	snprintf(dir, sizeof(dir), "%s/kc-%d", kube_dir, (int)getpid());
	snprintf(cfg, sizeof(cfg), "%s/config", dir);
	mkdir(dir, 0700);
	snprintf(cmd, sizeof(cmd), "cp '%s/ca.crt' '%s/admin.crt' '%s/admin.key' '%s/'", pki, pki,
		 pki, dir);
	CU_ASSERT_EQUAL_FATAL(system(cmd), 0);

	/* files relative to the kubeconfig; the certificate names localhost */
	write_kubeconfig(dir, "    certificate-authority: ca.crt\n    tls-server-name: localhost\n",
			 "    client-certificate: admin.crt\n    client-key: admin.key\n");
	CU_ASSERT_EQUAL(get_ns(cfg, &err), 0);
	/* a name the certificate does not carry is refused */
	write_kubeconfig(dir, "    certificate-authority: ca.crt\n    tls-server-name: api.example\n",
			 "    client-certificate: admin.crt\n    client-key: admin.key\n");
	CU_ASSERT_EQUAL(get_ns(cfg, &err), KUBE_EUNAVAILABLE);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "get namespaces default: "));
	/* no CA at all: refused, unless verification is off */
	write_kubeconfig(dir, "", "    client-certificate: admin.crt\n    client-key: admin.key\n");
	CU_ASSERT_EQUAL(get_ns(cfg, &err), KUBE_EUNAVAILABLE);
	write_kubeconfig(dir, "    insecure-skip-tls-verify: true\n",
			 "    client-certificate: admin.crt\n    client-key: admin.key\n");
	CU_ASSERT_EQUAL(get_ns(cfg, &err), 0);
	/* no credentials: the API server says who we are to it */
	write_kubeconfig(dir, "    certificate-authority: ca.crt\n", "    {}\n");
	CU_ASSERT_EQUAL(get_ns(cfg, &err), KUBE_EFORBIDDEN);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "system:anonymous"));

	/* an exec plugin handing out the admin certificate (as EKS's hands out
	 * tokens), found relative to the kubeconfig */
	snprintf(plugin, sizeof(plugin),
		 "#!/bin/sh\ncd \"$(dirname \"$0\")\"\n"
		 "printf '{\"apiVersion\":\"client.authentication.k8s.io/v1beta1\",\"kind\":"
		 "\"ExecCredential\",\"status\":{\"clientCertificateData\":\"%%s\",\"clientKeyData\":"
		 "\"%%s\"}}' \"$(sed -z 's/\\n/\\\\n/g' admin.crt)\" \"$(sed -z 's/\\n/\\\\n/g' admin.key)\"\n");
	CU_ASSERT_EQUAL(mkfile(dir, "creds.sh", plugin), 0);
	snprintf(cmd, sizeof(cmd), "%s/creds.sh", dir);
	chmod(cmd, 0700);
	write_kubeconfig(dir, "    certificate-authority: ca.crt\n",
			 "    exec:\n      apiVersion: client.authentication.k8s.io/v1beta1\n"
			 "      command: ./creds.sh\n");
	CU_ASSERT_EQUAL(get_ns(cfg, &err), 0);
	remove_dir(dir);
}

static void test_in_cluster_token(void)
{
	char role[96], dir[600];
	struct kube_ref sa = { &kube_res_serviceaccounts, ns, NULL, NULL };
	struct kube_ref cr = { &kube_res_clusterroles, NULL, NULL, NULL };
	struct kube_ref crb = { &kube_res_clusterrolebindings, NULL, NULL, NULL };
	struct kube_client *c;
	struct seen s = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct kube_informer *inf;
	json_object *body;
	struct dt_err err = { 0 };

	snprintf(role, sizeof(role), "dt-test-reader-%d", (int)getpid());
	body = json_of("{\"apiVersion\":\"v1\",\"kind\":\"ServiceAccount\",\"metadata\":"
		       "{\"name\":\"reader\"}}");
	CU_ASSERT_EQUAL(kube_create(admin, &sa, body, NULL, &err), 0);
	json_object_put(body);
	body = json_of("{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"ClusterRole\","
		       "\"metadata\":{\"name\":\"%s\"},\"rules\":[{\"apiGroups\":[\"\"],"
		       "\"resources\":[\"configmaps\"],\"verbs\":[\"get\",\"list\",\"watch\"]}]}",
		       role);
	CU_ASSERT_EQUAL(kube_create(admin, &cr, body, NULL, &err), 0);
	json_object_put(body);
	body = json_of("{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":"
		       "\"ClusterRoleBinding\",\"metadata\":{\"name\":\"%s\"},\"roleRef\":"
		       "{\"apiGroup\":\"rbac.authorization.k8s.io\",\"kind\":\"ClusterRole\","
		       "\"name\":\"%s\"},\"subjects\":[{\"kind\":\"ServiceAccount\",\"name\":"
		       "\"reader\",\"namespace\":\"%s\"}]}", role, role, ns);
	CU_ASSERT_EQUAL(kube_create(admin, &crb, body, NULL, &err), 0);
	json_object_put(body);
	c = in_cluster_client(ns, "reader", dir, sizeof(dir));
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);

	/* what the role grants works, list and watch included */
	CU_ASSERT_EQUAL(create_cm(admin, "for-reader", "1", &err), 0);
	inf = cm_informer(c, &s);
	CU_ASSERT_TRUE(seen_has(&s, "ADDED for-reader"));
	kube_informer_free(inf);
	/* what it does not is named: verb, resource, group, namespace */
	CU_ASSERT_EQUAL(create_cm(c, "not-allowed", "1", &err), KUBE_EFORBIDDEN);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "create configmaps in namespace "));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "cannot create resource \"configmaps\" in API "
					      "group \"\" in the namespace"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "system:serviceaccount:"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "(403 Forbidden)"));
	kube_client_free(c);
	remove_dir(dir);
	cr.name = role;
	crb.name = role;
	kube_delete(admin, &crb, NULL, NULL, NULL);
	kube_delete(admin, &cr, NULL, NULL, NULL);
}

static int count_item(void *arg, json_object *item)
{
	(void)item;
	(*(int *)arg)++;
	return 0;
}

static int count_ours(void *arg, json_object *ev)
{
	const char *reason = kube_json_str(ev, "reason", NULL);
	const char *by = kube_json_str(ev, "reportingController", NULL);

	if (reason && by && !strcmp(reason, "FailedProvisioning") &&
	    !strcmp(by, "dratopo.io/coordinator"))
		(*(int *)arg)++;
	return 0;
}

/* deploy/rbac.yaml is enough for everything the coordinator does, and
 * nothing more: as its service account, through the in-cluster path. */
static void test_deploy_rbac_suffices(void)
{
	static const struct kube_resource *const reads[] = {
		&kube_res_pods, &kube_res_nodes, &kube_res_daemonsets, &kube_res_resourceclaims,
		&kube_res_resourceclaimtemplates, &kube_res_deviceclasses,
		&kube_res_resourceslices, &kube_res_devicetaintrules, &kube_res_nodepools,
		&kube_res_nodeoverlays, &kube_res_nodeclaims, &kube_res_ec2nodeclasses,
	};
	char cmd[1200], dir[600], claim[64], rule[64], node[64];
	struct kube_client *c;
	struct kube_recorder *rec;
	struct kube_ref ref = { NULL, "", NULL, NULL };
	struct kube_objref about;
	json_object *body, *got = NULL;
	struct dt_err err = { 0 };
	char uid[64] = "";
	int n = 0;

	snprintf(cmd, sizeof(cmd), "'%s/bin/kubectl' --kubeconfig '%s/kubeconfig' apply "
		 "-f deploy/namespace.yaml -f deploy/rbac.yaml >/dev/null", kube_dir, kube_dir);
	CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
	c = in_cluster_client("dratopo", "dratopo-coordinator", dir, sizeof(dir));
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	for (size_t i = 0; i < sizeof(reads) / sizeof(reads[0]); i++) {
		ref.res = reads[i];
		CU_ASSERT_EQUAL(kube_list(c, &ref, NULL, count_item, &n, NULL, 0, &err), 0);
		if (err.code)
			fprintf(stderr, "\n  %s\n", err.msg);
		err.code = 0;
	}

	/* a NodeClaim: apply, then delete with its uid */
	snprintf(claim, sizeof(claim), "dt-rbac-%d", (int)getpid());
	body = json_of("{\"apiVersion\":\"karpenter.sh/v1\",\"kind\":\"NodeClaim\",\"metadata\":"
		       "{\"name\":\"%s\"},\"spec\":{\"nodeClassRef\":{\"group\":"
		       "\"karpenter.k8s.aws\",\"kind\":\"EC2NodeClass\",\"name\":\"default\"},"
		       "\"requirements\":[{\"key\":\"node.kubernetes.io/instance-type\",\"operator\":"
		       "\"In\",\"values\":[\"p5.48xlarge\"]}]}}", claim);
	ref = (struct kube_ref){ &kube_res_nodeclaims, NULL, claim, NULL };
	CU_ASSERT_EQUAL(kube_apply(c, &ref, body, &got, &err), 0);
	json_object_put(body);
	snprintf(uid, sizeof(uid), "%s", got ? kube_json_str(got, "metadata", "uid", NULL) : "");
	json_object_put(got);
	CU_ASSERT_EQUAL(kube_delete(c, &ref, uid, NULL, &err), 0);

	/* a DeviceTaintRule: apply and delete */
	snprintf(rule, sizeof(rule), "dt-rbac-%d", (int)getpid());
	body = json_of("{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"DeviceTaintRule\","
		       "\"metadata\":{\"name\":\"%s\"},\"spec\":{\"deviceSelector\":{\"driver\":"
		       "\"gpu.nvidia.com\",\"pool\":\"n1\",\"device\":\"gpu-0\"},\"taint\":"
		       "{\"key\":\"dratopo.io/drift\",\"value\":\"pcie\",\"effect\":"
		       "\"NoSchedule\"}}}", rule);
	ref = (struct kube_ref){ &kube_res_devicetaintrules, NULL, rule, NULL };
	CU_ASSERT_EQUAL(kube_apply(c, &ref, body, NULL, &err), 0);
	if (err.code)
		fprintf(stderr, "\n  %s\n", err.msg);
	json_object_put(body);
	CU_ASSERT_EQUAL(kube_delete(c, &ref, NULL, NULL, &err), 0);

	/* a Node's taints (the Node itself is the cluster's) */
	snprintf(node, sizeof(node), "dt-rbac-%d", (int)getpid());
	body = json_of("{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\"}}",
		       node);
	ref = (struct kube_ref){ &kube_res_nodes, NULL, node, NULL };
	CU_ASSERT_EQUAL(kube_create(admin, &ref, body, NULL, &err), 0);
	json_object_put(body);
	body = json_of("{\"spec\":{\"taints\":[{\"key\":\"dratopo.io/drift\",\"effect\":"
		       "\"NoSchedule\"}]}}");
	CU_ASSERT_EQUAL(kube_merge_patch(c, &ref, body, NULL, &err), 0);
	json_object_put(body);
	/* deleting it is not the coordinator's business */
	CU_ASSERT_EQUAL(kube_delete(c, &ref, NULL, NULL, &err), KUBE_EFORBIDDEN);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "cannot delete resource \"nodes\""));
	kube_delete(admin, &ref, NULL, NULL, NULL);

	/* its Lease, in its namespace only */
	body = json_of("{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\","
		       "\"metadata\":{\"name\":\"dt-rbac-%d\"},\"spec\":{\"holderIdentity\":"
		       "\"test\",\"leaseDurationSeconds\":15}}", (int)getpid());
	ref = (struct kube_ref){ &kube_res_leases, "dratopo", NULL, NULL };
	CU_ASSERT_EQUAL(kube_create(c, &ref, body, NULL, &err), 0);
	ref.ns = ns;
	CU_ASSERT_EQUAL(kube_create(c, &ref, body, NULL, &err), KUBE_EFORBIDDEN);
	json_object_put(body);

	/* an Event about a pod */
	CU_ASSERT_EQUAL_FATAL(kube_recorder_new(c, NULL, &rec, &err), 0);
	about = (struct kube_objref){ "v1", "Pod", ns, "trainer", NULL };
	CU_ASSERT_EQUAL(kube_event(rec, &about, "Warning", "FailedProvisioning", "Planning",
				   "no NodePool can run it"), 0);
	kube_recorder_free(rec, 10000);
	ref = (struct kube_ref){ &kube_res_events, ns, NULL, NULL };
	n = 0;
	CU_ASSERT_EQUAL(kube_list(admin, &ref, NULL, count_ours, &n, NULL, 0, &err), 0);
	CU_ASSERT_EQUAL(n, 1);
	kube_client_free(c);
	remove_dir(dir);
}

/* What the API server adds to every pod on its own: its bookkeeping,
 * kubectl's annotation, the Priority admission plugin's priority 0 and
 * DefaultTolerationSeconds' two NoExecute tolerations, and the status. */
static json_object *without_server_additions(const char *json)
{
	json_object *o = json_tokener_parse(json), *meta = kube_json_get(o, "metadata", NULL);
	json_object *spec = kube_json_get(o, "spec", NULL), *tol, *kept;

	json_object_object_del(o, "status");
	json_object_object_del(meta, "annotations");
	json_object_object_del(meta, "creationTimestamp");
	json_object_object_del(meta, "resourceVersion");
	json_object_object_del(meta, "uid");
	json_object_object_del(spec, "priority");
	tol = kube_json_get(spec, "tolerations", NULL);
	kept = json_object_new_array();
	for (size_t i = 0; tol && i < json_object_array_length(tol); i++) {
		json_object *t = json_object_array_get_idx(tol, i);
		const char *key = kube_json_str(t, "key", NULL);

		if (key && (!strcmp(key, "node.kubernetes.io/not-ready") ||
			    !strcmp(key, "node.kubernetes.io/unreachable")))
			continue;
		json_object_array_add(kept, json_object_get(t));
	}
	json_object_object_add(spec, "tolerations", kept);
	return o;
}

/* The pod kubectl applied, read back by an informer, is the object the
 * planner gets from the YAML file, but for what the API server adds. */
static void test_pod_same_as_yaml(void)
{
	struct kube_informer_opts opts = { .ns = ns };
	struct kube_informer *inf = NULL;
	struct model_set *file = model_set_new(), *api = model_set_new();
	struct model_object *want, *got = NULL;
	struct dt_diags d;
	struct dt_err err = { 0 };
	char cmd[1200], *json = NULL;

	dt_diags_init(&d);
	/* the ServiceAccount admission plugin wants the namespace's default
	 * service account, which kube-controller-manager creates */
	for (int i = 0; i < 600; i++) {
		struct kube_ref sa = { &kube_res_serviceaccounts, ns, "default", NULL };

		if (kube_get(admin, &sa, NULL, NULL) == 0)
			break;
		usleep(100000);
	}
	snprintf(cmd, sizeof(cmd), "'%s/bin/kubectl' --kubeconfig '%s/kubeconfig' -n %s apply "
		 "-f tests/fixtures/kube/pod-gpu.yaml >/dev/null", kube_dir, kube_dir, ns);
	CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
	CU_ASSERT_EQUAL_FATAL(kube_informer_new(admin, &kube_res_pods, &opts, &inf, &err), 0);
	CU_ASSERT_EQUAL(kube_informer_start(inf, &err), 0);
	CU_ASSERT_TRUE(kube_informer_wait_synced(inf, 30000));
	json = kube_informer_get(inf, ns, "trainer");
	CU_ASSERT_PTR_NOT_NULL_FATAL(json);
	/* as the server sent it, status and all, the model accepts it */
	CU_ASSERT_EQUAL(kube_informer_snapshot(inf, api, &err), 1);
	model_set_free(api);
	api = model_set_new();
	{
		json_object *plain = without_server_additions(json);
		const char *text = json_object_to_json_string(plain);

		CU_ASSERT_EQUAL(kube_decode(api, text, strlen(text), "kube-apiserver", NULL, &got,
					    &d), 0);
		json_object_put(plain);
	}
	CU_ASSERT_EQUAL(model_set_load_file(file, dt_fixture("kube/pod-gpu.yaml"), &d, NULL), 0);
	want = model_set_next(file, MODEL_POD, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(want);
	CU_ASSERT_PTR_NOT_NULL_FATAL(got);
	want->meta.ns = ns;
	if (!model_object_equal(want, got)) {
		struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;

		model_emit(want, DOC_FORMAT_YAML, &a);
		model_emit(got, DOC_FORMAT_YAML, &b);
		fprintf(stderr, "\n--- file\n%s\n--- API server\n%s\n", sb_str(&a), sb_str(&b));
		sb_free(&a);
		sb_free(&b);
		CU_FAIL("the API server's pod differs from the file's");
	}
	for (size_t i = 0; i < d.n; i++)
		fprintf(stderr, "\n  %s\n", d.msgs[i]);
	CU_ASSERT_EQUAL(d.n, 0);
	free(json);
	kube_informer_free(inf);
	model_set_free(file);
	model_set_free(api);
	dt_diags_free(&d);
}

DT_SUITE_MAIN_WITH("kube_cluster", suite_init, suite_cleanup,
	DT_TEST(test_list_watch),
	DT_TEST(test_410_after_compaction),
	DT_TEST(test_conflict_on_stale_update),
	DT_TEST(test_nodeclaim_apply),
	DT_TEST(test_kubeconfig_forms),
	DT_TEST(test_in_cluster_token),
	DT_TEST(test_pod_same_as_yaml),
	DT_TEST(test_deploy_rbac_suffices),
	DT_TEST(test_apiserver_restart))
