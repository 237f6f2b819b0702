/* model_internal.h - what the model's own files share and nobody else uses:
 * field paths for messages, the value printing of field.Error. (The name
 * checks of the API machinery are common/names, names.h.) */
#ifndef DT_MODEL_INTERNAL_H
#define DT_MODEL_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "array.h"
#include "model.h"
#include "names.h"

/* A field path as the API server prints it: "spec.devices.requests[0].name",
 * map keys as "[key]". Kept as segments and printed only when a message
 * needs it. Bounded: a path that would not fit is cut, with "..." at the
 * end, which only happens on hostile nesting. */
#define MODEL_PATH_MAX 512
#define MODEL_PATH_SEGS 256

struct model_path_seg {
	const char *text;       /* field name or map key (borrowed for the push's life) */
	size_t index;           /* 'i': the index; 'c': the key's longest printed length */
	char kind;              /* 'f' field, 'i' index, 'k' key, 'c' key cut */
};

struct model_path {
	struct model_path_seg seg[MODEL_PATH_SEGS];
	size_t len;             /* segments pushed; 0: the empty path */
	char buf[MODEL_PATH_MAX]; /* model_path_str's text */
};

/* Each push returns a mark; pass it to model_path_pop. A key's or a
 * field's text is borrowed until then. */
size_t model_path_field(struct model_path *p, const char *name);
size_t model_path_index(struct model_path *p, size_t i);
size_t model_path_key(struct model_path *p, const char *key);
/* A key printed cut in the middle past max bytes (at least 16, below 128),
 * as the API server's truncateIfTooLong does. */
size_t model_path_key_cut(struct model_path *p, const char *key, size_t max);
void model_path_pop(struct model_path *p, size_t mark);
/* The path as text (in p->buf, until the next model_path_str): map keys
 * as field.Path writes them, "attributes[m]"; model_path_json writes them
 * as the JSON decoder does in strict decoding errors, "attributes.m". */
const char *model_path_str(struct model_path *p);
const char *model_path_json(struct model_path *p);

/* ---- What the API serves (served-kinds.txt, model_kinds.c) ---- */

/* One version of a group and its kinds (space-separated). */
struct model_served {
	const char *group;              /* "" for the core group */
	const char *version;
	const char *kinds;
};

extern const struct model_served model_served_table[];
extern const size_t model_n_served;

/* Whether api_version's group is one dratopo reads (it is in the table):
 * its unknown kinds and versions are errors, other groups' warnings. */
bool model_group_read(const char *api_version);
/* Whether the API serves kind at api_version. */
bool model_kind_served(const char *api_version, const char *kind);
/* kubectl's `no matches for kind "K" in version "G/V"`, followed by what
 * the group serves: the versions that serve K, or the kinds of G/V (or of
 * every version of G) and the closest kind. */
struct strbuf;
void model_kind_no_match(const char *api_version, const char *kind, struct strbuf *sb);

/* Arena for deep copies of free-form trees (created on first use). */
struct doc_arena *model_set_doc_arena(struct model_set *s);

/* Name o, which has metadata.generateName and no name, as the API server
 * does before it validates a create: the prefix cut to 58 bytes and five
 * characters of its alphabet (names_suffix), unique among the set's
 * objects of o's kind and namespace. The characters come from a hash of
 * kind, namespace, prefix and how many names the prefix was given before,
 * so a run is reproducible. 0 or -ENOMEM. */
int model_set_generate_name(struct model_set *s, struct model_object *o);

/* ---- Name lookups over arrays of structs, in O(log n) ----
 * Lists the API does not bound (pod claims, resource maps, labels) are
 * searched through a sorted index so that hostile sizes stay fast. */
struct model_name_ref {
	const char *name;
	size_t idx;
};

struct model_name_index {
	struct model_name_ref *refs;    /* sorted by name, then idx; malloc'd */
	size_t n;
};

/* Index the n items of an array (base, stride) by the string pointer at
 * name_offset in each; NULL names are left out. 0 or -ENOMEM. */
int model_name_index_build(struct model_name_index *ix, const void *base, size_t n,
			   size_t stride, size_t name_offset);
/* Index of the first item named name, or SIZE_MAX. */
size_t model_name_index_find(const struct model_name_index *ix, const char *name);
void model_name_index_free(struct model_name_index *ix);

