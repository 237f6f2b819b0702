/* cel_device_eval.c - the DRA selector shapes resolved at compile time.
 *
 * Selectors read the device through a few shapes, and the generic tree
 * walk pays for each step of them (two map views, a dispatch over a dozen
 * candidate overloads, a value copied through every level). After
 * checking and constant folding, two rewrites replace them:
 *
 *   device.attributes[D].I, device.attributes[D][I], device.capacity[D][I]
 *     with constant D and I -> N_DEVICE_ITEM: a direct read of the device
 *     view, starting where the last device had the attribute (devices
 *     built alike have it at the same index);
 *   ITEM op K and ITEM.compareTo(K) op K2 (either side constant; op one of
 *     == != < <= > >=; K, K2 folded constants such as semver("9.0.0") or
 *     quantity("100Gi")) -> N_DEVICE_CMP: the comparison done in place.
 *
 * Both give the generic tree's results, errors and cost: the fused
 * comparison handles only the kinds whose outcome it knows (numbers,
 * strings, bools, and the object its compareTo overload takes) and
 * evaluates the original tree, kept beside it, for anything else (a
 * missing attribute, another type), before charging anything. */
#include <string.h>

#include "cel_ast.h"
#include "cel_lib.h"

/* ---- device items ---- */

/* Is the entry with names (domain, id) the item n? By pointer when the
 * device's names and the node's are cel_intern's (canonical: equal
 * pointers are equal names and unequal ones unequal), else by text. */
static bool names_are(const struct cel_node *n, bool interned, const char *domain,
		      const char *id)
{
	if (interned && n->u.dev.iid)
		return id == n->u.dev.iid && domain == n->u.dev.idomain;
	return id[0] == n->u.dev.id[0] && !strcmp(id, n->u.dev.id) &&
	       !strcmp(domain, n->u.dev.domain);
}



/* The device the item reads, or NULL when the variable is not one. */
static const struct cel_device *item_device(const struct cel_ctx *ctx, const struct cel_node *n)
{
	const struct cel_value *dv;

	if ((size_t)n->u.dev.slot >= ctx->n_vars)
		return NULL;
	dv = &ctx->vars[n->u.dev.slot];
	if (dv->kind != CEL_OBJECT || dv->v.obj.type != &cel_device_type)
		return NULL;
	return dv->v.obj.ptr;
}

/* The item's attribute (or, for capacity, *cap) without charging; NULL
 * when the device lacks it. Found entries are pointed to, not copied into
 * a value: a value built and copied at once costs a store-forwarding
 * stall per copy, which is most of a selector's time. */
static const struct cel_device_attr *item_find(const struct cel_node *n,
					       const struct cel_device *d,
					       const struct cel_device_capacity **cap)
{
	uint32_t *hint = (uint32_t *)&n->u.dev.hint;    /* see cel_ast.h */
	uint32_t h = __atomic_load_n(hint, __ATOMIC_RELAXED);
	bool in = d->interned;

	*cap = NULL;
	if (n->u.dev.capacity) {
		const struct cel_device_capacity *c = d->capacity;

		if (h < d->n_capacity && names_are(n, in, c[h].domain, c[h].id)) {
			*cap = &c[h];
			return NULL;
		}
		for (size_t i = 0; i < d->n_capacity; i++)
			if (names_are(n, in, c[i].domain, c[i].id)) {
				__atomic_store_n(hint, (uint32_t)i, __ATOMIC_RELAXED);
				*cap = &c[i];
				break;
			}
		return NULL;
	}
	if (h < d->n_attrs && names_are(n, in, d->attrs[h].domain, d->attrs[h].id))
		return &d->attrs[h];
	for (size_t i = 0; i < d->n_attrs; i++)
		if (names_are(n, in, d->attrs[i].domain, d->attrs[i].id)) {
			__atomic_store_n(hint, (uint32_t)i, __ATOMIC_RELAXED);
			return &d->attrs[i];
		}
	return NULL;
}

/* What the select/index chain it replaces costs: ident, select, index,
 * select. */
