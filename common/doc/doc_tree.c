/* doc.c - the document tree itself: the arena its nodes live in, streams,
 * reading and building trees, deep copies and structural equality, and
 * the entry points that hand a buffer or a file to the YAML or JSON
 * reader (doc_yaml.c, doc_json.c). */
#include "doc_impl.h"

#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- Arena ---- */

/* Nodes are bump-allocated from big zeroed chunks: a 10 MB manifest makes
 * hundreds of thousands of nodes and per-node malloc would dominate. */
#define ARENA_FIRST_CHUNK  (16u << 10)
#define ARENA_MAX_CHUNK    (1u << 20)
#define ARENA_ALIGN        16u

struct doc_chunk {
	struct doc_chunk *next;
	size_t used, cap;
	_Alignas(16) unsigned char data[];
};

struct doc_arena {
	struct doc_chunk *head;     /* the chunk being filled; owns the list */
	size_t next_cap;            /* size of the next ordinary chunk */
};

struct doc_arena *doc_arena_new(void)
{
	struct doc_arena *a = calloc(1, sizeof(*a));

	if (a)
		a->next_cap = ARENA_FIRST_CHUNK;
	return a;
}

void doc_arena_free(struct doc_arena *a)
{
	struct doc_chunk *c, *next;

	if (!a)
		return;
	for (c = a->head; c; c = next) {
		next = c->next;
		free(c);
	}
	free(a);
}

static struct doc_chunk *chunk_new(size_t cap)
{
	struct doc_chunk *c = calloc(1, sizeof(*c) + cap);

	if (c)
		c->cap = cap;
	return c;
}

void *doc_arena_alloc(struct doc_arena *a, size_t size)
{
	struct doc_chunk *c;
	void *p;

	if (!a || size > ((size_t)1 << 40))
		return NULL;
	size = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
	if (!size)
		size = ARENA_ALIGN;
	c = a->head;
	if (c && c->cap - c->used >= size) {
		p = c->data + c->used;
		c->used += size;
		return p;
	}
	if (size > a->next_cap / 4) {
		/* A big block gets a chunk of its own, kept behind the current
		 * one so the current one's free space is not thrown away. */
		c = chunk_new(size);
		if (!c)
			return NULL;
		c->used = size;
		if (a->head) {
			c->next = a->head->next;
			a->head->next = c;
		} else {
			a->head = c;
		}
		return c->data;
	}
	c = chunk_new(a->next_cap);
	if (!c)
		return NULL;
	if (a->next_cap < ARENA_MAX_CHUNK)
		a->next_cap *= 2;
	c->next = a->head;
	a->head = c;
	c->used = size;
	return c->data;
}

