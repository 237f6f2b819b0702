/* topo_verify.c - comparing a probed node with hwdb, and learning an hwdb entry
 * from one. See topo_verify.h. */
#include "topo_verify.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *topo_verdict_name(enum topo_verdict v)
{
	switch (v) {
	case TOPO_MATCH:
		return "match";
	case TOPO_DRIFT:
		return "drift";
	case TOPO_UNKNOWN_TYPE:
		break;
	}
	return "unknown";
}

void topo_verify_result_free(struct topo_verify_result *r)
{
	if (!r)
		return;
	dt_diags_free(&r->differences);
	memset(r, 0, sizeof(*r));
}

/* ---- Shapes: how many GPUs and EFAs a root holds ---- */

struct shape {
	size_t gpus, efas;
	const char *root;       /* a node root's name; NULL for hwdb's */
};

static int shape_cmp(const void *a, const void *b)
{
	const struct shape *x = a, *y = b;

	if (x->gpus != y->gpus)
		return x->gpus < y->gpus ? -1 : 1;
	if (x->efas != y->efas)
		return x->efas < y->efas ? -1 : 1;
	if (x->root && y->root)
		return strcmp(x->root, y->root);
	return 0;
}

static const char *plural(size_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

/* The node's shapes, counting only devices still on the bus. */
static struct shape *node_shapes(const struct topo *t, size_t *n)
{
	struct shape *v = calloc(t->n_roots ? t->n_roots : 1, sizeof(*v));
	size_t k = 0;

	if (!v)
		return NULL;
	for (size_t i = 0; i < t->n_roots; i++) {
		const struct topo_root *r = &t->roots[i];
		struct shape s = { 0, 0, r->name };

		for (size_t j = 0; j < r->n_gpus; j++)
			s.gpus += !t->devices[r->gpus[j]].fell_off_bus;
		for (size_t j = 0; j < r->n_efas; j++)
			s.efas += !t->devices[r->efas[j]].fell_off_bus;
		if (s.gpus || s.efas)
			v[k++] = s;
	}
	qsort(v, k, sizeof(*v), shape_cmp);
	*n = k;
	return v;
}

static struct shape *hwdb_shapes(const struct hwdb_type *type, size_t *n)
{
	/* A type has at most one root per device: room for every root. */
	size_t cnt = type->n_gpus + type->n_efas;
	struct hwdb_root *roots = calloc(cnt ? cnt : 1, sizeof(*roots));
	struct shape *v = calloc(cnt ? cnt : 1, sizeof(*v));

	if (!roots || !v) {
		free(roots);
		free(v);
		return NULL;
	}
	cnt = hwdb_type_roots(type, roots, cnt);
	for (size_t i = 0; i < cnt; i++) {
		v[i].gpus = roots[i].n_gpus;
		v[i].efas = roots[i].n_efas;
	}
	free(roots);
	qsort(v, cnt, sizeof(*v), shape_cmp);
	*n = cnt;
	return v;
}

/* Walk both sorted lists shape by shape and report every shape whose
 * count differs, naming the node's roots of a shape it has too many of. */
static void compare_shapes(const struct shape *exp, size_t n_exp, const struct shape *got,
			   size_t n_got, struct dt_diags *diffs)
{
	size_t i = 0, j = 0;

	if (n_exp != n_got)
		dt_diags_add(diffs, "PCIe roots: hwdb has %zu %s with GPUs or EFAs, this node "
			     "has %zu", n_exp, plural(n_exp, "root", "roots"), n_got);
	while (i < n_exp || j < n_got) {
		struct shape key;
		size_t ce = 0, cg = 0, j0;
		char names[512] = "";

		if (j >= n_got || (i < n_exp && shape_cmp(&exp[i], &(struct shape){
				got[j].gpus, got[j].efas, NULL }) <= 0))
			key = (struct shape){ exp[i].gpus, exp[i].efas, NULL };
		else
			key = (struct shape){ got[j].gpus, got[j].efas, NULL };
		while (i < n_exp && exp[i].gpus == key.gpus && exp[i].efas == key.efas) {
			ce++;
			i++;
		}
		j0 = j;
		while (j < n_got && got[j].gpus == key.gpus && got[j].efas == key.efas) {
			cg++;
			j++;
		}
		if (ce == cg)
			continue;
		if (cg > ce) {
			size_t len = 0;

			for (size_t k = j0; k < j && len + 20 < sizeof(names); k++)
				len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s",
							len ? ", " : " (", got[k].root);
			if (len)
				snprintf(names + len, sizeof(names) - len, ")");
		}
		dt_diags_add(diffs, "grouping: roots with %zu %s + %zu %s: hwdb has %zu, this "
			     "node has %zu%s", key.gpus, plural(key.gpus, "GPU", "GPUs"),
			     key.efas, plural(key.efas, "EFA", "EFAs"), ce, cg, names);
	}
}

