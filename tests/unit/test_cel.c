/* test_cel.c - the CEL core: lexer and parser (escapes, errors with
 * positions, guards), checker messages, evaluator semantics (overflow,
 * heterogeneous numbers, error absorption, macros, optionals, time zones),
 * the cost limit and the estimated cost, the DRA `device` variable, the
 * printer and the cache. */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "cel.h"
#include "cel_env.h"
#include "dt_test.h"
#include "strbuf.h"

/* Evaluate expr in environment kind (device bound when dev != NULL) and
 * return the printed result, or "error: MSG" / "compile: MSG". */
static const char *eval_in(enum cel_env_kind kind, const char *expr,
			   const struct cel_device *dev)
{
	static char out[2048];
	struct dt_err err = { 0 };
	struct cel_env *env = cel_env_new(kind, &err);
	struct cel_program *p = NULL;
	struct cel_evaluation *ev = cel_evaluation_new();
	struct cel_value var, v;
	struct strbuf sb = STRBUF_INIT;

	CU_ASSERT_PTR_NOT_NULL_FATAL(env);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ev);
	if (cel_compile(env, expr, strlen(expr), &p, &err) < 0) {
		snprintf(out, sizeof(out), "compile: %s", err.msg);
		goto done;
	}
	if (dev)
		var = cel_device_value(dev);
	if (cel_eval(p, dev ? &var : NULL, dev ? 1 : 0, ev, &v, &err) < 0) {
		snprintf(out, sizeof(out), "error: %s", err.msg);
		goto done;
	}
	cel_value_print(&sb, &v);
	snprintf(out, sizeof(out), "%s", sb_str(&sb));
done:
	sb_free(&sb);
	cel_program_free(p);
	cel_evaluation_free(ev);
	cel_env_free(env);
	return out;
}

/* In the CLI environment (Kubernetes' rules, any result type). */
static const char *eval_dev(const char *expr, const struct cel_device *dev)
{
	return eval_in(CEL_ENV_CLI, expr, dev);
}

static const char *eval(const char *expr)
{
	return eval_dev(expr, NULL);
}

/* In the standard environment (cel-spec's rules: mixed literals allowed). */
static const char *eval_std(const char *expr)
{
	return eval_in(CEL_ENV_STANDARD, expr, NULL);
}

static void test_literals_and_escapes(void)
{
	DT_ASSERT_STR(eval("'a\\tb\\n\\x41\\101\\u00e9\\U0001F600'"), "\"a\\tb\\nAAé😀\"");
	DT_ASSERT_STR(eval("r'a\\tb'"), "\"a\\\\tb\"");
	DT_ASSERT_STR(eval("'''multi\nline'''"), "\"multi\\nline\"");
	DT_ASSERT_STR(eval("r'''a\r\nb\rc'''"), "\"a\\nb\\nc\"");
	DT_ASSERT_STR(eval("'''a'b''c'''"), "\"a'b''c\"");
	DT_ASSERT_STR(eval("b'\\u00e9'"), "compile: ERROR: <input>:1:3: Syntax error: token "
		      "recognition error at: 'b'\\u0'\n | b'\\u00e9'\n | ..^");
	DT_ASSERT_STR(eval("b'\\xff\\000a'"), "b\"\\xff\\x00a\"");
	DT_ASSERT_STR(eval("-9223372036854775808"), "-9223372036854775808");
	DT_ASSERT_STR(eval("0x1F + 18446744073709551615u - 18446744073709551615u"),
		      "compile: ERROR: <input>:1:6: found no matching overload for '_+_' applied "
		      "to '(int, uint)'\n | 0x1F + 18446744073709551615u - 18446744073709551615u\n"
		      " | .....^");
	DT_ASSERT_STR(eval("1e3 + .5"), "1000.5");
	DT_ASSERT_STR(eval_std("[1, 'a', 2.0, true, null, b'x']"),
		      "[1, \"a\", 2.0, true, null, b\"x\"]");
	/* Surrogates are not code points. */
	DT_ASSERT_STR(eval("'\\ud800'"), "compile: ERROR: <input>:1:2: Syntax error: "
		      "token recognition error at: ''\\ud800''\n | '\\ud800'\n | .^");
	/* A pair of them writes a code point outside the BMP, as the spec says;
	 * a lone, reversed or \U-written surrogate is refused. */
	DT_ASSERT_STR(eval("'\\ud83d\\ude00' == '\\U0001F600' && '\\uD800\\uDC00'.size() == 1"),
		      "true");
	DT_ASSERT_STR(eval("'x\\udbff\\udfffy'"), "\"x\U0010ffffy\"");
	CU_ASSERT_PTR_NOT_NULL(strstr(eval("'\\ude00\\ud83d'"), "token recognition error"));
	CU_ASSERT_PTR_NOT_NULL(strstr(eval("'\\ud83d\\u0041'"), "token recognition error"));
	CU_ASSERT_PTR_NOT_NULL(strstr(eval("'\\ud83d'"), "token recognition error"));
	CU_ASSERT_PTR_NOT_NULL(strstr(eval("'\\U0000d800'"), "token recognition error"));
	CU_ASSERT_PTR_NOT_NULL(strstr(eval("b'\\ud83d\\ude00'"), "token recognition error"));
}

/* Kubernetes enables cel-go's HomogeneousAggregateLiterals: the DRA and CLI
 * environments refuse literals mixing static types, at the element that
 * differs; dyn() elements and empty aggregates join anything. */
static void test_homogeneous_literals(void)
{
	DT_ASSERT_STR(eval("[1, 'a']"), "compile: ERROR: <input>:1:5: expected type 'int' but "
		      "found 'string'\n | [1, 'a']\n | ....^");
	DT_ASSERT_STR(eval("{1: 2, 'a': 3}.size()"), "compile: ERROR: <input>:1:8: expected type "
		      "'int' but found 'string'\n | {1: 2, 'a': 3}.size()\n | .......^");
	DT_ASSERT_STR(eval("{'k': 2, 'l': 'v'}"), "compile: ERROR: <input>:1:15: expected type "
		      "'int' but found 'string'\n | {'k': 2, 'l': 'v'}\n | ..............^");
	DT_ASSERT_STR(eval("[[1], ['a']]"), "compile: ERROR: <input>:1:7: expected type "
		      "'list(int)' but found 'list(string)'\n | [[1], ['a']]\n | ......^");
	DT_ASSERT_STR(eval("[1, 2, 3.0]"), "compile: ERROR: <input>:1:8: expected type 'int' but "
		      "found 'double'\n | [1, 2, 3.0]\n | .......^");
	DT_ASSERT_STR(eval("[1, dyn('a')]"), "[1, \"a\"]");
	DT_ASSERT_STR(eval("[dyn('a'), 1, true]"), "[\"a\", 1, true]");
	DT_ASSERT_STR(eval("[[], [1], [2, 3]]"), "[[], [1], [2, 3]]");
	DT_ASSERT_STR(eval("{'a': {}, 'b': {'x': 1}}"), "{\"a\": {}, \"b\": {\"x\": 1}}");
	DT_ASSERT_STR(eval("[?optional.of(1), 2]"), "[1, 2]");
	DT_ASSERT_STR(eval("[1, 2].map(x, [x, x * 2])"), "[[1, 2], [2, 4]]");
	/* The selector environment has the same rule; the standard one does not. */
	{
		struct cel_program *p = NULL;
		struct dt_err err = { 0 };
		const char *e = "[1, 'a'].size() > 0";

		CU_ASSERT_EQUAL(cel_compile_selector(e, strlen(e), true, &p, &err), -EINVAL);
		CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "1:5: expected type 'int' but found 'string'"));
		cel_program_free(p);
	}
	DT_ASSERT_STR(eval_std("[1, 'a'].size() + {1: 2, 'a': 3}.size()"), "4");
	/* Without the checker there are no static types to compare. */
	{
		struct dt_err err = { 0 };
		struct cel_env *env = cel_env_new(CEL_ENV_CLI, &err);
		struct cel_program *p = NULL;

		CU_ASSERT_PTR_NOT_NULL_FATAL(env);
		cel_env_set_checking(env, false);
		CU_ASSERT_EQUAL(cel_compile(env, "[1, 'a']", 8, &p, &err), 0);
		cel_program_free(p);
		cel_env_free(env);
	}
}

/* The standard matches() is there with or without the regex library (a
 * build with -DDRATOPO_CEL_WITHOUT_REGEX=ON runs the core's fallback). */
