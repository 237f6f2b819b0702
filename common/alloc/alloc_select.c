/* alloc_select.c - which devices a DeviceClass and a request select.
 *
 * Every distinct selector expression is compiled once per ctx (which owns
 * the program: an LRU cache may evict and free a program while a ctx still
 * holds it), or once for every ctx sharing an alloc_programs table (which
 * never evicts), and gets one result byte per device of the node, filled
 * on first use: the planner tries many pods with the same classes, so a
 * device is evaluated against an expression once per node, not once per
 * pod. This is the one place the allocator evaluates CEL. */
#include <stdlib.h>
#include <string.h>

#include "alloc_internal.h"

struct alloc_programs {
	struct alloc_mem *mem;          /* the expressions' text */
	struct alloc_hash index;        /* expression -> progs */
	struct cel_program **progs;
	size_t n, cap;
};

struct alloc_programs *alloc_programs_new(void)
{
	struct alloc_programs *p = calloc(1, sizeof(*p));

	if (p && !(p->mem = alloc_mem_new())) {
		free(p);
		return NULL;
	}
	if (p)
		alloc_hash_init(&p->index);
	return p;
}

void alloc_programs_free(struct alloc_programs *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++)
		cel_program_free(p->progs[i]);
	free(p->progs);
	alloc_hash_free(&p->index);
	alloc_mem_free(p->mem);
	free(p);
}

/* The program for expr: the table's, or compiled into it. */
static int programs_get(struct alloc_programs *p, const char *expr, size_t len,
			struct cel_program **out, struct dt_err *err)
{
	struct cel_program *prog = NULL;
	uint32_t i;
	char *copy;
	int rc;

	if (alloc_hash_get(&p->index, expr, len, &i)) {
		*out = p->progs[i];
		return 0;
	}
	/* As the scheduler does: no cost estimate (validation did that). */
	rc = cel_compile_selector(expr, len, false, &prog, err);
	if (rc)
		return rc;
	if (DT_GROW(p->progs, p->cap, p->n + 1))
		goto oom;
	copy = alloc_mem_raw(p->mem, len + 1);
	if (!copy)
		goto oom;
	memcpy(copy, expr, len);
	copy[len] = '\0';
	if (alloc_hash_put(&p->index, copy, len, (uint32_t)p->n))
		goto oom;
	p->progs[p->n++] = prog;
	*out = prog;
	return 0;
oom:
	cel_program_free(prog);
	return dt_err_set(err, -ENOMEM, "out of memory");
}

/* Compile expr for ctx: from the shared table when it has one (the table
 * keeps the program), else a program of the ctx's own. */
static int ctx_compile(struct alloc_ctx *ctx, const char *expr, size_t len,
		       struct cel_program **out, struct dt_err *err)
{
	if (ctx->opts.programs)
		return programs_get(ctx->opts.programs, expr, len, out, err);
	/* As the scheduler does: no cost estimate (validation did that). */
	return cel_compile_selector(expr, len, false, out, err);
}

/* Free a program ctx_compile gave, unless the shared table keeps it. */
void alloc_ctx_program_free(const struct alloc_ctx *ctx, struct cel_program *prog)
{
	if (!ctx->opts.programs)
		cel_program_free(prog);
}

struct aclass *alloc_ctx_class(struct alloc_ctx *ctx, const char *name)
{
	uint32_t i;

	if (!name || !alloc_hash_get(&ctx->class_index, name, strlen(name), &i))
		return NULL;
	return &ctx->classes[i];
}

int alloc_ctx_selector(struct alloc_ctx *ctx, const char *expr, size_t len, uint32_t *out,
		       struct dt_err *err)
{
	struct cel_program *prog = NULL;
	struct asel *s;
	char *copy;
	int rc;

