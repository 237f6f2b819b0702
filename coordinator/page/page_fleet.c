/* page_fleet.c - the fleet page (/): per instance type, how its nodes stand
 * against hwdb (with the flags that say hwdb itself looks wrong, or the
 * nodes disagree); the nodes, filtered and paged so that a fleet of
 * thousands stays one quick page; what the controller has in flight. */
#include "page_html.h"

#include <inttypes.h>
#include <string.h>

static const char *const plannable_words[] = { "no", "yes" };

/* "/?type=..&amp;verdict=..": the fleet page with q's filters, from after. */
static void fleet_href(struct strbuf *out, const struct page_query *q, const char *after)
{
	const char *sep = "?";

	sb_puts(out, "/");
	if (q->type) {
		sb_printf(out, "%stype=", sep);
		page_url(out, q->type);
		sep = "&amp;";
	}
	if (q->verdict >= 0) {
		sb_printf(out, "%sverdict=%s", sep, rec_verdict_name((enum rec_verdict)q->verdict));
		sep = "&amp;";
	}
	if (q->plannable >= 0) {
		sb_printf(out, "%splannable=%s", sep, plannable_words[q->plannable > 0]);
		sep = "&amp;";
	}
	if (q->limit != PAGE_ROWS_DEFAULT) {
		sb_printf(out, "%slimit=%zu", sep, q->limit);
		sep = "&amp;";
	}
	if (after) {
		sb_printf(out, "%safter=", sep);
		page_url(out, after);
	}
	sb_puts(out, "#nodes");
}

static void summary(struct strbuf *out, const struct rec_type_list *types)
{
	size_t nodes = 0, plannable = 0, drift = 0, unknown = 0, stale = 0, flagged = 0;

	for (size_t i = 0; i < types->n; i++) {
		const struct rec_type_summary *t = &types->types[i];

		nodes += t->nodes;
		plannable += t->plannable;
		drift += t->by_verdict[REC_DRIFT];
		unknown += t->by_verdict[REC_UNKNOWN];
		stale += t->stale;
		flagged += t->hwdb_suspect || t->conflicted;
	}
	sb_printf(out, "<p class=\"summary\">%zu node%s of %zu instance type%s: <b>%zu plannable</b>, "
		  "%zu in drift, %zu of an unknown type, %zu stale", nodes, nodes == 1 ? "" : "s",
		  types->n, types->n == 1 ? "" : "s", plannable, drift, unknown, stale);
	if (flagged)
		sb_printf(out, "; <span class=\"flag\">%zu type%s flagged</span>", flagged,
			  flagged == 1 ? "" : "s");
	sb_puts(out, ".</p>");
}

static void types_table(struct strbuf *out, const struct rec_type_list *types)
{
	sb_puts(out, "<h2 id=\"types\">Instance types</h2>");
	if (!types->n) {
		sb_puts(out, "<p class=\"muted\">No node has reported yet.</p>");
		return;
	}
	sb_puts(out, "<table class=\"types\"><thead><tr><th>Instance type</th><th>Entry</th>"
		"<th class=\"n\">Nodes</th><th class=\"n\">Match</th><th class=\"n\">Drift</th>"
		"<th class=\"n\">Unknown</th><th class=\"n\">Stale</th><th class=\"n\">Plannable</th>"
		"<th>Most common shape</th><th>Flags</th></tr></thead><tbody>\n");
	for (size_t i = 0; i < types->n; i++) {
		const struct rec_type_summary *t = &types->types[i];

		sb_puts(out, "<tr data-type=\"");
		page_text(out, t->type);
		sb_puts(out, "\"><td>");
		page_type_link(out, t->type);
		sb_printf(out, "</td><td>%s</td><td class=\"n\">%zu</td><td class=\"n\">%zu</td>"
			  "<td class=\"n\">%zu</td><td class=\"n\">%zu</td><td class=\"n\">%zu</td>"
			  "<td class=\"n\">%zu</td><td><span class=\"mono nowrap\">",
			  rec_entry_source_name(t->source), t->nodes,
			  t->by_verdict[REC_MATCH] + t->by_verdict[REC_LEARNED],
			  t->by_verdict[REC_DRIFT], t->by_verdict[REC_UNKNOWN], t->stale, t->plannable);
		page_text(out, t->common_shape ? t->common_shape : "");
		sb_printf(out, "</span> <span class=\"muted\">(%zu of %zu)</span></td><td>",
			  t->common_count, t->nodes);
		page_type_flags(out, t);
		sb_puts(out, "</td></tr>\n");
	}
	sb_puts(out, "</tbody></table>");
}

