/* plan_fit.c - how much of a node is left for pods, and how much a pod
 * asks for.
 *
 * A new node's allocatable is what Karpenter's AWS provider predicts
 * before launch (docs/plan.md, "Node overhead"):
 *
 *   memory capacity = memoryMiB - ceil(memoryMiB * vmMemoryOverheadPercent)
 *   allocatable     = capacity - kubeReserved - systemReserved - eviction
 *
 *   kubeReserved.cpu    = 6% of the first core + 1% of the second
 *                         + 0.5% of cores 3-4 + 0.25% of every core above 4
 *   kubeReserved.memory = 11 MiB * maxPods + 255 MiB
 *   eviction            = memory.available hard threshold (100Mi default;
 *                         the larger of evictionHard and evictionSoft)
 *   maxPods             = kubelet maxPods (110 by default), capped by
 *                         podsPerCore * vCPUs when that is set.
 *
 * The EC2NodeClass's spec.kubelet overrides each of them. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan_internal.h"
#include "quantity.h"

void plan_kubelet_defaults(struct plan_kubelet *k)
{
	k->max_pods = -1;
	k->pods_per_core = -1;
	k->kube_reserved_cpu = -1;
	k->kube_reserved_mem = -1;
	k->system_reserved_cpu = -1;
	k->system_reserved_mem = -1;
	k->eviction_mem = -1;
	k->eviction_mem_percent = -1;
}

static int64_t clamp(int64_t v)
{
	return v < 0 ? 0 : v > PLAN_RES_MAX ? PLAN_RES_MAX : v;
}

static int64_t sat_add(int64_t a, int64_t b)
{
	return clamp(clamp(a) + clamp(b));     /* 2^61 at most: no overflow */
}

void plan_res_add(struct plan_res *a, const struct plan_res *b)
{
	a->cpu_milli = sat_add(a->cpu_milli, b->cpu_milli);
	a->mem_bytes = sat_add(a->mem_bytes, b->mem_bytes);
	a->pods = sat_add(a->pods, b->pods);
	for (size_t i = 0; i < PLAN_MAX_NODE_EXT; i++)
		a->ext[i] = sat_add(a->ext[i], b->ext[i]);
}

void plan_res_take(struct plan_res *a, const struct plan_res *b)
{
	a->cpu_milli = a->cpu_milli > b->cpu_milli ? a->cpu_milli - b->cpu_milli : 0;
	a->mem_bytes = a->mem_bytes > b->mem_bytes ? a->mem_bytes - b->mem_bytes : 0;
	a->pods = a->pods > b->pods ? a->pods - b->pods : 0;
	for (size_t i = 0; i < PLAN_MAX_NODE_EXT; i++)
		a->ext[i] = a->ext[i] > b->ext[i] ? a->ext[i] - b->ext[i] : 0;
}

/* A quantity in milli-units, rounded up (0.1 CPU -> 100), clamped. */
static int64_t milli_ceil(const struct quantity *q)
{
	double v = quantity_to_double(q) * 1000.0;
	double r = nearbyint(v);

	if (!(v < (double)PLAN_RES_MAX))
		return v != v ? 0 : PLAN_RES_MAX;   /* NaN cannot come from a quantity */
	if (v <= 0)
		return 0;
	if (fabs(v - r) < 1e-6)
		return (int64_t)r;
	return (int64_t)ceil(v);
}

static int64_t value_ceil(const struct quantity *q)
{
	return clamp(quantity_value_ceil(q));
}

static int kubelet_quantity(const struct doc_node *map, const char *key, bool milli,
			    const char *path, int64_t *out, struct dt_err *err)
{
	const struct doc_node *n = doc_get(map, key);
	struct quantity q;
	struct dt_err qerr;

	if (!n)
		return 0;
	if (!n->text || quantity_parse(n->text, n->text_len, &q, &qerr))
		return dt_err_set(err, -EINVAL, "spec.kubelet.%s.%s: %s", path, key,
				  n->text ? qerr.msg : "must be a quantity");
	*out = milli ? milli_ceil(&q) : value_ceil(&q);
	return 0;
}