#define ITEM_COST 4

struct cel_value cel_eval_device_item(struct cel_ctx *ctx, const struct cel_node *n)
{
	const struct cel_device_capacity *cap;
	const struct cel_device_attr *a;
	const struct cel_device *d;

	cel_charge(ctx, ITEM_COST);
	d = item_device(ctx, n);
	if (!d)
		return (size_t)n->u.dev.slot >= ctx->n_vars ?
		       cel_errorf(ctx, "no such attribute: device") :
		       cel_error_no_overload(ctx, "_[_]");
	a = item_find(n, d, &cap);
	if (a)
		return cel_device_attr_value(a);
	if (cap)
		return cel_object(&cel_quantity_type, cap->value);
	return cel_errorf(ctx, "no such key: %s", n->u.dev.id);
}

/* A string constant without NUL bytes (device names are C strings). */
static const char *const_cstr(const struct cel_node *n)
{
	if (n->kind != N_CONST || n->u.lit.kind != CEL_STRING ||
	    memchr(n->u.lit.v.str.s, 0, n->u.lit.v.str.len))
		return NULL;
	return n->u.lit.v.str.s;
}

void cel_match_device_item(struct cel_node *n)
{
	const struct cel_node *inner, *sel, *dev;
	const char *id, *domain;

	if (n->kind == N_SELECT && !n->u.sel.test_only && !n->u.sel.optional) {
		inner = n->u.sel.operand;
		id = n->u.sel.field;
	} else if (n->kind == N_CALL && n->u.call.special == SP_INDEX && n->u.call.nargs == 2) {
		inner = n->u.call.args[0];
		id = const_cstr(n->u.call.args[1]);
	} else {
		return;
	}
	if (!id || inner->kind != N_CALL || inner->u.call.special != SP_INDEX ||
	    inner->u.call.nargs != 2 || !(domain = const_cstr(inner->u.call.args[1])))
		return;
	sel = inner->u.call.args[0];
	if (sel->kind != N_SELECT || sel->u.sel.test_only ||
	    (strcmp(sel->u.sel.field, "attributes") && strcmp(sel->u.sel.field, "capacity")))
		return;
	dev = sel->u.sel.operand;
	if (dev->kind != N_IDENT || dev->u.ident.scope != SCOPE_GLOBAL ||
	    dev->type->kind != CT_OBJECT || dev->type->obj != &cel_device_type)
		return;
	n->u.dev.slot = dev->u.ident.slot;
	n->u.dev.capacity = sel->u.sel.field[0] == 'c';
	n->u.dev.domain = domain;
	n->u.dev.id = id;
	n->u.dev.idomain = cel_intern(domain);
	n->u.dev.iid = n->u.dev.idomain ? cel_intern(id) : NULL;
	n->u.dev.hint = 0;
	n->kind = N_DEVICE_ITEM;
}

/* ---- fused comparisons ---- */

static const struct { const char *fn; uint8_t op, mirrored; } cmp_ops[] = {
	{ "_==_", CMP_EQ, CMP_EQ }, { "_!=_", CMP_NE, CMP_NE },
	{ "_<_", CMP_LT, CMP_GT }, { "_<=_", CMP_LE, CMP_GE },
	{ "_>_", CMP_GT, CMP_LT }, { "_>=_", CMP_GE, CMP_LE },
};

static bool fusable_const(const struct cel_value *k)
{
	switch (k->kind) {
	case CEL_INT: case CEL_UINT: case CEL_DOUBLE: case CEL_STRING: case CEL_BOOL:
		return true;
	default:
		return false;
	}
}

/* recv.compareTo(K) with recv a device item and K a folded object. */
static bool is_compare_to(const struct cel_node *n)
{
	return n->kind == N_CALL && n->u.call.special == SP_NONE && n->u.call.target &&
	       n->u.call.target->kind == N_DEVICE_ITEM && n->u.call.nargs == 1 &&
	       n->u.call.args[0]->kind == N_CONST && n->u.call.args[0]->u.lit.kind == CEL_OBJECT &&
	       !strcmp(n->u.call.fn, "compareTo");
}

