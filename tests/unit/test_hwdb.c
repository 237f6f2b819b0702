/* test_hwdb.c - the hwdb module: the compiled tables against the reference
 * facts, lookups and price order, extras, PCI ids, consumable-capacity
 * modes, the ResourceSlices each type publishes, and catalogues.
 *
 * The expected topology comes from tests/fixtures/hwdb/topology.txt, which
 * was derived from the reference JSON independently of
 * hwdb/instance-types.yaml, so a conversion mistake in either shows up; the
 * EFA types without GPUs from tests/fixtures/hwdb/efa-types.txt, read from
 * the public sources independently of tools/hwdb-import. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "dt_test.h"
#include "hwdb.h"
#include "hwdb_catalog.h"
#include "hwdb_source.h"
#include "model.h"

#define MAX_ROOTS 64

struct expect {
	char name[64];
	size_t gpus, efas;
	bool dra;
	bool has_price;
	double price;
	struct { char name[32]; size_t gpus, efas; } roots[MAX_ROOTS];
	size_t n_roots;
};

static struct expect *expects;
static size_t n_expects, cap_expects;

/* A line of efa-types.txt; 0 / "" / -1 where the sources have nothing. */
struct efa_expect {
	char name[64], arch[16];
	char device[16];            /* "efa3", "" unknown */
	size_t efas;
	int vcpu, cards;
	long long mem_mib;
	double price, eu_price;     /* -1: none */
};

static struct efa_expect *efa_expects;
static size_t n_efa_expects, cap_efa_expects;

static double price_or_none(const char *s)
{
	return strcmp(s, "-") ? strtod(s, NULL) : -1;
}

static int load_efa_expectations(void)
{
	FILE *f = fopen(dt_fixture("hwdb/efa-types.txt"), "r");
	char line[512];

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		struct efa_expect e = { 0 };
		char vcpu[16], mem[32], price[32], eu[32];

		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (sscanf(line, "%63s %zu %15s %31s %15s %31s %31s %d %15s", e.name, &e.efas, vcpu,
			   mem, e.arch, price, eu, &e.cards, e.device) != 9)
			continue;
		if (!strcmp(e.device, "-"))
			e.device[0] = '\0';
		e.vcpu = strcmp(vcpu, "-") ? atoi(vcpu) : 0;
		e.mem_mib = strcmp(mem, "-") ? atoll(mem) : 0;
		if (!strcmp(e.arch, "-"))
			e.arch[0] = '\0';
		e.price = price_or_none(price);
		e.eu_price = price_or_none(eu);
		if (DT_GROW(efa_expects, cap_efa_expects, n_efa_expects + 1)) {
			fclose(f);
			return -1;
		}
		efa_expects[n_efa_expects++] = e;
	}
	fclose(f);
	return n_efa_expects ? 0 : -1;
}

static int load_expectations(void)
{
	FILE *f = fopen(dt_fixture("hwdb/topology.txt"), "r");
	char line[4096];

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		struct expect e = { 0 };
		char price[32], *tok, *save = NULL;
		int dra, off = 0;

		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (sscanf(line, "%63s %zu %zu %d %31s %n", e.name, &e.gpus, &e.efas, &dra, price,
			   &off) != 5)
			continue;
		e.dra = dra;
		e.has_price = strcmp(price, "-") != 0;
		e.price = e.has_price ? strtod(price, NULL) : 0;
		for (tok = strtok_r(line + off, " \n", &save); tok && e.n_roots < MAX_ROOTS;
		     tok = strtok_r(NULL, " \n", &save)) {
			if (sscanf(tok, "%31[^=]=%zu+%zu", e.roots[e.n_roots].name,
				   &e.roots[e.n_roots].gpus, &e.roots[e.n_roots].efas) == 3)
				e.n_roots++;
		}
		if (DT_GROW(expects, cap_expects, n_expects + 1)) {
			fclose(f);
			return -1;
		}
		expects[n_expects++] = e;
	}
	fclose(f);
	return n_expects ? 0 : -1;
}

static int suite_init(void)
{
	return load_expectations() || load_efa_expectations() ? -1 : 0;
}

static int suite_cleanup(void)
{
	free(expects);
	free(efa_expects);
	hwdb_reset();
	return 0;
}

static const struct expect *expect_for(const char *name)
{
	for (size_t i = 0; i < n_expects; i++)
		if (!strcmp(expects[i].name, name))
			return &expects[i];
	return NULL;
}

static bool efa_expected(const char *name)
{
	for (size_t i = 0; i < n_efa_expects; i++)
		if (!strcmp(efa_expects[i].name, name))
			return true;
	return false;
}

/* ---- The tables against the facts ---- */

static void test_every_type_matches_facts(void)
{
	CU_ASSERT_EQUAL(hwdb_count(), n_expects + n_efa_expects);
	for (size_t i = 0; i < n_expects; i++) {
		const struct expect *e = &expects[i];
		const struct hwdb_type *t = hwdb_lookup(e->name);
		struct hwdb_root roots[MAX_ROOTS];
		size_t n;

		CU_ASSERT_PTR_NOT_NULL_FATAL(t);
		CU_ASSERT_EQUAL(t->n_gpus, e->gpus);
		CU_ASSERT_EQUAL(t->n_efas, e->efas);
		CU_ASSERT_EQUAL(t->dra_metadata, e->dra);
		CU_ASSERT_EQUAL(t->has_price, e->has_price);
		if (e->has_price)
			CU_ASSERT_DOUBLE_EQUAL(t->price, e->price, 1e-9);
		n = hwdb_type_roots(t, roots, MAX_ROOTS);
		CU_ASSERT_EQUAL(n, e->n_roots);
		for (size_t r = 0; r < n && r < e->n_roots; r++) {
			DT_ASSERT_STR(roots[r].name, e->roots[r].name);
			CU_ASSERT_EQUAL(roots[r].n_gpus, e->roots[r].gpus);
			CU_ASSERT_EQUAL(roots[r].n_efas, e->roots[r].efas);
		}
		if (!t->dra_metadata)
			for (size_t g = 0; g < t->n_gpus; g++)
				CU_ASSERT_PTR_NULL(t->gpus[g].pcie_root);
	}
	/* and hwdb has no type the facts lack */
	for (size_t i = 0; i < hwdb_count(); i++)
		CU_ASSERT(expect_for(hwdb_at(i)->name) || efa_expected(hwdb_at(i)->name));
}

/* Every EFA type without GPUs: its EFAs, size, prices and cards as the
 * sources say, and nothing claimed that was not scraped. */
static void test_efa_types_match_facts(void)
{
	size_t efa_types = 0;

	CU_ASSERT(n_efa_expects >= 250);
	for (size_t i = 0; i < n_efa_expects; i++) {
		const struct efa_expect *e = &efa_expects[i];
		const struct hwdb_type *t = hwdb_lookup(e->name);
		double p;

		CU_ASSERT_PTR_NOT_NULL_FATAL(t);
		CU_ASSERT_EQUAL(t->n_gpus, 0);
		CU_ASSERT_EQUAL(t->n_efas, e->efas);
		CU_ASSERT_EQUAL(t->max_efa_interfaces, (int)e->efas);
		CU_ASSERT_EQUAL(t->vcpu, e->vcpu);
		CU_ASSERT_EQUAL(t->memory_mib, e->mem_mib);
		CU_ASSERT_EQUAL(hwdb_type_sized(t), e->vcpu > 0 && e->arch[0]);
		if (e->arch[0])
			DT_ASSERT_STR(t->arch, e->arch);
		CU_ASSERT_EQUAL(t->network_cards, e->cards);
		CU_ASSERT_EQUAL(hwdb_type_price(t, NULL, &p), e->price >= 0);
		if (e->price >= 0)
			CU_ASSERT_DOUBLE_EQUAL(p, e->price, 1e-9);
		CU_ASSERT_EQUAL(hwdb_type_price(t, "eu-west-1", &p), e->eu_price >= 0);
		if (e->eu_price >= 0)
			CU_ASSERT_DOUBLE_EQUAL(p, e->eu_price, 1e-9);
		/* Roots not scraped: none claimed. The PCI id where AWS names the
		 * EFA version, and DRANET's pciSubsystem with it. */
		CU_ASSERT_FALSE(t->dra_metadata);
		CU_ASSERT_EQUAL(t->efa_device,
				e->device[0] ? (unsigned)strtoul(e->device, NULL, 16) : 0u);
		for (size_t k = 0; k < t->n_efas; k++) {
			const struct hwdb_attr *sub =
				hwdb_device_attr(&t->efas[k], "dra.net/pciSubsystem");

			CU_ASSERT_PTR_NULL(t->efas[k].pcie_root);
			CU_ASSERT_PTR_NOT_NULL(hwdb_device_attr(&t->efas[k], "dra.net/pciDevice"));
			CU_ASSERT_EQUAL(sub != NULL, e->device[0] != '\0');
			if (sub && e->device[0])
				DT_ASSERT_STR(sub->str, e->device);
		}
	}
	for (size_t i = 0; i < hwdb_count(); i++)
		efa_types += hwdb_at(i)->n_efas > 0;
	CU_ASSERT(efa_types >= 300);
}

/* Prices per region: the default region is us-east-1, the others come from
 * prices.yaml, and a price the data set had before a price change is left
 * out rather than kept wrong. */
