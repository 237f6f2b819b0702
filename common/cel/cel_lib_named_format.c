/* cel_lib_named_format.c - the Kubernetes format library
 * (k8s.io/apiserver/pkg/cel/library/format.go): named string formats of
 * type kubernetes.NamedFormat and their validators. Not to be confused
 * with cel_lib_format.c, which is string.format().
 *
 *   format.dns1123Label() ... format.datetime()    -> kubernetes.NamedFormat
 *   format.named("uuid")                            -> optional(NamedFormat)
 *   <NamedFormat>.validate(s)                       -> optional(list(string))
 *
 * validate is optional.none() when s has the format, else the list of what
 * is wrong. The Kubernetes name formats give the API server's own messages
 * (common/names, which the model's validation uses too); the *Prefix
 * variants check a generateName prefix, as NameIsDNSLabel(s, true) does;
 * uri gives url.ParseRequestURI's error (the URL library's parser); uuid,
 * byte, date and datetime are kube-openapi's strfmt checks with its fixed
 * messages. Every call costs 1: upstream's runtime cost function does not
 * recognise the format argument and falls back to 1.
 *
 * uri needs the URL library (cel_lib_url.c, cel_url.h) in the build. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "cel_lib.h"
#include "cel_url.h"
#include "cel_value.h"
#include "names.h"
#include "strbuf.h"
#include "utf8.h"

/* Validate s: optional.none(), optional.of(list of messages), or an error. */
typedef struct cel_value (*format_check)(struct cel_ctx *ctx, const char *s, size_t len);

struct named_format {
	const char *name;               /* "dns1123Label": format.<name>(), format.named(name) */
	format_check check;
};

/* ---- results ---- */

static struct cel_value messages(struct cel_ctx *ctx, const char *const *m, size_t n)
{
	struct cel_value *items;
	struct cel_value list;

	if (n == 0)
		return cel_optional_none();
	list = cel_list_new(ctx, n, &items);
	if (!items)
		return list;
	for (size_t i = 0; i < n; i++) {
		items[i] = cel_string_copy(ctx, m[i], strlen(m[i]));
		if (items[i].kind == CEL_ERROR)
			return items[i];
	}
	return cel_optional_of(ctx, list);
}

static struct cel_value one_message(struct cel_ctx *ctx, bool ok, const char *msg)
{
	return ok ? cel_optional_none() : messages(ctx, &msg, 1);
}

/* ---- the Kubernetes name formats (common/names) ---- */

typedef int (*name_rule)(const char *s, size_t len, struct names_msgs *out);

static struct cel_value check_rule(struct cel_ctx *ctx, name_rule rule, const char *s, size_t len)
{
	struct names_msgs m;

	rule(s, len, &m);
	return messages(ctx, m.m, (size_t)m.n);
}

/* NameIsDNSLabel(s, true) and friends: the rule on the masked prefix. */
static struct cel_value check_prefix(struct cel_ctx *ctx, name_rule rule, const char *s,
				     size_t len)
{
	char *buf = cel_alloc(ctx, len ? len : 1);
	const char *masked;

	if (!buf)
		return cel_errorf(ctx, "out of memory");
	masked = names_mask_trailing_dash(s, &len, buf);
	if (!masked)    /* upstream panics; cel-go reports the recovered panic so */
		return cel_errorf(ctx, "internal error: runtime error: slice bounds out of "
				  "range [:-1]");
	return check_rule(ctx, rule, masked, len);
}

#define NAME_FORMAT(fn, rule, check) \
	static struct cel_value fn(struct cel_ctx *ctx, const char *s, size_t len) \
	{ \
		return check(ctx, rule, s, len); \
	}

NAME_FORMAT(check_dns1123_label, names_dns1123_label, check_rule)
NAME_FORMAT(check_dns1123_subdomain, names_dns1123_subdomain, check_rule)
NAME_FORMAT(check_dns1035_label, names_dns1035_label, check_rule)
NAME_FORMAT(check_qualified_name, names_qualified_name, check_rule)
NAME_FORMAT(check_label_value, names_label_value, check_rule)
NAME_FORMAT(check_dns1123_label_prefix, names_dns1123_label, check_prefix)
NAME_FORMAT(check_dns1123_subdomain_prefix, names_dns1123_subdomain, check_prefix)
NAME_FORMAT(check_dns1035_label_prefix, names_dns1035_label, check_prefix)

/* ---- the CRD formats (kube-openapi strfmt) ---- */

static struct cel_value check_uri(struct cel_ctx *ctx, const char *s, size_t len)
{
	struct cel_value msg;
	struct cel_value *items;
	struct cel_value list;
	int rc = cel_url_check(ctx, s, len, &msg);

