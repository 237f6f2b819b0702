/* test_kube.c - the kube client without an API server: the watch stream
 * decoder (split at every byte), the store, kubeconfig merging and paths,
 * exec plugins, and requests, lists, informers and Events against a
 * scripted HTTP server (410, 429 with Retry-After, 401 and token files,
 * bookmarks, Warning headers). */
#include <fcntl.h>
#include <stdatomic.h>
#include <sys/stat.h>

#include "dt_test.h"
#include "kube_fake.h"
#include "kube_internal.h"
#include "obs_log.h"

static char tmpdir[256];

static void write_file(const char *name, const char *text, int mode)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs(text, f);
	fclose(f);
	chmod(path, (mode_t)mode);
}

static int suite_init(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/dt-kube-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int suite_cleanup(void)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

/* ---- the stream decoder ---- */

static const char EVENTS[] =
	"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"1\"},"
	"\"data\":{\"k\":\"v with \\\"quotes\\\" and } braces {\",\"n\":[1,2.5,true,null]}}}\n"
	"{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"7\"}}}\n"
	"{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"name\":\"b\",\"resourceVersion\":\"8\"}}}"
	"{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"\\u00e9\",\"resourceVersion\":\"9\"}}}\r\n";

struct collected {
	char types[16][16];
	int n;
};

static int collect(void *arg, json_object *v)
{
	struct collected *c = arg;
	const char *t = kube_json_str(v, "type", NULL);

	if (c->n < 16)
		snprintf(c->types[c->n], sizeof(c->types[0]), "%s", t ? t : "?");
	c->n++;
	return 0;
}

static void check_collected(const struct collected *c)
{
	CU_ASSERT_EQUAL(c->n, 4);
	DT_ASSERT_STR(c->types[0], "ADDED");
	DT_ASSERT_STR(c->types[1], "BOOKMARK");
	DT_ASSERT_STR(c->types[2], "DELETED");
	DT_ASSERT_STR(c->types[3], "MODIFIED");
}

static void test_stream_split_everywhere(void)
{
	size_t len = strlen(EVENTS);

	for (size_t k = 0; k <= len; k++) {
		struct kube_stream s;
		struct collected c = { 0 };

		CU_ASSERT_EQUAL_FATAL(kube_stream_init(&s, 0), 0);
		CU_ASSERT_EQUAL(kube_stream_feed(&s, EVENTS, k, collect, &c, NULL), 0);
		CU_ASSERT_EQUAL(kube_stream_feed(&s, EVENTS + k, len - k, collect, &c, NULL), 0);
		check_collected(&c);
		kube_stream_fini(&s);
	}
}

static void test_stream_byte_by_byte(void)
{
	struct kube_stream s;
	struct collected c = { 0 };

	CU_ASSERT_EQUAL_FATAL(kube_stream_init(&s, 0), 0);
	for (size_t i = 0; EVENTS[i]; i++)
		CU_ASSERT_EQUAL(kube_stream_feed(&s, EVENTS + i, 1, collect, &c, NULL), 0);
	check_collected(&c);
	kube_stream_fini(&s);
}

static void test_stream_limits(void)
{
	struct kube_stream s;
	struct collected c = { 0 };
	struct dt_err err = { 0 };
	char big[400];

	CU_ASSERT_EQUAL_FATAL(kube_stream_init(&s, 100), 0);
	snprintf(big, sizeof(big), "{\"type\":\"ADDED\",\"object\":{\"data\":\"%0250d\"}}", 0);
	/* the cap holds however the bytes arrive */
	for (size_t i = 0; i < strlen(big) && !err.code; i += 7)
		kube_stream_feed(&s, big + i, strlen(big) - i < 7 ? strlen(big) - i : 7, collect, &c,
				 &err);
	CU_ASSERT_EQUAL(err.code, -E2BIG);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "exceeds"));
	CU_ASSERT_EQUAL(c.n, 0);
	/* after the error the decoder starts afresh */
	CU_ASSERT_EQUAL(kube_stream_feed(&s, "{\"type\":\"ADDED\"}\n", 17, collect, &c, NULL), 0);
	CU_ASSERT_EQUAL(c.n, 1);
	CU_ASSERT_EQUAL(kube_stream_feed(&s, "<html>", 6, collect, &c, &err), KUBE_EPROTO);
	kube_stream_fini(&s);
}

/* ---- the store ---- */

