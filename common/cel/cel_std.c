/* cel_std.c - the CEL standard library: operators with overflow checks,
 * heterogeneous comparisons, membership, size, the core string functions,
 * type conversions, and the optional-type functions. (Timestamps and
 * durations are in cel_time.c; macros are expanded by the parser.) */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "cel_ast.h"
#include "strbuf.h"
#include "utf8.h"

#define FN(name) static struct cel_value name(struct cel_ctx *ctx, const struct cel_value *a, \
					      size_t n)
#define UNUSED (void)ctx; (void)n

static struct cel_value overflow(struct cel_ctx *ctx)
{
	return cel_errorf(ctx, "integer overflow");
}

/* ---- arithmetic ---- */

FN(add_int)
{
	int64_t r;

	(void)n;
	if (__builtin_add_overflow(a[0].v.i, a[1].v.i, &r))
		return overflow(ctx);
	return cel_int(r);
}

FN(sub_int)
{
	int64_t r;

	(void)n;
	if (__builtin_sub_overflow(a[0].v.i, a[1].v.i, &r))
		return overflow(ctx);
	return cel_int(r);
}

FN(mul_int)
{
	int64_t r;

	(void)n;
	if (__builtin_mul_overflow(a[0].v.i, a[1].v.i, &r))
		return overflow(ctx);
	return cel_int(r);
}

FN(div_int)
{
	(void)n;
	if (a[1].v.i == 0)
		return cel_errorf(ctx, "division by zero");
	if (a[1].v.i == -1 && a[0].v.i == INT64_MIN)
		return overflow(ctx);
	return cel_int(a[0].v.i / a[1].v.i);
}

FN(mod_int)
{
	(void)n;
	if (a[1].v.i == 0)
		return cel_errorf(ctx, "modulus by zero");
	if (a[1].v.i == -1 && a[0].v.i == INT64_MIN)
		return overflow(ctx);
	return cel_int(a[0].v.i % a[1].v.i);
}

FN(neg_int)
{
	(void)n;
	if (a[0].v.i == INT64_MIN)
		return overflow(ctx);
	return cel_int(-a[0].v.i);
}

FN(add_uint)
{
	uint64_t r;

	(void)n;
	if (__builtin_add_overflow(a[0].v.u, a[1].v.u, &r))
		return cel_errorf(ctx, "unsigned integer overflow");
	return cel_uint(r);
}

FN(sub_uint)
{
	uint64_t r;

	(void)n;
	if (__builtin_sub_overflow(a[0].v.u, a[1].v.u, &r))
		return cel_errorf(ctx, "unsigned integer overflow");
	return cel_uint(r);
}

FN(mul_uint)
{
	uint64_t r;

	(void)n;
	if (__builtin_mul_overflow(a[0].v.u, a[1].v.u, &r))
		return cel_errorf(ctx, "unsigned integer overflow");
	return cel_uint(r);
}

FN(div_uint)
{
	(void)n;
	if (a[1].v.u == 0)
		return cel_errorf(ctx, "division by zero");
	return cel_uint(a[0].v.u / a[1].v.u);
}

FN(mod_uint)
{
	(void)n;
	if (a[1].v.u == 0)
		return cel_errorf(ctx, "modulus by zero");
	return cel_uint(a[0].v.u % a[1].v.u);
}

FN(add_double) { UNUSED; return cel_double(a[0].v.d + a[1].v.d); }
FN(sub_double) { UNUSED; return cel_double(a[0].v.d - a[1].v.d); }
FN(mul_double) { UNUSED; return cel_double(a[0].v.d * a[1].v.d); }
FN(div_double) { UNUSED; return cel_double(a[0].v.d / a[1].v.d); }
FN(neg_double) { UNUSED; return cel_double(-a[0].v.d); }
FN(not_bool) { UNUSED; return cel_bool(!a[0].v.b); }

