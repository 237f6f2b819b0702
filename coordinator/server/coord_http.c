/* coord_http.c - the coordinator's --http address: dt_obs_http's /metrics,
 * /healthz and /readyz, and the status pages (dt_page) over a snapshot of
 * the fleet:
 *
 *   /                 the fleet (?type=&verdict=&plannable=&after=&limit=)
 *   /nodes/NAME       a node, its topology drawn (?o=svg, ?o=json)
 *   /types/NAME       a type: its entry beside its most common live shape (?o=svg)
 *   /nodes.json       `dratopo nodes -o json`, with the fleet page's filters
 *   /types.json       `dratopo types -o json`
 *
 * Each page takes what it shows under the fleet's read lock (entries of
 * learned types live as long as the fleet) and renders it there: a few
 * milliseconds, during which reports still reconcile (the lock is shared)
 * and only a rebuild of the fleet waits. The JSON comes from the code that
 * makes the CLI's (coord_node_pb / coord_type_pb, then fleet_doc). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord.h"
#include "fleet_doc.h"
#include "obs_http.h"
#include "obs_log.h"
#include "page.h"
#include "topo_verify.h"

#define JSON_TYPE "application/json"
#define SVG_TYPE "image/svg+xml; charset=utf-8"

static struct page_meta meta(void)
{
	return (struct page_meta){ .version = DRATOPO_VERSION, .now_ns = coord_now_ns() };
}

static int error_page(struct obs_http_page *page, unsigned status, const char *title,
		      const char *msg)
{
	struct page_meta m = meta();

	page->status = status;
	return page_error_html(&m, title, msg, &page->body);
}

static int json_error(struct obs_http_page *page, unsigned status, const char *msg)
{
	struct doc_arena *a = doc_arena_new();
	struct doc_node *top = a ? doc_new_map(a) : NULL;
	int rc = !top || doc_map_set(a, top, "error", doc_new_string(a, msg)) ? -ENOMEM
		 : doc_emit_json(top, DOC_JSON_PRETTY, &page->body);

	doc_arena_free(a);
	page->status = status;
	page->content_type = JSON_TYPE;
	return rc;
}

/* top (in a) as the CLI prints JSON; frees a. */
static int json_page(struct obs_http_page *page, struct doc_arena *a, struct doc_node *top)
{
	int rc = top ? doc_emit_json(top, DOC_JSON_PRETTY, &page->body) : -ENOMEM;

	doc_arena_free(a);
	page->content_type = JSON_TYPE;
	return rc;
}

/* ---- the fleet's filters ---- */

/* The fleet page's query (and nodes.json's): 0, or -EINVAL with why. */
static int parse_query(const struct obs_http_request *req, bool json, struct page_query *q,
		       char *why, size_t len)
{
	const char *v;
	enum rec_verdict verdict;

	*q = (struct page_query){ .verdict = -1, .plannable = -1,
				  .limit = json ? 0 : PAGE_ROWS_DEFAULT };
	if ((v = obs_http_arg(req, "type")) && *v)
		q->type = v;
	if ((v = obs_http_arg(req, "after")) && *v)
		q->after = v;
	if ((v = obs_http_arg(req, "verdict")) && *v) {
		if (rec_verdict_parse(v, &verdict)) {
			snprintf(why, len, "verdict: '%.64s' is not match, drift, unknown or learned", v);
			return -EINVAL;
		}
		q->verdict = (int)verdict;
	}
	if ((v = obs_http_arg(req, "plannable")) && *v) {
		if (!strcmp(v, "yes") || !strcmp(v, "true")) {
			q->plannable = 1;
		} else if (!strcmp(v, "no") || !strcmp(v, "false")) {
			q->plannable = 0;
		} else {
			snprintf(why, len, "plannable: '%.64s' is not yes or no", v);
			return -EINVAL;
		}
	}
	if ((v = obs_http_arg(req, "limit")) && *v) {
		char *end;
		unsigned long n = strtoul(v, &end, 10);

		if (*end || n < 1 || n > PAGE_ROWS_MAX || v[0] == '-') {
			snprintf(why, len, "limit: '%.64s' is not a count from 1 to %d", v,
				 PAGE_ROWS_MAX);
			return -EINVAL;
		}
		q->limit = n;
	}
	return 0;
}

