/* model_validate_fields.c - what every family's validation is made of: the
 * messages, worded as field.Error prints them ("PATH: Invalid value: V:
 * detail", "Required value", "Unsupported value", "Duplicate value",
 * "Forbidden", "Too long", "Too many", each behind the object's prefix
 * "FILE: document N (KIND NS/NAME): "), the name checks, the semver regex,
 * object metadata, and the node selectors, taints and tolerations that DRA,
 * core and Karpenter objects share. */
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"
#include "strbuf.h"

/* ---- Messages ---- */

void model_val_emit(struct model_val *v, struct strbuf *body)
{
	/* The object's prefix is made for its first problem only: most
	 * objects have none, and thousands of them are checked. */
	if (!v->prefix[0])
		model_object_prefix(v->o, v->prefix, sizeof(v->prefix));
	v->n++;
	if (sb_error(body) || (v->errs && dt_diags_add(v->errs, "%s%s: %s", v->prefix,
						       model_path_str(&v->path), sb_str(body))))
		v->oom = true;
	sb_free(body);
}

void model_val_detail(struct strbuf *sb, const char *detail)
{
	if (detail && detail[0]) {
		sb_puts(sb, ": ");
		sb_puts(sb, detail);
	}
}

void model_e_required(struct model_val *v, const char *detail)
{
	struct strbuf sb = STRBUF_INIT;

	sb_puts(&sb, "Required value");
	model_val_detail(&sb, detail);
	model_val_emit(v, &sb);
}

void model_e_forbidden(struct model_val *v, const char *detail)
{
	struct strbuf sb = STRBUF_INIT;

	sb_puts(&sb, "Forbidden");
	model_val_detail(&sb, detail);
	model_val_emit(v, &sb);
}

void model_e_invalid_str(struct model_val *v, const char *value, const char *detail)
{
	struct strbuf sb = STRBUF_INIT;

	sb_puts(&sb, "Invalid value: ");
	model_quote(&sb, value ? value : "", value ? strlen(value) : 0);
	model_val_detail(&sb, detail);
	model_val_emit(v, &sb);
}

/* A value printed as is: numbers, booleans, null, Go composite forms. */
void model_e_invalid_raw(struct model_val *v, const char *raw, const char *detail)
{
	struct strbuf sb = STRBUF_INIT;

	sb_puts(&sb, "Invalid value: ");
	sb_puts(&sb, raw);
	model_val_detail(&sb, detail);
	model_val_emit(v, &sb);
}

void model_e_invalid_int(struct model_val *v, int64_t value, const char *detail)
{
	char num[32];

	snprintf(num, sizeof(num), "%" PRId64, value);
	model_e_invalid_raw(v, num, detail);
}

void model_e_too_long(struct model_val *v, int max)
{
	struct strbuf sb = STRBUF_INIT;

	sb_printf(&sb, "Too long: may not be more than %d bytes", max);
	model_val_emit(v, &sb);
}

void model_e_too_many(struct model_val *v, size_t n, int max)
{
	struct strbuf sb = STRBUF_INIT;

	sb_printf(&sb, "Too many: %zu: must have at most %d item%s", n, max, max == 1 ? "" : "s");
	model_val_emit(v, &sb);
}

void model_e_duplicate(struct model_val *v, const char *value)
{
	struct strbuf sb = STRBUF_INIT;

	sb_puts(&sb, "Duplicate value: ");
	model_quote(&sb, value ? value : "", value ? strlen(value) : 0);
	model_val_emit(v, &sb);
}

void model_e_not_found(struct model_val *v, const char *value, const char *detail)
{
	struct strbuf sb = STRBUF_INIT;

	sb_puts(&sb, "Not found: ");
	model_quote(&sb, value ? value : "", value ? strlen(value) : 0);
	model_val_detail(&sb, detail);
	model_val_emit(v, &sb);
}

/* A CRD's schema pattern the value does not match: kube-openapi's "FIELD
 * in body should match 'PATTERN'", less the "FIELD in body" the path
 * already says. */