/* Append a value the way field.Error prints it: strings quoted as Go's %q
 * does (escapes, cut after 256 bytes of input), numbers plain. */
struct strbuf;
void model_quote(struct strbuf *sb, const char *s, size_t len);

/* ---- Validation (model_validate*.c) ----
 * One walk over one object: the path of the field being looked at, the
 * object's message prefix, and the count of problems reported. */

/* Limits of resource.k8s.io/v1 (pkg/apis/resource/types.go). */
#define MAX_REQUESTS            32      /* DeviceRequestsMaxSize */
#define MAX_SUBREQUESTS         8       /* FirstAvailableDeviceRequestMaxSize */
#define MAX_SELECTORS           32      /* DeviceSelectorsMaxSize */
#define MAX_CONSTRAINTS         32      /* DeviceConstraintsMaxSize */
#define MAX_CONFIG              32      /* DeviceConfigMaxSize */
#define MAX_TOLERATIONS         16      /* DeviceTolerationsMaxLength */
#define MAX_RESULTS             32      /* AllocationResultsMaxSize */
#define MAX_RESERVED_FOR        256     /* ResourceClaimReservedForMaxSize */
#define MAX_DEVICES             128     /* ResourceSliceMaxDevices */
#define MAX_DEVICES_ADVANCED    64      /* ...WithAdvancedFeatures: taints, counters, list attributes */
#define MAX_ATTRS_AND_CAPS      32      /* ResourceSliceMaxAttributesAndCapacitiesPerDevice */
#define MAX_ATTR_VALUE_LEN      64      /* DeviceAttributeMaxValueLength */
#define MAX_ATTR_VALUES         48      /* ResourceSliceMaxAttributeValuesPerDevice (list items count one each) */
#define MAX_DEVICE_TAINTS       16      /* DeviceTaintsMaxLength */
#define MAX_RULE_CONDITIONS     8       /* DeviceTaintRuleStatusMaxConditions */
#define MAX_COUNTER_SETS        8       /* ResourceSliceMaxCounterSets */
#define MAX_COUNTERS_PER_SET    32      /* ResourceSliceMaxCountersPerCounterSet */
#define MAX_CONSUMPTIONS        2       /* ResourceSliceMaxDeviceCounterConsumptionsPerDevice */
#define MAX_COUNTERS_PER_CONS   32      /* ResourceSliceMaxCountersPerDeviceCounterConsumption */
#define MAX_BINDING_CONDITIONS  4       /* BindingConditionsMaxSize */
#define MAX_VALID_VALUES        10      /* CapacityRequestPolicyDiscreteMaxOptions */
#define MAX_DRIVER_LEN          63      /* DriverNameMaxLength */
#define MAX_POOL_NAME_LEN       253     /* PoolNameMaxLength */
#define MAX_DOMAIN_LEN          63      /* DeviceMaxDomainLength */
#define MAX_ID_LEN              32      /* DeviceMaxIDLength */
#define MAX_CEL_LEN             (10 * 1024)     /* CELSelectorExpressionMaxLength */
#define MAX_OPAQUE_LEN          (10 * 1024)     /* OpaqueParametersMaxLength */
#define MAX_ANNOTATIONS_SIZE    (256 * 1024)    /* TotalAnnotationSizeLimitB */
#define ATTR_KEY_MAX (MAX_DOMAIN_LEN + 1 + MAX_ID_LEN)  /* attributeAndCapacityMaxKeyLength */
#define LABEL_KEY_MAX 63                                 /* DNS1123LabelMaxLength */

struct dt_diags;
struct quantity;

struct model_val {
	const struct model_object *o;
	const struct model_validate_opts *opts;
	struct dt_diags *errs;
	struct model_path path;
	char prefix[1024];              /* o's prefix, "" until its first problem */
	int n;
	bool oom;
};

/* Path helpers: push, run, pop. */
#define P_FIELD(v, name) model_path_field(&(v)->path, (name))
#define P_INDEX(v, i)    model_path_index(&(v)->path, (i))
#define P_KEY(v, k)      model_path_key(&(v)->path, (k))
#define P_POP(v, m)      model_path_pop(&(v)->path, (m))

/* Messages at the current path (model_validate_fields.c). Each counts one
 * problem; emit takes the body and frees it. supported: NULL-terminated. */
