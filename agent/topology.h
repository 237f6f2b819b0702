/* topology.h - what the agent saw on this node: its GPUs and EFAs, the PCIe
 * root each sits under, and how they group.
 *
 * probe_run() fills a struct probe_topology from a sysfs tree: libpci
 * (pci_enum.c) lists the devices and reads their ids, sysfs
 * (sysfs_probe.c) gives the pcieRoot, NUMA node, link and RDMA device, and
 * hwdb's PCI tables tell GPUs and EFAs from the noise (NVSwitches, ENA,
 * NVMe, bridges, the VGA device) and name their models. Anything odd is
 * reported in the topology's warnings and the probe carries on.
 *
 * The emitters print a topology as the `dratopo-agent probe` contract says
 * (../shared/design.md): a tree of roots (text), or the JSON/YAML object
 * {"instanceType", "devices", "pcieRoots"}.
 *
 * Memory: a probe_topology owns everything it points to; free it with
 * probe_topology_free(). */
#ifndef DT_TOPOLOGY_H
#define DT_TOPOLOGY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "err.h"
#include "strbuf.h"
#include "sysfs_probe.h"

struct doc_arena;
struct doc_node;

enum probe_kind { PROBE_GPU, PROBE_EFA };

struct probe_device {
	enum probe_kind kind;
	struct probe_bdf bdf;
	char bdf_str[PROBE_NAME_MAX];   /* "0000:53:00.0" */
	uint16_t vendor, device;
	uint32_t class_code;            /* 0x030200 */
	bool has_subsys;
	uint16_t subsys_vendor, subsys_device;
	/* hwdb's name for the model ("H100 SXM5 80GB", "EFAv2"); NULL when
	 * hwdb does not know the id. Points into hwdb's static tables. */
	const char *model;
	const char *architecture;       /* GPUs: "Hopper"; NULL when unknown */
	int efa_generation;             /* EFAs: 1 for efa0, ...; 0 unknown */
	const char *efa_subsystem;      /* EFAs: "efa1"; NULL when unknown */
	char pcie_root[PROBE_NAME_MAX]; /* "pci0000:44"; "" when unknown */
	int numa_node;                  /* -1 when the kernel does not know */
	char link_speed[PROBE_NAME_MAX];/* "32.0 GT/s PCIe"; "" when unknown */
	int link_width;                 /* lanes; 0 when unknown */
	char rdma_device[64];           /* EFAs: "rdmap79s0"; "" when none */
	char driver[64];                /* bound driver ("nvidia"); "" none */
	bool fell_off_bus;              /* config space reads all ones */
};

/* A PCIe root (host bridge) holding at least one GPU or EFA. The index
 * arrays point into probe_topology.devices. */
struct probe_root {
	char name[PROBE_NAME_MAX];
	size_t *gpus, n_gpus;
	size_t *efas, n_efas;
};

struct probe_topology {
	char *instance_type;            /* DMI product name; NULL when unknown */
	struct probe_device *devices;   /* sorted by address */
	size_t n_devices;
	size_t n_gpus, n_efas;
	struct probe_root *roots;       /* sorted by name */
	size_t n_roots;
	/* Devices of the other kinds seen (noise), for the summary line. */
	size_t n_other;
	/* What was odd, one line each, for stderr. */
	struct dt_diags warnings;
	/* Host facts for a proposed hwdb entry: online CPUs and the memory of
	 * all NUMA nodes, from sys/devices/system; 0 when unknown. */
	int cpus;
	int64_t memory_mib;
};

struct probe_options {
	/* The instance type to assume instead of the DMI product name; NULL
	 * to read it. */
	const char *instance_type;
};

/* Probe the tree under root (a directory holding sys/, "/" on a live
 * host). Fails only when there is no PCI tree to read (-ENOENT) or memory
 * ran out; everything else becomes a warning. */
int probe_run(const char *root, const struct probe_options *opts,
	      struct probe_topology *out, struct dt_err *err);
void probe_topology_free(struct probe_topology *t);

/* The sysfs directory of a root: "/sys" for "/", "DIR/sys" otherwise. */
void probe_sys_dir(const char *root, char *buf, size_t len);

const char *probe_kind_name(enum probe_kind k);     /* "gpu", "efa" */
/* The root named name, or NULL. */
const struct probe_root *probe_find_root(const struct probe_topology *t, const char *name);

/* ---- Output ---- */

/* The tree of roots, for people. */
int probe_emit_text(const struct probe_topology *t, struct strbuf *out);
/* The contract's object, built in arena a; NULL on OOM. */
struct doc_node *probe_to_doc(const struct probe_topology *t, struct doc_arena *a);

#endif
