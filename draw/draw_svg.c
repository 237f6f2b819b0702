/* draw_svg.c - a struct draw_picture as SVG (draw.h).
 *
 * Layout: NUMA nodes are bands stacked top to bottom; inside a band the
 * roots are boxes laid left to right, wrapping at PIC_MAX_W; inside a root
 * the devices are cards in columns of at most ROWS, GPUs first. Boxes
 * without a root (devices under none, or hwdb without a grouping) come in
 * a band of their own at the end. A legend names the marks that appear.
 *
 * Colours are presentation attributes, not a stylesheet, so that a
 * standalone file looks the same in any viewer and a page needs no CSS for
 * it. Every element the tests and people look for carries its meaning as
 * classes and data- attributes: <g class="dev gpu missing" data-mark=...>. */
#include "draw.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "utf8.h"

#define MARGIN 16
#define TITLE_H 56              /* title and subtitle */
#define PIC_MAX_W 1180          /* roots wrap beyond this */
#define BAND_PAD 10
#define BAND_HEAD 22
#define ROOT_GAP 12
#define ROOT_PAD 8
#define ROOT_HEAD 36            /* name and status lines */
#define DEV_W 200
#define DEV_H 40
#define DEV_GAP 6
#define ROWS 8                  /* devices per column in a root */
#define LEGEND_ROW 22
#define CAPTION_LINE 16
#define DEV_TEXT 30             /* characters that fit a card's line */
#define ROOT_TEXT 28
#define LINE_TEXT 170

struct look {
	const char *fill, *stroke, *dash, *text;
};

static const struct look dev_ok[2] = {
	{ "#e6f4ea", "#1e7b34", NULL, "#0f3d1a" },      /* GPU */
	{ "#e3eefb", "#1f5fa8", NULL, "#0d2d52" },      /* EFA */
};

static const struct look dev_marked[DRAW_N_MARKS] = {
	[DRAW_MISSING] = { "#fde0e0", "#c62828", "5 3", "#b71c1c" },
	[DRAW_LEFT] = { "#fff4d6", "#c62828", "5 3", "#8a4b00" },
	[DRAW_OFF_BUS] = { "#f8c9cc", "#c62828", NULL, "#b71c1c" },
	[DRAW_WRONG_MODEL] = { "#ffe8cc", "#e65100", NULL, "#8a3000" },
	[DRAW_NO_ROOT] = { "#ffe8cc", "#e65100", "2 2", "#8a3000" },
	[DRAW_UNEXPECTED] = { "#efe3f7", "#7b1fa2", NULL, "#4a126b" },
};

static const char *const mark_words[DRAW_N_MARKS] = {
	[DRAW_MISSING] = "missing: hwdb has it on this root",
	[DRAW_LEFT] = "left this root: the node has it elsewhere",
	[DRAW_OFF_BUS] = "fell off the bus",
	[DRAW_WRONG_MODEL] = "not hwdb's model",
	[DRAW_NO_ROOT] = "under no PCIe root",
	[DRAW_UNEXPECTED] = "on a root hwdb does not have",
};

/* The same, short enough for a card's second line. */
static const char *const mark_short[DRAW_N_MARKS] = {
	[DRAW_MISSING] = "missing",
	[DRAW_LEFT] = "left this root",
	[DRAW_OFF_BUS] = "off the bus",
	[DRAW_WRONG_MODEL] = "wrong model",
	[DRAW_NO_ROOT] = "no PCIe root",
	[DRAW_UNEXPECTED] = "not in hwdb",
};

static const struct look *device_look(const struct draw_device *d)
{
	return d->mark == DRAW_OK ? &dev_ok[d->kind == TOPO_EFA] : &dev_marked[d->mark];
}

static struct look root_look(enum draw_root_mark m)
{
	switch (m) {
	case DRAW_ROOT_SHORT: return (struct look){ "#ffffff", "#c62828", NULL, "#b71c1c" };
	case DRAW_ROOT_SURPLUS: return (struct look){ "#ffffff", "#7b1fa2", NULL, "#4a126b" };
	case DRAW_ROOT_MISSING: return (struct look){ "#fff7f7", "#c62828", "6 4", "#b71c1c" };
	case DRAW_ROOT_UNEXPECTED: return (struct look){ "#fbf6fd", "#7b1fa2", NULL, "#4a126b" };
	case DRAW_ROOT_NONE: return (struct look){ "#fffaf3", "#e65100", "2 2", "#8a3000" };
	case DRAW_ROOT_UNPLACED: return (struct look){ "#ffffff", "#8a8f98", "6 4", "#3c4048" };
	case DRAW_ROOT_OK: break;
	}
	return (struct look){ "#ffffff", "#8a8f98", NULL, "#1f2328" };
}

/* ---- text ---- */

