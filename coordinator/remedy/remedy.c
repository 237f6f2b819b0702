/* remedy.c - which devices of a drifted node to taint, and whether the
 * node as a whole is unfit (rem_assess). See remedy.h and docs/remedy.md.
 *
 * The node is compared with hwdb root by root. A root's reference is the
 * content it should have: with hwdb's grouping (types scraped from live
 * nodes), that of the hwdb root it is paired with (topo_pair_roots: exact
 * shapes first, then the closest left, the rule the drawing of the node
 * uses too); without a grouping, a root's reference is what it holds, dead
 * devices included.
 * A root short of GPUs taints its EFAs (they lost their GPU), a root
 * short of EFAs taints its GPUs (a GPU whose EFA left). A device that is
 * itself wrong (another model, no root) is tainted for that. Extra
 * devices on a root taint nothing: which one is the stray cannot be told,
 * and the root's own pairing is whole. */
#include "remedy.h"

#include "topo_root_pair.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *rem_cause_value(enum rem_cause c)
{
	switch (c) {
	case REM_WRONG_MODEL:
		return "wrong-model";
	case REM_NO_ROOT:
		return "no-pcie-root";
	case REM_GPU_OFF_BUS:
		return "gpu-off-bus";
	case REM_GPU_MISSING:
		return "gpu-missing";
	case REM_EFA_OFF_BUS:
		return "efa-off-bus";
	case REM_EFA_LEFT_ROOT:
		return "efa-left-root";
	case REM_EFA_MISSING:
		break;
	}
	return "efa-missing";
}

void rem_assessment_free(struct rem_assessment *a)
{
	if (!a)
		return;
	free(a->node);
	free(a->devices);
	memset(a, 0, sizeof(*a));
}

/* A node name the API accepts: a DNS subdomain. */
static bool dns_subdomain(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > 253)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		bool an = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
		bool edge = i == 0 || i == n - 1 || s[i - 1] == '.' || s[i + 1] == '.';

		if (!an && (edge || (c != '-' && c != '.')))
			return false;
	}
	return true;
}

/* GPUs and EFAs of a root (or of a reference shape). */
struct counts {
	size_t gpus, efas;
};

/* One root of the node: what is live, what fell off, its reference. */
struct rroot {
	const struct topo_root *r;
	struct counts live, dead, ref;
	bool has_ref;
};

struct assess {
	const struct topo *t;
	const struct hwdb_type *expected;
	struct rroot *roots;
	size_t n_roots;
	struct topo_root_pairing pairing;
	size_t live_efas;
	/* Per device of t: its cause (-1 none). */
	int *cause;
	struct rem_assessment *out;
};

static void root_counts(const struct topo *t, struct rroot *rr)
{
	const struct topo_root *r = rr->r;

	for (size_t j = 0; j < r->n_gpus; j++) {
		if (t->devices[r->gpus[j]].fell_off_bus)
			rr->dead.gpus++;
		else
			rr->live.gpus++;
	}
	for (size_t j = 0; j < r->n_efas; j++) {
		if (t->devices[r->efas[j]].fell_off_bus)
			rr->dead.efas++;
		else
			rr->live.efas++;
	}
}

/* Give every root with live devices its reference (see the top of the
 * file). */
static int match_roots(struct assess *A)
{
	int rc = topo_pair_roots(A->t, A->expected, &A->pairing);

	for (size_t i = 0; !rc && i < A->n_roots; i++) {
		struct rroot *rr = &A->roots[i];
		long k = A->pairing.of_root[i];

		if (!A->pairing.n_expected) {
			rr->ref = (struct counts){ rr->live.gpus + rr->dead.gpus,
						   rr->live.efas + rr->dead.efas };
			rr->has_ref = true;
		} else if (k >= 0 && (rr->live.gpus || rr->live.efas)) {
			rr->ref = (struct counts){ A->pairing.expected[k].n_gpus,
						   A->pairing.expected[k].n_efas };
			rr->has_ref = true;
		}
	}
	return rc;
}

