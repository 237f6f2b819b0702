/* topo_slices.h - the ResourceSlices the drivers would publish on a node,
 * predicted from its topology (the agent's probe or a report's devices).
 *
 * The probed node becomes an hwdb entry (topo_learn) and hwdb's own slice
 * builder (hwdb_slices) turns it into the slices the NVIDIA GPU driver
 * (gpu.nvidia.com) and DRANET (dra.net) publish, so the prediction for a
 * live node and `dratopo hwdb show` for its type come out of the same code
 * and compare line by line. Devices that fell off the bus are left out:
 * the drivers do not see them. */
#ifndef DT_TOPO_SLICES_H
#define DT_TOPO_SLICES_H

#include "diag.h"
#include "doc.h"
#include "err.h"
#include "hwdb.h"
#include "strbuf.h"
#include "topo.h"

struct model_object;
struct model_set;

/* Build the slices for node node_name in set (which owns them) into
 * out[0..*n_out) (HWDB_MAX_SLICES room), GPU slice first, as hwdb_slices()
 * does for a type. mode may be NULL (consumable capacity disabled). */
int topo_slices(const struct topo *t, const struct hwdb_cc_mode *mode,
		 const char *node_name, struct model_set *set, struct model_object **out,
		 size_t *n_out, struct dt_diags *warnings, struct dt_err *err);

/* Print the slices for node node_name: JSON as `dratopo hwdb show -o json`
 * ({"instanceType": {...}, "resourceSlices": [...]}; compact: on one line),
 * YAML as it does: a comment line, then one document per slice. mode may be
 * NULL (consumable capacity disabled). */
int topo_slices_emit(const struct topo *t, const struct hwdb_cc_mode *mode,
		      const char *node_name, enum doc_format fmt, bool compact,
		      struct strbuf *out, struct dt_diags *warnings, struct dt_err *err);

#endif
