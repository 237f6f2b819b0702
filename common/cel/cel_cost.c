/* cel_cost.c - the estimated cost of a checked program, computed from the
 * tree by the rules of cel-go's checker (checker/cost.go) in the
 * Kubernetes DRA environment (dynamic-resource-allocation cel/compile.go).
 *
 * It is cel-go's estimate, not a bound on the runtime meter (cel_eval.c):
 * both count the same units, but the estimate knows a size only where cel-go
 * knows one. Sizes come from where a value comes from: a literal has its
 * exact size, a part of `device` the size compile.go declares for it, a
 * scalar 1, a concatenation, condition, index, comprehension or one of the
 * few library calls cel-go sizes what its operands give; anything else is
 * unbounded (0 to UINT64_MAX), so a comprehension over it saturates at
 * UINT64_MAX and the program is refused as too complex. Only the maximum
 * of cel-go's cost range is kept (that is what the limit is checked
 * against); sizes keep both ends, which some of cel-go's rules read. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cel_ast.h"
#include "utf8.h"

/* cel-go's SizeEstimate. */
struct size {
	uint64_t min, max;
};

static const struct size unbounded = { 0, UINT64_MAX };

/* How compile.go bounds a part of the device (apiserver DeclType
 * MaxElements): strings by length, maps by entries. `fields`: the device
 * object's fields; `any_field`: selecting any name is a lookup of elem (an
 * attribute map, whose values all share one bound). */
struct bound {
	uint64_t max;
	const struct bound *key, *elem;
	const struct field_bound *fields;
	size_t n_fields;
	bool any_field;
};

struct field_bound {
	const char *name;
	const struct bound *b;
};

/* ResourceSliceMaxAttributesAndCapacitiesPerDevice bounds each map. */
#define DEVICE_MAP_MAX 32

static const struct bound b_value = { .max = 64 };      /* DeviceAttributeMaxValueLength */
static const struct bound b_domain = { .max = 63 };     /* DeviceMaxDomainLength */
static const struct bound b_id = { .max = 32 };         /* DeviceMaxIDLength */
static const struct bound b_driver = { .max = 63 };     /* DriverNameMaxLength */
static const struct bound b_flag = { .max = 1 };        /* multiAllocType */
static const struct bound b_quantity = { .max = 0 };    /* QuantityDeclType sets none */
static const struct bound b_attr_ids = {
	.max = DEVICE_MAP_MAX, .key = &b_id, .elem = &b_value, .any_field = true,
};
static const struct bound b_attrs = { .max = DEVICE_MAP_MAX, .key = &b_domain,
				      .elem = &b_attr_ids };
static const struct bound b_cap_ids = { .max = DEVICE_MAP_MAX, .key = &b_id,
					.elem = &b_quantity };
static const struct bound b_caps = { .max = DEVICE_MAP_MAX, .key = &b_domain,
				     .elem = &b_cap_ids };
static const struct field_bound device_fields[] = {
	{ "driver", &b_driver },
	{ "attributes", &b_attrs },
	{ "capacity", &b_caps },
	{ "allowMultipleAllocations", &b_flag },
};
static const struct bound b_device = {
	.fields = device_fields, .n_fields = CEL_ARRAY_LEN(device_fields),
};

/* What the estimate knows of a node's value. */
struct shape {
	uint64_t cost;
	struct size size;
	bool sized;                 /* size is known (cel-go: computeSize non-nil) */
	const struct bound *bound;  /* the part of `device` it is, or NULL */
	/* The sizes of a list's elements or a map's keys and values, where
	 * known (cel-go's entrySizeEstimate); kind CT_LIST or CT_MAP, CT_DYN
	 * when unknown. */
	uint8_t entry;
	struct size key, val;
};

struct coster {
	struct shape *locals;      /* comprehension variables by slot */
	int n_locals;
};

static struct shape estimate(struct coster *c, const struct cel_node *n, int depth);

/* ---- sizes ---- */

static struct size fixed(uint64_t n)
{
	return (struct size){ n, n };
}