static void test_standard_matches(void)
{
	static const char name[] = "NVIDIA H100 80GB HBM3";
	const struct cel_device_attr attrs[] = {
		{ "gpu.nvidia.com", "productName", CEL_ATTR_STRING,
		  .v.str = { name, sizeof(name) - 1 } },
	};
	struct cel_device dev = { .driver = "gpu.nvidia.com", .attrs = attrs, .n_attrs = 1 };

	DT_ASSERT_STR(eval("matches('H100 80GB', 'H1[0-9]+') && 'x'.matches('^x$')"), "true");
	DT_ASSERT_STR(eval("'H200'.matches('^H1') || matches('', 'a')"), "false");
	DT_ASSERT_STR(eval("'αβγ'.matches('^.{3}$')"), "true");
	DT_ASSERT_STR(eval_dev("device.attributes['gpu.nvidia.com'].productName.matches('H100')",
			       &dev), "true");
	DT_ASSERT_STR(eval_dev("device.attributes['gpu.nvidia.com'].productName.matches('^H100')",
			       &dev), "false");
	/* A bad constant pattern is a compile error in Kubernetes (cel-go's
	 * ValidateRegexLiterals, QA-60), a runtime one elsewhere. */
	DT_ASSERT_STR(eval("'a'.matches('(')"), "compile: ERROR: <input>:1:13: invalid matches "
		      "argument\n | 'a'.matches('(')\n | ............^");
	CU_ASSERT_PTR_NOT_NULL(strstr(eval("'a'.matches('(' + '')"), "error: error parsing regexp: "));
	CU_ASSERT_PTR_NOT_NULL(strstr(eval_std("'a'.matches('(')"), "error: error parsing regexp: "));
	DT_ASSERT_STR(eval("'a'.matches(1)"), "compile: ERROR: <input>:1:12: found no matching "
		      "overload for 'matches' applied to 'string.(int)'\n | 'a'.matches(1)\n"
		      " | ...........^");
}

static void test_syntax_errors(void)
{
	DT_ASSERT_STR(eval("1 +"), "compile: ERROR: <input>:1:4: Syntax error: mismatched input "
		      "'<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', "
		      "NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n | 1 +\n | ...^");
	DT_ASSERT_STR(eval("if"), "compile: ERROR: <input>:1:1: reserved identifier: if\n | if\n | ^");
	DT_ASSERT_STR(eval("9223372036854775808"),
		      "compile: ERROR: <input>:1:1: invalid int literal\n | 9223372036854775808\n | ^");
	DT_ASSERT_STR(eval("{'a': 1}.if"), "error: no such key: if");
	/* Second line positions count from the line start. */
	DT_ASSERT_STR(eval("1 +\n  )"), "compile: ERROR: <input>:2:3: Syntax error: mismatched "
		      "input ')' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', "
		      "NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n |   )\n | ..^");
}

static void test_depth_guard(void)
{
	/* Fuzzer find: optMap uses its target twice, so a chain of them is a
	 * tree exponentially larger than the text; compiling it is refused
	 * quickly instead of walking 2^k nodes. */
	{
		char e[1024] = "optional.of(1)";

		for (int i = 0; i < 40; i++)
			strcat(e, ".optMap(x, x)");
		CU_ASSERT_PTR_NOT_NULL(strstr(eval(e), "compile: ERROR: <input>:1:"));
		CU_ASSERT_PTR_NOT_NULL(strstr(eval(e), "expression too large: more than 400000 "
					      "nodes once macros are expanded"));
		e[strlen("optional.of(1)") + 8 * strlen(".optMap(x, x)")] = 0;
		DT_ASSERT_STR(eval(e), "optional.of(1)");
	}
	struct strbuf sb = STRBUF_INIT;
	const char *r;

	/* The spec's minimums parse ... */
	for (int i = 0; i < 24; i++)
		sb_puts(&sb, "false ? 0 : ");
	sb_puts(&sb, "1");
	DT_ASSERT_STR(eval(sb_str(&sb)), "1");
	sb_reset(&sb);
	for (int i = 0; i < 12; i++)
		sb_puts(&sb, "[");
	for (int i = 0; i < 12; i++)
		sb_puts(&sb, "]");
	DT_ASSERT_STR(eval(sb_str(&sb)), "[[[[[[[[[[[[]]]]]]]]]]]]");
	sb_reset(&sb);
	/* ... and absurd nesting is an error, not a stack overflow. */
	for (int i = 0; i < 5000; i++)
		sb_putc(&sb, '(');
	sb_putc(&sb, '1');
	for (int i = 0; i < 5000; i++)
		sb_putc(&sb, ')');
	r = eval(sb_str(&sb));
	CU_ASSERT_PTR_NOT_NULL(strstr(r, "expression recursion limit exceeded"));
	sb_reset(&sb);
	for (int i = 0; i < 5000; i++)
		sb_puts(&sb, "[");
	r = eval(sb_str(&sb));
	CU_ASSERT_PTR_NOT_NULL(strstr(r, "compile: ERROR"));
	/* Long chains make deep trees without deep parsing: bounded too. */
	sb_reset(&sb);
	sb_puts(&sb, "{'a': 1}");
	for (int i = 0; i < 20000; i++)
		sb_puts(&sb, ".a");
	r = eval(sb_str(&sb));
	CU_ASSERT_PTR_NOT_NULL(strstr(r, "expression nested too deeply"));
	sb_reset(&sb);
	sb_puts(&sb, "1");
	for (int i = 0; i < 30000; i++)
		sb_puts(&sb, " + 1");
	r = eval(sb_str(&sb));
	CU_ASSERT_PTR_NOT_NULL(strstr(r, "expression nested too deeply"));
	sb_reset(&sb);
	sb_puts(&sb, "0");
	for (int i = 0; i < 400; i++)
		sb_puts(&sb, " + 1");
	DT_ASSERT_STR(eval(sb_str(&sb)), "400");
	sb_free(&sb);
}

static void test_checker_errors(void)
{
	struct cel_program *p = NULL;
	struct dt_err err = { 0 };

	DT_ASSERT_STR(eval("1 + x"), "compile: ERROR: <input>:1:5: undeclared reference to 'x' "
		      "(in container '')\n | 1 + x\n | ....^");
	DT_ASSERT_STR(eval("'a'.size(1)"), "compile: ERROR: <input>:1:9: found no matching "
		      "overload for 'size' applied to 'string.(int)'\n | 'a'.size(1)\n | ........^");
	DT_ASSERT_STR(eval("nosuch(1)"), "compile: ERROR: <input>:1:1: undeclared reference to "
		      "'nosuch' (in container '')\n | nosuch(1)\n | ^");
	/* Selectors must be bool (or dyn). */
	CU_ASSERT_EQUAL(cel_compile_selector("1 + 1", 5, false, &p, &err), -EINVAL);
	DT_ASSERT_STR(err.msg, "must evaluate to bool or the unknown type, not int");
	CU_ASSERT_PTR_NULL(p);
	CU_ASSERT_EQUAL(cel_compile_selector("device.nosuch", 13, false, &p, &err), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "undefined field 'nosuch'"));
}

static void test_arithmetic(void)
{
	DT_ASSERT_STR(eval("9223372036854775807 + 1"), "error: integer overflow");
	DT_ASSERT_STR(eval("-9223372036854775808 / -1"), "error: integer overflow");
	DT_ASSERT_STR(eval("1 / 0"), "error: division by zero");
	DT_ASSERT_STR(eval("5 % 0"), "error: modulus by zero");
	DT_ASSERT_STR(eval("0u - 1u"), "error: unsigned integer overflow");
	DT_ASSERT_STR(eval("-7 / 2"), "-3");
	DT_ASSERT_STR(eval("-7 % 2"), "-1");
	DT_ASSERT_STR(eval("1.0 / 0.0"), "double(\"inf\")");
	DT_ASSERT_STR(eval("int(1e19)"), "error: integer overflow");
	DT_ASSERT_STR(eval("int(-3.9)"), "-3");
	DT_ASSERT_STR(eval("uint(-1)"), "error: unsigned integer overflow");
	DT_ASSERT_STR(eval("string(1e100)"), "\"1e+100\"");
	DT_ASSERT_STR(eval("string(123456789.0)"), "\"1.23456789e+08\"");
	DT_ASSERT_STR(eval("double('1.5') + double(2u)"), "3.5");
}

