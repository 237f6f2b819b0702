/* fault_io.c - an LD_PRELOAD shim for the fault tests (faults.sh rofs): it
 * makes a running process's database turn read-only or fail with I/O
 * errors, which a tmpfs cannot do while the files are open.
 *
 *   FAULT_IO_PATH=/abs/dir/c.db      the database, as /proc/self/fd shows
 *                                    it (canonical); PATH-wal and
 *                                    PATH-journal are covered too
 *   FAULT_IO_TRIGGER=/abs/dir/fail   while this file exists, writes and
 *                                    syncs of those files fail
 *
 * The trigger file says how: its first word is the errno ("EROFS", "EIO"
 * or "ENOSPC"; EROFS when empty or unknown), and a second word "sync"
 * fails only fsync and fdatasync (the data reached the page cache, the
 * flush did not: what a failing disk does). Removing the file ends the
 * fault. write, pwrite, pwrite64, writev, ftruncate, ftruncate64, fsync
 * and fdatasync are wrapped (Debian's libsqlite3 writes with pwrite64,
 * truncates with ftruncate64 and syncs with fdatasync); everything else,
 * and every other file, passes through.
 *
 * Under ASan the sanitizer's runtime must come first in LD_PRELOAD
 * (LD_PRELOAD=libasan.so:fault_io.so): its interceptors then call these
 * wrappers as the "real" functions. Built only for the tests. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

/* The wrappers are the library's interface: declared here for
 * -Wmissing-prototypes, with glibc's own prototypes from its headers. */
ssize_t write(int fd, const void *buf, size_t n);
ssize_t pwrite(int fd, const void *buf, size_t n, off_t off);
ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off);
ssize_t writev(int fd, const struct iovec *iov, int n);
int ftruncate(int fd, off_t len);
int ftruncate64(int fd, off64_t len);
int fsync(int fd);
int fdatasync(int fd);

enum op { OP_WRITE, OP_SYNC };

/* The real function name resolves to, looked up once (a race between two
 * threads stores the same pointer). */
static void *real(void **slot, const char *name)
{
	void *p = __atomic_load_n(slot, __ATOMIC_ACQUIRE);

	if (!p) {
		p = dlsym(RTLD_NEXT, name);
		if (!p)
			abort();        /* a test tool: no libc function, no test */
		__atomic_store_n(slot, p, __ATOMIC_RELEASE);
	}
	return p;
}

#define REAL(type, name) ((type)real(&real_##name, #name))

static void *real_write, *real_pwrite, *real_pwrite64, *real_writev, *real_ftruncate,
	*real_ftruncate64, *real_fsync, *real_fdatasync;

/* The errno the trigger asks for, or 0 when op is not to fail now. */
static int trigger_errno(enum op op)
{
	const char *path = getenv("FAULT_IO_TRIGGER");
	char text[64] = "", word[16] = "", scope[16] = "";
	ssize_t n;
	int fd;

	if (!path || (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	text[n > 0 ? n : 0] = '\0';
	if (sscanf(text, "%15s %15s", word, scope) == 2 && !strcmp(scope, "sync") &&
	    op != OP_SYNC)
		return 0;
	if (!strcmp(word, "EIO"))
		return EIO;
	if (!strcmp(word, "ENOSPC"))
		return ENOSPC;
	return EROFS;
}

/* Whether fd is the database, its WAL or its rollback journal. */
static bool is_database(int fd)
{
	const char *db = getenv("FAULT_IO_PATH");
	char link[64], target[4096];
	size_t len;
	ssize_t n;

	if (!db || !*db)
		return false;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, target, sizeof(target) - 1);
	if (n <= 0)
		return false;
	target[n] = '\0';
	len = strlen(db);
	if (strncmp(target, db, len))
		return false;
	return !target[len] || !strcmp(target + len, "-wal") || !strcmp(target + len, "-journal");
}

/* 0 to go on with the real call; -1 with errno set to fail it. */
static int inject(int fd, enum op op)
{
	int saved = errno, code = trigger_errno(op);

	if (code && is_database(fd)) {
		errno = code;
		return -1;
	}
	errno = saved;
	return 0;
}

ssize_t write(int fd, const void *buf, size_t n)
{
	if (inject(fd, OP_WRITE))
		return -1;
	return REAL(ssize_t (*)(int, const void *, size_t), write)(fd, buf, n);
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	if (inject(fd, OP_WRITE))
		return -1;
	return REAL(ssize_t (*)(int, const void *, size_t, off_t), pwrite)(fd, buf, n, off);
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off)
{
	if (inject(fd, OP_WRITE))
		return -1;
	return REAL(ssize_t (*)(int, const void *, size_t, off64_t), pwrite64)(fd, buf, n, off);
}

ssize_t writev(int fd, const struct iovec *iov, int n)
{
	if (inject(fd, OP_WRITE))
		return -1;
	return REAL(ssize_t (*)(int, const struct iovec *, int), writev)(fd, iov, n);
}

int ftruncate(int fd, off_t len)
{
	if (inject(fd, OP_WRITE))
		return -1;
	return REAL(int (*)(int, off_t), ftruncate)(fd, len);
}

int ftruncate64(int fd, off64_t len)
{
	if (inject(fd, OP_WRITE))
		return -1;
	return REAL(int (*)(int, off64_t), ftruncate64)(fd, len);
}

int fsync(int fd)
{
	if (inject(fd, OP_SYNC))
		return -1;
	return REAL(int (*)(int), fsync)(fd);
}

int fdatasync(int fd)
{
	if (inject(fd, OP_SYNC))
		return -1;
	return REAL(int (*)(int), fdatasync)(fd);
}
