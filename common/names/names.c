/* names.c - the name rules of the Kubernetes API machinery: DNS-1123
 * labels and subdomains, DNS-1035 labels, C identifiers, qualified names,
 * label values, and the generateName mask; messages worded as
 * k8s.io/apimachinery words them (RegexError's "(e.g. 'a',  or 'b', regex
 * used for validation is '...')", with its two spaces). */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "names.h"

#define MAX_LABEL 63            /* DNS1123LabelMaxLength, DNS1035LabelMaxLength */
#define MAX_SUBDOMAIN 253       /* DNS1123SubdomainMaxLength */
#define MAX_NAME_PART 63        /* qualifiedNameMaxLength, LabelValueMaxLength */

#define DNS1123_LABEL_MSG \
	"a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', " \
	"and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', " \
	"regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
#define DNS1123_SUBDOMAIN_MSG \
	"a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' " \
	"or '.', and must start and end with an alphanumeric character (e.g. 'example.com', " \
	"regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
#define DNS1035_LABEL_MSG \
	"a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with " \
	"an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or " \
	"'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
#define C_IDENTIFIER_MSG \
	"a valid C identifier must start with alphabetic character or '_', followed by a string " \
	"of alphanumeric characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex " \
	"used for validation is '[A-Za-z_][A-Za-z0-9_]*')"
#define QUALIFIED_NAME_MSG \
	"must consist of alphanumeric characters, '-', '_' or '.', and must start and end with " \
	"an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for " \
	"validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
#define LABEL_VALUE_MSG \
	"a valid label must be an empty string or consist of alphanumeric characters, '-', '_' " \
	"or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or " \
	"'my_value',  or '12345', regex used for validation is " \
	"'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"

/* One message: head followed by text (head may be ""). */
static void add_msg(struct names_msgs *out, const char *head, const char *text)
{
	if (out->n >= NAMES_MSGS_MAX)
		return;
	snprintf(out->buf[out->n], sizeof(out->buf[0]), "%s%s", head, text);
	out->m[out->n] = out->buf[out->n];
	out->n++;
}

static void add_max_len(struct names_msgs *out, const char *head, int max)
{
	char text[64];

	snprintf(text, sizeof(text), "must be no more than %d characters", max);
	add_msg(out, head, text);
}

static bool is_lower(char c)
{
	return c >= 'a' && c <= 'z';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_lower_alnum(char c)
{
	return is_lower(c) || is_digit(c);
}

static bool is_alnum(char c)
{
	return is_lower_alnum(c) || (c >= 'A' && c <= 'Z');
}

/* [a-z0-9]([-a-z0-9]*[a-z0-9])? over s[0..n) */
static bool match_label(const char *s, size_t n)
{
	if (n == 0 || !is_lower_alnum(s[0]) || !is_lower_alnum(s[n - 1]))
		return false;
	for (size_t i = 1; i + 1 < n; i++)
		if (!is_lower_alnum(s[i]) && s[i] != '-')
			return false;
	return true;
}

/* Labels separated by single dots. */
static bool match_subdomain(const char *s, size_t len)
{
	const char *end = s + len;

	for (;;) {
		const char *dot = memchr(s, '.', (size_t)(end - s));
		size_t n = dot ? (size_t)(dot - s) : (size_t)(end - s);

		if (!match_label(s, n))
			return false;
		if (!dot)
			return true;
		s = dot + 1;
	}
}

/* ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9] */
static bool match_qualified_part(const char *s, size_t n)
{
	if (n == 0 || !is_alnum(s[0]) || !is_alnum(s[n - 1]))
		return false;
	for (size_t i = 1; i + 1 < n; i++)
		if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
			return false;
	return true;
}

/* The rules that are a length limit and a pattern: out gets the limit's
 * message when len is over max, then msg when the pattern does not match. */
static int length_and_pattern(struct names_msgs *out, size_t len, int max, bool matches,
			      const char *msg)
{
	out->n = 0;
	if (len > (size_t)max)
		add_max_len(out, "", max);
	if (!matches)
		add_msg(out, "", msg);
	return out->n;
}

int names_dns1123_label(const char *s, size_t len, struct names_msgs *out)
{
	return length_and_pattern(out, len, MAX_LABEL, match_label(s, len), DNS1123_LABEL_MSG);
}

int names_dns1123_subdomain(const char *s, size_t len, struct names_msgs *out)
{
	return length_and_pattern(out, len, MAX_SUBDOMAIN, match_subdomain(s, len),
				  DNS1123_SUBDOMAIN_MSG);
}

int names_dns1035_label(const char *s, size_t len, struct names_msgs *out)
{
	/* A DNS-1123 label that starts with a letter. */
	return length_and_pattern(out, len, MAX_LABEL, match_label(s, len) && is_lower(s[0]),
				  DNS1035_LABEL_MSG);
}

int names_c_identifier(const char *s, size_t len, struct names_msgs *out)
{
	bool ok = len > 0 && (s[0] == '_' || (is_alnum(s[0]) && !is_digit(s[0])));

	out->n = 0;
	for (size_t i = 1; ok && i < len; i++)
		ok = is_alnum(s[i]) || s[i] == '_';
	if (!ok)
		add_msg(out, "", C_IDENTIFIER_MSG);
	return out->n;
}

int names_qualified_name(const char *s, size_t len, struct names_msgs *out)
{
	const char *slash = memchr(s, '/', len);
	const char *name = s;
	size_t name_len = len;

	out->n = 0;
	if (slash && memchr(slash + 1, '/', len - (size_t)(slash - s) - 1)) {
		add_msg(out, "a qualified name ", QUALIFIED_NAME_MSG
			" with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')");
		return out->n;
	}
	if (slash) {
		size_t plen = (size_t)(slash - s);
		struct names_msgs sub;

		name = slash + 1;
		name_len = len - plen - 1;
		if (plen == 0) {
			add_msg(out, "", "prefix part must be non-empty");
		} else {
			names_dns1123_subdomain(s, plen, &sub);
			for (int i = 0; i < sub.n; i++)
				add_msg(out, "prefix part ", sub.m[i]);
		}
	}
	if (name_len == 0)
		add_msg(out, "", "name part must be non-empty");
	else if (name_len > MAX_NAME_PART)
		add_max_len(out, "name part ", MAX_NAME_PART);
	if (!match_qualified_part(name, name_len))
		add_msg(out, "name part ", QUALIFIED_NAME_MSG);
	return out->n;
}

int names_label_value(const char *s, size_t len, struct names_msgs *out)
{
	/* Empty is a valid label value. */
	return length_and_pattern(out, len, MAX_NAME_PART,
				  !len || match_qualified_part(s, len), LABEL_VALUE_MSG);
}

const char *names_mask_trailing_dash(const char *s, size_t *len, char *buf)
{
	size_t n = *len;

	if (n == 0 || s[n - 1] != '-')
		return s;
	if (n == 1)
		return NULL;
	memcpy(buf, s, n - 2);
	buf[n - 2] = 'a';
	*len = n - 1;
	return buf;
}

void names_suffix(uint64_t h, char out[NAMES_SUFFIX_LEN + 1])
{
	static const char alphabet[] = NAMES_SUFFIX_ALPHABET;

	for (int i = 0; i < NAMES_SUFFIX_LEN; i++) {
		out[i] = alphabet[h % (sizeof(alphabet) - 1)];
		h /= sizeof(alphabet) - 1;
	}
	out[NAMES_SUFFIX_LEN] = '\0';
}
