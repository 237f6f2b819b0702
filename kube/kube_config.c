/* kube_config.c - where the API server is and who we are to it: kubeconfig
 * files (merged as kubectl merges a $KUBECONFIG list), the in-cluster
 * service account, and the order between them. Files named by a
 * kubeconfig are read here, once; token files are read again later
 * (kube_auth.c) because they rotate. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "doc.h"
#include "kube_internal.h"

#define PEM_MAX   (1u << 20)
#define FILES_MAX 64
#define SA_DIR    "/var/run/secrets/kubernetes.io/serviceaccount"

/* ---- small helpers ---- */

static int read_small(const char *path, size_t max, char **out, struct dt_err *err)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t n = 0;
	int rc = 0;

	*out = NULL;
	if (!f)
		return dt_err_set(err, -errno, "%s: %s", path, strerror(errno));
	buf = malloc(max + 1);
	if (!buf) {
		rc = dt_err_set(err, -ENOMEM, "%s: out of memory", path);
		goto out;
	}
	n = fread(buf, 1, max + 1, f);
	if (ferror(f)) {
		rc = dt_err_set(err, -EIO, "%s: read error", path);
	} else if (n > max) {
		rc = dt_err_set(err, -EFBIG, "%s: larger than %zu KiB", path, max >> 10);
	} else {
		buf[n] = '\0';
		*out = buf;
		buf = NULL;
	}
out:
	free(buf);
	fclose(f);
	return rc;
}

int kube_read_file(const char *path, size_t max, char **out, struct dt_err *err)
{
	return read_small(path, max, out, err);
}

static int b64_value(unsigned char ch)
{
	if (ch >= 'A' && ch <= 'Z') return ch - 'A';
	if (ch >= 'a' && ch <= 'z') return ch - 'a' + 26;
	if (ch >= '0' && ch <= '9') return ch - '0' + 52;
	if (ch == '+' || ch == '-') return 62;
	if (ch == '/' || ch == '_') return 63;
	return -1;
}

/* Standard base64 (padding optional, white space skipped) into a new
 * NUL-terminated buffer. */
int kube_base64_decode(const char *in, size_t len, char **out, size_t *out_len)
{
	char *buf = malloc(len / 4 * 3 + 4);
	unsigned acc = 0, bits = 0;
	size_t n = 0;
	bool pad = false;

	*out = NULL;
	if (!buf)
		return -ENOMEM;
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)in[i];
		int v;

		if (ch == ' ' || ch == '\n' || ch == '\r' || ch == '\t')
			continue;
		if (ch == '=') {
			pad = true;
			continue;
		}
		v = b64_value(ch);
		if (v < 0 || pad) {
			free(buf);
			return -EINVAL;
		}
		acc = (acc << 6) | (unsigned)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			buf[n++] = (char)((acc >> bits) & 0xff);
		}
	}
	buf[n] = '\0';
	*out = buf;
	if (out_len)
		*out_len = n;
	return 0;
}

static char *join_dir(const char *dir, const char *path)
{
	struct strbuf sb = STRBUF_INIT;

	if (path[0] == '/' || !dir)
		return strdup(path);
	sb_printf(&sb, "%s/%s", dir, path);
	return sb_detach(&sb);
}

void kube_config_free(struct kube_config *cfg)
{
	if (!cfg)
		return;
	if (cfg->token)
		explicit_bzero(cfg->token, strlen(cfg->token));
	if (cfg->key_pem)
		explicit_bzero(cfg->key_pem, strlen(cfg->key_pem));
	free(cfg->server);
	free(cfg->ca_pem);
	free(cfg->cert_pem);
	free(cfg->key_pem);
	free(cfg->token);
	free(cfg->token_file);
	if (cfg->exec) {
		struct kube_exec_config *ex = cfg->exec;

		free(ex->command);
		for (char **a = ex->args; a && *a; a++)
			free(*a);
		free(ex->args);
		for (char **e = ex->env; e && *e; e++)
			free(*e);
		free(ex->env);
		free(ex->api_version);
		free(ex->install_hint);
		free(ex);
	}
	free(cfg->tls_server_name);
	free(cfg->ns);
	free(cfg->origin);
	memset(cfg, 0, sizeof(*cfg));
}

