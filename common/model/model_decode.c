/* model_decode.c - from document trees to typed objects: files, directories
 * and buffers into a set, one object per document or List item, dispatched
 * on apiVersion and kind to its family's decoder (model_decode_dra.c,
 * _core.c, _karpenter.c), resource.k8s.io/v1beta1 converted on the way.
 *
 * Fields dratopo does not know are ignored, as kubectl's client-side
 * decoding ignores them; a field of the wrong type is reported with its
 * path and skipped, and decoding goes on, so one pass reports every
 * problem of a file. null counts as absent, as in the API's JSON decoding.
 * Every string and array is copied into the set's arena. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "array.h"
#include "model_internal.h"
#include "strbuf.h"

/* Manifests read from one directory. */
#define LOAD_DIR_MAX_FILES 100000

/* The top-level fields of a DRA object (a closed type). */
static const char *const f_dra_object[] = { "apiVersion", "kind", "metadata", "spec", "status",
					    NULL };

/* ---- Documents ---- */

static void peek_name(struct model_dec *d, const struct doc_node *root, struct model_object *o)
{
	const struct doc_node *md = model_child(root, "metadata");
	const struct doc_node *name = model_child(md, "name");
	const struct doc_node *ns = model_child(md, "namespace");

	if (md && md->kind != DOC_MAP)
		return;
	if (name && name->kind == DOC_STRING)
		o->meta.name = model_dstrdup(d, name);
	if (ns && ns->kind == DOC_STRING)
		o->meta.ns = model_dstrdup(d, ns);
	else if (model_kind_namespaced(o->kind))
		o->meta.ns = "default";
}

static int dec_object(struct model_dec *d, const struct doc_node *root, enum model_kind k, int line)
{
	struct model_object *o = model_set_add(d->set, k);

	if (!o)
		return -ENOMEM;
	o->src.file = d->file;
	o->src.document = d->document;
	o->src.item = d->item;
	if (d->item >= 0 && !(o->src.item_path = model_set_strdup(d->set, d->item_path)))
		return -ENOMEM;
	o->src.line = line;
	/* Name the object before anything is reported about it, metadata
	 * included; dec_meta then reads the metadata for real. */
	peek_name(d, root, o);
	d->obj = o;
	model_get_meta(d, root, "metadata", &o->meta);
	d->closed = k <= MODEL_DEVICE_TAINT_RULE;               /* the DRA kinds */
	if (d->closed)
		model_closed_fields(d, root, f_dra_object, NULL);
	switch (k) {
	case MODEL_DEVICE_CLASS: {
		const struct doc_node *spec = model_get_map(d, root, "spec");
		size_t mark = model_path_field(&d->path, "spec");

		if (spec)
			model_dec_device_class(d, spec, &o->u.device_class);
		model_path_pop(&d->path, mark);
		break;
	}
	case MODEL_RESOURCE_SLICE: {
		const struct doc_node *spec = model_get_map(d, root, "spec");
		size_t mark = model_path_field(&d->path, "spec");

		if (spec)
			model_dec_slice(d, spec, &o->u.slice);
		model_path_pop(&d->path, mark);
		break;
	}
	case MODEL_RESOURCE_CLAIM:
		model_dec_claim(d, root, &o->u.claim);
		break;
	case MODEL_RESOURCE_CLAIM_TEMPLATE:
		model_dec_claim_template(d, root, &o->u.claim_template);
		break;
	case MODEL_DEVICE_TAINT_RULE:
		model_dec_taint_rule(d, root, &o->u.taint_rule);
		break;
	case MODEL_POD:
		model_dec_pod(d, root, &o->u.pod);
		break;
	case MODEL_NODE:
		model_dec_node(d, root, &o->u.node);
		break;
	case MODEL_DEPLOYMENT:
	case MODEL_REPLICA_SET:
	case MODEL_STATEFUL_SET:
	case MODEL_JOB:
	case MODEL_DAEMON_SET:
		model_dec_workload(d, root, k, &o->u.workload);
		break;
	case MODEL_NODE_POOL:
		model_dec_node_pool(d, root, &o->u.node_pool);
		break;
	case MODEL_NODE_CLAIM:
		model_dec_node_claim(d, root, &o->u.node_claim);
		break;
	case MODEL_EC2_NODE_CLASS:
		model_dec_ec2_node_class(d, root, &o->u.ec2_node_class);
		break;
	case MODEL_NODE_OVERLAY:
		model_dec_node_overlay(d, root, &o->u.node_overlay);
		break;
	case MODEL_POD_GROUP:
		model_dec_pod_group(d, root, &o->u.pod_group);
		break;
	case MODEL_KIND_COUNT:
		break;
	}
	d->obj = NULL;
	d->closed = false;
	if (model_object_default(d->set, o))
		d->oom = 1;
	return d->oom ? -ENOMEM : 0;
}

