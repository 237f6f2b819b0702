/* test_remedy.c - remedies for drifted nodes, on the agent's sysfs
 * fixtures (tests/fixtures/agent/mksysfs.sh): the p5.48xlarge-degraded
 * node (GPU 0000:a8:00.0 and EFAs 0000:51:00.0, 0000:52:00.0 gone), a
 * healthy p5 with one GPU made to fall off the bus, and a p5 with every
 * GPU gone. The rules must be the expected ones, valid for the model,
 * and keep the planner off the devices they name. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dt_test.h"
#include "hwdb.h"
#include "model.h"
#include "plan.h"
#include "probe.h"
#include "remedy.h"
#include "topo_slices.h"
#include "topo_verify.h"

#define FIXTURES DT_AGENT_FIXTURES
#define NODE "ip-10-0-0-7.ec2.internal"

/* A probed fixture, verified against hwdb's entry for its type. */
struct node {
	struct topo t;
	struct topo_verify_result vr;
	const struct hwdb_type *type;
};

static void node_load(struct node *n, const char *fixture)
{
	struct dt_err err = { 0 };
	char root[4096];

	memset(n, 0, sizeof(*n));
	snprintf(root, sizeof(root), "%s/%s", FIXTURES, fixture);
	CU_ASSERT_EQUAL_FATAL(probe_run(root, NULL, &n->t, &err), 0);
	n->type = hwdb_lookup("p5.48xlarge");
	CU_ASSERT_PTR_NOT_NULL_FATAL(n->type);
}

static void node_verify(struct node *n)
{
	struct dt_err err = { 0 };

	topo_verify_result_free(&n->vr);
	CU_ASSERT_EQUAL_FATAL(topo_verify_entry(&n->t, n->type, &n->vr, &err), 0);
}

static void node_free(struct node *n)
{
	topo_verify_result_free(&n->vr);
	topo_free(&n->t);
}

static const struct rem_device *find(const struct rem_assessment *a, const char *device)
{
	for (size_t i = 0; i < a->n_devices; i++)
		if (!strcmp(a->devices[i].device, device))
			return &a->devices[i];
	return NULL;
}


/* The drivers' names, written here from their rules as the drivers'
 * sources state them (docs/remedy.md, "Device names"), apart from topo's
 * code: the NVIDIA DRA driver's gpu-<minor>, the minor being the GPU's
 * place among the node's GPUs in bus order; DRANET's pci-<address> with
 * ':' and '.' as '-'. */
static void name_of(const struct topo *t, const char *bdf, char *buf, size_t len)
{
	size_t minor = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < t->n_devices; i++) {
		const struct topo_device *d = &t->devices[i];

		if (!strcmp(d->bdf_str, bdf)) {
			if (d->kind == TOPO_GPU) {
				snprintf(buf, len, "gpu-%zu", minor);
			} else {
				snprintf(buf, len, "pci-%s", bdf);
				for (char *c = buf; *c; c++)
					*c = *c == ':' || *c == '.' ? '-' : *c;
			}
		}
		minor += d->kind == TOPO_GPU;
	}
}

/* ---- The degraded p5 ---- */

