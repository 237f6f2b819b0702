/* ctrl_remedy.c - the fleet's remedies made real in the cluster: the
 * DeviceTaintRules of nodes in drift applied (server-side apply, labelled
 * as dratopo's), the Node taint of unfit nodes added, and both taken back
 * once a node no longer needs them (it matches again, or is gone). A
 * Node's spec.taints is an atomic list, so the taint goes in and out by
 * reading the Node and writing it back with its resourceVersion: a
 * conflict leaves it for the next round, and the other taints stay. Only
 * what changed is written; in dry run each would-be write is logged once
 * (ctrl_gate), not every round. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctrl_internal.h"
#include "obs_log.h"

#define RULES "devicetaintrules.resource.k8s.io"

static bool has_label(const struct kube_object *o, const char *key, const char *value)
{
	json_object *j = json_tokener_parse(o->json);
	const char *v = kube_json_str(j, "metadata", "labels", key, NULL);
	bool yes = v && !strcmp(v, value);

	json_object_put(j);
	return yes;
}

static void count_write(struct ctrl *c)
{
	pthread_mutex_lock(&c->lock);
	c->stats.remedy_writes++;
	pthread_mutex_unlock(&c->lock);
}

/* ---- DeviceTaintRules ---- */

static int apply_rule(struct ctrl *c, struct model_set *set, struct model_object *o)
{
	struct dt_err err = { 0 };
	char *have = kube_informer_get(c->inf[W_TAINT_RULES], NULL, o->meta.name);
	int rc;

	free(have);
	if (have)
		return 0;               /* applied already (rules of a node do not change) */
	if (ctrl_add_kv(set, &o->meta.labels, &o->meta.n_labels, CTRL_MANAGED_BY_KEY,
			CTRL_MANAGED_BY))
		return -ENOMEM;
	if (!ctrl_gate(c, SCOPE_REMEDY, "apply", RULES, o->meta.name, NULL))
		return 0;
	rc = kube_apply_object(c->kc, o, NULL, &err);
	if (rc)
		obs_log(OBS_ERROR, "kube_write_failed", "error", err.msg, NULL);
	else
		obs_log(OBS_INFO, "device_taint_applied", "name", o->meta.name, NULL);
	count_write(c);
	return 0;
}

struct stale_ctx {
	const struct model_set *want;
	char (*names)[256];
	char (*uids)[64];
	size_t n, cap;
};

static int find_stale(void *arg, const struct kube_object *o)
{
	struct stale_ctx *s = arg;

	if (strncmp(o->name, CTRL_RULE_PREFIX, strlen(CTRL_RULE_PREFIX)) ||
	    model_set_find(s->want, MODEL_DEVICE_TAINT_RULE, NULL, o->name) ||
	    !has_label(o, CTRL_MANAGED_BY_KEY, CTRL_MANAGED_BY) || s->n == s->cap)
		return 0;
	snprintf(s->names[s->n], sizeof(s->names[0]), "%s", o->name);
	snprintf(s->uids[s->n], sizeof(s->uids[0]), "%s", o->uid);
	s->n++;
	return 0;
}

/* Rules of ours that no drift asks for any more. */
static void delete_stale_rules(struct ctrl *c, const struct model_set *want)
{
	struct stale_ctx s = { .want = want, .cap = 256 };

	s.names = calloc(s.cap, sizeof(*s.names));
	s.uids = calloc(s.cap, sizeof(*s.uids));
	if (s.names && s.uids)
		kube_informer_foreach(c->inf[W_TAINT_RULES], find_stale, &s);
	for (size_t i = 0; i < s.n; i++) {
		struct kube_ref ref = { &kube_res_devicetaintrules, NULL, s.names[i], NULL };
		struct dt_err err = { 0 };
		int rc = 0;

		if (!ctrl_gate(c, SCOPE_REMEDY, "delete", RULES, s.names[i], NULL))
			continue;
		rc = kube_delete(c->kc, &ref, s.uids[i], NULL, &err);
		if (rc && rc != KUBE_ENOTFOUND)
			obs_log(OBS_ERROR, "kube_write_failed", "error", err.msg, NULL);
		else
			obs_log(OBS_INFO, "device_taint_lifted", "name", s.names[i], NULL);
		count_write(c);
	}
	free(s.names);
	free(s.uids);
}

/* ---- the Node taint ---- */

static bool node_tainted(json_object *node)
{
	json_object *t = kube_json_get(node, "spec", "taints", NULL);

	for (size_t i = 0; t && i < json_object_array_length(t); i++) {
		const char *k = kube_json_str(json_object_array_get_idx(t, i), "key", NULL);

		if (k && !strcmp(k, CTRL_DRIFT_TAINT))
			return true;
	}
	return false;
}

