/* doc_scalar.c - what a plain YAML scalar means, and how numbers are
 * written back.
 *
 * Kubernetes reads YAML through sigs.k8s.io/yaml, which uses go-yaml v2:
 * YAML 1.1 booleans (y/yes/on/...), null as ""/~/null, integers as Go's
 * strconv.ParseInt with base 0 after dropping underscores (0x, 0o, 0b and
 * a leading 0 for octal), floats matching [-+]?(\.d+|d+(\.d*)?)([eE][-+]?d+)?
 * and the .inf/.nan spellings. A float that overflows stays a string.
 * Numbers are printed as Go prints them: YAML with FormatFloat 'g' -1,
 * JSON as encoding/json does. */
#include "doc_impl.h"
#include "hex.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct word {
	const char *s;
	enum doc_resolved r;
	int val;                /* bool value, or sign of an infinity, 0 for NaN */
	size_t len;             /* filled in by W() */
};

#define W(s, r, v) { s, r, v, sizeof(s) - 1 }

static const struct word words[] = {
	W("y", DOC_RES_BOOL, 1), W("Y", DOC_RES_BOOL, 1), W("yes", DOC_RES_BOOL, 1),
	W("Yes", DOC_RES_BOOL, 1), W("YES", DOC_RES_BOOL, 1), W("true", DOC_RES_BOOL, 1),
	W("True", DOC_RES_BOOL, 1), W("TRUE", DOC_RES_BOOL, 1), W("on", DOC_RES_BOOL, 1),
	W("On", DOC_RES_BOOL, 1), W("ON", DOC_RES_BOOL, 1),
	W("n", DOC_RES_BOOL, 0), W("N", DOC_RES_BOOL, 0), W("no", DOC_RES_BOOL, 0),
	W("No", DOC_RES_BOOL, 0), W("NO", DOC_RES_BOOL, 0), W("false", DOC_RES_BOOL, 0),
	W("False", DOC_RES_BOOL, 0), W("FALSE", DOC_RES_BOOL, 0), W("off", DOC_RES_BOOL, 0),
	W("Off", DOC_RES_BOOL, 0), W("OFF", DOC_RES_BOOL, 0),
	W("~", DOC_RES_NULL, 0), W("null", DOC_RES_NULL, 0), W("Null", DOC_RES_NULL, 0),
	W("NULL", DOC_RES_NULL, 0),
	W(".nan", DOC_RES_FLOAT, 0), W(".NaN", DOC_RES_FLOAT, 0), W(".NAN", DOC_RES_FLOAT, 0),
	W(".inf", DOC_RES_FLOAT, 1), W(".Inf", DOC_RES_FLOAT, 1), W(".INF", DOC_RES_FLOAT, 1),
	W("+.inf", DOC_RES_FLOAT, 1), W("+.Inf", DOC_RES_FLOAT, 1), W("+.INF", DOC_RES_FLOAT, 1),
	W("-.inf", DOC_RES_FLOAT, -1), W("-.Inf", DOC_RES_FLOAT, -1), W("-.INF", DOC_RES_FLOAT, -1),
	W("<<", DOC_RES_MERGE, 0),
};

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Past the digits at s[*i]: false when there are none. */
static bool skip_digits(const char *s, size_t len, size_t *i)
{
	size_t start = *i;

	while (*i < len && is_digit(s[*i]))
		(*i)++;
	return *i > start;
}

/* Past an exponent [eE][-+]?[0-9]+ at s[*i], if there is one: false when
 * it has no digits. YAML's floats and JSON's numbers write it alike. */
static bool skip_exponent(const char *s, size_t len, size_t *i)
{
	if (*i >= len || (s[*i] != 'e' && s[*i] != 'E'))
		return true;
	(*i)++;
	if (*i < len && (s[*i] == '+' || s[*i] == '-'))
		(*i)++;
	return skip_digits(s, len, i);
}

/* [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? */
static bool yaml_float_syntax(const char *s, size_t len)
{
	size_t i = 0;

	if (i < len && (s[i] == '+' || s[i] == '-'))
		i++;
	if (i < len && s[i] == '.') {
		i++;
		if (!skip_digits(s, len, &i))
			return false;
	} else {
		if (!skip_digits(s, len, &i))
			return false;
		if (i < len && s[i] == '.') {
			i++;
			skip_digits(s, len, &i);        /* "1." is a float too */
		}
	}
	return skip_exponent(s, len, &i) && i == len;
}