static void test_degraded_rules(void)
{
	struct rem_assessment a;
	struct dt_err err = { 0 };
	struct node n;
	size_t gpus = 0, efas = 0;

	node_load(&n, "p5.48xlarge-degraded");
	node_verify(&n);
	CU_ASSERT_EQUAL(n.vr.verdict, TOPO_DRIFT);
	CU_ASSERT_EQUAL_FATAL(rem_assess(NODE, &n.vr, &n.t, n.type, &a, &err), 0);
	/* The root that lost its GPU: its 4 EFAs; the root that lost two
	 * EFAs (the node lacks them too): its GPU. Nothing else. */
	for (size_t i = 0; i < a.n_devices; i++) {
		const struct rem_device *d = &a.devices[i];
		char want[TOPO_DEVICE_NAME_MAX];

		/* Named as the drivers name it on the node (the GPU at
		 * 0000:a8:00.0 is gone from this node: the minors after it
		 * moved down). */
		name_of(&n.t, d->bdf, want, sizeof(want));
		DT_ASSERT_STR(d->device, want);
		if (!strcmp(d->driver, HWDB_DRIVER_GPU)) {
			gpus++;
			CU_ASSERT_EQUAL(d->cause, REM_EFA_MISSING);
			CU_ASSERT_PTR_NOT_NULL(strstr(d->difference, "has 1 GPU + 2 EFAs, hwdb has "
						      "1 GPU + 4 EFAs"));
		} else {
			efas++;
			DT_ASSERT_STR(d->driver, HWDB_DRIVER_EFA);
			CU_ASSERT_EQUAL(d->cause, REM_GPU_MISSING);
			CU_ASSERT_PTR_NOT_NULL(strstr(d->difference, "has 0 GPUs + 4 EFAs, hwdb has "
						      "1 GPU + 4 EFAs"));
		}
	}
	CU_ASSERT_EQUAL(gpus, 1);
	CU_ASSERT_EQUAL(efas, 4);
	/* 3 devices gone and 5 tainted of 40: the node stays fit. */
	CU_ASSERT_EQUAL(a.expected_devices, 40);
	CU_ASSERT_EQUAL(a.usable_devices, 37 - 5);
	CU_ASSERT_EQUAL(a.usable_gpus, 6);
	CU_ASSERT_FALSE(a.node_unfit);
	/* The tainted GPU is the one that shares a root with the EFAs that
	 * are left from 0000:51:00.0 and 0000:52:00.0's root. */
	{
		const struct rem_device *g = &a.devices[0];
		bool shares = false;

		for (size_t i = 0; i < n.t.n_devices; i++)
			if (n.t.devices[i].kind == TOPO_EFA &&
			    !strcmp(n.t.devices[i].pcie_root, g->root))
				shares = true;
		CU_ASSERT(shares);
		CU_ASSERT_PTR_NOT_NULL(find(&a, g->device));
	}
	rem_assessment_free(&a);
	node_free(&n);
}

/* The objects: names, labels, selector, taint; valid for the model; the
 * printed YAML loads back as the same objects. */
static void test_degraded_objects_valid(void)
{
	struct model_set *set = model_set_new(), *back = model_set_new();
	struct rem_objects o;
	struct dt_diags errs;
	struct dt_err err = { 0 };
	struct strbuf sb = STRBUF_INIT;
	char want[REM_NAME_MAX];
	struct node n;

	CU_ASSERT_PTR_NOT_NULL_FATAL(set);
	CU_ASSERT_PTR_NOT_NULL_FATAL(back);
	dt_diags_init(&errs);
	node_load(&n, "p5.48xlarge-degraded");
	node_verify(&n);
	CU_ASSERT_EQUAL_FATAL(rem_node_objects(NODE, &n.vr, &n.t, n.type, set, &o, &err), 0);
	CU_ASSERT_EQUAL_FATAL(o.n_rules, 5);
	CU_ASSERT_PTR_NULL(o.node);
	for (size_t i = 0; i < o.n_rules; i++) {
		const struct model_object *r = o.rules[i];
		const struct model_device_taint_rule *tr = &r->u.taint_rule;

		CU_ASSERT_EQUAL(r->kind, MODEL_DEVICE_TAINT_RULE);
		CU_ASSERT_PTR_NOT_NULL_FATAL(tr->device_selector);
		DT_ASSERT_STR(tr->device_selector->pool, NODE);
		rem_rule_name(NODE, tr->device_selector->device, want, sizeof(want));
		DT_ASSERT_STR(r->meta.name, want);
		DT_ASSERT_STR(tr->taint.key, REM_TAINT_KEY);
		DT_ASSERT_STR(tr->taint.effect, "NoSchedule");
		CU_ASSERT_EQUAL_FATAL(r->meta.n_labels, 1);
		DT_ASSERT_STR(r->meta.labels[0].value, NODE);
		CU_ASSERT_EQUAL(model_validate_object(r, NULL, &errs), 0);
	}
	DT_ASSERT_STR(o.rules[0]->u.taint_rule.taint.value, "efa-missing");
	DT_ASSERT_STR(o.rules[0]->u.taint_rule.device_selector->driver, "gpu.nvidia.com");
	DT_ASSERT_STR(o.rules[1]->u.taint_rule.taint.value, "gpu-missing");
	DT_ASSERT_STR(o.rules[1]->u.taint_rule.device_selector->driver, "dra.net");
	for (size_t i = 0; i < errs.n; i++)
		fprintf(stderr, "    %s\n", errs.msgs[i]);
	CU_ASSERT_EQUAL(errs.n, 0);
	CU_ASSERT_EQUAL(rem_emit(&o, NODE, DOC_FORMAT_YAML, &sb), 0);
	CU_ASSERT_EQUAL_FATAL(model_set_load_buffer(back, sb.buf, sb.len, "out.yaml", &errs, &err),
			      0);
	CU_ASSERT_EQUAL_FATAL(model_set_count(back, MODEL_DEVICE_TAINT_RULE), 5);
	for (size_t i = 0; i < o.n_rules; i++)
		CU_ASSERT(model_object_equal(o.rules[i], back->objects[i]));
	CU_ASSERT_EQUAL(model_validate_set(back, NULL, &errs), 0);
	sb_free(&sb);
	dt_diags_free(&errs);
	rem_objects_free(&o);
	model_set_free(set);
	model_set_free(back);
	node_free(&n);
}

