/* test_timestamp.c - RFC 3339 as Go's time.Parse(time.RFC3339, s) reads
 * it: what it accepts beyond and short of the RFC, the fields it yields,
 * and its ParseError messages word for word. */
#include "dt_test.h"

#include "timestamp.h"

#define GO_AS " as \"" TIMESTAMP_LAYOUT "\": cannot parse "

static const struct {
	const char *in;
	int year, month, day, hour, minute, second;
	int32_t nsec;
	int offset;
} valid[] = {
	{ "2026-01-02T03:04:05Z", 2026, 1, 2, 3, 4, 5, 0, 0 },
	{ "0000-01-01T00:00:00Z", 0, 1, 1, 0, 0, 0, 0, 0 },
	{ "9999-12-31T23:59:59Z", 9999, 12, 31, 23, 59, 59, 0, 0 },
	/* leap years: every fourth, not centuries, but every fourth century */
	{ "2024-02-29T00:00:00Z", 2024, 2, 29, 0, 0, 0, 0, 0 },
	{ "2000-02-29T00:00:00Z", 2000, 2, 29, 0, 0, 0, 0, 0 },
	/* offsets, Go's range test allowing 24 hours and 60 minutes */
	{ "2026-01-02T03:04:05-07:00", 2026, 1, 2, 3, 4, 5, 0, -25200 },
	{ "2026-01-02T03:04:05+05:30", 2026, 1, 2, 3, 4, 5, 0, 19800 },
	{ "2026-01-02T03:04:05+24:60", 2026, 1, 2, 3, 4, 5, 0, 90000 },
	{ "2026-01-02T03:04:05-00:00", 2026, 1, 2, 3, 4, 5, 0, 0 },
	/* fractions: '.' or ',', any length, nine digits kept */
	{ "2026-01-02T03:04:05.5Z", 2026, 1, 2, 3, 4, 5, 500000000, 0 },
	{ "2026-01-02T03:04:05,25Z", 2026, 1, 2, 3, 4, 5, 250000000, 0 },
	{ "2026-01-02T03:04:05.123456789Z", 2026, 1, 2, 3, 4, 5, 123456789, 0 },
	{ "2026-01-02T03:04:05.1234567891234+01:00", 2026, 1, 2, 3, 4, 5, 123456789, 3600 },
	/* the hour may be one digit (Go's "15" is not fixed width) */
	{ "2026-01-02T3:04:05Z", 2026, 1, 2, 3, 4, 5, 0, 0 },
};

static void test_valid(void)
{
	for (size_t i = 0; i < sizeof(valid) / sizeof(valid[0]); i++) {
		struct timestamp t;
		struct dt_err err = { 0 };
		int rc = timestamp_parse(valid[i].in, strlen(valid[i].in), &t, &err);

		if (rc)
			fprintf(stderr, "\n  %s: %s\n", valid[i].in, err.msg);
		CU_ASSERT_EQUAL_FATAL(rc, 0);
		CU_ASSERT_EQUAL(t.year, valid[i].year);
		CU_ASSERT_EQUAL(t.month, valid[i].month);
		CU_ASSERT_EQUAL(t.day, valid[i].day);
		CU_ASSERT_EQUAL(t.hour, valid[i].hour);
		CU_ASSERT_EQUAL(t.minute, valid[i].minute);
		CU_ASSERT_EQUAL(t.second, valid[i].second);
		CU_ASSERT_EQUAL(t.nsec, valid[i].nsec);
		CU_ASSERT_EQUAL(t.offset, valid[i].offset);
	}
}

static const struct {
	const char *in, *want;
} invalid[] = {
	{ "yesterday", "parsing time \"yesterday\"" GO_AS "\"yesterday\" as \"2006\"" },
	{ "", "parsing time \"\"" GO_AS "\"\" as \"2006\"" },
	{ "26-01-02T03:04:05Z", "parsing time \"26-01-02T03:04:05Z\"" GO_AS
	  "\"26-01-02T03:04:05Z\" as \"2006\"" },
	{ "2026/01/02", "parsing time \"2026/01/02\"" GO_AS "\"/01/02\" as \"-\"" },
	{ "2026-1-02T03:04:05Z", "parsing time \"2026-1-02T03:04:05Z\"" GO_AS
	  "\"1-02T03:04:05Z\" as \"01\"" },
	{ "2026-01-02", "parsing time \"2026-01-02\"" GO_AS "\"\" as \"T\"" },
	{ "2026-01-02 03:04:05Z", "parsing time \"2026-01-02 03:04:05Z\"" GO_AS
	  "\" 03:04:05Z\" as \"T\"" },
	/* lower-case t and z: the RFC allows them, Go does not */
	{ "2026-01-02t03:04:05Z", "parsing time \"2026-01-02t03:04:05Z\"" GO_AS
	  "\"t03:04:05Z\" as \"T\"" },
	{ "2026-01-02T03:04:05z", "parsing time \"2026-01-02T03:04:05z\"" GO_AS
	  "\"z\" as \"Z07:00\"" },
	{ "2026-01-02T03:4:05Z", "parsing time \"2026-01-02T03:4:05Z\"" GO_AS
	  "\"4:05Z\" as \"04\"" },
	{ "2026-01-02T03:04:05", "parsing time \"2026-01-02T03:04:05\"" GO_AS
	  "\"\" as \"Z07:00\"" },
	{ "2026-01-02T03:04:05+0700", "parsing time \"2026-01-02T03:04:05+0700\"" GO_AS
	  "\"+0700\" as \"Z07:00\"" },
	{ "2026-01-02T03:04:05*07:00", "parsing time \"2026-01-02T03:04:05*07:00\"" GO_AS
	  "\"*07:00\" as \"Z07:00\"" },
	{ "2026-01-02T03:04:05.Z", "parsing time \"2026-01-02T03:04:05.Z\"" GO_AS
	  "\".Z\" as \"Z07:00\"" },
	/* ranges */
	{ "2026-13-01T00:00:00Z", "parsing time \"2026-13-01T00:00:00Z\": month out of range" },
	{ "2026-00-01T00:00:00Z", "parsing time \"2026-00-01T00:00:00Z\": month out of range" },
	{ "2026-01-02T24:00:00Z", "parsing time \"2026-01-02T24:00:00Z\": hour out of range" },
	{ "2026-01-02T03:60:00Z", "parsing time \"2026-01-02T03:60:00Z\": minute out of range" },
	/* no leap seconds */
	{ "2016-12-31T23:59:60Z", "parsing time \"2016-12-31T23:59:60Z\": second out of range" },
	{ "2026-01-02T03:04:05+25:00",
	  "parsing time \"2026-01-02T03:04:05+25:00\": time zone offset hour out of range" },
	{ "2026-01-02T03:04:05+01:61",
	  "parsing time \"2026-01-02T03:04:05+01:61\": time zone offset minute out of range" },
	/* days against their month, leap years included */
	{ "2023-02-29T00:00:00Z", "parsing time \"2023-02-29T00:00:00Z\": day out of range" },
	{ "1900-02-29T00:00:00Z", "parsing time \"1900-02-29T00:00:00Z\": day out of range" },
	{ "2026-04-31T00:00:00Z", "parsing time \"2026-04-31T00:00:00Z\": day out of range" },
	{ "2026-01-00T00:00:00Z", "parsing time \"2026-01-00T00:00:00Z\": day out of range" },
	{ "2026-01-02T03:04:05Zjunk",
	  "parsing time \"2026-01-02T03:04:05Zjunk\": extra text: \"junk\"" },
	/* Go's quoting of what is not printable ASCII */
	{ "caf\xc3\xa9\t\"", "parsing time \"caf\\xc3\\xa9\\x09\\\"\"" GO_AS
	  "\"caf\\xc3\\xa9\\x09\\\"\" as \"2006\"" },
};