static struct cel_value concat(struct cel_ctx *ctx, const struct cel_value *a, bool bytes)
{
	size_t len = a[0].v.str.len + a[1].v.str.len;
	char *d;

	if (!a[0].v.str.len)
		return a[1];
	if (!a[1].v.str.len)
		return a[0];
	if (len > CEL_MAX_STRING)
		return cel_errorf(ctx, "string size exceeds the limit of %u bytes", CEL_MAX_STRING);
	d = cel_alloc(ctx, len + 1);
	if (!d)
		return cel_error_oom(ctx);
	memcpy(d, a[0].v.str.s, a[0].v.str.len);
	memcpy(d + a[0].v.str.len, a[1].v.str.s, a[1].v.str.len);
	d[len] = 0;
	return bytes ? cel_bytes(d, len) : cel_string(d, len);
}

FN(add_string) { (void)n; return concat(ctx, a, false); }
FN(add_bytes) { (void)n; return concat(ctx, a, true); }

FN(add_list)
{
	const struct cel_list *x = a[0].v.list, *y = a[1].v.list;
	struct cel_value *items, r;

	(void)n;
	if (!x->len)
		return a[1];
	if (!y->len)
		return a[0];
	r = cel_list_new(ctx, x->len + y->len, &items);
	if (!items)
		return r;
	memcpy(items, x->items, x->len * sizeof(*items));
	memcpy(items + x->len, y->items, y->len * sizeof(*items));
	return r;
}

/* ---- comparisons ---- */

FN(eq) { UNUSED; return cel_bool(cel_value_equal(&a[0], &a[1])); }
FN(ne) { UNUSED; return cel_bool(!cel_value_equal(&a[0], &a[1])); }

static struct cel_value ordered(struct cel_ctx *ctx, const struct cel_value *a, int want_lo,
				int want_hi, const char *fn)
{
	int c;

	if (!cel_value_compare(&a[0], &a[1], &c)) {
		/* NaN compares false; other unordered pairs have no overload. */
		if (a[0].kind == CEL_DOUBLE || a[1].kind == CEL_DOUBLE)
			return cel_bool(false);
		return cel_error_no_overload(ctx, fn);
	}
	return cel_bool(c >= want_lo && c <= want_hi);
}

FN(lt) { (void)n; return ordered(ctx, a, -1, -1, "_<_"); }
FN(le) { (void)n; return ordered(ctx, a, -1, 0, "_<=_"); }
FN(gt) { (void)n; return ordered(ctx, a, 1, 1, "_>_"); }
FN(ge) { (void)n; return ordered(ctx, a, 0, 1, "_>=_"); }

FN(in_list)
{
	const struct cel_list *l = a[1].v.list;

	UNUSED;
	for (size_t i = 0; i < l->len; i++)
		if (cel_value_equal(&a[0], &l->items[i]))
			return cel_bool(true);
	return cel_bool(false);
}

FN(in_map)
{
	struct cel_value out;

	UNUSED;
	if (a[0].kind == CEL_DOUBLE) {
		/* Numeric keys compare on the number line: 1.0 in {1: x}. */
		double d = a[0].v.d;
		struct cel_value k;

		if (d != trunc(d))
			return cel_bool(false);
		if (d >= -9.2e18 && d <= 9.2e18) {
			k = cel_int((int64_t)d);
			if (cel_map_find(ctx, a[1].v.map, &k, &out))
				return cel_bool(true);
		}
		if (d >= 0 && d < 1.8e19) {
			k = cel_uint((uint64_t)d);
			return cel_bool(cel_map_find(ctx, a[1].v.map, &k, &out));
		}
		return cel_bool(false);
	}
	return cel_bool(cel_map_find(ctx, a[1].v.map, &a[0], &out));
}

/* ---- size and strings ---- */

