/* test_quantity.c - resource.Quantity parsing, canonical printing, exact
 * comparison and arithmetic, and the CEL-visible conversions. Expected
 * strings are what apimachinery's ParseQuantity + String() produce. */
#include "dt_test.h"

#include <math.h>
#include <stdint.h>

#include "quantity.h"

#define QD QUANTITY_DECIMAL_SI
#define QB QUANTITY_BINARY_SI
#define QE QUANTITY_DECIMAL_EXPONENT

static const char ERR_FORMAT[] = "quantities must match the regular expression "
				 "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
static const char ERR_SUFFIX[] = "unable to parse quantity's suffix";
static const char ERR_NUMERIC[] = "unable to parse numeric part of quantity";

static struct quantity parse_ok(const char *s)
{
	struct quantity q = { 0 };
	struct dt_err err = { 0 };
	int rc = quantity_parse_str(s, &q, &err);

	if (rc)
		fprintf(stderr, "\n  parse(\"%s\") failed: %s\n", s, err.msg);
	CU_ASSERT_EQUAL(rc, 0);
	return q;
}

static const char *fmt(const struct quantity *q, char *buf)
{
	size_t n = quantity_format(q, buf);

	CU_ASSERT(n < QUANTITY_STR_MAX);
	CU_ASSERT_EQUAL(n, strlen(buf));
	return buf;
}

static const struct {
	const char *in;
	const char *canonical;
	enum quantity_format format;
} canon_cases[] = {
	{ "0", "0", QD },
	{ "-0", "0", QD },
	{ "+0", "0", QD },
	{ "0Gi", "0", QB },
	{ "0m", "0", QD },
	{ "0e3", "0", QE },
	{ "0.000", "0", QD },
	{ "00100", "100", QD },
	{ "1", "1", QD },
	{ "9", "9", QD },
	{ "1.5", "1500m", QD },
	{ "0.1", "100m", QD },
	{ "100m", "100m", QD },
	{ "1000m", "1", QD },
	{ "1500m", "1500m", QD },
	{ "1.2345", "1234500u", QD },
	{ "12.345k", "12345", QD },
	{ "1.5k", "1500", QD },
	{ "1000", "1k", QD },
	{ "50k", "50k", QD },
	{ "1000M", "1G", QD },
	{ "1.01E", "1010P", QD },
	{ "1E", "1E", QD },
	{ "12E", "12E", QD },
	{ "1000E", "1e21", QD },
	{ "1.G", "1G", QD },
	{ "1.", "1", QD },
	{ ".001", "1m", QD },
	{ ".", "0", QD },
	{ "+", "0", QD },
	{ "-", "0", QD },
	{ "Gi", "0", QB },
	{ "k", "0", QD },
	{ "3.001n", "4n", QD },
	{ "0.9n", "1n", QD },
	{ "0.00000012345", "124n", QD },
	{ "1.0000000001", "1000000001n", QD },
	{ "-1.0000000001", "-1000000001n", QD },
	{ "0.0000000001", "1n", QD },
	{ "1e3", "1e3", QE },
	{ "1E3", "1e3", QE },
	{ "1e+3", "1e3", QE },
	{ "1E-3", "1e-3", QE },
	{ "5e-3", "5e-3", QE },
	{ "12e-1", "1200e-3", QE },
	{ "1.5e3", "1500", QE },
	{ "1.2e3", "1200", QE },
	{ "1.3E+6", "1300e3", QE },
	{ "0.5e-9", "1e-9", QE },
	{ "1e-10", "1e-9", QE },
	{ "1.1E-9", "2e-9", QE },
	{ "1e4294967296", "1", QE },          /* the exponent is truncated to 32 bits */
	{ "1e2147483647", "10e2147483646", QE },  /* exponent lowered to a multiple of 3 */
	{ "1Ki", "1Ki", QB },
	{ "-1Ki", "-1Ki", QB },
	{ "+1Ki", "1Ki", QB },
	{ "1023Ki", "1023Ki", QB },
	{ "1024Mi", "1Gi", QB },
	{ "1048576Ki", "1Gi", QB },
	{ "100Gi", "100Gi", QB },
	{ "1024Gi", "1Ti", QB },
	{ "10Ti", "10Ti", QB },
	{ "100Ti", "100Ti", QB },
	{ "4Pi", "4Pi", QB },
	{ "1Ei", "1Ei", QB },
	{ "7Ei", "7Ei", QB },
	{ "0.5Gi", "512Mi", QB },
	{ "-1.5Gi", "-1536Mi", QB },
	{ "1.5Ki", "1536", QB },
	{ "0.5Ki", "512", QB },
	{ "0.5Mi", "512Ki", QB },
	{ "100.035Ki", "102435840m", QB },
	{ ".001Ki", "1024m", QB },
	{ ".000001Ki", "1024u", QD },
	{ "0.0001Ki", "102400u", QD },          /* below 1: no longer binary */
	{ ".000000000001Ki", "2n", QD },
	{ "8Ei", "9223372036854775807", QB },   /* capped at 2^63-1 */
	{ "9Ei", "9223372036854775807", QB },
	{ "-9Ei", "-9223372036854775807", QB },
	{ "9223372036854775807Ki", "9223372036854775807", QB },
	{ "922337203685477580", "922337203685477580", QD },
	{ "9223372036854775807", "9223372036854775807", QD },
	{ "18446744073709551616", "18446744073709551616", QD },
	{ "123456789012345678901234567890", "123456789012345678901234567890", QD },
	{ "1.23456789012345678901234567890e29", "123456789012345678901234567890", QE },
	{ "100000000000000000000000000000000000000000000000000", "100e48", QD },
	{ "170141183460469231731687303715884105727", "170141183460469231731687303715884105727",
	  QD },
};

