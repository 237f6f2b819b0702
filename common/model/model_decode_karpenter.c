/* model_decode_karpenter.c - Karpenter objects from their trees: NodePool
 * (template requirements, taints, limits, node class reference,
 * disruption), NodeClaim, EC2NodeClass (kept as written, with the fields
 * its CRD checks read out) and NodeOverlay. */
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

static void item_budget(struct model_dec *d, const struct doc_node *it, void *slot,
			const void *ctx)
{
	struct model_disruption_budget *b = slot;

	b->nodes = model_get_str(d, it, "nodes");
	b->schedule = model_get_str(d, it, "schedule");
	b->duration = model_get_str(d, it, "duration");
	model_get_str_list(d, it, "reasons", &b->reasons, &b->n_reasons);
	(void)ctx;
}

static void dec_disruption(struct model_dec *d, const struct doc_node *spec,
			   struct model_node_pool *p)
{
	const struct doc_node *m = model_get_map(d, spec, "disruption");
	size_t mark;

	if (!m)
		return;
	p->has_disruption = true;
	mark = model_path_field(&d->path, "disruption");
	p->consolidation_policy = model_get_str(d, m, "consolidationPolicy");
	p->consolidate_after = model_get_str(d, m, "consolidateAfter");
	GET_LIST(d, m, "budgets", p->budgets, p->n_budgets, item_budget, NULL);
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
			p->termination_grace_period = model_get_str(d, ts,
								    "terminationGracePeriod");
			model_path_pop(&d->path, sm);
		}
		model_path_pop(&d->path, tm);
	}
	dec_disruption(d, spec, p);
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

/* A selector term: presence matters to the CRD's rules (tags: {} is
 * there), so tags are looked up apart from their entries. */
static void item_ec2_term(struct model_dec *d, const struct doc_node *it, void *slot,
			  const void *ctx)
{
	struct model_ec2_term *t = slot;

	t->has_tags = model_child(it, "tags") != NULL;
	model_get_kv(d, it, "tags", &t->tags, &t->n_tags);
	t->id = model_get_str(d, it, "id");
	t->name = model_get_str(d, it, "name");
	t->alias = model_get_str(d, it, "alias");
	t->owner = model_get_str(d, it, "owner");
	t->ssm_parameter = model_get_str(d, it, "ssmParameter");
	(void)ctx;
}

static void get_ec2_terms(struct model_dec *d, const struct doc_node *spec, const char *key,
			  struct model_ec2_terms *t)
{
	t->present = model_child(spec, key) != NULL;
	GET_LIST(d, spec, key, t->items, t->n, item_ec2_term, NULL);
}

static void item_block_device(struct model_dec *d, const struct doc_node *it, void *slot,
			      const void *ctx)
{
	struct model_ec2_block_device *b = slot;
	const struct doc_node *ebs = model_get_map(d, it, "ebs");
	size_t mark;

	model_get_bool(d, it, "rootVolume", NULL, &b->root_volume);
	(void)ctx;
	if (!ebs)
		return;
	b->has_ebs = true;
	mark = model_path_field(&d->path, "ebs");
	b->volume_size = model_get_str(d, ebs, "volumeSize");
	b->volume_type = model_get_str(d, ebs, "volumeType");
	b->snapshot_id = model_get_str(d, ebs, "snapshotID");
	model_path_pop(&d->path, mark);
}

static void dec_metadata_options(struct model_dec *d, const struct doc_node *spec,
				 struct model_ec2_node_class *c)
{
	const struct doc_node *m = model_get_map(d, spec, "metadataOptions");
	size_t mark;

	if (!m)
		return;
	c->has_metadata_options = true;
	mark = model_path_field(&d->path, "metadataOptions");
	c->http_endpoint = model_get_str(d, m, "httpEndpoint");
	c->http_protocol_ipv6 = model_get_str(d, m, "httpProtocolIPv6");
	c->http_tokens = model_get_str(d, m, "httpTokens");
	model_get_int(d, m, "httpPutResponseHopLimit", 64, &c->has_hop_limit, &c->hop_limit);
	model_path_pop(&d->path, mark);
}

static void dec_kubelet(struct model_dec *d, const struct doc_node *spec,
			struct model_ec2_node_class *c)
{
	const struct doc_node *m = model_get_map(d, spec, "kubelet");
	size_t mark;

	if (!m)
		return;
	mark = model_path_field(&d->path, "kubelet");
	model_get_int(d, m, "maxPods", 32, &c->has_max_pods, &c->max_pods);
	model_get_int(d, m, "podsPerCore", 32, &c->has_pods_per_core, &c->pods_per_core);
	model_get_int(d, m, "imageGCHighThresholdPercent", 32, &c->has_gc_high, &c->gc_high);
	model_get_int(d, m, "imageGCLowThresholdPercent", 32, &c->has_gc_low, &c->gc_low);
	model_path_pop(&d->path, mark);
}

/* The fields of an EC2NodeClass's spec in the CRD Karpenter v1.15.2
 * installs (its openAPIV3Schema; the API server refuses any other under
 * strict field validation). Inside them the spec is kept as written. */
static const char *const f_ec2_spec[] = {
	"amiFamily", "amiSelectorTerms", "associatePublicIPAddress", "blockDeviceMappings",
	"capacityReservationSelectorTerms", "connectionTracking", "context", "cpuOptions",
	"detailedMonitoring", "enclaveOptions", "instanceProfile", "instanceStorePolicy",
	"ipPrefixCount", "kubelet", "metadataOptions", "networkInterfaces",
	"placementGroupSelector", "role", "securityGroupSelectorTerms", "subnetSelectorTerms",
	"tags", "userData", NULL
};

void model_dec_ec2_node_class(struct model_dec *d, const struct doc_node *root,
			       struct model_ec2_node_class *c)
{
	const struct doc_node *spec = model_get_map(d, root, "spec");
	struct doc_arena *a;
	size_t mark;

	if (!spec)
		return;
	a = model_set_doc_arena(d->set);
	c->spec = a ? doc_clone(a, spec) : NULL;
	if (!c->spec)
		d->oom = 1;
	mark = model_path_field(&d->path, "spec");
	model_closed_fields(d, spec, f_ec2_spec, NULL);
	c->role = model_get_str(d, spec, "role");
	c->instance_profile = model_get_str(d, spec, "instanceProfile");
	c->ami_family = model_get_str(d, spec, "amiFamily");
	get_ec2_terms(d, spec, "subnetSelectorTerms", &c->subnet_terms);
	get_ec2_terms(d, spec, "securityGroupSelectorTerms", &c->security_group_terms);
	get_ec2_terms(d, spec, "amiSelectorTerms", &c->ami_terms);
	model_get_kv(d, spec, "tags", &c->tags, &c->n_tags);
	dec_metadata_options(d, spec, c);
	GET_LIST(d, spec, "blockDeviceMappings", c->block_devices, c->n_block_devices,
		 item_block_device, NULL);
	dec_kubelet(d, spec, c);
	model_path_pop(&d->path, mark);
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
