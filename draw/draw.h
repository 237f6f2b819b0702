/* draw.h - a PCIe topology as a picture: NUMA nodes, the PCIe roots as
 * boxes, each GPU and EFA inside its root with its model and address, and,
 * when the picture is of a node against what hwdb expects, what drifted
 * drawn where it happened (a missing GPU as a ghost in the root that lacks
 * it, an EFA that left its root, a device hwdb does not have there).
 *
 * Two steps, so that the three users draw the same thing:
 *
 *   draw_node() / draw_type()  a topology (and its expected entry), or an
 *                              hwdb entry, into a struct draw_picture;
 *   draw_svg()                 the picture as SVG, inline in a page (the
 *                              coordinator's node and type pages) or as a
 *                              file of its own (`dratopo-agent probe -o
 *                              svg`, `dratopo hwdb show TYPE -o svg`).
 *
 * Roots are paired with hwdb's by topo_pair_roots(), the rule the
 * remedies use, so a picture and the DeviceTaintRules it explains agree.
 *
 * Every string drawn (names from a report, models from an hwdb extra) is
 * escaped, cut to fit its box (the whole text stays in the element's
 * <title>) and repaired where it is not UTF-8: a hostile report draws as
 * text and the file stays well-formed XML.
 *
 * Memory: a picture owns its arrays and copies every string it keeps;
 * draw_picture_free() releases it. Nothing here reads a file or the host. */
#ifndef DT_DRAW_H
#define DT_DRAW_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"
#include "hwdb.h"
#include "strbuf.h"
#include "topo.h"

/* What is wrong with a device, as drawn. */
enum draw_mark {
	DRAW_OK,
	DRAW_MISSING,           /* expected on this root, not on the node: a ghost */
	DRAW_LEFT,              /* a ghost too, but the node has one more elsewhere */
	DRAW_OFF_BUS,           /* listed, but fell off the bus: counts as missing */
	DRAW_WRONG_MODEL,       /* not the model hwdb has */
	DRAW_NO_ROOT,           /* under no PCIe root */
	DRAW_UNEXPECTED,        /* on a root hwdb does not have */
};
#define DRAW_N_MARKS 7

/* What is wrong with a root, as drawn. */
enum draw_root_mark {
	DRAW_ROOT_OK,
	DRAW_ROOT_SHORT,        /* it lacks devices hwdb has on it */
	DRAW_ROOT_SURPLUS,      /* it holds more than hwdb has on it */
	DRAW_ROOT_MISSING,      /* hwdb's root the node lacks: a ghost */
	DRAW_ROOT_UNEXPECTED,   /* a root hwdb does not have */
	DRAW_ROOT_NONE,         /* the box of devices without a root */
	DRAW_ROOT_UNPLACED,     /* hwdb knows counts only: roots unknown */
};

/* The CSS class word of a mark ("ok", "missing", "left", "off-bus",
 * "wrong-model", "no-root", "unexpected"); the DOM carries it. */
const char *draw_mark_name(enum draw_mark m);
const char *draw_root_mark_name(enum draw_root_mark m);

#define DRAW_TEXT 96

struct draw_device {
	enum topo_kind kind;
	enum draw_mark mark;
	char label[DRAW_TEXT];          /* a BDF, hwdb's device name, or "" (ghost) */
	char model[DRAW_TEXT];          /* "" when unknown */
	char note[2 * DRAW_TEXT];       /* why it is marked, in words; "" */
};

struct draw_root {
	char name[DRAW_TEXT];           /* "" for the NONE and UNPLACED boxes */
	int numa;                       /* -1 unknown */
	enum draw_root_mark mark;
	char note[2 * DRAW_TEXT];       /* "hwdb has 1 GPU + 4 EFAs here"; "" */
	size_t first, n;                /* its devices: devices[first .. first+n) */
};

struct draw_picture {
	char *title;                    /* a node or type name; owned */
	char *subtitle;                 /* "8 GPUs, 32 EFAs on 8 PCIe roots"; owned */
	struct draw_root *roots;        /* by NUMA node (unknown last), then name */
	size_t n_roots;
	struct draw_device *devices;    /* grouped by root, GPUs first */
	size_t n_devices;
	size_t n_marked;                /* devices and roots (but the boxes outside
					 * the roots) not OK */
	bool compared;                  /* drawn against an expected entry */
};

/* Node t (its title: the node's name, or NULL for t's instance type),
 * drawn against expected (NULL: as it is, with only what the node shows by
 * itself marked: devices off the bus or without a root). 0, -ENOMEM. */
int draw_node(const struct topo *t, const struct hwdb_type *expected,
	      const char *title, struct draw_picture *out, struct dt_err *err);
/* What hwdb's (or a learned) entry says a node of the type has. */
int draw_type(const struct hwdb_type *e, struct draw_picture *out, struct dt_err *err);
void draw_picture_free(struct draw_picture *p);

struct draw_svg_opts {
	/* A file of its own: an XML declaration first. Otherwise the <svg>
	 * element alone, for a page (the same markup either way). */
	bool standalone;
	/* Lines written under the picture (a standalone file's differences
	 * in words); may be NULL. */
	const char *const *caption;
	size_t n_caption;
};

/* Append p as SVG. 0 or -ENOMEM. */
int draw_svg(const struct draw_picture *p, const struct draw_svg_opts *o, struct strbuf *out);

#endif
