/* kube_client.c - the request engine: one libcurl easy handle per request
 * in flight (idle ones pooled, so connections are reused), TLS and
 * credentials from the configuration, retries with backoff, the API's
 * Status turned into a message that names the verb and the resource, and
 * the typed calls (get, create, update, apply, merge patch, delete, list). */
#include <curl/curl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hash.h"
#include "kube_internal.h"
#include "obs_log.h"

#define POOL_MAX          8
#define BODY_MAX          (512u << 20)  /* a list page or object answer */
#define WARNINGS_MAX      256           /* distinct Warning headers remembered */
#define RETRY_AFTER_MAX_S 60

struct kube_client {
	struct kube_config cfg;         /* deep copy */
	struct kube_auth auth;
	char *user_agent, *field_manager;
	int max_retries;
	long timeout_ms;
	double backoff_base_s, backoff_max_s;
	char *base_url;                 /* server, host swapped for tls-server-name */
	struct curl_slist *connect_to;  /* how to reach that name, or NULL */
	pthread_mutex_t lock;           /* pool and warnings */
	CURL *pool[POOL_MAX];
	size_t n_pool;
	uint64_t warnings[WARNINGS_MAX];        /* hashes of logged Warning texts */
	size_t n_warnings;
	_Atomic(const struct kube_fence *) fence;   /* writes only through it; NULL none */
};


/* ---- time ---- */

int64_t kube_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int kube_sleep_ms(int64_t ms, const atomic_bool *cancel)
{
	int64_t end = kube_now_ms() + ms;

	for (;;) {
		int64_t left = end - kube_now_ms();
		struct timespec ts;

		if (cancel && atomic_load(cancel))
			return KUBE_ECANCELED;
		if (left <= 0)
			return 0;
		if (left > 50)
			left = 50;
		ts.tv_sec = 0;
		ts.tv_nsec = (long)left * 1000000L;
		nanosleep(&ts, NULL);
	}
}

static double jitter(void)
{
	static _Thread_local unsigned seed;

	if (!seed)
		seed = (unsigned)kube_now_ms() ^ (unsigned)(uintptr_t)&seed;
	return rand_r(&seed) / ((double)RAND_MAX + 1.0);
}

int64_t kube_backoff_ms(double base_s, double max_s, unsigned attempt)
{
	double s = base_s;

	for (unsigned i = 0; i < attempt && s < max_s; i++)
		s *= 2;
	if (s > max_s)
		s = max_s;
	return (int64_t)(s * (0.5 + jitter()) * 1000.0);
}

/* ---- errors ---- */

int kube_code_for_status(int http_status, const char *reason)
{
	if (http_status >= 200 && http_status < 300)
		return 0;
	switch (http_status) {
	case 400: case 422: return KUBE_EINVALID;
	case 401: return KUBE_EUNAUTHORIZED;
	case 403: return KUBE_EFORBIDDEN;
	case 404: return KUBE_ENOTFOUND;
	case 409:
		return reason && !strcmp(reason, "AlreadyExists") ? KUBE_EEXISTS : KUBE_ECONFLICT;
	case 410: return KUBE_EEXPIRED;
	case 429: return KUBE_ETHROTTLED;
	case 504: return KUBE_ETIMEDOUT;
	}
	if (http_status >= 500)
		return KUBE_EUNAVAILABLE;
	return KUBE_EPROTO;
}

static json_object *parse_json(const char *buf, size_t len)
{
	struct json_tokener *tok = json_tokener_new_ex(DOC_MAX_DEPTH);
	json_object *o;

	if (!tok)
		return NULL;
	o = json_tokener_parse_ex(tok, buf, (int)len);
	if (o && json_tokener_get_parse_end(tok) < len) {
		/* trailing bytes other than white space make it no JSON value */
		for (size_t i = json_tokener_get_parse_end(tok); i < len; i++)
			if (buf[i] != ' ' && buf[i] != '\n' && buf[i] != '\r' && buf[i] != '\t') {
				json_object_put(o);
				o = NULL;
				break;
			}
	}
	json_tokener_free(tok);
	return o;
}

