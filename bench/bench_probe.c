/* bench_probe.c - how fast and how small the agent's one-shot commands
 * are, next to lspci.
 *
 *   bench_probe AGENT FIXTURE [ROUNDS]
 *
 * On the sysfs tree FIXTURE (a directory holding sys/, e.g. the
 * p5.48xlarge tree of tests/fixtures/agent/mksysfs.sh) it times, in the
 * same run and interleaved so all see the same cache state:
 *   - probe_run() in this process (the library's own cost),
 *   - `AGENT probe --sysfs-root FIXTURE -o json` as a process,
 *   - `AGENT verify --sysfs-root FIXTURE -o json` as a process,
 *   - `lspci -vmm -nn -A linux-sysfs -O sysfs.path=FIXTURE/sys/bus/pci`,
 * and prints the mean wall time of each, the ratios lspci / probe and
 * lspci / verify, and each command's peak resident set (ru_maxrss of its
 * process, from wait4). The targets are both at least 2x faster than
 * lspci and under 4 MB peak RSS (docs/agent.md, "Benchmark"); this program
 * reports, it does not assert. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "probe.h"

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Run argv with stdout and stderr on /dev/null; its wall time in ms, its
 * peak RSS in KiB in *rss_kib. -1 when it could not run or failed. */
static double run_child(char *const argv[], long *rss_kib)
{
	struct rusage ru;
	double t0 = now_ms();
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);

		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execvp(argv[0], argv);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) < 0)
		return -1;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return -1;
	if (rss_kib)
		*rss_kib = ru.ru_maxrss;
	return now_ms() - t0;
}

#define TARGET_RATIO 2.0
#define TARGET_RSS_KIB 4096

/* One timed command: its argv, the sum of its wall times, its peak RSS. */
struct timed {
	const char *name;
	char **argv;
	double total_ms;
	long peak_kib;
};

static int run_timed(struct timed *t)
{
	long rss = 0;
	double ms = run_child(t->argv, &rss);

	if (ms < 0) {
		fprintf(stderr, "bench_probe: %s failed\n", t->name);
		return -1;
	}
	t->total_ms += ms;
	if (rss > t->peak_kib)
		t->peak_kib = rss;
	return 0;
}

static void print_vs_lspci(const struct timed *t, const struct timed *lspci, int rounds)
{
	double ratio = lspci->total_ms / t->total_ms;

	printf("%-18s %8.3f ms per run, peak RSS %ld KiB (%s 4 MB)\n", t->name,
	       t->total_ms / rounds, t->peak_kib, t->peak_kib < TARGET_RSS_KIB ? "under" : "OVER");
	printf("ratio              lspci / %s = %.2f  (%s %.0fx target)\n", t->name, ratio,
	       ratio >= TARGET_RATIO ? "meets the" : "BELOW the", TARGET_RATIO);
}

int main(int argc, char **argv)
{
	char sysfs_path[4200], lspci_opt[4300];
	double t_lib = 0;
	int rounds = argc > 3 ? atoi(argv[3]) : 50;
	size_t devices = 0;

	if (argc < 3 || rounds <= 0) {
		fprintf(stderr, "usage: bench_probe AGENT FIXTURE [ROUNDS]\n");
		return 2;
	}
	snprintf(sysfs_path, sizeof(sysfs_path), "%s/sys/bus/pci", argv[2]);
	snprintf(lspci_opt, sizeof(lspci_opt), "sysfs.path=%s", sysfs_path);

	char *probe_argv[] = { argv[1], (char *)"probe", (char *)"--sysfs-root", argv[2],
			       (char *)"-o", (char *)"json", NULL };
	char *verify_argv[] = { argv[1], (char *)"verify", (char *)"--sysfs-root", argv[2],
				(char *)"-o", (char *)"json", NULL };
	char *lspci_argv[] = { (char *)"lspci", (char *)"-vmm", (char *)"-nn", (char *)"-A",
			       (char *)"linux-sysfs", (char *)"-O", lspci_opt, NULL };
	struct timed probe = { "agent probe", probe_argv, 0, 0 };
	struct timed verify = { "agent verify", verify_argv, 0, 0 };
	struct timed lspci = { "lspci -vmm -nn", lspci_argv, 0, 0 };

	for (int i = 0; i < rounds; i++) {
		struct topo t;
		struct dt_err err = { 0 };
		double t0 = now_ms();

		if (probe_run(argv[2], NULL, &t, &err)) {
			fprintf(stderr, "bench_probe: %s\n", err.msg);
			return 1;
		}
		t_lib += now_ms() - t0;
		devices = t.n_devices;
		topo_free(&t);
		if (run_timed(&probe) || run_timed(&verify) || run_timed(&lspci))
			return 1;
	}
	printf("fixture            %s (%zu GPUs and EFAs)\n", argv[2], devices);
	printf("rounds             %d\n", rounds);
	printf("probe_run()        %8.3f ms per probe (in process)\n", t_lib / rounds);
	printf("lspci -vmm -nn     %8.3f ms per run\n", lspci.total_ms / rounds);
	print_vs_lspci(&probe, &lspci, rounds);
	print_vs_lspci(&verify, &lspci, rounds);
	return 0;
}