static void test_region_prices(void)
{
	const struct hwdb_type *c5n = hwdb_lookup("c5n.9xlarge"), *p5 = hwdb_lookup("p5.48xlarge");
	const struct hwdb_type *hpc = hwdb_lookup("hpc7a.96xlarge"), *g6 = hwdb_lookup("g5.12xlarge");
	double p, q;
	size_t n = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(c5n);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p5);
	CU_ASSERT_PTR_NOT_NULL_FATAL(hpc);
	CU_ASSERT_PTR_NOT_NULL_FATAL(g6);
	DT_ASSERT_STR(hwdb_regions[0], HWDB_DEFAULT_REGION);
	for (n = 1; hwdb_regions[n]; n++)
		if (hwdb_regions[n + 1])
			CU_ASSERT(strcmp(hwdb_regions[n], hwdb_regions[n + 1]) < 0);
	CU_ASSERT(n >= 25);
	CU_ASSERT(hwdb_region_known("eu-west-1"));
	CU_ASSERT(hwdb_region_known("us-gov-west-1"));
	CU_ASSERT_FALSE(hwdb_region_known("cn-north-1"));      /* CNY, not USD */
	CU_ASSERT_FALSE(hwdb_region_known("mars-north-1"));
	CU_ASSERT_FALSE(hwdb_region_known(NULL));
	CU_ASSERT(hwdb_type_price(c5n, HWDB_DEFAULT_REGION, &p));
	CU_ASSERT_DOUBLE_EQUAL(p, 1.944, 1e-9);
	CU_ASSERT(hwdb_type_price(c5n, "eu-west-1", &q));
	CU_ASSERT(q > p);                   /* Ireland costs more than Virginia */
	CU_ASSERT_FALSE(hwdb_type_price(c5n, "xx-nowhere-1", &q));
	CU_ASSERT(hwdb_type_price(g6, "eu-west-1", &q));
	/* p5's price fell in 2025; the older regional data set is left out */
	CU_ASSERT(hwdb_type_price(p5, NULL, &p));
	CU_ASSERT_FALSE(hwdb_type_price(p5, "eu-west-1", &q));
	/* hpc7a is not offered in us-east-1, but in us-east-2 */
	CU_ASSERT_FALSE(hpc->has_price);
	CU_ASSERT_FALSE(hwdb_type_price(hpc, NULL, &p));
	CU_ASSERT(hwdb_type_price(hpc, "us-east-2", &p));
	for (size_t i = 0; i < hwdb_count(); i++) {
		const struct hwdb_type *t = hwdb_at(i);

		for (size_t k = 0; k < t->n_prices; k++) {
			CU_ASSERT(hwdb_region_known(t->prices[k].region));
			CU_ASSERT(t->prices[k].price > 0);
			if (k)
				CU_ASSERT(strcmp(t->prices[k - 1].region, t->prices[k].region) < 0);
		}
	}
}

/* Trainium and Inferentia types say what they carry, and that hwdb does
 * not model it: their slices hold the EFAs only. */
static void test_accelerators_named(void)
{
	static const char *const neuron[] = { "trn1.32xlarge", "trn1n.32xlarge", "trn2.48xlarge",
					      "inf1.24xlarge" };

	for (size_t i = 0; i < sizeof(neuron) / sizeof(neuron[0]); i++) {
		const struct hwdb_type *t = hwdb_lookup(neuron[i]);
		bool noted = false;

		CU_ASSERT_PTR_NOT_NULL_FATAL(t);
		CU_ASSERT_PTR_NOT_NULL_FATAL(t->accel_kind);
		CU_ASSERT_PTR_NOT_NULL(strstr(t->accel_kind, neuron[i][0] == 't' ? "Trainium"
								       : "Inferentia"));
		CU_ASSERT_EQUAL(t->n_gpus, 0);
		CU_ASSERT(t->n_efas > 0);
		for (size_t k = 0; k < t->n_notes; k++)
			noted |= strstr(t->notes[k], "not modelled") != NULL;
		CU_ASSERT(noted);
	}
	CU_ASSERT_EQUAL(hwdb_lookup("trn1.32xlarge")->accel_count, 16);
	CU_ASSERT_PTR_NULL(hwdb_lookup("c5n.18xlarge")->accel_kind);
	CU_ASSERT_PTR_NULL(hwdb_lookup("p5.48xlarge")->accel_kind);
}

/* Sizes, regional prices and accelerators in extra files. */
static void test_extra_regions_and_sizes(void)
{
	static const char yaml[] =
		"instanceTypes:\n"
		"- name: zz8.xlarge\n  vcpu: null\n  memoryMiB: null\n  arch: null\n"
		"  onDemandPrices: {us-east-1: 1.5, eu-west-1: 1.75, ap-south-1: 1.25}\n"
		"  accelerators: {kind: Example NPU, count: 2}\n"
		"  efa: {count: 1}\n";
	static const struct { const char *yaml, *want; } bad[] = {
		{ "instanceTypes:\n- {name: zz9.xlarge, memoryMiB: 1, arch: amd64}\n",
		  "vcpu: required field (null: unknown)" },
		{ "instanceTypes:\n- {name: zz9.xlarge, vcpu: 1, memoryMiB: 1, arch: amd64,"
		  " onDemandPrices: {Europe: 1}}\n", "onDemandPrices.Europe: not an AWS region" },
		{ "instanceTypes:\n- {name: zz9.xlarge, vcpu: 1, memoryMiB: 1, arch: amd64,"
		  " onDemandPricePerHour: 2, onDemandPrices: {us-east-1: 3}}\n",
		  "differs from onDemandPricePerHour" },
		{ "instanceTypes:\n- {name: zz9.xlarge, vcpu: 1, memoryMiB: 1, arch: amd64,"
		  " onDemandPrices: {eu-west-1: -1}}\n", "onDemandPrices.eu-west-1: must be a finite" },
		{ "instanceTypes:\n- {name: zz9.xlarge, vcpu: 1, memoryMiB: 1, arch: amd64,"
		  " accelerators: {count: 1}}\n", "accelerators.kind: required field" },
		{ "instanceTypes:\n- {name: zz9.xlarge, vcpu: 1, memoryMiB: 1, arch: amd64,"
		  " accelerators: {kind: x, chips: 1}}\n", "accelerators.chips: unknown field" },
	};
	const struct hwdb_type *t;
	struct dt_err err = { 0 };
	double p;

	CU_ASSERT_EQUAL_FATAL(hwdb_load_extra_buf(yaml, sizeof(yaml) - 1, "x.yaml", &err), 0);
	t = hwdb_lookup("zz8.xlarge");
	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	CU_ASSERT_FALSE(hwdb_type_sized(t));
	CU_ASSERT_PTR_NULL(t->arch);
	CU_ASSERT(hwdb_type_price(t, NULL, &p));
	CU_ASSERT_DOUBLE_EQUAL(p, 1.5, 1e-12);
	CU_ASSERT(hwdb_type_price(t, "eu-west-1", &p));
	CU_ASSERT_DOUBLE_EQUAL(p, 1.75, 1e-12);
	CU_ASSERT(hwdb_type_price(t, "ap-south-1", &p));
	CU_ASSERT_DOUBLE_EQUAL(p, 1.25, 1e-12);
	CU_ASSERT_EQUAL(t->n_prices, 2);
	DT_ASSERT_STR(t->prices[0].region, "ap-south-1");       /* sorted */
	DT_ASSERT_STR(t->accel_kind, "Example NPU");
	CU_ASSERT_EQUAL(t->accel_count, 2);
	hwdb_reset();
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&err, 0, sizeof(err));
		CU_ASSERT(hwdb_load_extra_buf(bad[i].yaml, strlen(bad[i].yaml), "bad.yaml", &err) < 0);
		if (!strstr(err.msg, bad[i].want))
			fprintf(stderr, "\n  case %zu: \"%s\" not in \"%s\"\n", i, bad[i].want, err.msg);
		CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, bad[i].want));
	}
	CU_ASSERT_PTR_NULL(hwdb_lookup("zz9.xlarge"));
}

/* Every family the product must cover has at least one type. */
static void test_families_covered(void)
{
	static const char *const families[] = {
		"p3", "p3dn", "p4d", "p4de", "p5", "p5e", "p5en", "p6-b200", "p6-b300", "g4dn",
		"g5", "g5g", "g6", "g6e", "gr6", "g6f", "gr6f", "g7", "g7e",
	};
	size_t total = 0;

	for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++) {
		size_t n = hwdb_family(families[i], NULL, 0);

		if (n == 0)
			fprintf(stderr, "\n  family %s has no instance type\n", families[i]);
		CU_ASSERT(n > 0);
		total += n;
	}
	/* and no GPU type outside them */
	for (size_t i = 0; i < hwdb_count(); i++)
		total -= hwdb_at(i)->n_gpus > 0;
	CU_ASSERT_EQUAL(total, 0);
}

static void test_p5_48xlarge_roots(void)
{
	const struct hwdb_type *t = hwdb_lookup("p5.48xlarge");
	struct hwdb_root r[MAX_ROOTS];
	size_t n;

	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	n = hwdb_type_roots(t, r, MAX_ROOTS);
	CU_ASSERT_EQUAL(n, 8);
	for (size_t i = 0; i < n; i++) {
		CU_ASSERT_EQUAL(r[i].n_gpus, 1);
		CU_ASSERT_EQUAL(r[i].n_efas, 4);
	}
}

