/* remedy_objects.c - an assessment as Kubernetes objects (DeviceTaintRules,
 * the Node taint), the names that lift them, and their text for kubectl.
 * See remedy.h. */
#include "remedy.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "model.h"

void rem_rule_name(const char *node, const char *device, char *buf, size_t len)
{
	uint64_t h;

	if (strlen(REM_RULE_PREFIX) + strlen(node) + 1 + strlen(device) < REM_NAME_MAX) {
		snprintf(buf, len, REM_RULE_PREFIX "%s.%s", node, device);
		return;
	}
	h = hash_fnv1a(HASH_FNV_OFFSET, node, strlen(node));
	snprintf(buf, len, REM_RULE_PREFIX "n%016" PRIx64 ".%s", h, device);
}

void rem_objects_free(struct rem_objects *o)
{
	if (!o)
		return;
	free(o->rules);
	memset(o, 0, sizeof(*o));
}

static struct model_kv *one_kv(struct model_set *set, const char *key, const char *value)
{
	struct model_kv *kv = model_set_calloc(set, 1, sizeof(*kv));

	if (!kv)
		return NULL;
	kv->key = model_set_strdup(set, key);
	kv->value = model_set_strdup(set, value);
	return kv->key && kv->value ? kv : NULL;
}

static struct model_object *rule_object(const struct rem_assessment *a,
					const struct rem_device *d, struct model_set *set)
{
	struct model_object *o = model_set_add(set, MODEL_DEVICE_TAINT_RULE);
	struct model_device_taint_rule *r;
	struct model_device_taint_selector *sel;
	char name[REM_NAME_MAX];

	if (!o)
		return NULL;
	r = &o->u.taint_rule;
	rem_rule_name(a->node, d->device, name, sizeof(name));
	o->meta.name = model_set_strdup(set, name);
	/* The label lets `kubectl get devicetaintrules -l dratopo.io/node=N`
	 * find a node's rules; a node name over 63 bytes is no label value. */
	if (strlen(a->node) <= 63) {
		o->meta.labels = one_kv(set, REM_LABEL_NODE, a->node);
		o->meta.n_labels = o->meta.labels != NULL;
	}
	o->meta.annotations = one_kv(set, REM_ANNOTATION_DIFF, d->difference);
	o->meta.n_annotations = o->meta.annotations != NULL;
	sel = model_set_calloc(set, 1, sizeof(*sel));
	if (!o->meta.name || !o->meta.annotations || !sel)
		return NULL;
	sel->driver = d->driver;
	sel->pool = model_set_strdup(set, a->node);
	sel->device = model_set_strdup(set, d->device);
	r->device_selector = sel;
	r->taint.key = REM_TAINT_KEY;
	r->taint.value = rem_cause_value(d->cause);
	r->taint.effect = "NoSchedule";
	return sel->pool && sel->device ? o : NULL;
}

static struct model_object *node_object(const struct rem_assessment *a, struct model_set *set)
{
	struct model_object *o = model_set_add(set, MODEL_NODE);

	if (!o)
		return NULL;
	o->meta.name = model_set_strdup(set, a->node);
	o->u.node.taints = model_set_calloc(set, 1, sizeof(*o->u.node.taints));
	if (!o->meta.name || !o->u.node.taints)
		return NULL;
	o->u.node.taints[0].key = REM_TAINT_KEY;
	o->u.node.taints[0].value = REM_NODE_TAINT_VALUE;
	o->u.node.taints[0].effect = "NoSchedule";
	o->u.node.n_taints = 1;
	return o;
}

int rem_objects_build(const struct rem_assessment *a, struct model_set *set,
		      struct rem_objects *out, struct dt_err *err)
{
	memset(out, 0, sizeof(*out));
	out->rules = calloc(a->n_devices ? a->n_devices : 1, sizeof(*out->rules));
	if (!out->rules)
		goto oom;
	for (size_t i = 0; i < a->n_devices; i++) {
		out->rules[i] = rule_object(a, &a->devices[i], set);
		if (!out->rules[i])
			goto oom;
		out->n_rules++;
	}
	if (a->node_unfit && !(out->node = node_object(a, set)))
		goto oom;
	return 0;
oom:
	rem_objects_free(out);
	return dt_err_set(err, -ENOMEM, "remedy: out of memory");
}

