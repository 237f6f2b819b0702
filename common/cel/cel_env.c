/* cel_env.c - CEL environments (the standard one, the DRA selector one and
 * the CLI one), the type-expression parser for declarations, the `device`
 * variable, compiling programs, and the selector API of cel.h. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "cel_ast.h"
#include "strbuf.h"

/* ---- built-in checker types ---- */

const struct cel_ctype cel_t_dyn = { .kind = CT_DYN };
const struct cel_ctype cel_t_null = { .kind = CT_NULL };
const struct cel_ctype cel_t_bool = { .kind = CT_BOOL };
const struct cel_ctype cel_t_int = { .kind = CT_INT };
const struct cel_ctype cel_t_uint = { .kind = CT_UINT };
const struct cel_ctype cel_t_double = { .kind = CT_DOUBLE };
const struct cel_ctype cel_t_string = { .kind = CT_STRING };
const struct cel_ctype cel_t_bytes = { .kind = CT_BYTES };
const struct cel_ctype cel_t_timestamp = { .kind = CT_TIMESTAMP };
const struct cel_ctype cel_t_duration = { .kind = CT_DURATION };
const struct cel_ctype cel_t_error = { .kind = CT_ERROR };

void cel_type_print(struct strbuf *sb, const struct cel_ctype *t)
{
	switch (t->kind) {
	case CT_DYN: sb_puts(sb, "dyn"); break;
	case CT_NULL: sb_puts(sb, "null_type"); break;
	case CT_BOOL: sb_puts(sb, "bool"); break;
	case CT_INT: sb_puts(sb, "int"); break;
	case CT_UINT: sb_puts(sb, "uint"); break;
	case CT_DOUBLE: sb_puts(sb, "double"); break;
	case CT_STRING: sb_puts(sb, "string"); break;
	case CT_BYTES: sb_puts(sb, "bytes"); break;
	case CT_TIMESTAMP: sb_puts(sb, "google.protobuf.Timestamp"); break;
	case CT_DURATION: sb_puts(sb, "google.protobuf.Duration"); break;
	case CT_ERROR: sb_puts(sb, "*error*"); break;
	case CT_PARAM:
		/* The checker's free type variable "_" reads as dyn. */
		sb_puts(sb, strcmp(t->name, "_") ? t->name : "dyn");
		break;
	case CT_OBJECT: sb_puts(sb, t->name); break;
	case CT_LIST:
		sb_puts(sb, "list(");
		cel_type_print(sb, t->p[0]);
		sb_putc(sb, ')');
		break;
	case CT_MAP:
		sb_puts(sb, "map(");
		cel_type_print(sb, t->p[0]);
		sb_puts(sb, ", ");
		cel_type_print(sb, t->p[1]);
		sb_putc(sb, ')');
		break;
	case CT_TYPE:
		sb_puts(sb, "type");
		if (t->p[0]) {
			sb_putc(sb, '(');
			cel_type_print(sb, t->p[0]);
			sb_putc(sb, ')');
		}
		break;
	case CT_OPTIONAL:
		sb_puts(sb, "optional_type(");
		cel_type_print(sb, t->p[0]);
		sb_putc(sb, ')');
		break;
	}
}

/* ---- type expressions ---- */

struct tparser {
	const struct cel_env *env;
	struct cel_arena *pool;
	const char *s;
	size_t i;
	struct dt_err *err;
	const char *whole;
};

static void tp_space(struct tparser *tp)
{
	while (tp->s[tp->i] == ' ')
		tp->i++;
}

static const struct cel_ctype *tp_type(struct tparser *tp, int depth);

static struct cel_ctype *tp_new(struct tparser *tp, uint8_t kind)
{
	struct cel_ctype *t = cel_arena_alloc(tp->pool, sizeof(*t));

	if (t) {
		memset(t, 0, sizeof(*t));
		t->kind = kind;
	}
	return t;
}

