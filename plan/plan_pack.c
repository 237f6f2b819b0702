/* plan_pack.c - the price optimizer: which new nodes to launch so that the
 * pending units fit at the lowest total price.
 *
 * Units of one shape are interchangeable (same requests, same claims
 * spec, same selectors), so the problem is a covering problem over
 * shapes x candidates. Three stages, each keeping the best plan so far:
 *
 *   1. capacity: how many units of each shape a fresh node of each
 *      candidate holds, found by really placing them (the caller's add
 *      runs the allocator), bounded by CPU, memory and pods;
 *   2. per shape, the cheapest multiset of candidates covering its units:
 *      an exact dynamic program over the unit count (cost[i] = min over
 *      candidates of price + cost[i - capacity]); then partially filled
 *      nodes of different shapes are merged into one node wherever a
 *      candidate holds both for less than the two cost, and the units of
 *      cheap nodes are moved into the spare room of dearer ones (CPU-only
 *      pods onto a GPU node's idle cores) when they fit there;
 *   3. for small inputs, a branch and bound over units that may mix shapes
 *      freely on every node, starting from stage 2's price as the bound
 *      and pruning with a per-shape lower bound; within its step budget it
 *      proves the plan optimal.
 *
 * docs/plan.md explains why this beats greedy first fit. */
#include <errno.h>
#include <float.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plan_internal.h"

#define CAP(p, s, c) ((s) * (p)->n_cands + (c))

/* Units the merge pass may re-place on fresh nodes, and node pairs it may
 * look at: many partly filled nodes (units that share claims are shapes
 * of their own) must not make it quadratic without bound. */
#define MERGE_BUDGET 200000u
#define MERGE_PAIRS  2000000u

static int compute_capacity(const struct plan_pack_problem *p, size_t *cap, struct dt_err *err)
{
	for (size_t s = 0; s < p->n_shapes; s++) {
		for (size_t c = 0; c < p->n_cands; c++) {
			size_t limit = p->count[s], node, k = 0;
			int rc = 0;

			cap[CAP(p, s, c)] = 0;
			if (!limit || !p->allowed[CAP(p, s, c)])
				continue;
			if (p->ops.bound) {
				size_t b = p->ops.bound(p->ops.ctx, s, c);

				if (b < limit)
					limit = b;
			}
			if (!limit)
				continue;
			if ((rc = p->ops.open(p->ops.ctx, c, &node)) < 0)
				return dt_err_set(err, rc, "opening a node of candidate %zu failed", c);
			while (k < limit && (rc = p->ops.add(p->ops.ctx, node, s)) == 1)
				k++;
			for (size_t i = 0; i < k; i++)
				p->ops.undo(p->ops.ctx, node);
			p->ops.close(p->ops.ctx, node);
			if (rc < 0)
				return rc;
			cap[CAP(p, s, c)] = k;
		}
	}
	return 0;
}

/* ---- Working solutions ---- */

struct wnode {
	size_t cand;
	size_t *per_shape;
	/* Optional: the shapes with units (n_nz of them), so that a node of
	 * one unit among thousands of shapes is not read shape by shape. */
	const size_t *nz;
	size_t n_nz;
};

struct wsol {
	struct wnode *nodes;
	size_t n, cap;
	double cost;
};

static void wsol_free(struct wsol *w)
{
	for (size_t i = 0; i < w->n; i++)
		free(w->nodes[i].per_shape);
	free(w->nodes);
	memset(w, 0, sizeof(*w));
}

static struct wnode *wsol_push(struct wsol *w, size_t n_shapes, size_t cand)
{
	if (DT_GROW(w->nodes, w->cap, w->n + 1))
		return NULL;
	w->nodes[w->n].cand = cand;
	w->nodes[w->n].nz = NULL;
	w->nodes[w->n].n_nz = 0;
	w->nodes[w->n].per_shape = calloc(n_shapes ? n_shapes : 1, sizeof(size_t));
	if (!w->nodes[w->n].per_shape)
		return NULL;
	return &w->nodes[w->n++];
}