static void test_store(void)
{
	struct kube_store st = { 0 };
	char ns[32], name[32];
	size_t i = 0, n = 0;

	for (int k = 0; k < 2000; k++) {
		struct kube_entry *e, *old;

		snprintf(ns, sizeof(ns), "ns%d", k % 7);
		snprintf(name, sizeof(name), "obj-%d", k);
		e = kube_entry_new(ns, name, "u", "1", "{}", 2, NULL);
		CU_ASSERT_EQUAL_FATAL(kube_store_put(&st, e, &old), 0);
		CU_ASSERT_PTR_NULL(old);
	}
	for (int k = 0; k < 2000; k += 2) {
		snprintf(ns, sizeof(ns), "ns%d", k % 7);
		snprintf(name, sizeof(name), "obj-%d", k);
		kube_entry_free(kube_store_take(&st, ns, name));
	}
	CU_ASSERT_EQUAL(st.n, 1000);
	for (int k = 0; k < 2000; k++) {
		snprintf(ns, sizeof(ns), "ns%d", k % 7);
		snprintf(name, sizeof(name), "obj-%d", k);
		CU_ASSERT_EQUAL(kube_store_get(&st, ns, name) != NULL, k % 2 == 1);
	}
	while (kube_store_next(&st, &i))
		n++;
	CU_ASSERT_EQUAL(n, 1000);
	kube_store_fini(&st);
}

static void test_micro_time(void)
{
	struct timespec ts = { 1796378402, 123456789 };        /* 2026-12-04T10:00:02Z */
	char buf[32];

	DT_ASSERT_STR(kube_micro_time(&ts, buf, sizeof(buf)), "2026-12-04T10:00:02.123456Z");
	CU_ASSERT_EQUAL(strlen(kube_micro_time(NULL, buf, sizeof(buf))), 27);
}

static void test_base64(void)
{
	char *out;
	size_t n;

	CU_ASSERT_EQUAL(kube_base64_decode("aGVsbG8gd29ybGQ=", 16, &out, &n), 0);
	DT_ASSERT_STR(out, "hello world");
	CU_ASSERT_EQUAL(n, 11);
	free(out);
	CU_ASSERT_EQUAL(kube_base64_decode("aGVs\nbG8", 8, &out, &n), 0);
	DT_ASSERT_STR(out, "hello");
	free(out);
	CU_ASSERT_EQUAL(kube_base64_decode("a$b=", 4, &out, &n), -EINVAL);
}

/* ---- kubeconfig ---- */

static void test_kubeconfig_merge(void)
{
	struct kube_config cfg;
	struct dt_err err = { 0 };
	char paths[1024], tokpath[512];

	write_file("ca.pem", "-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n", 0600);
	write_file("tok", "t0k3n\n", 0600);
	write_file("one.yaml",
		   "apiVersion: v1\nkind: Config\ncurrent-context: first\n"
		   "clusters:\n- name: c1\n  cluster:\n    server: https://a.example:6443\n"
		   "    certificate-authority: ca.pem\n    tls-server-name: api.internal\n"
		   "users:\n- name: u1\n  user:\n    tokenFile: tok\n"
		   "contexts:\n- name: first\n  context: {cluster: c1, user: u1, namespace: team}\n",
		   0600);
	write_file("two.yaml",
		   "apiVersion: v1\nkind: Config\ncurrent-context: second\n"
		   "clusters:\n- name: c1\n  cluster:\n    server: https://ignored:1\n"
		   "- name: c2\n  cluster:\n    server: https://b.example\n"
		   "    insecure-skip-tls-verify: true\n"
		   "users:\n- name: u2\n  user:\n    client-certificate-data: Q0VSVA==\n"
		   "    client-key-data: S0VZ\n"
		   "contexts:\n- name: second\n  context: {cluster: c2, user: u2}\n", 0600);
	snprintf(paths, sizeof(paths), "%s/one.yaml:%s/missing.yaml:%s/two.yaml", tmpdir, tmpdir,
		 tmpdir);

	/* the first file's current-context and the first definition of c1 win */
	CU_ASSERT_EQUAL_FATAL(kube_config_from_kubeconfig(paths, NULL, &cfg, &err), 0);
	DT_ASSERT_STR(cfg.server, "https://a.example:6443");
	DT_ASSERT_STR(cfg.ns, "team");
	DT_ASSERT_STR(cfg.tls_server_name, "api.internal");
	CU_ASSERT_PTR_NOT_NULL(cfg.ca_pem && strstr(cfg.ca_pem, "\nCA\n"));
	snprintf(tokpath, sizeof(tokpath), "%s/tok", tmpdir);
	DT_ASSERT_STR(cfg.token_file, tokpath);         /* relative to its kubeconfig */
	CU_ASSERT_FALSE(cfg.insecure);
	kube_config_free(&cfg);

	/* a context from the second file */
	CU_ASSERT_EQUAL_FATAL(kube_config_from_kubeconfig(paths, "second", &cfg, &err), 0);
	DT_ASSERT_STR(cfg.server, "https://b.example");
	DT_ASSERT_STR(cfg.cert_pem, "CERT");
	DT_ASSERT_STR(cfg.key_pem, "KEY");
	DT_ASSERT_STR(cfg.ns, "default");
	CU_ASSERT_TRUE(cfg.insecure);
	kube_config_free(&cfg);

	CU_ASSERT_EQUAL(kube_config_from_kubeconfig(paths, "third", &cfg, &err), -ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "context \"third\" is not defined"));

	write_file("bad.yaml",
		   "clusters:\n- name: c\n  cluster:\n    server: https://x\n"
		   "    certificate-authority-data: \"not base64!\"\n"
		   "contexts:\n- name: x\n  context: {cluster: c}\ncurrent-context: x\n", 0600);
	snprintf(paths, sizeof(paths), "%s/bad.yaml", tmpdir);
	CU_ASSERT_EQUAL(kube_config_from_kubeconfig(paths, NULL, &cfg, &err), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "clusters[0].cluster.certificate-authority-data: "
					      "illegal base64 data"));
	snprintf(paths, sizeof(paths), "%s/none1:%s/none2", tmpdir, tmpdir);
	CU_ASSERT_EQUAL(kube_config_from_kubeconfig(paths, NULL, &cfg, &err), -ENOENT);
}

