/* plan_pods.c - the pending pods and what they need.
 *
 * Workloads expand to their replicas with the names Kubernetes would give
 * them (made deterministic); each pod's claims are resolved the way the
 * resourceclaim controller and the scheduler do: a template yields one
 * claim per pod (generated into the set unless the pod's status already
 * names it), a named claim is shared by every pod that names it. Pods
 * sharing a claim must meet on one node, so they form one unit; units
 * that are interchangeable (same requests, selectors, tolerations and
 * claim templates) share a shape, which is what the optimizer counts. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "plan_internal.h"

bool plan_pod_is_dra(const struct model_pod_spec *spec)
{
	if (spec->n_resource_claims)
		return true;
	for (size_t i = 0; i < spec->n_containers; i++)
		if (spec->containers[i].n_claims)
			return true;
	for (size_t i = 0; i < spec->n_init_containers; i++)
		if (spec->init_containers[i].n_claims)
			return true;
	return false;
}

/* ---- Default DeviceClasses ---- */

static int add_class(struct model_set *set, const char *name, const char *expr,
		     struct dt_err *err)
{
	struct model_object *o;
	struct model_selector *sel;

	if (model_set_find(set, MODEL_DEVICE_CLASS, NULL, name))
		return 0;
	o = model_set_add(set, MODEL_DEVICE_CLASS);
	sel = model_set_calloc(set, 1, sizeof(*sel));
	if (!o || !sel || !(o->meta.name = model_set_strdup(set, name)) ||
	    !(sel->expression = model_set_strdup(set, expr)))
		return dt_err_set(err, -ENOMEM, "out of memory");
	sel->expression_len = strlen(expr);
	o->u.device_class.selectors = sel;
	o->u.device_class.n_selectors = 1;
	if (model_object_default(set, o))
		return dt_err_set(err, -ENOMEM, "out of memory");
	return 0;
}

int plan_default_classes(struct model_set *set, struct dt_err *err)
{
	int rc;

	/* What the NVIDIA DRA driver's and the aws-dranet charts install: the
	 * driver's classes tell whole GPUs from MIG devices by `type` (a slice
	 * written without it counts as whole GPUs, not as a CEL error). */
	if ((rc = add_class(set, "gpu.nvidia.com",
			    "device.driver == \"gpu.nvidia.com\" && "
			    "device.attributes[\"gpu.nvidia.com\"].?type.orValue(\"gpu\") == \"gpu\"",
			    err)) ||
	    (rc = add_class(set, "mig.nvidia.com",
			    "device.driver == \"gpu.nvidia.com\" && "
			    "device.attributes[\"gpu.nvidia.com\"].?type.orValue(\"\") == \"mig\"",
			    err)))
		return rc;
	return add_class(set, "efa.networking.k8s.aws",
			 "device.driver == \"dra.net\" && "
			 "device.attributes[\"dra.net\"].pciDevice == \"Elastic Fabric Adapter (EFA)\"",
			 err);
}

/* A claim reserved for a pod (status.reservedFor), by namespace and pod. */
struct reservation {
	const char *ns, *pod;
	const struct model_object *claim;
};

struct collect {
	struct model_set *set;
	struct plan_pods *out;
	size_t cap_pods, cap_bound;
	struct dt_err *err;
	/* The template found last, by namespace and name (find_template). */
	const struct model_object *tmpl;
	const char *tmpl_ns, *tmpl_name;
	/* The PodGroup found last (find_group), and the claims generated
	 * for PodGroups from templates: entry -> claim, open addressing over
	 * a power-of-two table (group_claims). */
	const struct model_object *group;
	const struct group_made {
		const struct model_pod_claim *entry;
		const struct model_object *claim;
	} *made;
	size_t n_made, cap_made;
	/* Every reservation of the set's claims, sorted; built when a pod
	 * first needs it (find_reserved). */
	struct reservation *resv;
	size_t n_resv;
	bool resv_built;
};

