/* hwdb_slices.c - the ResourceSlices the NVIDIA GPU driver and DRANET
 * publish on a node of an instance type, as model objects, with the
 * NVIDIA driver's consumable-capacity mode applied.
 *
 * gpu.nvidia.com: one pool per node, devices gpu-N with the scraped
 * attributes (productName, architecture, brand, cudaComputeCapability,
 * type), resource.kubernetes.io/pcieRoot where known, capacity memory; in
 * a sharing mode allowMultipleAllocations and the request policies of
 * karpenter-dra.md §4 (and `shares` in share mode).
 * dra.net: one pool per node, devices efa-N with the scraped attributes,
 * dra.net/numaNode where known and resource.kubernetes.io/pcieRoot.
 *
 * driverVersion and cudaDriverVersion have no value before the node runs,
 * but are the same on every GPU of a node. The GPU slice names them in the
 * annotation HWDB_ANNOTATION_NODE_UNIFORM so that the planner treats a
 * matchAttribute on them as satisfied by any GPUs of one node.
 *
 * MIG (hwdb_slices_opts with a layout, hwdb_mig.h): a static layout
 * publishes each partitioned GPU's instances as devices of type mig (the
 * parent's attributes, profile, parentMinor, the parent's pcieRoot; the
 * capacities multiprocessors, copyEngines, decoders, encoders,
 * jpegEngines, ofaEngines, memory); uuid and parentUUID exist only on the
 * node and are left out. Dynamic MIG publishes, as the driver's DynamicMIG
 * does, a counter set gpu-N-counter-set per GPU (its engines, memory and
 * memory-slice-0..7) in slices of their own, and the whole GPU plus every
 * placement of every profile as devices consuming from it, at most 64
 * devices a slice (the API's limit for devices with consumesCounters). */
#include "hwdb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwdb_mig_internal.h"
#include "hwdb_source.h"
#include "model.h"

const char *const hwdb_gpu_node_uniform_attrs[] = { "driverVersion", "cudaDriverVersion", NULL };

#define ANNOTATION_INSTANCE_TYPE "dratopo.io/instance-type"
#define ANNOTATION_CC "dratopo.io/consumable-capacity"
#define ANNOTATION_TOPOLOGY "dratopo.io/topology"
#define ANNOTATION_MIG "dratopo.io/mig-layout"

#define MAX_DEVICES             128     /* a slice's devices */
#define MAX_DEVICES_COUNTERS    64      /* ... when they consume counters */
#define MAX_COUNTER_SETS        8       /* a slice's sharedCounters */

static int add_kv(struct model_set *s, struct model_kv *kv, size_t *n, const char *k,
		  const char *v)
{
	kv[*n].key = model_set_strdup(s, k);
	kv[*n].value = model_set_strdup(s, v);
	if (!kv[*n].key || !kv[*n].value)
		return -ENOMEM;
	(*n)++;
	return 0;
}

static int set_attr(struct model_set *s, const char *driver, struct model_attribute *a,
		    const struct hwdb_attr *h)
{
	size_t len;

	a->name = model_set_strdup(s, h->name);
	if (!a->name || model_split_qualified(s, a->name, driver, &a->domain, &a->id))
		return -ENOMEM;
	switch (h->type) {
	case HWDB_ATTR_INT:
		a->type = CEL_ATTR_INT;
		a->v.i = h->i;
		return 0;
	case HWDB_ATTR_BOOL:
		a->type = CEL_ATTR_BOOL;
		a->v.b = h->b;
		return 0;
	case HWDB_ATTR_VERSION:
	case HWDB_ATTR_STRING:
		a->type = h->type == HWDB_ATTR_VERSION ? CEL_ATTR_VERSION : CEL_ATTR_STRING;
		len = strlen(h->str);
		a->v.str.s = model_set_strndup(s, h->str, len);
		a->v.str.len = len;
		if (!a->v.str.s)
			return -ENOMEM;
		if (a->type == CEL_ATTR_VERSION)
			a->version_ok = semver_parse(h->str, len, &a->version, NULL) == 0;
		return 0;
	}
	return -EINVAL;
}