static void test_p5en_48xlarge_roots(void)
{
	const struct hwdb_type *t = hwdb_lookup("p5en.48xlarge");
	struct hwdb_root r[MAX_ROOTS];
	size_t n;

	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	n = hwdb_type_roots(t, r, MAX_ROOTS);
	CU_ASSERT_EQUAL(n, 4);
	for (size_t i = 0; i < n; i++) {
		CU_ASSERT_EQUAL(r[i].n_gpus, 2);
		CU_ASSERT_EQUAL(r[i].n_efas, 4);
	}
}

static void test_g6e_48xlarge_no_shared_root(void)
{
	const struct hwdb_type *t = hwdb_lookup("g6e.48xlarge");

	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	CU_ASSERT(t->n_efas > 0);
	for (size_t e = 0; e < t->n_efas; e++)
		for (size_t g = 0; g < t->n_gpus; g++)
			CU_ASSERT(strcmp(t->efas[e].pcie_root, t->gpus[g].pcie_root) != 0);
}

/* A short buffer still gets the right count, and the first roots. */
static void test_roots_short_buffer(void)
{
	const struct hwdb_type *t = hwdb_lookup("p5.48xlarge");
	struct hwdb_root r[3];

	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	CU_ASSERT_EQUAL(hwdb_type_roots(t, NULL, 0), 8);
	CU_ASSERT_EQUAL(hwdb_type_roots(t, r, 3), 8);
	for (size_t i = 0; i < 3; i++) {
		DT_ASSERT_STR(r[i].name, t->gpus[i].pcie_root);
		CU_ASSERT_EQUAL(r[i].n_gpus, 1);
		CU_ASSERT_EQUAL(r[i].n_efas, 4);
	}
}

static void test_g5_48xlarge_flat(void)
{
	const struct hwdb_type *t = hwdb_lookup("g5.48xlarge");

	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	CU_ASSERT_EQUAL(t->n_gpus, 8);
	CU_ASSERT(t->n_efas > 0);
	for (size_t i = 0; i < t->n_gpus; i++)
		DT_ASSERT_STR(t->gpus[i].pcie_root, "pci0000:00");
	for (size_t i = 0; i < t->n_efas; i++)
		DT_ASSERT_STR(t->efas[i].pcie_root, "pci0000:00");
}

/* ---- Lookups ---- */

static void test_price_order(void)
{
	bool seen_unpriced = false;

	for (size_t i = 0; i < hwdb_count(); i++) {
		const struct hwdb_type *t = hwdb_at(i);

		CU_ASSERT_PTR_NOT_NULL_FATAL(t);
		CU_ASSERT_PTR_EQUAL(hwdb_lookup(t->name), t);
		if (!t->has_price)
			seen_unpriced = true;
		else
			CU_ASSERT(!seen_unpriced);      /* unpriced types come last */
		if (i > 0 && t->has_price) {
			const struct hwdb_type *p = hwdb_at(i - 1);

			CU_ASSERT(p->price < t->price ||
				  (p->price == t->price && strcmp(p->name, t->name) < 0));
		}
	}
	CU_ASSERT_PTR_NULL(hwdb_at(hwdb_count()));
	/* p5e has no on-demand offering in the facts */
	CU_ASSERT_FALSE(hwdb_lookup("p5e.48xlarge")->has_price);
}

static void test_family_lookup(void)
{
	const struct hwdb_type *out[16];
	size_t n = hwdb_family("p5", out, 16);
	size_t all = 0;

	CU_ASSERT_EQUAL(n, 2);
	for (size_t i = 0; i < n && i < 16; i++)
		DT_ASSERT_STR(out[i]->family, "p5");
	if (n == 2)
		CU_ASSERT(out[0]->price <= out[1]->price);
	/* p5e and p5en are their own families, not part of p5 */
	for (size_t i = 0; i < n && i < 16; i++)
		CU_ASSERT(!strncmp(out[i]->name, "p5.", 3));
	CU_ASSERT_EQUAL(hwdb_family("no-such-family", out, 16), 0);
	/* a short buffer still reports the full count */
	CU_ASSERT_EQUAL(hwdb_family("g6e", out, 1), 8);
	for (size_t i = 0; i < hwdb_count(); i++)
		if (!strcmp(hwdb_at(i)->family, "g6e"))
			all++;
	CU_ASSERT_EQUAL(all, 8);
}

static void test_lookup_unknown_and_suggest(void)
{
	CU_ASSERT_PTR_NULL(hwdb_lookup("p5.49xlarge"));
	CU_ASSERT_PTR_NULL(hwdb_lookup(""));
	CU_ASSERT_PTR_NULL(hwdb_lookup(NULL));
	DT_ASSERT_STR(hwdb_suggest("p5.48xlarg"), "p5.48xlarge");
	DT_ASSERT_STR(hwdb_suggest("g6e.48xl"), "g6e.48xlarge");
	DT_ASSERT_STR(hwdb_suggest("P5.48XLARGE"), "p5.48xlarge");     /* QA-66 */
	CU_ASSERT_PTR_NULL(hwdb_suggest("completely-different-thing"));
}

/* ---- Extras ---- */

static void test_extra_adds(void)
{
	struct dt_err err = { 0 };
	size_t before = hwdb_count();
	const struct hwdb_type *t;
	struct hwdb_root r[MAX_ROOTS];

	CU_ASSERT_EQUAL_FATAL(hwdb_load_extra(dt_fixture("hwdb/extra-add.yaml"), &err), 0);
	CU_ASSERT_EQUAL(hwdb_count(), before + 1);
	t = hwdb_lookup("zz9.24xlarge");
	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	CU_ASSERT_FALSE(t->builtin);
	CU_ASSERT_EQUAL(t->n_gpus, 4);
	CU_ASSERT_EQUAL(hwdb_type_roots(t, r, MAX_ROOTS), 2);
	CU_ASSERT_EQUAL(r[0].n_gpus, 2);
	CU_ASSERT_EQUAL(r[0].n_efas, 1);
	CU_ASSERT_PTR_EQUAL(hwdb_at(0), t);             /* the cheapest of all */
	CU_ASSERT_EQUAL(hwdb_family("zz9", NULL, 0), 1);
	hwdb_reset();
	CU_ASSERT_PTR_NULL(hwdb_lookup("zz9.24xlarge"));
	CU_ASSERT_EQUAL(hwdb_count(), before);
}

static void test_extra_overrides(void)
{
	struct dt_err err = { 0 };
	size_t before = hwdb_count();
	const struct hwdb_type *t;

	CU_ASSERT_EQUAL_FATAL(hwdb_load_extra(dt_fixture("hwdb/extra-override.yaml"), &err), 0);
	CU_ASSERT_EQUAL(hwdb_count(), before);
	t = hwdb_lookup("g5.xlarge");
	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	CU_ASSERT_FALSE(t->builtin);
	CU_ASSERT_EQUAL(t->n_gpus, 2);
	CU_ASSERT_DOUBLE_EQUAL(t->price, 99.5, 1e-9);
	DT_ASSERT_STR(t->family, "g5");                  /* derived from the name */
	/* its place in price order moved with its price */
	for (size_t i = 0; i + 1 < hwdb_count(); i++)
		if (hwdb_at(i) == t)
			CU_ASSERT(!hwdb_at(i + 1)->has_price || hwdb_at(i + 1)->price >= 99.5);
	hwdb_reset();
	t = hwdb_lookup("g5.xlarge");
	CU_ASSERT_TRUE(t->builtin);
	CU_ASSERT_EQUAL(t->n_gpus, 1);
}

static void check_refused(const char *fixture, const char *const *needles)
{
	struct dt_err err = { 0 };
	size_t before = hwdb_count();
	int rc = hwdb_load_extra(dt_fixture(fixture), &err);

	CU_ASSERT(rc < 0);
	for (size_t i = 0; needles[i]; i++) {
		bool found = strstr(err.msg, needles[i]) != NULL;

		if (!found)
			fprintf(stderr, "\n  %s: \"%s\" not in \"%s\"\n", fixture, needles[i], err.msg);
		CU_ASSERT(found);
	}
	/* the built-in data stays in force, nothing of the file got in */
	CU_ASSERT_EQUAL(hwdb_count(), before);
	CU_ASSERT_PTR_NULL(hwdb_lookup("zz8.xlarge"));
	CU_ASSERT_PTR_NULL(hwdb_lookup("zz9.xlarge"));
	CU_ASSERT_PTR_NOT_NULL(hwdb_lookup("p5.48xlarge"));
}

static void test_extra_refuses_malformed(void)
{
	check_refused("hwdb/bad-pcieroot.yaml", (const char *const[]){
		"bad-pcieroot.yaml", "instanceTypes[1]", "zz9.xlarge", "gpu.devices[1].pcieRoot",
		NULL });
	check_refused("hwdb/bad-unknown-field.yaml", (const char *const[]){
		"bad-unknown-field.yaml", "instanceTypes[0]", "vcpus", "unknown field", NULL });
	check_refused("hwdb/bad-version.yaml", (const char *const[]){
		"bad-version.yaml", "zz9.xlarge", "gpu.attributes.cudaComputeCapability",
		NULL });
	check_refused("hwdb/bad-syntax.yaml", (const char *const[]){ "bad-syntax.yaml", NULL });
	check_refused("hwdb/bad-duplicate.yaml", (const char *const[]){
		"instanceTypes[1]", "duplicate", NULL });
	check_refused("hwdb/bad-slice.yaml", (const char *const[]){
		"bad-slice.yaml", "zz9.xlarge", "gpu.nvidia.com", NULL });
	check_refused("hwdb/bad-memory.yaml", (const char *const[]){
		"bad-memory.yaml", "gpu.memory", NULL });
	check_refused("hwdb/no-such-file.yaml", (const char *const[]){ "no-such-file.yaml", NULL });
}

