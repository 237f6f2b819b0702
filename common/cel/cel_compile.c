/* cel_compile.c - compiling an expression against an environment: parse,
 * check, estimate the cost, fold constants, rewrite the device shapes
 * (cel_compile, the programs it makes), and the selector API of cel.h
 * (cel_compile_selector, cel_selector_check) on the DRA environment. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cel_ast.h"
#include "strbuf.h"

/* ---- programs ---- */

int cel_compile(const struct cel_env *env, const char *expr, size_t len,
		struct cel_program **out, struct dt_err *err)
{
	struct cel_program *p = calloc(1, sizeof(*p));
	int rc;

	*out = NULL;
	if (!p)
		return dt_err_set(err, -ENOMEM, "out of memory");
	((struct cel_env *)env)->frozen = true;
	p->env = env;
	cel_arena_init(&p->pool, NULL, 0, 256u << 20);
	p->src = cel_arena_strdup(&p->pool, expr, len);
	if (!p->src) {
		rc = dt_err_set(err, -ENOMEM, "out of memory");
		goto fail;
	}
	p->src_len = len;
	rc = cel_parse(p->src, len, env->macros, &p->pool, &p->ast, err);
	if (rc < 0)
		goto fail;
	rc = cel_check(env, p->src, len, &p->pool, &p->ast, err);
	if (rc < 0)
		goto fail;
	p->n_vars = env->n_vars;
	p->result_bool = env->result_bool;
	p->est_cost = cel_estimate_cost(p);
	cel_fold_constants(p);
	*out = p;
	return 0;
fail:
	cel_program_free(p);
	return rc;
}

void cel_program_free(struct cel_program *p)
{
	if (!p)
		return;
	cel_arena_release(&p->pool);
	free(p);
}

void cel_program_result_type(const struct cel_program *p, struct strbuf *sb)
{
	cel_type_print(sb, p->ast.root->type);
}

uint64_t cel_program_estimated_cost(const struct cel_program *p)
{
	return p->est_cost;
}

/* ---- the selector API (cel.h) ---- */

static pthread_once_t dra_once = PTHREAD_ONCE_INIT;
static struct cel_env *dra_env;
static struct dt_err dra_env_err;

static void dra_env_init(void)
{
	dra_env = cel_env_new(CEL_ENV_DRA_SELECTOR, &dra_env_err);
	if (dra_env)
		dra_env->frozen = true;
}

int cel_compile_selector(const char *expr, size_t len, bool check_cost,
			 struct cel_program **out, struct dt_err *err)
{
	int rc;

	*out = NULL;
	pthread_once(&dra_once, dra_env_init);
	if (!dra_env)
		return dt_err_set(err, -ENOMEM, "CEL environment: %s", dra_env_err.msg);
	if (len > CEL_MAX_EXPRESSION_LEN)
		return dt_err_set(err, -EINVAL, "Too long: may not be more than %d bytes",
				  CEL_MAX_EXPRESSION_LEN);
	rc = cel_compile(dra_env, expr, len, out, err);
	if (rc < 0)
		return rc;
	if (check_cost && (*out)->est_cost > CEL_COST_LIMIT) {
		cel_program_free(*out);
		*out = NULL;
		return dt_err_set(err, -EINVAL, "too complex, exceeds cost limit");
	}
	return 0;
}

int cel_selector_check(const char *expr, size_t len, char *msg, size_t msgsz, void *ctx)
{
	struct cel_program *p = NULL;
	struct dt_err err = { 0 };
	int rc;

	(void)ctx;
	rc = cel_compile_selector(expr, len, true, &p, &err);
	cel_program_free(p);
	if (!rc)
		return 0;
	if (strstr(err.msg, "cost limit")) {
		snprintf(msg, msgsz, "too complex, exceeds cost limit");
		return -E2BIG;
	}
	snprintf(msg, msgsz, "compilation failed: %s", err.msg[0] ? err.msg : "invalid expression");
	return -EINVAL;
}