static int set_string_attr(struct model_set *s, const char *driver, struct model_attribute *a,
			   const char *name, const char *value)
{
	struct hwdb_attr h = { .name = name, .type = HWDB_ATTR_STRING, .str = value };

	return set_attr(s, driver, a, &h);
}

static int set_int_attr(struct model_set *s, const char *driver, struct model_attribute *a,
			const char *name, int64_t value)
{
	struct hwdb_attr h = { .name = name, .type = HWDB_ATTR_INT, .i = value };

	return set_attr(s, driver, a, &h);
}

static int set_capacity_name(struct model_set *s, const char *driver, struct model_capacity *c,
			     const char *name)
{
	c->name = model_set_strdup(s, name);
	if (!c->name)
		return -ENOMEM;
	return model_split_qualified(s, c->name, driver, &c->domain, &c->id);
}

static struct quantity mib(int64_t n)
{
	return quantity_from_int(n << 20, QUANTITY_BINARY_SI);
}

/* capacity.memory and, in share mode, capacity.shares, with the request
 * policies the driver sets:
 *   unlimited: memory default 0,    range [0, mem] step 1Mi
 *   memory:    memory default mem,  range [1Mi, mem] step 1Mi
 *   N shares:  memory as unlimited; shares value N, default 1, range [1, N] step 1
 *              (no step when N is 1: the API refuses a step past the value)
 * Sharing modes round memory down to a whole MiB, as the driver does. */
static int gpu_capacity(struct model_set *s, const struct hwdb_device *g,
			const struct hwdb_cc_mode *mode, struct model_device *d)
{
	bool shared = mode->kind != HWDB_CC_DISABLED;
	struct model_capacity *mem;
	int rc;

	if (!g->memory)
		return 0;       /* no memory known: stays a whole, single-claim GPU */
	d->capacity = model_set_calloc(s, 2, sizeof(*d->capacity));
	if (!d->capacity)
		return -ENOMEM;
	mem = &d->capacity[0];
	if ((rc = set_capacity_name(s, HWDB_DRIVER_GPU, mem, "memory")))
		return rc;
	d->n_capacity = 1;
	if (!shared)
		return quantity_parse_str(g->memory, &mem->value, NULL);

	d->has_allow_multiple_allocations = true;
	d->allow_multiple_allocations = true;
	mem->value = mib(g->memory_mib);
	mem->has_request_policy = true;
	mem->request_policy.has_default = true;
	mem->request_policy.def = mode->kind == HWDB_CC_MEMORY ? mem->value : mib(0);
	mem->request_policy.has_valid_range = true;
	mem->request_policy.has_min = mem->request_policy.has_max = true;
	mem->request_policy.has_step = true;
	mem->request_policy.min = mode->kind == HWDB_CC_MEMORY ? mib(1) : mib(0);
	mem->request_policy.max = mem->value;
	mem->request_policy.step = mib(1);
	if (mode->kind == HWDB_CC_SHARES) {
		struct model_capacity *sh = &d->capacity[1];

		if ((rc = set_capacity_name(s, HWDB_DRIVER_GPU, sh, "shares")))
			return rc;
		sh->value = quantity_from_int(mode->shares, QUANTITY_DECIMAL_SI);
		sh->has_request_policy = true;
		sh->request_policy.has_default = true;
		sh->request_policy.def = quantity_from_int(1, QUANTITY_DECIMAL_SI);
		sh->request_policy.has_valid_range = true;
		sh->request_policy.has_min = sh->request_policy.has_max = true;
		/* With a single share the range [1, 1] holds one value; the API
		 * refuses a step that would overshoot it (min + step > value). */
		sh->request_policy.has_step = mode->shares > 1;
		sh->request_policy.min = quantity_from_int(1, QUANTITY_DECIMAL_SI);
		sh->request_policy.max = sh->value;
		sh->request_policy.step = quantity_from_int(1, QUANTITY_DECIMAL_SI);
		d->n_capacity = 2;
	}
	return 0;
}

/* One device: the entry's attributes, then the standard ones hwdb keeps in
 * fields (pcieRoot; dra.net/numaNode for EFAs). The caller builds its CEL
 * view (model_device_cel_init) once the device is complete. */
