/* hwdb_mig.h - the MIG profiles of the GPUs hwdb knows, and MIG layouts.
 *
 * The facts live in hwdb/mig-profiles.yaml (compiled in by hwdb_gen); a
 * GPU model is found by the NVIDIA driver's productName. A layout says how
 * the GPUs of a node are partitioned, as the EC2NodeClass annotation
 * karpenter.k8s.aws/nvidia-mig-layout (or `dratopo hwdb show --mig`) says:
 *
 *   dynamic                     the driver's dynamic MIG: every placement of
 *                               every profile is a device drawing on the
 *                               GPU's shared counters (partitionable devices)
 *   all-1g.10gb                 every GPU holds as many 1g.10gb as it can
 *   3g.40gb,2g.20gb,2g.20gb     every GPU holds these instances
 *   all-7g.80gb;disabled;...    one entry per GPU (in gpu-N order);
 *                               `disabled` leaves that GPU whole
 *
 * hwdb_slices_opts() turns a layout into the ResourceSlices the NVIDIA
 * driver publishes (hwdb.h). Memory: everything returned points into
 * static tables. */
#ifndef DT_HWDB_MIG_H
#define DT_HWDB_MIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "hwdb.h"

#define HWDB_MIG_MAX_SLICES     8       /* memory slices of a GPU (7 compute) */
#define HWDB_MIG_MAX_PROFILES   32
#define HWDB_MIG_LAYOUT_MAX     512     /* bytes of a layout's text */

/* One GPU instance profile as NVIDIA publishes it. */
struct hwdb_mig_profile {
	const char *name;               /* "1g.10gb", "1g.10gb+me" */
	int compute_slices, memory_slices;
	int instances;                  /* at most this many per GPU */
	int placements[HWDB_MIG_MAX_SLICES];    /* allowed first memory slices */
	size_t n_placements;
	int64_t multiprocessors;        /* -1: not published */
	int64_t copy_engines, decoders, encoders, jpeg_engines, ofa_engines;
	const char *memory;             /* capacity.memory, "9984Mi" */
	int64_t memory_mib;
};

struct hwdb_mig_gpu {
	const char *product_name;       /* "NVIDIA H100 80GB HBM3" */
	int compute_slices, memory_slices;
	const struct hwdb_mig_profile *profiles;
	size_t n_profiles;
	const char *const *notes;
	size_t n_notes;
};

/* The known MIG GPUs, in file order. */
size_t hwdb_mig_count(void);
const struct hwdb_mig_gpu *hwdb_mig_at(size_t i);
/* By productName; NULL for a GPU without MIG (or not known to have it). */
const struct hwdb_mig_gpu *hwdb_mig_gpu(const char *product_name);
/* The MIG GPU of an instance type; NULL when its GPUs have no MIG. */
const struct hwdb_mig_gpu *hwdb_mig_of_type(const struct hwdb_type *t);
const struct hwdb_mig_profile *hwdb_mig_profile(const struct hwdb_mig_gpu *g, const char *name);

/* ---- Layouts ---- */

enum hwdb_mig_kind {
	HWDB_MIG_NONE,          /* "", "disabled", "none": whole GPUs */
	HWDB_MIG_STATIC,        /* a fixed partitioning */
	HWDB_MIG_DYNAMIC,       /* "dynamic" */
};

struct hwdb_mig_layout {
	enum hwdb_mig_kind kind;
	char text[HWDB_MIG_LAYOUT_MAX]; /* normalised: no blanks; "" for NONE */
};

/* Parse a layout's syntax (s may be NULL: none). What it means for a GPU
 * is checked by hwdb_mig_check. -EINVAL with the reason. */
int hwdb_mig_parse(const char *s, struct hwdb_mig_layout *out, struct dt_err *err);
bool hwdb_mig_equal(const struct hwdb_mig_layout *a, const struct hwdb_mig_layout *b);
/* The first profile a parsed static layout names that no GPU of hwdb has
 * ("9g.99gb"), copied into buf; false when every profile is known (and for
 * NONE and DYNAMIC). Such a layout cannot apply to any type, which is
 * worth a warning before planning. */
bool hwdb_mig_unknown_profile(const struct hwdb_mig_layout *l, char *buf, size_t len);

/* Whether the layout can be applied to every GPU of t: known profiles,
 * at most a profile's instances, at most 7 compute and 8 memory slices,
 * and a placement of the instances on the memory slices. 0 when it can
 * (NONE always can); -ENOTSUP when t's GPUs have no MIG (the layout does
 * not apply: they stay whole); -EINVAL with the reason otherwise. */
int hwdb_mig_check(const struct hwdb_mig_layout *l, const struct hwdb_type *t,
		   struct dt_err *err);

#endif