/* ---- Planning with the rules ---- */

#define PLAN_BASE \
	"apiVersion: v1\nkind: Node\nmetadata:\n  name: " NODE "\n  labels:\n" \
	"    kubernetes.io/hostname: " NODE "\n" \
	"    node.kubernetes.io/instance-type: p5.48xlarge\n    kubernetes.io/arch: amd64\n" \
	"status:\n  allocatable: {cpu: '190', memory: 2000Gi, pods: '110'}\n---\n" \
	"apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: gpus}\n" \
	"spec:\n  devices:\n    requests:\n    - name: gpu\n" \
	"      exactly: {deviceClassName: gpu.nvidia.com, count: %d}\n---\n" \
	"apiVersion: v1\nkind: Pod\nmetadata: {name: trainer}\nspec:\n" \
	"  nodeSelector: {kubernetes.io/hostname: " NODE "}\n" \
	"  resourceClaims: [{name: gpus, resourceClaimName: gpus}]\n" \
	"  containers:\n  - name: c\n    image: busybox\n    resources: {claims: [{name: gpus}]}\n"
/* A NodePool that can launch nothing: the pod has the existing node only. */
#define NO_LAUNCH \
	"---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: full}\n" \
	"spec:\n  limits: {cpu: '1'}\n  template:\n    spec:\n" \
	"      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}\n"

/* Plan a pod that needs gpus GPUs, with the node's predicted slices and,
 * when with_rules, its remedies; no_launch: no new node can be made. The
 * set and its plan go to *setp and rep (the caller frees both, rep
 * first); the plan is checked as `dratopo plan` checks its input. */
static const struct plan_result *plan_on(struct node *n, int gpus, bool with_rules,
					 bool no_launch, struct model_set **setp,
					 struct plan_report *rep)
{
	struct model_object *slices[HWDB_MAX_SLICES];
	struct model_set *set = model_set_new();
	struct plan_request rq = { .set = set, .format = PLAN_FORMAT_NONE };
	struct dt_diags warn, errs;
	struct dt_err err = { 0 };
	struct rem_objects o = { 0 };
	char yaml[4096];
	size_t n_slices = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(set);
	dt_diags_init(&warn);
	dt_diags_init(&errs);
	snprintf(yaml, sizeof(yaml), PLAN_BASE "%s", gpus, no_launch ? NO_LAUNCH : "");
	CU_ASSERT_EQUAL_FATAL(model_set_load_buffer(set, yaml, strlen(yaml), "plan.yaml", &errs,
						    &err), 0);
	CU_ASSERT_EQUAL(errs.n, 0);
	CU_ASSERT_EQUAL_FATAL(topo_slices(&n->t, NULL, NODE, set, slices, &n_slices, &warn,
					   &err), 0);
	if (with_rules)
		CU_ASSERT_EQUAL_FATAL(rem_node_objects(NODE, &n->vr, &n->t, n->type, set, &o,
						       &err), 0);
	if (plan_execute(&rq, rep) == PLAN_EXIT_FAIL)
		fprintf(stderr, "\n  plan: %s\n", rep->diags.n ? rep->diags.msgs[0] : "?");
	CU_ASSERT_PTR_NOT_NULL_FATAL(rep->result);
	rem_objects_free(&o);
	dt_diags_free(&warn);
	dt_diags_free(&errs);
	*setp = set;
	return rep->result;
}