	if (rc == 0)
		return cel_optional_none();
	if (rc != -EINVAL)
		return msg;
	list = cel_list_new(ctx, 1, &items);
	if (!items)
		return list;
	items[0] = msg;
	return cel_optional_of(ctx, list);
}

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* (?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$ */
static bool is_uuid(const char *s, size_t len)
{
	static const int groups[] = { 8, 4, 4, 4, 12 };
	size_t i = 0;

	for (size_t g = 0; g < CEL_ARRAY_LEN(groups); g++) {
		if (g > 0 && i < len && s[i] == '-')
			i++;
		for (int k = 0; k < groups[g]; k++, i++)
			if (i >= len || !is_hex(s[i]))
				return false;
	}
	return i == len;
}

static struct cel_value check_uuid(struct cel_ctx *ctx, const char *s, size_t len)
{
	return one_message(ctx, is_uuid(s, len), "does not match the UUID format");
}

static bool is_base64_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || is_digit(c) || c == '+' ||
	       c == '/';
}

/* govalidator's IsBase64: groups of four, the last one possibly "xx==" or
 * "xxx="; the empty string is not base64. */
static bool is_base64(const char *s, size_t len)
{
	size_t pad = 0;

	if (len == 0 || len % 4)
		return false;
	while (pad < 2 && s[len - 1 - pad] == '=')
		pad++;
	for (size_t i = 0; i < len - pad; i++)
		if (!is_base64_char(s[i]))
			return false;
	return true;
}

static struct cel_value check_byte(struct cel_ctx *ctx, const char *s, size_t len)
{
	return one_message(ctx, is_base64(s, len), "invalid base64");
}

static int two_digits(const char *s)
{
	return (s[0] - '0') * 10 + (s[1] - '0');
}

static bool all_digits(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!is_digit(s[i]))
			return false;
	return true;
}

/* time.Parse("2006-01-02", s): four-digit year, two-digit month 1-12, a day
 * that exists in that month (leap years included), nothing else. */
static bool is_date(const char *s, size_t len)
{
	static const int mdays[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	int year, month, day, max;

	if (len != 10 || s[4] != '-' || s[7] != '-' || !all_digits(s, 4) ||
	    !all_digits(s + 5, 2) || !all_digits(s + 8, 2))
		return false;
	year = two_digits(s) * 100 + two_digits(s + 2);
	month = two_digits(s + 5);
	day = two_digits(s + 8);
	if (month < 1 || month > 12)
		return false;
	max = mdays[month - 1];
	if (month == 2 && (year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)))
		max = 29;
	return day >= 1 && day <= max;
}

static struct cel_value check_date(struct cel_ctx *ctx, const char *s, size_t len)
{
	return one_message(ctx, is_date(s, len), "invalid date");
}

/* (z|([+-][0-9]{2}:[0-9]{2}))$ on the lower-cased text. */
static bool is_zone(const char *s, size_t len)
{
	if (len == 1)
		return s[0] == 'z' || s[0] == 'Z';
	return len == 6 && (s[0] == '+' || s[0] == '-') && all_digits(s + 1, 2) && s[3] == ':' &&
	       all_digits(s + 4, 2);
}

/* strfmt's time part, matched on the lower-cased text:
 * ^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$
 * with hours <= 23, minutes and seconds <= 59. The '.' is the regex's: any
 * one character but a newline, so "00:00:00z5z" matches too. */
static bool is_time(const char *s, size_t len)
{
	size_t i = 8, start, k;
	uint32_t cp;

	if (len < 9 || !all_digits(s, 2) || s[2] != ':' || !all_digits(s + 3, 2) ||
	    s[5] != ':' || !all_digits(s + 6, 2))
		return false;
	if (two_digits(s) > 23 || two_digits(s + 3) > 59 || two_digits(s + 6) > 59)
		return false;
	if (is_zone(s + i, len - i))
		return true;
	if (s[i] == '\n')
		return false;
	k = utf8_decode(s + i, len - i, &cp);
	i += k ? k : 1;
	start = i;
	while (i < len && is_digit(s[i]))
		i++;
	return i > start && is_zone(s + i, len - i);
}

static const char *find_t(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] == 't' || s[i] == 'T')
			return s + i;
	return NULL;
}

/* strfmt's IsDateTime: at least 4 bytes; lower-cased and split at every
 * 't', the first part is a date and the second a time (later parts are
 * not looked at, as upstream). */
static bool is_datetime(const char *s, size_t len)
{
	const char *t1, *t2, *end = s + len;

	if (len < 4)
		return false;
	t1 = find_t(s, len);
	if (!t1 || !is_date(s, (size_t)(t1 - s)))
		return false;
	t1++;
	t2 = find_t(t1, (size_t)(end - t1));
	return is_time(t1, (size_t)((t2 ? t2 : end) - t1));
}

