/* reconcile_records.c - the records the fleet hands out: verdict names,
 * what makes a type conflicted, why a node is not plannable, the views of
 * nodes and conflicts, their copies and their destructors. Shared by
 * reconciling (reconcile.c) and asking (reconcile_query.c). */
#include "reconcile_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"

#define NS_PER_S ((int64_t)1000000000)

/* ---- Verdicts and types ---- */

static const char *const verdict_names[REC_N_VERDICTS] = {
	"match", "drift", "unknown", "learned",
};

const char *rec_verdict_name(enum rec_verdict v)
{
	return (unsigned)v < REC_N_VERDICTS ? verdict_names[v] : "unknown";
}

int rec_verdict_parse(const char *s, enum rec_verdict *out)
{
	for (int i = 0; s && i < REC_N_VERDICTS; i++)
		if (strcmp(s, verdict_names[i]) == 0) {
			*out = (enum rec_verdict)i;
			return 0;
		}
	return -EINVAL;
}

size_t rec_type_live_shapes(const struct ftype *t)
{
	size_t n = 0;

	for (const struct fshape *s = t->shapes; s; s = s->next)
		n += s->count > 0;
	return n;
}

/* Whether hwdb leaves t to be learned: it lacks the type, or its entry
 * leaves out the grouping, PCI ids or size (hwdb_type_incomplete). */
bool rec_type_to_learn(const struct ftype *t)
{
	const struct hwdb_type *e = hwdb_lookup(t->name);

	return !e || hwdb_type_incomplete(e);
}

bool rec_type_conflicted(const struct ftype *t)
{
	return rec_type_to_learn(t) && rec_type_live_shapes(t) > 1;
}

/* ---- Freeing what the API hands out ---- */

void rec_node_free(struct rec_node *n)
{
	if (!n)
		return;
	free(n->name);
	free(n->instance_type);
	dt_diags_free(&n->differences);
	free(n->shape_key);
	free(n->agent_version);
	free(n->boot_id);
	free(n->why);
	memset(n, 0, sizeof(*n));
	dt_diags_init(&n->differences);
}

void rec_learned_free(struct rec_learned *l)
{
	if (!l)
		return;
	free(l->type);
	free(l->shape_key);
	free(l->source);
	dt_strv_free(l->nodes, l->n_nodes);
	memset(l, 0, sizeof(*l));
}

void rec_conflict_free(struct rec_conflict *c)
{
	if (!c)
		return;
	for (size_t i = 0; c->shapes && i < c->n_shapes; i++) {
		free(c->shapes[i].shape_key);
		dt_strv_free(c->shapes[i].nodes, c->shapes[i].n_nodes);
	}
	free(c->shapes);
	free(c->type);
	memset(c, 0, sizeof(*c));
}

void rec_changes_free(struct rec_changes *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n_nodes; i++)
		rec_node_free(&c->nodes[i]);
	for (size_t i = 0; i < c->n_learned; i++)
		rec_learned_free(&c->learned[i]);
	for (size_t i = 0; i < c->n_conflicts; i++)
		rec_conflict_free(&c->conflicts[i]);
	free(c->nodes);
	free(c->learned);
	free(c->conflicts);
	memset(c, 0, sizeof(*c));
}

void rec_outcome_free(struct rec_outcome *o)
{
	if (!o)
		return;
	rec_node_free(&o->node);
	rec_changes_free(&o->also);
	dt_diags_free(&o->warnings);
}

void rec_node_list_free(struct rec_node_list *l)
{
	for (size_t i = 0; l && i < l->n; i++)
		rec_node_free(&l->nodes[i]);
	if (l)
		free(l->nodes);
}

void rec_type_list_free(struct rec_type_list *l)
{
	for (size_t i = 0; l && i < l->n; i++) {
		free(l->types[i].type);
		free(l->types[i].common_shape);
	}
	if (l)
		free(l->types);
}

void rec_conflict_list_free(struct rec_conflict_list *l)
{
	for (size_t i = 0; l && i < l->n; i++)
		rec_conflict_free(&l->conflicts[i]);
	if (l)
		free(l->conflicts);
}

/* ---- Copies ---- */

int rec_diags_copy(const struct dt_diags *src, struct dt_diags *out)
{
	dt_diags_init(out);
	for (size_t i = 0; i < src->n; i++)
		if (dt_diags_add(out, "%s", src->msgs[i]))
			return -ENOMEM;
	out->dropped += src->dropped;
	return 0;
}

