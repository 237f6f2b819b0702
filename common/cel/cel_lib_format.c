/* cel_lib_format.c - string.format, as cel-go's strings extension defines it.
 *
 *   "%s has %d GPUs, %.1f%% busy".format([name, 8, 12.5])
 *
 * Clauses: %% %s %d %f %e %b %o %x %X, with an optional precision (.N) for
 * %f and %e (default 6). %s prints any value the way cel-go's string clause
 * does: strings and bytes as their text, doubles with the fewest digits in
 * positional notation (NaN, Infinity, -Infinity), types by name, timestamps
 * RFC 3339, durations in seconds, lists as [a, b] and maps as {k: v} with
 * entries sorted by their printed key. %d also takes doubles; %x and %X take
 * strings and bytes (hex of each byte). These are the semantics of cel-go's
 * second formatter, which the cel-spec conformance suite (v0.25.1) tests;
 * Kubernetes' strings v2 still runs the first one, which quotes strings
 * inside lists and prints doubles there with six decimals. Errors are
 * cel-go's messages. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cel_ast.h"
#include "cel_lib.h"
#include "cel_value.h"
#include "hex.h"
#include "strbuf.h"

#define FORMAT_MAX_DEPTH 32             /* nesting of lists and maps printed by %s */
#define FORMAT_MAX_PRECISION 1000

static struct cel_value format_error(struct cel_ctx *ctx, const char *what,
				     const struct cel_value *v)
{
	return cel_errorf(ctx, "error during formatting: %s, was given %s", what,
			  cel_value_type_name(v));
}

/* Doubles as Go's strconv.FormatFloat(d, 'f', -1, 64) writes them: the
 * fewest digits that read back, in positional notation (1e21 is
 * "1000000000000000000000", 1e-7 is "0.0000001"); cel-go's names for the
 * non-finite ones. */
static void put_double(struct strbuf *sb, double d)
{
	char buf[48], digits[24];
	int prec, exp, nd = 0, dp;
	char *p;

	if (isnan(d)) {
		sb_puts(sb, "NaN");
		return;
	}
	if (isinf(d)) {
		sb_puts(sb, d > 0 ? "Infinity" : "-Infinity");
		return;
	}
	for (prec = 0; prec < 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*e", prec, d);
		if (strtod(buf, NULL) == d)
			break;
	}
	/* buf: [-]D[.DDD]e[+-]XX */
	p = buf;
	if (*p == '-') {
		sb_putc(sb, '-');
		p++;
	}
	for (; *p && *p != 'e'; p++)
		if (*p != '.')
			digits[nd++] = *p;
	exp = atoi(p + 1);
	while (nd > 1 && digits[nd - 1] == '0')
		nd--;
	if (nd == 1 && digits[0] == '0') {
		sb_putc(sb, '0');
		return;
	}
	dp = exp + 1;                   /* digits before the decimal point */
	if (dp <= 0) {
		sb_puts(sb, "0.");
		for (int i = 0; i < -dp; i++)
			sb_putc(sb, '0');
		sb_append(sb, digits, (size_t)nd);
	} else if (dp >= nd) {
		sb_append(sb, digits, (size_t)nd);
		for (int i = nd; i < dp; i++)
			sb_putc(sb, '0');
	} else {
		sb_append(sb, digits, (size_t)dp);
		sb_putc(sb, '.');
		sb_append(sb, digits + dp, (size_t)(nd - dp));
	}
}

static bool put_string_clause(struct cel_ctx *ctx, struct strbuf *sb, const struct cel_value *v,
			      int depth);

struct map_item {
	char *key;                      /* the printed key (heap, freed by the caller) */
	struct cel_value val;
};

static int map_item_cmp(const void *a, const void *b)
{
	return strcmp(((const struct map_item *)a)->key, ((const struct map_item *)b)->key);
}

static bool put_map(struct cel_ctx *ctx, struct strbuf *sb, const struct cel_map *m, int depth)
{
	size_t n = cel_map_size(m);
	struct map_item *items = calloc(n ? n : 1, sizeof(*items));
	bool ok = items != NULL;

	for (size_t i = 0; ok && i < n; i++) {
		struct strbuf kb = STRBUF_INIT;
		struct cel_value k;

		cel_map_entry(ctx, m, i, &k, &items[i].val);
		ok = put_string_clause(ctx, &kb, &k, depth + 1) && !sb_error(&kb);
		items[i].key = sb_detach(&kb);
		sb_free(&kb);
		ok = ok && items[i].key;
	}
	if (ok) {
		qsort(items, n, sizeof(*items), map_item_cmp);
		sb_putc(sb, '{');
		for (size_t i = 0; ok && i < n; i++) {
			if (i)
				sb_puts(sb, ", ");
			sb_puts(sb, items[i].key);
			sb_puts(sb, ": ");
			ok = put_string_clause(ctx, sb, &items[i].val, depth + 1);
		}
		sb_putc(sb, '}');
	}
	for (size_t i = 0; items && i < n; i++)
		free(items[i].key);
	free(items);
	return ok;
}

