/* plan_narrow.c - the keys a new node gets its value for only at launch
 * (the zone, the region, the zone id: plan_is_open_key), narrowed by the
 * pods placed on it.
 *
 * A node lives in one zone. Karpenter narrows a NodeClaim's requirements
 * with every pod it adds and refuses a pod whose requirements on a key do
 * not intersect them, so two pods pinned to different zones never share a
 * node, and the NodeClaim says the zone it must launch in (QA-37). Here a
 * new node keeps the requirements its units bring on those keys (a stack
 * of pointers, undone with the optimizer's undo), a unit fits only when,
 * key by key, the pool's, the node's and its own requirements still leave
 * a value, and the NodeClaim gets one requirement per key: In the values
 * left, or NotIn what was excluded.
 *
 * A unit's requirements on these keys come from its pods' nodeSelector and
 * their required node affinity: a single term's requirements as they are;
 * for several ORed terms, on a key every term bounds with an In list, the
 * union of those lists (the pod runs where one term holds). Values are
 * strings: Gt and Lt, meaningless on a zone, narrow nothing. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "plan_state.h"

/* ---- a unit's requirements on the open keys ---- */

/* Gathers a unit's requirements on the open keys; with r NULL it only
 * counts them and the values that unions of ORed terms need. */
struct gather {
	struct model_requirement *r;
	const char **vals;
	size_t n, n_vals;
};

static void put_req(struct gather *g, const struct model_requirement *r)
{
	if (g->r)
		g->r[g->n] = *r;
	g->n++;
}

/* nodeSelector key: value as the requirement key In [value]; its value
 * pointer is the model's, which outlives the plan. */
static void put_selector(struct gather *g, const struct model_kv *kv)
{
	put_req(g, &(struct model_requirement){ .key = kv->key, .operator_text = "In",
						.op = MODEL_OP_IN,
						.values = (const char **)&kv->value,
						.n_values = 1 });
}

/* The first In list of a term on key, or NULL. */
static const struct model_requirement *term_in(const struct model_node_selector_term *t,
					       const char *key)
{
	for (size_t i = 0; i < t->n_match_expressions; i++)
		if (t->match_expressions[i].op == MODEL_OP_IN &&
		    !strcmp(t->match_expressions[i].key, key))
			return &t->match_expressions[i];
	return NULL;
}

/* A pod with several ORed terms runs where one of them holds: on a key
 * every term bounds with an In list, the node's value must be in their
 * union (other terms narrow nothing for sure). */
static void put_union(struct gather *g, const struct model_node_selector *aff, const char *key)
{
	size_t first = g->n_vals, n = 0;

	for (size_t t = 0; t < aff->n_terms; t++)
		if (!term_in(&aff->terms[t], key))
			return;
	for (size_t t = 0; t < aff->n_terms; t++) {
		const struct model_requirement *in = term_in(&aff->terms[t], key);

		for (size_t k = 0; k < in->n_values; k++) {
			if (g->vals)
				g->vals[first + n] = in->values[k];
			n++;
		}
	}
	g->n_vals += n;
	put_req(g, &(struct model_requirement){ .key = key, .operator_text = "In",
						.op = MODEL_OP_IN,
						.values = g->vals ? &g->vals[first] : NULL,
						.n_values = n });
}

/* Whether key comes first among the open keys of term 0 (each key once). */
static bool first_open_key(const struct model_node_selector_term *t, size_t i)
{
	const char *key = t->match_expressions[i].key;

	for (size_t k = 0; k < i; k++)
		if (!strcmp(t->match_expressions[k].key, key))
			return false;
	return plan_is_open_key(key);
}

static void gather_pod(struct gather *g, const struct model_pod_spec *s)
{
	const struct model_node_selector *aff = s->required_node_affinity;

	for (size_t k = 0; k < s->n_node_selector; k++)
		if (plan_is_open_key(s->node_selector[k].key))
			put_selector(g, &s->node_selector[k]);
	if (!aff || !aff->n_terms)
		return;
	for (size_t k = 0; k < aff->terms[0].n_match_expressions; k++) {
		const struct model_requirement *r = &aff->terms[0].match_expressions[k];

		if (aff->n_terms == 1 && plan_is_open_key(r->key))
			put_req(g, r);
		else if (aff->n_terms > 1 && first_open_key(&aff->terms[0], k))
			put_union(g, aff, r->key);
	}
}

