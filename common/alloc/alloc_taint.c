/* alloc_taint.c - device taints and the requests' tolerations, with the
 * rules of core/v1 tolerations: a toleration with an effect tolerates
 * only that effect; operator Exists matches any value (and, with an empty
 * key, any taint); Equal needs key and value equal. Only NoSchedule and
 * NoExecute keep a device from being allocated; None and effects this
 * version does not know are ignored. Admin access does not bypass taints.
 *
 * A device's taints are the ones its slice writes plus those of every
 * DeviceTaintRule (alloc_options.taint_rules) whose selector selects it,
 * as the scheduler's ResourceSlice tracker merges them: the rules are
 * matched once per ctx (alloc_taint_rules_apply) and each device keeps
 * the rules that select it. */
#include <errno.h>
#include <string.h>

#include "alloc_internal.h"

static bool str_eq(const char *a, const char *b)
{
	return !strcmp(a ? a : "", b ? b : "");
}

bool alloc_toleration_matches(const struct model_toleration *t, const struct model_taint *taint)
{
	const char *op = t->operator_text && *t->operator_text ? t->operator_text : "Equal";

	if (t->effect && *t->effect && !str_eq(t->effect, taint->effect))
		return false;
	if (!strcmp(op, "Exists"))
		return !t->key || !*t->key || str_eq(t->key, taint->key);
	if (!strcmp(op, "Equal"))
		return str_eq(t->key, taint->key) && str_eq(t->value, taint->value);
	return false;
}

/* Does taint keep a request with tolerations t from the device? */
static bool taint_refuses(const struct model_taint *taint, const struct model_toleration *t,
			  size_t n_t)
{
	if (!taint->effect || (strcmp(taint->effect, "NoSchedule") &&
			       strcmp(taint->effect, "NoExecute")))
		return false;
	for (size_t j = 0; j < n_t; j++)
		if (alloc_toleration_matches(&t[j], taint))
			return false;
	return true;
}

const struct model_taint *alloc_taint_untolerated(const struct adev *d,
						  const struct model_toleration *t, size_t n_t,
						  const struct model_object **rule)
{
	if (rule)
		*rule = NULL;
	for (size_t i = 0; i < d->dev->n_taints; i++)
		if (taint_refuses(&d->dev->taints[i], t, n_t))
			return &d->dev->taints[i];
	for (uint32_t i = 0; i < d->n_rules; i++) {
		const struct model_taint *taint = &d->rules[i]->u.taint_rule.taint;

		if (taint_refuses(taint, t, n_t)) {
			if (rule)
				*rule = d->rules[i];
			return taint;
		}
	}
	return NULL;
}

bool alloc_taints_tolerated(const struct adev *d, const struct model_toleration *t, size_t n_t)
{
	return !alloc_taint_untolerated(d, t, n_t, NULL);
}

/* The DeviceTaintSelector rules: no selector selects nothing, an empty one
 * everything; each field that is set must equal the device's. */
static bool rule_selects(const struct model_object *rule, const struct apool *p,
			 const struct model_device *dev)
{
	const struct model_device_taint_selector *s = rule->u.taint_rule.device_selector;

	if (!s)
		return false;
	return (!s->driver || str_eq(s->driver, p->driver)) &&
	       (!s->pool || str_eq(s->pool, p->name)) &&
	       (!s->device || str_eq(s->device, dev->name));
}

/* Count (out NULL) or record the rules that select device i. */
static uint32_t device_rules(const struct alloc_ctx *ctx, size_t i,
			     const struct model_object **out)
{
	const struct adev *d = &ctx->devs[i];
	uint32_t n = 0;

	for (size_t r = 0; r < ctx->opts.n_taint_rules; r++) {
		const struct model_object *rule = ctx->opts.taint_rules[r];

		if (!rule || rule->kind != MODEL_DEVICE_TAINT_RULE ||
		    !rule_selects(rule, &ctx->pools[d->pool], d->dev))
			continue;
		if (out)
			out[n] = rule;
		n++;
	}
	return n;
}

int alloc_taint_rules_apply(struct alloc_ctx *ctx)
{
	for (size_t i = 0; ctx->opts.n_taint_rules && i < ctx->n_devs; i++) {
		struct adev *d = &ctx->devs[i];
		uint32_t n = device_rules(ctx, i, NULL);
		const struct model_object **v;

		if (!n)
			continue;
		v = alloc_mem_get(ctx->mem, n * sizeof(*v));
		if (!v)
			return -ENOMEM;
		d->n_rules = device_rules(ctx, i, v);
		d->rules = v;
	}
	return 0;
}