static const char *fmt_problem(struct model_set *set, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static const char *fmt_problem(struct model_set *set, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return model_set_strdup(set, buf);
}

/* The claim generated from a template for its owner (a pod, or a
 * PodGroup for the claims its pods share): name as the resourceclaim
 * controller builds it ("<owner>-<claim>-" cut to 57 characters, a
 * 5-character suffix), spec copied from the template. */
static struct model_object *generate_claim(struct model_set *set, const char *ns,
					   const char *owner, const char *claim_name,
					   const struct model_object *tmpl)
{
	struct model_object *o = model_set_add(set, MODEL_RESOURCE_CLAIM);
	char name[128], suffix[6];

	if (!o)
		return NULL;
	size_t lp = strlen(owner), lc = strlen(claim_name), total = lp + lc + 2;

	/* Leave room for the suffix in 63 characters: both parts are cut in
	 * proportion when "<owner>-<claim>-" is longer than 57. */
	if (total > 57) {
		lp = lp * 57 / total;
		lc = lc * 57 / total;
	}
	plan_name_suffix(owner, claim_name, 0, suffix);
	/* lp + lc + 2 <= 57 now: "<owner>-<claim>-<suffix>" fits name. No
	 * printf: this runs for every replica. */
	memcpy(name, owner, lp);
	name[lp] = '-';
	memcpy(name + lp + 1, claim_name, lc);
	name[lp + 1 + lc] = '-';
	memcpy(name + lp + lc + 2, suffix, sizeof(suffix));
	o->meta.name = model_set_strdup(set, name);
	o->meta.ns = ns;
	o->meta.labels = tmpl->u.claim_template.claim_meta.labels;
	o->meta.n_labels = tmpl->u.claim_template.claim_meta.n_labels;
	o->meta.annotations = tmpl->u.claim_template.claim_meta.annotations;
	o->meta.n_annotations = tmpl->u.claim_template.claim_meta.n_annotations;
	o->u.claim.spec = tmpl->u.claim_template.spec;
	o->src = tmpl->src;
	if (!o->meta.name || model_object_default(set, o))
		return NULL;
	return o;
}

/* The claim status statuses[0..n) gives name (a pod's or a PodGroup's
 * status.resourceClaimStatuses): the claim made for it, or NULL. */
static const char *status_claim_name(const struct model_pod_claim_status *statuses, size_t n,
				     const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (statuses[i].name && !strcmp(statuses[i].name, name))
			return statuses[i].resource_claim_name;
	return NULL;
}

static int cmp_reservation(const void *a, const void *b)
{
	const struct reservation *x = a, *y = b;
	int c = strcmp(x->ns, y->ns);

	return c ? c : strcmp(x->pod, y->pod);
}

static int index_reservations(struct collect *c)
{
	const struct model_object *o;
	size_t n = 0;

	c->resv_built = true;
	for (o = NULL; (o = model_set_next(c->set, MODEL_RESOURCE_CLAIM, o));)
		n += o->u.claim.status.n_reserved_for;
	if (!n)
		return 0;
	if (!(c->resv = malloc(n * sizeof(*c->resv))))
		return dt_err_set(c->err, -ENOMEM, "out of memory");
	for (o = NULL; (o = model_set_next(c->set, MODEL_RESOURCE_CLAIM, o));) {
		for (size_t i = 0; i < o->u.claim.status.n_reserved_for; i++) {
			const struct model_consumer_ref *r = &o->u.claim.status.reserved_for[i];

			if (r->name && r->resource && !strcmp(r->resource, "pods") &&
			    (!r->api_group || !*r->api_group))
				c->resv[c->n_resv++] = (struct reservation){ o->meta.ns ? o->meta.ns : "",
									     r->name, o };
		}
	}
	qsort(c->resv, c->n_resv, sizeof(*c->resv), cmp_reservation);
	return 0;
}

/* The claim Kubernetes generated from a template for the entry named
 * entry of pod ns/pod, found by what it wrote on it: reserved for the pod
 * (status.reservedFor) and annotated with the entry's name
 * (resource.kubernetes.io/pod-claim-name), into *out (NULL: none in the
 * input). For pods whose status does not say (resourceClaimStatuses).
 * 0 or -ENOMEM. */
static int find_reserved(struct collect *c, const char *ns, const char *pod, const char *entry,
			 const struct model_object **out)
{
	struct reservation key = { ns ? ns : "", pod, NULL };
	size_t lo = 0, hi;
	int rc;

	*out = NULL;
	if (!c->resv_built && (rc = index_reservations(c)))
		return rc;
	for (hi = c->n_resv; lo < hi;) {
		size_t m = lo + (hi - lo) / 2;

		if (cmp_reservation(&c->resv[m], &key) < 0)
			lo = m + 1;
		else
			hi = m;
	}
	for (; lo < c->n_resv && !cmp_reservation(&c->resv[lo], &key); lo++) {
		const struct model_meta *m = &c->resv[lo].claim->meta;
		const char *named = plan_label(m->annotations, m->n_annotations,
					       "resource.kubernetes.io/pod-claim-name");

		if (named && !strcmp(named, entry)) {
			*out = c->resv[lo].claim;
			break;
		}
	}
	return 0;
}

static bool str_eq_null(const char *a, const char *b)
{
	return a ? b && !strcmp(a, b) : !b;
}

/* The PodGroup ns/name (pods of a group come in runs: the last one found
 * is compared first). */
static const struct model_object *find_group(struct collect *c, const char *ns,
					     const char *name)
{
	if (c->group && !strcmp(c->group->meta.name, name) && !strcmp(c->group->meta.ns, ns))
		return c->group;
	c->group = model_set_find(c->set, MODEL_POD_GROUP, ns, name);
	return c->group;
}

/* The group's claim that pc matches: every field equal, as
 * DRAWorkloadResourceClaims matches a pod's claim to its PodGroup's. */
static const struct model_pod_claim *group_claim_of(const struct model_object *group,
							  const struct model_pod_claim *pc)
{
	const struct model_pod_group *g = &group->u.pod_group;

	for (size_t i = 0; i < g->n_resource_claims; i++) {
		const struct model_pod_claim *gc = &g->resource_claims[i];

		if (str_eq_null(gc->name, pc->name) &&
		    str_eq_null(gc->resource_claim_name, pc->resource_claim_name) &&
		    str_eq_null(gc->resource_claim_template_name, pc->resource_claim_template_name))
			return gc;
	}
	return NULL;
}

/* The claim made for a PodGroup's entry, once for all its pods: the one
 * its status names when it exists, else generated from the template. */
static const struct model_object *group_claim(struct collect *c,
					      const struct model_object *group,
					      const struct model_pod_claim *gc,
					      const struct model_object *tmpl)
{
	size_t at;

	if (2 * (c->n_made + 1) > c->cap_made) {
		size_t cap = c->cap_made ? 2 * c->cap_made : 16;
		struct group_made *t = calloc(cap, sizeof(*t));

		if (!t)
			return NULL;
		for (size_t i = 0; i < c->cap_made; i++) {
			if (!c->made[i].entry)
				continue;
			at = ((uintptr_t)c->made[i].entry >> 4) * 0x9e3779b97f4a7c15ULL & (cap - 1);
			while (t[at].entry)
				at = (at + 1) & (cap - 1);
			t[at] = c->made[i];
		}
		free((void *)c->made);
		c->made = t;
		c->cap_made = cap;
	}
	at = ((uintptr_t)gc >> 4) * 0x9e3779b97f4a7c15ULL & (c->cap_made - 1);
	while (c->made[at].entry && c->made[at].entry != gc)
		at = (at + 1) & (c->cap_made - 1);
	if (!c->made[at].entry) {
		struct group_made *slot = (struct group_made *)&c->made[at];

		slot->claim = generate_claim(c->set, group->meta.ns, group->meta.name, gc->name,
					     tmpl);
		if (!slot->claim)
			return NULL;
		slot->entry = gc;
		c->n_made++;
	}
	return c->made[at].claim;
}

/* The template ns/name: pods come in runs naming one template (a
 * workload's replicas, scheduler_perf's pods), so the last one found is
 * compared first. */
static const struct model_object *find_template(struct collect *c, const char *ns,
						const char *name)
{
	if (c->tmpl && ns && !strcmp(name, c->tmpl_name) && !strcmp(ns, c->tmpl_ns))
		return c->tmpl;
	c->tmpl = model_set_find(c->set, MODEL_RESOURCE_CLAIM_TEMPLATE, ns, name);
	c->tmpl_ns = ns;
	c->tmpl_name = name;
	return c->tmpl;
}

/* Find each claim the pod names; templates are only noted here (in
 * tmpl) and their claims generated once every pod is known, because
 * adding objects to the set invalidates its lookup index. */
static int resolve_claims(struct collect *c, struct plan_pod *p,
			  const struct model_pod_status *st)
{
	const struct model_pod_spec *spec = p->spec;
	struct model_set *set = c->set;
	int rc;

	if (!spec->n_resource_claims && !p->ext)
		return 0;
	/* one more, last, for the extended resources' claim */
	p->n_claims = spec->n_resource_claims + p->ext;
	p->claims = model_set_calloc(set, p->n_claims, sizeof(*p->claims));
	p->tmpl = model_set_calloc(set, p->n_claims, sizeof(*p->tmpl));
	if (!p->claims || !p->tmpl)
		return dt_err_set(c->err, -ENOMEM, "out of memory");
	if (spec->pod_group_name) {
		const struct model_object *group = find_group(c, p->ns, spec->pod_group_name);

		if (!group && !p->problem)
			p->problem = fmt_problem(set, "podGroup %s/%s not found (the scheduler "
						 "keeps the pod pending until it exists)",
						 p->ns, spec->pod_group_name);
		p->group_claim = group ? model_set_calloc(set, p->n_claims,
							  sizeof(*p->group_claim)) : NULL;
		if (group && !p->group_claim)
			return dt_err_set(c->err, -ENOMEM, "out of memory");
		for (size_t i = 0; group && i < spec->n_resource_claims; i++)
			p->group_claim[i] = group_claim_of(group, &spec->resource_claims[i]);
	}
	for (size_t i = 0; i < spec->n_resource_claims; i++) {
		const struct model_pod_claim *pc = &spec->resource_claims[i];
		const char *named = st ? status_claim_name(st->resource_claim_statuses,
							   st->n_resource_claim_statuses,
							   pc->name) : NULL;

		if (p->group_claim && p->group_claim[i] && pc->resource_claim_template_name) {
			/* The group's claim: made once, in its namespace. */
			const struct model_pod_group *g = &c->group->u.pod_group;

			named = status_claim_name(g->resource_claim_statuses,
						  g->n_resource_claim_statuses, pc->name);
		}
		if (pc->resource_claim_name) {
			p->claims[i] = model_set_find(set, MODEL_RESOURCE_CLAIM, p->ns,
						      pc->resource_claim_name);
			if (!p->claims[i] && !p->problem)
				p->problem = fmt_problem(set, "resourceClaim %s/%s not found",
							 p->ns, pc->resource_claim_name);
		} else if (pc->resource_claim_template_name) {
			if (named)
				p->claims[i] = model_set_find(set, MODEL_RESOURCE_CLAIM, p->ns, named);
			else if (st && !(p->group_claim && p->group_claim[i]) &&
				 (rc = find_reserved(c, p->ns, p->name, pc->name, &p->claims[i])))
				return rc;
			if (p->claims[i])
				continue;
			p->tmpl[i] = find_template(c, p->ns, pc->resource_claim_template_name);
			if (!p->tmpl[i] && !p->problem)
				p->problem = fmt_problem(set, "resourceClaimTemplate %s/%s not found",
							 p->ns, pc->resource_claim_template_name);
		}
	}
	return 0;
}

static int generate_pod_claims(struct collect *c, struct plan_pod *p)
{
	if (p->ext && !p->problem &&
	    !(p->claims[p->n_claims - 1] = plan_extres_claim(c->set, p)))
		return dt_err_set(c->err, -ENOMEM, "out of memory");
	for (size_t i = 0; p->tmpl && i < p->n_claims; i++) {
		const struct model_pod_claim *pc = &p->spec->resource_claims[i];

		if (!p->tmpl[i] || p->claims[i])
			continue;
		if (p->group_claim && p->group_claim[i])
			p->claims[i] = group_claim(c, find_group(c, p->ns, p->spec->pod_group_name),
						   p->group_claim[i], p->tmpl[i]);
		else
			p->claims[i] = generate_claim(c->set, p->ns, p->name, pc->name, p->tmpl[i]);
		if (!p->claims[i])
			return dt_err_set(c->err, -ENOMEM, "out of memory");
	}
	return 0;
}

static int generate_claims(struct collect *c)
{
	int rc;

	for (size_t k = 0; k < c->out->n_pods; k++)
		if ((rc = generate_pod_claims(c, &c->out->pods[k])))
			return rc;
	for (size_t k = 0; k < c->out->n_bound; k++)
		if ((rc = generate_pod_claims(c, &c->out->bound[k].pod)))
			return rc;
	return 0;
}

/* A pod bound to a node: what it uses there (plan_bound). */
static int add_bound(struct collect *c, const struct model_object *o)
{
	const struct model_pod *pod = &o->u.pod;
	struct plan_pods *out = c->out;
	struct plan_bound *b;

	if (DT_GROW(out->bound, c->cap_bound, out->n_bound + 1))
		return dt_err_set(c->err, -ENOMEM, "out of memory");
	b = &out->bound[out->n_bound++];
	memset(b, 0, sizeof(*b));
	b->node = pod->spec.node_name;
	plan_pod_requests(&pod->spec, &b->req);
	plan_pod_node_ext(&pod->spec, out->ext_names, out->n_ext_names, &b->req);
	b->pod.obj = o;
	b->pod.ns = o->meta.ns;
	b->pod.name = o->meta.name;
	b->pod.spec = &pod->spec;
	return resolve_claims(c, &b->pod, &pod->status);
}

static int add_pod(struct collect *c, const struct model_object *obj, const char *ns,
		   const char *name, const struct model_pod_spec *spec,
		   const struct model_pod_status *st)
{
	struct plan_pods *out = c->out;
	struct plan_pod *p;
	const char *ext, *why;
	int rc;

	if (out->n_pods >= PLAN_MAX_PODS)
		return dt_err_set(c->err, -EINVAL, "more than %u pending pods", PLAN_MAX_PODS);
	if (DT_GROW(out->pods, c->cap_pods, out->n_pods + 1))
		return dt_err_set(c->err, -ENOMEM, "out of memory");
	p = &out->pods[out->n_pods++];
	memset(p, 0, sizeof(*p));
	p->obj = obj;
	p->ns = ns;
	p->name = name;
	p->spec = spec;
	p->dra = plan_pod_is_dra(spec);
	plan_pod_requests(spec, &p->req);
	/* Extended resources NodeOverlays give nodes are counted like cpu. */
	plan_pod_node_ext(spec, out->ext_names, out->n_ext_names, &p->req);
	/* A DeviceClass can make an extended resource a DRA request. */
	rc = plan_extres_scan(c->set, spec, out->ext_names, out->n_ext_names, &p->ext, &ext, &why);
	if (rc == -ENOENT)
		p->problem = fmt_problem(c->set,
			"requests the extended resource %s%s: dratopo plans DRA ResourceClaims, "
			"not device-plugin resources (no DeviceClass has extendedResourceName %s, "
			"and no NodeOverlay gives nodes capacity of it)",
			ext, p->dra ? " besides its ResourceClaims"
			: !strcmp(ext, "nvidia.com/gpu") ? " (not a DRA pod)" : "", ext);
	else if (rc)
		p->problem = fmt_problem(c->set, "extended resource %s: %s", ext, why);
	p->dra = p->dra || p->ext;
	return resolve_claims(c, p, st);
}

/* Pods of the input a workload already owns (so replicas are not counted
 * twice when both are given). */
static size_t owned_pods(const struct model_set *set, const struct model_object *w)
{
	const char *kind = model_kind_name(w->kind);
	size_t n = 0, len = strlen(w->meta.name);
	const struct model_object *o;

	for (o = NULL; (o = model_set_next(set, MODEL_POD, o));) {
		if (strcmp(o->meta.ns, w->meta.ns))
			continue;
		for (size_t i = 0; i < o->meta.n_owner_refs; i++) {
			const struct model_owner_ref *r = &o->meta.owner_refs[i];

			if (!r->kind || !r->name)
				continue;
			if (w->kind == MODEL_DEPLOYMENT ? !strcmp(r->kind, "ReplicaSet") &&
							  !strncmp(r->name, w->meta.name, len) &&
							  r->name[len] == '-'
							: !strcmp(r->kind, kind) &&
							  !strcmp(r->name, w->meta.name)) {
				n++;
				break;
			}
		}
	}
	return n;
}

static int expand_workload(struct collect *c, const struct model_object *w)
{
	const struct model_workload *wl = &w->u.workload;
	int64_t n = wl->has_replicas ? wl->replicas : 1;
	char tmpl_hash[11], a[6], b[6];
	size_t have;

	if (w->kind == MODEL_JOB) {
		n = wl->has_parallelism ? wl->parallelism : 1;
		if (wl->has_completions && wl->completions < n)
			n = wl->completions;
	}
	if (n < 0)
		n = 0;
	if (n > PLAN_MAX_REPLICAS) {
		char d[256];

		model_object_describe(w, d, sizeof(d));
		return dt_err_set(c->err, -EINVAL, "%s: %" PRId64 " replicas: at most %d are planned",
				  d, n, PLAN_MAX_REPLICAS);
	}
	have = owned_pods(c->set, w);
	/* Deployment pods: <name>-<pod-template-hash>-<suffix>. */
	plan_name_suffix(w->meta.ns, w->meta.name, 0, a);
	plan_name_suffix(w->meta.name, w->meta.ns, 1, b);
	plan_concat(tmpl_hash, sizeof(tmpl_hash), a, b, (char *)NULL);
	for (int64_t i = (int64_t)have; i < n; i++) {
		char name[300], sfx[6], num[24];
		const char *nm;
		int rc;

		/* Plain concatenation: printf would be a fifth of the planner's
		 * time at 10,000 replicas. */
		plan_name_suffix(w->meta.ns, w->meta.name, (uint64_t)i + 2, sfx);
		if (w->kind == MODEL_STATEFUL_SET)
			plan_concat(name, sizeof(name), w->meta.name, "-",
				    plan_u64_str((uint64_t)i, num), (char *)NULL);
		else if (w->kind == MODEL_DEPLOYMENT)
			plan_concat(name, sizeof(name), w->meta.name, "-", tmpl_hash, "-", sfx,
				    (char *)NULL);
		else
			plan_concat(name, sizeof(name), w->meta.name, "-", sfx, (char *)NULL);
		if (!(nm = model_set_strdup(c->set, name)))
			return dt_err_set(c->err, -ENOMEM, "out of memory");
		rc = add_pod(c, w, w->meta.ns, nm, &wl->template_.spec, NULL);
		if (rc)
			return rc;
	}
	return 0;
}

/* ---- Units and shapes ---- */

static size_t uf_find(size_t *parent, size_t i)
{
	while (parent[i] != i) {
		parent[i] = parent[parent[i]];
		i = parent[i];
	}
	return i;
}

static bool is_generated(const struct plan_pod *p, const struct model_object *claim)
{
	const struct model_pod_spec *s = p->spec;

	/* A claim a template produced for this pod is the pod's alone (not
	 * one made for its PodGroup, which the group's pods share), and so is
	 * the claim for its extended resources. */
	for (size_t i = 0; i < s->n_resource_claims && i < p->n_claims; i++)
		if (s->resource_claims[i].resource_claim_template_name && p->claims[i] == claim)
			return !p->group_claim || !p->group_claim[i];
	return p->ext && p->claims[p->n_claims - 1] == claim;
}

static void put_i64(struct strbuf *sb, int64_t v)
{
	char num[24];

	if (v < 0) {
		sb_putc(sb, '-');
		v = -v;         /* requests are >= 0 and below PLAN_RES_MAX */
	}
	sb_puts(sb, plan_u64_str((uint64_t)v, num));
}

/* s then sep, with NULL as "". */
static void put_field(struct strbuf *sb, const char *s, char sep)
{
	sb_puts(sb, s ? s : "");
	sb_putc(sb, sep);
}

static void put_reqs(struct strbuf *sb, const struct model_requirement *r, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		put_field(sb, r[i].key, ' ');
		sb_puts(sb, r[i].operator_text ? r[i].operator_text : "");
		for (size_t j = 0; j < r[i].n_values; j++) {
			sb_putc(sb, ',');
			sb_puts(sb, r[i].values[j]);
		}
		sb_putc(sb, ';');
	}
}

