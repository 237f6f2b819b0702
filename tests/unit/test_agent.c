/* test_agent.c - the agent's probe, verification and slice prediction on
 * the fake sysfs trees of tests/fixtures/agent/mksysfs.sh (built into the
 * build directory at test time).
 *
 * Expected values come from hwdb where hwdb holds them (the fixtures are
 * built from the same facts), so a test fails when probe and hwdb disagree,
 * not when a number typed here goes stale. */
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "doc.h"
#include "dt_test.h"
#include "hwdb.h"
#include "model.h"
#include "probe.h"
#include "topo_slices.h"
#include "sysfs_probe.h"
#include "topo.h"
#include "topo_verify.h"

#define FIXTURES DT_BINARY_DIR "/fixtures/agent"

static const char *fx(const char *name)
{
	static char path[4096];

	snprintf(path, sizeof(path), "%s/%s", FIXTURES, name);
	return path;
}

/* Build the trees when the suite runs on its own (ctest builds them first
 * through the agent_fixtures test). */
static int suite_init(void)
{
	struct stat st;
	char cmd[8192];

	if (stat(FIXTURES "/broken/sys", &st) == 0)
		return 0;
	snprintf(cmd, sizeof(cmd), "bash '%s/tests/fixtures/agent/mksysfs.sh' '%s' >/dev/null",
		 DT_SOURCE_DIR, FIXTURES);
	return system(cmd) == 0 ? 0 : -1;
}

static int probe_fixture(const char *name, struct topo *t)
{
	struct dt_err err = { 0 };
	int rc = probe_run(fx(name), NULL, t, &err);

	if (rc)
		fprintf(stderr, "\n  probe %s: %s\n", name, err.msg);
	return rc;
}

static const struct topo_device *find_dev(const struct topo *t, const char *bdf)
{
	for (size_t i = 0; i < t->n_devices; i++)
		if (strcmp(t->devices[i].bdf_str, bdf) == 0)
			return &t->devices[i];
	return NULL;
}

static int has_warning(const struct topo *t, const char *a, const char *b)
{
	for (size_t i = 0; i < t->warnings.n; i++)
		if (strstr(t->warnings.msgs[i], a) && (!b || strstr(t->warnings.msgs[i], b)))
			return 1;
	return 0;
}

static int has_line(const struct dt_diags *d, const char *a, const char *b)
{
	for (size_t i = 0; i < d->n; i++)
		if (strstr(d->msgs[i], a) && (!b || strstr(d->msgs[i], b)))
			return 1;
	return 0;
}

/* ---- sysfs reading ---- */

static void test_bdf_parse(void)
{
	struct topo_bdf b;
	char buf[16];

	CU_ASSERT_EQUAL(topo_bdf_parse("0000:53:00.0", &b), 0);
	CU_ASSERT_EQUAL(b.bus, 0x53);
	topo_bdf_format(&b, buf, sizeof(buf));
	DT_ASSERT_STR(buf, "0000:53:00.0");
	CU_ASSERT_EQUAL(topo_bdf_parse("0000:46:01.4", &b), 0);
	CU_ASSERT_EQUAL(b.dev, 1);
	CU_ASSERT_EQUAL(b.func, 4);
	/* Kubernetes' rules: lower case, 4-digit domain, device < 0x20, function < 8 */
	CU_ASSERT_EQUAL(topo_bdf_parse("0000:5A:00.0", &b), -EINVAL);
	CU_ASSERT_EQUAL(topo_bdf_parse("00000000:53:00.0", &b), -EINVAL);
	CU_ASSERT_EQUAL(topo_bdf_parse("0000:53:20.0", &b), -EINVAL);
	CU_ASSERT_EQUAL(topo_bdf_parse("0000:53:00.8", &b), -EINVAL);
	CU_ASSERT_EQUAL(topo_bdf_parse("garbage", &b), -EINVAL);
	CU_ASSERT_EQUAL(topo_bdf_parse("", &b), -EINVAL);
}

static void test_parse_values(void)
{
	uint32_t v;
	long l;

	CU_ASSERT_EQUAL(probe_parse_hex("0x10de", 0xffff, &v), 0);
	CU_ASSERT_EQUAL(v, 0x10de);
	CU_ASSERT_EQUAL(probe_parse_hex("0x030200", 0xffffff, &v), 0);
	CU_ASSERT_EQUAL(v, 0x030200);
	CU_ASSERT_EQUAL(probe_parse_hex("10de", 0xffff, &v), -EINVAL);
	CU_ASSERT_EQUAL(probe_parse_hex("0x1ffff", 0xffff, &v), -EINVAL);
	CU_ASSERT_EQUAL(probe_parse_hex("0x", 0xffff, &v), -EINVAL);
	CU_ASSERT_EQUAL(probe_parse_int("-1", -1, 1023, &l), 0);
	CU_ASSERT_EQUAL(l, -1);
	CU_ASSERT_EQUAL(probe_parse_int("banana", -1, 1023, &l), -EINVAL);
	CU_ASSERT_EQUAL(probe_parse_int("7x", -1, 1023, &l), -EINVAL);
	CU_ASSERT_EQUAL(probe_parse_int("99999", -1, 1023, &l), -EINVAL);
}

