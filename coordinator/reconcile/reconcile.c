/* reconcile.c - the fleet: reports reconciled with the effective hwdb,
 * types learned from a quorum of one shape, conflicts, restore. See
 * reconcile.h and docs/reconcile.md. */
#include "reconcile_internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "topo_verify.h"

/* ---- The fleet ---- */

struct rec_fleet *rec_fleet_new(const struct rec_options *opts)
{
	struct rec_fleet *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->quorum = opts && opts->learn_quorum ? opts->learn_quorum : REC_DEFAULT_LEARN_QUORUM;
	f->stale_after_ns = opts && opts->stale_after_ns > 0 ? opts->stale_after_ns
							       : REC_DEFAULT_STALE_AFTER_NS;
	if (pthread_mutex_init(&f->mu, NULL)) {
		free(f);
		return NULL;
	}
	return f;
}

static void node_free(struct fnode *n)
{
	if (!n)
		return;
	free(n->name);
	dt_diags_free(&n->diffs);
	free(n->agent_version);
	free(n->boot_id);
	free(n->pack);
	free(n);
}

static void learned_free(struct flearned *l)
{
	if (!l)
		return;
	hwdb_entry_free(l->src);
	rec_learned_free(&l->rec);
	free(l);
}

static void type_free(struct ftype *t)
{
	while (t->shapes) {
		struct fshape *s = t->shapes;

		t->shapes = s->next;
		free(s->key);
		free(s);
	}
	learned_free(t->learned);
	free(t->name);
	free(t);
}

void rec_fleet_free(struct rec_fleet *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->n_nodes; i++)
		node_free(f->nodes[i]);
	for (size_t i = 0; i < f->n_types; i++)
		type_free(f->types[i]);
	free(f->nodes);
	free(f->types);
	pthread_mutex_destroy(&f->mu);
	free(f);
}

/* Binary search of a name-sorted array of structs whose first member is
 * the name. */
