/* test_hwdb_mig.c - hwdb's MIG tables, layouts and the MIG slices: the
 * compiled profiles against NVIDIA's published facts, layout syntax, the
 * placement rules (instances, compute and memory slices, placements) and
 * that every MIG slice of every MIG type passes the API server's rules. */
#include <stdio.h>
#include <string.h>

#include "dt_test.h"
#include "hwdb.h"
#include "hwdb_mig.h"
#include "hwdb_mig_internal.h"
#include "model.h"

static const struct hwdb_mig_gpu *gpu(const char *product)
{
	const struct hwdb_mig_gpu *g = hwdb_mig_gpu(product);

	CU_ASSERT_PTR_NOT_NULL(g);
	return g;
}

static void test_profiles_published(void)
{
	static const char *const gpus[] = {
		"NVIDIA A100-SXM4-40GB", "NVIDIA A100-SXM4-80GB", "NVIDIA H100 80GB HBM3",
		"NVIDIA H200", "NVIDIA B200",
	};
	const struct hwdb_mig_profile *p;

	CU_ASSERT_EQUAL(hwdb_mig_count(), 5);
	for (size_t i = 0; i < sizeof(gpus) / sizeof(gpus[0]); i++) {
		const struct hwdb_mig_gpu *g = gpu(gpus[i]);
		size_t placements = 0;

		if (!g)
			continue;
		CU_ASSERT_EQUAL(g->compute_slices, 7);
		CU_ASSERT_EQUAL(g->memory_slices, 8);
		CU_ASSERT_EQUAL(g->n_profiles, 7);
		for (size_t j = 0; j < g->n_profiles; j++) {
			p = &g->profiles[j];
			placements += p->n_placements;
			/* a profile can always hold its instance count on its own */
			CU_ASSERT(p->instances * p->memory_slices <= g->memory_slices);
			CU_ASSERT(p->n_placements >= (size_t)p->instances);
		}
		/* lgipp: 7 + 7 + 4 + 3 + 2 + 1 + 1 placements on GA100/GH100/GB100 */
		CU_ASSERT_EQUAL(placements, 25);
	}
	/* spot checks against the guide and nvidia-smi -lgip */
	p = hwdb_mig_profile(gpu("NVIDIA H100 80GB HBM3"), "7g.80gb");
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_EQUAL(p->multiprocessors, 132);
	CU_ASSERT_EQUAL(p->copy_engines, 8);
	CU_ASSERT_EQUAL(p->decoders, 7);
	CU_ASSERT_EQUAL(p->ofa_engines, 1);
	CU_ASSERT_EQUAL(p->memory_mib, 81152);
	p = hwdb_mig_profile(gpu("NVIDIA A100-SXM4-40GB"), "1g.5gb+me");
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_EQUAL(p->instances, 1);
	CU_ASSERT_EQUAL(p->jpeg_engines, 1);
	CU_ASSERT_EQUAL(p->decoders, 1);
	p = hwdb_mig_profile(gpu("NVIDIA H200"), "1g.35gb");
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_EQUAL(p->memory_slices, 2);
	CU_ASSERT_EQUAL(p->compute_slices, 1);
	CU_ASSERT_EQUAL(p->n_placements, 4);
	p = hwdb_mig_profile(gpu("NVIDIA B200"), "7g.180gb");
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_EQUAL(p->copy_engines, 16);
	CU_ASSERT_EQUAL(p->multiprocessors, -1);        /* not published */
	CU_ASSERT_PTR_NULL(hwdb_mig_profile(gpu("NVIDIA B200"), "1g.10gb"));
	CU_ASSERT_PTR_NULL(hwdb_mig_gpu("NVIDIA L4"));
}

/* Every type whose GPU has MIG: no profile promises more memory than the
 * GPU publishes. */
static void test_profiles_fit_their_types(void)
{
	size_t n_mig_types = 0;

	for (size_t i = 0; i < hwdb_count(); i++) {
		const struct hwdb_type *t = hwdb_at(i);
		const struct hwdb_mig_gpu *g = hwdb_mig_of_type(t);

		if (!g)
			continue;
		n_mig_types++;
		for (size_t j = 0; j < g->n_profiles; j++)
			CU_ASSERT(g->profiles[j].memory_mib <= t->gpus[0].memory_mib);
	}
	/* p4d, p4de, p5.4xlarge, p5.48xlarge, p5e, p5en, p6-b200 */
	CU_ASSERT_EQUAL(n_mig_types, 7);
	CU_ASSERT_PTR_NULL(hwdb_mig_of_type(hwdb_lookup("g6.xlarge")));
}

