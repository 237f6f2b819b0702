/* hwdb.h - what each EC2 GPU instance type has, before a node of it exists.
 *
 * The facts live in hwdb/instance-types.yaml and hwdb/pci-ids.yaml; the
 * build compiles them into C tables (hwdb_gen). At run time a file in the
 * same source format can add or override instance types
 * (hwdb_load_extra, `--hwdb-extra FILE`).
 *
 * What an entry says:
 *   - the instance type's size and price (vCPUs, memory, arch, on-demand
 *     price or none),
 *   - every GPU and every EFA the NVIDIA DRA driver and DRANET publish there,
 *     each with its attributes as the driver publishes them, the PCIe root
 *     (resource.kubernetes.io/pcieRoot) and the NUMA node,
 *   - whether that device list was scraped from real nodes (draMetadata);
 *     when it was not, the counts and models hold but the topology
 *     (pcieRoot, NUMA) is unknown and the planner must treat it so.
 *
 * The lookups below (hwdb_lookup, hwdb_at, ...) and hwdb_load_extra work on
 * the process's catalogue (hwdb_catalog.h: hwdb_catalog_process()); a user
 * that needs entries of its own, apart from the process's (a plan with its
 * own extras), builds a struct hwdb_catalog and asks it instead.
 *
 * Memory: every pointer an entry holds is owned by its catalogue. Built-in
 * entries are static; entries from an extra file live until hwdb_reset().
 *
 * Threads: lookups may run concurrently with each other; loading extras
 * (hwdb_load_extra, hwdb_reset) must not run concurrently with anything.
 * Load extras at start-up. */
#ifndef DT_HWDB_H
#define DT_HWDB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "strbuf.h"

/* ---- Devices ---- */

/* The value types of resource.k8s.io/v1 DeviceAttribute. */
enum hwdb_attr_type {
	HWDB_ATTR_STRING,
	HWDB_ATTR_INT,
	HWDB_ATTR_BOOL,
	HWDB_ATTR_VERSION,      /* semver text, e.g. "9.0.0" */
};

/* One attribute as the driver publishes it. name is the key exactly as the
 * driver writes it in its ResourceSlice: unqualified names belong to the
 * driver's own domain ("productName" for gpu.nvidia.com, "rdma" for
 * dra.net); qualified ones carry their domain
 * ("resource.kubernetes.io/pcieRoot"). hwdb keeps pcieRoot and the EFA NUMA
 * node in hwdb_device fields, not here; hwdb_slices() adds them. */
struct hwdb_attr {
	const char *name;
	enum hwdb_attr_type type;
	const char *str;        /* STRING and VERSION */
	int64_t i;              /* INT */
	bool b;                 /* BOOL */
};

struct hwdb_device {
	const char *name;       /* "gpu-0", "efa-3": the drivers' naming */
	const char *pcie_root;  /* "pci0000:44"; NULL when unknown */
	int numa_node;          /* -1 when unknown */
	/* capacity.memory as the NVIDIA driver publishes it ("81152Mi");
	 * NULL for EFAs. memory_mib is the same value in MiB, rounded down. */
	const char *memory;
	int64_t memory_mib;
	const struct hwdb_attr *attrs;
	size_t n_attrs;
};

/* ---- Instance types ---- */

/* The region whose price an entry's has_price/price give, and the one a
 * plan prices in when nothing names another. */
#define HWDB_DEFAULT_REGION "us-east-1"

/* An on-demand price in a region other than HWDB_DEFAULT_REGION. */
struct hwdb_price {
	const char *region;             /* "eu-west-1" */
	double price;                   /* USD per hour, Linux on-demand */
};

struct hwdb_type {
	const char *name;               /* "p5.48xlarge" */
	const char *family;             /* "p5" */
	/* kubernetes.io/arch ("amd64", "arm64"), vCPUs and memory; NULL / 0
	 * when no source has them (hwdb_type_sized() is false): such a type
	 * is listed but cannot be planned until an extra file or a fleet's
	 * agents give them. */
	const char *arch;
	int vcpu;
	int64_t memory_mib;
	bool has_price;                 /* false: no on-demand offering in us-east-1 */
	double price;                   /* USD per hour, us-east-1 Linux on-demand */
	/* Prices in other regions, sorted by region (hwdb_type_price). */
	const struct hwdb_price *prices;
	size_t n_prices;
	/* true: the device list was scraped from live nodes (pcieRoot and NUMA
	 * are facts). false: only counts and models are known. */
	bool dra_metadata;

