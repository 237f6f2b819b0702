/* gen_plan.c - small planning problems, the exhaustive optimum and the
 * plan invariants (see gen_plan.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen_plan.h"
#include "hwdb.h"
#include "model.h"
#include "plan.h"

static const struct {
	const char *pci, *memory, *product;
} models[] = {
	{ "10de:27b8", "23034Mi", "NVIDIA L4" },
	{ "10de:2330", "81559Mi", "NVIDIA H100 80GB HBM3" },
};

static void type_name(int t, char out[16])
{
	snprintf(out, 16, "zz%c.xlarge", 'a' + t);
}

/* ---- generating ---- */

static void gen_claim_req(struct gen_src *src, struct gen_pclaim *c)
{
	c->gpus = gen_bool(src, 25) ? 0 : gen_range(src, 1, 2);
	c->model = gen_bool(src, 60) ? -1 : (int)gen_pick(src, 2);
}

/* The claim pod i uses (NULL: none); *shared: a named one. */
static const struct gen_pclaim *pod_claim(const struct gen_plan *g, int i, bool *shared)
{
	const struct gen_ppod *p = &g->pods[i];

	*shared = p->shared >= 0;
	if (p->shared >= 0)
		return &g->shared[p->shared];
	return p->own.gpus ? &p->own : NULL;
}

static void yaml_request(const struct gen_pclaim *c, const char *ind, struct strbuf *sb)
{
	sb_printf(sb, "%s- name: gpu\n%s  exactly:\n%s    deviceClassName: gpu.nvidia.com\n"
		  "%s    count: %d\n", ind, ind, ind, ind, c->gpus);
	if (c->model >= 0)
		sb_printf(sb, "%s    selectors: [{cel: {expression: "
			  "'device.attributes[\"gpu.nvidia.com\"].productName == \"%s\"'}}]\n",
			  ind, models[c->model].product);
}

/* A zone constraint for a third of the pods. */
static void gen_zone(struct gen_src *src, struct gen_ppod *p)
{
	p->zone_op = gen_bool(src, 33) ? GEN_ZONE_IN + (int)gen_pick(src, 2) : GEN_ZONE_ANY;
	p->zones = 1 + (unsigned)gen_pick(src, 7);
	p->zone_selector = p->zone_op == GEN_ZONE_IN && (p->zones & (p->zones - 1)) == 0 &&
			   gen_bool(src, 50);
}

static void yaml_zone(const struct gen_ppod *p, struct strbuf *sb)
{
	bool first = true;

	if (p->zone_op == GEN_ZONE_ANY)
		return;
	if (p->zone_selector) {
		sb_printf(sb, "  nodeSelector: {topology.kubernetes.io/zone: z%d}\n",
			  __builtin_ctz(p->zones));
		return;
	}
	sb_printf(sb, "  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
		  "{nodeSelectorTerms: [{matchExpressions: [{key: topology.kubernetes.io/zone, "
		  "operator: %s, values: [", p->zone_op == GEN_ZONE_IN ? "In" : "NotIn");
	for (int z = 0; z < 3; z++)
		if (p->zones & (1u << z)) {
			sb_printf(sb, "%sz%d", first ? "" : ", ", z);
			first = false;
		}
	sb_puts(sb, "]}]}]}}}\n");
}

