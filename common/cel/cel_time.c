/* cel_time.c - CEL timestamps and durations: RFC 3339 and Go duration
 * syntax, range-checked arithmetic, the calendar getters in UTC, a fixed
 * offset ("+05:30") or an IANA zone read from the system zoneinfo (TZif,
 * cached per process), and their conversions. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cel_ast.h"
#include "strbuf.h"
#include "timestamp.h"

#define FN(name) static struct cel_value name(struct cel_ctx *ctx, const struct cel_value *a, \
					      size_t n)

#define NS 1000000000LL
#define TS_MIN (-62135596800LL)          /* 0001-01-01T00:00:00Z */
#define TS_MAX 253402300799LL            /* 9999-12-31T23:59:59Z */

/* ---- calendar ---- */

static void civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
	int64_t era;
	unsigned doe, yoe, doy, mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = (unsigned)(z - era * 146097);
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	*y = (int64_t)yoe + era * 400;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = doy - (153 * mp + 2) / 5 + 1;
	*m = mp < 10 ? mp + 3 : mp - 9;
	*y += *m <= 2;
}

static int64_t floor_div(int64_t a, int64_t b)
{
	return a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
}

/* ---- zones ---- */

/* A POSIX TZ rule date: Jn (1-365, no Feb 29), n (0-365) or Mm.w.d. */
struct tz_date {
	char kind;                 /* 'J', 'N', 'M' */
	int n, m, w, d;
	int32_t time;              /* local time of day of the change, seconds */
};

/* The TZif footer rule, for instants after the last transition. */
struct tz_rule {
	bool valid, has_dst;
	int32_t std_off, dst_off;  /* UTC offsets, seconds east */
	struct tz_date start, end;
};

struct zone {
	char name[64];
	int32_t n;                 /* transitions */
	int64_t *at;               /* transition instants (UTC seconds) */
	int32_t *off;              /* offset in effect from at[i] */
	int32_t off0;              /* before the first transition */
	struct tz_rule rule;
};

static pthread_mutex_t zone_lock = PTHREAD_MUTEX_INITIALIZER;
static struct zone *zones[64];
static size_t n_zones;

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int64_t be64(const unsigned char *p)
{
	return (int64_t)((uint64_t)be32(p) << 32 | be32(p + 4));
}

/* ---- POSIX TZ rules ("EST5EDT,M3.2.0,M11.1.0") ---- */

static bool tz_name(const char **p)
{
	const char *s = *p;

	if (*s == '<') {
		while (*s && *s != '>')
			s++;
		if (*s != '>')
			return false;
		*p = s + 1;
		return true;
	}
	while ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z'))
		s++;
	if (s == *p)
		return false;
	*p = s;
	return true;
}

/* [+-]hh[:mm[:ss]] in seconds (hours up to 167 for rule times). */
static bool tz_hms(const char **p, int32_t *out)
{
	const char *s = *p;
	int sign = 1, part[3] = { 0, 0, 0 };

	if (*s == '+' || *s == '-')
		sign = *s++ == '-' ? -1 : 1;
	for (int k = 0; k < 3; k++) {
		int digits = 0;

		if (k && *s != ':')
			break;
		if (k)
			s++;
		while (*s >= '0' && *s <= '9' && digits < 3) {
			part[k] = part[k] * 10 + (*s++ - '0');
			digits++;
		}
		if (!digits)
			return false;
	}
	*out = sign * (part[0] * 3600 + part[1] * 60 + part[2]);
	*p = s;
	return true;
}

static bool tz_num(const char **p, int *out)
{
	int v = 0, digits = 0;

	while (**p >= '0' && **p <= '9' && digits < 4) {
		v = v * 10 + (*(*p)++ - '0');
		digits++;
	}
	*out = v;
	return digits > 0;
}

