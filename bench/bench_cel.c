/* bench_cel.c - DRA selector evaluation throughput of dt_cel.
 *
 * Two selectors against an NVIDIA H200 device (productName "NVIDIA H200",
 * architecture Hopper, cudaComputeCapability 9.0.0, memory 143771Mi):
 *
 *   seed   the seed's selector, with the Kubernetes semver and quantity types
 *   plain  the same shape without them (what @bufbuild/cel can run too)
 *   regex  productName matched with an RE2 pattern (the per-thread cache)
 *   string productName lower-cased and split (arena-built strings)
 *
 * Each is compiled once and evaluated through cel_eval_selector, the path
 * the allocator takes (with the device's names interned, as the model's
 * device views have them), for about SECONDS of CPU time (default 1). Prints
 *   dt_cel NAME: N evals, X ns/eval
 * bench/bench_cel.sh runs this next to @bufbuild/cel and prints the ratio.
 * No timing is asserted anywhere. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cel.h"
#include "quantity.h"
#include "semver.h"

static const char *const seed_expr =
	"device.attributes[\"gpu.nvidia.com\"].cudaComputeCapability.compareTo(semver(\"9.0.0\")) >= 0"
	" && device.capacity[\"gpu.nvidia.com\"].memory.compareTo(quantity(\"100Gi\")) >= 0";
static const char *const plain_expr =
	"device.attributes[\"gpu.nvidia.com\"].productName == \"NVIDIA H200\""
	" && device.attributes[\"gpu.nvidia.com\"].memoryMiB >= 102400";

static const char *const regex_expr =
	"device.attributes[\"gpu.nvidia.com\"].productName.matches(\"^NVIDIA H[0-9]+$\")";
static const char *const string_expr =
	"device.attributes[\"gpu.nvidia.com\"].productName.lowerAscii().split(\" \")[1] == \"h200\"";

static double cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int bench(const char *name, const char *expr, const struct cel_device *dev,
		 double seconds)
{
	struct cel_program *p = NULL;
	struct dt_err err = { 0 };
	long long n = 0;
	bool match = false;
	double t0, elapsed;
	int rc = 0;

	if (cel_compile_selector(expr, strlen(expr), true, &p, &err) < 0) {
		fprintf(stderr, "bench_cel: %s: %s\n", name, err.msg);
		return 1;
	}
	if (cel_eval_selector(p, dev, &match, &err) < 0 || !match) {
		fprintf(stderr, "bench_cel: %s: %s\n", name, match ? err.msg : "no match");
		rc = 1;
		goto out;
	}
	t0 = cpu_ns();
	do {
		for (int i = 0; i < 100000; i++)
			if (cel_eval_selector(p, dev, &match, &err) < 0 || !match) {
				fprintf(stderr, "bench_cel: %s: %s\n", name, err.msg);
				rc = 1;
				goto out;
			}
		n += 100000;
		elapsed = cpu_ns() - t0;
	} while (elapsed < seconds * 1e9);
	printf("dt_cel %s: %lld evals, %.1f ns/eval\n", name, n, elapsed / (double)n);
out:
	cel_program_free(p);
	return rc;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;
	struct semver cc;
	struct quantity mem;
	struct dt_err err = { 0 };
	struct cel_device_attr attrs[4];
	struct cel_device_capacity cap;
	struct cel_device dev;
	int rc = 0;

	if (seconds <= 0)
		seconds = 1.0;
	if (semver_parse("9.0.0", 5, &cc, &err) < 0 || quantity_parse("143771Mi", 8, &mem, &err) < 0) {
		fprintf(stderr, "bench_cel: %s\n", err.msg);
		return 1;
	}
	attrs[0] = (struct cel_device_attr){ "gpu.nvidia.com", "productName", CEL_ATTR_STRING,
					     .v.str = { "NVIDIA H200", 11 } };
	attrs[1] = (struct cel_device_attr){ "gpu.nvidia.com", "architecture", CEL_ATTR_STRING,
					     .v.str = { "Hopper", 6 } };
	attrs[2] = (struct cel_device_attr){ "gpu.nvidia.com", "cudaComputeCapability",
					     CEL_ATTR_VERSION, .v.version = &cc };
	attrs[3] = (struct cel_device_attr){ "gpu.nvidia.com", "memoryMiB", CEL_ATTR_INT,
					     .v.i = 143771 };
	cap = (struct cel_device_capacity){ "gpu.nvidia.com", "memory", &mem };
	/* Names interned as model_device_cel_init does for the allocator. */
	for (int i = 0; i < 4; i++) {
		attrs[i].domain = cel_intern(attrs[i].domain);
		attrs[i].id = cel_intern(attrs[i].id);
	}
	cap.domain = cel_intern(cap.domain);
	cap.id = cel_intern(cap.id);
	dev = (struct cel_device){ .driver = "gpu.nvidia.com", .attrs = attrs, .n_attrs = 4,
				   .capacity = &cap, .n_capacity = 1, .interned = true };
	rc |= bench("seed", seed_expr, &dev, seconds);
	rc |= bench("plain", plain_expr, &dev, seconds);
	rc |= bench("regex", regex_expr, &dev, seconds);
	rc |= bench("string", string_expr, &dev, seconds);
	return rc;
}
