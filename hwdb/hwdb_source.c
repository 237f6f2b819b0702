/* hwdb_source.c - hwdb's source format: the one decoder of instance-type and
 * PCI id files, shared by the build-time generator and `--hwdb-extra`, and
 * the writer that turns an entry back into that format.
 *
 * An instance-type entry factors what all devices of a kind share into
 * `gpu:` / `efa:` (PCI id, attributes, GPU memory) and lists the devices
 * under `devices:` (PCIe root, NUMA node, per-device overrides), or gives
 * only `count:` when the topology is unknown. Decoding expands that into
 * one hwdb_device per device with its full attribute list. */
#include "hwdb_source.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "quantity.h"
#include "semver.h"

/* Where the decoder is, for messages: "FILE:LINE: instanceTypes[3]
 * (p5.48xlarge): gpu.devices[2].pcieRoot: must be a string". */
struct ctx {
	const char *file;
	const char *section;            /* "instanceTypes", "gpus", ... */
	size_t index;
	const char *entry_name;         /* NULL before the name is known */
	struct doc_arena *arena;
	struct dt_err *err;
};

__attribute__((format(printf, 4, 5)))
static int fail(struct ctx *c, const struct doc_node *at, const char *field, const char *fmt, ...)
{
	char what[512];
	char where[64] = "";
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (at && at->line > 0)
		snprintf(where, sizeof(where), ":%d", at->line);
	if (c->entry_name)
		return dt_err_set(c->err, -EINVAL, "%s%s: %s[%zu] (%s): %s: %s", c->file, where,
				  c->section, c->index, c->entry_name, field, what);
	return dt_err_set(c->err, -EINVAL, "%s%s: %s[%zu]: %s: %s", c->file, where, c->section,
			  c->index, field, what);
}

static int oom(struct ctx *c)
{
	return dt_err_set(c->err, -ENOMEM, "%s: out of memory", c->file);
}

/* ---- Small readers ---- */

/* Refuse keys outside allowed (NULL-terminated): a typo must not pass as
 * "field absent". */
static int check_keys(struct ctx *c, const struct doc_node *map, const char *prefix,
		      const char *const *allowed)
{
	char field[256];

	for (size_t i = 0; i < map->u.map.n; i++) {
		const char *k = map->u.map.pairs[i].key->text;
		bool ok = false;

		for (size_t j = 0; allowed[j] && !ok; j++)
			ok = !strcmp(k, allowed[j]);
		if (ok)
			continue;
		snprintf(field, sizeof(field), "%s%s%s", prefix, *prefix ? "." : "", k);
		return fail(c, map->u.map.pairs[i].key, field, "unknown field");
	}
	return 0;
}

/* An entry of a PCI id or MIG list: a map of the allowed keys only. */
static int check_entry(struct ctx *c, const struct doc_node *e, const char *const *allowed)
{
	if (e->kind != DOC_MAP)
		return fail(c, e, "entry", "must be a map");
	return check_keys(c, e, "", allowed);
}

static bool is_null(const struct doc_node *n)
{
	return !n || n->kind == DOC_NULL;
}

static char *dup_text(struct ctx *c, const struct doc_node *n)
{
	char *s = doc_arena_alloc(c->arena, n->text_len + 1);

	if (s) {
		memcpy(s, n->text, n->text_len);
		s[n->text_len] = '\0';
	}
	return s;
}

/* A string field: *out NULL when absent (or null and nullable). */
static int get_str(struct ctx *c, const struct doc_node *map, const char *key, const char *field,
		   bool required, const char **out)
{
	const struct doc_node *n = doc_get(map, key);

	*out = NULL;
	if (is_null(n)) {
		if (required)
			return fail(c, n ? n : map, field, "required field");
		return 0;
	}
	if (n->kind != DOC_STRING)
		return fail(c, n, field, "must be a string, not %s", doc_kind_name(n->kind));
	if (n->text_len == 0 && required)
		return fail(c, n, field, "must not be empty");
	if (memchr(n->text, '\0', n->text_len))
		return fail(c, n, field, "must not contain NUL bytes");
	*out = dup_text(c, n);
	return *out ? 0 : oom(c);
}

static int get_int(struct ctx *c, const struct doc_node *map, const char *key, const char *field,
		   int64_t min, int64_t max, bool *present, int64_t *out)
{
	const struct doc_node *n = doc_get(map, key);

	*present = false;
	if (is_null(n))
		return 0;
	if (n->kind != DOC_INT)
		return fail(c, n, field, "must be an integer, not %s", doc_kind_name(n->kind));
	if (n->u.i < min || n->u.i > max)
		return fail(c, n, field, "must be between %" PRId64 " and %" PRId64 ", not %" PRId64,
			    min, max, n->u.i);
	*present = true;
	*out = n->u.i;
	return 0;
}

/* A count: an integer in [lo, hi]; required unless nullable (then null
 * reads as -1, "not published", as MIG profiles say of some counts). */
static int get_count(struct ctx *c, const struct doc_node *e, const char *key, int64_t lo,
		     int64_t hi, bool nullable, int64_t *out)
{
	bool present;
	int rc = get_int(c, e, key, key, lo, hi, &present, out);

	if (rc)
		return rc;
	if (present)
		return 0;
	if (!nullable || !doc_get(e, key))
		return fail(c, e, key, "required field%s", nullable ? " (null: not published)" : "");
	*out = -1;
	return 0;
}

static int get_number(struct ctx *c, const struct doc_node *map, const char *key,
		      const char *field, bool *present, double *out)
{
	const struct doc_node *n = doc_get(map, key);

	*present = false;
	if (is_null(n))
		return 0;
	if (n->kind == DOC_INT)
		*out = (double)n->u.i;
	else if (n->kind == DOC_FLOAT)
		*out = n->u.f;
	else
		return fail(c, n, field, "must be a number, not %s", doc_kind_name(n->kind));
	if (!isfinite(*out) || *out < 0)
		return fail(c, n, field, "must be a finite number >= 0");
	*present = true;
	return 0;
}

static int get_bool(struct ctx *c, const struct doc_node *map, const char *key, const char *field,
		    bool def, bool *out)
{
	const struct doc_node *n = doc_get(map, key);

	*out = def;
	if (is_null(n))
		return 0;
	if (n->kind != DOC_BOOL)
		return fail(c, n, field, "must be true or false, not %s", doc_kind_name(n->kind));
	*out = n->u.b;
	return 0;
}

static int hex16(const char *s, size_t len, uint16_t *out)
{
	unsigned v = 0;

	if (len == 0 || len > 4)
		return -1;
	for (size_t i = 0; i < len; i++) {
		if (!isxdigit((unsigned char)s[i]))
			return -1;
		v = v * 16 + (unsigned)(isdigit((unsigned char)s[i]) ? s[i] - '0'
						 : (tolower((unsigned char)s[i]) - 'a' + 10));
	}
	*out = (uint16_t)v;
	return 0;
}

/* A 4-hex-digit id written as a string ("10de"); YAML would read 2330 as an
 * integer, so integers are refused with a hint rather than guessed at. */
static int get_hex(struct ctx *c, const struct doc_node *map, const char *key, const char *field,
		   bool *present, uint16_t *out)
{
	const struct doc_node *n = doc_get(map, key);

	*present = false;
	if (is_null(n))
		return 0;
	if (n->kind != DOC_STRING)
		return fail(c, n, field, "must be a quoted hexadecimal string such as \"10de\"");
	if (hex16(n->text, n->text_len, out))
		return fail(c, n, field, "\"%s\" is not 1 to 4 hexadecimal digits", n->text);
	*present = true;
	return 0;
}

/* A required hexadecimal id (vendor, device). */
static int get_required_hex(struct ctx *c, const struct doc_node *map, const char *key,
			    uint16_t *out)
{
	bool present;
	int rc = get_hex(c, map, key, key, &present, out);

	if (!rc && !present)
		rc = fail(c, map, key, "required field");
	return rc;
}

