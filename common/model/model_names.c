/* model_names.c - the name rules of the Kubernetes API machinery (DNS-1123
 * labels and subdomains, C identifiers, qualified names, label values),
 * field paths, and printing values the way field.Error does. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"
#include "strbuf.h"

/* ---- Field paths ---- */

/* Append text to the path; returns the previous length. */
static size_t path_append(struct model_path *p, const char *a, const char *b, const char *c)
{
	size_t mark = p->len;
	size_t room = sizeof(p->buf) - p->len;
	int n = snprintf(p->buf + p->len, room, "%s%s%s", a, b, c);

	if (n < 0 || (size_t)n >= room) {
		/* Cut, and say so. */
		memcpy(p->buf + sizeof(p->buf) - 4, "...", 4);
		p->len = sizeof(p->buf) - 1;
	} else {
		p->len += (size_t)n;
	}
	return mark;
}

size_t model_path_field(struct model_path *p, const char *name)
{
	return path_append(p, p->len ? "." : "", name, "");
}

size_t model_path_index(struct model_path *p, size_t i)
{
	char num[24];

	snprintf(num, sizeof(num), "%zu", i);
	return path_append(p, "[", num, "]");
}

size_t model_path_key(struct model_path *p, const char *key)
{
	return path_append(p, "[", key, "]");
}

void model_path_pop(struct model_path *p, size_t mark)
{
	if (mark <= p->len) {
		p->len = mark;
		p->buf[mark] = '\0';
	}
}

void model_source_document(const struct model_source *src, char *buf, size_t size)
{
	if (src->item_path)
		snprintf(buf, size, "document %d, item %s", src->document, src->item_path);
	else if (src->item >= 0)
		snprintf(buf, size, "document %d, item %d", src->document, src->item);
	else
		snprintf(buf, size, "document %d", src->document);
}

void model_object_prefix(const struct model_object *o, char *buf, size_t size)
{
	char what[600], doc[128];

	model_object_describe(o, what, sizeof(what));
	if (!o->src.file) {
		snprintf(buf, size, "%s: ", what);
		return;
	}
	model_source_document(&o->src, doc, sizeof(doc));
	snprintf(buf, size, "%s: %s (%s): ", o->src.file, doc, what);
}

/* ---- Name checks ---- */

/* One message: head followed by text (head may be ""). */
static void add_msg(struct model_name_msgs *out, const char *head, const char *text)
{
	if (out->n >= MODEL_NAME_MSGS)
		return;
	snprintf(out->buf[out->n], sizeof(out->buf[0]), "%s%s", head, text);
	out->m[out->n] = out->buf[out->n];
	out->n++;
}

static bool is_lower_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
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

static bool match_subdomain(const char *s)
{
	const char *p = s;

	for (;;) {
		const char *dot = strchr(p, '.');
		size_t n = dot ? (size_t)(dot - p) : strlen(p);

		if (!match_label(p, n))
			return false;
		if (!dot)
			return true;
		p = dot + 1;
	}
}

#define DNS1123_LABEL_MSG \
	"a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', " \
	"and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', " \
	"regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
#define DNS1123_SUBDOMAIN_MSG \
	"a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' " \
	"or '.', and must start and end with an alphanumeric character (e.g. 'example.com', " \
	"regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
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

int model_check_dns1123_label(const char *s, struct model_name_msgs *out)
{
	size_t n = strlen(s);

	out->n = 0;
	if (n > 63)
		add_msg(out, "", "must be no more than 63 characters");
	if (!match_label(s, n))
		add_msg(out, "", DNS1123_LABEL_MSG);
	return out->n;
}

int model_check_dns1123_subdomain(const char *s, struct model_name_msgs *out)
{
	out->n = 0;
	if (strlen(s) > 253)
		add_msg(out, "", "must be no more than 253 characters");
	if (!match_subdomain(s))
		add_msg(out, "", DNS1123_SUBDOMAIN_MSG);
	return out->n;
}