static void test_parse_canonical(void)
{
	char buf[QUANTITY_STR_MAX];

	for (size_t i = 0; i < sizeof(canon_cases) / sizeof(canon_cases[0]); i++) {
		struct quantity q = parse_ok(canon_cases[i].in);

		if (strcmp(fmt(&q, buf), canon_cases[i].canonical))
			fprintf(stderr, "\n  input \"%s\"", canon_cases[i].in);
		DT_ASSERT_STR(buf, canon_cases[i].canonical);
		if (q.format != canon_cases[i].format)
			fprintf(stderr, "\n  input \"%s\": format %d, want %d\n", canon_cases[i].in,
				q.format, canon_cases[i].format);
		CU_ASSERT_EQUAL(q.format, canon_cases[i].format);
	}
}

/* Printing then parsing gives the same value, and printing is stable. */
static void test_round_trip(void)
{
	char a[QUANTITY_STR_MAX], b[QUANTITY_STR_MAX];

	for (size_t i = 0; i < sizeof(canon_cases) / sizeof(canon_cases[0]); i++) {
		struct quantity q = parse_ok(canon_cases[i].in), r;

		fmt(&q, a);
		r = parse_ok(a);
		CU_ASSERT_EQUAL(quantity_cmp(&q, &r), 0);
		fmt(&r, b);
		DT_ASSERT_STR(b, a);
	}
}