void model_e_pattern(struct model_val *v, const char *value, const char *pattern)
{
	struct strbuf sb = STRBUF_INIT;

	sb_printf(&sb, "should match '%s'", pattern);
	model_e_invalid_str(v, value, sb_error(&sb) ? "should match its pattern" : sb_str(&sb));
	sb_free(&sb);
}

/* supported: NULL-terminated list, printed in the order given. */
void model_e_not_supported(struct model_val *v, const char *value, const char *const *supported)
{
	struct strbuf sb = STRBUF_INIT;

	sb_puts(&sb, "Unsupported value: ");
	model_quote(&sb, value ? value : "", value ? strlen(value) : 0);
	sb_puts(&sb, ": supported values: ");
	for (size_t i = 0; supported[i]; i++) {
		if (i)
			sb_puts(&sb, ", ");
		model_quote(&sb, supported[i], strlen(supported[i]));
	}
	model_val_emit(v, &sb);
}

/* A map key in a path, cut in the middle past max bytes as the API server
 * does (truncateIfTooLong), so that hostile keys keep messages short. */
size_t model_p_key_cut(struct model_val *v, const char *key, size_t max)
{
	return model_path_key_cut(&v->path, key, max);
}

bool model_str_eq(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

bool model_empty(const char *s)
{
	return !s || !s[0];
}

/* ---- Names ---- */

typedef int (*name_rule)(const char *s, size_t len, struct names_msgs *out);

/* One Invalid error per message of the rule, reported against value. */
static void report_name_msgs(struct model_val *v, const char *value, const struct names_msgs *m)
{
	for (int i = 0; i < m->n; i++)
		model_e_invalid_str(v, value, m->m[i]);
}

/* Check s (NULL reads as "") with rule and report what it finds. */
static void check_name(struct model_val *v, const char *s, name_rule rule)
{
	struct names_msgs m;
	const char *value = s ? s : "";

	rule(value, strlen(value), &m);
	report_name_msgs(v, value, &m);
}

void model_v_dns_label(struct model_val *v, const char *s)
{
	check_name(v, s, names_dns1123_label);
}

void model_v_dns_subdomain(struct model_val *v, const char *s)
{
	check_name(v, s, names_dns1123_subdomain);
}

/* ValidateLabelName: a qualified name (label keys, taint keys, ...). */
void model_v_label_name(struct model_val *v, const char *s)
{
	check_name(v, s, names_qualified_name);
}

static void v_label_value(struct model_val *v, const char *s)
{
	check_name(v, s, names_label_value);
}

/* s with ASCII upper case lowered (strings.ToLower for the names that
 * matter) into buf, cut to size - 1 bytes; returns the length. */
static size_t ascii_lower(const char *s, char *buf, size_t size)
{
	size_t n = strlen(s);

	if (n >= size)
		n = size - 1;
	for (size_t i = 0; i < n; i++)
		buf[i] = (s[i] >= 'A' && s[i] <= 'Z') ? (char)(s[i] - 'A' + 'a') : s[i];
	buf[n] = '\0';
	return n;
}

/* ValidateCSIDriverName, which DRA reuses for driver names and domains. */
void model_v_driver_name(struct model_val *v, const char *s)
{
	char lower[512];
	struct names_msgs m;
	size_t n = s ? strlen(s) : 0;

	if (n == 0)
		model_e_required(v, "");
	if (n > MAX_DRIVER_LEN)
		model_e_too_long(v, MAX_DRIVER_LEN);
	n = ascii_lower(s ? s : "", lower, sizeof(lower));
	names_dns1123_subdomain(lower, n, &m);
	report_name_msgs(v, s ? s : "", &m);
}

static void v_c_identifier(struct model_val *v, const char *s)
{
	if (strlen(s) > MAX_ID_LEN)
		model_e_too_long(v, MAX_ID_LEN);
	check_name(v, s, names_c_identifier);
}

/* QualifiedName: a C identifier, or a domain, "/" and a C identifier. */
void model_v_qualified_name(struct model_val *v, const char *name)
{
	const char *slash = strchr(name, '/');
	char domain[256];
	size_t dlen;

	if (!slash) {
		v_c_identifier(v, name);
		return;
	}
	if (strchr(slash + 1, '/')) {
		model_e_invalid_str(v, name, "a qualified name must be a C identifier, optionally "
			      "prefixed by a domain and one slash");
		return;
	}
	dlen = (size_t)(slash - name);
	if (dlen == 0) {
		model_e_invalid_str(v, "", "the domain must not be empty");
	} else {
		if (dlen >= sizeof(domain))
			dlen = sizeof(domain) - 1;
		memcpy(domain, name, dlen);
		domain[dlen] = '\0';
		if ((size_t)(slash - name) > dlen)
			model_e_too_long(v, MAX_DOMAIN_LEN);
		else
			model_v_driver_name(v, domain);
	}
	if (!slash[1])
		model_e_invalid_str(v, "", "the name must not be empty");
	else
		v_c_identifier(v, slash + 1);
}

void model_v_fully_qualified_name(struct model_val *v, const char *name)
{
	model_v_qualified_name(v, name);
	if (!strchr(name, '/'))
		model_e_invalid_str(v, name, "a fully qualified name must be a domain and a name "
			      "separated by a slash");
}

void model_v_pool_name(struct model_val *v, const char *name)
{
	const char *p;

	if (model_empty(name)) {
		model_e_required(v, "");
		return;
	}
	if (strlen(name) > MAX_POOL_NAME_LEN)
		model_e_too_long(v, MAX_POOL_NAME_LEN);
	p = name;
	for (;;) {
		const char *slash = strchr(p, '/');
		size_t n = slash ? (size_t)(slash - p) : strlen(p);
		char part[300];

		if (n >= sizeof(part))
			n = sizeof(part) - 1;
		memcpy(part, p, n);
		part[n] = '\0';
		model_v_dns_subdomain(v, part);
		if (!slash)
			break;
		p = slash + 1;
	}
}

/* A UUID in RFC 4122 normalized form (shareID). */
void model_v_uid(struct model_val *v, const char *uid)
{
	bool ok = strlen(uid) == 36;

	for (size_t i = 0; ok && i < 36; i++) {
		char c = uid[i];

		if (i == 8 || i == 13 || i == 18 || i == 23)
			ok = c == '-';
		else
			ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
	}
	if (!ok)
		model_e_invalid_str(v, uid, "uid must be in RFC 4122 normalized form, "
			      "`xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` with lowercase hexadecimal "
			      "characters");
}

/* ---- Semver (the regex of validateDeviceAttributeVersionValue) ---- */

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_ident_char(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-';
}

/* (0|[1-9]\d*) at *p; advances. */
static bool numeric_id(const char **p)
{
	const char *s = *p;

	if (!is_digit(*s))
		return false;
	if (*s == '0') {
		*p = s + 1;
		return true;
	}
	while (is_digit(*s))
		s++;
	*p = s;
	return true;
}

bool model_semver_regex(const char *s, size_t len)
{
	const char *p = s, *end = s + len;

	if (memchr(s, '\0', len))
		return false;
	if (!numeric_id(&p) || *p++ != '.' || !numeric_id(&p) || *p++ != '.' || !numeric_id(&p))
		return false;
	if (p < end && *p == '-') {
		do {
			const char *start = ++p;
			bool alpha = false;

			while (p < end && is_ident_char(*p)) {
				alpha |= !is_digit(*p);
				p++;
			}
			if (p == start)
				return false;
			/* numeric identifiers have no leading zeros */
			if (!alpha && p - start > 1 && *start == '0')
				return false;
		} while (p < end && *p == '.');
	}
	if (p < end && *p == '+') {
		do {
			const char *start = ++p;

			while (p < end && is_ident_char(*p))
				p++;
			if (p == start)
				return false;
		} while (p < end && *p == '.');
	}
	return p == end;
}

/* ---- Metadata ---- */

void model_v_labels(struct model_val *v, const struct model_kv *kv, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		model_v_label_name(v, kv[i].key);
		v_label_value(v, kv[i].value);
	}
}

