/* cel_env.h - CEL environments, compiled programs and evaluations: the API
 * under cel.h, for the CLI (`dratopo cel eval`), the conformance runner and
 * benchmarks.
 *
 *   struct cel_env *env = cel_env_new(CEL_ENV_CLI, &err);
 *   int x = cel_env_declare(env, "x", "dyn", &err);        // variable slot
 *   cel_compile(env, "x + 1", 5, &prog, &err);
 *   struct cel_evaluation *ev = cel_evaluation_new();
 *   struct cel_value vars[1] = { cel_int(41) };           // by slot
 *   cel_eval(prog, vars, 1, ev, &out, &err);              // out lives in ev
 *
 * An environment is mutable until its first compile, then read-only (and
 * may be shared by threads). Programs point into their environment's
 * overload tables, so the environment must outlive every program compiled
 * in it (the DRA selector environment behind cel.h lives for the process).
 * Programs are immutable; an evaluation (its arena) belongs to one thread.
 */
#ifndef DT_CEL_ENV_H
#define DT_CEL_ENV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cel.h"
#include "cel_lib.h"
#include "cel_value.h"
#include "err.h"

struct strbuf;

enum cel_env_kind {
	/* The standard library, macros, optionals, bindings and every linked
	 * library; no variables (the conformance runner's base). */
	CEL_ENV_STANDARD,
	/* STANDARD plus `device` (slot 0) and `includes`; result must be bool
	 * or dyn. */
	CEL_ENV_DRA_SELECTOR,
	/* DRA_SELECTOR with any result type (dratopo cel eval). */
	CEL_ENV_CLI,
};

struct cel_env;

struct cel_env *cel_env_new(enum cel_env_kind kind, struct dt_err *err);
void cel_env_free(struct cel_env *env);

/* Declare a variable; returns its slot (>= 0) in the activation array
 * passed to cel_eval, or a negative error (bad type, duplicate name). */
int cel_env_declare(struct cel_env *env, const char *name, const char *type,
		    struct dt_err *err);
/* Enable another library (before the first compile). */
int cel_env_add_library(struct cel_env *env, const struct cel_library *lib,
			struct dt_err *err);
/* Namespace for identifier resolution ("" by default). */
int cel_env_set_container(struct cel_env *env, const char *container, struct dt_err *err);
/* false: skip type checking (names are still resolved; every call is
 * dispatched at run time). */
void cel_env_set_checking(struct cel_env *env, bool on);
/* false: macros are parsed as plain calls. */
void cel_env_set_macros(struct cel_env *env, bool on);

/* Compile (parse + check) in env. Errors as cel.h describes. */
int cel_compile(const struct cel_env *env, const char *expr, size_t len,
		struct cel_program **out, struct dt_err *err);
/* The checked result type, as cel-go prints it ("bool", "list(int)"). */
void cel_program_result_type(const struct cel_program *p, struct strbuf *sb);
/* The estimated cost as cel-go's checker computes it in the DRA environment
 * (cel_cost.c): not a bound on the runtime cost; UINT64_MAX when a loop runs
 * over something nothing bounds. */
uint64_t cel_program_estimated_cost(const struct cel_program *p);

/* An evaluation's arena and meter; reused across cel_eval calls. */
struct cel_evaluation;
struct cel_evaluation *cel_evaluation_new(void);
void cel_evaluation_free(struct cel_evaluation *ev);
/* Runtime cost of the last evaluation. */
uint64_t cel_evaluation_cost(const struct cel_evaluation *ev);

/* Evaluate with vars indexed by declaration slot (missing trailing slots,
 * and slots whose kind is CEL_KIND_COUNT, are unbound: reading one is the
 * runtime error "no such attribute: NAME"). *out stays valid until the next
 * cel_eval on ev or its free. Returns 0, -EDOM (runtime error, message in
 * err and *out is the CEL_ERROR value) or -ECANCELED (cost limit). */
int cel_eval(const struct cel_program *p, const struct cel_value *vars, size_t n_vars,
	     struct cel_evaluation *ev, struct cel_value *out, struct dt_err *err);

/* The `device` variable for a DRA device view; the value borrows dev, which
 * must outlive the evaluation. */
struct cel_value cel_device_value(const struct cel_device *dev);
extern const struct cel_object_type cel_device_type;

#endif
