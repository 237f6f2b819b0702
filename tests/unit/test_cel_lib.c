/* test_cel_lib.c - the Kubernetes CEL libraries: strings, lists, sets, regex
 * (RE2 rejections), url, ip/cidr, format (string.format), the named formats
 * (format.dns1123Label()...), quantity and semver (with
 * normalization), each function with its error cases, as the Kubernetes and
 * cel-go libraries define them. Cases are tables of expression -> printed
 * result ("error: MESSAGE" for a runtime error, "compile: ..." for a
 * compile error); a case ending in "*" matches by prefix. */
#include <pthread.h>
#include <string.h>

#include "cel.h"
#include "cel_ast.h"
#include "cel_env.h"
#include "dt_test.h"
#include "strbuf.h"

struct eval_case {
	const char *expr;
	const char *want;
};

/* Evaluate expr in the CLI environment, printed as `dratopo cel eval` does. */
static void eval_expr(const char *expr, char *out, size_t size)
{
	struct dt_err err = { 0 };
	struct cel_env *env = cel_env_new(CEL_ENV_STANDARD, &err);
	struct cel_program *p = NULL;
	struct cel_evaluation *ev = cel_evaluation_new();
	struct strbuf sb = STRBUF_INIT;
	struct cel_value v;

	CU_ASSERT_PTR_NOT_NULL_FATAL(env);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ev);
	if (cel_compile(env, expr, strlen(expr), &p, &err) < 0) {
		snprintf(out, size, "compile: %s", err.msg);
	} else if (cel_eval(p, NULL, 0, ev, &v, &err) < 0) {
		snprintf(out, size, "error: %s", err.msg);
	} else {
		cel_value_print(&sb, &v);
		snprintf(out, size, "%s", sb_str(&sb));
	}
	sb_free(&sb);
	cel_program_free(p);
	cel_evaluation_free(ev);
	cel_env_free(env);
}

static void run_cases(const struct eval_case *c, size_t n)
{
	char got[2048];

	for (size_t i = 0; i < n; i++) {
		size_t wl = strlen(c[i].want);

		eval_expr(c[i].expr, got, sizeof(got));
		if (wl && c[i].want[wl - 1] == '*') {
			if (strncmp(got, c[i].want, wl - 1))
				fprintf(stderr, "\n  %s\n    got  %s\n    want %s\n", c[i].expr, got,
					c[i].want);
			CU_ASSERT(strncmp(got, c[i].want, wl - 1) == 0);
		} else {
			if (strcmp(got, c[i].want))
				fprintf(stderr, "\n  %s\n    got  %s\n    want %s\n", c[i].expr, got,
					c[i].want);
			CU_ASSERT_STRING_EQUAL(got, c[i].want);
		}
	}
}

#define RUN(table) run_cases(table, sizeof(table) / sizeof(table[0]))

static void test_strings(void)
{
	static const struct eval_case cases[] = {
		{ "'hello'.charAt(4)", "\"o\"" },
		{ "'hello'.charAt(5)", "\"\"" },
		{ "'héllo'.charAt(1)", "\"é\"" },
		{ "'hello'.charAt(-1)", "error: index out of range: -1" },
		{ "'hello'.charAt(6)", "error: index out of range: 6" },
		{ "'hello mellow'.indexOf('')", "0" },
		{ "'hello mellow'.indexOf('ello')", "1" },
		{ "'hello mellow'.indexOf('jello')", "-1" },
		{ "'hello mellow'.indexOf('', 2)", "2" },
		{ "'hello mellow'.indexOf('ello', 2)", "7" },
		{ "'hello mellow'.indexOf('ello', 20)", "error: index out of range: 20" },
		{ "'ñañaña'.indexOf('ña', 1)", "2" },
		{ "'hello mellow'.lastIndexOf('')", "12" },
		{ "'hello mellow'.lastIndexOf('ello')", "7" },
		{ "'hello mellow'.lastIndexOf('ello', 6)", "1" },
		{ "'hello mellow'.lastIndexOf('ello', -1)", "error: index out of range: -1" },
		{ "'ñañaña'.lastIndexOf('ña')", "4" },
		{ "'ab'.lastIndexOf('abc')", "-1" },
		{ "''.lastIndexOf('a')", "-1" },
		{ "''.indexOf('a')", "error: index out of range: 0" },
		{ "''.indexOf('')", "0" },
		{ "dyn([1]).join()", "error: no such overload: join" },
		{ "'TacoCÆt Xii'.lowerAscii()", "\"tacocÆt xii\"" },
		{ "'TacoCÆt Xii'.upperAscii()", "\"TACOCÆT XII\"" },
		{ "'hello hello'.replace('he', 'we')", "\"wello wello\"" },
		{ "'hello hello'.replace('he', 'we', 1)", "\"wello hello\"" },
		{ "'hello hello'.replace('he', 'we', 0)", "\"hello hello\"" },
		{ "'hello hello'.replace('', '_')", "\"_h_e_l_l_o_ _h_e_l_l_o_\"" },
		{ "'hello hello'.replace('h', '')", "\"ello ello\"" },
		{ "'ñb'.replace('', '-', 2)", "\"-ñ-b\"" },
		{ "'hello hello hello'.split(' ')", "[\"hello\", \"hello\", \"hello\"]" },
		{ "'hello hello hello'.split(' ', 0)", "[]" },
		{ "'hello hello hello'.split(' ', 1)", "[\"hello hello hello\"]" },
		{ "'hello hello hello'.split(' ', 2)", "[\"hello\", \"hello hello\"]" },
		{ "'a,,b'.split(',')", "[\"a\", \"\", \"b\"]" },
		{ "'ñab'.split('')", "[\"ñ\", \"a\", \"b\"]" },
		{ "'abc'.split('', 2)", "[\"a\", \"bc\"]" },
		{ "'tacocat'.substring(4)", "\"cat\"" },
		{ "'tacocat'.substring(0, 4)", "\"taco\"" },
		{ "'tacocat'.substring(7)", "\"\"" },
		{ "'tacocat'.substring(-1)", "error: index out of range: -1" },
		{ "'tacocat'.substring(2, 1)", "error: invalid substring range. start: 2, end: 1" },
		{ "'tacocat'.substring(1, 8)", "error: index out of range: 8" },
		{ "' \\t\\n trim \\u00a0\\u3000'.trim()", "\"trim\"" },
		{ "'\\u200bx'.trim()", "\"\xe2\x80\x8b" "x\"" },
		{ "['hello', 'mellow'].join()", "\"hellomellow\"" },
		{ "['hello', 'mellow'].join(' ')", "\"hello mellow\"" },
		{ "[].join('/')", "\"\"" },
		{ "strings.quote('single-quote with \"double quote\"')",
		  "\"\\\"single-quote with \\\\\\\"double quote\\\\\\\"\\\"\"" },
		{ "strings.quote('two escape sequences \\a\\n')",
		  "\"\\\"two escape sequences \\\\a\\\\n\\\"\"" },
		{ "'gums'.reverse()", "\"smug\"" },
		{ "'ñab'.reverse()", "\"bañ\"" },
	};

	RUN(cases);
}