static void test_extra_from_buffer(void)
{
	static const char bad[] = "instanceTypes:\n- {name: zz9.xlarge, vcpu: 0, memoryMiB: 1, "
				  "arch: amd64}\n";
	static const char arch[] = "instanceTypes:\n- {name: zz9.xlarge, vcpu: 1, memoryMiB: 1, "
				   "arch: riscv}\n";
	static const char notmap[] = "- just a list\n";
	struct dt_err err = { 0 };

	CU_ASSERT(hwdb_load_extra_buf(bad, sizeof(bad) - 1, "buf.yaml", &err) < 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "vcpu"));
	CU_ASSERT(hwdb_load_extra_buf(arch, sizeof(arch) - 1, "buf.yaml", &err) < 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "Unsupported value: \"riscv\""));
	CU_ASSERT(hwdb_load_extra_buf(notmap, sizeof(notmap) - 1, "buf.yaml", &err) < 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "instanceTypes"));
	CU_ASSERT_PTR_NULL(hwdb_lookup("zz9.xlarge"));
}

/* The decoder's rules, one malformed entry each: what it must say. */
static void test_extra_rules(void)
{
#define HEAD "instanceTypes:\n- name: zz9.xlarge\n  vcpu: 4\n  memoryMiB: 16384\n  arch: amd64\n"
	static const struct { const char *yaml, *want; } cases[] = {
		{ HEAD "  gpu: {memory: 16Gi, count: 200}\n", "gpu.count: must be an integer" },
		{ HEAD "  gpu: {memory: 16Gi, count: 1, devices: [{}]}\n", "either devices or count" },
		{ HEAD "  gpu: {memory: 16Gi}\n", "needs devices or count" },
		{ HEAD "  gpu: {memory: 16Gi, devices: {a: 1}}\n", "gpu.devices: must be a list" },
		{ HEAD "  gpu: {memory: 16Gi, devices: [{name: a}, {name: a}]}\n",
		  "duplicate device name \"a\"" },
		{ HEAD "  gpu: {memory: 16Gi, devices: [{numaNode: -1}]}\n",
		  "gpu.devices[0].numaNode: must be between 0 and 1023" },
		{ HEAD "  gpu: {memory: 16Gi, devices: [{pcieRoot: PCI0000:44}]}\n",
		  "is not a PCIe root name" },
		{ HEAD "  gpu: {memory: 16Gi, devices: [{pcieRoot: pci0000:4G}]}\n",
		  "is not a PCIe root name" },
		{ HEAD "  gpu: {memory: 16Gi, attributes: {x: {float: 1.5}}, count: 1}\n",
		  "unknown value type \"float\"" },
		{ HEAD "  gpu: {memory: 16Gi, attributes: {x: {int: a}}, count: 1}\n",
		  "gpu.attributes.x: int value must be an integer" },
		{ HEAD "  gpu: {memory: 16Gi, attributes: {x: [1]}, count: 1}\n",
		  "gpu.attributes.x: must be a string, integer, boolean" },
		{ HEAD "  gpu: {memory: 16Gi, attributes: {resource.kubernetes.io/pcieRoot: pci0000:00},"
		  " count: 1}\n", "give it as the device's pcieRoot field" },
		{ HEAD "  gpu: {memory: 0, count: 1}\n", "not a positive whole number of bytes" },
		{ HEAD "  gpu: {pciId: 10de, count: 1}\n", "gpu.pciId" },
		{ HEAD "  efa: {pciId: \"10de:efa1\", count: 1}\n", "EFAs are Amazon devices" },
		{ HEAD "  draMetadata: true\n  gpu: {memory: 16Gi, count: 2}\n",
		  "gpu-0 has no pcieRoot, but draMetadata is true" },
		{ HEAD "  maxEfaInterfaces: 0\n  efa: {count: 2}\n", "less than the 2 EFAs" },
		{ HEAD "  onDemandPricePerHour: -1\n", "onDemandPricePerHour: must be a finite" },
		{ HEAD "  notes: [1]\n", "notes[0]: must be a string" },
		{ "instanceTypes:\n- {name: P5.48XLARGE, vcpu: 1, memoryMiB: 1, arch: amd64}\n",
		  "is not an instance type name" },
		{ "instanceTypes:\n- {vcpu: 1, memoryMiB: 1, arch: amd64}\n",
		  "instanceTypes[0]: name: required field" },
		{ "instanceTypes: []\nextra: 1\n", "extra: unknown field" },
		{ "instanceTypes: {a: 1}\n", "instanceTypes: must be a list" },
		{ "instanceTypes: []\n---\ninstanceTypes: []\n", "holds one document" },
	};
#undef HEAD
	size_t before = hwdb_count();

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct dt_err err = { 0 };
		int rc = hwdb_load_extra_buf(cases[i].yaml, strlen(cases[i].yaml), "rules.yaml",
					     &err);
		bool found = strstr(err.msg, cases[i].want) != NULL;

		CU_ASSERT(rc < 0);
		if (!found)
			fprintf(stderr, "\n  case %zu: \"%s\" not in \"%s\"\n", i, cases[i].want,
				err.msg);
		CU_ASSERT(found);
		CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "rules.yaml"));
	}
	CU_ASSERT_EQUAL(hwdb_count(), before);
	CU_ASSERT_PTR_NULL(hwdb_lookup("zz9.xlarge"));
}

/* The forms the format accepts, beyond what the built-in data uses. */
static void test_extra_forms(void)
{
	static const char yaml[] =
		"instanceTypes:\n"
		"- name: zz9.xlarge\n  vcpu: 4\n  memoryMiB: 16384\n  arch: arm64\n"
		"  gpu:\n    memory: 16Gi\n"
		"    attributes: {a: {int: 3}, b: {bool: false}, c: {string: \"7\"}, d: plain}\n"
		"    devices:\n    - {name: first, attributes: {a: 4}}\n    - {memory: 8Gi}\n"
		"  efa: {count: 1}\n";
	struct dt_err err = { 0 };
	const struct hwdb_type *t;
	const struct hwdb_attr *a;

	CU_ASSERT_EQUAL_FATAL(hwdb_load_extra_buf(yaml, sizeof(yaml) - 1, "forms.yaml", &err), 0);
	t = hwdb_lookup("zz9.xlarge");
	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	DT_ASSERT_STR(t->family, "zz9");
	CU_ASSERT_FALSE(t->has_price);
	CU_ASSERT_EQUAL(t->max_efa_interfaces, 1);
	CU_ASSERT_EQUAL_FATAL(t->n_gpus, 2);
	DT_ASSERT_STR(t->gpus[0].name, "first");
	DT_ASSERT_STR(t->gpus[1].name, "gpu-1");
	a = hwdb_device_attr(&t->gpus[0], "a");
	CU_ASSERT_TRUE(a && a->type == HWDB_ATTR_INT && a->i == 4);     /* overridden */
	a = hwdb_device_attr(&t->gpus[1], "a");
	CU_ASSERT_TRUE(a && a->type == HWDB_ATTR_INT && a->i == 3);
	a = hwdb_device_attr(&t->gpus[1], "b");
	CU_ASSERT_TRUE(a && a->type == HWDB_ATTR_BOOL && !a->b);
	a = hwdb_device_attr(&t->gpus[1], "c");
	CU_ASSERT_TRUE(a && a->type == HWDB_ATTR_STRING && !strcmp(a->str, "7"));
	CU_ASSERT_EQUAL(t->gpus[0].memory_mib, 16384);
	CU_ASSERT_EQUAL(t->gpus[1].memory_mib, 8192);
	CU_ASSERT_PTR_NULL(t->gpus[1].pcie_root);
	CU_ASSERT_EQUAL(t->gpus[1].numa_node, -1);
	hwdb_reset();
}

/* Every truncation of a valid file either loads or is refused with a
 * message naming it; none crashes, and a refusal changes nothing. */
static void test_extra_truncations(void)
{
	FILE *f = fopen(dt_fixture("hwdb/extra-add.yaml"), "rb");
	char buf[8192];
	size_t len, before = hwdb_count(), refused = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	len = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	CU_ASSERT_FATAL(len > 0 && len < sizeof(buf));
	for (size_t cut = 0; cut <= len; cut++) {
		struct dt_err err = { 0 };

		if (hwdb_load_extra_buf(buf, cut, "cut.yaml", &err) == 0) {
			hwdb_reset();
			continue;
		}
		refused++;
		CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "cut.yaml"));
		CU_ASSERT_EQUAL(hwdb_count(), before);
	}
	/* most cuts break the entry; the whole file loads */
	CU_ASSERT(refused > len / 2);
	CU_ASSERT_EQUAL(hwdb_count(), before);
}

/* ---- Writing entries back ---- */

