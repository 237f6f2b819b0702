/* semver.c - semantic versions as the Kubernetes CEL semver library sees
 * them: blang/semver v4 Parse (strict, with its error messages), the
 * library's normalization, blang's ordering, and the API server's check for
 * version attribute values. */
#include "semver.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_alnum_dash(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-';
}

static bool only_digits(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!is_digit(s[i]))
			return false;
	return true;
}

static bool only_alnum_dash(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!is_alnum_dash(s[i]))
			return false;
	return true;
}

static bool leading_zero(const char *s, size_t n)
{
	return n > 1 && s[0] == '0';
}

/* strconv.ParseUint(s, 10, 64) with its error text. */
static int parse_uint(const char *s, size_t n, uint64_t *out, struct dt_err *err)
{
	char q[160];
	uint64_t v = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned d = (unsigned)(s[i] - '0');

		if (!is_digit(s[i]) || v > (UINT64_MAX - d) / 10) {
			dt_quote_buf(q, sizeof(q), s, n, SB_QUOTE_GO);
			return dt_err_set(err, -EINVAL, "strconv.ParseUint: parsing %s: %s", q,
					  is_digit(s[i]) ? "value out of range" : "invalid syntax");
		}
		v = v * 10 + d;
	}
	if (n == 0)
		return dt_err_set(err, -EINVAL, "strconv.ParseUint: parsing \"\": invalid syntax");
	*out = v;
	return 0;
}

/* Major, minor or patch: digits only, no leading zero, fits uint64. */
static int parse_number(const char *what, const char *s, size_t n, uint64_t *out,
			struct dt_err *err)
{
	char q[160];

	if (!only_digits(s, n)) {
		dt_quote_buf(q, sizeof(q), s, n, SB_QUOTE_GO);
		return dt_err_set(err, -EINVAL, "Invalid character(s) found in %s number %s",
				  what, q);
	}
	if (leading_zero(s, n)) {
		dt_quote_buf(q, sizeof(q), s, n, SB_QUOTE_GO);
		return dt_err_set(err, -EINVAL, "%c%s number must not contain leading zeroes %s",
				  what[0] - 'a' + 'A', what + 1, q);
	}
	return parse_uint(s, n, out, err);
}

/* One pre-release identifier (NewPRVersion). */
static int check_pre_ident(const char *s, size_t n, struct dt_err *err)
{
	char q[160];
	uint64_t v;

	if (n == 0)
		return dt_err_set(err, -EINVAL, "Prerelease is empty");
	if (only_digits(s, n)) {
		if (!leading_zero(s, n))
			return parse_uint(s, n, &v, err);
		dt_quote_buf(q, sizeof(q), s, n, SB_QUOTE_GO);
		return dt_err_set(err, -EINVAL, "Numeric PreRelease version must not "
				  "contain leading zeroes %s", q);
	}
	if (!only_alnum_dash(s, n)) {
		dt_quote_buf(q, sizeof(q), s, n, SB_QUOTE_GO);
		return dt_err_set(err, -EINVAL, "Invalid character(s) found in prerelease %s", q);
	}
	return 0;
}

static int check_build_ident(const char *s, size_t n, struct dt_err *err)
{
	char q[160];

	if (n == 0)
		return dt_err_set(err, -EINVAL, "Build meta data is empty");
	if (!only_alnum_dash(s, n)) {
		dt_quote_buf(q, sizeof(q), s, n, SB_QUOTE_GO);
		return dt_err_set(err, -EINVAL, "Invalid character(s) found in build meta data %s",
				  q);
	}
	return 0;
}

/* Run check on each '.'-separated identifier of s (strings.Split: an empty
 * string is one empty identifier). */
static int each_ident(const char *s, size_t n, int (*check)(const char *, size_t, struct dt_err *),
		      struct dt_err *err)
{
	size_t start = 0;
	int rc;

	for (size_t i = 0; i <= n; i++) {
		if (i == n || s[i] == '.') {
			rc = check(s + start, i - start, err);
			if (rc)
				return rc;
			start = i + 1;
		}
	}
	return 0;
}

