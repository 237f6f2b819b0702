/* test_base.c - errors, diagnostics lists, string buffers and the
 * toolbox: growing arrays, UTF-8, hex digits, the escapers, the map of
 * 64-bit hashes. */
#include <errno.h>
#include <stdint.h>

#include "array.h"
#include "diag.h"
#include "dt_test.h"
#include "err.h"
#include "escape.h"
#include "hash.h"
#include "hex.h"
#include "strbuf.h"
#include "u64map.h"
#include "utf8.h"

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
		/* QA-102: past the limit still 0, so that callers go on */
		CU_ASSERT_EQUAL(dt_diags_add(&d, "e%d", i), 0);
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

/* ---- strbuf extensions ---- */

static void vappend(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sb_vprintf(sb, fmt, ap);
	va_end(ap);
}

static void test_strbuf_repeat_truncate_vprintf(void)
{
	struct strbuf sb = STRBUF_INIT;

	sb_puts(&sb, "ab");
	sb_repeat(&sb, ' ', 3);
	vappend(&sb, "%d-%s", 42, "x");
	DT_ASSERT_STR(sb_str(&sb), "ab   42-x");
	sb_truncate(&sb, 2);
	DT_ASSERT_STR(sb_str(&sb), "ab");
	CU_ASSERT_EQUAL(sb.len, 2);
	sb_truncate(&sb, 10);           /* longer: nothing changes */
	DT_ASSERT_STR(sb_str(&sb), "ab");
	sb_repeat(&sb, '-', 0);
	CU_ASSERT_EQUAL(sb.len, 2);
	CU_ASSERT_EQUAL(sb_error(&sb), 0);
	sb_reset(&sb);
	sb_join_list(&sb, "a|b|c", '|', "or");
	sb_puts(&sb, "; ");
	sb_join_list(&sb, "x y", ' ', "and");
	sb_puts(&sb, "; ");
	sb_join_list(&sb, "one", ' ', "and");
	DT_ASSERT_STR(sb_str(&sb), "a, b or c; x and y; one");
	/* inline appends across a growth, one byte at a time */
	sb_reset(&sb);
	for (int i = 0; i < 1000; i++)
		sb_putc(&sb, (char)('a' + i % 26));
	CU_ASSERT_EQUAL(sb.len, 1000);
	CU_ASSERT_EQUAL(sb_str(&sb)[999], 'a' + 999 % 26);
	CU_ASSERT_EQUAL(sb_str(&sb)[1000], '\0');
	sb_free(&sb);
}

/* ---- DT_GROW ---- */

struct item {
	int a;
	char pad[12];
};

static void test_grow(void)
{
	struct item *v = NULL;
	size_t n = 0, cap = 0, prev;

	for (int i = 0; i < 1000; i++) {
		CU_ASSERT_EQUAL_FATAL(DT_GROW(v, cap, n + 1), 0);
		CU_ASSERT_TRUE(cap >= n + 1);
		v[n++].a = i;
	}
	CU_ASSERT_EQUAL(v[999].a, 999);
	CU_ASSERT_TRUE(cap < 2048);     /* doubling, not one by one */
	/* The new room is zeroed; a need within the capacity changes
	 * nothing. */
	prev = cap;
	CU_ASSERT_EQUAL(DT_GROW(v, cap, cap + 1), 0);
	CU_ASSERT_EQUAL(v[prev].a, 0);
	CU_ASSERT_EQUAL(v[cap - 1].a, 0);
	prev = cap;
	CU_ASSERT_EQUAL(DT_GROW(v, cap, 3), 0);
	CU_ASSERT_EQUAL(cap, prev);
	/* Overflowing sizes are refused, the array left alone. */
	CU_ASSERT_EQUAL(DT_GROW(v, cap, SIZE_MAX / 2), -ENOMEM);
	CU_ASSERT_EQUAL(cap, prev);
	CU_ASSERT_EQUAL(v[999].a, 999);
	free(v);
}

