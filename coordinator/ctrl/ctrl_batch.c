/* ctrl_batch.c - when the controller plans: the batch window of
 * Karpenter's provisioner, driven by the informers' events.
 *
 * Karpenter's batcher (pkg/controllers/provisioning/batcher.go) is
 * triggered by pending pods, keyed by uid: a pod not yet seen in the
 * current window opens it, or pushes its end out to 1 s after (the idle
 * time), but never past 10 s after it opened; a pod seen already in the
 * window changes nothing. Here the same rule holds for pods that dratopo
 * plans (pending, not gated, asking for claims or extended resources: a
 * DeviceClass may back those, which the snapshot decides), and only for
 * changes to what a plan reads of them (labels, annotations, spec, phase:
 * kube-controller-manager filling status.resourceClaimStatuses is not
 * one). Other changes that can change a plan (Nodes, ResourceSlices,
 * NodePools, node classes, DeviceClasses, a NodeClaim gone, a bound pod
 * gone) open a window when none is open, and never hold one open: a
 * stream of updates cannot keep a plan waiting.
 *
 * A pending pod whose plan needs an object the cache lacks yet (a
 * ResourceClaim it names, or its ResourceClaimTemplate: created just
 * after it, say) waits for them instead of being planned without, which
 * would give it a Warning that is not true a moment later; their arrival
 * triggers it. After WAIT_GRACE_MS it is planned anyway, and its Warning
 * says what is missing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "array.h"
#include "ctrl_internal.h"
#include "hash.h"

/* Whether a container asks for an extended resource (in its requests, or
 * its limits, from which the API server defaults them); with set, only one
 * that a DeviceClass of set backs. */
static bool asks_extended(const struct model_container *cs, size_t n,
			  const struct model_set *set)
{
	for (size_t i = 0; i < n; i++)
		for (size_t l = 0; l < 2; l++) {
			const struct model_resource_list *r = l ? &cs[i].limits : &cs[i].requests;

			for (size_t k = 0; k < r->n_items; k++) {
				const char *name = r->items[k].name;

				if (strchr(name, '/') && strncmp(name, "hugepages-", 10) &&
				    (!set || plan_extres_backed(set, name)))
					return true;
			}
		}
	return false;
}

bool ctrl_pod_asks_extended(const struct model_object *o, const struct model_set *set)
{
	const struct model_pod_spec *p = &o->u.pod.spec;

	return asks_extended(p->containers, p->n_containers, set) ||
	       asks_extended(p->init_containers, p->n_init_containers, set);
}

enum ctrl_pod_class ctrl_pod_class(const struct model_object *o)
{
	const struct model_pod *p = &o->u.pod;
	const char *phase = p->status.phase;

	if (phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed")))
		return POD_OTHER;
	if (p->spec.node_name)
		return POD_BOUND;
	/* a gated pod (a queue such as Kueue holds it): kube-scheduler will
	 * not place it, and Karpenter provisions for none such */
	if (o->meta.deletion_timestamp || p->spec.n_scheduling_gates)
		return POD_OTHER;
	if (p->spec.n_resource_claims)
		return POD_PENDING;
	return ctrl_pod_asks_extended(o, NULL) ? POD_EXTRES : POD_OTHER;
}

uint64_t ctrl_object_key(size_t which, const char *ns, const char *name)
{
	uint64_t h = hash_field(hash_field(hash_fnv1a(HASH_FNV_OFFSET, &which, sizeof(which)),
					   ns ? ns : ""), name);

	return h ? h : 1;
}

static uint64_t hash_part(uint64_t h, json_object *o)
{
	return hash_field(h, o ? json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN) : "");
}

/* What a plan reads of an object, hashed: its labels, annotations and
 * spec, and of its status what the planner uses. The low two bits carry
 * a pod's class. */
static uint64_t fingerprint(size_t which, const struct kube_object *obj, enum ctrl_pod_class cls)
{
	json_object *j = json_tokener_parse(obj->json);
	uint64_t h = HASH_FNV_OFFSET;

	if (!j)
		return 0;
	h = hash_part(h, kube_json_get(j, "metadata", "labels", NULL));
	h = hash_part(h, kube_json_get(j, "metadata", "annotations", NULL));
	h = hash_part(h, kube_json_get(j, "spec", NULL));
	if (which == W_PODS) {
		h = hash_part(h, kube_json_get(j, "status", "phase", NULL));
		h = hash_part(h, kube_json_get(j, "metadata", "deletionTimestamp", NULL));
	} else if (which == W_NODES) {
		h = hash_part(h, kube_json_get(j, "status", "allocatable", NULL));
	} else if (which == W_NODECLAIMS) {
		h = hash_part(h, kube_json_get(j, "status", "nodeName", NULL));
	}
	json_object_put(j);
	return (h & ~(uint64_t)3) | (uint64_t)cls;
}