static const struct cel_ctype *tp_type(struct tparser *tp, int depth)
{
	static const struct { const char *name; const struct cel_ctype *t; } prims[] = {
		{ "int", &cel_t_int }, { "uint", &cel_t_uint }, { "double", &cel_t_double },
		{ "bool", &cel_t_bool }, { "string", &cel_t_string }, { "bytes", &cel_t_bytes },
		{ "null_type", &cel_t_null }, { "dyn", &cel_t_dyn }, { "any", &cel_t_dyn },
		{ "google.protobuf.Timestamp", &cel_t_timestamp },
		{ "google.protobuf.Duration", &cel_t_duration },
		{ "timestamp", &cel_t_timestamp }, { "duration", &cel_t_duration },
	};
	char name[128];
	size_t n = 0;
	struct cel_ctype *t;
	int nparams = 0;
	uint8_t kind;

	if (depth > 16)
		goto bad;
	tp_space(tp);
	while (tp->s[tp->i] && (tp->s[tp->i] == '.' || tp->s[tp->i] == '_' ||
				(tp->s[tp->i] >= 'a' && tp->s[tp->i] <= 'z') ||
				(tp->s[tp->i] >= 'A' && tp->s[tp->i] <= 'Z') ||
				(tp->s[tp->i] >= '0' && tp->s[tp->i] <= '9'))) {
		if (n + 1 >= sizeof(name))
			goto bad;
		name[n++] = tp->s[tp->i++];
	}
	name[n] = 0;
	if (!n)
		goto bad;
	for (size_t k = 0; k < CEL_ARRAY_LEN(prims); k++)
		if (!strcmp(prims[k].name, name))
			return prims[k].t;
	if (!strcmp(name, "list")) {
		kind = CT_LIST;
		nparams = 1;
	} else if (!strcmp(name, "map")) {
		kind = CT_MAP;
		nparams = 2;
	} else if (!strcmp(name, "type")) {
		kind = CT_TYPE;
		nparams = 1;
	} else if (!strcmp(name, "optional_type") || !strcmp(name, "optional")) {
		kind = CT_OPTIONAL;
		nparams = 1;
	} else if (n == 1 && name[0] >= 'A' && name[0] <= 'Z') {
		t = tp_new(tp, CT_PARAM);
		if (!t)
			goto oom;
		t->name = cel_arena_strdup(tp->pool, name, n);
		return t;
	} else {
		const struct cel_object_type *ot = cel_env_find_type(tp->env, name);

		if (!ot) {
			dt_err_set(tp->err, -EINVAL, "unknown type '%s' in '%s'", name, tp->whole);
			return NULL;
		}
		t = tp_new(tp, CT_OBJECT);
		if (!t)
			goto oom;
		t->name = ot->name;
		t->obj = ot;
		return t;
	}
	t = tp_new(tp, kind);
	if (!t)
		goto oom;
	tp_space(tp);
	if (tp->s[tp->i] != '(') {
		if (kind == CT_TYPE) {
			t->p[0] = &cel_t_dyn;
			return t;
		}
		t->p[0] = t->p[1] = &cel_t_dyn;
		return t;
	}
	tp->i++;
	for (int k = 0; k < nparams; k++) {
		if (k) {
			tp_space(tp);
			if (tp->s[tp->i++] != ',')
				goto bad;
		}
		t->p[k] = tp_type(tp, depth + 1);
		if (!t->p[k])
			return NULL;
	}
	tp_space(tp);
	if (tp->s[tp->i++] != ')')
		goto bad;
	return t;
bad:
	dt_err_set(tp->err, -EINVAL, "malformed type expression '%s'", tp->whole);
	return NULL;
oom:
	dt_err_set(tp->err, -ENOMEM, "out of memory");
	return NULL;
}

