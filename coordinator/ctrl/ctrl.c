/* ctrl.c - the controller loop (see ctrl.h): informers that mark the
 * cluster changed, a thread that waits for a batch to settle, and one plan
 * per batch: the cluster's objects as the model decodes them, in-flight
 * NodeClaims as nodes of their type, plan_execute, then the NodeClaims of
 * the plan applied and the Events written. */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctrl_internal.h"
#include "hash.h"
#include "hwdb.h"
#include "obs_log.h"
#include "obs_metrics.h"

/* What is watched, in the order objects join the planner's set. */
static const struct kube_resource *const watched[KIND_COUNT] = {
	&kube_res_deviceclasses, &kube_res_nodepools, &kube_res_ec2nodeclasses,
	&kube_res_nodeoverlays, &kube_res_nodes, &kube_res_resourceslices,
	&kube_res_devicetaintrules, &kube_res_daemonsets, &kube_res_resourceclaimtemplates,
	&kube_res_resourceclaims, &kube_res_pods, &kube_res_nodeclaims,
};

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

bool ctrl_ours(const struct model_object *o)
{
	for (size_t i = 0; i < o->meta.n_labels; i++)
		if (!strcmp(o->meta.labels[i].key, CTRL_MANAGED_BY_KEY) &&
		    !strcmp(o->meta.labels[i].value, CTRL_MANAGED_BY))
			return true;
	return false;
}


/* A NodeClaim of ours deleted before it became a node: Karpenter gave up
 * on it (insufficient capacity, a node class not ready, no registration
 * within its TTL). Its type is avoided for a while, so that the next plan
 * takes another offering for its pods. Under c->lock. */
static void note_failed_launch(struct ctrl *c, const struct model_object *o)
{
	const char *type = ctrl_claim_type(&o->u.node_claim);
	size_t i, slot = c->n_avoid;
	int64_t now = now_ms();

	if (!type || o->u.node_claim.node_name || !ctrl_ours(o))
		return;
	for (i = 0; i < c->n_avoid; i++)
		if (!strcmp(c->avoid[i].type, type) || c->avoid[i].until_ms <= now)
			slot = i;
	if (slot == AVOID_MAX)
		slot = 0;               /* full: the oldest entries go first */
	else if (slot == c->n_avoid)
		c->n_avoid++;
	snprintf(c->avoid[slot].type, sizeof(c->avoid[slot].type), "%s", type);
	c->avoid[slot].until_ms = now + AVOID_MS;
	obs_log(OBS_WARN, "offering_unavailable", "nodeclaim", o->meta.name, "instance_type", type,
		"avoided_for", "3m", NULL);
}

static void on_event(void *arg, enum kube_event_type type, const struct kube_object *obj)
{
	struct ctrl *c = arg;

	pthread_mutex_lock(&c->lock);
	if (type == KUBE_DELETED && obj && obj->model && obj->model->kind == MODEL_NODE_CLAIM)
		note_failed_launch(c, obj->model);
	if (!c->dirty)
		c->first_dirty_ms = now_ms();
	c->dirty = true;
	c->last_event_ms = now_ms();
	pthread_cond_signal(&c->cond);
	pthread_mutex_unlock(&c->lock);
}

bool ctrl_synced(struct ctrl *c)
{
	for (size_t i = 0; i < KIND_COUNT; i++)
		if (!kube_informer_synced(c->inf[i]))
			return false;
	return true;
}

void ctrl_stats(struct ctrl *c, struct ctrl_stats *out)
{
	pthread_mutex_lock(&c->lock);
	*out = c->stats;
	pthread_mutex_unlock(&c->lock);
}

/* ---- the cluster as the planner's input ---- */

/* Whether a container (or init container) of the pod asks for an
 * extended resource a DeviceClass of set backs (requests, or limits,
 * from which the API server defaults them). */
