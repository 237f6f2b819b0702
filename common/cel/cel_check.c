/* cel_check.c - the CEL checker: resolves identifiers (comprehension
 * variables, declared variables with container prefixes, type names,
 * namespaced functions), infers types with type-parameter unification, and
 * picks the candidate overloads of each call. With checking off it still
 * resolves names but leaves every type dyn, so the evaluator dispatches on
 * runtime types only. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cel_ast.h"
#include "strbuf.h"

#define MAX_SCOPE 512
#define MAX_SUBST 8

struct scope_var {
	const char *name;
	int slot;
	const struct cel_ctype *type;
};

struct checker {
	const struct cel_env *env;
	const char *src;
	size_t len;
	struct cel_arena *pool;
	struct dt_err *err;
	bool typed;                       /* env->checking */
	bool failed;
	struct scope_var scope[MAX_SCOPE];
	int n_scope;
	int depth;                        /* comprehension nesting */
	int max_slots;
};

struct subst {
	const char *name[MAX_SUBST];
	const struct cel_ctype *t[MAX_SUBST];
	int n;
};

static void cerr(struct checker *c, uint32_t pos, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void cerr(struct checker *c, uint32_t pos, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (c->failed)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	c->failed = true;
	cel_report(c->err, -EINVAL, c->src, c->len, pos, "%s", msg);
}

static const struct cel_ctype *mk(struct checker *c, uint8_t kind, const struct cel_ctype *a,
				  const struct cel_ctype *b)
{
	struct cel_ctype *t = cel_arena_alloc(c->pool, sizeof(*t));

	if (!t) {
		cerr(c, 0, "out of memory");
		return &cel_t_dyn;
	}
	memset(t, 0, sizeof(*t));
	t->kind = kind;
	t->p[0] = a;
	t->p[1] = b;
	return t;
}

static const char *type_str(struct checker *c, const struct cel_ctype *t)
{
	struct strbuf sb = STRBUF_INIT;
	const char *s;

	cel_type_print(&sb, t);
	s = sb_error(&sb) ? "?" : cel_arena_strdup(c->pool, sb_str(&sb), sb.len);
	sb_free(&sb);
	return s ? s : "?";
}

static bool type_equal(const struct cel_ctype *a, const struct cel_ctype *b)
{
	if (a == b)
		return true;
	if (a->kind != b->kind)
		return false;
	switch (a->kind) {
	case CT_LIST:
	case CT_OPTIONAL:
		return type_equal(a->p[0], b->p[0]);
	case CT_TYPE:
		if (!a->p[0] || !b->p[0])
			return a->p[0] == b->p[0];
		return type_equal(a->p[0], b->p[0]);
	case CT_MAP:
		return type_equal(a->p[0], b->p[0]) && type_equal(a->p[1], b->p[1]);
	case CT_OBJECT:
	case CT_PARAM:
		return !strcmp(a->name, b->name);
	default:
		return true;
	}
}

/* The type of an unconstrained value ([] elements, optional.none()): a
 * type variable that any later type refines; printed as dyn. */
static const struct cel_ctype free_type = { .kind = CT_PARAM, .name = "_" };

static bool is_free(const struct cel_ctype *t)
{
	return t == &free_type;
}

static const struct cel_ctype **subst_get(struct subst *s, const char *name)
{
	for (int i = 0; i < s->n; i++)
		if (!strcmp(s->name[i], name))
			return &s->t[i];
	if (s->n == MAX_SUBST)
		return NULL;
	s->name[s->n] = name;
	s->t[s->n] = NULL;
	return &s->t[s->n++];
}

static bool is_dynish(const struct cel_ctype *t)
{
	return t->kind == CT_DYN || t->kind == CT_ERROR;
}

/* Can a value of type a be passed where p is expected? Binds parameters. */
static bool assignable(struct subst *s, const struct cel_ctype *p, const struct cel_ctype *a)
{
	if (p->kind == CT_PARAM) {
		const struct cel_ctype **b = subst_get(s, p->name);

		if (!b)
			return false;
		if (!*b || is_free(*b)) {
			*b = a;
			return true;
		}
		if (is_dynish(*b))
			return true;
		if (is_dynish(a))
			return true;
		if (assignable(s, *b, a))
			return true;
		/* A more general binding seen later: keep the wider one. */
		if (assignable(s, a, *b)) {
			*b = a;
			return true;
		}
		return false;
	}
	if (is_dynish(p) || is_dynish(a))
		return true;
	if (a->kind == CT_PARAM)
		return true;
	if (p->kind != a->kind)
		return false;
	switch (p->kind) {
	case CT_LIST:
	case CT_OPTIONAL:
		return assignable(s, p->p[0], a->p[0]);
	case CT_TYPE:
		/* All type values have the runtime type `type`. */
		return true;
	case CT_MAP:
		return assignable(s, p->p[0], a->p[0]) && assignable(s, p->p[1], a->p[1]);
	case CT_OBJECT:
		return !strcmp(p->name, a->name);
	default:
		return true;
	}
}

static const struct cel_ctype *substitute(struct checker *c, struct subst *s,
					  const struct cel_ctype *t)
{
	const struct cel_ctype *a, *b;

	switch (t->kind) {
	case CT_PARAM:
		for (int i = 0; i < s->n; i++)
			if (!strcmp(s->name[i], t->name))
				return s->t[i] ? s->t[i] : &free_type;
		return &free_type;
	case CT_LIST:
	case CT_OPTIONAL:
	case CT_TYPE:
		if (!t->p[0])
			return t;
		a = substitute(c, s, t->p[0]);
		return a == t->p[0] ? t : mk(c, t->kind, a, NULL);
	case CT_MAP:
		a = substitute(c, s, t->p[0]);
		b = substitute(c, s, t->p[1]);
		return a == t->p[0] && b == t->p[1] ? t : mk(c, CT_MAP, a, b);
	default:
		return t;
	}
}

static const struct cel_ctype *mk(struct checker *c, uint8_t kind, const struct cel_ctype *a,
				  const struct cel_ctype *b);

/* The common type of two element types: a free type takes the other, like
 * constructors join parameter-wise, anything else that differs is dyn. */
static const struct cel_ctype *join(struct checker *c, const struct cel_ctype *a,
				    const struct cel_ctype *b)
{
	if (!a || is_free(a))
		return b;
	if (is_free(b))
		return a;
	if (type_equal(a, b))
		return a;
	/* null joins with the nullable kinds (legacy wrapper semantics). */
	if (a->kind == CT_NULL && (b->kind == CT_OPTIONAL || b->kind == CT_OBJECT))
		return b;
	if (b->kind == CT_NULL && (a->kind == CT_OPTIONAL || a->kind == CT_OBJECT))
		return a;
	if (a->kind == b->kind) {
		switch (a->kind) {
		case CT_LIST:
		case CT_OPTIONAL:
			return mk(c, a->kind, join(c, a->p[0], b->p[0]), NULL);
		case CT_MAP:
			return mk(c, CT_MAP, join(c, a->p[0], b->p[0]), join(c, a->p[1], b->p[1]));
		default:
			break;
		}
	}
	return &cel_t_dyn;
}

static const struct cel_ctype *check(struct checker *c, struct cel_node *n);

/* ---- identifiers ---- */

static const struct scope_var *find_local(struct checker *c, const char *name)
{
	for (int i = c->n_scope - 1; i >= 0; i--)
		if (!strcmp(c->scope[i].name, name))
			return &c->scope[i];
	return NULL;
}

static int find_global(struct checker *c, const char *name)
{
	const struct cel_env *env = c->env;
	const char *cont = env->container;
	char buf[512];

	if (name[0] == '.')
		name++;
	else if (cont && *cont) {
		/* Container resolution: a.b.name, a.name, name. */
		size_t cl = strlen(cont);

		for (;;) {
			snprintf(buf, sizeof(buf), "%.*s.%s", (int)cl, cont, name);
			for (size_t i = 0; i < env->n_vars; i++)
				if (!strcmp(env->vars[i].name, buf))
					return (int)i;
			while (cl > 0 && cont[cl - 1] != '.')
				cl--;
			if (cl == 0)
				break;
			cl--;
		}
	}
	for (size_t i = 0; i < env->n_vars; i++)
		if (!strcmp(env->vars[i].name, name))
			return (int)i;
	return -1;
}

static const struct cel_ctype *type_ident(struct checker *c, const char *name)
{
	static const struct { const char *name; const struct cel_ctype *t; } names[] = {
		{ "int", &cel_t_int }, { "uint", &cel_t_uint }, { "double", &cel_t_double },
		{ "bool", &cel_t_bool }, { "string", &cel_t_string }, { "bytes", &cel_t_bytes },
		{ "null_type", &cel_t_null },
		{ "google.protobuf.Timestamp", &cel_t_timestamp },
		{ "google.protobuf.Duration", &cel_t_duration },
	};
	const struct cel_object_type *ot;

	if (name[0] == '.')
		name++;
	for (size_t i = 0; i < CEL_ARRAY_LEN(names); i++)
		if (!strcmp(names[i].name, name))
			return names[i].t;
	if (!strcmp(name, "list"))
		return mk(c, CT_LIST, &cel_t_dyn, NULL);
	if (!strcmp(name, "map"))
		return mk(c, CT_MAP, &cel_t_dyn, &cel_t_dyn);
	if (!strcmp(name, "type"))
		return mk(c, CT_TYPE, &cel_t_dyn, NULL);
	if (!strcmp(name, "optional_type"))
		return mk(c, CT_OPTIONAL, &cel_t_dyn, NULL);
	ot = cel_env_find_type(c->env, name);
	if (ot) {
		struct cel_ctype *t = cel_arena_alloc(c->pool, sizeof(*t));

		if (!t)
			return NULL;
		memset(t, 0, sizeof(*t));
		t->kind = CT_OBJECT;
		t->name = ot->name;
		t->obj = ot;
		return t;
	}
	return NULL;
}

/* The runtime type name of a type expression's value (type(int) -> "int"). */
static const char *runtime_type_name(const struct cel_ctype *t)
{
	switch (t->kind) {
	case CT_NULL: return "null_type";
	case CT_BOOL: return "bool";
	case CT_INT: return "int";
	case CT_UINT: return "uint";
	case CT_DOUBLE: return "double";
	case CT_STRING: return "string";
	case CT_BYTES: return "bytes";
	case CT_LIST: return "list";
	case CT_MAP: return "map";
	case CT_TYPE: return "type";
	case CT_TIMESTAMP: return "google.protobuf.Timestamp";
	case CT_DURATION: return "google.protobuf.Duration";
	case CT_OPTIONAL: return "optional_type";
	case CT_OBJECT: return t->name;
	default: return "dyn";
	}
}

static const struct cel_ctype *check_ident(struct checker *c, struct cel_node *n)
{
	const char *name = n->u.ident.name;
	const struct scope_var *lv = name[0] == '.' ? NULL : find_local(c, name);
	const struct cel_ctype *tt;
	int g;

	if (lv) {
		n->u.ident.scope = SCOPE_LOCAL;
		n->u.ident.slot = lv->slot;
		return lv->type;
	}
	g = find_global(c, name);
	if (g >= 0) {
		n->u.ident.scope = SCOPE_GLOBAL;
		n->u.ident.slot = g;
		return c->env->vars[g].type;
	}
	tt = type_ident(c, name);
	if (tt) {
		n->kind = N_CONST;
		n->u.lit = cel_type_named(runtime_type_name(tt));
		return mk(c, CT_TYPE, tt, NULL);
	}
	if (!c->typed) {
		n->u.ident.scope = SCOPE_UNRESOLVED;
		return &cel_t_dyn;
	}
	cerr(c, n->pos, "undeclared reference to '%s' (in container '%s')",
	     name[0] == '.' ? name + 1 : name, c->env->container ? c->env->container : "");
	return &cel_t_error;
}

/* Dotted name of an ident/select chain (no locals at its root), or NULL. */
static bool chain_name(struct checker *c, const struct cel_node *n, char *buf, size_t cap)
{
	const struct cel_node *parts[64];
	int np = 0;
	size_t len;

	while (n->kind == N_SELECT && !n->u.sel.test_only && np < 64) {
		parts[np++] = n;
		n = n->u.sel.operand;
	}
	if (n->kind != N_IDENT || find_local(c, n->u.ident.name))
		return false;
	len = (size_t)snprintf(buf, cap, "%s", n->u.ident.name);
	while (np > 0 && len < cap)
		len += (size_t)snprintf(buf + len, cap - len, ".%s", parts[--np]->u.sel.field);
	return len < cap;
}

static const struct cel_ctype *select_field(struct checker *c, struct cel_node *n,
					    const struct cel_ctype *ot, const char *field)
{
	switch (ot->kind) {
	case CT_DYN:
	case CT_ERROR:
	case CT_PARAM:
		return &cel_t_dyn;
	case CT_MAP:
		if (!is_dynish(ot->p[0]) && ot->p[0]->kind != CT_STRING && ot->p[0]->kind != CT_PARAM)
			break;
		return ot->p[1];
	case CT_OBJECT:
		for (size_t i = 0; ot->obj && i < ot->obj->n_fields; i++)
			if (!strcmp(ot->obj->fields[i].name, field)) {
				struct dt_err e;
				const struct cel_ctype *ft = cel_type_parse(c->env, c->pool,
									    ot->obj->fields[i].type, &e);
				return ft ? ft : &cel_t_dyn;
			}
		cerr(c, n->pos, "undefined field '%s'", field);
		return &cel_t_error;
	default:
		break;
	}
	cerr(c, n->pos, "type '%s' does not support field selection", type_str(c, ot));
	return &cel_t_error;
}

static const struct cel_ctype *check_select(struct checker *c, struct cel_node *n)
{
	char name[512];
	const struct cel_ctype *ot;

	/* a.b.c may name a variable (or a.b, with .c selected from it). */
	if (!n->u.sel.test_only && chain_name(c, n, name, sizeof(name))) {
		int g = find_global(c, name);

		if (g >= 0) {
			n->kind = N_IDENT;
			n->u.ident.name = cel_arena_strdup(c->pool, name, strlen(name));
			n->u.ident.scope = SCOPE_GLOBAL;
			n->u.ident.slot = g;
			return c->env->vars[g].type;
		}
		const struct cel_ctype *tt = type_ident(c, name);

		if (tt) {
			n->kind = N_CONST;
			n->u.lit = cel_type_named(runtime_type_name(tt));
			return mk(c, CT_TYPE, tt, NULL);
		}
	}
	ot = check(c, n->u.sel.operand);
	if (c->failed)
		return &cel_t_error;
	if (!c->typed)
		return n->u.sel.test_only ? &cel_t_bool : &cel_t_dyn;
	if (ot->kind == CT_OPTIONAL) {
		/* opt.f: optional chaining continues through plain selects. */
		const struct cel_ctype *ft;

		if (n->u.sel.test_only)
			return &cel_t_bool;
		ft = select_field(c, n, ot->p[0], n->u.sel.field);
		return ft->kind == CT_OPTIONAL ? ft : mk(c, CT_OPTIONAL, ft, NULL);
	}
	if (n->u.sel.test_only) {
		if (ot->kind != CT_MAP && ot->kind != CT_OBJECT && !is_dynish(ot) &&
		    ot->kind != CT_PARAM) {
			cerr(c, n->pos, "type '%s' does not support field selection",
			     type_str(c, ot));
			return &cel_t_error;
		}
		if (ot->kind == CT_OBJECT)
			select_field(c, n, ot, n->u.sel.field);
		return &cel_t_bool;
	}
	return select_field(c, n, ot, n->u.sel.field);
}

/* ---- calls ---- */

static const char *special_names[] = {
	[SP_AND] = "_&&_", [SP_OR] = "_||_", [SP_COND] = "_?_:_",
	[SP_NOT_STRICTLY_FALSE] = "@not_strictly_false", [SP_INDEX] = "_[_]",
	[SP_OPT_INDEX] = "_[?_]", [SP_OPT_SELECT] = "_?._", [SP_OR_VALUE] = "orValue",
	[SP_OPT_OR] = "or",
	[SP_APPEND] = "@append", [SP_MAP_INSERT] = "@map_insert", [SP_DYN] = "dyn",
	[SP_TYPE] = "type",
};

/* "(int, uint)" or, for member calls, "string.(int)" as cel-go prints them. */
static void format_args(struct strbuf *sb, const struct cel_ctype **at, uint32_t na,
			bool member)
{
	uint32_t i = 0;

	if (member) {
		cel_type_print(sb, at[0]);
		sb_putc(sb, '.');
		i = 1;
	}
	sb_putc(sb, '(');
	for (uint32_t k = i; k < na; k++) {
		if (k > i)
			sb_puts(sb, ", ");
		cel_type_print(sb, at[k]);
	}
	sb_putc(sb, ')');
}

/* cel-go's literal validators, which the Kubernetes environments enable:
 * a constant first argument of duration(), timestamp() or matches() that
 * the function would refuse at run time is a compile error at that
 * argument. As in cel-go the argument is the call's first one, not counting
 * a member call's receiver (for matches: the pattern), and the message is
 * its own. The runtime overload decides, so both agree. */
static void check_literal_arg(struct checker *c, const struct cel_node *n)
{
	static const char *const fns[] = { "duration", "timestamp", "matches" };
	const struct cel_node *lit = n->u.call.nargs ? n->u.call.args[0] : NULL;
	const struct cel_ovl *o = n->u.call.ncands ? n->u.call.cands[0] : NULL;
	struct cel_value args[2], r;
	char buf[512];
	struct cel_arena a;
	struct cel_ctx ctx = { .arena = &a, .cost_limit = UINT64_MAX };
	size_t k, na = 0;

	if (!c->env->literal_checks || !lit || lit->kind != N_CONST ||
	    lit->u.lit.kind != CEL_STRING || !o || !o->decl->fn)
		return;
	for (k = 0; k < CEL_ARRAY_LEN(fns) && strcmp(fns[k], n->u.call.fn); k++)
		;
	if (k == CEL_ARRAY_LEN(fns))
		return;
	if (k == 2)                     /* matches(subject, pattern): any subject */
		args[na++] = cel_string("", 0);
	args[na++] = lit->u.lit;
	if (o->nparams != na)
		return;
	cel_arena_init(&a, buf, sizeof(buf), 1 << 20);
	r = o->decl->fn(&ctx, args, na);
	if (cel_is_error(&r))
		cerr(c, lit->pos, "invalid %s argument", fns[k]);
	cel_arena_release(&a);
}

static const struct cel_ctype *check_call(struct checker *c, struct cel_node *n)
{
	const struct cel_ctype *at[CEL_MAX_PARAMS + 1];
	const struct cel_fn_group *g;
	const struct cel_ctype *result = NULL;
	const struct cel_ovl **cands;
	uint32_t na, nc = 0;
	bool member;
	char qname[512];

	/* Namespaced globals: optional.of(x), strings.quote(s), math.greatest(). */
	if (n->u.call.target && chain_name(c, n->u.call.target, qname, sizeof(qname)) &&
	    find_global(c, qname) < 0) {
		size_t l = strlen(qname);

		snprintf(qname + l, sizeof(qname) - l, ".%s", n->u.call.fn);
		if (cel_env_find_fn(c->env, qname[0] == '.' ? qname + 1 : qname)) {
			const char *q = qname[0] == '.' ? qname + 1 : qname;

			n->u.call.fn = cel_arena_strdup(c->pool, q, strlen(q));
			n->u.call.target = NULL;
		}
	}
	for (size_t s = 1; s < CEL_ARRAY_LEN(special_names); s++)
		if (special_names[s] && !strcmp(special_names[s], n->u.call.fn)) {
			n->u.call.special = (uint8_t)s;
			break;
		}
	/* orValue/or are only special as optional members. */
	if ((n->u.call.special == SP_OR_VALUE || n->u.call.special == SP_OPT_OR) &&
	    (!n->u.call.target || n->u.call.nargs != 1))
		n->u.call.special = SP_NONE;
	if ((n->u.call.special == SP_DYN || n->u.call.special == SP_TYPE) &&
	    (n->u.call.target || n->u.call.nargs != 1))
		n->u.call.special = SP_NONE;

	member = n->u.call.target != NULL;
	na = 0;
	if (member) {
		at[na++] = check(c, n->u.call.target);
	}
	if (n->u.call.nargs + na > CEL_MAX_PARAMS) {
		/* No overload takes this many; still check the arguments. */
		for (uint32_t i = 0; i < n->u.call.nargs; i++)
			check(c, n->u.call.args[i]);
		if (c->typed) {
			cerr(c, n->pos, "found no matching overload for '%s' applied to %u arguments",
			     n->u.call.fn, n->u.call.nargs);
			return &cel_t_error;
		}
	} else {
		for (uint32_t i = 0; i < n->u.call.nargs; i++)
			at[na++] = check(c, n->u.call.args[i]);
	}
	if (c->failed)
		return &cel_t_error;

	switch (n->u.call.special) {
	case SP_AND:
	case SP_OR:
		for (uint32_t i = 0; i < na && c->typed; i++)
			if (!is_dynish(at[i]) && at[i]->kind != CT_BOOL) {
				struct strbuf sb = STRBUF_INIT;

				format_args(&sb, at, na, false);
				cerr(c, n->pos, "found no matching overload for '%s' applied to '%s'",
				     n->u.call.fn, sb_str(&sb));
				sb_free(&sb);
				return &cel_t_error;
			}
		return &cel_t_bool;
	case SP_COND:
		if (c->typed && !is_dynish(at[0]) && at[0]->kind != CT_BOOL) {
			struct strbuf sb = STRBUF_INIT;

			format_args(&sb, at, na, false);
			cerr(c, n->pos, "found no matching overload for '_?_:_' applied to '%s'",
			     sb_str(&sb));
			sb_free(&sb);
			return &cel_t_error;
		}
		return c->typed ? join(c, at[1], at[2]) : &cel_t_dyn;
	case SP_NOT_STRICTLY_FALSE:
		return &cel_t_bool;
	case SP_APPEND:
	case SP_MAP_INSERT:
		if (n->u.call.special == SP_APPEND)
			return mk(c, CT_LIST, at[1], NULL);
		if (na == 3)
			return mk(c, CT_MAP, at[1], at[2]);
		return at[1]->kind == CT_MAP ? at[1] : at[0];
	case SP_OPT_SELECT: {
		const struct cel_ctype *ot = at[0], *ft;
		const char *field = n->u.call.args[1]->u.lit.v.str.s;

		if (!c->typed)
			return &cel_t_dyn;
		if (ot->kind == CT_OPTIONAL)
			ot = ot->p[0];
		ft = select_field(c, n, ot, field);
		return mk(c, CT_OPTIONAL, ft, NULL);
	}
	case SP_OPT_INDEX: {
		const struct cel_ctype *ot = at[0];

		if (!c->typed)
			return &cel_t_dyn;
		if (ot->kind == CT_OPTIONAL)
			ot = ot->p[0];
		if (ot->kind == CT_LIST)
			return mk(c, CT_OPTIONAL, ot->p[0], NULL);
		if (ot->kind == CT_MAP)
			return mk(c, CT_OPTIONAL, ot->p[1], NULL);
		if (is_dynish(ot) || ot->kind == CT_PARAM)
			return mk(c, CT_OPTIONAL, &cel_t_dyn, NULL);
		cerr(c, n->pos, "found no matching overload for '_[?_]' applied to '(%s, %s)'",
		     type_str(c, at[0]), type_str(c, at[1]));
		return &cel_t_error;
	}
	case SP_DYN:
		return &cel_t_dyn;
	default:
		break;
	}

	g = cel_env_find_fn(c->env, n->u.call.fn);
	if (!g) {
		if (!c->typed)
			return &cel_t_dyn;
		cerr(c, n->pos, "undeclared reference to '%s' (in container '%s')", n->u.call.fn,
		     c->env->container ? c->env->container : "");
		return &cel_t_error;
	}
	n->u.call.group = g;
	cands = cel_arena_alloc(c->pool, (g->n ? g->n : 1) * sizeof(*cands));
	if (!cands) {
		cerr(c, n->pos, "out of memory");
		return &cel_t_error;
	}
	for (size_t i = 0; i < g->n; i++) {
		const struct cel_ovl *o = g->ovls[i];
		bool om = (o->decl->flags & CEL_OV_MEMBER) != 0;
		struct subst s = { .n = 0 };
		bool ok = true;
		const struct cel_ctype *rt;

		if (om != member || o->nparams != na)
			continue;
		for (uint32_t k = 0; k < na && ok && c->typed; k++)
			ok = assignable(&s, o->params[k], at[k]);
		if (!ok)
			continue;
		cands[nc++] = o;
		rt = c->typed ? substitute(c, &s, o->result) : &cel_t_dyn;
		if (!result)
			result = rt;
		else if (!type_equal(result, rt))
			result = &cel_t_dyn;
	}
	if (!nc) {
		struct strbuf sb = STRBUF_INIT;

		if (!c->typed && (member || na > 0)) {
			/* Unchecked: the runtime reports the missing overload. */
			n->u.call.cands = cands;
			n->u.call.ncands = 0;
			return &cel_t_dyn;
		}
		format_args(&sb, at, na, member);
		cerr(c, n->pos, "found no matching overload for '%s' applied to '%s'",
		     n->u.call.fn, sb_str(&sb));
		sb_free(&sb);
		return &cel_t_error;
	}
	n->u.call.cands = cands;
	n->u.call.ncands = nc;
	check_literal_arg(c, n);
	return result ? result : &cel_t_dyn;
}

/* ---- aggregates and comprehensions ---- */

/* Whether an aggregate literal whose earlier elements have type a accepts
 * one of type b (cel-go's isAssignable between the two): dyn and not yet
 * known types (the element type of [] or {}) accept and fit anything, null
 * fits the nullable kinds, constructors compare parameter-wise. */
static bool elem_accepts(const struct cel_ctype *a, const struct cel_ctype *b)
{
	if (is_dynish(a) || is_dynish(b) || a->kind == CT_PARAM || b->kind == CT_PARAM)
		return true;
	if ((a->kind == CT_NULL && (b->kind == CT_OPTIONAL || b->kind == CT_OBJECT)) ||
	    (b->kind == CT_NULL && (a->kind == CT_OPTIONAL || a->kind == CT_OBJECT)))
		return true;
	if (a->kind != b->kind)
		return false;
	switch (a->kind) {
	case CT_LIST:
	case CT_OPTIONAL:
		return elem_accepts(a->p[0], b->p[0]);
	case CT_MAP:
		return elem_accepts(a->p[0], b->p[0]) && elem_accepts(a->p[1], b->p[1]);
	case CT_OBJECT:
		return !strcmp(a->name, b->name);
	default:
		return true;
	}
}

/* Joins the type of one more element (key or value) of an aggregate literal
 * into the type of those before it. With homogeneous literals (cel-go's
 * HomogeneousAggregateLiterals, on in the Kubernetes environments) an
 * element whose type the earlier ones do not accept is an error at that
 * element, worded as cel-go's checker does; dyn(...) is accepted by
 * anything. Otherwise differing types join to dyn. */
static const struct cel_ctype *join_elem(struct checker *c, const struct cel_node *e,
					 const struct cel_ctype *prev, const struct cel_ctype *t)
{
	if (c->typed && c->env->homogeneous && prev && !elem_accepts(prev, t)) {
		cerr(c, e->pos, "expected type '%s' but found '%s'", type_str(c, prev),
		     type_str(c, t));
		return &cel_t_error;
	}
	return join(c, prev, t);
}

static const struct cel_ctype *check_list(struct checker *c, struct cel_node *n)
{
	const struct cel_ctype *elem = NULL;

	for (uint32_t i = 0; i < n->u.list.n; i++) {
		const struct cel_ctype *t = check(c, n->u.list.elems[i]);

		if (n->u.list.optional[i]) {
			if (t->kind == CT_OPTIONAL)
				t = t->p[0];
			else if (!is_dynish(t) && c->typed) {
				cerr(c, n->u.list.elems[i]->pos,
				     "expected type 'optional_type(%s)' but found '%s'",
				     type_str(c, t), type_str(c, t));
				return &cel_t_error;
			}
		}
		elem = join_elem(c, n->u.list.elems[i], elem, t);
		if (c->failed)
			return &cel_t_error;
	}
	return mk(c, CT_LIST, elem ? elem : &free_type, NULL);
}

static const struct cel_ctype *check_map(struct checker *c, struct cel_node *n)
{
	const struct cel_ctype *kt = NULL, *vt = NULL;

	for (uint32_t i = 0; i < n->u.map.n; i++) {
		const struct cel_ctype *k = check(c, n->u.map.keys[i]);
		const struct cel_ctype *v = check(c, n->u.map.vals[i]);

		if (c->typed && !is_dynish(k) && k->kind != CT_INT && k->kind != CT_UINT &&
		    k->kind != CT_BOOL && k->kind != CT_STRING && k->kind != CT_PARAM) {
			cerr(c, n->u.map.keys[i]->pos, "unsupported map key type: %s",
			     type_str(c, k));
			return &cel_t_error;
		}
		if (n->u.map.optional[i] && v->kind == CT_OPTIONAL)
			v = v->p[0];
		kt = join_elem(c, n->u.map.keys[i], kt, k);
		vt = join_elem(c, n->u.map.vals[i], vt, v);
		if (c->failed)
			return &cel_t_error;
	}
	return mk(c, CT_MAP, kt ? kt : &free_type, vt ? vt : &free_type);
}

static bool push_var(struct checker *c, const char *name, int slot, const struct cel_ctype *t)
{
	if (c->n_scope == MAX_SCOPE) {
		cerr(c, 0, "comprehensions nested too deeply");
		return false;
	}
	c->scope[c->n_scope].name = name;
	c->scope[c->n_scope].slot = slot;
	c->scope[c->n_scope].type = t;
	c->n_scope++;
	return true;
}

static const struct cel_ctype *check_comp(struct checker *c, struct cel_node *n)
{
	const struct cel_ctype *rt, *it = &cel_t_dyn, *it2 = &cel_t_dyn, *accu, *step;
	int base = c->depth * 3, saved = c->n_scope;

	if (base + 3 > c->max_slots)
		c->max_slots = base + 3;
	n->u.comp.iter_slot = base;
	n->u.comp.iter2_slot = base + 1;
	n->u.comp.accu_slot = base + 2;
	rt = check(c, n->u.comp.range);
	if (c->failed)
		return &cel_t_error;
	if (rt->kind == CT_LIST) {
		if (n->u.comp.iter_var2) {
			it = &cel_t_int;
			it2 = rt->p[0];
		} else {
			it = rt->p[0];
		}
	} else if (rt->kind == CT_MAP) {
		it = rt->p[0];
		it2 = rt->p[1];
	} else if (c->typed && !is_dynish(rt) && rt->kind != CT_PARAM) {
		cerr(c, n->u.comp.range->pos, "expression of type '%s' cannot be range of a "
		     "comprehension (must be list, map, or dynamic)", type_str(c, rt));
		return &cel_t_error;
	}
	accu = check(c, n->u.comp.init);
	c->depth++;
	for (int pass = 0; pass < 2 && !c->failed; pass++) {
		c->n_scope = saved;
		if (!push_var(c, n->u.comp.accu_var, base + 2, accu) ||
		    !push_var(c, n->u.comp.iter_var, base, it) ||
		    (n->u.comp.iter_var2 && !push_var(c, n->u.comp.iter_var2, base + 1, it2)))
			break;
		check(c, n->u.comp.cond);
		step = check(c, n->u.comp.step);
		if (!c->typed || type_equal(step, accu) || is_dynish(step))
			break;
		/* An accumulator that starts as [] or {} takes the step's type. */
		accu = step;
	}
	c->n_scope = saved;
	if (push_var(c, n->u.comp.accu_var, base + 2, accu))
		rt = check(c, n->u.comp.result);
	c->n_scope = saved;
	c->depth--;
	return rt;
}

static const struct cel_ctype *check(struct checker *c, struct cel_node *n)
{
	const struct cel_ctype *t = &cel_t_dyn;

	if (c->failed)
		return &cel_t_error;
	switch (n->kind) {
	case N_CONST:
		switch (n->u.lit.kind) {
		case CEL_NULL: t = &cel_t_null; break;
		case CEL_BOOL: t = &cel_t_bool; break;
		case CEL_INT: t = &cel_t_int; break;
		case CEL_UINT: t = &cel_t_uint; break;
		case CEL_DOUBLE: t = &cel_t_double; break;
		case CEL_STRING: t = &cel_t_string; break;
		case CEL_BYTES: t = &cel_t_bytes; break;
		case CEL_TYPE: t = n->type; break;
		default: break;
		}
		break;
	case N_IDENT:
		t = check_ident(c, n);
		break;
	case N_SELECT:
		t = check_select(c, n);
		break;
	case N_CALL:
		t = check_call(c, n);
		break;
	case N_LIST:
		t = check_list(c, n);
		break;
	case N_MAP:
		t = check_map(c, n);
		break;
	case N_STRUCT:
		cerr(c, n->pos, "undeclared reference to '%s' (in container '%s')",
		     n->u.strct.type_name, c->env->container ? c->env->container : "");
		t = &cel_t_error;
		break;
	case N_COMP:
		t = check_comp(c, n);
		break;
	default:
		break;
	}
	if (!c->typed && n->kind != N_CONST)
		t = &cel_t_dyn;
	n->type = t;
	return t;
}

int cel_check(const struct cel_env *env, const char *src, size_t len,
	      struct cel_arena *pool, struct cel_ast *ast, struct dt_err *err)
{
	static struct checker zero;
	struct checker *c = malloc(sizeof(*c));
	const struct cel_ctype *t;
	int rc = 0;

	if (!c)
		return dt_err_set(err, -ENOMEM, "out of memory");
	*c = zero;
	c->env = env;
	c->src = src;
	c->len = len;
	c->pool = pool;
	c->err = err;
	c->typed = env->checking;
	t = check(c, ast->root);
	if (c->failed) {
		rc = err ? err->code : -EINVAL;
		goto out;
	}
	if (env->result_bool && c->typed && t->kind != CT_BOOL && !is_dynish(t)) {
		rc = dt_err_set(err, -EINVAL, "must evaluate to bool or the unknown type, not %s",
				type_str(c, t));
		goto out;
	}
	ast->n_locals = c->max_slots;
out:
	free(c);
	return rc;
}