/* What makes two single-pod units interchangeable. Built with puts, not
 * printf: it is made for every pod. */
static void shape_key(const struct plan_pod *p, struct strbuf *sb)
{
	const struct model_pod_spec *s = p->spec;

	sb_reset(sb);
	put_field(sb, p->ns, '|');
	put_i64(sb, p->req.cpu_milli);
	sb_putc(sb, '|');
	put_i64(sb, p->req.mem_bytes);
	for (size_t i = 0; i < PLAN_MAX_NODE_EXT; i++)
		if (p->req.ext[i]) {
			sb_putc(sb, ',');
			put_i64(sb, (int64_t)i);
			sb_putc(sb, '=');
			put_i64(sb, p->req.ext[i]);
		}
	sb_putc(sb, '|');
	for (size_t i = 0; i < s->n_node_selector; i++) {
		put_field(sb, s->node_selector[i].key, '=');
		put_field(sb, s->node_selector[i].value, ';');
	}
	sb_putc(sb, '|');
	if (s->required_node_affinity)
		for (size_t t = 0; t < s->required_node_affinity->n_terms; t++) {
			const struct model_node_selector_term *term =
				&s->required_node_affinity->terms[t];

			put_reqs(sb, term->match_expressions, term->n_match_expressions);
			sb_putc(sb, '&');
			put_reqs(sb, term->match_fields, term->n_match_fields);
			sb_putc(sb, '/');
		}
	sb_putc(sb, '|');
	for (size_t i = 0; i < s->n_tolerations; i++) {
		const struct model_toleration *t = &s->tolerations[i];

		put_field(sb, t->key, ',');
		put_field(sb, t->operator_text, ',');
		put_field(sb, t->value, ',');
		put_field(sb, t->effect, ';');
	}
	sb_putc(sb, '|');
	for (size_t i = 0; i < s->n_resource_claims; i++)
		put_field(sb, s->resource_claims[i].resource_claim_template_name, ';');
	if (p->ext && p->claims[p->n_claims - 1]) {
		const struct model_claim_spec *cs = &p->claims[p->n_claims - 1]->u.claim.spec;

		sb_putc(sb, '|');
		for (size_t i = 0; i < cs->n_requests; i++) {
			put_field(sb, cs->requests[i].exactly->device_class_name, '*');
			put_i64(sb, cs->requests[i].exactly->count);
			sb_putc(sb, ';');
		}
	}
}