static void test_lists(void)
{
	static const struct eval_case cases[] = {
		{ "[1, 2, 3].isSorted()", "true" },
		{ "['a', 'c', 'b'].isSorted()", "false" },
		{ "[].isSorted()", "true" },
		{ "[1, 2, 3].sum()", "6" },
		{ "[1u, 2u].sum()", "3u" },
		{ "[1.5, 2.0].sum()", "3.5" },
		{ "[duration('1s'), duration('500ms')].sum()", "duration(\"1.5s\")" },
		{ "[9223372036854775807, 1].sum()", "error: integer overflow" },
		{ "[3, 1, 2].min()", "1" },
		{ "[3, 1, 2].max()", "3" },
		{ "['b', 'a'].min()", "\"a\"" },
		{ "[].min()", "error: min called on empty list" },
		{ "[].max()", "error: max called on empty list" },
		/* Kubernetes' doc examples (pkg/cel/library/lists.go). */
		{ "[1, 3].sum()", "4" },
		{ "[1.0, 3.0].sum()", "4.0" },
		{ "[duration('1m'), duration('1s')].sum()", "duration(\"61s\")" },
		{ "['a', 'b', 'b', 'c'].isSorted()", "true" },
		{ "[2.0, 1.0].isSorted()", "false" },
		{ "[1].min()", "1" },
		{ "([0] + []).min()", "0" },
		{ "[1.0].indexOf(1.1)", "-1" },
		{ "[].indexOf('string')", "-1" },
		{ "['a', 'b', 'b', 'c'].lastIndexOf('b')", "2" },
		/* The run time picks the overload by the list's first element, as
		 * cel-go's runtime type guards do. */
		{ "dyn([1.0, 2.0]).sum()", "3.0" },
		{ "dyn([1u, 2u]).sum()", "3u" },
		{ "dyn([duration('1s'), duration('2s')]).sum()", "duration(\"3s\")" },
		{ "dyn([]).sum()", "0" },
		{ "dyn([1, 2.0]).sum()", "error: no such overload: sum" },
		{ "dyn([1.5, 2]).sum()", "error: no such overload: sum" },
		{ "dyn(['a']).sum()", "error: no such overload: sum" },
		{ "[18446744073709551615u, 1u].sum()", "error: unsigned integer overflow" },
		{ "dyn([2.5, 1.5]).max()", "2.5" },
		{ "dyn(['b', 'a']).isSorted()", "false" },
		/* min/max/isSorted exist for the comparable types only... */
		{ "[[1], [2]].min()", "compile: *" },
		{ "[{'a': 1}].isSorted()", "compile: *" },
		{ "dyn([[1]]).max()", "error: no such overload: max" },
		{ "[timestamp('2020-01-01T00:00:00Z'), timestamp('2019-01-01T00:00:00Z')].min()",
		  "timestamp(\"2019-01-01T00:00:00Z\")" },
		{ "[true, false].max()", "true" },
		{ "[b'b', b'a'].min()", "b\"a\"" },
		{ "[duration('2s'), duration('1s')].isSorted()", "false" },
		/* ...numbers compare across types, and a pair that is not ordered
		 * (other types, NaN) is skipped as upstream skips a Compare error,
		 * while an element that is not comparable at all is an error. */
		{ "[2, 1.5, 1u].min()", "1u" },
		{ "[1, 2u, 1.5].max()", "2u" },
		{ "[1.0, 0.0 / 0.0, 0.5].min()", "0.5" },
		{ "[3, 'a', 1].isSorted()", "true" },
		{ "['a', 1].min()", "\"a\"" },
		{ "[1, [2]].isSorted()", "error: no such overload: isSorted" },
		{ "[2, 1, [2]].isSorted()", "false" },
		{ "[1, {}].max()", "error: no such overload: max" },
		{ "[1, 2, 3, 2].indexOf(2)", "1" },
		{ "[1, 2, 3, 2].lastIndexOf(2)", "3" },
		{ "[1, 2].indexOf(5)", "-1" },
		{ "[1, 2, 3, 4].slice(1, 3)", "[2, 3]" },
		{ "[1, 2].slice(2, 2)", "[]" },
		{ "[1, 2].slice(-1, 2)", "error: cannot slice(-1, 2), negative indexes not supported" },
		{ "[1, 2].slice(2, 1)",
		  "error: cannot slice(2, 1), start index must be less than or equal to end index" },
		{ "[1, 2].slice(0, 3)", "error: cannot slice(0, 3), list is length 2" },
		{ "[1, [2, [3, [4]]]].flatten()", "[1, 2, [3, [4]]]" },
		{ "[1, [2, [3, [4]]]].flatten(2)", "[1, 2, 3, [4]]" },
		{ "[1, [2, [3, [4]]]].flatten(0)", "[1, [2, [3, [4]]]]" },
		{ "[1, [2]].flatten(-1)", "error: level must be non-negative" },
		{ "[3, 1, 2].sort()", "[1, 2, 3]" },
		{ "['b', 'c', 'a'].sort()", "[\"a\", \"b\", \"c\"]" },
		/* cel-go sorts keys of one type only: 1 and 1.0 do not mix. */
		{ "[2, 1.5, 1u].sort()", "error: list elements must have the same type" },
		{ "[[1], [0]].sort()", "compile: *" },
		{ "dyn([[1], [0]]).sort()", "error: no such overload: sort" },
		{ "[b'b', b'a'].sort()", "[b\"a\", b\"b\"]" },
		{ "[duration('2s'), duration('1s')].sort()", "[duration(\"1s\"), duration(\"2s\")]" },
		{ "['foo', 'bar', 'baz'].sortBy(e, e == 'foo' ? 3 : e == 'bar' ? 1 : 2)",
		  "[\"bar\", \"baz\", \"foo\"]" },
		{ "[1, 2].sortBy(e, e == 1 ? 1 : 'a')", "error: list elements must have the same type" },
		{ "[1, 2].sortBy(e, -e)", "[2, 1]" },
		{ "lists.range(-1)", "error: lists.range: size must be non-negative, got -1" },
		{ "lists.range(10000001)",
		  "error: lists.range: size 10000001 exceeds maximum allowed (10000000)" },
		{ "[[1], [2, 3]].flatten()", "[1, 2, 3]" },
		{ "[1, 2].flatten()", "compile: *" },
		{ "dyn([1, [2]]).flatten()", "[1, 2]" },
		{ "[1, 'a'].sort()", "error: list elements must have the same type" },
		{ "lists.range(4)", "[0, 1, 2, 3]" },
		{ "lists.range(0)", "[]" },
		{ "[1, 2, 3].reverse()", "[3, 2, 1]" },
		{ "[1, 2, 1, 1.0, 'a', 'a'].distinct()", "[1, 2, \"a\"]" },
		{ "[1, 2].first()", "optional.of(1)" },
		{ "[1, 2].last()", "optional.of(2)" },
		{ "[].first()", "optional.none()" },
		{ "[].last().orValue(7)", "7" },
	};

	RUN(cases);
}

