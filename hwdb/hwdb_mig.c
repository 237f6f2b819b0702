/* hwdb_mig.c - the MIG profile tables (compiled from hwdb/mig-profiles.yaml)
 * and MIG layouts: their syntax, and whether and where their instances fit
 * on a GPU (the placement rules of NVIDIA's MIG guide: at most a profile's
 * instance count, 7 compute slices, 8 memory slices, and each instance at
 * one of its profile's placements without sharing a memory slice). */
#include "hwdb_mig.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwdb_mig_internal.h"
#include "hwdb_source.h"

#define MAX_ITEMS       HWDB_MIG_MAX_SLICES    /* instances named in one GPU entry */
#define MAX_NAME        32

/* ---- The tables ---- */

size_t hwdb_mig_count(void)
{
	return hwdb_builtin_n_mig_gpus;
}

const struct hwdb_mig_gpu *hwdb_mig_at(size_t i)
{
	return i < hwdb_builtin_n_mig_gpus ? &hwdb_builtin_mig_gpus[i] : NULL;
}

const struct hwdb_mig_gpu *hwdb_mig_gpu(const char *product_name)
{
	for (size_t i = 0; product_name && i < hwdb_builtin_n_mig_gpus; i++)
		if (!strcmp(hwdb_builtin_mig_gpus[i].product_name, product_name))
			return &hwdb_builtin_mig_gpus[i];
	return NULL;
}

const struct hwdb_mig_gpu *hwdb_mig_of_type(const struct hwdb_type *t)
{
	return t && t->n_gpus ? hwdb_mig_gpu(t->gpu_model) : NULL;
}

const struct hwdb_mig_profile *hwdb_mig_profile(const struct hwdb_mig_gpu *g, const char *name)
{
	for (size_t i = 0; g && name && i < g->n_profiles; i++)
		if (!strcmp(g->profiles[i].name, name))
			return &g->profiles[i];
	return NULL;
}

void hwdb_mig_device_name(size_t gpu, const struct hwdb_mig_profile *p, int start, char *buf,
			  size_t len)
{
	char prof[MAX_NAME + 1];
	size_t n = 0;

	for (const char *c = p->name; *c && n < MAX_NAME; c++) {
		if (*c == '.')
			continue;
		prof[n++] = (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') ? *c : '-';
	}
	prof[n] = '\0';
	if (p->memory_slices > 1)
		snprintf(buf, len, "gpu-%zu-mig-%s-%d-%d", gpu, prof, start,
			 start + p->memory_slices - 1);
	else
		snprintf(buf, len, "gpu-%zu-mig-%s-%d", gpu, prof, start);
}

/* ---- Syntax ---- */

static bool name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '+' ||
	       c == '-';
}

/* One GPU entry [s, s+len): "disabled", "all-NAME" or NAME(,NAME)*. */
static int check_entry(const char *s, size_t len, size_t idx, struct dt_err *err)
{
	size_t items = 0, item = 0;

	if (len == 0)
		return dt_err_set(err, -EINVAL, "GPU entry %zu is empty", idx);
	if (len == strlen("disabled") && !memcmp(s, "disabled", len))
		return 0;
	for (size_t i = 0; i <= len; i++) {
		if (i == len || s[i] == ',') {
			if (item == 0)
				return dt_err_set(err, -EINVAL, "GPU entry %zu: an empty profile name",
						  idx);
			if (++items > MAX_ITEMS)
				return dt_err_set(err, -EINVAL, "GPU entry %zu: more than %d "
						  "instances (a GPU has %d memory slices)", idx,
						  MAX_ITEMS, HWDB_MIG_MAX_SLICES);
			item = 0;
			continue;
		}
		if (!name_char(s[i]))
			return dt_err_set(err, -EINVAL, "GPU entry %zu: '%c' cannot be in a profile "
					  "name such as 1g.10gb", idx, s[i]);
		if (++item > MAX_NAME)
			return dt_err_set(err, -EINVAL, "GPU entry %zu: a profile name longer than "
					  "%d characters", idx, MAX_NAME);
	}
	if (len > 4 && !memcmp(s, "all-", 4) && memchr(s, ',', len))
		return dt_err_set(err, -EINVAL, "GPU entry %zu: all-PROFILE takes one profile", idx);
	return 0;
}

