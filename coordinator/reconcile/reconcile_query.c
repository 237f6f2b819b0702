/* reconcile_query.c - what the fleet tells: node records, plannability,
 * per-type summaries, conflicts, learned entries, predicted slices (the
 * records themselves are reconcile_records.c's). See reconcile.h. */
#include "reconcile_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwdb_catalog.h"
#include "topo_slices.h"

/* ---- Plannable ---- */

int rec_node_plannable(struct rec_fleet *f, const char *name, int64_t now,
		       struct strbuf *why, struct dt_err *err)
{
	struct strbuf own = STRBUF_INIT;
	struct fnode *n;
	int rc;

	pthread_mutex_lock(&f->mu);
	n = rec_find_node(f, name, NULL);
	if (n)
		rec_why(f, n, now, &own);
	pthread_mutex_unlock(&f->mu);
	if (!n)
		rc = dt_err_set(err, -ENOENT, "no node %s", name);
	else if (sb_error(&own))
		rc = dt_err_set(err, -ENOMEM, "out of memory");
	else
		rc = own.len == 0;
	if (rc == 0 && why)
		sb_puts(why, sb_str(&own));
	sb_free(&own);
	return rc;
}

/* ---- Nodes ---- */

int rec_fleet_node(struct rec_fleet *f, const char *name, int64_t now, struct rec_node *out,
		   struct dt_err *err)
{
	struct fnode *n;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	dt_diags_init(&out->differences);
	pthread_mutex_lock(&f->mu);
	n = rec_find_node(f, name, NULL);
	if (!n)
		rc = dt_err_set(err, -ENOENT, "no node %s", name);
	else if (rec_node_view(f, n, now, out))
		rc = dt_err_set(err, -ENOMEM, "out of memory");
	pthread_mutex_unlock(&f->mu);
	return rc;
}

static bool filter_keeps(const struct rec_fleet *f, const struct rec_filter *flt,
			 const struct fnode *n, int64_t now)
{
	if (flt->instance_type && strcmp(flt->instance_type, n->type->name) != 0)
		return false;
	if (flt->verdict >= 0 && (int)n->verdict != flt->verdict)
		return false;
	if (flt->plannable >= 0) {
		struct strbuf why = STRBUF_INIT;
		bool plannable;

		rec_why(f, n, now, &why);
		plannable = why.len == 0 && !why.oom;
		sb_free(&why);
		if (plannable != (flt->plannable > 0))
			return false;
	}
	return true;
}

int rec_fleet_nodes(struct rec_fleet *f, const struct rec_filter *flt, int64_t now,
		    struct rec_node_list *out, struct dt_err *err)
{
	static const struct rec_filter all = REC_FILTER_ALL;
	size_t start = 0, cap;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if (!flt)
		flt = &all;
	pthread_mutex_lock(&f->mu);
	if (flt->after && rec_find_node(f, flt->after, &start))
		start++;
	cap = f->n_nodes - start;
	if (flt->limit && flt->limit < cap)
		cap = flt->limit;
	out->nodes = calloc(cap + 1, sizeof(*out->nodes));
	if (!out->nodes)
		rc = -ENOMEM;
	for (size_t i = 0; flt->count && i < start; i++)
		out->before += filter_keeps(f, flt, f->nodes[i], now);
	for (size_t i = start; !rc && i < f->n_nodes; i++) {
		if (!filter_keeps(f, flt, f->nodes[i], now))
			continue;
		out->total++;
		if (out->n == cap) {
			out->more = true;
			if (!flt->count)
				break;
			continue;
		}
		rc = rec_node_view(f, f->nodes[i], now, &out->nodes[out->n]);
		out->n += rc == 0;
	}
	out->total += out->before;
	pthread_mutex_unlock(&f->mu);
	if (rc) {
		rec_node_list_free(out);
		return dt_err_set(err, rc, "out of memory");
	}
	return 0;
}

/* ---- Types ---- */

const char *rec_entry_source_name(enum rec_entry_source s)
{
	switch (s) {
	case REC_SOURCE_HWDB:
		return "hwdb";
	case REC_SOURCE_EXTRA:
		return "extra";
	case REC_SOURCE_LEARNED:
		return "learned";
	case REC_SOURCE_NONE:
		break;
	}
	return "none";
}