/* A request's fields the allocator reads, written out so that equal keys
 * mean equal requests. false for what the key does not cover (capacity
 * requests): such claims keep a place of their own. */
static bool put_exact(struct strbuf *sb, const struct model_exact_request *r)
{
	char num[24];

	if (r->capacity_requests.n_items)
		return false;
	put_field(sb, r->device_class_name, ',');
	put_field(sb, r->allocation_mode_text, ',');
	sb_puts(sb, r->has_count ? plan_u64_str((uint64_t)r->count, num) : "-");
	sb_puts(sb, r->has_admin_access ? (r->admin_access ? ",A1" : ",A0") : ",A-");
	for (size_t i = 0; i < r->n_selectors; i++) {
		sb_puts(sb, ",s");
		sb_puts(sb, plan_u64_str(r->selectors[i].expression_len, num));
		sb_putc(sb, ':');
		if (r->selectors[i].expression)
			sb_append(sb, r->selectors[i].expression, r->selectors[i].expression_len);
	}
	for (size_t i = 0; i < r->n_tolerations; i++) {
		const struct model_toleration *t = &r->tolerations[i];

		sb_puts(sb, ",t");
		put_field(sb, t->key, ',');
		put_field(sb, t->operator_text, ',');
		put_field(sb, t->value, ',');
		put_field(sb, t->effect, ',');
		put_i64(sb, t->has_toleration_seconds ? t->toleration_seconds : -1);
	}
	sb_putc(sb, ';');
	return true;
}

