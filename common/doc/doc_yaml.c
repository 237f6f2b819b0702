/* doc_yaml.c - YAML streams into document trees, through libyaml's event
 * parser.
 *
 * The event parser (not libyaml's document loader) lets us bound what
 * hostile input can cost: nesting is limited to DOC_MAX_DEPTH, and every
 * node counts against DOC_MAX_NODES, an alias counting as the whole
 * subtree it stands for, so a "billion laughs" file fails quickly instead
 * of being expanded. Aliases share the anchored subtree; the tree is read
 * only, so sharing is invisible to readers.
 *
 * Scalars resolve as go-yaml v2 resolves them (doc_scalar.c); map keys are
 * made strings as sigs.k8s.io/yaml makes them; "<<" merge keys are applied
 * (explicit keys win, then earlier merge sources); a repeated key is an
 * error naming both lines. A document that fails keeps its error and the
 * reader moves on to the next document when libyaml can; after a syntax
 * error libyaml cannot, so the rest of the stream is that one failed
 * document.
 *
 * Streams in the common subset of YAML most manifests use come from
 * doc_yaml_fast.c instead of libyaml, as the same events, several times
 * faster; everything else, errors included, is libyaml's. */
#include "doc_impl.h"
#include "hash.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#define TAG_PREFIX "tag:yaml.org,2002:"

struct yframe {
	struct doc_node *node;      /* the sequence or map being built */
	size_t base;                /* where its children start in scratch */
	const char *anchor;         /* arena copy, or NULL */
	size_t size;                /* expanded nodes, itself included */
	int height;                 /* nesting levels, itself included */
	bool merge;                 /* saw a "<<" key */
};

struct yanchor {
	const char *name;           /* arena copy; NULL marks a free slot */
	uint64_t hash;
	struct doc_node *node;
	size_t size;
	int height;
};

struct yctx {
	struct doc_stream *s;
	const char *buf;
	size_t len;
	size_t cur;                 /* index of the open document */
	bool in_doc;
	bool failed;                /* the open document failed: skip to its end */
	struct yframe frames[DOC_MAX_DEPTH];
	int depth;
	struct doc_node **scratch;  /* children of the open collections (owned) */
	size_t n_scratch, cap_scratch;
	struct yanchor *anchors;    /* open-addressing table (owned) */
	size_t n_anchors, cap_anchors;
	size_t total;               /* expanded nodes of the stream so far */
	bool oom;
};

static struct doc_document *cur_doc(struct yctx *c)
{
	return &c->s->docs[c->cur];
}