	/* The GPU model: NVML productName, architecture, PCI id. gpu_device 0
	 * means the PCI id is not known. */
	const char *gpu_model;
	const char *gpu_architecture;
	uint16_t gpu_vendor, gpu_device;
	/* The EFA's PCI device id (vendor 0x1d0f); 0 when the type has none
	 * or it is not known. */
	uint16_t efa_device;

	int max_efa_interfaces;         /* EC2 MaximumEfaInterfaces */
	int network_cards;
	double network_bandwidth_gbps;

	const struct hwdb_device *gpus;
	size_t n_gpus;
	const struct hwdb_device *efas;
	size_t n_efas;

	/* Accelerators that are neither NVIDIA GPUs nor EFAs (Trainium,
	 * Inferentia, FPGAs): named so that nobody takes the type for a plain
	 * CPU one, but not modelled: no driver's devices are predicted for
	 * them. accel_kind NULL: none; accel_count -1: how many is unknown. */
	const char *accel_kind;
	int accel_count;

	/* Free-text remarks carried from the facts (sources, doubts). */
	const char *const *notes;
	size_t n_notes;

	bool builtin;                   /* false: came from an extra file or a fleet */
	/* true: a type a fleet learned from its nodes (hwdb_entry_parse,
	 * hwdb_catalog_add_learned); such an entry has no price. */
	bool learned;
	/* true: the device names are a live node's own, as its drivers name
	 * them (topo's prediction for a node that runs). false: an entry for
	 * nodes to come, whose EFA names efa-N are placeholders (DRANET names
	 * an EFA after its PCI address, known once the node exists); the
	 * slices say so in the annotation HWDB_ANNOTATION_PLACEHOLDER_NAMES. */
	bool node_names;
};

/* Lookup by exact name; NULL when unknown. */
const struct hwdb_type *hwdb_lookup(const char *name);

/* Whether t's vCPUs, memory and architecture are known. */
bool hwdb_type_sized(const struct hwdb_type *t);

/* Whether t leaves out something a fleet's nodes can teach: its size
 * (hwdb_type_sized), the PCIe grouping of its GPUs and EFAs (dra_metadata
 * false) or their PCI device ids. The coordinator learns such a type from
 * its first nodes as it learns one hwdb lacks, verifies the type's nodes
 * against the learned entry, and hwdb_catalog_add_learned merges what was
 * learned into t. */
bool hwdb_type_incomplete(const struct hwdb_type *t);

/* t's on-demand price in region (NULL: HWDB_DEFAULT_REGION) into *out;
 * false when hwdb knows none there (not offered, or no source has it). */
bool hwdb_type_price(const struct hwdb_type *t, const char *region, double *out);

/* The regions the built-in prices cover, HWDB_DEFAULT_REGION first, the
 * others sorted (NULL-terminated), and whether name is one of them. */
extern const char *const hwdb_regions[];
bool hwdb_region_known(const char *name);

/* Every known type in price order: cheapest first, types without an
 * on-demand price last, ties by name. i < hwdb_count(). */
size_t hwdb_count(void);
const struct hwdb_type *hwdb_at(size_t i);

/* The types of a family, in price order, into out[0..cap). Returns how many
 * the family has (which may exceed cap; pass cap 0 to count). */
size_t hwdb_family(const char *family, const struct hwdb_type **out, size_t cap);

/* The known name closest to name (edit distance), for "did you mean"
 * hints; NULL when nothing is close. */
const char *hwdb_suggest(const char *name);

/* The PCIe roots of a type's devices, in order of first appearance (GPUs
 * first), with how many GPUs and EFAs each holds, into out[0..cap).
 * Returns the number of distinct roots (devices without a known root are
 * not counted). */
struct hwdb_root {
	const char *name;               /* "pci0000:44" */
	size_t n_gpus, n_efas;
};
size_t hwdb_type_roots(const struct hwdb_type *t, struct hwdb_root *out, size_t cap);

