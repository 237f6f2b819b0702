/* cel_lib_lists.c - list functions: the Kubernetes lists library and cel-go's
 * ext.Lists (version 3).
 *
 * Kubernetes: isSorted, sum, min, max, indexOf, lastIndexOf (includes is
 * the DRA environment's, in cel_env.c). ext.Lists: slice, flatten,
 * flatten(depth), sort, lists.range, reverse, distinct, first, last, and
 * @sortByAssociatedKeys, the function cel-go's sortBy macro expands to (the
 * macro itself belongs to the parser).
 * Ordering and equality are CEL's (cel_value_compare, cel_value_equal), so
 * mixed numeric lists sort on the number line; a list whose elements are
 * not mutually ordered is an error. Results that are runs of the receiver
 * share its items; everything else is built in the evaluation arena.
 * Costs: proportional to the list size (the Kubernetes overrides);
 * sort and distinct charge their extra comparisons as they go. */
#include <string.h>

#include "cel_lib.h"
#include "cel_value.h"

#define FN(name) static struct cel_value name(struct cel_ctx *ctx, const struct cel_value *a, \
					      size_t n)
#define FLATTEN_MAX_DEPTH 64
#define RANGE_MAX 10000000        /* cel-go's maxRangeSize */

static const struct cel_list *recv(const struct cel_value *a)
{
	return a[0].v.list;
}

/* A list that views items [from, from + len) of l, without copying. */
static struct cel_value sublist(struct cel_ctx *ctx, const struct cel_list *l, size_t from,
				size_t len)
{
	struct cel_list *out = cel_alloc(ctx, sizeof(*out));

	if (!out)
		return cel_error_oom(ctx);
	out->len = len;
	out->items = len ? l->items + from : NULL;
	out->cap = 0;
	return cel_list_value(out);
}

/* ---- Kubernetes lists ---- */

/* The kinds cel-go's Comparer covers: the element types Kubernetes declares
 * isSorted, min and max for. */
static bool comparable_kind(enum cel_kind k)
{
	switch (k) {
	case CEL_INT: case CEL_UINT: case CEL_DOUBLE: case CEL_BOOL: case CEL_STRING:
	case CEL_BYTES: case CEL_TIMESTAMP: case CEL_DURATION:
		return true;
	default:
		return false;
	}
}

/* One step of Kubernetes' isSorted/min/max: next must be comparable (else
 * no such overload), and a pair that is not mutually ordered ("a" vs 1, a
 * NaN) compares as "not greater" (*c = 0), because upstream only tests the
 * comparison's result for +1 or -1 and lets an error pass. */
static bool step_compare(const struct cel_value *prev, const struct cel_value *next, int *c)
{
	if (!comparable_kind(next->kind))
		return false;
	if (!cel_value_compare(prev, next, c))
		*c = 0;
	return true;
}

FN(is_sorted)
{
	const struct cel_list *l = recv(a);
	int c;

	(void)n;
	if (l->len && !comparable_kind(l->items[0].kind))
		return cel_error_no_overload(ctx, "isSorted");
	for (size_t i = 1; i < l->len; i++) {
		if (!step_compare(&l->items[i - 1], &l->items[i], &c))
			return cel_error_no_overload(ctx, "isSorted");
		if (c > 0)
			return cel_bool(false);
	}
	return cel_bool(true);
}

FN(sum_int)
{
	const struct cel_list *l = recv(a);
	int64_t acc = 0;

	(void)n;
	for (size_t i = 0; i < l->len; i++) {
		if (l->items[i].kind != CEL_INT)
			return cel_error_no_overload(ctx, "sum");
		if (__builtin_add_overflow(acc, l->items[i].v.i, &acc))
			return cel_errorf(ctx, "integer overflow");
	}
	return cel_int(acc);
}

FN(sum_uint)
{
	const struct cel_list *l = recv(a);
	uint64_t acc = 0;

	(void)n;
	for (size_t i = 0; i < l->len; i++) {
		if (l->items[i].kind != CEL_UINT)
			return cel_error_no_overload(ctx, "sum");
		if (__builtin_add_overflow(acc, l->items[i].v.u, &acc))
			return cel_errorf(ctx, "unsigned integer overflow");
	}
	return cel_uint(acc);
}

FN(sum_double)
{
	const struct cel_list *l = recv(a);
	double acc = 0;

	(void)n;
	for (size_t i = 0; i < l->len; i++) {
		if (l->items[i].kind != CEL_DOUBLE)
			return cel_error_no_overload(ctx, "sum");
		acc += l->items[i].v.d;
	}
	return cel_double(acc);
}

