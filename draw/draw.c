/* draw.c - the picture of a node or an instance type (draw.h): which roots
 * and devices to draw, and what is wrong with each. The SVG is draw_svg.c.
 *
 * A node against hwdb, root by root (roots paired by topo_pair_roots):
 *   - a root with fewer live GPUs or EFAs than its hwdb root gets ghosts
 *     for the difference (devices that fell off the bus stand for missing
 *     ones first and are drawn where they are, marked off the bus);
 *   - a ghost is "left" rather than "missing" when the node still has that
 *     many devices of the kind: it has them on another root (which one is
 *     named), without a root, or on a root hwdb lacks;
 *   - a root holding more than its hwdb root is marked as a whole: which
 *     of its devices is the stray cannot be told;
 *   - hwdb's roots nobody paired are drawn as ghost roots, the node's roots
 *     hwdb lacks as unexpected roots;
 *   - a device of another model than hwdb's is marked itself.
 * Without hwdb's grouping (counts only) the node's roots are drawn as they
 * are and the devices it lacks go into one box whose root is unknown. */
#include "draw.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "topo_root_pair.h"

const char *draw_mark_name(enum draw_mark m)
{
	static const char *const names[DRAW_N_MARKS] = {
		"ok", "missing", "left", "off-bus", "wrong-model", "no-root", "unexpected",
	};

	return (unsigned)m < DRAW_N_MARKS ? names[m] : "ok";
}

const char *draw_root_mark_name(enum draw_root_mark m)
{
	switch (m) {
	case DRAW_ROOT_SHORT: return "short";
	case DRAW_ROOT_SURPLUS: return "surplus";
	case DRAW_ROOT_MISSING: return "missing";
	case DRAW_ROOT_UNEXPECTED: return "unexpected";
	case DRAW_ROOT_NONE: return "no-root";
	case DRAW_ROOT_UNPLACED: return "unplaced";
	case DRAW_ROOT_OK: break;
	}
	return "ok";
}

void draw_picture_free(struct draw_picture *p)
{
	if (!p)
		return;
	free(p->title);
	free(p->subtitle);
	free(p->roots);
	free(p->devices);
	memset(p, 0, sizeof(*p));
}

/* ---- building a picture ---- */

struct build {
	struct draw_picture *p;
	size_t cap_roots, cap_devices;
	bool oom;
};

static struct draw_root *add_root(struct build *b, const char *name, int numa,
				  enum draw_root_mark mark)
{
	struct draw_picture *p = b->p;
	struct draw_root *r;

	if (DT_GROW(p->roots, b->cap_roots, p->n_roots + 1)) {
		b->oom = true;
		return NULL;
	}
	r = &p->roots[p->n_roots++];
	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "%s", name ? name : "");
	r->numa = numa < 0 ? -1 : numa;
	r->mark = mark;
	r->first = p->n_devices;
	/* the boxes outside the roots are no finding by themselves: their
	 * devices are marked */
	p->n_marked += mark != DRAW_ROOT_OK && mark != DRAW_ROOT_NONE && mark != DRAW_ROOT_UNPLACED;
	return r;
}

/* A device of the root added last. */
static struct draw_device *add_device(struct build *b, enum topo_kind kind,
				      enum draw_mark mark, const char *label, const char *model)
{
	struct draw_picture *p = b->p;
	struct draw_device *d;

	if (DT_GROW(p->devices, b->cap_devices, p->n_devices + 1)) {
		b->oom = true;
		return NULL;
	}
	d = &p->devices[p->n_devices++];
	memset(d, 0, sizeof(*d));
	d->kind = kind;
	d->mark = mark;
	snprintf(d->label, sizeof(d->label), "%s", label ? label : "");
	snprintf(d->model, sizeof(d->model), "%s", model ? model : "");
	p->roots[p->n_roots - 1].n++;
	p->n_marked += mark != DRAW_OK;
	return d;
}

