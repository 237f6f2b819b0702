/* kube_internal.h - what the kube module's files share and its test suite
 * reaches: the request engine, credentials, the watch stream decoder and
 * the object store. Nothing outside kube/ includes it. */
#ifndef DT_KUBE_INTERNAL_H
#define DT_KUBE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kube.h"
#include "strbuf.h"

/* ---- Time and waiting (kube_client.c) ---- */

/* Monotonic milliseconds. */
int64_t kube_now_ms(void);
/* Sleep ms, waking early when *cancel turns true (cancel may be NULL).
 * Returns KUBE_ECANCELED when cancelled, else 0. */
int kube_sleep_ms(int64_t ms, const atomic_bool *cancel);
/* Exponential backoff with jitter: base * 2^attempt, capped, times a
 * random factor in [0.5, 1.5). */
int64_t kube_backoff_ms(double base_s, double max_s, unsigned attempt);

/* ---- Configuration (kube_config.c, kube_resource.c) ---- */

int kube_config_copy(struct kube_config *dst, const struct kube_config *src, struct dt_err *err);
/* A small file (at most max bytes), NUL-terminated. */
int kube_read_file(const char *path, size_t max, char **out, struct dt_err *err);
/* Standard or URL-safe base64, padding optional, white space skipped; the
 * result is NUL-terminated. 0, -EINVAL or -ENOMEM. */
int kube_base64_decode(const char *in, size_t len, char **out, size_t *out_len);
/* The model kind a resource holds, or -1. */
int kube_resource_model_kind(const struct kube_resource *res);
const char *kube_client_field_manager(const struct kube_client *c);
/* Append "&key=value" (value URL-escaped; nothing when value is NULL or
 * empty; no '&' at the start). 0 or -ENOMEM. */
int kube_query_add(struct strbuf *q, const char *key, const char *value);
/* kube_list with a field selector, a page size and cancellation. */
int kube_list_ex(struct kube_client *c, const struct kube_ref *ref, const char *label_selector,
		 const char *field_selector, unsigned page_size, const atomic_bool *cancel,
		 kube_item_fn fn, void *arg, char *rv, size_t rv_size, struct dt_err *err);

/* ---- The write fence (kube_leader.c sets it up) ---- */

/* Checked by kube_do around every attempt of a request that writes. */
struct kube_fence {
	/* Before the attempt: 0 and the longest it may take (ms), or a
	 * KUBE_E* code (the attempt is not made). */
	int (*enter)(void *arg, int64_t *budget_ms);
	/* Just before the request leaves (libcurl's pre-request callback,
	 * once connected): whether it still may. */
	bool (*holds)(void *arg);
	/* After the attempt, when enter returned 0. */
	void (*leave)(void *arg);
	void *arg;
};

/* f (NULL: none) is the caller's and must outlive the client's writes. */
void kube_client_set_fence(struct kube_client *c, const struct kube_fence *f);
bool kube_client_fenced(const struct kube_client *c, const void *fence_arg);

/* ---- Credentials (kube_auth.c) ---- */

/* What a request authenticates with right now. Strings are the caller's
 * copies (kube_creds_free). */
struct kube_creds {
	char *token;                    /* bearer token or NULL */
	char *cert_pem, *key_pem;       /* client certificate or NULL */
};

struct kube_auth {
	pthread_mutex_t lock;
	const struct kube_config *cfg;  /* the client's copy */
	char *file_token;               /* tokenFile's contents, last read */
	int64_t file_read_ms;           /* when (monotonic); 0 never */
	char *exec_token;               /* the plugin's last answer */
	char *exec_cert, *exec_key;
	int64_t exec_expiry_ms;         /* monotonic; INT64_MAX when it gave none */
	bool exec_valid;
};

int kube_auth_init(struct kube_auth *a, const struct kube_config *cfg, struct dt_err *err);
void kube_auth_fini(struct kube_auth *a);
/* The credentials to send (re-reading a token file older than a minute,
 * running the exec plugin when its answer expired). */
int kube_auth_get(struct kube_auth *a, struct kube_creds *out, struct dt_err *err);
/* After a 401: forget cached tokens so the next get reads them afresh.
 * Returns true when something could change (a file or a plugin). */