/* A claim's spec as a key, for placing claims made up front like claims
 * made from one template. false when the key would not cover it
 * (configuration, capacity requests). */
static bool put_claim_spec(struct strbuf *sb, const struct model_claim_spec *c)
{
	if (c->n_config)
		return false;
	for (size_t i = 0; i < c->n_requests; i++) {
		const struct model_device_request *r = &c->requests[i];

		put_field(sb, r->name, '{');
		if (r->exactly && !put_exact(sb, r->exactly))
			return false;
		for (size_t k = 0; k < r->n_first_available; k++) {
			put_field(sb, r->first_available[k].name, '=');
			if (!put_exact(sb, &r->first_available[k].req))
				return false;
		}
		sb_putc(sb, '}');
	}
	for (size_t i = 0; i < c->n_constraints; i++) {
		const struct model_constraint *k = &c->constraints[i];

		sb_puts(sb, "c(");
		for (size_t j = 0; j < k->n_requests; j++)
			put_field(sb, k->requests[j], ',');
		put_field(sb, k->match_attribute, ',');
		put_field(sb, k->distinct_attribute, ')');
	}
	return true;
}

/* The place key of a single-pod unit whose claims are all its own and not
 * allocated: its shape key with each claim's spec (a template-made claim
 * by its template, as the shape key has it). false when the unit keeps a
 * place of its own. */
