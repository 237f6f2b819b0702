/* bench_spawn.c - the real coordinator for the benchmarks (bench_spawn.h). */
#include "bench_spawn.h"

#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

/* The ports of the start line in log, once it is there. */
static int read_ports(const char *log, struct bench_coord *c)
{
	char line[1024];
	FILE *f = fopen(log, "r");
	int found = -1;

	while (f && found && fgets(line, sizeof(line), f)) {
		char *g = strstr(line, "grpc_port="), *h = strstr(line, "http_port=");

		if (g && h) {
			snprintf(c->addr, sizeof(c->addr), "127.0.0.1:%d", atoi(g + 10));
			c->http_port = atoi(h + 10);
			found = 0;
		}
	}
	if (f)
		fclose(f);
	return found;
}

int bench_coord_spawn(const char *build, const char *log, const char *const *args,
		      struct bench_coord *out)
{
	char bin[4096];
	const char *argv[40] = { bin };
	size_t n = 1;
	posix_spawn_file_actions_t fa;
	int rc;

	for (; args && *args && n + 1 < sizeof(argv) / sizeof(argv[0]); args++)
		argv[n++] = *args;
	snprintf(bin, sizeof(bin), "%s/bin/dratopo-coordinator", build);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 2, log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	rc = posix_spawn(&out->pid, bin, &fa, NULL, (char *const *)argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc)
		return -1;
	for (int i = 0; i < 100; i++) {
		usleep(100000);
		if (!read_ports(log, out))
			return 0;
	}
	return -1;
}

int bench_coord_start(const char *build, const char *dir, const char *const *extra,
		      struct bench_coord *out)
{
	char db[4096], log[4096];
	const char *args[32] = { "--insecure", "--listen", "127.0.0.1:0", "--db", db, "--http",
				 "127.0.0.1:0" };
	size_t n = 7;

	for (; extra && *extra && n + 1 < sizeof(args) / sizeof(args[0]); extra++)
		args[n++] = *extra;
	snprintf(db, sizeof(db), "%s/bench.db", dir);
	snprintf(log, sizeof(log), "%s/coord.log", dir);
	return bench_coord_spawn(build, log, args, out);
}

long bench_rss_kib(pid_t pid)
{
	char path[64], line[256];
	long kib = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (!(f = fopen(path, "r")))
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}
