/* topo_verify.h - a node's topology against hwdb, and hwdb entries learned from
 * a node. The agent verifies its probe; the coordinator verifies the
 * devices a report carries, against its own effective hwdb.
 *
 * topo_verify() compares what the agent saw with hwdb's entry for the
 * instance type: GPU count and models, EFA count and generation, and the
 * grouping of GPUs and EFAs by PCIe root. Root names may differ between
 * hosts of one type, so the grouping is compared by shape: how many roots,
 * and how many GPUs and EFAs under each. A device that fell off the bus
 * counts as missing.
 *
 * topo_learn() turns a probed node into a hwdb entry (struct hwdb_type):
 * what `verify` proposes for a type hwdb does not know, and what `slices`
 * hands hwdb's slice builder to predict the drivers' ResourceSlices.
 *
 * Memory: a topo_verify_result and a topo_learned own their contents;
 * the learned entry also points into hwdb's tables (attributes borrowed
 * from a known type with the same GPU or EFA), so it is valid until the
 * next hwdb_load_extra() or hwdb_reset(), and into the probed topology
 * (the pcieRoot strings), which must outlive it. */
#ifndef DT_TOPO_VERIFY_H
#define DT_TOPO_VERIFY_H

#include <stddef.h>

#include "diag.h"
#include "err.h"
#include "hwdb.h"
#include "topo.h"

enum topo_verdict {
	TOPO_MATCH,            /* exit 0 */
	TOPO_DRIFT,            /* exit 4 */
	TOPO_UNKNOWN_TYPE,     /* exit 5 */
};

struct topo_verify_result {
	enum topo_verdict verdict;
	const char *instance_type;          /* the type compared against */
	const struct hwdb_type *expected;   /* NULL for TOPO_UNKNOWN_TYPE */
	struct dt_diags differences;        /* one line per difference */
};

/* Compare t with hwdb's entry for instance_type (NULL: t's own type).
 * -EINVAL when no type is known at all. */
int topo_verify(const struct topo *t, const char *instance_type,
		 struct topo_verify_result *out, struct dt_err *err);
/* Compare t with the entry expected (hwdb's, an extra's or one the
 * coordinator learned); out->expected points to it. Never TOPO_UNKNOWN_TYPE. */
int topo_verify_entry(const struct topo *t, const struct hwdb_type *expected,
		       struct topo_verify_result *out, struct dt_err *err);
void topo_verify_result_free(struct topo_verify_result *r);
const char *topo_verdict_name(enum topo_verdict v);   /* "match", "drift", "unknown" */

#define TOPO_LEARNED_NAME TOPO_DEVICE_NAME_MAX      /* "gpu-12", "pci-0000-4f-00-0" */

struct topo_learned {
	struct hwdb_type type;
	/* What type points to, owned here. */
	struct hwdb_device *devices;        /* GPUs, then EFAs */
	char *names;                        /* their names, TOPO_LEARNED_NAME each */
	struct hwdb_attr *attrs;            /* built attributes, when not borrowed */
	char *name, *family, *gpu_model;
	const char *notes[2];
	char *note;
};

/* An hwdb entry named name (NULL: t's instance type, else "unknown")
 * describing t: its live GPUs and EFAs in address order named gpu-N and
 * efa-N (placeholders: an entry describes nodes to come), with pcieRoot
 * and NUMA from the probe, attributes from the
 * cheapest known type with the same GPU (or EFA) model, or built from
 * hwdb's PCI tables when no type has it. Warnings (mixed GPU models) go to
 * warnings. */
int topo_learn(const struct topo *t, const char *name, struct topo_learned *out,
		struct dt_diags *warnings, struct dt_err *err);
void topo_learned_free(struct topo_learned *l);
/* Rename l's devices (learned from t by topo_learn) as the drivers name
 * them on that node (topo_device_dra_name) instead of the placeholders
 * gpu-N / efa-N an entry for nodes to come carries; and mark the entry's
 * names as the node's own (hwdb_type.node_names). */
void topo_learned_use_node_names(struct topo_learned *l, const struct topo *t);

#endif