static enum rec_entry_source entry_source(const struct ftype *t)
{
	const struct hwdb_type *e = hwdb_lookup(t->name);

	if (t->learned && rec_type_to_learn(t))
		return REC_SOURCE_LEARNED;
	if (e)
		return e->builtin ? REC_SOURCE_HWDB : REC_SOURCE_EXTRA;
	return REC_SOURCE_NONE;
}

/* Whether shape s is a better "most common shape" than best: more nodes;
 * on a tie, more of them matching their entry (a reader takes the common
 * shape for what the type is, so one matching node and one drifted node
 * show the matching shape); then the smaller key, to stay stable. */
static bool more_common(const struct fshape *s, const struct fshape *best)
{
	if (!best || s->count != best->count)
		return !best || s->count > best->count;
	if (s->agreeing != best->agreeing)
		return s->agreeing > best->agreeing;
	return strcmp(s->key, best->key) < 0;
}

/* The shape most of t's nodes have; agreeing counts are the caller's. */
static const struct fshape *common_shape(const struct ftype *t)
{
	const struct fshape *best = NULL;

	for (const struct fshape *s = t->shapes; s; s = s->next)
		if (s->count && more_common(s, best))
			best = s;
	return best;
}

/* Each shape's agreeing count, from the nodes' verdicts. */
static void count_agreeing(struct rec_fleet *f)
{
	for (size_t i = 0; i < f->n_types; i++)
		for (struct fshape *s = f->types[i]->shapes; s; s = s->next)
			s->agreeing = 0;
	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct fnode *n = f->nodes[i];

		if (n->shape && (n->verdict == REC_MATCH || n->verdict == REC_LEARNED))
			n->shape->agreeing++;
	}
}

static int type_head(const struct ftype *t, struct rec_type_summary *s)
{
	const struct fshape *c = common_shape(t);

	memset(s, 0, sizeof(*s));
	s->source = entry_source(t);
	s->nodes = t->n_nodes;
	s->n_shapes = rec_type_live_shapes(t);
	s->conflicted = rec_type_conflicted(t);
	s->common_count = c ? c->count : 0;
	s->type = strdup(t->name);
	s->common_shape = strdup(c ? c->key : "");
	return s->type && s->common_shape ? 0 : -ENOMEM;
}

int rec_fleet_types(struct rec_fleet *f, int64_t now, struct rec_type_list *out,
		    struct dt_err *err)
{
	size_t *common_drift = NULL;
	const struct fshape **common = NULL;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&f->mu);
	out->types = calloc(f->n_types + 1, sizeof(*out->types));
	common_drift = calloc(f->n_types + 1, sizeof(*common_drift));
	common = calloc(f->n_types + 1, sizeof(*common));
	if (!out->types || !common_drift || !common) {
		rc = -ENOMEM;
		goto out;
	}
	count_agreeing(f);
	/* A type whose last node left (forgotten, or now of another type)
	 * is not in the summary: nothing of it is live. */
	for (size_t i = 0; i < f->n_types && !rc; i++) {
		if (!f->types[i]->n_nodes)
			continue;
		f->types[i]->scratch = out->n;
		common[out->n] = common_shape(f->types[i]);
		rc = type_head(f->types[i], &out->types[out->n]);
		out->n++;
	}
	for (size_t i = 0; i < f->n_nodes && !rc; i++) {
		const struct fnode *n = f->nodes[i];
		size_t k = n->type->scratch;
		struct rec_type_summary *s = &out->types[k];
		struct strbuf why = STRBUF_INIT;

		s->by_verdict[n->verdict]++;
		common_drift[k] += n->shape == common[k] && n->verdict == REC_DRIFT;
		s->stale += now - n->received_ns > f->stale_after_ns;
		rec_why(f, n, now, &why);
		s->plannable += why.len == 0;
		rc = sb_error(&why);
		sb_free(&why);
	}
	for (size_t i = 0; i < out->n && !rc; i++) {
		struct rec_type_summary *s = &out->types[i];

		s->hwdb_suspect = (s->source == REC_SOURCE_HWDB || s->source == REC_SOURCE_EXTRA) &&
				  common_drift[i] >= f->quorum && 2 * common_drift[i] > s->nodes;
	}
