/* store.h - the coordinator's durable state, behind a backend-neutral
 * interface: node records (with each node's last report), learned entries
 * and conflicts.
 *
 *   struct store *s;
 *   if (store_open(opt_db, NULL, &s, &err))          // "sqlite:PATH", PATH, "memory:"
 *           return dt_err_prefix(&err, "--db: ");
 *   struct store_batch b = { .node = &rec, .learned = learned_or_NULL };
 *   rc = store_commit(s, &b, 1, &err);               // durable when it returns 0
 *
 * Every write goes through store_commit: one call is one transaction and
 * one durable write, however many batches it carries (a server may commit
 * the reports of several concurrent calls at once and acknowledge them all
 * after it returns). When store_commit returns 0 the data survives a
 * process kill and a power loss; when it fails nothing of the call is
 * stored, except that after a failed sync (the data written, its flush
 * failed) a later open may find it: a refused commit may come back after
 * a restart, an acknowledged one is never lost.
 *
 * Errors are negative errno codes with a message in err:
 *   -ENOSPC  the disk (or quota) is full: retry once space is freed
 *   -EROFS   the database or its directory is read-only
 *   -EBADMSG the file is not a database or is corrupt (it is left untouched)
 *   -ENOTSUP the database was written by a newer schema than this build knows
 *   -EBUSY   another process holds the database locked past the busy timeout
 *   -ENOENT  (get) no such record, or the database's directory does not exist
 *   -EINVAL  bad argument (a record without its key, an unknown URI scheme)
 *   -EIO, -ENOMEM  anything else
 *
 * A store handle may be used from several threads: calls are serialized.
 * List callbacks run with the store locked and must not call the store. */
#ifndef DT_STORE_H
#define DT_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

struct store;   /* opaque: a backend and its state */

/* One node, as the reconciler last saw it. All strings are owned by the
 * record (free with store_node_done); NULL strings are stored as "". */
struct store_node {
	char *name;                 /* primary key */
	char *instance_type;
	char *verdict;              /* match, drift, unknown, learned */
	char **differences;         /* drift details, as the verifier words them */
	size_t n_differences;
	char *agent_version;
	char *boot_id;
	uint64_t last_seq;          /* the report's sequence number */
	int64_t first_seen_ns;      /* unix ns; kept from the first put (see docs) */
	int64_t last_report_ns;     /* unix ns */
	uint8_t *report;            /* the encoded TopologyReport; never parsed here */
	size_t report_len;
	uint32_t gpus;
	uint32_t efas;
	char *shape_key;            /* canonical shape (the reconciler's), for quorums */
	bool drifted;               /* was in drift at some time (its remedies to lift) */
};

/* The learned hwdb entry of an instance type hwdb lacks. */
struct store_learned {
	char *instance_type;        /* primary key */
	char *shape_key;
	char *hwdb_text;            /* the entry in hwdb's source format */
	char **nodes;               /* the nodes that formed the quorum */
	size_t n_nodes;
	int64_t learned_ns;
};

/* One node's side of a conflict: nodes of one unknown type that disagree.
 * The key is (instance_type, shape_key, node). */
struct store_conflict {
	char *instance_type;
	char *shape_key;
	char *node;
	int64_t first_seen_ns;      /* kept from the first put of this key */
};

/* The effects of one report, applied in this order: clear_conflicts_type,
 * delete_node, node, touch, learned, conflicts. Everything is borrowed. */
struct store_batch {
	const char *clear_conflicts_type;       /* drop every conflict row of this type */
	const char *delete_node;                /* drop this node record */
	const struct store_node *node;          /* upsert */
	/* A heartbeat: of the existing record touch->name, update only
	 * agent_version, boot_id, last_seq and last_report_ns (the report blob
	 * and everything else stay). -ENOENT, and nothing of the commit is
	 * stored, when there is no such record. */
	const struct store_node *touch;
	const struct store_learned *learned;    /* upsert */
	const struct store_conflict *conflicts; /* upsert each */
	size_t n_conflicts;
};

struct store_opts {
	int busy_timeout_ms;        /* wait for another process's lock; 0: 5000 */
};

/* Open (creating and migrating as needed) the store named by uri:
 * "sqlite:PATH" or a plain PATH (SQLite), "memory:" (SQLite in memory, not
 * durable: tests and dry runs). A corrupt file, a newer schema or a
 * read-only database are refused; the file is never rewritten then.
 * opts may be NULL. */
int store_open(const char *uri, const struct store_opts *opts, struct store **out,
	       struct dt_err *err);
void store_close(struct store *s);      /* NULL is fine */

/* The backend's name ("sqlite") and what it opened (the path). */
const char *store_backend(const struct store *s);
const char *store_location(const struct store *s);

/* All n batches in one transaction; 0 once durable. */
int store_commit(struct store *s, const struct store_batch *batches, size_t n,
		 struct dt_err *err);

/* Shorthands for a one-batch commit. */
int store_put_node(struct store *s, const struct store_node *node, struct dt_err *err);
int store_delete_node(struct store *s, const char *name, struct dt_err *err);
int store_put_learned(struct store *s, const struct store_learned *l, struct dt_err *err);
int store_put_conflict(struct store *s, const struct store_conflict *c, struct dt_err *err);
int store_clear_conflicts(struct store *s, const char *instance_type, struct dt_err *err);

/* Fill *out (the caller owns it: store_node_done); -ENOENT when absent. */
int store_get_node(struct store *s, const char *name, struct store_node *out,
		   struct dt_err *err);

/* Iteration, in key order. The record belongs to the store and is freed
 * when the callback returns, unless the callback takes it: copy the struct
 * and zero *rec. A non-zero return stops the iteration and is returned. */
typedef int (*store_node_fn)(struct store_node *rec, void *arg);
typedef int (*store_learned_fn)(struct store_learned *rec, void *arg);
typedef int (*store_conflict_fn)(struct store_conflict *rec, void *arg);

int store_list_nodes(struct store *s, store_node_fn fn, void *arg, struct dt_err *err);
int store_list_learned(struct store *s, store_learned_fn fn, void *arg, struct dt_err *err);
int store_list_conflicts(struct store *s, store_conflict_fn fn, void *arg,
			 struct dt_err *err);

/* For /readyz: 0 when the store is open and a write would succeed now
 * (after a failed write it probes with a small durable write). */
int store_ready(struct store *s, struct dt_err *err);

/* Free a record's contents and zero it (NULL is fine). */
void store_node_done(struct store_node *n);
void store_learned_done(struct store_learned *l);
void store_conflict_done(struct store_conflict *c);

#endif