static void note(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void note(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

static const char *plural(size_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

/* "1 GPU + 4 EFAs" */
static void counts_text(char *buf, size_t len, size_t gpus, size_t efas)
{
	note(buf, len, "%zu %s + %zu %s", gpus, plural(gpus, "GPU", "GPUs"), efas,
	     plural(efas, "EFA", "EFAs"));
}

/* "8 GPUs, 32 EFAs on 8 PCIe roots"; roots 0: where is not known. */
static const char *summary(char *buf, size_t len, size_t gpus, size_t efas, size_t roots)
{
	note(buf, len, "%zu %s, %zu %s ", gpus, plural(gpus, "GPU", "GPUs"), efas,
	     plural(efas, "EFA", "EFAs"));
	if (!roots)
		note(buf + strlen(buf), len - strlen(buf), "(PCIe roots unknown)");
	else
		note(buf + strlen(buf), len - strlen(buf), "on %zu PCIe %s", roots,
		     plural(roots, "root", "roots"));
	return buf;
}

/* Roots by NUMA node (unknown last), boxes without a root after every
 * real root, then by name. */
static int root_cmp(const void *a, const void *b)
{
	const struct draw_root *x = a, *y = b;
	bool xr = x->mark != DRAW_ROOT_NONE && x->mark != DRAW_ROOT_UNPLACED;
	bool yr = y->mark != DRAW_ROOT_NONE && y->mark != DRAW_ROOT_UNPLACED;

	if (xr != yr)
		return xr ? -1 : 1;
	if (x->numa != y->numa)
		return x->numa < 0 ? 1 : y->numa < 0 ? -1 : x->numa - y->numa;
	return strcmp(x->name, y->name);
}

static int finish(struct build *b, const char *title, struct dt_err *err)
{
	struct draw_picture *p = b->p;

	if (!b->oom && !(p->title = strdup(title ? title : "")))
		b->oom = true;
	if (b->oom) {
		draw_picture_free(p);
		return dt_err_set(err, -ENOMEM, "draw: out of memory");
	}
	qsort(p->roots, p->n_roots, sizeof(*p->roots), root_cmp);
	return 0;
}

static int set_subtitle(struct build *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int set_subtitle(struct build *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&b->p->subtitle, fmt, ap) < 0) {
		b->p->subtitle = NULL;
		b->oom = true;
	}
	va_end(ap);
	return b->oom ? -ENOMEM : 0;
}

/* ---- an hwdb entry ---- */

static const char *efa_model(uint16_t device)
{
	const struct hwdb_pci_efa *e = device ? hwdb_pci_efa(HWDB_PCI_VENDOR_AMAZON, device) : NULL;

	return e ? e->name : "EFA";
}

/* The entry's GPU as the node's are named: hwdb's PCI table for its id,
 * else the driver's product name. */
static const char *gpu_model(const struct hwdb_type *e)
{
	const struct hwdb_pci_gpu *g = e->gpu_device ? hwdb_pci_gpu(e->gpu_vendor, e->gpu_device)
						     : NULL;

	return g ? g->model : e->gpu_model ? e->gpu_model : "GPU";
}

static int hwdb_root_numa(const struct hwdb_type *e, const char *root)
{
	for (size_t i = 0; i < e->n_gpus + e->n_efas; i++) {
		const struct hwdb_device *d = i < e->n_gpus ? &e->gpus[i] : &e->efas[i - e->n_gpus];

		if (d->pcie_root && !strcmp(d->pcie_root, root))
			return d->numa_node;
	}
	return -1;
}

/* The entry's devices on root (NULL: those without one), GPUs first. */
static void type_devices(struct build *b, const struct hwdb_type *e, const char *root)
{
	for (size_t i = 0; i < e->n_gpus + e->n_efas; i++) {
		bool gpu = i < e->n_gpus;
		const struct hwdb_device *d = gpu ? &e->gpus[i] : &e->efas[i - e->n_gpus];
		bool here = root ? d->pcie_root && !strcmp(d->pcie_root, root) : !d->pcie_root;

		if (here)
			add_device(b, gpu ? TOPO_GPU : TOPO_EFA, DRAW_OK, d->name,
				   gpu ? gpu_model(e) : efa_model(e->efa_device));
	}
}

int draw_type(const struct hwdb_type *e, struct draw_picture *out, struct dt_err *err)
{
	size_t cap = e->n_gpus + e->n_efas, n = 0, placed = 0;
	struct hwdb_root *roots = calloc(cap ? cap : 1, sizeof(*roots));
	struct build b = { .p = out, .oom = !roots };
	char buf[128];

	memset(out, 0, sizeof(*out));
	if (roots && e->dra_metadata)
		n = hwdb_type_roots(e, roots, cap);
	for (size_t i = 0; i < n && !b.oom; i++) {
		if (add_root(&b, roots[i].name, hwdb_root_numa(e, roots[i].name), DRAW_ROOT_OK))
			type_devices(&b, e, roots[i].name);
		placed += roots[i].n_gpus + roots[i].n_efas;
	}
	if (!b.oom && placed < cap && add_root(&b, NULL, -1, DRAW_ROOT_UNPLACED)) {
		note(b.p->roots[b.p->n_roots - 1].note, sizeof(b.p->roots[0].note),
		     "hwdb has no PCIe roots for %s: its device list was not scraped from a live "
		     "node", e->name);
		type_devices(&b, e, NULL);
	}
	free(roots);
	if (!b.oom)
		set_subtitle(&b, "%s", summary(buf, sizeof(buf), e->n_gpus, e->n_efas, n));
	return finish(&b, e->name, err);
}

/* ---- a node ---- */

enum { GPU = TOPO_GPU, EFA = TOPO_EFA };

struct node_build {
	struct build b;
	const struct topo *t;
	const struct hwdb_type *e;      /* NULL: drawn as it is */
	struct topo_root_pairing pair;
	size_t live[2], dead[2], want[2];
	size_t left[2];                 /* ghosts still to draw as "left" */
	char elsewhere[2][DRAW_TEXT];   /* where the node has more than hwdb */
};

static const char *kind_word(int k, size_t n)
{
	return k == GPU ? plural(n, "GPU", "GPUs") : plural(n, "EFA", "EFAs");
}

static size_t sub(size_t a, size_t b)
{
	return a > b ? a - b : 0;
}

/* Live and dead devices of kind k on root r. */
static void root_kind(const struct topo *t, const struct topo_root *r, int k,
		      size_t *live, size_t *dead)
{
	const size_t *idx = k == GPU ? r->gpus : r->efas;
	size_t n = k == GPU ? r->n_gpus : r->n_efas;

	*live = *dead = 0;
	for (size_t j = 0; j < n; j++) {
		if (t->devices[idx[j]].fell_off_bus)
			(*dead)++;
		else
			(*live)++;
	}
}

static size_t expected_kind(const struct hwdb_root *x, int k)
{
	return k == GPU ? x->n_gpus : x->n_efas;
}

/* How many ghosts of kind k node root i gets. */
static size_t root_ghosts(const struct node_build *nb, size_t i, int k)
{
	long x = nb->pair.of_root[i];
	size_t live, dead;

	if (x < 0)
		return 0;
	root_kind(nb->t, &nb->t->roots[i], k, &live, &dead);
	return sub(expected_kind(&nb->pair.expected[x], k), live + dead);
}

/* Where the node keeps more devices of kind k than hwdb has there: a root
 * with more than its hwdb root, one hwdb lacks, or no root at all. */
static void find_elsewhere(struct node_build *nb, int k)
{
	const struct topo *t = nb->t;

	for (size_t i = 0; i < t->n_roots; i++) {
		long x = nb->pair.of_root[i];
		size_t live, dead;

		root_kind(t, &t->roots[i], k, &live, &dead);
		if (live > (x < 0 ? 0 : expected_kind(&nb->pair.expected[x], k))) {
			snprintf(nb->elsewhere[k], DRAW_TEXT, "%s", t->roots[i].name);
			return;
		}
	}
	snprintf(nb->elsewhere[k], DRAW_TEXT, "no PCIe root");
}

/* Totals, and how many ghosts stand for devices the node has elsewhere:
 * the devices drawn as missing (ghosts and devices off the bus) beyond
 * what the node lacks in all. */
static void node_totals(struct node_build *nb)
{
	const struct topo *t = nb->t;

	for (size_t i = 0; i < t->n_devices; i++) {
		const struct topo_device *d = &t->devices[i];

		if (d->fell_off_bus)
			nb->dead[d->kind]++;
		else
			nb->live[d->kind]++;
	}
	if (!nb->e)
		return;
	nb->want[GPU] = nb->e->n_gpus;
	nb->want[EFA] = nb->e->n_efas;
	for (int k = GPU; k <= EFA; k++) {
		size_t ghosts = 0;

		if (!nb->pair.n_expected)
			ghosts = sub(nb->want[k], nb->live[k] + nb->dead[k]);
		for (size_t i = 0; i < t->n_roots; i++)
			ghosts += root_ghosts(nb, i, k);
		for (size_t x = 0; x < nb->pair.n_expected; x++)
			if (nb->pair.of_expected[x] < 0)
				ghosts += expected_kind(&nb->pair.expected[x], k);
		nb->left[k] = sub(ghosts + nb->dead[k], sub(nb->want[k], nb->live[k]));
		if (nb->left[k] > ghosts)
			nb->left[k] = ghosts;
		if (nb->left[k])
			find_elsewhere(nb, k);
	}
}

static const char *device_model(const struct topo_device *d, char *buf, size_t len)
{
	if (d->model)
		return d->model;
	note(buf, len, "unknown %04x:%04x", d->vendor, d->device);
	return buf;
}

/* The node's device d: its mark and the words for it. */
static void node_device(struct node_build *nb, const struct topo_device *d, bool unexpected)
{
	const struct hwdb_type *e = nb->e;
	enum draw_mark mark = DRAW_OK;
	struct draw_device *dd;
	char model[DRAW_TEXT];
	bool wrong = e && (d->kind == TOPO_GPU
			   ? e->gpu_device && (d->vendor != e->gpu_vendor || d->device != e->gpu_device)
			   : e->efa_device && d->device != e->efa_device);

	if (d->fell_off_bus)
		mark = DRAW_OFF_BUS;
	else if (!d->pcie_root[0])
		mark = DRAW_NO_ROOT;
	else if (wrong)
		mark = DRAW_WRONG_MODEL;
	else if (unexpected)
		mark = DRAW_UNEXPECTED;
	dd = add_device(&nb->b, d->kind, mark, d->bdf_str, device_model(d, model, sizeof(model)));
	if (!dd)
		return;
	switch (mark) {
	case DRAW_OFF_BUS:
		note(dd->note, sizeof(dd->note), "fell off the bus (its config space reads all "
		     "ones): it counts as missing");
		break;
	case DRAW_NO_ROOT:
		note(dd->note, sizeof(dd->note), "its sysfs path leads to no PCIe root");
		break;
	case DRAW_WRONG_MODEL:
		if (d->kind == TOPO_GPU)
			note(dd->note, sizeof(dd->note), "model %04x:%04x; hwdb has %04x:%04x (%s)",
			     d->vendor, d->device, e->gpu_vendor, e->gpu_device, gpu_model(e));
		else
			note(dd->note, sizeof(dd->note), "EFA device %04x; hwdb has %04x (%s)",
			     d->device, e->efa_device, efa_model(e->efa_device));
		break;
	case DRAW_UNEXPECTED:
		note(dd->note, sizeof(dd->note), "on a PCIe root hwdb does not have");
		break;
	default:
		break;
	}
}

/* n ghosts of kind k in the root added last; want is hwdb's count there. */
static void ghosts(struct node_build *nb, int k, size_t n, size_t want)
{
	const struct hwdb_type *e = nb->e;

	for (size_t j = 0; j < n; j++) {
		bool left = nb->left[k] > 0;
		struct draw_device *dd = add_device(&nb->b, (enum topo_kind)k,
						    left ? DRAW_LEFT : DRAW_MISSING, "",
						    k == GPU ? gpu_model(e) : efa_model(e->efa_device));

		if (!dd)
			return;
		if (left) {
			nb->left[k]--;
			note(dd->note, sizeof(dd->note), "hwdb has %zu %s on this root; the node has "
			     "this one elsewhere (%s)", want, kind_word(k, want), nb->elsewhere[k]);
		} else {
			note(dd->note, sizeof(dd->note), "hwdb has %zu %s on this root; the node "
			     "lacks this one", want, kind_word(k, want));
		}
	}
}

/* "hwdb has 1 GPU + 4 EFAs here; the node 1 GPU + 2 EFAs", naming hwdb's
 * root when the node's is named otherwise. */
static void root_note(struct draw_root *r, const struct hwdb_root *x, size_t lg, size_t le)
{
	char want[48], have[48];
	bool same = !strcmp(x->name, r->name);

	counts_text(want, sizeof(want), x->n_gpus, x->n_efas);
	counts_text(have, sizeof(have), lg, le);
	note(r->note, sizeof(r->note), "hwdb has %s %s%s; the node %s", want,
	     same ? "here" : "on its ", same ? "" : x->name, have);
}

static void node_root(struct node_build *nb, size_t i)
{
	const struct topo *t = nb->t;
	const struct topo_root *r = &t->roots[i];
	long x = nb->pair.of_root[i];
	const struct hwdb_root *xr = x >= 0 ? &nb->pair.expected[x] : NULL;
	bool unexpected = nb->pair.n_expected && !xr;
	enum draw_root_mark mark = unexpected ? DRAW_ROOT_UNEXPECTED : DRAW_ROOT_OK;
	size_t live[2], dead[2];
	struct draw_root *dr;
	int numa = topo_root_numa(t, r);

	for (int k = GPU; k <= EFA; k++) {
		root_kind(t, r, k, &live[k], &dead[k]);
		if (xr && live[k] < expected_kind(xr, k))
			mark = DRAW_ROOT_SHORT;
		else if (xr && live[k] > expected_kind(xr, k) && mark == DRAW_ROOT_OK)
			mark = DRAW_ROOT_SURPLUS;
	}
	if (numa < 0 && xr)
		numa = hwdb_root_numa(nb->e, xr->name);
	dr = add_root(&nb->b, r->name, numa, mark);
	if (!dr)
		return;
	if (mark == DRAW_ROOT_UNEXPECTED)
		note(dr->note, sizeof(dr->note), "hwdb has %zu PCIe %s with GPUs or EFAs, "
		     "none left for this one", nb->pair.n_expected,
		     plural(nb->pair.n_expected, "root", "roots"));
	else if (mark != DRAW_ROOT_OK)
		root_note(dr, xr, live[GPU], live[EFA]);
	for (size_t j = 0; j < r->n_gpus; j++)
		node_device(nb, &t->devices[r->gpus[j]], unexpected);
	if (xr)
		ghosts(nb, GPU, root_ghosts(nb, i, GPU), xr->n_gpus);
	for (size_t j = 0; j < r->n_efas; j++)
		node_device(nb, &t->devices[r->efas[j]], unexpected);
	if (xr)
		ghosts(nb, EFA, root_ghosts(nb, i, EFA), xr->n_efas);
}

/* hwdb's roots the node has nothing for, as ghosts. */
static void missing_roots(struct node_build *nb)
{
	for (size_t x = 0; x < nb->pair.n_expected && !nb->b.oom; x++) {
		const struct hwdb_root *xr = &nb->pair.expected[x];
		struct draw_root *dr;
		char want[48];

		if (nb->pair.of_expected[x] >= 0)
			continue;
		dr = add_root(&nb->b, xr->name, hwdb_root_numa(nb->e, xr->name), DRAW_ROOT_MISSING);
		if (!dr)
			return;
		counts_text(want, sizeof(want), xr->n_gpus, xr->n_efas);
		note(dr->note, sizeof(dr->note), "hwdb has this root with %s; the node has no "
		     "root left for it", want);
		ghosts(nb, GPU, xr->n_gpus, xr->n_gpus);
		ghosts(nb, EFA, xr->n_efas, xr->n_efas);
	}
}

static void rootless(struct node_build *nb)
{
	const struct topo *t = nb->t;
	struct draw_root *dr = NULL;

	for (size_t i = 0; i < t->n_devices && !nb->b.oom; i++) {
		if (t->devices[i].pcie_root[0])
			continue;
		if (!dr && !(dr = add_root(&nb->b, NULL, -1, DRAW_ROOT_NONE)))
			return;
		note(dr->note, sizeof(dr->note), "devices whose sysfs path leads to no PCIe root");
		node_device(nb, &t->devices[i], false);
	}
}

/* Without hwdb's grouping: what the node lacks, in one box. */
static void unplaced(struct node_build *nb)
{
	size_t g = sub(nb->want[GPU], nb->live[GPU] + nb->dead[GPU]);
	size_t f = sub(nb->want[EFA], nb->live[EFA] + nb->dead[EFA]);
	struct draw_root *dr;

	if (!nb->e || nb->pair.n_expected || (!g && !f))
		return;
	dr = add_root(&nb->b, NULL, -1, DRAW_ROOT_UNPLACED);
	if (!dr)
		return;
	note(dr->note, sizeof(dr->note), "hwdb has no PCIe roots for %s: where these belong "
	     "is not known", nb->e->name);
	ghosts(nb, GPU, g, nb->want[GPU]);
	ghosts(nb, EFA, f, nb->want[EFA]);
}

int draw_node(const struct topo *t, const struct hwdb_type *expected,
	      const char *title, struct draw_picture *out, struct dt_err *err)
{
	struct node_build nb = { .b = { .p = out }, .t = t, .e = expected };
	char have[128];
	int rc;

	memset(out, 0, sizeof(*out));
	out->compared = expected != NULL;
	if (topo_pair_roots(t, expected, &nb.pair))
		nb.b.oom = true;
	if (!nb.b.oom) {
		node_totals(&nb);
		for (size_t i = 0; i < t->n_roots; i++)
			node_root(&nb, i);
		missing_roots(&nb);
		rootless(&nb);
		unplaced(&nb);
		summary(have, sizeof(have), nb.live[GPU], nb.live[EFA], t->n_roots);
		if (expected)
			set_subtitle(&nb.b, "%s; hwdb has %zu %s, %zu %s", have, nb.want[GPU],
				     kind_word(GPU, nb.want[GPU]), nb.want[EFA],
				     kind_word(EFA, nb.want[EFA]));
		else
			set_subtitle(&nb.b, "%s", have);
	}
	topo_root_pairing_free(&nb.pair);
	rc = finish(&nb.b, title ? title : t->instance_type ? t->instance_type
				 : "(instance type unknown)", err);
	return rc;
}