static const char *status_text(long status)
{
	switch (status) {
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 409: return "Conflict";
	case 410: return "Gone";
	case 415: return "Unsupported Media Type";
	case 422: return "Unprocessable Entity";
	case 429: return "Too Many Requests";
	case 500: return "Internal Server Error";
	case 502: return "Bad Gateway";
	case 503: return "Service Unavailable";
	case 504: return "Gateway Timeout";
	}
	return "";
}

int kube_status_error(struct dt_err *err, const char *what, long status, const char *body,
		      size_t len)
{
	json_object *o = body && len ? parse_json(body, len) : NULL;
	const char *msg = NULL, *reason = NULL;
	int code;

	if (o && json_object_is_type(o, json_type_object)) {
		msg = kube_json_str(o, "message", NULL);
		reason = kube_json_str(o, "reason", NULL);
	}
	code = kube_code_for_status((int)status, reason);
	if (msg && msg[0])
		dt_err_set(err, code, "%s: %s (%ld %s)", what, msg, status,
			   reason && reason[0] ? reason : status_text(status));
	else if (len && !o)
		dt_err_set(err, code, "%s: %.*s (%ld %s)", what, (int)(len > 300 ? 300 : len), body,
			   status, status_text(status));
	else
		dt_err_set(err, code, "%s: the API server answered %ld %s", what, status,
			   status_text(status));
	json_object_put(o);
	return code;
}

/* ---- the client ---- */

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc;

