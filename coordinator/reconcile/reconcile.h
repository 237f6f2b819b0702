/* reconcile.h - the coordinator's fleet: every node's last report
 * reconciled with the effective hwdb, learned types, conflicts, and what
 * planning may use.
 *
 * Pure logic: no RPC, no storage, no clock. The daemon decodes a report
 * into struct rec_report, calls rec_report(), writes what the outcome says
 * to its store in one transaction, and only then acknowledges the report.
 * After a restart it feeds the store's records back (rec_fleet_restore_*)
 * and the fleet is what it was. docs/reconcile.md has the rules.
 *
 * The verdict is the coordinator's: the reported devices are rebuilt into a
 * topology (topo/) and verified against the EFFECTIVE hwdb of the type:
 * the process's hwdb (built-in entries and any --hwdb-extra loaded with
 * hwdb_load_extra() before rec_fleet_new()), else the entry this fleet
 * learned for the type. The differences are worded as `dratopo-agent
 * verify` words them (same code).
 *
 * Threads: every function may be called from any thread; one mutex inside
 * the fleet serialises them (a report costs microseconds under it; the
 * heartbeat path, same devices as last time, does no verification). What
 * the functions hand out is copied: no pointer into the fleet escapes the
 * lock, except rec_fleet_hwdb_lookup()'s entries, which live as long as
 * the fleet (learned entries are never replaced).
 *
 * Memory: a node keeps its devices packed (about 30 bytes each plus its
 * distinct strings), so 10,000 eight-GPU nodes hold a few tens of MB.
 * Every struct a function fills is the caller's, freed with its _free(). */
#ifndef DT_RECONCILE_H
#define DT_RECONCILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "err.h"
#include "hwdb.h"
#include "strbuf.h"
#include "topo.h"

struct model_object;
struct model_set;

enum rec_verdict {
	REC_MATCH,      /* as hwdb (built-in or extra) says */
	REC_DRIFT,      /* differs from hwdb or from the type's learned entry */
	REC_UNKNOWN,    /* hwdb lacks the type and nothing was learned yet */
	REC_LEARNED,    /* as the entry learned for the type says */
};
#define REC_N_VERDICTS 4

const char *rec_verdict_name(enum rec_verdict v);   /* "match", "drift", ... */
/* The verdict named s; 0 or -EINVAL. */
int rec_verdict_parse(const char *s, enum rec_verdict *out);

#define REC_DEFAULT_LEARN_QUORUM 2
/* Three reporting intervals of the agent's default 30 s. */
#define REC_DEFAULT_STALE_AFTER_NS (90 * (int64_t)1000000000)
/* The most GPUs and EFAs one report may carry. */
#define REC_MAX_DEVICES 256

struct rec_options {
	unsigned learn_quorum;          /* 0: REC_DEFAULT_LEARN_QUORUM */
	int64_t stale_after_ns;         /* 0: REC_DEFAULT_STALE_AFTER_NS */
};

struct rec_fleet;

/* opts may be NULL (defaults). NULL on out of memory. */
struct rec_fleet *rec_fleet_new(const struct rec_options *opts);
void rec_fleet_free(struct rec_fleet *f);

/* ---- Reports ---- */

/* One dratopo.v1.Device as decoded. The model is not taken: the
 * coordinator names models from its own hwdb PCI tables. */
struct rec_device {
	const char *bdf;                /* "0000:53:00.0" */
	enum topo_kind kind;
	uint32_t vendor, device;        /* at most 0xffff */
	uint32_t subsystem_vendor, subsystem_device;   /* 0 0: unknown */
	const char *pcie_root;          /* "pci0000:44"; NULL or "": unknown */
	int numa_node;                  /* -1: unknown */
	const char *link_speed;         /* NULL or "": unknown */
	uint32_t link_width;            /* 0: unknown */
	const char *rdma_device;        /* EFAs: "rdmap79s0"; NULL or "": none */
	bool fell_off_bus;
};

struct rec_report {
	const char *node_name;
	const char *instance_type;
	const struct rec_device *devices;
	size_t n_devices;
	/* Host facts a learned entry needs (vcpu, memoryMiB); 0: unknown,
	 * and then the type cannot be learned from this node. */
	int cpus;
	int64_t memory_mib;
	const char *agent_version;      /* may be NULL */
	const char *boot_id;            /* one agent run; may be NULL */
	uint64_t sequence;              /* increases within one boot_id */
	int64_t probed_ns;              /* the agent's clock, Unix ns */
	int64_t received_ns;            /* the coordinator's clock when it came */
};

/* A node's record: what the daemon stores and the queries show. */
struct rec_node {
	char *name, *instance_type;
	enum rec_verdict verdict;
	struct dt_diags differences;    /* verify's lines; empty unless drift */
	char *shape_key;                /* topo_shape_key() of its devices */
	size_t gpus, efas;              /* live ones (not fallen off the bus) */
	char *agent_version, *boot_id;  /* "" when not reported */
	uint64_t sequence;
	int64_t probed_ns, received_ns;
	/* As of the time asked (queries) or of the report (outcomes). */
	bool plannable;
	char *why;                      /* why not plannable; "" when it is */
	/* Its type's nodes disagree on the shape: the node is on one side of
	 * the conflict rec_fleet_conflicts lists. */
	bool conflicted;
	/* It was in drift at some time (kept in its record, so that a
	 * restarted coordinator still knows), and matches (or is learned)
	 * again: the remedies of that drift are to be lifted. */
	bool drifted;
	bool recovered;
};
void rec_node_free(struct rec_node *n);

