/* test_model.c - decoding every kind, the API server's defaults, Lists
 * and JSON, lookups, objects built in code, and the malformed-input corpus
 * (tests/fixtures/model/malformed: each FILE has FILE.expect listing
 * messages, or parts of them, that loading and validating must produce). */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dt_test.h"
#include "cel_value.h"
#include "model.h"
#include "strbuf.h"

static struct model_set *load_fixture(const char *rel, struct dt_diags *errs)
{
	struct model_set *s = model_set_new();
	struct dt_err err;

	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	dt_diags_init(errs);
	CU_ASSERT_EQUAL(model_set_load_file(s, dt_fixture(rel), errs, &err), 0);
	return s;
}

static struct model_set *load_str(const char *yaml, struct dt_diags *errs)
{
	struct model_set *s = model_set_new();

	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	dt_diags_init(errs);
	CU_ASSERT_EQUAL(model_set_load_buffer(s, yaml, strlen(yaml), "t.yaml", errs, NULL), 0);
	return s;
}

static void dump(const struct dt_diags *d)
{
	for (size_t i = 0; i < d->n; i++)
		fprintf(stderr, "    got: %s\n", d->msgs[i]);
}

static const struct model_attribute *attr(const struct model_device *d, const char *name)
{
	for (size_t i = 0; i < d->n_attributes; i++)
		if (!strcmp(d->attributes[i].name, name))
			return &d->attributes[i];
	return NULL;
}

static bool q_eq(const struct quantity *q, const char *text)
{
	struct quantity want;

	return quantity_parse_str(text, &want, NULL) == 0 && quantity_cmp(q, &want) == 0;
}

static void test_kind_table(void)
{
	for (int k = 0; k < MODEL_KIND_COUNT; k++)
		CU_ASSERT_EQUAL(model_kind_lookup(model_kind_api_version((enum model_kind)k),
						  model_kind_name((enum model_kind)k)), k);
	CU_ASSERT_EQUAL(model_kind_lookup("resource.k8s.io/v1beta1", "ResourceClaim"), -1);
	CU_ASSERT_EQUAL(model_kind_lookup("v1", NULL), -1);
	CU_ASSERT(model_kind_namespaced(MODEL_POD));
	CU_ASSERT(!model_kind_namespaced(MODEL_RESOURCE_SLICE));
	DT_ASSERT_STR(model_kind_name(MODEL_KIND_COUNT), "?");
	CU_ASSERT_EQUAL(model_kind_lookup("karpenter.sh/v1alpha1", "NodeOverlay"),
			MODEL_NODE_OVERLAY);
	CU_ASSERT(!model_kind_namespaced(MODEL_NODE_OVERLAY));
}

/* The CRD's price formats, as the planner reads them. */
static void test_overlay_formats(void)
{
	double v = -1;
	bool pct = true;

	CU_ASSERT_EQUAL(model_overlay_parse_price("61.50", &v), 0);
	CU_ASSERT_DOUBLE_EQUAL(v, 61.5, 1e-9);
	CU_ASSERT_EQUAL(model_overlay_parse_price("+1", &v), -EINVAL);
	CU_ASSERT_EQUAL(model_overlay_parse_price(".5", &v), -EINVAL);
	CU_ASSERT_EQUAL(model_overlay_parse_price(NULL, &v), -EINVAL);
	CU_ASSERT_EQUAL(model_overlay_parse_adjustment("+10%", &v, &pct), 0);
	CU_ASSERT(pct);
	CU_ASSERT_DOUBLE_EQUAL(v, 10, 1e-9);
	CU_ASSERT_EQUAL(model_overlay_parse_adjustment("-0.5", &v, &pct), 0);
	CU_ASSERT(!pct);
	CU_ASSERT_DOUBLE_EQUAL(v, -0.5, 1e-9);
	CU_ASSERT_EQUAL(model_overlay_parse_adjustment("-100%", &v, &pct), 0);
	CU_ASSERT_DOUBLE_EQUAL(v, -100, 1e-9);
	CU_ASSERT_EQUAL(model_overlay_parse_adjustment("-05.25%", &v, &pct), 0);
	CU_ASSERT_DOUBLE_EQUAL(v, -5.25, 1e-9);
	CU_ASSERT_EQUAL(model_overlay_parse_adjustment("-100.5%", &v, &pct), -EINVAL);
	CU_ASSERT_EQUAL(model_overlay_parse_adjustment("10%", &v, &pct), -EINVAL);
	CU_ASSERT_EQUAL(model_overlay_parse_adjustment("+5.%", &v, &pct), -EINVAL);
	CU_ASSERT_EQUAL(model_overlay_parse_adjustment("+", &v, &pct), -EINVAL);
}