/* dt_strv_free: every string and the array, NULL entries and a NULL
 * array too (the sanitizer build's leak check is the assertion). */
static void test_strv_free(void)
{
	char **v = NULL;
	size_t n = 0, cap = 0;

	for (int i = 0; i < 20; i++) {
		CU_ASSERT_EQUAL_FATAL(DT_GROW(v, cap, n + 1), 0);
		v[n++] = i % 5 ? strdup("name") : NULL;
	}
	CU_ASSERT_PTR_NULL(v[5]);
	CU_ASSERT_STRING_EQUAL(v[6], "name");
	dt_strv_free(v, n);
	dt_strv_free(NULL, 3);
}

/* ---- UTF-8 ---- */

static void test_utf8_decode(void)
{
	uint32_t cp;

	CU_ASSERT_EQUAL(utf8_decode("A", 1, &cp), 1);
	CU_ASSERT_EQUAL(cp, 'A');
	CU_ASSERT_EQUAL(utf8_decode("\xc3\xa9", 2, &cp), 2);
	CU_ASSERT_EQUAL(cp, 0xe9);
	CU_ASSERT_EQUAL(utf8_decode("\xe2\x82\xac", 3, &cp), 3);
	CU_ASSERT_EQUAL(cp, 0x20ac);
	CU_ASSERT_EQUAL(utf8_decode("\xf0\x9f\x98\x80", 4, &cp), 4);
	CU_ASSERT_EQUAL(cp, 0x1f600);
	/* Truncated, overlong, surrogate, beyond U+10FFFF, stray
	 * continuation: invalid, *cp the replacement character. */
	CU_ASSERT_EQUAL(utf8_decode("\xe2\x82", 2, &cp), 0);
	CU_ASSERT_EQUAL(cp, UTF8_REPLACEMENT);
	CU_ASSERT_EQUAL(utf8_decode("\xc0\xaf", 2, &cp), 0);
	CU_ASSERT_EQUAL(utf8_decode("\xe0\x80\xaf", 3, &cp), 0);
	CU_ASSERT_EQUAL(utf8_decode("\xed\xa0\x80", 3, &cp), 0);
	CU_ASSERT_EQUAL(utf8_decode("\xf4\x90\x80\x80", 4, &cp), 0);
	CU_ASSERT_EQUAL(utf8_decode("\x80", 1, &cp), 0);
	CU_ASSERT_EQUAL(utf8_decode("", 0, &cp), 0);
	CU_ASSERT_TRUE(utf8_valid("h\xc3\xa9llo", 6));
	CU_ASSERT_FALSE(utf8_valid("h\xc3llo", 5));
	CU_ASSERT_EQUAL(utf8_count("h\xc3\xa9llo", 6), 5);
	CU_ASSERT_EQUAL(utf8_count("a\xff" "b", 3), 3);
	/* "a" U+20AC "b": a cut at bytes 2 or 3 goes back to 1. */
	CU_ASSERT_EQUAL(utf8_char_start("a\xe2\x82\xac" "b", 3), 1);
	CU_ASSERT_EQUAL(utf8_char_start("a\xe2\x82\xac" "b", 2), 1);
	CU_ASSERT_EQUAL(utf8_char_start("a\xe2\x82\xac" "b", 4), 4);
	CU_ASSERT_EQUAL(utf8_char_start("\x82\x82", 1), 0);
}

static void test_utf8_encode_round_trip(void)
{
	static const uint32_t cps[] = { 0, 0x7f, 0x80, 0x7ff, 0x800, 0xd7ff, 0xe000, 0xfffd,
					0x10000, 0x10ffff };
	char buf[UTF8_MAX];
	uint32_t back;

	for (size_t i = 0; i < sizeof(cps) / sizeof(cps[0]); i++) {
		size_t n = utf8_encode(cps[i], buf);

		CU_ASSERT_TRUE(n >= 1 && n <= 4);
		CU_ASSERT_EQUAL(utf8_decode(buf, n, &back), n);
		CU_ASSERT_EQUAL(back, cps[i]);
	}
	CU_ASSERT_EQUAL(utf8_encode(0xd800, buf), 0);
	CU_ASSERT_EQUAL(utf8_encode(0x110000, buf), 0);
}

