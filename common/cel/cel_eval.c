/* cel_eval.c - the CEL evaluator: a tree walk over a checked program with
 * errors as values, commutative && / || that absorb errors, lazy ?:,
 * comprehensions with in-place accumulators, optional selection and
 * indexing, runtime overload dispatch, and the cost meter. Also the
 * evaluation objects of cel_env.h and cel_eval_selector of cel.h. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cel_ast.h"
#include "strbuf.h"

/* cel-go's runtime cost constants (common/cost.go). */
#define COST_IDENT 1
#define COST_LIST_CREATE 10
#define COST_MAP_CREATE 30

/* Initial arena of an evaluation: typical selectors never leave it. */
#define EVAL_STACK_ARENA 4096

static struct cel_value cancelled(struct cel_ctx *ctx)
{
	struct cel_value v = { .kind = CEL_ERROR };

	ctx->cancelled = true;
	v.v.err.msg = "operation cancelled: actual cost limit exceeded";
	v.v.err.code = -ECANCELED;
	return v;
}

#define charge cel_charge

uint64_t cel_value_size(const struct cel_value *v)
{
	switch (v->kind) {
	case CEL_STRING:
	case CEL_BYTES:
		return v->v.str.len;
	case CEL_LIST:
		return v->v.list->len;
	case CEL_MAP:
		return cel_map_size(v->v.map);
	default:
		return 1;
	}
}

static struct cel_value no_such_key(struct cel_ctx *ctx, const struct cel_value *k)
{
	struct strbuf sb = STRBUF_INIT;
	struct cel_value e;

	if (k->kind == CEL_STRING)
		sb_append(&sb, k->v.str.s, k->v.str.len > 200 ? 200 : k->v.str.len);
	else
		cel_value_print(&sb, k);
	e = cel_errorf(ctx, "no such key: %s", sb_error(&sb) ? "?" : sb_str(&sb));
	sb_free(&sb);
	return e;
}

/* ---- dispatch ---- */

/* cel-go's IsAssignableRuntimeType for a list parameter: an empty list fits
 * any element type, a non-empty one is judged by its first element (so
 * dyn([1.0, 2.0]).sum() picks the double overload). */
static bool list_elem_matches(uint8_t want, const struct cel_value *list)
{
	const struct cel_list *l = list->v.list;

	return want == CEL_RT_ANY || l->len == 0 || l->items[0].kind == want;
}

static bool ovl_matches(const struct cel_ovl *o, const struct cel_value *args, size_t n)
{
	if (o->nparams != n)
		return false;
	for (size_t k = 0; k < n; k++) {
		if (o->rt_kind[k] == CEL_RT_ANY)
			continue;
		if (o->rt_kind[k] != args[k].kind)
			return false;
		if (o->rt_kind[k] == CEL_OBJECT && o->rt_obj[k] &&
		    o->rt_obj[k] != args[k].v.obj.type)
			return false;
		if (o->rt_kind[k] == CEL_LIST && !list_elem_matches(o->rt_elem[k], &args[k]))
			return false;
	}
	return true;
}

struct cel_value cel_call_ovl(struct cel_ctx *ctx, const struct cel_ovl *o,
			      const struct cel_value *args, size_t n)
{
	struct cel_value r = o->decl->fn(ctx, args, n);

	if (o->decl->cost) {
		uint64_t sizes[CEL_MAX_PARAMS];

		for (size_t k = 0; k < n; k++)
			sizes[k] = cel_value_size(&args[k]);
		charge(ctx, o->decl->cost(sizes, n, cel_value_size(&r)));
	} else {
		charge(ctx, 1);
	}
	return r;
}

const struct cel_ovl *cel_find_ovl(const struct cel_node *call, const struct cel_value *args,
				   size_t nargs)
{
	bool member = call->u.call.target != NULL;

	for (uint32_t i = 0; i < call->u.call.ncands; i++)
		if (call->u.call.cands[i]->decl->fn && ovl_matches(call->u.call.cands[i], args, nargs))
			return call->u.call.cands[i];
	/* Unchecked programs: any overload of the name may apply. */
	if (call->u.call.group && !call->u.call.ncands) {
		const struct cel_fn_group *g = call->u.call.group;

		for (size_t i = 0; i < g->n; i++) {
			const struct cel_ovl *o = g->ovls[i];

			if (((o->decl->flags & CEL_OV_MEMBER) != 0) == member && o->decl->fn &&
			    ovl_matches(o, args, nargs))
				return o;
		}
	}
	return NULL;
}

