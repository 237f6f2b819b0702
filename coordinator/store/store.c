/* store.c - the store's front: picks the backend from the URI, serializes
 * calls on one handle, and owns the record types' free functions. */
#include <ctype.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "store_backend.h"

struct store {
	const struct store_ops *ops;
	void *impl;
	char *location;
	pthread_mutex_t lock;
};

struct scheme {
	const char *prefix;             /* including the colon */
	store_backend_open_fn open;
	const char *fixed_location;     /* used instead of the rest of the URI */
};

static const struct scheme schemes[] = {
	{ "sqlite:", store_sqlite_open, NULL },
	{ "memory:", store_sqlite_open, ":memory:" },
};

/* "name://..." with a scheme we do not know: refuse it rather than create
 * a file of that name. */
static int looks_like_uri(const char *s)
{
	const char *p = s;

	if (!isalpha((unsigned char)*p))
		return 0;
	while (isalnum((unsigned char)*p) || *p == '+' || *p == '-' || *p == '.')
		p++;
	return strncmp(p, "://", 3) == 0;
}

static int pick_backend(const char *uri, const struct scheme **sch, const char **location,
			struct dt_err *err)
{
	static const struct scheme plain = { "", store_sqlite_open, NULL };

	for (size_t i = 0; i < sizeof(schemes) / sizeof(schemes[0]); i++) {
		size_t n = strlen(schemes[i].prefix);

		if (strncmp(uri, schemes[i].prefix, n) == 0) {
			*sch = &schemes[i];
			*location = schemes[i].fixed_location ? schemes[i].fixed_location
							      : uri + n;
			break;
		}
	}
	if (!*sch) {
		if (looks_like_uri(uri))
			return dt_err_set(err, -EINVAL,
					  "store %s: unknown scheme (known: sqlite:PATH, memory:, or a path)",
					  uri);
		*sch = &plain;
		*location = uri;
	}
	if (!**location)
		return dt_err_set(err, -EINVAL, "store %s: empty path", uri);
	return 0;
}

int store_open(const char *uri, const struct store_opts *opts, struct store **out,
	       struct dt_err *err)
{
	static const struct store_opts defaults = { 0 };
	const struct scheme *sch = NULL;
	const char *location = NULL;
	struct store *s;
	int rc;

	*out = NULL;
	if (!uri)
		return dt_err_set(err, -EINVAL, "store: no database given");
	rc = pick_backend(uri, &sch, &location, err);
	if (rc)
		return rc;
	s = calloc(1, sizeof(*s));
	if (!s || !(s->location = strdup(location))) {
		free(s);
		return dt_err_set(err, -ENOMEM, "store %s: out of memory", uri);
	}
	rc = sch->open(location, opts ? opts : &defaults, &s->ops, &s->impl, err);
	if (rc) {
		free(s->location);
		free(s);
		return rc;
	}
	pthread_mutex_init(&s->lock, NULL);
	*out = s;
	return 0;
}

int store_wrap(const struct store_ops *ops, void *impl, const char *location,
	       struct store **out, struct dt_err *err)
{
	struct store *s = calloc(1, sizeof(*s));

	*out = NULL;
	if (!s || !(s->location = strdup(location ? location : ""))) {
		free(s);
		return dt_err_set(err, -ENOMEM, "store: out of memory");
	}
	s->ops = ops;
	s->impl = impl;
	pthread_mutex_init(&s->lock, NULL);
	*out = s;
	return 0;
}

void store_close(struct store *s)
{
	if (!s)
		return;
	s->ops->close(s->impl);
	pthread_mutex_destroy(&s->lock);
	free(s->location);
	free(s);
}

const char *store_backend(const struct store *s)
{
	return s->ops->name;
}

const char *store_location(const struct store *s)
{
	return s->location;
}

int store_commit(struct store *s, const struct store_batch *batches, size_t n,
		 struct dt_err *err)
{
	int rc;

	if (n == 0)
		return 0;
	pthread_mutex_lock(&s->lock);
	rc = s->ops->commit(s->impl, batches, n, err);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int store_put_node(struct store *s, const struct store_node *node, struct dt_err *err)
{
	struct store_batch b = { .node = node };

	return store_commit(s, &b, 1, err);
}

int store_delete_node(struct store *s, const char *name, struct dt_err *err)
{
	struct store_batch b = { .delete_node = name };

	return store_commit(s, &b, 1, err);
}

int store_put_learned(struct store *s, const struct store_learned *l, struct dt_err *err)
{
	struct store_batch b = { .learned = l };

	return store_commit(s, &b, 1, err);
}

int store_put_conflict(struct store *s, const struct store_conflict *c, struct dt_err *err)
{
	struct store_batch b = { .conflicts = c, .n_conflicts = 1 };

	return store_commit(s, &b, 1, err);
}

int store_clear_conflicts(struct store *s, const char *instance_type, struct dt_err *err)
{
	struct store_batch b = { .clear_conflicts_type = instance_type };

	return store_commit(s, &b, 1, err);
}

int store_get_node(struct store *s, const char *name, struct store_node *out,
		   struct dt_err *err)
{
	int rc;

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&s->lock);
	rc = s->ops->get_node(s->impl, name, out, err);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int store_list_nodes(struct store *s, store_node_fn fn, void *arg, struct dt_err *err)
{
	int rc;

	pthread_mutex_lock(&s->lock);
	rc = s->ops->list_nodes(s->impl, fn, arg, err);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int store_list_learned(struct store *s, store_learned_fn fn, void *arg, struct dt_err *err)
{
	int rc;

	pthread_mutex_lock(&s->lock);
	rc = s->ops->list_learned(s->impl, fn, arg, err);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int store_list_conflicts(struct store *s, store_conflict_fn fn, void *arg,
			 struct dt_err *err)
{
	int rc;

	pthread_mutex_lock(&s->lock);
	rc = s->ops->list_conflicts(s->impl, fn, arg, err);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int store_ready(struct store *s, struct dt_err *err)
{
	int rc;

	if (!s)
		return dt_err_set(err, -ENODEV, "store: not open");
	pthread_mutex_lock(&s->lock);
	rc = s->ops->ready(s->impl, err);
	pthread_mutex_unlock(&s->lock);
	return rc;
}
