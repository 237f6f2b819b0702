/* reconcile_pack.c - a report's devices, checked and packed the way the
 * fleet keeps them, and unpacked into topo's model. See
 * reconcile_internal.h. */
#include "reconcile_internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"

/* The strings of one report, each kept once, in the order first seen.
 * slots is an open-addressing table of offset + 1 (0: empty) at least twice
 * the strings' count: a report has up to 3 strings per device, and a linear
 * search of them per string was a visible share of a heartbeat's CPU. */
struct strings {
	char *buf;
	size_t len;
	uint16_t *slots;
	size_t mask;
};

#define RDMA_NAME_MAX 64

/* Room for the strings of r's devices (at most n_devices <= REC_MAX_DEVICES):
 * each string counted up to its field's size, as longer ones are refused.
 * Sized to the report, not to the worst case: this runs for every report,
 * heartbeats included. */
static int strings_init(struct strings *st, const struct rec_report *r)
{
	size_t cap = 1;

	for (size_t i = 0; i < r->n_devices; i++) {
		const struct rec_device *d = &r->devices[i];

		cap += (d->pcie_root ? strnlen(d->pcie_root, TOPO_NAME_MAX) : 0) + 1;
		cap += (d->link_speed ? strnlen(d->link_speed, TOPO_NAME_MAX) : 0) + 1;
		cap += (d->rdma_device ? strnlen(d->rdma_device, RDMA_NAME_MAX) : 0) + 1;
	}
	st->len = 0;
	st->mask = 15;
	while (st->mask + 1 < 2 * (3 * r->n_devices + 1))
		st->mask = st->mask * 2 + 1;
	st->buf = malloc(cap);
	st->slots = calloc(st->mask + 1, sizeof(*st->slots));
	return st->buf && st->slots ? 0 : -ENOMEM;
}

static void strings_free(struct strings *st)
{
	free(st->buf);
	free(st->slots);
}

static size_t str_hash(const char *s, size_t len)
{
	return (size_t)hash_fnv1a(HASH_FNV_OFFSET, s, len);
}

static bool printable(const char *s)
{
	for (; *s; s++)
		if (!isprint((unsigned char)*s))
			return false;
	return true;
}

/* Offset + 1 of s in st (added when new); 0 for none. -1 when s does not
 * fit in a field of size bytes or is not printable. */
static int intern(struct strings *st, const char *s, size_t size)
{
	size_t len, i;

	if (!s || !*s)
		return 0;
	len = strlen(s);
	if (len >= size || !printable(s))
		return -1;
	i = str_hash(s, len) & st->mask;
	for (; st->slots[i]; i = (i + 1) & st->mask)
		if (strcmp(st->buf + st->slots[i] - 1, s) == 0)
			return st->slots[i];
	memcpy(st->buf + st->len, s, len + 1);
	st->slots[i] = (uint16_t)(st->len + 1);
	st->len += len + 1;
	return st->slots[i];
}

static struct topo_bdf pdev_bdf(const struct rec_pdev *p)
{
	return (struct topo_bdf){ p->domain, p->bus, p->dev, p->func };
}

static int pdev_cmp(const void *a, const void *b)
{
	struct topo_bdf x = pdev_bdf(a), y = pdev_bdf(b);

	return topo_bdf_cmp(&x, &y);
}

static int bad(struct dt_err *err, const struct rec_report *r, size_t i, const char *what)
{
	const char *bdf = r->devices[i].bdf;

	return dt_err_set(err, -EINVAL, "node %s: devices[%zu]%s%.*s%s: %s", r->node_name, i,
			  bdf ? " (" : "", TOPO_NAME_MAX, bdf ? bdf : "", bdf ? ")" : "", what);
}

/* Device i of r checked, except its strings (intern checks those). */
static int check_device(const struct rec_report *r, size_t i, struct topo_bdf *bdf,
			struct dt_err *err)
{
	const struct rec_device *d = &r->devices[i];

