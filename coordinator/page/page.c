/* page.c - what every page shares (page_html.h): the document, its style,
 * escaped text and links; the controller's in-flight snapshot; the error
 * page. The pages themselves are page_fleet.c and page_node.c. */
#include "page_html.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "array.h"
#include "escape.h"

/* The whole style: no external asset, no script. */
static const char style[] =
	":root{color-scheme:light}"
	"body{margin:0;font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',"
	"sans-serif;color:#1f2328;background:#fff}"
	"header{display:flex;gap:18px;align-items:baseline;padding:10px 20px;background:#1f2328;"
	"color:#fff}"
	"header a{color:#fff;text-decoration:none}header a:hover{text-decoration:underline}"
	"header .brand{font-weight:700;font-size:16px}"
	"header .asof{margin-left:auto;color:#c9d1d9;font-size:12px}"
	"main{padding:14px 20px 28px}"
	"h1{font-size:22px;margin:4px 0}h2{font-size:17px;margin:24px 0 8px}"
	"h3{font-size:14px;margin:14px 0 6px}"
	"a{color:#0550ae}"
	"table{border-collapse:collapse;font-size:13px}"
	"th,td{padding:4px 10px;border-bottom:1px solid #e5e7eb;text-align:left;vertical-align:top}"
	"th{background:#f6f8fa;font-weight:600;white-space:nowrap}"
	"td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}.nowrap{white-space:nowrap}"
	"tr.drift td{background:#fff8f8}"
	".v{display:inline-block;padding:0 8px;border-radius:9px;font-size:12px;font-weight:600}"
	".v-match{background:#dcfce7;color:#166534}.v-drift{background:#fee2e2;color:#991b1b}"
	".v-unknown{background:#e5e7eb;color:#374151}.v-learned{background:#dbeafe;color:#1e40af}"
	".flag{display:inline-block;padding:0 8px;border-radius:9px;font-size:12px;"
	"font-weight:600;background:#fef3c7;color:#92400e}"
	".no{color:#991b1b}.muted{color:#6b7280}.mono{font-family:ui-monospace,'DejaVu Sans Mono',"
	"monospace;font-size:12px}"
	"form.filters{display:flex;gap:12px;align-items:end;flex-wrap:wrap;margin:6px 0 10px}"
	"form.filters label{display:flex;flex-direction:column;font-size:12px;color:#4b5563}"
	".pager{margin:8px 0;display:flex;gap:16px;align-items:baseline}"
	".cols{display:flex;gap:28px;flex-wrap:wrap;align-items:flex-start}"
	".cols>section{flex:1 1 360px;min-width:0;max-width:100%}.cols>section.topology{flex:0 1 auto}"
	".pic{overflow-x:auto;max-width:100%}.pic svg{display:block}"
	"ul.diffs{margin:4px 0;padding-left:20px}ul.diffs li{margin:2px 0}"
	"pre{background:#f6f8fa;padding:10px;overflow:auto;font-size:12px;max-height:420px}"
	"dl.facts{display:grid;grid-template-columns:max-content auto;gap:2px 16px;margin:8px 0}"
	"dl.facts dt{color:#6b7280}dl.facts dd{margin:0}"
	"footer{padding:10px 20px;color:#6b7280;font-size:12px;border-top:1px solid #e5e7eb}";

void page_text(struct strbuf *out, const char *s)
{
	if (s)
		sb_html(out, s, strlen(s));
}

void page_textf(struct strbuf *out, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	page_text(out, buf);
}

void page_url(struct strbuf *out, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";

	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || strchr("-._~", *p)) {
			sb_putc(out, (char)*p);
		} else {
			sb_putc(out, '%');
			sb_putc(out, hex[*p >> 4]);
			sb_putc(out, hex[*p & 15]);
		}
	}
}

static void named_link(struct strbuf *out, const char *prefix, const char *name)
{
	sb_printf(out, "<a href=\"%s", prefix);
	page_url(out, name);
	sb_puts(out, "\">");
	page_text(out, name);
	sb_puts(out, "</a>");
}

void page_node_link(struct strbuf *out, const char *name)
{
	named_link(out, "/nodes/", name);
}

void page_type_link(struct strbuf *out, const char *name)
{
	named_link(out, "/types/", name);
}

void page_verdict(struct strbuf *out, enum rec_verdict v)
{
	sb_printf(out, "<span class=\"v v-%s\">%s</span>", rec_verdict_name(v),
		  rec_verdict_name(v));
}

