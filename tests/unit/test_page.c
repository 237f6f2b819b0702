/* test_page.c - the status pages rendered from views (dt_page), without a
 * coordinator: every string a report or a file brings is escaped in text
 * and attributes and %-encoded in links; the node table's paging links;
 * the in-flight section with and without a controller, bounded; a node's
 * page (its picture, differences, DeviceTaintRules) and a type's; the
 * p5.48xlarge node page's size. The pages in a browser are page_e2e's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt_test.h"
#include "page.h"
#include "probe.h"
#include "topo_verify.h"

#define FIXTURES DT_AGENT_FIXTURES
#define EVIL "\"'><script>alert(1)</script>&"
#define EVIL_HTML "&quot;&#39;&gt;&lt;script&gt;alert(1)&lt;/script&gt;&amp;"

static const struct page_meta meta = { .version = "9.9.9", .now_ns = 1800000000000000000LL };

/* No markup of a hostile string anywhere in html. */
static void assert_inert(const char *html)
{
	CU_ASSERT_PTR_NULL(strstr(html, "<script"));
	CU_ASSERT_PTR_NULL(strstr(html, "'><"));
	CU_ASSERT_PTR_NULL(strstr(html, "\"'>"));
}

static struct rec_node node(const char *name, const char *type, enum rec_verdict v, bool plannable,
			    const char *why)
{
	return (struct rec_node){ .name = (char *)name, .instance_type = (char *)type, .verdict = v,
				  .shape_key = (char *)"v1 8*(gpu1x10de:2330+efa4x1d0f:efa1)",
				  .gpus = 8, .efas = 32, .plannable = plannable, .why = (char *)why,
				  .agent_version = (char *)"0.1.0", .boot_id = (char *)"b",
				  .received_ns = meta.now_ns - 12000000000LL };
}

static void fleet(const struct page_fleet *v, struct strbuf *out)
{
	sb_init(out);
	CU_ASSERT_EQUAL(page_fleet_html(&meta, v, out), 0);
}

static void test_fleet_escapes_everything(void)
{
	struct rec_type_summary types[] = {
		{ .type = (char *)"p5.48xlarge", .source = REC_SOURCE_HWDB, .nodes = 1,
		  .by_verdict = { [REC_MATCH] = 1 }, .plannable = 1,
		  .common_shape = (char *)"v1 8*(gpu1x10de:2330+efa4x1d0f:efa1)", .common_count = 1 },
		{ .type = (char *)"a b/" EVIL, .source = REC_SOURCE_NONE, .nodes = 1,
		  .by_verdict = { [REC_UNKNOWN] = 1 }, .common_shape = (char *)EVIL,
		  .common_count = 1, .hwdb_suspect = true },
	};
	struct rec_node nodes[] = {
		node("gpu-a", "p5.48xlarge", REC_MATCH, true, ""),
		node("evil-1", "a b/" EVIL, REC_UNKNOWN, false, "unknown: " EVIL),
	};
	struct rec_type_list tl = { types, 2 };
	struct rec_node_list nl = { nodes, 2, false, 2, 0 };
	struct page_fleet v = { &tl, &nl, { "a b/" EVIL, REC_UNKNOWN, 0, NULL, PAGE_ROWS_DEFAULT },
				NULL };
	struct strbuf out;
	const char *s;

	fleet(&v, &out);
	s = sb_str(&out);
	assert_inert(s);
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "<!DOCTYPE html>"));
	/* text, attributes, links and the filter's options */
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "<tr data-type=\"a b/" EVIL_HTML "\">"));
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "<a href=\"/types/a%20b%2F%22%27%3E%3Cscript%3Ealert%281%29"
				      "%3C%2Fscript%3E%26\">a b/" EVIL_HTML "</a>"));
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "<option value=\"a b/" EVIL_HTML "\" selected>"));
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "<td>unknown: " EVIL_HTML "</td>"));
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "<option value=\"unknown\" selected>"));
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "<option value=\"no\" selected>"));
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "data-flag=\"hwdb-suspect\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "<tr class=\"match\" data-node=\"gpu-a\" data-verdict=\"match\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "(12s ago)"));
	/* nothing from elsewhere */
	CU_ASSERT_PTR_NULL(strstr(s, "src="));
	CU_ASSERT_PTR_NULL(strstr(s, "http"));
	sb_free(&out);
}

