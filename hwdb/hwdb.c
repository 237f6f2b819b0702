/* hwdb.c - the instance-type database at run time: the built-in tables plus
 * the extra files loaded with hwdb_load_extra, indexed by name and by
 * price; PCI id lookups; consumable-capacity modes.
 *
 * The index is two arrays of pointers (by name, by price) rebuilt whenever
 * the set of entries changes; lookups never allocate. */
#include "hwdb.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwdb_source.h"

const char *const hwdb_gpu_node_uniform_attrs[] = { "driverVersion", "cudaDriverVersion", NULL };

struct index {
	const struct hwdb_type **by_name;   /* sorted by name */
	const struct hwdb_type **by_price;  /* hwdb_at order */
	size_t n;
};

/* The database: extras in load order (later ones win) and the index.
 * Owner of every extra entry: the hwdb_source it was decoded into. */
static struct {
	struct hwdb_source **extras;
	size_t n_extras;
	struct index idx;
	bool built;
} db;

static pthread_once_t builtin_once = PTHREAD_ONCE_INIT;

/* Price order: cheapest first; no on-demand price sorts last; ties by name
 * so that the order is the same on every run. */
static int cmp_price(const void *a, const void *b)
{
	const struct hwdb_type *x = *(const struct hwdb_type *const *)a;
	const struct hwdb_type *y = *(const struct hwdb_type *const *)b;

	if (x->has_price != y->has_price)
		return x->has_price ? -1 : 1;
	if (x->has_price && x->price != y->price)
		return x->price < y->price ? -1 : 1;
	return strcmp(x->name, y->name);
}

static void index_free(struct index *ix)
{
	free(ix->by_name);
	free(ix->by_price);
	memset(ix, 0, sizeof(*ix));
}

static const struct hwdb_type *find_in(const struct hwdb_type **by_name, size_t n, const char *name)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(name, by_name[mid]->name);

		if (!c)
			return by_name[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

/* An entry with its place in the load order: later places win. */
struct ranked {
	const struct hwdb_type *t;
	size_t rank;
};

static int cmp_ranked(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;
	int c = strcmp(x->t->name, y->t->name);

	if (c)
		return c;
	return x->rank > y->rank ? -1 : x->rank < y->rank;     /* newest first */
}

/* Build an index over the built-in entries and the extras in order, an
 * entry replacing an earlier one of the same name. */
static int index_build(struct hwdb_source *const *extras, size_t n_extras, struct index *out)
{
	size_t total = hwdb_builtin_n_types, n = 0;
	struct index ix = { 0 };
	struct ranked *all;

	for (size_t i = 0; i < n_extras; i++)
		total += extras[i]->n_types;
	all = calloc(total ? total : 1, sizeof(*all));
	ix.by_name = calloc(total ? total : 1, sizeof(*ix.by_name));
	ix.by_price = calloc(total ? total : 1, sizeof(*ix.by_price));
	if (!all || !ix.by_name || !ix.by_price) {
		free(all);
		index_free(&ix);
		return -ENOMEM;
	}
	for (size_t j = 0; j < hwdb_builtin_n_types; j++, n++)
		all[n] = (struct ranked){ &hwdb_builtin_types[j], n };
	for (size_t i = 0; i < n_extras; i++)
		for (size_t j = 0; j < extras[i]->n_types; j++, n++)
			all[n] = (struct ranked){ &extras[i]->types[j], n };
	qsort(all, n, sizeof(*all), cmp_ranked);
	for (size_t i = 0; i < n; i++)
		if (i == 0 || strcmp(all[i].t->name, all[i - 1].t->name))
			ix.by_name[ix.n++] = all[i].t;
	free(all);
	memcpy(ix.by_price, ix.by_name, ix.n * sizeof(*ix.by_price));
	qsort(ix.by_price, ix.n, sizeof(*ix.by_price), cmp_price);
	*out = ix;
	return 0;
}

static void build_builtin(void)
{
	if (!db.built && index_build(NULL, 0, &db.idx) == 0)
		db.built = true;
}

static const struct index *get_index(void)
{
	if (!db.built)
		pthread_once(&builtin_once, build_builtin);
	return &db.idx;
}

const struct hwdb_type *hwdb_lookup(const char *name)
{
	const struct index *ix = get_index();

	return name ? find_in(ix->by_name, ix->n, name) : NULL;
}

size_t hwdb_count(void)
{
	return get_index()->n;
}

const struct hwdb_type *hwdb_at(size_t i)
{
	const struct index *ix = get_index();

	return i < ix->n ? ix->by_price[i] : NULL;
}

size_t hwdb_family(const char *family, const struct hwdb_type **out, size_t cap)
{
	const struct index *ix = get_index();
	size_t n = 0;

	for (size_t i = 0; family && i < ix->n; i++) {
		if (strcmp(ix->by_price[i]->family, family))
			continue;
		if (n < cap)
			out[n] = ix->by_price[i];
		n++;
	}
	return n;
}

/* Levenshtein distance, bounded to names of sane length. */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), row[65];

	if (la > 64 || lb > 64)
		return (size_t)-1;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];

		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
			size_t best = diag + cost;

			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