FN(size_string) { UNUSED; return cel_int((int64_t)utf8_count(a[0].v.str.s, a[0].v.str.len)); }
FN(size_bytes) { UNUSED; return cel_int((int64_t)a[0].v.str.len); }
FN(size_list) { UNUSED; return cel_int((int64_t)a[0].v.list->len); }
FN(size_map) { UNUSED; return cel_int((int64_t)cel_map_size(a[0].v.map)); }

FN(contains)
{
	UNUSED;
	if (!a[1].v.str.len)
		return cel_bool(true);
	return cel_bool(memmem(a[0].v.str.s, a[0].v.str.len, a[1].v.str.s, a[1].v.str.len) != NULL);
}

FN(starts_with)
{
	UNUSED;
	return cel_bool(a[0].v.str.len >= a[1].v.str.len &&
			!memcmp(a[0].v.str.s, a[1].v.str.s, a[1].v.str.len));
}

FN(ends_with)
{
	UNUSED;
	return cel_bool(a[0].v.str.len >= a[1].v.str.len &&
			!memcmp(a[0].v.str.s + a[0].v.str.len - a[1].v.str.len, a[1].v.str.s,
				a[1].v.str.len));
}

/* ---- conversions ---- */

FN(identity) { UNUSED; return a[0]; }

FN(int_from_uint)
{
	(void)n;
	if (a[0].v.u > (uint64_t)INT64_MAX)
		return cel_errorf(ctx, "integer overflow");
	return cel_int((int64_t)a[0].v.u);
}

FN(int_from_double)
{
	double d = a[0].v.d;

	(void)n;
	/* The range is exclusive at both ends, as the spec says. */
	if (isnan(d) || d <= -9223372036854775808.0 || d >= 9223372036854775807.0)
		return cel_errorf(ctx, "integer overflow");
	return cel_int((int64_t)d);
}

static bool parse_int(const char *s, size_t len, int64_t *out)
{
	char buf[32];
	char *end;
	long long v;

	if (!len || len >= sizeof(buf))
		return false;
	memcpy(buf, s, len);
	buf[len] = 0;
	if (buf[0] == ' ' || buf[0] == '+' || buf[len - 1] == ' ')
		return false;
	errno = 0;
	v = strtoll(buf, &end, 10);
	if (errno || *end)
		return false;
	*out = v;
	return true;
}

FN(int_from_string)
{
	int64_t v;

	(void)n;
	if (!parse_int(a[0].v.str.s, a[0].v.str.len, &v))
		return cel_errorf(ctx, "cannot convert string '%.*s' to int",
				  (int)(a[0].v.str.len > 64 ? 64 : a[0].v.str.len), a[0].v.str.s);
	return cel_int(v);
}

FN(uint_from_int)
{
	(void)n;
	if (a[0].v.i < 0)
		return cel_errorf(ctx, "unsigned integer overflow");
	return cel_uint((uint64_t)a[0].v.i);
}

FN(uint_from_double)
{
	double d = a[0].v.d;

	(void)n;
	if (isnan(d) || d <= -1.0 || d >= 18446744073709551615.0)
		return cel_errorf(ctx, "unsigned integer overflow");
	return cel_uint((uint64_t)d);
}

FN(uint_from_string)
{
	char buf[32];
	char *end;
	unsigned long long v;
	size_t len = a[0].v.str.len;

	(void)n;
	if (!len || len >= sizeof(buf) || a[0].v.str.s[0] == '-' || a[0].v.str.s[0] == '+' ||
	    a[0].v.str.s[0] == ' ')
		goto bad;
	memcpy(buf, a[0].v.str.s, len);
	buf[len] = 0;
	errno = 0;
	v = strtoull(buf, &end, 10);
	if (errno || *end)
		goto bad;
	return cel_uint(v);
bad:
	return cel_errorf(ctx, "cannot convert string '%.*s' to uint",
			  (int)(len > 64 ? 64 : len), a[0].v.str.s);
}

FN(double_from_int) { UNUSED; return cel_double((double)a[0].v.i); }
FN(double_from_uint) { UNUSED; return cel_double((double)a[0].v.u); }