static int names_copy(char *const *src, size_t n, char ***out)
{
	*out = calloc(n + 1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (!((*out)[i] = strdup(src[i])))
			return -ENOMEM;
	return 0;
}

int rec_learned_copy(const struct rec_learned *src, struct rec_learned *out)
{
	memset(out, 0, sizeof(*out));
	out->learned_ns = src->learned_ns;
	out->n_nodes = src->n_nodes;
	if (!(out->type = strdup(src->type)) ||
	    !(out->shape_key = strdup(src->shape_key ? src->shape_key : "")) ||
	    !(out->source = strdup(src->source)) ||
	    names_copy(src->nodes, src->n_nodes, &out->nodes)) {
		rec_learned_free(out);
		return -ENOMEM;
	}
	return 0;
}

int rec_node_view(const struct rec_fleet *f, const struct fnode *n, int64_t now,
		  struct rec_node *out)
{
	struct strbuf why = STRBUF_INIT;

	memset(out, 0, sizeof(*out));
	rec_why(f, n, now, &why);
	out->verdict = n->verdict;
	out->gpus = n->gpus;
	out->efas = n->efas;
	out->sequence = n->sequence;
	out->probed_ns = n->probed_ns;
	out->received_ns = n->received_ns;
	out->plannable = why.len == 0;
	out->conflicted = rec_type_conflicted(n->type);
	out->drifted = n->drifted;
	out->recovered = n->drifted && (n->verdict == REC_MATCH || n->verdict == REC_LEARNED);
	out->why = sb_error(&why) ? NULL : strdup(sb_str(&why));
	sb_free(&why);
	if (rec_diags_copy(&n->diffs, &out->differences) || !out->why ||
	    !(out->name = strdup(n->name)) || !(out->instance_type = strdup(n->type->name)) ||
	    !(out->shape_key = strdup(n->shape->key)) ||
	    !(out->agent_version = strdup(n->agent_version)) ||
	    !(out->boot_id = strdup(n->boot_id))) {
		rec_node_free(out);
		return -ENOMEM;
	}
	return 0;
}

/* Shapes of a conflict: most nodes first, then by key. */
static int conflict_shape_cmp(const void *a, const void *b)
{
	const struct rec_conflict_shape *x = a, *y = b;

	if (x->n_nodes != y->n_nodes)
		return x->n_nodes > y->n_nodes ? -1 : 1;
	return strcmp(x->shape_key, y->shape_key);
}

int rec_conflict_view(const struct rec_fleet *f, const struct ftype *t,
		      struct rec_conflict *out)
{
	size_t k = 0;

	memset(out, 0, sizeof(*out));
	if (!(out->type = strdup(t->name)))
		return -ENOMEM;
	if (!rec_type_conflicted(t))
		return 0;               /* resolved: no shapes */
	out->shapes = calloc(rec_type_live_shapes(t), sizeof(*out->shapes));
	if (!out->shapes)
		goto oom;
	for (const struct fshape *s = t->shapes; s; s = s->next) {
		struct rec_conflict_shape *cs;

		if (!s->count)
			continue;
		cs = &out->shapes[k++];
		out->n_shapes = k;
		cs->shape_key = strdup(s->key);
		cs->nodes = calloc(s->count, sizeof(*cs->nodes));
		if (!cs->shape_key || !cs->nodes)
			goto oom;
		for (size_t i = 0; i < f->n_nodes && cs->n_nodes < s->count; i++)
			if (f->nodes[i]->shape == s &&
			    !(cs->nodes[cs->n_nodes++] = strdup(f->nodes[i]->name)))
				goto oom;
	}
	qsort(out->shapes, out->n_shapes, sizeof(*out->shapes), conflict_shape_cmp);
	return 0;
oom:
	rec_conflict_free(out);
	return -ENOMEM;
}

/* ---- Why a node is not plannable ---- */

/* One reason more, after a "; " when there are others. */
static void why_sep(struct strbuf *why)
{
	if (why->len)
		sb_puts(why, "; ");
}

void rec_why(const struct rec_fleet *f, const struct fnode *n, int64_t now,
	     struct strbuf *why)
{
	const struct ftype *t = n->type;
	int64_t silent = now - n->received_ns;

	if (n->verdict == REC_DRIFT) {
		why_sep(why);
		sb_printf(why, "drift: %s", n->diffs.n ? n->diffs.msgs[0] : "differs");
		if (dt_diags_count(&n->diffs) > 1)
			sb_printf(why, " (and %zu more)", dt_diags_count(&n->diffs) - 1);
	} else if (n->verdict == REC_UNKNOWN && rec_type_conflicted(t)) {
		why_sep(why);
		sb_printf(why, "conflict: the nodes of %s report %zu different shapes; nothing is "
			  "learned until they agree", t->name, rec_type_live_shapes(t));
	} else if (n->verdict == REC_UNKNOWN) {
		why_sep(why);
		sb_printf(why, "unknown: %s is not in hwdb; %zu of the %u nodes of one shape "
			  "needed to learn it have reported", t->name, n->shape->count, f->quorum);
	}
	if (silent > f->stale_after_ns) {
		why_sep(why);
		sb_printf(why, "stale: last report %" PRId64 "s ago (stale after %" PRId64 "s)",
			  silent / NS_PER_S, f->stale_after_ns / NS_PER_S);
	}
}
