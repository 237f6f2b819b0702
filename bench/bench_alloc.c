/* bench_alloc.c - the structured allocator on kube-scheduler's DRA
 * performance shape (test/integration/scheduler_perf/dra,
 * SchedulingWithResourceClaimTemplate/5000pods_500nodes):
 *
 *   500 nodes, each with one ResourceSlice (pool named after the node) of
 *   10 devices instance-<i>: model="A100", family="GPU", driverVersion=1.2.3,
 *   dra.example.com/numa=i, capacity memory=1Gi; DeviceClass test-class
 *   selecting device.driver == "test-driver.cdi.k8s.io"; 5000 pods with
 *   one claim each, one request for one device of test-class.
 *
 * Pods are placed one after another the way the scheduler does: the first
 * node (in order) whose allocator finds devices gets the pod, and the
 * result is committed into that node's allocated state. "scan-all" asks
 * every node from the first for every pod (the scheduler's filter pass,
 * quadratic: 5000 pods x ~250 full nodes); "skip-full" skips nodes that
 * already turned this claim shape away. Three variants,
 * as the published numbers have them: the plain claim, a claim with an
 * attribute selector (model == "A100"), and a claim with a matchAttribute
 * constraint (on dra.example.com/numa).
 *
 *   bench_alloc [PODS [NODES [skip-full|scan-all]]]   (defaults 5000 500, both)
 *
 * The output is a table of pods/s next to kube-scheduler's published
 * numbers (470, 240 and 109 pods/s) and the ratio; dratopo's target is
 * 100 times those. The counts double to show how the time grows. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloc.h"

#define DRIVER "test-driver.cdi.k8s.io"
#define DEVICES_PER_NODE 10

enum variant { PLAIN, SELECTOR, MATCH, N_VARIANTS };

static const char *const variant_name[] = { "plain", "attribute selector", "matchAttribute" };
/* kube-scheduler pods/s: PR #138916 (5000pods_500nodes) and PR #140254. */
static const double anchor[] = { 470.0, 240.0, 109.0 };

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
	fprintf(stderr, "bench_alloc: %s\n", what);
	exit(1);
}

/* "<prefix><i><suffix>" in the set. */
static const char *str(struct model_set *s, const char *prefix, int i, const char *suffix)
{
	char buf[128];
	const char *r;

	snprintf(buf, sizeof(buf), "%s%d%s", prefix, i, suffix);
	r = model_set_strdup(s, buf);
	if (!r)
		die("out of memory");
	return r;
}

static void attr_str(struct model_set *s, struct model_attribute *a, const char *name,
		     const char *v, enum cel_attr_kind k)
{
	a->name = model_set_strdup(s, name);
	a->type = k;
	a->v.str.s = model_set_strdup(s, v);
	a->v.str.len = strlen(v);
	if (k == CEL_ATTR_VERSION)
		a->version_ok = !semver_parse(v, strlen(v), &a->version, NULL);
}

static struct model_object *node_slice(struct model_set *s, int n)
{
	struct model_object *o = model_set_add(s, MODEL_RESOURCE_SLICE);
	struct model_resource_slice_spec *sp;

