/* fuzz_sysfs.c - libFuzzer target for the agent's probe: the bytes build a
 * sysfs tree in a temporary directory (up to 6 PCI devices: H100s, EFAs,
 * NVSwitches or anything; every attribute file normal, missing, empty,
 * garbage, oversized, a directory, a FIFO, a dangling link or a link
 * loop; device links that dangle, loop, are directories or leave
 * devices/pci; config spaces that are short or read all ones; a DMI
 * product name of any bytes) and probe_run() reads it. It must return 0
 * (or -ENOENT when the tree has no bus/pci/devices), never crash, hang
 * or leak, and the topology must hold together: GPUs + EFAs = devices,
 * devices in address order, every root's members of its kind, named by
 * that root. The emitters must print it. abort() on a broken promise.
 *
 * The tree is rebuilt for every input under one directory made at the
 * first call, in /dev/shm (or /tmp), removed at exit (not after a crash
 * or a timeout: then it names the tree to look at).
 *
 *   build-fuzz/tests/fuzz_sysfs -max_total_time=600 tests/fuzz/sysfs_corpus */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "doc.h"
#include "gen_src.h"
#include "probe.h"
#include "topo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char root[64];

static void fail(const char *what)
{
	fprintf(stderr, "fuzz_sysfs: %s (tree under %s)\n", what, root);
	abort();
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path) && errno != ENOENT ? -1 : 0;
}

static void rm_tree(void)
{
	char sys[128];

	snprintf(sys, sizeof(sys), "%s/sys", root);
	nftw(sys, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void cleanup(void)
{
	rm_tree();
	rmdir(root);
}

static void mkdirs(const char *path)
{
	char buf[512];

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++) {
		if (*p == '/') {
			*p = '\0';
			mkdir(buf, 0755);
			*p = '/';
		}
	}
	mkdir(buf, 0755);
}

/* Write a regular file. Two devices may share a directory, so path may
 * already be a FIFO: never block on one (ENXIO without a reader). */
static void put(const char *path, const void *data, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NONBLOCK | O_NOFOLLOW, 0644);

	if (fd < 0)
		return;
	if (write(fd, data, n) < 0)
		fprintf(stderr, "fuzz_sysfs: write %s: %s\n", path, strerror(errno));
	close(fd);
}

/* Write attribute file dir/name holding text, or one of the odd forms. */
static void attr(struct gen_src *src, const char *dir, const char *name, const char *text)
{
	char path[512], garbage[24];
	unsigned n;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	switch (gen_pick(src, 16)) {
	case 0:
		return;                                 /* missing */
	case 1:
		put(path, "", 0);                       /* truncated */
		return;
	case 2:
		n = gen_pick(src, sizeof(garbage));
		for (unsigned i = 0; i < n; i++)
			garbage[i] = (char)gen_src_next(src);
		put(path, garbage, n);
		return;
	case 3: {                                       /* far past the 256-byte bound */
		static char big[16384];

		memset(big, '7', sizeof(big));
		put(path, big, sizeof(big));
		return;
	}
	case 4:
		mkdir(path, 0755);
		return;
	case 5:
		if (symlink(name, path))                /* a loop */
			return;
		return;
	case 6:
		if (symlink("nowhere", path))           /* dangling */
			return;
		return;
	case 7:
		mkfifo(path, 0644);
		return;
	}
	put(path, text, strlen(text));
}

static const struct {
	const char *vendor, *device, *cls;
} kinds[] = {
	{ "0x10de", "0x2330", "0x030200" },     /* H100 SXM5 */
	{ "0x1d0f", "0xefa1", "0x020000" },     /* EFAv2 */
	{ "0x10de", "0x22a3", "0x068000" },     /* NVSwitch */
	{ "0x1d0f", "0xec20", "0x020000" },     /* ENA */
};

