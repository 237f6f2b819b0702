/* bench_store.c - durable puts per second into the coordinator's store.
 *
 *   bench_store [DIR [PUTS]]      (DIR: where the database goes, default /tmp)
 *
 * A fleet of 10,000 node names with 4 KiB reports: PUTS upserts with one
 * transaction (one fsync) per put, the same grouped 32 per transaction
 * (what a server committing concurrent reports together gets), the same
 * into memory: (no disk, the cost of SQLite itself), and listing the
 * whole fleet back and reopening it. Nothing is asserted. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "store.h"

#define FLEET 10000
#define GROUP 32

static uint8_t report[4096];
static char names[FLEET][24];

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void make_node(struct store_node *n, long i)
{
	static char type[] = "p5.48xlarge", verdict[] = "match", version[] = "0.1.0",
		    boot[] = "0f3c-boot", shape[] = "gpu8:efa32:roots4";

	memset(n, 0, sizeof(*n));
	n->name = names[i % FLEET];
	n->instance_type = type;
	n->verdict = verdict;
	n->agent_version = version;
	n->boot_id = boot;
	n->last_seq = (uint64_t)i;
	n->last_report_ns = i;
	n->report = report;
	n->report_len = sizeof(report);
	n->gpus = 8;
	n->efas = 32;
	n->shape_key = shape;
}

/* puts upserts, group of them per commit; returns puts per second. */
static double run_puts(struct store *s, long puts, int group)
{
	struct store_node nodes[GROUP];
	struct store_batch b[GROUP];
	struct dt_err err = { 0 };
	double t = now_s();

	for (long i = 0; i < puts; i += group) {
		for (int k = 0; k < group; k++) {
			make_node(&nodes[k], i + k);
			b[k] = (struct store_batch){ .node = &nodes[k] };
		}
		if (store_commit(s, b, (size_t)group, &err)) {
			fprintf(stderr, "bench_store: %s\n", err.msg);
			exit(1);
		}
	}
	return (double)puts / (now_s() - t);
}

static int count(struct store_node *rec, void *arg)
{
	(void)rec;
	(*(long *)arg)++;
	return 0;
}

static struct store *open_or_die(const char *uri)
{
	struct dt_err err = { 0 };
	struct store *s;

	if (store_open(uri, NULL, &s, &err)) {
		fprintf(stderr, "bench_store: %s\n", err.msg);
		exit(1);
	}
	return s;
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "/tmp";
	long puts = argc > 2 ? atol(argv[2]) : 5000, listed = 0;
	char path[4096];
	struct store *s;
	double t;

	if (puts < GROUP) {
		fprintf(stderr, "usage: bench_store [DIR [PUTS>=%d]]\n", GROUP);
		return 2;
	}
	for (long i = 0; i < FLEET; i++)
		snprintf(names[i], sizeof(names[i]), "ip-10-%ld-%ld", i / 256, i % 256);
	snprintf(path, sizeof(path), "%s/bench_store.%d.db", dir, (int)getpid());

	s = open_or_die(path);
	printf("%-40s %10.0f puts/s\n", "durable, 1 put per transaction", run_puts(s, puts, 1));
	printf("%-40s %10.0f puts/s\n", "durable, 32 puts per transaction",
	       run_puts(s, puts * 4, GROUP));
	run_puts(s, FLEET, GROUP);      /* every name present for the list */
	t = now_s();
	store_list_nodes(s, count, &listed, NULL);
	printf("%-40s %10.1f ms (%ld nodes)\n", "list the fleet", (now_s() - t) * 1e3, listed);
	store_close(s);
	t = now_s();
	s = open_or_die(path);
	printf("%-40s %10.1f ms\n", "reopen (integrity check) of that", (now_s() - t) * 1e3);
	store_close(s);
	unlink(path);          /* a clean close removed the -wal and -shm files */

	s = open_or_die("memory:");
	printf("%-40s %10.0f puts/s\n", "memory:, 1 put per transaction", run_puts(s, puts, 1));
	store_close(s);
	return 0;
}
