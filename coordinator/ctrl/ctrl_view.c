/* ctrl_view.c - what the controller has in flight, for the coordinator's
 * status page: after each plan, the pending pods with where the plan puts
 * them (or why it cannot), and our NodeClaims not yet nodes, copied under
 * view_lock; ctrl_inflight hands a copy to the page on the HTTP thread
 * without waiting for a plan or asking the API server. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "array.h"
#include "ctrl_internal.h"
#include "hash.h"
#include "timestamp.h"

/* At most this many of each are kept; more are counted. */
#define VIEW_MAX 1000

/* A metav1.Time as Unix nanoseconds; 0 when absent or unreadable. */
static int64_t unix_ns(const char *rfc3339)
{
	struct timestamp t;

	if (!rfc3339 || timestamp_parse(rfc3339, strlen(rfc3339), &t, NULL))
		return 0;
	return timestamp_unix_ns(&t);
}

/* Copies of n strings (NULL as "") in one block, which out[0] owns: one
 * allocation and one free per entry. false on out of memory. */
static bool pack(const char *const *in, char **out, size_t n)
{
	size_t len = 0;
	char *p;

	for (size_t i = 0; i < n; i++)
		len += strlen(in[i] ? in[i] : "") + 1;
	if (!(p = malloc(len)))
		return false;
	for (size_t i = 0; i < n; i++) {
		size_t l = strlen(in[i] ? in[i] : "") + 1;

		out[i] = memcpy(p, in[i] ? in[i] : "", l);
		p += l;
	}
	return true;
}

static void add_pod(struct ctrl_view *v, const struct model_set *set, const char *pod,
		    const char *reason)
{
	const char *slash = strchr(pod, '/');
	char ns[256];
	const struct model_object *o;
	char *f[3];

	if (!slash)
		return;
	snprintf(ns, sizeof(ns), "%.*s", (int)(slash - pod), pod);
	if (v->n_pods == VIEW_MAX || DT_GROW(v->pods, v->cap_pods, v->n_pods + 1) ||
	    !pack((const char *[]){ ns, slash + 1, reason }, f, 3)) {
		v->more_pods++;
		return;
	}
	o = model_set_find(set, MODEL_POD, ns, slash + 1);
	v->pods[v->n_pods++] = (struct ctrl_view_pod){
		f[0], f[1], f[2], o ? unix_ns(o->meta.creation_timestamp) : 0 };
}

/* Karpenter's word for a NodeClaim on its way: launching until the cloud
 * provider answered (a providerID), then launched until it registers. */
static const char *claim_state(const struct model_object *o)
{
	if (o->meta.deletion_timestamp)
		return "deleting";
	return o->u.node_claim.status_provider_id ? "launched" : "launching";
}

static void add_claim(struct ctrl_view *v, const struct model_object *o)
{
	const char *pool = NULL, *type = ctrl_claim_type(&o->u.node_claim);
	char *f[4];

	for (size_t i = 0; i < o->meta.n_labels; i++)
		if (!strcmp(o->meta.labels[i].key, "karpenter.sh/nodepool"))
			pool = o->meta.labels[i].value;
	if (v->n_claims == VIEW_MAX || DT_GROW(v->claims, v->cap_claims, v->n_claims + 1) ||
	    !pack((const char *[]){ o->meta.name, pool, type, claim_state(o) }, f, 4)) {
		v->more_claims++;
		return;
	}
	v->claims[v->n_claims++] = (struct ctrl_view_claim){
		f[0], f[1], f[2], f[3], unix_ns(o->meta.creation_timestamp) };
}

void ctrl_view_free(struct ctrl_view *v)
{
	for (size_t i = 0; i < v->n_pods; i++)
		free(v->pods[i].ns);            /* the entry's strings */
	for (size_t i = 0; i < v->n_claims; i++)
		free(v->claims[i].name);
	free(v->pods);
	free(v->claims);
	memset(v, 0, sizeof(*v));
}

/* Where the plan put a pod that waits: a node in flight, or a live one the
 * scheduler has still to bind it to. */
static void existing_reasons(struct ctrl_view *v, const struct ctrl_cycle *cy,
			     const struct plan_result *res)
{
	char why[512];

	for (size_t i = 0; i < res->n_existing; i++) {
		const struct plan_existing *e = &res->existing[i];
		uint64_t h = hash_field(HASH_FNV_OFFSET, e->node);

		if (u64map_get(&cy->in_flight, h ? h : 1, NULL))
			snprintf(why, sizeof(why), "waiting for NodeClaim %s to launch", e->node);
		else
			snprintf(why, sizeof(why), "fits on node %s; waiting for the scheduler",
				 e->node);
		for (size_t k = 0; k < e->n_pods; k++)
			add_pod(v, cy->set, e->pods[k], why);
	}
}

void ctrl_view_update(struct ctrl *c, const struct ctrl_cycle *cy,
		      const struct plan_result *res)
{
	struct ctrl_view v = { 0 }, old;
	const struct model_object *o;
	struct timespec now;
	char why[512];

	clock_gettime(CLOCK_REALTIME, &now);
	v.as_of_ns = (int64_t)now.tv_sec * 1000000000LL + now.tv_nsec;
	for (size_t i = 0; res && i < res->n_unschedulable; i++)
		add_pod(&v, cy->set, res->unschedulable[i].pod, res->unschedulable[i].reason);
	for (size_t i = 0; res && i < res->n_node_claims; i++) {
		const struct plan_node_claim *nc = &res->node_claims[i];

		snprintf(why, sizeof(why), "a new %s node of NodePool %s is being written",
			 nc->instance_type, nc->node_pool);
		for (size_t k = 0; k < nc->n_pods; k++)
			add_pod(&v, cy->set, nc->pods[k], why);
	}
	if (res)
		existing_reasons(&v, cy, res);
	for (o = NULL; (o = model_set_next(cy->set, MODEL_NODE_CLAIM, o));)
		if (ctrl_ours(o) && !o->u.node_claim.node_name)
			add_claim(&v, o);
	pthread_mutex_lock(&c->view_lock);
	old = c->view;
	c->view = v;
	pthread_mutex_unlock(&c->view_lock);
	ctrl_view_free(&old);
}

int ctrl_inflight(struct ctrl *c, const struct ctrl_inflight_cb *cb, struct ctrl_inflight_info *info)
{
	const struct ctrl_view *v = &c->view;
	int rc = 0;

	pthread_mutex_lock(&c->view_lock);
	info->as_of_ns = v->as_of_ns;
	info->more_pods = v->more_pods;
	info->more_claims = v->more_claims;
	for (size_t i = 0; !rc && cb->pod && i < v->n_pods; i++)
		rc = cb->pod(cb->arg, v->pods[i].ns, v->pods[i].name, v->pods[i].reason,
			     v->pods[i].since_ns);
	for (size_t i = 0; !rc && cb->claim && i < v->n_claims; i++)
		rc = cb->claim(cb->arg, v->claims[i].name, v->claims[i].pool, v->claims[i].type,
			       v->claims[i].state, v->claims[i].created_ns);
	pthread_mutex_unlock(&c->view_lock);
	return rc;
}