static void option(struct strbuf *out, const char *value, const char *label, bool selected)
{
	sb_puts(out, "<option value=\"");
	page_text(out, value);
	sb_printf(out, "\"%s>", selected ? " selected" : "");
	page_text(out, label);
	sb_puts(out, "</option>");
}

static void filters(struct strbuf *out, const struct page_fleet *v)
{
	const struct page_query *q = &v->q;

	sb_puts(out, "<form class=\"filters\" method=\"get\" action=\"/#nodes\">"
		"<label>Instance type<select name=\"type\">");
	option(out, "", "any", !q->type);
	for (size_t i = 0; i < v->types->n; i++)
		option(out, v->types->types[i].type, v->types->types[i].type,
		       q->type && !strcmp(q->type, v->types->types[i].type));
	sb_puts(out, "</select></label><label>Verdict<select name=\"verdict\">");
	option(out, "", "any", q->verdict < 0);
	for (int i = 0; i < REC_N_VERDICTS; i++)
		option(out, rec_verdict_name((enum rec_verdict)i),
		       rec_verdict_name((enum rec_verdict)i), q->verdict == i);
	sb_puts(out, "</select></label><label>Plannable<select name=\"plannable\">");
	option(out, "", "any", q->plannable < 0);
	option(out, "yes", "yes", q->plannable == 1);
	option(out, "no", "no", q->plannable == 0);
	sb_puts(out, "</select></label>");
	if (q->limit != PAGE_ROWS_DEFAULT)
		sb_printf(out, "<input type=\"hidden\" name=\"limit\" value=\"%zu\">", q->limit);
	sb_puts(out, "<button type=\"submit\">Show</button><a href=\"/#nodes\">clear</a></form>");
}

static void pager(struct strbuf *out, const struct page_fleet *v)
{
	const struct rec_node_list *l = v->nodes;

	sb_puts(out, "<div class=\"pager\">");
	if (!l->n)
		sb_printf(out, "<span>No node%s</span>", l->total ? " on this page" :
			  " matches these filters");
	else
		sb_printf(out, "<span data-total=\"%zu\">Nodes %zu\xe2\x80\x93%zu of %zu</span>",
			  l->total, l->before + 1, l->before + l->n, l->total);
	if (v->q.after) {
		sb_puts(out, "<a href=\"");
		fleet_href(out, &v->q, NULL);
		sb_puts(out, "\">\xe2\x80\xb9 first</a>");
	}
	if (l->more && l->n) {
		sb_puts(out, "<a rel=\"next\" href=\"");
		fleet_href(out, &v->q, l->nodes[l->n - 1].name);
		sb_printf(out, "\">next %zu \xe2\x80\xba</a>", v->q.limit);
	}
	sb_puts(out, "</div>");
}

static void node_row(struct strbuf *out, const struct rec_node *n, int64_t now)
{
	sb_printf(out, "<tr class=\"%s\" data-node=\"", rec_verdict_name(n->verdict));
	page_text(out, n->name);
	sb_printf(out, "\" data-verdict=\"%s\" data-plannable=\"%s\"><td class=\"nowrap\">",
		  rec_verdict_name(n->verdict), plannable_words[n->plannable]);
	page_node_link(out, n->name);
	sb_puts(out, "</td><td class=\"nowrap\">");
	page_type_link(out, n->instance_type);
	sb_puts(out, "</td><td>");
	page_verdict(out, n->verdict);
	sb_printf(out, "</td><td class=\"n\">%zu</td><td class=\"n\">%zu</td><td%s>%s</td><td>",
		  n->gpus, n->efas, n->plannable ? "" : " class=\"no\"",
		  plannable_words[n->plannable]);
	sb_puts(out, "<span class=\"nowrap\">");
	page_time(out, n->received_ns, now);
	sb_puts(out, "</span>");
	sb_puts(out, "</td><td>");
	page_text(out, n->plannable ? "" : n->why);
	sb_puts(out, "</td></tr>\n");
}

