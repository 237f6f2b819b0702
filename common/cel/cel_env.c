/* cel_env.c - CEL environments (the standard one, the DRA selector one and
 * the CLI one): their libraries, overloads, variables (declared with type
 * expressions, "list(string)") and object types.
 * Compiling against one is cel_compile.c's; the checker's types are
 * cel_types.c's, the `device` variable cel_device.c's. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "cel_ast.h"
#include "strbuf.h"

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

/* ---- the DRA environment's library and the linked ones ---- */

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

