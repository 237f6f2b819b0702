/* cel_value.h - CEL runtime values, and the evaluation context that owns them.
 *
 * A value is a small tagged struct (24 bytes) passed by value. Scalars live
 * inside it; everything else (string bytes, list items, map entries,
 * optionals, library objects) is referenced by pointer and owned by one of:
 *
 *   - the program (string literals, constant folding): lives as long as the
 *     compiled program;
 *   - the caller (activation variables, the `device` view): borrowed, must
 *     outlive the evaluation;
 *   - the evaluation arena (struct cel_ctx): everything a function creates
 *     while evaluating. The arena starts in a buffer on the evaluator's
 *     stack and only falls back to the heap for large intermediate results;
 *     it is released in one go when the evaluation ends. Values never need
 *     to be freed one by one.
 *
 * Library functions therefore allocate with cel_alloc() and never with
 * malloc, and may keep pointers into their arguments (substrings, list
 * slices) without copying.
 *
 * Errors are values too (CEL_ERROR): a function reports a runtime error by
 * returning cel_errorf(ctx, ...). The evaluator propagates them through
 * strict functions and lets `&&`, `||` and the comprehension macros absorb
 * them as the spec says.
 */
#ifndef DT_CEL_VALUE_H
#define DT_CEL_VALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct strbuf;
struct cel_ctx;

enum cel_kind {
	CEL_NULL,
	CEL_BOOL,
	CEL_INT,
	CEL_UINT,
	CEL_DOUBLE,
	CEL_STRING,     /* UTF-8, validated on construction */
	CEL_BYTES,
	CEL_LIST,
	CEL_MAP,
	CEL_TYPE,       /* a type value: int, list, kubernetes.Quantity ... */
	CEL_TIMESTAMP,  /* seconds since the Unix epoch + nanos, UTC */
	CEL_DURATION,   /* seconds + nanos, both with the same sign */
	CEL_OPTIONAL,
	CEL_OBJECT,     /* a library type (Quantity, Semver, IP, URL ...) */
	CEL_ERROR,      /* a runtime error travelling as a value */
	CEL_KIND_COUNT
};

struct cel_value;
struct cel_map;

/* A field of a library type that has fields (the DRA `device`): the
 * checker knows its type from the declaration. */
struct cel_field_decl {
	const char *name;
	const char *type;               /* type expression, see cel_lib.h */
};

/* A library type. Instances are CEL_OBJECT values pointing at the type and at
 * the library's own struct. Types are static and live forever. */
struct cel_object_type {
	const char *name;               /* CEL type name: "kubernetes.Quantity" */
	/* Declared fields (NULL/0: none; selecting a field is then an error). */
	const struct cel_field_decl *fields;
	size_t n_fields;
	/* Read field `name`; false when absent (has() is false, selection
	 * is the error "no such field"). */
	bool (*field)(struct cel_ctx *ctx, const void *obj, const char *name,
		      struct cel_value *out);
	/* Equality used by ==, in, map keys are never objects. NULL: identity. */
	bool (*equal)(const void *a, const void *b);
	/* -1/0/1 for the ordering operators < <= > >=; NULL: not ordered
	 * (the operators then report "no such overload"). */
	int (*compare)(const void *a, const void *b);
	/* Append the value in CEL literal form: quantity("100Gi"). */
	void (*print)(struct strbuf *sb, const void *a);
};

struct cel_list {
	size_t len;
	const struct cel_value *items;
	size_t cap;     /* internal: > 0 while a comprehension grows it; 0 for all others */
};

/* Maps are either plain (ops == NULL: parallel key/value arrays, keys
 * unique) or views (ops != NULL) over caller data, like `device.attributes`,
 * so that no map has to be built per evaluation. */