static void test_equality_and_ordering(void)
{
	DT_ASSERT_STR(eval("dyn(1) == 1.0 && dyn(1u) == 1 && 2 < 2.5 && 3u > -1"), "true");
	DT_ASSERT_STR(eval("dyn(1) == 'a'"), "false");
	DT_ASSERT_STR(eval("double('nan') == double('nan')"), "false");
	DT_ASSERT_STR(eval_std("[1, [2]] == [1.0, [2u]] && {'a': dyn(1)} == {'a': dyn(1.0)}"),
		      "true");
	DT_ASSERT_STR(eval("[1, dyn([2])] == [1.0, dyn([2u])] && {'a': dyn(1)} == {'a': 1.0}"),
		      "true");
	DT_ASSERT_STR(eval("b'a' < b'b' && 'abc' > 'abb' && false < true"), "true");
}

static void test_logic_absorbs_errors(void)
{
	DT_ASSERT_STR(eval("1/0 == 0 && false"), "false");
	DT_ASSERT_STR(eval("false && 1/0 == 0"), "false");
	DT_ASSERT_STR(eval("1/0 == 0 || true"), "true");
	DT_ASSERT_STR(eval("1/0 == 0 && true"), "error: division by zero");
	DT_ASSERT_STR(eval("true ? 1 : 1/0"), "1");
	DT_ASSERT_STR(eval("!(1/0 == 0)"), "error: division by zero");
	DT_ASSERT_STR(eval("[1, 0].all(x, 1/x > 0)"), "error: division by zero");
	DT_ASSERT_STR(eval("[0, 1].exists(x, 1/x > 0)"), "true");
}

static void test_macros(void)
{
	DT_ASSERT_STR(eval("[1, 2, 3].map(x, x * 2)"), "[2, 4, 6]");
	DT_ASSERT_STR(eval("[1, 2, 3].map(x, x > 1, x * 10)"), "[20, 30]");
	DT_ASSERT_STR(eval("[1, 2, 3].filter(x, x % 2 == 1)"), "[1, 3]");
	DT_ASSERT_STR(eval("[1, 2, 3].exists_one(x, x > 2)"), "true");
	DT_ASSERT_STR(eval("{'a': 1, 'b': 2}.all(k, k.size() == 1)"), "true");
	DT_ASSERT_STR(eval("has({'a': 1}.a) && !has({'a': 1}.b)"), "true");
	DT_ASSERT_STR(eval("cel.bind(x, 20, x + x)"), "40");
	DT_ASSERT_STR(eval("[10, 20].all(i, v, v == (i + 1) * 10)"), "true");
	DT_ASSERT_STR(eval("[1, 2].transformList(i, v, v + i)"), "[1, 3]");
	DT_ASSERT_STR(eval("{'a': 1}.transformMap(k, v, v + 1)"), "{\"a\": 2}");
	DT_ASSERT_STR(eval("[1, 2].transformMapEntry(i, v, {string(v): i})"), "{\"1\": 0, \"2\": 1}");
	/* Comprehension variables shadow, a leading dot reaches the root. */
	DT_ASSERT_STR(eval("[1].map(x, [2].map(x, x))"), "[[2]]");
	DT_ASSERT_STR(eval("has(1)"), "compile: ERROR: <input>:1:5: invalid argument to has() "
		      "macro\n | has(1)\n | ....^");
}

static void test_optionals(void)
{
	DT_ASSERT_STR(eval("optional.of(1).orValue(2) + optional.none().orValue(3)"), "4");
	DT_ASSERT_STR(eval("{'a': {'b': 1}}.?a.?b"), "optional.of(1)");
	DT_ASSERT_STR(eval("{'a': 1}.?z.orValue(0)"), "0");
	DT_ASSERT_STR(eval("[1, 2][?5].hasValue()"), "false");
	DT_ASSERT_STR(eval("[?optional.none(), ?optional.of(1)]"), "[1]");
	DT_ASSERT_STR(eval("{?'k': optional.none(), 'j': 2}"), "{\"j\": 2}");
	DT_ASSERT_STR(eval("optional.of(2).optMap(x, x * 3)"), "optional.of(6)");
	DT_ASSERT_STR(eval("optional.ofNonZeroValue(0)"), "optional.none()");
	DT_ASSERT_STR(eval("optional.none().value()"), "error: optional.none() dereference");
}

static void test_time(void)
{
	DT_ASSERT_STR(eval("timestamp('2009-02-13T23:31:30Z') + duration('1h30m')"),
		      "timestamp(\"2009-02-14T01:01:30Z\")");
	DT_ASSERT_STR(eval("timestamp('2009-02-13T23:31:30Z').getHours('America/Los_Angeles')"), "15");
	DT_ASSERT_STR(eval("timestamp('2009-02-13T23:31:30Z').getHours('+05:30')"), "5");
	/* Past the zone file's table the POSIX rule applies (EDT in July). */
	DT_ASSERT_STR(eval("timestamp('2050-07-01T12:00:00Z').getHours('America/New_York')"), "8");
	DT_ASSERT_STR(eval("timestamp('2050-01-01T12:00:00Z').getHours('America/New_York')"), "7");
	DT_ASSERT_STR(eval("timestamp('2050-01-01T12:00:00Z').getHours('Australia/Sydney')"), "23");
	DT_ASSERT_STR(eval("timestamp('2050-07-01T12:00:00Z').getHours('Australia/Sydney')"), "22");
	DT_ASSERT_STR(eval("timestamp('2050-07-01T12:00:00Z').getHours('Asia/Kolkata')"), "17");
	DT_ASSERT_STR(eval("timestamp('2009-02-13T23:31:30Z').getDayOfWeek()"), "5");
	DT_ASSERT_STR(eval("timestamp('2009-02-13T23:31:30.5Z').getMilliseconds()"), "500");
	/* Go's time.Parse(time.RFC3339), as cel-go and the API server read
	 * timestamps: upper-case T and Z only, a one-digit hour, a ',' before
	 * the fraction, the offset applied */
	DT_ASSERT_STR(eval_std("timestamp('2009-02-13t23:31:30z')"),
		      "error: invalid timestamp \"2009-02-13t23:31:30z\"");
	DT_ASSERT_STR(eval("timestamp('2024-02-29T3:04:05,5+01:00')"),
		      "timestamp(\"2024-02-29T02:04:05.5Z\")");
	DT_ASSERT_STR(eval("duration('-1.5s')"), "duration(\"-1.5s\")");
	DT_ASSERT_STR(eval("timestamp('9999-12-31T23:59:59Z') + duration('1s')"),
		      "error: timestamp out of range");
	DT_ASSERT_STR(eval_std("timestamp('2009-02-30T00:00:00Z')"),
		      "error: invalid timestamp \"2009-02-30T00:00:00Z\"");
	/* Kubernetes checks constant arguments when it compiles (QA-60). */
	DT_ASSERT_STR(eval("timestamp('2009-02-30T00:00:00Z')"), "compile: ERROR: <input>:1:11: "
		      "invalid timestamp argument\n | timestamp('2009-02-30T00:00:00Z')\n"
		      " | ..........^");
	DT_ASSERT_STR(eval("duration('1x') < duration('1s')"), "compile: ERROR: <input>:1:10: "
		      "invalid duration argument\n | duration('1x') < duration('1s')\n | .........^");
	DT_ASSERT_STR(eval("duration('1' + 'x')"), "error: invalid duration \"1x\"");
	DT_ASSERT_STR(eval("timestamp(0) < timestamp('2009-02-13T23:31:30Z')"), "true");
	DT_ASSERT_STR(eval("timestamp('2009-02-13T23:31:30Z').getHours('Nowhere/City')"),
		      "error: unknown time zone \"Nowhere/City\"");
}

static void test_printer(void)
{
	DT_ASSERT_STR(eval("3u"), "3u");
	DT_ASSERT_STR(eval("1e100"), "1e+100");
	DT_ASSERT_STR(eval("0.1"), "0.1");
	DT_ASSERT_STR(eval("100.0"), "100.0");
	DT_ASSERT_STR(eval("-0.00025"), "-0.00025");
	DT_ASSERT_STR(eval("1.5e-7"), "1.5e-07");
	DT_ASSERT_STR(eval("123456789012.5"), "123456789012.5");
	DT_ASSERT_STR(eval("-double('inf')"), "double(\"-inf\")");
	DT_ASSERT_STR(eval("'q\"\\\\\\x01'"), "\"q\\\"\\\\\\x01\"");
	DT_ASSERT_STR(eval("int"), "int");
	DT_ASSERT_STR(eval("type([1])"), "list");
	DT_ASSERT_STR(eval("duration('3600s')"), "duration(\"3600s\")");
}

