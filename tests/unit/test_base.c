/* test_base.c - errors, diagnostics lists and string buffers. */
#include <errno.h>

#include "diag.h"
#include "dt_test.h"
#include "err.h"
#include "strbuf.h"

static void test_err_set_negates_and_formats(void)
{
	struct dt_err err;

	CU_ASSERT_EQUAL(dt_err_set(&err, EINVAL, "bad %s %d", "value", 3), -EINVAL);
	CU_ASSERT_EQUAL(err.code, -EINVAL);
	DT_ASSERT_STR(err.msg, "bad value 3");
	CU_ASSERT_EQUAL(dt_err_set(NULL, -ENOMEM, "ignored"), -ENOMEM);
}

static void test_err_prefix(void)
{
	struct dt_err err;

	dt_err_set(&err, -EINVAL, "field: wrong");
	CU_ASSERT_EQUAL(dt_err_prefix(&err, "%s: ", "a.yaml"), -EINVAL);
	DT_ASSERT_STR(err.msg, "a.yaml: field: wrong");
	dt_err_clear(&err);
	CU_ASSERT_EQUAL(err.code, 0);
	DT_ASSERT_STR(err.msg, "");
}

static void test_err_truncates_long_messages(void)
{
	char big[3 * DT_ERR_MSG_MAX];
	struct dt_err err;

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	dt_err_set(&err, -EINVAL, "%s", big);
	CU_ASSERT_EQUAL(strlen(err.msg), DT_ERR_MSG_MAX - 1);
}

static void test_diags_collect_in_order(void)
{
	struct dt_diags d;

	dt_diags_init(&d);
	CU_ASSERT_EQUAL(dt_diags_add(&d, "first %d", 1), 0);
	for (int i = 0; i < 20; i++)
		dt_diags_add(&d, "more %d", i);
	CU_ASSERT_EQUAL(dt_diags_count(&d), 21);
	DT_ASSERT_STR(d.msgs[0], "first 1");
	DT_ASSERT_STR(d.msgs[20], "more 19");
	dt_diags_free(&d);
	CU_ASSERT_EQUAL(dt_diags_count(&d), 0);
}

static void test_diags_bounded(void)
{
	struct dt_diags d;

	dt_diags_init(&d);
	for (int i = 0; i < DT_DIAG_MAX + 5; i++)
		dt_diags_add(&d, "e%d", i);
	CU_ASSERT_EQUAL(d.n, DT_DIAG_MAX);
	CU_ASSERT_EQUAL(d.dropped, 5);
	CU_ASSERT_EQUAL(dt_diags_count(&d), DT_DIAG_MAX + 5);
	dt_diags_free(&d);
}

static void test_strbuf_appends(void)
{
	struct strbuf sb = STRBUF_INIT;
	char *s;

	DT_ASSERT_STR(sb_str(&sb), "");
	sb_puts(&sb, "ab");
	sb_putc(&sb, 'c');
	sb_printf(&sb, "-%d-%s", 42, "x");
	sb_append(&sb, "yz", 1);
	DT_ASSERT_STR(sb_str(&sb), "abc-42-xy");
	CU_ASSERT_EQUAL(sb.len, 9);
	for (int i = 0; i < 1000; i++)
		sb_printf(&sb, "%04d", i);
	CU_ASSERT_EQUAL(sb.len, 9 + 4000);
	CU_ASSERT_EQUAL(sb_error(&sb), 0);
	sb_reset(&sb);
	DT_ASSERT_STR(sb_str(&sb), "");
	sb_puts(&sb, "kept");
	s = sb_detach(&sb);
	DT_ASSERT_STR(s, "kept");
	CU_ASSERT_PTR_NULL(sb.buf);
	free(s);
	s = sb_detach(&sb);     /* empty buffer detaches as "" */
	DT_ASSERT_STR(s, "");
	free(s);
}

DT_SUITE_MAIN("base",
	      DT_TEST(test_err_set_negates_and_formats),
	      DT_TEST(test_err_prefix),
	      DT_TEST(test_err_truncates_long_messages),
	      DT_TEST(test_diags_collect_in_order),
	      DT_TEST(test_diags_bounded),
	      DT_TEST(test_strbuf_appends))
