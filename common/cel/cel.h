/* cel.h - the public face of the CEL implementation (common/cel_*.c).
 *
 * What the rest of dratopo needs from CEL: compile a DRA selector once,
 * evaluate it against many devices, quickly and safely. The CEL module may
 * add more (the CLI's `cel eval` uses a richer API in cel_*.h), but these
 * signatures are the contract the model validator and the allocator use.
 *
 * A compiled program is immutable and may be evaluated from several
 * threads at once. */
#ifndef DT_CEL_H
#define DT_CEL_H

#include <stdbool.h>
#include <stddef.h>

#include "cel_device.h"
#include "err.h"

/* Limits of the Kubernetes API and scheduler. */
#define CEL_MAX_EXPRESSION_LEN (10 * 1024)   /* CELSelectorExpressionMaxLength */
#define CEL_COST_LIMIT         1000000       /* runtime and estimated */

struct cel_program;

/* Error codes: compile errors (parse or check) return -EINVAL; evaluation
 * errors return -EDOM; the cost limit returns -ECANCELED with the message
 * "operation cancelled: actual cost limit exceeded". */

/* Compile a DRA selector: variable `device`, result bool (or dyn checked at
 * run time). On a compile error err->msg reads as the API server prints it,
 * "ERROR: <input>:LINE:COL: message" followed by the source line and a caret
 * line. The estimated cost is checked against CEL_COST_LIMIT when
 * check_cost is true ("too complex, exceeds cost limit" style message). */
int cel_compile_selector(const char *expr, size_t len, bool check_cost,
			 struct cel_program **out, struct dt_err *err);

/* The API server's check of a selector it stores: 0 when expr compiles
 * (cost included), else -EINVAL with "compilation failed: ERROR: ..." or
 * -E2BIG with "too complex, exceeds cost limit" in msg. Its signature is
 * the model validator's CEL hook (model_validate_opts.check_cel); ctx is
 * unused. */
int cel_selector_check(const char *expr, size_t len, char *msg, size_t msgsz, void *ctx);

/* Evaluate a selector against one device. *match is set on success. A
 * result that is not bool is an error ("CEL result of type list could not
 * be converted to bool"). */
int cel_eval_selector(const struct cel_program *p, const struct cel_device *dev,
		      bool *match, struct dt_err *err);

void cel_program_free(struct cel_program *p);

/* A cache of compiled selectors keyed by expression text (LRU, bounded).
 * Programs returned by cel_cache_get are owned by the cache and stay valid
 * until cel_cache_free. Safe to use from one thread at a time. */
struct cel_cache;
struct cel_cache *cel_cache_new(size_t capacity);
int cel_cache_get(struct cel_cache *c, const char *expr, size_t len,
		  const struct cel_program **out, struct dt_err *err);
void cel_cache_free(struct cel_cache *c);

#endif