static struct size size_add(struct size a, struct size b)
{
	return (struct size){ cel_sat_add(a.min, b.min), cel_sat_add(a.max, b.max) };
}

static struct size size_union(struct size a, struct size b)
{
	return (struct size){ a.min < b.min ? a.min : b.min, a.max > b.max ? a.max : b.max };
}

/* cel-go's sizeOrUnknown. */
static struct size size_of(const struct shape *s)
{
	return s->sized ? s->size : unbounded;
}

static void set_size(struct shape *s, struct size z)
{
	s->size = z;
	s->sized = true;
}

/* Types whose values have size 1 (cel-go's isScalar). */
static bool is_scalar(const struct cel_ctype *t)
{
	switch (t->kind) {
	case CT_BOOL: case CT_INT: case CT_UINT: case CT_DOUBLE:
	case CT_TIMESTAMP: case CT_DURATION:
		return true;
	case CT_OPTIONAL:
		return is_scalar(t->p[0]);
	default:
		return false;
	}
}

/* A size not computed from the expression comes from the device's
 * declaration, then from the type (cel-go's computeSize order). */
static void default_size(struct shape *s, const struct cel_node *n)
{
	if (s->sized)
		return;
	if (s->bound)
		set_size(s, (struct size){ 0, s->bound->max });
	else if (is_scalar(n->type))
		set_size(s, fixed(1));
}

/* The union of two entry estimates; unknown when either is. */
static void entry_union(struct shape *r, const struct shape *a, const struct shape *b)
{
	r->entry = CT_DYN;
	if (a->entry == CT_DYN || b->entry == CT_DYN)
		return;
	r->entry = a->entry;
	r->key = size_union(a->key, b->key);
	r->val = size_union(a->val, b->val);
}

/* ---- the device's declaration ---- */

static const struct bound *field_of(const struct bound *b, const char *name)
{
	if (!b)
		return NULL;
	for (size_t i = 0; i < b->n_fields; i++)
		if (!strcmp(b->fields[i].name, name))
			return b->fields[i].b;
	return b->any_field ? b->elem : NULL;
}

static bool is_device(const struct cel_node *n)
{
	return n->u.ident.scope == SCOPE_GLOBAL && n->type->kind == CT_OBJECT &&
	       n->type->obj == &cel_device_type;
}

/* ---- leaves and literals ---- */

static struct shape est_const(const struct cel_node *n)
{
	struct shape s = { .entry = CT_DYN };
	const struct cel_value *v = &n->u.lit;

	if (v->kind == CEL_STRING)     /* cel-go counts code points */
		set_size(&s, fixed(utf8_count(v->v.str.s, v->v.str.len)));
	else if (v->kind == CEL_BYTES)
		set_size(&s, fixed(v->v.str.len));
	else if (v->kind <= CEL_DOUBLE || v->kind == CEL_TIMESTAMP || v->kind == CEL_DURATION)
		set_size(&s, fixed(1));
	default_size(&s, n);
	return s;
}

/* A comprehension variable's size is the last resort, after the device's
 * declaration and the type. */
static struct shape est_ident(struct coster *c, const struct cel_node *n)
{
	struct shape s = { .cost = 1, .entry = CT_DYN };
	int slot = n->u.ident.slot;

	if (n->u.ident.scope == SCOPE_LOCAL && slot >= 0 && slot < c->n_locals) {
		const struct shape *v = &c->locals[slot];

		s.bound = v->bound;
		s.entry = v->entry;
		s.key = v->key;
		s.val = v->val;
		default_size(&s, n);
		if (!s.sized && v->sized)
			set_size(&s, v->size);
		return s;
	}
	if (is_device(n))
		s.bound = &b_device;
	default_size(&s, n);
	return s;
}

/* A field costs 1 on a map or object (or a type parameter); on dyn the
 * estimate, like cel-go's, adds nothing. has() costs nothing itself, as in
 * Kubernetes (PresenceTestHasCost(false)). */
static struct shape est_select(struct coster *c, const struct cel_node *n, int depth)
{
	struct shape o = estimate(c, n->u.sel.operand, depth + 1);
	struct shape s = { .cost = o.cost, .entry = CT_DYN };
	uint8_t k = n->u.sel.operand->type->kind;

