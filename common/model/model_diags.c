/* model_diags.c - the order input problems are shown in (model_diags_sort):
 * they come in two passes (loading, then validation), users read them per
 * document, so they are sorted by file (as given; a directory's files by
 * name), document and List item, keeping the order within one object. The
 * messages are the loader's and the validator's, so their order is the
 * model's business. */
#include <stdlib.h>
#include <string.h>

#include "model.h"

struct keyed_msg {
	size_t file, pos;
	const char *name;               /* the message's file name, in msg */
	size_t name_len;
	long doc, item;
	char *msg;
};

static int keyed_cmp(const void *pa, const void *pb)
{
	const struct keyed_msg *a = pa, *b = pb;
	size_t n = a->name_len < b->name_len ? a->name_len : b->name_len;
	int c;

	if (a->file != b->file)
		return a->file < b->file ? -1 : 1;
	c = memcmp(a->name, b->name, n);
	if (c || a->name_len != b->name_len)
		return c ? c : a->name_len < b->name_len ? -1 : 1;
	if (a->doc != b->doc)
		return a->doc < b->doc ? -1 : 1;
	if (a->item != b->item)
		return a->item < b->item ? -1 : 1;
	return a->pos < b->pos ? -1 : a->pos > b->pos;
}

static void key_message(struct keyed_msg *k, const char *const *files, size_t n_files)
{
	const char *m = k->msg;

	for (size_t f = 0; f < n_files; f++) {
		size_t len = strlen(files[f]);
		const char *doc;
		char *end;

		if (strncmp(m, files[f], len))
			continue;
		/* FILE: document N, or DIR/NAME: document N */
		doc = strstr(m + len, ": document ");
		if (!doc || (doc != m + len && m[len] != '/' && files[f][len - 1] != '/'))
			continue;
		k->file = f;
		k->name = m;
		k->name_len = (size_t)(doc - m);
		k->doc = strtol(doc + 11, &end, 10);
		if (!strncmp(end, ", item ", 7))
			k->item = strtol(end + 7, NULL, 10);
		return;
	}
}

void model_diags_sort(struct dt_diags *errs, const char *const *files, size_t n_files)
{
	struct keyed_msg *k = calloc(errs->n ? errs->n : 1, sizeof(*k));

	if (!k)
		return;         /* unsorted is still correct */
	for (size_t i = 0; i < errs->n; i++) {
		k[i].msg = errs->msgs[i];
		k[i].pos = i;
		k[i].file = n_files;
		k[i].name = "";
		k[i].item = -1;
		key_message(&k[i], files, n_files);
	}
	if (errs->n > 1)
		qsort(k, errs->n, sizeof(*k), keyed_cmp);
	for (size_t i = 0; i < errs->n; i++)
		errs->msgs[i] = k[i].msg;
	free(k);
}
