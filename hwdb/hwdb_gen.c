/* hwdb_gen.c - the build-time generator: compiles the instance-type files
 * (hwdb/instance-types.yaml, hwdb/efa-instance-types.yaml), the prices per
 * region (hwdb/prices.yaml), hwdb/pci-ids.yaml and hwdb/mig-profiles.yaml
 * into C tables (hwdb_data.c in the build directory).
 *
 *   hwdb_gen OUT.c PCI_IDS.yaml MIG_PROFILES.yaml PRICES.yaml TYPES.yaml...
 *
 * A type in two files, or a price for a type no file has, fails the build.
 * It decodes both files with the same decoder `--hwdb-extra` uses
 * (hwdb_source.c), so the built-in data obeys the rules an extra file does,
 * and a bad data file fails the build with the decoder's message. The
 * output is written to OUT.c.tmp and renamed, so an interrupted run never
 * leaves a half-written table behind. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "hwdb_mig_internal.h"
#include "hwdb_source.h"
#include "strbuf.h"

/* A C string literal for s. */
static void put_cstr(struct strbuf *sb, const char *s)
{
	if (!s) {
		sb_puts(sb, "NULL");
		return;
	}
	sb_putc(sb, '"');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			sb_printf(sb, "\\%c", *p);
		else if (*p < 0x20 || *p >= 0x7f)
			sb_printf(sb, "\\%03o", *p);    /* octal: cannot swallow the next char */
		else
			sb_putc(sb, (char)*p);
	}
	sb_putc(sb, '"');
}

static void put_notes(struct strbuf *out, const char *var, const char *const *notes, size_t n)
{
	sb_printf(out, "static const char *const %s[] = {\n", var);
	for (size_t j = 0; j < n; j++) {
		sb_puts(out, "\t");
		put_cstr(out, notes[j]);
		sb_puts(out, ",\n");
	}
	sb_puts(out, "};\n\n");
}

static const char *attr_type_name(enum hwdb_attr_type t)
{
	switch (t) {
	case HWDB_ATTR_INT:
		return "HWDB_ATTR_INT";
	case HWDB_ATTR_BOOL:
		return "HWDB_ATTR_BOOL";
	case HWDB_ATTR_VERSION:
		return "HWDB_ATTR_VERSION";
	default:
		return "HWDB_ATTR_STRING";
	}
}

/* Attribute arrays repeat (every GPU of a family has the same ones), so
 * each distinct array is written once and shared. */
struct attr_pool {
	char **bodies;
	size_t n, cap;
};

/* The index of the array holding attrs, writing it to defs if new; -1 on
 * OOM. */
static long attr_array(struct attr_pool *pool, struct strbuf *defs, const struct hwdb_attr *attrs,
		       size_t n)
{
	struct strbuf body = STRBUF_INIT;
	long idx = -1;

	for (size_t i = 0; i < n; i++) {
		sb_puts(&body, "\t{ ");
		put_cstr(&body, attrs[i].name);
		sb_printf(&body, ", %s, ", attr_type_name(attrs[i].type));
		put_cstr(&body, attrs[i].str);
		sb_printf(&body, ", INT64_C(%" PRId64 "), %s },\n", attrs[i].i,
			  attrs[i].b ? "true" : "false");
	}
	if (sb_error(&body))
		goto out;
	for (size_t i = 0; i < pool->n; i++)
		if (!strcmp(pool->bodies[i], sb_str(&body))) {
			idx = (long)i;
			goto out;
		}
	if (DT_GROW(pool->bodies, pool->cap, pool->n + 1))
		goto out;
	pool->bodies[pool->n] = strdup(sb_str(&body));
	if (!pool->bodies[pool->n])
		goto out;
	idx = (long)pool->n++;
	sb_printf(defs, "static const struct hwdb_attr attrs_%ld[] = {\n%s};\n\n", idx,
		  pool->bodies[idx]);
out:
	sb_free(&body);
	return idx;
}

