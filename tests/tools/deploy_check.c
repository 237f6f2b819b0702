/* deploy_check.c - checks the deploy/ manifests the way an API server would before
 * anything runs: every document parses, its apiVersion/kind pair is one this
 * tool knows, its required fields are present with the right types, and the
 * references between objects hold (a workload's selector matches its pod
 * template, every volumeMount names a volume, a PVC or Secret volume names an
 * object or a Certificate's secretName in the set, a pod's ServiceAccount is
 * in the set, a Service selects some workload and its named targetPorts exist
 * there, a RoleBinding names a Role), and what makes replicas highly
 * available holds: a PodDisruptionBudget leaves some voluntary eviction
 * possible (else a node drain hangs), a workload's pod anti-affinity
 * selects its own pods (else it keeps nothing apart), and a Service that
 * selects a label the pods set at run time (the coordinator's leader label)
 * selects pods whose ServiceAccount RBAC lets patch pods there.
 *
 *   deploy_check FILE...
 *
 * `dratopo validate` knows the DRA and workload kinds the planner reads, not
 * DaemonSet, Service, PersistentVolumeClaim, RBAC or cert-manager, hence this
 * test tool. Each problem is one line `FILE: document N (KIND NAME): FIELD:
 * message`; exit 0 when there is none, 1 otherwise, 2 on usage. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "doc.h"
#include "err.h"

#define MAX_OBJS 256

struct obj {
	const char *file;
	size_t index;                   /* 1-based document number */
	const char *api, *kind, *name, *ns;
	const struct doc_node *root;
};

struct kind_rule {
	const char *api, *kind;
	bool namespaced;
	/* Required paths, dot-separated, each with the doc kind it must have. */
	struct { const char *path; enum doc_kind type; } req[8];
};

static const struct kind_rule rules[] = {
	{ "v1", "Namespace", false, { { NULL, 0 } } },
	{ "v1", "ServiceAccount", true, { { NULL, 0 } } },
	{ "v1", "PersistentVolumeClaim", true,
	  { { "spec.accessModes", DOC_SEQ }, { "spec.resources.requests.storage", DOC_STRING } } },
	{ "v1", "Service", true, { { "spec.selector", DOC_MAP }, { "spec.ports", DOC_SEQ } } },
	{ "apps/v1", "Deployment", true,
	  { { "spec.selector.matchLabels", DOC_MAP }, { "spec.template.metadata.labels", DOC_MAP },
	    { "spec.template.spec.containers", DOC_SEQ } } },
	{ "apps/v1", "DaemonSet", true,
	  { { "spec.selector.matchLabels", DOC_MAP }, { "spec.template.metadata.labels", DOC_MAP },
	    { "spec.template.spec.containers", DOC_SEQ } } },
	{ "batch/v1", "CronJob", true,
	  { { "spec.schedule", DOC_STRING },
	    { "spec.jobTemplate.spec.template.spec.containers", DOC_SEQ } } },
	{ "rbac.authorization.k8s.io/v1", "Role", true, { { "rules", DOC_SEQ } } },
	{ "rbac.authorization.k8s.io/v1", "RoleBinding", true,
	  { { "roleRef.kind", DOC_STRING }, { "roleRef.name", DOC_STRING },
	    { "roleRef.apiGroup", DOC_STRING }, { "subjects", DOC_SEQ } } },
	{ "rbac.authorization.k8s.io/v1", "ClusterRole", false, { { "rules", DOC_SEQ } } },
	{ "rbac.authorization.k8s.io/v1", "ClusterRoleBinding", false,
	  { { "roleRef.kind", DOC_STRING }, { "roleRef.name", DOC_STRING },
	    { "roleRef.apiGroup", DOC_STRING }, { "subjects", DOC_SEQ } } },
	{ "cert-manager.io/v1", "Issuer", true, { { "spec", DOC_MAP } } },
	{ "cert-manager.io/v1", "Certificate", true,
	  { { "spec.secretName", DOC_STRING }, { "spec.issuerRef.name", DOC_STRING } } },
	{ "policy/v1", "PodDisruptionBudget", true, { { "spec.selector.matchLabels", DOC_MAP } } },
	{ "apiextensions.k8s.io/v1", "CustomResourceDefinition", false,
	  { { "spec.group", DOC_STRING }, { "spec.names.kind", DOC_STRING },
	    { "spec.names.plural", DOC_STRING }, { "spec.versions", DOC_SEQ } } },
};

/* Labels a process puts on its own pod at run time, which no template
 * carries: the coordinator's leader label (the Service selects the leader). */