out:
	pthread_mutex_unlock(&f->mu);
	free(common_drift);
	free(common);
	if (rc) {
		rec_type_list_free(out);
		memset(out, 0, sizeof(*out));
		return dt_err_set(err, rc, "out of memory");
	}
	return 0;
}

int rec_fleet_conflicts(struct rec_fleet *f, struct rec_conflict_list *out,
			struct dt_err *err)
{
	int rc = 0;

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&f->mu);
	out->conflicts = calloc(f->n_types + 1, sizeof(*out->conflicts));
	if (!out->conflicts)
		rc = -ENOMEM;
	for (size_t i = 0; !rc && i < f->n_types; i++)
		if (rec_type_conflicted(f->types[i]) &&
		    !(rc = rec_conflict_view(f, f->types[i], &out->conflicts[out->n])))
			out->n++;
	pthread_mutex_unlock(&f->mu);
	if (rc) {
		rec_conflict_list_free(out);
		memset(out, 0, sizeof(*out));
		return dt_err_set(err, rc, "out of memory");
	}
	return 0;
}

/* ---- hwdb, learned entries, slices ---- */

const struct hwdb_type *rec_fleet_hwdb_lookup(struct rec_fleet *f, const char *type,
					      bool *learned)
{
	const struct hwdb_type *e = hwdb_lookup(type), *l = NULL;
	const struct ftype *t;

	if (learned)
		*learned = false;
	if (e && !hwdb_type_incomplete(e))
		return e;
	pthread_mutex_lock(&f->mu);
	t = rec_find_type(f, type);
	/* Learned entries are never replaced or freed before the fleet. */
	if (t && t->learned)
		l = t->learned->entry;
	pthread_mutex_unlock(&f->mu);
	if (learned)
		*learned = l != NULL;
	return l ? l : e;
}

int rec_fleet_add_learned(struct rec_fleet *f, struct hwdb_catalog *cat, struct dt_err *err)
{
	int rc = 0;

	pthread_mutex_lock(&f->mu);
	for (size_t i = 0; !rc && i < f->n_types; i++)
		if (f->types[i]->learned)
			rc = hwdb_catalog_add_learned(cat, f->types[i]->learned->entry, err);
	pthread_mutex_unlock(&f->mu);
	return rc;
}

int rec_fleet_learned(struct rec_fleet *f, const char *type, struct rec_learned *out,
		      struct dt_err *err)
{
	const struct ftype *t;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&f->mu);
	t = rec_find_type(f, type);
	if (!t || !t->learned)
		rc = dt_err_set(err, -ENOENT, "%s: nothing learned", type);
	else if (rec_learned_copy(&t->learned->rec, out))
		rc = dt_err_set(err, -ENOMEM, "out of memory");
	pthread_mutex_unlock(&f->mu);
	return rc;
}

int rec_node_slices(struct rec_fleet *f, const char *name, const struct hwdb_cc_mode *mode,
		    struct model_set *set, struct model_object **out, size_t *n_out,
		    struct dt_err *err)
{
	struct topo top;
	struct dt_diags warnings;
	struct fnode *n;
	int rc;

	*n_out = 0;
	pthread_mutex_lock(&f->mu);
	n = rec_find_node(f, name, NULL);
	rc = n ? rec_pack_topology(n->pack, n->type->name, n->cpus, n->memory_mib, &top, err)
	       : dt_err_set(err, -ENOENT, "no node %s", name);
	pthread_mutex_unlock(&f->mu);
	if (rc)
		return rc;
	dt_diags_init(&warnings);
	rc = topo_slices(&top, mode, name, set, out, n_out, &warnings, err);
	dt_diags_free(&warnings);
	topo_free(&top);
	return rc;
}

int rec_node_topology(struct rec_fleet *f, const char *name, struct topo *out,
		      const struct hwdb_type **entry, struct dt_err *err)
{
	const struct fnode *n;
	int rc;

	pthread_mutex_lock(&f->mu);
	n = rec_find_node(f, name, NULL);
	if (!n) {
		rc = dt_err_set(err, -ENOENT, "no node %s", name);
	} else {
		rc = rec_pack_topology(n->pack, n->type->name, n->cpus, n->memory_mib, out, err);
		*entry = hwdb_lookup(n->type->name);
		if (n->type->learned && rec_type_to_learn(n->type))
			*entry = n->type->learned->entry;
	}
	pthread_mutex_unlock(&f->mu);
	return rc;
}
