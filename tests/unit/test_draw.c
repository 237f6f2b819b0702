/* test_draw.c - the topology drawing (dt_draw): the agent's sysfs fixtures
 * probed and drawn against hwdb (a match draws nothing wrong; the degraded
 * p5.48xlarge draws its missing GPU and EFAs as ghosts in the roots that
 * lack them; the broken host its device off the bus, the one without a
 * root, and the roots it lacks), variations made from a probe (an EFA
 * moved to another root, another GPU model, a root hwdb lacks), entries
 * drawn as hwdb has them (with and without a grouping), and the SVG:
 * well-formed XML whatever the strings hold, hostile ones as text. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "draw.h"
#include "dt_test.h"
#include "probe.h"
#include "topo.h"

#define FIXTURES DT_AGENT_FIXTURES

static void probe_fixture(const char *fixture, struct topo *t)
{
	struct dt_err err = { 0 };
	char root[4096];

	snprintf(root, sizeof(root), "%s/%s", FIXTURES, fixture);
	CU_ASSERT_EQUAL_FATAL(probe_run(root, NULL, t, &err), 0);
}

/* The fixture drawn against hwdb's entry for its type (or none). */
static void draw_fixture(const char *fixture, bool against_hwdb, struct draw_picture *p)
{
	struct topo t;
	struct dt_err err = { 0 };

	probe_fixture(fixture, &t);
	CU_ASSERT_EQUAL_FATAL(draw_node(&t, against_hwdb ? hwdb_lookup(t.instance_type) : NULL,
					"node-1", p, &err), 0);
	topo_free(&t);
}

static const struct draw_root *root_named(const struct draw_picture *p, const char *name)
{
	for (size_t i = 0; i < p->n_roots; i++)
		if (!strcmp(p->roots[i].name, name))
			return &p->roots[i];
	return NULL;
}

/* "gpu:missing efa:ok ..." for a root's devices (root NULL: all marked
 * devices of the picture, "root/kind:mark"). */
static void marks(const struct draw_picture *p, const struct draw_root *r, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < p->n_roots; i++) {
		const struct draw_root *q = &p->roots[i];

		if (r && q != r)
			continue;
		for (size_t k = q->first; k < q->first + q->n && n < len; k++) {
			const struct draw_device *d = &p->devices[k];

			if (!r && d->mark == DRAW_OK)
				continue;
			n += (size_t)snprintf(buf + n, len - n, "%s%s%s%s:%s", n ? " " : "",
					      r ? "" : q->name, r ? "" : "/",
					      topo_kind_name(d->kind), draw_mark_name(d->mark));
		}
	}
}

static void test_match_draws_nothing_wrong(void)
{
	struct draw_picture p;
	char buf[512];

	draw_fixture("p5.48xlarge", true, &p);
	CU_ASSERT_TRUE(p.compared);
	CU_ASSERT_EQUAL(p.n_marked, 0);
	CU_ASSERT_EQUAL(p.n_roots, 8);
	CU_ASSERT_EQUAL(p.n_devices, 40);
	DT_ASSERT_STR(p.title, "node-1");
	DT_ASSERT_STR(p.subtitle, "8 GPUs, 32 EFAs on 8 PCIe roots; hwdb has 8 GPUs, 32 EFAs");
	/* by NUMA node, then name; GPUs first in each root */
	DT_ASSERT_STR(p.roots[0].name, "pci0000:44");
	CU_ASSERT_EQUAL(p.roots[0].numa, 0);
	DT_ASSERT_STR(p.roots[4].name, "pci0000:88");
	CU_ASSERT_EQUAL(p.roots[4].numa, 1);
	marks(&p, &p.roots[0], buf, sizeof(buf));
	DT_ASSERT_STR(buf, "gpu:ok efa:ok efa:ok efa:ok efa:ok");
	DT_ASSERT_STR(p.devices[p.roots[0].first].label, "0000:53:00.0");
	DT_ASSERT_STR(p.devices[p.roots[0].first].model, "H100 SXM5 80GB");
	draw_picture_free(&p);
}

