/* topo_bdf.h - PCI addresses ("0000:53:00.0") in the form Kubernetes accepts.
 *
 * Both the agent (reading sysfs) and the coordinator (reading a report)
 * name devices this way, so parsing and ordering live here, with the
 * topology model, and never touch the host. */
#ifndef DT_TOPO_BDF_H
#define DT_TOPO_BDF_H

#include <stddef.h>
#include <stdint.h>

/* "pci0000:44", "0000:53:00.0" and room to spare. */
#define TOPO_NAME_MAX 32

/* A PCI address: domain, bus, device (slot), function. */
struct topo_bdf {
	uint32_t domain;
	uint8_t bus, dev, func;
};

/* Parse a sysfs device name, "0000:53:00.0". Accepts exactly the form
 * Kubernetes accepts (lower-case hex, a 4-digit domain, device < 0x20,
 * function < 8). 0 or -EINVAL. */
int topo_bdf_parse(const char *s, struct topo_bdf *out);
/* "DDDD:BB:DD.F" into buf (at least 13 bytes). */
void topo_bdf_format(const struct topo_bdf *b, char *buf, size_t len);
/* Order by domain, bus, device, function (for qsort-style comparisons). */
int topo_bdf_cmp(const struct topo_bdf *a, const struct topo_bdf *b);

#endif
