/* alloc.c - the search: which devices of the node serve every claim.
 *
 * Depth-first backtracking over claims -> requests -> device slots, the
 * scheduler's allocateOne: the first complete solution wins. Within one
 * request devices are only tried in increasing (pool, slice, device)
 * order (the search resumes after the device chosen for the previous
 * slot), so it walks combinations, not permutations. firstAvailable tries
 * the subrequests in order. A step budget bounds the whole search.
 *
 * The search works on a scratch copy of the allocated state: taking a
 * device marks it (and its capacity and counters) in the copy, undoing
 * unmarks it, so every check reads one place. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_internal.h"

enum { R_FAIL = 0, R_DONE = 1, R_MAXSIZE = 2 };

/* "NS/NAME": a namespace (63) and a name (253) with room to spare. */
#define CLAIM_NAME_MAX 320

struct sreq {
	const char *name;               /* "req" or "req/sub" */
	const char *main, *sub;
	const struct model_exact_request *er;
	struct aclass *cls;
	uint32_t *sels;                 /* the request's own selectors */
	size_t n_sels;
	bool all;
	bool admin;
	uint32_t num;                   /* devices to allocate */
	uint32_t *all_devs;             /* All: the devices, in search order */
};

struct sentry {
	struct sreq *subs;              /* exactly: one */
	size_t n_subs;
	bool first_available;
	uint32_t chosen;
};

struct sresult {
	uint32_t dev;
	const struct sreq *rq;
	uint32_t cmask;                 /* constraints this device was added to */
	size_t cap_off;                 /* consumed capacity on S->caps, SIZE_MAX: none */
};

struct sclaim {
	const struct model_object *obj;
	char *name_buf;                 /* "NS/NAME", formatted on first use */
	struct sentry *reqs;
	size_t n_reqs;
	struct aconstraint *cons;
	size_t n_cons;
	struct sresult *res;            /* ALLOC_MAX_RESULTS, not zeroed */
	size_t n_res;
	uint64_t min_free;              /* free devices it needs at least */
};

/* "NS/NAME" of a claim, for messages: formatted only when one is needed,
 * which keeps printf off the search's fast path. */
static const char *cname(const struct sclaim *cl)
{
	struct sclaim *w = (struct sclaim *)cl;

	if (!w->name_buf[0])
		snprintf(w->name_buf, CLAIM_NAME_MAX, "%s/%s",
			 cl->obj->meta.ns ? cl->obj->meta.ns : "default",
			 cl->obj->meta.name ? cl->obj->meta.name : "");
	return w->name_buf;
}

struct search {
	struct alloc_ctx *ctx;
	struct alloc_state *st;         /* scratch copy */
	struct sclaim *claims;
	size_t n;
	uint64_t steps, max_steps;
	struct dt_err *err;
	struct quantity *caps;          /* consumed-capacity stack */
	size_t n_caps, cap_caps;
	struct alloc_mem *mem;          /* the search's own tables */
};

/* ---- selecting ---- */

static const char *dev_label(const struct alloc_ctx *ctx, uint32_t dev, char *buf, size_t n)
{
	const struct adev *d = &ctx->devs[dev];
	const struct apool *p = &ctx->pools[d->pool];

	snprintf(buf, n, "%s/%s/%s", p->driver, p->name, d->dev->name ? d->dev->name : "");
	return buf;
}

/* A missing attribute gets the scheduler's advice. */
static void add_hint(struct dt_err *err)
{
	size_t len = strlen(err->msg);

	if (strstr(err->msg, "no such key") && !strstr(err->msg, "optional chaining"))
		snprintf(err->msg + len, sizeof(err->msg) - len, " (consider using CEL optional "
			 "chaining (.? followed by orValue()) or guarding the check with has())");
}

/* Class selectors, then the request's. Fatal on a CEL runtime error. */
static int selectable(struct search *S, const struct sclaim *cl, const struct sreq *rq,
		      uint32_t dev, bool *ok)
{
	struct alloc_ctx *ctx = S->ctx;
	char label[512];
	int rc;

	*ok = false;
	if (!ctx->devs[dev].targets_node)
		return 0;
	for (size_t i = 0; i < rq->cls->obj->u.device_class.n_selectors; i++) {
		rc = alloc_selector_match(ctx, rq->cls->sels[i], dev, ok, S->err);
		if (rc) {
			add_hint(S->err);
			return dt_err_prefix(S->err, "claim %s, request %s: class %s: selector #%zu "
					     "on device %s: CEL runtime error: ", cname(cl), rq->name,
					     rq->cls->obj->meta.name, i,
					     dev_label(ctx, dev, label, sizeof(label)));
		}
		if (!*ok)
			return 0;
	}
	for (size_t i = 0; i < rq->n_sels; i++) {
		rc = alloc_selector_match(ctx, rq->sels[i], dev, ok, S->err);
		if (rc) {
			add_hint(S->err);
			return dt_err_prefix(S->err, "claim %s, request %s: selector #%zu on device "
					     "%s: CEL runtime error: ", cname(cl), rq->name, i,
					     dev_label(ctx, dev, label, sizeof(label)));
		}
		if (!*ok)
			return 0;
	}
	*ok = true;
	return 0;
}

static bool pool_usable(const struct alloc_ctx *ctx, uint32_t dev)
{
	const struct apool *p = &ctx->pools[ctx->devs[dev].pool];

	return !p->incomplete && !p->invalid;
}

/* ---- taking a device ---- */

static int push_caps(struct search *S, const struct quantity *q, size_t n, size_t *off)
{
	if (DT_GROW(S->caps, S->cap_caps, S->n_caps + n))
		return -ENOMEM;
	memcpy(S->caps + S->n_caps, q, n * sizeof(*q));
	*off = S->n_caps;
	S->n_caps += n;
	return 0;
}