static int kubelet_int(const struct doc_node *map, const char *key, int64_t *out,
		       struct dt_err *err)
{
	const struct doc_node *n = doc_get(map, key);

	if (!n)
		return 0;
	if (n->kind != DOC_INT || n->u.i < 0)
		return dt_err_set(err, -EINVAL, "spec.kubelet.%s: must be a non-negative integer",
				  key);
	*out = n->u.i;
	return 0;
}

/* "100Mi" or "5%". A larger threshold replaces a smaller one, so that
 * evictionSoft above evictionHard counts, as Karpenter takes the max. */
static int eviction(const struct doc_node *map, const char *which, struct plan_kubelet *k,
		    struct dt_err *err)
{
	const struct doc_node *n = doc_get(doc_get(map, which), "memory.available");
	struct quantity q;
	struct dt_err qerr;

	if (!n)
		return 0;
	if (!n->text)
		return dt_err_set(err, -EINVAL, "spec.kubelet.%s.memory.available: must be a string",
				  which);
	if (n->text_len && n->text[n->text_len - 1] == '%') {
		double p;
		char *end;

		p = strtod(n->text, &end);
		if (end != n->text + n->text_len - 1 || p < 0 || p > 100)
			return dt_err_set(err, -EINVAL,
					  "spec.kubelet.%s.memory.available: invalid percentage %s",
					  which, n->text);
		if (p / 100.0 > k->eviction_mem_percent)
			k->eviction_mem_percent = p / 100.0;
		return 0;
	}
	if (quantity_parse(n->text, n->text_len, &q, &qerr))
		return dt_err_set(err, -EINVAL, "spec.kubelet.%s.memory.available: %s", which,
				  qerr.msg);
	if (quantity_value_ceil(&q) > k->eviction_mem)
		k->eviction_mem = quantity_value_ceil(&q);
	return 0;
}

int plan_kubelet_from_nodeclass(const struct model_object *nc, struct plan_kubelet *k,
				struct dt_err *err)
{
	const struct doc_node *kl;
	int rc;

	plan_kubelet_defaults(k);
	if (!nc || nc->kind != MODEL_EC2_NODE_CLASS || !nc->u.ec2_node_class.spec)
		return 0;
	kl = doc_get(nc->u.ec2_node_class.spec, "kubelet");
	if (!kl)
		return 0;
	if ((rc = kubelet_int(kl, "maxPods", &k->max_pods, err)) ||
	    (rc = kubelet_int(kl, "podsPerCore", &k->pods_per_core, err)) ||
	    (rc = kubelet_quantity(doc_get(kl, "kubeReserved"), "cpu", true, "kubeReserved",
				   &k->kube_reserved_cpu, err)) ||
	    (rc = kubelet_quantity(doc_get(kl, "kubeReserved"), "memory", false, "kubeReserved",
				   &k->kube_reserved_mem, err)) ||
	    (rc = kubelet_quantity(doc_get(kl, "systemReserved"), "cpu", true, "systemReserved",
				   &k->system_reserved_cpu, err)) ||
	    (rc = kubelet_quantity(doc_get(kl, "systemReserved"), "memory", false,
				   "systemReserved", &k->system_reserved_mem, err)) ||
	    (rc = eviction(kl, "evictionHard", k, err)) ||
	    (rc = eviction(kl, "evictionSoft", k, err)))
		return rc;
	return 0;
}

int64_t plan_kube_reserved_cpu(int vcpu)
{
	/* (start, end, percent) in millicores; the last range is open. */
	static const struct { int64_t start, end; double pct; } ranges[] = {
		{ 0, 1000, 0.06 }, { 1000, 2000, 0.01 }, { 2000, 4000, 0.005 },
		{ 4000, INT64_MAX, 0.0025 },
	};
	int64_t cpu = (int64_t)(vcpu > 0 ? vcpu : 0) * 1000;
	double reserved = 0;

	for (size_t i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++) {
		if (cpu <= ranges[i].start)
			break;
		int64_t top = cpu < ranges[i].end ? cpu : ranges[i].end;

		reserved += (double)(top - ranges[i].start) * ranges[i].pct;
	}
	return (int64_t)ceil(reserved - 1e-9);
}

