/* model_decode_fields.c - what every family's decoder is made of: the
 * messages (the value and its path behind the document's prefix), the
 * warnings about unknown fields of closed types, arena copies, typed field
 * getters (maps, lists, strings, integers, booleans, quantities, label
 * maps, resource lists), and the pieces DRA, core and Karpenter objects
 * share: metadata, node selectors, taints, tolerations. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"
#include "strbuf.h"
#include "timestamp.h"

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

/* "FILE: document N (KIND NS/NAME): ", the object a message is about. */
static void object_prefix(struct model_dec *d, struct strbuf *sb)
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
}

static void prefix(struct model_dec *d, struct strbuf *sb)
{
	object_prefix(d, sb);
	if (d->path.len)
		sb_printf(sb, "%s: ", model_path_str(&d->path));
}

void model_dec_report(struct model_dec *d, const struct doc_node *bad, const char *msg)
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
 * kubectl applies with strict field validation (its default since 1.27), so
 * a field the API does not have fails the object, in the API server's
 * words: `PREFIX strict decoding error: unknown field "spec.devices.
 * requests[0].exactly.cout"` (a typo that would otherwise mean count 1).
 * Checked inside the types dratopo reads field by field, whose lists hold
 * every field of the API; types dratopo keeps loosely (metadata, status,
 * most of a pod, inside an EC2NodeClass's spec) are not checked. What an
 * API server sent (set->server_objects) is valid there by definition: a
 * field it has and dratopo lacks is a newer API's, a warning. */

/* The field lists of closed types, NULL-terminated. */

static const char *const f_taint[] = { "key", "value", "effect", "timeAdded", NULL };
static const char *const f_toleration[] = { "key", "operator", "value", "effect",
					    "tolerationSeconds", NULL };
static const char *const f_node_selector[] = { "nodeSelectorTerms", NULL };
static const char *const f_term[] = { "matchExpressions", "matchFields", NULL };
static const char *const f_node_requirement[] = { "key", "operator", "values", NULL };

static bool in_list(const char *const *list, const char *key)
{
	for (size_t i = 0; list && list[i]; i++)
		if (!strcmp(list[i], key))
			return true;
	return false;
}

/* Warn about each key of map m in neither known nor extra (either may be
 * NULL). The path is the map's; the message names the key. */
void model_closed_fields(struct model_dec *d, const struct doc_node *m, const char *const *known,
			  const char *const *extra)
{
	if (!m || m->kind != DOC_MAP)
		return;
	for (size_t i = 0; i < m->u.map.n; i++) {
		const struct doc_node *k = m->u.map.pairs[i].key;
		const char *key = k->text ? k->text : "";
		struct strbuf sb = STRBUF_INIT;

		struct strbuf field = STRBUF_INIT;
		struct dt_diags *to = d->errs;

		if (in_list(known, key) || in_list(extra, key))
			continue;
		if (d->set->server_objects)
			to = &d->set->warnings;         /* a newer API server's field */
		else
			d->n_errors++;
		if (d->path.len) {
			sb_puts(&field, model_path_json(&d->path));
			sb_putc(&field, '.');
		}
		sb_append(&field, key, k->text ? k->text_len : 0);
		object_prefix(d, &sb);
		sb_puts(&sb, d->set->server_objects ? "unknown field " :
			"strict decoding error: unknown field ");
		model_quote(&sb, sb_str(&field), field.len);
		if (sb_error(&sb) || sb_error(&field) ||
		    (to && dt_diags_add(to, "%s", sb_str(&sb))))
			d->oom = 1;
		sb_free(&field);
		sb_free(&sb);
	}
}

/* The shared helpers' types: closed inside DRA objects only. */
void model_closed_if(struct model_dec *d, const struct doc_node *m, const char *const *known)
{
	if (d->closed)
		model_closed_fields(d, m, known, NULL);
}

void *model_dalloc(struct model_dec *d, size_t n, size_t size)
{
	void *p = model_set_calloc(d->set, n, size);

	if (!p)
		d->oom = 1;
	return p;
}

const char *model_dstrdup(struct model_dec *d, const struct doc_node *n)
{
	const char *s = model_set_strndup(d->set, n->text ? n->text : "",
					  n->text ? n->text_len : 0);

	if (!s)
		d->oom = 1;
	return s;
}

/* ---- Field helpers ----
 *
 * Each takes the map holding the field and the field's name, pushes the
 * name onto the path for its messages and pops it again. */

const struct doc_node *model_child(const struct doc_node *m, const char *key)
{
	const struct doc_node *n = m ? doc_get(m, key) : NULL;

	return n && n->kind != DOC_NULL ? n : NULL;
}

bool model_is_map(struct model_dec *d, const struct doc_node *n)
{
	if (n->kind == DOC_MAP)
		return true;
	model_dec_report(d, n, "must be an object");
	return false;
}

/* A list with items; an empty one reads as absent, a value that is not a
 * list is reported. */
static bool is_seq_with_items(struct model_dec *d, const struct doc_node *n)
{
	if (n->kind != DOC_SEQ) {
		model_dec_report(d, n, "must be a list");
		return false;
	}
	return n->u.seq.n > 0;
}

/* The value under key, with key pushed onto the path for the caller's
 * messages (the caller pops it at *mark), or NULL when absent or null. */
static const struct doc_node *enter_field(struct model_dec *d, const struct doc_node *m,
					  const char *key, size_t *mark)
{
	const struct doc_node *n = model_child(m, key);

	if (n)
		*mark = model_path_field(&d->path, key);
	return n;
}

/* The value under key if ok takes it (ok reports, with key on the path,
 * what is wrong with it), or NULL. */
static const struct doc_node *get_if(struct model_dec *d, const struct doc_node *m,
				     const char *key,
				     bool (*ok)(struct model_dec *d, const struct doc_node *n))
{
	size_t mark;
	const struct doc_node *n = enter_field(d, m, key, &mark);

	if (!n)
		return NULL;
	if (!ok(d, n))
		n = NULL;
	model_path_pop(&d->path, mark);
	return n;
}

/* The map under key, or NULL (absent or reported). */
const struct doc_node *model_get_map(struct model_dec *d, const struct doc_node *m, const char *key)
{
	return get_if(d, m, key, model_is_map);
}

/* The list under key, or NULL (absent, empty or reported). */
const struct doc_node *model_get_seq(struct model_dec *d, const struct doc_node *m, const char *key)
{
	return get_if(d, m, key, is_seq_with_items);
}

/* A scalar that is not a string is refused, but its text is kept (as
 * model_get_time keeps its text, QA-101): the field was given, and
 * validation must not call it missing as well ("must specify one of"). */
static const char *node_str(struct model_dec *d, const struct doc_node *n)
{
	bool scalar = n->text && (n->kind == DOC_BOOL || n->kind == DOC_INT ||
				  n->kind == DOC_FLOAT);

	if (n->kind == DOC_BOOL && n->text && strcmp(n->text, "true") && strcmp(n->text, "false")) {
		/* YAML 1.1 reads y, n, yes, off, ... as booleans. */
		model_dec_report(d, n,
				 "must be a string (YAML reads this word as a boolean; quote it)");
		return model_dstrdup(d, n);
	}
	if (n->kind != DOC_STRING) {
		model_dec_report(d, n, "must be a string");
		return scalar ? model_dstrdup(d, n) : NULL;
	}
	/* The text before the NUL is kept, as model_get_time keeps its text:
	 * validation must not call the field missing as well (QA-90). */
	if (n->text && memchr(n->text, '\0', n->text_len))
		model_dec_report(d, n, "must not contain NUL characters");
	return model_dstrdup(d, n);
}

const char *model_get_str(struct model_dec *d, const struct doc_node *m, const char *key)
{
	size_t mark;
	const struct doc_node *n = enter_field(d, m, key, &mark);
	const char *s;

	if (!n)
		return NULL;
	s = node_str(d, n);
	model_path_pop(&d->path, mark);
	return s;
}

/* metav1.Time: its UnmarshalJSON is Go's time.Parse(time.RFC3339, s), and
 * the API server's decoder refuses the object with that error. The text is
 * kept even then, so that validation does not also call it missing. */
const char *model_get_time(struct model_dec *d, const struct doc_node *m, const char *key)
{
	size_t mark;
	const struct doc_node *n = enter_field(d, m, key, &mark);
	struct dt_err err;
	const char *s;

	if (!n)
		return NULL;
	s = node_str(d, n);
	if (s && timestamp_parse(s, strlen(s), NULL, &err))
		model_dec_report(d, NULL, err.msg);
	model_path_pop(&d->path, mark);
	return s;
}

/* Integers: JSON numbers without fraction that fit the field's Go type. */
bool model_node_int(struct model_dec *d, const struct doc_node *n, int bits, int64_t *out)
{
	int64_t lo = bits == 32 ? INT32_MIN : INT64_MIN;
	int64_t hi = bits == 32 ? INT32_MAX : INT64_MAX;

	if (n->kind == DOC_INT) {
		if (n->u.i < lo || n->u.i > hi) {
			model_dec_report(d, n, bits == 32 ?
			       "must fit in a 32-bit integer" : "must fit in a 64-bit integer");
			return false;
		}
		*out = n->u.i;
		return true;
	}
	if (n->kind == DOC_FLOAT && n->text && n->text_len &&
	    strspn(n->text + (n->text[0] == '-'), "0123456789") ==
	    n->text_len - (n->text[0] == '-')) {
		model_dec_report(d, n, bits == 32 ? "must fit in a 32-bit integer" :
		       "must fit in a 64-bit integer");
		return false;
	}
	model_dec_report(d, n, "must be an integer");
	return false;
}

void model_get_int(struct model_dec *d, const struct doc_node *m, const char *key, int bits,
		    bool *has, int64_t *out)
{
	size_t mark;
	const struct doc_node *n = enter_field(d, m, key, &mark);

	if (!n)
		return;
	if (model_node_int(d, n, bits, out) && has)
		*has = true;
	model_path_pop(&d->path, mark);
}

void model_get_bool(struct model_dec *d, const struct doc_node *m, const char *key,
		     bool *has, bool *out)
{
	size_t mark;
	const struct doc_node *n = enter_field(d, m, key, &mark);

	if (!n)
		return;
	if (n->kind == DOC_BOOL) {
		*out = n->u.b;
		if (has)
			*has = true;
	} else {
		model_dec_report(d, n, "must be a boolean");
	}
	model_path_pop(&d->path, mark);
}

/* Quantities are written as strings or numbers ("80Gi", 4, 0.5). */
bool model_node_quantity(struct model_dec *d, const struct doc_node *n, struct quantity *out)
{
	struct dt_err err;

	if (n->kind != DOC_STRING && n->kind != DOC_INT && n->kind != DOC_FLOAT) {
		model_dec_report(d, n, "must be a quantity (a string or a number)");
		return false;
	}
	if (!n->text || quantity_parse(n->text, n->text_len, out, &err)) {
		model_dec_report(d, n, n->text ? err.msg : "unable to parse quantity");
		return false;
	}
	return true;
}

void model_get_quantity(struct model_dec *d, const struct doc_node *m, const char *key,
			 bool *has, struct quantity *out)
{
	size_t mark;
	const struct doc_node *n = enter_field(d, m, key, &mark);

	if (!n)
		return;
	if (model_node_quantity(d, n, out) && has)
		*has = true;
	model_path_pop(&d->path, mark);
}

void model_get_str_list(struct model_dec *d, const struct doc_node *m, const char *key,
			 const char ***out, size_t *n_out)
{
	const struct doc_node *seq = model_get_seq(d, m, key);
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

void model_get_kv(struct model_dec *d, const struct doc_node *m, const char *key,
		   struct model_kv **out, size_t *n_out)
{
	const struct doc_node *map = model_get_map(d, m, key);
	size_t mark, n = 0;

	if (!map || !map->u.map.n)
		return;
	DALLOC(d, *out, map->u.map.n);
	if (!*out)
		return;
	mark = model_path_field(&d->path, key);
	for (size_t i = 0; i < map->u.map.n; i++) {
		const struct doc_pair *p = &map->u.map.pairs[i];
		const char *k = model_dstrdup(d, p->key);
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

void model_get_resource_list(struct model_dec *d, const struct doc_node *m, const char *key,
			      struct model_resource_list *out)
{
	const struct doc_node *map = model_get_map(d, m, key);
	size_t mark, n = 0;

	if (!map || !map->u.map.n)
		return;
	DALLOC(d, out->items, map->u.map.n);
	if (!out->items)
		return;
	mark = model_path_field(&d->path, key);
	for (size_t i = 0; i < map->u.map.n; i++) {
		const struct doc_pair *p = &map->u.map.pairs[i];
		const char *k = model_dstrdup(d, p->key);
		size_t km = model_path_key(&d->path, k ? k : "");

		if (k && model_node_quantity(d, p->value, &out->items[n].value)) {
			out->items[n].name = k;
			n++;
		}
		model_path_pop(&d->path, km);
	}
	model_path_pop(&d->path, mark);
	out->n_items = n;
}

/* The list of maps under key as a new array of elements of size bytes in
 * the set's arena (NULL when absent or empty): fn decodes each item into
 * its slot with the item's path pushed; items that are not maps are
 * reported and get no slot. *n_out is the number of slots filled. */
void *model_get_list(struct model_dec *d, const struct doc_node *m, const char *key, size_t size,
		      size_t *n_out, item_fn fn, const void *ctx)
{
	return model_list_items(d, model_get_seq(d, m, key), key, size, n_out, fn, ctx);
}

void *model_list_items(struct model_dec *d, const struct doc_node *seq, const char *key,
		       size_t size, size_t *n_out, item_fn fn, const void *ctx)
{
	const struct doc_node *it;
	char *arr;
	size_t mark;

	if (!seq || !(arr = model_dalloc(d, seq->u.seq.n, size)))
		return NULL;
	mark = model_path_field(&d->path, key);
	FOR_EACH_MAP(d, seq, i, it) {
		fn(d, it, arr + (*n_out)++ * size, ctx);
		END_EACH(d, i);
	}
	model_path_pop(&d->path, mark);
	return arr;
}

/* ---- Shared pieces ---- */

static void item_owner_ref(struct model_dec *d, const struct doc_node *it, void *slot,
			   const void *ctx)
{
	struct model_owner_ref *r = slot;

	r->api_version = model_get_str(d, it, "apiVersion");
	r->kind = model_get_str(d, it, "kind");
	r->name = model_get_str(d, it, "name");
	r->uid = model_get_str(d, it, "uid");
	model_get_bool(d, it, "controller", &r->has_controller, &r->controller);
	model_get_bool(d, it, "blockOwnerDeletion", &r->has_block_owner_deletion,
		 &r->block_owner_deletion);
	(void)ctx;
}

void model_dec_meta(struct model_dec *d, const struct doc_node *m, struct model_meta *meta)
{
	meta->name = model_get_str(d, m, "name");
	meta->generate_name = model_get_str(d, m, "generateName");
	meta->ns = model_get_str(d, m, "namespace");
	meta->uid = model_get_str(d, m, "uid");
	meta->resource_version = model_get_str(d, m, "resourceVersion");
	meta->creation_timestamp = model_get_time(d, m, "creationTimestamp");
	meta->deletion_timestamp = model_get_time(d, m, "deletionTimestamp");
	model_get_kv(d, m, "labels", &meta->labels, &meta->n_labels);
	model_get_kv(d, m, "annotations", &meta->annotations, &meta->n_annotations);
	GET_LIST(d, m, "ownerReferences", meta->owner_refs, meta->n_owner_refs, item_owner_ref,
		 NULL);
}

void model_get_meta(struct model_dec *d, const struct doc_node *m, const char *key,
		     struct model_meta *meta)
{
	const struct doc_node *md = model_get_map(d, m, key);
	size_t mark;

	if (!md)
		return;
	mark = model_path_field(&d->path, key);
	model_dec_meta(d, md, meta);
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

static void dec_requirement(struct model_dec *d, const struct doc_node *m,
			    struct model_requirement *r)
{
	model_closed_if(d, m, f_node_requirement);
	r->key = model_get_str(d, m, "key");
	r->operator_text = model_get_str(d, m, "operator");
	r->op = parse_op(r->operator_text);
	model_get_str_list(d, m, "values", &r->values, &r->n_values);
	model_get_int(d, m, "minValues", 32, &r->has_min_values, &r->min_values);
}

static void item_requirement(struct model_dec *d, const struct doc_node *it, void *slot,
			     const void *ctx)
{
	dec_requirement(d, it, slot);
	(void)ctx;
}

void model_get_requirements(struct model_dec *d, const struct doc_node *m, const char *key,
			     struct model_requirement **out, size_t *n_out)
{
	GET_LIST(d, m, key, *out, *n_out, item_requirement, NULL);
}

static void item_term(struct model_dec *d, const struct doc_node *it, void *slot, const void *ctx)
{
	struct model_node_selector_term *t = slot;

	model_closed_if(d, it, f_term);
	model_get_requirements(d, it, "matchExpressions", &t->match_expressions,
			       &t->n_match_expressions);
	model_get_requirements(d, it, "matchFields", &t->match_fields, &t->n_match_fields);
	(void)ctx;
}

struct model_node_selector *model_get_node_selector(struct model_dec *d, const struct doc_node *m,
						     const char *key)
{
	const struct doc_node *ns = model_get_map(d, m, key);
	struct model_node_selector *sel;
	size_t mark;

	if (!ns)
		return NULL;
	DALLOC(d, sel, 1);
	if (!sel)
		return NULL;
	mark = model_path_field(&d->path, key);
	model_closed_if(d, ns, f_node_selector);
	GET_LIST(d, ns, "nodeSelectorTerms", sel->terms, sel->n_terms, item_term, NULL);
	model_path_pop(&d->path, mark);
	return sel;
}

void model_dec_taint(struct model_dec *d, const struct doc_node *m, struct model_taint *t)
{
	model_closed_if(d, m, f_taint);
	t->key = model_get_str(d, m, "key");
	t->value = model_get_str(d, m, "value");
	t->effect = model_get_str(d, m, "effect");
	t->time_added = model_get_time(d, m, "timeAdded");
}

static void item_taint(struct model_dec *d, const struct doc_node *it, void *slot, const void *ctx)
{
	model_dec_taint(d, it, slot);
	(void)ctx;
}

void model_get_taints(struct model_dec *d, const struct doc_node *m, const char *key,
		       struct model_taint **out, size_t *n_out)
{
	GET_LIST(d, m, key, *out, *n_out, item_taint, NULL);
}

static void item_toleration(struct model_dec *d, const struct doc_node *it, void *slot,
			    const void *ctx)
{
	struct model_toleration *t = slot;

	model_closed_if(d, it, f_toleration);
	t->key = model_get_str(d, it, "key");
	t->operator_text = model_get_str(d, it, "operator");
	t->value = model_get_str(d, it, "value");
	t->effect = model_get_str(d, it, "effect");
	model_get_int(d, it, "tolerationSeconds", 64, &t->has_toleration_seconds,
		&t->toleration_seconds);
	(void)ctx;
}

void model_get_tolerations(struct model_dec *d, const struct doc_node *m, const char *key,
			    struct model_toleration **out, size_t *n_out)
{
	GET_LIST(d, m, key, *out, *n_out, item_toleration, NULL);
}