static void test_parse(void)
{
	static const char *const bad[][2] = {
		{ "1g.10gb;;1g.10gb", "GPU entry 1 is empty" },
		{ "1g.10gb!", "'!' cannot be in a profile name" },
		{ "all-1g.10gb,2g.20gb", "all-PROFILE takes one profile" },
		{ "1g.10gb,,1g.10gb", "an empty profile name" },
		{ "a,a,a,a,a,a,a,a,a", "more than 8 instances" },
		{ "averyveryveryveryveryverylongprofilename", "longer than 32" },
	};
	struct hwdb_mig_layout l;
	struct dt_err err = { 0 };
	char big[600];

	CU_ASSERT_EQUAL(hwdb_mig_parse(NULL, &l, &err), 0);
	CU_ASSERT_EQUAL(l.kind, HWDB_MIG_NONE);
	CU_ASSERT_EQUAL(hwdb_mig_parse(" disabled ", &l, &err), 0);
	CU_ASSERT_EQUAL(l.kind, HWDB_MIG_NONE);
	DT_ASSERT_STR(l.text, "");
	CU_ASSERT_EQUAL(hwdb_mig_parse("none", &l, &err), 0);
	CU_ASSERT_EQUAL(l.kind, HWDB_MIG_NONE);
	CU_ASSERT_EQUAL(hwdb_mig_parse("dynamic", &l, &err), 0);
	CU_ASSERT_EQUAL(l.kind, HWDB_MIG_DYNAMIC);
	CU_ASSERT_EQUAL(hwdb_mig_parse(" 3g.40gb, 2g.20gb ;disabled", &l, &err), 0);
	CU_ASSERT_EQUAL(l.kind, HWDB_MIG_STATIC);
	DT_ASSERT_STR(l.text, "3g.40gb,2g.20gb;disabled");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CU_ASSERT_EQUAL(hwdb_mig_parse(bad[i][0], &l, &err), -EINVAL);
		if (!strstr(err.msg, bad[i][1]))
			fprintf(stderr, "\n  %s: %s\n", bad[i][0], err.msg);
		CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, bad[i][1]));
	}
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	CU_ASSERT_EQUAL(hwdb_mig_parse(big, &l, &err), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "longer than"));
}

/* Resolve layout on p5.48xlarge; NULL: it must fit, else the error. */
static int resolve(const char *layout, struct hwdb_mig_gpu_plan *plans, struct dt_err *err)
{
	const struct hwdb_type *t = hwdb_lookup("p5.48xlarge");
	struct hwdb_mig_layout l;
	int rc = hwdb_mig_parse(layout, &l, err);

	if (rc)
		return rc;
	return hwdb_mig_resolve(&l, t, hwdb_mig_of_type(t), plans, err);
}

static void test_placement_rules(void)
{
	static const char *const bad[][2] = {
		{ "4g.40gb,4g.40gb", "2 instances of 4g.40gb, a GPU holds at most 1" },
		{ "1g.10gb+me,1g.10gb+me", "at most 1" },
		{ "4g.40gb,3g.40gb,1g.10gb", "need 8 compute slices, a GPU has 7" },
		{ "3g.40gb,3g.40gb,1g.10gb", "need 9 memory slices, a GPU has 8" },
		{ "1g.20gb,1g.20gb,1g.20gb,1g.20gb,1g.10gb", "need 9 memory slices" },
		{ "all-2g.10gb", "no MIG profile \"2g.10gb\"" },
		{ "1g.10gb;1g.10gb", "2 GPU entries, p5.48xlarge has 8 GPUs" },
	};
	struct hwdb_mig_gpu_plan plans[8];
	struct dt_err err = { 0 };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CU_ASSERT_EQUAL(resolve(bad[i][0], plans, &err), -EINVAL);
		CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, bad[i][1]));
	}
	/* all-1g.10gb: seven instances at slices 0..6 on every GPU */
	CU_ASSERT_EQUAL_FATAL(resolve("all-1g.10gb", plans, &err), 0);
	for (size_t g = 0; g < 8; g++) {
		CU_ASSERT(plans[g].enabled);
		CU_ASSERT_EQUAL(plans[g].n, 7);
		for (size_t k = 0; k < plans[g].n; k++)
			CU_ASSERT_EQUAL(plans[g].inst[k].start, (int)k);
	}
	/* 3g.40gb cannot start at 0 here (2g + 1g + 1g need slices 4..7 and
	 * 1g may not start at 7): the search moves it to 4 */
	CU_ASSERT_EQUAL_FATAL(resolve("3g.40gb,2g.20gb,1g.10gb,1g.10gb", plans, &err), 0);
	CU_ASSERT_EQUAL(plans[0].n, 4);
	CU_ASSERT_EQUAL(plans[0].inst[3].start, 4);
	DT_ASSERT_STR(plans[0].inst[3].profile->name, "3g.40gb");
	/* per GPU: whole, partitioned */
	CU_ASSERT_EQUAL_FATAL(resolve("disabled;7g.80gb;disabled;disabled;disabled;disabled;"
				      "disabled;4g.40gb,3g.40gb", plans, &err), 0);
	CU_ASSERT(!plans[0].enabled);
	CU_ASSERT(plans[1].enabled && plans[1].n == 1);
	CU_ASSERT(plans[7].enabled && plans[7].n == 2);
}

