/* test_doc.c - the document tree: reading YAML and JSON, building,
 * comparing and printing trees, and a corpus of malformed input. */
#include <dirent.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "doc.h"
#include "dt_test.h"

/* Parses text, expecting success of the call itself. */
static struct doc_stream *parse(const char *text, enum doc_format fmt)
{
	struct doc_stream *s = NULL;
	struct dt_err err = { 0 };
	int rc = doc_parse(text, strlen(text), fmt, "t.yaml", &s, &err);

	CU_ASSERT_EQUAL(rc, 0);
	if (rc)
		fprintf(stderr, "\n  doc_parse: %s\n", err.msg);
	return s;
}

/* The root of the only document of text, which must parse cleanly. */
static const struct doc_node *root1(struct doc_stream **sp, const char *text)
{
	struct doc_stream *s = parse(text, DOC_FORMAT_AUTO);

	*sp = s;
	if (!s)
		return NULL;
	CU_ASSERT_EQUAL(s->n_docs, 1);
	if (s->n_docs < 1)
		return NULL;
	if (s->docs[0].error)
		fprintf(stderr, "\n  unexpected error: %s\n", s->docs[0].error);
	CU_ASSERT_PTR_NULL(s->docs[0].error);
	return s->docs[0].root;
}

/* The integer value of n, or a marker when n is missing or no integer. */
static int64_t ival(const struct doc_node *n)
{
	return n && n->kind == DOC_INT ? n->u.i : INT64_MIN + 7;
}

/* ---- Scalar resolution ---- */

struct res_case {
	const char *yaml;       /* the value, as written after "v: " */
	enum doc_kind kind;
	int64_t i;              /* for DOC_INT, DOC_BOOL */
	double f;               /* for DOC_FLOAT */
	const char *s;          /* for DOC_STRING: the expected text */
};

static const struct res_case res_cases[] = {
	{ "", DOC_NULL, 0, 0, NULL },
	{ "~", DOC_NULL, 0, 0, NULL },
	{ "null", DOC_NULL, 0, 0, NULL },
	{ "Null", DOC_NULL, 0, 0, NULL },
	{ "NULL", DOC_NULL, 0, 0, NULL },
	{ "nULL", DOC_STRING, 0, 0, "nULL" },
	{ "true", DOC_BOOL, 1, 0, NULL },
	{ "True", DOC_BOOL, 1, 0, NULL },
	{ "TRUE", DOC_BOOL, 1, 0, NULL },
	{ "yes", DOC_BOOL, 1, 0, NULL },
	{ "Yes", DOC_BOOL, 1, 0, NULL },
	{ "y", DOC_BOOL, 1, 0, NULL },
	{ "Y", DOC_BOOL, 1, 0, NULL },
	{ "on", DOC_BOOL, 1, 0, NULL },
	{ "ON", DOC_BOOL, 1, 0, NULL },
	{ "false", DOC_BOOL, 0, 0, NULL },
	{ "no", DOC_BOOL, 0, 0, NULL },
	{ "N", DOC_BOOL, 0, 0, NULL },
	{ "off", DOC_BOOL, 0, 0, NULL },
	{ "Off", DOC_BOOL, 0, 0, NULL },
	{ "yEs", DOC_STRING, 0, 0, "yEs" },
	{ "0", DOC_INT, 0, 0, NULL },
	{ "42", DOC_INT, 42, 0, NULL },
	{ "-42", DOC_INT, -42, 0, NULL },
	{ "+42", DOC_INT, 42, 0, NULL },
	{ "1_000", DOC_INT, 1000, 0, NULL },
	{ "0x1F", DOC_INT, 31, 0, NULL },
	{ "-0x10", DOC_INT, -16, 0, NULL },
	{ "0o17", DOC_INT, 15, 0, NULL },
	{ "0777", DOC_INT, 511, 0, NULL },
	{ "0b101", DOC_INT, 5, 0, NULL },
	{ "9223372036854775807", DOC_INT, INT64_MAX, 0, NULL },
	{ "-9223372036854775808", DOC_INT, INT64_MIN, 0, NULL },
	{ "9223372036854775808", DOC_FLOAT, 0, 9223372036854775808.0, NULL },
	{ "99999999999999999999999", DOC_FLOAT, 0, 1e23, NULL },
	{ "08", DOC_FLOAT, 0, 8, NULL },
	/* Numbers have no length limit (found by fuzz_doc). */
	{ "1000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000", DOC_FLOAT, 0, 1e129, NULL },
	{ "0.00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000001", DOC_FLOAT, 0, 0.0, NULL },
	{ "1.5", DOC_FLOAT, 0, 1.5, NULL },
	{ "-.5", DOC_FLOAT, 0, -0.5, NULL },
	{ ".5", DOC_FLOAT, 0, 0.5, NULL },
	{ "1.", DOC_FLOAT, 0, 1, NULL },
	{ "1e3", DOC_FLOAT, 0, 1000, NULL },
	{ "1E-2", DOC_FLOAT, 0, 0.01, NULL },
	{ "1_0.5", DOC_FLOAT, 0, 10.5, NULL },
	{ ".inf", DOC_FLOAT, 0, HUGE_VAL, NULL },
	{ "-.Inf", DOC_FLOAT, 0, -HUGE_VAL, NULL },
	{ "+.INF", DOC_FLOAT, 0, HUGE_VAL, NULL },
	{ "1e999", DOC_STRING, 0, 0, "1e999" },
	{ "0xFFFFFFFFFFFFFFFFFF", DOC_STRING, 0, 0, "0xFFFFFFFFFFFFFFFFFF" },
	{ "0x", DOC_STRING, 0, 0, "0x" },
	{ "-x", DOC_STRING, 0, 0, "-x" },
	{ "1.2.3", DOC_STRING, 0, 0, "1.2.3" },
	{ "80Gi", DOC_STRING, 0, 0, "80Gi" },
	{ "500m", DOC_STRING, 0, 0, "500m" },
	{ "2021-01-01", DOC_STRING, 0, 0, "2021-01-01" },
	{ "1:20", DOC_STRING, 0, 0, "1:20" },
	{ "<<x", DOC_STRING, 0, 0, "<<x" },
	{ "'123'", DOC_STRING, 0, 0, "123" },
	{ "\"true\"", DOC_STRING, 0, 0, "true" },
	{ "''", DOC_STRING, 0, 0, "" },
	{ "\"\"", DOC_STRING, 0, 0, "" },
	{ "!!str 12", DOC_STRING, 0, 0, "12" },
	{ "!!float 12", DOC_FLOAT, 0, 12, NULL },
	{ "!!int \"12\"", DOC_INT, 12, 0, NULL },
	{ "! 12", DOC_STRING, 0, 0, "12" },
	{ "|\n  80\n", DOC_STRING, 0, 0, "80\n" },
	{ "hello world", DOC_STRING, 0, 0, "hello world" },
	{ "\"tab\\there\"", DOC_STRING, 0, 0, "tab\there" },
};

static void test_scalar_resolution(void)
{
	for (size_t i = 0; i < sizeof(res_cases) / sizeof(res_cases[0]); i++) {
		const struct res_case *rc = &res_cases[i];
		char text[1024];
		struct doc_stream *s;
		const struct doc_node *v;
		bool ok;

		snprintf(text, sizeof(text), "v: %s\n", rc->yaml);
		v = doc_get(root1(&s, text), "v");
		ok = v && v->kind == rc->kind;
		if (ok && rc->kind == DOC_INT)
			ok = v->u.i == rc->i;
		if (ok && rc->kind == DOC_BOOL)
			ok = v->u.b == (rc->i != 0);
		if (ok && rc->kind == DOC_FLOAT)
			ok = v->u.f == rc->f;
		if (ok && rc->kind == DOC_STRING)
			ok = v->text_len == strlen(rc->s) && memcmp(v->text, rc->s, v->text_len) == 0;
		if (!ok)
			fprintf(stderr, "\n  resolution of %s: got %s\n", rc->yaml,
				v ? doc_kind_name(v->kind) : "(none)");
		CU_ASSERT(ok);
		doc_stream_free(s);
	}
}

