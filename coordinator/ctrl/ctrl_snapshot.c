/* ctrl_snapshot.c - the cluster as the planner's input, taken from the
 * informers' caches: every object the model accepted, but pending pods
 * that ask for neither claims nor extended resources a DeviceClass backs
 * (Karpenter's: nvidia.com/gpu of the device plugin among them), pods a
 * scheduling gate holds, pods still waiting for what their plan needs
 * (ctrl_batch.c), Nodes the fleet keeps out (in drift, stale, in
 * conflict); then each NodeClaim in flight
 * (launched, not yet a Node) as a node of its type with the slices its
 * node class makes hwdb predict, so the pods it was made for find their
 * place there instead of on a second one; a NodeClaim's Node as Karpenter's
 * scheduler models it until it is initialized (the taints a node loses as
 * it comes up left out) and, until its drivers publish, with the same
 * predicted slices; the pods each of our NodeClaims was made for, for the
 * planner to try there first (QA-75); then the offerings that failed to
 * launch lately, for the planner to avoid. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctrl_internal.h"
#include "hash.h"
#include "hwdb.h"

struct load_ctx {
	struct ctrl *c;
	size_t which;
	struct model_set *set;
	const struct u64map *prints;    /* a copy of the batch's: pods' classes */
	const struct u64map *waiting;   /* pods left out */
	struct dt_err *err;
};

/* Whether the plan takes a pod: of the class the batch saw last (one it
 * has not seen yet, its event still on the way, is decoded here), not
 * waiting for its inputs; one asking for extended resources only when a
 * DeviceClass backs one of them (the DeviceClasses are in l->set already:
 * they load first), so that a DeviceClass created after the pod counts. */
static bool pod_planned(struct load_ctx *l, const struct kube_object *obj)
{
	uint64_t key = ctrl_object_key(W_PODS, obj->ns, obj->name), v;
	struct model_set *s;
	struct model_object *m = NULL;
	bool take = false;

	if (u64map_get(l->waiting, key, NULL))
		return false;
	if (u64map_get(l->prints, key, &v) && (v & 3) != POD_EXTRES)
		return (v & 3) != POD_OTHER;
	if (!(s = model_set_new()))
		return false;
	if (kube_decode(s, obj->json, obj->json_len, "kube-apiserver", NULL, &m, NULL) >= 0 && m) {
		enum ctrl_pod_class cls = ctrl_pod_class(m);

		take = cls == POD_EXTRES ? ctrl_pod_asks_extended(m, l->set) : cls != POD_OTHER;
	}
	model_set_free(s);
	return take;
}

static int load_one(void *arg, const struct kube_object *obj)
{
	struct load_ctx *l = arg;

	if (obj->problems[0])
		return 0;               /* refused by the model: logged by the informer */
	if (l->which == W_PODS && !pod_planned(l, obj))
		return 0;
	if (l->which == W_NODES && l->c->o.node_excluded &&
	    l->c->o.node_excluded(l->c->o.node_arg, obj->name))
		return 0;
	return model_set_load_buffer(l->set, obj->json, obj->json_len, "kube-apiserver", NULL,
				     l->err) < 0 ? -ENOMEM : 0;
}

/* The EC2NodeClass a NodeClaim launches with, in set; NULL for another
 * kind of node class (KWOKNodeClass) or none. */
static const struct model_object *claim_class(const struct model_set *set,
					      const struct model_node_claim *nc)
{
	const struct model_node_class_ref *r = &nc->node_class_ref;

	if (!r->name || (r->kind && strcmp(r->kind, "EC2NodeClass")))
		return NULL;
	return model_set_find(set, MODEL_EC2_NODE_CLASS, NULL, r->name);
}

int ctrl_predict(const struct model_set *classes, struct model_set *into,
		 const struct model_object *claim, const char *node, struct model_object **out,
		 size_t *n, struct dt_err *err)
{
	const char *type = ctrl_claim_type(&claim->u.node_claim);
	const struct hwdb_type *t = type ? hwdb_lookup(type) : NULL;

	*n = 0;
	if (!t)
		return dt_err_set(err, -ENOENT, "NodeClaim %s: no instance type hwdb knows",
				  claim->meta.name);
	return plan_node_slices(t, claim_class(classes, &claim->u.node_claim), node, into, out, n,
				err);
}

/* labels[*n] = key=value unless a label of that key is there already. */
static void add_label(struct model_kv *labels, size_t *n, const char *key, const char *value)
{
	for (size_t j = 0; j < *n; j++)
		if (!strcmp(labels[j].key, key))
			return;
	labels[(*n)++] = (struct model_kv){ key, value };
}

/* The claim's labels (its pool, capacity type) are the node's too, and so
 * is every requirement of one value (the zone, the region): Karpenter
 * labels the node with them, and a pod pinned to the zone must find the
 * NodeClaim in flight there, not get a second one. */