#define DRA_GROUP "resource.k8s.io/"
#define DRA_V1 "resource.k8s.io/v1"

#define SCHEDULING_GROUP "scheduling.k8s.io/"

/* The apiVersion a served version is read as: the DRA beta versions and
 * v1alpha3's DeviceTaintRule have v1's shape (v1beta1 is converted while
 * decoding: requests without `exactly`, devices under `basic`); the
 * PodGroups of v1alpha3 have v1beta1's (the fields dratopo reads). Only
 * called for what model_kind_served says the API serves. */
static const char *read_as(const char *api_version, bool *v1beta1)
{
	*v1beta1 = !strcmp(api_version, DRA_GROUP "v1beta1");
	if (!strncmp(api_version, DRA_GROUP, strlen(DRA_GROUP)))
		return DRA_V1;
	if (!strncmp(api_version, SCHEDULING_GROUP "v1alpha", strlen(SCHEDULING_GROUP "v1alpha")))
		return SCHEDULING_GROUP "v1beta1";
	return api_version;
}

static bool is_list_kind(const char *kind)
{
	size_t n = kind ? strlen(kind) : 0;

	return n >= 4 && !strcmp(kind + n - 4, "List");
}

static int dec_node_root(struct model_dec *d, const struct doc_node *root, int depth, int line)
{
	const char *api_version, *kind;
	int k;

	if (root->kind != DOC_MAP) {
		model_dec_report(d, root, "must be an object with apiVersion and kind");
		return d->oom ? -ENOMEM : 0;
	}
	api_version = model_get_str(d, root, "apiVersion");
	kind = model_get_str(d, root, "kind");
	if (!kind || !kind[0]) {
		if (!model_child(root, "kind")) {
			model_path_field(&d->path, "kind");
			model_dec_report(d, NULL,
					 "Required value: every object needs apiVersion and kind");
			model_path_pop(&d->path, 0);
		}
		return d->oom ? -ENOMEM : 0;
	}
	if (is_list_kind(kind) && doc_get(root, "items")) {
		const struct doc_node *items = model_get_seq(d, root, "items");
		int saved_item = d->item;
		size_t saved_len = strlen(d->item_path);

		if (depth >= LIST_MAX_DEPTH) {
			model_dec_report(d, NULL, "kind: List nested too deeply");
			return 0;
		}
		for (size_t i = 0; items && i < items->u.seq.n; i++) {
			const struct doc_node *it = items->u.seq.items[i];
			int rc;

			if (depth == 0)
				d->item = (int)i;
			/* Bounded: LIST_MAX_DEPTH levels of at most 11 bytes. */
			snprintf(d->item_path + saved_len, sizeof(d->item_path) - saved_len,
				 "%s%zu", saved_len ? "." : "", i);
			if (it->kind == DOC_NULL)
				continue;
			rc = dec_node_root(d, it, depth + 1, it->line ? it->line : line);
			if (rc)
				return rc;
		}
		d->item = saved_item;
		d->item_path[saved_len] = '\0';
		return 0;
	}
	if (!api_version || !api_version[0]) {
		if (!model_child(root, "apiVersion")) {
			model_path_field(&d->path, "apiVersion");
			model_dec_report(d, NULL,
					 "Required value: every object needs apiVersion and kind");
			model_path_pop(&d->path, 0);
		}
		return d->oom ? -ENOMEM : 0;
	}
	if (model_group_read(api_version) && !model_kind_served(api_version, kind)) {
		/* What `kubectl apply` fails, in a group dratopo reads: an
		 * error, so that a file is never "valid" unchecked. */
		struct strbuf msg = STRBUF_INIT;

		model_kind_no_match(api_version, kind, &msg);
		if (sb_error(&msg))
			d->oom = 1;
		else
			model_dec_report(d, NULL, sb_str(&msg));
		sb_free(&msg);
		return d->oom ? -ENOMEM : 0;
	}
	k = model_kind_lookup(read_as(api_version, &d->v1beta1), kind);
	if (k < 0) {
		struct model_source src = { .file = d->file, .document = d->document,
					    .item = d->item,
					    .item_path = d->item >= 0 ? d->item_path : NULL };
		char where[160];

		model_source_document(&src, where, sizeof(where));
		if (dt_diags_add(&d->set->warnings,
				 "%s: %s: skipping %s %s: not a kind dratopo reads",
				 d->file, where, api_version, kind))
			return -ENOMEM;
		return 0;
	}
	return dec_object(d, root, (enum model_kind)k, line);
}