static const char *const runtime_labels[] = { "dratopo.io/role", NULL };

static bool runtime_label(const char *key)
{
	for (size_t i = 0; runtime_labels[i]; i++)
		if (!strcmp(key, runtime_labels[i]))
			return true;
	return false;
}

static struct obj objs[MAX_OBJS];
static size_t n_objs;
static int problems;

static void problem(const struct obj *o, const char *field, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void problem(const struct obj *o, const char *field, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: document %zu (%s %s): %s: ", o->file, o->index,
		o->kind ? o->kind : "?", o->name ? o->name : "?", field);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	problems++;
}

/* The node at a dot-separated path, or NULL. */
static const struct doc_node *at(const struct doc_node *n, const char *path)
{
	char key[128];

	while (n && *path) {
		size_t len = strcspn(path, ".");

		if (len >= sizeof(key))
			return NULL;
		memcpy(key, path, len);
		key[len] = '\0';
		n = doc_get(n, key);
		path += len + (path[len] == '.');
	}
	return n;
}

static const struct kind_rule *rule_for(const struct obj *o)
{
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
		if (!strcmp(rules[i].api, o->api) && !strcmp(rules[i].kind, o->kind))
			return &rules[i];
	return NULL;
}

static const struct obj *find(const char *kind, const char *name, const char *ns)
{
	for (size_t i = 0; i < n_objs; i++)
		if (objs[i].kind && !strcmp(objs[i].kind, kind) && objs[i].name &&
		    !strcmp(objs[i].name, name) && (!ns || !objs[i].ns || !strcmp(objs[i].ns, ns)))
			return &objs[i];
	return NULL;
}

/* Every key of sel is in labels with the same value (but the labels set
 * at run time). */
static bool selects(const struct doc_node *sel, const struct doc_node *labels)
{
	if (!sel || sel->kind != DOC_MAP || !sel->u.map.n)
		return false;
	for (size_t i = 0; i < sel->u.map.n; i++) {
		const char *key = sel->u.map.pairs[i].key->text;
		const char *v = doc_str(doc_get(labels, key));

		if (runtime_label(key))
			continue;
		if (!v || strcmp(v, sel->u.map.pairs[i].value->text))
			return false;
	}
	return true;
}

/* A Secret volume's secret is made by a Certificate of the set. */
static bool secret_known(const char *name)
{
	for (size_t i = 0; i < n_objs; i++)
		if (objs[i].kind && !strcmp(objs[i].kind, "Certificate")) {
			const char *s = doc_str(at(objs[i].root, "spec.secretName"));

			if (s && !strcmp(s, name))
				return true;
		}
	return false;
}

static const struct doc_node *volume(const struct doc_node *vols, const char *name)
{
	for (size_t i = 0; vols && vols->kind == DOC_SEQ && i < vols->u.seq.n; i++) {
		const char *n = doc_str(doc_get(vols->u.seq.items[i], "name"));

		if (n && !strcmp(n, name))
			return vols->u.seq.items[i];
	}
	return NULL;
}

static void check_volumes(const struct obj *o, const struct doc_node *spec)
{
	const struct doc_node *vols = doc_get(spec, "volumes");

	for (size_t i = 0; vols && vols->kind == DOC_SEQ && i < vols->u.seq.n; i++) {
		const struct doc_node *v = vols->u.seq.items[i];
		const char *claim = doc_str(at(v, "persistentVolumeClaim.claimName"));
		const char *secret = doc_str(at(v, "secret.secretName"));

		if (!doc_str(doc_get(v, "name")))
			problem(o, "spec.template.spec.volumes", "a volume without a name");
		if (claim && !find("PersistentVolumeClaim", claim, o->ns))
			problem(o, "persistentVolumeClaim.claimName", "no PersistentVolumeClaim %s",
				claim);
		if (secret && !secret_known(secret))
			problem(o, "secret.secretName", "no Certificate makes Secret %s", secret);
	}
}