int hwdb_mig_parse(const char *s, struct hwdb_mig_layout *out, struct dt_err *err)
{
	size_t n = 0, start = 0, idx = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	for (const char *c = s; c && *c; c++) {
		if (*c == ' ' || *c == '\t' || *c == '\n')
			continue;
		if (n + 1 >= sizeof(out->text))
			return dt_err_set(err, -EINVAL, "MIG layout: longer than %d characters",
					  HWDB_MIG_LAYOUT_MAX - 1);
		out->text[n++] = *c;
	}
	out->text[n] = '\0';
	if (!n || !strcmp(out->text, "disabled") || !strcmp(out->text, "none")) {
		out->text[0] = '\0';
		return 0;
	}
	if (!strcmp(out->text, "dynamic")) {
		out->kind = HWDB_MIG_DYNAMIC;
		return 0;
	}
	for (size_t i = 0; i <= n; i++) {
		if (i < n && out->text[i] != ';')
			continue;
		if (idx == HWDB_MAX_DEVICES)
			return dt_err_set(err, -EINVAL, "MIG layout \"%s\": more than %d GPU entries",
					  out->text, HWDB_MAX_DEVICES);
		rc = check_entry(out->text + start, i - start, idx, err);
		if (rc) {
			dt_err_prefix(err, "MIG layout \"%s\": ", out->text);
			return rc;
		}
		idx++;
		start = i + 1;
	}
	out->kind = HWDB_MIG_STATIC;
	return 0;
}

bool hwdb_mig_equal(const struct hwdb_mig_layout *a, const struct hwdb_mig_layout *b)
{
	return a->kind == b->kind && !strcmp(a->text, b->text);
}

static bool profile_known(const char *name)
{
	for (size_t i = 0; i < hwdb_builtin_n_mig_gpus; i++)
		if (hwdb_mig_profile(&hwdb_builtin_mig_gpus[i], name))
			return true;
	return false;
}

bool hwdb_mig_unknown_profile(const struct hwdb_mig_layout *l, char *buf, size_t len)
{
	const char *s = l->text;
	bool entry_start = true;

	if (l->kind != HWDB_MIG_STATIC)
		return false;
	/* The text passed hwdb_mig_parse: entries split by ';', each
	 * "disabled", "all-NAME" or NAME(,NAME)*, no blanks. */
	while (*s) {
		size_t n = strcspn(s, ",;");
		char name[MAX_NAME + 1];
		const char *p = name;

		snprintf(name, sizeof(name), "%.*s", (int)n, s);
		if (entry_start && !strncmp(p, "all-", 4))
			p += 4;
		if (!(entry_start && !strcmp(name, "disabled")) && !profile_known(p)) {
			snprintf(buf, len, "%s", p);
			return true;
		}
		entry_start = s[n] == ';';
		s += n + (s[n] != '\0');
	}
	return false;
}

/* ---- Placement ---- */

static void profile_list(const struct hwdb_mig_gpu *g, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < g->n_profiles && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? ", " : "", g->profiles[i].name);
}

/* Place items[k..n) on the memory slices not in used; starts[] receives
 * each item's first slice. At most 8 items of at most 7 placements. */
static bool place(const struct hwdb_mig_gpu *g, const struct hwdb_mig_profile **items, size_t n,
		  size_t k, unsigned used, int *starts)
{
	const struct hwdb_mig_profile *p;

	if (k == n)
		return true;
	p = items[k];
	for (size_t i = 0; i < p->n_placements; i++) {
		int s = p->placements[i];
		unsigned mask = ((1u << p->memory_slices) - 1u) << s;

		if (s + p->memory_slices > g->memory_slices || (used & mask))
			continue;
		/* same profiles in increasing order: no symmetric retries */
		if (k && items[k - 1] == p && s < starts[k - 1])
			continue;
		starts[k] = s;
		if (place(g, items, n, k + 1, used | mask, starts))
			return true;
	}
	return false;
}

/* Larger instances first: they have the fewest placements. */
static void sort_items(const struct hwdb_mig_profile **items, size_t n)
{
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && items[j]->memory_slices > items[j - 1]->memory_slices;
		     j--) {
			const struct hwdb_mig_profile *tmp = items[j];

			items[j] = items[j - 1];
			items[j - 1] = tmp;
		}
}

/* The profiles one GPU entry names, in items[0..*n). */
static int entry_items(const struct hwdb_mig_gpu *g, const char *s, size_t len,
		       const struct hwdb_mig_profile **items, size_t *n, struct dt_err *err)
{
	char name[MAX_NAME + 1], known[512];
	bool all = len > 4 && !memcmp(s, "all-", 4);
	size_t i = all ? 4 : 0;

	*n = 0;
	while (i < len) {
		const char *comma = memchr(s + i, ',', len - i);
		size_t l = comma ? (size_t)(comma - (s + i)) : len - i;
		const struct hwdb_mig_profile *p;

		snprintf(name, sizeof(name), "%.*s", (int)l, s + i);
		p = hwdb_mig_profile(g, name);
		if (!p) {
			profile_list(g, known, sizeof(known));
			return dt_err_set(err, -EINVAL, "%s has no MIG profile \"%s\" (its profiles: "
					  "%s)", g->product_name, name, known);
		}
		if (all) {
			for (int k = 0; k < p->instances && *n < MAX_ITEMS; k++)
				items[(*n)++] = p;
			return 0;
		}
		items[(*n)++] = p;
		i += l + 1;
	}
	return 0;
}

