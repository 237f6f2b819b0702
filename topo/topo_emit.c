/* topo_emit.c - printing a probed topology: the tree of roots for
 * people, the contract's object for programs. See topo.h. */
#include "topo.h"

#include <stdio.h>
#include <string.h>

#include "doc.h"

/* ---- Text ---- */

static void text_device(const struct topo_device *d, const char *branch, struct strbuf *out)
{
	char ids[16];

	snprintf(ids, sizeof(ids), "%04x:%04x", d->vendor, d->device);
	sb_printf(out, "%s%s %s  %s  %-16s", branch, topo_kind_name(d->kind), d->bdf_str, ids,
		  d->model ? d->model : "(unknown model)");
	if (d->kind == TOPO_EFA)
		sb_printf(out, "  %-11s", d->rdma_device[0] ? d->rdma_device : "(no rdma)");
	if (d->link_speed[0] || d->link_width)
		sb_printf(out, "  %s x%d", d->link_speed[0] ? d->link_speed : "?", d->link_width);
	if (d->numa_node >= 0)
		sb_printf(out, "  numa %d", d->numa_node);
	if (d->driver[0])
		sb_printf(out, "  [%s]", d->driver);
	if (d->fell_off_bus)
		sb_puts(out, "  FELL OFF THE BUS");
	sb_putc(out, '\n');
}

static void text_group(const struct topo *t, const size_t *gpus, size_t n_gpus,
		       const size_t *efas, size_t n_efas, struct strbuf *out)
{
	size_t total = n_gpus + n_efas;

	for (size_t i = 0; i < total; i++) {
		size_t k = i < n_gpus ? gpus[i] : efas[i - n_gpus];

		text_device(&t->devices[k], i + 1 < total ? "  ├─ " : "  └─ ", out);
	}
}

int topo_emit_text(const struct topo *t, struct strbuf *out)
{
	size_t n_orphans = 0;

	sb_printf(out, "%s: %zu GPU%s, %zu EFA%s on %zu PCIe root%s (%zu other PCI devices)\n",
		  t->instance_type ? t->instance_type : "(instance type unknown)",
		  t->n_gpus, t->n_gpus == 1 ? "" : "s", t->n_efas, t->n_efas == 1 ? "" : "s",
		  t->n_roots, t->n_roots == 1 ? "" : "s", t->n_other);
	for (size_t i = 0; i < t->n_roots; i++) {
		const struct topo_root *r = &t->roots[i];
		int numa = topo_root_numa(t, r);

		sb_printf(out, "%s", r->name);
		if (numa >= 0)
			sb_printf(out, "  numa %d", numa);
		sb_printf(out, "  %zu GPU%s, %zu EFA%s\n", r->n_gpus, r->n_gpus == 1 ? "" : "s",
			  r->n_efas, r->n_efas == 1 ? "" : "s");
		text_group(t, r->gpus, r->n_gpus, r->efas, r->n_efas, out);
	}
	for (size_t i = 0; i < t->n_devices; i++)
		n_orphans += !t->devices[i].pcie_root[0];
	if (n_orphans) {
		size_t seen = 0;

		sb_puts(out, "(no PCIe root)\n");
		for (size_t i = 0; i < t->n_devices; i++) {
			if (t->devices[i].pcie_root[0])
				continue;
			text_device(&t->devices[i], ++seen < n_orphans ? "  ├─ " : "  └─ ", out);
		}
	}
	return sb_error(out);
}

/* ---- Document ---- */

static struct doc_node *str_or_null(struct doc_arena *a, const char *s)
{
	return s && *s ? doc_new_string(a, s) : doc_new_null(a);
}

static struct doc_node *hex4(struct doc_arena *a, unsigned v)
{
	char buf[8];

	snprintf(buf, sizeof(buf), "%04x", v & 0xffff);
	return doc_new_string(a, buf);
}

static struct doc_node *device_doc(const struct topo_device *d, struct doc_arena *a)
{
	struct doc_node *m = doc_new_map(a);
	char cls[8];
	int rc = 0;