static void test_source_text_and_quoting(void)
{
	struct doc_stream *s;
	const struct doc_node *r = root1(&s, "a: 80\nb: \"80Gi\"\nc: 0x10\nd: 1.50\n");

	DT_ASSERT_STR(doc_get(r, "a")->text, "80");
	CU_ASSERT_FALSE(doc_get(r, "a")->quoted);
	CU_ASSERT_TRUE(doc_get(r, "b")->quoted);
	DT_ASSERT_STR(doc_str(doc_get(r, "b")), "80Gi");
	DT_ASSERT_STR(doc_get(r, "c")->text, "0x10");
	CU_ASSERT_EQUAL(doc_get(r, "c")->u.i, 16);
	DT_ASSERT_STR(doc_get(r, "d")->text, "1.50");
	CU_ASSERT_PTR_NULL(doc_str(doc_get(r, "a")));
	doc_stream_free(s);

	/* A double-quoted "\0" is a string holding a NUL byte. */
	r = root1(&s, "k: \"a\\0b\"\n");
	CU_ASSERT_EQUAL(doc_get(r, "k")->text_len, 3);
	CU_ASSERT_EQUAL(doc_get(r, "k")->text[1], '\0');
	doc_stream_free(s);
}

static void test_keys_stringified(void)
{
	struct doc_stream *s;
	const struct doc_node *r = root1(&s, "1: a\ntrue: b\n0x10: c\n1.5: d\n'q': e\n");

	DT_ASSERT_STR(doc_str(doc_get(r, "1")), "a");
	DT_ASSERT_STR(doc_str(doc_get(r, "true")), "b");
	DT_ASSERT_STR(doc_str(doc_get(r, "16")), "c");
	DT_ASSERT_STR(doc_str(doc_get(r, "1.5")), "d");
	DT_ASSERT_STR(doc_str(doc_get(r, "q")), "e");
	for (size_t i = 0; r && i < r->u.map.n; i++)
		CU_ASSERT_EQUAL(r->u.map.pairs[i].key->kind, DOC_STRING);
	doc_stream_free(s);

	/* YAML 1.1 as Kubernetes reads it: a plain y or on key is the boolean
	 * true, so the key is "true". */
	r = root1(&s, "y: 1\n");
	CU_ASSERT_EQUAL(ival(doc_get(r, "true")), 1);
	CU_ASSERT_PTR_NULL(doc_get(r, "y"));
	doc_stream_free(s);
}

/* ---- Streams and positions ---- */

static void test_multi_document(void)
{
	struct doc_stream *s = parse("# header\n---\na: 1\n---\n---\nb: 2\n...\n---\n- x\n",
				     DOC_FORMAT_YAML);

	CU_ASSERT_FATAL(s != NULL);
	CU_ASSERT_EQUAL(s->n_docs, 4);
	if (s->n_docs == 4) {
		CU_ASSERT_EQUAL(ival(doc_get(s->docs[0].root, "a")), 1);
		CU_ASSERT_EQUAL(s->docs[0].line, 2);
		CU_ASSERT_PTR_NULL(s->docs[1].root);
		CU_ASSERT_PTR_NULL(s->docs[1].error);
		CU_ASSERT_EQUAL(ival(doc_get(s->docs[2].root, "b")), 2);
		CU_ASSERT_EQUAL(s->docs[3].root->kind, DOC_SEQ);
		CU_ASSERT_EQUAL(s->docs[3].line, 8);
	}
	DT_ASSERT_STR(s->filename, "t.yaml");
	doc_stream_free(s);

	/* Nothing but comments: one empty document. */
	s = parse("# nothing\n", DOC_FORMAT_AUTO);
	CU_ASSERT_EQUAL(s->n_docs, 1);
	CU_ASSERT_PTR_NULL(s->docs[0].root);
	CU_ASSERT_PTR_NULL(s->docs[0].error);
	doc_stream_free(s);

	/* Several JSON values make several documents. */
	s = parse("{\"a\": 1}\n[1,2]{}\n  \"x\"", DOC_FORMAT_AUTO);
	CU_ASSERT_EQUAL(s->n_docs, 4);
	if (s->n_docs == 4) {
		CU_ASSERT_EQUAL(s->docs[1].root->u.seq.n, 2);
		CU_ASSERT_EQUAL(s->docs[2].root->kind, DOC_MAP);
		DT_ASSERT_STR(doc_str(s->docs[3].root), "x");
		CU_ASSERT_EQUAL(s->docs[3].line, 3);
	}
	doc_stream_free(s);
}

static void test_kind_list_plain(void)
{
	struct doc_stream *s;
	const struct doc_node *r = root1(&s, "apiVersion: v1\nkind: List\nitems:\n"
					     "- kind: Pod\n  metadata:\n    name: a\n"
					     "- kind: Node\n  metadata: {name: b}\n");
	const struct doc_node *items = doc_get(r, "items");

	CU_ASSERT_FATAL(items != NULL);
	CU_ASSERT_EQUAL(items->kind, DOC_SEQ);
	CU_ASSERT_EQUAL(items->u.seq.n, 2);
	DT_ASSERT_STR(doc_str(doc_get_path(items->u.seq.items[1], "metadata", "name", NULL)), "b");
	CU_ASSERT_PTR_NULL(doc_get_path(r, "items", "x", NULL));
	DT_ASSERT_STR(doc_str(doc_get_path(r, "kind", NULL)), "List");
	doc_stream_free(s);
}

static void test_positions(void)
{
	struct doc_stream *s;
	const struct doc_node *r = root1(&s, "a:\n  b: [1, 'x']\n  c:\n  - d: 2\n");
	const struct doc_node *b = doc_get(r, "a") ? doc_get(doc_get(r, "a"), "b") : NULL;

	CU_ASSERT_FATAL(b != NULL);
	CU_ASSERT_EQUAL(b->line, 2);
	CU_ASSERT_EQUAL(b->col, 6);
	CU_ASSERT_EQUAL(b->u.seq.items[1]->line, 2);
	CU_ASSERT_EQUAL(b->u.seq.items[1]->col, 10);
	CU_ASSERT_EQUAL(doc_get(doc_get(r, "a"), "c")->u.seq.items[0]->line, 4);
	CU_ASSERT_EQUAL(r->u.map.pairs[0].key->line, 1);
	CU_ASSERT_EQUAL(r->u.map.pairs[0].key->col, 1);
	doc_stream_free(s);

	/* JSON columns count characters, not bytes. */
	r = root1(&s, "{\n  \"é\": \"ü\", \"n\": 5\n}");
	CU_ASSERT_FATAL(r != NULL);
	CU_ASSERT_EQUAL(doc_get(r, "n")->line, 2);
	CU_ASSERT_EQUAL(doc_get(r, "n")->col, 18);
	CU_ASSERT_EQUAL(doc_get(r, "é")->col, 8);
	doc_stream_free(s);
}

static void test_anchors_and_merges(void)
{
	struct doc_stream *s;
	const struct doc_node *r = root1(&s,
		"base: &b {x: 1, w: 2}\n"
		"more: &m {z: 3}\n"
		"one:\n  <<: *b\n  w: 20\n"
		"two:\n  w: 5\n  <<: [*m, *b]\n"
		"alias: *b\n"
		"lit: &s hello\n"
		"again: *s\n"
		"quoted:\n  \"<<\": 1\n");

	CU_ASSERT_FATAL(r != NULL);
	CU_ASSERT_EQUAL(ival(doc_get_path(r, "one", "x", NULL)), 1);
	CU_ASSERT_EQUAL(ival(doc_get_path(r, "one", "w", NULL)), 20);     /* own key wins */
	CU_ASSERT_EQUAL(doc_get(r, "one")->u.map.n, 2);
	CU_ASSERT_EQUAL(ival(doc_get_path(r, "two", "w", NULL)), 5);
	CU_ASSERT_EQUAL(ival(doc_get_path(r, "two", "z", NULL)), 3);
	CU_ASSERT_EQUAL(ival(doc_get_path(r, "two", "x", NULL)), 1);
	CU_ASSERT_PTR_NULL(doc_get_path(r, "two", "<<", NULL));
	CU_ASSERT(doc_equal(doc_get(r, "alias"), doc_get(r, "base")));
	DT_ASSERT_STR(doc_str(doc_get(r, "again")), "hello");
	/* A quoted "<<" is an ordinary key. */
	CU_ASSERT_EQUAL(ival(doc_get_path(r, "quoted", "<<", NULL)), 1);
	doc_stream_free(s);
}

/* ---- Errors ---- */

struct err_case {
	const char *text;
	size_t doc;             /* index of the failing document */
	const char *want;       /* exact error of that document */
};