/* ---- the window ---- */

int64_t ctrl_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}


static void open_window(struct ctrl *c, int64_t now)
{
	if (!c->batch.open) {
		c->batch.open = true;
		c->batch.opened_ms = now;
	}
	pthread_cond_signal(&c->cond);
}

/* A pending pod: a uid not yet in this window opens or extends it. */
static void trigger(struct ctrl *c, const char *uid)
{
	uint64_t h = hash_field(HASH_FNV_OFFSET, uid);
	int64_t now = ctrl_now_ms();

	h = h ? h : 1;
	if (u64map_get(&c->batch.uids, h, NULL))
		return;
	u64map_put(&c->batch.uids, h, 1);      /* out of memory: the next one re-triggers */
	open_window(c, now);
	c->batch.last_ms = now;
}

/* Any other change a plan may depend on: open a window when none is. */
static void nudge(struct ctrl *c)
{
	int64_t now = ctrl_now_ms();

	if (!c->batch.open) {
		open_window(c, now);
		c->batch.last_ms = now;
	}
}

int64_t ctrl_batch_due(struct ctrl *c)
{
	int64_t idle = (int64_t)(c->o.batch_idle_s * 1000), max = (int64_t)(c->o.batch_max_s * 1000);
	int64_t due = INT64_MAX, now = ctrl_now_ms();
	struct ctrl_batch *b = &c->batch;

	/* waiting pods past their grace join the window */
	for (size_t i = 0; i < b->n_waiting;) {
		if (now - b->waiting[i].since_ms >= WAIT_GRACE_MS) {
			char uid[64];

			snprintf(uid, sizeof(uid), "%s", b->waiting[i].uid);
			b->waiting[i] = b->waiting[--b->n_waiting];
			trigger(c, uid);
			continue;
		}
		if (b->waiting[i].since_ms + WAIT_GRACE_MS < due)
			due = b->waiting[i].since_ms + WAIT_GRACE_MS;
		i++;
	}
	if (b->open) {
		int64_t end = b->last_ms + idle < b->opened_ms + max ? b->last_ms + idle
								      : b->opened_ms + max;

		if (end < due)
			due = end;
	}
	return due;
}

void ctrl_batch_close(struct ctrl *c)
{
	c->batch.open = false;
	u64map_clear(&c->batch.uids);
}

void ctrl_batch_now(struct ctrl *c)
{
	int64_t now = ctrl_now_ms(), idle = (int64_t)(c->o.batch_idle_s * 1000);

	open_window(c, now);
	c->batch.opened_ms = c->batch.last_ms = now - idle;
}

/* ---- pods waiting for their inputs ---- */

static size_t find_waiting(const struct ctrl_batch *b, uint64_t key)
{
	for (size_t i = 0; i < b->n_waiting; i++)
		if (b->waiting[i].key == key)
			return i;
	return SIZE_MAX;
}

bool ctrl_batch_waiting(struct ctrl *c, const char *ns, const char *name)
{
	return find_waiting(&c->batch, ctrl_object_key(W_PODS, ns, name)) != SIZE_MAX;
}

/* Whether the cache has every object the pod's plan needs. */
static bool inputs_there(struct ctrl *c, const struct model_object *pod)
{
	const struct model_pod_spec *s = &pod->u.pod.spec;

	for (size_t i = 0; i < s->n_resource_claims; i++) {
		const struct model_pod_claim *pc = &s->resource_claims[i];

		if (pc->resource_claim_name &&
		    !kube_informer_has(c->inf[W_CLAIMS], pod->meta.ns, pc->resource_claim_name))
			return false;
		if (pc->resource_claim_template_name &&
		    !kube_informer_has(c->inf[W_TEMPLATES], pod->meta.ns,
				       pc->resource_claim_template_name))
			return false;
	}
	return true;
}

static void wait_for_inputs(struct ctrl *c, uint64_t key, const struct model_object *pod)
{
	struct ctrl_batch *b = &c->batch;
	size_t i = find_waiting(b, key);

	if (i != SIZE_MAX)
		return;                 /* waiting already: since when it first waited */
	if (b->n_waiting == WAITING_MAX || DT_GROW(b->waiting, b->cap_waiting, b->n_waiting + 1)) {
		trigger(c, pod->meta.uid ? pod->meta.uid : pod->meta.name);    /* no room: plan it */
		return;
	}
	i = b->n_waiting++;
	b->waiting[i].key = key;
	snprintf(b->waiting[i].ns, sizeof(b->waiting[i].ns), "%s", pod->meta.ns);
	snprintf(b->waiting[i].name, sizeof(b->waiting[i].name), "%s", pod->meta.name);
	snprintf(b->waiting[i].uid, sizeof(b->waiting[i].uid), "%s",
		 pod->meta.uid ? pod->meta.uid : pod->meta.name);
	b->waiting[i].since_ms = ctrl_now_ms();
}

