/* ctrl_write.c - what the controller writes, and the one gate every write
 * passes (ctrl_gate): in dry run each would-be write is a logfmt line and
 * a metric instead, once per change (a write asked for again, round after
 * round, is logged when it first appears and again only after it was not
 * asked for a round). The plan's NodeClaims are applied WRITERS at once.
 *
 * A NodeClaim's name is its pool and a hash of what it holds (type,
 * capacity type, zones, pods), so that planning the same pods again, after
 * a restart or before our own write came back through the watch, applies
 * the same object instead of a second one: a name the cache has already is
 * not written again. But when that name belongs to a NodeClaim the plan
 * counted as capacity already, the plan needs one more node for the same
 * pods (the planner filled the first with others): the name takes a salt. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctrl_internal.h"
#include "hash.h"
#include "obs_log.h"
#include "obs_metrics.h"

#define NODECLAIMS "nodeclaims.karpenter.sh"
#define SALTS 16

/* ---- the gate ---- */

bool ctrl_gate(struct ctrl *c, enum ctrl_scope scope, const char *verb, const char *resource,
	       const char *name, ...)
{
	struct ctrl_ledger *l = &c->ledger[scope];
	uint64_t h = hash_field(hash_field(hash_field(HASH_FNV_OFFSET, verb), resource), name);
	struct obs_ev ev;
	const char *k;
	va_list ap;

	if (!c->o.dry_run)
		return true;
	va_start(ap, name);
	while ((k = va_arg(ap, const char *)))
		h = hash_field(hash_field(h, k), va_arg(ap, const char *));
	va_end(ap);
	h = h ? h : 1;
	u64map_put(&l->now, h, 1);
	if (u64map_get(&l->last, h, NULL))
		return false;           /* logged already, unchanged since */
	obs_ev_begin(&ev, OBS_INFO, "kube_dry_run");
	obs_ev_str(&ev, "verb", verb);
	obs_ev_str(&ev, "resource", resource);
	obs_ev_str(&ev, "name", name);
	va_start(ap, name);
	while ((k = va_arg(ap, const char *)))
		obs_ev_str(&ev, k, va_arg(ap, const char *));
	va_end(ap);
	obs_ev_end(&ev);
	obs_inc(obs_series(c->m_dry, verb, resource, NULL));
	return false;
}

void ctrl_gate_round(struct ctrl *c, enum ctrl_scope scope)
{
	struct ctrl_ledger *l = &c->ledger[scope];
	struct u64map t = l->last;

	l->last = l->now;
	l->now = t;
	u64map_clear(&l->now);
}

/* ---- names ---- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* "<pool>-<10 hex>" of what the NodeClaim holds; salt 0 is the plain name. */
static int claim_name(const struct plan_node_claim *nc, unsigned salt, char *buf, size_t size)
{
	const char **pods = malloc((nc->n_pods + 1) * sizeof(*pods));
	uint64_t h = hash_field(hash_field(hash_field(HASH_FNV_OFFSET, nc->node_pool),
					   nc->instance_type), nc->capacity_type);

	for (size_t i = 0; i < nc->n_narrowed; i++)
		for (size_t j = 0; j < nc->narrowed[i].n_values; j++)
			h = hash_field(hash_field(h, nc->narrowed[i].key), nc->narrowed[i].values[j]);
	if (!pods)
		return -ENOMEM;
	if (nc->n_pods)
		memcpy(pods, nc->pods, nc->n_pods * sizeof(*pods));
	qsort(pods, nc->n_pods, sizeof(*pods), cmp_str);
	for (size_t i = 0; i < nc->n_pods; i++)
		h = hash_field(h, pods[i]);
	free(pods);
	if (salt)
		h = hash_fnv1a(h, &salt, sizeof(salt));
	snprintf(buf, size, "%.40s-%010" PRIx64, nc->node_pool, (uint64_t)(h & 0xffffffffffULL));
	return 0;
}

/* The name to write nc under; false when it is written already. */
static bool pick_name(struct ctrl *c, const struct ctrl_cycle *cy,
		      const struct plan_node_claim *nc, char *buf, size_t size)
{
	for (unsigned salt = 0; salt < SALTS; salt++) {
		uint64_t h;

		if (claim_name(nc, salt, buf, size))
			return false;
		if (!kube_informer_has(c->inf[W_NODECLAIMS], NULL, buf))
			return true;
		h = hash_field(HASH_FNV_OFFSET, buf);
		if (!u64map_get(&cy->in_flight, h ? h : 1, NULL))
			return false;   /* applied, not yet in the plan's snapshot */
	}
	return false;
}

/* ---- the NodeClaims ---- */

struct job {
	struct ctrl *c;
	const struct model_object *o;
	const struct plan_node_claim *nc;
	char name[64];
	char *pods;             /* "ns/name,ns/name" (owned) */
};

/* The object as the controller writes it: its name, labels saying whose
 * it is and which plan made it, the pods it is for. */
static int dress(struct model_set *ncs, struct model_object *o, struct job *j,
		 const char *plan_id)
{
	struct strbuf pods = STRBUF_INIT;
	int rc;

	for (size_t i = 0; i < j->nc->n_pods; i++)
		sb_printf(&pods, "%s%s", i ? "," : "", j->nc->pods[i]);
	o->meta.name = model_set_strdup(ncs, j->name);
	rc = sb_error(&pods) || !o->meta.name ||
	     ctrl_add_kv(ncs, &o->meta.labels, &o->meta.n_labels, CTRL_MANAGED_BY_KEY,
			 CTRL_MANAGED_BY) ||
	     ctrl_add_kv(ncs, &o->meta.labels, &o->meta.n_labels, CTRL_PLAN_LABEL, plan_id) ||
	     ctrl_add_kv(ncs, &o->meta.annotations, &o->meta.n_annotations, CTRL_PODS_ANNOTATION,
			 sb_str(&pods)) ? -ENOMEM : 0;
	j->pods = rc ? NULL : sb_detach(&pods);
	sb_free(&pods);
	return j->pods ? 0 : -ENOMEM;
}