static int put_devices(struct strbuf *defs, struct attr_pool *pool, const char *var,
		       const struct hwdb_device *devs, size_t n)
{
	struct strbuf body = STRBUF_INIT;
	int rc = -ENOMEM;

	for (size_t i = 0; i < n; i++) {
		const struct hwdb_device *d = &devs[i];
		long a = d->n_attrs ? attr_array(pool, defs, d->attrs, d->n_attrs) : 0;

		if (a < 0)
			goto out;
		sb_puts(&body, "\t{ ");
		put_cstr(&body, d->name);
		sb_puts(&body, ", ");
		put_cstr(&body, d->pcie_root);
		sb_printf(&body, ", %d, ", d->numa_node);
		put_cstr(&body, d->memory);
		sb_printf(&body, ", INT64_C(%" PRId64 "), ", d->memory_mib);
		if (d->n_attrs)
			sb_printf(&body, "attrs_%ld, %zu },\n", a, d->n_attrs);
		else
			sb_puts(&body, "NULL, 0 },\n");
	}
	sb_printf(defs, "static const struct hwdb_device %s[] = {\n%s};\n\n", var, sb_str(&body));
	rc = sb_error(&body);
out:
	sb_free(&body);
	return rc;
}

static void put_prices(struct strbuf *out, const char *var, const struct hwdb_type *t)
{
	sb_printf(out, "static const struct hwdb_price %s[] = {\n", var);
	for (size_t j = 0; j < t->n_prices; j++) {
		sb_puts(out, "\t{ ");
		put_cstr(out, t->prices[j].region);
		sb_printf(out, ", %.17g },\n", t->prices[j].price);
	}
	sb_puts(out, "};\n\n");
}

static int put_types(struct strbuf *out, const struct hwdb_type *types, size_t n_types)
{
	struct attr_pool pool = { 0 };
	struct strbuf table = STRBUF_INIT;
	int rc = 0;

	for (size_t i = 0; i < n_types && !rc; i++) {
		const struct hwdb_type *t = &types[i];
		char var[32];

		if (t->n_gpus) {
			snprintf(var, sizeof(var), "gpus_%zu", i);
			rc = put_devices(out, &pool, var, t->gpus, t->n_gpus);
		}
		if (!rc && t->n_efas) {
			snprintf(var, sizeof(var), "efas_%zu", i);
			rc = put_devices(out, &pool, var, t->efas, t->n_efas);
		}
		if (!rc && t->n_notes) {
			snprintf(var, sizeof(var), "notes_%zu", i);
			put_notes(out, var, t->notes, t->n_notes);
		}
		if (!rc && t->n_prices) {
			snprintf(var, sizeof(var), "prices_%zu", i);
			put_prices(out, var, t);
		}
		sb_puts(&table, "\t{\n\t\t.name = ");
		put_cstr(&table, t->name);
		sb_puts(&table, ", .family = ");
		put_cstr(&table, t->family);
		sb_puts(&table, ", .arch = ");
		put_cstr(&table, t->arch);
		sb_printf(&table, ",\n\t\t.vcpu = %d, .memory_mib = INT64_C(%" PRId64 "),\n", t->vcpu,
			  t->memory_mib);
		/* %.17g: the double reads back exactly. */
		sb_printf(&table, "\t\t.has_price = %s, .price = %.17g, .dra_metadata = %s,\n",
			  t->has_price ? "true" : "false", t->price,
			  t->dra_metadata ? "true" : "false");
		sb_puts(&table, "\t\t.gpu_model = ");
		put_cstr(&table, t->gpu_model);
		sb_puts(&table, ", .gpu_architecture = ");
		put_cstr(&table, t->gpu_architecture);
		sb_printf(&table, ",\n\t\t.gpu_vendor = 0x%04x, .gpu_device = 0x%04x, "
			  ".efa_device = 0x%04x,\n", t->gpu_vendor, t->gpu_device, t->efa_device);
		sb_printf(&table, "\t\t.max_efa_interfaces = %d, .network_cards = %d, "
			  ".network_bandwidth_gbps = %.17g,\n", t->max_efa_interfaces,
			  t->network_cards, t->network_bandwidth_gbps);
		if (t->n_gpus)
			sb_printf(&table, "\t\t.gpus = gpus_%zu, .n_gpus = %zu,\n", i, t->n_gpus);
		if (t->n_efas)
			sb_printf(&table, "\t\t.efas = efas_%zu, .n_efas = %zu,\n", i, t->n_efas);
		if (t->n_notes)
			sb_printf(&table, "\t\t.notes = notes_%zu, .n_notes = %zu,\n", i, t->n_notes);
		if (t->n_prices)
			sb_printf(&table, "\t\t.prices = prices_%zu, .n_prices = %zu,\n", i,
				  t->n_prices);
		sb_puts(&table, "\t\t.accel_kind = ");
		put_cstr(&table, t->accel_kind);
		sb_printf(&table, ", .accel_count = %d,\n", t->accel_count);
		sb_puts(&table, "\t\t.builtin = true,\n\t},\n");
	}
	sb_printf(out, "const struct hwdb_type hwdb_builtin_types[] = {\n%s};\n", sb_str(&table));
	sb_printf(out, "const size_t hwdb_builtin_n_types = %zu;\n\n", n_types);
	if (!rc)
		rc = sb_error(&table);
	for (size_t i = 0; i < pool.n; i++)
		free(pool.bodies[i]);
	free(pool.bodies);
	sb_free(&table);
	return rc;
}

