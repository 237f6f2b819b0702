/* store_sqlite.c - the SQLite backend: one connection in WAL mode with
 * synchronous=FULL (a commit returns once the WAL is fsynced), every
 * statement prepared once at open, one transaction per store_commit, and
 * SQLite's errors turned into errno codes that say what an operator can do
 * (store_sqlite_errors.c).
 *
 * Opening never writes to a file it has not checked: a read-only database
 * is refused, then PRAGMA quick_check runs before WAL mode or a migration
 * could touch the file. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "store_backend.h"
#include "store_sqlite.h"
#include "strbuf.h"

#define DEFAULT_BUSY_TIMEOUT_MS 5000
#define WAL_SIZE_LIMIT (64 * 1024 * 1024)   /* truncate the WAL back to this */

enum stmt {
	ST_BEGIN, ST_COMMIT, ST_ROLLBACK,
	ST_PUT_NODE, ST_PUT_SEEN, ST_TOUCH_NODE, ST_DELETE_NODE, ST_DELETE_SEEN,
	ST_GET_NODE, ST_LIST_NODES,
	ST_PUT_LEARNED, ST_LIST_LEARNED,
	ST_PUT_CONFLICT, ST_CLEAR_CONFLICTS, ST_LIST_CONFLICTS,
	ST_PROBE,
	ST__COUNT
};

/* A node record is its row of `nodes` (what changes with its devices) and
 * its row of `seen` (what every heartbeat changes; schema version 3). */
#define NODE_COLUMNS "name, instance_type, verdict, differences, first_seen_ns, report, " \
	"gpus, efas, shape_key, drifted"
#define SEEN_COLUMNS "name, agent_version, boot_id, last_seq, last_report_ns"
/* read_node's column order. A node without its `seen` row (which writes
 * never leave) would still be listed, as never seen. */
#define NODE_SELECT "SELECT n.name, n.instance_type, n.verdict, n.differences, " \
	"ifnull(s.agent_version, ''), ifnull(s.boot_id, ''), ifnull(s.last_seq, 0), " \
	"n.first_seen_ns, ifnull(s.last_report_ns, 0), n.report, n.gpus, n.efas, n.shape_key, " \
	"n.drifted " \
	"FROM nodes n LEFT JOIN seen s ON s.name = n.name"
#define LEARNED_COLUMNS "instance_type, shape_key, hwdb_text, nodes, learned_ns"
#define CONFLICT_COLUMNS "instance_type, shape_key, node, first_seen_ns"

static const char *const stmt_sql[ST__COUNT] = {
	[ST_BEGIN] = "BEGIN IMMEDIATE",
	[ST_COMMIT] = "COMMIT",
	[ST_ROLLBACK] = "ROLLBACK",
	/* first_seen_ns is the first put's: a re-registering node keeps it. */
	[ST_PUT_NODE] = "INSERT INTO nodes (" NODE_COLUMNS ") "
		"VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) "
		"ON CONFLICT (name) DO UPDATE SET instance_type = excluded.instance_type, "
		"verdict = excluded.verdict, differences = excluded.differences, "
		"report = excluded.report, gpus = excluded.gpus, efas = excluded.efas, "
		"shape_key = excluded.shape_key, drifted = excluded.drifted",
	[ST_PUT_SEEN] = "INSERT INTO seen (" SEEN_COLUMNS ") VALUES (?1, ?2, ?3, ?4, ?5) "
		"ON CONFLICT (name) DO UPDATE SET agent_version = excluded.agent_version, "
		"boot_id = excluded.boot_id, last_seq = excluded.last_seq, "
		"last_report_ns = excluded.last_report_ns",
	[ST_TOUCH_NODE] = "UPDATE seen SET agent_version = ?2, boot_id = ?3, last_seq = ?4, "
		"last_report_ns = ?5 WHERE name = ?1",
	[ST_DELETE_NODE] = "DELETE FROM nodes WHERE name = ?1",
	[ST_DELETE_SEEN] = "DELETE FROM seen WHERE name = ?1",
	[ST_GET_NODE] = NODE_SELECT " WHERE n.name = ?1",
	[ST_LIST_NODES] = NODE_SELECT " ORDER BY n.name",
	[ST_PUT_LEARNED] = "INSERT INTO learned (" LEARNED_COLUMNS ") VALUES (?1, ?2, ?3, ?4, ?5) "
		"ON CONFLICT (instance_type) DO UPDATE SET shape_key = excluded.shape_key, "
		"hwdb_text = excluded.hwdb_text, nodes = excluded.nodes, "
		"learned_ns = excluded.learned_ns",
	[ST_LIST_LEARNED] = "SELECT " LEARNED_COLUMNS " FROM learned ORDER BY instance_type",
	/* A conflict row keeps its first sighting. */
	[ST_PUT_CONFLICT] = "INSERT INTO conflicts (" CONFLICT_COLUMNS ") VALUES (?1, ?2, ?3, ?4) "
		"ON CONFLICT DO NOTHING",
	[ST_CLEAR_CONFLICTS] = "DELETE FROM conflicts WHERE instance_type = ?1",
	[ST_LIST_CONFLICTS] = "SELECT " CONFLICT_COLUMNS " FROM conflicts "
		"ORDER BY instance_type, shape_key, node",
	[ST_PROBE] = "INSERT INTO meta (key, value) VALUES ('ready_probe', ?1) "
		"ON CONFLICT (key) DO UPDATE SET value = excluded.value",
};

