/* model.h - the typed objects dratopo works on: DRA (resource.k8s.io/v1),
 * core v1 Pods and Nodes, workloads (apps/v1, batch/v1) and Karpenter
 * NodePools, NodeClaims, EC2NodeClasses and NodeOverlays.
 *
 * A struct model_set owns every object loaded from one or more manifests,
 * and one arena owns every string, array and nested struct of those
 * objects: nothing inside an object is freed on its own, model_set_free()
 * releases it all. Objects keep where they came from (file, document) so
 * that later stages can word their errors the way `dratopo validate` does.
 *
 * Conventions of the structs below:
 * - Strings are NUL-terminated and live in the set's arena; NULL means the
 *   field was absent ("" means it was given as an empty string).
 * - Arrays are `T *items; size_t n_items;`; n is 0 when absent.
 * - Optional scalars the API keeps as pointers (*int64, *bool) are a value
 *   plus `has_<field>`.
 * - Enumerated fields keep the text as written (for "Unsupported value"
 *   messages and faithful output) next to the parsed enum.
 * - Defaults the API server applies (model_defaults.c) are already in
 *   place after loading: allocationMode ExactCount, count 1, toleration
 *   operator Equal, replicas 1, namespace "default", ...
 *
 * Modules: model_decode.c (doc tree -> objects), model_defaults.c,
 * model_validate.c (the API server's rules and limits), model_encode.c
 * (objects -> doc trees in kubectl's form), model_names.c (field paths and
 * how messages name objects); the name rules are common/names. */
#ifndef DT_MODEL_H
#define DT_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cel_device.h"
#include "diag.h"
#include "doc.h"
#include "err.h"
#include "quantity.h"
#include "semver.h"

/* ------------------------------------------------------------------ */
/* Kinds                                                               */
/* ------------------------------------------------------------------ */

enum model_kind {
	MODEL_DEVICE_CLASS,             /* resource.k8s.io/v1, cluster-scoped */
	MODEL_RESOURCE_SLICE,           /* resource.k8s.io/v1, cluster-scoped */
	MODEL_RESOURCE_CLAIM,           /* resource.k8s.io/v1 */
	MODEL_RESOURCE_CLAIM_TEMPLATE,  /* resource.k8s.io/v1 */
	MODEL_DEVICE_TAINT_RULE,        /* resource.k8s.io/v1, cluster-scoped */
	MODEL_POD,                      /* v1 */
	MODEL_NODE,                     /* v1, cluster-scoped */
	MODEL_DEPLOYMENT,               /* apps/v1 */
	MODEL_REPLICA_SET,              /* apps/v1 */
	MODEL_STATEFUL_SET,             /* apps/v1 */
	MODEL_JOB,                      /* batch/v1 */
	MODEL_DAEMON_SET,               /* apps/v1: a pod on every node it selects */
	MODEL_NODE_POOL,                /* karpenter.sh/v1, cluster-scoped */
	MODEL_NODE_CLAIM,               /* karpenter.sh/v1, cluster-scoped */
	MODEL_EC2_NODE_CLASS,           /* karpenter.k8s.aws/v1, cluster-scoped */
	MODEL_NODE_OVERLAY,             /* karpenter.sh/v1alpha1, cluster-scoped */
	MODEL_POD_GROUP,                /* scheduling.k8s.io/v1beta1 (and v1alpha3) */
	MODEL_KIND_COUNT
};

/* "ResourceClaim", "NodePool", ...; "?" for an out-of-range value. */
const char *model_kind_name(enum model_kind k);
/* "resource.k8s.io/v1", "v1", "apps/v1", ... */
const char *model_kind_api_version(enum model_kind k);
bool model_kind_namespaced(enum model_kind k);
/* The kind for (apiVersion, kind), or -1 when dratopo does not know it. */
int model_kind_lookup(const char *api_version, const char *kind);

/* ------------------------------------------------------------------ */
/* Shared pieces                                                       */
/* ------------------------------------------------------------------ */

/* One entry of a map[string]string (labels, annotations, nodeSelector),
 * in the order written. */
struct model_kv {
	const char *key;
	const char *value;
};

struct model_owner_ref {
	const char *api_version, *kind, *name, *uid;
	bool has_controller, controller;
	bool has_block_owner_deletion, block_owner_deletion;
};

