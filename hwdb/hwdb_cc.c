/* hwdb_cc.c - consumable-capacity modes: the value of the EC2NodeClass
 * annotation karpenter.k8s.aws/nvidia-consumable-capacity, parsed as
 * Karpenter parses it, and named back. */
#include "hwdb.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

int hwdb_cc_parse(const char *s, struct hwdb_cc_mode *out, struct dt_err *err)
{
	int64_t n = 0;

	*out = (struct hwdb_cc_mode){ HWDB_CC_DISABLED, 0 };
	if (!s || !*s || !strcmp(s, "disabled"))
		return 0;
	if (!strcmp(s, "memory")) {
		out->kind = HWDB_CC_MEMORY;
		return 0;
	}
	if (!strcmp(s, "unlimited")) {
		out->kind = HWDB_CC_UNLIMITED;
		return 0;
	}
	/* A positive decimal integer, nothing else: "0", "-1", "4.5", "1Gi"
	 * and "memory=true" are refused, as Karpenter refuses them. Like Go's
	 * strconv integer parsing, a leading '+' is allowed. */
	for (const char *p = s + (s[0] == '+' && s[1]); *p; p++) {
		if (!isdigit((unsigned char)*p) || n > (INT64_MAX - (*p - '0')) / 10) {
			n = -1;
			break;
		}
		n = n * 10 + (*p - '0');
	}
	if (n <= 0)
		return dt_err_set(err, -EINVAL,
				  "invalid consumable capacity mode \"%s\": must be \"disabled\", "
				  "\"memory\", \"unlimited\" or a positive integer number of shares",
				  s);
	out->kind = HWDB_CC_SHARES;
	out->shares = n;
	return 0;
}

const char *hwdb_cc_name(const struct hwdb_cc_mode *m, char *buf, size_t len)
{
	switch (m->kind) {
	case HWDB_CC_SHARES:
		snprintf(buf, len, "%lld", (long long)m->shares);
		return buf;
	case HWDB_CC_MEMORY:
		return "memory";
	case HWDB_CC_UNLIMITED:
		return "unlimited";
	default:
		return "disabled";
	}
}