int rem_node_objects(const char *node, const struct topo_verify_result *vr,
		     const struct topo *t, const struct hwdb_type *expected,
		     struct model_set *set, struct rem_objects *out, struct dt_err *err)
{
	struct rem_assessment a;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = rem_assess(node, vr, t, expected, &a, err);
	if (!rc)
		rc = rem_objects_build(&a, set, out, err);
	rem_assessment_free(&a);
	return rc;
}

/* ---- Lifting ---- */

void rem_lift_free(struct rem_lift *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n_rule_names; i++)
		free(l->rule_names[i]);
	free(l->rule_names);
	free(l->node);
	memset(l, 0, sizeof(*l));
}

static size_t max_size(size_t a, size_t b)
{
	return a > b ? a : b;
}

static int lift_add(struct rem_lift *l, size_t cap, const char *node, const char *dev)
{
	char name[REM_NAME_MAX];

	rem_rule_name(node, dev, name, sizeof(name));
	for (size_t i = 0; i < l->n_rule_names; i++)
		if (!strcmp(l->rule_names[i], name))
			return 0;
	if (l->n_rule_names == cap)
		return 0;
	l->rule_names[l->n_rule_names] = strdup(name);
	if (!l->rule_names[l->n_rule_names])
		return -ENOMEM;
	l->n_rule_names++;
	return 0;
}

int rem_lift(const char *node, const struct hwdb_type *expected, const struct topo *t,
	     struct rem_lift *out, struct dt_err *err)
{
	size_t gpus = max_size(expected ? expected->n_gpus : 0, t ? t->n_gpus : 0);
	size_t efas = max_size(expected ? expected->n_efas : 0, t ? t->n_efas : 0);
	size_t n_dev = t ? t->n_devices : 0, cap = gpus + efas + n_dev;
	char dev[TOPO_DEVICE_NAME_MAX];

	memset(out, 0, sizeof(*out));
	if (!node || !*node)
		return dt_err_set(err, -EINVAL, "remedy: the node needs a name");
	out->node = strdup(node);
	out->rule_names = calloc(cap + 1, sizeof(*out->rule_names));
	if (!out->node || !out->rule_names)
		goto oom;
	/* GPU minors up to the type's count (a GPU gone at drift time shifted
	 * the names after it), then the node's EFAs by address. */
	for (size_t i = 0; i < gpus; i++) {
		snprintf(dev, sizeof(dev), "gpu-%zu", i);
		if (lift_add(out, cap, node, dev))
			goto oom;
	}
	for (size_t i = 0; i < n_dev; i++)
		if (t->devices[i].kind == TOPO_EFA &&
		    lift_add(out, cap, node, topo_device_dra_name(t, i, dev, sizeof(dev))))
			goto oom;
	/* Rules of coordinators before driver names (efa-N): lifted too. */
	for (size_t i = 0; i < efas; i++) {
		snprintf(dev, sizeof(dev), "efa-%zu", i);
		if (lift_add(out, cap, node, dev))
			goto oom;
	}
	return 0;
oom:
	rem_lift_free(out);
	return dt_err_set(err, -ENOMEM, "remedy: out of memory");
}

/* ---- Output ---- */

static void node_taint_command(struct strbuf *out, const char *node, bool add)
{
	if (add)
		sb_printf(out, "kubectl taint nodes %s %s=%s:NoSchedule --overwrite", node,
			  REM_TAINT_KEY, REM_NODE_TAINT_VALUE);
	else
		sb_printf(out, "kubectl taint nodes %s %s:NoSchedule-", node, REM_TAINT_KEY);
}