const struct cel_ctype *cel_type_parse(const struct cel_env *env, struct cel_arena *pool,
				       const char *s, struct dt_err *err)
{
	struct tparser tp = { env, pool, s, 0, err, s };
	const struct cel_ctype *t = tp_type(&tp, 0);

	if (!t)
		return NULL;
	tp_space(&tp);
	if (s[tp.i]) {
		dt_err_set(err, -EINVAL, "malformed type expression '%s'", s);
		return NULL;
	}
	return t;
}

/* ---- the device variable ---- */

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

/* includes(): the DRA list-attribute helper, also true for scalar equality. */
static struct cel_value fn_includes(struct cel_ctx *ctx, const struct cel_value *a, size_t n)
{
	(void)n;
	if (a[0].kind == CEL_LIST) {
		const struct cel_list *l = a[0].v.list;

		if (l->len > 48)
			return cel_errorf(ctx, "'includes' function cannot be applied to lists longer "
					  "than 48 values");
		for (size_t i = 0; i < l->len; i++)
			if (cel_value_equal(&l->items[i], &a[1]))
				return cel_bool(true);
		return cel_bool(false);
	}
	return cel_bool(cel_value_equal(&a[0], &a[1]));
}

static uint64_t cost_includes(const uint64_t *sizes, size_t n, uint64_t r)
{
	(void)n;
	(void)r;
	return cel_sat_add(1, sizes[0]);
}

static const struct cel_overload dra_overloads[] = {
	{ "includes", "dyn_includes_dyn", CEL_OV_MEMBER, "dyn, dyn", "bool", fn_includes,
	  cost_includes },
};

static const struct cel_object_type *const dra_types[] = {
	&cel_device_type, &cel_quantity_type, &cel_semver_type,
};

static const struct cel_library dra_library = {
	"dra", dra_overloads, CEL_ARRAY_LEN(dra_overloads), dra_types, CEL_ARRAY_LEN(dra_types),
};

/* Libraries present in this build (see cel_lib.h). */
static const struct cel_library *const linked_libs[] = {
#ifdef CEL_HAVE_LIB_STRINGS
	&cel_lib_strings,
#endif
#ifdef CEL_HAVE_LIB_LISTS
	&cel_lib_lists,
#endif
#ifdef CEL_HAVE_LIB_SETS
	&cel_lib_sets,
#endif
#ifdef CEL_HAVE_LIB_REGEX
	&cel_lib_regex,
#else
	&cel_lib_std_matches,                  /* the standard matches() */
#endif
#ifdef CEL_HAVE_LIB_URL
	&cel_lib_url,
#endif
#ifdef CEL_HAVE_LIB_IP
	&cel_lib_ip,
#endif
#ifdef CEL_HAVE_LIB_FORMAT
	&cel_lib_format,
#endif
#ifdef CEL_HAVE_LIB_NAMED_FORMAT
	&cel_lib_named_format,
#endif
#ifdef CEL_HAVE_LIB_QUANTITY
	&cel_lib_quantity,
#endif
#ifdef CEL_HAVE_LIB_SEMVER
	&cel_lib_semver,
#endif
	NULL,
};

/* ---- environments ---- */

const struct cel_object_type *cel_env_find_type(const struct cel_env *env, const char *name)
{
	for (size_t i = 0; i < env->n_types; i++)
		if (!strcmp(env->types[i]->name, name))
			return env->types[i];
	return NULL;
}

static int cmp_group(const void *k, const void *g)
{
	return strcmp(k, ((const struct cel_fn_group *)g)->name);
}

const struct cel_fn_group *cel_env_find_fn(const struct cel_env *env, const char *name)
{
	if (!env->n_fns)
		return NULL;
	return bsearch(name, env->fns, env->n_fns, sizeof(*env->fns), cmp_group);
}

static struct cel_fn_group *group_for(struct cel_env *env, const char *name)
{
	size_t lo = 0, hi = env->n_fns;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(name, env->fns[mid].name);

