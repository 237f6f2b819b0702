/* kube_exec.c - exec credential plugins (client.authentication.k8s.io):
 * run the kubeconfig's command with its arguments and environment plus
 * KUBERNETES_EXEC_INFO, standard input closed (never interactive), and
 * read the ExecCredential it prints: a token or a client certificate, and
 * when it expires. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kube_internal.h"
#include "timestamp.h"

#define EXEC_OUT_MAX    (1u << 20)
#define EXEC_TIMEOUT_MS 60000

extern char **environ;

static void b64_encode(struct strbuf *sb, const char *s, size_t n)
{
	static const char tab[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned char)s[i] << 16;
		size_t left = n - i;

		if (left > 1)
			v |= (unsigned char)s[i + 1] << 8;
		if (left > 2)
			v |= (unsigned char)s[i + 2];
		sb_putc(sb, tab[(v >> 18) & 63]);
		sb_putc(sb, tab[(v >> 12) & 63]);
		sb_putc(sb, left > 1 ? tab[(v >> 6) & 63] : '=');
		sb_putc(sb, left > 2 ? tab[v & 63] : '=');
	}
}

/* KUBERNETES_EXEC_INFO=<ExecCredential with spec> */
static char *exec_info(const struct kube_exec_config *ex, const char *server, const char *ca)
{
	json_object *o = json_object_new_object(), *spec = json_object_new_object();
	struct strbuf sb = STRBUF_INIT;

	json_object_object_add(o, "apiVersion", json_object_new_string(ex->api_version));
	json_object_object_add(o, "kind", json_object_new_string("ExecCredential"));
	json_object_object_add(spec, "interactive", json_object_new_boolean(0));
	if (ex->provide_cluster_info) {
		json_object *cl = json_object_new_object();

		json_object_object_add(cl, "server", json_object_new_string(server));
		if (ca) {
			struct strbuf b = STRBUF_INIT;

			b64_encode(&b, ca, strlen(ca));
			json_object_object_add(cl, "certificate-authority-data",
					       json_object_new_string(sb_str(&b)));
			sb_free(&b);
		}
		json_object_object_add(spec, "cluster", cl);
	}
	json_object_object_add(o, "spec", spec);
	sb_printf(&sb, "KUBERNETES_EXEC_INFO=%s",
		  json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	return sb_detach(&sb);
}

static char **child_env(const struct kube_exec_config *ex, char *info)
{
	size_t n = 0, m = 0, k = 0;
	char **env;

	while (environ && environ[n])
		n++;
	while (ex->env && ex->env[m])
		m++;
	env = calloc(n + m + 2, sizeof(*env));
	if (!env)
		return NULL;
	/* the plugin's own settings override inherited ones of the same name */
	for (size_t i = 0; i < n; i++) {
		size_t len = strcspn(environ[i], "=");
		bool overridden = !strncmp(environ[i], "KUBERNETES_EXEC_INFO=", 21);

		for (size_t j = 0; j < m && !overridden; j++)
			overridden = !strncmp(ex->env[j], environ[i], len) && ex->env[j][len] == '=';
		if (!overridden)
			env[k++] = environ[i];
	}
	for (size_t j = 0; j < m; j++)
		env[k++] = ex->env[j];
	env[k] = info;
	return env;
}

/* Run the plugin; its standard output into out. */
static int run(const struct kube_exec_config *ex, char **env, struct strbuf *out,
	       struct dt_err *err)
{
	int fds[2], status = 0, rc = 0;
	int64_t deadline = kube_now_ms() + EXEC_TIMEOUT_MS;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC) != 0)
		return dt_err_set(err, -errno, "exec plugin %s: pipe: %s", ex->command,
				  strerror(errno));
	pid = fork();
	if (pid < 0) {
		rc = dt_err_set(err, -errno, "exec plugin %s: fork: %s", ex->command, strerror(errno));
		close(fds[0]);
		close(fds[1]);
		return rc;
	}
	if (pid == 0) {
		char *none[] = { ex->command, NULL };
		int nul = open("/dev/null", O_RDONLY);

		if (nul >= 0)
			dup2(nul, 0);
		dup2(fds[1], 1);
		/* execvpe searches PATH for a bare command name */
		execvpe(ex->command, ex->args ? ex->args : none, env);
		_exit(127);
	}
	close(fds[1]);
	for (;;) {
		struct pollfd p = { fds[0], POLLIN, 0 };
		int64_t left = deadline - kube_now_ms();
		char buf[4096];
		ssize_t n;

		if (left <= 0) {
			kill(pid, SIGKILL);
			rc = dt_err_set(err, -ETIMEDOUT, "exec plugin %s: no answer within %d s",
					ex->command, EXEC_TIMEOUT_MS / 1000);
			break;
		}
		if (poll(&p, 1, (int)left) < 0 && errno != EINTR) {
			rc = dt_err_set(err, -errno, "exec plugin %s: %s", ex->command, strerror(errno));
			kill(pid, SIGKILL);
			break;
		}
		n = read(fds[0], buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (out->len + (size_t)n > EXEC_OUT_MAX) {
			kill(pid, SIGKILL);
			rc = dt_err_set(err, -E2BIG, "exec plugin %s: more than %u KiB of output",
					ex->command, EXEC_OUT_MAX >> 10);
			break;
		}
		sb_append(out, buf, (size_t)n);
	}
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (rc)
		return rc;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127 && !out->len)
		return dt_err_set(err, -ENOENT, "exec plugin %s: not found%s%s", ex->command,
				  ex->install_hint ? ": " : "",
				  ex->install_hint ? ex->install_hint : "");
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return dt_err_set(err, -EIO, "exec plugin %s: exit status %d", ex->command,
				  WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	return sb_error(out) ? dt_err_set(err, -ENOMEM, "out of memory") : 0;
}