struct sq {
	sqlite3 *db;
	char *path;
	int lock_fd;            /* "<path>.lock", flock'ed; -1: none (memory) */
	sqlite3_stmt *st[ST__COUNT];
	int write_rc;           /* the last transaction's result: store_ready probes after a failure */
};

/* ---- binding and reading values --------------------------------------- */

static void bind_str(sqlite3_stmt *st, int i, const char *s)
{
	sqlite3_bind_text(st, i, s ? s : "", -1, SQLITE_STATIC);
}

/* A list of strings as one BLOB: each string with its NUL. */
static int encode_strv(char *const *v, size_t n, struct strbuf *sb)
{
	sb_reset(sb);
	for (size_t i = 0; i < n; i++) {
		const char *s = v[i] ? v[i] : "";

		sb_append(sb, s, strlen(s) + 1);
	}
	return sb_error(sb);
}

static int bind_strv(sqlite3_stmt *st, int i, char *const *v, size_t n, struct strbuf *sb)
{
	if (encode_strv(v, n, sb))
		return -ENOMEM;
	sqlite3_bind_blob(st, i, sb->len ? sb->buf : "", (int)sb->len, SQLITE_TRANSIENT);
	return 0;
}

static int col_str(sqlite3_stmt *st, int i, char **out)
{
	const unsigned char *s = sqlite3_column_text(st, i);

	*out = strdup(s ? (const char *)s : "");
	return *out ? 0 : -ENOMEM;
}

static int col_strv(sqlite3_stmt *st, int i, char ***out, size_t *n_out)
{
	const char *p = sqlite3_column_blob(st, i);
	size_t len = (size_t)sqlite3_column_bytes(st, i);
	size_t n = 0;
	char **v;

	for (size_t k = 0; k < len; k++)
		n += p[k] == '\0' || k + 1 == len;      /* a missing last NUL still ends a string */
	*out = NULL;
	*n_out = 0;
	if (n == 0)
		return 0;
	v = calloc(n, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t k = 0, at = 0; k < n; k++) {
		size_t end = at;

		while (end < len && p[end])
			end++;
		v[k] = strndup(p + at, end - at);
		if (!v[k]) {
			*out = v;
			*n_out = k;
			return -ENOMEM;
		}
		at = end + 1;
	}
	*out = v;
	*n_out = n;
	return 0;
}

static int col_blob(sqlite3_stmt *st, int i, uint8_t **out, size_t *len)
{
	const void *p = sqlite3_column_blob(st, i);
	size_t n = (size_t)sqlite3_column_bytes(st, i);

	*out = NULL;
	*len = 0;
	if (n == 0)
		return 0;
	*out = malloc(n);
	if (!*out)
		return -ENOMEM;
	memcpy(*out, p, n);
	*len = n;
	return 0;
}