static void test_read_attr_refuses_traps(void)
{
	char dir[] = "/tmp/dt_agent_XXXXXX", path[4200], buf[64];
	struct dt_err err = { 0 };
	FILE *f;

	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	/* a FIFO must be refused, not block the reader */
	snprintf(path, sizeof(path), "%s/fifo", dir);
	CU_ASSERT_EQUAL_FATAL(mkfifo(path, 0600), 0);
	CU_ASSERT_EQUAL(probe_read_attr(path, buf, sizeof(buf), &err), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "not a regular file"));
	unlink(path);
	/* a directory */
	CU_ASSERT_EQUAL(probe_read_attr(dir, buf, sizeof(buf), &err), -EISDIR);
	/* an empty (truncated) file */
	snprintf(path, sizeof(path), "%s/empty", dir);
	f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fclose(f);
	CU_ASSERT_EQUAL(probe_read_attr(path, buf, sizeof(buf), &err), -ENODATA);
	/* a value longer than any sysfs attribute */
	f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	for (int i = 0; i < 1000; i++)
		fputc('x', f);
	fclose(f);
	CU_ASSERT_EQUAL(probe_read_attr(path, buf, sizeof(buf), &err), -EFBIG);
	/* a normal value loses its newline */
	f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs("0x10de\n", f);
	fclose(f);
	CU_ASSERT_EQUAL(probe_read_attr(path, buf, sizeof(buf), &err), 0);
	DT_ASSERT_STR(buf, "0x10de");
	unlink(path);
	/* a dangling link */
	snprintf(path, sizeof(path), "%s/dangling", dir);
	CU_ASSERT_EQUAL(symlink("nowhere", path), 0);
	CU_ASSERT_EQUAL(probe_read_attr(path, buf, sizeof(buf), &err), -ENOENT);
	unlink(path);
	rmdir(dir);
}

static void test_pcie_root_rule(void)
{
	char sys[4096], root[TOPO_NAME_MAX];
	struct dt_err err = { 0 };

	probe_sys_dir(fx("p5.48xlarge"), sys, sizeof(sys));
	CU_ASSERT_EQUAL(probe_pcie_root(sys, "0000:53:00.0", root, sizeof(root), &err), 0);
	DT_ASSERT_STR(root, "pci0000:44");
	/* a bridge has a root too */
	CU_ASSERT_EQUAL(probe_pcie_root(sys, "0000:45:00.0", root, sizeof(root), &err), 0);
	DT_ASSERT_STR(root, "pci0000:44");
	CU_ASSERT_EQUAL(probe_pcie_root(sys, "", root, sizeof(root), &err), -EINVAL);
	DT_ASSERT_STR(err.msg, "PCI Bus ID cannot be empty");
	CU_ASSERT_EQUAL(probe_pcie_root(sys, "0000:53:00", root, sizeof(root), &err), -EINVAL);
	DT_ASSERT_STR(err.msg, "invalid PCI Bus ID format: 0000:53:00");
	CU_ASSERT_EQUAL(probe_pcie_root(sys, "0000:ee:00.0", root, sizeof(root), &err), -ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "No such file"));

	probe_sys_dir(fx("broken"), sys, sizeof(sys));
	CU_ASSERT_EQUAL(probe_pcie_root(sys, "0000:7c:00.0", root, sizeof(root), &err), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "must start with devices/pci"));
	/* the looping link is read, never followed: its target is no path */
	CU_ASSERT_EQUAL(probe_pcie_root(sys, "0000:7e:00.0", root, sizeof(root), &err), -EINVAL);
	CU_ASSERT_STRING_EQUAL(root, "");
}

static void test_sys_dir(void)
{
	char buf[64];

	probe_sys_dir("/", buf, sizeof(buf));
	DT_ASSERT_STR(buf, "/sys");
	probe_sys_dir("/tmp/x/", buf, sizeof(buf));
	DT_ASSERT_STR(buf, "/tmp/x/sys");
}

/* ---- Probing every fixture against hwdb ---- */

/* The probe of a fixture of a known type has hwdb's devices: the same
 * counts, every GPU of hwdb's model, the same multiset of pcieRoots per
 * kind, and the NUMA nodes hwdb knows. */
static void check_matches_hwdb(const char *fixture, const char *type_name)
{
	const struct hwdb_type *ty = hwdb_lookup(type_name);
	struct topo t;

	CU_ASSERT_PTR_NOT_NULL_FATAL(ty);
	CU_ASSERT_EQUAL_FATAL(probe_fixture(fixture, &t), 0);
	DT_ASSERT_STR(t.instance_type, type_name);
	CU_ASSERT_EQUAL(t.n_gpus, ty->n_gpus);
	CU_ASSERT_EQUAL(t.n_efas, ty->n_efas);
	CU_ASSERT_EQUAL(t.warnings.n, 0);
	for (size_t k = 0; k < 2; k++) {
		const struct hwdb_device *hd = k ? ty->efas : ty->gpus;
		size_t hn = k ? ty->n_efas : ty->n_gpus;
		enum topo_kind kind = k ? TOPO_EFA : TOPO_GPU;
		char *used = calloc(t.n_devices + 1, 1);

		CU_ASSERT_PTR_NOT_NULL_FATAL(used);
		/* match each hwdb device to an unused probed one on its root */
		for (size_t i = 0; i < hn; i++) {
			size_t j;

			for (j = 0; j < t.n_devices; j++) {
				const struct topo_device *d = &t.devices[j];

				if (!used[j] && d->kind == kind &&
				    strcmp(d->pcie_root, hd[i].pcie_root) == 0 &&
				    (hd[i].numa_node < 0 || hd[i].numa_node == d->numa_node))
					break;
			}
			if (j == t.n_devices)
				fprintf(stderr, "\n  %s: no %s on %s (numa %d)\n", fixture,
					topo_kind_name(kind), hd[i].pcie_root, hd[i].numa_node);
			CU_ASSERT(j < t.n_devices);
			if (j < t.n_devices)
				used[j] = 1;
		}
		free(used);
	}
	for (size_t i = 0; i < t.n_devices; i++) {
		const struct topo_device *d = &t.devices[i];

		CU_ASSERT_PTR_NOT_NULL(d->model);
		CU_ASSERT_FALSE(d->fell_off_bus);
		if (d->kind == TOPO_GPU) {
			CU_ASSERT_EQUAL(d->device, ty->gpu_device);
			CU_ASSERT_EQUAL(d->vendor, HWDB_PCI_VENDOR_NVIDIA);
		} else {
			CU_ASSERT_EQUAL(d->device, ty->efa_device);
			/* rdma-core's name: rdmap<bus>s<slot> */
			char want[32];

			snprintf(want, sizeof(want), "rdmap%ds%d", d->bdf.bus, d->bdf.dev);
			DT_ASSERT_STR(d->rdma_device, want);
		}
	}
	topo_free(&t);
}