struct cel_map_ops {
	/* Look key up; true and *out set when present. */
	bool (*find)(struct cel_ctx *ctx, const struct cel_map *m,
		     const struct cel_value *key, struct cel_value *out);
	size_t (*size)(const struct cel_map *m);
	/* Entry i (0 <= i < size), in a stable order. */
	void (*entry)(struct cel_ctx *ctx, const struct cel_map *m, size_t i,
		      struct cel_value *key, struct cel_value *val);
	/* Optional: the value of m[key] for an absent key (the DRA
	 * attributes map yields {} for an unknown domain); false: the usual
	 * "no such key" error. `in` and has() still see the key as absent. */
	bool (*missing)(struct cel_ctx *ctx, const struct cel_map *m,
			const struct cel_value *key, struct cel_value *out);
};

struct cel_map {
	const struct cel_map_ops *ops;
	size_t len;                     /* plain maps */
	const struct cel_value *keys;
	const struct cel_value *vals;
	const void *view;               /* view maps: their data */
	const void *view2;
	size_t cap;     /* internal: > 0 while a comprehension grows it; 0 for all others */
};

struct cel_value {
	uint8_t kind;                   /* enum cel_kind */
	union {
		bool b;
		int64_t i;
		uint64_t u;
		double d;
		struct { const char *s; size_t len; } str;  /* STRING, BYTES */
		const struct cel_list *list;
		const struct cel_map *map;
		/* TYPE: the type's name, static storage ("int", "list",
		 * "kubernetes.Quantity"). Runtime types carry no parameters,
		 * as in cel-go: type([1]) == list. */
		const char *type;
		struct { int64_t sec; int32_t nsec; } t;    /* TIMESTAMP, DURATION */
		const struct cel_value *opt;  /* OPTIONAL: NULL is optional.none() */
		struct { const struct cel_object_type *type; const void *ptr; } obj;
		struct { const char *msg; int code; } err;  /* code: negative errno */
	} v;
};

/* ---- constructors (no allocation) ----
 * Compound literals returned directly: GCC then writes the caller's slot
 * in place, where a named temporary is built on the stack and copied with
 * a wide load that cannot forward from its narrow stores (a stall of
 * about 12 cycles per value). */

static inline struct cel_value cel_null(void)
{
	return (struct cel_value){ .kind = CEL_NULL };
}

static inline struct cel_value cel_bool(bool b)
{
	return (struct cel_value){ .kind = CEL_BOOL, .v.b = b };
}

static inline struct cel_value cel_int(int64_t i)
{
	return (struct cel_value){ .kind = CEL_INT, .v.i = i };
}

static inline struct cel_value cel_uint(uint64_t u)
{
	return (struct cel_value){ .kind = CEL_UINT, .v.u = u };
}

static inline struct cel_value cel_double(double d)
{
	return (struct cel_value){ .kind = CEL_DOUBLE, .v.d = d };
}

/* s must outlive the evaluation (arena, program, caller) and be valid UTF-8. */
static inline struct cel_value cel_string(const char *s, size_t len)
{
	return (struct cel_value){ .kind = CEL_STRING, .v.str = { s, len } };
}

static inline struct cel_value cel_bytes(const char *s, size_t len)
{
	return (struct cel_value){ .kind = CEL_BYTES, .v.str = { s, len } };
}

static inline struct cel_value cel_list_value(const struct cel_list *l)
{
	return (struct cel_value){ .kind = CEL_LIST, .v.list = l };
}

static inline struct cel_value cel_map_value(const struct cel_map *m)
{
	return (struct cel_value){ .kind = CEL_MAP, .v.map = m };
}

static inline struct cel_value cel_object(const struct cel_object_type *t, const void *p)
{
	return (struct cel_value){ .kind = CEL_OBJECT, .v.obj = { t, p } };
}

static inline struct cel_value cel_timestamp(int64_t sec, int32_t nsec)
{
	return (struct cel_value){ .kind = CEL_TIMESTAMP, .v.t = { sec, nsec } };
}