/* "10de:2330": vendor and device. */
static int get_pci_id(struct ctx *c, const struct doc_node *map, const char *key,
		      const char *field, uint16_t *vendor, uint16_t *device)
{
	const struct doc_node *n = doc_get(map, key);
	const char *colon;

	*vendor = *device = 0;
	if (is_null(n))
		return 0;
	if (n->kind != DOC_STRING)
		return fail(c, n, field, "must be a string \"vendor:device\" such as \"10de:2330\"");
	colon = memchr(n->text, ':', n->text_len);
	if (!colon || hex16(n->text, (size_t)(colon - n->text), vendor) ||
	    hex16(colon + 1, n->text_len - (size_t)(colon - n->text) - 1, device) || !*device)
		return fail(c, n, field, "\"%s\" is not \"vendor:device\" in hexadecimal", n->text);
	return 0;
}

/* resource.kubernetes.io/pcieRoot values: "pci<domain>:<bus>", lower-case
 * hex, as the kernel names host bridges. */
static bool valid_pcie_root(const char *s)
{
	size_t n = strlen(s), dom;

	if (n < 10 || strncmp(s, "pci", 3))
		return false;
	for (dom = 0; isxdigit((unsigned char)s[3 + dom]) && !isupper((unsigned char)s[3 + dom]);
	     dom++)
		;
	if (dom < 4 || dom > 8 || s[3 + dom] != ':')
		return false;
	s += 3 + dom + 1;
	return strlen(s) == 2 && isxdigit((unsigned char)s[0]) && isxdigit((unsigned char)s[1]) &&
	       !isupper((unsigned char)s[0]) && !isupper((unsigned char)s[1]);
}

/* ---- Attributes ---- */

/* Keys hwdb keeps in device fields; an attribute of that name would say
 * the same thing twice, possibly differently. */
static const char *reserved_attr(const char *name)
{
	if (!strcmp(name, "resource.kubernetes.io/pcieRoot"))
		return "pcieRoot";
	if (!strcmp(name, "dra.net/numaNode") || !strcmp(name, "numaNode"))
		return "numaNode";
	return NULL;
}

/* One attribute value: a bare string, integer or boolean, or the API's
 * one-key form {string|int|bool|version: value}. */
static int decode_attr(struct ctx *c, const char *name, const struct doc_node *v,
		       const char *field, struct hwdb_attr *out)
{
	const struct doc_node *inner = v;
	const char *kind = NULL;

	memset(out, 0, sizeof(*out));
	out->name = doc_arena_strdup(c->arena, name);
	if (!out->name)
		return oom(c);
	if (v->kind == DOC_MAP) {
		if (v->u.map.n != 1)
			return fail(c, v, field, "must have exactly one of string, int, bool, version");
		kind = v->u.map.pairs[0].key->text;
		inner = v->u.map.pairs[0].value;
	}
	if (!kind)
		kind = inner->kind == DOC_STRING ? "string" : inner->kind == DOC_INT ? "int"
		       : inner->kind == DOC_BOOL ? "bool" : "?";
	if (!strcmp(kind, "string") || !strcmp(kind, "version")) {
		if (inner->kind != DOC_STRING)
			return fail(c, inner, field, "%s value must be a string, not %s", kind,
				    doc_kind_name(inner->kind));
		if (memchr(inner->text, '\0', inner->text_len))
			return fail(c, inner, field, "must not contain NUL bytes");
		out->type = kind[0] == 's' ? HWDB_ATTR_STRING : HWDB_ATTR_VERSION;
		if (out->type == HWDB_ATTR_VERSION &&
		    !semver_is_valid_attribute(inner->text, inner->text_len))
			return fail(c, inner, field, "\"%s\" is not a semantic version (such as 9.0.0)",
				    inner->text);
		out->str = dup_text(c, inner);
		return out->str ? 0 : oom(c);
	}
	if (!strcmp(kind, "int")) {
		if (inner->kind != DOC_INT)
			return fail(c, inner, field, "int value must be an integer, not %s",
				    doc_kind_name(inner->kind));
		out->type = HWDB_ATTR_INT;
		out->i = inner->u.i;
		return 0;
	}
	if (!strcmp(kind, "bool")) {
		if (inner->kind != DOC_BOOL)
			return fail(c, inner, field, "bool value must be true or false, not %s",
				    doc_kind_name(inner->kind));
		out->type = HWDB_ATTR_BOOL;
		out->b = inner->u.b;
		return 0;
	}
	if (v->kind == DOC_MAP)
		return fail(c, v, field, "unknown value type \"%s\" (want string, int, bool or version)",
			    kind);
	return fail(c, v, field, "must be a string, integer, boolean or {version: ...}, not %s",
		    doc_kind_name(v->kind));
}

/* Merge the attributes of map (may be NULL) into attrs[0..*n): same names
 * replace, new ones append. */
static int merge_attrs(struct ctx *c, const struct doc_node *map, const char *prefix,
		       struct hwdb_attr *attrs, size_t *n)
{
	char field[256];

	if (is_null(map))
		return 0;
	if (map->kind != DOC_MAP)
		return fail(c, map, prefix, "must be a map of attribute names to values");
	for (size_t i = 0; i < map->u.map.n; i++) {
		const char *name = map->u.map.pairs[i].key->text;
		const char *field_of = reserved_attr(name);
		struct hwdb_attr a;
		size_t j;
		int rc;

		snprintf(field, sizeof(field), "%s.%s", prefix, name);
		if (!*name)
			return fail(c, map->u.map.pairs[i].key, field, "attribute name must not be empty");
		if (field_of)
			return fail(c, map->u.map.pairs[i].key, field,
				    "give it as the device's %s field, not as an attribute", field_of);
		rc = decode_attr(c, name, map->u.map.pairs[i].value, field, &a);
		if (rc)
			return rc;
		for (j = 0; j < *n && strcmp(attrs[j].name, name); j++)
			;
		if (j == *n) {
			if (*n == HWDB_MAX_ATTRS)
				return fail(c, map, prefix, "more than %d attributes", HWDB_MAX_ATTRS);
			(*n)++;
		}
		attrs[j] = a;
	}
	return 0;
}

/* ---- Devices ---- */

/* What every device of a kind shares (the `gpu:` or `efa:` map). */
struct kind_defaults {
	const char *kind;               /* "gpu" or "efa" */
	struct hwdb_attr attrs[HWDB_MAX_ATTRS];
	size_t n_attrs;
	const char *memory;
	int64_t memory_mib;
};

static int parse_memory(struct ctx *c, const struct doc_node *n, const char *field,
			const char **text, int64_t *mib)
{
	struct quantity q;
	struct dt_err qerr;
	int64_t bytes;

	/* A bare number is a quantity too, as in any Kubernetes manifest. */
	if (n->kind != DOC_STRING && n->kind != DOC_INT && n->kind != DOC_FLOAT)
		return fail(c, n, field, "must be a quantity such as \"80Gi\", not %s",
			    doc_kind_name(n->kind));
	if (quantity_parse(n->text, n->text_len, &q, &qerr))
		return fail(c, n, field, "%s", qerr.msg);
	if (quantity_sign(&q) <= 0 || quantity_to_int64(&q, &bytes))
		return fail(c, n, field, "\"%s\" is not a positive whole number of bytes", n->text);
	*mib = bytes >> 20;
	*text = dup_text(c, n);
	return *text ? 0 : oom(c);
}

static int cmp_attr(const void *a, const void *b)
{
	return strcmp(((const struct hwdb_attr *)a)->name, ((const struct hwdb_attr *)b)->name);
}

/* pcieRoot, numaNode and memory of one device entry. */
static int device_fields(struct ctx *c, const struct doc_node *dn, const char *prefix,
			 struct hwdb_device *d)
{
	const struct doc_node *mem = doc_get(dn, "memory");
	char field[96];
	bool present;
	int64_t numa;
	int rc;