static void gather_unit(const struct plan_pods *pods, const struct plan_unit *u,
			struct gather *g)
{
	for (size_t i = 0; i < u->n_pods; i++)
		gather_pod(g, pods->pods[u->pods[i]].spec);
}

int plan_narrow_setup(struct planner *pl)
{
	const struct plan_pods *pods = &pl->pods;

	if (!(pl->unit_open = calloc(pods->n_units + 1, sizeof(*pl->unit_open))))
		return -ENOMEM;
	for (size_t i = 0; i < pods->n_units; i++) {
		struct plan_open_reqs *o = &pl->unit_open[i];
		struct gather count = { 0 }, fill = { 0 };

		gather_unit(pods, &pods->units[i], &count);
		if (!count.n)
			continue;
		fill.r = calloc(count.n, sizeof(*fill.r));
		fill.vals = calloc(count.n_vals + 1, sizeof(*fill.vals));
		o->r = fill.r;
		o->vals = fill.vals;
		if (!fill.r || !fill.vals)
			return -ENOMEM;
		gather_unit(pods, &pods->units[i], &fill);
		o->n = fill.n;
	}
	return 0;
}

void plan_narrow_free(struct planner *pl)
{
	for (size_t i = 0; pl->unit_open && i < pl->pods.n_units; i++) {
		free(pl->unit_open[i].r);
		free(pl->unit_open[i].vals);
	}
	free(pl->unit_open);
	pl->unit_open = NULL;
}

/* ---- what a node's requirements on one key leave ---- */

/* The requirements on the open keys that bind a new node: its pool's, its
 * offering's (the zones it recently failed in), the units' already on it,
 * and (while one is tried) the new unit's. */
struct narrowing {
	const struct model_requirement *pool;
	size_t n_pool;
	const struct model_requirement *cand;
	size_t n_cand;
	const struct model_requirement *const *node;
	size_t n_node;
	const struct model_requirement *unit;
	size_t n_unit;
};

static size_t total(const struct narrowing *w)
{
	return w->n_pool + w->n_cand + w->n_node + w->n_unit;
}

static const struct model_requirement *req_at(const struct narrowing *w, size_t i)
{
	if (i < w->n_pool)
		return &w->pool[i];
	i -= w->n_pool;
	if (i < w->n_cand)
		return &w->cand[i];
	i -= w->n_cand;
	if (i < w->n_node)
		return w->node[i];
	return &w->unit[i - w->n_node];
}

/* Whether every requirement on key holds for value. */
static bool all_have(const struct narrowing *w, const char *key, const char *value)
{
	for (size_t i = 0; i < total(w); i++) {
		const struct model_requirement *r = req_at(w, i);
		struct plan_vset s;

		if (strcmp(r->key, key) || r->op == MODEL_OP_GT || r->op == MODEL_OP_LT)
			continue;
		if (plan_vset_from_req(r, &s) || !plan_vset_has(&s, value))
			return false;
	}
	return true;
}

/* The first In list on key (a finite set the node's value must be in), or
 * NULL when none bounds it; *never: a DoesNotExist, which no new node
 * meets (it always gets the label). */
static const struct model_requirement *first_in(const struct narrowing *w, const char *key,
						bool *never)
{
	const struct model_requirement *in = NULL;

	*never = false;
	for (size_t i = 0; i < total(w); i++) {
		const struct model_requirement *r = req_at(w, i);

		if (strcmp(r->key, key))
			continue;
		if (r->op == MODEL_OP_DOES_NOT_EXIST)
			*never = true;
		if (r->op == MODEL_OP_IN && !in)
			in = r;
	}
	return in;
}

/* Whether some value meets every requirement on key. Without an In list
 * only finitely many strings are excluded: infinitely many are left. */
static bool satisfiable(const struct narrowing *w, const char *key)
{
	bool never;
	const struct model_requirement *in = first_in(w, key, &never);

	if (never)
		return false;
	if (!in)
		return true;
	for (size_t i = 0; i < in->n_values; i++)
		if (all_have(w, key, in->values[i]))
			return true;
	return false;
}