static void put_pci(struct strbuf *out, const struct hwdb_source *pci)
{
	/* An empty initializer list is not C11; a zero sentinel keeps every
	 * array non-empty, the count says how many entries are real. */
	sb_puts(out, "const struct hwdb_pci_gpu hwdb_builtin_pci_gpus[] = {\n");
	for (size_t i = 0; i < pci->n_pci_gpus; i++) {
		const struct hwdb_pci_gpu *g = &pci->pci_gpus[i];

		sb_printf(out, "\t{ 0x%04x, 0x%04x, ", g->vendor, g->device);
		put_cstr(out, g->model);
		sb_puts(out, ", ");
		put_cstr(out, g->architecture);
		sb_puts(out, " },\n");
	}
	sb_printf(out, "\t{ 0 },\n};\nconst size_t hwdb_builtin_n_pci_gpus = %zu;\n\n",
		  pci->n_pci_gpus);

	sb_puts(out, "const struct hwdb_pci_efa hwdb_builtin_pci_efas[] = {\n");
	for (size_t i = 0; i < pci->n_pci_efas; i++) {
		const struct hwdb_pci_efa *e = &pci->pci_efas[i];

		sb_printf(out, "\t{ 0x%04x, 0x%04x, %d, ", e->vendor, e->device, e->generation);
		put_cstr(out, e->subsystem);
		sb_puts(out, ", ");
		put_cstr(out, e->name);
		sb_puts(out, " },\n");
	}
	sb_printf(out, "\t{ 0 },\n};\nconst size_t hwdb_builtin_n_pci_efas = %zu;\n\n",
		  pci->n_pci_efas);

	sb_puts(out, "const struct hwdb_pci_ignore hwdb_builtin_pci_ignore[] = {\n");
	for (size_t i = 0; i < pci->n_pci_ignore; i++) {
		const struct hwdb_pci_ignore *r = &pci->pci_ignore[i];

		sb_printf(out, "\t{ %s, %s, %s, 0x%04x, 0x%04x, 0x%04x, ",
			  r->has_vendor ? "true" : "false", r->has_device ? "true" : "false",
			  r->has_class ? "true" : "false", r->vendor, r->device, r->pci_class);
		put_cstr(out, r->why);
		sb_puts(out, " },\n");
	}
	sb_printf(out, "\t{ 0 },\n};\nconst size_t hwdb_builtin_n_pci_ignore = %zu;\n",
		  pci->n_pci_ignore);
}

static void put_mig_profile(struct strbuf *out, const struct hwdb_mig_profile *p)
{
	sb_puts(out, "\t{ .name = ");
	put_cstr(out, p->name);
	sb_printf(out, ", .compute_slices = %d, .memory_slices = %d, .instances = %d,\n"
		  "\t  .placements = {", p->compute_slices, p->memory_slices, p->instances);
	for (size_t k = 0; k < p->n_placements; k++)
		sb_printf(out, "%s%d", k ? ", " : " ", p->placements[k]);
	sb_printf(out, " }, .n_placements = %zu,\n", p->n_placements);
	sb_printf(out, "\t  .multiprocessors = INT64_C(%" PRId64 "), .copy_engines = INT64_C(%"
		  PRId64 "), .decoders = INT64_C(%" PRId64 "),\n", p->multiprocessors,
		  p->copy_engines, p->decoders);
	sb_printf(out, "\t  .encoders = INT64_C(%" PRId64 "), .jpeg_engines = INT64_C(%" PRId64
		  "), .ofa_engines = INT64_C(%" PRId64 "),\n\t  .memory = ", p->encoders,
		  p->jpeg_engines, p->ofa_engines);
	put_cstr(out, p->memory);
	sb_printf(out, ", .memory_mib = INT64_C(%" PRId64 ") },\n", p->memory_mib);
}