static void undo_device(struct search *S, struct sclaim *cl)
{
	struct sresult *r = &cl->res[--cl->n_res];
	const struct adev *d = &S->ctx->devs[r->dev];
	const struct quantity *consumed = r->cap_off == SIZE_MAX ? NULL : S->caps + r->cap_off;

	for (size_t i = cl->n_cons; i-- > 0;)
		if (r->cmask & (1u << i))
			alloc_constraint_remove(&cl->cons[i]);
	if (!r->rq->admin)
		alloc_state_release(S->st, r->dev, d->allow_multi ? consumed : NULL);
	if (r->cap_off != SIZE_MAX)
		S->n_caps = r->cap_off;
}

/* Try to add dev for rq: R_DONE when added, R_FAIL when it does not fit
 * (nothing changed), negative on a fatal error. */
static int allocate_device(struct search *S, struct sclaim *cl, const struct sreq *rq,
			   uint32_t dev, bool must)
{
	const struct adev *d = &S->ctx->devs[dev];
	struct quantity consumed[64];
	struct sresult *r;
	uint32_t mask = 0;
	bool ok;
	int rc;

	if (cl->n_res >= ALLOC_MAX_RESULTS || d->dev->n_capacity > 64)
		return R_FAIL;
	/* In use? Shared devices take more allocations; admin access only
	 * needs the device not to be in this claim already. */
	if (rq->admin) {
		for (size_t i = 0; !d->allow_multi && i < cl->n_res; i++)
			if (cl->res[i].dev == dev)
				return R_FAIL;
	} else if (alloc_state_in_use(S->st, dev)) {
		return R_FAIL;
	}
	if (!rq->admin && !alloc_counters_fit(S->st, dev))
		return R_FAIL;
	if (!alloc_taints_tolerated(d, rq->er->tolerations, rq->er->n_tolerations))
		return R_FAIL;
	alloc_capacity_consumed(d, &rq->er->capacity_requests, consumed, &ok);
	if (!ok || (!rq->admin && !alloc_capacity_fits(S->st, dev, consumed)))
		return R_FAIL;
	for (size_t i = 0; i < cl->n_cons; i++) {
		struct aconstraint *c = &cl->cons[i];

		if (!alloc_constraint_applies(c, rq->main, rq->sub))
			continue;
		if (!alloc_constraint_add(c, S->ctx, dev)) {
			for (size_t j = i; j-- > 0;)
				if (mask & (1u << j))
					alloc_constraint_remove(&cl->cons[j]);
			if (must) {
				char label[512];

				return dt_err_set(S->err, -EINVAL, "claim %s, request %s: cannot add "
						  "device %s because a claim constraint would not be "
						  "satisfied", cname(cl), rq->name,
						  dev_label(S->ctx, dev, label, sizeof(label)));
			}
			return R_FAIL;
		}
		mask |= 1u << i;
	}
	r = &cl->res[cl->n_res];
	r->dev = dev;
	r->rq = rq;
	r->cmask = mask;
	r->cap_off = SIZE_MAX;
	if (d->allow_multi && d->dev->n_capacity) {
		rc = push_caps(S, consumed, d->dev->n_capacity, &r->cap_off);
		if (rc) {
			for (size_t j = cl->n_cons; j-- > 0;)
				if (mask & (1u << j))
					alloc_constraint_remove(&cl->cons[j]);
			return dt_err_set(S->err, rc, "out of memory");
		}
	}
	if (!rq->admin)
		alloc_state_take(S->st, dev, d->allow_multi ? consumed : NULL);
	cl->n_res++;
	return R_DONE;
}

/* ---- the search ---- */

static int alloc_one(struct search *S, size_t c, size_t q, size_t s, uint32_t d, bool in_sub,
		     uint32_t start)
{
	struct sclaim *cl;
	struct sentry *e;
	const struct sreq *rq;
	int r;

	if (++S->steps > S->max_steps)
		return dt_err_set(S->err, -ETIME, "allocation search gave up after %llu steps "
				  "(the step budget); the claims ask for too many combinations",
				  (unsigned long long)S->max_steps);
	if (c == S->n)
		return R_DONE;
	cl = &S->claims[c];
	if (q == cl->n_reqs) {
		r = alloc_one(S, c + 1, 0, 0, 0, false, 0);
		return r == R_MAXSIZE ? R_FAIL : r;
	}
	e = &cl->reqs[q];
	if (e->first_available && !in_sub) {
		bool all_exceeded = true;

		for (size_t i = 0; i < e->n_subs; i++) {
			r = alloc_one(S, c, q, i, 0, true, 0);
			if (r == R_MAXSIZE)
				continue;
			all_exceeded = false;
			if (r < 0)
				return r;
			if (r == R_DONE) {
				e->chosen = (uint32_t)i;
				return R_DONE;
			}
		}
		return all_exceeded ? R_MAXSIZE : R_FAIL;
	}
	rq = &e->subs[s];
	if (rq->all && rq->num == 0)
		return R_FAIL;  /* All needs at least one device */
	if (d >= rq->num)
		return alloc_one(S, c, q + 1, 0, 0, false, 0);
	if (cl->n_res + rq->num - d > ALLOC_MAX_RESULTS)
		return R_MAXSIZE;
	if (rq->all) {
		r = allocate_device(S, cl, rq, rq->all_devs[d], true);
		if (r != R_DONE)
			return r;
		r = alloc_one(S, c, q, s, d + 1, in_sub, 0);
		if (r != R_DONE)
			undo_device(S, cl);
		return r;
	}
	for (uint32_t dev = start; dev < S->ctx->n_devs; dev++) {
		bool ok;

		if (!pool_usable(S->ctx, dev))
			continue;
		/* In use: skipped before its selectors run, as the scheduler
		 * does (so a CEL error on a taken device is not raised). */
		if (!rq->admin && alloc_state_in_use(S->st, dev))
			continue;
		r = selectable(S, cl, rq, dev, &ok);
		if (r < 0)
			return r;
		if (!ok)
			continue;
		r = allocate_device(S, cl, rq, dev, false);
		if (r < 0)
			return r;
		if (r != R_DONE)
			continue;
		r = alloc_one(S, c, q, s, d + 1, in_sub, dev + 1);
		if (r == R_DONE)
			return R_DONE;
		undo_device(S, cl);
		if (r != R_FAIL)
			return r;
	}
	return R_FAIL;
}