	if (!m)
		return NULL;
	snprintf(cls, sizeof(cls), "%04x", (unsigned)(d->class_code >> 8));
	rc |= doc_map_set(a, m, "bdf", doc_new_string(a, d->bdf_str));
	rc |= doc_map_set(a, m, "kind", doc_new_string(a, topo_kind_name(d->kind)));
	rc |= doc_map_set(a, m, "vendor", hex4(a, d->vendor));
	rc |= doc_map_set(a, m, "device", hex4(a, d->device));
	rc |= doc_map_set(a, m, "model", str_or_null(a, d->model));
	rc |= doc_map_set(a, m, "pcieRoot", str_or_null(a, d->pcie_root));
	rc |= doc_map_set(a, m, "numaNode",
			  d->numa_node >= 0 ? doc_new_int(a, d->numa_node) : doc_new_null(a));
	rc |= doc_map_set(a, m, "class", doc_new_string(a, cls));
	rc |= doc_map_set(a, m, "subsystemVendor",
			  d->has_subsys ? hex4(a, d->subsys_vendor) : doc_new_null(a));
	rc |= doc_map_set(a, m, "subsystemDevice",
			  d->has_subsys ? hex4(a, d->subsys_device) : doc_new_null(a));
	if (d->kind == TOPO_GPU) {
		rc |= doc_map_set(a, m, "architecture", str_or_null(a, d->architecture));
	} else {
		rc |= doc_map_set(a, m, "efaGeneration", d->efa_generation
				  ? doc_new_int(a, d->efa_generation) : doc_new_null(a));
		rc |= doc_map_set(a, m, "pciSubsystem", str_or_null(a, d->efa_subsystem));
		rc |= doc_map_set(a, m, "rdmaDevice", str_or_null(a, d->rdma_device));
	}
	rc |= doc_map_set(a, m, "linkSpeed", str_or_null(a, d->link_speed));
	rc |= doc_map_set(a, m, "linkWidth",
			  d->link_width ? doc_new_int(a, d->link_width) : doc_new_null(a));
	rc |= doc_map_set(a, m, "driver", str_or_null(a, d->driver));
	rc |= doc_map_set(a, m, "fellOffBus", doc_new_bool(a, d->fell_off_bus));
	return rc ? NULL : m;
}

static struct doc_node *bdf_list(const struct topo *t, const size_t *idx, size_t n,
				 struct doc_arena *a)
{
	struct doc_node *s = doc_new_seq(a);

	for (size_t i = 0; s && i < n; i++)
		if (doc_seq_push(a, s, doc_new_string(a, t->devices[idx[i]].bdf_str)))
			return NULL;
	return s;
}

struct doc_node *topo_to_doc(const struct topo *t, struct doc_arena *a)
{
	struct doc_node *top = doc_new_map(a), *devs = doc_new_seq(a), *roots = doc_new_seq(a);
	int rc = 0;

	if (!top || !devs || !roots)
		return NULL;
	rc |= doc_map_set(a, top, "instanceType", str_or_null(a, t->instance_type));
	for (size_t i = 0; i < t->n_devices; i++)
		rc |= doc_seq_push(a, devs, device_doc(&t->devices[i], a));
	rc |= doc_map_set(a, top, "devices", devs);
	for (size_t i = 0; i < t->n_roots; i++) {
		const struct topo_root *r = &t->roots[i];
		struct doc_node *m = doc_new_map(a);
		int numa = topo_root_numa(t, r);

		if (!m)
			return NULL;
		rc |= doc_map_set(a, m, "name", doc_new_string(a, r->name));
		rc |= doc_map_set(a, m, "numaNode", numa >= 0 ? doc_new_int(a, numa)
							      : doc_new_null(a));
		rc |= doc_map_set(a, m, "gpus", bdf_list(t, r->gpus, r->n_gpus, a));
		rc |= doc_map_set(a, m, "efas", bdf_list(t, r->efas, r->n_efas, a));
		rc |= doc_seq_push(a, roots, m);
	}
	rc |= doc_map_set(a, top, "pcieRoots", roots);
	return rc ? NULL : top;
}
