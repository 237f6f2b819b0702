/* cel_lib_url.c - the Kubernetes URL library (type kubernetes.URL), with
 * the parsing rules of Go's url.ParseRequestURI.
 *
 *   url("https://example.com:80/a?x=1"), isURL(s)
 *   <URL>.getScheme() getHost() getHostname() getPort() getEscapedPath()
 *        getQuery()
 *
 * A request URI is absolute ("scheme:...") or an absolute path ("/..."); a
 * fragment is not split off. The authority after "//" is
 * [userinfo@]host[:port] with an IPv6 literal in brackets and a numeric
 * port; the path must be validly %-escaped. getHostname drops the port and
 * the brackets; getEscapedPath re-escapes the decoded path unless the
 * written one is already a valid encoding of it; getQuery decodes the query
 * into map(string, list(string)) as url.ParseQuery does, skipping pairs that
 * do not decode. */
#include <errno.h>
#include <string.h>

#include "cel_lib.h"
#include "cel_url.h"
#include "cel_value.h"
#include "escape.h"
#include "hex.h"
#include "strbuf.h"
#include "utf8.h"

/* A parsed URL: spans of the source string, which the program or the
 * caller owns for the evaluation. */
struct url_parts {
	const char *src;
	size_t src_len;
	const char *scheme, *host, *path, *query, *opaque;
	size_t scheme_len, host_len, path_len, query_len, opaque_len;
	bool has_query;
};

/* Why a string is not a request URI, as Go's net/url says it: fmt holds at
 * most one %s, which takes arg (a span of the input) quoted as %q does. */
struct url_why {
	const char *fmt;
	const char *arg;
	size_t arg_len;
};

static bool fail(struct url_why *why, const char *fmt, const char *arg, size_t arg_len)
{
	why->fmt = fmt;
	why->arg = arg;
	why->arg_len = arg_len;
	return false;
}

static bool is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Every '%' starts a valid escape; Go quotes up to 3 bytes from the bad one. */
static bool escapes_valid(const char *s, size_t len, struct url_why *why)
{
	for (size_t i = 0; i < len; i++) {
		if (s[i] != '%')
			continue;
		if (i + 2 >= len || hex_value(s[i + 1]) < 0 || hex_value(s[i + 2]) < 0)
			return fail(why, "invalid URL escape %s", s + i, len - i < 3 ? len - i : 3);
		i += 2;
	}
	return true;
}

/* Go's validOptionalPort: "" or ':' followed by digits. */
static bool valid_optional_port(const char *p, size_t len)
{
	if (len == 0)
		return true;
	if (p[0] != ':')
		return false;
	for (size_t i = 1; i < len; i++)
		if (!is_digit(p[i]))
			return false;
	return true;
}

/* Go's url.getScheme: "" when no scheme; false on ":..." at the start. */
static bool split_scheme(struct url_parts *u, const char **rest, size_t *rest_len,
			 struct url_why *why)
{
	const char *s = u->src;
	size_t len = u->src_len;

	for (size_t i = 0; i < len; i++) {
		char c = s[i];

		if (is_alpha(c))
			continue;
		if (is_digit(c) || c == '+' || c == '-' || c == '.') {
			if (i == 0)
				break;
			continue;
		}
		if (c == ':') {
			if (i == 0)
				return fail(why, "missing protocol scheme", NULL, 0);
			u->scheme = s;
			u->scheme_len = i;
			*rest = s + i + 1;
			*rest_len = len - i - 1;
			return true;
		}
		break;
	}
	*rest = s;
	*rest_len = len;
	return true;
}

/* [userinfo@]host[:port]; host is kept with its port, as url.URL.Host. */
static bool parse_authority(struct url_parts *u, const char *a, size_t len, struct url_why *why)
{
	const char *at = NULL, *host;
	size_t hlen;

	for (size_t i = len; i-- > 0;)
		if (a[i] == '@') {
			at = a + i;
			break;
		}
	host = at ? at + 1 : a;
	hlen = len - (size_t)(host - a);
	if (hlen && host[0] == '[') {
		const char *close = memchr(host, ']', hlen);
		const char *port;

		if (!close)
			return fail(why, "missing ']' in host", NULL, 0);
		port = close + 1;
		if (!valid_optional_port(port, (size_t)(host + hlen - port)))
			return fail(why, "invalid port %s after host", port,
				    (size_t)(host + hlen - port));
	} else {
		const char *colon = NULL;

		/* Go checks from the last ':', so "a:b:1" has port ":1". */
		for (size_t i = hlen; i-- > 0;)
			if (host[i] == ':') {
				colon = host + i;
				break;
			}
		if (colon && !valid_optional_port(colon, (size_t)(host + hlen - colon)))
			return fail(why, "invalid port %s after host", colon,
				    (size_t)(host + hlen - colon));
		/* Go's host alphabet: unreserved, sub-delims, ':' and '%'
		 * escapes, a few it tolerates, and any non-ASCII byte. */
		for (size_t i = 0; i < hlen; i++) {
			unsigned char c = (unsigned char)host[i];

			if (c >= 0x80 || is_alpha((char)c) || is_digit((char)c) ||
			    strchr("-._~!$&'()*+,;=:[]<>\"%", c))
				continue;
			return fail(why, "invalid character %s in host name", host + i, 1);
		}
	}
	u->host = host;
	u->host_len = hlen;
	return true;
}

