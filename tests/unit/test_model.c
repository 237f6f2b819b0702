/* test_model.c - decoding and defaults (placeholder, filled below). */
#include "dt_test.h"
#include "model.h"

static void test_kinds(void)
{
	CU_ASSERT_EQUAL(model_kind_lookup("v1", "Pod"), MODEL_POD);
}

DT_SUITE_MAIN("model", DT_TEST(test_kinds))
