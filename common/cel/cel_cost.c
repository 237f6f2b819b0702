/* cel_cost.c - the estimated cost of a checked program: an upper bound on
 * the runtime cost meter (cel_eval.c) computed from the tree, with size
 * bounds for values whose size is only known at run time (DRA attribute
 * strings and lists are bounded by the API; 64 is used for both). */
#include <stdint.h>

#include "cel_ast.h"

#define UNKNOWN_SIZE 64

struct est {
	uint64_t cost;
	uint64_t size;
};

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static uint64_t sat_mul(uint64_t a, uint64_t b)
{
	if (a && b > UINT64_MAX / a)
		return UINT64_MAX;
	return a * b;
}

static struct est estimate(const struct cel_node *n, int depth)
{
	struct est r = { 0, 1 }, e;

	if (depth > CEL_MAX_DEPTH * 4)
		return (struct est){ UINT64_MAX, UNKNOWN_SIZE };
	switch (n->kind) {
	case N_CONST:
		if (n->u.lit.kind == CEL_STRING || n->u.lit.kind == CEL_BYTES)
			r.size = n->u.lit.v.str.len;
		return r;
	case N_IDENT:
		r.cost = 1;
		r.size = UNKNOWN_SIZE;
		return r;
	case N_SELECT:
		e = estimate(n->u.sel.operand, depth + 1);
		r.cost = sat_add(e.cost, 1);
		r.size = UNKNOWN_SIZE;
		return r;
	case N_LIST:
		r.cost = 10;
		for (uint32_t i = 0; i < n->u.list.n; i++)
			r.cost = sat_add(r.cost, estimate(n->u.list.elems[i], depth + 1).cost);
		r.size = n->u.list.n;
		return r;
	case N_MAP:
		r.cost = 30;
		for (uint32_t i = 0; i < n->u.map.n; i++) {
			r.cost = sat_add(r.cost, estimate(n->u.map.keys[i], depth + 1).cost);
			r.cost = sat_add(r.cost, estimate(n->u.map.vals[i], depth + 1).cost);
		}
		r.size = n->u.map.n;
		return r;
	case N_COMP: {
		struct est range = estimate(n->u.comp.range, depth + 1);
		struct est init = estimate(n->u.comp.init, depth + 1);
		struct est cond = estimate(n->u.comp.cond, depth + 1);
		struct est step = estimate(n->u.comp.step, depth + 1);
		struct est res = estimate(n->u.comp.result, depth + 1);
		uint64_t iter = sat_add(cond.cost, step.cost);

		r.cost = sat_add(sat_add(range.cost, init.cost),
				 sat_add(sat_mul(range.size, iter), res.cost));
		r.size = range.size;
		return r;
	}
	case N_CALL: {
		uint64_t sizes[CEL_MAX_PARAMS + 1];
		uint64_t cost = 0, call = 1;
		size_t na = 0;

		if (n->u.call.target) {
			e = estimate(n->u.call.target, depth + 1);
			cost = sat_add(cost, e.cost);
			sizes[na++] = e.size;
		}
		for (uint32_t i = 0; i < n->u.call.nargs; i++) {
			e = estimate(n->u.call.args[i], depth + 1);
			cost = sat_add(cost, e.cost);
			if (na < CEL_ARRAY_LEN(sizes))
				sizes[na++] = e.size;
		}
		if (n->u.call.special == SP_AND || n->u.call.special == SP_OR ||
		    n->u.call.special == SP_COND || n->u.call.special == SP_DYN)
			call = 0;
		else if (n->u.call.special == SP_APPEND)
			call = 11;
		else if (n->u.call.special == SP_MAP_INSERT)
			call = 31;
		else
			for (uint32_t i = 0; i < n->u.call.ncands; i++) {
				const struct cel_overload *d = n->u.call.cands[i]->decl;
				uint64_t c = d->cost && na <= CEL_MAX_PARAMS ?
					d->cost(sizes, na, UNKNOWN_SIZE) : 1;

				if (c > call)
					call = c;
			}
		r.cost = sat_add(cost, call);
		r.size = UNKNOWN_SIZE;
		return r;
	}
	default:
		r.cost = 1;
		return r;
	}
}

uint64_t cel_estimate_cost(const struct cel_program *p)
{
	return estimate(p->ast.root, 0).cost;
}