static size_t name_pos(void *const *v, size_t n, const char *name, bool *found)
{
	size_t lo = 0, hi = n;

	*found = false;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(*(char *const *)v[mid], name);

		if (c == 0) {
			*found = true;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Insert item at pos of a pointer array, growing it. */
static int insert_at(void ***v, size_t *n, size_t *cap, size_t pos, void *item)
{
	void *grown = *v;

	if (dt_grow(&grown, cap, *n + 1, sizeof(**v)))
		return -ENOMEM;
	*v = grown;
	memmove(*v + pos + 1, *v + pos, (*n - pos) * sizeof(**v));
	(*v)[pos] = item;
	(*n)++;
	return 0;
}

struct fnode *rec_find_node(const struct rec_fleet *f, const char *name, size_t *pos)
{
	bool found;
	size_t p = name_pos((void *const *)f->nodes, f->n_nodes, name, &found);

	if (pos)
		*pos = p;
	return found ? f->nodes[p] : NULL;
}

struct ftype *rec_find_type(const struct rec_fleet *f, const char *name)
{
	bool found;
	size_t p = name_pos((void *const *)f->types, f->n_types, name, &found);

	return found ? f->types[p] : NULL;
}

static struct ftype *get_type(struct rec_fleet *f, const char *name)
{
	bool found;
	size_t p = name_pos((void *const *)f->types, f->n_types, name, &found);
	struct ftype *t;

	if (found)
		return f->types[p];
	t = calloc(1, sizeof(*t));
	if (!t || !(t->name = strdup(name)) ||
	    insert_at((void ***)&f->types, &f->n_types, &f->cap_types, p, t)) {
		if (t)
			free(t->name);
		free(t);
		return NULL;
	}
	return t;
}

static struct fshape *get_shape(struct ftype *t, const char *key)
{
	struct fshape *s;

	for (s = t->shapes; s; s = s->next)
		if (strcmp(s->key, key) == 0)
			return s;
	s = calloc(1, sizeof(*s));
	if (!s || !(s->key = strdup(key))) {
		free(s);
		return NULL;
	}
	s->next = t->shapes;
	t->shapes = s;
	return s;
}

/* ---- Checking a report ---- */

static bool plain_name(const char *s, size_t max)
{
	size_t n = s ? strlen(s) : 0;

	if (n == 0 || n > max)
		return false;
	for (; *s; s++)
		if (!isgraph((unsigned char)*s))
			return false;
	return true;
}

static bool optional_text(const char *s, size_t max)
{
	return !s || !*s || plain_name(s, max);
}

static int check_report(const struct rec_report *r, struct dt_err *err)
{
	if (!plain_name(r->node_name, 253))
		return dt_err_set(err, -EINVAL, "node name \"%.64s\": must be 1 to 253 printable "
				  "characters without blanks", r->node_name ? r->node_name : "");
	if (!plain_name(r->instance_type, 64))
		return dt_err_set(err, -EINVAL, "node %s: instance type \"%.64s\": must be 1 to 64 "
				  "printable characters without blanks", r->node_name,
				  r->instance_type ? r->instance_type : "");
	if (!optional_text(r->agent_version, 128) || !optional_text(r->boot_id, 128))
		return dt_err_set(err, -EINVAL, "node %s: agent version and boot id must be at "
				  "most 128 printable characters without blanks", r->node_name);
	if (r->cpus < 0 || r->memory_mib < 0)
		return dt_err_set(err, -EINVAL, "node %s: negative CPU count or memory",
				  r->node_name);
	return 0;
}


/* ---- Verdicts ---- */

/* The entry a type's nodes are held to: hwdb's, unless hwdb leaves the
 * type to be learned and the fleet has learned it. */
static const struct hwdb_type *effective(const struct ftype *t, bool *learned)
{
	const struct hwdb_type *e = hwdb_lookup(t->name);

	*learned = t->learned && (!e || hwdb_type_incomplete(e));
	return *learned ? t->learned->entry : e;
}

/* The verdict on topology top for type ty; diffs (initialised) gets the
 * differences. */
static int evaluate(const struct ftype *ty, const struct topo *top,
		    enum rec_verdict *v, struct dt_diags *diffs, struct dt_err *err)
{
	struct topo_verify_result res;
	bool learned;
	const struct hwdb_type *e = effective(ty, &learned);
	int rc;

	if (!e) {
		*v = REC_UNKNOWN;
		return 0;
	}
	rc = topo_verify_entry(top, e, &res, err);
	if (rc)
		return rc;
	*v = res.verdict == TOPO_MATCH ? (learned ? REC_LEARNED : REC_MATCH) : REC_DRIFT;
	dt_diags_free(diffs);
	*diffs = res.differences;       /* moved */
	dt_diags_init(&res.differences);
	topo_verify_result_free(&res);
	return 0;
}

static bool diags_equal(const struct dt_diags *a, const struct dt_diags *b)
{
	if (a->n != b->n || a->dropped != b->dropped)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->msgs[i], b->msgs[i]) != 0)
			return false;
	return true;
}

/* Re-verify node n from its packed devices, as after its type learned an
 * entry. *changed says whether its verdict or differences moved. */
static int reevaluate(struct fnode *n, bool *changed, struct dt_err *err)
{
	struct topo top;
	struct dt_diags diffs;
	enum rec_verdict v;
	int rc;

	rc = rec_pack_topology(n->pack, n->type->name, n->cpus, n->memory_mib, &top, err);
	if (rc)
		return rc;
	dt_diags_init(&diffs);
	rc = evaluate(n->type, &top, &v, &diffs, err);
	topo_free(&top);
	if (rc) {
		dt_diags_free(&diffs);
		return rc;
	}
	*changed = v != n->verdict || !diags_equal(&diffs, &n->diffs);
	n->verdict = v;
	n->drifted |= v == REC_DRIFT;
	dt_diags_free(&n->diffs);
	n->diffs = diffs;
	return 0;
}

/* ---- Learning ---- */

/* Parse a learned entry's source (one entry named type) into l. */
static int learned_parse(const char *type, const char *source, struct flearned *l,
			 struct dt_err *err)
{
	char name[96];
	int rc;

	snprintf(name, sizeof(name), "learned entry of %s", type);
	rc = hwdb_entry_parse(source, type, name, &l->src, err);
	if (rc)
		return rc;
	l->entry = hwdb_entry_type(l->src);
	return 0;
}

/* The source text of an entry learned from top, for the nodes of shape. */
static int learned_source(const struct topo *top, const struct fshape *shape,
			  size_t n_nodes, struct dt_diags *warnings, char **out,
			  struct dt_err *err)
{
	struct topo_learned l;
	const struct hwdb_type *one = &l.type;
	struct strbuf sb = STRBUF_INIT;
	char *note = NULL;
	int rc;