static const struct {
	const char *in;
	size_t len;                 /* 0: strlen */
	const char *msg;
	int rc;
} error_cases[] = {
	{ "", 0, ERR_FORMAT, -EINVAL },
	{ "1.2.3", 0, ERR_FORMAT, -EINVAL },
	{ "1 Gi", 0, ERR_FORMAT, -EINVAL },
	{ " 1", 0, ERR_FORMAT, -EINVAL },
	{ "1 ", 0, ERR_FORMAT, -EINVAL },
	{ "1\n", 0, ERR_FORMAT, -EINVAL },
	{ "1\0", 2, ERR_FORMAT, -EINVAL },
	{ "1GB", 0, ERR_FORMAT, -EINVAL },
	{ "1KI", 0, ERR_FORMAT, -EINVAL },
	{ "aoeu", 0, ERR_FORMAT, -EINVAL },
	{ "1.1.M", 0, ERR_FORMAT, -EINVAL },
	{ "1+1.0M", 0, ERR_FORMAT, -EINVAL },
	{ "0.1am", 0, ERR_FORMAT, -EINVAL },
	{ "\xc2\xbd", 0, ERR_FORMAT, -EINVAL },
	{ "--1", 0, ERR_SUFFIX, -EINVAL },
	{ "1e", 0, ERR_SUFFIX, -EINVAL },
	{ "1ee3", 0, ERR_SUFFIX, -EINVAL },
	{ "1e+", 0, ERR_SUFFIX, -EINVAL },
	{ "-3.01e-", 0, ERR_SUFFIX, -EINVAL },
	{ "0.1mi", 0, ERR_SUFFIX, -EINVAL },
	{ ".5i", 0, ERR_SUFFIX, -EINVAL },
	{ "1i", 0, ERR_SUFFIX, -EINVAL },
	{ "-3.01i", 0, ERR_SUFFIX, -EINVAL },
	{ "1K", 0, ERR_SUFFIX, -EINVAL },
	{ "1ki", 0, ERR_SUFFIX, -EINVAL },
	{ "1Ki5", 0, ERR_SUFFIX, -EINVAL },
	{ "1-", 0, ERR_SUFFIX, -EINVAL },
	{ "1+1", 0, ERR_SUFFIX, -EINVAL },
	{ "1e9223372036854775808", 0, ERR_SUFFIX, -EINVAL },
	{ "Ei", 0, ERR_NUMERIC, -EINVAL },
	{ "-Pi", 0, ERR_NUMERIC, -EINVAL },
	{ ".Ei", 0, ERR_NUMERIC, -EINVAL },
	{ "e-10", 0, ERR_NUMERIC, -EINVAL },
	/* beyond a 128-bit mantissa */
	{ "170141183460469231731687303715884105728", 0, NULL, -ERANGE },
	{ "123456789012345678901234567890123456789012345", 0, NULL, -ERANGE },
};

static void test_parse_errors(void)
{
	for (size_t i = 0; i < sizeof(error_cases) / sizeof(error_cases[0]); i++) {
		const char *in = error_cases[i].in;
		size_t len = error_cases[i].len ? error_cases[i].len : strlen(in);
		struct quantity q = quantity_from_int(7, QD), before = q;
		struct dt_err err = { 0 };
		int rc = quantity_parse(in, len, &q, &err);

		if (rc != error_cases[i].rc)
			fprintf(stderr, "\n  input \"%s\": rc %d\n", in, rc);
		CU_ASSERT_EQUAL(rc, error_cases[i].rc);
		CU_ASSERT_EQUAL(err.code, error_cases[i].rc);
		if (error_cases[i].msg) {
			DT_ASSERT_STR(err.msg, error_cases[i].msg);
		} else {
			CU_ASSERT(strstr(err.msg, "out of the representable range") != NULL);
		}
		/* the output is untouched on failure */
		CU_ASSERT_EQUAL(quantity_cmp(&q, &before), 0);
	}
	CU_ASSERT_EQUAL(quantity_parse(NULL, 0, &(struct quantity){ 0 }, NULL), -EINVAL);
	CU_ASSERT_EQUAL(quantity_parse_str(NULL, &(struct quantity){ 0 }, NULL), -EINVAL);
}