static int emit_json(const struct rem_objects *o, const char *node, struct strbuf *out)
{
	struct doc_arena *a = doc_arena_new();
	struct doc_node *top, *rules, *taint = NULL;
	int rc = -ENOMEM;

	if (!a)
		return -ENOMEM;
	top = doc_new_map(a);
	rules = doc_new_seq(a);
	if (!top || !rules)
		goto out;
	for (size_t i = 0; i < o->n_rules; i++) {
		struct doc_node *n = model_encode(o->rules[i], a);

		if (!n || doc_seq_push(a, rules, n))
			goto out;
	}
	if (o->node) {
		taint = doc_new_map(a);
		if (!taint || doc_map_set(a, taint, "key", doc_new_string(a, REM_TAINT_KEY)) ||
		    doc_map_set(a, taint, "value", doc_new_string(a, REM_NODE_TAINT_VALUE)) ||
		    doc_map_set(a, taint, "effect", doc_new_string(a, "NoSchedule")))
			goto out;
	}
	if (doc_map_set(a, top, "node", doc_new_string(a, node)) ||
	    doc_map_set(a, top, "deviceTaintRules", rules) ||
	    doc_map_set(a, top, "nodeTaint", taint ? taint : doc_new_null(a)))
		goto out;
	rc = doc_emit_json(top, 4, out);
	sb_putc(out, '\n');
	if (!rc)
		rc = sb_error(out);
out:
	doc_arena_free(a);
	return rc;
}

int rem_emit(const struct rem_objects *o, const char *node, enum doc_format fmt,
	     struct strbuf *out)
{
	int rc;

	if (fmt == DOC_FORMAT_JSON)
		return emit_json(o, node, out);
	for (size_t i = 0; i < o->n_rules; i++)
		if ((rc = model_emit(o->rules[i], DOC_FORMAT_YAML, out)))
			return rc;
	if (o->node) {
		/* Not an object to apply: Node.spec.taints is replaced whole. */
		sb_printf(out, "%s# node %s is unfit: ", out->len ? "---\n" : "", node);
		node_taint_command(out, node, true);
		sb_putc(out, '\n');
	}
	return sb_error(out);
}

static struct model_object *anchor_object(const struct rem_summary *s, struct model_set *set)
{
	struct model_object *o = model_set_add(set, MODEL_DEVICE_TAINT_RULE);
	struct model_kv *kv = model_set_calloc(set, 2, sizeof(*kv));
	struct model_device_taint_selector *sel = model_set_calloc(set, 1, sizeof(*sel));
	char sum[160];

	if (!o || !kv || !sel)
		return NULL;
	snprintf(sum, sizeof(sum), "nodes in drift: %zu, DeviceTaintRules: %zu, Node taints: %zu, "
		 "nodes to lift: %zu", s->nodes_in_drift, s->device_taint_rules, s->node_taints,
		 s->nodes_to_lift);
	kv[0].key = REM_ANNOTATION_PURPOSE;
	kv[0].value = "selects no device, changes nothing: keeps dratopo nodes -o yaml "
		      "never empty for kubectl apply";
	kv[1].key = REM_ANNOTATION_REMEDIES;
	kv[1].value = model_set_strdup(set, sum);
	o->meta.name = REM_ANCHOR_NAME;
	o->meta.annotations = kv;
	o->meta.n_annotations = 2;
	sel->driver = REM_ANCHOR_DRIVER;
	o->u.taint_rule.device_selector = sel;
	o->u.taint_rule.taint.key = REM_TAINT_KEY;
	o->u.taint_rule.taint.effect = "None";
	return kv[1].value ? o : NULL;
}

int rem_anchor_emit(const struct rem_summary *s, struct strbuf *out)
{
	struct model_set *set = model_set_new();
	const struct model_object *o = set ? anchor_object(s, set) : NULL;
	int rc = o ? model_emit(o, DOC_FORMAT_YAML, out) : -ENOMEM;

	model_set_free(set);
	return rc;
}

int rem_lift_emit(const struct rem_lift *l, struct strbuf *out)
{
	sb_printf(out, "# node %s matches again: its DeviceTaintRules, for kubectl delete "
		  "--ignore-not-found -f -\n# and its Node taint: ", l->node);
	node_taint_command(out, l->node, false);
	sb_putc(out, '\n');
	for (size_t i = 0; i < l->n_rule_names; i++)
		sb_printf(out, "---\napiVersion: resource.k8s.io/v1\nkind: DeviceTaintRule\n"
			  "metadata:\n  name: %s\n", l->rule_names[i]);
	return sb_error(out);
}