static void wsol_remove(struct wsol *w, size_t i)
{
	free(w->nodes[i].per_shape);
	memmove(&w->nodes[i], &w->nodes[i + 1], (w->n - i - 1) * sizeof(w->nodes[0]));
	w->n--;
}

/* ---- Stage 2: per-shape dynamic program ---- */

static int dp_shape(const struct plan_pack_problem *p, const size_t *cap, size_t s,
		    struct wsol *w, size_t *unplaced)
{
	size_t n = p->count[s], any = 0;
	double *cost = NULL;
	size_t *choice = NULL;
	int rc = -ENOMEM;

	*unplaced = 0;
	if (!n)
		return 0;
	for (size_t c = 0; c < p->n_cands; c++)
		any += cap[CAP(p, s, c)] > 0;
	if (!any) {
		*unplaced = n;
		return 0;
	}
	cost = malloc((n + 1) * sizeof(*cost));
	choice = malloc((n + 1) * sizeof(*choice));
	if (!cost || !choice)
		goto out;
	cost[0] = 0;
	for (size_t i = 1; i <= n; i++) {
		cost[i] = DBL_MAX;
		choice[i] = SIZE_MAX;
		for (size_t c = 0; c < p->n_cands; c++) {
			size_t k = cap[CAP(p, s, c)];
			double v;

			if (!k)
				continue;
			v = p->price[c] + cost[i > k ? i - k : 0];
			/* Ties go to the earlier (cheaper-listed) candidate. */
			if (v < cost[i] - 1e-9) {
				cost[i] = v;
				choice[i] = c;
			}
		}
	}
	for (size_t i = n; i > 0;) {
		size_t c = choice[i], k = cap[CAP(p, s, c)];
		size_t take = k < i ? k : i;
		struct wnode *node = wsol_push(w, p->n_shapes, c);

		if (!node)
			goto out;
		node->per_shape[s] = take;
		w->cost += p->price[c];
		i -= take;
	}
	rc = 0;
out:
	free(cost);
	free(choice);
	return rc;
}

/* Open a fresh node of cand and place the units of a and b (either may be
 * NULL): 1 when everything fits, 0 when not, <0 on error. The node is
 * always closed again. */
static int try_hold(const struct plan_pack_problem *p, size_t cand, const struct wnode *a,
		    const struct wnode *b)
{
	const struct wnode *parts[2] = { a, b };
	size_t node, added = 0;
	int rc;

	if ((rc = p->ops.open(p->ops.ctx, cand, &node)) < 0)
		return rc;
	rc = 1;
	for (int i = 0; i < 2 && rc == 1; i++) {
		if (!parts[i])
			continue;
		size_t n = parts[i]->nz ? parts[i]->n_nz : p->n_shapes;

		for (size_t j = 0; j < n && rc == 1; j++) {
			size_t s = parts[i]->nz ? parts[i]->nz[j] : j;

			if (parts[i]->per_shape[s] && !p->allowed[CAP(p, s, cand)]) {
				rc = 0;
				break;
			}
			for (size_t k = 0; k < parts[i]->per_shape[s] && rc == 1; k++) {
				rc = p->ops.add(p->ops.ctx, node, s);
				added += rc == 1;
			}
		}
	}
	while (added--)
		p->ops.undo(p->ops.ctx, node);
	p->ops.close(p->ops.ctx, node);
	return rc;
}

static bool node_full(const struct plan_pack_problem *p, const size_t *cap,
		      const struct wnode *n)
{
	for (size_t s = 0; s < p->n_shapes; s++)
		if (n->per_shape[s] && n->per_shape[s] >= cap[CAP(p, s, n->cand)])
			return true;
	return false;
}