/* ---- preparing the claims ---- */

static int prepare_request(struct search *S, struct sclaim *cl, struct sreq *rq,
			   const char *main, const char *sub, const struct model_exact_request *er)
{
	struct alloc_ctx *ctx = S->ctx;
	int rc;

	rq->main = main;
	rq->sub = sub;
	if (sub) {
		size_t n = strlen(main) + strlen(sub) + 2;
		char *name = alloc_mem_get(S->mem, n);

		if (!name)
			return dt_err_set(S->err, -ENOMEM, "out of memory");
		snprintf(name, n, "%s/%s", main, sub);
		rq->name = name;
	} else {
		rq->name = main;
	}
	rq->er = er;
	rq->admin = er->has_admin_access && er->admin_access;
	if (!er->device_class_name || !*er->device_class_name)
		return dt_err_set(S->err, -EINVAL, "claim %s, request %s: missing device class "
				  "name (unsupported request type?)", cname(cl), rq->name);
	rq->cls = alloc_ctx_class(ctx, er->device_class_name);
	if (!rq->cls)
		return dt_err_set(S->err, -ENOENT, "claim %s, request %s: could not retrieve "
				  "device class %s: not found", cname(cl), rq->name,
				  er->device_class_name);
	rc = alloc_class_resolve(ctx, rq->cls, S->err);
	if (rc)
		return dt_err_prefix(S->err, "claim %s, request %s: ", cname(cl), rq->name);
	rq->n_sels = er->n_selectors;
	rq->sels = alloc_mem_get(S->mem, (er->n_selectors + 1) * sizeof(*rq->sels));
	if (!rq->sels)
		return dt_err_set(S->err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < er->n_selectors; i++) {
		const struct model_selector *sel = &er->selectors[i];

		if (!sel->expression)
			return dt_err_set(S->err, -EINVAL, "claim %s, request %s: selector #%zu: "
					  "CEL expression empty (unsupported selector type?)",
					  cname(cl), rq->name, i);
		rc = alloc_ctx_selector(ctx, sel->expression, sel->expression_len, &rq->sels[i],
					S->err);
		if (rc)
			return dt_err_prefix(S->err, "claim %s, request %s: selector #%zu: ",
					     cname(cl), rq->name, i);
	}
	switch (er->allocation_mode) {
	case MODEL_ALLOC_EXACT_COUNT:
		if (er->count <= 0 || er->count > 1000000)
			return dt_err_set(S->err, -EINVAL, "claim %s, request %s: count must be "
					  "greater than zero, got %lld", cname(cl), rq->name,
					  (long long)er->count);
		rq->num = (uint32_t)er->count;
		return 0;
	case MODEL_ALLOC_ALL:
		break;
	default:
		return dt_err_set(S->err, -EINVAL, "claim %s, request %s: unsupported count mode %s",
				  cname(cl), rq->name,
				  er->allocation_mode_text ? er->allocation_mode_text : "(empty)");
	}
	/* All: every selectable device of every pool, which must be complete
	 * and valid. */
	rq->all = true;
	for (size_t i = 0; i < ctx->n_pools; i++) {
		const struct apool *p = &ctx->pools[i];

		if (p->incomplete)
			return dt_err_set(S->err, -EAGAIN, "claim %s, request %s: asks for all "
					  "devices, but resource pool %s/%s is currently being "
					  "updated", cname(cl), rq->name, p->driver, p->name);
		if (p->invalid)
			return dt_err_set(S->err, -EINVAL, "claim %s, request %s: asks for all "
					  "devices, but resource pool %s/%s is invalid: %s", cname(cl),
					  rq->name, p->driver, p->name, p->invalid_reason);
	}
	rq->all_devs = alloc_mem_get(S->mem, (ctx->n_devs + 1) * sizeof(*rq->all_devs));
	if (!rq->all_devs)
		return dt_err_set(S->err, -ENOMEM, "out of memory");
	for (uint32_t dev = 0; dev < ctx->n_devs; dev++) {
		struct quantity consumed[64];
		bool ok;

		rc = selectable(S, cl, rq, dev, &ok);
		if (rc)
			return rc;
		if (!ok || ctx->devs[dev].dev->n_capacity > 64)
			continue;
		alloc_capacity_consumed(&ctx->devs[dev], &er->capacity_requests, consumed, &ok);
		if (ok && ctx->devs[dev].allow_multi)
			ok = alloc_capacity_fits(S->st, dev, consumed);
		if (!ok)
			continue;
		rq->all_devs[rq->num++] = dev;
	}
	return 0;
}

