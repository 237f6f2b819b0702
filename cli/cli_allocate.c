/* cli_allocate.c - `dratopo allocate -f FILE... --node NODE [-o yaml|json]`:
 * structured allocation for one node with the scheduler's semantics.
 *
 * Input: DeviceClasses, ResourceSlices, ResourceClaims and optionally
 * Nodes (their labels, for nodeSelector matching; default: a node named
 * NODE without labels) and DeviceTaintRules (their taints join the taints
 * of the devices they select). Claims that have status.allocation count as in
 * use; the others are allocated together, in input order, as one pod's.
 *
 * exit 0: allocated; JSON {"claims": [{"name", "allocation"}]} or YAML
 *         (the claims with status.allocation set).
 * exit 1: invalid input or a fatal allocation error (CEL runtime error,
 *         unknown class, over limits, step budget).
 * exit 2: usage error.
 * exit 3: the claims cannot be allocated on NODE:
 *         {"claims": [], "unallocatable": "reason"}. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "cel.h"
#include "cli.h"
#include "doc.h"
#include "model.h"
#include "opts.h"
#include "strbuf.h"

#define EXIT_UNALLOCATABLE 3

enum output { OUT_JSON, OUT_YAML };

struct opts {
	struct opts_list files;
	const char *node;
	int output;                     /* enum output */
	bool compact;
	uint64_t max_steps;
};

static const struct opt allocate_opts[] = {
	{ .name = "filename", .key = 'f', .type = OPT_LIST, .arg = "FILE",
	  .flags = OPT_GREEDY | OPT_REQUIRED, .at = OPTS_AT(struct opts, files),
	  .help = "manifests to read (repeatable; FILEs may follow one -f;\n"
		  "\"-\" reads standard input)" },
	{ .name = "node", .key = 'n', .type = OPT_STR, .arg = "NODE", .flags = OPT_REQUIRED,
	  .at = OPTS_AT(struct opts, node), .help = "the node to allocate on (required)" },
	{ .name = "output", .key = 'o', .type = OPT_CHOICE, .arg = "FORMAT", .choices = "json|yaml",
	  .at = OPTS_AT(struct opts, output),
	  .help = "json (default) or yaml (the claims with\nstatus.allocation set)" },
	OPTS_COMPACT(struct opts, compact),
	{ .name = "max-steps", .type = OPT_UINT, .arg = "N", .min = 1,
	  .at = OPTS_AT(struct opts, max_steps),
	  .help = "search step budget (default " OPTS_STR(ALLOC_DEFAULT_MAX_STEPS) ")" },
	{ 0 }
};

static const struct opts_cmd allocate_cmd = {
	.prog = "dratopo allocate",
	.synopsis = "dratopo allocate -f FILE... --node NODE [-o yaml|json] [--compact]\n"
		    "                        [--max-steps N]",
	.about = "Allocate the ResourceClaims of the manifests on one node, the way the\n"
		 "Kubernetes scheduler's structured allocator would. Input: DeviceClasses,\n"
		 "ResourceSlices, ResourceClaims and optionally Nodes (labels for nodeSelector\n"
		 "matching) and DeviceTaintRules (taints for the devices they select).\n"
		 "Claims with status.allocation count as in use; the others are allocated\n"
		 "together, in input order, as one pod's claims.",
	.opts = allocate_opts,
	.epilog = "Exit codes: 0 allocated, 1 invalid input or fatal allocation error,\n"
		  "2 usage error, 3 the claims cannot be allocated on NODE.",
	.operand_hint = "manifests follow -f",
};

static int load(const struct opts *o, struct model_set *set)
{
	struct model_validate_opts vo = { cel_selector_check, NULL };
	struct dt_diags errs;
	int rc = 0;

	dt_diags_init(&errs);
	for (size_t i = 0; i < o->files.n; i++) {
		struct dt_err err = { 0 };

		if (model_set_load_file(set, o->files.v[i], &errs, &err) && !errs.n)
			fprintf(stderr, "dratopo allocate: %s\n", err.msg);
	}
	if (!dt_diags_count(&errs) && model_validate_set(set, &vo, &errs) < 0)
		fprintf(stderr, "dratopo allocate: out of memory\n");
	opts_print_diags(stderr, "dratopo allocate", "", "errors", &errs);
	if (dt_diags_count(&errs))
		rc = -EINVAL;
	dt_diags_free(&errs);
	return rc;
}

/* Objects of one kind, in load order. NULL and *n 0 when there are none. */
static const struct model_object **collect(const struct model_set *set, enum model_kind k,
					   size_t *n)
{
	const struct model_object **v;
	const struct model_object *o;

	*n = 0;
	v = calloc(model_set_count(set, k) + 1, sizeof(*v));
	if (!v)
		return NULL;
	for (o = NULL; (o = model_set_next(set, k, o));)
		v[(*n)++] = o;
	return v;
}