static struct narrowing node_narrowing(const struct planner *pl, const struct pnode *pn)
{
	const struct cand *c = &pl->cands[pn->cand];
	const struct pool *p = &pl->pools[c->pool];

	return (struct narrowing){ .pool = p->reqs, .n_pool = p->n_reqs,
				   .cand = &c->away, .n_cand = c->n_away,
				   .node = pn->open_reqs, .n_node = pn->n_open_reqs };
}

bool plan_narrow_fits(const struct planner *pl, const struct pnode *pn, size_t unit)
{
	const struct plan_open_reqs *o = &pl->unit_open[unit];
	struct narrowing w = node_narrowing(pl, pn);

	w.unit = o->r;
	w.n_unit = o->n;
	for (size_t i = 0; i < o->n; i++)
		if (!satisfiable(&w, o->r[i].key))
			return false;
	return true;
}

int plan_narrow_push(const struct planner *pl, struct pnode *pn, size_t unit)
{
	const struct plan_open_reqs *o = &pl->unit_open[unit];

	if (DT_GROW(pn->open_reqs, pn->cap_open_reqs, pn->n_open_reqs + o->n))
		return -ENOMEM;
	for (size_t i = 0; i < o->n; i++)
		pn->open_reqs[pn->n_open_reqs++] = &o->r[i];
	return 0;
}

/* ---- the NodeClaim's requirements on those keys ---- */

/* key In [what is left], or key NotIn [what was excluded] (false when
 * nothing is: the key stays open). Values go into vals (room for every
 * value of every requirement on key). */
static bool narrowed_req(const struct narrowing *w, const char *key, const char **vals,
			 struct model_requirement *out)
{
	bool never;
	const struct model_requirement *in = first_in(w, key, &never);
	size_t n = 0;

	if (in) {
		for (size_t i = 0; i < in->n_values; i++)
			if (!plan_in_list(vals, n, in->values[i]) && all_have(w, key, in->values[i]))
				vals[n++] = in->values[i];
	} else {
		for (size_t i = 0; i < total(w); i++) {
			const struct model_requirement *r = req_at(w, i);

			if (strcmp(r->key, key) || r->op != MODEL_OP_NOT_IN)
				continue;
			for (size_t k = 0; k < r->n_values; k++)
				if (!plan_in_list(vals, n, r->values[k]))
					vals[n++] = r->values[k];
		}
		if (!n)
			return false;
	}
	*out = (struct model_requirement){ .key = key, .operator_text = in ? "In" : "NotIn",
					   .op = in ? MODEL_OP_IN : MODEL_OP_NOT_IN,
					   .values = vals, .n_values = n };
	return true;
}

/* Whether key comes first at position i of w (each key once). */
static bool first_of_key(const struct narrowing *w, size_t i)
{
	const char *key = req_at(w, i)->key;

	for (size_t k = 0; k < i; k++)
		if (!strcmp(req_at(w, k)->key, key))
			return false;
	return plan_is_open_key(key);
}

static size_t value_room(const struct narrowing *w)
{
	size_t n = 0;

	for (size_t i = 0; i < total(w); i++)
		n += req_at(w, i)->n_values;
	return n;
}

int plan_narrow_claim(struct planner *pl, const struct pnode *pn, struct plan_node_claim *nc)
{
	struct narrowing w = node_narrowing(pl, pn);
	struct doc_arena *a = pl->res->arena;
	struct model_requirement *reqs;
	size_t n = 0, room;

	nc->narrowed = NULL;
	nc->n_narrowed = 0;
	if (!w.n_node && !w.n_cand)
		return 0;       /* the pool's requirements are written as they are */
	reqs = doc_arena_alloc(a, total(&w) * sizeof(*reqs));
	if (!reqs)
		return -ENOMEM;
	room = value_room(&w) + 1;
	for (size_t i = 0; i < total(&w); i++) {
		const char **vals;

		if (!first_of_key(&w, i))
			continue;
		if (!(vals = doc_arena_alloc(a, room * sizeof(*vals))))
			return -ENOMEM;
		n += narrowed_req(&w, req_at(&w, i)->key, vals, &reqs[n]);
	}
	nc->narrowed = reqs;
	nc->n_narrowed = n;
	return 0;
}