	if (!n->u.sel.test_only) {
		if (k == CT_MAP || k == CT_OBJECT || k == CT_PARAM)
			s.cost = cel_sat_add(s.cost, 1);
		s.bound = field_of(o.bound, n->u.sel.field);
	}
	default_size(&s, n);
	return s;
}

/* One element (or key, or value) of an aggregate literal joins the sizes
 * of those before it. */
static struct size join_elem(struct size acc, uint32_t i, const struct shape *e)
{
	return i ? size_union(acc, size_of(e)) : size_of(e);
}

static struct shape est_list(struct coster *c, const struct cel_node *n, int depth)
{
	struct shape s = { .cost = 10, .entry = CT_LIST, .key = fixed(1), .val = fixed(0) };

	for (uint32_t i = 0; i < n->u.list.n; i++) {
		struct shape e = estimate(c, n->u.list.elems[i], depth + 1);

		s.cost = cel_sat_add(s.cost, e.cost);
		s.val = join_elem(s.val, i, &e);
	}
	set_size(&s, fixed(n->u.list.n));
	return s;
}

static struct shape est_map(struct coster *c, const struct cel_node *n, int depth)
{
	struct shape s = { .cost = 30, .entry = CT_MAP, .key = fixed(0), .val = fixed(0) };

	for (uint32_t i = 0; i < n->u.map.n; i++) {
		struct shape k = estimate(c, n->u.map.keys[i], depth + 1);
		struct shape v = estimate(c, n->u.map.vals[i], depth + 1);

		s.cost = cel_sat_add(s.cost, cel_sat_add(k.cost, v.cost));
		s.key = join_elem(s.key, i, &k);
		s.val = join_elem(s.val, i, &v);
	}
	set_size(&s, fixed(n->u.map.n));
	return s;
}

static struct shape est_struct(struct coster *c, const struct cel_node *n, int depth)
{
	struct shape s = { .cost = 40, .entry = CT_DYN };

	for (uint32_t i = 0; i < n->u.strct.n; i++)
		s.cost = cel_sat_add(s.cost, estimate(c, n->u.strct.vals[i], depth + 1).cost);
	return s;
}

/* ---- comprehensions ---- */

/* A variable's shape for the body: what the value is known to be. */
static struct shape var_shape(const struct bound *b, struct size z, bool sized)
{
	struct shape v = { .bound = b, .entry = CT_DYN, .sized = sized };

	if (sized)
		v.size = z;
	return v;
}

/* cel-go's pushIterSingle / pushIterKey / pushIterValue: a list's
 * variable is an element (the second variable of a list the index, which
 * nothing bounds), a map's the key (the second the value). */
static void iter_vars(const struct shape *range, uint8_t kind, bool two,
		      struct shape *first, struct shape *second)
{
	bool known = range->entry != CT_DYN;
	const struct bound *b = range->bound;

	if (known)
		kind = range->entry;
	if (kind == CT_LIST && !two) {
		*first = var_shape(b ? b->elem : NULL, range->val, known);
		return;
	}
	*first = var_shape(b && kind != CT_LIST ? b->key : NULL, range->key, known);
	*second = var_shape(b ? b->elem : NULL, range->val, known);
}

static void put_local(struct coster *c, int slot, const struct shape *v, struct shape *saved)
{
	if (slot < 0 || slot >= c->n_locals)
		return;
	*saved = c->locals[slot];
	c->locals[slot] = *v;
}

static void restore_local(struct coster *c, int slot, const struct shape *saved)
{
	if (slot >= 0 && slot < c->n_locals)
		c->locals[slot] = *saved;
}

/* cel.bind(v, init, result) as cel-go recognizes it: an empty range, a
 * false condition and an accumulator of the user's naming. */
static bool is_bind(const struct cel_node *n)
{
	const struct cel_node *r = n->u.comp.range, *cond = n->u.comp.cond;

	return r->kind == N_LIST && r->u.list.n == 0 && cond->kind == N_CONST &&
	       cond->u.lit.kind == CEL_BOOL && !cond->u.lit.v.b &&
	       strcmp(n->u.comp.accu_var, CEL_ACCU_VAR) != 0;
}

