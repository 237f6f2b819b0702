/* ctrl_running.c - what runs in the cluster, for plans against the fleet
 * (coord_cluster_source, `dratopo plan --coordinator`): the Pods bound to
 * a node that have not finished, and the ResourceClaims allocated, from
 * the informers' caches, so that the devices running pods hold are not
 * counted free. The controller's own plans do not need them (they place
 * pending pods on nodes by the slices and claims the planner sees). */
#include <errno.h>
#include <string.h>

#include "ctrl_internal.h"

struct running_ctx {
	struct model_set *set;          /* the plan's: what is added */
	struct model_set *scratch;      /* each object decoded once, to look at */
	struct dt_diags *diags;
	enum model_kind kind;
};

static bool running(const struct model_object *o)
{
	const char *phase;

	if (o->kind == MODEL_RESOURCE_CLAIM)
		return o->u.claim.status.allocation != NULL;
	if (o->kind != MODEL_POD || !o->u.pod.spec.node_name)
		return false;
	phase = o->u.pod.status.phase;
	return !phase || (strcmp(phase, "Succeeded") && strcmp(phase, "Failed"));
}

static int add_one(void *arg, const struct kube_object *obj)
{
	struct running_ctx *r = arg;
	struct model_object *m = NULL;
	struct dt_err err = { 0 };

	if (obj->problems[0] || model_set_find(r->set, r->kind, obj->ns, obj->name))
		return 0;       /* refused by the model, or the request's manifests have it */
	if (kube_decode(r->scratch, obj->json, obj->json_len, "kube-apiserver", NULL, &m, NULL) < 0)
		return -ENOMEM;
	if (!m || m->kind != r->kind || !running(m))
		return 0;
	if (model_set_load_buffer(r->set, obj->json, obj->json_len, "kube-apiserver", r->diags,
				  &err) < 0) {
		dt_diags_add(r->diags, "dratopo plan: the cluster's %s/%s: %s", obj->ns, obj->name,
			     err.msg);
		return err.code ? err.code : -ENOMEM;
	}
	return 0;
}

int ctrl_cluster_add(void *arg, struct model_set *set, struct dt_diags *diags)
{
	static const struct { size_t which; enum model_kind kind; } kinds[] = {
		{ W_CLAIMS, MODEL_RESOURCE_CLAIM }, { W_PODS, MODEL_POD },
	};
	struct ctrl *c = arg;
	struct running_ctx r = { set, model_set_new(), diags, MODEL_POD };
	int rc = 0;

	if (!r.scratch) {
		dt_diags_add(diags, "dratopo plan: out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; !rc && i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if (!kube_informer_synced(c->inf[kinds[i].which])) {
			dt_diags_add(diags, "dratopo plan: the cluster's %s: not synced yet",
				     kinds[i].kind == MODEL_POD ? "pods" : "resource claims");
			rc = -EAGAIN;
			break;
		}
		r.kind = kinds[i].kind;
		rc = kube_informer_foreach(c->inf[kinds[i].which], add_one, &r);
		if (rc == -ENOMEM)
			dt_diags_add(diags, "dratopo plan: out of memory");
	}
	model_set_free(r.scratch);
	return rc;
}
