/* topo.c - the topology model: devices grouped by PCIe root, built from
 * a device list, and its canonical shape key. See topo.h. */
#include "topo.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "hwdb.h"
#include "names.h"

const char *topo_kind_name(enum topo_kind k)
{
	return k == TOPO_GPU ? "gpu" : "efa";
}

const struct topo_root *topo_find_root(const struct topo *t, const char *name)
{
	for (size_t i = 0; i < t->n_roots; i++)
		if (strcmp(t->roots[i].name, name) == 0)
			return &t->roots[i];
	return NULL;
}

int topo_root_numa(const struct topo *t, const struct topo_root *r)
{
	int numa = -2;

	for (size_t i = 0; i < r->n_gpus + r->n_efas; i++) {
		size_t k = i < r->n_gpus ? r->gpus[i] : r->efas[i - r->n_gpus];
		int n = t->devices[k].numa_node;

		if (numa == -2)
			numa = n;
		else if (numa != n)
			return -1;
	}
	return numa < 0 ? -1 : numa;
}

void topo_free(struct topo *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n_roots; i++) {
		free(t->roots[i].gpus);
		free(t->roots[i].efas);
	}
	free(t->roots);
	free(t->devices);
	free(t->instance_type);
	dt_diags_free(&t->warnings);
	memset(t, 0, sizeof(*t));
}

void topo_device_name(struct topo_device *d)
{
	d->model = NULL;
	d->architecture = NULL;
	d->efa_generation = 0;
	d->efa_subsystem = NULL;
	if (d->kind == TOPO_EFA) {
		const struct hwdb_pci_efa *efa = hwdb_pci_efa(d->vendor, d->device);

		if (efa) {
			d->model = efa->name;
			d->efa_generation = efa->generation;
			d->efa_subsystem = efa->subsystem;
		}
	} else {
		const struct hwdb_pci_gpu *gpu = hwdb_pci_gpu(d->vendor, d->device);

		if (gpu) {
			d->model = gpu->model;
			d->architecture = gpu->architecture;
		}
	}
}

/* ---- Grouping by root ---- */

static int push_index(size_t **v, size_t *n, size_t *cap, size_t i)
{
	if (DT_GROW(*v, *cap, *n + 1))
		return -ENOMEM;
	(*v)[(*n)++] = i;
	return 0;
}

static int root_cmp(const void *a, const void *b)
{
	return strcmp(((const struct topo_root *)a)->name, ((const struct topo_root *)b)->name);
}

static int group_roots(struct topo *t)
{
	for (size_t i = 0; i < t->n_devices; i++) {
		struct topo_device *d = &t->devices[i];
		struct topo_root *r = NULL;

		if (!d->pcie_root[0])
			continue;
		for (size_t k = 0; k < t->n_roots && !r; k++)
			if (strcmp(t->roots[k].name, d->pcie_root) == 0)
				r = &t->roots[k];
		if (!r) {
			if (DT_GROW(t->roots, t->cap_roots, t->n_roots + 1))
				return -ENOMEM;
			r = &t->roots[t->n_roots++];
			snprintf(r->name, sizeof(r->name), "%s", d->pcie_root);
		}
		if (d->kind == TOPO_GPU ? push_index(&r->gpus, &r->n_gpus, &r->cap_gpus, i)
					: push_index(&r->efas, &r->n_efas, &r->cap_efas, i))
			return -ENOMEM;
	}
	if (t->n_roots > 1)
		qsort(t->roots, t->n_roots, sizeof(*t->roots), root_cmp);
	return 0;
}

static int device_cmp(const void *a, const void *b)
{
	return topo_bdf_cmp(&((const struct topo_device *)a)->bdf,
			     &((const struct topo_device *)b)->bdf);
}

int topo_index(struct topo *t)
{
	if (t->n_devices > 1)
		qsort(t->devices, t->n_devices, sizeof(*t->devices), device_cmp);
	t->n_gpus = t->n_efas = 0;
	for (size_t i = 0; i < t->n_devices; i++) {
		if (t->devices[i].kind == TOPO_GPU)
			t->n_gpus++;
		else
			t->n_efas++;
	}
	return group_roots(t);
}

