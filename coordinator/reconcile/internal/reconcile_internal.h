/* reconcile_internal.h - the fleet's state, shared by the reconcile
 * module's files (reconcile.c: reports, learning, restore;
 * reconcile_pack.c: packed devices; reconcile_query.c: queries). Not for
 * use outside coordinator/reconcile/. */
#ifndef DT_RECONCILE_INTERNAL_H
#define DT_RECONCILE_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "reconcile.h"

/* ---- Packed devices (reconcile_pack.c) ----
 *
 * A node's devices as one allocation: the fixed part of each device, then
 * its strings (pcieRoot, link speed, RDMA device) once each, NUL-separated.
 * Two reports with the same devices pack to the same bytes, so a heartbeat
 * is recognised with one memcmp. */
struct rec_pdev {
	uint32_t domain;
	uint8_t bus, dev, func;
	uint8_t flags;                  /* PDEV_* */
	uint16_t vendor, device, subsys_vendor, subsys_device;
	int16_t numa;
	uint16_t link_width;
	/* Offset + 1 into the strings; 0: none. */
	uint16_t root, speed, rdma;
};
#define PDEV_EFA        0x01
#define PDEV_SUBSYS     0x02
#define PDEV_FELL_OFF   0x04

struct rec_pack {
	uint16_t n;                     /* devices */
	uint16_t strings_len;
	struct rec_pdev devs[];         /* then strings_len bytes of strings */
};

/* Check and pack a report's devices (sorted by address). err names the
 * device and field; -EINVAL, -E2BIG, -ENOMEM. */
int rec_pack_devices(const struct rec_report *r, struct rec_pack **out, struct dt_err *err);
bool rec_pack_equal(const struct rec_pack *a, const struct rec_pack *b);
/* Would packing r's devices give p's (a heartbeat), found without packing?
 * False also when r lists them in another order than by address. */
bool rec_pack_matches(const struct rec_pack *p, const struct rec_report *r);
/* The devices as a topology (topo's model, with the host facts). */
int rec_pack_topology(const struct rec_pack *p, const char *instance_type, int cpus,
		      int64_t memory_mib, struct topo *out, struct dt_err *err);

/* ---- Fleet state (reconcile.c) ---- */

/* One distinct shape among a type's nodes. */
struct fshape {
	char *key;
	size_t count;                   /* nodes whose last report has it */
	size_t agreeing;                /* a types query's count of those matching their entry */
	struct fshape *next;
};

struct flearned {
	struct hwdb_entry *src;         /* owns the parsed entry */
	const struct hwdb_type *entry;
	struct rec_learned rec;
};

struct ftype {
	char *name;
	struct fshape *shapes;          /* count 0 ones are kept, for reuse */
	size_t n_nodes;
	struct flearned *learned;
	size_t scratch;                 /* a query's index */
};

struct fnode {
	char *name;
	struct ftype *type;
	struct fshape *shape;
	enum rec_verdict verdict;
	struct dt_diags diffs;
	char *agent_version, *boot_id;
	uint64_t sequence;
	int64_t probed_ns, received_ns;
	int cpus;
	int64_t memory_mib;
	uint16_t gpus, efas;
	struct rec_pack *pack;
	bool drifted;                   /* was in drift at some time */
	/* Restore only: what the record said. */
	enum rec_verdict stored_verdict;
	bool stored_key_differs;
};

struct rec_fleet {
	pthread_mutex_t mu;
	unsigned quorum;
	int64_t stale_after_ns;
	struct fnode **nodes;           /* by name */
	size_t n_nodes, cap_nodes;
	struct ftype **types;           /* by name */
	size_t n_types, cap_types;
	bool restoring;
};

/* The node named name, or NULL; *pos gets where it is or would go. */
struct fnode *rec_find_node(const struct rec_fleet *f, const char *name, size_t *pos);
struct ftype *rec_find_type(const struct rec_fleet *f, const char *name);
/* hwdb lacks the type or leaves out what its nodes can teach
 * (hwdb_type_incomplete): the fleet learns it. */
bool rec_type_to_learn(const struct ftype *t);
/* The type is to be learned and its nodes show more than one shape. */
bool rec_type_conflicted(const struct ftype *t);
size_t rec_type_live_shapes(const struct ftype *t);

/* ---- Views (reconcile_query.c), all under the lock ---- */

int rec_node_view(const struct rec_fleet *f, const struct fnode *n, int64_t now,
		  struct rec_node *out);
int rec_conflict_view(const struct rec_fleet *f, const struct ftype *t,
		      struct rec_conflict *out);
int rec_learned_copy(const struct rec_learned *src, struct rec_learned *out);
/* Why n may not be planned on at now, appended to why ("" when it may). */
void rec_why(const struct rec_fleet *f, const struct fnode *n, int64_t now,
	     struct strbuf *why);
int rec_diags_copy(const struct dt_diags *src, struct dt_diags *out);

#endif
