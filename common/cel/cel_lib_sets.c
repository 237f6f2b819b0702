/* cel_lib_sets.c - cel-go's ext.Sets: lists read as sets.
 *
 *   sets.contains(list, sub)     every element of sub is in list
 *   sets.equivalent(a, b)        each contains the other (duplicates and
 *                                order do not matter)
 *   sets.intersects(a, b)        some element is in both
 *
 * Membership is CEL equality, so [1] and [1.0] are equivalent. Each call
 * compares every pair at worst and costs size(a) * size(b), as in cel-go. */
#include "cel_lib.h"
#include "cel_value.h"

#define FN(name) static struct cel_value name(struct cel_ctx *ctx, const struct cel_value *a, \
					      size_t n)

static bool member(const struct cel_list *l, const struct cel_value *v)
{
	for (size_t i = 0; i < l->len; i++)
		if (cel_value_equal(&l->items[i], v))
			return true;
	return false;
}

/* Every element of sub is in l. */
static bool contains_all(const struct cel_list *l, const struct cel_list *sub)
{
	for (size_t i = 0; i < sub->len; i++)
		if (!member(l, &sub->items[i]))
			return false;
	return true;
}

FN(sets_contains)
{
	(void)ctx;
	(void)n;
	return cel_bool(contains_all(a[0].v.list, a[1].v.list));
}

FN(sets_equivalent)
{
	(void)ctx;
	(void)n;
	return cel_bool(contains_all(a[0].v.list, a[1].v.list) &&
			contains_all(a[1].v.list, a[0].v.list));
}

FN(sets_intersects)
{
	const struct cel_list *l = a[1].v.list;

	(void)ctx;
	(void)n;
	for (size_t i = 0; i < l->len; i++)
		if (member(a[0].v.list, &l->items[i]))
			return cel_bool(true);
	return cel_bool(false);
}

static uint64_t cost_pairs(const uint64_t *s, size_t n, uint64_t r)
{
	uint64_t c = cel_sat_mul(s[0], s[1]);

	(void)n;
	(void)r;
	return c ? c : 1;
}

static const struct cel_overload sets_overloads[] = {
	{ "sets.contains", "list_sets_contains_list", 0, "list(A), list(A)", "bool",
	  sets_contains, cost_pairs },
	{ "sets.equivalent", "list_sets_equivalent_list", 0, "list(A), list(A)", "bool",
	  sets_equivalent, cost_pairs },
	{ "sets.intersects", "list_sets_intersects_list", 0, "list(A), list(A)", "bool",
	  sets_intersects, cost_pairs },
};

const struct cel_library cel_lib_sets = {
	.name = "sets",
	.overloads = sets_overloads,
	.n_overloads = CEL_ARRAY_LEN(sets_overloads),
};