int gen_plan_make(struct gen_src *src, struct gen_plan *g, bool may_exist)
{
	memset(g, 0, sizeof(*g));
	sb_init(&g->extra);
	sb_init(&g->yaml);
	g->n_types = gen_range(src, 2, GEN_PLAN_MAX_TYPES);
	for (int t = 0; t < g->n_types; t++) {
		struct gen_ptype *p = &g->types[t];

		p->vcpu = 4 << gen_pick(src, 4);                /* 4 to 32 */
		p->mem_gib = p->vcpu * (2 << gen_pick(src, 3)); /* 2 to 8 GiB per vCPU */
		p->price_cents = gen_range(src, 10, 999);
		p->n_gpus = gen_range(src, 1, 4);
		p->model = (int)gen_pick(src, 2);
	}
	g->n_pods = gen_range(src, 1, GEN_PLAN_MAX_PODS);
	for (int i = 0; i < g->n_pods; i++) {
		struct gen_ppod *p = &g->pods[i];

		p->cpu_m = 250 * gen_range(src, 1, 40);         /* up to 10 cores */
		p->mem_mib = 512 * gen_range(src, 1, 48);       /* up to 24 GiB */
		gen_claim_req(src, &p->own);
		p->shared = gen_bool(src, 20) ? (int)gen_pick(src, GEN_PLAN_MAX_SHARED) : -1;
		gen_zone(src, p);
	}
	for (int k = 0; k < GEN_PLAN_MAX_SHARED; k++) {
		gen_claim_req(src, &g->shared[k]);
		g->shared[k].gpus += !g->shared[k].gpus;
	}
	g->existing = may_exist && gen_bool(src, 25);
	g->ex_gpus = gen_range(src, 0, 3);
	g->ex_cpu = gen_range(src, 1, 16);
	g->ex_busy = gen_range(src, 0, g->ex_gpus);

	sb_puts(&g->extra, "instanceTypes:\n");
	for (int t = 0; t < g->n_types; t++) {
		const struct gen_ptype *p = &g->types[t];
		char name[16];

		type_name(t, name);
		sb_printf(&g->extra, "- name: %s\n  vcpu: %d\n  memoryMiB: %d\n  arch: amd64\n"
			  "  onDemandPricePerHour: %d.%02d\n  draMetadata: true\n  gpu:\n"
			  "    pciId: \"%s\"\n    memory: %s\n    attributes: {productName: %s}\n"
			  "    devices:\n", name, p->vcpu, p->mem_gib * 1024, p->price_cents / 100,
			  p->price_cents % 100, models[p->model].pci, models[p->model].memory,
			  models[p->model].product);
		for (int d = 0; d < p->n_gpus; d++)
			sb_printf(&g->extra, "    - {pcieRoot: pci0000:%02x}\n", 0x30 + d);
	}

	sb_puts(&g->yaml, "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: gen}\n"
		"spec:\n  template:\n    spec:\n      nodeClassRef: {group: karpenter.k8s.aws, "
		"kind: EC2NodeClass, name: gen}\n      requirements:\n"
		"      - key: node.kubernetes.io/instance-type\n        operator: In\n"
		"        values: [");
	for (int t = 0; t < g->n_types; t++) {
		char name[16];

		type_name(t, name);
		sb_printf(&g->yaml, "%s%s", t ? ", " : "", name);
	}
	sb_puts(&g->yaml, "]\n");
	for (int k = 0; k < GEN_PLAN_MAX_SHARED; k++) {
		sb_printf(&g->yaml, "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
			  "metadata: {name: shared-%d, namespace: default}\nspec:\n  devices:\n"
			  "    requests:\n", k);
		yaml_request(&g->shared[k], "    ", &g->yaml);
	}
	for (int i = 0; i < g->n_pods; i++) {
		const struct gen_ppod *p = &g->pods[i];
		bool shared;
		const struct gen_pclaim *c = pod_claim(g, i, &shared);

		if (c && !shared) {
			sb_printf(&g->yaml, "---\napiVersion: resource.k8s.io/v1\n"
				  "kind: ResourceClaimTemplate\nmetadata: {name: t%d, namespace: default}\n"
				  "spec:\n  spec:\n    devices:\n      requests:\n", i);
			yaml_request(c, "      ", &g->yaml);
		}
		sb_printf(&g->yaml, "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p%d, "
			  "namespace: default}\nspec:\n", i);
		yaml_zone(p, &g->yaml);
		if (c && shared)
			sb_printf(&g->yaml, "  resourceClaims: [{name: gpu, "
				  "resourceClaimName: shared-%d}]\n", p->shared);
		else if (c)
			sb_printf(&g->yaml, "  resourceClaims: [{name: gpu, "
				  "resourceClaimTemplateName: t%d}]\n", i);
		sb_printf(&g->yaml, "  containers:\n  - name: c\n    image: x\n    resources:\n"
			  "      requests: {cpu: %dm, memory: %dMi}\n", p->cpu_m, p->mem_mib);
		if (c)
			sb_puts(&g->yaml, "      claims: [{name: gpu}]\n");
	}
	if (g->existing) {
		sb_printf(&g->yaml, "---\napiVersion: v1\nkind: Node\nmetadata: {name: node-x}\n"
			  "status:\n  allocatable: {cpu: \"%d\", memory: 64Gi, pods: \"110\"}\n",
			  g->ex_cpu);
		sb_puts(&g->yaml, "---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\n"
			"metadata: {name: node-x-gpu}\nspec:\n  driver: gpu.nvidia.com\n"
			"  pool: {name: node-x, generation: 1, resourceSliceCount: 1}\n"
			"  nodeName: node-x\n");
		for (int d = 0; d < g->ex_gpus; d++)
			sb_printf(&g->yaml, "%s  - name: gpu-%d\n    attributes: {productName: "
				  "{string: %s}}\n", d ? "" : "  devices:\n", d, models[0].product);
		if (g->ex_busy)
			sb_printf(&g->yaml, "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
				  "metadata: {name: busy, namespace: default}\nspec:\n  devices:\n"
				  "    requests:\n    - name: gpu\n      exactly: {deviceClassName: "
				  "gpu.nvidia.com, count: %d}\nstatus:\n  allocation:\n    devices:\n"
				  "      results:\n", g->ex_busy);
		for (int d = 0; d < g->ex_busy; d++)
			sb_printf(&g->yaml, "      - {request: gpu, driver: gpu.nvidia.com, "
				  "pool: node-x, device: gpu-%d}\n", d);
	}
	return sb_error(&g->extra) || sb_error(&g->yaml) ? -ENOMEM : 0;
}

