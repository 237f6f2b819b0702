/* doc.c - the entry points: doc_parse hands a buffer to the YAML or JSON
 * reader (doc_yaml.c, doc_json.c), doc_load_file reads a file or standard
 * input first. The tree they build is doc_tree.c's, its memory
 * doc_arena.c's. */
#include "doc_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- Parsing entry points ---- */

static bool looks_like_json(const char *buf, size_t len)
{
	size_t i = 0;

	if (len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0)
		i = 3;
	for (; i < len; i++) {
		char c = buf[i];

		if (c == ' ' || c == '\t' || c == '\r' || c == '\n')
			continue;
		return c == '{' || c == '[';
	}
	return false;
}

static int parse_as(const char *buf, size_t len, enum doc_format fmt, const char *filename,
		    struct doc_stream **out, struct dt_err *err)
{
	struct doc_stream *s = doc_stream_new(filename);
	int rc;

	*out = NULL;
	if (!s)
		return dt_err_set(err, -ENOMEM, "out of memory");
	if (fmt == DOC_FORMAT_JSON)
		rc = doc_parse_json(buf ? buf : "", len, s, err);
	else
		rc = doc_parse_yaml(buf ? buf : "", len, s, err);
	if (rc < 0) {
		doc_stream_free(s);
		return rc;
	}
	*out = s;
	return 0;
}

int doc_parse(const char *buf, size_t len, enum doc_format fmt,
	      const char *filename, struct doc_stream **out, struct dt_err *err)
{
	*out = NULL;
	if (!buf && len)
		return dt_err_set(err, -EINVAL, "no input buffer");
	if (len > DOC_MAX_FILE_SIZE)
		return dt_err_set(err, -EFBIG, "input too large (%zu bytes, limit %u)",
				  len, DOC_MAX_FILE_SIZE);
	/* Input that starts like JSON is read as strict JSON, as kubectl
	 * does: a typo such as {"a": tru} is an error, not YAML's string. */
	if (fmt == DOC_FORMAT_AUTO)
		fmt = looks_like_json(buf, len) ? DOC_FORMAT_JSON : DOC_FORMAT_YAML;
	return parse_as(buf, len, fmt, filename, out, err);
}

/* Reads all of fd into a malloc'd buffer, refusing more than the limit. */
static int read_all(int fd, const char *path, char **bufp, size_t *lenp, struct dt_err *err)
{
	size_t len = 0, cap = 0;
	char *buf = NULL;
	int rc = 0;

	for (;;) {
		ssize_t r;

		/* len stays under the limit (checked below), so cap does too. */
		if (len == cap && DT_GROW(buf, cap, len + (64u << 10))) {
			rc = dt_err_set(err, -ENOMEM, "out of memory reading %s", path);
			goto out;
		}
		r = read(fd, buf + len, cap - len);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			rc = dt_err_set(err, -errno, "cannot read %s: %s", path, strerror(errno));
			goto out;
		}
		if (r == 0)
			break;
		len += (size_t)r;
		if (len > DOC_MAX_FILE_SIZE) {
			rc = dt_err_set(err, -EFBIG, "%s: file too large (limit %u bytes)",
					path, DOC_MAX_FILE_SIZE);
			goto out;
		}
	}
out:
	if (rc < 0) {
		free(buf);
		return rc;
	}
	*bufp = buf;
	*lenp = len;
	return 0;
}

/* The whole file at path ("-": standard input) into *buf (malloc'd). */
static int read_file(const char *path, char **buf, size_t *len, struct dt_err *err)
{
	bool is_stdin = path && strcmp(path, "-") == 0;
	int fd, rc;

	if (!path)
		return dt_err_set(err, -EINVAL, "no file name");
	fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return dt_err_set(err, -errno, "cannot read %s: %s", path, strerror(errno));
	rc = read_all(fd, is_stdin ? "standard input" : path, buf, len, err);
	if (!is_stdin)
		close(fd);
	return rc;
}

int doc_load_file(const char *path, struct doc_stream **out, struct dt_err *err)
{
	char *buf = NULL;
	size_t len = 0;
	int rc;

	*out = NULL;
	rc = read_file(path, &buf, &len, err);
	if (rc < 0)
		return rc;
	rc = doc_parse(buf, len, DOC_FORMAT_AUTO, path, out, err);
	free(buf);
	if (rc < 0)
		dt_err_prefix(err, "%s: ", path);
	return rc;
}

int doc_parse_each(const char *buf, size_t len, enum doc_format fmt, const char *filename,
		   doc_each_fn fn, void *arg, struct dt_err *err)
{
	struct doc_stream *s = doc_stream_new(filename);
	struct doc_each e = { .fn = fn, .arg = arg };
	int rc;

	if (!s)
		return dt_err_set(err, -ENOMEM, "out of memory");
	if (!buf && len) {
		rc = dt_err_set(err, -EINVAL, "no input buffer");
		goto out;
	}
	if (len > DOC_MAX_FILE_SIZE) {
		rc = dt_err_set(err, -EFBIG, "input too large (%zu bytes, limit %u)", len,
				DOC_MAX_FILE_SIZE);
		goto out;
	}
	if (fmt == DOC_FORMAT_AUTO)
		fmt = looks_like_json(buf, len) ? DOC_FORMAT_JSON : DOC_FORMAT_YAML;
	e.own = s->arena;
	e.doc = doc_arena_new();
	if (!e.doc) {
		rc = dt_err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	s->each = &e;
	if (fmt == DOC_FORMAT_JSON)
		rc = doc_parse_json(buf ? buf : "", len, s, err);
	else
		rc = doc_parse_yaml(buf ? buf : "", len, s, err);
	doc_each_flush(s);
	s->arena = e.own;
	if (!rc)
		rc = e.rc;
out:
	s->each = NULL;
	doc_arena_free(e.doc);
	doc_stream_free(s);
	return rc;
}

int doc_load_file_each(const char *path, doc_each_fn fn, void *arg, struct dt_err *err)
{
	char *buf = NULL;
	size_t len = 0;
	int rc = read_file(path, &buf, &len, err);

	if (rc < 0)
		return rc;
	rc = doc_parse_each(buf, len, DOC_FORMAT_AUTO, path, fn, arg, err);
	free(buf);
	if (rc < 0)
		dt_err_prefix(err, "%s: ", path);
	return rc;
}
