/* probe.c - probe_run(): from a sysfs tree to the node's GPUs, EFAs and
 * their PCIe roots. See probe.h. */
#include "probe.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hwdb.h"
#include "pci_enum.h"

/* NUMA nodes looked at for the memory total; Linux allows 1024. */
#define PROBE_MAX_NUMA_NODES 1024

void probe_sys_dir(const char *root, char *buf, size_t len)
{
	size_t n = strlen(root);

	/* "/", "/x/" and "/x" all work: drop trailing slashes first. */
	while (n > 1 && root[n - 1] == '/')
		n--;
	if (n == 1 && root[0] == '/')
		snprintf(buf, len, "/sys");
	else
		snprintf(buf, len, "%.*s/sys", (int)n, root);
}

/* ---- Reading a device's sysfs attributes ---- */

/* A device's directory, bus/pci/devices/<bdf>: its path, and an O_PATH
 * descriptor of it (-1 if it could not be opened: each file is then
 * looked up from the root). Its files are read relative to it, so that
 * the long path through the bus's link is walked once, not per file. */
struct dev_dir {
	char path[PROBE_PATH_MAX];
	int fd;
};

static void dev_dir_open(const char *sys, const char *bdf, struct dev_dir *dd)
{
	snprintf(dd->path, sizeof(dd->path), "%s/bus/pci/devices/%s", sys, bdf);
	dd->fd = open(dd->path, O_PATH | O_DIRECTORY | O_CLOEXEC);
}

/* Read devices/<bdf>/<attr> into buf. Returns 0, or the negative reason
 * (already a warning unless it is a plain -ENOENT, which callers decide
 * about). */
static int dev_attr(const struct dev_dir *dd, const char *bdf, const char *attr, char *buf,
		    size_t len, struct dt_diags *w)
{
	char path[PROBE_PATH_MAX];
	struct dt_err e = { 0 };
	int rc;

	snprintf(path, sizeof(path), "%s/%s", dd->path, attr);
	rc = dd->fd >= 0 ? probe_read_attr_at(dd->fd, attr, path, buf, len, &e)
			 : probe_read_attr(path, buf, len, &e);
	if (rc && rc != -ENOENT)
		dt_diags_add(w, "%s: %s", bdf, e.msg);
	return rc;
}

static void read_numa(const struct dev_dir *dd, struct topo_device *d, struct dt_diags *w)
{
	char buf[PROBE_ATTR_MAX];
	long v;

	d->numa_node = -1;
	/* A kernel without NUMA support has no numa_node file: unknown, and
	 * nothing to warn about. */
	if (dev_attr(dd, d->bdf_str, "numa_node", buf, sizeof(buf), w))
		return;
	if (probe_parse_int(buf, -1, PROBE_MAX_NUMA_NODES - 1, &v)) {
		dt_diags_add(w, "%s: numa_node \"%s\" is not a NUMA node; treated as unknown",
			     d->bdf_str, buf);
		return;
	}
	d->numa_node = (int)v;
}

static void read_link(const struct dev_dir *dd, struct topo_device *d, struct dt_diags *w)
{
	char buf[PROBE_ATTR_MAX];
	long v;

	if (dev_attr(dd, d->bdf_str, "current_link_speed", buf, sizeof(buf), w) == 0 &&
	    strcmp(buf, "Unknown") != 0) {
		if (strlen(buf) < sizeof(d->link_speed))
			snprintf(d->link_speed, sizeof(d->link_speed), "%s", buf);
		else
			dt_diags_add(w, "%s: current_link_speed \"%s\" is too long", d->bdf_str,
				     buf);
	}
	if (dev_attr(dd, d->bdf_str, "current_link_width", buf, sizeof(buf), w) == 0) {
		if (probe_parse_int(buf, 0, 64, &v) == 0)
			d->link_width = (int)v;
		else
			dt_diags_add(w, "%s: current_link_width \"%s\" is not a lane count",
				     d->bdf_str, buf);
	}
}

static void read_driver(const struct dev_dir *dd, struct topo_device *d)
{
	char path[PROBE_PATH_MAX], target[PROBE_PATH_MAX];
	const char *base;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/driver", dd->path);
	n = dd->fd >= 0 ? readlinkat(dd->fd, "driver", target, sizeof(target) - 1)
			: readlink(path, target, sizeof(target) - 1);
	if (n <= 0)
		return;
	target[n] = '\0';
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	snprintf(d->driver, sizeof(d->driver), "%s", base);
}

/* ---- Classification ---- */

/* Whether rec is a GPU or an EFA (d->kind says which); 0 when it is
 * neither. */
static int classify(const struct probe_pci_dev *rec, struct topo_device *d)
{
	uint32_t base = rec->class_code >> 8;   /* class and subclass */

	if (hwdb_pci_ignored(rec->vendor, rec->device, rec->class_code))
		return 0;
	if (hwdb_pci_efa(rec->vendor, rec->device))
		d->kind = TOPO_EFA;
	/* The NVIDIA driver and aws-ofi-nccl take any NVIDIA display
	 * controller (VGA 0300 or 3D 0302) as a GPU, known to hwdb or not. */
	else if (rec->vendor == HWDB_PCI_VENDOR_NVIDIA && (base == 0x0300 || base == 0x0302))
		d->kind = TOPO_GPU;
	else
		return 0;
	return 1;
}

static void fill_device(const char *sys, const struct probe_pci_dev *rec,
			struct topo_device *d, struct dt_diags *w)
{
	struct dt_err e = { 0 };
	struct dev_dir dd;

