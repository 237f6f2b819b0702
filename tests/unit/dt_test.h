/* dt_test.h - the little harness every CUnit suite uses.
 *
 *   static void test_parse(void) { CU_ASSERT_EQUAL(...); }
 *   DT_SUITE_MAIN("quantity", DT_TEST(test_parse), DT_TEST(test_cmp))
 *
 * The runner prints CUnit's verbose report (one line per test and the run
 * summary) and exits non-zero when any assertion or suite setup failed:
 * CU_get_number_of_failures() alone misses failed suite inits. */
#ifndef DT_TEST_H
#define DT_TEST_H

#include <CUnit/Basic.h>
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct dt_test_case {
	const char *name;
	CU_TestFunc fn;
};

#define DT_TEST(fn) { #fn, fn }

/* Absolute path of a file under tests/fixtures (static buffer). */
static inline const char *dt_fixture(const char *rel)
{
	static char path[4096];

	snprintf(path, sizeof(path), "%s/tests/fixtures/%s", DT_SOURCE_DIR, rel);
	return path;
}

/* The agent's sysfs fixtures under DT_BINARY_DIR/fixtures/agent, built by
 * tests/fixtures/agent/mksysfs.sh when missing (ctest's agent_fixtures
 * builds them first; this is for a suite run by hand). A suite's init:
 * 0, or -1 when they cannot be built. */
#define DT_AGENT_FIXTURES DT_BINARY_DIR "/fixtures/agent"
static inline int dt_agent_fixtures(void)
{
	char cmd[8192];

	if (access(DT_AGENT_FIXTURES "/p5.48xlarge-degraded/sys", F_OK) == 0)
		return 0;
	snprintf(cmd, sizeof(cmd), "bash '%s/tests/fixtures/agent/mksysfs.sh' '%s' >/dev/null",
		 DT_SOURCE_DIR, DT_AGENT_FIXTURES);
	return system(cmd) == 0 ? 0 : -1;
}

static inline int dt_run_suite(const char *name, const struct dt_test_case *tests,
			       size_t n, CU_InitializeFunc init, CU_CleanupFunc cleanup)
{
	unsigned failures;
	CU_pSuite suite;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 2;
	suite = CU_add_suite(name, init, cleanup);
	if (!suite)
		goto fail;
	for (size_t i = 0; i < n; i++)
		if (!CU_add_test(suite, tests[i].name, tests[i].fn))
			goto fail;
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failures = CU_get_number_of_failure_records();
	if (CU_get_error() != CUE_SUCCESS)
		failures++;
	printf("\n%s: %u tests, %u failure records\n", name,
	       CU_get_number_of_tests_run(), failures);
	CU_cleanup_registry();
	return failures ? 1 : 0;
fail:
	fprintf(stderr, "%s: cannot register tests: %s\n", name, CU_get_error_msg());
	CU_cleanup_registry();
	return 2;
}

#define DT_SUITE_MAIN_WITH(name, init, cleanup, ...)                              \
	int main(void)                                                            \
	{                                                                         \
		static const struct dt_test_case dt_tests_[] = { __VA_ARGS__ };   \
		return dt_run_suite(name, dt_tests_,                              \
				    sizeof(dt_tests_) / sizeof(dt_tests_[0]),     \
				    init, cleanup);                               \
	}

#define DT_SUITE_MAIN(name, ...) DT_SUITE_MAIN_WITH(name, NULL, NULL, __VA_ARGS__)

/* String equality with both values in the failure message. */
#define DT_ASSERT_STR(actual, expected)                                           \
	do {                                                                      \
		const char *dt_a_ = (actual), *dt_e_ = (expected);                \
		int dt_ok_ = dt_a_ && dt_e_ && strcmp(dt_a_, dt_e_) == 0;         \
		if (!dt_ok_)                                                      \
			fprintf(stderr, "\n  %s:%d: got \"%s\", want \"%s\"\n",   \
				__FILE__, __LINE__, dt_a_ ? dt_a_ : "(null)",     \
				dt_e_ ? dt_e_ : "(null)");                        \
		CU_ASSERT(dt_ok_);                                                \
	} while (0)

#endif
