/* topo_root_pair.h - which of hwdb's PCIe roots each root of a node stands for.
 *
 * verify compares a node's grouping with hwdb's by shape only (how many
 * roots hold how many GPUs and EFAs), because root names differ between
 * hosts of one type. Saying WHERE a drifted node differs (the remedies'
 * DeviceTaintRules, the drawing of the topology) needs more: each root of
 * the node paired with the root of hwdb's entry it stands for. One rule
 * serves both, so that a picture and the taints it explains agree:
 *
 *   - only with hwdb's grouping (an entry scraped from live nodes,
 *     draMetadata) is there anything to pair;
 *   - the node's roots holding live devices take, in passes, the first
 *     hwdb root not yet taken that has: 0 the same live GPUs and EFAs, 1
 *     the same counting devices that fell off the bus, 2 the same GPU
 *     count, 3 the same EFA count, 4 anything; exact shapes first, so that
 *     a damaged root never takes the shape a healthy root has;
 *   - among hwdb roots with the shape a pass would take, the one with the
 *     node root's own name is preferred (names do coincide between hosts
 *     of one layout), which changes no shape, only the name drawn;
 *   - roots holding only devices that fell off the bus come last (pass 1,
 *     then anything left), so that they never take a shape from a live
 *     root.
 *
 * Pure: nothing here allocates but the result. */
#ifndef DT_TOPO_ROOT_PAIR_H
#define DT_TOPO_ROOT_PAIR_H

#include <stddef.h>

#include "hwdb.h"
#include "topo.h"

struct topo_root_pairing {
	struct hwdb_root *expected;     /* hwdb_type_roots() of the entry */
	size_t n_expected;
	/* Per root of the topology: the index of its hwdb root in expected,
	 * -1 when it has none (no grouping, or more roots than hwdb has). */
	long *of_root;
	/* Per hwdb root: the index of the topology's root paired with it, -1
	 * when none is (a root the node lacks). */
	long *of_expected;
};

/* Pair t's roots with expected's (NULL, or an entry without draMetadata:
 * nothing is paired, n_expected 0). 0 or -ENOMEM; free with
 * topo_root_pairing_free (also after an error). */
int topo_pair_roots(const struct topo *t, const struct hwdb_type *expected,
		    struct topo_root_pairing *out);
void topo_root_pairing_free(struct topo_root_pairing *p);

#endif
