/* model_validate.c - the API server's validation of the objects dratopo
 * reads: resource.k8s.io/v1 (pkg/apis/resource/validation), the parts of
 * core/v1, apps/v1 and batch/v1 validation that matter for placing pods,
 * and the schema rules of the Karpenter CRDs.
 *
 * Messages read as field.Error prints them: "PATH: Invalid value: V:
 * detail", "Required value", "Unsupported value", "Duplicate value",
 * "Forbidden", "Too long", "Too many", each behind the object's prefix
 * "FILE: document N (KIND NS/NAME): ". Every problem is reported; a list
 * over its size limit is reported once and its items are not looked at,
 * as the API server does to bound its work. */
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"
#include "strbuf.h"

/* Limits of resource.k8s.io/v1 (pkg/apis/resource/types.go). */
#define MAX_REQUESTS            32      /* DeviceRequestsMaxSize */
#define MAX_SUBREQUESTS         8       /* FirstAvailableDeviceRequestMaxSize */
#define MAX_SELECTORS           32      /* DeviceSelectorsMaxSize */
#define MAX_CONSTRAINTS         32      /* DeviceConstraintsMaxSize */
#define MAX_CONFIG              32      /* DeviceConfigMaxSize */
#define MAX_TOLERATIONS         16      /* DeviceTolerationsMaxLength */
#define MAX_RESULTS             32      /* AllocationResultsMaxSize */
#define MAX_RESERVED_FOR        256     /* ResourceClaimReservedForMaxSize */
#define MAX_DEVICES             128     /* ResourceSliceMaxDevices */
#define MAX_DEVICES_ADVANCED    64      /* ...WithTaintsOrConsumesCounters */
#define MAX_ATTRS_AND_CAPS      32      /* ResourceSliceMaxAttributesAndCapacitiesPerDevice */
#define MAX_ATTR_VALUE_LEN      64      /* DeviceAttributeMaxValueLength */
#define MAX_DEVICE_TAINTS       16      /* DeviceTaintsMaxLength */
#define MAX_COUNTER_SETS        8       /* ResourceSliceMaxCounterSets */
#define MAX_COUNTERS_PER_SET    32      /* ResourceSliceMaxCountersPerCounterSet */
#define MAX_CONSUMPTIONS        2       /* ResourceSliceMaxDeviceCounterConsumptionsPerDevice */
#define MAX_COUNTERS_PER_CONS   32      /* ResourceSliceMaxCountersPerDeviceCounterConsumption */
#define MAX_BINDING_CONDITIONS  4       /* BindingConditionsMaxSize */
#define MAX_VALID_VALUES        10      /* CapacityRequestPolicyDiscreteMaxOptions */
#define MAX_DRIVER_LEN          63      /* DriverNameMaxLength */
#define MAX_POOL_NAME_LEN       253     /* PoolNameMaxLength */
#define MAX_DOMAIN_LEN          63      /* DeviceMaxDomainLength */
#define MAX_ID_LEN              32      /* DeviceMaxIDLength */
#define MAX_CEL_LEN             (10 * 1024)     /* CELSelectorExpressionMaxLength */
#define MAX_OPAQUE_LEN          (10 * 1024)     /* OpaqueParametersMaxLength */
#define MAX_ANNOTATIONS_SIZE    (256 * 1024)    /* TotalAnnotationSizeLimitB */

struct val {
	const struct model_object *o;
	const struct model_validate_opts *opts;
	struct dt_diags *errs;
	struct model_path path;
	char prefix[1024];
	int n;
	bool oom;
};

/* ---- Messages ---- */

static void emit(struct val *v, struct strbuf *body)
{
	v->n++;
	if (sb_error(body) || (v->errs && dt_diags_add(v->errs, "%s%s: %s", v->prefix,
						       v->path.buf, sb_str(body))))
		v->oom = true;
	sb_free(body);
}

static void body_detail(struct strbuf *sb, const char *detail)
{
	if (detail && detail[0]) {
		sb_puts(sb, ": ");
		sb_puts(sb, detail);
	}
}

static void e_required(struct val *v, const char *detail)
{
	struct strbuf sb = STRBUF_INIT;

	sb_puts(&sb, "Required value");
	body_detail(&sb, detail);
	emit(v, &sb);
}

static void e_forbidden(struct val *v, const char *detail)
{
	struct strbuf sb = STRBUF_INIT;

	sb_puts(&sb, "Forbidden");
	body_detail(&sb, detail);
	emit(v, &sb);
}

static void e_invalid_str(struct val *v, const char *value, const char *detail)
{
	struct strbuf sb = STRBUF_INIT;

	sb_puts(&sb, "Invalid value: ");
	model_quote(&sb, value ? value : "", value ? strlen(value) : 0);
	body_detail(&sb, detail);
	emit(v, &sb);
}

/* A value printed as is: numbers, booleans, null, Go composite forms. */
static void e_invalid_raw(struct val *v, const char *raw, const char *detail)
{
	struct strbuf sb = STRBUF_INIT;

	sb_puts(&sb, "Invalid value: ");
	sb_puts(&sb, raw);
	body_detail(&sb, detail);
	emit(v, &sb);
}

static void e_invalid_int(struct val *v, int64_t value, const char *detail)
{
	char num[32];

	snprintf(num, sizeof(num), "%" PRId64, value);
	e_invalid_raw(v, num, detail);
}

static void e_too_long(struct val *v, int max)
{
	struct strbuf sb = STRBUF_INIT;

	sb_printf(&sb, "Too long: may not be more than %d bytes", max);
	emit(v, &sb);
}

static void e_too_many(struct val *v, size_t n, int max)
{
	struct strbuf sb = STRBUF_INIT;

	sb_printf(&sb, "Too many: %zu: must have at most %d item%s", n, max, max == 1 ? "" : "s");
	emit(v, &sb);
}

static void e_duplicate(struct val *v, const char *value)
{
	struct strbuf sb = STRBUF_INIT;

	sb_puts(&sb, "Duplicate value: ");
	model_quote(&sb, value ? value : "", value ? strlen(value) : 0);
	emit(v, &sb);
}

static void e_not_found(struct val *v, const char *value, const char *detail)
{
	struct strbuf sb = STRBUF_INIT;

	sb_puts(&sb, "Not found: ");
	model_quote(&sb, value ? value : "", value ? strlen(value) : 0);
	body_detail(&sb, detail);
	emit(v, &sb);
}

/* supported: NULL-terminated list, printed in the order given. */
static void e_not_supported(struct val *v, const char *value, const char *const *supported)
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
	emit(v, &sb);
}

/* Path helpers: push, run, pop. */
#define P_FIELD(v, name) model_path_field(&(v)->path, (name))
#define P_INDEX(v, i)    model_path_index(&(v)->path, (i))
#define P_KEY(v, k)      model_path_key(&(v)->path, (k))
#define P_POP(v, m)      model_path_pop(&(v)->path, (m))

/* A map key in a path, cut in the middle past max bytes as the API server
 * does (truncateIfTooLong), so that hostile keys keep messages short. */
static size_t p_key_cut(struct val *v, const char *key, size_t max)
{
	size_t len = strlen(key), remaining, head, tail;
	char buf[128];

	if (max < 16)
		max = 16;
	if (len <= max || max >= sizeof(buf))
		return P_KEY(v, key);
	remaining = max - 3;
	head = (remaining + 1) / 2;
	tail = remaining / 2;
	memcpy(buf, key, head);
	memcpy(buf + head, "...", 3);
	memcpy(buf + head + 3, key + len - tail, tail);
	buf[head + 3 + tail] = '\0';
	return P_KEY(v, buf);
}

#define ATTR_KEY_MAX (MAX_DOMAIN_LEN + 1 + MAX_ID_LEN)  /* attributeAndCapacityMaxKeyLength */
#define LABEL_KEY_MAX 63                                 /* DNS1123LabelMaxLength */