const char *hwdb_suggest(const char *name)
{
	const struct index *ix = get_index();
	const char *best = NULL;
	size_t best_d = (size_t)-1, limit;

	if (!name)
		return NULL;
	/* Close enough to be a typo or a truncation ("p5.48xl"), not so far
	 * that any name would do. */
	limit = strlen(name) / 2 + 1;
	for (size_t i = 0; i < ix->n; i++) {
		size_t d = edit_distance(name, ix->by_name[i]->name);

		if (d < best_d) {
			best_d = d;
			best = ix->by_name[i]->name;
		}
	}
	return best_d <= limit ? best : NULL;
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

/* ---- Extras ---- */

static int add_extra(struct hwdb_source *s, struct dt_err *err)
{
	struct hwdb_source **list;
	struct index ix;
	int rc;

	get_index();
	for (size_t i = 0; i < s->n_types; i++) {
		rc = hwdb_slices_check(&s->types[i], err);
		if (rc) {
			dt_err_prefix(err, "%s: instanceTypes[%zu] (%s): ", s->filename, i,
				      s->types[i].name);
			return rc;
		}
	}
	list = realloc(db.extras, (db.n_extras + 1) * sizeof(*list));
	if (!list)
		return dt_err_set(err, -ENOMEM, "%s: out of memory", s->filename);
	db.extras = list;
	db.extras[db.n_extras] = s;
	rc = index_build(db.extras, db.n_extras + 1, &ix);
	if (rc)
		return dt_err_set(err, rc, "%s: out of memory", s->filename);
	db.n_extras++;
	index_free(&db.idx);
	db.idx = ix;
	db.built = true;
	return 0;
}

int hwdb_load_extra(const char *path, struct dt_err *err)
{
	struct hwdb_source *s = NULL;
	int rc;

	if (!path)
		return dt_err_set(err, -EINVAL, "hwdb: no extra file given");
	rc = hwdb_source_load_types(path, false, &s, err);
	if (rc)
		return rc;
	rc = add_extra(s, err);
	if (rc)
		hwdb_source_free(s);
	return rc;
}

int hwdb_load_extra_buf(const char *buf, size_t len, const char *name, struct dt_err *err)
{
	struct hwdb_source *s = NULL;
	int rc;

	rc = hwdb_source_parse_types(buf, len, name ? name : "(extra)", false, &s, err);
	if (rc)
		return rc;
	rc = add_extra(s, err);
	if (rc)
		hwdb_source_free(s);
	return rc;
}

void hwdb_reset(void)
{
	struct index ix;

	get_index();
	for (size_t i = 0; i < db.n_extras; i++)
		hwdb_source_free(db.extras[i]);
	free(db.extras);
	db.extras = NULL;
	db.n_extras = 0;
	if (index_build(NULL, 0, &ix) == 0) {
		index_free(&db.idx);
		db.idx = ix;
	} else {
		/* Out of memory: keep no entry rather than dangling ones. */
		index_free(&db.idx);
	}
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

/* ---- Consumable capacity ---- */

int hwdb_cc_parse(const char *s, struct hwdb_cc_mode *out, struct dt_err *err)
{
	int64_t n = 0;

	*out = (struct hwdb_cc_mode){ HWDB_CC_DISABLED, 0 };
	if (!s || !*s || !strcmp(s, "disabled"))
		return 0;
	if (!strcmp(s, "memory")) {
		out->kind = HWDB_CC_MEMORY;
		return 0;
	}
	if (!strcmp(s, "unlimited")) {
		out->kind = HWDB_CC_UNLIMITED;
		return 0;
	}
	/* A positive decimal integer, nothing else: "0", "-1", "4.5", "1Gi"
	 * and "memory=true" are refused, as Karpenter refuses them. Like Go's
	 * strconv integer parsing, a leading '+' is allowed. */
	for (const char *p = s + (s[0] == '+' && s[1]); *p; p++) {
		if (!isdigit((unsigned char)*p) || n > (INT64_MAX - (*p - '0')) / 10) {
			n = -1;
			break;
		}
		n = n * 10 + (*p - '0');
	}
	if (n <= 0)
		return dt_err_set(err, -EINVAL,
				  "invalid consumable capacity mode \"%s\": must be \"disabled\", "
				  "\"memory\", \"unlimited\" or a positive integer number of shares",
				  s);
	out->kind = HWDB_CC_SHARES;
	out->shares = n;
	return 0;
}

const char *hwdb_cc_name(const struct hwdb_cc_mode *m, char *buf, size_t len)
{
	switch (m->kind) {
	case HWDB_CC_SHARES:
		snprintf(buf, len, "%lld", (long long)m->shares);
		return buf;
	case HWDB_CC_MEMORY:
		return "memory";
	case HWDB_CC_UNLIMITED:
		return "unlimited";
	default:
		return "disabled";
	}
}