int64_t plan_kube_reserved_mem(int64_t max_pods)
{
	return (11 * max_pods + 255) << 20;
}

int64_t plan_max_pods(const struct plan_kubelet *k, int vcpu)
{
	int64_t pods = k->max_pods >= 0 ? k->max_pods : PLAN_DEFAULT_MAX_PODS;

	if (k->pods_per_core > 0 && k->pods_per_core * vcpu < pods)
		pods = k->pods_per_core * vcpu;
	return pods;
}

void plan_node_allocatable(int vcpu, int64_t memory_mib, const struct plan_kubelet *k,
			   struct plan_res *out)
{
	int64_t overhead_mib = (int64_t)ceil((double)memory_mib * PLAN_VM_OVERHEAD_PERCENT);
	int64_t mem = (memory_mib - overhead_mib) << 20;
	int64_t pods = plan_max_pods(k, vcpu);
	int64_t evict = PLAN_EVICTION_HARD_MEM;

	if (k->eviction_mem >= 0 || k->eviction_mem_percent >= 0) {
		evict = k->eviction_mem > 0 ? k->eviction_mem : 0;
		if (k->eviction_mem_percent >= 0 &&
		    (int64_t)((double)mem * k->eviction_mem_percent) > evict)
			evict = (int64_t)ceil((double)mem * k->eviction_mem_percent);
	}
	out->pods = pods;
	out->cpu_milli = (int64_t)vcpu * 1000 -
			 (k->kube_reserved_cpu >= 0 ? k->kube_reserved_cpu
						    : plan_kube_reserved_cpu(vcpu)) -
			 (k->system_reserved_cpu > 0 ? k->system_reserved_cpu : 0);
	out->mem_bytes = mem -
			 (k->kube_reserved_mem >= 0 ? k->kube_reserved_mem
						    : plan_kube_reserved_mem(pods)) -
			 (k->system_reserved_mem > 0 ? k->system_reserved_mem : 0) - evict;
	if (out->cpu_milli < 0)
		out->cpu_milli = 0;
	if (out->mem_bytes < 0)
		out->mem_bytes = 0;
}

/* cpu and memory of one resource list; requests, or limits for what the
 * requests leave out (the API server defaults requests to limits). */
static void container_requests(const struct model_container *c, int64_t *cpu, int64_t *mem)
{
	const struct model_resource_list *lists[2] = { &c->requests, &c->limits };
	bool have_cpu = false, have_mem = false;

	*cpu = *mem = 0;
	for (int l = 0; l < 2; l++) {
		for (size_t i = 0; i < lists[l]->n_items; i++) {
			const struct model_quantity_entry *e = &lists[l]->items[i];

			if (!strcmp(e->name, "cpu") && !have_cpu) {
				*cpu = milli_ceil(&e->value);
				have_cpu = true;
			} else if (!strcmp(e->name, "memory") && !have_mem) {
				*mem = value_ceil(&e->value);
				have_mem = true;
			}
		}
	}
}

/* Pod-level resources (spec.resources), as kube-scheduler's PodRequests
 * takes them with PodLevelResources: a pod-level cpu or memory request
 * (or, without one, its limit, which the API server copies into the
 * request) stands for the pod instead of its containers' (QA-103). */
static void pod_level_requests(const struct model_pod_spec *spec, struct plan_res *out)
{
	struct model_container pod = { .requests = spec->pod_requests, .limits = spec->pod_limits };
	bool has_cpu = false, has_mem = false;
	int64_t cpu, mem;

	for (int l = 0; l < 2; l++) {
		const struct model_resource_list *list = l ? &spec->pod_limits : &spec->pod_requests;

		for (size_t i = 0; i < list->n_items; i++) {
			has_cpu |= !strcmp(list->items[i].name, "cpu");
			has_mem |= !strcmp(list->items[i].name, "memory");
		}
	}
	if (!has_cpu && !has_mem)
		return;
	container_requests(&pod, &cpu, &mem);
	if (has_cpu)
		out->cpu_milli = cpu;
	if (has_mem)
		out->mem_bytes = mem;
}

