/* cluster.h - the fleet kept in the cluster: dratopo.io/v1alpha1
 * NodeTopology (one per node) and LearnedType (one per learned instance
 * type) objects, made from the reconciler's records and read back into
 * them (cluster_objects.c), and what the API server holds of them, kept
 * in step with it and written only where it differs (cluster_sync.c).
 *
 * The CRDs are deploy/crds.yaml. Everything a coordinator writes is
 * status; the object itself is created empty (a CRD with a status
 * subresource ignores status on create). A NodeTopology's status has
 * CONTENT, whose change is a reason to write (verdict, differences, GPU
 * and EFA counts, plannable and why, shape, conflict, drifted, host facts,
 * the devices by PCIe root), and MOMENTS written along with any change but
 * never a reason for one (lastReportTime, probeTime, the agent's version,
 * run id and sequence). So a heartbeat writes nothing, and the write rate
 * follows the rate of changes, not the size of the fleet.
 *
 * Why a node is not plannable is written so that the text stays the same
 * while the state does: drift, unknown and conflict as the reconciler words
 * them, and staleness as "stale: silent since TIME (stale after D)" rather
 * than the reconciler's "95s ago". A stale node's lastReportTime is the
 * last report heard from it (written when it went stale), so a new leader
 * restores it still stale; every other node restored counts as heard from
 * at the takeover, so that nodes whose heartbeats were never written do
 * not all go stale at once. */
#ifndef DT_CLUSTER_H
#define DT_CLUSTER_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

#include "err.h"
#include "kube.h"
#include "reconcile.h"
#include "topo.h"

extern const struct kube_resource cluster_res_nodetopologies, cluster_res_learnedtypes;

#define CLUSTER_API_VERSION "dratopo.io/v1alpha1"

/* ---- objects (cluster_objects.c) ---- */

/* What a NodeTopology's status is made from. */
struct cluster_node_view {
	/* The node's record viewed at time 0 (rec_fleet_node(..., 0, ...)):
	 * plannable and why without staleness, which comes next. */
	const struct rec_node *node;
	const struct topo *topo;        /* its devices and host facts (rec_node_topology) */
	bool stale;                     /* silent since node->received_ns */
	int64_t stale_after_ns;
};

/* The status object for v; NULL on out of memory. */
json_object *cluster_node_status(const struct cluster_node_view *v);

/* A NodeTopology read back: the node's last report as the reconciler's
 * restore takes it, and what its record said. */
struct cluster_node_rec {
	struct rec_report report;       /* strings point into obj and devices */
	struct rec_device *devices;     /* report.devices, in address order */
	struct rec_stored stored;
	bool stale;                     /* it was written stale */
	json_object *obj;               /* the object, referenced */
};

/* Read a NodeTopology object. -EINVAL with err naming the object and the
 * field ("NodeTopology gpu-a: status.pcieRoots[1].gpus[0].vendor: ...")
 * for one that cannot be a node's. */
int cluster_node_parse(json_object *obj, struct cluster_node_rec *out, struct dt_err *err);
void cluster_node_rec_free(struct cluster_node_rec *r);

/* A LearnedType's status for l; gpus and efas are its entry's. NULL on
 * out of memory. */
json_object *cluster_learned_status(const struct rec_learned *l, size_t gpus, size_t efas);
/* Read a LearnedType back (*out's strings are its own: rec_learned_free). */
int cluster_learned_parse(json_object *obj, struct rec_learned *out, struct dt_err *err);

/* The LearnedType's name for an instance type: the type itself when it is
 * a valid object name (a DNS-1123 subdomain), else "type-" and a hash of
 * it. buf needs 254 bytes. */
const char *cluster_learned_name(const char *type, char *buf, size_t size);

/* A digest of a status's content (its moments left out), independent of
 * the order of keys: two statuses with the same content have the same
 * digest. */
uint64_t cluster_status_digest(json_object *status);
/* Whether a NodeTopology status says the node went stale. */
bool cluster_status_stale(json_object *status);

/* ---- what the API server holds (cluster_sync.c) ---- */

struct cluster_sync;

/* Informers on both kinds through c, caching what the API server holds
 * (started at once: followers keep them warm for a takeover). Writes go
 * through c too: fence it (kube_leader_fence) where leadership decides. */
int cluster_sync_new(struct kube_client *c, struct cluster_sync **out, struct dt_err *err);
void cluster_sync_free(struct cluster_sync *s);
/* Both caches hold a complete list (after waiting up to timeout_ms). */
bool cluster_sync_wait_synced(struct cluster_sync *s, long timeout_ms);

/* What the API server holds of one NodeTopology. */
struct cluster_have {
	bool exists;
	bool stale;                     /* written stale */
	uint64_t digest;                /* of its status (0: none yet) */
};
void cluster_sync_node_have(struct cluster_sync *s, const char *name, struct cluster_have *out);

/* Make node name's object hold status (created when absent). Nothing is
 * sent when the API server holds this content already. 0, or a KUBE_E*
 * code (KUBE_ENOTLEADER from a fenced client) with err filled. One writer
 * at a time (the coordinator's committer). */
int cluster_sync_put_node(struct cluster_sync *s, const char *name, json_object *status,
			  struct dt_err *err);
/* The same for a learned type's LearnedType. */
int cluster_sync_put_learned(struct cluster_sync *s, const char *type, json_object *status,
			     struct dt_err *err);
/* Delete node name's object (when it has one), by its uid. */
int cluster_sync_delete_node(struct cluster_sync *s, const char *name, struct dt_err *err);

/* Every cached object of a kind (cluster_res_nodetopologies or
 * cluster_res_learnedtypes), parsed: fn's object is borrowed. A non-zero
 * return stops and is returned. */
int cluster_sync_foreach(struct cluster_sync *s, const struct kube_resource *res,
			 int (*fn)(void *arg, json_object *obj), void *arg);
/* Names of the NodeTopology objects held (only_stale: those written
 * stale), sorted; *names and each name are the caller's to free. */
int cluster_sync_node_names(struct cluster_sync *s, bool only_stale, char ***names, size_t *n);

struct cluster_sync_stats {
	uint64_t creates, updates, deletes;     /* requests that went through */
	uint64_t unchanged;             /* puts that found the content there */
	uint64_t conflicts;             /* 409s, each answered by a fresh read */
	uint64_t failures;              /* puts and deletes that failed */
	size_t nodes, learned;          /* objects held */
};
void cluster_sync_stats(struct cluster_sync *s, struct cluster_sync_stats *out);

#endif