/* The value of a device's attribute, or NULL. */
const struct hwdb_attr *hwdb_device_attr(const struct hwdb_device *d, const char *name);

/* ---- Run-time extension (the process's catalogue) ---- */

/* Read an extra file in the source format (a YAML/JSON document with
 * `instanceTypes: [...]`). Its entries replace built-in or earlier extra
 * entries of the same name and add new ones. All or nothing: a file with
 * any error changes nothing, and err names the file, the entry and the
 * field ("extra.yaml: instanceTypes[2] (p9.48xlarge): gpus[0].memory:
 * ..."). */
int hwdb_load_extra(const char *path, struct dt_err *err);
/* The same from a buffer; name is used in messages. */
int hwdb_load_extra_buf(const char *buf, size_t len, const char *name, struct dt_err *err);
/* Drop every extra: back to the built-in data. */
void hwdb_reset(void);

/* One entry held apart from the catalogues (a type the coordinator learned
 * from its fleet): parsed from source-format text and checked as an extra
 * file's entries are, without joining hwdb_lookup(); marked learned. A plan
 * takes it into its catalogue with hwdb_catalog_add_learned(). */
struct hwdb_entry;
/* text holds `instanceTypes:` with exactly one entry, named type; name is
 * used in messages. *out owns everything; hwdb_entry_type() borrows. */
int hwdb_entry_parse(const char *text, const char *type, const char *name,
		     struct hwdb_entry **out, struct dt_err *err);
const struct hwdb_type *hwdb_entry_type(const struct hwdb_entry *e);
void hwdb_entry_free(struct hwdb_entry *e);

/* Write one entry in the source format: a YAML sequence item
 * ("- name: ...\n  family: ...") that, placed under `instanceTypes:`,
 * loads back to an equal entry. The agent's `verify` uses this to propose
 * an entry for a type hwdb does not know. Returns 0 or -ENOMEM. */
int hwdb_entry_write_yaml(const struct hwdb_type *t, struct strbuf *out);
/* A whole extra file holding the given entries (with `instanceTypes:`). */
int hwdb_file_write_yaml(const struct hwdb_type *const *types, size_t n, struct strbuf *out);

/* ---- PCI ids (hwdb/pci-ids.yaml) ---- */


#define HWDB_PCI_VENDOR_NVIDIA  0x10de
#define HWDB_PCI_VENDOR_AMAZON  0x1d0f

struct hwdb_pci_gpu {
	uint16_t vendor, device;
	const char *model;              /* pci.ids name, "H100 SXM5 80GB" */
	const char *architecture;       /* as go-nvlib names it: "Hopper" */
};

struct hwdb_pci_efa {
	uint16_t vendor, device;
	int generation;                 /* 1 for efa0, 2 for efa1, ... */
	const char *subsystem;          /* dra.net/pciSubsystem: "efa1" */
	const char *name;               /* "EFAv2" */
};

/* NULL when the id is not a known GPU / EFA. */
const struct hwdb_pci_gpu *hwdb_pci_gpu(uint16_t vendor, uint16_t device);
const struct hwdb_pci_efa *hwdb_pci_efa(uint16_t vendor, uint16_t device);
/* True for devices the agent must not count as GPUs or EFAs even though
 * they sit next to them: NVSwitches, ENA, NVMe, bridges, management NICs.
 * pci_class is the sysfs `class` value (0x030200: class, subclass,
 * prog-if). */
bool hwdb_pci_ignored(uint16_t vendor, uint16_t device, uint32_t pci_class);

/* ---- Consumable capacity (the NVIDIA driver's GPU sharing) ---- */

enum hwdb_cc_kind {
	HWDB_CC_DISABLED,       /* "" or "disabled": each GPU serves one claim */
	HWDB_CC_SHARES,         /* "N": N shares, a claim takes 1 by default */
	HWDB_CC_MEMORY,         /* "memory": no memory request = whole GPU */
	HWDB_CC_UNLIMITED,      /* "unlimited": memory request defaults to 0 */
};

struct hwdb_cc_mode {
	enum hwdb_cc_kind kind;
	int64_t shares;         /* HWDB_CC_SHARES only */
};

