/* timestamp.c - RFC 3339 times the way Go's time.Parse(time.RFC3339, s)
 * reads them, and its ParseError messages (timestamp.h).
 *
 * Go walks its layout "2006-01-02T15:04:05Z07:00" one element at a time:
 * a literal prefix, then a field. A value that does not fit is reported
 * with the rest of the input and the element it failed at ("cannot parse
 * "x:00Z" as "04""); a field that fits but is out of its range is named
 * ("minute out of range"). The walk is table-driven the same way, so that
 * each message is the one Go gives for the same input. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "escape.h"
#include "strbuf.h"
#include "timestamp.h"

enum field { F_YEAR, F_MONTH, F_DAY, F_HOUR, F_MINUTE, F_SECOND, F_ZONE };

/* The layout as Go splits it: each element's literal prefix and its text. */
static const struct {
	const char *prefix, *elem;
} layout[] = {
	[F_YEAR] = { "", "2006" }, [F_MONTH] = { "-", "01" }, [F_DAY] = { "-", "02" },
	[F_HOUR] = { "T", "15" }, [F_MINUTE] = { ":", "04" }, [F_SECOND] = { ":", "05" },
	[F_ZONE] = { "", "Z07:00" },
};

/* What is left of the input. */
struct rest {
	const char *s;
	size_t n;
};

static bool digit_at(const struct rest *r, size_t i)
{
	return i < r->n && r->s[i] >= '0' && r->s[i] <= '9';
}

static void skip(struct rest *r, size_t k)
{
	r->s += k;
	r->n -= k;
}

/* Go's getnum: two digits, or one when not fixed. */
static bool getnum(struct rest *r, bool fixed, int *v)
{
	if (!digit_at(r, 0) || (fixed && !digit_at(r, 1)))
		return false;
	if (!digit_at(r, 1)) {
		*v = r->s[0] - '0';
		skip(r, 1);
		return true;
	}
	*v = (r->s[0] - '0') * 10 + (r->s[1] - '0');
	skip(r, 2);
	return true;
}

/* A fraction after the seconds, though the layout has none: Go takes a
 * '.' or ',' and every digit after it, keeping the first nine. */
static void fraction(struct rest *r, int32_t *nsec)
{
	size_t n = 1;
	int32_t ns = 0;

	if (!(r->n >= 2 && (r->s[0] == '.' || r->s[0] == ',') && digit_at(r, 1)))
		return;
	while (digit_at(r, n))
		n++;
	for (size_t i = 1; i < 10; i++)
		ns = ns * 10 + (i < n ? r->s[i] - '0' : 0);
	*nsec = ns;
	skip(r, n);
}

/* "Z", or a sign, two digits, ':', two digits (Go's range test allows 24
 * hours and 60 minutes: "some people do write" them). */
static bool zone(struct rest *r, int *offset, const char **range)
{
	struct rest hh, mm;
	int h = 0, m = 0;
	bool ok;

	if (r->n >= 1 && r->s[0] == 'Z') {
		*offset = 0;
		skip(r, 1);
		return true;
	}
	if (r->n < 6 || r->s[3] != ':')
		return false;
	hh = (struct rest){ r->s + 1, 2 };
	mm = (struct rest){ r->s + 4, 2 };
	ok = getnum(&hh, true, &h) && getnum(&mm, true, &m);
	if (h > 24)
		*range = "time zone offset hour";
	if (m > 60)
		*range = "time zone offset minute";
	if (r->s[0] != '+' && r->s[0] != '-')
		ok = false;
	*offset = (h * 60 + m) * 60 * (r->s[0] == '-' ? -1 : 1);
	skip(r, 6);
	return ok;
}

/* One field of the layout from r into t; false when the input does not
 * fit it, *range set when it fits but is out of range. */
static bool field(enum field f, struct rest *r, struct timestamp *t, const char **range)
{
	static const struct {
		int max;                /* the value must be below */
		const char *name;
	} ranges[] = {
		[F_MONTH] = { 13, "month" }, [F_HOUR] = { 24, "hour" },
		[F_MINUTE] = { 60, "minute" }, [F_SECOND] = { 60, "second" },
	};
	int *out[] = { &t->year, &t->month, &t->day, &t->hour, &t->minute, &t->second };

	switch (f) {
	case F_YEAR:
		if (r->n < 4 || !digit_at(r, 0) || !digit_at(r, 1) || !digit_at(r, 2) ||
		    !digit_at(r, 3))
			return false;
		t->year = (r->s[0] - '0') * 1000 + (r->s[1] - '0') * 100 + (r->s[2] - '0') * 10 +
			  (r->s[3] - '0');
		skip(r, 4);
		return true;
	case F_ZONE:
		return zone(r, &t->offset, range);
	default:
		if (!getnum(r, f != F_HOUR, out[f]))
			return false;
		if (ranges[f].name && (*out[f] >= ranges[f].max || (f == F_MONTH && !*out[f])))
			*range = ranges[f].name;
		if (f == F_SECOND && !*range)
			fraction(r, &t->nsec);
		return true;
	}
}