static void test_probe_known_types(void)
{
	check_matches_hwdb("p5.48xlarge", "p5.48xlarge");
	check_matches_hwdb("p4d.24xlarge", "p4d.24xlarge");
	check_matches_hwdb("p5en.48xlarge", "p5en.48xlarge");
	check_matches_hwdb("g6e.48xlarge", "g6e.48xlarge");
	check_matches_hwdb("g5.48xlarge", "g5.48xlarge");
}

static void test_probe_p5_layout(void)
{
	const struct topo_device *gpu0, *efa0;
	const struct topo_root *r;
	struct topo t;

	CU_ASSERT_EQUAL_FATAL(probe_fixture("p5.48xlarge", &t), 0);
	gpu0 = find_dev(&t, "0000:53:00.0");
	efa0 = find_dev(&t, "0000:4f:00.0");
	CU_ASSERT_PTR_NOT_NULL_FATAL(gpu0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(efa0);
	CU_ASSERT_EQUAL(gpu0->kind, TOPO_GPU);
	DT_ASSERT_STR(gpu0->pcie_root, "pci0000:44");
	CU_ASSERT_EQUAL(gpu0->numa_node, 0);
	DT_ASSERT_STR(gpu0->model, hwdb_pci_gpu(0x10de, 0x2330)->model);
	CU_ASSERT_EQUAL(gpu0->link_width, 16);
	DT_ASSERT_STR(gpu0->link_speed, "32.0 GT/s PCIe");
	DT_ASSERT_STR(gpu0->driver, "nvidia");
	CU_ASSERT(gpu0->has_subsys && gpu0->subsys_vendor == 0x10de);
	CU_ASSERT_EQUAL(efa0->kind, TOPO_EFA);
	DT_ASSERT_STR(efa0->rdma_device, "rdmap79s0");
	CU_ASSERT_EQUAL(efa0->efa_generation, hwdb_pci_efa(0x1d0f, 0xefa1)->generation);
	/* 8 roots of 1 GPU and 4 EFAs each; NVSwitches, ENA, NVMe, bridges
	 * and the VGA device are not devices */
	CU_ASSERT_EQUAL(t.n_roots, 8);
	for (size_t i = 0; i < t.n_roots; i++) {
		CU_ASSERT_EQUAL(t.roots[i].n_gpus, 1);
		CU_ASSERT_EQUAL(t.roots[i].n_efas, 4);
	}
	r = topo_find_root(&t, "pci0000:bb");
	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	CU_ASSERT_EQUAL(t.devices[r->gpus[0]].numa_node, 1);
	CU_ASSERT(t.n_other > 0);
	for (size_t i = 0; i < t.n_devices; i++)
		CU_ASSERT((t.devices[i].class_code >> 16) != 0x06);
	CU_ASSERT_EQUAL(t.cpus, 192);
	topo_free(&t);
}

static void test_probe_flat_and_split(void)
{
	struct topo t;

	/* g5: everything on pci0000:00 and no NUMA information */
	CU_ASSERT_EQUAL_FATAL(probe_fixture("g5.48xlarge", &t), 0);
	CU_ASSERT_EQUAL(t.n_roots, 1);
	DT_ASSERT_STR(t.roots[0].name, "pci0000:00");
	for (size_t i = 0; i < t.n_devices; i++)
		CU_ASSERT_EQUAL(t.devices[i].numa_node, -1);
	topo_free(&t);

	/* g6e: GPUs each on their own root, EFAs never with a GPU */
	CU_ASSERT_EQUAL_FATAL(probe_fixture("g6e.48xlarge", &t), 0);
	CU_ASSERT_EQUAL(t.n_roots, 10);
	for (size_t i = 0; i < t.n_roots; i++)
		CU_ASSERT(t.roots[i].n_gpus == 0 || t.roots[i].n_efas == 0);
	topo_free(&t);

	/* p4d: no switches; the 6 NVSwitches (class 0680) are noise */
	CU_ASSERT_EQUAL_FATAL(probe_fixture("p4d.24xlarge", &t), 0);
	CU_ASSERT_EQUAL(t.n_roots, 4);
	for (size_t i = 0; i < t.n_roots; i++) {
		CU_ASSERT_EQUAL(t.roots[i].n_gpus, 2);
		CU_ASSERT_EQUAL(t.roots[i].n_efas, 1);
	}
	topo_free(&t);
}

static void test_probe_instance_type_override(void)
{
	struct probe_options o = { "p5e.48xlarge" };
	struct topo t;
	struct dt_err err = { 0 };

	CU_ASSERT_EQUAL_FATAL(probe_run(fx("p5.48xlarge"), &o, &t, &err), 0);
	DT_ASSERT_STR(t.instance_type, "p5e.48xlarge");
	topo_free(&t);
}

static void test_probe_broken_host(void)
{
	const struct topo_device *d;
	struct topo t;

	CU_ASSERT_EQUAL_FATAL(probe_fixture("broken", &t), 0);
	/* trailing blanks of the DMI name are not part of the type */
	DT_ASSERT_STR(t.instance_type, "p5.48xlarge");
	d = find_dev(&t, "0000:64:00.0");
	CU_ASSERT_PTR_NOT_NULL_FATAL(d);
	CU_ASSERT_TRUE(d->fell_off_bus);
	CU_ASSERT(has_warning(&t, "0000:64:00.0", "fell off the bus"));
	d = find_dev(&t, "0000:4f:00.0");
	CU_ASSERT_PTR_NOT_NULL_FATAL(d);
	CU_ASSERT_EQUAL(d->numa_node, -1);
	CU_ASSERT_STRING_EQUAL(d->link_speed, "");
	CU_ASSERT(has_warning(&t, "0000:4f:00.0", "\"banana\""));
	CU_ASSERT(has_warning(&t, "current_link_speed", "empty"));
	d = find_dev(&t, "0000:50:00.0");
	CU_ASSERT_PTR_NOT_NULL_FATAL(d);
	CU_ASSERT_STRING_EQUAL(d->rdma_device, "");
	CU_ASSERT_EQUAL(d->link_width, 0);
	CU_ASSERT(has_warning(&t, "0000:50:00.0", "RDMA"));
	/* libpci's errors became warnings: missing class, dangling link, loop */
	CU_ASSERT_PTR_NULL(find_dev(&t, "0000:7d:00.0"));
	CU_ASSERT(has_warning(&t, "0000:7d:00.0", "class"));
	CU_ASSERT(has_warning(&t, "0000:7f:00.0", "skipped"));
	CU_ASSERT(has_warning(&t, "0000:7e:00.0", "symbolic links"));
	CU_ASSERT(has_warning(&t, "garbage", "not a PCI address"));
	/* a device outside any host bridge is kept, without a root */
	d = find_dev(&t, "0000:7c:00.0");
	CU_ASSERT_PTR_NOT_NULL_FATAL(d);
	CU_ASSERT_STRING_EQUAL(d->pcie_root, "");
	CU_ASSERT(has_warning(&t, "0000:7c:00.0", "must start with devices/pci"));
	CU_ASSERT_EQUAL(t.n_gpus, 3);
	CU_ASSERT_EQUAL(t.n_efas, 8);
	topo_free(&t);
}

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[4200];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs(text, f);
	fclose(f);
}

