/* gen_alloc.c - small allocator problems from a gen_src, their manifests,
 * the brute-force oracle and the result check (see gen_alloc.h). The
 * oracle's rules are written from docs/alloc.md and the scheduler's
 * semantics, not from common/alloc's code. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "cel.h"
#include "gen_alloc.h"
#include "model.h"

#define ORACLE_BUDGET 3000000L

static const char *const drivers[] = { "d.example.com", "e.example.com" };
static const char *const versions[] = { "1.0.0", "1.1.0", "2.0.0" };
static const char *const kinds[] = { "a", "b" };

/* The fixed DeviceClasses: name, selector (NULL: every device). */
static const struct {
	const char *name;
	const char *expr;
} classes[] = {
	{ "any", NULL },
	{ "cls-d", "device.driver == \"d.example.com\"" },
	{ "cls-e", "device.driver == \"e.example.com\"" },
	{ "cls-d-num", "device.driver == \"d.example.com\" && "
		       "device.attributes[\"d.example.com\"].num >= 1" },
};
#define N_CLASSES ((int)(sizeof(classes) / sizeof(classes[0])))

/* The attributes constraints name: driver and bare name. */
static const struct {
	int drv;
	const char *id;
} cons_attrs[] = { { 0, "num" }, { 0, "kind" }, { 0, "ver" }, { 1, "num" } };
#define N_CONS_ATTRS ((int)(sizeof(cons_attrs) / sizeof(cons_attrs[0])))
#define N_SEL_KINDS 6

/* ---- generating ---- */

static void gen_exact(struct gen_src *src, struct gen_exact *e, bool may_all)
{
	memset(e, 0, sizeof(*e));
	e->cls = gen_bool(src, 50) ? 0 : (int)gen_pick(src, N_CLASSES);
	e->sel.kind = gen_bool(src, 35) ? (int)gen_pick(src, N_SEL_KINDS) : -1;
	e->sel.drv = (int)gen_pick(src, 2);
	e->sel.k = (int)gen_pick(src, 3);
	e->all = may_all && gen_bool(src, 10);
	e->count = gen_bool(src, 30) ? 2 : 1;
	e->tolerate = gen_bool(src, 30);
	e->mem = gen_bool(src, 20) ? gen_range(src, 1, 3) : 0;
}

static void gen_claim(struct gen_src *src, struct gen_claim *c, int max_reqs)
{
	unsigned all_mask = 0, every;

	max_reqs = max_reqs < GEN_MAX_REQS ? max_reqs : GEN_MAX_REQS;
	c->n_reqs = gen_bool(src, 50) ? 1 : gen_range(src, 1, max_reqs);
	for (int q = 0; q < c->n_reqs; q++) {
		struct gen_req *r = &c->req[q];

		r->first = gen_bool(src, 25);
		r->n_subs = r->first ? GEN_MAX_SUBS : 1;
		for (int s = 0; s < r->n_subs; s++)
			gen_exact(src, &r->sub[s], !r->first);
		if (r->sub[0].all && !r->first)
			all_mask |= 1u << q;
	}
	every = (1u << c->n_reqs) - 1;
	c->n_cons = 0;
	for (int i = gen_bool(src, 40) ? gen_range(src, 1, GEN_MAX_CONS) : 0; i > 0; i--) {
		struct gen_cons *k = &c->cons[c->n_cons];

		k->distinct = gen_bool(src, 50);
		k->attr = (int)gen_pick(src, N_CONS_ATTRS);
		k->mask = gen_bool(src, 50) ? 0 : (gen_pick(src, every) + 1) & every;
		/* A constraint over an All request is a fatal error when the
		 * search meets a device that breaks it: name only the others. */
		if (all_mask) {
			k->mask = (k->mask ? k->mask : every) & ~all_mask;
			if (!k->mask)
				continue;
		}
		c->n_cons++;
	}
}