/* Durations are whole nanoseconds in int64 range, as in cel-go. */
FN(sum_duration)
{
	const struct cel_list *l = recv(a);
	int64_t acc = 0, ns;

	(void)n;
	for (size_t i = 0; i < l->len; i++) {
		const struct cel_value *d = &l->items[i];

		if (d->kind != CEL_DURATION)
			return cel_error_no_overload(ctx, "sum");
		if (__builtin_mul_overflow(d->v.t.sec, (int64_t)1000000000, &ns) ||
		    __builtin_add_overflow(ns, (int64_t)d->v.t.nsec, &ns) ||
		    __builtin_add_overflow(acc, ns, &acc))
			return cel_errorf(ctx, "duration out of range");
	}
	return cel_duration(acc / 1000000000, (int32_t)(acc % 1000000000));
}

/* min (prefer = 1: the running result is greater than the next) or max
 * (prefer = -1): the first element that beats all before it. */
static struct cel_value extreme(struct cel_ctx *ctx, const struct cel_value *a, int prefer,
				const char *name)
{
	const struct cel_list *l = recv(a);
	size_t best = 0;
	int c;

	if (l->len == 0)
		return cel_errorf(ctx, "%s called on empty list", name);
	if (!comparable_kind(l->items[0].kind))
		return cel_error_no_overload(ctx, name);
	for (size_t i = 1; i < l->len; i++) {
		if (!step_compare(&l->items[best], &l->items[i], &c))
			return cel_error_no_overload(ctx, name);
		if (c == prefer)
			best = i;
	}
	return l->items[best];
}

FN(list_min)
{
	(void)n;
	return extreme(ctx, a, 1, "min");
}

FN(list_max)
{
	(void)n;
	return extreme(ctx, a, -1, "max");
}

FN(index_of)
{
	const struct cel_list *l = recv(a);

	(void)ctx;
	(void)n;
	for (size_t i = 0; i < l->len; i++)
		if (cel_value_equal(&l->items[i], &a[1]))
			return cel_int((int64_t)i);
	return cel_int(-1);
}

FN(last_index_of)
{
	const struct cel_list *l = recv(a);

	(void)ctx;
	(void)n;
	for (size_t i = l->len; i-- > 0;)
		if (cel_value_equal(&l->items[i], &a[1]))
			return cel_int((int64_t)i);
	return cel_int(-1);
}

/* ---- ext.Lists ---- */

FN(slice)
{
	const struct cel_list *l = recv(a);
	int64_t s = a[1].v.i, e = a[2].v.i;

	(void)n;
	if (s < 0 || e < 0)
		return cel_errorf(ctx, "cannot slice(%lld, %lld), negative indexes not supported",
				  (long long)s, (long long)e);
	if (s > e)
		return cel_errorf(ctx, "cannot slice(%lld, %lld), start index must be less than "
				  "or equal to end index", (long long)s, (long long)e);
	if ((uint64_t)e > l->len)
		return cel_errorf(ctx, "cannot slice(%lld, %lld), list is length %zu",
				  (long long)s, (long long)e, l->len);
	return sublist(ctx, l, (size_t)s, (size_t)(e - s));
}

/* Count (items == NULL) or copy the items of l flattened depth levels. */
static size_t flatten_into(const struct cel_list *l, int64_t depth, struct cel_value *items)
{
	size_t k = 0;

	for (size_t i = 0; i < l->len; i++) {
		const struct cel_value *v = &l->items[i];

		if (v->kind == CEL_LIST && depth > 0) {
			k += flatten_into(v->v.list, depth - 1, items ? items + k : NULL);
		} else {
			if (items)
				items[k] = *v;
			k++;
		}
	}
	return k;
}

FN(flatten)
{
	int64_t depth = n > 1 ? a[1].v.i : 1;
	struct cel_value r, *items;
	size_t count;

	if (depth < 0)
		return cel_errorf(ctx, "level must be non-negative");
	if (depth > FLATTEN_MAX_DEPTH)
		depth = FLATTEN_MAX_DEPTH;      /* deeper nesting cannot be built */
	count = flatten_into(recv(a), depth, NULL);
	cel_cost_add(ctx, count);
	r = cel_list_new(ctx, count, &items);
	if (!items)
		return r;
	flatten_into(recv(a), depth, items);
	return r;
}

