/* kube.h - dratopo's Kubernetes API client, on libcurl and json-c.
 *
 *   struct kube_config cfg;
 *   struct kube_client *kc;
 *   kube_config_auto(NULL, NULL, &cfg, &err);         // --kubeconfig, $KUBECONFIG,
 *                                                     // in-cluster, ~/.kube/config
 *   kube_client_new(&cfg, NULL, &kc, &err);           // kc keeps its own copy
 *   kube_config_free(&cfg);
 *
 *   struct kube_ref ref = { &kube_res_nodeclaims, NULL, "dratopo-x1", NULL };
 *   kube_apply(kc, &ref, body, NULL, &err);           // server-side apply
 *
 * Configuration (kube_config.c): kubeconfig files (several in $KUBECONFIG
 * are merged as kubectl merges them: the first file to set a map entry or
 * a value wins), client certificates and keys, bearer tokens (inline, or a
 * tokenFile re-read as it rotates), CA data and files, tls-server-name,
 * insecure-skip-tls-verify, exec credential plugins (EKS's `aws eks
 * get-token`) run again when their expirationTimestamp passes or the
 * server answers 401; paths relative to the kubeconfig that names them.
 * In a pod: the service account's token (re-read every minute and on 401),
 * CA and namespace.
 *
 * Requests (kube_client.c): JSON in and out (Accept: application/json),
 * a User-Agent, Warning headers logged once each. 429 waits as
 * Retry-After says; 5xx and connection failures back off with jitter and
 * retry (writes only when the request surely did not reach the server).
 * A failure fills err with the verb, the resource, the object and the API
 * server's own message, e.g.
 *   create nodeclaims.karpenter.sh dratopo-x1: nodeclaims.karpenter.sh is
 *   forbidden: User "system:serviceaccount:dratopo:c" cannot create
 *   resource "nodeclaims" in API group "karpenter.sh" at the cluster scope
 *   (403 Forbidden)
 * and returns one of the KUBE_E* codes below.
 *
 * Informers (kube_informer.c): one cache per kind, filled by a list (pages
 * of 500, restarted when a continue token expires) and kept by a watch
 * (bookmarks, a random 5-10 minute timeout, resumed from the last
 * resourceVersion). 410 Gone, as an HTTP status or as an ERROR event, leads
 * to a consistent relist that reports a delete for every object that
 * vanished meanwhile. The stream is parsed incrementally, each event
 * capped in size. Every object goes through the same decoding and
 * validation as a manifest file (common/model), so a pod read from the API
 * server and the same pod read from YAML are the same object.
 *
 * Events (kube_events.c): events.k8s.io/v1 Events, deduplicated and rate
 * limited per object, written by a background thread; best effort.
 *
 * Threads: a client may be used from any number of threads at once; each
 * informer and the event recorder run a thread of their own. */
#ifndef DT_KUBE_H
#define DT_KUBE_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "diag.h"
#include "err.h"
#include "model.h"

/* ------------------------------------------------------------------ */
/* Error codes (negative, errno-style)                                 */
/* ------------------------------------------------------------------ */

#define KUBE_ENOTFOUND     (-ENOENT)     /* 404 */
#define KUBE_EEXISTS       (-EEXIST)     /* 409 AlreadyExists (create) */
#define KUBE_ECONFLICT     (-ESTALE)     /* 409 Conflict: stale resourceVersion,
					  * uid precondition, apply conflict */
#define KUBE_EEXPIRED      (-ETIME)      /* 410 Gone: resourceVersion too old */
#define KUBE_EFORBIDDEN    (-EPERM)      /* 403: RBAC says no */
#define KUBE_EUNAUTHORIZED (-EACCES)     /* 401: credentials refused */
#define KUBE_EINVALID      (-EINVAL)     /* 400, 422: the object was refused */
#define KUBE_ETHROTTLED    (-EBUSY)      /* 429, still after the retries */
#define KUBE_EUNAVAILABLE  (-EAGAIN)     /* 5xx, connection failures, after retries */
#define KUBE_ETIMEDOUT     (-ETIMEDOUT)  /* the request's deadline passed */
#define KUBE_EPROTO        (-EPROTO)     /* an answer that is not the API's */
#define KUBE_ECANCELED     (-ECANCELED)  /* the informer or client is stopping */
#define KUBE_ENOTLEADER    (-ENOLCK)     /* a fenced write while this process does not
					  * lead (kube_leader.h) */