static void gen_problem(struct gen_src *src, struct gen_alloc *g)
{
	int total = 0;

	g->n_pools = gen_range(src, 1, GEN_MAX_POOLS);
	for (int p = 0; p < g->n_pools; p++) {
		g->pools[p].drv = (int)gen_pick(src, 2);
		g->pools[p].counter = gen_bool(src, 30) ? gen_range(src, 1, 3) : 0;
	}
	g->n_devs = gen_bool(src, 5) ? 0 : gen_range(src, 2, GEN_MAX_DEVS);
	for (int i = 0; i < g->n_devs; i++) {
		struct gen_dev *d = &g->devs[i];

		d->pool = (int)gen_pick(src, (unsigned)g->n_pools);
		d->num = (int)gen_pick(src, 3);
		d->kind = (int)gen_pick(src, 2);
		d->ver = (int)gen_pick(src, 4) - 1;
		d->mem = gen_bool(src, 40) ? gen_range(src, 1, 4) : 0;
		d->shared = gen_bool(src, 25);
		d->tainted = gen_bool(src, 10);
		d->uses = g->pools[d->pool].counter ? (int)gen_pick(src, 3) : 0;
	}
	g->n_claims = gen_bool(src, 50) ? 1 : gen_range(src, 2, GEN_MAX_CLAIMS);
	for (int c = 0; c < g->n_claims; c++) {
		int left = GEN_MAX_TOTAL_REQS - total - (g->n_claims - c - 1);

		gen_claim(src, &g->claims[c], left);
		total += g->claims[c].n_reqs;
	}
	for (int i = gen_bool(src, 25) ? gen_range(src, 1, GEN_MAX_USED) : 0; i > 0 && g->n_devs; i--) {
		struct gen_used *u = &g->used[g->n_used];
		const struct gen_dev *d;
		bool taken = false;

		u->dev = (int)gen_pick(src, (unsigned)g->n_devs);
		d = &g->devs[u->dev];
		for (int k = 0; k < g->n_used; k++)
			taken |= g->used[k].dev == u->dev;
		if (taken && !d->shared)
			continue;       /* an exclusive device serves one claim */
		u->mem = d->shared && d->mem ? gen_range(src, 1, d->mem) : 0;
		g->n_used++;
	}
	g->twice = gen_bool(src, 30);
}

/* ---- manifests ---- */

/* The CEL text of a request selector; the grammar guards every attribute
 * that may be absent, so no selector can fail at run time. */
static void sel_expr(const struct gen_sel *s, struct strbuf *sb)
{
	const char *x = drivers[s->drv];

	sb_printf(sb, "device.driver == \"%s\"", x);
	switch (s->kind) {
	case 1:
		sb_printf(sb, " && device.attributes[\"%s\"].num >= %d", x, s->k);
		break;
	case 2:
		sb_printf(sb, " && device.attributes[\"%s\"].num == %d", x, s->k);
		break;
	case 3:
		sb_printf(sb, " && device.attributes[\"%s\"].kind == \"a\"", x);
		break;
	case 4:
		sb_printf(sb, " && has(device.attributes[\"%s\"].ver)", x);
		break;
	case 5:
		sb_printf(sb, " && has(device.attributes[\"%s\"].ver) && "
			  "device.attributes[\"%s\"].ver.isGreaterThan(semver(\"1.0.0\"))", x, x);
		break;
	}
}

static void yaml_classes(struct strbuf *sb)
{
	for (int i = 0; i < N_CLASSES; i++) {
		sb_printf(sb, "---\napiVersion: resource.k8s.io/v1\nkind: DeviceClass\n"
			  "metadata: {name: %s}\nspec:", classes[i].name);
		if (classes[i].expr)
			sb_printf(sb, "\n  selectors: [{cel: {expression: '%s'}}]\n", classes[i].expr);
		else
			sb_puts(sb, " {}\n");
	}
}

static void yaml_device(const struct gen_dev *d, int i, struct strbuf *sb)
{
	sb_printf(sb, "  - name: dev-%d\n    attributes: {num: {int: %d}, kind: {string: %s}",
		  i, d->num, kinds[d->kind]);
	if (d->ver >= 0)
		sb_printf(sb, ", ver: {version: %s}", versions[d->ver]);
	sb_puts(sb, "}\n");
	if (d->mem)
		sb_printf(sb, "    capacity: {mem: {value: %dGi}}\n", d->mem);
	if (d->shared)
		sb_puts(sb, "    allowMultipleAllocations: true\n");
	if (d->tainted)
		sb_puts(sb, "    taints: [{key: t, value: v, effect: NoSchedule}]\n");
	if (d->uses)
		sb_printf(sb, "    consumesCounters: [{counterSet: cs, counters: {c: {value: "
			  "\"%d\"}}}]\n", d->uses);
}