/* A GPU whose placements, not its slice counts, refuse a layout. */
static void test_placement_search_fails(void)
{
	static const struct hwdb_mig_profile profs[] = {
		{ .name = "1g.2s", .compute_slices = 1, .memory_slices = 2, .instances = 2,
		  .placements = { 0, 1 }, .n_placements = 2, .memory = "1Gi", .memory_mib = 1024 },
	};
	static const struct hwdb_mig_gpu g = {
		.product_name = "test GPU", .compute_slices = 3, .memory_slices = 4,
		.profiles = profs, .n_profiles = 1,
	};
	struct hwdb_device dev = { .name = "gpu-0", .memory = "4Gi", .memory_mib = 4096 };
	struct hwdb_type t = { .name = "t.test", .gpus = &dev, .n_gpus = 1 };
	struct hwdb_mig_gpu_plan plan;
	struct hwdb_mig_layout l;
	struct dt_err err = { 0 };

	/* two instances, 2 compute and 4 memory slices: the counts allow it,
	 * but the placements 0-1 and 1-2 overlap and 2-3 is not allowed */
	CU_ASSERT_EQUAL_FATAL(hwdb_mig_parse("1g.2s,1g.2s", &l, &err), 0);
	CU_ASSERT_EQUAL(hwdb_mig_resolve(&l, &t, &g, &plan, &err), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no placement of these instances fits"));
	CU_ASSERT_EQUAL_FATAL(hwdb_mig_parse("1g.2s", &l, &err), 0);
	CU_ASSERT_EQUAL(hwdb_mig_resolve(&l, &t, &g, &plan, &err), 0);
	CU_ASSERT_EQUAL(plan.n, 1);
}

static void test_check(void)
{
	struct hwdb_mig_layout l;
	struct dt_err err = { 0 };

	CU_ASSERT_EQUAL_FATAL(hwdb_mig_parse("dynamic", &l, &err), 0);
	CU_ASSERT_EQUAL(hwdb_mig_check(&l, hwdb_lookup("g6.xlarge"), &err), -ENOTSUP);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "NVIDIA L4 has no MIG profiles"));
	CU_ASSERT_EQUAL(hwdb_mig_check(&l, hwdb_lookup("p5.48xlarge"), &err), 0);
	CU_ASSERT_EQUAL_FATAL(hwdb_mig_parse("all-3g.71gb", &l, &err), 0);
	CU_ASSERT_EQUAL(hwdb_mig_check(&l, hwdb_lookup("p5en.48xlarge"), &err), 0);
	CU_ASSERT_EQUAL(hwdb_mig_check(&l, hwdb_lookup("p5.48xlarge"), &err), -EINVAL);
	CU_ASSERT_EQUAL_FATAL(hwdb_mig_parse(NULL, &l, &err), 0);
	CU_ASSERT_EQUAL(hwdb_mig_check(&l, hwdb_lookup("g6.xlarge"), &err), 0);
}

static void test_device_names(void)
{
	const struct hwdb_mig_gpu *g = gpu("NVIDIA H100 80GB HBM3");
	char buf[64];

	hwdb_mig_device_name(3, hwdb_mig_profile(g, "1g.10gb+me"), 5, buf, sizeof(buf));
	DT_ASSERT_STR(buf, "gpu-3-mig-1g10gb-me-5");
	hwdb_mig_device_name(0, hwdb_mig_profile(g, "3g.40gb"), 4, buf, sizeof(buf));
	DT_ASSERT_STR(buf, "gpu-0-mig-3g40gb-4-7");
}