/* strconv.ParseUint(s, 0, 64): 0x/0o/0b prefixes, a leading 0 for octal.
 * Returns 0, -EINVAL for bad syntax, -ERANGE for overflow. */
static int parse_uint_base0(const char *s, size_t len, uint64_t *out)
{
	unsigned base = 10;
	uint64_t v = 0;
	size_t i = 0;
	bool range = false;

	if (len == 0)
		return -EINVAL;
	if (s[0] == '0' && len >= 2) {
		char p = s[1];

		if (p == 'x' || p == 'X') {
			base = 16;
			i = 2;
		} else if (p == 'o' || p == 'O') {
			base = 8;
			i = 2;
		} else if (p == 'b' || p == 'B') {
			base = 2;
			i = 2;
		} else {
			base = 8;
			i = 1;
		}
		if (i == len)
			return -EINVAL;
	}
	for (; i < len; i++) {
		int d = hex_value(s[i]);     /* base 16 at most; -1: no digit */

		if (d < 0 || d >= (int)base)
			return -EINVAL;
		if (v > (UINT64_MAX - (uint64_t)d) / base)
			range = true;
		else
			v = v * base + (uint64_t)d;
	}
	*out = v;
	return range ? -ERANGE : 0;
}

/* Numbers after the underscores are gone (the 'D' and 'S' cases of
 * go-yaml's resolver). s is NUL-terminated. */
static enum doc_resolved resolve_number(const char *s, size_t len, struct doc_scalar_value *v)
{
	bool neg = false;
	size_t i = 0;
	uint64_t u;
	int rc;

	if (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-';
		i = 1;
	}
	rc = parse_uint_base0(s + i, len - i, &u);
	if (rc == 0) {
		if (neg && u <= (uint64_t)INT64_MAX + 1) {
			v->i = u == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)u;
			return DOC_RES_INT;
		}
		if (!neg && u <= (uint64_t)INT64_MAX) {
			v->i = (int64_t)u;
			return DOC_RES_INT;
		}
		if (!neg && i == 0) {   /* ParseUint takes no sign */
			v->f = (double)u;
			return DOC_RES_BIGINT;
		}
	}
	if (yaml_float_syntax(s, len)) {
		double f = strtod(s, NULL);

		if (isinf(f))
			return DOC_RES_STRING;      /* go-yaml: out of range stays text */
		v->f = f;
		for (size_t k = 0; k < len; k++)
			if (s[k] == '.' || s[k] == 'e' || s[k] == 'E')
				return DOC_RES_FLOAT;
		return DOC_RES_BIGINT;
	}
	return DOC_RES_STRING;
}

static bool num_field(const char *s, size_t len, size_t *i, int min_d, int max_d, int *out)
{
	int n = 0, v = 0;

	while (*i < len && is_digit(s[*i]) && n < max_d) {
		v = v * 10 + (s[*i] - '0');
		(*i)++;
		n++;
	}
	if (n < min_d || (*i < len && is_digit(s[*i])))
		return false;
	*out = v;
	return true;
}

static int days_in_month(int y, int m)
{
	static const int dm[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };

	if (m == 2 && ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0))
		return 29;
	return dm[m - 1];
}

/* go-yaml v2's timestamps: Go layouts 2006-1-2, 2006-1-2T15:4:5.999999999Z07:00
 * (also with 't') and 2006-1-2 15:4:5.999999999. */