static void yaml_pools(const struct gen_alloc *g, struct strbuf *sb)
{
	for (int p = 0; p < g->n_pools; p++) {
		const struct gen_pool *pl = &g->pools[p];
		int slices = pl->counter ? 2 : 1, n = 0;

		if (pl->counter)
			sb_printf(sb, "---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\n"
				  "metadata: {name: p%d-counters}\nspec:\n  driver: %s\n"
				  "  pool: {name: p%d, generation: 1, resourceSliceCount: 2}\n"
				  "  nodeName: node-1\n  sharedCounters:\n  - name: cs\n"
				  "    counters: {c: {value: \"%d\"}}\n", p, drivers[pl->drv], p,
				  pl->counter);
		sb_printf(sb, "---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\n"
			  "metadata: {name: p%d-devices}\nspec:\n  driver: %s\n"
			  "  pool: {name: p%d, generation: 1, resourceSliceCount: %d}\n"
			  "  nodeName: node-1\n", p, drivers[pl->drv], p, slices);
		for (int i = 0; i < g->n_devs; i++)
			if (g->devs[i].pool == p && !n++)
				sb_puts(sb, "  devices:\n");
		for (int i = 0; i < g->n_devs; i++)
			if (g->devs[i].pool == p)
				yaml_device(&g->devs[i], i, sb);
	}
}

static void yaml_exact(const struct gen_exact *e, const char *ind, struct strbuf *sb)
{
	sb_printf(sb, "%sdeviceClassName: %s\n", ind, classes[e->cls].name);
	if (e->all)
		sb_printf(sb, "%sallocationMode: All\n", ind);
	else
		sb_printf(sb, "%sallocationMode: ExactCount\n%scount: %d\n", ind, ind, e->count);
	if (e->sel.kind >= 0) {
		sb_printf(sb, "%sselectors: [{cel: {expression: '", ind);
		sel_expr(&e->sel, sb);
		sb_puts(sb, "'}}]\n");
	}
	if (e->tolerate)
		sb_printf(sb, "%stolerations: [{key: t, operator: Exists}]\n", ind);
	if (e->mem)
		sb_printf(sb, "%scapacity: {requests: {mem: %dGi}}\n", ind, e->mem);
}

static void yaml_claim(const struct gen_claim *c, int ci, struct strbuf *sb)
{
	sb_printf(sb, "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
		  "metadata: {name: c%d, namespace: default}\nspec:\n  devices:\n    requests:\n",
		  ci);
	for (int q = 0; q < c->n_reqs; q++) {
		const struct gen_req *r = &c->req[q];

		sb_printf(sb, "    - name: r%d\n", q);
		if (!r->first) {
			sb_puts(sb, "      exactly:\n");
			yaml_exact(&r->sub[0], "        ", sb);
			continue;
		}
		sb_puts(sb, "      firstAvailable:\n");
		for (int s = 0; s < r->n_subs; s++) {
			sb_printf(sb, "      - name: s%d\n", s);
			yaml_exact(&r->sub[s], "        ", sb);
		}
	}
	if (c->n_cons)
		sb_puts(sb, "    constraints:\n");
	for (int i = 0; i < c->n_cons; i++) {
		const struct gen_cons *k = &c->cons[i];
		const char *sep = "";

		sb_printf(sb, "    - %s: %s/%s\n", k->distinct ? "distinctAttribute" : "matchAttribute",
			  drivers[cons_attrs[k->attr].drv], cons_attrs[k->attr].id);
		if (!k->mask)
			continue;
		sb_puts(sb, "      requests: [");
		for (int q = 0; q < c->n_reqs; q++) {
			if (k->mask & (1u << q)) {
				sb_printf(sb, "%sr%d", sep, q);
				sep = ", ";
			}
		}
		sb_puts(sb, "]\n");
	}
}