/* The counts first, for messages that say which rule is broken. */
static int entry_rules(const struct hwdb_mig_gpu *g, const struct hwdb_mig_profile **items,
		       size_t n, struct dt_err *err)
{
	int compute = 0, memory = 0;

	for (size_t i = 0; i < n; i++) {
		int same = 0;

		for (size_t j = 0; j < n; j++)
			same += items[j] == items[i];
		if (same > items[i]->instances)
			return dt_err_set(err, -EINVAL, "%d instances of %s, a GPU holds at most %d",
					  same, items[i]->name, items[i]->instances);
		compute += items[i]->compute_slices;
		memory += items[i]->memory_slices;
	}
	if (compute > g->compute_slices)
		return dt_err_set(err, -EINVAL, "the instances need %d compute slices, a GPU has %d",
				  compute, g->compute_slices);
	if (memory > g->memory_slices)
		return dt_err_set(err, -EINVAL, "the instances need %d memory slices, a GPU has %d",
				  memory, g->memory_slices);
	return 0;
}

static int resolve_entry(const struct hwdb_mig_gpu *g, const char *s, size_t len,
			 struct hwdb_mig_gpu_plan *plan, struct dt_err *err)
{
	const struct hwdb_mig_profile *items[MAX_ITEMS];
	int starts[MAX_ITEMS];
	size_t n;
	int rc;

	memset(plan, 0, sizeof(*plan));
	if (len == strlen("disabled") && !memcmp(s, "disabled", len))
		return 0;
	if ((rc = entry_items(g, s, len, items, &n, err)) || (rc = entry_rules(g, items, n, err)))
		return rc;
	sort_items(items, n);
	if (!place(g, items, n, 0, 0, starts))
		return dt_err_set(err, -EINVAL, "no placement of these instances fits on the GPU's "
				  "%d memory slices (each profile may start only at certain "
				  "slices)", g->memory_slices);
	plan->enabled = true;
	/* in slice order, as the driver lists them */
	for (size_t i = 0; i < n; i++) {
		size_t j = plan->n++;

		while (j > 0 && plan->inst[j - 1].start > starts[i]) {
			plan->inst[j] = plan->inst[j - 1];
			j--;
		}
		plan->inst[j] = (struct hwdb_mig_instance){ items[i], starts[i] };
	}
	return 0;
}

static size_t count_entries(const char *text)
{
	size_t n = 1;

	for (const char *c = text; *c; c++)
		n += *c == ';';
	return n;
}

int hwdb_mig_resolve(const struct hwdb_mig_layout *l, const struct hwdb_type *t,
		     const struct hwdb_mig_gpu *g, struct hwdb_mig_gpu_plan *plans,
		     struct dt_err *err)
{
	size_t n_entries = count_entries(l->text);
	const char *s = l->text;

	if (n_entries != 1 && n_entries != t->n_gpus)
		return dt_err_set(err, -EINVAL, "MIG layout \"%s\": %zu GPU entries, %s has %zu "
				  "GPU%s (give one entry for all or one per GPU)", l->text,
				  n_entries, t->name, t->n_gpus, t->n_gpus == 1 ? "" : "s");
	for (size_t i = 0; i < t->n_gpus; i++) {
		const char *end;
		int rc;

		if (n_entries == 1 && i > 0) {
			plans[i] = plans[0];
			continue;
		}
		end = strchr(s, ';');
		if (!end)
			end = s + strlen(s);
		rc = resolve_entry(g, s, (size_t)(end - s), &plans[i], err);
		if (rc) {
			dt_err_prefix(err, "MIG layout \"%s\" on %s, gpu-%zu: ", l->text, t->name, i);
			return rc;
		}
		s = *end ? end + 1 : end;
	}
	return 0;
}

int hwdb_mig_check(const struct hwdb_mig_layout *l, const struct hwdb_type *t,
		   struct dt_err *err)
{
	const struct hwdb_mig_gpu *g;
	struct hwdb_mig_gpu_plan *plans;
	int rc;

	if (l->kind == HWDB_MIG_NONE)
		return 0;
	g = hwdb_mig_of_type(t);
	if (!g)
		return dt_err_set(err, -ENOTSUP, "%s: %s has no MIG profiles in hwdb", t->name,
				  t->n_gpus ? t->gpu_model : "no GPU");
	if (l->kind == HWDB_MIG_DYNAMIC)
		return 0;
	plans = calloc(t->n_gpus, sizeof(*plans));
	if (!plans)
		return dt_err_set(err, -ENOMEM, "out of memory");
	rc = hwdb_mig_resolve(l, t, g, plans, err);
	free(plans);
	return rc;
}