void gen_plan_free(struct gen_plan *g)
{
	sb_free(&g->extra);
	sb_free(&g->yaml);
}

/* ---- the exhaustive optimum ---- */

/* What a new node of type t leaves for pods, by Karpenter's AWS overhead
 * as docs/plan.md states it (written here again, not taken from the
 * planner): memory less ceil(7.5%), kube-reserved CPU 60m + 10m + 2 x 5m +
 * 2.5m per further core (vCPUs here are powers of two >= 4), kube-reserved
 * memory 11Mi x 110 pods + 255Mi, eviction 100Mi; 110 pods. */
static void allocatable(const struct gen_ptype *ty, struct plan_res *cap)
{
	int64_t mib = (int64_t)ty->mem_gib * 1024;

	mib -= (mib * 75 + 999) / 1000;
	mib -= 11 * 110 + 255 + 100;
	cap->mem_bytes = mib << 20;
	cap->cpu_milli = (int64_t)ty->vcpu * 1000 - (80 + (ty->vcpu - 4) * 5 / 2);
	cap->pods = 110;
}

/* The zones the pods in mask leave a node, bits z0..z2 and 3 for any
 * other zone (what only NotIn constraints leave). */
#define GEN_ZONES_ALL 0xfu

static unsigned zones_left(const struct gen_plan *g, unsigned mask)
{
	unsigned left = GEN_ZONES_ALL;

	for (int i = 0; i < g->n_pods; i++) {
		const struct gen_ppod *p = &g->pods[i];

		if (!(mask & (1u << i)) || p->zone_op == GEN_ZONE_ANY)
			continue;
		left &= p->zone_op == GEN_ZONE_IN ? p->zones : ~p->zones;
	}
	return left;
}

/* Whether the pods in mask fit one node of type t. */
static bool fits(const struct gen_plan *g, unsigned mask, int t)
{
	const struct gen_ptype *ty = &g->types[t];
	struct plan_res cap;
	int64_t cpu = 0, mem = 0, pods = 0;
	int gpus = 0;
	unsigned shared_seen = 0;

	allocatable(ty, &cap);
	for (int i = 0; i < g->n_pods; i++) {
		const struct gen_ppod *p = &g->pods[i];
		bool shared;
		const struct gen_pclaim *c = pod_claim(g, i, &shared);

		if (!(mask & (1u << i)))
			continue;
		cpu += p->cpu_m;
		mem += (int64_t)p->mem_mib << 20;
		pods++;
		/* A shared claim's devices are allocated once, for all its pods. */
		if (!c || (shared && (shared_seen & (1u << p->shared))))
			continue;
		if (shared)
			shared_seen |= 1u << p->shared;
		if (c->model >= 0 && c->model != ty->model)
			return false;
		gpus += c->gpus;
	}
	return cpu <= cap.cpu_milli && mem <= cap.mem_bytes && pods <= cap.pods &&
	       gpus <= ty->n_gpus && zones_left(g, mask);
}

