/* doc_tree.c - the document tree itself: reading and building trees, deep
 * copies and structural equality. Its nodes live in doc_arena.c's arena;
 * the readers that build trees from text are doc_yaml.c and doc_json.c. */
#include "doc_impl.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Reading ---- */

const struct doc_node *doc_get(const struct doc_node *map, const char *key)
{
	size_t klen;

	if (!map || map->kind != DOC_MAP || !key)
		return NULL;
	klen = strlen(key);
	for (size_t i = 0; i < map->u.map.n; i++) {
		const struct doc_node *k = map->u.map.pairs[i].key;

		if (k->text_len == klen && memcmp(k->text, key, klen) == 0)
			return map->u.map.pairs[i].value;
	}
	return NULL;
}

const struct doc_node *doc_get_path(const struct doc_node *n, ...)
{
	const char *key;
	va_list ap;

	va_start(ap, n);
	while (n && (key = va_arg(ap, const char *)) != NULL)
		n = doc_get(n, key);
	va_end(ap);
	return n;
}

const char *doc_str(const struct doc_node *n)
{
	return n && n->kind == DOC_STRING ? n->text : NULL;
}

const char *doc_kind_name(enum doc_kind k)
{
	switch (k) {
	case DOC_NULL:
		return "null";
	case DOC_BOOL:
		return "boolean";
	case DOC_INT:
		return "integer";
	case DOC_FLOAT:
		return "number";
	case DOC_STRING:
		return "string";
	case DOC_SEQ:
		return "sequence";
	case DOC_MAP:
		return "map";
	}
	return "unknown";
}

/* ---- Building ---- */

static struct doc_node *new_scalar(struct doc_arena *a, enum doc_kind kind, const char *text)
{
	struct doc_node *n = doc_node_alloc(a, kind, 0, 0);

	if (!n)
		return NULL;
	n->text = doc_arena_strdup(a, text);
	if (!n->text)
		return NULL;
	n->text_len = strlen(text);
	return n;
}

struct doc_node *doc_new_null(struct doc_arena *a)
{
	return new_scalar(a, DOC_NULL, "null");
}

struct doc_node *doc_new_bool(struct doc_arena *a, bool b)
{
	struct doc_node *n = new_scalar(a, DOC_BOOL, b ? "true" : "false");

	if (n)
		n->u.b = b;
	return n;
}

struct doc_node *doc_new_int(struct doc_arena *a, int64_t i)
{
	char buf[32];
	struct doc_node *n;

	snprintf(buf, sizeof(buf), "%lld", (long long)i);
	n = new_scalar(a, DOC_INT, buf);
	if (n)
		n->u.i = i;
	return n;
}

struct doc_node *doc_new_float(struct doc_arena *a, double f)
{
	char buf[DOC_NUM_BUF];
	struct doc_node *n;

	if (doc_fmt_float_json(f, buf) < 0)
		doc_fmt_float_yaml(f, false, buf);
	n = new_scalar(a, DOC_FLOAT, buf);
	if (n)
		n->u.f = f;
	return n;
}

struct doc_node *doc_new_string(struct doc_arena *a, const char *s)
{
	struct doc_node *n = new_scalar(a, DOC_STRING, s ? s : "");

	if (n)
		n->quoted = true;
	return n;
}

struct doc_node *doc_new_seq(struct doc_arena *a)
{
	return doc_node_alloc(a, DOC_SEQ, 0, 0);
}

struct doc_node *doc_new_map(struct doc_arena *a)
{
	return doc_node_alloc(a, DOC_MAP, 0, 0);
}

/* Makes room for one more entry of elem bytes in *arr holding n. */
static int grow(struct doc_arena *a, void **arr, size_t n, size_t elem)
{
	size_t cap = doc_array_cap(n);
	void *p;

	if (*arr && n < cap)
		return 0;
	if (*arr)
		cap *= 2;
	p = doc_arena_alloc(a, cap * elem);
	if (!p)
		return -ENOMEM;
	if (n)
		memcpy(p, *arr, n * elem);
	*arr = p;
	return 0;
}

