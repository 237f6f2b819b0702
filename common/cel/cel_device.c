/* cel_device.c - the `device` variable of DRA selectors: CEL's view of a
 * struct cel_device (cel_device.h), its attributes and capacity maps by
 * domain, and the value of one attribute. The fast paths the compiler
 * rewrites selectors into are cel_device_eval.c's. */
#include <errno.h>
#include <string.h>

#include "cel_ast.h"

static const struct cel_device *dev_of(const struct cel_map *m)
{
	return m->view;
}

static bool key_is(const struct cel_value *k, const char *s)
{
	size_t n = strlen(s);

	return k->kind == CEL_STRING && k->v.str.len == n && !memcmp(k->v.str.s, s, n);
}

/* Domains: the distinct domains of the attributes (view2 == NULL) or of
 * the capacities (view2 == (void *)1), in first-appearance order. */
static bool is_cap(const struct cel_map *m)
{
	return m->view2 != NULL;
}

static size_t n_items(const struct cel_map *m)
{
	return is_cap(m) ? dev_of(m)->n_capacity : dev_of(m)->n_attrs;
}

static const char *item_domain(const struct cel_map *m, size_t i)
{
	return is_cap(m) ? dev_of(m)->capacity[i].domain : dev_of(m)->attrs[i].domain;
}

static const char *item_id(const struct cel_map *m, size_t i)
{
	return is_cap(m) ? dev_of(m)->capacity[i].id : dev_of(m)->attrs[i].id;
}

static bool first_of_domain(const struct cel_map *m, size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (!strcmp(item_domain(m, j), item_domain(m, i)))
			return false;
	return true;
}

static const struct cel_map_ops ids_ops;

static struct cel_value ids_map(struct cel_ctx *ctx, const struct cel_map *domains,
				const char *domain)
{
	struct cel_map *m = cel_alloc(ctx, sizeof(*m));

	if (!m)
		return cel_error_oom(ctx);
	memset(m, 0, sizeof(*m));
	m->ops = &ids_ops;
	m->view = domains;          /* the domains map: device and kind */
	m->view2 = domain;
	return cel_map_value(m);
}

static bool domains_find(struct cel_ctx *ctx, const struct cel_map *m, const struct cel_value *key,
			 struct cel_value *out)
{
	for (size_t i = 0; i < n_items(m); i++)
		if (key_is(key, item_domain(m, i))) {
			*out = ids_map(ctx, m, item_domain(m, i));
			return true;
		}
	return false;
}

/* An unknown domain reads as an empty map (the DRA mapper's default). */
static bool domains_missing(struct cel_ctx *ctx, const struct cel_map *m,
			    const struct cel_value *key, struct cel_value *out)
{
	static const struct cel_map empty;

	(void)ctx;
	(void)m;
	if (key->kind != CEL_STRING)
		return false;
	*out = cel_map_value(&empty);
	return true;
}

static size_t domains_size(const struct cel_map *m)
{
	size_t n = 0;

	for (size_t i = 0; i < n_items(m); i++)
		n += first_of_domain(m, i);
	return n;
}

static void domains_entry(struct cel_ctx *ctx, const struct cel_map *m, size_t k,
			  struct cel_value *key, struct cel_value *val)
{
	for (size_t i = 0; i < n_items(m); i++)
		if (first_of_domain(m, i) && k-- == 0) {
			const char *d = item_domain(m, i);

			*key = cel_string(d, strlen(d));
			*val = ids_map(ctx, m, d);
			return;
		}
	*key = *val = cel_null();
}

static const struct cel_map_ops domains_ops = {
	.find = domains_find, .size = domains_size, .entry = domains_entry,
	.missing = domains_missing,
};

static struct cel_value item_value(const struct cel_map *domains, size_t i)
{
	const struct cel_device *d = dev_of(domains);

	if (is_cap(domains))
		return cel_object(&cel_quantity_type, d->capacity[i].value);
	return cel_device_attr_value(&d->attrs[i]);
}

static bool ids_find(struct cel_ctx *ctx, const struct cel_map *m, const struct cel_value *key,
		     struct cel_value *out)
{
	const struct cel_map *dm = m->view;
	const char *domain = m->view2;

	(void)ctx;
	for (size_t i = 0; i < n_items(dm); i++)
		if (!strcmp(item_domain(dm, i), domain) && key_is(key, item_id(dm, i))) {
			*out = item_value(dm, i);
			return true;
		}
	return false;
}

static size_t ids_size(const struct cel_map *m)
{
	const struct cel_map *dm = m->view;
	size_t n = 0;

	for (size_t i = 0; i < n_items(dm); i++)
		n += !strcmp(item_domain(dm, i), (const char *)m->view2);
	return n;
}

static void ids_entry(struct cel_ctx *ctx, const struct cel_map *m, size_t k,
		      struct cel_value *key, struct cel_value *val)
{
	const struct cel_map *dm = m->view;

	(void)ctx;
	for (size_t i = 0; i < n_items(dm); i++)
		if (!strcmp(item_domain(dm, i), (const char *)m->view2) && k-- == 0) {
			*key = cel_string(item_id(dm, i), strlen(item_id(dm, i)));
			*val = item_value(dm, i);
			return;
		}
	*key = *val = cel_null();
}

static const struct cel_map_ops ids_ops = {
	.find = ids_find, .size = ids_size, .entry = ids_entry,
};

static bool device_field(struct cel_ctx *ctx, const void *obj, const char *name,
			 struct cel_value *out)
{
	const struct cel_device *d = obj;
	struct cel_map *m;

	if (!strcmp(name, "driver")) {
		*out = cel_string(d->driver ? d->driver : "", d->driver ? strlen(d->driver) : 0);
		return true;
	}
	if (!strcmp(name, "allowMultipleAllocations")) {
		*out = cel_bool(d->allow_multiple_allocations);
		return true;
	}
	if (strcmp(name, "attributes") && strcmp(name, "capacity"))
		return false;
	m = cel_alloc(ctx, sizeof(*m));
	if (!m) {
		*out = cel_error_oom(ctx);
		return true;
	}
	memset(m, 0, sizeof(*m));
	m->ops = &domains_ops;
	m->view = d;
	m->view2 = name[0] == 'c' ? (const void *)1 : NULL;
	*out = cel_map_value(m);
	return true;
}

static const struct cel_field_decl device_fields[] = {
	{ "driver", "string" },
	{ "attributes", "map(string, map(string, dyn))" },
	{ "capacity", "map(string, map(string, kubernetes.Quantity))" },
	{ "allowMultipleAllocations", "bool" },
};

const struct cel_object_type cel_device_type = {
	.name = "kubernetes.DRADevice",
	.fields = device_fields,
	.n_fields = CEL_ARRAY_LEN(device_fields),
	.field = device_field,
};

struct cel_value cel_device_value(const struct cel_device *dev)
{
	return cel_object(&cel_device_type, dev);
}

struct cel_value cel_device_attr_value(const struct cel_device_attr *a)
{
	switch (a->kind) {
	case CEL_ATTR_INT: return cel_int(a->v.i);
	case CEL_ATTR_BOOL: return cel_bool(a->v.b);
	case CEL_ATTR_STRING: return cel_string(a->v.str.s, a->v.str.len);
	case CEL_ATTR_VERSION: return cel_object(&cel_semver_type, a->v.version);
	default: return cel_list_value(a->v.list);
	}
}