static void test_invalid(void)
{
	for (size_t i = 0; i < sizeof(invalid) / sizeof(invalid[0]); i++) {
		struct dt_err err = { 0 };
		int rc = timestamp_parse(invalid[i].in, strlen(invalid[i].in), NULL, &err);

		CU_ASSERT_EQUAL(rc, -EINVAL);
		DT_ASSERT_STR(err.msg, invalid[i].want);
	}
}

/* The length bounds the input: a NUL byte is text, not its end. */
static void test_length(void)
{
	static const char s[] = "2026-01-02T03:04:05Z\0junk";
	struct dt_err err = { 0 };

	CU_ASSERT_EQUAL(timestamp_parse(s, 20, NULL, &err), 0);
	CU_ASSERT_EQUAL(timestamp_parse(s, sizeof(s) - 1, NULL, &err), -EINVAL);
	DT_ASSERT_STR(err.msg, "parsing time \"2026-01-02T03:04:05Z\\x00junk\": extra text: "
		      "\"\\x00junk\"");
	CU_ASSERT_EQUAL(timestamp_parse(s, 10, NULL, NULL), -EINVAL);
}

/* Formatting as the API server writes Time and MicroTime, and back. */
static void test_format_and_instant(void)
{
	static const char *const texts[] = {
		"1970-01-01T00:00:00Z", "2026-12-04T10:00:02.000000Z", "2024-02-29T23:59:59.999999Z",
		"1969-12-31T23:59:59.5Z", "2026-01-02T03:04:05.123456789Z",
	};
	static const unsigned digits[] = { 0, 6, 6, 1, 9 };
	char buf[TIMESTAMP_MAX];
	struct timestamp t;

	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		CU_ASSERT_EQUAL_FATAL(timestamp_parse(texts[i], strlen(texts[i]), &t, NULL), 0);
		DT_ASSERT_STR(timestamp_format(timestamp_unix_ns(&t), digits[i], buf, sizeof(buf)),
			      texts[i]);
	}
	/* an offset is applied; digits past the ones asked for are cut */
	CU_ASSERT_EQUAL_FATAL(timestamp_parse("2026-01-02T03:04:05.987654321-07:00", 35, &t, NULL), 0);
	DT_ASSERT_STR(timestamp_format(timestamp_unix_ns(&t), 6, buf, sizeof(buf)),
		      "2026-01-02T10:04:05.987654Z");
	DT_ASSERT_STR(timestamp_format(timestamp_unix_ns(&t), 0, buf, sizeof(buf)),
		      "2026-01-02T10:04:05Z");
	CU_ASSERT_EQUAL(timestamp_unix_ns(&t) % 1000000000, 987654321);
}

/* Unix seconds, the offset applied: the epoch, a leap day, an offset that
 * moves the date back. */
static void test_unix(void)
{
	static const struct { const char *s; int64_t secs; } cases[] = {
		{ "1970-01-01T00:00:00Z", 0 },
		{ "2024-02-29T12:00:00Z", 1709208000 },
		{ "2026-12-04T01:00:00+02:00", 1796338800 },
		{ "2026-12-03T23:00:00Z", 1796338800 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct timestamp t;

		CU_ASSERT_EQUAL_FATAL(timestamp_parse(cases[i].s, strlen(cases[i].s), &t, NULL), 0);
		CU_ASSERT_EQUAL(timestamp_unix(&t), cases[i].secs);
	}
}

DT_SUITE_MAIN("timestamp", DT_TEST(test_valid), DT_TEST(test_invalid), DT_TEST(test_length),
	      DT_TEST(test_unix), DT_TEST(test_format_and_instant))
