/* plan_strings.c - the planner's small string helpers: decimal numbers
 * without printf, concatenation into a buffer, and the deterministic names
 * Kubernetes would generate (pods of a workload, claims from templates,
 * NodeClaims). */
#include <stdarg.h>
#include <string.h>

#include "hash.h"
#include "plan_internal.h"

char *plan_u64_str(uint64_t v, char out[24])
{
	char tmp[24];
	size_t n = 0, i = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		out[i++] = tmp[--n];
	out[i] = 0;
	return out;
}

size_t plan_concat(char *buf, size_t sz, ...)
{
	va_list ap;
	size_t len = 0;

	if (!sz)
		return 0;
	va_start(ap, sz);
	for (const char *s; (s = va_arg(ap, const char *));) {
		size_t n = strlen(s);

		if (n > sz - 1 - len)
			n = sz - 1 - len;
		memcpy(buf + len, s, n);
		len += n;
	}
	va_end(ap);
	buf[len] = 0;
	return len;
}

void plan_name_suffix(const char *a, const char *b, uint64_t n, char out[6])
{
	static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
	uint64_t h = hash_field(hash_field(HASH_FNV_OFFSET, a), b);
	char num[24];

	plan_u64_str(n, num);
	h = hash_field(h, num);
	for (int i = 0; i < 5; i++) {
		out[i] = alphabet[h % (sizeof(alphabet) - 1)];
		h /= sizeof(alphabet) - 1;
	}
	out[5] = 0;
}