static int build_device(struct model_set *s, const char *driver, const struct hwdb_device *h,
			bool efa, const struct hwdb_cc_mode *mode, struct model_device *d)
{
	size_t n = 0;
	int rc;

	d->name = model_set_strdup(s, h->name);
	d->attributes = model_set_calloc(s, h->n_attrs + 2, sizeof(*d->attributes));
	if (!d->name || !d->attributes)
		return -ENOMEM;
	for (size_t i = 0; i < h->n_attrs; i++)
		if ((rc = set_attr(s, driver, &d->attributes[n++], &h->attrs[i])))
			return rc;
	if (efa && h->numa_node >= 0 &&
	    (rc = set_int_attr(s, driver, &d->attributes[n++], "dra.net/numaNode", h->numa_node)))
		return rc;
	if (h->pcie_root && (rc = set_string_attr(s, driver, &d->attributes[n++],
						  "resource.kubernetes.io/pcieRoot", h->pcie_root)))
		return rc;
	d->n_attributes = n;
	if (!efa && (rc = gpu_capacity(s, h, mode, d)))
		return rc;
	return 0;
}

/* A slice of the pool <node> without devices: names, annotations, pool,
 * node. index > 0 suffixes the name ("<node>-gpu.nvidia.com-2"). */
static int slice_head(struct model_set *s, const struct hwdb_type *t, const char *driver,
		      bool efa, const struct hwdb_cc_mode *mode, const struct hwdb_mig_layout *mig,
		      const char *node, const char *suffix, struct model_object **out)
{
	struct model_object *o = model_set_add(s, MODEL_RESOURCE_SLICE);
	struct model_resource_slice_spec *sp;
	char name[320], ccbuf[24];
	size_t n_ann = 0;
	int rc;

	if (!o)
		return -ENOMEM;
	snprintf(name, sizeof(name), "%s-%s%s", node, driver, suffix);
	o->meta.name = model_set_strdup(s, name);
	o->meta.annotations = model_set_calloc(s, 5, sizeof(*o->meta.annotations));
	if (!o->meta.name || !o->meta.annotations)
		return -ENOMEM;
	if ((rc = add_kv(s, o->meta.annotations, &n_ann, ANNOTATION_INSTANCE_TYPE, t->name)))
		return rc;
	if (!t->dra_metadata &&
	    (rc = add_kv(s, o->meta.annotations, &n_ann, ANNOTATION_TOPOLOGY, "unknown")))
		return rc;
	/* The NVIDIA driver's gpu-<minor> are known before the node runs
	 * (minors 0.. in bus order); DRANET's pci-<address> are not. */
	if (efa && !t->node_names &&
	    (rc = add_kv(s, o->meta.annotations, &n_ann, HWDB_ANNOTATION_PLACEHOLDER_NAMES,
			 "true")))
		return rc;
	if (!efa) {
		char uniform[128] = "";

		for (size_t i = 0; hwdb_gpu_node_uniform_attrs[i]; i++)
			snprintf(uniform + strlen(uniform), sizeof(uniform) - strlen(uniform), "%s%s",
				 i ? "," : "", hwdb_gpu_node_uniform_attrs[i]);
		if ((rc = add_kv(s, o->meta.annotations, &n_ann, HWDB_ANNOTATION_NODE_UNIFORM,
				 uniform)) ||
		    (rc = add_kv(s, o->meta.annotations, &n_ann, ANNOTATION_CC,
				 hwdb_cc_name(mode, ccbuf, sizeof(ccbuf)))))
			return rc;
		if (mig && mig->kind != HWDB_MIG_NONE &&
		    (rc = add_kv(s, o->meta.annotations, &n_ann, ANNOTATION_MIG, mig->text)))
			return rc;
	}
	o->meta.n_annotations = n_ann;

	sp = &o->u.slice;
	sp->driver = model_set_strdup(s, driver);
	sp->pool.name = model_set_strdup(s, node);
	sp->node_name = model_set_strdup(s, node);
	if (!sp->driver || !sp->pool.name || !sp->node_name)
		return -ENOMEM;
	sp->pool.generation = 1;
	sp->pool.resource_slice_count = 1;
	*out = o;
	return 0;
}

