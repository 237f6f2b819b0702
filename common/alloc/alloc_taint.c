/* alloc_taint.c - device taints and the requests' tolerations, with the
 * rules of core/v1 tolerations: a toleration with an effect tolerates
 * only that effect; operator Exists matches any value (and, with an empty
 * key, any taint); Equal needs key and value equal. Only NoSchedule and
 * NoExecute keep a device from being allocated; None and effects this
 * version does not know are ignored. Admin access does not bypass taints. */
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

const struct model_taint *alloc_taint_untolerated(const struct model_device *d,
						  const struct model_toleration *t, size_t n_t)
{
	for (size_t i = 0; i < d->n_taints; i++) {
		const struct model_taint *taint = &d->taints[i];
		bool ok = false;

		if (!taint->effect || (strcmp(taint->effect, "NoSchedule") &&
				       strcmp(taint->effect, "NoExecute")))
			continue;
		for (size_t j = 0; j < n_t && !ok; j++)
			ok = alloc_toleration_matches(&t[j], taint);
		if (!ok)
			return taint;
	}
	return NULL;
}

bool alloc_taints_tolerated(const struct model_device *d, const struct model_toleration *t,
			    size_t n_t)
{
	return !alloc_taint_untolerated(d, t, n_t);
}
