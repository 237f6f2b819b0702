/* cel_lib.h - how a CEL library declares its functions and types.
 *
 * A library is a static table (struct cel_library) of overloads. The
 * checker reads each overload's signature to type-check calls and pick the
 * candidate overloads; the evaluator calls the implementation with
 * arguments already evaluated (errors are propagated before the call, so an
 * implementation never sees a CEL_ERROR argument) and charges its cost.
 *
 * Type expressions (signatures, variable and field declarations):
 *   int uint double bool string bytes null_type dyn any
 *   list(T) map(K, V) type(T) optional_type(T)
 *   google.protobuf.Timestamp google.protobuf.Duration
 *   A B K V ...           a single upper-case letter is a type parameter
 *   kubernetes.Quantity   any other dotted name is a library object type,
 *                         which the library lists in `types`
 *
 * Naming: `name` is the function as written in CEL: "compareTo",
 * "strings.quote" (a namespaced global), or an operator's internal name
 * ("_+_", "_==_", "_[_]", "!_", "-_", "@in"). `id` is a unique overload id
 * (cel-go's, where one exists: "add_int64", "string_to_int64").
 *
 * Enabling: each common/cel_lib_<name>.c defines
 *   const struct cel_library cel_lib_<name>;
 * common/cel.cmake compiles every cel_lib_*.c present into dt_cel and
 * defines CEL_HAVE_LIB_<NAME>, so cel_env.c enables exactly the libraries
 * that exist (the names below are the ones the DRA environment knows).
 * Libraries are plain data: no registration code runs.
 */
#ifndef DT_CEL_LIB_H
#define DT_CEL_LIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cel_value.h"

/* Implementation: args[0] is the receiver for member overloads. Return the
 * result or an error value (cel_errorf). Must not keep pointers to args
 * beyond returning them (they may live in the evaluator's stack frame), but
 * may return values that point into the arguments' data. */
typedef struct cel_value (*cel_fn)(struct cel_ctx *ctx, const struct cel_value *args,
				   size_t nargs);

/* Cost of one call from the sizes of its arguments and result (string and
 * bytes: length in bytes; list and map: element count; anything else: 1).
 * The same function serves the runtime meter (actual sizes) and the
 * estimator (cel_cost.c: the largest sizes it knows, UINT64_MAX where it
 * knows none), so it must saturate (cel_sat_add, cel_sat_mul) rather
 * than wrap. NULL: cost 1. */
typedef uint64_t (*cel_cost_fn)(const uint64_t *arg_sizes, size_t nargs,
				uint64_t result_size);

enum cel_overload_flags {
	CEL_OV_MEMBER = 1 << 0,        /* called as receiver.name(args...) */
	/* At run time only the arguments' kinds are checked, not the first
	 * element of a list argument (cel-go's DisableTypeGuards). */
	CEL_OV_NO_ELEM_GUARD = 1 << 1,
};

struct cel_overload {
	const char *name;       /* "compareTo" */
	const char *id;         /* "semver_compareTo" */
	unsigned flags;         /* enum cel_overload_flags */
	const char *params;     /* "kubernetes.Semver, kubernetes.Semver" ("" for none) */
	const char *result;     /* "int" */
	cel_fn fn;
	cel_cost_fn cost;
};

struct cel_library {
	const char *name;                       /* "semver" */
	const struct cel_overload *overloads;
	size_t n_overloads;
	/* Object types named in the signatures (may repeat another library's;
	 * cel_quantity_type and cel_semver_type are in the core). */
	const struct cel_object_type *const *types;
	size_t n_types;
};

#define CEL_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* Libraries the DRA environment enables when their file is linked in. */
extern const struct cel_library cel_lib_strings;   /* strings ext v2 */
extern const struct cel_library cel_lib_lists;     /* k8s lists + ext.Lists v3 */
extern const struct cel_library cel_lib_sets;      /* ext.Sets */
extern const struct cel_library cel_lib_regex;     /* matches, find, findAll (RE2 rules) */
extern const struct cel_library cel_lib_url;
extern const struct cel_library cel_lib_ip;        /* ip and cidr */
extern const struct cel_library cel_lib_format;    /* string.format (ext.Strings) */
extern const struct cel_library cel_lib_named_format; /* k8s format library (format.dns1123Label()...) */
extern const struct cel_library cel_lib_quantity;
extern const struct cel_library cel_lib_semver;

/* The core's own tables (cel_std.c, cel_time.c), enabled in every env. */
extern const struct cel_library cel_lib_std;
/* The standard matches() when cel_lib_regex.c is not in the build. */
extern const struct cel_library cel_lib_std_matches;
extern const struct cel_library cel_lib_time;

/* ---- helpers for implementations ---- */

/* ceil(f * n) as cel-go's cost functions compute it. */
uint64_t cel_cost_factor(double f, uint64_t n);
/* a + b and a * b, saturating at UINT64_MAX as cel-go's cost arithmetic
 * does: the estimator passes UINT64_MAX for sizes it cannot bound. */
uint64_t cel_sat_add(uint64_t a, uint64_t b);
uint64_t cel_sat_mul(uint64_t a, uint64_t b);

#endif
