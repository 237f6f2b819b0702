/* quantity.c - Kubernetes resource.Quantity: parsing, exact comparison and
 * arithmetic, canonical printing.
 *
 * The semantics are apimachinery's (pkg/api/resource): the same scanner
 * (parseQuantityString), the same suffix table, the same split between the
 * int64 "fast path" and the arbitrary-precision slow path, rounding of
 * non-zero values away from zero to nano precision, the BinarySI cap at
 * 2^63-1, and CanonicalizeBytes for printing. Where apimachinery would need
 * more than a 128-bit mantissa we return -ERANGE instead. */
#include "quantity.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

typedef unsigned __int128 u128;
typedef __int128 i128;

#define U128_MAX (~(u128)0)
#define I128_MAX ((i128)(U128_MAX >> 1))
/* 10^38 is the largest power of ten below 2^127. */
#define POW10_MAX 38

static const char ERR_FORMAT[] = "quantities must match the regular expression "
				 "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
static const char ERR_NUMERIC[] = "unable to parse numeric part of quantity";
static const char ERR_SUFFIX[] = "unable to parse quantity's suffix";
static const char ERR_RANGE[] = "quantity is out of the representable range "
				"(more than 38 significant digits or a huge exponent)";

#define E19 ((u128)10000000000000000000u)

/* 10^0 .. 10^38, the powers of ten a 128-bit mantissa can hold. */
static const u128 pow10_tab[POW10_MAX + 1] = {
	1u, 10u, 100u, 1000u, 10000u, 100000u, 1000000u, 10000000u, 100000000u,
	1000000000u, 10000000000u, 100000000000u, 1000000000000u, 10000000000000u,
	100000000000000u, 1000000000000000u, 10000000000000000u, 100000000000000000u,
	1000000000000000000u, E19, E19 * 10u, E19 * 100u, E19 * 1000u, E19 * 10000u,
	E19 * 100000u, E19 * 1000000u, E19 * 10000000u, E19 * 100000000u,
	E19 * 1000000000u, E19 * 10000000000u, E19 * 100000000000u, E19 * 1000000000000u,
	E19 * 10000000000000u, E19 * 100000000000000u, E19 * 1000000000000000u,
	E19 * 10000000000000000u, E19 * 100000000000000000u, E19 * 1000000000000000000u,
	E19 * E19,
};

static u128 pow10_u128(unsigned n)
{
	return pow10_tab[n];
}

static u128 mag(i128 v)
{
	return v < 0 ? (u128)0 - (u128)v : (u128)v;
}

/* Decimal digits of v > 0, from its bit length (1233/4096 ~ log10 2). */
static int ndigits(u128 v)
{
	uint64_t hi = (uint64_t)(v >> 64);
	int bits = hi ? 128 - __builtin_clzll(hi) : 64 - __builtin_clzll((uint64_t)v | 1);
	int t = ((bits - 1) * 1233) >> 12;

	if (t >= POW10_MAX)
		return POW10_MAX + 1;
	return t + 1 + (v >= pow10_tab[t + 1]);
}

/* ---- scanning (parseQuantityString) ------------------------------------ */

struct qscan {
	bool neg;
	const char *num;            /* integer digits without leading zeros, "0" if none */
	size_t num_len;
	const char *denom;          /* fraction digits, possibly empty */
	size_t denom_len;
	bool value_has_digit;       /* the number part holds at least one digit */
	const char *suffix;
	size_t suffix_len;
};

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_suffix_char(char c)
{
	return c && strchr("eEinumkKMGTP", c);
}

static bool span_has_digit(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (is_digit(s[i]))
			return true;
	return false;
}

/* Split s into sign, integer digits, fraction digits and suffix exactly as
 * apimachinery's scanner does, including what it lets through ("+", ".",
 * "Gi" all scan; the suffix is judged later). */
