/* conformance.c - runs the cel-spec conformance cases (flattened to JSON by
 * tests/cel/export.js) through dratopo's CEL implementation.
 *
 *   conformance CASES.json SKIPLIST [-v] [--min-pass PERCENT]
 *
 * Each case is compiled in the standard environment with its declarations
 * (checking off when the case says disableCheck), its bindings evaluated
 * from CEL text, and the result compared with the expected value (same
 * type, same value) or expected error; a check error satisfies an expected
 * error, as in cel-go's runner. Cases the exporter marked (protobuf) and
 * those in SKIPLIST are skipped with their reason. Prints one line per
 * failure with -v and always a closing "N passed, N failed, N skipped";
 * exits 1 when the pass rate of the cases run is below --min-pass (98). */
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "cel_env.h"
#include "strbuf.h"

struct skip {
	char id[256];
	char reason[256];
};

static struct skip *skips;
static size_t n_skips, cap_skips;

static int load_skips(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[600];

	if (!f) {
		fprintf(stderr, "conformance: %s: %s\n", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		char *sp;

		line[strcspn(line, "\n")] = 0;
		if (!line[0] || line[0] == '#')
			continue;
		sp = strpbrk(line, " \t");
		if (DT_GROW(skips, cap_skips, n_skips + 1))
			break;
		if (sp)
			*sp++ = 0;
		snprintf(skips[n_skips].id, sizeof(skips[n_skips].id), "%s", line);
		snprintf(skips[n_skips].reason, sizeof(skips[n_skips].reason), "%s",
			 sp ? sp + strspn(sp, " \t") : "");
		n_skips++;
	}
	fclose(f);
	return 0;
}

/* Skip reasons and how often each was given, for the summary. */
static struct { char reason[200]; size_t n; } reasons[64];
static size_t n_reasons;

static void count_reason(const char *r)
{
	for (size_t i = 0; i < n_reasons; i++)
		if (!strcmp(reasons[i].reason, r)) {
			reasons[i].n++;
			return;
		}
	if (n_reasons < 64) {
		snprintf(reasons[n_reasons].reason, sizeof(reasons[0].reason), "%s", r);
		reasons[n_reasons++].n = 1;
	}
}

static const char *skip_reason(const char *id)
{
	for (size_t i = 0; i < n_skips; i++)
		if (!strcmp(skips[i].id, id))
			return skips[i].reason;
	return NULL;
}

static const char *jstr(json_object *o, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v))
		return NULL;
	return json_object_get_string(v);
}

static bool jbool(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) && json_object_get_boolean(v);
}

/* Same type and same value, deeply; NaN matches NaN. */
static bool same_value(const struct cel_value *a, const struct cel_value *b)
{
	if (a->kind != b->kind)
		return false;
	switch (a->kind) {
	case CEL_DOUBLE:
		if (isnan(a->v.d) && isnan(b->v.d))
			return true;
		return a->v.d == b->v.d;
	case CEL_LIST:
		if (a->v.list->len != b->v.list->len)
			return false;
		for (size_t i = 0; i < a->v.list->len; i++)
			if (!same_value(&a->v.list->items[i], &b->v.list->items[i]))
				return false;
		return true;
	case CEL_OPTIONAL:
		if (!a->v.opt || !b->v.opt)
			return a->v.opt == b->v.opt;
		return same_value(a->v.opt, b->v.opt);
	default:
		return cel_value_equal(a, b);
	}
}

/* Constant values of one case (bindings, the expected value): they point
 * into their programs and evaluations, which live until the case ends. */
struct run_ctx {
	struct cel_env *env;
	struct cel_program *progs[17];
	struct cel_evaluation *evs[17];
	size_t n;
};

static int const_value(struct run_ctx *rc, const char *text, struct cel_value *out,
		       struct dt_err *err)
{
	size_t i = rc->n;

	if (i == 17)
		return dt_err_set(err, -ENOSPC, "too many constants");
	if (!rc->env) {
		rc->env = cel_env_new(CEL_ENV_STANDARD, err);
		if (!rc->env)
			return -ENOMEM;
		cel_env_set_checking(rc->env, false);
	}
	rc->evs[i] = cel_evaluation_new();
	if (!rc->evs[i])
		return dt_err_set(err, -ENOMEM, "out of memory");
	rc->n++;
	if (cel_compile(rc->env, text, strlen(text), &rc->progs[i], err) < 0)
		return -EINVAL;
	return cel_eval(rc->progs[i], NULL, 0, rc->evs[i], out, err);
}

