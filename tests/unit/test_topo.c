/* test_topo.c - the topology model without a host: a topology built from a
 * device list (what the coordinator does with a report), its shape key,
 * verification against a given entry, and the predicted slices. The probe
 * from sysfs is test_agent's. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "dt_test.h"
#include "hwdb.h"
#include "model.h"
#include "topo_slices.h"
#include "topo.h"
#include "topo_verify.h"

#define P5_KEY "v1 8*(gpu1x10de:2330+efa4x1d0f:efa1)"

/* The devices of a node of hwdb type name, GPUs then EFAs, at addresses
 * 0000:10:00.0 onwards; returns how many. */
static size_t type_devices(const char *name, struct topo_device *out, size_t cap)
{
	const struct hwdb_type *t = hwdb_lookup(name);
	size_t n = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	for (size_t i = 0; i < t->n_gpus + t->n_efas && n < cap; i++, n++) {
		int gpu = i < t->n_gpus;
		const struct hwdb_device *h = gpu ? &t->gpus[i] : &t->efas[i - t->n_gpus];
		struct topo_device *d = &out[n];

		memset(d, 0, sizeof(*d));
		d->kind = gpu ? TOPO_GPU : TOPO_EFA;
		d->vendor = gpu ? t->gpu_vendor : HWDB_PCI_VENDOR_AMAZON;
		d->device = gpu ? t->gpu_device : t->efa_device;
		snprintf(d->bdf_str, sizeof(d->bdf_str), "0000:%02zx:00.0", 0x10 + i);
		snprintf(d->pcie_root, sizeof(d->pcie_root), "%s", h->pcie_root ? h->pcie_root : "");
		d->numa_node = h->numa_node;
	}
	return n;
}

static void test_from_devices(void)
{
	struct topo_device devs[64], rev[64];
	struct topo t;
	struct dt_err err = { 0 };
	size_t n = type_devices("p5.48xlarge", devs, 64);

	/* Given in reverse order: the topology sorts by address. */
	for (size_t i = 0; i < n; i++)
		rev[i] = devs[n - 1 - i];
	CU_ASSERT_EQUAL_FATAL(topo_from_devices("p5.48xlarge", rev, n, &t, &err), 0);
	CU_ASSERT_EQUAL(t.n_devices, 40);
	CU_ASSERT_EQUAL(t.n_gpus, 8);
	CU_ASSERT_EQUAL(t.n_efas, 32);
	CU_ASSERT_EQUAL(t.n_roots, 8);
	DT_ASSERT_STR(t.devices[0].bdf_str, "0000:10:00.0");
	DT_ASSERT_STR(t.roots[0].name, "pci0000:44");
	CU_ASSERT_EQUAL(t.roots[0].n_gpus, 1);
	CU_ASSERT_EQUAL(t.roots[0].n_efas, 4);
	/* Models come from hwdb's PCI tables, not from the caller. */
	DT_ASSERT_STR(t.devices[0].model, "H100 SXM5 80GB");
	DT_ASSERT_STR(t.devices[0].architecture, "Hopper");
	DT_ASSERT_STR(t.devices[8].efa_subsystem, "efa1");
	CU_ASSERT_PTR_NOT_NULL(topo_find_root(&t, "pci0000:bb"));
	topo_free(&t);
}

static void test_from_devices_refuses(void)
{
	struct topo_device devs[64];
	struct topo t;
	struct dt_err err = { 0 };
	size_t n = type_devices("p5.48xlarge", devs, 64);

	snprintf(devs[3].bdf_str, sizeof(devs[3].bdf_str), "0000:13:00.0x");
	CU_ASSERT_EQUAL(topo_from_devices(NULL, devs, n, &t, &err), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "devices[3]"));
	snprintf(devs[3].bdf_str, sizeof(devs[3].bdf_str), "0000:1A:00.0");  /* upper case */
	CU_ASSERT_EQUAL(topo_from_devices(NULL, devs, n, &t, &err), -EINVAL);
	snprintf(devs[3].bdf_str, sizeof(devs[3].bdf_str), "%s", devs[4].bdf_str);
	CU_ASSERT_EQUAL(topo_from_devices(NULL, devs, n, &t, &err), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "listed twice"));
	type_devices("p5.48xlarge", devs, 64);
	devs[0].kind = (enum topo_kind)7;
	CU_ASSERT_EQUAL(topo_from_devices(NULL, devs, n, &t, &err), -EINVAL);
	type_devices("p5.48xlarge", devs, 64);
	memset(devs[0].pcie_root, 'x', sizeof(devs[0].pcie_root));   /* no NUL */
	CU_ASSERT_EQUAL(topo_from_devices(NULL, devs, n, &t, &err), -EINVAL);
}