static bool pod_dra_extres(json_object *pod, const struct model_set *set)
{
	static const char *const lists[] = { "containers", "initContainers" };
	static const char *const kinds[] = { "requests", "limits" };

	for (size_t l = 0; l < 2; l++) {
		json_object *cs = kube_json_get(pod, "spec", lists[l], NULL);

		for (size_t i = 0; cs && i < json_object_array_length(cs); i++)
			for (size_t k = 0; k < 2; k++) {
				json_object *r = kube_json_get(json_object_array_get_idx(cs, i),
							       "resources", kinds[k], NULL);

				if (!r || !json_object_is_type(r, json_type_object))
					continue;
				json_object_object_foreach(r, key, v) {
					(void)v;
					if (strchr(key, '/') && plan_extres_backed(set, key))
						return true;
				}
			}
	}
	return false;
}

/* A pending pod is dratopo's when it asks for claims or for extended
 * resources a DeviceClass backs, and no scheduling gate holds it; bound
 * pods stay as capacity in use. Other pending pods (device-plugin
 * resources such as nvidia.com/gpu among them) are Karpenter's. set holds
 * the DeviceClasses already (they join first). */
static bool pod_wanted(const char *json, const struct model_set *set)
{
	json_object *o = json_tokener_parse(json), *cs;
	bool want = false;

	if (!o)
		return false;
	if (kube_json_str(o, "spec", "nodeName", NULL)) {
		want = true;
	} else if ((cs = kube_json_get(o, "spec", "schedulingGates", NULL)) &&
		   json_object_array_length(cs) > 0) {
		/* gated (a queue such as Kueue holds it): kube-scheduler will not
		 * place it, and Karpenter provisions for none such */
		want = false;
	} else if ((cs = kube_json_get(o, "spec", "resourceClaims", NULL)) &&
		   json_object_array_length(cs) > 0) {
		want = true;
	} else {
		want = pod_dra_extres(o, set);
	}
	json_object_put(o);
	return want;
}

struct load_ctx {
	struct ctrl *c;
	size_t which;
	struct model_set *set;
	struct dt_err *err;
	size_t refused;
};

static int load_one(void *arg, const struct kube_object *obj)
{
	struct load_ctx *l = arg;

	if (obj->problems[0]) {
		l->refused++;
		return 0;
	}
	if (l->which == W_PODS && !pod_wanted(obj->json, l->set))
		return 0;
	if (l->which == W_NODES && l->c->o.node_excluded &&
	    l->c->o.node_excluded(l->c->o.node_arg, obj->name))
		return 0;
	return model_set_load_buffer(l->set, obj->json, obj->json_len, "kube-apiserver", NULL,
				     l->err) < 0 ? -ENOMEM : 0;
}

/* The instance type a NodeClaim asks for (its one In value), or NULL. */
const char *ctrl_claim_type(const struct model_node_claim *nc)
{
	for (size_t i = 0; i < nc->n_requirements; i++) {
		const struct model_requirement *r = &nc->requirements[i];

		if (!strcmp(r->key, "node.kubernetes.io/instance-type") && r->op == MODEL_OP_IN &&
		    r->n_values == 1)
			return r->values[0];
	}
	return NULL;
}

/* labels[*n] = key=value unless a label of that key is there already. */
static void add_label(struct model_kv *labels, size_t *n, const char *key, const char *value)
{
	for (size_t j = 0; j < *n; j++)
		if (!strcmp(labels[j].key, key))
			return;
	labels[(*n)++] = (struct model_kv){ key, value };
}

/* The consumable-capacity mode of the EC2NodeClass a NodeClaim launches
 * with (its karpenter.k8s.aws/nvidia-consumable-capacity annotation);
 * false when it has none (or one the planner already refused). */
static bool class_cc(struct model_set *set, const struct model_node_claim *nc,
		     struct hwdb_cc_mode *out)
{
	const struct model_object *cls = nc->node_class_ref.name ?
		model_set_find(set, MODEL_EC2_NODE_CLASS, NULL, nc->node_class_ref.name) : NULL;

	for (size_t i = 0; cls && i < cls->meta.n_annotations; i++)
		if (!strcmp(cls->meta.annotations[i].key,
			    "karpenter.k8s.aws/nvidia-consumable-capacity"))
			return hwdb_cc_parse(cls->meta.annotations[i].value, out, NULL) == 0;
	return false;
}

/* A NodeClaim launched but not yet a Node: a node of its type with its
 * labels and taints, and the slices hwdb predicts, so that the pods it was
 * made for find their place on it instead of a second node. */