static void curl_init(void)
{
	curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* "https://host:port/prefix" with host replaced by name; *to gets the
 * CONNECT_TO entry that sends connections for name to the real host. */
static int swap_host(const char *server, const char *name, char **url, struct curl_slist **to)
{
	const char *p = strstr(server, "://"), *host, *end, *port_s;
	char entry[600], port[16] = "443";
	struct strbuf sb = STRBUF_INIT;
	size_t hlen;

	if (!p)
		return -EINVAL;
	if (!strncmp(server, "http://", 7))
		strcpy(port, "80");
	host = p + 3;
	end = host + strcspn(host, "/");
	if (*host == '[') {
		const char *rb = memchr(host, ']', (size_t)(end - host));

		if (!rb)
			return -EINVAL;
		port_s = rb + 1 < end && rb[1] == ':' ? rb + 2 : NULL;
		hlen = (size_t)(rb + 1 - host);
	} else {
		const char *colon = memchr(host, ':', (size_t)(end - host));

		port_s = colon ? colon + 1 : NULL;
		hlen = (size_t)((colon ? colon : end) - host);
	}
	if (port_s)
		snprintf(port, sizeof(port), "%.*s", (int)(end - port_s), port_s);
	snprintf(entry, sizeof(entry), "%s:%s:%.*s:%s", name, port, (int)hlen, host, port);
	*to = curl_slist_append(NULL, entry);
	sb_append(&sb, server, (size_t)(host - server));
	sb_puts(&sb, name);
	sb_putc(&sb, ':');
	sb_puts(&sb, port);
	sb_puts(&sb, end);
	*url = sb_detach(&sb);
	return *url && *to ? 0 : -ENOMEM;
}

int kube_client_new(const struct kube_config *cfg, const struct kube_client_opts *opts,
		    struct kube_client **out, struct dt_err *err)
{
	struct kube_client_opts none = { 0 };
	struct kube_client *c;
	size_t n;
	int rc;

	*out = NULL;
	if (!opts)
		opts = &none;
	pthread_once(&curl_once, curl_init);
	if (curl_init_rc != CURLE_OK)
		return dt_err_set(err, -EIO, "libcurl: %s", curl_easy_strerror(curl_init_rc));
	if (!cfg->server || !cfg->server[0])
		return dt_err_set(err, -EINVAL, "%s: no server", cfg->origin ? cfg->origin : "kube");
	if (strncmp(cfg->server, "https://", 8) && strncmp(cfg->server, "http://", 7))
		return dt_err_set(err, -EINVAL, "%s: server \"%s\" is no http(s) URL",
				  cfg->origin ? cfg->origin : "kube", cfg->server);
	c = calloc(1, sizeof(*c));
	if (!c)
		return dt_err_set(err, -ENOMEM, "out of memory");
	pthread_mutex_init(&c->lock, NULL);
	rc = kube_config_copy(&c->cfg, cfg, err);
	if (rc)
		goto fail;
	n = strlen(c->cfg.server);
	while (n > 8 && c->cfg.server[n - 1] == '/')
		c->cfg.server[--n] = '\0';
	rc = kube_auth_init(&c->auth, &c->cfg, err);
	if (rc)
		goto fail;
	c->user_agent = strdup(opts->user_agent ? opts->user_agent : "dratopo/" DRATOPO_VERSION);
	c->field_manager = strdup(opts->field_manager ? opts->field_manager : "dratopo");
	c->max_retries = opts->max_retries > 0 ? opts->max_retries :
			 opts->max_retries < 0 ? 0 : 5;
	c->timeout_ms = opts->timeout_ms > 0 ? opts->timeout_ms : 30000;
	c->backoff_base_s = opts->backoff_base_s > 0 ? opts->backoff_base_s : 0.5;
	c->backoff_max_s = opts->backoff_max_s > 0 ? opts->backoff_max_s : 30;
	if (c->cfg.tls_server_name && c->cfg.tls_server_name[0])
		rc = swap_host(c->cfg.server, c->cfg.tls_server_name, &c->base_url, &c->connect_to);
	else
		rc = (c->base_url = strdup(c->cfg.server)) ? 0 : -ENOMEM;
	if (rc || !c->user_agent || !c->field_manager) {
		rc = dt_err_set(err, rc == -EINVAL ? rc : -ENOMEM, "%s: cannot use server %s",
				c->cfg.origin, c->cfg.server);
		goto fail;
	}
	*out = c;
	return 0;
fail:
	kube_client_free(c);
	return rc;
}

void kube_client_free(struct kube_client *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n_pool; i++)
		curl_easy_cleanup(c->pool[i]);
	kube_auth_fini(&c->auth);
	kube_config_free(&c->cfg);
	curl_slist_free_all(c->connect_to);
	free(c->base_url);
	free(c->user_agent);
	free(c->field_manager);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

const char *kube_client_namespace(const struct kube_client *c)
{
	return c->cfg.ns ? c->cfg.ns : "default";
}

const char *kube_client_server(const struct kube_client *c)
{
	return c->cfg.server;
}

const char *kube_client_user_agent(const struct kube_client *c)
{
	return c->user_agent;
}

const char *kube_client_field_manager(const struct kube_client *c)
{
	return c->field_manager;
}

void kube_client_set_fence(struct kube_client *c, const struct kube_fence *f)
{
	atomic_store(&c->fence, f);
}

bool kube_client_fenced(const struct kube_client *c, const void *fence_arg)
{
	const struct kube_fence *f = atomic_load(&c->fence);

	return f && f->arg == fence_arg;
}

static CURL *handle_get(struct kube_client *c)
{
	CURL *h = NULL;

	pthread_mutex_lock(&c->lock);
	if (c->n_pool)
		h = c->pool[--c->n_pool];
	pthread_mutex_unlock(&c->lock);
	if (h) {
		curl_easy_reset(h);
		return h;
	}
	return curl_easy_init();
}

static void handle_put(struct kube_client *c, CURL *h)
{
	pthread_mutex_lock(&c->lock);
	if (c->n_pool < POOL_MAX) {
		c->pool[c->n_pool++] = h;
		h = NULL;
	}
	pthread_mutex_unlock(&c->lock);
	if (h)
		curl_easy_cleanup(h);
}

/* ---- one attempt ---- */

struct xfer {
	struct kube_client *c;
	const struct kube_req *rq;
	CURL *h;
	struct strbuf body;
	bool streaming;                 /* a 200 answer handed to on_data */
	bool data_flowed;
	int stream_rc;                  /* on_data's non-zero return */
	long retry_after_s;             /* -1 none */
	bool too_big;
	const struct kube_fence *fence; /* a write through a fence, or NULL */
	bool fenced_out;                /* the fence closed before the request left */
};

/* Log each distinct Warning header once (deprecations, unknown fields). */
static void note_warning(struct kube_client *c, const char *text, size_t n)
{
	uint64_t h = hash_fnv1a(HASH_FNV_OFFSET, text, n);
	char *copy;
	bool seen = false;

	pthread_mutex_lock(&c->lock);
	for (size_t i = 0; i < c->n_warnings; i++)
		seen |= c->warnings[i] == h;
	if (!seen && c->n_warnings < WARNINGS_MAX)
		c->warnings[c->n_warnings++] = h;
	pthread_mutex_unlock(&c->lock);
	if (seen || !(copy = strndup(text, n)))
		return;
	obs_log(OBS_WARN, "kube_warning", "server", c->cfg.server, "warning", copy, NULL);
	free(copy);
}

static size_t on_header(char *buf, size_t size, size_t n, void *arg)
{
	struct xfer *x = arg;
	size_t len = size * n, l = len;

	while (l && (buf[l - 1] == '\n' || buf[l - 1] == '\r'))
		l--;
	if (l > 8 && !strncasecmp(buf, "Warning:", 8)) {
		/* Warning: 299 - "text" */
		const char *t = buf + 8, *end = buf + l;

		while (t < end && *t == ' ')
			t++;
		t += strspn(t, "0123456789");
		while (t < end && (*t == ' ' || *t == '-'))
			t++;
		if (t < end && *t == '"' && end[-1] == '"' && end - t >= 2) {
			t++;
			end--;
		}
		note_warning(x->c, t, (size_t)(end - t));
	} else if (l > 12 && !strncasecmp(buf, "Retry-After:", 12)) {
		char tmp[32];

		snprintf(tmp, sizeof(tmp), "%.*s", (int)(l - 12), buf + 12);
		x->retry_after_s = strtol(tmp, NULL, 10);
		if (x->retry_after_s <= 0)
			x->retry_after_s = 1;
	}
	return len;
}

static size_t on_body(char *buf, size_t size, size_t n, void *arg)
{
	struct xfer *x = arg;
	size_t len = size * n;
	long status = 0;

	curl_easy_getinfo(x->h, CURLINFO_RESPONSE_CODE, &status);
	if (x->rq->on_data && status == 200) {
		x->streaming = true;
		x->data_flowed = true;
		x->stream_rc = x->rq->on_data(x->rq->data_arg, buf, len);
		return x->stream_rc ? 0 : len;
	}
	if (x->body.len + len > BODY_MAX) {
		x->too_big = true;
		return 0;
	}
	sb_append(&x->body, buf, len);
	return sb_error(&x->body) ? 0 : len;
}

static int on_progress(void *arg, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
	const struct xfer *x = arg;

	(void)a, (void)b, (void)c, (void)d;
	return x->rq->cancel && atomic_load(x->rq->cancel);
}

/* The last look at the fence, once connected, before the request is sent. */
static int on_prereq(void *arg, char *a, char *b, int c, int d)
{
	struct xfer *x = arg;

	(void)a, (void)b, (void)c, (void)d;
	if (x->fence->holds(x->fence->arg))
		return CURL_PREREQFUNC_OK;
	x->fenced_out = true;
	return CURL_PREREQFUNC_ABORT;
}

static void set_blob(CURL *h, CURLoption opt, const char *pem)
{
	struct curl_blob blob = { (void *)pem, strlen(pem), CURL_BLOB_COPY };

	curl_easy_setopt(h, opt, &blob);
}

static int setup(struct xfer *x, const char *url, const struct kube_creds *cr,
		 long timeout_ms, struct curl_slist **headers)
{
	struct kube_client *c = x->c;
	const struct kube_req *rq = x->rq;
	CURL *h = x->h;
	char line[64];

	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_USERAGENT, c->user_agent);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
	curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, rq->method);
	if (!strcmp(rq->method, "GET"))
		curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, x);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, x);
	curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(h, CURLOPT_XFERINFODATA, x);
	curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
	if (x->fence) {
		curl_easy_setopt(h, CURLOPT_PREREQFUNCTION, on_prereq);
		curl_easy_setopt(h, CURLOPT_PREREQDATA, x);
	}
	if (c->connect_to)
		curl_easy_setopt(h, CURLOPT_CONNECT_TO, c->connect_to);
	if (c->cfg.insecure) {
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
	} else if (c->cfg.ca_pem) {
		set_blob(h, CURLOPT_CAINFO_BLOB, c->cfg.ca_pem);
	}
	if (cr->cert_pem && cr->key_pem) {
		curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
		set_blob(h, CURLOPT_SSLCERT_BLOB, cr->cert_pem);
		curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
		set_blob(h, CURLOPT_SSLKEY_BLOB, cr->key_pem);
	}
	*headers = curl_slist_append(*headers, "Accept: application/json");
	if (rq->body) {
		snprintf(line, sizeof(line), "Content-Type: %s", rq->content_type);
		*headers = curl_slist_append(*headers, line);
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, rq->body);
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)rq->body_len);
	}
	if (cr->token) {
		struct strbuf sb = STRBUF_INIT;

		sb_printf(&sb, "Authorization: Bearer %s", cr->token);
		if (!sb_error(&sb))
			*headers = curl_slist_append(*headers, sb_str(&sb));
		/* the token must not linger in freed memory longer than needed */
		if (sb.buf)
			explicit_bzero(sb.buf, sb.cap);
		sb_free(&sb);
	}
	if (!*headers)
		return -ENOMEM;
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, *headers);
	return 0;
}