/* The config space: a header with the ids, too short, or all ones. */
static void config(struct gen_src *src, const char *dir, int kind)
{
	uint8_t cfg[256];
	char path[512];
	size_t n = sizeof(cfg);
	unsigned v = (unsigned)strtoul(kinds[kind].vendor, NULL, 16);
	unsigned d = (unsigned)strtoul(kinds[kind].device, NULL, 16);

	snprintf(path, sizeof(path), "%s/config", dir);
	memset(cfg, 0, sizeof(cfg));
	cfg[0] = v & 0xff, cfg[1] = v >> 8, cfg[2] = d & 0xff, cfg[3] = d >> 8;
	switch (gen_pick(src, 8)) {
	case 0:
		memset(cfg, 0xff, sizeof(cfg));         /* fell off the bus */
		break;
	case 1:
		n = gen_pick(src, 64);
		break;
	case 2:
		attr(src, dir, "config", "");
		return;
	}
	put(path, cfg, n);
}

static void device(struct gen_src *src, const char *sys, int i)
{
	int kind = (int)gen_pick(src, 4), hb = 0x30 + 0x11 * (int)gen_pick(src, 3);
	int bus = hb + 1 + (int)gen_pick(src, 4);
	char bdf[32], dir[512], link[512], target[512], val[64];

	if (gen_bool(src, 5))
		snprintf(bdf, sizeof(bdf), "%c%c:%d", (char)('0' + gen_pick(src, 70)), 'x', i);
	else
		snprintf(bdf, sizeof(bdf), "0000:%02x:%02x.%d", bus, (int)gen_pick(src, 32),
			 (int)gen_pick(src, 8));
	/* Under a host bridge, behind a bridge, or outside devices/pci. */
	switch (gen_pick(src, 6)) {
	case 0:
		snprintf(target, sizeof(target), "devices/virtual/misc/%s", bdf);
		break;
	case 1:
		snprintf(target, sizeof(target), "devices/pci0000:%02x/0000:%02x:00.0/%s", hb, hb, bdf);
		break;
	default:
		snprintf(target, sizeof(target), "devices/pci0000:%02x/%s", hb, bdf);
	}
	snprintf(dir, sizeof(dir), "%s/%s", sys, target);
	snprintf(link, sizeof(link), "%s/bus/pci/devices/%s", sys, bdf);
	switch (gen_pick(src, 10)) {
	case 0:
		if (symlink("../../../devices/gone", link))     /* dangling */
			break;
		break;
	case 1:
		if (symlink(bdf, link))                         /* a loop */
			break;
		break;
	case 2:
		snprintf(dir, sizeof(dir), "%s", link);         /* a directory */
		break;
	default: {
		char rel[600];

		snprintf(rel, sizeof(rel), "../../../%s", target);
		if (symlink(rel, link))
			break;
	}
	}
	mkdirs(dir);
	attr(src, dir, "vendor", kinds[kind].vendor);
	attr(src, dir, "device", kinds[kind].device);
	attr(src, dir, "class", kinds[kind].cls);
	attr(src, dir, "subsystem_vendor", "0x10de\n");
	attr(src, dir, "subsystem_device", "0x16c1\n");
	snprintf(val, sizeof(val), "%d\n", (int)gen_pick(src, 4) - 1);
	attr(src, dir, "numa_node", val);
	attr(src, dir, "current_link_speed", "32.0 GT/s PCIe\n");
	attr(src, dir, "current_link_width", "16\n");
	attr(src, dir, "revision", "0xa1\n");
	config(src, dir, kind);
	if (gen_bool(src, 50)) {
		char drv[600];

		snprintf(drv, sizeof(drv), "%s/driver", dir);
		if (symlink(gen_bool(src, 80) ? "../../../bus/pci/drivers/nvidia" : "driver", drv))
			return;
	}
	if (kind == 1 && gen_bool(src, 70)) {
		char ib[600];

		snprintf(ib, sizeof(ib), "%s/infiniband/rdmap%ds0", dir, bus);
		if (gen_bool(src, 80))
			mkdirs(ib);
		else
			attr(src, dir, "infiniband", "");
	}
}