static void yaml_used(const struct gen_alloc *g, int i, struct strbuf *sb)
{
	const struct gen_used *u = &g->used[i];
	const struct gen_dev *d = &g->devs[u->dev];

	sb_printf(sb, "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
		  "metadata: {name: used-%d, namespace: default}\nspec:\n  devices:\n"
		  "    requests: [{name: r, exactly: {deviceClassName: any}}]\n"
		  "status:\n  allocation:\n    devices:\n      results:\n"
		  "      - {request: r, driver: %s, pool: p%d, device: dev-%d", i,
		  drivers[g->pools[d->pool].drv], d->pool, u->dev);
	if (d->shared)
		sb_printf(sb, ", shareID: 00000000-0000-4000-8000-%012d", 900 + i);
	if (u->mem)
		sb_printf(sb, ", consumedCapacity: {mem: %dGi}", u->mem);
	sb_puts(sb, "}\n");
}

int gen_alloc_make(struct gen_src *src, struct gen_alloc *g)
{
	memset(g, 0, sizeof(*g));
	sb_init(&g->yaml);
	gen_problem(src, g);
	yaml_classes(&g->yaml);
	yaml_pools(g, &g->yaml);
	for (int c = 0; c < g->n_claims; c++)
		yaml_claim(&g->claims[c], c, &g->yaml);
	for (int i = 0; i < g->n_used; i++)
		yaml_used(g, i, &g->yaml);
	return sb_error(&g->yaml) ? -ENOMEM : 0;
}

void gen_alloc_free(struct gen_alloc *g)
{
	sb_free(&g->yaml);
}

/* ---- the oracle's rules ---- */

/* What is taken on the node, and what the current claim's constraints
 * have seen. Small enough to copy at every step of the search. */
struct ostate {
	int n_use[GEN_MAX_DEVS];
	int mem_used[GEN_MAX_DEVS];
	int counter_used[GEN_MAX_POOLS];
	int n_cdev[GEN_MAX_CONS];
	int cdev[GEN_MAX_CONS][GEN_MAX_REQS * GEN_MAX_DEVS * 2];
};

static int dev_drv(const struct gen_alloc *g, int d)
{
	return g->pools[g->devs[d].pool].drv;
}

static bool class_match(const struct gen_alloc *g, int cls, int d)
{
	const struct gen_dev *v = &g->devs[d];

	switch (cls) {
	case 1:
		return dev_drv(g, d) == 0;
	case 2:
		return dev_drv(g, d) == 1;
	case 3:
		return dev_drv(g, d) == 0 && v->num >= 1;
	}
	return true;
}

static bool sel_match(const struct gen_alloc *g, const struct gen_sel *s, int d)
{
	const struct gen_dev *v = &g->devs[d];

	if (s->kind < 0)
		return true;
	if (dev_drv(g, d) != s->drv)
		return false;
	switch (s->kind) {
	case 1:
		return v->num >= s->k;
	case 2:
		return v->num == s->k;
	case 3:
		return v->kind == 0;
	case 4:
		return v->ver >= 0;
	case 5:
		return v->ver >= 1;     /* 1.1.0 and 2.0.0 are above 1.0.0 */
	}
	return true;
}

static bool eligible(const struct gen_alloc *g, const struct gen_exact *e, int d)
{
	return class_match(g, e->cls, d) && sel_match(g, &e->sel, d);
}

/* The value of constraint attribute a on device d: its type (0 absent,
 * 1 int, 2 string, 3 version) and value. */
static int attr_value(const struct gen_alloc *g, int a, int d, int *val)
{
	const struct gen_dev *v = &g->devs[d];

	if (dev_drv(g, d) != cons_attrs[a].drv)
		return 0;
	if (!strcmp(cons_attrs[a].id, "num"))
		return *val = v->num, 1;
	if (!strcmp(cons_attrs[a].id, "kind"))
		return *val = v->kind, 2;
	if (v->ver < 0)
		return 0;
	*val = v->ver;
	return 3;
}

static bool cons_accepts(const struct gen_alloc *g, const struct gen_cons *k,
			 const struct ostate *st, int ci, int d)
{
	int val, t = attr_value(g, k->attr, d, &val), v2;

	if (!t)
		return false;
	for (int i = 0; i < st->n_cdev[ci]; i++) {
		bool same = attr_value(g, k->attr, st->cdev[ci][i], &v2) == t && v2 == val;

		if (k->distinct ? same : !same)
			return false;
	}
	return true;
}

/* What allocating d for e consumes of d's memory; -1: not allowed. */
static int mem_consumed(const struct gen_alloc *g, const struct gen_exact *e, int d)
{
	const struct gen_dev *v = &g->devs[d];

	if (!v->mem)
		return e->mem ? -1 : 0;
	return e->mem ? e->mem : v->mem;
}