struct model_meta {
	const char *name;
	const char *generate_name;
	const char *ns;                 /* "default" for namespaced kinds when absent */
	const char *uid;
	const char *resource_version;
	const char *creation_timestamp;         /* metav1.Time: RFC 3339, checked on load */
	const char *deletion_timestamp;
	struct model_kv *labels;
	size_t n_labels;
	struct model_kv *annotations;
	size_t n_annotations;
	struct model_owner_ref *owner_refs;
	size_t n_owner_refs;
};

/* A name -> quantity map: Pod resources (cpu, memory, nvidia.com/gpu),
 * Node capacity, NodePool limits, consumed capacity, capacity requests. */
struct model_quantity_entry {
	const char *name;
	struct quantity value;
};

struct model_resource_list {
	struct model_quantity_entry *items;
	size_t n_items;
};

/* Node selector operators (core/v1 NodeSelectorOperator). Label selectors
 * (matchExpressions of a LabelSelector) use the first four. */
enum model_selector_op {
	MODEL_OP_IN,
	MODEL_OP_NOT_IN,
	MODEL_OP_EXISTS,
	MODEL_OP_DOES_NOT_EXIST,
	MODEL_OP_GT,
	MODEL_OP_LT,
	MODEL_OP_INVALID,               /* operator_text says what was written */
};

/* NodeSelectorRequirement; with min_values it is also Karpenter's
 * NodeSelectorRequirementWithMinValues (NodePool/NodeClaim requirements). */
struct model_requirement {
	const char *key;
	const char *operator_text;      /* as written, e.g. "In" */
	enum model_selector_op op;
	const char **values;
	size_t n_values;
	bool has_min_values;
	int64_t min_values;
};

struct model_node_selector_term {
	struct model_requirement *match_expressions;
	size_t n_match_expressions;
	struct model_requirement *match_fields;   /* key metadata.name only */
	size_t n_match_fields;
};

/* core/v1 NodeSelector: the terms are ORed, requirements in a term ANDed.
 * Used by ResourceSlices, devices, allocation results and pod affinity. */
struct model_node_selector {
	struct model_node_selector_term *terms;
	size_t n_terms;
};

/* metav1.LabelSelector (workload selectors). */
struct model_label_selector {
	struct model_kv *match_labels;
	size_t n_match_labels;
	struct model_requirement *match_expressions;
	size_t n_match_expressions;
};

/* core/v1 Taint (Nodes, NodePools, NodeClaims) and resource/v1 DeviceTaint
 * (effects None, NoSchedule, NoExecute; core taints add PreferNoSchedule). */
struct model_taint {
	const char *key;
	const char *value;
	const char *effect;
	const char *time_added;         /* RFC 3339 text (checked on load), NULL when absent */
};

/* core/v1 Toleration and resource/v1 DeviceToleration. */
struct model_toleration {
	const char *key;
	const char *operator_text;      /* defaulted to "Equal" */
	const char *value;
	const char *effect;             /* NULL or "" = every effect */
	bool has_toleration_seconds;
	int64_t toleration_seconds;
};

/* ------------------------------------------------------------------ */
/* resource.k8s.io/v1                                                  */
/* ------------------------------------------------------------------ */

/* A CEL selector ({cel: {expression: ...}}). The expression may contain
 * NUL bytes in hostile input, hence the length. */
struct model_selector {
	const char *expression;         /* NULL when the selector has no cel */
	size_t expression_len;
};

/* Opaque configuration ({opaque: {driver, parameters}}), with the
 * requests it applies to (claims only; empty = all). */
struct model_device_config {
	const char **requests;
	size_t n_requests;
	bool has_opaque;
	const char *driver;
	/* The parameters object as written, deep-copied into the set's arena;
	 * NULL when absent. */
	const struct doc_node *parameters;
	/* Allocation results only: "FromClass" or "FromClaim". */
	const char *source;
};

struct model_device_class_spec {
	struct model_selector *selectors;
	size_t n_selectors;
	struct model_device_config *config;
	size_t n_config;
	const char *extended_resource_name;
};

/* A scalar attribute value, or one item of a list. */
union model_attr_scalar {
	int64_t i;
	bool b;
	struct { const char *s; size_t len; } str;  /* string and version text */
};

/* One value of an attribute: the scalar itself, or one item of a list. */
struct model_attr_value {
	union model_attr_scalar v;
	/* For versions: the parsed value (semver_parse, strict) and whether it
	 * parsed; validation reports the ones that did not. */
	struct semver version;
	bool version_ok;
};