/* Nothing to allocate is no error (an empty result), but an input of
 * templates or pods alone is a user expecting plan's expansion here. */
static void warn_nothing_pending(const struct model_set *set, size_t n_claims)
{
	size_t t = model_set_count(set, MODEL_RESOURCE_CLAIM_TEMPLATE);
	size_t p = model_set_count(set, MODEL_POD);

	if (n_claims)
		fprintf(stderr, "warning: nothing to allocate: the input's %zu ResourceClaim%s "
			"already have status.allocation", n_claims, n_claims == 1 ? "" : "s");
	else
		fprintf(stderr, "warning: nothing to allocate: no ResourceClaim in the input");
	fprintf(stderr, "%s\n", t || p ? " (allocate makes no claims from "
		"ResourceClaimTemplates or pods: 'dratopo plan' does)" : "");
}

static void print_unallocatable(const char *reason, bool compact)
{
	struct doc_arena *a = doc_arena_new();
	struct strbuf sb = STRBUF_INIT;
	struct doc_node *root;

	if (a && (root = doc_new_map(a)) &&
	    !doc_map_set(a, root, "claims", doc_new_seq(a)) &&
	    !doc_map_set(a, root, "unallocatable", doc_new_string(a, reason)) &&
	    !doc_emit_json(root, DOC_JSON_OUTPUT(compact), &sb))
		fputs(sb_str(&sb), stdout);
	else
		printf("{\"claims\": [], \"unallocatable\": \"out of memory\"}\n");
	sb_free(&sb);
	doc_arena_free(a);
}

/* A copy of the claim with status.allocation set, in set. */
static struct model_object *allocated_claim(struct model_set *set, const struct model_object *c,
					    const struct alloc_claim_result *r)
{
	struct model_object *o = model_set_add(set, MODEL_RESOURCE_CLAIM);
	struct model_allocation *a;

	if (!o || alloc_result_to_model(r, set, &a))
		return NULL;
	o->src = c->src;
	o->meta = c->meta;
	o->u.claim = c->u.claim;
	o->u.claim.status.allocation = a;
	return o;
}

/* design.md's order of a result's fields ("request", "driver", "pool",
 * "device", then the optional ones); model_encode sorts keys as YAML output
 * wants them. Unknown keys go last, sorted. */