static char *key_of(struct topo_device *devs, size_t n)
{
	struct topo t;
	struct strbuf sb = STRBUF_INIT;

	CU_ASSERT_EQUAL_FATAL(topo_from_devices(NULL, devs, n, &t, NULL), 0);
	CU_ASSERT_EQUAL(topo_shape_key(&t, &sb), 0);
	topo_free(&t);
	return sb_detach(&sb);
}

static void test_shape_key(void)
{
	struct topo_device devs[64];
	size_t n = type_devices("p5.48xlarge", devs, 64);
	char *key = key_of(devs, n), *k2;

	DT_ASSERT_STR(key, P5_KEY);
	/* Other root names and addresses: the same key. */
	for (size_t i = 0; i < n; i++) {
		devs[i].pcie_root[4] = devs[i].pcie_root[4] == '0' ? '1' : '2';
		snprintf(devs[i].bdf_str, sizeof(devs[i].bdf_str), "0001:%02zx:01.0", 0x80 + i);
	}
	k2 = key_of(devs, n);
	DT_ASSERT_STR(k2, key);
	free(k2);
	free(key);

	/* A GPU fallen off the bus is left out; a device without a root
	 * forms the ? group (both from pci0000:44 here). */
	n = type_devices("p5.48xlarge", devs, 64);
	devs[0].fell_off_bus = true;
	devs[9].pcie_root[0] = '\0';
	key = key_of(devs, n);
	DT_ASSERT_STR(key, "v1 1*(efa3x1d0f:efa1) 7*(gpu1x10de:2330+efa4x1d0f:efa1) "
		      "?(efa1x1d0f:efa1)");
	free(key);

	n = type_devices("g5.48xlarge", devs, 64);
	key = key_of(devs, n);
	DT_ASSERT_STR(key, "v1 1*(gpu8x10de:2237+efa1x1d0f:efa0)");
	free(key);
	key = key_of(devs, 0);
	DT_ASSERT_STR(key, "v1");
	free(key);
}

static void test_verify_entry(void)
{
	struct topo_device devs[64];
	struct topo_verify_result r;
	struct topo t;
	size_t n = type_devices("p5.48xlarge", devs, 64);

	CU_ASSERT_EQUAL_FATAL(topo_from_devices("p5.48xlarge", devs, n, &t, NULL), 0);
	CU_ASSERT_EQUAL(topo_verify_entry(&t, hwdb_lookup("p5.48xlarge"), &r, NULL), 0);
	CU_ASSERT_EQUAL(r.verdict, TOPO_MATCH);
	topo_verify_result_free(&r);
	/* Held to another type's entry, the same node drifts. */
	CU_ASSERT_EQUAL(topo_verify_entry(&t, hwdb_lookup("p4d.24xlarge"), &r, NULL), 0);
	CU_ASSERT_EQUAL(r.verdict, TOPO_DRIFT);
	DT_ASSERT_STR(r.instance_type, "p4d.24xlarge");
	CU_ASSERT(r.differences.n > 0);
	topo_verify_result_free(&r);
	topo_free(&t);
}

static void test_slices(void)
{
	struct topo_device devs[64];
	struct model_object *slices[HWDB_MAX_SLICES];
	struct model_set *set = model_set_new();
	struct topo t;
	struct dt_diags w;
	size_t n = type_devices("p5.48xlarge", devs, 64), n_slices = 0;

	dt_diags_init(&w);
	devs[0].fell_off_bus = true;
	CU_ASSERT_EQUAL_FATAL(topo_from_devices("p5.48xlarge", devs, n, &t, NULL), 0);
	t.cpus = 192;
	t.memory_mib = 2097152;
	CU_ASSERT_EQUAL(topo_slices(&t, NULL, "node-a", set, slices, &n_slices, &w, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(n_slices, 2);
	DT_ASSERT_STR(slices[0]->u.slice.driver, "gpu.nvidia.com");
	CU_ASSERT_EQUAL(slices[0]->u.slice.n_devices, 7);     /* the lost GPU is left out */
	DT_ASSERT_STR(slices[1]->u.slice.driver, "dra.net");
	CU_ASSERT_EQUAL(slices[1]->u.slice.n_devices, 32);
	DT_ASSERT_STR(slices[0]->u.slice.node_name, "node-a");
	CU_ASSERT_EQUAL(topo_slices(&t, NULL, "Not_A_Name", set, slices, &n_slices, &w, NULL),
			-EINVAL);
	dt_diags_free(&w);
	topo_free(&t);
	model_set_free(set);
}

DT_SUITE_MAIN("topo",
	      DT_TEST(test_from_devices),
	      DT_TEST(test_from_devices_refuses),
	      DT_TEST(test_shape_key),
	      DT_TEST(test_verify_entry),
	      DT_TEST(test_slices))
