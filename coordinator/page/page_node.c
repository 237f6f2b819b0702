/* page_node.c - a node's page (/nodes/NAME: its facts, its PCIe topology
 * drawn against its type's entry with the drift on the picture, the
 * differences in words beside it, the DeviceTaintRules the coordinator
 * made) and a type's page (/types/NAME: the entry drawn beside the most
 * common live shape of its nodes). */
#include "page_html.h"

#include <string.h>

static void fact(struct strbuf *out, const char *term)
{
	sb_printf(out, "<dt>%s</dt><dd>", term);
}

static void node_facts(struct strbuf *out, const struct page_meta *m, const struct page_node *v)
{
	const struct rec_node *n = v->node;

	sb_puts(out, "<dl class=\"facts\">");
	fact(out, "Instance type");
	page_type_link(out, n->instance_type);
	sb_printf(out, " <span class=\"muted\">(entry: %s)</span></dd>",
		  page_source_words(v->source));
	fact(out, "Verdict");
	page_verdict(out, n->verdict);
	sb_puts(out, "</dd>");
	fact(out, "Plannable");
	if (n->plannable) {
		sb_puts(out, "yes</dd>");
	} else {
		sb_puts(out, "<span class=\"no\">no</span>: ");
		page_text(out, n->why);
		sb_puts(out, "</dd>");
	}
	fact(out, "Devices");
	sb_printf(out, "%zu GPU%s, %zu EFA%s on the bus</dd>", n->gpus, n->gpus == 1 ? "" : "s",
		  n->efas, n->efas == 1 ? "" : "s");
	fact(out, "Shape");
	sb_puts(out, "<span class=\"mono\">");
	page_text(out, n->shape_key);
	sb_puts(out, "</span></dd>");
	fact(out, "Last report");
	page_time(out, n->received_ns, m->now_ns);
	sb_printf(out, " <span class=\"muted\">sequence %llu", (unsigned long long)n->sequence);
	if (n->agent_version && n->agent_version[0]) {
		sb_puts(out, ", agent ");
		page_text(out, n->agent_version);
	}
	sb_puts(out, "</span></dd></dl>");
}

static void differences(struct strbuf *out, const struct rec_node *n)
{
	sb_printf(out, "<h2>Differences from its entry (%zu)</h2>", dt_diags_count(&n->differences));
	if (!n->differences.n) {
		sb_puts(out, n->verdict == REC_UNKNOWN
			? "<p class=\"muted\">None to tell: no entry for its type yet.</p>"
			: "<p class=\"muted\">None: the node is what its entry says.</p>");
		return;
	}
	sb_puts(out, "<ul class=\"diffs\">");
	for (size_t i = 0; i < n->differences.n; i++) {
		sb_puts(out, "<li>");
		page_text(out, n->differences.msgs[i]);
		sb_puts(out, "</li>");
	}
	if (n->differences.dropped)
		sb_printf(out, "<li class=\"muted\">and %zu more</li>", n->differences.dropped);
	sb_puts(out, "</ul>");
}

static void rules_table(struct strbuf *out, const struct rem_assessment *a)
{
	sb_puts(out, "<table class=\"rules\"><thead><tr><th>DeviceTaintRule</th><th>Device</th>"
		"<th>Why</th></tr></thead><tbody>\n");
	for (size_t i = 0; i < a->n_devices; i++) {
		const struct rem_device *d = &a->devices[i];
		char name[REM_NAME_MAX];

		rem_rule_name(a->node, d->device, name, sizeof(name));
		sb_puts(out, "<tr><td class=\"mono\">");
		page_text(out, name);
		sb_puts(out, "</td><td class=\"mono\">");
		page_textf(out, "%s %s (%s%s%s)", d->driver, d->device, d->bdf, d->root[0] ? ", " : "",
			   d->root);
		sb_printf(out, "</td><td><b>%s</b>: ", rem_cause_value(d->cause));
		page_text(out, d->difference);
		sb_puts(out, "</td></tr>\n");
	}
	sb_puts(out, "</tbody></table>");
}