static const char *memchr_c(const char *s, size_t n, char c)
{
	return memchr(s, c, n);
}

int semver_parse(const char *s, size_t len, struct semver *out, struct dt_err *err)
{
	const char *d1, *d2, *patch, *plus, *dash, *pre = NULL, *build = NULL;
	size_t patch_len, pre_len = 0, build_len = 0;
	struct semver v;
	int rc;

	memset(&v, 0, sizeof(v));
	if (!s || len == 0)
		return dt_err_set(err, -EINVAL, "Version string empty");
	d1 = memchr_c(s, len, '.');
	d2 = d1 ? memchr_c(d1 + 1, len - (size_t)(d1 + 1 - s), '.') : NULL;
	if (!d2)
		return dt_err_set(err, -EINVAL, "No Major.Minor.Patch elements found");
	rc = parse_number("major", s, (size_t)(d1 - s), &v.major, err);
	if (rc)
		return rc;
	rc = parse_number("minor", d1 + 1, (size_t)(d2 - d1 - 1), &v.minor, err);
	if (rc)
		return rc;
	patch = d2 + 1;
	patch_len = len - (size_t)(patch - s);
	plus = memchr_c(patch, patch_len, '+');
	if (plus) {
		build = plus + 1;
		build_len = patch_len - (size_t)(build - patch);
		patch_len = (size_t)(plus - patch);
	}
	dash = memchr_c(patch, patch_len, '-');
	if (dash) {
		pre = dash + 1;
		pre_len = patch_len - (size_t)(pre - patch);
		patch_len = (size_t)(dash - patch);
	}
	rc = parse_number("patch", patch, patch_len, &v.patch, err);
	if (rc)
		return rc;
	if (pre && (rc = each_ident(pre, pre_len, check_pre_ident, err)))
		return rc;
	if (build && (rc = each_ident(build, build_len, check_build_ident, err)))
		return rc;
	if (pre_len > SEMVER_MAX_LEN || build_len > SEMVER_MAX_LEN)
		return dt_err_set(err, -E2BIG, "version too long: pre-release and build metadata "
				  "are limited to %d bytes each", SEMVER_MAX_LEN);
	if (pre)
		memcpy(v.pre, pre, pre_len);
	if (build)
		memcpy(v.build, build, build_len);
	*out = v;
	return 0;
}

int semver_parse_normalized(const char *s, size_t len, struct semver *out, struct dt_err *err)
{
	const char *part[3];
	size_t plen[3], nparts = 0, start = 0, o = 0;
	bool zero[3] = { false, false, false };
	char *buf;
	int rc;

	if (!s) {
		s = "";
		len = 0;
	}
	if (len && s[0] == 'v') {
		s++;
		len--;
	}
	/* strings.SplitN(s, ".", 3) */
	for (size_t i = 0; i <= len; i++) {
		if (i == len || (s[i] == '.' && nparts < 2)) {
			part[nparts] = s + start;
			plen[nparts++] = i - start;
			start = i + 1;
		}
	}
	/* leading zeros go, keeping one "0" before a non-digit or nothing */
	for (size_t p = 0; p < nparts; p++) {
		if (plen[p] <= 1)
			continue;
		while (plen[p] && part[p][0] == '0') {
			part[p]++;
			plen[p]--;
		}
		zero[p] = plen[p] == 0 || !is_digit(part[p][0]);
	}
	/* (a "0" put back in front cannot be a '+' or '-') */
	if (nparts < 3 && (memchr_c(part[nparts - 1], plen[nparts - 1], '+') ||
			   memchr_c(part[nparts - 1], plen[nparts - 1], '-')))
		return dt_err_set(err, -EINVAL, "short version cannot contain PreRelease/Build "
				  "meta data");
	buf = malloc(len + 8);
	if (!buf)
		return dt_err_set(err, -ENOMEM, "out of memory");
	for (size_t p = 0; p < 3; p++) {
		if (p)
			buf[o++] = '.';
		if (p < nparts) {
			if (zero[p])
				buf[o++] = '0';
			memcpy(buf + o, part[p], plen[p]);
			o += plen[p];
		} else {
			buf[o++] = '0';
		}
	}
	rc = semver_parse(buf, o, out, err);
	free(buf);
	return rc;
}

