/* model_internal.h - what the model's own files share and nobody else uses:
 * field paths for messages, the name checks of the API machinery, the
 * value printing of field.Error. */
#ifndef DT_MODEL_INTERNAL_H
#define DT_MODEL_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "model.h"

/* A field path as the API server prints it: "spec.devices.requests[0].name",
 * map keys as "[key]". Bounded: a path that would not fit is cut, with
 * "..." at the end, which only happens on hostile nesting. */
#define MODEL_PATH_MAX 512

struct model_path {
	char buf[MODEL_PATH_MAX];
	size_t len;
};

/* Each push returns the previous length; pass it to model_path_pop. */
size_t model_path_field(struct model_path *p, const char *name);
size_t model_path_index(struct model_path *p, size_t i);
size_t model_path_key(struct model_path *p, const char *key);
void model_path_pop(struct model_path *p, size_t mark);

/* Arena for deep copies of free-form trees (created on first use). */
struct doc_arena *model_set_doc_arena(struct model_set *s);

/* "FILE: document N (KIND NS/NAME): " for an object; "document N, item M"
 * for List items; objects built in code get "KIND NS/NAME: ". */
void model_object_prefix(const struct model_object *o, char *buf, size_t size);

/* ---- Name checks (k8s.io/apimachinery/pkg/util/validation) ----
 * Each returns the number of messages written into msgs (at most 4), the
 * messages worded as the API machinery words them. */
#define MODEL_NAME_MSGS 4
struct model_name_msgs {
	const char *m[MODEL_NAME_MSGS];
	char buf[MODEL_NAME_MSGS][400];
	int n;
};

int model_check_dns1123_label(const char *s, struct model_name_msgs *out);
int model_check_dns1123_subdomain(const char *s, struct model_name_msgs *out);
int model_check_c_identifier(const char *s, struct model_name_msgs *out);
/* Label keys and other qualified names (prefix/name). */
int model_check_qualified_name(const char *s, struct model_name_msgs *out);
int model_check_label_value(const char *s, struct model_name_msgs *out);

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

#endif
