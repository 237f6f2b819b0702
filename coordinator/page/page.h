/* page.h - the coordinator's status pages as HTML: what `--http` serves at
 * / (the fleet), /nodes/NAME (a node and its PCIe topology drawn) and
 * /types/NAME (an instance type: hwdb's entry beside its most common live
 * shape). docs/page.md has the tour.
 *
 * Rendering only: the caller (coord_http.c) gathers a snapshot of the
 * fleet into a view under the fleet's lock, then asks for the page. Each
 * page is one self-contained document: server-rendered HTML, the topology
 * as inline SVG (dt_draw), one small stylesheet, no script and nothing
 * loaded from elsewhere (clusters are often air-gapped), readable in any
 * browser and in curl. Every string that came from a report or an hwdb
 * file (node and type names, models, root names, differences) is escaped.
 * The pages show what `dratopo nodes`, `types` and `hwdb show` show, and no
 * secret: no certificate, key or token is in the coordinator's fleet.
 *
 * The controller's half: the fleet page has a place for the pods the
 * cluster cannot schedule yet (with the planner's reasons) and the
 * NodeClaims in flight. The coordinator asks whoever watches the cluster
 * for them through struct page_inflight (coord_set_inflight); until a
 * controller runs, the place says so.
 *
 * Memory: views borrow everything; a page_inflight owns what was added to
 * it (page_inflight_free). */
#ifndef DT_PAGE_H
#define DT_PAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "draw.h"
#include "hwdb.h"
#include "reconcile.h"
#include "remedy.h"
#include "strbuf.h"

/* ---- the controller's snapshot: what is pending, what is launching ---- */

/* At most this many of each are listed; more are counted. */
#define PAGE_INFLIGHT_MAX 200

struct page_pending_pod {
	char *ns, *name;
	char *reason;                   /* the planner's reason it cannot run yet */
	int64_t since_ns;               /* pending since (Unix ns); 0 unknown */
};

struct page_nodeclaim {
	char *name, *nodepool, *instance_type;
	char *state;                    /* "launching", "registered", ...: the controller's word */
	int64_t created_ns;             /* 0 unknown */
};

struct page_inflight {
	/* A controller watches a cluster; false: the page says none does. */
	bool watching;
	int64_t as_of_ns;               /* when the controller last saw the cluster */
	struct page_pending_pod *pods;
	size_t n_pods, more_pods;       /* listed; beyond PAGE_INFLIGHT_MAX */
	struct page_nodeclaim *claims;
	size_t n_claims, more_claims;
	size_t cap_pods, cap_claims;
};

/* Copy one pending pod / NodeClaim in (strings may be NULL). Past
 * PAGE_INFLIGHT_MAX only counted. 0 or -ENOMEM. */
int page_inflight_add_pod(struct page_inflight *f, const char *ns, const char *name,
			  const char *reason, int64_t since_ns);
int page_inflight_add_claim(struct page_inflight *f, const char *name, const char *nodepool,
			    const char *instance_type, const char *state, int64_t created_ns);
void page_inflight_free(struct page_inflight *f);

/* ---- the pages ---- */

/* What every page says at the top. */
struct page_meta {
	const char *version;            /* the coordinator's */
	int64_t now_ns;                 /* the snapshot's time */
};

/* The fleet page's node table: its filters and which rows. */
struct page_query {
	const char *type;               /* NULL: any */
	int verdict;                    /* -1 any, else enum rec_verdict */
	int plannable;                  /* -1 any, 0, 1 */
	const char *after;              /* rows after this name; NULL from the start */
	size_t limit;                   /* rows per page */
};
#define PAGE_ROWS_DEFAULT 100
#define PAGE_ROWS_MAX 1000

struct page_fleet {
	const struct rec_type_list *types;      /* every type, for the summary and the filter */
	const struct rec_node_list *nodes;      /* the rows (counted: total, before) */
	struct page_query q;
	const struct page_inflight *inflight;   /* NULL: no controller */
};

struct page_node {
	const struct rec_node *node;
	const struct draw_picture *picture;     /* against its effective entry */
	enum rec_entry_source source;           /* where that entry comes from */
	const struct rem_assessment *remedy;    /* NULL unless in drift */
	const char *remedy_yaml;                /* the rules (or lifts) for kubectl; "" none */
};

struct page_type {
	const char *name;
	const struct rec_type_summary *summary; /* NULL: no node of the type */
	enum rec_entry_source source;
	const struct draw_picture *entry;       /* NULL: hwdb lacks it, nothing learned */
	const char *entry_yaml;                 /* the entry in hwdb's source format; NULL */
	const struct draw_picture *common;      /* a node of the most common shape; NULL */
	const char *common_node;                /* its name */
};

/* Append the page. 0 or -ENOMEM. */
int page_fleet_html(const struct page_meta *m, const struct page_fleet *v, struct strbuf *out);
int page_node_html(const struct page_meta *m, const struct page_node *v, struct strbuf *out);
int page_type_html(const struct page_meta *m, const struct page_type *v, struct strbuf *out);
/* A page that says what is wrong (an unknown node, a bad filter). */
int page_error_html(const struct page_meta *m, const char *title, const char *message,
		    struct strbuf *out);

#endif