static void test_rules_keep_planning_off(void)
{
	struct model_set *set;
	struct plan_report rep;
	const struct plan_result *res;
	struct node n;
	char tainted[TOPO_LEARNED_NAME] = "", rule[REM_NAME_MAX];
	struct rem_assessment a;
	struct dt_err err = { 0 };

	node_load(&n, "p5.48xlarge-degraded");
	node_verify(&n);
	CU_ASSERT_EQUAL_FATAL(rem_assess(NODE, &n.vr, &n.t, n.type, &a, &err), 0);
	snprintf(tainted, sizeof(tainted), "%s", a.devices[0].device);
	rem_assessment_free(&a);
	rem_rule_name(NODE, tainted, rule, sizeof(rule));

	/* Without the rules the node's 7 live GPUs hold a 7-GPU pod. */
	res = plan_on(&n, 7, false, false, &set, &rep);
	CU_ASSERT_EQUAL(res->n_unschedulable, 0);
	CU_ASSERT_EQUAL(res->n_existing, 1);
	CU_ASSERT_EQUAL(res->n_node_claims, 0);
	plan_report_free(&rep);
	model_set_free(set);

	/* With them the tainted GPU is off limits, and the pod, pinned to
	 * this node's host name, cannot go to a new node either (a new node
	 * has a host name of its own, QA-31)... */
	res = plan_on(&n, 7, true, false, &set, &rep);
	CU_ASSERT_EQUAL(res->n_unschedulable, 1);
	CU_ASSERT_EQUAL(res->n_existing, 0);
	CU_ASSERT_EQUAL(res->n_node_claims, 0);
	plan_report_free(&rep);
	model_set_free(set);

	/* ...or, with nowhere else to go, is unschedulable, and the reason
	 * for the node names the taint and the rule. */
	res = plan_on(&n, 7, true, true, &set, &rep);
	CU_ASSERT_EQUAL_FATAL(res->n_unschedulable, 1);
	{
		const struct plan_unschedulable *u = &res->unschedulable[0];
		bool named = false;

		for (size_t i = 0; i < u->n_details; i++)
			named = named || (u->details[i].node && strstr(u->details[i].reason, rule) &&
					  strstr(u->details[i].reason, "dratopo.io/drift=efa-missing:"
						 "NoSchedule"));
		if (!named)
			fprintf(stderr, "\n  reason: %s\n", u->reason);
		CU_ASSERT(named);
	}
	plan_report_free(&rep);
	model_set_free(set);

	/* Six GPUs fit, none of them the tainted one. */
	res = plan_on(&n, 6, true, true, &set, &rep);
	CU_ASSERT_EQUAL(res->n_unschedulable, 0);
	CU_ASSERT_EQUAL_FATAL(res->n_existing, 1);
	CU_ASSERT_EQUAL_FATAL(res->existing[0].n_claims, 1);
	CU_ASSERT_EQUAL(res->existing[0].claims[0].n_results, 6);
	for (size_t i = 0; i < res->existing[0].claims[0].n_results; i++)
		CU_ASSERT(strcmp(res->existing[0].claims[0].results[i].device, tainted) != 0);
	plan_report_free(&rep);
	model_set_free(set);
	node_free(&n);
}