struct cel_value cel_dispatch(struct cel_ctx *ctx, const struct cel_node *call,
			      const struct cel_value *args, size_t nargs)
{
	const struct cel_ovl *o = cel_find_ovl(call, args, nargs);

	if (!o)
		return cel_error_no_overload(ctx, call->u.call.fn);
	return cel_call_ovl(ctx, o, args, nargs);
}

/* ---- selection and indexing ---- */

static struct cel_value select_field(struct cel_ctx *ctx, const struct cel_value *o,
				     const char *field, bool test_only, bool optional)
{
	struct cel_value out, key;

	if (o->kind == CEL_MAP) {
		key = cel_string(field, strlen(field));
		if (cel_map_find(ctx, o->v.map, &key, &out)) {
			if (test_only)
				return cel_bool(true);
			return optional ? cel_optional_of(ctx, out) : out;
		}
		if (test_only)
			return cel_bool(false);
		if (optional)
			return cel_optional_none();
		if (o->v.map->ops && o->v.map->ops->missing &&
		    o->v.map->ops->missing(ctx, o->v.map, &key, &out))
			return out;
		return no_such_key(ctx, &key);
	}
	if (o->kind == CEL_OBJECT && o->v.obj.type->field) {
		if (o->v.obj.type->field(ctx, o->v.obj.ptr, field, &out)) {
			if (test_only)
				return cel_bool(true);
			return optional ? cel_optional_of(ctx, out) : out;
		}
		if (test_only)
			return cel_bool(false);
		if (optional)
			return cel_optional_none();
		return cel_errorf(ctx, "no such field: %s", field);
	}
	return cel_errorf(ctx, "type '%s' does not support field selection",
			  cel_value_type_name(o));
}

/* An index usable on a list: int, uint, or a double with an integral value. */
static bool list_index(const struct cel_value *k, int64_t *idx)
{
	switch (k->kind) {
	case CEL_INT:
		*idx = k->v.i;
		return true;
	case CEL_UINT:
		*idx = k->v.u > INT64_MAX ? -1 : (int64_t)k->v.u;
		return true;
	case CEL_DOUBLE:
		if (k->v.d != trunc(k->v.d) || !(fabs(k->v.d) < 9.2e18))
			return false;
		*idx = (int64_t)k->v.d;
		return true;
	default:
		return false;
	}
}

static bool valid_key(const struct cel_value *k)
{
	return k->kind == CEL_INT || k->kind == CEL_UINT || k->kind == CEL_BOOL ||
	       k->kind == CEL_STRING || k->kind == CEL_DOUBLE;
}

static struct cel_value index_value(struct cel_ctx *ctx, const struct cel_value *o,
				    const struct cel_value *k, bool optional)
{
	struct cel_value out;

	if (o->kind == CEL_LIST) {
		int64_t i;

		if (!list_index(k, &i))
			return k->kind == CEL_DOUBLE ?
				cel_errorf(ctx, "unsupported index value: not an integer") :
				cel_error_no_overload(ctx, "_[_]");
		if (i < 0 || (uint64_t)i >= o->v.list->len) {
			if (optional)
				return cel_optional_none();
			return cel_errorf(ctx, "index out of bounds: %lld", (long long)i);
		}
		out = o->v.list->items[i];
		return optional ? cel_optional_of(ctx, out) : out;
	}
	if (o->kind == CEL_MAP) {
		if (!valid_key(k))
			return cel_errorf(ctx, "unsupported key type: %s", cel_value_type_name(k));
		if (cel_map_find(ctx, o->v.map, k, &out))
			return optional ? cel_optional_of(ctx, out) : out;
		if (optional)
			return cel_optional_none();
		if (o->v.map->ops && o->v.map->ops->missing &&
		    o->v.map->ops->missing(ctx, o->v.map, k, &out))
			return out;
		return no_such_key(ctx, k);
	}
	return cel_error_no_overload(ctx, "_[_]");
}

/* ---- accumulators ---- */

