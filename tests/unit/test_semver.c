/* test_semver.c - blang/semver v4 parsing and messages, the CEL library's
 * normalization, ordering, printing and the API server's version-attribute
 * check. */
#include "dt_test.h"

#include "semver.h"

static const char *fmt(const struct semver *v, char *buf)
{
	size_t n = semver_format(v, buf);

	CU_ASSERT(n < SEMVER_STR_MAX);
	CU_ASSERT_EQUAL(n, strlen(buf));
	return buf;
}

static const struct {
	const char *in;
	uint64_t major, minor, patch;
	const char *pre, *build;
} valid_cases[] = {
	{ "1.2.3", 1, 2, 3, "", "" },
	{ "0.0.0", 0, 0, 0, "", "" },
	{ "10.20.30", 10, 20, 30, "", "" },
	{ "1.0.0-0", 1, 0, 0, "0", "" },
	{ "1.0.0-alpha.1", 1, 0, 0, "alpha.1", "" },
	{ "1.0.0-alpha.beta", 1, 0, 0, "alpha.beta", "" },
	{ "1.0.0-0a.00a.-", 1, 0, 0, "0a.00a.-", "" },
	{ "1.0.0-x-y-z.--", 1, 0, 0, "x-y-z.--", "" },
	{ "1.0.0+20130313144700", 1, 0, 0, "", "20130313144700" },
	{ "1.0.0+001.02", 1, 0, 0, "", "001.02" },
	{ "1.0.0-beta+exp.sha.5114f85", 1, 0, 0, "beta", "exp.sha.5114f85" },
	{ "1.0.0+21AF26D3----117B344092BD", 1, 0, 0, "", "21AF26D3----117B344092BD" },
	{ "1.2.3+b-1", 1, 2, 3, "", "b-1" },
	{ "1.2.3-rc-1+b", 1, 2, 3, "rc-1", "b" },
	{ "18446744073709551615.18446744073709551615.18446744073709551615",
	  UINT64_MAX, UINT64_MAX, UINT64_MAX, "", "" },
	{ "1.0.0-18446744073709551615", 1, 0, 0, "18446744073709551615", "" },
};

static void test_parse_valid(void)
{
	char buf[SEMVER_STR_MAX];

	for (size_t i = 0; i < sizeof(valid_cases) / sizeof(valid_cases[0]); i++) {
		struct semver v;
		struct dt_err err = { 0 };
		const char *in = valid_cases[i].in;
		int rc = semver_parse(in, strlen(in), &v, &err);

		if (rc)
			fprintf(stderr, "\n  parse(%s): %s\n", in, err.msg);
		CU_ASSERT_EQUAL_FATAL(rc, 0);
		CU_ASSERT_EQUAL(v.major, valid_cases[i].major);
		CU_ASSERT_EQUAL(v.minor, valid_cases[i].minor);
		CU_ASSERT_EQUAL(v.patch, valid_cases[i].patch);
		DT_ASSERT_STR(v.pre, valid_cases[i].pre);
		DT_ASSERT_STR(v.build, valid_cases[i].build);
		/* printing gives the input back */
		DT_ASSERT_STR(fmt(&v, buf), in);
	}
}