bool kube_auth_reset(struct kube_auth *a);
void kube_creds_free(struct kube_creds *c);
/* Run an exec plugin and read its ExecCredential (kube_exec.c). */
int kube_exec_run(const struct kube_exec_config *ex, const char *server, const char *ca_pem,
		  char **token, char **cert, char **key, int64_t *expiry_unix_s,
		  struct dt_err *err);

/* ---- Requests (kube_client.c) ---- */

struct kube_req {
	const char *verb;               /* for messages: get, create, update, ... */
	const char *method;             /* GET, POST, PUT, PATCH, DELETE */
	const struct kube_ref *ref;
	const char *query;              /* without '?', may be NULL */
	const char *content_type;       /* for a body */
	const char *body;
	size_t body_len;
	/* May be sent again after it may have reached the server. */
	bool idempotent;
	const atomic_bool *cancel;      /* NULL: never cancelled */
	/* Streaming (watch): called with each piece of the body of a 200
	 * answer; a non-zero return ends the transfer. The body is then not
	 * collected, and no retries happen once data flowed. */
	int (*on_data)(void *arg, const char *buf, size_t len);
	void *data_arg;
	long timeout_ms;                /* 0: the client's */
	bool no_retry;                  /* one attempt (the informer retries itself) */
};

/* Send a request; *out gets the decoded JSON body of a 2xx answer (when
 * out is not NULL). *status gets the HTTP status (0 when none came; may
 * be NULL). */
int kube_do(struct kube_client *c, const struct kube_req *rq, json_object **out,
	    long *status, struct dt_err *err);
/* The path of a reference: /api/v1/namespaces/NS/pods/NAME/status. */
int kube_ref_path(const struct kube_client *c, const struct kube_ref *ref, struct strbuf *sb);
/* "create nodeclaims.karpenter.sh dratopo-x1" for messages. */
void kube_describe(const char *verb, const struct kube_ref *ref, const char *ns_default,
		   char *buf, size_t size);
/* Fill err from an API Status body (or the raw text). Returns the code. */
int kube_status_error(struct dt_err *err, const char *what, long status, const char *body,
		      size_t len);
const char *kube_client_user_agent(const struct kube_client *c);

/* ---- The watch stream (kube_stream.c) ---- */

/* Cuts a byte stream of JSON values (a watch body) into values, however
 * the bytes arrive. */
struct kube_stream {
	struct json_tokener *tok;
	size_t in_value;                /* bytes fed into the value being parsed */
	size_t max_value;
};

int kube_stream_init(struct kube_stream *s, size_t max_value);
void kube_stream_fini(struct kube_stream *s);
void kube_stream_reset(struct kube_stream *s);
/* Feed len bytes; fn gets each complete value (borrowed). Returns 0, the
 * callback's non-zero return, KUBE_EPROTO for bytes that are not JSON, or
 * -E2BIG when one value exceeds max_value. */
int kube_stream_feed(struct kube_stream *s, const char *buf, size_t len,
		     int (*fn)(void *arg, json_object *v), void *arg, struct dt_err *err);

/* ---- The object store (kube_store.c) ---- */

/* One cached object, strings in one allocation. */
struct kube_entry {
	struct kube_object obj;         /* model always NULL here */
	char *problems;                 /* NULL: the model accepted it */
	bool seen;                      /* marked during a relist */
};

struct kube_store {
	struct kube_entry **slots;      /* open addressing by ns/name */
	size_t cap, n;
};

void kube_store_fini(struct kube_store *st);
struct kube_entry *kube_store_get(const struct kube_store *st, const char *ns, const char *name);
/* Insert or replace (the old entry is returned through *old for the
 * caller to free, NULL when new). Takes e. 0 or -ENOMEM. */
int kube_store_put(struct kube_store *st, struct kube_entry *e, struct kube_entry **old);
/* Remove and return the entry, or NULL. */
struct kube_entry *kube_store_take(struct kube_store *st, const char *ns, const char *name);
/* Iterate: pass *i = 0 first; NULL at the end. */
struct kube_entry *kube_store_next(const struct kube_store *st, size_t *i);
/* An entry for an object; strings copied. NULL on OOM. */
struct kube_entry *kube_entry_new(const char *ns, const char *name, const char *uid,
				  const char *rv, const char *json, size_t json_len,
				  const char *problems);
void kube_entry_free(struct kube_entry *e);

#endif
