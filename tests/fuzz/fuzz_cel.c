/* fuzz_cel.c - libFuzzer target for the CEL core: every input is compiled
 * (parse + check) in the CLI environment and, when it compiles, evaluated
 * against a small device under the cost limit; the same input is also
 * compiled without the checker so the evaluator meets unchecked trees.
 * Build: cmake -DDRATOPO_FUZZ=ON -DCMAKE_C_COMPILER=clang (docs/cel.md). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cel_env.h"
#include "strbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct cel_device_attr attrs[3];
static struct cel_device dev;
static struct semver ver;
static struct quantity mem;
static struct cel_device_capacity cap[1];

static void setup(void)
{
	static int done;

	if (done)
		return;
	done = 1;
	semver_parse("9.0.0", 5, &ver, NULL);
	quantity_parse_str("141Gi", &mem, NULL);
	attrs[0] = (struct cel_device_attr){ "gpu.nvidia.com", "productName", CEL_ATTR_STRING,
					     .v.str = { "NVIDIA H200", 11 } };
	attrs[1] = (struct cel_device_attr){ "gpu.nvidia.com", "memoryMiB", CEL_ATTR_INT,
					     .v.i = 143771 };
	attrs[2] = (struct cel_device_attr){ "gpu.nvidia.com", "cudaComputeCapability",
					     CEL_ATTR_VERSION, .v.version = &ver };
	cap[0] = (struct cel_device_capacity){ "gpu.nvidia.com", "memory", &mem };
	dev = (struct cel_device){ "gpu.nvidia.com", attrs, 3, cap, 1, true };
}

static void run(struct cel_env *env, const char *expr, size_t len)
{
	struct cel_program *p = NULL;
	struct cel_evaluation *ev;
	struct cel_value var = cel_device_value(&dev), out;
	struct strbuf sb = STRBUF_INIT;

	if (cel_compile(env, expr, len, &p, NULL) < 0)
		return;
	ev = cel_evaluation_new();
	if (ev && cel_eval(p, &var, 1, ev, &out, NULL) == 0)
		cel_value_print(&sb, &out);
	sb_free(&sb);
	cel_evaluation_free(ev);
	cel_program_free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* Built once: environments are read-only after the first compile. */
	static struct cel_env *checked, *unchecked;

	if (size > 4096)
		return 0;
	setup();
	if (!checked) {
		checked = cel_env_new(CEL_ENV_CLI, NULL);
		unchecked = cel_env_new(CEL_ENV_CLI, NULL);
		if (!checked || !unchecked)
			return 0;
		cel_env_set_checking(unchecked, false);
	}
	run(checked, (const char *)data, size);
	run(unchecked, (const char *)data, size);
	return 0;
}