static size_t node_units(const struct plan_pack_problem *p, const struct wnode *n)
{
	size_t k = 0;

	if (n->nz) {
		for (size_t j = 0; j < n->n_nz; j++)
			k += n->per_shape[n->nz[j]];
		return k;
	}
	for (size_t s = 0; s < p->n_shapes; s++)
		k += n->per_shape[s];
	return k;
}

/* Merge two partly filled nodes into one cheaper node while that helps. */
static int merge_pass(const struct plan_pack_problem *p, const size_t *cap, struct wsol *w)
{
	bool improved = true;
	size_t rounds = 0, tries = 0, pairs = 0;

	while (improved && rounds++ < 4 * (w->n + 1) && tries < MERGE_BUDGET &&
	       pairs < MERGE_PAIRS) {
		improved = false;
		for (size_t i = 0; i < w->n && !improved; i++) {
			if (node_full(p, cap, &w->nodes[i]))
				continue;
			for (size_t j = i + 1; j < w->n && !improved && tries < MERGE_BUDGET &&
					       pairs < MERGE_PAIRS; j++, pairs++) {
				double pair = p->price[w->nodes[i].cand] + p->price[w->nodes[j].cand];
				double best = pair;
				size_t best_c = SIZE_MAX;

				if (node_full(p, cap, &w->nodes[j]))
					continue;
				for (size_t c = 0; c < p->n_cands; c++) {
					int rc;

					if (p->price[c] >= best - 1e-9)
						continue;
					tries += node_units(p, &w->nodes[i]) +
						 node_units(p, &w->nodes[j]);
					rc = try_hold(p, c, &w->nodes[i], &w->nodes[j]);
					if (rc < 0)
						return rc;
					if (rc == 1) {
						best = p->price[c];
						best_c = c;
					}
				}
				if (best_c == SIZE_MAX)
					continue;
				for (size_t s = 0; s < p->n_shapes; s++)
					w->nodes[i].per_shape[s] += w->nodes[j].per_shape[s];
				w->nodes[i].cand = best_c;
				w->cost += best - pair;
				wsol_remove(w, j);
				improved = true;
			}
		}
	}
	return 0;
}

/* Move every unit of a cheap node into the spare room of another node of
 * the plan (its CPU, memory, devices): the cheap node is then not needed.
 * Nodes in plan order, a bounded number of targets each.
 *
 * Nodes with the same candidate and the same units are interchangeable:
 * whether one of them can take another node's units is the same question
 * for all of them. So the pass works on classes of equal nodes and asks
 * each (target class, source class) question once: with N one-unit
 * nodes of a few kinds it costs O(N x classes), not O(N^2) tries. */
#define ABSORB_TARGETS 32

struct nclass {
	size_t cand;
	size_t *per_shape;              /* n_shapes counts, owned */
	size_t *nz, n_nz;               /* the shapes with units, owned */
	uint64_t hash;
	size_t *members;                /* live nodes of this class, owned */
	size_t n_members, cap_members;
};

/* A small open-addressing table: uint64 key -> value, key 0 unused. */
struct u64map {
	uint64_t *keys;
	size_t *vals;
	size_t cap, n;
};

static size_t *u64map_slot(struct u64map *m, uint64_t key, bool *found)
{
	size_t i = (size_t)(key * 0x9e3779b97f4a7c15ULL) & (m->cap - 1);

	while (m->keys[i] && m->keys[i] != key)
		i = (i + 1) & (m->cap - 1);
	*found = m->keys[i] == key;
	m->keys[i] = key;
	return &m->vals[i];
}

/* The value slot of key (inserted when new, *found tells); NULL: no memory. */
static size_t *u64map_get(struct u64map *m, uint64_t key, bool *found)
{
	if (2 * (m->n + 1) > m->cap) {
		struct u64map nm = { .cap = m->cap ? 2 * m->cap : 64, .n = m->n };

		nm.keys = calloc(nm.cap, sizeof(*nm.keys));
		nm.vals = calloc(nm.cap, sizeof(*nm.vals));
		if (!nm.keys || !nm.vals) {
			free(nm.keys);
			free(nm.vals);
			return NULL;
		}
		for (size_t i = 0; i < m->cap; i++) {
			bool f;

			if (m->keys[i])
				*u64map_slot(&nm, m->keys[i], &f) = m->vals[i];
		}
		free(m->keys);
		free(m->vals);
		*m = nm;
	}
	size_t *v = u64map_slot(m, key, found);

	if (!*found)
		m->n++;
	return v;
}