static bool parse_url(const char *s, size_t len, struct url_parts *u, struct url_why *why)
{
	const char *rest;
	size_t rest_len;

	memset(u, 0, sizeof(*u));
	u->src = s;
	u->src_len = len;
	if (len == 0)
		return fail(why, "empty url", NULL, 0);
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return fail(why, "net/url: invalid control character in URL", NULL, 0);
	if (!split_scheme(u, &rest, &rest_len, why))
		return false;
	/* The query starts at the first '?'. */
	{
		const char *q = memchr(rest, '?', rest_len);

		if (q) {
			u->has_query = true;
			u->query = q + 1;
			u->query_len = rest_len - (size_t)(q - rest) - 1;
			rest_len = (size_t)(q - rest);
		}
	}
	if (rest_len == 0 || rest[0] != '/') {
		if (u->scheme) {
			u->opaque = rest;
			u->opaque_len = rest_len;
			return true;
		}
		return fail(why, "invalid URI for request", NULL, 0);
	}
	if (u->scheme && rest_len >= 2 && rest[1] == '/' && !(rest_len >= 3 && rest[2] == '/')) {
		const char *auth = rest + 2;
		const char *slash = memchr(auth, '/', rest_len - 2);
		size_t alen = slash ? (size_t)(slash - auth) : rest_len - 2;

		if (!parse_authority(u, auth, alen, why))
			return false;
		rest = auth + alen;
		rest_len -= alen + 2;
	}
	if (!escapes_valid(rest, rest_len, why))
		return false;
	u->path = rest;
	u->path_len = rest_len;
	return true;
}

static const struct cel_object_type url_type;

static void print_url(struct strbuf *sb, const void *p)
{
	const struct url_parts *u = p;

	sb_puts(sb, "url(\"");
	sb_append(sb, u->src, u->src_len);
	sb_puts(sb, "\")");
}

static bool url_equal(const void *a, const void *b)
{
	const struct url_parts *x = a, *y = b;

	return x->src_len == y->src_len && !memcmp(x->src, y->src, x->src_len);
}

static const struct cel_object_type url_type = {
	.name = "kubernetes.URL",
	.equal = url_equal,
	.print = print_url,
};

#define FN(name) static struct cel_value name(struct cel_ctx *ctx, const struct cel_value *a, \
					      size_t n)

static const struct url_parts *arg_url(const struct cel_value *v)
{
	return v->v.obj.ptr;
}

/* Go's *url.Error text: parse "S": WHY, S (and WHY's argument) as Go's %q
 * quotes them. */
static struct cel_value url_error(struct cel_ctx *ctx, const char *s, size_t len,
				  const struct url_why *why)
{
	const char *spec = strstr(why->fmt, "%s");
	struct strbuf sb = STRBUF_INIT;
	struct cel_value r;

	sb_puts(&sb, "parse ");
	sb_quote(&sb, s, len, SB_QUOTE_GO);
	sb_puts(&sb, ": ");
	if (!spec) {
		sb_puts(&sb, why->fmt);
	} else {
		sb_append(&sb, why->fmt, (size_t)(spec - why->fmt));
		sb_quote(&sb, why->arg, why->arg_len, SB_QUOTE_GO);
		sb_puts(&sb, spec + 2);
	}
	r = sb_error(&sb) ? cel_error_oom(ctx) : cel_string_copy(ctx, sb_str(&sb), sb.len);
	sb_free(&sb);
	return r;
}

int cel_url_check(struct cel_ctx *ctx, const char *s, size_t len, struct cel_value *msg)
{
	struct url_parts u;
	struct url_why why;

	if (parse_url(s, len, &u, &why))
		return 0;
	*msg = url_error(ctx, s, len, &why);
	return msg->kind == CEL_ERROR ? -ENOMEM : -EINVAL;
}

