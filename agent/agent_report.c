/* agent_report.c - the TopologyReport for a probed node (agent_report.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent_report.h"
#include "dratopo/v1/agent.pb-c.h"
#include "hwdb.h"
#include "strbuf.h"
#include "topo_verify.h"

static void device_pb(const struct topo_device *d, Dratopo__V1__Device *out)
{
	dratopo__v1__device__init(out);
	out->bdf = (char *)d->bdf_str;
	out->kind = d->kind == TOPO_GPU ? DRATOPO__V1__DEVICE_KIND__DEVICE_KIND_GPU
					 : DRATOPO__V1__DEVICE_KIND__DEVICE_KIND_EFA;
	out->vendor = d->vendor;
	out->device = d->device;
	if (d->has_subsys) {
		out->subsystem_vendor = d->subsys_vendor;
		out->subsystem_device = d->subsys_device;
	}
	out->model = (char *)(d->model ? d->model : "");
	out->pcie_root = (char *)d->pcie_root;
	if (d->numa_node >= 0) {
		out->numa_case = DRATOPO__V1__DEVICE__NUMA_NUMA_NODE;
		out->numa_node = d->numa_node;
	}
	out->link_speed = (char *)d->link_speed;
	out->link_width = d->link_width > 0 ? (uint32_t)d->link_width : 0;
	out->rdma_device = (char *)d->rdma_device;
	out->fell_off_bus = d->fell_off_bus;
}

static Dratopo__V1__Verdict verdict_pb(enum topo_verdict v)
{
	switch (v) {
	case TOPO_MATCH:
		return DRATOPO__V1__VERDICT__VERDICT_MATCH;
	case TOPO_DRIFT:
		return DRATOPO__V1__VERDICT__VERDICT_DRIFT;
	default:
		return DRATOPO__V1__VERDICT__VERDICT_UNKNOWN_TYPE;
	}
}

/* The agent's own view: verdict, differences, a proposed entry when hwdb
 * lacks the type. */
static void own_verdict(const struct topo *t, Dratopo__V1__TopologyReport *m,
			struct topo_verify_result *vr, struct strbuf *entry,
			struct dt_diags *warnings)
{
	struct topo_learned learned;
	const struct hwdb_type *one;

	if (!t->instance_type || topo_verify(t, NULL, vr, NULL))
		return;
	m->verdict = verdict_pb(vr->verdict);
	m->n_differences = vr->differences.n;
	m->differences = vr->differences.msgs;
	if (vr->verdict != TOPO_UNKNOWN_TYPE || topo_learn(t, NULL, &learned, warnings, NULL))
		return;
	one = &learned.type;
	if (!hwdb_file_write_yaml(&one, 1, entry) && !sb_error(entry))
		m->learned_entry = (char *)sb_str(entry);
	topo_learned_free(&learned);
}

int agent_report_pack(const struct topo *t, const struct agent_report_info *info,
		      uint8_t **out, size_t *len, struct dt_diags *warnings, struct dt_err *err)
{
	Dratopo__V1__TopologyReport m = DRATOPO__V1__TOPOLOGY_REPORT__INIT;
	Dratopo__V1__Device *devs = calloc(t->n_devices + 1, sizeof(*devs));
	Dratopo__V1__Device **ptrs = calloc(t->n_devices + 1, sizeof(*ptrs));
	struct topo_verify_result vr = { 0 };
	struct strbuf entry = STRBUF_INIT;
	int rc = 0;

	dt_diags_init(&vr.differences);
	if (!info->node_name || !*info->node_name)
		rc = dt_err_set(err, -EINVAL, "no node name");
	else if (!devs || !ptrs)
		rc = dt_err_set(err, -ENOMEM, "out of memory");
	for (size_t i = 0; !rc && i < t->n_devices; i++) {
		device_pb(&t->devices[i], &devs[i]);
		ptrs[i] = &devs[i];
	}
	if (rc)
		goto out;
	m.node_name = (char *)info->node_name;
	m.instance_type = t->instance_type ? t->instance_type : (char *)"";
	m.n_devices = t->n_devices;
	m.devices = ptrs;
	m.n_warnings = t->warnings.n;
	m.warnings = t->warnings.msgs;
	m.probed_unix_nanos = info->probed_ns;
	m.sequence = info->sequence;
	m.agent_version = (char *)(info->version ? info->version : "");
	m.boot_id = (char *)(info->run_id ? info->run_id : "");
	m.host_cpus = t->cpus;
	m.host_memory_mib = t->memory_mib;
	own_verdict(t, &m, &vr, &entry, warnings);
	*len = protobuf_c_message_get_packed_size(&m.base);
	if (!(*out = malloc(*len ? *len : 1)))
		rc = dt_err_set(err, -ENOMEM, "out of memory");
	else
		protobuf_c_message_pack(&m.base, *out);
out:
	topo_verify_result_free(&vr);
	sb_free(&entry);
	free(ptrs);
	free(devs);
	return rc;
}
