/* html_escape.h - text into HTML and XML (SVG) safely: every character
 * that could end a text node or an attribute value is written as an
 * entity, and what XML refuses outright (invalid UTF-8, control
 * characters) is replaced, so that text from anywhere (a node's report,
 * an hwdb extra) renders as text in a page or in a standalone SVG file.
 *
 * Written for the coordinator's pages and the topology drawing before the
 * shared toolbox had an escaper; one place to switch when it does. */
#ifndef DT_HTML_ESCAPE_H
#define DT_HTML_ESCAPE_H

#include <stddef.h>

#include "strbuf.h"

/* Append s[0..n) escaped for an HTML/XML text node or a quoted attribute
 * value: & < > " ' as entities; invalid UTF-8 and control characters
 * other than tab and newline as U+FFFD. */
void sb_put_html_n(struct strbuf *sb, const char *s, size_t n);
/* The same for a NUL-terminated string (NULL appends nothing). */
void sb_put_html(struct strbuf *sb, const char *s);

/* The length of the longest valid UTF-8 sequence at s[0..n): 1-4, or 0
 * when s does not start one. */
size_t utf8_seq_len(const char *s, size_t n);

#endif