/* A learned entry: the type's hwdb entry, learned from the quorum. */
struct rec_learned {
	char *type;
	char *shape_key;
	char *source;                   /* hwdb source format: a whole extra file */
	char **nodes;                   /* the quorum, in name order */
	size_t n_nodes;
	int64_t learned_ns;             /* received_ns of the report that made it */
};
void rec_learned_free(struct rec_learned *l);

/* Nodes of one type hwdb lacks that disagree: each shape and its nodes.
 * n_shapes 0: the conflict is resolved (the daemon deletes its record). */
struct rec_conflict_shape {
	char *shape_key;
	char **nodes;                   /* in name order */
	size_t n_nodes;
};
struct rec_conflict {
	char *type;
	struct rec_conflict_shape *shapes;      /* most nodes first, then by key */
	size_t n_shapes;
};
void rec_conflict_free(struct rec_conflict *c);

/* Besides the reporting node's record, what a change made the daemon
 * persist in the same write. */
struct rec_changes {
	struct rec_node *nodes;         /* other nodes whose verdict changed */
	size_t n_nodes, cap_nodes;
	struct rec_learned *learned;    /* entries learned */
	size_t n_learned, cap_learned;
	struct rec_conflict *conflicts; /* conflicts that appeared, changed or ended */
	size_t n_conflicts, cap_conflicts;
};
void rec_changes_free(struct rec_changes *c);

struct rec_outcome {
	struct rec_node node;           /* the reporting node, as it now stands */
	/* A sequence not newer than the last one of the same boot id: nothing
	 * changed, node is the stored record, nothing to persist. */
	bool replay;
	/* The verdict, differences or shape changed (false for a heartbeat:
	 * same devices as last time; the record's sequence and times still
	 * moved, so the daemon writes it anyway). */
	bool changed;
	/* Nothing but the sequence, boot id, agent version and times moved
	 * (same type, devices and host facts as the last report): the daemon
	 * may store just those over the record it has. */
	bool heartbeat;
	struct rec_changes also;
	struct dt_diags warnings;       /* for the log: a type that could not be learned */
};
void rec_outcome_free(struct rec_outcome *o);

/* Reconcile one report. 0 and *out filled; -EINVAL (err names the node and
 * the field) for a report that cannot be taken, which changes nothing;
 * -EBUSY during a restore; -ENOMEM. */
int rec_report(struct rec_fleet *f, const struct rec_report *r, struct rec_outcome *out,
	       struct dt_err *err);

/* ---- Forgetting nodes that left ---- */

/* Forget node name: it left the fleet (its Node was deleted, it was
 * silent past --forget-after, or `dratopo nodes --forget`). Its type stays
 * known (a learned entry stays learned) but leaves the summary when it has
 * no node left. *out gets what the daemon writes with the node's deletion
 * in one transaction: its type's conflict as it now stands (changed, or
 * n_shapes 0: ended). -ENOENT: no such node; -EBUSY during a restore. A
 * type whose conflict ends this way is learned at its next changed report
 * or restart, not here (learning needs a report to learn from). */
int rec_fleet_forget(struct rec_fleet *f, const char *name, struct rec_changes *out,
		     struct dt_err *err);
/* The names of the nodes whose last report is older than silent_ns at now
 * (*names: free each and the array). */
int rec_fleet_silent(struct rec_fleet *f, int64_t now, int64_t silent_ns, char ***names,
		     size_t *n, struct dt_err *err);

/* ---- Queries ---- */

/* The effective hwdb entry of a type: hwdb's (built-in or extra) when it
 * is complete; else the learned one (no price) when the fleet learned it;
 * else hwdb's incomplete entry, or NULL. *learned (may be NULL) says
 * whether it is the learned one. */
const struct hwdb_type *rec_fleet_hwdb_lookup(struct rec_fleet *f, const char *type,
					      bool *learned);
/* Every learned entry of the fleet into cat (hwdb_catalog_add_learned:
 * copied, taken under the fleet's lock, skipped where cat already holds
 * the name): what a plan over the fleet may place pods and launch nodes
 * with. 0 or -ENOMEM. */
struct hwdb_catalog;
int rec_fleet_add_learned(struct rec_fleet *f, struct hwdb_catalog *cat, struct dt_err *err);
/* The learned entry of a type: 0, or -ENOENT. */
int rec_fleet_learned(struct rec_fleet *f, const char *type, struct rec_learned *out,
		      struct dt_err *err);

/* Whether a node may be planned on at time now: 1 yes, 0 no (why says
 * why: "drift: ...", "unknown: ...", "conflict: ...", "stale: last report
 * 95s ago (stale after 90s)", joined by "; "), -ENOENT for no such node.
 * why may be NULL. */