static void test_in_cluster(void)
{
	struct kube_config cfg;
	struct dt_err err = { 0 };
	char dir[300];

	snprintf(dir, sizeof(dir), "%s/sa", tmpdir);
	mkdir(dir, 0700);
	write_file("sa/token", "abc\n", 0600);
	write_file("sa/ca.crt", "PEM", 0600);
	write_file("sa/namespace", "dratopo\n", 0600);
	setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	CU_ASSERT_EQUAL_FATAL(kube_config_in_cluster(dir, &cfg, &err), 0);
	DT_ASSERT_STR(cfg.server, "https://[fd00::1]:443");
	DT_ASSERT_STR(cfg.ns, "dratopo");
	DT_ASSERT_STR(cfg.ca_pem, "PEM");
	kube_config_free(&cfg);
	unsetenv("KUBERNETES_SERVICE_HOST");
	CU_ASSERT_EQUAL(kube_config_in_cluster(dir, &cfg, &err), -ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "KUBERNETES_SERVICE_HOST"));
	unsetenv("KUBERNETES_SERVICE_PORT");
}

/* ---- exec plugins ---- */

static void test_exec_plugin(void)
{
	struct kube_config cfg;
	struct kube_auth a;
	struct kube_creds cr;
	struct dt_err err = { 0 };
	char paths[512];

	/* prints a new token each run (a counter file) with the expiry given */
	write_file("plugin.sh",
		   "#!/bin/sh\nn=$(cat \"$(dirname \"$0\")/count\" 2>/dev/null || echo 0)\n"
		   "n=$((n+1)); echo $n > \"$(dirname \"$0\")/count\"\n"
		   "case \"$KUBERNETES_EXEC_INFO\" in *'\"interactive\":false'*) ;; *) exit 3;; esac\n"
		   "printf '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":"
		   "\"ExecCredential\",\"status\":{\"token\":\"%s-%s\",\"expirationTimestamp\":"
		   "\"%s\"}}' \"$PREFIX\" \"$n\" \"$EXPIRY\"\n", 0700);
	write_file("exec.yaml",
		   "clusters:\n- name: c\n  cluster: {server: 'https://x'}\n"
		   "users:\n- name: u\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n"
		   "      command: ./plugin.sh\n      env:\n      - {name: PREFIX, value: tok}\n"
		   "      - {name: EXPIRY, value: '2001-01-01T00:00:00Z'}\n"
		   "contexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n", 0600);
	snprintf(paths, sizeof(paths), "%s/exec.yaml", tmpdir);
	CU_ASSERT_EQUAL_FATAL(kube_config_from_kubeconfig(paths, NULL, &cfg, &err), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(cfg.exec);
	kube_auth_init(&a, &cfg, NULL);
	/* an expired answer is asked for again on every use */
	CU_ASSERT_EQUAL(kube_auth_get(&a, &cr, &err), 0);
	DT_ASSERT_STR(cr.token, "tok-1");
	kube_creds_free(&cr);
	CU_ASSERT_EQUAL(kube_auth_get(&a, &cr, &err), 0);
	DT_ASSERT_STR(cr.token, "tok-2");
	kube_creds_free(&cr);
	kube_auth_fini(&a);
	kube_config_free(&cfg);

	/* one far in the future is kept until a 401 resets it */
	write_file("exec.yaml",
		   "clusters:\n- name: c\n  cluster: {server: 'https://x'}\n"
		   "users:\n- name: u\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n"
		   "      command: ./plugin.sh\n      env:\n      - {name: PREFIX, value: t}\n"
		   "      - {name: EXPIRY, value: '2999-01-01T00:00:00Z'}\n"
		   "contexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n", 0600);
	CU_ASSERT_EQUAL_FATAL(kube_config_from_kubeconfig(paths, NULL, &cfg, &err), 0);
	kube_auth_init(&a, &cfg, NULL);
	CU_ASSERT_EQUAL(kube_auth_get(&a, &cr, &err), 0);
	DT_ASSERT_STR(cr.token, "t-3");
	kube_creds_free(&cr);
	CU_ASSERT_EQUAL(kube_auth_get(&a, &cr, &err), 0);
	DT_ASSERT_STR(cr.token, "t-3");
	kube_creds_free(&cr);
	CU_ASSERT_TRUE(kube_auth_reset(&a));
	CU_ASSERT_EQUAL(kube_auth_get(&a, &cr, &err), 0);
	DT_ASSERT_STR(cr.token, "t-4");
	kube_creds_free(&cr);
	kube_auth_fini(&a);
	kube_config_free(&cfg);

	/* a missing command says so, with the install hint */
	write_file("exec.yaml",
		   "clusters:\n- name: c\n  cluster: {server: 'https://x'}\n"
		   "users:\n- name: u\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n"
		   "      command: dratopo-no-such-plugin\n      installHint: install it\n"
		   "contexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n", 0600);
	CU_ASSERT_EQUAL_FATAL(kube_config_from_kubeconfig(paths, NULL, &cfg, &err), 0);
	kube_auth_init(&a, &cfg, NULL);
	CU_ASSERT_EQUAL(kube_auth_get(&a, &cr, &err), -ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "not found: install it"));
	kube_auth_fini(&a);
	kube_config_free(&cfg);
}