static int build_slice(struct model_set *s, const struct hwdb_type *t, const char *driver,
		       const struct hwdb_device *devs, size_t n_devs, bool efa,
		       const struct hwdb_cc_mode *mode, const char *node, struct model_object **out)
{
	struct model_resource_slice_spec *sp;
	struct model_object *o;
	int rc;

	if ((rc = slice_head(s, t, driver, efa, mode, NULL, node, "", &o)))
		return rc;
	sp = &o->u.slice;
	sp->devices = model_set_calloc(s, n_devs, sizeof(*sp->devices));
	if (!sp->devices)
		return -ENOMEM;
	sp->n_devices = n_devs;
	for (size_t i = 0; i < n_devs; i++)
		if ((rc = build_device(s, driver, &devs[i], efa, mode, &sp->devices[i])) ||
		    (rc = model_device_cel_init(s, driver, &sp->devices[i])))
			return rc;
	if ((rc = model_object_default(s, o)))
		return rc;
	*out = o;
	return 0;
}

/* ---- MIG ---- */

/* The engines a MIG instance has, as capacity names and (the driver
 * lower-cases them: counter names are DNS labels) counter names. */
enum { ENG_SM, ENG_CE, ENG_DEC, ENG_ENC, ENG_JPEG, ENG_OFA, N_ENGINES };
static const char *const engine_capacity[N_ENGINES] = {
	"multiprocessors", "copyEngines", "decoders", "encoders", "jpegEngines", "ofaEngines",
};
static const char *const engine_counter[N_ENGINES] = {
	"multiprocessors", "copyengines", "decoders", "encoders", "jpegengines", "ofaengines",
};

/* A profile's engines; -1 where not published. */
static void profile_engines(const struct hwdb_mig_profile *p, int64_t v[N_ENGINES])
{
	v[ENG_SM] = p->multiprocessors;
	v[ENG_CE] = p->copy_engines;
	v[ENG_DEC] = p->decoders;
	v[ENG_ENC] = p->encoders;
	v[ENG_JPEG] = p->jpeg_engines;
	v[ENG_OFA] = p->ofa_engines;
}

/* The whole GPU's engines, the counters every placement draws on: for each
 * engine the most that one profile at its instance count takes, so that
 * every layout NVIDIA allows fits (the memory-slice counters keep the
 * instances apart); -1 when a profile does not publish it. */
static void gpu_engines(const struct hwdb_mig_gpu *g, int64_t tot[N_ENGINES])
{
	for (int e = 0; e < N_ENGINES; e++)
		tot[e] = 0;
	for (size_t i = 0; i < g->n_profiles; i++) {
		int64_t v[N_ENGINES];

		profile_engines(&g->profiles[i], v);
		for (int e = 0; e < N_ENGINES; e++) {
			if (v[e] < 0 || tot[e] < 0)
				tot[e] = -1;
			else if (v[e] * g->profiles[i].instances > tot[e])
				tot[e] = v[e] * g->profiles[i].instances;
		}
	}
}

/* capacity: the published engines and memory (replacing what d had). */
static int engine_capacities(struct model_set *s, struct model_device *d,
			     const int64_t v[N_ENGINES], struct quantity mem)
{
	size_t n = 0;
	int rc;

	d->capacity = model_set_calloc(s, N_ENGINES + 1, sizeof(*d->capacity));
	if (!d->capacity)
		return -ENOMEM;
	for (int e = 0; e < N_ENGINES; e++) {
		if (v[e] < 0)
			continue;
		if ((rc = set_capacity_name(s, HWDB_DRIVER_GPU, &d->capacity[n], engine_capacity[e])))
			return rc;
		d->capacity[n++].value = quantity_from_int(v[e], QUANTITY_DECIMAL_SI);
	}
	if ((rc = set_capacity_name(s, HWDB_DRIVER_GPU, &d->capacity[n], "memory")))
		return rc;
	d->capacity[n++].value = mem;
	d->n_capacity = n;
	return 0;
}

static int add_counter(struct model_set *s, struct model_counter_set *cs, const char *name,
		       struct quantity v)
{
	cs->counters[cs->n_counters].name = model_set_strdup(s, name);
	if (!cs->counters[cs->n_counters].name)
		return -ENOMEM;
	cs->counters[cs->n_counters++].value = v;
	return 0;
}

