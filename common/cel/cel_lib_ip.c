/* cel_lib_ip.c - the Kubernetes IP and CIDR libraries (types net.IP and
 * net.CIDR), with Go's net/netip parsing and printing rules.
 *
 *   ip("10.0.0.1"), isIP(s), ip.isCanonical(s), string(ip)
 *   <IP>.family() isUnspecified() isLoopback() isLinkLocalMulticast()
 *       isLinkLocalUnicast() isGlobalUnicast()
 *   cidr("10.0.0.0/8"), isCIDR(s), string(cidr)
 *   <CIDR>.containsIP(ip or string) containsCIDR(cidr or string) ip()
 *       masked() prefixLength()
 *
 * IPv4 is four decimal octets without leading zeros; IPv6 is RFC 4291 text
 * with an optional trailing dotted quad. Zones and IPv4-mapped IPv6
 * addresses are rejected, as Kubernetes does; IPv6 prints per RFC 5952.
 * Error messages are the Kubernetes library's wrapping of netip's. */
#include <stdio.h>
#include <string.h>

#include "cel_lib.h"
#include "cel_value.h"
#include "hex.h"
#include "strbuf.h"

struct ip_addr {
	uint8_t b[16];                  /* IPv4 in b[0..3] */
	bool v6;
};

struct ip_prefix {
	struct ip_addr addr;            /* as written, not masked */
	int bits;
};

/* ---- parsing ---- */

static bool parse_v4(const char *s, size_t len, uint8_t out[4], const char **why)
{
	size_t i = 0;

	for (int k = 0; k < 4; k++) {
		unsigned v = 0;
		size_t start = i;

		if (k > 0) {
			if (i >= len || s[i] != '.') {
				*why = i >= len ? "IPv4 address too short" : "unexpected character";
				return false;
			}
			start = ++i;
		}
		while (i < len && s[i] >= '0' && s[i] <= '9' && i - start < 4)
			v = v * 10 + (unsigned)(s[i++] - '0');
		if (i == start) {
			*why = "IPv4 field must have at least one digit";
			return false;
		}
		if (i - start > 1 && s[start] == '0') {
			*why = "IPv4 field has octet with leading zero";
			return false;
		}
		if (v > 255) {
			*why = "IPv4 field has value >255";
			return false;
		}
		out[k] = (uint8_t)v;
	}
	if (i != len) {
		*why = "IPv4 address too long";
		return false;
	}
	return true;
}

static bool parse_v6(const char *s, size_t len, uint8_t out[16], const char **why)
{
	int ellipsis = -1, k = 0;       /* k: bytes written */
	size_t i = 0;

	memset(out, 0, 16);
	if (len >= 2 && s[0] == ':' && s[1] == ':') {
		ellipsis = 0;
		i = 2;
		if (i == len)
			return true;
	}
	while (i < len && k < 16) {
		size_t start = i;
		unsigned v = 0;

		while (i < len && hex_value(s[i]) >= 0 && i - start < 4)
			v = v * 16 + (unsigned)hex_value(s[i++]);
		if (i < len && hex_value(s[i]) >= 0) {
			*why = "IPv6 field has value >=2^16";
			return false;
		}
		if (i == start) {
			*why = "each colon-separated field must have at least one digit";
			return false;
		}
		if (i < len && s[i] == '.') {
			/* a trailing dotted quad */
			if (k > 12 || (ellipsis < 0 && k != 12)) {
				*why = "embedded IPv4 address must replace the final 2 fields";
				return false;
			}
			if (!parse_v4(s + start, len - start, out + k, why))
				return false;
			k += 4;
			i = len;
			break;
		}
		out[k++] = (uint8_t)(v >> 8);
		out[k++] = (uint8_t)v;
		if (i == len)
			break;
		if (s[i] != ':') {
			*why = "unexpected character";
			return false;
		}
		if (++i == len) {
			*why = "trailing colon";
			return false;
		}
		if (s[i] == ':') {
			if (ellipsis >= 0) {
				*why = "multiple :: in address";
				return false;
			}
			ellipsis = k;
			if (++i == len)
				break;
		}
	}
	if (i != len) {
		*why = "IPv6 address too long";
		return false;
	}
	if (k < 16) {
		if (ellipsis < 0) {
			*why = "address string too short";
			return false;
		}
		memmove(out + 16 - (k - ellipsis), out + ellipsis, (size_t)(k - ellipsis));
		memset(out + ellipsis, 0, (size_t)(16 - k));
	} else if (ellipsis >= 0) {
		*why = "the :: must expand to at least one field of zeros";
		return false;
	}
	return true;
}