/* %s. False when the value cannot be printed (too deep, an object without
 * a printer) or memory ran out. */
static bool put_string_clause(struct cel_ctx *ctx, struct strbuf *sb, const struct cel_value *v,
			      int depth)
{
	if (depth > FORMAT_MAX_DEPTH)
		return false;
	switch (v->kind) {
	case CEL_NULL:
		sb_puts(sb, "null");
		return true;
	case CEL_BOOL:
		sb_puts(sb, v->v.b ? "true" : "false");
		return true;
	case CEL_INT:
		sb_printf(sb, "%lld", (long long)v->v.i);
		return true;
	case CEL_UINT:
		sb_printf(sb, "%llu", (unsigned long long)v->v.u);
		return true;
	case CEL_DOUBLE:
		put_double(sb, v->v.d);
		return true;
	case CEL_STRING:
	case CEL_BYTES:
		sb_append(sb, v->v.str.s, v->v.str.len);
		return true;
	case CEL_TYPE:
		sb_puts(sb, v->v.type);
		return true;
	case CEL_TIMESTAMP:
		cel_timestamp_format(sb, v->v.t.sec, v->v.t.nsec);
		return true;
	case CEL_DURATION:
		cel_duration_format(sb, v->v.t.sec, v->v.t.nsec);
		return true;
	case CEL_LIST:
		sb_putc(sb, '[');
		for (size_t i = 0; i < v->v.list->len; i++) {
			if (i)
				sb_puts(sb, ", ");
			if (!put_string_clause(ctx, sb, &v->v.list->items[i], depth + 1))
				return false;
		}
		sb_putc(sb, ']');
		return true;
	case CEL_MAP:
		return put_map(ctx, sb, v->v.map, depth);
	case CEL_OBJECT:
		if (!v->v.obj.type->print)
			return false;
		v->v.obj.type->print(sb, v->v.obj.ptr);
		return true;
	default:
		return false;
	}
}

/* Integers in base 2, 8 or 16, with a leading minus for negative ints. */
static void put_radix(struct strbuf *sb, bool neg, uint64_t mag, unsigned base, bool upper)
{
	const char *digits = upper ? hex_upper : hex_lower;
	char buf[72];
	size_t i = sizeof(buf);

	do {
		buf[--i] = digits[mag % base];
		mag /= base;
	} while (mag);
	if (neg)
		buf[--i] = '-';
	sb_append(sb, buf + i, sizeof(buf) - i);
}

static bool int_magnitude(const struct cel_value *v, bool *neg, uint64_t *mag)
{
	if (v->kind == CEL_INT) {
		*neg = v->v.i < 0;
		*mag = *neg ? (uint64_t)0 - (uint64_t)v->v.i : (uint64_t)v->v.i;
		return true;
	}
	if (v->kind == CEL_UINT) {
		*neg = false;
		*mag = v->v.u;
		return true;
	}
	if (v->kind == CEL_BOOL) {
		*neg = false;
		*mag = v->v.b;
		return true;
	}
	return false;
}

static bool as_double(const struct cel_value *v, double *d)
{
	switch (v->kind) {
	case CEL_DOUBLE:
		*d = v->v.d;
		return true;
	case CEL_INT:
		*d = (double)v->v.i;
		return true;
	case CEL_UINT:
		*d = (double)v->v.u;
		return true;
	default:
		return false;
	}
}