int model_check_c_identifier(const char *s, struct model_name_msgs *out)
{
	bool ok = s[0] && (s[0] == '_' || (is_alnum(s[0]) && !(s[0] >= '0' && s[0] <= '9')));

	out->n = 0;
	for (size_t i = 1; ok && s[i]; i++)
		ok = is_alnum(s[i]) || s[i] == '_';
	if (!ok)
		add_msg(out, "", C_IDENTIFIER_MSG);
	return out->n;
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

int model_check_qualified_name(const char *s, struct model_name_msgs *out)
{
	const char *slash = strchr(s, '/');
	const char *name = s;

	out->n = 0;
	if (slash && strchr(slash + 1, '/')) {
		add_msg(out, "a qualified name ", QUALIFIED_NAME_MSG
			" with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')");
		return out->n;
	}
	if (slash) {
		char prefix[300];
		size_t plen = (size_t)(slash - s);
		struct model_name_msgs sub;

		name = slash + 1;
		if (plen == 0) {
			add_msg(out, "", "prefix part must be non-empty");
		} else {
			if (plen >= sizeof(prefix))
				plen = sizeof(prefix) - 1;  /* still too long: reported below */
			memcpy(prefix, s, plen);
			prefix[plen] = '\0';
			if (slash - s >= (long)sizeof(prefix) - 1)
				add_msg(out, "", "prefix part must be no more than 253 characters");
			else if (model_check_dns1123_subdomain(prefix, &sub))
				for (int i = 0; i < sub.n; i++)
					add_msg(out, "prefix part ", sub.m[i]);
		}
	}
	if (!name[0])
		add_msg(out, "", "name part must be non-empty");
	else if (strlen(name) > 63)
		add_msg(out, "", "name part must be no more than 63 characters");
	if (!match_qualified_part(name, strlen(name)))
		add_msg(out, "name part ", QUALIFIED_NAME_MSG);
	return out->n;
}

int model_check_label_value(const char *s, struct model_name_msgs *out)
{
	size_t n = strlen(s);

	out->n = 0;
	if (n > 63)
		add_msg(out, "", "must be no more than 63 characters");
	if (n && !match_qualified_part(s, n))
		add_msg(out, "", LABEL_VALUE_MSG);
	return out->n;
}

/* ---- Values ---- */

#define QUOTE_MAX 256

void model_quote(struct strbuf *sb, const char *s, size_t len)
{
	size_t n = len > QUOTE_MAX ? QUOTE_MAX : len;

	sb_putc(sb, '"');
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		switch (c) {
		case '"':  sb_puts(sb, "\\\""); break;
		case '\\': sb_puts(sb, "\\\\"); break;
		case '\n': sb_puts(sb, "\\n"); break;
		case '\r': sb_puts(sb, "\\r"); break;
		case '\t': sb_puts(sb, "\\t"); break;
		default:
			/* Printable ASCII and UTF-8 bytes pass; control bytes
			 * and DEL are escaped. */
			if (c < 0x20 || c == 0x7f)
				sb_printf(sb, "\\x%02x", c);
			else
				sb_putc(sb, (char)c);
		}
	}
	if (n < len)
		sb_puts(sb, "...");
	sb_putc(sb, '"');
}

/* ---- Name index ---- */

static int ref_cmp(const void *pa, const void *pb)
{
	const struct model_name_ref *a = pa, *b = pb;
	int c = strcmp(a->name, b->name);

	if (c)
		return c;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

int model_name_index_build(struct model_name_index *ix, const void *base, size_t n,
			   size_t stride, size_t name_offset)
{
	const char *p = base;

	ix->n = 0;
	ix->refs = malloc((n ? n : 1) * sizeof(*ix->refs));
	if (!ix->refs)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const char *name;

		memcpy(&name, p + i * stride + name_offset, sizeof(name));
		if (!name)
			continue;
		ix->refs[ix->n].name = name;
		ix->refs[ix->n].idx = i;
		ix->n++;
	}
	qsort(ix->refs, ix->n, sizeof(*ix->refs), ref_cmp);
	return 0;
}

size_t model_name_index_find(const struct model_name_index *ix, const char *name)
{
	size_t lo = 0, hi = ix->n;

	if (!name)
		return SIZE_MAX;
	/* Lower bound: the first ref not less than name, i.e. the smallest idx. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(ix->refs[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < ix->n && !strcmp(ix->refs[lo].name, name))
		return ix->refs[lo].idx;
	return SIZE_MAX;
}

void model_name_index_free(struct model_name_index *ix)
{
	free(ix->refs);
	ix->refs = NULL;
	ix->n = 0;
}