/* cel-go sorts only keys of one type: every key must have the first one's
 * kind exactly (1 and 1.0 do not mix), and that kind must be comparable. */
static struct cel_value check_sort_keys(struct cel_ctx *ctx, const struct cel_list *keys)
{
	if (keys->len == 0)
		return cel_bool(true);
	if (!comparable_kind(keys->items[0].kind))
		return cel_errorf(ctx, "list elements must be comparable");
	for (size_t i = 1; i < keys->len; i++)
		if (keys->items[i].kind != keys->items[0].kind)
			return cel_errorf(ctx, "list elements must have the same type");
	return cel_bool(true);
}

/* Stable merge sort of items (n) using tmp (n), by CEL ordering (a NaN
 * is not less than anything). */
static void merge_sort(struct cel_ctx *ctx, struct cel_value *items, struct cel_value *tmp,
		       size_t len)
{
	size_t mid = len / 2, i = 0, j = mid, k = 0;
	int c;

	if (len < 2)
		return;
	merge_sort(ctx, items, tmp, mid);
	merge_sort(ctx, items + mid, tmp, len - mid);
	cel_cost_add(ctx, len);
	while (i < mid && j < len) {
		if (!cel_value_compare(&items[j], &items[i], &c))
			c = 0;          /* NaN: not less, as cel-go's Compare error is */
		tmp[k++] = c < 0 ? items[j++] : items[i++];
	}
	while (i < mid)
		tmp[k++] = items[i++];
	while (j < len)
		tmp[k++] = items[j++];
	memcpy(items, tmp, len * sizeof(*items));
}

/* merge_sort for keys[] carrying vals[] along (tmp: 2 * len). */
static void merge_sort_keyed(struct cel_ctx *ctx, struct cel_value *keys, struct cel_value *vals,
			     struct cel_value *tmp, size_t len)
{
	size_t mid = len / 2, i = 0, j = mid, k = 0;
	struct cel_value *tv = tmp + len;
	int c;

	if (len < 2)
		return;
	merge_sort_keyed(ctx, keys, vals, tmp, mid);
	merge_sort_keyed(ctx, keys + mid, vals + mid, tmp, len - mid);
	cel_cost_add(ctx, len);
	while (i < mid && j < len) {
		if (!cel_value_compare(&keys[j], &keys[i], &c))
			c = 0;
		if (c < 0) {
			tv[k] = vals[j];
			tmp[k++] = keys[j++];
		} else {
			tv[k] = vals[i];
			tmp[k++] = keys[i++];
		}
	}
	for (; i < mid; k++, i++) {
		tv[k] = vals[i];
		tmp[k] = keys[i];
	}
	for (; j < len; k++, j++) {
		tv[k] = vals[j];
		tmp[k] = keys[j];
	}
	memcpy(keys, tmp, len * sizeof(*keys));
	memcpy(vals, tv, len * sizeof(*vals));
}

FN(sort)
{
	const struct cel_list *l = recv(a);
	struct cel_value r, *items, *tmp;

	(void)n;
	r = check_sort_keys(ctx, l);
	if (r.kind == CEL_ERROR)
		return r;
	r = cel_list_new(ctx, l->len, &items);
	if (!items)
		return r;
	tmp = cel_alloc(ctx, (l->len ? l->len : 1) * sizeof(*tmp));
	if (!tmp)
		return cel_error_oom(ctx);
	if (l->len)
		memcpy(items, l->items, l->len * sizeof(*items));
	merge_sort(ctx, items, tmp, l->len);
	return r;
}

/* target.@sortByAssociatedKeys(keys): what cel-go's sortBy macro expands
 * to (list.sortBy(e, key) -> list.@sortByAssociatedKeys(list.map(e, key))):
 * the items of target in the order of their keys, stably. */