static int read_node(sqlite3_stmt *st, struct store_node *n)
{
	int rc = 0;

	rc |= col_str(st, 0, &n->name);
	rc |= col_str(st, 1, &n->instance_type);
	rc |= col_str(st, 2, &n->verdict);
	rc |= col_strv(st, 3, &n->differences, &n->n_differences);
	rc |= col_str(st, 4, &n->agent_version);
	rc |= col_str(st, 5, &n->boot_id);
	n->last_seq = (uint64_t)sqlite3_column_int64(st, 6);
	n->first_seen_ns = sqlite3_column_int64(st, 7);
	n->last_report_ns = sqlite3_column_int64(st, 8);
	rc |= col_blob(st, 9, &n->report, &n->report_len);
	n->gpus = (uint32_t)sqlite3_column_int64(st, 10);
	n->efas = (uint32_t)sqlite3_column_int64(st, 11);
	rc |= col_str(st, 12, &n->shape_key);
	n->drifted = sqlite3_column_int(st, 13) != 0;
	return rc ? -ENOMEM : 0;
}

static int read_learned(sqlite3_stmt *st, struct store_learned *l)
{
	int rc = 0;

	rc |= col_str(st, 0, &l->instance_type);
	rc |= col_str(st, 1, &l->shape_key);
	rc |= col_str(st, 2, &l->hwdb_text);
	rc |= col_strv(st, 3, &l->nodes, &l->n_nodes);
	l->learned_ns = sqlite3_column_int64(st, 4);
	return rc ? -ENOMEM : 0;
}

static int read_conflict(sqlite3_stmt *st, struct store_conflict *c)
{
	int rc = 0;

	rc |= col_str(st, 0, &c->instance_type);
	rc |= col_str(st, 1, &c->shape_key);
	rc |= col_str(st, 2, &c->node);
	c->first_seen_ns = sqlite3_column_int64(st, 3);
	return rc ? -ENOMEM : 0;
}

/* ---- statements ------------------------------------------------------- */

/* Step a write statement to its end and reset it. */
static int run(struct sq *q, enum stmt which, const char *what, struct dt_err *err)
{
	sqlite3_stmt *st = q->st[which];
	int rc, sys;

	errno = 0;
	rc = sqlite3_step(st);
	sys = errno;
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		rc = store_sqlite_fail_hinted(q->db, q->path, rc, sys, what, err);
	else
		rc = 0;
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc;
}

/* The `seen` half of n into statement which (?1..?5, SEEN_COLUMNS). */
static int write_seen(struct sq *q, enum stmt which, const struct store_node *n,
		      const char *what, struct dt_err *err)
{
	sqlite3_stmt *st = q->st[which];

	bind_str(st, 1, n->name);
	bind_str(st, 2, n->agent_version);
	bind_str(st, 3, n->boot_id);
	sqlite3_bind_int64(st, 4, (sqlite3_int64)n->last_seq);
	sqlite3_bind_int64(st, 5, n->last_report_ns);
	return run(q, which, what, err);
}

static int put_node(struct sq *q, const struct store_node *n, struct strbuf *sb,
		    struct dt_err *err)
{
	sqlite3_stmt *st = q->st[ST_PUT_NODE];
	int rc;

	if (!n->name || !*n->name)
		return dt_err_set(err, -EINVAL, "%s: node record without a name", q->path);
	if (n->report_len > (size_t)INT32_MAX)
		return dt_err_set(err, -E2BIG, "%s: node %s: report of %zu bytes is too big",
				  q->path, n->name, n->report_len);
	bind_str(st, 1, n->name);
	bind_str(st, 2, n->instance_type);
	bind_str(st, 3, n->verdict);
	if (bind_strv(st, 4, n->differences, n->n_differences, sb))
		return dt_err_set(err, -ENOMEM, "%s: node %s: out of memory", q->path, n->name);
	sqlite3_bind_int64(st, 5, n->first_seen_ns);
	sqlite3_bind_blob(st, 6, n->report_len ? (const void *)n->report : "",
			  (int)n->report_len, SQLITE_STATIC);
	sqlite3_bind_int64(st, 7, n->gpus);
	sqlite3_bind_int64(st, 8, n->efas);
	bind_str(st, 9, n->shape_key);
	sqlite3_bind_int(st, 10, n->drifted);
	rc = run(q, ST_PUT_NODE, "put node", err);
	return rc ? rc : write_seen(q, ST_PUT_SEEN, n, "put node", err);
}

