/* hwdb.c - hwdb at run time apart from the catalogues (hwdb_catalog.c,
 * which hold the lookups by name and price): entries held apart (learned
 * ones), PCIe roots of a type, PCI id lookups. */
#include "hwdb.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwdb_source.h"

/* ---- Sizes and prices ---- */

bool hwdb_type_sized(const struct hwdb_type *t)
{
	return t && t->vcpu > 0 && t->memory_mib > 0 && t->arch;
}

bool hwdb_type_incomplete(const struct hwdb_type *t)
{
	bool devices = t->n_gpus || t->n_efas;

	return !hwdb_type_sized(t) || (devices && !t->dra_metadata) ||
	       (t->n_gpus && !t->gpu_device) || (t->n_efas && !t->efa_device);
}

bool hwdb_type_price(const struct hwdb_type *t, const char *region, double *out)
{
	size_t lo = 0, hi = t->n_prices;

	if (!region || !strcmp(region, HWDB_DEFAULT_REGION)) {
		*out = t->price;
		return t->has_price;
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int r = strcmp(region, t->prices[mid].region);

		if (!r) {
			*out = t->prices[mid].price;
			return true;
		}
		if (r < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return false;
}

bool hwdb_region_known(const char *name)
{
	for (size_t i = 0; name && hwdb_regions[i]; i++)
		if (!strcmp(hwdb_regions[i], name))
			return true;
	return false;
}

/* ---- Entries held apart ---- */

struct hwdb_entry {
	struct hwdb_source *src;
};

int hwdb_entry_parse(const char *text, const char *type, const char *name,
		     struct hwdb_entry **out, struct dt_err *err)
{
	struct hwdb_entry *e;
	int rc;

	*out = NULL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return dt_err_set(err, -ENOMEM, "%s: out of memory", name);
	rc = hwdb_source_parse_types(text, strlen(text), name, false, &e->src, err);
	if (rc)
		goto fail;
	if (e->src->n_types != 1 || strcmp(e->src->types[0].name, type) != 0) {
		rc = dt_err_set(err, -EINVAL, "%s: must hold exactly one entry, named %s", name,
				type);
		goto fail;
	}
	rc = hwdb_slices_check(&e->src->types[0], err);
	if (rc) {
		dt_err_prefix(err, "%s: ", name);
		goto fail;
	}
	e->src->types[0].learned = true;
	*out = e;
	return 0;
fail:
	hwdb_entry_free(e);
	return rc;
}

const struct hwdb_type *hwdb_entry_type(const struct hwdb_entry *e)
{
	return &e->src->types[0];
}

void hwdb_entry_free(struct hwdb_entry *e)
{
	if (!e)
		return;
	hwdb_source_free(e->src);
	free(e);
}

/* ---- PCIe roots ---- */

static const struct hwdb_device *nth_device(const struct hwdb_type *t, size_t i)
{
	return i < t->n_gpus ? &t->gpus[i] : &t->efas[i - t->n_gpus];
}

size_t hwdb_type_roots(const struct hwdb_type *t, struct hwdb_root *out, size_t cap)
{
	size_t n = 0, total = t ? t->n_gpus + t->n_efas : 0;

	for (size_t i = 0; i < total; i++) {
		const struct hwdb_device *d = nth_device(t, i);
		bool gpu = i < t->n_gpus, seen = false;
		size_t k;

		if (!d->pcie_root)
			continue;
		/* New roots are found against the devices, not against out[],
		 * so that the count is right even when out is too short. */
		for (size_t j = 0; j < i && !seen; j++)
			seen = nth_device(t, j)->pcie_root &&
			       !strcmp(nth_device(t, j)->pcie_root, d->pcie_root);
		if (!seen) {
			if (n < cap)
				out[n] = (struct hwdb_root){ .name = d->pcie_root };
			n++;
		}
		for (k = 0; k < n && k < cap && strcmp(out[k].name, d->pcie_root); k++)
			;
		if (k < n && k < cap) {
			if (gpu)
				out[k].n_gpus++;
			else
				out[k].n_efas++;
		}
	}
	return n;
}

/* ---- PCI ids ---- */

const struct hwdb_pci_gpu *hwdb_pci_gpu(uint16_t vendor, uint16_t device)
{
	for (size_t i = 0; i < hwdb_builtin_n_pci_gpus; i++)
		if (hwdb_builtin_pci_gpus[i].vendor == vendor &&
		    hwdb_builtin_pci_gpus[i].device == device)
			return &hwdb_builtin_pci_gpus[i];
	return NULL;
}

const struct hwdb_pci_efa *hwdb_pci_efa(uint16_t vendor, uint16_t device)
{
	for (size_t i = 0; i < hwdb_builtin_n_pci_efas; i++)
		if (hwdb_builtin_pci_efas[i].vendor == vendor &&
		    hwdb_builtin_pci_efas[i].device == device)
			return &hwdb_builtin_pci_efas[i];
	return NULL;
}

bool hwdb_pci_ignored(uint16_t vendor, uint16_t device, uint32_t pci_class)
{
	uint16_t cls = (uint16_t)(pci_class >> 8);

	for (size_t i = 0; i < hwdb_builtin_n_pci_ignore; i++) {
		const struct hwdb_pci_ignore *r = &hwdb_builtin_pci_ignore[i];

		if ((!r->has_vendor || r->vendor == vendor) &&
		    (!r->has_device || r->device == device) &&
		    (!r->has_class || r->pci_class == cls))
			return true;
	}
	return false;
}
