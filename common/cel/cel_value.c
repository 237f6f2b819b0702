/* cel_value.c - CEL values: the evaluation arena, constructors, equality
 * and ordering, map access, UTF-8 helpers, and the Quantity and Semver
 * object types that the `device` variable yields. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cel_ast.h"
#include "quantity.h"
#include "semver.h"
#include "strbuf.h"
#include "utf8.h"

/* ---- arena ---- */

struct cel_arena_block {
	struct cel_arena_block *next;
	size_t size;
	/* data follows, 16-byte aligned */
};

#define ARENA_ALIGN 16
#define ARENA_BLOCK_MIN (16u << 10)

void cel_arena_init(struct cel_arena *a, void *first, size_t first_size, size_t limit)
{
	memset(a, 0, sizeof(*a));
	a->first = first;
	a->first_size = first_size;
	a->cur = first;
	a->end = first ? (char *)first + first_size : NULL;
	a->limit = limit;
}

void *cel_arena_alloc(struct cel_arena *a, size_t n)
{
	uintptr_t p;
	struct cel_arena_block *b;
	size_t bsize;

	if (n == 0)
		n = 1;
	if (n > a->limit || a->total > a->limit - n)
		return NULL;
	n = (n + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
	if (a->cur) {
		p = ((uintptr_t)a->cur + ARENA_ALIGN - 1) & ~(uintptr_t)(ARENA_ALIGN - 1);
		if (p <= (uintptr_t)a->end && (uintptr_t)a->end - p >= n) {
			a->cur = (char *)(p + n);
			a->total += n;
			return (void *)p;
		}
	}
	bsize = n > ARENA_BLOCK_MIN / 2 ? n : ARENA_BLOCK_MIN;
	b = malloc(sizeof(*b) + ARENA_ALIGN + bsize);
	if (!b)
		return NULL;
	b->next = a->blocks;
	b->size = bsize;
	a->blocks = b;
	p = ((uintptr_t)(b + 1) + ARENA_ALIGN - 1) & ~(uintptr_t)(ARENA_ALIGN - 1);
	a->total += n;
	if (bsize > n) {
		/* Keep bump-allocating from the new block. */
		a->cur = (char *)(p + n);
		a->end = (char *)p + bsize;
	}
	return (void *)p;
}

char *cel_arena_strdup(struct cel_arena *a, const char *s, size_t len)
{
	char *d = cel_arena_alloc(a, len + 1);

	if (!d)
		return NULL;
	memcpy(d, s, len);
	d[len] = 0;
	return d;
}

void cel_arena_release(struct cel_arena *a)
{
	struct cel_arena_block *b = a->blocks, *nb;

	for (; b; b = nb) {
		nb = b->next;
		free(b);
	}
	a->blocks = NULL;
}

void cel_arena_reset(struct cel_arena *a)
{
	cel_arena_release(a);
	a->cur = a->first;
	a->end = a->first ? a->first + a->first_size : NULL;
	a->total = 0;
}

/* ---- constructors ---- */

void *cel_alloc(struct cel_ctx *ctx, size_t n)
{
	void *p = cel_arena_alloc(ctx->arena, n);

	if (!p)
		ctx->oom = true;
	return p;
}

struct cel_value cel_errorf(struct cel_ctx *ctx, const char *fmt, ...)
{
	struct cel_value v = { .kind = CEL_ERROR };
	char buf[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if ((size_t)n >= sizeof(buf))
		n = sizeof(buf) - 1;
	v.v.err.msg = cel_arena_strdup(ctx->arena, buf, (size_t)n);
	if (!v.v.err.msg)
		v.v.err.msg = "out of memory";
	v.v.err.code = -EDOM;
	return v;
}

struct cel_value cel_error_oom(struct cel_ctx *ctx)
{
	struct cel_value v = { .kind = CEL_ERROR };

	ctx->oom = true;
	v.v.err.msg = "evaluation exceeded its memory limit";
	v.v.err.code = -ENOMEM;
	return v;
}

struct cel_value cel_error_no_overload(struct cel_ctx *ctx, const char *fn)
{
	return cel_errorf(ctx, "no such overload: %s", fn);
}

struct cel_value cel_string_copy(struct cel_ctx *ctx, const char *s, size_t len)
{
	char *d;

	if (len > CEL_MAX_STRING)
		return cel_errorf(ctx, "string size exceeds the limit of %u bytes", CEL_MAX_STRING);
	if (!utf8_valid(s, len))
		return cel_errorf(ctx, "invalid UTF-8 in string");
	d = cel_alloc(ctx, len + 1);
	if (!d)
		return cel_error_oom(ctx);
	memcpy(d, s, len);
	d[len] = 0;
	return cel_string(d, len);
}

struct cel_value cel_bytes_copy(struct cel_ctx *ctx, const char *s, size_t len)
{
	char *d;

	if (len > CEL_MAX_STRING)
		return cel_errorf(ctx, "bytes size exceeds the limit of %u bytes", CEL_MAX_STRING);
	d = cel_alloc(ctx, len + 1);
	if (!d)
		return cel_error_oom(ctx);
	memcpy(d, s, len);
	d[len] = 0;
	return cel_bytes(d, len);
}

struct cel_value cel_list_new(struct cel_ctx *ctx, size_t n, struct cel_value **items)
{
	struct cel_list *l;

	*items = NULL;
	if (n > CEL_MAX_LIST)
		return cel_errorf(ctx, "list size exceeds the limit of %u elements", CEL_MAX_LIST);
	l = cel_alloc(ctx, sizeof(*l) + n * sizeof(struct cel_value));
	if (!l)
		return cel_error_oom(ctx);
	l->len = n;
	l->cap = 0;
	*items = (struct cel_value *)(l + 1);
	l->items = *items;
	return cel_list_value(l);
}

struct cel_value cel_map_new(struct cel_ctx *ctx, size_t n, struct cel_value **keys,
			     struct cel_value **vals)
{
	struct cel_map *m;

	*keys = *vals = NULL;
	if (n > CEL_MAX_LIST)
		return cel_errorf(ctx, "map size exceeds the limit of %u entries", CEL_MAX_LIST);
	m = cel_alloc(ctx, sizeof(*m) + 2 * n * sizeof(struct cel_value));
	if (!m)
		return cel_error_oom(ctx);
	memset(m, 0, sizeof(*m));
	m->len = n;
	*keys = (struct cel_value *)(m + 1);
	*vals = *keys + n;
	m->keys = *keys;
	m->vals = *vals;
	return cel_map_value(m);
}

struct cel_value cel_optional_of(struct cel_ctx *ctx, struct cel_value v)
{
	struct cel_value *p = cel_alloc(ctx, sizeof(*p));
	struct cel_value o = { .kind = CEL_OPTIONAL };

	if (!p)
		return cel_error_oom(ctx);
	*p = v;
	o.v.opt = p;
	return o;
}

struct cel_value cel_object_new(struct cel_ctx *ctx, const struct cel_object_type *t,
				const void *data, size_t size)
{
	void *p = cel_alloc(ctx, size);

	if (!p)
		return cel_error_oom(ctx);
	memcpy(p, data, size);
	return cel_object(t, p);
}

void cel_cost_add(struct cel_ctx *ctx, uint64_t n)
{
	ctx->cost += n;
	if (ctx->cost > ctx->cost_limit)
		ctx->cancelled = true;
}

uint64_t cel_cost_factor(double f, uint64_t n)
{
	double r = ceil(f * (double)n);

	return r >= 1.8e19 ? UINT64_MAX : (uint64_t)r;
}

uint64_t cel_sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

uint64_t cel_sat_mul(uint64_t a, uint64_t b)
{
	return a && b > UINT64_MAX / a ? UINT64_MAX : a * b;
}

/* ---- maps ---- */

size_t cel_map_size(const struct cel_map *m)
{
	return m->ops ? m->ops->size(m) : m->len;
}

bool cel_map_find(struct cel_ctx *ctx, const struct cel_map *m, const struct cel_value *key,
		  struct cel_value *out)
{
	if (m->ops)
		return m->ops->find(ctx, m, key, out);
	/* Size guard: lookups in plain maps are linear, so large maps pay for
	 * the scan (nothing below 128 entries, where cel-go's cost applies
	 * unchanged); building a map entry by entry stays bounded. */
	if (m->len >= 128 && ctx)
		cel_cost_add(ctx, m->len / 128);
	for (size_t i = 0; i < m->len; i++)
		if (cel_value_equal(&m->keys[i], key)) {
			*out = m->vals[i];
			return true;
		}
	return false;
}

void cel_map_entry(struct cel_ctx *ctx, const struct cel_map *m, size_t i,
		   struct cel_value *key, struct cel_value *val)
{
	if (m->ops) {
		m->ops->entry(ctx, m, i, key, val);
		return;
	}
	*key = m->keys[i];
	*val = m->vals[i];
}

/* ---- equality and ordering ---- */

/* Compare two numbers of possibly different kinds on the number line;
 * false when unordered (NaN). */
static bool num_cmp(const struct cel_value *a, const struct cel_value *b, int *cmp)
{
	if (a->kind == b->kind) {
		switch (a->kind) {
		case CEL_INT:
			*cmp = (a->v.i > b->v.i) - (a->v.i < b->v.i);
			return true;
		case CEL_UINT:
			*cmp = (a->v.u > b->v.u) - (a->v.u < b->v.u);
			return true;
		default:
			if (isnan(a->v.d) || isnan(b->v.d))
				return false;
			*cmp = (a->v.d > b->v.d) - (a->v.d < b->v.d);
			return true;
		}
	}
	if (a->kind == CEL_INT && b->kind == CEL_UINT) {
		if (a->v.i < 0)
			*cmp = -1;
		else
			*cmp = ((uint64_t)a->v.i > b->v.u) - ((uint64_t)a->v.i < b->v.u);
		return true;
	}
	if (a->kind == CEL_UINT && b->kind == CEL_INT) {
		if (!num_cmp(b, a, cmp))
			return false;
		*cmp = -*cmp;
		return true;
	}
	if (a->kind == CEL_DOUBLE || b->kind == CEL_DOUBLE) {
		/* The integer is converted to double, as cel-go does: 2^63-1
		 * and 2^63 compare equal. */
		double x = a->kind == CEL_DOUBLE ? a->v.d :
			   a->kind == CEL_INT ? (double)a->v.i : (double)a->v.u;
		double y = b->kind == CEL_DOUBLE ? b->v.d :
			   b->kind == CEL_INT ? (double)b->v.i : (double)b->v.u;

		if (isnan(x) || isnan(y))
			return false;
		*cmp = (x > y) - (x < y);
		return true;
	}
	return false;
}

static bool is_num(uint8_t k)
{
	return k == CEL_INT || k == CEL_UINT || k == CEL_DOUBLE;
}

static bool bytes_eq(const struct cel_value *a, const struct cel_value *b)
{
	return a->v.str.len == b->v.str.len && !memcmp(a->v.str.s, b->v.str.s, a->v.str.len);
}

static bool map_equal(const struct cel_map *a, const struct cel_map *b)
{
	size_t n = cel_map_size(a);
	struct cel_arena scratch;
	char buf[1024];
	struct cel_ctx ctx = { 0 };
	bool eq = true;

	if (n != cel_map_size(b))
		return false;
	/* View maps may build values; give them a scratch arena. */
	cel_arena_init(&scratch, buf, sizeof(buf), 1u << 20);
	ctx.arena = &scratch;
	ctx.cost_limit = UINT64_MAX;
	for (size_t i = 0; i < n && eq; i++) {
		struct cel_value k, va, vb;

		cel_map_entry(&ctx, a, i, &k, &va);
		if (!cel_map_find(&ctx, b, &k, &vb) || !cel_value_equal(&va, &vb))
			eq = false;
	}
	cel_arena_release(&scratch);
	return eq;
}

bool cel_value_equal(const struct cel_value *a, const struct cel_value *b)
{
	int c;

	if (is_num(a->kind) && is_num(b->kind))
		return num_cmp(a, b, &c) && c == 0;
	if (a->kind != b->kind)
		return false;
	switch (a->kind) {
	case CEL_NULL:
		return true;
	case CEL_BOOL:
		return a->v.b == b->v.b;
	case CEL_STRING:
	case CEL_BYTES:
		return bytes_eq(a, b);
	case CEL_LIST:
		if (a->v.list->len != b->v.list->len)
			return false;
		for (size_t i = 0; i < a->v.list->len; i++)
			if (!cel_value_equal(&a->v.list->items[i], &b->v.list->items[i]))
				return false;
		return true;
	case CEL_MAP:
		return map_equal(a->v.map, b->v.map);
	case CEL_TYPE:
		return !strcmp(a->v.type, b->v.type);
	case CEL_TIMESTAMP:
	case CEL_DURATION:
		return a->v.t.sec == b->v.t.sec && a->v.t.nsec == b->v.t.nsec;
	case CEL_OPTIONAL:
		if (!a->v.opt || !b->v.opt)
			return a->v.opt == b->v.opt;
		return cel_value_equal(a->v.opt, b->v.opt);
	case CEL_OBJECT:
		if (a->v.obj.type != b->v.obj.type)
			return false;
		if (a->v.obj.type->equal)
			return a->v.obj.type->equal(a->v.obj.ptr, b->v.obj.ptr);
		return a->v.obj.ptr == b->v.obj.ptr;
	default:
		return false;
	}
}

bool cel_value_compare(const struct cel_value *a, const struct cel_value *b, int *cmp)
{
	if (is_num(a->kind) && is_num(b->kind))
		return num_cmp(a, b, cmp);
	if (a->kind != b->kind)
		return false;
	switch (a->kind) {
	case CEL_BOOL:
		*cmp = (int)a->v.b - (int)b->v.b;
		return true;
	case CEL_STRING:
	case CEL_BYTES: {
		size_t n = a->v.str.len < b->v.str.len ? a->v.str.len : b->v.str.len;
		int c = memcmp(a->v.str.s, b->v.str.s, n);

		if (c == 0)
			c = (a->v.str.len > b->v.str.len) - (a->v.str.len < b->v.str.len);
		*cmp = (c > 0) - (c < 0);
		return true;
	}
	case CEL_TIMESTAMP:
	case CEL_DURATION:
		if (a->v.t.sec != b->v.t.sec)
			*cmp = a->v.t.sec < b->v.t.sec ? -1 : 1;
		else
			*cmp = (a->v.t.nsec > b->v.t.nsec) - (a->v.t.nsec < b->v.t.nsec);
		return true;
	case CEL_OBJECT:
		if (a->v.obj.type != b->v.obj.type || !a->v.obj.type->compare)
			return false;
		*cmp = a->v.obj.type->compare(a->v.obj.ptr, b->v.obj.ptr);
		return true;
	default:
		return false;
	}
}

/* ---- type names ---- */

static const char *const builtin_types[] = {
	"null_type", "bool", "int", "uint", "double", "string", "bytes", "list", "map",
	"type", "google.protobuf.Timestamp", "google.protobuf.Duration", "optional_type",
};

const char *cel_value_type_name(const struct cel_value *v)
{
	if (v->kind < CEL_OBJECT)
		return builtin_types[v->kind];
	if (v->kind == CEL_OBJECT)
		return v->v.obj.type->name;
	return "error";
}

struct cel_value cel_type_named(const char *name)
{
	struct cel_value v = { .kind = CEL_TYPE };

	v.v.type = name;
	for (size_t i = 0; i < CEL_ARRAY_LEN(builtin_types); i++)
		if (!strcmp(builtin_types[i], name))
			v.v.type = builtin_types[i];
	return v;
}

/* ---- Quantity and Semver ---- */

static bool quantity_equal_op(const void *a, const void *b)
{
	return quantity_cmp(a, b) == 0;
}

static void quantity_print_op(struct strbuf *sb, const void *a)
{
	char buf[QUANTITY_STR_MAX];
	size_t n = quantity_format(a, buf);

	sb_puts(sb, "quantity(");
	cel_print_string(sb, buf, n, false);
	sb_putc(sb, ')');
}

/* Quantities are not ordered by < in Kubernetes CEL (compareTo is). */
const struct cel_object_type cel_quantity_type = {
	.name = "kubernetes.Quantity",
	.equal = quantity_equal_op,
	.print = quantity_print_op,
};

static bool semver_equal_op(const void *a, const void *b)
{
	return semver_cmp(a, b) == 0;
}

static void semver_print_op(struct strbuf *sb, const void *a)
{
	char buf[SEMVER_STR_MAX];
	size_t n = semver_format(a, buf);

	sb_puts(sb, "semver(");
	cel_print_string(sb, buf, n, false);
	sb_putc(sb, ')');
}

const struct cel_object_type cel_semver_type = {
	.name = "kubernetes.Semver",
	.equal = semver_equal_op,
	.print = semver_print_op,
};
