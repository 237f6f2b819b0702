/* topo_bdf.c - parsing, printing and ordering PCI addresses. See topo_bdf.h. */
#include "topo_bdf.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "hex.h"

/* n lower-case hex digits at s into *out; 0 or -EINVAL. */
static int hex_field(const char *s, int n, uint32_t *out)
{
	uint32_t v = 0;

	for (int i = 0; i < n; i++) {
		int d = hex_value_lower(s[i]);     /* upper case refused, as Kubernetes does */

		if (d < 0)
			return -EINVAL;
		v = v << 4 | (uint32_t)d;
	}
	*out = v;
	return 0;
}

int topo_bdf_parse(const char *s, struct topo_bdf *out)
{
	uint32_t dom, bus, dev, fn;

	/* DDDD:BB:DD.F, exactly 12 characters */
	if (!s || strlen(s) != 12 || s[4] != ':' || s[7] != ':' || s[10] != '.')
		return -EINVAL;
	if (hex_field(s, 4, &dom) || hex_field(s + 5, 2, &bus) ||
	    hex_field(s + 8, 2, &dev) || hex_field(s + 11, 1, &fn))
		return -EINVAL;
	if (dev > 0x1f || fn > 7)
		return -EINVAL;
	out->domain = dom;
	out->bus = (uint8_t)bus;
	out->dev = (uint8_t)dev;
	out->func = (uint8_t)fn;
	return 0;
}

void topo_bdf_format(const struct topo_bdf *b, char *buf, size_t len)
{
	snprintf(buf, len, "%04x:%02x:%02x.%x", (unsigned)b->domain, b->bus, b->dev, b->func);
}

int topo_bdf_cmp(const struct topo_bdf *a, const struct topo_bdf *b)
{
	if (a->domain != b->domain)
		return a->domain < b->domain ? -1 : 1;
	if (a->bus != b->bus)
		return a->bus < b->bus ? -1 : 1;
	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	if (a->func != b->func)
		return a->func < b->func ? -1 : 1;
	return 0;
}
