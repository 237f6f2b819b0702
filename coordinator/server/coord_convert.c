/* coord_convert.c - between the wire (dratopo.v1 messages), the reconciler's
 * records and the store's records. Nothing here owns memory it did not
 * allocate: conversions borrow strings from their source. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coord.h"

int64_t coord_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static const char *opt(const char *s)
{
	return s && *s ? s : NULL;
}

static int device_from_pb(const Dratopo__V1__Device *d, size_t i, struct rec_device *out,
			  struct dt_err *err)
{
	if (d->kind != DRATOPO__V1__DEVICE_KIND__DEVICE_KIND_GPU &&
	    d->kind != DRATOPO__V1__DEVICE_KIND__DEVICE_KIND_EFA)
		return dt_err_set(err, -EINVAL, "devices[%zu] (%s): kind must be GPU or EFA", i,
				  d->bdf);
	if (d->vendor > 0xffff || d->device > 0xffff || d->subsystem_vendor > 0xffff ||
	    d->subsystem_device > 0xffff)
		return dt_err_set(err, -EINVAL, "devices[%zu] (%s): a PCI id is over 0xffff", i,
				  d->bdf);
	*out = (struct rec_device){
		.bdf = d->bdf,
		.kind = d->kind == DRATOPO__V1__DEVICE_KIND__DEVICE_KIND_GPU ? TOPO_GPU : TOPO_EFA,
		.vendor = d->vendor,
		.device = d->device,
		.subsystem_vendor = d->subsystem_vendor,
		.subsystem_device = d->subsystem_device,
		.pcie_root = opt(d->pcie_root),
		.numa_node = d->numa_case == DRATOPO__V1__DEVICE__NUMA_NUMA_NODE ? d->numa_node : -1,
		.link_speed = opt(d->link_speed),
		.link_width = d->link_width,
		.rdma_device = opt(d->rdma_device),
		.fell_off_bus = d->fell_off_bus,
	};
	return 0;
}

int coord_report_from_pb(const Dratopo__V1__TopologyReport *msg, int64_t received_ns,
			 struct rec_device *devs, struct rec_report *out, struct dt_err *err)
{
	if (msg->n_devices > REC_MAX_DEVICES)
		return dt_err_set(err, -EINVAL, "devices: %zu, at most %d", msg->n_devices,
				  REC_MAX_DEVICES);
	for (size_t i = 0; i < msg->n_devices; i++) {
		int rc = device_from_pb(msg->devices[i], i, &devs[i], err);

		if (rc)
			return rc;
	}
	if (msg->host_cpus < 0 || msg->host_memory_mib < 0)
		return dt_err_set(err, -EINVAL, "host_cpus and host_memory_mib must not be negative");
	*out = (struct rec_report){
		.node_name = msg->node_name,
		.instance_type = msg->instance_type,
		.devices = devs,
		.n_devices = msg->n_devices,
		.cpus = msg->host_cpus,
		.memory_mib = msg->host_memory_mib,
		.agent_version = opt(msg->agent_version),
		.boot_id = opt(msg->boot_id),
		.sequence = msg->sequence,
		.probed_ns = msg->probed_unix_nanos,
		.received_ns = received_ns,
	};
	return 0;
}

int coord_report_pack(const Dratopo__V1__TopologyReport *msg, uint8_t **out, size_t *len)
{
	Dratopo__V1__TopologyReport copy = *msg;

	/* Only the fields this coordinator knows: an older agent's field 12
	 * (its predicted slices, ~15 KB) or a newer one's additions would
	 * otherwise be stored and carried in memory with every node. */
	copy.base.n_unknown_fields = 0;
	copy.base.unknown_fields = NULL;
	*len = protobuf_c_message_get_packed_size(&copy.base);
	*out = malloc(*len ? *len : 1);
	if (!*out)
		return -ENOMEM;
	protobuf_c_message_pack(&copy.base, *out);
	return 0;
}

Dratopo__V1__Verdict coord_verdict_pb(enum rec_verdict v)
{
	switch (v) {
	case REC_MATCH:
		return DRATOPO__V1__VERDICT__VERDICT_MATCH;
	case REC_DRIFT:
		return DRATOPO__V1__VERDICT__VERDICT_DRIFT;
	case REC_UNKNOWN:
		return DRATOPO__V1__VERDICT__VERDICT_UNKNOWN_TYPE;
	case REC_LEARNED:
		return DRATOPO__V1__VERDICT__VERDICT_LEARNED;
	}
	return DRATOPO__V1__VERDICT__VERDICT_UNSPECIFIED;
}

void coord_node_pb(const struct rec_node *n, Dratopo__V1__Node *out)
{
	dratopo__v1__node__init(out);
	out->name = n->name;
	out->instance_type = n->instance_type;
	out->verdict = coord_verdict_pb(n->verdict);
	out->n_differences = n->differences.n;
	out->differences = n->differences.msgs;
	out->last_report_unix_nanos = n->received_ns;
	out->gpus = (uint32_t)n->gpus;
	out->efas = (uint32_t)n->efas;
	out->plannable = n->plannable;
	out->why = n->why ? n->why : (char *)"";
}

