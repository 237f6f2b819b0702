/* hwdb_facts.c - an instance-type entry as a JSON-ready tree: the
 * "instanceType" object of `dratopo hwdb show -o json` and the items of
 * `dratopo hwdb list -o json`.
 *
 * Attribute values are written in the API's typed form ({"string": ...},
 * {"version": ...}) so that a reader never has to guess a type. */
#include "hwdb.h"

#include <stdio.h>
#include <string.h>

#include "doc.h"
#include "hwdb_source.h"

static struct doc_node *typed_value(struct doc_arena *a, const struct hwdb_attr *h)
{
	struct doc_node *m = doc_new_map(a);
	int rc;

	if (!m)
		return NULL;
	switch (h->type) {
	case HWDB_ATTR_INT:
		rc = doc_map_set(a, m, "int", doc_new_int(a, h->i));
		break;
	case HWDB_ATTR_BOOL:
		rc = doc_map_set(a, m, "bool", doc_new_bool(a, h->b));
		break;
	case HWDB_ATTR_VERSION:
		rc = doc_map_set(a, m, "version", doc_new_string(a, h->str));
		break;
	default:
		rc = doc_map_set(a, m, "string", doc_new_string(a, h->str));
		break;
	}
	return rc ? NULL : m;
}

static struct doc_node *str_or_null(struct doc_arena *a, const char *s)
{
	return s ? doc_new_string(a, s) : doc_new_null(a);
}

static struct doc_node *pci_id(struct doc_arena *a, uint16_t vendor, uint16_t device)
{
	char buf[16];

	if (!device)
		return doc_new_null(a);
	snprintf(buf, sizeof(buf), "%04x:%04x", vendor, device);
	return doc_new_string(a, buf);
}

static struct doc_node *devices(struct doc_arena *a, const struct hwdb_device *devs, size_t n,
				bool gpu)
{
	struct doc_node *list = doc_new_seq(a);
	int rc = 0;

	if (!list)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		const struct hwdb_device *d = &devs[i];
		struct doc_node *m = doc_new_map(a), *attrs = doc_new_map(a);

		if (!m || !attrs)
			return NULL;
		rc |= doc_map_set(a, m, "name", doc_new_string(a, d->name));
		rc |= doc_map_set(a, m, "pcieRoot", str_or_null(a, d->pcie_root));
		rc |= doc_map_set(a, m, "numaNode",
				  d->numa_node >= 0 ? doc_new_int(a, d->numa_node) : doc_new_null(a));
		if (gpu)
			rc |= doc_map_set(a, m, "memory", str_or_null(a, d->memory));
		for (size_t j = 0; j < d->n_attrs; j++)
			rc |= doc_map_set(a, attrs, d->attrs[j].name, typed_value(a, &d->attrs[j]));
		rc |= doc_map_set(a, m, "attributes", attrs);
		rc |= doc_seq_push(a, list, m);
	}
	return rc ? NULL : list;
}

/* pcieRoots: [{name, gpus: [...], efas: [...]}] in order of appearance. */
static struct doc_node *roots(struct doc_arena *a, const struct hwdb_type *t)
{
	struct hwdb_root r[2 * HWDB_MAX_DEVICES];
	size_t n = hwdb_type_roots(t, r, sizeof(r) / sizeof(r[0]));
	struct doc_node *list = doc_new_seq(a);
	int rc = 0;

	if (!list)
		return NULL;
	for (size_t i = 0; i < n && i < sizeof(r) / sizeof(r[0]); i++) {
		struct doc_node *m = doc_new_map(a), *g = doc_new_seq(a), *e = doc_new_seq(a);

		if (!m || !g || !e)
			return NULL;
		for (size_t j = 0; j < t->n_gpus; j++)
			if (t->gpus[j].pcie_root && !strcmp(t->gpus[j].pcie_root, r[i].name))
				rc |= doc_seq_push(a, g, doc_new_string(a, t->gpus[j].name));
		for (size_t j = 0; j < t->n_efas; j++)
			if (t->efas[j].pcie_root && !strcmp(t->efas[j].pcie_root, r[i].name))
				rc |= doc_seq_push(a, e, doc_new_string(a, t->efas[j].name));
		rc |= doc_map_set(a, m, "name", doc_new_string(a, r[i].name));
		rc |= doc_map_set(a, m, "gpus", g);
		rc |= doc_map_set(a, m, "efas", e);
		rc |= doc_seq_push(a, list, m);
	}
	return rc ? NULL : list;
}

/* Every region's price, us-east-1's included: {region: price}. */
static struct doc_node *prices(struct doc_arena *a, const struct hwdb_type *t)
{
	struct doc_node *m = doc_new_map(a);
	int rc = 0;