void model_val_emit(struct model_val *v, struct strbuf *body);
void model_val_detail(struct strbuf *sb, const char *detail);
void model_e_required(struct model_val *v, const char *detail);
void model_e_forbidden(struct model_val *v, const char *detail);
void model_e_invalid_str(struct model_val *v, const char *value, const char *detail);
/* A value printed as is: numbers, booleans, null, Go composite forms. */
void model_e_invalid_raw(struct model_val *v, const char *raw, const char *detail);
void model_e_invalid_int(struct model_val *v, int64_t value, const char *detail);
void model_e_too_long(struct model_val *v, int max);
void model_e_too_many(struct model_val *v, size_t n, int max);
void model_e_duplicate(struct model_val *v, const char *value);
void model_e_not_found(struct model_val *v, const char *value, const char *detail);
void model_e_not_supported(struct model_val *v, const char *value,
			   const char *const *supported);
/* A CRD pattern not matched: `Invalid value: "v": should match 'PATTERN'`. */
void model_e_pattern(struct model_val *v, const char *value, const char *pattern);
/* A CRD's CEL rule that failed: `Invalid value: "TYPE": message`, TYPE the
 * schema type of the value the rule is on ("object", "array", "string"). */
#define model_e_rule(v, type, msg) model_e_invalid_str((v), (type), (msg))
/* Push a map key, cut in the middle past max bytes (truncateIfTooLong). */
size_t model_p_key_cut(struct model_val *v, const char *key, size_t max);

bool model_str_eq(const char *a, const char *b);
bool model_empty(const char *s);
bool model_in_list(const char *s, const char *const *list);
/* The regex of validateDeviceAttributeVersionValue. */
bool model_semver_regex(const char *s, size_t len);

/* Names, metadata, node selectors, taints, tolerations. */
void model_v_dns_label(struct model_val *v, const char *s);
void model_v_dns_subdomain(struct model_val *v, const char *s);
void model_v_driver_name(struct model_val *v, const char *s);
void model_v_qualified_name(struct model_val *v, const char *name);
void model_v_fully_qualified_name(struct model_val *v, const char *name);
void model_v_label_name(struct model_val *v, const char *s);
void model_v_pool_name(struct model_val *v, const char *name);
void model_v_uid(struct model_val *v, const char *uid);
void model_v_labels(struct model_val *v, const struct model_kv *kv, size_t n);
void model_v_annotations(struct model_val *v, const struct model_kv *kv, size_t n);
void model_v_meta(struct model_val *v, const struct model_meta *m, bool namespaced);
void model_v_node_selector(struct model_val *v, const struct model_node_selector *ns);
/* The taint effects of devices and of nodes, NULL-terminated. */
extern const char *const model_device_effects[];
extern const char *const model_core_effects[];
/* One taint (validateDeviceTaint, or a core taint's checks). */
void model_v_taint(struct model_val *v, const struct model_taint *t, const char *const *effects);
/* max < 0: no limit on the list's length. */
void model_v_taints(struct model_val *v, const char *field, const struct model_taint *t, size_t n,
		    int max, const char *const *effects);
void model_v_device_toleration(struct model_val *v, const struct model_toleration *t);
void model_v_core_toleration(struct model_val *v, const struct model_toleration *t);

/* A quantity as the API prints it, into buf (QUANTITY_STR_MAX bytes). */
void model_q_str(const struct quantity *q, char *buf);

/* Each family's objects (model_validate_dra.c, _core.c, _karpenter.c). */
void model_v_device_class(struct model_val *v, const struct model_device_class_spec *c);
void model_v_slice(struct model_val *v, const struct model_resource_slice_spec *s);
void model_v_claim(struct model_val *v, const struct model_resource_claim *c);
void model_v_claim_template(struct model_val *v, const struct model_resource_claim_template *t);
void model_v_taint_rule(struct model_val *v, const struct model_device_taint_rule *r);
void model_v_pod_spec(struct model_val *v, const struct model_pod_spec *p);
void model_v_pod_group(struct model_val *v, const struct model_pod_group *g);
void model_v_resource_list(struct model_val *v, const char *field,
			   const struct model_resource_list *l);
