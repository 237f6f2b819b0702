/* ctrl_offers.c - offerings that failed to launch, avoided for a while,
 * as Karpenter's own unavailable-offerings cache does
 * (aws/karpenter-provider-aws pkg/cache/unavailableofferings.go): keyed by
 * capacity type, instance type and zone, 3 minutes each, a second failure
 * extending the time. A NodeClaim of ours that Karpenter deleted before it
 * became a node (insufficient capacity, a node class not ready, no
 * registration within its TTL) failed in every zone it allowed: the zones
 * of its In requirement, or every zone when it named none (or excluded
 * some: the rest cannot be listed). The planner then launches the type
 * elsewhere, or another type. */
#include <stdio.h>
#include <string.h>

#include "ctrl_internal.h"
#include "obs_log.h"

#define ZONE_KEY "topology.kubernetes.io/zone"
#define CT_KEY "karpenter.sh/capacity-type"

static void mark(struct ctrl *c, const char *claim, const char *type, const char *zone,
		 const char *ct, int64_t now)
{
	size_t i, slot = SIZE_MAX, soonest = 0;

	for (i = 0; i < c->n_offers; i++) {
		struct ctrl_offer *o = &c->offers[i];

		if (!strcmp(o->type, type) && !strcmp(o->zone, zone) && !strcmp(o->ct, ct)) {
			slot = i;       /* again: it is avoided longer */
			break;
		}
		if (o->until_ms <= now && slot == SIZE_MAX)
			slot = i;
		if (o->until_ms < c->offers[soonest].until_ms)
			soonest = i;
	}
	if (slot == SIZE_MAX)
		slot = c->n_offers < OFFERS_MAX ? c->n_offers++ : soonest;
	snprintf(c->offers[slot].type, sizeof(c->offers[slot].type), "%s", type);
	snprintf(c->offers[slot].zone, sizeof(c->offers[slot].zone), "%s", zone);
	snprintf(c->offers[slot].ct, sizeof(c->offers[slot].ct), "%s", ct);
	c->offers[slot].until_ms = now + OFFER_TTL_MS;
	obs_log(OBS_WARN, "offering_unavailable", "nodeclaim", claim, "instance_type", type,
		"zone", zone[0] ? zone : "any", "capacity_type", ct[0] ? ct : "any",
		"ttl", "3m", NULL);
}

void ctrl_offers_failed(struct ctrl *c, const struct model_object *o)
{
	const struct model_node_claim *nc = &o->u.node_claim;
	const char *type = ctrl_claim_type(nc), *ct = ctrl_claim_req(nc, CT_KEY);
	const struct model_requirement *zones = NULL;
	int64_t now = ctrl_now_ms();

	if (!type || nc->node_name || !ctrl_ours(o))
		return;
	for (size_t i = 0; i < nc->n_requirements; i++)
		if (!strcmp(nc->requirements[i].key, ZONE_KEY) &&
		    nc->requirements[i].op == MODEL_OP_IN)
			zones = &nc->requirements[i];
	if (!zones || !zones->n_values) {
		mark(c, o->meta.name, type, "", ct ? ct : "", now);
		return;
	}
	for (size_t i = 0; i < zones->n_values; i++)
		mark(c, o->meta.name, type, zones->values[i], ct ? ct : "", now);
}

int ctrl_offers_list(struct ctrl *c, struct model_set *set, struct plan_unavailable **out,
		     size_t *n)
{
	int64_t now = ctrl_now_ms();
	struct plan_unavailable *u;
	int rc = 0;

	*out = NULL;
	*n = 0;
	pthread_mutex_lock(&c->lock);
	u = c->n_offers ? model_set_calloc(set, c->n_offers, sizeof(*u)) : NULL;
	if (c->n_offers && !u)
		rc = -ENOMEM;
	for (size_t i = 0; u && i < c->n_offers; i++) {
		const struct ctrl_offer *o = &c->offers[i];
		struct plan_unavailable *p = &u[*n];

		if (o->until_ms <= now)
			continue;
		p->instance_type = model_set_strdup(set, o->type);
		p->zone = o->zone[0] ? model_set_strdup(set, o->zone) : NULL;
		p->capacity_type = o->ct[0] ? model_set_strdup(set, o->ct) : NULL;
		if (!p->instance_type || (o->zone[0] && !p->zone) || (o->ct[0] && !p->capacity_type)) {
			rc = -ENOMEM;
			break;
		}
		(*n)++;
	}
	pthread_mutex_unlock(&c->lock);
	*out = u;
	return rc;
}