		if (c == 0)
			return &env->fns[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	if (DT_GROW(env->fns, env->cap_fns, env->n_fns + 1))
		return NULL;
	memmove(&env->fns[lo + 1], &env->fns[lo], (env->n_fns - lo) * sizeof(*env->fns));
	memset(&env->fns[lo], 0, sizeof(env->fns[lo]));
	env->fns[lo].name = name;
	env->n_fns++;
	return &env->fns[lo];
}

static uint8_t runtime_kind(const struct cel_ctype *t)
{
	switch (t->kind) {
	case CT_NULL: return CEL_NULL;
	case CT_BOOL: return CEL_BOOL;
	case CT_INT: return CEL_INT;
	case CT_UINT: return CEL_UINT;
	case CT_DOUBLE: return CEL_DOUBLE;
	case CT_STRING: return CEL_STRING;
	case CT_BYTES: return CEL_BYTES;
	case CT_LIST: return CEL_LIST;
	case CT_MAP: return CEL_MAP;
	case CT_TYPE: return CEL_TYPE;
	case CT_TIMESTAMP: return CEL_TIMESTAMP;
	case CT_DURATION: return CEL_DURATION;
	case CT_OPTIONAL: return CEL_OPTIONAL;
	case CT_OBJECT: return CEL_OBJECT;
	default: return CEL_RT_ANY;
	}
}

static int add_overload(struct cel_env *env, const struct cel_overload *d, struct dt_err *err)
{
	struct cel_ovl *o = cel_arena_alloc(&env->pool, sizeof(*o));
	struct cel_fn_group *g;
	char buf[256];
	const char *s = d->params;

	if (!o)
		return dt_err_set(err, -ENOMEM, "out of memory");
	memset(o, 0, sizeof(*o));
	o->decl = d;
	/* Split the comma-separated parameter list at top-level commas. */
	while (s && *s) {
		int depth = 0;
		size_t n = 0;

		while (*s == ' ')
			s++;
		while (*s && (depth > 0 || *s != ',')) {
			if (*s == '(')
				depth++;
			else if (*s == ')')
				depth--;
			if (n + 1 < sizeof(buf))
				buf[n++] = *s;
			s++;
		}
		buf[n] = 0;
		if (*s == ',')
			s++;
		if (o->nparams == CEL_MAX_PARAMS)
			return dt_err_set(err, -EINVAL, "overload %s: too many parameters", d->id);
		o->params[o->nparams] = cel_type_parse(env, &env->pool, buf, err);
		if (!o->params[o->nparams])
			return dt_err_prefix(err, "overload %s: ", d->id);
		o->rt_kind[o->nparams] = runtime_kind(o->params[o->nparams]);
		o->rt_obj[o->nparams] = o->params[o->nparams]->obj;
		o->rt_elem[o->nparams] = o->params[o->nparams]->kind == CT_LIST &&
					 !(d->flags & CEL_OV_NO_ELEM_GUARD) ?
					 runtime_kind(o->params[o->nparams]->p[0]) : CEL_RT_ANY;
		o->nparams++;
	}
	o->result = cel_type_parse(env, &env->pool, d->result, err);
	if (!o->result)
		return dt_err_prefix(err, "overload %s: ", d->id);
	g = group_for(env, d->name);
	if (!g)
		return dt_err_set(err, -ENOMEM, "out of memory");
	if (g->n == g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 8;
		struct cel_ovl **no = cel_arena_alloc(&env->pool, cap * sizeof(*no));

		if (!no)
			return dt_err_set(err, -ENOMEM, "out of memory");
		if (g->n)
			memcpy(no, g->ovls, g->n * sizeof(*no));
		g->ovls = no;
		g->cap = cap;
	}
	g->ovls[g->n++] = o;
	return 0;
}

int cel_env_add_library(struct cel_env *env, const struct cel_library *lib, struct dt_err *err)
{
	int rc;

	for (size_t i = 0; i < env->n_libs; i++)
		if (env->libs[i] == lib)
			return 0;
	if (env->frozen)
		return dt_err_set(err, -EBUSY, "environment already used to compile");
	if (env->n_libs == CEL_ARRAY_LEN(env->libs))
		return dt_err_set(err, -ENOSPC, "too many libraries");
	for (size_t i = 0; i < lib->n_types; i++) {
		if (cel_env_find_type(env, lib->types[i]->name))
			continue;
		if (env->n_types == CEL_ARRAY_LEN(env->types))
			return dt_err_set(err, -ENOSPC, "too many library types");
		env->types[env->n_types++] = lib->types[i];
	}
	for (size_t i = 0; i < lib->n_overloads; i++) {
		rc = add_overload(env, &lib->overloads[i], err);
		if (rc < 0)
			return dt_err_prefix(err, "library %s: ", lib->name);
	}
	env->libs[env->n_libs++] = lib;
	return 0;
}

int cel_env_declare(struct cel_env *env, const char *name, const char *type, struct dt_err *err)
{
	const struct cel_ctype *t;
	char *nm;

	if (env->frozen)
		return dt_err_set(err, -EBUSY, "environment already used to compile");
	for (size_t i = 0; i < env->n_vars; i++)
		if (!strcmp(env->vars[i].name, name))
			return dt_err_set(err, -EEXIST, "variable '%s' already declared", name);
	t = cel_type_parse(env, &env->pool, type, err);
	if (!t)
		return err ? err->code : -EINVAL;
	nm = cel_arena_strdup(&env->pool, name, strlen(name));
	if (!nm)
		return dt_err_set(err, -ENOMEM, "out of memory");
	if (DT_GROW(env->vars, env->cap_vars, env->n_vars + 1))
		return dt_err_set(err, -ENOMEM, "out of memory");
	env->vars[env->n_vars].name = nm;
	env->vars[env->n_vars].type = t;
	return (int)env->n_vars++;
}

int cel_env_set_container(struct cel_env *env, const char *container, struct dt_err *err)
{
	char *c = cel_arena_strdup(&env->pool, container, strlen(container));

	if (!c)
		return dt_err_set(err, -ENOMEM, "out of memory");
	env->container = c;
	return 0;
}

void cel_env_set_checking(struct cel_env *env, bool on)
{
	env->checking = on;
}

void cel_env_set_macros(struct cel_env *env, bool on)
{
	env->macros = on;
}

struct cel_env *cel_env_new(enum cel_env_kind kind, struct dt_err *err)
{
	struct cel_env *env = calloc(1, sizeof(*env));