	snprintf(field, sizeof(field), "%s.pcieRoot", prefix);
	if ((rc = get_str(c, dn, "pcieRoot", field, false, &d->pcie_root)))
		return rc;
	if (d->pcie_root && !valid_pcie_root(d->pcie_root))
		return fail(c, doc_get(dn, "pcieRoot"), field,
			    "\"%s\" is not a PCIe root name such as \"pci0000:44\"", d->pcie_root);
	snprintf(field, sizeof(field), "%s.numaNode", prefix);
	if ((rc = get_int(c, dn, "numaNode", field, 0, 1023, &present, &numa)))
		return rc;
	if (present)
		d->numa_node = (int)numa;
	snprintf(field, sizeof(field), "%s.memory", prefix);
	if (!is_null(mem) && (rc = parse_memory(c, mem, field, &d->memory, &d->memory_mib)))
		return rc;
	return 0;
}

/* Device i of a kind: the shared defaults, then what its entry dn (NULL
 * with `count:`) says. */
static int decode_device(struct ctx *c, const struct kind_defaults *kd, const struct doc_node *dn,
			 size_t i, struct hwdb_device *d)
{
	static const char *const gpu_keys[] = { "name", "pcieRoot", "numaNode", "memory",
						"attributes", NULL };
	static const char *const efa_keys[] = { "name", "pcieRoot", "numaNode", "attributes", NULL };
	struct hwdb_attr attrs[HWDB_MAX_ATTRS];
	size_t n_attrs = kd->n_attrs;
	char prefix[64], field[96];
	struct hwdb_attr *copy;
	const char *name = NULL;
	int rc;

	snprintf(prefix, sizeof(prefix), "%s.devices[%zu]", kd->kind, i);
	d->numa_node = -1;
	d->memory = kd->memory;
	d->memory_mib = kd->memory_mib;
	memcpy(attrs, kd->attrs, kd->n_attrs * sizeof(attrs[0]));
	if (dn) {
		if (dn->kind != DOC_MAP)
			return fail(c, dn, prefix, "must be a map (pcieRoot, numaNode, ...)");
		if ((rc = check_keys(c, dn, prefix, kd->kind[0] == 'g' ? gpu_keys : efa_keys)))
			return rc;
		snprintf(field, sizeof(field), "%s.name", prefix);
		if ((rc = get_str(c, dn, "name", field, doc_get(dn, "name") != NULL, &name)) ||
		    (rc = device_fields(c, dn, prefix, d)))
			return rc;
		snprintf(field, sizeof(field), "%s.attributes", prefix);
		if ((rc = merge_attrs(c, doc_get(dn, "attributes"), field, attrs, &n_attrs)))
			return rc;
	}
	if (!name) {            /* the drivers' naming: gpu-0, efa-3 */
		char buf[32];

		snprintf(buf, sizeof(buf), "%s-%zu", kd->kind, i);
		if (!(name = doc_arena_strdup(c->arena, buf)))
			return oom(c);
	}
	d->name = name;
	copy = n_attrs ? doc_arena_alloc(c->arena, n_attrs * sizeof(*copy)) : NULL;
	if (n_attrs && !copy)
		return oom(c);
	if (n_attrs)
		memcpy(copy, attrs, n_attrs * sizeof(*copy));
	/* By name, as the API prints maps: one order whatever the source's. */
	if (n_attrs > 1)
		qsort(copy, n_attrs, sizeof(*copy), cmp_attr);
	d->attrs = copy;
	d->n_attrs = n_attrs;
	return 0;
}

/* The `gpu:` or `efa:` section of an entry. */
static int decode_kind(struct ctx *c, const struct doc_node *entry, const char *kind,
		       uint16_t *vendor, uint16_t *device, const struct hwdb_device **out,
		       size_t *n_out)
{
	static const char *const gpu_keys[] = { "pciId", "memory", "attributes", "devices",
						"count", NULL };
	static const char *const efa_keys[] = { "pciId", "attributes", "devices", "count", NULL };
	const struct doc_node *sec = doc_get(entry, kind), *devs, *cnt, *mem;
	struct kind_defaults kd;
	struct hwdb_device *arr;
	char field[64];
	size_t n;
	int rc;

	*out = NULL;
	*n_out = 0;
	*vendor = *device = 0;
	if (is_null(sec))
		return 0;
	if (sec->kind != DOC_MAP)
		return fail(c, sec, kind, "must be a map (pciId, attributes, devices, ...)");
	if ((rc = check_keys(c, sec, kind, kind[0] == 'g' ? gpu_keys : efa_keys)))
		return rc;
	memset(&kd, 0, sizeof(kd));
	kd.kind = kind;
	snprintf(field, sizeof(field), "%s.pciId", kind);
	if ((rc = get_pci_id(c, sec, "pciId", field, vendor, device)))
		return rc;
	mem = doc_get(sec, "memory");
	snprintf(field, sizeof(field), "%s.memory", kind);
	if (!is_null(mem) && (rc = parse_memory(c, mem, field, &kd.memory, &kd.memory_mib)))
		return rc;
	snprintf(field, sizeof(field), "%s.attributes", kind);
	if ((rc = merge_attrs(c, doc_get(sec, "attributes"), field, kd.attrs, &kd.n_attrs)))
		return rc;

	devs = doc_get(sec, "devices");
	cnt = doc_get(sec, "count");
	if (!is_null(devs) && !is_null(cnt))
		return fail(c, cnt, kind, "give either devices or count, not both");
	snprintf(field, sizeof(field), "%s.devices", kind);
	if (!is_null(devs)) {
		if (devs->kind != DOC_SEQ)
			return fail(c, devs, field, "must be a list");
		n = devs->u.seq.n;
	} else if (!is_null(cnt)) {
		snprintf(field, sizeof(field), "%s.count", kind);
		if (cnt->kind != DOC_INT || cnt->u.i < 0 || cnt->u.i > HWDB_MAX_DEVICES)
			return fail(c, cnt, field, "must be an integer between 0 and %d",
				    HWDB_MAX_DEVICES);
		n = (size_t)cnt->u.i;
		devs = NULL;
		snprintf(field, sizeof(field), "%s.devices", kind);
	} else {
		return fail(c, sec, kind, "needs devices or count");
	}
	if (n > HWDB_MAX_DEVICES)
		return fail(c, devs, field, "%zu devices, more than one slice holds (%d)", n,
			    HWDB_MAX_DEVICES);
	if (n == 0)
		return 0;
	arr = doc_arena_alloc(c->arena, n * sizeof(*arr));
	if (!arr)
		return oom(c);
	memset(arr, 0, n * sizeof(*arr));
	for (size_t i = 0; i < n; i++) {
		rc = decode_device(c, &kd, devs ? devs->u.seq.items[i] : NULL, i, &arr[i]);
		if (rc)
			return rc;
		for (size_t j = 0; j < i; j++)
			if (!strcmp(arr[j].name, arr[i].name))
				return fail(c, devs ? devs->u.seq.items[i] : cnt, field,
					    "duplicate device name \"%s\"", arr[i].name);
	}
	*out = arr;
	*n_out = n;
	return 0;
}

/* ---- Entries ---- */

/* EC2 instance type names: "p5.48xlarge", "p6-b200.48xlarge". */
static bool valid_type_name(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 63 || !isalnum((unsigned char)s[0]) || !isalnum((unsigned char)s[n - 1]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!islower((unsigned char)s[i]) && !isdigit((unsigned char)s[i]) && s[i] != '.' &&
		    s[i] != '-')
			return false;
	return strchr(s, '.') != NULL;
}

static int decode_notes(struct ctx *c, const struct doc_node *entry,
			const char *const **out, size_t *n_out)
{
	const struct doc_node *n = doc_get(entry, "notes");
	const char **notes;
	char field[32];

	if (is_null(n))
		return 0;
	if (n->kind != DOC_SEQ)
		return fail(c, n, "notes", "must be a list of strings");
	if (n->u.seq.n > HWDB_MAX_NOTES)
		return fail(c, n, "notes", "more than %d notes", HWDB_MAX_NOTES);
	if (n->u.seq.n == 0)
		return 0;
	notes = doc_arena_alloc(c->arena, n->u.seq.n * sizeof(*notes));
	if (!notes)
		return oom(c);
	for (size_t i = 0; i < n->u.seq.n; i++) {
		const struct doc_node *s = n->u.seq.items[i];

		snprintf(field, sizeof(field), "notes[%zu]", i);
		if (s->kind != DOC_STRING)
			return fail(c, s, field, "must be a string");
		if (!(notes[i] = dup_text(c, s)))
			return oom(c);
	}
	*out = notes;
	*n_out = n->u.seq.n;
	return 0;
}