static void test_degraded_draws_its_ghosts(void)
{
	struct draw_picture p;
	const struct draw_root *r44, *r99;
	char buf[512];

	draw_fixture("p5.48xlarge-degraded", true, &p);
	marks(&p, NULL, buf, sizeof(buf));
	DT_ASSERT_STR(buf, "pci0000:44/efa:missing pci0000:44/efa:missing pci0000:99/gpu:missing");
	r44 = root_named(&p, "pci0000:44");
	r99 = root_named(&p, "pci0000:99");
	CU_ASSERT_PTR_NOT_NULL_FATAL(r44);
	CU_ASSERT_PTR_NOT_NULL_FATAL(r99);
	CU_ASSERT_EQUAL(r44->mark, DRAW_ROOT_SHORT);
	CU_ASSERT_EQUAL(r99->mark, DRAW_ROOT_SHORT);
	DT_ASSERT_STR(r99->note, "hwdb has 1 GPU + 4 EFAs here; the node 0 GPUs + 4 EFAs");
	/* the ghost sits after the root's live GPUs (none), before its EFAs */
	CU_ASSERT_EQUAL(p.devices[r99->first].mark, DRAW_MISSING);
	DT_ASSERT_STR(p.devices[r99->first].note, "hwdb has 1 GPU on this root; the node lacks this one");
	CU_ASSERT_EQUAL(p.n_marked, 5);     /* three ghosts, two roots */
	draw_picture_free(&p);
}

static void test_broken_host(void)
{
	struct draw_picture p;
	const struct draw_root *none;
	size_t missing_roots = 0, left = 0;
	char buf[512];

	draw_fixture("broken", true, &p);
	none = root_named(&p, "");
	CU_ASSERT_PTR_NOT_NULL_FATAL(none);
	CU_ASSERT_EQUAL(none->mark, DRAW_ROOT_NONE);
	marks(&p, none, buf, sizeof(buf));
	DT_ASSERT_STR(buf, "gpu:no-root");
	marks(&p, root_named(&p, "pci0000:55"), buf, sizeof(buf));
	DT_ASSERT_STR(buf, "gpu:off-bus efa:ok efa:ok efa:ok efa:ok");
	for (size_t i = 0; i < p.n_roots; i++)
		missing_roots += p.roots[i].mark == DRAW_ROOT_MISSING;
	for (size_t i = 0; i < p.n_devices; i++) {
		if (p.devices[i].mark != DRAW_LEFT)
			continue;
		left++;
		/* the GPU it has without a root stands for one of the ghosts */
		CU_ASSERT_PTR_NOT_NULL(strstr(p.devices[i].note, "elsewhere (no PCIe root)"));
	}
	CU_ASSERT_EQUAL(missing_roots, 6);
	CU_ASSERT_EQUAL(left, 1);
	draw_picture_free(&p);
}

static void test_unknown_type_as_probed(void)
{
	struct draw_picture p;

	draw_fixture("unknown", true, &p);     /* hwdb has no entry: nothing to compare */
	CU_ASSERT_FALSE(p.compared);
	CU_ASSERT_EQUAL(p.n_marked, 0);
	CU_ASSERT_EQUAL(p.n_devices, 16);
	draw_picture_free(&p);
}

/* The p5.48xlarge fixture's devices, changed by fn, drawn against hwdb. */
static void draw_changed(void (*fn)(struct topo_device *devs, size_t *n), struct draw_picture *p)
{
	struct topo t, changed;
	struct topo_device devs[64];
	struct dt_err err = { 0 };
	size_t n;

	probe_fixture("p5.48xlarge", &t);
	n = t.n_devices;
	CU_ASSERT_FATAL(n + 1 < 64);
	memcpy(devs, t.devices, n * sizeof(devs[0]));
	fn(devs, &n);
	CU_ASSERT_EQUAL_FATAL(topo_from_devices("p5.48xlarge", devs, n, &changed, &err), 0);
	CU_ASSERT_EQUAL_FATAL(draw_node(&changed, hwdb_lookup("p5.48xlarge"), NULL, p, &err), 0);
	topo_free(&changed);
	topo_free(&t);
}

static struct topo_device *find(struct topo_device *devs, size_t n, const char *bdf)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(devs[i].bdf_str, bdf))
			return &devs[i];
	CU_FAIL_FATAL("no such device in the fixture");
	return NULL;
}

