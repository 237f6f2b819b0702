/* fuzz_doc.c - libFuzzer entry point for the document module.
 *
 * Every input is read as YAML, as JSON and as either; nothing may crash,
 * leak or hang. Each document that parses is printed as YAML and as JSON
 * and read back, and must come back equal: the printers' promise, checked
 * on whatever the fuzzer finds. Built only with -DDRATOPO_FUZZ=ON and
 * clang; run as `fuzz_doc tests/fixtures/doc/malformed`. */
#include <stdint.h>
#include <stdlib.h>

#include "doc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Nodes under n counting every alias use, stopping past cap: aliases can
 * make a small input print huge, which is slow but not wrong. */
static size_t count(const struct doc_node *n, size_t cap)
{
	size_t c = 1;

	if (n && n->kind == DOC_SEQ)
		for (size_t i = 0; i < n->u.seq.n && c <= cap; i++)
			c += count(n->u.seq.items[i], cap);
	if (n && n->kind == DOC_MAP)
		for (size_t i = 0; i < n->u.map.n && c <= cap; i++)
			c += 1 + count(n->u.map.pairs[i].value, cap);
	return c;
}

static void round_trip(const struct doc_node *root, int json)
{
	struct strbuf sb = STRBUF_INIT;
	struct doc_stream *s = NULL;
	int rc = json ? doc_emit_json(root, 4, &sb) : doc_emit_yaml(root, &sb);

	/* NaN and infinities have no JSON form: a refusal, not a bug. */
	if (rc == 0) {
		if (doc_parse(sb_str(&sb), sb.len, json ? DOC_FORMAT_JSON : DOC_FORMAT_YAML,
			      "rt", &s, NULL) < 0)
			abort();
		if (s->n_docs != 1 || s->docs[0].error || !doc_equal(root, s->docs[0].root))
			abort();
	}
	doc_stream_free(s);
	sb_free(&sb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum doc_format fmts[] = { DOC_FORMAT_AUTO, DOC_FORMAT_YAML, DOC_FORMAT_JSON };

	for (size_t f = 0; f < 3; f++) {
		struct doc_stream *s = NULL;

		if (doc_parse((const char *)data, size, fmts[f], "fuzz", &s, NULL) < 0)
			continue;
		for (size_t i = 0; i < s->n_docs; i++) {
			if (!s->docs[i].root || count(s->docs[i].root, 20000) > 20000)
				continue;
			round_trip(s->docs[i].root, 0);
			round_trip(s->docs[i].root, 1);
		}
		doc_stream_free(s);
	}
	return 0;
}
