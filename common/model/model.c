/* model.c - the model set: its arena, its object list, lookups and the
 * table of kinds.
 *
 * The arena is a list of chunks that only grows; every string and array an
 * object points to comes from it, so freeing a set is freeing its chunks.
 * Output trees (opaque parameters, EC2NodeClass specs) are copied into a
 * doc_arena that the set's arena also owns. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cel_value.h"
#include "escape.h"
#include "hash.h"
#include "model.h"
#include "model_internal.h"
#include "names.h"

#define ARENA_CHUNK (64u << 10)
#define ARENA_ALIGN 16u

struct arena_chunk {
	struct arena_chunk *next;
	size_t used, size;
	_Alignas(16) unsigned char data[];
};

/* Open-addressing hash of (kind, namespace, name) -> object index + 1, for
 * model_set_find. The objects added since the last find are indexed on the
 * next one; those still without a name then wait in pending and are tried
 * again whenever the set has grown. The table is rebuilt only to grow. */
struct find_index {
	size_t *slots;                  /* 0 = empty */
	size_t cap;                     /* power of two, > 2 * objects */
	size_t built_for;               /* objects before this one were seen */
	size_t *pending;                /* seen without a name; malloc'd */
	size_t n_pending, cap_pending;
};

/* How many names each generateName (kind, namespace, prefix; by hash) has
 * been given, so that the n-th object of a prefix gets the same name
 * whatever else the input holds. Open addressing; keys 0 = empty. */
struct gen_counts {
	uint64_t *keys;                 /* malloc'd, with n_next */
	uint32_t *n_next;
	size_t cap, n;
};

struct model_arena {
	struct arena_chunk *chunks;
	struct doc_arena *docs;         /* deep copies of free-form subtrees */
	struct find_index index;
	struct gen_counts gen;
	size_t n_by_kind[MODEL_KIND_COUNT];
};

static const struct {
	const char *api_version;
	const char *kind;
	bool namespaced;
} kinds[MODEL_KIND_COUNT] = {
	[MODEL_DEVICE_CLASS]            = { "resource.k8s.io/v1", "DeviceClass", false },
	[MODEL_RESOURCE_SLICE]          = { "resource.k8s.io/v1", "ResourceSlice", false },
	[MODEL_RESOURCE_CLAIM]          = { "resource.k8s.io/v1", "ResourceClaim", true },
	[MODEL_RESOURCE_CLAIM_TEMPLATE] = { "resource.k8s.io/v1", "ResourceClaimTemplate", true },
	[MODEL_DEVICE_TAINT_RULE]       = { "resource.k8s.io/v1", "DeviceTaintRule", false },
	[MODEL_POD]                     = { "v1", "Pod", true },
	[MODEL_NODE]                    = { "v1", "Node", false },
	[MODEL_DEPLOYMENT]              = { "apps/v1", "Deployment", true },
	[MODEL_REPLICA_SET]             = { "apps/v1", "ReplicaSet", true },
	[MODEL_STATEFUL_SET]            = { "apps/v1", "StatefulSet", true },
	[MODEL_JOB]                     = { "batch/v1", "Job", true },
	[MODEL_DAEMON_SET]              = { "apps/v1", "DaemonSet", true },
	[MODEL_NODE_POOL]               = { "karpenter.sh/v1", "NodePool", false },
	[MODEL_NODE_CLAIM]              = { "karpenter.sh/v1", "NodeClaim", false },
	[MODEL_EC2_NODE_CLASS]          = { "karpenter.k8s.aws/v1", "EC2NodeClass", false },
	[MODEL_NODE_OVERLAY]            = { "karpenter.sh/v1alpha1", "NodeOverlay", false },
	[MODEL_POD_GROUP]               = { "scheduling.k8s.io/v1beta1", "PodGroup", true },
};

const char *model_kind_name(enum model_kind k)
{
	if ((unsigned)k >= MODEL_KIND_COUNT)
		return "?";
	return kinds[k].kind;
}

const char *model_kind_api_version(enum model_kind k)
{
	if ((unsigned)k >= MODEL_KIND_COUNT)
		return "?";
	return kinds[k].api_version;
}

bool model_kind_namespaced(enum model_kind k)
{
	return (unsigned)k < MODEL_KIND_COUNT && kinds[k].namespaced;
}

int model_kind_lookup(const char *api_version, const char *kind)
{
	if (!api_version || !kind)
		return -1;
	for (int k = 0; k < MODEL_KIND_COUNT; k++)
		if (!strcmp(kinds[k].api_version, api_version) && !strcmp(kinds[k].kind, kind))
			return k;
	return -1;
}

