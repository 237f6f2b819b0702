/* store_backend.h - what a store backend implements (store.c dispatches to
 * it and serializes the calls; a backend needs no locking of its own).
 *
 * To add a backend: write store_<name>.c with an open function filling a
 * struct store_ops and an impl pointer, and one line in store.c's scheme
 * table. Nothing outside coordinator/store/ changes. */
#ifndef DT_STORE_BACKEND_H
#define DT_STORE_BACKEND_H

#include "store.h"

struct store_ops {
	const char *name;
	int (*commit)(void *impl, const struct store_batch *b, size_t n, struct dt_err *err);
	int (*get_node)(void *impl, const char *name, struct store_node *out,
			struct dt_err *err);
	int (*list_nodes)(void *impl, store_node_fn fn, void *arg, struct dt_err *err);
	int (*list_learned)(void *impl, store_learned_fn fn, void *arg, struct dt_err *err);
	int (*list_conflicts)(void *impl, store_conflict_fn fn, void *arg,
			      struct dt_err *err);
	int (*ready)(void *impl, struct dt_err *err);
	void (*close)(void *impl);
};

/* Open function of a backend: location is the URI without its scheme. */
typedef int (*store_backend_open_fn)(const char *location, const struct store_opts *opts,
				     const struct store_ops **ops, void **impl,
				     struct dt_err *err);

/* A store handle over a backend opened by other means (a test's stub that
 * wraps another backend): location is copied, impl is closed by
 * ops->close at store_close. */
int store_wrap(const struct store_ops *ops, void *impl, const char *location,
	       struct store **out, struct dt_err *err);

/* SQLite (store_sqlite.c): a file path, or ":memory:". */
int store_sqlite_open(const char *location, const struct store_opts *opts,
		      const struct store_ops **ops, void **impl, struct dt_err *err);

#endif