static const struct err_case err_cases[] = {
	{ "a: 1\nb: 2\na: 3\n", 0, "line 3, column 1: mapping key \"a\" already defined at line 1" },
	{ "x: 1\n---\nm:\n  k: 1\n  k: 2\n", 1,
	  "line 5, column 3: mapping key \"k\" already defined at line 4" },
	{ "1: a\n0x1: b\n", 0, "line 2, column 1: mapping key \"1\" already defined at line 1" },
	{ "a: *nope\n", 0, "line 1, column 4: unknown anchor 'nope' referenced" },
	{ "? [a]\n: b\n", 0, "line 1, column 3: invalid map key of type sequence" },
	{ "v: !!int abc\n", 0, "line 1, column 4: cannot decode !!str `abc` as a !!int" },
	{ "b: &b 1\nm:\n  <<: *b\n", 0,
	  "line 3, column 3: map merge requires map or sequence of maps as the value" },
	{ "a:\n\tb: 1\n", 0, "line 2, column 1: found character that cannot start any token "
	  "(while scanning for the next token at line 2, column 1)" },
	{ "a: \"x\n", 0, "line 2, column 1: found unexpected end of stream "
	  "(while scanning a quoted scalar at line 1, column 4)" },
	{ "a: 1\nb: \xff\n", 0, "line 2, column 4: invalid leading UTF-8 octet (byte 0xFF)" },
	{ "{\"a\": 1, \"a\": 2}", 0, "line 1, column 10: mapping key \"a\" already defined at line 1" },
	{ "{\"a\": [1,]}", 0,
	  "line 1, column 10: invalid character ']' after ',' (JSON allows no trailing comma)" },
	{ "{\"a\": 1,}", 0,
	  "line 1, column 9: invalid character '}' after ',' (JSON allows no trailing comma)" },
	{ "{\"a\":\n  [1, 2", 0, "line 2, column 8: unexpected end of JSON input" },
	{ "{\"a\": tru}", 0, "line 1, column 10: invalid character '}' in literal "
	  "(expecting true, false or null)" },
	{ "[1, 2] {\"a\": 01}", 1, "line 1, column 15: invalid character '1' after object "
	  "key:value pair (expecting ',' or '}')" },
	{ "{\"a\": 1e999}", 0, "line 1, column 7: number 1e999 is out of range" },
	{ "{\"a\": \"\xc3\x28\"}", 0, "line 1, column 8: invalid UTF-8 in string literal (byte 0xC3)" },
	{ "[\"a\nb\"]", 0, "line 1, column 4: invalid character '\\n' in string literal" },
	{ "{\"a\" 1}", 0, "line 1, column 6: invalid character '1' after object key (expecting ':')" },
	{ "[\"\\x\"]", 0, "line 1, column 3: invalid escape 'x' in string literal" },
	{ "~: 1\n", 0, "line 1, column 1: invalid map key of type null" },
	{ "a: &m {x: 1}\n? *m\n: 2\n", 0, "line 2, column 3: invalid map key of type map (alias 'm')" },
	{ "v: !!float abc\n", 0, "line 1, column 4: cannot decode !!str `abc` as a !!float" },
	{ "v: !!bool 1\n", 0, "line 1, column 4: cannot decode !!int `1` as a !!bool" },
	{ "[-x]", 0, "line 1, column 3: invalid character 'x' in numeric literal" },
	{ "[1.]", 0, "line 1, column 4: invalid character ']' after decimal point in numeric literal" },
	{ "[1e+]", 0, "line 1, column 5: invalid character ']' in exponent of numeric literal" },
	{ "[\"\\u12G4\"]", 0, "line 1, column 3: invalid \\u escape in string literal" },
	{ "[\n \"abc", 0, "line 2, column 2: unexpected end of JSON input (unterminated string)" },
	{ "[1 2]", 0, "line 1, column 4: invalid character '2' after array element "
	  "(expecting ',' or ']')" },
	{ "{1: 2}", 0, "line 1, column 2: invalid character '1' looking for beginning of object "
	  "key string" },
};

static void test_error_messages(void)
{
	for (size_t i = 0; i < sizeof(err_cases) / sizeof(err_cases[0]); i++) {
		const struct err_case *ec = &err_cases[i];
		struct doc_stream *s = parse(ec->text, DOC_FORMAT_AUTO);

		if (!s)
			continue;
		CU_ASSERT(s->n_docs > ec->doc);
		if (s->n_docs <= ec->doc) {
			doc_stream_free(s);
			continue;
		}
		DT_ASSERT_STR(s->docs[ec->doc].error, ec->want);
		CU_ASSERT_PTR_NULL(s->docs[ec->doc].root);
		for (size_t d = 0; d < ec->doc; d++)
			CU_ASSERT_PTR_NULL(s->docs[d].error);
		doc_stream_free(s);
	}
}

static void test_documents_around_errors(void)
{
	/* A repeated key fails only its own document. */
	struct doc_stream *s = parse("a: 1\n---\nb: 1\nb: 2\n---\nc: 3\n", DOC_FORMAT_YAML);

	CU_ASSERT_EQUAL(s->n_docs, 3);
	if (s->n_docs == 3) {
		CU_ASSERT_PTR_NOT_NULL(doc_get(s->docs[0].root, "a"));
		CU_ASSERT_PTR_NOT_NULL(s->docs[1].error);
		CU_ASSERT_PTR_NOT_NULL(doc_get(s->docs[2].root, "c"));
		CU_ASSERT_PTR_NULL(s->docs[2].error);
	}
	doc_stream_free(s);

	/* After a syntax error the documents before it survive. */
	s = parse("a: 1\n---\nb: 2\n---\nc: [1\n---\nd: 4\n", DOC_FORMAT_YAML);
	CU_ASSERT(s->n_docs >= 3);
	if (s->n_docs >= 3) {
		CU_ASSERT_PTR_NOT_NULL(doc_get(s->docs[0].root, "a"));
		CU_ASSERT_PTR_NOT_NULL(doc_get(s->docs[1].root, "b"));
		CU_ASSERT_PTR_NOT_NULL(s->docs[s->n_docs - 1].error);
	}
	doc_stream_free(s);
}

static void test_anchors_per_document(void)
{
	struct strbuf sb = STRBUF_INIT;
	struct doc_stream *s;

	/* Anchors do not reach into the next document, however many there
	 * were (a big table is dropped between documents). */
	for (int many = 0; many < 2; many++) {
		sb_reset(&sb);
		for (int i = 0; i < (many ? 1000 : 1); i++)
			sb_printf(&sb, "k%d: &a%d %d\n", i, i, i);
		sb_puts(&sb, "---\nx: *a0\n---\ny: &a0 7\nz: *a0\n");
		s = parse(sb_str(&sb), DOC_FORMAT_YAML);
		CU_ASSERT_EQUAL(s->n_docs, 3);
		if (s->n_docs == 3) {
			CU_ASSERT_PTR_NULL(s->docs[0].error);
			char want[80];

			snprintf(want, sizeof(want), "line %d, column 4: unknown anchor 'a0' "
				 "referenced", many ? 1002 : 3);
			DT_ASSERT_STR(s->docs[1].error, want);
			CU_ASSERT_EQUAL(ival(doc_get(s->docs[2].root, "z")), 7);
		}
		doc_stream_free(s);
	}
	sb_free(&sb);
}

static void test_limits(void)
{
	struct doc_stream *s = NULL;
	struct dt_err err = { 0 };
	char *deep;
	size_t n = 200;

	/* Nesting: 100 levels are fine, 101 are not (YAML and JSON). */
	deep = malloc(2 * n + 8);
	CU_ASSERT_FATAL(deep != NULL);
	for (size_t depth = DOC_MAX_DEPTH; depth <= DOC_MAX_DEPTH + 1; depth++) {
		for (int json = 0; json < 2; json++) {
			size_t o = 0;

			if (!json) {
				memcpy(deep, "a: ", 3);
				o = 3;
			}
			for (size_t i = 0; i < depth - !json; i++)
				deep[o++] = '[';
			for (size_t i = 0; i < depth - !json; i++)
				deep[o++] = ']';
			deep[o] = '\0';
			s = parse(deep, DOC_FORMAT_AUTO);
			if (depth == DOC_MAX_DEPTH) {
				CU_ASSERT_PTR_NULL(s->docs[0].error);
			} else {
				CU_ASSERT(s->docs[0].error &&
					  strstr(s->docs[0].error, "nesting deeper than 100"));
			}
			doc_stream_free(s);
		}
	}
	free(deep);

	/* Too large a buffer is refused before anything is read. */
	CU_ASSERT_EQUAL(doc_parse("", (size_t)DOC_MAX_FILE_SIZE + 1, DOC_FORMAT_AUTO, "big",
				  &s, &err), -EFBIG);
	CU_ASSERT_PTR_NULL(s);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "too large"));
}

