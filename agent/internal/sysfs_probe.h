/* sysfs_probe.h - reading the PCI part of a sysfs tree, safely.
 *
 * Everything the agent learns about the host comes through here or through
 * libpci (pci_enum.c), and always from below one directory: the `sys/`
 * directory of the root it is given ("/sys" on a live host, a fixture tree
 * in tests). Nothing else on the host is read.
 *
 * sysfs can be broken in ways that hurt a careless reader: dangling or
 * looping links, a FIFO or a directory where a file should be, values that
 * are truncated, huge or nonsense. Every read here is bounded, refuses
 * anything but a regular file, never blocks, and says what was wrong in
 * struct dt_err so the caller can warn and carry on. */
#ifndef DT_SYSFS_PROBE_H
#define DT_SYSFS_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "topo_bdf.h"
#include "err.h"

/* Bytes read from one attribute file; sysfs values are one short line. */
#define PROBE_ATTR_MAX 256
/* Entries of bus/pci/devices looked at; a real host has a few hundred. */
#define PROBE_MAX_PCI_ENTRIES 8192
/* Longest path built under the sysfs root. */
#define PROBE_PATH_MAX 4096
/* Read one attribute file: at most PROBE_ATTR_MAX bytes, trailing blanks
 * and newlines removed, into buf. Fails with -ENOENT (missing or dangling
 * link), -ELOOP, -EACCES, -EISDIR/-EINVAL (not a regular file), -EFBIG
 * (longer than the limit or than len), -ENODATA (empty), -EIO; err names
 * the file. */
int probe_read_attr(const char *path, char *buf, size_t len, struct dt_err *err);
/* The same for file relative to the directory dirfd (AT_FDCWD: the
 * current one); messages name shown, the file's whole path. */
int probe_read_attr_at(int dirfd, const char *file, const char *shown, char *buf, size_t len,
		       struct dt_err *err);

/* Whether path names a regular file that can be opened for reading
 * (following links); 0 or the negative reason, as probe_read_attr. */
int probe_check_file(const char *path);
/* The same for path relative to the directory dirfd (AT_FDCWD: as above). */
int probe_check_file_at(int dirfd, const char *path);

/* A sysfs id value "0x10de" (hex with the 0x prefix, at most max). 0 or
 * -EINVAL. */
int probe_parse_hex(const char *s, uint32_t max, uint32_t *out);
/* A decimal integer in [min, max]. 0 or -EINVAL. */
int probe_parse_int(const char *s, long min, long max, long *out);

/* The PCIe root of a device exactly as Kubernetes computes
 * resource.kubernetes.io/pcieRoot: read the link sys/bus/pci/devices/BDF,
 * clean its target lexically (no link is followed), require it to lie under
 * devices/pci... and to end in BDF, and take the first component under
 * devices/ ("pci0000:44"). sys is the sysfs directory ("/sys"). root gets
 * at least TOPO_NAME_MAX bytes. 0, or -EINVAL / -ENOENT with err saying
 * which rule failed. */
int probe_pcie_root(const char *sys, const char *bdf, char *root, size_t len,
		    struct dt_err *err);

/* The RDMA device of a PCI device: the single entry of its infiniband/
 * directory ("rdmap79s0"). -ENOENT when it has none. */
int probe_rdma_name(const char *sys, const char *bdf, char *buf, size_t len,
		    struct dt_err *err);

#endif