static bool tz_rule_date(const char **p, struct tz_date *d)
{
	d->time = 7200;           /* 02:00 by default */
	if (**p == 'J') {
		(*p)++;
		d->kind = 'J';
		if (!tz_num(p, &d->n) || d->n < 1 || d->n > 365)
			return false;
	} else if (**p == 'M') {
		(*p)++;
		d->kind = 'M';
		if (!tz_num(p, &d->m) || *(*p)++ != '.' || !tz_num(p, &d->w) ||
		    *(*p)++ != '.' || !tz_num(p, &d->d) || d->m < 1 || d->m > 12 ||
		    d->w < 1 || d->w > 5 || d->d > 6)
			return false;
	} else {
		d->kind = 'N';
		if (!tz_num(p, &d->n) || d->n > 365)
			return false;
	}
	if (**p == '/') {
		(*p)++;
		return tz_hms(p, &d->time);
	}
	return true;
}

static void tz_rule_parse(struct tz_rule *r, const char *s)
{
	int32_t v;

	memset(r, 0, sizeof(*r));
	if (!tz_name(&s) || !tz_hms(&s, &v))
		return;
	r->std_off = -v;          /* POSIX counts west of Greenwich */
	if (*s) {
		if (!tz_name(&s))
			return;
		r->dst_off = r->std_off + 3600;
		if (*s && *s != ',') {
			if (!tz_hms(&s, &v))
				return;
			r->dst_off = -v;
		}
		if (*s++ != ',' || !tz_rule_date(&s, &r->start) || *s++ != ',' ||
		    !tz_rule_date(&s, &r->end) || *s)
			return;
		r->has_dst = true;
	}
	r->valid = true;
}