static int touch_node(struct sq *q, const struct store_node *n, struct dt_err *err)
{
	int rc;

	if (!n->name || !*n->name)
		return dt_err_set(err, -EINVAL, "%s: node record without a name", q->path);
	rc = write_seen(q, ST_TOUCH_NODE, n, "touch node", err);
	if (!rc && sqlite3_changes(q->db) != 1)
		rc = dt_err_set(err, -ENOENT, "%s: touch node %s: no such node", q->path, n->name);
	return rc;
}

static int put_learned(struct sq *q, const struct store_learned *l, struct strbuf *sb,
		       struct dt_err *err)
{
	sqlite3_stmt *st = q->st[ST_PUT_LEARNED];

	if (!l->instance_type || !*l->instance_type)
		return dt_err_set(err, -EINVAL, "%s: learned entry without an instance type",
				  q->path);
	bind_str(st, 1, l->instance_type);
	bind_str(st, 2, l->shape_key);
	bind_str(st, 3, l->hwdb_text);
	if (bind_strv(st, 4, l->nodes, l->n_nodes, sb))
		return dt_err_set(err, -ENOMEM, "%s: learned %s: out of memory", q->path,
				  l->instance_type);
	sqlite3_bind_int64(st, 5, l->learned_ns);
	return run(q, ST_PUT_LEARNED, "put learned entry", err);
}

static int put_conflict(struct sq *q, const struct store_conflict *c, struct dt_err *err)
{
	sqlite3_stmt *st = q->st[ST_PUT_CONFLICT];

	if (!c->instance_type || !*c->instance_type || !c->node || !*c->node)
		return dt_err_set(err, -EINVAL, "%s: conflict without an instance type or node",
				  q->path);
	bind_str(st, 1, c->instance_type);
	bind_str(st, 2, c->shape_key);
	bind_str(st, 3, c->node);
	sqlite3_bind_int64(st, 4, c->first_seen_ns);
	return run(q, ST_PUT_CONFLICT, "put conflict", err);
}

static int delete_by_key(struct sq *q, enum stmt which, const char *key, const char *what,
			 struct dt_err *err)
{
	bind_str(q->st[which], 1, key);
	return run(q, which, what, err);
}

static int apply_batch(struct sq *q, const struct store_batch *b, struct strbuf *sb,
		       struct dt_err *err)
{
	int rc = 0;

	if (b->clear_conflicts_type)
		rc = delete_by_key(q, ST_CLEAR_CONFLICTS, b->clear_conflicts_type,
				   "clear conflicts", err);
	if (!rc && b->delete_node)
		rc = delete_by_key(q, ST_DELETE_NODE, b->delete_node, "delete node", err);
	if (!rc && b->delete_node)
		rc = delete_by_key(q, ST_DELETE_SEEN, b->delete_node, "delete node", err);
	if (!rc && b->node)
		rc = put_node(q, b->node, sb, err);
	if (!rc && b->touch)
		rc = touch_node(q, b->touch, err);
	if (!rc && b->learned)
		rc = put_learned(q, b->learned, sb, err);
	for (size_t i = 0; !rc && i < b->n_conflicts; i++)
		rc = put_conflict(q, &b->conflicts[i], err);
	return rc;
}

/* ---- transactions ----------------------------------------------------- */

struct commit_ctx {
	const struct store_batch *batches;
	size_t n;
};

typedef int (*txn_body)(struct sq *q, const void *ctx, struct dt_err *err);

/* BEGIN IMMEDIATE, body, COMMIT; on any failure roll back (SQLite may
 * already have), so the database holds all of the body or none of it. */
static int transact(struct sq *q, txn_body body, const void *ctx, struct dt_err *err)
{
	int rc = run(q, ST_BEGIN, "begin", err);

	if (!rc)
		rc = body(q, ctx, err);
	if (!rc)
		rc = run(q, ST_COMMIT, "commit", err);
	if (rc && !sqlite3_get_autocommit(q->db))
		run(q, ST_ROLLBACK, "rollback", NULL);
	q->write_rc = rc;
	return rc;
}

