/* store_records.c - freeing what the store hands out (store_node_done,
 * store_learned_done, store_conflict_done): shared by the store's callers
 * and its backends, which fill the records. */
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "store.h"

void store_node_done(struct store_node *n)
{
	if (!n)
		return;
	free(n->name);
	free(n->instance_type);
	free(n->verdict);
	dt_strv_free(n->differences, n->n_differences);
	free(n->agent_version);
	free(n->boot_id);
	free(n->report);
	free(n->shape_key);
	memset(n, 0, sizeof(*n));
}

void store_learned_done(struct store_learned *l)
{
	if (!l)
		return;
	free(l->instance_type);
	free(l->shape_key);
	free(l->hwdb_text);
	dt_strv_free(l->nodes, l->n_nodes);
	memset(l, 0, sizeof(*l));
}

void store_conflict_done(struct store_conflict *c)
{
	if (!c)
		return;
	free(c->instance_type);
	free(c->shape_key);
	free(c->node);
	memset(c, 0, sizeof(*c));
}