/* The accumulator as the body sees it: the initial value's shape. */
static struct shape accu_shape(const struct shape *init)
{
	struct shape a = *init;

	a.cost = 0;
	return a;
}

/* Binds are lazy; the empty range's cost stays, and the result is the
 * bind's value. */
static struct shape est_bind(struct coster *c, const struct cel_node *n, int depth)
{
	struct shape range = estimate(c, n->u.comp.range, depth + 1);
	struct shape init = estimate(c, n->u.comp.init, depth + 1);
	struct shape accu = accu_shape(&init), saved, res, s;

	put_local(c, n->u.comp.accu_slot, &accu, &saved);
	res = estimate(c, n->u.comp.result, depth + 1);
	restore_local(c, n->u.comp.accu_slot, &saved);
	s = res;
	s.bound = NULL;
	s.cost = cel_sat_add(cel_sat_add(range.cost, init.cost), res.cost);
	return s;
}

/* The loop's condition and step cost, with the variables bound. */
static uint64_t body_cost(struct coster *c, const struct cel_node *n, const struct shape *range,
			  int depth, struct shape *step)
{
	struct shape first, second = { .entry = CT_DYN }, s1, s2;
	bool two = n->u.comp.iter_var2 != NULL;
	uint64_t cond;

	iter_vars(range, n->u.comp.range->type->kind, two, &first, &second);
	put_local(c, n->u.comp.iter_slot, &first, &s1);
	if (two)
		put_local(c, n->u.comp.iter2_slot, &second, &s2);
	cond = estimate(c, n->u.comp.cond, depth + 1).cost;
	*step = estimate(c, n->u.comp.step, depth + 1);
	if (two)
		restore_local(c, n->u.comp.iter2_slot, &s2);
	restore_local(c, n->u.comp.iter_slot, &s1);
	return cel_sat_add(cond, step->cost);
}

/* range + init + result + iterations x (condition + step). The result of
 * all/exists (a literal initial value) has that literal's size; that of
 * map/filter/transform* (a [] or {} start) at most one entry per iteration,
 * with the step's entry sizes. */
static struct shape est_comp(struct coster *c, const struct cel_node *n, int depth)
{
	struct shape range = estimate(c, n->u.comp.range, depth + 1);
	struct shape init = estimate(c, n->u.comp.init, depth + 1);
	struct shape accu = accu_shape(&init), saved, step, res, s = { .entry = CT_DYN };
	struct size count = size_of(&range);
	uint8_t ik = n->u.comp.init->kind;
	uint64_t iter;

	put_local(c, n->u.comp.accu_slot, &accu, &saved);
	iter = body_cost(c, n, &range, depth, &step);
	res = estimate(c, n->u.comp.result, depth + 1);
	restore_local(c, n->u.comp.accu_slot, &saved);
	s.cost = cel_sat_add(cel_sat_add(range.cost, init.cost),
			      cel_sat_add(res.cost, cel_sat_mul(count.max, iter)));
	if (ik == N_CONST && init.sized) {
		set_size(&s, init.size);
	} else if (ik == N_LIST || ik == N_MAP) {
		set_size(&s, count);
		if (step.entry != CT_DYN) {
			s.entry = step.entry;
			s.key = step.key;
			s.val = step.val;
		}
	}
	default_size(&s, n);
	return s;
}

/* ---- calls ---- */

/* cel-go's result sizes of the calls it sizes (checker/cost.go) and of the
 * Kubernetes library's (apiserver cel/library/cost.go). a[0] is the target
 * of a member call. false: this overload gives no size. */
static bool concat_size(const char *id, const struct shape *a, size_t na, struct size *out)
{
	if (na != 2 || (strcmp(id, "add_string") && strcmp(id, "add_bytes") &&
			strcmp(id, "add_list")))
		return false;
	*out = size_add(size_of(&a[0]), size_of(&a[1]));
	return true;
}