int doc_seq_push(struct doc_arena *a, struct doc_node *seq, struct doc_node *v)
{
	if (!seq || !v || seq->kind != DOC_SEQ)
		return -ENOMEM;
	if (grow(a, (void **)&seq->u.seq.items, seq->u.seq.n, sizeof(*seq->u.seq.items)) < 0)
		return -ENOMEM;
	seq->u.seq.items[seq->u.seq.n++] = v;
	return 0;
}

int doc_map_set(struct doc_arena *a, struct doc_node *map, const char *key,
		struct doc_node *v)
{
	struct doc_node *k;
	size_t klen;

	if (!map || !v || !key || map->kind != DOC_MAP)
		return -ENOMEM;
	klen = strlen(key);
	for (size_t i = 0; i < map->u.map.n; i++) {
		k = map->u.map.pairs[i].key;
		if (k->text_len == klen && memcmp(k->text, key, klen) == 0) {
			map->u.map.pairs[i].value = v;     /* setting a key again replaces it */
			return 0;
		}
	}
	k = doc_new_string(a, key);
	if (!k)
		return -ENOMEM;
	if (grow(a, (void **)&map->u.map.pairs, map->u.map.n, sizeof(*map->u.map.pairs)) < 0)
		return -ENOMEM;
	map->u.map.pairs[map->u.map.n].key = k;
	map->u.map.pairs[map->u.map.n].value = v;
	map->u.map.n++;
	return 0;
}

/* ---- Copying ---- */

static struct doc_node *clone_rec(struct doc_arena *a, const struct doc_node *n, int depth)
{
	struct doc_node *c;

	if (!n || depth > 4 * DOC_MAX_DEPTH)
		return NULL;
	c = doc_arena_alloc(a, sizeof(*c));
	if (!c)
		return NULL;
	*c = *n;
	if (n->text) {
		c->text = doc_arena_memdup(a, n->text, n->text_len);
		if (!c->text)
			return NULL;
	}
	if (n->kind == DOC_SEQ) {
		size_t cnt = n->u.seq.n;

		c->u.seq.items = cnt ? doc_arena_alloc(a, doc_array_cap(cnt) * sizeof(*c->u.seq.items))
				     : NULL;
		if (cnt && !c->u.seq.items)
			return NULL;
		for (size_t i = 0; i < cnt; i++) {
			c->u.seq.items[i] = clone_rec(a, n->u.seq.items[i], depth + 1);
			if (!c->u.seq.items[i])
				return NULL;
		}
	} else if (n->kind == DOC_MAP) {
		size_t cnt = n->u.map.n;

		c->u.map.pairs = cnt ? doc_arena_alloc(a, doc_array_cap(cnt) * sizeof(*c->u.map.pairs))
				     : NULL;
		if (cnt && !c->u.map.pairs)
			return NULL;
		for (size_t i = 0; i < cnt; i++) {
			c->u.map.pairs[i].key = clone_rec(a, n->u.map.pairs[i].key, depth + 1);
			c->u.map.pairs[i].value = clone_rec(a, n->u.map.pairs[i].value, depth + 1);
			if (!c->u.map.pairs[i].key || !c->u.map.pairs[i].value)
				return NULL;
		}
	}
	return c;
}

struct doc_node *doc_clone(struct doc_arena *a, const struct doc_node *n)
{
	return clone_rec(a, n, 0);
}

/* ---- Equality ---- */