/* A device attribute. `name` is the key as written ("model" or
 * "resource.kubernetes.io/pcieRoot"); domain and id are the key split at
 * its first '/', the slice's driver being the domain of a bare name.
 * Scalars (int, bool, string, version) keep their value in the fields of
 * struct model_attr_value below; the list kinds (ints, bools, strings,
 * versions: cel_attr_is_list) in items, n_items of them (0 when the list
 * was empty, which validation refuses; items NULL when the value was no
 * list at all, which the decoder reported). */
struct model_attribute {
	const char *name;
	const char *domain;
	const char *id;
	enum cel_attr_kind type;
	union model_attr_scalar v;
	struct semver version;
	bool version_ok;
	struct model_attr_value *items;
	size_t n_items;
	/* The list as CEL values, for the device view (model_device_cel_init). */
	const struct cel_list *cel_list;
};

/* An attribute's values as sets see them (matchAttribute and
 * distinctAttribute, the values-per-device limit): a scalar is one value, a
 * list its items. Value i of them: int and bool in i, string and version
 * text in s/len. */
struct model_attr_item {
	int64_t i;              /* int; bool as 0/1 */
	const char *s;          /* string, version ("" when absent) */
	size_t len;
};
size_t model_attr_n_values(const struct model_attribute *a);
struct model_attr_item model_attr_item_at(const struct model_attribute *a, size_t i);
/* The element kind of a list kind (CEL_ATTR_INTS -> CEL_ATTR_INT); a
 * scalar kind itself. */
enum cel_attr_kind model_attr_elem_kind(enum cel_attr_kind k);

/* requestPolicy of a consumable capacity. */
struct model_request_policy {
	bool has_default;
	struct quantity def;
	struct quantity *valid_values;
	size_t n_valid_values;
	bool has_valid_range;
	bool has_min, has_max, has_step;
	struct quantity min, max, step;
};

struct model_capacity {
	const char *name;               /* key as written; domain/id as for attributes */
	const char *domain;
	const char *id;
	struct quantity value;
	bool has_request_policy;
	struct model_request_policy request_policy;
};

struct model_counter {
	const char *name;
	struct quantity value;
};

/* A slice's sharedCounters entry (name = the counter set's name), or a
 * device's consumesCounters entry (name = the counterSet it draws on). */
struct model_counter_set {
	const char *name;
	struct model_counter *counters;
	size_t n_counters;
};

struct model_device {
	const char *name;
	struct model_attribute *attributes;
	size_t n_attributes;
	struct model_capacity *capacity;
	size_t n_capacity;
	struct model_counter_set *consumes_counters;
	size_t n_consumes_counters;
	/* Per-device node selection (only with spec.perDeviceNodeSelection). */
	const char *node_name;
	struct model_node_selector *node_selector;   /* NULL when absent */
	bool has_all_nodes, all_nodes;
	struct model_taint *taints;
	size_t n_taints;
	bool has_binds_to_node, binds_to_node;
	const char **binding_conditions;
	size_t n_binding_conditions;
	const char **binding_failure_conditions;
	size_t n_binding_failure_conditions;
	bool has_allow_multiple_allocations, allow_multiple_allocations;
	/* The device as CEL sees it, built by the loader (model_device_cel_init
	 * for devices built in code); its arrays live in the set's arena and
	 * its driver is the slice's. */
	struct cel_device cel;
};

struct model_pool {
	const char *name;
	int64_t generation;
	int64_t resource_slice_count;
};

struct model_resource_slice_spec {
	const char *driver;
	struct model_pool pool;
	const char *node_name;
	struct model_node_selector *node_selector;   /* NULL when absent */
	bool has_all_nodes, all_nodes;
	bool has_per_device_node_selection, per_device_node_selection;
	struct model_device *devices;
	size_t n_devices;
	struct model_counter_set *shared_counters;
	size_t n_shared_counters;
};

enum model_allocation_mode {
	MODEL_ALLOC_EXACT_COUNT,
	MODEL_ALLOC_ALL,
	MODEL_ALLOC_INVALID,            /* allocation_mode_text says what */
};

/* The part of a request that ExactDeviceRequest and DeviceSubRequest share
 * (admin_access is only allowed on `exactly`). */