static void u64map_free(struct u64map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

struct classes {
	const struct plan_pack_problem *p;
	struct nclass *v;
	size_t n, cap;
	struct u64map by_hash;          /* signature hash (perturbed on collisions) -> class */
	struct u64map tried;            /* (target, source) -> 1 holds, 2 does not */
	size_t *of;                     /* per node: its class */
	size_t *pos;                    /* per node: its index in the class's members */
};

static uint64_t sig_hash(const struct plan_pack_problem *p, size_t cand, const size_t *per_shape)
{
	uint64_t h = 0xcbf29ce484222325ULL ^ cand;

	for (size_t s = 0; s < p->n_shapes; s++)
		if (per_shape[s])
			h = (h ^ (s * 0x100000001b3ULL + per_shape[s])) * 0x100000001b3ULL;
	return h ? h : 1;
}

/* The class of (cand, per_shape), made when new; SIZE_MAX: no memory. */
static size_t class_of(struct classes *cl, size_t cand, const size_t *per_shape)
{
	const struct plan_pack_problem *p = cl->p;
	uint64_t h = sig_hash(p, cand, per_shape);
	size_t *slot;
	struct nclass *c;
	bool found;

	/* Equal hashes are compared in full; a collision probes on with a
	 * perturbed key. The first key not in the table is the new class's. */
	for (uint64_t key = h;; key = key * 0x100000001b3ULL + 1) {
		if (!(slot = u64map_get(&cl->by_hash, key ? key : 1, &found)))
			return SIZE_MAX;
		if (!found)
			break;
		c = &cl->v[*slot];
		if (c->cand == cand &&
		    !memcmp(c->per_shape, per_shape, p->n_shapes * sizeof(size_t)))
			return *slot;
	}
	*slot = SIZE_MAX;       /* until the class exists */
	if (DT_GROW(cl->v, cl->cap, cl->n + 1))
		return SIZE_MAX;
	c = &cl->v[cl->n];
	memset(c, 0, sizeof(*c));
	c->cand = cand;
	c->hash = h;
	if (!(c->per_shape = malloc((p->n_shapes + 1) * sizeof(size_t))))
		return SIZE_MAX;
	memcpy(c->per_shape, per_shape, p->n_shapes * sizeof(size_t));
	for (size_t s = 0; s < p->n_shapes; s++)
		c->n_nz += per_shape[s] != 0;
	if (!(c->nz = malloc((c->n_nz + 1) * sizeof(size_t))))
		return SIZE_MAX;
	c->n_nz = 0;
	for (size_t s = 0; s < p->n_shapes; s++)
		if (per_shape[s])
			c->nz[c->n_nz++] = s;
	*slot = cl->n;
	return cl->n++;
}

static int class_join(struct classes *cl, size_t k, size_t node)
{
	struct nclass *c = &cl->v[k];

	if (DT_GROW(c->members, c->cap_members, c->n_members + 1))
		return -ENOMEM;
	cl->of[node] = k;
	cl->pos[node] = c->n_members;
	c->members[c->n_members++] = node;
	return 0;
}

static void class_leave(struct classes *cl, size_t node)
{
	struct nclass *c = &cl->v[cl->of[node]];
	size_t last = c->members[--c->n_members];

	c->members[cl->pos[node]] = last;
	cl->pos[last] = cl->pos[node];
}

static void classes_free(struct classes *cl)
{
	for (size_t i = 0; i < cl->n; i++) {
		free(cl->v[i].per_shape);
		free(cl->v[i].nz);
		free(cl->v[i].members);
	}
	free(cl->v);
	u64map_free(&cl->by_hash);
	u64map_free(&cl->tried);
	free(cl->of);
	free(cl->pos);
}

/* Whether a class's candidate could hold its and b's units of every
 * shape, by the per-shape capacities alone (necessary, not sufficient). */
static bool may_hold(const struct plan_pack_problem *p, const size_t *cap,
		     const struct nclass *a, const struct nclass *b)
{
	for (size_t j = 0; j < b->n_nz; j++) {
		size_t s = b->nz[j];

		if (a->per_shape[s] + b->per_shape[s] > cap[CAP(p, s, a->cand)])
			return false;
	}
	return true;
}

/* Drop the nodes marked dead (cand SIZE_MAX), keeping the order. */
static void wsol_compact(struct wsol *w)
{
	size_t k = 0;

	for (size_t i = 0; i < w->n; i++) {
		if (w->nodes[i].cand == SIZE_MAX) {
			free(w->nodes[i].per_shape);
			continue;
		}
		w->nodes[k++] = w->nodes[i];
	}
	w->n = k;
}

/* Which class takes the units of node b: a class with a live member other
 * than b whose node holds both, or SIZE_MAX. <0 on error. */
static int absorb_target(struct classes *cl, const size_t *cap, struct wsol *w, size_t b,
			 size_t *tries, size_t *target)
{
	const struct plan_pack_problem *p = cl->p;
	size_t kb = cl->of[b], targets = 0;

	*target = SIZE_MAX;
	for (size_t ka = 0; ka < cl->n && targets < ABSORB_TARGETS && *tries < MERGE_BUDGET;
	     ka++) {
		struct nclass *a = &cl->v[ka], *src = &cl->v[kb];
		size_t *memo;
		bool found;
		int rc;

		if (a->n_members <= (ka == kb) ||
		    p->price[a->cand] < p->price[w->nodes[b].cand] || !may_hold(p, cap, a, src))
			continue;
		targets++;
		if (!(memo = u64map_get(&cl->tried, ((uint64_t)ka << 32 | kb) + 1, &found)))
			return -ENOMEM;
		if (!found) {
			struct wnode na = { a->cand, a->per_shape, a->nz, a->n_nz };
			struct wnode nb = { src->cand, src->per_shape, src->nz, src->n_nz };

			*tries += node_units(p, &na) + node_units(p, &nb);
			rc = try_hold(p, a->cand, &na, &nb);
			if (rc < 0)
				return rc;
			/* try_hold may have grown the table: look again. */
			if (!(memo = u64map_get(&cl->tried, ((uint64_t)ka << 32 | kb) + 1, &found)))
				return -ENOMEM;
			*memo = rc == 1 ? 1 : 2;
		}
		if (*memo == 1) {
			*target = ka;
			return 0;
		}
	}
	return 0;
}

static int absorb_pass(const struct plan_pack_problem *p, const size_t *cap, struct wsol *w)
{
	struct classes cl = { .p = p };
	size_t tries = 0;
	size_t *sum = calloc(p->n_shapes + 1, sizeof(size_t));
	int rc = -ENOMEM;

	cl.of = calloc(w->n + 1, sizeof(size_t));
	cl.pos = calloc(w->n + 1, sizeof(size_t));
	if (!sum || !cl.of || !cl.pos)
		goto out;
	for (size_t i = 0; i < w->n; i++) {
		size_t k = class_of(&cl, w->nodes[i].cand, w->nodes[i].per_shape);

		if (k == SIZE_MAX || class_join(&cl, k, i))
			goto out;
	}
	for (size_t b = 0; b < w->n && tries < MERGE_BUDGET; b++) {
		size_t ka, a, k;

		if (w->nodes[b].cand == SIZE_MAX)
			continue;
		if ((rc = absorb_target(&cl, cap, w, b, &tries, &ka)) < 0)
			goto out;
		rc = -ENOMEM;
		if (ka == SIZE_MAX)
			continue;
		/* Any member but b will do: take the first in plan order. */
		a = SIZE_MAX;
		for (size_t m = 0; m < cl.v[ka].n_members; m++) {
			size_t x = cl.v[ka].members[m];

			if (x != b && x < a)
				a = x;
		}
		for (size_t s = 0; s < p->n_shapes; s++)
			sum[s] = w->nodes[a].per_shape[s] + w->nodes[b].per_shape[s];
		class_leave(&cl, a);
		class_leave(&cl, b);
		if ((k = class_of(&cl, w->nodes[a].cand, sum)) == SIZE_MAX || class_join(&cl, k, a))
			goto out;
		memcpy(w->nodes[a].per_shape, sum, p->n_shapes * sizeof(size_t));
		w->cost -= p->price[w->nodes[b].cand];
		w->nodes[b].cand = SIZE_MAX;
	}
	rc = 0;
out:
	wsol_compact(w);
	classes_free(&cl);
	free(sum);
	return rc;
}

/* ---- Stage 3: branch and bound ---- */

struct bb {
	const struct plan_pack_problem *p;
	const size_t *cap;
	size_t *unit_shape;             /* n_units */
	size_t n_units;
	double *ratio;                  /* per shape: min price per unit */
	/* open nodes of the current branch */
	size_t *node_handle, *node_cand, **node_count;
	size_t n_open;
	size_t *unit_node;              /* current assignment */
	double cost;
	/* best */
	double best;
	size_t *best_unit_node, *best_node_cand;
	size_t best_n_nodes;
	bool found;
	uint64_t steps, budget;
	bool aborted;
	int error;
	size_t *cand_order;             /* candidates by price per unit, per shape */
};

static double lower_bound(struct bb *b, size_t from)
{
	const struct plan_pack_problem *p = b->p;
	double lb = 0;

	for (size_t s = 0; s < p->n_shapes; s++) {
		size_t rem = 0, absorb = 0;
		double need;

		for (size_t u = from; u < b->n_units; u++)
			rem += b->unit_shape[u] == s;
		if (!rem)
			continue;
		for (size_t n = 0; n < b->n_open && absorb < rem; n++) {
			size_t k = b->cap[CAP(p, s, b->node_cand[n])];

			if (k > b->node_count[n][s])
				absorb += k - b->node_count[n][s];
		}
		if (absorb >= rem)
			continue;
		need = (double)(rem - absorb) * b->ratio[s];
		if (need > lb)
			lb = need;
	}
	return lb;
}

static void bb_record(struct bb *b)
{
	b->best = b->cost;
	b->found = true;
	memcpy(b->best_unit_node, b->unit_node, b->n_units * sizeof(size_t));
	memcpy(b->best_node_cand, b->node_cand, b->n_open * sizeof(size_t));
	b->best_n_nodes = b->n_open;
}

static void bb_place(struct bb *b, size_t u)
{
	const struct plan_pack_problem *p = b->p;
	size_t s, first = 0;
	int rc;

	if (b->aborted || b->error)
		return;
	if (++b->steps > b->budget) {
		b->aborted = true;
		return;
	}
	if (u == b->n_units) {
		if (b->cost < b->best - 1e-9)
			bb_record(b);
		return;
	}
	if (b->cost + lower_bound(b, u) >= b->best - 1e-9)
		return;
	s = b->unit_shape[u];
	/* Identical units go to nodes in non-decreasing order. */
	if (u > 0 && b->unit_shape[u - 1] == s)
		first = b->unit_node[u - 1];
	for (size_t n = first; n < b->n_open; n++) {
		rc = p->ops.add(p->ops.ctx, b->node_handle[n], s);
		if (rc < 0) {
			b->error = rc;
			return;
		}
		if (rc == 0)
			continue;
		b->node_count[n][s]++;
		b->unit_node[u] = n;
		bb_place(b, u + 1);
		b->node_count[n][s]--;
		p->ops.undo(p->ops.ctx, b->node_handle[n]);
		if (b->aborted || b->error)
			return;
	}
	for (size_t i = 0; i < p->n_cands; i++) {
		size_t c = b->cand_order[s * p->n_cands + i], n = b->n_open;

		if (c == SIZE_MAX)
			break;
		if (b->cost + p->price[c] >= b->best - 1e-9)
			continue;
		rc = p->ops.open(p->ops.ctx, c, &b->node_handle[n]);
		if (rc < 0) {
			b->error = rc;
			return;
		}
		rc = p->ops.add(p->ops.ctx, b->node_handle[n], s);
		if (rc == 1) {
			b->node_cand[n] = c;
			memset(b->node_count[n], 0, p->n_shapes * sizeof(size_t));
			b->node_count[n][s] = 1;
			b->n_open++;
			b->cost += p->price[c];
			b->unit_node[u] = n;
			bb_place(b, u + 1);
			b->cost -= p->price[c];
			b->n_open--;
			p->ops.undo(p->ops.ctx, b->node_handle[n]);
		}
		p->ops.close(p->ops.ctx, b->node_handle[n]);
		if (rc < 0)
			b->error = rc;
		if (b->aborted || b->error)
			return;
	}
}

static double price_per_unit(const struct plan_pack_problem *p, const size_t *cap, size_t s,
			     size_t c)
{
	return p->price[c] / (double)cap[CAP(p, s, c)];
}

/* Sort helper: candidates of one shape by price per unit. */
struct order_ctx {
	const struct plan_pack_problem *p;
	const size_t *cap;
	size_t s;
};

static void sort_cands(const struct order_ctx *o, size_t *v, size_t n)
{
	/* Insertion sort: n is the candidate count, small. */
	for (size_t i = 1; i < n; i++) {
		size_t x = v[i], j = i;
		double px = price_per_unit(o->p, o->cap, o->s, x);

		while (j > 0 && price_per_unit(o->p, o->cap, o->s, v[j - 1]) > px) {
			v[j] = v[j - 1];
			j--;
		}
		v[j] = x;
	}
}

static int exact_search(const struct plan_pack_problem *p, const size_t *cap,
			const size_t *unplaced, struct wsol *w, bool *optimal, uint64_t *steps)
{
	struct bb b = { .p = p, .cap = cap, .best = w->cost, .budget = p->exact_steps };
	size_t n_units = 0, u = 0;
	int rc = -ENOMEM;

	for (size_t s = 0; s < p->n_shapes; s++)
		n_units += p->count[s] - unplaced[s];
	b.n_units = n_units;
	if (!n_units) {
		*optimal = true;
		return 0;
	}
	b.unit_shape = calloc(n_units, sizeof(size_t));
	b.unit_node = calloc(n_units, sizeof(size_t));
	b.best_unit_node = calloc(n_units, sizeof(size_t));
	b.node_handle = calloc(n_units, sizeof(size_t));
	b.node_cand = calloc(n_units, sizeof(size_t));
	b.best_node_cand = calloc(n_units, sizeof(size_t));
	b.node_count = calloc(n_units, sizeof(size_t *));
	b.ratio = calloc(p->n_shapes, sizeof(double));
	b.cand_order = malloc(p->n_shapes * p->n_cands * sizeof(size_t) + 1);
	if (!b.unit_shape || !b.unit_node || !b.best_unit_node || !b.node_handle ||
	    !b.node_cand || !b.best_node_cand || !b.node_count || !b.ratio || !b.cand_order)
		goto out;
	for (size_t i = 0; i < n_units; i++)
		if (!(b.node_count[i] = calloc(p->n_shapes, sizeof(size_t))))
			goto out;
	for (size_t s = 0; s < p->n_shapes; s++) {
		struct order_ctx o = { p, cap, s };
		size_t *v = &b.cand_order[s * p->n_cands], k = 0;

		for (size_t c = 0; c < p->n_cands; c++)
			if (cap[CAP(p, s, c)])
				v[k++] = c;
		sort_cands(&o, v, k);
		b.ratio[s] = k ? price_per_unit(p, cap, s, v[0]) : 0;
		for (size_t i = k; i < p->n_cands; i++)
			v[i] = SIZE_MAX;
		for (size_t i = 0; i < p->count[s] - unplaced[s]; i++)
			b.unit_shape[u++] = s;
	}
	bb_place(&b, 0);
	*steps = b.steps;
	if (b.error) {
		rc = b.error;
		goto out;
	}
	*optimal = !b.aborted;
	if (b.found) {
		struct wsol nw = { 0 };

		for (size_t n = 0; n < b.best_n_nodes; n++) {
			if (!wsol_push(&nw, p->n_shapes, b.best_node_cand[n])) {
				wsol_free(&nw);
				goto out;
			}
			nw.cost += p->price[b.best_node_cand[n]];
		}
		for (size_t i = 0; i < n_units; i++)
			nw.nodes[b.best_unit_node[i]].per_shape[b.unit_shape[i]]++;
		wsol_free(w);
		*w = nw;
	}
	rc = 0;
out:
	if (b.node_count)
		for (size_t i = 0; i < n_units; i++)
			free(b.node_count[i]);
	free(b.node_count);
	free(b.unit_shape);
	free(b.unit_node);
	free(b.best_unit_node);
	free(b.node_handle);
	free(b.node_cand);
	free(b.best_node_cand);
	free(b.ratio);
	free(b.cand_order);
	return rc;
}

int plan_pack_solve(const struct plan_pack_problem *p, struct plan_pack_solution *out,
		    struct dt_err *err)
{
	struct wsol w = { 0 };
	size_t total = 0, *cap = NULL, *unplaced = NULL;
	int rc = -ENOMEM;

	memset(out, 0, sizeof(*out));
	cap = calloc(p->n_shapes * p->n_cands + 1, sizeof(size_t));
	unplaced = calloc(p->n_shapes + 1, sizeof(size_t));
	if (!cap || !unplaced) {
		dt_err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = compute_capacity(p, cap, err)) < 0)
		goto out;
	for (size_t s = 0; s < p->n_shapes; s++) {
		if ((rc = dp_shape(p, cap, s, &w, &unplaced[s])) < 0) {
			dt_err_set(err, rc, "out of memory");
			goto out;
		}
		total += p->count[s] - unplaced[s];
	}
	if ((rc = merge_pass(p, cap, &w)) < 0 || (rc = absorb_pass(p, cap, &w)) < 0) {
		dt_err_set(err, rc, "placing units while merging nodes failed");
		goto out;
	}
	if (p->exact_steps && total <= (p->exact_max_units ? p->exact_max_units : 24)) {
		rc = exact_search(p, cap, unplaced, &w, &out->optimal, &out->steps);
		if (rc < 0) {
			dt_err_set(err, rc, "the exact search failed");
			goto out;
		}
	}
	out->nodes = calloc(w.n + 1, sizeof(*out->nodes));
	if (!out->nodes) {
		rc = dt_err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < w.n; i++) {
		out->nodes[i].cand = w.nodes[i].cand;
		out->nodes[i].per_shape = w.nodes[i].per_shape;
		w.nodes[i].per_shape = NULL;
	}
	out->n_nodes = w.n;
	out->cost = w.cost;
	out->unplaced = unplaced;
	out->capacity = cap;
	unplaced = NULL;
	cap = NULL;
	rc = 0;
out:
	wsol_free(&w);
	free(cap);
	free(unplaced);
	return rc;
}

void plan_pack_solution_free(struct plan_pack_solution *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n_nodes; i++)
		free(s->nodes[i].per_shape);
	free(s->nodes);
	free(s->unplaced);
	free(s->capacity);
	memset(s, 0, sizeof(*s));
}