/* ---- Verify ---- */

static void compare_devices(const struct topo *t, const struct hwdb_type *type,
			    struct dt_diags *diffs)
{
	const struct hwdb_pci_gpu *want_gpu = NULL;
	const struct hwdb_pci_efa *want_efa = NULL;
	size_t live_gpus = 0, live_efas = 0;

	if (type->gpu_device)
		want_gpu = hwdb_pci_gpu(type->gpu_vendor, type->gpu_device);
	if (type->efa_device)
		want_efa = hwdb_pci_efa(HWDB_PCI_VENDOR_AMAZON, type->efa_device);
	for (size_t i = 0; i < t->n_devices; i++) {
		const struct topo_device *d = &t->devices[i];

		if (d->fell_off_bus) {
			dt_diags_add(diffs, "%s %s fell off the bus (config space reads 0xffff)",
				     d->kind == TOPO_GPU ? "GPU" : "EFA", d->bdf_str);
			continue;
		}
		if (d->kind == TOPO_GPU) {
			live_gpus++;
			if (type->gpu_device && (d->vendor != type->gpu_vendor ||
						 d->device != type->gpu_device))
				dt_diags_add(diffs, "GPU %s: model %04x:%04x (%s), hwdb has "
					     "%04x:%04x (%s)", d->bdf_str, d->vendor, d->device,
					     d->model ? d->model : "unknown", type->gpu_vendor,
					     type->gpu_device,
					     want_gpu ? want_gpu->model : type->gpu_model);
			if (!d->pcie_root[0])
				dt_diags_add(diffs, "GPU %s: no PCIe root", d->bdf_str);
		} else {
			live_efas++;
			if (type->efa_device && d->device != type->efa_device)
				dt_diags_add(diffs, "EFA %s: %s (%s), hwdb has %s (%s)", d->bdf_str,
					     d->efa_subsystem ? d->efa_subsystem : "?",
					     d->model ? d->model : "unknown",
					     want_efa ? want_efa->subsystem : "?",
					     want_efa ? want_efa->name : "unknown");
			if (!d->pcie_root[0])
				dt_diags_add(diffs, "EFA %s: no PCIe root", d->bdf_str);
		}
	}
	if (live_gpus != type->n_gpus)
		dt_diags_add(diffs, "GPU count: hwdb has %zu for %s, this node has %zu",
			     type->n_gpus, type->name, live_gpus);
	if (live_efas != type->n_efas)
		dt_diags_add(diffs, "EFA count: hwdb has %zu for %s, this node has %zu",
			     type->n_efas, type->name, live_efas);
}

int topo_verify(const struct topo *t, const char *instance_type,
		 struct topo_verify_result *out, struct dt_err *err)
{
	const char *name = instance_type ? instance_type : t->instance_type;
	const struct hwdb_type *expected;

	if (!name)
		return dt_err_set(err, -EINVAL, "the instance type is unknown (no DMI product "
				  "name); pass --instance-type");
	expected = hwdb_lookup(name);
	if (!expected) {
		memset(out, 0, sizeof(*out));
		dt_diags_init(&out->differences);
		out->instance_type = name;
		out->verdict = TOPO_UNKNOWN_TYPE;
		return 0;
	}
	return topo_verify_entry(t, expected, out, err);
}

