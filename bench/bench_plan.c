/* bench_plan.c - `dratopo plan` on a synthetic cluster, and how its time
 * grows as pods and nodes double.
 *
 *   bench_plan gen PODS NODES > cluster.yaml   the generator: NODES existing
 *       GPU nodes (Node + the ResourceSlices hwdb predicts for their type,
 *       a quarter of their first GPUs already allocated) and PODS pending
 *       pods of mixed claim shapes in Deployments; no NodePool, so every
 *       hwdb type is a candidate.
 *   bench_plan run [PODS NODES]                 the runner: generates the
 *       cluster in memory at 1/8, 1/4, 1/2 and all of PODS x NODES (default
 *       10000 x 1000), plans each and prints a table of load and plan CPU time,
 *       pods per second and the growth factor per doubling; then the same
 *       with only the pods doubling, and with only the nodes doubling.
 *   bench_plan gen-sched PODS NODES > cluster.yaml
 *   bench_plan gen-sched-claims PODS NODES > cluster.yaml
 *   bench_plan sched [PODS NODES]               the same for kube-scheduler's
 *       DRA shape (scheduler_perf SchedulingWithResourceClaimTemplate,
 *       5000pods_500nodes, as bench_alloc builds it): NODES nodes with one
 *       ResourceSlice of 10 devices each (model, family, driverVersion,
 *       dra.example.com/numa, capacity memory), class test-class by driver,
 *       PODS Pods whose ResourceClaimTemplate claims one device; the
 *       runner plans 1/4, 1/2, 1, 2 and 4 times PODS x NODES (default
 *       5000 x 500) and prints pods/s net of loading. Every pod fits on an
 *       existing node. gen-sched-claims (and the runner's second table):
 *       each pod names a ResourceClaim of its own, made up front.
 *   bench_plan cli FILE...                      what `dratopo plan -f FILE...
 *       -o json` does, in-process and phase by phase (plan_execute times
 *       them): parse (load the files), validate, plan and write the JSON;
 *       prints the CPU seconds of each.
 *
 * Every figure is the median of RUNS (3) runs, each on a freshly loaded
 * set: the machine is shared, and one run in three may be slowed down by
 * a neighbour.
 *
 * The shapes: one L4 by product name; one Hopper-or-newer GPU with 100Gi;
 * a GPU and an EFA on one PCIe root; two GPUs on one root; four GPUs; a
 * CPU-only pod. */
#include <errno.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwdb.h"
#include "model.h"
#include "plan.h"
#include "strbuf.h"

static const char *const node_types[] = {
	"g6.xlarge", "g6.12xlarge", "g6e.12xlarge", "p5.48xlarge", "p5en.48xlarge", "g5.48xlarge",
};

struct shape {
	const char *name;
	const char *claim;      /* the template's devices: YAML under spec.spec.devices */
	unsigned weight;        /* share of the pods, out of 100 */
	const char *cpu;
};

static const struct shape shapes[] = {
	{ "l4", "      requests:\n      - name: gpu\n        exactly:\n"
		"          deviceClassName: gpu.nvidia.com\n          selectors:\n"
		"          - cel:\n              expression: device.attributes[\"gpu.nvidia.com\"]"
		".productName == \"NVIDIA L4\"\n", 35, "2" },
	{ "large", "      requests:\n      - name: gpu\n        exactly:\n"
		   "          deviceClassName: gpu.nvidia.com\n          selectors:\n"
		   "          - cel:\n              expression: device.attributes[\"gpu.nvidia.com\"]"
		   ".cudaComputeCapability.compareTo(semver(\"9.0.0\")) >= 0 && "
		   "device.capacity[\"gpu.nvidia.com\"].memory.compareTo(quantity(\"100Gi\")) >= 0\n",
	  15, "8" },
	{ "aligned", "      requests:\n      - name: gpu\n        exactly:\n"
		     "          deviceClassName: gpu.nvidia.com\n      - name: efa\n        exactly:\n"
		     "          deviceClassName: efa.networking.k8s.aws\n      constraints:\n"
		     "      - requests: [gpu, efa]\n        matchAttribute: "
		     "resource.kubernetes.io/pcieRoot\n", 15, "4" },
	{ "pair", "      requests:\n      - name: gpus\n        exactly:\n"
		  "          deviceClassName: gpu.nvidia.com\n          count: 2\n      constraints:\n"
		  "      - matchAttribute: resource.kubernetes.io/pcieRoot\n", 10, "4" },
	{ "four", "      requests:\n      - name: gpus\n        exactly:\n"
		  "          deviceClassName: gpu.nvidia.com\n          count: 4\n", 10, "16" },
	{ "cpu", NULL, 15, "1" },
};

