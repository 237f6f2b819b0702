/* agent_report.h - a probed node as the dratopo.v1.TopologyReport the agent
 * sends: its devices, its own verdict against the agent's hwdb (the
 * coordinator re-verifies with its own), the ResourceSlices the drivers
 * would publish (as `dratopo-agent slices -o yaml` prints them) and the host
 * facts a learned entry needs. Packed to bytes, so that the one report an
 * agent keeps while the coordinator is away is one flat buffer. */
#ifndef DT_AGENT_REPORT_H
#define DT_AGENT_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "err.h"
#include "topology.h"

struct agent_report_info {
	const char *node_name;
	const char *run_id;             /* one agent run (boot_id on the wire) */
	uint64_t sequence;              /* increases within one run */
	int64_t probed_ns;              /* Unix ns */
	const char *version;
};

/* The packed report for t. *out is malloc'd; warnings (slices that could not
 * be predicted) go to warnings. 0, -EINVAL (a node name hwdb's slice builder
 * refuses is only a warning; no node name is -EINVAL), -ENOMEM. */
int agent_report_pack(const struct probe_topology *t, const struct agent_report_info *info,
		      uint8_t **out, size_t *len, struct dt_diags *warnings, struct dt_err *err);

#endif