const struct hwdb_attr *hwdb_device_attr(const struct hwdb_device *d, const char *name)
{
	for (size_t i = 0; d && name && i < d->n_attrs; i++)
		if (!strcmp(d->attrs[i].name, name))
			return &d->attrs[i];
	return NULL;
}

static const char *attr_str(const struct hwdb_device *d, const char *name)
{
	const struct hwdb_attr *a = hwdb_device_attr(d, name);

	return a && a->type == HWDB_ATTR_STRING ? a->str : NULL;
}

/* vcpu, memoryMiB and arch: required, but an explicit null says no source
 * has them (0 / NULL in the entry). */
static int decode_size(struct ctx *c, const struct doc_node *e, struct hwdb_type *t)
{
	static const char *const keys[] = { "vcpu", "memoryMiB", "arch" };
	int64_t v;
	int rc;

	for (size_t i = 0; i < 3; i++)
		if (!doc_get(e, keys[i]))
			return fail(c, e, keys[i], "required field (null: unknown)");
	if (!is_null(doc_get(e, "vcpu"))) {
		if ((rc = get_count(c, e, "vcpu", 1, 1 << 20, false, &v)))
			return rc;
		t->vcpu = (int)v;
	}
	if (!is_null(doc_get(e, "memoryMiB")) &&
	    (rc = get_count(c, e, "memoryMiB", 1, INT64_MAX >> 20, false, &t->memory_mib)))
		return rc;
	if ((rc = get_str(c, e, "arch", "arch", false, &t->arch)))
		return rc;
	if (t->arch && strcmp(t->arch, "amd64") && strcmp(t->arch, "arm64"))
		return fail(c, doc_get(e, "arch"), "arch",
			    "Unsupported value: \"%s\": supported values: \"amd64\", \"arm64\"", t->arch);
	return 0;
}

/* AWS region names: "eu-west-1", "us-gov-west-1", "ap-southeast-7". */
bool hwdb_source_valid_region(const char *s)
{
	size_t n = strlen(s), parts = 0;

	if (n < 9 || n > 32 || !islower((unsigned char)s[0]) || !isdigit((unsigned char)s[n - 1]))
		return false;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '-') {
			if (i == 0 || s[i - 1] == '-')
				return false;
			parts++;
		} else if (!islower((unsigned char)s[i]) && !isdigit((unsigned char)s[i])) {
			return false;
		}
	}
	return parts >= 2;
}

static int cmp_price_region(const void *a, const void *b)
{
	return strcmp(((const struct hwdb_price *)a)->region, ((const struct hwdb_price *)b)->region);
}

/* Sort prices by region; -1 when a region appears twice (its index in *dup). */
int hwdb_source_sort_prices(struct hwdb_price *p, size_t n, size_t *dup)
{
	qsort(p, n, sizeof(*p), cmp_price_region);
	for (size_t i = 1; i < n; i++)
		if (!strcmp(p[i - 1].region, p[i].region)) {
			*dup = i;
			return -1;
		}
	return 0;
}

/* onDemandPrices: {region: price}. us-east-1's is onDemandPricePerHour. */
static int decode_prices(struct ctx *c, const struct doc_node *e, struct hwdb_type *t)
{
	const struct doc_node *m = doc_get(e, "onDemandPrices");
	struct hwdb_price *p;
	char field[96];
	size_t n = 0, dup;

	if (is_null(m))
		return 0;
	if (m->kind != DOC_MAP)
		return fail(c, m, "onDemandPrices", "must be a map of region to price per hour");
	p = m->u.map.n ? doc_arena_alloc(c->arena, m->u.map.n * sizeof(*p)) : NULL;
	if (m->u.map.n && !p)
		return oom(c);
	for (size_t i = 0; i < m->u.map.n; i++) {
		const char *region = m->u.map.pairs[i].key->text;
		bool present;
		double v;
		int rc;

		snprintf(field, sizeof(field), "onDemandPrices.%s", region);
		if (!hwdb_source_valid_region(region))
			return fail(c, m->u.map.pairs[i].key, field,
				    "not an AWS region name such as \"eu-west-1\"");
		if ((rc = get_number(c, m, region, field, &present, &v)))
			return rc;
		if (!present)
			return fail(c, m, field, "must be a price per hour");
		if (!strcmp(region, HWDB_DEFAULT_REGION)) {
			if (t->has_price && t->price != v)
				return fail(c, m->u.map.pairs[i].value, field,
					    "differs from onDemandPricePerHour (%g)", t->price);
			t->has_price = true;
			t->price = v;
			continue;
		}
		p[n].region = doc_arena_strdup(c->arena, region);
		if (!p[n].region)
			return oom(c);
		p[n++].price = v;
	}
	if (n && hwdb_source_sort_prices(p, n, &dup))
		return fail(c, m, "onDemandPrices", "region %s given twice", p[dup].region);
	t->prices = n ? p : NULL;
	t->n_prices = n;
	return 0;
}

/* accelerators: {kind: "AWS Trainium2", count: 16 | null}. */
static int decode_accelerators(struct ctx *c, const struct doc_node *e, struct hwdb_type *t)
{
	static const char *const keys[] = { "kind", "count", NULL };
	const struct doc_node *m = doc_get(e, "accelerators");
	bool present;
	int64_t n;
	int rc;

	t->accel_count = -1;
	if (is_null(m))
		return 0;
	if (m->kind != DOC_MAP)
		return fail(c, m, "accelerators", "must be a map (kind, count)");
	if ((rc = check_keys(c, m, "accelerators", keys)) ||
	    (rc = get_str(c, m, "kind", "accelerators.kind", true, &t->accel_kind)) ||
	    (rc = get_int(c, m, "count", "accelerators.count", 0, 4096, &present, &n)))
		return rc;
	t->accel_count = present ? (int)n : -1;
	return 0;
}