#define N_SHAPES (sizeof(shapes) / sizeof(shapes[0]))

static int gen_nodes(struct strbuf *out, unsigned n_nodes)
{
	struct model_set *set = model_set_new();
	struct dt_err err;
	int rc = 0;

	if (!set)
		return -ENOMEM;
	for (unsigned i = 0; i < n_nodes && !rc; i++) {
		const struct hwdb_type *t = hwdb_lookup(node_types[i % 6]);
		struct model_object *sl[HWDB_MAX_SLICES];
		size_t n = 0;
		char name[64];

		if (!t) {
			rc = -ENOENT;
			break;
		}
		snprintf(name, sizeof(name), "node-%05u", i);
		sb_printf(out, "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: %s\n"
			  "  labels:\n    node.kubernetes.io/instance-type: %s\n"
			  "    kubernetes.io/arch: %s\nstatus:\n  allocatable:\n    cpu: \"%d\"\n"
			  "    memory: %" PRId64 "Mi\n    pods: \"110\"\n", name, t->name, t->arch,
			  t->vcpu - 1, t->memory_mib * 9 / 10);
		if ((rc = hwdb_slices(t, NULL, name, set, sl, &n, &err)))
			break;
		for (size_t k = 0; k < n && !rc; k++)
			rc = model_emit(sl[k], DOC_FORMAT_YAML, out);
		/* Every fourth node runs a pod holding its gpu-0. */
		if (i % 4 == 0)
			sb_printf(out, "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
				  "metadata:\n  name: running-%u\nspec:\n  devices:\n    requests:\n"
				  "    - name: gpu\n      exactly:\n        deviceClassName: gpu.nvidia.com\n"
				  "status:\n  allocation:\n    devices:\n      results:\n"
				  "      - {request: gpu, driver: gpu.nvidia.com, pool: %s, device: gpu-0}\n",
				  i, name);
	}
	model_set_free(set);
	return rc;
}

static void gen_pods(struct strbuf *out, unsigned n_pods)
{
	unsigned done = 0;

	for (size_t s = 0; s < N_SHAPES; s++) {
		unsigned n = s + 1 < N_SHAPES ? n_pods * shapes[s].weight / 100 : n_pods - done;

		done += n;
		if (shapes[s].claim)
			sb_printf(out, "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\n"
				  "metadata:\n  name: %s\nspec:\n  spec:\n    devices:\n%s",
				  shapes[s].name, shapes[s].claim);
		sb_printf(out, "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: %s\n"
			  "spec:\n  replicas: %u\n  selector:\n    matchLabels: {app: %s}\n"
			  "  template:\n    metadata:\n      labels: {app: %s}\n    spec:\n",
			  shapes[s].name, n, shapes[s].name, shapes[s].name);
		if (shapes[s].claim)
			sb_printf(out, "      resourceClaims:\n      - name: c\n"
				  "        resourceClaimTemplateName: %s\n", shapes[s].name);
		sb_printf(out, "      containers:\n      - name: m\n        image: busybox\n"
			  "        resources:\n          requests: {cpu: \"%s\", memory: 8Gi}\n",
			  shapes[s].cpu);
		if (shapes[s].claim)
			sb_printf(out, "          claims:\n          - name: c\n");
	}
}

#define SCHED_DRIVER "test-driver.cdi.k8s.io"
#define SCHED_DEVICES 10