struct model_exact_request {
	const char *device_class_name;
	struct model_selector *selectors;
	size_t n_selectors;
	const char *allocation_mode_text;   /* defaulted to "ExactCount" */
	enum model_allocation_mode allocation_mode;
	bool has_count;                     /* defaulted for ExactCount */
	int64_t count;
	bool has_admin_access, admin_access;
	struct model_toleration *tolerations;
	size_t n_tolerations;
	/* capacity.requests: name -> quantity. */
	struct model_resource_list capacity_requests;
};

struct model_subrequest {
	const char *name;
	struct model_exact_request req;
};

struct model_device_request {
	const char *name;
	struct model_exact_request *exactly;        /* NULL when absent */
	struct model_subrequest *first_available;
	size_t n_first_available;
};

struct model_constraint {
	const char **requests;
	size_t n_requests;
	const char *match_attribute;        /* NULL when absent */
	const char *distinct_attribute;     /* NULL when absent */
};

struct model_claim_spec {
	struct model_device_request *requests;
	size_t n_requests;
	struct model_constraint *constraints;
	size_t n_constraints;
	struct model_device_config *config;
	size_t n_config;
};

struct model_allocation_result {
	const char *request;                /* "req" or "req/subreq" */
	const char *driver;
	const char *pool;
	const char *device;
	bool has_admin_access, admin_access;
	struct model_toleration *tolerations;
	size_t n_tolerations;
	const char **binding_conditions;
	size_t n_binding_conditions;
	const char **binding_failure_conditions;
	size_t n_binding_failure_conditions;
	const char *share_id;
	struct model_resource_list consumed_capacity;
};

struct model_allocation {
	struct model_allocation_result *results;
	size_t n_results;
	struct model_device_config *config;     /* with source set */
	size_t n_config;
	struct model_node_selector *node_selector;  /* NULL = every node */
	const char *allocation_timestamp;
};

struct model_consumer_ref {
	const char *api_group, *resource, *name, *uid;
};

struct model_claim_status {
	struct model_allocation *allocation;     /* NULL when not allocated */
	struct model_consumer_ref *reserved_for;
	size_t n_reserved_for;
};

struct model_resource_claim {
	struct model_claim_spec spec;
	struct model_claim_status status;
};

struct model_resource_claim_template {
	/* spec.metadata: labels and annotations given to generated claims. */
	struct model_meta claim_meta;
	struct model_claim_spec spec;           /* spec.spec */
};

/* DeviceTaintSelector: every field that is set must equal the device's
 * (driver = slice.spec.driver, pool = slice.spec.pool.name, device =
 * the device's name); an empty selector selects every device. */
struct model_device_taint_selector {
	const char *driver;
	const char *pool;
	const char *device;
	/* deviceClassName and selectors were fields of the alpha API until
	 * 1.35, which removed them; kept as "was written" so that validation
	 * refuses them rather than silently selecting more devices. */
	bool has_device_class_name, has_selectors;
};

/* metav1.Condition (DeviceTaintRule status). */
struct model_condition {
	const char *type;
	const char *status;             /* "True", "False", "Unknown" */
	bool has_observed_generation;
	int64_t observed_generation;
	const char *last_transition_time;       /* RFC 3339 text */
	const char *reason;
	const char *message;
};

/* DeviceTaintRule: one taint added to every device the selector selects,
 * as if the slice had it. */
struct model_device_taint_rule {
	struct model_device_taint_selector *device_selector;   /* NULL: selects no device */
	struct model_taint taint;
	struct model_condition *conditions;     /* status.conditions */
	size_t n_conditions;
};

/* ------------------------------------------------------------------ */
/* core/v1, apps/v1, batch/v1                                          */
/* ------------------------------------------------------------------ */

struct model_container_claim {
	const char *name;
	const char *request;                    /* NULL = every request */
};

struct model_container {
	const char *name;
	const char *image;
	/* "Always" on an init container: a sidecar (native sidecars, GA in
	 * 1.33), which runs beside the containers and counts with them. */
	const char *restart_policy;
	struct model_resource_list requests;
	struct model_resource_list limits;
	struct model_container_claim *claims;
	size_t n_claims;
};

/* pod.spec.resourceClaims[]: exactly one source is set. */
struct model_pod_claim {
	const char *name;
	const char *resource_claim_name;
	const char *resource_claim_template_name;
};