static const struct {
	const char *a, *b;
	int cmp;
} cmp_cases[] = {
	{ "1Gi", "1073741824", 0 },
	{ "1k", "1000", 0 },
	{ "1500m", "1.5", 0 },
	{ "1e3", "1k", 0 },
	{ "1Ki", "1k", 1 },
	{ "1Mi", "1M", 1 },
	{ "-1", "1", -1 },
	{ "-1Gi", "-1G", -1 },
	{ "0", "-0", 0 },
	{ "0Gi", "0m", 0 },
	{ "1n", "0", 1 },
	{ "-1n", "0", -1 },
	{ "999m", "1", -1 },
	{ "1.000000001", "1", 1 },
	{ "1e-9", "1n", 0 },
	{ "1.0000000001", "1000000001n", 0 },
	{ "8Ei", "9223372036854775807", 0 },
	{ "8Ei", "9Ei", 0 },
	{ "10000T", "100Gi", 1 },
	{ "1e38", "1e37", 1 },
	{ "1e38", "99999999999999999999999999999999999999", 1 },
	{ "123456789012345678901234567890", "1.23456789012345678901234567890e29", 0 },
	{ "123456789012345678901234567891", "1.23456789012345678901234567890e29", 1 },
	{ "1e2147483647", "1e2147483646", 1 },
	{ "-1e2147483647", "1", -1 },
	{ "-1e2147483647", "-1e2147483646", -1 },
	{ "170141183460469231731687303715884105727", "1.7e38", 1 },
	{ "0.5Gi", "512Mi", 0 },
	{ "100.035Ki", "102435.84", 0 },
};

static void test_cmp(void)
{
	for (size_t i = 0; i < sizeof(cmp_cases) / sizeof(cmp_cases[0]); i++) {
		struct quantity a = parse_ok(cmp_cases[i].a), b = parse_ok(cmp_cases[i].b);

		if (quantity_cmp(&a, &b) != cmp_cases[i].cmp)
			fprintf(stderr, "\n  cmp(%s, %s) = %d\n", cmp_cases[i].a, cmp_cases[i].b,
				quantity_cmp(&a, &b));
		CU_ASSERT_EQUAL(quantity_cmp(&a, &b), cmp_cases[i].cmp);
		CU_ASSERT_EQUAL(quantity_cmp(&b, &a), -cmp_cases[i].cmp);
		CU_ASSERT_EQUAL(quantity_cmp(&a, &a), 0);
	}
}

static void test_sign_zero(void)
{
	struct quantity z = parse_ok("0Ki"), n = parse_ok("-5m"), p = parse_ok("1n");

	CU_ASSERT(quantity_is_zero(&z));
	CU_ASSERT(!quantity_is_zero(&n));
	CU_ASSERT_EQUAL(quantity_sign(&z), 0);
	CU_ASSERT_EQUAL(quantity_sign(&n), -1);
	CU_ASSERT_EQUAL(quantity_sign(&p), 1);
}

static const struct {
	const char *a, *b;
	bool sub;
	const char *want;
	enum quantity_format format;
} arith_cases[] = {
	{ "1Gi", "512Mi", false, "1536Mi", QB },
	{ "1", "500m", false, "1500m", QD },
	{ "0", "1Gi", false, "1Gi", QB },       /* a zero receiver takes b's format */
	{ "0", "100m", false, "100m", QD },
	{ "100m", "0", false, "100m", QD },
	{ "1Gi", "0", false, "1Gi", QB },
	{ "1k", "1", false, "1001", QD },
	{ "1Ki", "1", false, "1025", QB },
	{ "1e3", "1", false, "1001", QE },
	{ "1", "999", false, "1k", QD },
	{ "1Gi", "-1Gi", false, "0", QB },
	{ "0.5Gi", "0.5Gi", false, "1Gi", QB },
	{ "1e38", "1", false, "100000000000000000000000000000000000001", QE },
	{ "1Gi", "1Mi", true, "1023Mi", QB },
	{ "0", "1Gi", true, "-1Gi", QB },
	{ "1", "1.5", true, "-500m", QD },
	{ "1k", "1", true, "999", QD },
	{ "1", "1n", true, "999999999n", QD },
	{ "100m", "100m", true, "0", QD },
};