static bool place_key(const struct plan_pod *p, const struct plan_unit *u, bool have_shape,
		      struct strbuf *sb)
{
	char num[24];

	if (u->n_pods != 1 || u->n_allocated || u->problem)
		return false;
	if (!have_shape)        /* else sb holds the unit's shape key already */
		shape_key(p, sb);
	sb_puts(sb, "|P");
	for (size_t k = 0; k < p->n_claims; k++) {
		if (!p->claims[k])
			return false;
		if (is_generated(p, p->claims[k]))
			continue;       /* the shape key names the template */
		sb_puts(sb, "|#");
		sb_puts(sb, plan_u64_str(k, num));
		sb_putc(sb, ':');
		if (!put_claim_spec(sb, &p->claims[k]->u.claim.spec))
			return false;
	}
	return !sb_error(sb);
}

struct shape_map {
	char **keys;
	size_t *ids;
	size_t cap;
};

static int shape_lookup(struct shape_map *m, const char *key, size_t next_id, size_t *id)
{
	uint64_t h;
	size_t i;

	if (!m->cap || next_id * 2 >= m->cap) {
		struct shape_map nm = { 0 };

		nm.cap = m->cap ? m->cap * 4 : 64;
		nm.keys = calloc(nm.cap, sizeof(char *));
		nm.ids = calloc(nm.cap, sizeof(size_t));
		if (!nm.keys || !nm.ids) {
			free(nm.keys);
			free(nm.ids);
			return -ENOMEM;
		}
		for (size_t j = 0; j < m->cap; j++) {
			if (!m->keys[j])
				continue;
			h = hash_field(HASH_FNV_OFFSET, m->keys[j]);
			for (i = h % nm.cap; nm.keys[i]; i = (i + 1) % nm.cap)
				;
			nm.keys[i] = m->keys[j];
			nm.ids[i] = m->ids[j];
		}
		free(m->keys);
		free(m->ids);
		*m = nm;
	}
	h = hash_field(HASH_FNV_OFFSET, key);
	for (i = h % m->cap; m->keys[i]; i = (i + 1) % m->cap) {
		if (!strcmp(m->keys[i], key)) {
			*id = m->ids[i];
			return 0;
		}
	}
	if (!(m->keys[i] = strdup(key)))
		return -ENOMEM;
	m->ids[i] = next_id;
	*id = next_id;
	return 1;
}