static void run_ctx_free(struct run_ctx *rc)
{
	for (size_t i = 0; i < rc->n; i++) {
		cel_program_free(rc->progs[i]);
		cel_evaluation_free(rc->evs[i]);
	}
	cel_env_free(rc->env);
	rc->n = 0;
}

/* Functions of the optional libraries (common/cel/cel_lib_*.c): a build
 * without the library skips their cases instead of failing them. */
static const struct { const char *fn, *lib; } lib_functions[] = {
	{ "matches", "regex" }, { "find", "regex" }, { "findAll", "regex" },
	{ "format", "format" }, { "charAt", "strings" }, { "indexOf", "strings" },
	{ "lastIndexOf", "strings" }, { "lowerAscii", "strings" }, { "upperAscii", "strings" },
	{ "replace", "strings" }, { "split", "strings" }, { "substring", "strings" },
	{ "trim", "strings" }, { "join", "strings" }, { "strings.quote", "strings" },
	{ "quote", "strings" }, { "reverse", "strings" },
};

static const char *missing_library(const char *msg)
{
	const char *p = strstr(msg, "undeclared reference to '");
	size_t n;

	if (!p)
		return NULL;
	p += strlen("undeclared reference to '");
	n = strcspn(p, "'");
	for (size_t i = 0; i < sizeof(lib_functions) / sizeof(lib_functions[0]); i++)
		if (strlen(lib_functions[i].fn) == n && !strncmp(lib_functions[i].fn, p, n))
			return lib_functions[i].lib;
	return NULL;
}

/* Returns 1 pass, 0 fail, 2 skip; *why explains a failure or skip. */
static int run_case(json_object *c, struct strbuf *why)
{
	struct dt_err err = { 0 };
	struct cel_env *env = NULL;
	struct cel_program *prog = NULL;
	struct cel_evaluation *ev = NULL;
	struct run_ctx rc = { 0 };
	struct cel_value vars[32], got, want;
	json_object *decls = NULL, *bindings, *expect, *ev_err;
	json_object *jexpr = NULL;
	const char *expr;
	size_t expr_len;
	const char *want_text, *want_type;
	bool want_error;
	size_t nb = 0;
	int pass = 0, r;

	json_object_object_get_ex(c, "expr", &jexpr);
	expr = json_object_get_string(jexpr);
	expr_len = (size_t)json_object_get_string_len(jexpr);
	json_object_object_get_ex(c, "expect", &expect);
	want_error = json_object_object_get_ex(expect, "error", &ev_err);
	want_text = jstr(expect, "value");
	want_type = jstr(expect, "type");

	env = cel_env_new(CEL_ENV_STANDARD, &err);
	if (!env) {
		sb_printf(why, "env: %s", err.msg);
		goto out;
	}
	cel_env_set_checking(env, !jbool(c, "disableCheck"));
	for (size_t i = 0; i < 32; i++)
		vars[i].kind = CEL_KIND_COUNT;     /* unbound */
	if (json_object_object_get_ex(c, "decls", &decls))
		for (size_t i = 0; i < json_object_array_length(decls); i++) {
			json_object *d = json_object_array_get_idx(decls, i);

			if (cel_env_declare(env, jstr(d, "name"), jstr(d, "type"), &err) < 0) {
				sb_printf(why, "declare: %s", err.msg);
				goto out;
			}
		}
	if (json_object_object_get_ex(c, "bindings", &bindings))
		for (size_t i = 0; i < json_object_array_length(bindings) && i < 16; i++) {
			json_object *b = json_object_array_get_idx(bindings, i);
			const char *name = jstr(b, "name");
			int slot = -1;
			struct cel_value v;

			/* Declared with a type: its slot is its position; else dyn. */
			for (size_t k = 0; decls && k < json_object_array_length(decls); k++)
				if (!strcmp(jstr(json_object_array_get_idx(decls, k), "name"), name))
					slot = (int)k;
			if (slot < 0)
				slot = cel_env_declare(env, name, "dyn", &err);
			if (slot < 0 || slot >= 32 ||
			    const_value(&rc, jstr(b, "expr"), &v, &err) < 0) {
				sb_printf(why, "binding %s: %s", name, err.msg);
				goto out;
			}
			vars[slot] = v;
			nb++;
		}
	r = cel_compile(env, expr, expr_len, &prog, &err);
	if (r < 0) {
		const char *lib = missing_library(err.msg);

		pass = want_error;
		if (!pass && lib) {
			pass = 2;
			sb_printf(why, "the %s library (common/cel/cel_lib_%s.c) is not in this build",
				  lib, lib);
		} else if (!pass) {
			sb_printf(why, "compile: %s", err.msg);
		}
		goto out;
	}
	if (want_type) {
		struct strbuf t = STRBUF_INIT;

		cel_program_result_type(prog, &t);
		if (strcmp(sb_str(&t), want_type)) {
			sb_printf(why, "type %s, want %s", sb_str(&t), want_type);
			sb_free(&t);
			goto out;
		}
		sb_free(&t);
	}
	if (jbool(c, "checkOnly")) {
		pass = 1;
		goto out;
	}
	ev = cel_evaluation_new();
	if (!ev)
		goto out;
	r = cel_eval(prog, vars, 32, ev, &got, &err);
	if (r < 0) {
		pass = want_error;
		if (!pass)
			sb_printf(why, "eval error: %s", err.msg);
		goto out;
	}
	if (want_error) {
		sb_puts(why, "got ");
		cel_value_print(why, &got);
		sb_puts(why, ", want an error");
		goto out;
	}
	if (!want_text) {
		pass = 1;
		goto out;
	}
	if (const_value(&rc, want_text, &want, &err) < 0) {
		sb_printf(why, "expected value %s: %s", want_text, err.msg);
		goto out;
	}
	pass = same_value(&got, &want);
	if (!pass) {
		sb_puts(why, "got ");
		cel_value_print(why, &got);
		sb_printf(why, ", want %s", want_text);
	}
out:
	(void)nb;
	cel_evaluation_free(ev);
	cel_program_free(prog);
	run_ctx_free(&rc);
	cel_env_free(env);
	return pass;
}