static bool is_leap(int64_t y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* Local seconds since the epoch at which the rule date falls in year y. */
static int64_t tz_date_local(const struct tz_date *d, int64_t y)
{
	int64_t days;

	if (d->kind == 'J')
		days = timestamp_days_from_civil(y, 1, 1) + d->n - 1 + (is_leap(y) && d->n >= 60);
	else if (d->kind == 'N')
		days = timestamp_days_from_civil(y, 1, 1) + d->n;
	else {
		static const int mdays[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
		int64_t first = timestamp_days_from_civil(y, (unsigned)d->m, 1);
		int wd = (int)(((first % 7) + 7 + 4) % 7);    /* 1970-01-01: Thursday */
		int len = mdays[d->m - 1] + (d->m == 2 && is_leap(y));
		int day = 1 + (d->d - wd + 7) % 7 + (d->w - 1) * 7;

		while (day > len)
			day -= 7;
		days = first + day - 1;
	}
	return days * 86400 + d->time;
}

static int32_t tz_rule_offset(const struct tz_rule *r, int64_t t)
{
	int64_t y, start, end;
	unsigned m, d;
	bool dst;

	if (!r->has_dst)
		return r->std_off;
	civil_from_days(floor_div(t + r->std_off, 86400), &y, &m, &d);
	start = tz_date_local(&r->start, y) - r->std_off;
	end = tz_date_local(&r->end, y) - r->dst_off;
	if (start < end)
		dst = t >= start && t < end;
	else
		dst = !(t >= end && t < start);      /* southern hemisphere */
	return dst ? r->dst_off : r->std_off;
}

/* Parse a TZif file (version 2+ 64-bit section when present). */
static struct zone *zone_parse(const char *name, const unsigned char *b, size_t len)
{
	size_t cnt[6], off = 0, tsize = 4;
	struct zone *z;

	for (int pass = 0; pass < 2; pass++) {
		if (len - off < 44 || memcmp(b + off, "TZif", 4))
			return NULL;
		for (int i = 0; i < 6; i++)
			cnt[i] = be32(b + off + 20 + 4 * i);
		/* isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt */
		if (cnt[3] > 100000 || cnt[4] == 0 || cnt[4] > 256 || cnt[2] > 1000)
			return NULL;
		size_t body = cnt[3] * tsize + cnt[3] + cnt[4] * 6 + cnt[5] +
			      cnt[2] * (tsize + 4) + cnt[1] + cnt[0];
		if (len - off - 44 < body)
			return NULL;
		if (pass == 0 && b[off + 4] >= '2') {
			off += 44 + body;
			tsize = 8;
			continue;
		}
		break;
	}
	z = calloc(1, sizeof(*z));
	if (!z)
		return NULL;
	snprintf(z->name, sizeof(z->name), "%s", name);
	z->n = (int32_t)cnt[3];
	z->at = calloc(cnt[3] + 1, sizeof(*z->at));
	z->off = calloc(cnt[3] + 1, sizeof(*z->off));
	if (!z->at || !z->off) {
		free(z->at);
		free(z->off);
		free(z);
		return NULL;
	}
	{
		const unsigned char *p = b + off + 44;
		const unsigned char *idx = p + cnt[3] * tsize;
		const unsigned char *types = idx + cnt[3];

		for (size_t i = 0; i < cnt[3]; i++) {
			unsigned t = idx[i];

			z->at[i] = tsize == 8 ? be64(p + 8 * i) : (int32_t)be32(p + 4 * i);
			if (t >= cnt[4])
				t = 0;
			z->off[i] = (int32_t)be32(types + 6 * t);
		}
		z->off0 = (int32_t)be32(types);
	}
	/* Version 2+: "\nTZ-rule\n" after the 64-bit data. */
	if (tsize == 8) {
		size_t body = cnt[3] * 8 + cnt[3] + cnt[4] * 6 + cnt[5] + cnt[2] * 12 + cnt[1] +
			      cnt[0];
		size_t at = off + 44 + body, e;
		char rule[128];

		if (at < len && b[at] == '\n') {
			for (e = at + 1; e < len && b[e] != '\n' && e - at < sizeof(rule); e++)
				;
			if (e < len && b[e] == '\n') {
				memcpy(rule, b + at + 1, e - at - 1);
				rule[e - at - 1] = 0;
				tz_rule_parse(&z->rule, rule);
			}
		}
	}
	return z;
}

static bool zone_name_ok(const char *s, size_t len)
{
	if (!len || len >= 64 || s[0] == '/' || s[0] == '.')
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '-' || c == '+' || c == '/'))
			return false;
		if (c == '/' && i + 1 < len && s[i + 1] == '.')
			return false;
	}
	return true;
}

static int32_t zone_offset(const struct zone *z, int64_t t)
{
	int32_t lo = 0, hi = z->n;

	/* After the last transition the footer rule decides (2037 and on). */
	if (z->rule.valid && (z->n == 0 || t >= z->at[z->n - 1]))
		return tz_rule_offset(&z->rule, t);
	if (z->n == 0 || t < z->at[0])
		return z->off0;
	while (hi - lo > 1) {
		int32_t mid = (lo + hi) / 2;

		if (z->at[mid] <= t)
			lo = mid;
		else
			hi = mid;
	}
	return z->off[lo];
}

static void zone_free(struct zone *z)
{
	if (!z)
		return;
	free(z->at);
	free(z->off);
	free(z);
}

static struct zone *zone_load(const char *name)
{
	char path[128];
	struct zone *z = NULL;
	unsigned char *buf;
	FILE *f;

	snprintf(path, sizeof(path), "/usr/share/zoneinfo/%s", name);
	f = fopen(path, "rb");
	if (!f)
		return NULL;
	buf = malloc(1 << 20);
	if (buf)
		z = zone_parse(name, buf, fread(buf, 1, 1 << 20, f));
	free(buf);
	fclose(f);
	return z;
}

/* The UTC offset of IANA zone s at t. Zones are cached per process (the
 * first 64); further ones are read for each use. */