/* One clause: verb with precision prec (-1: default) applied to v. */
static struct cel_value put_clause(struct cel_ctx *ctx, struct strbuf *sb, char verb, int prec,
				   const struct cel_value *v)
{
	bool neg;
	uint64_t mag;
	double d;

	switch (verb) {
	case 's':
		if (!put_string_clause(ctx, sb, v, 0))
			return format_error(ctx, "string clause can only be used on strings, "
					    "bools, bytes, ints, doubles, maps, lists, types, "
					    "durations, and timestamps", v);
		return cel_null();
	case 'd':
		if (v->kind == CEL_DOUBLE) {
			put_double(sb, v->v.d);
			return cel_null();
		}
		if (v->kind == CEL_BOOL || !int_magnitude(v, &neg, &mag))
			return format_error(ctx, "decimal clause can only be used on integers", v);
		put_radix(sb, neg, mag, 10, false);
		return cel_null();
	case 'b':
		if (!int_magnitude(v, &neg, &mag))
			return format_error(ctx, "only integers and bools can be formatted as "
					    "binary", v);
		put_radix(sb, neg, mag, 2, false);
		return cel_null();
	case 'o':
		if (v->kind == CEL_BOOL || !int_magnitude(v, &neg, &mag))
			return format_error(ctx, "octal clause can only be used on integers", v);
		put_radix(sb, neg, mag, 8, false);
		return cel_null();
	case 'x':
	case 'X':
		if (v->kind == CEL_STRING || v->kind == CEL_BYTES) {
			for (size_t i = 0; i < v->v.str.len; i++)
				sb_printf(sb, verb == 'x' ? "%02x" : "%02X",
					  (unsigned char)v->v.str.s[i]);
			return cel_null();
		}
		if (v->kind == CEL_BOOL || !int_magnitude(v, &neg, &mag))
			return format_error(ctx, "only integers, byte buffers, and strings can be "
					    "formatted as hex", v);
		put_radix(sb, neg, mag, 16, verb == 'X');
		return cel_null();
	case 'f':
	case 'e':
		if (!as_double(v, &d))
			return format_error(ctx, verb == 'f' ?
					    "fixed-point clause can only be used on doubles" :
					    "scientific clause can only be used on doubles", v);
		if (!isfinite(d))
			put_double(sb, d);
		else
			sb_printf(sb, verb == 'f' ? "%.*f" : "%.*e", prec < 0 ? 6 : prec, d);
		return cel_null();
	default:
		if ((unsigned char)verb < 0x20 || (unsigned char)verb >= 0x7f)
			return cel_errorf(ctx, "could not parse formatting clause: unrecognized "
					  "formatting clause \"\\x%02x\"", (unsigned char)verb);
		return cel_errorf(ctx, "could not parse formatting clause: unrecognized formatting "
				  "clause \"%c\"", verb);
	}
}

static struct cel_value fn_format(struct cel_ctx *ctx, const struct cel_value *a, size_t n)
{
	const char *f = a[0].v.str.s, *end = f + a[0].v.str.len;
	const struct cel_list *args = a[1].v.list;
	struct strbuf sb = STRBUF_INIT;
	struct cel_value r = cel_null();
	size_t next = 0;

	(void)n;
	while (f < end && !cel_is_error(&r)) {
		const char *pct = memchr(f, '%', (size_t)(end - f));
		int prec = -1;

		if (!pct) {
			sb_append(&sb, f, (size_t)(end - f));
			break;
		}
		sb_append(&sb, f, (size_t)(pct - f));
		f = pct + 1;
		if (f < end && *f == '%') {
			sb_putc(&sb, '%');
			f++;
			continue;
		}
		if (f < end && *f == '.') {
			prec = 0;
			for (f++; f < end && *f >= '0' && *f <= '9'; f++)
				if (prec <= FORMAT_MAX_PRECISION)
					prec = prec * 10 + (*f - '0');
			if (prec > FORMAT_MAX_PRECISION) {
				r = cel_errorf(ctx, "could not parse formatting clause: precision "
					       "over %d", FORMAT_MAX_PRECISION);
				break;
			}
		}
		if (f >= end) {
			r = cel_errorf(ctx, "could not parse formatting clause: unexpected end "
				       "of format string");
			break;
		}
		if (prec >= 0 && *f != 'f' && *f != 'e') {
			r = cel_errorf(ctx, "could not parse formatting clause: precision is "
				       "only allowed with %%f and %%e");
			break;
		}
		if (!*f || !strchr("sdfebxXo", *f)) {
			r = put_clause(ctx, &sb, *f, prec, NULL);
			break;
		}
		if (next >= args->len) {
			r = cel_errorf(ctx, "index %zu out of range", next);
			break;
		}
		r = put_clause(ctx, &sb, *f, prec, &args->items[next++]);
		f++;
	}
	if (!cel_is_error(&r))
		r = sb_error(&sb) ? cel_error_oom(ctx) : cel_string_copy(ctx, sb.buf ? sb_str(&sb) : "",
									 sb.len);
	sb_free(&sb);
	return r;
}

/* cel-go charges the format string's traversal and the result's size. */
static uint64_t cost_format(const uint64_t *s, size_t n, uint64_t r)
{
	uint64_t c = cel_sat_add(cel_cost_factor(0.1, s[0]), cel_cost_factor(0.1, r));

	(void)n;
	return c ? c : 1;
}

static const struct cel_overload format_overloads[] = {
	{ "format", "string_format", CEL_OV_MEMBER, "string, list(dyn)", "string", fn_format,
	  cost_format },
};

const struct cel_library cel_lib_format = {
	.name = "format",
	.overloads = format_overloads,
	.n_overloads = CEL_ARRAY_LEN(format_overloads),
};