static bool conversion_size(const char *id, const struct shape *a, size_t na,
			    struct size *out)
{
	struct size z;

	if (na != 1)
		return false;
	z = size_of(&a[0]);
	if (!strcmp(id, "string_to_bytes"))          /* up to 4 bytes a code point */
		*out = (struct size){ z.min, cel_sat_mul(z.max, 4) };
	else if (!strcmp(id, "bytes_to_string"))
		*out = (struct size){ z.min / 4, z.max };
	else if (!strcmp(id, "strings_quote"))       /* every code point escaped */
		*out = (struct size){ cel_sat_add(z.min, 2),
				      cel_sat_add(cel_sat_mul(z.max, 2), 2) };
	else
		return false;
	return true;
}

/* replace(old, new): the longest result replaces the shortest `old` with
 * the longest `new` as often as it fits (an empty `old` surrounds every
 * code point). Only the maximum is kept. */
static struct size replace_size(const struct shape *a)
{
	struct size s = size_of(&a[0]), old = size_of(&a[1]), with = size_of(&a[2]);
	uint64_t count, kept = 0;

	if (old.min == 0) {
		count = cel_sat_add(s.max, 1);
		kept = s.max;
	} else if (with.max <= old.min) {
		count = 0;
		kept = s.max;
	} else {
		count = s.max / old.min + (s.max % old.min != 0);
	}
	return (struct size){ 0, cel_sat_add(cel_sat_mul(count, with.max), kept) };
}

/* The value of argument i when it is a non-negative int literal, else dflt
 * (cel-go's nodeAsUintValue). */
static uint64_t literal_uint(const struct cel_node *n, uint32_t i, uint64_t dflt)
{
	const struct cel_node *a = i < n->u.call.nargs ? n->u.call.args[i] : NULL;

	if (!a || a->kind != N_CONST)
		return dflt;
	if (a->u.lit.kind == CEL_INT && a->u.lit.v.i >= 0)
		return (uint64_t)a->u.lit.v.i;
	if (a->u.lit.kind == CEL_UINT)
		return a->u.lit.v.u;
	return dflt;
}

/* split's result has at most as many parts as the string has code points,
 * or as a literal limit says. */
static struct size split_size(const struct cel_node *n, const struct shape *a, size_t na)
{
	uint64_t max = size_of(&a[0]).max;

	return (struct size){ 0, na > 2 ? literal_uint(n, 1, max) : max };
}

/* join: the elements and a separator between each two. Kubernetes sizes
 * the elements only from a declared list type, and the DRA environment
 * declares none, so only an empty list has a known result. */
static struct size join_size(const struct shape *a, size_t na)
{
	struct size list = size_of(&a[0]);
	uint64_t total = cel_sat_mul(list.max, UINT64_MAX);

	if (na > 1 && list.max > 0)
		total = cel_sat_add(total, cel_sat_mul(size_of(&a[1]).max, list.max - 1));
	return (struct size){ 0, total };
}

/* The list library's results, as its cost support (ext.Lists version 3,
 * the DRA environment's) sizes them: lists.range(N) holds N (a literal;
 * otherwise unbounded), slice(i, j) j - i, the rest their target's size. */
static bool lists_size(const struct cel_node *n, const struct shape *a, size_t na,
		       struct size *out)
{
	const char *fn = n->u.call.fn;
	uint64_t from, to;

	if (!n->u.call.target) {
		if (strcmp(fn, "lists.range"))
			return false;
		from = literal_uint(n, 0, UINT64_MAX);
		*out = from == UINT64_MAX ? unbounded : fixed(from);
		return true;
	}
	if (!strcmp(fn, "slice") && na == 3) {
		from = literal_uint(n, 0, 0);
		to = literal_uint(n, 1, size_of(&a[0]).max);
		*out = fixed(to > from ? to - from : 0);
	} else if (!strcmp(fn, "reverse") || !strcmp(fn, "distinct") || !strcmp(fn, "sort") ||
		   !strcmp(fn, "flatten") || !strcmp(fn, "@sortByAssociatedKeys")) {
		*out = size_of(&a[0]);
	} else {
		return false;
	}
	return true;
}

