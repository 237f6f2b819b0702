/* cel_lib_strings.c - the CEL strings extension (cel-go ext.Strings, v2 as
 * Kubernetes enables it, plus reverse from v3).
 *
 * charAt, indexOf, lastIndexOf, lowerAscii, upperAscii, replace, split,
 * substring, trim, join, strings.quote, reverse. Indexes and lengths count
 * code points, as cel-go does on []rune; the error messages are cel-go's
 * ("index out of range: N", "invalid substring range. start: S, end: E").
 * Results that are parts of the receiver point into it; new strings are
 * built in the evaluation arena. Costs follow the Kubernetes cost
 * overrides: traversals ceil(0.1 * length), replace/split ceil(0.2 *
 * length), join ceil(0.2 * result length) (string.format lives in
 * cel_lib_format.c). */
#include <string.h>

#include "cel_lib.h"
#include "cel_value.h"
#include "utf8.h"

#define FN(name) static struct cel_value name(struct cel_ctx *ctx, const struct cel_value *a, \
					      size_t n)

/* Byte length of the UTF-8 sequence starting with lead byte c. */
static size_t seq_len(unsigned char c)
{
	if (c < 0x80)
		return 1;
	if (c < 0xe0)
		return 2;
	if (c < 0xf0)
		return 3;
	return 4;
}

/* Byte offset of code point index cp in s (cp <= number of code points). */
static size_t byte_offset(const char *s, size_t len, int64_t cp)
{
	size_t off = 0;

	while (cp-- > 0 && off < len)
		off += seq_len((unsigned char)s[off]);
	return off < len ? off : len;
}

/* Code point index of byte offset off (a code point boundary). */
static int64_t cp_index(const char *s, size_t off)
{
	return (int64_t)utf8_count(s, off);
}

static struct cel_value out_of_range(struct cel_ctx *ctx, int64_t i)
{
	return cel_errorf(ctx, "index out of range: %lld", (long long)i);
}

/* A new arena string of len bytes for the caller to fill (*buf). */
static struct cel_value new_string(struct cel_ctx *ctx, size_t len, char **buf)
{
	char *d = cel_alloc(ctx, len + 1);

	*buf = d;
	if (!d)
		return cel_error_oom(ctx);
	d[len] = 0;
	return cel_string(d, len);
}

FN(char_at)
{
	const char *s = a[0].v.str.s;
	size_t len = a[0].v.str.len;
	int64_t i = a[1].v.i;
	size_t off;

	(void)n;
	if (i < 0 || (uint64_t)i > utf8_count(s, len))
		return out_of_range(ctx, i);
	off = byte_offset(s, len, i);
	if (off == len)
		return cel_string("", 0);
	return cel_string(s + off, seq_len((unsigned char)s[off]));
}

/* First match of needle at or after byte offset from, stepping by code
 * points; -1 when none. */
static int64_t find_forward(const char *s, size_t len, size_t from, const char *nd, size_t nlen)
{
	for (size_t off = from; off + nlen <= len; off += seq_len((unsigned char)s[off]))
		if (!memcmp(s + off, nd, nlen))
			return (int64_t)off;
	return -1;
}

FN(index_of)
{
	const char *s = a[0].v.str.s, *nd = a[1].v.str.s;
	size_t len = a[0].v.str.len, nlen = a[1].v.str.len;
	int64_t start = n > 2 ? a[2].v.i : 0, found;

	if (nlen == 0)
		return cel_int(start);
	if (start < 0 || (uint64_t)start >= utf8_count(s, len))
		return out_of_range(ctx, start);
	found = find_forward(s, len, byte_offset(s, len, start), nd, nlen);
	return cel_int(found < 0 ? -1 : cp_index(s, (size_t)found));
}