static void test_load_file(void)
{
	struct doc_stream *s = NULL;
	struct dt_err err = { 0 };
	char path[] = "/tmp/test_doc_XXXXXX";
	int fd, saved;

	CU_ASSERT_EQUAL(doc_load_file("/nonexistent/x.yaml", &s, &err), -ENOENT);
	DT_ASSERT_STR(err.msg, "cannot read /nonexistent/x.yaml: No such file or directory");
	CU_ASSERT_PTR_NULL(s);

	CU_ASSERT(doc_load_file("/", &s, &err) < 0);
	DT_ASSERT_STR(err.msg, "cannot read /: Is a directory");

	fd = mkstemp(path);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(ftruncate(fd, (off_t)DOC_MAX_FILE_SIZE + 10), 0);
	CU_ASSERT_EQUAL(doc_load_file(path, &s, &err), -EFBIG);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "file too large"));
	CU_ASSERT_EQUAL(ftruncate(fd, 0), 0);
	CU_ASSERT_EQUAL(write(fd, "kind: Pod\n", 10), 10);

	CU_ASSERT_EQUAL(doc_load_file(path, &s, &err), 0);
	DT_ASSERT_STR(doc_str(doc_get(s->docs[0].root, "kind")), "Pod");
	DT_ASSERT_STR(s->filename, path);
	doc_stream_free(s);

	/* "-" reads standard input. */
	saved = dup(STDIN_FILENO);
	CU_ASSERT_EQUAL(lseek(fd, 0, SEEK_SET), 0);
	CU_ASSERT_EQUAL(dup2(fd, STDIN_FILENO), STDIN_FILENO);
	CU_ASSERT_EQUAL(doc_load_file("-", &s, &err), 0);
	DT_ASSERT_STR(doc_str(doc_get(s->docs[0].root, "kind")), "Pod");
	doc_stream_free(s);
	dup2(saved, STDIN_FILENO);
	close(saved);
	close(fd);
	unlink(path);

	CU_ASSERT_EQUAL(doc_load_file(dt_fixture("doc/malformed/dup-key.yaml"), &s, &err), 0);
	CU_ASSERT_PTR_NOT_NULL(s->docs[0].error);
	doc_stream_free(s);
}

/* ---- JSON specifics ---- */

static void test_json_values(void)
{
	struct doc_stream *s;
	const struct doc_node *r = root1(&s,
		"{\"i\": -12, \"big\": 99999999999999999999999, \"f\": 1.50, \"e\": 1E2,"
		" \"s\": \"a\\u00e9\\ud83d\\ude00\\u0000z\", \"lone\": \"\\udc00\","
		" \"t\": true, \"n\": null, \"a\": [], \"o\": {}, \"min\": -9223372036854775808}");

	CU_ASSERT_FATAL(r != NULL);
	CU_ASSERT_EQUAL(doc_get(r, "i")->kind, DOC_INT);
	CU_ASSERT_EQUAL(doc_get(r, "i")->u.i, -12);
	CU_ASSERT_EQUAL(doc_get(r, "big")->kind, DOC_FLOAT);
	DT_ASSERT_STR(doc_get(r, "big")->text, "99999999999999999999999");
	CU_ASSERT_EQUAL(doc_get(r, "f")->kind, DOC_FLOAT);
	DT_ASSERT_STR(doc_get(r, "f")->text, "1.50");
	CU_ASSERT_EQUAL(doc_get(r, "e")->u.f, 100.0);
	CU_ASSERT_EQUAL(doc_get(r, "s")->text_len, 9);
	CU_ASSERT(memcmp(doc_get(r, "s")->text, "a\xc3\xa9\xf0\x9f\x98\x80\0z", 9) == 0);
	DT_ASSERT_STR(doc_str(doc_get(r, "lone")), "\xef\xbf\xbd");
	CU_ASSERT_TRUE(doc_get(r, "s")->quoted);
	CU_ASSERT_EQUAL(doc_get(r, "t")->kind, DOC_BOOL);
	CU_ASSERT_EQUAL(doc_get(r, "n")->kind, DOC_NULL);
	CU_ASSERT_EQUAL(doc_get(r, "a")->kind, DOC_SEQ);
	CU_ASSERT_EQUAL(doc_get(r, "o")->kind, DOC_MAP);
	CU_ASSERT_EQUAL(doc_get(r, "min")->u.i, INT64_MIN);
	doc_stream_free(s);
}

/* ---- Building, copying, comparing ---- */

static void test_build_clone_equal(void)
{
	struct doc_arena *a = doc_arena_new(), *b = doc_arena_new();
	struct doc_node *m = doc_new_map(a), *seq = doc_new_seq(a), *c;
	struct doc_stream *s;

	CU_ASSERT_FATAL(a && b && m && seq);
	for (int i = 0; i < 100; i++)
		CU_ASSERT_EQUAL(doc_seq_push(a, seq, doc_new_int(a, i)), 0);
	CU_ASSERT_EQUAL(doc_map_set(a, m, "items", seq), 0);
	CU_ASSERT_EQUAL(doc_map_set(a, m, "name", doc_new_string(a, "x")), 0);
	CU_ASSERT_EQUAL(doc_map_set(a, m, "name", doc_new_string(a, "y")), 0);   /* replaces */
	CU_ASSERT_EQUAL(doc_map_set(a, m, "f", doc_new_float(a, 2.0)), 0);
	CU_ASSERT_EQUAL(doc_map_set(a, m, "none", NULL), -ENOMEM);
	CU_ASSERT_EQUAL(doc_seq_push(a, m, doc_new_null(a)), -ENOMEM);        /* not a seq */
	CU_ASSERT_EQUAL(m->u.map.n, 3);
	DT_ASSERT_STR(doc_str(doc_get(m, "name")), "y");
	CU_ASSERT_EQUAL(seq->u.seq.items[99]->u.i, 99);

	c = doc_clone(b, m);
	doc_arena_free(a);          /* the copy owns nothing of the original */
	CU_ASSERT_FATAL(c != NULL);
	CU_ASSERT_EQUAL(doc_get(c, "items")->u.seq.n, 100);
	/* Clones are growable like built nodes. */
	CU_ASSERT_EQUAL(doc_seq_push(b, (struct doc_node *)doc_get(c, "items"), doc_new_bool(b, 1)), 0);
	CU_ASSERT_EQUAL(doc_get(c, "items")->u.seq.n, 101);

	/* Numbers by value, maps in any order, strings bytewise. */
	{
		const struct doc_node *x = root1(&s, "{\"f\": 2, \"name\": \"v\", \"nums\": [1, 2.0]}");
		struct doc_stream *s2;
		const struct doc_node *y = root1(&s2, "nums: [1.0, 2]\nname: v\nf: 2.0\n");
		struct doc_stream *s3;
		const struct doc_node *z = root1(&s3, "nums: [2, 1]\nname: v\nf: 2\n");

		CU_ASSERT_TRUE(doc_equal(x, y));
		CU_ASSERT_FALSE(doc_equal(x, z));          /* sequences keep order */
		CU_ASSERT_FALSE(doc_equal(doc_get(x, "name"), doc_get(x, "f")));
		CU_ASSERT_FALSE(doc_equal(x, NULL));
		CU_ASSERT_TRUE(doc_equal(NULL, NULL));
		doc_stream_free(s2);
		doc_stream_free(s3);
	}
	doc_stream_free(s);
	{
		struct doc_node *i1 = doc_new_int(b, INT64_MAX), *f1 = doc_new_float(b, 9223372036854775807.0);
		struct doc_node *s1 = doc_new_string(b, "1"), *n1 = doc_new_int(b, 1);

		CU_ASSERT_FALSE(doc_equal(i1, f1));         /* 2^63 is not INT64_MAX */
		CU_ASSERT_FALSE(doc_equal(s1, n1));
		CU_ASSERT_TRUE(doc_equal(doc_new_float(b, nan("")), doc_new_float(b, nan(""))));
	}
	doc_arena_free(b);
	doc_arena_free(NULL);
	doc_stream_free(NULL);
}