/* Allocate d for request q of claim c in st, when every rule allows. */
static bool add_dev(const struct gen_alloc *g, struct ostate *st, int c, int q,
		    const struct gen_exact *e, int d)
{
	const struct gen_dev *v = &g->devs[d];
	const struct gen_claim *cl = &g->claims[c];
	const struct gen_pool *p = &g->pools[v->pool];
	int mem = mem_consumed(g, e, d);

	if (!eligible(g, e, d) || (v->tainted && !e->tolerate))
		return false;
	if (!v->shared && st->n_use[d])
		return false;
	if (!st->n_use[d] && st->counter_used[v->pool] + v->uses > p->counter && v->uses)
		return false;
	if (mem < 0 || st->mem_used[d] + mem > v->mem)
		return false;
	for (int i = 0; i < cl->n_cons; i++) {
		const struct gen_cons *k = &cl->cons[i];

		if ((!k->mask || (k->mask & (1u << q))) && !cons_accepts(g, k, st, i, d))
			return false;
	}
	for (int i = 0; i < cl->n_cons; i++) {
		const struct gen_cons *k = &cl->cons[i];

		if (!k->mask || (k->mask & (1u << q)))
			st->cdev[i][st->n_cdev[i]++] = d;
	}
	if (!st->n_use[d])
		st->counter_used[v->pool] += v->uses;
	st->n_use[d]++;
	if (v->shared)
		st->mem_used[d] += mem;
	return true;
}

/* The devices an All request takes, as a bit mask: those its class and
 * selectors match whose capacity can serve it, judged on the state the
 * allocation starts from (base). */
static unsigned all_devices(const struct gen_alloc *g, const struct gen_exact *e,
			    const struct ostate *base)
{
	unsigned m = 0;

	for (int d = 0; d < g->n_devs; d++) {
		int mem = mem_consumed(g, e, d);

		if (!eligible(g, e, d) || mem < 0)
			continue;
		if (g->devs[d].shared && base->mem_used[d] + mem > g->devs[d].mem)
			continue;
		m |= 1u << d;
	}
	return m;
}

/* Count a claim allocated before into st: the device is in use, its
 * counters drawn once, a share's consumed memory taken. */
static void take_used(const struct gen_alloc *g, const struct gen_used *u, struct ostate *st)
{
	const struct gen_dev *v = &g->devs[u->dev];

	if (!st->n_use[u->dev])
		st->counter_used[v->pool] += v->uses;
	st->n_use[u->dev]++;
	st->mem_used[u->dev] += u->mem;
}

/* ---- the brute force ---- */

struct search {
	const struct gen_alloc *g;
	const struct ostate *base;
	long budget;
};

static bool search_req(struct search *S, const struct ostate *st, int c, int q);

static bool pick(struct search *S, const struct ostate *st, int c, int q,
		 const struct gen_exact *e, int start, int left)
{
	if (left == 0)
		return search_req(S, st, c, q + 1);
	for (int d = start; d < S->g->n_devs && S->budget > 0; d++) {
		struct ostate next = *st;

		if (add_dev(S->g, &next, c, q, e, d) && pick(S, &next, c, q, e, d + 1, left - 1))
			return true;
	}
	return false;
}

static bool search_req(struct search *S, const struct ostate *st, int c, int q)
{
	const struct gen_claim *cl;

	if (--S->budget <= 0)
		return false;
	if (c == S->g->n_claims)
		return true;
	cl = &S->g->claims[c];
	if (q == cl->n_reqs) {
		struct ostate next = *st;

		memset(next.n_cdev, 0, sizeof(next.n_cdev));
		return search_req(S, &next, c + 1, 0);
	}
	for (int s = 0; s < cl->req[q].n_subs; s++) {
		const struct gen_exact *e = &cl->req[q].sub[s];

		if (e->all) {
			unsigned m = all_devices(S->g, e, S->base);
			struct ostate next = *st;
			bool ok = m != 0;

			for (int d = 0; ok && d < S->g->n_devs; d++)
				if (m & (1u << d))
					ok = add_dev(S->g, &next, c, q, e, d);
			if (ok && search_req(S, &next, c, q + 1))
				return true;
		} else if (pick(S, st, c, q, e, 0, e->count)) {
			return true;
		}
	}
	return false;
}