FN(last_index_of)
{
	const char *s = a[0].v.str.s, *nd = a[1].v.str.s;
	size_t len = a[0].v.str.len, nlen = a[1].v.str.len;
	int64_t ncp = (int64_t)utf8_count(s, len);
	int64_t start;
	size_t off;

	if (n < 3) {
		if (nlen == 0)
			return cel_int(ncp);
		if (len < nlen)
			return cel_int(-1);
		start = ncp - 1;
	} else {
		start = a[2].v.i;
		if (nlen == 0)
			return cel_int(start);
		if (start < 0 || start >= ncp)
			return out_of_range(ctx, start);
	}
	/* Walk back from the start position over code point boundaries. */
	off = byte_offset(s, len, start);
	for (;;) {
		if (off + nlen <= len && !memcmp(s + off, nd, nlen))
			return cel_int(cp_index(s, off));
		if (off == 0)
			break;
		off = utf8_char_start(s, off - 1);
	}
	return cel_int(-1);
}

static struct cel_value map_ascii(struct cel_ctx *ctx, const struct cel_value *a, bool upper)
{
	const char *s = a[0].v.str.s;
	size_t len = a[0].v.str.len;
	struct cel_value r;
	char *d;

	r = new_string(ctx, len, &d);
	if (!d)
		return r;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];

		if (upper && c >= 'a' && c <= 'z')
			c = (char)(c - 'a' + 'A');
		else if (!upper && c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		d[i] = c;
	}
	return r;
}

FN(lower_ascii)
{
	(void)n;
	return map_ascii(ctx, a, false);
}

FN(upper_ascii)
{
	(void)n;
	return map_ascii(ctx, a, true);
}

/* Go's strings.Replace: an empty `old` matches before every code point and
 * at the end; limit < 0 replaces all. Two passes: count, then build. */
FN(replace)
{
	const char *s = a[0].v.str.s, *old = a[1].v.str.s, *rep = a[2].v.str.s;
	size_t len = a[0].v.str.len, olen = a[1].v.str.len, rlen = a[2].v.str.len;
	int64_t limit = n > 3 ? a[3].v.i : -1;
	size_t count = 0, out_len, pos, w;
	struct cel_value r;
	char *d;

	for (pos = 0; pos <= len && (limit < 0 || (int64_t)count < limit);) {
		int64_t f;

		if (olen == 0) {
			count++;
			if (pos == len)
				break;
			pos += seq_len((unsigned char)s[pos]);
			continue;
		}
		f = find_forward(s, len, pos, old, olen);
		if (f < 0)
			break;
		count++;
		pos = (size_t)f + olen;
	}
	if (count == 0)
		return a[0];
	if (rlen > olen && (rlen - olen) > (SIZE_MAX - len) / count)
		return cel_error_oom(ctx);
	out_len = len + count * rlen - count * olen;
	r = new_string(ctx, out_len, &d);
	if (!d)
		return r;
	w = 0;
	pos = 0;
	for (size_t k = 0; k < count; k++) {
		size_t at;

		if (olen == 0) {
			at = pos;
		} else {
			at = (size_t)find_forward(s, len, pos, old, olen);
		}
		memcpy(d + w, s + pos, at - pos);
		w += at - pos;
		memcpy(d + w, rep, rlen);
		w += rlen;
		pos = at + olen;
		if (olen == 0 && pos < len) {
			size_t cl = seq_len((unsigned char)s[pos]);

			memcpy(d + w, s + pos, cl);
			w += cl;
			pos += cl;
		}
	}
	memcpy(d + w, s + pos, len - pos);
	return r;
}

/* Go's strings.SplitN: limit 0 gives [], < 0 all parts; an empty separator
 * splits into code points (the last part keeps the rest). */