static bool zone_lookup(const char *s, size_t len, int64_t t, int64_t *off)
{
	char name[64];
	struct zone *z = NULL;
	bool ok = false;

	if (!zone_name_ok(s, len))
		return false;
	memcpy(name, s, len);
	name[len] = 0;
	pthread_mutex_lock(&zone_lock);
	for (size_t i = 0; i < n_zones; i++)
		if (!strcmp(zones[i]->name, name)) {
			*off = zone_offset(zones[i], t);
			ok = true;
			goto out;
		}
	z = zone_load(name);
	if (z) {
		*off = zone_offset(z, t);
		ok = true;
		if (n_zones < CEL_ARRAY_LEN(zones)) {
			zones[n_zones++] = z;
			z = NULL;
		}
	}
out:
	pthread_mutex_unlock(&zone_lock);
	zone_free(z);
	return ok;
}

/* Offset in seconds for a timezone argument, or false when unknown. */
static bool tz_offset(const struct cel_value *tz, int64_t t, int64_t *off)
{
	const char *s = tz->v.str.s;
	size_t len = tz->v.str.len;

	if (len == 3 && !memcmp(s, "UTC", 3)) {
		*off = 0;
		return true;
	}
	if ((len == 6 && (s[0] == '+' || s[0] == '-') && s[3] == ':') ||
	    (len == 5 && s[2] == ':')) {
		const char *hm = len == 6 ? s + 1 : s;
		int h = (hm[0] - '0') * 10 + (hm[1] - '0');
		int m = (hm[3] - '0') * 10 + (hm[4] - '0');

		for (int i = 0; i < 5; i++)
			if (i != 2 && (hm[i] < '0' || hm[i] > '9'))
				return false;
		*off = (int64_t)(h * 3600 + m * 60) * (s[0] == '-' ? -1 : 1);
		return true;
	}
	return zone_lookup(s, len, t, off);
}

/* ---- parsing and formatting ---- */

/* RFC 3339 as cel-go reads it: Go's time.Parse with time.RFC3339, the
 * same reading as the API server's for metav1.Time (timestamp.h). */
struct cel_value cel_timestamp_parse(struct cel_ctx *ctx, const char *s, size_t len)
{
	struct dt_err err = { 0 };
	struct timestamp ts;
	int64_t t;

	if (timestamp_parse(s, len, &ts, &err))
		return cel_errorf(ctx, "invalid timestamp \"%.*s\"", (int)(len > 64 ? 64 : len), s);
	t = timestamp_unix(&ts);
	if (t < TS_MIN || t > TS_MAX)
		return cel_errorf(ctx, "timestamp out of range");
	return cel_timestamp(t, ts.nsec);
}

static void frac(struct strbuf *sb, int32_t nsec)
{
	char buf[16];
	int n;

	if (!nsec)
		return;
	n = snprintf(buf, sizeof(buf), ".%09d", nsec);
	while (n > 1 && buf[n - 1] == '0')
		n--;
	sb_append(sb, buf, (size_t)n);
}

void cel_timestamp_format(struct strbuf *sb, int64_t sec, int32_t nsec)
{
	int64_t days = floor_div(sec, 86400), rem = sec - days * 86400, y;
	unsigned m, d;

	civil_from_days(days, &y, &m, &d);
	sb_printf(sb, "%04lld-%02u-%02uT%02d:%02d:%02d", (long long)y, m, d, (int)(rem / 3600),
		  (int)(rem / 60 % 60), (int)(rem % 60));
	frac(sb, nsec);
	sb_putc(sb, 'Z');
}

void cel_duration_format(struct strbuf *sb, int64_t sec, int32_t nsec)
{
	if (sec < 0 || nsec < 0) {
		sb_putc(sb, '-');
		sec = -sec;
		nsec = -nsec;
	}
	sb_printf(sb, "%lld", (long long)sec);
	frac(sb, nsec);
	sb_putc(sb, 's');
}