static int prepare_claim(struct search *S, struct sclaim *cl, const struct model_object *o)
{
	const struct model_claim_spec *spec = &o->u.claim.spec;
	uint64_t min_devices = 0;
	int rc;

	cl->obj = o;
	cl->res = alloc_mem_raw(S->mem, ALLOC_MAX_RESULTS * sizeof(*cl->res));
	cl->name_buf = alloc_mem_raw(S->mem, CLAIM_NAME_MAX);
	if (!cl->res || !cl->name_buf)
		return dt_err_set(S->err, -ENOMEM, "out of memory");
	cl->name_buf[0] = '\0';
	if (o->kind != MODEL_RESOURCE_CLAIM)
		return dt_err_set(S->err, -EINVAL, "claim %s: not a ResourceClaim", cname(cl));
	if (spec->n_requests > ALLOC_MAX_RESULTS)
		return dt_err_set(S->err, -E2BIG, "claim %s: %zu requests exceed the limit of %d",
				  cname(cl), spec->n_requests, ALLOC_MAX_RESULTS);
	if (spec->n_constraints > 32)
		return dt_err_set(S->err, -E2BIG, "claim %s: %zu constraints exceed the limit "
				  "of 32", cname(cl), spec->n_constraints);
	cl->n_reqs = spec->n_requests;
	cl->reqs = alloc_mem_get(S->mem, (cl->n_reqs + 1) * sizeof(*cl->reqs));
	if (!cl->reqs)
		return dt_err_set(S->err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < spec->n_requests; i++) {
		const struct model_device_request *dr = &spec->requests[i];
		struct sentry *e = &cl->reqs[i];
		const char *name = dr->name ? dr->name : "";
		uint64_t min = UINT64_MAX, min_free = UINT64_MAX;

		if (dr->exactly && dr->n_first_available)
			return dt_err_set(S->err, -EINVAL, "claim %s, request %s: exactly and "
					  "firstAvailable are mutually exclusive", cname(cl), name);
		if (!dr->exactly && !dr->n_first_available)
			return dt_err_set(S->err, -EINVAL, "claim %s, request %s: neither exactly "
					  "nor firstAvailable is set (unsupported request type?)",
					  cname(cl), name);
		e->first_available = dr->n_first_available > 0;
		e->n_subs = e->first_available ? dr->n_first_available : 1;
		if (e->n_subs > 8)
			return dt_err_set(S->err, -E2BIG, "claim %s, request %s: %zu subrequests "
					  "exceed the limit of 8", cname(cl), name, e->n_subs);
		e->subs = alloc_mem_get(S->mem, e->n_subs * sizeof(*e->subs));
		if (!e->subs)
			return dt_err_set(S->err, -ENOMEM, "out of memory");
		for (size_t k = 0; k < e->n_subs; k++) {
			const struct model_subrequest *sr = e->first_available ?
				&dr->first_available[k] : NULL;

			rc = prepare_request(S, cl, &e->subs[k], name,
					     sr ? (sr->name ? sr->name : "") : NULL,
					     sr ? &sr->req : dr->exactly);
			if (rc)
				return rc;
			if (e->subs[k].num < min)
				min = e->subs[k].num;
			if ((e->subs[k].admin ? 0 : e->subs[k].num) < min_free)
				min_free = e->subs[k].admin ? 0 : e->subs[k].num;
		}
		min_devices += min;
		cl->min_free += min_free;
	}
	if (min_devices > ALLOC_MAX_RESULTS)
		return dt_err_set(S->err, -E2BIG, "claim %s: number of requested devices %llu "
				  "exceeds the claim limit of %d", cname(cl),
				  (unsigned long long)min_devices, ALLOC_MAX_RESULTS);
	cl->n_cons = spec->n_constraints;
	cl->cons = alloc_mem_get(S->mem, (cl->n_cons + 1) * sizeof(*cl->cons));
	if (!cl->cons)
		return dt_err_set(S->err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < spec->n_constraints; i++) {
		const struct model_constraint *mc = &spec->constraints[i];
		struct aconstraint *c = &cl->cons[i];
		const char *attr = mc->match_attribute ? mc->match_attribute : mc->distinct_attribute;
		const char *slash;
		char *dom;

		c->src = mc;
		if (!attr || (mc->match_attribute && mc->distinct_attribute))
			return dt_err_set(S->err, -EINVAL, "claim %s: constraint #%zu: %s", cname(cl),
					  i, attr ? "matchAttribute and distinctAttribute are "
					  "mutually exclusive" : "empty constraint (unsupported "
					  "constraint type?)");
		c->distinct = !mc->match_attribute;
		slash = strchr(attr, '/');
		if (!slash || slash == attr || !slash[1])
			return dt_err_set(S->err, -EINVAL, "claim %s: constraint #%zu: %s: must be "
					  "a fully qualified name (domain/name)", cname(cl), i, attr);
		dom = alloc_mem_get(S->mem, (size_t)(slash - attr) + 1);
		c->cap_vals = ALLOC_MAX_RESULTS;
		c->vals = alloc_mem_get(S->mem, c->cap_vals * sizeof(*c->vals));
		c->masks = alloc_mem_get(S->mem, c->cap_vals * sizeof(*c->masks));
		if (!dom || !c->vals || !c->masks)
			return dt_err_set(S->err, -ENOMEM, "out of memory");
		memcpy(dom, attr, (size_t)(slash - attr));
		c->domain = dom;
		c->id = slash + 1;
	}
	return 0;
}

/* ---- the reason a claim set does not fit ---- */

/* Why selected devices were not available to a request. */
struct why {
	uint32_t busy, counters, tainted, taint_same, capacity, other;
	const struct model_taint *taint;        /* the first untolerated one seen */
	const struct model_object *taint_rule;  /* its DeviceTaintRule, NULL: the slice's */
	char cap[200];                          /* the first capacity refusal */
};