static void test_sets(void)
{
	static const struct eval_case cases[] = {
		{ "sets.contains([], [])", "true" },
		{ "sets.contains([1, 2, 3], [3, 1])", "true" },
		{ "sets.contains([1, 2], [2, 4])", "false" },
		{ "sets.contains([1, 2.0], [dyn(2u)])", "true" },
		{ "sets.equivalent([1, 2, 2], [2, 1])", "true" },
		{ "sets.equivalent([1], [1, 2])", "false" },
		{ "sets.intersects([1, 2], [3, 2])", "true" },
		{ "sets.intersects([1], [])", "false" },
	};

	RUN(cases);
}

static void test_regex(void)
{
	static const struct eval_case cases[] = {
		{ "'abc'.matches('^a.c$')", "true" },
		{ "matches('xabcx', 'b')", "true" },
		{ "'ABC'.matches('(?i)abc')", "true" },
		{ "'a\\nb'.matches('a.b')", "false" },
		{ "'a\\n'.matches('a$')", "false" },
		{ "'é'.matches('^.$')", "true" },
		{ "'١'.matches('\\\\d')", "false" },
		{ "'a1b22c333'.find('[0-9]+')", "\"1\"" },
		{ "'abc'.find('[0-9]+')", "\"\"" },
		{ "'a1b22c333'.findAll('[0-9]+')", "[\"1\", \"22\", \"333\"]" },
		{ "'a1b22c333'.findAll('[0-9]+', 2)", "[\"1\", \"22\"]" },
		{ "'a1b22c333'.findAll('[0-9]+', 0)", "[]" },
		{ "'a1b22c333'.findAll('[0-9]+', -1)", "[\"1\", \"22\", \"333\"]" },
		{ "'abc'.findAll('')", "[\"\", \"\", \"\", \"\"]" },
		{ "'abc'.findAll('b*')", "[\"\", \"b\", \"\"]" },
		{ "'x'.matches('(?P<name>x)')", "true" },
		{ "'aa'.matches('a{2}')", "true" },
		{ "'a{'.matches('a{')", "true" },
		{ "'a+'.matches('\\\\Qa+\\\\E')", "true" },
		/* What RE2 rejects. */
		{ "'aa'.matches('(a)\\\\1')",
		  "error: error parsing regexp: invalid escape sequence: `\\1`" },
		{ "'ab'.matches('a(?=b)')",
		  "error: error parsing regexp: invalid or unsupported Perl syntax: `(?=`" },
		{ "'ab'.matches('a(?!b)')",
		  "error: error parsing regexp: invalid or unsupported Perl syntax: `(?!`" },
		{ "'ab'.matches('(?<=a)b')",
		  "error: error parsing regexp: invalid or unsupported Perl syntax: `(?<=`" },
		{ "'ab'.matches('(?<!a)b')",
		  "error: error parsing regexp: invalid or unsupported Perl syntax: `(?<!`" },
		{ "'ab'.matches('(?>a)b')",
		  "error: error parsing regexp: invalid or unsupported Perl syntax: `(?>`" },
		{ "'aaa'.matches('a*+')",
		  "error: error parsing regexp: invalid nested repetition operator: `*+`" },
		{ "'aaa'.matches('a++')",
		  "error: error parsing regexp: invalid nested repetition operator: `++`" },
		{ "'aaa'.matches('a**')",
		  "error: error parsing regexp: invalid nested repetition operator: `**`" },
		{ "'a'.matches('*a')",
		  "error: error parsing regexp: missing argument to repetition operator: `*`" },
		{ "'a'.matches('a{1001}')",
		  "error: error parsing regexp: invalid repeat count: `{1001}`" },
		{ "'a'.matches('(?R)')",
		  "error: error parsing regexp: invalid or unsupported Perl syntax: `(?R`" },
		{ "'a'.matches('\\\\Ka')",
		  "error: error parsing regexp: invalid escape sequence: `\\K`" },
		{ "'a'.matches('a\\\\Z')",
		  "error: error parsing regexp: invalid escape sequence: `\\Z`" },
		{ "'a'.matches('[a')", "error: error parsing regexp: missing closing ]: `[a`" },
		{ "'a'.matches('(a')", "error: error parsing regexp: missing closing ): `(a`" },
		{ "'a'.matches('a)')", "error: error parsing regexp: unexpected ): `a)`" },
		{ "'a'.matches('(?:a')", "error: error parsing regexp: missing closing ): `(?:a`" },
		{ "'a'.matches('(?i)A')", "true" },
		{ "'aa'.matches('a{2}{3}')",
		  "error: error parsing regexp: invalid nested repetition operator: `{2}{3}`" },
		{ "'aa'.matches('a*?')", "true" },
		{ "'aa'.matches('a*?" "?')",
		  "error: error parsing regexp: invalid nested repetition operator: `*?" "?`" },
		{ "'a1'.matches('[[:alpha:]][[:digit:]]')", "true" },
		{ "'a'.matches('\\\\\\\\')", "false" },
		{ "'a'.matches('a\\\\')",
		  "error: error parsing regexp: trailing backslash at end of expression: ``" },
		{ "'ab'.find('(?=b)')", "error: error parsing regexp: invalid or unsupported*" },
		/* Exponential backtracking gives way to the DFA matcher: an answer,
		 * as RE2 gives, not a hang. */
		{ "'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab'"
		  ".matches('^(a|aa)*$')", "false" },
		{ "'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'"
		  ".matches('^(a|aa)*$')", "true" },
	};

	RUN(cases);
}