static void utc(char *buf, size_t len, int64_t ns)
{
	time_t s = (time_t)(ns / 1000000000);
	struct tm tm;

	if (!gmtime_r(&s, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M:%SZ", &tm))
		snprintf(buf, len, "?");
}

void page_time(struct strbuf *out, int64_t ns, int64_t now_ns)
{
	char when[40];
	int64_t ago = (now_ns - ns) / 1000000000;

	if (!ns) {
		sb_puts(out, "never");
		return;
	}
	utc(when, sizeof(when), ns);
	sb_puts(out, when);
	if (ago < 0)
		return;
	if (ago < 120)
		sb_printf(out, " <span class=\"muted\">(%llds ago)</span>", (long long)ago);
	else if (ago < 7200)
		sb_printf(out, " <span class=\"muted\">(%lldm ago)</span>", (long long)ago / 60);
	else
		sb_printf(out, " <span class=\"muted\">(%lldh ago)</span>", (long long)ago / 3600);
}

void page_type_flags(struct strbuf *out, const struct rec_type_summary *t)
{
	if (t->conflicted)
		sb_puts(out, "<span class=\"flag\" data-flag=\"conflict\">conflict: its nodes "
			"disagree on the shape</span> ");
	if (t->hwdb_suspect)
		sb_puts(out, "<span class=\"flag\" data-flag=\"hwdb-suspect\">hwdb looks wrong: "
			"most nodes drift the same way</span>");
}

const char *page_source_words(enum rec_entry_source s)
{
	switch (s) {
	case REC_SOURCE_HWDB: return "hwdb";
	case REC_SOURCE_EXTRA: return "hwdb (--hwdb-extra)";
	case REC_SOURCE_LEARNED: return "learned from the fleet";
	case REC_SOURCE_NONE: break;
	}
	return "none";
}

void page_picture(struct strbuf *out, const struct draw_picture *picture, const char *none)
{
	if (!picture) {
		sb_puts(out, "<p class=\"muted\">");
		page_text(out, none);
		sb_puts(out, "</p>");
		return;
	}
	sb_puts(out, "<div class=\"pic\">");
	if (draw_svg(picture, NULL, out))
		out->oom = true;
	sb_puts(out, "</div>");
}

void page_begin(struct strbuf *out, const struct page_meta *m, const char *title)
{
	char when[40];

	utc(when, sizeof(when), m->now_ns);
	sb_puts(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
		"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
		"<meta name=\"robots\" content=\"noindex\"><title>");
	page_text(out, title);
	sb_printf(out, " \xc2\xb7 dratopo</title><style>%s</style></head>\n<body><header>"
		  "<a class=\"brand\" href=\"/\">dratopo</a><nav><a href=\"/\">Fleet</a> \xc2\xb7 "
		  "<a href=\"/nodes.json\">nodes.json</a> \xc2\xb7 <a href=\"/types.json\">"
		  "types.json</a> \xc2\xb7 <a href=\"/metrics\">metrics</a></nav>"
		  "<span class=\"asof\">as of %s</span></header>\n<main>", style, when);
}

void page_end(struct strbuf *out, const struct page_meta *m)
{
	sb_puts(out, "</main>\n<footer>dratopo-coordinator ");
	page_text(out, m->version ? m->version : "");
	sb_puts(out, " \xc2\xb7 read-only: this page changes nothing and shows no secret"
		"</footer>\n</body></html>\n");
}

int page_error_html(const struct page_meta *m, const char *title, const char *message,
		    struct strbuf *out)
{
	page_begin(out, m, title);
	sb_puts(out, "<h1>");
	page_text(out, title);
	sb_puts(out, "</h1><p>");
	page_text(out, message);
	sb_puts(out, "</p><p><a href=\"/\">Back to the fleet</a></p>");
	page_end(out, m);
	return sb_error(out);
}

/* ---- the controller's snapshot ---- */

static char *dup(const char *s, bool *oom)
{
	char *d = strdup(s ? s : "");

	*oom |= !d;
	return d;
}

int page_inflight_add_pod(struct page_inflight *f, const char *ns, const char *name,
			  const char *reason, int64_t since_ns)
{
	struct page_pending_pod *p;
	bool oom = false;

	if (f->n_pods >= PAGE_INFLIGHT_MAX) {
		f->more_pods++;
		return 0;
	}
	if (DT_GROW(f->pods, f->cap_pods, f->n_pods + 1))
		return -ENOMEM;
	p = &f->pods[f->n_pods];
	*p = (struct page_pending_pod){ dup(ns, &oom), dup(name, &oom), dup(reason, &oom),
					since_ns };
	f->n_pods++;
	return oom ? -ENOMEM : 0;
}

int page_inflight_add_claim(struct page_inflight *f, const char *name, const char *nodepool,
			    const char *instance_type, const char *state, int64_t created_ns)
{
	struct page_nodeclaim *c;
	bool oom = false;

	if (f->n_claims >= PAGE_INFLIGHT_MAX) {
		f->more_claims++;
		return 0;
	}
	if (DT_GROW(f->claims, f->cap_claims, f->n_claims + 1))
		return -ENOMEM;
	c = &f->claims[f->n_claims];
	*c = (struct page_nodeclaim){ dup(name, &oom), dup(nodepool, &oom),
				      dup(instance_type, &oom), dup(state, &oom), created_ns };
	f->n_claims++;
	return oom ? -ENOMEM : 0;
}

void page_inflight_free(struct page_inflight *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->n_pods; i++) {
		free(f->pods[i].ns);
		free(f->pods[i].name);
		free(f->pods[i].reason);
	}
	for (size_t i = 0; i < f->n_claims; i++) {
		free(f->claims[i].name);
		free(f->claims[i].nodepool);
		free(f->claims[i].instance_type);
		free(f->claims[i].state);
	}
	free(f->pods);
	free(f->claims);
	memset(f, 0, sizeof(*f));
}