static void fail_at(struct yctx *c, yaml_mark_t m, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void fail_at(struct yctx *c, yaml_mark_t m, const char *fmt, ...)
{
	char msg[DT_ERR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	doc_doc_fail(c->s, cur_doc(c), (int)m.line + 1, (int)m.column + 1, "%s", msg);
	c->failed = true;
}

static uint64_t hash_str(const char *s)
{
	return hash_fnv1a(HASH_FNV_OFFSET, s, strlen(s));
}

static struct yanchor *anchor_slot(struct yctx *c, const char *name, uint64_t h)
{
	size_t mask = c->cap_anchors - 1;

	for (size_t i = h & mask;; i = (i + 1) & mask) {
		struct yanchor *a = &c->anchors[i];

		if (!a->name || (a->hash == h && strcmp(a->name, name) == 0))
			return a;
	}
}

static int anchor_put(struct yctx *c, const char *name, struct doc_node *n, size_t size,
		      int height)
{
	uint64_t h = hash_str(name);
	struct yanchor *a;

	if ((c->n_anchors + 1) * 2 > c->cap_anchors) {
		struct yanchor *old = c->anchors;
		size_t ocap = c->cap_anchors, ncap = ocap ? ocap * 2 : 64;

		c->anchors = calloc(ncap, sizeof(*c->anchors));
		if (!c->anchors) {
			c->anchors = old;
			return -ENOMEM;
		}
		c->cap_anchors = ncap;
		for (size_t i = 0; i < ocap; i++)
			if (old[i].name)
				*anchor_slot(c, old[i].name, old[i].hash) = old[i];
		free(old);
	}
	a = anchor_slot(c, name, h);
	if (!a->name)
		c->n_anchors++;
	/* Redefining an anchor is allowed; later aliases see the new node. */
	a->name = name;
	a->hash = h;
	a->node = n;
	a->size = size;
	a->height = height;
	return 0;
}

static const struct yanchor *anchor_get(struct yctx *c, const char *name)
{
	const struct yanchor *a;

	if (!c->cap_anchors)
		return NULL;
	a = anchor_slot(c, name, hash_str(name));
	return a->name ? a : NULL;
}

static int scratch_push(struct yctx *c, struct doc_node *n)
{
	if (DT_GROW(c->scratch, c->cap_scratch, c->n_scratch + 1))
		return -ENOMEM;
	c->scratch[c->n_scratch++] = n;
	return 0;
}

/* Counts n expanded nodes against the stream's budget. */
static bool count_nodes(struct yctx *c, size_t n, yaml_mark_t m)
{
	c->total += n;
	if (c->total > DOC_MAX_NODES || n > DOC_MAX_NODES) {
		fail_at(c, m, "document too large: more than %u nodes in the stream "
			"(aliases count as the nodes they repeat)", DOC_MAX_NODES);
		return false;
	}
	return true;
}

static bool expecting_key(struct yctx *c)
{
	const struct yframe *f;

	if (!c->depth)
		return false;
	f = &c->frames[c->depth - 1];
	return f->node->kind == DOC_MAP && (c->n_scratch - f->base) % 2 == 0;
}

/* A map key as sigs.k8s.io/yaml turns it into a JSON object key. */
static struct doc_node *key_node(struct yctx *c, struct doc_node *n, yaml_mark_t m)
{
	char buf[DOC_NUM_BUF];
	struct doc_node *k;

	switch (n->kind) {
	case DOC_STRING:
		return n;
	case DOC_BOOL:
		snprintf(buf, sizeof(buf), "%s", n->u.b ? "true" : "false");
		break;
	case DOC_INT:
		snprintf(buf, sizeof(buf), "%lld", (long long)n->u.i);
		break;
	case DOC_FLOAT:
		doc_fmt_float_yaml(n->u.f, true, buf);
		break;
	case DOC_NULL:
		fail_at(c, m, "invalid map key of type null");
		return NULL;
	default:
		fail_at(c, m, "invalid map key of type %s", doc_kind_name(n->kind));
		return NULL;
	}
	k = doc_node_alloc(c->s->arena, DOC_STRING, n->line, n->col);
	if (!k || !(k->text = doc_arena_strdup(c->s->arena, buf))) {
		c->oom = true;
		return NULL;
	}
	k->text_len = strlen(buf);
	return k;
}

/* Hands a finished node (size expanded nodes, height levels) to whatever
 * is open: the document root or the innermost collection. */
static void add_node(struct yctx *c, struct doc_node *n, size_t size, int height,
		     yaml_mark_t m)
{
	struct yframe *f;

	if (!c->depth) {
		cur_doc(c)->root = n;
		return;
	}
	f = &c->frames[c->depth - 1];
	if (expecting_key(c)) {
		n = key_node(c, n, m);
		if (!n)
			return;
		if (n->text_len == 2 && !n->quoted && memcmp(n->text, "<<", 2) == 0)
			f->merge = true;
	}
	if (scratch_push(c, n) < 0) {
		c->oom = true;
		return;
	}
	f->size += size;
	if (height + 1 > f->height)
		f->height = height + 1;
}

static const char *anchor_copy(struct yctx *c, const yaml_char_t *anchor)
{
	const char *a;

	if (!anchor)
		return NULL;
	a = doc_arena_strdup(c->s->arena, (const char *)anchor);
	if (!a)
		c->oom = true;
	return a;
}

/* ---- Scalars ---- */

static void set_resolved(struct doc_node *n, enum doc_resolved r, const struct doc_scalar_value *v)
{
	switch (r) {
	case DOC_RES_NULL:
		n->kind = DOC_NULL;
		break;
	case DOC_RES_BOOL:
		n->kind = DOC_BOOL;
		n->u.b = v->b;
		break;
	case DOC_RES_INT:
		n->kind = DOC_INT;
		n->u.i = v->i;
		break;
	case DOC_RES_BIGINT:
	case DOC_RES_FLOAT:
		n->kind = DOC_FLOAT;
		n->u.f = v->f;
		break;
	default:
		n->kind = DOC_STRING;
		break;
	}
}

static const char *resolved_tag(enum doc_resolved r)
{
	switch (r) {
	case DOC_RES_NULL:
		return "null";
	case DOC_RES_BOOL:
		return "bool";
	case DOC_RES_INT:
		return "int";
	case DOC_RES_BIGINT:
	case DOC_RES_FLOAT:
		return "float";
	case DOC_RES_TIMESTAMP:
		return "timestamp";
	default:
		return "str";
	}
}

/* An explicitly tagged scalar: !!str and the like are strings whatever
 * they look like; !!int, !!float, !!bool, !!null must read as that type. */
static bool tagged_scalar(struct yctx *c, struct doc_node *n, const char *tag, yaml_mark_t m)
{
	struct doc_scalar_value v;
	enum doc_resolved r;
	const char *want;

	if (strncmp(tag, TAG_PREFIX, strlen(TAG_PREFIX)) != 0) {
		/* "!" forces a string; local tags (!foo) mean nothing to us. */
		n->kind = DOC_STRING;
		n->quoted = n->quoted || strcmp(tag, "!") == 0;
		return true;
	}
	want = tag + strlen(TAG_PREFIX);
	if (strcmp(want, "null") && strcmp(want, "bool") && strcmp(want, "int") &&
	    strcmp(want, "float") && strcmp(want, "merge")) {
		n->kind = DOC_STRING;       /* str, binary, timestamp, unknown */
		n->quoted = true;
		return true;
	}
	r = doc_resolve_plain(n->text, n->text_len, &v);
	if (strcmp(want, "merge") == 0) {
		set_resolved(n, r, &v);
		return true;
	}
	if (strcmp(want, "float") == 0 && r == DOC_RES_INT) {
		v.f = (double)v.i;
		r = DOC_RES_FLOAT;
	}
	if (strcmp(resolved_tag(r), want) != 0) {
		char shown[80];

		dt_quote_buf(shown, sizeof(shown), n->text, n->text_len, DOC_KEY_QUOTING);
		fail_at(c, m, "cannot decode !!%s `%s` as a !!%s", resolved_tag(r), shown, want);
		return false;
	}
	set_resolved(n, r, &v);
	return true;
}

static void on_scalar(struct yctx *c, const yaml_event_t *ev)
{
	const char *tag = (const char *)ev->data.scalar.tag;
	yaml_mark_t m = ev->start_mark;
	struct doc_scalar_value v;
	struct doc_node *n;
	const char *anchor;

	if (!c->depth && ev->data.scalar.length == 0 && !tag && !ev->data.scalar.anchor &&
	    ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE)
		return;     /* an empty document: root stays NULL */
	/* Keys are labels: only values count against the budget. */
	if (!expecting_key(c) && !count_nodes(c, 1, m))
		return;
	n = doc_node_alloc(c->s->arena, DOC_STRING, (int)m.line + 1, (int)m.column + 1);
	if (!n || !(n->text = doc_arena_memdup(c->s->arena, (const char *)ev->data.scalar.value,
						 ev->data.scalar.length))) {
		c->oom = true;
		return;
	}
	n->text_len = ev->data.scalar.length;
	n->quoted = ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE;
	if (tag) {
		if (!tagged_scalar(c, n, tag, m))
			return;
	} else if (!n->quoted) {
		set_resolved(n, doc_resolve_plain(n->text, n->text_len, &v), &v);
	}
	anchor = anchor_copy(c, ev->data.scalar.anchor);
	if (anchor && anchor_put(c, anchor, n, 1, 0) < 0)
		c->oom = true;
	add_node(c, n, 1, 0, m);
}

static void on_alias(struct yctx *c, const yaml_event_t *ev)
{
	const char *name = (const char *)ev->data.alias.anchor;
	yaml_mark_t m = ev->start_mark;
	const struct yanchor *a = anchor_get(c, name);

	if (!a) {
		fail_at(c, m, "unknown anchor '%s' referenced", name);
		return;
	}
	if (expecting_key(c) && (a->node->kind == DOC_MAP || a->node->kind == DOC_SEQ)) {
		fail_at(c, m, "invalid map key of type %s (alias '%s')",
			doc_kind_name(a->node->kind), name);
		return;
	}
	if (c->depth + a->height > DOC_MAX_DEPTH) {
		fail_at(c, m, "alias '%s' nests deeper than %d levels", name, DOC_MAX_DEPTH);
		return;
	}
	if (!count_nodes(c, a->size, m))
		return;
	add_node(c, a->node, a->size, a->height, m);
}

/* ---- Collections ---- */

static void on_start(struct yctx *c, const yaml_event_t *ev, enum doc_kind kind)
{
	yaml_mark_t m = ev->start_mark;
	const yaml_char_t *anchor = kind == DOC_MAP ? ev->data.mapping_start.anchor
						    : ev->data.sequence_start.anchor;
	struct yframe *f;

	if (expecting_key(c)) {
		fail_at(c, m, "invalid map key of type %s", doc_kind_name(kind));
		return;
	}
	if (c->depth >= DOC_MAX_DEPTH) {
		fail_at(c, m, "nesting deeper than %d levels", DOC_MAX_DEPTH);
		return;
	}
	if (!count_nodes(c, 1, m))
		return;
	f = &c->frames[c->depth];
	memset(f, 0, sizeof(*f));
	f->node = doc_node_alloc(c->s->arena, kind, (int)m.line + 1, (int)m.column + 1);
	if (!f->node) {
		c->oom = true;
		return;
	}
	f->base = c->n_scratch;
	f->anchor = anchor_copy(c, anchor);
	f->size = 1;
	f->height = 1;
	c->depth++;
}

/* A small set of key strings, for merging. */
struct keyset {
	const struct doc_node **slots;
	size_t cap;
};

static uint64_t hash_key(const struct doc_node *k)
{
	return hash_fnv1a(HASH_FNV_OFFSET, k->text, k->text_len);
}

/* Adds k; returns 1 when added, 0 when already there. */
static int keyset_add(struct keyset *ks, const struct doc_node *k)
{
	size_t mask = ks->cap - 1;

	for (size_t i = hash_key(k) & mask;; i = (i + 1) & mask) {
		const struct doc_node *o = ks->slots[i];

		if (!o) {
			ks->slots[i] = k;
			return 1;
		}
		if (o->text_len == k->text_len && memcmp(o->text, k->text, k->text_len) == 0)
			return 0;
	}
}

static bool is_merge_key(const struct doc_node *k)
{
	return k->text_len == 2 && !k->quoted && memcmp(k->text, "<<", 2) == 0;
}

/* Reports the first repeated key among pairs, if any. */
static bool check_dups(struct yctx *c, const struct doc_pair *pairs, size_t n)
{
	size_t dup, first;
	int rc = doc_find_dup_key(pairs, n, &dup, &first);
	char shown[128];
	yaml_mark_t m = { 0 };

	if (rc < 0) {
		c->oom = true;
		return false;
	}
	if (rc > 0)
		return true;
	dt_quote_buf(shown, sizeof(shown), pairs[dup].key->text, pairs[dup].key->text_len,
		     DOC_KEY_QUOTING);
	m.line = (size_t)pairs[dup].key->line - 1;
	m.column = (size_t)pairs[dup].key->col - 1;
	fail_at(c, m, "mapping key \"%s\" already defined at line %d", shown,
		pairs[first].key->line);
	return false;
}

/* Applies "<<" keys: the map's own keys first, then each merged map's
 * keys not seen yet, earlier sources first. */
static bool apply_merges(struct yctx *c, struct doc_node *map, struct doc_pair *pairs, size_t n)
{
	struct doc_pair *out;
	size_t n_out = 0, total = 0;
	struct keyset ks = { 0 };
	bool ok = false;

	/* Room for the explicit pairs plus every merged pair. */
	for (size_t i = 0; i < n; i++) {
		const struct doc_node *v = pairs[i].value;

		if (!is_merge_key(pairs[i].key)) {
			total++;
			continue;
		}
		if (v->kind == DOC_MAP) {
			total += v->u.map.n;
			continue;
		}
		if (v->kind == DOC_SEQ) {
			for (size_t j = 0; j < v->u.seq.n; j++) {
				if (v->u.seq.items[j]->kind != DOC_MAP)
					goto bad;
				total += v->u.seq.items[j]->u.map.n;
			}
			continue;
		}
bad:
		{
			yaml_mark_t m = { .line = (size_t)pairs[i].key->line - 1,
					  .column = (size_t)pairs[i].key->col - 1 };

			fail_at(c, m, "map merge requires map or sequence of maps as the value");
			return false;
		}
	}
	out = doc_arena_alloc(c->s->arena, doc_array_cap(total) * sizeof(*out));
	ks.cap = 16;
	while (ks.cap < total * 2)
		ks.cap *= 2;
	ks.slots = calloc(ks.cap, sizeof(*ks.slots));
	if (!out || !ks.slots) {
		c->oom = true;
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		if (!is_merge_key(pairs[i].key)) {
			out[n_out++] = pairs[i];
			keyset_add(&ks, pairs[i].key);
		}
	if (!check_dups(c, out, n_out))
		goto out;
	for (size_t i = 0; i < n; i++) {
		const struct doc_node *v = pairs[i].value;
		size_t n_src = v->kind == DOC_SEQ ? v->u.seq.n : 1;

		if (!is_merge_key(pairs[i].key))
			continue;
		for (size_t j = 0; j < n_src; j++) {
			const struct doc_node *src = v->kind == DOC_SEQ ? v->u.seq.items[j] : v;

			for (size_t k = 0; k < src->u.map.n; k++)
				if (keyset_add(&ks, src->u.map.pairs[k].key))
					out[n_out++] = src->u.map.pairs[k];
		}
	}
	map->u.map.pairs = out;
	map->u.map.n = n_out;
	ok = true;
out:
	free(ks.slots);
	return ok;
}

static void on_end(struct yctx *c, const yaml_event_t *ev)
{
	struct yframe *f = &c->frames[c->depth - 1];
	struct doc_node *node = f->node;
	size_t n = c->n_scratch - f->base;
	struct doc_node **kids = n ? c->scratch + f->base : NULL;

	if (node->kind == DOC_SEQ) {
		node->u.seq.items = doc_arena_alloc(c->s->arena, doc_array_cap(n) * sizeof(*kids));
		if (!node->u.seq.items) {
			c->oom = true;
			return;
		}
		if (n)
			memcpy(node->u.seq.items, kids, n * sizeof(*kids));
		node->u.seq.n = n;
	} else {
		size_t np = n / 2;
		struct doc_pair *pairs = doc_arena_alloc(c->s->arena,
							 doc_array_cap(np) * sizeof(*pairs));

		if (!pairs) {
			c->oom = true;
			return;
		}
		for (size_t i = 0; i < np; i++) {
			pairs[i].key = kids[2 * i];
			pairs[i].value = kids[2 * i + 1];
		}
		if (f->merge) {
			if (!apply_merges(c, node, pairs, np))
				return;
		} else {
			if (!check_dups(c, pairs, np))
				return;
			node->u.map.pairs = pairs;
			node->u.map.n = np;
		}
	}
	c->n_scratch = f->base;
	c->depth--;
	if (f->anchor && anchor_put(c, f->anchor, node, f->size, f->height) < 0) {
		c->oom = true;
		return;
	}
	add_node(c, node, f->size, f->height, ev->start_mark);
}

/* ---- Documents and the stream ---- */

static void doc_begin(struct yctx *c, int line)
{
	struct doc_document *d = doc_stream_add(c->s, line);

	if (!d) {
		c->oom = true;
		return;
	}
	c->cur = c->s->n_docs - 1;
	c->in_doc = true;
	c->failed = false;
	c->depth = 0;
	c->n_scratch = 0;
	/* Anchors belong to one document. A big table is dropped rather than
	 * cleared, so that many small documents after one with thousands of
	 * anchors do not each pay for clearing it. */
	if (c->n_anchors && c->cap_anchors > 256) {
		free(c->anchors);
		c->anchors = NULL;
		c->cap_anchors = 0;
	} else if (c->n_anchors) {
		memset(c->anchors, 0, c->cap_anchors * sizeof(*c->anchors));
	}
	c->n_anchors = 0;
}

static void syntax_error(struct yctx *c, const yaml_parser_t *p)
{
	char msg[DT_ERR_MSG_MAX];
	int line, col;

	if (p->error == YAML_READER_ERROR) {
		/* Reader errors (bad UTF-8, control characters) carry a byte
		 * offset, not a mark. */
		doc_offset_pos(c->buf, c->len, p->problem_offset, &line, &col);
		if (p->problem_value >= 0)
			snprintf(msg, sizeof(msg), "%s (byte 0x%02X)",
				 p->problem ? p->problem : "cannot read input",
				 (unsigned)p->problem_value & 0xFFu);
		else
			snprintf(msg, sizeof(msg), "%s", p->problem ? p->problem : "cannot read input");
	} else {
		line = (int)p->problem_mark.line + 1;
		col = (int)p->problem_mark.column + 1;
		if (p->context)
			snprintf(msg, sizeof(msg), "%s (%s at line %d, column %d)",
				 p->problem ? p->problem : "syntax error", p->context,
				 (int)p->context_mark.line + 1, (int)p->context_mark.column + 1);
		else
			snprintf(msg, sizeof(msg), "%s", p->problem ? p->problem : "syntax error");
	}
	if (!c->in_doc) {
		/* Between documents: the rest of the stream is a failed
		 * document of its own. (Inside a document that already failed,
		 * its first error stands.) */
		doc_begin(c, line);
		if (c->oom)
			return;
	}
	doc_doc_fail(c->s, cur_doc(c), line, col, "%s", msg);
}

/* One event into the tree; true at the end of the stream. */
static bool on_event(struct yctx *c, const yaml_event_t *ev)
{
	switch (ev->type) {
	case YAML_STREAM_END_EVENT:
		return true;
	case YAML_DOCUMENT_START_EVENT:
		doc_begin(c, (int)ev->start_mark.line + 1);
		break;
	case YAML_DOCUMENT_END_EVENT:
		c->in_doc = false;
		break;
	case YAML_SCALAR_EVENT:
		if (!c->failed)
			on_scalar(c, ev);
		break;
	case YAML_ALIAS_EVENT:
		if (!c->failed)
			on_alias(c, ev);
		break;
	case YAML_SEQUENCE_START_EVENT:
		if (!c->failed)
			on_start(c, ev, DOC_SEQ);
		break;
	case YAML_MAPPING_START_EVENT:
		if (!c->failed)
			on_start(c, ev, DOC_MAP);
		break;
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		if (!c->failed)
			on_end(c, ev);
		break;
	default:
		break;
	}
	return false;
}

/* libyaml's events into the tree. */
static void parse_libyaml(struct yctx *c)
{
	yaml_parser_t p;
	yaml_event_t ev;
	bool done = false;

	if (!yaml_parser_initialize(&p)) {
		c->oom = true;
		return;
	}
	yaml_parser_set_input_string(&p, (const unsigned char *)c->buf, c->len);
	while (!done && !c->oom) {
		if (!yaml_parser_parse(&p, &ev)) {
			if (p.error == YAML_MEMORY_ERROR)
				c->oom = true;
			else
				syntax_error(c, &p);
			break;
		}
		done = on_event(c, &ev);
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&p);
}

/* An event of the fast reader into the tree. */
static int take_fast(void *arg, const yaml_event_t *ev)
{
	struct yctx *c = arg;

	on_event(c, ev);
	return c->oom ? -ENOMEM : 0;
}

int doc_parse_yaml_with(const char *buf, size_t len, struct doc_stream *s, struct dt_err *err,
			bool fast)
{
	struct yctx c = { .s = s, .buf = buf, .len = len };
	int rc = fast ? doc_yaml_fast_read(buf, len, take_fast, &c) : 1;

	if (rc < 0)
		c.oom = true;
	if (rc == 1) {
		/* Outside the subset (perhaps after some documents): libyaml
		 * reads the whole stream again, into an empty one. */
		free(c.scratch);
		free(c.anchors);
		c = (struct yctx){ .s = s, .buf = buf, .len = len };
		if (fast && doc_stream_reset(s))
			c.oom = true;
		else
			parse_libyaml(&c);
	}
	rc = 0;
	if (!c.oom && s->n_docs == 0 && !doc_stream_add(s, 1))
		c.oom = true;       /* nothing but comments: one empty document */
	if (c.oom)
		rc = dt_err_set(err, -ENOMEM, "out of memory");
	free(c.scratch);
	free(c.anchors);
	return rc;
}

int doc_parse_yaml(const char *buf, size_t len, struct doc_stream *s, struct dt_err *err)
{
	return doc_parse_yaml_with(buf, len, s, err, true);
}