/* ---- hex ---- */

static void test_hex(void)
{
	unsigned long v;

	CU_ASSERT_EQUAL(hex_value('0'), 0);
	CU_ASSERT_EQUAL(hex_value('a'), 10);
	CU_ASSERT_EQUAL(hex_value('F'), 15);
	CU_ASSERT_EQUAL(hex_value('g'), -1);
	CU_ASSERT_EQUAL(hex_value('\0'), -1);
	CU_ASSERT_EQUAL(hex_value_lower('f'), 15);
	CU_ASSERT_EQUAL(hex_value_lower('F'), -1);
	CU_ASSERT_EQUAL(hex_parse("10dE", 4, &v), 0);
	CU_ASSERT_EQUAL(v, 0x10de);
	CU_ASSERT_EQUAL(hex_parse("1x", 2, &v), -1);
	CU_ASSERT_EQUAL(hex_parse("123456789", 9, &v), -1);
	CU_ASSERT_EQUAL(hex_lower[11], 'b');
	CU_ASSERT_EQUAL(hex_upper[11], 'B');
}

/* ---- escapers ---- */

#define QUOTED(flags, lit, want)                                \
	do {                                                    \
		struct strbuf q_ = STRBUF_INIT;                 \
		sb_quote(&q_, lit, sizeof(lit) - 1, flags);     \
		DT_ASSERT_STR(sb_str(&q_), want);               \
		sb_free(&q_);                                   \
	} while (0)

static void test_quote(void)
{
	/* The API server's message quoting: named \n \r \t, controls and
	 * DEL as \x, UTF-8 as is. */
	QUOTED(SB_QUOTE_NAMED | SB_QUOTE_DEL, "a\"b\\c\n\x01\x7f\xc3\xa9",
	       "\"a\\\"b\\\\c\\n\\x01\\x7f\xc3\xa9\"");
	QUOTED(SB_QUOTE_BARE | SB_QUOTE_DEL, "k\ny", "k\\x0ay");
	/* Go's time.quote: every byte outside printable ASCII, DEL passes. */
	QUOTED(SB_QUOTE_ASCII, "t\xc3\xa9\x7f", "\"t\\xc3\\xa9\x7f\"");
	/* strconv.Quote: named \a..\v, invalid UTF-8 bytes \x, unprintable
	 * code points \u / \U, printable ones as they are. */
	QUOTED(SB_QUOTE_GO, "\a\v\x1b\x7f", "\"\\a\\v\\x1b\\x7f\"");
	QUOTED(SB_QUOTE_GO, "a\xff" "b\xc2\xa0\xe2\x80\x8b\xc3\xa9\xf3\xa0\x80\x81",
	       "\"a\\xffb\\u00a0\\u200b\xc3\xa9\\U000e0001\"");
}

/* The fixed-buffer form: whole escapes only, "..." at a cut, always
 * terminated. */
static void test_quote_buf(void)
{
	char buf[16];

	CU_ASSERT_EQUAL(dt_quote_buf(buf, sizeof(buf), "abc", 3, 0), 5);
	DT_ASSERT_STR(buf, "\"abc\"");
	dt_quote_buf(buf, sizeof(buf), "abcdefghijklmnopq", 17, 0);
	DT_ASSERT_STR(buf, "\"abcdefghij...\"");
	CU_ASSERT_EQUAL(strlen(buf), 15);
	dt_quote_buf(buf, sizeof(buf), "abcdefgh\x01\x02\x03", 11, SB_QUOTE_BARE);
	DT_ASSERT_STR(buf, "abcdefgh\\x01...");   /* \x02 would leave no room for ... */
	dt_quote_buf(buf, 3, "abcdef", 6, 0);
	CU_ASSERT_EQUAL(strlen(buf), 2);
	dt_quote_buf(buf, 1, "abcdef", 6, 0);
	DT_ASSERT_STR(buf, "");
}