static int parse_expiry(const char *s, int64_t *out, struct dt_err *err)
{
	struct timestamp t;

	if (timestamp_parse(s, strlen(s), &t, err))
		return -EINVAL;
	*out = timestamp_unix(&t);
	return 0;
}

static int dup_field(json_object *status, const char *key, char **out)
{
	const char *v = kube_json_str(status, key, NULL);

	*out = NULL;
	if (!v || !v[0])
		return 0;
	*out = strdup(v);
	return *out ? 0 : -ENOMEM;
}

int kube_exec_run(const struct kube_exec_config *ex, const char *server, const char *ca_pem,
		  char **token, char **cert, char **key, int64_t *expiry_unix_s,
		  struct dt_err *err)
{
	struct strbuf out = STRBUF_INIT;
	char *info = exec_info(ex, server, ca_pem);
	char **env = info ? child_env(ex, info) : NULL;
	json_object *cred = NULL, *status;
	const char *kind, *api, *exp;
	int rc;

	*token = *cert = *key = NULL;
	*expiry_unix_s = 0;
	if (!env) {
		rc = dt_err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	rc = run(ex, env, &out, err);
	if (rc)
		goto out;
	cred = json_tokener_parse(sb_str(&out));
	kind = kube_json_str(cred, "kind", NULL);
	api = kube_json_str(cred, "apiVersion", NULL);
	status = kube_json_get(cred, "status", NULL);
	if (!cred || !kind || strcmp(kind, "ExecCredential") || !status) {
		rc = dt_err_set(err, -EPROTO, "exec plugin %s: the output is no ExecCredential "
				"with a status", ex->command);
		goto out;
	}
	if (!api || strcmp(api, ex->api_version)) {
		rc = dt_err_set(err, -EPROTO, "exec plugin %s: answered apiVersion \"%s\", the "
				"kubeconfig asked for \"%s\"", ex->command, api ? api : "",
				ex->api_version);
		goto out;
	}
	if (dup_field(status, "token", token) || dup_field(status, "clientCertificateData", cert) ||
	    dup_field(status, "clientKeyData", key)) {
		rc = dt_err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	if (!*token && !(*cert && *key)) {
		rc = dt_err_set(err, -EPROTO, "exec plugin %s: the ExecCredential has neither a "
				"token nor a client certificate and key", ex->command);
		goto out;
	}
	exp = kube_json_str(status, "expirationTimestamp", NULL);
	if (exp && parse_expiry(exp, expiry_unix_s, err)) {
		rc = dt_err_prefix(err, "exec plugin %s: status.expirationTimestamp: ",
				   ex->command);
		goto out;
	}
out:
	if (rc) {
		free(*token);
		free(*cert);
		free(*key);
		*token = *cert = *key = NULL;
	}
	if (out.buf)
		explicit_bzero(out.buf, out.cap);
	sb_free(&out);
	json_object_put(cred);
	free(env);
	free(info);
	return rc;
}