static void test_url(void)
{
	static const struct eval_case cases[] = {
		{ "url('https://example.com:80/a?x=1').getScheme()", "\"https\"" },
		{ "url('https://example.com:80/a').getHost()", "\"example.com:80\"" },
		{ "url('https://example.com:80/a').getHostname()", "\"example.com\"" },
		{ "url('https://example.com:80/a').getPort()", "\"80\"" },
		{ "url('https://example.com/a').getPort()", "\"\"" },
		{ "url('https://[::1]:80/').getHost()", "\"[::1]:80\"" },
		{ "url('https://[::1]:80/').getHostname()", "\"::1\"" },
		{ "url('https://[::1]/').getPort()", "\"\"" },
		{ "url('https://example.com/a%20b').getEscapedPath()", "\"/a%20b\"" },
		{ "url('https://example.com/a b').getEscapedPath()", "\"/a%20b\"" },
		{ "url('https://example.com').getEscapedPath()", "\"\"" },
		{ "url('https://example.com/?k=a&k=b+c&j=%41').getQuery()",
		  "{\"k\": [\"a\", \"b c\"], \"j\": [\"A\"]}" },
		{ "url('https://example.com/').getQuery()", "{}" },
		{ "url('https://e.com/?x=1&y=a+b&x=%zz&x=3&&z&y=&q=%41;b').getQuery()",
		  "{\"x\": [\"1\", \"3\"], \"y\": [\"a b\", \"\"], \"z\": [\"\"]}" },
		{ "url('/relative/path').getScheme()", "\"\"" },
		{ "url('/relative/path').getEscapedPath()", "\"/relative/path\"" },
		{ "isURL('https://example.com/')", "true" },
		{ "isURL('example.com')", "false" },
		{ "isURL('')", "false" },
		{ "isURL('https://example.com/%zz')", "false" },
		{ "url('example.com')", "error: URL parse error during conversion from string: "
		  "parse \"example.com\": invalid URI for request" },
		{ "url(':x')", "error: URL parse error during conversion from string: "
		  "parse \":x\": missing protocol scheme" },
		{ "url('https://h:x/')", "error: URL parse error during conversion from string: "
		  "parse \"https://h:x/\": invalid port \":x\" after host" },
		/* Go's details: the port from the last ':', the bad host byte, the escape. */
		{ "url('https://a:b:1/').getPort()", "\"1\"" },
		{ "url('https://[::1]x/')", "error: URL parse error during conversion from string: "
		  "parse \"https://[::1]x/\": invalid port \"x\" after host" },
		{ "url('http://a b/')", "error: URL parse error during conversion from string: "
		  "parse \"http://a b/\": invalid character \" \" in host name" },
		{ "url('/a%zzz')", "error: URL parse error during conversion from string: "
		  "parse \"/a%zzz\": invalid URL escape \"%zz\"" },
		{ "url('/a%2')", "error: URL parse error during conversion from string: "
		  "parse \"/a%2\": invalid URL escape \"%2\"" },
		{ "url('/a\\u0001')", "error: URL parse error during conversion from string: "
		  "parse \"/a\\x01\": net/url: invalid control character in URL" },
		{ "url('https://e.com/a') == url('https://e.com/a')", "true" },
		{ "isURL('https://e.com#frag')", "false" },
		{ "isURL('https://e.com/#frag')", "true" },
		{ "isURL('https://bücher.example/')", "true" },
		{ "url('mailto:someone@example.com').getHost()", "\"\"" },
	};

	RUN(cases);
}

/* The Kubernetes format library: format.<name>(), format.named(),
 * <NamedFormat>.validate() with the API server's and strfmt's messages. */
#define LABEL_MSG "a lowercase RFC 1123 label must consist of lower case alphanumeric " \
	"characters or '-', and must start and end with an alphanumeric character (e.g. " \
	"'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
#define SUBDOMAIN_MSG "a lowercase RFC 1123 subdomain must consist of lower case " \
	"alphanumeric characters, '-' or '.', and must start and end with an alphanumeric " \
	"character (e.g. 'example.com', regex used for validation is " \
	"'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
#define DNS1035_MSG "a DNS-1035 label must consist of lower case alphanumeric characters " \
	"or '-', start with an alphabetic character, and end with an alphanumeric character " \
	"(e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
#define QNAME_MSG "must consist of alphanumeric characters, '-', '_' or '.', and must " \
	"start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or " \
	"'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
#define LABEL_VALUE_MSG "a valid label must be an empty string or consist of alphanumeric " \
	"characters, '-', '_' or '.', and must start and end with an alphanumeric character " \
	"(e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is " \
	"'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
#define ONE(msg) "optional.of([\"" msg "\"])"
#define NONE "optional.none()"

