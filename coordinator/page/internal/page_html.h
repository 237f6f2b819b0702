/* page_html.h - what the page files share (page.c): the document around a
 * page, escaped text, links, times, verdict badges. Internal to dt_page. */
#ifndef DT_PAGE_HTML_H
#define DT_PAGE_HTML_H

#include <stdint.h>

#include "page.h"

/* <!DOCTYPE html> ... <main>, with title (escaped) in <title> and the
 * header's "as of" time. */
void page_begin(struct strbuf *out, const struct page_meta *m, const char *title);
/* </main> ... </html> */
void page_end(struct strbuf *out, const struct page_meta *m);

/* Escaped text. */
void page_text(struct strbuf *out, const char *s);
/* printf, then the result escaped (for numbers and words of ours mixed
 * with names). */
void page_textf(struct strbuf *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* s %-encoded for a URL path segment or query value (every byte but
 * RFC 3986's unreserved ones); the result needs no HTML escaping. */
void page_url(struct strbuf *out, const char *s);
/* <a href="/nodes/NAME">NAME</a>, <a href="/types/NAME">NAME</a>. */
void page_node_link(struct strbuf *out, const char *name);
void page_type_link(struct strbuf *out, const char *name);
/* <span class="v v-drift">drift</span> */
void page_verdict(struct strbuf *out, enum rec_verdict v);
/* "2026-12-03 05:59:01Z (12s ago)"; "never". */
void page_time(struct strbuf *out, int64_t ns, int64_t now_ns);
/* A type's flags (conflict, hwdb looks wrong) as badges; nothing when none. */
void page_type_flags(struct strbuf *out, const struct rec_type_summary *t);
/* "hwdb", "--hwdb-extra", "learned", "none": where an entry comes from. */
const char *page_source_words(enum rec_entry_source s);
/* An inline SVG of picture, or a note when NULL. */
void page_picture(struct strbuf *out, const struct draw_picture *picture, const char *none);

#endif