static const struct {
	const char *in;
	const char *msg;
} error_cases[] = {
	{ "", "Version string empty" },
	{ "1", "No Major.Minor.Patch elements found" },
	{ "1.2", "No Major.Minor.Patch elements found" },
	{ "v1.0", "No Major.Minor.Patch elements found" },
	{ "v1.2.3", "Invalid character(s) found in major number \"v1\"" },
	{ " 1.2.3", "Invalid character(s) found in major number \" 1\"" },
	{ "a.b.c", "Invalid character(s) found in major number \"a\"" },
	{ "01.2.3", "Major number must not contain leading zeroes \"01\"" },
	{ "1.x.3", "Invalid character(s) found in minor number \"x\"" },
	{ "1.02.3", "Minor number must not contain leading zeroes \"02\"" },
	{ "1.2.03", "Patch number must not contain leading zeroes \"03\"" },
	{ "1.2.3.4", "Invalid character(s) found in patch number \"3.4\"" },
	{ "1.2.3 ", "Invalid character(s) found in patch number \"3 \"" },
	{ "1.2.x-rc", "Invalid character(s) found in patch number \"x\"" },
	{ "1..3", "strconv.ParseUint: parsing \"\": invalid syntax" },
	{ ".2.3", "strconv.ParseUint: parsing \"\": invalid syntax" },
	{ "1.2.", "strconv.ParseUint: parsing \"\": invalid syntax" },
	{ "1.2.-rc", "strconv.ParseUint: parsing \"\": invalid syntax" },
	{ "18446744073709551616.0.0",
	  "strconv.ParseUint: parsing \"18446744073709551616\": value out of range" },
	{ "0.99999999999999999999.0",
	  "strconv.ParseUint: parsing \"99999999999999999999\": value out of range" },
	{ "1.2.3-18446744073709551616",
	  "strconv.ParseUint: parsing \"18446744073709551616\": value out of range" },
	{ "1.2.3-01", "Numeric PreRelease version must not contain leading zeroes \"01\"" },
	{ "1.2.3-rc.00", "Numeric PreRelease version must not contain leading zeroes \"00\"" },
	{ "1.2.3-", "Prerelease is empty" },
	{ "1.2.3-a..b", "Prerelease is empty" },
	{ "1.2.3-a.", "Prerelease is empty" },
	{ "1.2.3-+b", "Prerelease is empty" },
	{ "1.2.3-@", "Invalid character(s) found in prerelease \"@\"" },
	{ "1.2.3-a_b", "Invalid character(s) found in prerelease \"a_b\"" },
	{ "1.2.3-rc\n", "Invalid character(s) found in prerelease \"rc\\n\"" },
	{ "1.2.3-\"q\"", "Invalid character(s) found in prerelease \"\\\"q\\\"\"" },
	{ "1.2.3-\x01", "Invalid character(s) found in prerelease \"\\x01\"" },
	{ "1.2.3-\xff", "Invalid character(s) found in prerelease \"\\xff\"" },
	{ "1.2.3-\xc3\xa9", "Invalid character(s) found in prerelease \"\xc3\xa9\"" },
	{ "1.2.3-a\xc2\xa0", "Invalid character(s) found in prerelease \"a\\u00a0\"" },
	{ "1.2.3-\xef\xbb\xbf", "Invalid character(s) found in prerelease \"\\ufeff\"" },
	{ "1.2.3-\x7f", "Invalid character(s) found in prerelease \"\\x7f\"" },
	{ "1.2.3-\xf3\xa0\x80\x81", "Invalid character(s) found in prerelease \"\\U000e0001\"" },
	{ "1.2.3+", "Build meta data is empty" },
	{ "1.2.3+a..b", "Build meta data is empty" },
	{ "1.2.3+a_b", "Invalid character(s) found in build meta data \"a_b\"" },
	{ "1.2.3+a+b", "Invalid character(s) found in build meta data \"a+b\"" },
	/* pre-release checks come before build checks, as in blang */
	{ "1.2.3-@+_", "Invalid character(s) found in prerelease \"@\"" },
};

static void test_parse_errors(void)
{
	for (size_t i = 0; i < sizeof(error_cases) / sizeof(error_cases[0]); i++) {
		struct semver v;
		struct dt_err err = { 0 };
		const char *in = error_cases[i].in;
		int rc = semver_parse(in, strlen(in), &v, &err);

		CU_ASSERT_EQUAL(rc, -EINVAL);
		CU_ASSERT_EQUAL(err.code, -EINVAL);
		DT_ASSERT_STR(err.msg, error_cases[i].msg);
	}
	CU_ASSERT_EQUAL(semver_parse(NULL, 0, &(struct semver){ 0 }, NULL), -EINVAL);
	CU_ASSERT_EQUAL(semver_parse_normalized(NULL, 0, &(struct semver){ 0 }, NULL), -EINVAL);
}

