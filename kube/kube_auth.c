/* kube_auth.c - the credentials a request carries right now: a static
 * token, a token file re-read every minute (service account tokens rotate;
 * the kubelet refreshes them at 80% of their life), an exec plugin's
 * answer kept until its expirationTimestamp, and client certificates.
 * A 401 makes the next request read the file or run the plugin again. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube_internal.h"
#include "obs_log.h"

#define TOKEN_FILE_PERIOD_MS 60000
#define TOKEN_MAX            (64u << 10)
#define EXEC_LEEWAY_MS       10000

int kube_auth_init(struct kube_auth *a, const struct kube_config *cfg, struct dt_err *err)
{
	(void)err;
	memset(a, 0, sizeof(*a));
	pthread_mutex_init(&a->lock, NULL);
	a->cfg = cfg;
	return 0;
}

static void wipe_free(char **s)
{
	if (*s) {
		explicit_bzero(*s, strlen(*s));
		free(*s);
		*s = NULL;
	}
}

void kube_auth_fini(struct kube_auth *a)
{
	wipe_free(&a->file_token);
	wipe_free(&a->exec_token);
	wipe_free(&a->exec_cert);
	wipe_free(&a->exec_key);
	pthread_mutex_destroy(&a->lock);
}

void kube_creds_free(struct kube_creds *c)
{
	wipe_free(&c->token);
	wipe_free(&c->cert_pem);
	wipe_free(&c->key_pem);
}

static int read_token_file(struct kube_auth *a, struct dt_err *err)
{
	char *tok = NULL;
	int rc = kube_read_file(a->cfg->token_file, TOKEN_MAX, &tok, err);
	size_t n;

	if (rc) {
		/* Keep the last good token through a rotation's brief gap. */
		if (a->file_token) {
			obs_log(OBS_WARN, "kube_token_file", "file", a->cfg->token_file,
				"error", err ? err->msg : "unreadable", NULL);
			a->file_read_ms = kube_now_ms();
			return 0;
		}
		return dt_err_prefix(err, "token file: ");
	}
	n = strlen(tok);
	while (n && (tok[n - 1] == '\n' || tok[n - 1] == '\r' || tok[n - 1] == ' '))
		tok[--n] = '\0';
	if (!n) {
		free(tok);
		return dt_err_set(err, -EINVAL, "token file %s is empty", a->cfg->token_file);
	}
	wipe_free(&a->file_token);
	a->file_token = tok;
	a->file_read_ms = kube_now_ms();
	return 0;
}

static int run_exec(struct kube_auth *a, struct dt_err *err)
{
	char *token = NULL, *cert = NULL, *key = NULL;
	int64_t expiry = 0;
	int rc = kube_exec_run(a->cfg->exec, a->cfg->server, a->cfg->ca_pem, &token, &cert, &key,
			       &expiry, err);

	if (rc)
		return rc;
	wipe_free(&a->exec_token);
	wipe_free(&a->exec_cert);
	wipe_free(&a->exec_key);
	a->exec_token = token;
	a->exec_cert = cert;
	a->exec_key = key;
	if (expiry > 0) {
		/* wall-clock expiry, kept on the monotonic clock */
		int64_t left_ms = (expiry - (int64_t)time(NULL)) * 1000;

		a->exec_expiry_ms = kube_now_ms() + left_ms;
	} else {
		a->exec_expiry_ms = INT64_MAX;
	}
	a->exec_valid = true;
	return 0;
}

static int dup_to(char **dst, const char *src)
{
	if (!src)
		return 0;
	*dst = strdup(src);
	return *dst ? 0 : -ENOMEM;
}

int kube_auth_get(struct kube_auth *a, struct kube_creds *out, struct dt_err *err)
{
	const struct kube_config *cfg = a->cfg;
	const char *token = NULL, *cert = cfg->cert_pem, *key = cfg->key_pem;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&a->lock);
	if (cfg->exec) {
		if (!a->exec_valid || kube_now_ms() >= a->exec_expiry_ms - EXEC_LEEWAY_MS)
			rc = run_exec(a, err);
		if (!rc) {
			token = a->exec_token;
			if (a->exec_cert && a->exec_key) {
				cert = a->exec_cert;
				key = a->exec_key;
			}
		}
	} else if (cfg->token) {
		token = cfg->token;
	} else if (cfg->token_file) {
		if (!a->file_read_ms || kube_now_ms() - a->file_read_ms >= TOKEN_FILE_PERIOD_MS)
			rc = read_token_file(a, err);
		token = a->file_token;
	}
	if (!rc && (dup_to(&out->token, token) || dup_to(&out->cert_pem, cert) ||
		    dup_to(&out->key_pem, key)))
		rc = dt_err_set(err, -ENOMEM, "out of memory");
	pthread_mutex_unlock(&a->lock);
	if (rc)
		kube_creds_free(out);
	return rc;
}

bool kube_auth_reset(struct kube_auth *a)
{
	bool changed = false;

	pthread_mutex_lock(&a->lock);
	if (a->cfg->exec) {
		a->exec_valid = false;
		changed = true;
	} else if (!a->cfg->token && a->cfg->token_file) {
		a->file_read_ms = 0;
		changed = true;
	}
	pthread_mutex_unlock(&a->lock);
	return changed;
}
