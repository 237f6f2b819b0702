/* cel_lib_semver.c - the Kubernetes CEL semver library (version 1).
 *
 * semver(s) and isSemver(s) parse strictly (blang/semver rules);
 * semver(s, true) and isSemver(s, true) first normalize "v1.02" to "1.2.0".
 * On a Semver: major, minor, patch, isGreaterThan, isLessThan, compareTo.
 * Equality ignores build metadata and lives with the type in the core.
 * Costs: parsing ceil(0.1 * length), everything else 1. */
#include "cel_lib.h"
#include "cel_value.h"
#include "semver.h"

static const struct semver *arg_semver(const struct cel_value *v)
{
	return v->v.obj.ptr;
}

/* Parse args[0], normalizing when a second (bool) argument says so. */
static int parse_arg(const struct cel_value *args, size_t nargs, struct semver *v,
		     struct dt_err *err)
{
	const char *s = args[0].v.str.s;
	size_t len = args[0].v.str.len;

	if (nargs > 1 && args[1].v.b)
		return semver_parse_normalized(s, len, v, err);
	return semver_parse(s, len, v, err);
}

static struct cel_value fn_semver(struct cel_ctx *ctx, const struct cel_value *args, size_t nargs)
{
	struct dt_err err;
	struct semver v;

	if (parse_arg(args, nargs, &v, &err) < 0)
		return cel_errorf(ctx, "%s", err.msg);
	return cel_object_new(ctx, &cel_semver_type, &v, sizeof(v));
}

static struct cel_value fn_is_semver(struct cel_ctx *ctx, const struct cel_value *args,
				     size_t nargs)
{
	struct semver v;

	(void)ctx;
	return cel_bool(parse_arg(args, nargs, &v, NULL) == 0);
}

static struct cel_value fn_major(struct cel_ctx *ctx, const struct cel_value *args, size_t nargs)
{
	(void)ctx;
	(void)nargs;
	return cel_int((int64_t)arg_semver(&args[0])->major);
}

static struct cel_value fn_minor(struct cel_ctx *ctx, const struct cel_value *args, size_t nargs)
{
	(void)ctx;
	(void)nargs;
	return cel_int((int64_t)arg_semver(&args[0])->minor);
}

static struct cel_value fn_patch(struct cel_ctx *ctx, const struct cel_value *args, size_t nargs)
{
	(void)ctx;
	(void)nargs;
	return cel_int((int64_t)arg_semver(&args[0])->patch);
}

static int cmp_args(const struct cel_value *args)
{
	return semver_cmp(arg_semver(&args[0]), arg_semver(&args[1]));
}

static struct cel_value fn_compare_to(struct cel_ctx *ctx, const struct cel_value *args,
				      size_t nargs)
{
	(void)ctx;
	(void)nargs;
	return cel_int(cmp_args(args));
}

static struct cel_value fn_is_greater(struct cel_ctx *ctx, const struct cel_value *args,
				      size_t nargs)
{
	(void)ctx;
	(void)nargs;
	return cel_bool(cmp_args(args) > 0);
}

static struct cel_value fn_is_less(struct cel_ctx *ctx, const struct cel_value *args,
				   size_t nargs)
{
	(void)ctx;
	(void)nargs;
	return cel_bool(cmp_args(args) < 0);
}

static uint64_t cost_parse(const uint64_t *sizes, size_t n, uint64_t result)
{
	(void)n;
	(void)result;
	return cel_cost_factor(0.1, sizes[0]);
}

#define S "kubernetes.Semver"
#define MEMBER(name, id, params, result, fn) \
	{ name, id, CEL_OV_MEMBER, params, result, fn, NULL }

static const struct cel_overload semver_overloads[] = {
	{ "semver", "string_to_semver", 0, "string", S, fn_semver, cost_parse },
	{ "semver", "string_bool_to_semver", 0, "string, bool", S, fn_semver, cost_parse },
	{ "isSemver", "is_semver_string", 0, "string", "bool", fn_is_semver, cost_parse },
	{ "isSemver", "is_semver_string_bool", 0, "string, bool", "bool", fn_is_semver,
	  cost_parse },
	MEMBER("major", "semver_major", S, "int", fn_major),
	MEMBER("minor", "semver_minor", S, "int", fn_minor),
	MEMBER("patch", "semver_patch", S, "int", fn_patch),
	MEMBER("isGreaterThan", "semver_is_greater_than", S ", " S, "bool", fn_is_greater),
	MEMBER("isLessThan", "semver_is_less_than", S ", " S, "bool", fn_is_less),
	MEMBER("compareTo", "semver_compare_to", S ", " S, "int", fn_compare_to),
};

static const struct cel_object_type *const semver_types[] = { &cel_semver_type };

const struct cel_library cel_lib_semver = {
	.name = "semver",
	.overloads = semver_overloads,
	.n_overloads = CEL_ARRAY_LEN(semver_overloads),
	.types = semver_types,
	.n_types = CEL_ARRAY_LEN(semver_types),
};