static void move_efa(struct topo_device *devs, size_t *n)
{
	/* an EFA of pci0000:44 shows up under pci0000:55 */
	snprintf(find(devs, *n, "0000:4f:00.0")->pcie_root, TOPO_NAME_MAX, "pci0000:55");
}

static void test_efa_off_its_root(void)
{
	struct draw_picture p;
	const struct draw_root *r44, *r55;
	char buf[512];

	draw_changed(move_efa, &p);
	marks(&p, NULL, buf, sizeof(buf));
	DT_ASSERT_STR(buf, "pci0000:44/efa:left");
	r44 = root_named(&p, "pci0000:44");
	r55 = root_named(&p, "pci0000:55");
	CU_ASSERT_EQUAL(r44->mark, DRAW_ROOT_SHORT);
	CU_ASSERT_EQUAL(r55->mark, DRAW_ROOT_SURPLUS);
	DT_ASSERT_STR(r55->note, "hwdb has 1 GPU + 4 EFAs here; the node 1 GPU + 5 EFAs");
	CU_ASSERT_PTR_NOT_NULL(strstr(p.devices[r44->first + 4].note, "elsewhere (pci0000:55)"));
	DT_ASSERT_STR(p.title, "p5.48xlarge");    /* no title given: the type */
	draw_picture_free(&p);
}

static void other_gpu(struct topo_device *devs, size_t *n)
{
	find(devs, *n, "0000:97:00.0")->device = 0x2324;
}

static void test_wrong_model(void)
{
	struct draw_picture p;
	char buf[512];

	draw_changed(other_gpu, &p);
	marks(&p, NULL, buf, sizeof(buf));
	DT_ASSERT_STR(buf, "pci0000:88/gpu:wrong-model");
	CU_ASSERT_PTR_NOT_NULL(strstr(p.devices[root_named(&p, "pci0000:88")->first].note,
				      "model 10de:2324; hwdb has 10de:2330"));
	draw_picture_free(&p);
}

static void extra_root(struct topo_device *devs, size_t *n)
{
	struct topo_device *d = &devs[(*n)++];

	*d = *find(devs, *n - 1, "0000:4f:00.0");
	snprintf(d->bdf_str, sizeof(d->bdf_str), "0000:f1:00.0");
	snprintf(d->pcie_root, sizeof(d->pcie_root), "pci0000:f0");
}

static void test_root_hwdb_lacks(void)
{
	struct draw_picture p;
	const struct draw_root *r;
	char buf[512];

	draw_changed(extra_root, &p);
	marks(&p, NULL, buf, sizeof(buf));
	DT_ASSERT_STR(buf, "pci0000:f0/efa:unexpected");
	r = root_named(&p, "pci0000:f0");
	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	CU_ASSERT_EQUAL(r->mark, DRAW_ROOT_UNEXPECTED);
	draw_picture_free(&p);
}

static void test_type_as_hwdb_has_it(void)
{
	struct draw_picture p;
	struct dt_err err = { 0 };
	const struct hwdb_type *flat = NULL;

	CU_ASSERT_EQUAL_FATAL(draw_type(hwdb_lookup("p5.48xlarge"), &p, &err), 0);
	CU_ASSERT_EQUAL(p.n_roots, 8);
	CU_ASSERT_EQUAL(p.n_devices, 40);
	CU_ASSERT_EQUAL(p.n_marked, 0);
	DT_ASSERT_STR(p.subtitle, "8 GPUs, 32 EFAs on 8 PCIe roots");
	DT_ASSERT_STR(p.devices[0].label, "gpu-0");
	DT_ASSERT_STR(p.devices[0].model, "H100 SXM5 80GB");     /* as the nodes' are named */
	draw_picture_free(&p);
	/* a type whose device list was not scraped: one box, roots unknown */
	for (size_t i = 0; i < hwdb_count() && !flat; i++)
		if (!hwdb_at(i)->dra_metadata && hwdb_at(i)->n_gpus)
			flat = hwdb_at(i);
	CU_ASSERT_PTR_NOT_NULL_FATAL(flat);
	CU_ASSERT_EQUAL_FATAL(draw_type(flat, &p, &err), 0);
	CU_ASSERT_EQUAL(p.n_roots, 1);
	CU_ASSERT_EQUAL(p.roots[0].mark, DRAW_ROOT_UNPLACED);
	CU_ASSERT_EQUAL(p.n_devices, flat->n_gpus + flat->n_efas);
	CU_ASSERT_EQUAL(p.n_marked, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(p.subtitle, "(PCIe roots unknown)"));
	draw_picture_free(&p);
}