static bool is_4in6(const struct ip_addr *a)
{
	static const uint8_t prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	return a->v6 && !memcmp(a->b, prefix, 12);
}

/* netip.ParseAddr; *why gets netip's reason. */
static bool parse_addr(const char *s, size_t len, struct ip_addr *a, const char **why)
{
	memset(a, 0, sizeof(*a));
	if (len == 0) {
		*why = "unable to parse IP";
		return false;
	}
	if (memchr(s, ':', len)) {
		a->v6 = true;
		if (memchr(s, '%', len)) {
			*why = "zone";
			return false;
		}
		return parse_v6(s, len, a->b, why);
	}
	return parse_v4(s, len, a->b, why);
}

/* Kubernetes' parseIPAddr: an error value, or cel_null() on success. */
static struct cel_value ip_from_string(struct cel_ctx *ctx, const struct cel_value *str,
				       struct ip_addr *a)
{
	const char *s = str->v.str.s, *why = NULL;
	int len = (int)str->v.str.len;

	if (!parse_addr(s, str->v.str.len, a, &why)) {
		if (!strcmp(why, "zone"))
			return cel_errorf(ctx, "IP address \"%.*s\" with zone value is not allowed",
					  len, s);
		return cel_errorf(ctx, "IP Address \"%.*s\" parse error during conversion from "
				  "string: ParseAddr(\"%.*s\"): %s", len, s, len, s, why);
	}
	if (is_4in6(a))
		return cel_errorf(ctx, "IPv4-mapped IPv6 address \"%.*s\" is not allowed", len, s);
	return cel_null();
}

/* The prefix length after the slash: decimal, no leading zero, <= max. */
static bool parse_bits(const char *d, const char *end, int max, int *bits)
{
	int v = 0;

	if (d == end || (d[0] == '0' && end - d > 1))
		return false;
	for (; d < end; d++) {
		if (*d < '0' || *d > '9' || v > max)
			return false;
		v = v * 10 + (*d - '0');
	}
	*bits = v;
	return v <= max;
}

/* Kubernetes' parseCIDR over netip.ParsePrefix. */
static struct cel_value prefix_from_string(struct cel_ctx *ctx, const struct cel_value *str,
					   struct ip_prefix *p)
{
	const char *s = str->v.str.s, *why = NULL;
	size_t len = str->v.str.len;
	const char *slash = memrchr(s, '/', len);
	int n = (int)len;

	memset(p, 0, sizeof(*p));
	if (!slash)
		return cel_errorf(ctx, "network address parse error during conversion from string: "
				  "netip.ParsePrefix(\"%.*s\"): no '/'", n, s);
	if (memchr(s, '%', len))
		return cel_errorf(ctx, "network address parse error during conversion from string: "
				  "netip.ParsePrefix(\"%.*s\"): IPv6 zones cannot be present in a "
				  "prefix", n, s);
	if (!parse_addr(s, (size_t)(slash - s), &p->addr, &why))
		return cel_errorf(ctx, "network address parse error during conversion from string: "
				  "netip.ParsePrefix(\"%.*s\"): ParseAddr(\"%.*s\"): %s", n, s,
				  (int)(slash - s), s, why);
	if (!parse_bits(slash + 1, s + len, p->addr.v6 ? 128 : 32, &p->bits))
		return cel_errorf(ctx, "network address parse error during conversion from string: "
				  "netip.ParsePrefix(\"%.*s\"): bad bits after slash: \"%.*s\"",
				  n, s, (int)(s + len - slash - 1), slash + 1);
	if (is_4in6(&p->addr))
		return cel_errorf(ctx, "IPv4-mapped IPv6 address \"%.*s\" is not allowed", n, s);
	return cel_null();
}

/* ---- printing ---- */