static void nodes_table(struct strbuf *out, const struct page_meta *m, const struct page_fleet *v)
{
	sb_puts(out, "<h2 id=\"nodes\">Nodes</h2>");
	filters(out, v);
	pager(out, v);
	if (!v->nodes->n)
		return;
	sb_puts(out, "<table class=\"nodes\"><thead><tr><th>Node</th><th>Instance type</th>"
		"<th>Verdict</th><th class=\"n\">GPUs</th><th class=\"n\">EFAs</th>"
		"<th>Plannable</th><th>Last report</th><th>Why not plannable</th></tr></thead>"
		"<tbody>\n");
	for (size_t i = 0; i < v->nodes->n; i++)
		node_row(out, &v->nodes->nodes[i], m->now_ns);
	sb_puts(out, "</tbody></table>");
	if (v->nodes->n > 20)
		pager(out, v);
}

static void more_row(struct strbuf *out, size_t more, int cols)
{
	if (more)
		sb_printf(out, "<tr><td colspan=\"%d\" class=\"muted\">and %zu more</td></tr>", cols,
			  more);
}

static void inflight(struct strbuf *out, const struct page_meta *m, const struct page_inflight *f)
{
	bool watching = f && f->watching;

	sb_printf(out, "<section id=\"inflight\" data-watching=\"%s\"><h2>Pending pods and "
		  "NodeClaims in flight</h2>", watching ? "true" : "false");
	if (!watching) {
		sb_puts(out, "<p class=\"muted\">No controller watches a cluster from this "
			"coordinator: the pods the cluster cannot place yet, with the planner's "
			"reasons, and the NodeClaims being launched show here once one does.</p>"
			"</section>");
		return;
	}
	sb_puts(out, "<p class=\"muted\">As the controller last saw the cluster: ");
	page_time(out, f->as_of_ns, m->now_ns);
	sb_printf(out, "</p><h3>Pending pods (%zu)</h3>", f->n_pods + f->more_pods);
	if (f->n_pods) {
		sb_puts(out, "<table class=\"pending\"><thead><tr><th>Pod</th><th>Pending since</th>"
			"<th>Why (the planner's reason)</th></tr></thead><tbody>\n");
		for (size_t i = 0; i < f->n_pods; i++) {
			sb_puts(out, "<tr><td class=\"mono\">");
			page_textf(out, "%s/%s", f->pods[i].ns, f->pods[i].name);
			sb_puts(out, "</td><td>");
			page_time(out, f->pods[i].since_ns, m->now_ns);
			sb_puts(out, "</td><td>");
			page_text(out, f->pods[i].reason);
			sb_puts(out, "</td></tr>\n");
		}
		more_row(out, f->more_pods, 3);
		sb_puts(out, "</tbody></table>");
	}
	sb_printf(out, "<h3>NodeClaims in flight (%zu)</h3>", f->n_claims + f->more_claims);
	if (f->n_claims) {
		sb_puts(out, "<table class=\"claims\"><thead><tr><th>NodeClaim</th><th>NodePool</th>"
			"<th>Instance type</th><th>State</th><th>Created</th></tr></thead><tbody>\n");
		for (size_t i = 0; i < f->n_claims; i++) {
			const struct page_nodeclaim *c = &f->claims[i];

			sb_puts(out, "<tr><td class=\"mono\">");
			page_text(out, c->name);
			sb_puts(out, "</td><td>");
			page_text(out, c->nodepool);
			sb_puts(out, "</td><td>");
			page_type_link(out, c->instance_type);
			sb_puts(out, "</td><td>");
			page_text(out, c->state);
			sb_puts(out, "</td><td>");
			page_time(out, c->created_ns, m->now_ns);
			sb_puts(out, "</td></tr>\n");
		}
		more_row(out, f->more_claims, 5);
		sb_puts(out, "</tbody></table>");
	}
	sb_puts(out, "</section>");
}

int page_fleet_html(const struct page_meta *m, const struct page_fleet *v, struct strbuf *out)
{
	page_begin(out, m, "Fleet");
	sb_puts(out, "<h1>Fleet</h1>");
	summary(out, v->types);
	types_table(out, v->types);
	nodes_table(out, m, v);
	inflight(out, m, v->inflight);
	page_end(out, m);
	return sb_error(out);
}