static bool attrs_equal(const struct hwdb_device *a, const struct hwdb_device *b)
{
	if (a->n_attrs != b->n_attrs)
		return false;
	for (size_t i = 0; i < a->n_attrs; i++) {
		const struct hwdb_attr *x = &a->attrs[i];
		const struct hwdb_attr *y = hwdb_device_attr(b, x->name);

		if (!y || x->type != y->type)
			return false;
		if ((x->type == HWDB_ATTR_STRING || x->type == HWDB_ATTR_VERSION) &&
		    strcmp(x->str, y->str))
			return false;
		if ((x->type == HWDB_ATTR_INT && x->i != y->i) ||
		    (x->type == HWDB_ATTR_BOOL && x->b != y->b))
			return false;
	}
	return true;
}

static bool str_eq(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static bool devices_equal(const struct hwdb_device *a, const struct hwdb_device *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!str_eq(a[i].name, b[i].name) || !str_eq(a[i].pcie_root, b[i].pcie_root) ||
		    a[i].numa_node != b[i].numa_node || !str_eq(a[i].memory, b[i].memory) ||
		    a[i].memory_mib != b[i].memory_mib || !attrs_equal(&a[i], &b[i]))
			return false;
	return true;
}

static bool types_equal(const struct hwdb_type *a, const struct hwdb_type *b)
{
	bool ok = str_eq(a->name, b->name) && str_eq(a->family, b->family) &&
		  str_eq(a->arch, b->arch) && a->vcpu == b->vcpu &&
		  a->memory_mib == b->memory_mib && a->has_price == b->has_price &&
		  a->price == b->price && a->dra_metadata == b->dra_metadata &&
		  str_eq(a->gpu_model, b->gpu_model) && a->gpu_vendor == b->gpu_vendor &&
		  a->gpu_device == b->gpu_device && a->efa_device == b->efa_device &&
		  a->max_efa_interfaces == b->max_efa_interfaces &&
		  a->network_cards == b->network_cards &&
		  a->network_bandwidth_gbps == b->network_bandwidth_gbps &&
		  a->n_gpus == b->n_gpus && a->n_efas == b->n_efas && a->n_notes == b->n_notes &&
		  str_eq(a->accel_kind, b->accel_kind) && a->accel_count == b->accel_count &&
		  a->n_prices == b->n_prices;

	ok = ok && devices_equal(a->gpus, b->gpus, a->n_gpus) &&
	     devices_equal(a->efas, b->efas, a->n_efas);
	for (size_t i = 0; ok && i < a->n_notes; i++)
		ok = !strcmp(a->notes[i], b->notes[i]);
	for (size_t i = 0; ok && i < a->n_prices; i++)
		ok = !strcmp(a->prices[i].region, b->prices[i].region) &&
		     a->prices[i].price == b->prices[i].price;
	return ok;
}

/* Every entry, written in the source format, reads back equal. */
static void test_entry_round_trip(void)
{
	for (size_t i = 0; i < hwdb_count(); i++) {
		const struct hwdb_type *t = hwdb_at(i);
		struct strbuf sb = STRBUF_INIT;
		struct hwdb_source *src = NULL;
		struct dt_err err = { 0 };

		sb_puts(&sb, "instanceTypes:\n");
		CU_ASSERT_EQUAL_FATAL(hwdb_entry_write_yaml(t, &sb), 0);
		CU_ASSERT_EQUAL(hwdb_source_parse_types(sb.buf, sb.len, "roundtrip.yaml", true, &src,
							&err), 0);
		if (!src) {
			fprintf(stderr, "\n  %s: %s\n%s\n", t->name, err.msg, sb_str(&sb));
		} else {
			CU_ASSERT_EQUAL(src->n_types, 1);
			if (!types_equal(t, &src->types[0]))
				fprintf(stderr, "\n  %s does not read back equal:\n%s\n", t->name,
					sb_str(&sb));
			CU_ASSERT(types_equal(t, &src->types[0]));
		}
		hwdb_source_free(src);
		sb_free(&sb);
	}
}

/* ---- PCI ids ---- */

static void test_pci_ids(void)
{
	const struct hwdb_pci_gpu *g = hwdb_pci_gpu(0x10de, 0x2330);
	const struct hwdb_pci_efa *e = hwdb_pci_efa(0x1d0f, 0xefa2);

	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	DT_ASSERT_STR(g->architecture, "Hopper");
	CU_ASSERT_PTR_NULL(hwdb_pci_gpu(0x10de, 0x22a3));       /* NVSwitch */
	CU_ASSERT_PTR_NULL(hwdb_pci_gpu(0x1d0f, 0x2330));       /* wrong vendor */
	CU_ASSERT_PTR_NOT_NULL_FATAL(e);
	CU_ASSERT_EQUAL(e->generation, 3);
	DT_ASSERT_STR(e->subsystem, "efa2");
	CU_ASSERT_PTR_NULL(hwdb_pci_efa(0x1d0f, 0xec20));       /* ENA */

	CU_ASSERT_TRUE(hwdb_pci_ignored(0x10de, 0x22a3, 0x068000));   /* H100 NVSwitch */
	CU_ASSERT_TRUE(hwdb_pci_ignored(0x10de, 0x1af1, 0x068000));   /* A100 NVSwitch */
	CU_ASSERT_TRUE(hwdb_pci_ignored(0x1d0f, 0xec20, 0x020000));   /* ENA VF */
	CU_ASSERT_TRUE(hwdb_pci_ignored(0x1d0f, 0x8061, 0x010802));   /* EBS NVMe */
	CU_ASSERT_TRUE(hwdb_pci_ignored(0x1234, 0x5678, 0x060400));   /* any PCI bridge */
	CU_ASSERT_TRUE(hwdb_pci_ignored(0x15b3, 0x1021, 0x020700));   /* CX-7 InfiniBand */
	CU_ASSERT_FALSE(hwdb_pci_ignored(0x10de, 0x2330, 0x030200));  /* H100 */
	CU_ASSERT_FALSE(hwdb_pci_ignored(0x1d0f, 0xefa1, 0x020000));  /* EFA */
}

/* The two data files agree: every type's GPU id is a known GPU of the
 * architecture its devices publish, and its EFA id the generation whose
 * pciSubsystem its EFAs publish. */
static void test_pci_ids_agree_with_types(void)
{
	for (size_t i = 0; i < hwdb_count(); i++) {
		const struct hwdb_type *t = hwdb_at(i);

		if (t->gpu_device) {
			const struct hwdb_pci_gpu *g = hwdb_pci_gpu(t->gpu_vendor, t->gpu_device);

			CU_ASSERT_PTR_NOT_NULL(g);
			if (g && t->gpu_architecture)
				DT_ASSERT_STR(g->architecture, t->gpu_architecture);
		}
		/* A type whose EFA id was not scraped publishes no pciSubsystem. */
		for (size_t j = 0; t->efa_device && j < t->n_efas; j++) {
			const struct hwdb_pci_efa *e = hwdb_pci_efa(HWDB_PCI_VENDOR_AMAZON,
								    t->efa_device);
			const struct hwdb_attr *sub = hwdb_device_attr(&t->efas[j],
								       "dra.net/pciSubsystem");

			CU_ASSERT_PTR_NOT_NULL(e);
			CU_ASSERT_PTR_NOT_NULL(sub);
			if (e && sub)
				DT_ASSERT_STR(sub->str, e->subsystem);
		}
	}
}

/* ---- Consumable capacity ---- */

static void test_cc_parse(void)
{
	static const char *const bad[] = { "0", "-1", "shares", "4.5", "memory=true", "1Gi",
					   "+", " 4", "4 ", "Memory", "99999999999999999999",
					   NULL };
	struct hwdb_cc_mode m;
	struct dt_err err = { 0 };
	char buf[24];

	CU_ASSERT_EQUAL(hwdb_cc_parse(NULL, &m, &err), 0);
	CU_ASSERT_EQUAL(m.kind, HWDB_CC_DISABLED);
	CU_ASSERT_EQUAL(hwdb_cc_parse("", &m, &err), 0);
	CU_ASSERT_EQUAL(m.kind, HWDB_CC_DISABLED);
	CU_ASSERT_EQUAL(hwdb_cc_parse("disabled", &m, &err), 0);
	CU_ASSERT_EQUAL(m.kind, HWDB_CC_DISABLED);
	CU_ASSERT_EQUAL(hwdb_cc_parse("memory", &m, &err), 0);
	CU_ASSERT_EQUAL(m.kind, HWDB_CC_MEMORY);
	CU_ASSERT_EQUAL(hwdb_cc_parse("unlimited", &m, &err), 0);
	CU_ASSERT_EQUAL(m.kind, HWDB_CC_UNLIMITED);
	CU_ASSERT_EQUAL(hwdb_cc_parse("4", &m, &err), 0);
	CU_ASSERT_EQUAL(m.kind, HWDB_CC_SHARES);
	CU_ASSERT_EQUAL(m.shares, 4);
	DT_ASSERT_STR(hwdb_cc_name(&m, buf, sizeof(buf)), "4");
	CU_ASSERT_EQUAL(hwdb_cc_parse("+16", &m, &err), 0);
	CU_ASSERT_EQUAL(m.shares, 16);
	for (size_t i = 0; bad[i]; i++) {
		err.msg[0] = '\0';
		CU_ASSERT_EQUAL(hwdb_cc_parse(bad[i], &m, &err), -EINVAL);
		CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, bad[i]));
	}
}

static const struct model_capacity *capacity(const struct model_device *d, const char *name)
{
	for (size_t i = 0; i < d->n_capacity; i++)
		if (!strcmp(d->capacity[i].name, name))
			return &d->capacity[i];
	return NULL;
}