static int decode_type(struct ctx *c, const struct doc_node *e, bool builtin, struct hwdb_type *t)
{
	static const char *const keys[] = {
		"name", "family", "vcpu", "memoryMiB", "arch", "onDemandPricePerHour",
		"onDemandPrices", "draMetadata", "maxEfaInterfaces", "networkCards",
		"networkBandwidthGbps", "gpu", "efa", "accelerators", "notes", NULL,
	};
	uint16_t efa_vendor;
	bool present;
	int64_t v;
	int rc;

	memset(t, 0, sizeof(*t));
	t->builtin = builtin;
	if (e->kind != DOC_MAP)
		return fail(c, e, "entry", "must be a map, not %s", doc_kind_name(e->kind));
	if ((rc = get_str(c, e, "name", "name", true, &t->name)))
		return rc;
	if (!valid_type_name(t->name))
		return fail(c, doc_get(e, "name"), "name",
			    "\"%s\" is not an instance type name such as \"p5.48xlarge\"", t->name);
	c->entry_name = t->name;
	if ((rc = check_keys(c, e, "", keys)))
		return rc;

	if ((rc = get_str(c, e, "family", "family", false, &t->family)))
		return rc;
	if (!t->family) {       /* the part before the size: "p6-b200" */
		const char *dot = strchr(t->name, '.');
		char *f = doc_arena_alloc(c->arena, (size_t)(dot - t->name) + 1);

		if (!f)
			return oom(c);
		memcpy(f, t->name, (size_t)(dot - t->name));
		f[dot - t->name] = '\0';
		t->family = f;
	}
	if ((rc = decode_size(c, e, t)) ||
	    (rc = get_number(c, e, "onDemandPricePerHour", "onDemandPricePerHour", &t->has_price,
			     &t->price)) ||
	    (rc = decode_prices(c, e, t)) || (rc = decode_accelerators(c, e, t)))
		return rc;
	if ((rc = get_bool(c, e, "draMetadata", "draMetadata", false, &t->dra_metadata)))
		return rc;
	if ((rc = decode_kind(c, e, "gpu", &t->gpu_vendor, &t->gpu_device, &t->gpus, &t->n_gpus)))
		return rc;
	if ((rc = decode_kind(c, e, "efa", &efa_vendor, &t->efa_device, &t->efas, &t->n_efas)))
		return rc;
	if (t->efa_device && efa_vendor != HWDB_PCI_VENDOR_AMAZON)
		return fail(c, doc_get_path(e, "efa", "pciId", NULL), "efa.pciId",
			    "EFAs are Amazon devices (vendor 1d0f), not vendor %04x", efa_vendor);
	if ((rc = get_int(c, e, "maxEfaInterfaces", "maxEfaInterfaces", 0, 1024, &present, &v)))
		return rc;
	t->max_efa_interfaces = present ? (int)v : (int)t->n_efas;
	if (t->max_efa_interfaces < (int)t->n_efas)
		return fail(c, doc_get(e, "maxEfaInterfaces"), "maxEfaInterfaces",
			    "%d is less than the %zu EFAs listed", t->max_efa_interfaces, t->n_efas);
	if ((rc = get_int(c, e, "networkCards", "networkCards", 0, 1024, &present, &v)))
		return rc;
	t->network_cards = present ? (int)v : 0;
	if ((rc = get_number(c, e, "networkBandwidthGbps", "networkBandwidthGbps", &present,
			     &t->network_bandwidth_gbps)))
		return rc;
	if ((rc = decode_notes(c, e, &t->notes, &t->n_notes)))
		return rc;
	if (t->n_gpus) {
		t->gpu_model = attr_str(&t->gpus[0], "productName");
		t->gpu_architecture = attr_str(&t->gpus[0], "architecture");
	}
	/* Scraped metadata without a single PCIe root is a contradiction the
	 * planner would silently turn into "unknown": refuse it. */
	if (t->dra_metadata) {
		for (size_t i = 0; i < t->n_gpus + t->n_efas; i++) {
			const struct hwdb_device *d = i < t->n_gpus ? &t->gpus[i]
							       : &t->efas[i - t->n_gpus];

			if (!d->pcie_root)
				return fail(c, e, i < t->n_gpus ? "gpu.devices" : "efa.devices",
					    "%s has no pcieRoot, but draMetadata is true", d->name);
		}
	}
	return 0;
}

static struct hwdb_source *source_new(const char *name)
{
	struct hwdb_source *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->filename = strdup(name);
	s->arena = doc_arena_new();
	if (!s->filename || !s->arena) {
		hwdb_source_free(s);
		return NULL;
	}
	return s;
}

void hwdb_source_free(struct hwdb_source *s)
{
	if (!s)
		return;
	free(s->prices);
	doc_arena_free(s->arena);
	free(s->filename);
	free(s);
}

/* The one document of a source file, as a map holding `key`. */
static int root_of(const struct doc_stream *st, const char *name, const char *key,
		   const struct doc_node **out, struct dt_err *err)
{
	const struct doc_node *root = NULL;

	for (size_t i = 0; i < st->n_docs; i++) {
		if (st->docs[i].error)
			return dt_err_set(err, -EINVAL, "%s: document %zu: %s", name, i + 1,
					  st->docs[i].error);
		if (!st->docs[i].root)
			continue;
		if (root)
			return dt_err_set(err, -EINVAL, "%s: document %zu: a source file holds one "
					  "document", name, i + 1);
		root = st->docs[i].root;
	}
	if (!root || root->kind != DOC_MAP || !doc_get(root, key))
		return dt_err_set(err, -EINVAL, "%s: %s: required field (the file must be a map "
				  "with a `%s:` list)", name, key, key);
	*out = root;
	return 0;
}

/* What every source file starts with: its one document, a map holding key,
 * in *root, and a new, empty source named for the file in *out. */
static int source_start(const struct doc_stream *st, const char *name, const char *key,
			const struct doc_node **root, struct hwdb_source **out,
			struct dt_err *err)
{
	int rc = root_of(st, name, key, root, err);

	if (rc)
		return rc;
	*out = source_new(name);
	return *out ? 0 : dt_err_set(err, -ENOMEM, "%s: out of memory", name);
}

static int decode_types_stream(const struct doc_stream *st, const char *name, bool builtin,
			       struct hwdb_source **out, struct dt_err *err)
{
	const struct doc_node *root, *list;
	struct hwdb_source *s = NULL;
	struct ctx c;
	int rc;

	*out = NULL;
	if ((rc = source_start(st, name, "instanceTypes", &root, &s, err)))
		return rc;
	c = (struct ctx){ .file = name, .section = "instanceTypes", .arena = s->arena, .err = err };
	list = doc_get(root, "instanceTypes");
	rc = -EINVAL;
	if (root->u.map.n != 1) {
		for (size_t i = 0; i < root->u.map.n; i++)
			if (strcmp(root->u.map.pairs[i].key->text, "instanceTypes")) {
				dt_err_set(err, -EINVAL, "%s:%d: %s: unknown field", name,
					   root->u.map.pairs[i].key->line,
					   root->u.map.pairs[i].key->text);
				goto out;
			}
	}
	if (list->kind != DOC_SEQ) {
		dt_err_set(err, -EINVAL, "%s:%d: instanceTypes: must be a list", name, list->line);
		goto out;
	}
	if (list->u.seq.n > HWDB_MAX_TYPES) {
		dt_err_set(err, -EINVAL, "%s: instanceTypes: more than %d entries", name,
			   HWDB_MAX_TYPES);
		goto out;
	}
	s->n_types = list->u.seq.n;
	s->types = s->n_types ? doc_arena_alloc(s->arena, s->n_types * sizeof(*s->types)) : NULL;
	if (s->n_types && !s->types) {
		rc = dt_err_set(err, -ENOMEM, "%s: out of memory", name);
		goto out;
	}
	for (size_t i = 0; i < s->n_types; i++) {
		c.index = i;
		c.entry_name = NULL;
		if ((rc = decode_type(&c, list->u.seq.items[i], builtin, &s->types[i])))
			goto out;
		for (size_t j = 0; j < i; j++)
			if (!strcmp(s->types[j].name, s->types[i].name)) {
				rc = fail(&c, list->u.seq.items[i], "name",
					  "duplicate entry (also instanceTypes[%zu])", j);
				goto out;
			}
	}
	*out = s;
	s = NULL;
	rc = 0;
out:
	hwdb_source_free(s);
	return rc;
}

int hwdb_source_parse_types(const char *buf, size_t len, const char *name, bool builtin,
			    struct hwdb_source **out, struct dt_err *err)
{
	struct doc_stream *st = NULL;
	int rc;

	*out = NULL;
	rc = doc_parse(buf, len, DOC_FORMAT_AUTO, name, &st, err);
	if (rc)
		return rc;
	rc = decode_types_stream(st, name, builtin, out, err);
	doc_stream_free(st);
	return rc;
}

int hwdb_source_load_types(const char *path, bool builtin, struct hwdb_source **out,
			   struct dt_err *err)
{
	struct doc_stream *st = NULL;
	int rc;

	*out = NULL;
	rc = doc_load_file(path, &st, err);
	if (rc)
		return rc;
	rc = decode_types_stream(st, path, builtin, out, err);
	doc_stream_free(st);
	return rc;
}

/* ---- PCI ids ---- */

static int pci_list(struct ctx *c, const struct doc_node *root, const char *key,
		    const struct doc_node **list)
{
	*list = doc_get(root, key);
	if (is_null(*list))
		return 0;
	if ((*list)->kind != DOC_SEQ)
		return dt_err_set(c->err, -EINVAL, "%s:%d: %s: must be a list", c->file,
				  (*list)->line, key);
	if ((*list)->u.seq.n > HWDB_MAX_PCI_ENTRIES)
		return dt_err_set(c->err, -EINVAL, "%s: %s: more than %d entries", c->file, key,
				  HWDB_MAX_PCI_ENTRIES);
	return 0;
}

