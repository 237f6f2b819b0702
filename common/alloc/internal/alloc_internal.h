/* alloc_internal.h - what the allocator's files share and nobody else sees.
 *
 * alloc_mem.c      bump memory and a string -> index hash table
 * alloc_pools.c    pool gathering, the flattened devices, alloc_ctx
 * alloc_state.c    struct alloc_state (in use, capacity, counters)
 * alloc_select.c   DeviceClass + request selectors, cached per device
 * alloc_capacity.c consumable capacity: request policies and rounding
 * alloc_counters.c partitionable devices: counter sets
 * alloc_constraint.c matchAttribute / distinctAttribute
 * alloc_taint.c    device taints and request tolerations
 * alloc.c          the search (alloc_try), results, reasons */
#ifndef DT_ALLOC_INTERNAL_H
#define DT_ALLOC_INTERNAL_H

#include "alloc.h"
#include "array.h"

/* ---- memory ---- */

/* Bump allocator: chunks freed all at once. */
struct alloc_mem {
	struct alloc_mem_chunk *chunks;
};

struct alloc_mem *alloc_mem_new(void);
void *alloc_mem_get(struct alloc_mem *m, size_t size);          /* zeroed; NULL on OOM */
void *alloc_mem_raw(struct alloc_mem *m, size_t size);          /* not zeroed */
char *alloc_mem_strdup(struct alloc_mem *m, const char *s);
/* Forget everything allocated, keeping one chunk for reuse. */
void alloc_mem_reset(struct alloc_mem *m);
void alloc_mem_free(struct alloc_mem *m);

/* Open-addressing map from (borrowed) byte strings to uint32 values. */
struct alloc_hash {
	struct alloc_hash_slot *slots;
	size_t cap, n;
};

void alloc_hash_init(struct alloc_hash *h);
/* Key bytes are borrowed and must outlive the table. 0 or -ENOMEM. */
int alloc_hash_put(struct alloc_hash *h, const char *key, size_t len, uint32_t val);
/* true and *val when found. */
bool alloc_hash_get(const struct alloc_hash *h, const char *key, size_t len, uint32_t *val);
void alloc_hash_free(struct alloc_hash *h);

/* ---- the node's devices ---- */

/* A counter of a pool's counter set, flattened. */
struct acounter {
	const char *set;
	const char *name;
	const struct quantity *value;
};

/* One counter a device consumes. */
struct aconsume {
	uint32_t counter;               /* index into ctx->counters */
	const struct quantity *amount;
};

struct apool {
	const char *driver;
	const char *name;
	int64_t generation;
	bool incomplete;
	bool invalid;
	const char *invalid_reason;     /* owned by ctx->mem */
	bool has_binding_conditions;
	uint32_t dev_first, n_dev;      /* devices in ctx->devs, slice-name order */
};

struct adev {
	const struct model_device *dev;
	const struct model_object *slice;
	uint32_t pool;
	bool targets_node;              /* selectable for this node */
	bool node_local;                /* result pins to the node (nodeName, bindsToNode) */
	const struct model_node_selector *node_selector;  /* slice's or device's */
	bool allow_multi;
	bool has_unknown;               /* lacks some node-uniform attribute */
	uint32_t cons_first, n_cons;    /* into ctx->cons */
	uint32_t cap_first;             /* capacity slots: cap_first + i for dev->capacity[i] */
	const uint32_t *uni;            /* node-uniform attributes it lacks (ctx->uni_attrs) */
	uint32_t n_uni;
	const struct model_object **rules;      /* DeviceTaintRules selecting it */
	uint32_t n_rules;
};

/* A node-uniform attribute the device lacks: its value is "the node's". */
struct auniform {
	const char *domain;
	const char *id;
};

/* A unique selector expression with its per-device results. */
struct asel {
	const char *expr;
	size_t len;
	struct cel_program *prog;        /* the ctx's, or opts.programs' */
	uint8_t *results;                /* n_devs: 0 unknown, 1 match, 2 no match */
};

struct aclass {
	const struct model_object *obj;
	uint32_t *sels;                  /* indices into ctx->sels; NULL until used */
	bool resolved;
};

struct alloc_ctx {
	struct alloc_mem *mem;
	struct alloc_node node;
	struct alloc_options opts;

	struct apool *pools;
	size_t n_pools;
	struct adev *devs;
	size_t n_devs;
	size_t n_target;                 /* devices that target the node */
	size_t n_shared_target;          /* of those, allowing multiple allocations */
	struct acounter *counters;
	size_t n_counters;
	struct aconsume *cons;
	size_t n_cons;
	size_t n_caps;                   /* capacity slots over all devices */
	struct auniform *uni_attrs;
	size_t n_uni_attrs;
	struct alloc_hash dev_index;     /* "driver\0pool\0device" -> device */

	struct aclass *classes;
	size_t n_classes;
	struct alloc_hash class_index;   /* name -> class */

	struct asel *sels;
	size_t n_sels, cap_sels;
	struct alloc_hash sel_index;     /* expression -> sel */
	/* Reused by every alloc_try (one thread at a time): the search's
	 * tables and its working copy of the allocated state. */
	struct alloc_mem *scratch;
	struct alloc_state *scratch_state;
};

struct alloc_state {
	const struct alloc_ctx *ctx;
	/* per device: allocations (exclusive: 0/1), | ALLOC_HELD_WHOLE when a
	 * shared device is held by a result without shareID */
	uint32_t *n_alloc;
	size_t n_busy;                   /* exclusive devices of the node in use */
	struct quantity *cap_used;       /* per capacity slot (shared devices) */
	struct quantity *counter_used;   /* per counter */
};

/* Find a device by its ID; -1 when the node has no such device. */
int64_t alloc_ctx_find_device(const struct alloc_ctx *ctx, const char *driver,
			      const char *pool, const char *device);