/* The code for an HTTP status and the Status reason ("AlreadyExists",
 * "Conflict", ...; NULL when unknown); 0 for 2xx. */
int kube_code_for_status(int http_status, const char *reason);

/* ------------------------------------------------------------------ */
/* Configuration                                                       */
/* ------------------------------------------------------------------ */

/* An exec credential plugin (kubeconfig users[].user.exec). */
struct kube_exec_config {
	char *command;                  /* resolved against the kubeconfig's folder
					 * when it contains a '/' and is relative */
	char **args;                    /* NULL-terminated, may be NULL */
	char **env;                     /* "NAME=value", NULL-terminated, may be NULL */
	char *api_version;              /* client.authentication.k8s.io/v1 or v1beta1 */
	char *install_hint;             /* shown when the command is missing */
	bool provide_cluster_info;      /* pass KUBERNETES_EXEC_INFO with the cluster */
};

/* Where and how to reach one API server. Every pointer is owned by the
 * struct (kube_config_free); PEM blobs are NUL-terminated. */
struct kube_config {
	char *server;                   /* "https://host:port" (or http:// for tests) */
	char *ca_pem;                   /* trusted CAs; NULL: the system's */
	char *cert_pem, *key_pem;       /* client certificate and key, or NULL */
	char *token;                    /* static bearer token, or NULL */
	char *token_file;               /* bearer token re-read as it rotates, or NULL */
	struct kube_exec_config *exec;  /* credential plugin, or NULL */
	char *tls_server_name;          /* name the server's certificate must carry */
	bool insecure;                  /* insecure-skip-tls-verify */
	char *ns;                       /* the context's namespace, "default" when unset */
	char *origin;                   /* for messages: "kubeconfig FILE (context C)",
					 * "in-cluster" */
};

/* The kubeconfig: paths is a ':'-separated list (NULL: $KUBECONFIG, else
 * ~/.kube/config); context NULL takes current-context. Missing files in
 * a list are skipped as kubectl skips them; a list with none is an error. */
int kube_config_from_kubeconfig(const char *paths, const char *context,
				struct kube_config *cfg, struct dt_err *err);
/* In a pod: $KUBERNETES_SERVICE_HOST/PORT and the service account folder
 * (dir NULL: /var/run/secrets/kubernetes.io/serviceaccount). */
int kube_config_in_cluster(const char *dir, struct kube_config *cfg, struct dt_err *err);
/* The order kubectl and client-go use: an explicit kubeconfig, else
 * $KUBECONFIG, else in-cluster when $KUBERNETES_SERVICE_HOST is set, else
 * ~/.kube/config. */
int kube_config_auto(const char *kubeconfig, const char *context,
		     struct kube_config *cfg, struct dt_err *err);
void kube_config_free(struct kube_config *cfg);

/* ------------------------------------------------------------------ */
/* Resources and references                                            */
/* ------------------------------------------------------------------ */

struct kube_resource {
	const char *group;              /* "" for the core group */
	const char *version;            /* "v1" */
	const char *resource;           /* lower-case plural: "pods" */
	const char *kind;               /* "Pod" */
	bool namespaced;
};

/* The kinds dratopo reads and writes. A caller may define its own (a CRD
 * of its own, say) the same way. */
extern const struct kube_resource kube_res_pods, kube_res_nodes, kube_res_namespaces,
	kube_res_configmaps, kube_res_serviceaccounts, kube_res_events,
	kube_res_leases, kube_res_crds, kube_res_deviceclasses,
	kube_res_resourceslices, kube_res_resourceclaims,
	kube_res_resourceclaimtemplates, kube_res_devicetaintrules,
	kube_res_daemonsets, kube_res_deployments, kube_res_replicasets,
	kube_res_statefulsets, kube_res_jobs, kube_res_nodepools, kube_res_nodeclaims,
	kube_res_nodeoverlays, kube_res_ec2nodeclasses, kube_res_clusterroles,
	kube_res_clusterrolebindings;