int rec_node_plannable(struct rec_fleet *f, const char *name, int64_t now,
		       struct strbuf *why, struct dt_err *err);

/* One node's record as of now; -ENOENT when there is none. */
int rec_fleet_node(struct rec_fleet *f, const char *name, int64_t now, struct rec_node *out,
		   struct dt_err *err);

struct rec_filter {
	const char *instance_type;      /* NULL: any */
	int verdict;                    /* -1: any, else an enum rec_verdict */
	int plannable;                  /* -1: any, 0, 1 */
	const char *after;              /* names after this one only (paging); NULL */
	size_t limit;                   /* 0: no limit */
	bool count;                     /* fill the list's total and before */
};
#define REC_FILTER_ALL { NULL, -1, -1, NULL, 0 }

struct rec_node_list {
	struct rec_node *nodes;         /* in name order */
	size_t n;
	bool more;                      /* the limit cut the list */
	/* With rec_filter.count: the nodes the filter keeps in all, and how
	 * many of them come before `after` (a page's position). */
	size_t total, before;
};
void rec_node_list_free(struct rec_node_list *l);
int rec_fleet_nodes(struct rec_fleet *f, const struct rec_filter *flt, int64_t now,
		    struct rec_node_list *out, struct dt_err *err);

enum rec_entry_source {
	REC_SOURCE_NONE,                /* hwdb lacks it, nothing learned */
	REC_SOURCE_HWDB,                /* built-in */
	REC_SOURCE_EXTRA,               /* --hwdb-extra */
	REC_SOURCE_LEARNED,
};
const char *rec_entry_source_name(enum rec_entry_source s);  /* "none", "hwdb", ... */

struct rec_type_summary {
	char *type;
	enum rec_entry_source source;
	size_t nodes;
	size_t by_verdict[REC_N_VERDICTS];      /* indexed by enum rec_verdict */
	size_t stale, plannable;                /* as of now */
	char *common_shape;             /* the most common shape of its nodes */
	size_t common_count;
	size_t n_shapes;                /* distinct shapes among its nodes */
	bool conflicted;                /* hwdb lacks it and its nodes disagree */
	/* hwdb has it, yet at least learn_quorum nodes and more than half of
	 * them drift with one same shape (common_shape): likely hwdb's entry,
	 * not the nodes, is wrong. */
	bool hwdb_suspect;
};
struct rec_type_list {
	struct rec_type_summary *types; /* in name order */
	size_t n;
};
void rec_type_list_free(struct rec_type_list *l);
int rec_fleet_types(struct rec_fleet *f, int64_t now, struct rec_type_list *out,
		    struct dt_err *err);

struct rec_conflict_list {
	struct rec_conflict *conflicts; /* in type order */
	size_t n;
};
void rec_conflict_list_free(struct rec_conflict_list *l);
int rec_fleet_conflicts(struct rec_fleet *f, struct rec_conflict_list *out,
			struct dt_err *err);

/* The ResourceSlices the drivers would publish on a node, predicted from
 * its last report (topo's topo_slices: devices fallen off the bus left
 * out), built in set. out needs HWDB_MAX_SLICES room. -ENOENT: no node. */
int rec_node_slices(struct rec_fleet *f, const char *name, const struct hwdb_cc_mode *mode,
		    struct model_set *set, struct model_object **out, size_t *n_out,
		    struct dt_err *err);

/* A node's topology rebuilt from its last report (*out: topo_free)
 * and its type's effective entry (NULL for an unknown type; it lives as
 * long as the fleet). -ENOENT: no node. */
int rec_node_topology(struct rec_fleet *f, const char *name, struct topo *out,
		      const struct hwdb_type **entry, struct dt_err *err);

/* ---- Restore ----
 *
 * A restarted coordinator rebuilds its state from the store: every learned
 * entry first, then every node from its last report (the daemon decodes the
 * stored report blob into a rec_report) with the verdict and shape key its
 * record holds, then rec_fleet_restore_done(). Between the first restore
 * call and done, rec_report() answers -EBUSY and nothing is learned, so the
 * order of the records does not matter. Conflicts are not restored: they
 * follow from the nodes. */
int rec_fleet_restore_learned(struct rec_fleet *f, const struct rec_learned *l,
			      struct dt_err *err);
/* What a node's record says beside its last report. */
struct rec_stored {
	enum rec_verdict verdict;
	const char *shape_key;          /* NULL: none */
	bool drifted;                   /* rec_node.drifted when it was written */
};
int rec_fleet_restore_node(struct rec_fleet *f, const struct rec_report *last,
			   const struct rec_stored *stored, struct dt_err *err);
/* End the restore. Re-verification runs against today's hwdb, which may
 * differ from the one the records were written with: *changes (may be
 * NULL) gets every node whose verdict or shape is not what its record said,
 * any entry learned now (a lower quorum), and every conflict as it stands,
 * for the daemon to write back. */
int rec_fleet_restore_done(struct rec_fleet *f, struct rec_changes *changes,
			   struct dt_err *err);

#endif