static Dratopo__V1__HwdbSource source_pb(enum rec_entry_source s)
{
	switch (s) {
	case REC_SOURCE_HWDB:
	case REC_SOURCE_EXTRA:
		return DRATOPO__V1__HWDB_SOURCE__HWDB_SOURCE_KNOWN;
	case REC_SOURCE_LEARNED:
		return DRATOPO__V1__HWDB_SOURCE__HWDB_SOURCE_LEARNED;
	default:
		return DRATOPO__V1__HWDB_SOURCE__HWDB_SOURCE_UNKNOWN;
	}
}

void coord_type_pb(const struct rec_type_summary *t, Dratopo__V1__TypeSummary *out)
{
	dratopo__v1__type_summary__init(out);
	out->instance_type = t->type;
	out->nodes = (uint32_t)t->nodes;
	out->matching = (uint32_t)(t->by_verdict[REC_MATCH] + t->by_verdict[REC_LEARNED]);
	out->drifting = (uint32_t)t->by_verdict[REC_DRIFT];
	out->common_shape = t->common_shape ? t->common_shape : (char *)"";
	out->common_shape_nodes = (uint32_t)t->common_count;
	out->hwdb = source_pb(t->source);
	out->conflict = t->conflicted;
	out->hwdb_suspect = t->hwdb_suspect;
	out->plannable = (uint32_t)t->plannable;
	out->stale = (uint32_t)t->stale;
	out->unknown = (uint32_t)t->by_verdict[REC_UNKNOWN];
}

void coord_node_record(const struct rec_node *n, const uint8_t *blob, size_t blob_len,
		       struct store_node *out)
{
	*out = (struct store_node){
		.name = n->name,
		.instance_type = n->instance_type,
		.verdict = (char *)rec_verdict_name(n->verdict),
		.differences = n->differences.msgs,
		.n_differences = n->differences.n,
		.agent_version = n->agent_version,
		.boot_id = n->boot_id,
		.last_seq = n->sequence,
		.first_seen_ns = n->received_ns,
		.last_report_ns = n->received_ns,
		.report = (uint8_t *)blob,
		.report_len = blob_len,
		.gpus = (uint32_t)n->gpus,
		.efas = (uint32_t)n->efas,
		.shape_key = n->shape_key,
		.drifted = n->drifted,
	};
}

int coord_report_pack_rec(const struct rec_report *r, uint8_t **out, size_t *len)
{
	Dratopo__V1__TopologyReport msg;
	Dratopo__V1__Device *devs = calloc(r->n_devices + 1, sizeof(*devs));
	Dratopo__V1__Device **ptrs = calloc(r->n_devices + 1, sizeof(*ptrs));
	int rc = -ENOMEM;

	if (!devs || !ptrs)
		goto out;
	dratopo__v1__topology_report__init(&msg);
	msg.node_name = (char *)r->node_name;
	msg.instance_type = (char *)r->instance_type;
	msg.agent_version = (char *)(r->agent_version ? r->agent_version : "");
	msg.boot_id = (char *)(r->boot_id ? r->boot_id : "");
	msg.sequence = r->sequence;
	msg.probed_unix_nanos = r->probed_ns;
	msg.host_cpus = r->cpus;
	msg.host_memory_mib = r->memory_mib;
	for (size_t i = 0; i < r->n_devices; i++) {
		const struct rec_device *d = &r->devices[i];
		Dratopo__V1__Device *p = &devs[i];

		dratopo__v1__device__init(p);
		p->bdf = (char *)d->bdf;
		p->kind = d->kind == TOPO_GPU ? DRATOPO__V1__DEVICE_KIND__DEVICE_KIND_GPU
					      : DRATOPO__V1__DEVICE_KIND__DEVICE_KIND_EFA;
		p->vendor = d->vendor;
		p->device = d->device;
		p->subsystem_vendor = d->subsystem_vendor;
		p->subsystem_device = d->subsystem_device;
		p->pcie_root = (char *)(d->pcie_root ? d->pcie_root : "");
		if (d->numa_node >= 0) {
			p->numa_case = DRATOPO__V1__DEVICE__NUMA_NUMA_NODE;
			p->numa_node = d->numa_node;
		}
		p->link_speed = (char *)(d->link_speed ? d->link_speed : "");
		p->link_width = d->link_width;
		p->rdma_device = (char *)(d->rdma_device ? d->rdma_device : "");
		p->fell_off_bus = d->fell_off_bus;
		ptrs[i] = p;
	}
	msg.n_devices = r->n_devices;
	msg.devices = ptrs;
	rc = coord_report_pack(&msg, out, len);
out:
	free(devs);
	free(ptrs);
	return rc;
}