static int merge_labels(struct model_set *set, struct model_object *node,
			const struct model_object *claim)
{
	const struct model_node_claim *nc = &claim->u.node_claim;
	struct model_kv *labels = model_set_calloc(set, node->meta.n_labels + claim->meta.n_labels +
						   nc->n_requirements + 1, sizeof(*labels));

	if (!labels)
		return -ENOMEM;
	if (node->meta.n_labels)        /* memcpy from NULL is undefined, even of 0 bytes */
		memcpy(labels, node->meta.labels, node->meta.n_labels * sizeof(*labels));
	for (size_t i = 0; i < claim->meta.n_labels; i++)
		add_label(labels, &node->meta.n_labels, claim->meta.labels[i].key,
			  claim->meta.labels[i].value);
	for (size_t i = 0; i < nc->n_requirements; i++)
		if (nc->requirements[i].op == MODEL_OP_IN && nc->requirements[i].n_values == 1)
			add_label(labels, &node->meta.n_labels, nc->requirements[i].key,
				  nc->requirements[i].values[0]);
	node->meta.labels = labels;
	return 0;
}

/* The slices of a node launched for claim, named for node, into the set
 * (a class the planner refuses, a bad annotation, is its Warning, not a
 * failed plan: the node counts with hwdb's whole GPUs). */
static int predict(struct model_set *set, const struct model_object *claim, const char *node,
		   struct dt_err *err)
{
	struct model_object *slices[HWDB_MAX_SLICES];
	const char *type = ctrl_claim_type(&claim->u.node_claim);
	size_t n = 0;
	int rc = ctrl_predict(set, set, claim, node, slices, &n, err);

	if (rc == -EINVAL)
		rc = hwdb_slices(hwdb_lookup(type), NULL, node, set, slices, &n, err);
	return rc == -ENOENT ? 0 : rc;
}

/* A NodeClaim launched but not yet a Node: a node of its type with its
 * labels and taints, and the slices its drivers will publish. */
static int add_in_flight(struct ctrl_cycle *cy, const struct model_object *claim,
			 struct dt_err *err)
{
	struct model_set *set = cy->set;
	const struct model_node_claim *nc = &claim->u.node_claim;
	const char *type = ctrl_claim_type(nc);
	const struct hwdb_type *t = type ? hwdb_lookup(type) : NULL;
	struct model_object *node;
	struct strbuf sb = STRBUF_INIT;
	uint64_t h = hash_field(HASH_FNV_OFFSET, claim->meta.name);
	int rc;

	if (!t || nc->node_name || claim->meta.deletion_timestamp ||
	    model_set_find(set, MODEL_NODE, NULL, claim->meta.name))
		return 0;
	plan_node_yaml(claim->meta.name, type, t, &sb);
	if (sb_error(&sb)) {
		sb_free(&sb);
		return dt_err_set(err, -ENOMEM, "out of memory");
	}
	rc = model_set_load_buffer(set, sb_str(&sb), sb.len, "(in-flight NodeClaims)", NULL, err);
	sb_free(&sb);
	node = model_set_find(set, MODEL_NODE, NULL, claim->meta.name);
	if (rc < 0 || !node)
		return rc < 0 ? rc : 0;
	if (merge_labels(set, node, claim) || u64map_put(&cy->in_flight, h ? h : 1, 1))
		return dt_err_set(err, -ENOMEM, "out of memory");
	node->u.node.taints = nc->taints;
	node->u.node.n_taints = nc->n_taints;
	return predict(set, claim, claim->meta.name, err);
}

static bool has_label(const struct model_meta *m, const char *key, const char *value)
{
	for (size_t i = 0; i < m->n_labels; i++)
		if (!strcmp(m->labels[i].key, key) && !strcmp(m->labels[i].value, value))
			return true;
	return false;
}

/* Taints a node loses as it comes up: the node lifecycle's, the cloud
 * provider's, Karpenter's until registration (scheduling.KnownEphemeralTaints),
 * and the NodeClaim's startup taints. */
static bool passing_taint(const struct model_taint *t, const struct model_node_claim *nc)
{
	static const char *const keys[] = {
		"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable",
		"node.cloudprovider.kubernetes.io/uninitialized", "karpenter.sh/unregistered",
	};

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!strcmp(t->key, keys[i]))
			return true;
	for (size_t i = 0; i < nc->n_startup_taints; i++)
		if (!strcmp(t->key, nc->startup_taints[i].key) &&
		    !strcmp(t->effect ? t->effect : "", nc->startup_taints[i].effect ?
			    nc->startup_taints[i].effect : ""))
			return true;
	return false;
}

/* A NodeClaim registered as a Node: until Karpenter says the node is
 * initialized (its karpenter.sh/initialized label) the taints it loses as
 * it comes up do not count, as in Karpenter's scheduler; until its drivers
 * publish a slice, it counts with the slices predicted for it (Karpenter
 * models uninitialized nodes by their type's templates), so that the pods
 * it was launched for are not given a second node meanwhile. */