	if (!env) {
		dt_err_set(err, -ENOMEM, "out of memory");
		return NULL;
	}
	env->kind = kind;
	cel_arena_init(&env->pool, NULL, 0, SIZE_MAX / 2);
	env->container = "";
	env->checking = env->macros = true;
	env->types[env->n_types++] = &cel_quantity_type;
	env->types[env->n_types++] = &cel_semver_type;
	if (cel_env_add_library(env, &cel_lib_std, err) < 0 ||
	    cel_env_add_library(env, &cel_lib_time, err) < 0)
		goto fail;
	for (size_t i = 0; linked_libs[i]; i++)
		if (cel_env_add_library(env, linked_libs[i], err) < 0)
			goto fail;
	if (kind != CEL_ENV_STANDARD) {
		if (cel_env_add_library(env, &dra_library, err) < 0 ||
		    cel_env_declare(env, "device", "kubernetes.DRADevice", err) != 0)
			goto fail;
		env->result_bool = kind == CEL_ENV_DRA_SELECTOR;
		/* Kubernetes' base environment enables cel-go's
		 * HomogeneousAggregateLiterals; the conformance suite (the
		 * standard environment) expects mixed literals to work. */
		env->homogeneous = true;
		/* ... and cel-go's literal validators for duration, timestamp
		 * and matches (conformance wants those as runtime errors). */
		env->literal_checks = true;
	}
	return env;
fail:
	cel_env_free(env);
	return NULL;
}

void cel_env_free(struct cel_env *env)
{
	if (!env)
		return;
	free(env->fns);
	free(env->vars);
	cel_arena_release(&env->pool);
	free(env);
}

/* ---- programs ---- */

int cel_compile(const struct cel_env *env, const char *expr, size_t len,
		struct cel_program **out, struct dt_err *err)
{
	struct cel_program *p = calloc(1, sizeof(*p));
	int rc;