char *doc_arena_memdup(struct doc_arena *a, const char *s, size_t len)
{
	char *p = doc_arena_alloc(a, len + 1);

	if (!p)
		return NULL;
	if (len)
		memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

char *doc_arena_strdup(struct doc_arena *a, const char *s)
{
	return s ? doc_arena_memdup(a, s, strlen(s)) : NULL;
}

size_t doc_array_cap(size_t n)
{
	size_t cap = 4;

	while (cap < n)
		cap *= 2;
	return cap;
}

struct doc_node *doc_node_alloc(struct doc_arena *a, enum doc_kind kind, int line, int col)
{
	struct doc_node *n = doc_arena_alloc(a, sizeof(*n));

	if (n) {
		n->kind = kind;
		n->line = line;
		n->col = col;
	}
	return n;
}

/* ---- Streams ---- */

struct doc_stream *doc_stream_new(const char *filename)
{
	struct doc_stream *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->arena = doc_arena_new();
	if (!s->arena)
		goto fail;
	s->filename = doc_arena_strdup(s->arena, filename ? filename : "-");
	if (!s->filename)
		goto fail;
	return s;
fail:
	doc_stream_free(s);
	return NULL;
}

void doc_stream_free(struct doc_stream *s)
{
	if (!s)
		return;
	free(s->docs);
	doc_arena_free(s->arena);
	free(s);
}

struct doc_document *doc_stream_add(struct doc_stream *s, int line)
{
	struct doc_document *d;

	if (DT_GROW(s->docs, s->cap_docs, s->n_docs + 1))
		return NULL;
	d = &s->docs[s->n_docs++];
	d->root = NULL;
	d->line = line;
	d->error = NULL;
	return d;
}

void doc_doc_fail(struct doc_stream *s, struct doc_document *d, int line, int col,
		  const char *fmt, ...)
{
	char msg[DT_ERR_MSG_MAX];
	char full[DT_ERR_MSG_MAX + 64];
	va_list ap;

	if (d->error)
		return;         /* the first problem of a document is the one told */
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(full, sizeof(full), "line %d, column %d: %s", line, col, msg);
	d->root = NULL;
	d->error = doc_arena_strdup(s->arena, full);
	if (!d->error)
		d->error = (char *)"out of memory";
}

void doc_offset_pos(const char *buf, size_t len, size_t off, int *line, int *col)
{
	int l = 1, c = 1;
	size_t i = 0;

	if (off > len)
		off = len;
	/* A byte-order mark takes no column, as in libyaml's marks. */
	if (off >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0)
		i = 3;
	for (; i < off; i++) {
		unsigned char ch = (unsigned char)buf[i];

		if (ch == '\n') {
			l++;
			c = 1;
		} else if ((ch & 0xC0) != 0x80) {
			c++;
		}
	}
	*line = l;
	*col = c;
}

/* ---- Duplicate keys ---- */

static int key_cmp(const struct doc_node *x, const struct doc_node *y)
{
	size_t n = x->text_len < y->text_len ? x->text_len : y->text_len;
	int c = n ? memcmp(x->text, y->text, n) : 0;

	if (c)
		return c;
	return x->text_len < y->text_len ? -1 : x->text_len > y->text_len;
}

static bool key_eq(const struct doc_node *x, const struct doc_node *y)
{
	return x->text_len == y->text_len &&
	       (x->text_len == 0 || memcmp(x->text, y->text, x->text_len) == 0);
}

static int pair_idx_cmp(const void *a, const void *b, void *ctx)
{
	const struct doc_pair *pairs = ctx;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	int c = key_cmp(pairs[i].key, pairs[j].key);

	if (c)
		return c;
	return i < j ? -1 : i > j;
}

int doc_find_dup_key(const struct doc_pair *pairs, size_t n, size_t *dup, size_t *first)
{
	size_t *idx, best = (size_t)-1, orig = 0;

	if (n <= 16) {
		/* Small maps (most of a manifest): compare every pair. */
		for (size_t i = 1; i < n; i++)
			for (size_t j = 0; j < i; j++)
				if (key_eq(pairs[i].key, pairs[j].key)) {
					*dup = i;
					*first = j;
					return 0;
				}
		return 1;
	}
	idx = malloc(n * sizeof(*idx));
	if (!idx)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		idx[i] = i;
	/* Ordering by (key, index) makes equal keys adjacent, earliest first. */
	qsort_r(idx, n, sizeof(*idx), pair_idx_cmp, (void *)pairs);
	for (size_t i = 1; i < n; i++) {
		if (!key_eq(pairs[idx[i]].key, pairs[idx[i - 1]].key))
			continue;
		/* Report the repeat that comes first in the source. */
		if (idx[i] < best) {
			size_t j = i;

			while (j > 0 && key_eq(pairs[idx[j - 1]].key, pairs[idx[i]].key))
				j--;
			best = idx[i];
			orig = idx[j];
		}
	}
	free(idx);
	if (best == (size_t)-1)
		return 1;
	*dup = best;
	*first = orig;
	return 0;
}

/* ---- Parsing entry points ---- */

static bool looks_like_json(const char *buf, size_t len)
{
	size_t i = 0;

	if (len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0)
		i = 3;
	for (; i < len; i++) {
		char c = buf[i];

		if (c == ' ' || c == '\t' || c == '\r' || c == '\n')
			continue;
		return c == '{' || c == '[';
	}
	return false;
}

static int parse_as(const char *buf, size_t len, enum doc_format fmt, const char *filename,
		    struct doc_stream **out, struct dt_err *err)
{
	struct doc_stream *s = doc_stream_new(filename);
	int rc;

	*out = NULL;
	if (!s)
		return dt_err_set(err, -ENOMEM, "out of memory");
	if (fmt == DOC_FORMAT_JSON)
		rc = doc_parse_json(buf ? buf : "", len, s, err);
	else
		rc = doc_parse_yaml(buf ? buf : "", len, s, err);
	if (rc < 0) {
		doc_stream_free(s);
		return rc;
	}
	*out = s;
	return 0;
}

int doc_parse(const char *buf, size_t len, enum doc_format fmt,
	      const char *filename, struct doc_stream **out, struct dt_err *err)
{
	*out = NULL;
	if (!buf && len)
		return dt_err_set(err, -EINVAL, "no input buffer");
	if (len > DOC_MAX_FILE_SIZE)
		return dt_err_set(err, -EFBIG, "input too large (%zu bytes, limit %u)",
				  len, DOC_MAX_FILE_SIZE);
	/* Input that starts like JSON is read as strict JSON, as kubectl
	 * does: a typo such as {"a": tru} is an error, not YAML's string. */
	if (fmt == DOC_FORMAT_AUTO)
		fmt = looks_like_json(buf, len) ? DOC_FORMAT_JSON : DOC_FORMAT_YAML;
	return parse_as(buf, len, fmt, filename, out, err);
}

/* Reads all of fd into a malloc'd buffer, refusing more than the limit. */
static int read_all(int fd, const char *path, char **bufp, size_t *lenp, struct dt_err *err)
{
	size_t len = 0, cap = 0;
	char *buf = NULL;
	int rc = 0;

	for (;;) {
		ssize_t r;

		/* len stays under the limit (checked below), so cap does too. */
		if (len == cap && DT_GROW(buf, cap, len + (64u << 10))) {
			rc = dt_err_set(err, -ENOMEM, "out of memory reading %s", path);
			goto out;
		}
		r = read(fd, buf + len, cap - len);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			rc = dt_err_set(err, -errno, "cannot read %s: %s", path, strerror(errno));
			goto out;
		}
		if (r == 0)
			break;
		len += (size_t)r;
		if (len > DOC_MAX_FILE_SIZE) {
			rc = dt_err_set(err, -EFBIG, "%s: file too large (limit %u bytes)",
					path, DOC_MAX_FILE_SIZE);
			goto out;
		}
	}
out:
	if (rc < 0) {
		free(buf);
		return rc;
	}
	*bufp = buf;
	*lenp = len;
	return 0;
}

