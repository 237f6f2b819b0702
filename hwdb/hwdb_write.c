/* hwdb_write.c - printing entries in hwdb's source format, the format
 * `--hwdb-extra` reads: for `dratopo hwdb export` and for the agent's
 * `verify`, which proposes an entry for a type hwdb does not know.
 *
 * The tree comes from hwdb_source_encode_type (hwdb_source.c, next to the
 * decoder it must agree with); this file only prints it. Kept apart so that
 * the generator, which only reads the format, needs no printer. */
#include "hwdb.h"

#include "doc.h"
#include "hwdb_source.h"

int hwdb_file_write_yaml(const struct hwdb_type *const *types, size_t n, struct strbuf *out)
{
	struct doc_arena *ar = doc_arena_new();
	struct doc_node *root, *list;
	int rc = -ENOMEM;

	if (!ar)
		return -ENOMEM;
	root = doc_new_map(ar);
	list = doc_new_seq(ar);
	if (!root || !list || doc_map_set(ar, root, "instanceTypes", list))
		goto out;
	for (size_t i = 0; i < n; i++)
		if (doc_seq_push(ar, list, hwdb_source_encode_type(types[i], ar)))
			goto out;
	rc = doc_emit_yaml(root, out);
out:
	doc_arena_free(ar);
	return rc;
}

int hwdb_entry_write_yaml(const struct hwdb_type *t, struct strbuf *out)
{
	struct doc_arena *ar = doc_arena_new();
	struct doc_node *list;
	int rc = -ENOMEM;

	if (!ar)
		return -ENOMEM;
	list = doc_new_seq(ar);
	if (list && !doc_seq_push(ar, list, hwdb_source_encode_type(t, ar)))
		rc = doc_emit_yaml(list, out);
	doc_arena_free(ar);
	return rc;
}