/* ---- requests against the scripted server ---- */

static struct kube_client *client_for(const struct fake_server *fs, const char *token_file)
{
	struct kube_config cfg = { 0 };
	struct kube_client_opts opts = { .backoff_base_s = 0.01, .backoff_max_s = 0.05 };
	struct kube_client *c = NULL;
	struct dt_err err = { 0 };

	cfg.server = (char *)fs->url;
	cfg.token_file = (char *)token_file;
	cfg.ns = (char *)"default";
	CU_ASSERT_EQUAL(kube_client_new(&cfg, &opts, &c, &err), 0);
	return c;
}

static void errors_handler(struct fake_server *fs, const struct fake_req *rq, int fd)
{
	(void)fs;
	if (!strcmp(rq->method, "GET"))
		fake_respond(fd, 403, NULL, "{\"kind\":\"Status\",\"status\":\"Failure\",\"message\":"
			     "\"pods \\\"x\\\" is forbidden: User \\\"u\\\" cannot get resource "
			     "\\\"pods\\\" in API group \\\"\\\" in the namespace \\\"default\\\"\","
			     "\"reason\":\"Forbidden\",\"code\":403}");
	else if (!strcmp(rq->method, "PUT"))
		fake_respond(fd, 409, NULL, "{\"kind\":\"Status\",\"message\":\"Operation cannot be "
			     "fulfilled: the object has been modified\",\"reason\":\"Conflict\","
			     "\"code\":409}");
	else if (!strcmp(rq->method, "POST"))
		fake_respond(fd, 409, NULL, "{\"kind\":\"Status\",\"message\":\"already exists\","
			     "\"reason\":\"AlreadyExists\",\"code\":409}");
	else
		fake_respond(fd, 503, NULL, "not json");
}

static void test_errors(void)
{
	struct fake_server fs;
	struct kube_client *c;
	struct kube_ref ref = { &kube_res_pods, NULL, "x", NULL };
	struct kube_ref nc = { &kube_res_nodeclaims, NULL, "n1", NULL };
	json_object *body = json_object_new_object();
	struct dt_err err = { 0 };

	CU_ASSERT_EQUAL_FATAL(fake_start(&fs, errors_handler, NULL), 0);
	c = client_for(&fs, NULL);
	CU_ASSERT_EQUAL(kube_get(c, &ref, NULL, &err), KUBE_EFORBIDDEN);
	DT_ASSERT_STR(err.msg, "get pods default/x: pods \"x\" is forbidden: User \"u\" cannot "
		      "get resource \"pods\" in API group \"\" in the namespace \"default\" "
		      "(403 Forbidden)");
	CU_ASSERT_EQUAL(kube_update(c, &nc, body, NULL, &err), KUBE_ECONFLICT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "update nodeclaims.karpenter.sh n1: "));
	CU_ASSERT_EQUAL(kube_create(c, &nc, body, NULL, &err), KUBE_EEXISTS);
	/* a merge patch may be sent again after a 503: the same patch twice is
	 * the same object */
	fs.n_requests = 0;
	CU_ASSERT_EQUAL(kube_merge_patch(c, &nc, body, NULL, &err), KUBE_EUNAVAILABLE);
	CU_ASSERT_EQUAL(fs.n_requests, 6);      /* a patch is: 1 + 5 retries */
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "not json (503 Service Unavailable)"));
	kube_client_free(c);
	fake_stop(&fs);
	json_object_put(body);
}