static struct cel_value dur_from_ns(struct cel_ctx *ctx, __int128 ns)
{
	(void)ctx;
	if (ns > INT64_MAX || ns < INT64_MIN)
		return cel_errorf(ctx, "duration out of range");
	return cel_duration((int64_t)(ns / NS), (int32_t)(ns % NS));
}

static __int128 dur_ns(const struct cel_value *v)
{
	return (__int128)v->v.t.sec * NS + v->v.t.nsec;
}

/* Go's time.ParseDuration. */
struct cel_value cel_duration_parse(struct cel_ctx *ctx, const char *s, size_t len)
{
	static const struct { const char *u; int64_t mult; } units[] = {
		{ "ns", 1 }, { "us", 1000 }, { "\xc2\xb5s", 1000 }, { "\xce\xbcs", 1000 },
		{ "ms", 1000000 }, { "s", NS }, { "m", 60 * NS }, { "h", 3600 * NS },
	};
	size_t i = 0;
	bool neg = false;
	__int128 total = 0;

	if (i < len && (s[i] == '-' || s[i] == '+'))
		neg = s[i++] == '-';
	if (len - i == 1 && s[i] == '0')
		return cel_duration(0, 0);
	if (i == len)
		goto bad;
	while (i < len) {
		__int128 whole = 0, fnum = 0, fden = 1;
		bool any = false;
		size_t ul = 0, u;

		while (i < len && s[i] >= '0' && s[i] <= '9') {
			whole = whole * 10 + (s[i++] - '0');
			any = true;
			if (whole > (__int128)INT64_MAX * 10)
				goto range;
		}
		if (i < len && s[i] == '.') {
			i++;
			while (i < len && s[i] >= '0' && s[i] <= '9') {
				if (fden < (__int128)NS * NS) {
					fnum = fnum * 10 + (s[i] - '0');
					fden *= 10;
				}
				i++;
				any = true;
			}
		}
		if (!any)
			goto bad;
		while (i + ul < len && !(s[i + ul] >= '0' && s[i + ul] <= '9') && s[i + ul] != '.')
			ul++;
		for (u = 0; u < CEL_ARRAY_LEN(units); u++)
			if (strlen(units[u].u) == ul && !memcmp(units[u].u, s + i, ul))
				break;
		if (u == CEL_ARRAY_LEN(units))
			goto bad;
		i += ul;
		total += whole * units[u].mult + fnum * units[u].mult / fden;
		if (total > (__int128)INT64_MAX + 1)
			goto range;
	}
	if (neg)
		total = -total;
	if (total > INT64_MAX)
		goto range;
	return dur_from_ns(ctx, total);
range:
	return cel_errorf(ctx, "duration out of range");
bad:
	return cel_errorf(ctx, "invalid duration \"%.*s\"", (int)(len > 64 ? 64 : len), s);
}

/* ---- functions ---- */

static struct cel_value ts_make(struct cel_ctx *ctx, __int128 sec, __int128 nsec)
{
	sec += nsec / NS;
	nsec %= NS;
	if (nsec < 0) {
		nsec += NS;
		sec -= 1;
	}
	if (sec < TS_MIN || sec > TS_MAX)
		return cel_errorf(ctx, "timestamp out of range");
	return cel_timestamp((int64_t)sec, (int32_t)nsec);
}

FN(ts_from_string) { (void)n; return cel_timestamp_parse(ctx, a[0].v.str.s, a[0].v.str.len); }
FN(dur_from_string) { (void)n; return cel_duration_parse(ctx, a[0].v.str.s, a[0].v.str.len); }
FN(ts_from_int) { (void)n; return ts_make(ctx, a[0].v.i, 0); }
FN(ts_identity) { (void)ctx; (void)n; return a[0]; }
FN(int_from_ts) { (void)ctx; (void)n; return cel_int(a[0].v.t.sec); }
FN(int_from_dur) { (void)ctx; (void)n; return cel_int((int64_t)dur_ns(&a[0])); }