static void test_big_map_equal_and_dups(void)
{
	struct doc_arena *a = doc_arena_new();
	struct doc_node *m1 = doc_new_map(a), *m2 = doc_new_map(a);
	struct strbuf sb = STRBUF_INIT;
	struct doc_stream *s;
	char key[32];

	for (int i = 0; i < 500; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		doc_map_set(a, m1, key, doc_new_int(a, i));
		snprintf(key, sizeof(key), "k%d", 499 - i);
		doc_map_set(a, m2, key, doc_new_int(a, 499 - i));
	}
	CU_ASSERT_TRUE(doc_equal(m1, m2));
	doc_map_set(a, m2, "k7", doc_new_int(a, -1));
	CU_ASSERT_FALSE(doc_equal(m1, m2));

	/* A big map with one repeated key, late in the file. */
	for (int i = 0; i < 500; i++)
		sb_printf(&sb, "k%d: %d\n", i, i);
	sb_puts(&sb, "k250: again\n");
	s = parse(sb_str(&sb), DOC_FORMAT_YAML);
	DT_ASSERT_STR(s->docs[0].error, "line 501, column 1: mapping key \"k250\" already "
		      "defined at line 251");
	doc_stream_free(s);
	sb_free(&sb);
	doc_arena_free(a);
}

/* ---- Printing ---- */

static char *emit_yaml(const struct doc_node *n)
{
	struct strbuf sb = STRBUF_INIT;

	CU_ASSERT_EQUAL(doc_emit_yaml(n, &sb), 0);
	return sb_detach(&sb);
}

static char *emit_json(const struct doc_node *n, int indent)
{
	struct strbuf sb = STRBUF_INIT;

	CU_ASSERT_EQUAL(doc_emit_json(n, indent, &sb), 0);
	return sb_detach(&sb);
}

static void test_emit_yaml_kubectl_style(void)
{
	struct doc_stream *s;
	const struct doc_node *r = root1(&s,
		"{\"kind\": \"Pod\", \"apiVersion\": \"v1\","
		" \"metadata\": {\"name\": \"p\", \"labels\": {\"a10\": \"x\", \"a9\": \"y\"},"
		"  \"annotations\": {\"rev\": \"1\", \"t\": \"true\", \"e\": \"\", \"n\": \"null\","
		"   \"sp\": \" lead\", \"c\": \"a: b\", \"h\": \"x #y\", \"st\": \"*x\","
		"   \"ts\": \"2021-01-01T00:00:00Z\", \"ml\": \"l1\\nl2\\n\", \"ms\": \"a\\nb\","
		"   \"ctl\": \"bell\\u0007\", \"q\": \"it's\", \"u\": \"日本\"}},"
		" \"spec\": {\"containers\": [{\"name\": \"c\", \"args\": [\"-x\", \"1\"],"
		"   \"resources\": {\"limits\": {\"cpu\": 2, \"mem\": 1.5}}}],"
		"  \"empty\": {}, \"none\": [], \"nested\": [[1, 2], [], [{\"a\": null}]]}}");
	char *y = emit_yaml(r);

	DT_ASSERT_STR(y,
		"apiVersion: v1\n"
		"kind: Pod\n"
		"metadata:\n"
		"  annotations:\n"
		"    c: 'a: b'\n"
		"    ctl: \"bell\\a\"\n"
		"    e: \"\"\n"
		"    h: 'x #y'\n"
		"    ml: |\n"
		"      l1\n"
		"      l2\n"
		"    ms: |-\n"
		"      a\n"
		"      b\n"
		"    \"n\": \"null\"\n"     /* a plain n would be false */
		"    q: it's\n"
		"    rev: \"1\"\n"
		"    sp: ' lead'\n"
		"    st: '*x'\n"
		"    t: \"true\"\n"
		"    ts: \"2021-01-01T00:00:00Z\"\n"
		"    u: 日本\n"
		"  labels:\n"
		"    a9: \"y\"\n"
		"    a10: x\n"
		"  name: p\n"
		"spec:\n"
		"  containers:\n"
		"  - args:\n"
		"    - -x\n"
		"    - \"1\"\n"
		"    name: c\n"
		"    resources:\n"
		"      limits:\n"
		"        cpu: 2\n"
		"        mem: 1.5\n"
		"  empty: {}\n"
		"  nested:\n"
		"  - - 1\n"
		"    - 2\n"
		"  - []\n"
		"  - - a: null\n"
		"  none: []\n");
	free(y);
	doc_stream_free(s);
}

static void test_emit_json_kubectl_style(void)
{
	struct doc_stream *s;
	const struct doc_node *r = root1(&s,
		"b: 1\na: [x, {}, []]\nc: \"<&>\\t\\\"\"\nd: 1e6\ne: 1e-7\nf: 1e21\ng: 123456.0\n"
		"h: 99999999999999999999999\n");
	char *j = emit_json(r, 4);

	DT_ASSERT_STR(j,
		"{\n"
		"    \"b\": 1,\n"
		"    \"a\": [\n"
		"        \"x\",\n"
		"        {},\n"
		"        []\n"
		"    ],\n"
		"    \"c\": \"\\u003c\\u0026\\u003e\\t\\\"\",\n"
		"    \"d\": 1000000,\n"
		"    \"e\": 1e-7,\n"
		"    \"f\": 1e+21,\n"
		"    \"g\": 123456,\n"
		"    \"h\": 99999999999999999999999\n"
		"}\n");
	free(j);
	j = emit_json(r, 0);
	DT_ASSERT_STR(j, "{\"b\":1,\"a\":[\"x\",{},[]],\"c\":\"\\u003c\\u0026\\u003e\\t\\\"\","
		      "\"d\":1000000,\"e\":1e-7,\"f\":1e+21,\"g\":123456,"
		      "\"h\":99999999999999999999999}");
	free(j);
	j = emit_yaml(r);
	DT_ASSERT_STR(j, "a:\n- x\n- {}\n- []\nb: 1\nc: \"<&>\\t\\\"\"\nd: 1e+06\ne: 1e-07\n"
		      "f: 1e+21\ng: 123456\nh: 99999999999999999999999\n");
	free(j);
	doc_stream_free(s);

	/* NaN has no JSON form; the buffer is left as it was. */
	{
		struct doc_arena *a = doc_arena_new();
		struct doc_node *m = doc_new_map(a);
		struct strbuf sb = STRBUF_INIT;

		doc_map_set(a, m, "x", doc_new_float(a, nan("")));
		sb_puts(&sb, "keep");
		CU_ASSERT_EQUAL(doc_emit_json(m, 4, &sb), -ERANGE);
		DT_ASSERT_STR(sb_str(&sb), "keep");
		sb_reset(&sb);
		CU_ASSERT_EQUAL(doc_emit_yaml(m, &sb), 0);
		DT_ASSERT_STR(sb_str(&sb), "x: .nan\n");
		sb_free(&sb);
		doc_arena_free(a);
	}
}

/* ---- Round trips ---- */

static uint64_t rng_state = 88172645463325252ull;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* Pieces that are hard for a YAML or JSON writer. */
static const char *const pieces[] = {
	"", " ", "a", "Z", "1", "0x1F", "1e3", ".5", "-", "true", "yes", "No", "null", "~",
	":", ": ", "- ", "-", "#", " #", "'", "\"", "\\", "\n", "\n\n", "\t", "\r", "é", "日本",
	"\x01", "\x7f", "<<", "---", "...", "1:20", "2021-01-01", "&a", "*a", "!x", "%", "@",
	"`", "{", "}", "[", "]", ",", "?", "|", ">", "\xc2\x85", "\xe2\x80\xa8", "\xef\xbb\xbf",
	"\xf0\x9f\x98\x80", "key", "value with spaces", "80Gi", "0", "00", "+1", ".inf", "=",
	"<", "&", "\xc2\xa0", "  ", "\n ", " \n",
};

static struct doc_node *gen_string(struct doc_arena *a)
{
	char buf[256];
	size_t o = 0, n = rnd() % 5;

	for (size_t i = 0; i < n; i++) {
		const char *p = pieces[rnd() % (sizeof(pieces) / sizeof(pieces[0]))];
		size_t l = strlen(p);

		if (o + l >= sizeof(buf))
			break;
		memcpy(buf + o, p, l);
		o += l;
	}
	buf[o] = '\0';
	return doc_new_string(a, buf);
}

static struct doc_node *gen_tree(struct doc_arena *a, int depth, bool finite)
{
	unsigned pick = (unsigned)(rnd() % (depth < 5 ? 10 : 7));
	struct doc_node *n;

