/* ctrl.c - the controller loop (see ctrl.h): informers whose events feed
 * the batch window (ctrl_batch.c), a thread that waits for the window to
 * close, and one plan per batch: the cluster's objects as the model
 * decodes them with the NodeClaims in flight as nodes (ctrl_snapshot.c),
 * plan_execute, the plan's NodeClaims applied and its Events written
 * (ctrl_write.c), the status page's view rebuilt (ctrl_view.c); and every
 * remedy_period_s the fleet's remedies (ctrl_remedy.c). */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctrl_internal.h"
#include "obs_log.h"
#include "obs_metrics.h"

/* What is watched, in the order objects join the planner's set. */
static const struct kube_resource *const watched[KIND_COUNT] = {
	&kube_res_deviceclasses, &kube_res_nodepools, &kube_res_ec2nodeclasses,
	&kube_res_nodeoverlays, &kube_res_nodes, &kube_res_resourceslices,
	&kube_res_devicetaintrules, &kube_res_daemonsets, &kube_res_resourceclaimtemplates,
	&kube_res_resourceclaims, &kube_res_pods, &kube_res_nodeclaims,
};

static void on_event(void *arg, enum kube_event_type type, const struct kube_object *obj)
{
	struct ctrl_watch *w = arg;
	struct ctrl *c = w->c;

	if (type == KUBE_DELETED && w->which == W_NODECLAIMS && obj->model &&
	    obj->model->kind == MODEL_NODE_CLAIM) {
		pthread_mutex_lock(&c->lock);
		ctrl_offers_failed(c, obj->model);
		pthread_mutex_unlock(&c->lock);
	}
	if (type == KUBE_DELETED && w->which == W_NODES && c->o.node_deleted)
		c->o.node_deleted(c->o.node_deleted_arg, obj->name);
	ctrl_batch_event(c, w->which, type, obj);
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

/* ---- one plan ---- */

static void log_plan(const struct plan_result *res, size_t written, const int64_t t[4])
{
	struct obs_ev ev;

	obs_ev_begin(&ev, OBS_INFO, "kube_plan");
	obs_ev_int(&ev, "pods", (long long)res->n_pods);
	obs_ev_int(&ev, "nodeclaims", (long long)res->n_node_claims);
	obs_ev_int(&ev, "written", (long long)written);
	obs_ev_int(&ev, "unschedulable", (long long)res->n_unschedulable);
	obs_ev_int(&ev, "ms", (long long)(t[3] - t[0]));
	obs_ev_int(&ev, "snapshot_ms", (long long)(t[1] - t[0]));
	obs_ev_int(&ev, "plan_ms", (long long)(t[2] - t[1]));
	obs_ev_int(&ev, "write_ms", (long long)(t[3] - t[2]));
	obs_ev_end(&ev);
}

static void cycle(struct ctrl *c)
{
	struct ctrl_cycle cy = { 0 };
	struct model_set *ncs = model_set_new();
	struct plan_request rq = { .format = PLAN_FORMAT_YAML, .prepare = c->o.prepare,
				   .prepare_arg = c->o.prepare_arg, .who = "dratopo-coordinator" };
	struct plan_report rep = { 0 };
	struct dt_err err = { 0 };
	int64_t t[4] = { ctrl_now_ms() };
	size_t written = 0;
	char plan_id[32];

	if (!ncs || ctrl_snapshot(c, &cy, &err)) {
		obs_log(OBS_ERROR, "kube_plan_failed", "error", err.code ? err.msg : "out of memory",
			NULL);
		goto out;
	}
	t[1] = ctrl_now_ms();
	ctrl_verify_registered(c, cy.set);
	rq.set = cy.set;
	rq.opts.unavailable = cy.unavailable;
	rq.opts.n_unavailable = cy.n_unavailable;
	rq.opts.made_for = cy.made_for;
	rq.opts.n_made_for = cy.n_made_for;
	snprintf(plan_id, sizeof(plan_id), "%" PRId64, (int64_t)time(NULL));
	plan_execute(&rq, &rep);
	for (size_t i = 0; i < rep.diags.n && i < 20; i++)
		obs_log(OBS_WARN, "kube_plan_problem", "problem", rep.diags.msgs[i], NULL);
	if (!rep.result)
		goto out;
	if (rep.output.len &&
	    model_set_load_buffer(ncs, rep.output.buf, rep.output.len, "(plan)", NULL, &err) < 0)
		goto out;
	t[2] = ctrl_now_ms();
	ctrl_write_claims(c, &cy, rep.result, ncs, plan_id, &written);
	ctrl_warn_unschedulable(c, rep.result);
	t[3] = ctrl_now_ms();
	ctrl_view_update(c, &cy, rep.result);
	pthread_mutex_lock(&c->lock);
	c->stats.cycles++;
	c->stats.unschedulable = rep.result->n_unschedulable;
	pthread_mutex_unlock(&c->lock);
	obs_inc(c->s_cycles);
	obs_set(c->s_unsched, (double)rep.result->n_unschedulable);
	log_plan(rep.result, written, t);
out:
	plan_report_free(&rep);
	model_set_free(ncs);
	model_set_free(cy.set);
	u64map_free(&cy.in_flight);
}

/* ---- the thread ---- */

static void *run(void *arg)
{
	struct ctrl *c = arg;
	int64_t period = (int64_t)(c->o.remedy_period_s * 1000);
	int64_t next_remedy = ctrl_now_ms() + period;
	bool was_leading = false;

	pthread_mutex_lock(&c->lock);
	while (!c->stop) {
		int64_t now = ctrl_now_ms(), due;
		struct timespec until;
		bool leading = !c->o.leading || c->o.leading(c->o.leading_arg);

		/* A takeover plans at once what is pending, from warm caches:
		 * the last leader may have died halfway through a plan. */
		if (leading && !was_leading && c->o.leading)
			ctrl_batch_now(c);
		was_leading = leading;
		due = ctrl_batch_due(c);
		if (c->o.remedies && now >= next_remedy && leading) {
			pthread_mutex_unlock(&c->lock);
			if (ctrl_synced(c))
				ctrl_remedies(c);
			pthread_mutex_lock(&c->lock);
			next_remedy = ctrl_now_ms() + period;
			continue;
		}
		if (due <= now && c->batch.open && ctrl_synced(c) && leading) {
			ctrl_batch_close(c);
			pthread_mutex_unlock(&c->lock);
			cycle(c);
			pthread_mutex_lock(&c->lock);
			continue;
		}
		if (due <= now || !leading)
			due = now + 100;        /* not synced, not leading: look again soon */
		if (c->o.remedies && leading && next_remedy < due)
			due = next_remedy;
		if (due == INT64_MAX) {
			pthread_cond_wait(&c->cond, &c->lock);
			continue;
		}
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += (due - now) / 1000;
		until.tv_nsec += ((due - now) % 1000) * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&c->cond, &c->lock, &until);
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
	pthread_mutex_init(&c->view_lock, NULL);
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
		struct kube_informer_opts io = { .on_event = on_event, .arg = &c->watch[i],
						 .min_watch_timeout_s = o->min_watch_timeout_s };

		c->watch[i] = (struct ctrl_watch){ c, i };

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
	ctrl_batch_free(&c->batch);
	ctrl_view_free(&c->view);
	u64map_free(&c->judged);
	for (size_t i = 0; i < SCOPE_COUNT; i++) {
		u64map_free(&c->ledger[i].last);
		u64map_free(&c->ledger[i].now);
	}
	pthread_cond_destroy(&c->cond);
	pthread_mutex_destroy(&c->view_lock);
	pthread_mutex_destroy(&c->lock);
	free(c);
}
