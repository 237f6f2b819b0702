/* agent_report.h - a probed node as the dratopo.v1.TopologyReport the agent
 * sends: its devices, its own verdict against the agent's hwdb (the
 * coordinator re-verifies with its own) and the host facts a learned entry
 * needs. Not the ResourceSlices: the coordinator predicts those itself from
 * the devices (agent.proto, field 12). Packed to bytes, so that the one report an
 * agent keeps while the coordinator is away is one flat buffer. */
#ifndef DT_AGENT_REPORT_H
#define DT_AGENT_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "err.h"
#include "topo.h"

struct agent_report_info {
	const char *node_name;
	const char *run_id;             /* one agent run (boot_id on the wire) */
	uint64_t sequence;              /* increases within one run */
	int64_t probed_ns;              /* Unix ns */
	const char *version;
};

/* The packed report for t. *out is malloc'd; what learning the entry of an
 * unknown type noticed goes to warnings. 0, -EINVAL (no node name),
 * -ENOMEM. */
int agent_report_pack(const struct topo *t, const struct agent_report_info *info,
		      uint8_t **out, size_t *len, struct dt_diags *warnings, struct dt_err *err);

#endif