static void filter_of(const struct page_query *q, struct rec_filter *flt)
{
	*flt = (struct rec_filter){ .instance_type = q->type, .verdict = q->verdict,
				    .plannable = q->plannable, .after = q->after,
				    .limit = q->limit, .count = true };
}

/* ---- the fleet ---- */

static int fleet_page(struct coord *c, const struct obs_http_request *req,
		      struct obs_http_page *page)
{
	struct page_meta m = meta();
	struct page_inflight inflight = { 0 };
	struct page_fleet v = { .inflight = NULL };
	struct rec_type_list types = { 0 };
	struct rec_node_list nodes = { 0 };
	struct rec_filter flt;
	struct rec_fleet *f;
	struct dt_err err = { 0 };
	char why[160];
	int rc;

	if (parse_query(req, false, &v.q, why, sizeof(why)))
		return error_page(page, 400, "Bad filter", why);
	filter_of(&v.q, &flt);
	f = coord_fleet_get(c);
	rc = rec_fleet_types(f, m.now_ns, &types, &err);
	if (!rc)
		rc = rec_fleet_nodes(f, &flt, m.now_ns, &nodes, &err);
	coord_fleet_put(c);
	if (!rc && c->inflight) {
		if (c->inflight(c->inflight_arg, &inflight, &err) == 0) {
			v.inflight = &inflight;
		} else {
			obs_log(OBS_WARN, "page_inflight_failed", "error", err.msg, NULL);
			page_inflight_free(&inflight);
		}
	}
	v.types = &types;
	v.nodes = &nodes;
	if (!rc)
		rc = page_fleet_html(&m, &v, &page->body);
	page_inflight_free(&inflight);
	rec_node_list_free(&nodes);
	rec_type_list_free(&types);
	return rc;
}

/* ---- JSON: the CLI's ---- */

static int nodes_json(struct coord *c, const struct obs_http_request *req,
		      struct obs_http_page *page)
{
	struct rec_node_list list = { 0 };
	struct page_query q;
	struct rec_filter flt;
	struct dt_err err = { 0 };
	Dratopo__V1__Node *msgs, **ptrs;
	struct doc_arena *a;
	char why[160];
	int rc;

	if (parse_query(req, true, &q, why, sizeof(why)))
		return json_error(page, 400, why);
	filter_of(&q, &flt);
	flt.count = false;
	rc = rec_fleet_nodes(coord_fleet_get(c), &flt, coord_now_ns(), &list, &err);
	coord_fleet_put(c);
	a = rc ? NULL : doc_arena_new();
	msgs = a ? doc_arena_alloc(a, (list.n + 1) * sizeof(*msgs)) : NULL;
	ptrs = msgs ? doc_arena_alloc(a, (list.n + 1) * sizeof(*ptrs)) : NULL;
	for (size_t i = 0; ptrs && i < list.n; i++)
		coord_node_pb(&list.nodes[i], ptrs[i] = &msgs[i]);
	rc = ptrs ? json_page(page, a, fleet_doc_nodes(a, ptrs, list.n))
		  : (doc_arena_free(a), -ENOMEM);
	rec_node_list_free(&list);
	return rc;
}

static int types_json(struct coord *c, struct obs_http_page *page)
{
	struct rec_type_list list = { 0 };
	struct dt_err err = { 0 };
	int rc = rec_fleet_types(coord_fleet_get(c), coord_now_ns(), &list, &err);
	struct doc_arena *a = rc ? NULL : doc_arena_new();
	Dratopo__V1__TypeSummary *msgs = a ? doc_arena_alloc(a, (list.n + 1) * sizeof(*msgs)) : NULL;
	Dratopo__V1__TypeSummary **ptrs = msgs ? doc_arena_alloc(a, (list.n + 1) * sizeof(*ptrs))
					       : NULL;

	coord_fleet_put(c);
	for (size_t i = 0; ptrs && i < list.n; i++)
		coord_type_pb(&list.types[i], ptrs[i] = &msgs[i]);
	rc = ptrs ? json_page(page, a, fleet_doc_types(a, ptrs, list.n))
		  : (doc_arena_free(a), -ENOMEM);
	rec_type_list_free(&list);
	return rc;
}

/* ---- a node ---- */

static enum rec_entry_source source_of(const char *type, const struct hwdb_type *entry)
{
	const struct hwdb_type *known = hwdb_lookup(type);

	if (known)
		return known->builtin ? REC_SOURCE_HWDB : REC_SOURCE_EXTRA;
	return entry ? REC_SOURCE_LEARNED : REC_SOURCE_NONE;
}