static void remedies(struct strbuf *out, const struct page_node *v)
{
	const struct rem_assessment *a = v->remedy;
	bool yaml = v->remedy_yaml && v->remedy_yaml[0];

	if (v->node->verdict != REC_DRIFT && !yaml)
		return;
	sb_printf(out, "<h2>%s</h2>", v->node->verdict == REC_DRIFT ? "DeviceTaintRules"
		  : "Remedies to lift");
	if (a && a->n_devices)
		rules_table(out, a);
	else if (v->node->verdict == REC_DRIFT)
		sb_puts(out, "<p class=\"muted\">No device to taint.</p>");
	if (a && a->node_unfit) {
		sb_puts(out, "<p>Node taint <span class=\"mono\">" REM_TAINT_KEY "="
			REM_NODE_TAINT_VALUE ":NoSchedule</span>: ");
		page_text(out, a->unfit_reason);
		sb_puts(out, "</p>");
	}
	if (yaml) {
		sb_puts(out, "<details><summary>For <span class=\"mono\">kubectl apply -f -</span>"
			"</summary><pre>");
		page_text(out, v->remedy_yaml);
		sb_puts(out, "</pre></details>");
	}
}

int page_node_html(const struct page_meta *m, const struct page_node *v, struct strbuf *out)
{
	const struct rec_node *n = v->node;

	page_begin(out, m, n->name);
	sb_puts(out, "<h1>");
	page_text(out, n->name);
	sb_puts(out, " ");
	page_verdict(out, n->verdict);
	sb_puts(out, "</h1>");
	node_facts(out, m, v);
	sb_puts(out, "<div class=\"cols\"><section class=\"topology\"><h2>PCIe topology</h2>");
	page_picture(out, v->picture, "The node's report could not be drawn.");
	sb_puts(out, "</section><section class=\"drift\">");
	differences(out, n);
	remedies(out, v);
	sb_puts(out, "<h2>Also as</h2><p><a href=\"/nodes/");
	page_url(out, n->name);
	sb_puts(out, "?o=json\">JSON</a> (as <span class=\"mono\">dratopo nodes -o json</span> "
		"has it) \xc2\xb7 <a href=\"/nodes/");
	page_url(out, n->name);
	sb_puts(out, "?o=svg\">the picture as SVG</a></p></section></div>");
	page_end(out, m);
	return sb_error(out);
}

/* ---- a type ---- */

static void type_facts(struct strbuf *out, const struct page_type *v)
{
	const struct rec_type_summary *s = v->summary;

	sb_puts(out, "<dl class=\"facts\">");
	fact(out, "Entry");
	sb_printf(out, "%s</dd>", page_source_words(v->source));
	fact(out, "Nodes");
	if (!s) {
		sb_puts(out, "none has reported</dd></dl>");
		return;
	}
	sb_printf(out, "<a href=\"/?type=");
	page_url(out, v->name);
	sb_printf(out, "#nodes\">%zu</a>: %zu match, %zu drift, %zu unknown, %zu stale; "
		  "%zu plannable</dd>", s->nodes, s->by_verdict[REC_MATCH] + s->by_verdict[REC_LEARNED],
		  s->by_verdict[REC_DRIFT], s->by_verdict[REC_UNKNOWN], s->stale, s->plannable);
	if (s->conflicted || s->hwdb_suspect) {
		fact(out, "Flags");
		page_type_flags(out, s);
		sb_puts(out, "</dd>");
	}
	sb_puts(out, "</dl>");
}

int page_type_html(const struct page_meta *m, const struct page_type *v, struct strbuf *out)
{
	const struct rec_type_summary *s = v->summary;

	page_begin(out, m, v->name);
	sb_puts(out, "<h1>");
	page_text(out, v->name);
	sb_puts(out, "</h1>");
	type_facts(out, v);
	sb_printf(out, "<div class=\"cols\"><section class=\"entry\"><h2>What %s says</h2>",
		  v->source == REC_SOURCE_LEARNED ? "the learned entry" : "hwdb");
	page_picture(out, v->entry, "hwdb lacks this type and the fleet has not learned it yet: "
		     "that takes enough nodes reporting the same shape (--learn-quorum).");
	sb_puts(out, "</section><section class=\"common\"><h2>Most common live shape</h2>");
	if (s && v->common) {
		sb_printf(out, "<p>%zu of %zu node%s, for example ", s->common_count, s->nodes,
			  s->nodes == 1 ? "" : "s");
		page_node_link(out, v->common_node);
		sb_puts(out, ": <span class=\"mono\">");
		page_text(out, s->common_shape);
		sb_puts(out, "</span></p>");
	}
	page_picture(out, v->common, "No node of this type has reported.");
	sb_puts(out, "</section></div>");
	if (v->entry_yaml) {
		sb_puts(out, "<details><summary>The entry in hwdb's source format "
			"(<span class=\"mono\">--hwdb-extra</span>)</summary><pre>");
		page_text(out, v->entry_yaml);
		sb_puts(out, "</pre></details>");
	}
	page_end(out, m);
	return sb_error(out);
}