static void test_add_sub(void)
{
	char buf[QUANTITY_STR_MAX];

	for (size_t i = 0; i < sizeof(arith_cases) / sizeof(arith_cases[0]); i++) {
		struct quantity a = parse_ok(arith_cases[i].a), b = parse_ok(arith_cases[i].b), r;
		int rc = arith_cases[i].sub ? quantity_sub(&a, &b, &r) : quantity_add(&a, &b, &r);

		CU_ASSERT_EQUAL(rc, 0);
		if (rc)
			continue;
		DT_ASSERT_STR(fmt(&r, buf), arith_cases[i].want);
		CU_ASSERT_EQUAL(r.format, arith_cases[i].format);
	}
}

/* Results that would not fit the 128-bit mantissa are refused, not wrapped. */
static void test_add_overflow(void)
{
	struct quantity max = parse_ok("170141183460469231731687303715884105727");
	struct quantity min = parse_ok("-170141183460469231731687303715884105727");
	struct quantity one = parse_ok("1"), nano = parse_ok("1n"), big = parse_ok("1e38");
	struct quantity r = quantity_from_int(42, QD), before = r;
	char buf[QUANTITY_STR_MAX];

	CU_ASSERT_EQUAL(quantity_add(&max, &one, &r), -ERANGE);
	CU_ASSERT_EQUAL(quantity_sub(&min, &one, &r), -ERANGE);
	CU_ASSERT_EQUAL(quantity_sub(&max, &min, &r), -ERANGE);
	CU_ASSERT_EQUAL(quantity_add(&big, &nano, &r), -ERANGE);
	CU_ASSERT_EQUAL(quantity_cmp(&r, &before), 0);
	/* but large values with room to spare are exact */
	CU_ASSERT_EQUAL(quantity_add(&max, &min, &r), 0);
	CU_ASSERT(quantity_is_zero(&r));
	CU_ASSERT_EQUAL(quantity_sub(&max, &one, &r), 0);
	DT_ASSERT_STR(fmt(&r, buf), "170141183460469231731687303715884105726");
}

/* int64 arithmetic that overflows moves to the arbitrary-precision form, as
 * apimachinery does: the value stays exact, asInteger() then fails. */
static void test_int64_overflow_to_dec(void)
{
	struct quantity a = quantity_from_int(INT64_MAX, QD), one = quantity_from_int(1, QD);
	struct quantity zero = quantity_from_int(0, QD), minb = quantity_from_int(INT64_MIN, QB);
	struct quantity r;
	char buf[QUANTITY_STR_MAX];
	int64_t v;

	CU_ASSERT_EQUAL(quantity_add(&a, &one, &r), 0);
	DT_ASSERT_STR(fmt(&r, buf), "9223372036854775808");
	CU_ASSERT(!quantity_is_integer(&r));
	CU_ASSERT_EQUAL(quantity_exact_int64(&r, &v), -ERANGE);

	CU_ASSERT_EQUAL(quantity_sub(&zero, &minb, &r), 0);
	CU_ASSERT_EQUAL(r.format, QB);
	DT_ASSERT_STR(fmt(&r, buf), "8Ei");
	CU_ASSERT_EQUAL(quantity_to_int64(&r, &v), -ERANGE);

	CU_ASSERT_EQUAL(quantity_add(&a, &zero, &r), 0);
	CU_ASSERT_EQUAL(quantity_to_int64(&r, &v), 0);
	CU_ASSERT_EQUAL(v, INT64_MAX);
}

/* quantity_to_int64 is CEL's asInteger() (apimachinery AsInt64): only the
 * int64 fast-path form at a non-negative scale converts. */
