/* test_doc_fast.c - the fast YAML reader (doc_yaml_fast.c) gives what
 * libyaml gives: over every YAML file of the source tree, and over edge
 * cases of the subset and just outside it, both readers' streams are
 * compared document by document: start lines, errors, and the trees node
 * by node with kinds, text, quoting, lines and columns. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "doc.h"
#include "doc_impl.h"
#include "dt_test.h"

static int n_files, n_fast;

static bool same_node(const struct doc_node *a, const struct doc_node *b, char *why, size_t n)
{
	if (!a || !b) {
		if (a != b)
			snprintf(why, n, "one root is NULL");
		return a == b;
	}
	if (a->kind != b->kind || a->line != b->line || a->col != b->col) {
		snprintf(why, n, "node at %d:%d kind %d vs %d:%d kind %d", a->line, a->col,
			 a->kind, b->line, b->col, b->kind);
		return false;
	}
	if (a->kind == DOC_SEQ) {
		if (a->u.seq.n != b->u.seq.n)
			return snprintf(why, n, "seq at %d:%d sizes", a->line, a->col), false;
		for (size_t i = 0; i < a->u.seq.n; i++)
			if (!same_node(a->u.seq.items[i], b->u.seq.items[i], why, n))
				return false;
		return true;
	}
	if (a->kind == DOC_MAP) {
		if (a->u.map.n != b->u.map.n)
			return snprintf(why, n, "map at %d:%d sizes", a->line, a->col), false;
		for (size_t i = 0; i < a->u.map.n; i++)
			if (!same_node(a->u.map.pairs[i].key, b->u.map.pairs[i].key, why, n) ||
			    !same_node(a->u.map.pairs[i].value, b->u.map.pairs[i].value, why, n))
				return false;
		return true;
	}
	if (a->quoted != b->quoted || a->text_len != b->text_len ||
	    memcmp(a->text, b->text, a->text_len) || !doc_equal(a, b)) {
		snprintf(why, n, "scalar at %d:%d", a->line, a->col);
		return false;
	}
	return true;
}

static int take_none(void *arg, const yaml_event_t *ev)
{
	(void)arg, (void)ev;
	return 0;
}

/* What doc_parse_each handed over, against libyaml's whole stream. */
struct each_check {
	const struct doc_stream *want;
	size_t next;                    /* the index each must see next */
	bool ok;
	char why[256];
};

static int each_compare(void *arg, const struct doc_stream *s, size_t i)
{
	struct each_check *k = arg;
	const struct doc_document *a = &s->docs[i], *b;

	if (i != k->next || i >= k->want->n_docs) {
		snprintf(k->why, sizeof(k->why), "document %zu handed over, %zu expected", i + 1,
			 k->next + 1);
		k->ok = false;
		return 0;
	}
	b = &k->want->docs[i];
	k->next = i + 1;
	if (a->line != b->line || !a->error != !b->error || (a->error && strcmp(a->error, b->error))) {
		snprintf(k->why, sizeof(k->why), "each: document %zu: line or error differ", i + 1);
		k->ok = false;
	} else if (k->ok && !same_node(a->root, b->root, k->why, sizeof(k->why))) {
		k->ok = false;
	}
	return 0;
}

/* Both readers over buf, and doc_parse_each (one document at a time, the
 * fast reader leaving the subset after some documents included); false
 * (with a note on stderr) when they differ. */
static bool same_streams(const char *name, const char *buf, size_t len)
{
	struct doc_stream *f = doc_stream_new(name), *l = doc_stream_new(name);
	char why[256] = "";
	bool ok;

	CU_ASSERT_FATAL(f && l);
	CU_ASSERT_EQUAL(doc_parse_yaml_with(buf, len, f, NULL, true), 0);
	CU_ASSERT_EQUAL(doc_parse_yaml_with(buf, len, l, NULL, false), 0);
	if (!doc_yaml_fast_read(buf, len, take_none, NULL))
		n_fast++;
	ok = f->n_docs == l->n_docs;
	if (!ok)
		snprintf(why, sizeof(why), "%zu vs %zu documents", f->n_docs, l->n_docs);
	for (size_t i = 0; ok && i < f->n_docs; i++) {
		const struct doc_document *a = &f->docs[i], *b = &l->docs[i];

		if (a->line != b->line || !a->error != !b->error ||
		    (a->error && strcmp(a->error, b->error))) {
			snprintf(why, sizeof(why), "document %zu: line %d vs %d, error %s vs %s",
				 i + 1, a->line, b->line, a->error ? a->error : "-",
				 b->error ? b->error : "-");
			ok = false;
		} else {
			ok = same_node(a->root, b->root, why, sizeof(why));
		}
	}
	if (ok) {
		struct each_check k = { .want = l, .ok = true };

		CU_ASSERT_EQUAL(doc_parse_each(buf, len, DOC_FORMAT_YAML, name, each_compare, &k,
					       NULL), 0);
		ok = k.ok && k.next == l->n_docs;
		if (!ok)
			snprintf(why, sizeof(why), "%s (%zu of %zu documents handed over)",
				 k.ok ? "doc_parse_each" : k.why, k.next, l->n_docs);
	}
	if (!ok)
		fprintf(stderr, "\n  %s: the readers differ: %s\n", name, why);
	doc_stream_free(f);
	doc_stream_free(l);
	return ok;
}

