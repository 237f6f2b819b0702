/* cli_cel.c - `dratopo cel eval [--device FILE [--device-name NAME]]
 * [--let NAME=EXPR]... [--repeat N] EXPR`.
 *
 * Compiles EXPR in the DRA environment with any result type and evaluates
 * it once (or N times for a measurement), printing the result as a CEL
 * literal on stdout. exit 0: printed; 1: evaluation error ("error: ..." on
 * stderr) or unreadable input; 2: compile error (with position and caret
 * line) or usage error.
 *
 * --device reads a YAML/JSON file holding one ResourceSlice device entry
 * plus a top-level `driver`, or a whole ResourceSlice (then --device-name
 * picks the device unless it has only one), and binds `device` the way the
 * scheduler does: attributes and capacity split into domain and id, an
 * unqualified name belonging to the driver's domain; versions parse as
 * Semver, capacities as Quantity. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cel.h"
#include "cel_env.h"
#include "cli.h"
#include "doc.h"
#include "err.h"
#include "opts.h"
#include "quantity.h"
#include "semver.h"
#include "strbuf.h"

#define CLI_CEL_MAX_LETS 64

/* ---- the device ---- */

/* Everything the `device` view borrows; freed together. */
/* A list attribute's values as CEL sees them (heap, freed with the device). */
struct cli_list {
	struct cel_list list;
	struct cel_value *items;
	struct semver *versions;
};

struct cli_device {
	struct doc_stream *stream;      /* owns the strings the attributes point at */
	struct cel_device dev;
	struct cel_device_attr *attrs;
	struct cel_device_capacity *caps;
	struct semver *versions;        /* one per attribute slot */
	struct cli_list *lists;         /* one per attribute slot */
	size_t n_lists;
	struct quantity *quantities;    /* one per capacity slot */
	char **names;                   /* split domains and ids (heap) */
	size_t n_names;
};

static void cli_device_free(struct cli_device *d)
{
	for (size_t i = 0; i < d->n_names; i++)
		free(d->names[i]);
	free(d->names);
	free(d->attrs);
	free(d->caps);
	free(d->versions);
	for (size_t i = 0; d->lists && i < d->n_lists; i++) {
		free(d->lists[i].items);
		free(d->lists[i].versions);
	}
	free(d->lists);
	free(d->quantities);
	doc_stream_free(d->stream);
}

static char *keep_name(struct cli_device *d, const char *s, size_t len)
{
	char *c = malloc(len + 1);

	if (!c)
		return NULL;
	memcpy(c, s, len);
	c[len] = 0;
	d->names[d->n_names++] = c;
	return c;
}

/* Split "domain/id" or "id" (the driver's domain) into the two parts. */
static int split_name(struct cli_device *d, const char *key, const char **domain,
		      const char **id, struct dt_err *err)
{
	const char *slash = strchr(key, '/');

	if (!slash) {
		*domain = d->dev.driver;
		*id = key;
		return 0;
	}
	if (slash == key || !slash[1])
		return dt_err_set(err, -EINVAL, "invalid qualified name %s", key);
	*domain = keep_name(d, key, (size_t)(slash - key));
	*id = slash + 1;
	return *domain ? 0 : dt_err_set(err, -ENOMEM, "out of memory");
}

