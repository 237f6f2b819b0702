/* model_decode.c - from document trees to typed objects.
 *
 * One object per document or List item, dispatched on apiVersion and kind.
 * Fields dratopo does not know are ignored, as kubectl's client-side
 * decoding ignores them; a field of the wrong type is reported with its
 * path and skipped, and decoding goes on, so one pass reports every
 * problem of a file. null counts as absent, as in the API's JSON decoding.
 * Every string and array is copied into the set's arena. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "model_internal.h"
#include "strbuf.h"

/* Nesting of List inside List that we follow. */
#define LIST_MAX_DEPTH 8
/* Manifests read from one directory. */
#define LOAD_DIR_MAX_FILES 100000

struct dec {
	struct model_set *set;
	struct dt_diags *errs;
	const char *file;               /* in the set's arena */
	int document;
	int item;                       /* index in the outermost List, or -1 */
	char item_path[LIST_MAX_DEPTH * 12];    /* "1.0": the item in nested Lists */
	const struct model_object *obj; /* NULL while apiVersion/kind are read */
	bool v1beta1;                   /* the object is resource.k8s.io/v1beta1: convert */
	/* Inside a type that is read field by field (the DRA kinds' specs):
	 * the shared helpers (taints, tolerations, node selectors) warn about
	 * unknown fields there, and only there. */
	bool closed;
	struct model_path path;
	int oom;
	size_t n_errors;
};

/* ---- Reporting ---- */

static void repr(struct strbuf *sb, const struct doc_node *n)
{
	switch (n->kind) {
	case DOC_STRING:
		model_quote(sb, n->text ? n->text : "", n->text ? n->text_len : 0);
		break;
	case DOC_SEQ:
		sb_puts(sb, "[...]");
		break;
	case DOC_MAP:
		sb_puts(sb, "{...}");
		break;
	case DOC_NULL:
		sb_puts(sb, "null");
		break;
	default:
		if (n->text && n->text_len <= 64)
			sb_append(sb, n->text, n->text_len);
		else if (n->kind == DOC_BOOL)
			sb_puts(sb, n->u.b ? "true" : "false");
		else if (n->kind == DOC_INT)
			sb_printf(sb, "%" PRId64, n->u.i);
		else
			sb_printf(sb, "%g", n->u.f);
	}
}

static void prefix(struct dec *d, struct strbuf *sb)
{
	char buf[1024];

	if (d->obj) {
		model_object_prefix(d->obj, buf, sizeof(buf));
		sb_puts(sb, buf);
	} else if (d->item >= 0) {
		sb_printf(sb, "%s: document %d, item %s: ", d->file, d->document, d->item_path);
	} else {
		sb_printf(sb, "%s: document %d: ", d->file, d->document);
	}
	if (d->path.len)
		sb_printf(sb, "%s: ", d->path.buf);
}

static void report(struct dec *d, const struct doc_node *bad, const char *msg)
{
	struct strbuf sb = STRBUF_INIT;

	d->n_errors++;
	prefix(d, &sb);
	if (bad) {
		sb_puts(&sb, "Invalid value: ");
		repr(&sb, bad);
		sb_puts(&sb, ": ");
	}
	sb_puts(&sb, msg);
	if (sb_error(&sb) || (d->errs && dt_diags_add(d->errs, "%s", sb_str(&sb))))
		d->oom = 1;
	sb_free(&sb);
}

/* ---- Unknown fields ----
 *
 * Unknown fields are ignored, as kubectl's client-side decoding ignores
 * them, but inside the types dratopo reads field by field a key it does not
 * know is almost always a typo (`cout: 2` silently meaning count 1), so each
 * one is a warning: `PREFIX PATH: unknown field "cout"`. Types dratopo
 * keeps loosely (metadata, status, most of a pod, EC2NodeClass) are open. */

/* The field lists of closed types, NULL-terminated. */
static const char *const f_dra_object[] = { "apiVersion", "kind", "metadata", "spec", "status",
					    NULL };
static const char *const f_class_spec[] = { "selectors", "config", "extendedResourceName",
					    NULL };
static const char *const f_selector[] = { "cel", NULL };
static const char *const f_cel[] = { "expression", NULL };
static const char *const f_config[] = { "requests", "opaque", "source", NULL };
static const char *const f_opaque[] = { "driver", "parameters", NULL };
static const char *const f_slice_spec[] = {
	"driver", "pool", "nodeName", "nodeSelector", "allNodes", "perDeviceNodeSelection",
	"devices", "sharedCounters", NULL
};
static const char *const f_pool[] = { "name", "generation", "resourceSliceCount", NULL };
static const char *const f_name[] = { "name", NULL };
static const char *const f_device_body[] = {
	"attributes", "capacity", "consumesCounters", "nodeName", "nodeSelector", "allNodes",
	"taints", "bindsToNode", "bindingConditions", "bindingFailureConditions",
	"allowMultipleAllocations", NULL
};
static const char *const f_v1beta1_device[] = { "name", "basic", NULL };
static const char *const f_attribute[] = { "int", "bool", "string", "version", NULL };
static const char *const f_capacity[] = { "value", "requestPolicy", NULL };
static const char *const f_request_policy[] = { "default", "validValues", "validRange", NULL };
static const char *const f_range[] = { "min", "max", "step", NULL };
static const char *const f_counter[] = { "value", NULL };
static const char *const f_counters[] = { "counters", NULL };
static const char *const f_taint[] = { "key", "value", "effect", "timeAdded", NULL };
static const char *const f_toleration[] = { "key", "operator", "value", "effect",
					    "tolerationSeconds", NULL };
static const char *const f_node_selector[] = { "nodeSelectorTerms", NULL };
static const char *const f_term[] = { "matchExpressions", "matchFields", NULL };
static const char *const f_node_requirement[] = { "key", "operator", "values", NULL };
static const char *const f_claim_spec[] = { "devices", NULL };
static const char *const f_device_claim[] = { "requests", "constraints", "config", NULL };
static const char *const f_request[] = { "name", "exactly", "firstAvailable", NULL };
static const char *const f_v1beta1_request[] = { "name", "firstAvailable", NULL };
static const char *const f_exact[] = {
	"deviceClassName", "selectors", "allocationMode", "count", "adminAccess", "tolerations",
	"capacity", NULL
};
static const char *const f_capacity_requirements[] = { "requests", NULL };
static const char *const f_constraint[] = { "requests", "matchAttribute", "distinctAttribute",
					    NULL };
static const char *const f_template_spec[] = { "metadata", "spec", NULL };
static const char *const f_pod_claim[] = { "name", "resourceClaimName",
					   "resourceClaimTemplateName", NULL };
static const char *const f_resources[] = { "limits", "requests", "claims", NULL };
static const char *const f_container_claim[] = { "name", "request", NULL };

static bool in_list(const char *const *list, const char *key)
{
	for (size_t i = 0; list && list[i]; i++)
		if (!strcmp(list[i], key))
			return true;
	return false;
}

/* Warn about each key of map m in neither known nor extra (either may be
 * NULL). The path is the map's; the message names the key. */
static void closed_fields(struct dec *d, const struct doc_node *m, const char *const *known,
			  const char *const *extra)
{
	if (!m || m->kind != DOC_MAP)
		return;
	for (size_t i = 0; i < m->u.map.n; i++) {
		const struct doc_node *k = m->u.map.pairs[i].key;
		const char *key = k->text ? k->text : "";
		struct strbuf sb = STRBUF_INIT;

		if (in_list(known, key) || in_list(extra, key))
			continue;
		if (d->set->warnings.n >= DT_DIAG_MAX) {
			d->set->warnings.dropped++;     /* counted, not stored */
			continue;
		}
		prefix(d, &sb);
		sb_puts(&sb, "unknown field ");
		model_quote(&sb, key, k->text ? k->text_len : 0);
		if (sb_error(&sb) || dt_diags_add(&d->set->warnings, "%s", sb_str(&sb)))
			d->oom = 1;
		sb_free(&sb);
	}
}

/* The shared helpers' types: closed inside DRA objects only. */
static void closed_if(struct dec *d, const struct doc_node *m, const char *const *known)
{
	if (d->closed)
		closed_fields(d, m, known, NULL);
}

static void *dalloc(struct dec *d, size_t n, size_t size)
{
	void *p = model_set_calloc(d->set, n, size);

	if (!p)
		d->oom = 1;
	return p;
}

/* Allocate n elements for ptr; 0 elements leaves it NULL. */
#define DALLOC(d, ptr, n) ((ptr) = (n) ? dalloc((d), (n), sizeof(*(ptr))) : NULL)

static const char *dstrdup(struct dec *d, const struct doc_node *n)
{
	const char *s = model_set_strndup(d->set, n->text ? n->text : "", n->text ? n->text_len : 0);

	if (!s)
		d->oom = 1;
	return s;
}

/* ---- Field helpers ----
 *
 * Each takes the map holding the field and the field's name, pushes the
 * name onto the path for its messages and pops it again. */

static const struct doc_node *child(const struct doc_node *m, const char *key)
{
	const struct doc_node *n = m ? doc_get(m, key) : NULL;

	return n && n->kind != DOC_NULL ? n : NULL;
}

