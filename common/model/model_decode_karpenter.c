/* model_decode_karpenter.c - Karpenter objects from their trees: NodePool
 * (template requirements, taints, limits, node class reference), NodeClaim,
 * EC2NodeClass (kept loosely: only what planning reads) and NodeOverlay. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"
#include "strbuf.h"

/* ---- Karpenter ---- */

static void get_node_class_ref(struct model_dec *d, const struct doc_node *m,
			       struct model_node_class_ref *r)
{
	const struct doc_node *ref = model_get_map(d, m, "nodeClassRef");
	size_t mark;

	if (!ref)
		return;
	mark = model_path_field(&d->path, "nodeClassRef");
	r->group = model_get_str(d, ref, "group");
	r->kind = model_get_str(d, ref, "kind");
	r->name = model_get_str(d, ref, "name");
	model_path_pop(&d->path, mark);
}

void model_dec_node_pool(struct model_dec *d, const struct doc_node *root,
			 struct model_node_pool *p)
{
	const struct doc_node *spec = model_get_map(d, root, "spec");
	const struct doc_node *tmpl, *md, *ts;
	size_t mark;

	if (!spec)
		return;
	mark = model_path_field(&d->path, "spec");
	tmpl = model_get_map(d, spec, "template");
	if (tmpl) {
		size_t tm = model_path_field(&d->path, "template");

		md = model_get_map(d, tmpl, "metadata");
		if (md) {
			size_t mm = model_path_field(&d->path, "metadata");

			model_get_kv(d, md, "labels", &p->template_labels, &p->n_template_labels);
			model_get_kv(d, md, "annotations", &p->template_annotations,
			       &p->n_template_annotations);
			model_path_pop(&d->path, mm);
		}
		ts = model_get_map(d, tmpl, "spec");
		if (ts) {
			size_t sm = model_path_field(&d->path, "spec");

			get_node_class_ref(d, ts, &p->node_class_ref);
			model_get_requirements(d, ts, "requirements", &p->requirements,
					 &p->n_requirements);
			model_get_taints(d, ts, "taints", &p->taints, &p->n_taints);
			model_get_taints(d, ts, "startupTaints", &p->startup_taints,
				   &p->n_startup_taints);
			p->expire_after = model_get_str(d, ts, "expireAfter");
			model_path_pop(&d->path, sm);
		}
		model_path_pop(&d->path, tm);
	}
	model_get_resource_list(d, spec, "limits", &p->limits);
	model_get_int(d, spec, "weight", 32, &p->has_weight, &p->weight);
	model_path_pop(&d->path, mark);
}

void model_dec_node_claim(struct model_dec *d, const struct doc_node *root,
			  struct model_node_claim *c)
{
	const struct doc_node *spec = model_get_map(d, root, "spec");
	const struct doc_node *status = model_get_map(d, root, "status");

	if (spec) {
		size_t mark = model_path_field(&d->path, "spec");
		const struct doc_node *res = model_get_map(d, spec, "resources");

		get_node_class_ref(d, spec, &c->node_class_ref);
		model_get_requirements(d, spec, "requirements", &c->requirements,
				       &c->n_requirements);
		model_get_taints(d, spec, "taints", &c->taints, &c->n_taints);
		model_get_taints(d, spec, "startupTaints", &c->startup_taints,
				 &c->n_startup_taints);
		if (res) {
			size_t rm = model_path_field(&d->path, "resources");

			model_get_resource_list(d, res, "requests", &c->resource_requests);
			model_path_pop(&d->path, rm);
		}
		model_path_pop(&d->path, mark);
	}
	if (status) {
		size_t mark = model_path_field(&d->path, "status");

		c->node_name = model_get_str(d, status, "nodeName");
		c->status_provider_id = model_get_str(d, status, "providerID");
		model_path_pop(&d->path, mark);
	}
}

void model_dec_ec2_node_class(struct model_dec *d, const struct doc_node *root,
			       struct model_ec2_node_class *c)
{
	const struct doc_node *spec = model_get_map(d, root, "spec");
	struct doc_arena *a;

	if (!spec)
		return;
	a = model_set_doc_arena(d->set);
	c->spec = a ? doc_clone(a, spec) : NULL;
	if (!c->spec)
		d->oom = 1;
	if (model_child(spec, "role") && model_child(spec, "role")->kind == DOC_STRING)
		c->role = model_get_str(d, spec, "role");
}

void model_dec_node_overlay(struct model_dec *d, const struct doc_node *root,
			    struct model_node_overlay *o)
{
	const struct doc_node *spec = model_get_map(d, root, "spec");
	const struct doc_node *reqs;
	size_t mark;

	if (!spec)
		return;
	o->has_spec = true;
	mark = model_path_field(&d->path, "spec");
	/* Required, but [] is allowed (it selects every type): presence is
	 * kept apart from the count. */
	reqs = model_child(spec, "requirements");
	o->has_requirements = reqs && reqs->kind != DOC_NULL;
	model_get_requirements(d, spec, "requirements", &o->requirements, &o->n_requirements);
	o->price = model_get_str(d, spec, "price");
	o->price_adjustment = model_get_str(d, spec, "priceAdjustment");
	model_get_resource_list(d, spec, "capacity", &o->capacity);
	model_get_int(d, spec, "weight", 32, &o->has_weight, &o->weight);
	model_path_pop(&d->path, mark);
}