static void free_headers(struct curl_slist *headers)
{
	for (struct curl_slist *l = headers; l; l = l->next)
		if (!strncmp(l->data, "Authorization:", 14))
			explicit_bzero(l->data, strlen(l->data));
	curl_slist_free_all(headers);
}

/* Whether a failed transfer surely never reached the server. */
static bool not_sent(CURLcode cc)
{
	return cc == CURLE_COULDNT_CONNECT || cc == CURLE_COULDNT_RESOLVE_HOST ||
	       cc == CURLE_COULDNT_RESOLVE_PROXY;
}

/* ---- the request loop ---- */

/* Enter the client's fence for one attempt of a write (reads pass): 0 with
 * *timeout_ms cut to what the fence allows and *fence set, or
 * KUBE_ENOTLEADER. */
static int fence_enter(struct kube_client *c, const struct kube_req *rq, const char *what,
		       long *timeout_ms, const struct kube_fence **fence, struct dt_err *err)
{
	const struct kube_fence *f = atomic_load(&c->fence);
	int64_t budget = 0;
	int rc;

	*fence = NULL;
	if (!f || !strcmp(rq->method, "GET"))
		return 0;
	rc = f->enter(f->arg, &budget);
	if (rc)
		return dt_err_set(err, rc, "%s: not written: this process does not lead", what);
	if (budget < *timeout_ms)
		*timeout_ms = budget > 1 ? (long)budget : 1;
	*fence = f;
	return 0;
}