static inline struct cel_value cel_duration(int64_t sec, int32_t nsec)
{
	return (struct cel_value){ .kind = CEL_DURATION, .v.t = { sec, nsec } };
}

static inline struct cel_value cel_optional_none(void)
{
	return (struct cel_value){ .kind = CEL_OPTIONAL, .v.opt = NULL };
}

static inline bool cel_is_error(const struct cel_value *v)
{
	return v->kind == CEL_ERROR;
}

/* ---- constructors that use the evaluation arena ---- */

/* Arena memory, 16-byte aligned, valid until the evaluation ends. NULL when
 * the evaluation's memory guard is hit; the caller then returns
 * cel_error_oom(ctx). */
void *cel_alloc(struct cel_ctx *ctx, size_t n);

/* A runtime error value; the message is formatted into the arena. */
struct cel_value cel_errorf(struct cel_ctx *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
struct cel_value cel_error_oom(struct cel_ctx *ctx);
/* "no such overload" with the function name, as cel-go words it. */
struct cel_value cel_error_no_overload(struct cel_ctx *ctx, const char *fn);

/* A copy of s in the arena (for strings a function builds in a scratch
 * buffer). The string variant checks UTF-8. */
struct cel_value cel_string_copy(struct cel_ctx *ctx, const char *s, size_t len);
struct cel_value cel_bytes_copy(struct cel_ctx *ctx, const char *s, size_t len);

/* A list of n items to be filled in by the caller: *items gets the
 * writable array. On failure returns an error value and *items is NULL. */
struct cel_value cel_list_new(struct cel_ctx *ctx, size_t n, struct cel_value **items);
/* A plain map with n entries to be filled; keys must be unique (use
 * cel_map_build for input that may repeat keys). */
struct cel_value cel_map_new(struct cel_ctx *ctx, size_t n, struct cel_value **keys,
			     struct cel_value **vals);
struct cel_value cel_optional_of(struct cel_ctx *ctx, struct cel_value v);
/* Copy a library struct into the arena and wrap it. */
struct cel_value cel_object_new(struct cel_ctx *ctx, const struct cel_object_type *t,
				const void *data, size_t size);

/* Charge the evaluation n cost units (for work proportional to input that
 * the overload's static cost does not cover). */
void cel_cost_add(struct cel_ctx *ctx, uint64_t n);

/* ---- generic operations ---- */

/* Map access that works for plain and view maps. */
size_t cel_map_size(const struct cel_map *m);
bool cel_map_find(struct cel_ctx *ctx, const struct cel_map *m, const struct cel_value *key,
		  struct cel_value *out);
void cel_map_entry(struct cel_ctx *ctx, const struct cel_map *m, size_t i,
		   struct cel_value *key, struct cel_value *val);

/* CEL equality (heterogeneous numbers, deep lists and maps, NaN != NaN).
 * Never fails: different types are simply unequal. */
bool cel_value_equal(const struct cel_value *a, const struct cel_value *b);
/* Ordering for < <= > >=: sets *cmp to -1/0/1; returns false when the
 * values are not ordered (mixed types, NaN, unordered objects). */
bool cel_value_compare(const struct cel_value *a, const struct cel_value *b, int *cmp);

/* The CEL name of the value's runtime type ("int", "list", "kubernetes.Quantity"). */
const char *cel_value_type_name(const struct cel_value *v);
/* A type value by name; name must have static storage. */
struct cel_value cel_type_named(const char *name);

/* Print in CEL literal form (see design.md `dratopo cel eval`). Errors print
 * as their message. */
void cel_value_print(struct strbuf *sb, const struct cel_value *v);

/* The library types the core knows because the `device` variable yields
 * them. The quantity and semver libraries build on these. Their data is a
 * struct quantity / struct semver (quantity.h, semver.h). */
extern const struct cel_object_type cel_quantity_type;
extern const struct cel_object_type cel_semver_type;

#endif