	rc = topo_learn(top, top->instance_type, &l, warnings, err);
	if (rc)
		return rc;
	/* Say who learned it; the rest of the agent's note holds. */
	if (asprintf(&note, "learned by dratopo-coordinator from %zu nodes reporting the shape "
		     "%s: devices, pcieRoot and NUMA as reported; price, network cards and "
		     "bandwidth are not known", n_nodes, shape->key) < 0)
		note = NULL;
	if (note)
		l.notes[0] = note;
	rc = note ? hwdb_file_write_yaml(&one, 1, &sb) : -ENOMEM;
	topo_learned_free(&l);
	free(note);
	if (rc || sb_error(&sb)) {
		sb_free(&sb);
		return dt_err_set(err, -ENOMEM, "out of memory");
	}
	*out = sb_detach(&sb);
	return 0;
}

/* The names of ty's nodes of shape, in name order. */
static int shape_nodes(const struct rec_fleet *f, const struct fshape *shape, char ***out,
		       size_t *n)
{
	*out = calloc(shape->count + 1, sizeof(**out));
	*n = 0;
	if (!*out)
		return -ENOMEM;
	for (size_t i = 0; i < f->n_nodes && *n < shape->count; i++)
		if (f->nodes[i]->shape == shape && !((*out)[(*n)++] = strdup(f->nodes[i]->name)))
			return -ENOMEM;
	return 0;
}

/* Whether type ty may learn an entry now (its quorum aside). */
static bool learnable(const struct rec_fleet *f, const struct ftype *ty)
{
	return !f->restoring && !ty->learned && rec_type_to_learn(ty) &&
	       !rec_type_conflicted(ty);
}

static int append_node(struct rec_changes *c, const struct rec_fleet *f,
		       const struct fnode *n, int64_t now)
{
	if (DT_GROW(c->nodes, c->cap_nodes, c->n_nodes + 1))
		return -ENOMEM;
	return rec_node_view(f, n, now, &c->nodes[c->n_nodes++]);
}

/* Re-verify every node of ty's shape against the new entry, except skip
 * (the reporting node, which the caller handles); changed ones go to c. */
static int settle_shape(struct rec_fleet *f, const struct fshape *shape,
			const struct fnode *skip, int64_t now, struct rec_changes *c,
			struct dt_err *err)
{
	for (size_t i = 0; i < f->n_nodes; i++) {
		struct fnode *n = f->nodes[i];
		bool changed;
		int rc;

		if (n->shape != shape || n == skip)
			continue;
		if ((rc = reevaluate(n, &changed, err)))
			return rc;
		if (changed && (rc = append_node(c, f, n, now)))
			return dt_err_set(err, rc, "out of memory");
	}
	return 0;
}

/* Learn ty's entry from n (whose topology is top) when its shape has the
 * quorum. A type that cannot be learned (no host facts) is a warning, not
 * a failure of the report. */
static int maybe_learn(struct rec_fleet *f, struct ftype *ty, struct fnode *n,
		       const struct topo *top, int64_t now, struct rec_changes *c,
		       struct dt_diags *warnings, struct dt_err *err)
{
	struct dt_err why = { 0 };
	struct flearned *l;
	int rc;

	if (!learnable(f, ty) || n->shape->count < f->quorum)
		return 0;
	/* What hwdb does know holds: only nodes that match it complete it. */
	if (hwdb_lookup(ty->name) && n->verdict != REC_MATCH)
		return 0;
	if (top->cpus <= 0 || top->memory_mib <= 0) {
		dt_diags_add(warnings, "%s: not learned: node %s reported no CPU count or memory",
			     ty->name, n->name);
		return 0;
	}
	l = calloc(1, sizeof(*l));
	if (!l || DT_GROW(c->learned, c->cap_learned, c->n_learned + 1)) {
		free(l);
		return dt_err_set(err, -ENOMEM, "out of memory");
	}
	rc = learned_source(top, n->shape, n->shape->count, warnings, &l->rec.source, &why);
	if (rc == 0)
		rc = learned_parse(ty->name, l->rec.source, l, &why);
	if (rc == 0 && (!(l->rec.type = strdup(ty->name)) ||
			!(l->rec.shape_key = strdup(n->shape->key)) ||
			shape_nodes(f, n->shape, &l->rec.nodes, &l->rec.n_nodes)))
		rc = dt_err_set(&why, -ENOMEM, "out of memory");
	if (rc) {
		/* Our own entry failing to load back is a bug, not the node's
		 * fault: say so and leave the type unknown. */
		learned_free(l);
		if (rc == -ENOMEM)
			return dt_err_set(err, rc, "%s", why.msg);
		dt_diags_add(warnings, "%s: not learned: %s", ty->name, why.msg);
		return 0;
	}
	l->rec.learned_ns = now;
	ty->learned = l;
	if ((rc = rec_learned_copy(&l->rec, &c->learned[c->n_learned])))
		return dt_err_set(err, rc, "out of memory");
	c->n_learned++;
	return settle_shape(f, n->shape, n, now, c, err);
}