int kube_do(struct kube_client *c, const struct kube_req *rq, json_object **out,
	    long *status_out, struct dt_err *err)
{
	char what[400];
	struct strbuf url = STRBUF_INIT;
	int rc = 0;
	bool auth_reset = false;
	unsigned attempt = 0;

	if (out)
		*out = NULL;
	if (status_out)
		*status_out = 0;
	kube_describe(rq->verb, rq->ref, kube_client_namespace(c), what, sizeof(what));
	sb_puts(&url, c->base_url);
	kube_ref_path(c, rq->ref, &url);
	if (rq->query && rq->query[0]) {
		sb_putc(&url, '?');
		sb_puts(&url, rq->query);
	}
	if (sb_error(&url))
		return dt_err_set(err, -ENOMEM, "%s: out of memory", what);

	for (;;) {
		struct xfer x = { .c = c, .rq = rq, .retry_after_s = -1 };
		struct kube_creds cr = { 0 };
		struct curl_slist *headers = NULL;
		CURLcode cc;
		long status = 0;
		bool retry = false;
		int64_t wait_ms = 0;

		long timeout_ms = rq->timeout_ms ? rq->timeout_ms : c->timeout_ms;

		rc = fence_enter(c, rq, what, &timeout_ms, &x.fence, err);
		if (rc)
			break;
		rc = kube_auth_get(&c->auth, &cr, err);
		if (rc) {
			dt_err_prefix(err, "%s: ", what);
			if (x.fence)
				x.fence->leave(x.fence->arg);
			break;
		}
		x.h = handle_get(c);
		if (!x.h || setup(&x, sb_str(&url), &cr, timeout_ms, &headers)) {
			kube_creds_free(&cr);
			free_headers(headers);
			if (x.h)
				curl_easy_cleanup(x.h);
			if (x.fence)
				x.fence->leave(x.fence->arg);
			rc = dt_err_set(err, -ENOMEM, "%s: out of memory", what);
			break;
		}
		cc = curl_easy_perform(x.h);
		if (x.fence)
			x.fence->leave(x.fence->arg);
		curl_easy_getinfo(x.h, CURLINFO_RESPONSE_CODE, &status);
		kube_creds_free(&cr);
		free_headers(headers);
		if (status_out)
			*status_out = status;

		if (x.fenced_out) {
			rc = dt_err_set(err, KUBE_ENOTLEADER, "%s: not written: this process "
					"stopped leading before the request left", what);
		} else if (rq->cancel && atomic_load(rq->cancel)) {
			rc = dt_err_set(err, KUBE_ECANCELED, "%s: cancelled", what);
		} else if (x.streaming) {
			/* the stream ended: normally, by the callback, or broken */
			if (x.stream_rc)
				rc = x.stream_rc;
			else if (cc != CURLE_OK && cc != CURLE_OPERATION_TIMEDOUT)
				rc = dt_err_set(err, KUBE_EUNAVAILABLE, "%s: the stream broke: %s",
						what, curl_easy_strerror(cc));
			else
				rc = 0;
		} else if (cc != CURLE_OK) {
			if (x.too_big)
				rc = dt_err_set(err, KUBE_EPROTO, "%s: the answer exceeds %u MiB",
						what, BODY_MAX >> 20);
			else
				rc = dt_err_set(err, cc == CURLE_OPERATION_TIMEDOUT ? KUBE_ETIMEDOUT :
						KUBE_EUNAVAILABLE, "%s: %s: %s", what, c->cfg.server,
						curl_easy_strerror(cc));
			retry = not_sent(cc) || (rq->idempotent && !x.too_big);
		} else if (status >= 200 && status < 300) {
			rc = 0;
			if (out && x.body.len) {
				*out = parse_json(x.body.buf, x.body.len);
				if (!*out)
					rc = dt_err_set(err, KUBE_EPROTO, "%s: the answer is no JSON",
							what);
			}
		} else {
			rc = kube_status_error(err, what, status, x.body.buf, x.body.len);
			if (status == 401 && !auth_reset && kube_auth_reset(&c->auth)) {
				auth_reset = true;
				retry = true;
				attempt--;      /* a fresh token is no backoff step */
			} else if (status == 429 || (status == 503 && x.retry_after_s > 0)) {
				retry = true;   /* not processed: safe for any verb */
			} else if (status >= 500 && status != 501) {
				retry = rq->idempotent;
			}
			if (x.retry_after_s > 0)
				wait_ms = (x.retry_after_s > RETRY_AFTER_MAX_S ? RETRY_AFTER_MAX_S :
					   x.retry_after_s) * 1000;
		}
		sb_free(&x.body);
		handle_put(c, x.h);
		if (!retry || rq->no_retry || (int)++attempt > c->max_retries || x.data_flowed)
			break;
		if (!wait_ms)
			wait_ms = kube_backoff_ms(c->backoff_base_s, c->backoff_max_s, attempt - 1);
		if (kube_sleep_ms(wait_ms, rq->cancel)) {
			rc = dt_err_set(err, KUBE_ECANCELED, "%s: cancelled", what);
			break;
		}
	}
	sb_free(&url);
	return rc;
}