FN(double_from_string)
{
	char buf[128];
	char *end;
	double d;
	size_t len = a[0].v.str.len;

	(void)n;
	if (!len || len >= sizeof(buf) || a[0].v.str.s[0] == ' ')
		goto bad;
	memcpy(buf, a[0].v.str.s, len);
	buf[len] = 0;
	/* Go's ParseFloat: no hex floats. */
	if (strpbrk(buf, "xXpP") && strncasecmp(buf + (buf[0] == '-' || buf[0] == '+'), "inf", 3) != 0)
		goto bad;
	errno = 0;
	d = strtod(buf, &end);
	if (*end)
		goto bad;
	if (errno == ERANGE && isinf(d))
		goto bad;
	return cel_double(d);
bad:
	return cel_errorf(ctx, "cannot convert string '%.*s' to double",
			  (int)(len > 64 ? 64 : len), a[0].v.str.s);
}

FN(string_from_int)
{
	char buf[32];

	(void)n;
	return cel_string_copy(ctx, buf, (size_t)snprintf(buf, sizeof(buf), "%lld",
							  (long long)a[0].v.i));
}

FN(string_from_uint)
{
	char buf[32];

	(void)n;
	return cel_string_copy(ctx, buf, (size_t)snprintf(buf, sizeof(buf), "%llu",
							  (unsigned long long)a[0].v.u));
}

/* Go's strconv.FormatFloat(d, 'g', -1, 64), which cel-go's string() uses. */
static size_t format_go_g(double d, char *out, size_t cap)
{
	char digits[40], e[48];
	int nd = 0, exp10, prec;

	if (isnan(d))
		return (size_t)snprintf(out, cap, "NaN");
	if (isinf(d))
		return (size_t)snprintf(out, cap, d > 0 ? "+Inf" : "-Inf");
	if (d == 0)
		return (size_t)snprintf(out, cap, signbit(d) ? "-0" : "0");
	for (prec = 1; prec <= 17; prec++) {
		snprintf(e, sizeof(e), "%.*e", prec - 1, d);
		if (strtod(e, NULL) == d)
			break;
	}
	/* e is "-d.ddde+XX": collect digits and the exponent. */
	for (const char *p = e; *p && *p != 'e'; p++)
		if (*p >= '0' && *p <= '9')
			digits[nd++] = *p;
	digits[nd] = 0;
	exp10 = atoi(strchr(e, 'e') + 1);
	if (exp10 < -4 || exp10 >= 6) {
		size_t k = 0;

		if (d < 0)
			out[k++] = '-';
		out[k++] = digits[0];
		if (nd > 1) {
			out[k++] = '.';
			memcpy(out + k, digits + 1, (size_t)nd - 1);
			k += (size_t)nd - 1;
		}
		k += (size_t)snprintf(out + k, cap - k, "e%c%02d", exp10 < 0 ? '-' : '+',
				      exp10 < 0 ? -exp10 : exp10);
		return k;
	}
	{
		size_t k = 0;

		if (d < 0)
			out[k++] = '-';
		if (exp10 < 0) {
			out[k++] = '0';
			out[k++] = '.';
			for (int z = 0; z < -exp10 - 1; z++)
				out[k++] = '0';
			memcpy(out + k, digits, (size_t)nd);
			k += (size_t)nd;
		} else {
			for (int i = 0; i <= exp10 || i < nd; i++) {
				if (i == exp10 + 1)
					out[k++] = '.';
				out[k++] = i < nd ? digits[i] : '0';
			}
		}
		out[k] = 0;
		return k;
	}
}

FN(string_from_double)
{
	char buf[64];

	(void)n;
	return cel_string_copy(ctx, buf, format_go_g(a[0].v.d, buf, sizeof(buf)));
}

FN(string_from_bool)
{
	UNUSED;
	return a[0].v.b ? cel_string("true", 4) : cel_string("false", 5);
}