FN(sort_by_keys)
{
	const struct cel_list *l = recv(a), *keys = a[1].v.list;
	struct cel_value r, *items, *pairs, *tmp;

	(void)n;
	if (keys->len != l->len)
		return cel_errorf(ctx, "@sortByAssociatedKeys() expected a list of the same size "
				  "as the associated keys list, but got %zu and %zu elements "
				  "respectively", l->len, keys->len);
	r = check_sort_keys(ctx, keys);
	if (r.kind == CEL_ERROR)
		return r;
	r = cel_list_new(ctx, l->len, &items);
	if (!items)
		return r;
	/* Sort (key, index) pairs as lists of two, then pick the items. */
	pairs = cel_alloc(ctx, (2 * l->len + 1) * sizeof(*pairs));
	tmp = cel_alloc(ctx, (2 * l->len + 1) * sizeof(*tmp));
	if (!pairs || !tmp)
		return cel_error_oom(ctx);
	if (l->len)
		memcpy(pairs, keys->items, l->len * sizeof(*pairs));
	for (size_t i = 0; i < l->len; i++)
		pairs[l->len + i] = cel_int((int64_t)i);
	merge_sort_keyed(ctx, pairs, pairs + l->len, tmp, l->len);
	for (size_t i = 0; i < l->len; i++)
		items[i] = l->items[pairs[l->len + i].v.i];
	return r;
}

FN(range)
{
	int64_t count = a[0].v.i;
	struct cel_value r, *items;

	(void)n;
	if (count < 0)
		return cel_errorf(ctx, "lists.range: size must be non-negative, got %lld",
				  (long long)count);
	if (count > RANGE_MAX)
		return cel_errorf(ctx, "lists.range: size %lld exceeds maximum allowed (%d)",
				  (long long)count, RANGE_MAX);
	cel_cost_add(ctx, (uint64_t)count);
	r = cel_list_new(ctx, (size_t)count, &items);
	if (!items)
		return r;
	for (int64_t i = 0; i < count; i++)
		items[i] = cel_int(i);
	return r;
}

FN(reverse)
{
	const struct cel_list *l = recv(a);
	struct cel_value r, *items;

	(void)n;
	r = cel_list_new(ctx, l->len, &items);
	if (!items)
		return r;
	for (size_t i = 0; i < l->len; i++)
		items[i] = l->items[l->len - 1 - i];
	return r;
}

/* The first occurrence of each value, in order (CEL equality: 1 and 1.0
 * are the same value). Quadratic, charged as it goes. */
FN(distinct)
{
	const struct cel_list *l = recv(a);
	struct cel_value r, *items;
	size_t k = 0;

	(void)n;
	r = cel_list_new(ctx, l->len, &items);
	if (!items)
		return r;
	for (size_t i = 0; i < l->len; i++) {
		bool seen = false;

		cel_cost_add(ctx, k / 10 + 1);
		for (size_t j = 0; j < k && !seen; j++)
			seen = cel_value_equal(&items[j], &l->items[i]);
		if (!seen)
			items[k++] = l->items[i];
	}
	((struct cel_list *)r.v.list)->len = k;
	return r;
}

FN(first)
{
	const struct cel_list *l = recv(a);

	(void)n;
	return l->len ? cel_optional_of(ctx, l->items[0]) : cel_optional_none();
}

FN(last)
{
	const struct cel_list *l = recv(a);

	(void)n;
	return l->len ? cel_optional_of(ctx, l->items[l->len - 1]) : cel_optional_none();
}

/* ---- costs ---- */

static uint64_t cost_list(const uint64_t *s, size_t n, uint64_t r)
{
	(void)n;
	(void)r;
	return s[0] ? s[0] : 1;
}

/* ext.Lists version 3 (the DRA environment's) costs its functions as
 * cel-go does, estimate and runtime alike: the work, the call (1) and the
 * new list (10). The work is the result's size for range, slice and
 * reverse, the input's for flatten, and 2 x n^2 comparisons for distinct
 * and sort (2.1 x n^2 for strings and bytes, which are traversed). */
#define LIST_CALL_COST 11

static uint64_t alloc_cost(uint64_t work)
{
	return cel_sat_add(work, LIST_CALL_COST);
}

/* factor / 10 x n^2, saturating. */
static uint64_t compare_cost(uint64_t n, uint64_t tenths)
{
	uint64_t sq = cel_sat_mul(n, n);

	return sq > UINT64_MAX / tenths ? UINT64_MAX : sq * tenths / 10;
}

static uint64_t cost_output(const uint64_t *s, size_t n, uint64_t r)
{
	(void)s;
	(void)n;
	return alloc_cost(r);
}

static uint64_t cost_input(const uint64_t *s, size_t n, uint64_t r)
{
	(void)n;
	(void)r;
	return alloc_cost(s[0]);
}

static uint64_t cost_self_compare(const uint64_t *s, size_t n, uint64_t r)
{
	(void)n;
	(void)r;
	return alloc_cost(compare_cost(s[0], 20));
}