/* ---- the SVG ---- */

/* Whether s is well-formed XML as far as draw_svg writes it: an optional
 * declaration, elements properly nested with double-quoted attributes,
 * no '<' or bare '&' in text or values, one root element. */
static bool well_formed(const char *s)
{
	const char *stack[64];
	size_t depth = 0, roots = 0;

	if (!strncmp(s, "<?xml", 5) && !(s = strstr(s, "?>")))
		return false;
	for (s += s[0] == '?' ? 2 : 0; *s; s++) {
		if (*s == '&') {
			size_t n = strspn(s + 1, "#abcdefghijklmnopqrstuvwxyz0123456789");

			if (!n || s[1 + n] != ';')
				return false;
		} else if (*s == '<' && s[1] == '/') {
			size_t n = strcspn(s + 2, ">");

			if (!depth || strncmp(stack[depth - 1], s + 2, n) ||
			    (stack[depth - 1][n] != ' ' && stack[depth - 1][n] != '>' &&
			     stack[depth - 1][n] != '/'))
				return false;
			depth--;
			s += 2 + n;
		} else if (*s == '<') {
			const char *name = s + 1, *end;

			if (!depth && roots++)
				return false;
			for (end = name; *end && *end != '>'; end++) {
				if (*end == '<')
					return false;
				if (*end == '"') {
					const char *close = strchr(end + 1, '"');

					if (!close || memchr(end + 1, '<', (size_t)(close - end - 1)))
						return false;
					end = close;
				}
			}
			if (!*end || depth == 64)
				return false;
			if (end[-1] != '/')
				stack[depth++] = name;
			s = end;
		}
	}
	return depth == 0 && roots == 1;
}

static void test_svg_of_every_fixture_is_xml(void)
{
	static const char *const fixtures[] = {
		"p5.48xlarge", "p5.48xlarge-degraded", "broken", "p4d.24xlarge", "g5.48xlarge",
		"p5en.48xlarge", "g6e.48xlarge", "unknown",
	};

	/* the checker itself */
	CU_ASSERT_TRUE(well_formed("<?xml version=\"1.0\"?>\n<svg a=\">\"><g/><t>x &amp; y</t></svg>\n"));
	CU_ASSERT_FALSE(well_formed("<svg a=\"<\"></svg>"));
	CU_ASSERT_FALSE(well_formed("<svg><g></svg></g>"));
	CU_ASSERT_FALSE(well_formed("<svg>a<b</svg>"));
	CU_ASSERT_FALSE(well_formed("<svg>&x</svg>"));
	CU_ASSERT_FALSE(well_formed("<svg></svg><svg></svg>"));
	for (size_t i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++) {
		struct draw_picture p;
		struct strbuf sb = STRBUF_INIT;

		draw_fixture(fixtures[i], true, &p);
		CU_ASSERT_EQUAL(draw_svg(&p, &(struct draw_svg_opts){ .standalone = true }, &sb), 0);
		if (!well_formed(sb_str(&sb)))
			CU_FAIL("an SVG is not well-formed XML");
		CU_ASSERT_EQUAL(strncmp(sb_str(&sb), "<?xml version=\"1.0\"", 19), 0);
		/* the p5's page budget is 200 KB; its picture is a fraction */
		CU_ASSERT(sb.len < 64 * 1024);
		sb_free(&sb);
		draw_picture_free(&p);
	}
}