/* The zones nc's narrowed zone requirement leaves (GEN_ZONES_ALL: none). */
static unsigned claim_zones(const struct plan_node_claim *nc)
{
	for (size_t i = 0; i < nc->n_narrowed; i++) {
		const struct model_requirement *r = &nc->narrowed[i];
		unsigned listed = 0;
		int z;

		if (strcmp(r->key, "topology.kubernetes.io/zone"))
			continue;
		for (size_t k = 0; k < r->n_values; k++)
			listed |= sscanf(r->values[k], "z%d", &z) == 1 && z >= 0 && z < 3
					  ? 1u << z : 1u << 3;
		return r->op == MODEL_OP_IN ? listed : GEN_ZONES_ALL & ~listed;
	}
	return GEN_ZONES_ALL;
}

/* The pods using shared claim k. */
static unsigned sharers(const struct gen_plan *g, int k)
{
	unsigned m = 0;

	for (int i = 0; i < g->n_pods; i++)
		if (g->pods[i].shared == k)
			m |= 1u << i;
	return m;
}

/* mask and every pod that shares a claim with one of its pods. */
static unsigned closure(const struct gen_plan *g, unsigned mask)
{
	for (int k = 0; k < GEN_PLAN_MAX_SHARED; k++)
		if (mask & sharers(g, k))
			mask |= sharers(g, k);
	return mask;
}

/* The cheapest price (cents) of a node holding mask; -1 when none does
 * or mask splits the pods of a shared claim. */
static int part_cost(const struct gen_plan *g, unsigned mask)
{
	int best = -1;

	if (closure(g, mask) != mask)
		return -1;
	for (int t = 0; t < g->n_types; t++)
		if (fits(g, mask, t) && (best < 0 || g->types[t].price_cents < best))
			best = g->types[t].price_cents;
	return best;
}

/* Minimum over the partitions of rest (cost[] of every subset given). */
static int best_cover(const int *cost, unsigned rest)
{
	unsigned low, sub;
	int best = -1;

	if (!rest)
		return 0;
	/* The part holding rest's lowest pod: every subset that contains it. */
	low = rest & -rest;
	for (sub = rest; sub; sub = (sub - 1) & rest) {
		int c, r;

		if (!(sub & low) || (c = cost[sub]) < 0)
			continue;
		if ((r = best_cover(cost, rest & ~sub)) >= 0 && (best < 0 || c + r < best))
			best = c + r;
	}
	return best;
}

/* ---- checking a plan ---- */

static int pod_index(const char *name)
{
	int i;
	char tail;

	if (!name || sscanf(name, "default/p%d%c", &i, &tail) != 1 || i < 0 ||
	    i >= GEN_PLAN_MAX_PODS)
		return -1;
	return i;
}

/* The pods of a claim: a template's ("default/pN-gpu-xxxxx") or a shared
 * one ("default/shared-K"), and what it asks for; 0 when unknown. */
static unsigned claim_pods(const struct gen_plan *g, const char *claim,
			   const struct gen_pclaim **req)
{
	int i;
	char tail;
	bool shared;

	if (!claim)
		return 0;
	if (sscanf(claim, "default/shared-%d%c", &i, &tail) == 1 && i >= 0 &&
	    i < GEN_PLAN_MAX_SHARED) {
		*req = &g->shared[i];
		return sharers(g, i);
	}
	if (sscanf(claim, "default/p%d-gpu-", &i) != 1 || i < 0 || i >= g->n_pods ||
	    !(*req = pod_claim(g, i, &shared)) || shared)
		return 0;
	return 1u << i;
}

/* Each claim of a node: its pod runs there, it got its pod's count of
 * devices of that node's pool, and no device of the node is given twice. */