static void apply_one(struct job *j)
{
	struct ctrl *c = j->c;
	struct dt_err err = { 0 };
	int rc = kube_apply_object(c->kc, j->o, NULL, &err);

	if (rc)
		obs_log(OBS_ERROR, "kube_write_failed", "error", err.msg, NULL);
	else
		obs_log(OBS_INFO, "nodeclaim_created", "name", j->name, "instance_type",
			j->nc->instance_type, "capacity_type", j->nc->capacity_type, "pods",
			j->pods, NULL);
	pthread_mutex_lock(&c->lock);
	if (rc)
		c->stats.write_errors++;
	else
		c->stats.nodeclaims_written++;
	pthread_mutex_unlock(&c->lock);
	obs_inc(rc ? c->s_errors : c->s_written);
	if (!rc) {
		struct kube_objref ref = { "karpenter.sh/v1", "NodeClaim", NULL, j->name, NULL };

		kube_event(c->rec, &ref, "Normal", "Launching", "Provisioning", "%s %s (%s) for %s",
			   j->nc->node_pool, j->nc->instance_type, j->nc->capacity_type, j->pods);
	}
}

struct writers {
	struct job *jobs;
	size_t n, next;
	pthread_mutex_t lock;
};

static void *writer(void *arg)
{
	struct writers *w = arg;

	for (;;) {
		size_t i;

		pthread_mutex_lock(&w->lock);
		i = w->next++;
		pthread_mutex_unlock(&w->lock);
		if (i >= w->n)
			return NULL;
		apply_one(&w->jobs[i]);
	}
}

/* The jobs, WRITERS at once (on this thread when threads cannot start). */
static void apply_all(struct job *jobs, size_t n)
{
	struct writers w = { .jobs = jobs, .n = n };
	pthread_t t[WRITERS];
	size_t started = 0;

	pthread_mutex_init(&w.lock, NULL);
	while (started < WRITERS && started + 1 < n &&
	       !pthread_create(&t[started], NULL, writer, &w))
		started++;
	writer(&w);
	for (size_t i = 0; i < started; i++)
		pthread_join(t[i], NULL);
	pthread_mutex_destroy(&w.lock);
}

void ctrl_write_claims(struct ctrl *c, struct ctrl_cycle *cy, const struct plan_result *res,
		       struct model_set *ncs, const char *plan_id, size_t *written)
{
	struct job *jobs = calloc(res->n_node_claims + 1, sizeof(*jobs));
	size_t n = 0;
	unsigned long long before;

	*written = 0;
	for (size_t i = 0; jobs && i < res->n_node_claims; i++) {
		const struct plan_node_claim *nc = &res->node_claims[i];
		struct model_object *o = model_set_find(ncs, MODEL_NODE_CLAIM, NULL, nc->name);
		struct job *j = &jobs[n];

		*j = (struct job){ .c = c, .o = o, .nc = nc };
		if (!o || !pick_name(c, cy, nc, j->name, sizeof(j->name)) ||
		    dress(ncs, o, j, plan_id))
			continue;
		if (!ctrl_gate(c, SCOPE_PLAN, "apply", NODECLAIMS, j->name, "instance_type",
			       nc->instance_type, "pods", j->pods, NULL)) {
			free(j->pods);  /* dry run: a dry-run write, not a written one */
			continue;
		}
		n++;
	}
	ctrl_gate_round(c, SCOPE_PLAN);
	pthread_mutex_lock(&c->lock);
	before = c->stats.nodeclaims_written;
	pthread_mutex_unlock(&c->lock);
	if (n)
		apply_all(jobs, n);
	for (size_t i = 0; i < n; i++)
		free(jobs[i].pods);
	free(jobs);
	pthread_mutex_lock(&c->lock);
	*written = (size_t)(c->stats.nodeclaims_written - before);     /* applied, not failed */
	pthread_mutex_unlock(&c->lock);
}

/* A pod no option can take: a Warning with the planner's reasons. */
static void warn_one(struct ctrl *c, const struct plan_unschedulable *u)
{
	char ns[256], name[256];
	const char *slash = strchr(u->pod, '/');
	struct strbuf note = STRBUF_INIT;
	struct kube_objref ref = { "v1", "Pod", ns, name, NULL };

	if (!slash)
		return;
	snprintf(ns, sizeof(ns), "%.*s", (int)(slash - u->pod), u->pod);
	snprintf(name, sizeof(name), "%s", slash + 1);
	sb_puts(&note, u->reason);
	for (size_t i = 0; i < u->n_details; i++) {
		const struct plan_reject *r = &u->details[i];

		sb_printf(&note, "; %s%s%s: %s", r->node ? r->node : r->node_pool ? r->node_pool : "",
			  r->instance_type ? "/" : "", r->instance_type ? r->instance_type : "",
			  r->reason);
	}
	if (!sb_error(&note))
		kube_event(c->rec, &ref, "Warning", "FailedProvisioning", "Planning", "%s",
			   sb_str(&note));
	sb_free(&note);
}

void ctrl_warn_unschedulable(struct ctrl *c, const struct plan_result *res)
{
	if (c->o.dry_run)
		return;                 /* an Event is a write too */
	for (size_t i = 0; i < res->n_unschedulable; i++)
		warn_one(c, &res->unschedulable[i]);
}