/* ---- The arena ---- */

static void *arena_alloc(struct model_arena *a, size_t size)
{
	struct arena_chunk *c = a->chunks;
	size_t off;

	if (size == 0)
		size = 1;
	if (size > SIZE_MAX - ARENA_CHUNK)
		return NULL;
	off = c ? (c->used + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1) : 0;
	if (!c || off + size > c->size) {
		size_t cap = size > ARENA_CHUNK ? size : ARENA_CHUNK;

		c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->size = cap;
		c->used = 0;
		c->next = a->chunks;
		a->chunks = c;
		off = 0;
	}
	c->used = off + size;
	memset(c->data + off, 0, size);
	return c->data + off;
}

void *model_set_alloc(struct model_set *s, size_t size)
{
	return arena_alloc(s->arena, size);
}

void *model_set_calloc(struct model_set *s, size_t n, size_t size)
{
	if (n == 0 || size == 0 || n > SIZE_MAX / size)
		return NULL;
	return arena_alloc(s->arena, n * size);
}

char *model_set_strndup(struct model_set *s, const char *str, size_t len)
{
	char *p;

	if (!str)
		return NULL;
	if (len == SIZE_MAX)
		return NULL;
	p = arena_alloc(s->arena, len + 1);
	if (!p)
		return NULL;
	memcpy(p, str, len);
	p[len] = '\0';
	return p;
}

char *model_set_strdup(struct model_set *s, const char *str)
{
	return str ? model_set_strndup(s, str, strlen(str)) : NULL;
}

struct doc_arena *model_set_doc_arena(struct model_set *s)
{
	if (!s->arena->docs)
		s->arena->docs = doc_arena_new();
	return s->arena->docs;
}

/* ---- The set ---- */

struct model_set *model_set_new(void)
{
	struct model_set *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->arena = calloc(1, sizeof(*s->arena));
	if (!s->arena) {
		free(s);
		return NULL;
	}
	dt_diags_init(&s->warnings);
	return s;
}

void model_set_free(struct model_set *s)
{
	struct arena_chunk *c, *next;

	if (!s)
		return;
	for (c = s->arena->chunks; c; c = next) {
		next = c->next;
		free(c);
	}
	if (s->arena->docs)
		doc_arena_free(s->arena->docs);
	free(s->arena->index.slots);
	free(s->arena->index.pending);
	free(s->arena->gen.keys);
	free(s->arena->gen.n_next);
	free(s->arena);
	free(s->objects);
	dt_diags_free(&s->warnings);
	free(s);
}

struct model_object *model_set_add(struct model_set *s, enum model_kind k)
{
	struct model_object *o;

	if ((unsigned)k >= MODEL_KIND_COUNT)
		return NULL;
	if (DT_GROW(s->objects, s->cap_objects, s->n_objects + 1))
		return NULL;
	o = model_set_alloc(s, sizeof(*o));
	if (!o)
		return NULL;
	o->kind = k;
	o->index = s->n_objects;
	s->arena->n_by_kind[k]++;
	o->src.item = -1;
	s->objects[s->n_objects++] = o;
	return o;
}

size_t model_set_count(const struct model_set *s, enum model_kind k)
{
	return (unsigned)k < MODEL_KIND_COUNT ? s->arena->n_by_kind[k] : 0;
}