static void test_json_string(void)
{
	struct strbuf sb = STRBUF_INIT;
	static const char in[] = "q\"\\\n\t\x01<&>\xe2\x80\xa8\xff\xc3\xa9";

	sb_json_string(&sb, in, sizeof(in) - 1);
	DT_ASSERT_STR(sb_str(&sb), "\"q\\\"\\\\\\n\\t\\u0001\\u003c\\u0026\\u003e\\u2028\\ufffd"
		      "\xc3\xa9\"");
	sb_free(&sb);
}

static void test_yaml_dquote(void)
{
	struct strbuf sb = STRBUF_INIT;
	static const char in[] = "a\"\\\n\x1b\x01\x7f\xc2\x85\xff\xc3\xa9";
	char buf[11];

	sb_yaml_dquote(&sb, in, sizeof(in) - 1);
	DT_ASSERT_STR(sb_str(&sb), "\"a\\\"\\\\\\n\\e\\x01\\x7F\\N\xef\xbf\xbd\xc3\xa9\"");
	DT_ASSERT_STR(yaml_escape(0xfeff, buf), "\\uFEFF");
	DT_ASSERT_STR(yaml_escape(0x2029, buf), "\\P");
	CU_ASSERT_PTR_NULL(yaml_escape('x', buf));
	CU_ASSERT_TRUE(yaml_printable(0x10000));
	CU_ASSERT_FALSE(yaml_printable(0x7f));
	sb_free(&sb);
}

static void test_logfmt_value(void)
{
	struct strbuf sb = STRBUF_INIT;

	sb_logfmt_value(&sb, "plain");
	sb_putc(&sb, ' ');
	sb_logfmt_value(&sb, "");
	sb_putc(&sb, ' ');
	sb_logfmt_value(&sb, "a b=c \"d\"\n\x01");
	DT_ASSERT_STR(sb_str(&sb), "plain \"\" \"a b=c \\\"d\\\"\\n\\u0001\"");
	sb_free(&sb);
}

static void test_html(void)
{
	struct strbuf sb = STRBUF_INIT;
	static const char in[] = "<a href=\"x\">Tom & Jerry's</a>\xff\xc3\xa9";

	sb_html(&sb, in, sizeof(in) - 1);
	DT_ASSERT_STR(sb_str(&sb), "&lt;a href=&quot;x&quot;&gt;Tom &amp; Jerry&#39;s&lt;/a&gt;"
		      "\xef\xbf\xbd\xc3\xa9");
	sb_reset(&sb);
	sb_html(&sb, "a\0b", 3);
	DT_ASSERT_STR(sb_str(&sb), "a\xef\xbf\xbd" "b");
	/* what XML refuses too: an SVG file stays well-formed */
	sb_reset(&sb);
	sb_html(&sb, "t\tn\nr\re\x1b[1m\x7f\xef\xbf\xbf", 15);
	DT_ASSERT_STR(sb_str(&sb), "t\tn\nr\re\xef\xbf\xbd[1m\xef\xbf\xbd\xef\xbf\xbd");
	sb_free(&sb);
}

/* FNV-1a's published test vectors, and fields that hash apart. */
static void test_hash_fnv1a(void)
{
	CU_ASSERT_EQUAL(hash_fnv1a(HASH_FNV_OFFSET, "", 0), 0xcbf29ce484222325ull);
	CU_ASSERT_EQUAL(hash_fnv1a(HASH_FNV_OFFSET, "a", 1), 0xaf63dc4c8601ec8cull);
	CU_ASSERT_EQUAL(hash_fnv1a(HASH_FNV_OFFSET, "foobar", 6), 0x85944171f73967e8ull);
	CU_ASSERT_NOT_EQUAL(hash_field(hash_field(HASH_FNV_OFFSET, "ab"), "c"),
			    hash_field(hash_field(HASH_FNV_OFFSET, "a"), "bc"));
	CU_ASSERT_EQUAL(hash_field(HASH_FNV_OFFSET, NULL), hash_field(HASH_FNV_OFFSET, ""));
}