FN(string_from_ts)
{
	struct strbuf sb = STRBUF_INIT;
	struct cel_value r;

	(void)n;
	cel_timestamp_format(&sb, a[0].v.t.sec, a[0].v.t.nsec);
	r = sb_error(&sb) ? cel_error_oom(ctx) : cel_string_copy(ctx, sb_str(&sb), sb.len);
	sb_free(&sb);
	return r;
}

FN(string_from_dur)
{
	struct strbuf sb = STRBUF_INIT;
	struct cel_value r;

	(void)n;
	cel_duration_format(&sb, a[0].v.t.sec, a[0].v.t.nsec);
	r = sb_error(&sb) ? cel_error_oom(ctx) : cel_string_copy(ctx, sb_str(&sb), sb.len);
	sb_free(&sb);
	return r;
}

FN(add_ts_dur) { (void)n; return ts_make(ctx, (__int128)a[0].v.t.sec + a[1].v.t.sec,
					 (__int128)a[0].v.t.nsec + a[1].v.t.nsec); }
FN(add_dur_ts) { (void)n; return ts_make(ctx, (__int128)a[0].v.t.sec + a[1].v.t.sec,
					 (__int128)a[0].v.t.nsec + a[1].v.t.nsec); }
FN(sub_ts_dur) { (void)n; return ts_make(ctx, (__int128)a[0].v.t.sec - a[1].v.t.sec,
					 (__int128)a[0].v.t.nsec - a[1].v.t.nsec); }
FN(add_dur) { (void)n; return dur_from_ns(ctx, dur_ns(&a[0]) + dur_ns(&a[1])); }
FN(sub_dur) { (void)n; return dur_from_ns(ctx, dur_ns(&a[0]) - dur_ns(&a[1])); }
FN(neg_dur) { (void)n; return dur_from_ns(ctx, -dur_ns(&a[0])); }

FN(sub_ts)
{
	__int128 ns = ((__int128)a[0].v.t.sec - a[1].v.t.sec) * NS +
		      (a[0].v.t.nsec - a[1].v.t.nsec);

	(void)n;
	return dur_from_ns(ctx, ns);
}

enum getter { G_YEAR, G_MONTH, G_DATE, G_DOM, G_DOW, G_DOY, G_HOURS, G_MINUTES, G_SECONDS,
	      G_MILLIS };

static struct cel_value ts_get(struct cel_ctx *ctx, const struct cel_value *a, size_t n,
			       enum getter g)
{
	int64_t off = 0, t, days, rem, y;
	unsigned m, d;

	if (n == 2 && !tz_offset(&a[1], a[0].v.t.sec, &off))
		return cel_errorf(ctx, "unknown time zone \"%.*s\"",
				  (int)(a[1].v.str.len > 64 ? 64 : a[1].v.str.len), a[1].v.str.s);
	t = a[0].v.t.sec + off;
	days = floor_div(t, 86400);
	rem = t - days * 86400;
	civil_from_days(days, &y, &m, &d);
	switch (g) {
	case G_YEAR: return cel_int(y);
	case G_MONTH: return cel_int((int64_t)m - 1);
	case G_DATE: return cel_int(d);
	case G_DOM: return cel_int((int64_t)d - 1);
	case G_DOW: return cel_int((days % 7 + 7 + 4) % 7);     /* 1970-01-01 was a Thursday */
	case G_DOY: return cel_int(days - timestamp_days_from_civil(y, 1, 1));
	case G_HOURS: return cel_int(rem / 3600);
	case G_MINUTES: return cel_int(rem / 60 % 60);
	case G_SECONDS: return cel_int(rem % 60);
	case G_MILLIS: default: return cel_int(a[0].v.t.nsec / 1000000);
	}
}