FN(string_from_bytes)
{
	(void)n;
	if (!utf8_valid(a[0].v.str.s, a[0].v.str.len))
		return cel_errorf(ctx, "invalid UTF-8 in bytes, cannot convert to string");
	return cel_string(a[0].v.str.s, a[0].v.str.len);
}

FN(bytes_from_string) { UNUSED; return cel_bytes(a[0].v.str.s, a[0].v.str.len); }

FN(bool_from_string)
{
	static const char *const t[] = { "1", "t", "T", "true", "TRUE", "True" };
	static const char *const f[] = { "0", "f", "F", "false", "FALSE", "False" };

	(void)n;
	for (size_t i = 0; i < CEL_ARRAY_LEN(t); i++) {
		if (a[0].v.str.len == strlen(t[i]) && !memcmp(a[0].v.str.s, t[i], a[0].v.str.len))
			return cel_bool(true);
		if (a[0].v.str.len == strlen(f[i]) && !memcmp(a[0].v.str.s, f[i], a[0].v.str.len))
			return cel_bool(false);
	}
	return cel_errorf(ctx, "type conversion error from 'string' to 'bool'");
}

FN(type_of)
{
	UNUSED;
	return cel_type_named(cel_value_type_name(&a[0]));
}

/* ---- optionals ---- */

FN(opt_of) { (void)n; return cel_optional_of(ctx, a[0]); }
FN(opt_none) { (void)ctx; (void)a; (void)n; return cel_optional_none(); }

static bool is_zero(struct cel_ctx *ctx, const struct cel_value *v)
{
	switch (v->kind) {
	case CEL_NULL: return true;
	case CEL_BOOL: return !v->v.b;
	case CEL_INT: return v->v.i == 0;
	case CEL_UINT: return v->v.u == 0;
	case CEL_DOUBLE: return v->v.d == 0;
	case CEL_STRING:
	case CEL_BYTES: return v->v.str.len == 0;
	case CEL_LIST: return v->v.list->len == 0;
	case CEL_MAP: return cel_map_size(v->v.map) == 0;
	case CEL_TIMESTAMP:
	case CEL_DURATION: return v->v.t.sec == 0 && v->v.t.nsec == 0;
	case CEL_OPTIONAL: return v->v.opt == NULL;
	default:
		(void)ctx;
		return false;
	}
}

FN(opt_of_non_zero)
{
	(void)n;
	if (is_zero(ctx, &a[0]))
		return cel_optional_none();
	return cel_optional_of(ctx, a[0]);
}

FN(opt_has_value) { UNUSED; return cel_bool(a[0].v.opt != NULL); }

FN(opt_value)
{
	(void)n;
	if (!a[0].v.opt)
		return cel_errorf(ctx, "optional.none() dereference");
	return *a[0].v.opt;
}

FN(opt_or) { UNUSED; return a[0].v.opt ? a[0] : a[1]; }
FN(opt_or_value) { UNUSED; return a[0].v.opt ? *a[0].v.opt : a[1]; }

/* ---- costs ----
 * cel-go's runtime costs (interpreter/runtimecost.go): sizes are string and
 * bytes lengths, list and map lengths, 1 for scalars; 0.1 is its string
 * traversal factor. These may be 0 (an empty string compares for free). */

static uint64_t cost_traverse_min(const uint64_t *s, size_t n, uint64_t r)
{
	(void)n;
	(void)r;
	return cel_cost_factor(0.1, s[0] < s[1] ? s[0] : s[1]);
}

static uint64_t cost_traverse_sum(const uint64_t *s, size_t n, uint64_t r)
{
	(void)n;
	(void)r;
	return cel_cost_factor(0.1, cel_sat_add(s[0], s[1]));
}

/* The last argument's length: the prefix (suffix) of startsWith
 * (endsWith), as both cel-go's estimator and its current runtime meter
 * take it, and the operand of string(bytes) and bytes(string). */