	*out = NULL;
	if (!p)
		return dt_err_set(err, -ENOMEM, "out of memory");
	((struct cel_env *)env)->frozen = true;
	p->env = env;
	cel_arena_init(&p->pool, NULL, 0, 256u << 20);
	p->src = cel_arena_strdup(&p->pool, expr, len);
	if (!p->src) {
		rc = dt_err_set(err, -ENOMEM, "out of memory");
		goto fail;
	}
	p->src_len = len;
	rc = cel_parse(p->src, len, env->macros, &p->pool, &p->ast, err);
	if (rc < 0)
		goto fail;
	rc = cel_check(env, p->src, len, &p->pool, &p->ast, err);
	if (rc < 0)
		goto fail;
	p->n_vars = env->n_vars;
	p->result_bool = env->result_bool;
	p->est_cost = cel_estimate_cost(p);
	cel_fold_constants(p);
	*out = p;
	return 0;
fail:
	cel_program_free(p);
	return rc;
}

void cel_program_free(struct cel_program *p)
{
	if (!p)
		return;
	cel_arena_release(&p->pool);
	free(p);
}

void cel_program_result_type(const struct cel_program *p, struct strbuf *sb)
{
	cel_type_print(sb, p->ast.root->type);
}

uint64_t cel_program_estimated_cost(const struct cel_program *p)
{
	return p->est_cost;
}

/* ---- the selector API (cel.h) ---- */

static pthread_once_t dra_once = PTHREAD_ONCE_INIT;
static struct cel_env *dra_env;
static struct dt_err dra_env_err;

static void dra_env_init(void)
{
	dra_env = cel_env_new(CEL_ENV_DRA_SELECTOR, &dra_env_err);
	if (dra_env)
		dra_env->frozen = true;
}

int cel_compile_selector(const char *expr, size_t len, bool check_cost,
			 struct cel_program **out, struct dt_err *err)
{
	int rc;

	*out = NULL;
	pthread_once(&dra_once, dra_env_init);
	if (!dra_env)
		return dt_err_set(err, -ENOMEM, "CEL environment: %s", dra_env_err.msg);
	if (len > CEL_MAX_EXPRESSION_LEN)
		return dt_err_set(err, -EINVAL, "Too long: may not be more than %d bytes",
				  CEL_MAX_EXPRESSION_LEN);
	rc = cel_compile(dra_env, expr, len, out, err);
	if (rc < 0)
		return rc;
	if (check_cost && (*out)->est_cost > CEL_COST_LIMIT) {
		cel_program_free(*out);
		*out = NULL;
		return dt_err_set(err, -EINVAL, "too complex, exceeds cost limit");
	}
	return 0;
}

int cel_selector_check(const char *expr, size_t len, char *msg, size_t msgsz, void *ctx)
{
	struct cel_program *p = NULL;
	struct dt_err err = { 0 };
	int rc;

	(void)ctx;
	rc = cel_compile_selector(expr, len, true, &p, &err);
	cel_program_free(p);
	if (!rc)
		return 0;
	if (strstr(err.msg, "cost limit")) {
		snprintf(msg, msgsz, "too complex, exceeds cost limit");
		return -E2BIG;
	}
	snprintf(msg, msgsz, "compilation failed: %s", err.msg[0] ? err.msg : "invalid expression");
	return -EINVAL;
}