void model_v_annotations(struct model_val *v, const struct model_kv *kv, size_t n)
{
	size_t total = 0;

	for (size_t i = 0; i < n; i++) {
		char lower[512];
		size_t len = ascii_lower(kv[i].key, lower, sizeof(lower));
		struct names_msgs m;

		names_qualified_name(lower, len, &m);
		report_name_msgs(v, kv[i].key, &m);
		total += strlen(kv[i].key) + strlen(kv[i].value);
	}
	if (total > MAX_ANNOTATIONS_SIZE)
		model_e_too_long(v, MAX_ANNOTATIONS_SIZE);
}

/* metadata.generateName as a prefix: NameIsDNSSubdomain(s, true) checks
 * it with its trailing dash masked (names_mask_trailing_dash), the value
 * reported as written. */
static void v_generate_name(struct model_val *v, const char *s)
{
	size_t len = strlen(s);
	char *buf = malloc(len + 1);
	const char *masked = buf ? names_mask_trailing_dash(s, &len, buf) : NULL;
	struct names_msgs m;

	if (!masked) {                  /* "-" (upstream masks only longer ones) */
		masked = s;
		len = strlen(s);
	}
	names_dns1123_subdomain(masked, len, &m);
	report_name_msgs(v, s, &m);
	free(buf);
}