void cel_match_device_cmp(struct cel_arena *pool, struct cel_node *n)
{
	const struct cel_node *l, *r, *side, *k;
	struct cel_node *generic;
	size_t i;
	bool swapped;

	if (n->kind != N_CALL || n->u.call.special != SP_NONE || n->u.call.target ||
	    n->u.call.nargs != 2)
		return;
	for (i = 0; i < CEL_ARRAY_LEN(cmp_ops); i++)
		if (!strcmp(n->u.call.fn, cmp_ops[i].fn))
			break;
	if (i == CEL_ARRAY_LEN(cmp_ops))
		return;
	l = n->u.call.args[0];
	r = n->u.call.args[1];
	swapped = l->kind == N_CONST;
	side = swapped ? r : l;
	k = swapped ? l : r;
	if (k->kind != N_CONST || !fusable_const(&k->u.lit))
		return;
	if (side->kind != N_DEVICE_ITEM && !(is_compare_to(side) && k->u.lit.kind == CEL_INT))
		return;
	generic = cel_arena_alloc(pool, sizeof(*generic));
	if (!generic)
		return;                 /* the generic tree stays, correct as it is */
	*generic = *n;
	memset(&n->u, 0, sizeof(n->u));
	n->u.dcmp.generic = generic;
	n->u.dcmp.op = swapped ? cmp_ops[i].mirrored : cmp_ops[i].op;
	if (side->kind == N_DEVICE_ITEM) {
		n->u.dcmp.item = side;
		n->u.dcmp.k = k->u.lit;
		if (k->u.lit.kind == CEL_STRING)
			n->u.dcmp.kcost = cel_cost_factor(0.1, k->u.lit.v.str.len);
	} else {
		n->u.dcmp.compare_to = true;
		n->u.dcmp.call = side;
		n->u.dcmp.item = side->u.call.target;
		n->u.dcmp.k = side->u.call.args[0]->u.lit;
		n->u.dcmp.k2 = k->u.lit;
	}
	n->kind = N_DEVICE_CMP;
}

static bool op_result(uint8_t op, int c)
{
	switch (op) {
	case CMP_EQ: return c == 0;
	case CMP_NE: return c != 0;
	case CMP_LT: return c < 0;
	case CMP_LE: return c <= 0;
	case CMP_GT: return c > 0;
	default: return c >= 0;
	}
}

static bool is_number(uint8_t kind)
{
	return kind == CEL_INT || kind == CEL_UINT || kind == CEL_DOUBLE;
}

/* v op k where the standard library's result is known: equality of any
 * two values, ordering of two numbers (a NaN orders false), two strings or
 * two bools. False: leave it to the generic tree (no overload). Sets the
 * call's cost as the standard overloads compute it. */
static bool compare_known(uint8_t op, const struct cel_value *v, const struct cel_value *k,
			  bool *result, uint64_t *cost)
{
	uint64_t sv = cel_value_size(v), sk = cel_value_size(k);
	int c;

	/* equals and the string orderings cost ceil(0.1 x the shorter size);
	 * the other orderings 1 */
	*cost = cel_cost_factor(0.1, sv < sk ? sv : sk);
	if (op == CMP_EQ || op == CMP_NE) {
		*result = cel_value_equal(v, k) == (op == CMP_EQ);
		return true;
	}
	if (v->kind != CEL_STRING)
		*cost = 1;
	if (!(is_number(v->kind) && is_number(k->kind)) && v->kind != k->kind)
		return false;
	if (v->kind != CEL_STRING && v->kind != CEL_BOOL && !is_number(v->kind))
		return false;
	if (!cel_value_compare(v, k, &c)) {
		if (v->kind != CEL_DOUBLE && k->kind != CEL_DOUBLE)
			return false;
		*result = false;        /* NaN */
		return true;
	}
	*result = op_result(op, c);
	return true;
}

/* The common pairs, read straight from the attribute: an int, string or
 * bool attribute against a constant of its type. False: not one of them. */