/* Capacity slot of a device for a qualified name (bare: driver's domain);
 * -1 when it has none. */
int alloc_dev_capacity_index(const struct adev *d, const char *name);

/* ---- selectors ---- */

/* The class by name, NULL when unknown. */
struct aclass *alloc_ctx_class(struct alloc_ctx *ctx, const char *name);
/* The selector index for an expression (compiled on first use). */
int alloc_ctx_selector(struct alloc_ctx *ctx, const char *expr, size_t len, uint32_t *out,
		       struct dt_err *err);
/* Free a selector's program unless a shared alloc_programs keeps it. */
void alloc_ctx_program_free(const struct alloc_ctx *ctx, struct cel_program *prog);
/* Resolve a class's selectors. */
int alloc_class_resolve(struct alloc_ctx *ctx, struct aclass *c, struct dt_err *err);
/* Does device dev match selector s? Cached. A CEL runtime error is fatal
 * (negative return, err filled without context) except on a device with
 * unknown node-uniform attributes, where it means no match. */
int alloc_selector_match(struct alloc_ctx *ctx, uint32_t s, uint32_t dev, bool *match,
			 struct dt_err *err);

/* ---- capacity ---- */

/* Which capacity each request names, resolved for one device. */
int alloc_capacity_consumed(const struct adev *d, const struct model_resource_list *requests,
			    struct quantity *consumed, bool *ok);
/* Does consumed (one per device capacity) fit into what is left? */
void alloc_capacity_explain(const struct alloc_state *s, uint32_t dev,
			    const struct model_resource_list *requests, char *buf, size_t n);
bool alloc_capacity_fits(const struct alloc_state *s, uint32_t dev,
			 const struct quantity *consumed);
void alloc_capacity_apply(struct alloc_state *s, uint32_t dev, const struct quantity *consumed,
			  int sign);

/* ---- counters ---- */

/* Would allocating dev (once more) keep every counter within its set? */
bool alloc_counters_fit(const struct alloc_state *s, uint32_t dev);
/* Consume (sign 1) or release (-1) the device's counters. */
void alloc_counters_apply(struct alloc_state *s, uint32_t dev, int sign);

/* ---- taints ---- */

/* The first NoSchedule/NoExecute taint of d that t does not tolerate: its
 * slice's first, then its DeviceTaintRules' (*rule says which; NULL for
 * a slice's taint). rule may be NULL. */
const struct model_taint *alloc_taint_untolerated(const struct adev *d,
						  const struct model_toleration *t, size_t n_t,
						  const struct model_object **rule);
bool alloc_taints_tolerated(const struct adev *d, const struct model_toleration *t, size_t n_t);
/* Give every device of ctx the DeviceTaintRules of ctx->opts that select
 * it. 0 or -ENOMEM. */
int alloc_taint_rules_apply(struct alloc_ctx *ctx);
bool alloc_toleration_matches(const struct model_toleration *t, const struct model_taint *taint);

/* ---- constraints ---- */

enum aval_kind { AVAL_NONE, AVAL_INT, AVAL_BOOL, AVAL_STRING, AVAL_VERSION, AVAL_UNIFORM };

/* An attribute as a constraint sees it: a set of values of one element
 * kind (a scalar is a one-element set, a list attribute the set of its
 * items), or the node's one unknown value (AVAL_UNIFORM), or nothing. */
struct aval {
	enum aval_kind kind;
	const struct model_attribute *attr;     /* NULL for NONE and UNIFORM */
};

/* The attribute domain/id of device dev as a constraint sees it. */
struct aval alloc_dev_attr(const struct alloc_ctx *ctx, uint32_t dev, const char *domain,
			   const char *id);

/* Sets of at most this many values take part in matchAttribute (the API
 * allows 48 per device): the running intersection is a bit mask. */
#define ALLOC_MATCH_MAX_VALUES 64

struct aconstraint {
	const struct model_constraint *src;
	bool distinct;
	const char *domain, *id;         /* of the fully qualified attribute */
	/* State during the search. */
	uint32_t count;
	/* match: vals[0] is the first device's set, masks[k] which of its
	 * values every one of the first k + 1 devices has (the intersection,
	 * restored by popping on backtrack); distinct: every device's set */
	struct aval *vals;
	uint64_t *masks;
	uint32_t cap_vals;
};

/* Does the constraint apply to request main (sub may be NULL)? */
bool alloc_constraint_applies(const struct aconstraint *c, const char *main, const char *sub);
/* Add a device: false (nothing changed) when it would break the constraint. */
bool alloc_constraint_add(struct aconstraint *c, const struct alloc_ctx *ctx, uint32_t dev);
void alloc_constraint_remove(struct aconstraint *c);

/* ---- state ---- */

/* One more allocation of dev (shared: consumed per capacity slot;
 * exclusive: NULL). Counters are consumed by the first allocation. */
/* Nothing allocated. */
void alloc_state_clear(struct alloc_state *s);
void alloc_state_take(struct alloc_state *s, uint32_t dev, const struct quantity *consumed);
void alloc_state_release(struct alloc_state *s, uint32_t dev, const struct quantity *consumed);
/* A device allowing multiple allocations that an existing claim holds as a
 * dedicated device (a result without shareID, as the scheduler's
 * AllocatedDevices has it): nobody else gets it, shared or not. */
#define ALLOC_HELD_WHOLE (UINT32_C(1) << 31)
/* In use for any request but admin access: an exclusive device taken
 * once, a shared one held whole. */
bool alloc_state_in_use(const struct alloc_state *s, uint32_t dev);

/* ---- share IDs ---- */
void alloc_random_share_id(void *arg, char out[ALLOC_SHARE_ID_LEN + 1]);

#endif