/* Which of allocate_device's checks, in its order, refuses dev. */
static void why_not(struct search *S, const struct sclaim *cl, const struct sreq *rq,
		    uint32_t dev, struct why *w)
{
	const struct adev *d = &S->ctx->devs[dev];
	const struct model_object *rule;
	const struct model_taint *t;
	struct quantity consumed[64];
	bool ok;

	if (!rq->admin && alloc_state_in_use(S->st, dev)) {
		w->busy++;
		return;
	}
	if (!rq->admin && !alloc_counters_fit(S->st, dev)) {
		w->counters++;
		return;
	}
	t = alloc_taint_untolerated(d, rq->er->tolerations, rq->er->n_tolerations, &rule);
	if (t) {
		if (!w->taint) {
			w->taint = t;
			w->taint_rule = rule;
		}
		w->tainted++;
		if (!strcmp(t->key ? t->key : "", w->taint->key ? w->taint->key : "") &&
		    !strcmp(t->value ? t->value : "", w->taint->value ? w->taint->value : "") &&
		    !strcmp(t->effect, w->taint->effect))
			w->taint_same++;
		return;
	}
	if (d->dev->n_capacity <= 64) {
		alloc_capacity_consumed(d, &rq->er->capacity_requests, consumed, &ok);
		if (!ok || (!rq->admin && !alloc_capacity_fits(S->st, dev, consumed))) {
			if (!w->capacity)
				alloc_capacity_explain(S->st, dev, &rq->er->capacity_requests,
						       w->cap, sizeof(w->cap));
			w->capacity++;
			return;
		}
	}
	(void)cl;
	w->other++;
}

/* Append ", N what" to buf, the first part after ": ". */
static void why_part(char *buf, size_t n, bool *first, uint32_t count, const char *what,
		     const char *detail)
{
	size_t len = strlen(buf);

	if (!count || len + 1 >= n)
		return;
	snprintf(buf + len, n - len, "%s%u %s%s", *first ? ": " : ", ", count, what,
		 detail ? detail : "");
	*first = false;
}

static void why_text(const struct why *w, char *buf, size_t n)
{
	char t[400];
	bool first = true;

	why_part(buf, n, &first, w->busy, "in use", NULL);
	why_part(buf, n, &first, w->counters, "without enough shared counters left", NULL);
	if (w->taint) {
		snprintf(t, sizeof(t), " %s%s%s:%s%s%s%s not tolerated",
			 w->taint->key ? w->taint->key : "",
			 w->taint->value && *w->taint->value ? "=" : "",
			 w->taint->value ? w->taint->value : "", w->taint->effect,
			 w->taint_rule ? " (DeviceTaintRule " : "",
			 w->taint_rule && w->taint_rule->meta.name ? w->taint_rule->meta.name : "",
			 w->taint_rule ? ")" : "");
		why_part(buf, n, &first, w->taint_same, "with the taint", t);
		why_part(buf, n, &first, w->tainted - w->taint_same,
			 "with other untolerated taints", NULL);
	}
	if (w->capacity) {
		snprintf(t, sizeof(t), " (%s)", w->cap);
		why_part(buf, n, &first, w->capacity, "without the capacity",
			 w->cap[0] ? t : NULL);
	}
	why_part(buf, n, &first, w->other, "refused by the claim's constraints or limits", NULL);
}

/* How many devices a request could get on its own, with the checks that
 * do not depend on other devices of the search. CEL errors count as "no
 * match" here: the search already reported any it hit. */
static void explain(struct search *S, char *buf, size_t n)
{
	struct alloc_ctx *ctx = S->ctx;
	size_t incomplete = 0, invalid = 0;
	const struct apool *bad = NULL;

	for (size_t i = 0; i < ctx->n_pools; i++) {
		if (ctx->pools[i].incomplete)
			incomplete++;
		if (ctx->pools[i].invalid) {
			invalid++;
			bad = &ctx->pools[i];
		}
	}
	for (size_t c = 0; c < S->n; c++) {
		struct sclaim *cl = &S->claims[c];

		for (size_t q = 0; q < cl->n_reqs; q++) {
			const struct sentry *e = &cl->reqs[q];
			const struct sreq *worst = NULL;
			uint32_t w_sel = 0, w_free = 0;
			struct why w_why;

			for (size_t k = 0; k < e->n_subs; k++) {
				const struct sreq *rq = &e->subs[k];
				uint32_t sel = 0, avail = 0;
				struct why why;

				memset(&why, 0, sizeof(why));

				for (uint32_t dev = 0; dev < ctx->n_devs; dev++) {
					struct dt_err ignored;
					struct search T = *S;
					bool ok;

					T.err = &ignored;
					if (!pool_usable(ctx, dev) ||
					    selectable(&T, cl, rq, dev, &ok) || !ok)
						continue;
					sel++;
					if (allocate_device(&T, cl, rq, dev, false) == R_DONE) {
						avail++;
						undo_device(&T, cl);
						S->caps = T.caps;
						S->cap_caps = T.cap_caps;
					} else {
						why_not(&T, cl, rq, dev, &why);
					}
				}
				/* (All wants at least one device, as the scheduler does) */
				if (avail >= rq->num && (avail || !rq->all))
					goto next_request;      /* this one could work */
				if (!worst) {
					worst = rq;
					w_sel = sel;
					w_free = avail;
					w_why = why;
				}
			}
			if (!ctx->n_target)
				/* Not "0 of the node's 0 devices match": name the cause. */
				snprintf(buf, n, "claim %s, request %s: node %s has no devices: no "
					 "ResourceSlice of the input is for it (by nodeName, "
					 "nodeSelector, allNodes or per-device node selection)",
					 cname(cl), worst->name, ctx->node.name ? ctx->node.name : "");
			else if (worst->all)
				snprintf(buf, n, "claim %s, request %s: asks for all %u matching "
					 "devices, but only %u of them are available", cname(cl),
					 worst->name, worst->num, w_free);
			else
				snprintf(buf, n, "claim %s, request %s: %u device%s of class %s "
					 "requested, %u of the node's %zu devices match the selectors, "
					 "%u of those are available", cname(cl), worst->name,
					 worst->num, worst->num == 1 ? "" : "s",
					 worst->cls->obj->meta.name, w_sel, ctx->n_devs, w_free);
			why_text(&w_why, buf, n);
			goto tail;
next_request:;
		}
	}
	/* Every request could be served on its own: try each claim alone. */
	for (size_t c = 0; c < S->n; c++) {
		struct sclaim *cl = &S->claims[c];
		struct dt_err ignored;
		struct search T = *S;
		size_t len;
		int r;

		T.claims = cl;
		T.n = 1;
		T.err = &ignored;       /* the steps left of the budget bound this too */
		r = alloc_one(&T, 0, 0, 0, 0, false, 0);
		S->steps = T.steps;
		S->caps = T.caps;
		S->cap_caps = T.cap_caps;
		if (r == R_DONE) {
			/* Found alone: undo it, the state must stay as it was. */
			while (cl->n_res)
				undo_device(&T, cl);
			continue;
		}
		if (r < 0)
			break;          /* budget: give the general answer */
		snprintf(buf, n, "claim %s: no combination of the matching devices satisfies "
			 "its constraints, capacity and counters", cname(cl));
		for (size_t i = 0; i < cl->n_cons && (len = strlen(buf)) + 80 < n; i++)
			snprintf(buf + len, n - len, "%s%s %s", i ? ", " : " (",
				 cl->cons[i].distinct ? "distinctAttribute" : "matchAttribute",
				 cl->cons[i].src->distinct_attribute ?
				 cl->cons[i].src->distinct_attribute : cl->cons[i].src->match_attribute);
		if (cl->n_cons && (len = strlen(buf)) + 2 < n)
			snprintf(buf + len, n - len, ")");
		goto tail;
	}
	snprintf(buf, n, "cannot allocate all claims together: each fits on its own, but "
		 "not all of them at once on the node's free devices");
tail:
	if (invalid && strlen(buf) + 80 < n)
		snprintf(buf + strlen(buf), n - strlen(buf), "; invalid resource pools were "
			 "encountered (%s/%s: %s)", bad->driver, bad->name, bad->invalid_reason);
	if (incomplete && strlen(buf) + 60 < n)
		snprintf(buf + strlen(buf), n - strlen(buf), "; %zu resource pool%s being "
			 "updated", incomplete, incomplete == 1 ? " is" : "s are");
}