	if (!o)
		die("out of memory");
	sp = &o->u.slice;
	o->meta.name = str(s, "node-", n, "-slice");
	sp->driver = DRIVER;
	sp->pool.name = str(s, "node-", n, "");
	sp->pool.generation = 1;
	sp->pool.resource_slice_count = 1;
	sp->node_name = sp->pool.name;
	sp->devices = model_set_calloc(s, DEVICES_PER_NODE, sizeof(*sp->devices));
	if (!sp->devices)
		die("out of memory");
	sp->n_devices = DEVICES_PER_NODE;
	for (int i = 0; i < DEVICES_PER_NODE; i++) {
		struct model_device *d = &sp->devices[i];

		d->name = str(s, "instance-", i, "");
		d->attributes = model_set_calloc(s, 4, sizeof(*d->attributes));
		d->capacity = model_set_calloc(s, 1, sizeof(*d->capacity));
		if (!d->attributes || !d->capacity)
			die("out of memory");
		attr_str(s, &d->attributes[0], "model", "A100", CEL_ATTR_STRING);
		attr_str(s, &d->attributes[1], "family", "GPU", CEL_ATTR_STRING);
		attr_str(s, &d->attributes[2], "driverVersion", "1.2.3", CEL_ATTR_VERSION);
		d->attributes[3].name = "dra.example.com/numa";
		d->attributes[3].type = CEL_ATTR_INT;
		d->attributes[3].v.i = i;
		d->n_attributes = 4;
		d->capacity[0].name = "memory";
		if (quantity_parse_str("1Gi", &d->capacity[0].value, NULL))
			die("quantity");
		d->n_capacity = 1;
		if (model_device_cel_init(s, DRIVER, d))
			die("out of memory");
	}
	return o;
}

static struct model_object *pod_claim(struct model_set *s, int p, enum variant v)
{
	struct model_object *o = model_set_add(s, MODEL_RESOURCE_CLAIM);
	struct model_claim_spec *sp;
	struct model_exact_request *er;

	if (!o)
		die("out of memory");
	o->meta.name = str(s, "pod-", p, "-claim");
	o->meta.ns = "default";
	sp = &o->u.claim.spec;
	sp->requests = model_set_calloc(s, 1, sizeof(*sp->requests));
	er = model_set_calloc(s, 1, sizeof(*er));
	if (!sp->requests || !er)
		die("out of memory");
	sp->n_requests = 1;
	sp->requests[0].name = "req-0";
	sp->requests[0].exactly = er;
	er->device_class_name = "test-class";
	er->allocation_mode_text = "ExactCount";
	er->allocation_mode = MODEL_ALLOC_EXACT_COUNT;
	er->has_count = true;
	er->count = 1;
	if (v == SELECTOR) {
		static const char expr[] = "device.attributes[\"" DRIVER "\"].model == \"A100\"";

		er->selectors = model_set_calloc(s, 1, sizeof(*er->selectors));
		if (!er->selectors)
			die("out of memory");
		er->selectors[0].expression = expr;
		er->selectors[0].expression_len = sizeof(expr) - 1;
		er->n_selectors = 1;
	}
	if (v == MATCH) {
		sp->constraints = model_set_calloc(s, 1, sizeof(*sp->constraints));
		if (!sp->constraints)
			die("out of memory");
		sp->constraints[0].match_attribute = "dra.example.com/numa";
		sp->n_constraints = 1;
	}
	return o;
}

struct run {
	double setup_s, place_s;
	int placed;
	uint64_t tries, steps;
};

/* scan_all: every pod asks the nodes from the first one on, full or not
 * (the scheduler's filter pass over every node); otherwise nodes that
 * turned a pod away are skipped for the pods after it (they all have the
 * same claim shape). */
static struct run place(int pods, int nodes, enum variant v, bool scan_all)
{
	struct model_set *s = model_set_new();
	struct model_object *cls;
	const struct model_object **slices, *const *classes;
	const struct model_object **claims;
	struct alloc_ctx **ctx;
	struct alloc_state **st;
	struct run r = { 0 };
	struct dt_err err = { 0 };
	double t0;
	int first_free = 0;

	slices = calloc((size_t)nodes, sizeof(*slices));
	claims = calloc((size_t)pods, sizeof(*claims));
	ctx = calloc((size_t)nodes, sizeof(*ctx));
	st = calloc((size_t)nodes, sizeof(*st));
	if (!s || !slices || !claims || !ctx || !st)
		die("out of memory");
	cls = model_set_add(s, MODEL_DEVICE_CLASS);
	cls->meta.name = "test-class";
	cls->u.device_class.selectors = model_set_calloc(s, 1, sizeof(struct model_selector));
	cls->u.device_class.selectors[0].expression = "device.driver == \"" DRIVER "\"";
	cls->u.device_class.selectors[0].expression_len = strlen(cls->u.device_class.selectors[0].expression);
	cls->u.device_class.n_selectors = 1;
	classes = (const struct model_object *const *)&cls;
	for (int n = 0; n < nodes; n++)
		slices[n] = node_slice(s, n);
	for (int p = 0; p < pods; p++)
		claims[p] = pod_claim(s, p, v);