/* Every entry parses, so libpci scans the bus itself; its errors on the
 * bad devices (no class file, dangling link) come back as warnings and
 * the good GPU is still read. */
static void test_probe_libpci_errors_during_scan(void)
{
	char root[] = "/tmp/dt_agent_scan_XXXXXX", dev[4200], path[4200];
	struct topo t;
	struct dt_err err = { 0 };
	static const char *const dirs[] = {
		"sys", "sys/bus", "sys/bus/pci", "sys/bus/pci/devices", "sys/devices",
		"sys/devices/pci0000:10", "sys/devices/pci0000:10/0000:10:1c.0",
		"sys/devices/pci0000:10/0000:10:1d.0",
	};

	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(root));
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", root, dirs[i]);
		CU_ASSERT_EQUAL_FATAL(mkdir(path, 0755), 0);
	}
	snprintf(dev, sizeof(dev), "%s/sys/devices/pci0000:10/0000:10:1c.0", root);
	write_file(dev, "vendor", "0x10de\n");
	write_file(dev, "device", "0x20b0\n");
	write_file(dev, "class", "0x030200\n");
	write_file(dev, "numa_node", "1\n");
	snprintf(dev, sizeof(dev), "%s/sys/devices/pci0000:10/0000:10:1d.0", root);
	write_file(dev, "vendor", "0x10de\n");
	write_file(dev, "device", "0x20b0\n");
	snprintf(path, sizeof(path), "%s/sys/bus/pci/devices/0000:10:1c.0", root);
	CU_ASSERT_EQUAL(symlink("../../../devices/pci0000:10/0000:10:1c.0", path), 0);
	snprintf(path, sizeof(path), "%s/sys/bus/pci/devices/0000:10:1d.0", root);
	CU_ASSERT_EQUAL(symlink("../../../devices/pci0000:10/0000:10:1d.0", path), 0);
	snprintf(path, sizeof(path), "%s/sys/bus/pci/devices/0000:10:1e.0", root);
	CU_ASSERT_EQUAL(symlink("../../../devices/pci0000:10/0000:10:1e.0", path), 0);

	CU_ASSERT_EQUAL_FATAL(probe_run(root, NULL, &t, &err), 0);
	CU_ASSERT_EQUAL(t.n_gpus, 1);
	CU_ASSERT_PTR_NOT_NULL(find_dev(&t, "0000:10:1c.0"));
	CU_ASSERT(has_warning(&t, "0000:10:1d.0", "class"));
	CU_ASSERT(has_warning(&t, "0000:10:1e.0", "vendor"));
	/* no config space: read as unreadable, not as fallen off the bus */
	CU_ASSERT_FALSE(find_dev(&t, "0000:10:1c.0")->fell_off_bus);
	CU_ASSERT(has_warning(&t, "0000:10:1c.0", "config space unreadable"));
	topo_free(&t);
	snprintf(path, sizeof(path), "rm -rf '%s'", root);
	CU_ASSERT_EQUAL(system(path), 0);
}

/* ---- Corruption: a seeded mess made of a good tree ---- */

static unsigned corrupt_seed;
static size_t corrupt_count;

static unsigned next_rand(void)
{
	corrupt_seed = corrupt_seed * 1103515245u + 12345u;
	return corrupt_seed >> 16;
}

/* Break one file of the copy in one of the ways sysfs breaks: emptied,
 * garbage, huge, a FIFO, a directory, gone, a dangling or looping link. */
static int corrupt_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	unsigned r = next_rand() % 100;
	FILE *f;

	(void)st;
	(void)ftw;
	if (type != FTW_F && type != FTW_SL)
		return 0;
	if (r >= 30)
		return 0;
	corrupt_count++;
	if (r < 20 && type == FTW_F) {
		f = fopen(path, "w");
		if (!f)
			return 0;
		if (r < 5)
			;                               /* truncated to nothing */
		else if (r < 10)
			fputs("\xff\xfe garbage -17 0x\n", f);
		else if (r < 12)
			for (int i = 0; i < 5000; i++)
				fputc('7', f);
		else
			fputs("0xffffffffffff\n", f);
		fclose(f);
		return 0;
	}
	unlink(path);
	if (r < 23)
		mkfifo(path, 0600);
	else if (r < 25)
		mkdir(path, 0755);
	else if (r < 27)
		symlink("nowhere/at/all", path);
	else if (r < 29)
		symlink(strrchr(path, '/') + 1, path);  /* a link to itself */
	return 0;                                       /* r == 29: just gone */
}