static int dup_opt(char **dst, const char *src)
{
	*dst = NULL;
	if (!src)
		return 0;
	*dst = strdup(src);
	return *dst ? 0 : -ENOMEM;
}

static char **dup_list(char *const *src, int *rc)
{
	size_t n = 0;
	char **dst;

	if (!src)
		return NULL;
	while (src[n])
		n++;
	dst = calloc(n + 1, sizeof(*dst));
	if (!dst) {
		*rc = -ENOMEM;
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		if (dup_opt(&dst[i], src[i]))
			*rc = -ENOMEM;
	return dst;
}

int kube_config_copy(struct kube_config *dst, const struct kube_config *src, struct dt_err *err)
{
	int rc = 0;

	memset(dst, 0, sizeof(*dst));
	rc |= dup_opt(&dst->server, src->server);
	rc |= dup_opt(&dst->ca_pem, src->ca_pem);
	rc |= dup_opt(&dst->cert_pem, src->cert_pem);
	rc |= dup_opt(&dst->key_pem, src->key_pem);
	rc |= dup_opt(&dst->token, src->token);
	rc |= dup_opt(&dst->token_file, src->token_file);
	rc |= dup_opt(&dst->tls_server_name, src->tls_server_name);
	rc |= dup_opt(&dst->ns, src->ns ? src->ns : "default");
	rc |= dup_opt(&dst->origin, src->origin ? src->origin : "kube");
	dst->insecure = src->insecure;
	if (src->exec) {
		const struct kube_exec_config *s = src->exec;
		struct kube_exec_config *d = calloc(1, sizeof(*d));

		dst->exec = d;
		if (!d) {
			rc = -ENOMEM;
		} else {
			rc |= dup_opt(&d->command, s->command);
			rc |= dup_opt(&d->api_version, s->api_version);
			rc |= dup_opt(&d->install_hint, s->install_hint);
			d->args = dup_list(s->args, &rc);
			d->env = dup_list(s->env, &rc);
			d->provide_cluster_info = s->provide_cluster_info;
		}
	}
	if (rc) {
		kube_config_free(dst);
		return dt_err_set(err, -ENOMEM, "out of memory");
	}
	return 0;
}

/* ---- kubeconfig ---- */

struct kc_file {
	char *path;
	char *dir;                      /* relative paths resolve against it */
	struct doc_stream *st;
	const struct doc_node *root;
};

struct kc {
	struct kc_file files[FILES_MAX];
	size_t n;
};

/* The named entry of list `key` ("clusters", "users", "contexts") across
 * the files, the first file to define it winning; *file gets its file. */
static const struct doc_node *kc_entry(const struct kc *kc, const char *key, const char *name,
				       const char *inner, const struct kc_file **file, int *index)
{
	for (size_t f = 0; f < kc->n; f++) {
		const struct doc_node *list = doc_get(kc->files[f].root, key);

		if (!list || list->kind != DOC_SEQ)
			continue;
		for (size_t i = 0; i < list->u.seq.n; i++) {
			const char *n = doc_str(doc_get(list->u.seq.items[i], "name"));

			if (n && !strcmp(n, name)) {
				*file = &kc->files[f];
				*index = (int)i;
				return doc_get(list->u.seq.items[i], inner);
			}
		}
	}
	return NULL;
}

static int kc_load(struct kc *kc, const char *paths, struct dt_err *err)
{
	char *list = strdup(paths), *save = NULL, *p;
	int rc = 0;

	if (!list)
		return dt_err_set(err, -ENOMEM, "out of memory");
	for (p = strtok_r(list, ":", &save); p && !rc; p = strtok_r(NULL, ":", &save)) {
		struct kc_file *f;
		struct stat sb;
		char *slash;

		if (!p[0] || stat(p, &sb) != 0)
			continue;               /* kubectl skips missing files of a list */
		if (kc->n == FILES_MAX) {
			rc = dt_err_set(err, -E2BIG, "KUBECONFIG names more than %d files", FILES_MAX);
			break;
		}
		f = &kc->files[kc->n];
		rc = doc_load_file(p, &f->st, err);
		if (rc)
			break;
		kc->n++;
		f->path = strdup(p);
		f->dir = strdup(p);
		if (!f->path || !f->dir) {
			rc = dt_err_set(err, -ENOMEM, "out of memory");
			break;
		}
		slash = strrchr(f->dir, '/');
		if (!slash)
			strcpy(f->dir, ".");
		else if (slash == f->dir)
			f->dir[1] = '\0';
		else
			*slash = '\0';
		if (f->st->n_docs && f->st->docs[0].error) {
			rc = dt_err_set(err, -EINVAL, "kubeconfig %s: %s", p, f->st->docs[0].error);
			break;
		}
		f->root = f->st->n_docs ? f->st->docs[0].root : NULL;
		if (f->root && f->root->kind != DOC_MAP) {
			rc = dt_err_set(err, -EINVAL, "kubeconfig %s: not a map", p);
			break;
		}
	}
	if (!rc && !kc->n)
		rc = dt_err_set(err, -ENOENT, "no kubeconfig: %s %s", paths,
				strchr(paths, ':') ? "name no file that exists" : "does not exist");
	free(list);
	return rc;
}

static void kc_free(struct kc *kc)
{
	for (size_t i = 0; i < kc->n; i++) {
		doc_stream_free(kc->files[i].st);
		free(kc->files[i].path);
		free(kc->files[i].dir);
	}
}

/* A string field; a present field of another type is an error. */
static int kc_str(const struct kc_file *f, const char *where, const struct doc_node *map,
		  const char *key, const char **out, struct dt_err *err)
{
	const struct doc_node *n = doc_get(map, key);

	*out = NULL;
	if (!n || n->kind == DOC_NULL)
		return 0;
	if (n->kind != DOC_STRING)
		return dt_err_set(err, -EINVAL, "kubeconfig %s: %s.%s: must be a string, not %s",
				  f->path, where, key, doc_kind_name(n->kind));
	*out = n->text;
	return 0;
}

/* PEM from key-data (base64) or key (a file). */
static int kc_pem(const struct kc_file *f, const char *where, const struct doc_node *map,
		  const char *file_key, const char *data_key, char **out, struct dt_err *err)
{
	const char *data, *path;
	char *full;
	int rc;

	*out = NULL;
	if ((rc = kc_str(f, where, map, data_key, &data, err)) ||
	    (rc = kc_str(f, where, map, file_key, &path, err)))
		return rc;
	if (data && data[0]) {
		rc = kube_base64_decode(data, strlen(data), out, NULL);
		if (rc == -EINVAL)
			return dt_err_set(err, rc, "kubeconfig %s: %s.%s: illegal base64 data",
					  f->path, where, data_key);
		return rc ? dt_err_set(err, rc, "out of memory") : 0;
	}
	if (!path || !path[0])
		return 0;
	full = join_dir(f->dir, path);
	if (!full)
		return dt_err_set(err, -ENOMEM, "out of memory");
	rc = read_small(full, PEM_MAX, out, err);
	free(full);
	if (rc)
		dt_err_prefix(err, "kubeconfig %s: %s.%s: ", f->path, where, file_key);
	return rc;
}

static int kc_exec(const struct kc_file *f, const char *where, const struct doc_node *ex,
		   struct kube_exec_config **out, struct dt_err *err)
{
	struct kube_exec_config *e = calloc(1, sizeof(*e));
	const struct doc_node *args = doc_get(ex, "args"), *env = doc_get(ex, "env");
	const char *cmd, *api, *hint;
	const struct doc_node *pci = doc_get(ex, "provideClusterInfo");
	int rc;

	*out = e;
	if (!e)
		return dt_err_set(err, -ENOMEM, "out of memory");
	if ((rc = kc_str(f, where, ex, "command", &cmd, err)) ||
	    (rc = kc_str(f, where, ex, "apiVersion", &api, err)) ||
	    (rc = kc_str(f, where, ex, "installHint", &hint, err)))
		return rc;
	if (!cmd || !cmd[0])
		return dt_err_set(err, -EINVAL, "kubeconfig %s: %s.command: Required value",
				  f->path, where);
	if (!api || (strcmp(api, "client.authentication.k8s.io/v1") &&
		     strcmp(api, "client.authentication.k8s.io/v1beta1")))
		return dt_err_set(err, -EINVAL, "kubeconfig %s: %s.apiVersion: Unsupported value: "
				  "\"%s\": supported values: \"client.authentication.k8s.io/v1\", "
				  "\"client.authentication.k8s.io/v1beta1\"", f->path, where,
				  api ? api : "");
	/* a command with a slash is a path, relative to the kubeconfig */
	e->command = strchr(cmd, '/') ? join_dir(f->dir, cmd) : strdup(cmd);
	e->api_version = strdup(api);
	e->install_hint = hint ? strdup(hint) : NULL;
	e->provide_cluster_info = pci && pci->kind == DOC_BOOL && pci->u.b;
	if (!e->command || !e->api_version)
		return dt_err_set(err, -ENOMEM, "out of memory");
	if (args && args->kind == DOC_SEQ) {
		e->args = calloc(args->u.seq.n + 1, sizeof(char *));
		if (!e->args)
			return dt_err_set(err, -ENOMEM, "out of memory");
		for (size_t i = 0; i < args->u.seq.n; i++) {
			const struct doc_node *a = args->u.seq.items[i];

			if (!a->text)
				return dt_err_set(err, -EINVAL, "kubeconfig %s: %s.args[%zu]: must be "
						  "a string", f->path, where, i);
			if (!(e->args[i] = strdup(a->text)))
				return dt_err_set(err, -ENOMEM, "out of memory");
		}
	}
	if (env && env->kind == DOC_SEQ) {
		e->env = calloc(env->u.seq.n + 1, sizeof(char *));
		if (!e->env)
			return dt_err_set(err, -ENOMEM, "out of memory");
		for (size_t i = 0; i < env->u.seq.n; i++) {
			const char *n = doc_str(doc_get(env->u.seq.items[i], "name"));
			const struct doc_node *v = doc_get(env->u.seq.items[i], "value");
			struct strbuf sb = STRBUF_INIT;

			if (!n || !n[0] || strchr(n, '='))
				return dt_err_set(err, -EINVAL, "kubeconfig %s: %s.env[%zu].name: "
						  "Invalid value", f->path, where, i);
			sb_printf(&sb, "%s=%s", n, v && v->text ? v->text : "");
			if (!(e->env[i] = sb_detach(&sb)))
				return dt_err_set(err, -ENOMEM, "out of memory");
		}
	}
	return 0;
}

static int kc_cluster(const struct kc *kc, const char *name, struct kube_config *cfg,
		      struct dt_err *err)
{
	const struct kc_file *f = NULL;
	int idx = -1, rc;
	const struct doc_node *cl = kc_entry(kc, "clusters", name, "cluster", &f, &idx);
	const char *server, *tsn;
	const struct doc_node *insecure;
	char where[64];

	if (!cl)
		return dt_err_set(err, -ENOENT, "kubeconfig: cluster \"%s\" is not defined", name);
	snprintf(where, sizeof(where), "clusters[%d].cluster", idx);
	if ((rc = kc_str(f, where, cl, "server", &server, err)) ||
	    (rc = kc_str(f, where, cl, "tls-server-name", &tsn, err)))
		return rc;
	if (!server || !server[0])
		return dt_err_set(err, -EINVAL, "kubeconfig %s: %s.server: Required value",
				  f->path, where);
	insecure = doc_get(cl, "insecure-skip-tls-verify");
	cfg->insecure = insecure && insecure->kind == DOC_BOOL && insecure->u.b;
	cfg->server = strdup(server);
	if (tsn && tsn[0])
		cfg->tls_server_name = strdup(tsn);
	if (!cfg->server || (tsn && tsn[0] && !cfg->tls_server_name))
		return dt_err_set(err, -ENOMEM, "out of memory");
	return kc_pem(f, where, cl, "certificate-authority", "certificate-authority-data",
		      &cfg->ca_pem, err);
}

static int kc_user(const struct kc *kc, const char *name, struct kube_config *cfg,
		   struct dt_err *err)
{
	const struct kc_file *f = NULL;
	int idx = -1, rc;
	const struct doc_node *u = kc_entry(kc, "users", name, "user", &f, &idx);
	const struct doc_node *ex;
	const char *token, *token_file;
	char where[64];

	if (!u)
		return dt_err_set(err, -ENOENT, "kubeconfig: user \"%s\" is not defined", name);
	snprintf(where, sizeof(where), "users[%d].user", idx);
	if (doc_get(u, "auth-provider"))
		return dt_err_set(err, -ENOTSUP, "kubeconfig %s: %s.auth-provider: auth providers "
				  "were removed from Kubernetes; use an exec credential plugin",
				  f->path, where);
	if ((rc = kc_pem(f, where, u, "client-certificate", "client-certificate-data",
			 &cfg->cert_pem, err)) ||
	    (rc = kc_pem(f, where, u, "client-key", "client-key-data", &cfg->key_pem, err)) ||
	    (rc = kc_str(f, where, u, "token", &token, err)) ||
	    (rc = kc_str(f, where, u, "tokenFile", &token_file, err)))
		return rc;
	if (!cfg->cert_pem != !cfg->key_pem)
		return dt_err_set(err, -EINVAL, "kubeconfig %s: %s: a client certificate needs "
				  "its key and a key its certificate", f->path, where);
	if (token && token[0] && !(cfg->token = strdup(token)))
		return dt_err_set(err, -ENOMEM, "out of memory");
	if (token_file && token_file[0] && !(cfg->token_file = join_dir(f->dir, token_file)))
		return dt_err_set(err, -ENOMEM, "out of memory");
	ex = doc_get(u, "exec");
	if (ex && ex->kind == DOC_MAP) {
		char exw[80];

		snprintf(exw, sizeof(exw), "%s.exec", where);
		rc = kc_exec(f, exw, ex, &cfg->exec, err);
	}
	return rc;
}

int kube_config_from_kubeconfig(const char *paths, const char *context,
				struct kube_config *cfg, struct dt_err *err)
{
	struct kc kc = { 0 };
	const struct kc_file *f = NULL;
	const struct doc_node *ctx;
	const char *cluster, *user, *ns;
	char home[PATH_MAX];
	struct strbuf origin = STRBUF_INIT;
	int idx, rc;

	memset(cfg, 0, sizeof(*cfg));
	if (!paths || !paths[0])
		paths = getenv("KUBECONFIG");
	if (!paths || !paths[0]) {
		const char *h = getenv("HOME");

		snprintf(home, sizeof(home), "%s/.kube/config", h && h[0] ? h : "");
		paths = home;
	}
	rc = kc_load(&kc, paths, err);
	if (rc)
		goto out;
	if (!context || !context[0]) {
		context = NULL;
		for (size_t i = 0; i < kc.n && !context; i++) {
			const char *cc = doc_str(doc_get(kc.files[i].root, "current-context"));

			if (cc && cc[0])
				context = cc;
		}
		if (!context) {
			rc = dt_err_set(err, -EINVAL, "kubeconfig %s: no current-context (give a "
					"context)", paths);
			goto out;
		}
	}
	ctx = kc_entry(&kc, "contexts", context, "context", &f, &idx);
	if (!ctx) {
		rc = dt_err_set(err, -ENOENT, "kubeconfig %s: context \"%s\" is not defined", paths,
				context);
		goto out;
	}
	cluster = doc_str(doc_get(ctx, "cluster"));
	user = doc_str(doc_get(ctx, "user"));
	ns = doc_str(doc_get(ctx, "namespace"));
	if (!cluster || !cluster[0]) {
		rc = dt_err_set(err, -EINVAL, "kubeconfig %s: contexts[%d].context.cluster: "
				"Required value", f->path, idx);
		goto out;
	}
	rc = kc_cluster(&kc, cluster, cfg, err);
	if (!rc && user && user[0])
		rc = kc_user(&kc, user, cfg, err);
	if (rc)
		goto out;
	cfg->ns = strdup(ns && ns[0] ? ns : "default");
	sb_printf(&origin, "kubeconfig %s (context %s)", paths, context);
	cfg->origin = sb_detach(&origin);
	if (!cfg->ns || !cfg->origin)
		rc = dt_err_set(err, -ENOMEM, "out of memory");
out:
	kc_free(&kc);
	if (rc)
		kube_config_free(cfg);
	return rc;
}

/* ---- in a pod ---- */

int kube_config_in_cluster(const char *dir, struct kube_config *cfg, struct dt_err *err)
{
	const char *host = getenv("KUBERNETES_SERVICE_HOST");
	const char *port = getenv("KUBERNETES_SERVICE_PORT");
	struct strbuf sb = STRBUF_INIT;
	char *ns = NULL;
	int rc;

	memset(cfg, 0, sizeof(*cfg));
	if (!dir)
		dir = getenv("DRATOPO_SERVICEACCOUNT_DIR");
	if (!dir || !dir[0])
		dir = SA_DIR;
	if (!host || !host[0] || !port || !port[0])
		return dt_err_set(err, -ENOENT, "not in a cluster: KUBERNETES_SERVICE_HOST and "
				  "KUBERNETES_SERVICE_PORT must be set");
	sb_printf(&sb, strchr(host, ':') ? "https://[%s]:%s" : "https://%s:%s", host, port);
	cfg->server = sb_detach(&sb);
	sb_printf(&sb, "%s/token", dir);
	cfg->token_file = sb_detach(&sb);
	sb_printf(&sb, "in-cluster (service account %s)", dir);
	cfg->origin = sb_detach(&sb);
	if (!cfg->server || !cfg->token_file || !cfg->origin) {
		rc = dt_err_set(err, -ENOMEM, "out of memory");
		goto fail;
	}
	if (access(cfg->token_file, R_OK) != 0) {
		rc = dt_err_set(err, -errno, "in-cluster: %s: %s", cfg->token_file, strerror(errno));
		goto fail;
	}
	sb_printf(&sb, "%s/ca.crt", dir);
	if (sb_error(&sb)) {
		rc = dt_err_set(err, -ENOMEM, "out of memory");
		goto fail;
	}
	rc = read_small(sb_str(&sb), PEM_MAX, &cfg->ca_pem, err);
	sb_reset(&sb);
	if (rc) {
		dt_err_prefix(err, "in-cluster: ");
		goto fail;
	}
	sb_printf(&sb, "%s/namespace", dir);
	if (!sb_error(&sb) && read_small(sb_str(&sb), 256, &ns, NULL) == 0) {
		ns[strcspn(ns, " \r\n\t")] = '\0';
		if (ns[0])
			cfg->ns = ns, ns = NULL;
	}
	sb_free(&sb);
	free(ns);
	if (!cfg->ns && !(cfg->ns = strdup("default"))) {
		rc = dt_err_set(err, -ENOMEM, "out of memory");
		goto fail;
	}
	return 0;
fail:
	sb_free(&sb);
	kube_config_free(cfg);
	return rc;
}

int kube_config_auto(const char *kubeconfig, const char *context, struct kube_config *cfg,
		     struct dt_err *err)
{
	const char *env = getenv("KUBECONFIG");
	const char *host = getenv("KUBERNETES_SERVICE_HOST");

	if ((kubeconfig && kubeconfig[0]) || (env && env[0]))
		return kube_config_from_kubeconfig(kubeconfig, context, cfg, err);
	if (host && host[0])
		return kube_config_in_cluster(NULL, cfg, err);
	return kube_config_from_kubeconfig(NULL, context, cfg, err);
}