static void put_mig(struct strbuf *out, const struct hwdb_source *mig)
{
	struct strbuf table = STRBUF_INIT;
	char var[32];

	for (size_t i = 0; i < mig->n_mig_gpus; i++) {
		const struct hwdb_mig_gpu *g = &mig->mig_gpus[i];

		sb_printf(out, "static const struct hwdb_mig_profile mig_profiles_%zu[] = {\n", i);
		for (size_t j = 0; j < g->n_profiles; j++)
			put_mig_profile(out, &g->profiles[j]);
		sb_puts(out, "};\n\n");
		if (g->n_notes) {
			snprintf(var, sizeof(var), "mig_notes_%zu", i);
			put_notes(out, var, g->notes, g->n_notes);
		}
		sb_puts(&table, "\t{ .product_name = ");
		put_cstr(&table, g->product_name);
		sb_printf(&table, ", .compute_slices = %d, .memory_slices = %d,\n"
			  "\t  .profiles = mig_profiles_%zu, .n_profiles = %zu", g->compute_slices,
			  g->memory_slices, i, g->n_profiles);
		if (g->n_notes)
			sb_printf(&table, ", .notes = mig_notes_%zu, .n_notes = %zu", i, g->n_notes);
		sb_puts(&table, " },\n");
	}
	/* a zero sentinel keeps the array non-empty (C11 has no empty initializer) */
	sb_printf(out, "const struct hwdb_mig_gpu hwdb_builtin_mig_gpus[] = {\n%s\t{ 0 },\n};\n"
		  "const size_t hwdb_builtin_n_mig_gpus = %zu;\n", sb_str(&table), mig->n_mig_gpus);
	if (sb_error(&table))
		out->oom = true;
	sb_free(&table);
}

static int write_file(const char *path, const struct strbuf *sb)
{
	char tmp[4096];
	FILE *f;
	int ok;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f) {
		perror(tmp);
		return -1;
	}
	ok = fwrite(sb->buf, 1, sb->len, f) == sb->len;
	ok = (fclose(f) == 0) && ok;
	if (!ok || rename(tmp, path)) {
		perror(path);
		remove(tmp);
		return -1;
	}
	return 0;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static int cmp_type_name(const void *a, const void *b)
{
	return strcmp(((const struct hwdb_type *)a)->name, ((const struct hwdb_type *)b)->name);
}

/* Every type of every file, by name; a name in two files is an error. */
static struct hwdb_type *all_types(struct hwdb_source **files, size_t n_files, size_t *n_out)
{
	struct hwdb_type *all;
	size_t n = 0;

	for (size_t f = 0; f < n_files; f++)
		n += files[f]->n_types;
	all = calloc(n + 1, sizeof(*all));
	if (!all) {
		fprintf(stderr, "hwdb_gen: out of memory\n");
		return NULL;
	}
	n = 0;
	for (size_t f = 0; f < n_files; f++)
		for (size_t i = 0; i < files[f]->n_types; i++)
			all[n++] = files[f]->types[i];
	qsort(all, n, sizeof(*all), cmp_type_name);
	for (size_t i = 1; i < n; i++)
		if (!strcmp(all[i - 1].name, all[i].name)) {
			fprintf(stderr, "hwdb_gen: %s: in two instance-type files\n", all[i].name);
			free(all);
			return NULL;
		}
	*n_out = n;
	return all;
}

/* The type a price is for; NULL (said on stderr) when no file has it. */
static struct hwdb_type *price_type(struct hwdb_type *types, size_t n,
				    const struct hwdb_source_price *p, const char *path)
{
	struct hwdb_type key = { .name = p->type }, *t;

	t = bsearch(&key, types, n, sizeof(*types), cmp_type_name);
	if (!t)
		fprintf(stderr, "hwdb_gen: %s: %s: %s: no instance-type file has this type\n",
			path, p->region, p->type);
	return t;
}

/* Each type's prices from the price file: counted, then each type's array
 * allocated once and filled; the arrays live until exit. */
