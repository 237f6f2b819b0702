/* model_names.c - how messages name things: field paths, the object and
 * document a message is about, values printed the way field.Error prints
 * them; and the sorted name index. The name rules themselves (DNS labels,
 * qualified names...) are common/names (names.h). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"
#include "escape.h"
#include "strbuf.h"

/* ---- Field paths ---- */

/* A push stores the segment and renders nothing: every field decoded and
 * validated is pushed, and only the few with a problem are ever printed
 * (model_path_str). Past MODEL_PATH_SEGS segments are counted, not kept. */
static size_t push(struct model_path *p, char kind, const char *text, size_t index)
{
	size_t mark = p->len;

	if (p->len < MODEL_PATH_SEGS)
		p->seg[p->len] = (struct model_path_seg){ .text = text, .index = index, .kind = kind };
	p->len++;
	return mark;
}

size_t model_path_field(struct model_path *p, const char *name)
{
	return push(p, 'f', name, 0);
}

size_t model_path_index(struct model_path *p, size_t i)
{
	return push(p, 'i', NULL, i);
}

size_t model_path_key(struct model_path *p, const char *key)
{
	return push(p, 'k', key, 0);
}

size_t model_path_key_cut(struct model_path *p, const char *key, size_t max)
{
	return push(p, 'c', key, max < 16 ? 16 : max);
}

void model_path_pop(struct model_path *p, size_t mark)
{
	if (mark <= p->len)
		p->len = mark;
}

/* key cut in the middle to max bytes ("abc...xyz"), into buf[128]. */
static const char *cut_key(const char *key, size_t max, char *buf)
{
	size_t len = strlen(key), head, tail;

	if (len <= max || max >= 128)
		return key;
	head = (max - 3 + 1) / 2;
	tail = (max - 3) / 2;
	memcpy(buf, key, head);
	memcpy(buf + head, "...", 3);
	memcpy(buf + head + 3, key + len - tail, tail);
	buf[head + 3 + tail] = '\0';
	return buf;
}

/* One segment's text into buf at *o; false when it does not fit. A key
 * reads "[key]" (field.Path's form), or with dotted ".key" (the JSON
 * decoder's, in strict decoding errors). */
static bool render(char *buf, size_t cap, size_t *o, const struct model_path_seg *s, bool first,
		   bool dotted)
{
	char num[24], *d = num + sizeof(num) - 1, cut[128];
	const char *parts[3] = { "", s->text ? s->text : "", "" };

	if (s->kind == 'f' || (dotted && s->kind != 'i')) {
		parts[0] = first ? "" : ".";
	} else {
		parts[0] = "[";
		parts[2] = "]";
	}
	if (s->kind == 'i') {
		size_t i = s->index;

		*d = '\0';
		do
			*--d = (char)('0' + i % 10);
		while ((i /= 10));
		parts[1] = d;
	}
	if (s->kind == 'c')
		parts[1] = cut_key(parts[1], s->index, cut);
	for (int k = 0; k < 3; k++) {
		size_t n = strlen(parts[k]);

		if (n >= cap - *o)
			return false;
		memcpy(buf + *o, parts[k], n);
		*o += n;
	}
	return true;
}

static const char *path_str(struct model_path *p, bool dotted)
{
	size_t o = 0, n = p->len < MODEL_PATH_SEGS ? p->len : MODEL_PATH_SEGS;

	for (size_t i = 0; i < n; i++)
		if (!render(p->buf, sizeof(p->buf), &o, &p->seg[i], i == 0, dotted)) {
			memcpy(p->buf + sizeof(p->buf) - 4, "...", 4);      /* cut, and say so */
			return p->buf;
		}
	if (n < p->len && o + 4 <= sizeof(p->buf)) {
		memcpy(p->buf + o, "...", 4);
		return p->buf;
	}
	p->buf[o] = '\0';
	return p->buf;
}

const char *model_path_str(struct model_path *p)
{
	return path_str(p, false);
}

const char *model_path_json(struct model_path *p)
{
	return path_str(p, true);
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

	/* Printable ASCII and UTF-8 bytes pass; control bytes and DEL are
	 * escaped. */
	sb_putc(sb, '"');
	sb_quote(sb, s, n, SB_QUOTE_BARE | SB_QUOTE_NAMED | SB_QUOTE_DEL);
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