static void test_named_format(void)
{
	static const struct eval_case cases[] = {
		/* The values, printed so that they read back. */
		{ "format.dns1123Label()", "format.dns1123Label()" },
		{ "format.named('uuid')", "optional.of(format.uuid())" },
		{ "format.named('dns1123SubdomainPrefix').value() == format.dns1123SubdomainPrefix()",
		  "true" },
		{ "format.uuid() == format.byte()", "false" },
		{ "type(format.date())", "kubernetes.NamedFormat" },
		{ "format.named('nope')", NONE },
		{ "format.named('DNS1123Label')", NONE },   /* keys, not upstream's Name */
		{ "format.named('')", NONE },
		{ "format.named('uuid').hasValue() && format.named('x').orValue(format.uri()) == "
		  "format.uri()", "true" },
		{ "['dns1123Label', 'dns1123Subdomain', 'dns1035Label', 'qualifiedName', "
		  "'dns1123LabelPrefix', 'dns1123SubdomainPrefix', 'dns1035LabelPrefix', "
		  "'labelValue', 'uri', 'uuid', 'byte', 'date', 'datetime']"
		  ".all(n, format.named(n).hasValue())", "true" },
		/* DNS-1123 labels. */
		{ "format.dns1123Label().validate('my-name')", NONE },
		{ "format.dns1123Label().validate('123-abc')", NONE },
		{ "format.dns1123Label().validate('My-Name')", ONE(LABEL_MSG) },
		{ "format.dns1123Label().validate('-a')", ONE(LABEL_MSG) },
		{ "format.dns1123Label().validate('')", ONE(LABEL_MSG) },
		{ "format.dns1123Label().validate(lists.range(63).map(i, 'a').join())", NONE },
		{ "format.dns1123Label().validate('a' + lists.range(63).map(i, 'b').join())",
		  ONE("must be no more than 63 characters") },
		{ "format.dns1123Label().validate(lists.range(64).map(i, '-').join()).value().size()", "2" },
		{ "format.dns1123Label().validate('a\\x00b')", ONE(LABEL_MSG) },
		/* DNS-1123 subdomains. */
		{ "format.dns1123Subdomain().validate('apiextensions.k8s.io')", NONE },
		{ "format.dns1123Subdomain().validate('a..b')", ONE(SUBDOMAIN_MSG) },
		{ "format.dns1123Subdomain().validate('Example.com')", ONE(SUBDOMAIN_MSG) },
		{ "format.dns1123Subdomain().validate('a.' + lists.range(252).map(i, 'b').join())",
		  ONE("must be no more than 253 characters") },
		/* DNS-1035 labels. */
		{ "format.dns1035Label().validate('my-label-name')", NONE },
		{ "format.dns1035Label().validate('1abc')", ONE(DNS1035_MSG) },
		{ "format.dns1035Label().validate('abc-')", ONE(DNS1035_MSG) },
		/* Qualified names. */
		{ "format.qualifiedName().validate('apiextensions.k8s.io/v1beta1')", NONE },
		{ "format.qualifiedName().validate('MyName')", NONE },
		{ "format.qualifiedName().validate('a/b/c')",
		  ONE("a qualified name " QNAME_MSG " with an optional DNS subdomain prefix and '/' "
		      "(e.g. 'example.com/MyName')") },
		{ "format.qualifiedName().validate('/x')", ONE("prefix part must be non-empty") },
		{ "format.qualifiedName().validate('Bad/x')", ONE("prefix part " SUBDOMAIN_MSG) },
		{ "format.qualifiedName().validate('x/')",
		  "optional.of([\"name part must be non-empty\", \"name part " QNAME_MSG "\"])" },
		{ "format.qualifiedName().validate('x/' + lists.range(64).map(i, 'a').join())",
		  ONE("name part must be no more than 63 characters") },
		/* Prefixes for generateName: a trailing '-' is masked, with the byte before it. */
		{ "format.dns1123LabelPrefix().validate('my-label-prefix-')", NONE },
		{ "format.dns1123LabelPrefix().validate('a-')", NONE },
		{ "format.dns1123LabelPrefix().validate('--')", NONE },     /* checked as "a" */
		{ "format.dns1123LabelPrefix().validate('a_-')", NONE },    /* checked as "aa" */
		{ "format.dns1123LabelPrefix().validate('-a')", ONE(LABEL_MSG) },
		{ "format.dns1123LabelPrefix().validate('')", ONE(LABEL_MSG) },
		{ "format.dns1123LabelPrefix().validate('-')",
		  "error: internal error: runtime error: slice bounds out of range [:-1]" },
		{ "format.dns1123SubdomainPrefix().validate('mysubdomain.prefix.-')", NONE },
		{ "format.dns1123SubdomainPrefix().validate('a..-')", NONE },   /* checked as "a.a" */
		{ "format.dns1123SubdomainPrefix().validate('a..b-')", ONE(SUBDOMAIN_MSG) },
		{ "format.dns1035LabelPrefix().validate('my-label-prefix-')", NONE },
		{ "format.dns1035LabelPrefix().validate('1-')", NONE },      /* checked as "a" */
		{ "format.dns1035LabelPrefix().validate('1a-')", ONE(DNS1035_MSG) },
		/* Label values. */
		{ "format.labelValue().validate('')", NONE },
		{ "format.labelValue().validate('my_value.1')", NONE },
		{ "format.labelValue().validate('a b')", ONE(LABEL_VALUE_MSG) },
		{ "format.labelValue().validate(lists.range(64).map(i, 'a').join())",
		  ONE("must be no more than 63 characters") },
		/* uri: url.ParseRequestURI's error. */
		{ "format.uri().validate('http://example.com')", NONE },
		{ "format.uri().validate('/just/a/path')", NONE },
		{ "format.uri().validate('example.com')",
		  ONE("parse \\\"example.com\\\": invalid URI for request") },
		{ "format.uri().validate('')", ONE("parse \\\"\\\": empty url") },
		{ "format.uri().validate('https://h:x/')",
		  ONE("parse \\\"https://h:x/\\\": invalid port \\\":x\\\" after host") },
		/* uuid: 8-4-4-4-12 hex digits, any case, dashes optional. */
		{ "format.uuid().validate('123e4567-e89b-12d3-a456-426614174000')", NONE },
		{ "format.uuid().validate('123E4567E89B12D3A456426614174000')", NONE },
		{ "format.uuid().validate('123e4567-e89b-12d3-a456-42661417400')",
		  ONE("does not match the UUID format") },
		{ "format.uuid().validate('123e4567-e89b-12d3-a456-426614174000 ')",
		  ONE("does not match the UUID format") },
		{ "format.uuid().validate('g23e4567-e89b-12d3-a456-426614174000')",
		  ONE("does not match the UUID format") },
		/* byte: base64 in groups of four. */
		{ "format.byte().validate('aGVsbG8=')", NONE },
		{ "format.byte().validate('aGk=')", NONE },
		{ "format.byte().validate('aA==')", NONE },
		{ "format.byte().validate('aGVsbG8')", ONE("invalid base64") },
		{ "format.byte().validate('a===')", ONE("invalid base64") },
		{ "format.byte().validate('')", ONE("invalid base64") },
		{ "format.byte().validate('aG-s')", ONE("invalid base64") },
		/* date: time.Parse("2006-01-02"). */
		{ "format.date().validate('2021-01-01')", NONE },
		{ "format.date().validate('2024-02-29')", NONE },
		{ "format.date().validate('2000-02-29')", NONE },
		{ "format.date().validate('1900-02-29')", ONE("invalid date") },
		{ "format.date().validate('2021-13-01')", ONE("invalid date") },
		{ "format.date().validate('2021-04-31')", ONE("invalid date") },
		{ "format.date().validate('2021-1-01')", ONE("invalid date") },
		{ "format.date().validate('2021-01-01T00:00:00Z')", ONE("invalid date") },
		/* datetime: strfmt's IsDateTime. */
		{ "format.datetime().validate('2021-01-01T00:00:00Z')", NONE },
		{ "format.datetime().validate('2021-01-01t23:59:59.123+05:30')", NONE },
		{ "format.datetime().validate('2021-01-01T00:00:00Z5Z')", NONE },   /* '.' is any */
		{ "format.datetime().validate('2021-01-01T00:00:00ZTjunk')", NONE }, /* 3rd part */
		{ "format.datetime().validate('2021-01-01T24:00:00Z')", ONE("invalid datetime") },
		{ "format.datetime().validate('2021-01-01T00:60:00Z')", ONE("invalid datetime") },
		{ "format.datetime().validate('2021-01-01T00:00:00')", ONE("invalid datetime") },
		{ "format.datetime().validate('2021-01-01 00:00:00Z')", ONE("invalid datetime") },
		{ "format.datetime().validate('2021-02-30T00:00:00Z')", ONE("invalid datetime") },
		{ "format.datetime().validate('abc')", ONE("invalid datetime") },
		/* As Kubernetes documents it. */
		{ "format.dns1123Label().validate('Bad').hasValue()", "true" },
		{ "format.dns1123Label().validate('a.b').value().join('\\n') == \"" LABEL_MSG "\"",
		  "true" },
		/* Type errors. */
		{ "format.validate('x')", "compile: *" },
		{ "format.uuid().validate(1)", "compile: *" },
		{ "format.named(1)", "compile: *" },
	};

	RUN(cases);
}

