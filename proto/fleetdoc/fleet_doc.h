/* fleet_doc.h - the fleet queries' answers (dratopo.v1 ListNodes and
 * ListTypes) as documents: the JSON `dratopo nodes -o json` and `dratopo
 * types -o json` print and the coordinator's pages serve (/nodes.json,
 * /types.json), built by one piece of code so that they never differ,
 * and the words both use for verdicts, hwdb sources and a type's note.
 *
 * nodes: {"nodes": [{"name", "instanceType", "verdict", "differences",
 *         "lastReport" (RFC 3339 UTC, "never"), "gpus", "efas",
 *         "plannable", "why"}]}
 * types: {"types": [{"instanceType", "hwdb" ("hwdb"|"learned"|"none"),
 *         "nodes", "matching", "drifting", "unknown", "stale", "plannable",
 *         "commonShape", "commonShapeNodes", "conflict", "hwdbSuspect"}]}
 *
 * The documents live in the caller's arena; NULL on out of memory. */
#ifndef DT_FLEET_DOC_H
#define DT_FLEET_DOC_H

#include <stddef.h>
#include <stdint.h>

#include "doc.h"
#include "dratopo/v1/fleet.pb-c.h"

/* "match", "drift", "unknown", "learned" ("unspecified" otherwise). */
const char *fleet_doc_verdict(Dratopo__V1__Verdict v);
/* "hwdb", "learned", "none". */
const char *fleet_doc_source(Dratopo__V1__HwdbSource s);
/* What is odd about a type ("conflict: its nodes disagree on the shape",
 * "hwdb suspect: most nodes drift the same way"); "" when nothing is. */
const char *fleet_doc_type_note(const Dratopo__V1__TypeSummary *t);
/* Unix ns as RFC 3339 UTC to the second ("2026-12-03T05:59:01Z"), or
 * "never" for 0. buf >= 32 bytes. */
const char *fleet_doc_time(int64_t ns, char *buf, size_t len);

struct doc_node *fleet_doc_node(struct doc_arena *a, const Dratopo__V1__Node *n);
struct doc_node *fleet_doc_nodes(struct doc_arena *a, Dratopo__V1__Node *const *nodes, size_t n);
struct doc_node *fleet_doc_types(struct doc_arena *a, Dratopo__V1__TypeSummary *const *types,
				 size_t n);

#endif