	d->bdf = rec->bdf;
	snprintf(d->bdf_str, sizeof(d->bdf_str), "%s", rec->name);
	d->vendor = rec->vendor;
	d->device = rec->device;
	d->class_code = rec->class_code;
	d->has_subsys = rec->has_subsys;
	d->subsys_vendor = rec->subsys_vendor;
	d->subsys_device = rec->subsys_device;
	topo_device_name(d);
	if (!d->model)
		dt_diags_add(w, "%s: %s %04x:%04x is not in hwdb's PCI tables; model unknown",
			     d->bdf_str, topo_kind_name(d->kind), d->vendor, d->device);
	if (probe_pcie_root(sys, d->bdf_str, d->pcie_root, sizeof(d->pcie_root), &e))
		dt_diags_add(w, "%s: pcieRoot unknown: %s", d->bdf_str, e.msg);
	dev_dir_open(sys, d->bdf_str, &dd);
	read_numa(&dd, d, w);
	read_link(&dd, d, w);
	read_driver(&dd, d);
	if (dd.fd >= 0)
		close(dd.fd);
	if (d->kind == TOPO_EFA &&
	    probe_rdma_name(sys, d->bdf_str, d->rdma_device, sizeof(d->rdma_device), &e))
		dt_diags_add(w, "%s: EFA without an RDMA device (is the efa driver bound?)",
			     d->bdf_str);
	if (rec->config_dead) {
		d->fell_off_bus = true;
		dt_diags_add(w, "%s: config space reads 0xffff: the %s fell off the bus "
			     "(the kernel still lists it)", d->bdf_str,
			     d->kind == TOPO_GPU ? "GPU" : "EFA");
	}
}

/* ---- Host facts ---- */

static int valid_type_name(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isprint((unsigned char)*s))
			return 0;
	return 1;
}

static void read_instance_type(const char *sys, struct topo *t)
{
	char path[PROBE_PATH_MAX], buf[PROBE_ATTR_MAX];
	struct dt_err e = { 0 };
	const char *s = buf;

	snprintf(path, sizeof(path), "%s/devices/virtual/dmi/id/product_name", sys);
	if (probe_read_attr(path, buf, sizeof(buf), &e)) {
		dt_diags_add(&t->warnings, "instance type unknown: %s", e.msg);
		return;
	}
	while (isspace((unsigned char)*s))
		s++;
	if (!valid_type_name(s)) {
		dt_diags_add(&t->warnings, "%s: not a printable name; instance type unknown",
			     path);
		return;
	}
	t->instance_type = strdup(s);
}

/* Count the CPUs of a list like "0-47,96-143". -1 when it does not parse. */
static int count_cpu_list(const char *s)
{
	long total = 0;

	while (*s) {
		char *end;
		long a = strtol(s, &end, 10), b = a;

		if (end == s || a < 0)
			return -1;
		s = end;
		if (*s == '-') {
			b = strtol(s + 1, &end, 10);
			if (end == s + 1 || b < a)
				return -1;
			s = end;
		}
		total += b - a + 1;
		if (total > 1 << 20)
			return -1;
		if (*s == ',')
			s++;
		else if (*s)
			return -1;
	}
	return (int)total;
}

static void read_host_facts(const char *sys, struct topo *t)
{
	char path[PROBE_PATH_MAX], buf[PROBE_ATTR_MAX];
	int64_t kib = 0;

	snprintf(path, sizeof(path), "%s/devices/system/cpu/online", sys);
	if (probe_read_attr(path, buf, sizeof(buf), NULL) == 0) {
		int n = count_cpu_list(buf);

		t->cpus = n > 0 ? n : 0;
	}
	/* "Node 0 MemTotal:  1056757236 kB" is the first line of each node's
	 * meminfo; the file is longer than an attribute, so read it here. */
	for (int node = 0; node < PROBE_MAX_NUMA_NODES; node++) {
		char line[256];
		long long v;
		int got;
		FILE *f;

		snprintf(path, sizeof(path), "%s/devices/system/node/node%d/meminfo", sys, node);
		if (probe_check_file(path) != 0)
			break;
		f = fopen(path, "re");
		if (!f)
			break;
		got = fgets(line, sizeof(line), f) &&
		      sscanf(line, "Node %*d MemTotal: %lld kB", &v) == 1 && v > 0;
		fclose(f);
		if (!got)
			break;
		kib += v;
	}
	t->memory_mib = kib / 1024;
}

/* ---- probe_run ---- */

int probe_run(const char *root, const struct probe_options *opts,
	      struct topo *t, struct dt_err *err)
{
	char sys[PROBE_PATH_MAX];
	struct probe_pci_dev *recs = NULL;
	size_t n_recs = 0;
	int rc;

	memset(t, 0, sizeof(*t));
	dt_diags_init(&t->warnings);
	probe_sys_dir(root, sys, sizeof(sys));
	rc = probe_pci_enum(sys, &recs, &n_recs, &t->warnings, err);
	if (rc) {
		dt_err_prefix(err, "cannot read the PCI devices (is --sysfs-root right?): ");
		goto out;
	}
	if (opts && opts->instance_type)
		t->instance_type = strdup(opts->instance_type);
	else
		read_instance_type(sys, t);
	read_host_facts(sys, t);

	t->devices = calloc(n_recs ? n_recs : 1, sizeof(*t->devices));
	if (!t->devices) {
		rc = dt_err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n_recs; i++) {
		struct topo_device *d = &t->devices[t->n_devices];

		memset(d, 0, sizeof(*d));
		if (!classify(&recs[i], d)) {
			t->n_other++;
			continue;
		}
		fill_device(sys, &recs[i], d, &t->warnings);
		t->n_devices++;
	}
	if (topo_index(t)) {
		rc = dt_err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
out:
	free(recs);
	if (rc)
		topo_free(t);
	return rc;
}
