/* bench_units.c - throughput of quantity and semver parsing and comparison.
 *
 *   bench_units [iterations]
 *
 * Prints nanoseconds per operation for each kind of work; nothing is
 * asserted (timings belong here, not in the test suites). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "quantity.h"
#include "semver.h"

static const char *const quantities[] = {
	"100Gi", "80Gi", "1", "500m", "1.5", "1e3", "0.5Gi", "141557Mi", "2k",
	"1024Ki", "123456789012345678901234", "3.001n", "16", "40G", "7Ei",
};
static const char *const versions[] = {
	"1.2.3", "12.4.1", "535.104.5", "1.0.0-rc.1", "2.0.0+build.5", "0.0.1-alpha.beta.1",
	"10.20.30", "1.0.0-0",
};

#define NQ (sizeof(quantities) / sizeof(quantities[0]))
#define NV (sizeof(versions) / sizeof(versions[0]))

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Keeps the optimizer from dropping the work. */
static volatile long sink;

static void report(const char *what, double ns, long ops)
{
	printf("%-28s %10.1f ns/op  %12.0f ops/s\n", what, ns / (double)ops,
	       (double)ops * 1e9 / ns);
}

int main(int argc, char **argv)
{
	long iters = argc > 1 ? atol(argv[1]) : 200000;
	struct quantity q[NQ];
	struct semver v[NV];
	char buf[QUANTITY_STR_MAX];
	size_t len[NQ];
	double t;
	long acc = 0;

	if (iters <= 0) {
		fprintf(stderr, "usage: bench_units [iterations]\n");
		return 2;
	}
	for (size_t i = 0; i < NQ; i++) {
		len[i] = strlen(quantities[i]);
		if (quantity_parse(quantities[i], len[i], &q[i], NULL)) {
			fprintf(stderr, "bench_units: cannot parse %s\n", quantities[i]);
			return 1;
		}
	}
	for (size_t i = 0; i < NV; i++)
		if (semver_parse(versions[i], strlen(versions[i]), &v[i], NULL)) {
			fprintf(stderr, "bench_units: cannot parse %s\n", versions[i]);
			return 1;
		}

	t = now_ns();
	for (long n = 0; n < iters; n++) {
		struct quantity p;

		acc += quantity_parse(quantities[n % NQ], len[n % NQ], &p, NULL);
		acc += quantity_cmp(&p, &q[(n + 1) % NQ]);
	}
	report("quantity parse+cmp", now_ns() - t, iters);

	t = now_ns();
	for (long n = 0; n < iters; n++)
		acc += quantity_cmp(&q[n % NQ], &q[(n * 7 + 3) % NQ]);
	report("quantity cmp", now_ns() - t, iters);

	t = now_ns();
	for (long n = 0; n < iters; n++) {
		struct quantity s;

		acc += quantity_add(&q[n % NQ], &q[(n + 5) % NQ], &s);
	}
	report("quantity add", now_ns() - t, iters);

	t = now_ns();
	for (long n = 0; n < iters; n++)
		acc += (long)quantity_format(&q[n % NQ], buf);
	report("quantity format", now_ns() - t, iters);

	t = now_ns();
	for (long n = 0; n < iters; n++) {
		struct semver p;
		const char *s = versions[n % NV];

		acc += semver_parse(s, strlen(s), &p, NULL);
		acc += semver_cmp(&p, &v[(n + 1) % NV]);
	}
	report("semver parse+cmp", now_ns() - t, iters);

	sink = acc;
	return 0;
}