int doc_load_file(const char *path, struct doc_stream **out, struct dt_err *err)
{
	bool is_stdin = path && strcmp(path, "-") == 0;
	char *buf = NULL;
	size_t len = 0;
	int fd, rc;

	*out = NULL;
	if (!path)
		return dt_err_set(err, -EINVAL, "no file name");
	fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return dt_err_set(err, -errno, "cannot read %s: %s", path, strerror(errno));
	rc = read_all(fd, is_stdin ? "standard input" : path, &buf, &len, err);
	if (!is_stdin)
		close(fd);
	if (rc < 0)
		return rc;
	rc = doc_parse(buf, len, DOC_FORMAT_AUTO, path, out, err);
	free(buf);
	if (rc < 0)
		dt_err_prefix(err, "%s: ", path);
	return rc;
}

/* ---- Reading ---- */

const struct doc_node *doc_get(const struct doc_node *map, const char *key)
{
	size_t klen;

	if (!map || map->kind != DOC_MAP || !key)
		return NULL;
	klen = strlen(key);
	for (size_t i = 0; i < map->u.map.n; i++) {
		const struct doc_node *k = map->u.map.pairs[i].key;

		if (k->text_len == klen && memcmp(k->text, key, klen) == 0)
			return map->u.map.pairs[i].value;
	}
	return NULL;
}

const struct doc_node *doc_get_path(const struct doc_node *n, ...)
{
	const char *key;
	va_list ap;

	va_start(ap, n);
	while (n && (key = va_arg(ap, const char *)) != NULL)
		n = doc_get(n, key);
	va_end(ap);
	return n;
}

const char *doc_str(const struct doc_node *n)
{
	return n && n->kind == DOC_STRING ? n->text : NULL;
}

const char *doc_kind_name(enum doc_kind k)
{
	switch (k) {
	case DOC_NULL:
		return "null";
	case DOC_BOOL:
		return "boolean";
	case DOC_INT:
		return "integer";
	case DOC_FLOAT:
		return "number";
	case DOC_STRING:
		return "string";
	case DOC_SEQ:
		return "sequence";
	case DOC_MAP:
		return "map";
	}
	return "unknown";
}

/* ---- Building ---- */

static struct doc_node *new_scalar(struct doc_arena *a, enum doc_kind kind, const char *text)
{
	struct doc_node *n = doc_node_alloc(a, kind, 0, 0);

	if (!n)
		return NULL;
	n->text = doc_arena_strdup(a, text);
	if (!n->text)
		return NULL;
	n->text_len = strlen(text);
	return n;
}

struct doc_node *doc_new_null(struct doc_arena *a)
{
	return new_scalar(a, DOC_NULL, "null");
}

struct doc_node *doc_new_bool(struct doc_arena *a, bool b)
{
	struct doc_node *n = new_scalar(a, DOC_BOOL, b ? "true" : "false");

	if (n)
		n->u.b = b;
	return n;
}

struct doc_node *doc_new_int(struct doc_arena *a, int64_t i)
{
	char buf[32];
	struct doc_node *n;