/* ints, bools, strings, versions: a list of CEL values of the element type. */
static int read_list(struct cli_device *d, const char *key, const char *field,
		     const struct doc_node *x, size_t i, struct dt_err *err)
{
	struct cli_list *l = &d->lists[i];
	size_t n = x->kind == DOC_SEQ ? x->u.seq.n : 0;

	if (x->kind != DOC_SEQ || n == 0)
		return dt_err_set(err, -EINVAL, "attributes[%s].%s: must be a non-empty list", key,
				  field);
	l->items = calloc(n, sizeof(*l->items));
	l->versions = field[0] == 'v' ? calloc(n, sizeof(*l->versions)) : NULL;
	if (!l->items || (field[0] == 'v' && !l->versions))
		return dt_err_set(err, -ENOMEM, "out of memory");
	for (size_t k = 0; k < n; k++) {
		const struct doc_node *e = x->u.seq.items[k];
		struct dt_err perr = { 0 };

		if (field[0] == 'i' && e->kind == DOC_INT)
			l->items[k] = cel_int(e->u.i);
		else if (field[0] == 'b' && e->kind == DOC_BOOL)
			l->items[k] = cel_bool(e->u.b);
		else if (field[0] == 's' && e->text && e->kind != DOC_SEQ && e->kind != DOC_MAP)
			l->items[k] = cel_string(e->text, e->text_len);
		else if (field[0] == 'v' && e->text &&
			 semver_parse(e->text, e->text_len, &l->versions[k], &perr) == 0)
			l->items[k] = cel_object(&cel_semver_type, &l->versions[k]);
		else
			return dt_err_set(err, -EINVAL, "attributes[%s].%s[%zu]: %s", key, field, k,
					  perr.msg[0] ? perr.msg : "wrong type");
	}
	l->list.items = l->items;
	l->list.len = n;
	d->attrs[i].kind = field[0] == 'i' ? CEL_ATTR_INTS : field[0] == 'b' ? CEL_ATTR_BOOLS :
			   field[0] == 's' ? CEL_ATTR_STRINGS : CEL_ATTR_VERSIONS;
	d->attrs[i].v.list = &l->list;
	return 0;
}

static int read_attr(struct cli_device *d, const char *key, const struct doc_node *v,
		     size_t i, struct dt_err *err)
{
	static const char *const lists[] = { "ints", "bools", "strings", "versions" };
	struct cel_device_attr *a = &d->attrs[i];
	const struct doc_node *x;
	int rc = split_name(d, key, &a->domain, &a->id, err);

	if (rc < 0)
		return rc;
	if (v->kind != DOC_MAP || v->u.map.n != 1)
		return dt_err_set(err, -EINVAL, "attributes[%s]: exactly one of int, bool, "
				  "string, version, ints, bools, strings or versions is required",
				  key);
	for (size_t k = 0; k < 4; k++)
		if ((x = doc_get(v, lists[k])))
			return read_list(d, key, lists[k], x, i, err);
	if ((x = doc_get(v, "int"))) {
		if (x->kind != DOC_INT)
			return dt_err_set(err, -EINVAL, "attributes[%s].int: must be an integer",
					  key);
		a->kind = CEL_ATTR_INT;
		a->v.i = x->u.i;
	} else if ((x = doc_get(v, "bool"))) {
		if (x->kind != DOC_BOOL)
			return dt_err_set(err, -EINVAL, "attributes[%s].bool: must be a boolean",
					  key);
		a->kind = CEL_ATTR_BOOL;
		a->v.b = x->u.b;
	} else if ((x = doc_get(v, "string"))) {
		if (!x->text || x->kind == DOC_SEQ || x->kind == DOC_MAP)
			return dt_err_set(err, -EINVAL, "attributes[%s].string: must be a string",
					  key);
		a->kind = CEL_ATTR_STRING;
		a->v.str.s = x->text;
		a->v.str.len = x->text_len;
	} else if ((x = doc_get(v, "version"))) {
		struct dt_err perr = { 0 };

		if (!x->text || semver_parse(x->text, x->text_len, &d->versions[i], &perr) < 0)
			return dt_err_set(err, -EINVAL, "attributes[%s].version: %s", key,
					  x->text ? perr.msg : "must be a string");
		a->kind = CEL_ATTR_VERSION;
		a->v.version = &d->versions[i];
	} else {
		return dt_err_set(err, -EINVAL, "attributes[%s]: exactly one of int, bool, "
				  "string, version, ints, bools, strings or versions is required",
				  key);
	}
	return 0;
}

static int read_capacity(struct cli_device *d, const char *key, const struct doc_node *v,
			 size_t i, struct dt_err *err)
{
	struct cel_device_capacity *c = &d->caps[i];
	const struct doc_node *x = doc_get(v, "value");
	struct dt_err perr = { 0 };
	int rc = split_name(d, key, &c->domain, &c->id, err);

	if (rc < 0)
		return rc;
	if (!x || !x->text || x->kind == DOC_SEQ || x->kind == DOC_MAP)
		return dt_err_set(err, -EINVAL, "capacity[%s].value: Required value", key);
	if (quantity_parse(x->text, x->text_len, &d->quantities[i], &perr) < 0)
		return dt_err_set(err, -EINVAL, "capacity[%s].value: %s", key, perr.msg);
	c->value = &d->quantities[i];
	return 0;
}