/* kube-scheduler's DRA performance shape (see the top of this file); with
 * named, each pod names a ResourceClaim of its own, made up front, instead
 * of getting one from the template. */
static int gen_sched(struct strbuf *out, unsigned pods, unsigned nodes, bool named)
{
	sb_puts(out, "---\napiVersion: resource.k8s.io/v1\nkind: DeviceClass\n"
		"metadata:\n  name: test-class\nspec:\n  selectors:\n  - cel:\n"
		"      expression: device.driver == \"" SCHED_DRIVER "\"\n");
	for (unsigned i = 0; i < nodes; i++) {
		sb_printf(out, "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: node-%05u\n"
			  "status:\n  allocatable:\n    cpu: \"32\"\n    memory: 128Gi\n"
			  "    pods: \"110\"\n", i);
		sb_printf(out, "---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\n"
			  "metadata:\n  name: node-%05u-slice\nspec:\n  driver: " SCHED_DRIVER "\n"
			  "  nodeName: node-%05u\n  pool:\n    name: node-%05u\n    generation: 1\n"
			  "    resourceSliceCount: 1\n  devices:\n", i, i, i);
		for (unsigned d = 0; d < SCHED_DEVICES; d++)
			sb_printf(out, "  - name: instance-%u\n    attributes:\n"
				  "      model: {string: A100}\n      family: {string: GPU}\n"
				  "      driverVersion: {version: 1.2.3}\n"
				  "      dra.example.com/numa: {int: %u}\n"
				  "    capacity:\n      memory: {value: 1Gi}\n", d, d);
	}
	sb_puts(out, "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\n"
		"metadata:\n  name: test-claim-template\nspec:\n  spec:\n    devices:\n"
		"      requests:\n      - name: req-0\n        exactly:\n"
		"          deviceClassName: test-class\n");
	/* Pods one by one, as scheduler_perf creates them. */
	for (unsigned i = 0; i < pods; i++) {
		if (named)
			sb_printf(out, "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
				  "metadata:\n  name: test-claim-%05u\nspec:\n  devices:\n"
				  "    requests:\n    - name: req-0\n      exactly:\n"
				  "        deviceClassName: test-class\n", i);
		sb_printf(out, "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: test-pod-%05u\n"
			  "spec:\n  resourceClaims:\n  - name: c\n", i);
		if (named)
			sb_printf(out, "    resourceClaimName: test-claim-%05u\n", i);
		else
			sb_puts(out, "    resourceClaimTemplateName: test-claim-template\n");
		sb_puts(out, "  containers:\n  - name: pause\n    image: registry.k8s.io/pause:3.10\n"
			"    resources:\n      claims:\n      - name: c\n");
	}
	return sb_error(out);
}

static int gen_sched_template(struct strbuf *out, unsigned pods, unsigned nodes)
{
	return gen_sched(out, pods, nodes, false);
}

static int gen_sched_claims(struct strbuf *out, unsigned pods, unsigned nodes)
{
	return gen_sched(out, pods, nodes, true);
}

static int generate(struct strbuf *out, unsigned pods, unsigned nodes)
{
	int rc = gen_nodes(out, nodes);

	if (!rc)
		gen_pods(out, pods);
	return rc ? rc : sb_error(out);
}

typedef int (*gen_fn)(struct strbuf *out, unsigned pods, unsigned nodes);

#define RUNS 3

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return v[n / 2];
}

/* Generate a cluster and plan it as `dratopo plan` would (plan_execute:
 * load, check, plan); the plan and its set in *rep (the caller frees it),
 * the load and plan phases' CPU seconds in *load_s and *plan_s. */
static int run_one(gen_fn gen, unsigned pods, unsigned nodes, double *load_s, double *plan_s,
		   struct plan_report *rep)
{
	struct strbuf sb = STRBUF_INIT;
	struct plan_manifest m = { "cluster.yaml", NULL, 0 };
	struct plan_request rq = { .manifests = &m, .n_manifests = 1, .format = PLAN_FORMAT_NONE,
				   .who = "bench_plan" };
	int rc;