static void test_cost_limit(void)
{
	const char *expr = "[0,1,2,3,4,5,6,7,8,9].all(a, [0,1,2,3,4,5,6,7,8,9].all(b, "
			   "[0,1,2,3,4,5,6,7,8,9].all(c, [0,1,2,3,4,5,6,7,8,9].all(d, "
			   "[0,1,2,3,4,5,6,7,8,9].all(e, [0,1,2,3,4,5,6,7,8,9].all(f, "
			   "[0,1,2,3,4,5,6,7,8,9].all(g, true)))))))";
	struct cel_program *p = NULL;
	struct dt_err err = { 0 };
	struct cel_device dev = { .driver = "d" };
	bool match;

	CU_ASSERT_EQUAL_FATAL(cel_compile_selector(expr, strlen(expr), false, &p, &err), 0);
	CU_ASSERT_EQUAL(cel_eval_selector(p, &dev, &match, &err), -ECANCELED);
	DT_ASSERT_STR(err.msg, "operation cancelled: actual cost limit exceeded");
	cel_program_free(p);
	/* The estimate rejects it up front when asked to. */
	CU_ASSERT_EQUAL(cel_compile_selector(expr, strlen(expr), true, &p, &err), -EINVAL);
	DT_ASSERT_STR(err.msg, "too complex, exceeds cost limit");
	/* String growth is bounded too. */
	DT_ASSERT_STR(eval("[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25]"
			   ".map(x, 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa')"
			   ".all(s, [1,2,3,4,5,6,7,8,9,10].all(t, (s + s + s + s).size() > 0))"),
		      "true");
}

/* The runtime cost of expr with x bound to a 21-character string. */
static uint64_t cost_of(const char *expr)
{
	struct dt_err err = { 0 };
	struct cel_env *env = cel_env_new(CEL_ENV_CLI, &err);
	struct cel_program *p = NULL;
	struct cel_evaluation *ev = cel_evaluation_new();
	struct cel_value vars[2] = { cel_null(), cel_string("abcdefghijklmnopqrstu", 21) }, out;
	uint64_t cost = UINT64_MAX;

	CU_ASSERT_PTR_NOT_NULL_FATAL(env);
	CU_ASSERT_EQUAL(cel_env_declare(env, "x", "dyn", &err), 1);
	if (cel_compile(env, expr, strlen(expr), &p, &err) == 0 &&
	    cel_eval(p, vars, 2, ev, &out, &err) == 0)
		cost = cel_evaluation_cost(ev);
	cel_program_free(p);
	cel_evaluation_free(ev);
	cel_env_free(env);
	return cost;
}

/* cel-go's runtime cost model (interpreter/runtimecost.go). */
static void test_runtime_costs(void)
{
	CU_ASSERT_EQUAL(cost_of("x"), 1);                        /* ident */
	CU_ASSERT_EQUAL(cost_of("x == 'abc'"), 1 + 1);            /* ceil(0.1 * min(21, 3)) */
	CU_ASSERT_EQUAL(cost_of("x == x"), 1 + 1 + 3);           /* ceil(2.1) */
	CU_ASSERT_EQUAL(cost_of("x.startsWith('a')"), 1 + 1);    /* the prefix's length */
	CU_ASSERT_EQUAL(cost_of("x.contains('abcdefghijk')"), 1 + 3 * 2);
	CU_ASSERT_EQUAL(cost_of("x + x"), 1 + 1 + 5);            /* ceil(0.1 * 42) */
	CU_ASSERT_EQUAL(cost_of("x.size() > 1 ? 1 : 2"), 1 + 1 + 1);
	CU_ASSERT_EQUAL(cost_of("[x, x]"), 10 + 2);              /* list literal */
	CU_ASSERT_EQUAL(cost_of("{x: 1}"), 30 + 1);              /* map literal */
	CU_ASSERT_EQUAL(cost_of("x in [x]"), 1 + (10 + 1) + 1);  /* list size */
	/* map: each step is accu + [t] (ident, literal, add) plus t. */
	CU_ASSERT_EQUAL(cost_of("[1, 2, 3].map(v, v * 2)"), 3 * (1 + 1 + 1 + 11) + 1);
	CU_ASSERT_EQUAL(cost_of("has({'a': x}.a)"), 30 + 1);     /* has() is free */
}

/* The estimated cost of expr in the CLI environment (`device` declared). */
static uint64_t estimate_of(const char *expr)
{
	struct dt_err err = { 0 };
	struct cel_env *env = cel_env_new(CEL_ENV_CLI, &err);
	struct cel_program *p = NULL;
	uint64_t cost = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(env);
	CU_ASSERT_EQUAL(cel_compile(env, expr, strlen(expr), &p, &err), 0);
	if (p)
		cost = cel_program_estimated_cost(p);
	cel_program_free(p);
	cel_env_free(env);
	return cost;
}

/* Estimated costs as cel-go's checker (checker/cost.go) gives them in the
 * Kubernetes DRA environment, derived by hand from its rules (cel-go is not
 * run here): identifiers 1, selections on a map or object 1, has() 0,
 * literals 0, calls 1 unless the function says otherwise, a list literal
 * 10; a comprehension costs range + init + result + iterations x
 * (condition + step). Sizes are exact for literals, what compile.go declares
 * for the device (maps 32 entries, attribute values 64, domains 63, ids 32,
 * the driver 63, capacities none), carried through concatenations,
 * conditions, indexes and comprehensions, else unbounded. */
static void test_estimated_costs(void)
{
	/* device 1, .driver 1, == ceil(0.1 x min(63, 14)) */
	CU_ASSERT_EQUAL(estimate_of("device.driver == 'gpu.nvidia.com'"), 2 + 2);
	/* device, .attributes, ["d"], .name; == ceil(0.1 x min(64, 3)) */
	CU_ASSERT_EQUAL(estimate_of("device.attributes['d'].name == 'abc'"), 4 + 1);
	/* Quantity == Quantity costs 1 (Kubernetes' library.CostEstimator);
	 * quantity() ceil(0.1 x 3) */
	CU_ASSERT_EQUAL(estimate_of("device.capacity['d']['m'] == quantity('1Gi')"), 4 + 1 + 1);
	/* startsWith: ceil(0.1 x the prefix's 2) */
	CU_ASSERT_EQUAL(estimate_of("device.attributes['d'].name.startsWith('nv')"), 4 + 1);
	CU_ASSERT_EQUAL(estimate_of("has(device.attributes.d)"), 2);
	/* map: 10 + 10 + 1 + 3 x (0 + @result 1 + [x * 2] 12 + add_list 1) */
	CU_ASSERT_EQUAL(estimate_of("[1, 2, 3].map(x, x * 2)"), 21 + 3 * 14);
	/* all: condition @not_strictly_false(@result) 2, step @result && p 1 + p */
	CU_ASSERT_EQUAL(estimate_of("[0,1,2,3,4,5,6,7,8,9].all(a, [0,1,2,3,4,5,6,7,8,9].all(b, "
				    "true))"), 11 + 10 * (2 + 1 + (11 + 10 * 3)));
	/* a bound variable has its value's size: 10 ([]) + 10 + (1 + 1 + 3 x 5) */
	CU_ASSERT_EQUAL(estimate_of("cel.bind(x, [1, 2, 3], x.all(y, y > 0))"), 20 + 17);
	/* the concatenation's size 5, not the literal's 26: ceil(0.5) */
	CU_ASSERT_EQUAL(estimate_of("('ab' + 'cde') == 'abcdefghijklmnopqrstuvwxyz'"), 1 + 1);
	/* sizes count code points: 'é' is one */
	CU_ASSERT_EQUAL(estimate_of("'é' + 'ab' == 'abcdefghijklmnopqrstuvwxyz'"), 1 + 1);
	/* a list concatenation is 3 elements: 21 + 1 + 3 x (2 + 1 + 2) */
	CU_ASSERT_EQUAL(estimate_of("([1, 2] + [3]).all(x, x > 0)"), 22 + 15);
	/* a map literal's value size: 30 + index 1, == ceil(0.1 x min(3, 26)) */
	CU_ASSERT_EQUAL(estimate_of("{'a': 'xyz'}['a'] == 'abcdefghijklmnopqrstuvwxyz'"), 31 + 1);
	/* filter keeps at most the range's 3: 66 + 1 + 3 x 5 */
	CU_ASSERT_EQUAL(estimate_of("[1, 2, 3].filter(x, x > 1).all(y, y > 0)"), 67 + 15);
	/* a condition is its dearer branch, either size: 10 + 1 + 2 x 5 */
	CU_ASSERT_EQUAL(estimate_of("(true ? [1] : [1, 2]).all(x, x > 0)"), 11 + 10);
	/* dyn() costs 1 and keeps the size: 11 + 1 + 2 x 5 */
	CU_ASSERT_EQUAL(estimate_of("dyn([1, 2]).all(x, x > 0)"), 12 + 10);
	/* a list attribute has at most 64 values: 4 + 1 + 64 x (2 + 3) */
	CU_ASSERT_EQUAL(estimate_of("device.attributes['d'].roots.all(r, r > 0)"), 5 + 64 * 5);
	/* 32 domains; d == K: ceil(0.1 x min(63, 26)) = 3; 3 + 32 x (3 + 5) */
	CU_ASSERT_EQUAL(estimate_of("device.attributes.exists(d, d == "
				    "'abcdefghijklmnopqrstuvwxyz')"), 3 + 32 * 8);
	/* two variables over an attribute map: 32 values of 64; 4 + 32 x (2 + 3) */
	CU_ASSERT_EQUAL(estimate_of("device.attributes['d'].all(k, v, v == 1)"), 4 + 32 * 5);
	/* three levels over the attribute maps: ids a and b are 32 long, a != b
	 * ceil(3.2) = 4; inner 4 + 1 + 32 x 9 = 293, middle 5 + 32 x 296 = 9477,
	 * outer 3 + 32 x 9480 */
	CU_ASSERT_EQUAL(estimate_of("device.attributes.all(d, device.attributes[d].all(a, "
				    "device.attributes[d].all(b, a != b)))"), 303363);
	/* lists.range(N) with a literal N holds N (ext.Lists version 3's
	 * estimator): the call N + 1 + 10, @result 1, then 3 x (2 + 1 + 2) */
	CU_ASSERT_EQUAL(estimate_of("lists.range(3).all(x, x >= 0)"), 14 + 1 + 15);
	/* with any other N nothing bounds it */
	CU_ASSERT_EQUAL(estimate_of("lists.range(size(device.attributes)).all(x, x >= 0)"),
			UINT64_MAX);
	/* reverse keeps its target's 3: 10 + (3 + 11) + 1 + 3 x 5 */
	CU_ASSERT_EQUAL(estimate_of("[1, 2, 3].reverse().all(x, x > 0)"), 24 + 1 + 15);
	/* slice(1, 3) holds 2 (its literals cost 0): 10 + (2 + 11) + 1 + 2 x 5 */
	CU_ASSERT_EQUAL(estimate_of("[1, 2, 3].slice(1, 3).all(x, x > 0)"), 23 + 1 + 10);
	/* sort compares 2 x 3^2: 10 + (18 + 11), == a list literal 10 + 1 */
	CU_ASSERT_EQUAL(estimate_of("[3, 1, 2].sort() == [1, 2, 3]"), 10 + 29 + 10 + 1);
	/* strings are traversed: 2.1 x 3^2 = 18.9, truncated as cel-go does;
	 * size() 1, == 1 */
	CU_ASSERT_EQUAL(estimate_of("['b', 'a', 'c'].sort().size() == 3"), 10 + 29 + 1 + 1);
	/* Kubernetes' estimator prices == of two Semvers (Quantities, IPs,
	 * CIDRs) at 1 (the kubernetes.io website's claim template compares
	 * quantities so); two calls of ceil(0.1 x 5) */
	CU_ASSERT_EQUAL(estimate_of("semver('1.0.0') == semver('1.0.0')"), 1 + 1 + 1);
}