/* The anchor every apply stream ends with: one valid DeviceTaintRule that
 * selects no device and taints with effect None, so a plan given it
 * along with a node's slices still has all 8 GPUs. */
static void test_anchor(void)
{
	static const struct rem_summary sum = { 1, 5, 0, 2 };
	struct model_object *slices[HWDB_MAX_SLICES];
	struct model_set *set = model_set_new();
	struct plan_request rq = { .set = set, .format = PLAN_FORMAT_NONE };
	struct plan_report rep;
	const struct model_object *o;
	const struct model_device_taint_rule *tr;
	struct strbuf sb = STRBUF_INIT;
	struct dt_diags errs;
	struct dt_err err = { 0 };
	char yaml[4096];
	size_t n_slices = 0;
	struct node n;

	CU_ASSERT_PTR_NOT_NULL_FATAL(set);
	dt_diags_init(&errs);
	snprintf(yaml, sizeof(yaml), PLAN_BASE NO_LAUNCH, 8);
	sb_puts(&sb, yaml);
	CU_ASSERT_EQUAL_FATAL(rem_anchor_emit(&sum, &sb), 0);
	CU_ASSERT_EQUAL_FATAL(model_set_load_buffer(set, sb.buf, sb.len, "plan.yaml", &errs, &err),
			      0);
	CU_ASSERT_EQUAL_FATAL(model_set_count(set, MODEL_DEVICE_TAINT_RULE), 1);
	o = model_set_next(set, MODEL_DEVICE_TAINT_RULE, NULL);
	tr = &o->u.taint_rule;
	DT_ASSERT_STR(o->meta.name, REM_ANCHOR_NAME);
	CU_ASSERT_PTR_NOT_NULL_FATAL(tr->device_selector);
	DT_ASSERT_STR(tr->device_selector->driver, REM_ANCHOR_DRIVER);
	CU_ASSERT_PTR_NULL(tr->device_selector->pool);
	CU_ASSERT_PTR_NULL(tr->device_selector->device);
	DT_ASSERT_STR(tr->taint.key, REM_TAINT_KEY);
	DT_ASSERT_STR(tr->taint.effect, "None");
	CU_ASSERT_EQUAL_FATAL(o->meta.n_annotations, 2);
	DT_ASSERT_STR(o->meta.annotations[1].key, REM_ANNOTATION_REMEDIES);
	DT_ASSERT_STR(o->meta.annotations[1].value, "nodes in drift: 1, DeviceTaintRules: 5, "
		      "Node taints: 0, nodes to lift: 2");
	CU_ASSERT_EQUAL(model_validate_set(set, NULL, &errs), 0);
	CU_ASSERT_EQUAL(errs.n, 0);

	node_load(&n, "p5.48xlarge");
	CU_ASSERT_EQUAL_FATAL(topo_slices(&n.t, NULL, NODE, set, slices, &n_slices, &errs, &err),
			      0);
	CU_ASSERT_EQUAL(plan_execute(&rq, &rep), PLAN_EXIT_OK);
	CU_ASSERT_PTR_NOT_NULL_FATAL(rep.result);
	CU_ASSERT_EQUAL(rep.result->n_existing, 1);
	CU_ASSERT_EQUAL(rep.result->n_unschedulable, 0);
	plan_report_free(&rep);
	node_free(&n);
	sb_free(&sb);
	dt_diags_free(&errs);
	model_set_free(set);
}

/* ---- Other drifts ---- */

/* A GPU off the bus is in no slice: the EFAs of its root are tainted,
 * gpu-off-bus, and the names of the later GPUs shift as the slices'. */