static int scan(const char *s, size_t len, struct qscan *sc)
{
	size_t pos = 0, start, value_end;

	memset(sc, 0, sizeof(*sc));
	sc->num = "0";
	sc->num_len = 1;
	sc->denom = s;
	if (s[0] == '-' || s[0] == '+') {
		sc->neg = s[0] == '-';
		pos++;
	}
	while (pos < len && s[pos] == '0')
		pos++;
	if (pos == len) {
		/* only zeros (or nothing) after the sign: the value is "0" */
		sc->value_has_digit = true;
		sc->suffix = s + len;
		return 0;
	}
	start = pos;
	while (pos < len && is_digit(s[pos]))
		pos++;
	if (pos > start) {
		sc->num = s + start;
		sc->num_len = pos - start;
	}
	value_end = pos;
	if (pos < len && s[pos] == '.') {
		pos++;
		start = pos;
		while (pos < len && is_digit(s[pos]))
			pos++;
		sc->denom = s + start;
		sc->denom_len = pos - start;
		value_end = pos;
	}
	sc->value_has_digit = span_has_digit(s, value_end);
	sc->suffix = s + pos;
	if (pos == len)
		return 0;
	while (pos < len && is_suffix_char(s[pos]))
		pos++;
	if (pos < len && (s[pos] == '-' || s[pos] == '+'))
		pos++;
	while (pos < len && is_digit(s[pos]))
		pos++;
	if (pos != len)
		return -EINVAL;
	sc->suffix_len = (size_t)(s + len - sc->suffix);
	return 0;
}