int main(int argc, char **argv)
{
	json_object *cases;
	bool verbose = false;
	double min_pass = 98.0;
	size_t passed = 0, failed = 0, skipped = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: conformance CASES.json SKIPLIST [-v] [--min-pass N]\n");
		return 2;
	}
	for (int i = 3; i < argc; i++) {
		if (!strcmp(argv[i], "-v"))
			verbose = true;
		else if (!strcmp(argv[i], "--min-pass") && i + 1 < argc)
			min_pass = atof(argv[++i]);
	}
	if (load_skips(argv[2]) < 0)
		return 2;
	cases = json_object_from_file(argv[1]);
	if (!cases || !json_object_is_type(cases, json_type_array)) {
		fprintf(stderr, "conformance: %s: not a JSON array of cases\n", argv[1]);
		return 2;
	}
	for (size_t i = 0; i < json_object_array_length(cases); i++) {
		json_object *c = json_object_array_get_idx(cases, i);
		char id[256];
		const char *reason = jstr(c, "skip");
		struct strbuf why = STRBUF_INIT;

		snprintf(id, sizeof(id), "%s/%s/%s", jstr(c, "suite"), jstr(c, "section"),
			 jstr(c, "name"));
		if (!reason)
			reason = skip_reason(id);
		if (reason) {
			skipped++;
			count_reason(reason);
			if (verbose)
				printf("SKIP %s: %s\n", id, reason);
			continue;
		}
		int r = run_case(c, &why);

		if (r == 2) {
			skipped++;
			count_reason(sb_str(&why));
			if (verbose)
				printf("SKIP %s: %s\n", id, sb_str(&why));
		} else if (r == 1) {
			passed++;
		} else {
			failed++;
			printf("FAIL %s: %s\n     %s\n", id, jstr(c, "expr"), sb_str(&why));
		}
		sb_free(&why);
	}
	json_object_put(cases);
	free(skips);
	for (size_t i = 0; i < n_reasons; i++)
		printf("skipped %4zu: %s\n", reasons[i].n, reasons[i].reason);
	printf("%zu passed, %zu failed, %zu skipped\n", passed, failed, skipped);
	if (passed + failed == 0)
		return 1;
	return 100.0 * (double)passed / (double)(passed + failed) >= min_pass ? 0 : 1;
}
