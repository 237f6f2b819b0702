/* alloc_lookup.c - finding things by name in a node's view: a device by
 * driver, pool and name (the ctx's device index), a capacity of a device
 * by its qualified name. Used to charge what is allocated already
 * (alloc_state.c) and what a request consumes (alloc_capacity.c). */
#include <stdlib.h>
#include <string.h>

#include "alloc_internal.h"

int64_t alloc_ctx_find_device(const struct alloc_ctx *ctx, const char *driver, const char *pool,
			      const char *device)
{
	size_t a = strlen(driver), b = strlen(pool), c = strlen(device);
	char stack[512], *key = stack;
	uint32_t v;
	bool found;

	if (a + b + c + 3 > sizeof(stack)) {
		key = malloc(a + b + c + 3);
		if (!key)
			return -1;
	}
	memcpy(key, driver, a + 1);
	memcpy(key + a + 1, pool, b + 1);
	memcpy(key + a + b + 2, device, c + 1);
	found = alloc_hash_get(&ctx->dev_index, key, a + b + c + 2, &v);
	if (key != stack)
		free(key);
	return found ? (int64_t)v : -1;
}

int alloc_dev_capacity_index(const struct adev *d, const char *name)
{
	const char *slash = strchr(name, '/');
	const char *driver = d->slice->u.slice.driver;

	for (size_t i = 0; i < d->dev->n_capacity; i++) {
		const struct model_capacity *c = &d->dev->capacity[i];

		if (!c->domain || !c->id)
			continue;
		if (slash) {
			if (strlen(c->domain) == (size_t)(slash - name) &&
			    !memcmp(c->domain, name, (size_t)(slash - name)) && !strcmp(c->id, slash + 1))
				return (int)i;
		} else if (!strcmp(c->domain, driver) && !strcmp(c->id, name)) {
			return (int)i;
		}
	}
	return -1;
}
