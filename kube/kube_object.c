/* kube_object.c - objects between the API server and the model: reading
 * fields of JSON answers, decoding an object exactly as a manifest file is
 * loaded, and applying a model object with server-side apply. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "kube_internal.h"
#include "timestamp.h"

static json_object *vget(json_object *o, va_list ap)
{
	const char *key;

	while (o && (key = va_arg(ap, const char *))) {
		json_object *next = NULL;

		if (!json_object_is_type(o, json_type_object) ||
		    !json_object_object_get_ex(o, key, &next))
			return NULL;
		o = next;
	}
	return o;
}

json_object *kube_json_get(json_object *o, ...)
{
	va_list ap;
	json_object *r;

	va_start(ap, o);
	r = vget(o, ap);
	va_end(ap);
	return r;
}

const char *kube_json_str(json_object *o, ...)
{
	va_list ap;
	json_object *r;

	va_start(ap, o);
	r = vget(o, ap);
	va_end(ap);
	return r && json_object_is_type(r, json_type_string) ? json_object_get_string(r) : NULL;
}

char *kube_micro_time(const struct timespec *ts, char *buf, size_t size)
{
	struct timespec now;

	if (!ts) {
		clock_gettime(CLOCK_REALTIME, &now);
		ts = &now;
	}
	return timestamp_format((int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec, 6, buf, size);
}

int kube_decode(struct model_set *s, const char *json, size_t len, const char *origin,
		const struct model_validate_opts *opts, struct model_object **out,
		struct dt_diags *errs)
{
	size_t before = s->n_objects;
	size_t problems = errs ? dt_diags_count(errs) : 0;
	struct dt_diags local;
	struct dt_diags *d = errs;
	bool server = s->server_objects;
	int rc;

	*out = NULL;
	if (!d) {
		dt_diags_init(&local);
		d = &local;
	}
	s->server_objects = true;       /* the API server's: a newer API's field is no error */
	rc = model_set_load_buffer(s, json, len, origin, d, NULL);
	s->server_objects = server;
	if (rc >= 0 && s->n_objects == before + 1) {
		*out = s->objects[before];
		rc = model_validate_object(*out, opts, d);
	}
	if (rc >= 0)
		rc = (int)(dt_diags_count(d) - problems);
	if (d == &local)
		dt_diags_free(&local);
	return rc;
}

/* The encoded object without its status: apply owns only what it sends. */
static struct doc_node *without_status(struct doc_arena *a, const struct doc_node *n)
{
	struct doc_node *m = doc_new_map(a);

	if (!m || !n || n->kind != DOC_MAP)
		return NULL;
	for (size_t i = 0; i < n->u.map.n; i++) {
		const char *key = n->u.map.pairs[i].key->text;

		if (strcmp(key, "status") &&
		    doc_map_set(a, m, key, n->u.map.pairs[i].value))
			return NULL;
	}
	return m;
}

int kube_apply_object(struct kube_client *c, const struct model_object *o,
		      json_object **out, struct dt_err *err)
{
	const struct kube_resource *res = kube_resource_of(o->kind);
	struct doc_arena *a = doc_arena_new();
	struct strbuf sb = STRBUF_INIT;
	struct doc_node *tree = a ? without_status(a, model_encode(o, a)) : NULL;
	json_object *body = NULL;
	struct kube_ref ref = { res, o->meta.ns, o->meta.name, NULL };
	int rc;

	if (!tree || doc_emit_json(tree, 0, &sb) || !(body = json_tokener_parse(sb_str(&sb)))) {
		rc = dt_err_set(err, -ENOMEM, "apply: cannot encode the object");
		goto out;
	}
	if (!o->meta.name) {
		rc = dt_err_set(err, -EINVAL, "apply %s: server-side apply needs metadata.name",
				res->resource);
		goto out;
	}
	rc = kube_apply(c, &ref, body, out, err);
out:
	json_object_put(body);
	sb_free(&sb);
	doc_arena_free(a);
	return rc;
}