static struct cel_value list_append(struct cel_ctx *ctx, const struct cel_value *accu,
				    const struct cel_value *elem)
{
	struct cel_list *l = (struct cel_list *)accu->v.list;
	struct cel_value *items;

	if (accu->kind != CEL_LIST)
		return cel_error_no_overload(ctx, "_+_");
	if (l->cap == 0 || l->len == l->cap) {
		/* Not ours yet (a literal) or full: move to a bigger buffer. */
		size_t cap = l->len < 4 ? 8 : l->len * 2;
		struct cel_list *nl;

		if (l->len >= CEL_MAX_LIST)
			return cel_errorf(ctx, "list size exceeds the limit of %u elements",
					  CEL_MAX_LIST);
		nl = cel_alloc(ctx, sizeof(*nl));
		items = cel_alloc(ctx, cap * sizeof(*items));
		if (!nl || !items)
			return cel_error_oom(ctx);
		if (l->len)
			memcpy(items, l->items, l->len * sizeof(*items));
		nl->len = l->len;
		nl->items = items;
		nl->cap = cap;
		l = nl;
	}
	((struct cel_value *)l->items)[l->len++] = *elem;
	return cel_list_value(l);
}

static struct cel_value map_insert(struct cel_ctx *ctx, const struct cel_value *accu,
				   const struct cel_value *k, const struct cel_value *v)
{
	struct cel_map *m = (struct cel_map *)accu->v.map;
	struct cel_value tmp;

	if (accu->kind != CEL_MAP || m->ops)
		return cel_error_no_overload(ctx, "@map_insert");
	if (!valid_key(k) || k->kind == CEL_DOUBLE)
		return cel_errorf(ctx, "unsupported key type: %s", cel_value_type_name(k));
	if (cel_map_find(ctx, m, k, &tmp)) {
		struct strbuf sb = STRBUF_INIT;

		cel_value_print(&sb, k);
		tmp = cel_errorf(ctx, "insert failed: key %s already exists", sb_str(&sb));
		sb_free(&sb);
		return tmp;
	}
	if (m->cap == 0 || m->len == m->cap) {
		size_t cap = m->len < 4 ? 8 : m->len * 2;
		struct cel_map *nm;
		struct cel_value *keys, *vals;

		if (m->len >= CEL_MAX_LIST)
			return cel_errorf(ctx, "map size exceeds the limit of %u entries",
					  CEL_MAX_LIST);
		nm = cel_alloc(ctx, sizeof(*nm));
		keys = cel_alloc(ctx, cap * sizeof(*keys));
		vals = cel_alloc(ctx, cap * sizeof(*vals));
		if (!nm || !keys || !vals)
			return cel_error_oom(ctx);
		memset(nm, 0, sizeof(*nm));
		if (m->len) {
			memcpy(keys, m->keys, m->len * sizeof(*keys));
			memcpy(vals, m->vals, m->len * sizeof(*vals));
		}
		nm->len = m->len;
		nm->keys = keys;
		nm->vals = vals;
		nm->cap = cap;
		m = nm;
	}
	((struct cel_value *)m->keys)[m->len] = *k;
	((struct cel_value *)m->vals)[m->len] = *v;
	m->len++;
	return cel_map_value(m);
}

/* ---- nodes ---- */

static struct cel_value eval_logic(struct cel_ctx *ctx, const struct cel_node *n, bool is_and)
{
	struct cel_value a = cel_eval_node(ctx, n->u.call.args[0]), b;

	if (ctx->cancelled)
		return cancelled(ctx);
	/* false && x == false, true || x == true, even when x errs. Bools
	 * are rebuilt, not copied (see the constructors in cel_value.h). */
	if (a.kind == CEL_BOOL && a.v.b != is_and)
		return cel_bool(!is_and);
	b = cel_eval_node(ctx, n->u.call.args[1]);
	if (ctx->cancelled)
		return cancelled(ctx);
	if (b.kind == CEL_BOOL && b.v.b != is_and)
		return cel_bool(!is_and);
	if (a.kind == CEL_BOOL && b.kind == CEL_BOOL)
		return cel_bool(is_and);
	if (a.kind == CEL_ERROR)
		return a;
	if (b.kind == CEL_ERROR)
		return b;
	return cel_error_no_overload(ctx, n->u.call.fn);
}

static struct cel_value eval_call(struct cel_ctx *ctx, const struct cel_node *n)
{
	struct cel_value args[CEL_MAX_PARAMS + 1];
	size_t na = 0;