static int add_in_flight(struct model_set *set, const struct model_object *claim,
			 struct dt_err *err)
{
	const struct model_node_claim *nc = &claim->u.node_claim;
	const char *type = ctrl_claim_type(nc);
	const struct hwdb_type *t = type ? hwdb_lookup(type) : NULL;
	struct model_object *slices[HWDB_MAX_SLICES], *node;
	struct strbuf sb = STRBUF_INIT;
	struct model_kv *labels;
	struct hwdb_cc_mode cc;
	size_t n = 0;
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
	/* the claim's labels (its pool, capacity type) are the node's too, and
	 * so is every requirement of one value (the zone, the region): Karpenter
	 * labels the node with them, and a pod pinned to the zone must find its
	 * NodeClaim in flight there, not get a second one */
	labels = model_set_calloc(set, node->meta.n_labels + claim->meta.n_labels +
				  nc->n_requirements + 1, sizeof(*labels));
	if (!labels)
		return dt_err_set(err, -ENOMEM, "out of memory");
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
	node->u.node.taints = nc->taints;
	node->u.node.n_taints = nc->n_taints;
	/* the slices as its node class's consumable-capacity mode makes them:
	 * shared GPUs hold as many pods in flight as they will live */
	return hwdb_slices(t, class_cc(set, nc, &cc) ? &cc : NULL, claim->meta.name, set, slices,
			   &n, err);
}

/* Every NodePool of the plan leaves the avoided types out, as if its
 * requirements said so (instance-type NotIn [...]). */
static int avoid_types(struct ctrl *c, struct model_set *set, struct dt_err *err)
{
	const char *types[AVOID_MAX];
	size_t n = 0;
	int64_t now = now_ms();
	struct model_object *o;

	pthread_mutex_lock(&c->lock);
	for (size_t i = 0; i < c->n_avoid; i++)
		if (c->avoid[i].until_ms > now)
			types[n++] = model_set_strdup(set, c->avoid[i].type);
	pthread_mutex_unlock(&c->lock);
	for (o = NULL; n && (o = model_set_next(set, MODEL_NODE_POOL, o));) {
		struct model_node_pool *p = &o->u.node_pool;
		struct model_requirement *r = model_set_calloc(set, p->n_requirements + 1, sizeof(*r));
		const char **vals = model_set_calloc(set, n, sizeof(*vals));

		if (!r || !vals)
			return dt_err_set(err, -ENOMEM, "out of memory");
		if (p->n_requirements)
			memcpy(r, p->requirements, p->n_requirements * sizeof(*r));
		memcpy(vals, types, n * sizeof(*vals));
		r[p->n_requirements] = (struct model_requirement){
			.key = "node.kubernetes.io/instance-type", .operator_text = "NotIn",
			.op = MODEL_OP_NOT_IN, .values = vals, .n_values = n };
		p->requirements = r;
		p->n_requirements++;
	}
	return 0;
}

static int snapshot(struct ctrl *c, struct model_set *set, struct dt_err *err)
{
	struct model_object *o;
	int rc = 0;

	for (size_t i = 0; i < KIND_COUNT && !rc; i++) {
		struct load_ctx l = { c, i, set, err, 0 };

		rc = kube_informer_foreach(c->inf[i], load_one, &l);
	}
	for (o = NULL; !rc && (o = model_set_next(set, MODEL_NODE_CLAIM, o));)
		rc = add_in_flight(set, o, err);
	return rc ? rc : avoid_types(c, set, err);
}

/* ---- writing the plan ---- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* "<pool>-<10 hex>": what the NodeClaim holds decides its name, so the
 * same plan applied twice is one object. */
static int claim_name(const struct plan_node_claim *nc, char *buf, size_t size)
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
	snprintf(buf, size, "%.40s-%010" PRIx64, nc->node_pool, (uint64_t)(h & 0xffffffffffULL));
	return 0;
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

static void pods_list(const struct plan_node_claim *nc, struct strbuf *sb)
{
	for (size_t i = 0; i < nc->n_pods; i++)
		sb_printf(sb, "%s%s", i ? "," : "", nc->pods[i]);
}