	t0 = now();
	for (int n = 0; n < nodes; n++) {
		struct alloc_options o = { 0 };
		struct alloc_node node = { 0 };

		node.name = slices[n]->u.slice.node_name;
		o.no_reasons = true;    /* the scheduler does not explain per node either */
		/* Each node's allocator sees only its own slice here: with one
		 * pool per node, the others are filtered out by name anyway. */
		if (alloc_ctx_new(&node, &slices[n], 1, classes, 1, &o, &ctx[n], &err))
			die(err.msg);
		st[n] = alloc_state_new(ctx[n]);
		if (!st[n])
			die("out of memory");
	}
	r.setup_s = now() - t0;

	t0 = now();
	for (int p = 0; p < pods; p++) {
		for (int n = scan_all ? 0 : first_free; n < nodes; n++) {
			struct alloc_outcome out;

			r.tries++;
			if (alloc_try(ctx[n], st[n], &claims[p], 1, &out, &err))
				die(err.msg);
			r.steps += out.steps;
			if (out.allocated) {
				alloc_state_commit(st[n], &out);
				alloc_outcome_free(&out);
				r.placed++;
				break;
			}
			alloc_outcome_free(&out);
			if (n == first_free)
				first_free++;   /* full for this shape */
		}
	}
	r.place_s = now() - t0;

	for (int n = 0; n < nodes; n++) {
		alloc_state_free(st[n]);
		alloc_ctx_free(ctx[n]);
	}
	free(st);
	free(ctx);
	free(claims);
	free(slices);
	model_set_free(s);
	return r;
}

int main(int argc, char **argv)
{
	int pods = argc > 1 ? atoi(argv[1]) : 5000;
	int nodes = argc > 2 ? atoi(argv[2]) : 500;
	const char *only = argc > 3 ? argv[3] : NULL;

	if (pods <= 0 || nodes <= 0)
		die("usage: bench_alloc [PODS [NODES [skip-full|scan-all]]]");
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("%-20s %-9s %7s %6s %8s %9s %9s %10s %8s %9s %7s %8s\n", "variant", "nodes",
	       "pods", "nodes", "placed", "tries", "setup ms", "place ms", "steps", "pods/s",
	       "anchor", "ratio");
	for (int scan = 0; scan < 2; scan++) {
		if (only && strcmp(only, scan ? "scan-all" : "skip-full"))
			continue;
		/* scan-all is quadratic in the nodes: one scale is enough. */
		for (int scale = 1; scale <= (scan ? 1 : 4); scale *= 2) {
			for (int v = 0; v < N_VARIANTS; v++) {
				struct run r = place(pods * scale, nodes * scale, (enum variant)v,
						     scan);
				double rate = r.placed / (r.place_s > 0 ? r.place_s : 1e-9);

				printf("%-20s %-9s %7d %6d %8d %9llu %9.1f %10.1f %8llu %9.0f %7.0f "
				       "%7.0fx\n", variant_name[v], scan ? "scan-all" : "skip-full",
				       pods * scale, nodes * scale, r.placed,
				       (unsigned long long)r.tries, r.setup_s * 1e3, r.place_s * 1e3,
				       (unsigned long long)r.steps, rate, anchor[v], rate / anchor[v]);
			}
		}
	}
	printf("\nanchors: kube-scheduler, scheduler_perf 5000pods_500nodes (PR #138916, 473 "
	       "pods/s), selector/match_empty_500nodes (PR #140254, 240.8 / 109.1 pods/s); "
	       "target 100x.\n");
	return 0;
}