/* ---- From a device list ---- */

/* A fixed-size name field must hold a NUL: a report decoded by hand could
 * fill one to the brim. */
static int terminated(const char *field, size_t size)
{
	return memchr(field, '\0', size) != NULL;
}

static int check_device(const struct topo_device *d, size_t i, struct dt_err *err)
{
	struct topo_bdf bdf;

	if (!terminated(d->bdf_str, sizeof(d->bdf_str)) ||
	    topo_bdf_parse(d->bdf_str, &bdf))
		return dt_err_set(err, -EINVAL, "devices[%zu]: bdf \"%.*s\" is not a PCI address "
				  "(DDDD:BB:DD.F, lower-case hex)", i, TOPO_NAME_MAX - 1,
				  d->bdf_str);
	if (d->kind != TOPO_GPU && d->kind != TOPO_EFA)
		return dt_err_set(err, -EINVAL, "devices[%zu] (%s): kind %d is neither a GPU nor an "
				  "EFA", i, d->bdf_str, (int)d->kind);
	if (!terminated(d->pcie_root, sizeof(d->pcie_root)) ||
	    !terminated(d->link_speed, sizeof(d->link_speed)) ||
	    !terminated(d->rdma_device, sizeof(d->rdma_device)) ||
	    !terminated(d->driver, sizeof(d->driver)))
		return dt_err_set(err, -EINVAL, "devices[%zu] (%s): a name field is not "
				  "terminated", i, d->bdf_str);
	return 0;
}

int topo_from_devices(const char *instance_type, const struct topo_device *devs,
				size_t n, struct topo *t, struct dt_err *err)
{
	int rc = 0;

	memset(t, 0, sizeof(*t));
	dt_diags_init(&t->warnings);
	for (size_t i = 0; i < n; i++)
		if ((rc = check_device(&devs[i], i, err)))
			return rc;
	t->devices = calloc(n ? n : 1, sizeof(*t->devices));
	t->instance_type = instance_type ? strdup(instance_type) : NULL;
	if (!t->devices || (instance_type && !t->instance_type))
		goto oom;
	memcpy(t->devices, devs, n * sizeof(*devs));
	t->n_devices = n;
	for (size_t i = 0; i < n; i++) {
		topo_bdf_parse(t->devices[i].bdf_str, &t->devices[i].bdf);
		topo_device_name(&t->devices[i]);
	}
	if (topo_index(t))
		goto oom;
	for (size_t i = 1; i < n; i++)
		if (topo_bdf_cmp(&t->devices[i - 1].bdf, &t->devices[i].bdf) == 0) {
			rc = dt_err_set(err, -EINVAL, "device %s is listed twice",
					t->devices[i].bdf_str);
			topo_free(t);
			return rc;
		}
	return 0;
oom:
	topo_free(t);
	return dt_err_set(err, -ENOMEM, "out of memory");
}

/* ---- Shape key ---- */

/* What the key keeps of a device. */
struct key_id {
	enum topo_kind kind;
	uint16_t vendor, device;
};

/* GPUs first, then by PCI id. */
static int id_cmp(const void *a, const void *b)
{
	const struct key_id *x = a, *y = b;

	if (x->kind != y->kind)
		return x->kind == TOPO_GPU ? -1 : 1;
	if (x->vendor != y->vendor)
		return x->vendor < y->vendor ? -1 : 1;
	if (x->device != y->device)
		return x->device < y->device ? -1 : 1;
	return 0;
}

/* The content of a group of live devices: "gpu1x10de:2330+efa4x1d0f:efa1".
 * Sorts ids. */