	switch (pick) {
	case 0:
		return doc_new_null(a);
	case 1:
		return doc_new_bool(a, rnd() & 1);
	case 2: {
		static const int64_t ints[] = { 0, 1, -1, 42, INT64_MAX, INT64_MIN, 1000000 };

		return doc_new_int(a, rnd() & 1 ? ints[rnd() % 7] : (int64_t)rnd());
	}
	case 3: {
		static const double fl[] = { 0.1, 1.5, -2.25, 1e6, 1e21, 1e-7, 123456.0, 5e-324,
					     1.7976931348623157e308, 0.30000000000000004, -0.0,
					     2003764205206896640.0, -1e20, 9007199254740992.0 };
		double f;
		uint64_t bits = rnd();

		if (rnd() & 1) {
			f = fl[rnd() % (sizeof(fl) / sizeof(fl[0]))];
		} else {
			memcpy(&f, &bits, sizeof(f));
			if (finite && !isfinite(f))
				f = 3.25;
		}
		if (!finite && rnd() % 8 == 0)
			f = rnd() & 1 ? HUGE_VAL : nan("");
		return doc_new_float(a, f);
	}
	case 4:
	case 5:
	case 6:
		return gen_string(a);
	case 7:
	case 8:
		n = doc_new_seq(a);
		for (size_t i = 0, k = rnd() % 4; i < k; i++)
			doc_seq_push(a, n, gen_tree(a, depth + 1, finite));
		return n;
	default:
		n = doc_new_map(a);
		for (size_t i = 0, k = rnd() % 5; i < k; i++) {
			struct doc_node *key = gen_string(a);

			doc_map_set(a, n, key->text, gen_tree(a, depth + 1, finite));
		}
		return n;
	}
}

/* Says where two trees first differ, for a failing round trip. */
static void explain_diff(const struct doc_node *x, const struct doc_node *y, const char *path)
{
	char sub[512];

	if (x && y && x->kind == DOC_MAP && y->kind == DOC_MAP) {
		for (size_t i = 0; i < x->u.map.n; i++) {
			const struct doc_node *k = x->u.map.pairs[i].key;
			const struct doc_node *v = doc_get(y, k->text);

			if (doc_equal(x->u.map.pairs[i].value, v))
				continue;
			snprintf(sub, sizeof(sub), "%s.%.40s", path, k->text);
			explain_diff(x->u.map.pairs[i].value, v, sub);
			return;
		}
	} else if (x && y && x->kind == DOC_SEQ && y->kind == DOC_SEQ && x->u.seq.n == y->u.seq.n) {
		for (size_t i = 0; i < x->u.seq.n; i++) {
			if (doc_equal(x->u.seq.items[i], y->u.seq.items[i]))
				continue;
			snprintf(sub, sizeof(sub), "%s[%zu]", path, i);
			explain_diff(x->u.seq.items[i], y->u.seq.items[i], sub);
			return;
		}
	}
	fprintf(stderr, "\n  differs at %s: %s \"%.60s\" vs %s \"%.60s\"\n", path,
		x ? doc_kind_name(x->kind) : "missing", x && x->text ? x->text : "",
		y ? doc_kind_name(y->kind) : "missing", y && y->text ? y->text : "");
}

/* Prints n in the given form and reads it back; true when equal. */
static bool round_trip(const struct doc_node *n, int form)
{
	struct strbuf sb = STRBUF_INIT;
	struct doc_stream *s = NULL;
	struct dt_err err = { 0 };
	bool ok = false;
	int rc;

	rc = form == 0 ? doc_emit_yaml(n, &sb) : doc_emit_json(n, form == 1 ? 4 : 0, &sb);
	if (rc < 0)
		goto out;
	if (doc_parse(sb_str(&sb), sb.len, form == 0 ? DOC_FORMAT_YAML : DOC_FORMAT_JSON,
		      "rt", &s, &err) < 0)
		goto out;
	ok = s->n_docs == 1 && !s->docs[0].error && doc_equal(n, s->docs[0].root ? s->docs[0].root
								     : NULL);
	if (form != 0 && ok) {
		/* json-c agrees that it is JSON (its default depth is 32). */
		struct json_tokener *tok = json_tokener_new_ex(DOC_MAX_DEPTH + 1);
		struct json_object *jo = tok ? json_tokener_parse_ex(tok, sb_str(&sb),
								     (int)sb.len + 1) : NULL;

		ok = tok && json_tokener_get_error(tok) == json_tokener_success;
		if (!ok)
			fprintf(stderr, "\n  json-c: %s\n", tok ? json_tokener_error_desc(
					json_tokener_get_error(tok)) : "no tokener");
		json_object_put(jo);
		if (tok)
			json_tokener_free(tok);
	}
out:
	if (!ok) {
		if (s && s->n_docs == 1 && s->docs[0].root)
			explain_diff(n, s->docs[0].root, "$");
		fprintf(stderr, "\n  round trip (form %d) failed: %s\n---\n%.2000s---\n", form,
			s && s->n_docs && s->docs[0].error ? s->docs[0].error : "not equal",
			sb_str(&sb));
	}
	doc_stream_free(s);
	sb_free(&sb);
	return ok;
}

static void test_round_trips(void)
{
	int failures = 0;

	for (int i = 0; i < 3000 && failures < 5; i++) {
		struct doc_arena *a = doc_arena_new();
		bool finite = i % 2 == 0;
		struct doc_node *t = gen_tree(a, 0, finite);

		if (!round_trip(t, 0))
			failures++;
		if (finite && (!round_trip(t, 1) || !round_trip(t, 2)))
			failures++;
		doc_arena_free(a);
	}
	CU_ASSERT_EQUAL(failures, 0);
}

/* Long text with runs of spaces, to exercise line folding. */
static struct doc_node *gen_long_string(struct doc_arena *a)
{
	static const char *const words[] = {
		"word", "a", "longerword", "x:y", "-", "#", "'", "\"", "\t", "é", "1", "true", "\n",
		"*", "k8s.io/name", "\\", "ü日本",
	};
	char buf[1024];
	size_t o = 0, n = 20 + rnd() % 80;

	for (size_t i = 0; i < n; i++) {
		const char *w = words[rnd() % (sizeof(words) / sizeof(words[0]))];
		size_t l = strlen(w), sp = rnd() % 8 == 0 ? 2 + rnd() % 2 : 1;

		if (o + l + sp + 1 >= sizeof(buf))
			break;
		memcpy(buf + o, w, l);
		o += l;
		if (i + 1 < n || rnd() % 4 == 0) {
			memset(buf + o, ' ', sp);
			o += sp;
		}
	}
	buf[o] = '\0';
	/* Start with a letter half of the time, so more stay plain. */
	if (rnd() & 1) {
		memmove(buf + 1, buf, o + 1);
		buf[0] = 'w';
	}
	return doc_new_string(a, buf);
}

static void test_folding(void)
{
	struct doc_arena *a = doc_arena_new();
	struct doc_node *m = doc_new_map(a), *seq = doc_new_seq(a);
	const char *desc = "APIVersion defines the versioned schema of this representation of an "
			   "object. Servers should convert recognized schemas to the latest internal "
			   "value.";
	char *y;
	int failures = 0;

	doc_map_set(a, m, "description", doc_new_string(a, desc));
	doc_seq_push(a, seq, doc_new_string(a, desc));
	doc_map_set(a, m, "items", seq);
	y = emit_yaml(m);
	/* As kubectl prints a CRD's descriptions: past column 80 the next
	 * space breaks the line, continuation two columns in. */
	DT_ASSERT_STR(y,
		"description: APIVersion defines the versioned schema of this representation of an\n"
		"  object. Servers should convert recognized schemas to the latest internal value.\n"
		"items:\n"
		"- APIVersion defines the versioned schema of this representation of an object. Servers\n"
		"  should convert recognized schemas to the latest internal value.\n");
	free(y);
	for (int i = 0; i < 400 && failures < 3; i++) {
		struct doc_node *t = doc_new_map(a), *l = doc_new_seq(a), *inner = doc_new_map(a);

		doc_map_set(a, t, "k", gen_long_string(a));
		doc_seq_push(a, l, gen_long_string(a));
		doc_map_set(a, inner, "deeper", gen_long_string(a));
		doc_seq_push(a, l, inner);
		doc_map_set(a, t, "list", l);
		if (!round_trip(t, 0))
			failures++;
	}
	CU_ASSERT_EQUAL(failures, 0);
	doc_arena_free(a);
}