static void test_ip(void)
{
	static const struct eval_case cases[] = {
		{ "ip('10.0.0.1')", "ip(\"10.0.0.1\")" },
		{ "string(ip('2001:0DB8:0:0:1:0:0:1'))", "\"2001:db8::1:0:0:1\"" },
		{ "string(ip('1:0:0:2:0:0:0:3'))", "\"1:0:0:2::3\"" },
		{ "string(ip('::'))", "\"::\"" },
		{ "string(ip('1::'))", "\"1::\"" },
		{ "string(ip('::1.2.3.4'))", "\"::102:304\"" },
		{ "isIP('1.2.3.4')", "true" },
		{ "isIP('1.2.3')", "false" },
		{ "isIP('::ffff:1.2.3.4')", "false" },
		{ "isIP('1:2:3:4:5:6:7:8:9')", "false" },
		{ "isIP('1::2::3')", "false" },
		{ "isIP('::1:2:3:4:5:6:7:8')", "false" },
		{ "isIP('1:2:3:4:5:6:7:8::')", "false" },
		{ "string(ip('1:2:3:4:5:6:7::'))", "\"1:2:3:4:5:6:7:0\"" },
		{ "isIP('1:2:3:4:5:6:7:8:')", "false" },
		{ "isIP('1:2:3:4:5:6:1.2.3.4')", "true" },
		{ "isIP('1:2:3:4:5:1.2.3.4')", "false" },
		{ "isIP('1.2.3.4.5')", "false" },
		{ "isIP('::1%')", "false" },
		{ "ip.isCanonical('2001:db8::1')", "true" },
		{ "ip.isCanonical('2001:DB8::1')", "false" },
		{ "ip.isCanonical('2001:db8:0:0:0:0:0:1')", "false" },
		{ "ip('01.2.3.4')", "error: IP Address \"01.2.3.4\" parse error during conversion "
		  "from string: ParseAddr(\"01.2.3.4\"): IPv4 field has octet with leading zero" },
		{ "ip('256.0.0.1')", "error: IP Address \"256.0.0.1\" parse error*" },
		{ "ip('fe80::1%eth0')", "error: IP address \"fe80::1%eth0\" with zone value is "
		  "not allowed" },
		{ "ip('::ffff:1.2.3.4')",
		  "error: IPv4-mapped IPv6 address \"::ffff:1.2.3.4\" is not allowed" },
		{ "ip('1.2.3.4').family()", "4" },
		{ "ip('::1').family()", "6" },
		{ "ip('0.0.0.0').isUnspecified()", "true" },
		{ "ip('::').isUnspecified()", "true" },
		{ "ip('127.1.2.3').isLoopback()", "true" },
		{ "ip('::1').isLoopback()", "true" },
		{ "ip('224.0.0.251').isLinkLocalMulticast()", "true" },
		{ "ip('ff02::fb').isLinkLocalMulticast()", "true" },
		{ "ip('ff05::fb').isLinkLocalMulticast()", "false" },
		{ "ip('169.254.1.1').isLinkLocalUnicast()", "true" },
		{ "ip('fe80::1').isLinkLocalUnicast()", "true" },
		{ "ip('10.0.0.1').isGlobalUnicast()", "true" },
		{ "ip('fd00::1').isGlobalUnicast()", "true" },
		{ "ip('255.255.255.255').isGlobalUnicast()", "false" },
		{ "ip('224.0.0.1').isGlobalUnicast()", "false" },
		{ "ip('1.2.3.4') == ip('1.2.3.4')", "true" },
		{ "ip('1.2.3.4') == ip('1.2.3.5')", "false" },
		{ "cidr('10.0.0.0/8')", "cidr(\"10.0.0.0/8\")" },
		{ "string(cidr('2001:DB8::/32'))", "\"2001:db8::/32\"" },
		{ "isCIDR('10.0.0.0/8')", "true" },
		{ "isCIDR('10.0.0.0')", "false" },
		{ "isCIDR('10.0.0.0/33')", "false" },
		{ "isCIDR('10.0.0.0/08')", "false" },
		{ "cidr('10.0.0.0')", "error: network address parse error during conversion from "
		  "string: netip.ParsePrefix(\"10.0.0.0\"): no '/'" },
		{ "cidr('10.0.0.0/33')", "error: network address parse error during conversion from "
		  "string: netip.ParsePrefix(\"10.0.0.0/33\"): bad bits after slash: \"33\"" },
		{ "cidr('10.0.0.0/8').containsIP(ip('10.255.0.1'))", "true" },
		{ "cidr('10.0.0.0/8').containsIP('11.0.0.1')", "false" },
		{ "cidr('10.0.0.0/8').containsIP('::1')", "false" },
		{ "cidr('10.0.0.0/8').containsIP('x')", "error: IP Address \"x\" parse error*" },
		{ "cidr('10.0.0.0/8').containsCIDR(cidr('10.1.0.0/16'))", "true" },
		{ "cidr('10.0.0.0/8').containsCIDR('10.0.0.0/7')", "false" },
		{ "cidr('10.0.0.0/8').containsCIDR('11.0.0.0/16')", "false" },
		{ "cidr('192.168.1.5/24').ip()", "ip(\"192.168.1.5\")" },
		{ "cidr('192.168.1.5/20').masked()", "cidr(\"192.168.0.0/20\")" },
		{ "cidr('2001:db8::ff/120').masked()", "cidr(\"2001:db8::/120\")" },
		{ "cidr('::/0').prefixLength()", "0" },
		{ "cidr('10.1.0.0/16').prefixLength()", "16" },
	};

	RUN(cases);
}

static void test_format(void)
{
	static const struct eval_case cases[] = {
		{ "'%s and %d'.format(['a', 3])", "\"a and 3\"" },
		{ "'%%%s%%'.format(['x'])", "\"%x%\"" },
		{ "'%.3f'.format([1.2345])", "\"1.234\"" },
		{ "'%.0f'.format([2.5])", "\"2\"" },
		{ "'%f'.format([2])", "\"2.000000\"" },
		{ "'%e'.format([1052.032911275])", "\"1.052033e+03\"" },
		{ "'%b %o %x %X'.format([5, 8, 255, 255])", "\"101 10 ff FF\"" },
		{ "'%b'.format([true])", "\"1\"" },
		{ "'%x'.format([-255])", "\"-ff\"" },
		{ "'%x'.format(['hi'])", "\"6869\"" },
		{ "'%s'.format([[1, 'a', null, 2.5, [true]]])", "\"[1, a, null, 2.5, [true]]\"" },
		{ "'%s'.format([{'b': 1, 'a': duration('2m')}])", "\"{a: 120s, b: 1}\"" },
		{ "'%s'.format([type(1)])", "\"int\"" },
		{ "'%s'.format([quantity('1Gi')])", "\"quantity(\\\"1Gi\\\")\"" },
		{ "'%d'.format([double('nan')])", "\"NaN\"" },
		{ "'%d'.format([2.5])", "\"2.5\"" },
		{ "'%s %s %s %s'.format([1e21, 1e-7, 1.0, -0.0])",
		  "\"1000000000000000000000 0.0000001 1 -0\"" },
		{ "'%s'.format([123456789.125])", "\"123456789.125\"" },
		{ "'%s'.format([0.1 + 0.2])", "\"0.30000000000000004\"" },
		{ "'%f'.format([double('-inf')])", "\"-Infinity\"" },
		{ "'%d %d'.format([1])", "error: index 1 out of range" },
		{ "'%a'.format([1])", "error: could not parse formatting clause: "
		  "unrecognized formatting clause \"a\"" },
		{ "'%d'.format(['x'])", "error: error during formatting: decimal clause can only "
		  "be used on integers, was given string" },
		{ "'%x'.format([1.5])", "error: error during formatting: only integers, byte "
		  "buffers, and strings can be formatted as hex, was given double" },
		{ "'%b'.format(['a'])", "error: error during formatting: only integers and bools "
		  "can be formatted as binary, was given string" },
		{ "'%.2d'.format([1])", "error: could not parse formatting clause: *" },
		{ "'abc%'.format([])", "error: could not parse formatting clause: *" },
	};

	RUN(cases);
}