/* The API server's check of stored selectors (QA-38): unbounded is too
 * complex, 32-entry attribute maps nest three deep. */
static void test_selector_cost_check(void)
{
	static const char unbounded[] = "lists.range(1000000).exists(x, x == 999999)";
	static const char nested[] = "device.attributes.all(d, device.attributes[d].all(a, "
				     "device.attributes[d].all(b, a != b)))";
	char msg[256];

	CU_ASSERT_EQUAL(cel_selector_check(unbounded, strlen(unbounded), msg, sizeof(msg), NULL),
			-E2BIG);
	DT_ASSERT_STR(msg, "too complex, exceeds cost limit");
	CU_ASSERT_EQUAL(cel_selector_check(nested, strlen(nested), msg, sizeof(msg), NULL), 0);
}

/* An H200-like device for the selector tests. */
static struct quantity mem_q;
static struct semver cc_v;
static struct cel_device_attr h200_attrs[4];
static struct cel_device_capacity h200_cap[1];
static struct cel_device h200;

static void setup_h200(void)
{
	struct dt_err err;

	CU_ASSERT_EQUAL_FATAL(quantity_parse_str("143771Mi", &mem_q, &err), 0);
	CU_ASSERT_EQUAL_FATAL(semver_parse("9.0.0", 5, &cc_v, &err), 0);
	h200_attrs[0] = (struct cel_device_attr){ "gpu.nvidia.com", "productName", CEL_ATTR_STRING,
						  .v.str = { "NVIDIA H200", 11 } };
	h200_attrs[1] = (struct cel_device_attr){ "gpu.nvidia.com", "memoryMiB", CEL_ATTR_INT,
						  .v.i = 143771 };
	h200_attrs[2] = (struct cel_device_attr){ "gpu.nvidia.com", "cudaComputeCapability",
						  CEL_ATTR_VERSION, .v.version = &cc_v };
	h200_attrs[3] = (struct cel_device_attr){ "dra.net", "rdma", CEL_ATTR_BOOL, .v.b = true };
	h200_cap[0] = (struct cel_device_capacity){ "gpu.nvidia.com", "memory", &mem_q };
	h200 = (struct cel_device){ "gpu.nvidia.com", h200_attrs, 4, h200_cap, 1, false };
}

static void test_device_variable(void)
{
	setup_h200();
	DT_ASSERT_STR(eval_dev("device.driver", &h200), "\"gpu.nvidia.com\"");
	DT_ASSERT_STR(eval_dev("device.attributes['gpu.nvidia.com'].memoryMiB", &h200), "143771");
	DT_ASSERT_STR(eval_dev("device.attributes['dra.net'].rdma", &h200), "true");
	/* The direct lookup and the generic path agree, errors included. */
	DT_ASSERT_STR(eval_dev("device.attributes['gpu.nvidia.com']['memoryMiB'] == "
			       "cel.bind(a, device.attributes, a['gpu.nvidia.com'].memoryMiB)", &h200),
		      "true");
	DT_ASSERT_STR(eval_dev("device.attributes['nope.example.com'].x", &h200),
		      "error: no such key: x");
	DT_ASSERT_STR(eval_dev("cel.bind(a, device.attributes, a['nope.example.com'].x)", &h200),
		      "error: no such key: x");
	DT_ASSERT_STR(eval_dev("device.capacity['dra.net'].memory", &h200),
		      "error: no such key: memory");
	DT_ASSERT_STR(eval_dev("device.attributes['unknown.example.com']", &h200), "{}");
	DT_ASSERT_STR(eval_dev("'unknown.example.com' in device.attributes", &h200), "false");
	DT_ASSERT_STR(eval_dev("device.attributes['gpu.nvidia.com'].missing", &h200),
		      "error: no such key: missing");
	DT_ASSERT_STR(eval_dev("has(device.attributes['gpu.nvidia.com'].missing)", &h200), "false");
	DT_ASSERT_STR(eval_dev("device.attributes['gpu.nvidia.com'].?missing.orValue(7)", &h200),
		      "7");
	DT_ASSERT_STR(eval_dev("device.capacity['gpu.nvidia.com'].memory", &h200),
		      "quantity(\"143771Mi\")");
	DT_ASSERT_STR(eval_dev("device.attributes['gpu.nvidia.com'].cudaComputeCapability", &h200),
		      "semver(\"9.0.0\")");
	DT_ASSERT_STR(eval_dev("device.allowMultipleAllocations", &h200), "false");
	DT_ASSERT_STR(eval_dev("device.attributes.size()", &h200), "2");
	DT_ASSERT_STR(eval_dev("device.attributes['gpu.nvidia.com'].productName.includes("
			       "'NVIDIA H200')", &h200), "true");
}

/* Result and cost of expr on dev, checked (the device shapes are resolved
 * at compile time: N_DEVICE_ITEM, N_DEVICE_CMP) or not (the generic tree:
 * without static types nothing is rewritten). */