static int attach_prices(struct hwdb_type *types, size_t n, const struct hwdb_source *pr,
			 const char *path)
{
	struct hwdb_type *t;

	for (size_t i = 0; i < pr->n_prices; i++) {
		if (!(t = price_type(types, n, &pr->prices[i], path)))
			return -1;
		t->n_prices++;
	}
	for (size_t i = 0; i < n; i++) {
		if (types[i].n_prices &&
		    !(types[i].prices = calloc(types[i].n_prices, sizeof(*types[i].prices))))
			return -1;
		types[i].n_prices = 0;
	}
	for (size_t i = 0; i < pr->n_prices; i++) {
		const struct hwdb_source_price *p = &pr->prices[i];

		t = price_type(types, n, p, path);
		((struct hwdb_price *)t->prices)[t->n_prices++] = (struct hwdb_price){ p->region,
										     p->price };
	}
	for (size_t i = 0; i < n; i++) {
		size_t dup;

		if (types[i].n_prices &&
		    hwdb_source_sort_prices((struct hwdb_price *)types[i].prices, types[i].n_prices,
					    &dup)) {
			fprintf(stderr, "hwdb_gen: %s: %s: two prices in %s\n", path, types[i].name,
				types[i].prices[dup].region);
			return -1;
		}
	}
	return 0;
}

/* hwdb_regions: the default region, then the price file's, sorted. */
static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void put_regions(struct strbuf *out, const struct hwdb_source *pr)
{
	const char **r = calloc(pr->n_regions + 1, sizeof(*r));

	if (!r) {
		out->oom = true;
		return;
	}
	memcpy(r, pr->regions, pr->n_regions * sizeof(*r));
	qsort(r, pr->n_regions, sizeof(*r), cmp_str);
	sb_puts(out, "const char *const hwdb_regions[] = {\n\t");
	put_cstr(out, HWDB_DEFAULT_REGION);
	sb_puts(out, ",\n");
	for (size_t i = 0; i < pr->n_regions; i++) {
		sb_puts(out, "\t");
		put_cstr(out, r[i]);
		sb_puts(out, ",\n");
	}
	sb_puts(out, "\tNULL,\n};\n\n");
	free(r);
}
int main(int argc, char **argv)
{
	struct hwdb_source *files[8] = { 0 }, *pci = NULL, *mig = NULL, *prices = NULL;
	size_t n_files = (size_t)(argc > 5 ? argc - 5 : 0), n_types = 0;
	struct hwdb_type *types = NULL;
	struct strbuf out = STRBUF_INIT;
	struct dt_err err = { 0 };
	int status = 1;

	if (argc < 6 || n_files > 8) {
		fprintf(stderr, "usage: hwdb_gen OUT.c PCI_IDS.yaml MIG_PROFILES.yaml PRICES.yaml "
			"TYPES.yaml... (at most 8)\n");
		return 2;
	}
	for (size_t f = 0; f < n_files; f++)
		if (hwdb_source_load_types(argv[5 + f], true, &files[f], &err))
			goto bad;
	if (hwdb_source_load_pci(argv[2], &pci, &err) ||
	    hwdb_source_load_mig(argv[3], &mig, &err) ||
	    hwdb_source_load_prices(argv[4], &prices, &err))
		goto bad;
	for (size_t f = 0; f < n_files; f++)
		for (size_t i = 0; i < files[f]->n_types; i++)
			if (files[f]->types[i].n_prices) {
				fprintf(stderr, "hwdb_gen: %s: %s: built-in entries take their regional "
					"prices from %s, not onDemandPrices\n", argv[5 + f],
					files[f]->types[i].name, base_name(argv[4]));
				goto out;
			}
	if (!(types = all_types(files, n_files, &n_types)) ||
	    attach_prices(types, n_types, prices, argv[4]))
		goto out;
	/* Base names only: the output must not depend on where the tree is. */
	sb_printf(&out, "/* hwdb_data.c - generated by hwdb_gen from the YAML files of hwdb/.\n"
		  " * Do not edit: change the YAML files and rebuild. */\n"
		  "#include \"hwdb_mig_internal.h\"\n#include \"hwdb_source.h\"\n\n");
	if (put_types(&out, types, n_types)) {
		fprintf(stderr, "hwdb_gen: out of memory\n");
		goto out;
	}
	put_regions(&out, prices);
	put_pci(&out, pci);
	put_mig(&out, mig);
	if (sb_error(&out)) {
		fprintf(stderr, "hwdb_gen: out of memory\n");
		goto out;
	}
	if (write_file(argv[1], &out))
		goto out;
	status = 0;
	goto out;
bad:
	fprintf(stderr, "hwdb_gen: %s\n", err.msg);
out:
	for (size_t i = 0; types && i < n_types; i++)
		free((void *)types[i].prices);
	free(types);
	sb_free(&out);
	for (size_t f = 0; f < n_files; f++)
		hwdb_source_free(files[f]);
	hwdb_source_free(pci);
	hwdb_source_free(mig);
	hwdb_source_free(prices);
	return status;
}