static void test_every_kind_decoded(void)
{
	struct dt_diags errs;
	struct model_set *s = load_fixture("model/all-kinds.yaml", &errs);
	const struct model_object *o;

	CU_ASSERT_EQUAL(errs.n, 0);
	dump(&errs);
	CU_ASSERT_EQUAL(model_validate_set(s, NULL, &errs), 0);
	dump(&errs);
	for (int k = 0; k < MODEL_KIND_COUNT; k++)
		CU_ASSERT(model_set_count(s, (enum model_kind)k) >= 1);
	CU_ASSERT_EQUAL(model_set_count(s, MODEL_RESOURCE_SLICE), 3);

	o = model_set_find(s, MODEL_POD, "team-a", "worker");
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	DT_ASSERT_STR(o->u.pod.spec.pod_group_name, "trainers");
	o = model_set_find(s, MODEL_POD_GROUP, "team-a", "trainers");
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT(o->u.pod_group.gang && !o->u.pod_group.basic);
	CU_ASSERT_EQUAL(o->u.pod_group.min_count, 2);
	CU_ASSERT_EQUAL_FATAL(o->u.pod_group.n_resource_claims, 2);
	DT_ASSERT_STR(o->u.pod_group.resource_claims[0].resource_claim_template_name, "gpus");
	DT_ASSERT_STR(o->u.pod_group.resource_claims[1].resource_claim_name, "fabric");
	CU_ASSERT_EQUAL_FATAL(o->u.pod_group.n_resource_claim_statuses, 1);
	DT_ASSERT_STR(o->u.pod_group.resource_claim_statuses[0].resource_claim_name,
		      "trainers-shared-gpus-x7k9m");

	o = model_set_find(s, MODEL_DEVICE_CLASS, NULL, "gpu.example.com");
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT_EQUAL(o->u.device_class.n_selectors, 1);
	DT_ASSERT_STR(o->u.device_class.selectors[0].expression,
		      "device.driver == \"gpu.example.com\"");
	CU_ASSERT_EQUAL(o->u.device_class.n_config, 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(o->u.device_class.config[0].parameters);
	CU_ASSERT_EQUAL(o->u.device_class.config[0].parameters->kind, DOC_MAP);
	DT_ASSERT_STR(o->u.device_class.extended_resource_name, "example.com/gpu");
	DT_ASSERT_STR(o->src.file, dt_fixture("model/all-kinds.yaml"));
	CU_ASSERT_EQUAL(o->src.document, 1);
	CU_ASSERT_EQUAL(o->src.item, -1);

	o = model_set_find(s, MODEL_RESOURCE_SLICE, NULL, "node-1-gpus");
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	{
		const struct model_resource_slice_spec *sl = &o->u.slice;
		const struct model_device *d = &sl->devices[0];
		const struct model_attribute *a;

		DT_ASSERT_STR(sl->driver, "gpu.example.com");
		DT_ASSERT_STR(sl->pool.name, "node-1");
		CU_ASSERT_EQUAL(sl->pool.generation, 3);
		CU_ASSERT_EQUAL(sl->pool.resource_slice_count, 1);
		DT_ASSERT_STR(sl->node_name, "node-1");
		CU_ASSERT_EQUAL(sl->n_devices, 2);
		CU_ASSERT_EQUAL(d->n_attributes, 5);
		a = attr(d, "model");
		CU_ASSERT_PTR_NOT_NULL_FATAL(a);
		CU_ASSERT_EQUAL(a->type, CEL_ATTR_STRING);
		DT_ASSERT_STR(a->domain, "gpu.example.com");
		DT_ASSERT_STR(a->id, "model");
		DT_ASSERT_STR(a->v.str.s, "A100");
		a = attr(d, "resource.kubernetes.io/pcieRoot");
		CU_ASSERT_PTR_NOT_NULL_FATAL(a);
		DT_ASSERT_STR(a->domain, "resource.kubernetes.io");
		DT_ASSERT_STR(a->id, "pcieRoot");
		a = attr(d, "driverVersion");
		CU_ASSERT_PTR_NOT_NULL_FATAL(a);
		CU_ASSERT_EQUAL(a->type, CEL_ATTR_VERSION);
		CU_ASSERT(a->version_ok);
		CU_ASSERT_EQUAL(a->version.major, 1);
		CU_ASSERT_EQUAL(a->version.patch, 3);
		DT_ASSERT_STR(a->version.pre, "rc.1");
		a = attr(d, "numa");
		CU_ASSERT_EQUAL(a->type, CEL_ATTR_INT);
		CU_ASSERT_EQUAL(a->v.i, 1);
		a = attr(d, "nvlink");
		CU_ASSERT_EQUAL(a->type, CEL_ATTR_BOOL);
		CU_ASSERT(a->v.b);
		CU_ASSERT_EQUAL(d->n_capacity, 2);
		CU_ASSERT(q_eq(&d->capacity[0].value, "80Gi"));
		CU_ASSERT(d->capacity[0].has_request_policy);
		CU_ASSERT(d->capacity[0].request_policy.has_valid_range);
		CU_ASSERT(q_eq(&d->capacity[0].request_policy.step, "1Gi"));
		CU_ASSERT_EQUAL(sl->devices[1].capacity[0].request_policy.n_valid_values, 3);
		CU_ASSERT(d->allow_multiple_allocations);
		CU_ASSERT_EQUAL(d->n_taints, 1);
		DT_ASSERT_STR(d->taints[0].effect, "NoSchedule");
		CU_ASSERT(d->binds_to_node);
		DT_ASSERT_STR(d->binding_conditions[0], "IsPrepared");
		DT_ASSERT_STR(d->binding_failure_conditions[0], "PrepareFailed");
		/* List-type attributes: the items, and lists in the CEL view. */
		{
			const struct model_device *g1 = &sl->devices[1];
			const struct cel_list *l;

			a = attr(g1, "dra.example.com/pcieRoots");
			CU_ASSERT_PTR_NOT_NULL_FATAL(a);
			CU_ASSERT_EQUAL(a->type, CEL_ATTR_STRINGS);
			CU_ASSERT_EQUAL_FATAL(a->n_items, 2);
			DT_ASSERT_STR(a->items[1].v.str.s, "pci0000:45");
			CU_ASSERT_EQUAL(model_attr_n_values(a), 2);
			a = attr(g1, "numaNodes");
			CU_ASSERT_PTR_NOT_NULL_FATAL(a);
			CU_ASSERT_EQUAL(a->type, CEL_ATTR_INTS);
			CU_ASSERT_EQUAL(model_attr_item_at(a, 1).i, 1);
			a = attr(g1, "flags");
			CU_ASSERT_PTR_NOT_NULL_FATAL(a);
			CU_ASSERT_EQUAL(a->type, CEL_ATTR_BOOLS);
			CU_ASSERT_EQUAL_FATAL(a->n_items, 2);
			CU_ASSERT(a->items[0].v.b && !a->items[1].v.b);
			a = attr(g1, "firmware");
			CU_ASSERT_PTR_NOT_NULL_FATAL(a);
			CU_ASSERT_EQUAL(a->type, CEL_ATTR_VERSIONS);
			CU_ASSERT_EQUAL_FATAL(a->n_items, 2);
			CU_ASSERT(a->items[1].version_ok);
			DT_ASSERT_STR(a->items[1].version.pre, "rc.1");
			CU_ASSERT_EQUAL(model_attr_n_values(attr(g1, "model")), 1);
			CU_ASSERT_EQUAL(g1->cel.n_attrs, 5);
			CU_ASSERT_EQUAL(g1->cel.attrs[1].kind, CEL_ATTR_STRINGS);
			l = g1->cel.attrs[1].v.list;
			CU_ASSERT_PTR_NOT_NULL_FATAL(l);
			CU_ASSERT_EQUAL_FATAL(l->len, 2);
			CU_ASSERT_EQUAL(l->items[0].kind, CEL_STRING);
			CU_ASSERT_EQUAL(g1->cel.attrs[4].v.list->items[1].kind, CEL_OBJECT);
		}
		/* The CEL view of the device. */
		DT_ASSERT_STR(d->cel.driver, "gpu.example.com");
		CU_ASSERT_EQUAL(d->cel.n_attrs, 5);
		CU_ASSERT_EQUAL(d->cel.n_capacity, 2);
		CU_ASSERT(d->cel.allow_multiple_allocations);
		DT_ASSERT_STR(d->cel.capacity[0].domain, "gpu.example.com");
		DT_ASSERT_STR(d->cel.capacity[0].id, "memory");
	}

	o = model_set_find(s, MODEL_DEVICE_TAINT_RULE, NULL, "node-1-gpu-1-drift");
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	{
		const struct model_device_taint_rule *r = &o->u.taint_rule;

		CU_ASSERT_PTR_NOT_NULL_FATAL(r->device_selector);
		DT_ASSERT_STR(r->device_selector->driver, "gpu.example.com");
		DT_ASSERT_STR(r->device_selector->pool, "node-1");
		DT_ASSERT_STR(r->device_selector->device, "gpu-1");
		CU_ASSERT(!r->device_selector->has_device_class_name);
		DT_ASSERT_STR(r->taint.key, "dratopo.io/drift");
		DT_ASSERT_STR(r->taint.value, "gpu-off-bus");
		DT_ASSERT_STR(r->taint.effect, "NoSchedule");
		DT_ASSERT_STR(r->taint.time_added, "2026-01-02T03:04:05Z");
		CU_ASSERT_EQUAL_FATAL(r->n_conditions, 1);
		DT_ASSERT_STR(r->conditions[0].type, "EvictionInProgress");
		DT_ASSERT_STR(r->conditions[0].status, "False");
		DT_ASSERT_STR(r->conditions[0].message, "0 pods to evict");
		CU_ASSERT(r->conditions[0].has_observed_generation);
		CU_ASSERT_EQUAL(r->conditions[0].observed_generation, 1);
		CU_ASSERT(o->meta.ns == NULL);          /* cluster-scoped */
	}

	o = model_set_find(s, MODEL_RESOURCE_SLICE, NULL, "node-1-counters");
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT_PTR_NOT_NULL_FATAL(o->u.slice.node_selector);
	CU_ASSERT_EQUAL(o->u.slice.node_selector->n_terms, 1);
	CU_ASSERT_EQUAL(o->u.slice.node_selector->terms[0].match_expressions[0].op, MODEL_OP_IN);
	CU_ASSERT_EQUAL(o->u.slice.node_selector->terms[0].n_match_fields, 1);
	CU_ASSERT_EQUAL(o->u.slice.n_shared_counters, 1);
	CU_ASSERT_EQUAL(o->u.slice.shared_counters[0].n_counters, 2);

	o = model_set_find(s, MODEL_RESOURCE_SLICE, NULL, "node-1-parts");
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT(o->u.slice.per_device_node_selection);
	DT_ASSERT_STR(o->u.slice.devices[0].consumes_counters[0].name, "gpu-0-counters");
	CU_ASSERT(o->u.slice.devices[1].all_nodes);

	o = model_set_find(s, MODEL_RESOURCE_CLAIM, "team-a", "two-gpus");
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT_PTR_NULL(model_set_find(s, MODEL_RESOURCE_CLAIM, "default", "two-gpus"));
	{
		const struct model_resource_claim *c = &o->u.claim;
		const struct model_exact_request *gpu = c->spec.requests[0].exactly;

		CU_ASSERT_EQUAL(c->spec.n_requests, 2);
		CU_ASSERT_PTR_NOT_NULL_FATAL(gpu);
		CU_ASSERT_EQUAL(gpu->count, 2);
		CU_ASSERT(gpu->has_admin_access && !gpu->admin_access);
		CU_ASSERT_EQUAL(gpu->n_tolerations, 2);
		DT_ASSERT_STR(gpu->tolerations[0].operator_text, "Exists");
		CU_ASSERT(q_eq(&gpu->capacity_requests.items[0].value, "10Gi"));
		CU_ASSERT_EQUAL(c->spec.requests[1].n_first_available, 2);
		CU_ASSERT_EQUAL(c->spec.requests[1].first_available[0].req.allocation_mode,
				MODEL_ALLOC_ALL);
		CU_ASSERT(!c->spec.requests[1].first_available[0].req.has_count);
		CU_ASSERT_EQUAL(c->spec.n_constraints, 2);
		DT_ASSERT_STR(c->spec.constraints[0].requests[1], "nic/fast");
		DT_ASSERT_STR(c->spec.constraints[1].distinct_attribute,
			      "resource.kubernetes.io/pcieRoot");
		CU_ASSERT_EQUAL(c->spec.n_config, 1);
		CU_ASSERT_PTR_NOT_NULL_FATAL(c->status.allocation);
		CU_ASSERT_EQUAL(c->status.allocation->n_results, 2);
		DT_ASSERT_STR(c->status.allocation->results[1].request, "nic/fast");
		DT_ASSERT_STR(c->status.allocation->results[0].share_id,
			      "0a1b2c3d-0000-4000-8000-00000000000a");
		CU_ASSERT(q_eq(&c->status.allocation->results[0].consumed_capacity.items[0].value,
			       "10Gi"));
		DT_ASSERT_STR(c->status.allocation->config[0].source, "FromClaim");
		CU_ASSERT_PTR_NOT_NULL(c->status.allocation->node_selector);
		CU_ASSERT_EQUAL(c->status.n_reserved_for, 1);
	}

	o = model_set_find(s, MODEL_RESOURCE_CLAIM_TEMPLATE, NULL, "one-gpu");
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	DT_ASSERT_STR(o->meta.ns, "default");
	CU_ASSERT_EQUAL(o->u.claim_template.claim_meta.n_labels, 1);
	CU_ASSERT_EQUAL(o->u.claim_template.spec.n_requests, 1);

	o = model_set_find(s, MODEL_POD, "team-a", "worker");
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	{
		const struct model_pod_spec *p = &o->u.pod.spec;

		CU_ASSERT_EQUAL(o->meta.n_owner_refs, 1);
		CU_ASSERT(o->meta.owner_refs[0].controller);
		CU_ASSERT_EQUAL(p->n_node_selector, 1);
		CU_ASSERT_PTR_NOT_NULL_FATAL(p->required_node_affinity);
		CU_ASSERT_EQUAL(p->required_node_affinity->terms[0].match_expressions[0].op,
				MODEL_OP_NOT_IN);
		CU_ASSERT_EQUAL(p->n_tolerations, 2);
		CU_ASSERT_EQUAL(p->tolerations[1].toleration_seconds, 300);
		CU_ASSERT_EQUAL(p->n_resource_claims, 2);
		DT_ASSERT_STR(p->resource_claims[0].resource_claim_name, "two-gpus");
		DT_ASSERT_STR(p->resource_claims[1].resource_claim_template_name, "one-gpu");
		CU_ASSERT_EQUAL(p->n_init_containers, 1);
		CU_ASSERT_EQUAL(p->n_containers, 1);
		CU_ASSERT_EQUAL(p->containers[0].n_claims, 2);
		DT_ASSERT_STR(p->containers[0].claims[0].request, "gpu");
		CU_ASSERT_PTR_NULL(p->containers[0].claims[1].request);
		CU_ASSERT(q_eq(&p->overhead.items[0].value, "100m"));
		CU_ASSERT_EQUAL(p->priority, 1000);
		DT_ASSERT_STR(o->u.pod.status.phase, "Pending");
		DT_ASSERT_STR(o->u.pod.status.resource_claim_statuses[0].resource_claim_name,
			      "worker-extra-x7k2");
	}

	o = model_set_find(s, MODEL_NODE, NULL, "node-1");
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT(o->u.node.unschedulable);
	CU_ASSERT_EQUAL(o->u.node.n_taints, 1);
	CU_ASSERT_EQUAL(o->u.node.capacity.n_items, 4);
	CU_ASSERT(q_eq(&o->u.node.allocatable.items[0].value, "191500m"));

	o = model_set_find(s, MODEL_REPLICA_SET, "team-a", "rs-1");
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT_EQUAL(o->u.workload.replicas, 3);
	CU_ASSERT_EQUAL(o->u.workload.selector->n_match_expressions, 1);
	o = model_set_find(s, MODEL_STATEFUL_SET, NULL, "db");
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT_EQUAL(o->u.workload.replicas, 2);

	o = model_set_find(s, MODEL_NODE_POOL, NULL, "gpu");
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	{
		const struct model_node_pool *p = &o->u.node_pool;

		DT_ASSERT_STR(p->node_class_ref.kind, "EC2NodeClass");
		CU_ASSERT_EQUAL(p->n_requirements, 2);
		CU_ASSERT(p->requirements[0].has_min_values);
		CU_ASSERT_EQUAL(p->requirements[1].op, MODEL_OP_GT);
		CU_ASSERT_EQUAL(p->n_taints, 1);
		CU_ASSERT_EQUAL(p->n_startup_taints, 1);
		DT_ASSERT_STR(p->expire_after, "168h");
		DT_ASSERT_STR(p->termination_grace_period, "48h");
		DT_ASSERT_STR(o->meta.creation_timestamp, "2026-01-02T03:04:05Z");
		DT_ASSERT_STR(o->meta.deletion_timestamp, "2026-01-03T00:00:00+01:00");
		CU_ASSERT(p->has_disruption);
		DT_ASSERT_STR(p->consolidation_policy, "WhenEmpty");
		DT_ASSERT_STR(p->consolidate_after, "10m");
		CU_ASSERT_EQUAL_FATAL(p->n_budgets, 2);
		DT_ASSERT_STR(p->budgets[0].nodes, "10%");
		CU_ASSERT_PTR_NULL(p->budgets[0].schedule);
		DT_ASSERT_STR(p->budgets[1].schedule, "0 9 * * mon-fri");
		DT_ASSERT_STR(p->budgets[1].duration, "8h");
		CU_ASSERT_EQUAL_FATAL(p->budgets[1].n_reasons, 2);
		DT_ASSERT_STR(p->budgets[1].reasons[1], "Empty");
		CU_ASSERT_EQUAL(p->limits.n_items, 2);
		CU_ASSERT_EQUAL(p->weight, 10);
		CU_ASSERT_EQUAL(p->n_template_labels, 1);
		CU_ASSERT_EQUAL(p->n_template_annotations, 1);
	}
	o = model_set_find(s, MODEL_NODE_CLAIM, NULL, "gpu-abc12");
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT_EQUAL(o->u.node_claim.resource_requests.n_items, 2);
	o = model_set_find(s, MODEL_EC2_NODE_CLASS, NULL, "gpu");
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	DT_ASSERT_STR(o->u.ec2_node_class.role, "KarpenterNodeRole-demo");
	CU_ASSERT_PTR_NULL(o->u.ec2_node_class.instance_profile);
	CU_ASSERT_PTR_NOT_NULL(o->u.ec2_node_class.spec);
	CU_ASSERT(o->u.ec2_node_class.subnet_terms.present);
	CU_ASSERT_EQUAL_FATAL(o->u.ec2_node_class.ami_terms.n, 1);
	DT_ASSERT_STR(o->u.ec2_node_class.ami_terms.items[0].alias, "al2023@latest");
	CU_ASSERT_EQUAL_FATAL(o->u.ec2_node_class.security_group_terms.n, 1);
	CU_ASSERT(o->u.ec2_node_class.security_group_terms.items[0].has_tags);
	DT_ASSERT_STR(o->meta.annotations[0].value, "4");
	o = model_set_find(s, MODEL_NODE_OVERLAY, NULL, "p5e-reserved");
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	{
		const struct model_node_overlay *ov = &o->u.node_overlay;

		CU_ASSERT(ov->has_spec && ov->has_requirements);
		CU_ASSERT_EQUAL(ov->n_requirements, 2);
		DT_ASSERT_STR(ov->requirements[1].key, "karpenter.sh/nodepool");
		DT_ASSERT_STR(ov->price, "61.50");
		CU_ASSERT_PTR_NULL(ov->price_adjustment);
		CU_ASSERT_EQUAL(ov->capacity.n_items, 1);
		DT_ASSERT_STR(ov->capacity.items[0].name, "example.com/fuse");
		CU_ASSERT(ov->has_weight && ov->weight == 20);
	}
	/* requirements: [] is there (it selects every type), and no weight
	 * is weight 0 to the planner. */
	o = model_set_find(s, MODEL_NODE_OVERLAY, NULL, "discount");
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT(o->u.node_overlay.has_requirements);
	CU_ASSERT_EQUAL(o->u.node_overlay.n_requirements, 0);
	CU_ASSERT(!o->u.node_overlay.has_weight);
	DT_ASSERT_STR(o->u.node_overlay.price_adjustment, "-10%");

	dt_diags_free(&errs);
	model_set_free(s);
}

static void test_defaults(void)
{
	const char *yaml =
		"apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\n"
		"metadata: {name: t}\nspec:\n  spec:\n    devices:\n      requests:\n"
		"      - name: a\n        exactly:\n          deviceClassName: x\n"
		"          tolerations: [{key: k}]\n"
		"      - name: b\n        exactly: {deviceClassName: x, count: 0}\n"
		"      - name: c\n        exactly: {deviceClassName: x, allocationMode: All}\n"
		"      - name: d\n        firstAvailable: [{name: s, deviceClassName: x}]\n"
		"---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n"
		"  template:\n    spec:\n      containers:\n      - name: c\n        image: i\n"
		"        resources: {limits: {nvidia.com/gpu: 2}, requests: {cpu: 1}}\n"
		"---\napiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec: {}\n"
		"---\napiVersion: batch/v1\nkind: Job\nmetadata: {name: k}\nspec: {parallelism: 3}\n"
		"---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: np}\nspec: {}\n"
		"---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ''}\nspec: {}\n";
	struct dt_diags errs;
	struct model_set *s = load_str(yaml, &errs);
	const struct model_object *o;
	const struct model_claim_spec *c;

	CU_ASSERT_EQUAL(errs.n, 0);
	o = model_set_find(s, MODEL_RESOURCE_CLAIM_TEMPLATE, "default", "t");
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	c = &o->u.claim_template.spec;
	DT_ASSERT_STR(c->requests[0].exactly->allocation_mode_text, "ExactCount");
	CU_ASSERT_EQUAL(c->requests[0].exactly->allocation_mode, MODEL_ALLOC_EXACT_COUNT);
	CU_ASSERT(c->requests[0].exactly->has_count);
	CU_ASSERT_EQUAL(c->requests[0].exactly->count, 1);
	DT_ASSERT_STR(c->requests[0].exactly->tolerations[0].operator_text, "Equal");
	CU_ASSERT_EQUAL(c->requests[1].exactly->count, 1);
	CU_ASSERT_EQUAL(c->requests[2].exactly->allocation_mode, MODEL_ALLOC_ALL);
	CU_ASSERT(!c->requests[2].exactly->has_count);
	DT_ASSERT_STR(c->requests[3].first_available[0].req.allocation_mode_text, "ExactCount");
	CU_ASSERT_EQUAL(c->requests[3].first_available[0].req.count, 1);

	o = model_set_find(s, MODEL_DEPLOYMENT, NULL, "d");
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT(o->u.workload.has_replicas);
	CU_ASSERT_EQUAL(o->u.workload.replicas, 1);
	/* Limits without requests become requests. */
	CU_ASSERT_EQUAL(o->u.workload.template_.spec.containers[0].requests.n_items, 2);
	DT_ASSERT_STR(o->u.workload.template_.spec.containers[0].requests.items[1].name,
		      "nvidia.com/gpu");
	DT_ASSERT_STR(o->u.workload.template_.spec.scheduler_name, "default-scheduler");

	o = model_set_find(s, MODEL_JOB, NULL, "j");
	CU_ASSERT_EQUAL(o->u.workload.parallelism, 1);
	CU_ASSERT(o->u.workload.has_completions);
	CU_ASSERT_EQUAL(o->u.workload.completions, 1);
	o = model_set_find(s, MODEL_JOB, NULL, "k");
	CU_ASSERT_EQUAL(o->u.workload.parallelism, 3);
	CU_ASSERT(!o->u.workload.has_completions);

	o = model_set_find(s, MODEL_NODE_POOL, NULL, "np");
	DT_ASSERT_STR(o->u.node_pool.expire_after, "720h");
	o = model_set_find(s, MODEL_POD, NULL, "p");
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	DT_ASSERT_STR(o->meta.ns, "default");
	dt_diags_free(&errs);
	model_set_free(s);
}

static void test_lists_json_and_sources(void)
{
	const char *json =
		"{\"apiVersion\": \"v1\", \"kind\": \"List\", \"items\": ["
		"{\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {\"name\": \"a\"}},"
		"{\"apiVersion\": \"v1\", \"kind\": \"List\", \"items\": ["
		"  {\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {\"name\": \"b\"}}]},"
		"{\"apiVersion\": \"example.com/v1\", \"kind\": \"Widget\"}]}";
	struct dt_diags errs;
	struct model_set *s = load_str(json, &errs);
	const struct model_object *a, *b;

	CU_ASSERT_EQUAL(errs.n, 0);
	CU_ASSERT_EQUAL(s->n_objects, 2);
	a = model_set_find(s, MODEL_NODE, NULL, "a");
	b = model_set_find(s, MODEL_NODE, NULL, "b");
	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	CU_ASSERT_EQUAL(a->src.item, 0);
	CU_ASSERT_EQUAL(b->src.item, 1);
	CU_ASSERT_EQUAL(b->src.document, 1);
	CU_ASSERT_PTR_EQUAL(model_set_next(s, MODEL_NODE, NULL), a);
	CU_ASSERT_PTR_EQUAL(model_set_next(s, MODEL_NODE, a), b);
	CU_ASSERT_PTR_NULL(model_set_next(s, MODEL_NODE, b));
	CU_ASSERT_EQUAL(s->warnings.n, 1);
	DT_ASSERT_STR(s->warnings.msgs[0], "t.yaml: document 1, item 2: skipping example.com/v1 "
		      "Widget: not a kind dratopo reads");
	dt_diags_free(&errs);
	model_set_free(s);
}

static void test_built_in_code(void)
{
	struct model_set *s = model_set_new();
	struct model_object *o = model_set_add(s, MODEL_RESOURCE_SLICE);
	struct model_device *d;
	struct dt_diags errs;

	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	o->meta.name = model_set_strdup(s, "built");
	o->u.slice.driver = "gpu.nvidia.com";
	o->u.slice.pool.name = "node-9";
	o->u.slice.pool.resource_slice_count = 1;
	o->u.slice.node_name = "node-9";
	o->u.slice.devices = model_set_calloc(s, 1, sizeof(*d));
	o->u.slice.n_devices = 1;
	d = &o->u.slice.devices[0];
	d->name = "gpu-0";
	d->attributes = model_set_calloc(s, 1, sizeof(*d->attributes));
	d->n_attributes = 1;
	d->attributes[0].name = "resource.kubernetes.io/pcieRoot";
	d->attributes[0].type = CEL_ATTR_STRING;
	d->attributes[0].v.str.s = "pci0000:44";
	d->attributes[0].v.str.len = 10;
	CU_ASSERT_EQUAL(model_device_cel_init(s, o->u.slice.driver, d), 0);
	DT_ASSERT_STR(d->cel.attrs[0].domain, "resource.kubernetes.io");
	DT_ASSERT_STR(d->cel.attrs[0].id, "pcieRoot");
	CU_ASSERT_EQUAL(model_object_default(s, o), 0);
	dt_diags_init(&errs);
	CU_ASSERT_EQUAL(model_validate_object(o, NULL, &errs), 0);
	/* Built objects carry no file; their messages start with the object. */
	o->u.slice.pool.resource_slice_count = 0;
	CU_ASSERT_EQUAL(model_validate_object(o, NULL, &errs), 1);
	DT_ASSERT_STR(errs.n ? errs.msgs[0] : NULL, "ResourceSlice built: "
		      "spec.pool.resourceSliceCount: Invalid value: 0: must be greater than zero");
	dt_diags_free(&errs);
	model_set_free(s);
}

static void test_find_many(void)
{
	struct model_set *s = model_set_new();
	char name[32];
	struct model_object *o, *first = NULL;
	size_t n = 0;

	for (int i = 0; i < 5000; i++) {
		o = model_set_add(s, i % 2 ? MODEL_POD : MODEL_NODE);
		snprintf(name, sizeof(name), "obj-%d", i / 2);
		o->meta.name = model_set_strdup(s, name);
		o->meta.ns = i % 4 == 1 ? "team-a" : NULL;
		CU_ASSERT_EQUAL(model_object_default(s, o), 0);
	}
	CU_ASSERT_EQUAL(model_set_count(s, MODEL_POD), 2500);
	o = model_set_find(s, MODEL_POD, "team-a", "obj-0");
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT_EQUAL(o->index, 1);
	CU_ASSERT_PTR_NULL(model_set_find(s, MODEL_POD, NULL, "obj-0"));
	CU_ASSERT_PTR_NOT_NULL(model_set_find(s, MODEL_POD, "default", "obj-1"));
	/* Cluster-scoped: the namespace argument does not matter. */
	CU_ASSERT_PTR_EQUAL(model_set_find(s, MODEL_NODE, "x", "obj-7"),
			    model_set_find(s, MODEL_NODE, NULL, "obj-7"));
	CU_ASSERT_PTR_NULL(model_set_find(s, MODEL_NODE, NULL, "obj-2500"));
	/* A duplicate added later: the first one still wins; the index grows. */
	o = model_set_add(s, MODEL_NODE);
	o->meta.name = "obj-7";
	first = model_set_find(s, MODEL_NODE, NULL, "obj-7");
	CU_ASSERT_PTR_NOT_EQUAL(first, o);
	o = model_set_add(s, MODEL_NODE);
	o->meta.name = "late";
	CU_ASSERT_PTR_EQUAL(model_set_find(s, MODEL_NODE, NULL, "late"), o);
	for (o = NULL; (o = model_set_next(s, MODEL_NODE, o)); )
		n++;
	CU_ASSERT_EQUAL(n, 2502);
	model_set_free(s);
}

static void test_unreadable_file(void)
{
	struct model_set *s = model_set_new();
	struct dt_diags errs;
	struct dt_err err;

	dt_diags_init(&errs);
	CU_ASSERT(model_set_load_file(s, "/nonexistent/x.yaml", &errs, &err) < 0);
	CU_ASSERT_EQUAL(errs.n, 1);
	CU_ASSERT(errs.n && strstr(errs.msgs[0], "/nonexistent/x.yaml") == errs.msgs[0]);
	dt_diags_free(&errs);
	model_set_free(s);
}

/* Unknown fields inside the types read field by field are errors in the
 * API server's words (kubectl's strict field validation), the path written
 * as its JSON decoder writes it (map keys dotted), and still ignored;
 * loosely kept parts (metadata, status, the rest of a pod, inside an
 * EC2NodeClass's spec fields) are not checked. */
static void test_unknown_fields(void)
{
	const char *yaml =
		"apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
		"metadata: {name: c, labels: {a: b}, finalizers: [x], managedFields: []}\n"
		"spec:\n  devices:\n    requests:\n"
		"    - name: gpu\n      exactly: {deviceClassName: g, cout: 2,\n"
		"                selectors: [{cel: {expression: 'true', expresion: x}}],\n"
		"                tolerations: [{key: k, operator: Exists, efect: NoSchedule}]}\n"
		"    - {name: alt, firstAvailable: [{name: s, deviceClassName: g, counts: 1}]}\n"
		"    constraints: [{requests: [gpu], matchAttribute: a.io/x, match: y}]\n"
		"  extra: 1\n"
		"status: {allocation: {devices: {results: [], future: 1}}, devices: []}\n"
		"---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\n"
		"spec:\n  driver: d.io\n  nodeName: node-1\n"
		"  pool: {name: p, generation: 0, resourceSliceCount: 1, size: 3}\n"
		"  devices:\n  - name: d0\n    atributes: {}\n"
		"    attributes: {m: {string: x, str: y}}\n"
		"    capacity: {mem: {value: 1Gi, valu: 2}}\n"
		"---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
		"spec:\n  hostNetwork: true\n  resourceClaims: [{name: r, resourceClaimName: c, "
		"sourc: x}]\n"
		"  containers:\n  - name: c\n    image: i\n    ports: [{containerPort: 80}]\n"
		"    resources: {limits: {cpu: 1}, claim: [], claims: [{name: r, requets: gpu}]}\n"
		"status: {phase: Running, hostIP: 1.2.3.4}\n"
		"---\napiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: {name: e}\n"
		"spec: {role: r, amiSelectorTerms: [{alias: al2023@latest}], anything: 1}\n";
	static const char *const want[] = {
		"t.yaml: document 1 (ResourceClaim default/c): strict decoding error: unknown field "
		"\"spec.devices.requests[0].exactly.cout\"",
		"t.yaml: document 1 (ResourceClaim default/c): strict decoding error: unknown field "
		"\"spec.devices.requests[0].exactly.selectors[0].cel.expresion\"",
		"t.yaml: document 1 (ResourceClaim default/c): strict decoding error: unknown field "
		"\"spec.devices.requests[0].exactly.tolerations[0].efect\"",
		"t.yaml: document 1 (ResourceClaim default/c): strict decoding error: unknown field "
		"\"spec.devices.requests[1].firstAvailable[0].counts\"",
		"t.yaml: document 1 (ResourceClaim default/c): strict decoding error: unknown field "
		"\"spec.devices.constraints[0].match\"",
		"t.yaml: document 1 (ResourceClaim default/c): strict decoding error: unknown field "
		"\"spec.extra\"",
		"t.yaml: document 2 (ResourceSlice s): strict decoding error: unknown field "
		"\"spec.pool.size\"",
		"t.yaml: document 2 (ResourceSlice s): strict decoding error: unknown field "
		"\"spec.devices[0].atributes\"",
		"t.yaml: document 2 (ResourceSlice s): strict decoding error: unknown field "
		"\"spec.devices[0].attributes.m.str\"",
		"t.yaml: document 2 (ResourceSlice s): strict decoding error: unknown field "
		"\"spec.devices[0].capacity.mem.valu\"",
		"t.yaml: document 3 (Pod default/p): strict decoding error: unknown field "
		"\"spec.resourceClaims[0].sourc\"",
		"t.yaml: document 3 (Pod default/p): strict decoding error: unknown field "
		"\"spec.containers[0].resources.claim\"",
		"t.yaml: document 3 (Pod default/p): strict decoding error: unknown field "
		"\"spec.containers[0].resources.claims[0].requets\"",
		"t.yaml: document 4 (EC2NodeClass e): strict decoding error: unknown field "
		"\"spec.anything\"",
	};

	struct dt_diags errs;
	struct model_set *s = load_str(yaml, &errs);
	const struct model_object *o;

	CU_ASSERT_EQUAL(s->warnings.n, 0);
	CU_ASSERT_EQUAL(s->n_objects, 4);
	CU_ASSERT_EQUAL(errs.n, sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		bool found = false;

		for (size_t j = 0; j < errs.n; j++)
			found = found || !strcmp(errs.msgs[j], want[i]);
		if (!found)
			fprintf(stderr, "\n  missing error: %s\n", want[i]);
		CU_ASSERT(found);
	}
	if (errs.n != sizeof(want) / sizeof(want[0]))
		dump(&errs);
	/* Still ignored: the typo does not set count, the default stays. */
	o = model_set_find(s, MODEL_RESOURCE_CLAIM, "default", "c");
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT_PTR_NOT_NULL_FATAL(o->u.claim.spec.requests[0].exactly);
	CU_ASSERT_EQUAL(o->u.claim.spec.requests[0].exactly->count, 1);
	dt_diags_free(&errs);
	model_set_free(s);
	/* What an API server sent: a field dratopo does not know is a newer
	 * API's, a warning without "strict decoding error". */
	s = model_set_new();
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	dt_diags_init(&errs);
	s->server_objects = true;
	CU_ASSERT_EQUAL(model_set_load_buffer(s, yaml, strlen(yaml), "t.yaml", &errs, NULL), 0);
	CU_ASSERT_EQUAL(errs.n, 0);
	CU_ASSERT_EQUAL(s->warnings.n, sizeof(want) / sizeof(want[0]));
	if (s->warnings.n)
		DT_ASSERT_STR(s->warnings.msgs[0], "t.yaml: document 1 (ResourceClaim default/c): "
			      "unknown field \"spec.extra\"");
	dt_diags_free(&errs);
	model_set_free(s);
}

/* resource.k8s.io/v1beta2 is v1's shape; v1beta1 is converted (requests
 * without `exactly`, devices under `basic`); other versions of DRA kinds
 * are an error, not a skip. */
static void test_dra_beta_versions(void)
{
	const char *yaml =
		"apiVersion: resource.k8s.io/v1beta2\nkind: ResourceClaim\nmetadata: {name: b2}\n"
		"spec: {devices: {requests: [{name: g, exactly: {deviceClassName: c, count: 2}}]}}\n"
		"---\napiVersion: resource.k8s.io/v1beta1\nkind: ResourceClaimTemplate\n"
		"metadata: {name: b1}\nspec:\n  spec:\n    devices:\n      requests:\n"
		"      - {name: g, deviceClassName: gpu, count: 3, allocationMode: ExactCount,\n"
		"         selectors: [{cel: {expression: 'true'}}], adminAccess: true}\n"
		"      - name: alt\n        firstAvailable: [{name: x, deviceClassName: small}]\n"
		"---\napiVersion: resource.k8s.io/v1beta1\nkind: ResourceSlice\nmetadata: {name: s}\n"
		"spec:\n  driver: gpu.example.com\n  nodeName: n1\n"
		"  pool: {name: p, generation: 1, resourceSliceCount: 1}\n"
		"  devices:\n  - name: gpu-0\n    basic:\n      attributes: {model: {string: H100}}\n"
		"      capacity: {memory: {value: 80Gi}}\n"
		"---\napiVersion: resource.k8s.io/v1alpha3\nkind: DeviceClass\nmetadata: {name: old}\n";
	struct dt_diags errs;
	struct model_set *s = load_str(yaml, &errs);
	const struct model_object *o;
	const struct model_device_request *r;
	const struct model_device *dev;

	CU_ASSERT_EQUAL(s->n_objects, 3);
	CU_ASSERT_EQUAL(s->warnings.n, 0);
	CU_ASSERT_EQUAL_FATAL(errs.n, 1);
	DT_ASSERT_STR(errs.msgs[0], "t.yaml: document 4: no matches for kind \"DeviceClass\" in "
		      "version \"resource.k8s.io/v1alpha3\" (DeviceClass is served in "
		      "resource.k8s.io/v1, v1beta2 and v1beta1)");
	o = model_set_find(s, MODEL_RESOURCE_CLAIM, "default", "b2");
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT_EQUAL_FATAL(o->u.claim.spec.n_requests, 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(o->u.claim.spec.requests[0].exactly);
	CU_ASSERT_EQUAL(o->u.claim.spec.requests[0].exactly->count, 2);

	o = model_set_find(s, MODEL_RESOURCE_CLAIM_TEMPLATE, "default", "b1");
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT_EQUAL_FATAL(o->u.claim_template.spec.n_requests, 2);
	r = &o->u.claim_template.spec.requests[0];
	CU_ASSERT_PTR_NOT_NULL_FATAL(r->exactly);
	DT_ASSERT_STR(r->exactly->device_class_name, "gpu");
	CU_ASSERT_EQUAL(r->exactly->count, 3);
	CU_ASSERT_EQUAL(r->exactly->n_selectors, 1);
	CU_ASSERT(r->exactly->has_admin_access && r->exactly->admin_access);
	r = &o->u.claim_template.spec.requests[1];
	CU_ASSERT_PTR_NULL(r->exactly);
	CU_ASSERT_EQUAL_FATAL(r->n_first_available, 1);
	DT_ASSERT_STR(r->first_available[0].req.device_class_name, "small");

	o = model_set_find(s, MODEL_RESOURCE_SLICE, NULL, "s");
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT_EQUAL_FATAL(o->u.slice.n_devices, 1);
	dev = &o->u.slice.devices[0];
	DT_ASSERT_STR(dev->name, "gpu-0");
	CU_ASSERT_PTR_NOT_NULL(attr(dev, "model"));
	CU_ASSERT_EQUAL_FATAL(dev->n_capacity, 1);
	CU_ASSERT(q_eq(&dev->capacity[0].value, "80Gi"));
	/* Converted, they validate as v1 objects. */
	dt_diags_free(&errs);
	dt_diags_init(&errs);
	CU_ASSERT_EQUAL(model_validate_set(s, NULL, &errs), 0);
	dump(&errs);
	dt_diags_free(&errs);
	model_set_free(s);
}

/* A directory: its manifests in name order (strcmp: "10-" before "2-"),
 * not hidden files, not subdirectories, not other extensions. */
static void test_load_directory(void)
{
	static const char *const want[] = { "10-claim.yaml", "2-class.json", "3-pod.yml" };
	char tmpl[] = "/tmp/test_model_dirXXXXXX";
	struct model_set *s = model_set_new();
	struct dt_diags errs;
	struct dt_err err;
	char *empty;

	dt_diags_init(&errs);
	CU_ASSERT_EQUAL(model_set_load_file(s, dt_fixture("model/dir"), &errs, &err), 0);
	dump(&errs);
	CU_ASSERT_EQUAL(errs.n, 0);
	CU_ASSERT_EQUAL_FATAL(s->n_objects, 3);
	for (size_t i = 0; i < 3; i++) {
		const char *f = s->objects[i]->src.file;
		const char *base = f ? strrchr(f, '/') : NULL;

		DT_ASSERT_STR(base ? base + 1 : f, want[i]);
		CU_ASSERT(f && strstr(f, "model/dir/") != NULL);
	}
	/* An empty directory is an error naming it. */
	empty = mkdtemp(tmpl);
	CU_ASSERT_PTR_NOT_NULL_FATAL(empty);
	CU_ASSERT_EQUAL(model_set_load_file(s, empty, &errs, &err), -ENOENT);
	CU_ASSERT_EQUAL_FATAL(errs.n, 1);
	CU_ASSERT(strncmp(errs.msgs[0], empty, strlen(empty)) == 0);
	CU_ASSERT(strstr(errs.msgs[0], ": no manifests (*.yaml, *.yml, *.json) in the directory") != NULL);
	CU_ASSERT_EQUAL(s->n_objects, 3);
	rmdir(empty);
	dt_diags_free(&errs);
	model_set_free(s);
}

/* ---- The malformed corpus ---- */

static char *read_all(const char *path)
{
	FILE *f = fopen(path, "rb");
	struct strbuf sb = STRBUF_INIT;
	char buf[4096];
	size_t n;

	if (!f)
		return NULL;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		sb_append(&sb, buf, n);
	fclose(f);
	sb_putc(&sb, '\0');
	return sb_detach(&sb);
}

static bool any_contains(const struct dt_diags *d, const struct dt_diags *w, const char *want)
{
	const char *warn = "warning: ";

	if (!strncmp(want, warn, strlen(warn))) {
		for (size_t i = 0; i < w->n; i++)
			if (strstr(w->msgs[i], want + strlen(warn)))
				return true;
		return false;
	}
	for (size_t i = 0; i < d->n; i++)
		if (strstr(d->msgs[i], want))
			return true;
	return false;
}

static void check_corpus_file(const char *dir, const char *name)
{
	char path[4096], expect_path[4200];
	char *data, *expect;
	struct model_set *s = model_set_new();
	struct dt_diags errs;
	size_t n_expect = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(expect_path, sizeof(expect_path), "%s.expect", path);
	data = read_all(path);
	expect = read_all(expect_path);
	CU_ASSERT_PTR_NOT_NULL_FATAL(data);
	if (!expect) {
		fprintf(stderr, "\n  %s has no .expect file\n", name);
		CU_FAIL("corpus file without expectations");
		free(data);
		model_set_free(s);
		return;
	}
	dt_diags_init(&errs);
	/* Named t.yaml so that expectations do not depend on where the tree is. */
	model_set_load_buffer(s, data, strlen(data), "t.yaml", &errs, NULL);
	CU_ASSERT(model_validate_set(s, NULL, &errs) >= 0);
	for (char *line = strtok(expect, "\n"); line; line = strtok(NULL, "\n")) {
		bool ok = any_contains(&errs, &s->warnings, line);

		n_expect++;
		if (!ok) {
			fprintf(stderr, "\n  %s: missing %s\n", name, line);
			dump(&errs);
		}
		CU_ASSERT(ok);
	}
	if (n_expect == 0) {
		CU_ASSERT_EQUAL(errs.n, 0);
		dump(&errs);
	} else {
		CU_ASSERT(dt_diags_count(&errs) > 0);
	}
	dt_diags_free(&errs);
	model_set_free(s);
	free(data);
	free(expect);
}

static void test_malformed_corpus(void)
{
	char dir[4096];
	DIR *d;
	struct dirent *e;
	int files = 0;

	snprintf(dir, sizeof(dir), "%s", dt_fixture("model/malformed"));
	d = opendir(dir);
	CU_ASSERT_PTR_NOT_NULL_FATAL(d);
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);

		if (e->d_name[0] == '.' || (n > 7 && !strcmp(e->d_name + n - 7, ".expect")))
			continue;
		check_corpus_file(dir, e->d_name);
		files++;
	}
	closedir(d);
	CU_ASSERT(files >= 10);
}