static int decode_pci_gpu(struct ctx *c, const struct doc_node *e, struct hwdb_pci_gpu *g)
{
	static const char *const keys[] = { "vendor", "device", "model", "architecture", NULL };
	int rc;

	if ((rc = check_entry(c, e, keys)) ||
	    (rc = get_required_hex(c, e, "vendor", &g->vendor)) ||
	    (rc = get_required_hex(c, e, "device", &g->device)) ||
	    (rc = get_str(c, e, "model", "model", true, &g->model)) ||
	    (rc = get_str(c, e, "architecture", "architecture", true, &g->architecture)))
		return rc;
	return 0;
}

static int decode_pci_efa(struct ctx *c, const struct doc_node *e, struct hwdb_pci_efa *f)
{
	static const char *const keys[] = { "vendor", "device", "generation", "subsystem", "name",
					    NULL };
	int64_t gen;
	int rc;

	if ((rc = check_entry(c, e, keys)) ||
	    (rc = get_required_hex(c, e, "vendor", &f->vendor)) ||
	    (rc = get_required_hex(c, e, "device", &f->device)) ||
	    (rc = get_count(c, e, "generation", 1, 100, false, &gen)))
		return rc;
	f->generation = (int)gen;
	if ((rc = get_str(c, e, "subsystem", "subsystem", true, &f->subsystem)) ||
	    (rc = get_str(c, e, "name", "name", true, &f->name)))
		return rc;
	return 0;
}

static int decode_pci_ignore(struct ctx *c, const struct doc_node *e, struct hwdb_pci_ignore *r)
{
	static const char *const keys[] = { "vendor", "device", "class", "why", NULL };
	int rc;

	if ((rc = check_entry(c, e, keys)) ||
	    (rc = get_hex(c, e, "vendor", "vendor", &r->has_vendor, &r->vendor)) ||
	    (rc = get_hex(c, e, "device", "device", &r->has_device, &r->device)) ||
	    (rc = get_hex(c, e, "class", "class", &r->has_class, &r->pci_class)) ||
	    (rc = get_str(c, e, "why", "why", true, &r->why)))
		return rc;
	if (!r->has_vendor && !r->has_device && !r->has_class)
		return fail(c, e, "entry", "a rule needs vendor, device or class");
	if (r->has_device && !r->has_vendor)
		return fail(c, e, "device", "a device id means nothing without its vendor");
	return 0;
}

int hwdb_source_load_pci(const char *path, struct hwdb_source **out, struct dt_err *err)
{
	const struct doc_node *root, *gpus, *efas, *ign;
	struct doc_stream *st = NULL;
	struct hwdb_source *s = NULL;
	struct ctx c;
	int rc;

	*out = NULL;
	if ((rc = doc_load_file(path, &st, err)))
		return rc;
	if ((rc = source_start(st, path, "gpus", &root, &s, err)))
		goto out;
	c = (struct ctx){ .file = path, .arena = s->arena, .err = err };
	if ((rc = pci_list(&c, root, "gpus", &gpus)) || (rc = pci_list(&c, root, "efas", &efas)) ||
	    (rc = pci_list(&c, root, "ignore", &ign)))
		goto out;
	s->n_pci_gpus = gpus ? gpus->u.seq.n : 0;
	s->n_pci_efas = efas ? efas->u.seq.n : 0;
	s->n_pci_ignore = ign ? ign->u.seq.n : 0;
	s->pci_gpus = doc_arena_alloc(s->arena, (s->n_pci_gpus + 1) * sizeof(*s->pci_gpus));
	s->pci_efas = doc_arena_alloc(s->arena, (s->n_pci_efas + 1) * sizeof(*s->pci_efas));
	s->pci_ignore = doc_arena_alloc(s->arena, (s->n_pci_ignore + 1) * sizeof(*s->pci_ignore));
	if (!s->pci_gpus || !s->pci_efas || !s->pci_ignore) {
		rc = dt_err_set(err, -ENOMEM, "%s: out of memory", path);
		goto out;
	}
	c.section = "gpus";
	for (c.index = 0; c.index < s->n_pci_gpus; c.index++) {
		memset(&s->pci_gpus[c.index], 0, sizeof(s->pci_gpus[0]));
		if ((rc = decode_pci_gpu(&c, gpus->u.seq.items[c.index], &s->pci_gpus[c.index])))
			goto out;
	}
	c.section = "efas";
	for (c.index = 0; c.index < s->n_pci_efas; c.index++) {
		memset(&s->pci_efas[c.index], 0, sizeof(s->pci_efas[0]));
		if ((rc = decode_pci_efa(&c, efas->u.seq.items[c.index], &s->pci_efas[c.index])))
			goto out;
	}
	c.section = "ignore";
	for (c.index = 0; c.index < s->n_pci_ignore; c.index++) {
		memset(&s->pci_ignore[c.index], 0, sizeof(s->pci_ignore[0]));
		if ((rc = decode_pci_ignore(&c, ign->u.seq.items[c.index],
					    &s->pci_ignore[c.index])))
			goto out;
	}
	*out = s;
	s = NULL;
	rc = 0;
out:
	hwdb_source_free(s);
	doc_stream_free(st);
	return rc;
}

/* ---- MIG profiles ---- */

static int decode_placements(struct ctx *c, const struct doc_node *e,
			     const struct hwdb_mig_gpu *g, struct hwdb_mig_profile *p)
{
	const struct doc_node *n = doc_get(e, "placements");

	if (is_null(n) || n->kind != DOC_SEQ || n->u.seq.n == 0)
		return fail(c, n ? n : e, "placements", "required: a list of first memory slices");
	if (n->u.seq.n > HWDB_MIG_MAX_SLICES)
		return fail(c, n, "placements", "more than %d", HWDB_MIG_MAX_SLICES);
	for (size_t i = 0; i < n->u.seq.n; i++) {
		const struct doc_node *v = n->u.seq.items[i];

		if (v->kind != DOC_INT || v->u.i < 0 || v->u.i + p->memory_slices > g->memory_slices)
			return fail(c, v, "placements", "%s: not a first slice a %d-slice instance "
				    "can have on %d memory slices", v->text, p->memory_slices,
				    g->memory_slices);
		p->placements[i] = (int)v->u.i;
	}
	p->n_placements = n->u.seq.n;
	return 0;
}

static int decode_mig_profile(struct ctx *c, const struct doc_node *e,
			      const struct hwdb_mig_gpu *g, struct hwdb_mig_profile *p)
{
	static const char *const keys[] = { "name", "computeSlices", "memorySlices", "instances",
					    "placements", "multiprocessors", "copyEngines",
					    "decoders", "encoders", "jpegEngines", "ofaEngines",
					    "memory", NULL };
	int64_t cs, ms, inst;
	const struct doc_node *mem;
	int rc;

	if (e->kind != DOC_MAP)
		return fail(c, e, "profiles", "each profile must be a map");
	if ((rc = check_keys(c, e, "profiles", keys)) ||
	    (rc = get_str(c, e, "name", "name", true, &p->name)) ||
	    (rc = get_count(c, e, "computeSlices", 1, g->compute_slices, false, &cs)) ||
	    (rc = get_count(c, e, "memorySlices", 1, g->memory_slices, false, &ms)) ||
	    (rc = get_count(c, e, "instances", 1, g->compute_slices, false, &inst)))
		return rc;
	p->compute_slices = (int)cs;
	p->memory_slices = (int)ms;
	p->instances = (int)inst;
	if ((rc = decode_placements(c, e, g, p)) ||
	    (rc = get_count(c, e, "multiprocessors", 1, 100000, true, &p->multiprocessors)) ||
	    (rc = get_count(c, e, "copyEngines", 0, 1000, false, &p->copy_engines)) ||
	    (rc = get_count(c, e, "decoders", 0, 1000, false, &p->decoders)) ||
	    (rc = get_count(c, e, "encoders", 0, 1000, false, &p->encoders)) ||
	    (rc = get_count(c, e, "jpegEngines", 0, 1000, false, &p->jpeg_engines)) ||
	    (rc = get_count(c, e, "ofaEngines", 0, 1000, false, &p->ofa_engines)))
		return rc;
	mem = doc_get(e, "memory");
	if (is_null(mem))
		return fail(c, e, "memory", "required field");
	return parse_memory(c, mem, "memory", &p->memory, &p->memory_mib);
}