/* s escaped, cut to max characters with an ellipsis. */
static void fit(struct strbuf *out, const char *s, size_t max)
{
	size_t n = strlen(s), i = 0, chars = 0, cut = 0;

	while (i < n) {
		uint32_t cp;
		size_t len = utf8_decode(s + i, n - i, &cp);

		if (chars == max - 1)
			cut = i;
		i += len ? len : 1;
		chars++;
	}
	if (chars <= max) {
		sb_html(out, s, n);
		return;
	}
	sb_html(out, s, cut);
	sb_puts(out, "\xe2\x80\xa6");     /* ... */
}

/* s escaped whole. */
static void esc(struct strbuf *out, const char *s)
{
	if (s)
		sb_html(out, s, strlen(s));
}

static void text(struct strbuf *out, int x, int y, const char *attrs, const char *s, size_t max)
{
	sb_printf(out, "<text x=\"%d\" y=\"%d\"%s>", x, y, attrs);
	fit(out, s, max);
	sb_puts(out, "</text>");
}

static void rect(struct strbuf *out, int x, int y, int w, int h, int rx, const struct look *l)
{
	sb_printf(out, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" rx=\"%d\" fill=\"%s\" "
		  "stroke=\"%s\"", x, y, w, h, rx, l->fill, l->stroke);
	if (l->dash)
		sb_printf(out, " stroke-dasharray=\"%s\"", l->dash);
	sb_puts(out, "/>");
}

/* ---- geometry ---- */

static int root_cols(const struct draw_root *r)
{
	return r->n ? (int)((r->n + ROWS - 1) / ROWS) : 1;
}

static int root_w(const struct draw_root *r)
{
	int cols = root_cols(r);

	return 2 * ROOT_PAD + cols * DEV_W + (cols - 1) * DEV_GAP;
}

static int root_h(const struct draw_root *r)
{
	int rows = r->n < ROWS ? (int)r->n : ROWS;

	return ROOT_HEAD + rows * (DEV_H + DEV_GAP) + ROOT_PAD;
}

/* A band: roots [first, end) with the same NUMA node (or all rootless
 * boxes), laid in rows. */
struct band {
	size_t first, end;
	int w, h;
};

static bool rootless(const struct draw_root *r)
{
	return r->mark == DRAW_ROOT_NONE || r->mark == DRAW_ROOT_UNPLACED;
}

static bool same_band(const struct draw_root *a, const struct draw_root *b)
{
	return rootless(a) == rootless(b) && (rootless(a) || a->numa == b->numa);
}

/* Lay out roots [first, end): x/y of each relative to the band's inside;
 * the band's size. xs, ys may be NULL (size only). */
static void band_layout(const struct draw_picture *p, struct band *b, int *xs, int *ys)
{
	int x = 0, y = 0, row_h = 0, w = 0;

	for (size_t i = b->first; i < b->end; i++) {
		const struct draw_root *r = &p->roots[i];

		if (x && x + root_w(r) > PIC_MAX_W - 2 * (MARGIN + BAND_PAD)) {
			x = 0;
			y += row_h + ROOT_GAP;
			row_h = 0;
		}
		if (xs) {
			xs[i] = x;
			ys[i] = y;
		}
		x += root_w(r) + ROOT_GAP;
		w = x - ROOT_GAP > w ? x - ROOT_GAP : w;
		row_h = root_h(r) > row_h ? root_h(r) : row_h;
	}
	b->w = w + 2 * BAND_PAD;
	b->h = BAND_HEAD + y + row_h + BAND_PAD;
}

/* ---- elements ---- */

static void device_svg(struct strbuf *out, const struct draw_device *d, int x, int y)
{
	const struct look *l = device_look(d);
	const char *kind = d->kind == TOPO_GPU ? "GPU" : "EFA";
	char line2[2 * DRAW_TEXT];

	sb_printf(out, "<g class=\"dev %s %s\" data-kind=\"%s\" data-mark=\"%s\"",
		  d->kind == TOPO_GPU ? "gpu" : "efa", draw_mark_name(d->mark),
		  d->kind == TOPO_GPU ? "gpu" : "efa", draw_mark_name(d->mark));
	if (d->label[0]) {
		sb_puts(out, " data-label=\"");
		esc(out, d->label);
		sb_putc(out, '"');
	}
	sb_printf(out, " transform=\"translate(%d,%d)\"><title>%s ", x, y, kind);
	esc(out, d->label[0] ? d->label : "(not on the node)");
	sb_puts(out, ": ");
	esc(out, d->model[0] ? d->model : "unknown model");
	if (d->note[0]) {
		sb_puts(out, " \xe2\x80\x94 ");
		esc(out, d->note);
	}
	sb_puts(out, "</title>");
	rect(out, 0, 0, DEV_W, DEV_H, 4, l);
	sb_printf(out, "<text x=\"8\" y=\"16\" fill=\"%s\"><tspan font-weight=\"bold\">%s</tspan> ",
		  l->text, kind);
	fit(out, d->model[0] ? d->model : "unknown model", DEV_TEXT - 4);
	sb_puts(out, "</text>");
	if (d->mark != DRAW_OK && d->label[0])
		snprintf(line2, sizeof(line2), "%s \xc2\xb7 %s", d->label, mark_short[d->mark]);
	else if (d->mark != DRAW_OK)
		snprintf(line2, sizeof(line2), "%s", mark_short[d->mark]);
	else
		snprintf(line2, sizeof(line2), "%s", d->label);
	text(out, 8, 32, d->mark == DRAW_OK ? " fill=\"#3c4048\"" : " fill=\"#b71c1c\"", line2,
	     DEV_TEXT);
	sb_puts(out, "</g>");
}