static int commit_body(struct sq *q, const void *ctx, struct dt_err *err)
{
	const struct commit_ctx *c = ctx;
	struct strbuf sb = STRBUF_INIT;
	int rc = 0;

	for (size_t i = 0; !rc && i < c->n; i++)
		rc = apply_batch(q, &c->batches[i], &sb, err);
	sb_free(&sb);
	return rc;
}

static int probe_body(struct sq *q, const void *ctx, struct dt_err *err)
{
	struct timespec ts;
	char now[32];

	(void)ctx;
	clock_gettime(CLOCK_REALTIME, &ts);
	snprintf(now, sizeof(now), "%lld.%09ld", (long long)ts.tv_sec, ts.tv_nsec);
	sqlite3_bind_text(q->st[ST_PROBE], 1, now, -1, SQLITE_TRANSIENT);
	return run(q, ST_PROBE, "readiness probe write", err);
}

/* ---- operations ------------------------------------------------------- */

static int sq_commit(void *impl, const struct store_batch *b, size_t n, struct dt_err *err)
{
	struct commit_ctx c = { b, n };

	return transact(impl, commit_body, &c, err);
}

static int sq_get_node(void *impl, const char *name, struct store_node *out,
		       struct dt_err *err)
{
	struct sq *q = impl;
	sqlite3_stmt *st = q->st[ST_GET_NODE];
	int rc;

	bind_str(st, 1, name);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		rc = read_node(st, out);
		if (rc) {
			store_node_done(out);
			dt_err_set(err, rc, "%s: node %s: out of memory", q->path, name);
		}
	} else if (rc == SQLITE_DONE) {
		rc = dt_err_set(err, -ENOENT, "%s: no node %s", q->path, name);
	} else {
		rc = store_sqlite_fail(q->db, q->path, rc, "get node", err);
	}
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc;
}

/* One iteration loop for every record type: read a row into a record,
 * hand it to the callback, free what the callback left. */
struct lister {
	enum stmt which;
	const char *what;
	int (*read)(sqlite3_stmt *st, void *rec);
	int (*call)(void (*fn)(void), void *rec, void *arg);
	void (*done)(void *rec);
};

static int list_rows(struct sq *q, const struct lister *l, void (*fn)(void), void *arg,
		     struct dt_err *err)
{
	sqlite3_stmt *st = q->st[l->which];
	union {
		struct store_node n;
		struct store_learned le;
		struct store_conflict c;
	} rec;
	int step = SQLITE_DONE, rc = 0;

	while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW) {
		memset(&rec, 0, sizeof(rec));
		rc = l->read(st, &rec);
		if (rc)
			dt_err_set(err, rc, "%s: %s: out of memory", q->path, l->what);
		else
			rc = l->call(fn, &rec, arg);    /* the callback's own code, passed on */
		l->done(&rec);
	}
	if (!rc && step != SQLITE_DONE)
		rc = store_sqlite_fail(q->db, q->path, step, l->what, err);
	sqlite3_reset(st);
	return rc;
}

static int read_node_v(sqlite3_stmt *st, void *rec) { return read_node(st, rec); }
static int read_learned_v(sqlite3_stmt *st, void *rec) { return read_learned(st, rec); }
static int read_conflict_v(sqlite3_stmt *st, void *rec) { return read_conflict(st, rec); }
static void node_done_v(void *rec) { store_node_done(rec); }
static void learned_done_v(void *rec) { store_learned_done(rec); }
static void conflict_done_v(void *rec) { store_conflict_done(rec); }

static int call_node(void (*fn)(void), void *rec, void *arg)
{
	return ((store_node_fn)fn)(rec, arg);
}

static int call_learned(void (*fn)(void), void *rec, void *arg)
{
	return ((store_learned_fn)fn)(rec, arg);
}

static int call_conflict(void (*fn)(void), void *rec, void *arg)
{
	return ((store_conflict_fn)fn)(rec, arg);
}

static const struct lister node_lister = {
	ST_LIST_NODES, "list nodes",
	read_node_v, call_node, node_done_v,
};
static const struct lister learned_lister = {
	ST_LIST_LEARNED, "list learned entries",
	read_learned_v, call_learned, learned_done_v,
};
static const struct lister conflict_lister = {
	ST_LIST_CONFLICTS, "list conflicts",
	read_conflict_v, call_conflict, conflict_done_v,
};