static bool is_map(struct dec *d, const struct doc_node *n)
{
	if (n->kind == DOC_MAP)
		return true;
	report(d, n, "must be an object");
	return false;
}

static bool is_seq(struct dec *d, const struct doc_node *n)
{
	if (n->kind == DOC_SEQ)
		return true;
	report(d, n, "must be a list");
	return false;
}

/* The map under key, or NULL (absent or reported). */
static const struct doc_node *get_map(struct dec *d, const struct doc_node *m, const char *key)
{
	const struct doc_node *n = child(m, key);
	size_t mark;

	if (!n)
		return NULL;
	mark = model_path_field(&d->path, key);
	if (!is_map(d, n))
		n = NULL;
	model_path_pop(&d->path, mark);
	return n;
}

/* The list under key, or NULL (absent, empty or reported). */
static const struct doc_node *get_seq(struct dec *d, const struct doc_node *m, const char *key)
{
	const struct doc_node *n = child(m, key);
	size_t mark;

	if (!n)
		return NULL;
	mark = model_path_field(&d->path, key);
	if (!is_seq(d, n) || n->u.seq.n == 0)
		n = NULL;
	model_path_pop(&d->path, mark);
	return n;
}

static const char *node_str(struct dec *d, const struct doc_node *n)
{
	if (n->kind == DOC_BOOL && n->text && strcmp(n->text, "true") && strcmp(n->text, "false")) {
		/* YAML 1.1 reads y, n, yes, off, ... as booleans. */
		report(d, n, "must be a string (YAML reads this word as a boolean; quote it)");
		return NULL;
	}
	if (n->kind != DOC_STRING) {
		report(d, n, "must be a string");
		return NULL;
	}
	if (n->text && memchr(n->text, '\0', n->text_len)) {
		report(d, n, "must not contain NUL characters");
		return NULL;
	}
	return dstrdup(d, n);
}

static const char *get_str(struct dec *d, const struct doc_node *m, const char *key)
{
	const struct doc_node *n = child(m, key);
	const char *s;
	size_t mark;

	if (!n)
		return NULL;
	mark = model_path_field(&d->path, key);
	s = node_str(d, n);
	model_path_pop(&d->path, mark);
	return s;
}

/* Integers: JSON numbers without fraction that fit the field's Go type. */
static bool node_int(struct dec *d, const struct doc_node *n, int bits, int64_t *out)
{
	int64_t lo = bits == 32 ? INT32_MIN : INT64_MIN;
	int64_t hi = bits == 32 ? INT32_MAX : INT64_MAX;

	if (n->kind == DOC_INT) {
		if (n->u.i < lo || n->u.i > hi) {
			report(d, n, bits == 32 ?
			       "must fit in a 32-bit integer" : "must fit in a 64-bit integer");
			return false;
		}
		*out = n->u.i;
		return true;
	}
	if (n->kind == DOC_FLOAT && n->text && n->text_len &&
	    strspn(n->text + (n->text[0] == '-'), "0123456789") ==
	    n->text_len - (n->text[0] == '-')) {
		report(d, n, bits == 32 ? "must fit in a 32-bit integer" :
		       "must fit in a 64-bit integer");
		return false;
	}
	report(d, n, "must be an integer");
	return false;
}

static void get_int(struct dec *d, const struct doc_node *m, const char *key, int bits,
		    bool *has, int64_t *out)
{
	const struct doc_node *n = child(m, key);
	size_t mark;

	if (!n)
		return;
	mark = model_path_field(&d->path, key);
	if (node_int(d, n, bits, out) && has)
		*has = true;
	model_path_pop(&d->path, mark);
}

static void get_bool(struct dec *d, const struct doc_node *m, const char *key,
		     bool *has, bool *out)
{
	const struct doc_node *n = child(m, key);
	size_t mark;

	if (!n)
		return;
	mark = model_path_field(&d->path, key);
	if (n->kind == DOC_BOOL) {
		*out = n->u.b;
		if (has)
			*has = true;
	} else {
		report(d, n, "must be a boolean");
	}
	model_path_pop(&d->path, mark);
}

/* Quantities are written as strings or numbers ("80Gi", 4, 0.5). */
static bool node_quantity(struct dec *d, const struct doc_node *n, struct quantity *out)
{
	struct dt_err err;

	if (n->kind != DOC_STRING && n->kind != DOC_INT && n->kind != DOC_FLOAT) {
		report(d, n, "must be a quantity (a string or a number)");
		return false;
	}
	if (!n->text || quantity_parse(n->text, n->text_len, out, &err)) {
		report(d, n, n->text ? err.msg : "unable to parse quantity");
		return false;
	}
	return true;
}

static void get_quantity(struct dec *d, const struct doc_node *m, const char *key,
			 bool *has, struct quantity *out)
{
	const struct doc_node *n = child(m, key);
	size_t mark;

	if (!n)
		return;
	mark = model_path_field(&d->path, key);
	if (node_quantity(d, n, out) && has)
		*has = true;
	model_path_pop(&d->path, mark);
}

static void get_str_list(struct dec *d, const struct doc_node *m, const char *key,
			 const char ***out, size_t *n_out)
{
	const struct doc_node *seq = get_seq(d, m, key);
	size_t mark, n = 0;

	if (!seq)
		return;
	DALLOC(d, *out, seq->u.seq.n);
	if (!*out)
		return;
	mark = model_path_field(&d->path, key);
	for (size_t i = 0; i < seq->u.seq.n; i++) {
		size_t im = model_path_index(&d->path, i);
		const struct doc_node *it = seq->u.seq.items[i];
		const char *s = it->kind == DOC_NULL ? NULL : node_str(d, it);

		/* A null item reads as "" in Go, and so does one reported as
		 * the wrong type; keeping the slot keeps later messages'
		 * indexes those of the file. */
		(*out)[n++] = s ? s : "";
		model_path_pop(&d->path, im);
	}
	model_path_pop(&d->path, mark);
	*n_out = n;
}

static void get_kv(struct dec *d, const struct doc_node *m, const char *key,
		   struct model_kv **out, size_t *n_out)
{
	const struct doc_node *map = get_map(d, m, key);
	size_t mark, n = 0;

	if (!map || !map->u.map.n)
		return;
	DALLOC(d, *out, map->u.map.n);
	if (!*out)
		return;
	mark = model_path_field(&d->path, key);
	for (size_t i = 0; i < map->u.map.n; i++) {
		const struct doc_pair *p = &map->u.map.pairs[i];
		const char *k = dstrdup(d, p->key);
		size_t km = model_path_key(&d->path, k ? k : "");
		const char *v = p->value->kind == DOC_NULL ? "" : node_str(d, p->value);

		if (k && v) {
			(*out)[n].key = k;
			(*out)[n].value = v;
			n++;
		}
		model_path_pop(&d->path, km);
	}
	model_path_pop(&d->path, mark);
	*n_out = n;
}

static void get_resource_list(struct dec *d, const struct doc_node *m, const char *key,
			      struct model_resource_list *out)
{
	const struct doc_node *map = get_map(d, m, key);
	size_t mark, n = 0;

	if (!map || !map->u.map.n)
		return;
	DALLOC(d, out->items, map->u.map.n);
	if (!out->items)
		return;
	mark = model_path_field(&d->path, key);
	for (size_t i = 0; i < map->u.map.n; i++) {
		const struct doc_pair *p = &map->u.map.pairs[i];
		const char *k = dstrdup(d, p->key);
		size_t km = model_path_key(&d->path, k ? k : "");

		if (k && node_quantity(d, p->value, &out->items[n].value)) {
			out->items[n].name = k;
			n++;
		}
		model_path_pop(&d->path, km);
	}
	model_path_pop(&d->path, mark);
	out->n_items = n;
}

/* Iterate over a list field: for each item that is a map, call fn with
 * the item's path pushed. Returns the number of slots (items) so that the
 * caller's array keeps the file's indexes. */