	switch (n->u.call.special) {
	case SP_AND:
		return eval_logic(ctx, n, true);
	case SP_OR:
		return eval_logic(ctx, n, false);
	case SP_COND: {
		struct cel_value c = cel_eval_node(ctx, n->u.call.args[0]);

		if (c.kind == CEL_ERROR)
			return c;
		if (c.kind != CEL_BOOL)
			return cel_error_no_overload(ctx, "_?_:_");
		return cel_eval_node(ctx, n->u.call.args[c.v.b ? 1 : 2]);
	}
	case SP_NOT_STRICTLY_FALSE: {
		struct cel_value c = cel_eval_node(ctx, n->u.call.args[0]);

		charge(ctx, 1);
		return cel_bool(c.kind != CEL_BOOL || c.v.b);
	}
	case SP_OR_VALUE:
	case SP_OPT_OR: {
		struct cel_value t = cel_eval_node(ctx, n->u.call.target);

		if (t.kind == CEL_ERROR)
			return t;
		if (t.kind == CEL_OPTIONAL) {
			charge(ctx, 1);
			if (t.v.opt)
				return n->u.call.special == SP_OR_VALUE ? *t.v.opt : t;
			t = cel_eval_node(ctx, n->u.call.args[0]);
			if (n->u.call.special == SP_OPT_OR && t.kind != CEL_OPTIONAL &&
			    t.kind != CEL_ERROR)
				return cel_error_no_overload(ctx, "or");
			return t;
		}
		args[0] = t;
		args[1] = cel_eval_node(ctx, n->u.call.args[0]);
		if (args[1].kind == CEL_ERROR)
			return args[1];
		return cel_dispatch(ctx, n, args, 2);
	}
	case SP_DYN:
		return cel_eval_node(ctx, n->u.call.args[0]);
	case SP_TYPE: {
		struct cel_value v = cel_eval_node(ctx, n->u.call.args[0]);

		if (v.kind == CEL_ERROR)
			return v;
		charge(ctx, 1);
		return cel_type_named(cel_value_type_name(&v));
	}
	default:
		break;
	}
	if (n->u.call.target) {
		args[na] = cel_eval_node(ctx, n->u.call.target);
		if (args[na].kind == CEL_ERROR)
			return args[na];
		na++;
	}
	if (n->u.call.nargs + na > CEL_MAX_PARAMS)
		return cel_error_no_overload(ctx, n->u.call.fn);
	for (uint32_t i = 0; i < n->u.call.nargs; i++) {
		args[na] = cel_eval_node(ctx, n->u.call.args[i]);
		if (args[na].kind == CEL_ERROR)
			return args[na];
		if (ctx->cancelled)
			return cancelled(ctx);
		na++;
	}
	switch (n->u.call.special) {
	case SP_INDEX:
		charge(ctx, 1);
		if (args[0].kind == CEL_OPTIONAL) {
			/* opt[k]: optional chaining through an index. */
			if (!args[0].v.opt)
				return args[0];
			return index_value(ctx, args[0].v.opt, &args[1], true);
		}
		return index_value(ctx, &args[0], &args[1], false);
	case SP_OPT_INDEX:
	case SP_OPT_SELECT: {
		struct cel_value o = args[0];

		charge(ctx, 1);
		if (o.kind == CEL_OPTIONAL) {
			if (!o.v.opt)
				return o;
			o = *o.v.opt;
		}
		if (n->u.call.special == SP_OPT_SELECT)
			return select_field(ctx, &o, args[1].v.str.s, false, true);
		return index_value(ctx, &o, &args[1], true);
	}
	case SP_APPEND:
		charge(ctx, COST_LIST_CREATE + 1);
		return list_append(ctx, &args[0], &args[1]);
	case SP_MAP_INSERT:
		charge(ctx, COST_MAP_CREATE + 1);
		if (na == 3)
			return map_insert(ctx, &args[0], &args[1], &args[2]);
		if (args[1].kind != CEL_MAP)
			return cel_error_no_overload(ctx, "transformMapEntry");
		for (size_t i = 0; i < cel_map_size(args[1].v.map); i++) {
			struct cel_value k, v;

			cel_map_entry(ctx, args[1].v.map, i, &k, &v);
			args[0] = map_insert(ctx, &args[0], &k, &v);
			if (args[0].kind == CEL_ERROR)
				break;
		}
		return args[0];
	default:
		break;
	}
	return cel_dispatch(ctx, n, args, na);
}