/* Pre-release identifiers: numeric ones by value (no leading zeros, so by
 * length then bytes), numeric before alphanumeric, alphanumerics by bytes. */
static int cmp_ident(const char *a, size_t an, const char *b, size_t bn)
{
	bool anum = an && only_digits(a, an), bnum = bn && only_digits(b, bn);
	int c;

	if (anum != bnum)
		return anum ? -1 : 1;
	if (anum && an != bn)
		return an < bn ? -1 : 1;
	c = memcmp(a, b, an < bn ? an : bn);
	if (c)
		return c < 0 ? -1 : 1;
	return an < bn ? -1 : an > bn;
}

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

int semver_cmp(const struct semver *a, const struct semver *b)
{
	const char *pa = a->pre, *pb = b->pre;
	int c;

	if ((c = cmp_u64(a->major, b->major)) || (c = cmp_u64(a->minor, b->minor)) ||
	    (c = cmp_u64(a->patch, b->patch)))
		return c;
	if (!*pa || !*pb)
		return *pa ? -1 : *pb ? 1 : 0;
	for (;;) {
		size_t an = strcspn(pa, "."), bn = strcspn(pb, ".");

		if ((c = cmp_ident(pa, an, pb, bn)))
			return c;
		pa += an;
		pb += bn;
		if (!*pa || !*pb)
			return *pa ? 1 : *pb ? -1 : 0;
		pa++;
		pb++;
	}
}

size_t semver_format(const struct semver *v, char *buf)
{
	int n = snprintf(buf, SEMVER_STR_MAX, "%llu.%llu.%llu%s%.*s%s%.*s",
			 (unsigned long long)v->major, (unsigned long long)v->minor,
			 (unsigned long long)v->patch, v->pre[0] ? "-" : "",
			 SEMVER_MAX_LEN, v->pre, v->build[0] ? "+" : "", SEMVER_MAX_LEN, v->build);

	return n < 0 ? 0 : (size_t)n;
}

/* (0|[1-9]\d*) */
static bool match_number(const char *s, size_t n, size_t *pos)
{
	size_t start = *pos;

	while (*pos < n && is_digit(s[*pos]))
		(*pos)++;
	return *pos > start && !leading_zero(s + start, *pos - start);
}

/* Dot-separated identifiers up to stop (or the end); pre-release ones
 * must not be numeric with a leading zero. */
static bool match_idents(const char *s, size_t n, size_t *pos, char stop, bool pre)
{
	size_t start = *pos;

	for (;; (*pos)++) {
		if (*pos == n || s[*pos] == '.' || s[*pos] == stop) {
			size_t l = *pos - start;

			if (l == 0 || (pre && only_digits(s + start, l) && leading_zero(s + start, l)))
				return false;
			if (*pos == n || s[*pos] == stop)
				return true;
			start = *pos + 1;
		} else if (!is_alnum_dash(s[*pos])) {
			return false;
		}
	}
}

bool semver_is_valid_attribute(const char *s, size_t len)
{
	size_t pos = 0;

	if (!s || len > SEMVER_MAX_LEN)
		return false;
	for (int i = 0; i < 3; i++) {
		if (!match_number(s, len, &pos))
			return false;
		if (i < 2 && (pos == len || s[pos++] != '.'))
			return false;
	}
	if (pos < len && s[pos] == '-') {
		pos++;
		if (!match_idents(s, len, &pos, '+', true))
			return false;
	}
	if (pos < len && s[pos] == '+') {
		pos++;
		if (!match_idents(s, len, &pos, '\0', false))
			return false;
	}
	return pos == len;
}
