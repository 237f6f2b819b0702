/* duration.c - parse and print the daemons' flag durations (duration.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "duration.h"

static int64_t unit_ns(const char *u, size_t len)
{
	static const struct { const char *name; int64_t ns; } units[] = {
		{ "ms", 1000000LL }, { "s", 1000000000LL }, { "m", 60000000000LL },
		{ "h", 3600000000000LL },
	};

	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strlen(units[i].name) == len && !strncmp(units[i].name, u, len))
			return units[i].ns;
	return 0;
}

int duration_parse(const char *s, int64_t *ns, struct dt_err *err)
{
	const char *p = s;
	int64_t total = 0;

	if (!s || !*s)
		return dt_err_set(err, -EINVAL, "duration is empty");
	while (*p) {
		int64_t v = 0, mul;
		const char *u;

		if (*p < '0' || *p > '9')
			return dt_err_set(err, -EINVAL, "duration '%s': expected a number at '%s'", s, p);
		for (; *p >= '0' && *p <= '9'; p++) {
			v = v * 10 + (*p - '0');
			if (v > DURATION_MAX_NS)
				return dt_err_set(err, -ERANGE, "duration '%s' is too long", s);
		}
		if (*p == '.' || *p == ',')
			return dt_err_set(err, -EINVAL, "duration '%s': no fractions; write whole "
					  "units (1h30m, 1500ms)", s);
		for (u = p; *p && (*p < '0' || *p > '9'); p++)
			;
		if (u == p && u == s + strspn(s, "0123456789") && !*p) {
			mul = 1000000000LL;     /* a bare number: seconds */
		} else if (!(mul = unit_ns(u, (size_t)(p - u)))) {
			return dt_err_set(err, -EINVAL, "duration '%s': unknown unit '%.*s' (ms, s, m, h)",
					  s, (int)(p - u), u);
		}
		if (v > (DURATION_MAX_NS - total) / mul)
			return dt_err_set(err, -ERANGE, "duration '%s' is too long (at most 720h)", s);
		total += v * mul;
	}
	*ns = total;
	return 0;
}

const char *duration_format(int64_t ns, char *buf, size_t len)
{
	if (ns % 1000000000LL)
		snprintf(buf, len, "%" PRId64 "ms", (int64_t)(ns / 1000000));
	else if (ns % 60000000000LL || !ns)
		snprintf(buf, len, "%" PRId64 "s", (int64_t)(ns / 1000000000LL));
	else if (ns % 3600000000000LL)
		snprintf(buf, len, "%" PRId64 "m", (int64_t)(ns / 60000000000LL));
	else
		snprintf(buf, len, "%" PRId64 "h", (int64_t)(ns / 3600000000000LL));
	return buf;
}