/* ---- Conflicts ---- */

static int append_conflict(struct rec_changes *c, const struct rec_fleet *f,
			   const struct ftype *t)
{
	if (DT_GROW(c->conflicts, c->cap_conflicts, c->n_conflicts + 1))
		return -ENOMEM;
	return rec_conflict_view(f, t, &c->conflicts[c->n_conflicts++]);
}

/* ---- Placing a node ---- */

/* Move n to shape key of type ty (counts follow). */
static int place(struct rec_fleet *f, struct fnode *n, const char *type, const char *key)
{
	struct ftype *ty = get_type(f, type);
	struct fshape *s = ty ? get_shape(ty, key) : NULL;

	if (!s)
		return -ENOMEM;
	if (n->shape) {
		n->shape->count--;
		n->type->n_nodes--;
	}
	n->type = ty;
	n->shape = s;
	s->count++;
	ty->n_nodes++;
	return 0;
}

static int set_text(char **dst, const char *src)
{
	char *s = strdup(src ? src : "");

	if (!s)
		return -ENOMEM;
	free(*dst);
	*dst = s;
	return 0;
}

/* The report's bookkeeping fields into n. */
static int take_meta(struct fnode *n, const struct rec_report *r)
{
	if (set_text(&n->agent_version, r->agent_version) || set_text(&n->boot_id, r->boot_id))
		return -ENOMEM;
	n->sequence = r->sequence;
	n->probed_ns = r->probed_ns;
	n->received_ns = r->received_ns;
	n->cpus = r->cpus;
	n->memory_mib = r->memory_mib;
	return 0;
}

static struct fnode *new_node(struct rec_fleet *f, const char *name, size_t pos)
{
	struct fnode *n = calloc(1, sizeof(*n));

	if (!n || !(n->name = strdup(name)) ||
	    insert_at((void ***)&f->nodes, &f->n_nodes, &f->cap_nodes, pos, n)) {
		if (n)
			free(n->name);
		free(n);
		return NULL;
	}
	dt_diags_init(&n->diffs);
	return n;
}

/* The conflict state of the types a move touches, before it. */
struct touched {
	struct ftype *old_type, *new_type;
	bool old_conflicted, new_conflicted;
};

static void touched_before(struct rec_fleet *f, const struct fnode *n, const char *type,
			   struct touched *t)
{
	t->old_type = n->type;
	t->old_conflicted = n->type && rec_type_conflicted(n->type);
	t->new_type = rec_find_type(f, type);
	t->new_conflicted = t->new_type && rec_type_conflicted(t->new_type);
}

/* Every touched type whose conflict appeared, changed or ended. */
static int touched_after(struct rec_fleet *f, const struct touched *t, struct rec_changes *c)
{
	int rc = 0;

	if (t->old_type && t->old_type != t->new_type &&
	    (t->old_conflicted || rec_type_conflicted(t->old_type)))
		rc = append_conflict(c, f, t->old_type);
	if (!rc && (t->new_conflicted || rec_type_conflicted(t->new_type)))
		rc = append_conflict(c, f, t->new_type);
	return rc;
}

static uint16_t live_count(const struct topo *t, enum topo_kind kind)
{
	uint16_t n = 0;

	for (size_t i = 0; i < t->n_devices; i++)
		n += t->devices[i].kind == kind && !t->devices[i].fell_off_bus;
	return n;
}

