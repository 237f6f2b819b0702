/* fuzz_replay.c - runs a libFuzzer target's entry point over files without
 * libFuzzer: each argument is a file, or a directory whose regular files
 * (not hidden ones) are each one input. Built with every target
 * (replay_<name>) so that ctest, with gcc and no fuzzer, replays every
 * corpus file and every regression input on every build; a crash, an
 * abort() on a broken invariant or a sanitizer report fails the test.
 *
 *   replay_alloc tests/fuzz/alloc_corpus [FILE...] */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "array.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REPLAY_MAX_INPUT (64u << 20)

/* Read path whole; NULL with errno set on failure. */
static uint8_t *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t cap = 0, n = 0;

	if (!f)
		return NULL;
	for (;;) {
		if (n == cap && (DT_GROW(buf, cap, n + 4096) || cap > REPLAY_MAX_INPUT)) {
			free(buf);
			fclose(f);
			errno = EFBIG;
			return NULL;
		}
		size_t got = fread(buf + n, 1, cap - n, f);

		n += got;
		if (got == 0)
			break;
	}
	fclose(f);
	*len = n;
	return buf;
}

static int run_file(const char *path)
{
	size_t len = 0;
	uint8_t *data = read_all(path, &len);

	if (!data) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	LLVMFuzzerTestOneInput(data, len);
	free(data);
	return 0;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The directory's inputs in name order, so that runs are repeatable. */
static int run_dir(const char *dir, size_t *count)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;

	if (!d) {
		fprintf(stderr, "replay: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (DT_GROW(names, cap, n + 1)) {
			rc = -1;
			break;
		}
		if (!(names[n] = strdup(e->d_name))) {
			rc = -1;
			break;
		}
		n++;
	}
	closedir(d);
	qsort(names, n, sizeof(*names), name_cmp);
	for (size_t i = 0; i < n; i++) {
		char path[4096];
		struct stat st;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (rc == 0 && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
			rc = run_file(path);
			++*count;
		}
		free(names[i]);
	}
	free(names);
	return rc;
}

int main(int argc, char **argv)
{
	size_t count = 0;

	for (int i = 1; i < argc; i++) {
		struct stat st;
		int rc;

		if (stat(argv[i], &st) != 0) {
			fprintf(stderr, "replay: %s: %s\n", argv[i], strerror(errno));
			return 1;
		}
		if (S_ISDIR(st.st_mode)) {
			rc = run_dir(argv[i], &count);
		} else {
			rc = run_file(argv[i]);
			count++;
		}
		if (rc)
			return 1;
	}
	if (!count) {
		fprintf(stderr, "replay: no input files\n");
		return 1;
	}
	printf("replay: %zu inputs, no crash\n", count);
	return 0;
}
