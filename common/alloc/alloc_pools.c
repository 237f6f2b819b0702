/* alloc_pools.c - the node's view of the cluster's ResourceSlices: which
 * slices target the node, the pools they form (highest generation only,
 * complete or not, valid or not), every device flattened into one array
 * in the order the search tries them, and the counter sets of
 * partitionable devices. Also struct alloc_ctx's life cycle. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_internal.h"

/* ---- node selectors ---- */

static const char *node_label(const struct alloc_node *n, const char *key)
{
	for (size_t i = 0; i < n->n_labels; i++)
		if (n->labels[i].key && !strcmp(n->labels[i].key, key))
			return n->labels[i].value ? n->labels[i].value : "";
	return NULL;
}

static bool parse_i64(const char *s, int64_t *out)
{
	char *end;
	long long v;

	if (!s || !*s)
		return false;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end)
		return false;
	*out = v;
	return true;
}

static bool in_values(const struct model_requirement *r, const char *v)
{
	for (size_t i = 0; i < r->n_values; i++)
		if (r->values[i] && !strcmp(r->values[i], v))
			return true;
	return false;
}

/* One NodeSelectorRequirement against a value (NULL: key absent). */
static bool requirement_matches(const struct model_requirement *r, const char *v)
{
	int64_t a, b;

	switch (r->op) {
	case MODEL_OP_IN:
		return v && in_values(r, v);
	case MODEL_OP_NOT_IN:
		return !v || !in_values(r, v);
	case MODEL_OP_EXISTS:
		return v != NULL;
	case MODEL_OP_DOES_NOT_EXIST:
		return v == NULL;
	case MODEL_OP_GT:
	case MODEL_OP_LT:
		if (!v || r->n_values != 1 || !parse_i64(v, &a) || !parse_i64(r->values[0], &b))
			return false;
		return r->op == MODEL_OP_GT ? a > b : a < b;
	default:
		return false;
	}
}

static bool term_matches(const struct alloc_node *n, const struct model_node_selector_term *t)
{
	if (!t->n_match_expressions && !t->n_match_fields)
		return false;   /* an empty term matches no objects */
	for (size_t i = 0; i < t->n_match_expressions; i++) {
		const struct model_requirement *r = &t->match_expressions[i];

		if (!requirement_matches(r, node_label(n, r->key)))
			return false;
	}
	for (size_t i = 0; i < t->n_match_fields; i++) {
		const struct model_requirement *r = &t->match_fields[i];
		const char *v = r->key && !strcmp(r->key, "metadata.name") ? n->name : NULL;

		if (!requirement_matches(r, v))
			return false;
	}
	return true;
}

static bool selector_matches(const struct alloc_node *n, const struct model_node_selector *s)
{
	for (size_t i = 0; s && i < s->n_terms; i++)
		if (term_matches(n, &s->terms[i]))
			return true;
	return false;
}

/* Slice-level relevance. *per_device: devices decide themselves. */
static bool slice_targets(const struct alloc_node *n, const struct model_resource_slice_spec *s,
			  bool *per_device)
{
	*per_device = false;
	if (s->node_name)
		return !strcmp(s->node_name, n->name);
	if (s->has_all_nodes && s->all_nodes)
		return true;
	if (s->node_selector)
		return selector_matches(n, s->node_selector);
	if (s->has_per_device_node_selection && s->per_device_node_selection) {
		*per_device = true;
		return true;
	}
	return false;   /* none of the four: a future extension, ignored */
}

static bool device_targets(const struct alloc_node *n, const struct model_device *d)
{
	if (d->node_name)
		return !strcmp(d->node_name, n->name);
	if (d->has_all_nodes && d->all_nodes)
		return true;
	if (d->node_selector)
		return selector_matches(n, d->node_selector);
	return false;
}

/* ---- gathering ---- */

struct gslice {
	const struct model_object *obj;
	bool relevant;
	bool per_device;
};

struct gpool {
	const char *driver, *name;
	int64_t gen;                    /* highest generation among relevant slices */
	struct gslice *slices;          /* every slice of the pool at gen */
	size_t n, cap;
	bool obsolete;                  /* a newer generation exists that does not target us */
	bool has_binding_conditions;    /* some device has bindingConditions */
};

static int cmp_slice_name(const void *a, const void *b)
{
	const struct gslice *x = a, *y = b;
	const char *nx = x->obj->meta.name ? x->obj->meta.name : "";
	const char *ny = y->obj->meta.name ? y->obj->meta.name : "";

	return strcmp(nx, ny);
}