/* Fill d->dev from one device entry (v1, or v1beta1's `basic` wrapper). */
static int read_device_entry(struct cli_device *d, const struct doc_node *entry,
			     struct dt_err *err)
{
	const struct doc_node *basic = doc_get(entry, "basic");
	const struct doc_node *attrs, *caps, *multi;
	size_t na, nc;
	int rc;

	if (basic)
		entry = basic;
	attrs = doc_get(entry, "attributes");
	caps = doc_get(entry, "capacity");
	multi = doc_get(entry, "allowMultipleAllocations");
	if ((attrs && attrs->kind != DOC_MAP && attrs->kind != DOC_NULL) ||
	    (caps && caps->kind != DOC_MAP && caps->kind != DOC_NULL))
		return dt_err_set(err, -EINVAL, "attributes and capacity must be maps");
	na = attrs && attrs->kind == DOC_MAP ? attrs->u.map.n : 0;
	nc = caps && caps->kind == DOC_MAP ? caps->u.map.n : 0;
	d->attrs = calloc(na ? na : 1, sizeof(*d->attrs));
	d->versions = calloc(na ? na : 1, sizeof(*d->versions));
	d->lists = calloc(na ? na : 1, sizeof(*d->lists));
	d->n_lists = d->lists ? na : 0;
	d->caps = calloc(nc ? nc : 1, sizeof(*d->caps));
	d->quantities = calloc(nc ? nc : 1, sizeof(*d->quantities));
	d->names = calloc(na + nc + 1, sizeof(*d->names));
	if (!d->attrs || !d->versions || !d->lists || !d->caps || !d->quantities || !d->names)
		return dt_err_set(err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < na; i++) {
		rc = read_attr(d, attrs->u.map.pairs[i].key->text, attrs->u.map.pairs[i].value, i,
			       err);
		if (rc < 0)
			return rc;
	}
	for (size_t i = 0; i < nc; i++) {
		rc = read_capacity(d, caps->u.map.pairs[i].key->text, caps->u.map.pairs[i].value,
				   i, err);
		if (rc < 0)
			return rc;
	}
	if (multi && multi->kind != DOC_BOOL)
		return dt_err_set(err, -EINVAL, "allowMultipleAllocations: must be a boolean");
	d->dev.attrs = d->attrs;
	d->dev.n_attrs = na;
	d->dev.capacity = d->caps;
	d->dev.n_capacity = nc;
	d->dev.allow_multiple_allocations = multi && multi->u.b;
	return 0;
}

static const char *string_field(const struct doc_node *map, const char *key)
{
	const struct doc_node *n = doc_get(map, key);

	return n && n->kind == DOC_STRING ? n->text : NULL;
}

/* What --device found in the file: every device of every ResourceSlice
 * (multi-document streams and kind: List included), or one bare entry. */
struct device_pick {
	const char *name;               /* --device-name, or NULL */
	const char *driver;
	const struct doc_node *entry;
	size_t devices;                 /* devices seen in all slices */
	size_t matches;                 /* of those, named like --device-name */
	size_t bare;                    /* bare device entries seen */
};

static void pick_device(struct device_pick *p, const char *driver, const struct doc_node *entry)
{
	if (!p->matches) {
		p->driver = driver;
		p->entry = entry;
	}
	p->matches++;
}

static int scan_slice(const struct doc_node *slice, struct device_pick *p, struct dt_err *err)
{
	const struct doc_node *spec = doc_get(slice, "spec");
	const struct doc_node *devices = doc_get(spec, "devices");
	const char *driver = string_field(spec, "driver");

	if (!driver)
		return dt_err_set(err, -EINVAL, "spec.driver: Required value");
	if (!devices || devices->kind != DOC_SEQ)
		return 0;
	for (size_t i = 0; i < devices->u.seq.n; i++) {
		const char *n = string_field(devices->u.seq.items[i], "name");

		p->devices++;
		if (!p->name || (n && !strcmp(n, p->name)))
			pick_device(p, driver, devices->u.seq.items[i]);
	}
	return 0;
}