/* 1 allocatable, 0 not, -1 past the budget. */
static int brute_force(const struct gen_alloc *g, const struct ostate *base)
{
	struct search S = { g, base, ORACLE_BUDGET };
	struct ostate st = *base;
	bool found;

	memset(st.n_cdev, 0, sizeof(st.n_cdev));
	found = search_req(&S, &st, 0, 0);
	if (found)
		return 1;
	return S.budget <= 0 ? -1 : 0;
}

/* ---- checking a result ---- */

/* "rQ" or "rQ/sS" of claim c: q and s (-1 without a subrequest). */
static bool parse_request(const struct gen_claim *cl, const char *name, int *q, int *s)
{
	char tail;

	*s = -1;
	if (sscanf(name, "r%d%c", q, &tail) == 1)
		return *q >= 0 && *q < cl->n_reqs && !cl->req[*q].first;
	if (sscanf(name, "r%d/s%d%c", q, s, &tail) != 2)
		return false;
	return *q >= 0 && *q < cl->n_reqs && cl->req[*q].first && *s >= 0 &&
	       *s < cl->req[*q].n_subs;
}

static int result_dev(const struct gen_alloc *g, const struct alloc_device_result *r)
{
	char pool[16];
	int d;
	char tail;

	if (!r->device || sscanf(r->device, "dev-%d%c", &d, &tail) != 1 || d < 0 || d >= g->n_devs)
		return -1;
	snprintf(pool, sizeof(pool), "p%d", g->devs[d].pool);
	if (!r->driver || strcmp(r->driver, drivers[dev_drv(g, d)]) || !r->pool ||
	    strcmp(r->pool, pool))
		return -1;
	return d;
}

/* Replay claim c's results through the rules onto st. */
static bool check_claim(const struct gen_alloc *g, const struct alloc_claim_result *cr, int c,
			const struct ostate *base, struct ostate *st, struct strbuf *why)
{
	const struct gen_claim *cl = &g->claims[c];
	int sub[GEN_MAX_REQS], n[GEN_MAX_REQS] = { 0 };
	unsigned seen[GEN_MAX_REQS] = { 0 };

	for (int q = 0; q < GEN_MAX_REQS; q++)
		sub[q] = -2;
	memset(st->n_cdev, 0, sizeof(st->n_cdev));
	for (size_t i = 0; i < cr->n_results; i++) {
		const struct alloc_device_result *r = &cr->results[i];
		int q, s, d = result_dev(g, r);
		const struct gen_exact *e;

		if (d < 0 || !r->request || !parse_request(cl, r->request, &q, &s)) {
			sb_printf(why, "claim c%d: result %zu names an unknown request or device "
				  "(%s: %s/%s/%s)", c, i, r->request ? r->request : "(null)",
				  r->driver ? r->driver : "", r->pool ? r->pool : "",
				  r->device ? r->device : "");
			return false;
		}
		if (sub[q] != -2 && sub[q] != s) {
			sb_printf(why, "claim c%d: request r%d got devices of two subrequests", c, q);
			return false;
		}
		sub[q] = s;
		e = &cl->req[q].sub[s < 0 ? 0 : s];
		if (seen[q] & (1u << d)) {
			sb_printf(why, "claim c%d: request %s got dev-%d twice", c, r->request, d);
			return false;
		}
		seen[q] |= 1u << d;
		n[q]++;
		if (!add_dev(g, st, c, q, e, d)) {
			sb_printf(why, "claim c%d: request %s: dev-%d breaks a rule (selector, "
				  "taint, in use, capacity, counter or constraint)", c, r->request, d);
			return false;
		}
		if (!r->share_id != !g->devs[d].shared) {
			sb_printf(why, "claim c%d: dev-%d: shareID %s on a%s device", c, d,
				  r->share_id ? "set" : "missing",
				  g->devs[d].shared ? " shared" : "n exclusive");
			return false;
		}
	}
	for (int q = 0; q < cl->n_reqs; q++) {
		const struct gen_exact *e = &cl->req[q].sub[sub[q] < 0 ? 0 : sub[q]];

		if (sub[q] == -2) {
			sb_printf(why, "claim c%d: request r%d got no device", c, q);
			return false;
		}
		if (e->all ? seen[q] != all_devices(g, e, base) : n[q] != e->count) {
			sb_printf(why, "claim c%d: request r%d got %d devices (mask %#x), wants %s",
				  c, q, n[q], seen[q], e->all ? "every matching one" : "its count");
			return false;
		}
	}
	return true;
}