static void walk(const char *dir, int depth)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d || depth > 8) {
		if (d)
			closedir(d);
		return;
	}
	while ((e = readdir(d))) {
		char path[4096];
		struct stat st;
		size_t n = strlen(e->d_name);

		if (e->d_name[0] == '.' || !strncmp(e->d_name, "build", 5) ||
		    !strcmp(e->d_name, "node_modules"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (stat(path, &st))
			continue;
		if (S_ISDIR(st.st_mode)) {
			walk(path, depth + 1);
		} else if ((n > 5 && !strcmp(e->d_name + n - 5, ".yaml")) ||
			   (n > 4 && !strcmp(e->d_name + n - 4, ".yml"))) {
			FILE *fp = fopen(path, "rb");
			char *buf = fp ? malloc((size_t)st.st_size + 1) : NULL;
			size_t got = buf ? fread(buf, 1, (size_t)st.st_size, fp) : 0;

			if (fp)
				fclose(fp);
			if (buf) {
				n_files++;
				CU_ASSERT(same_streams(path, buf, got));
			}
			free(buf);
		}
	}
	closedir(d);
}

static void test_every_yaml_file(void)
{
	walk(DT_SOURCE_DIR, 0);
	fprintf(stderr, " (%d files, %d in the fast subset) ", n_files, n_fast);
	CU_ASSERT(n_files > 100);
	CU_ASSERT(n_fast > n_files / 3);
}

/* Each in the subset or just outside it; both readers must agree. */
static void test_edges(void)
{
	static const char *const cases[] = {
		"a: 1\n", "a: 1", "---\n", "---\na: 1\n---\n", "# c\n---\n# d\na: b\n",
		"a:\n  b: c\n  d: [1, 2, {e: f}]\n", "a:\n- x\n- y: z\n  w: v\nb: c\n",
		"- a\n- - b\n", "a: 'x'\nb: \"y\"\nc: 'it''s'\nd: \"e\\tf\"\n",
		"a: b # c\nd: e#f\n", "a: b\n  c\n", "a:\n", "a: b: c\n", "key : v\n",
		"a: [1, 2,]\n", "a: {b}\n", "a: &x 1\nb: *x\n", "a: !!str 1\n", "a: |\n  x\n",
		"- -x\n- --y=1\n- -\n", "a: -1\nb: :x\nc: ?y\n", "y: n\non: off\n1: 2\n",
		"a: 1\na: 2\n", "<<: {a: 1}\nb: 2\n", "a:\t1\n", "a: 1\r\n", "a: \xc3\xa9\n",
		"  a: 1\n", "a: 1\n b: 2\n", "[1, 2]\n", "x\n", "%YAML 1.1\n---\na: 1\n",
		"a: 1\n...\n", "--- a\n", "a: [b, [c, d]]\n", "a: {b: [1], c: {d: e}}\n",
		"a:\n  - b\n  - c\nd: e\n", "a: \"\"\nb: ''\n", "a: [ ]\nb: {}\n",
		"- name: x\n  value: y\n- name: z\n", "a:\n\n  # c\n  b: 1\n",
		/* documents in the subset, then one outside it (read again by
		 * libyaml, the first ones not handed over twice), then more */
		"a: 1\n---\nb: 2\n---\nc: &x 3\nd: *x\n---\ne: 5\n",
		"a: 1\n---\nb: [1, 2]\n---\nc: |\n  text\n---\nd: 4\n",
		"a: 1\n---\nb: 2\n---\nc: [1\n---\nd: 4\n",     /* a syntax error */
		"a: 1\n---\nb: 2\nb: 3\n---\nc: 3\n",          /* a repeated key, in the subset */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char name[32];

		snprintf(name, sizeof(name), "case %zu", i);
		CU_ASSERT(same_streams(name, cases[i], strlen(cases[i])));
	}
}

DT_SUITE_MAIN("doc_fast",
	      DT_TEST(test_edges),
	      DT_TEST(test_every_yaml_file))
