/* ctrl_objects.c - what the controller reads of, and adds to, the objects
 * it handles, for all of its files: a NodeClaim's requirements of one
 * value (its instance type, capacity type, zone), whether an object is
 * ours (app.kubernetes.io/managed-by=dratopo), a key=value appended to an
 * object's labels or annotations. */
#include <string.h>

#include "ctrl_internal.h"

bool ctrl_ours(const struct model_object *o)
{
	for (size_t i = 0; i < o->meta.n_labels; i++)
		if (!strcmp(o->meta.labels[i].key, CTRL_MANAGED_BY_KEY) &&
		    !strcmp(o->meta.labels[i].value, CTRL_MANAGED_BY))
			return true;
	return false;
}

const char *ctrl_claim_req(const struct model_node_claim *nc, const char *key)
{
	for (size_t i = 0; i < nc->n_requirements; i++) {
		const struct model_requirement *r = &nc->requirements[i];

		if (!strcmp(r->key, key) && r->op == MODEL_OP_IN && r->n_values == 1)
			return r->values[0];
	}
	return NULL;
}

const char *ctrl_claim_type(const struct model_node_claim *nc)
{
	return ctrl_claim_req(nc, "node.kubernetes.io/instance-type");
}

int ctrl_add_kv(struct model_set *set, struct model_kv **items, size_t *n, const char *key,
		  const char *value)
{
	struct model_kv *kv = model_set_calloc(set, *n + 1, sizeof(*kv));

	if (!kv)
		return -ENOMEM;
	if (*n)
		memcpy(kv, *items, *n * sizeof(*kv));
	kv[*n].key = model_set_strdup(set, key);
	kv[*n].value = model_set_strdup(set, value);
	*items = kv;
	(*n)++;
	return kv[*n - 1].key && kv[*n - 1].value ? 0 : -ENOMEM;
}