static void test_round_trip_specials(void)
{
	static const char *const strs[] = {
		"123", "true", "", "null", "~", " lead", "trail ", ": x", "x:", "#c", "a #b",
		"-", "- x", "?", "multi\nline", "trailing\n", "two\n\n", "\n", "\nlead",
		" \nx", "x \ny", "tab\there", "\x01\x02", "日本語", "\xf0\x9f\x98\x80",
		"'quoted'", "\"dq\"", "<<", "---", "--- x", "...", "1:20", "0o17", "1_000",
		"2021-01-01", "2001-12-14t21:59:43.10-05:00", "@at", "`tick", "%pc", "!bang",
		"&amp", "*star", "|pipe", ">gt", "{b}", "[s]", "a,b", "\xc2\x85", "\xe2\x80\xa8",
		"\xef\xbb\xbf", "back\\slash", "\r\n", "a\r\nb", "   ", "\n\n\n", "x\n ",
	};
	struct doc_arena *a = doc_arena_new();
	struct doc_node *m = doc_new_map(a), *seq = doc_new_seq(a), *deep = doc_new_seq(a);
	struct doc_node *cur = deep;
	char longkey[2000];

	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++) {
		doc_map_set(a, m, strs[i], doc_new_string(a, strs[i]));
		doc_seq_push(a, seq, doc_new_string(a, strs[i]));
	}
	memset(longkey, 'k', sizeof(longkey) - 1);
	longkey[sizeof(longkey) - 1] = '\0';
	doc_map_set(a, m, longkey, doc_new_string(a, "multi\nline"));
	doc_map_set(a, m, "seq", seq);
	for (int i = 0; i < DOC_MAX_DEPTH - 2; i++) {
		struct doc_node *next = doc_new_seq(a);

		doc_seq_push(a, cur, next);
		cur = next;
	}
	doc_seq_push(a, cur, doc_new_string(a, "bottom\nline"));
	doc_map_set(a, m, "deep", deep);
	CU_ASSERT_TRUE(round_trip(m, 0));
	CU_ASSERT_TRUE(round_trip(m, 1));
	CU_ASSERT_TRUE(round_trip(m, 2));
	CU_ASSERT_TRUE(round_trip(seq, 0));
	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
		CU_ASSERT_TRUE(round_trip(doc_new_string(a, strs[i]), 0));
	CU_ASSERT_TRUE(round_trip(doc_new_map(a), 0));
	CU_ASSERT_TRUE(round_trip(doc_new_seq(a), 0));
	CU_ASSERT_TRUE(round_trip(doc_new_int(a, INT64_MIN), 0));
	/* Integral floats past 2^53 print exactly, or JSON would read back a
	 * different integer (found by fuzz_doc). */
	for (int form = 0; form < 3; form++) {
		CU_ASSERT_TRUE(round_trip(doc_new_float(a, 2003764205206896640.0), form));
		CU_ASSERT_TRUE(round_trip(doc_new_float(a, -1152921504606846976.0), form));
		CU_ASSERT_TRUE(round_trip(doc_new_float(a, 9.3e18), form));
		CU_ASSERT_TRUE(round_trip(doc_new_float(a, 1e20), form));
	}
	doc_arena_free(a);
}

/* ---- The malformed corpus ---- */

struct corpus_case {
	const char *file;
	const char *want;       /* substring of the first error; NULL: no error */
};

static const struct corpus_case corpus[] = {
	{ "alias-deep.yaml", "nests deeper than 100 levels" },
	{ "anchor-key.yaml", NULL },
	{ "bad-directive.yaml", "found duplicate %YAML directive" },
	{ "bad-escape.json", "invalid escape 'q'" },
	{ "bad-escape.yaml", "did not find expected hexdecimal number" },
	{ "bad-indent.yaml", "line 3, column 2: did not find expected key" },
	{ "bad-merge.yaml", "map merge requires map or sequence of maps" },
	{ "bad-tag.yaml", "cannot decode !!str `abc` as a !!int" },
	{ "billion-laughs.yaml", "more than 4194304 nodes" },
	{ "binary-garbage.bin", "line 1, column 1: invalid leading UTF-8 octet" },
	{ "bom-crlf.yaml", NULL },
	{ "bom-then-bad-utf8.yaml", "line 1, column 4: invalid leading UTF-8 octet (byte 0xFF)" },
	{ "collection-key.yaml", "invalid map key of type sequence" },
	{ "comments-only.yaml", NULL },
	{ "deep-10000.json", "nesting deeper than 100 levels" },
	{ "deep-block-10000.yaml", "line 101, column 101: nesting deeper than 100 levels" },
	{ "deep-flow-10000.yaml", "nesting deeper than 100 levels" },
	{ "dup-key.json", "line 3, column 2: mapping key \"a\" already defined at line 1" },
	{ "dup-key.yaml", "line 3, column 1: mapping key \"a\" already defined at line 1" },
	{ "empty-docs.yaml", NULL },
	{ "empty.yaml", NULL },
	{ "fuzz-empty-flow-map.yaml", NULL },
	{ "huge-float.json", "number 1e999 is out of range" },
	{ "huge-int.json", NULL },
	{ "huge-numbers.yaml", NULL },
	{ "multi.json", NULL },
	{ "non-utf8.json", "invalid UTF-8 in string literal" },
	{ "non-utf8.yaml", "line 2, column 4: invalid leading UTF-8 octet" },
	{ "nul-byte.json", "invalid character byte 0x00" },
	{ "nul-byte.yaml", "line 2, column 5: control characters are not allowed" },
	{ "tab-indent.yaml", "found character that cannot start any token" },
	{ "trailing-comma-array.json", "no trailing comma" },
	{ "trailing-comma-object.json", "no trailing comma" },
	{ "trailing-garbage.json", "invalid character 'x' looking for beginning of value" },
	{ "truncated-value.json", "unexpected end of JSON input" },
	{ "truncated.json", "unexpected end of JSON input" },
	{ "truncated.yaml", "did not find expected ',' or ']'" },
	{ "unknown-alias.yaml", "unknown anchor 'nope' referenced" },
	{ "unquoted-key.json", "looking for beginning of object key string" },
	{ "unterminated-flow.yaml", "did not find expected ',' or ']'" },
	{ "unterminated-quote.yaml", "found unexpected end of stream" },
};

static const struct corpus_case *corpus_find(const char *file)
{
	for (size_t i = 0; i < sizeof(corpus) / sizeof(corpus[0]); i++)
		if (strcmp(corpus[i].file, file) == 0)
			return &corpus[i];
	return NULL;
}

static void test_malformed_corpus(void)
{
	char dir[4096];
	DIR *d;
	struct dirent *e;
	size_t seen = 0;

	snprintf(dir, sizeof(dir), "%s", dt_fixture("doc/malformed"));
	d = opendir(dir);
	CU_ASSERT_FATAL(d != NULL);
	while ((e = readdir(d)) != NULL) {
		const struct corpus_case *cc;
		struct doc_stream *s = NULL;
		struct dt_err err = { 0 };
		char path[8192];
		const char *first = NULL;

		if (e->d_name[0] == '.')
			continue;
		cc = corpus_find(e->d_name);
		if (!cc)
			fprintf(stderr, "\n  corpus file %s has no expectation\n", e->d_name);
		CU_ASSERT_PTR_NOT_NULL(cc);
		if (!cc)
			continue;
		seen++;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		CU_ASSERT_EQUAL(doc_load_file(path, &s, &err), 0);
		if (!s)
			continue;
		CU_ASSERT(s->n_docs >= 1);
		for (size_t i = 0; i < s->n_docs && !first; i++)
			first = s->docs[i].error;
		if (cc->want) {
			if (!first || !strstr(first, cc->want))
				fprintf(stderr, "\n  %s: got \"%s\", want \"%s\"\n", e->d_name,
					first ? first : "(no error)", cc->want);
			CU_ASSERT(first && strstr(first, cc->want));
		} else {
			if (first)
				fprintf(stderr, "\n  %s: unexpected error %s\n", e->d_name, first);
			CU_ASSERT_PTR_NULL(first);
		}
		/* Whatever did parse can be printed and read back. */
		for (size_t i = 0; i < s->n_docs; i++)
			if (s->docs[i].root)
				CU_ASSERT_TRUE(round_trip(s->docs[i].root, 0));
		doc_stream_free(s);
	}
	closedir(d);
	CU_ASSERT_EQUAL(seen, sizeof(corpus) / sizeof(corpus[0]));
}