static bool library_size(const struct cel_node *n, const struct shape *a, size_t na,
			 struct size *out)
{
	const char *fn = n->u.call.fn;

	if (lists_size(n, a, na, out))
		return true;
	if (!n->u.call.target)
		return false;
	if (!strcmp(fn, "lowerAscii") || !strcmp(fn, "upperAscii") ||
	    !strcmp(fn, "substring") || !strcmp(fn, "trim"))
		*out = size_of(&a[0]);
	else if (!strcmp(fn, "replace") && na >= 3)
		*out = replace_size(a);
	else if (!strcmp(fn, "split"))
		*out = split_size(n, a, na);
	else if (!strcmp(fn, "join"))
		*out = join_size(a, na);
	else if ((!strcmp(fn, "find") || !strcmp(fn, "findAll")) && na >= 2)
		*out = (struct size){ 0, size_of(&a[0]).max };
	else
		return false;
	return true;
}

static bool result_size(const struct cel_node *n, const char *id, const struct shape *a,
			size_t na, struct size *out)
{
	return concat_size(id, a, na, out) || conversion_size(id, a, na, out) ||
	       library_size(n, a, na, out);
}

/* Kubernetes' estimator prices `==` between two values of one of its
 * fixed-size library types at 1 (library.CostEstimator: Quantity, Semver,
 * IP, CIDR), where cel-go would traverse values of unknown size. */
static bool k8s_fixed_equality(const struct cel_node *n)
{
	static const char *const fixed[] = { "kubernetes.Quantity", "kubernetes.Semver",
					     "net.IP", "net.CIDR" };
	const struct cel_ctype *l, *r;

	if (strcmp(n->u.call.fn, "_==_") || n->u.call.nargs != 2)
		return false;
	l = n->u.call.args[0]->type;
	r = n->u.call.args[1]->type;
	if (!l || !r || l->kind != CT_OBJECT || r->kind != CT_OBJECT || l->obj != r->obj || !l->obj)
		return false;
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		if (!strcmp(l->obj->name, fixed[i]))
			return true;
	return false;
}

/* The candidates' cost (the largest) and result size (the union of those
 * that give one), as cel-go's costCall takes them; a call nothing was
 * resolved for (unchecked) costs 1. */
static struct shape est_overloads(const struct cel_node *n, const struct shape *a, size_t na)
{
	struct shape r = { .cost = n->u.call.ncands ? 0 : 1, .entry = CT_DYN };
	uint64_t sizes[CEL_MAX_PARAMS + 1];

	if (k8s_fixed_equality(n)) {
		r.cost = 1;
		return r;
	}

	for (size_t i = 0; i < na; i++)
		sizes[i] = size_of(&a[i]).max;
	for (uint32_t i = 0; i < n->u.call.ncands; i++) {
		const struct cel_overload *d = n->u.call.cands[i]->decl;
		struct size z;
		bool sized = result_size(n, d->id, a, na, &z);
		uint64_t cost = 1;

		if (sized)
			set_size(&r, r.sized ? size_union(r.size, z) : z);
		if (d->cost && na <= CEL_MAX_PARAMS)
			cost = d->cost(sizes, na, sized ? z.max : UINT64_MAX);
		if (cost > r.cost)
			r.cost = cost;
	}
	if (!strcmp(n->u.call.fn, "_+_") && na == 2)
		entry_union(&r, &a[0], &a[1]);      /* a concatenation's elements */
	return r;
}

/* c ? t : f costs the condition and the dearer branch, and is either. */
static struct shape est_cond(const struct shape *a)
{
	struct shape r = { .entry = CT_DYN };

	r.cost = cel_sat_add(a[0].cost, a[1].cost > a[2].cost ? a[1].cost : a[2].cost);
	set_size(&r, size_union(size_of(&a[1]), size_of(&a[2])));
	entry_union(&r, &a[1], &a[2]);
	return r;
}

/* container[key]: an element of a known list or map literal, or the
 * declared element of a part of the device. */
