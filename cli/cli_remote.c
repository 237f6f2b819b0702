/* cli_remote.c - connection options and one call to the coordinator
 * (cli_remote.h). gRPC's own log lines (a failed handshake, ...) are kept
 * off stderr unless GRPC_VERBOSITY is set: the call's error already says
 * what went wrong, in the CLI's words (rpc_tlsdiag.h).
 *
 * TLS settings come from the flags, else the environment ($DRATOPO_TLS_*,
 * $DRATOPO_INSECURE), else a config file ($DRATOPO_CONFIG, default
 * $XDG_CONFIG_HOME/dratopo/config.yaml or ~/.config/dratopo/config.yaml),
 * so that a remote command does not need four flags each time. The first
 * of those that says anything about TLS decides between plaintext and
 * mTLS (--insecure on the command line is never mixed with files from the
 * environment); in mTLS each file comes from the first that names it. */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_remote.h"
#include "doc.h"
#include "rpc_client.h"

/* ---- where the TLS settings come from ---- */

/* One source's settings; a config file's strings are its own. */
struct tls_source {
	const char *cert, *key, *ca, *server_name;
	bool insecure;
	char *owned[4];
};

static bool says_tls(const struct tls_source *s)
{
	return s->insecure || s->cert || s->key || s->ca || s->server_name;
}

static void source_free(struct tls_source *s)
{
	for (int i = 0; i < 4; i++)
		free(s->owned[i]);
}

static int env_source(struct tls_source *s, struct dt_err *err)
{
	const char *ins = getenv("DRATOPO_INSECURE");
	const char *const *v;
	static const char *const yes[] = { "1", "true", "yes", NULL };
	static const char *const no[] = { "", "0", "false", "no", NULL };

	s->cert = getenv("DRATOPO_TLS_CERT");
	s->key = getenv("DRATOPO_TLS_KEY");
	s->ca = getenv("DRATOPO_TLS_CA");
	s->server_name = getenv("DRATOPO_TLS_SERVER_NAME");
	if (!ins)
		return 0;
	for (v = yes; *v; v++)
		if (!strcmp(ins, *v))
			s->insecure = true;
	for (v = no; *v && !s->insecure; v++)
		if (!strcmp(ins, *v))
			return 0;
	return s->insecure ? 0 : dt_err_set(err, -EINVAL, "$DRATOPO_INSECURE=\"%s\": "
					    "expected true or false", ins);
}

/* The config file's path; *explicit when $DRATOPO_CONFIG named it (then
 * it must exist). */
static void config_path(char *buf, size_t len, bool *explicit)
{
	const char *p = getenv("DRATOPO_CONFIG"), *xdg = getenv("XDG_CONFIG_HOME");
	const char *home = getenv("HOME");

	*explicit = p && *p;
	buf[0] = '\0';
	if (*explicit)
		snprintf(buf, len, "%s", p);
	else if (xdg && *xdg)
		snprintf(buf, len, "%s/dratopo/config.yaml", xdg);
	else if (home && *home)
		snprintf(buf, len, "%s/.config/dratopo/config.yaml", home);
}

/* A path from the file, relative to the file's directory (as kubeconfig's). */
static int file_path(const char *file, const char *value, char **out)
{
	char *copy;

	if (value[0] == '/') {
		*out = strdup(value);
		return *out ? 0 : -ENOMEM;
	}
	if (!(copy = strdup(file)))
		return -ENOMEM;
	*out = NULL;
	if (asprintf(out, "%s/%s", dirname(copy), value) < 0)
		*out = NULL;
	free(copy);
	return *out ? 0 : -ENOMEM;
}

static const struct {
	const char *key;
	int slot;                       /* owned[] and the field; -1: insecure */
	bool path;
} config_keys[] = {
	{ "tlsCert", 0, true }, { "tlsKey", 1, true }, { "tlsCA", 2, true },
	{ "tlsServerName", 3, false }, { "insecure", -1, false },
};

static int config_pair(const char *file, const struct doc_pair *p, struct tls_source *s,
		       struct dt_err *err)
{
	const char *key = p->key->text, *v = doc_str(p->value);
	size_t k, n = sizeof(config_keys) / sizeof(config_keys[0]);
	int slot;

	for (k = 0; k < n && strcmp(config_keys[k].key, key); k++)
		;
	if (k == n)
		return dt_err_set(err, -EINVAL, "%s:%d: unknown key \"%s\" (tlsCert, tlsKey, tlsCA, "
				  "tlsServerName, insecure)", file, p->key->line, key);
	slot = config_keys[k].slot;
	if (slot < 0) {
		if (p->value->kind != DOC_BOOL)
			return dt_err_set(err, -EINVAL, "%s:%d: insecure: expected true or false",
					  file, p->value->line);
		s->insecure = p->value->u.b;
		return 0;
	}
	if (!v || !*v)
		return dt_err_set(err, -EINVAL, "%s:%d: %s: expected a %s", file, p->value->line, key,
				  config_keys[k].path ? "file name" : "name");
	free(s->owned[slot]);
	if (config_keys[k].path ? file_path(file, v, &s->owned[slot])
				: !(s->owned[slot] = strdup(v)))
		return dt_err_set(err, -ENOMEM, "out of memory");
	return 0;
}