static uint64_t cost_self_compare_text(const uint64_t *s, size_t n, uint64_t r)
{
	(void)n;
	(void)r;
	return alloc_cost(compare_cost(s[0], 21));
}

/* sortBy compares its keys, the second list. */
static uint64_t cost_keys_compare(const uint64_t *s, size_t n, uint64_t r)
{
	(void)r;
	return alloc_cost(compare_cost(n > 1 ? s[1] : 0, 20));
}

static uint64_t cost_keys_compare_text(const uint64_t *s, size_t n, uint64_t r)
{
	(void)r;
	return alloc_cost(compare_cost(n > 1 ? s[1] : 0, 21));
}

#define M(name, id, params, result, fn, cost) \
	{ name, id, CEL_OV_MEMBER, params, result, fn, cost }

static const struct cel_overload lists_overloads[] = {
	/* Kubernetes declares these per comparable element type, in this order
	 * (the runtime picks by the first element). */
#define COMPARABLE(t, rt) \
	M("isSorted", "list_" t "_is_sorted_bool", "list(" rt ")", "bool", is_sorted, cost_list), \
	M("min", "list_" t "_min_" t, "list(" rt ")", rt, list_min, cost_list), \
	M("max", "list_" t "_max_" t, "list(" rt ")", rt, list_max, cost_list)
	COMPARABLE("int", "int"),
	COMPARABLE("uint", "uint"),
	COMPARABLE("double", "double"),
	COMPARABLE("bool", "bool"),
	COMPARABLE("duration", "google.protobuf.Duration"),
	COMPARABLE("timestamp", "google.protobuf.Timestamp"),
	COMPARABLE("string", "string"),
	COMPARABLE("bytes", "bytes"),
#undef COMPARABLE
	M("sum", "list_int_sum_int", "list(int)", "int", sum_int, cost_list),
	M("sum", "list_uint_sum_uint", "list(uint)", "uint", sum_uint, cost_list),
	M("sum", "list_double_sum_double", "list(double)", "double", sum_double, cost_list),
	M("sum", "list_duration_sum_duration", "list(google.protobuf.Duration)",
	  "google.protobuf.Duration", sum_duration, cost_list),
	M("indexOf", "list_a_index_of_int", "list(A), A", "int", index_of, cost_list),
	M("lastIndexOf", "list_a_last_index_of_int", "list(A), A", "int", last_index_of,
	  cost_list),
	M("slice", "list_slice", "list(A), int, int", "list(A)", slice, cost_output),
	{ "flatten", "list_flatten", CEL_OV_MEMBER | CEL_OV_NO_ELEM_GUARD, "list(list(A))",
	  "list(A)", flatten, cost_input },
	M("flatten", "list_flatten_int", "list(dyn), int", "list(dyn)", flatten, cost_input),
#define SORTABLE(t, rt, self, keys) \
	M("sort", "list_" t "_sort", "list(" rt ")", "list(" rt ")", sort, self), \
	M("@sortByAssociatedKeys", "list_" t "_sortByAssociatedKeys", "list(A), list(" rt ")", \
	  "list(A)", sort_by_keys, keys)
	SORTABLE("int", "int", cost_self_compare, cost_keys_compare),
	SORTABLE("uint", "uint", cost_self_compare, cost_keys_compare),
	SORTABLE("double", "double", cost_self_compare, cost_keys_compare),
	SORTABLE("bool", "bool", cost_self_compare, cost_keys_compare),
	SORTABLE("duration", "google.protobuf.Duration", cost_self_compare, cost_keys_compare),
	SORTABLE("timestamp", "google.protobuf.Timestamp", cost_self_compare, cost_keys_compare),
	SORTABLE("string", "string", cost_self_compare_text, cost_keys_compare_text),
	SORTABLE("bytes", "bytes", cost_self_compare_text, cost_keys_compare_text),
#undef SORTABLE
	M("reverse", "list_reverse", "list(A)", "list(A)", reverse, cost_output),
	M("distinct", "list_distinct", "list(A)", "list(A)", distinct, cost_self_compare),
	M("first", "list_first", "list(A)", "optional_type(A)", first, NULL),
	M("last", "list_last", "list(A)", "optional_type(A)", last, NULL),
	{ "lists.range", "lists_range", 0, "int", "list(int)", range, cost_output },
};

const struct cel_library cel_lib_lists = {
	.name = "lists",
	.overloads = lists_overloads,
	.n_overloads = CEL_ARRAY_LEN(lists_overloads),
};