/* Take n out of the fleet (a new node whose first report failed). */
static void drop_node(struct rec_fleet *f, struct fnode *n)
{
	size_t pos;

	if (n->shape) {
		n->shape->count--;
		n->type->n_nodes--;
	}
	if (rec_find_node(f, n->name, &pos) == n) {
		memmove(f->nodes + pos, f->nodes + pos + 1, (f->n_nodes - pos - 1) * sizeof(n));
		f->n_nodes--;
	}
	node_free(n);
}

/* A node for report r: the known one, or a new one. */
static int node_for(struct rec_fleet *f, const char *name, struct fnode **out,
		    struct dt_err *err)
{
	size_t pos;

	*out = rec_find_node(f, name, &pos);
	if (!*out && !(*out = new_node(f, name, pos)))
		return dt_err_set(err, -ENOMEM, "out of memory");
	return 0;
}

/* The full path: n (new, or with other devices or type) takes report r,
 * whose devices are pack (taken over). */
static int reconcile(struct rec_fleet *f, struct fnode *n, const struct rec_report *r,
		     struct rec_pack *pack, struct rec_outcome *out, struct dt_err *err)
{
	struct topo top;
	struct strbuf key = STRBUF_INIT;
	struct dt_diags diffs;
	struct touched tt;
	struct fshape *old_shape = n->shape;
	enum rec_verdict old_verdict = n->verdict, v;
	int rc;

	dt_diags_init(&diffs);
	rc = rec_pack_topology(pack, r->instance_type, r->cpus, r->memory_mib, &top, err);
	if (rc) {
		free(pack);
		return rc;
	}
	if (topo_shape_key(&top, &key)) {
		rc = dt_err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	touched_before(f, n, r->instance_type, &tt);
	if ((rc = place(f, n, r->instance_type, sb_str(&key)))) {
		rc = dt_err_set(err, rc, "out of memory");
		goto out;
	}
	tt.new_type = n->type;
	if ((rc = evaluate(n->type, &top, &v, &diffs, err)))
		goto out;
	out->changed = !old_shape || old_shape != n->shape || v != old_verdict ||
		       !diags_equal(&diffs, &n->diffs);
	n->verdict = v;
	n->drifted |= v == REC_DRIFT;
	dt_diags_free(&n->diffs);
	n->diffs = diffs;
	dt_diags_init(&diffs);
	free(n->pack);
	n->pack = pack;
	pack = NULL;
	n->gpus = live_count(&top, TOPO_GPU);
	n->efas = live_count(&top, TOPO_EFA);
	if ((rc = take_meta(n, r))) {
		rc = dt_err_set(err, rc, "out of memory");
		goto out;
	}
	if (old_shape != n->shape && (rc = touched_after(f, &tt, &out->also))) {
		rc = dt_err_set(err, rc, "out of memory");
		goto out;
	}
	rc = maybe_learn(f, n->type, n, &top, r->received_ns, &out->also, &out->warnings, err);
	if (rc == 0 && out->also.n_learned) {
		bool changed;

		/* n itself is held to the new entry too. */
		rc = reevaluate(n, &changed, err);
		out->changed |= changed;
	}
out:
	free(pack);
	dt_diags_free(&diffs);
	sb_free(&key);
	topo_free(&top);
	return rc;
}

static void outcome_init(struct rec_outcome *o)
{
	memset(o, 0, sizeof(*o));
	dt_diags_init(&o->node.differences);
	dt_diags_init(&o->warnings);
}

/* r as a replay or a heartbeat of n, if it is one: 1, or 0 when it takes
 * the full path. pack is r's devices packed, or NULL when not packed yet. */
static int replay_or_heartbeat(struct fnode *n, const struct rec_report *r,
			       const struct rec_pack *pack, struct rec_outcome *out,
			       struct dt_err *err)
{
	if (!n)
		return 0;
	if (n->sequence >= r->sequence && strcmp(n->boot_id, r->boot_id ? r->boot_id : "") == 0) {
		out->replay = true;
		return 1;
	}
	if (strcmp(n->type->name, r->instance_type) != 0 ||
	    !(pack ? rec_pack_equal(n->pack, pack) : rec_pack_matches(n->pack, r)))
		return 0;
	/* A heartbeat: same devices, so the same verdict. */
	out->heartbeat = n->cpus == r->cpus && n->memory_mib == r->memory_mib;
	return take_meta(n, r) ? dt_err_set(err, -ENOMEM, "out of memory") : 1;
}

/* Under f->mu: r into the fleet. pack (taken over) is NULL on the first
 * try, which handles only replays and heartbeats: -EAGAIN asks the caller
 * to pack r's devices, outside the lock, and to come again. */
static int report_locked(struct rec_fleet *f, const struct rec_report *r,
			 struct rec_pack *pack, struct rec_outcome *out, struct dt_err *err)
{
	struct fnode *n;
	int rc;