/* pre and build live in fixed buffers: longer ones are refused. */
static void test_too_long(void)
{
	char in[256], buf[SEMVER_STR_MAX];
	struct semver v;
	struct dt_err err = { 0 };

	snprintf(in, sizeof(in), "1.0.0-%.*s", SEMVER_MAX_LEN,
		 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
	CU_ASSERT_EQUAL(semver_parse(in, strlen(in), &v, &err), 0);
	CU_ASSERT_EQUAL(strlen(v.pre), SEMVER_MAX_LEN);
	DT_ASSERT_STR(fmt(&v, buf), in);

	strcat(in, "a");
	CU_ASSERT_EQUAL(semver_parse(in, strlen(in), &v, &err), -E2BIG);
	CU_ASSERT(strncmp(err.msg, "version too long", 16) == 0);

	snprintf(in, sizeof(in), "1.0.0+%065d", 0);
	CU_ASSERT_EQUAL(semver_parse(in, strlen(in), &v, &err), -E2BIG);
	/* an invalid long one still gets blang's message */
	snprintf(in, sizeof(in), "1.0.0-%070d", 1);
	CU_ASSERT_EQUAL(semver_parse(in, strlen(in), &v, &err), -EINVAL);
	CU_ASSERT(strstr(err.msg, "leading zeroes") != NULL);
}

static const struct {
	const char *in;
	const char *want;           /* formatted result, or NULL */
	const char *msg;            /* error otherwise */
} norm_cases[] = {
	{ "1.2.3", "1.2.3", NULL },
	{ "v1.2.3", "1.2.3", NULL },
	{ "1", "1.0.0", NULL },
	{ "v1", "1.0.0", NULL },
	{ "v1.2", "1.2.0", NULL },
	{ "01.02.03", "1.2.3", NULL },
	{ "000", "0.0.0", NULL },
	{ "1.2.00", "1.2.0", NULL },
	{ "1.2.03-rc", "1.2.3-rc", NULL },
	{ "1.2.00-rc", "1.2.0-rc", NULL },
	{ "v1.2.3-rc.1+b.5", "1.2.3-rc.1+b.5", NULL },
	{ "1.0-alpha", NULL, "short version cannot contain PreRelease/Build meta data" },
	{ "1.0+b", NULL, "short version cannot contain PreRelease/Build meta data" },
	{ "1-rc", NULL, "short version cannot contain PreRelease/Build meta data" },
	/* a part not starting with a digit gets a "0" in front, as the library does */
	{ "vv1.2.3", NULL, "Invalid character(s) found in major number \"0v1\"" },
	{ "V1.2.3", NULL, "Invalid character(s) found in major number \"0V1\"" },
	{ " 1.2.3", NULL, "Invalid character(s) found in major number \"0 1\"" },
	{ "1.a1.0", NULL, "Invalid character(s) found in minor number \"0a1\"" },
	{ "1.2.3.4", NULL, "Invalid character(s) found in patch number \"3.4\"" },
	{ "1.2.03-rc.01", NULL, "Numeric PreRelease version must not contain leading zeroes \"01\"" },
	{ "", NULL, "strconv.ParseUint: parsing \"\": invalid syntax" },
	{ "v", NULL, "strconv.ParseUint: parsing \"\": invalid syntax" },
	{ "1.", NULL, "strconv.ParseUint: parsing \"\": invalid syntax" },
};

static void test_normalized(void)
{
	char buf[SEMVER_STR_MAX];

	for (size_t i = 0; i < sizeof(norm_cases) / sizeof(norm_cases[0]); i++) {
		struct semver v;
		struct dt_err err = { 0 };
		const char *in = norm_cases[i].in;
		int rc = semver_parse_normalized(in, strlen(in), &v, &err);

		if (norm_cases[i].want) {
			CU_ASSERT_EQUAL(rc, 0);
			if (!rc)
				DT_ASSERT_STR(fmt(&v, buf), norm_cases[i].want);
		} else {
			CU_ASSERT_EQUAL(rc, -EINVAL);
			DT_ASSERT_STR(err.msg, norm_cases[i].msg);
		}
	}
}

static struct semver sv(const char *s)
{
	struct semver v;

	memset(&v, 0, sizeof(v));
	CU_ASSERT_EQUAL(semver_parse(s, strlen(s), &v, NULL), 0);
	return v;
}

static const struct {
	const char *a, *b;
	int cmp;
} cmp_cases[] = {
	{ "1.0.0", "2.0.0", -1 },
	{ "2.0.0", "2.1.0", -1 },
	{ "2.1.0", "2.1.1", -1 },
	{ "1.10.0", "1.9.0", 1 },
	{ "1.0.0-alpha", "1.0.0", -1 },
	{ "1.0.0-alpha", "1.0.0-alpha.1", -1 },
	{ "1.0.0-alpha.1", "1.0.0-alpha.beta", -1 },
	{ "1.0.0-alpha.beta", "1.0.0-beta", -1 },
	{ "1.0.0-beta", "1.0.0-beta.2", -1 },
	{ "1.0.0-beta.2", "1.0.0-beta.11", -1 },
	{ "1.0.0-beta.11", "1.0.0-rc.1", -1 },
	{ "1.0.0-rc.1", "1.0.0", -1 },
	{ "1.0.0-0", "1.0.0-a", -1 },
	{ "1.0.0-1", "1.0.0-0", 1 },
	{ "1.0.0-9", "1.0.0-10", -1 },
	{ "1.0.0-18446744073709551615", "1.0.0-9", 1 },
	{ "1.0.0-A", "1.0.0-a", -1 },
	{ "1.0.0-a-b", "1.0.0-a", 1 },
	{ "1.0.0-1a", "1.0.0-1", 1 },
	{ "1.0.0+a", "1.0.0+b", 0 },
	{ "1.0.0-rc.1+b1", "1.0.0-rc.1+b2", 0 },
	{ "1.0.0", "1.0.0", 0 },
	{ "18446744073709551615.0.0", "18446744073709551614.0.0", 1 },
	{ "0.0.18446744073709551615", "0.1.0", -1 },
};

static void test_cmp(void)
{
	for (size_t i = 0; i < sizeof(cmp_cases) / sizeof(cmp_cases[0]); i++) {
		struct semver a = sv(cmp_cases[i].a), b = sv(cmp_cases[i].b);

		if (semver_cmp(&a, &b) != cmp_cases[i].cmp)
			fprintf(stderr, "\n  cmp(%s, %s) = %d\n", cmp_cases[i].a, cmp_cases[i].b,
				semver_cmp(&a, &b));
		CU_ASSERT_EQUAL(semver_cmp(&a, &b), cmp_cases[i].cmp);
		CU_ASSERT_EQUAL(semver_cmp(&b, &a), -cmp_cases[i].cmp);
		CU_ASSERT_EQUAL(semver_cmp(&a, &a), 0);
	}
}

/* The SemVer 2.0.0 precedence chain is a total order: check transitivity. */
static void test_cmp_chain(void)
{
	static const char *const chain[] = {
		"1.0.0-0", "1.0.0-1", "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta",
		"1.0.0-beta", "1.0.0-beta.2", "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0",
		"1.0.1", "1.1.0", "2.0.0",
	};
	size_t n = sizeof(chain) / sizeof(chain[0]);

	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; j < n; j++) {
			struct semver a = sv(chain[i]), b = sv(chain[j]);
			int want = i < j ? -1 : i > j;

			CU_ASSERT_EQUAL(semver_cmp(&a, &b), want);
		}
	}
}