static void check_containers(const struct obj *o, const struct doc_node *spec,
			     const char *list)
{
	const struct doc_node *cs = doc_get(spec, list);

	for (size_t i = 0; cs && cs->kind == DOC_SEQ && i < cs->u.seq.n; i++) {
		const struct doc_node *c = cs->u.seq.items[i];
		const struct doc_node *mounts = doc_get(c, "volumeMounts");

		if (!doc_str(doc_get(c, "name")) || !doc_str(doc_get(c, "image")))
			problem(o, list, "entry %zu needs a name and an image", i);
		for (size_t j = 0; mounts && mounts->kind == DOC_SEQ && j < mounts->u.seq.n; j++) {
			const char *vn = doc_str(doc_get(mounts->u.seq.items[j], "name"));

			if (!vn || !doc_str(doc_get(mounts->u.seq.items[j], "mountPath")))
				problem(o, "volumeMounts", "entry %zu needs a name and a mountPath", j);
			else if (!volume(doc_get(spec, "volumes"), vn))
				problem(o, "volumeMounts", "no volume named %s", vn);
		}
	}
}

static void check_pod(const struct obj *o, const struct doc_node *spec)
{
	const char *sa = doc_str(doc_get(spec, "serviceAccountName"));

	check_containers(o, spec, "containers");
	check_containers(o, spec, "initContainers");
	check_volumes(o, spec);
	if (sa && !find("ServiceAccount", sa, o->ns))
		problem(o, "serviceAccountName", "no ServiceAccount %s", sa);
}

/* Each pod anti-affinity term's matchLabels selects the workload's own
 * pods: a term that selects none keeps no two replicas apart. */
static void check_anti_affinity(const struct obj *o)
{
	static const char *const lists[] = { "requiredDuringSchedulingIgnoredDuringExecution",
					     "preferredDuringSchedulingIgnoredDuringExecution" };
	const struct doc_node *aa = at(o->root, "spec.template.spec.affinity.podAntiAffinity");
	const struct doc_node *labels = at(o->root, "spec.template.metadata.labels");
	char field[160];

	for (size_t l = 0; l < 2; l++) {
		const struct doc_node *terms = doc_get(aa, lists[l]);

		for (size_t i = 0; terms && terms->kind == DOC_SEQ && i < terms->u.seq.n; i++) {
			const struct doc_node *t = terms->u.seq.items[i];
			const struct doc_node *sel;

			if (l == 1)
				t = doc_get(t, "podAffinityTerm");
			sel = at(t, "labelSelector.matchLabels");
			if (!sel)
				continue;       /* matchExpressions: not judged here */
			snprintf(field, sizeof(field), "podAntiAffinity.%s[%zu].labelSelector",
				 lists[l], i);
			if (!selects(sel, labels))
				problem(o, field, "selects none of its own pods: keeps no two "
					"replicas apart");
		}
	}
}

static void check_workload(const struct obj *o)
{
	if (!selects(at(o->root, "spec.selector.matchLabels"),
		     at(o->root, "spec.template.metadata.labels")))
		problem(o, "spec.selector", "does not match the pod template's labels");
	check_pod(o, at(o->root, "spec.template.spec"));
	check_anti_affinity(o);
}

/* A named port of some container of a workload the Service selects. */
static bool port_named(const struct doc_node *spec, const char *name)
{
	const struct doc_node *cs = doc_get(spec, "containers");

	for (size_t i = 0; cs && cs->kind == DOC_SEQ && i < cs->u.seq.n; i++) {
		const struct doc_node *ps = doc_get(cs->u.seq.items[i], "ports");

		for (size_t j = 0; ps && ps->kind == DOC_SEQ && j < ps->u.seq.n; j++) {
			const char *n = doc_str(doc_get(ps->u.seq.items[j], "name"));

			if (n && !strcmp(n, name))
				return true;
		}
	}
	return false;
}

/* The workload of the set whose pods sel (at path) selects, or NULL
 * after saying so. */
static const struct obj *selected(const struct obj *o, const char *path)
{
	const struct doc_node *sel = at(o->root, path);

	for (size_t i = 0; i < n_objs; i++)
		if (objs[i].kind && (!strcmp(objs[i].kind, "Deployment") ||
				     !strcmp(objs[i].kind, "DaemonSet")) &&
		    selects(sel, at(objs[i].root, "spec.template.metadata.labels")))
			return &objs[i];
	problem(o, path, "selects no workload of the set");
	return NULL;
}

/* Whether list (a sequence of strings) holds want or "*". */
static bool has_item(const struct doc_node *list, const char *want)
{
	for (size_t i = 0; list && list->kind == DOC_SEQ && i < list->u.seq.n; i++) {
		const char *s = doc_str(list->u.seq.items[i]);

		if (s && (!strcmp(s, want) || !strcmp(s, "*")))
			return true;
	}
	return false;
}

