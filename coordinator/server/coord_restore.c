/* coord_restore.c - a fleet rebuilt from the store: at start-up, and after a
 * failed commit (the store is the truth). Learned entries first, then every
 * node from its stored report with the verdict and shape its record holds;
 * the reconciler re-verifies against today's hwdb when the restore ends. */
#include <errno.h>
#include <stdlib.h>

#include "coord.h"

struct restore {
	struct rec_fleet *f;
	struct dt_err *err;
	size_t nodes, bad;
};

static int restore_learned(struct store_learned *l, void *arg)
{
	struct restore *r = arg;
	struct rec_learned rl = { l->instance_type, l->shape_key, l->hwdb_text, l->nodes,
				  l->n_nodes, l->learned_ns };

	return rec_fleet_restore_learned(r->f, &rl, r->err);
}

/* A node whose stored report cannot be read back is skipped (and counted):
 * its agent's next report brings it back. Heartbeats update the record's
 * sequence, boot id and agent version but not the blob (same devices), so
 * those come from the record; so does whether the node was ever in drift. */
static int restore_node(struct store_node *n, void *arg)
{
	struct restore *r = arg;
	Dratopo__V1__TopologyReport *msg;
	struct rec_device *devs = NULL;
	struct rec_report rr;
	enum rec_verdict v;
	int rc = -EINVAL;

	msg = dratopo__v1__topology_report__unpack(NULL, n->report_len, n->report);
	if (msg)
		devs = calloc(msg->n_devices + 1, sizeof(*devs));
	if (msg && devs && rec_verdict_parse(n->verdict, &v) == 0 &&
	    coord_report_from_pb(msg, n->last_report_ns, devs, &rr, NULL) == 0) {
		struct rec_stored stored = { v, n->shape_key, n->drifted };

		rr.sequence = n->last_seq;
		rr.boot_id = n->boot_id && *n->boot_id ? n->boot_id : NULL;
		rr.agent_version = n->agent_version && *n->agent_version ? n->agent_version : NULL;
		rc = rec_fleet_restore_node(r->f, &rr, &stored, r->err);
	}
	free(devs);
	if (msg)
		dratopo__v1__topology_report__free_unpacked(msg, NULL);
	if (rc == -ENOMEM)
		return rc;
	if (rc)
		r->bad++;
	else
		r->nodes++;
	return 0;
}

int coord_fleet_load(struct coord *c, struct rec_fleet **out, struct rec_changes *changes,
		     struct dt_err *err)
{
	struct restore r = { rec_fleet_new(&c->rec_opts), err, 0, 0 };
	int rc;

	if (!r.f)
		return dt_err_set(err, -ENOMEM, "out of memory");
	rc = store_list_learned(c->store, restore_learned, &r, err);
	if (!rc)
		rc = store_list_nodes(c->store, restore_node, &r, err);
	if (!rc)
		rc = rec_fleet_restore_done(r.f, changes, err);
	if (rc) {
		rec_fleet_free(r.f);
		return dt_err_prefix(err, "restoring the fleet from %s: ", store_location(c->store));
	}
	*out = r.f;
	return 0;
}

struct rec_fleet *coord_fleet_get(struct coord *c)
{
	pthread_rwlock_rdlock(&c->fleet_lock);
	return c->fleet;
}

void coord_fleet_put(struct coord *c)
{
	pthread_rwlock_unlock(&c->fleet_lock);
}
