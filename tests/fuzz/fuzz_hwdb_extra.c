/* fuzz_hwdb_extra.c - libFuzzer target for the --hwdb-extra reader
 * (hwdb_load_extra_buf) on arbitrary bytes, on top of a database that
 * already holds one extra file (an override of a built-in type and a new
 * type), so that "all or nothing" covers replaced entries too:
 *
 *   - a refused file changes nothing: the same count, the same entry
 *     pointers in the same order, an error message naming the file;
 *   - an accepted file's entries are each found by name, every one writes
 *     back in the source format (hwdb_entry_write_yaml), that text loads
 *     again, and the ResourceSlices of every entry (hwdb_slices) build;
 *   - hwdb_reset() returns to the built-in data.
 * abort() on any broken promise. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwdb.h"
#include "model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_TYPES 4096

static const char base_extra[] =
	"instanceTypes:\n"
	"- name: g6.xlarge\n  vcpu: 4\n  memoryMiB: 16384\n  arch: amd64\n"
	"  onDemandPricePerHour: 0.5\n  draMetadata: true\n  gpu:\n    pciId: \"10de:27b8\"\n"
	"    memory: 23034Mi\n    attributes: {productName: NVIDIA L4}\n"
	"    devices:\n    - {pcieRoot: pci0000:30}\n"
	"- name: zz9.xlarge\n  vcpu: 8\n  memoryMiB: 32768\n  arch: arm64\n  draMetadata: false\n";

static const struct hwdb_type *snap[MAX_TYPES];
static size_t n_snap;

static void fail(const char *what)
{
	fprintf(stderr, "fuzz_hwdb_extra: %s\n", what);
	abort();
}

/* The database as it stands: count and entries. */
static void take_snapshot(void)
{
	n_snap = hwdb_count();
	if (n_snap > MAX_TYPES)
		fail("more types than the snapshot holds");
	for (size_t i = 0; i < n_snap; i++)
		snap[i] = hwdb_at(i);
}

static void check_unchanged(void)
{
	if (hwdb_count() != n_snap)
		fail("a refused file changed the number of types");
	for (size_t i = 0; i < n_snap; i++)
		if (hwdb_at(i) != snap[i] || hwdb_lookup(snap[i]->name) != snap[i])
			fail("a refused file changed an entry");
}

/* Every extra entry: found by name, written back and read again, its
 * slices built. */
static void check_accepted(void)
{
	struct strbuf out = STRBUF_INIT;
	const struct hwdb_type *extra[MAX_TYPES];
	size_t n = 0, count = hwdb_count();
	struct dt_err err = { 0 };

	for (size_t i = 0; i < count && n < MAX_TYPES; i++) {
		const struct hwdb_type *t = hwdb_at(i);
		struct model_set *set;
		struct model_object *slices[HWDB_MAX_SLICES];
		size_t n_slices = 0;

		if (!t || hwdb_lookup(t->name) != t)
			fail("an entry is not found by its name");
		if (t->builtin)
			continue;
		extra[n++] = t;
		set = model_set_new();
		if (!set)
			fail("out of memory");
		/* A bad node name is the only refusal: hwdb's own entries must build. */
		if (hwdb_slices(t, NULL, "node-1", set, slices, &n_slices, &err) < 0 &&
		    err.code != -ENOMEM)
			fail(err.msg);
		model_set_free(set);
	}
	if (hwdb_file_write_yaml(extra, n, &out))
		fail("out of memory writing entries");
	hwdb_reset();
	if (hwdb_load_extra_buf(sb_str(&out), out.len, "written.yaml", &err)) {
		fprintf(stderr, "%s\n%s\n", err.msg, sb_str(&out));
		fail("an accepted file's entries, written back, do not load");
	}
	sb_free(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dt_err err = { 0 };

	if (size > (1u << 20))
		return 0;
	hwdb_reset();
	if (hwdb_load_extra_buf(base_extra, sizeof(base_extra) - 1, "base.yaml", &err))
		fail(err.msg);
	take_snapshot();
	if (hwdb_load_extra_buf((const char *)data, size, "fuzz.yaml", &err) < 0) {
		if (strncmp(err.msg, "fuzz.yaml", 9))
			fail("the refusal does not name the file");
		check_unchanged();
	} else {
		check_accepted();
	}
	hwdb_reset();
	if (hwdb_lookup("zz9.xlarge") || !hwdb_lookup("g6.xlarge") ||
	    !hwdb_lookup("g6.xlarge")->builtin)
		fail("hwdb_reset did not restore the built-in data");
	return 0;
}