static void throttle_handler(struct fake_server *fs, const struct fake_req *rq, int fd)
{
	(void)fs;
	if (rq->n == 0)
		fake_respond(fd, 429, "Retry-After: 1\r\n", "{\"kind\":\"Status\",\"message\":"
			     "\"too many requests\",\"reason\":\"TooManyRequests\",\"code\":429}");
	else if (rq->n == 1)
		fake_respond(fd, 200, "Warning: 299 - \"unknown field \\\"spec.x\\\"\"\r\n",
			     "{\"metadata\":{\"name\":\"n\"}}");
	else
		fake_respond(fd, 200, "Warning: 299 - \"unknown field \\\"spec.x\\\"\"\r\n",
			     "{\"metadata\":{\"name\":\"n\"}}");
}

static void test_retry_after_and_warnings(void)
{
	struct fake_server fs;
	struct kube_client *c;
	struct kube_ref ref = { &kube_res_nodes, NULL, "n", NULL };
	json_object *out = NULL, *body = json_object_new_object();
	struct dt_err err = { 0 };
	char logpath[512], log[4096] = "";
	int fd, old;
	int64_t t0;
	ssize_t n;

	snprintf(logpath, sizeof(logpath), "%s/log", tmpdir);
	fd = open(logpath, O_CREAT | O_TRUNC | O_RDWR, 0600);
	old = obs_log_set_fd(fd);
	CU_ASSERT_EQUAL_FATAL(fake_start(&fs, throttle_handler, NULL), 0);
	c = client_for(&fs, NULL);
	t0 = kube_now_ms();
	/* 429 is retried as Retry-After says, even for a create */
	CU_ASSERT_EQUAL(kube_create(c, &ref, body, &out, &err), 0);
	CU_ASSERT(kube_now_ms() - t0 >= 900);
	DT_ASSERT_STR(kube_json_str(out, "metadata", "name", NULL), "n");
	json_object_put(out);
	CU_ASSERT_EQUAL(kube_get(c, &ref, NULL, &err), 0);
	CU_ASSERT_EQUAL(fs.n_requests, 3);
	kube_client_free(c);
	fake_stop(&fs);
	obs_log_set_fd(old);
	n = pread(fd, log, sizeof(log) - 1, 0);
	close(fd);
	log[n > 0 ? n : 0] = '\0';
	/* each distinct warning is logged once */
	CU_ASSERT_PTR_NOT_NULL(strstr(log, "event=kube_warning"));
	CU_ASSERT_PTR_NOT_NULL(strstr(log, "unknown field"));
	CU_ASSERT_PTR_NULL(strstr(strstr(log, "kube_warning") + 1, "kube_warning"));
	json_object_put(body);
}

static void auth_handler(struct fake_server *fs, const struct fake_req *rq, int fd)
{
	(void)fs;
	if (strstr(rq->headers, "Authorization: Bearer new"))
		fake_respond(fd, 200, NULL, "{}");
	else
		fake_respond(fd, 401, NULL, "{\"kind\":\"Status\",\"message\":\"Unauthorized\","
			     "\"reason\":\"Unauthorized\",\"code\":401}");
}

static void test_token_file_reset_on_401(void)
{
	struct fake_server fs;
	struct kube_client *c;
	struct kube_ref ref = { &kube_res_nodes, NULL, "n", NULL };
	struct dt_err err = { 0 };
	char tok[512];

	snprintf(tok, sizeof(tok), "%s/rotating-token", tmpdir);
	write_file("rotating-token", "old\n", 0600);
	CU_ASSERT_EQUAL_FATAL(fake_start(&fs, auth_handler, NULL), 0);
	c = client_for(&fs, tok);
	CU_ASSERT_EQUAL(kube_get(c, &ref, NULL, &err), KUBE_EUNAUTHORIZED);
	CU_ASSERT_EQUAL(fs.n_requests, 2);      /* once more after re-reading the file */
	/* rotated: the cached token is refused, the file is read again */
	write_file("rotating-token", "new\n", 0600);
	CU_ASSERT_EQUAL(kube_get(c, &ref, NULL, &err), 0);
	CU_ASSERT_EQUAL(fs.n_requests, 4);
	kube_client_free(c);
	fake_stop(&fs);
}

static struct fake_req last_req;

static void record_handler(struct fake_server *fs, const struct fake_req *rq, int fd)
{
	(void)fs;
	last_req = *rq;
	fake_respond(fd, 200, NULL, "{\"kind\":\"Status\",\"status\":\"Success\"}");
}