static void shape_map_free(struct shape_map *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->keys[i]);
	free(m->keys);
	free(m->ids);
}

static int claim_index(const struct model_object **claims, size_t n, const struct model_object *c)
{
	for (size_t i = 0; i < n; i++)
		if (claims[i] == c)
			return (int)i;
	return -1;
}

/* Each pod into the unit of its root (units numbered by their first pod),
 * with the unit's requests, first problem and distinct claims: the
 * arrays are slices of three slabs, a unit's claims with room for all of
 * its pods' claims. */
static int fill_units(struct plan_pods *out, size_t *parent, size_t *root_unit, size_t n_named)
{
	size_t n = out->n_pods, at_pod = 0, at_claim = 0;

	out->unit_pods = malloc((n + 1) * sizeof(*out->unit_pods));
	out->unit_claims = malloc((n_named + 1) * sizeof(*out->unit_claims));
	out->unit_allocated = malloc((n_named + 1) * sizeof(*out->unit_allocated));
	if (!out->unit_pods || !out->unit_claims || !out->unit_allocated)
		return -ENOMEM;
	/* Count pods and claim room per unit (in n_pods, n_claims). */
	for (size_t i = 0; i < n; i++) {
		size_t r = uf_find(parent, i);

		if (root_unit[r] == SIZE_MAX)
			root_unit[r] = out->n_units++;
		out->pods[i].unit = root_unit[r];
		out->units[root_unit[r]].n_pods++;
		out->units[root_unit[r]].n_claims += out->pods[i].n_claims;
	}
	for (size_t k = 0; k < out->n_units; k++) {
		struct plan_unit *u = &out->units[k];

		u->pods = out->unit_pods + at_pod;
		at_pod += u->n_pods;
		if (u->n_claims) {
			u->claims = out->unit_claims + at_claim;
			u->allocated = out->unit_allocated + at_claim;
			at_claim += u->n_claims;
		}
		u->n_pods = u->n_claims = 0;
	}
	for (size_t i = 0; i < n; i++) {
		struct plan_pod *p = &out->pods[i];
		struct plan_unit *u = &out->units[p->unit];

		u->pods[u->n_pods++] = i;
		plan_res_add(&u->req, &p->req);
		if (p->problem && !u->problem)
			u->problem = p->problem;
		for (size_t k = 0; k < p->n_claims; k++) {
			const struct model_object *cl = p->claims[k];
			bool done;

			if (!cl)
				continue;
			done = cl->u.claim.status.allocation != NULL;
			const struct model_object **list = done ? u->allocated : u->claims;
			size_t *cnt = done ? &u->n_allocated : &u->n_claims;

			if (claim_index(list, *cnt, cl) < 0)
				list[(*cnt)++] = cl;
		}
	}
	return 0;
}