/* A DeviceTaintRule's selector: absent selects nothing (NULL), {} every
 * device (all fields NULL), and the alpha fields 1.35 removed are noted
 * (validation refuses them) without an unknown-field warning. */
/* metadata.generateName without a name: named as the API server names it
 * (the prefix cut to 58 bytes, five characters of its alphabet), every
 * object its own name, the same names on every load; a name given wins. */
static void test_generate_name(void)
{
	static const char yaml[] =
		"apiVersion: v1\nkind: Pod\nmetadata: {generateName: test-dra}\n"
		"spec: {containers: [{name: c, image: i}]}\n---\n"
		"apiVersion: v1\nkind: Pod\nmetadata: {generateName: test-dra}\n"
		"spec: {containers: [{name: c, image: i}]}\n---\n"
		"apiVersion: v1\nkind: Pod\nmetadata: {name: given, generateName: x-}\n"
		"spec: {containers: [{name: c, image: i}]}\n---\n"
		"apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
		"metadata: {generateName: "
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-}\n"
		"spec: {}\n";
	struct dt_diags errs;
	struct model_set *a = load_str(yaml, &errs), *b;
	const struct model_object *p0, *p1, *given, *claim;
	const char *alphabet = "bcdfghjklmnpqrstvwxz2456789";

	CU_ASSERT_EQUAL_FATAL(errs.n, 0);
	p0 = model_set_next(a, MODEL_POD, NULL);
	p1 = model_set_next(a, MODEL_POD, p0);
	given = model_set_next(a, MODEL_POD, p1);
	claim = model_set_next(a, MODEL_RESOURCE_CLAIM, NULL);
	CU_ASSERT_FATAL(p0 && p1 && given && claim);
	CU_ASSERT_EQUAL(strlen(p0->meta.name), strlen("test-dra") + 5);
	CU_ASSERT_EQUAL(strncmp(p0->meta.name, "test-dra", 8), 0);
	CU_ASSERT_EQUAL(strspn(p0->meta.name + 8, alphabet), 5);
	CU_ASSERT_STRING_NOT_EQUAL(p0->meta.name, p1->meta.name);
	DT_ASSERT_STR(p0->meta.generate_name, "test-dra");
	DT_ASSERT_STR(given->meta.name, "given");
	CU_ASSERT_EQUAL(strlen(claim->meta.name), 63);
	CU_ASSERT_EQUAL(strspn(claim->meta.name + 58, alphabet), 5);
	CU_ASSERT_PTR_EQUAL(model_set_find(a, MODEL_POD, "default", p1->meta.name), p1);
	dt_diags_free(&errs);

	b = load_str(yaml, &errs);
	CU_ASSERT_EQUAL_FATAL(errs.n, 0);
	p1 = model_set_next(b, MODEL_POD, model_set_next(b, MODEL_POD, NULL));
	DT_ASSERT_STR(p1->meta.name, model_set_next(a, MODEL_POD, p0)->meta.name);
	dt_diags_free(&errs);
	model_set_free(a);
	model_set_free(b);
}

