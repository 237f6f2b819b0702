/* bench_doc.c - how fast manifests are read and printed.
 *
 *   bench_doc [megabytes]     (default 10)
 *
 * Builds a multi-document stream of ResourceSlice-like objects of about
 * that size, then times doc_parse() on it as YAML and as JSON, and the
 * YAML and JSON printers on the trees. Prints CPU times and throughput;
 * nothing is asserted (timings belong here, not in the test suites). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "doc.h"

/* CPU time of this process: on a shared machine wall time says more about
 * the neighbours than about the code. */
static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One ResourceSlice with 8 GPUs, written the way people write them. */
static void slice(struct strbuf *sb, int n)
{
	sb_printf(sb, "---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\n"
		  "metadata:\n  name: node-%d-gpu.example.com\n  labels:\n"
		  "    node.kubernetes.io/instance-type: p5.48xlarge\n"
		  "spec:\n  driver: gpu.example.com\n  nodeName: node-%d\n"
		  "  pool:\n    name: node-%d\n    generation: 1\n    resourceSliceCount: 1\n"
		  "  devices:\n", n, n, n);
	for (int d = 0; d < 8; d++)
		sb_printf(sb, "  - name: gpu-%d\n    attributes:\n"
			  "      index: {int: %d}\n      productName: {string: \"NVIDIA H100 80GB HBM3\"}\n"
			  "      driverVersion: {version: \"535.104.5\"}\n"
			  "      pcieRoot: {string: \"pci0000:%02x\"}\n"
			  "    capacity:\n      memory: {value: 80Gi}\n      cores: {value: \"132\"}\n",
			  d, d, d * 16);
}

static struct doc_stream *timed_parse(const char *what, const char *buf, size_t len,
				      enum doc_format fmt)
{
	struct doc_stream *s = NULL;
	struct dt_err err = { 0 };
	double t = now_s();

	if (doc_parse(buf, len, fmt, what, &s, &err) < 0) {
		fprintf(stderr, "bench_doc: %s\n", err.msg);
		return NULL;
	}
	t = now_s() - t;
	printf("parse %-5s %8.1f MB  %7.3f s  %7.1f MB/s  (%zu documents)\n", what,
	       (double)len / 1e6, t, (double)len / 1e6 / t, s->n_docs);
	return s;
}

int main(int argc, char **argv)
{
	double mb = argc > 1 ? atof(argv[1]) : 10;
	struct strbuf yaml = STRBUF_INIT, json = STRBUF_INIT, out = STRBUF_INIT;
	struct doc_stream *s = NULL, *sj = NULL;
	double t;
	int rc = 1;

	if (mb <= 0 || mb > 60) {
		fprintf(stderr, "usage: bench_doc [megabytes, at most 60]\n");
		return 2;
	}
	for (int n = 0; (double)yaml.len < mb * 1e6; n++)
		slice(&yaml, n);
	s = timed_parse("yaml", sb_str(&yaml), yaml.len, DOC_FORMAT_YAML);
	if (!s)
		goto out;

	t = now_s();
	for (size_t i = 0; i < s->n_docs; i++)
		if (s->docs[i].root && doc_emit_json(s->docs[i].root, 0, &json) == 0)
			sb_putc(&json, '\n');
	t = now_s() - t;
	printf("emit  json  %8.1f MB  %7.3f s  %7.1f MB/s\n", (double)json.len / 1e6, t,
	       (double)json.len / 1e6 / t);

	t = now_s();
	for (size_t i = 0; i < s->n_docs; i++) {
		sb_puts(&out, "---\n");
		doc_emit_yaml(s->docs[i].root, &out);
	}
	t = now_s() - t;
	printf("emit  yaml  %8.1f MB  %7.3f s  %7.1f MB/s\n", (double)out.len / 1e6, t,
	       (double)out.len / 1e6 / t);

	sj = timed_parse("json", sb_str(&json), json.len, DOC_FORMAT_JSON);
	if (!sj)
		goto out;
	t = now_s();
	for (size_t i = 0; i < s->n_docs && i < sj->n_docs; i++)
		if (!doc_equal(s->docs[i].root, sj->docs[i].root)) {
			fprintf(stderr, "bench_doc: document %zu differs after JSON\n", i + 1);
			goto out;
		}
	t = now_s() - t;
	printf("equal       %8s     %7.3f s\n", "", t);
	rc = 0;
out:
	doc_stream_free(s);
	doc_stream_free(sj);
	sb_free(&yaml);
	sb_free(&json);
	sb_free(&out);
	return rc;
}