/* Add (taint set) or remove the drift taint on node, keeping the others:
 * read, change, write back with the resourceVersion read. */
static void set_node_taint(struct ctrl *c, const char *node, const struct model_taint *taint)
{
	struct kube_ref ref = { &kube_res_nodes, NULL, node, NULL };
	json_object *n = NULL, *spec, *old, *list;
	struct dt_err err = { 0 };
	int rc;

	if (!ctrl_gate(c, SCOPE_REMEDY, "update", "nodes", node, "taint",
		       taint ? "add" : "remove", NULL))
		return;
	rc = kube_get(c->kc, &ref, &n, &err);
	if (rc || node_tainted(n) == (taint != NULL)) {
		json_object_put(n);
		return;
	}
	spec = kube_json_get(n, "spec", NULL);
	old = kube_json_get(spec, "taints", NULL);
	list = json_object_new_array();
	for (size_t i = 0; old && i < json_object_array_length(old); i++) {
		json_object *t = json_object_array_get_idx(old, i);
		const char *k = kube_json_str(t, "key", NULL);

		if (!k || strcmp(k, CTRL_DRIFT_TAINT))
			json_object_array_add(list, json_object_get(t));
	}
	if (taint) {
		json_object *t = json_object_new_object();

		json_object_object_add(t, "key", json_object_new_string(taint->key));
		if (taint->value)
			json_object_object_add(t, "value", json_object_new_string(taint->value));
		json_object_object_add(t, "effect", json_object_new_string(taint->effect));
		json_object_array_add(list, t);
	}
	json_object_object_add(spec, "taints", list);
	rc = kube_update(c->kc, &ref, n, NULL, &err);
	if (rc == KUBE_ECONFLICT)
		obs_log(OBS_INFO, "node_taint_retry", "node", node, NULL);  /* next round */
	else if (rc)
		obs_log(OBS_ERROR, "kube_write_failed", "error", err.msg, NULL);
	else
		obs_log(OBS_INFO, taint ? "node_tainted" : "node_taint_lifted", "node", node,
			"taint", CTRL_DRIFT_TAINT, NULL);
	count_write(c);
	json_object_put(n);
}

struct taint_ctx {
	struct ctrl *c;
	const struct model_set *want;
	char (*lift)[256];
	size_t n, cap;
};

static int find_lift(void *arg, const struct kube_object *o)
{
	struct taint_ctx *t = arg;
	json_object *j;

	if (model_set_find(t->want, MODEL_NODE, NULL, o->name) || t->n == t->cap ||
	    !strstr(o->json, CTRL_DRIFT_TAINT))
		return 0;
	j = json_tokener_parse(o->json);
	if (node_tainted(j))
		snprintf(t->lift[t->n++], sizeof(t->lift[0]), "%s", o->name);
	json_object_put(j);
	return 0;
}

static void reconcile_taints(struct ctrl *c, const struct model_set *want)
{
	struct taint_ctx t = { .c = c, .want = want, .cap = 256 };
	const struct model_object *o;

	for (o = NULL; (o = model_set_next(want, MODEL_NODE, o));) {
		char *have = kube_informer_get(c->inf[W_NODES], NULL, o->meta.name);

		/* a Node the cluster does not have is not created for a taint */
		if (have && o->u.node.n_taints && !strstr(have, CTRL_DRIFT_TAINT))
			set_node_taint(c, o->meta.name, &o->u.node.taints[0]);
		free(have);
	}
	t.lift = calloc(t.cap, sizeof(*t.lift));
	if (t.lift)
		kube_informer_foreach(c->inf[W_NODES], find_lift, &t);
	for (size_t i = 0; i < t.n; i++)
		set_node_taint(c, t.lift[i], NULL);
	free(t.lift);
}

void ctrl_remedies(struct ctrl *c)
{
	struct strbuf yaml = STRBUF_INIT;
	struct model_set *want;
	struct dt_err err = { 0 };
	struct model_object *o;

	if (!c->o.remedies)
		return;
	want = model_set_new();
	if (!want || c->o.remedies(c->o.remedies_arg, &yaml, &err) ||
	    (yaml.len && model_set_load_buffer(want, yaml.buf, yaml.len, "(remedies)", NULL,
					       &err) < 0)) {
		obs_log(OBS_ERROR, "kube_remedies_failed", "error", err.code ? err.msg : "out of memory",
			NULL);
		goto out;
	}
	for (o = NULL; (o = model_set_next(want, MODEL_DEVICE_TAINT_RULE, o));)
		if (apply_rule(c, want, o))
			break;
	delete_stale_rules(c, want);
	reconcile_taints(c, want);
	ctrl_gate_round(c, SCOPE_REMEDY);
out:
	sb_free(&yaml);
	model_set_free(want);
}