FN(split)
{
	const char *s = a[0].v.str.s, *sep = a[1].v.str.s;
	size_t len = a[0].v.str.len, slen = a[1].v.str.len;
	int64_t limit = n > 2 ? a[2].v.i : -1;
	size_t parts = 1, pos, k;
	struct cel_value r, *items;

	if (limit == 0)
		return cel_list_new(ctx, 0, &items);
	/* Count the parts. */
	if (slen == 0) {
		parts = utf8_count(s, len);
	} else {
		int64_t f;

		for (pos = 0; (f = find_forward(s, len, pos, sep, slen)) >= 0;
		     pos = (size_t)f + slen)
			parts++;
	}
	if (limit > 0 && (uint64_t)limit < parts)
		parts = (size_t)limit;
	r = cel_list_new(ctx, parts, &items);
	if (!items)
		return r;
	for (pos = 0, k = 0; k < parts; k++) {
		size_t end;

		if (k == parts - 1) {
			end = len;
		} else if (slen == 0) {
			end = pos + seq_len((unsigned char)s[pos]);
		} else {
			end = (size_t)find_forward(s, len, pos, sep, slen);
		}
		items[k] = cel_string(s + pos, end - pos);
		pos = end + (slen && k != parts - 1 ? slen : 0);
	}
	return r;
}

FN(substring)
{
	const char *s = a[0].v.str.s;
	size_t len = a[0].v.str.len;
	int64_t ncp = (int64_t)utf8_count(s, len);
	int64_t start = a[1].v.i, end = n > 2 ? a[2].v.i : ncp;
	size_t b0, b1;

	if (start > end)
		return cel_errorf(ctx, "invalid substring range. start: %lld, end: %lld",
				  (long long)start, (long long)end);
	if (start < 0 || start > ncp)
		return out_of_range(ctx, start);
	if (end < 0 || end > ncp)
		return out_of_range(ctx, end);
	b0 = byte_offset(s, len, start);
	b1 = byte_offset(s, len, end);
	return cel_string(s + b0, b1 - b0);
}

/* unicode.IsSpace, as Go's strings.TrimSpace uses it. */
static bool is_space(uint32_t c)
{
	switch (c) {
	case '\t': case '\n': case '\v': case '\f': case '\r': case ' ':
	case 0x85: case 0xa0: case 0x1680: case 0x2028: case 0x2029:
	case 0x202f: case 0x205f: case 0x3000:
		return true;
	default:
		return c >= 0x2000 && c <= 0x200a;
	}
}

FN(trim)
{
	const char *s = a[0].v.str.s;
	size_t len = a[0].v.str.len, b = 0, e = len;
	uint32_t cp;

	(void)ctx;
	(void)n;
	while (b < e) {
		size_t l = utf8_decode(s + b, e - b, &cp);

		if (!is_space(cp))
			break;
		b += l ? l : 1;
	}
	while (e > b) {
		size_t p = utf8_char_start(s, e - 1);

		if (p < b)
			p = b;
		utf8_decode(s + p, e - p, &cp);
		if (!is_space(cp))
			break;
		e = p;
	}
	return cel_string(s + b, e - b);
}

FN(join)
{
	const struct cel_list *l = a[0].v.list;
	const char *sep = n > 1 ? a[1].v.str.s : "";
	size_t slen = n > 1 ? a[1].v.str.len : 0;
	size_t total = 0, w = 0;
	struct cel_value r;
	char *d;

	for (size_t i = 0; i < l->len; i++) {
		if (l->items[i].kind != CEL_STRING)
			return cel_errorf(ctx, "join: invalid input: %s",
					  cel_value_type_name(&l->items[i]));
		total += l->items[i].v.str.len + (i ? slen : 0);
	}
	r = new_string(ctx, total, &d);
	if (!d)
		return r;
	for (size_t i = 0; i < l->len; i++) {
		if (i) {
			memcpy(d + w, sep, slen);
			w += slen;
		}
		memcpy(d + w, l->items[i].v.str.s, l->items[i].v.str.len);
		w += l->items[i].v.str.len;
	}
	return r;
}

/* strings.quote: double quotes around the string, with the C-style escapes
 * for the control characters Go names, backslash and double quote; every
 * other character as itself. */
FN(quote)
{
	static const char esc_from[] = "\a\b\f\n\r\t\v\\\"";
	static const char esc_to[] = "abfnrtv\\\"";
	const char *s = a[0].v.str.s;
	size_t len = a[0].v.str.len, total = 2, w = 0;
	struct cel_value r;
	char *d;

	(void)n;
	for (size_t i = 0; i < len; i++)
		total += (s[i] && strchr(esc_from, s[i])) ? 2 : 1;
	r = new_string(ctx, total, &d);
	if (!d)
		return r;
	d[w++] = '"';
	for (size_t i = 0; i < len; i++) {
		const char *e = s[i] ? strchr(esc_from, s[i]) : NULL;

		if (e) {
			d[w++] = '\\';
			d[w++] = esc_to[e - esc_from];
		} else {
			d[w++] = s[i];
		}
	}
	d[w++] = '"';
	return r;
}

