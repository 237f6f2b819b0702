/* probe.h - probe_run(): the node's topology, read from a sysfs tree.
 *
 * libpci (pci_enum.c) lists the devices and reads their ids, sysfs
 * (sysfs_probe.c) gives the pcieRoot, NUMA node, link and RDMA device, and
 * hwdb's PCI tables tell GPUs and EFAs from the noise (NVSwitches, ENA,
 * NVMe, bridges, the VGA device) and name their models. Anything odd is
 * reported in the topology's warnings and the probe carries on. The result
 * is the shared model of topo/topo.h. */
#ifndef DT_PROBE_H
#define DT_PROBE_H

#include <stddef.h>

#include "err.h"
#include "topo.h"

struct probe_options {
	/* The instance type to assume instead of the DMI product name; NULL
	 * to read it. */
	const char *instance_type;
};

/* Probe the tree under root (a directory holding sys/, "/" on a live
 * host). Fails only when there is no PCI tree to read (-ENOENT) or memory
 * ran out; everything else becomes a warning. Free *out with
 * topo_free(). */
int probe_run(const char *root, const struct probe_options *opts,
	      struct topo *out, struct dt_err *err);

/* The sysfs directory of a root: "/sys" for "/", "DIR/sys" otherwise. */
void probe_sys_dir(const char *root, char *buf, size_t len);

#endif
