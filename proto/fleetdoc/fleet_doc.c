/* fleet_doc.c - ListNodes and ListTypes answers as documents (fleet_doc.h). */
#include "fleet_doc.h"

#include <stdio.h>
#include <time.h>

static const char *const verdicts[] = { "unspecified", "match", "drift", "unknown", "learned" };

const char *fleet_doc_verdict(Dratopo__V1__Verdict v)
{
	return (unsigned)v < sizeof(verdicts) / sizeof(verdicts[0]) ? verdicts[v] : "unspecified";
}

const char *fleet_doc_source(Dratopo__V1__HwdbSource s)
{
	switch (s) {
	case DRATOPO__V1__HWDB_SOURCE__HWDB_SOURCE_KNOWN: return "hwdb";
	case DRATOPO__V1__HWDB_SOURCE__HWDB_SOURCE_LEARNED: return "learned";
	default: return "none";
	}
}

const char *fleet_doc_type_note(const Dratopo__V1__TypeSummary *t)
{
	if (t->conflict)
		return "conflict: its nodes disagree on the shape";
	if (t->hwdb_suspect)
		return "hwdb suspect: most nodes drift the same way";
	return "";
}

const char *fleet_doc_time(int64_t ns, char *buf, size_t len)
{
	time_t s = (time_t)(ns / 1000000000);
	struct tm tm;

	if (!ns || !gmtime_r(&s, &tm) || !strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, len, "never");
	return buf;
}

struct doc_node *fleet_doc_node(struct doc_arena *a, const Dratopo__V1__Node *n)
{
	struct doc_node *o = doc_new_map(a), *d = doc_new_seq(a);
	char ts[32];
	int rc = !o || !d;

	for (size_t k = 0; !rc && k < n->n_differences; k++)
		rc = doc_seq_push(a, d, doc_new_string(a, n->differences[k]));
	rc = rc || doc_map_set(a, o, "name", doc_new_string(a, n->name)) ||
	     doc_map_set(a, o, "instanceType", doc_new_string(a, n->instance_type)) ||
	     doc_map_set(a, o, "verdict", doc_new_string(a, fleet_doc_verdict(n->verdict))) ||
	     doc_map_set(a, o, "differences", d) ||
	     doc_map_set(a, o, "lastReport",
			 doc_new_string(a, fleet_doc_time(n->last_report_unix_nanos, ts,
							  sizeof(ts)))) ||
	     doc_map_set(a, o, "gpus", doc_new_int(a, n->gpus)) ||
	     doc_map_set(a, o, "efas", doc_new_int(a, n->efas)) ||
	     doc_map_set(a, o, "plannable", doc_new_bool(a, n->plannable)) ||
	     doc_map_set(a, o, "why", doc_new_string(a, n->why));
	return rc ? NULL : o;
}

struct doc_node *fleet_doc_nodes(struct doc_arena *a, Dratopo__V1__Node *const *nodes, size_t n)
{
	struct doc_node *top = doc_new_map(a), *list = doc_new_seq(a);
	int rc = !top || !list || doc_map_set(a, top, "nodes", list);

	for (size_t i = 0; !rc && i < n; i++)
		rc = doc_seq_push(a, list, fleet_doc_node(a, nodes[i]));
	return rc ? NULL : top;
}

static struct doc_node *type_doc(struct doc_arena *a, const Dratopo__V1__TypeSummary *t)
{
	struct doc_node *o = doc_new_map(a);
	int rc = !o || doc_map_set(a, o, "instanceType", doc_new_string(a, t->instance_type)) ||
		 doc_map_set(a, o, "hwdb", doc_new_string(a, fleet_doc_source(t->hwdb))) ||
		 doc_map_set(a, o, "nodes", doc_new_int(a, t->nodes)) ||
		 doc_map_set(a, o, "matching", doc_new_int(a, t->matching)) ||
		 doc_map_set(a, o, "drifting", doc_new_int(a, t->drifting)) ||
		 doc_map_set(a, o, "unknown", doc_new_int(a, t->unknown)) ||
		 doc_map_set(a, o, "stale", doc_new_int(a, t->stale)) ||
		 doc_map_set(a, o, "plannable", doc_new_int(a, t->plannable)) ||
		 doc_map_set(a, o, "commonShape", doc_new_string(a, t->common_shape)) ||
		 doc_map_set(a, o, "commonShapeNodes", doc_new_int(a, t->common_shape_nodes)) ||
		 doc_map_set(a, o, "conflict", doc_new_bool(a, t->conflict)) ||
		 doc_map_set(a, o, "hwdbSuspect", doc_new_bool(a, t->hwdb_suspect));

	return rc ? NULL : o;
}

struct doc_node *fleet_doc_types(struct doc_arena *a, Dratopo__V1__TypeSummary *const *types,
				 size_t n)
{
	struct doc_node *top = doc_new_map(a), *list = doc_new_seq(a);
	int rc = !top || !list || doc_map_set(a, top, "types", list);

	for (size_t i = 0; !rc && i < n; i++)
		rc = doc_seq_push(a, list, type_doc(a, types[i]));
	return rc ? NULL : top;
}
