/* pci_enum.h - the PCI devices of a sysfs tree, as libpci reads them.
 *
 * libpci (pciutils) is pointed at the tree's bus/pci with its sysfs back
 * end (PCI_ACCESS_SYS_BUS_PCI, parameter "sysfs.path") and asked for the
 * kernel's view of each device: ids, class, subsystem ids. It also reads
 * the first word of config space, which tells a device that fell off the
 * bus (all ones) from a live one.
 *
 * libpci reports fatal problems through an error callback that must not
 * return and by default exits the process. pci_enum.c installs handlers
 * that turn every libpci error into a warning about the device being read
 * (see the comment on guard_error there), so a broken host never takes the
 * agent down. */
#ifndef DT_PCI_ENUM_H
#define DT_PCI_ENUM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "err.h"
#include "sysfs_probe.h"

struct probe_pci_dev {
	struct topo_bdf bdf;
	char name[TOPO_NAME_MAX];      /* "0000:53:00.0" */
	uint16_t vendor, device;
	uint32_t class_code;            /* sysfs `class`: 0x030200 */
	bool has_subsys;
	uint16_t subsys_vendor, subsys_device;
	/* Filled only for devices that may be GPUs or EFAs (NVIDIA display
	 * controllers, EFA ids); reading every bridge's costs time. */
	bool config_read;
	bool config_dead;               /* vendor word reads 0xffff */
};

/* Enumerate the PCI devices under sys (the sysfs directory, "/sys").
 * *out (owned by the caller, free()) gets the devices that could be read,
 * sorted by address; every entry that could not is named in warnings.
 * Fails (-ENOENT, -ENOMEM, -EIO) only when nothing can be enumerated. */
int probe_pci_enum(const char *sys, struct probe_pci_dev **out, size_t *n,
		   struct dt_diags *warnings, struct dt_err *err);

#endif