	if (!d->bdf || topo_bdf_parse(d->bdf, bdf))
		return bad(err, r, i, "bdf is not a PCI address (DDDD:BB:DD.F, lower-case hex)");
	if (d->kind != TOPO_GPU && d->kind != TOPO_EFA)
		return bad(err, r, i, "kind is neither GPU nor EFA");
	if (d->vendor > 0xffff || d->device > 0xffff || d->subsystem_vendor > 0xffff ||
	    d->subsystem_device > 0xffff)
		return bad(err, r, i, "a PCI id is larger than 0xffff");
	if (d->numa_node < -1 || d->numa_node > 1023)
		return bad(err, r, i, "numaNode is not -1..1023");
	if (d->link_width > 64)
		return bad(err, r, i, "linkWidth is more than 64 lanes");
	return 0;
}

/* The fields of a checked device, strings aside, into p (zeroed by the
 * caller, so that packs compare with memcmp). */
static void fill_pdev(const struct rec_device *d, const struct topo_bdf *bdf,
		      struct rec_pdev *p)
{
	p->domain = bdf->domain;
	p->bus = bdf->bus;
	p->dev = bdf->dev;
	p->func = bdf->func;
	p->flags = (uint8_t)((d->kind == TOPO_EFA ? PDEV_EFA : 0) |
			     (d->subsystem_vendor || d->subsystem_device ? PDEV_SUBSYS : 0) |
			     (d->fell_off_bus ? PDEV_FELL_OFF : 0));
	p->vendor = (uint16_t)d->vendor;
	p->device = (uint16_t)d->device;
	p->subsys_vendor = (uint16_t)d->subsystem_vendor;
	p->subsys_device = (uint16_t)d->subsystem_device;
	p->numa = (int16_t)d->numa_node;
	p->link_width = (uint16_t)d->link_width;
}

static int pack_one(const struct rec_report *r, size_t i, struct strings *st,
		    struct rec_pdev *p, struct dt_err *err)
{
	const struct rec_device *d = &r->devices[i];
	struct topo_bdf bdf;
	int root, speed, rdma, rc;

	if ((rc = check_device(r, i, &bdf, err)))
		return rc;
	root = intern(st, d->pcie_root, TOPO_NAME_MAX);
	speed = intern(st, d->link_speed, TOPO_NAME_MAX);
	rdma = intern(st, d->rdma_device, RDMA_NAME_MAX);
	if (root < 0 || speed < 0 || rdma < 0)
		return bad(err, r, i, root < 0 ? "pcieRoot is too long or not printable"
				      : speed < 0 ? "linkSpeed is too long or not printable"
						  : "rdmaDevice is too long or not printable");
	fill_pdev(d, &bdf, p);
	p->root = (uint16_t)root;
	p->speed = (uint16_t)speed;
	p->rdma = (uint16_t)rdma;
	return 0;
}

