/* sysfs_probe.c - bounded, non-blocking reads of sysfs attributes, PCI
 * ids, and the Kubernetes pcieRoot rule. See sysfs_probe.h. */
#include "sysfs_probe.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hex.h"

/* ---- Attribute files ---- */

int probe_check_file(const char *path)
{
	return probe_check_file_at(AT_FDCWD, path);
}

int probe_check_file_at(int dirfd, const char *path)
{
	struct stat st;

	if (fstatat(dirfd, path, &st, 0) != 0)
		return -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	return 0;
}

int probe_read_attr(const char *path, char *buf, size_t len, struct dt_err *err)
{
	return probe_read_attr_at(AT_FDCWD, path, path, buf, len, err);
}

int probe_read_attr_at(int dirfd, const char *file, const char *path, char *buf, size_t len,
		       struct dt_err *err)
{
	char tmp[PROBE_ATTR_MAX + 1];
	struct stat st;
	ssize_t n;
	size_t got = 0;
	int fd, rc = 0;

	if (len == 0)
		return dt_err_set(err, -EINVAL, "%s: no room for the value", path);
	buf[0] = '\0';
	/* O_NONBLOCK: a FIFO planted where a file should be must not hang us;
	 * it is refused below anyway. */
	fd = openat(dirfd, file, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		rc = -errno;
		return dt_err_set(err, rc, "%s: %s", path, strerror(-rc));
	}
	if (fstat(fd, &st) != 0) {
		rc = -errno;
		dt_err_set(err, rc, "%s: %s", path, strerror(-rc));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
		dt_err_set(err, rc, "%s: not a regular file", path);
		goto out;
	}
	/* sysfs reports size 4096 for every attribute, so read until EOF,
	 * bounded by the buffer. */
	while (got < sizeof(tmp)) {
		n = read(fd, tmp + got, sizeof(tmp) - got);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			dt_err_set(err, rc, "%s: %s", path, strerror(-rc));
			goto out;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	if (got > PROBE_ATTR_MAX) {
		rc = dt_err_set(err, -EFBIG, "%s: value longer than %d bytes", path,
				PROBE_ATTR_MAX);
		goto out;
	}
	while (got > 0 && isspace((unsigned char)tmp[got - 1]))
		got--;
	if (got == 0) {
		rc = dt_err_set(err, -ENODATA, "%s: empty", path);
		goto out;
	}
	if (got >= len) {
		rc = dt_err_set(err, -EFBIG, "%s: value longer than %zu bytes", path, len - 1);
		goto out;
	}
	if (memchr(tmp, '\0', got)) {
		rc = dt_err_set(err, -EINVAL, "%s: value holds a NUL byte", path);
		goto out;
	}
	memcpy(buf, tmp, got);
	buf[got] = '\0';
out:
	close(fd);
	return rc;
}

int probe_parse_hex(const char *s, uint32_t max, uint32_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (!s || s[0] != '0' || (s[1] != 'x' && s[1] != 'X') || !s[2])
		return -EINVAL;
	for (i = 2; s[i]; i++) {
		int d = hex_value(s[i]);

		if (d < 0 || i > 10)
			return -EINVAL;
		v = v << 4 | (uint64_t)d;
	}
	if (v > max)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

int probe_parse_int(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	if (!s || !*s || isspace((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

/* ---- pcieRoot ---- */

/* Clean a relative path lexically, like Go's path.Clean, in place: drop
 * empty and "." components, let ".." eat the previous one. A ".." that
 * would climb above the start is an error: the target left sysfs. */
static int clean_path(char *p)
{
	char *comp[PROBE_PATH_MAX / 2];
	size_t n = 0, len;
	char *save = NULL, *tok;
	char out[PROBE_PATH_MAX];

	for (tok = strtok_r(p, "/", &save); tok; tok = strtok_r(NULL, "/", &save)) {
		if (strcmp(tok, ".") == 0)
			continue;
		if (strcmp(tok, "..") == 0) {
			if (n == 0)
				return -EINVAL;
			n--;
			continue;
		}
		comp[n++] = tok;
	}
	out[0] = '\0';
	len = 0;
	for (size_t i = 0; i < n; i++) {
		size_t cl = strlen(comp[i]);

		if (len + cl + 2 > sizeof(out))
			return -ENAMETOOLONG;
		if (i)
			out[len++] = '/';
		memcpy(out + len, comp[i], cl);
		len += cl;
		out[len] = '\0';
	}
	memcpy(p, out, len + 1);
	return 0;
}

int probe_pcie_root(const char *sys, const char *bdf, char *root, size_t len,
		    struct dt_err *err)
{
	char link[PROBE_PATH_MAX], target[PROBE_PATH_MAX], rel[PROBE_PATH_MAX];
	const char *first, *slash, *base;
	size_t syslen = strlen(sys);
	ssize_t n;

	root[0] = '\0';
	if (!bdf || !*bdf)
		return dt_err_set(err, -EINVAL, "PCI Bus ID cannot be empty");
	{
		struct topo_bdf b;

		if (topo_bdf_parse(bdf, &b))
			return dt_err_set(err, -EINVAL, "invalid PCI Bus ID format: %s", bdf);
	}
	if ((size_t)snprintf(link, sizeof(link), "%s/bus/pci/devices/%s", sys, bdf) >=
	    sizeof(link))
		return dt_err_set(err, -ENAMETOOLONG, "%s: path too long", sys);
	n = readlink(link, target, sizeof(target) - 1);
	if (n < 0) {
		int rc = -errno;

		if (rc == -EINVAL)
			return dt_err_set(err, rc, "%s: not a symlink", link);
		return dt_err_set(err, rc, "%s: %s", link, strerror(-rc));
	}
	if ((size_t)n >= sizeof(target) - 1)
		return dt_err_set(err, -ENAMETOOLONG, "%s: link target too long", link);
	target[n] = '\0';

	/* Make the target relative to the sysfs directory. A relative target
	 * is joined to the link's directory (bus/pci/devices); an absolute
	 * one must point into this sysfs tree. */
	if (target[0] == '/') {
		if (strncmp(target, sys, syslen) != 0 || target[syslen] != '/')
			return dt_err_set(err, -EINVAL,
					  "symlink target for PCI Bus ID %s is invalid: %s is "
					  "outside %s", bdf, target, sys);
		snprintf(rel, sizeof(rel), "%s", target + syslen + 1);
	} else if ((size_t)snprintf(rel, sizeof(rel), "bus/pci/devices/%s", target) >=
		   sizeof(rel)) {
		return dt_err_set(err, -ENAMETOOLONG, "%s: link target too long", link);
	}
	if (clean_path(rel) != 0)
		return dt_err_set(err, -EINVAL,
				  "symlink target for PCI Bus ID %s is invalid: %s leaves %s",
				  bdf, target, sys);
	if (strncmp(rel, "devices/pci", 11) != 0)
		return dt_err_set(err, -EINVAL,
				  "symlink target for PCI Bus ID %s is invalid: it must start "
				  "with devices/pci (got %s)", bdf, rel);
	base = strrchr(rel, '/');
	base = base ? base + 1 : rel;
	if (strcmp(base, bdf) != 0)
		return dt_err_set(err, -EINVAL,
				  "symlink target for PCI Bus ID %s is invalid: it must end "
				  "with %s (got %s)", bdf, bdf, rel);
	first = rel + strlen("devices/");
	slash = strchr(first, '/');
	if (!slash || (size_t)(slash - first) >= len)
		return dt_err_set(err, -EINVAL,
				  "symlink target for PCI Bus ID %s is invalid: no host bridge "
				  "in %s", bdf, rel);
	memcpy(root, first, (size_t)(slash - first));
	root[slash - first] = '\0';
	return 0;
}

/* ---- RDMA ---- */

int probe_rdma_name(const char *sys, const char *bdf, char *buf, size_t len,
		    struct dt_err *err)
{
	char dir[PROBE_PATH_MAX];
	struct dirent *e;
	DIR *d;
	int seen = 0;

	buf[0] = '\0';
	snprintf(dir, sizeof(dir), "%s/bus/pci/devices/%s/infiniband", sys, bdf);
	d = opendir(dir);
	if (!d) {
		int rc = -errno;

		return dt_err_set(err, rc, "%s: %s", dir, strerror(-rc));
	}
	/* One RDMA device per EFA function; if there were several, take the
	 * smallest name so the answer does not depend on readdir order. A
	 * bound keeps a hostile directory from taking forever. */
	while ((e = readdir(d)) != NULL && seen < 1024) {
		seen++;
		if (e->d_name[0] == '.' || strlen(e->d_name) >= len)
			continue;
		if (!buf[0] || strcmp(e->d_name, buf) < 0)
			snprintf(buf, len, "%s", e->d_name);
	}
	closedir(d);
	if (!buf[0])
		return dt_err_set(err, -ENOENT, "%s: no RDMA device", dir);
	return 0;
}