static void test_gpu_off_bus(void)
{
	struct rem_assessment a;
	struct dt_err err = { 0 };
	const char *root = NULL;
	char efa[TOPO_LEARNED_NAME];
	size_t on_root = 0;
	struct node n;

	node_load(&n, "p5.48xlarge");
	for (size_t i = 0; i < n.t.n_devices; i++)
		if (n.t.devices[i].kind == TOPO_GPU) {
			n.t.devices[i].fell_off_bus = true;
			root = n.t.devices[i].pcie_root;
			break;
		}
	CU_ASSERT_PTR_NOT_NULL_FATAL(root);
	node_verify(&n);
	CU_ASSERT_EQUAL(n.vr.verdict, TOPO_DRIFT);
	CU_ASSERT_EQUAL_FATAL(rem_assess(NODE, &n.vr, &n.t, n.type, &a, &err), 0);
	CU_ASSERT_EQUAL(a.n_devices, 4);
	for (size_t i = 0; i < n.t.n_devices; i++) {
		const struct topo_device *d = &n.t.devices[i];
		const struct rem_device *r;

		if (d->kind != TOPO_EFA || strcmp(d->pcie_root, root))
			continue;
		on_root++;
		name_of(&n.t, d->bdf_str, efa, sizeof(efa));
		r = find(&a, efa);
		CU_ASSERT_PTR_NOT_NULL_FATAL(r);
		CU_ASSERT_EQUAL(r->cause, REM_GPU_OFF_BUS);
		DT_ASSERT_STR(rem_cause_value(r->cause), "gpu-off-bus");
		CU_ASSERT_PTR_NOT_NULL(strstr(r->difference, "(1 fell off)"));
	}
	CU_ASSERT_EQUAL(on_root, 4);
	CU_ASSERT_FALSE(a.node_unfit);
	rem_assessment_free(&a);
	node_free(&n);
}

/* No GPU left: the node as a whole is unfit and gets the Node taint. */
static void test_node_unfit(void)
{
	struct model_set *set = model_set_new();
	struct rem_objects o;
	struct dt_err err = { 0 };
	struct dt_diags errs;
	struct strbuf sb = STRBUF_INIT;
	struct node n;

	CU_ASSERT_PTR_NOT_NULL_FATAL(set);
	dt_diags_init(&errs);
	node_load(&n, "p5.48xlarge");
	for (size_t i = 0; i < n.t.n_devices; i++)
		if (n.t.devices[i].kind == TOPO_GPU)
			n.t.devices[i].fell_off_bus = true;
	node_verify(&n);
	CU_ASSERT_EQUAL_FATAL(rem_node_objects(NODE, &n.vr, &n.t, n.type, set, &o, &err), 0);
	CU_ASSERT_EQUAL(o.n_rules, 32);                 /* every EFA: gpu-off-bus */
	CU_ASSERT_PTR_NOT_NULL_FATAL(o.node);
	DT_ASSERT_STR(o.node->meta.name, NODE);
	CU_ASSERT_EQUAL_FATAL(o.node->u.node.n_taints, 1);
	DT_ASSERT_STR(o.node->u.node.taints[0].key, "dratopo.io/drift");
	DT_ASSERT_STR(o.node->u.node.taints[0].value, "unfit");
	DT_ASSERT_STR(o.node->u.node.taints[0].effect, "NoSchedule");
	CU_ASSERT_EQUAL(model_validate_object(o.node, NULL, &errs), 0);
	CU_ASSERT_EQUAL(rem_emit(&o, NODE, DOC_FORMAT_YAML, &sb), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(sb_str(&sb), "# node " NODE " is unfit: kubectl taint nodes "
				      NODE " dratopo.io/drift=unfit:NoSchedule --overwrite\n"));
	sb_reset(&sb);
	CU_ASSERT_EQUAL(rem_emit(&o, NODE, DOC_FORMAT_JSON, &sb), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(sb_str(&sb), "\"nodeTaint\": {"));
	sb_free(&sb);
	dt_diags_free(&errs);
	rem_objects_free(&o);
	model_set_free(set);
	node_free(&n);
}

/* A match needs nothing; lifting names every rule a drift could have
 * made, so the degraded node's rules are all among them. */