	if ((rc = gen(&sb, pods, nodes))) {
		fprintf(stderr, "bench_plan: generating the cluster failed (%d)\n", rc);
		memset(rep, 0, sizeof(*rep));
		goto out;
	}
	m.content = sb.buf;
	m.len = sb.len;
	if (plan_execute(&rq, rep) == PLAN_EXIT_FAIL) {
		fprintf(stderr, "bench_plan: %s\n", rep->diags.n ? rep->diags.msgs[0] : "failed");
		rc = -EINVAL;
		goto out;
	}
	*load_s = rep->cpu_s[PLAN_PHASE_LOAD];
	*plan_s = rep->cpu_s[PLAN_PHASE_RUN];
out:
	sb_free(&sb);
	return rc;
}

static void print_header(const char *title, bool first)
{
	printf("%s%s:\n", first ? "" : "\n", title);
	printf("%8s %7s %9s %9s %10s %8s %9s %6s %12s\n", "pods", "nodes", "load cpu",
	       "plan cpu", "pods/s", "growth", "on-nodes", "new", "unschedul.");
}

/* Plan one size RUNS times and print its row (medians); *prev is the plan
 * time of the row before (0: none). */
static int print_row(gen_fn gen, unsigned p, unsigned n, double *prev)
{
	struct plan_report rep = { 0 };
	const struct plan_result *res;
	double load[RUNS], plan[RUNS], load_s, plan_s;
	size_t on_nodes = 0;
	char growth[16] = "-";

	for (int k = 0; k < RUNS; k++) {
		plan_report_free(&rep);
		if (run_one(gen, p, n, &load[k], &plan[k], &rep)) {
			plan_report_free(&rep);
			return 1;
		}
	}
	res = rep.result;
	load_s = median(load, RUNS);
	plan_s = median(plan, RUNS);
	for (size_t i = 0; i < res->n_existing; i++)
		on_nodes += res->existing[i].n_pods;
	if (*prev > 0)
		snprintf(growth, sizeof(growth), "%.2fx", plan_s / *prev);
	printf("%8u %7u %9.3f %9.3f %10.0f %8s %9zu %6zu %12zu\n", p, n, load_s, plan_s,
	       plan_s > 0 ? (double)p / plan_s : 0.0, growth, on_nodes, res->n_node_claims,
	       res->n_unschedulable);
	fflush(stdout);
	*prev = plan_s;
	plan_report_free(&rep);
	return 0;
}

static int gen_main(gen_fn gen, int argc, char **argv)
{
	struct strbuf sb = STRBUF_INIT;

	if (argc != 4) {
		fprintf(stderr, "usage: bench_plan %s PODS NODES\n", argv[1]);
		return 2;
	}
	if (gen(&sb, (unsigned)strtoul(argv[2], NULL, 10), (unsigned)strtoul(argv[3], NULL, 10))) {
		fprintf(stderr, "bench_plan: generating failed\n");
		return 1;
	}
	fputs(sb_str(&sb), stdout);
	sb_free(&sb);
	return 0;
}

/* One pass of the CLI's path over files (plan_execute, as `dratopo plan
 * -f FILE... -o json`): CPU seconds per phase in t[] (parse, validate,
 * plan, json) and the plan's pod count. */
static int cli_once(char **files, int n_files, double t[PLAN_PHASE_COUNT], size_t *pods)
{
	struct plan_manifest *m = calloc((size_t)n_files, sizeof(*m));
	struct plan_request rq = { .manifests = m, .n_manifests = (size_t)n_files,
				   .format = PLAN_FORMAT_JSON, .who = "bench_plan" };
	struct plan_report rep = { 0 };
	int rc = 1;

	if (!m)
		return 1;
	for (int i = 0; i < n_files; i++)
		m[i].name = files[i];
	if (plan_execute(&rq, &rep) == PLAN_EXIT_FAIL) {
		fprintf(stderr, "bench_plan: %s\n", rep.diags.n ? rep.diags.msgs[0] : "failed");
		goto out;
	}
	memcpy(t, rep.cpu_s, sizeof(rep.cpu_s));
	*pods = rep.result->n_pods;
	rc = 0;
out:
	plan_report_free(&rep);
	free(m);
	return rc;
}