struct model_pod_claim_status {
	const char *name;
	const char *resource_claim_name;        /* NULL: no claim needed */
};

struct model_pod_spec {
	const char *node_name;
	struct model_kv *node_selector;
	size_t n_node_selector;
	/* affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution */
	struct model_node_selector *required_node_affinity;   /* NULL when absent */
	struct model_toleration *tolerations;
	size_t n_tolerations;
	struct model_pod_claim *resource_claims;
	size_t n_resource_claims;
	struct model_container *containers;
	size_t n_containers;
	struct model_container *init_containers;
	size_t n_init_containers;
	struct model_resource_list overhead;
	/* spec.resources (PodLevelResources, beta and on by default since
	 * 1.34): the pod's cpu, memory and hugepages as a whole, which the
	 * scheduler then counts instead of its containers' sum. */
	struct model_resource_list pod_requests, pod_limits;
	bool has_priority;
	int64_t priority;
	const char *priority_class_name;
	const char *scheduler_name;
	const char *restart_policy;     /* defaulted to "Always" */
	/* spec.schedulingGroup.podGroupName (GenericWorkload, 1.36+): the
	 * PodGroup whose matching claims the pod shares. */
	const char *pod_group_name;
	/* spec.schedulingGates: while any is there, kube-scheduler does not
	 * place the pod (a queue such as Kueue admits it later). */
	size_t n_scheduling_gates;
};

struct model_pod_status {
	const char *phase;
	struct model_pod_claim_status *resource_claim_statuses;
	size_t n_resource_claim_statuses;
};

struct model_pod {
	struct model_pod_spec spec;
	struct model_pod_status status;
};

/* scheduling.k8s.io PodGroup (GenericWorkload; DRAWorkloadResourceClaims:
 * alpha in 1.36 as v1alpha2, beta in 1.37 as v1beta1): pods naming it in
 * spec.schedulingGroup share the claims of spec.resourceClaims that their
 * own spec.resourceClaims match field for field. */
struct model_pod_group {
	/* spec.schedulingPolicy: exactly one of basic ({}) and gang. */
	bool basic, gang;
	bool has_min_count;
	int64_t min_count;              /* gang.minCount */
	struct model_pod_claim *resource_claims;    /* the pod's claim struct */
	size_t n_resource_claims;
	/* status.resourceClaimStatuses: the claims made from templates. */
	struct model_pod_claim_status *resource_claim_statuses;
	size_t n_resource_claim_statuses;
};

/* A workload's spec.template. */
struct model_pod_template {
	struct model_meta meta;                 /* name/namespace usually absent */
	struct model_pod_spec spec;
};

/* Deployment, ReplicaSet, StatefulSet and Job share one shape: what the
 * planner needs is how many pods of which template. */
struct model_workload {
	bool has_replicas;                      /* apps/v1: defaulted to 1 */
	int64_t replicas;
	bool has_parallelism;                   /* Job: defaulted to 1 */
	int64_t parallelism;
	bool has_completions;                   /* Job: 1 when both were unset */
	int64_t completions;
	struct model_label_selector *selector;  /* NULL when absent */
	struct model_pod_template template_;
};

struct model_node {
	const char *provider_id;
	struct model_taint *taints;
	size_t n_taints;
	bool unschedulable;
	struct model_resource_list capacity;        /* status.capacity */
	struct model_resource_list allocatable;     /* status.allocatable */
};

/* ------------------------------------------------------------------ */
/* Karpenter                                                           */
/* ------------------------------------------------------------------ */

struct model_node_class_ref {
	const char *group, *kind, *name;
};

/* A NodePool's spec.disruption.budgets[] item, as written (NULL absent). */
struct model_disruption_budget {
	const char *nodes;                      /* "10%" or "5"; the CRD defaults "10%" */
	const char *schedule;                   /* cron, "@daily" */
	const char *duration;                   /* "1h30m" */
	const char **reasons;                   /* Underutilized, Empty, Drifted */
	size_t n_reasons;
};