static void assert_q(const struct quantity *q, const char *want)
{
	char buf[QUANTITY_STR_MAX];

	quantity_format(q, buf);
	DT_ASSERT_STR(buf, want);
}

/* The request policies of karpenter-dra.md §4, mode by mode, on a GPU
 * whose memory is the type's own (read from hwdb, not assumed). */
static void check_mode(const char *mode_text)
{
	const struct hwdb_type *t = hwdb_lookup("p5.48xlarge");
	struct model_object *slices[HWDB_MAX_SLICES];
	struct model_set *set = model_set_new();
	struct dt_err err = { 0 };
	struct hwdb_cc_mode mode;
	char mem[QUANTITY_STR_MAX];
	size_t n = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(set);
	CU_ASSERT_EQUAL_FATAL(hwdb_cc_parse(mode_text, &mode, &err), 0);
	CU_ASSERT_EQUAL_FATAL(hwdb_slices(t, &mode, "node-a", set, slices, &n, &err), 0);
	CU_ASSERT_EQUAL_FATAL(n, 2);
	snprintf(mem, sizeof(mem), "%lldMi", (long long)t->gpus[0].memory_mib);
	for (size_t i = 0; i < slices[0]->u.slice.n_devices; i++) {
		const struct model_device *d = &slices[0]->u.slice.devices[i];
		const struct model_capacity *m = capacity(d, "memory");
		const struct model_capacity *s = capacity(d, "shares");
		const struct model_request_policy *p;

		CU_ASSERT_PTR_NOT_NULL_FATAL(m);
		assert_q(&m->value, mem);
		if (mode.kind == HWDB_CC_DISABLED) {
			CU_ASSERT_FALSE(d->allow_multiple_allocations);
			CU_ASSERT_FALSE(m->has_request_policy);
			CU_ASSERT_PTR_NULL(s);
			continue;
		}
		CU_ASSERT_TRUE(d->has_allow_multiple_allocations && d->allow_multiple_allocations);
		CU_ASSERT_TRUE_FATAL(m->has_request_policy);
		p = &m->request_policy;
		CU_ASSERT_TRUE(p->has_default && p->has_valid_range && p->has_min && p->has_max &&
			       p->has_step);
		assert_q(&p->def, mode.kind == HWDB_CC_MEMORY ? mem : "0");
		assert_q(&p->min, mode.kind == HWDB_CC_MEMORY ? "1Mi" : "0");
		assert_q(&p->max, mem);
		assert_q(&p->step, "1Mi");
		if (mode.kind != HWDB_CC_SHARES) {
			CU_ASSERT_PTR_NULL(s);
			continue;
		}
		CU_ASSERT_PTR_NOT_NULL_FATAL(s);
		CU_ASSERT_EQUAL(quantity_value_ceil(&s->value), mode.shares);
		CU_ASSERT_TRUE_FATAL(s->has_request_policy);
		CU_ASSERT_EQUAL(quantity_value_ceil(&s->request_policy.def), 1);
		CU_ASSERT_EQUAL(quantity_value_ceil(&s->request_policy.min), 1);
		CU_ASSERT_EQUAL(quantity_value_ceil(&s->request_policy.max), mode.shares);
		CU_ASSERT_EQUAL(s->request_policy.has_step, mode.shares > 1);
		if (s->request_policy.has_step)
			CU_ASSERT_EQUAL(quantity_value_ceil(&s->request_policy.step), 1);
	}
	/* EFAs are never shared */
	for (size_t i = 0; i < slices[1]->u.slice.n_devices; i++) {
		CU_ASSERT_FALSE(slices[1]->u.slice.devices[i].allow_multiple_allocations);
		CU_ASSERT_EQUAL(slices[1]->u.slice.devices[i].n_capacity, 0);
	}
	model_set_free(set);
}

static void test_cc_policies(void)
{
	check_mode("disabled");
	check_mode("memory");
	check_mode("unlimited");
	check_mode("1");
	check_mode("4");
	check_mode("7");
}

/* ---- ResourceSlices ---- */

static const struct model_attribute *attribute(const struct model_device *d, const char *name)
{
	for (size_t i = 0; i < d->n_attributes; i++)
		if (!strcmp(d->attributes[i].name, name))
			return &d->attributes[i];
	return NULL;
}

static void check_slice_devices(const struct hwdb_type *t, const struct model_object *o,
				bool efa)
{
	const struct model_resource_slice_spec *sp = &o->u.slice;
	const struct hwdb_device *devs = efa ? t->efas : t->gpus;
	size_t n = efa ? t->n_efas : t->n_gpus;

	DT_ASSERT_STR(sp->driver, efa ? "dra.net" : "gpu.nvidia.com");
	DT_ASSERT_STR(sp->pool.name, sp->node_name);
	CU_ASSERT_EQUAL_FATAL(sp->n_devices, n);
	for (size_t i = 0; i < n; i++) {
		const struct model_attribute *root =
			attribute(&sp->devices[i], "resource.kubernetes.io/pcieRoot");
		char want[32];

		snprintf(want, sizeof(want), "%s-%zu", efa ? "efa" : "gpu", i);
		DT_ASSERT_STR(sp->devices[i].name, want);
		if (devs[i].pcie_root) {
			CU_ASSERT_PTR_NOT_NULL_FATAL(root);
			DT_ASSERT_STR(root->v.str.s, devs[i].pcie_root);
		} else {
			CU_ASSERT_PTR_NULL(root);
		}
		if (!efa) {
			CU_ASSERT_PTR_NOT_NULL(attribute(&sp->devices[i], "productName"));
			CU_ASSERT_PTR_NOT_NULL(attribute(&sp->devices[i], "type"));
			/* runtime-only attributes are not invented */
			CU_ASSERT_PTR_NULL(attribute(&sp->devices[i], "driverVersion"));
		} else {
			CU_ASSERT_PTR_NOT_NULL(attribute(&sp->devices[i], "dra.net/rdma"));
			CU_ASSERT_EQUAL(attribute(&sp->devices[i], "dra.net/numaNode") != NULL,
					devs[i].numa_node >= 0);
		}
	}
}

static bool has_annotation(const struct model_object *o, const char *key, const char *value)
{
	for (size_t i = 0; i < o->meta.n_annotations; i++)
		if (!strcmp(o->meta.annotations[i].key, key))
			return !value || !strcmp(o->meta.annotations[i].value, value);
	return false;
}

/* Every type, every mode: the slices pass the model's own validation and
 * carry exactly the type's devices. */
static void test_every_slice_validates(void)
{
	static const char *const modes[] = { "disabled", "1", "4", "memory", "unlimited" };
	static const struct model_validate_opts vopts = { 0 };

	for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		struct model_set *set = model_set_new();
		struct hwdb_cc_mode mode;
		struct dt_diags diags;

		CU_ASSERT_PTR_NOT_NULL_FATAL(set);
		dt_diags_init(&diags);
		CU_ASSERT_EQUAL_FATAL(hwdb_cc_parse(modes[m], &mode, NULL), 0);
		for (size_t i = 0; i < hwdb_count(); i++) {
			const struct hwdb_type *t = hwdb_at(i);
			struct model_object *slices[HWDB_MAX_SLICES];
			struct dt_err err = { 0 };
			size_t n = 0, k = 0;

			CU_ASSERT_EQUAL_FATAL(hwdb_slices(t, &mode, NULL, set, slices, &n, &err), 0);
			CU_ASSERT_EQUAL(n, (t->n_gpus > 0) + (t->n_efas > 0));
			if (t->n_gpus) {
				check_slice_devices(t, slices[k], false);
				CU_ASSERT(has_annotation(slices[k], HWDB_ANNOTATION_NODE_UNIFORM,
							 "driverVersion,cudaDriverVersion"));
				k++;
			}
			if (t->n_efas)
				check_slice_devices(t, slices[k], true);
			for (size_t j = 0; j < n; j++) {
				size_t before = diags.n;
				int bad = model_validate_object(slices[j], &vopts, &diags);

				CU_ASSERT_EQUAL(bad, 0);
				for (size_t d = before; d < diags.n; d++)
					fprintf(stderr, "\n  %s (%s): %s\n", t->name, modes[m],
						diags.msgs[d]);
			}
		}
		dt_diags_free(&diags);
		model_set_free(set);
	}
}

/* ---- Catalogues ---- */

/* Two catalogues built side by side see their own extras only, and the
 * process's catalogue (hwdb_lookup) sees neither. */
