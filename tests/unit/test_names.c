/* test_names.c - the API machinery's name rules (names.h) at their edges,
 * with the messages k8s.io/apimachinery produces. */
#include <stdlib.h>
#include <string.h>

#include "dt_test.h"
#include "names.h"

/* Run rule over a C string. */
#define CHECK(rule, s, m) rule((s), strlen(s), (m))

static char *rep(char c, size_t n)
{
	char *s = malloc(n + 1);

	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	memset(s, c, n);
	s[n] = '\0';
	return s;
}

static void test_dns1123_label(void)
{
	struct names_msgs m;
	char *l63 = rep('a', 63), *l64 = rep('a', 64);

	CU_ASSERT_EQUAL(CHECK(names_dns1123_label, "gpu-0", &m), 0);
	CU_ASSERT_EQUAL(CHECK(names_dns1123_label, "0", &m), 0);
	CU_ASSERT_EQUAL(CHECK(names_dns1123_label, l63, &m), 0);
	CU_ASSERT_EQUAL(CHECK(names_dns1123_label, l64, &m), 1);
	DT_ASSERT_STR(m.m[0], "must be no more than 63 characters");
	CU_ASSERT_EQUAL(CHECK(names_dns1123_label, "-a", &m), 1);
	DT_ASSERT_STR(m.m[0], "a lowercase RFC 1123 label must consist of lower case alphanumeric "
		      "characters or '-', and must start and end with an alphanumeric character "
		      "(e.g. 'my-name',  or '123-abc', regex used for validation is "
		      "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')");
	CU_ASSERT_EQUAL(CHECK(names_dns1123_label, "a-", &m), 1);
	CU_ASSERT_EQUAL(CHECK(names_dns1123_label, "A", &m), 1);
	CU_ASSERT_EQUAL(CHECK(names_dns1123_label, "", &m), 1);
	/* Length-delimited: a NUL inside is a bad character, not the end. */
	CU_ASSERT_EQUAL(names_dns1123_label("ab\0c", 4, &m), 1);
	free(l64);
	l64 = rep('-', 64);
	CU_ASSERT_EQUAL(CHECK(names_dns1123_label, l64, &m), 2);
	free(l63);
	free(l64);
}

static void test_dns1123_subdomain(void)
{
	struct names_msgs m;
	char *l63 = rep('a', 63);
	char sub254[300];

	CU_ASSERT_EQUAL(CHECK(names_dns1123_subdomain, "gpu.nvidia.com", &m), 0);
	CU_ASSERT_EQUAL(CHECK(names_dns1123_subdomain, "a..b", &m), 1);
	DT_ASSERT_STR(m.m[0], "a lowercase RFC 1123 subdomain must consist of lower case "
		      "alphanumeric characters, '-' or '.', and must start and end with an "
		      "alphanumeric character (e.g. 'example.com', regex used for validation is "
		      "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')");
	CU_ASSERT_EQUAL(CHECK(names_dns1123_subdomain, "a.", &m), 1);
	CU_ASSERT_EQUAL(CHECK(names_dns1123_subdomain, ".a", &m), 1);
	snprintf(sub254, sizeof(sub254), "%s.%s.%s.%s", l63, l63, l63, l63);
	sub254[254] = '\0';            /* 254 characters, valid labels */
	sub254[253] = 'a';
	CU_ASSERT_EQUAL(CHECK(names_dns1123_subdomain, sub254, &m), 1);
	DT_ASSERT_STR(m.m[0], "must be no more than 253 characters");
	sub254[253] = '\0';
	CU_ASSERT_EQUAL(CHECK(names_dns1123_subdomain, sub254, &m), 0);
	free(l63);
}

static void test_dns1035_label(void)
{
	struct names_msgs m;
	char *l64 = rep('a', 64);

	CU_ASSERT_EQUAL(CHECK(names_dns1035_label, "my-name", &m), 0);
	CU_ASSERT_EQUAL(CHECK(names_dns1035_label, "a", &m), 0);
	CU_ASSERT_EQUAL(CHECK(names_dns1035_label, "abc-123", &m), 0);
	CU_ASSERT_EQUAL(CHECK(names_dns1035_label, "1abc", &m), 1);
	DT_ASSERT_STR(m.m[0], "a DNS-1035 label must consist of lower case alphanumeric characters "
		      "or '-', start with an alphabetic character, and end with an alphanumeric "
		      "character (e.g. 'my-name',  or 'abc-123', regex used for validation is "
		      "'[a-z]([-a-z0-9]*[a-z0-9])?')");
	CU_ASSERT_EQUAL(CHECK(names_dns1035_label, "", &m), 1);
	CU_ASSERT_EQUAL(CHECK(names_dns1035_label, "a-", &m), 1);
	CU_ASSERT_EQUAL(CHECK(names_dns1035_label, l64, &m), 1);
	DT_ASSERT_STR(m.m[0], "must be no more than 63 characters");
	free(l64);
}