/* strconv.ParseInt(s, 10, 64): optional sign, at least one digit. */
static bool parse_int64(const char *s, size_t n, int64_t *out)
{
	bool neg = false;
	uint64_t v = 0, limit;
	size_t i = 0;

	if (n && (s[0] == '+' || s[0] == '-')) {
		neg = s[0] == '-';
		i++;
	}
	if (i == n)
		return false;
	limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	for (; i < n; i++) {
		if (!is_digit(s[i]))
			return false;
		if (v > (limit - (uint64_t)(s[i] - '0')) / 10)
			return false;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	return true;
}

struct suffix_entry {
	const char *name;
	int base;
	int exponent;
	enum quantity_format format;
};

static const struct suffix_entry suffixes[] = {
	{ "",   10,  0, QUANTITY_DECIMAL_SI },
	{ "n",  10, -9, QUANTITY_DECIMAL_SI },
	{ "u",  10, -6, QUANTITY_DECIMAL_SI },
	{ "m",  10, -3, QUANTITY_DECIMAL_SI },
	{ "k",  10,  3, QUANTITY_DECIMAL_SI },
	{ "M",  10,  6, QUANTITY_DECIMAL_SI },
	{ "G",  10,  9, QUANTITY_DECIMAL_SI },
	{ "T",  10, 12, QUANTITY_DECIMAL_SI },
	{ "P",  10, 15, QUANTITY_DECIMAL_SI },
	{ "E",  10, 18, QUANTITY_DECIMAL_SI },
	{ "Ki",  2, 10, QUANTITY_BINARY_SI },
	{ "Mi",  2, 20, QUANTITY_BINARY_SI },
	{ "Gi",  2, 30, QUANTITY_BINARY_SI },
	{ "Ti",  2, 40, QUANTITY_BINARY_SI },
	{ "Pi",  2, 50, QUANTITY_BINARY_SI },
	{ "Ei",  2, 60, QUANTITY_BINARY_SI },
};

static const char *const dec_suffix_names[] = { "n", "u", "m", "", "k", "M", "G", "T", "P", "E" };
static const char *const bin_suffix_names[] = { "", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei" };

/* suffixHandler.interpret: the table, then e/E followed by an int64. The
 * exponent is truncated to 32 bits as apimachinery's int32() does. */
static bool interpret(const char *s, size_t n, int *base, int32_t *exponent,
		      enum quantity_format *fmt)
{
	int64_t e;

	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		if (strlen(suffixes[i].name) == n && memcmp(suffixes[i].name, s, n) == 0) {
			*base = suffixes[i].base;
			*exponent = suffixes[i].exponent;
			*fmt = suffixes[i].format;
			return true;
		}
	}
	if (n > 1 && (s[0] == 'e' || s[0] == 'E') && parse_int64(s + 1, n - 1, &e)) {
		*base = 10;
		*exponent = (int32_t)(uint32_t)(uint64_t)e;
		*fmt = QUANTITY_DECIMAL_EXPONENT;
		return true;
	}
	return false;
}

/* ---- building the value ------------------------------------------------ */

/* The digits of the number part: num followed by denom. */
static char digit_at(const struct qscan *sc, size_t i)
{
	return i < sc->num_len ? sc->num[i] : sc->denom[i - sc->num_len];
}

/* apimachinery's fast path: at most 18 digits, a scale >= -9 and a product
 * that fits int64 give an exact int64Amount. */
static bool fast_path(const struct qscan *sc, int32_t exponent, enum quantity_format fmt,
		      struct quantity *out, bool *keep)
{
	int64_t precision, mult = 1, value = 0, r;
	int32_t scale = 0;
	size_t n = sc->num_len + sc->denom_len;

	if (fmt == QUANTITY_BINARY_SI) {
		if (sc->denom_len)
			return false;
		mult = (int64_t)1 << exponent;
		precision = 15 - (int64_t)sc->num_len - exponent * 3 / 10 - 1;
	} else {
		scale = exponent;
		precision = 18 - (int64_t)n;
	}
	if (precision < 0)
		return false;
	scale = (int32_t)((uint32_t)scale - (uint32_t)sc->denom_len);
	if (scale < -9)
		return false;
	for (size_t i = 0; i < n; i++)
		value = value * 10 + (digit_at(sc, i) - '0');
	if (__builtin_mul_overflow(value, mult, &r))
		return false;
	/* when the input already looks canonical apimachinery keeps it as the
	 * quantity's String() */
	if (fmt == QUANTITY_BINARY_SI)
		*keep = (value & 7) != 0;
	else
		*keep = scale % 3 == 0 && digit_at(sc, 0) != '0' &&
			!(n >= 3 && digit_at(sc, n - 1) == '0' && digit_at(sc, n - 2) == '0' &&
			  digit_at(sc, n - 3) == '0');
	out->mant = sc->neg ? -(i128)r : (i128)r;
	out->exp = scale;
	out->format = fmt;
	out->dec = false;
	return true;
}

/* Accumulate digits [from, to) into *acc, keeping trailing zeros in *zeros
 * until a non-zero digit needs them. false when the mantissa overflows. */
static bool acc_digits(const struct qscan *sc, size_t from, size_t to, u128 *acc, int64_t *zeros)
{
	for (size_t i = from; i < to; i++) {
		unsigned d = (unsigned)(digit_at(sc, i) - '0');

		if (d == 0 && *acc != 0) {
			(*zeros)++;
			continue;
		}
		for (; *zeros > 0; (*zeros)--) {
			if (*acc > (u128)I128_MAX / 10)
				return false;
			*acc *= 10;
		}
		if (*acc > ((u128)I128_MAX - d) / 10)
			return false;
		*acc = *acc * 10 + d;
	}
	return true;
}

/* Store magnitude m * 10^(zeros - 9) in apimachinery's slow-path form:
 * unscaled m*10^zeros at scale 9 when that fits, else the shortest form. */
static int store_dec(struct quantity *out, bool neg, u128 m, int64_t zeros, bool round_up,
		     struct dt_err *err)
{
	int64_t exp = -9;

	while (zeros > 0 && m <= (u128)I128_MAX / 10) {
		m *= 10;
		zeros--;
	}
	if (zeros > 0 && round_up)
		return dt_err_set(err, -ERANGE, "%s", ERR_RANGE);
	exp += zeros;
	if (round_up) {
		if (m == (u128)I128_MAX)
			return dt_err_set(err, -ERANGE, "%s", ERR_RANGE);
		m++;
	}
	if (exp > INT32_MAX)
		return dt_err_set(err, -ERANGE, "%s", ERR_RANGE);
	out->mant = neg ? -(i128)m : (i128)m;
	out->exp = (int32_t)exp;
	out->dec = true;
	return 0;
}

/* Decimal slow path: value = digits * 10^-scale, rounded up to nano. */
static int slow_decimal(const struct qscan *sc, int32_t exponent, struct quantity *out,
			struct dt_err *err)
{
	size_t n = sc->num_len + sc->denom_len, first = 0, keep;
	/* inf.Dec scale: len(denom) - exponent, in int32 arithmetic */
	int32_t dscale = (int32_t)((uint32_t)sc->denom_len - (uint32_t)exponent);
	int64_t shift = 9 - (int64_t)dscale, zeros = 0;
	bool sticky = false;
	u128 m = 0;

	while (first < n && digit_at(sc, first) == '0')
		first++;
	if (first == n) {
		out->mant = 0;
		out->exp = 0;
		out->dec = true;
		return 0;
	}
	if (shift >= 0) {
		if (!acc_digits(sc, first, n, &m, &zeros))
			return dt_err_set(err, -ERANGE, "%s", ERR_RANGE);
		return store_dec(out, sc->neg, m, zeros + shift, false, err);
	}
	/* digits below 10^-9 are dropped; any non-zero one rounds up */
	keep = (uint64_t)-shift >= n - first ? 0 : n - first - (size_t)-shift;
	if (!acc_digits(sc, first, first + keep, &m, &zeros))
		return dt_err_set(err, -ERANGE, "%s", ERR_RANGE);
	for (size_t i = first + keep; i < n && !sticky; i++)
		sticky = digit_at(sc, i) != '0';
	return store_dec(out, sc->neg, m, zeros, sticky, err);
}

/* Binary slow path: (num.denom) * 2^exponent, rounded up to nano and capped
 * at 2^63-1 in magnitude. */
static int slow_binary(const struct qscan *sc, int32_t exponent, struct quantity *out)
{
	const u128 nano = 1000000000;
	const u128 cap_nanos = (u128)INT64_MAX * nano;
	u128 M = ((u128)1 << exponent) * nano, ip = 0, frac = 0, nanos = 0;
	bool sticky = false, capped = false;
	size_t i;

	for (i = 0; i < sc->num_len && !capped; i++) {
		ip = ip * 10 + (unsigned)(sc->num[i] - '0');
		capped = ip > (u128)INT64_MAX;
	}
	/* ceil(0.denom * M), digit by digit from the right: exact, since
	 * floor((d*M + floor(y*M) + eps) / 10) == floor((d*M + floor(y*M)) / 10) */
	for (i = sc->denom_len; i-- > 0 && !capped;) {
		u128 t = (unsigned)(sc->denom[i] - '0') * M + frac;

		sticky = sticky || t % 10 != 0;
		frac = t / 10;
	}
	capped = capped || ip > (u128)INT64_MAX >> exponent;
	if (!capped) {
		/* ip * 2^exponent <= 2^63-1, so this stays below 2^94 */
		nanos = ip * ((u128)1 << exponent) * nano + frac + (sticky ? 1 : 0);
		capped = nanos > cap_nanos;
	}
	out->dec = true;
	out->format = QUANTITY_BINARY_SI;
	if (capped) {
		out->mant = sc->neg ? -(i128)INT64_MAX : (i128)INT64_MAX;
		out->exp = 0;
		return 0;
	}
	if (nanos == 0) {
		out->mant = 0;
		out->exp = 0;
		return 0;
	}
	if (nanos < nano)
		out->format = QUANTITY_DECIMAL_SI;  /* between 0 and 1: no binary form */
	out->mant = sc->neg ? -(i128)nanos : (i128)nanos;
	out->exp = -9;
	return 0;
}

/* ParseQuantity; *keep tells whether its String() is the input itself. */
static int parse(const char *s, size_t len, struct quantity *out, bool *keep, struct dt_err *err)
{
	struct quantity q = { 0 };
	struct qscan sc;
	enum quantity_format fmt;
	int32_t exponent;
	int base, rc;

	*keep = false;
	if (!s || len == 0 || scan(s, len, &sc))
		return dt_err_set(err, -EINVAL, "%s", ERR_FORMAT);
	if (!interpret(sc.suffix, sc.suffix_len, &base, &exponent, &fmt))
		return dt_err_set(err, -EINVAL, "%s", ERR_SUFFIX);
	if (fast_path(&sc, exponent, fmt, &q, keep)) {
		*keep = *keep || (len == 1 && s[0] == '0');
		*out = q;
		return 0;
	}
	if (!sc.value_has_digit)
		return dt_err_set(err, -EINVAL, "%s", ERR_NUMERIC);
	if (len > INT32_MAX)
		return dt_err_set(err, -ERANGE, "%s", ERR_RANGE);
	q.format = fmt;
	if (base == 2)
		rc = slow_binary(&sc, exponent, &q);
	else
		rc = slow_decimal(&sc, exponent, &q, err);
	if (rc)
		return rc;
	*out = q;
	return 0;
}

int quantity_parse(const char *s, size_t len, struct quantity *out, struct dt_err *err)
{
	bool keep;

	return parse(s, len, out, &keep, err);
}

bool quantity_keeps_input(const char *s, size_t len)
{
	struct quantity q;
	bool keep;

	return parse(s, len, &q, &keep, NULL) == 0 && keep;
}

int quantity_parse_str(const char *s, struct quantity *out, struct dt_err *err)
{
	return quantity_parse(s, s ? strlen(s) : 0, out, err);
}

struct quantity quantity_from_int(int64_t v, enum quantity_format fmt)
{
	struct quantity q = { .mant = v, .exp = 0, .format = fmt, .dec = false };

	return q;
}

/* ---- comparison ---------------------------------------------------------- */

int quantity_sign(const struct quantity *q)
{
	return q->mant > 0 ? 1 : q->mant < 0 ? -1 : 0;
}

bool quantity_is_zero(const struct quantity *q)
{
	return q->mant == 0;
}

/* Compare ma*10^ea with mb*10^eb, both non-zero magnitudes. */
static int cmp_mag(u128 ma, int32_t ea, u128 mb, int32_t eb)
{
	int64_t oa, ob;
	unsigned d;
	u128 p;

	if (ea == eb)
		return ma < mb ? -1 : ma > mb;
	if (ea < eb)
		return -cmp_mag(mb, eb, ma, ea);
	/* the common case, int64-sized mantissas a few digits apart: align */
	if (ma >> 64 == 0 && (int64_t)ea - eb <= 19) {
		u128 sa = ma * pow10_tab[ea - eb];

		return sa < mb ? -1 : sa > mb;
	}
	oa = (int64_t)ndigits(ma) + ea;
	ob = (int64_t)ndigits(mb) + eb;
	if (oa != ob)
		return oa < ob ? -1 : 1;
	/* same order of magnitude, so the exponents differ by < 39 digits */
	d = (unsigned)((int64_t)ea - eb);
	p = pow10_u128(d);
	if (ma != mb / p)
		return ma < mb / p ? -1 : 1;
	return mb % p ? -1 : 0;
}

int quantity_cmp(const struct quantity *a, const struct quantity *b)
{
	int sa = quantity_sign(a), sb = quantity_sign(b), c;

	if (sa != sb)
		return sa < sb ? -1 : 1;
	if (sa == 0)
		return 0;
	c = cmp_mag(mag(a->mant), a->exp, mag(b->mant), b->exp);
	return sa > 0 ? c : -c;
}

/* ---- arithmetic ---------------------------------------------------------- */

static bool fits_int64(i128 v)
{
	return v >= INT64_MIN && v <= INT64_MAX;
}

/* v * 10^n, false on overflow of the 128-bit mantissa. */
static bool scale_up(i128 v, int64_t n, i128 *out)
{
	if (v == 0) {
		*out = 0;
		return true;
	}
	if (n > POW10_MAX)
		return false;
	return !__builtin_mul_overflow(v, (i128)pow10_u128((unsigned)n), out) && *out != -I128_MAX - 1;
}

/* Drop trailing decimal zeros into the exponent. */
static void strip_zeros(i128 *m, int64_t *e)
{
	if (*m == 0)
		return;
	if (fits_int64(*m)) {
		/* 64-bit division is much cheaper than 128-bit */
		int64_t v = (int64_t)*m;

		while (v % 10 == 0) {
			v /= 10;
			(*e)++;
		}
		*m = v;
		return;
	}
	while (*m % 10 == 0) {
		*m /= 10;
		(*e)++;
	}
}

/* a + b aligned at the smaller exponent; 0 or -ERANGE. */
static int add_exact(i128 am, int64_t ae, i128 bm, int64_t be, i128 *m, int64_t *e)
{
	i128 as = am, bs = bm;

	if (ae > be ? !scale_up(am, ae - be, &as) : !scale_up(bm, be - ae, &bs)) {
		/* shorten both and try again before giving up */
		strip_zeros(&am, &ae);
		strip_zeros(&bm, &be);
		as = am;
		bs = bm;
		if (am == 0 || bm == 0) {
			*m = am ? am : bm;
			*e = am ? ae : be;
			return 0;
		}
		if (ae > be ? !scale_up(am, ae - be, &as) : !scale_up(bm, be - ae, &bs))
			return -ERANGE;
	}
	if (__builtin_add_overflow(as, bs, m) || *m == -I128_MAX - 1)
		return -ERANGE;
	*e = ae < be ? ae : be;
	return 0;
}

/* Quantity.Add: int64Amount.Add when both are int64 and nothing overflows,
 * else inf.Dec. A zero receiver takes the other operand's format. */
static int add_signed(const struct quantity *a, i128 bm, int32_t bexp, bool bdec,
		      enum quantity_format bfmt, struct quantity *out)
{
	struct quantity r = *a;
	int64_t e;
	i128 m;

	if (a->mant == 0)
		r.format = bfmt;
	if (!a->dec && !bdec && fits_int64(a->mant) && fits_int64(bm)) {
		if (bm == 0)
			goto done;
		if (a->mant == 0) {
			r.mant = bm;
			r.exp = bexp;
			goto done;
		}
		if (add_exact(a->mant, a->exp, bm, bexp, &m, &e) == 0 && fits_int64(m)) {
			r.mant = m;
			r.exp = (int32_t)e;
			goto done;
		}
	}
	if (add_exact(a->mant, a->exp, bm, bexp, &m, &e) || e < INT32_MIN || e > INT32_MAX)
		return -ERANGE;
	r.mant = m;
	r.exp = (int32_t)e;
	r.dec = true;
done:
	*out = r;
	return 0;
}

int quantity_add(const struct quantity *a, const struct quantity *b, struct quantity *out)
{
	return add_signed(a, b->mant, b->exp, b->dec, b->format, out);
}

int quantity_sub(const struct quantity *a, const struct quantity *b, struct quantity *out)
{
	/* -INT64_MIN does not fit the int64 form: apimachinery goes to inf.Dec */
	bool dec = b->dec || b->mant == INT64_MIN;

	if (b->mant == -I128_MAX - 1)
		return -ERANGE;
	return add_signed(a, -b->mant, b->exp, dec, b->format, out);
}

/* ---- conversions --------------------------------------------------------- */

int quantity_to_int64(const struct quantity *q, int64_t *out)
{
	i128 v;

	if (q->dec || !fits_int64(q->mant) || (q->exp < 0))
		return -ERANGE;
	if (!scale_up(q->mant, q->exp, &v) || !fits_int64(v))
		return -ERANGE;
	*out = (int64_t)v;
	return 0;
}

bool quantity_is_integer(const struct quantity *q)
{
	int64_t v;

	return quantity_to_int64(q, &v) == 0;
}

/* The value is an integer (whatever its representation). */
static bool value_is_integer(const struct quantity *q)
{
	i128 m = q->mant;
	int64_t e = q->exp;

	strip_zeros(&m, &e);
	return m == 0 || e >= 0;
}

int quantity_exact_int64(const struct quantity *q, int64_t *out)
{
	i128 m = q->mant, v;
	int64_t e = q->exp;

	strip_zeros(&m, &e);
	if (m != 0 && e < 0)
		return -ERANGE;
	if (!scale_up(m, e, &v) || !fits_int64(v))
		return -ERANGE;
	*out = (int64_t)v;
	return 0;
}

int64_t quantity_value_ceil(const struct quantity *q)
{
	i128 m = q->mant, v;
	int64_t e = q->exp;
	u128 a, p, r;

	if (m == 0)
		return 0;
	if (e >= 0) {
		if (!scale_up(m, e, &v) || !fits_int64(v))
			return m > 0 ? INT64_MAX : INT64_MIN;
		return (int64_t)v;
	}
	/* round the magnitude up: 1.1 -> 2, -1.1 -> -2 */
	a = mag(m);
	if (-e > POW10_MAX) {
		a = 1;
	} else {
		p = pow10_u128((unsigned)-e);
		r = a % p;
		a = a / p + (r != 0);
	}
	if (a > (u128)INT64_MAX)
		return m > 0 ? INT64_MAX : INT64_MIN;
	return m > 0 ? (int64_t)a : -(int64_t)a;
}

/* math.Pow10 as Go computes it, so that asApproximateFloat agrees bit for bit. */
static double go_pow10(int64_t n)
{
	static const double tab[32] = {
		1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13,
		1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22, 1e23, 1e24, 1e25,
		1e26, 1e27, 1e28, 1e29, 1e30, 1e31,
	};
	static const double postab32[10] = {
		1e0, 1e32, 1e64, 1e96, 1e128, 1e160, 1e192, 1e224, 1e256, 1e288,
	};
	static const double negtab32[11] = {
		1e-0, 1e-32, 1e-64, 1e-96, 1e-128, 1e-160, 1e-192, 1e-224, 1e-256,
		1e-288, 1e-320,
	};

	if (n >= 0 && n <= 308)
		return postab32[n / 32] * tab[n % 32];
	if (n < 0 && n >= -323)
		return negtab32[-n / 32] / tab[-n % 32];
	return n > 0 ? INFINITY : 0.0;
}

double quantity_to_double(const struct quantity *q)
{
	double base = (double)q->mant;

	if (q->exp == 0)
		return base;
	return base * go_pow10(q->exp);
}

/* ---- printing (CanonicalizeBytes) ---------------------------------------- */

static size_t put_u128(char *buf, u128 v)
{
	char tmp[40];
	size_t n = 0, i;

	/* 128-bit division is slow: peel off 19-digit chunks, then use 64 bits */
	while (v >> 64) {
		uint64_t chunk = (uint64_t)(v % E19);

		v /= E19;
		for (int k = 0; k < 19; k++, chunk /= 10)
			tmp[n++] = (char)('0' + (int)(chunk % 10));
	}
	for (uint64_t w = (uint64_t)v;; w /= 10) {
		tmp[n++] = (char)('0' + (int)(w % 10));
		if (w < 10)
			break;
	}
	for (i = 0; i < n; i++)
		buf[i] = tmp[n - 1 - i];
	return n;
}

static size_t put_str(char *buf, const char *s)
{
	size_t n = strlen(s);

	memcpy(buf, s, n);
	return n;
}

/* Decimal forms: strip factors of ten, lower the exponent to a multiple of
 * three, then an SI suffix (or e<n> when there is none, or for
 * DecimalExponent). */
static size_t format_decimal(const struct quantity *q, enum quantity_format fmt, char *buf)
{
	i128 m = q->mant;
	int64_t e = q->exp;
	size_t n = 0;
	int pad;

	strip_zeros(&m, &e);
	if (m < 0)
		buf[n++] = '-';
	n += put_u128(buf + n, mag(m));
	pad = (int)(((e % 3) + 3) % 3);
	for (int i = 0; i < pad; i++)
		buf[n++] = '0';
	e -= pad;
	if (fmt == QUANTITY_DECIMAL_SI && e >= -9 && e <= 18)
		n += put_str(buf + n, dec_suffix_names[(e + 9) / 3]);
	else if (e != 0)
		n += (size_t)snprintf(buf + n, QUANTITY_STR_MAX - n, "e%lld", (long long)e);
	buf[n] = '\0';
	return n;
}

/* BinarySI: an integer with factors of 1024 moved into the suffix. Stops at
 * Ei (apimachinery has no larger suffix and would drop it). false when the
 * integer does not fit 128 bits; the caller then prints decimal. */
static bool format_binary(const struct quantity *q, char *buf, size_t *len)
{
	i128 m = q->mant, v;
	int64_t e = q->exp;
	unsigned k = 0;
	u128 a;
	size_t n = 0;

	strip_zeros(&m, &e);
	if (!scale_up(m, e, &v))
		return false;
	a = mag(v);
	while (k < 6 && a >= 1024 && a % 1024 == 0) {
		a /= 1024;
		k++;
	}
	if (v < 0)
		buf[n++] = '-';
	n += put_u128(buf + n, a);
	n += put_str(buf + n, bin_suffix_names[k]);
	buf[n] = '\0';
	*len = n;
	return true;
}

size_t quantity_format(const struct quantity *q, char *buf)
{
	enum quantity_format fmt = q->format;
	struct quantity lo = quantity_from_int(-1024, QUANTITY_DECIMAL_SI);
	struct quantity hi = quantity_from_int(1024, QUANTITY_DECIMAL_SI);
	size_t n;

	if (q->mant == 0) {
		memcpy(buf, "0", 2);
		return 1;
	}
	if (fmt == QUANTITY_BINARY_SI) {
		if ((quantity_cmp(q, &lo) > 0 && quantity_cmp(q, &hi) < 0) || !value_is_integer(q))
			fmt = QUANTITY_DECIMAL_SI;
		else if (format_binary(q, buf, &n))
			return n;
		else
			fmt = QUANTITY_DECIMAL_SI;
	} else if (fmt != QUANTITY_DECIMAL_SI) {
		fmt = QUANTITY_DECIMAL_EXPONENT;
	}
	return format_decimal(q, fmt, buf);
}