/* The root's second line: its content, or what is wrong with it. */
static void root_status(const struct draw_picture *p, const struct draw_root *r, char *buf,
			size_t len)
{
	size_t g = 0, e = 0;

	for (size_t i = r->first; i < r->first + r->n; i++) {
		const struct draw_device *d = &p->devices[i];

		if (d->mark == DRAW_MISSING || d->mark == DRAW_LEFT || d->mark == DRAW_OFF_BUS)
			continue;
		g += d->kind == TOPO_GPU;
		e += d->kind == TOPO_EFA;
	}
	switch (r->mark) {
	case DRAW_ROOT_MISSING:
		snprintf(buf, len, "not on the node");
		return;
	case DRAW_ROOT_UNEXPECTED:
		snprintf(buf, len, "hwdb has no such root");
		return;
	case DRAW_ROOT_UNPLACED:
		snprintf(buf, len, "root unknown");
		return;
	default:
		break;
	}
	snprintf(buf, len, "%zu GPU%s \xc2\xb7 %zu EFA%s%s", g, g == 1 ? "" : "s", e,
		 e == 1 ? "" : "s", r->mark == DRAW_ROOT_SHORT ? " \xc2\xb7 short"
		 : r->mark == DRAW_ROOT_SURPLUS ? " \xc2\xb7 more than hwdb" : "");
}

static void root_svg(struct strbuf *out, const struct draw_picture *p, const struct draw_root *r,
		     int x, int y)
{
	struct look l = root_look(r->mark);
	const char *name = r->name[0] ? r->name : r->mark == DRAW_ROOT_NONE ? "(no PCIe root)"
					: "(PCIe root unknown)";
	char status[96];

	sb_printf(out, "<g class=\"root %s\" data-mark=\"%s\"", draw_root_mark_name(r->mark),
		  draw_root_mark_name(r->mark));
	if (r->name[0]) {
		sb_puts(out, " data-root=\"");
		esc(out, r->name);
		sb_putc(out, '"');
	}
	sb_printf(out, " transform=\"translate(%d,%d)\"><title>", x, y);
	esc(out, name);
	if (r->note[0]) {
		sb_puts(out, ": ");
		esc(out, r->note);
	}
	sb_puts(out, "</title>");
	rect(out, 0, 0, root_w(r), root_h(r), 6, &l);
	text(out, ROOT_PAD, 15, " font-weight=\"bold\" font-size=\"12\"", name, ROOT_TEXT);
	root_status(p, r, status, sizeof(status));
	sb_printf(out, "<text x=\"%d\" y=\"29\" fill=\"%s\">", ROOT_PAD, l.text);
	fit(out, status, ROOT_TEXT + 4);
	sb_puts(out, "</text>");
	for (size_t i = 0; i < r->n; i++)
		device_svg(out, &p->devices[r->first + i],
			   ROOT_PAD + (int)(i / ROWS) * (DEV_W + DEV_GAP),
			   ROOT_HEAD + (int)(i % ROWS) * (DEV_H + DEV_GAP));
	sb_puts(out, "</g>");
}

static void band_svg(struct strbuf *out, const struct draw_picture *p, const struct band *b,
		     const int *xs, const int *ys, int y)
{
	const struct draw_root *r0 = &p->roots[b->first];
	char head[48];

	if (rootless(r0))
		snprintf(head, sizeof(head), "outside the PCIe roots");
	else if (r0->numa < 0)
		snprintf(head, sizeof(head), "NUMA node unknown");
	else
		snprintf(head, sizeof(head), "NUMA node %d", r0->numa);
	sb_printf(out, "<g class=\"numa\" data-numa=\"%d\" transform=\"translate(%d,%d)\">",
		  rootless(r0) ? -2 : r0->numa, MARGIN, y);
	rect(out, 0, 0, b->w, b->h, 8, &(struct look){ "#f3f4f6", "#d0d4da", NULL, NULL });
	text(out, BAND_PAD, 16, " font-weight=\"bold\" fill=\"#3c4048\"", head, 40);
	for (size_t i = b->first; i < b->end; i++)
		root_svg(out, p, &p->roots[i], BAND_PAD + xs[i], BAND_HEAD + ys[i]);
	sb_puts(out, "</g>");
}