struct model_node_pool {
	/* spec.template.metadata */
	struct model_kv *template_labels;
	size_t n_template_labels;
	struct model_kv *template_annotations;
	size_t n_template_annotations;
	/* spec.template.spec */
	struct model_node_class_ref node_class_ref;
	struct model_requirement *requirements;
	size_t n_requirements;
	struct model_taint *taints;
	size_t n_taints;
	struct model_taint *startup_taints;
	size_t n_startup_taints;
	const char *expire_after;               /* kept for output, not used */
	const char *termination_grace_period;
	/* spec.disruption, kept for output and checked against the CRD */
	bool has_disruption;
	const char *consolidation_policy;       /* as written, NULL absent */
	const char *consolidate_after;
	struct model_disruption_budget *budgets;
	size_t n_budgets;
	/* spec */
	struct model_resource_list limits;
	bool has_weight;
	int64_t weight;
};

struct model_node_claim {
	struct model_node_class_ref node_class_ref;
	struct model_requirement *requirements;
	size_t n_requirements;
	struct model_taint *taints;
	size_t n_taints;
	struct model_taint *startup_taints;
	size_t n_startup_taints;
	struct model_resource_list resource_requests;   /* spec.resources.requests */
	/* status (read, never needed for output) */
	const char *node_name;
	const char *status_provider_id;
};

/* One selector term of an EC2NodeClass (subnet, security group or AMI):
 * the CRD's rules ask which fields are present (CEL has()), so presence is
 * kept apart from emptiness: NULL is absent, "" was written empty. */
struct model_ec2_term {
	bool has_tags;                          /* tags: {} counts as present */
	struct model_kv *tags;
	size_t n_tags;
	const char *id, *name;
	const char *alias, *owner, *ssm_parameter;      /* AMI terms only */
};

struct model_ec2_terms {
	bool present;                           /* the list was written, [] included */
	struct model_ec2_term *items;
	size_t n;
};

/* blockDeviceMappings[]: what the CRD constrains. */
struct model_ec2_block_device {
	bool has_ebs;
	const char *volume_size;                /* as written ("100Gi"), NULL absent */
	const char *volume_type;
	const char *snapshot_id;
	bool root_volume;
};

struct model_ec2_node_class {
	/* spec as written, kept loosely (deep copy in the set's arena): the
	 * encoder writes it back, the planner reads kubelet from it. */
	const struct doc_node *spec;
	/* The fields the CRD's schema and rules check, read from it. */
	const char *role;                       /* spec.role, NULL absent */
	const char *instance_profile;
	const char *ami_family;
	struct model_ec2_terms subnet_terms, security_group_terms, ami_terms;
	struct model_kv *tags;                  /* spec.tags */
	size_t n_tags;
	bool has_metadata_options;
	const char *http_endpoint, *http_protocol_ipv6, *http_tokens;
	bool has_hop_limit;
	int64_t hop_limit;                      /* httpPutResponseHopLimit */
	struct model_ec2_block_device *block_devices;
	size_t n_block_devices;
	/* spec.kubelet: the bounds the CRD puts on numbers */
	bool has_max_pods, has_pods_per_core, has_gc_high, has_gc_low;
	int64_t max_pods, pods_per_core, gc_high, gc_low;
};

/* karpenter.sh/v1alpha1 NodeOverlay: what Karpenter's scheduling
 * simulation assumes of the instance types its requirements select, in
 * place of the cloud's data: their price, and extended resources their
 * nodes will have. Overlays of higher weight take precedence. */
struct model_node_overlay {
	bool has_spec;                          /* spec is required */
	struct model_requirement *requirements; /* matched against a type's labels */
	size_t n_requirements;
	bool has_requirements;                  /* required; [] selects every type */
	const char *price;                      /* spec.price as written ("5.00"), NULL absent */
	const char *price_adjustment;           /* spec.priceAdjustment ("+10%", "-0.5") */
	struct model_resource_list capacity;    /* spec.capacity: extended resources added */
	bool has_weight;
	int64_t weight;                         /* 1..10000; absent counts as 0 */
};

/* The NodeOverlay CRD's formats. spec.price: an unsigned decimal ("5",
 * "0.25"). spec.priceAdjustment: a signed amount ("+1.5", "-0.5") or a
 * signed percentage ("+10%", "-15%", at most "-100%"), *percent then.
 * 0, or -EINVAL when s does not match the CRD's pattern. */
int model_overlay_parse_price(const char *s, double *price);
int model_overlay_parse_adjustment(const char *s, double *amount, bool *percent);

/* ------------------------------------------------------------------ */
/* Objects and sets                                                    */
/* ------------------------------------------------------------------ */