static bool compare_scalar(const struct cel_node *n, const struct cel_device_attr *a,
			   bool *result, uint64_t *cost)
{
	const struct cel_value *k = &n->u.dcmp.k;
	uint8_t op = n->u.dcmp.op;
	int c;

	if (a->kind == CEL_ATTR_INT && k->kind == CEL_INT) {
		c = (a->v.i > k->v.i) - (a->v.i < k->v.i);
		*cost = 1;
	} else if (a->kind == CEL_ATTR_STRING && k->kind == CEL_STRING) {
		size_t la = a->v.str.len, lk = k->v.str.len;

		*cost = la < lk ? cel_cost_factor(0.1, la) : n->u.dcmp.kcost;
		if (op == CMP_EQ || op == CMP_NE) {
			*result = (la == lk && !memcmp(a->v.str.s, k->v.str.s, la)) == (op == CMP_EQ);
			return true;
		}
		c = memcmp(a->v.str.s, k->v.str.s, la < lk ? la : lk);
		if (c == 0)
			c = (la > lk) - (la < lk);
	} else if (a->kind == CEL_ATTR_BOOL && k->kind == CEL_BOOL) {
		c = (int)a->v.b - (int)k->v.b;
		*cost = 1;
	} else {
		return false;
	}
	*result = op_result(op, c);
	return true;
}

/* ITEM.compareTo(K): the overload the call would dispatch to, called
 * directly; false when none applies or it does not give an int. */
static bool compare_to(struct cel_ctx *ctx, const struct cel_node *n,
		       const struct cel_device_attr *a, const struct cel_device_capacity *cap,
		       int64_t *c, uint64_t *cost)
{
	struct cel_value args[2], r;
	const struct cel_ovl *o;
	uint64_t sizes[2] = { 1, 1 };

	if (cap) {
		args[0].v.obj.type = &cel_quantity_type;
		args[0].v.obj.ptr = cap->value;
	} else if (a->kind == CEL_ATTR_VERSION) {
		args[0].v.obj.type = &cel_semver_type;
		args[0].v.obj.ptr = a->v.version;
	} else {
		return false;
	}
	args[0].kind = CEL_OBJECT;
	args[1] = n->u.dcmp.k;
	o = cel_find_ovl(n->u.dcmp.call, args, 2);
	if (!o)
		return false;
	r = o->decl->fn(ctx, args, 2);
	if (r.kind != CEL_INT)
		return false;
	*c = r.v.i;
	*cost = o->decl->cost ? o->decl->cost(sizes, 2, 1) : 1;
	return true;
}

struct cel_value cel_eval_device_cmp(struct cel_ctx *ctx, const struct cel_node *n)
{
	const struct cel_device *d = item_device(ctx, n->u.dcmp.item);
	const struct cel_device_capacity *cap = NULL;
	const struct cel_device_attr *a = d ? item_find(n->u.dcmp.item, d, &cap) : NULL;
	uint64_t cost, cost2 = 0;
	bool result;

	if (!a && !cap)
		return cel_eval_node(ctx, n->u.dcmp.generic);
	if (n->u.dcmp.compare_to) {
		int64_t c, k2 = n->u.dcmp.k2.v.i;

		if (!compare_to(ctx, n, a, cap, &c, &cost2))
			return cel_eval_node(ctx, n->u.dcmp.generic);
		cost = 1;               /* int against int */
		result = op_result(n->u.dcmp.op, (c > k2) - (c < k2));
	} else if (!a || !compare_scalar(n, a, &result, &cost)) {
		struct cel_value v;

		if (a)
			v = cel_device_attr_value(a);
		else
			v = cel_object(&cel_quantity_type, cap->value);
		if (!compare_known(n->u.dcmp.op, &v, &n->u.dcmp.k, &result, &cost))
			return cel_eval_node(ctx, n->u.dcmp.generic);
	}
	if (!cel_charge(ctx, ITEM_COST + cost2 + cost))
		return cel_eval_node(ctx, n->u.dcmp.generic);  /* reports the limit */
	return cel_bool(result);
}