static void write_claim(struct ctrl *c, struct model_set *ncs, const struct plan_node_claim *nc,
			const char *plan_id)
{
	struct model_object *o = model_set_find(ncs, MODEL_NODE_CLAIM, NULL, nc->name);
	struct strbuf pods = STRBUF_INIT;
	struct dt_err err = { 0 };
	char name[64], *have;
	int rc;

	if (!o || claim_name(nc, name, sizeof(name)))
		return;
	have = kube_informer_get(c->inf[W_NODECLAIMS], NULL, name);
	free(have);
	if (have)
		return;                 /* applied already: nothing to write */
	pods_list(nc, &pods);
	o->meta.name = model_set_strdup(ncs, name);
	if (!o->meta.name || sb_error(&pods) ||
	    ctrl_add_kv(ncs, &o->meta.labels, &o->meta.n_labels, CTRL_MANAGED_BY_KEY, CTRL_MANAGED_BY) ||
	    ctrl_add_kv(ncs, &o->meta.labels, &o->meta.n_labels, CTRL_PLAN_LABEL, plan_id) ||
	    ctrl_add_kv(ncs, &o->meta.annotations, &o->meta.n_annotations, CTRL_PODS_ANNOTATION,
		   sb_str(&pods))) {
		sb_free(&pods);
		return;
	}
	if (c->o.dry_run) {
		obs_log(OBS_INFO, "kube_dry_run", "verb", "apply", "resource",
			"nodeclaims.karpenter.sh", "name", name, "instance_type", nc->instance_type,
			"pods", sb_str(&pods), NULL);
		obs_inc(obs_series(c->m_dry, "apply", "nodeclaims", NULL));
		sb_free(&pods);
		return;                 /* nothing written, so none counted as written */
	}
	rc = kube_apply_object(c->kc, o, NULL, &err);
	if (rc)
		obs_log(OBS_ERROR, "kube_write_failed", "error", err.msg, NULL);
	else
		obs_log(OBS_INFO, "nodeclaim_created", "name", name, "instance_type",
			nc->instance_type, "capacity_type", nc->capacity_type, "pods",
			sb_str(&pods), NULL);
	pthread_mutex_lock(&c->lock);
	if (rc)
		c->stats.write_errors++;
	else
		c->stats.nodeclaims_written++;
	pthread_mutex_unlock(&c->lock);
	obs_inc(rc ? c->s_errors : c->s_written);
	if (!rc) {
		struct kube_objref ref = { "karpenter.sh/v1", "NodeClaim", NULL, name, NULL };

		kube_event(c->rec, &ref, "Normal", "Launching", "Provisioning",
			   "%s %s (%s) for %s", nc->node_pool, nc->instance_type, nc->capacity_type,
			   sb_str(&pods));
	}
	sb_free(&pods);
}