static void test_apply_and_delete_wire(void)
{
	struct fake_server fs;
	struct kube_client *c;
	struct kube_ref ref = { &kube_res_nodeclaims, NULL, "n1", NULL };
	struct kube_ref st = { &kube_res_nodeclaims, NULL, "n1", "status" };
	json_object *body = json_tokener_parse("{\"apiVersion\":\"karpenter.sh/v1\","
					       "\"kind\":\"NodeClaim\",\"metadata\":{\"name\":\"n1\"}}");
	struct dt_err err = { 0 };

	CU_ASSERT_EQUAL_FATAL(fake_start(&fs, record_handler, NULL), 0);
	c = client_for(&fs, NULL);
	CU_ASSERT_EQUAL(kube_apply(c, &ref, body, NULL, &err), 0);
	DT_ASSERT_STR(last_req.method, "PATCH");
	DT_ASSERT_STR(last_req.target,
		      "/apis/karpenter.sh/v1/nodeclaims/n1?fieldManager=dratopo&force=true");
	CU_ASSERT_PTR_NOT_NULL(strstr(last_req.headers, "Content-Type: application/apply-patch+yaml"));
	CU_ASSERT_PTR_NOT_NULL(strstr(last_req.headers, "Accept: application/json"));
	CU_ASSERT_PTR_NOT_NULL(strstr(last_req.headers, "User-Agent: dratopo/"));
	CU_ASSERT_PTR_NOT_NULL(strstr(last_req.body, "\"name\":\"n1\""));
	CU_ASSERT_EQUAL(kube_update(c, &st, body, NULL, &err), 0);
	DT_ASSERT_STR(last_req.method, "PUT");
	DT_ASSERT_STR(last_req.target, "/apis/karpenter.sh/v1/nodeclaims/n1/status");
	CU_ASSERT_EQUAL(kube_delete(c, &ref, "uid-1", "Background", &err), 0);
	DT_ASSERT_STR(last_req.method, "DELETE");
	CU_ASSERT_PTR_NOT_NULL(strstr(last_req.body, "\"preconditions\":{\"uid\":\"uid-1\"}"));
	CU_ASSERT_PTR_NOT_NULL(strstr(last_req.body, "\"propagationPolicy\":\"Background\""));
	kube_client_free(c);
	fake_stop(&fs);
	json_object_put(body);
}

/* ---- lists and informers ---- */

#define POD(name, rv) \
	"{\"metadata\":{\"name\":\"" name "\",\"namespace\":\"default\",\"uid\":\"uid-" name \
	"\",\"resourceVersion\":\"" rv "\",\"managedFields\":[{\"manager\":\"kubectl\"}]}," \
	"\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"busybox\"}]}}"
#define WPOD(name, rv) \
	"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"" name "\",\"namespace\":" \
	"\"default\",\"uid\":\"uid-" name "\",\"resourceVersion\":\"" rv "\"}," \
	"\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"busybox\"}]}}"

static atomic_int watch_phase;

static void informer_handler(struct fake_server *fs, const struct fake_req *rq, int fd)
{
	(void)fs;
	if (!strstr(rq->target, "watch=1")) {
		if (atomic_load(&watch_phase) >= 1) {        /* the relist after 410 */
			fake_respond(fd, 200, NULL, "{\"kind\":\"PodList\",\"metadata\":"
				     "{\"resourceVersion\":\"20\"},\"items\":[" POD("a", "12") ","
				     POD("d", "11") "]}");
		} else if (!strstr(rq->target, "continue=")) {
			fake_respond(fd, 200, NULL, "{\"kind\":\"PodList\",\"metadata\":"
				     "{\"resourceVersion\":\"10\",\"continue\":\"c1\"},\"items\":["
				     POD("a", "1") "," POD("b", "2") "]}");
		} else if (rq->n == 1) {
			/* the continue token expired: the list starts over */
			fake_respond(fd, 410, NULL, "{\"kind\":\"Status\",\"message\":\"The provided "
				     "continue parameter is too old\",\"reason\":\"Expired\","
				     "\"code\":410}");
		} else {
			fake_respond(fd, 200, NULL, "{\"kind\":\"PodList\",\"metadata\":"
				     "{\"resourceVersion\":\"10\"},\"items\":[" POD("c", "3") "]}");
		}
		return;
	}
	if (atomic_load(&watch_phase) == 0 && strstr(rq->target, "resourceVersion=10")) {
		atomic_store(&watch_phase, 1);
		fake_stream_begin(fd);
		/* every byte in a chunk of its own */
		fake_chunks(fd, "{\"type\":\"ADDED\",\"object\":" WPOD("d", "11") "}\n"
			    "{\"type\":\"MODIFIED\",\"object\":" WPOD("a", "12") "}\n"
			    "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Pod\",\"apiVersion\":\"v1\","
			    "\"metadata\":{\"resourceVersion\":\"13\"}}}\n", 1);
		fake_chunks(fd, "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":"
			    "\"v1\",\"status\":\"Failure\",\"message\":\"too old resource version: "
			    "13 (15)\",\"reason\":\"Expired\",\"code\":410}}\n", 16);
		fake_stream_end(fd);
		return;
	}
	/* later watches: an empty stream that ends at once */
	atomic_store(&watch_phase, 2);
	fake_stream_begin(fd);
	usleep(200000);
	fake_stream_end(fd);
}

