/* test_html_escape.c - html_escape.h: entities, UTF-8 kept or replaced,
 * control characters replaced, embedded NULs. */
#include "dt_test.h"
#include "html_escape.h"

static void check(const char *in, size_t n, const char *want)
{
	struct strbuf sb = STRBUF_INIT;

	sb_put_html_n(&sb, in, n);
	DT_ASSERT_STR(sb_str(&sb), want);
	sb_free(&sb);
}

static void test_entities(void)
{
	const char *s = "<script>alert(\"x\" & 'y')</script>";

	check(s, strlen(s), "&lt;script&gt;alert(&quot;x&quot; &amp; &#39;y&#39;)&lt;/script&gt;");
	check("plain p5.48xlarge", 17, "plain p5.48xlarge");
	check("", 0, "");
}

static void test_utf8(void)
{
	/* kept: 2, 3 and 4 byte sequences */
	check("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 9, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
	/* replaced: a lone continuation byte, a cut sequence, an overlong '<',
	 * a surrogate, U+FFFF */
	check("a\x80z", 3, "a\xef\xbf\xbdz");
	check("a\xe2\x82", 3, "a\xef\xbf\xbd\xef\xbf\xbd");
	check("\xc0\xbc", 2, "\xef\xbf\xbd\xef\xbf\xbd");
	check("\xed\xa0\x80", 3, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	check("\xef\xbf\xbf", 3, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	CU_ASSERT_EQUAL(utf8_seq_len("\xf0\x9f\x98\x80", 4), 4);
	CU_ASSERT_EQUAL(utf8_seq_len("\xf0\x9f\x98", 3), 0);
}

static void test_controls(void)
{
	check("a\tb\nc", 5, "a\tb\nc");
	check("a\rb\x1b[1m\x7f", 8, "a\xef\xbf\xbd" "b\xef\xbf\xbd[1m\xef\xbf\xbd");
	check("a\0b", 3, "a\xef\xbf\xbd" "b");
}

static void test_null_string(void)
{
	struct strbuf sb = STRBUF_INIT;

	sb_put_html(&sb, NULL);
	sb_put_html(&sb, "x>y");
	DT_ASSERT_STR(sb_str(&sb), "x&gt;y");
	sb_free(&sb);
}

DT_SUITE_MAIN("html_escape",
	      DT_TEST(test_entities),
	      DT_TEST(test_utf8),
	      DT_TEST(test_controls),
	      DT_TEST(test_null_string))
