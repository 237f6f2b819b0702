/* cel_device.h - a device as a DRA CEL selector sees it.
 *
 * This is the `device` variable of the DRA CEL environment: driver,
 * attributes[domain][id], capacity[domain][id] and allowMultipleAllocations.
 * It is a borrowed view: the caller (the allocator, `cel eval --device`)
 * builds it from its own model objects once per device and keeps the
 * strings alive. Domains and ids are already split: an unqualified
 * attribute name belongs to the driver's domain. */
#ifndef DT_CEL_DEVICE_H
#define DT_CEL_DEVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "quantity.h"
#include "semver.h"

enum cel_attr_kind {
	CEL_ATTR_INT,
	CEL_ATTR_BOOL,
	CEL_ATTR_STRING,
	CEL_ATTR_VERSION,
	/* List-type attributes (DRAListTypeAttributes): ints, bools, strings,
	 * versions; in CEL lists of int, bool, string, kubernetes.Semver. */
	CEL_ATTR_INTS,
	CEL_ATTR_BOOLS,
	CEL_ATTR_STRINGS,
	CEL_ATTR_VERSIONS,
};

/* Is k one of the list kinds? */
static inline bool cel_attr_is_list(enum cel_attr_kind k)
{
	return k >= CEL_ATTR_INTS;
}

struct cel_list;

struct cel_device_attr {
	const char *domain;             /* e.g. "gpu.nvidia.com" */
	const char *id;                 /* e.g. "productName" */
	enum cel_attr_kind kind;
	union {
		int64_t i;
		bool b;
		struct { const char *s; size_t len; } str;
		const struct semver *version;
		/* The list kinds: the values, built by the caller as CEL
		 * values of the element type (cel_value.h). */
		const struct cel_list *list;
	} v;
};

struct cel_device_capacity {
	const char *domain;
	const char *id;
	const struct quantity *value;
};

struct cel_device {
	const char *driver;
	const struct cel_device_attr *attrs;
	size_t n_attrs;
	const struct cel_device_capacity *capacity;
	size_t n_capacity;
	bool allow_multiple_allocations;
	/* Every domain and id of attrs and capacity is cel_intern's copy:
	 * compiled selectors then find them by pointer (model_device_cel_init
	 * sets it). */
	bool interned;
};

/* The canonical, never freed copy of name s (an attribute or capacity
 * domain or id); NULL when s is longer than 256 bytes, memory is short or
 * the table holds its 65,536 names. Thread-safe. */
const char *cel_intern(const char *s);

#endif