struct seen_events {
	pthread_mutex_t lock;
	char log[64][64];
	int n, synced;
	int decoded;
};

static void on_event(void *arg, enum kube_event_type type, const struct kube_object *o)
{
	static const char *const names[] = { "ADDED", "MODIFIED", "DELETED", "SYNCED" };
	struct seen_events *s = arg;

	pthread_mutex_lock(&s->lock);
	if (type == KUBE_SYNCED)
		s->synced++;
	else if (s->n < 64)
		snprintf(s->log[s->n++], sizeof(s->log[0]), "%s %s", names[type], o->name);
	if (o && o->model && o->model->kind == MODEL_POD && !o->problems[0])
		s->decoded++;
	pthread_mutex_unlock(&s->lock);
}

static bool logged(struct seen_events *s, const char *line)
{
	bool found = false;

	pthread_mutex_lock(&s->lock);
	for (int i = 0; i < s->n; i++)
		found |= !strcmp(s->log[i], line);
	pthread_mutex_unlock(&s->lock);
	return found;
}

static void test_informer_relist_after_410(void)
{
	struct fake_server fs;
	struct kube_client *c;
	struct kube_informer *inf;
	struct seen_events seen = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct kube_informer_opts opts = { .on_event = on_event, .arg = &seen, .page_size = 2 };
	struct kube_informer_stats st;
	struct model_set *set;
	struct dt_err err = { 0 };
	char *json;

	atomic_store(&watch_phase, 0);
	CU_ASSERT_EQUAL_FATAL(fake_start(&fs, informer_handler, NULL), 0);
	c = client_for(&fs, NULL);
	CU_ASSERT_EQUAL_FATAL(kube_informer_new(c, &kube_res_pods, &opts, &inf, &err), 0);
	CU_ASSERT_EQUAL(kube_informer_start(inf, &err), 0);
	CU_ASSERT_TRUE(kube_informer_wait_synced(inf, 10000));
	for (int i = 0; i < 200 && atomic_load(&watch_phase) < 2; i++)
		usleep(50000);
	kube_informer_stop(inf);

	DT_ASSERT_STR(fs.log[0], "GET /api/v1/pods?limit=2");
	DT_ASSERT_STR(fs.log[1], "GET /api/v1/pods?limit=2&continue=c1");
	DT_ASSERT_STR(fs.log[2], "GET /api/v1/pods?limit=2");
	CU_ASSERT_PTR_NOT_NULL(strstr(fs.log[4], "watch=1&allowWatchBookmarks=true&timeoutSeconds="));
	CU_ASSERT_PTR_NOT_NULL(strstr(fs.log[4], "&resourceVersion=10"));
	CU_ASSERT_TRUE(logged(&seen, "ADDED a"));
	CU_ASSERT_TRUE(logged(&seen, "ADDED b"));
	CU_ASSERT_TRUE(logged(&seen, "ADDED c"));
	CU_ASSERT_TRUE(logged(&seen, "ADDED d"));
	CU_ASSERT_TRUE(logged(&seen, "MODIFIED a"));
	/* b and c vanished while the history was lost: the relist says so */
	CU_ASSERT_TRUE(logged(&seen, "DELETED b"));
	CU_ASSERT_TRUE(logged(&seen, "DELETED c"));
	CU_ASSERT_EQUAL(seen.synced, 2);
	CU_ASSERT_EQUAL(seen.n, 7);     /* the relist's a and d are unchanged: no events */
	CU_ASSERT(seen.decoded >= 5);   /* the model decoded and accepted the pods */
	CU_ASSERT_EQUAL(kube_informer_count(inf), 2);
	kube_informer_stats(inf, &st);
	CU_ASSERT_EQUAL(st.relists_expired, 1);
	CU_ASSERT_EQUAL(st.bookmarks, 1);
	CU_ASSERT_EQUAL(st.lists, 2);
	json = kube_informer_get(inf, "default", "a");
	CU_ASSERT_PTR_NOT_NULL(json && strstr(json, "\"resourceVersion\":\"12\""));
	CU_ASSERT_PTR_NULL(json && strstr(json, "managedFields"));
	free(json);
	CU_ASSERT_PTR_NULL(kube_informer_get(inf, "default", "b"));

	/* the cache as the planner's model set */
	set = model_set_new();
	CU_ASSERT_EQUAL(kube_informer_snapshot(inf, set, &err), 2);
	CU_ASSERT_PTR_NOT_NULL(model_set_find(set, MODEL_POD, "default", "d"));
	model_set_free(set);
	kube_informer_free(inf);
	kube_client_free(c);
	fake_stop(&fs);
}

/* ---- the model bridge ---- */