FN(fn_url)
{
	struct url_parts u;
	struct url_why why;
	struct cel_value msg;

	(void)n;
	if (!parse_url(a[0].v.str.s, a[0].v.str.len, &u, &why)) {
		msg = url_error(ctx, a[0].v.str.s, a[0].v.str.len, &why);
		if (msg.kind == CEL_ERROR)
			return msg;
		return cel_errorf(ctx, "URL parse error during conversion from string: %.*s",
				  (int)msg.v.str.len, msg.v.str.s);
	}
	return cel_object_new(ctx, &url_type, &u, sizeof(u));
}

FN(fn_is_url)
{
	struct url_parts u;
	struct url_why why;

	(void)ctx;
	(void)n;
	return cel_bool(parse_url(a[0].v.str.s, a[0].v.str.len, &u, &why));
}

FN(fn_scheme)
{
	(void)ctx;
	(void)n;
	return cel_string(arg_url(&a[0])->scheme ? arg_url(&a[0])->scheme : "",
			  arg_url(&a[0])->scheme_len);
}

FN(fn_host)
{
	(void)ctx;
	(void)n;
	return cel_string(arg_url(&a[0])->host ? arg_url(&a[0])->host : "",
			  arg_url(&a[0])->host_len);
}

/* Go's splitHostPort on url.URL.Host: the port follows the last ':' when
 * that is a valid port; the host loses its IPv6 brackets. */
static void split_host_port(const struct url_parts *u, const char **host, size_t *host_len,
			    const char **port, size_t *port_len)
{
	const char *h = u->host ? u->host : "";
	size_t hl = u->host_len;

	*port = "";
	*port_len = 0;
	for (size_t i = hl; i-- > 0;)
		if (h[i] == ':') {
			if (valid_optional_port(h + i, hl - i)) {
				*port = h + i + 1;
				*port_len = hl - i - 1;
				hl = i;
			}
			break;
		}
	if (hl >= 2 && h[0] == '[' && h[hl - 1] == ']') {
		h++;
		hl -= 2;
	}
	*host = h;
	*host_len = hl;
}

FN(fn_hostname)
{
	const char *host, *port;
	size_t host_len, port_len;

	(void)ctx;
	(void)n;
	split_host_port(arg_url(&a[0]), &host, &host_len, &port, &port_len);
	return cel_string(host, host_len);
}

FN(fn_port)
{
	const char *host, *port;
	size_t host_len, port_len;

	(void)ctx;
	(void)n;
	split_host_port(arg_url(&a[0]), &host, &host_len, &port, &port_len);
	return cel_string(port, port_len);
}

/* Characters a path keeps unescaped (Go's shouldEscape for encodePath). */
static bool path_char_ok(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("-_.~$&+,/:;=@", c));
}

/* Go's validEncoded also accepts the sub-delims it would escape. */
static bool raw_path_valid(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '%' || path_char_ok(c) || strchr("!'()*[]", c))
			continue;
		return false;
	}
	return true;
}

FN(fn_escaped_path)
{
	const struct url_parts *u = arg_url(&a[0]);
	const char *p = u->path ? u->path : "";
	size_t len = u->path_len, out = 0;
	char *d;

	(void)n;
	if (raw_path_valid(p, len))
		return cel_string(p, len);
	/* Decode, then escape what a path may not hold. */
	d = cel_alloc(ctx, 3 * len + 1);
	if (!d)
		return cel_error_oom(ctx);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)p[i];

		if (c == '%' && i + 2 < len) {
			c = (unsigned char)(hex_value(p[i + 1]) << 4 | hex_value(p[i + 2]));
			i += 2;
		}
		if (path_char_ok(c)) {
			d[out++] = (char)c;
		} else {
			d[out++] = '%';
			d[out++] = hex_upper[c >> 4];
			d[out++] = hex_upper[c & 15];
		}
	}
	d[out] = 0;
	return cel_string(d, out);
}

/* Query unescaping ('+' is a space). False on a bad escape or a result
 * that is not UTF-8. */
static bool query_unescape(struct cel_ctx *ctx, const char *s, size_t len,
			   struct cel_value *out)
{
	char *d = cel_alloc(ctx, len + 1);
	size_t k = 0;

	if (!d) {
		*out = cel_error_oom(ctx);
		return true;
	}
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '+') {
			d[k++] = ' ';
		} else if (s[i] == '%') {
			if (i + 2 >= len || hex_value(s[i + 1]) < 0 || hex_value(s[i + 2]) < 0)
				return false;
			d[k++] = (char)(hex_value(s[i + 1]) << 4 | hex_value(s[i + 2]));
			i += 2;
		} else {
			d[k++] = s[i];
		}
	}
	d[k] = 0;
	if (!utf8_valid(d, k))
		return false;
	*out = cel_string(d, k);
	return true;
}

