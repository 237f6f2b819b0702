/* cluster_objects.c - NodeTopology and LearnedType objects from the
 * reconciler's records, and back (cluster.h): the status a node's record
 * and topology make, the same record and last report read out of it (the
 * devices in address order, as an agent sends them, so that a new
 * leader's first report of an unchanged node is a heartbeat), the digest
 * that tells whether two statuses differ in content, and the objects'
 * names. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "cluster.h"
#include "duration.h"
#include "hex.h"
#include "names.h"
#include "timestamp.h"

const struct kube_resource cluster_res_nodetopologies = {
	"dratopo.io", "v1alpha1", "nodetopologies", "NodeTopology", false,
};
const struct kube_resource cluster_res_learnedtypes = {
	"dratopo.io", "v1alpha1", "learnedtypes", "LearnedType", false,
};

/* Written with every change, never a change themselves. */
static const char *const moments[] = { "lastReportTime", "probeTime", "agent", NULL };

#define STALE_CLAUSE "stale: silent since "

/* ---- building ---- */

static void add_str(json_object *o, const char *key, const char *v)
{
	if (v && v[0])
		json_object_object_add(o, key, json_object_new_string(v));
}

static void add_int(json_object *o, const char *key, int64_t v)
{
	if (v > 0)
		json_object_object_add(o, key, json_object_new_int64(v));
}

static void add_time(json_object *o, const char *key, int64_t ns)
{
	char buf[TIMESTAMP_MAX];

	if (ns > 0)
		add_str(o, key, timestamp_format(ns, 0, buf, sizeof(buf)));
}

static void add_hex4(json_object *o, const char *key, unsigned v)
{
	char buf[8];

	snprintf(buf, sizeof(buf), "%04x", v & 0xffff);
	add_str(o, key, buf);
}

static json_object *device_json(const struct topo_device *d)
{
	json_object *o = json_object_new_object();

	add_str(o, "bdf", d->bdf_str);
	add_hex4(o, "vendor", d->vendor);
	add_hex4(o, "device", d->device);
	if (d->has_subsys) {
		add_hex4(o, "subsystemVendor", d->subsys_vendor);
		add_hex4(o, "subsystemDevice", d->subsys_device);
	}
	add_str(o, "model", d->model);
	if (d->numa_node >= 0)
		json_object_object_add(o, "numaNode", json_object_new_int(d->numa_node));
	add_str(o, "linkSpeed", d->link_speed);
	add_int(o, "linkWidth", d->link_width);
	add_str(o, "rdmaDevice", d->rdma_device);
	if (d->fell_off_bus)
		json_object_object_add(o, "fellOffBus", json_object_new_boolean(true));
	return o;
}

/* The devices of one root ("" for those without one) as {gpus, efas}
 * added to o; false when it has none. */
static bool add_devices(json_object *o, const struct topo *t, const char *root)
{
	json_object *lists[2] = { json_object_new_array(), json_object_new_array() };
	static const char *const keys[2] = { "gpus", "efas" };
	bool any = false;

	for (size_t i = 0; i < t->n_devices; i++) {
		const struct topo_device *d = &t->devices[i];

		if (!strcmp(d->pcie_root, root))
			json_object_array_add(lists[d->kind == TOPO_EFA], device_json(d));
	}
	for (int k = 0; k < 2; k++) {
		if (json_object_array_length(lists[k])) {
			json_object_object_add(o, keys[k], lists[k]);
			any = true;
		} else {
			json_object_put(lists[k]);
		}
	}
	return any;
}

static json_object *roots_json(const struct topo *t)
{
	json_object *roots = json_object_new_array();

	for (size_t i = 0; i < t->n_roots; i++) {
		json_object *r = json_object_new_object();

		add_str(r, "name", t->roots[i].name);
		add_devices(r, t, t->roots[i].name);
		json_object_array_add(roots, r);
	}
	return roots;
}