static bool check_outcome(const struct gen_alloc *g, const struct alloc_outcome *o,
			  const struct model_object *const *claims, const struct ostate *base,
			  struct ostate *st, struct strbuf *why)
{
	*st = *base;
	if ((int)o->n_claims != g->n_claims) {
		sb_printf(why, "%zu claim results for %d claims", o->n_claims, g->n_claims);
		return false;
	}
	for (int c = 0; c < g->n_claims; c++) {
		if (o->claims[c].claim != claims[c]) {
			sb_printf(why, "claim result %d is not claim c%d", c, c);
			return false;
		}
		if (!check_claim(g, &o->claims[c], c, base, st, why))
			return false;
	}
	return true;
}

/* ---- running one problem ---- */

struct loaded {
	struct model_set *set;
	const struct model_object *slices[2 * GEN_MAX_POOLS], *classes[N_CLASSES];
	const struct model_object *claims[GEN_MAX_CLAIMS], *used[GEN_MAX_USED];
	size_t n_slices, n_classes, n_claims, n_used;
};

int gen_check_cel(const char *expr, size_t len, char *msg, size_t msgsz, void *ctx)
{
	struct cel_program *p = NULL;
	struct dt_err err = { 0 };
	int rc = cel_compile_selector(expr, len, true, &p, &err);

	(void)ctx;
	cel_program_free(p);
	if (rc)
		snprintf(msg, msgsz, "%s", err.msg);
	return rc;
}

static void share_id(void *arg, char out[ALLOC_SHARE_ID_LEN + 1])
{
	unsigned *seq = arg;

	snprintf(out, ALLOC_SHARE_ID_LEN + 1, "00000000-0000-4000-8000-%012u", ++*seq);
}

static bool load(const struct gen_alloc *g, struct loaded *l, struct strbuf *why)
{
	struct model_validate_opts vo = { .check_cel = gen_check_cel };
	struct dt_diags errs;
	struct dt_err err = { 0 };
	const struct model_object *o;
	bool ok;

	memset(l, 0, sizeof(*l));
	dt_diags_init(&errs);
	l->set = model_set_new();
	ok = l->set && !model_set_load_buffer(l->set, sb_str(&g->yaml), g->yaml.len, "gen.yaml",
					      &errs, &err) &&
	     !dt_diags_count(&errs) && model_validate_set(l->set, &vo, &errs) == 0;
	if (!ok)
		sb_printf(why, "the generated manifests do not load: %s",
			  errs.n ? errs.msgs[0] : err.msg);
	dt_diags_free(&errs);
	for (o = NULL; ok && (o = model_set_next(l->set, MODEL_RESOURCE_SLICE, o));)
		l->slices[l->n_slices++] = o;
	for (o = NULL; ok && (o = model_set_next(l->set, MODEL_DEVICE_CLASS, o));)
		l->classes[l->n_classes++] = o;
	for (o = NULL; ok && (o = model_set_next(l->set, MODEL_RESOURCE_CLAIM, o));) {
		if (o->u.claim.status.allocation)
			l->used[l->n_used++] = o;
		else
			l->claims[l->n_claims++] = o;
	}
	return ok;
}

/* One alloc_try against the oracle; on success *st is the state after
 * it and the outcome is committed into as. */