	snprintf(buf, sizeof(buf), "%lld", (long long)i);
	n = new_scalar(a, DOC_INT, buf);
	if (n)
		n->u.i = i;
	return n;
}

struct doc_node *doc_new_float(struct doc_arena *a, double f)
{
	char buf[DOC_NUM_BUF];
	struct doc_node *n;

	if (doc_fmt_float_json(f, buf) < 0)
		doc_fmt_float_yaml(f, false, buf);
	n = new_scalar(a, DOC_FLOAT, buf);
	if (n)
		n->u.f = f;
	return n;
}

struct doc_node *doc_new_string(struct doc_arena *a, const char *s)
{
	struct doc_node *n = new_scalar(a, DOC_STRING, s ? s : "");

	if (n)
		n->quoted = true;
	return n;
}

struct doc_node *doc_new_seq(struct doc_arena *a)
{
	return doc_node_alloc(a, DOC_SEQ, 0, 0);
}

struct doc_node *doc_new_map(struct doc_arena *a)
{
	return doc_node_alloc(a, DOC_MAP, 0, 0);
}

/* Makes room for one more entry of elem bytes in *arr holding n. */
static int grow(struct doc_arena *a, void **arr, size_t n, size_t elem)
{
	size_t cap = doc_array_cap(n);
	void *p;

	if (*arr && n < cap)
		return 0;
	if (*arr)
		cap *= 2;
	p = doc_arena_alloc(a, cap * elem);
	if (!p)
		return -ENOMEM;
	if (n)
		memcpy(p, *arr, n * elem);
	*arr = p;
	return 0;
}

int doc_seq_push(struct doc_arena *a, struct doc_node *seq, struct doc_node *v)
{
	if (!seq || !v || seq->kind != DOC_SEQ)
		return -ENOMEM;
	if (grow(a, (void **)&seq->u.seq.items, seq->u.seq.n, sizeof(*seq->u.seq.items)) < 0)
		return -ENOMEM;
	seq->u.seq.items[seq->u.seq.n++] = v;
	return 0;
}

int doc_map_set(struct doc_arena *a, struct doc_node *map, const char *key,
		struct doc_node *v)
{
	struct doc_node *k;
	size_t klen;

	if (!map || !v || !key || map->kind != DOC_MAP)
		return -ENOMEM;
	klen = strlen(key);
	for (size_t i = 0; i < map->u.map.n; i++) {
		k = map->u.map.pairs[i].key;
		if (k->text_len == klen && memcmp(k->text, key, klen) == 0) {
			map->u.map.pairs[i].value = v;     /* setting a key again replaces it */
			return 0;
		}
	}
	k = doc_new_string(a, key);
	if (!k)
		return -ENOMEM;
	if (grow(a, (void **)&map->u.map.pairs, map->u.map.n, sizeof(*map->u.map.pairs)) < 0)
		return -ENOMEM;
	map->u.map.pairs[map->u.map.n].key = k;
	map->u.map.pairs[map->u.map.n].value = v;
	map->u.map.n++;
	return 0;
}

/* ---- Copying ---- */

static struct doc_node *clone_rec(struct doc_arena *a, const struct doc_node *n, int depth)
{
	struct doc_node *c;

	if (!n || depth > 4 * DOC_MAX_DEPTH)
		return NULL;
	c = doc_arena_alloc(a, sizeof(*c));
	if (!c)
		return NULL;
	*c = *n;
	if (n->text) {
		c->text = doc_arena_memdup(a, n->text, n->text_len);
		if (!c->text)
			return NULL;
	}
	if (n->kind == DOC_SEQ) {
		size_t cnt = n->u.seq.n;

		c->u.seq.items = cnt ? doc_arena_alloc(a, doc_array_cap(cnt) * sizeof(*c->u.seq.items))
				     : NULL;
		if (cnt && !c->u.seq.items)
			return NULL;
		for (size_t i = 0; i < cnt; i++) {
			c->u.seq.items[i] = clone_rec(a, n->u.seq.items[i], depth + 1);
			if (!c->u.seq.items[i])
				return NULL;
		}
	} else if (n->kind == DOC_MAP) {
		size_t cnt = n->u.map.n;

		c->u.map.pairs = cnt ? doc_arena_alloc(a, doc_array_cap(cnt) * sizeof(*c->u.map.pairs))
				     : NULL;
		if (cnt && !c->u.map.pairs)
			return NULL;
		for (size_t i = 0; i < cnt; i++) {
			c->u.map.pairs[i].key = clone_rec(a, n->u.map.pairs[i].key, depth + 1);
			c->u.map.pairs[i].value = clone_rec(a, n->u.map.pairs[i].value, depth + 1);
			if (!c->u.map.pairs[i].key || !c->u.map.pairs[i].value)
				return NULL;
		}
	}
	return c;
}