static bool str_eq(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

static bool empty(const char *s)
{
	return !s || !s[0];
}

/* ---- Names ---- */

static void names_invalid(struct val *v, const char *value, const struct model_name_msgs *m)
{
	for (int i = 0; i < m->n; i++)
		e_invalid_str(v, value, m->m[i]);
}

static void v_dns_label(struct val *v, const char *s)
{
	struct model_name_msgs m;

	model_check_dns1123_label(s ? s : "", &m);
	names_invalid(v, s ? s : "", &m);
}

static void v_dns_subdomain(struct val *v, const char *s)
{
	struct model_name_msgs m;

	model_check_dns1123_subdomain(s ? s : "", &m);
	names_invalid(v, s ? s : "", &m);
}

/* ValidateLabelName: a qualified name (label keys, taint keys, ...). */
static void v_label_name(struct val *v, const char *s)
{
	struct model_name_msgs m;

	model_check_qualified_name(s ? s : "", &m);
	names_invalid(v, s ? s : "", &m);
}

static void v_label_value(struct val *v, const char *s)
{
	struct model_name_msgs m;

	model_check_label_value(s ? s : "", &m);
	names_invalid(v, s ? s : "", &m);
}

/* ValidateCSIDriverName, which DRA reuses for driver names and domains. */
static void v_driver_name(struct val *v, const char *s)
{
	char lower[512];
	struct model_name_msgs m;
	size_t n = s ? strlen(s) : 0;

	if (n == 0)
		e_required(v, "");
	if (n > MAX_DRIVER_LEN)
		e_too_long(v, MAX_DRIVER_LEN);
	if (n >= sizeof(lower))
		n = sizeof(lower) - 1;
	for (size_t i = 0; i < n; i++)
		lower[i] = (s[i] >= 'A' && s[i] <= 'Z') ? (char)(s[i] - 'A' + 'a') : s[i];
	lower[n] = '\0';
	model_check_dns1123_subdomain(lower, &m);
	names_invalid(v, s ? s : "", &m);
}

static void v_c_identifier(struct val *v, const char *s)
{
	struct model_name_msgs m;

	if (strlen(s) > MAX_ID_LEN)
		e_too_long(v, MAX_ID_LEN);
	model_check_c_identifier(s, &m);
	names_invalid(v, s, &m);
}

/* QualifiedName: a C identifier, or a domain, "/" and a C identifier. */
static void v_qualified_name(struct val *v, const char *name)
{
	const char *slash = strchr(name, '/');
	char domain[256];
	size_t dlen;

	if (!slash) {
		v_c_identifier(v, name);
		return;
	}
	if (strchr(slash + 1, '/')) {
		e_invalid_str(v, name, "a qualified name must be a C identifier, optionally "
			      "prefixed by a domain and one slash");
		return;
	}
	dlen = (size_t)(slash - name);
	if (dlen == 0) {
		e_invalid_str(v, "", "the domain must not be empty");
	} else {
		if (dlen >= sizeof(domain))
			dlen = sizeof(domain) - 1;
		memcpy(domain, name, dlen);
		domain[dlen] = '\0';
		if ((size_t)(slash - name) > dlen)
			e_too_long(v, MAX_DOMAIN_LEN);
		else
			v_driver_name(v, domain);
	}
	if (!slash[1])
		e_invalid_str(v, "", "the name must not be empty");
	else
		v_c_identifier(v, slash + 1);
}

static void v_fully_qualified_name(struct val *v, const char *name)
{
	v_qualified_name(v, name);
	if (!strchr(name, '/'))
		e_invalid_str(v, name, "a fully qualified name must be a domain and a name "
			      "separated by a slash");
}

static void v_pool_name(struct val *v, const char *name)
{
	const char *p;

	if (empty(name)) {
		e_required(v, "");
		return;
	}
	if (strlen(name) > MAX_POOL_NAME_LEN)
		e_too_long(v, MAX_POOL_NAME_LEN);
	p = name;
	for (;;) {
		const char *slash = strchr(p, '/');
		size_t n = slash ? (size_t)(slash - p) : strlen(p);
		char part[300];

		if (n >= sizeof(part))
			n = sizeof(part) - 1;
		memcpy(part, p, n);
		part[n] = '\0';
		v_dns_subdomain(v, part);
		if (!slash)
			break;
		p = slash + 1;
	}
}

/* A UUID in RFC 4122 normalized form (shareID). */
static void v_uid(struct val *v, const char *uid)
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
		e_invalid_str(v, uid, "uid must be in RFC 4122 normalized form, "
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

static bool semver_regex(const char *s, size_t len)
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

static void v_labels(struct val *v, const struct model_kv *kv, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		v_label_name(v, kv[i].key);
		v_label_value(v, kv[i].value);
	}
}

static void v_annotations(struct val *v, const struct model_kv *kv, size_t n)
{
	size_t total = 0;

	for (size_t i = 0; i < n; i++) {
		char lower[512];
		size_t len = strlen(kv[i].key);
		struct model_name_msgs m;

		if (len >= sizeof(lower))
			len = sizeof(lower) - 1;
		for (size_t j = 0; j < len; j++)
			lower[j] = (kv[i].key[j] >= 'A' && kv[i].key[j] <= 'Z') ?
				   (char)(kv[i].key[j] - 'A' + 'a') : kv[i].key[j];
		lower[len] = '\0';
		model_check_qualified_name(lower, &m);
		names_invalid(v, kv[i].key, &m);
		total += strlen(kv[i].key) + strlen(kv[i].value);
	}
	if (total > MAX_ANNOTATIONS_SIZE)
		e_too_long(v, MAX_ANNOTATIONS_SIZE);
}

/* ValidateObjectMeta, with names checked as DNS subdomains (every kind
 * here uses that rule). */
static void v_meta(struct val *v, const struct model_meta *m, bool namespaced)
{
	size_t mk = P_FIELD(v, "metadata");
	size_t f;

	if (empty(m->name) && empty(m->generate_name)) {
		f = P_FIELD(v, "name");
		e_required(v, "name or generateName is required");
		P_POP(v, f);
	} else if (!empty(m->name)) {
		f = P_FIELD(v, "name");
		v_dns_subdomain(v, m->name);
		P_POP(v, f);
	}
	if (namespaced) {
		f = P_FIELD(v, "namespace");
		v_dns_label(v, m->ns);
		P_POP(v, f);
	} else if (m->ns && m->ns[0]) {
		f = P_FIELD(v, "namespace");
		e_forbidden(v, "not allowed on this type");
		P_POP(v, f);
	}
	f = P_FIELD(v, "labels");
	v_labels(v, m->labels, m->n_labels);
	P_POP(v, f);
	f = P_FIELD(v, "annotations");
	v_annotations(v, m->annotations, m->n_annotations);
	P_POP(v, f);
	P_POP(v, mk);
}

/* ---- Node selectors, taints, tolerations ---- */

static void v_string_values(struct val *v, const struct model_requirement *r)
{
	size_t f = P_FIELD(v, "values");

	for (size_t i = 0; i < r->n_values; i++) {
		size_t ix = P_INDEX(v, i);

		v_label_value(v, r->values[i]);
		P_POP(v, ix);
	}
	P_POP(v, f);
}

static void v_node_requirement(struct val *v, const struct model_requirement *r)
{
	size_t f;

	switch (r->op) {
	case MODEL_OP_IN:
	case MODEL_OP_NOT_IN:
		if (r->n_values == 0) {
			f = P_FIELD(v, "values");
			e_required(v, "must be specified when `operator` is 'In' or 'NotIn'");
			P_POP(v, f);
		}
		break;
	case MODEL_OP_EXISTS:
	case MODEL_OP_DOES_NOT_EXIST:
		if (r->n_values > 0) {
			f = P_FIELD(v, "values");
			e_forbidden(v, "may not be specified when `operator` is 'Exists' or "
				    "'DoesNotExist'");
			P_POP(v, f);
		}
		break;
	case MODEL_OP_GT:
	case MODEL_OP_LT:
		if (r->n_values != 1) {
			f = P_FIELD(v, "values");
			e_required(v, "must be specified single value when `operator` is 'Lt' or 'Gt'");
			P_POP(v, f);
		}
		break;
	default:
		f = P_FIELD(v, "operator");
		e_invalid_str(v, r->operator_text, "not a valid selector operator");
		P_POP(v, f);
	}
	f = P_FIELD(v, "key");
	v_label_name(v, r->key);
	P_POP(v, f);
	v_string_values(v, r);
}

static void v_field_requirement(struct val *v, const struct model_requirement *r)
{
	size_t f;

	if (r->op == MODEL_OP_IN || r->op == MODEL_OP_NOT_IN) {
		if (r->n_values != 1) {
			f = P_FIELD(v, "values");
			e_required(v, "must be only one value when `operator` is 'In' or 'NotIn' "
				   "for node field selector");
			P_POP(v, f);
		}
	} else {
		f = P_FIELD(v, "operator");
		e_invalid_str(v, r->operator_text, "not a valid selector operator");
		P_POP(v, f);
	}
	if (!str_eq(r->key, "metadata.name")) {
		f = P_FIELD(v, "key");
		e_invalid_str(v, r->key, "not a valid field selector key");
		P_POP(v, f);
		return;
	}
	f = P_FIELD(v, "values");
	for (size_t i = 0; i < r->n_values; i++) {
		size_t ix = P_INDEX(v, i);

		v_dns_subdomain(v, r->values[i]);
		P_POP(v, ix);
	}
	P_POP(v, f);
}

/* ValidateNodeSelector, at the node selector's own path. */
static void v_node_selector(struct val *v, const struct model_node_selector *ns)
{
	size_t tf = P_FIELD(v, "nodeSelectorTerms");

	if (ns->n_terms == 0) {
		e_required(v, "must have at least one node selector term");
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

static const char *const device_effects[] = { "NoExecute", "NoSchedule", "None", NULL };
static const char *const core_effects[] = { "NoSchedule", "PreferNoSchedule", "NoExecute", NULL };
static const char *const toleration_ops[] = { "Equal", "Exists", NULL };

static bool in_list(const char *s, const char *const *list)
{
	for (size_t i = 0; s && list[i]; i++)
		if (!strcmp(s, list[i]))
			return true;
	return false;
}

/* A taint (device taints with device_effects, core taints with core_effects). */
static void v_taint(struct val *v, const struct model_taint *t, const char *const *effects)
{
	size_t f = P_FIELD(v, "key");

	v_label_name(v, t->key);
	P_POP(v, f);
	if (!empty(t->value)) {
		f = P_FIELD(v, "value");
		v_label_value(v, t->value);
		P_POP(v, f);
	}
	f = P_FIELD(v, "effect");
	if (empty(t->effect))
		e_required(v, "");
	else if (!in_list(t->effect, effects))
		e_not_supported(v, t->effect, effects);
	P_POP(v, f);
}

static void v_taints(struct val *v, const char *field, const struct model_taint *t, size_t n,
		     int max, const char *const *effects)
{
	size_t f = P_FIELD(v, field);

	if (max >= 0 && n > (size_t)max) {
		e_too_many(v, n, max);
	} else {
		for (size_t i = 0; i < n; i++) {
			size_t ix = P_INDEX(v, i);

			v_taint(v, &t[i], effects);
			P_POP(v, ix);
		}
	}
	P_POP(v, f);
}

/* validateDeviceToleration. */
static void v_device_toleration(struct val *v, const struct model_toleration *t)
{
	size_t f;

	if (!empty(t->key)) {
		f = P_FIELD(v, "key");
		v_label_name(v, t->key);
		P_POP(v, f);
	}
	if (str_eq(t->operator_text, "Exists")) {
		if (!empty(t->value)) {
			f = P_FIELD(v, "value");
			e_invalid_str(v, t->value, "must be empty for operator `Exists`");
			P_POP(v, f);
		}
	} else if (str_eq(t->operator_text, "Equal")) {
		f = P_FIELD(v, "value");
		v_label_value(v, t->value ? t->value : "");
		P_POP(v, f);
	} else if (empty(t->operator_text)) {
		f = P_FIELD(v, "operator");
		e_required(v, "");
		P_POP(v, f);
	} else {
		f = P_FIELD(v, "operator");
		e_not_supported(v, t->operator_text, toleration_ops);
		P_POP(v, f);
	}
	if (!empty(t->effect) && !in_list(t->effect, device_effects)) {
		f = P_FIELD(v, "effect");
		e_not_supported(v, t->effect, device_effects);
		P_POP(v, f);
	}
}

/* core ValidateTolerations (pods). */
static void v_core_toleration(struct val *v, const struct model_toleration *t)
{
	size_t f;
	const char *op = t->operator_text;

	if (!empty(t->key)) {
		f = P_FIELD(v, "key");
		v_label_name(v, t->key);
		P_POP(v, f);
	}
	if (empty(t->key) && !str_eq(op, "Exists")) {
		f = P_FIELD(v, "operator");
		e_invalid_str(v, op ? op : "", "operator must be Exists when `key` is empty, which "
			      "means \"match all values and all keys\"");
		P_POP(v, f);
	}
	if (t->has_toleration_seconds && !str_eq(t->effect, "NoExecute")) {
		f = P_FIELD(v, "effect");
		e_invalid_str(v, t->effect ? t->effect : "", "effect must be 'NoExecute' when "
			      "`tolerationSeconds` is set");
		P_POP(v, f);
	}
	if (empty(op) || str_eq(op, "Equal")) {
		f = P_FIELD(v, "value");
		v_label_value(v, t->value ? t->value : "");
		P_POP(v, f);
	} else if (str_eq(op, "Exists")) {
		if (!empty(t->value)) {
			f = P_FIELD(v, "operator");
			e_invalid_str(v, op, "value must be empty when `operator` is 'Exists'");
			P_POP(v, f);
		}
	} else {
		f = P_FIELD(v, "operator");
		e_not_supported(v, op, toleration_ops);
		P_POP(v, f);
	}
	if (!empty(t->effect) && !in_list(t->effect, core_effects)) {
		f = P_FIELD(v, "effect");
		e_not_supported(v, t->effect, core_effects);
		P_POP(v, f);
	}
}

/* ---- Selectors and configuration ---- */

static void v_cel(struct val *v, const struct model_selector *s)
{
	size_t f = P_FIELD(v, "cel");
	size_t e;
	char msg[4096];
	int rc;

	if (!s->expression) {
		e_required(v, "");
		P_POP(v, f);
		return;
	}
	e = P_FIELD(v, "expression");
	if (s->expression_len > MAX_CEL_LEN) {
		e_too_long(v, MAX_CEL_LEN);
	} else if (v->opts && v->opts->check_cel) {
		msg[0] = '\0';
		rc = v->opts->check_cel(s->expression, s->expression_len, msg, sizeof(msg),
					v->opts->cel_ctx);
		if (rc == -E2BIG) {
			e_forbidden(v, msg[0] ? msg : "too complex, exceeds cost limit");
		} else if (rc) {
			struct strbuf sb = STRBUF_INIT;

			sb_puts(&sb, "Invalid value: ");
			model_quote(&sb, s->expression, s->expression_len);
			body_detail(&sb, msg[0] ? msg : "compilation failed");
			emit(v, &sb);
		}
	}
	P_POP(v, e);
	P_POP(v, f);
}

static void v_selectors(struct val *v, const struct model_selector *sel, size_t n)
{
	size_t f = P_FIELD(v, "selectors");

	if (n > MAX_SELECTORS) {
		e_too_many(v, n, MAX_SELECTORS);
	} else {
		for (size_t i = 0; i < n; i++) {
			size_t ix = P_INDEX(v, i);

			v_cel(v, &sel[i]);
			P_POP(v, ix);
		}
	}
	P_POP(v, f);
}

/* Bytes of the compact JSON form of a tree (what the API server measures
 * for raw parameters), counted without building it and capped at limit+1. */
static size_t json_size(const struct doc_node *n, size_t limit, int depth)
{
	size_t total = 0;

	if (depth > DOC_MAX_DEPTH)
		return limit + 1;
	switch (n->kind) {
	case DOC_NULL:
		return 4;
	case DOC_BOOL:
		return n->u.b ? 4 : 5;
	case DOC_INT:
	case DOC_FLOAT:
		return n->text ? n->text_len : 1;
	case DOC_STRING:
		total = 2;
		for (size_t i = 0; n->text && i < n->text_len; i++) {
			unsigned char c = (unsigned char)n->text[i];

			total += c == '"' || c == '\\' ? 2 : c < 0x20 ? 6 : 1;
		}
		return total;
	case DOC_SEQ:
		total = 2;
		for (size_t i = 0; i < n->u.seq.n && total <= limit; i++)
			total += (i ? 1 : 0) + json_size(n->u.seq.items[i], limit, depth + 1);
		return total;
	case DOC_MAP:
		total = 2;
		for (size_t i = 0; i < n->u.map.n && total <= limit; i++)
			total += (i ? 1 : 0) + json_size(n->u.map.pairs[i].key, limit, depth + 1) + 1 +
				 json_size(n->u.map.pairs[i].value, limit, depth + 1);
		return total;
	}
	return total;
}

static void v_opaque(struct val *v, const struct model_device_config *c)
{
	size_t f = P_FIELD(v, "opaque");
	size_t g;

	if (!c->has_opaque) {
		e_required(v, "");
		P_POP(v, f);
		return;
	}
	g = P_FIELD(v, "driver");
	v_driver_name(v, c->driver);
	P_POP(v, g);
	g = P_FIELD(v, "parameters");
	if (!c->parameters || c->parameters->kind == DOC_NULL) {
		e_required(v, "");
	} else {
		if (json_size(c->parameters, MAX_OPAQUE_LEN, 0) > MAX_OPAQUE_LEN)
			e_too_long(v, MAX_OPAQUE_LEN);
		else if (c->parameters->kind != DOC_MAP)
			e_invalid_str(v, "<value omitted>", "must be a valid JSON object");
	}
	P_POP(v, g);
	P_POP(v, f);
}

/* ---- ResourceSlice ---- */

static void v_node_name(struct val *v, const char *name)
{
	v_dns_subdomain(v, name);
}

static void v_counter_map(struct val *v, const struct model_counter_set *cs, int max)
{
	size_t f = P_FIELD(v, "counters");

	if (cs->n_counters == 0) {
		e_required(v, "");
	} else if (cs->n_counters > (size_t)max) {
		e_too_many(v, cs->n_counters, max);
	} else {
		for (size_t i = 0; i < cs->n_counters; i++) {
			size_t k = p_key_cut(v, cs->counters[i].name, LABEL_KEY_MAX);

			v_dns_label(v, cs->counters[i].name);
			P_POP(v, k);
		}
	}
	P_POP(v, f);
}

static void v_counter_sets(struct val *v, const char *field, const char *name_field,
			   const struct model_counter_set *cs, size_t n, int max_sets,
			   int max_counters)
{
	size_t f = P_FIELD(v, field);

	if (n > (size_t)max_sets) {
		e_too_many(v, n, max_sets);
		P_POP(v, f);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		size_t ix = P_INDEX(v, i);
		size_t g = P_FIELD(v, name_field);

		if (empty(cs[i].name))
			e_required(v, "");
		else
			v_dns_label(v, cs[i].name);
		P_POP(v, g);
		v_counter_map(v, &cs[i], max_counters);
		P_POP(v, ix);
	}
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < i; j++)
			if (str_eq(cs[i].name, cs[j].name)) {
				size_t ix = P_INDEX(v, i);

				e_duplicate(v, cs[i].name);
				P_POP(v, ix);
				break;
			}
	P_POP(v, f);
}

static void q_str(const struct quantity *q, char *buf)
{
	quantity_format(q, buf);
}

static void v_range_step(struct val *v, const struct quantity *value, const struct quantity *min,
			 const struct quantity *step)
{
	int64_t s = quantity_value_ceil(step);
	int64_t diff = quantity_value_ceil(value) - quantity_value_ceil(min);
	char vb[QUANTITY_STR_MAX], sb[QUANTITY_STR_MAX], mb[QUANTITY_STR_MAX], msg[256];

	if (s <= 0)
		return;         /* reported once by the caller */
	if (diff % s != 0) {
		q_str(value, vb);
		q_str(step, sb);
		q_str(min, mb);
		snprintf(msg, sizeof(msg), "value is not a multiple of a given step (%s) from (%s)",
			 sb, mb);
		e_invalid_str(v, vb, msg);
	}
}

static void v_valid_range(struct val *v, const struct model_capacity *c)
{
	const struct model_request_policy *p = &c->request_policy;
	char a[QUANTITY_STR_MAX], b[QUANTITY_STR_MAX], msg[256];
	size_t f;

	if (!p->has_min) {
		f = P_FIELD(v, "min");
		e_required(v, "required when validRange is defined");
		P_POP(v, f);
		return;
	}
	f = P_FIELD(v, "min");
	if (quantity_cmp(&p->min, &c->value) > 0) {
		q_str(&p->min, a);
		q_str(&c->value, b);
		snprintf(msg, sizeof(msg), "min is larger than capacity value: %s", b);
		e_invalid_str(v, a, msg);
	}
	if (quantity_cmp(&p->def, &p->min) < 0) {
		q_str(&p->def, a);
		q_str(&p->min, b);
		snprintf(msg, sizeof(msg), "default is less than min: %s", b);
		e_invalid_str(v, a, msg);
	}
	P_POP(v, f);
	if (p->has_max) {
		f = P_FIELD(v, "max");
		if (quantity_cmp(&p->min, &p->max) > 0) {
			q_str(&p->min, a);
			q_str(&p->max, b);
			snprintf(msg, sizeof(msg), "min is larger than max: %s", b);
			e_invalid_str(v, a, msg);
		}
		if (quantity_cmp(&p->max, &c->value) > 0) {
			q_str(&p->max, a);
			q_str(&c->value, b);
			snprintf(msg, sizeof(msg), "max is larger than capacity value: %s", b);
			e_invalid_str(v, a, msg);
		}
		if (quantity_cmp(&p->def, &p->max) > 0) {
			q_str(&p->def, a);
			q_str(&p->max, b);
			snprintf(msg, sizeof(msg), "default is more than max: %s", b);
			e_invalid_str(v, a, msg);
		}
		P_POP(v, f);
	}
	if (p->has_step) {
		struct quantity added;

		f = P_FIELD(v, "step");
		if (quantity_sign(&p->step) <= 0) {
			q_str(&p->step, a);
			e_invalid_str(v, a, "must be greater than zero");
			P_POP(v, f);
			return;
		}
		if (quantity_add(&p->min, &p->step, &added) == 0 &&
		    quantity_cmp(&added, &c->value) > 0) {
			char s[QUANTITY_STR_MAX];

			q_str(&p->step, a);
			q_str(&added, s);
			q_str(&c->value, b);
			snprintf(msg, sizeof(msg), "one step %s is larger than capacity value: %s", s, b);
			e_invalid_str(v, a, msg);
		}
		v_range_step(v, &p->def, &p->min, &p->step);
		if (p->has_max)
			v_range_step(v, &p->max, &p->min, &p->step);
		P_POP(v, f);
	}
}

static void v_valid_values(struct val *v, const struct model_capacity *c)
{
	const struct model_request_policy *p = &c->request_policy;
	char a[QUANTITY_STR_MAX], b[QUANTITY_STR_MAX], msg[256];
	bool found = false;
	size_t f = P_FIELD(v, "validValues");

	for (size_t i = 0; i + 1 < p->n_valid_values; i++)
		if (quantity_cmp(&p->valid_values[i], &p->valid_values[i + 1]) > 0) {
			size_t ix = P_INDEX(v, i + 1);

			q_str(&p->valid_values[i + 1], a);
			e_invalid_str(v, a, "values must be sorted in ascending order");
			P_POP(v, ix);
		}
	if (p->n_valid_values > MAX_VALID_VALUES) {
		e_too_many(v, p->n_valid_values, MAX_VALID_VALUES);
	} else {
		for (size_t i = 0; i < p->n_valid_values; i++) {
			size_t ix = P_INDEX(v, i);

			if (quantity_cmp(&p->valid_values[i], &c->value) > 0) {
				q_str(&p->valid_values[i], a);
				q_str(&c->value, b);
				snprintf(msg, sizeof(msg), "option is larger than capacity value: %s", b);
				e_invalid_str(v, a, msg);
			}
			if (quantity_cmp(&p->valid_values[i], &p->def) == 0)
				found = true;
			P_POP(v, ix);
		}
		/* Duplicates compare by integer value, as the API server keys them. */
		for (size_t i = 0; i < p->n_valid_values; i++)
			for (size_t j = 0; j < i; j++)
				if (quantity_value_ceil(&p->valid_values[i]) ==
				    quantity_value_ceil(&p->valid_values[j])) {
					size_t ix = P_INDEX(v, i);

					snprintf(a, sizeof(a), "%" PRId64,
						 quantity_value_ceil(&p->valid_values[i]));
					e_duplicate(v, a);
					P_POP(v, ix);
					break;
				}
	}
	if (!found) {
		q_str(&p->def, a);
		e_invalid_str(v, a, "default value is not valid according to the requestPolicy");
	}
	P_POP(v, f);
}

static void v_request_policy(struct val *v, const struct model_capacity *c)
{
	const struct model_request_policy *p = &c->request_policy;
	size_t f = P_FIELD(v, "requestPolicy");
	size_t g;

	if (p->n_valid_values > 0 && p->has_valid_range) {
		e_forbidden(v, "exactly one policy can be specified, cannot specify \"validValues\" "
			    "and \"validRange\" at the same time");
	} else if (p->n_valid_values > 0) {
		if (!p->has_default) {
			g = P_FIELD(v, "default");
			e_required(v, "required when validValues is defined");
			P_POP(v, g);
		} else {
			v_valid_values(v, c);
		}
	} else if (p->has_valid_range) {
		if (!p->has_default) {
			g = P_FIELD(v, "default");
			e_required(v, "required when validRange is defined");
			P_POP(v, g);
		} else {
			g = P_FIELD(v, "validRange");
			v_valid_range(v, c);
			P_POP(v, g);
		}
	}
	P_POP(v, f);
}

static void v_attribute(struct val *v, const struct model_attribute *a)
{
	size_t f;

	if (a->type == CEL_ATTR_STRING && a->v.str.s) {
		f = P_FIELD(v, "string");
		if (a->v.str.len > MAX_ATTR_VALUE_LEN)
			e_too_long(v, MAX_ATTR_VALUE_LEN);
		P_POP(v, f);
	} else if (a->type == CEL_ATTR_VERSION && a->v.str.s) {
		f = P_FIELD(v, "version");
		if (!semver_regex(a->v.str.s, a->v.str.len))
			e_invalid_str(v, a->v.str.s, "must be a string compatible with semver.org "
				      "spec 2.0.0");
		if (a->v.str.len > MAX_ATTR_VALUE_LEN)
			e_too_long(v, MAX_ATTR_VALUE_LEN);
		P_POP(v, f);
	}
}

static void v_string_list(struct val *v, const char *field, const char *const *items,
			  size_t n, int max)
{
	size_t f = P_FIELD(v, field);

	if (n > (size_t)max) {
		e_too_many(v, n, max);
	} else {
		for (size_t i = 0; i < n; i++) {
			size_t ix = P_INDEX(v, i);

			v_label_name(v, items[i]);
			P_POP(v, ix);
		}
	}
	P_POP(v, f);
}

static bool list_has(const char *const *items, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (str_eq(items[i], s))
			return true;
	return false;
}

/* validateDeviceBindingParameters, at the device's (or result's) path. */
static void v_binding(struct val *v, const char *const *cond, size_t n_cond,
		      const char *const *fail, size_t n_fail)
{
	size_t f;

	v_string_list(v, "bindingConditions", cond, n_cond, MAX_BINDING_CONDITIONS);
	v_string_list(v, "bindingFailureConditions", fail, n_fail, MAX_BINDING_CONDITIONS);
	if (n_cond > MAX_BINDING_CONDITIONS || n_fail > MAX_BINDING_CONDITIONS)
		return;         /* reported; the pairwise checks would be unbounded */
	f = P_FIELD(v, "bindingConditions");
	for (size_t i = 0; i < n_cond; i++)
		if (list_has(cond, i, cond[i])) {
			size_t ix = P_INDEX(v, i);

			e_duplicate(v, cond[i]);
			P_POP(v, ix);
		}
	P_POP(v, f);
	f = P_FIELD(v, "bindingFailureConditions");
	for (size_t i = 0; i < n_fail; i++) {
		size_t ix = P_INDEX(v, i);

		if (list_has(fail, i, fail[i]))
			e_duplicate(v, fail[i]);
		if (list_has(cond, n_cond, fail[i]))
			e_invalid_str(v, fail[i], "bindingFailureConditions must not overlap with "
				      "bindingConditions");
		P_POP(v, ix);
	}
	P_POP(v, f);
	if (n_cond == 0 && n_fail > 0) {
		f = P_FIELD(v, "bindingConditions");
		e_invalid_raw(v, "[]string(nil)", "bindingConditions are required to use "
			      "bindingFailureConditions");
		P_POP(v, f);
	}
	if (n_fail == 0 && n_cond > 0) {
		f = P_FIELD(v, "bindingFailureConditions");
		e_invalid_raw(v, "[]string(nil)", "bindingFailureConditions are required to use "
			      "bindingConditions");
		P_POP(v, f);
	}
}

static void v_device(struct val *v, const struct model_device *d, bool per_device)
{
	bool multi = d->has_allow_multiple_allocations && d->allow_multiple_allocations;
	size_t f, total = d->n_attributes + d->n_capacity;

	f = P_FIELD(v, "name");
	v_dns_label(v, d->name);
	P_POP(v, f);
	if (total > MAX_ATTRS_AND_CAPS) {
		char msg[96];

		snprintf(msg, sizeof(msg), "the total number of attributes and capacities must "
			 "not exceed %d", MAX_ATTRS_AND_CAPS);
		e_invalid_int(v, (int64_t)total, msg);
	}
	f = P_FIELD(v, "attributes");
	for (size_t i = 0; i < d->n_attributes; i++) {
		size_t k = p_key_cut(v, d->attributes[i].name, ATTR_KEY_MAX);

		v_qualified_name(v, d->attributes[i].name);
		v_attribute(v, &d->attributes[i]);
		P_POP(v, k);
	}
	P_POP(v, f);
	f = P_FIELD(v, "capacity");
	for (size_t i = 0; i < d->n_capacity; i++) {
		const struct model_capacity *c = &d->capacity[i];
		size_t k = p_key_cut(v, c->name, ATTR_KEY_MAX);

		v_qualified_name(v, c->name);
		if (c->has_request_policy) {
			if (multi) {
				v_request_policy(v, c);
			} else {
				size_t g = P_FIELD(v, "requestPolicy");

				e_forbidden(v, "allowMultipleAllocations must be true");
				P_POP(v, g);
			}
		}
		P_POP(v, k);
	}
	P_POP(v, f);
	v_taints(v, "taints", d->taints, d->n_taints, MAX_DEVICE_TAINTS, device_effects);
	v_counter_sets(v, "consumesCounters", "counterSet", d->consumes_counters,
		       d->n_consumes_counters, MAX_CONSUMPTIONS, MAX_COUNTERS_PER_CONS);
	if (per_device) {
		const char *set[3];
		int n_set = 0;

		if (d->node_name) {
			f = P_FIELD(v, "nodeName");
			if (d->node_name[0]) {
				set[n_set++] = "`nodeName`";
				v_node_name(v, d->node_name);
			} else {
				e_invalid_str(v, "", "must not be empty");
			}
			P_POP(v, f);
		}
		if (d->node_selector) {
			set[n_set++] = "`nodeSelector`";
			f = P_FIELD(v, "nodeSelector");
			v_node_selector(v, d->node_selector);
			P_POP(v, f);
		}
		if (d->has_all_nodes) {
			if (d->all_nodes) {
				set[n_set++] = "`allNodes`";
			} else {
				f = P_FIELD(v, "allNodes");
				e_invalid_raw(v, "false", "must be either unset or set to true");
				P_POP(v, f);
			}
		}
		if (n_set == 0) {
			e_required(v, "exactly one of `nodeName`, `nodeSelector`, or `allNodes` is "
				   "required when `perDeviceNodeSelection` is set to true in the "
				   "ResourceSlice spec");
		} else if (n_set > 1) {
			char which[128];

			snprintf(which, sizeof(which), "{%s, %s%s%s}", set[0], set[1],
				 n_set > 2 ? ", " : "", n_set > 2 ? set[2] : "");
			e_invalid_str(v, which, "exactly one of `nodeName`, `nodeSelector`, or "
				      "`allNodes` is required when `perDeviceNodeSelection` is set "
				      "to true in the ResourceSlice spec");
		}
	} else if (d->node_name || d->node_selector || d->has_all_nodes) {
		e_invalid_raw(v, "null", "`nodeName`, `nodeSelector` and `allNodes` can only be "
			      "set if `perDeviceNodeSelection` is set to true in the ResourceSlice "
			      "spec");
	}
	v_binding(v, d->binding_conditions, d->n_binding_conditions,
		  d->binding_failure_conditions, d->n_binding_failure_conditions);
}

static void v_slice(struct val *v, const struct model_resource_slice_spec *s)
{
	size_t sp = P_FIELD(v, "spec");
	size_t f, g;
	const char *set[4];
	int n_set = 0;
	bool advanced = false;
	int max_devices;

	f = P_FIELD(v, "driver");
	v_driver_name(v, s->driver);
	P_POP(v, f);
	f = P_FIELD(v, "pool");
	g = P_FIELD(v, "name");
	v_pool_name(v, s->pool.name);
	P_POP(v, g);
	if (s->pool.resource_slice_count <= 0) {
		g = P_FIELD(v, "resourceSliceCount");
		e_invalid_int(v, s->pool.resource_slice_count, "must be greater than zero");
		P_POP(v, g);
	}
	if (s->pool.generation < 0) {
		g = P_FIELD(v, "generation");
		e_invalid_int(v, s->pool.generation, "must be greater than or equal to zero");
		P_POP(v, g);
	}
	P_POP(v, f);

	if (s->node_name) {
		f = P_FIELD(v, "nodeName");
		if (s->node_name[0]) {
			set[n_set++] = "`nodeName`";
			v_node_name(v, s->node_name);
		} else {
			e_invalid_str(v, "", "must be either unset or set to a non-empty string");
		}
		P_POP(v, f);
	}
	if (s->node_selector) {
		set[n_set++] = "`nodeSelector`";
		f = P_FIELD(v, "nodeSelector");
		v_node_selector(v, s->node_selector);
		if (s->node_selector->n_terms != 1) {
			g = P_FIELD(v, "nodeSelectorTerms");
			e_invalid_raw(v, "[...]", "must have exactly one node selector term");
			P_POP(v, g);
		}
		P_POP(v, f);
	}
	if (s->has_all_nodes) {
		if (s->all_nodes) {
			set[n_set++] = "`allNodes`";
		} else {
			f = P_FIELD(v, "allNodes");
			e_invalid_raw(v, "false", "must be either unset or set to true");
			P_POP(v, f);
		}
	}
	if (s->has_per_device_node_selection) {
		if (s->per_device_node_selection) {
			set[n_set++] = "`perDeviceNodeSelection`";
		} else {
			f = P_FIELD(v, "perDeviceNodeSelection");
			e_invalid_raw(v, "false", "must be either unset or set to true");
			P_POP(v, f);
		}
	}
	if (n_set == 0) {
		e_required(v, "exactly one of `nodeName`, `nodeSelector`, `allNodes`, "
			   "`perDeviceNodeSelection` is required");
	} else if (n_set > 1) {
		struct strbuf which = STRBUF_INIT;

		sb_putc(&which, '{');
		for (int i = 0; i < n_set; i++) {
			if (i)
				sb_puts(&which, ", ");
			sb_puts(&which, set[i]);
		}
		sb_putc(&which, '}');
		e_invalid_str(v, sb_str(&which), "exactly one of `nodeName`, `nodeSelector`, "
			      "`allNodes`, `perDeviceNodeSelection` is required, but multiple "
			      "fields are set");
		sb_free(&which);
	}
	if (s->n_shared_counters && s->n_devices)
		e_invalid_str(v, "", "only one of `sharedCounters` or `devices` is allowed");

	for (size_t i = 0; i < s->n_devices; i++)
		advanced |= s->devices[i].n_taints || s->devices[i].n_consumes_counters;
	max_devices = advanced ? MAX_DEVICES_ADVANCED : MAX_DEVICES;
	f = P_FIELD(v, "devices");
	if (s->n_devices > (size_t)max_devices) {
		e_too_many(v, s->n_devices, max_devices);
	} else {
		bool per_device = s->has_per_device_node_selection && s->per_device_node_selection;

		for (size_t i = 0; i < s->n_devices; i++) {
			size_t ix = P_INDEX(v, i);

			v_device(v, &s->devices[i], per_device);
			P_POP(v, ix);
		}
		for (size_t i = 0; i < s->n_devices; i++)
			for (size_t j = 0; j < i; j++)
				if (str_eq(s->devices[i].name, s->devices[j].name)) {
					size_t ix = P_INDEX(v, i);

					e_duplicate(v, s->devices[i].name);
					P_POP(v, ix);
					break;
				}
	}
	P_POP(v, f);
	v_counter_sets(v, "sharedCounters", "name", s->shared_counters, s->n_shared_counters,
		       MAX_COUNTER_SETS, MAX_COUNTERS_PER_SET);
	P_POP(v, sp);
}

/* ---- DeviceClass ---- */

static bool is_extended_resource_name(const char *name)
{
	char prefixed[512];
	struct model_name_msgs m;

	if (!strchr(name, '/') || strstr(name, "kubernetes.io/") || !strncmp(name, "requests.", 9))
		return false;
	snprintf(prefixed, sizeof(prefixed), "requests.%s", name);
	return model_check_qualified_name(prefixed, &m) == 0;
}

static void v_class_configs(struct val *v, const struct model_device_config *c, size_t n)
{
	size_t f = P_FIELD(v, "config");

	if (n > MAX_CONFIG) {
		e_too_many(v, n, MAX_CONFIG);
	} else {
		for (size_t i = 0; i < n; i++) {
			size_t ix = P_INDEX(v, i);

			v_opaque(v, &c[i]);
			P_POP(v, ix);
		}
	}
	P_POP(v, f);
}

static void v_device_class(struct val *v, const struct model_device_class_spec *c)
{
	size_t sp = P_FIELD(v, "spec");

	v_selectors(v, c->selectors, c->n_selectors);
	v_class_configs(v, c->config, c->n_config);
	if (c->extended_resource_name && !is_extended_resource_name(c->extended_resource_name)) {
		size_t f = P_FIELD(v, "extendedResourceName");

		e_invalid_str(v, c->extended_resource_name, "must be a valid extended resource name");
		P_POP(v, f);
	}
	P_POP(v, sp);
}

/* ---- ResourceClaim ---- */

/* Whether "req" or "req/sub" names a request of the claim. */
static bool claim_has_request(const struct model_claim_spec *c, const char *ref)
{
	const char *slash = strchr(ref, '/');
	size_t n = slash ? (size_t)(slash - ref) : strlen(ref);

	if (slash && strchr(slash + 1, '/'))
		return false;
	for (size_t i = 0; i < c->n_requests; i++) {
		const struct model_device_request *r = &c->requests[i];

		if (!r->name || strlen(r->name) != n || strncmp(r->name, ref, n))
			continue;
		if (!slash)
			return true;
		for (size_t j = 0; j < r->n_first_available; j++)
			if (str_eq(r->first_available[j].name, slash + 1))
				return true;
		return false;
	}
	return false;
}

#define REQUEST_REF_MSG "must be the name of a request in the claim or the name of a " \
			"request and a subrequest separated by '/'"

static void v_request_ref(struct val *v, const struct model_claim_spec *c, const char *ref)
{
	const char *p = ref;
	int slashes = 0;

	for (const char *q = ref; *q; q++)
		slashes += *q == '/';
	if (slashes > 1) {
		e_invalid_str(v, ref, REQUEST_REF_MSG);
		return;
	}
	for (;;) {
		const char *slash = strchr(p, '/');
		char seg[300];
		size_t n = slash ? (size_t)(slash - p) : strlen(p);

		if (n >= sizeof(seg))
			n = sizeof(seg) - 1;
		memcpy(seg, p, n);
		seg[n] = '\0';
		v_dns_label(v, seg);
		if (!slash)
			break;
		p = slash + 1;
	}
	if (!claim_has_request(c, ref))
		e_invalid_str(v, ref, REQUEST_REF_MSG);
}

static void v_request_refs(struct val *v, const struct model_claim_spec *c,
			   const char *const *refs, size_t n)
{
	size_t f = P_FIELD(v, "requests");

	if (n > MAX_REQUESTS) {
		e_too_many(v, n, MAX_REQUESTS);
	} else {
		for (size_t i = 0; i < n; i++) {
			size_t ix = P_INDEX(v, i);

			v_request_ref(v, c, refs[i]);
			P_POP(v, ix);
		}
		for (size_t i = 0; i < n; i++)
			if (list_has(refs, i, refs[i])) {
				size_t ix = P_INDEX(v, i);

				e_duplicate(v, refs[i]);
				P_POP(v, ix);
			}
	}
	P_POP(v, f);
}

static const char *const allocation_modes[] = { "All", "ExactCount", NULL };

static void v_exact(struct val *v, const struct model_exact_request *r, bool sub)
{
	size_t f = P_FIELD(v, "deviceClassName");

	if (empty(r->device_class_name))
		e_required(v, "");
	else
		v_dns_subdomain(v, r->device_class_name);
	P_POP(v, f);
	v_selectors(v, r->selectors, r->n_selectors);
	switch (r->allocation_mode) {
	case MODEL_ALLOC_ALL:
		if (r->has_count && r->count != 0) {
			f = P_FIELD(v, "count");
			e_invalid_int(v, r->count, "must not be specified when allocationMode is 'All'");
			P_POP(v, f);
		}
		break;
	case MODEL_ALLOC_EXACT_COUNT:
		if (r->count <= 0) {
			f = P_FIELD(v, "count");
			e_invalid_int(v, r->count, "must be greater than zero");
			P_POP(v, f);
		}
		break;
	default:
		f = P_FIELD(v, "allocationMode");
		e_not_supported(v, r->allocation_mode_text, allocation_modes);
		P_POP(v, f);
	}
	if (sub && r->has_admin_access) {
		f = P_FIELD(v, "adminAccess");
		e_forbidden(v, "only allowed in `exactly` requests, not in subrequests");
		P_POP(v, f);
	}
	f = P_FIELD(v, "tolerations");
	if (r->n_tolerations > MAX_TOLERATIONS) {
		e_too_many(v, r->n_tolerations, MAX_TOLERATIONS);
	} else {
		for (size_t i = 0; i < r->n_tolerations; i++) {
			size_t ix = P_INDEX(v, i);

			v_device_toleration(v, &r->tolerations[i]);
			P_POP(v, ix);
		}
	}
	P_POP(v, f);
	if (r->capacity_requests.n_items) {
		f = P_FIELD(v, "capacity");
		size_t g = P_FIELD(v, "requests");

		for (size_t i = 0; i < r->capacity_requests.n_items; i++) {
			size_t k = P_KEY(v, r->capacity_requests.items[i].name);

			v_qualified_name(v, r->capacity_requests.items[i].name);
			P_POP(v, k);
		}
		P_POP(v, g);
		P_POP(v, f);
	}
}

static void v_request(struct val *v, const struct model_device_request *r)
{
	size_t f = P_FIELD(v, "name");
	bool has_exactly = r->exactly != NULL;
	bool has_first = r->n_first_available > 0;

	v_dns_label(v, r->name);
	P_POP(v, f);
	if (!has_exactly && !has_first) {
		e_required(v, "exactly one of `exactly` or `firstAvailable` is required");
	} else if (has_exactly && has_first) {
		e_invalid_raw(v, "null", "exactly one of `exactly` or `firstAvailable` is required, "
			      "but multiple fields are set");
	} else if (has_first) {
		f = P_FIELD(v, "firstAvailable");
		if (r->n_first_available > MAX_SUBREQUESTS) {
			e_too_many(v, r->n_first_available, MAX_SUBREQUESTS);
		} else {
			for (size_t i = 0; i < r->n_first_available; i++) {
				size_t ix = P_INDEX(v, i);
				size_t g = P_FIELD(v, "name");

				v_dns_label(v, r->first_available[i].name);
				P_POP(v, g);
				v_exact(v, &r->first_available[i].req, true);
				P_POP(v, ix);
			}
			for (size_t i = 0; i < r->n_first_available; i++)
				for (size_t j = 0; j < i; j++)
					if (str_eq(r->first_available[i].name,
						   r->first_available[j].name)) {
						size_t ix = P_INDEX(v, i);

						e_duplicate(v, r->first_available[i].name);
						P_POP(v, ix);
						break;
					}
		}
		P_POP(v, f);
	} else {
		f = P_FIELD(v, "exactly");
		v_exact(v, r->exactly, false);
		P_POP(v, f);
	}
}

static void v_claim_spec(struct val *v, const struct model_claim_spec *c)
{
	size_t dv = P_FIELD(v, "devices");
	size_t f = P_FIELD(v, "requests");

	if (c->n_requests > MAX_REQUESTS) {
		e_too_many(v, c->n_requests, MAX_REQUESTS);
	} else {
		for (size_t i = 0; i < c->n_requests; i++) {
			size_t ix = P_INDEX(v, i);

			v_request(v, &c->requests[i]);
			P_POP(v, ix);
		}
		for (size_t i = 0; i < c->n_requests; i++)
			for (size_t j = 0; j < i; j++)
				if (str_eq(c->requests[i].name, c->requests[j].name)) {
					size_t ix = P_INDEX(v, i);

					e_duplicate(v, c->requests[i].name);
					P_POP(v, ix);
					break;
				}
	}
	P_POP(v, f);

	f = P_FIELD(v, "constraints");
	if (c->n_constraints > MAX_CONSTRAINTS) {
		e_too_many(v, c->n_constraints, MAX_CONSTRAINTS);
	} else {
		for (size_t i = 0; i < c->n_constraints; i++) {
			const struct model_constraint *k = &c->constraints[i];
			size_t ix = P_INDEX(v, i);
			size_t g;

			v_request_refs(v, c, k->requests, k->n_requests);
			if (k->match_attribute && k->distinct_attribute) {
				e_invalid_raw(v, "null", "exactly one of \"matchAttribute\" or "
					      "\"distinctAttribute\" is required, but multiple "
					      "fields are set");
			} else if (k->match_attribute) {
				g = P_FIELD(v, "matchAttribute");
				v_fully_qualified_name(v, k->match_attribute);
				P_POP(v, g);
			} else if (k->distinct_attribute) {
				g = P_FIELD(v, "distinctAttribute");
				v_fully_qualified_name(v, k->distinct_attribute);
				P_POP(v, g);
			} else {
				e_required(v, "exactly one of \"matchAttribute\" or "
					   "\"distinctAttribute\" is required");
			}
			P_POP(v, ix);
		}
	}
	P_POP(v, f);

	f = P_FIELD(v, "config");
	if (c->n_config > MAX_CONFIG) {
		e_too_many(v, c->n_config, MAX_CONFIG);
	} else {
		for (size_t i = 0; i < c->n_config; i++) {
			size_t ix = P_INDEX(v, i);

			v_request_refs(v, c, c->config[i].requests, c->config[i].n_requests);
			v_opaque(v, &c->config[i]);
			P_POP(v, ix);
		}
	}
	P_POP(v, f);
	P_POP(v, dv);
}

static const char *const config_sources[] = { "FromClaim", "FromClass", NULL };

static void v_allocation(struct val *v, const struct model_claim_spec *c,
			 const struct model_allocation *a)
{
	size_t al = P_FIELD(v, "allocation");
	size_t dv = P_FIELD(v, "devices");
	size_t f = P_FIELD(v, "results");

	if (a->n_results > MAX_RESULTS) {
		e_too_many(v, a->n_results, MAX_RESULTS);
	} else {
		for (size_t i = 0; i < a->n_results; i++) {
			const struct model_allocation_result *r = &a->results[i];
			size_t ix = P_INDEX(v, i);
			size_t g;

			g = P_FIELD(v, "request");
			v_request_ref(v, c, r->request ? r->request : "");
			P_POP(v, g);
			g = P_FIELD(v, "driver");
			v_driver_name(v, r->driver);
			P_POP(v, g);
			g = P_FIELD(v, "pool");
			v_pool_name(v, r->pool);
			P_POP(v, g);
			g = P_FIELD(v, "device");
			v_dns_label(v, r->device);
			P_POP(v, g);
			v_binding(v, r->binding_conditions, r->n_binding_conditions,
				  r->binding_failure_conditions, r->n_binding_failure_conditions);
			if (r->share_id) {
				g = P_FIELD(v, "shareID");
				v_uid(v, r->share_id);
				P_POP(v, g);
			}
			P_POP(v, ix);
		}
	}
	P_POP(v, f);
	f = P_FIELD(v, "config");
	if (a->n_config > 2 * MAX_CONFIG) {
		e_too_many(v, a->n_config, 2 * MAX_CONFIG);
	} else {
		for (size_t i = 0; i < a->n_config; i++) {
			const struct model_device_config *k = &a->config[i];
			size_t ix = P_INDEX(v, i);
			size_t g = P_FIELD(v, "source");

			if (empty(k->source))
				e_required(v, "");
			else if (!in_list(k->source, config_sources))
				e_not_supported(v, k->source, config_sources);
			P_POP(v, g);
			v_request_refs(v, c, k->requests, k->n_requests);
			v_opaque(v, k);
			P_POP(v, ix);
		}
	}
	P_POP(v, f);
	P_POP(v, dv);
	if (a->node_selector) {
		f = P_FIELD(v, "nodeSelector");
		v_node_selector(v, a->node_selector);
		P_POP(v, f);
	}
	P_POP(v, al);
}

static void v_claim(struct val *v, const struct model_resource_claim *c)
{
	size_t f = P_FIELD(v, "spec");
	size_t st, g;

	v_claim_spec(v, &c->spec);
	P_POP(v, f);
	st = P_FIELD(v, "status");
	if (c->status.allocation)
		v_allocation(v, &c->spec, c->status.allocation);
	g = P_FIELD(v, "reservedFor");
	if (c->status.n_reserved_for > MAX_RESERVED_FOR) {
		e_too_many(v, c->status.n_reserved_for, MAX_RESERVED_FOR);
	} else {
		for (size_t i = 0; i < c->status.n_reserved_for; i++) {
			const struct model_consumer_ref *r = &c->status.reserved_for[i];
			size_t ix = P_INDEX(v, i);
			size_t h;

			if (empty(r->resource)) {
				h = P_FIELD(v, "resource");
				e_required(v, "");
				P_POP(v, h);
			}
			if (empty(r->name)) {
				h = P_FIELD(v, "name");
				e_required(v, "");
				P_POP(v, h);
			}
			if (empty(r->uid)) {
				h = P_FIELD(v, "uid");
				e_required(v, "");
				P_POP(v, h);
			}
			for (size_t j = 0; j < i; j++)
				if (str_eq(r->uid, c->status.reserved_for[j].uid)) {
					e_duplicate(v, r->uid);
					break;
				}
			P_POP(v, ix);
		}
		if (c->status.n_reserved_for && !c->status.allocation)
			e_forbidden(v, "may not be specified when `allocated` is not set");
	}
	P_POP(v, g);
	P_POP(v, st);
}

static void v_claim_template(struct val *v, const struct model_resource_claim_template *t)
{
	size_t sp = P_FIELD(v, "spec");
	size_t md = P_FIELD(v, "metadata");
	size_t f = P_FIELD(v, "labels");

	v_labels(v, t->claim_meta.labels, t->claim_meta.n_labels);
	P_POP(v, f);
	f = P_FIELD(v, "annotations");
	v_annotations(v, t->claim_meta.annotations, t->claim_meta.n_annotations);
	P_POP(v, f);
	P_POP(v, md);
	f = P_FIELD(v, "spec");
	v_claim_spec(v, &t->spec);
	P_POP(v, f);
	P_POP(v, sp);
}

/* ---- Pods and workloads ---- */

/* Index a list of structs by their name member. */
#define NAME_INDEX(v, ix, arr, n, member)                                             \
	(model_name_index_build((ix), (arr), (n), sizeof(*(arr)),                     \
				offsetof(__typeof__(*(arr)), member)) ? ((v)->oom = true) : 0)

static bool is_native_resource(const char *name)
{
	return !strchr(name, '/') || strstr(name, "kubernetes.io/");
}

static void v_resource_list(struct val *v, const char *field, const struct model_resource_list *l)
{
	size_t f = P_FIELD(v, field);

	for (size_t i = 0; i < l->n_items; i++) {
		const struct model_quantity_entry *e = &l->items[i];
		size_t k = P_KEY(v, e->name);
		char q[QUANTITY_STR_MAX];

		if (quantity_sign(&e->value) < 0) {
			q_str(&e->value, q);
			e_invalid_str(v, q, "must be greater than or equal to 0");
		} else if (!is_native_resource(e->name) && !quantity_is_integer(&e->value)) {
			q_str(&e->value, q);
			e_invalid_str(v, q, "must be an integer");
		}
		P_POP(v, k);
	}
	P_POP(v, f);
}

/* requests <= limits; extended resources need requests == limits. */
static void v_requests_vs_limits(struct val *v, const struct model_container *c)
{
	struct model_name_index limits;
	size_t f;

	if (!c->requests.n_items || !c->limits.n_items ||
	    NAME_INDEX(v, &limits, c->limits.items, c->limits.n_items, name))
		return;
	f = P_FIELD(v, "requests");
	for (size_t i = 0; i < c->requests.n_items; i++) {
		const struct model_quantity_entry *req = &c->requests.items[i];
		size_t li = model_name_index_find(&limits, req->name);
		const struct model_quantity_entry *lim;
		char a[QUANTITY_STR_MAX], b[QUANTITY_STR_MAX], msg[512];
		size_t k;

		if (li == SIZE_MAX)
			continue;
		lim = &c->limits.items[li];
		k = P_KEY(v, req->name);
		q_str(&req->value, a);
		q_str(&lim->value, b);
		if (!is_native_resource(req->name) && quantity_cmp(&req->value, &lim->value)) {
			snprintf(msg, sizeof(msg), "must be equal to %s limit of %s", req->name, b);
			e_invalid_str(v, a, msg);
		} else if (quantity_cmp(&req->value, &lim->value) > 0) {
			snprintf(msg, sizeof(msg), "must be less than or equal to %s limit of %s",
				 req->name, b);
			e_invalid_str(v, a, msg);
		}
		P_POP(v, k);
	}
	P_POP(v, f);
	model_name_index_free(&limits);
}

/* resources.claims: names of the pod's claims, each (name, request) once. */
static void v_container_claims(struct val *v, const struct model_container *c,
			       const struct model_name_index *pod_claims)
{
	struct model_name_index seen;
	const char **keys;
	struct strbuf kb = STRBUF_INIT;
	size_t f;

	if (!c->n_claims)
		return;
	keys = calloc(c->n_claims, sizeof(*keys));
	if (!keys) {
		v->oom = true;
		return;
	}
	/* Key "name\x1frequest": one claim may be referenced once per request. */
	for (size_t i = 0; i < c->n_claims; i++)
		sb_printf(&kb, "%s\x1f%s%c", c->claims[i].name ? c->claims[i].name : "",
			  c->claims[i].request ? c->claims[i].request : "", '\0');
	if (sb_error(&kb)) {
		v->oom = true;
		goto out;
	}
	for (size_t i = 0, off = 0; i < c->n_claims; i++) {
		keys[i] = kb.buf + off;
		off += strlen(keys[i]) + 1;
	}
	if (model_name_index_build(&seen, keys, c->n_claims, sizeof(*keys), 0)) {
		v->oom = true;
		goto out;
	}
	f = P_FIELD(v, "claims");
	for (size_t i = 0; i < c->n_claims; i++) {
		const char *name = c->claims[i].name;
		size_t ix = P_INDEX(v, i);

		if (empty(name))
			e_required(v, "");
		else if (model_name_index_find(pod_claims, name) == SIZE_MAX)
			e_not_found(v, name, "must be one of the names in pod.spec.resourceClaims");
		else if (model_name_index_find(&seen, keys[i]) != i)
			e_duplicate(v, name);
		P_POP(v, ix);
	}
	P_POP(v, f);
	model_name_index_free(&seen);
out:
	sb_free(&kb);
	free(keys);
}

static void v_container(struct val *v, const struct model_container *c,
			const struct model_name_index *pod_claims)
{
	size_t f = P_FIELD(v, "name");
	size_t r;

	if (empty(c->name))
		e_required(v, "");
	else
		v_dns_label(v, c->name);
	P_POP(v, f);
	if (empty(c->image)) {
		f = P_FIELD(v, "image");
		e_required(v, "");
		P_POP(v, f);
	}
	r = P_FIELD(v, "resources");
	v_resource_list(v, "limits", &c->limits);
	v_resource_list(v, "requests", &c->requests);
	v_requests_vs_limits(v, c);
	v_container_claims(v, c, pod_claims);
	P_POP(v, r);
}

static void v_pod_spec(struct val *v, const struct model_pod_spec *p)
{
	struct model_name_index claims;
	size_t f;

	if (NAME_INDEX(v, &claims, p->resource_claims, p->n_resource_claims, name))
		return;
	f = P_FIELD(v, "containers");
	if (p->n_containers == 0)
		e_required(v, "");
	for (size_t i = 0; i < p->n_containers; i++) {
		size_t ix = P_INDEX(v, i);

		v_container(v, &p->containers[i], &claims);
		P_POP(v, ix);
	}
	P_POP(v, f);
	f = P_FIELD(v, "initContainers");
	for (size_t i = 0; i < p->n_init_containers; i++) {
		size_t ix = P_INDEX(v, i);

		v_container(v, &p->init_containers[i], &claims);
		P_POP(v, ix);
	}
	P_POP(v, f);
	f = P_FIELD(v, "nodeSelector");
	v_labels(v, p->node_selector, p->n_node_selector);
	P_POP(v, f);
	if (p->required_node_affinity) {
		f = P_FIELD(v, "affinity");
		size_t g = P_FIELD(v, "nodeAffinity");
		size_t h = P_FIELD(v, "requiredDuringSchedulingIgnoredDuringExecution");

		v_node_selector(v, p->required_node_affinity);
		P_POP(v, h);
		P_POP(v, g);
		P_POP(v, f);
	}
	f = P_FIELD(v, "tolerations");
	for (size_t i = 0; i < p->n_tolerations; i++) {
		size_t ix = P_INDEX(v, i);

		v_core_toleration(v, &p->tolerations[i]);
		P_POP(v, ix);
	}
	P_POP(v, f);
	f = P_FIELD(v, "resourceClaims");
	for (size_t i = 0; i < p->n_resource_claims; i++) {
		const struct model_pod_claim *c = &p->resource_claims[i];
		size_t ix = P_INDEX(v, i);
		size_t g = P_FIELD(v, "name");

		v_dns_label(v, c->name);
		P_POP(v, g);
		if (c->name && model_name_index_find(&claims, c->name) != i)
			e_duplicate(v, c->name);
		if (!empty(c->resource_claim_name) && !empty(c->resource_claim_template_name))
			e_invalid_raw(v, "{...}", "at most one of `resourceClaimName` or "
				      "`resourceClaimTemplateName` may be specified");
		else if (empty(c->resource_claim_name) && empty(c->resource_claim_template_name))
			e_required(v, "must specify one of: `resourceClaimName`, "
				   "`resourceClaimTemplateName`");
		else if (!empty(c->resource_claim_name)) {
			g = P_FIELD(v, "resourceClaimName");
			v_dns_subdomain(v, c->resource_claim_name);
			P_POP(v, g);
		} else {
			g = P_FIELD(v, "resourceClaimTemplateName");
			v_dns_subdomain(v, c->resource_claim_template_name);
			P_POP(v, g);
		}
		P_POP(v, ix);
	}
	P_POP(v, f);
	v_resource_list(v, "overhead", &p->overhead);
	if (p->node_name && p->node_name[0]) {
		f = P_FIELD(v, "nodeName");
		v_dns_subdomain(v, p->node_name);
		P_POP(v, f);
	}
	model_name_index_free(&claims);
}

static void v_nonneg(struct val *v, const char *field, bool has, int64_t value)
{
	if (has && value < 0) {
		size_t f = P_FIELD(v, field);

		e_invalid_int(v, value, "must be greater than or equal to 0");
		P_POP(v, f);
	}
}

static bool selector_matches_labels(struct val *v, const struct model_label_selector *s,
				    const struct model_kv *labels, size_t n)
{
	struct model_name_index ix;
	bool match = true;

	if (NAME_INDEX(v, &ix, labels, n, key))
		return true;    /* out of memory: reported, nothing more to say */
	for (size_t i = 0; i < s->n_match_labels && match; i++) {
		size_t j = model_name_index_find(&ix, s->match_labels[i].key);

		match = j != SIZE_MAX && str_eq(labels[j].value, s->match_labels[i].value);
	}
	model_name_index_free(&ix);
	return match;
}

static void v_workload(struct val *v, const struct model_workload *w)
{
	size_t sp = P_FIELD(v, "spec");
	size_t f;

	if (v->o->kind == MODEL_JOB) {
		v_nonneg(v, "parallelism", w->has_parallelism, w->parallelism);
		v_nonneg(v, "completions", w->has_completions, w->completions);
	} else {
		v_nonneg(v, "replicas", w->has_replicas, w->replicas);
		if (!w->selector) {
			f = P_FIELD(v, "selector");
			e_required(v, "");
			P_POP(v, f);
		} else if (w->selector->n_match_labels + w->selector->n_match_expressions == 0) {
			f = P_FIELD(v, "selector");
			e_invalid_str(v, "", "empty selector is invalid for deployment");
			P_POP(v, f);
		} else if (!selector_matches_labels(v, w->selector, w->template_.meta.labels,
						    w->template_.meta.n_labels)) {
			f = P_FIELD(v, "template");
			size_t g = P_FIELD(v, "metadata");
			size_t h = P_FIELD(v, "labels");

			e_invalid_raw(v, "map[string]string{...}", "`selector` does not match "
				      "template `labels`");
			P_POP(v, h);
			P_POP(v, g);
			P_POP(v, f);
		}
	}
	f = P_FIELD(v, "template");
	size_t g = P_FIELD(v, "metadata");
	size_t h = P_FIELD(v, "labels");

	v_labels(v, w->template_.meta.labels, w->template_.meta.n_labels);
	P_POP(v, h);
	P_POP(v, g);
	g = P_FIELD(v, "spec");
	v_pod_spec(v, &w->template_.spec);
	P_POP(v, g);
	P_POP(v, f);
	P_POP(v, sp);
}

static void v_node(struct val *v, const struct model_node *n)
{
	size_t sp = P_FIELD(v, "spec");

	v_taints(v, "taints", n->taints, n->n_taints, -1, core_effects);
	P_POP(v, sp);
}

/* ---- Karpenter (the CRDs' schema and CEL rules) ---- */

static const char *const requirement_ops[] = {
	"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", NULL
};

/* Gt and Lt compare a label with a number: the CRD's rule is
 * `values.size() == 1 && int(values[0]) >= 0`, CEL's int() of a string
 * being Go's strconv.ParseInt (an optional sign, decimal digits, 64 bits). */
static bool is_nonnegative_int(const char *s)
{
	size_t digits;

	if (*s == '+')
		s++;
	else if (*s == '-')
		return !strcmp(s, "-0") || (s[1] && strspn(s + 1, "0") == strlen(s + 1));
	digits = strspn(s, "0123456789");
	if (!digits || s[digits])
		return false;
	while (*s == '0' && s[1])
		s++;
	/* 9223372036854775807 has 19 digits. */
	digits = strlen(s);
	return digits < 19 || (digits == 19 && strcmp(s, "9223372036854775807") <= 0);
}

/* The values a requirement's operator takes: the Karpenter CRD's rules
 * (In needs values, Gt/Lt one non-negative integer, its messages) and the
 * core NodeSelectorRequirement rules Karpenter's scheduling relies on
 * (NotIn needs values, Exists/DoesNotExist take none). */
static void v_karpenter_values(struct val *v, const struct model_requirement *r)
{
	size_t g = P_FIELD(v, "values");

	switch (r->op) {
	case MODEL_OP_IN:
	case MODEL_OP_NOT_IN:
		if (r->n_values == 0)
			e_required(v, r->op == MODEL_OP_IN ?
				   "requirements with operator 'In' must have a value defined" :
				   "requirements with operator 'NotIn' must have a value defined");
		break;
	case MODEL_OP_EXISTS:
	case MODEL_OP_DOES_NOT_EXIST:
		if (r->n_values > 0)
			e_forbidden(v, "may not be specified when `operator` is 'Exists' or "
				    "'DoesNotExist'");
		break;
	case MODEL_OP_GT:
	case MODEL_OP_LT:
		if (r->n_values != 1) {
			e_required(v, "must be specified single value when `operator` is 'Lt' or 'Gt'");
		} else if (!is_nonnegative_int(r->values[0])) {
			size_t ix = P_INDEX(v, 0);

			e_invalid_str(v, r->values[0], "requirements operator 'Gt' or 'Lt' must have "
				      "a single positive integer value");
			P_POP(v, ix);
		}
		break;
	default:
		break;
	}
	P_POP(v, g);
}

static void v_karpenter_requirements(struct val *v, const struct model_requirement *r, size_t n)
{
	size_t f = P_FIELD(v, "requirements");

	if (n > 100) {
		e_too_many(v, n, 100);
		P_POP(v, f);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		size_t ix = P_INDEX(v, i);
		size_t g;

		g = P_FIELD(v, "key");
		if (empty(r[i].key))
			e_required(v, "");
		else
			v_label_name(v, r[i].key);
		P_POP(v, g);
		g = P_FIELD(v, "operator");
		if (empty(r[i].operator_text))
			e_required(v, "");
		else if (r[i].op == MODEL_OP_INVALID)
			e_not_supported(v, r[i].operator_text, requirement_ops);
		P_POP(v, g);
		v_karpenter_values(v, &r[i]);
		if (r[i].has_min_values) {
			g = P_FIELD(v, "minValues");
			if (r[i].min_values < 1)
				e_invalid_int(v, r[i].min_values, "should be greater than or equal to 1");
			else if (r[i].min_values > 50)
				e_invalid_int(v, r[i].min_values, "should be less than or equal to 50");
			else if (r[i].op == MODEL_OP_IN && (size_t)r[i].min_values > r[i].n_values)
				e_invalid_int(v, r[i].min_values, "requirements with 'minValues' must "
					      "have at least that many values specified in the "
					      "'values' field");
			P_POP(v, g);
		}
		P_POP(v, ix);
	}
	P_POP(v, f);
}

static void v_node_class_ref(struct val *v, const struct model_node_class_ref *r)
{
	size_t f = P_FIELD(v, "nodeClassRef");
	static const char *const fields[] = { "group", "kind", "name" };
	const char *values[] = { r->group, r->kind, r->name };

	if (!r->group && !r->kind && !r->name) {
		e_required(v, "");
		P_POP(v, f);
		return;
	}
	for (int i = 0; i < 3; i++)
		if (empty(values[i])) {
			size_t g = P_FIELD(v, fields[i]);

			e_required(v, "");
			P_POP(v, g);
		}
	P_POP(v, f);
}

static void v_node_pool(struct val *v, const struct model_node_pool *p)
{
	size_t sp = P_FIELD(v, "spec");
	size_t t = P_FIELD(v, "template");
	size_t f = P_FIELD(v, "metadata");
	size_t g = P_FIELD(v, "labels");

	v_labels(v, p->template_labels, p->n_template_labels);
	P_POP(v, g);
	P_POP(v, f);
	f = P_FIELD(v, "spec");
	v_node_class_ref(v, &p->node_class_ref);
	v_karpenter_requirements(v, p->requirements, p->n_requirements);
	v_taints(v, "taints", p->taints, p->n_taints, -1, core_effects);
	v_taints(v, "startupTaints", p->startup_taints, p->n_startup_taints, -1, core_effects);
	P_POP(v, f);
	P_POP(v, t);
	v_resource_list(v, "limits", &p->limits);
	if (p->has_weight && (p->weight < 1 || p->weight > 100)) {
		f = P_FIELD(v, "weight");
		e_invalid_int(v, p->weight, p->weight < 1 ? "should be greater than or equal to 1" :
			      "should be less than or equal to 100");
		P_POP(v, f);
	}
	P_POP(v, sp);
}

static void v_node_claim(struct val *v, const struct model_node_claim *c)
{
	size_t sp = P_FIELD(v, "spec");

	v_node_class_ref(v, &c->node_class_ref);
	v_karpenter_requirements(v, c->requirements, c->n_requirements);
	v_taints(v, "taints", c->taints, c->n_taints, -1, core_effects);
	v_taints(v, "startupTaints", c->startup_taints, c->n_startup_taints, -1, core_effects);
	P_POP(v, sp);
}

/* ---- Entry points ---- */

int model_validate_object(const struct model_object *o, const struct model_validate_opts *opts,
			  struct dt_diags *errs)
{
	struct val v = { .o = o, .opts = opts, .errs = errs };

	model_object_prefix(o, v.prefix, sizeof(v.prefix));
	v_meta(&v, &o->meta, model_kind_namespaced(o->kind));
	switch (o->kind) {
	case MODEL_DEVICE_CLASS:
		v_device_class(&v, &o->u.device_class);
		break;
	case MODEL_RESOURCE_SLICE:
		v_slice(&v, &o->u.slice);
		break;
	case MODEL_RESOURCE_CLAIM:
		v_claim(&v, &o->u.claim);
		break;
	case MODEL_RESOURCE_CLAIM_TEMPLATE:
		v_claim_template(&v, &o->u.claim_template);
		break;
	case MODEL_POD: {
		size_t sp = P_FIELD(&v, "spec");

		v_pod_spec(&v, &o->u.pod.spec);
		P_POP(&v, sp);
		break;
	}
	case MODEL_NODE:
		v_node(&v, &o->u.node);
		break;
	case MODEL_DEPLOYMENT:
	case MODEL_REPLICA_SET:
	case MODEL_STATEFUL_SET:
	case MODEL_JOB:
		v_workload(&v, &o->u.workload);
		break;
	case MODEL_NODE_POOL:
		v_node_pool(&v, &o->u.node_pool);
		break;
	case MODEL_NODE_CLAIM:
		v_node_claim(&v, &o->u.node_claim);
		break;
	case MODEL_EC2_NODE_CLASS:
	case MODEL_KIND_COUNT:
		break;
	}
	return v.oom ? -ENOMEM : v.n;
}

/* ---- Objects defined twice ---- */

/* Objects compare by kind, namespace (namespaced kinds only) and name, then
 * by load order, so that the first one of a run is the one loaded first. */
static int cmp_identity(const void *pa, const void *pb)
{
	const struct model_object *a = *(const struct model_object *const *)pa;
	const struct model_object *b = *(const struct model_object *const *)pb;
	int c;

	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if (model_kind_namespaced(a->kind)) {
		c = strcmp(a->meta.ns ? a->meta.ns : "default", b->meta.ns ? b->meta.ns : "default");
		if (c)
			return c;
	}
	c = strcmp(a->meta.name, b->meta.name);
	if (c)
		return c;
	return a->index < b->index ? -1 : a->index > b->index;
}

static bool same_identity(const struct model_object *a, const struct model_object *b)
{
	if (a->kind != b->kind || strcmp(a->meta.name, b->meta.name))
		return false;
	return !model_kind_namespaced(a->kind) ||
	       !strcmp(a->meta.ns ? a->meta.ns : "default", b->meta.ns ? b->meta.ns : "default");
}

static void e_defined_twice(const struct model_object *o, const struct model_object *first,
			    struct val *v)
{
	struct strbuf sb = STRBUF_INIT;
	char where[160];
	size_t f;

	v->o = o;
	v->path.len = 0;
	v->path.buf[0] = '\0';
	model_object_prefix(o, v->prefix, sizeof(v->prefix));
	f = P_FIELD(v, "metadata");
	P_FIELD(v, "name");
	sb_puts(&sb, "Duplicate value: ");
	model_quote(&sb, o->meta.name, strlen(o->meta.name));
	if (first->src.file) {
		model_source_document(&first->src, where, sizeof(where));
		sb_printf(&sb, ": also defined in %s %s", first->src.file, where);
	} else {
		sb_puts(&sb, ": also defined by dratopo itself");
	}
	emit(v, &sb);
	P_POP(v, f);
}

int model_set_check_duplicates(const struct model_set *s, struct dt_diags *errs)
{
	struct val v = { .errs = errs };
	const struct model_object **sorted;
	size_t n = 0;

	if (!s->n_objects)
		return 0;
	sorted = calloc(s->n_objects, sizeof(*sorted));
	if (!sorted)
		return -ENOMEM;
	for (size_t i = 0; i < s->n_objects; i++)
		if (s->objects[i]->meta.name && s->objects[i]->meta.name[0])
			sorted[n++] = s->objects[i];
	if (n > 1)
		qsort(sorted, n, sizeof(*sorted), cmp_identity);
	for (size_t i = 0, first = 0; i < n && !v.oom; i++) {
		if (i && !same_identity(sorted[first], sorted[i]))
			first = i;
		if (first != i)
			e_defined_twice(sorted[i], sorted[first], &v);
	}
	free(sorted);
	return v.oom ? -ENOMEM : v.n;
}

int model_validate_set(const struct model_set *s, const struct model_validate_opts *opts,
		       struct dt_diags *errs)
{
	int total;

	total = model_set_check_duplicates(s, errs);
	if (total < 0)
		return total;
	for (size_t i = 0; i < s->n_objects; i++) {
		int rc = model_validate_object(s->objects[i], opts, errs);

		if (rc < 0)
			return rc;
		total += rc;
	}
	return total;
}
