/* hwdb_catalog.c - catalogues of instance-type entries (hwdb_catalog.h):
 * a base (the built-in table or another catalogue), extra files and
 * learned entries on top, indexed by name and by price; the process's
 * catalogue behind hwdb_lookup() and hwdb_load_extra().
 *
 * The index is two arrays of pointers (by name, by price) rebuilt whenever
 * the set of entries changes; lookups never allocate. */
#include "hwdb_catalog.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "doc.h"
#include "hwdb_source.h"
#include "suggest.h"

struct index {
	const struct hwdb_type **by_name;   /* sorted by name */
	const struct hwdb_type **by_price;  /* hwdb_catalog_at order */
	size_t n;
};

/* Owner of every extra entry: the hwdb_source it was decoded into; of
 * every learned copy: the arena. */
struct hwdb_catalog {
	const struct hwdb_catalog *base;    /* borrowed; NULL: the built-in table */
	struct hwdb_source **extras;        /* load order */
	size_t n_extras, cap_extras;
	struct doc_arena *copies;           /* learned entries; NULL until the first */
	/* Extra and learned entries in the order they came: later ones win. */
	const struct hwdb_type **added;
	size_t n_added, cap_added;
	struct index idx;
};

static struct hwdb_catalog process;
static pthread_once_t process_once = PTHREAD_ONCE_INIT;

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

/* An entry with its place in the order entries came: later places win. */
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

/* The base's entries, then added[0..n_added): an entry replaces an
 * earlier one of the same name. */