/* ValidateObjectMeta, with names checked as DNS subdomains (every kind
 * here uses that rule). A name the loader generated is checked too, as
 * the API server checks the name it made. */
void model_v_meta(struct model_val *v, const struct model_meta *m, bool namespaced)
{
	size_t mk = P_FIELD(v, "metadata");
	size_t f;

	if (!model_empty(m->generate_name)) {
		f = P_FIELD(v, "generateName");
		v_generate_name(v, m->generate_name);
		P_POP(v, f);
	}
	if (model_empty(m->name) && model_empty(m->generate_name)) {
		f = P_FIELD(v, "name");
		model_e_required(v, "name or generateName is required");
		P_POP(v, f);
	} else if (!model_empty(m->name)) {
		f = P_FIELD(v, "name");
		model_v_dns_subdomain(v, m->name);
		P_POP(v, f);
	}
	if (namespaced) {
		f = P_FIELD(v, "namespace");
		model_v_dns_label(v, m->ns);
		P_POP(v, f);
	} else if (m->ns && m->ns[0]) {
		f = P_FIELD(v, "namespace");
		model_e_forbidden(v, "not allowed on this type");
		P_POP(v, f);
	}
	f = P_FIELD(v, "labels");
	model_v_labels(v, m->labels, m->n_labels);
	P_POP(v, f);
	f = P_FIELD(v, "annotations");
	model_v_annotations(v, m->annotations, m->n_annotations);
	P_POP(v, f);
	P_POP(v, mk);
}

/* ---- Node selectors, taints, tolerations ---- */

static void v_string_values(struct model_val *v, const struct model_requirement *r)
{
	size_t f = P_FIELD(v, "values");

	for (size_t i = 0; i < r->n_values; i++) {
		size_t ix = P_INDEX(v, i);

		v_label_value(v, r->values[i]);
		P_POP(v, ix);
	}
	P_POP(v, f);
}