static void test_c_identifier(void)
{
	struct names_msgs m;

	CU_ASSERT_EQUAL(CHECK(names_c_identifier, "_a1", &m), 0);
	CU_ASSERT_EQUAL(CHECK(names_c_identifier, "MyName", &m), 0);
	CU_ASSERT_EQUAL(CHECK(names_c_identifier, "a-b", &m), 1);
	CU_ASSERT_EQUAL(CHECK(names_c_identifier, "1a", &m), 1);
	CU_ASSERT_EQUAL(CHECK(names_c_identifier, "", &m), 1);
	DT_ASSERT_STR(m.m[0], "a valid C identifier must start with alphabetic character or '_', "
		      "followed by a string of alphanumeric characters or '_' (e.g. 'my_name',  or "
		      "'MY_NAME',  or 'MyName', regex used for validation is "
		      "'[A-Za-z_][A-Za-z0-9_]*')");
}

static void test_qualified_name(void)
{
	struct names_msgs m;
	char *p300 = rep('a', 300);
	char longp[320];

	CU_ASSERT_EQUAL(CHECK(names_qualified_name, "nvidia.com/gpu", &m), 0);
	CU_ASSERT_EQUAL(CHECK(names_qualified_name, "My.Name_1", &m), 0);
	CU_ASSERT_EQUAL(CHECK(names_qualified_name, "/gpu", &m), 1);
	DT_ASSERT_STR(m.m[0], "prefix part must be non-empty");
	CU_ASSERT_EQUAL(CHECK(names_qualified_name, "a/b/c", &m), 1);
	DT_ASSERT_STR(m.m[0], "a qualified name must consist of alphanumeric characters, '-', '_' "
		      "or '.', and must start and end with an alphanumeric character (e.g. "
		      "'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
		      "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain "
		      "prefix and '/' (e.g. 'example.com/MyName')");
	CU_ASSERT_EQUAL(CHECK(names_qualified_name, "Bad_Domain/x", &m), 1);
	CU_ASSERT(!strncmp(m.m[0], "prefix part a lowercase RFC 1123 subdomain", 42));
	CU_ASSERT_EQUAL(CHECK(names_qualified_name, "x/", &m), 2);
	DT_ASSERT_STR(m.m[0], "name part must be non-empty");
	CU_ASSERT(!strncmp(m.m[1], "name part must consist of", 25));
	/* A long prefix gets both of the subdomain's messages. */
	snprintf(longp, sizeof(longp), "%s_/x", p300);
	CU_ASSERT_EQUAL(CHECK(names_qualified_name, longp, &m), 2);
	DT_ASSERT_STR(m.m[0], "prefix part must be no more than 253 characters");
	CU_ASSERT(!strncmp(m.m[1], "prefix part a lowercase RFC 1123 subdomain", 42));
	free(p300);
}

static void test_label_value(void)
{
	struct names_msgs m;
	char *l64 = rep('a', 64);

	CU_ASSERT_EQUAL(CHECK(names_label_value, "", &m), 0);
	CU_ASSERT_EQUAL(CHECK(names_label_value, "v1.2_3", &m), 0);
	CU_ASSERT_EQUAL(CHECK(names_label_value, l64, &m), 1);
	CU_ASSERT_EQUAL(CHECK(names_label_value, "a b", &m), 1);
	DT_ASSERT_STR(m.m[0], "a valid label must be an empty string or consist of alphanumeric "
		      "characters, '-', '_' or '.', and must start and end with an alphanumeric "
		      "character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
		      "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')");
	free(l64);
}

static void test_mask_trailing_dash(void)
{
	static const char abc[] = "abc";
	char buf[32];
	size_t len;
	const char *r;

	len = 16;
	r = names_mask_trailing_dash("my-label-prefix-", &len, buf);
	CU_ASSERT_EQUAL_FATAL(len, 15);
	CU_ASSERT(!memcmp(r, "my-label-prefia", 15));   /* two bytes become "a" */
	len = 3;
	r = names_mask_trailing_dash(abc, &len, buf);
	CU_ASSERT_PTR_EQUAL(r, abc);                      /* unchanged: checked in place */
	CU_ASSERT_EQUAL(len, 3);
	len = 2;
	r = names_mask_trailing_dash("--", &len, buf);
	CU_ASSERT_EQUAL_FATAL(len, 1);
	CU_ASSERT_EQUAL(r[0], 'a');
	len = 1;
	CU_ASSERT_PTR_NULL(names_mask_trailing_dash("-", &len, buf));
	len = 0;
	CU_ASSERT_PTR_NOT_NULL(names_mask_trailing_dash("", &len, buf));
}

DT_SUITE_MAIN("names",
	      DT_TEST(test_dns1123_label),
	      DT_TEST(test_dns1123_subdomain),
	      DT_TEST(test_dns1035_label),
	      DT_TEST(test_c_identifier),
	      DT_TEST(test_qualified_name),
	      DT_TEST(test_label_value),
	      DT_TEST(test_mask_trailing_dash))