/* The resource of a model kind (never NULL for a valid kind). */
const struct kube_resource *kube_resource_of(enum model_kind k);
/* "pods", "nodeclaims.karpenter.sh": how kubectl and RBAC name it. */
void kube_resource_name(const struct kube_resource *res, char *buf, size_t size);

/* One object, a collection, or a subresource of an object. */
struct kube_ref {
	const struct kube_resource *res;
	const char *ns;                 /* namespaced kinds; NULL: the client's namespace */
	const char *name;               /* NULL for a collection (create, list) */
	const char *subresource;        /* "status", "token", ... or NULL */
};

/* ------------------------------------------------------------------ */
/* The client                                                          */
/* ------------------------------------------------------------------ */

struct kube_client;

struct kube_client_opts {
	const char *user_agent;         /* NULL: "dratopo/VERSION" */
	const char *field_manager;      /* server-side apply's; NULL: "dratopo" */
	int max_retries;                /* 429, 5xx and connection failures; 0: 5,
					 * negative: none */
	long timeout_ms;                /* one request (not a watch); 0: 30 s */
	double backoff_base_s;          /* first retry's wait; 0: 0.5 s (doubles, jittered) */
	double backoff_max_s;           /* 0: 30 s */
};

/* A client for cfg (copied: the caller keeps and frees cfg). */
int kube_client_new(const struct kube_config *cfg, const struct kube_client_opts *opts,
		    struct kube_client **out, struct dt_err *err);
void kube_client_free(struct kube_client *c);
const char *kube_client_namespace(const struct kube_client *c);
const char *kube_client_server(const struct kube_client *c);

/* Requests. Each returns 0 or a KUBE_E* code with err filled; *out (when
 * out is not NULL) gets the object the server returned, which the caller
 * releases with json_object_put. The body is not consumed. */
int kube_get(struct kube_client *c, const struct kube_ref *ref, json_object **out,
	     struct dt_err *err);
/* POST to the collection (ref->name is ignored; the body names the object
 * or carries generateName). KUBE_EEXISTS when the name is taken. */
int kube_create(struct kube_client *c, const struct kube_ref *ref, json_object *body,
		json_object **out, struct dt_err *err);
/* PUT: with metadata.resourceVersion in the body the write is conditional
 * and a stale one is KUBE_ECONFLICT (re-read and try again). With
 * ref->subresource "status" it writes the status only. */
int kube_update(struct kube_client *c, const struct kube_ref *ref, json_object *body,
		json_object **out, struct dt_err *err);
/* Server-side apply (PATCH application/apply-patch+yaml, fieldManager,
 * force=true): the body holds apiVersion, kind, metadata.name and the
 * fields dratopo owns; fields it stops sending are removed. Creates the
 * object when absent. ref->subresource "status" applies to the status. */
int kube_apply(struct kube_client *c, const struct kube_ref *ref, json_object *body,
	       json_object **out, struct dt_err *err);
/* JSON merge patch (RFC 7386). */
int kube_merge_patch(struct kube_client *c, const struct kube_ref *ref, json_object *body,
		     json_object **out, struct dt_err *err);
/* DELETE with preconditions.uid when uid is not NULL (KUBE_ECONFLICT when
 * the object by that name is another one now) and propagationPolicy when
 * propagation is not NULL ("Background", "Foreground", "Orphan").
 * KUBE_ENOTFOUND when it is already gone. */
int kube_delete(struct kube_client *c, const struct kube_ref *ref, const char *uid,
		const char *propagation, struct dt_err *err);

/* Every item of a collection, page by page (limit 500; an expired
 * continue token restarts the list). fn gets each item (borrowed: take a
 * reference to keep it); a non-zero return stops the list and is
 * returned. rv (when not NULL, size rv_size) gets the list's
 * resourceVersion. label_selector may be NULL. */