static void add_why(json_object *st, const struct cluster_node_view *v)
{
	const struct rec_node *n = v->node;
	struct strbuf why = STRBUF_INIT;
	char when[TIMESTAMP_MAX], after[32];

	sb_puts(&why, n->why ? n->why : "");
	if (v->stale) {
		if (why.len)
			sb_puts(&why, "; ");
		sb_printf(&why, STALE_CLAUSE "%s (stale after %s)",
			  timestamp_format(n->received_ns, 0, when, sizeof(when)),
			  duration_format(v->stale_after_ns, after, sizeof(after)));
	}
	json_object_object_add(st, "plannable", json_object_new_boolean(why.len == 0));
	if (!sb_error(&why))
		add_str(st, "why", sb_str(&why));
	sb_free(&why);
}

json_object *cluster_node_status(const struct cluster_node_view *v)
{
	const struct rec_node *n = v->node;
	const struct topo *t = v->topo;
	json_object *st = json_object_new_object(), *host, *agent, *unrooted;

	if (!st)
		return NULL;
	add_str(st, "instanceType", n->instance_type);
	add_str(st, "verdict", rec_verdict_name(n->verdict));
	if (dt_diags_count(&n->differences)) {
		json_object *d = json_object_new_array();

		for (size_t i = 0; i < n->differences.n; i++)
			json_object_array_add(d, json_object_new_string(n->differences.msgs[i]));
		json_object_object_add(st, "differences", d);
	}
	json_object_object_add(st, "gpus", json_object_new_int64((int64_t)n->gpus));
	json_object_object_add(st, "efas", json_object_new_int64((int64_t)n->efas));
	add_why(st, v);
	add_str(st, "shape", n->shape_key);
	if (n->conflicted)
		json_object_object_add(st, "conflict", json_object_new_boolean(true));
	if (n->drifted)
		json_object_object_add(st, "drifted", json_object_new_boolean(true));
	if (t->cpus > 0 || t->memory_mib > 0) {
		host = json_object_new_object();
		add_int(host, "cpus", t->cpus);
		add_int(host, "memoryMiB", t->memory_mib);
		json_object_object_add(st, "host", host);
	}
	agent = json_object_new_object();
	add_str(agent, "version", n->agent_version);
	add_str(agent, "runId", n->boot_id);
	json_object_object_add(agent, "sequence", json_object_new_int64((int64_t)n->sequence));
	json_object_object_add(st, "agent", agent);
	add_time(st, "probeTime", n->probed_ns);
	add_time(st, "lastReportTime", n->received_ns);
	json_object_object_add(st, "pcieRoots", roots_json(t));
	unrooted = json_object_new_object();
	if (add_devices(unrooted, t, ""))
		json_object_object_add(st, "unrooted", unrooted);
	else
		json_object_put(unrooted);
	return st;
}

/* ---- reading back ---- */

struct reader {
	const char *obj;                /* "NodeTopology gpu-a" */
	struct dt_err *err;
};

static int bad(struct reader *rd, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int bad(struct reader *rd, const char *path, const char *fmt, ...)
{
	char msg[300];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return dt_err_set(rd->err, -EINVAL, "%s: %s: %s", rd->obj, path, msg);
}

static const char *opt_str(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
	       ? json_object_get_string(v) : NULL;
}

static int64_t opt_int(json_object *o, const char *key, int64_t def)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_int)
	       ? json_object_get_int64(v) : def;
}

static bool opt_bool(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) && json_object_get_boolean(v);
}

static int read_hex4(struct reader *rd, json_object *d, const char *key, const char *path,
		     bool required, uint32_t *out)
{
	const char *s = opt_str(d, key);
	unsigned long v;
	char where[160];

	*out = 0;
	if (!s && !required)
		return 0;
	snprintf(where, sizeof(where), "%s.%s", path, key);
	if (!s)
		return bad(rd, where, "required");
	if (strlen(s) != 4 || hex_parse(s, 4, &v))
		return bad(rd, where, "\"%.16s\" is not 4 hex digits", s);
	*out = (uint32_t)v;
	return 0;
}