void model_v_workload(struct model_val *v, const struct model_workload *w);
void model_v_node(struct model_val *v, const struct model_node *n);
void model_v_node_pool(struct model_val *v, const struct model_node_pool *p);
void model_v_node_claim(struct model_val *v, const struct model_node_claim *c);
void model_v_node_overlay(struct model_val *v, const struct model_node_overlay *o);
void model_v_ec2_node_class(struct model_val *v, const struct model_ec2_node_class *c);

/* ---- Decoding (model_decode*.c) ----
 * One pass over one document: where it is (file, document, List item,
 * field path) for messages, and whether its type is read field by field. */

/* Nesting of List inside List that we follow. */
#define LIST_MAX_DEPTH 8

struct doc_node;
struct model_kv;

struct model_dec {
	struct model_set *set;
	struct dt_diags *errs;
	const char *file;               /* in the set's arena */
	int document;
	int item;                       /* index in the outermost List, or -1 */
	char item_path[LIST_MAX_DEPTH * 12];    /* "1.0": the item in nested Lists */
	const struct model_object *obj; /* NULL while apiVersion/kind are read */
	bool v1beta1;                   /* the object is resource.k8s.io/v1beta1: convert */
	/* Inside a type that is read field by field (the DRA kinds' specs):
	 * the shared helpers (taints, tolerations, node selectors) warn about
	 * unknown fields there, and only there. */
	bool closed;
	struct model_path path;
	int oom;
	size_t n_errors;
};

/* Messages and arena copies (model_decode_fields.c). report: "PREFIX PATH:
 * msg", with the bad value shown; dalloc and dstrdup set d->oom on failure. */
void model_dec_report(struct model_dec *d, const struct doc_node *bad, const char *msg);
/* Warn about each key of map m in neither known nor extra (either may be
 * NULL, both NULL-terminated); closed_if only inside closed types. */
void model_closed_fields(struct model_dec *d, const struct doc_node *m, const char *const *known,
			 const char *const *extra);
void model_closed_if(struct model_dec *d, const struct doc_node *m, const char *const *known);
void *model_dalloc(struct model_dec *d, size_t n, size_t size);
const char *model_dstrdup(struct model_dec *d, const struct doc_node *n);

/* Allocate n elements for ptr; 0 elements leaves it NULL. */
#define DALLOC(d, ptr, n) ((ptr) = (n) ? model_dalloc((d), (n), sizeof(*(ptr))) : NULL)

/* Field getters: each takes the map holding the field and the field's
 * name, pushes the name onto the path for its messages and pops it again.
 * Absent and null fields leave the output alone (has = false). */
const struct doc_node *model_child(const struct doc_node *m, const char *key);
bool model_is_map(struct model_dec *d, const struct doc_node *n);
/* The map (list) under key, or NULL (absent, empty list, or reported). */
const struct doc_node *model_get_map(struct model_dec *d, const struct doc_node *m,
				     const char *key);
const struct doc_node *model_get_seq(struct model_dec *d, const struct doc_node *m,
				     const char *key);
const char *model_get_str(struct model_dec *d, const struct doc_node *m, const char *key);
/* A metav1.Time: a string that must be RFC 3339 as Go parses it (its
 * message when not, the text still returned). */
const char *model_get_time(struct model_dec *d, const struct doc_node *m, const char *key);
/* Integers: JSON numbers without fraction that fit the field's Go type. */
bool model_node_int(struct model_dec *d, const struct doc_node *n, int bits, int64_t *out);
void model_get_int(struct model_dec *d, const struct doc_node *m, const char *key, int bits,
		   bool *has, int64_t *out);
void model_get_bool(struct model_dec *d, const struct doc_node *m, const char *key,
		    bool *has, bool *out);
/* Quantities are written as strings or numbers ("80Gi", 4, 0.5). */
bool model_node_quantity(struct model_dec *d, const struct doc_node *n, struct quantity *out);
void model_get_quantity(struct model_dec *d, const struct doc_node *m, const char *key,
			bool *has, struct quantity *out);
void model_get_str_list(struct model_dec *d, const struct doc_node *m, const char *key,
			const char ***out, size_t *n_out);
void model_get_kv(struct model_dec *d, const struct doc_node *m, const char *key,
		  struct model_kv **out, size_t *n_out);
void model_get_resource_list(struct model_dec *d, const struct doc_node *m, const char *key,
			     struct model_resource_list *out);

/* Iterate over a list field: for each item that is a map, call fn with
 * the item's path pushed. Returns the number of slots (items) so that the
 * caller's array keeps the file's indexes. */