static int days_in(int month, int year)
{
	static const int days[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	bool leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);

	return month == 2 && leap ? 29 : days[month - 1];
}

/* ParseError.Error(): "cannot parse REST as ELEM" when msg is NULL, else
 * msg after the value; msg_rest (NULL: none) is quoted after msg. */
static int parse_error(struct dt_err *err, const char *s, size_t len, const struct rest *rest,
		       const char *elem, const char *msg, const struct rest *msg_rest)
{
	struct strbuf sb = STRBUF_INIT;
	int rc;

	sb_puts(&sb, "parsing time ");
	sb_quote(&sb, s, len, SB_QUOTE_ASCII);
	if (msg) {
		sb_puts(&sb, msg);
		if (msg_rest)
			sb_quote(&sb, msg_rest->s, msg_rest->n, SB_QUOTE_ASCII);
	} else {
		sb_puts(&sb, " as \"" TIMESTAMP_LAYOUT "\": cannot parse ");
		sb_quote(&sb, rest->s, rest->n, SB_QUOTE_ASCII);
		sb_puts(&sb, " as ");
		sb_quote(&sb, elem, strlen(elem), SB_QUOTE_ASCII);
	}
	rc = dt_err_set(err, -EINVAL, "%s", sb_error(&sb) ? "parsing time: out of memory" :
			sb_str(&sb));
	sb_free(&sb);
	return rc;
}

int timestamp_parse(const char *s, size_t len, struct timestamp *t, struct dt_err *err)
{
	struct timestamp tmp = { 0 };
	struct rest r = { s, len };

	if (!t)
		t = &tmp;
	memset(t, 0, sizeof(*t));
	for (enum field f = F_YEAR; f <= F_ZONE; f++) {
		size_t plen = strlen(layout[f].prefix);
		struct rest hold;
		const char *range = NULL;
		char msg[48];

		if (r.n < plen || memcmp(r.s, layout[f].prefix, plen))
			return parse_error(err, s, len, &r, layout[f].prefix, NULL, NULL);
		skip(&r, plen);
		hold = r;
		if (!field(f, &r, t, &range) && !range)
			return parse_error(err, s, len, &hold, layout[f].elem, NULL, NULL);
		if (range) {
			snprintf(msg, sizeof(msg), ": %s out of range", range);
			return parse_error(err, s, len, NULL, NULL, msg, NULL);
		}
	}
	if (r.n)
		return parse_error(err, s, len, NULL, NULL, ": extra text: ", &r);
	if (t->day < 1 || t->day > days_in(t->month, t->year))
		return parse_error(err, s, len, NULL, NULL, ": day out of range", NULL);
	return 0;
}

int64_t timestamp_days_from_civil(int64_t y, unsigned m, unsigned d)
{
	int64_t era;
	unsigned yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = (unsigned)(y - era * 400);
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

int64_t timestamp_unix(const struct timestamp *t)
{
	return timestamp_days_from_civil(t->year, (unsigned)t->month, (unsigned)t->day) * 86400 +
	       t->hour * 3600 + t->minute * 60 + t->second - t->offset;
}

int64_t timestamp_unix_ns(const struct timestamp *t)
{
	return timestamp_unix(t) * 1000000000 + t->nsec;
}

char *timestamp_format(int64_t unix_ns, unsigned frac_digits, char *buf, size_t size)
{
	int64_t s = unix_ns / 1000000000, ns = unix_ns % 1000000000;
	time_t secs;
	struct tm tm;
	char frac[12] = "";

	if (ns < 0) {
		ns += 1000000000;
		s--;
	}
	secs = (time_t)s;
	gmtime_r(&secs, &tm);
	if (frac_digits > 9)
		frac_digits = 9;
	if (frac_digits) {
		long v = (long)ns;

		for (unsigned i = frac_digits; i < 9; i++)
			v /= 10;
		snprintf(frac, sizeof(frac), ".%0*ld", (int)frac_digits, v);
	}
	snprintf(buf, size, "%04d-%02d-%02dT%02d:%02d:%02d%sZ", tm.tm_year + 1900, tm.tm_mon + 1,
		 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, frac);
	return buf;
}
