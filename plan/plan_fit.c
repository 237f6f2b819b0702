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
 *   ephemeral-storage   = the root volume (20Gi by default) - 1Gi kubeReserved
 *                         - systemReserved - nodefs.available (10%)
 *
 * The EC2NodeClass's spec.kubelet overrides each of them; its
 * blockDeviceMappings size the root volume (QA-105). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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
	k->kube_reserved_storage = -1;
	k->system_reserved_storage = -1;
	k->eviction_storage = -1;
	k->eviction_storage_percent = -1;
	k->storage = PLAN_ROOT_VOLUME_DEFAULT;
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
	a->storage_bytes = sat_add(a->storage_bytes, b->storage_bytes);
	a->pods = sat_add(a->pods, b->pods);
	for (size_t i = 0; i < PLAN_MAX_NODE_EXT; i++)
		a->ext[i] = sat_add(a->ext[i], b->ext[i]);
}

void plan_res_take(struct plan_res *a, const struct plan_res *b)
{
	a->cpu_milli = a->cpu_milli > b->cpu_milli ? a->cpu_milli - b->cpu_milli : 0;
	a->mem_bytes = a->mem_bytes > b->mem_bytes ? a->mem_bytes - b->mem_bytes : 0;
	a->storage_bytes = a->storage_bytes > b->storage_bytes ?
			   a->storage_bytes - b->storage_bytes : 0;
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

/* One eviction signal's threshold, "100Mi" or "5%", into *bytes or
 * *percent. A larger threshold replaces a smaller one, so that
 * evictionSoft above evictionHard counts, as Karpenter takes the max. */
static int eviction(const struct doc_node *map, const char *which, const char *signal,
		    int64_t *bytes, double *percent, struct dt_err *err)
{
	const struct doc_node *n = doc_get(doc_get(map, which), signal);
	struct quantity q;
	struct dt_err qerr;

	if (!n)
		return 0;
	if (!n->text)
		return dt_err_set(err, -EINVAL, "spec.kubelet.%s.%s: must be a string", which,
				  signal);
	if (n->text_len && n->text[n->text_len - 1] == '%') {
		double p;
		char *end;

		p = strtod(n->text, &end);
		if (end != n->text + n->text_len - 1 || p < 0 || p > 100)
			return dt_err_set(err, -EINVAL, "spec.kubelet.%s.%s: invalid percentage %s",
					  which, signal, n->text);
		if (p / 100.0 > *percent)
			*percent = p / 100.0;
		return 0;
	}
	if (quantity_parse(n->text, n->text_len, &q, &qerr))
		return dt_err_set(err, -EINVAL, "spec.kubelet.%s.%s: %s", which, signal, qerr.msg);
	if (quantity_value_ceil(&q) > *bytes)
		*bytes = quantity_value_ceil(&q);
	return 0;
}

static int evictions(const struct doc_node *kl, const char *which, struct plan_kubelet *k,
		     struct dt_err *err)
{
	int rc = eviction(kl, which, "memory.available", &k->eviction_mem,
			  &k->eviction_mem_percent, err);

	return rc ? rc : eviction(kl, which, "nodefs.available", &k->eviction_storage,
				  &k->eviction_storage_percent, err);
}

/* The device the kubelet's ephemeral storage is on when no mapping is
 * marked rootVolume: the AMI family's (Karpenter's EphemeralBlockDevice),
 * the family taken from amiFamily or else the alias of amiSelectorTerms. */
static const char *ephemeral_device(const struct model_ec2_node_class *c)
{
	const char *family = c->ami_family;

	for (size_t i = 0; !family && i < c->ami_terms.n; i++)
		if (c->ami_terms.items[i].alias)
			family = c->ami_terms.items[i].alias;
	if (!family)
		return "/dev/xvda";                     /* AL2023, the default */
	if (!strncasecmp(family, "bottlerocket", 12))
		return "/dev/xvdb";                     /* its data volume */
	if (!strncasecmp(family, "windows", 7))
		return "/dev/sda1";
	if (!strcasecmp(family, "custom"))
		return NULL;                            /* the last mapping */
	return "/dev/xvda";
}

/* ephemeral-storage capacity as Karpenter's AWS provider predicts it: the
 * instance store with instanceStorePolicy RAID0 (unknown here); else the
 * rootVolume mapping's size (when it has one), else the AMI family's
 * ephemeral device's (the
 * last mapping for a Custom family), else 20Gi. */
static int node_storage(const struct model_ec2_node_class *c, int64_t *out, struct dt_err *err)
{
	const struct doc_node *pol = doc_get(c->spec, "instanceStorePolicy");
	const struct doc_node *bdm = doc_get(c->spec, "blockDeviceMappings");
	const char *dev = ephemeral_device(c);
	const struct doc_node *size = NULL;
	struct quantity q;
	struct dt_err qerr;
	size_t at = 0;

	if (pol && pol->text && !strcmp(pol->text, "RAID0")) {
		*out = -1;
		return 0;
	}
	for (size_t i = 0; bdm && bdm->kind == DOC_SEQ && i < bdm->u.seq.n; i++) {
		const struct doc_node *m = bdm->u.seq.items[i], *name = doc_get(m, "deviceName");
		const struct doc_node *root = doc_get(m, "rootVolume");
		const struct doc_node *vs = doc_get(doc_get(m, "ebs"), "volumeSize");

		if (root && root->kind == DOC_BOOL && root->u.b && vs) {
			size = vs, at = i;
			break;
		}
		if (!size && (dev ? name && name->text && !strcmp(name->text, dev)
				  : i + 1 == bdm->u.seq.n))
			size = vs, at = i;
	}
	if (!size || !size->text) {
		*out = PLAN_ROOT_VOLUME_DEFAULT;
		return 0;
	}
	if (quantity_parse(size->text, size->text_len, &q, &qerr))
		return dt_err_set(err, -EINVAL, "spec.blockDeviceMappings[%zu].ebs.volumeSize: %s",
				  at, qerr.msg);
	*out = value_ceil(&q);
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
	if ((rc = node_storage(&nc->u.ec2_node_class, &k->storage, err)))
		return rc;
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
	    (rc = kubelet_quantity(doc_get(kl, "kubeReserved"), "ephemeral-storage", false,
				   "kubeReserved", &k->kube_reserved_storage, err)) ||
	    (rc = kubelet_quantity(doc_get(kl, "systemReserved"), "ephemeral-storage", false,
				   "systemReserved", &k->system_reserved_storage, err)) ||
	    (rc = evictions(kl, "evictionHard", k, err)) ||
	    (rc = evictions(kl, "evictionSoft", k, err)))
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

/* The eviction threshold of a signal: the default (def bytes, or
 * def_percent of cap when def is -1) unless the class sets one. */
static int64_t eviction_of(int64_t cap, int64_t bytes, double percent, int64_t def,
			   double def_percent)
{
	int64_t evict;

	if (bytes < 0 && percent < 0)
		return def >= 0 ? def : (int64_t)ceil((double)cap * def_percent);
	evict = bytes > 0 ? bytes : 0;
	if (percent >= 0 && (int64_t)((double)cap * percent) > evict)
		evict = (int64_t)ceil((double)cap * percent);
	return evict;
}

static int64_t reserved(int64_t set, int64_t def)
{
	return set >= 0 ? set : def;
}

void plan_node_allocatable(int vcpu, int64_t memory_mib, const struct plan_kubelet *k,
			   struct plan_res *out)
{
	int64_t overhead_mib = (int64_t)ceil((double)memory_mib * PLAN_VM_OVERHEAD_PERCENT);
	int64_t mem = (memory_mib - overhead_mib) << 20;
	int64_t pods = plan_max_pods(k, vcpu);

	out->pods = pods;
	out->cpu_milli = clamp((int64_t)vcpu * 1000 -
			       reserved(k->kube_reserved_cpu, plan_kube_reserved_cpu(vcpu)) -
			       reserved(k->system_reserved_cpu, 0));
	out->mem_bytes = clamp(mem - reserved(k->kube_reserved_mem, plan_kube_reserved_mem(pods)) -
			       reserved(k->system_reserved_mem, 0) -
			       eviction_of(mem, k->eviction_mem, k->eviction_mem_percent,
					   PLAN_EVICTION_HARD_MEM, 0));
	out->storage_bytes = k->storage < 0 ? PLAN_RES_MAX :
		clamp(k->storage - reserved(k->kube_reserved_storage, PLAN_KUBE_RESERVED_STORAGE) -
		      reserved(k->system_reserved_storage, 0) -
		      eviction_of(k->storage, k->eviction_storage, k->eviction_storage_percent, -1,
				  PLAN_EVICTION_NODEFS));
}

/* The resources a pod's requests are counted in, and how each reads. */
enum { R_CPU, R_MEM, R_STORAGE, R_N };
static const struct { const char *name; bool milli; } counted[R_N] = {
	[R_CPU] = { "cpu", true }, [R_MEM] = { "memory", false },
	[R_STORAGE] = { "ephemeral-storage", false },
};

/* The counted resources of one requests/limits pair: requests, or limits
 * for what the requests leave out (the API server defaults requests to
 * limits). has[r]: either names resource r. */
static void container_requests(const struct model_resource_list *req,
			       const struct model_resource_list *lim, int64_t v[R_N], bool has[R_N])
{
	const struct model_resource_list *lists[2] = { req, lim };

	for (int r = 0; r < R_N; r++)
		v[r] = 0, has[r] = false;
	for (int l = 0; l < 2; l++) {
		for (size_t i = 0; i < lists[l]->n_items; i++) {
			const struct model_quantity_entry *e = &lists[l]->items[i];

			for (int r = 0; r < R_N; r++)
				if (!has[r] && !strcmp(e->name, counted[r].name)) {
					v[r] = counted[r].milli ? milli_ceil(&e->value)
								: value_ceil(&e->value);
					has[r] = true;
				}
		}
	}
}

static void res_set(struct plan_res *out, const int64_t v[R_N])
{
	out->cpu_milli = v[R_CPU];
	out->mem_bytes = v[R_MEM];
	out->storage_bytes = v[R_STORAGE];
}

/* Pod-level resources (spec.resources), as kube-scheduler's PodRequests
 * takes them with PodLevelResources: a pod-level cpu or memory request
 * (or, without one, its limit, which the API server copies into the
 * request) stands for the pod instead of its containers' (QA-103). Only
 * cpu and memory: the API refuses ephemeral-storage there. */
static void pod_level_requests(const struct model_pod_spec *spec, struct plan_res *out)
{
	int64_t v[R_N];
	bool has[R_N];

	container_requests(&spec->pod_requests, &spec->pod_limits, v, has);
	if (has[R_CPU])
		out->cpu_milli = v[R_CPU];
	if (has[R_MEM])
		out->mem_bytes = v[R_MEM];
}

/* As kube-scheduler's PodRequests: the containers' sum with the sidecars'
 * (init containers with restartPolicy Always, which keep running), or the
 * largest init container together with the sidecars started before it,
 * whichever is more (QA-104); per resource. */
void plan_pod_requests(const struct model_pod_spec *spec, struct plan_res *out)
{
	int64_t sum[R_N] = { 0 }, init[R_N] = { 0 }, side[R_N] = { 0 }, v[R_N], o[R_N];
	bool has[R_N];

	for (size_t i = 0; i < spec->n_containers; i++) {
		container_requests(&spec->containers[i].requests, &spec->containers[i].limits, v,
				   has);
		for (int r = 0; r < R_N; r++)
			sum[r] = sat_add(sum[r], v[r]);
	}
	for (size_t i = 0; i < spec->n_init_containers; i++) {
		const struct model_container *ic = &spec->init_containers[i];
		bool sidecar = ic->restart_policy && !strcmp(ic->restart_policy, "Always");

		container_requests(&ic->requests, &ic->limits, v, has);
		for (int r = 0; r < R_N; r++) {
			if (sidecar) {
				sum[r] = sat_add(sum[r], v[r]);
				v[r] = side[r] = sat_add(side[r], v[r]);
			} else {
				v[r] = sat_add(v[r], side[r]);
			}
			init[r] = v[r] > init[r] ? v[r] : init[r];
		}
	}
	for (int r = 0; r < R_N; r++)
		sum[r] = sum[r] > init[r] ? sum[r] : init[r];
	res_set(out, sum);
	pod_level_requests(spec, out);
	container_requests(&spec->overhead, &(struct model_resource_list){ 0 }, o, has);
	out->cpu_milli = sat_add(out->cpu_milli, o[R_CPU]);
	out->mem_bytes = sat_add(out->mem_bytes, o[R_MEM]);
	out->storage_bytes = sat_add(out->storage_bytes, o[R_STORAGE]);
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
	if (used->storage_bytes + need->storage_bytes > cap->storage_bytes)
		return "ephemeral-storage";
	if (used->pods + need->pods > cap->pods)
		return "pods";
	for (size_t i = 0; i < PLAN_MAX_NODE_EXT; i++)
		if (used->ext[i] + need->ext[i] > cap->ext[i])
			return "extended";
	return NULL;
}
