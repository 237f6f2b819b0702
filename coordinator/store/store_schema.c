/* store_schema.c - the SQLite schema, as an ordered list of migrations.
 *
 * The version is PRAGMA user_version (0: an empty file); application_id
 * marks the file as dratopo's. Migration i brings version i-1 to i; all
 * pending ones run in one transaction with the version bump, so a crash
 * half-way leaves the old version intact. Steps are only ever appended:
 * a released step is never edited. */
#include <stdio.h>
#include <string.h>

#include "store_sqlite.h"

#define STORE_APPLICATION_ID 0x64745354   /* "dtST" */

static const char *const migrations[STORE_SCHEMA_LATEST] = {
	/* 1: nodes with their last report, learned entries, conflicts, and a
	 * key/value table for the store's own bookkeeping. Lists of strings
	 * are BLOBs of NUL-terminated strings (store_sqlite.c). */
	"CREATE TABLE meta ("
	"  key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;"
	"CREATE TABLE nodes ("
	"  name TEXT PRIMARY KEY NOT NULL,"
	"  instance_type TEXT NOT NULL,"
	"  verdict TEXT NOT NULL,"
	"  differences BLOB NOT NULL,"
	"  agent_version TEXT NOT NULL,"
	"  boot_id TEXT NOT NULL,"
	"  last_seq INTEGER NOT NULL,"
	"  first_seen_ns INTEGER NOT NULL,"
	"  last_report_ns INTEGER NOT NULL,"
	"  report BLOB NOT NULL,"
	"  gpus INTEGER NOT NULL,"
	"  efas INTEGER NOT NULL);"
	"CREATE TABLE learned ("
	"  instance_type TEXT PRIMARY KEY NOT NULL,"
	"  shape_key TEXT NOT NULL,"
	"  hwdb_text TEXT NOT NULL,"
	"  nodes BLOB NOT NULL,"
	"  learned_ns INTEGER NOT NULL);"
	"CREATE TABLE conflicts ("
	"  instance_type TEXT NOT NULL,"
	"  shape_key TEXT NOT NULL,"
	"  node TEXT NOT NULL,"
	"  first_seen_ns INTEGER NOT NULL,"
	"  PRIMARY KEY (instance_type, shape_key, node)) WITHOUT ROWID;",

	/* 2: each node's shape key, so that a restarted reconciler rebuilds
	 * its quorums from the node records alone. */
	"ALTER TABLE nodes ADD COLUMN shape_key TEXT NOT NULL DEFAULT '';",
	/* 3: what a heartbeat changes moves to a table of its own. SQLite
	 * rewrites a whole row on UPDATE, so a heartbeat that set four
	 * columns of `nodes` wrote the node's ~3 KB report blob to the WAL
	 * again; `seen` rows are a few dozen bytes, many to a page. */
	"CREATE TABLE seen ("
	"  name TEXT PRIMARY KEY NOT NULL,"
	"  agent_version TEXT NOT NULL,"
	"  boot_id TEXT NOT NULL,"
	"  last_seq INTEGER NOT NULL,"
	"  last_report_ns INTEGER NOT NULL) WITHOUT ROWID;"
	"INSERT INTO seen SELECT name, agent_version, boot_id, last_seq, last_report_ns FROM nodes;"
	"ALTER TABLE nodes DROP COLUMN agent_version;"
	"ALTER TABLE nodes DROP COLUMN boot_id;"
	"ALTER TABLE nodes DROP COLUMN last_seq;"
	"ALTER TABLE nodes DROP COLUMN last_report_ns;"
	/* and whether the node was ever in drift, so that a restarted
	 * coordinator still lifts the remedies of one that recovered. */
	"ALTER TABLE nodes ADD COLUMN drifted INTEGER NOT NULL DEFAULT 0;",
};

static int pragma_int(sqlite3 *db, const char *path, const char *sql, int *value,
		      struct dt_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc;

	rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*value = sqlite3_column_int(st, 0);
		rc = SQLITE_OK;
	}
	if (rc != SQLITE_OK)
		rc = store_sqlite_fail(db, path, rc, sql, err);
	sqlite3_finalize(st);
	return rc;
}

int store_schema_version(sqlite3 *db, const char *path, int *version, struct dt_err *err)
{
	return pragma_int(db, path, "PRAGMA user_version", version, err);
}

/* A file at version 0 must be empty; one at a later version must carry
 * our application id. Anything else is some other program's database. */
static int check_ours(sqlite3 *db, const char *path, int version, struct dt_err *err)
{
	int n = 0;
	int rc;

	if (version == 0) {
		rc = pragma_int(db, path, "SELECT count(*) FROM sqlite_master", &n, err);
		if (rc)
			return rc;
		if (n)
			return dt_err_set(err, -EINVAL,
					  "%s: has %d schema objects but no dratopo schema version: not a dratopo database",
					  path, n);
		return 0;
	}
	rc = pragma_int(db, path, "PRAGMA application_id", &n, err);
	if (rc)
		return rc;
	if (n != STORE_APPLICATION_ID)
		return dt_err_set(err, -EINVAL,
				  "%s: application id 0x%08x is not dratopo's: not a dratopo database",
				  path, (unsigned)n);
	return 0;
}

static int apply_steps(sqlite3 *db, const char *path, int from, int target,
		       struct dt_err *err)
{
	char sql[128];
	int rc;

	for (int v = from + 1; v <= target; v++) {
		char what[64];

		snprintf(what, sizeof(what), "schema migration to version %d", v);
		rc = store_sqlite_exec(db, path, migrations[v - 1], what, err);
		if (rc)
			return rc;
	}
	snprintf(sql, sizeof(sql), "PRAGMA application_id = %d; PRAGMA user_version = %d;",
		 STORE_APPLICATION_ID, target);
	return store_sqlite_exec(db, path, sql, "schema version update", err);
}

/* The version, refused when newer than ours or not our database. */
static int checked_version(sqlite3 *db, const char *path, int *version, struct dt_err *err)
{
	int rc = store_schema_version(db, path, version, err);

	if (rc)
		return rc;
	if (*version > STORE_SCHEMA_LATEST)
		return dt_err_set(err, -ENOTSUP,
				  "%s: schema version %d is newer than this dratopo knows (%d); refusing to open it (upgrade dratopo, or restore a backup)",
				  path, *version, STORE_SCHEMA_LATEST);
	return check_ours(db, path, *version, err);
}

int store_schema_check(sqlite3 *db, const char *path, struct dt_err *err)
{
	int version = 0;

	return checked_version(db, path, &version, err);
}

int store_schema_migrate(sqlite3 *db, const char *path, int target, struct dt_err *err)
{
	int version = 0;
	int rc;

	if (target < 0 || target > STORE_SCHEMA_LATEST)
		return dt_err_set(err, -EINVAL, "%s: no schema version %d", path, target);
	rc = store_sqlite_exec(db, path, "BEGIN IMMEDIATE", "schema check", err);
	if (rc)
		return rc;
	/* Check again inside the write transaction: another process may have
	 * migrated since. */
	rc = checked_version(db, path, &version, err);
	if (!rc && version < target)
		rc = apply_steps(db, path, version, target, err);
	if (!rc)
		rc = store_sqlite_exec(db, path, "COMMIT", "schema commit", err);
	if (!sqlite3_get_autocommit(db))
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}