/* A pod no option can take: a Warning with the planner's reasons. */
static void warn_unschedulable(struct ctrl *c, const struct plan_unschedulable *u)
{
	char ns[256], name[256];
	const char *slash = strchr(u->pod, '/');
	struct strbuf note = STRBUF_INIT;
	struct kube_objref ref = { "v1", "Pod", ns, name, NULL };

	if (!slash || c->o.dry_run)
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

static void cycle(struct ctrl *c)
{
	struct model_set *set = model_set_new(), *ncs = model_set_new();
	struct plan_request rq = { .set = set, .format = PLAN_FORMAT_YAML, .prepare = c->o.prepare,
				   .prepare_arg = c->o.prepare_arg, .who = "dratopo-coordinator" };
	struct plan_report rep = { 0 };
	struct dt_err err = { 0 };
	int64_t t0 = now_ms();
	char plan_id[32];
	size_t written0 = c->stats.nodeclaims_written;

	if (!set || !ncs || snapshot(c, set, &err)) {
		obs_log(OBS_ERROR, "kube_plan_failed", "error", err.code ? err.msg : "out of memory",
			NULL);
		goto out;
	}
	ctrl_verify_registered(c, set);
	snprintf(plan_id, sizeof(plan_id), "%" PRId64, (int64_t)time(NULL));
	plan_execute(&rq, &rep);
	for (size_t i = 0; i < rep.diags.n && i < 20; i++)
		obs_log(OBS_WARN, "kube_plan_problem", "problem", rep.diags.msgs[i], NULL);
	if (!rep.result)
		goto out;
	if (rep.output.len &&
	    model_set_load_buffer(ncs, rep.output.buf, rep.output.len, "(plan)", NULL, &err) < 0)
		goto out;
	for (size_t i = 0; i < rep.result->n_node_claims; i++)
		write_claim(c, ncs, &rep.result->node_claims[i], plan_id);
	for (size_t i = 0; i < rep.result->n_unschedulable; i++)
		warn_unschedulable(c, &rep.result->unschedulable[i]);
	pthread_mutex_lock(&c->lock);
	c->stats.cycles++;
	c->stats.unschedulable = rep.result->n_unschedulable;
	pthread_mutex_unlock(&c->lock);
	obs_inc(c->s_cycles);
	obs_set(c->s_unsched, (double)rep.result->n_unschedulable);
	{
		struct obs_ev ev;

		obs_ev_begin(&ev, OBS_INFO, "kube_plan");
		obs_ev_int(&ev, "pods", (long long)rep.result->n_pods);
		obs_ev_int(&ev, "nodeclaims", (long long)rep.result->n_node_claims);
		obs_ev_int(&ev, "written", (long long)(c->stats.nodeclaims_written - written0));
		obs_ev_int(&ev, "unschedulable", (long long)rep.result->n_unschedulable);
		obs_ev_int(&ev, "ms", (long long)(now_ms() - t0));
		obs_ev_end(&ev);
	}
out:
	plan_report_free(&rep);
	model_set_free(ncs);
	model_set_free(set);
}

/* ---- the thread ---- */

static void *run(void *arg)
{
	struct ctrl *c = arg;
	int64_t idle = (int64_t)(c->o.batch_idle_s * 1000), max = (int64_t)(c->o.batch_max_s * 1000);
	int64_t period = (int64_t)(c->o.remedy_period_s * 1000), next_remedy = now_ms() + period;
	bool was_leading = false;

	pthread_mutex_lock(&c->lock);
	while (!c->stop) {
		int64_t now = now_ms(), due = INT64_MAX;
		struct timespec until;
		bool leading = !c->o.leading || c->o.leading(c->o.leading_arg);

		/* A takeover plans at once what is pending, from warm caches:
		 * the last leader may have died halfway through a plan. */
		if (leading && !was_leading && c->o.leading) {
			c->dirty = true;
			c->first_dirty_ms = c->last_event_ms = now - idle;
		}
		was_leading = leading;
		if (c->o.remedies && now >= next_remedy && leading) {
			pthread_mutex_unlock(&c->lock);
			ctrl_remedies(c);
			pthread_mutex_lock(&c->lock);
			next_remedy = now_ms() + period;
			continue;
		}
		/* a batch ends after a quiet second, or at the latest after 10 */
		if (c->dirty) {
			due = c->last_event_ms + idle;
			if (c->first_dirty_ms + max < due)
				due = c->first_dirty_ms + max;
		}
		if (!c->dirty || now < due || !ctrl_synced(c) || !leading) {
			clock_gettime(CLOCK_REALTIME, &until);
			if ((c->dirty && now >= due) || !leading)
				due = now + 100;        /* not synced, not leading: look again soon */
			if (c->o.remedies && leading && next_remedy < due)
				due = next_remedy;
			if (due == INT64_MAX) {
				pthread_cond_wait(&c->cond, &c->lock);
				continue;
			}
			until.tv_sec += (due - now) / 1000;
			until.tv_nsec += ((due - now) % 1000) * 1000000L;
			if (until.tv_nsec >= 1000000000L) {
				until.tv_sec++;
				until.tv_nsec -= 1000000000L;
			}
			pthread_cond_timedwait(&c->cond, &c->lock, &until);
			continue;
		}
		c->dirty = false;
		pthread_mutex_unlock(&c->lock);
		cycle(c);
		pthread_mutex_lock(&c->lock);
	}
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

static int metrics(struct ctrl *c, struct dt_err *err)
{
	static const char *const by_verb[] = { "verb", "resource", NULL };
	struct obs_registry *r = c->o.registry;
	struct obs_metric *cycles, *written, *errors, *unsched, *mismatch;
	int rc;

	if (!r)
		return 0;
	if ((rc = obs_counter_new(r, "dratopo_kube_plans_total",
				  "Plans the controller made of the cluster's pending pods.", NULL,
				  &cycles, err)) ||
	    (rc = obs_counter_new(r, "dratopo_kube_nodeclaims_written_total",
				  "NodeClaims the controller applied.", NULL, &written, err)) ||
	    (rc = obs_counter_new(r, "dratopo_kube_dry_run_writes_total",
				  "Writes --dry-run logged instead of making.", by_verb, &c->m_dry,
				  err)) ||
	    (rc = obs_counter_new(r, "dratopo_kube_write_errors_total",
				  "Writes the API server refused or that failed.", NULL,
				  &errors, err)) ||
	    (rc = obs_gauge_new(r, "dratopo_kube_unschedulable_pods",
				"Pending pods the last plan found no place for.", NULL,
				&unsched, err)) ||
	    (rc = obs_counter_new(r, "dratopo_kube_slice_mismatches_total",
				  "Registered nodes whose published slices differ from the plan's.",
				  NULL, &mismatch, err)))
		return rc;
	c->s_mismatch = obs_series(mismatch, NULL);
	c->s_cycles = obs_series(cycles, NULL);
	c->s_written = obs_series(written, NULL);
	c->s_errors = obs_series(errors, NULL);
	c->s_unsched = obs_series(unsched, NULL);
	return 0;
}

int ctrl_start(const struct ctrl_opts *o, struct ctrl **out, struct dt_err *err)
{
	struct ctrl *c = calloc(1, sizeof(*c));
	struct kube_config cfg = { 0 };
	struct kube_recorder_opts ro = { .controller = "dratopo.io/coordinator" };
	const char *host = getenv("HOSTNAME");
	int rc;

	*out = NULL;
	if (!c)
		return dt_err_set(err, -ENOMEM, "out of memory");
	c->o = *o;
	if (c->o.batch_idle_s <= 0)
		c->o.batch_idle_s = 1;
	if (c->o.batch_max_s <= 0)
		c->o.batch_max_s = 10;
	if (c->o.remedy_period_s <= 0)
		c->o.remedy_period_s = 10;
	snprintf(c->instance, sizeof(c->instance), "%s",
		 o->instance ? o->instance : host ? host : "dratopo-coordinator");
	ro.instance = c->instance;
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->cond, NULL);
	rc = kube_config_auto(o->kubeconfig, o->context, &cfg, err);
	if (!rc)
		rc = kube_client_new(&cfg, NULL, &c->kc, err);
	if (!rc && o->leader)
		kube_leader_fence(o->leader, c->kc);    /* every write of the controller */
	kube_config_free(&cfg);
	if (!rc)
		rc = metrics(c, err);
	if (!rc)
		rc = kube_recorder_new(c->kc, &ro, &c->rec, err);
	for (size_t i = 0; !rc && i < KIND_COUNT; i++) {
		struct kube_informer_opts io = { .on_event = on_event, .arg = c,
						 .min_watch_timeout_s = o->min_watch_timeout_s };

		rc = kube_informer_new(c->kc, watched[i], &io, &c->inf[i], err);
		if (!rc)
			rc = kube_informer_start(c->inf[i], err);
	}
	if (!rc) {
		rc = -pthread_create(&c->thread, NULL, run, c);
		if (rc)
			dt_err_set(err, rc, "controller: cannot start a thread");
		else
			c->running = true;
	}
	if (rc) {
		ctrl_stop(c);
		return rc;
	}
	obs_log(OBS_INFO, "kube_controller", "server", kube_client_server(c->kc), "dry_run",
		o->dry_run ? "true" : "false", NULL);
	*out = c;
	return 0;
}

void ctrl_stop(struct ctrl *c)
{
	if (!c)
		return;
	if (c->running) {
		pthread_mutex_lock(&c->lock);
		c->stop = true;
		pthread_cond_broadcast(&c->cond);
		pthread_mutex_unlock(&c->lock);
		pthread_join(c->thread, NULL);
	}
	for (size_t i = 0; i < KIND_COUNT; i++)
		kube_informer_free(c->inf[i]);
	kube_recorder_free(c->rec, 2000);
	kube_client_free(c->kc);
	pthread_cond_destroy(&c->cond);
	pthread_mutex_destroy(&c->lock);
	free(c);
}