static void group_content(struct key_id *ids, size_t n, struct strbuf *out)
{
	qsort(ids, n, sizeof(*ids), id_cmp);
	for (size_t i = 0; i < n;) {
		size_t run = 1;

		while (i + run < n && id_cmp(&ids[i], &ids[i + run]) == 0)
			run++;
		sb_printf(out, "%s%s%zux%04x:%04x", i ? "+" : "", topo_kind_name(ids[i].kind), run,
			  ids[i].vendor, ids[i].device);
		i += run;
	}
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void add_id(const struct topo_device *d, struct key_id *ids, size_t *n)
{
	if (!d->fell_off_bus)
		ids[(*n)++] = (struct key_id){ d->kind, d->vendor, d->device };
}

/* The live devices of root r (or, with r NULL, those without a root) into
 * ids; returns how many. */
static size_t live_members(const struct topo *t, const struct topo_root *r,
			   struct key_id *ids)
{
	size_t n = 0;

	if (!r) {
		for (size_t i = 0; i < t->n_devices; i++)
			if (!t->devices[i].pcie_root[0])
				add_id(&t->devices[i], ids, &n);
		return n;
	}
	for (size_t j = 0; j < r->n_gpus + r->n_efas; j++)
		add_id(&t->devices[j < r->n_gpus ? r->gpus[j] : r->efas[j - r->n_gpus]], ids, &n);
	return n;
}

int topo_shape_key(const struct topo *t, struct strbuf *out)
{
	struct key_id *ids = calloc(t->n_devices + 1, sizeof(*ids));
	char **contents = calloc(t->n_roots + 1, sizeof(*contents));
	struct strbuf one = STRBUF_INIT;
	size_t n_contents = 0, n;
	int rc = -ENOMEM;

	if (!ids || !contents)
		goto out;
	for (size_t i = 0; i < t->n_roots; i++) {
		n = live_members(t, &t->roots[i], ids);
		if (!n)
			continue;
		sb_reset(&one);
		group_content(ids, n, &one);
		if (sb_error(&one) || !(contents[n_contents] = strdup(sb_str(&one))))
			goto out;
		n_contents++;
	}
	qsort(contents, n_contents, sizeof(*contents), str_cmp);
	sb_puts(out, "v1");
	for (size_t i = 0; i < n_contents;) {
		size_t run = 1;

		while (i + run < n_contents && strcmp(contents[i], contents[i + run]) == 0)
			run++;
		sb_printf(out, " %zu*(%s)", run, contents[i]);
		i += run;
	}
	n = live_members(t, NULL, ids);
	if (n) {
		sb_reset(&one);
		group_content(ids, n, &one);
		sb_printf(out, " ?(%s)", sb_str(&one));
	}
	rc = sb_error(&one) ? -ENOMEM : sb_error(out);
out:
	for (size_t i = 0; contents && i < n_contents; i++)
		free(contents[i]);
	free(contents);
	free(ids);
	sb_free(&one);
	return rc;
}

int topo_node_name_check(const char *what, const char *name, struct dt_err *err)
{
	struct names_msgs msgs;

	if (!names_dns1123_subdomain(name, strlen(name), &msgs))
		return 0;
	return dt_err_set(err, -EINVAL, "%s \"%.64s\": %s (a Node's name)", what, name, msgs.m[0]);
}

const char *topo_dranet_pci_name(const char *bdf, char *buf, size_t len)
{
	size_t n = (size_t)snprintf(buf, len, "pci-%s", bdf);

	for (size_t i = 4; i < n && i < len; i++)
		if (buf[i] == ':' || buf[i] == '.')
			buf[i] = '-';
	return buf;
}

const char *topo_device_dra_name(const struct topo *t, size_t i, char *buf, size_t len)
{
	const struct topo_device *d = &t->devices[i];
	size_t minor = 0;

	if (d->kind == TOPO_EFA)
		return topo_dranet_pci_name(d->bdf_str, buf, len);
	for (size_t j = 0; j < i; j++)
		minor += t->devices[j].kind == TOPO_GPU;
	snprintf(buf, len, "gpu-%zu", minor);
	return buf;
}