/* Whether role (a Role or ClusterRole) lets patch pods. */
static bool role_patches_pods(const struct obj *role)
{
	const struct doc_node *rs = doc_get(role->root, "rules");

	for (size_t i = 0; rs && rs->kind == DOC_SEQ && i < rs->u.seq.n; i++) {
		const struct doc_node *r = rs->u.seq.items[i];

		if (has_item(doc_get(r, "apiGroups"), "") && has_item(doc_get(r, "resources"), "pods") &&
		    has_item(doc_get(r, "verbs"), "patch"))
			return true;
	}
	return false;
}

/* Whether binding b names ServiceAccount sa of namespace ns. */
static bool binds(const struct obj *b, const char *sa, const char *ns)
{
	const struct doc_node *subjects = doc_get(b->root, "subjects");

	for (size_t i = 0; subjects && subjects->kind == DOC_SEQ && i < subjects->u.seq.n; i++) {
		const struct doc_node *s = subjects->u.seq.items[i];
		const char *kind = doc_str(doc_get(s, "kind")), *name = doc_str(doc_get(s, "name"));
		const char *sns = doc_str(doc_get(s, "namespace"));

		if (kind && name && !strcmp(kind, "ServiceAccount") && !strcmp(name, sa) &&
		    (sns ? !strcmp(sns, ns) : b->ns && !strcmp(b->ns, ns)))
			return true;
	}
	return false;
}

/* Whether ServiceAccount sa may patch pods in namespace ns: a RoleBinding
 * there or a ClusterRoleBinding binds it to a role that lets it. */
static bool may_patch_pods(const char *sa, const char *ns)
{
	for (size_t i = 0; i < n_objs; i++) {
		const struct obj *b = &objs[i];
		bool cluster = !strcmp(b->kind, "ClusterRoleBinding");
		const char *kind = doc_str(at(b->root, "roleRef.kind"));
		const char *name = doc_str(at(b->root, "roleRef.name"));
		const struct obj *role;

		if ((!cluster && (strcmp(b->kind, "RoleBinding") || !b->ns || strcmp(b->ns, ns))) ||
		    !kind || !name || !binds(b, sa, ns))
			continue;
		role = !strcmp(kind, "ClusterRole") ? find("ClusterRole", name, NULL)
		       : cluster ? NULL : find("Role", name, ns);
		if (role && role_patches_pods(role))
			return true;
	}
	return false;
}

/* A selector's label that the pods' own process sets at run time is
 * set only if their ServiceAccount may patch pods. */
static void check_runtime_selector(const struct obj *o, const struct obj *target)
{
	const struct doc_node *sel = at(o->root, "spec.selector");
	const char *sa = doc_str(at(target->root, "spec.template.spec.serviceAccountName"));

	for (size_t i = 0; sel && sel->kind == DOC_MAP && i < sel->u.map.n; i++) {
		const char *key = sel->u.map.pairs[i].key->text;

		if (runtime_label(key) && !may_patch_pods(sa ? sa : "default", target->ns))
			problem(o, "spec.selector", "%s is set on %s %s's pods at run time, but "
				"ServiceAccount %s may not patch pods in %s (no Role or "
				"ClusterRole bound to it lets it): the Service would select none",
				key, target->kind, target->name, sa ? sa : "default", target->ns);
	}
}

/* The replicas of a Deployment (1 when unset); -1 for other workloads. */
static int64_t replicas(const struct obj *w)
{
	const struct doc_node *r = at(w->root, "spec.replicas");

	if (strcmp(w->kind, "Deployment"))
		return -1;
	return r && r->kind == DOC_INT ? r->u.i : 1;
}

/* A budget that allows no voluntary eviction hangs every node drain. */
static void check_pdb(const struct obj *o)
{
	const struct obj *w = selected(o, "spec.selector.matchLabels");
	const struct doc_node *min = at(o->root, "spec.minAvailable");
	const struct doc_node *max = at(o->root, "spec.maxUnavailable");
	int64_t n = w ? replicas(w) : -1;

	if (min && max)
		problem(o, "spec", "minAvailable and maxUnavailable cannot be both set");
	else if (!min && !max)
		problem(o, "spec", "neither minAvailable nor maxUnavailable: a budget of nothing");
	else if (max && max->kind == DOC_INT && max->u.i < 1)
		problem(o, "spec.maxUnavailable", "0 allows no voluntary eviction: every node drain "
			"hangs on these pods");
	else if (min && min->kind == DOC_INT && n >= 0 && min->u.i >= n)
		problem(o, "spec.minAvailable", "%" PRId64 " of the %" PRId64 " replicas of %s %s "
			"allows no voluntary eviction: every node drain hangs on these pods",
			min->u.i, n, w->kind, w->name);
}

