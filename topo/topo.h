/* topo.h - what was seen on a node: its GPUs and EFAs, the PCIe root
 * each sits under, and how they group.
 *
 * The agent fills a struct topo from sysfs (probe_run(), in
 * agent/probe.h); the coordinator rebuilds one from the devices a report
 * carries (topo_from_devices()). Either way the roots are grouped
 * and the models named here, from hwdb's PCI tables, so both sides see the
 * same topology for the same devices. Nothing here reads the host.
 *
 * The emitters print a topology as the `dratopo-agent probe` contract says
 * (../shared/design.md): a tree of roots (text), or the JSON/YAML object
 * {"instanceType", "devices", "pcieRoots"}.
 *
 * Memory: a struct topo owns everything it points to except the model
 * names (hwdb's static tables); free it with topo_free(). */
#ifndef DT_TOPO_H
#define DT_TOPO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "topo_bdf.h"
#include "diag.h"
#include "err.h"
#include "strbuf.h"

struct doc_arena;
struct doc_node;

enum topo_kind { TOPO_GPU, TOPO_EFA };

struct topo_device {
	enum topo_kind kind;
	struct topo_bdf bdf;
	char bdf_str[TOPO_NAME_MAX];   /* "0000:53:00.0" */
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
	char pcie_root[TOPO_NAME_MAX]; /* "pci0000:44"; "" when unknown */
	int numa_node;                  /* -1 when the kernel does not know */
	char link_speed[TOPO_NAME_MAX];/* "32.0 GT/s PCIe"; "" when unknown */
	int link_width;                 /* lanes; 0 when unknown */
	char rdma_device[64];           /* EFAs: "rdmap79s0"; "" when none */
	char driver[64];                /* bound driver ("nvidia"); "" none */
	bool fell_off_bus;              /* config space reads all ones */
};

/* A PCIe root (host bridge) holding at least one GPU or EFA. The index
 * arrays point into struct topo.devices. */
struct topo_root {
	char name[TOPO_NAME_MAX];
	size_t *gpus, n_gpus, cap_gpus;
	size_t *efas, n_efas, cap_efas;
};

struct topo {
	char *instance_type;            /* DMI product name; NULL when unknown */
	struct topo_device *devices;   /* sorted by address */
	size_t n_devices;
	size_t n_gpus, n_efas;
	struct topo_root *roots;       /* sorted by name */
	size_t n_roots, cap_roots;
	/* Devices of the other kinds seen (noise), for the summary line. */
	size_t n_other;
	/* What was odd, one line each, for stderr. */
	struct dt_diags warnings;
	/* Host facts for a proposed hwdb entry: online CPUs and the memory of
	 * all NUMA nodes (the agent reads sys/devices/system; a report carries
	 * them); 0 when unknown. */
	int cpus;
	int64_t memory_mib;
};

void topo_free(struct topo *t);

/* A topology from a list of devices (a report's): copies devs[0..n), checks
 * each bdf_str is a PCI address (bdf is filled from it) and appears once,
 * names the models from hwdb's PCI tables (the model, architecture and EFA
 * fields of devs are ignored), sorts by address and groups by pcie_root.
 * instance_type may be NULL. -EINVAL names the first bad device. */
int topo_from_devices(const char *instance_type, const struct topo_device *devs,
				size_t n, struct topo *out, struct dt_err *err);
/* Finish t->devices[0..n_devices): sort by address, count GPUs and EFAs,
 * group by pcie_root into t->roots. 0 or -ENOMEM. */
int topo_index(struct topo *t);
/* Fill d's model, architecture and EFA generation/subsystem from hwdb's PCI
 * tables for its kind and ids (NULL / 0 when hwdb lacks the id). */
void topo_device_name(struct topo_device *d);

/* The node's shape as one canonical string, independent of root names and
 * addresses, so that nodes of one type can be compared (docs/reconcile.md).
 * A root's content is "+"-joined terms "gpu<n>x<vvvv>:<dddd>" (its live
 * GPUs per PCI id, by id) then "efa<n>x<vvvv>:<dddd>"; the key is "v1"
 * followed, for each distinct content in bytewise order, by
 * " <roots>*(<content>)", and last, when live devices lack a root, by
 * " ?(<content>)" for all of them. Devices that fell off the bus are left
 * out. p5.48xlarge: "v1 8*(gpu1x10de:2330+efa4x1d0f:efa1)". Appends to
 * out; 0 or -ENOMEM. */
int topo_shape_key(const struct topo *t, struct strbuf *out);

const char *topo_kind_name(enum topo_kind k);     /* "gpu", "efa" */
/* 0 when name can be a Node's (a DNS-1123 subdomain), else -EINVAL with
 * err `WHAT "NAME": <the API machinery's message> (a Node's name)`: the one
 * rule the agent applies to the name it reports and the coordinator to
 * the name it is sent. */
int topo_node_name_check(const char *what, const char *name, struct dt_err *err);
/* The name the node's driver gives device i of t in its ResourceSlice
 * (docs/remedy.md, "Device names"), into buf (TOPO_DEVICE_NAME_MAX):
 *   GPU: "gpu-<minor>", as the NVIDIA DRA driver names a GPU after its
 *        /dev/nvidia minor; the kernel module hands minors out in probe
 *        order, which is the PCI bus order, so the minor is the GPU's
 *        index among the node's NVIDIA GPUs by address (one that fell off
 *        the bus after boot keeps its minor, so it counts);
 *   EFA: "pci-<address>" with ':' and '.' turned into '-' ("pci-0000-4f-00-0"),
 *        as DRANET names every PCI network device (NormalizePCIAddress).
 * t->devices must be sorted (topo_index). Returns buf. */
#define TOPO_DEVICE_NAME_MAX 48
const char *topo_device_dra_name(const struct topo *t, size_t i, char *buf, size_t len);
/* DRANET's name for the PCI network device at bdf ("0000:4f:00.0"). */
const char *topo_dranet_pci_name(const char *bdf, char *buf, size_t len);

/* The root named name, or NULL. */
const struct topo_root *topo_find_root(const struct topo *t, const char *name);

/* The NUMA node all of r's devices share; -1 when unknown or mixed. */
int topo_root_numa(const struct topo *t, const struct topo_root *r);

/* ---- Output ---- */

/* The tree of roots, for people. */
int topo_emit_text(const struct topo *t, struct strbuf *out);
/* The contract's object, built in arena a; NULL on OOM. */
struct doc_node *topo_to_doc(const struct topo *t, struct doc_arena *a);

#endif