static int cmp_gpool(const void *a, const void *b)
{
	const struct gpool *x = a, *y = b;
	int c;

	if (x->has_binding_conditions != y->has_binding_conditions)
		return x->has_binding_conditions ? 1 : -1;
	c = strcmp(x->driver, y->driver);
	return c ? c : strcmp(x->name, y->name);
}

static const struct model_resource_slice_spec *spec_of(const struct model_object *o)
{
	return &o->u.slice;
}

/* The pools with at least one relevant slice, and for each every slice of
 * the pool at its highest generation. */
static int gather(const struct alloc_node *node, const struct model_object *const *slices,
		  size_t n_slices, struct gpool **out, size_t *n_out)
{
	struct alloc_hash idx;
	struct gpool *pools = NULL;
	size_t n = 0, cap = 0;
	char **keys = NULL;
	int rc = 0;

	alloc_hash_init(&idx);
	keys = calloc(n_slices ? n_slices : 1, sizeof(*keys));
	if (!keys) {
		rc = -ENOMEM;
		goto out;
	}
	/* Pass 1: pools of relevant slices and their highest generation. */
	for (size_t i = 0; i < n_slices; i++) {
		const struct model_resource_slice_spec *s;
		bool per_device;
		uint32_t pi;
		size_t dl, pl;

		if (!slices[i] || slices[i]->kind != MODEL_RESOURCE_SLICE)
			continue;
		s = spec_of(slices[i]);
		if (!s->driver || !s->pool.name || !slice_targets(node, s, &per_device))
			continue;
		dl = strlen(s->driver);
		pl = strlen(s->pool.name);
		keys[i] = malloc(dl + pl + 2);
		if (!keys[i]) {
			rc = -ENOMEM;
			goto out;
		}
		memcpy(keys[i], s->driver, dl + 1);
		memcpy(keys[i] + dl + 1, s->pool.name, pl + 1);
		if (alloc_hash_get(&idx, keys[i], dl + pl + 1, &pi)) {
			if (s->pool.generation > pools[pi].gen)
				pools[pi].gen = s->pool.generation;
			continue;
		}
		if (DT_GROW(pools, cap, n + 1)) {
			rc = -ENOMEM;
			goto out;
		}
		pools[n].driver = s->driver;
		pools[n].name = s->pool.name;
		pools[n].gen = s->pool.generation;
		rc = alloc_hash_put(&idx, keys[i], dl + pl + 1, (uint32_t)n);
		if (rc)
			goto out;
		n++;
	}
	/* Pass 2: every slice of those pools (relevant or not) at that
	 * generation; a newer one elsewhere makes the pool obsolete. */
	for (size_t i = 0; i < n_slices; i++) {
		const struct model_resource_slice_spec *s;
		char key[512];
		size_t dl, pl;
		uint32_t pi;
		struct gpool *p;

		if (!slices[i] || slices[i]->kind != MODEL_RESOURCE_SLICE)
			continue;
		s = spec_of(slices[i]);
		if (!s->driver || !s->pool.name)
			continue;
		dl = strlen(s->driver);
		pl = strlen(s->pool.name);
		if (dl + pl + 2 > sizeof(key))
			continue;       /* longer than any valid driver/pool pair */
		memcpy(key, s->driver, dl + 1);
		memcpy(key + dl + 1, s->pool.name, pl + 1);
		if (!alloc_hash_get(&idx, key, dl + pl + 1, &pi))
			continue;
		p = &pools[pi];
		if (s->pool.generation > p->gen) {
			p->obsolete = true;
			continue;
		}
		if (s->pool.generation < p->gen)
			continue;
		if (DT_GROW(p->slices, p->cap, p->n + 1)) {
			rc = -ENOMEM;
			goto out;
		}
		p->slices[p->n].obj = slices[i];
		p->slices[p->n].relevant = slice_targets(node, s, &p->slices[p->n].per_device);
		p->n++;
		for (size_t k = 0; k < s->n_devices; k++)
			p->has_binding_conditions |= s->devices[k].n_binding_conditions > 0;
	}
out:
	alloc_hash_free(&idx);
	for (size_t i = 0; keys && i < n_slices; i++)
		free(keys[i]);
	free(keys);
	if (rc) {
		for (size_t i = 0; i < n; i++)
			free(pools[i].slices);
		free(pools);
		return rc;
	}
	*out = pools;
	*n_out = n;
	return 0;
}