static void test_catalog_side_by_side(void)
{
	struct hwdb_catalog *a = NULL, *b = NULL;
	struct dt_err err = { 0 };
	size_t before = hwdb_count();

	CU_ASSERT_EQUAL_FATAL(hwdb_catalog_new(NULL, &a, &err), 0);
	CU_ASSERT_EQUAL_FATAL(hwdb_catalog_new(NULL, &b, &err), 0);
	CU_ASSERT_EQUAL(hwdb_catalog_count(a), before);
	CU_ASSERT_EQUAL_FATAL(hwdb_catalog_load(a, dt_fixture("hwdb/extra-add.yaml"), &err), 0);
	CU_ASSERT_EQUAL_FATAL(hwdb_catalog_load(b, dt_fixture("hwdb/extra-override.yaml"), &err),
			      0);
	CU_ASSERT_EQUAL(hwdb_catalog_count(a), before + 1);
	CU_ASSERT_EQUAL(hwdb_catalog_count(b), before);
	CU_ASSERT_PTR_NOT_NULL(hwdb_catalog_lookup(a, "zz9.24xlarge"));
	CU_ASSERT_PTR_EQUAL(hwdb_catalog_at(a, 0), hwdb_catalog_lookup(a, "zz9.24xlarge"));
	CU_ASSERT_PTR_NULL(hwdb_catalog_lookup(b, "zz9.24xlarge"));
	CU_ASSERT_PTR_NULL(hwdb_lookup("zz9.24xlarge"));
	CU_ASSERT_DOUBLE_EQUAL(hwdb_catalog_lookup(b, "g5.xlarge")->price, 99.5, 1e-9);
	CU_ASSERT_TRUE(hwdb_catalog_lookup(a, "g5.xlarge")->builtin);
	CU_ASSERT_TRUE(hwdb_lookup("g5.xlarge")->builtin);
	CU_ASSERT_EQUAL(hwdb_catalog_family(a, "zz9", NULL, 0), 1);
	CU_ASSERT_EQUAL(hwdb_catalog_family(b, "zz9", NULL, 0), 0);
	DT_ASSERT_STR(hwdb_catalog_suggest(a, "zz9.24xlarg"), "zz9.24xlarge");
	CU_ASSERT(strcmp(hwdb_catalog_suggest(b, "zz9.24xlarg") ?: "", "zz9.24xlarge") != 0);
	hwdb_catalog_free(a);
	hwdb_catalog_free(b);
	CU_ASSERT_EQUAL(hwdb_count(), before);
}

/* The order is hwdb_at's: the same entries in the same order, and an
 * extra's entry takes the place its price gives it. */
static void test_catalog_order(void)
{
	struct hwdb_catalog *c = NULL;
	struct dt_err err = { 0 };

	CU_ASSERT_EQUAL_FATAL(hwdb_catalog_new(NULL, &c, &err), 0);
	CU_ASSERT_EQUAL_FATAL(hwdb_catalog_count(c), hwdb_count());
	for (size_t i = 0; i < hwdb_count(); i++)
		CU_ASSERT_PTR_EQUAL(hwdb_catalog_at(c, i), hwdb_at(i));
	CU_ASSERT_PTR_NULL(hwdb_catalog_at(c, hwdb_count()));
	CU_ASSERT_EQUAL_FATAL(hwdb_catalog_load(c, dt_fixture("hwdb/extra-override.yaml"), &err),
			      0);
	for (size_t i = 0; i + 1 < hwdb_catalog_count(c); i++) {
		const struct hwdb_type *x = hwdb_catalog_at(c, i), *y = hwdb_catalog_at(c, i + 1);

		CU_ASSERT(x->has_price || !y->has_price);
		if (x->has_price && y->has_price)
			CU_ASSERT(x->price < y->price ||
				  (x->price == y->price && strcmp(x->name, y->name) < 0));
		if (!x->has_price && !y->has_price)
			CU_ASSERT(strcmp(x->name, y->name) < 0);
	}
	hwdb_catalog_free(c);
}

/* A catalogue on another's entries: it sees the base's extras and adds its
 * own without changing the base; reset goes back to the base. */
static void test_catalog_base(void)
{
	struct hwdb_catalog *c = NULL;
	struct dt_err err = { 0 };

	CU_ASSERT_EQUAL_FATAL(hwdb_load_extra(dt_fixture("hwdb/extra-add.yaml"), &err), 0);
	CU_ASSERT_EQUAL_FATAL(hwdb_catalog_new(hwdb_catalog_process(), &c, &err), 0);
	CU_ASSERT_PTR_EQUAL(hwdb_catalog_lookup(c, "zz9.24xlarge"), hwdb_lookup("zz9.24xlarge"));
	CU_ASSERT_EQUAL_FATAL(hwdb_catalog_load(c, dt_fixture("hwdb/extra-override.yaml"), &err),
			      0);
	CU_ASSERT_FALSE(hwdb_catalog_lookup(c, "g5.xlarge")->builtin);
	CU_ASSERT_TRUE(hwdb_lookup("g5.xlarge")->builtin);
	hwdb_catalog_reset(c);
	CU_ASSERT_TRUE(hwdb_catalog_lookup(c, "g5.xlarge")->builtin);
	CU_ASSERT_PTR_NOT_NULL(hwdb_catalog_lookup(c, "zz9.24xlarge"));
	CU_ASSERT_EQUAL(hwdb_catalog_count(c), hwdb_count());
	hwdb_catalog_free(c);
	hwdb_reset();
	CU_ASSERT_PTR_NULL(hwdb_lookup("zz9.24xlarge"));
}

/* A learned entry as the coordinator holds one: zz9.24xlarge's facts under
 * another name, without a price (hwdb_entry_parse). */
static struct hwdb_entry *learned_entry(const char *name)
{
	struct hwdb_catalog *c = NULL;
	struct hwdb_entry *e = NULL;
	struct strbuf sb = STRBUF_INIT;
	struct dt_err err = { 0 };
	struct hwdb_type t;
	const struct hwdb_type *tp = &t;

	if (hwdb_catalog_new(NULL, &c, &err) ||
	    hwdb_catalog_load(c, dt_fixture("hwdb/extra-add.yaml"), &err))
		goto out;
	t = *hwdb_catalog_lookup(c, "zz9.24xlarge");
	t.name = name;
	t.has_price = false;
	if (hwdb_file_write_yaml(&tp, 1, &sb) == 0)
		hwdb_entry_parse(sb_str(&sb), name, "learned.yaml", &e, &err);
out:
	sb_free(&sb);
	hwdb_catalog_free(c);
	return e;
}

/* An entry a fleet learned from text (the coordinator's source format). */
static struct hwdb_entry *entry_from(const char *yaml, const char *name)
{
	struct hwdb_entry *e = NULL;
	struct dt_err err = { 0 };

	if (hwdb_entry_parse(yaml, name, "learned.yaml", &e, &err))
		fprintf(stderr, "\n  %s\n", err.msg);
	return e;
}

/* An incomplete built-in entry (no grouping, or no size) is completed by
 * what a fleet learned: devices and roots from the fleet, prices and
 * network facts from hwdb, hwdb's size where it has one. A learned entry
 * that contradicts what hwdb knows (another EFA count or id) changes
 * nothing, and a complete entry always wins. */
static void test_catalog_learned_merge(void)
{
	static const char c6in[] = "instanceTypes:\n- name: c6in.32xlarge\n  vcpu: 120\n"
		"  memoryMiB: 250000\n  arch: amd64\n  draMetadata: true\n  efa:\n"
		"    pciId: \"1d0f:efa1\"\n    devices:\n    - {pcieRoot: pci0000:00, numaNode: 0}\n"
		"    - {pcieRoot: pci0000:80, numaNode: 1}\n";
	static const char c6in_odd[] = "instanceTypes:\n- name: c6in.metal\n  vcpu: 128\n"
		"  memoryMiB: 262144\n  arch: amd64\n  draMetadata: true\n  efa:\n"
		"    pciId: \"1d0f:efa1\"\n    devices:\n    - {pcieRoot: pci0000:00}\n";
	static const char c6in_id[] = "instanceTypes:\n- name: c6in.metal\n  vcpu: 128\n"
		"  memoryMiB: 262144\n  arch: amd64\n  draMetadata: true\n  efa:\n"
		"    pciId: \"1d0f:efa2\"\n    devices:\n    - {pcieRoot: pci0000:00}\n"
		"    - {pcieRoot: pci0000:80}\n";
	static const char r9g[] = "instanceTypes:\n- name: r9g.48xlarge\n  vcpu: 192\n"
		"  memoryMiB: 1572864\n  arch: arm64\n  draMetadata: true\n  efa:\n"
		"    pciId: \"1d0f:efa3\"\n    devices:\n    - {pcieRoot: pci0000:00}\n";
	const struct hwdb_type *hw = hwdb_lookup("c6in.32xlarge"), *t;
	const char *const names[] = { "c6in.32xlarge", "c6in.metal", "c6in.metal", "r9g.48xlarge" };
	const char *const texts[] = { c6in, c6in_odd, c6in_id, r9g };
	struct hwdb_catalog *c = NULL;
	double p;

	CU_ASSERT_PTR_NOT_NULL_FATAL(hw);
	CU_ASSERT_EQUAL_FATAL(hwdb_catalog_new(NULL, &c, NULL), 0);
	for (size_t i = 0; i < 4; i++) {
		struct hwdb_entry *e = entry_from(texts[i], names[i]);

		CU_ASSERT_PTR_NOT_NULL_FATAL(e);
		CU_ASSERT_EQUAL(hwdb_catalog_add_learned(c, hwdb_entry_type(e), NULL), 0);
		hwdb_entry_free(e);
	}
	t = hwdb_catalog_lookup(c, "c6in.32xlarge");
	CU_ASSERT_TRUE(t->learned && t->dra_metadata);
	CU_ASSERT_FALSE(hwdb_type_incomplete(t));
	CU_ASSERT_EQUAL(t->vcpu, 128);                  /* hwdb's size, not the node's */
	CU_ASSERT_EQUAL(t->memory_mib, hw->memory_mib);
	CU_ASSERT(hwdb_type_price(t, NULL, &p));
	CU_ASSERT_DOUBLE_EQUAL(p, hw->price, 1e-9);
	CU_ASSERT(hwdb_type_price(t, "eu-west-1", &p));
	CU_ASSERT_EQUAL(t->network_cards, 2);
	CU_ASSERT_EQUAL(t->max_efa_interfaces, 2);
	CU_ASSERT_EQUAL(t->n_notes, hw->n_notes);
	DT_ASSERT_STR(t->efas[1].pcie_root, "pci0000:80");
	CU_ASSERT_EQUAL(t->efas[1].numa_node, 1);
	/* contradictions: hwdb's entry stays */
	CU_ASSERT_PTR_EQUAL(hwdb_catalog_lookup(c, "c6in.metal"), hwdb_lookup("c6in.metal"));
	/* no size in hwdb: the fleet's */
	t = hwdb_catalog_lookup(c, "r9g.48xlarge");
	CU_ASSERT_FALSE(hwdb_type_incomplete(hwdb_lookup("p5.48xlarge")));
	CU_ASSERT_TRUE(hwdb_type_incomplete(hwdb_lookup("r9g.48xlarge")));
	CU_ASSERT_TRUE(t->learned);
	CU_ASSERT_EQUAL(t->vcpu, 192);
	DT_ASSERT_STR(t->arch, "arm64");
	CU_ASSERT(hwdb_type_sized(t));
	CU_ASSERT_EQUAL(t->efa_device, 0xefa3);
	hwdb_catalog_free(c);
}