static void test_svg_marks_and_legend(void)
{
	struct draw_picture p;
	struct strbuf sb = STRBUF_INIT;
	const char *s;

	draw_fixture("p5.48xlarge-degraded", true, &p);
	CU_ASSERT_EQUAL(draw_svg(&p, NULL, &sb), 0);
	s = sb_str(&sb);
	CU_ASSERT_EQUAL(strncmp(s, "<svg xmlns=\"http://www.w3.org/2000/svg\"", 39), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "<g class=\"root short\" data-mark=\"short\" data-root=\"pci0000:99\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "<g class=\"dev gpu missing\" data-kind=\"gpu\" data-mark=\"missing\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(s, ">missing: hwdb has it on this root</text>"));
	/* only the marks used are in the legend */
	CU_ASSERT_PTR_NULL(strstr(s, "fell off the bus</text>"));
	sb_free(&sb);
	draw_picture_free(&p);
}

static void test_svg_hostile_strings(void)
{
	static const char hostile[] = "\"'><script>alert(1)</script>&\x01\xff";
	struct topo t, h;
	struct topo_device devs[64];
	struct draw_picture p;
	struct strbuf sb = STRBUF_INIT;
	struct dt_err err = { 0 };
	const char *caption[] = { hostile };
	const char *s;
	size_t n;

	probe_fixture("p5.48xlarge", &t);
	n = t.n_devices;
	memcpy(devs, t.devices, n * sizeof(devs[0]));
	for (size_t i = 0; i < n; i++)
		if (!strcmp(devs[i].pcie_root, "pci0000:44"))
			snprintf(devs[i].pcie_root, TOPO_NAME_MAX, "p<i>'\"&");
	CU_ASSERT_EQUAL_FATAL(topo_from_devices(hostile, devs, n, &h, &err), 0);
	CU_ASSERT_EQUAL_FATAL(draw_node(&h, NULL, hostile, &p, &err), 0);
	CU_ASSERT_EQUAL(draw_svg(&p, &(struct draw_svg_opts){ .standalone = true,
							   .caption = caption, .n_caption = 1 }, &sb), 0);
	s = sb_str(&sb);
	CU_ASSERT_TRUE(well_formed(s));
	CU_ASSERT_PTR_NULL(strstr(s, "<script"));
	CU_ASSERT_PTR_NULL(strstr(s, "<i>"));
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "&quot;&#39;&gt;&lt;script&gt;alert(1)&lt;/script&gt;&amp;"
				      "\xef\xbf\xbd\xef\xbf\xbd"));
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "data-root=\"p&lt;i&gt;&#39;&quot;&amp;\""));
	sb_free(&sb);
	draw_picture_free(&p);
	topo_free(&h);
	topo_free(&t);
}

static void test_long_names_are_cut(void)
{
	struct draw_picture p = { 0 };
	struct draw_root root = { .numa = 0, .first = 0, .n = 1 };
	struct draw_device dev = { .kind = TOPO_GPU };
	struct strbuf sb = STRBUF_INIT;
	char title[400];

	memset(title, 'x', sizeof(title) - 1);
	title[sizeof(title) - 1] = '\0';
	memcpy(title, "\xc3\xa9", 2);          /* a 2-byte character first */
	snprintf(root.name, sizeof(root.name), "pci0000:44");
	snprintf(dev.model, sizeof(dev.model), "%.90s", title);
	p.title = title;
	p.roots = &root;
	p.n_roots = 1;
	p.devices = &dev;
	p.n_devices = 1;
	CU_ASSERT_EQUAL(draw_svg(&p, NULL, &sb), 0);
	CU_ASSERT_TRUE(well_formed(sb_str(&sb)));
	/* the title element keeps it whole, the drawn text is cut */
	CU_ASSERT_PTR_NOT_NULL(strstr(sb_str(&sb), title));
	CU_ASSERT_PTR_NOT_NULL(strstr(sb_str(&sb), "xxx\xe2\x80\xa6</text>"));
	sb_free(&sb);
}

DT_SUITE_MAIN_WITH("draw", dt_agent_fixtures, NULL,
		   DT_TEST(test_match_draws_nothing_wrong),
		   DT_TEST(test_degraded_draws_its_ghosts),
		   DT_TEST(test_broken_host),
		   DT_TEST(test_unknown_type_as_probed),
		   DT_TEST(test_efa_off_its_root),
		   DT_TEST(test_wrong_model),
		   DT_TEST(test_root_hwdb_lacks),
		   DT_TEST(test_type_as_hwdb_has_it),
		   DT_TEST(test_svg_of_every_fixture_is_xml),
		   DT_TEST(test_svg_marks_and_legend),
		   DT_TEST(test_svg_hostile_strings),
		   DT_TEST(test_long_names_are_cut))