static const struct {
	const char *in;
	bool ok;
} attr_cases[] = {
	{ "1.2.3", true },
	{ "0.0.0", true },
	{ "1.2.3-0", true },
	{ "1.2.3-0a", true },
	{ "1.2.3-00a", true },
	{ "1.2.3-a.1.b", true },
	{ "1.2.3+01", true },
	{ "1.2.3-a+b.c", true },
	{ "1.2.3--", true },
	{ "99999999999999999999.0.0", true },   /* the regex has no numeric bound */
	{ "", false },
	{ "v1.2.3", false },
	{ "1.2", false },
	{ "1.2.3.4", false },
	{ "01.2.3", false },
	{ "1.02.3", false },
	{ "1.2.03", false },
	{ "1.2.3-01", false },
	{ "1.2.3-", false },
	{ "1.2.3+", false },
	{ "1.2.3-a..b", false },
	{ "1.2.3+a..b", false },
	{ "1.2.3-a_b", false },
	{ "1.2.3 ", false },
	{ "1.2.3\n", false },
	{ "1.2.3+b-c+d", false },
};

static void test_valid_attribute(void)
{
	char long_ok[SEMVER_MAX_LEN + 2];

	for (size_t i = 0; i < sizeof(attr_cases) / sizeof(attr_cases[0]); i++) {
		const char *s = attr_cases[i].in;

		if (semver_is_valid_attribute(s, strlen(s)) != attr_cases[i].ok)
			fprintf(stderr, "\n  valid_attribute(%s)\n", s);
		CU_ASSERT_EQUAL(semver_is_valid_attribute(s, strlen(s)), attr_cases[i].ok);
	}
	/* exactly 64 bytes passes, 65 fails */
	memset(long_ok, 'a', sizeof(long_ok));
	memcpy(long_ok, "1.2.3-", 6);
	CU_ASSERT(semver_is_valid_attribute(long_ok, SEMVER_MAX_LEN));
	CU_ASSERT(!semver_is_valid_attribute(long_ok, SEMVER_MAX_LEN + 1));
	CU_ASSERT(!semver_is_valid_attribute(NULL, 0));
}