	if (f->restoring) {
		free(pack);
		return dt_err_set(err, -EBUSY, "the coordinator is restoring its state");
	}
	n = rec_find_node(f, r->node_name, NULL);
	rc = replay_or_heartbeat(n, r, pack, out, err);
	if (rc == 0 && !pack)
		return -EAGAIN;
	if (rc == 0 && (rc = node_for(f, r->node_name, &n, err)) == 0) {
		rc = reconcile(f, n, r, pack, out, err);
		pack = NULL;
		if (rc && !n->pack)
			drop_node(f, n);
	} else if (rc > 0) {
		rc = 0;
	}
	free(pack);
	if (rc == 0 && (rc = rec_node_view(f, n, r->received_ns, &out->node)))
		rc = dt_err_set(err, rc, "out of memory");
	return rc;
}

int rec_report(struct rec_fleet *f, const struct rec_report *r, struct rec_outcome *out,
	       struct dt_err *err)
{
	struct rec_pack *pack = NULL;
	int rc;

	outcome_init(out);
	/* A live report must name a Node (a restore keeps check_report's
	 * looser rule, so that a name an older coordinator took never stops a
	 * restart). */
	if ((rc = check_report(r, err)) ||
	    (rc = topo_node_name_check("node name", r->node_name, err)))
		return rc;
	/* Most reports are heartbeats: recognised against the node's packed
	 * devices first, so that only a changed report pays for packing. */
	pthread_mutex_lock(&f->mu);
	rc = report_locked(f, r, NULL, out, err);
	pthread_mutex_unlock(&f->mu);
	if (rc == -EAGAIN) {
		if ((rc = rec_pack_devices(r, &pack, err)))
			return rc;
		pthread_mutex_lock(&f->mu);
		rc = report_locked(f, r, pack, out, err);
		pthread_mutex_unlock(&f->mu);
	}
	if (rc)
		rec_outcome_free(out);
	return rc;
}

/* ---- Forgetting ---- */

int rec_fleet_forget(struct rec_fleet *f, const char *name, struct rec_changes *out,
		     struct dt_err *err)
{
	struct touched t = { 0 };
	struct fnode *n;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&f->mu);
	if (f->restoring) {
		rc = dt_err_set(err, -EBUSY, "the fleet is being restored");
		goto out;
	}
	n = rec_find_node(f, name, NULL);
	if (!n) {
		rc = dt_err_set(err, -ENOENT, "no node %s in the fleet", name);
		goto out;
	}
	/* Its type's conflict may change or end without it. */
	t.old_type = n->type;
	t.old_conflicted = n->type && rec_type_conflicted(n->type);
	drop_node(f, n);
	if (t.old_type && (t.old_conflicted || rec_type_conflicted(t.old_type)) &&
	    append_conflict(out, f, t.old_type))
		rc = dt_err_set(err, -ENOMEM, "out of memory");
out:
	pthread_mutex_unlock(&f->mu);
	if (rc)
		rec_changes_free(out);
	return rc;
}

int rec_fleet_silent(struct rec_fleet *f, int64_t now, int64_t silent_ns, char ***names,
		     size_t *n, struct dt_err *err)
{
	size_t cap = 0;
	int rc = 0;

	*names = NULL;
	*n = 0;
	pthread_mutex_lock(&f->mu);
	for (size_t i = 0; i < f->n_nodes && !rc; i++) {
		if (now - f->nodes[i]->received_ns <= silent_ns)
			continue;
		if (DT_GROW(*names, cap, *n + 1) || !((*names)[*n] = strdup(f->nodes[i]->name))) {
			rc = -ENOMEM;
			break;
		}
		(*n)++;
	}
	pthread_mutex_unlock(&f->mu);
	if (rc) {
		for (size_t i = 0; i < *n; i++)
			free((*names)[i]);
		free(*names);
		*names = NULL;
		*n = 0;
		return dt_err_set(err, rc, "out of memory");
	}
	return 0;
}

/* ---- Restore ---- */

