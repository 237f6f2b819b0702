/* topo_slices.c - predicting the drivers' ResourceSlices from a topology.
 * See topo_slices.h. */
#include "topo_slices.h"

#include <errno.h>

#include "model.h"
#include "topo_verify.h"

/* The node as an hwdb entry (*learned, freed here on failure) and its
 * slices in set. */
static int learn_slices(const struct topo *t, const struct hwdb_cc_mode *mode,
			const char *node_name, struct model_set *set, struct model_object **out,
			size_t *n_out, struct topo_learned *learned, struct dt_diags *warnings,
			struct dt_err *err)
{
	int rc = topo_learn(t, NULL, learned, warnings, err);

	if (rc)
		return rc;
	topo_learned_use_node_names(learned, t);
	rc = hwdb_slices(&learned->type, mode, node_name, set, out, n_out, err);
	if (rc)
		topo_learned_free(learned);
	return rc;
}

int topo_slices(const struct topo *t, const struct hwdb_cc_mode *mode,
		 const char *node_name, struct model_set *set, struct model_object **out,
		 size_t *n_out, struct dt_diags *warnings, struct dt_err *err)
{
	struct topo_learned learned;
	int rc;

	/* hwdb_slices copies what it needs into set, so the entry can go. */
	rc = learn_slices(t, mode, node_name, set, out, n_out, &learned, warnings, err);
	if (rc == 0)
		topo_learned_free(&learned);
	return rc;
}

int topo_slices_emit(const struct topo *t, const struct hwdb_cc_mode *mode,
		      const char *node_name, enum doc_format fmt, bool compact,
		      struct strbuf *out, struct dt_diags *warnings, struct dt_err *err)
{
	struct model_object *slices[HWDB_MAX_SLICES];
	struct topo_learned learned;
	struct model_set *set = NULL;
	struct doc_arena *arena = NULL;
	size_t n = 0;
	int rc;

	set = model_set_new();
	if (!set)
		return dt_err_set(err, -ENOMEM, "out of memory");
	rc = learn_slices(t, mode, node_name, set, slices, &n, &learned, warnings, err);
	if (rc) {
		model_set_free(set);
		return rc;
	}
	if (fmt == DOC_FORMAT_JSON) {
		struct doc_node *top, *seq;

		arena = doc_arena_new();
		top = arena ? doc_new_map(arena) : NULL;
		seq = arena ? doc_new_seq(arena) : NULL;
		if (!top || !seq) {
			rc = dt_err_set(err, -ENOMEM, "out of memory");
			goto out;
		}
		for (size_t i = 0; i < n; i++)
			rc |= doc_seq_push(arena, seq, model_encode(slices[i], arena));
		rc |= doc_map_set(arena, top, "instanceType",
				  hwdb_type_encode(&learned.type, arena));
		rc |= doc_map_set(arena, top, "resourceSlices", seq);
		if (rc) {
			rc = dt_err_set(err, -ENOMEM, "out of memory");
			goto out;
		}
		rc = doc_emit_json(top, DOC_JSON_OUTPUT(compact), out);
	} else {
		char ccbuf[32];
		struct hwdb_cc_mode off = { HWDB_CC_DISABLED, 0 };

		/* As `dratopo hwdb show` prints them: a comment, then each slice
		 * as a document (model_emit puts "---" before each one). */
		sb_printf(out, "# ResourceSlices the drivers would publish on node %s (%s, as "
			  "probed; consumable capacity: %s)\n", node_name, learned.type.name,
			  hwdb_cc_name(mode ? mode : &off, ccbuf, sizeof(ccbuf)));
		for (size_t i = 0; i < n && !rc; i++)
			rc = model_emit(slices[i], DOC_FORMAT_YAML, out);
	}
	if (rc || sb_error(out))
		rc = dt_err_set(err, rc ? rc : -ENOMEM, "cannot print the slices");
out:
	doc_arena_free(arena);
	model_set_free(set);
	topo_learned_free(&learned);
	return rc;
}