static struct cel_value eval_list(struct cel_ctx *ctx, const struct cel_node *n)
{
	struct cel_value *items, lv;
	struct cel_list *l;
	size_t k = 0;

	charge(ctx, COST_LIST_CREATE);
	lv = cel_list_new(ctx, n->u.list.n, &items);
	if (!items)
		return lv;
	for (uint32_t i = 0; i < n->u.list.n; i++) {
		struct cel_value v = cel_eval_node(ctx, n->u.list.elems[i]);

		if (v.kind == CEL_ERROR)
			return v;
		if (n->u.list.optional[i]) {
			if (v.kind != CEL_OPTIONAL)
				return cel_errorf(ctx, "cannot initialize optional list element "
						  "from non-optional value %s", cel_value_type_name(&v));
			if (!v.v.opt)
				continue;
			v = *v.v.opt;
		}
		items[k++] = v;
	}
	l = (struct cel_list *)lv.v.list;
	l->len = k;
	return lv;
}

static struct cel_value eval_map(struct cel_ctx *ctx, const struct cel_node *n)
{
	struct cel_value *keys, *vals, mv;
	struct cel_map *m;
	size_t k = 0;

	charge(ctx, COST_MAP_CREATE);
	mv = cel_map_new(ctx, n->u.map.n, &keys, &vals);
	if (!keys)
		return mv;
	m = (struct cel_map *)mv.v.map;
	for (uint32_t i = 0; i < n->u.map.n; i++) {
		struct cel_value key = cel_eval_node(ctx, n->u.map.keys[i]);
		struct cel_value v, tmp;

		if (key.kind == CEL_ERROR)
			return key;
		v = cel_eval_node(ctx, n->u.map.vals[i]);
		if (v.kind == CEL_ERROR)
			return v;
		if (!valid_key(&key) || key.kind == CEL_DOUBLE)
			return cel_errorf(ctx, "unsupported key type: %s", cel_value_type_name(&key));
		if (n->u.map.optional[i]) {
			if (v.kind != CEL_OPTIONAL)
				return cel_errorf(ctx, "cannot initialize optional entry '%s' from "
						  "non-optional value", cel_value_type_name(&key));
			if (!v.v.opt)
				continue;
			v = *v.v.opt;
		}
		m->len = k;
		if (cel_map_find(ctx, m, &key, &tmp))
			return cel_errorf(ctx, "Failed with repeated key");
		keys[k] = key;
		vals[k] = v;
		k++;
	}
	m->len = k;
	return mv;
}

static struct cel_value eval_comp(struct cel_ctx *ctx, const struct cel_node *n)
{
	struct cel_value range = cel_eval_node(ctx, n->u.comp.range);
	struct cel_value *loc = ctx->locals;
	size_t count;
	bool two = n->u.comp.iter_var2 != NULL;

	if (range.kind == CEL_ERROR)
		return range;
	if (range.kind == CEL_LIST)
		count = range.v.list->len;
	else if (range.kind == CEL_MAP)
		count = cel_map_size(range.v.map);
	else
		return cel_errorf(ctx, "expression of type '%s' cannot be range of a comprehension",
				  cel_value_type_name(&range));
	loc[n->u.comp.accu_slot] = cel_eval_node(ctx, n->u.comp.init);
	for (size_t i = 0; i < count; i++) {
		struct cel_value c;

		if (ctx->cancelled)
			return cancelled(ctx);
		if (range.kind == CEL_LIST) {
			if (two) {
				loc[n->u.comp.iter_slot] = cel_int((int64_t)i);
				loc[n->u.comp.iter2_slot] = range.v.list->items[i];
			} else {
				loc[n->u.comp.iter_slot] = range.v.list->items[i];
			}
		} else {
			cel_map_entry(ctx, range.v.map, i, &loc[n->u.comp.iter_slot],
				      &loc[n->u.comp.iter2_slot]);
		}
		c = cel_eval_node(ctx, n->u.comp.cond);
		if (c.kind == CEL_ERROR)
			return c;
		if (c.kind == CEL_BOOL && !c.v.b)
			break;
		loc[n->u.comp.accu_slot] = cel_eval_node(ctx, n->u.comp.step);
		/* Errors in the step of all/exists stay in the accumulator
		 * (absorbed by later terms); others end the loop. */
		if (ctx->cancelled)
			return cancelled(ctx);
		if (ctx->oom)
			return cel_error_oom(ctx);
	}
	return cel_eval_node(ctx, n->u.comp.result);
}