/* The node's picture against its entry and, in drift, its remedies: taken
 * with the fleet held (the entry of a learned type is the fleet's). */
static int node_snapshot(struct rec_fleet *f, const struct rec_node *n, struct draw_picture *pic,
			 struct rem_assessment *rem, enum rec_entry_source *source,
			 struct dt_err *err)
{
	struct topo t;
	struct topo_verify_result vr = { 0 };
	const struct hwdb_type *entry = NULL;
	int rc = rec_node_topology(f, n->name, &t, &entry, err);

	if (rc)
		return rc;
	*source = source_of(n->instance_type, entry);
	rc = draw_node(&t, entry, n->name, pic, err);
	if (!rc && n->verdict == REC_DRIFT && entry && !(rc = topo_verify_entry(&t, entry, &vr, err)))
		rc = rem_assess(n->name, &vr, &t, entry, rem, err);
	topo_verify_result_free(&vr);
	topo_free(&t);
	return rc;
}

static int node_json(const struct rec_node *n, struct obs_http_page *page)
{
	Dratopo__V1__Node msg;
	struct doc_arena *a = doc_arena_new();

	if (!a)
		return -ENOMEM;
	coord_node_pb(n, &msg);
	return json_page(page, a, fleet_doc_node(a, &msg));
}

static int node_page(struct coord *c, const char *name, const struct obs_http_request *req,
		     struct obs_http_page *page)
{
	struct page_meta m = meta();
	struct rec_node n = { 0 };
	struct draw_picture pic = { 0 };
	struct rem_assessment rem = { 0 };
	struct coord_remedies yaml = { 0 };
	struct page_node v = { .node = &n, .picture = &pic };
	struct dt_err err = { 0 };
	const char *o = obs_http_arg(req, "o");
	struct rec_fleet *f = coord_fleet_get(c);
	int rc = rec_fleet_node(f, name, m.now_ns, &n, &err);

	if (!rc && (!o || strcmp(o, "json")))
		rc = node_snapshot(f, &n, &pic, &rem, &v.source, &err);
	coord_fleet_put(c);
	if (rc == -ENOENT) {
		rc = o && !strcmp(o, "json") ? json_error(page, 404, err.msg)
					     : error_page(page, 404, "No such node", err.msg);
		goto out;
	}
	if (!rc && o && !strcmp(o, "json")) {
		rc = node_json(&n, page);
	} else if (!rc && o && !strcmp(o, "svg")) {
		page->content_type = SVG_TYPE;
		rc = draw_svg(&pic, &(struct draw_svg_opts){ .standalone = true }, &page->body);
	} else if (!rc && o) {
		rc = error_page(page, 400, "Bad format", "o: give svg or json (or nothing)");
	} else if (!rc) {
		/* the rules as kubectl takes them, or the lifts of a node that
		 * matches again; taken after the fleet was let go (it takes it) */
		if ((n.verdict == REC_DRIFT || n.recovered) &&
		    coord_remedies(c, n.name, &yaml, &err) == 0)
			v.remedy_yaml = sb_str(&yaml.yaml);
		v.remedy = n.verdict == REC_DRIFT ? &rem : NULL;
		rc = page_node_html(&m, &v, &page->body);
	}
out:
	coord_remedies_free(&yaml);
	rem_assessment_free(&rem);
	draw_picture_free(&pic);
	rec_node_free(&n);
	return rc;
}

/* ---- a type ---- */

/* The first node (by name) of t's most common shape, drawn against entry;
 * none when no node of the type has reported. The type's nodes are looked
 * at a page at a time: the shape is the most common, so the first pages
 * usually hold one. */
