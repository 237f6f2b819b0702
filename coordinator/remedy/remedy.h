/* remedy.h - what to do about a node in drift, as objects Kubernetes acts
 * on: a DeviceTaintRule (resource.k8s.io/v1, effect NoSchedule) per
 * affected device, so that the scheduler keeps new claims off it, a Node
 * taint when the node as a whole is unfit, and, once the node reports a
 * match again, what lifts them. docs/remedy.md has the rules.
 *
 * Two steps:
 *
 *   rem_assess(node, verify result, topology, hwdb entry) -> assessment:
 *       which devices (driver, device name as the predicted slices name
 *       them, pool = the node name) are affected and why, and whether the
 *       node is unfit;
 *   rem_objects_build(assessment, set) -> the DeviceTaintRules (and the
 *       Node carrying the node taint) as model objects of set, printable
 *       with model_emit or rem_emit.
 *
 * rem_node_objects() does both. rem_lift() gives the names of every rule
 * rem_node_objects could have made for a node (they are deterministic per
 * node and device), so that lifting needs no memory of what was sent.
 *
 * Device names are the drivers' own on that node, as topo's slice
 * prediction for a live node writes them (topo_device_dra_name):
 * gpu-<minor> (gpu.nvidia.com) and pci-<address> (dra.net); a device
 * that fell off the bus is in no slice, so the taint goes to the devices
 * it leaves behind on its root.
 *
 * Pure functions: nothing here talks to a cluster, a store or the network.
 * Errors: 0 or a negative errno code with err filled. */
#ifndef DT_REMEDY_H
#define DT_REMEDY_H

#include <stdbool.h>
#include <stddef.h>

#include "doc.h"
#include "err.h"
#include "hwdb.h"
#include "strbuf.h"
#include "topo.h"
#include "topo_verify.h"

struct model_object;
struct model_set;

/* The taint key of every remedy (device and node). */
#define REM_TAINT_KEY           "dratopo.io/drift"
/* The Node taint's value. */
#define REM_NODE_TAINT_VALUE    "unfit"
/* Label on every rule: the node it is about (when the name fits a label). */
#define REM_LABEL_NODE          "dratopo.io/node"
/* Annotation on every rule: the difference, in words. */
#define REM_ANNOTATION_DIFF     "dratopo.io/difference"
/* Rule names: REM_RULE_PREFIX "<node>.<device>". */
#define REM_RULE_PREFIX         "dratopo-drift."
#define REM_NAME_MAX            254     /* a DNS subdomain and its NUL */

/* Why a device is tainted; its taint value is rem_cause_value(). */
enum rem_cause {
	REM_WRONG_MODEL,        /* "wrong-model": the device is not hwdb's model */
	REM_NO_ROOT,            /* "no-pcie-root": the device sits under no PCIe root */
	REM_GPU_OFF_BUS,        /* "gpu-off-bus": a GPU of its root fell off the bus */
	REM_GPU_MISSING,        /* "gpu-missing": its root has fewer GPUs than hwdb's */
	REM_EFA_OFF_BUS,        /* "efa-off-bus": an EFA of its root fell off the bus */
	REM_EFA_LEFT_ROOT,      /* "efa-left-root": its root lacks an EFA the node still has */
	REM_EFA_MISSING,        /* "efa-missing": its root lacks an EFA the node lacks too */
};

const char *rem_cause_value(enum rem_cause c);

/* One device to taint. */
struct rem_device {
	const char *driver;             /* HWDB_DRIVER_GPU or HWDB_DRIVER_EFA */
	char device[TOPO_DEVICE_NAME_MAX];     /* "gpu-3", "pci-0000-4f-00-0": the driver's */
	char bdf[TOPO_NAME_MAX];
	char root[TOPO_NAME_MAX];      /* "" when it has none */
	enum rem_cause cause;
	char difference[256];           /* for REM_ANNOTATION_DIFF */
};

struct rem_assessment {
	char *node;                     /* owned */
	enum topo_verdict verdict;
	struct rem_device *devices;     /* GPUs then EFAs, by name; owned */
	size_t n_devices;
	size_t expected_devices;        /* GPUs + EFAs the node should have */
	size_t usable_devices;          /* live and untainted */
	size_t usable_gpus;
	bool node_unfit;
	char unfit_reason[256];         /* "" unless node_unfit */
};

/* Assess node from its verify result vr (its verdict, against expected)
 * and topology t. expected may be NULL (an unknown type): then only what
 * the node shows by itself (devices off the bus, without a root) counts.
 * A match assesses to nothing. -EINVAL when node is not a DNS subdomain.
 * Free with rem_assessment_free (also after an error). */