/* A counter set (sharedCounters) or a consumption of one (consumesCounters):
 * engines, memory, and memory-slice-<i> for the n slices from start. */
static int fill_counters(struct model_set *s, struct model_counter_set *cs, size_t gpu,
			 const int64_t v[N_ENGINES], struct quantity mem, int start, int n)
{
	char name[48];
	int rc;

	snprintf(name, sizeof(name), "gpu-%zu-counter-set", gpu);
	cs->name = model_set_strdup(s, name);
	cs->counters = model_set_calloc(s, N_ENGINES + 1 + HWDB_MIG_MAX_SLICES,
					sizeof(*cs->counters));
	if (!cs->name || !cs->counters)
		return -ENOMEM;
	cs->n_counters = 0;
	for (int e = 0; e < N_ENGINES; e++)
		if (v[e] >= 0 && (rc = add_counter(s, cs, engine_counter[e],
						   quantity_from_int(v[e], QUANTITY_DECIMAL_SI))))
			return rc;
	if ((rc = add_counter(s, cs, "memory", mem)))
		return rc;
	for (int i = start; i < start + n; i++) {
		snprintf(name, sizeof(name), "memory-slice-%d", i);
		if ((rc = add_counter(s, cs, name, quantity_from_int(1, QUANTITY_DECIMAL_SI))))
			return rc;
	}
	return 0;
}

static int consume(struct model_set *s, struct model_device *d, size_t gpu,
		   const int64_t v[N_ENGINES], struct quantity mem, int start, int n)
{
	d->consumes_counters = model_set_calloc(s, 1, sizeof(*d->consumes_counters));
	if (!d->consumes_counters)
		return -ENOMEM;
	d->n_consumes_counters = 1;
	return fill_counters(s, d->consumes_counters, gpu, v, mem, start, n);
}

/* One MIG device on GPU gpu (hwdb device h): the parent's attributes with
 * type mig, profile, parentMinor and the parent's pcieRoot. */
static int build_mig_device(struct model_set *s, const struct hwdb_device *h, size_t gpu,
			    const struct hwdb_mig_profile *p, int start, bool dynamic,
			    struct model_device *d)
{
	const char *driver = HWDB_DRIVER_GPU;
	int64_t v[N_ENGINES];
	struct quantity mem;
	char name[96];
	size_t n = 0;
	int rc;

	hwdb_mig_device_name(gpu, p, start, name, sizeof(name));
	d->name = model_set_strdup(s, name);
	d->attributes = model_set_calloc(s, h->n_attrs + 4, sizeof(*d->attributes));
	if (!d->name || !d->attributes)
		return -ENOMEM;
	for (size_t i = 0; i < h->n_attrs; i++)
		if (strcmp(h->attrs[i].name, "type") &&
		    (rc = set_attr(s, driver, &d->attributes[n++], &h->attrs[i])))
			return rc;
	if ((rc = set_string_attr(s, driver, &d->attributes[n++], "type", "mig")) ||
	    (rc = set_string_attr(s, driver, &d->attributes[n++], "profile", p->name)) ||
	    (rc = set_int_attr(s, driver, &d->attributes[n++], "parentMinor", (int64_t)gpu)))
		return rc;
	if (h->pcie_root && (rc = set_string_attr(s, driver, &d->attributes[n++],
						  "resource.kubernetes.io/pcieRoot", h->pcie_root)))
		return rc;
	d->n_attributes = n;
	profile_engines(p, v);
	if ((rc = quantity_parse_str(p->memory, &mem, NULL)) ||
	    (rc = engine_capacities(s, d, v, mem)))
		return rc;
	if (dynamic && (rc = consume(s, d, gpu, v, mem, start, p->memory_slices)))
		return rc;
	return model_device_cel_init(s, driver, d);
}

/* Under dynamic MIG the whole GPU is one more partition: it has, and
 * consumes, everything of its counter set. */