/* The map against a plain array: 3,000 keys whose low bits collide in
 * runs (multiples of 1024), half deleted (backward shift keeps the rest
 * findable), re-put, iterated, cleared. */
static void test_u64map(void)
{
	struct u64map m = U64MAP_INIT;
	uint64_t k, v, sum = 0, want = 0;
	size_t i = 0, n = 0;

	CU_ASSERT_EQUAL(u64map_put(&m, 0, 1), -EINVAL);
	CU_ASSERT_FALSE(u64map_get(&m, 5, NULL));
	CU_ASSERT_FALSE(u64map_del(&m, 5));
	for (uint64_t j = 1; j <= 3000; j++)
		CU_ASSERT_EQUAL_FATAL(u64map_put(&m, j * 1024, j), 0);
	CU_ASSERT_EQUAL(m.n, 3000);
	for (uint64_t j = 1; j <= 3000; j += 2)
		CU_ASSERT_TRUE(u64map_del(&m, j * 1024));
	CU_ASSERT_EQUAL(m.n, 1500);
	for (uint64_t j = 1; j <= 3000; j++) {
		bool have = u64map_get(&m, j * 1024, &v);

		CU_ASSERT_EQUAL(have, j % 2 == 0);
		if (have)
			CU_ASSERT_EQUAL(v, j);
	}
	CU_ASSERT_EQUAL(u64map_put(&m, 2048, 7), 0);    /* replaces */
	CU_ASSERT_EQUAL(m.n, 1500);
	while (u64map_next(&m, &i, &k, &v)) {
		sum += v;
		n++;
	}
	for (uint64_t j = 2; j <= 3000; j += 2)
		want += j;
	CU_ASSERT_EQUAL(n, 1500);
	CU_ASSERT_EQUAL(sum, want - 2 + 7);
	{
		struct u64map copy = U64MAP_INIT;

		CU_ASSERT_EQUAL(u64map_copy(&copy, &m), 0);
		CU_ASSERT_EQUAL(copy.n, 1500);
		CU_ASSERT_TRUE(u64map_get(&copy, 2048, &v) && v == 7);
		CU_ASSERT_TRUE(u64map_del(&copy, 2048));
		CU_ASSERT_TRUE(u64map_get(&m, 2048, NULL));     /* apart */
		u64map_free(&copy);
	}
	u64map_clear(&m);
	CU_ASSERT_EQUAL(m.n, 0);
	CU_ASSERT_FALSE(u64map_get(&m, 2048, NULL));
	u64map_free(&m);
	u64map_free(&m);        /* twice is harmless */
}

DT_SUITE_MAIN("base",
	      DT_TEST(test_u64map),
	      DT_TEST(test_hash_fnv1a),
	      DT_TEST(test_err_set_negates_and_formats),
	      DT_TEST(test_err_prefix),
	      DT_TEST(test_err_truncates_long_messages),
	      DT_TEST(test_diags_collect_in_order),
	      DT_TEST(test_diags_bounded),
	      DT_TEST(test_strbuf_appends),
	      DT_TEST(test_strbuf_repeat_truncate_vprintf),
	      DT_TEST(test_grow),
	      DT_TEST(test_strv_free),
	      DT_TEST(test_utf8_decode),
	      DT_TEST(test_utf8_encode_round_trip),
	      DT_TEST(test_hex),
	      DT_TEST(test_quote),
	      DT_TEST(test_quote_buf),
	      DT_TEST(test_json_string),
	      DT_TEST(test_yaml_dquote),
	      DT_TEST(test_logfmt_value),
	      DT_TEST(test_html))