static void test_probe_survives_corruption(void)
{
	char cmd[8500], dir[] = "/tmp/dt_agent_corrupt_XXXXXX";

	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	/* the "unknown" tree: switches and EFAs like a p5, a third of its size */
	for (unsigned seed = 1; seed <= 8; seed++) {
		struct topo t;
		struct dt_err err = { 0 };
		char copy[4200];
		int rc;

		snprintf(copy, sizeof(copy), "%s/%u", dir, seed);
		snprintf(cmd, sizeof(cmd), "cp -a '%s' '%s'", fx("unknown"), copy);
		CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
		corrupt_seed = seed;
		corrupt_count = 0;
		CU_ASSERT_EQUAL(nftw(copy, corrupt_one, 16, FTW_PHYS), 0);
		CU_ASSERT(corrupt_count > 0);
		/* no crash, no hang, no exit: a result with what could be read */
		rc = probe_run(copy, NULL, &t, &err);
		if (rc == 0) {
			CU_ASSERT(t.n_gpus <= 8);
			CU_ASSERT(t.n_efas <= 8);
			CU_ASSERT(t.warnings.n > 0);
			topo_free(&t);
		} else {
			/* only when bus/pci/devices itself was broken */
			CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "bus/pci/devices"));
		}
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CU_ASSERT_EQUAL(system(cmd), 0);
}

/* A copy of the p5.48xlarge fixture to break, in a new directory under
 * dir (a mkdtemp template): copy gets the copy's sysfs root. */
static void p5_copy(char *dir, char *copy, size_t len)
{
	char cmd[8500];

	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	snprintf(copy, len, "%s/p5", dir);
	snprintf(cmd, sizeof(cmd), "cp -a '%s' '%s'", fx("p5.48xlarge"), copy);
	CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
}

static void remove_tree(const char *dir)
{
	char cmd[4200];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CU_ASSERT_EQUAL(system(cmd), 0);
}

/* libpci reads an empty or garbled vendor file as 0 without an error: the
 * probe must say so rather than file the GPU under "other devices". */
static void test_probe_bad_vendor_file_warns(void)
{
	char dir[] = "/tmp/dt_agent_vendor_XXXXXX", copy[4200], devs[4300];
	struct topo t;
	struct dt_err err = { 0 };

	p5_copy(dir, copy, sizeof(copy));
	snprintf(devs, sizeof(devs), "%s/sys/bus/pci/devices/0000:64:00.0", copy);
	write_file(devs, "vendor", "");
	snprintf(devs, sizeof(devs), "%s/sys/bus/pci/devices/0000:75:00.0", copy);
	write_file(devs, "vendor", "0xzz\n");
	CU_ASSERT_EQUAL_FATAL(probe_run(copy, NULL, &t, &err), 0);
	CU_ASSERT_EQUAL(t.n_gpus, 6);
	CU_ASSERT(has_warning(&t, "0000:64:00.0", "empty"));
	CU_ASSERT(has_warning(&t, "0000:75:00.0", "not a PCI vendor"));
	topo_free(&t);
	remove_tree(dir);
}

/* QA-40: the same for a garbled class file of an NVIDIA GPU (libpci reads
 * class 0, which no NVIDIA device has). */
static void test_probe_bad_class_file_warns(void)
{
	char dir[] = "/tmp/dt_agent_class_XXXXXX", copy[4200], devs[4300];
	struct topo t;
	struct dt_err err = { 0 };

	p5_copy(dir, copy, sizeof(copy));
	snprintf(devs, sizeof(devs), "%s/sys/bus/pci/devices/0000:53:00.0", copy);
	write_file(devs, "class", "display\n");
	CU_ASSERT_EQUAL_FATAL(probe_run(copy, NULL, &t, &err), 0);
	CU_ASSERT_EQUAL(t.n_gpus, 7);
	CU_ASSERT(has_warning(&t, "0000:53:00.0", "not a PCI class code"));
	topo_free(&t);
	remove_tree(dir);
}

static void test_probe_missing_root(void)
{
	struct topo t;
	struct dt_err err = { 0 };

	CU_ASSERT_EQUAL(probe_run(fx("no-such-fixture"), NULL, &t, &err), -ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "sysfs-root"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no-such-fixture/sys/bus/pci/devices"));
}

/* ---- Output ---- */

static void test_text_tree(void)
{
	struct topo t;
	struct strbuf sb = STRBUF_INIT;
	const char *s;

	CU_ASSERT_EQUAL_FATAL(probe_fixture("p5.48xlarge", &t), 0);
	CU_ASSERT_EQUAL(topo_emit_text(&t, &sb), 0);
	s = sb_str(&sb);
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "p5.48xlarge: 8 GPUs, 32 EFAs on 8 PCIe roots"));
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "pci0000:44  numa 0  1 GPU, 4 EFAs\n  ├─ gpu 0000:53:00.0"));
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "└─ efa 0000:52:00.0"));
	sb_free(&sb);
	topo_free(&t);
}

