/* topo_root_pair.c - a node's PCIe roots paired with hwdb's (topo_root_pair.h has the
 * rule). */
#include "topo_root_pair.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* GPUs and EFAs of a root, live and fallen off the bus. */
struct tally {
	size_t gpus, efas, dead_gpus, dead_efas;
};

static struct tally root_tally(const struct topo *t, const struct topo_root *r)
{
	struct tally c = { 0 };

	for (size_t j = 0; j < r->n_gpus; j++) {
		if (t->devices[r->gpus[j]].fell_off_bus)
			c.dead_gpus++;
		else
			c.gpus++;
	}
	for (size_t j = 0; j < r->n_efas; j++) {
		if (t->devices[r->efas[j]].fell_off_bus)
			c.dead_efas++;
		else
			c.efas++;
	}
	return c;
}

/* Whether hwdb root s is one pass `how` lets a root of tally c take. */
static bool accepts(const struct hwdb_root *s, const struct tally *c, int how)
{
	switch (how) {
	case 0:
		return s->n_gpus == c->gpus && s->n_efas == c->efas;
	case 1:
		return s->n_gpus == c->gpus + c->dead_gpus && s->n_efas == c->efas + c->dead_efas;
	case 2:
		return s->n_gpus == c->gpus + c->dead_gpus;
	case 3:
		return s->n_efas == c->efas + c->dead_efas;
	default:
		return true;
	}
}

/* Give root i the first free hwdb root pass `how` accepts, the one named
 * like it when that has the same shape. */
static void take(struct topo_root_pairing *p, const struct topo *t, size_t i,
		 const struct tally *c, int how)
{
	long pick = -1;

	for (size_t k = 0; k < p->n_expected; k++) {
		const struct hwdb_root *s = &p->expected[k];

		if (p->of_expected[k] >= 0 || !accepts(s, c, how))
			continue;
		if (pick < 0)
			pick = (long)k;
		if (s->n_gpus == p->expected[pick].n_gpus && s->n_efas == p->expected[pick].n_efas &&
		    !strcmp(s->name, t->roots[i].name)) {
			pick = (long)k;
			break;
		}
	}
	if (pick >= 0) {
		p->of_root[i] = pick;
		p->of_expected[pick] = (long)i;
	}
}

static void pass(struct topo_root_pairing *p, const struct topo *t,
		 const struct tally *c, bool live, int how)
{
	for (size_t i = 0; i < t->n_roots; i++)
		if (p->of_root[i] < 0 && (c[i].gpus || c[i].efas) == live)
			take(p, t, i, &c[i], how);
}

int topo_pair_roots(const struct topo *t, const struct hwdb_type *expected,
		    struct topo_root_pairing *out)
{
	size_t cap = expected ? expected->n_gpus + expected->n_efas : 0;
	struct tally *c = NULL;
	int rc = -ENOMEM;

	memset(out, 0, sizeof(*out));
	out->of_root = malloc((t->n_roots ? t->n_roots : 1) * sizeof(*out->of_root));
	out->expected = calloc(cap ? cap : 1, sizeof(*out->expected));
	out->of_expected = malloc((cap ? cap : 1) * sizeof(*out->of_expected));
	c = calloc(t->n_roots ? t->n_roots : 1, sizeof(*c));
	if (!out->of_root || !out->expected || !out->of_expected || !c)
		goto out;
	for (size_t i = 0; i < t->n_roots; i++) {
		out->of_root[i] = -1;
		c[i] = root_tally(t, &t->roots[i]);
	}
	if (expected && expected->dra_metadata)
		out->n_expected = hwdb_type_roots(expected, out->expected, cap);
	for (size_t k = 0; k < out->n_expected; k++)
		out->of_expected[k] = -1;
	for (int how = 0; how <= 4; how++)
		pass(out, t, c, true, how);
	pass(out, t, c, false, 1);
	pass(out, t, c, false, 4);
	rc = 0;
out:
	free(c);
	if (rc)
		topo_root_pairing_free(out);
	return rc;
}

void topo_root_pairing_free(struct topo_root_pairing *p)
{
	if (!p)
		return;
	free(p->expected);
	free(p->of_root);
	free(p->of_expected);
	memset(p, 0, sizeof(*p));
}