/* Every prefix of a valid file is handled (no crash, leak or hang). */
static void test_truncations(void)
{
	static const char *const texts[] = {
		"a: &x {b: [1, 'two', \"thr\\u00e9e\"], c: |\n    lit\n}\nd: *x\n---\n<<: {e: 1}\n",
		"{\"a\": [1, -2.5e3, \"x\\ud83d\\ude00\", {\"b\": null}], \"c\": true}\n[1]",
	};

	for (size_t t = 0; t < 2; t++) {
		size_t len = strlen(texts[t]);

		for (size_t n = 0; n <= len; n++) {
			struct doc_stream *s = NULL;
			struct dt_err err = { 0 };

			CU_ASSERT_EQUAL(doc_parse(texts[t], n, DOC_FORMAT_AUTO, "p", &s, &err), 0);
			CU_ASSERT(s && s->n_docs >= 1);
			doc_stream_free(s);
		}
	}
}

static void test_kind_names(void)
{
	DT_ASSERT_STR(doc_kind_name(DOC_STRING), "string");
	DT_ASSERT_STR(doc_kind_name(DOC_INT), "integer");
	DT_ASSERT_STR(doc_kind_name(DOC_MAP), "map");
	DT_ASSERT_STR(doc_kind_name(DOC_SEQ), "sequence");
	DT_ASSERT_STR(doc_kind_name(DOC_BOOL), "boolean");
}

/* doc_parse_each: what it hands over, one document at a time. */
struct seen {
	int n;
	char text[512];                 /* "root-as-JSON|" or "error: ...|" per document */
	int stop_at;                    /* return -ENOMEM on this document (1-based), 0 never */
};

static int record(void *arg, const struct doc_stream *s, size_t i)
{
	struct seen *k = arg;
	const struct doc_document *d = &s->docs[i];
	struct strbuf sb = STRBUF_INIT;
	size_t len = strlen(k->text);

	k->n++;
	if (d->error)
		sb_printf(&sb, "error: %s", d->error);
	else if (d->root)
		doc_emit_json(d->root, DOC_JSON_COMPACT, &sb);
	else
		sb_puts(&sb, "empty");
	snprintf(k->text + len, sizeof(k->text) - len, "%zu:%s|", i + 1, sb_str(&sb));
	sb_free(&sb);
	return k->n == k->stop_at ? -ENOMEM : 0;
}

static void test_parse_each(void)
{
	static const char yaml[] = "a: 1\n---\nb: &x [1]\nc: *x\n---\nd: 2\n";
	static const char json[] = "{\"a\": 1} {\"b\": tru} {\"c\": 3}";
	struct seen k = { 0 };

	/* the second document is outside the fast reader's subset: libyaml
	 * reads the stream again, the first document is not handed over twice */
	CU_ASSERT_EQUAL(doc_parse_each(yaml, sizeof(yaml) - 1, DOC_FORMAT_AUTO, "y", record, &k,
				       NULL), 0);
	CU_ASSERT_EQUAL(k.n, 3);
	DT_ASSERT_STR(k.text, "1:{\"a\":1}|2:{\"b\":[1],\"c\":[1]}|3:{\"d\":2}|");
	/* JSON: an error ends the stream, as doc_parse's */
	memset(&k, 0, sizeof(k));
	CU_ASSERT_EQUAL(doc_parse_each(json, sizeof(json) - 1, DOC_FORMAT_AUTO, "j", record, &k,
				       NULL), 0);
	CU_ASSERT_EQUAL(k.n, 2);
	DT_ASSERT_STR(k.text, "1:{\"a\":1}|2:error: line 1, column 19: invalid character '}' in "
			      "literal (expecting true, false or null)|");
	/* nothing but a comment: one empty document */
	memset(&k, 0, sizeof(k));
	CU_ASSERT_EQUAL(doc_parse_each("# c\n", 4, DOC_FORMAT_AUTO, "e", record, &k, NULL), 0);
	DT_ASSERT_STR(k.text, "1:empty|");
	/* a nonzero return stops the handing over and is returned */
	memset(&k, 0, sizeof(k));
	k.stop_at = 1;
	CU_ASSERT_EQUAL(doc_parse_each(yaml, sizeof(yaml) - 1, DOC_FORMAT_AUTO, "y", record, &k,
				       NULL), -ENOMEM);
	CU_ASSERT_EQUAL(k.n, 1);
}

/* The JSON writer: its layouts, empty containers, a NaN taking back all. */
static void test_json_writer(void)
{
	struct strbuf sb = STRBUF_INIT;
	struct doc_jw w;
	const int styles[] = { DOC_JSON_PRETTY, DOC_JSON_LINE, DOC_JSON_COMPACT };
	const char *const want[] = {
		"{\n    \"a\": [\n        1,\n        \"x\\u003c\\u003e\",\n        {}\n    ],\n"
		"    \"b\": [],\n    \"c\": 0.5,\n    \"d\": true,\n    \"e\": null\n}\n",
		"{\"a\":[1,\"x\\u003c\\u003e\",{}],\"b\":[],\"c\":0.5,\"d\":true,\"e\":null}\n",
		"{\"a\":[1,\"x\\u003c\\u003e\",{}],\"b\":[],\"c\":0.5,\"d\":true,\"e\":null}",
	};

	for (size_t i = 0; i < 3; i++) {
		sb_reset(&sb);
		doc_jw_begin(&w, &sb, styles[i]);
		doc_jw_map(&w);
		doc_jw_key(&w, "a");
		doc_jw_seq(&w);
		doc_jw_int(&w, 1);
		doc_jw_strn(&w, "x<>", 3);
		doc_jw_map(&w);
		doc_jw_end_map(&w);
		doc_jw_end_seq(&w);
		doc_jw_key(&w, "b");
		doc_jw_seq(&w);
		doc_jw_end_seq(&w);
		doc_jw_key(&w, "c");
		doc_jw_float(&w, 0.5);
		doc_jw_key(&w, "d");
		doc_jw_bool(&w, true);
		doc_jw_key(&w, "e");
		doc_jw_str(&w, NULL);
		doc_jw_end_map(&w);
		CU_ASSERT_EQUAL(doc_jw_end(&w), 0);
		DT_ASSERT_STR(sb_str(&sb), want[i]);
	}
	/* deep indentation past the constant's 32 levels, INT64_MIN */
	sb_reset(&sb);
	doc_jw_begin(&w, &sb, DOC_JSON_PRETTY);
	for (int i = 0; i < 40; i++)
		doc_jw_seq(&w);
	doc_jw_int(&w, INT64_MIN);
	for (int i = 0; i < 40; i++)
		doc_jw_end_seq(&w);
	CU_ASSERT_EQUAL(doc_jw_end(&w), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(sb_str(&sb), "\n" "                                        "
				     "                                        "
				     "                                        "
				     "                                        -9223372036854775808\n"));
	/* NaN: an error, and nothing is left written */
	sb_reset(&sb);
	sb_puts(&sb, "before");
	doc_jw_begin(&w, &sb, DOC_JSON_PRETTY);
	doc_jw_seq(&w);
	doc_jw_float(&w, NAN);
	doc_jw_end_seq(&w);
	CU_ASSERT_EQUAL(doc_jw_end(&w), -ERANGE);
	DT_ASSERT_STR(sb_str(&sb), "before");
	sb_free(&sb);
}

DT_SUITE_MAIN("doc",
	      DT_TEST(test_json_writer),
	      DT_TEST(test_parse_each),
	      DT_TEST(test_scalar_resolution),
	      DT_TEST(test_source_text_and_quoting),
	      DT_TEST(test_keys_stringified),
	      DT_TEST(test_multi_document),
	      DT_TEST(test_kind_list_plain),
	      DT_TEST(test_positions),
	      DT_TEST(test_anchors_and_merges),
	      DT_TEST(test_error_messages),
	      DT_TEST(test_documents_around_errors),
	      DT_TEST(test_anchors_per_document),
	      DT_TEST(test_limits),
	      DT_TEST(test_load_file),
	      DT_TEST(test_json_values),
	      DT_TEST(test_build_clone_equal),
	      DT_TEST(test_big_map_equal_and_dups),
	      DT_TEST(test_emit_yaml_kubectl_style),
	      DT_TEST(test_emit_json_kubectl_style),
	      DT_TEST(test_round_trips),
	      DT_TEST(test_round_trip_specials),
	      DT_TEST(test_folding),
	      DT_TEST(test_malformed_corpus),
	      DT_TEST(test_truncations),
	      DT_TEST(test_kind_names))
