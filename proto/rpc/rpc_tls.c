/* rpc_tls.c - credentials from PEM files for both sides of the glue.
 *
 * Every file is read and checked with OpenSSL before gRPC sees it (the
 * chain parses, the key parses and belongs to the first certificate, the CA
 * bundle holds a certificate), so a wrong path or a mismatched key is an
 * error that names the file at start or at reload, not a handshake that
 * fails later for every peer. The server side hands gRPC a config fetcher
 * instead of fixed PEMs: gRPC asks it at each new handshake, and it answers
 * with a new configuration only after rpc_tls_source_reload checked one, so
 * a reload (SIGHUP) never drops the connections already open. */
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpc_internal.h"

#define PEM_MAX_BYTES (1 << 20)     /* a certificate bundle, not a data file */

struct pem_set {
	char *cert, *key, *ca;
};

struct rpc_tls_source {
	pthread_mutex_t lock;
	char *cert_path, *key_path, *ca_path;
	/* Checked and waiting for the next handshake; gRPC takes ownership. */
	grpc_ssl_server_certificate_config *pending;
};

static int read_pem(const char *what, const char *path, char **out, struct dt_err *err)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t n;
	int rc = 0;

	if (!f)
		return dt_err_set(err, -errno, "%s %s: %s", what, path, strerror(errno));
	buf = malloc(PEM_MAX_BYTES + 1);
	if (!buf) {
		rc = dt_err_set(err, -ENOMEM, "%s %s: out of memory", what, path);
		goto out;
	}
	n = fread(buf, 1, PEM_MAX_BYTES + 1, f);
	if (ferror(f))
		rc = dt_err_set(err, -EIO, "%s %s: read error", what, path);
	else if (n > PEM_MAX_BYTES)
		rc = dt_err_set(err, -EFBIG, "%s %s: larger than %d bytes", what, path, PEM_MAX_BYTES);
	if (rc)
		goto out;
	buf[n] = '\0';
	*out = buf;
	buf = NULL;
out:
	free(buf);
	fclose(f);
	return rc;
}

/* How many certificates pem holds; the first is kept in *first if asked. */
static int count_certs(const char *pem, X509 **first)
{
	BIO *b = BIO_new_mem_buf(pem, -1);
	X509 *x;
	int n = 0;

	if (!b)
		return 0;
	while ((x = PEM_read_bio_X509(b, NULL, NULL, NULL))) {
		if (n == 0 && first)
			*first = x;
		else
			X509_free(x);
		n++;
	}
	ERR_clear_error();          /* the end of the bundle reads as an error */
	BIO_free(b);
	return n;
}

int rpc_pem_no_passphrase(char *buf, int size, int rwflag, void *u)
{
	(void)buf, (void)size, (void)rwflag, (void)u;
	return -1;
}

static int check_pems(const struct pem_set *p, const struct rpc_tls *tls, struct dt_err *err)
{
	X509 *leaf = NULL;
	EVP_PKEY *key = NULL;
	BIO *b = NULL;
	int rc = 0;

	if (count_certs(p->cert, &leaf) == 0) {
		rc = dt_err_set(err, -EINVAL, "certificate %s: no PEM certificate in it", tls->cert);
		goto out;
	}
	b = BIO_new_mem_buf(p->key, -1);
	key = b ? PEM_read_bio_PrivateKey(b, NULL, rpc_pem_no_passphrase, NULL) : NULL;
	ERR_clear_error();
	if (!key) {
		rc = dt_err_set(err, -EINVAL, "key %s: no unencrypted PEM private key in it", tls->key);
		goto out;
	}
	if (X509_check_private_key(leaf, key) != 1) {
		ERR_clear_error();
		rc = dt_err_set(err, -EINVAL, "key %s does not belong to certificate %s", tls->key, tls->cert);
		goto out;
	}
	if (count_certs(p->ca, NULL) == 0)
		rc = dt_err_set(err, -EINVAL, "CA bundle %s: no PEM certificate in it", tls->ca);
out:
	EVP_PKEY_free(key);
	BIO_free(b);
	X509_free(leaf);
	return rc;
}

static void pem_set_free(struct pem_set *p)
{
	free(p->cert);
	free(p->key);
	free(p->ca);
	memset(p, 0, sizeof(*p));
}

static int pem_set_load(const struct rpc_tls *tls, struct pem_set *p, struct dt_err *err)
{
	int rc;

	memset(p, 0, sizeof(*p));
	rc = read_pem("certificate", tls->cert, &p->cert, err);
	if (!rc)
		rc = read_pem("key", tls->key, &p->key, err);
	if (!rc)
		rc = read_pem("CA bundle", tls->ca, &p->ca, err);
	if (!rc)
		rc = check_pems(p, tls, err);
	if (rc)
		pem_set_free(p);
	return rc;
}

