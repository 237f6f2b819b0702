/* kube_resource.c - the API resources dratopo reads and writes, how they
 * map to the model's kinds, and how requests and messages name them. */
#include <stdio.h>
#include <string.h>

#include "kube_internal.h"

#define RES(var, g, v, r, k, nsd) \
	const struct kube_resource var = { g, v, r, k, nsd }

RES(kube_res_pods, "", "v1", "pods", "Pod", true);
RES(kube_res_nodes, "", "v1", "nodes", "Node", false);
RES(kube_res_namespaces, "", "v1", "namespaces", "Namespace", false);
RES(kube_res_configmaps, "", "v1", "configmaps", "ConfigMap", true);
RES(kube_res_serviceaccounts, "", "v1", "serviceaccounts", "ServiceAccount", true);
RES(kube_res_events, "events.k8s.io", "v1", "events", "Event", true);
RES(kube_res_leases, "coordination.k8s.io", "v1", "leases", "Lease", true);
RES(kube_res_crds, "apiextensions.k8s.io", "v1", "customresourcedefinitions",
    "CustomResourceDefinition", false);
RES(kube_res_deviceclasses, "resource.k8s.io", "v1", "deviceclasses", "DeviceClass", false);
RES(kube_res_resourceslices, "resource.k8s.io", "v1", "resourceslices", "ResourceSlice", false);
RES(kube_res_resourceclaims, "resource.k8s.io", "v1", "resourceclaims", "ResourceClaim", true);
RES(kube_res_resourceclaimtemplates, "resource.k8s.io", "v1", "resourceclaimtemplates",
    "ResourceClaimTemplate", true);
RES(kube_res_devicetaintrules, "resource.k8s.io", "v1", "devicetaintrules",
    "DeviceTaintRule", false);
RES(kube_res_daemonsets, "apps", "v1", "daemonsets", "DaemonSet", true);
RES(kube_res_deployments, "apps", "v1", "deployments", "Deployment", true);
RES(kube_res_replicasets, "apps", "v1", "replicasets", "ReplicaSet", true);
RES(kube_res_statefulsets, "apps", "v1", "statefulsets", "StatefulSet", true);
RES(kube_res_jobs, "batch", "v1", "jobs", "Job", true);
RES(kube_res_nodepools, "karpenter.sh", "v1", "nodepools", "NodePool", false);
RES(kube_res_nodeclaims, "karpenter.sh", "v1", "nodeclaims", "NodeClaim", false);
RES(kube_res_nodeoverlays, "karpenter.sh", "v1alpha1", "nodeoverlays", "NodeOverlay", false);
RES(kube_res_ec2nodeclasses, "karpenter.k8s.aws", "v1", "ec2nodeclasses", "EC2NodeClass", false);
RES(kube_res_clusterroles, "rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole",
    false);
RES(kube_res_clusterrolebindings, "rbac.authorization.k8s.io", "v1", "clusterrolebindings",
    "ClusterRoleBinding", false);

static const struct kube_resource *const by_kind[MODEL_KIND_COUNT] = {
	[MODEL_DEVICE_CLASS] = &kube_res_deviceclasses,
	[MODEL_RESOURCE_SLICE] = &kube_res_resourceslices,
	[MODEL_RESOURCE_CLAIM] = &kube_res_resourceclaims,
	[MODEL_RESOURCE_CLAIM_TEMPLATE] = &kube_res_resourceclaimtemplates,
	[MODEL_DEVICE_TAINT_RULE] = &kube_res_devicetaintrules,
	[MODEL_POD] = &kube_res_pods,
	[MODEL_NODE] = &kube_res_nodes,
	[MODEL_DEPLOYMENT] = &kube_res_deployments,
	[MODEL_REPLICA_SET] = &kube_res_replicasets,
	[MODEL_STATEFUL_SET] = &kube_res_statefulsets,
	[MODEL_JOB] = &kube_res_jobs,
	[MODEL_DAEMON_SET] = &kube_res_daemonsets,
	[MODEL_NODE_POOL] = &kube_res_nodepools,
	[MODEL_NODE_CLAIM] = &kube_res_nodeclaims,
	[MODEL_EC2_NODE_CLASS] = &kube_res_ec2nodeclasses,
	[MODEL_NODE_OVERLAY] = &kube_res_nodeoverlays,
};

const struct kube_resource *kube_resource_of(enum model_kind k)
{
	return (unsigned)k < MODEL_KIND_COUNT ? by_kind[k] : NULL;
}

void kube_resource_name(const struct kube_resource *res, char *buf, size_t size)
{
	if (res->group[0])
		snprintf(buf, size, "%s.%s", res->resource, res->group);
	else
		snprintf(buf, size, "%s", res->resource);
}

/* The model kind a resource holds, or -1. */
static int kind_of(const struct kube_resource *res)
{
	for (int k = 0; k < MODEL_KIND_COUNT; k++)
		if (by_kind[k] == res || (by_kind[k] && !strcmp(by_kind[k]->group, res->group) &&
					  !strcmp(by_kind[k]->resource, res->resource)))
			return k;
	return -1;
}

int kube_resource_model_kind(const struct kube_resource *res)
{
	return kind_of(res);
}

static void put_segment(struct strbuf *sb, const char *s)
{
	/* Names, namespaces and resources are DNS-ish; escape anything else so
	 * a hostile name cannot reshape the path. */
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		    (ch >= '0' && ch <= '9') || ch == '-' || ch == '.' || ch == '_' || ch == '~' ||
		    ch == ':')
			sb_putc(sb, (char)ch);
		else
			sb_printf(sb, "%%%02X", ch);
	}
}

int kube_ref_path(const struct kube_client *c, const struct kube_ref *ref, struct strbuf *sb)
{
	const struct kube_resource *res = ref->res;

	if (res->group[0])
		sb_printf(sb, "/apis/%s/%s", res->group, res->version);
	else
		sb_printf(sb, "/api/%s", res->version);
	if (res->namespaced) {
		const char *ns = ref->ns ? ref->ns : kube_client_namespace(c);

		/* A list across namespaces has no namespace segment. */
		if (ns && ns[0]) {
			sb_puts(sb, "/namespaces/");
			put_segment(sb, ns);
		}
	}
	sb_putc(sb, '/');
	sb_puts(sb, res->resource);
	if (ref->name) {
		sb_putc(sb, '/');
		put_segment(sb, ref->name);
		if (ref->subresource) {
			sb_putc(sb, '/');
			put_segment(sb, ref->subresource);
		}
	}
	return sb_error(sb);
}

void kube_describe(const char *verb, const struct kube_ref *ref, const char *ns_default,
		   char *buf, size_t size)
{
	char res[160];
	const char *ns = ref->ns ? ref->ns : ns_default;
	int n;

	kube_resource_name(ref->res, res, sizeof(res));
	n = snprintf(buf, size, "%s %s", verb, res);
	if (n < 0 || (size_t)n >= size)
		return;
	if (ref->name && ref->res->namespaced && ns && ns[0])
		n += snprintf(buf + n, size - n, " %s/%s", ns, ref->name);
	else if (ref->name)
		n += snprintf(buf + n, size - n, " %s", ref->name);
	else if (ref->res->namespaced && ns && ns[0])
		n += snprintf(buf + n, size - n, " in namespace %s", ns);
	if (n >= 0 && (size_t)n < size && ref->name && ref->subresource)
		snprintf(buf + n, size - n, "/%s", ref->subresource);
}