/* ---- building the ctx ---- */

static bool device_has_attr(const struct model_device *d, const char *domain, const char *id)
{
	for (size_t i = 0; i < d->n_attributes; i++) {
		const struct model_attribute *a = &d->attributes[i];

		if (a->domain && a->id && !strcmp(a->domain, domain) && !strcmp(a->id, id))
			return true;
	}
	return false;
}

/* Intern a uniform attribute name (qualified or bare, in driver's domain). */
static int uniform_id(struct alloc_ctx *ctx, const char *driver, const char *name, size_t len,
		      uint32_t *out)
{
	const char *slash = memchr(name, '/', len);
	const char *domain = driver, *id = name;
	size_t dlen = strlen(driver), ilen = len;
	char *dd, *ii;

	if (slash) {
		domain = name;
		dlen = (size_t)(slash - name);
		id = slash + 1;
		ilen = len - dlen - 1;
	}
	for (size_t i = 0; i < ctx->n_uni_attrs; i++) {
		const struct auniform *u = &ctx->uni_attrs[i];

		if (strlen(u->domain) == dlen && !memcmp(u->domain, domain, dlen) &&
		    strlen(u->id) == ilen && !memcmp(u->id, id, ilen)) {
			*out = (uint32_t)i;
			return 0;
		}
	}
	if (ctx->n_uni_attrs >= 64)
		return -E2BIG;
	dd = alloc_mem_get(ctx->mem, dlen + 1);
	ii = alloc_mem_get(ctx->mem, ilen + 1);
	if (!dd || !ii)
		return -ENOMEM;
	memcpy(dd, domain, dlen);
	memcpy(ii, id, ilen);
	if (!ctx->uni_attrs) {
		ctx->uni_attrs = alloc_mem_get(ctx->mem, 64 * sizeof(*ctx->uni_attrs));
		if (!ctx->uni_attrs)
			return -ENOMEM;
	}
	ctx->uni_attrs[ctx->n_uni_attrs].domain = dd;
	ctx->uni_attrs[ctx->n_uni_attrs].id = ii;
	*out = (uint32_t)ctx->n_uni_attrs++;
	return 0;
}

/* The node-uniform attribute ids that apply to devices of slice o. */
static int slice_uniform(struct alloc_ctx *ctx, const struct model_object *o, uint32_t *ids,
			 size_t *n_ids)
{
	const char *driver = o->u.slice.driver;
	int rc;

	*n_ids = 0;
	for (size_t i = 0; i < ctx->node.n_uniform_attrs; i++) {
		const struct alloc_uniform_attr *u = &ctx->node.uniform_attrs[i];

		if (!u->attribute || (u->driver && strcmp(u->driver, driver)))
			continue;
		if (*n_ids >= 64)
			break;
		rc = uniform_id(ctx, driver, u->attribute, strlen(u->attribute), &ids[*n_ids]);
		if (rc == -E2BIG)
			break;
		if (rc)
			return rc;
		(*n_ids)++;
	}
	for (size_t i = 0; i < o->meta.n_annotations; i++) {
		const struct model_kv *kv = &o->meta.annotations[i];
		const char *p;

		if (!kv->key || strcmp(kv->key, ALLOC_ANNOTATION_NODE_UNIFORM) || !kv->value)
			continue;
		for (p = kv->value; *p;) {
			size_t len = strcspn(p, ",");
			const char *s = p;
			size_t l = len;

			while (l && (*s == ' ' || *s == '\t')) {
				s++;
				l--;
			}
			while (l && (s[l - 1] == ' ' || s[l - 1] == '\t'))
				l--;
			if (l && *n_ids < 64) {
				rc = uniform_id(ctx, driver, s, l, &ids[*n_ids]);
				if (rc && rc != -E2BIG)
					return rc;
				if (!rc)
					(*n_ids)++;
			}
			p += len;
			if (*p == ',')
				p++;
		}
	}
	return 0;
}