static const char *plural(size_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

/* "root R has 1 GPU + 2 EFAs, hwdb has 1 GPU + 4 EFAs" (or "should
 * have" without hwdb's grouping). */
static void root_difference(const struct assess *A, const struct rroot *rr, char *buf,
			    size_t len)
{
	bool grouping = A->expected && A->expected->dra_metadata;
	int n = snprintf(buf, len, "root %s has %zu %s + %zu %s", rr->r->name, rr->live.gpus,
			 plural(rr->live.gpus, "GPU", "GPUs"), rr->live.efas,
			 plural(rr->live.efas, "EFA", "EFAs"));

	if (n < 0 || (size_t)n >= len)
		return;
	if (rr->dead.gpus || rr->dead.efas)
		n += snprintf(buf + n, len - (size_t)n, " on the bus (%zu fell off)",
			      rr->dead.gpus + rr->dead.efas);
	if (n >= 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, ", %s %zu %s + %zu %s",
			 grouping ? "hwdb has" : "it had", rr->ref.gpus,
			 plural(rr->ref.gpus, "GPU", "GPUs"), rr->ref.efas,
			 plural(rr->ref.efas, "EFA", "EFAs"));
}

/* The device's own problem, or -1. */
static int device_cause(const struct assess *A, const struct topo_device *d)
{
	const struct hwdb_type *e = A->expected;

	if (!d->pcie_root[0])
		return REM_NO_ROOT;
	if (!e)
		return -1;
	if (d->kind == TOPO_GPU && e->gpu_device &&
	    (d->vendor != e->gpu_vendor || d->device != e->gpu_device))
		return REM_WRONG_MODEL;
	if (d->kind == TOPO_EFA && e->efa_device && d->device != e->efa_device)
		return REM_WRONG_MODEL;
	return -1;
}

/* The cause a root's shortfall gives its devices of kind k, or -1. */
static int root_cause(const struct assess *A, const struct rroot *rr, enum topo_kind k)
{
	size_t want_efas = A->expected ? A->expected->n_efas : 0;

	if (!rr->has_ref)
		return -1;
	if (k == TOPO_EFA && rr->ref.gpus > rr->live.gpus)
		return rr->dead.gpus ? REM_GPU_OFF_BUS : REM_GPU_MISSING;
	if (k == TOPO_GPU && rr->ref.efas > rr->live.efas) {
		if (rr->dead.efas)
			return REM_EFA_OFF_BUS;
		return A->expected && A->live_efas >= want_efas ? REM_EFA_LEFT_ROOT :
		       REM_EFA_MISSING;
	}
	return -1;
}

static const struct rroot *root_of(const struct assess *A, const struct topo_device *d)
{
	for (size_t i = 0; i < A->n_roots; i++)
		if (!strcmp(A->roots[i].r->name, d->pcie_root))
			return &A->roots[i];
	return NULL;
}

static void device_difference(const struct assess *A, const struct topo_device *d, int cause,
			      char *buf, size_t len)
{
	const struct hwdb_type *e = A->expected;
	const struct rroot *rr = root_of(A, d);

	switch (cause) {
	case REM_NO_ROOT:
		snprintf(buf, len, "%s %s: no PCIe root", d->kind == TOPO_GPU ? "GPU" : "EFA",
			 d->bdf_str);
		break;
	case REM_WRONG_MODEL:
		if (d->kind == TOPO_GPU)
			snprintf(buf, len, "GPU %s: model %04x:%04x, hwdb has %04x:%04x",
				 d->bdf_str, d->vendor, d->device, e->gpu_vendor, e->gpu_device);
		else
			snprintf(buf, len, "EFA %s: device %04x, hwdb has %04x", d->bdf_str,
				 d->device, e->efa_device);
		break;
	default:
		if (rr)
			root_difference(A, rr, buf, len);
		break;
	}
}

/* Find every live device's cause. */
static void assess_devices(struct assess *A)
{
	for (size_t i = 0; i < A->t->n_devices; i++) {
		const struct topo_device *d = &A->t->devices[i];
		const struct rroot *rr;
		int c;

		A->cause[i] = -1;
		if (d->fell_off_bus)
			continue;
		c = device_cause(A, d);
		rr = c < 0 ? root_of(A, d) : NULL;
		if (rr)
			c = root_cause(A, rr, d->kind);
		A->cause[i] = c;
	}
}

static int collect(struct assess *A)
{
	struct rem_assessment *out = A->out;
	size_t n = 0, live_gpus = 0, live = 0;

	for (size_t i = 0; i < A->t->n_devices; i++)
		n += A->cause[i] >= 0;
	out->devices = calloc(n ? n : 1, sizeof(*out->devices));
	if (!out->devices)
		return -ENOMEM;
	/* GPUs first, then EFAs, each in name (= address) order. */
	for (int kind = TOPO_GPU; kind <= TOPO_EFA; kind++) {
		for (size_t i = 0; i < A->t->n_devices; i++) {
			const struct topo_device *d = &A->t->devices[i];
			struct rem_device *r;

			if ((int)d->kind != kind || d->fell_off_bus)
				continue;
			live++;
			if (A->cause[i] < 0) {
				live_gpus += d->kind == TOPO_GPU;
				continue;
			}
			r = &out->devices[out->n_devices++];
			r->driver = d->kind == TOPO_GPU ? HWDB_DRIVER_GPU : HWDB_DRIVER_EFA;
			topo_device_dra_name(A->t, i, r->device, sizeof(r->device));
			snprintf(r->bdf, sizeof(r->bdf), "%s", d->bdf_str);
			snprintf(r->root, sizeof(r->root), "%s", d->pcie_root);
			r->cause = (enum rem_cause)A->cause[i];
			device_difference(A, d, A->cause[i], r->difference, sizeof(r->difference));
		}
	}
	out->usable_gpus = live_gpus;
	out->usable_devices = live - out->n_devices;
	return 0;
}

/* The node is unfit when it has no GPU left to give, or when at least
 * half of the devices it should have are gone or tainted. */
static void judge_node(struct assess *A)
{
	struct rem_assessment *out = A->out;
	size_t want_gpus = A->expected ? A->expected->n_gpus : A->t->n_gpus;
	size_t affected;

	out->expected_devices = A->expected ? A->expected->n_gpus + A->expected->n_efas :
			        A->t->n_gpus + A->t->n_efas;
	affected = out->expected_devices > out->usable_devices ?
		   out->expected_devices - out->usable_devices : 0;
	if (want_gpus && !out->usable_gpus) {
		out->node_unfit = true;
		snprintf(out->unfit_reason, sizeof(out->unfit_reason),
			 "no usable GPU: %zu expected, none live and untainted", want_gpus);
	} else if (out->expected_devices && affected * 2 >= out->expected_devices) {
		out->node_unfit = true;
		snprintf(out->unfit_reason, sizeof(out->unfit_reason),
			 "%zu of its %zu GPUs and EFAs are missing or tainted", affected,
			 out->expected_devices);
	}
}

static void assess_free(struct assess *A)
{
	free(A->roots);
	topo_root_pairing_free(&A->pairing);
	free(A->cause);
}

int rem_assess(const char *node, const struct topo_verify_result *vr,
	       const struct topo *t, const struct hwdb_type *expected,
	       struct rem_assessment *out, struct dt_err *err)
{
	struct assess A = { .t = t, .expected = expected, .out = out };
	int rc = -ENOMEM;

	memset(out, 0, sizeof(*out));
	if (!node || !dns_subdomain(node))
		return dt_err_set(err, -EINVAL, "remedy: node name \"%s\" is not a DNS subdomain",
				  node ? node : "");
	out->node = strdup(node);
	out->verdict = vr ? vr->verdict : TOPO_DRIFT;
	if (!out->node)
		goto out;
	/* A node that matches needs nothing; its old remedies are lifted. */
	if (out->verdict == TOPO_MATCH) {
		out->devices = NULL;
		out->usable_devices = t->n_gpus + t->n_efas;
		out->usable_gpus = t->n_gpus;
		out->expected_devices = out->usable_devices;
		rc = 0;
		goto out;
	}
	A.n_roots = t->n_roots;
	A.roots = calloc(t->n_roots ? t->n_roots : 1, sizeof(*A.roots));
	A.cause = calloc(t->n_devices ? t->n_devices : 1, sizeof(*A.cause));
	if (!A.roots || !A.cause)
		goto out;
	for (size_t i = 0; i < t->n_roots; i++) {
		A.roots[i].r = &t->roots[i];
		root_counts(t, &A.roots[i]);
	}
	for (size_t i = 0; i < t->n_devices; i++)
		A.live_efas += t->devices[i].kind == TOPO_EFA && !t->devices[i].fell_off_bus;
	if ((rc = match_roots(&A)))
		goto out;
	assess_devices(&A);
	rc = collect(&A);
	if (!rc)
		judge_node(&A);
out:
	assess_free(&A);
	if (rc) {
		rem_assessment_free(out);
		return dt_err_set(err, rc, "remedy: out of memory");
	}
	return 0;
}
