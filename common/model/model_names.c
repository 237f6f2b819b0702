/* model_names.c - how messages name things: field paths, the object and
 * document a message is about, values printed the way field.Error prints
 * them; and the sorted name index. The name rules themselves (DNS labels,
 * qualified names...) are common/names (names.h). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"
#include "strbuf.h"

/* ---- Field paths ---- */

/* Append the parts to the path; returns the previous length. Every field
 * decoded and validated passes here, message or not, so it copies bytes
 * rather than formatting (snprintf was a fifth of a large plan's time). */
static size_t path_append(struct model_path *p, const char *a, const char *b, const char *c)
{
	const char *parts[3] = { a, b, c };
	size_t mark = p->len;

	for (int i = 0; i < 3; i++) {
		size_t n = strlen(parts[i]);

		if (n >= sizeof(p->buf) - p->len) {
			/* Cut, and say so. */
			memcpy(p->buf + sizeof(p->buf) - 4, "...", 4);
			p->len = sizeof(p->buf) - 1;
			return mark;
		}
		memcpy(p->buf + p->len, parts[i], n);
		p->len += n;
	}
	p->buf[p->len] = '\0';
	return mark;
}

size_t model_path_field(struct model_path *p, const char *name)
{
	return path_append(p, p->len ? "." : "", name, "");
}

size_t model_path_index(struct model_path *p, size_t i)
{
	char num[24], *d = num + sizeof(num) - 1;

	*d = '\0';
	do
		*--d = (char)('0' + i % 10);
	while ((i /= 10));
	return path_append(p, "[", d, "]");
}

size_t model_path_key(struct model_path *p, const char *key)
{
	return path_append(p, "[", key, "]");
}

void model_path_pop(struct model_path *p, size_t mark)
{
	if (mark <= p->len) {
		p->len = mark;
		p->buf[mark] = '\0';
	}
}

void model_source_document(const struct model_source *src, char *buf, size_t size)
{
	if (src->item_path)
		snprintf(buf, size, "document %d, item %s", src->document, src->item_path);
	else if (src->item >= 0)
		snprintf(buf, size, "document %d, item %d", src->document, src->item);
	else
		snprintf(buf, size, "document %d", src->document);
}

void model_object_prefix(const struct model_object *o, char *buf, size_t size)
{
	char what[600], doc[128];

	model_object_describe(o, what, sizeof(what));
	if (!o->src.file) {
		snprintf(buf, size, "%s: ", what);
		return;
	}
	model_source_document(&o->src, doc, sizeof(doc));
	snprintf(buf, size, "%s: %s (%s): ", o->src.file, doc, what);
}

/* ---- Values ---- */

#define QUOTE_MAX 256

void model_quote(struct strbuf *sb, const char *s, size_t len)
{
	size_t n = len > QUOTE_MAX ? QUOTE_MAX : len;

	sb_putc(sb, '"');
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		switch (c) {
		case '"':  sb_puts(sb, "\\\""); break;
		case '\\': sb_puts(sb, "\\\\"); break;
		case '\n': sb_puts(sb, "\\n"); break;
		case '\r': sb_puts(sb, "\\r"); break;
		case '\t': sb_puts(sb, "\\t"); break;
		default:
			/* Printable ASCII and UTF-8 bytes pass; control bytes
			 * and DEL are escaped. */
			if (c < 0x20 || c == 0x7f)
				sb_printf(sb, "\\x%02x", c);
			else
				sb_putc(sb, (char)c);
		}
	}
	if (n < len)
		sb_puts(sb, "...");
	sb_putc(sb, '"');
}

/* ---- Name index ---- */

static int ref_cmp(const void *pa, const void *pb)
{
	const struct model_name_ref *a = pa, *b = pb;
	int c = strcmp(a->name, b->name);

	if (c)
		return c;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

int model_name_index_build(struct model_name_index *ix, const void *base, size_t n,
			   size_t stride, size_t name_offset)
{
	const char *p = base;

	ix->n = 0;
	ix->refs = malloc((n ? n : 1) * sizeof(*ix->refs));
	if (!ix->refs)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const char *name;

		memcpy(&name, p + i * stride + name_offset, sizeof(name));
		if (!name)
			continue;
		ix->refs[ix->n].name = name;
		ix->refs[ix->n].idx = i;
		ix->n++;
	}
	qsort(ix->refs, ix->n, sizeof(*ix->refs), ref_cmp);
	return 0;
}

size_t model_name_index_find(const struct model_name_index *ix, const char *name)
{
	size_t lo = 0, hi = ix->n;

	if (!name)
		return SIZE_MAX;
	/* Lower bound: the first ref not less than name, i.e. the smallest idx. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(ix->refs[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < ix->n && !strcmp(ix->refs[lo].name, name))
		return ix->refs[lo].idx;
	return SIZE_MAX;
}

void model_name_index_free(struct model_name_index *ix)
{
	free(ix->refs);
	ix->refs = NULL;
	ix->n = 0;
}