static struct shape est_index(const struct shape *a)
{
	struct shape r = { .cost = 1, .entry = CT_DYN };

	if (a[0].entry != CT_DYN)
		set_size(&r, a[0].val);
	r.bound = a[0].bound ? a[0].bound->elem : NULL;
	return r;
}

/* The accumulator updates of map/filter/transform*: @append costs what
 * cel-go's `@result + [x]` does beyond its operands (a list literal and
 * add_list), @map_insert what our runtime charges (a map literal and the
 * insert); both add an entry of the new element's size. */
static struct shape est_accumulate(const struct cel_node *n, const struct shape *a, size_t na)
{
	struct shape r = { .entry = CT_DYN }, one = { .entry = CT_LIST, .key = fixed(1) };

	if (n->u.call.special == SP_APPEND) {
		r.cost = 11;
		one.val = size_of(&a[1]);
		set_size(&r, size_add(size_of(&a[0]), fixed(1)));
	} else {
		r.cost = 31;
		one = na == 3 ? (struct shape){ .entry = CT_MAP, .key = size_of(&a[1]),
						.val = size_of(&a[2]) } : a[1];
	}
	entry_union(&r, &a[0], &one);
	return r;
}

static struct shape est_call(struct coster *c, const struct cel_node *n, int depth)
{
	struct shape a[CEL_MAX_PARAMS + 1], r;
	uint64_t args = 0;
	size_t na = 0;

	if (n->u.call.target)
		a[na++] = estimate(c, n->u.call.target, depth + 1);
	for (uint32_t i = 0; i < n->u.call.nargs; i++) {
		struct shape e = estimate(c, n->u.call.args[i], depth + 1);

		if (na < CEL_ARRAY_LEN(a))
			a[na++] = e;
		else
			args = cel_sat_add(args, e.cost);
	}
	for (size_t i = 0; i < na; i++)
		args = cel_sat_add(args, a[i].cost);
	switch (n->u.call.special) {
	case SP_DYN:                 /* 1, and the operand's sizes */
		r = a[0];
		r.bound = NULL;
		r.cost = 1;
		break;
	case SP_AND:
	case SP_OR:
		r = (struct shape){ .entry = CT_DYN };
		break;
	case SP_COND:                /* its own sum of the operands */
		r = est_cond(a);
		default_size(&r, n);
		return r;
	case SP_INDEX:
		r = est_index(a);
		break;
	case SP_APPEND:
	case SP_MAP_INSERT:
		r = est_accumulate(n, a, na);
		break;
	default:
		r = est_overloads(n, a, na);
		break;
	}
	r.cost = cel_sat_add(r.cost, args);
	default_size(&r, n);
	return r;
}

static struct shape estimate(struct coster *c, const struct cel_node *n, int depth)
{
	if (depth > CEL_MAX_DEPTH * 4)
		return (struct shape){ .cost = UINT64_MAX, .entry = CT_DYN };
	switch (n->kind) {
	case N_CONST:
		return est_const(n);
	case N_IDENT:
		return est_ident(c, n);
	case N_SELECT:
		return est_select(c, n, depth);
	case N_LIST:
		return est_list(c, n, depth);
	case N_MAP:
		return est_map(c, n, depth);
	case N_STRUCT:
		return est_struct(c, n, depth);
	case N_COMP:
		return is_bind(n) ? est_bind(c, n, depth) : est_comp(c, n, depth);
	case N_CALL:
		return est_call(c, n, depth);
	default:
		return (struct shape){ .cost = 1, .entry = CT_DYN };
	}
}

/* UINT64_MAX (refused as too complex) when the variables' table cannot be
 * allocated. */
uint64_t cel_estimate_cost(const struct cel_program *p)
{
	struct coster c = { .n_locals = p->ast.n_locals };
	uint64_t cost;

	if (c.n_locals > 0) {
		c.locals = calloc((size_t)c.n_locals, sizeof(*c.locals));
		if (!c.locals)
			return UINT64_MAX;
	}
	cost = estimate(&c, p->ast.root, 0).cost;
	free(c.locals);
	return cost;
}