/* ---- results ---- */

static bool config_applies(const struct model_device_config *cfg, const struct sclaim *cl)
{
	if (!cfg->n_requests)
		return true;
	for (size_t i = 0; i < cfg->n_requests; i++)
		for (size_t k = 0; k < cl->n_res; k++) {
			const struct sreq *rq = cl->res[k].rq;

			if (cfg->requests[i] && (!strcmp(cfg->requests[i], rq->main) ||
						 !strcmp(cfg->requests[i], rq->name)))
				return true;
		}
	return false;
}

static int build_config(struct search *S, const struct sclaim *cl, struct alloc_claim_result *out,
			struct alloc_mem *m)
{
	const struct model_claim_spec *spec = &cl->obj->u.claim.spec;
	size_t n = spec->n_config;

	for (size_t q = 0; q < cl->n_reqs; q++)
		n += cl->reqs[q].subs[cl->reqs[q].chosen].cls->obj->u.device_class.n_config;
	out->config = alloc_mem_get(m, (n + 1) * sizeof(*out->config));
	if (!out->config)
		return -ENOMEM;
	/* Each class's configs once, for the requests that use the class. */
	for (size_t q = 0; q < cl->n_reqs; q++) {
		const struct aclass *cls = cl->reqs[q].subs[cl->reqs[q].chosen].cls;
		const struct model_device_class_spec *cs = &cls->obj->u.device_class;
		const char **reqs;
		size_t nr = 0;
		bool seen = false;

		for (size_t p = 0; p < q; p++)
			seen |= cl->reqs[p].subs[cl->reqs[p].chosen].cls == cls;
		if (seen || !cs->n_config)
			continue;
		reqs = alloc_mem_get(m, cl->n_reqs * sizeof(*reqs));
		if (!reqs)
			return -ENOMEM;
		for (size_t p = q; p < cl->n_reqs; p++)
			if (cl->reqs[p].subs[cl->reqs[p].chosen].cls == cls)
				if (!(reqs[nr++] = alloc_mem_strdup(m,
						cl->reqs[p].subs[cl->reqs[p].chosen].name)))
					return -ENOMEM;
		for (size_t i = 0; i < cs->n_config; i++) {
			struct model_device_config *c = &out->config[out->n_config++];

			*c = cs->config[i];
			c->source = "FromClass";
			c->requests = nr == cl->n_reqs ? NULL : reqs;
			c->n_requests = nr == cl->n_reqs ? 0 : nr;
		}
	}
	for (size_t i = 0; i < spec->n_config; i++) {
		if (!config_applies(&spec->config[i], cl))
			continue;
		out->config[out->n_config] = spec->config[i];
		out->config[out->n_config++].source = "FromClaim";
	}
	(void)S;
	return 0;
}

static bool req_equal(const struct model_requirement *a, const struct model_requirement *b)
{
	if (a->op != b->op || strcmp(a->key ? a->key : "", b->key ? b->key : "") ||
	    a->n_values != b->n_values)
		return false;
	for (size_t i = 0; i < a->n_values; i++)
		if (strcmp(a->values[i] ? a->values[i] : "", b->values[i] ? b->values[i] : ""))
			return false;
	return true;
}

static int add_reqs(struct model_requirement **dst, size_t *n, size_t cap,
		    const struct model_requirement *src, size_t n_src)
{
	for (size_t i = 0; i < n_src; i++) {
		bool dup = false;

		for (size_t k = 0; k < *n && !dup; k++)
			dup = req_equal(&(*dst)[k], &src[i]);
		if (dup)
			continue;
		if (*n >= cap)
			return -E2BIG;
		(*dst)[(*n)++] = src[i];
	}
	return 0;
}

static int build_node_selector(struct search *S, const struct sclaim *cl,
			       struct alloc_claim_result *out, struct alloc_mem *m)
{
	struct model_node_selector *ns;
	struct model_node_selector_term *t;
	size_t n_exp = 0, n_fld = 0;
	bool local = false;

