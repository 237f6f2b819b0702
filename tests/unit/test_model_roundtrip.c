/* test_model_roundtrip.c - writing objects out and reading them back.
 *
 * Every object of the seed's manifests and of the all-kinds fixture is
 * encoded, printed as YAML and as JSON, loaded again, and must equal the
 * original (load -> write -> load gives equal objects); printing the
 * reloaded objects must give the same text again. Also the form of the
 * output: defaults present, quantities canonical, empty fields left out. */
#include <string.h>

#include "dt_test.h"
#include "model.h"
#include "strbuf.h"

static const char *const inputs[] = {
	"examples/seed/ec2nodeclass.yaml",
	"examples/seed/gpu-efa-aligned.yaml",
	"examples/seed/large-gpu.yaml",
	"examples/seed/nodepool.yaml",
	"examples/seed/timesliced.yaml",
	"tests/fixtures/model/all-kinds.yaml",
};

static struct model_set *load_path(const char *rel)
{
	char path[4096];
	struct model_set *s = model_set_new();
	struct dt_diags errs;

	snprintf(path, sizeof(path), "%s/%s", DT_SOURCE_DIR, rel);
	dt_diags_init(&errs);
	CU_ASSERT_EQUAL(model_set_load_file(s, path, &errs, NULL), 0);
	CU_ASSERT_EQUAL(errs.n, 0);
	dt_diags_free(&errs);
	return s;
}

static int emit_all(const struct model_set *s, enum doc_format fmt, struct strbuf *out)
{
	for (size_t i = 0; i < s->n_objects; i++) {
		int rc = model_emit(s->objects[i], fmt, out);

		if (rc)
			return rc;
	}
	return 0;
}

static void round_trip(const char *rel, enum doc_format fmt)
{
	struct model_set *a = load_path(rel), *b = model_set_new();
	struct strbuf out = STRBUF_INIT, again = STRBUF_INIT;
	struct dt_diags errs;

	dt_diags_init(&errs);
	CU_ASSERT_EQUAL_FATAL(emit_all(a, fmt, &out), 0);
	CU_ASSERT_EQUAL(model_set_load_buffer(b, out.buf, out.len, "out", &errs, NULL), 0);
	CU_ASSERT_EQUAL(errs.n, 0);
	for (size_t i = 0; i < errs.n; i++)
		fprintf(stderr, "\n  %s: %s", rel, errs.msgs[i]);
	CU_ASSERT_EQUAL(a->n_objects, b->n_objects);
	for (size_t i = 0; i < a->n_objects && i < b->n_objects; i++) {
		bool eq = model_object_equal(a->objects[i], b->objects[i]);

		if (!eq)
			fprintf(stderr, "\n  %s: object %zu (%s %s) differs after the round trip\n",
				rel, i, model_kind_name(a->objects[i]->kind),
				a->objects[i]->meta.name);
		CU_ASSERT(eq);
	}
	/* Valid before, valid after. */
	CU_ASSERT_EQUAL(model_validate_set(b, NULL, &errs), 0);
	CU_ASSERT_EQUAL_FATAL(emit_all(b, fmt, &again), 0);
	DT_ASSERT_STR(sb_str(&again), sb_str(&out));
	sb_free(&out);
	sb_free(&again);
	dt_diags_free(&errs);
	model_set_free(a);
	model_set_free(b);
}

static void test_round_trip_yaml(void)
{
	for (size_t i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++)
		round_trip(inputs[i], DOC_FORMAT_YAML);
}

static void test_round_trip_json(void)
{
	for (size_t i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++)
		round_trip(inputs[i], DOC_FORMAT_JSON);
}