struct doc_node *doc_clone(struct doc_arena *a, const struct doc_node *n)
{
	return clone_rec(a, n, 0);
}

/* ---- Equality ---- */

static bool num_equal(const struct doc_node *x, const struct doc_node *y)
{
	if (x->kind == DOC_INT && y->kind == DOC_INT)
		return x->u.i == y->u.i;
	if (x->kind == DOC_FLOAT && y->kind == DOC_FLOAT)
		return x->u.f == y->u.f || (isnan(x->u.f) && isnan(y->u.f));
	if (x->kind == DOC_FLOAT) {
		const struct doc_node *t = x;

		x = y;
		y = t;
	}
	/* x is the integer, y the float: equal when the float is exactly that
	 * integer. Doubles of magnitude 2^63 and above are never an int64. */
	if (!(y->u.f >= -9223372036854775808.0 && y->u.f < 9223372036854775808.0))
		return false;
	return (double)(int64_t)y->u.f == y->u.f && (int64_t)y->u.f == x->u.i;
}

static bool is_num(const struct doc_node *n)
{
	return n->kind == DOC_INT || n->kind == DOC_FLOAT;
}

static bool equal_rec(const struct doc_node *x, const struct doc_node *y, int depth);

static const struct doc_pair *find_pair(const struct doc_node *map, const struct doc_node *key)
{
	for (size_t i = 0; i < map->u.map.n; i++)
		if (key_eq(map->u.map.pairs[i].key, key))
			return &map->u.map.pairs[i];
	return NULL;
}

static int pair_ptr_cmp(const void *a, const void *b)
{
	const struct doc_pair *x = *(const struct doc_pair *const *)a;
	const struct doc_pair *y = *(const struct doc_pair *const *)b;

	return key_cmp(x->key, y->key);
}

/* Big maps compare by sorting both sides' pairs by key. */
static int map_equal_sorted(const struct doc_node *x, const struct doc_node *y, int depth)
{
	size_t n = x->u.map.n;
	const struct doc_pair **px = malloc(2 * n * sizeof(*px)), **py;
	int eq = 1;

	if (!px)
		return -ENOMEM;
	py = px + n;
	for (size_t i = 0; i < n; i++) {
		px[i] = &x->u.map.pairs[i];
		py[i] = &y->u.map.pairs[i];
	}
	qsort(px, n, sizeof(*px), pair_ptr_cmp);
	qsort(py, n, sizeof(*py), pair_ptr_cmp);
	for (size_t i = 0; i < n && eq; i++)
		eq = key_eq(px[i]->key, py[i]->key) &&
		     equal_rec(px[i]->value, py[i]->value, depth + 1);
	free(px);
	return eq;
}

static bool map_equal(const struct doc_node *x, const struct doc_node *y, int depth)
{
	if (x->u.map.n != y->u.map.n)
		return false;
	if (x->u.map.n > 16) {
		int eq = map_equal_sorted(x, y, depth);

		if (eq >= 0)
			return eq;
	}
	for (size_t i = 0; i < x->u.map.n; i++) {
		const struct doc_pair *p = find_pair(y, x->u.map.pairs[i].key);

		if (!p || !equal_rec(x->u.map.pairs[i].value, p->value, depth + 1))
			return false;
	}
	return true;
}

static bool equal_rec(const struct doc_node *x, const struct doc_node *y, int depth)
{
	if (x == y)
		return true;
	if (!x || !y || depth > 4 * DOC_MAX_DEPTH)
		return false;
	if (is_num(x) && is_num(y))
		return num_equal(x, y);
	if (x->kind != y->kind)
		return false;
	switch (x->kind) {
	case DOC_NULL:
		return true;
	case DOC_BOOL:
		return x->u.b == y->u.b;
	case DOC_STRING:
		return key_eq(x, y);
	case DOC_SEQ:
		if (x->u.seq.n != y->u.seq.n)
			return false;
		for (size_t i = 0; i < x->u.seq.n; i++)
			if (!equal_rec(x->u.seq.items[i], y->u.seq.items[i], depth + 1))
				return false;
		return true;
	case DOC_MAP:
		return map_equal(x, y, depth);
	default:
		return false;
	}
}

bool doc_equal(const struct doc_node *x, const struct doc_node *y)
{
	return equal_rec(x, y, 0);
}