/* As kube-scheduler's PodRequests: the containers' sum with the sidecars'
 * (init containers with restartPolicy Always, which keep running), or the
 * largest init container together with the sidecars started before it,
 * whichever is more (QA-104). */
void plan_pod_requests(const struct model_pod_spec *spec, struct plan_res *out)
{
	int64_t cpu = 0, mem = 0, icpu = 0, imem = 0, scpu = 0, smem = 0, c, m;

	for (size_t i = 0; i < spec->n_containers; i++) {
		container_requests(&spec->containers[i], &c, &m);
		cpu = sat_add(cpu, c);
		mem = sat_add(mem, m);
	}
	for (size_t i = 0; i < spec->n_init_containers; i++) {
		const struct model_container *ic = &spec->init_containers[i];

		container_requests(ic, &c, &m);
		if (ic->restart_policy && !strcmp(ic->restart_policy, "Always")) {
			cpu = sat_add(cpu, c);
			mem = sat_add(mem, m);
			c = scpu = sat_add(scpu, c);
			m = smem = sat_add(smem, m);
		} else {
			c = sat_add(c, scpu);
			m = sat_add(m, smem);
		}
		icpu = c > icpu ? c : icpu;
		imem = m > imem ? m : imem;
	}
	out->cpu_milli = cpu > icpu ? cpu : icpu;
	out->mem_bytes = mem > imem ? mem : imem;
	pod_level_requests(spec, out);
	for (size_t i = 0; i < spec->overhead.n_items; i++) {
		const struct model_quantity_entry *e = &spec->overhead.items[i];

		if (!strcmp(e->name, "cpu"))
			out->cpu_milli = sat_add(out->cpu_milli, milli_ceil(&e->value));
		else if (!strcmp(e->name, "memory"))
			out->mem_bytes = sat_add(out->mem_bytes, value_ceil(&e->value));
	}
	out->pods = 1;
}

/* One resource of one container: its request, or its limit when no
 * request is given. */
static int64_t container_count(const struct model_container *c, const char *name)
{
	const struct model_resource_list *lists[2] = { &c->requests, &c->limits };

	for (int l = 0; l < 2; l++)
		for (size_t i = 0; i < lists[l]->n_items; i++)
			if (!strcmp(lists[l]->items[i].name, name))
				return value_ceil(&lists[l]->items[i].value);
	return 0;
}

void plan_pod_node_ext(const struct model_pod_spec *spec, const char *const *names, size_t n,
		       struct plan_res *out)
{
	for (size_t r = 0; r < n && r < PLAN_MAX_NODE_EXT; r++) {
		int64_t sum = 0, init = 0;

		for (size_t i = 0; i < spec->n_containers; i++)
			sum = sat_add(sum, container_count(&spec->containers[i], names[r]));
		for (size_t i = 0; i < spec->n_init_containers; i++) {
			int64_t v = container_count(&spec->init_containers[i], names[r]);

			init = v > init ? v : init;
		}
		out->ext[r] = sum > init ? sum : init;
	}
}

bool plan_res_fits(const struct plan_res *need, const struct plan_res *used,
		   const struct plan_res *cap)
{
	return !plan_res_short(need, used, cap);
}

const char *plan_res_short(const struct plan_res *need, const struct plan_res *used,
			   const struct plan_res *cap)
{
	if (used->cpu_milli + need->cpu_milli > cap->cpu_milli)
		return "cpu";
	if (used->mem_bytes + need->mem_bytes > cap->mem_bytes)
		return "memory";
	if (used->pods + need->pods > cap->pods)
		return "pods";
	for (size_t i = 0; i < PLAN_MAX_NODE_EXT; i++)
		if (used->ext[i] + need->ext[i] > cap->ext[i])
			return "extended";
	return NULL;
}