static void test_quantity(void)
{
	static const struct eval_case cases[] = {
		{ "quantity('100Gi')", "quantity(\"100Gi\")" },
		{ "isQuantity('1.5k')", "true" },
		{ "isQuantity('1.5x')", "false" },
		{ "isQuantity('')", "false" },
		{ "quantity('x')", "error: quantities must match the regular expression*" },
		{ "quantity('1Gi').isGreaterThan(quantity('1G'))", "true" },
		{ "quantity('1G').isLessThan(quantity('1Gi'))", "true" },
		{ "quantity('1Gi').compareTo(quantity('1024Mi'))", "0" },
		{ "quantity('1').compareTo(quantity('2'))", "-1" },
		{ "quantity('1Gi') == quantity('1024Mi')", "true" },
		{ "quantity('1Gi') == quantity('1G')", "false" },
		{ "quantity('1Gi').add(quantity('1Gi'))", "quantity(\"2Gi\")" },
		{ "quantity('1Gi').add(1).asInteger()", "1073741825" },
		{ "quantity('1Gi').sub(quantity('512Mi'))", "quantity(\"512Mi\")" },
		{ "quantity('5').sub(7).asInteger()", "-2" },
		{ "quantity('1500m').asInteger()", "error: cannot convert value to integer" },
		{ "quantity('1500m').isInteger()", "false" },
		{ "quantity('2k').isInteger()", "true" },
		{ "quantity('1500m').asApproximateFloat()", "1.5" },
		{ "quantity('100Ei').asInteger()", "error: cannot convert value to integer" },
		{ "sign(quantity('-1'))", "-1" },
		{ "sign(quantity('0'))", "0" },
		{ "sign(quantity('3m'))", "1" },
		{ "quantity('1').sign()", "compile: *" },
	};

	RUN(cases);
}

static void test_semver(void)
{
	static const struct eval_case cases[] = {
		{ "semver('1.2.3')", "semver(\"1.2.3\")" },
		{ "semver('1.2.3-rc.1+build.5').major()", "1" },
		{ "semver('1.2.3').minor()", "2" },
		{ "semver('1.2.3').patch()", "3" },
		{ "isSemver('1.2.3')", "true" },
		{ "isSemver('v1.2.3')", "false" },
		{ "isSemver('1.02.3')", "false" },
		{ "isSemver('1.2')", "false" },
		{ "semver('v1.0')", "error: No Major.Minor.Patch elements found" },
		{ "semver('1.2.3-')", "error: *" },
		/* Normalization: one leading v, leading zeros, missing parts. */
		{ "semver('v1.02', true)", "semver(\"1.2.0\")" },
		{ "semver('v01', true)", "semver(\"1.0.0\")" },
		{ "semver('1.2.3', false)", "semver(\"1.2.3\")" },
		{ "semver('v1.2', false)", "error: *" },
		{ "isSemver('v1.02', true)", "true" },
		{ "isSemver('v1.0-rc1', true)", "false" },
		{ "semver('1.0-rc1', true)",
		  "error: short version cannot contain PreRelease/Build meta data" },
		{ "semver('1.2.3').isGreaterThan(semver('1.2.2'))", "true" },
		{ "semver('1.2.3-alpha').isLessThan(semver('1.2.3'))", "true" },
		{ "semver('1.2.3-alpha.1').compareTo(semver('1.2.3-alpha.beta'))", "-1" },
		{ "semver('1.2.3').compareTo(semver('1.2.3'))", "0" },
		{ "semver('2.0.0').compareTo(semver('10.0.0'))", "-1" },
		{ "semver('1.2.3+a') == semver('1.2.3+b')", "true" },
		{ "semver('1.2.3') == semver('1.2.4')", "false" },
		{ "semver('9.0.0').compareTo(semver('9.0.0')) >= 0", "true" },
	};

	RUN(cases);
}

/* The cost meter charges library calls: a split of a long string costs in
 * proportion to its length, and repeating it in a comprehension hits the
 * limit instead of running on. sort and distinct charge cel-go's 2 x n^2
 * comparisons: 500 elements fit in the limit (500,000), 2,000 do not. */
static void test_costs(void)
{
	static const struct eval_case cases[] = {
		{ "lists.range(1000).map(i, lists.range(1000).map(j, 'x'.replace('', 'y')))"
		  ".size()", "error: operation cancelled: actual cost limit exceeded" },
		{ "lists.range(500).sort().size()", "500" },
		{ "lists.range(500).distinct().size()", "500" },
		{ "lists.range(2000).sort().size()",
		  "error: operation cancelled: actual cost limit exceeded" },
	};

	RUN(cases);
}

/* Runtime cost of expr with the string variable s bound to a string of len
 * 'a's. */
static uint64_t cost_with(const char *expr, size_t len)
{
	static char text[4096];
	struct dt_err err = { 0 };
	struct cel_env *env = cel_env_new(CEL_ENV_CLI, &err);
	struct cel_evaluation *ev = cel_evaluation_new();
	struct cel_program *p = NULL;
	struct cel_value vars[2], out;
	uint64_t cost = 0;
	int slot;

	CU_ASSERT_PTR_NOT_NULL_FATAL(env);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ev);
	memset(text, 'a', len);
	slot = cel_env_declare(env, "s", "string", &err);
	CU_ASSERT_EQUAL_FATAL(slot, 1);
	vars[0] = (struct cel_value){ .kind = CEL_KIND_COUNT };
	vars[1] = cel_string(text, len);
	CU_ASSERT_EQUAL_FATAL(cel_compile(env, expr, strlen(expr), &p, &err), 0);
	if (cel_eval(p, vars, 2, ev, &out, &err) == 0)
		cost = cel_evaluation_cost(ev);
	CU_ASSERT(cost > 0);
	cel_program_free(p);
	cel_evaluation_free(ev);
	cel_env_free(env);
	return cost;
}