static bool check_claims(const struct gen_plan *g, const struct plan_claim *claims, size_t n,
			 unsigned pods_here, const char *pool, const char *where,
			 unsigned *claimed, struct strbuf *why)
{
	const char *seen[64];
	size_t n_seen = 0;

	for (size_t c = 0; c < n; c++) {
		const struct gen_pclaim *req = NULL;
		unsigned owners = claim_pods(g, claims[c].claim, &req);

		if (!owners || (owners & pods_here) != owners || (*claimed & owners)) {
			sb_printf(why, "%s: claim %s: its pods (%#x) are not all placed there, or it "
				  "is allocated twice", where, claims[c].claim, owners);
			return false;
		}
		if ((int)claims[c].n_results != req->gpus) {
			sb_printf(why, "%s: claim %s got %zu devices, wants %d", where,
				  claims[c].claim, claims[c].n_results, req->gpus);
			return false;
		}
		*claimed |= owners;
		for (size_t r = 0; r < claims[c].n_results; r++) {
			const struct plan_device *d = &claims[c].results[r];

			if (!d->driver || strcmp(d->driver, HWDB_DRIVER_GPU) || !d->pool ||
			    strcmp(d->pool, pool) || !d->device) {
				sb_printf(why, "%s: claim %s got %s/%s/%s, not a GPU of pool %s", where,
					  claims[c].claim, d->driver, d->pool, d->device, pool);
				return false;
			}
			for (size_t k = 0; k < n_seen; k++) {
				if (!strcmp(seen[k], d->device)) {
					sb_printf(why, "%s: device %s given twice", where, d->device);
					return false;
				}
			}
			if (n_seen < 64)
				seen[n_seen++] = d->device;
		}
	}
	return true;
}

/* The pods listed as "default/pN": a mask, false on an unknown or
 * twice-placed pod. */
static bool place_pods(const struct gen_plan *g, const char *const *pods, size_t n,
		       unsigned *placed, unsigned *here, const char *where, struct strbuf *why)
{
	*here = 0;
	for (size_t k = 0; k < n; k++) {
		int i = pod_index(pods[k]);

		if (i < 0 || i >= g->n_pods || (*placed & (1u << i))) {
			sb_printf(why, "%s: pod %s unknown or placed twice", where, pods[k]);
			return false;
		}
		*placed |= 1u << i;
		*here |= 1u << i;
	}
	return true;
}

static bool check_new_node(const struct gen_plan *g, const struct plan_node_claim *nc,
			   unsigned *placed, unsigned *claimed, double *sum, struct strbuf *why)
{
	unsigned here;
	int t;
	char name[16];

	for (t = 0; t < g->n_types; t++) {
		type_name(t, name);
		if (nc->instance_type && !strcmp(nc->instance_type, name))
			break;
	}
	if (t == g->n_types) {
		sb_printf(why, "node claim %s: instance type %s is not one the NodePool allows",
			  nc->name, nc->instance_type);
		return false;
	}
	if (fabs(nc->price - g->types[t].price_cents / 100.0) > 1e-9) {
		sb_printf(why, "node claim %s: price %.4f, %s costs %d cents", nc->name, nc->price,
			  name, g->types[t].price_cents);
		return false;
	}
	*sum += nc->price;
	if (!place_pods(g, nc->pods, nc->n_pods, placed, &here, nc->name, why))
		return false;
	if (!fits(g, here, t)) {
		sb_printf(why, "node claim %s (%s): its pods (mask %#x) do not fit it", nc->name,
			  name, here);
		return false;
	}
	if (claim_zones(nc) != zones_left(g, here)) {
		sb_printf(why, "node claim %s: its zone requirement leaves zones %#x, its pods %#x",
			  nc->name, claim_zones(nc), zones_left(g, here));
		return false;
	}
	return check_claims(g, nc->claims, nc->n_claims, here, nc->name, nc->name, claimed, why);
}

static bool check_plan(const struct gen_plan *g, const struct plan_result *r,
		       struct gen_plan_stats *st, struct strbuf *why)
{
	unsigned placed = 0, claimed = 0, here, gpu_pods = 0, unsched = 0, alone = 0;
	unsigned every = (1u << g->n_pods) - 1;
	int cost[1u << GEN_PLAN_MAX_PODS], want;
	double sum = 0;