static int sq_list_nodes(void *impl, store_node_fn fn, void *arg, struct dt_err *err)
{
	return list_rows(impl, &node_lister, (void (*)(void))fn, arg, err);
}

static int sq_list_learned(void *impl, store_learned_fn fn, void *arg, struct dt_err *err)
{
	return list_rows(impl, &learned_lister, (void (*)(void))fn, arg, err);
}

static int sq_list_conflicts(void *impl, store_conflict_fn fn, void *arg,
			     struct dt_err *err)
{
	return list_rows(impl, &conflict_lister, (void (*)(void))fn, arg, err);
}

static int sq_ready(void *impl, struct dt_err *err)
{
	struct sq *q = impl;
	int rc;

	if (sqlite3_db_readonly(q->db, "main") == 1)
		return dt_err_set(err, -EROFS, "%s: opened read-only", q->path);
	/* After a failed write, only a real durable write shows that the
	 * cause (a full disk) is gone. */
	if (q->write_rc)
		return transact(q, probe_body, NULL, err);
	/* Otherwise taking and dropping the write lock is enough. */
	rc = run(q, ST_BEGIN, "readiness check", err);
	if (!rc)
		run(q, ST_ROLLBACK, "rollback", NULL);
	return rc;
}

static void sq_close(void *impl)
{
	struct sq *q = impl;

	if (!q)
		return;
	for (int i = 0; i < ST__COUNT; i++)
		sqlite3_finalize(q->st[i]);
	sqlite3_close_v2(q->db);
	if (q->lock_fd >= 0)
		close(q->lock_fd);      /* after SQLite's: the lock ends last */
	free(q->path);
	free(q);
}

static const struct store_ops sqlite_ops = {
	.name = "sqlite",
	.commit = sq_commit,
	.get_node = sq_get_node,
	.list_nodes = sq_list_nodes,
	.list_learned = sq_list_learned,
	.list_conflicts = sq_list_conflicts,
	.ready = sq_ready,
	.close = sq_close,
};

/* ---- opening ---------------------------------------------------------- */

/* One process per database: an exclusive flock(2) on "<path>.lock", held
 * until the store closes (the kernel drops it when the process dies, so a
 * SIGKILLed coordinator never leaves it behind). SQLite's own locks only
 * serialise transactions: two coordinators on one file would both run,
 * each with a fleet in memory the other's writes never reach. The lock
 * file holds the owner's pid, for the message. A separate file, not the
 * database: closing any descriptor of the database would drop SQLite's
 * POSIX locks on it. */
static int lock_database(struct sq *q, struct dt_err *err)
{
	char lock[PATH_MAX], pid[32] = "";
	ssize_t n;
	int fd;

	q->lock_fd = -1;
	if (!strcmp(q->path, ":memory:") || !strncmp(q->path, "file::memory:", 13))
		return 0;
	if (snprintf(lock, sizeof(lock), "%s.lock", q->path) >= (int)sizeof(lock))
		return dt_err_set(err, -ENAMETOOLONG, "%s: path too long", q->path);
	fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		int e = errno;

		return dt_err_set(err, e == EROFS || e == EACCES ? -EROFS : -e,
				  "%s: cannot create the lock file %s: %s%s", q->path, lock,
				  strerror(e), e == EROFS || e == EACCES ? store_sqlite_advice(-EROFS) : "");
	}
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		int e = errno;

		n = pread(fd, pid, sizeof(pid) - 1, 0);
		pid[n > 0 ? n : 0] = '\0';
		pid[strcspn(pid, "\n")] = '\0';
		close(fd);
		if (e == EWOULDBLOCK)
			return dt_err_set(err, -EBUSY, "%s: the database is in use by another "
					  "process (pid %s, holding %s): one dratopo-coordinator "
					  "per database", q->path, *pid ? pid : "unknown", lock);
		return dt_err_set(err, -e, "%s: cannot lock %s: %s", q->path, lock, strerror(e));
	}
	n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) || pwrite(fd, pid, (size_t)n, 0) != n) {
		/* The lock holds without the pid; only the message loses it. */
	}
	q->lock_fd = fd;
	return 0;
}