static enum gen_verdict round_check(const struct gen_alloc *g, struct loaded *l,
				    struct alloc_ctx *ctx, struct alloc_ctx *quick,
				    struct alloc_state *as, struct alloc_state *qas, struct ostate *st,
				    bool *allocated, struct gen_alloc_stats *stats, struct strbuf *why)
{
	struct alloc_outcome out, out2;
	struct dt_err err = { 0 };
	struct ostate after;
	enum gen_verdict v = GEN_FAIL;
	int want = brute_force(g, st), rc;

	memset(&out, 0, sizeof(out));
	memset(&out2, 0, sizeof(out2));
	stats->tries++;
	rc = alloc_try(ctx, as, l->claims, l->n_claims, &out, &err);
	if (rc < 0) {
		sb_printf(why, "alloc_try failed: %s", err.msg);
		goto out;
	}
	if (want < 0) {
		v = GEN_SKIP;
		stats->skipped++;
		goto out;
	}
	if (out.allocated != (want == 1)) {
		sb_printf(why, "alloc_try says %s, the brute force says %s (%s)",
			  out.allocated ? "allocated" : "unallocatable",
			  want ? "allocatable" : "unallocatable", out.reason);
		goto out;
	}
	/* no_reasons (with its lower-bound shortcut) must give the same answer. */
	rc = alloc_try(quick, qas, l->claims, l->n_claims, &out2, &err);
	if (rc < 0 || out2.allocated != out.allocated) {
		sb_printf(why, "alloc_try with no_reasons disagrees (%d, %s)", rc, err.msg);
		goto out;
	}
	if (out.allocated) {
		if (!check_outcome(g, &out, l->claims, st, &after, why))
			goto out;
		if (alloc_state_commit(as, &out) || alloc_state_commit(qas, &out2)) {
			sb_printf(why, "alloc_state_commit refused an allocated outcome");
			goto out;
		}
		*st = after;
		*allocated = true;
		stats->allocated++;
	} else {
		stats->unallocatable++;
	}
	v = GEN_PASS;
out:
	alloc_outcome_free(&out);
	alloc_outcome_free(&out2);
	return v;
}

enum gen_verdict gen_alloc_check(const struct gen_alloc *g, struct gen_alloc_stats *stats,
				 struct strbuf *why)
{
	struct alloc_node node = { .name = "node-1" };
	struct alloc_options opts = { .share_id = share_id }, qopts;
	struct alloc_ctx *ctx = NULL, *quick = NULL;
	struct alloc_state *as = NULL, *qas = NULL;
	struct dt_err err = { 0 };
	struct ostate st;
	struct loaded l;
	unsigned seq = 0;
	bool allocated = false;
	enum gen_verdict v = GEN_FAIL;

	memset(&st, 0, sizeof(st));
	opts.share_id_arg = &seq;
	qopts = opts;
	qopts.no_reasons = true;
	if (!load(g, &l, why))
		goto out;
	if (alloc_ctx_new(&node, l.slices, l.n_slices, l.classes, l.n_classes, &opts, &ctx, &err) ||
	    alloc_ctx_new(&node, l.slices, l.n_slices, l.classes, l.n_classes, &qopts, &quick,
			  &err)) {
		sb_printf(why, "alloc_ctx_new: %s", err.msg);
		goto out;
	}
	if (!(as = alloc_state_new(ctx)) || !(qas = alloc_state_new(quick))) {
		sb_puts(why, "out of memory");
		goto out;
	}
	/* The claims allocated before: in the allocator's states and in the
	 * oracle's, each by its own rules. */
	for (size_t i = 0; i < l.n_used; i++) {
		const struct model_allocation *a = l.used[i]->u.claim.status.allocation;

		if (alloc_state_add_allocation(as, a, &err) ||
		    alloc_state_add_allocation(qas, a, &err)) {
			sb_printf(why, "alloc_state_add_allocation: %s", err.msg);
			goto out;
		}
	}
	for (int i = 0; i < g->n_used; i++)
		take_used(g, &g->used[i], &st);
	if (alloc_ctx_device_count(ctx) != (size_t)g->n_devs) {
		sb_printf(why, "the ctx has %zu devices, the node %d",
			  alloc_ctx_device_count(ctx), g->n_devs);
		goto out;
	}
	v = round_check(g, &l, ctx, quick, as, qas, &st, &allocated, stats, why);
	/* A second pod with the same claims on top of the first: the
	 * committed state must count what the first one took. */
	if (v == GEN_PASS && g->twice && allocated)
		v = round_check(g, &l, ctx, quick, as, qas, &st, &allocated, stats, why);
out:
	if (v == GEN_FAIL)
		sb_printf(why, "\n--- the manifests (node node-1) ---\n%s", sb_str(&g->yaml));
	alloc_state_free(qas);
	alloc_state_free(as);
	alloc_ctx_free(quick);
	alloc_ctx_free(ctx);
	model_set_free(l.set);
	return v;
}