static int add_registered(struct ctrl_cycle *cy, const struct model_object *claim,
			  const struct u64map *published, struct dt_err *err)
{
	const struct model_node_claim *nc = &claim->u.node_claim;
	struct model_object *node = model_set_find(cy->set, MODEL_NODE, NULL, nc->node_name);
	struct model_taint *keep;
	uint64_t h = hash_field(HASH_FNV_OFFSET, nc->node_name);
	size_t n = 0;

	if (!node || claim->meta.deletion_timestamp)
		return 0;
	if (!has_label(&node->meta, "karpenter.sh/initialized", "true") && node->u.node.n_taints) {
		keep = model_set_calloc(cy->set, node->u.node.n_taints, sizeof(*keep));
		if (!keep)
			return dt_err_set(err, -ENOMEM, "out of memory");
		for (size_t i = 0; i < node->u.node.n_taints; i++)
			if (!passing_taint(&node->u.node.taints[i], nc))
				keep[n++] = node->u.node.taints[i];
		node->u.node.taints = keep;
		node->u.node.n_taints = n;
	}
	if (u64map_get(published, h ? h : 1, NULL) || !ctrl_claim_type(nc))
		return 0;
	return predict(cy->set, claim, nc->node_name, err);
}

/* The NodeClaims: in flight, or registered. */
static int add_claims(struct ctrl_cycle *cy, struct dt_err *err)
{
	struct u64map published = U64MAP_INIT;
	struct model_object *o;
	int rc = 0;

	for (o = NULL; !rc && (o = model_set_next(cy->set, MODEL_RESOURCE_SLICE, o));) {
		uint64_t h;

		if (!o->u.slice.node_name)
			continue;
		h = hash_field(HASH_FNV_OFFSET, o->u.slice.node_name);
		rc = u64map_put(&published, h ? h : 1, 1);
	}
	for (o = NULL; !rc && (o = model_set_next(cy->set, MODEL_NODE_CLAIM, o));)
		rc = o->u.node_claim.node_name ? add_registered(cy, o, &published, err)
					       : add_in_flight(cy, o, err);
	u64map_free(&published);
	return rc == -ENOMEM && !err->code ? dt_err_set(err, rc, "out of memory") : rc;
}

static const char *pods_of(const struct model_object *claim)
{
	for (size_t i = 0; i < claim->meta.n_annotations; i++)
		if (!strcmp(claim->meta.annotations[i].key, CTRL_PODS_ANNOTATION))
			return claim->meta.annotations[i].value;
	return NULL;
}

/* Each pod our NodeClaims name (their dratopo.io/pods) with the node made
 * for it: the claim's own name in flight (its node's name in the set),
 * its Node's once registered. */
static int add_made_for(struct ctrl_cycle *cy, struct dt_err *err)
{
	const struct model_object *o;
	size_t n = 0;

	for (o = NULL; (o = model_set_next(cy->set, MODEL_NODE_CLAIM, o));) {
		const char *p = ctrl_ours(o) ? pods_of(o) : NULL;

		for (; p && *p; p++)
			n += *p == ',';
		n += p != NULL;
	}
	if (!n)
		return 0;
	if (!(cy->made_for = model_set_calloc(cy->set, n, sizeof(*cy->made_for))))
		return dt_err_set(err, -ENOMEM, "out of memory");
	for (o = NULL; (o = model_set_next(cy->set, MODEL_NODE_CLAIM, o));) {
		const char *node = o->u.node_claim.node_name ? o->u.node_claim.node_name
							     : o->meta.name;
		char *pods = ctrl_ours(o) && pods_of(o) ? model_set_strdup(cy->set, pods_of(o)) : NULL;
		char *save = NULL;

		if (ctrl_ours(o) && pods_of(o) && !pods)
			return dt_err_set(err, -ENOMEM, "out of memory");
		for (char *t = pods ? strtok_r(pods, ",", &save) : NULL; t && cy->n_made_for < n;
		     t = strtok_r(NULL, ",", &save))
			cy->made_for[cy->n_made_for++] = (struct plan_made_for){ t, node };
	}
	return 0;
}

int ctrl_snapshot(struct ctrl *c, struct ctrl_cycle *cy, struct dt_err *err)
{
	struct u64map prints = U64MAP_INIT, waiting = U64MAP_INIT;
	int rc = 0;

	if (!(cy->set = model_set_new()))
		return dt_err_set(err, -ENOMEM, "out of memory");
	pthread_mutex_lock(&c->lock);
	rc = u64map_copy(&prints, &c->batch.prints);
	for (size_t i = 0; !rc && i < c->batch.n_waiting; i++)
		rc = u64map_put(&waiting, c->batch.waiting[i].key, 1);
	pthread_mutex_unlock(&c->lock);
	for (size_t i = 0; i < KIND_COUNT && !rc; i++) {
		struct load_ctx l = { c, i, cy->set, &prints, &waiting, err };

		rc = kube_informer_foreach(c->inf[i], load_one, &l);
	}
	if (!rc)
		rc = add_claims(cy, err);
	if (!rc)
		rc = add_made_for(cy, err);
	if (!rc)
		rc = ctrl_offers_list(c, cy->set, &cy->unavailable, &cy->n_unavailable);
	u64map_free(&prints);
	u64map_free(&waiting);
	if (rc == -ENOMEM && !err->code)
		dt_err_set(err, rc, "out of memory");
	return rc;
}