int topo_verify_entry(const struct topo *t, const struct hwdb_type *expected,
		       struct topo_verify_result *out, struct dt_err *err)
{
	struct shape *exp = NULL, *got = NULL;
	size_t n_exp = 0, n_got = 0;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	dt_diags_init(&out->differences);
	out->instance_type = expected->name;
	out->expected = expected;
	compare_devices(t, out->expected, &out->differences);
	/* hwdb knows the grouping only for types scraped from live nodes. */
	if (out->expected->dra_metadata) {
		exp = hwdb_shapes(out->expected, &n_exp);
		got = node_shapes(t, &n_got);
		if (!exp || !got) {
			rc = dt_err_set(err, -ENOMEM, "out of memory");
			goto out;
		}
		compare_shapes(exp, n_exp, got, n_got, &out->differences);
	}
	out->verdict = dt_diags_count(&out->differences) ? TOPO_DRIFT : TOPO_MATCH;
out:
	free(exp);
	free(got);
	if (rc)
		topo_verify_result_free(out);
	return rc;
}

/* ---- Learning an entry ---- */

void topo_learned_free(struct topo_learned *l)
{
	if (!l)
		return;
	free(l->devices);
	free(l->names);
	free(l->attrs);
	free(l->name);
	free(l->family);
	free(l->gpu_model);
	free(l->note);
	memset(l, 0, sizeof(*l));
}

/* The cheapest known type with this GPU (or this EFA), for its drivers'
 * attributes; NULL when there is none. */
static const struct hwdb_type *reference_type(uint16_t gpu_vendor, uint16_t gpu_device,
					      uint16_t efa_device)
{
	for (size_t i = 0; i < hwdb_count(); i++) {
		const struct hwdb_type *k = hwdb_at(i);

		if (!k->dra_metadata)
			continue;
		if (gpu_device && k->n_gpus && k->gpu_vendor == gpu_vendor &&
		    k->gpu_device == gpu_device)
			return k;
		if (efa_device && k->n_efas && k->efa_device == efa_device)
			return k;
	}
	return NULL;
}

/* Attributes for devices no known type has: what the PCI tables say. */
static int build_gpu_attrs(struct topo_learned *l, const struct topo_device *d,
			   struct hwdb_attr *a)
{
	size_t n = 0;

	if (asprintf(&l->gpu_model, "NVIDIA %s", d->model ? d->model : "GPU") < 0) {
		l->gpu_model = NULL;
		return -ENOMEM;
	}
	a[n++] = (struct hwdb_attr){ "productName", HWDB_ATTR_STRING, l->gpu_model, 0, false };
	if (d->architecture)
		a[n++] = (struct hwdb_attr){ "architecture", HWDB_ATTR_STRING, d->architecture,
					     0, false };
	a[n++] = (struct hwdb_attr){ "type", HWDB_ATTR_STRING, "gpu", 0, false };
	return (int)n;
}

static int build_efa_attrs(const struct topo_device *d, struct hwdb_attr *a)
{
	size_t n = 0;

	a[n++] = (struct hwdb_attr){ "dra.net/pciDevice", HWDB_ATTR_STRING,
				     "Elastic Fabric Adapter (EFA)", 0, false };
	a[n++] = (struct hwdb_attr){ "dra.net/pciVendor", HWDB_ATTR_STRING,
				     "Amazon.com, Inc.", 0, false };
	if (d->efa_subsystem)
		a[n++] = (struct hwdb_attr){ "dra.net/pciSubsystem", HWDB_ATTR_STRING,
					     d->efa_subsystem, 0, false };
	a[n++] = (struct hwdb_attr){ "dra.net/rdma", HWDB_ATTR_BOOL, NULL, 0,
				     d->rdma_device[0] != '\0' };
	return (int)n;
}