static int scan_object(const struct doc_node *obj, struct device_pick *p, int depth,
		       struct dt_err *err)
{
	const char *kind = string_field(obj, "kind");
	const struct doc_node *items;

	if (!obj || obj->kind != DOC_MAP)
		return dt_err_set(err, -EINVAL, "expected a map");
	if (!kind) {
		const char *driver = string_field(obj, "driver");

		if (!driver)
			return dt_err_set(err, -EINVAL, "driver: Required value (a device entry "
					  "needs a top-level driver field)");
		p->bare++;
		pick_device(p, driver, obj);
		return 0;
	}
	if (!strcmp(kind, "ResourceSlice"))
		return scan_slice(obj, p, err);
	if (strcmp(kind, "List") || depth > 8)
		return 0;               /* other kinds carry no devices */
	items = doc_get(obj, "items");
	for (size_t i = 0; items && items->kind == DOC_SEQ && i < items->u.seq.n; i++) {
		int rc = scan_object(items->u.seq.items[i], p, depth + 1, err);

		if (rc < 0)
			return dt_err_prefix(err, "items[%zu]: ", i);
	}
	return 0;
}

/* The one device the file names, or an error that says why not. */
static int pick_result(const struct device_pick *p, struct dt_err *err)
{
	if (p->bare && (p->bare > 1 || p->devices))
		return dt_err_set(err, -EINVAL, "a bare device entry must be the file's only "
				  "document");
	if (p->name && !p->matches)
		return dt_err_set(err, -ENOENT, "no device named %s in the file's %zu "
				  "ResourceSlice devices", p->name, p->devices);
	if (p->name && p->matches > 1)
		return dt_err_set(err, -EINVAL, "%zu devices are named %s: the file holds "
				  "slices of several pools", p->matches, p->name);
	if (!p->matches)
		return dt_err_set(err, -EINVAL, "the file holds no device");
	if (p->matches > 1)
		return dt_err_set(err, -EINVAL, "the file holds %zu devices: pick one with "
				  "--device-name", p->matches);
	return 0;
}

static int load_device(const char *path, const char *name, struct cli_device *d,
		       struct dt_err *err)
{
	struct device_pick pick = { .name = name };
	int rc = doc_load_file(path, &d->stream, err);

	if (rc < 0)
		return rc;
	for (size_t i = 0; i < d->stream->n_docs; i++) {
		const struct doc_document *doc = &d->stream->docs[i];

		if (doc->error)
			return dt_err_set(err, -EINVAL, "%s: document %zu: %s", path, i + 1,
					  doc->error);
		if (!doc->root)
			continue;
		rc = scan_object(doc->root, &pick, 0, err);
		if (rc < 0)
			return dt_err_prefix(err, "%s: document %zu: ", path, i + 1);
	}
	rc = pick_result(&pick, err);
	if (rc == 0) {
		d->dev.driver = pick.driver;
		rc = read_device_entry(d, pick.entry, err);
	}
	if (rc < 0)
		dt_err_prefix(err, "%s: ", path);
	return rc;
}

/* ---- let bindings ---- */

struct let {
	const char *name;
	/* Kept until the end: a program may still read its environment's
	 * overload tables when it dispatches at run time. */
	struct cel_env *env;
	struct cel_program *prog;
	struct cel_evaluation *ev;      /* owns the value */
	struct cel_value value;
	int slot;
};