/* reverse: the code points in reverse order. */
FN(reverse)
{
	const char *s = a[0].v.str.s;
	size_t len = a[0].v.str.len, pos = 0;
	struct cel_value r;
	char *d;

	(void)n;
	r = new_string(ctx, len, &d);
	if (!d)
		return r;
	while (pos < len) {
		size_t cl = seq_len((unsigned char)s[pos]);

		memcpy(d + len - pos - cl, s + pos, cl);
		pos += cl;
	}
	return r;
}

/* ---- costs ---- */

static uint64_t at_least_one(uint64_t c)
{
	return c ? c : 1;
}

static uint64_t cost_traverse(const uint64_t *s, size_t n, uint64_t r)
{
	(void)n;
	(void)r;
	return at_least_one(cel_cost_factor(0.1, s[0]));
}

static uint64_t cost_traverse_both(const uint64_t *s, size_t n, uint64_t r)
{
	(void)n;
	(void)r;
	return at_least_one(cel_sat_add(cel_cost_factor(0.1, s[0]), cel_cost_factor(0.1, s[1])));
}

static uint64_t cost_rewrite(const uint64_t *s, size_t n, uint64_t r)
{
	(void)n;
	(void)r;
	return at_least_one(cel_cost_factor(0.2, s[0]));
}

static uint64_t cost_result(const uint64_t *s, size_t n, uint64_t r)
{
	(void)s;
	(void)n;
	return at_least_one(cel_cost_factor(0.2, r));
}

#define M(name, id, params, result, fn, cost) \
	{ name, id, CEL_OV_MEMBER, params, result, fn, cost }

static const struct cel_overload strings_overloads[] = {
	M("charAt", "string_char_at_int", "string, int", "string", char_at, cost_traverse),
	M("indexOf", "string_index_of_string", "string, string", "int", index_of,
	  cost_traverse_both),
	M("indexOf", "string_index_of_string_int", "string, string, int", "int", index_of,
	  cost_traverse_both),
	M("lastIndexOf", "string_last_index_of_string", "string, string", "int",
	  last_index_of, cost_traverse_both),
	M("lastIndexOf", "string_last_index_of_string_int", "string, string, int", "int",
	  last_index_of, cost_traverse_both),
	M("lowerAscii", "string_lower_ascii", "string", "string", lower_ascii, cost_traverse),
	M("upperAscii", "string_upper_ascii", "string", "string", upper_ascii, cost_traverse),
	M("replace", "string_replace_string_string", "string, string, string", "string",
	  replace, cost_rewrite),
	M("replace", "string_replace_string_string_int", "string, string, string, int",
	  "string", replace, cost_rewrite),
	M("split", "string_split_string", "string, string", "list(string)", split,
	  cost_rewrite),
	M("split", "string_split_string_int", "string, string, int", "list(string)", split,
	  cost_rewrite),
	M("substring", "string_substring_int", "string, int", "string", substring,
	  cost_traverse),
	M("substring", "string_substring_int_int", "string, int, int", "string", substring,
	  cost_traverse),
	M("trim", "string_trim", "string", "string", trim, cost_traverse),
	M("join", "list_join", "list(string)", "string", join, cost_result),
	M("join", "list_join_string", "list(string), string", "string", join, cost_result),
	M("reverse", "string_reverse", "string", "string", reverse, cost_traverse),
	{ "strings.quote", "strings_quote", 0, "string", "string", quote, cost_traverse },
};

const struct cel_library cel_lib_strings = {
	.name = "strings",
	.overloads = strings_overloads,
	.n_overloads = CEL_ARRAY_LEN(strings_overloads),
};