struct cel_value cel_eval_node(struct cel_ctx *ctx, const struct cel_node *n)
{
	if (ctx->cancelled)
		return cancelled(ctx);
	switch (n->kind) {
	case N_CONST:
		return n->u.lit;
	case N_IDENT:
		charge(ctx, COST_IDENT);
		if (n->u.ident.scope == SCOPE_LOCAL)
			return ctx->locals[n->u.ident.slot];
		if (n->u.ident.scope == SCOPE_GLOBAL && (size_t)n->u.ident.slot < ctx->n_vars &&
		    ctx->vars[n->u.ident.slot].kind != CEL_KIND_COUNT)
			return ctx->vars[n->u.ident.slot];
		return cel_errorf(ctx, "no such attribute: %s", n->u.ident.name);
	case N_SELECT: {
		struct cel_value o = cel_eval_node(ctx, n->u.sel.operand);

		if (o.kind == CEL_ERROR)
			return o;
		if (!n->u.sel.test_only)
			charge(ctx, COST_IDENT);
		if (o.kind == CEL_OPTIONAL) {
			/* Optional chaining: none stays none, a value is selected
			 * optionally. */
			if (!o.v.opt)
				return n->u.sel.test_only ? cel_bool(false) : o;
			o = *o.v.opt;
			if (n->u.sel.test_only)
				return select_field(ctx, &o, n->u.sel.field, true, false);
			return select_field(ctx, &o, n->u.sel.field, false, true);
		}
		return select_field(ctx, &o, n->u.sel.field, n->u.sel.test_only, false);
	}
	case N_CALL:
		return eval_call(ctx, n);
	case N_LIST:
		return eval_list(ctx, n);
	case N_MAP:
		return eval_map(ctx, n);
	case N_COMP:
		return eval_comp(ctx, n);
	case N_DEVICE_ITEM:
		return cel_eval_device_item(ctx, n);
	case N_DEVICE_CMP:
		return cel_eval_device_cmp(ctx, n);
	case N_STRUCT:
	default:
		return cel_errorf(ctx, "message construction is not supported");
	}
}

/* ---- constant folding ---- */

static bool is_const(const struct cel_node *n)
{
	return n->kind == N_CONST;
}

/* Fold n (children first) when it is a pure call, list or map of constants:
 * semver("9.0.0") is then parsed once per program, not per device, as
 * cel-go's OptOptimize does. Runtime errors are left to the run time. */
static void fold(struct cel_ctx *ctx, struct cel_node *n, int depth)
{
	bool all = true;
	struct cel_value v;

	if (depth > CEL_MAX_DEPTH * 4)
		return;
	cel_match_device_item(n);
	switch (n->kind) {
	case N_SELECT:
		fold(ctx, n->u.sel.operand, depth + 1);
		return;
	case N_COMP:
		fold(ctx, n->u.comp.range, depth + 1);
		fold(ctx, n->u.comp.init, depth + 1);
		fold(ctx, n->u.comp.cond, depth + 1);
		fold(ctx, n->u.comp.step, depth + 1);
		fold(ctx, n->u.comp.result, depth + 1);
		return;
	case N_LIST:
		for (uint32_t i = 0; i < n->u.list.n; i++) {
			fold(ctx, n->u.list.elems[i], depth + 1);
			all = all && is_const(n->u.list.elems[i]) && !n->u.list.optional[i];
		}
		break;
	case N_MAP:
		for (uint32_t i = 0; i < n->u.map.n; i++) {
			fold(ctx, n->u.map.keys[i], depth + 1);
			fold(ctx, n->u.map.vals[i], depth + 1);
			all = all && is_const(n->u.map.keys[i]) && is_const(n->u.map.vals[i]) &&
			      !n->u.map.optional[i];
		}
		break;
	case N_CALL:
		if (n->u.call.target) {
			fold(ctx, n->u.call.target, depth + 1);
			all = is_const(n->u.call.target);
		}
		for (uint32_t i = 0; i < n->u.call.nargs; i++) {
			fold(ctx, n->u.call.args[i], depth + 1);
			all = all && is_const(n->u.call.args[i]);
		}
		/* Accumulator updates must stay calls; the rest is pure. */
		if (n->u.call.special == SP_APPEND || n->u.call.special == SP_MAP_INSERT)
			all = false;
		if (!all) {
			cel_match_device_cmp(ctx->arena, n);
			return;
		}
		break;
	default:
		return;
	}
	if (!all)
		return;
	ctx->cost = 0;
	ctx->cancelled = ctx->oom = false;
	v = cel_eval_node(ctx, n);
	if (v.kind == CEL_ERROR || ctx->cancelled || ctx->oom)
		return;
	n->kind = N_CONST;
	n->u.lit = v;
}

