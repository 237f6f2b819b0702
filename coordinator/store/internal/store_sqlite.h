/* store_sqlite.h - internals shared by the SQLite backend's files
 * (store_sqlite.c: connection, statements, records; store_schema.c: the
 * schema and its migrations; store_sqlite_errors.c: errors). Not for the
 * store's users. */
#ifndef DT_STORE_SQLITE_H
#define DT_STORE_SQLITE_H

#include <sqlite3.h>

#include "err.h"

/* The schema this build writes; a database with a higher user_version is
 * refused. */
#define STORE_SCHEMA_LATEST 3

/* Bring db (at path, for messages) to schema version target, all steps in
 * one transaction. Refuses a newer schema (-ENOTSUP) and a database that
 * is not ours (-EINVAL). Exposed so that tests can build old versions. */
int store_schema_migrate(sqlite3 *db, const char *path, int target, struct dt_err *err);

/* Without writing anything: refuse a newer schema (-ENOTSUP) or a file
 * that is not a dratopo database (-EINVAL). */
int store_schema_check(sqlite3 *db, const char *path, struct dt_err *err);

/* The database's schema version (PRAGMA user_version). */
int store_schema_version(sqlite3 *db, const char *path, int *version, struct dt_err *err);

/* ---- Errors (store_sqlite_errors.c) ---- */

/* Turn SQLite result rc (after doing `what`) into a negative errno and a
 * message naming path: -ENOSPC, -EROFS, -EBADMSG, -EBUSY, ... */
int store_sqlite_fail(sqlite3 *db, const char *path, int rc, const char *what,
		      struct dt_err *err);

/* Run SQL text without results (no bound values); errors as above. */
int store_sqlite_exec(sqlite3 *db, const char *path, const char *sql, const char *what,
		      struct dt_err *err);
/* store_sqlite_fail with the errno a failed step left (hint: taken only
 * when it names the file system's state, read-only or full). */
int store_sqlite_fail_hinted(sqlite3 *db, const char *path, int rc, int hint, const char *what,
			     struct dt_err *err);
/* What an operator can do about code, " (disk full: ...)", or "". */
const char *store_sqlite_advice(int code);

#endif