static void put_addr(struct strbuf *sb, const struct ip_addr *a)
{
	int best = -1, best_len = 0;

	if (!a->v6) {
		sb_printf(sb, "%u.%u.%u.%u", a->b[0], a->b[1], a->b[2], a->b[3]);
		return;
	}
	/* RFC 5952: compress the longest run (>= 2) of zero fields, the first
	 * one on a tie. */
	for (int i = 0; i < 8;) {
		int j = i;

		while (j < 8 && !a->b[2 * j] && !a->b[2 * j + 1])
			j++;
		if (j - i > best_len && j - i >= 2) {
			best = i;
			best_len = j - i;
		}
		i = j > i ? j : i + 1;
	}
	for (int i = 0; i < 8; i++) {
		if (i == best) {
			sb_puts(sb, "::");
			i += best_len - 1;
			continue;
		}
		if (i > 0 && i != best + best_len)
			sb_putc(sb, ':');
		sb_printf(sb, "%x", (unsigned)(a->b[2 * i] << 8 | a->b[2 * i + 1]));
	}
}

static void print_ip(struct strbuf *sb, const void *p)
{
	sb_puts(sb, "ip(\"");
	put_addr(sb, p);
	sb_puts(sb, "\")");
}

static void put_prefix(struct strbuf *sb, const struct ip_prefix *p)
{
	put_addr(sb, &p->addr);
	sb_printf(sb, "/%d", p->bits);
}

static void print_cidr(struct strbuf *sb, const void *p)
{
	sb_puts(sb, "cidr(\"");
	put_prefix(sb, p);
	sb_puts(sb, "\")");
}

static bool ip_equal(const void *a, const void *b)
{
	const struct ip_addr *x = a, *y = b;

	return x->v6 == y->v6 && !memcmp(x->b, y->b, x->v6 ? 16 : 4);
}

static bool cidr_equal(const void *a, const void *b)
{
	const struct ip_prefix *x = a, *y = b;

	return x->bits == y->bits && ip_equal(&x->addr, &y->addr);
}

static const struct cel_object_type ip_type = {
	.name = "net.IP",
	.equal = ip_equal,
	.print = print_ip,
};

static const struct cel_object_type cidr_type = {
	.name = "net.CIDR",
	.equal = cidr_equal,
	.print = print_cidr,
};

/* ---- functions ---- */

#define FN(name) static struct cel_value name(struct cel_ctx *ctx, const struct cel_value *a, \
					      size_t n)

static const struct ip_addr *arg_ip(const struct cel_value *v)
{
	return v->v.obj.ptr;
}

static const struct ip_prefix *arg_cidr(const struct cel_value *v)
{
	return v->v.obj.ptr;
}

FN(fn_ip)
{
	struct ip_addr addr;
	struct cel_value e = ip_from_string(ctx, &a[0], &addr);

	(void)n;
	return cel_is_error(&e) ? e : cel_object_new(ctx, &ip_type, &addr, sizeof(addr));
}

FN(fn_is_ip)
{
	struct ip_addr addr;
	const char *why;

	(void)ctx;
	(void)n;
	return cel_bool(parse_addr(a[0].v.str.s, a[0].v.str.len, &addr, &why) &&
			!is_4in6(&addr));
}

/* Printed into a small stack buffer: an address is at most 39 bytes and a
 * prefix 43. */
static size_t format_into(char *buf, size_t size, const struct ip_addr *addr, int bits)
{
	struct strbuf sb = STRBUF_INIT;
	size_t len;

	put_addr(&sb, addr);
	if (bits >= 0)
		sb_printf(&sb, "/%d", bits);
	len = sb_error(&sb) ? 0 : sb.len;
	if (len >= size)
		len = 0;
	memcpy(buf, len ? sb_str(&sb) : "", len);
	buf[len] = 0;
	sb_free(&sb);
	return len;
}

FN(fn_is_canonical)
{
	struct ip_addr addr;
	struct cel_value e = ip_from_string(ctx, &a[0], &addr);
	char buf[64];
	size_t len;

	(void)n;
	if (cel_is_error(&e))
		return e;
	len = format_into(buf, sizeof(buf), &addr, -1);
	return cel_bool(len == a[0].v.str.len && !memcmp(buf, a[0].v.str.s, len));
}