static void eval_checked(const char *expr, const struct cel_device *dev, bool checked,
			 char *out, size_t size, uint64_t *cost)
{
	struct dt_err err = { 0 };
	struct cel_env *env = cel_env_new(CEL_ENV_CLI, &err);
	struct cel_program *p = NULL;
	struct cel_evaluation *ev = cel_evaluation_new();
	struct cel_value var = cel_device_value(dev), v;
	struct strbuf sb = STRBUF_INIT;

	CU_ASSERT_PTR_NOT_NULL_FATAL(env);
	cel_env_set_checking(env, checked);
	*cost = 0;
	if (cel_compile(env, expr, strlen(expr), &p, &err) < 0) {
		snprintf(out, size, "compile: %s", err.msg);
	} else if (cel_eval(p, &var, 1, ev, &v, &err) < 0) {
		snprintf(out, size, "error: %s", err.msg);
		*cost = cel_evaluation_cost(ev);
	} else {
		cel_value_print(&sb, &v);
		snprintf(out, size, "%s", sb_str(&sb));
		*cost = cel_evaluation_cost(ev);
	}
	sb_free(&sb);
	cel_program_free(p);
	cel_evaluation_free(ev);
	cel_env_free(env);
}

/* expr gives the same value or error and cost checked (rewritten) and
 * unchecked; 0 when it does not compile checked (bool < [1], 0u == 1). */
static size_t same_checked_and_not(const char *expr, const struct cel_device *dev)
{
	char fused[512], generic[512];
	uint64_t c1, c2;

	eval_checked(expr, dev, true, fused, sizeof(fused), &c1);
	if (!strncmp(fused, "compile:", 8))
		return 0;
	eval_checked(expr, dev, false, generic, sizeof(generic), &c2);
	if (strcmp(fused, generic) || c1 != c2)
		fprintf(stderr, "\n  %s\n    fused   %s (cost %llu)\n    generic %s (cost %llu)\n",
			expr, fused, (unsigned long long)c1, generic, (unsigned long long)c2);
	CU_ASSERT_STRING_EQUAL(fused, generic);
	CU_ASSERT_EQUAL(c1, c2);
	return 1;
}

/* The compile-time device shapes give what the generic tree gives: the
 * same value or error and the same cost, for every comparison, either
 * side constant, matching and mismatching types, missing attributes.
 * Returns how many expressions compiled and were compared. */
static size_t compare_shapes(const struct cel_device *dev)
{
	static const char *const items[] = {
		"device.attributes['gpu.nvidia.com'].productName",
		"device.attributes['gpu.nvidia.com']['memoryMiB']",
		"device.attributes['dra.net'].rdma",
		"device.attributes['gpu.nvidia.com'].cudaComputeCapability",
		"device.attributes['gpu.nvidia.com'].long",
		"device.attributes['gpu.nvidia.com'].empty",
		"device.attributes['gpu.nvidia.com'].missing",
		"device.attributes['nope.example.com'].x",
		"device.capacity['gpu.nvidia.com'].memory",
		"device.capacity['gpu.nvidia.com'].missing",
	};
	static const char *const consts[] = {
		"'NVIDIA H200'", "'NVIDIA H100'", "'NVIDIA H2000'", "''", "'NVIDIA H200 NVL 141GB HBM3e PCIe'",
		"143771", "143772", "-1", "143771u", "143771.0", "143771.5", "(0.0 / 0.0)",
		"true", "false", "semver('9.0.0')", "quantity('100Gi')", "[1]",
	};
	static const char *const ops[] = { "==", "!=", "<", "<=", ">", ">=" };
	static const char *const versions[] = { "9.0.0", "8.9.0", "9.0.1", "9.0.0-rc1" };
	static const char *const quantities[] = { "100Gi", "143771Mi", "200Gi", "0" };
	static const char *const ints[] = { "0", "1", "-1", "0u", "0.0" };
	char expr[512];
	size_t cases = 0;

	for (size_t i = 0; i < CEL_ARRAY_LEN(items); i++)
		for (size_t k = 0; k < CEL_ARRAY_LEN(consts); k++)
			for (size_t o = 0; o < CEL_ARRAY_LEN(ops); o++)
				for (int swap = 0; swap < 2; swap++) {
					snprintf(expr, sizeof(expr), "%s %s %s",
						 swap ? consts[k] : items[i], ops[o],
						 swap ? items[i] : consts[k]);
					cases += same_checked_and_not(expr, dev);
				}
	for (size_t f = 0; f < 3; f++)
		for (size_t v = 0; v < 4; v++)
			for (size_t o = 0; o < CEL_ARRAY_LEN(ops); o++)
				for (size_t k = 0; k < CEL_ARRAY_LEN(ints); k++) {
					char call[200];

					if (f == 0)
						snprintf(call, sizeof(call), "%s.compareTo(semver('%s'))",
							 items[3], versions[v]);
					else if (f == 1)
						snprintf(call, sizeof(call), "%s.compareTo(quantity('%s'))",
							 items[8], quantities[v]);
					else    /* no such overload, and a missing attribute */
						snprintf(call, sizeof(call), "%s.compareTo(semver('%s'))",
							 items[v % 2 ? 6 : 8], versions[v]);
					if (k % 2)
						snprintf(expr, sizeof(expr), "%s %s %s", ints[k], ops[o],
							 call);
					else
						snprintf(expr, sizeof(expr), "%s %s %s", call, ops[o],
							 ints[k]);
					cases += same_checked_and_not(expr, dev);
				}
	return cases;
}

/* Interned names are canonical: equal text, one pointer, never the
 * caller's. */
static void test_intern(void)
{
	char buf[300], other[16] = "productName";
	const char *a = cel_intern("productName"), *b = cel_intern(other);

	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	CU_ASSERT_PTR_EQUAL(a, b);
	CU_ASSERT_PTR_NOT_EQUAL(b, other);
	strcpy(other, "memoryMiB");     /* the caller's memory changes; the copy does not */
	DT_ASSERT_STR(a, "productName");
	CU_ASSERT_PTR_NOT_EQUAL(cel_intern(other), a);
	memset(buf, 'x', sizeof(buf) - 1);
	buf[sizeof(buf) - 1] = 0;
	CU_ASSERT_PTR_NULL(cel_intern(buf));
	buf[256] = 0;
	CU_ASSERT_PTR_NOT_NULL(cel_intern(buf));
	CU_ASSERT_PTR_NULL(cel_intern(NULL));
}

/* ...on a device whose names are plain strings, and on one whose names
 * are interned (found by pointer). */
static void test_device_shapes_match_generic(void)
{
	static const char long_name[] = "NVIDIA H200 NVL 141GB HBM3e PCIe";     /* 32 bytes */
	struct cel_device_attr attrs[6];
	struct cel_device_capacity cap;
	struct cel_device dev;

	setup_h200();
	memcpy(attrs, h200_attrs, sizeof(h200_attrs));
	attrs[4] = (struct cel_device_attr){ "gpu.nvidia.com", "long", CEL_ATTR_STRING,
					     .v.str = { long_name, sizeof(long_name) - 1 } };
	attrs[5] = (struct cel_device_attr){ "gpu.nvidia.com", "empty", CEL_ATTR_STRING,
					     .v.str = { "", 0 } };
	dev = h200;
	dev.attrs = attrs;
	dev.n_attrs = 6;
	CU_ASSERT(compare_shapes(&dev) > 1500);
	for (size_t i = 0; i < 6; i++) {
		attrs[i].domain = cel_intern(attrs[i].domain);
		attrs[i].id = cel_intern(attrs[i].id);
		CU_ASSERT_PTR_NOT_NULL_FATAL(attrs[i].id);
	}
	cap = h200_cap[0];
	cap.domain = cel_intern(cap.domain);
	cap.id = cel_intern(cap.id);
	dev.capacity = &cap;
	dev.interned = true;
	CU_ASSERT(compare_shapes(&dev) > 1500);
	/* A device laid out differently after the hint was set. */
	{
		struct cel_device_attr swapped[2] = { h200_attrs[1], h200_attrs[0] };
		struct cel_device d2 = { .driver = "gpu.nvidia.com", .attrs = swapped, .n_attrs = 2 };
		const char *e = "device.attributes['gpu.nvidia.com'].memoryMiB == 143771 && "
				"device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H200'";
		struct cel_program *p = NULL;
		struct dt_err err = { 0 };
		bool match = false;

		CU_ASSERT_EQUAL_FATAL(cel_compile_selector(e, strlen(e), true, &p, &err), 0);
		CU_ASSERT_EQUAL(cel_eval_selector(p, &h200, &match, &err), 0);
		CU_ASSERT_TRUE(match);
		match = false;
		CU_ASSERT_EQUAL(cel_eval_selector(p, &d2, &match, &err), 0);
		CU_ASSERT_TRUE(match);
		CU_ASSERT_EQUAL(cel_eval_selector(p, &h200, &match, &err), 0);
		CU_ASSERT_TRUE(match);
		d2.n_attrs = 1;
		CU_ASSERT_EQUAL(cel_eval_selector(p, &d2, &match, &err), -EDOM);
		CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no such key: productName"));
		cel_program_free(p);
	}
}

