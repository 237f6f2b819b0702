/* alloc_model.c - an allocation result as a model object's
 * status.allocation, for model_encode and `dratopo allocate -o yaml`.
 * Names and quantities are copied into the set's arena; tolerations,
 * configs and node selector requirements point at the inputs (the claim,
 * the classes, the slices), which the caller keeps alive. */
#include <string.h>

#include "alloc_internal.h"

static const char *dup(struct model_set *s, const char *str)
{
	return str ? model_set_strdup(s, str) : NULL;
}

int alloc_result_to_model(const struct alloc_claim_result *r, struct model_set *set,
			  struct model_allocation **out)
{
	struct model_allocation *a = model_set_alloc(set, sizeof(*a));

	*out = NULL;
	if (!a)
		return -ENOMEM;
	if (r->n_results) {
		a->results = model_set_calloc(set, r->n_results, sizeof(*a->results));
		if (!a->results)
			return -ENOMEM;
	}
	a->n_results = r->n_results;
	for (size_t i = 0; i < r->n_results; i++) {
		const struct alloc_device_result *dr = &r->results[i];
		struct model_allocation_result *m = &a->results[i];

		m->request = dup(set, dr->request);
		m->driver = dup(set, dr->driver);
		m->pool = dup(set, dr->pool);
		m->device = dup(set, dr->device);
		if (!m->request || !m->driver || !m->pool || !m->device)
			return -ENOMEM;
		if (dr->admin_access) {
			m->has_admin_access = true;
			m->admin_access = true;
		}
		m->tolerations = (struct model_toleration *)dr->tolerations;
		m->n_tolerations = dr->n_tolerations;
		m->binding_conditions = (const char **)dr->binding_conditions;
		m->n_binding_conditions = dr->n_binding_conditions;
		m->binding_failure_conditions = (const char **)dr->binding_failure_conditions;
		m->n_binding_failure_conditions = dr->n_binding_failure_conditions;
		if (dr->share_id && !(m->share_id = dup(set, dr->share_id)))
			return -ENOMEM;
		if (dr->n_consumed) {
			m->consumed_capacity.items = model_set_calloc(set, dr->n_consumed,
								      sizeof(*m->consumed_capacity.items));
			if (!m->consumed_capacity.items)
				return -ENOMEM;
			m->consumed_capacity.n_items = dr->n_consumed;
			for (size_t k = 0; k < dr->n_consumed; k++) {
				m->consumed_capacity.items[k].name = dup(set, dr->consumed[k].name);
				m->consumed_capacity.items[k].value = dr->consumed[k].value;
			}
		}
	}
	if (r->n_config) {
		a->config = model_set_calloc(set, r->n_config, sizeof(*a->config));
		if (!a->config)
			return -ENOMEM;
		memcpy(a->config, r->config, r->n_config * sizeof(*a->config));
		a->n_config = r->n_config;
	}
	if (r->node_selector) {
		struct model_node_selector *ns = model_set_alloc(set, sizeof(*ns));
		struct model_node_selector_term *t = model_set_alloc(set, sizeof(*t));

		if (!ns || !t)
			return -ENOMEM;
		*t = r->node_selector->terms[0];
		ns->terms = t;
		ns->n_terms = 1;
		a->node_selector = ns;
	}
	*out = a;
	return 0;
}