static bool is_timestamp(const char *s, size_t len)
{
	int y, mo, d, h, mi, sec, zh, zm;
	size_t i = 0;
	char sep;

	if (!num_field(s, len, &i, 4, 4, &y) || i == len || s[i++] != '-')
		return false;
	if (!num_field(s, len, &i, 1, 2, &mo) || i == len || s[i++] != '-')
		return false;
	if (!num_field(s, len, &i, 1, 2, &d))
		return false;
	if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo))
		return false;
	if (i == len)
		return true;
	sep = s[i++];
	if (sep != 'T' && sep != 't' && sep != ' ')
		return false;
	if (!num_field(s, len, &i, 1, 2, &h) || i == len || s[i++] != ':')
		return false;
	if (!num_field(s, len, &i, 1, 2, &mi) || i == len || s[i++] != ':')
		return false;
	if (!num_field(s, len, &i, 1, 2, &sec))
		return false;
	if (h > 23 || mi > 59 || sec > 59)
		return false;
	if (i + 1 < len && s[i] == '.' && is_digit(s[i + 1])) {
		i++;
		skip_digits(s, len, &i);
	}
	if (sep == ' ')
		return i == len;
	if (i < len && s[i] == 'Z')
		return i + 1 == len;
	if (i == len || (s[i] != '+' && s[i] != '-'))
		return false;
	i++;
	if (!num_field(s, len, &i, 2, 2, &zh) || i == len || s[i++] != ':')
		return false;
	if (!num_field(s, len, &i, 2, 2, &zm))
		return false;
	return i == len && zh <= 24 && zm <= 59;
}

enum doc_resolved doc_resolve_plain(const char *s, size_t len, struct doc_scalar_value *v)
{
	char small[128], *plain = small;
	enum doc_resolved r = DOC_RES_STRING;
	size_t n = 0;
	char c;

	memset(v, 0, sizeof(*v));
	if (len == 0)
		return DOC_RES_NULL;
	c = s[0];
	/* Only these first characters can start a word of the table. */
	if (len <= 5 && strchr("yYnNtTfFoO~.+-<", c)) {
		for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
			if (words[i].len != len || memcmp(words[i].s, s, len) != 0)
				continue;
			if (words[i].r == DOC_RES_BOOL)
				v->b = words[i].val;
			else if (words[i].r == DOC_RES_FLOAT)
				v->f = words[i].val ? words[i].val * HUGE_VAL : nan("");
			return words[i].r;
		}
	}
	if (!is_digit(c) && c != '+' && c != '-' && c != '.')
		return DOC_RES_STRING;
	if (c != '.' && is_timestamp(s, len))
		return DOC_RES_TIMESTAMP;
	/* A NUL-terminated copy for strtod; numbers have no length limit (a
	 * 300-digit integer is a float), so long ones go to the heap. */
	if (len >= sizeof(small)) {
		plain = malloc(len + 1);
		if (!plain)
			return DOC_RES_STRING;
	}
	if (c == '.') {
		/* go-yaml's '.' case: ParseFloat of the text as it is. */
		memcpy(plain, s, len);
		plain[len] = '\0';
		if (yaml_float_syntax(plain, len)) {
			v->f = strtod(plain, NULL);
			if (!isinf(v->f))
				r = DOC_RES_FLOAT;
		}
		goto out;
	}
	for (size_t i = 0; i < len; i++)
		if (s[i] != '_')
			plain[n++] = s[i];
	plain[n] = '\0';
	if (n)
		r = resolve_number(plain, n, v);
out:
	if (plain != small)
		free(plain);
	return r;
}

/* [-+]?[0-9][0-9_]*(:[0-5]?[0-9])+(\.[0-9_]*)? */
bool doc_is_base60(const char *s, size_t len)
{
	size_t i = 0;
	int groups = 0;

	if (i < len && (s[i] == '+' || s[i] == '-'))
		i++;
	if (i == len || !is_digit(s[i]))
		return false;
	while (i < len && (is_digit(s[i]) || s[i] == '_'))
		i++;
	while (i < len && s[i] == ':') {
		i++;
		if (i + 1 < len && s[i] >= '0' && s[i] <= '5' && is_digit(s[i + 1]))
			i += 2;
		else if (i < len && is_digit(s[i]))
			i++;
		else
			return false;
		groups++;
	}
	if (!groups)
		return false;
	if (i < len && s[i] == '.')
		for (i++; i < len && (is_digit(s[i]) || s[i] == '_'); i++)
			;
	return i == len;
}

/* ---- Number formatting ---- */