static int read_time(struct reader *rd, json_object *st, const char *key, int64_t *out)
{
	const char *s = opt_str(st, key);
	struct timestamp ts;
	struct dt_err terr = { 0 };
	char where[64];

	*out = 0;
	if (!s)
		return 0;
	if (timestamp_parse(s, strlen(s), &ts, &terr)) {
		snprintf(where, sizeof(where), "status.%s", key);
		return bad(rd, where, "%s", terr.msg);
	}
	*out = timestamp_unix_ns(&ts);
	return 0;
}

static int read_device(struct reader *rd, json_object *d, const char *root, enum topo_kind kind,
		       const char *path, struct rec_device *out)
{
	int rc;

	memset(out, 0, sizeof(*out));
	out->kind = kind;
	out->pcie_root = root;
	out->bdf = opt_str(d, "bdf");
	if (!out->bdf)
		return bad(rd, path, "bdf: required");
	if ((rc = read_hex4(rd, d, "vendor", path, true, &out->vendor)) ||
	    (rc = read_hex4(rd, d, "device", path, true, &out->device)) ||
	    (rc = read_hex4(rd, d, "subsystemVendor", path, false, &out->subsystem_vendor)) ||
	    (rc = read_hex4(rd, d, "subsystemDevice", path, false, &out->subsystem_device)))
		return rc;
	out->numa_node = (int)opt_int(d, "numaNode", -1);
	out->link_speed = opt_str(d, "linkSpeed");
	out->link_width = (uint32_t)opt_int(d, "linkWidth", 0);
	out->rdma_device = opt_str(d, "rdmaDevice");
	out->fell_off_bus = opt_bool(d, "fellOffBus");
	return 0;
}

/* The devices of one root object (its gpus and efas) appended to r. */
static int read_root(struct reader *rd, json_object *holder, const char *root, const char *path,
		     struct cluster_node_rec *r, size_t *cap)
{
	static const char *const keys[2] = { "gpus", "efas" };

	for (int k = 0; k < 2; k++) {
		json_object *list;
		char where[120];

		if (!json_object_object_get_ex(holder, keys[k], &list))
			continue;
		for (size_t i = 0; i < json_object_array_length(list); i++) {
			int rc;

			if (r->report.n_devices >= REC_MAX_DEVICES)
				return bad(rd, path, "more than %d devices", REC_MAX_DEVICES);
			if (DT_GROW(r->devices, *cap, r->report.n_devices + 1))
				return dt_err_set(rd->err, -ENOMEM, "out of memory");
			snprintf(where, sizeof(where), "%s.%s[%zu]", path, keys[k], i);
			rc = read_device(rd, json_object_array_get_idx(list, i), root,
					 k ? TOPO_EFA : TOPO_GPU, where,
					 &r->devices[r->report.n_devices]);
			if (rc)
				return rc;
			r->report.n_devices++;
		}
	}
	return 0;
}

static int device_order(const void *a, const void *b)
{
	return strcmp(((const struct rec_device *)a)->bdf, ((const struct rec_device *)b)->bdf);
}

static int read_devices(struct reader *rd, json_object *st, struct cluster_node_rec *r)
{
	json_object *roots, *unrooted;
	size_t cap = 0;
	int rc = 0;

	if (json_object_object_get_ex(st, "pcieRoots", &roots)) {
		for (size_t i = 0; !rc && i < json_object_array_length(roots); i++) {
			json_object *root = json_object_array_get_idx(roots, i);
			const char *name = opt_str(root, "name");
			char where[64];

			snprintf(where, sizeof(where), "status.pcieRoots[%zu]", i);
			rc = name && name[0] ? read_root(rd, root, name, where, r, &cap)
					     : bad(rd, where, "name: required");
		}
	}
	if (!rc && json_object_object_get_ex(st, "unrooted", &unrooted))
		rc = read_root(rd, unrooted, NULL, "status.unrooted", r, &cap);
	if (!rc && r->report.n_devices > 1)     /* address order: "DDDD:BB:DD.F" sorts so */
		qsort(r->devices, r->report.n_devices, sizeof(*r->devices), device_order);
	r->report.devices = r->devices;
	return rc;
}