/* ---- typed calls ---- */

static int send_json(struct kube_client *c, const char *verb, const char *method,
		     const struct kube_ref *ref, const char *query, const char *ctype,
		     json_object *body, bool idempotent, json_object **out, struct dt_err *err)
{
	const char *text = json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN |
							  JSON_C_TO_STRING_NOSLASHESCAPE);
	struct kube_req rq = {
		.verb = verb, .method = method, .ref = ref, .query = query,
		.content_type = ctype, .body = text, .body_len = text ? strlen(text) : 0,
		.idempotent = idempotent,
	};

	if (!text)
		return dt_err_set(err, -ENOMEM, "%s: out of memory", verb);
	return kube_do(c, &rq, out, NULL, err);
}

int kube_get(struct kube_client *c, const struct kube_ref *ref, json_object **out,
	     struct dt_err *err)
{
	struct kube_req rq = { .verb = "get", .method = "GET", .ref = ref, .idempotent = true };

	return kube_do(c, &rq, out, NULL, err);
}

int kube_create(struct kube_client *c, const struct kube_ref *ref, json_object *body,
		json_object **out, struct dt_err *err)
{
	struct kube_ref coll = *ref;

	coll.name = NULL;
	coll.subresource = NULL;
	if (ref->subresource && ref->name) {   /* e.g. serviceaccounts/NAME/token */
		coll.name = ref->name;
		coll.subresource = ref->subresource;
	}
	return send_json(c, "create", "POST", &coll, NULL, "application/json", body, false,
			 out, err);
}