/* One document (docs[i] of st) into d's set. 0, or -ENOMEM. */
static int dec_document(struct model_dec *d, const struct doc_stream *st, size_t i)
{
	const struct doc_document *doc = &st->docs[i];

	d->document = (int)i + 1;
	d->item = -1;
	d->item_path[0] = '\0';
	d->path.len = 0;
	if (doc->error) {
		d->n_errors++;
		if (d->errs && dt_diags_add(d->errs, "%s: document %d: %s", d->file, d->document,
					    doc->error))
			d->oom = 1;
		return d->oom ? -ENOMEM : 0;
	}
	if (!doc->root)
		return 0;       /* an empty document: nothing to say */
	if (dec_node_root(d, doc->root, 0, doc->line) || d->oom)
		return -ENOMEM;
	return 0;
}

static int dec_each(void *arg, const struct doc_stream *st, size_t i)
{
	struct model_dec *d = arg;

	if ((!d->file && !(d->file = model_set_strdup(d->set, st->filename ? st->filename
									      : "-"))) ||
	    dec_document(d, st, i)) {
		d->oom = 1;             /* what load_each tells from doc's errors */
		return -ENOMEM;
	}
	return 0;
}

int model_set_add_stream(struct model_set *s, const struct doc_stream *st,
			 struct dt_diags *errs, struct dt_err *err)
{
	struct model_dec d = { .set = s, .errs = errs, .item = -1 };

	for (size_t i = 0; i < st->n_docs; i++)
		if (dec_each(&d, st, i))
			return dt_err_set(err, -ENOMEM, "%s: out of memory", d.file ? d.file : "-");
	return 0;
}

/* Read and decode a document at a time (doc_parse_each), so that the
 * documents' trees never all take memory at once. */
static int load_each(struct model_set *s, const char *buf, size_t len, const char *path,
		     struct dt_diags *errs, struct dt_err *err)
{
	struct model_dec d = { .set = s, .errs = errs, .item = -1 };
	struct dt_err local = { 0 };
	int rc;

	if (!err)
		err = &local;
	rc = buf ? doc_parse_each(buf, len, DOC_FORMAT_AUTO, path, dec_each, &d, err)
		 : doc_load_file_each(path, dec_each, &d, err);
	if (rc && d.oom)
		return dt_err_set(err, -ENOMEM, "%s: out of memory", d.file ? d.file : path);
	if (rc && errs) {
		/* doc's messages name the file already when they can. */
		if (!strncmp(err->msg, path, strlen(path)))
			dt_diags_add(errs, "%s", err->msg);
		else
			dt_diags_add(errs, "%s: %s", path, err->msg);
	}
	return rc;
}

int model_set_load_buffer(struct model_set *s, const char *buf, size_t len,
			  const char *filename, struct dt_diags *errs, struct dt_err *err)
{
	return load_each(s, buf ? buf : "", len, filename ? filename : "-", errs, err);
}

/* One manifest file (or "-"): its documents, in order. */
static int load_one_file(struct model_set *s, const char *path, struct dt_diags *errs,
			 struct dt_err *err)
{
	return load_each(s, NULL, 0, path, errs, err);
}