/* Count the devices and counter sets of the GPU driver's slices. */
static void count_gpu(struct model_object **slices, size_t n, size_t *devs, size_t *sets)
{
	*devs = *sets = 0;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(slices[i]->u.slice.driver, HWDB_DRIVER_GPU))
			continue;
		*devs += slices[i]->u.slice.n_devices;
		*sets += slices[i]->u.slice.n_shared_counters;
	}
}

static void validate_all(const struct hwdb_type *t, const char *layout,
			 struct model_object **slices, size_t n)
{
	static const struct model_validate_opts vopts = { 0 };
	struct dt_diags diags;

	dt_diags_init(&diags);
	for (size_t j = 0; j < n; j++) {
		int bad = model_validate_object(slices[j], &vopts, &diags);

		CU_ASSERT_EQUAL(bad, 0);
	}
	for (size_t d = 0; d < diags.n; d++)
		fprintf(stderr, "\n  %s --mig %s: %s\n", t->name, layout, diags.msgs[d]);
	dt_diags_free(&diags);
}

/* Every MIG type, dynamic and all-P for each of its profiles: the slices
 * pass validation, and hold what the layout says. */
static void test_every_mig_slice_validates(void)
{
	for (size_t i = 0; i < hwdb_count(); i++) {
		const struct hwdb_type *t = hwdb_at(i);
		const struct hwdb_mig_gpu *g = hwdb_mig_of_type(t);

		for (size_t p = 0; g && p <= g->n_profiles; p++) {
			struct model_object *slices[HWDB_MAX_SLICES];
			struct model_set *set = model_set_new();
			struct hwdb_slice_opts o;
			struct hwdb_mig_layout l;
			struct dt_err err = { 0 };
			char layout[64];
			size_t n = 0, devs, sets;

			CU_ASSERT_PTR_NOT_NULL_FATAL(set);
			if (p == g->n_profiles)
				snprintf(layout, sizeof(layout), "dynamic");
			else
				snprintf(layout, sizeof(layout), "all-%s", g->profiles[p].name);
			CU_ASSERT_EQUAL_FATAL(hwdb_mig_parse(layout, &l, &err), 0);
			o = (struct hwdb_slice_opts){ .mig = &l };
			CU_ASSERT_EQUAL_FATAL(hwdb_slices_opts(t, &o, NULL, set, slices, &n, &err), 0);
			validate_all(t, layout, slices, n);
			count_gpu(slices, n, &devs, &sets);
			if (p == g->n_profiles) {
				CU_ASSERT_EQUAL(devs, t->n_gpus * 26);
				CU_ASSERT_EQUAL(sets, t->n_gpus);
			} else {
				CU_ASSERT_EQUAL(devs, t->n_gpus * (size_t)g->profiles[p].instances);
				CU_ASSERT_EQUAL(sets, 0);
			}
			model_set_free(set);
		}
	}
}

/* The profiles no GPU of hwdb has, for validate's warning: names in any
 * entry, after all-, but never "disabled" or the all- prefix itself. */
static void test_unknown_profile(void)
{
	static const char *const cases[][2] = {
		{ "9g.99gb", "9g.99gb" },
		{ "all-9g.99gb", "9g.99gb" },
		{ "3g.40gb,2g.20gb;disabled;1g.10gb,8g.1gb", "8g.1gb" },
		{ "1g.10gb,all-1g.10gb", "all-1g.10gb" },   /* all- only opens an entry */
		{ "all-disabled", "disabled" },
		{ "all-1g.10gb", NULL },
		{ "disabled;3g.71gb", NULL },                /* H200 only */
		{ "dynamic", NULL },
		{ "", NULL },
	};
	struct hwdb_mig_layout l;
	struct dt_err err = { 0 };
	char name[64];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		CU_ASSERT_EQUAL_FATAL(hwdb_mig_parse(cases[i][0], &l, &err), 0);
		if (cases[i][1]) {
			CU_ASSERT_TRUE(hwdb_mig_unknown_profile(&l, name, sizeof(name)));
			DT_ASSERT_STR(name, cases[i][1]);
		} else {
			CU_ASSERT_FALSE(hwdb_mig_unknown_profile(&l, name, sizeof(name)));
		}
	}
}

DT_SUITE_MAIN("hwdb_mig",
	DT_TEST(test_profiles_published),
	DT_TEST(test_profiles_fit_their_types),
	DT_TEST(test_parse),
	DT_TEST(test_placement_rules),
	DT_TEST(test_placement_search_fails),
	DT_TEST(test_check),
	DT_TEST(test_unknown_profile),
	DT_TEST(test_device_names),
	DT_TEST(test_every_mig_slice_validates))