/* Where an object was read. */
struct model_source {
	const char *file;                       /* NULL for objects built in code */
	int document;                           /* 1-based document of the stream */
	int item;                               /* 0-based index in a kind: List; -1 otherwise */
	/* The item's place in nested Lists, "1.0" for items[1].items[0]
	 * (0-based, outermost first); NULL when not in a List. */
	const char *item_path;
	int line;                               /* line of the object's start, 0 unknown */
};

struct model_object {
	enum model_kind kind;
	size_t index;                           /* position in its set's objects[] */
	struct model_source src;
	struct model_meta meta;
	union {
		struct model_device_class_spec device_class;
		struct model_resource_slice_spec slice;
		struct model_resource_claim claim;
		struct model_resource_claim_template claim_template;
		struct model_device_taint_rule taint_rule;
		struct model_pod pod;
		struct model_node node;
		struct model_workload workload;     /* Deployment, ReplicaSet, StatefulSet, Job */
		struct model_node_pool node_pool;
		struct model_node_claim node_claim;
		struct model_ec2_node_class ec2_node_class;
		struct model_node_overlay node_overlay;
		struct model_pod_group pod_group;
	} u;
};

struct model_arena;

struct model_set {
	/* Every object, in load order (files in the order given, documents
	 * in order, List items in order). The array is the set's. */
	struct model_object **objects;
	size_t n_objects, cap_objects;
	/* Notices that are not errors, e.g. "FILE: document 3: skipping
	 * unknown kind example.com/v1 Widget". */
	struct dt_diags warnings;
	struct model_arena *arena;              /* owns everything the objects point to */
	/* Set while decoding what an API server sent (kube/): a field dratopo
	 * does not know is then a newer API's, a warning, not the strict
	 * decoding error it is in a manifest. */
	bool server_objects;
};

struct model_set *model_set_new(void);
void model_set_free(struct model_set *s);

/* ---- Loading ----
 *
 * Each document (and each item of a `kind: List`, nested Lists included)
 * becomes one object; defaults are applied. Problems that make a field
 * unreadable (wrong type, unparsable quantity, syntax errors) are added to
 * errs as "FILE: document N (KIND NS/NAME): FIELD.PATH: message"; the rest
 * of the object is still decoded, so that later errors are reported too.
 * Objects with decode errors are still added to the set.
 * Unknown kinds and empty documents go to s->warnings (empty: not at all).
 * Returns 0, or a negative code for an unreadable file / out of memory
 * (then err says why and errs holds the file's message too). errs and err
 * may be NULL when the caller does not want the messages.
 *
 * model_set_load_file reads a file, "-" (standard input) or a directory:
 * a directory's *.yaml, *.yml and *.json files (not hidden ones, not
 * recursively) in name order, as `kubectl apply -f DIR` does; a directory
 * without any is an error. One unreadable file of a directory is reported
 * and the others are still read (the first error code is returned). */
int model_set_load_file(struct model_set *s, const char *path,
			struct dt_diags *errs, struct dt_err *err);
int model_set_load_buffer(struct model_set *s, const char *buf, size_t len,
			  const char *filename, struct dt_diags *errs, struct dt_err *err);
/* Sort messages of the form "FILE: document N[, item M] (...): ..." (the
 * loader's and the validator's) by the position of FILE in files (a
 * directory given there covers its files, in name order), then document
 * and item; the sort is stable, and messages naming no given file go last.
 * On out of memory they stay as they were (unsorted is still correct). */
void model_diags_sort(struct dt_diags *errs, const char *const *files, size_t n_files);
/* Decode an already parsed stream; the set copies what it keeps, so the
 * stream may be freed afterwards. */
int model_set_add_stream(struct model_set *s, const struct doc_stream *st,
			 struct dt_diags *errs, struct dt_err *err);

/* ---- Looking objects up ---- */

/* Number of objects of a kind. */
size_t model_set_count(const struct model_set *s, enum model_kind k);
/* The object of kind k named ns/name (ns ignored for cluster-scoped kinds;
 * NULL ns = "default"), or NULL. The first one loaded wins. Constant time:
 * an index is built on first use and again after objects were added, so
 * set an object's name and namespace before looking objects up. */
struct model_object *model_set_find(const struct model_set *s, enum model_kind k,
				    const char *ns, const char *name);
/* Iterate over the objects of one kind, in load order: pass NULL to start.
 *   for (o = NULL; (o = model_set_next(s, MODEL_POD, o)); ) ... */