static bool is_manifest_name(const char *name)
{
	static const char *const exts[] = { ".yaml", ".yml", ".json" };
	size_t n = strlen(name);

	if (name[0] == '.')
		return false;           /* hidden files, as kubectl's walk skips them */
	for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]); i++) {
		size_t e = strlen(exts[i]);

		if (n > e && !strcmp(name + n - e, exts[i]))
			return true;
	}
	return false;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names of a directory's manifests, sorted; *out is malloc'd, as is
 * each name. */
static int list_manifests(const char *dir, char ***out, size_t *n_out, struct dt_err *err)
{
	DIR *dh = opendir(dir);
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	int rc = 0;

	*out = NULL;
	*n_out = 0;
	if (!dh)
		return dt_err_set(err, -errno, "%s: cannot read the directory: %s", dir,
				  strerror(errno));
	while ((de = readdir(dh))) {
		if (!is_manifest_name(de->d_name))
			continue;
		if (n == LOAD_DIR_MAX_FILES) {
			rc = dt_err_set(err, -E2BIG, "%s: more than %d manifests in the directory",
					dir, LOAD_DIR_MAX_FILES);
			goto out;
		}
		if (DT_GROW(names, cap, n + 1))
			goto oom;
		if (!(names[n] = strdup(de->d_name)))
			goto oom;
		n++;
	}
	if (n > 1)
		qsort(names, n, sizeof(*names), cmp_names);
	*out = names;
	*n_out = n;
	names = NULL;
	goto out;
oom:
	rc = dt_err_set(err, -ENOMEM, "out of memory");
out:
	closedir(dh);
	dt_strv_free(names, n);
	return rc;
}

/* Whether a directory's entry is a file to read: 0 yes (or its error is
 * load_one_file's to tell: a dangling link), 1 a directory (skipped), or
 * -EINVAL for a FIFO, socket or device: opening a FIFO nobody writes would
 * wait forever (QA-99). Given alone, such a file is read (`-f <(...)`). */
static int dir_entry_regular(const char *path, struct dt_err *err)
{
	struct stat st;

	if (stat(path, &st))
		return 0;
	if (S_ISDIR(st.st_mode))
		return 1;
	if (!S_ISREG(st.st_mode))
		return dt_err_set(err, -EINVAL, "%s: not a regular file (a FIFO, socket or device "
				  "in a directory is not read)", path);
	return 0;
}

/* A directory as `kubectl apply -f DIR` reads it: its *.yaml, *.yml and
 * *.json files in name order, not recursively. */
static int load_dir(struct model_set *s, const char *dir, struct dt_diags *errs,
		    struct dt_err *err)
{
	size_t len = strlen(dir);
	bool slash = len && dir[len - 1] == '/';
	char **names = NULL;
	size_t n = 0;
	int rc, first_rc = 0;

	rc = list_manifests(dir, &names, &n, err);
	if (!rc && !n)
		rc = dt_err_set(err, -ENOENT, "%s: no manifests (*.yaml, *.yml, *.json) in the "
				"directory", dir);
	if (rc) {
		if (errs)
			dt_diags_add(errs, "%s", err->msg);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		struct strbuf path = STRBUF_INIT;

		sb_printf(&path, "%s%s%s", dir, slash ? "" : "/", names[i]);
		if (sb_error(&path)) {
			sb_free(&path);
			rc = dt_err_set(err, -ENOMEM, "out of memory");
			goto out;
		}
		rc = dir_entry_regular(sb_str(&path), err);
		if (rc == 1) {          /* a directory: not recursive, as kubectl */
			sb_free(&path);
			continue;
		}
		if (rc < 0 && errs)
			dt_diags_add(errs, "%s", err->msg);
		else
			rc = load_one_file(s, sb_str(&path), errs, err);
		sb_free(&path);
		if (rc == -ENOMEM)
			goto out;
		/* An unreadable file is in errs; go on with the others. */
		if (rc && !first_rc)
			first_rc = rc;
		rc = 0;
	}
	rc = first_rc;
out:
	dt_strv_free(names, n);
	return rc;
}

int model_set_load_file(struct model_set *s, const char *path,
			struct dt_diags *errs, struct dt_err *err)
{
	struct dt_err local;
	struct stat sb;

	if (!err)
		err = &local;
	if (strcmp(path, "-") && !stat(path, &sb) && S_ISDIR(sb.st_mode))
		return load_dir(s, path, errs, err);
	return load_one_file(s, path, errs, err);
}