static uint64_t cost_traverse_last(const uint64_t *s, size_t n, uint64_t r)
{
	(void)r;
	return cel_cost_factor(0.1, s[n - 1]);
}

static uint64_t cost_contains(const uint64_t *s, size_t n, uint64_t r)
{
	(void)n;
	(void)r;
	return cel_sat_mul(cel_cost_factor(0.1, s[0]), cel_cost_factor(0.1, s[1]));
}

static uint64_t cost_in_list(const uint64_t *s, size_t n, uint64_t r)
{
	(void)n;
	(void)r;
	return s[1];
}

#define O(name, id, params, result, fn) { name, id, 0, params, result, fn, NULL }
#define OC(name, id, params, result, fn, cost) { name, id, 0, params, result, fn, cost }
#define M(name, id, params, result, fn) { name, id, CEL_OV_MEMBER, params, result, fn, NULL }
#define MC(name, id, params, result, fn, cost) \
	{ name, id, CEL_OV_MEMBER, params, result, fn, cost }

/* Ordering overloads, including the cross-type numeric ones. */
#define ORDER(op, fn, stem) \
	O(op, stem "_int64", "int, int", "bool", fn), \
	O(op, stem "_uint64", "uint, uint", "bool", fn), \
	O(op, stem "_double", "double, double", "bool", fn), \
	O(op, stem "_int64_uint64", "int, uint", "bool", fn), \
	O(op, stem "_int64_double", "int, double", "bool", fn), \
	O(op, stem "_uint64_int64", "uint, int", "bool", fn), \
	O(op, stem "_uint64_double", "uint, double", "bool", fn), \
	O(op, stem "_double_int64", "double, int", "bool", fn), \
	O(op, stem "_double_uint64", "double, uint", "bool", fn), \
	OC(op, stem "_string", "string, string", "bool", fn, cost_traverse_min), \
	OC(op, stem "_bytes", "bytes, bytes", "bool", fn, cost_traverse_min), \
	O(op, stem "_bool", "bool, bool", "bool", fn), \
	O(op, stem "_timestamp", "google.protobuf.Timestamp, google.protobuf.Timestamp", \
	  "bool", fn), \
	O(op, stem "_duration", "google.protobuf.Duration, google.protobuf.Duration", "bool", fn)