static bool num_equal(const struct doc_node *x, const struct doc_node *y)
{
	if (x->kind == DOC_INT && y->kind == DOC_INT)
		return x->u.i == y->u.i;
	if (x->kind == DOC_FLOAT && y->kind == DOC_FLOAT)
		return x->u.f == y->u.f || (isnan(x->u.f) && isnan(y->u.f));
	if (x->kind == DOC_FLOAT) {
		const struct doc_node *t = x;

		x = y;
		y = t;
	}
	/* x is the integer, y the float: equal when the float is exactly that
	 * integer. Doubles of magnitude 2^63 and above are never an int64. */
	if (!(y->u.f >= -9223372036854775808.0 && y->u.f < 9223372036854775808.0))
		return false;
	return (double)(int64_t)y->u.f == y->u.f && (int64_t)y->u.f == x->u.i;
}

static bool is_num(const struct doc_node *n)
{
	return n->kind == DOC_INT || n->kind == DOC_FLOAT;
}

static bool equal_rec(const struct doc_node *x, const struct doc_node *y, int depth);

static const struct doc_pair *find_pair(const struct doc_node *map, const struct doc_node *key)
{
	for (size_t i = 0; i < map->u.map.n; i++)
		if (doc_key_eq(map->u.map.pairs[i].key, key))
			return &map->u.map.pairs[i];
	return NULL;
}

static int pair_ptr_cmp(const void *a, const void *b)
{
	const struct doc_pair *x = *(const struct doc_pair *const *)a;
	const struct doc_pair *y = *(const struct doc_pair *const *)b;

	return doc_key_cmp(x->key, y->key);
}

/* Big maps compare by sorting both sides' pairs by key. */
static int map_equal_sorted(const struct doc_node *x, const struct doc_node *y, int depth)
{
	size_t n = x->u.map.n;
	const struct doc_pair **px = malloc(2 * n * sizeof(*px)), **py;
	int eq = 1;

	if (!px)
		return -ENOMEM;
	py = px + n;
	for (size_t i = 0; i < n; i++) {
		px[i] = &x->u.map.pairs[i];
		py[i] = &y->u.map.pairs[i];
	}
	qsort(px, n, sizeof(*px), pair_ptr_cmp);
	qsort(py, n, sizeof(*py), pair_ptr_cmp);
	for (size_t i = 0; i < n && eq; i++)
		eq = doc_key_eq(px[i]->key, py[i]->key) &&
		     equal_rec(px[i]->value, py[i]->value, depth + 1);
	free(px);
	return eq;
}

static bool map_equal(const struct doc_node *x, const struct doc_node *y, int depth)
{
	if (x->u.map.n != y->u.map.n)
		return false;
	if (x->u.map.n > 16) {
		int eq = map_equal_sorted(x, y, depth);

		if (eq >= 0)
			return eq;
	}
	for (size_t i = 0; i < x->u.map.n; i++) {
		const struct doc_pair *p = find_pair(y, x->u.map.pairs[i].key);

		if (!p || !equal_rec(x->u.map.pairs[i].value, p->value, depth + 1))
			return false;
	}
	return true;
}

static bool equal_rec(const struct doc_node *x, const struct doc_node *y, int depth)
{
	if (x == y)
		return true;
	if (!x || !y || depth > 4 * DOC_MAX_DEPTH)
		return false;
	if (is_num(x) && is_num(y))
		return num_equal(x, y);
	if (x->kind != y->kind)
		return false;
	switch (x->kind) {
	case DOC_NULL:
		return true;
	case DOC_BOOL:
		return x->u.b == y->u.b;
	case DOC_STRING:
		return doc_key_eq(x, y);
	case DOC_SEQ:
		if (x->u.seq.n != y->u.seq.n)
			return false;
		for (size_t i = 0; i < x->u.seq.n; i++)
			if (!equal_rec(x->u.seq.items[i], y->u.seq.items[i], depth + 1))
				return false;
		return true;
	case DOC_MAP:
		return map_equal(x, y, depth);
	default:
		return false;
	}
}

bool doc_equal(const struct doc_node *x, const struct doc_node *y)
{
	return equal_rec(x, y, 0);
}