/* Decode the query's key=value pairs into keys[] and vals[] (n_pairs
 * slots); returns how many decoded, or SIZE_MAX when memory ran out. */
static size_t decode_pairs(struct cel_ctx *ctx, const char *q, size_t qlen,
			   struct cel_value *keys, struct cel_value *vals)
{
	size_t n = 0, start = 0;

	while (qlen && start <= qlen) {
		const char *amp = memchr(q + start, '&', qlen - start);
		size_t end = amp ? (size_t)(amp - q) : qlen;
		const char *pair = q + start, *eq;
		size_t plen = end - start;

		start = end + 1;
		if (plen == 0 || memchr(pair, ';', plen))
			continue;
		eq = memchr(pair, '=', plen);
		vals[n] = cel_string("", 0);
		if (!query_unescape(ctx, pair, eq ? (size_t)(eq - pair) : plen, &keys[n]))
			continue;
		if (eq && !query_unescape(ctx, eq + 1, plen - (size_t)(eq + 1 - pair), &vals[n]))
			continue;
		if (cel_is_error(&keys[n]) || cel_is_error(&vals[n]))
			return SIZE_MAX;
		n++;
	}
	return n;
}

/* url.Query(): each distinct key, in first-seen order, with its values in
 * order. Grouping compares pairs, so it is charged per comparison. */
FN(fn_query)
{
	const struct url_parts *u = arg_url(&a[0]);
	const char *q = u->query ? u->query : "";
	size_t qlen = u->query_len, n_pairs = 1, n_dec, n_keys = 0;
	struct cel_value *pk, *pv, *keys, *vals, r;
	bool *taken;

	(void)n;
	for (size_t i = 0; i < qlen; i++)
		n_pairs += q[i] == '&';
	pk = cel_alloc(ctx, 2 * n_pairs * sizeof(*pk));
	taken = cel_alloc(ctx, n_pairs * sizeof(*taken));
	if (!pk || !taken)
		return cel_error_oom(ctx);
	pv = pk + n_pairs;
	n_dec = decode_pairs(ctx, q, qlen, pk, pv);
	if (n_dec == SIZE_MAX)
		return cel_error_oom(ctx);
	memset(taken, 0, n_pairs * sizeof(*taken));
	for (size_t i = 0; i < n_dec; i++) {
		bool seen = false;

		for (size_t j = 0; j < i && !seen; j++)
			seen = cel_value_equal(&pk[j], &pk[i]);
		n_keys += !seen;
	}
	cel_cost_add(ctx, n_dec * n_dec / 10);
	r = cel_map_new(ctx, n_keys, &keys, &vals);
	if (!keys)
		return r;
	for (size_t i = 0, k = 0; i < n_dec; i++) {
		struct cel_value *items, l;
		size_t count = 0;

		if (taken[i])
			continue;
		for (size_t j = i; j < n_dec; j++)
			count += cel_value_equal(&pk[j], &pk[i]);
		l = cel_list_new(ctx, count, &items);
		if (!items)
			return l;
		count = 0;
		for (size_t j = i; j < n_dec; j++)
			if (!taken[j] && cel_value_equal(&pk[j], &pk[i])) {
				items[count++] = pv[j];
				taken[j] = true;
			}
		keys[k] = pk[i];
		vals[k++] = l;
	}
	return r;
}

static uint64_t cost_parse(const uint64_t *s, size_t n, uint64_t r)
{
	uint64_t c = cel_cost_factor(0.1, s[0]);

	(void)n;
	(void)r;
	return c ? c : 1;
}

#define U "kubernetes.URL"
#define M(name, id, result, fn) { name, id, CEL_OV_MEMBER, U, result, fn, NULL }

static const struct cel_overload url_overloads[] = {
	{ "url", "string_to_url", 0, "string", U, fn_url, cost_parse },
	{ "isURL", "is_url_string", 0, "string", "bool", fn_is_url, cost_parse },
	M("getScheme", "url_get_scheme", "string", fn_scheme),
	M("getHost", "url_get_host", "string", fn_host),
	M("getHostname", "url_get_hostname", "string", fn_hostname),
	M("getPort", "url_get_port", "string", fn_port),
	M("getEscapedPath", "url_get_escaped_path", "string", fn_escaped_path),
	M("getQuery", "url_get_query", "map(string, list(string))", fn_query),
};

static const struct cel_object_type *const url_types[] = { &url_type };

const struct cel_library cel_lib_url = {
	.name = "url",
	.overloads = url_overloads,
	.n_overloads = CEL_ARRAY_LEN(url_overloads),
	.types = url_types,
	.n_types = CEL_ARRAY_LEN(url_types),
};