/* List-type attributes (DRAListTypeAttributes) are lists of their element
 * type; includes() is element equality on a list, equality on a scalar. */
static void test_list_attributes(void)
{
	struct semver v1, v2;
	struct dt_err err;
	struct cel_value roots_items[2], numa_items[3], ver_items[2], flag_items[1];
	struct cel_list roots = { 2, roots_items, 0 }, numa = { 3, numa_items, 0 },
		vers = { 2, ver_items, 0 }, flags = { 1, flag_items, 0 };
	struct cel_device_attr attrs[5];
	struct cel_device dev;

	CU_ASSERT_EQUAL_FATAL(semver_parse("1.2.3", 5, &v1, &err), 0);
	CU_ASSERT_EQUAL_FATAL(semver_parse("2.0.0", 5, &v2, &err), 0);
	roots_items[0] = cel_string("pci0000:10", 10);
	roots_items[1] = cel_string("pci0000:20", 10);
	numa_items[0] = cel_int(0);
	numa_items[1] = cel_int(1);
	numa_items[2] = cel_int(1);
	ver_items[0] = cel_object(&cel_semver_type, &v1);
	ver_items[1] = cel_object(&cel_semver_type, &v2);
	flag_items[0] = cel_bool(true);
	attrs[0] = (struct cel_device_attr){ "dra.net", "pcieRoots", CEL_ATTR_STRINGS,
					     .v.list = &roots };
	attrs[1] = (struct cel_device_attr){ "dra.net", "numa", CEL_ATTR_INTS, .v.list = &numa };
	attrs[2] = (struct cel_device_attr){ "dra.net", "firmware", CEL_ATTR_VERSIONS,
					     .v.list = &vers };
	attrs[3] = (struct cel_device_attr){ "dra.net", "flags", CEL_ATTR_BOOLS, .v.list = &flags };
	attrs[4] = (struct cel_device_attr){ "dra.net", "model", CEL_ATTR_STRING,
					     .v.str = { "A100", 4 } };
	dev = (struct cel_device){ .driver = "dra.net", .attrs = attrs, .n_attrs = 5 };
#define A "device.attributes['dra.net']"
	DT_ASSERT_STR(eval_dev(A ".pcieRoots", &dev), "[\"pci0000:10\", \"pci0000:20\"]");
	DT_ASSERT_STR(eval_dev(A ".pcieRoots.size()", &dev), "2");
	DT_ASSERT_STR(eval_dev(A "['numa'].size()", &dev), "3");
	DT_ASSERT_STR(eval_dev("1 in " A ".numa", &dev), "true");
	DT_ASSERT_STR(eval_dev("5 in " A ".numa", &dev), "false");
	DT_ASSERT_STR(eval_dev(A ".numa.exists(n, n > 0)", &dev), "true");
	DT_ASSERT_STR(eval_dev(A ".numa.all(n, n > 0)", &dev), "false");
	DT_ASSERT_STR(eval_dev(A ".numa.filter(n, n == 1).size()", &dev), "2");
	DT_ASSERT_STR(eval_dev(A ".numa.map(n, n * 10)", &dev), "[0, 10, 10]");
	DT_ASSERT_STR(eval_dev(A ".numa.exists_one(n, n == 0)", &dev), "true");
	DT_ASSERT_STR(eval_dev(A ".numa.sum()", &dev), "2");
	DT_ASSERT_STR(eval_dev(A ".numa == [0, 1, 1]", &dev), "true");
	DT_ASSERT_STR(eval_dev(A ".numa == 0", &dev), "false");
	DT_ASSERT_STR(eval_dev(A ".firmware[1].isGreaterThan(semver('1.9.0'))", &dev), "true");
	DT_ASSERT_STR(eval_dev(A ".firmware.exists(v, v == semver('1.2.3'))", &dev), "true");
	DT_ASSERT_STR(eval_dev(A ".flags[0]", &dev), "true");
	DT_ASSERT_STR(eval_dev("type(" A ".pcieRoots)", &dev), "list");
	/* includes: element equality on lists (numbers across types, as CEL's
	 * ==), plain equality on scalars */
	DT_ASSERT_STR(eval_dev(A ".pcieRoots.includes('pci0000:20')", &dev), "true");
	DT_ASSERT_STR(eval_dev(A ".pcieRoots.includes('pci0000:30')", &dev), "false");
	DT_ASSERT_STR(eval_dev(A ".numa.includes(1.0)", &dev), "true");
	DT_ASSERT_STR(eval_dev(A ".firmware.includes(semver('2.0.0'))", &dev), "true");
	DT_ASSERT_STR(eval_dev(A ".model.includes('A100')", &dev), "true");
	DT_ASSERT_STR(eval_dev(A ".model.includes('A10')", &dev), "false");
	DT_ASSERT_STR(eval_dev(A ".numa.includes([0, 1, 1])", &dev), "false");
	DT_ASSERT_STR(eval_dev("lists.range(48).includes(47)", &dev), "true");
	DT_ASSERT_STR(eval_dev("lists.range(49).includes(1)", &dev),
		      "error: 'includes' function cannot be applied to lists longer than 48 values");
	/* The compile-time lookups read lists too; comparing one with a scalar
	 * is unequal, ordering it is no overload. */
	DT_ASSERT_STR(eval_dev(A ".numa != 1", &dev), "true");
	DT_ASSERT_STR(eval_dev(A ".numa >= 1", &dev), "error: no such overload: _>=_");
	DT_ASSERT_STR(eval_dev(A ".numa[5]", &dev), "error: index out of bounds: 5");
#undef A
}

static void test_seed_selector(void)
{
	static const char *const exprs[] = {
		"device.attributes[\"gpu.nvidia.com\"].cudaComputeCapability.compareTo("
		"semver(\"9.0.0\")) >= 0 && device.capacity[\"gpu.nvidia.com\"].memory.compareTo("
		"quantity(\"100Gi\")) >= 0",
		"device.attributes[\"gpu.nvidia.com\"].productName == \"NVIDIA H200\" && "
		"device.attributes[\"gpu.nvidia.com\"].memoryMiB >= 102400",
	};
	struct cel_program *p;
	struct dt_err err = { 0 };
	bool match;

	setup_h200();
	for (size_t i = 0; i < 2; i++) {
		p = NULL;
		match = false;
		CU_ASSERT_EQUAL_FATAL(cel_compile_selector(exprs[i], strlen(exprs[i]), true, &p,
							   &err), 0);
		CU_ASSERT_EQUAL(cel_eval_selector(p, &h200, &match, &err), 0);
		CU_ASSERT_TRUE(match);
		h200_attrs[1].v.i = 81920;     /* an 80 GiB part fails the second */
		mem_q = quantity_from_int(80LL << 30, QUANTITY_BINARY_SI);
		CU_ASSERT_EQUAL(cel_eval_selector(p, &h200, &match, &err), 0);
		CU_ASSERT_FALSE(match);
		setup_h200();
		cel_program_free(p);
	}
	/* A non-bool dyn result is a runtime error. */
	p = NULL;
	CU_ASSERT_EQUAL_FATAL(cel_compile_selector("device.attributes['gpu.nvidia.com'].memoryMiB",
						   45, false, &p, &err), 0);
	CU_ASSERT_EQUAL(cel_eval_selector(p, &h200, &match, &err), -EDOM);
	DT_ASSERT_STR(err.msg, "CEL result of type int could not be converted to bool");
	cel_program_free(p);
}

#if !defined(__SANITIZE_ADDRESS__) && !defined(__has_feature)
#define COUNT_MALLOC 1
#elif defined(__has_feature)
#if !__has_feature(address_sanitizer)
#define COUNT_MALLOC 1
#endif
#endif

#ifdef COUNT_MALLOC
/* Count heap allocations by interposing malloc (glibc's entry points). */
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
static volatile size_t n_mallocs;

void *malloc(size_t n);
void *calloc(size_t a, size_t b);
void *realloc(void *p, size_t n);

void *malloc(size_t n)
{
	n_mallocs++;
	return __libc_malloc(n);
}

void *calloc(size_t a, size_t b)
{
	n_mallocs++;
	return __libc_calloc(a, b);
}

void *realloc(void *p, size_t n)
{
	n_mallocs++;
	return __libc_realloc(p, n);
}
#endif