static int read_status(struct reader *rd, json_object *st, struct cluster_node_rec *r)
{
	json_object *host = NULL, *agent = NULL;
	const char *verdict = opt_str(st, "verdict");
	int rc;

	r->report.instance_type = opt_str(st, "instanceType");
	if (!r->report.instance_type || !r->report.instance_type[0])
		return bad(rd, "status.instanceType", "required");
	if (!verdict || rec_verdict_parse(verdict, &r->stored.verdict))
		return bad(rd, "status.verdict", "\"%s\" is none of match, drift, unknown, learned",
			   verdict ? verdict : "");
	r->stored.shape_key = opt_str(st, "shape");
	r->stored.drifted = opt_bool(st, "drifted");
	r->stale = cluster_status_stale(st);
	json_object_object_get_ex(st, "host", &host);
	json_object_object_get_ex(st, "agent", &agent);
	r->report.cpus = (int)opt_int(host, "cpus", 0);
	r->report.memory_mib = opt_int(host, "memoryMiB", 0);
	r->report.agent_version = opt_str(agent, "version");
	r->report.boot_id = opt_str(agent, "runId");
	r->report.sequence = (uint64_t)opt_int(agent, "sequence", 0);
	if ((rc = read_time(rd, st, "probeTime", &r->report.probed_ns)) ||
	    (rc = read_time(rd, st, "lastReportTime", &r->report.received_ns)))
		return rc;
	return read_devices(rd, st, r);
}

int cluster_node_parse(json_object *obj, struct cluster_node_rec *out, struct dt_err *err)
{
	const char *name = kube_json_str(obj, "metadata", "name", NULL);
	json_object *st = kube_json_get(obj, "status", NULL);
	char what[300];
	struct reader rd = { what, err };
	int rc;

	memset(out, 0, sizeof(*out));
	snprintf(what, sizeof(what), "NodeTopology %s", name ? name : "(no name)");
	if (!name)
		return bad(&rd, "metadata.name", "required");
	if (!st)
		return bad(&rd, "status", "none yet");
	out->obj = json_object_get(obj);
	out->report.node_name = name;
	rc = read_status(&rd, st, out);
	if (rc)
		cluster_node_rec_free(out);
	return rc;
}

void cluster_node_rec_free(struct cluster_node_rec *r)
{
	if (!r)
		return;
	free(r->devices);
	json_object_put(r->obj);
	memset(r, 0, sizeof(*r));
}

/* ---- learned types ---- */

json_object *cluster_learned_status(const struct rec_learned *l, size_t gpus, size_t efas)
{
	json_object *st = json_object_new_object(), *nodes = json_object_new_array();

	if (!st || !nodes) {
		json_object_put(st);
		json_object_put(nodes);
		return NULL;
	}
	add_str(st, "instanceType", l->type);
	add_str(st, "shape", l->shape_key);
	json_object_object_add(st, "gpus", json_object_new_int64((int64_t)gpus));
	json_object_object_add(st, "efas", json_object_new_int64((int64_t)efas));
	for (size_t i = 0; i < l->n_nodes; i++)
		json_object_array_add(nodes, json_object_new_string(l->nodes[i]));
	json_object_object_add(st, "nodes", nodes);
	add_time(st, "learnedTime", l->learned_ns);
	add_str(st, "entry", l->source);
	return st;
}

static char *dup_field(json_object *st, const char *key, bool *oom)
{
	const char *s = opt_str(st, key);
	char *d = strdup(s ? s : "");

	*oom |= !d;
	return d;
}