static int build_units(struct collect *c)
{
	struct plan_pods *out = c->out;
	size_t n = out->n_pods, *parent = NULL, *root_unit = NULL;
	const struct model_object **owner = NULL;      /* shared claim -> first pod */
	size_t *owner_pod = NULL, n_named = 0, cap_owner;
	struct shape_map map = { 0 }, places = { 0 };
	struct strbuf sb = STRBUF_INIT;
	int rc = -ENOMEM;

	if (!n)
		return 0;
	parent = malloc(n * sizeof(*parent));
	root_unit = malloc(n * sizeof(*root_unit));
	out->units = calloc(n, sizeof(*out->units));
	if (!parent || !root_unit || !out->units)
		goto out;
	for (size_t i = 0; i < n; i++) {
		parent[i] = i;
		root_unit[i] = SIZE_MAX;
	}
	/* Union pods that name the same shared claim: the first pod naming
	 * each claim is kept in a table keyed by the claim (a power of two at
	 * least twice the claims named, so probing ends). */
	for (size_t i = 0; i < n; i++)
		n_named += out->pods[i].n_claims;
	for (cap_owner = 16; cap_owner < 2 * n_named; cap_owner *= 2)
		;
	owner = calloc(cap_owner, sizeof(*owner));
	owner_pod = calloc(cap_owner, sizeof(*owner_pod));
	if (!owner || !owner_pod)
		goto out;
	for (size_t i = 0; i < n; i++) {
		struct plan_pod *p = &out->pods[i];

		for (size_t k = 0; k < p->n_claims; k++) {
			const struct model_object *cl = p->claims[k];
			size_t at;

			/* An allocated claim only pins its pods to its node; the
			 * scheduler still places them one at a time. */
			if (!cl || is_generated(p, cl) || cl->u.claim.status.allocation)
				continue;
			at = ((uintptr_t)cl >> 4) * 0x9e3779b97f4a7c15ULL & (cap_owner - 1);
			while (owner[at] && owner[at] != cl)
				at = (at + 1) & (cap_owner - 1);
			if (!owner[at]) {
				owner[at] = cl;
				owner_pod[at] = i;
				continue;
			}
			size_t a = uf_find(parent, i), b = uf_find(parent, owner_pod[at]);

			if (a != b)
				parent[a < b ? b : a] = a < b ? a : b;
		}
	}
	if ((rc = fill_units(out, parent, root_unit, n_named)))
		goto out;
	rc = -ENOMEM;
	/* Shapes: single-pod units with template claims only can be swapped. */
	for (size_t i = 0; i < out->n_units; i++) {
		struct plan_unit *u = &out->units[i];
		const struct plan_pod *p = &out->pods[u->pods[0]];
		bool simple = u->n_pods == 1 && !u->n_allocated && !u->problem;
		size_t id;
		int r;

		for (size_t k = 0; simple && k < p->n_claims; k++)
			simple = p->claims[k] && is_generated(p, p->claims[k]);
		/* Other units are shapes of their own, and places too unless
		 * place_key says otherwise: numbered as they come. */
		if (simple) {
			shape_key(p, &sb);
			if (sb_error(&sb) ||
			    (r = shape_lookup(&map, sb_str(&sb), out->n_shapes, &id)) < 0)
				goto out;
			u->shape = id;
			out->n_shapes += r == 1;
		} else {
			u->shape = out->n_shapes++;
		}
		if (!place_key(p, u, simple, &sb)) {
			u->place = out->n_places++;
			continue;
		}
		if (sb_error(&sb) ||
		    (r = shape_lookup(&places, sb_str(&sb), out->n_places, &id)) < 0)
			goto out;
		u->place = id;
		out->n_places += r == 1;
	}
	rc = 0;
out:
	if (rc)
		dt_err_set(c->err, rc, "out of memory");
	shape_map_free(&map);
	shape_map_free(&places);
	sb_free(&sb);
	free(parent);
	free(root_unit);
	free(owner);
	free(owner_pod);
	return rc;
}

int plan_pods_collect(struct model_set *set, struct plan_pods *out, struct dt_err *err)
{
	struct collect c = { .set = set, .out = out, .err = err };
	const struct model_object *o;
	static const enum model_kind workloads[] = {
		MODEL_DEPLOYMENT, MODEL_REPLICA_SET, MODEL_STATEFUL_SET, MODEL_JOB,
	};
	int rc;

	memset(out, 0, sizeof(*out));
	out->n_ext_names = plan_overlay_ext_names(set, out->ext_names, PLAN_MAX_NODE_EXT);
	for (o = NULL; (o = model_set_next(set, MODEL_POD, o));) {
		const struct model_pod *pod = &o->u.pod;
		const char *phase = pod->status.phase;

		if (phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed")))
			continue;
		rc = pod->spec.node_name ? add_bound(&c, o)
					 : add_pod(&c, o, o->meta.ns, o->meta.name, &pod->spec,
						   &pod->status);
		if (rc)
			goto out;
	}
	for (size_t k = 0; k < sizeof(workloads) / sizeof(workloads[0]); k++)
		for (o = NULL; (o = model_set_next(set, workloads[k], o));)
			if ((rc = expand_workload(&c, o)))
				goto out;
	if (!(rc = generate_claims(&c)))
		rc = build_units(&c);
out:
	free((void *)c.made);
	free(c.resv);
	return rc;
}

void plan_pods_free(struct plan_pods *p)
{
	if (!p)
		return;
	free(p->unit_pods);
	free(p->unit_claims);
	free(p->unit_allocated);
	free(p->units);
	free(p->pods);
	free(p->bound);
	memset(p, 0, sizeof(*p));
}
