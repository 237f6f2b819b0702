/* bench_spawn.h - what the benchmarks that drive the real
 * dratopo-coordinator share: starting it (plaintext, a durable SQLite file
 * in a directory of the bench's, --http on a free port), reading back the
 * ports it picked from its start line, and its resident memory. */
#ifndef DT_BENCH_SPAWN_H
#define DT_BENCH_SPAWN_H

#include <stddef.h>
#include <sys/types.h>

struct bench_coord {
	pid_t pid;
	char addr[64];          /* "127.0.0.1:PORT", gRPC */
	int http_port;
};

/* BUILD/bin/dratopo-coordinator --insecure --listen 127.0.0.1:0 --db
 * DIR/bench.db --http 127.0.0.1:0 [extra...] (extra NULL-terminated, may be
 * NULL), its log in DIR/coord.log. 0 once it has started, -1 if it did not
 * within 10 s. */
int bench_coord_start(const char *build, const char *dir, const char *const *extra,
		      struct bench_coord *out);
/* BUILD/bin/dratopo-coordinator with exactly args (NULL-terminated; they
 * must include --http for the port read back), stderr to log. */
int bench_coord_spawn(const char *build, const char *log, const char *const *args,
		      struct bench_coord *out);

/* pid's resident set (VmRSS) in KiB, -1 when /proc does not say. */
long bench_rss_kib(pid_t pid);

#endif
