/* hwdb_mig_internal.h - MIG layouts resolved to instances on each GPU, for
 * the slice builder (hwdb_slices.c) and the tests. Internal to hwdb. */
#ifndef DT_HWDB_MIG_INTERNAL_H
#define DT_HWDB_MIG_INTERNAL_H

#include "hwdb_mig.h"

/* One MIG instance: its profile and first memory slice. */
struct hwdb_mig_instance {
	const struct hwdb_mig_profile *profile;
	int start;
};

/* What one GPU holds: whole (enabled false) or n instances. */
struct hwdb_mig_gpu_plan {
	bool enabled;
	size_t n;
	struct hwdb_mig_instance inst[HWDB_MIG_MAX_SLICES];
};

/* A STATIC layout on t's GPUs (g = hwdb_mig_of_type(t)): plans[0..n_gpus),
 * each GPU's instances in placement order. -EINVAL with the reason. */
int hwdb_mig_resolve(const struct hwdb_mig_layout *l, const struct hwdb_type *t,
		     const struct hwdb_mig_gpu *g, struct hwdb_mig_gpu_plan *plans,
		     struct dt_err *err);

/* The driver's device name of a MIG device: gpu-<gpu>-mig-<profile without
 * dots, other characters outside [a-z0-9-] as '-'>-<first slice>[-<last>],
 * e.g. gpu-0-mig-1g10gb-me-3, gpu-1-mig-3g40gb-4-7. */
void hwdb_mig_device_name(size_t gpu, const struct hwdb_mig_profile *p, int start, char *buf,
			  size_t len);

/* The built-in table, written by hwdb_gen into hwdb_data.c. */
extern const struct hwdb_mig_gpu hwdb_builtin_mig_gpus[];
extern const size_t hwdb_builtin_n_mig_gpus;

#endif