static int decode_mig_gpu(struct ctx *c, const struct doc_node *e, struct hwdb_mig_gpu *g)
{
	static const char *const keys[] = { "productName", "computeSlices", "memorySlices",
					    "profiles", "notes", NULL };
	const struct doc_node *list;
	struct hwdb_mig_profile *profs;
	int64_t cs, ms;
	int rc;

	if ((rc = check_entry(c, e, keys)) ||
	    (rc = get_str(c, e, "productName", "productName", true, &g->product_name)))
		return rc;
	c->entry_name = g->product_name;
	if ((rc = get_count(c, e, "computeSlices", 1, HWDB_MIG_MAX_SLICES - 1, false, &cs)) ||
	    (rc = get_count(c, e, "memorySlices", 1, HWDB_MIG_MAX_SLICES, false, &ms)))
		return rc;
	g->compute_slices = (int)cs;
	g->memory_slices = (int)ms;
	list = doc_get(e, "profiles");
	if (is_null(list) || list->kind != DOC_SEQ || list->u.seq.n == 0 ||
	    list->u.seq.n > HWDB_MIG_MAX_PROFILES)
		return fail(c, list ? list : e, "profiles", "required: a list of 1 to %d profiles",
			    HWDB_MIG_MAX_PROFILES);
	profs = doc_arena_alloc(c->arena, list->u.seq.n * sizeof(*profs));
	if (!profs)
		return oom(c);
	memset(profs, 0, list->u.seq.n * sizeof(*profs));
	for (size_t i = 0; i < list->u.seq.n; i++) {
		if ((rc = decode_mig_profile(c, list->u.seq.items[i], g, &profs[i])))
			return rc;
		for (size_t j = 0; j < i; j++)
			if (!strcmp(profs[j].name, profs[i].name))
				return fail(c, list->u.seq.items[i], "profiles",
					    "duplicate profile %s", profs[i].name);
	}
	g->profiles = profs;
	g->n_profiles = list->u.seq.n;
	return decode_notes(c, e, &g->notes, &g->n_notes);
}

int hwdb_source_load_mig(const char *path, struct hwdb_source **out, struct dt_err *err)
{
	const struct doc_node *root, *list;
	struct doc_stream *st = NULL;
	struct hwdb_source *s = NULL;
	struct ctx c;
	int rc;

	*out = NULL;
	if ((rc = doc_load_file(path, &st, err)))
		return rc;
	if ((rc = source_start(st, path, "migGpus", &root, &s, err)))
		goto out;
	c = (struct ctx){ .file = path, .section = "migGpus", .arena = s->arena, .err = err };
	if ((rc = pci_list(&c, root, "migGpus", &list)))
		goto out;
	s->n_mig_gpus = list ? list->u.seq.n : 0;
	s->mig_gpus = doc_arena_alloc(s->arena, (s->n_mig_gpus + 1) * sizeof(*s->mig_gpus));
	if (!s->mig_gpus) {
		rc = dt_err_set(err, -ENOMEM, "%s: out of memory", path);
		goto out;
	}
	for (c.index = 0; c.index < s->n_mig_gpus; c.index++) {
		memset(&s->mig_gpus[c.index], 0, sizeof(s->mig_gpus[0]));
		c.entry_name = NULL;
		if ((rc = decode_mig_gpu(&c, list->u.seq.items[c.index], &s->mig_gpus[c.index])))
			goto out;
		for (size_t j = 0; j < c.index; j++)
			if (!strcmp(s->mig_gpus[j].product_name, s->mig_gpus[c.index].product_name)) {
				rc = fail(&c, list->u.seq.items[c.index], "productName",
					  "duplicate entry");
				goto out;
			}
	}
	*out = s;
	s = NULL;
	rc = 0;
out:
	hwdb_source_free(s);
	doc_stream_free(st);
	return rc;
}

/* ---- Prices per region ---- */

static int decode_region(struct ctx *c, const struct doc_node *e, struct hwdb_source *s)
{
	static const char *const keys[] = { "region", "source", "stale", "prices", NULL };
	const struct doc_node *list;
	const char *region, *source;
	int rc;

	if ((rc = check_entry(c, e, keys)) ||
	    (rc = get_str(c, e, "region", "region", true, &region)) ||
	    (rc = get_str(c, e, "source", "source", true, &source)))
		return rc;
	c->entry_name = region;
	if (!hwdb_source_valid_region(region))
		return fail(c, doc_get(e, "region"), "region", "not an AWS region name");
	if (!strcmp(region, HWDB_DEFAULT_REGION))
		return fail(c, doc_get(e, "region"), "region", "%s's prices are the entries' "
			    "onDemandPricePerHour", HWDB_DEFAULT_REGION);
	for (size_t i = 0; i < s->n_regions; i++)
		if (!strcmp(s->regions[i], region))
			return fail(c, e, "region", "duplicate region");
	s->regions[s->n_regions++] = region;
	list = doc_get(e, "prices");
	if (is_null(list) || list->kind != DOC_SEQ)
		return fail(c, list ? list : e, "prices", "required: a list of maps of type to price");
	for (size_t i = 0; i < list->u.seq.n; i++) {
		const struct doc_node *m = list->u.seq.items[i];
		char field[96];

		snprintf(field, sizeof(field), "prices[%zu]", i);
		if (m->kind != DOC_MAP)
			return fail(c, m, field, "must be a map of instance type to price");
		for (size_t j = 0; j < m->u.map.n; j++) {
			struct hwdb_source_price *p;
			bool present;

			if (DT_GROW(s->prices, s->cap_prices, s->n_prices + 1))
				return oom(c);
			p = &s->prices[s->n_prices];
			p->region = region;
			p->type = m->u.map.pairs[j].key->text;
			snprintf(field, sizeof(field), "prices[%zu].%s", i, p->type);
			if ((rc = get_number(c, m, p->type, field, &present, &p->price)))
				return rc;
			if (!present)
				return fail(c, m, field, "must be a price per hour");
			if (!(p->type = doc_arena_strdup(c->arena, p->type)))
				return oom(c);
			s->n_prices++;
		}
	}
	return 0;
}

int hwdb_source_load_prices(const char *path, struct hwdb_source **out, struct dt_err *err)
{
	const struct doc_node *root, *list;
	struct doc_stream *st = NULL;
	struct hwdb_source *s = NULL;
	struct ctx c;
	int rc;

	*out = NULL;
	if ((rc = doc_load_file(path, &st, err)))
		return rc;
	if ((rc = source_start(st, path, "regions", &root, &s, err)))
		goto out;
	c = (struct ctx){ .file = path, .section = "regions", .arena = s->arena, .err = err };
	if ((rc = pci_list(&c, root, "regions", &list)))
		goto out;
	s->regions = doc_arena_alloc(s->arena, ((list ? list->u.seq.n : 0) + 1) * sizeof(char *));
	if (!s->regions) {
		rc = dt_err_set(err, -ENOMEM, "%s: out of memory", path);
		goto out;
	}
	for (c.index = 0; list && c.index < list->u.seq.n; c.index++) {
		c.entry_name = NULL;
		if ((rc = decode_region(&c, list->u.seq.items[c.index], s)))
			goto out;
	}
	*out = s;
	s = NULL;
	rc = 0;
out:
	hwdb_source_free(s);
	doc_stream_free(st);
	return rc;
}

/* ---- Writing an entry back ---- */

