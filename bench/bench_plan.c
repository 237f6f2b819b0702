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
#include <time.h>

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

static int generate(struct strbuf *out, unsigned pods, unsigned nodes)
{
	int rc = gen_nodes(out, nodes);

	if (!rc)
		gen_pods(out, pods);
	return rc ? rc : sb_error(out);
}

/* CPU time of this process: the machine the bench runs on is shared, and
 * wall-clock time would measure the neighbours. */
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int run_one(unsigned pods, unsigned nodes, double *load_s, double *plan_s,
		   struct plan_result **res, struct model_set **setp)
{
	struct strbuf sb = STRBUF_INIT;
	struct dt_diags errs;
	struct dt_err err = { 0 };
	struct model_set *set;
	double t0;
	int rc;

	dt_diags_init(&errs);
	if ((rc = generate(&sb, pods, nodes))) {
		fprintf(stderr, "bench_plan: generating the cluster failed (%d)\n", rc);
		goto out;
	}
	t0 = now();
	set = model_set_new();
	if (!set || model_set_load_buffer(set, sb.buf, sb.len, "cluster.yaml", &errs, &err) ||
	    errs.n) {
		fprintf(stderr, "bench_plan: load: %s\n", errs.n ? errs.msgs[0] : err.msg);
		model_set_free(set);
		rc = -EINVAL;
		goto out;
	}
	*load_s = now() - t0;
	t0 = now();
	rc = plan_run(set, NULL, res, &err);
	*plan_s = now() - t0;
	if (rc) {
		fprintf(stderr, "bench_plan: plan: %s\n", err.msg);
		model_set_free(set);
		goto out;
	}
	*setp = set;
out:
	dt_diags_free(&errs);
	sb_free(&sb);
	return rc;
}

int main(int argc, char **argv)
{
	unsigned pods = 10000, nodes = 1000;
	double prev = 0;

	if (argc >= 2 && !strcmp(argv[1], "gen")) {
		struct strbuf sb = STRBUF_INIT;

		if (argc != 4) {
			fprintf(stderr, "usage: bench_plan gen PODS NODES\n");
			return 2;
		}
		if (generate(&sb, (unsigned)strtoul(argv[2], NULL, 10),
			     (unsigned)strtoul(argv[3], NULL, 10))) {
			fprintf(stderr, "bench_plan: generating failed\n");
			return 1;
		}
		fputs(sb_str(&sb), stdout);
		sb_free(&sb);
		return 0;
	}
	if (argc < 2 || strcmp(argv[1], "run") || (argc != 2 && argc != 4)) {
		fprintf(stderr, "usage: bench_plan gen PODS NODES | bench_plan run [PODS NODES]\n");
		return 2;
	}
	if (argc == 4) {
		pods = (unsigned)strtoul(argv[2], NULL, 10);
		nodes = (unsigned)strtoul(argv[3], NULL, 10);
	}
	/* Both doubling, then pods alone, then nodes alone. */
	static const struct { const char *title; unsigned pdiv, ndiv; bool pods, nodes; } series[] = {
		{ "pods and nodes double", 8, 8, true, true },
		{ "pods double, nodes fixed at 1/8", 8, 8, true, false },
		{ "nodes double, pods fixed at 1/8", 8, 8, false, true },
	};

	for (size_t k = 0; k < sizeof(series) / sizeof(series[0]); k++) {
		prev = 0;
		printf("%s%s:\n", k ? "\n" : "", series[k].title);
		printf("%8s %7s %9s %9s %10s %8s %9s %6s %12s\n", "pods", "nodes", "load cpu",
		       "plan cpu", "pods/s", "growth", "on-nodes", "new", "unschedul.");
		for (unsigned f = 1; f <= 8; f *= 2) {
			unsigned p = pods / series[k].pdiv * (series[k].pods ? f : 1);
			unsigned n = nodes / series[k].ndiv * (series[k].nodes ? f : 1);
			struct plan_result *res = NULL;
			struct model_set *set = NULL;
			double load_s = 0, plan_s = 0;
			size_t on_nodes = 0;
			char growth[16] = "-";

			if (run_one(p, n, &load_s, &plan_s, &res, &set))
				return 1;
			for (size_t i = 0; i < res->n_existing; i++)
				on_nodes += res->existing[i].n_pods;
			if (prev > 0)
				snprintf(growth, sizeof(growth), "%.2fx", plan_s / prev);
			printf("%8u %7u %9.3f %9.3f %10.0f %8s %9zu %6zu %12zu\n", p, n, load_s,
			       plan_s, plan_s > 0 ? (double)p / plan_s : 0.0, growth, on_nodes,
			       res->n_node_claims, res->n_unschedulable);
			prev = plan_s;
			plan_result_free(res);
			model_set_free(set);
		}
	}
	return 0;
}