int rec_pack_devices(const struct rec_report *r, struct rec_pack **out, struct dt_err *err)
{
	struct strings st = { 0 };
	struct rec_pdev *devs = NULL;
	struct rec_pack *p = NULL;
	size_t n = r->n_devices;
	int rc = 0;

	*out = NULL;
	if (n > REC_MAX_DEVICES)
		return dt_err_set(err, -E2BIG, "node %s: %zu devices; a report carries at most %d",
				  r->node_name, n, REC_MAX_DEVICES);
	/* calloc: the padding of each rec_pdev stays zero, so packs compare
	 * with memcmp. */
	devs = calloc(n ? n : 1, sizeof(*devs));
	if (strings_init(&st, r) || !devs) {
		rc = dt_err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n && !rc; i++)
		rc = pack_one(r, i, &st, &devs[i], err);
	if (rc)
		goto out;
	qsort(devs, n, sizeof(*devs), pdev_cmp);
	for (size_t i = 1; i < n; i++)
		if (pdev_cmp(&devs[i - 1], &devs[i]) == 0) {
			struct topo_bdf b = pdev_bdf(&devs[i]);
			char name[TOPO_NAME_MAX];

			topo_bdf_format(&b, name, sizeof(name));
			rc = dt_err_set(err, -EINVAL, "node %s: device %s is listed twice",
					r->node_name, name);
			goto out;
		}
	p = calloc(1, sizeof(*p) + n * sizeof(*devs) + st.len);
	if (!p) {
		rc = dt_err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	p->n = (uint16_t)n;
	p->strings_len = (uint16_t)st.len;
	memcpy(p->devs, devs, n * sizeof(*devs));
	memcpy((char *)(p->devs + n), st.buf, st.len);
	*out = p;
out:
	strings_free(&st);
	free(devs);
	return rc;
}

static size_t pack_size(const struct rec_pack *p)
{
	return sizeof(*p) + p->n * sizeof(p->devs[0]) + p->strings_len;
}

bool rec_pack_equal(const struct rec_pack *a, const struct rec_pack *b)
{
	return a && b && pack_size(a) == pack_size(b) && memcmp(a, b, pack_size(a)) == 0;
}

static const char *pack_string(const struct rec_pack *p, uint16_t off)
{
	return off ? (const char *)(p->devs + p->n) + off - 1 : "";
}

static bool same_string(const struct rec_pack *p, uint16_t off, const char *s)
{
	return strcmp(pack_string(p, off), s ? s : "") == 0;
}

/* Without packing r: a packed string equal to the reported one passed the
 * same checks when it was packed, and a device whose fields all equal a
 * packed one's passed check_device; so when every device matches in order,
 * packing r would give p's devices. Reports list devices by address (the
 * agent does), the order p keeps; any other order takes the full path. */
bool rec_pack_matches(const struct rec_pack *p, const struct rec_report *r)
{
	if (!p || r->n_devices != p->n)
		return false;
	for (size_t i = 0; i < p->n; i++) {
		const struct rec_device *d = &r->devices[i];
		const struct rec_pdev *k = &p->devs[i];
		struct topo_bdf bdf;
		struct rec_pdev got;

		if (check_device(r, i, &bdf, NULL))
			return false;
		memset(&got, 0, sizeof(got));
		fill_pdev(d, &bdf, &got);
		got.root = k->root;
		got.speed = k->speed;
		got.rdma = k->rdma;
		if (memcmp(&got, k, sizeof(got)) || !same_string(p, k->root, d->pcie_root) ||
		    !same_string(p, k->speed, d->link_speed) ||
		    !same_string(p, k->rdma, d->rdma_device))
			return false;
	}
	return true;
}

static void copy_string(const struct rec_pack *p, uint16_t off, char *dst, size_t size)
{
	snprintf(dst, size, "%s", pack_string(p, off));
}

int rec_pack_topology(const struct rec_pack *p, const char *instance_type, int cpus,
		      int64_t memory_mib, struct topo *out, struct dt_err *err)
{
	struct topo_device *devs = calloc(p->n ? p->n : 1, sizeof(*devs));
	int rc;

	if (!devs)
		return dt_err_set(err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < p->n; i++) {
		const struct rec_pdev *s = &p->devs[i];
		struct topo_device *d = &devs[i];
		struct topo_bdf bdf = pdev_bdf(s);

		topo_bdf_format(&bdf, d->bdf_str, sizeof(d->bdf_str));
		d->kind = s->flags & PDEV_EFA ? TOPO_EFA : TOPO_GPU;
		d->vendor = s->vendor;
		d->device = s->device;
		d->has_subsys = s->flags & PDEV_SUBSYS;
		d->subsys_vendor = s->subsys_vendor;
		d->subsys_device = s->subsys_device;
		d->numa_node = s->numa;
		d->link_width = s->link_width;
		d->fell_off_bus = s->flags & PDEV_FELL_OFF;
		copy_string(p, s->root, d->pcie_root, sizeof(d->pcie_root));
		copy_string(p, s->speed, d->link_speed, sizeof(d->link_speed));
		copy_string(p, s->rdma, d->rdma_device, sizeof(d->rdma_device));
	}
	rc = topo_from_devices(instance_type, devs, p->n, out, err);
	free(devs);
	if (rc == 0) {
		out->cpus = cpus;
		out->memory_mib = memory_mib;
	}
	return rc;
}