static int index_build(const struct hwdb_catalog *c, const struct hwdb_type *const *added,
		       size_t n_added, struct index *out)
{
	size_t n_base = c->base ? c->base->idx.n : hwdb_builtin_n_types;
	size_t total = n_base + n_added, n = 0;
	struct index ix = { 0 };
	struct ranked *all;

	all = calloc(total ? total : 1, sizeof(*all));
	ix.by_name = calloc(total ? total : 1, sizeof(*ix.by_name));
	ix.by_price = calloc(total ? total : 1, sizeof(*ix.by_price));
	if (!all || !ix.by_name || !ix.by_price) {
		free(all);
		index_free(&ix);
		return -ENOMEM;
	}
	for (size_t j = 0; j < n_base; j++, n++)
		all[n] = (struct ranked){ c->base ? c->base->idx.by_name[j]
						  : &hwdb_builtin_types[j], n };
	for (size_t j = 0; j < n_added; j++, n++)
		all[n] = (struct ranked){ added[j], n };
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

/* Take entries on top of what c holds: the index is rebuilt with them and
 * c->added grows, or, on failure, nothing changes. */
static int add_entries(struct hwdb_catalog *c, const struct hwdb_type *const *ts, size_t n)
{
	struct index ix;
	int rc;

	if (DT_GROW(c->added, c->cap_added, c->n_added + n + 1))
		return -ENOMEM;
	memcpy(c->added + c->n_added, ts, n * sizeof(*ts));
	if ((rc = index_build(c, c->added, c->n_added + n, &ix)))
		return rc;
	c->n_added += n;
	index_free(&c->idx);
	c->idx = ix;
	return 0;
}

static void build_process(void)
{
	if (index_build(&process, NULL, 0, &process.idx))
		memset(&process.idx, 0, sizeof(process.idx));  /* out of memory: empty */
}

struct hwdb_catalog *hwdb_catalog_process(void)
{
	pthread_once(&process_once, build_process);
	return &process;
}

int hwdb_catalog_new(const struct hwdb_catalog *base, struct hwdb_catalog **out,
		     struct dt_err *err)
{
	struct hwdb_catalog *c = calloc(1, sizeof(*c));

	*out = NULL;
	if (!c)
		return dt_err_set(err, -ENOMEM, "hwdb catalogue: out of memory");
	c->base = base;
	if (index_build(c, NULL, 0, &c->idx)) {
		free(c);
		return dt_err_set(err, -ENOMEM, "hwdb catalogue: out of memory");
	}
	*out = c;
	return 0;
}

/* Everything c owns, back to its base's entries (index left empty). */
static void drop_own(struct hwdb_catalog *c)
{
	for (size_t i = 0; i < c->n_extras; i++)
		hwdb_source_free(c->extras[i]);
	free(c->extras);
	c->extras = NULL;
	c->n_extras = c->cap_extras = 0;
	doc_arena_free(c->copies);
	c->copies = NULL;
	free(c->added);
	c->added = NULL;
	c->n_added = c->cap_added = 0;
	index_free(&c->idx);
}

void hwdb_catalog_free(struct hwdb_catalog *c)
{
	if (!c || c == &process)
		return;
	drop_own(c);
	free(c);
}

void hwdb_catalog_reset(struct hwdb_catalog *c)
{
	drop_own(c);
	/* Out of memory: no entry rather than dangling ones. */
	if (index_build(c, NULL, 0, &c->idx))
		memset(&c->idx, 0, sizeof(c->idx));
}

/* ---- Loading ---- */

/* s (taken over, freed on failure) joins c, all of it or nothing. */
static int add_extra(struct hwdb_catalog *c, struct hwdb_source *s, struct dt_err *err)
{
	const struct hwdb_type **ts = NULL;
	int rc = 0;

	for (size_t i = 0; !rc && i < s->n_types; i++) {
		rc = hwdb_slices_check(&s->types[i], err);
		if (rc)
			dt_err_prefix(err, "%s: instanceTypes[%zu] (%s): ", s->filename, i,
				      s->types[i].name);
	}
	if (rc)
		goto out;
	ts = DT_GROW(c->extras, c->cap_extras, c->n_extras + 1) ? NULL
	     : calloc(s->n_types + 1, sizeof(*ts));
	if (!ts) {
		rc = dt_err_set(err, -ENOMEM, "%s: out of memory", s->filename);
		goto out;
	}
	for (size_t i = 0; i < s->n_types; i++)
		ts[i] = &s->types[i];
	if ((rc = add_entries(c, ts, s->n_types))) {
		rc = dt_err_set(err, rc, "%s: out of memory", s->filename);
		goto out;
	}
	c->extras[c->n_extras++] = s;
	s = NULL;
out:
	free(ts);
	hwdb_source_free(s);
	return rc;
}

int hwdb_catalog_load(struct hwdb_catalog *c, const char *path, struct dt_err *err)
{
	struct hwdb_source *s = NULL;
	int rc;

	if (!path)
		return dt_err_set(err, -EINVAL, "hwdb: no extra file given");
	rc = hwdb_source_load_types(path, false, &s, err);
	return rc ? rc : add_extra(c, s, err);
}

int hwdb_catalog_load_buf(struct hwdb_catalog *c, const char *buf, size_t len,
			  const char *name, struct dt_err *err)
{
	struct hwdb_source *s = NULL;
	int rc = hwdb_source_parse_types(buf, len, name ? name : "(extra)", false, &s, err);

	return rc ? rc : add_extra(c, s, err);
}

/* ---- Learned entries ---- */

static char *dup_str(struct doc_arena *a, const char *s, bool *oom)
{
	char *p = doc_arena_strdup(a, s);

	if (s && !p)
		*oom = true;
	return p;
}

static void *dup_mem(struct doc_arena *a, const void *p, size_t size, bool *oom)
{
	void *q;

	if (!p || !size)
		return NULL;
	if (!(q = doc_arena_alloc(a, size)))
		*oom = true;
	else
		memcpy(q, p, size);
	return q;
}

static struct hwdb_device *copy_devices(struct doc_arena *a, const struct hwdb_device *d,
					size_t n, bool *oom)
{
	struct hwdb_device *out = dup_mem(a, d, n * sizeof(*d), oom);

	for (size_t i = 0; out && i < n; i++) {
		struct hwdb_attr *attrs = dup_mem(a, d[i].attrs, d[i].n_attrs * sizeof(*attrs),
						  oom);

		out[i].name = dup_str(a, d[i].name, oom);
		out[i].pcie_root = dup_str(a, d[i].pcie_root, oom);
		out[i].memory = dup_str(a, d[i].memory, oom);
		for (size_t k = 0; attrs && k < d[i].n_attrs; k++) {
			attrs[k].name = dup_str(a, d[i].attrs[k].name, oom);
			attrs[k].str = dup_str(a, d[i].attrs[k].str, oom);
		}
		out[i].attrs = attrs;
	}
	return out;
}

/* A deep copy of t in a, or NULL when out of memory. */
static struct hwdb_type *copy_type(struct doc_arena *a, const struct hwdb_type *t)
{
	struct hwdb_type *out = doc_arena_alloc(a, sizeof(*out));
	const char **notes;
	bool oom = false;

	if (!out)
		return NULL;
	*out = *t;
	out->name = dup_str(a, t->name, &oom);
	out->family = dup_str(a, t->family, &oom);
	out->arch = dup_str(a, t->arch, &oom);
	out->gpu_model = dup_str(a, t->gpu_model, &oom);
	out->gpu_architecture = dup_str(a, t->gpu_architecture, &oom);
	out->gpus = copy_devices(a, t->gpus, t->n_gpus, &oom);
	out->efas = copy_devices(a, t->efas, t->n_efas, &oom);
	out->accel_kind = dup_str(a, t->accel_kind, &oom);
	if (t->n_prices) {
		struct hwdb_price *p = dup_mem(a, t->prices, t->n_prices * sizeof(*p), &oom);

		for (size_t i = 0; p && i < t->n_prices; i++)
			p[i].region = dup_str(a, t->prices[i].region, &oom);
		out->prices = p;
	}
	notes = dup_mem(a, t->notes, t->n_notes * sizeof(*notes), &oom);
	for (size_t i = 0; notes && i < t->n_notes; i++)
		notes[i] = dup_str(a, t->notes[i], &oom);
	out->notes = notes;
	out->builtin = false;
	out->learned = true;
	return oom ? NULL : out;
}

/* Whether learned entry l can complete the incomplete entry e: the same
 * devices, as far as e knows them. */
static bool mergeable(const struct hwdb_type *e, const struct hwdb_type *l)
{
	return e->n_gpus == l->n_gpus && e->n_efas == l->n_efas &&
	       (!e->gpu_device || (e->gpu_vendor == l->gpu_vendor && e->gpu_device == l->gpu_device)) &&
	       (!e->efa_device || e->efa_device == l->efa_device);
}

/* e (copied into a) completed by what learned entry l saw: l's devices and
 * their ids, l's size where e has none; e's prices, network and
 * accelerator facts and notes. NULL when out of memory. */
static struct hwdb_type *merge_learned(struct doc_arena *a, const struct hwdb_type *e,
				       const struct hwdb_type *l)
{
	struct hwdb_type *out = copy_type(a, e);
	bool oom = false;

	if (!out)
		return NULL;
	out->gpus = copy_devices(a, l->gpus, l->n_gpus, &oom);
	out->efas = copy_devices(a, l->efas, l->n_efas, &oom);
	out->dra_metadata = l->dra_metadata;
	out->gpu_vendor = l->gpu_vendor;
	out->gpu_device = l->gpu_device;
	out->efa_device = l->efa_device;
	if (!e->gpu_model)
		out->gpu_model = dup_str(a, l->gpu_model, &oom);
	if (!e->gpu_architecture)
		out->gpu_architecture = dup_str(a, l->gpu_architecture, &oom);
	if (!hwdb_type_sized(e)) {
		out->vcpu = l->vcpu;
		out->memory_mib = l->memory_mib;
		out->arch = dup_str(a, l->arch, &oom);
	}
	return oom ? NULL : out;
}

int hwdb_catalog_add_learned(struct hwdb_catalog *c, const struct hwdb_type *t,
			     struct dt_err *err)
{
	const struct hwdb_type *have = hwdb_catalog_lookup(c, t->name), *copy;

	if (have && (!hwdb_type_incomplete(have) || !mergeable(have, t)))
		return 0;
	if (!c->copies && !(c->copies = doc_arena_new()))
		return dt_err_set(err, -ENOMEM, "%s: out of memory", t->name);
	/* On failure the copy stays in the arena, unreachable, until the
	 * catalogue goes: nothing points at it. */
	copy = have ? merge_learned(c->copies, have, t) : copy_type(c->copies, t);
	if (!copy || add_entries(c, &copy, 1))
		return dt_err_set(err, -ENOMEM, "%s: out of memory", t->name);
	return 0;
}

/* ---- Lookups ---- */

const struct hwdb_type *hwdb_catalog_lookup(const struct hwdb_catalog *c, const char *name)
{
	size_t lo = 0, hi = c->idx.n;

	while (name && lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int r = strcmp(name, c->idx.by_name[mid]->name);

		if (!r)
			return c->idx.by_name[mid];
		if (r < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

size_t hwdb_catalog_count(const struct hwdb_catalog *c)
{
	return c->idx.n;
}

const struct hwdb_type *hwdb_catalog_at(const struct hwdb_catalog *c, size_t i)
{
	return i < c->idx.n ? c->idx.by_price[i] : NULL;
}

size_t hwdb_catalog_family(const struct hwdb_catalog *c, const char *family,
			   const struct hwdb_type **out, size_t cap)
{
	size_t n = 0;

	for (size_t i = 0; family && i < c->idx.n; i++) {
		if (strcmp(c->idx.by_price[i]->family, family))
			continue;
		if (n < cap)
			out[n] = c->idx.by_price[i];
		n++;
	}
	return n;
}

const char *hwdb_catalog_suggest(const struct hwdb_catalog *c, const char *name)
{
	const char *best = NULL;
	size_t best_d = SIZE_MAX;

	if (!name)
		return NULL;
	for (size_t i = 0; i < c->idx.n; i++) {
		size_t d = dt_edit_distance(name, c->idx.by_name[i]->name);

		if (d < best_d) {
			best_d = d;
			best = c->idx.by_name[i]->name;
		}
	}
	/* A typo or a truncation ("p5.48xl"), not any name at all. */
	return best && dt_suggest_close(name, best_d) ? best : NULL;
}

/* ---- The process's catalogue (hwdb.h) ---- */

const struct hwdb_type *hwdb_lookup(const char *name)
{
	return hwdb_catalog_lookup(hwdb_catalog_process(), name);
}

size_t hwdb_count(void)
{
	return hwdb_catalog_count(hwdb_catalog_process());
}

const struct hwdb_type *hwdb_at(size_t i)
{
	return hwdb_catalog_at(hwdb_catalog_process(), i);
}

size_t hwdb_family(const char *family, const struct hwdb_type **out, size_t cap)
{
	return hwdb_catalog_family(hwdb_catalog_process(), family, out, cap);
}

const char *hwdb_suggest(const char *name)
{
	return hwdb_catalog_suggest(hwdb_catalog_process(), name);
}

int hwdb_load_extra(const char *path, struct dt_err *err)
{
	return hwdb_catalog_load(hwdb_catalog_process(), path, err);
}

int hwdb_load_extra_buf(const char *buf, size_t len, const char *name, struct dt_err *err)
{
	return hwdb_catalog_load_buf(hwdb_catalog_process(), buf, len, name, err);
}

void hwdb_reset(void)
{
	hwdb_catalog_reset(hwdb_catalog_process());
}