static const char *host_arch(void)
{
#if defined(__aarch64__)
	return "arm64";
#else
	return "amd64";
#endif
}

/* What every learned GPU (or EFA) carries: the drivers' attributes and the
 * GPU memory, from a reference type or built. */
struct device_source {
	const struct hwdb_type *ref;    /* NULL: built from the PCI tables */
	const struct hwdb_attr *attrs;
	size_t n_attrs;
	const char *memory;
	int64_t memory_mib;
};

/* The first live device of a kind, warning about live ones of another
 * model (an entry has one GPU model and one EFA id). */
static const struct topo_device *first_live(const struct topo *t,
					     enum topo_kind kind, size_t *count,
					     struct dt_diags *warnings)
{
	const struct topo_device *first = NULL;

	*count = 0;
	for (size_t i = 0; i < t->n_devices; i++) {
		const struct topo_device *d = &t->devices[i];

		if (d->fell_off_bus || d->kind != kind)
			continue;
		(*count)++;
		if (!first)
			first = d;
		else if (d->device != first->device)
			dt_diags_add(warnings, "%s %s is %04x:%04x, not %04x:%04x like %s; the "
				     "entry describes the first", kind == TOPO_GPU ? "GPU" : "EFA",
				     d->bdf_str, d->vendor, d->device, first->vendor,
				     first->device, first->bdf_str);
	}
	return first;
}

static int gpu_source(struct topo_learned *l, const struct topo_device *gpu,
		      struct hwdb_attr *built, struct device_source *src, size_t *used)
{
	struct hwdb_type *ty = &l->type;
	int n;

	*used = 0;
	ty->gpu_vendor = gpu->vendor;
	ty->gpu_device = gpu->device;
	src->ref = reference_type(gpu->vendor, gpu->device, 0);
	if (src->ref) {
		ty->gpu_model = src->ref->gpu_model;
		ty->gpu_architecture = src->ref->gpu_architecture;
		src->attrs = src->ref->gpus[0].attrs;
		src->n_attrs = src->ref->gpus[0].n_attrs;
		src->memory = src->ref->gpus[0].memory;
		src->memory_mib = src->ref->gpus[0].memory_mib;
		return 0;
	}
	n = build_gpu_attrs(l, gpu, built);
	if (n < 0)
		return n;
	ty->gpu_model = l->gpu_model;
	ty->gpu_architecture = gpu->architecture;
	src->attrs = built;
	src->n_attrs = (size_t)n;
	*used = (size_t)n;
	return 0;
}

static void efa_source(struct topo_learned *l, const struct topo_device *efa,
		       struct hwdb_attr *built, struct device_source *src)
{
	l->type.efa_device = efa->device;
	src->ref = reference_type(0, 0, efa->device);
	if (src->ref) {
		src->attrs = src->ref->efas[0].attrs;
		src->n_attrs = src->ref->efas[0].n_attrs;
	} else {
		src->attrs = built;
		src->n_attrs = (size_t)build_efa_attrs(efa, built);
	}
}

/* Fill the live devices of t into l->devices (GPUs first), named gpu-N
 * and efa-N in address order. */
static void fill_devices(const struct topo *t, struct topo_learned *l,
			 size_t n_gpus, const struct device_source *gsrc,
			 const struct device_source *esrc)
{
	size_t gi = 0, ei = 0;

	for (size_t i = 0; i < t->n_devices; i++) {
		const struct topo_device *d = &t->devices[i];
		int gpu = d->kind == TOPO_GPU;
		const struct device_source *src = gpu ? gsrc : esrc;
		size_t index, slot;
		struct hwdb_device *h;

		if (d->fell_off_bus)
			continue;
		index = gpu ? gi++ : ei++;
		slot = gpu ? index : n_gpus + index;
		h = &l->devices[slot];
		h->name = l->names + slot * TOPO_LEARNED_NAME;
		snprintf(l->names + slot * TOPO_LEARNED_NAME, TOPO_LEARNED_NAME, "%s-%zu",
			 topo_kind_name(d->kind), index);
		h->pcie_root = d->pcie_root[0] ? d->pcie_root : NULL;
		h->numa_node = d->numa_node;
		h->attrs = src->attrs;
		h->n_attrs = src->n_attrs;
		h->memory = gpu ? src->memory : NULL;
		h->memory_mib = gpu ? src->memory_mib : 0;
	}
}