static const struct cel_overload std_overloads[] = {
	O("_+_", "add_int64", "int, int", "int", add_int),
	O("_+_", "add_uint64", "uint, uint", "uint", add_uint),
	O("_+_", "add_double", "double, double", "double", add_double),
	OC("_+_", "add_string", "string, string", "string", add_string, cost_traverse_sum),
	OC("_+_", "add_bytes", "bytes, bytes", "bytes", add_bytes, cost_traverse_sum),
	O("_+_", "add_list", "list(A), list(A)", "list(A)", add_list),
	O("_-_", "subtract_int64", "int, int", "int", sub_int),
	O("_-_", "subtract_uint64", "uint, uint", "uint", sub_uint),
	O("_-_", "subtract_double", "double, double", "double", sub_double),
	O("_*_", "multiply_int64", "int, int", "int", mul_int),
	O("_*_", "multiply_uint64", "uint, uint", "uint", mul_uint),
	O("_*_", "multiply_double", "double, double", "double", mul_double),
	O("_/_", "divide_int64", "int, int", "int", div_int),
	O("_/_", "divide_uint64", "uint, uint", "uint", div_uint),
	O("_/_", "divide_double", "double, double", "double", div_double),
	O("_%_", "modulo_int64", "int, int", "int", mod_int),
	O("_%_", "modulo_uint64", "uint, uint", "uint", mod_uint),
	O("-_", "negate_int64", "int", "int", neg_int),
	O("-_", "negate_double", "double", "double", neg_double),
	O("!_", "logical_not", "bool", "bool", not_bool),
	O("_&&_", "logical_and", "bool, bool", "bool", NULL),
	O("_||_", "logical_or", "bool, bool", "bool", NULL),
	O("_?_:_", "conditional", "bool, A, A", "A", NULL),
	OC("_==_", "equals", "A, A", "bool", eq, cost_traverse_min),
	OC("_!=_", "not_equals", "A, A", "bool", ne, cost_traverse_min),
	ORDER("_<_", lt, "less"),
	ORDER("_<=_", le, "less_equals"),
	ORDER("_>_", gt, "greater"),
	ORDER("_>=_", ge, "greater_equals"),
	OC("@in", "in_list", "A, list(A)", "bool", in_list, cost_in_list),
	O("@in", "in_map", "A, map(A, B)", "bool", in_map),
	O("size", "size_string", "string", "int", size_string),
	O("size", "size_bytes", "bytes", "int", size_bytes),
	O("size", "size_list", "list(A)", "int", size_list),
	O("size", "size_map", "map(A, B)", "int", size_map),
	M("size", "string_size", "string", "int", size_string),
	M("size", "bytes_size", "bytes", "int", size_bytes),
	M("size", "list_size", "list(A)", "int", size_list),
	M("size", "map_size", "map(A, B)", "int", size_map),
	MC("contains", "contains_string", "string, string", "bool", contains, cost_contains),
	MC("startsWith", "starts_with_string", "string, string", "bool", starts_with,
	   cost_traverse_last),
	MC("endsWith", "ends_with_string", "string, string", "bool", ends_with, cost_traverse_last),
	O("int", "int64_to_int64", "int", "int", identity),
	O("int", "uint64_to_int64", "uint", "int", int_from_uint),
	O("int", "double_to_int64", "double", "int", int_from_double),
	O("int", "string_to_int64", "string", "int", int_from_string),
	O("uint", "uint64_to_uint64", "uint", "uint", identity),
	O("uint", "int64_to_uint64", "int", "uint", uint_from_int),
	O("uint", "double_to_uint64", "double", "uint", uint_from_double),
	O("uint", "string_to_uint64", "string", "uint", uint_from_string),
	O("double", "double_to_double", "double", "double", identity),
	O("double", "int64_to_double", "int", "double", double_from_int),
	O("double", "uint64_to_double", "uint", "double", double_from_uint),
	O("double", "string_to_double", "string", "double", double_from_string),
	O("string", "string_to_string", "string", "string", identity),
	O("string", "int64_to_string", "int", "string", string_from_int),
	O("string", "uint64_to_string", "uint", "string", string_from_uint),
	O("string", "double_to_string", "double", "string", string_from_double),
	O("string", "bool_to_string", "bool", "string", string_from_bool),
	OC("string", "bytes_to_string", "bytes", "string", string_from_bytes,
	   cost_traverse_last),
	O("bytes", "bytes_to_bytes", "bytes", "bytes", identity),
	OC("bytes", "string_to_bytes", "string", "bytes", bytes_from_string,
	   cost_traverse_last),
	O("bool", "bool_to_bool", "bool", "bool", identity),
	O("bool", "string_to_bool", "string", "bool", bool_from_string),
	O("type", "type", "A", "type(A)", type_of),
	O("dyn", "to_dyn", "A", "dyn", identity),
	O("optional.of", "optional_of", "A", "optional_type(A)", opt_of),
	O("optional.ofNonZeroValue", "optional_ofNonZeroValue", "A", "optional_type(A)",
	  opt_of_non_zero),
	O("optional.none", "optional_none", "", "optional_type(A)", opt_none),
	M("hasValue", "optional_hasValue", "optional_type(A)", "bool", opt_has_value),
	M("value", "optional_value", "optional_type(A)", "A", opt_value),
	M("or", "optional_or_optional", "optional_type(A), optional_type(A)",
	  "optional_type(A)", opt_or),
	M("orValue", "optional_orValue_value", "optional_type(A), A", "A", opt_or_value),
	O("_[_]", "index_list", "list(A), int", "A", NULL),
	O("_[_]", "index_list_uint", "list(A), uint", "A", NULL),
	O("_[_]", "index_list_double", "list(A), double", "A", NULL),
	O("_[_]", "index_map", "map(K, V), K", "V", NULL),
	O("_[_]", "index_optional_list", "optional_type(list(A)), int", "optional_type(A)",
	  NULL),
	O("_[_]", "index_optional_map", "optional_type(map(K, V)), K", "optional_type(V)",
	  NULL),
};