/* Parse the karpenter.k8s.aws/nvidia-consumable-capacity value the way
 * Karpenter does. s may be NULL (disabled). -EINVAL for anything else than
 * the four forms ("0", "-1", "4.5", "shares", "1Gi" are refused). */
int hwdb_cc_parse(const char *s, struct hwdb_cc_mode *out, struct dt_err *err);
/* "disabled", "memory", "unlimited" or the share count. buf >= 24 bytes. */
const char *hwdb_cc_name(const struct hwdb_cc_mode *m, char *buf, size_t len);

/* Driver and pool names the slices use. */
#define HWDB_DRIVER_GPU "gpu.nvidia.com"
#define HWDB_DRIVER_EFA "dra.net"

/* Attributes whose value is only known on the node but is the same on every
 * GPU of a node (NULL-terminated): driverVersion, cudaDriverVersion. A
 * matchAttribute constraint on one of them is satisfiable by any set of
 * GPUs of one node. The slices carry them in the annotation
 * HWDB_ANNOTATION_NODE_UNIFORM (comma-separated), not as attributes. */
extern const char *const hwdb_gpu_node_uniform_attrs[];
#define HWDB_ANNOTATION_NODE_UNIFORM "dratopo.io/node-uniform-attributes"
/* On a slice whose device names stand in for names only the node will
 * know (DRANET's pci-<address> for EFAs): "true". */
#define HWDB_ANNOTATION_PLACEHOLDER_NAMES "dratopo.io/placeholder-device-names"

/* ---- The ResourceSlices the drivers publish ---- */

struct model_set;
struct model_object;
struct doc_arena;
struct doc_node;

/* The most slices hwdb_slices* builds for one node: the GPU driver's (one,
 * or with MIG up to 64 of devices and 16 of counter sets for 128 GPUs)
 * and DRANET's one. */
#define HWDB_MAX_SLICES 81

/* Build, in set, the resource.k8s.io/v1 ResourceSlices the NVIDIA driver
 * (gpu.nvidia.com: devices gpu-N) and DRANET (dra.net: devices efa-N, or
 * the node's pci-<address> names when t->node_names)
 * publish on a node of type t named node_name, with the consumable-capacity
 * mode applied (NULL: disabled). A driver with no device on the type
 * publishes no slice. The slices are pool <node_name>, generation 1, one
 * slice per pool, defaults applied. out[0..*n_out) receives them (GPU slice
 * first); the set owns them. Returns 0, -ENOMEM, or -EINVAL for a node
 * name that is not a DNS subdomain. */
int hwdb_slices(const struct hwdb_type *t, const struct hwdb_cc_mode *mode, const char *node_name,
		struct model_set *set, struct model_object **out, size_t *n_out,
		struct dt_err *err);

/* hwdb_slices with the NVIDIA driver's MIG mode as well (hwdb_mig.h):
 * opts->mig NULL or HWDB_MIG_NONE is hwdb_slices. A static layout turns
 * the GPUs it partitions into MIG devices (type mig, named
 * gpu-N-mig-<profile>-<slices>); dynamic adds, per GPU, a counter set of
 * its engines, memory and memory slices, and every placement of every
 * profile as a device consuming from it (the whole GPU consumes all of
 * it), split over as many slices of the pool as the API's limits need.
 * -EINVAL (with the reason) for a layout the type's GPUs cannot take,
 * -ENOTSUP when they have no MIG, -E2BIG past HWDB_MAX_SLICES. */
struct hwdb_mig_layout;
struct hwdb_slice_opts {
	const struct hwdb_cc_mode *cc;          /* NULL: disabled */
	const struct hwdb_mig_layout *mig;      /* NULL: no MIG */
};
int hwdb_slices_opts(const struct hwdb_type *t, const struct hwdb_slice_opts *opts,
		     const char *node_name, struct model_set *set, struct model_object **out,
		     size_t *n_out, struct dt_err *err);

/* The facts of an entry as a JSON-ready tree (what `dratopo hwdb show -o
 * json` prints as "instanceType"), built in arena a; NULL on OOM. */
struct doc_node *hwdb_type_encode(const struct hwdb_type *t, struct doc_arena *a);

#endif