static const struct {
	const char *in;
	bool ok;
	int64_t v;
} int_cases[] = {
	{ "1", true, 1 },
	{ "0", true, 0 },
	{ "1k", true, 1000 },
	{ "-1k", true, -1000 },
	{ "1e3", true, 1000 },
	{ "1.5k", true, 1500 },
	{ "1Gi", true, 1073741824 },
	{ "10Ti", true, 10995116277760 },
	{ "922337203685477580", true, 922337203685477580 },
	{ "1000m", false, 0 },   /* scale -3 */
	{ "0m", false, 0 },
	{ "1.0", false, 0 },
	{ "1.5", false, 0 },
	{ "0.5Gi", false, 0 },   /* inf.Dec */
	{ "100Ti", false, 0 },   /* slow path, inf.Dec */
	{ "9223372036854775807", false, 0 },
	{ "8Ei", false, 0 },
	{ "1e19", false, 0 },    /* overflows int64 */
	{ "1n", false, 0 },
};

static void test_to_int64(void)
{
	for (size_t i = 0; i < sizeof(int_cases) / sizeof(int_cases[0]); i++) {
		struct quantity q = parse_ok(int_cases[i].in);
		int64_t v = -7;
		int rc = quantity_to_int64(&q, &v);

		if ((rc == 0) != int_cases[i].ok)
			fprintf(stderr, "\n  to_int64(%s) rc %d\n", int_cases[i].in, rc);
		CU_ASSERT_EQUAL(rc == 0, int_cases[i].ok);
		CU_ASSERT_EQUAL(quantity_is_integer(&q), int_cases[i].ok);
		if (int_cases[i].ok) {
			CU_ASSERT_EQUAL(v, int_cases[i].v);
		} else {
			CU_ASSERT_EQUAL(rc, -ERANGE);
		}
	}
}

static const struct {
	const char *in;
	int rc;
	int64_t v;
} exact_cases[] = {
	{ "1000m", 0, 1 },
	{ "0.5Gi", 0, 536870912 },
	{ "100Ti", 0, 109951162777600 },
	{ "9223372036854775807", 0, INT64_MAX },
	{ "-9223372036854775808", 0, INT64_MIN },
	{ "1e18", 0, 1000000000000000000 },
	{ "9223372036854775808", -ERANGE, 0 },
	{ "1e19", -ERANGE, 0 },
	{ "1.5", -ERANGE, 0 },
	{ "1n", -ERANGE, 0 },
	{ "0n", 0, 0 },
};

static void test_exact_int64(void)
{
	for (size_t i = 0; i < sizeof(exact_cases) / sizeof(exact_cases[0]); i++) {
		struct quantity q = parse_ok(exact_cases[i].in);
		int64_t v = -7;

		CU_ASSERT_EQUAL(quantity_exact_int64(&q, &v), exact_cases[i].rc);
		if (!exact_cases[i].rc)
			CU_ASSERT_EQUAL(v, exact_cases[i].v);
	}
}

static const struct {
	const char *in;
	int64_t v;
} ceil_cases[] = {
	{ "0", 0 },
	{ "1.5", 2 },
	{ "-1.5", -2 },
	{ "1n", 1 },
	{ "-1n", -1 },
	{ "999m", 1 },
	{ "1000m", 1 },
	{ "1001m", 2 },
	{ "100Gi", 107374182400 },
	{ "0.5Gi", 536870912 },
	{ "1.0000000001", 2 },
	{ "1e30", INT64_MAX },
	{ "-1e30", INT64_MIN },
	{ "8Ei", INT64_MAX },
	{ "1e-400", 1 },
};

static void test_value_ceil(void)
{
	for (size_t i = 0; i < sizeof(ceil_cases) / sizeof(ceil_cases[0]); i++) {
		struct quantity q = parse_ok(ceil_cases[i].in);

		if (quantity_value_ceil(&q) != ceil_cases[i].v)
			fprintf(stderr, "\n  value_ceil(%s) = %lld\n", ceil_cases[i].in,
				(long long)quantity_value_ceil(&q));
		CU_ASSERT_EQUAL(quantity_value_ceil(&q), ceil_cases[i].v);
	}
}

