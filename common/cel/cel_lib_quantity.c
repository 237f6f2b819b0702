/* cel_lib_quantity.c - the Kubernetes CEL quantity library.
 *
 * quantity("100Gi"), isQuantity(s), and on a Quantity: isGreaterThan,
 * isLessThan, compareTo, add and sub (another Quantity or an int),
 * asInteger, isInteger, asApproximateFloat; sign(q) is a global function,
 * as Kubernetes declares it. Equality (==) is numeric and lives with the
 * type in the core. Costs follow the Kubernetes cost overrides: parsing
 * costs ceil(0.1 * length), everything else 1. */
#include <string.h>

#include "cel_lib.h"
#include "cel_value.h"
#include "quantity.h"

static const struct quantity *arg_quantity(const struct cel_value *v)
{
	return v->v.obj.ptr;
}

static struct cel_value quantity_value(struct cel_ctx *ctx, const struct quantity *q)
{
	return cel_object_new(ctx, &cel_quantity_type, q, sizeof(*q));
}

static struct cel_value fn_quantity(struct cel_ctx *ctx, const struct cel_value *args,
				    size_t nargs)
{
	struct quantity q;
	struct dt_err err;

	(void)nargs;
	if (quantity_parse(args[0].v.str.s, args[0].v.str.len, &q, &err) < 0)
		return cel_errorf(ctx, "%s", err.msg);
	return quantity_value(ctx, &q);
}

static struct cel_value fn_is_quantity(struct cel_ctx *ctx, const struct cel_value *args,
				       size_t nargs)
{
	struct quantity q;

	(void)ctx;
	(void)nargs;
	return cel_bool(quantity_parse(args[0].v.str.s, args[0].v.str.len, &q, NULL) == 0);
}

static struct cel_value fn_compare_to(struct cel_ctx *ctx, const struct cel_value *args,
				      size_t nargs)
{
	(void)ctx;
	(void)nargs;
	return cel_int(quantity_cmp(arg_quantity(&args[0]), arg_quantity(&args[1])));
}

static struct cel_value fn_is_greater(struct cel_ctx *ctx, const struct cel_value *args,
				      size_t nargs)
{
	(void)ctx;
	(void)nargs;
	return cel_bool(quantity_cmp(arg_quantity(&args[0]), arg_quantity(&args[1])) > 0);
}

static struct cel_value fn_is_less(struct cel_ctx *ctx, const struct cel_value *args,
				   size_t nargs)
{
	(void)ctx;
	(void)nargs;
	return cel_bool(quantity_cmp(arg_quantity(&args[0]), arg_quantity(&args[1])) < 0);
}

/* The right-hand side of add/sub: a Quantity, or an int taken as a
 * DecimalExponent quantity, as the Kubernetes library converts it. */
static struct quantity operand(const struct cel_value *v)
{
	if (v->kind == CEL_INT)
		return quantity_from_int(v->v.i, QUANTITY_DECIMAL_EXPONENT);
	return *arg_quantity(v);
}

static struct cel_value arith(struct cel_ctx *ctx, const struct cel_value *args, bool subtract)
{
	struct quantity rhs = operand(&args[1]);
	struct quantity out;
	int r;

	if (subtract)
		r = quantity_sub(arg_quantity(&args[0]), &rhs, &out);
	else
		r = quantity_add(arg_quantity(&args[0]), &rhs, &out);
	if (r < 0)
		return cel_errorf(ctx, "quantity %s overflow", subtract ? "subtraction" : "addition");
	return quantity_value(ctx, &out);
}

static struct cel_value fn_add(struct cel_ctx *ctx, const struct cel_value *args, size_t nargs)
{
	(void)nargs;
	return arith(ctx, args, false);
}

static struct cel_value fn_sub(struct cel_ctx *ctx, const struct cel_value *args, size_t nargs)
{
	(void)nargs;
	return arith(ctx, args, true);
}

static struct cel_value fn_as_integer(struct cel_ctx *ctx, const struct cel_value *args,
				      size_t nargs)
{
	int64_t i;

	(void)nargs;
	if (quantity_to_int64(arg_quantity(&args[0]), &i) < 0)
		return cel_errorf(ctx, "cannot convert value to integer");
	return cel_int(i);
}

static struct cel_value fn_is_integer(struct cel_ctx *ctx, const struct cel_value *args,
				      size_t nargs)
{
	(void)ctx;
	(void)nargs;
	return cel_bool(quantity_is_integer(arg_quantity(&args[0])));
}

static struct cel_value fn_as_float(struct cel_ctx *ctx, const struct cel_value *args,
				    size_t nargs)
{
	(void)ctx;
	(void)nargs;
	return cel_double(quantity_to_double(arg_quantity(&args[0])));
}

static struct cel_value fn_sign(struct cel_ctx *ctx, const struct cel_value *args, size_t nargs)
{
	(void)ctx;
	(void)nargs;
	return cel_int(quantity_sign(arg_quantity(&args[0])));
}

/* Parsing is proportional to the string's length. */
static uint64_t cost_parse(const uint64_t *sizes, size_t n, uint64_t result)
{
	(void)n;
	(void)result;
	return cel_cost_factor(0.1, sizes[0]);
}

#define Q "kubernetes.Quantity"
#define MEMBER(name, id, params, result, fn) \
	{ name, id, CEL_OV_MEMBER, params, result, fn, NULL }

static const struct cel_overload quantity_overloads[] = {
	{ "quantity", "string_to_quantity", 0, "string", Q, fn_quantity, cost_parse },
	{ "isQuantity", "is_quantity_string", 0, "string", "bool", fn_is_quantity, cost_parse },
	{ "sign", "quantity_sign", 0, Q, "int", fn_sign, NULL },
	MEMBER("isGreaterThan", "quantity_is_greater_than", Q ", " Q, "bool", fn_is_greater),
	MEMBER("isLessThan", "quantity_is_less_than", Q ", " Q, "bool", fn_is_less),
	MEMBER("compareTo", "quantity_compare_to", Q ", " Q, "int", fn_compare_to),
	MEMBER("add", "quantity_add", Q ", " Q, Q, fn_add),
	MEMBER("add", "quantity_add_int", Q ", int", Q, fn_add),
	MEMBER("sub", "quantity_sub", Q ", " Q, Q, fn_sub),
	MEMBER("sub", "quantity_sub_int", Q ", int", Q, fn_sub),
	MEMBER("asInteger", "quantity_get_int", Q, "int", fn_as_integer),
	MEMBER("isInteger", "quantity_is_integer", Q, "bool", fn_is_integer),
	MEMBER("asApproximateFloat", "quantity_get_float", Q, "double", fn_as_float),
};

static const struct cel_object_type *const quantity_types[] = { &cel_quantity_type };

const struct cel_library cel_lib_quantity = {
	.name = "quantity",
	.overloads = quantity_overloads,
	.n_overloads = CEL_ARRAY_LEN(quantity_overloads),
	.types = quantity_types,
	.n_types = CEL_ARRAY_LEN(quantity_types),
};