static int build_dynamic_gpu(struct model_set *s, const struct hwdb_mig_gpu *g,
			     const struct hwdb_device *h, size_t gpu, struct model_device *d)
{
	static const struct hwdb_cc_mode disabled = { HWDB_CC_DISABLED, 0 };
	int64_t tot[N_ENGINES];
	struct quantity mem;
	int rc;

	gpu_engines(g, tot);
	if ((rc = build_device(s, HWDB_DRIVER_GPU, h, false, &disabled, d)) ||
	    (rc = quantity_parse_str(h->memory, &mem, NULL)) ||
	    (rc = engine_capacities(s, d, tot, mem)) ||
	    (rc = consume(s, d, gpu, tot, mem, 0, g->memory_slices)))
		return rc;
	return model_device_cel_init(s, HWDB_DRIVER_GPU, d);
}

static size_t n_placements(const struct hwdb_mig_gpu *g)
{
	size_t n = 0;

	for (size_t i = 0; i < g->n_profiles; i++)
		n += g->profiles[i].n_placements;
	return n;
}

/* Every GPU device of the node under the layout, in gpu-N order, into
 * devs (sized by the caller). plans is NULL for dynamic MIG. */
static int mig_devices(struct model_set *s, const struct hwdb_type *t, const struct hwdb_mig_gpu *g,
		       const struct hwdb_cc_mode *mode, const struct hwdb_mig_gpu_plan *plans,
		       struct model_device *devs, size_t *n)
{
	int rc = 0;

	*n = 0;
	for (size_t i = 0; i < t->n_gpus && !rc; i++) {
		const struct hwdb_device *h = &t->gpus[i];

		if (!plans) {
			rc = build_dynamic_gpu(s, g, h, i, &devs[(*n)++]);
			for (size_t p = 0; p < g->n_profiles && !rc; p++)
				for (size_t k = 0; k < g->profiles[p].n_placements && !rc; k++)
					rc = build_mig_device(s, h, i, &g->profiles[p],
							      g->profiles[p].placements[k], true,
							      &devs[(*n)++]);
		} else if (!plans[i].enabled) {
			rc = build_device(s, HWDB_DRIVER_GPU, h, false, mode, &devs[*n]);
			if (!rc)
				rc = model_device_cel_init(s, HWDB_DRIVER_GPU, &devs[*n]);
			(*n)++;
		} else {
			for (size_t k = 0; k < plans[i].n && !rc; k++)
				rc = build_mig_device(s, h, i, plans[i].inst[k].profile,
						      plans[i].inst[k].start, false, &devs[(*n)++]);
		}
	}
	return rc;
}

/* The name suffix of slice k of mig_pool: "", "-1", ... for the n_dev
 * device slices, then "-counters", "-counters-1", ... for the counter
 * sets' (written out rather than with a format that may be empty, which
 * clang's -Wformat-zero-length rightly questions). */
static void slice_suffix(size_t k, size_t n_dev, char *buf, size_t len)
{
	const char *kind = k < n_dev ? "" : "-counters";
	size_t i = k < n_dev ? k : k - n_dev;

	if (i)
		snprintf(buf, len, "%s-%zu", kind, i);
	else
		snprintf(buf, len, "%s", kind);
}

/* The slices of devs[0..n) (lim a slice) and, for dynamic MIG, of the
 * GPUs' counter sets (MAX_COUNTER_SETS a slice), appended to out. */
static int mig_pool(struct model_set *s, const struct hwdb_type *t, const struct hwdb_mig_gpu *g,
		    const struct hwdb_cc_mode *mode, const struct hwdb_mig_layout *mig,
		    const char *node, struct model_device *devs, size_t n, size_t lim,
		    struct model_object **out, size_t *n_out)
{
	bool dynamic = mig->kind == HWDB_MIG_DYNAMIC;
	size_t n_dev = (n + lim - 1) / lim, first = *n_out;
	size_t n_cs = dynamic ? (t->n_gpus + MAX_COUNTER_SETS - 1) / MAX_COUNTER_SETS : 0;
	char suffix[32];
	int rc;