int kube_update(struct kube_client *c, const struct kube_ref *ref, json_object *body,
		json_object **out, struct dt_err *err)
{
	/* A PUT carrying a resourceVersion cannot apply twice; without one it
	 * overwrites with the same content again, so both may be retried. */
	return send_json(c, "update", "PUT", ref, NULL, "application/json", body, true, out, err);
}

static int manager_query(struct kube_client *c, bool force, struct strbuf *q)
{
	char *fm = curl_easy_escape(NULL, c->field_manager, 0);

	if (!fm)
		return -ENOMEM;
	sb_printf(q, "fieldManager=%s%s", fm, force ? "&force=true" : "");
	curl_free(fm);
	return sb_error(q);
}

int kube_apply(struct kube_client *c, const struct kube_ref *ref, json_object *body,
	       json_object **out, struct dt_err *err)
{
	struct strbuf q = STRBUF_INIT;
	int rc;

	if (manager_query(c, true, &q)) {
		sb_free(&q);
		return dt_err_set(err, -ENOMEM, "apply: out of memory");
	}
	rc = send_json(c, "apply", "PATCH", ref, sb_str(&q), "application/apply-patch+yaml",
		       body, true, out, err);
	sb_free(&q);
	return rc;
}

int kube_merge_patch(struct kube_client *c, const struct kube_ref *ref, json_object *body,
		     json_object **out, struct dt_err *err)
{
	struct strbuf q = STRBUF_INIT;
	int rc;

	if (manager_query(c, false, &q)) {
		sb_free(&q);
		return dt_err_set(err, -ENOMEM, "patch: out of memory");
	}
	rc = send_json(c, "patch", "PATCH", ref, sb_str(&q), "application/merge-patch+json",
		       body, true, out, err);
	sb_free(&q);
	return rc;
}