int cluster_learned_parse(json_object *obj, struct rec_learned *out, struct dt_err *err)
{
	const char *name = kube_json_str(obj, "metadata", "name", NULL);
	json_object *st = kube_json_get(obj, "status", NULL), *nodes = NULL;
	char what[300];
	struct reader rd = { what, err };
	bool oom = false;
	int rc;

	memset(out, 0, sizeof(*out));
	snprintf(what, sizeof(what), "LearnedType %s", name ? name : "(no name)");
	if (!st)
		return bad(&rd, "status", "none yet");
	if (!opt_str(st, "instanceType") || !opt_str(st, "shape") || !opt_str(st, "entry"))
		return bad(&rd, "status", "instanceType, shape and entry are required");
	out->type = dup_field(st, "instanceType", &oom);
	out->shape_key = dup_field(st, "shape", &oom);
	out->source = dup_field(st, "entry", &oom);
	if (json_object_object_get_ex(st, "nodes", &nodes)) {
		size_t n = json_object_array_length(nodes);

		out->nodes = calloc(n + 1, sizeof(*out->nodes));
		oom |= !out->nodes;
		for (size_t i = 0; out->nodes && i < n; i++) {
			const char *s = json_object_get_string(json_object_array_get_idx(nodes, i));

			if (!(out->nodes[out->n_nodes++] = strdup(s ? s : "")))
				oom = true;
		}
	}
	rc = read_time(&rd, st, "learnedTime", &out->learned_ns);
	if (oom)
		rc = dt_err_set(err, -ENOMEM, "out of memory");
	if (rc)
		rec_learned_free(out);
	return rc;
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *s = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ s[i]) * 1099511628211ULL;
	return h;
}

const char *cluster_learned_name(const char *type, char *buf, size_t size)
{
	struct names_msgs msgs;

	if (!names_dns1123_subdomain(type, strlen(type), &msgs)) {
		snprintf(buf, size, "%s", type);
	} else {
		uint64_t h = fnv(1469598103934665603ULL, type, strlen(type));

		snprintf(buf, size, "type-%016" PRIx64, h);
	}
	return buf;
}

/* ---- digests ---- */

static int key_order(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static bool is_moment(const char *key)
{
	for (size_t i = 0; moments[i]; i++)
		if (!strcmp(key, moments[i]))
			return true;
	return false;
}

/* FNV over a canonical form: object keys sorted, each value tagged with
 * its type. At depth 0 the moments are left out. */
static uint64_t canon(json_object *o, uint64_t h, int depth)
{
	enum json_type t = json_object_get_type(o);
	char tag = (char)('0' + t);

	h = fnv(h, &tag, 1);
	switch (t) {
	case json_type_boolean:
	case json_type_int: {
		int64_t v = json_object_get_int64(o);

		return fnv(h, &v, sizeof(v));
	}
	case json_type_double: {
		double v = json_object_get_double(o);

		return fnv(h, &v, sizeof(v));
	}
	case json_type_string:
		return fnv(h, json_object_get_string(o), (size_t)json_object_get_string_len(o) + 1);
	case json_type_array:
		for (size_t i = 0; i < json_object_array_length(o); i++)
			h = canon(json_object_array_get_idx(o, i), h, depth + 1);
		return fnv(h, "]", 1);
	case json_type_object: {
		size_t n = 0, k = 0;
		const char **keys;

		json_object_object_foreach(o, key0, v0) {
			(void)key0, (void)v0;
			n++;
		}
		keys = calloc(n + 1, sizeof(*keys));
		if (!keys)
			return 0;
		json_object_object_foreach(o, key, v) {
			(void)v;
			if (depth > 0 || !is_moment(key))
				keys[k++] = key;
		}
		qsort(keys, k, sizeof(*keys), key_order);
		for (size_t i = 0; i < k; i++) {
			h = fnv(h, keys[i], strlen(keys[i]) + 1);
			h = canon(json_object_object_get(o, keys[i]), h, depth + 1);
		}
		free(keys);
		return fnv(h, "}", 1);
	}
	default:
		return h;
	}
}

uint64_t cluster_status_digest(json_object *status)
{
	uint64_t h;

	if (!status)
		return 0;
	h = canon(status, 1469598103934665603ULL, 0);
	return h ? h : 1;
}

bool cluster_status_stale(json_object *status)
{
	const char *why = opt_str(status, "why");

	return why && (!strncmp(why, STALE_CLAUSE, strlen(STALE_CLAUSE)) ||
		       strstr(why, "; " STALE_CLAUSE));
}