static void test_json_shape(void)
{
	struct topo t;
	struct strbuf sb = STRBUF_INIT;
	struct doc_arena *a = doc_arena_new();
	struct doc_stream *st = NULL;
	const struct doc_node *root, *devs, *roots, *dev0;
	struct dt_err err = { 0 };

	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	CU_ASSERT_EQUAL_FATAL(probe_fixture("g5.48xlarge", &t), 0);
	CU_ASSERT_EQUAL_FATAL(doc_emit_json(topo_to_doc(&t, a), 2, &sb), 0);
	/* read it back: the contract's keys and types */
	CU_ASSERT_EQUAL_FATAL(doc_parse(sb_str(&sb), sb.len, DOC_FORMAT_JSON, "probe", &st, &err), 0);
	root = st->docs[0].root;
	DT_ASSERT_STR(doc_str(doc_get(root, "instanceType")), "g5.48xlarge");
	devs = doc_get(root, "devices");
	roots = doc_get(root, "pcieRoots");
	CU_ASSERT_PTR_NOT_NULL_FATAL(devs);
	CU_ASSERT_PTR_NOT_NULL_FATAL(roots);
	CU_ASSERT_EQUAL(devs->u.seq.n, t.n_devices);
	dev0 = devs->u.seq.items[0];
	DT_ASSERT_STR(doc_str(doc_get(dev0, "bdf")), "0000:00:06.0");
	DT_ASSERT_STR(doc_str(doc_get(dev0, "kind")), "efa");
	DT_ASSERT_STR(doc_str(doc_get(dev0, "vendor")), "1d0f");
	DT_ASSERT_STR(doc_str(doc_get(dev0, "device")), "efa0");
	DT_ASSERT_STR(doc_str(doc_get(dev0, "pcieRoot")), "pci0000:00");
	CU_ASSERT_EQUAL(doc_get(dev0, "numaNode")->kind, DOC_NULL);
	CU_ASSERT_EQUAL(roots->u.seq.n, 1);
	CU_ASSERT_EQUAL(doc_get(roots->u.seq.items[0], "gpus")->u.seq.n, 8);
	CU_ASSERT_EQUAL(doc_get(roots->u.seq.items[0], "efas")->u.seq.n, 1);
	doc_stream_free(st);
	doc_arena_free(a);
	sb_free(&sb);
	topo_free(&t);
}

/* ---- Verify ---- */

static enum topo_verdict verify_fixture(const char *name, const char *as,
					 struct topo_verify_result *r)
{
	struct topo t;
	struct dt_err err = { 0 };
	int rc;

	memset(r, 0, sizeof(*r));
	if (probe_fixture(name, &t))
		return (enum topo_verdict)-1;
	rc = topo_verify(&t, as, r, &err);
	topo_free(&t);
	return rc ? (enum topo_verdict)-1 : r->verdict;
}

static void test_verify_match(void)
{
	static const char *const types[] = {
		"p5.48xlarge", "p4d.24xlarge", "p5en.48xlarge", "g6e.48xlarge", "g5.48xlarge",
	};
	struct topo_verify_result r;

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		CU_ASSERT_EQUAL(verify_fixture(types[i], NULL, &r), TOPO_MATCH);
		if (r.differences.n)
			fprintf(stderr, "\n  %s: %s\n", types[i], r.differences.msgs[0]);
		topo_verify_result_free(&r);
	}
}

static void test_verify_degraded(void)
{
	struct topo_verify_result r;
	const struct dt_diags *d = &r.differences;

	CU_ASSERT_EQUAL(verify_fixture("p5.48xlarge-degraded", NULL, &r), TOPO_DRIFT);
	CU_ASSERT(has_line(d, "GPU count: hwdb has 8 for p5.48xlarge, this node has 7", NULL));
	CU_ASSERT(has_line(d, "EFA count: hwdb has 32 for p5.48xlarge, this node has 30", NULL));
	/* grouping by shape: 6 intact roots instead of 8, and the two that
	 * changed named */
	CU_ASSERT(has_line(d, "roots with 1 GPU + 4 EFAs: hwdb has 8, this node has 6", NULL));
	CU_ASSERT(has_line(d, "roots with 0 GPUs + 4 EFAs: hwdb has 0, this node has 1",
			   "(pci0000:99)"));
	CU_ASSERT(has_line(d, "roots with 1 GPU + 2 EFAs: hwdb has 0, this node has 1",
			   "(pci0000:44)"));
	CU_ASSERT_EQUAL(dt_diags_count(d), 5);
	topo_verify_result_free(&r);
}

static void test_verify_wrong_type(void)
{
	struct topo_verify_result r;
	const struct dt_diags *d = &r.differences;

	/* a p5 claiming to be a p5en: models, generation and grouping differ */
	CU_ASSERT_EQUAL(verify_fixture("p5.48xlarge", "p5en.48xlarge", &r), TOPO_DRIFT);
	CU_ASSERT(has_line(d, "GPU 0000:53:00.0: model 10de:2330", "hwdb has 10de:2335"));
	CU_ASSERT(has_line(d, "EFA 0000:4f:00.0: efa1", "hwdb has efa2"));
	CU_ASSERT(has_line(d, "EFA count: hwdb has 16", "this node has 32"));
	CU_ASSERT(has_line(d, "PCIe roots: hwdb has 4 roots", "this node has 8"));
	topo_verify_result_free(&r);
}

static void test_verify_without_topology(void)
{
	const struct hwdb_type *p3 = hwdb_lookup("p3.16xlarge");
	struct topo_verify_result r;
	const struct dt_diags *d = &r.differences;

	/* hwdb knows no topology for p3 (no scraped devices): counts and
	 * models are compared, the grouping is not */
	CU_ASSERT_PTR_NOT_NULL_FATAL(p3);
	CU_ASSERT_FALSE(p3->dra_metadata);
	CU_ASSERT_EQUAL(verify_fixture("p5.48xlarge", "p3.16xlarge", &r), TOPO_DRIFT);
	CU_ASSERT(has_line(d, "GPU 0000:53:00.0: model 10de:2330", NULL));
	CU_ASSERT(has_line(d, "EFA count: hwdb has 0", "this node has 32"));
	CU_ASSERT_FALSE(has_line(d, "grouping", NULL));
	CU_ASSERT_FALSE(has_line(d, "PCIe roots", NULL));
	topo_verify_result_free(&r);
}