static void test_to_double(void)
{
	static const struct {
		const char *in;
		double v;
	} cases[] = {
		{ "0", 0.0 },
		{ "1.5", 1.5 },
		{ "-2.5k", -2500.0 },
		{ "100Gi", 107374182400.0 },
		{ "0.5Gi", 536870912.0 },
		{ "1m", 0.001 },
		{ "1n", 1e-9 },
		{ "1e-400", 1e-9 },
		{ "1e18", 1e18 },
	};
	struct quantity inf = parse_ok("1e400"), ninf = parse_ok("-1e400");

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct quantity q = parse_ok(cases[i].in);

		CU_ASSERT_DOUBLE_EQUAL(quantity_to_double(&q), cases[i].v,
				       fabs(cases[i].v) * 1e-15);
	}
	CU_ASSERT(isinf(quantity_to_double(&inf)) && quantity_to_double(&inf) > 0);
	CU_ASSERT(isinf(quantity_to_double(&ninf)) && quantity_to_double(&ninf) < 0);
}

static void test_from_int(void)
{
	static const struct {
		int64_t v;
		enum quantity_format f;
		const char *want;
	} cases[] = {
		{ 1, QD, "1" },
		{ 1000, QD, "1k" },
		{ 1234000, QD, "1234k" },
		{ 1024, QB, "1Ki" },
		{ 1048576, QB, "1Mi" },
		{ 1000000, QE, "1e6" },
		{ INT64_MIN, QD, "-9223372036854775808" },
		{ -1024, QB, "-1Ki" },
		{ -1023, QB, "-1023" },
	};
	char buf[QUANTITY_STR_MAX];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct quantity q = quantity_from_int(cases[i].v, cases[i].f);
		int64_t v;

		DT_ASSERT_STR(fmt(&q, buf), cases[i].want);
		CU_ASSERT_EQUAL(quantity_to_int64(&q, &v), 0);
		CU_ASSERT_EQUAL(v, cases[i].v);
	}
}

/* Longest outputs stay inside QUANTITY_STR_MAX. */
static void test_format_bounds(void)
{
	struct quantity q = { .mant = -((__int128)(~(unsigned __int128)0 >> 1)),
			      .exp = INT32_MIN + 1, .format = QD };
	char buf[QUANTITY_STR_MAX];
	size_t n = quantity_format(&q, buf);

	CU_ASSERT(n < QUANTITY_STR_MAX);
	DT_ASSERT_STR(buf, "-17014118346046923173168730371588410572700e-2147483649");
	q.format = QB;
	q.exp = 0;
	n = quantity_format(&q, buf);
	CU_ASSERT(n < QUANTITY_STR_MAX);
	DT_ASSERT_STR(buf, "-170141183460469231731687303715884105727");
}

static const struct {
	const char *in;
	bool keep;
} keep_cases[] = {
	{ "0", true },
	{ "1Gi", true },
	{ "100Gi", true },
	{ "01Ki", true },
	{ "+1Ki", true },
	{ "8Gi", false },
	{ "1024Mi", false },
	{ "100m", true },
	{ "1500m", true },
	{ "12.345k", true },
	{ "1e3", true },
	{ "1E3", true },
	{ "1000", false },
	{ "1.5", false },
	{ "0.1", false },
	{ "0.5Gi", false },
	{ "18446744073709551616", false },
	{ "nope", false },
};

static void test_keeps_input(void)
{
	for (size_t i = 0; i < sizeof(keep_cases) / sizeof(keep_cases[0]); i++) {
		const char *s = keep_cases[i].in;

		if (quantity_keeps_input(s, strlen(s)) != keep_cases[i].keep)
			fprintf(stderr, "\n  keeps_input(%s)\n", s);
		CU_ASSERT_EQUAL(quantity_keeps_input(s, strlen(s)), keep_cases[i].keep);
	}
}

