/* duration.h - command-line durations for the daemons' flags ("30s", "2m",
 * "500ms", "1h30m"), the way Go's time.ParseDuration writes them (what
 * Kubernetes users type), without fractions or signs. */
#ifndef DT_DURATION_H
#define DT_DURATION_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

/* The longest duration accepted: 30 days. */
#define DURATION_MAX_NS (30LL * 24 * 3600 * 1000000000LL)

/* One or more <digits><unit> terms, unit ms, s, m or h; a bare number is
 * seconds. 0 and *ns, or -EINVAL naming the text ("duration '3x': unknown
 * unit 'x' (ms, s, m, h)") or -ERANGE over DURATION_MAX_NS. */
int duration_parse(const char *s, int64_t *ns, struct dt_err *err);
/* The shortest form that parses back ("90s", "2m", "1500ms"); buf >= 32. */
const char *duration_format(int64_t ns, char *buf, size_t len);

#endif