void topo_learned_use_node_names(struct topo_learned *l, const struct topo *t)
{
	size_t gi = 0, ei = 0, n_gpus = l->type.n_gpus;

	for (size_t i = 0; i < t->n_devices; i++) {
		const struct topo_device *d = &t->devices[i];
		size_t slot;

		if (d->fell_off_bus)
			continue;       /* in no slice: fill_devices skipped it too */
		slot = d->kind == TOPO_GPU ? gi++ : n_gpus + ei++;
		topo_device_dra_name(t, i, l->names + slot * TOPO_LEARNED_NAME, TOPO_LEARNED_NAME);
	}
	l->type.node_names = true;
}

int topo_learn(const struct topo *t, const char *name, struct topo_learned *l,
		struct dt_diags *warnings, struct dt_err *err)
{
	const struct topo_device *gpu, *efa;
	struct device_source gsrc = { 0 }, esrc = { 0 };
	struct hwdb_type *ty = &l->type;
	size_t n_gpus, n_efas, used = 0;
	const char *dot;
	int rc;

	memset(l, 0, sizeof(*l));
	if (!name)
		name = t->instance_type ? t->instance_type : "unknown";
	gpu = first_live(t, TOPO_GPU, &n_gpus, warnings);
	efa = first_live(t, TOPO_EFA, &n_efas, warnings);
	l->devices = calloc(n_gpus + n_efas + 1, sizeof(*l->devices));
	l->names = calloc(n_gpus + n_efas + 1, TOPO_LEARNED_NAME);
	/* Built attributes: at most 3 for the GPUs, 4 for the EFAs. */
	l->attrs = calloc(8, sizeof(*l->attrs));
	l->name = strdup(name);
	dot = strchr(name, '.');
	l->family = dot ? strndup(name, (size_t)(dot - name)) : strdup(name);
	if (!l->devices || !l->names || !l->attrs || !l->name || !l->family)
		goto oom;

	ty->name = l->name;
	ty->family = l->family;
	ty->arch = host_arch();
	ty->vcpu = t->cpus;
	ty->memory_mib = t->memory_mib;
	ty->dra_metadata = true;        /* pcieRoot and NUMA were seen, not guessed */
	if (gpu && gpu_source(l, gpu, l->attrs, &gsrc, &used))
		goto oom;
	if (efa)
		efa_source(l, efa, l->attrs + used, &esrc);
	fill_devices(t, l, n_gpus, &gsrc, &esrc);
	ty->gpus = l->devices;
	ty->n_gpus = n_gpus;
	ty->efas = l->devices + n_gpus;
	ty->n_efas = n_efas;
	ty->max_efa_interfaces = (int)n_efas;
	/* EC2 gives each EFA its own network card on every type with more
	 * than one EFA; sysfs cannot tell, so this is the usual layout. */
	ty->network_cards = n_efas > 1 ? (int)n_efas : 1;
	if (asprintf(&l->note, "learned by dratopo-agent from a live node: devices, pcieRoot "
		     "and NUMA as probed%s%s; price, network cards and bandwidth are not "
		     "visible in sysfs", gsrc.ref ? "; GPU attributes as on " : "",
		     gsrc.ref ? gsrc.ref->name : "") < 0) {
		l->note = NULL;
		goto oom;
	}
	l->notes[0] = l->note;
	ty->notes = l->notes;
	ty->n_notes = 1;
	return 0;
oom:
	rc = dt_err_set(err, -ENOMEM, "out of memory");
	topo_learned_free(l);
	return rc;
}