static bool str_eq(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

static const char *find_ns(enum model_kind k, const char *ns)
{
	if (!model_kind_namespaced(k))
		return "";
	return ns && ns[0] ? ns : "default";
}

/* FNV-1a over kind, namespace and name. */
static size_t find_hash(enum model_kind k, const char *ns, const char *name)
{
	uint64_t h = hash_fnv1a(HASH_FNV_OFFSET ^ (uint64_t)k, ns, strlen(ns));

	h = hash_fnv1a(h, "/", 1);
	return (size_t)hash_fnv1a(h, name, strlen(name));
}

static bool find_match(const struct model_object *o, enum model_kind k, const char *ns,
		       const char *name)
{
	return o->kind == k && str_eq(o->meta.name, name) &&
	       !strcmp(find_ns(k, o->meta.ns), ns);
}

/* Index object i: the first one loaded of an identity wins, whatever order
 * the objects are indexed in. */
static void find_index_put(struct model_set *s, size_t i)
{
	struct find_index *ix = &s->arena->index;
	const struct model_object *o = s->objects[i];
	const char *ns = find_ns(o->kind, o->meta.ns);
	size_t h = find_hash(o->kind, ns, o->meta.name) & (ix->cap - 1);

	for (; ix->slots[h]; h = (h + 1) & (ix->cap - 1)) {
		if (find_match(s->objects[ix->slots[h] - 1], o->kind, ns, o->meta.name)) {
			if (ix->slots[h] > i + 1)
				ix->slots[h] = i + 1;
			return;
		}
	}
	ix->slots[h] = i + 1;
}

/* Object i seen for the first time: indexed, or pending while unnamed. */
static int find_index_see(struct model_set *s, size_t i)
{
	struct find_index *ix = &s->arena->index;

	if (s->objects[i]->meta.name) {
		find_index_put(s, i);
		return 0;
	}
	if (DT_GROW(ix->pending, ix->cap_pending, ix->n_pending + 1))
		return -ENOMEM;
	ix->pending[ix->n_pending++] = i;
	return 0;
}

/* Bring the index up to date with the set (it has grown): the pending
 * objects that have a name now, then the new ones; or all of them again
 * in a larger table. */
static int find_index_build(struct model_set *s)
{
	struct find_index *ix = &s->arena->index;
	size_t cap = 16, from = ix->built_for, kept = 0;

	if (!ix->slots || ix->cap < 2 * s->n_objects + 1) {
		while (cap < 2 * s->n_objects + 1)
			cap *= 2;
		free(ix->slots);
		ix->slots = calloc(cap, sizeof(*ix->slots));
		ix->cap = ix->slots ? cap : 0;
		ix->built_for = ix->n_pending = 0;
		if (!ix->slots)
			return -ENOMEM;
		from = 0;
	}
	for (size_t k = 0; k < ix->n_pending; k++) {
		if (s->objects[ix->pending[k]]->meta.name)
			find_index_put(s, ix->pending[k]);
		else
			ix->pending[kept++] = ix->pending[k];
	}
	ix->n_pending = kept;
	for (size_t i = from; i < s->n_objects; i++) {
		if (find_index_see(s, i)) {
			free(ix->slots);        /* start over next time */
			ix->slots = NULL;
			ix->cap = ix->built_for = ix->n_pending = 0;
			return -ENOMEM;
		}
	}
	ix->built_for = s->n_objects;
	return 0;
}

struct model_object *model_set_find(const struct model_set *cs, enum model_kind k,
				    const char *ns, const char *name)
{
	/* The index is a cache: building it does not change the set. */
	struct model_set *s = (struct model_set *)cs;
	struct find_index *ix = &s->arena->index;
	size_t h;

	if (!name)
		return NULL;
	ns = find_ns(k, ns);
	if ((!ix->slots || ix->built_for != s->n_objects) && find_index_build(s)) {
		for (size_t i = 0; i < s->n_objects; i++)    /* no memory: scan */
			if (find_match(s->objects[i], k, ns, name))
				return s->objects[i];
		return NULL;
	}
	h = find_hash(k, ns, name) & (ix->cap - 1);
	for (; ix->slots[h]; h = (h + 1) & (ix->cap - 1)) {
		struct model_object *o = s->objects[ix->slots[h] - 1];

		if (find_match(o, k, ns, name))
			return o;
	}
	return NULL;
}

/* ---- Generated names ---- */

/* The seed of generated names' hash: not FNV's offset basis (a digit
 * short), kept so that the names a manifest generates stay the same. */
#define GENERATED_NAME_SEED 1469598103934665603ull

/* The counter of key, created at 0; NULL when out of memory. */
static uint32_t *gen_counter(struct gen_counts *g, uint64_t key)
{
	size_t h;

	key |= 1;                       /* never the empty key */
	if (2 * (g->n + 1) > g->cap) {
		size_t cap = g->cap ? 2 * g->cap : 64;
		uint64_t *keys = calloc(cap, sizeof(*keys));
		uint32_t *n_next = calloc(cap, sizeof(*n_next));

		if (!keys || !n_next) {
			free(keys);
			free(n_next);
			return NULL;
		}
		for (size_t i = 0; i < g->cap; i++) {
			if (!g->keys[i])
				continue;
			for (h = g->keys[i] & (cap - 1); keys[h]; h = (h + 1) & (cap - 1))
				;
			keys[h] = g->keys[i];
			n_next[h] = g->n_next[i];
		}
		free(g->keys);
		free(g->n_next);
		g->keys = keys;
		g->n_next = n_next;
		g->cap = cap;
	}
	for (h = key & (g->cap - 1); g->keys[h] && g->keys[h] != key; h = (h + 1) & (g->cap - 1))
		;
	if (!g->keys[h]) {
		g->keys[h] = key;
		g->n++;
	}
	return &g->n_next[h];
}

int model_set_generate_name(struct model_set *s, struct model_object *o)
{
	const char *ns = find_ns(o->kind, o->meta.ns), *prefix = o->meta.generate_name;
	size_t len = strnlen(prefix, NAMES_GENERATED_BASE_MAX);
	uint64_t key = hash_field(hash_field(hash_field(GENERATED_NAME_SEED,
							model_kind_name(o->kind)), ns), prefix);
	uint32_t *next = gen_counter(&s->arena->gen, key);
	char *name = model_set_alloc(s, len + NAMES_SUFFIX_LEN + 1);

	if (!next || !name)
		return -ENOMEM;
	memcpy(name, prefix, len);
	/* A name some object already has is drawn again, as the API server
	 * retries a create whose generated name exists; 27^5 names make a
	 * second draw rare, and UINT32_MAX draws cannot all collide. */
	do {
		char num[16];

		snprintf(num, sizeof(num), "%u", (unsigned)(*next)++);
		names_suffix(hash_field(key, num), name + len);
	} while (model_set_find(s, o->kind, ns, name) && *next);
	o->meta.name = name;
	return 0;
}

struct model_object *model_set_next(const struct model_set *s, enum model_kind k,
				    const struct model_object *prev)
{
	size_t i = 0;

	if (prev) {
		i = prev->index + 1;
		if (prev->index >= s->n_objects || s->objects[prev->index] != prev)
			return NULL;    /* not an object of this set */
	}
	for (; i < s->n_objects; i++)
		if (s->objects[i]->kind == k)
			return s->objects[i];
	return NULL;
}

int model_split_qualified(struct model_set *s, const char *name, const char *default_domain,
			  const char **domain, const char **id)
{
	const char *slash = name ? strchr(name, '/') : NULL;

	if (!name) {
		*domain = default_domain;
		*id = NULL;
		return 0;
	}
	if (!slash) {
		*domain = default_domain ? default_domain : "";
		*id = name;
		return 0;
	}
	*domain = model_set_strndup(s, name, (size_t)(slash - name));
	if (!*domain)
		return -ENOMEM;
	*id = slash + 1;
	return 0;
}

/* s as a message may show it: control bytes escaped (QA-91), so that a
 * name the validator refuses cannot rewrite the terminal it is shown on. */
static const char *shown(const char *s, char *buf, size_t size)
{
	dt_quote_buf(buf, size, s, strlen(s), SB_QUOTE_BARE | SB_QUOTE_NAMED | SB_QUOTE_DEL);
	return buf;
}

void model_object_describe(const struct model_object *o, char *buf, size_t size)
{
	const char *name = o->meta.name ? o->meta.name : "";
	char n[288], ns[288];

	if (!name[0] && o->meta.generate_name)
		name = o->meta.generate_name;
	if (model_kind_namespaced(o->kind))
		snprintf(buf, size, "%s %s/%s", model_kind_name(o->kind),
			 shown(o->meta.ns ? o->meta.ns : "default", ns, sizeof(ns)),
			 shown(name, n, sizeof(n)));
	else
		snprintf(buf, size, "%s %s", model_kind_name(o->kind), shown(name, n, sizeof(n)));
}

size_t model_attr_n_values(const struct model_attribute *a)
{
	return cel_attr_is_list(a->type) ? a->n_items : 1;
}

struct model_attr_item model_attr_item_at(const struct model_attribute *a, size_t i)
{
	struct model_attr_item it = { 0, "", 0 };
	enum cel_attr_kind k = model_attr_elem_kind(a->type);
	const struct model_attr_value *v = NULL;

	if (cel_attr_is_list(a->type)) {
		if (i >= a->n_items)
			return it;
		v = &a->items[i];
	}
	if (k == CEL_ATTR_INT)
		it.i = v ? v->v.i : a->v.i;
	else if (k == CEL_ATTR_BOOL)
		it.i = v ? v->v.b : a->v.b;
	else if (v ? v->v.str.s != NULL : a->v.str.s != NULL) {
		it.s = v ? v->v.str.s : a->v.str.s;
		it.len = v ? v->v.str.len : a->v.str.len;
	}
	return it;
}

enum cel_attr_kind model_attr_elem_kind(enum cel_attr_kind k)
{
	return cel_attr_is_list(k) ? (enum cel_attr_kind)(k - CEL_ATTR_INTS) : k;
}

/* A list attribute as a CEL list of its element type (in s's memory). */
static int attr_cel_list(struct model_set *s, struct model_attribute *a)
{
	struct cel_list *l = model_set_calloc(s, 1, sizeof(*l));
	struct cel_value *items = a->n_items ? model_set_calloc(s, a->n_items, sizeof(*items))
					     : NULL;

	if (!l || (a->n_items && !items))
		return -ENOMEM;
	for (size_t i = 0; i < a->n_items; i++) {
		const struct model_attr_value *v = &a->items[i];

		switch (a->type) {
		case CEL_ATTR_INTS:
			items[i] = cel_int(v->v.i);
			break;
		case CEL_ATTR_BOOLS:
			items[i] = cel_bool(v->v.b);
			break;
		case CEL_ATTR_STRINGS:
			items[i] = cel_string(v->v.str.s ? v->v.str.s : "", v->v.str.len);
			break;
		default:
			items[i] = cel_object(&cel_semver_type, &v->version);
			break;
		}
	}
	l->items = items;
	l->len = a->n_items;
	a->cel_list = l;
	return 0;
}

/* Point the view's names at cel_intern's copies, so that compiled
 * selectors find them by pointer; false (names left as they are) when the
 * table refuses one. */
static bool intern_names(struct cel_device_attr *attrs, size_t na,
			 struct cel_device_capacity *caps, size_t nc)
{
	for (size_t i = 0; i < na; i++) {
		const char *dom = cel_intern(attrs[i].domain), *id = cel_intern(attrs[i].id);

		if (!dom || !id)
			return false;
		attrs[i].domain = dom;
		attrs[i].id = id;
	}
	for (size_t i = 0; i < nc; i++) {
		const char *dom = cel_intern(caps[i].domain), *id = cel_intern(caps[i].id);

		if (!dom || !id)
			return false;
		caps[i].domain = dom;
		caps[i].id = id;
	}
	return true;
}

int model_device_cel_init(struct model_set *s, const char *driver, struct model_device *d)
{
	struct cel_device_attr *attrs = NULL;
	struct cel_device_capacity *caps = NULL;

	for (size_t i = 0; i < d->n_attributes; i++) {
		struct model_attribute *a = &d->attributes[i];

		if (model_split_qualified(s, a->name, driver, &a->domain, &a->id))
			return -ENOMEM;
		if (cel_attr_is_list(a->type) && !a->cel_list && attr_cel_list(s, a) < 0)
			return -ENOMEM;
	}
	for (size_t i = 0; i < d->n_capacity; i++) {
		struct model_capacity *c = &d->capacity[i];

		if (model_split_qualified(s, c->name, driver, &c->domain, &c->id))
			return -ENOMEM;
	}
	if (d->n_attributes) {
		attrs = model_set_calloc(s, d->n_attributes, sizeof(*attrs));
		if (!attrs)
			return -ENOMEM;
	}
	if (d->n_capacity) {
		caps = model_set_calloc(s, d->n_capacity, sizeof(*caps));
		if (!caps)
			return -ENOMEM;
	}
	for (size_t i = 0; i < d->n_attributes; i++) {
		const struct model_attribute *a = &d->attributes[i];

		attrs[i].domain = a->domain;
		attrs[i].id = a->id;
		attrs[i].kind = a->type;
		switch (a->type) {
		case CEL_ATTR_INT:
			attrs[i].v.i = a->v.i;
			break;
		case CEL_ATTR_BOOL:
			attrs[i].v.b = a->v.b;
			break;
		case CEL_ATTR_STRING:
			attrs[i].v.str.s = a->v.str.s;
			attrs[i].v.str.len = a->v.str.len;
			break;
		case CEL_ATTR_VERSION:
			attrs[i].v.version = &a->version;
			break;
		default:
			attrs[i].v.list = a->cel_list;
			break;
		}
	}
	for (size_t i = 0; i < d->n_capacity; i++) {
		caps[i].domain = d->capacity[i].domain;
		caps[i].id = d->capacity[i].id;
		caps[i].value = &d->capacity[i].value;
	}
	d->cel.interned = intern_names(attrs, d->n_attributes, caps, d->n_capacity);
	d->cel.driver = driver;
	d->cel.attrs = attrs;
	d->cel.n_attrs = d->n_attributes;
	d->cel.capacity = caps;
	d->cel.n_capacity = d->n_capacity;
	d->cel.allow_multiple_allocations = d->has_allow_multiple_allocations &&
					    d->allow_multiple_allocations;
	return 0;
}