static bool attr_equal(const struct hwdb_attr *a, const struct hwdb_attr *b)
{
	if (strcmp(a->name, b->name) || a->type != b->type)
		return false;
	switch (a->type) {
	case HWDB_ATTR_INT:
		return a->i == b->i;
	case HWDB_ATTR_BOOL:
		return a->b == b->b;
	default:
		return !strcmp(a->str, b->str);
	}
}

/* Whether every device of the list has attribute a with a's value. */
static bool shared_by_all(const struct hwdb_device *devs, size_t n, const struct hwdb_attr *a)
{
	for (size_t i = 0; i < n; i++) {
		const struct hwdb_attr *o = hwdb_device_attr(&devs[i], a->name);

		if (!o || !attr_equal(o, a))
			return false;
	}
	return true;
}

static struct doc_node *encode_attr_value(struct doc_arena *ar, const struct hwdb_attr *a)
{
	struct doc_node *m;

	switch (a->type) {
	case HWDB_ATTR_INT:
		return doc_new_int(ar, a->i);
	case HWDB_ATTR_BOOL:
		return doc_new_bool(ar, a->b);
	case HWDB_ATTR_VERSION:
		m = doc_new_map(ar);
		if (!m || doc_map_set(ar, m, "version", doc_new_string(ar, a->str)))
			return NULL;
		return m;
	default:
		return doc_new_string(ar, a->str);
	}
}

static int put_str(struct doc_arena *ar, struct doc_node *m, const char *k, const char *v)
{
	return doc_map_set(ar, m, k, v ? doc_new_string(ar, v) : doc_new_null(ar));
}

static int put_pci_id(struct doc_arena *ar, struct doc_node *m, uint16_t vendor, uint16_t device)
{
	char buf[16];

	if (!device)
		return doc_map_set(ar, m, "pciId", doc_new_null(ar));
	snprintf(buf, sizeof(buf), "%04x:%04x", vendor, device);
	return put_str(ar, m, "pciId", buf);
}

/* The `gpu:` / `efa:` map: shared attributes once, devices with what
 * differs. count replaces devices when nothing but the number is known. */
static struct doc_node *encode_kind(struct doc_arena *ar, const struct hwdb_device *devs, size_t n,
				    const char *kind, uint16_t vendor, uint16_t device)
{
	struct doc_node *m = doc_new_map(ar), *attrs = doc_new_map(ar), *list;
	bool bare = true, same_memory = true;
	int rc = 0;

	if (!m || !attrs)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		const struct hwdb_device *d = &devs[i];
		char def[32];

		snprintf(def, sizeof(def), "%s-%zu", kind, i);
		if ((d->memory != devs[0].memory &&
		     (!d->memory || !devs[0].memory || strcmp(d->memory, devs[0].memory))))
			same_memory = false;
		if (d->pcie_root || d->numa_node >= 0 || strcmp(d->name, def) ||
		    d->n_attrs != devs[0].n_attrs)
			bare = false;
		for (size_t j = 0; j < d->n_attrs && bare; j++)
			bare = shared_by_all(devs, n, &d->attrs[j]);
	}
	rc |= put_pci_id(ar, m, vendor, device);
	if (kind[0] == 'g' && same_memory && devs[0].memory)
		rc |= put_str(ar, m, "memory", devs[0].memory);
	for (size_t j = 0; j < devs[0].n_attrs; j++)
		if (shared_by_all(devs, n, &devs[0].attrs[j]))
			rc |= doc_map_set(ar, attrs, devs[0].attrs[j].name,
					  encode_attr_value(ar, &devs[0].attrs[j]));
	rc |= doc_map_set(ar, m, "attributes", attrs);
	if (bare && (kind[0] != 'g' || same_memory)) {
		rc |= doc_map_set(ar, m, "count", doc_new_int(ar, (int64_t)n));
		return rc ? NULL : m;
	}
	list = doc_new_seq(ar);
	if (!list)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		const struct hwdb_device *d = &devs[i];
		struct doc_node *dm = doc_new_map(ar), *over = doc_new_map(ar);
		char def[32];

		if (!dm || !over)
			return NULL;
		snprintf(def, sizeof(def), "%s-%zu", kind, i);
		if (strcmp(d->name, def))
			rc |= put_str(ar, dm, "name", d->name);
		if (d->pcie_root)
			rc |= put_str(ar, dm, "pcieRoot", d->pcie_root);
		if (d->numa_node >= 0)
			rc |= doc_map_set(ar, dm, "numaNode", doc_new_int(ar, d->numa_node));
		if (kind[0] == 'g' && !same_memory && d->memory)
			rc |= put_str(ar, dm, "memory", d->memory);
		for (size_t j = 0; j < d->n_attrs; j++)
			if (!shared_by_all(devs, n, &d->attrs[j]))
				rc |= doc_map_set(ar, over, d->attrs[j].name,
						  encode_attr_value(ar, &d->attrs[j]));
		if (over->u.map.n)
			rc |= doc_map_set(ar, dm, "attributes", over);
		rc |= doc_seq_push(ar, list, dm);
	}
	rc |= doc_map_set(ar, m, "devices", list);
	return rc ? NULL : m;
}

struct doc_node *hwdb_source_encode_type(const struct hwdb_type *t, struct doc_arena *ar)
{
	struct doc_node *m = doc_new_map(ar);
	int rc = 0;

	if (!m)
		return NULL;
	rc |= put_str(ar, m, "name", t->name);
	rc |= put_str(ar, m, "family", t->family);
	rc |= doc_map_set(ar, m, "vcpu", t->vcpu ? doc_new_int(ar, t->vcpu) : doc_new_null(ar));
	rc |= doc_map_set(ar, m, "memoryMiB",
			  t->memory_mib ? doc_new_int(ar, t->memory_mib) : doc_new_null(ar));
	rc |= put_str(ar, m, "arch", t->arch);
	rc |= doc_map_set(ar, m, "onDemandPricePerHour",
			  t->has_price ? doc_new_float(ar, t->price) : doc_new_null(ar));
	if (t->n_prices) {
		struct doc_node *pm = doc_new_map(ar);

		if (!pm)
			return NULL;
		for (size_t i = 0; i < t->n_prices; i++)
			rc |= doc_map_set(ar, pm, t->prices[i].region,
					  doc_new_float(ar, t->prices[i].price));
		rc |= doc_map_set(ar, m, "onDemandPrices", pm);
	}
	rc |= doc_map_set(ar, m, "draMetadata", doc_new_bool(ar, t->dra_metadata));
	rc |= doc_map_set(ar, m, "maxEfaInterfaces", doc_new_int(ar, t->max_efa_interfaces));
	rc |= doc_map_set(ar, m, "networkCards", doc_new_int(ar, t->network_cards));
	rc |= doc_map_set(ar, m, "networkBandwidthGbps", doc_new_float(ar, t->network_bandwidth_gbps));
	if (t->n_gpus)
		rc |= doc_map_set(ar, m, "gpu", encode_kind(ar, t->gpus, t->n_gpus, "gpu",
							    t->gpu_vendor, t->gpu_device));
	if (t->n_efas)
		rc |= doc_map_set(ar, m, "efa", encode_kind(ar, t->efas, t->n_efas, "efa",
							    HWDB_PCI_VENDOR_AMAZON, t->efa_device));
	if (t->accel_kind) {
		struct doc_node *am = doc_new_map(ar);

		if (!am)
			return NULL;
		rc |= put_str(ar, am, "kind", t->accel_kind);
		rc |= doc_map_set(ar, am, "count", t->accel_count >= 0
				  ? doc_new_int(ar, t->accel_count) : doc_new_null(ar));
		rc |= doc_map_set(ar, m, "accelerators", am);
	}
	if (t->n_notes) {
		struct doc_node *notes = doc_new_seq(ar);

		if (!notes)
			return NULL;
		for (size_t i = 0; i < t->n_notes; i++)
			rc |= doc_seq_push(ar, notes, doc_new_string(ar, t->notes[i]));
		rc |= doc_map_set(ar, m, "notes", notes);
	}
	return rc ? NULL : m;
}