static void test_selector_eval_no_heap(void)
{
	const char *expr = "device.attributes[\"gpu.nvidia.com\"].cudaComputeCapability.compareTo("
			   "semver(\"9.0.0\")) >= 0 && device.capacity[\"gpu.nvidia.com\"].memory"
			   ".compareTo(quantity(\"100Gi\")) >= 0 && "
			   "device.attributes['gpu.nvidia.com'].productName.startsWith('NVIDIA')";
	struct cel_program *p = NULL;
	struct dt_err err = { 0 };
	bool match = false;

	setup_h200();
	CU_ASSERT_EQUAL_FATAL(cel_compile_selector(expr, strlen(expr), false, &p, &err), 0);
#ifdef COUNT_MALLOC
	size_t before = n_mallocs;
#endif
	for (int i = 0; i < 100; i++)
		CU_ASSERT_EQUAL(cel_eval_selector(p, &h200, &match, &err), 0);
#ifdef COUNT_MALLOC
	CU_ASSERT_EQUAL(n_mallocs, before);
#endif
	CU_ASSERT_TRUE(match);
	cel_program_free(p);
}

struct thread_arg {
	const struct cel_program *p;
	int mismatches;
};

static void *eval_many(void *arg)
{
	struct thread_arg *t = arg;
	struct dt_err err;
	bool match;

	for (int i = 0; i < 2000; i++)
		if (cel_eval_selector(t->p, &h200, &match, &err) != 0 || !match)
			t->mismatches++;
	return NULL;
}

/* One program, four threads at once: programs are immutable. */
static void test_concurrent_eval(void)
{
	const char *expr = "device.attributes['gpu.nvidia.com'].memoryMiB > 1000 && "
			   "['a', 'b'].map(x, x + device.driver).exists(s, s.endsWith('.com'))";
	struct cel_program *p = NULL;
	struct dt_err err = { 0 };
	pthread_t th[4];
	struct thread_arg args[4];

	setup_h200();
	CU_ASSERT_EQUAL_FATAL(cel_compile_selector(expr, strlen(expr), true, &p, &err), 0);
	for (int i = 0; i < 4; i++) {
		args[i] = (struct thread_arg){ p, 0 };
		CU_ASSERT_EQUAL_FATAL(pthread_create(&th[i], NULL, eval_many, &args[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		CU_ASSERT_EQUAL(args[i].mismatches, 0);
	}
	cel_program_free(p);
}

static void test_cache(void)
{
	struct cel_cache *c = cel_cache_new(2);
	const struct cel_program *a, *b, *a2, *x;
	struct dt_err err = { 0 };

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_EQUAL(cel_cache_get(c, "true", 4, &a, &err), 0);
	CU_ASSERT_EQUAL(cel_cache_get(c, "false", 5, &b, &err), 0);
	CU_ASSERT_EQUAL(cel_cache_get(c, "true", 4, &a2, &err), 0);
	CU_ASSERT_PTR_EQUAL(a, a2);
	CU_ASSERT_PTR_NOT_EQUAL(a, b);
	/* A third entry evicts the least recently used ("false"). */
	CU_ASSERT_EQUAL(cel_cache_get(c, "1 == 1", 6, &x, &err), 0);
	CU_ASSERT_EQUAL(cel_cache_get(c, "true", 4, &a2, &err), 0);
	CU_ASSERT_PTR_EQUAL(a, a2);
	CU_ASSERT_EQUAL(cel_cache_get(c, "1 +", 3, &x, &err), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "Syntax error"));
	cel_cache_free(c);
}

/* A stand-in for the lists library's @sortByAssociatedKeys (int keys). */
static struct cel_value test_sort_by_keys(struct cel_ctx *ctx, const struct cel_value *a,
					  size_t n)
{
	const struct cel_list *l = a[0].v.list, *k = a[1].v.list;
	struct cel_value *items, *keys, r, kr;

	(void)n;
	r = cel_list_new(ctx, l->len, &items);
	kr = cel_list_new(ctx, l->len, &keys);
	if (!items || !keys)
		return items ? kr : r;
	for (size_t i = 0; i < l->len; i++) {
		size_t j = i;

		while (j > 0 && keys[j - 1].v.i > k->items[i].v.i) {
			items[j] = items[j - 1];
			keys[j] = keys[j - 1];
			j--;
		}
		items[j] = l->items[i];
		keys[j] = k->items[i];
	}
	return r;
}

static const struct cel_overload test_sort_overloads[] = {
	{ "@sortByAssociatedKeys", "test_sort", CEL_OV_MEMBER, "list(A), list(int)", "list(A)",
	  test_sort_by_keys, NULL },
};

static const struct cel_library test_sort_lib = {
	"test_sort", test_sort_overloads, 1, NULL, 0,
};

/* sortBy is a macro (ext.Lists): the core expands it, a library sorts. */
static void test_sort_by_macro(void)
{
	struct dt_err err = { 0 };
	struct cel_env *env = cel_env_new(CEL_ENV_STANDARD, &err);
	struct cel_program *p = NULL;
	struct cel_evaluation *ev = cel_evaluation_new();
	struct cel_value out;
	struct strbuf sb = STRBUF_INIT;
	const char *expr = "[{'n': 'b', 'k': 2}, {'n': 'a', 'k': 1}, {'n': 'c', 'k': 3}]"
			   ".sortBy(e, e.k).map(e, e.n)";

	CU_ASSERT_PTR_NOT_NULL_FATAL(env);
	CU_ASSERT_EQUAL(cel_env_add_library(env, &test_sort_lib, &err), 0);
	CU_ASSERT_EQUAL_FATAL(cel_compile(env, expr, strlen(expr), &p, &err), 0);
	CU_ASSERT_EQUAL(cel_eval(p, NULL, 0, ev, &out, &err), 0);
	cel_value_print(&sb, &out);
	DT_ASSERT_STR(sb_str(&sb), "[\"a\", \"b\", \"c\"]");
	sb_free(&sb);
	cel_program_free(p);
	cel_evaluation_free(ev);
	cel_env_free(env);
	DT_ASSERT_STR(eval("[1].sortBy(1, 2)"), "compile: ERROR: <input>:1:12: argument must be a "
		      "simple name\n | [1].sortBy(1, 2)\n | ...........^");
}

static void test_cli_env_declarations(void)
{
	struct dt_err err = { 0 };
	struct cel_env *env = cel_env_new(CEL_ENV_CLI, &err);
	struct cel_program *p = NULL;
	struct cel_evaluation *ev = cel_evaluation_new();
	struct cel_value vars[2], out;
	int slot;

	CU_ASSERT_PTR_NOT_NULL_FATAL(env);
	slot = cel_env_declare(env, "n", "dyn", &err);
	CU_ASSERT_EQUAL(slot, 1);              /* device is slot 0 */
	CU_ASSERT_EQUAL(cel_env_declare(env, "n", "int", &err), -EEXIST);
	CU_ASSERT_EQUAL(cel_env_declare(env, "m", "list(", &err), -EINVAL);
	CU_ASSERT_EQUAL_FATAL(cel_compile(env, "n * 2", 5, &p, &err), 0);
	vars[0] = cel_null();
	vars[1] = cel_int(21);
	CU_ASSERT_EQUAL(cel_eval(p, vars, 2, ev, &out, &err), 0);
	CU_ASSERT_EQUAL(out.kind, CEL_INT);
	CU_ASSERT_EQUAL(out.v.i, 42);
	vars[1] = cel_string("x", 1);
	CU_ASSERT_EQUAL(cel_eval(p, vars, 2, ev, &out, &err), -EDOM);
	DT_ASSERT_STR(err.msg, "no such overload: _*_");
	cel_program_free(p);
	cel_evaluation_free(ev);
	cel_env_free(env);
}

DT_SUITE_MAIN("cel",
	DT_TEST(test_literals_and_escapes),
	DT_TEST(test_homogeneous_literals),
	DT_TEST(test_standard_matches),
	DT_TEST(test_syntax_errors),
	DT_TEST(test_depth_guard),
	DT_TEST(test_checker_errors),
	DT_TEST(test_arithmetic),
	DT_TEST(test_equality_and_ordering),
	DT_TEST(test_logic_absorbs_errors),
	DT_TEST(test_macros),
	DT_TEST(test_optionals),
	DT_TEST(test_time),
	DT_TEST(test_printer),
	DT_TEST(test_cost_limit),
	DT_TEST(test_runtime_costs),
	DT_TEST(test_estimated_costs),
	DT_TEST(test_selector_cost_check),
	DT_TEST(test_device_variable),
	DT_TEST(test_seed_selector),
	      DT_TEST(test_intern),
	      DT_TEST(test_list_attributes),
	      DT_TEST(test_device_shapes_match_generic),
	DT_TEST(test_selector_eval_no_heap),
	DT_TEST(test_concurrent_eval),
	DT_TEST(test_cache),
	DT_TEST(test_sort_by_macro),
	DT_TEST(test_cli_env_declarations))