static struct cel_value check_datetime(struct cel_ctx *ctx, const char *s, size_t len)
{
	return one_message(ctx, is_datetime(s, len), "invalid datetime");
}

/* ---- the library ---- */

static const struct named_format formats[] = {
	{ "dns1123Label", check_dns1123_label },
	{ "dns1123Subdomain", check_dns1123_subdomain },
	{ "dns1035Label", check_dns1035_label },
	{ "qualifiedName", check_qualified_name },
	{ "dns1123LabelPrefix", check_dns1123_label_prefix },
	{ "dns1123SubdomainPrefix", check_dns1123_subdomain_prefix },
	{ "dns1035LabelPrefix", check_dns1035_label_prefix },
	{ "labelValue", check_label_value },
	{ "uri", check_uri },
	{ "uuid", check_uuid },
	{ "byte", check_byte },
	{ "date", check_date },
	{ "datetime", check_datetime },
};

/* Reads back: format.named("x").value() == format.x(). */
static void print_format(struct strbuf *sb, const void *p)
{
	const struct named_format *f = p;

	sb_printf(sb, "format.%s()", f->name);
}

/* Equality is by name, as upstream's; entries are unique, so identity. */
static const struct cel_object_type named_format_type = {
	.name = "kubernetes.NamedFormat",
	.print = print_format,
};

#define FN(name) static struct cel_value name(struct cel_ctx *ctx, const struct cel_value *a, \
					      size_t n)

FN(fn_named)
{
	(void)ctx;
	(void)n;
	for (size_t i = 0; i < CEL_ARRAY_LEN(formats); i++)
		if (strlen(formats[i].name) == a[0].v.str.len &&
		    !memcmp(formats[i].name, a[0].v.str.s, a[0].v.str.len))
			return cel_optional_of(ctx, cel_object(&named_format_type, &formats[i]));
	return cel_optional_none();
}

FN(fn_validate)
{
	const struct named_format *f = a[0].v.obj.ptr;

	(void)n;
	return f->check(ctx, a[1].v.str.s, a[1].v.str.len);
}

/* format.<name>(): one constant function per format. */
#define CONSTANT(fn, i) \
	FN(fn) \
	{ \
		(void)ctx; \
		(void)a; \
		(void)n; \
		return cel_object(&named_format_type, &formats[i]); \
	}

CONSTANT(fn_dns1123_label, 0)
CONSTANT(fn_dns1123_subdomain, 1)
CONSTANT(fn_dns1035_label, 2)
CONSTANT(fn_qualified_name, 3)
CONSTANT(fn_dns1123_label_prefix, 4)
CONSTANT(fn_dns1123_subdomain_prefix, 5)
CONSTANT(fn_dns1035_label_prefix, 6)
CONSTANT(fn_label_value, 7)
CONSTANT(fn_uri, 8)
CONSTANT(fn_uuid, 9)
CONSTANT(fn_byte, 10)
CONSTANT(fn_date, 11)
CONSTANT(fn_datetime, 12)

#define F "kubernetes.NamedFormat"
/* Upstream's overload id of format.x() is its name. */
#define K(name, fn) { "format." name, "format." name, 0, "", F, fn, NULL }

static const struct cel_overload named_format_overloads[] = {
	{ "format.named", "format-named", 0, "string", "optional_type(" F ")", fn_named, NULL },
	{ "validate", "format-validate", CEL_OV_MEMBER, F ", string",
	  "optional_type(list(string))", fn_validate, NULL },
	K("dns1123Label", fn_dns1123_label),
	K("dns1123Subdomain", fn_dns1123_subdomain),
	K("dns1035Label", fn_dns1035_label),
	K("qualifiedName", fn_qualified_name),
	K("dns1123LabelPrefix", fn_dns1123_label_prefix),
	K("dns1123SubdomainPrefix", fn_dns1123_subdomain_prefix),
	K("dns1035LabelPrefix", fn_dns1035_label_prefix),
	K("labelValue", fn_label_value),
	K("uri", fn_uri),
	K("uuid", fn_uuid),
	K("byte", fn_byte),
	K("date", fn_date),
	K("datetime", fn_datetime),
};

static const struct cel_object_type *const named_format_types[] = { &named_format_type };

const struct cel_library cel_lib_named_format = {
	.name = "format",
	.overloads = named_format_overloads,
	.n_overloads = CEL_ARRAY_LEN(named_format_overloads),
	.types = named_format_types,
	.n_types = CEL_ARRAY_LEN(named_format_types),
};