	if (first + n_dev + n_cs + 1 > HWDB_MAX_SLICES)
		return -E2BIG;
	for (size_t k = 0; k < n_dev + n_cs; k++) {
		struct model_resource_slice_spec *sp;

		slice_suffix(k, n_dev, suffix, sizeof(suffix));
		if ((rc = slice_head(s, t, HWDB_DRIVER_GPU, false, mode, mig, node, suffix,
				     &out[(*n_out)++])))
			return rc;
		sp = &out[*n_out - 1]->u.slice;
		if (k < n_dev) {
			sp->devices = devs + k * lim;
			sp->n_devices = n - k * lim < lim ? n - k * lim : lim;
			continue;
		}
		sp->shared_counters = model_set_calloc(s, MAX_COUNTER_SETS, sizeof(*sp->shared_counters));
		if (!sp->shared_counters)
			return -ENOMEM;
		for (size_t i = (k - n_dev) * MAX_COUNTER_SETS;
		     i < t->n_gpus && sp->n_shared_counters < MAX_COUNTER_SETS; i++) {
			int64_t tot[N_ENGINES];
			struct quantity mem;

			gpu_engines(g, tot);
			if ((rc = quantity_parse_str(t->gpus[i].memory, &mem, NULL)) ||
			    (rc = fill_counters(s, &sp->shared_counters[sp->n_shared_counters++], i,
						tot, mem, 0, g->memory_slices)))
				return rc;
		}
	}
	for (size_t k = first; k < *n_out; k++) {
		out[k]->u.slice.pool.resource_slice_count = (int64_t)(*n_out - first);
		if ((rc = model_object_default(s, out[k])))
			return rc;
	}
	return 0;
}

/* The GPU driver's slices under a MIG layout (not NONE). */
static int mig_slices(struct model_set *s, const struct hwdb_type *t,
		      const struct hwdb_cc_mode *mode, const struct hwdb_mig_layout *mig,
		      const char *node, struct model_object **out, size_t *n_out, struct dt_err *err)
{
	const struct hwdb_mig_gpu *g = hwdb_mig_of_type(t);
	bool dynamic = mig->kind == HWDB_MIG_DYNAMIC;
	struct hwdb_mig_gpu_plan *plans = NULL;
	struct model_device *devs = NULL;
	size_t n = 0, cap, lim = dynamic ? MAX_DEVICES_COUNTERS : MAX_DEVICES;
	int rc;

	if (!g)
		return hwdb_mig_check(mig, t, err);     /* -ENOTSUP with the reason */
	if (dynamic && n_placements(g) + 1 > MAX_DEVICES_COUNTERS)
		return dt_err_set(err, -E2BIG, "%s: a GPU has %zu MIG placements, more than one "
				  "slice holds", t->name, n_placements(g));
	cap = t->n_gpus * (dynamic ? n_placements(g) + 1 : HWDB_MIG_MAX_SLICES);
	if (!dynamic) {
		plans = calloc(t->n_gpus, sizeof(*plans));
		if (!plans)
			return dt_err_set(err, -ENOMEM, "out of memory");
		if ((rc = hwdb_mig_resolve(mig, t, g, plans, err)))
			goto out;
	}
	rc = -ENOMEM;
	devs = model_set_calloc(s, cap, sizeof(*devs));
	if (devs)
		rc = mig_devices(s, t, g, mode, plans, devs, &n);
	if (!rc)
		rc = mig_pool(s, t, g, mode, mig, node, devs, n, lim, out, n_out);
	if (rc == -E2BIG)
		dt_err_set(err, rc, "%s: MIG layout \"%s\" needs more than %d slices", t->name,
			   mig->text, HWDB_MAX_SLICES);
	else if (rc)
		dt_err_set(err, rc, "%s: cannot build its MIG slices: %s", t->name,
			   rc == -ENOMEM ? "out of memory" : "invalid data");
out:
	free(plans);
	return rc;
}

/* Node names become object names ("<node>-gpu.nvidia.com"): a DNS
 * subdomain, short enough to leave room for the suffix. */
static bool valid_node_name(const char *s)
{
	size_t n = strlen(s), label = 0;

	if (n == 0 || n > 253 - sizeof("-gpu.nvidia.com"))
		return false;
	for (size_t i = 0; i <= n; i++) {
		char c = s[i];

		if (c == '.' || c == '\0') {
			/* a label: 1..63 characters, alphanumeric at both ends */
			if (label == 0 || label > 63 || s[i - 1] == '-' || s[i - label] == '-')
				return false;
			label = 0;
			continue;
		}
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
			return false;
		label++;
	}
	return true;
}