/* The result may be written over an operand. */
static void test_add_aliasing(void)
{
	struct quantity a = parse_ok("1Gi"), b = parse_ok("512Mi");
	char buf[QUANTITY_STR_MAX];

	CU_ASSERT_EQUAL(quantity_add(&a, &b, &a), 0);
	DT_ASSERT_STR(fmt(&a, buf), "1536Mi");
	CU_ASSERT_EQUAL(quantity_sub(&a, &a, &a), 0);
	CU_ASSERT(quantity_is_zero(&a));
	CU_ASSERT_EQUAL(quantity_add(&b, &b, &b), 0);
	DT_ASSERT_STR(fmt(&b, buf), "1Gi");
}

/* Parsing reads exactly len bytes: no terminator needed, none looked at. */
static void test_length_bounded(void)
{
	char buf[QUANTITY_STR_MAX];
	struct quantity q;
	const char *s = "100Gi, more";

	CU_ASSERT_EQUAL(quantity_parse(s, 5, &q, NULL), 0);
	DT_ASSERT_STR(fmt(&q, buf), "100Gi");
	CU_ASSERT_EQUAL(quantity_parse(s, 6, &q, NULL), -EINVAL);
}

/* Random strings over the grammar's alphabet: parsing never misbehaves
 * (the sanitizer build watches), and whatever parses prints to a string
 * that parses back to the same value and prints the same again. */
static void test_random_inputs(void)
{
	static const char alphabet[] = "0123456789000.+-eEinumkKMGTPi ";
	uint64_t x = 0x9e3779b97f4a7c15u;
	unsigned parsed = 0;

	for (int iter = 0; iter < 200000; iter++) {
		char in[40], a[QUANTITY_STR_MAX], b[QUANTITY_STR_MAX];
		size_t len;
		struct quantity q, r, sum;
		struct dt_err err;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		len = 1 + x % 30;
		for (size_t i = 0; i < len; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			/* mostly digits, so that long numbers show up */
			in[i] = (x >> 8) % 3 ? alphabet[(x >> 16) % 10]
					     : alphabet[(x >> 16) % (sizeof(alphabet) - 1)];
		}
		in[len] = '\0';
		if (quantity_parse(in, len, &q, &err)) {
			CU_ASSERT(err.code == -EINVAL || err.code == -ERANGE);
			CU_ASSERT(err.msg[0] != '\0');
			continue;
		}
		parsed++;
		quantity_format(&q, a);
		if (quantity_parse_str(a, &r, &err)) {
			fprintf(stderr, "\n  %s -> %s does not parse: %s\n", in, a, err.msg);
			CU_FAIL("canonical form does not parse");
			continue;
		}
		if (quantity_cmp(&q, &r) != 0)
			fprintf(stderr, "\n  %s -> %s changes value\n", in, a);
		CU_ASSERT_EQUAL(quantity_cmp(&q, &r), 0);
		quantity_format(&r, b);
		if (strcmp(a, b) && q.format == r.format)
			fprintf(stderr, "\n  %s -> %s -> %s\n", in, a, b);
		CU_ASSERT(q.format != r.format || strcmp(a, b) == 0);
		if (quantity_add(&q, &r, &sum) == 0)
			CU_ASSERT_EQUAL(quantity_cmp(&sum, &q), quantity_sign(&q));
	}
	/* the generator must actually reach the parser's success paths */
	CU_ASSERT(parsed > 10000);
}

DT_SUITE_MAIN("quantity",
	      DT_TEST(test_parse_canonical),
	      DT_TEST(test_round_trip),
	      DT_TEST(test_parse_errors),
	      DT_TEST(test_cmp),
	      DT_TEST(test_sign_zero),
	      DT_TEST(test_add_sub),
	      DT_TEST(test_add_overflow),
	      DT_TEST(test_int64_overflow_to_dec),
	      DT_TEST(test_to_int64),
	      DT_TEST(test_exact_int64),
	      DT_TEST(test_value_ceil),
	      DT_TEST(test_to_double),
	      DT_TEST(test_from_int),
	      DT_TEST(test_format_bounds),
	      DT_TEST(test_keeps_input),
	      DT_TEST(test_add_aliasing),
	      DT_TEST(test_length_bounded),
	      DT_TEST(test_random_inputs))