static void test_decode_same_as_yaml(void)
{
	static const char yaml[] =
		"apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: ml\nspec:\n"
		"  containers:\n  - name: c\n    image: i\n    resources:\n      claims:\n"
		"      - name: gpu\n  resourceClaims:\n  - name: gpu\n"
		"    resourceClaimTemplateName: one-gpu\n";
	static const char json[] =
		"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":"
		"\"ml\"},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\",\"resources\":"
		"{\"claims\":[{\"name\":\"gpu\"}]}}],\"resourceClaims\":[{\"name\":\"gpu\","
		"\"resourceClaimTemplateName\":\"one-gpu\"}]}}";
	struct model_set *a = model_set_new(), *b = model_set_new();
	struct model_object *oa = NULL, *ob;
	struct dt_diags d;

	dt_diags_init(&d);
	CU_ASSERT_EQUAL(model_set_load_buffer(a, yaml, strlen(yaml), "pod.yaml", &d, NULL), 0);
	oa = model_set_find(a, MODEL_POD, "ml", "p");
	CU_ASSERT_EQUAL(kube_decode(b, json, strlen(json), "kube-apiserver", NULL, &ob, &d), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(oa);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ob);
	CU_ASSERT_TRUE(model_object_equal(oa, ob));
	CU_ASSERT_EQUAL(d.n, 0);
	model_set_free(a);
	model_set_free(b);
	dt_diags_free(&d);
}

/* ---- Events ---- */

static atomic_int events_posted;

static void events_handler(struct fake_server *fs, const struct fake_req *rq, int fd)
{
	(void)fs;
	if (!strcmp(rq->method, "POST") &&
	    !strcmp(rq->target, "/apis/events.k8s.io/v1/namespaces/ml/events") &&
	    strstr(rq->body, "\"reportingController\":\"dratopo.io/coordinator\"") &&
	    strstr(rq->body, "\"regarding\":{\"apiVersion\":\"v1\",\"kind\":\"Pod\"") &&
	    strstr(rq->body, "\"eventTime\":\"") && strstr(rq->body, "\"name\":\"p1."))
		atomic_fetch_add(&events_posted, 1);
	fake_respond(fd, 201, NULL, "{}");
}

static void test_events_dedup_and_rate(void)
{
	struct fake_server fs;
	struct kube_client *c;
	struct kube_recorder *r;
	struct kube_recorder_opts opts = { .burst = 2 };
	struct kube_objref pod = { "v1", "Pod", "ml", "p1", "uid-p1" };
	struct kube_recorder_stats st;
	struct dt_err err = { 0 };

	atomic_store(&events_posted, 0);
	CU_ASSERT_EQUAL_FATAL(fake_start(&fs, events_handler, NULL), 0);
	c = client_for(&fs, NULL);
	CU_ASSERT_EQUAL_FATAL(kube_recorder_new(c, &opts, &r, &err), 0);
	CU_ASSERT_EQUAL(kube_event(r, &pod, "Warning", "FailedProvisioning", "Planning",
				   "no NodePool fits: %s", "p5.48xlarge has 8 GPUs"), 0);
	CU_ASSERT_EQUAL(kube_event(r, &pod, "Warning", "FailedProvisioning", "Planning",
				   "no NodePool fits: %s", "p5.48xlarge has 8 GPUs"), 1);
	CU_ASSERT_EQUAL(kube_event(r, &pod, "Normal", "Nominated", "Provisioning", "n1"), 0);
	/* the burst of 2 is spent: a third distinct event waits for a refill */
	CU_ASSERT_EQUAL(kube_event(r, &pod, "Normal", "Nominated", "Provisioning", "n2"), 1);
	kube_recorder_stats(r, &st);
	CU_ASSERT_EQUAL(st.deduplicated, 1);
	CU_ASSERT_EQUAL(st.rate_limited, 1);
	kube_recorder_free(r, 5000);
	CU_ASSERT_EQUAL(atomic_load(&events_posted), 2);
	kube_client_free(c);
	fake_stop(&fs);
}

DT_SUITE_MAIN_WITH("kube", suite_init, suite_cleanup,
	DT_TEST(test_stream_split_everywhere),
	DT_TEST(test_stream_byte_by_byte),
	DT_TEST(test_stream_limits),
	DT_TEST(test_store),
	DT_TEST(test_base64),
	DT_TEST(test_micro_time),
	DT_TEST(test_kubeconfig_merge),
	DT_TEST(test_in_cluster),
	DT_TEST(test_exec_plugin),
	DT_TEST(test_errors),
	DT_TEST(test_retry_after_and_warnings),
	DT_TEST(test_token_file_reset_on_401),
	DT_TEST(test_apply_and_delete_wire),
	DT_TEST(test_informer_relist_after_410),
	DT_TEST(test_decode_same_as_yaml),
	DT_TEST(test_events_dedup_and_rate))