	if (!m)
		return NULL;
	if (t->has_price)
		rc |= doc_map_set(a, m, HWDB_DEFAULT_REGION, doc_new_float(a, t->price));
	for (size_t i = 0; i < t->n_prices; i++)
		rc |= doc_map_set(a, m, t->prices[i].region, doc_new_float(a, t->prices[i].price));
	return rc ? NULL : m;
}

/* {kind, count, modelled: false}, or null. */
static struct doc_node *accelerators(struct doc_arena *a, const struct hwdb_type *t)
{
	struct doc_node *m;
	int rc = 0;

	if (!t->accel_kind)
		return doc_new_null(a);
	if (!(m = doc_new_map(a)))
		return NULL;
	rc |= doc_map_set(a, m, "kind", doc_new_string(a, t->accel_kind));
	rc |= doc_map_set(a, m, "count", t->accel_count >= 0 ? doc_new_int(a, t->accel_count)
							     : doc_new_null(a));
	rc |= doc_map_set(a, m, "modelled", doc_new_bool(a, false));
	return rc ? NULL : m;
}

struct doc_node *hwdb_type_encode(const struct hwdb_type *t, struct doc_arena *a)
{
	struct doc_node *m = doc_new_map(a), *gpu = doc_new_map(a), *efa = doc_new_map(a);
	struct doc_node *notes = doc_new_seq(a);
	const struct hwdb_pci_efa *gen = hwdb_pci_efa(HWDB_PCI_VENDOR_AMAZON, t->efa_device);
	int rc = 0;

	if (!m || !gpu || !efa || !notes)
		return NULL;
	rc |= doc_map_set(a, m, "name", doc_new_string(a, t->name));
	rc |= doc_map_set(a, m, "family", doc_new_string(a, t->family));
	rc |= doc_map_set(a, m, "vcpu", t->vcpu ? doc_new_int(a, t->vcpu) : doc_new_null(a));
	rc |= doc_map_set(a, m, "memoryMiB",
			  t->memory_mib ? doc_new_int(a, t->memory_mib) : doc_new_null(a));
	rc |= doc_map_set(a, m, "arch", str_or_null(a, t->arch));
	rc |= doc_map_set(a, m, "onDemandPricePerHour",
			  t->has_price ? doc_new_float(a, t->price) : doc_new_null(a));
	rc |= doc_map_set(a, m, "onDemandPrices", prices(a, t));
	rc |= doc_map_set(a, m, "draMetadata", doc_new_bool(a, t->dra_metadata));
	rc |= doc_map_set(a, m, "topology", doc_new_string(a, t->dra_metadata ? "known" : "unknown"));

	rc |= doc_map_set(a, gpu, "model", str_or_null(a, t->gpu_model));
	rc |= doc_map_set(a, gpu, "architecture", str_or_null(a, t->gpu_architecture));
	rc |= doc_map_set(a, gpu, "pciId", pci_id(a, t->gpu_vendor, t->gpu_device));
	rc |= doc_map_set(a, gpu, "count", doc_new_int(a, (int64_t)t->n_gpus));
	rc |= doc_map_set(a, gpu, "memory", str_or_null(a, t->n_gpus ? t->gpus[0].memory : NULL));
	rc |= doc_map_set(a, m, "gpu", gpu);
	rc |= doc_map_set(a, efa, "pciId", pci_id(a, HWDB_PCI_VENDOR_AMAZON, t->efa_device));
	rc |= doc_map_set(a, efa, "generation", gen ? doc_new_string(a, gen->name) : doc_new_null(a));
	rc |= doc_map_set(a, efa, "count", doc_new_int(a, (int64_t)t->n_efas));
	rc |= doc_map_set(a, m, "efa", efa);
	rc |= doc_map_set(a, m, "maxEfaInterfaces", doc_new_int(a, t->max_efa_interfaces));
	rc |= doc_map_set(a, m, "networkCards", doc_new_int(a, t->network_cards));
	rc |= doc_map_set(a, m, "networkBandwidthGbps", doc_new_float(a, t->network_bandwidth_gbps));
	rc |= doc_map_set(a, m, "gpus", devices(a, t->gpus, t->n_gpus, true));
	rc |= doc_map_set(a, m, "efas", devices(a, t->efas, t->n_efas, false));
	rc |= doc_map_set(a, m, "pcieRoots", roots(a, t));
	rc |= doc_map_set(a, m, "accelerators", accelerators(a, t));
	for (size_t i = 0; i < t->n_notes; i++)
		rc |= doc_seq_push(a, notes, doc_new_string(a, t->notes[i]));
	rc |= doc_map_set(a, m, "notes", notes);
	rc |= doc_map_set(a, m, "source", doc_new_string(a, t->builtin ? "builtin" : "extra"));
	return rc ? NULL : m;
}