static int file_source(struct tls_source *s, char *path, size_t len, struct dt_err *err)
{
	struct doc_stream *st = NULL;
	const struct doc_node *root;
	bool explicit;
	int rc;

	config_path(path, len, &explicit);
	if (!path[0] || (!explicit && access(path, F_OK) != 0))
		return 0;
	if ((rc = doc_load_file(path, &st, err)) < 0)
		return explicit ? dt_err_prefix(err, "$DRATOPO_CONFIG: ") : rc;
	if (st->n_docs > 1)
		rc = dt_err_set(err, -EINVAL, "%s: one document expected, not %zu", path, st->n_docs);
	else if (st->n_docs && st->docs[0].error)
		rc = dt_err_set(err, -EINVAL, "%s: %s", path, st->docs[0].error);
	root = !rc && st->n_docs ? st->docs[0].root : NULL;
	if (root && root->kind != DOC_MAP)
		rc = dt_err_set(err, -EINVAL, "%s:%d: expected a map of settings, not a %s", path,
				root->line, doc_kind_name(root->kind));
	for (size_t i = 0; !rc && root && i < root->u.map.n; i++)
		rc = config_pair(path, &root->u.map.pairs[i], s, err);
	doc_stream_free(st);
	s->cert = s->owned[0];
	s->key = s->owned[1];
	s->ca = s->owned[2];
	s->server_name = s->owned[3];
	return rc;
}

/* The settings of the first source that says anything about TLS decide
 * the mode; in mTLS each field comes from the first source giving it. */
static void merge(const struct tls_source *src, size_t n, struct rpc_tls *out)
{
	size_t first = 0;

	*out = (struct rpc_tls){ 0 };
	while (first < n && !says_tls(&src[first]))
		first++;
	if (first == n)
		return;
	if (src[first].insecure) {      /* what the same source says besides is a contradiction */
		*out = (struct rpc_tls){ src[first].cert, src[first].key, src[first].ca, true,
					 src[first].server_name };
		return;
	}
	for (size_t i = n; i-- > first;) {
		if (src[i].cert)
			out->cert = src[i].cert;
		if (src[i].key)
			out->key = src[i].key;
		if (src[i].ca)
			out->ca = src[i].ca;
		if (src[i].server_name)
			out->server_name = src[i].server_name;
	}
}

static void grpc_log_quiet(const char *severity, const char *file, int line, const char *message)
{
	(void)severity, (void)file, (void)line, (void)message;
}

static void grpc_log_shown(const char *severity, const char *file, int line, const char *message)
{
	fprintf(stderr, "dratopo: grpc %s %s:%d: %s\n", severity, file, line, message);
}

int cli_remote_call(const struct cli_remote *r, const char *cmd, const char *method,
		    const ProtobufCMessage *req, const ProtobufCMessageDescriptor *resp_type,
		    int64_t deadline_ms, ProtobufCMessage **resp)
{
	struct tls_source src[3] = { { r->tls.cert, r->tls.key, r->tls.ca, r->tls.server_name,
				       r->tls.insecure, { NULL } } };
	struct rpc_channel *ch = NULL;
	struct rpc_tls tls;
	struct dt_err err = { 0 };
	char config[4096];
	int rc = env_source(&src[1], &err);

	if (!rc)
		rc = file_source(&src[2], config, sizeof(config), &err);
	merge(src, 3, &tls);
	if (!rc && !says_tls(&src[0]) && !says_tls(&src[1]) && !says_tls(&src[2]))
		rc = dt_err_set(&err, -EINVAL, "no TLS settings: give --tls-cert, --tls-key and "
				"--tls-ca (or $DRATOPO_TLS_CERT, _KEY and _CA, or tlsCert, tlsKey and "
				"tlsCA in %s), or --insecure", config[0] ? config : "$DRATOPO_CONFIG");
	if (!rc && (rc = rpc_tls_check(&tls, &err)) && (says_tls(&src[1]) || says_tls(&src[2]))) {
		char msg[sizeof(err.msg)];

		snprintf(msg, sizeof(msg), "%s (settings from the flags, $DRATOPO_TLS_* and %s)",
			 err.msg, says_tls(&src[2]) ? config : "the config file");
		dt_err_set(&err, rc, "%s", msg);
	}
	if (rc) {
		fprintf(stderr, "dratopo %s: %s\n", cmd, err.msg);
		source_free(&src[2]);
		return CLI_EXIT_USAGE;
	}
	rpc_set_log(getenv("GRPC_VERBOSITY") ? grpc_log_shown : grpc_log_quiet);
	rc = rpc_channel_open(r->addr, &tls, &ch, &err);
	if (!rc)
		rc = rpc_call(ch, method, req, resp_type, deadline_ms, resp, NULL, &err);
	rpc_channel_close(ch);
	source_free(&src[2]);
	if (rc) {
		fprintf(stderr, "dratopo %s: %s\n", cmd, err.msg);
		return CLI_EXIT_FAIL;
	}
	return 0;
}
