/* plan_result.c - what the planner's steps share to build the result:
 * strings in the result's arena, pod and claim ids, and the recording of
 * the allocator's outcome for a placed unit (its claims' devices and the
 * drivers a new node needs). */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan_state.h"

/* memcpy that accepts NULL when there is nothing to copy. */
void plan_copy(void *dst, const void *src, size_t n)
{
	if (n)
		memcpy(dst, src, n);
}

const char *plan_astr(struct planner *pl, const char *s)
{
	return doc_arena_strdup(pl->res->arena, s ? s : "");
}

const char *plan_afmt(struct planner *pl, const char *fmt, ...)
{
	char buf[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return plan_astr(pl, buf);
}

/* "ns/name" in the result's arena, made for every pod and claim placed:
 * no printf. */
static const char *ns_name(struct planner *pl, const char *ns, const char *name)
{
	size_t ln = strlen(ns), lm = strlen(name);
	char *s = doc_arena_alloc(pl->res->arena, ln + lm + 2);

	if (!s)
		return NULL;
	memcpy(s, ns, ln);
	s[ln] = '/';
	memcpy(s + ln + 1, name, lm + 1);
	return s;
}

const char *plan_pod_id(struct planner *pl, const struct plan_pod *p)
{
	return ns_name(pl, p->ns, p->name);
}

/* Placing asks the allocator only whether; plan_reasons.c asks why. */
const struct alloc_try_options plan_no_reasons = { .no_reasons = true };

/* ---- Recording placements ---- */

/* The claim's own string for a request name, when the outcome's is one
 * (a request without a subrequest); NULL otherwise. */
static const char *request_name(const struct model_object *claim, const char *name)
{
	const struct model_claim_spec *spec = &claim->u.claim.spec;

	for (size_t i = 0; i < spec->n_requests; i++)
		if (spec->requests[i].name == name)
			return name;
	return NULL;
}

int plan_record_outcome(struct planner *pl, const struct alloc_outcome *o,
			  struct vec_claims *vc, struct vec_str *drivers)
{
	struct doc_arena *a = pl->res->arena;

	for (size_t i = 0; i < o->n_claims; i++) {
		const struct alloc_claim_result *cr = &o->claims[i];
		struct plan_claim *pc;

		if (DT_GROW(vc->v, vc->cap, vc->n + 1))
			return -ENOMEM;
		pc = &vc->v[vc->n++];
		pc->claim = ns_name(pl, cr->claim->meta.ns, cr->claim->meta.name);
		pc->n_results = cr->n_results;
		pc->results = doc_arena_alloc(a, (cr->n_results + 1) * sizeof(*pc->results));
		if (!pc->claim || !pc->results)
			return -ENOMEM;
		for (size_t k = 0; k < cr->n_results; k++) {
			const struct alloc_device_result *r = &cr->results[k];
			struct plan_device *d = &pc->results[k];
			bool seen = false;

			/* Driver, pool and device are the slices' strings, and a
			 * request without a subrequest is the claim's: objects of
			 * the set, which the result may borrow from. "req/sub" and
			 * the share ID are the outcome's, which goes. */
			d->request = r->request == request_name(cr->claim, r->request) ? r->request
				     : plan_astr(pl, r->request);
			d->driver = r->driver;
			d->pool = r->pool;
			d->device = r->device;
			d->share_id = r->share_id ? plan_astr(pl, r->share_id) : NULL;
			if (!d->request || (r->share_id && !d->share_id))
				return -ENOMEM;
			if (!drivers)
				continue;
			for (size_t j = 0; j < drivers->n && !seen; j++)
				seen = !strcmp(drivers->v[j], d->driver);
			if (seen)
				continue;
			if (DT_GROW(drivers->v, drivers->cap, drivers->n + 1))
				return -ENOMEM;
			drivers->v[drivers->n++] = d->driver;
		}
	}
	return 0;
}

int plan_push_str(struct vec_str *v, const char *s)
{
	if (!s || DT_GROW(v->v, v->cap, v->n + 1))
		return -ENOMEM;
	v->v[v->n++] = s;
	return 0;
}