int rec_fleet_restore_learned(struct rec_fleet *f, const struct rec_learned *l,
			      struct dt_err *err)
{
	struct flearned *fl = NULL;
	struct ftype *ty;
	int rc;

	if (!l->type || !l->source)
		return dt_err_set(err, -EINVAL, "learned entry without a type or source");
	pthread_mutex_lock(&f->mu);
	f->restoring = true;
	ty = get_type(f, l->type);
	fl = calloc(1, sizeof(*fl));
	if (!ty || !fl) {
		rc = dt_err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	if (ty->learned) {
		rc = dt_err_set(err, -EEXIST, "%s: learned twice", l->type);
		goto out;
	}
	if ((rc = learned_parse(l->type, l->source, fl, err)))
		goto out;
	if ((rc = rec_learned_copy(l, &fl->rec))) {
		rc = dt_err_set(err, rc, "out of memory");
		goto out;
	}
	ty->learned = fl;
	fl = NULL;
out:
	pthread_mutex_unlock(&f->mu);
	learned_free(fl);
	return rc;
}

int rec_fleet_restore_node(struct rec_fleet *f, const struct rec_report *last,
			   const struct rec_stored *stored, struct dt_err *err)
{
	struct rec_pack *pack = NULL;
	struct rec_outcome o;
	struct fnode *n = NULL;
	int rc;

	outcome_init(&o);
	if ((rc = check_report(last, err)) || (rc = rec_pack_devices(last, &pack, err)))
		return rc;
	pthread_mutex_lock(&f->mu);
	f->restoring = true;
	if (rec_find_node(f, last->node_name, NULL)) {
		free(pack);
		rc = dt_err_set(err, -EEXIST, "node %s: restored twice", last->node_name);
	} else if ((rc = node_for(f, last->node_name, &n, err)) == 0) {
		rc = reconcile(f, n, last, pack, &o, err);
		if (rc && !n->pack)
			drop_node(f, n);
	} else {
		free(pack);
	}
	if (rc == 0) {
		n->stored_verdict = stored->verdict;
		n->stored_key_differs = !stored->shape_key ||
					strcmp(stored->shape_key, n->shape->key) != 0;
		n->drifted |= stored->drifted;
	}
	pthread_mutex_unlock(&f->mu);
	rec_outcome_free(&o);
	return rc;
}

int rec_fleet_restore_done(struct rec_fleet *f, struct rec_changes *changes,
			   struct dt_err *err)
{
	struct rec_changes c = { 0 };
	struct dt_diags warnings;
	int rc = 0;

	dt_diags_init(&warnings);
	pthread_mutex_lock(&f->mu);
	f->restoring = false;
	/* Learn what the records did not (a quorum lowered since): the first
	 * node of each shape in name order teaches it. */
	for (size_t i = 0; i < f->n_nodes && !rc; i++) {
		struct fnode *n = f->nodes[i];
		struct topo top;

		if (!learnable(f, n->type) || n->shape->count < f->quorum)
			continue;
		if ((rc = rec_pack_topology(n->pack, n->type->name, n->cpus, n->memory_mib, &top,
					    err)))
			break;
		rc = maybe_learn(f, n->type, n, &top, n->received_ns, &c, &warnings, err);
		topo_free(&top);
		if (rc == 0 && n->type->learned) {
			bool changed;

			rc = reevaluate(n, &changed, err);
		}
	}
	/* The settled nodes maybe_learn listed are rebuilt below from the
	 * records' point of view. */
	for (size_t i = 0; i < c.n_nodes; i++)
		rec_node_free(&c.nodes[i]);
	c.n_nodes = 0;
	for (size_t i = 0; i < f->n_nodes && !rc; i++) {
		struct fnode *n = f->nodes[i];

		if (n->verdict != n->stored_verdict || n->stored_key_differs)
			rc = append_node(&c, f, n, n->received_ns);
	}
	for (size_t i = 0; i < f->n_types && !rc; i++)
		if (rec_type_conflicted(f->types[i]))
			rc = append_conflict(&c, f, f->types[i]);
	pthread_mutex_unlock(&f->mu);
	dt_diags_free(&warnings);
	if (rc) {
		rec_changes_free(&c);
		return err && err->code ? rc : dt_err_set(err, rc, "out of memory");
	}
	if (changes)
		*changes = c;
	else
		rec_changes_free(&c);
	return 0;
}