	for (size_t k = 0; k < cl->n_res; k++) {
		const struct adev *d = &S->ctx->devs[cl->res[k].dev];

		local |= d->node_local;
		if (d->node_selector && d->node_selector->n_terms) {
			n_exp += d->node_selector->terms[0].n_match_expressions;
			n_fld += d->node_selector->terms[0].n_match_fields;
		}
	}
	if (!local && !n_exp && !n_fld)
		return 0;       /* available everywhere */
	ns = alloc_mem_get(m, sizeof(*ns));
	t = alloc_mem_get(m, sizeof(*t));
	if (!ns || !t)
		return -ENOMEM;
	ns->terms = t;
	ns->n_terms = 1;
	out->node_selector = ns;
	if (local) {
		struct model_requirement *r = alloc_mem_get(m, sizeof(*r));
		const char **v = alloc_mem_get(m, sizeof(*v));

		if (!r || !v)
			return -ENOMEM;
		v[0] = S->ctx->node.name;
		r->key = "metadata.name";
		r->operator_text = "In";
		r->op = MODEL_OP_IN;
		r->values = v;
		r->n_values = 1;
		t->match_fields = r;
		t->n_match_fields = 1;
		return 0;
	}
	t->match_expressions = alloc_mem_get(m, (n_exp + 1) * sizeof(*t->match_expressions));
	t->match_fields = alloc_mem_get(m, (n_fld + 1) * sizeof(*t->match_fields));
	if (!t->match_expressions || !t->match_fields)
		return -ENOMEM;
	for (size_t k = 0; k < cl->n_res; k++) {
		const struct adev *d = &S->ctx->devs[cl->res[k].dev];
		const struct model_node_selector_term *st;

		if (!d->node_selector || !d->node_selector->n_terms)
			continue;
		st = &d->node_selector->terms[0];
		add_reqs(&t->match_expressions, &t->n_match_expressions, n_exp,
			 st->match_expressions, st->n_match_expressions);
		add_reqs(&t->match_fields, &t->n_match_fields, n_fld, st->match_fields,
			 st->n_match_fields);
	}
	return 0;
}

static int build_results(struct search *S, struct alloc_outcome *out)
{
	struct alloc_ctx *ctx = S->ctx;
	struct alloc_mem *m = out->mem;
	int rc;

	out->claims = alloc_mem_get(m, (S->n + 1) * sizeof(*out->claims));
	if (!out->claims)
		return -ENOMEM;
	out->n_claims = S->n;
	for (size_t c = 0; c < S->n; c++) {
		const struct sclaim *cl = &S->claims[c];
		struct alloc_claim_result *cr = &out->claims[c];

		cr->claim = cl->obj;
		cr->results = alloc_mem_get(m, (cl->n_res + 1) * sizeof(*cr->results));
		if (!cr->results)
			return -ENOMEM;
		cr->n_results = cl->n_res;
		for (size_t k = 0; k < cl->n_res; k++) {
			const struct sresult *r = &cl->res[k];
			const struct adev *d = &ctx->devs[r->dev];
			struct alloc_device_result *dr = &cr->results[k];

			/* "req/sub" lives in the search's memory, which goes. */
			dr->request = r->rq->sub ? alloc_mem_strdup(m, r->rq->name) : r->rq->name;
			if (!dr->request)
				return -ENOMEM;
			dr->driver = ctx->pools[d->pool].driver;
			dr->pool = ctx->pools[d->pool].name;
			dr->device = d->dev->name;
			dr->device_index = r->dev;
			dr->admin_access = r->rq->admin;
			dr->tolerations = r->rq->er->tolerations;
			dr->n_tolerations = r->rq->er->n_tolerations;
			dr->binding_conditions = (const char *const *)d->dev->binding_conditions;
			dr->n_binding_conditions = d->dev->n_binding_conditions;
			dr->binding_failure_conditions =
				(const char *const *)d->dev->binding_failure_conditions;
			dr->n_binding_failure_conditions = d->dev->n_binding_failure_conditions;
			if (!d->allow_multi)
				continue;
			{
				char *id = alloc_mem_get(m, ALLOC_SHARE_ID_LEN + 1);
				struct model_quantity_entry *q;

				if (!id)
					return -ENOMEM;
				ctx->opts.share_id(ctx->opts.share_id_arg, id);
				dr->share_id = id;
				if (r->cap_off == SIZE_MAX)
					continue;
				q = alloc_mem_get(m, d->dev->n_capacity * sizeof(*q));
				if (!q)
					return -ENOMEM;
				for (size_t i = 0; i < d->dev->n_capacity; i++) {
					q[i].name = d->dev->capacity[i].name;
					q[i].value = S->caps[r->cap_off + i];
					q[i].value.format = d->dev->capacity[i].value.format;
				}
				dr->consumed = q;
				dr->n_consumed = d->dev->n_capacity;
			}
		}
		rc = build_config(S, cl, cr, m);
		if (!rc)
			rc = build_node_selector(S, cl, cr, m);
		if (rc)
			return rc;
	}
	return 0;
}

/* ---- the public face ---- */

/* A lower bound on the exclusive devices one request takes, from the spec
 * alone: ExactCount's count, 0 for admin access and "All" (which may match
 * nothing), the smallest over firstAvailable's subrequests. */
static uint64_t exact_min_free(const struct model_exact_request *r)
{
	if (r->has_admin_access && r->admin_access)
		return 0;
	if (r->allocation_mode != MODEL_ALLOC_EXACT_COUNT || r->count <= 0)
		return 0;
	return (uint64_t)r->count;
}