int doc_shortest_digits(double v, bool f32, char *digits, size_t cap)
{
	char buf[64];
	int maxp = f32 ? 9 : 17, exp = 0;
	size_t n = 0;

	v = fabs(v);
	for (int p = 1; p <= maxp; p++) {
		snprintf(buf, sizeof(buf), "%.*e", p - 1, v);
		if (f32 ? strtof(buf, NULL) == (float)v : strtod(buf, NULL) == v)
			break;
	}
	/* buf is "d.ddde[+-]xx" */
	for (const char *p = buf; *p && *p != 'e'; p++)
		if (is_digit(*p) && n + 1 < cap)
			digits[n++] = *p;
	while (n > 1 && digits[n - 1] == '0')
		n--;
	digits[n] = '\0';
	{
		const char *e = strchr(buf, 'e');

		if (e)
			exp = atoi(e + 1);
	}
	return exp;
}

/* Digits d with first-digit exponent exp, written without exponent. */
static void put_fixed(char *out, const char *d, int exp)
{
	int nd = (int)strlen(d);
	size_t o = 0;

	if (exp < 0) {
		out[o++] = '0';
		out[o++] = '.';
		for (int i = 0; i < -exp - 1; i++)
			out[o++] = '0';
		for (int i = 0; i < nd; i++)
			out[o++] = d[i];
	} else {
		for (int i = 0; i <= exp; i++)
			out[o++] = i < nd ? d[i] : '0';
		if (nd > exp + 1) {
			out[o++] = '.';
			for (int i = exp + 1; i < nd; i++)
				out[o++] = d[i];
		}
	}
	out[o] = '\0';
}

/* Digits d as d[0].d[1..]e±XX (Go: at least two exponent digits). */
static void put_exp(char *out, const char *d, int exp)
{
	size_t o = 0;

	out[o++] = d[0];
	if (d[1]) {
		out[o++] = '.';
		for (const char *p = d + 1; *p; p++)
			out[o++] = *p;
	}
	snprintf(out + o, 8, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
}

void doc_fmt_float_yaml(double v, bool f32, char *buf)
{
	char d[32];
	int exp;

	if (isnan(v)) {
		strcpy(buf, ".nan");
		return;
	}
	if (isinf(v)) {
		strcpy(buf, v > 0 ? ".inf" : "-.inf");
		return;
	}
	if (v == 0) {
		strcpy(buf, signbit(v) ? "-0" : "0");
		return;
	}
	exp = doc_shortest_digits(v, f32, d, sizeof(d));
	if (v < 0)
		*buf++ = '-';
	if (exp < -4 || exp >= 6)
		put_exp(buf, d, exp);
	else
		put_fixed(buf, d, exp);
}

int doc_fmt_float_json(double v, char *buf)
{
	char d[32];
	int exp;
	double a = fabs(v);

	if (isnan(v) || isinf(v))
		return -ERANGE;
	if (v == 0) {
		strcpy(buf, signbit(v) ? "-0" : "0");
		return 0;
	}
	if (a < 1e21 && v == floor(v)) {
		/* An integral value prints as an integer, which the reader takes
		 * as DOC_INT when it fits: print it exactly (Go would round the
		 * digits past 2^53, 2003764205206896640 as ...600). */
		snprintf(buf, DOC_NUM_BUF, "%.0f", v);
		return 0;
	}
	exp = doc_shortest_digits(v, false, d, sizeof(d));
	if (v < 0)
		*buf++ = '-';
	if (a < 1e-6 || a >= 1e21) {
		put_exp(buf, d, exp);
		/* encoding/json writes e-7, not e-07 */
		size_t n = strlen(buf);

		if (n >= 4 && buf[n - 4] == 'e' && buf[n - 3] == '-' && buf[n - 2] == '0') {
			buf[n - 2] = buf[n - 1];
			buf[n - 1] = '\0';
		}
	} else {
		put_fixed(buf, d, exp);
	}
	return 0;
}

bool doc_is_json_number(const char *s, size_t len)
{
	size_t i = 0;

	if (i < len && s[i] == '-')
		i++;
	if (i < len && s[i] == '0')
		i++;
	else if (!skip_digits(s, len, &i))
		return false;
	if (i < len && s[i] == '.') {
		i++;
		if (!skip_digits(s, len, &i))
			return false;
	}
	return skip_exponent(s, len, &i) && i == len;
}
