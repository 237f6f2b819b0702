/* model_validate.c - validation's entry points: one object, dispatched on its
 * kind to its family's checks (model_validate_dra.c, _core.c, _karpenter.c,
 * _ec2.c),
 * and a whole set: objects defined twice, then every object. */
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"
#include "strbuf.h"

/* ---- Entry points ---- */

int model_validate_object(const struct model_object *o, const struct model_validate_opts *opts,
			  struct dt_diags *errs)
{
	struct model_val v = { .o = o, .opts = opts, .errs = errs };

	model_v_meta(&v, &o->meta, model_kind_namespaced(o->kind));
	switch (o->kind) {
	case MODEL_DEVICE_CLASS:
		model_v_device_class(&v, &o->u.device_class);
		break;
	case MODEL_RESOURCE_SLICE:
		model_v_slice(&v, &o->u.slice);
		break;
	case MODEL_RESOURCE_CLAIM:
		model_v_claim(&v, &o->u.claim);
		break;
	case MODEL_RESOURCE_CLAIM_TEMPLATE:
		model_v_claim_template(&v, &o->u.claim_template);
		break;
	case MODEL_DEVICE_TAINT_RULE:
		model_v_taint_rule(&v, &o->u.taint_rule);
		break;
	case MODEL_POD: {
		size_t sp = P_FIELD(&v, "spec");

		model_v_pod_spec(&v, &o->u.pod.spec);
		P_POP(&v, sp);
		break;
	}
	case MODEL_NODE:
		model_v_node(&v, &o->u.node);
		break;
	case MODEL_DEPLOYMENT:
	case MODEL_REPLICA_SET:
	case MODEL_STATEFUL_SET:
	case MODEL_JOB:
	case MODEL_DAEMON_SET:
		model_v_workload(&v, &o->u.workload);
		break;
	case MODEL_NODE_POOL:
		model_v_node_pool(&v, &o->u.node_pool);
		break;
	case MODEL_NODE_CLAIM:
		model_v_node_claim(&v, &o->u.node_claim);
		break;
	case MODEL_NODE_OVERLAY:
		model_v_node_overlay(&v, &o->u.node_overlay);
		break;
	case MODEL_POD_GROUP:
		model_v_pod_group(&v, &o->u.pod_group);
		break;
	case MODEL_EC2_NODE_CLASS:
		model_v_ec2_node_class(&v, &o->u.ec2_node_class);
		break;
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
		c = strcmp(a->meta.ns ? a->meta.ns : "default",
			   b->meta.ns ? b->meta.ns : "default");
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
			    struct model_val *v)
{
	struct strbuf sb = STRBUF_INIT;
	char where[160];
	size_t f;

	v->o = o;
	v->path.len = 0;
	v->prefix[0] = '\0';           /* o's, made by model_val_emit */
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
	model_val_emit(v, &sb);
	P_POP(v, f);
}

int model_set_check_duplicates(const struct model_set *s, struct dt_diags *errs)
{
	struct model_val v = { .errs = errs };
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