int rem_assess(const char *node, const struct topo_verify_result *vr,
	       const struct topo *t, const struct hwdb_type *expected,
	       struct rem_assessment *out, struct dt_err *err);
void rem_assessment_free(struct rem_assessment *a);

/* The objects that act on an assessed node. They live in the set; the
 * arrays are owned here (rem_objects_free). */
struct rem_objects {
	struct model_object **rules;    /* DeviceTaintRules, one per device */
	size_t n_rules;
	/* NULL, or a Node named after the node carrying only the node taint.
	 * Node.spec.taints is an atomic list, so applying this object would
	 * replace the node's other taints: it says what to add (rem_emit
	 * writes the `kubectl taint` command for it), it is not for apply. */
	struct model_object *node;
};

int rem_objects_build(const struct rem_assessment *a, struct model_set *set,
		      struct rem_objects *out, struct dt_err *err);
/* rem_assess + rem_objects_build. */
int rem_node_objects(const char *node, const struct topo_verify_result *vr,
		     const struct topo *t, const struct hwdb_type *expected,
		     struct model_set *set, struct rem_objects *out, struct dt_err *err);
void rem_objects_free(struct rem_objects *o);

/* The deterministic name of the rule for one device of node into buf
 * (REM_NAME_MAX bytes): "dratopo-drift.<node>.<device>", or, when that
 * would not be a valid name (over 253 bytes), the node replaced by
 * "n<16 hex digits of its FNV-1a hash>". */
void rem_rule_name(const char *node, const char *device, char *buf, size_t len);

/* What lifts a node's remedies once it matches again. */
struct rem_lift {
	char *node;                     /* owned */
	char **rule_names;              /* owned; every name rem_node_objects could make */
	size_t n_rule_names;
};

/* Names for gpu-0.. up to the larger of expected's GPU count and t's, for
 * t's EFAs by address (pci-...), and for the efa-0.. placeholders of
 * coordinators before driver names (either of expected and t may be
 * NULL). */
int rem_lift(const char *node, const struct hwdb_type *expected, const struct topo *t,
	     struct rem_lift *out, struct dt_err *err);
void rem_lift_free(struct rem_lift *l);

/* ---- Output ---- */

/* YAML: the rules as documents for `kubectl apply -f -`, then, when the
 * node is unfit, a comment with `kubectl taint nodes NODE
 * dratopo.io/drift=unfit:NoSchedule --overwrite`. JSON: {"node",
 * "deviceTaintRules": [...], "nodeTaint": {"key","value","effect"} or
 * null}. Appends to out; 0 or -ENOMEM. */
int rem_emit(const struct rem_objects *o, const char *node, enum doc_format fmt,
	     struct strbuf *out);
/* The one object every apply stream ends with, so that it is never empty:
 * kubectl apply refuses an input without objects, an empty List too ("no
 * objects passed to apply"), and a fleet with no node in drift, or one
 * whose last drift has recovered, has no rule to apply. The anchor is a
 * DeviceTaintRule named REM_ANCHOR_NAME that selects no device (driver
 * REM_ANCHOR_DRIVER: dratopo publishes no ResourceSlice) with a taint of
 * effect None, which changes nothing even where it selects; annotation
 * REM_ANNOTATION_REMEDIES sums up the stream it ends. One object per
 * cluster, created once and changed only when the summary does. */
#define REM_ANCHOR_NAME         "dratopo-drift"
#define REM_ANCHOR_DRIVER       "dratopo.io"
#define REM_ANNOTATION_REMEDIES "dratopo.io/remedies"
#define REM_ANNOTATION_PURPOSE  "dratopo.io/purpose"

struct rem_summary {
	size_t nodes_in_drift;
	size_t device_taint_rules;
	size_t node_taints;
	size_t nodes_to_lift;
};

/* The anchor for the stream s sums up, as a YAML document appended to out
 * (after "---" when out holds something). 0 or -ENOMEM. */
int rem_anchor_emit(const struct rem_summary *s, struct strbuf *out);

/* What lifts, as objects for `kubectl delete --ignore-not-found -f -`: a
 * comment naming the node with `kubectl taint nodes NODE
 * dratopo.io/drift:NoSchedule-` (a Node taint is no object to delete),
 * then one DeviceTaintRule document (apiVersion, kind, metadata.name) per
 * name. Appends to out; 0 or -ENOMEM. */
int rem_lift_emit(const struct rem_lift *l, struct strbuf *out);

#endif