/* Kinds and versions (served-kinds.txt): in a group dratopo reads, what the
 * API does not serve is an error worded as kubectl's, with what is served;
 * served kinds dratopo does not read, and other groups, are warnings. */
static void test_served_kinds(void)
{
	static const struct {
		const char *api_version, *kind;
		const char *error;      /* NULL: no error */
		const char *warning;    /* NULL: no warning */
	} cases[] = {
		{ "resource.k8s.io/v1", "DeviceClas",
		  "no matches for kind \"DeviceClas\" in version \"resource.k8s.io/v1\" "
		  "(resource.k8s.io/v1 serves DeviceClass, DeviceTaintRule, ResourceClaim, "
		  "ResourceClaimTemplate and ResourceSlice; did you mean DeviceClass?)", NULL },
		{ "resource.k8s.io/v1alpha1", "ResourceClass",
		  "no matches for kind \"ResourceClass\" in version \"resource.k8s.io/v1alpha1\" "
		  "(resource.k8s.io serves v1: DeviceClass, DeviceTaintRule, ResourceClaim, "
		  "ResourceClaimTemplate and ResourceSlice; v1beta2: DeviceClass, DeviceTaintRule, "
		  "ResourceClaim, ResourceClaimTemplate and ResourceSlice; v1beta1: DeviceClass, "
		  "ResourceClaim, ResourceClaimTemplate and ResourceSlice; v1alpha3: "
		  "DeviceTaintRule and ResourcePoolStatusRequest; did you mean ResourceClaim?)",
		  NULL },
		{ "resource.k8s.io/v1alpha3", "ResourceClaimTemplate",
		  "no matches for kind \"ResourceClaimTemplate\" in version "
		  "\"resource.k8s.io/v1alpha3\" (ResourceClaimTemplate is served in "
		  "resource.k8s.io/v1, v1beta2 and v1beta1)", NULL },
		{ "resource.k8s.io/v1beta1", "DeviceTaintRule",
		  "no matches for kind \"DeviceTaintRule\" in version \"resource.k8s.io/v1beta1\" "
		  "(DeviceTaintRule is served in resource.k8s.io/v1, v1beta2 and v1alpha3)", NULL },
		{ "v1", "pod",
		  "no matches for kind \"pod\" in version \"v1\" (v1 serves Binding, "
		  "ComponentStatus, ConfigMap, Endpoints, Event, LimitRange, Namespace, Node, "
		  "PersistentVolume, PersistentVolumeClaim, Pod, PodTemplate, "
		  "ReplicationController, ResourceQuota, Secret, Service and ServiceAccount; "
		  "did you mean Pod?)", NULL },
		{ "v2", "Pod", "no matches for kind \"Pod\" in version \"v2\" (Pod is served in v1)",
		  NULL },
		{ "karpenter.sh/v1beta1", "NodePool",
		  "no matches for kind \"NodePool\" in version \"karpenter.sh/v1beta1\" "
		  "(NodePool is served in karpenter.sh/v1)", NULL },
		{ "resource.k8s.io/v1alpha3", "DeviceTaintRule", NULL, NULL },
		{ "resource.k8s.io/v1beta2", "DeviceTaintRule", NULL, NULL },
		{ "v1", "Namespace", NULL, "skipping v1 Namespace: not a kind dratopo reads" },
		{ "scheduling.k8s.io/v1", "PriorityClass", NULL,
		  "skipping scheduling.k8s.io/v1 PriorityClass: not a kind dratopo reads" },
		{ "example.com/v1", "Widget", NULL,
		  "skipping example.com/v1 Widget: not a kind dratopo reads" },
		{ "resource.nvidia.com/v1beta1", "ComputeDomain", NULL,
		  "skipping resource.nvidia.com/v1beta1 ComputeDomain: not a kind dratopo reads" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char yaml[256], want[1024];
		struct dt_diags errs;
		struct model_set *s;

		snprintf(yaml, sizeof(yaml), "apiVersion: %s\nkind: %s\nmetadata: {name: x}\n"
			 "spec: {deviceSelector: {driver: d}, taint: {key: k, effect: NoSchedule}}\n",
			 cases[i].api_version, cases[i].kind);
		s = load_str(yaml, &errs);
		if (cases[i].error) {
			snprintf(want, sizeof(want), "t.yaml: document 1: %s", cases[i].error);
			CU_ASSERT_EQUAL(errs.n, 1);
			if (errs.n)
				DT_ASSERT_STR(errs.msgs[0], want);
			CU_ASSERT_EQUAL(s->n_objects, 0);
		} else {
			CU_ASSERT_EQUAL(errs.n, 0);
			dump(&errs);
		}
		if (cases[i].warning) {
			snprintf(want, sizeof(want), "t.yaml: document 1: %s", cases[i].warning);
			CU_ASSERT_EQUAL(s->warnings.n, 1);
			if (s->warnings.n)
				DT_ASSERT_STR(s->warnings.msgs[0], want);
		} else {
			CU_ASSERT_EQUAL(s->warnings.n, 0);
		}
		if (!cases[i].error && !cases[i].warning)
			CU_ASSERT_EQUAL(s->n_objects, 1);
		dt_diags_free(&errs);
		model_set_free(s);
	}
}

static void test_taint_rule_selectors(void)
{
	struct dt_diags errs;
	struct model_set *s = load_str(
		"apiVersion: resource.k8s.io/v1\nkind: DeviceTaintRule\nmetadata: {name: a}\n"
		"spec: {taint: {key: k, effect: NoSchedule}}\n---\n"
		"apiVersion: resource.k8s.io/v1\nkind: DeviceTaintRule\nmetadata: {name: b}\n"
		"spec: {deviceSelector: {}, taint: {key: k, effect: NoSchedule}}\n---\n"
		"apiVersion: resource.k8s.io/v1\nkind: DeviceTaintRule\nmetadata: {name: c}\n"
		"spec: {deviceSelector: {deviceClassName: x, driver: d.io, bogus: 1},\n"
		"       taint: {key: k, effect: NoSchedule}}\n", &errs);
	const struct model_object *o;

	CU_ASSERT_EQUAL(errs.n, 1);          /* bogus, below */
	o = model_set_find(s, MODEL_DEVICE_TAINT_RULE, NULL, "a");
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT_PTR_NULL(o->u.taint_rule.device_selector);
	o = model_set_find(s, MODEL_DEVICE_TAINT_RULE, NULL, "b");
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT_PTR_NOT_NULL_FATAL(o->u.taint_rule.device_selector);
	CU_ASSERT_PTR_NULL(o->u.taint_rule.device_selector->driver);
	o = model_set_find(s, MODEL_DEVICE_TAINT_RULE, NULL, "c");
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT(o->u.taint_rule.device_selector->has_device_class_name);
	DT_ASSERT_STR(o->u.taint_rule.device_selector->driver, "d.io");
	/* Only the unknown field is a decoding error (the removed ones are
	 * validation's). */
	CU_ASSERT_EQUAL(errs.n, 1);
	if (errs.n)
		CU_ASSERT_PTR_NOT_NULL(strstr(errs.msgs[0], "strict decoding error: unknown field "
					      "\"spec.deviceSelector.bogus\""));
	dt_diags_free(&errs);
	model_set_free(s);
}

DT_SUITE_MAIN("model",
	      DT_TEST(test_kind_table),
	      DT_TEST(test_overlay_formats),
	      DT_TEST(test_every_kind_decoded),
	      DT_TEST(test_taint_rule_selectors),
	      DT_TEST(test_generate_name),
	      DT_TEST(test_served_kinds),
	      DT_TEST(test_defaults),
	      DT_TEST(test_lists_json_and_sources),
	      DT_TEST(test_built_in_code),
	      DT_TEST(test_find_many),
	      DT_TEST(test_unreadable_file),
	      DT_TEST(test_load_directory),
	      DT_TEST(test_dra_beta_versions),
	      DT_TEST(test_unknown_fields),
	      DT_TEST(test_malformed_corpus))