#define FOR_EACH_MAP(d, list_, i, item)                                            \
	for (size_t i = 0, i##_mark = 0; (list_) && i < (list_)->u.seq.n; i++)     \
		if ((i##_mark = model_path_index(&(d)->path, i)),                  \
		    (item = (list_)->u.seq.items[i]),                              \
		    (is_map((d), item) ? 1 : (model_path_pop(&(d)->path, i##_mark), 0)))

#define END_EACH(d, i) model_path_pop(&(d)->path, i##_mark)

/* The list of maps under key as a new array of elements of size bytes in
 * the set's arena (NULL when absent or empty): fn decodes each item into
 * its slot with the item's path pushed; items that are not maps are
 * reported and get no slot. *n_out is the number of slots filled. */
typedef void (*item_fn)(struct dec *d, const struct doc_node *item, void *slot,
			const void *ctx);

static void *get_list(struct dec *d, const struct doc_node *m, const char *key, size_t size,
		      size_t *n_out, item_fn fn, const void *ctx)
{
	const struct doc_node *seq = get_seq(d, m, key);
	const struct doc_node *it;
	char *arr;
	size_t mark;

	if (!seq || !(arr = dalloc(d, seq->u.seq.n, size)))
		return NULL;
	mark = model_path_field(&d->path, key);
	FOR_EACH_MAP(d, seq, i, it) {
		fn(d, it, arr + (*n_out)++ * size, ctx);
		END_EACH(d, i);
	}
	model_path_pop(&d->path, mark);
	return arr;
}

/* get_list into a typed array: GET_LIST(d, m, "taints", t->taints, t->n_taints, fn, ctx). */
#define GET_LIST(d, m, key, arr, n, fn, ctx) \
	((arr) = get_list((d), (m), (key), sizeof(*(arr)), &(n), (fn), (ctx)))

/* ---- Shared pieces ---- */

static void item_owner_ref(struct dec *d, const struct doc_node *it, void *slot, const void *ctx)
{
	struct model_owner_ref *r = slot;

	r->api_version = get_str(d, it, "apiVersion");
	r->kind = get_str(d, it, "kind");
	r->name = get_str(d, it, "name");
	r->uid = get_str(d, it, "uid");
	get_bool(d, it, "controller", &r->has_controller, &r->controller);
	get_bool(d, it, "blockOwnerDeletion", &r->has_block_owner_deletion,
		 &r->block_owner_deletion);
	(void)ctx;
}

static void dec_meta(struct dec *d, const struct doc_node *m, struct model_meta *meta)
{
	meta->name = get_str(d, m, "name");
	meta->generate_name = get_str(d, m, "generateName");
	meta->ns = get_str(d, m, "namespace");
	meta->uid = get_str(d, m, "uid");
	meta->resource_version = get_str(d, m, "resourceVersion");
	meta->creation_timestamp = get_str(d, m, "creationTimestamp");
	get_kv(d, m, "labels", &meta->labels, &meta->n_labels);
	get_kv(d, m, "annotations", &meta->annotations, &meta->n_annotations);
	GET_LIST(d, m, "ownerReferences", meta->owner_refs, meta->n_owner_refs, item_owner_ref,
		 NULL);
}

static void get_meta(struct dec *d, const struct doc_node *m, const char *key,
		     struct model_meta *meta)
{
	const struct doc_node *md = get_map(d, m, key);
	size_t mark;

	if (!md)
		return;
	mark = model_path_field(&d->path, key);
	dec_meta(d, md, meta);
	model_path_pop(&d->path, mark);
}

static enum model_selector_op parse_op(const char *s)
{
	static const char *const names[] = {
		[MODEL_OP_IN] = "In", [MODEL_OP_NOT_IN] = "NotIn",
		[MODEL_OP_EXISTS] = "Exists", [MODEL_OP_DOES_NOT_EXIST] = "DoesNotExist",
		[MODEL_OP_GT] = "Gt", [MODEL_OP_LT] = "Lt",
	};

	for (int i = 0; s && i < MODEL_OP_INVALID; i++)
		if (!strcmp(s, names[i]))
			return (enum model_selector_op)i;
	return MODEL_OP_INVALID;
}

static void dec_requirement(struct dec *d, const struct doc_node *m, struct model_requirement *r)
{
	closed_if(d, m, f_node_requirement);
	r->key = get_str(d, m, "key");
	r->operator_text = get_str(d, m, "operator");
	r->op = parse_op(r->operator_text);
	get_str_list(d, m, "values", &r->values, &r->n_values);
	get_int(d, m, "minValues", 32, &r->has_min_values, &r->min_values);
}

static void item_requirement(struct dec *d, const struct doc_node *it, void *slot, const void *ctx)
{
	dec_requirement(d, it, slot);
	(void)ctx;
}

static void get_requirements(struct dec *d, const struct doc_node *m, const char *key,
			     struct model_requirement **out, size_t *n_out)
{
	GET_LIST(d, m, key, *out, *n_out, item_requirement, NULL);
}

static struct model_node_selector *get_node_selector(struct dec *d, const struct doc_node *m,
						     const char *key)
{
	const struct doc_node *ns = get_map(d, m, key);
	const struct doc_node *terms, *it;
	struct model_node_selector *sel;
	size_t mark;

	if (!ns)
		return NULL;
	DALLOC(d, sel, 1);
	if (!sel)
		return NULL;
	mark = model_path_field(&d->path, key);
	closed_if(d, ns, f_node_selector);
	terms = get_seq(d, ns, "nodeSelectorTerms");
	if (terms) {
		size_t tm = model_path_field(&d->path, "nodeSelectorTerms");

		DALLOC(d, sel->terms, terms->u.seq.n);
		FOR_EACH_MAP(d, terms, i, it) {
			struct model_node_selector_term *t;

			if (!sel->terms) {
				END_EACH(d, i);
				break;
			}
			t = &sel->terms[sel->n_terms++];
			closed_if(d, it, f_term);
			get_requirements(d, it, "matchExpressions", &t->match_expressions,
					 &t->n_match_expressions);
			get_requirements(d, it, "matchFields", &t->match_fields,
					 &t->n_match_fields);
			END_EACH(d, i);
		}
		model_path_pop(&d->path, tm);
	}
	model_path_pop(&d->path, mark);
	return sel;
}

static void dec_taint(struct dec *d, const struct doc_node *m, struct model_taint *t)
{
	closed_if(d, m, f_taint);
	t->key = get_str(d, m, "key");
	t->value = get_str(d, m, "value");
	t->effect = get_str(d, m, "effect");
	t->time_added = get_str(d, m, "timeAdded");
}

static void item_taint(struct dec *d, const struct doc_node *it, void *slot, const void *ctx)
{
	dec_taint(d, it, slot);
	(void)ctx;
}

static void get_taints(struct dec *d, const struct doc_node *m, const char *key,
		       struct model_taint **out, size_t *n_out)
{
	GET_LIST(d, m, key, *out, *n_out, item_taint, NULL);
}

static void item_toleration(struct dec *d, const struct doc_node *it, void *slot, const void *ctx)
{
	struct model_toleration *t = slot;

	closed_if(d, it, f_toleration);
	t->key = get_str(d, it, "key");
	t->operator_text = get_str(d, it, "operator");
	t->value = get_str(d, it, "value");
	t->effect = get_str(d, it, "effect");
	get_int(d, it, "tolerationSeconds", 64, &t->has_toleration_seconds,
		&t->toleration_seconds);
	(void)ctx;
}

static void get_tolerations(struct dec *d, const struct doc_node *m, const char *key,
			    struct model_toleration **out, size_t *n_out)
{
	GET_LIST(d, m, key, *out, *n_out, item_toleration, NULL);
}

/* ---- resource.k8s.io/v1 ---- */

static void item_selector(struct dec *d, const struct doc_node *it, void *slot, const void *ctx)
{
	struct model_selector *sel = slot;
	const struct doc_node *cel = get_map(d, it, "cel");
	const struct doc_node *e = child(cel, "expression");

	closed_fields(d, it, f_selector, NULL);
	if (cel) {
		size_t cm = model_path_field(&d->path, "cel");

		closed_fields(d, cel, f_cel, NULL);
		model_path_pop(&d->path, cm);
	}
	if (e) {
		size_t cm = model_path_field(&d->path, "cel");
		size_t em = model_path_field(&d->path, "expression");

		if (e->kind != DOC_STRING) {
			report(d, e, "must be a string");
		} else {
			sel->expression = dstrdup(d, e);
			sel->expression_len = e->text ? e->text_len : 0;
		}
		model_path_pop(&d->path, em);
		model_path_pop(&d->path, cm);
	} else if (cel) {
		sel->expression = "";   /* cel: {} - an empty expression */
	}
	(void)ctx;
}

static void get_selectors(struct dec *d, const struct doc_node *m, const char *key,
			  struct model_selector **out, size_t *n_out)
{
	GET_LIST(d, m, key, *out, *n_out, item_selector, NULL);
}

static void item_config(struct dec *d, const struct doc_node *it, void *slot, const void *ctx)
{
	struct model_device_config *c = slot;
	const struct doc_node *op = get_map(d, it, "opaque");

	closed_if(d, it, f_config);
	get_str_list(d, it, "requests", &c->requests, &c->n_requests);
	c->source = get_str(d, it, "source");
	if (op) {
		const struct doc_node *params = doc_get(op, "parameters");
		size_t om = model_path_field(&d->path, "opaque");

		c->has_opaque = true;
		closed_if(d, op, f_opaque);
		c->driver = get_str(d, op, "driver");
		if (params) {
			struct doc_arena *a = model_set_doc_arena(d->set);

			c->parameters = a ? doc_clone(a, params) : NULL;
			if (!c->parameters)
				d->oom = 1;
		}
		model_path_pop(&d->path, om);
	}
	(void)ctx;
}

static void get_configs(struct dec *d, const struct doc_node *m, const char *key,
			struct model_device_config **out, size_t *n_out)
{
	GET_LIST(d, m, key, *out, *n_out, item_config, NULL);
}

static void dec_device_class(struct dec *d, const struct doc_node *spec,
			     struct model_device_class_spec *c)
{
	closed_fields(d, spec, f_class_spec, NULL);
	get_selectors(d, spec, "selectors", &c->selectors, &c->n_selectors);
	get_configs(d, spec, "config", &c->config, &c->n_config);
	c->extended_resource_name = get_str(d, spec, "extendedResourceName");
}

/* attributes: {name: {int|bool|string|version: value}} */
static void dec_attribute(struct dec *d, const struct doc_node *v, struct model_attribute *a)
{
	static const char *const fields[] = { "int", "bool", "string", "version" };
	const struct doc_node *set[4];
	int n_set = 0;

	closed_fields(d, v, f_attribute, NULL);
	for (int f = 0; f < 4; f++) {
		set[f] = child(v, fields[f]);
		n_set += set[f] != NULL;
	}
	/* The API server's wording (validateDeviceAttribute): the bad value is
	 * the attribute when several are set, "" when none is. */
	if (n_set > 1)
		report(d, v, "exactly one value must be specified");
	else if (n_set == 0)
		report(d, NULL, "Invalid value: \"\": exactly one value must be specified");
	if (set[0]) {
		size_t mark = model_path_field(&d->path, "int");

		a->type = CEL_ATTR_INT;
		node_int(d, set[0], 64, &a->v.i);
		model_path_pop(&d->path, mark);
	} else if (set[1]) {
		a->type = CEL_ATTR_BOOL;
		get_bool(d, v, "bool", NULL, &a->v.b);
	} else if (set[2] || set[3]) {
		const char *fname = set[2] ? "string" : "version";
		const struct doc_node *s = set[2] ? set[2] : set[3];
		size_t mark = model_path_field(&d->path, fname);

		a->type = set[2] ? CEL_ATTR_STRING : CEL_ATTR_VERSION;
		if (s->kind != DOC_STRING) {
			report(d, s, "must be a string");
		} else {
			a->v.str.s = dstrdup(d, s);
			a->v.str.len = s->text ? s->text_len : 0;
			if (a->type == CEL_ATTR_VERSION && a->v.str.s)
				a->version_ok = semver_parse(a->v.str.s, a->v.str.len,
							     &a->version, NULL) == 0;
		}
		model_path_pop(&d->path, mark);
	} else {
		a->type = CEL_ATTR_STRING;
		a->v.str.s = "";
	}
}

static void get_attributes(struct dec *d, const struct doc_node *dev, struct model_device *out)
{
	const struct doc_node *map = get_map(d, dev, "attributes");
	size_t mark;

	if (!map || !map->u.map.n)
		return;
	DALLOC(d, out->attributes, map->u.map.n);
	if (!out->attributes)
		return;
	mark = model_path_field(&d->path, "attributes");
	for (size_t i = 0; i < map->u.map.n; i++) {
		const struct doc_pair *p = &map->u.map.pairs[i];
		struct model_attribute *a = &out->attributes[out->n_attributes];
		size_t km = model_path_key(&d->path, p->key->text ? p->key->text : "");

		a->name = dstrdup(d, p->key);
		if (a->name && p->value->kind == DOC_NULL) {
			/* name: null reads as an attribute without a value. */
			report(d, NULL, "Invalid value: \"\": exactly one value must be specified");
		} else if (a->name && is_map(d, p->value)) {
			dec_attribute(d, p->value, a);
			out->n_attributes++;
		}
		model_path_pop(&d->path, km);
	}
	model_path_pop(&d->path, mark);
}

static void dec_request_policy(struct dec *d, const struct doc_node *m,
			       struct model_request_policy *p)
{
	const struct doc_node *vv = get_seq(d, m, "validValues");
	const struct doc_node *range = get_map(d, m, "validRange");

	closed_fields(d, m, f_request_policy, NULL);
	get_quantity(d, m, "default", &p->has_default, &p->def);
	if (vv) {
		size_t mark = model_path_field(&d->path, "validValues");

		DALLOC(d, p->valid_values, vv->u.seq.n);
		for (size_t i = 0; p->valid_values && i < vv->u.seq.n; i++) {
			size_t im = model_path_index(&d->path, i);

			if (node_quantity(d, vv->u.seq.items[i], &p->valid_values[p->n_valid_values]))
				p->n_valid_values++;
			model_path_pop(&d->path, im);
		}
		model_path_pop(&d->path, mark);
	}
	if (range) {
		size_t mark = model_path_field(&d->path, "validRange");

		p->has_valid_range = true;
		closed_fields(d, range, f_range, NULL);
		get_quantity(d, range, "min", &p->has_min, &p->min);
		get_quantity(d, range, "max", &p->has_max, &p->max);
		get_quantity(d, range, "step", &p->has_step, &p->step);
		model_path_pop(&d->path, mark);
	}
}

static void get_capacity(struct dec *d, const struct doc_node *dev, struct model_device *out)
{
	const struct doc_node *map = get_map(d, dev, "capacity");
	size_t mark;

	if (!map || !map->u.map.n)
		return;
	DALLOC(d, out->capacity, map->u.map.n);
	if (!out->capacity)
		return;
	mark = model_path_field(&d->path, "capacity");
	for (size_t i = 0; i < map->u.map.n; i++) {
		const struct doc_pair *p = &map->u.map.pairs[i];
		struct model_capacity *c = &out->capacity[out->n_capacity];
		size_t km = model_path_key(&d->path, p->key->text ? p->key->text : "");

		c->name = dstrdup(d, p->key);
		if (c->name && p->value->kind != DOC_NULL && is_map(d, p->value)) {
			const struct doc_node *pol = get_map(d, p->value, "requestPolicy");
			bool has_value = false;

			closed_fields(d, p->value, f_capacity, NULL);
			get_quantity(d, p->value, "value", &has_value, &c->value);
			if (!has_value && !child(p->value, "value")) {
				size_t vm = model_path_field(&d->path, "value");

				report(d, NULL, "Required value");
				model_path_pop(&d->path, vm);
			}
			if (pol) {
				size_t pm = model_path_field(&d->path, "requestPolicy");

				c->has_request_policy = true;
				dec_request_policy(d, pol, &c->request_policy);
				model_path_pop(&d->path, pm);
			}
			out->n_capacity++;
		}
		model_path_pop(&d->path, km);
	}
	model_path_pop(&d->path, mark);
}

/* counters: {name: {value: quantity}} */
static void get_counters(struct dec *d, const struct doc_node *m, struct model_counter_set *cs)
{
	const struct doc_node *map = get_map(d, m, "counters");
	size_t mark;

	if (!map || !map->u.map.n)
		return;
	DALLOC(d, cs->counters, map->u.map.n);
	if (!cs->counters)
		return;
	mark = model_path_field(&d->path, "counters");
	for (size_t i = 0; i < map->u.map.n; i++) {
		const struct doc_pair *p = &map->u.map.pairs[i];
		struct model_counter *c = &cs->counters[cs->n_counters];
		size_t km = model_path_key(&d->path, p->key->text ? p->key->text : "");

		c->name = dstrdup(d, p->key);
		if (c->name && p->value->kind != DOC_NULL && is_map(d, p->value)) {
			bool has = false;

			closed_fields(d, p->value, f_counter, NULL);
			get_quantity(d, p->value, "value", &has, &c->value);
			if (!has && !child(p->value, "value")) {
				size_t vm = model_path_field(&d->path, "value");

				report(d, NULL, "Required value");
				model_path_pop(&d->path, vm);
			}
			cs->n_counters++;
		}
		model_path_pop(&d->path, km);
	}
	model_path_pop(&d->path, mark);
}

static void item_counter_set(struct dec *d, const struct doc_node *it, void *slot,
			     const void *ctx)
{
	struct model_counter_set *cs = slot;
	const char *name_field = ctx;
	const char *const own[] = { name_field, NULL };

	closed_fields(d, it, f_counters, own);
	cs->name = get_str(d, it, name_field);
	get_counters(d, it, cs);
}

/* Counter sets are named by name_field ("name" or "counterSet"). */
static void get_counter_sets(struct dec *d, const struct doc_node *m, const char *key,
			     const char *name_field, struct model_counter_set **out, size_t *n_out)
{
	GET_LIST(d, m, key, *out, *n_out, item_counter_set, name_field);
}

/* Everything of a device but its name: v1's Device, v1beta1's BasicDevice. */
static void dec_device_body(struct dec *d, const struct doc_node *m, const char *driver,
			    struct model_device *dev)
{
	get_attributes(d, m, dev);
	get_capacity(d, m, dev);
	get_counter_sets(d, m, "consumesCounters", "counterSet", &dev->consumes_counters,
			 &dev->n_consumes_counters);
	dev->node_name = get_str(d, m, "nodeName");
	dev->node_selector = get_node_selector(d, m, "nodeSelector");
	get_bool(d, m, "allNodes", &dev->has_all_nodes, &dev->all_nodes);
	get_taints(d, m, "taints", &dev->taints, &dev->n_taints);
	get_bool(d, m, "bindsToNode", &dev->has_binds_to_node, &dev->binds_to_node);
	get_str_list(d, m, "bindingConditions", &dev->binding_conditions,
		     &dev->n_binding_conditions);
	get_str_list(d, m, "bindingFailureConditions", &dev->binding_failure_conditions,
		     &dev->n_binding_failure_conditions);
	get_bool(d, m, "allowMultipleAllocations", &dev->has_allow_multiple_allocations,
		 &dev->allow_multiple_allocations);
	if (model_device_cel_init(d->set, driver ? driver : "", dev))
		d->oom = 1;
}

/* v1: {name, attributes, capacity, ...}; v1beta1: {name, basic: {attributes,
 * capacity, ...}}, the body moved up a level as v1 has it. */
static void dec_device(struct dec *d, const struct doc_node *m, const char *driver,
		       struct model_device *dev)
{
	const struct doc_node *body = m;
	size_t mark = d->path.len;

	dev->name = get_str(d, m, "name");
	if (d->v1beta1) {
		closed_fields(d, m, f_v1beta1_device, NULL);
		body = get_map(d, m, "basic");
		mark = model_path_field(&d->path, "basic");
		closed_fields(d, body, f_device_body, NULL);
	} else {
		closed_fields(d, m, f_device_body, f_name);
	}
	dec_device_body(d, body, driver, dev);
	model_path_pop(&d->path, mark);
}

static void dec_slice(struct dec *d, const struct doc_node *spec,
		      struct model_resource_slice_spec *s)
{
	const struct doc_node *pool = get_map(d, spec, "pool");
	const struct doc_node *devs, *it;

	closed_fields(d, spec, f_slice_spec, NULL);
	s->driver = get_str(d, spec, "driver");
	if (pool) {
		size_t mark = model_path_field(&d->path, "pool");

		closed_fields(d, pool, f_pool, NULL);
		s->pool.name = get_str(d, pool, "name");
		get_int(d, pool, "generation", 64, NULL, &s->pool.generation);
		get_int(d, pool, "resourceSliceCount", 64, NULL, &s->pool.resource_slice_count);
		model_path_pop(&d->path, mark);
	}
	s->node_name = get_str(d, spec, "nodeName");
	s->node_selector = get_node_selector(d, spec, "nodeSelector");
	get_bool(d, spec, "allNodes", &s->has_all_nodes, &s->all_nodes);
	get_bool(d, spec, "perDeviceNodeSelection", &s->has_per_device_node_selection,
		 &s->per_device_node_selection);
	devs = get_seq(d, spec, "devices");
	if (devs) {
		size_t mark = model_path_field(&d->path, "devices");

		DALLOC(d, s->devices, devs->u.seq.n);
		FOR_EACH_MAP(d, devs, i, it) {
			if (s->devices)
				dec_device(d, it, s->driver, &s->devices[s->n_devices++]);
			END_EACH(d, i);
		}
		model_path_pop(&d->path, mark);
	}
	get_counter_sets(d, spec, "sharedCounters", "name", &s->shared_counters,
			 &s->n_shared_counters);
}

/* own: the fields of the struct holding the request besides its own
 * (a subrequest's name, a v1beta1 request's name and firstAvailable). */
static void dec_exact(struct dec *d, const struct doc_node *m, const char *const *own,
		      struct model_exact_request *r)
{
	const struct doc_node *cap = get_map(d, m, "capacity");

	closed_fields(d, m, f_exact, own);
	r->device_class_name = get_str(d, m, "deviceClassName");
	get_selectors(d, m, "selectors", &r->selectors, &r->n_selectors);
	r->allocation_mode_text = get_str(d, m, "allocationMode");
	get_int(d, m, "count", 64, &r->has_count, &r->count);
	get_bool(d, m, "adminAccess", &r->has_admin_access, &r->admin_access);
	get_tolerations(d, m, "tolerations", &r->tolerations, &r->n_tolerations);
	if (cap) {
		size_t mark = model_path_field(&d->path, "capacity");

		closed_fields(d, cap, f_capacity_requirements, NULL);
		get_resource_list(d, cap, "requests", &r->capacity_requests);
		model_path_pop(&d->path, mark);
	}
}

/* A v1beta1 DeviceRequest holds v1's ExactDeviceRequest fields itself; it
 * is one unless it only lists firstAvailable subrequests. */
static const struct doc_node *v1beta1_exact_request(const struct doc_node *req)
{
	static const char *const exact_fields[] = {
		"deviceClassName", "selectors", "allocationMode", "count", "adminAccess",
		"tolerations", "capacity",
	};

	if (!child(req, "firstAvailable"))
		return req;
	for (size_t i = 0; i < sizeof(exact_fields) / sizeof(exact_fields[0]); i++)
		if (child(req, exact_fields[i]))
			return req;
	return NULL;
}

static void item_constraint(struct dec *d, const struct doc_node *it, void *slot, const void *ctx)
{
	struct model_constraint *k = slot;

	closed_fields(d, it, f_constraint, NULL);
	get_str_list(d, it, "requests", &k->requests, &k->n_requests);
	k->match_attribute = get_str(d, it, "matchAttribute");
	k->distinct_attribute = get_str(d, it, "distinctAttribute");
	(void)ctx;
}

static void dec_claim_spec(struct dec *d, const struct doc_node *spec, struct model_claim_spec *c)
{
	const struct doc_node *devices = get_map(d, spec, "devices");
	const struct doc_node *reqs, *it;
	size_t dm;

	closed_fields(d, spec, f_claim_spec, NULL);
	if (!devices)
		return;
	dm = model_path_field(&d->path, "devices");
	closed_fields(d, devices, f_device_claim, NULL);
	reqs = get_seq(d, devices, "requests");
	if (reqs) {
		size_t mark = model_path_field(&d->path, "requests");

		DALLOC(d, c->requests, reqs->u.seq.n);
		FOR_EACH_MAP(d, reqs, i, it) {
			struct model_device_request *r;
			const struct doc_node *ex, *fa, *sub;

			if (!c->requests) {
				END_EACH(d, i);
				break;
			}
			r = &c->requests[c->n_requests++];
			if (!d->v1beta1)
				closed_fields(d, it, f_request, NULL);
			else if (!v1beta1_exact_request(it))    /* else dec_exact checks */
				closed_fields(d, it, f_v1beta1_request, NULL);
			r->name = get_str(d, it, "name");
			ex = d->v1beta1 ? v1beta1_exact_request(it) : get_map(d, it, "exactly");
			if (ex && ex == it) {
				/* v1beta1: the request's own fields are v1's `exactly`. */
				DALLOC(d, r->exactly, 1);
				if (r->exactly)
					dec_exact(d, ex, f_v1beta1_request, r->exactly);
			} else if (ex) {
				size_t em = model_path_field(&d->path, "exactly");

				DALLOC(d, r->exactly, 1);
				if (r->exactly)
					dec_exact(d, ex, NULL, r->exactly);
				model_path_pop(&d->path, em);
			}
			fa = get_seq(d, it, "firstAvailable");
			if (fa) {
				size_t fm = model_path_field(&d->path, "firstAvailable");

				DALLOC(d, r->first_available, fa->u.seq.n);
				FOR_EACH_MAP(d, fa, j, sub) {
					struct model_subrequest *sr;

					if (r->first_available) {
						sr = &r->first_available[r->n_first_available++];
						sr->name = get_str(d, sub, "name");
						dec_exact(d, sub, f_name, &sr->req);
					}
					END_EACH(d, j);
				}
				model_path_pop(&d->path, fm);
			}
			END_EACH(d, i);
		}
		model_path_pop(&d->path, mark);
	}
	GET_LIST(d, devices, "constraints", c->constraints, c->n_constraints, item_constraint, NULL);
	get_configs(d, devices, "config", &c->config, &c->n_config);
	model_path_pop(&d->path, dm);
}

static void dec_allocation(struct dec *d, const struct doc_node *m, struct model_allocation *a)
{
	const struct doc_node *devices = get_map(d, m, "devices");
	const struct doc_node *res, *it;

	a->node_selector = get_node_selector(d, m, "nodeSelector");
	a->allocation_timestamp = get_str(d, m, "allocationTimestamp");
	if (!devices)
		return;
	size_t dm = model_path_field(&d->path, "devices");

	res = get_seq(d, devices, "results");
	if (res) {
		size_t mark = model_path_field(&d->path, "results");

		DALLOC(d, a->results, res->u.seq.n);
		FOR_EACH_MAP(d, res, i, it) {
			struct model_allocation_result *r;

			if (a->results) {
				r = &a->results[a->n_results++];
				r->request = get_str(d, it, "request");
				r->driver = get_str(d, it, "driver");
				r->pool = get_str(d, it, "pool");
				r->device = get_str(d, it, "device");
				get_bool(d, it, "adminAccess", &r->has_admin_access,
					 &r->admin_access);
				get_tolerations(d, it, "tolerations", &r->tolerations,
						&r->n_tolerations);
				get_str_list(d, it, "bindingConditions", &r->binding_conditions,
					     &r->n_binding_conditions);
				get_str_list(d, it, "bindingFailureConditions",
					     &r->binding_failure_conditions,
					     &r->n_binding_failure_conditions);
				r->share_id = get_str(d, it, "shareID");
				get_resource_list(d, it, "consumedCapacity", &r->consumed_capacity);
			}
			END_EACH(d, i);
		}
		model_path_pop(&d->path, mark);
	}
	get_configs(d, devices, "config", &a->config, &a->n_config);
	model_path_pop(&d->path, dm);
}

static void item_consumer_ref(struct dec *d, const struct doc_node *it, void *slot,
			      const void *ctx)
{
	struct model_consumer_ref *r = slot;

	r->api_group = get_str(d, it, "apiGroup");
	r->resource = get_str(d, it, "resource");
	r->name = get_str(d, it, "name");
	r->uid = get_str(d, it, "uid");
	(void)ctx;
}

static void dec_claim(struct dec *d, const struct doc_node *root, struct model_resource_claim *c)
{
	const struct doc_node *spec = get_map(d, root, "spec");
	const struct doc_node *status = get_map(d, root, "status");

	if (spec) {
		size_t mark = model_path_field(&d->path, "spec");

		dec_claim_spec(d, spec, &c->spec);
		model_path_pop(&d->path, mark);
	}
	if (status) {
		size_t mark = model_path_field(&d->path, "status");
		const struct doc_node *alloc = get_map(d, status, "allocation");
		bool closed = d->closed;

		d->closed = false;      /* status is the API server's, not typed by users */

		if (alloc) {
			size_t am = model_path_field(&d->path, "allocation");

			DALLOC(d, c->status.allocation, 1);
			if (c->status.allocation)
				dec_allocation(d, alloc, c->status.allocation);
			model_path_pop(&d->path, am);
		}
		GET_LIST(d, status, "reservedFor", c->status.reserved_for, c->status.n_reserved_for,
			 item_consumer_ref, NULL);
		d->closed = closed;
		model_path_pop(&d->path, mark);
	}
}

static void dec_claim_template(struct dec *d, const struct doc_node *root,
			       struct model_resource_claim_template *t)
{
	const struct doc_node *spec = get_map(d, root, "spec");
	const struct doc_node *inner;
	size_t mark;

	if (!spec)
		return;
	mark = model_path_field(&d->path, "spec");
	closed_fields(d, spec, f_template_spec, NULL);
	get_meta(d, spec, "metadata", &t->claim_meta);
	inner = get_map(d, spec, "spec");
	if (inner) {
		size_t im = model_path_field(&d->path, "spec");

		dec_claim_spec(d, inner, &t->spec);
		model_path_pop(&d->path, im);
	}
	model_path_pop(&d->path, mark);
}

/* ---- core/v1 and workloads ---- */

static void item_container(struct dec *d, const struct doc_node *it, void *slot, const void *ctx)
{
	struct model_container *c = slot;
	const struct doc_node *res = get_map(d, it, "resources");

	c->name = get_str(d, it, "name");
	c->image = get_str(d, it, "image");
	if (res) {
		size_t rm = model_path_field(&d->path, "resources");
		const struct doc_node *claims = get_seq(d, res, "claims");
		const struct doc_node *cl;

		closed_fields(d, res, f_resources, NULL);
		get_resource_list(d, res, "requests", &c->requests);
		get_resource_list(d, res, "limits", &c->limits);
		if (claims) {
			size_t cm = model_path_field(&d->path, "claims");

			DALLOC(d, c->claims, claims->u.seq.n);
			FOR_EACH_MAP(d, claims, j, cl) {
				if (c->claims) {
					struct model_container_claim *cc =
						&c->claims[c->n_claims++];

					closed_fields(d, cl, f_container_claim, NULL);
					cc->name = get_str(d, cl, "name");
					cc->request = get_str(d, cl, "request");
				}
				END_EACH(d, j);
			}
			model_path_pop(&d->path, cm);
		}
		model_path_pop(&d->path, rm);
	}
	(void)ctx;
}

static void get_containers(struct dec *d, const struct doc_node *m, const char *key,
			   struct model_container **out, size_t *n_out)
{
	GET_LIST(d, m, key, *out, *n_out, item_container, NULL);
}

static void dec_pod_spec(struct dec *d, const struct doc_node *spec, struct model_pod_spec *p)
{
	const struct doc_node *aff = get_map(d, spec, "affinity");
	const struct doc_node *rc = get_seq(d, spec, "resourceClaims");
	const struct doc_node *it;

	p->node_name = get_str(d, spec, "nodeName");
	get_kv(d, spec, "nodeSelector", &p->node_selector, &p->n_node_selector);
	if (aff) {
		size_t am = model_path_field(&d->path, "affinity");
		const struct doc_node *na = get_map(d, aff, "nodeAffinity");

		if (na) {
			size_t nm = model_path_field(&d->path, "nodeAffinity");

			p->required_node_affinity = get_node_selector(d, na,
				"requiredDuringSchedulingIgnoredDuringExecution");
			model_path_pop(&d->path, nm);
		}
		model_path_pop(&d->path, am);
	}
	get_tolerations(d, spec, "tolerations", &p->tolerations, &p->n_tolerations);
	if (rc) {
		size_t mark = model_path_field(&d->path, "resourceClaims");

		DALLOC(d, p->resource_claims, rc->u.seq.n);
		FOR_EACH_MAP(d, rc, i, it) {
			if (p->resource_claims) {
				struct model_pod_claim *c = &p->resource_claims[p->n_resource_claims++];

				closed_fields(d, it, f_pod_claim, NULL);
				c->name = get_str(d, it, "name");
				c->resource_claim_name = get_str(d, it, "resourceClaimName");
				c->resource_claim_template_name =
					get_str(d, it, "resourceClaimTemplateName");
			}
			END_EACH(d, i);
		}
		model_path_pop(&d->path, mark);
	}
	get_containers(d, spec, "containers", &p->containers, &p->n_containers);
	get_containers(d, spec, "initContainers", &p->init_containers, &p->n_init_containers);
	get_resource_list(d, spec, "overhead", &p->overhead);
	get_int(d, spec, "priority", 32, &p->has_priority, &p->priority);
	p->priority_class_name = get_str(d, spec, "priorityClassName");
	p->scheduler_name = get_str(d, spec, "schedulerName");
}

static void dec_pod(struct dec *d, const struct doc_node *root, struct model_pod *p)
{
	const struct doc_node *spec = get_map(d, root, "spec");
	const struct doc_node *status = get_map(d, root, "status");

	if (spec) {
		size_t mark = model_path_field(&d->path, "spec");

		dec_pod_spec(d, spec, &p->spec);
		model_path_pop(&d->path, mark);
	}
	if (status) {
		size_t mark = model_path_field(&d->path, "status");
		const struct doc_node *rcs = get_seq(d, status, "resourceClaimStatuses");
		const struct doc_node *it;

		p->status.phase = get_str(d, status, "phase");
		if (rcs) {
			size_t rm = model_path_field(&d->path, "resourceClaimStatuses");

			DALLOC(d, p->status.resource_claim_statuses, rcs->u.seq.n);
			FOR_EACH_MAP(d, rcs, i, it) {
				if (p->status.resource_claim_statuses) {
					struct model_pod_claim_status *c = &p->status.
						resource_claim_statuses[p->status.n_resource_claim_statuses++];

					c->name = get_str(d, it, "name");
					c->resource_claim_name = get_str(d, it, "resourceClaimName");
				}
				END_EACH(d, i);
			}
			model_path_pop(&d->path, rm);
		}
		model_path_pop(&d->path, mark);
	}
}

static void dec_workload(struct dec *d, const struct doc_node *root, enum model_kind k,
			 struct model_workload *w)
{
	const struct doc_node *spec = get_map(d, root, "spec");
	const struct doc_node *sel, *tmpl;
	size_t mark;

	if (!spec)
		return;
	mark = model_path_field(&d->path, "spec");
	if (k == MODEL_JOB) {
		get_int(d, spec, "parallelism", 32, &w->has_parallelism, &w->parallelism);
		get_int(d, spec, "completions", 32, &w->has_completions, &w->completions);
	} else {
		get_int(d, spec, "replicas", 32, &w->has_replicas, &w->replicas);
	}
	sel = get_map(d, spec, "selector");
	if (sel) {
		size_t sm = model_path_field(&d->path, "selector");

		DALLOC(d, w->selector, 1);
		if (w->selector) {
			get_kv(d, sel, "matchLabels", &w->selector->match_labels,
			       &w->selector->n_match_labels);
			get_requirements(d, sel, "matchExpressions", &w->selector->match_expressions,
					 &w->selector->n_match_expressions);
		}
		model_path_pop(&d->path, sm);
	}
	tmpl = get_map(d, spec, "template");
	if (tmpl) {
		size_t tm = model_path_field(&d->path, "template");
		const struct doc_node *ps = get_map(d, tmpl, "spec");

		get_meta(d, tmpl, "metadata", &w->template_.meta);
		if (ps) {
			size_t pm = model_path_field(&d->path, "spec");

			dec_pod_spec(d, ps, &w->template_.spec);
			model_path_pop(&d->path, pm);
		}
		model_path_pop(&d->path, tm);
	}
	model_path_pop(&d->path, mark);
}

static void dec_node(struct dec *d, const struct doc_node *root, struct model_node *n)
{
	const struct doc_node *spec = get_map(d, root, "spec");
	const struct doc_node *status = get_map(d, root, "status");

	if (spec) {
		size_t mark = model_path_field(&d->path, "spec");

		n->provider_id = get_str(d, spec, "providerID");
		get_taints(d, spec, "taints", &n->taints, &n->n_taints);
		get_bool(d, spec, "unschedulable", NULL, &n->unschedulable);
		model_path_pop(&d->path, mark);
	}
	if (status) {
		size_t mark = model_path_field(&d->path, "status");

		get_resource_list(d, status, "capacity", &n->capacity);
		get_resource_list(d, status, "allocatable", &n->allocatable);
		model_path_pop(&d->path, mark);
	}
}

/* ---- Karpenter ---- */

static void get_node_class_ref(struct dec *d, const struct doc_node *m,
			       struct model_node_class_ref *r)
{
	const struct doc_node *ref = get_map(d, m, "nodeClassRef");
	size_t mark;

	if (!ref)
		return;
	mark = model_path_field(&d->path, "nodeClassRef");
	r->group = get_str(d, ref, "group");
	r->kind = get_str(d, ref, "kind");
	r->name = get_str(d, ref, "name");
	model_path_pop(&d->path, mark);
}

static void dec_node_pool(struct dec *d, const struct doc_node *root, struct model_node_pool *p)
{
	const struct doc_node *spec = get_map(d, root, "spec");
	const struct doc_node *tmpl, *md, *ts;
	size_t mark;

	if (!spec)
		return;
	mark = model_path_field(&d->path, "spec");
	tmpl = get_map(d, spec, "template");
	if (tmpl) {
		size_t tm = model_path_field(&d->path, "template");

		md = get_map(d, tmpl, "metadata");
		if (md) {
			size_t mm = model_path_field(&d->path, "metadata");

			get_kv(d, md, "labels", &p->template_labels, &p->n_template_labels);
			get_kv(d, md, "annotations", &p->template_annotations,
			       &p->n_template_annotations);
			model_path_pop(&d->path, mm);
		}
		ts = get_map(d, tmpl, "spec");
		if (ts) {
			size_t sm = model_path_field(&d->path, "spec");

			get_node_class_ref(d, ts, &p->node_class_ref);
			get_requirements(d, ts, "requirements", &p->requirements,
					 &p->n_requirements);
			get_taints(d, ts, "taints", &p->taints, &p->n_taints);
			get_taints(d, ts, "startupTaints", &p->startup_taints,
				   &p->n_startup_taints);
			p->expire_after = get_str(d, ts, "expireAfter");
			model_path_pop(&d->path, sm);
		}
		model_path_pop(&d->path, tm);
	}
	get_resource_list(d, spec, "limits", &p->limits);
	get_int(d, spec, "weight", 32, &p->has_weight, &p->weight);
	model_path_pop(&d->path, mark);
}

static void dec_node_claim(struct dec *d, const struct doc_node *root, struct model_node_claim *c)
{
	const struct doc_node *spec = get_map(d, root, "spec");
	const struct doc_node *status = get_map(d, root, "status");

	if (spec) {
		size_t mark = model_path_field(&d->path, "spec");
		const struct doc_node *res = get_map(d, spec, "resources");

		get_node_class_ref(d, spec, &c->node_class_ref);
		get_requirements(d, spec, "requirements", &c->requirements, &c->n_requirements);
		get_taints(d, spec, "taints", &c->taints, &c->n_taints);
		get_taints(d, spec, "startupTaints", &c->startup_taints, &c->n_startup_taints);
		if (res) {
			size_t rm = model_path_field(&d->path, "resources");

			get_resource_list(d, res, "requests", &c->resource_requests);
			model_path_pop(&d->path, rm);
		}
		model_path_pop(&d->path, mark);
	}
	if (status) {
		size_t mark = model_path_field(&d->path, "status");

		c->node_name = get_str(d, status, "nodeName");
		c->status_provider_id = get_str(d, status, "providerID");
		model_path_pop(&d->path, mark);
	}
}

static void dec_ec2_node_class(struct dec *d, const struct doc_node *root,
			       struct model_ec2_node_class *c)
{
	const struct doc_node *spec = get_map(d, root, "spec");
	struct doc_arena *a;

	if (!spec)
		return;
	a = model_set_doc_arena(d->set);
	c->spec = a ? doc_clone(a, spec) : NULL;
	if (!c->spec)
		d->oom = 1;
	if (child(spec, "role") && child(spec, "role")->kind == DOC_STRING)
		c->role = get_str(d, spec, "role");
}

/* ---- Documents ---- */

static void peek_name(struct dec *d, const struct doc_node *root, struct model_object *o)
{
	const struct doc_node *md = child(root, "metadata");
	const struct doc_node *name = child(md, "name");
	const struct doc_node *ns = child(md, "namespace");

	if (md && md->kind != DOC_MAP)
		return;
	if (name && name->kind == DOC_STRING)
		o->meta.name = dstrdup(d, name);
	if (ns && ns->kind == DOC_STRING)
		o->meta.ns = dstrdup(d, ns);
	else if (model_kind_namespaced(o->kind))
		o->meta.ns = "default";
}

static int dec_object(struct dec *d, const struct doc_node *root, enum model_kind k, int line)
{
	struct model_object *o = model_set_add(d->set, k);

	if (!o)
		return -ENOMEM;
	o->src.file = d->file;
	o->src.document = d->document;
	o->src.item = d->item;
	if (d->item >= 0 && !(o->src.item_path = model_set_strdup(d->set, d->item_path)))
		return -ENOMEM;
	o->src.line = line;
	/* Name the object before anything is reported about it, metadata
	 * included; dec_meta then reads the metadata for real. */
	peek_name(d, root, o);
	d->obj = o;
	get_meta(d, root, "metadata", &o->meta);
	d->closed = k <= MODEL_RESOURCE_CLAIM_TEMPLATE;         /* the DRA kinds */
	if (d->closed)
		closed_fields(d, root, f_dra_object, NULL);
	switch (k) {
	case MODEL_DEVICE_CLASS: {
		const struct doc_node *spec = get_map(d, root, "spec");
		size_t mark = model_path_field(&d->path, "spec");

		if (spec)
			dec_device_class(d, spec, &o->u.device_class);
		model_path_pop(&d->path, mark);
		break;
	}
	case MODEL_RESOURCE_SLICE: {
		const struct doc_node *spec = get_map(d, root, "spec");
		size_t mark = model_path_field(&d->path, "spec");

		if (spec)
			dec_slice(d, spec, &o->u.slice);
		model_path_pop(&d->path, mark);
		break;
	}
	case MODEL_RESOURCE_CLAIM:
		dec_claim(d, root, &o->u.claim);
		break;
	case MODEL_RESOURCE_CLAIM_TEMPLATE:
		dec_claim_template(d, root, &o->u.claim_template);
		break;
	case MODEL_POD:
		dec_pod(d, root, &o->u.pod);
		break;
	case MODEL_NODE:
		dec_node(d, root, &o->u.node);
		break;
	case MODEL_DEPLOYMENT:
	case MODEL_REPLICA_SET:
	case MODEL_STATEFUL_SET:
	case MODEL_JOB:
		dec_workload(d, root, k, &o->u.workload);
		break;
	case MODEL_NODE_POOL:
		dec_node_pool(d, root, &o->u.node_pool);
		break;
	case MODEL_NODE_CLAIM:
		dec_node_claim(d, root, &o->u.node_claim);
		break;
	case MODEL_EC2_NODE_CLASS:
		dec_ec2_node_class(d, root, &o->u.ec2_node_class);
		break;
	case MODEL_KIND_COUNT:
		break;
	}
	d->obj = NULL;
	d->closed = false;
	if (model_object_default(d->set, o))
		d->oom = 1;
	return d->oom ? -ENOMEM : 0;
}

#define DRA_GROUP "resource.k8s.io/"
#define DRA_V1 "resource.k8s.io/v1"

static bool is_dra_group(const char *api_version)
{
	return !strncmp(api_version, DRA_GROUP, strlen(DRA_GROUP));
}

/* The DRA beta versions the API server still serves: v1beta2 has v1's
 * shape and is read as v1; v1beta1 is converted while decoding (requests
 * without `exactly`, devices under `basic`). */
static const char *dra_api_version(const char *api_version, bool *v1beta1)
{
	*v1beta1 = !strcmp(api_version, DRA_GROUP "v1beta1");
	if (*v1beta1 || !strcmp(api_version, DRA_GROUP "v1beta2"))
		return DRA_V1;
	return api_version;
}

static bool is_list_kind(const char *kind)
{
	size_t n = kind ? strlen(kind) : 0;

	return n >= 4 && !strcmp(kind + n - 4, "List");
}

static int dec_node_root(struct dec *d, const struct doc_node *root, int depth, int line)
{
	const char *api_version, *kind;
	int k;

	if (root->kind != DOC_MAP) {
		report(d, root, "must be an object with apiVersion and kind");
		return d->oom ? -ENOMEM : 0;
	}
	api_version = get_str(d, root, "apiVersion");
	kind = get_str(d, root, "kind");
	if (!kind || !kind[0]) {
		if (!child(root, "kind")) {
			model_path_field(&d->path, "kind");
			report(d, NULL, "Required value: every object needs apiVersion and kind");
			model_path_pop(&d->path, 0);
		}
		return d->oom ? -ENOMEM : 0;
	}
	if (is_list_kind(kind) && doc_get(root, "items")) {
		const struct doc_node *items = get_seq(d, root, "items");
		int saved_item = d->item;
		size_t saved_len = strlen(d->item_path);

		if (depth >= LIST_MAX_DEPTH) {
			report(d, NULL, "kind: List nested too deeply");
			return 0;
		}
		for (size_t i = 0; items && i < items->u.seq.n; i++) {
			const struct doc_node *it = items->u.seq.items[i];
			int rc;

			if (depth == 0)
				d->item = (int)i;
			/* Bounded: LIST_MAX_DEPTH levels of at most 11 bytes. */
			snprintf(d->item_path + saved_len, sizeof(d->item_path) - saved_len,
				 "%s%zu", saved_len ? "." : "", i);
			if (it->kind == DOC_NULL)
				continue;
			rc = dec_node_root(d, it, depth + 1, it->line ? it->line : line);
			if (rc)
				return rc;
		}
		d->item = saved_item;
		d->item_path[saved_len] = '\0';
		return 0;
	}
	if (!api_version || !api_version[0]) {
		if (!child(root, "apiVersion")) {
			model_path_field(&d->path, "apiVersion");
			report(d, NULL, "Required value: every object needs apiVersion and kind");
			model_path_pop(&d->path, 0);
		}
		return d->oom ? -ENOMEM : 0;
	}
	k = model_kind_lookup(dra_api_version(api_version, &d->v1beta1), kind);
	if (k < 0 && is_dra_group(api_version) && model_kind_lookup(DRA_V1, kind) >= 0) {
		/* A DRA kind at a version dratopo cannot read (v1alpha3): an
		 * error, so that a file is never "valid" unchecked. */
		char msg[512];
		size_t mark = model_path_field(&d->path, "apiVersion");

		snprintf(msg, sizeof(msg), "Unsupported value: \"%.200s\": supported values: "
			 "\"" DRA_V1 "\", \"" DRA_GROUP "v1beta2\", \"" DRA_GROUP "v1beta1\" "
			 "(convert the %.64s to " DRA_V1 ")", api_version, kind);
		report(d, NULL, msg);
		model_path_pop(&d->path, mark);
		return d->oom ? -ENOMEM : 0;
	}
	if (k < 0) {
		struct model_source src = { .file = d->file, .document = d->document,
					    .item = d->item,
					    .item_path = d->item >= 0 ? d->item_path : NULL };
		char where[160];

		model_source_document(&src, where, sizeof(where));
		if (dt_diags_add(&d->set->warnings, "%s: %s: skipping %s %s: not a kind dratopo reads",
				 d->file, where, api_version, kind))
			return -ENOMEM;
		return 0;
	}
	return dec_object(d, root, (enum model_kind)k, line);
}

int model_set_add_stream(struct model_set *s, const struct doc_stream *st,
			 struct dt_diags *errs, struct dt_err *err)
{
	struct dec d = { .set = s, .errs = errs, .item = -1 };
	int rc = 0;

	d.file = model_set_strdup(s, st->filename ? st->filename : "-");
	if (!d.file)
		return dt_err_set(err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < st->n_docs; i++) {
		const struct doc_document *doc = &st->docs[i];

		d.document = (int)i + 1;
		d.item = -1;
		d.item_path[0] = '\0';
		d.path.len = 0;
		d.path.buf[0] = '\0';
		if (doc->error) {
			d.n_errors++;
			if (errs && dt_diags_add(errs, "%s: document %d: %s", d.file, d.document,
						 doc->error))
				d.oom = 1;
			continue;
		}
		if (!doc->root)
			continue;       /* an empty document: nothing to say */
		rc = dec_node_root(&d, doc->root, 0, doc->line);
		if (rc || d.oom)
			return dt_err_set(err, -ENOMEM, "%s: out of memory", d.file);
	}
	return 0;
}

int model_set_load_buffer(struct model_set *s, const char *buf, size_t len,
			  const char *filename, struct dt_diags *errs, struct dt_err *err)
{
	struct doc_stream *st = NULL;
	int rc;

	rc = doc_parse(buf, len, DOC_FORMAT_AUTO, filename, &st, err);
	if (rc) {
		if (errs)
			dt_diags_add(errs, "%s: %s", filename ? filename : "-",
				     err ? err->msg : "cannot parse");
		return rc;
	}
	rc = model_set_add_stream(s, st, errs, err);
	doc_stream_free(st);
	return rc;
}

/* One manifest file (or "-"): its documents, in order. */
static int load_one_file(struct model_set *s, const char *path, struct dt_diags *errs,
			 struct dt_err *err)
{
	struct doc_stream *st = NULL;
	int rc;

	rc = doc_load_file(path, &st, err);
	if (rc) {
		/* doc's messages name the file already when they can. */
		if (!errs)
			return rc;
		if (!strncmp(err->msg, path, strlen(path)))
			dt_diags_add(errs, "%s", err->msg);
		else
			dt_diags_add(errs, "%s: %s", path, err->msg);
		return rc;
	}
	rc = model_set_add_stream(s, st, errs, err);
	doc_stream_free(st);
	return rc;
}

static bool is_manifest_name(const char *name)
{
	static const char *const exts[] = { ".yaml", ".yml", ".json" };
	size_t n = strlen(name);

	if (name[0] == '.')
		return false;           /* hidden files, as kubectl's walk skips them */
	for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]); i++) {
		size_t e = strlen(exts[i]);

		if (n > e && !strcmp(name + n - e, exts[i]))
			return true;
	}
	return false;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names of a directory's manifests, sorted; *out is malloc'd, as is
 * each name. */
static int list_manifests(const char *dir, char ***out, size_t *n_out, struct dt_err *err)
{
	DIR *dh = opendir(dir);
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	int rc = 0;

	*out = NULL;
	*n_out = 0;
	if (!dh)
		return dt_err_set(err, -errno, "%s: cannot read the directory: %s", dir,
				  strerror(errno));
	while ((de = readdir(dh))) {
		if (!is_manifest_name(de->d_name))
			continue;
		if (n == LOAD_DIR_MAX_FILES) {
			rc = dt_err_set(err, -E2BIG, "%s: more than %d manifests in the directory",
					dir, LOAD_DIR_MAX_FILES);
			goto out;
		}
		if (n == cap) {
			size_t ncap = cap ? 2 * cap : 16;
			char **nn = realloc(names, ncap * sizeof(*nn));

			if (!nn)
				goto oom;
			names = nn;
			cap = ncap;
		}
		if (!(names[n] = strdup(de->d_name)))
			goto oom;
		n++;
	}
	if (n > 1)
		qsort(names, n, sizeof(*names), cmp_names);
	*out = names;
	*n_out = n;
	names = NULL;
	goto out;
oom:
	rc = dt_err_set(err, -ENOMEM, "out of memory");
out:
	closedir(dh);
	for (size_t i = 0; names && i < n; i++)
		free(names[i]);
	free(names);
	return rc;
}

/* A directory as `kubectl apply -f DIR` reads it: its *.yaml, *.yml and
 * *.json files in name order, not recursively. */
static int load_dir(struct model_set *s, const char *dir, struct dt_diags *errs,
		    struct dt_err *err)
{
	size_t len = strlen(dir);
	bool slash = len && dir[len - 1] == '/';
	char **names = NULL;
	size_t n = 0;
	int rc, first_rc = 0;

	rc = list_manifests(dir, &names, &n, err);
	if (!rc && !n)
		rc = dt_err_set(err, -ENOENT, "%s: no manifests (*.yaml, *.yml, *.json) in the "
				"directory", dir);
	if (rc) {
		if (errs)
			dt_diags_add(errs, "%s", err->msg);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		struct strbuf path = STRBUF_INIT;

		sb_printf(&path, "%s%s%s", dir, slash ? "" : "/", names[i]);
		if (sb_error(&path)) {
			sb_free(&path);
			rc = dt_err_set(err, -ENOMEM, "out of memory");
			goto out;
		}
		rc = load_one_file(s, sb_str(&path), errs, err);
		sb_free(&path);
		if (rc == -ENOMEM)
			goto out;
		/* An unreadable file is in errs; go on with the others. */
		if (rc && !first_rc)
			first_rc = rc;
		rc = 0;
	}
	rc = first_rc;
out:
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc;
}

int model_set_load_file(struct model_set *s, const char *path,
			struct dt_diags *errs, struct dt_err *err)
{
	struct dt_err local;
	struct stat sb;

	if (!err)
		err = &local;
	if (strcmp(path, "-") && !stat(path, &sb) && S_ISDIR(sb.st_mode))
		return load_dir(s, path, errs, err);
	return load_one_file(s, path, errs, err);
}