static void test_verify_broken_counts_fallen_gpu(void)
{
	struct topo_verify_result r;

	CU_ASSERT_EQUAL(verify_fixture("broken", NULL, &r), TOPO_DRIFT);
	CU_ASSERT(has_line(&r.differences, "GPU 0000:64:00.0 fell off the bus", NULL));
	CU_ASSERT(has_line(&r.differences, "GPU 0000:7c:00.0: no PCIe root", NULL));
	topo_verify_result_free(&r);
}

static void test_verify_unknown_learns_entry(void)
{
	struct topo t;
	struct topo_verify_result r;
	struct topo_learned l;
	struct strbuf sb = STRBUF_INIT;
	struct dt_diags w;
	struct dt_err err = { 0 };
	const struct hwdb_type *one, *back;

	dt_diags_init(&w);
	CU_ASSERT_EQUAL_FATAL(probe_fixture("unknown", &t), 0);
	CU_ASSERT_EQUAL(topo_verify(&t, NULL, &r, &err), 0);
	CU_ASSERT_EQUAL(r.verdict, TOPO_UNKNOWN_TYPE);
	topo_verify_result_free(&r);

	CU_ASSERT_EQUAL_FATAL(topo_learn(&t, NULL, &l, &w, &err), 0);
	DT_ASSERT_STR(l.type.name, "p7.48xlarge");
	DT_ASSERT_STR(l.type.family, "p7");
	CU_ASSERT_EQUAL(l.type.n_gpus, 8);
	CU_ASSERT_EQUAL(l.type.n_efas, 8);
	CU_ASSERT_EQUAL(l.type.gpu_device, 0x2901);
	CU_ASSERT_EQUAL(l.type.vcpu, 192);
	CU_ASSERT(l.type.memory_mib > 0);
	DT_ASSERT_STR(l.type.gpus[0].name, "gpu-0");
	DT_ASSERT_STR(l.type.gpus[0].pcie_root, "pci0000:44");
	DT_ASSERT_STR(l.type.efas[7].name, "efa-7");
	one = &l.type;
	CU_ASSERT_EQUAL_FATAL(hwdb_file_write_yaml(&one, 1, &sb), 0);
	topo_learned_free(&l);

	/* the proposal loads back and the node then verifies */
	if (hwdb_load_extra_buf(sb_str(&sb), sb.len, "proposed.yaml", &err) != 0)
		fprintf(stderr, "\n  %s\n%s\n", err.msg, sb_str(&sb));
	back = hwdb_lookup("p7.48xlarge");
	CU_ASSERT_PTR_NOT_NULL_FATAL(back);
	CU_ASSERT_EQUAL(back->n_gpus, 8);
	CU_ASSERT_EQUAL(topo_verify(&t, NULL, &r, &err), 0);
	CU_ASSERT_EQUAL(r.verdict, TOPO_MATCH);
	topo_verify_result_free(&r);
	hwdb_reset();
	CU_ASSERT_PTR_NULL(hwdb_lookup("p7.48xlarge"));
	sb_free(&sb);
	dt_diags_free(&w);
	topo_free(&t);
}

/* ---- Slices ---- */

/* The pcieRoot of each device of the slice of driver drv in a parsed
 * `slices -o json` document, in order, joined by commas. */
static void slice_roots(const struct doc_node *top, const char *drv, struct strbuf *out,
			size_t *n_devices)
{
	const struct doc_node *seq = doc_get(top, "resourceSlices");

	*n_devices = 0;
	for (size_t i = 0; seq && i < seq->u.seq.n; i++) {
		const struct doc_node *spec = doc_get(seq->u.seq.items[i], "spec");
		const struct doc_node *devs = doc_get(spec, "devices");

		if (!doc_str(doc_get(spec, "driver")) || strcmp(doc_str(doc_get(spec, "driver")), drv))
			continue;
		for (size_t j = 0; devs && j < devs->u.seq.n; j++) {
			const struct doc_node *root = doc_get_path(devs->u.seq.items[j], "attributes",
				"resource.kubernetes.io/pcieRoot", "string", NULL);

			sb_printf(out, "%s%s", *n_devices ? "," : "", root ? doc_str(root) : "-");
			(*n_devices)++;
		}
	}
}

static void check_slices(const char *fixture, size_t want_gpus, size_t want_efas)
{
	struct topo t;
	struct strbuf sb = STRBUF_INIT, got = STRBUF_INIT, want = STRBUF_INIT;
	struct doc_stream *st = NULL;
	struct dt_diags w;
	struct dt_err err = { 0 };
	size_t n;

	dt_diags_init(&w);
	CU_ASSERT_EQUAL_FATAL(probe_fixture(fixture, &t), 0);
	CU_ASSERT_EQUAL_FATAL(topo_slices_emit(&t, NULL, "node-1", DOC_FORMAT_JSON, false, &sb, &w,
						&err), 0);
	CU_ASSERT_EQUAL_FATAL(doc_parse(sb_str(&sb), sb.len, DOC_FORMAT_JSON, "slices", &st,
					&err), 0);
	CU_ASSERT_PTR_NOT_NULL(doc_get(st->docs[0].root, "instanceType"));
	slice_roots(st->docs[0].root, HWDB_DRIVER_GPU, &got, &n);
	CU_ASSERT_EQUAL(n, want_gpus);
	/* the GPU slice lists the live GPUs in address order with their roots */
	for (size_t i = 0, k = 0; i < t.n_devices; i++)
		if (t.devices[i].kind == TOPO_GPU && !t.devices[i].fell_off_bus)
			sb_printf(&want, "%s%s", k++ ? "," : "",
				  t.devices[i].pcie_root[0] ? t.devices[i].pcie_root : "-");
	DT_ASSERT_STR(sb_str(&got), sb_str(&want));
	sb_reset(&got);
	slice_roots(st->docs[0].root, HWDB_DRIVER_EFA, &got, &n);
	CU_ASSERT_EQUAL(n, want_efas);
	doc_stream_free(st);
	sb_free(&sb);
	sb_free(&got);
	sb_free(&want);
	dt_diags_free(&w);
	topo_free(&t);
}