static void check_service(const struct obj *o)
{
	const struct doc_node *ports = at(o->root, "spec.ports");
	const struct obj *target = selected(o, "spec.selector");

	if (!target)
		return;
	check_runtime_selector(o, target);
	for (size_t i = 0; ports && ports->kind == DOC_SEQ && i < ports->u.seq.n; i++) {
		const struct doc_node *p = ports->u.seq.items[i];
		const struct doc_node *tp = doc_get(p, "targetPort");

		if (!doc_get(p, "port") || doc_get(p, "port")->kind != DOC_INT)
			problem(o, "spec.ports", "entry %zu needs an integer port", i);
		if (tp && tp->kind == DOC_STRING &&
		    !port_named(at(target->root, "spec.template.spec"), tp->text))
			problem(o, "spec.ports.targetPort", "%s %s has no port named %s",
				target->kind, target->name, tp->text);
	}
}

static void check_object(const struct obj *o)
{
	const struct kind_rule *r = rule_for(o);

	if (!r) {
		problem(o, "kind", "%s %s is not a kind this check knows", o->api, o->kind);
		return;
	}
	if (!o->name)
		problem(o, "metadata.name", "required");
	if (r->namespaced && !o->ns)
		problem(o, "metadata.namespace", "required for a namespaced kind");
	if (!r->namespaced && o->ns)
		problem(o, "metadata.namespace", "%s is not namespaced", o->kind);
	if (o->ns && !find("Namespace", o->ns, NULL))
		problem(o, "metadata.namespace", "no Namespace %s in the set", o->ns);
	for (size_t i = 0; i < 8 && r->req[i].path; i++) {
		const struct doc_node *n = at(o->root, r->req[i].path);

		if (!n)
			problem(o, r->req[i].path, "required");
		else if (n->kind != r->req[i].type)
			problem(o, r->req[i].path, "must be a %s, not a %s",
				doc_kind_name(r->req[i].type), doc_kind_name(n->kind));
	}
	if (!strcmp(o->kind, "Deployment") || !strcmp(o->kind, "DaemonSet"))
		check_workload(o);
	else if (!strcmp(o->kind, "CronJob"))
		check_pod(o, at(o->root, "spec.jobTemplate.spec.template.spec"));
	else if (!strcmp(o->kind, "Service"))
		check_service(o);
	else if (!strcmp(o->kind, "PodDisruptionBudget"))
		check_pdb(o);
	else if (!strcmp(o->kind, "RoleBinding")) {
		const char *role = doc_str(at(o->root, "roleRef.name"));

		if (role && !find("Role", role, o->ns))
			problem(o, "roleRef.name", "no Role %s", role);
	}
}

static int load(const char *path, struct doc_stream **s)
{
	struct dt_err err = { 0 };

	if (doc_load_file(path, s, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return -1;
	}
	for (size_t i = 0; i < (*s)->n_docs; i++) {
		const struct doc_node *root = (*s)->docs[i].root;
		struct obj *o;

		if ((*s)->docs[i].error) {
			fprintf(stderr, "%s: document %zu: %s\n", path, i + 1, (*s)->docs[i].error);
			problems++;
			continue;
		}
		if (!root)
			continue;
		if (n_objs == MAX_OBJS) {
			fprintf(stderr, "%s: more than %d objects\n", path, MAX_OBJS);
			return -1;
		}
		o = &objs[n_objs++];
		*o = (struct obj){ path, i + 1, doc_str(doc_get(root, "apiVersion")),
				   doc_str(doc_get(root, "kind")),
				   doc_str(at(root, "metadata.name")),
				   doc_str(at(root, "metadata.namespace")), root };
		if (!o->api || !o->kind) {
			problem(o, "apiVersion/kind", "required");
			n_objs--;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct doc_stream *streams[64] = { 0 };
	int rc = 0;

	if (argc < 2 || argc - 1 > 64) {
		fprintf(stderr, "usage: deploy_check FILE... (at most 64)\n");
		return 2;
	}
	for (int i = 1; i < argc && !rc; i++)
		rc = load(argv[i], &streams[i - 1]);
	for (size_t i = 0; !rc && i < n_objs; i++)
		check_object(&objs[i]);
	if (!rc && !problems)
		printf("%zu objects in %d files: ok\n", n_objs, argc - 1);
	for (int i = 0; i < argc - 1; i++)
		doc_stream_free(streams[i]);
	return rc || problems ? 1 : 0;
}