int kube_delete(struct kube_client *c, const struct kube_ref *ref, const char *uid,
		const char *propagation, struct dt_err *err)
{
	json_object *opts = json_object_new_object();
	int rc;

	if (!opts)
		return dt_err_set(err, -ENOMEM, "delete: out of memory");
	json_object_object_add(opts, "apiVersion", json_object_new_string("v1"));
	json_object_object_add(opts, "kind", json_object_new_string("DeleteOptions"));
	if (uid) {
		json_object *pre = json_object_new_object();

		json_object_object_add(pre, "uid", json_object_new_string(uid));
		json_object_object_add(opts, "preconditions", pre);
	}
	if (propagation)
		json_object_object_add(opts, "propagationPolicy", json_object_new_string(propagation));
	rc = send_json(c, "delete", "DELETE", ref, NULL, "application/json", opts, true, NULL, err);
	json_object_put(opts);
	return rc;
}

/* ---- lists ---- */

int kube_query_add(struct strbuf *q, const char *key, const char *value)
{
	char *e;

	if (!value || !value[0])
		return 0;
	e = curl_easy_escape(NULL, value, 0);
	if (!e)
		return -ENOMEM;
	sb_printf(q, "%s%s=%s", q->len ? "&" : "", key, e);
	curl_free(e);
	return sb_error(q);
}

int kube_list_ex(struct kube_client *c, const struct kube_ref *ref, const char *label_selector,
		 const char *field_selector, unsigned page_size, const atomic_bool *cancel,
		 kube_item_fn fn, void *arg, char *rv, size_t rv_size, struct dt_err *err)
{
	char cont[4096] = "";
	unsigned restarts = 0;
	int rc = 0;

	if (!page_size)
		page_size = 500;
	for (;;) {
		struct strbuf q = STRBUF_INIT;
		struct kube_req rq = {
			.verb = "list", .method = "GET", .ref = ref, .idempotent = true,
			.cancel = cancel,
		};
		json_object *page = NULL, *items;
		const char *next, *prv;

		sb_printf(&q, "limit=%u", page_size);
		if (kube_query_add(&q, "labelSelector", label_selector) ||
		    kube_query_add(&q, "fieldSelector", field_selector) ||
		    kube_query_add(&q, "continue", cont)) {
			sb_free(&q);
			return dt_err_set(err, -ENOMEM, "list: out of memory");
		}
		rq.query = sb_str(&q);
		rc = kube_do(c, &rq, &page, NULL, err);
		sb_free(&q);
		if (rc == KUBE_EEXPIRED && cont[0] && restarts++ < 5) {
			/* the continue token outlived etcd's history: start over */
			cont[0] = '\0';
			continue;
		}
		if (rc)
			return rc;
		items = page ? kube_json_get(page, "items", NULL) : NULL;
		if (!items || !json_object_is_type(items, json_type_array)) {
			json_object_put(page);
			return dt_err_set(err, KUBE_EPROTO, "list %s: the answer has no items",
					  ref->res->resource);
		}
		for (size_t i = 0; i < json_object_array_length(items) && !rc; i++)
			rc = fn(arg, json_object_array_get_idx(items, i));
		prv = kube_json_str(page, "metadata", "resourceVersion", NULL);
		if (rv && prv)
			snprintf(rv, rv_size, "%s", prv);
		next = kube_json_str(page, "metadata", "continue", NULL);
		snprintf(cont, sizeof(cont), "%s", next ? next : "");
		json_object_put(page);
		if (rc || !cont[0])
			return rc;
	}
}

int kube_list(struct kube_client *c, const struct kube_ref *ref, const char *label_selector,
	      kube_item_fn fn, void *arg, char *rv, size_t rv_size, struct dt_err *err)
{
	return kube_list_ex(c, ref, label_selector, NULL, 0, NULL, fn, arg, rv, rv_size, err);
}