const struct cel_library cel_lib_std = {
	"std", std_overloads, CEL_ARRAY_LEN(std_overloads), NULL, 0,
};

/* ---- matches without the regex library ----
 *
 * The cel-spec's standard environment has matches(string, string) and
 * string.matches(string). The regex library (cel_lib_regex.c) implements
 * them with RE2's rules and a compiled-pattern cache; a build without it
 * still needs them, so this fallback compiles the pattern with PCRE2 on
 * every call, with the match bounded by a step and depth budget instead of
 * ever backtracking for long. */

#define MATCH_LIMIT 1000000u
#define MATCH_DEPTH_LIMIT 10000u

static struct cel_value fallback_matches(struct cel_ctx *ctx, const struct cel_value *a,
					 size_t n)
{
	pcre2_code *code = NULL;
	pcre2_match_data *md = NULL;
	pcre2_match_context *mctx = NULL;
	PCRE2_UCHAR msg[128];
	PCRE2_SIZE off;
	struct cel_value r;
	int ec, rc;

	(void)n;
	code = pcre2_compile((PCRE2_SPTR)a[1].v.str.s, a[1].v.str.len,
			     PCRE2_UTF | PCRE2_NO_UTF_CHECK | PCRE2_NEVER_BACKSLASH_C, &ec, &off,
			     NULL);
	if (!code) {
		pcre2_get_error_message(ec, msg, sizeof(msg));
		r = cel_errorf(ctx, "error parsing regexp: %s", msg);
		goto out;
	}
	md = pcre2_match_data_create(1, NULL);
	mctx = pcre2_match_context_create(NULL);
	if (!md || !mctx) {
		r = cel_errorf(ctx, "out of memory");
		goto out;
	}
	pcre2_set_match_limit(mctx, MATCH_LIMIT);
	pcre2_set_depth_limit(mctx, MATCH_DEPTH_LIMIT);
	rc = pcre2_match(code, (PCRE2_SPTR)a[0].v.str.s, a[0].v.str.len, 0, PCRE2_NO_UTF_CHECK,
			 md, mctx);
	if (rc >= 0 || rc == PCRE2_ERROR_NOMATCH)
		r = cel_bool(rc >= 0);
	else if (rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT)
		r = cel_errorf(ctx, "regex match exceeded its backtracking limit");
	else
		r = cel_errorf(ctx, "regex match failed (PCRE2 error %d)", rc);
out:
	pcre2_match_context_free(mctx);
	pcre2_match_data_free(md);
	pcre2_code_free(code);
	return r;
}

/* cel-go: ceil(0.1 * (1 + len(string))) * ceil(0.25 * len(regex)). */
static uint64_t cost_fallback_matches(const uint64_t *sz, size_t n, uint64_t r)
{
	uint64_t c = cel_sat_mul(cel_cost_factor(0.1, cel_sat_add(sz[0], 1)),
				 cel_cost_factor(0.25, sz[1]));

	(void)n;
	(void)r;
	return c ? c : 1;
}

static const struct cel_overload matches_overloads[] = {
	{ "matches", "matches", 0, "string, string", "bool", fallback_matches,
	  cost_fallback_matches },
	{ "matches", "matches_string", CEL_OV_MEMBER, "string, string", "bool",
	  fallback_matches, cost_fallback_matches },
};

const struct cel_library cel_lib_std_matches = {
	"std_matches", matches_overloads, CEL_ARRAY_LEN(matches_overloads), NULL, 0,
};