struct model_object *model_set_next(const struct model_set *s, enum model_kind k,
				    const struct model_object *prev);

/* ---- Building objects in code (hwdb, the planner, the allocator) ----
 *
 * Memory comes from the set's arena (zeroed, aligned for any member,
 * including struct quantity) and lives until model_set_free. NULL on OOM. */
void *model_set_alloc(struct model_set *s, size_t size);
/* n zeroed elements of size each; NULL on OOM or overflow (or when n is 0). */
void *model_set_calloc(struct model_set *s, size_t n, size_t size);
char *model_set_strdup(struct model_set *s, const char *str);
char *model_set_strndup(struct model_set *s, const char *str, size_t len);
/* A new zeroed object of kind k appended to the set (src.file NULL). */
struct model_object *model_set_add(struct model_set *s, enum model_kind k);
/* Apply the API server's defaults to an object built in code (the loader
 * already does this). Idempotent. Returns 0 or -ENOMEM. */
int model_object_default(struct model_set *s, struct model_object *o);
/* (Re)build d->cel and split attribute/capacity names for a device of a
 * slice with the given driver. 0 or -ENOMEM. */
int model_device_cel_init(struct model_set *s, const char *driver, struct model_device *d);

/* ---- Names ---- */

/* Split a qualified name at its first '/'; a bare name gets default_domain.
 * domain and id point into arena memory of s. 0 or -ENOMEM. */
int model_split_qualified(struct model_set *s, const char *name, const char *default_domain,
			  const char **domain, const char **id);
/* "KIND NS/NAME" or "KIND NAME" (cluster-scoped) into buf. */
void model_object_describe(const struct model_object *o, char *buf, size_t size);
/* Where in its file an object was read: "document N", or "document N,
 * item 1.0" for items of (nested) Lists. */
void model_source_document(const struct model_source *src, char *buf, size_t size);
/* "FILE: document N (KIND NS/NAME): " for an object; "document N, item M"
 * for List items; objects built in code get "KIND NS/NAME: ". Checks
 * outside the model (the planner's) word their messages with it. */
void model_object_prefix(const struct model_object *o, char *buf, size_t size);

/* ---- Validation ---- */

/* Compiles one CEL selector for validation. Return 0 when it compiles;
 * otherwise a negative code with msg filled as the API server words it
 * (the compile error with position and caret, or the cost-limit message).
 * The validator checks the 10 KiB length itself before calling. */
typedef int (*model_cel_check_fn)(const char *expr, size_t len, char *msg, size_t msgsz,
				  void *ctx);

struct model_validate_opts {
	model_cel_check_fn check_cel;           /* NULL: CEL is not compiled */
	void *cel_ctx;
};

/* Validate every object of the set with the API server's rules; each
 * problem is added to errs as "FILE: document N (KIND NS/NAME): FIELD.PATH:
 * message". Returns the number of problems found (>= 0), or -ENOMEM.
 * errs may be NULL to count problems only. */
int model_validate_set(const struct model_set *s, const struct model_validate_opts *opts,
		       struct dt_diags *errs);
/* Objects defined twice: a second object of the same kind, namespace and
 * name (in any file) is an error on its metadata.name naming the first:
 * `...: metadata.name: Duplicate value: "x": also defined in FILE document N`.
 * model_validate_set checks this first. Returns the number of duplicates
 * (>= 0) or -ENOMEM. */
int model_set_check_duplicates(const struct model_set *s, struct dt_diags *errs);
/* One object; same messages. */
int model_validate_object(const struct model_object *o, const struct model_validate_opts *opts,
			  struct dt_diags *errs);

/* ---- Writing objects out ----
 *
 * The object as kubectl prints it: apiVersion, kind, metadata, spec,
 * status, defaults included, quantities canonical, empty optional fields
 * left out. The tree lives in arena a (the caller's). NULL on OOM. */
struct doc_node *model_encode(const struct model_object *o, struct doc_arena *a);
/* Append the object to out as YAML or JSON (kubectl's 4-space indent). In
 * YAML, a document separator "---\n" is written first when out is not
 * empty. 0 or -ENOMEM. */
int model_emit(const struct model_object *o, enum doc_format fmt, struct strbuf *out);
/* Whether two objects say the same thing (compares the encoded forms). */
bool model_object_equal(const struct model_object *a, const struct model_object *b);

#endif