static void test_fleet_paging(void)
{
	struct rec_node nodes[] = {
		node("n-101", "p5.48xlarge", REC_MATCH, true, ""),
		node("n-102", "p5.48xlarge", REC_MATCH, true, ""),
	};
	struct rec_type_list tl = { NULL, 0 };
	struct rec_node_list nl = { nodes, 2, true, 250, 100 };
	struct page_fleet v = { &tl, &nl, { "p5.48xlarge", -1, 1, "n-100", 2 }, NULL };
	struct strbuf out;
	const char *s;

	fleet(&v, &out);
	s = sb_str(&out);
	CU_ASSERT_PTR_NOT_NULL(strstr(s, ">Nodes 101\xe2\x80\x93" "102 of 250<"));
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "<a rel=\"next\" href=\"/?type=p5.48xlarge&amp;plannable=yes"
				      "&amp;limit=2&amp;after=n-102#nodes\">next 2"));
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "<a href=\"/?type=p5.48xlarge&amp;plannable=yes&amp;limit=2"
				      "#nodes\">\xe2\x80\xb9 first</a>"));
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "<input type=\"hidden\" name=\"limit\" value=\"2\">"));
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "No node has reported yet."));
	sb_free(&out);
	/* the last page: no next link; an empty filter says so */
	nl = (struct rec_node_list){ NULL, 0, false, 0, 0 };
	v.q.after = NULL;
	fleet(&v, &out);
	CU_ASSERT_PTR_NULL(strstr(sb_str(&out), "rel=\"next\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(sb_str(&out), "No node matches these filters"));
	sb_free(&out);
}

static void test_inflight(void)
{
	struct rec_type_list tl = { NULL, 0 };
	struct rec_node_list nl = { NULL, 0, false, 0, 0 };
	struct page_inflight f = { .watching = true, .as_of_ns = meta.now_ns };
	struct page_fleet v = { &tl, &nl, { NULL, -1, -1, NULL, PAGE_ROWS_DEFAULT }, NULL };
	struct strbuf out;
	const char *s;

	fleet(&v, &out);
	CU_ASSERT_PTR_NOT_NULL(strstr(sb_str(&out), "data-watching=\"false\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(sb_str(&out), "No controller watches a cluster"));
	sb_free(&out);

	for (int i = 0; i < PAGE_INFLIGHT_MAX + 3; i++)
		CU_ASSERT_EQUAL(page_inflight_add_pod(&f, "default", i ? "trainer" : EVIL,
						      i ? "no GPU left" : EVIL, meta.now_ns), 0);
	CU_ASSERT_EQUAL(page_inflight_add_claim(&f, "default-x7k2p", "gpu", EVIL, "launching", 0), 0);
	CU_ASSERT_EQUAL(f.n_pods, PAGE_INFLIGHT_MAX);
	CU_ASSERT_EQUAL(f.more_pods, 3);
	v.inflight = &f;
	fleet(&v, &out);
	s = sb_str(&out);
	assert_inert(s);
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "data-watching=\"true\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "<h3>Pending pods (203)</h3>"));
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "default/" EVIL_HTML "</td>"));
	CU_ASSERT_PTR_NOT_NULL(strstr(s, ">and 3 more</td>"));
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "<h3>NodeClaims in flight (1)</h3>"));
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "<td>launching</td>"));
	sb_free(&out);
	page_inflight_free(&f);
	CU_ASSERT_PTR_NULL(f.pods);
}