FN(fn_ip_string)
{
	char buf[64];
	size_t len;

	(void)n;
	if (a[0].v.obj.type == &cidr_type)
		len = format_into(buf, sizeof(buf), &arg_cidr(&a[0])->addr,
				  arg_cidr(&a[0])->bits);
	else
		len = format_into(buf, sizeof(buf), arg_ip(&a[0]), -1);
	return cel_string_copy(ctx, buf, len);
}

FN(fn_family)
{
	(void)ctx;
	(void)n;
	return cel_int(arg_ip(&a[0])->v6 ? 6 : 4);
}

static bool addr_is_zero(const struct ip_addr *x)
{
	static const uint8_t zero[16];

	return !memcmp(x->b, zero, x->v6 ? 16 : 4);
}

static bool is_loopback(const struct ip_addr *x)
{
	static const uint8_t one[16] = { [15] = 1 };

	return x->v6 ? !memcmp(x->b, one, 16) : x->b[0] == 127;
}

static bool is_multicast(const struct ip_addr *x)
{
	return x->v6 ? x->b[0] == 0xff : (x->b[0] & 0xf0) == 0xe0;
}

static bool is_ll_unicast(const struct ip_addr *x)
{
	return x->v6 ? x->b[0] == 0xfe && (x->b[1] & 0xc0) == 0x80 :
		       x->b[0] == 169 && x->b[1] == 254;
}

static bool is_ll_multicast(const struct ip_addr *x)
{
	return x->v6 ? x->b[0] == 0xff && (x->b[1] & 0x0f) == 0x02 :
		       x->b[0] == 224 && x->b[1] == 0 && x->b[2] == 0;
}

FN(fn_is_unspecified)
{
	(void)ctx;
	(void)n;
	return cel_bool(addr_is_zero(arg_ip(&a[0])));
}

FN(fn_is_loopback)
{
	(void)ctx;
	(void)n;
	return cel_bool(is_loopback(arg_ip(&a[0])));
}

FN(fn_is_ll_multicast)
{
	(void)ctx;
	(void)n;
	return cel_bool(is_ll_multicast(arg_ip(&a[0])));
}

FN(fn_is_ll_unicast)
{
	(void)ctx;
	(void)n;
	return cel_bool(is_ll_unicast(arg_ip(&a[0])));
}

/* Go's IsGlobalUnicast: private and ULA addresses count as global. */
FN(fn_is_global_unicast)
{
	const struct ip_addr *x = arg_ip(&a[0]);
	bool bcast = !x->v6 && x->b[0] == 255 && x->b[1] == 255 && x->b[2] == 255 &&
		     x->b[3] == 255;

	(void)ctx;
	(void)n;
	return cel_bool(!addr_is_zero(x) && !bcast && !is_loopback(x) && !is_multicast(x) &&
			!is_ll_unicast(x));
}

FN(fn_cidr)
{
	struct ip_prefix p;
	struct cel_value e = prefix_from_string(ctx, &a[0], &p);

	(void)n;
	return cel_is_error(&e) ? e : cel_object_new(ctx, &cidr_type, &p, sizeof(p));
}

FN(fn_is_cidr)
{
	struct ip_prefix p;
	struct cel_value e = prefix_from_string(ctx, &a[0], &p);

	(void)n;
	return cel_bool(!cel_is_error(&e));
}

/* The first `bits` bits of x and y agree. */
static bool same_prefix(const struct ip_addr *x, const struct ip_addr *y, int bits)
{
	int full = bits / 8, rest = bits % 8;

	if (x->v6 != y->v6)
		return false;
	if (memcmp(x->b, y->b, (size_t)full))
		return false;
	if (rest) {
		uint8_t mask = (uint8_t)(0xff << (8 - rest));

		return (x->b[full] & mask) == (y->b[full] & mask);
	}
	return true;
}

FN(fn_contains_ip)
{
	const struct ip_prefix *p = arg_cidr(&a[0]);
	struct ip_addr addr;

	(void)n;
	if (a[1].kind == CEL_STRING) {
		struct cel_value e = ip_from_string(ctx, &a[1], &addr);

		if (cel_is_error(&e))
			return e;
	} else {
		addr = *arg_ip(&a[1]);
	}
	return cel_bool(same_prefix(&p->addr, &addr, p->bits));
}