#define FOR_EACH_MAP(d, list_, i, item)                                            \
	for (size_t i = 0, i##_mark = 0; (list_) && i < (list_)->u.seq.n; i++)     \
		if ((i##_mark = model_path_index(&(d)->path, i)),                  \
		    (item = (list_)->u.seq.items[i]),                              \
		    (model_is_map((d), item) ? 1 : (model_path_pop(&(d)->path, i##_mark), 0)))

#define END_EACH(d, i) model_path_pop(&(d)->path, i##_mark)

/* The list of maps under key as a new array of elements of size bytes in
 * the set's arena (NULL when absent or empty): fn decodes each item into
 * its slot with the item's path pushed; items that are not maps are
 * reported and get no slot. *n_out is the number of slots filled. */
typedef void (*item_fn)(struct model_dec *d, const struct doc_node *item, void *slot,
			const void *ctx);
void *model_get_list(struct model_dec *d, const struct doc_node *m, const char *key, size_t size,
		     size_t *n_out, item_fn fn, const void *ctx);
/* get_list into a typed array: GET_LIST(d, m, "taints", t->taints, t->n_taints, fn, ctx). */
#define GET_LIST(d, m, key, arr, n, fn, ctx) \
	((arr) = model_get_list((d), (m), (key), sizeof(*(arr)), &(n), (fn), (ctx)))
/* The same for a list already fetched with model_get_seq (seq, NULL when
 * none), where its type was to be checked before the fields after it. */
void *model_list_items(struct model_dec *d, const struct doc_node *seq, const char *key,
		       size_t size, size_t *n_out, item_fn fn, const void *ctx);
#define LIST_ITEMS(d, seq, key, arr, n, fn, ctx) \
	((arr) = model_list_items((d), (seq), (key), sizeof(*(arr)), &(n), (fn), (ctx)))

/* The pieces every family shares. */
void model_dec_meta(struct model_dec *d, const struct doc_node *m, struct model_meta *meta);
void model_get_meta(struct model_dec *d, const struct doc_node *m, const char *key,
		    struct model_meta *meta);
void model_get_requirements(struct model_dec *d, const struct doc_node *m, const char *key,
			    struct model_requirement **out, size_t *n_out);
struct model_node_selector *model_get_node_selector(struct model_dec *d, const struct doc_node *m,
						    const char *key);
void model_dec_taint(struct model_dec *d, const struct doc_node *m, struct model_taint *t);
void model_get_taints(struct model_dec *d, const struct doc_node *m, const char *key,
		      struct model_taint **out, size_t *n_out);
void model_get_tolerations(struct model_dec *d, const struct doc_node *m, const char *key,
			   struct model_toleration **out, size_t *n_out);

/* Each family's objects (model_decode_dra.c, _core.c, _karpenter.c). */
void model_dec_device_class(struct model_dec *d, const struct doc_node *spec,
			    struct model_device_class_spec *c);
void model_dec_slice(struct model_dec *d, const struct doc_node *spec,
		     struct model_resource_slice_spec *s);
void model_dec_claim(struct model_dec *d, const struct doc_node *root,
		     struct model_resource_claim *c);
void model_dec_claim_template(struct model_dec *d, const struct doc_node *root,
			      struct model_resource_claim_template *t);
void model_dec_taint_rule(struct model_dec *d, const struct doc_node *root,
			  struct model_device_taint_rule *r);
void model_dec_pod(struct model_dec *d, const struct doc_node *root, struct model_pod *p);
void model_dec_pod_group(struct model_dec *d, const struct doc_node *root,
			 struct model_pod_group *g);
void model_dec_workload(struct model_dec *d, const struct doc_node *root, enum model_kind k,
			struct model_workload *w);
void model_dec_node(struct model_dec *d, const struct doc_node *root, struct model_node *n);
void model_dec_node_pool(struct model_dec *d, const struct doc_node *root,
			 struct model_node_pool *p);
void model_dec_node_claim(struct model_dec *d, const struct doc_node *root,
			  struct model_node_claim *c);
void model_dec_ec2_node_class(struct model_dec *d, const struct doc_node *root,
			      struct model_ec2_node_class *c);
void model_dec_node_overlay(struct model_dec *d, const struct doc_node *root,
			    struct model_node_overlay *o);

#endif