/* The degraded p5.48xlarge as the coordinator would show it. */
static void test_node_page(void)
{
	struct topo t;
	struct topo_verify_result vr;
	struct draw_picture pic;
	struct rem_assessment rem;
	struct dt_err err = { 0 };
	const struct hwdb_type *e = hwdb_lookup("p5.48xlarge");
	struct rec_node n = node("gpu-b", "p5.48xlarge", REC_DRIFT, false, "drift: " EVIL);
	struct page_node v = { .node = &n, .picture = &pic, .source = REC_SOURCE_HWDB,
			       .remedy = &rem, .remedy_yaml = "apiVersion: resource.k8s.io/v1\n" };
	struct strbuf out = STRBUF_INIT;
	const char *s;

	CU_ASSERT_EQUAL_FATAL(probe_run(FIXTURES "/p5.48xlarge-degraded", NULL, &t, &err), 0);
	CU_ASSERT_EQUAL_FATAL(topo_verify_entry(&t, e, &vr, &err), 0);
	CU_ASSERT_EQUAL_FATAL(rem_assess("gpu-b", &vr, &t, e, &rem, &err), 0);
	CU_ASSERT_EQUAL_FATAL(draw_node(&t, e, "gpu-b", &pic, &err), 0);
	n.differences = vr.differences;
	CU_ASSERT_EQUAL(page_node_html(&meta, &v, &out), 0);
	s = sb_str(&out);
	assert_inert(s);
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"topology\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "data-mark=\"missing\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "<h2>Differences from its entry (5)</h2>"));
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "<li>GPU count: hwdb has 8 for p5.48xlarge, this node has 7</li>"));
	/* a rule for an EFA left without its GPU, named as DRANET names it */
	CU_ASSERT_PTR_NOT_NULL(strstr(s, ">dratopo-drift.gpu-b.pci-0000-a4-00-0</td>"));
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "<b>gpu-missing</b>"));
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "no</span>: drift: " EVIL_HTML "</dd>"));
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "<a href=\"/nodes/gpu-b?o=svg\">"));
	/* the page budget for a p5.48xlarge: 200 KB */
	CU_ASSERT(out.len < 200 * 1024);
	sb_free(&out);
	rem_assessment_free(&rem);
	draw_picture_free(&pic);
	topo_verify_result_free(&vr);
	topo_free(&t);
}

static void test_type_page(void)
{
	struct rec_type_summary sum = { .type = (char *)EVIL, .source = REC_SOURCE_NONE, .nodes = 2,
					.by_verdict = { [REC_UNKNOWN] = 2 }, .common_shape = (char *)EVIL,
					.common_count = 2, .conflicted = true };
	struct page_type v = { .name = EVIL, .summary = &sum, .source = REC_SOURCE_NONE };
	struct draw_picture pic;
	struct dt_err err = { 0 };
	struct strbuf out = STRBUF_INIT;
	const char *s;

	CU_ASSERT_EQUAL(page_type_html(&meta, &v, &out), 0);
	s = sb_str(&out);
	assert_inert(s);
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "<h1>" EVIL_HTML "</h1>"));
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "hwdb lacks this type and the fleet has not learned it yet"));
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "<a href=\"/?type=%22%27%3E%3Cscript%3Ealert%281%29%3C%2Fscript%3E%26#nodes\">2</a>"));
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "data-flag=\"conflict\""));
	sb_free(&out);

	CU_ASSERT_EQUAL_FATAL(draw_type(hwdb_lookup("p5.48xlarge"), &pic, &err), 0);
	v = (struct page_type){ .name = "p5.48xlarge", .source = REC_SOURCE_HWDB, .entry = &pic,
				.entry_yaml = "instanceTypes:\n- name: p5.48xlarge\n" };
	CU_ASSERT_EQUAL(page_type_html(&meta, &v, &out), 0);
	s = sb_str(&out);
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "<h2>What hwdb says</h2><div class=\"pic\"><svg"));
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "No node of this type has reported."));
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "<pre>instanceTypes:\n- name: p5.48xlarge\n</pre>"));
	sb_free(&out);
	draw_picture_free(&pic);
}

static void test_error_page(void)
{
	struct strbuf out = STRBUF_INIT;

	CU_ASSERT_EQUAL(page_error_html(&meta, "No such node", "no node " EVIL, &out), 0);
	assert_inert(sb_str(&out));
	CU_ASSERT_PTR_NOT_NULL(strstr(sb_str(&out), "<p>no node " EVIL_HTML "</p>"));
	CU_ASSERT_PTR_NOT_NULL(strstr(sb_str(&out), "dratopo-coordinator 9.9.9"));
	sb_free(&out);
}

DT_SUITE_MAIN_WITH("page", dt_agent_fixtures, NULL,
		   DT_TEST(test_fleet_escapes_everything),
		   DT_TEST(test_fleet_paging),
		   DT_TEST(test_inflight),
		   DT_TEST(test_node_page),
		   DT_TEST(test_type_page),
		   DT_TEST(test_error_page))