static int set_invalid(struct alloc_ctx *ctx, struct apool *p, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int set_invalid(struct alloc_ctx *ctx, struct apool *p, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	if (p->invalid)
		return 0;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	p->invalid = true;
	p->invalid_reason = alloc_mem_strdup(ctx->mem, buf);
	return p->invalid_reason ? 0 : -ENOMEM;
}

/* "a\0b" as a key in m (a hash key that cannot collide across the pair). */
static const char *pair_key(struct alloc_mem *m, const char *a, const char *b, size_t *len)
{
	size_t la = strlen(a), lb = strlen(b);
	char *k = alloc_mem_get(m, la + lb + 2);

	if (!k)
		return NULL;
	memcpy(k, a, la);
	memcpy(k + la + 1, b, lb);
	*len = la + lb + 1;
	return k;
}

/* Flatten the counter sets of a pool into ctx->counters, indexed by
 * (set, counter) in idx; a set named twice makes the pool invalid. */
static int build_counters(struct alloc_ctx *ctx, struct apool *p, const struct gpool *g,
			  struct alloc_hash *sets, struct alloc_hash *idx)
{
	for (size_t i = 0; i < g->n; i++) {
		const struct model_resource_slice_spec *s = spec_of(g->slices[i].obj);

		for (size_t j = 0; j < s->n_shared_counters; j++) {
			const struct model_counter_set *cs = &s->shared_counters[j];
			const char *set = cs->name ? cs->name : "";
			uint32_t old;
			int rc;

			if (alloc_hash_get(sets, set, strlen(set), &old)) {
				rc = set_invalid(ctx, p, "duplicate counter set name %s", set);
				if (rc)
					return rc;
				continue;
			}
			if (alloc_hash_put(sets, set, strlen(set), 0))
				return -ENOMEM;
			for (size_t k = 0; k < cs->n_counters; k++) {
				struct acounter *c = &ctx->counters[ctx->n_counters];
				const char *key;
				size_t len;

				c->set = set;
				c->name = cs->counters[k].name ? cs->counters[k].name : "";
				c->value = &cs->counters[k].value;
				key = pair_key(ctx->mem, c->set, c->name, &len);
				if (!key || alloc_hash_put(idx, key, len, (uint32_t)ctx->n_counters))
					return -ENOMEM;
				ctx->n_counters++;
			}
		}
	}
	return 0;
}

static int64_t find_counter(const struct alloc_hash *idx, const char *set, const char *name)
{
	size_t la = strlen(set), lb = strlen(name);
	char stack[256];
	uint32_t v;

	if (la + lb + 2 > sizeof(stack))
		return -1;      /* longer than any valid pair of DNS labels */
	memcpy(stack, set, la);
	stack[la] = '\0';
	memcpy(stack + la + 1, name, lb);
	return alloc_hash_get(idx, stack, la + lb + 1, &v) ? (int64_t)v : -1;
}

static int add_pool(struct alloc_ctx *ctx, struct gpool *g)
{
	struct apool *p = &ctx->pools[ctx->n_pools];
	struct alloc_hash sets, counters, names;
	size_t total = 0;
	int rc;

	memset(p, 0, sizeof(*p));
	p->driver = g->driver;
	p->name = g->name;
	p->generation = g->gen;
	qsort(g->slices, g->n, sizeof(*g->slices), cmp_slice_name);
	total = g->n;
	/* Complete iff the pool has resourceSliceCount slices at this
	 * generation, counting those that do not target this node too. */
	if (g->n && (int64_t)total != spec_of(g->slices[0].obj)->pool.resource_slice_count)
		p->incomplete = true;
	alloc_hash_init(&sets);
	alloc_hash_init(&counters);
	alloc_hash_init(&names);
	rc = build_counters(ctx, p, g, &sets, &counters);
	if (rc)
		goto out;
	p->dev_first = (uint32_t)ctx->n_devs;
	for (size_t i = 0; i < g->n; i++) {
		const struct model_object *o = g->slices[i].obj;
		const struct model_resource_slice_spec *s = spec_of(o);
		uint32_t uni[64];
		size_t n_uni;

		rc = slice_uniform(ctx, o, uni, &n_uni);
		if (rc)
			goto out;
		for (size_t j = 0; j < s->n_devices; j++) {
			const struct model_device *md = &s->devices[j];
			struct adev *d = &ctx->devs[ctx->n_devs];
			const char *dn = md->name ? md->name : "";
			uint32_t *ids;

			memset(d, 0, sizeof(*d));
			d->dev = md;
			d->slice = o;
			d->pool = (uint32_t)ctx->n_pools;
			if (g->slices[i].per_device)
				d->targets_node = device_targets(&ctx->node, md);
			else
				d->targets_node = g->slices[i].relevant;
			if (g->slices[i].per_device) {
				d->node_local = md->node_name != NULL;
				d->node_selector = md->node_selector;
			} else {
				d->node_local = s->node_name != NULL;
				d->node_selector = s->node_selector;
			}
			if (md->has_binds_to_node && md->binds_to_node)
				d->node_local = true;
			if (md->n_binding_conditions)
				p->has_binding_conditions = true;
			d->allow_multi = md->has_allow_multiple_allocations &&
					 md->allow_multiple_allocations;
			d->cap_first = (uint32_t)ctx->n_caps;
			ctx->n_caps += md->n_capacity;
			/* Duplicate names make the whole pool invalid. */
			{
				uint32_t old;

				if (alloc_hash_get(&names, dn, strlen(dn), &old)) {
					rc = set_invalid(ctx, p, "duplicate device name %s", dn);
					if (rc)
						goto out;
				} else if ((rc = alloc_hash_put(&names, dn, strlen(dn), 0))) {
					goto out;
				}
			}
			d->cons_first = (uint32_t)ctx->n_cons;
			for (size_t k = 0; k < md->n_consumes_counters; k++) {
				const struct model_counter_set *cc = &md->consumes_counters[k];

				for (size_t m = 0; m < cc->n_counters; m++) {
					const char *set = cc->name ? cc->name : "";
					const char *cn = cc->counters[m].name ? cc->counters[m].name : "";
					int64_t ci = find_counter(&counters, set, cn);

					if (ci < 0) {
						rc = set_invalid(ctx, p,
							"device %s consumes counter %s of a counter set "
							"the pool does not have", dn, cn);
						if (rc)
							goto out;
						continue;
					}
					ctx->cons[ctx->n_cons].counter = (uint32_t)ci;
					ctx->cons[ctx->n_cons].amount = &cc->counters[m].value;
					ctx->n_cons++;
					d->n_cons++;
				}
			}
			ids = NULL;
			for (size_t k = 0; k < n_uni; k++) {
				const struct auniform *u = &ctx->uni_attrs[uni[k]];

				if (device_has_attr(md, u->domain, u->id))
					continue;
				if (!ids) {
					ids = alloc_mem_get(ctx->mem, n_uni * sizeof(*ids));
					if (!ids) {
						rc = -ENOMEM;
						goto out;
					}
				}
				ids[d->n_uni++] = uni[k];
			}
			d->uni = ids;
			d->has_unknown = d->n_uni > 0;
			ctx->n_devs++;
		}
	}
	p->n_dev = (uint32_t)ctx->n_devs - p->dev_first;
	for (uint32_t k = p->dev_first; k < ctx->n_devs; k++) {
		ctx->n_target += ctx->devs[k].targets_node;
		ctx->n_shared_target += ctx->devs[k].targets_node && ctx->devs[k].allow_multi;
	}
	ctx->n_pools++;
	rc = 0;
out:
	alloc_hash_free(&sets);
	alloc_hash_free(&counters);
	alloc_hash_free(&names);
	return rc;
}

static int index_devices(struct alloc_ctx *ctx)
{
	for (size_t i = 0; i < ctx->n_devs; i++) {
		const struct adev *d = &ctx->devs[i];
		const struct apool *p = &ctx->pools[d->pool];
		const char *dn = d->dev->name ? d->dev->name : "";
		size_t a = strlen(p->driver), b = strlen(p->name), c = strlen(dn);
		char *key = alloc_mem_get(ctx->mem, a + b + c + 3);
		int rc;

		if (!key)
			return -ENOMEM;
		memcpy(key, p->driver, a);
		memcpy(key + a + 1, p->name, b);
		memcpy(key + a + b + 2, dn, c);
		rc = alloc_hash_put(&ctx->dev_index, key, a + b + c + 2, (uint32_t)i);
		if (rc)
			return rc;
	}
	return 0;
}

static int index_classes(struct alloc_ctx *ctx, const struct model_object *const *classes,
			 size_t n)
{
	ctx->classes = alloc_mem_get(ctx->mem, (n ? n : 1) * sizeof(*ctx->classes));
	if (!ctx->classes)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct model_object *o = classes[i];
		uint32_t old;
		int rc;

		if (!o || o->kind != MODEL_DEVICE_CLASS || !o->meta.name)
			continue;
		if (alloc_hash_get(&ctx->class_index, o->meta.name, strlen(o->meta.name), &old))
			continue;       /* the first one loaded wins */
		ctx->classes[ctx->n_classes].obj = o;
		rc = alloc_hash_put(&ctx->class_index, o->meta.name, strlen(o->meta.name),
				    (uint32_t)ctx->n_classes);
		if (rc)
			return rc;
		ctx->n_classes++;
	}
	return 0;
}