static uint64_t spec_min_free(const struct model_object *o)
{
	const struct model_claim_spec *spec;
	uint64_t sum = 0;

	if (!o || o->kind != MODEL_RESOURCE_CLAIM)
		return 0;
	spec = &o->u.claim.spec;
	for (size_t i = 0; i < spec->n_requests; i++) {
		const struct model_device_request *dr = &spec->requests[i];
		uint64_t min = dr->exactly ? exact_min_free(dr->exactly) : UINT64_MAX;

		for (size_t k = 0; k < dr->n_first_available; k++) {
			uint64_t v = exact_min_free(&dr->first_available[k].req);

			if (v < min)
				min = v;
		}
		sum += min == UINT64_MAX ? 0 : min;
	}
	return sum;
}

/* Without reasons (the planner's and scheduler's filter over many nodes),
 * a node whose free exclusive devices are fewer than the claims' lower
 * bound is turned away before anything is prepared: a full node is the
 * common case of such a scan. Claim errors (unknown class, limits, bad
 * CEL) are found on the first node that can hold the devices, or when
 * the caller asks again with reasons. */
static bool cannot_fit(const struct alloc_ctx *ctx, const struct alloc_state *state,
		       const struct model_object *const *claims, size_t n_claims)
{
	size_t busy = state ? state->n_busy : 0;
	uint64_t needed = 0;

	if (!ctx->opts.no_reasons || ctx->n_shared_target)
		return false;
	for (size_t c = 0; c < n_claims; c++)
		needed += spec_min_free(claims[c]);
	return needed > ctx->n_target - busy;
}

int alloc_try(struct alloc_ctx *ctx, const struct alloc_state *state,
	      const struct model_object *const *claims, size_t n_claims,
	      struct alloc_outcome *out, struct dt_err *err)
{
	return alloc_try_opts(ctx, state, claims, n_claims, NULL, out, err);
}

int alloc_try_opts(struct alloc_ctx *ctx, const struct alloc_state *state,
		   const struct model_object *const *claims, size_t n_claims,
		   const struct alloc_try_options *topts, struct alloc_outcome *out,
		   struct dt_err *err)
{
	struct search S;
	uint64_t needed;
	int rc = 0, r;

	out->allocated = false;
	out->reason[0] = '\0';
	out->claims = NULL;
	out->n_claims = 0;
	out->steps = 0;
	out->mem = NULL;
	memset(&S, 0, sizeof(S));
	S.ctx = ctx;
	S.err = err;
	S.max_steps = ctx->opts.max_steps;
	S.n = n_claims;
	if (state && state->ctx != ctx)
		return dt_err_set(err, -EINVAL, "allocator: the state belongs to another node");
	if (cannot_fit(ctx, state, claims, n_claims))
		return 0;
	if (!ctx->scratch && !(ctx->scratch = alloc_mem_new()))
		return dt_err_set(err, -ENOMEM, "out of memory");
	if (!ctx->scratch_state && !(ctx->scratch_state = alloc_state_new(ctx)))
		return dt_err_set(err, -ENOMEM, "out of memory");
	alloc_mem_reset(ctx->scratch);
	S.mem = ctx->scratch;
	S.st = ctx->scratch_state;
	if (state)
		alloc_state_copy(S.st, state);
	else
		alloc_state_clear(S.st);
	S.claims = alloc_mem_get(S.mem, (n_claims + 1) * sizeof(*S.claims));
	if (!S.claims)
		return dt_err_set(err, -ENOMEM, "out of memory");
	for (size_t c = 0; c < n_claims; c++) {
		rc = prepare_claim(&S, &S.claims[c], claims[c]);
		if (rc)
			goto out;
	}
	/* A node without enough free exclusive devices cannot help: skip
	 * the search (a full node in the planner's scan is the common case,
	 * and asking for n devices where n-1 are free would otherwise walk
	 * every subset). Shared devices serve any number of requests. */
	needed = 0;
	for (size_t c = 0; c < n_claims; c++)
		needed += S.claims[c].min_free;
	if (!ctx->n_shared_target && needed > ctx->n_target - S.st->n_busy)
		r = R_FAIL;
	else
		r = alloc_one(&S, 0, 0, 0, 0, false, 0);
	out->steps = S.steps;
	if (r < 0) {
		rc = r;
		goto out;
	}
	if (r != R_DONE) {
		if (!ctx->opts.no_reasons && !(topts && topts->no_reasons))
			explain(&S, out->reason, sizeof(out->reason));
		goto out;
	}
	out->allocated = true;
	out->mem = alloc_mem_new();
	rc = out->mem ? build_results(&S, out) : -ENOMEM;
	if (rc)
		rc = dt_err_set(err, rc, "out of memory");
out:
	free(S.caps);
	return rc;
}

void alloc_outcome_free(struct alloc_outcome *out)
{
	if (!out)
		return;
	alloc_mem_free(out->mem);
	out->mem = NULL;
	out->claims = NULL;
	out->n_claims = 0;
	out->allocated = false;
	out->reason[0] = '\0';
}

int alloc_state_commit(struct alloc_state *s, const struct alloc_outcome *o)
{
	if (!s || !o || !o->allocated)
		return -EINVAL;
	for (size_t c = 0; c < o->n_claims; c++) {
		const struct alloc_claim_result *cr = &o->claims[c];

		for (size_t k = 0; k < cr->n_results; k++) {
			const struct alloc_device_result *dr = &cr->results[k];
			struct quantity consumed[64];
			const struct adev *d;

			if (dr->admin_access || dr->device_index >= s->ctx->n_devs)
				continue;
			d = &s->ctx->devs[dr->device_index];
			if (!d->allow_multi) {
				alloc_state_take(s, dr->device_index, NULL);
				continue;
			}
			memset(consumed, 0, sizeof(consumed));
			for (size_t i = 0; i < dr->n_consumed && i < 64; i++)
				consumed[i] = dr->consumed[i].value;
			alloc_state_take(s, dr->device_index, consumed);
		}
	}
	return 0;
}