/* PRAGMA quick_check: "ok", or the first problem found. */
static int check_integrity(struct sq *q, struct dt_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc;

	rc = sqlite3_prepare_v2(q->db, "PRAGMA quick_check(1)", -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		const char *res = (const char *)sqlite3_column_text(st, 0);

		if (res && strcmp(res, "ok") == 0)
			rc = 0;
		else
			rc = dt_err_set(err, -EBADMSG,
					"%s: integrity check failed: %s%s", q->path,
					res ? res : "(no result)", store_sqlite_advice(-EBADMSG));
	} else {
		rc = store_sqlite_fail(q->db, q->path, rc, "integrity check", err);
	}
	sqlite3_finalize(st);
	return rc;
}

/* WAL: readers never block the writer and a commit is one sequential
 * append. synchronous=FULL: fsync the WAL at every commit, so a commit
 * that returned survives a power loss (NORMAL would fsync only at
 * checkpoints). */
static int set_durability(struct sq *q, struct dt_err *err)
{
	sqlite3_stmt *st = NULL;
	char sql[64];
	int rc;

	rc = sqlite3_prepare_v2(q->db, "PRAGMA journal_mode = WAL", -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		const char *mode = (const char *)sqlite3_column_text(st, 0);

		rc = mode && (strcmp(mode, "wal") == 0 || strcmp(mode, "memory") == 0) ? 0
			: dt_err_set(err, -EIO, "%s: cannot use WAL mode (journal mode is %s)",
				     q->path, mode ? mode : "unknown");
	} else {
		rc = store_sqlite_fail(q->db, q->path, rc, "set WAL mode", err);
	}
	sqlite3_finalize(st);
	if (rc)
		return rc;
	snprintf(sql, sizeof(sql), "PRAGMA synchronous = FULL; PRAGMA journal_size_limit = %d",
		 WAL_SIZE_LIMIT);
	return store_sqlite_exec(q->db, q->path, sql, "set synchronous mode", err);
}

static int prepare_all(struct sq *q, struct dt_err *err)
{
	for (int i = 0; i < ST__COUNT; i++) {
		int rc = sqlite3_prepare_v3(q->db, stmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT,
					    &q->st[i], NULL);

		if (rc != SQLITE_OK)
			return store_sqlite_fail(q->db, q->path, rc, "prepare statement", err);
	}
	return 0;
}

int store_sqlite_open(const char *location, const struct store_opts *opts,
		      const struct store_ops **ops, void **impl, struct dt_err *err)
{
	int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
	struct sq *q;
	int rc;

	q = calloc(1, sizeof(*q));
	if (!q || !(q->path = strdup(location))) {
		free(q);
		return dt_err_set(err, -ENOMEM, "%s: out of memory", location);
	}
	if ((rc = lock_database(q, err))) {
		free(q->path);
		free(q);
		return rc;
	}
	rc = sqlite3_open_v2(location, &q->db, flags, NULL);
	if (rc != SQLITE_OK) {
		rc = store_sqlite_fail(q->db, q->path, rc, "open", err);
		goto fail;
	}
	sqlite3_extended_result_codes(q->db, 1);
	sqlite3_busy_timeout(q->db, opts->busy_timeout_ms > 0 ? opts->busy_timeout_ms
							      : DEFAULT_BUSY_TIMEOUT_MS);
	/* SQLite falls back to read-only silently; a store that cannot
	 * acknowledge a report is no store. */
	if (sqlite3_db_readonly(q->db, "main") == 1) {
		rc = dt_err_set(err, -EROFS, "%s: open: the database is read-only%s", q->path,
				store_sqlite_advice(-EROFS));
		goto fail;
	}
	/* Read-only checks first: nothing is written to a file that is
	 * corrupt, newer or not ours. */
	rc = check_integrity(q, err);
	if (!rc)
		rc = store_schema_check(q->db, q->path, err);
	if (!rc)
		rc = set_durability(q, err);
	if (!rc)
		rc = store_schema_migrate(q->db, q->path, STORE_SCHEMA_LATEST, err);
	if (!rc)
		rc = prepare_all(q, err);
	if (rc)
		goto fail;
	*ops = &sqlite_ops;
	*impl = q;
	return 0;
fail:
	sq_close(q);
	return rc;
}