/* The Kubernetes cost overrides scale with the input: growing s from 10 to
 * 100 bytes adds exactly what each formula says. */
static void test_cost_formulas(void)
{
	/* ceil(0.1 * n) */
	CU_ASSERT_EQUAL(cost_with("s.lowerAscii()", 100) - cost_with("s.lowerAscii()", 10), 9);
	CU_ASSERT_EQUAL(cost_with("s.trim()", 100) - cost_with("s.trim()", 10), 9);
	/* ceil(0.2 * n) */
	CU_ASSERT_EQUAL(cost_with("s.split(',')", 100) - cost_with("s.split(',')", 10), 18);
	CU_ASSERT_EQUAL(cost_with("s.replace('b', 'c')", 100) -
			cost_with("s.replace('b', 'c')", 10), 18);
	/* ceil(0.1 * (1 + n)) * ceil(0.25 * len(pattern)), pattern of 8 */
	CU_ASSERT_EQUAL(cost_with("s.matches('^a+b?c*$')", 100) -
			cost_with("s.matches('^a+b?c*$')", 10), (11 - 2) * 2);
	/* parsing: ceil(0.1 * n) */
	CU_ASSERT_EQUAL(cost_with("isQuantity(s)", 100) - cost_with("isQuantity(s)", 10), 9);
	CU_ASSERT_EQUAL(cost_with("isSemver(s)", 100) - cost_with("isSemver(s)", 10), 9);
	CU_ASSERT_EQUAL(cost_with("isURL(s)", 100) - cost_with("isURL(s)", 10), 9);
}

/* @sortByAssociatedKeys, the target of cel-go's sortBy macro, called
 * directly (CEL source cannot name it). */
static void test_sort_by_keys(void)
{
	const struct cel_overload *ov = NULL;
	char buf[4096];
	struct cel_arena arena;
	struct cel_ctx ctx = { .arena = &arena, .cost_limit = CEL_COST_LIMIT };
	struct cel_value items[4] = { cel_string("a", 1), cel_string("b", 1), cel_string("c", 1),
				      cel_string("d", 1) };
	struct cel_value keys[4] = { cel_double(3), cel_double(1), cel_double(3), cel_double(0.5) };
	struct cel_list il = { 4, items, 0 }, kl = { 4, keys, 0 }, short_kl = { 3, keys, 0 };
	struct cel_value args[2] = { cel_list_value(&il), cel_list_value(&kl) };
	struct cel_value r;

	for (size_t i = 0; i < cel_lib_lists.n_overloads; i++)
		if (!strcmp(cel_lib_lists.overloads[i].name, "@sortByAssociatedKeys"))
			ov = &cel_lib_lists.overloads[i];
	CU_ASSERT_PTR_NOT_NULL_FATAL(ov);
	cel_arena_init(&arena, buf, sizeof(buf), 1 << 20);
	r = ov->fn(&ctx, args, 2);
	CU_ASSERT_EQUAL_FATAL(r.kind, CEL_LIST);
	CU_ASSERT_EQUAL_FATAL(r.v.list->len, 4);
	/* 0.5 < 1 < 3 = 3, equal keys keep their order */
	CU_ASSERT_EQUAL(r.v.list->items[0].v.str.s[0], 'd');
	CU_ASSERT_EQUAL(r.v.list->items[1].v.str.s[0], 'b');
	CU_ASSERT_EQUAL(r.v.list->items[2].v.str.s[0], 'a');
	CU_ASSERT_EQUAL(r.v.list->items[3].v.str.s[0], 'c');
	args[1] = cel_list_value(&short_kl);
	r = ov->fn(&ctx, args, 2);
	CU_ASSERT_EQUAL(r.kind, CEL_ERROR);
	/* keys of one kind only (cel-go compares their types): 1 and 1.0 differ */
	keys[1] = cel_int(1);
	args[1] = cel_list_value(&kl);
	r = ov->fn(&ctx, args, 2);
	CU_ASSERT_EQUAL_FATAL(r.kind, CEL_ERROR);
	CU_ASSERT_STRING_EQUAL(r.v.err.msg, "list elements must have the same type");
	cel_arena_release(&arena);
}

/* One compiled program evaluated from several threads at once: the regex
 * cache is per thread, everything else is read-only. */
struct thread_job {
	const struct cel_program *prog;
	int ok;
};

static void *eval_thread(void *arg)
{
	struct thread_job *job = arg;
	struct cel_evaluation *ev = cel_evaluation_new();
	struct dt_err err = { 0 };
	struct cel_value v;

	for (int i = 0; ev && i < 2000; i++)
		if (cel_eval(job->prog, NULL, 0, ev, &v, &err) == 0 && v.kind == CEL_BOOL && v.v.b)
			job->ok++;
	cel_evaluation_free(ev);
	return NULL;
}

static void test_threads(void)
{
	static const char expr[] =
		"'gpu-12'.matches('^gpu-[0-9]+$') && 'a1b2'.findAll('[0-9]') == ['1', '2'] && "
		"'x-%d'.format([1]) == 'x-1' && ip('10.0.0.1').isGlobalUnicast()";
	struct dt_err err = { 0 };
	struct cel_env *env = cel_env_new(CEL_ENV_CLI, &err);
	struct cel_program *p = NULL;
	struct thread_job jobs[4];
	pthread_t t[4];

	CU_ASSERT_PTR_NOT_NULL_FATAL(env);
	CU_ASSERT_EQUAL_FATAL(cel_compile(env, expr, strlen(expr), &p, &err), 0);
	for (int i = 0; i < 4; i++) {
		jobs[i] = (struct thread_job){ p, 0 };
		CU_ASSERT_EQUAL(pthread_create(&t[i], NULL, eval_thread, &jobs[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		CU_ASSERT_EQUAL(jobs[i].ok, 2000);
	}
	cel_program_free(p);
	cel_env_free(env);
}

DT_SUITE_MAIN("cel_lib",
	      DT_TEST(test_threads),
	      DT_TEST(test_sort_by_keys),
	      DT_TEST(test_cost_formulas),
	      DT_TEST(test_strings),
	      DT_TEST(test_lists),
	      DT_TEST(test_sets),
	      DT_TEST(test_regex),
	      DT_TEST(test_url),
	      DT_TEST(test_named_format),
	      DT_TEST(test_ip),
	      DT_TEST(test_format),
	      DT_TEST(test_quantity),
	      DT_TEST(test_semver),
	      DT_TEST(test_costs))
