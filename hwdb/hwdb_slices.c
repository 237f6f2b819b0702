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
 * matchAttribute on them as satisfied by any GPUs of one node. */
#include "hwdb.h"

#include <stdio.h>
#include <string.h>

#include "hwdb_source.h"
#include "model.h"

#define ANNOTATION_INSTANCE_TYPE "dratopo.io/instance-type"
#define ANNOTATION_CC "dratopo.io/consumable-capacity"
#define ANNOTATION_TOPOLOGY "dratopo.io/topology"

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
 * fields (pcieRoot; dra.net/numaNode for EFAs). */
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
	return model_device_cel_init(s, driver, d);
}

static int build_slice(struct model_set *s, const struct hwdb_type *t, const char *driver,
		       const struct hwdb_device *devs, size_t n_devs, bool efa,
		       const struct hwdb_cc_mode *mode, const char *node, struct model_object **out)
{
	struct model_object *o = model_set_add(s, MODEL_RESOURCE_SLICE);
	struct model_resource_slice_spec *sp;
	char name[320], ccbuf[24];
	size_t n_ann = 0;
	int rc;

	if (!o)
		return -ENOMEM;
	snprintf(name, sizeof(name), "%s-%s", node, driver);
	o->meta.name = model_set_strdup(s, name);
	o->meta.annotations = model_set_calloc(s, 4, sizeof(*o->meta.annotations));
	if (!o->meta.name || !o->meta.annotations)
		return -ENOMEM;
	if ((rc = add_kv(s, o->meta.annotations, &n_ann, ANNOTATION_INSTANCE_TYPE, t->name)))
		return rc;
	if (!t->dra_metadata &&
	    (rc = add_kv(s, o->meta.annotations, &n_ann, ANNOTATION_TOPOLOGY, "unknown")))
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
	}
	o->meta.n_annotations = n_ann;

	sp = &o->u.slice;
	sp->driver = model_set_strdup(s, driver);
	sp->pool.name = model_set_strdup(s, node);
	sp->node_name = model_set_strdup(s, node);
	sp->devices = model_set_calloc(s, n_devs, sizeof(*sp->devices));
	if (!sp->driver || !sp->pool.name || !sp->node_name || !sp->devices)
		return -ENOMEM;
	sp->pool.generation = 1;
	sp->pool.resource_slice_count = 1;
	sp->n_devices = n_devs;
	for (size_t i = 0; i < n_devs; i++)
		if ((rc = build_device(s, driver, &devs[i], efa, mode, &sp->devices[i])))
			return rc;
	if ((rc = model_object_default(s, o)))
		return rc;
	*out = o;
	return 0;
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

int hwdb_slices(const struct hwdb_type *t, const struct hwdb_cc_mode *mode, const char *node_name,
		struct model_set *set, struct model_object **out, size_t *n_out,
		struct dt_err *err)
{
	static const struct hwdb_cc_mode disabled = { HWDB_CC_DISABLED, 0 };
	const char *node = node_name ? node_name : t->name;
	int rc;

	*n_out = 0;
	if (!mode)
		mode = &disabled;
	if (!valid_node_name(node))
		return dt_err_set(err, -EINVAL, "node name \"%s\": must be a lowercase RFC 1123 "
				  "subdomain of at most %zu characters", node,
				  253 - sizeof("-gpu.nvidia.com"));
	if (mode->kind == HWDB_CC_SHARES && mode->shares <= 0)
		return dt_err_set(err, -EINVAL, "consumable capacity: share count must be positive");
	if (t->n_gpus) {
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