/* Every valid attribute without overflowing numbers parses, and the other
 * way round for the strict parser's successes. */
static void test_attribute_agrees_with_parse(void)
{
	for (size_t i = 0; i < sizeof(valid_cases) / sizeof(valid_cases[0]); i++) {
		const char *s = valid_cases[i].in;

		if (strlen(s) <= SEMVER_MAX_LEN)
			CU_ASSERT(semver_is_valid_attribute(s, strlen(s)));
	}
	for (size_t i = 0; i < sizeof(error_cases) / sizeof(error_cases[0]); i++) {
		const char *s = error_cases[i].in;

		if (!strstr(error_cases[i].msg, "out of range"))
			CU_ASSERT(!semver_is_valid_attribute(s, strlen(s)));
	}
}

/* Parsing reads exactly len bytes. */
static void test_length_bounded(void)
{
	struct semver v;
	char buf[SEMVER_STR_MAX];
	const char *s = "1.2.3-rc.1, and more";

	CU_ASSERT_EQUAL(semver_parse(s, 10, &v, NULL), 0);
	DT_ASSERT_STR(fmt(&v, buf), "1.2.3-rc.1");
	CU_ASSERT(semver_is_valid_attribute(s, 10));
	CU_ASSERT(!semver_is_valid_attribute(s, 11));
	CU_ASSERT_EQUAL(semver_parse_normalized("v2.1xyz", 4, &v, NULL), 0);
	DT_ASSERT_STR(fmt(&v, buf), "2.1.0");
}

/* Random strings near the grammar: no misbehaviour, strict successes print
 * back unchanged and agree with the attribute check, normalized successes
 * are stable under a second strict parse. */
static void test_random_inputs(void)
{
	static const char alphabet[] = "0123456789...--+aZv_";
	uint64_t x = 0x243f6a8885a308d3u;
	unsigned parsed = 0;

	for (int iter = 0; iter < 200000; iter++) {
		char in[80], buf[SEMVER_STR_MAX];
		size_t len;
		struct semver v, w;
		struct dt_err err;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		len = x % 72;
		for (size_t i = 0; i < len; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			in[i] = (x >> 8) % 2 ? alphabet[(x >> 16) % 10]
					     : alphabet[(x >> 16) % (sizeof(alphabet) - 1)];
		}
		in[len] = '\0';
		if (semver_parse(in, len, &v, &err) == 0) {
			parsed++;
			DT_ASSERT_STR(fmt(&v, buf), in);
			if (len <= SEMVER_MAX_LEN)
				CU_ASSERT(semver_is_valid_attribute(in, len));
		} else {
			CU_ASSERT(err.msg[0] != '\0');
			if (!strstr(err.msg, "out of range") && !strstr(err.msg, "too long"))
				CU_ASSERT(!semver_is_valid_attribute(in, len));
		}
		if (semver_parse_normalized(in, len, &v, &err) == 0) {
			fmt(&v, buf);
			CU_ASSERT_EQUAL(semver_parse(buf, strlen(buf), &w, NULL), 0);
			CU_ASSERT_EQUAL(semver_cmp(&v, &w), 0);
		}
	}
	CU_ASSERT(parsed > 100);
}

DT_SUITE_MAIN("semver",
	      DT_TEST(test_parse_valid),
	      DT_TEST(test_parse_errors),
	      DT_TEST(test_too_long),
	      DT_TEST(test_normalized),
	      DT_TEST(test_cmp),
	      DT_TEST(test_cmp_chain),
	      DT_TEST(test_valid_attribute),
	      DT_TEST(test_attribute_agrees_with_parse),
	      DT_TEST(test_length_bounded),
	      DT_TEST(test_random_inputs))