/* The legend's entries: GPU, EFA, then every mark the picture uses, in
 * rows that wrap at width; drawn into out from y (out NULL: measured
 * only). Returns the y below it. */
static int legend_svg(struct strbuf *out, const struct draw_picture *p, int y, int width)
{
	bool used[DRAW_N_MARKS] = { [DRAW_OK] = true };
	int x = MARGIN;

	for (size_t i = 0; i < p->n_devices; i++)
		used[p->devices[i].mark] = true;
	if (out)
		sb_printf(out, "<g class=\"legend\" transform=\"translate(0,%d)\">", y);
	for (int m = 0; m < DRAW_N_MARKS + 1; m++) {
		const struct look *l = m < 2 ? &dev_ok[m] : &dev_marked[m - 1];
		const char *words = m == 0 ? "GPU" : m == 1 ? "EFA" : mark_words[m - 1];
		int w = 36 + 6 * (int)strlen(words);

		if (m >= 2 && !used[m - 1])
			continue;
		if (x + w > width - MARGIN && x > MARGIN) {
			x = MARGIN;
			y += LEGEND_ROW;
			if (out)
				sb_printf(out, "</g><g class=\"legend\" transform=\"translate(0,%d)\">",
					  y);
		}
		if (out) {
			rect(out, x, 0, 14, 14, 3, l);
			text(out, x + 20, 11, "", words, 60);
		}
		x += w;
	}
	if (out)
		sb_puts(out, "</g>");
	return y + LEGEND_ROW;
}

int draw_svg(const struct draw_picture *p, const struct draw_svg_opts *o, struct strbuf *out)
{
	static const struct draw_svg_opts none = { 0 };
	struct band *bands = calloc(p->n_roots ? p->n_roots : 1, sizeof(*bands));
	int *xs = calloc(p->n_roots ? p->n_roots : 1, sizeof(*xs));
	int *ys = calloc(p->n_roots ? p->n_roots : 1, sizeof(*ys));
	size_t nb = 0;
	int w = 520, h = MARGIN + TITLE_H, y;

	if (!o)
		o = &none;
	if (!bands || !xs || !ys) {
		free(bands);
		free(xs);
		free(ys);
		return -ENOMEM;
	}
	for (size_t i = 0; i < p->n_roots; i = bands[nb++].end) {
		size_t end = i + 1;

		while (end < p->n_roots && same_band(&p->roots[i], &p->roots[end]))
			end++;
		bands[nb] = (struct band){ .first = i, .end = end };
		band_layout(p, &bands[nb], xs, ys);
		w = bands[nb].w + 2 * MARGIN > w ? bands[nb].w + 2 * MARGIN : w;
		h += bands[nb].h + ROOT_GAP;
	}
	y = h;
	h = legend_svg(NULL, p, y, w) + (int)o->n_caption * CAPTION_LINE + MARGIN;
	if (o->standalone)
		sb_puts(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	sb_printf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"topology\" "
		  "width=\"%d\" height=\"", w);
	sb_printf(out, "%d\" viewBox=\"0 0 %d %d\" role=\"img\" font-family=\"DejaVu Sans, "
		  "Verdana, Arial, sans-serif\" font-size=\"11\"><title>", h, w, h);
	esc(out, p->title);
	sb_puts(out, ": ");
	esc(out, p->subtitle);
	sb_printf(out, "</title><rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>", w, h);
	text(out, MARGIN, MARGIN + 14, " class=\"title\" font-size=\"16\" font-weight=\"bold\" "
	     "fill=\"#1f2328\"", p->title, 80);
	text(out, MARGIN, MARGIN + 34, " class=\"subtitle\" fill=\"#3c4048\" font-size=\"12\"",
	     p->subtitle ? p->subtitle : "", LINE_TEXT);
	y = MARGIN + TITLE_H;
	for (size_t b = 0; b < nb; b++) {
		band_svg(out, p, &bands[b], xs, ys, y);
		y += bands[b].h + ROOT_GAP;
	}
	y = legend_svg(out, p, y, w);
	for (size_t i = 0; i < o->n_caption; i++)
		text(out, MARGIN, y + (int)i * CAPTION_LINE + 11, " class=\"caption\" fill=\"#1f2328\"",
		     o->caption[i], LINE_TEXT);
	sb_puts(out, "</svg>\n");
	free(bands);
	free(xs);
	free(ys);
	return sb_error(out);
}