#define GETTER(fn, g) FN(fn) { return ts_get(ctx, a, n, g); }
GETTER(get_year, G_YEAR)
GETTER(get_month, G_MONTH)
GETTER(get_date, G_DATE)
GETTER(get_dom, G_DOM)
GETTER(get_dow, G_DOW)
GETTER(get_doy, G_DOY)
GETTER(get_hours, G_HOURS)
GETTER(get_minutes, G_MINUTES)
GETTER(get_seconds, G_SECONDS)
GETTER(get_millis, G_MILLIS)

/* Durations: totals truncated toward zero, as Go's Duration methods. */
FN(dur_hours) { (void)ctx; (void)n; return cel_int((int64_t)(dur_ns(&a[0]) / (3600 * NS))); }
FN(dur_minutes) { (void)ctx; (void)n; return cel_int((int64_t)(dur_ns(&a[0]) / (60 * NS))); }
FN(dur_seconds) { (void)ctx; (void)n; return cel_int((int64_t)(dur_ns(&a[0]) / NS)); }
/* The milliseconds component, not the total (cel-go's legacy behaviour). */
FN(dur_millis) { (void)ctx; (void)n; return cel_int(a[0].v.t.nsec / 1000000); }

#define TS "google.protobuf.Timestamp"
#define DUR "google.protobuf.Duration"
#define O(name, id, params, result, fn) { name, id, 0, params, result, fn, NULL }
#define M(name, id, params, result, fn) { name, id, CEL_OV_MEMBER, params, result, fn, NULL }
#define GET(name, fn) \
	M(name, "timestamp_to_" name, TS, "int", fn), \
	M(name, "timestamp_to_" name "_with_tz", TS ", string", "int", fn)

static const struct cel_overload time_overloads[] = {
	O("timestamp", "string_to_timestamp", "string", TS, ts_from_string),
	O("timestamp", "int64_to_timestamp", "int", TS, ts_from_int),
	O("timestamp", "timestamp_to_timestamp", TS, TS, ts_identity),
	O("duration", "string_to_duration", "string", DUR, dur_from_string),
	O("duration", "duration_to_duration", DUR, DUR, ts_identity),
	O("int", "timestamp_to_int64", TS, "int", int_from_ts),
	O("int", "duration_to_int64", DUR, "int", int_from_dur),
	O("string", "timestamp_to_string", TS, "string", string_from_ts),
	O("string", "duration_to_string", DUR, "string", string_from_dur),
	O("_+_", "add_timestamp_duration", TS ", " DUR, TS, add_ts_dur),
	O("_+_", "add_duration_timestamp", DUR ", " TS, TS, add_dur_ts),
	O("_+_", "add_duration_duration", DUR ", " DUR, DUR, add_dur),
	O("_-_", "subtract_timestamp_timestamp", TS ", " TS, DUR, sub_ts),
	O("_-_", "subtract_timestamp_duration", TS ", " DUR, TS, sub_ts_dur),
	O("_-_", "subtract_duration_duration", DUR ", " DUR, DUR, sub_dur),
	O("-_", "negate_duration", DUR, DUR, neg_dur),
	GET("getFullYear", get_year),
	GET("getMonth", get_month),
	GET("getDate", get_date),
	GET("getDayOfMonth", get_dom),
	GET("getDayOfWeek", get_dow),
	GET("getDayOfYear", get_doy),
	GET("getHours", get_hours),
	GET("getMinutes", get_minutes),
	GET("getSeconds", get_seconds),
	GET("getMilliseconds", get_millis),
	M("getHours", "duration_to_hours", DUR, "int", dur_hours),
	M("getMinutes", "duration_to_minutes", DUR, "int", dur_minutes),
	M("getSeconds", "duration_to_seconds", DUR, "int", dur_seconds),
	M("getMilliseconds", "duration_to_milliseconds", DUR, "int", dur_millis),
};

const struct cel_library cel_lib_time = {
	"time", time_overloads, CEL_ARRAY_LEN(time_overloads), NULL, 0,
};