static void test_slices(void)
{
	const struct hwdb_type *p5 = hwdb_lookup("p5.48xlarge");

	CU_ASSERT_PTR_NOT_NULL_FATAL(p5);
	check_slices("p5.48xlarge", p5->n_gpus, p5->n_efas);
	check_slices("p5.48xlarge-degraded", p5->n_gpus - 1, p5->n_efas - 2);
	check_slices("g5.48xlarge", 8, 1);
	check_slices("unknown", 8, 8);
	check_slices("broken", 2, 8);
}

/* The prediction for a fixture of a known type is, slice for slice, what
 * hwdb's own entry publishes (the fixtures hold hwdb's roots and NUMA),
 * except that the live node's EFAs carry DRANET's names for them: "pci-"
 * and the PCI address with ':' and '.' as '-' (kubernetes-sigs/dranet
 * pkg/names NormalizePCIAddress), where hwdb's entry has the placeholders
 * efa-N and says so in an annotation. */
static void check_slices_equal_hwdb(const char *type_name)
{
	struct model_object *slices[HWDB_MAX_SLICES];
	const struct hwdb_type *ty = hwdb_lookup(type_name);
	struct model_set *set = model_set_new();
	struct strbuf want = STRBUF_INIT, got = STRBUF_INIT;
	struct hwdb_device efas[64];
	char names[64][32];
	struct hwdb_type live;
	struct topo t;
	struct dt_diags w;
	struct dt_err err = { 0 };
	const char *body;
	size_t n = 0, k = 0;

	dt_diags_init(&w);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ty);
	CU_ASSERT_PTR_NOT_NULL_FATAL(set);
	CU_ASSERT_FATAL(ty->n_efas <= 64);
	CU_ASSERT_EQUAL_FATAL(probe_fixture(type_name, &t), 0);
	live = *ty;
	for (size_t i = 0; i < t.n_devices && k < ty->n_efas; i++) {
		if (t.devices[i].kind != TOPO_EFA)
			continue;
		efas[k] = ty->efas[k];
		snprintf(names[k], sizeof(names[k]), "pci-%s", t.devices[i].bdf_str);
		for (char *c = names[k]; *c; c++)
			*c = *c == ':' || *c == '.' ? '-' : *c;
		efas[k].name = names[k];
		k++;
	}
	CU_ASSERT_EQUAL(k, ty->n_efas);
	live.efas = efas;
	live.node_names = true;
	CU_ASSERT_EQUAL_FATAL(hwdb_slices(&live, NULL, "node-1", set, slices, &n, &err), 0);
	sb_puts(&want, "#\n");
	for (size_t i = 0; i < n; i++)
		CU_ASSERT_EQUAL(model_emit(slices[i], DOC_FORMAT_YAML, &want), 0);
	CU_ASSERT_EQUAL(topo_slices_emit(&t, NULL, "node-1", DOC_FORMAT_YAML, false, &got, &w, &err), 0);
	/* past the comment line, which says where the slices come from */
	body = strchr(sb_str(&got), '\n');
	CU_ASSERT_PTR_NOT_NULL_FATAL(body);
	DT_ASSERT_STR(body + 1, strchr(sb_str(&want), '\n') + 1);
	CU_ASSERT_PTR_NULL(strstr(sb_str(&got), HWDB_ANNOTATION_PLACEHOLDER_NAMES));
	/* hwdb's own prediction, for a node to come, marks its EFA names. */
	sb_reset(&want);
	CU_ASSERT_EQUAL_FATAL(hwdb_slices(ty, NULL, "node-1", set, slices, &n, &err), 0);
	for (size_t i = 0; i < n; i++)
		CU_ASSERT_EQUAL(model_emit(slices[i], DOC_FORMAT_YAML, &want), 0);
	if (ty->n_efas) {
		CU_ASSERT_PTR_NOT_NULL(strstr(sb_str(&want), HWDB_ANNOTATION_PLACEHOLDER_NAMES
					      ": \"true\""));
		CU_ASSERT_PTR_NOT_NULL(strstr(sb_str(&want), "name: efa-0\n"));
	}
	topo_free(&t);
	model_set_free(set);
	sb_free(&want);
	sb_free(&got);
	dt_diags_free(&w);
}

static void test_slices_equal_hwdb(void)
{
	check_slices_equal_hwdb("p5.48xlarge");
	check_slices_equal_hwdb("p4d.24xlarge");
	check_slices_equal_hwdb("p5en.48xlarge");
	check_slices_equal_hwdb("g6e.48xlarge");
	check_slices_equal_hwdb("g5.48xlarge");
}

DT_SUITE_MAIN_WITH("agent", suite_init, NULL,
	DT_TEST(test_bdf_parse),
	DT_TEST(test_parse_values),
	DT_TEST(test_read_attr_refuses_traps),
	DT_TEST(test_pcie_root_rule),
	DT_TEST(test_sys_dir),
	DT_TEST(test_probe_known_types),
	DT_TEST(test_probe_p5_layout),
	DT_TEST(test_probe_flat_and_split),
	DT_TEST(test_probe_instance_type_override),
	DT_TEST(test_probe_bad_vendor_file_warns),
	DT_TEST(test_probe_bad_class_file_warns),
	DT_TEST(test_probe_broken_host),
	DT_TEST(test_probe_libpci_errors_during_scan),
	DT_TEST(test_probe_survives_corruption),
	DT_TEST(test_probe_missing_root),
	DT_TEST(test_text_tree),
	DT_TEST(test_json_shape),
	DT_TEST(test_verify_match),
	DT_TEST(test_verify_degraded),
	DT_TEST(test_verify_wrong_type),
	DT_TEST(test_verify_without_topology),
	DT_TEST(test_verify_broken_counts_fallen_gpu),
	DT_TEST(test_verify_unknown_learns_entry),
	DT_TEST(test_slices),
	DT_TEST(test_slices_equal_hwdb))