/* Learned entries are copied (they outlive their source), join only where
 * the name is free, sort with the types without a price, and a later
 * extra of the same name replaces one (a price for a learned type). */
static void test_catalog_learned(void)
{
	static const char priced[] = "instanceTypes:\n- {name: zz7.24xlarge, vcpu: 8, "
				     "memoryMiB: 32768, arch: amd64, onDemandPricePerHour: 1.5}\n";
	struct hwdb_entry *e = learned_entry("zz7.24xlarge");
	struct hwdb_entry *g5 = learned_entry("g5.xlarge");
	struct hwdb_catalog *c = NULL;
	struct dt_err err = { 0 };
	const struct hwdb_type *t;
	size_t before = hwdb_count();

	CU_ASSERT_PTR_NOT_NULL_FATAL(e);
	CU_ASSERT_PTR_NOT_NULL_FATAL(g5);
	CU_ASSERT_TRUE(hwdb_entry_type(e)->learned);
	CU_ASSERT_EQUAL_FATAL(hwdb_catalog_new(NULL, &c, &err), 0);
	CU_ASSERT_EQUAL(hwdb_catalog_add_learned(c, hwdb_entry_type(e), &err), 0);
	CU_ASSERT_EQUAL(hwdb_catalog_add_learned(c, hwdb_entry_type(g5), &err), 0);
	hwdb_entry_free(e);     /* the catalogue keeps its own copy */
	hwdb_entry_free(g5);
	CU_ASSERT_EQUAL(hwdb_catalog_count(c), before + 1);
	t = hwdb_catalog_lookup(c, "zz7.24xlarge");
	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	CU_ASSERT_TRUE(t->learned);
	CU_ASSERT_FALSE(t->builtin);
	CU_ASSERT_FALSE(t->has_price);
	CU_ASSERT_EQUAL(t->n_gpus, 4);
	DT_ASSERT_STR(t->gpus[3].pcie_root, "pci0000:20");
	DT_ASSERT_STR(hwdb_device_attr(&t->gpus[0], "productName")->str, "NVIDIA H100 80GB HBM3");
	/* no price: after every priced type, by name among the others */
	for (size_t i = 0, seen = 0; i < hwdb_catalog_count(c); i++) {
		const struct hwdb_type *x = hwdb_catalog_at(c, i);

		seen |= x == t;
		if (seen)
			CU_ASSERT_FALSE(x->has_price);
		if (!x->has_price && x != t)
			CU_ASSERT_EQUAL(seen, strcmp(x->name, t->name) > 0);
	}
	/* a built-in name stays the built-in entry */
	CU_ASSERT_TRUE(hwdb_catalog_lookup(c, "g5.xlarge")->builtin);
	CU_ASSERT_FALSE(hwdb_catalog_lookup(c, "g5.xlarge")->learned);
	CU_ASSERT_PTR_NULL(hwdb_lookup("zz7.24xlarge"));
	/* an extra of the name gives it a price */
	CU_ASSERT_EQUAL_FATAL(hwdb_catalog_load_buf(c, priced, sizeof(priced) - 1, "price.yaml",
						    &err), 0);
	t = hwdb_catalog_lookup(c, "zz7.24xlarge");
	CU_ASSERT_FALSE(t->learned);
	CU_ASSERT_TRUE(t->has_price);
	CU_ASSERT_EQUAL(hwdb_catalog_count(c), before + 1);
	hwdb_catalog_free(c);
}

/* An extra with an error changes nothing in the catalogue it was loaded
 * into, and the clash rules are those of --hwdb-extra: a name twice in
 * one file is refused, a later file wins over an earlier one. */
static void test_catalog_clashes(void)
{
	static const char dup[] = "instanceTypes:\n"
				  "- {name: zz8.xlarge, vcpu: 1, memoryMiB: 1024, arch: amd64}\n"
				  "- {name: zz8.xlarge, vcpu: 2, memoryMiB: 1024, arch: amd64}\n";
	static const char one[] = "instanceTypes:\n"
				  "- {name: zz8.xlarge, vcpu: 1, memoryMiB: 1024, arch: amd64}\n";
	static const char two[] = "instanceTypes:\n"
				  "- {name: zz8.xlarge, vcpu: 2, memoryMiB: 1024, arch: amd64}\n";
	struct hwdb_catalog *c = NULL;
	struct dt_err err = { 0 };
	size_t before = hwdb_count();

	CU_ASSERT_EQUAL_FATAL(hwdb_catalog_new(NULL, &c, &err), 0);
	CU_ASSERT(hwdb_catalog_load_buf(c, dup, sizeof(dup) - 1, "dup.yaml", &err) < 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "dup.yaml"));
	CU_ASSERT_EQUAL(hwdb_catalog_count(c), before);
	CU_ASSERT(hwdb_catalog_load(c, dt_fixture("hwdb/bad-pcieroot.yaml"), &err) < 0);
	CU_ASSERT_EQUAL(hwdb_catalog_count(c), before);
	CU_ASSERT_EQUAL_FATAL(hwdb_catalog_load_buf(c, one, sizeof(one) - 1, "1.yaml", &err), 0);
	CU_ASSERT_EQUAL_FATAL(hwdb_catalog_load_buf(c, two, sizeof(two) - 1, "2.yaml", &err), 0);
	CU_ASSERT_EQUAL(hwdb_catalog_count(c), before + 1);
	CU_ASSERT_EQUAL(hwdb_catalog_lookup(c, "zz8.xlarge")->vcpu, 2);
	hwdb_catalog_free(c);
	hwdb_catalog_free(NULL);
	hwdb_catalog_free(hwdb_catalog_process());      /* refused: still there */
	CU_ASSERT_EQUAL(hwdb_count(), before);
}

static void test_slices_bad_node_name(void)
{
	struct model_object *slices[HWDB_MAX_SLICES];
	struct model_set *set = model_set_new();
	struct dt_err err = { 0 };
	size_t n = 7;

	CU_ASSERT_PTR_NOT_NULL_FATAL(set);
	CU_ASSERT_EQUAL(hwdb_slices(hwdb_lookup("g5.xlarge"), NULL, "Bad_Node", set, slices, &n,
				    &err), -EINVAL);
	CU_ASSERT_EQUAL(n, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "Bad_Node"));
	model_set_free(set);
}

DT_SUITE_MAIN_WITH("hwdb", suite_init, suite_cleanup,
	DT_TEST(test_every_type_matches_facts),
	DT_TEST(test_efa_types_match_facts),
	DT_TEST(test_region_prices),
	DT_TEST(test_accelerators_named),
	DT_TEST(test_extra_regions_and_sizes),
	DT_TEST(test_families_covered),
	DT_TEST(test_p5_48xlarge_roots),
	DT_TEST(test_p5en_48xlarge_roots),
	DT_TEST(test_g6e_48xlarge_no_shared_root),
	DT_TEST(test_g5_48xlarge_flat),
	DT_TEST(test_roots_short_buffer),
	DT_TEST(test_price_order),
	DT_TEST(test_family_lookup),
	DT_TEST(test_lookup_unknown_and_suggest),
	DT_TEST(test_extra_adds),
	DT_TEST(test_extra_overrides),
	DT_TEST(test_extra_refuses_malformed),
	DT_TEST(test_extra_from_buffer),
	DT_TEST(test_extra_truncations),
	DT_TEST(test_extra_rules),
	DT_TEST(test_extra_forms),
	DT_TEST(test_entry_round_trip),
	DT_TEST(test_pci_ids),
	DT_TEST(test_pci_ids_agree_with_types),
	DT_TEST(test_cc_parse),
	DT_TEST(test_cc_policies),
	DT_TEST(test_every_slice_validates),
	DT_TEST(test_slices_bad_node_name),
	DT_TEST(test_catalog_side_by_side),
	DT_TEST(test_catalog_order),
	DT_TEST(test_catalog_base),
	DT_TEST(test_catalog_learned),
	DT_TEST(test_catalog_learned_merge),
	DT_TEST(test_catalog_clashes))
