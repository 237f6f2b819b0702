/* hwdb_catalog.h - a set of instance-type entries that one user of hwdb
 * plans or looks up against: the built-in table, extra files on top, and
 * the types a fleet learned.
 *
 * hwdb_lookup(), hwdb_at() and hwdb_load_extra() (hwdb.h) work on one
 * catalogue of the process, hwdb_catalog_process(): what the agent, the
 * CLI and the coordinator's verification read. Any other catalogue is its
 * own: a plan that brings its own extras (the coordinator's Plan RPC, the
 * CLI's `plan --hwdb-extra`) builds one, and nothing else sees it.
 *
 * An entry's place:
 *   - the base: the built-in table (hwdb_catalog_new(NULL)), or every
 *     entry of another catalogue, borrowed;
 *   - extras (hwdb_catalog_load, _load_buf), in load order: an extra entry
 *     replaces a base entry or an earlier extra of the same name, as
 *     `--hwdb-extra` always did;
 *   - learned entries (hwdb_catalog_add_learned): copied in for a name the
 *     catalogue does not hold yet, and merged into an entry that leaves out
 *     what the fleet saw (its grouping, PCI ids or size); a complete
 *     built-in or extra entry wins over what a fleet learned (the
 *     coordinator verifies its nodes that way). A later extra of the same
 *     name replaces one: that is how a plan gives a learned type a price.
 * Iteration (hwdb_catalog_at) is in price order: cheapest first, types
 * without an on-demand price last, ties by name.
 *
 * Memory: a catalogue owns its extras and its copies of learned entries;
 * a pointer it hands out stays valid until the catalogue is reset or freed
 * (an entry replaced by a later extra is no longer found, but is not freed
 * before). Base entries are borrowed: the base must outlive the catalogue
 * and not change while it lives.
 *
 * Threads: lookups may run concurrently with each other; changing a
 * catalogue (load, add, reset) must not run concurrently with anything on
 * that catalogue. Distinct catalogues are independent. */
#ifndef DT_HWDB_CATALOG_H
#define DT_HWDB_CATALOG_H

#include <stddef.h>

#include "err.h"
#include "hwdb.h"

struct hwdb_catalog;

/* A catalogue holding base's entries (NULL: the built-in table). 0 or
 * -ENOMEM. */
int hwdb_catalog_new(const struct hwdb_catalog *base, struct hwdb_catalog **out,
		     struct dt_err *err);
void hwdb_catalog_free(struct hwdb_catalog *c);

/* The process's catalogue, which hwdb_lookup() and friends read. Never
 * NULL; never free it. */
struct hwdb_catalog *hwdb_catalog_process(void);

/* Read an extra file (source format, `instanceTypes: [...]`) into c. All
 * or nothing: a file with any error changes nothing, and err names the
 * file, line, entry and field. */
int hwdb_catalog_load(struct hwdb_catalog *c, const char *path, struct dt_err *err);
/* The same from a buffer; name is used in messages. */
int hwdb_catalog_load_buf(struct hwdb_catalog *c, const char *buf, size_t len,
			  const char *name, struct dt_err *err);
/* A type a fleet learned (e.g. rec_fleet_hwdb_lookup's): c keeps a copy,
 * marked learned. Where c already holds an entry of t's name, a complete
 * one wins and nothing changes; an incomplete one (hwdb_type_incomplete)
 * with the same GPU and EFA counts and no PCI id that contradicts t's is
 * replaced by a merge: its prices, regional prices, network and
 * accelerator facts and notes, with t's devices (PCIe roots, NUMA, PCI
 * ids) and, where it has none, t's size. 0 or -ENOMEM. */
int hwdb_catalog_add_learned(struct hwdb_catalog *c, const struct hwdb_type *t,
			     struct dt_err *err);
/* Drop every extra and learned entry: back to the base. */
void hwdb_catalog_reset(struct hwdb_catalog *c);

/* By exact name; NULL when unknown. */
const struct hwdb_type *hwdb_catalog_lookup(const struct hwdb_catalog *c, const char *name);
/* Every entry in price order; i < hwdb_catalog_count(c), else NULL. */
size_t hwdb_catalog_count(const struct hwdb_catalog *c);
const struct hwdb_type *hwdb_catalog_at(const struct hwdb_catalog *c, size_t i);
/* The types of a family in price order into out[0..cap); returns how many
 * the family has. */
size_t hwdb_catalog_family(const struct hwdb_catalog *c, const char *family,
			   const struct hwdb_type **out, size_t cap);
/* The name closest to name, for "did you mean"; NULL when nothing is close. */
const char *hwdb_catalog_suggest(const struct hwdb_catalog *c, const char *name);

#endif