	if (alloc_hash_get(&ctx->sel_index, expr, len, out))
		return 0;
	if (len > CEL_MAX_EXPRESSION_LEN)
		return dt_err_set(err, -EINVAL,
				  "CEL expression too long: %zu bytes, the limit is %d", len,
				  CEL_MAX_EXPRESSION_LEN);
	rc = ctx_compile(ctx, expr, len, &prog, err);
	if (rc)
		return rc;
	if (DT_GROW(ctx->sels, ctx->cap_sels, ctx->n_sels + 1))
		goto oom;
	copy = alloc_mem_get(ctx->mem, len + 1);
	if (!copy)
		goto oom;
	memcpy(copy, expr, len);
	s = &ctx->sels[ctx->n_sels];
	s->expr = copy;
	s->len = len;
	s->prog = prog;
	s->results = calloc(ctx->n_devs ? ctx->n_devs : 1, 1);
	if (!s->results)
		goto oom;
	if (alloc_hash_put(&ctx->sel_index, copy, len, (uint32_t)ctx->n_sels)) {
		free(s->results);
		goto oom;
	}
	*out = (uint32_t)ctx->n_sels++;
	return 0;
oom:
	alloc_ctx_program_free(ctx, prog);
	return dt_err_set(err, -ENOMEM, "out of memory");
}

int alloc_class_resolve(struct alloc_ctx *ctx, struct aclass *c, struct dt_err *err)
{
	const struct model_device_class_spec *spec = &c->obj->u.device_class;
	int rc;

	if (c->resolved)
		return 0;
	c->sels = alloc_mem_get(ctx->mem, (spec->n_selectors + 1) * sizeof(*c->sels));
	if (!c->sels)
		return dt_err_set(err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < spec->n_selectors; i++) {
		const struct model_selector *s = &spec->selectors[i];

		if (!s->expression)
			return dt_err_set(err, -EINVAL, "class %s: selector #%zu: CEL expression "
					  "empty (unsupported selector type?)", c->obj->meta.name, i);
		rc = alloc_ctx_selector(ctx, s->expression, s->expression_len, &c->sels[i], err);
		if (rc)
			return dt_err_prefix(err, "class %s: selector #%zu: ", c->obj->meta.name, i);
	}
	c->resolved = true;
	return 0;
}

/* Whether a CEL runtime error is the read of an attribute the device lacks
 * because only the running node will know it: "no such key: ID" (or the
 * qualified DOMAIN/ID) for one of the device's node-uniform attributes.
 * Any other error (a typo, a type error) is as fatal as in the scheduler. */
static bool unknown_uniform_read(const struct alloc_ctx *ctx, const struct adev *d,
				 const char *msg)
{
	static const char key[] = "no such key: ";
	const char *name = strstr(msg, key);
	size_t len;

	if (!name)
		return false;
	name += sizeof(key) - 1;
	len = strlen(name);
	for (uint32_t i = 0; i < d->n_uni; i++) {
		const struct auniform *u = &ctx->uni_attrs[d->uni[i]];
		size_t dl = strlen(u->domain);

		if (!strcmp(name, u->id))
			return true;
		if (len > dl && !strncmp(name, u->domain, dl) && name[dl] == '/' &&
		    !strcmp(name + dl + 1, u->id))
			return true;
	}
	return false;
}

int alloc_selector_match(struct alloc_ctx *ctx, uint32_t s, uint32_t dev, bool *match,
			 struct dt_err *err)
{
	struct asel *sel = &ctx->sels[s];
	const struct adev *d = &ctx->devs[dev];
	int rc;

	if (sel->results[dev]) {
		*match = sel->results[dev] == 1;
		return 0;
	}
	rc = cel_eval_selector(sel->prog, &d->dev->cel, match, err);
	if (rc) {
		if (!d->has_unknown || rc == -ENOMEM || !unknown_uniform_read(ctx, d, err->msg))
			return rc;
		/* The expression read what only the running node will know. */
		*match = false;
		dt_err_clear(err);
	}
	sel->results[dev] = *match ? 1 : 2;
	return 0;
}