static void v_node_requirement(struct model_val *v, const struct model_requirement *r)
{
	size_t f;

	switch (r->op) {
	case MODEL_OP_IN:
	case MODEL_OP_NOT_IN:
		if (r->n_values == 0) {
			f = P_FIELD(v, "values");
			model_e_required(v, "must be specified when `operator` is 'In' or 'NotIn'");
			P_POP(v, f);
		}
		break;
	case MODEL_OP_EXISTS:
	case MODEL_OP_DOES_NOT_EXIST:
		if (r->n_values > 0) {
			f = P_FIELD(v, "values");
			model_e_forbidden(v, "may not be specified when `operator` is 'Exists' or "
				    "'DoesNotExist'");
			P_POP(v, f);
		}
		break;
	case MODEL_OP_GT:
	case MODEL_OP_LT:
		if (r->n_values != 1) {
			f = P_FIELD(v, "values");
			model_e_required(v, "must be specified single value when `operator` is 'Lt' or 'Gt'");
			P_POP(v, f);
		}
		break;
	default:
		f = P_FIELD(v, "operator");
		model_e_invalid_str(v, r->operator_text, "not a valid selector operator");
		P_POP(v, f);
	}
	f = P_FIELD(v, "key");
	model_v_label_name(v, r->key);
	P_POP(v, f);
	v_string_values(v, r);
}

static void v_field_requirement(struct model_val *v, const struct model_requirement *r)
{
	size_t f;

	if (r->op == MODEL_OP_IN || r->op == MODEL_OP_NOT_IN) {
		if (r->n_values != 1) {
			f = P_FIELD(v, "values");
			model_e_required(v, "must be only one value when `operator` is 'In' or 'NotIn' "
				   "for node field selector");
			P_POP(v, f);
		}
	} else {
		f = P_FIELD(v, "operator");
		model_e_invalid_str(v, r->operator_text, "not a valid selector operator");
		P_POP(v, f);
	}
	if (!model_str_eq(r->key, "metadata.name")) {
		f = P_FIELD(v, "key");
		model_e_invalid_str(v, r->key, "not a valid field selector key");
		P_POP(v, f);
		return;
	}
	f = P_FIELD(v, "values");
	for (size_t i = 0; i < r->n_values; i++) {
		size_t ix = P_INDEX(v, i);

		model_v_dns_subdomain(v, r->values[i]);
		P_POP(v, ix);
	}
	P_POP(v, f);
}

/* ValidateNodeSelector, at the node selector's own path. */
void model_v_node_selector(struct model_val *v, const struct model_node_selector *ns)
{
	size_t tf = P_FIELD(v, "nodeSelectorTerms");

	if (ns->n_terms == 0) {
		model_e_required(v, "must have at least one node selector term");
		P_POP(v, tf);
		return;
	}
	for (size_t i = 0; i < ns->n_terms; i++) {
		const struct model_node_selector_term *t = &ns->terms[i];
		size_t ix = P_INDEX(v, i);
		size_t f = P_FIELD(v, "matchExpressions");

		for (size_t j = 0; j < t->n_match_expressions; j++) {
			size_t jx = P_INDEX(v, j);

			v_node_requirement(v, &t->match_expressions[j]);
			P_POP(v, jx);
		}
		P_POP(v, f);
		f = P_FIELD(v, "matchFields");
		for (size_t j = 0; j < t->n_match_fields; j++) {
			size_t jx = P_INDEX(v, j);

			v_field_requirement(v, &t->match_fields[j]);
			P_POP(v, jx);
		}
		P_POP(v, f);
		P_POP(v, ix);
	}
	P_POP(v, tf);
}

const char *const model_device_effects[] = { "NoExecute", "NoSchedule", "None", NULL };
const char *const model_core_effects[] = { "NoSchedule", "PreferNoSchedule", "NoExecute", NULL };
static const char *const toleration_ops[] = { "Equal", "Exists", NULL };

bool model_in_list(const char *s, const char *const *list)
{
	for (size_t i = 0; s && list[i]; i++)
		if (!strcmp(s, list[i]))
			return true;
	return false;
}