	if ((int)r->n_pods != g->n_pods) {
		sb_printf(why, "the plan considered %zu pods of %d", r->n_pods, g->n_pods);
		return false;
	}
	for (size_t i = 0; i < r->n_node_claims; i++)
		if (!check_new_node(g, &r->node_claims[i], &placed, &claimed, &sum, why))
			return false;
	for (size_t i = 0; i < r->n_existing; i++) {
		const struct plan_existing *e = &r->existing[i];

		if (!g->existing || !e->node || strcmp(e->node, "node-x")) {
			sb_printf(why, "pods on an existing node %s that does not exist", e->node);
			return false;
		}
		st->on_existing += e->n_pods;
		if (!place_pods(g, e->pods, e->n_pods, &placed, &here, "node-x", why) ||
		    !check_claims(g, e->claims, e->n_claims, here, "node-x", "node-x", &claimed, why))
			return false;
		for (size_t c = 0; c < e->n_claims; c++) {
			for (size_t k = 0; k < e->claims[c].n_results; k++) {
				int d;
				char tail;

				if (sscanf(e->claims[c].results[k].device, "gpu-%d%c", &d, &tail) == 1 &&
				    d < g->ex_busy) {
					sb_printf(why, "node-x: claim %s got gpu-%d, which claim busy holds",
						  e->claims[c].claim, d);
					return false;
				}
			}
		}
	}
	for (size_t i = 0; i < r->n_unschedulable; i++) {
		int p = pod_index(r->unschedulable[i].pod);

		if (p < 0 || p >= g->n_pods || ((placed | unsched) & (1u << p))) {
			sb_printf(why, "unschedulable pod %s unknown or also placed",
				  r->unschedulable[i].pod);
			return false;
		}
		unsched |= 1u << p;
	}
	for (int i = 0; i < g->n_pods; i++) {
		bool shared;

		if (pod_claim(g, i, &shared))
			gpu_pods |= 1u << i;
	}
	if ((placed | unsched) != every) {
		sb_printf(why, "pods neither placed nor unschedulable (placed %#x, unschedulable %#x)",
			  placed, unsched);
		return false;
	}
	if ((placed & gpu_pods) != claimed) {
		sb_printf(why, "placed GPU pods %#x, pods whose claim was allocated %#x",
			  placed & gpu_pods, claimed);
		return false;
	}
	if (fabs(sum - r->total_price) > 1e-6) {
		sb_printf(why, "total price %.6f, the node claims sum to %.6f", r->total_price, sum);
		return false;
	}
	st->checked++;
	st->proven += r->optimal;
	st->unschedulable += r->n_unschedulable;
	if (g->existing)
		return true;
	/* The exhaustive optimum over the pods some type holds alone. */
	for (unsigned m = 1; m < (1u << g->n_pods); m++)
		cost[m] = part_cost(g, m);
	for (int i = 0; i < g->n_pods; i++)
		if (cost[closure(g, 1u << i)] >= 0)
			alone |= 1u << i;
	if (unsched != (every & ~alone)) {
		sb_printf(why, "unschedulable pods %#x, but the pods no type holds are %#x", unsched,
			  every & ~alone);
		return false;
	}
	want = best_cover(cost, alone);
	if (fabs(r->total_price - want / 100.0) > 1e-6) {
		sb_printf(why, "total price %.2f, the exhaustive optimum is %.2f", r->total_price,
			  want / 100.0);
		return false;
	}
	st->priced++;
	return true;
}

/* The manifests go through plan_execute as `dratopo plan -f gen.yaml -o
 * json` would take them: loaded, validated with CEL compiled, planned. */
enum gen_verdict gen_plan_check(const struct gen_plan *g, struct gen_plan_stats *st,
				struct strbuf *why)
{
	struct plan_manifest m = { "gen.yaml", sb_str(&g->yaml), g->yaml.len };
	struct plan_request rq = { .manifests = &m, .n_manifests = 1,
				   .format = PLAN_FORMAT_JSON };
	struct plan_report rep = { 0 };
	struct dt_err err = { 0 };
	enum gen_verdict v = GEN_FAIL;

	if (hwdb_load_extra_buf(sb_str(&g->extra), g->extra.len, "gen-extra.yaml", &err)) {
		sb_printf(why, "the generated extra file does not load: %s", err.msg);
		goto out;
	}
	if (plan_execute(&rq, &rep) == PLAN_EXIT_FAIL) {
		sb_printf(why, "the generated manifests do not plan: %s",
			  rep.diags.n ? rep.diags.msgs[0] : "(no message)");
		goto out;
	}
	if (check_plan(g, rep.result, st, why))
		v = GEN_PASS;
out:
	if (v == GEN_FAIL) {
		if (rep.result)
			sb_printf(why, "\n--- the plan ---\n%s", sb_str(&rep.output));
		sb_printf(why, "\n--- --hwdb-extra ---\n%s--- the manifests ---\n%s",
			  sb_str(&g->extra), sb_str(&g->yaml));
	}
	plan_report_free(&rep);
	hwdb_reset();
	return v;
}