static void test_output_form(void)
{
	const char *yaml =
		"apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c}\n"
		"spec:\n  devices:\n    requests:\n    - name: gpu\n      exactly:\n"
		"        deviceClassName: gpu.example.com\n"
		"        capacity: {requests: {memory: 1024Mi, cores: 0.5}}\n";
	struct model_set *s = model_set_new();
	struct doc_arena *a = doc_arena_new();
	const struct doc_node *n, *ex;
	struct dt_diags errs;
	struct strbuf out = STRBUF_INIT;

	dt_diags_init(&errs);
	CU_ASSERT_EQUAL(model_set_load_buffer(s, yaml, strlen(yaml), "t.yaml", &errs, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(s->n_objects, 1);
	n = model_encode(s->objects[0], a);
	CU_ASSERT_PTR_NOT_NULL_FATAL(n);
	DT_ASSERT_STR(doc_str(doc_get(n, "apiVersion")), "resource.k8s.io/v1");
	DT_ASSERT_STR(doc_str(doc_get(n, "kind")), "ResourceClaim");
	DT_ASSERT_STR(doc_str(doc_get_path(n, "metadata", "namespace", NULL)), "default");
	CU_ASSERT_PTR_NULL(doc_get(n, "status"));        /* empty: left out */
	ex = doc_get(doc_get_path(n, "spec", "devices", "requests", NULL)->u.seq.items[0],
		     "exactly");
	CU_ASSERT_PTR_NOT_NULL_FATAL(ex);
	DT_ASSERT_STR(doc_str(doc_get(ex, "allocationMode")), "ExactCount");
	CU_ASSERT_EQUAL(doc_get(ex, "count")->u.i, 1);
	/* Quantities print in canonical form. */
	DT_ASSERT_STR(doc_str(doc_get_path(ex, "capacity", "requests", "memory", NULL)), "1Gi");
	DT_ASSERT_STR(doc_str(doc_get_path(ex, "capacity", "requests", "cores", NULL)), "500m");
	CU_ASSERT_PTR_NULL(doc_get(ex, "selectors"));
	CU_ASSERT_EQUAL(model_emit(s->objects[0], DOC_FORMAT_YAML, &out), 0);
	CU_ASSERT(strncmp(sb_str(&out), "apiVersion: resource.k8s.io/v1\n", 31) == 0);
	/* A second object gets a document separator. */
	CU_ASSERT_EQUAL(model_emit(s->objects[0], DOC_FORMAT_YAML, &out), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(sb_str(&out), "\n---\napiVersion: "));
	sb_free(&out);
	dt_diags_free(&errs);
	doc_arena_free(a);
	model_set_free(s);
}

/* Keys come out in kubectl's (go-yaml's) order, user maps included. */
static void test_key_order(void)
{
	const char *yaml = "kind: Node\napiVersion: v1\nmetadata:\n  name: n\n"
			   "  labels: {gpu-10: a, b: b, gpu-2: c, A: d, _x: e}\n";
	static const char *const want[] = { "_x", "A", "b", "gpu-2", "gpu-10" };
	struct model_set *s = model_set_new();
	struct doc_arena *a = doc_arena_new();
	const struct doc_node *n, *labels;

	CU_ASSERT_EQUAL(model_set_load_buffer(s, yaml, strlen(yaml), "t.yaml", NULL, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(s->n_objects, 1);
	n = model_encode(s->objects[0], a);
	CU_ASSERT_PTR_NOT_NULL_FATAL(n);
	DT_ASSERT_STR(n->u.map.pairs[0].key->text, "apiVersion");
	DT_ASSERT_STR(n->u.map.pairs[1].key->text, "kind");
	labels = doc_get_path(n, "metadata", "labels", NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(labels);
	CU_ASSERT_EQUAL_FATAL(labels->u.map.n, 5);
	for (size_t i = 0; i < 5; i++)
		DT_ASSERT_STR(labels->u.map.pairs[i].key->text, want[i]);
	doc_arena_free(a);
	model_set_free(s);
}

DT_SUITE_MAIN("model_roundtrip",
	      DT_TEST(test_key_order),
	      DT_TEST(test_round_trip_yaml),
	      DT_TEST(test_round_trip_json),
	      DT_TEST(test_output_form))
