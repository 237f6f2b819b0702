/* store_sqlite_errors.c - SQLite's errors as errno codes and messages that
 * say what an operator can do (disk full, read-only, corrupt, locked), and
 * running a statement without results: what the backend (store_sqlite.c)
 * and its schema (store_schema.c) both report with. */
#include <errno.h>
#include <stdio.h>

#include "store_sqlite.h"

static int sys_errno_code(int sys, int fallback)
{
	switch (sys) {
	case ENOSPC:
	case EDQUOT:
		return -ENOSPC;
	case EROFS:
	case EACCES:
	case EPERM:
		return -EROFS;
	case ENOENT:
		return -ENOENT;
	case EISDIR:
		return -EISDIR;
	case ENOMEM:
		return -ENOMEM;
	default:
		return fallback;
	}
}

/* SQLite keeps the system errno of a failed open but not of a failed
 * commit: when the WAL's write or sync fails, sqlite3_system_errno stays 0
 * and the message is a bare "disk I/O error". errno just after the step is
 * what the failed call left, so run() passes it on as a hint; it is taken
 * only when it names the file system's state (read-only, full), which a
 * stale errno of some earlier lookup (ENOENT of a -journal) never does. */
static int step_hint(int sys)
{
	return sys == EROFS || sys == ENOSPC || sys == EDQUOT ? sys : 0;
}

static int errno_of(sqlite3 *db, int rc, int hint)
{
	int sys = db ? sqlite3_system_errno(db) : 0;

	if (!sys)
		sys = step_hint(hint);

	switch (rc & 0xff) {
	case SQLITE_FULL:
		return -ENOSPC;
	case SQLITE_READONLY:
		return -EROFS;
	case SQLITE_CANTOPEN:
		return sys_errno_code(sys, -EROFS);
	case SQLITE_IOERR:
		return sys_errno_code(sys, -EIO);
	case SQLITE_CORRUPT:
	case SQLITE_NOTADB:
		return -EBADMSG;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return -EBUSY;
	case SQLITE_NOMEM:
		return -ENOMEM;
	case SQLITE_TOOBIG:
		return -E2BIG;
	case SQLITE_CONSTRAINT:
	case SQLITE_MISMATCH:
	case SQLITE_RANGE:
		return -EINVAL;
	default:
		return -EIO;
	}
}

const char *store_sqlite_advice(int code)
{
	switch (code) {
	case -ENOSPC:
		return " (disk full: free space; the database is intact)";
	case -EROFS:
		return " (the database file or its directory is not writable)";
	case -EBADMSG:
		return " (not a SQLite database, or corrupt; the file was left as it is)";
	case -EBUSY:
		return " (locked by another process)";
	case -ENOENT:
		return " (its directory does not exist)";
	case -EISDIR:
		return " (that is a directory)";
	default:
		return "";
	}
}

int store_sqlite_fail_hinted(sqlite3 *db, const char *path, int rc, int hint, const char *what,
		       struct dt_err *err)
{
	int code = errno_of(db, rc, hint);
	/* -EIO is also the code of everything unnamed: only an I/O error
	 * gets the hint about the disk. */
	const char *why = code == -EIO && (rc & 0xff) == SQLITE_IOERR
		? " (the disk or its file system failed: see the kernel log)" : store_sqlite_advice(code);

	return dt_err_set(err, code, "%s: %s: %s%s", path, what,
			  db ? sqlite3_errmsg(db) : sqlite3_errstr(rc), why);
}

int store_sqlite_fail(sqlite3 *db, const char *path, int rc, const char *what,
		      struct dt_err *err)
{
	return store_sqlite_fail_hinted(db, path, rc, 0, what, err);
}

int store_sqlite_exec(sqlite3 *db, const char *path, const char *sql, const char *what,
		      struct dt_err *err)
{
	int rc = sqlite3_exec(db, sql, NULL, NULL, NULL);

	return rc == SQLITE_OK ? 0 : store_sqlite_fail(db, path, rc, what, err);
}