FN(fn_contains_cidr)
{
	const struct ip_prefix *p = arg_cidr(&a[0]);
	struct ip_prefix other;

	(void)n;
	if (a[1].kind == CEL_STRING) {
		struct cel_value e = prefix_from_string(ctx, &a[1], &other);

		if (cel_is_error(&e))
			return e;
	} else {
		other = *arg_cidr(&a[1]);
	}
	return cel_bool(other.bits >= p->bits && same_prefix(&p->addr, &other.addr, p->bits));
}

FN(fn_cidr_ip)
{
	(void)n;
	return cel_object_new(ctx, &ip_type, &arg_cidr(&a[0])->addr, sizeof(struct ip_addr));
}

FN(fn_masked)
{
	struct ip_prefix p = *arg_cidr(&a[0]);
	int full = p.bits / 8, rest = p.bits % 8, size = p.addr.v6 ? 16 : 4;

	(void)n;
	if (full < size) {
		p.addr.b[full] &= (uint8_t)(rest ? 0xff << (8 - rest) : 0);
		memset(p.addr.b + full + 1, 0, (size_t)(16 - full - 1));
	}
	return cel_object_new(ctx, &cidr_type, &p, sizeof(p));
}

FN(fn_prefix_length)
{
	(void)ctx;
	(void)n;
	return cel_int(arg_cidr(&a[0])->bits);
}

static uint64_t cost_parse(const uint64_t *s, size_t n, uint64_t r)
{
	uint64_t c = cel_cost_factor(0.1, s[0]);

	(void)n;
	(void)r;
	return c ? c : 1;
}

#define IP "net.IP"
#define CIDR "net.CIDR"
#define M(name, id, params, result, fn) { name, id, CEL_OV_MEMBER, params, result, fn, NULL }

static const struct cel_overload ip_overloads[] = {
	{ "ip", "string_to_ip", 0, "string", IP, fn_ip, cost_parse },
	{ "isIP", "is_ip", 0, "string", "bool", fn_is_ip, cost_parse },
	{ "ip.isCanonical", "ip_is_canonical", 0, "string", "bool", fn_is_canonical,
	  cost_parse },
	{ "string", "ip_to_string", 0, IP, "string", fn_ip_string, NULL },
	M("family", "ip_family", IP, "int", fn_family),
	M("isUnspecified", "ip_is_unspecified", IP, "bool", fn_is_unspecified),
	M("isLoopback", "ip_is_loopback", IP, "bool", fn_is_loopback),
	M("isLinkLocalMulticast", "ip_is_link_local_multicast", IP, "bool",
	  fn_is_ll_multicast),
	M("isLinkLocalUnicast", "ip_is_link_local_unicast", IP, "bool", fn_is_ll_unicast),
	M("isGlobalUnicast", "ip_is_global_unicast", IP, "bool", fn_is_global_unicast),
	{ "cidr", "string_to_cidr", 0, "string", CIDR, fn_cidr, cost_parse },
	{ "isCIDR", "is_cidr", 0, "string", "bool", fn_is_cidr, cost_parse },
	{ "string", "cidr_to_string", 0, CIDR, "string", fn_ip_string, NULL },
	M("containsIP", "cidr_contains_ip_ip", CIDR ", " IP, "bool", fn_contains_ip),
	M("containsIP", "cidr_contains_ip_string", CIDR ", string", "bool", fn_contains_ip),
	M("containsCIDR", "cidr_contains_cidr", CIDR ", " CIDR, "bool", fn_contains_cidr),
	M("containsCIDR", "cidr_contains_cidr_string", CIDR ", string", "bool",
	  fn_contains_cidr),
	M("ip", "cidr_ip", CIDR, IP, fn_cidr_ip),
	M("masked", "cidr_masked", CIDR, CIDR, fn_masked),
	M("prefixLength", "cidr_prefix_length", CIDR, "int", fn_prefix_length),
};

static const struct cel_object_type *const ip_types[] = { &ip_type, &cidr_type };

const struct cel_library cel_lib_ip = {
	.name = "ip",
	.overloads = ip_overloads,
	.n_overloads = CEL_ARRAY_LEN(ip_overloads),
	.types = ip_types,
	.n_types = CEL_ARRAY_LEN(ip_types),
};