static void test_match_and_lift(void)
{
	struct model_set *set = model_set_new();
	struct rem_objects o;
	struct rem_lift l;
	struct dt_err err = { 0 };
	struct strbuf sb = STRBUF_INIT;
	struct node n;

	CU_ASSERT_PTR_NOT_NULL_FATAL(set);
	node_load(&n, "p5.48xlarge");
	node_verify(&n);
	CU_ASSERT_EQUAL(n.vr.verdict, TOPO_MATCH);
	CU_ASSERT_EQUAL_FATAL(rem_node_objects(NODE, &n.vr, &n.t, n.type, set, &o, &err), 0);
	CU_ASSERT_EQUAL(o.n_rules, 0);
	CU_ASSERT_PTR_NULL(o.node);
	rem_objects_free(&o);
	node_free(&n);

	node_load(&n, "p5.48xlarge-degraded");
	node_verify(&n);
	CU_ASSERT_EQUAL_FATAL(rem_node_objects(NODE, &n.vr, &n.t, n.type, set, &o, &err), 0);
	CU_ASSERT_EQUAL_FATAL(rem_lift(NODE, n.type, &n.t, &l, &err), 0);
	/* 8 GPU minors, the node's 30 EFAs by address, the 32 efa-N of older
	 * coordinators. */
	CU_ASSERT_EQUAL(l.n_rule_names, 8 + 30 + 32);
	for (size_t i = 0; i < o.n_rules; i++) {
		bool found = false;

		for (size_t j = 0; j < l.n_rule_names; j++)
			found = found || !strcmp(l.rule_names[j], o.rules[i]->meta.name);
		CU_ASSERT(found);
	}
	CU_ASSERT_EQUAL(rem_lift_emit(&l, &sb), 0);
	/* Objects for kubectl delete -f -, the Node taint's removal a comment. */
	CU_ASSERT_PTR_NOT_NULL(strstr(sb_str(&sb), "---\napiVersion: resource.k8s.io/v1\n"
				      "kind: DeviceTaintRule\nmetadata:\n  name: dratopo-drift."
				      NODE ".gpu-0\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(sb_str(&sb), "# and its Node taint: kubectl taint nodes "
				      NODE " dratopo.io/drift:NoSchedule-\n"));
	{
		size_t docs = 0;

		for (const char *p = sb_str(&sb); (p = strstr(p, "kind: DeviceTaintRule\n")); p++)
			docs++;
		CU_ASSERT_EQUAL(docs, l.n_rule_names);
	}
	sb_free(&sb);
	rem_lift_free(&l);
	rem_objects_free(&o);
	model_set_free(set);
	node_free(&n);
}

/* Names: deterministic, a hash when the node name is too long; a node
 * name that is no DNS subdomain is refused. */
static void test_names(void)
{
	char buf[REM_NAME_MAX], again[REM_NAME_MAX], long_node[260];
	struct rem_assessment a;
	struct dt_err err = { 0 };
	struct node n;

	rem_rule_name("node-1", "gpu-0", buf, sizeof(buf));
	DT_ASSERT_STR(buf, "dratopo-drift.node-1.gpu-0");
	memset(long_node, 'a', 250);
	long_node[250] = '\0';
	rem_rule_name(long_node, "efa-31", buf, sizeof(buf));
	rem_rule_name(long_node, "efa-31", again, sizeof(again));
	DT_ASSERT_STR(buf, again);
	CU_ASSERT_EQUAL(strlen(buf), strlen("dratopo-drift.n0123456789abcdef.efa-31"));
	node_load(&n, "p5.48xlarge-degraded");
	node_verify(&n);
	CU_ASSERT_EQUAL(rem_assess("Bad_Node", &n.vr, &n.t, n.type, &a, &err), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "Bad_Node"));
	rem_assessment_free(&a);
	node_free(&n);
}

DT_SUITE_MAIN_WITH("remedy", dt_agent_fixtures, NULL,
		   DT_TEST(test_degraded_rules),
		   DT_TEST(test_degraded_objects_valid),
		   DT_TEST(test_rules_keep_planning_off),
		   DT_TEST(test_anchor),
		   DT_TEST(test_gpu_off_bus),
		   DT_TEST(test_node_unfit),
		   DT_TEST(test_match_and_lift),
		   DT_TEST(test_names))