int alloc_ctx_new(const struct alloc_node *node, const struct model_object *const *slices,
		  size_t n_slices, const struct model_object *const *classes, size_t n_classes,
		  const struct alloc_options *opts, struct alloc_ctx **out, struct dt_err *err)
{
	struct alloc_ctx *ctx = NULL;
	struct gpool *gp = NULL;
	size_t n_gp = 0, n_dev = 0, n_cnt = 0, n_cons = 0;
	int rc;

	*out = NULL;
	if (!node || !node->name || !*node->name)
		return dt_err_set(err, -EINVAL, "allocator: the node needs a name");
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		goto oom;
	ctx->mem = alloc_mem_new();
	if (!ctx->mem)
		goto oom;
	ctx->node = *node;
	if (opts)
		ctx->opts = *opts;
	if (!ctx->opts.max_steps)
		ctx->opts.max_steps = ALLOC_DEFAULT_MAX_STEPS;
	if (!ctx->opts.share_id)
		ctx->opts.share_id = alloc_random_share_id;
	alloc_hash_init(&ctx->dev_index);
	alloc_hash_init(&ctx->class_index);
	alloc_hash_init(&ctx->sel_index);

	rc = gather(&ctx->node, slices, n_slices, &gp, &n_gp);
	if (rc)
		goto fail;
	for (size_t i = 0; i < n_gp; i++) {
		for (size_t j = 0; j < gp[i].n; j++) {
			const struct model_resource_slice_spec *s = spec_of(gp[i].slices[j].obj);

			n_dev += s->n_devices;
			for (size_t k = 0; k < s->n_shared_counters; k++)
				n_cnt += s->shared_counters[k].n_counters;
			for (size_t k = 0; k < s->n_devices; k++)
				for (size_t m = 0; m < s->devices[k].n_consumes_counters; m++)
					n_cons += s->devices[k].consumes_counters[m].n_counters;
		}
	}
	ctx->pools = alloc_mem_get(ctx->mem, (n_gp + 1) * sizeof(*ctx->pools));
	ctx->devs = alloc_mem_get(ctx->mem, (n_dev + 1) * sizeof(*ctx->devs));
	ctx->counters = alloc_mem_get(ctx->mem, (n_cnt + 1) * sizeof(*ctx->counters));
	ctx->cons = alloc_mem_get(ctx->mem, (n_cons + 1) * sizeof(*ctx->cons));
	if (!ctx->pools || !ctx->devs || !ctx->counters || !ctx->cons)
		goto oom;
	/* Search order: pools by (driver, name), those with binding
	 * conditions last; devices are laid out in that order. */
	if (n_gp > 1)
		qsort(gp, n_gp, sizeof(*gp), cmp_gpool);
	for (size_t i = 0; i < n_gp; i++) {
		if (gp[i].obsolete)
			continue;       /* a newer generation is being published */
		rc = add_pool(ctx, &gp[i]);
		if (rc)
			goto fail;
	}
	rc = index_classes(ctx, classes, n_classes);
	if (rc)
		goto fail;
	rc = index_devices(ctx);
	if (rc)
		goto fail;
	rc = alloc_taint_rules_apply(ctx);
	if (rc)
		goto fail;
	for (size_t i = 0; i < n_gp; i++)
		free(gp[i].slices);
	free(gp);
	*out = ctx;
	return 0;
oom:
	rc = -ENOMEM;
fail:
	for (size_t i = 0; i < n_gp; i++)
		free(gp[i].slices);
	free(gp);
	alloc_ctx_free(ctx);
	return dt_err_set(err, rc, "allocator: %s", rc == -ENOMEM ? "out of memory" :
			  "cannot gather the node's resource pools");
}

void alloc_ctx_free(struct alloc_ctx *ctx)
{
	if (!ctx)
		return;
	alloc_hash_free(&ctx->dev_index);
	alloc_hash_free(&ctx->class_index);
	alloc_hash_free(&ctx->sel_index);
	alloc_state_free(ctx->scratch_state);
	alloc_mem_free(ctx->scratch);
	for (size_t i = 0; i < ctx->n_sels; i++) {
		free(ctx->sels[i].results);
		alloc_ctx_program_free(ctx, ctx->sels[i].prog);
	}
	free(ctx->sels);
	alloc_mem_free(ctx->mem);
	free(ctx);
}

size_t alloc_ctx_device_count(const struct alloc_ctx *ctx)
{
	return ctx ? ctx->n_devs : 0;
}