static size_t result_rank(const struct doc_node *key)
{
	static const char *const order[] = {
		"request", "driver", "pool", "device", "adminAccess", "tolerations", "shareID",
		"consumedCapacity", "bindingConditions", "bindingFailureConditions",
	};
	size_t i;

	for (i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		if (key->text && !strcmp(key->text, order[i]))
			break;
	return i;
}

static int result_pair_cmp(const void *pa, const void *pb)
{
	const struct doc_pair *a = pa, *b = pb;
	size_t ra = result_rank(a->key), rb = result_rank(b->key);

	if (ra != rb)
		return ra < rb ? -1 : 1;
	return strcmp(a->key->text ? a->key->text : "", b->key->text ? b->key->text : "");
}

/* alloc is this function's caller's own copy (doc_clone). */
static void order_results(struct doc_node *alloc)
{
	struct doc_node *devices = (struct doc_node *)doc_get(alloc, "devices");
	struct doc_node *results = devices ? (struct doc_node *)doc_get(devices, "results") : NULL;

	if (!results || results->kind != DOC_SEQ)
		return;
	for (size_t i = 0; i < results->u.seq.n; i++) {
		struct doc_node *r = results->u.seq.items[i];

		if (r->kind == DOC_MAP && r->u.map.n > 1)
			qsort(r->u.map.pairs, r->u.map.n, sizeof(*r->u.map.pairs), result_pair_cmp);
	}
}

static int print_result(const struct opts *o, struct model_set *set,
			const struct alloc_outcome *out)
{
	struct strbuf sb = STRBUF_INIT;
	struct doc_arena *a = doc_arena_new();
	struct doc_node *root = NULL, *seq = NULL;
	int rc = -ENOMEM;

	if (!a)
		goto out;
	if (o->output == OUT_JSON) {
		root = doc_new_map(a);
		seq = doc_new_seq(a);
		if (!root || !seq || doc_map_set(a, root, "claims", seq))
			goto out;
	}
	for (size_t i = 0; i < out->n_claims; i++) {
		const struct alloc_claim_result *r = &out->claims[i];
		struct model_object *c = allocated_claim(set, r->claim, &r[0]);
		const struct doc_node *alloc;
		struct doc_node *enc, *item, *copy;
		char name[600];

		if (!c)
			goto out;
		if (o->output == OUT_YAML) {
			if (model_emit(c, DOC_FORMAT_YAML, &sb))
				goto out;
			continue;
		}
		enc = model_encode(c, a);
		alloc = enc ? doc_get_path(enc, "status", "allocation", NULL) : NULL;
		copy = alloc ? doc_clone(a, alloc) : NULL;
		item = doc_new_map(a);
		snprintf(name, sizeof(name), "%s/%s", c->meta.ns ? c->meta.ns : "default",
			 c->meta.name ? c->meta.name : "");
		if (!copy || !item || doc_map_set(a, item, "name", doc_new_string(a, name)) ||
		    doc_map_set(a, item, "allocation", copy) || doc_seq_push(a, seq, item))
			goto out;
		order_results(copy);
	}
	if (o->output == OUT_JSON && doc_emit_json(root, DOC_JSON_OUTPUT(o->compact), &sb))
		goto out;
	rc = opts_write_out("dratopo allocate", &sb) ? -EIO : 0;
out:
	if (rc == -ENOMEM)
		fprintf(stderr, "dratopo allocate: out of memory\n");
	sb_free(&sb);
	doc_arena_free(a);
	return rc;
}

int cli_allocate(int argc, char **argv)
{
	struct opts o = { 0 };
	struct model_set *set = NULL;
	const struct model_object **slices = NULL, **classes = NULL, **claims = NULL;
	const struct model_object **nodes = NULL, **pending = NULL, **rules = NULL;
	size_t n_slices, n_classes, n_claims, n_nodes, n_rules, n_pending = 0;
	struct alloc_options ao = { 0 };
	struct alloc_node node = { 0 };
	struct alloc_ctx *ctx = NULL;
	struct alloc_state *state = NULL;
	struct alloc_outcome out = { 0 };
	struct dt_err err = { 0 };
	int rc, ret = CLI_EXIT_FAIL;

	if (opts_parse(&allocate_cmd, argc, argv, &o, &ret))
		goto out;
	ret = CLI_EXIT_FAIL;
	if (o.compact && o.output != OUT_JSON) {
		ret = opts_usage_error(&allocate_cmd, "--compact goes with -o json");
		goto out;
	}
	set = model_set_new();
	if (!set || load(&o, set))
		goto out;
	slices = collect(set, MODEL_RESOURCE_SLICE, &n_slices);
	classes = collect(set, MODEL_DEVICE_CLASS, &n_classes);
	claims = collect(set, MODEL_RESOURCE_CLAIM, &n_claims);
	nodes = collect(set, MODEL_NODE, &n_nodes);
	rules = collect(set, MODEL_DEVICE_TAINT_RULE, &n_rules);
	pending = calloc(n_claims + 1, sizeof(*pending));
	if (!slices || !classes || !claims || !nodes || !rules || !pending) {
		fprintf(stderr, "dratopo allocate: out of memory\n");
		goto out;
	}
	node.name = o.node;
	for (size_t i = 0; i < n_nodes; i++)
		if (nodes[i]->meta.name && !strcmp(nodes[i]->meta.name, o.node)) {
			node.labels = nodes[i]->meta.labels;
			node.n_labels = nodes[i]->meta.n_labels;
			break;
		}
	ao.max_steps = o.max_steps;
	ao.taint_rules = rules;
	ao.n_taint_rules = n_rules;
	rc = alloc_ctx_new(&node, slices, n_slices, classes, n_classes, &ao, &ctx, &err);
	if (!rc && !(state = alloc_state_new(ctx)))
		rc = dt_err_set(&err, -ENOMEM, "out of memory");
	for (size_t i = 0; !rc && i < n_claims; i++) {
		if (claims[i]->u.claim.status.allocation)
			rc = alloc_state_add_allocation(state, claims[i]->u.claim.status.allocation,
							&err);
		else
			pending[n_pending++] = claims[i];
	}
	if (!rc && !n_pending)
		warn_nothing_pending(set, n_claims);
	if (!rc)
		rc = alloc_try(ctx, state, pending, n_pending, &out, &err);
	if (rc) {
		fprintf(stderr, "dratopo allocate: error: %s\n", err.msg);
		goto out;
	}
	if (!out.allocated) {
		fprintf(stderr, "dratopo allocate: cannot allocate on node %s: %s\n", o.node,
			out.reason);
		print_unallocatable(out.reason, o.compact);
		ret = EXIT_UNALLOCATABLE;
		goto out;
	}
	if (!print_result(&o, set, &out))
		ret = CLI_EXIT_OK;
out:
	alloc_outcome_free(&out);
	alloc_state_free(state);
	alloc_ctx_free(ctx);
	free(slices);
	free(classes);
	free(claims);
	free(nodes);
	free(rules);
	free(pending);
	model_set_free(set);
	opts_free(&allocate_cmd, &o);
	return ret;
}