static int common_shape(struct rec_fleet *f, const struct rec_type_summary *t,
			const struct hwdb_type *entry, int64_t now, struct draw_picture *pic,
			char **node, struct dt_err *err)
{
	struct rec_filter flt = { .instance_type = t->type, .verdict = -1, .plannable = -1,
				  .limit = 64 };
	struct rec_node_list list = { .more = true };
	char *after = NULL;
	int rc = 0;

	while (!rc && !*node && list.more && t->common_shape) {
		rc = rec_fleet_nodes(f, &flt, now, &list, err);
		for (size_t i = 0; !rc && !*node && i < list.n; i++) {
			struct topo topo;
			const struct hwdb_type *e;

			if (strcmp(list.nodes[i].shape_key, t->common_shape))
				continue;
			rc = rec_node_topology(f, list.nodes[i].name, &topo, &e, err);
			if (!rc) {
				rc = draw_node(&topo, entry, list.nodes[i].name, pic, err);
				topo_free(&topo);
			}
			if (!rc && !(*node = strdup(list.nodes[i].name)))
				rc = dt_err_set(err, -ENOMEM, "out of memory");
		}
		free(after);
		after = list.n ? strdup(list.nodes[list.n - 1].name) : NULL;
		if (!rc && list.n && !after)
			rc = dt_err_set(err, -ENOMEM, "out of memory");
		flt.after = after;
		if (!list.n)
			list.more = false;
		rec_node_list_free(&list);
	}
	free(after);
	return rc;
}

static int type_out(const struct page_meta *m, const struct page_type *v, const char *o,
		    struct obs_http_page *page)
{
	if (!v->summary && !v->entry)
		return error_page(page, 404, "No such instance type",
				  "Neither hwdb nor the fleet knows this instance type.");
	if (!o)
		return page_type_html(m, v, &page->body);
	if (strcmp(o, "svg") || !v->entry)
		return error_page(page, 400, "Bad format",
				  "o: give svg (for a type hwdb or the fleet has an entry for)");
	page->content_type = SVG_TYPE;
	return draw_svg(v->entry, &(struct draw_svg_opts){ .standalone = true }, &page->body);
}

static int type_page(struct coord *c, const char *name, const struct obs_http_request *req,
		     struct obs_http_page *page)
{
	struct page_meta m = meta();
	struct rec_type_list types = { 0 };
	struct draw_picture entry_pic = { 0 }, common_pic = { 0 };
	struct strbuf yaml = STRBUF_INIT;
	struct page_type v = { .name = name };
	struct dt_err err = { 0 };
	const char *o = obs_http_arg(req, "o");
	struct rec_fleet *f = coord_fleet_get(c);
	const struct hwdb_type *entry = rec_fleet_hwdb_lookup(f, name, NULL);
	char *common_node = NULL;
	int rc = rec_fleet_types(f, m.now_ns, &types, &err);

	for (size_t i = 0; !rc && i < types.n; i++)
		if (!strcmp(types.types[i].type, name))
			v.summary = &types.types[i];
	v.source = source_of(name, entry);
	if (!rc && entry && !(rc = draw_type(entry, &entry_pic, &err))) {
		v.entry = &entry_pic;
		if (hwdb_file_write_yaml(&entry, 1, &yaml) == 0)
			v.entry_yaml = sb_str(&yaml);
	}
	if (!rc && v.summary && !o)
		rc = common_shape(f, v.summary, entry, m.now_ns, &common_pic, &common_node, &err);
	if (common_node) {
		v.common = &common_pic;
		v.common_node = common_node;
	}
	if (!rc)
		rc = type_out(&m, &v, o, page);
	coord_fleet_put(c);
	free(common_node);
	sb_free(&yaml);
	draw_picture_free(&common_pic);
	draw_picture_free(&entry_pic);
	rec_type_list_free(&types);
	return rc;
}

/* ---- routing ---- */

static int serve(void *arg, const struct obs_http_request *req, struct obs_http_page *page)
{
	struct coord *c = arg;
	const char *path = obs_http_path(req);

	if (!strcmp(path, "/"))
		return fleet_page(c, req, page);
	if (!strcmp(path, "/nodes.json"))
		return nodes_json(c, req, page);
	if (!strcmp(path, "/types.json"))
		return types_json(c, page);
	if (!strncmp(path, "/nodes/", 7) && path[7])
		return node_page(c, path + 7, req, page);
	if (!strncmp(path, "/types/", 7) && path[7])
		return type_page(c, path + 7, req, page);
	return -ENOENT;
}

void coord_set_inflight(struct coord *c, coord_inflight_fn fn, void *arg)
{
	c->inflight = fn;
	c->inflight_arg = arg;
}

int coord_http_start(struct coord *c, const char *addr, bool (*ready)(void *, char *, size_t),
		     void *ready_arg, struct obs_http **out, struct dt_err *err)
{
	struct obs_http_opts o = { .addr = addr, .reg = c->m.reg, .ready = ready,
				   .ready_arg = ready_arg, .page = serve, .page_arg = c };

	return obs_http_start_opts(&o, out, err);
}