static void forget_waiting(struct ctrl_batch *b, uint64_t key)
{
	size_t i = find_waiting(b, key);

	if (i != SIZE_MAX)
		b->waiting[i] = b->waiting[--b->n_waiting];
}

/* A claim or template arrived in ns: the pods of ns that waited for it
 * and now have everything are triggered. The pod is read back from its
 * cache, which is the truth by now. */
static void inputs_arrived(struct ctrl *c, const char *ns)
{
	struct ctrl_batch *b = &c->batch;

	for (size_t i = 0; i < b->n_waiting;) {
		struct model_set *s;
		struct model_object *pod = NULL;
		char *json;
		bool ready = true;

		if (strcmp(b->waiting[i].ns, ns)) {
			i++;
			continue;
		}
		json = kube_informer_get(c->inf[W_PODS], b->waiting[i].ns, b->waiting[i].name);
		s = json ? model_set_new() : NULL;
		if (s && kube_decode(s, json, strlen(json), "kube-apiserver", NULL, &pod, NULL) >= 0 &&
		    pod)
			ready = inputs_there(c, pod);
		model_set_free(s);
		free(json);
		if (!ready) {
			i++;
			continue;
		}
		{
			char uid[64];

			snprintf(uid, sizeof(uid), "%s", b->waiting[i].uid);
			b->waiting[i] = b->waiting[--b->n_waiting];
			trigger(c, uid);
		}
	}
}

/* ---- events ---- */

static void pod_event(struct ctrl *c, enum kube_event_type type, const struct kube_object *obj)
{
	uint64_t key = ctrl_object_key(W_PODS, obj->ns, obj->name), old = 0, fp;
	const struct model_object *m = obj->model;
	bool had = u64map_get(&c->batch.prints, key, &old);
	enum ctrl_pod_class cls;

	if (type == KUBE_DELETED) {
		u64map_del(&c->batch.prints, key);
		forget_waiting(&c->batch, key);
		if (had && (old & 3) == POD_BOUND)
			nudge(c);       /* its devices and room are free again */
		return;
	}
	if (!m || m->kind != MODEL_POD || obj->problems[0])
		return;                 /* the plan leaves it out */
	cls = ctrl_pod_class(m);
	fp = fingerprint(W_PODS, obj, cls);
	if (had && old == fp)
		return;                 /* nothing a plan reads changed */
	u64map_put(&c->batch.prints, key, fp ? fp : 1);  /* no room: it triggers again */
	if (cls != POD_PENDING && cls != POD_EXTRES) {
		forget_waiting(&c->batch, key);
		return;
	}
	if (!inputs_there(c, m))
		wait_for_inputs(c, key, m);
	else if (find_waiting(&c->batch, key) == SIZE_MAX)
		trigger(c, obj->uid[0] ? obj->uid : obj->name);
}

/* Whether a change of this kind can change a plan, by what changed. */
static void other_event(struct ctrl *c, size_t which, enum kube_event_type type,
			const struct kube_object *obj)
{
	uint64_t key = ctrl_object_key(which, obj->ns, obj->name), old = 0, fp;

	switch (which) {
	case W_CLAIMS:
	case W_TEMPLATES:
		/* kube-controller-manager's claim updates are no reason to plan:
		 * the pods that own them are; an arrival wakes pods waiting */
		if (type == KUBE_ADDED && c->batch.n_waiting)
			inputs_arrived(c, obj->ns);
		return;
	case W_NODECLAIMS:
		/* ours written: already counted; registered: the Node comes */
		if (type == KUBE_DELETED)
			nudge(c);
		return;
	default:
		break;
	}
	if (type == KUBE_DELETED) {
		u64map_del(&c->batch.prints, key);
		nudge(c);
		return;
	}
	fp = fingerprint(which, obj, POD_OTHER);
	if (u64map_get(&c->batch.prints, key, &old) && old == fp)
		return;
	u64map_put(&c->batch.prints, key, fp ? fp : 1);
	nudge(c);
}

void ctrl_batch_event(struct ctrl *c, size_t which, enum kube_event_type type,
		      const struct kube_object *obj)
{
	pthread_mutex_lock(&c->lock);
	if (type == KUBE_SYNCED)
		nudge(c);       /* a relist may have changed anything */
	else if (which == W_PODS)
		pod_event(c, type, obj);
	else
		other_event(c, which, type, obj);
	pthread_mutex_unlock(&c->lock);
}

void ctrl_batch_free(struct ctrl_batch *b)
{
	u64map_free(&b->uids);
	u64map_free(&b->prints);
	free(b->waiting);
	memset(b, 0, sizeof(*b));
}