typedef int (*kube_item_fn)(void *arg, json_object *item);
int kube_list(struct kube_client *c, const struct kube_ref *ref, const char *label_selector,
	      kube_item_fn fn, void *arg, char *rv, size_t rv_size, struct dt_err *err);

/* Server-side apply of a model object (NodeClaim, DeviceTaintRule, ...):
 * encoded as `dratopo` writes it to files, status left out. */
int kube_apply_object(struct kube_client *c, const struct model_object *o,
		      json_object **out, struct dt_err *err);

/* ------------------------------------------------------------------ */
/* Objects: JSON helpers and the bridge to the model                   */
/* ------------------------------------------------------------------ */

/* The string at a path of keys (NULL-terminated), or NULL:
 *   kube_json_str(o, "metadata", "name", NULL) */
const char *kube_json_str(json_object *o, ...) __attribute__((sentinel));
/* The object at a path of keys, or NULL. */
json_object *kube_json_get(json_object *o, ...) __attribute__((sentinel));

/* A metav1.MicroTime ("2026-12-04T10:00:02.123456Z": Leases' acquireTime
 * and renewTime, Events' eventTime) for ts (NULL: now); buf needs 32
 * bytes. Returns buf. */
char *kube_micro_time(const struct timespec *ts, char *buf, size_t size);

/* Decode one object (JSON text, as the API server sends it) into set s
 * exactly as a manifest is loaded: decode, defaults, then validation with
 * opts (NULL: no CEL compile). origin names it in messages. Problems go to
 * errs; *out gets the object (NULL when it could not be read at all).
 * Returns the number of problems (>= 0) or a negative code. */
int kube_decode(struct model_set *s, const char *json, size_t len, const char *origin,
		const struct model_validate_opts *opts, struct model_object **out,
		struct dt_diags *errs);

/* ------------------------------------------------------------------ */
/* Informers                                                           */
/* ------------------------------------------------------------------ */

struct kube_informer;

enum kube_event_type {
	KUBE_ADDED,
	KUBE_MODIFIED,
	KUBE_DELETED,                   /* obj is the last state the cache had */
	KUBE_SYNCED,                    /* a list finished: the cache is consistent
					 * (obj NULL); after a relist too */
};

/* One cached object. Strings are the cache's: valid during a callback or
 * under kube_informer_foreach only. */
struct kube_object {
	const char *ns;                 /* "" for cluster-scoped kinds */
	const char *name;
	const char *uid;
	const char *resource_version;
	const char *json;               /* compact JSON, managedFields dropped */
	size_t json_len;
	/* The object decoded by the model (kube_decode) when the kind is one
	 * the model knows, NULL otherwise; during on_event only. */
	const struct model_object *model;
	/* The model's problems with it ("" when none): such an object stays in
	 * the cache but kube_informer_snapshot leaves it out. */
	const char *problems;
};

typedef void (*kube_event_fn)(void *arg, enum kube_event_type type,
			      const struct kube_object *obj);

struct kube_informer_opts {
	const char *ns;                 /* namespaced kinds: NULL or "" = all */
	const char *label_selector;     /* NULL: everything */
	const char *field_selector;     /* NULL: everything ("spec.nodeName=" for
					 * unbound pods) */
	kube_event_fn on_event;         /* called on the informer's thread, after
					 * the cache changed; may be NULL */
	void *arg;
	const struct model_validate_opts *validate;     /* NULL: no CEL compile */
	unsigned min_watch_timeout_s;   /* watches last [t, 2t); 0: 300 */
	size_t max_event_bytes;         /* one watch event's cap; 0: 32 MiB */
	unsigned page_size;             /* list limit; 0: 500 */
};

/* An informer for ref->res (ref->name must be NULL); nothing happens until
 * kube_informer_start. The client must outlive it. */
int kube_informer_new(struct kube_client *c, const struct kube_resource *res,
		      const struct kube_informer_opts *opts, struct kube_informer **out,
		      struct dt_err *err);
