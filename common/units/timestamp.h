/* timestamp.h - RFC 3339 times as the Kubernetes API machinery reads them:
 * metav1.Time fields (creationTimestamp, a taint's timeAdded, a
 * condition's lastTransitionTime) go through Go's time.Parse with the
 * layout time.RFC3339, so what it accepts, and the words it refuses the
 * rest in, are Go's rather than the RFC's:
 *
 *   - 'T' and 'Z' in upper case only (the RFC allows "t" and "z");
 *   - the hour may be one digit ("2026-01-02T3:04:05Z"), every other
 *     field has its full width;
 *   - a fraction of a second may follow a '.' or a ',', with any number of
 *     digits (past nine they are dropped);
 *   - offsets go up to +24:60; no leap second (":60" is out of range);
 *   - the day is checked against its month (2023-02-29 is refused,
 *     2024-02-29 is not).
 *
 * Messages are Go's ParseError text, e.g. `parsing time "yesterday" as
 * "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"` or
 * `parsing time "2026-13-01T00:00:00Z": month out of range`. */
#ifndef DT_TIMESTAMP_H
#define DT_TIMESTAMP_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

/* Go's reference layout for RFC 3339, as its messages name it. */
#define TIMESTAMP_LAYOUT "2006-01-02T15:04:05Z07:00"

/* A time as written: its wall-clock fields and offset, not normalized. */
struct timestamp {
	int year, month, day;           /* 0000-9999, 1-12, 1-31 */
	int hour, minute, second;       /* 0-23, 0-59, 0-59 */
	int32_t nsec;                   /* 0-999999999 */
	int offset;                     /* seconds east of UTC, e.g. -25200 for -07:00 */
};

/* Parse len bytes of s (NUL bytes in them are refused). 0 and *t, or
 * -EINVAL with Go's message in err; t may be NULL to only check. */
int timestamp_parse(const char *s, size_t len, struct timestamp *t, struct dt_err *err);

/* Days since 1970-01-01 of a date of the proleptic Gregorian calendar. */
int64_t timestamp_days_from_civil(int64_t year, unsigned month, unsigned day);
/* The time as Unix seconds (UTC, its offset applied; the fraction in
 * t->nsec). */
int64_t timestamp_unix(const struct timestamp *t);
/* The instant t names, in Unix nanoseconds (its offset applied). */
int64_t timestamp_unix_ns(const struct timestamp *t);

/* Unix nanoseconds as the API server writes times, in UTC: frac_digits 0
 * gives metav1.Time ("2026-12-04T10:00:02Z"), 6 gives metav1.MicroTime
 * ("2026-12-04T10:00:02.000000Z"; a Lease's renewTime, an Event's
 * eventTime), 1 to 9 digits in all (the rest cut, never rounded). Returns
 * buf; TIMESTAMP_MAX bytes are always enough. */
#define TIMESTAMP_MAX 40
char *timestamp_format(int64_t unix_ns, unsigned frac_digits, char *buf, size_t size);

#endif
