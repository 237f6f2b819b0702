/* kube_store.c - an informer's objects by namespace and name: an open
 * addressing table (linear probing, backward-shift deletion) of entries
 * whose strings live in the entry's own allocation. */
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "kube_internal.h"

static uint64_t key_hash(const char *ns, const char *name)
{
	return hash_field(hash_field(HASH_FNV_OFFSET, ns), name);
}

static bool key_eq(const struct kube_entry *e, const char *ns, const char *name)
{
	return !strcmp(e->obj.name, name) && !strcmp(e->obj.ns, ns);
}

struct kube_entry *kube_entry_new(const char *ns, const char *name, const char *uid,
				  const char *rv, const char *json, size_t json_len,
				  const char *problems)
{
	size_t lns = strlen(ns) + 1, lname = strlen(name) + 1;
	size_t luid = strlen(uid ? uid : "") + 1, lrv = strlen(rv ? rv : "") + 1;
	size_t lpr = problems ? strlen(problems) + 1 : 0;
	struct kube_entry *e = malloc(sizeof(*e) + lns + lname + luid + lrv + json_len + 1 + lpr);
	char *p;

	if (!e)
		return NULL;
	memset(e, 0, sizeof(*e));
	p = (char *)(e + 1);
	e->obj.ns = memcpy(p, ns, lns), p += lns;
	e->obj.name = memcpy(p, name, lname), p += lname;
	e->obj.uid = memcpy(p, uid ? uid : "", luid), p += luid;
	e->obj.resource_version = memcpy(p, rv ? rv : "", lrv), p += lrv;
	memcpy(p, json, json_len);
	p[json_len] = '\0';
	e->obj.json = p;
	e->obj.json_len = json_len;
	p += json_len + 1;
	if (problems) {
		e->problems = memcpy(p, problems, lpr);
		e->obj.problems = e->problems;
	} else {
		e->obj.problems = "";
	}
	return e;
}

void kube_entry_free(struct kube_entry *e)
{
	free(e);
}

void kube_store_fini(struct kube_store *st)
{
	for (size_t i = 0; i < st->cap; i++)
		kube_entry_free(st->slots[i]);
	free(st->slots);
	memset(st, 0, sizeof(*st));
}

static size_t find_slot(const struct kube_store *st, const char *ns, const char *name)
{
	size_t mask = st->cap - 1, i = (size_t)key_hash(ns, name) & mask;

	while (st->slots[i] && !key_eq(st->slots[i], ns, name))
		i = (i + 1) & mask;
	return i;
}

struct kube_entry *kube_store_get(const struct kube_store *st, const char *ns, const char *name)
{
	return st->cap ? st->slots[find_slot(st, ns, name)] : NULL;
}

static int grow(struct kube_store *st)
{
	struct kube_store bigger = { 0 };

	bigger.cap = st->cap ? st->cap * 2 : 64;
	bigger.slots = calloc(bigger.cap, sizeof(*bigger.slots));
	if (!bigger.slots)
		return -ENOMEM;
	for (size_t i = 0; i < st->cap; i++) {
		struct kube_entry *e = st->slots[i];

		if (e)
			bigger.slots[find_slot(&bigger, e->obj.ns, e->obj.name)] = e;
	}
	bigger.n = st->n;
	free(st->slots);
	*st = bigger;
	return 0;
}

int kube_store_put(struct kube_store *st, struct kube_entry *e, struct kube_entry **old)
{
	size_t i;

	*old = NULL;
	if ((st->n + 1) * 4 > st->cap * 3 && grow(st))
		return -ENOMEM;
	i = find_slot(st, e->obj.ns, e->obj.name);
	if (st->slots[i])
		*old = st->slots[i];
	else
		st->n++;
	st->slots[i] = e;
	return 0;
}

struct kube_entry *kube_store_take(struct kube_store *st, const char *ns, const char *name)
{
	size_t mask, i, j;
	struct kube_entry *e;

	if (!st->cap)
		return NULL;
	mask = st->cap - 1;
	i = find_slot(st, ns, name);
	e = st->slots[i];
	if (!e)
		return NULL;
	st->slots[i] = NULL;
	st->n--;
	/* Shift back the entries of the run after i that belong before it. */
	for (j = (i + 1) & mask; st->slots[j]; j = (j + 1) & mask) {
		struct kube_entry *m = st->slots[j];
		size_t home = (size_t)key_hash(m->obj.ns, m->obj.name) & mask;

		if (((j - home) & mask) >= ((j - i) & mask)) {
			st->slots[i] = m;
			st->slots[j] = NULL;
			i = j;
		}
	}
	return e;
}

struct kube_entry *kube_store_next(const struct kube_store *st, size_t *i)
{
	while (*i < st->cap) {
		struct kube_entry *e = st->slots[(*i)++];

		if (e)
			return e;
	}
	return NULL;
}
