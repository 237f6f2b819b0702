/* ctrl_verify.c - a NodeClaim of ours became a Node and its drivers
 * published their ResourceSlices: what they published is compared with
 * what the plan counted on (hwdb's prediction for the type, under its node
 * class's consumable-capacity mode and MIG layout: ctrl_predict): per driver,
 * the devices and the PCIe roots they sit on. A difference is a Warning
 * Event on the Node (SlicesDiffer) and dratopo_kube_slice_mismatches_total;
 * each node is judged once, when its slices first appear. Device names are
 * not compared: drivers name devices their own way (DRANET by PCI
 * address), the plan only counts on how many there are and where. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctrl_internal.h"
#include "hash.h"
#include "hwdb.h"
#include "obs_log.h"
#include "obs_metrics.h"

#define ROOT_ATTR "resource.kubernetes.io/pcieRoot"
#define DRIVERS_MAX 8

struct tally {
	const char *driver;
	size_t devices;
	const char *roots[256];
	size_t n_roots;
};

static struct tally *tally_for(struct tally *t, size_t *n, const char *driver)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcmp(t[i].driver, driver))
			return &t[i];
	if (*n == DRIVERS_MAX)
		return NULL;
	memset(&t[*n], 0, sizeof(t[*n]));
	t[*n].driver = driver;
	return &t[(*n)++];
}

static void count_slice(struct tally *t, size_t *n, const struct model_resource_slice_spec *s)
{
	struct tally *d = s->driver ? tally_for(t, n, s->driver) : NULL;

	for (size_t i = 0; d && i < s->n_devices; i++) {
		const struct model_device *dev = &s->devices[i];

		d->devices++;
		for (size_t a = 0; a < dev->n_attributes; a++) {
			const struct model_attribute *at = &dev->attributes[a];
			bool seen = false;

			if (strcmp(at->name, ROOT_ATTR) || at->type != CEL_ATTR_STRING)
				continue;
			for (size_t r = 0; r < d->n_roots; r++)
				seen |= !strcmp(d->roots[r], at->v.str.s);
			if (!seen && d->n_roots < 256)
				d->roots[d->n_roots++] = at->v.str.s;
		}
	}
}

/* "gpu.nvidia.com: 7 devices on 7 PCIe roots, the plan counted 8 on 8" for
 * each driver that differs; empty when none does. */
static void compare(const struct tally *live, size_t n_live, const struct tally *want,
		    size_t n_want, struct strbuf *out)
{
	for (size_t i = 0; i < n_want; i++) {
		const struct tally *l = NULL;

		for (size_t j = 0; j < n_live; j++)
			if (!strcmp(live[j].driver, want[i].driver))
				l = &live[j];
		if (l && l->devices == want[i].devices && l->n_roots == want[i].n_roots)
			continue;
		sb_printf(out, "%s%s: %zu devices on %zu PCIe roots, the plan counted %zu on %zu",
			  out->len ? "; " : "", want[i].driver, l ? l->devices : 0,
			  l ? l->n_roots : 0, want[i].devices, want[i].n_roots);
	}
}

static bool judged(struct ctrl *c, const char *node, bool mark)
{
	uint64_t h = hash_field(HASH_FNV_OFFSET, node) | 1;
	bool seen;

	pthread_mutex_lock(&c->lock);
	seen = u64map_get(&c->judged, h, NULL);
	if (!seen && mark)
		u64map_put(&c->judged, h, 1);  /* no room: judged again, harmless */
	pthread_mutex_unlock(&c->lock);
	return seen;
}

static void verify_node(struct ctrl *c, struct model_set *set, const struct model_object *claim,
			const char *type)
{
	const char *node = claim->u.node_claim.node_name;
	struct tally live[DRIVERS_MAX], want[DRIVERS_MAX];
	size_t n_live = 0, n_want = 0, n = 0;
	struct model_object *o, *pred[HWDB_MAX_SLICES];
	struct model_set *scratch;
	struct strbuf diff = STRBUF_INIT;

	if (judged(c, node, false))
		return;
	/* the slices read from the API server (not those predicted for a
	 * node whose drivers have not published: they are built in code) */
	for (o = NULL; (o = model_set_next(set, MODEL_RESOURCE_SLICE, o));)
		if (o->src.file && o->u.slice.node_name && !strcmp(o->u.slice.node_name, node))
			count_slice(live, &n_live, &o->u.slice);
	if (!n_live)
		return;                 /* the drivers have not published yet */
	scratch = model_set_new();
	if (!scratch || ctrl_predict(set, scratch, claim, node, pred, &n, NULL)) {
		model_set_free(scratch);
		return;
	}
	for (size_t i = 0; i < n; i++)
		count_slice(want, &n_want, &pred[i]->u.slice);
	compare(live, n_live, want, n_want, &diff);
	judged(c, node, true);
	if (diff.len && !sb_error(&diff)) {
		struct kube_objref ref = { "v1", "Node", NULL, node, NULL };

		obs_log(OBS_WARN, "slices_differ", "node", node, "nodeclaim", claim->meta.name,
			"instance_type", type, "difference", sb_str(&diff), NULL);
		obs_inc(c->s_mismatch);
		if (!c->o.dry_run)
			kube_event(c->rec, &ref, "Warning", "SlicesDiffer", "Verifying",
				   "%s (%s): %s", claim->meta.name, type, sb_str(&diff));
	} else {
		obs_log(OBS_INFO, "slices_match", "node", node, "instance_type", type, NULL);
	}
	sb_free(&diff);
	model_set_free(scratch);
}

void ctrl_verify_registered(struct ctrl *c, struct model_set *set)
{
	struct model_object *o;

	for (o = NULL; (o = model_set_next(set, MODEL_NODE_CLAIM, o));) {
		const char *type = ctrl_claim_type(&o->u.node_claim);

		if (type && o->u.node_claim.node_name && ctrl_ours(o) &&
		    model_set_find(set, MODEL_NODE, NULL, o->u.node_claim.node_name))
			verify_node(c, set, o, type);
	}
}