/* Start (or restart after kube_informer_stop, resuming from the last
 * resourceVersion seen: a missed history is a 410 and a relist). */
int kube_informer_start(struct kube_informer *inf, struct dt_err *err);
/* Wait until the first list finished (true) or timeout_ms passed (false). */
bool kube_informer_wait_synced(struct kube_informer *inf, long timeout_ms);
bool kube_informer_synced(struct kube_informer *inf);
/* Stop the thread (promptly: an open watch is cut); the cache is kept. */
void kube_informer_stop(struct kube_informer *inf);
void kube_informer_free(struct kube_informer *inf);

/* Number of cached objects. */
size_t kube_informer_count(struct kube_informer *inf);
/* The cached object's JSON (a copy the caller frees), or NULL. ns is
 * ignored for cluster-scoped kinds. */
char *kube_informer_get(struct kube_informer *inf, const char *ns, const char *name);
/* Whether the cache holds ns/name (no copy). */
bool kube_informer_has(struct kube_informer *inf, const char *ns, const char *name);
/* Calls fn for every cached object under the cache's lock (fn must not
 * call back into the informer); a non-zero return stops and is returned. */
int kube_informer_foreach(struct kube_informer *inf,
			  int (*fn)(void *arg, const struct kube_object *obj), void *arg);
/* Add every cached object the model accepted to s, decoded as files are
 * (for the planner). Returns the number added, or a negative code. */
int kube_informer_snapshot(struct kube_informer *inf, struct model_set *s,
			   struct dt_err *err);

/* Counters, for metrics and tests. */
struct kube_informer_stats {
	uint64_t lists;                 /* lists started (first, relists) */
	uint64_t relists_expired;       /* relists after a 410 */
	uint64_t watches;               /* watch requests opened */
	uint64_t events;                /* ADDED/MODIFIED/DELETED applied */
	uint64_t bookmarks;
	uint64_t errors;                /* failed requests and broken streams */
	char resource_version[64];      /* the last one seen */
};
void kube_informer_stats(struct kube_informer *inf, struct kube_informer_stats *out);

/* ------------------------------------------------------------------ */
/* Events (events.k8s.io/v1)                                           */
/* ------------------------------------------------------------------ */

struct kube_recorder;

/* The object an Event is about. */
struct kube_objref {
	const char *api_version;        /* "v1", "karpenter.sh/v1" */
	const char *kind;
	const char *ns;                 /* NULL for cluster-scoped objects */
	const char *name;
	const char *uid;                /* may be NULL */
};

struct kube_recorder_opts {
	const char *controller;         /* reportingController: "dratopo.io/coordinator" */
	const char *instance;           /* reportingInstance: the pod's name */
	unsigned burst;                 /* per object; 0: 25 */
	unsigned refill_s;              /* one more token every; 0: 300 s */
	unsigned dedup_s;               /* the same event again within: 0: 600 s */
	unsigned queue_max;             /* events waiting; 0: 1000 (more are dropped) */
};

int kube_recorder_new(struct kube_client *c, const struct kube_recorder_opts *opts,
		      struct kube_recorder **out, struct dt_err *err);
/* Writes what is queued (up to timeout_ms), then stops. */
void kube_recorder_free(struct kube_recorder *r, long timeout_ms);
/* Queue an Event: type "Normal" or "Warning"; reason UpperCamelCase;
 * action what was done ("Provisioning"); the note is cut to 1 KiB.
 * Returns 0 when queued, 1 when it was deduplicated or rate limited,
 * negative when it could not be queued. Never blocks on the network. */
int kube_event(struct kube_recorder *r, const struct kube_objref *regarding,
	       const char *type, const char *reason, const char *action,
	       const char *fmt, ...) __attribute__((format(printf, 6, 7)));

struct kube_recorder_stats {
	uint64_t written, deduplicated, rate_limited, dropped, failed;
};
void kube_recorder_stats(struct kube_recorder *r, struct kube_recorder_stats *out);

#endif