int hwdb_slices_opts(const struct hwdb_type *t, const struct hwdb_slice_opts *opts,
		     const char *node_name, struct model_set *set, struct model_object **out,
		     size_t *n_out, struct dt_err *err)
{
	static const struct hwdb_cc_mode disabled = { HWDB_CC_DISABLED, 0 };
	const struct hwdb_cc_mode *mode = opts && opts->cc ? opts->cc : &disabled;
	const struct hwdb_mig_layout *mig = opts ? opts->mig : NULL;
	const char *node = node_name ? node_name : t->name;
	char ccbuf[24];
	int rc;

	*n_out = 0;
	if (!valid_node_name(node))
		return dt_err_set(err, -EINVAL, "node name \"%s\": must be a lowercase RFC 1123 "
				  "subdomain of at most %zu characters", node,
				  253 - sizeof("-gpu.nvidia.com"));
	if (mode->kind == HWDB_CC_SHARES && mode->shares <= 0)
		return dt_err_set(err, -EINVAL, "consumable capacity: share count must be positive");
	if (mig && mig->kind == HWDB_MIG_DYNAMIC && mode->kind != HWDB_CC_DISABLED)
		return dt_err_set(err, -EINVAL, "consumable capacity %s cannot be combined with "
				  "dynamic MIG (the driver shares whole GPUs only)",
				  hwdb_cc_name(mode, ccbuf, sizeof(ccbuf)));
	if (t->n_gpus && mig && mig->kind != HWDB_MIG_NONE) {
		if ((rc = mig_slices(set, t, mode, mig, node, out, n_out, err)))
			return rc;
	} else if (t->n_gpus) {
		rc = build_slice(set, t, HWDB_DRIVER_GPU, t->gpus, t->n_gpus, false, mode, node,
				 &out[*n_out]);
		if (rc)
			goto fail;
		(*n_out)++;
	}
	if (t->n_efas) {
		rc = build_slice(set, t, HWDB_DRIVER_EFA, t->efas, t->n_efas, true, mode, node,
				 &out[*n_out]);
		if (rc)
			goto fail;
		(*n_out)++;
	}
	return 0;
fail:
	return dt_err_set(err, rc, "%s: cannot build its ResourceSlices: %s", t->name,
			  rc == -ENOMEM ? "out of memory" : "invalid data");
}

int hwdb_slices(const struct hwdb_type *t, const struct hwdb_cc_mode *mode, const char *node_name,
		struct model_set *set, struct model_object **out, size_t *n_out,
		struct dt_err *err)
{
	struct hwdb_slice_opts opts = { .cc = mode };

	return hwdb_slices_opts(t, &opts, node_name, set, out, n_out, err);
}

int hwdb_slices_check(const struct hwdb_type *t, struct dt_err *err)
{
	static const struct hwdb_cc_mode modes[] = {
		{ HWDB_CC_DISABLED, 0 }, { HWDB_CC_SHARES, 2 }, { HWDB_CC_MEMORY, 0 },
	};
	struct model_object *slices[HWDB_MAX_SLICES];
	static const struct model_validate_opts vopts = { 0 };   /* no selectors to compile */
	struct model_set *set = model_set_new();
	struct dt_diags diags;
	int rc = 0;

	if (!set)
		return dt_err_set(err, -ENOMEM, "out of memory");
	dt_diags_init(&diags);
	for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]) && !rc; m++) {
		size_t n;

		rc = hwdb_slices(t, &modes[m], NULL, set, slices, &n, err);
		for (size_t i = 0; !rc && i < n; i++) {
			int bad = model_validate_object(slices[i], &vopts, &diags);

			if (bad < 0)
				rc = dt_err_set(err, bad, "out of memory");
			else if (bad > 0)
				rc = dt_err_set(err, -EINVAL, "its %s slice would be invalid: %s%s",
						slices[i]->u.slice.driver,
						diags.n ? diags.msgs[0] : "(no message)",
						bad > 1 ? " (and more)" : "");
		}
	}
	dt_diags_free(&diags);
	model_set_free(set);
	return rc;
}