int rpc_tls_files_check(const struct rpc_tls *tls, struct dt_err *err)
{
	struct pem_set p;
	int rc = rpc_tls_check(tls, err);

	if (rc || tls->insecure)
		return rc;
	rc = pem_set_load(tls, &p, err);
	if (!rc)
		pem_set_free(&p);
	return rc;
}

grpc_channel_credentials *rpc_channel_creds(const struct rpc_tls *tls, struct dt_err *err)
{
	grpc_ssl_pem_key_cert_pair pair;
	grpc_channel_credentials *creds;
	struct pem_set p;

	if (rpc_tls_check(tls, err))
		return NULL;
	if (tls->insecure)
		return grpc_insecure_credentials_create();
	if (pem_set_load(tls, &p, err))
		return NULL;
	pair.private_key = p.key;
	pair.cert_chain = p.cert;
	creds = grpc_ssl_credentials_create(p.ca, &pair, NULL, NULL);   /* copies the PEMs */
	pem_set_free(&p);
	if (!creds)
		dt_err_set(err, -EINVAL, "gRPC refused the TLS files %s, %s, %s", tls->cert, tls->key, tls->ca);
	return creds;
}

static grpc_ssl_certificate_config_reload_status fetch_config(void *user,
							       grpc_ssl_server_certificate_config **config)
{
	struct rpc_tls_source *src = user;
	grpc_ssl_certificate_config_reload_status st = GRPC_SSL_CERTIFICATE_CONFIG_RELOAD_UNCHANGED;

	pthread_mutex_lock(&src->lock);
	if (src->pending) {
		*config = src->pending;
		src->pending = NULL;
		st = GRPC_SSL_CERTIFICATE_CONFIG_RELOAD_NEW;
	}
	pthread_mutex_unlock(&src->lock);
	return st;
}

int rpc_tls_source_reload(struct rpc_tls_source *src, struct dt_err *err)
{
	struct rpc_tls tls = { .cert = src->cert_path, .key = src->key_path, .ca = src->ca_path };
	grpc_ssl_server_certificate_config *cfg, *old;
	grpc_ssl_pem_key_cert_pair pair;
	struct pem_set p;
	int rc;

	rc = pem_set_load(&tls, &p, err);
	if (rc)
		return rc;
	pair.private_key = p.key;
	pair.cert_chain = p.cert;
	cfg = grpc_ssl_server_certificate_config_create(p.ca, &pair, 1);   /* copies */
	pem_set_free(&p);
	if (!cfg)
		return dt_err_set(err, -ENOMEM, "TLS files %s: cannot build a configuration", src->cert_path);
	pthread_mutex_lock(&src->lock);
	old = src->pending;         /* two reloads before any handshake: the later wins */
	src->pending = cfg;
	pthread_mutex_unlock(&src->lock);
	if (old)
		grpc_ssl_server_certificate_config_destroy(old);
	return 0;
}

int rpc_tls_source_open(const struct rpc_tls *tls, struct rpc_tls_source **out,
			struct dt_err *err)
{
	struct rpc_tls_source *src;
	int rc;

	*out = NULL;
	rc = rpc_tls_check(tls, err);
	if (rc)
		return rc;
	if (tls->insecure)
		return dt_err_set(err, -EINVAL, "an insecure server has no TLS files");
	src = calloc(1, sizeof(*src));
	if (!src)
		return dt_err_set(err, -ENOMEM, "out of memory");
	pthread_mutex_init(&src->lock, NULL);
	src->cert_path = strdup(tls->cert);
	src->key_path = strdup(tls->key);
	src->ca_path = strdup(tls->ca);
	if (!src->cert_path || !src->key_path || !src->ca_path)
		rc = dt_err_set(err, -ENOMEM, "out of memory");
	else
		rc = rpc_tls_source_reload(src, err);
	if (rc) {
		rpc_tls_source_free(src);
		return rc;
	}
	*out = src;
	return 0;
}

grpc_server_credentials *rpc_tls_source_creds(struct rpc_tls_source *src)
{
	grpc_ssl_server_credentials_options *o;

	o = grpc_ssl_server_credentials_create_options_using_config_fetcher(
		GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY, fetch_config, src);
	return o ? grpc_ssl_server_credentials_create_with_options(o) : NULL;
}

void rpc_tls_source_free(struct rpc_tls_source *src)
{
	if (!src)
		return;
	if (src->pending)
		grpc_ssl_server_certificate_config_destroy(src->pending);
	pthread_mutex_destroy(&src->lock);
	free(src->cert_path);
	free(src->key_path);
	free(src->ca_path);
	free(src);
}