static void build(struct gen_src *src)
{
	char sys[128], path[256];
	char product[32];
	unsigned n;

	snprintf(sys, sizeof(sys), "%s/sys", root);
	snprintf(path, sizeof(path), "%s/bus/pci/drivers/nvidia", sys);
	mkdirs(path);
	if (gen_bool(src, 97)) {
		snprintf(path, sizeof(path), "%s/bus/pci/devices", sys);
		mkdirs(path);
	}
	snprintf(path, sizeof(path), "%s/devices/virtual/dmi/id", sys);
	mkdirs(path);
	n = gen_pick(src, sizeof(product));
	for (unsigned i = 0; i < n; i++)
		product[i] = (char)gen_src_next(src);
	product[n] = '\0';
	attr(src, path, "product_name", gen_bool(src, 50) ? "p5.48xlarge\n" : product);
	snprintf(path, sizeof(path), "%s/devices/system/cpu", sys);
	mkdirs(path);
	attr(src, path, "online", "0-191\n");
	snprintf(path, sizeof(path), "%s/devices/system/node/node0", sys);
	mkdirs(path);
	attr(src, path, "meminfo", "Node 0 MemTotal:       1048576 kB\n");
	for (int i = 0, k = (int)gen_pick(src, 7); i < k; i++)
		device(src, sys, i);
}

static void check(const struct topo *t)
{
	struct strbuf sb = STRBUF_INIT;
	struct doc_arena *a;
	struct doc_node *n;
	size_t gpus = 0, efas = 0;

	for (size_t i = 0; i < t->n_devices; i++) {
		const struct topo_device *d = &t->devices[i];

		gpus += d->kind == TOPO_GPU;
		efas += d->kind == TOPO_EFA;
		if (i && topo_bdf_cmp(&t->devices[i - 1].bdf, &d->bdf) > 0)
			fail("devices out of address order");
		if (!memchr(d->pcie_root, '\0', sizeof(d->pcie_root)) ||
		    !memchr(d->bdf_str, '\0', sizeof(d->bdf_str)))
			fail("an unterminated name");
	}
	if (gpus != t->n_gpus || efas != t->n_efas || gpus + efas != t->n_devices)
		fail("the GPU and EFA counts do not add up");
	for (size_t r = 0; r < t->n_roots; r++) {
		const struct topo_root *pr = &t->roots[r];

		for (size_t k = 0; k < pr->n_gpus + pr->n_efas; k++) {
			bool gpu = k < pr->n_gpus;
			size_t i = gpu ? pr->gpus[k] : pr->efas[k - pr->n_gpus];

			if (i >= t->n_devices || t->devices[i].kind != (gpu ? TOPO_GPU : TOPO_EFA) ||
			    strcmp(t->devices[i].pcie_root, pr->name))
				fail("a root lists a device that is not its own");
		}
	}
	if (topo_emit_text(t, &sb))
		fail("topo_emit_text failed");
	if (!(a = doc_arena_new()) || !(n = topo_to_doc(t, a)) || doc_emit_json(n, 2, &sb))
		fail("the JSON form failed");
	doc_arena_free(a);
	sb_free(&sb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct topo t;
	struct probe_options opts = { 0 };
	struct dt_err err = { 0 };
	struct gen_src src;
	char pci[128];
	struct stat st;
	int rc;

	if (!root[0]) {
		/* tmpfs when there is one: the tree is rebuilt for every input. */
		snprintf(root, sizeof(root), "%s/fuzz_sysfs.XXXXXX",
			 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
		if (!mkdtemp(root))
			fail("mkdtemp");
		atexit(cleanup);
	}
	rm_tree();
	gen_src_bytes(&src, data, size);
	build(&src);
	memset(&t, 0, sizeof(t));
	rc = probe_run(root, &opts, &t, &err);
	snprintf(pci, sizeof(pci), "%s/sys/bus/pci/devices", root);
	if (getenv("FUZZ_SYSFS_VERBOSE"))       /* for triage: what the probe saw */
		fprintf(stderr, "fuzz_sysfs: rc %d (%s), %zu GPUs, %zu EFAs, %zu roots, "
			"%zu warnings\n", rc, err.msg, t.n_gpus, t.n_efas, t.n_roots, t.warnings.n);
	if (rc == 0)
		check(&t);
	else if (!(rc == -ENOENT && lstat(pci, &st) != 0) && rc != -ENOMEM)
	{
		fprintf(stderr, "fuzz_sysfs: probe_run: %d: %s\n", rc, err.msg);
		fail("probe_run failed on a tree with a PCI bus");
	}
	topo_free(&t);
	return 0;
}