/* A taint (device taints with model_device_effects, core taints with model_core_effects). */
void model_v_taint(struct model_val *v, const struct model_taint *t, const char *const *effects)
{
	size_t f = P_FIELD(v, "key");

	model_v_label_name(v, t->key);
	P_POP(v, f);
	if (!model_empty(t->value)) {
		f = P_FIELD(v, "value");
		v_label_value(v, t->value);
		P_POP(v, f);
	}
	f = P_FIELD(v, "effect");
	if (model_empty(t->effect))
		model_e_required(v, "");
	else if (!model_in_list(t->effect, effects))
		model_e_not_supported(v, t->effect, effects);
	P_POP(v, f);
}

void model_v_taints(struct model_val *v, const char *field, const struct model_taint *t, size_t n,
		     int max, const char *const *effects)
{
	size_t f = P_FIELD(v, field);

	if (max >= 0 && n > (size_t)max) {
		model_e_too_many(v, n, max);
	} else {
		for (size_t i = 0; i < n; i++) {
			size_t ix = P_INDEX(v, i);

			model_v_taint(v, &t[i], effects);
			P_POP(v, ix);
		}
	}
	P_POP(v, f);
}

/* validateDeviceToleration. */
void model_v_device_toleration(struct model_val *v, const struct model_toleration *t)
{
	size_t f;

	if (!model_empty(t->key)) {
		f = P_FIELD(v, "key");
		model_v_label_name(v, t->key);
		P_POP(v, f);
	}
	if (model_str_eq(t->operator_text, "Exists")) {
		if (!model_empty(t->value)) {
			f = P_FIELD(v, "value");
			model_e_invalid_str(v, t->value, "must be empty for operator `Exists`");
			P_POP(v, f);
		}
	} else if (model_str_eq(t->operator_text, "Equal")) {
		f = P_FIELD(v, "value");
		v_label_value(v, t->value ? t->value : "");
		P_POP(v, f);
	} else if (model_empty(t->operator_text)) {
		f = P_FIELD(v, "operator");
		model_e_required(v, "");
		P_POP(v, f);
	} else {
		f = P_FIELD(v, "operator");
		model_e_not_supported(v, t->operator_text, toleration_ops);
		P_POP(v, f);
	}
	if (!model_empty(t->effect) && !model_in_list(t->effect, model_device_effects)) {
		f = P_FIELD(v, "effect");
		model_e_not_supported(v, t->effect, model_device_effects);
		P_POP(v, f);
	}
}

/* core ValidateTolerations (pods). */
void model_v_core_toleration(struct model_val *v, const struct model_toleration *t)
{
	size_t f;
	const char *op = t->operator_text;

	if (!model_empty(t->key)) {
		f = P_FIELD(v, "key");
		model_v_label_name(v, t->key);
		P_POP(v, f);
	}
	if (model_empty(t->key) && !model_str_eq(op, "Exists")) {
		f = P_FIELD(v, "operator");
		model_e_invalid_str(v, op ? op : "",
				    "operator must be Exists when `key` is empty, which "
			      "means \"match all values and all keys\"");
		P_POP(v, f);
	}
	if (t->has_toleration_seconds && !model_str_eq(t->effect, "NoExecute")) {
		f = P_FIELD(v, "effect");
		model_e_invalid_str(v, t->effect ? t->effect : "",
				    "effect must be 'NoExecute' when "
			      "`tolerationSeconds` is set");
		P_POP(v, f);
	}
	if (model_empty(op) || model_str_eq(op, "Equal")) {
		f = P_FIELD(v, "value");
		v_label_value(v, t->value ? t->value : "");
		P_POP(v, f);
	} else if (model_str_eq(op, "Exists")) {
		if (!model_empty(t->value)) {
			f = P_FIELD(v, "operator");
			model_e_invalid_str(v, op,
					    "value must be empty when `operator` is 'Exists'");
			P_POP(v, f);
		}
	} else {
		f = P_FIELD(v, "operator");
		model_e_not_supported(v, op, toleration_ops);
		P_POP(v, f);
	}
	if (!model_empty(t->effect) && !model_in_list(t->effect, model_core_effects)) {
		f = P_FIELD(v, "effect");
		model_e_not_supported(v, t->effect, model_core_effects);
		P_POP(v, f);
	}
}