/* A CEL identifier that is not a keyword or reserved word (cel-spec). */
static bool valid_ident(const char *s)
{
	static const char *const reserved[] = {
		"true", "false", "null", "in", "as", "break", "const", "continue", "else",
		"for", "function", "if", "import", "let", "loop", "package", "namespace",
		"return", "var", "void", "while",
	};

	if (!s[0] || !(s[0] == '_' || (s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z')))
		return false;
	for (const char *p = s; *p; p++)
		if (!(*p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9')))
			return false;
	for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++)
		if (!strcmp(s, reserved[i]))
			return false;
	return true;
}

static const struct opts_cmd eval_cmd;

/* Evaluate "NAME=EXPR" as a constant expression. 0, or the exit code. */
static int eval_let(const char *arg, struct let *l, char *name_buf, size_t name_sz)
{
	const char *eq = strchr(arg, '=');
	struct dt_err err = { 0 };
	size_t nlen;
	int rc;

	if (!eq || eq == arg || (nlen = (size_t)(eq - arg)) >= name_sz) {
		return opts_usage_error(&eval_cmd, "--let: wants NAME=EXPR, got \"%s\"", arg);
	}
	memcpy(name_buf, arg, nlen);
	name_buf[nlen] = 0;
	l->name = name_buf;
	if (!valid_ident(name_buf)) {
		return opts_usage_error(&eval_cmd, "--let: '%s' is not a CEL identifier", name_buf);
	}
	l->env = cel_env_new(CEL_ENV_STANDARD, &err);
	if (!l->env) {
		fprintf(stderr, "error: %s\n", err.msg);
		return CLI_EXIT_FAIL;
	}
	rc = cel_compile(l->env, eq + 1, strlen(eq + 1), &l->prog, &err);
	if (rc < 0) {
		fprintf(stderr, "--let %s: %s\n", name_buf, err.msg);
		return CLI_EXIT_USAGE;
	}
	l->ev = cel_evaluation_new();
	if (!l->ev) {
		fprintf(stderr, "error: out of memory\n");
		return CLI_EXIT_FAIL;
	}
	if (cel_eval(l->prog, NULL, 0, l->ev, &l->value, &err) < 0) {
		fprintf(stderr, "error: --let %s: %s\n", name_buf, err.msg);
		return CLI_EXIT_FAIL;
	}
	return 0;
}

/* ---- eval ---- */

struct options {
	const char *device_file, *device_name;
	struct opts_list lets;
	uint64_t repeat;
	struct opts_list expr;          /* the operand */
};

static const struct opt eval_opts[] = {
	{ .name = "device", .type = OPT_STR, .arg = "FILE", .at = OPTS_AT(struct options, device_file),
	  .help = "bind `device` from a ResourceSlice device entry with a\n"
		  "top-level `driver` field, or from a ResourceSlice" },
	{ .name = "device-name", .type = OPT_STR, .arg = "NAME",
	  .at = OPTS_AT(struct options, device_name),
	  .help = "the device of the ResourceSlice to bind" },
	{ .name = "let", .type = OPT_LIST, .arg = "NAME=EXPR", .at = OPTS_AT(struct options, lets),
	  .help = "declare NAME (dyn) bound to the value of constant EXPR\n(repeatable)" },
	{ .name = "repeat", .type = OPT_UINT, .arg = "N", .min = 1, .max = INT64_MAX,
	  .at = OPTS_AT(struct options, repeat),
	  .help = "evaluate N times, print \"N evals, X ns/eval\" on stderr" },
	{ 0 }
};

static const struct opts_cmd eval_cmd = {
	.prog = "dratopo cel eval",
	.synopsis = "dratopo cel eval [--device FILE [--device-name NAME]] [--let NAME=EXPR]...\n"
		    "                        [--repeat N] [--] EXPR",
	.about = "Compile EXPR in the DRA selector environment (every Kubernetes CEL library) and\n"
		 "evaluate it. The result, of any type, is printed as a CEL expression.\n"
		 "An expression that starts with '-' and a letter goes after --.",
	.opts = eval_opts,
	.epilog = "Exit codes: 0 success, 1 evaluation error, 2 compile or usage error.",
	.operands = OPTS_AT(struct options, expr),
	.max_operands = 1,
	.operand_hint = "one expression only: quote it",
	.flags = OPTS_DASH_OPERANDS,
};

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cel_eval_cmd(int argc, char **argv)
{
	static char let_names[CLI_CEL_MAX_LETS][128];
	struct options o = { 0 };
	struct let lets[CLI_CEL_MAX_LETS] = { 0 };
	struct cel_value vars[CLI_CEL_MAX_LETS + 1];
	struct cli_device dev = { 0 };
	struct dt_err err = { 0 };
	struct cel_env *env = NULL;
	struct cel_program *prog = NULL;
	struct cel_evaluation *ev = NULL;
	struct strbuf sb = STRBUF_INIT;
	struct cel_value out;
	const char *expr;
	size_t n_vars = 1;
	int rc;

	if (opts_parse(&eval_cmd, argc, argv, &o, &rc))
		goto out;
	if (!o.expr.n)
		rc = opts_usage_error(&eval_cmd, "no expression to evaluate");
	else if (o.device_name && !o.device_file)
		rc = opts_usage_error(&eval_cmd, "--device-name needs --device");
	else if (o.lets.n > CLI_CEL_MAX_LETS)
		rc = opts_usage_error(&eval_cmd, "at most %d --let", CLI_CEL_MAX_LETS);
	if (rc)
		goto out;
	expr = o.expr.v[0];
	/* Without --device, `device` is unbound: reading it is an error. */
	vars[0] = (struct cel_value){ .kind = CEL_KIND_COUNT };
	if (o.device_file) {
		if (load_device(o.device_file, o.device_name, &dev, &err) < 0) {
			fprintf(stderr, "error: %s\n", err.msg);
			rc = CLI_EXIT_FAIL;
			goto out;
		}
		vars[0] = cel_device_value(&dev.dev);
	}
	env = cel_env_new(CEL_ENV_CLI, &err);
	if (!env) {
		fprintf(stderr, "error: %s\n", err.msg);
		rc = CLI_EXIT_FAIL;
		goto out;
	}
	for (size_t i = 0; i < o.lets.n; i++) {
		rc = eval_let(o.lets.v[i], &lets[i], let_names[i], sizeof(let_names[i]));
		if (rc)
			goto out;
		lets[i].slot = cel_env_declare(env, lets[i].name, "dyn", &err);
		if (lets[i].slot < 0 || lets[i].slot > CLI_CEL_MAX_LETS) {
			fprintf(stderr, "dratopo cel eval: --let %s: %s\n", lets[i].name, err.msg);
			rc = CLI_EXIT_USAGE;
			goto out;
		}
		vars[lets[i].slot] = lets[i].value;
		if ((size_t)lets[i].slot + 1 > n_vars)
			n_vars = (size_t)lets[i].slot + 1;
	}
	if (cel_compile(env, expr, strlen(expr), &prog, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		rc = CLI_EXIT_USAGE;
		goto out;
	}
	ev = cel_evaluation_new();
	if (!ev) {
		fprintf(stderr, "error: out of memory\n");
		rc = CLI_EXIT_FAIL;
		goto out;
	}
	if (o.repeat > 1) {
		double t0 = now_ns();

		for (uint64_t i = 1; i < o.repeat; i++)
			cel_eval(prog, vars, n_vars, ev, &out, &err);
		rc = cel_eval(prog, vars, n_vars, ev, &out, &err);
		fprintf(stderr, "%" PRIu64 " evals, %.1f ns/eval\n", o.repeat,
			(now_ns() - t0) / (double)o.repeat);
	} else {
		double t0 = now_ns();

		rc = cel_eval(prog, vars, n_vars, ev, &out, &err);
		if (o.repeat == 1)
			fprintf(stderr, "1 evals, %.1f ns/eval\n", now_ns() - t0);
	}
	if (rc < 0) {
		fprintf(stderr, "error: %s\n", err.msg);
		rc = CLI_EXIT_FAIL;
		goto out;
	}
	cel_value_print(&sb, &out);
	if (sb_error(&sb)) {
		fprintf(stderr, "error: out of memory\n");
		rc = CLI_EXIT_FAIL;
		goto out;
	}
	printf("%s\n", sb_str(&sb));
	rc = CLI_EXIT_OK;
out:
	sb_free(&sb);
	cel_evaluation_free(ev);
	cel_program_free(prog);
	cel_env_free(env);
	for (size_t i = 0; i < o.lets.n && i < CLI_CEL_MAX_LETS; i++) {
		cel_evaluation_free(lets[i].ev);
		cel_program_free(lets[i].prog);
		cel_env_free(lets[i].env);
	}
	cli_device_free(&dev);
	opts_free(&eval_cmd, &o);
	return rc;
}

int cli_cel(int argc, char **argv)
{
	static const struct opts_sub subs[] = {
		{ "eval", cel_eval_cmd, "compile and evaluate a CEL expression" },
	};
	static const struct opts_prog cel = {
		.prog = "dratopo cel",
		.about = "The CEL of DRA selectors, as the API server and the scheduler run it.",
		.subs = subs, .n_subs = sizeof(subs) / sizeof(subs[0]),
	};

	return opts_dispatch(&cel, argc, argv);
}
