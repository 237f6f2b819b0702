/* test_plan_extres.c - extended resources backed by DRA (plan_extres.c):
 * which DeviceClass backs a name, which pods become DRA pods, and the
 * ResourceClaim kube-scheduler would make for them. */
#include <string.h>

#include "dt_test.h"
#include "plan_internal.h"

static const char manifests[] =
	"apiVersion: resource.k8s.io/v1\n"
	"kind: DeviceClass\n"
	"metadata: {name: l4.example.com}\n"
	"spec:\n"
	"  selectors: [{cel: {expression: 'device.driver == \"gpu.nvidia.com\"'}}]\n"
	"  extendedResourceName: example.com/l4\n"
	"---\n"
	"apiVersion: resource.k8s.io/v1\n"
	"kind: DeviceClass\n"
	"metadata: {name: plain.example.com}\n"
	"spec: {}\n"
	"---\n"
	"apiVersion: v1\n"
	"kind: Pod\n"
	"metadata: {name: two, namespace: ns}\n"
	"spec:\n"
	"  containers:\n"
	"  - {name: a, image: x, resources: {limits: {example.com/l4: '2', cpu: '1'}}}\n"
	"  - {name: b, image: x, resources: {requests: {deviceclass.resource.kubernetes.io/plain.example.com: '3'},\n"
	"                                  limits: {deviceclass.resource.kubernetes.io/plain.example.com: '3'}}}\n"
	"---\n"
	"apiVersion: v1\n"
	"kind: Pod\n"
	"metadata: {name: plugin, namespace: ns}\n"
	"spec:\n"
	"  containers:\n"
	"  - {name: a, image: x, resources: {limits: {nvidia.com/gpu: '1', example.com/l4: '1'}}}\n"
	"---\n"
	"apiVersion: v1\n"
	"kind: Pod\n"
	"metadata: {name: cpu-only, namespace: ns}\n"
	"spec:\n"
	"  containers:\n"
	"  - {name: a, image: x, resources: {limits: {cpu: '1', memory: 1Gi}}}\n";

static struct model_set *load(void)
{
	struct model_set *set = model_set_new();
	struct dt_err err = { 0 };

	CU_ASSERT_PTR_NOT_NULL_FATAL(set);
	CU_ASSERT_EQUAL_FATAL(model_set_load_buffer(set, manifests, sizeof(manifests) - 1,
						    "extres.yaml", NULL, &err), 0);
	return set;
}

static const struct model_pod_spec *pod(struct model_set *set, const char *name)
{
	const struct model_object *o = model_set_find(set, MODEL_POD, "ns", name);

	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	return &o->u.pod.spec;
}

static void test_class_lookup(void)
{
	struct model_set *set = load();
	const struct model_object *c;

	c = plan_extres_class(set, "example.com/l4");
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	DT_ASSERT_STR(c->meta.name, "l4.example.com");
	/* every class has its implicit name, with or without extendedResourceName */
	c = plan_extres_class(set, "deviceclass.resource.kubernetes.io/plain.example.com");
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	DT_ASSERT_STR(c->meta.name, "plain.example.com");
	CU_ASSERT_PTR_NOT_NULL(plan_extres_class(set,
		"deviceclass.resource.kubernetes.io/l4.example.com"));
	CU_ASSERT_PTR_NULL(plan_extres_class(set, "nvidia.com/gpu"));
	CU_ASSERT_PTR_NULL(plan_extres_class(set, "deviceclass.resource.kubernetes.io/none"));
	model_set_free(set);
}

static void test_scan(void)
{
	struct model_set *set = load();
	const char *res, *why;
	bool backed;

	CU_ASSERT_EQUAL(plan_extres_scan(set, pod(set, "two"), NULL, 0, &backed, &res, &why), 0);
	CU_ASSERT(backed);
	/* one resource no class backs keeps the whole pod a device-plugin pod */
	CU_ASSERT_EQUAL(plan_extres_scan(set, pod(set, "plugin"), NULL, 0, &backed, &res, &why), -ENOENT);
	CU_ASSERT(!backed);
	DT_ASSERT_STR(res, "nvidia.com/gpu");
	CU_ASSERT_EQUAL(plan_extres_scan(set, pod(set, "cpu-only"), NULL, 0, &backed, &res, &why), 0);
	CU_ASSERT(!backed);
	model_set_free(set);
}

static void test_claim(void)
{
	struct model_set *set = load();
	struct plan_pod p = { .ns = "ns", .name = "two", .ext = true };
	const struct model_object *o;
	const struct model_claim_spec *cs;

	p.spec = pod(set, "two");
	o = plan_extres_claim(set, &p);
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT(!strncmp(o->meta.name, "two-extended-resources-", 23));
	CU_ASSERT_EQUAL(strlen(o->meta.name), 28);
	DT_ASSERT_STR(o->meta.ns, "ns");
	CU_ASSERT_EQUAL_FATAL(o->meta.n_annotations, 1);
	DT_ASSERT_STR(o->meta.annotations[0].key, "resource.kubernetes.io/extended-resource-claim");
	cs = &o->u.claim.spec;
	CU_ASSERT_EQUAL_FATAL(cs->n_requests, 2);
	DT_ASSERT_STR(cs->requests[0].name, "container-0-request-0");
	DT_ASSERT_STR(cs->requests[0].exactly->device_class_name, "l4.example.com");
	CU_ASSERT_EQUAL(cs->requests[0].exactly->allocation_mode, MODEL_ALLOC_EXACT_COUNT);
	CU_ASSERT_EQUAL(cs->requests[0].exactly->count, 2);
	DT_ASSERT_STR(cs->requests[1].name, "container-1-request-0");
	DT_ASSERT_STR(cs->requests[1].exactly->device_class_name, "plain.example.com");
	CU_ASSERT_EQUAL(cs->requests[1].exactly->count, 3);
	model_set_free(set);
}

/* A long pod name is cut so that the claim's name stays a DNS label. */
static void test_claim_name_length(void)
{
	struct model_set *set = load();
	struct plan_pod p = { .ns = "ns", .ext = true };
	const struct model_object *o;

	p.name = "a-very-long-pod-name-that-goes-on-and-on-and-on-and-on-for-ever";
	p.spec = pod(set, "two");
	o = plan_extres_claim(set, &p);
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT_EQUAL(strlen(o->meta.name), 63);
	model_set_free(set);
}

DT_SUITE_MAIN("plan_extres",
	DT_TEST(test_class_lookup),
	DT_TEST(test_scan),
	DT_TEST(test_claim),
	DT_TEST(test_claim_name_length))