void cel_fold_constants(struct cel_program *p)
{
	struct cel_ctx ctx = { 0 };

	ctx.arena = &p->pool;
	ctx.prog = p;
	ctx.cost_limit = CEL_COST_LIMIT;
	fold(&ctx, p->ast.root, 0);
}

/* ---- evaluations ---- */

struct cel_evaluation {
	struct cel_arena arena;
	uint64_t cost;
	char first[16384];
};

struct cel_evaluation *cel_evaluation_new(void)
{
	struct cel_evaluation *ev = malloc(sizeof(*ev));

	if (!ev)
		return NULL;
	cel_arena_init(&ev->arena, ev->first, sizeof(ev->first), CEL_EVAL_ARENA_LIMIT);
	ev->cost = 0;
	return ev;
}

void cel_evaluation_free(struct cel_evaluation *ev)
{
	if (!ev)
		return;
	cel_arena_release(&ev->arena);
	free(ev);
}

uint64_t cel_evaluation_cost(const struct cel_evaluation *ev)
{
	return ev->cost;
}

static int run(const struct cel_program *p, const struct cel_value *vars, size_t n_vars,
	       struct cel_arena *arena, struct cel_value *out, uint64_t *cost, struct dt_err *err)
{
	struct cel_value stack_locals[48];
	struct cel_value *locals = stack_locals;
	struct cel_ctx ctx = { 0 };
	struct cel_value r;

	ctx.arena = arena;
	ctx.prog = p;
	ctx.vars = vars;
	ctx.n_vars = n_vars;
	ctx.cost_limit = CEL_COST_LIMIT;
	if ((size_t)p->ast.n_locals > CEL_ARRAY_LEN(stack_locals)) {
		locals = cel_arena_alloc(arena, (size_t)p->ast.n_locals * sizeof(*locals));
		if (!locals)
			return dt_err_set(err, -ENOMEM, "out of memory");
	}
	ctx.locals = locals;
	r = cel_eval_node(&ctx, p->ast.root);
	*cost = ctx.cost;
	if (ctx.cancelled) {
		r = cancelled(&ctx);
		*out = r;
		return dt_err_set(err, -ECANCELED, "%s", r.v.err.msg);
	}
	if (r.kind == CEL_BOOL) {
		/* Field by field: a whole-value copy of what the callee just
		 * stored cannot be forwarded (see cel_value.h). */
		out->kind = CEL_BOOL;
		out->v.b = r.v.b;
	} else {
		*out = r;
	}
	if (r.kind == CEL_ERROR)
		return dt_err_set(err, r.v.err.code == -ENOMEM ? -ENOMEM : -EDOM, "%s",
				  r.v.err.msg);
	return 0;
}

int cel_eval(const struct cel_program *p, const struct cel_value *vars, size_t n_vars,
	     struct cel_evaluation *ev, struct cel_value *out, struct dt_err *err)
{
	cel_arena_reset(&ev->arena);
	return run(p, vars, n_vars, &ev->arena, out, &ev->cost, err);
}

int cel_eval_selector(const struct cel_program *p, const struct cel_device *dev,
		      bool *match, struct dt_err *err)
{
	char buf[EVAL_STACK_ARENA] __attribute__((aligned(16)));
	struct cel_arena arena;
	struct cel_value var = cel_device_value(dev), out;
	uint64_t cost;
	int rc;

	cel_arena_init(&arena, buf, sizeof(buf), CEL_EVAL_ARENA_LIMIT);
	rc = run(p, &var, 1, &arena, &out, &cost, err);
	if (rc == 0) {
		if (out.kind == CEL_BOOL)
			*match = out.v.b;
		else
			rc = dt_err_set(err, -EDOM, "CEL result of type %s could not be converted "
					"to bool", cel_value_type_name(&out));
	}
	cel_arena_release(&arena);
	return rc;
}
