/* hex.c - hexadecimal digits (hex.h). */
#include "hex.h"

const char hex_lower[16] = "0123456789abcdef";
const char hex_upper[16] = "0123456789ABCDEF";

int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int hex_value_lower(char c)
{
	return c >= 'A' && c <= 'F' ? -1 : hex_value(c);
}

int hex_parse(const char *s, size_t n, unsigned long *out)
{
	unsigned long v = 0;

	if (n > 8)
		return -1;
	for (size_t i = 0; i < n; i++) {
		int d = hex_value(s[i]);

		if (d < 0)
			return -1;
		v = v << 4 | (unsigned long)d;
	}
	*out = v;
	return 0;
}