/* `dratopo plan -f FILE... -o json` phase by phase, medians of RUNS. */
static int cli_main(int argc, char **argv)
{
	double t[PLAN_PHASE_COUNT][RUNS];
	size_t pods = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: bench_plan cli FILE...\n");
		return 2;
	}
	for (int k = 0; k < RUNS; k++) {
		double one[PLAN_PHASE_COUNT];

		if (cli_once(argv + 2, argc - 2, one, &pods))
			return 1;
		for (int i = 0; i < PLAN_PHASE_COUNT; i++)
			t[i][k] = one[i];
	}
	for (int i = 0; i < PLAN_PHASE_COUNT; i++)
		t[i][0] = median(t[i], RUNS);
	printf("%zu pods: parse %.3f s, validate %.3f s, plan %.3f s, json %.3f s "
	       "(plan %.0f pods/s)\n", pods, t[0][0], t[1][0], t[2][0], t[3][0],
	       t[2][0] > 0 ? (double)pods / t[2][0] : 0.0);
	return 0;
}

/* kube-scheduler's shape at 1/4 to 4 times its size, claims from the
 * template, then made up front. */
static int sched_main(unsigned pods, unsigned nodes)
{
	static const struct { const char *title; gen_fn gen; } series[] = {
		{ "kube-scheduler DRA shape, a claim per pod from its template", gen_sched_template },
		{ "kube-scheduler DRA shape, a ResourceClaim per pod made up front", gen_sched_claims },
	};

	for (size_t k = 0; k < sizeof(series) / sizeof(series[0]); k++) {
		double prev = 0;

		print_header(series[k].title, !k);
		for (unsigned f = 1; f <= 16; f *= 2)
			if (print_row(series[k].gen, pods / 4 * f, nodes / 4 * f, &prev))
				return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	/* Both doubling, then pods alone, then nodes alone. */
	static const struct { const char *title; unsigned pdiv, ndiv; bool pods, nodes; } series[] = {
		{ "pods and nodes double", 8, 8, true, true },
		{ "pods double, nodes fixed at 1/8", 8, 8, true, false },
		{ "nodes double, pods fixed at 1/8", 8, 8, false, true },
	};
	bool sched = argc >= 2 && !strcmp(argv[1], "sched");
	unsigned pods = sched ? 5000 : 10000, nodes = sched ? 500 : 1000;

	if (argc >= 2 && !strcmp(argv[1], "gen"))
		return gen_main(generate, argc, argv);
	if (argc >= 2 && !strcmp(argv[1], "gen-sched"))
		return gen_main(gen_sched_template, argc, argv);
	if (argc >= 2 && !strcmp(argv[1], "gen-sched-claims"))
		return gen_main(gen_sched_claims, argc, argv);
	if (argc >= 2 && !strcmp(argv[1], "cli"))
		return cli_main(argc, argv);
	if (argc < 2 || (strcmp(argv[1], "run") && !sched) || (argc != 2 && argc != 4)) {
		fprintf(stderr, "usage: bench_plan gen|gen-sched|gen-sched-claims PODS NODES | "
			"bench_plan run|sched [PODS NODES] | bench_plan cli FILE...\n");
		return 2;
	}
	if (argc == 4) {
		pods = (unsigned)strtoul(argv[2], NULL, 10);
		nodes = (unsigned)strtoul(argv[3], NULL, 10);
	}
	if (sched)
		return sched_main(pods, nodes);
	for (size_t k = 0; k < sizeof(series) / sizeof(series[0]); k++) {
		double prev = 0;

		print_header(series[k].title, !k);
		for (unsigned f = 1; f <= 8; f *= 2) {
			unsigned p = pods / series[k].pdiv * (series[k].pods ? f : 1);
			unsigned n = nodes / series[k].ndiv * (series[k].nodes ? f : 1);

			if (print_row(generate, p, n, &prev))
				return 1;
		}
	}
	return 0;
}
