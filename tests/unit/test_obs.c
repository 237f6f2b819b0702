/* test_obs.c - logfmt lines, the metrics registry and its text format, and
 * the /metrics /healthz /readyz endpoint (fetched with a raw socket). */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include <dirent.h>

#include "dt_test.h"
#include "obs_http.h"
#include "obs_log.h"
#include "escape.h"
#include "obs_metrics.h"

/* ---- logging ---- */

static char *logfmt(const char *value)
{
	static char out[256];
	struct strbuf sb = STRBUF_INIT;

	sb_logfmt_value(&sb, value);
	snprintf(out, sizeof(out), "%s", sb_str(&sb));
	sb_free(&sb);
	return out;
}

static void test_logfmt_quoting(void)
{
	DT_ASSERT_STR(logfmt("n1"), "n1");
	DT_ASSERT_STR(logfmt("p5.48xlarge"), "p5.48xlarge");
	DT_ASSERT_STR(logfmt("back\\slash"), "back\\slash");
	DT_ASSERT_STR(logfmt("caf\xc3\xa9"), "caf\xc3\xa9");
	DT_ASSERT_STR(logfmt(""), "\"\"");
	DT_ASSERT_STR(logfmt("two words"), "\"two words\"");
	DT_ASSERT_STR(logfmt("a=b"), "\"a=b\"");
	DT_ASSERT_STR(logfmt("say \"hi\""), "\"say \\\"hi\\\"\"");
	DT_ASSERT_STR(logfmt("q\"\\"), "\"q\\\"\\\\\"");
	DT_ASSERT_STR(logfmt("line\nnext\r\t"), "\"line\\nnext\\r\\t\"");
	DT_ASSERT_STR(logfmt("bell\a del\x7f"), "\"bell\\u0007 del\\u007f\"");
}

/* Reads everything written to fd (a file) from its start. */
static char *slurp(int fd)
{
	struct strbuf sb = STRBUF_INIT;
	char buf[65536];
	ssize_t n;

	lseek(fd, 0, SEEK_SET);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		sb_append(&sb, buf, (size_t)n);
	return sb_detach(&sb);
}

static int log_to_tmpfile(FILE **f)
{
	*f = tmpfile();
	CU_ASSERT_PTR_NOT_NULL_FATAL(*f);
	return obs_log_set_fd(fileno(*f));
}

/* "ts=YYYY-MM-DDTHH:MM:SS.mmmZ " with digits where digits belong. */
static bool has_timestamp(const char *line)
{
	static const char shape[] = "ts=dddd-dd-ddTdd:dd:dd.dddZ ";

	for (size_t i = 0; i < sizeof(shape) - 1; i++) {
		if (shape[i] == 'd' ? line[i] < '0' || line[i] > '9' : line[i] != shape[i])
			return false;
	}
	return true;
}

static void test_log_lines(void)
{
	static const char *const want[] = {
		"level=info event=report node=n1 verdict=match",
		"level=warn event=drift node=n2 differences=\"gpus: want 8, got 7\" extra=\"\"",
		"level=error event=listen addr=127.0.0.1:9090",
		"level=info event=store seq=42 path=/var/lib/dratopo/db ms=1.50",
		"level=debug event=probe what=sysfs",
		"level=info event=bad_key a_b=1",
	};
	struct obs_ev ev;
	char *text, *line, *save = NULL;
	size_t n = 0;
	FILE *f;
	int old = log_to_tmpfile(&f);

	obs_log(OBS_INFO, "report", "node", "n1", "verdict", "match", NULL);
	obs_log(OBS_WARN, "drift", "node", "n2", "differences", "gpus: want 8, got 7",
		"extra", NULL, NULL);
	obs_logf(OBS_ERROR, "listen", "addr", "%s:%d", "127.0.0.1", 9090);
	obs_log(OBS_DEBUG, "dropped", "at", "info", NULL);     /* below the threshold */
	/* the builder mixes types */
	obs_ev_begin(&ev, OBS_INFO, "store");
	obs_ev_int(&ev, "seq", 42);
	obs_ev_str(&ev, "path", "/var/lib/dratopo/db");
	obs_ev_f(&ev, "ms", "%.2f", 1.5);
	obs_ev_end(&ev);
	obs_log_set_level(OBS_DEBUG);
	obs_log(OBS_DEBUG, "probe", "what", "sysfs", NULL);
	obs_log_set_level(OBS_INFO);
	obs_log(OBS_INFO, "bad_key", "a b", "1", NULL);
	obs_log_set_fd(old);

	text = slurp(fileno(f));
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save), n++) {
		CU_ASSERT(has_timestamp(line));
		if (n < sizeof(want) / sizeof(want[0]))
			DT_ASSERT_STR(line + 28, want[n]);
	}
	CU_ASSERT_EQUAL(n, sizeof(want) / sizeof(want[0]));
	free(text);
	fclose(f);
}

static void test_log_level_parse(void)
{
	enum obs_level level = OBS_ERROR;
	struct dt_err err;

	CU_ASSERT_EQUAL(obs_log_parse_level("warn", &level, &err), 0);
	CU_ASSERT_EQUAL(level, OBS_WARN);
	CU_ASSERT_EQUAL(obs_log_parse_level("verbose", &level, &err), -EINVAL);
	DT_ASSERT_STR(err.msg, "log level \"verbose\": expected debug, info, warn or error");
	CU_ASSERT(obs_log_enabled(OBS_INFO));
	CU_ASSERT(!obs_log_enabled(OBS_DEBUG));
	/* the daemons' --log-level setter: the process's level */
	CU_ASSERT_EQUAL(obs_log_level_opt(NULL, "error", &err), 0);
	CU_ASSERT(!obs_log_enabled(OBS_WARN));
	CU_ASSERT_EQUAL(obs_log_level_opt(NULL, "loud", &err), -EINVAL);
	CU_ASSERT(!obs_log_enabled(OBS_WARN));
	CU_ASSERT_EQUAL(obs_log_level_opt(NULL, "info", &err), 0);
	CU_ASSERT(obs_log_enabled(OBS_INFO));
}

#define LOG_THREADS 8
#define LOG_LINES 300
#define LOG_PAD 5000    /* lines longer than PIPE_BUF */

static char log_pad[LOG_PAD + 1];

static void *log_worker(void *arg)
{
	long t = (long)arg;
	char tid[16];

	snprintf(tid, sizeof(tid), "%ld", t);
	for (int i = 0; i < LOG_LINES; i++) {
		struct obs_ev ev;

		obs_ev_begin(&ev, OBS_INFO, "tick");
		obs_ev_str(&ev, "thread", tid);
		obs_ev_int(&ev, "i", i);
		obs_ev_str(&ev, "pad", log_pad);
		obs_ev_end(&ev);
	}
	return NULL;
}

static void test_log_threads_never_interleave(void)
{
	static bool seen[LOG_THREADS][LOG_LINES];
	pthread_t th[LOG_THREADS];
	char *text, *line, *save = NULL;
	size_t lines = 0;
	FILE *f;
	int old;

	memset(log_pad, 'x', LOG_PAD);
	old = log_to_tmpfile(&f);
	for (long t = 0; t < LOG_THREADS; t++)
		pthread_create(&th[t], NULL, log_worker, (void *)t);
	for (int t = 0; t < LOG_THREADS; t++)
		pthread_join(th[t], NULL);
	obs_log_set_fd(old);

	text = slurp(fileno(f));
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		int t, i, off = 0;

		lines++;
		if (!has_timestamp(line) ||
		    sscanf(line + 28, "level=info event=tick thread=%d i=%d pad=%n", &t, &i, &off) != 2 ||
		    t < 0 || t >= LOG_THREADS || i < 0 || i >= LOG_LINES || seen[t][i] ||
		    strcmp(line + 28 + off, log_pad) != 0) {
			CU_FAIL("a log line is torn, repeated or malformed");
			break;
		}
		seen[t][i] = true;
	}
	CU_ASSERT_EQUAL(lines, LOG_THREADS * LOG_LINES);
	free(text);
	fclose(f);
}

/* ---- metrics ---- */

static const char *const by_verdict[] = { "verdict", NULL };
static const char *const by_method[] = { "method", NULL };
static const char *const by_type_verdict[] = { "type", "verdict", NULL };

static void collect_nodes(struct obs_collector *c, void *arg)
{
	(void)arg;
	obs_collect(c, 2, "p5.48xlarge", "match", NULL);
	obs_collect(c, 1, "g6.xlarge", "drift", NULL);
	obs_collect(c, 9, "too", "many", "values", NULL);       /* dropped */
	obs_collect(c, 3, "p5.48xlarge", "match", NULL);        /* replaces the 2 */
}

static const char expected_text[] =
	"# HELP dratopo_nodes Nodes by instance type and verdict.\n"
	"# TYPE dratopo_nodes gauge\n"
	"dratopo_nodes{type=\"g6.xlarge\",verdict=\"drift\"} 1\n"
	"dratopo_nodes{type=\"p5.48xlarge\",verdict=\"match\"} 3\n"
	"# HELP dratopo_report_seconds Time to handle a report.\n"
	"# TYPE dratopo_report_seconds histogram\n"
	"dratopo_report_seconds_bucket{method=\"Report\",le=\"0.1\"} 1\n"
	"dratopo_report_seconds_bucket{method=\"Report\",le=\"0.5\"} 2\n"
	"dratopo_report_seconds_bucket{method=\"Report\",le=\"1\"} 2\n"
	"dratopo_report_seconds_bucket{method=\"Report\",le=\"+Inf\"} 3\n"
	"dratopo_report_seconds_sum{method=\"Report\"} 2.3125\n"
	"dratopo_report_seconds_count{method=\"Report\"} 3\n"
	"dratopo_report_seconds_bucket{method=\"Types\",le=\"0.1\"} 0\n"
	"dratopo_report_seconds_bucket{method=\"Types\",le=\"0.5\"} 0\n"
	"dratopo_report_seconds_bucket{method=\"Types\",le=\"1\"} 1\n"
	"dratopo_report_seconds_bucket{method=\"Types\",le=\"+Inf\"} 1\n"
	"dratopo_report_seconds_sum{method=\"Types\"} 1\n"
	"dratopo_report_seconds_count{method=\"Types\"} 1\n"
	"# HELP dratopo_reports_total Reports received, by verdict.\n"
	"# TYPE dratopo_reports_total counter\n"
	"dratopo_reports_total{verdict=\"drift\"} 1\n"
	"dratopo_reports_total{verdict=\"match\"} 3\n"
	"# HELP dratopo_store_errors_total Store operations that failed.\n"
	"# TYPE dratopo_store_errors_total counter\n"
	"dratopo_store_errors_total 0\n"
	"# HELP dratopo_up 1 while the daemon runs.\n"
	"# TYPE dratopo_up gauge\n"
	"dratopo_up 1\n";

/* A registry with one of everything (registered out of name order). */
static struct obs_registry *sample_registry(void)
{
	static const double bounds[] = { 0.1, 0.5, 1 };
	struct obs_metric *reports, *up, *lat, *unused;
	struct obs_registry *reg;
	struct dt_err err;

	CU_ASSERT_EQUAL_FATAL(obs_registry_new(&reg, &err), 0);
	CU_ASSERT_EQUAL(obs_gauge_new(reg, "dratopo_up", "1 while the daemon runs.", NULL, &up, &err), 0);
	CU_ASSERT_EQUAL(obs_counter_new(reg, "dratopo_reports_total", "Reports received, by verdict.",
					by_verdict, &reports, &err), 0);
	CU_ASSERT_EQUAL(obs_histogram_new(reg, "dratopo_report_seconds", "Time to handle a report.",
					  by_method, bounds, 3, &lat, &err), 0);
	CU_ASSERT_EQUAL(obs_gauge_func_new(reg, "dratopo_nodes", "Nodes by instance type and verdict.",
					   by_type_verdict, collect_nodes, NULL, &err), 0);
	CU_ASSERT_EQUAL(obs_counter_new(reg, "dratopo_store_errors_total",
					"Store operations that failed.", NULL, &unused, &err), 0);
	/* a labelled family without series yet is left out */
	CU_ASSERT_EQUAL(obs_counter_new(reg, "dratopo_conflicts_total", "Conflicts.", by_method,
					NULL, &err), 0);
	obs_set(obs_series(up, NULL), 1);
	for (int i = 0; i < 3; i++)
		obs_inc(obs_series(reports, "match", NULL));
	obs_inc(obs_series(reports, "drift", NULL));
	obs_observe(obs_series(lat, "Types", NULL), 1);         /* le is inclusive */
	obs_observe(obs_series(lat, "Report", NULL), 0.0625);
	obs_observe(obs_series(lat, "Report", NULL), 0.25);
	obs_observe(obs_series(lat, "Report", NULL), 2);
	return reg;
}

static char *render(struct obs_registry *reg)
{
	struct strbuf out = STRBUF_INIT;
	struct dt_err err;

	CU_ASSERT_EQUAL(obs_registry_render(reg, &out, &err), 0);
	return sb_detach(&out);
}

static void test_render_exact(void)
{
	struct obs_registry *reg = sample_registry();
	char *text = render(reg);

	DT_ASSERT_STR(text, expected_text);
	free(text);
	text = render(reg);             /* a second scrape is the same */
	DT_ASSERT_STR(text, expected_text);
	free(text);
	obs_registry_free(reg);
}

static void collect_nothing(struct obs_collector *c, void *arg)
{
	(void)c, (void)arg;
}

/* A callback gauge with no series now (a coordinator with an empty fleet)
 * renders as no line, and nothing is sorted (UBSan: qsort_r of NULL). */
static void test_render_empty_callback_gauge(void)
{
	struct obs_registry *reg;
	struct dt_err err;
	char *text;

	CU_ASSERT_EQUAL_FATAL(obs_registry_new(&reg, &err), 0);
	CU_ASSERT_EQUAL(obs_gauge_func_new(reg, "dratopo_nodes", "Nodes.", by_type_verdict,
					   collect_nothing, NULL, &err), 0);
	text = render(reg);
	DT_ASSERT_STR(text, "");
	free(text);
	obs_registry_free(reg);
}

static void test_render_escaping_and_numbers(void)
{
	struct obs_registry *reg;
	struct obs_metric *c, *g;
	struct dt_err err;
	char *text;

	CU_ASSERT_EQUAL_FATAL(obs_registry_new(&reg, &err), 0);
	CU_ASSERT_EQUAL(obs_counter_new(reg, "esc_total", "Back\\slash \"and\"\nnewline.",
					(const char *const[]){ "path", NULL }, &c, &err), 0);
	CU_ASSERT_EQUAL(obs_gauge_new(reg, "num", "Numbers.", (const char *const[]){ "k", NULL },
				      &g, &err), 0);
	obs_add(obs_series(c, "C:\\dir \"x\"\nend", NULL), 5);
	obs_add(obs_series(c, "caf\xc3\xa9 bad\xff cut\xe2\x82", NULL), 1);
	obs_set(obs_series(g, "a", NULL), -0.5);
	obs_set(obs_series(g, "b", NULL), 1e-9);
	obs_set(obs_series(g, "c", NULL), 1e21);
	obs_set(obs_series(g, "d", NULL), 0.1);
	obs_set(obs_series(g, "e", NULL), NAN);
	obs_set(obs_series(g, "f", NULL), -INFINITY);
	obs_set(obs_series(g, "g", NULL), 12345678);
	obs_gauge_add(obs_series(g, "g", NULL), -8);
	obs_set(obs_series(g, "h", NULL), 999999);
	obs_set(obs_series(g, "i", NULL), 1e-4);
	obs_series(g, "j", NULL);
	text = render(reg);
	DT_ASSERT_STR(text,
		      "# HELP esc_total Back\\\\slash \"and\"\\nnewline.\n"
		      "# TYPE esc_total counter\n"
		      "esc_total{path=\"C:\\\\dir \\\"x\\\"\\nend\"} 5\n"
		      /* invalid UTF-8 from a peer is replaced, valid kept */
		      "esc_total{path=\"caf\xc3\xa9 bad\xef\xbf\xbd cut\xef\xbf\xbd\xef\xbf\xbd\"} 1\n"
		      "# HELP num Numbers.\n"
		      "# TYPE num gauge\n"
		      "num{k=\"a\"} -0.5\n"
		      "num{k=\"b\"} 1e-09\n"
		      "num{k=\"c\"} 1e+21\n"
		      "num{k=\"d\"} 0.1\n"
		      "num{k=\"e\"} NaN\n"
		      "num{k=\"f\"} -Inf\n"
		      "num{k=\"g\"} 1.234567e+07\n"
		      "num{k=\"h\"} 999999\n"
		      "num{k=\"i\"} 0.0001\n"
		      "num{k=\"j\"} 0\n");
	free(text);
	obs_registry_free(reg);
}

static void test_names_validated(void)
{
	static const double good[] = { 1, 2 }, flat[] = { 1, 1 }, inf[] = { 1, INFINITY };
	struct obs_registry *reg;
	struct dt_err err;

	CU_ASSERT_EQUAL_FATAL(obs_registry_new(&reg, &err), 0);
	CU_ASSERT_EQUAL(obs_counter_new(reg, "ns:sub_total9", "ok", NULL, NULL, &err), 0);
	CU_ASSERT_EQUAL(obs_counter_new(reg, "ns:sub_total9", "again", NULL, NULL, &err), -EEXIST);
	DT_ASSERT_STR(err.msg, "metric ns:sub_total9: already registered");
	CU_ASSERT_EQUAL(obs_counter_new(reg, "9lives", "", NULL, NULL, &err), -EINVAL);
	DT_ASSERT_STR(err.msg, "invalid metric name \"9lives\"");
	CU_ASSERT_EQUAL(obs_counter_new(reg, "a-b", "", NULL, NULL, &err), -EINVAL);
	CU_ASSERT_EQUAL(obs_counter_new(reg, "", "", NULL, NULL, &err), -EINVAL);
	CU_ASSERT_EQUAL(obs_gauge_new(reg, "g1", "", (const char *const[]){ "__x", NULL }, NULL, &err),
			-EINVAL);
	DT_ASSERT_STR(err.msg, "metric g1: invalid label name \"__x\"");
	CU_ASSERT_EQUAL(obs_gauge_new(reg, "g2", "", (const char *const[]){ "a:b", NULL }, NULL, &err),
			-EINVAL);
	CU_ASSERT_EQUAL(obs_gauge_new(reg, "g3", "", (const char *const[]){ "a", "a", NULL }, NULL,
				      &err), -EINVAL);
	DT_ASSERT_STR(err.msg, "metric g3: label \"a\" given twice");
	CU_ASSERT_EQUAL(obs_histogram_new(reg, "h1", "", (const char *const[]){ "le", NULL }, good, 2,
					  NULL, &err), -EINVAL);
	CU_ASSERT_EQUAL(obs_histogram_new(reg, "h2", "", NULL, flat, 2, NULL, &err), -EINVAL);
	DT_ASSERT_STR(err.msg, "histogram h2: bounds must increase (bound 1)");
	CU_ASSERT_EQUAL(obs_histogram_new(reg, "h3", "", NULL, inf, 2, NULL, &err), -EINVAL);
	CU_ASSERT_EQUAL(obs_histogram_new(reg, "h4", "", NULL, good, 2, NULL, &err), 0);
	CU_ASSERT_EQUAL(obs_gauge_func_new(reg, "f1", "", NULL, NULL, NULL, &err), -EINVAL);
	obs_registry_free(reg);
}

static void test_series_lookup(void)
{
	struct obs_registry *reg;
	struct obs_metric *m, *h;
	struct dt_err err;
	struct obs_series *s;

	CU_ASSERT_EQUAL_FATAL(obs_registry_new(&reg, &err), 0);
	CU_ASSERT_EQUAL_FATAL(obs_counter_new(reg, "c_total", "", by_type_verdict, &m, &err), 0);
	CU_ASSERT_EQUAL_FATAL(obs_histogram_new(reg, "h", "", NULL, obs_latency_bounds,
						obs_latency_nbounds, &h, &err), 0);
	s = obs_series(m, "p5", "match", NULL);
	CU_ASSERT_PTR_NOT_NULL(s);
	CU_ASSERT_PTR_EQUAL(obs_series(m, "p5", "match", NULL), s);
	CU_ASSERT_PTR_NOT_EQUAL(obs_series(m, "p5", "drift", NULL), s);
	CU_ASSERT_PTR_NULL(obs_series(m, "p5", NULL));
	CU_ASSERT_PTR_NULL(obs_series(m, "p5", "match", "extra", NULL));
	CU_ASSERT_PTR_NULL(obs_series(NULL, NULL));
	CU_ASSERT_PTR_NULL(obs_series(h, "unlabelled", NULL));
	/* past OBS_SERIES_MAX new label sets are refused, known ones still work */
	for (int i = 2; i < OBS_SERIES_MAX; i++) {
		char v[16];

		snprintf(v, sizeof(v), "t%d", i);
		CU_ASSERT_PTR_NOT_NULL(obs_series(m, v, "x", NULL));
	}
	CU_ASSERT_PTR_NULL(obs_series(m, "one", "more", NULL));
	CU_ASSERT_PTR_EQUAL(obs_series(m, "p5", "match", NULL), s);
	/* updates on NULL or of the wrong kind are ignored, not crashes */
	obs_inc(NULL);
	obs_observe(NULL, 1);
	obs_observe(s, 1);
	obs_set(s, 5);
	obs_add(obs_series(h, NULL), 3);
	obs_observe(obs_series(h, NULL), 0.003);
	{
		char *text = render(reg);

		CU_ASSERT_PTR_NOT_NULL(strstr(text, "c_total{type=\"p5\",verdict=\"match\"} 0\n"));
		CU_ASSERT_PTR_NOT_NULL(strstr(text, "h_bucket{le=\"0.0025\"} 0\nh_bucket{le=\"0.005\"} 1\n"));
		CU_ASSERT_PTR_NOT_NULL(strstr(text, "h_bucket{le=\"10\"} 1\nh_bucket{le=\"+Inf\"} 1\n"));
		CU_ASSERT_PTR_NOT_NULL(strstr(text, "h_count 1\n"));
		free(text);
	}
	obs_registry_free(reg);
}

#define INC_THREADS 8
#define INC_ROUNDS 20000

struct inc_ctx {
	struct obs_metric *counter, *hist, *gauge;
	struct obs_series *cached;
};

static void *inc_worker(void *arg)
{
	struct inc_ctx *ctx = arg;

	for (int i = 0; i < INC_ROUNDS; i++) {
		obs_inc(ctx->cached);
		/* a lookup per update, creating series concurrently */
		obs_inc(obs_series(ctx->counter, i % 2 ? "odd" : "even", NULL));
		obs_observe(obs_series(ctx->hist, NULL), i % 2 ? 0.5 : 2);
		obs_gauge_add(obs_series(ctx->gauge, NULL), 1);
	}
	return NULL;
}

static void test_concurrent_updates_sum(void)
{
	struct obs_registry *reg;
	struct inc_ctx ctx;
	pthread_t th[INC_THREADS];
	struct dt_err err;
	char want[2048], *text;
	const unsigned total = INC_THREADS * INC_ROUNDS;

	CU_ASSERT_EQUAL_FATAL(obs_registry_new(&reg, &err), 0);
	CU_ASSERT_EQUAL_FATAL(obs_counter_new(reg, "c_total", "", by_verdict, &ctx.counter, &err), 0);
	CU_ASSERT_EQUAL_FATAL(obs_histogram_new(reg, "h", "", NULL, (const double[]){ 1 }, 1,
						&ctx.hist, &err), 0);
	CU_ASSERT_EQUAL_FATAL(obs_gauge_new(reg, "g", "", NULL, &ctx.gauge, &err), 0);
	ctx.cached = obs_series(ctx.counter, "cached", NULL);
	for (long t = 0; t < INC_THREADS; t++)
		pthread_create(&th[t], NULL, inc_worker, &ctx);
	for (int t = 0; t < INC_THREADS; t++)
		pthread_join(th[t], NULL);
	snprintf(want, sizeof(want),
		 "# HELP c_total \n# TYPE c_total counter\n"
		 "c_total{verdict=\"cached\"} %u\nc_total{verdict=\"even\"} %u\n"
		 "c_total{verdict=\"odd\"} %u\n"
		 "# HELP g \n# TYPE g gauge\ng %u\n"
		 "# HELP h \n# TYPE h histogram\n"
		 "h_bucket{le=\"1\"} %u\nh_bucket{le=\"+Inf\"} %u\nh_sum %u\nh_count %u\n",
		 total, total / 2, total / 2, total, total / 2, total, total / 2 * 5 / 2, total);
	text = render(reg);
	DT_ASSERT_STR(text, want);
	free(text);
	obs_registry_free(reg);
}

/* ---- HTTP ---- */

struct http_reply {
	int status;
	char head[2048];
	char body[65536];
};

/* One request over a fresh connection; HTTP/1.0, so the server closes. */
static int http_fetch(int family, int port, const char *method, const char *path,
		      struct http_reply *r)
{
	struct sockaddr_storage ss = { 0 };
	struct timeval tv = { .tv_sec = 10 };   /* a guard against a hang, not a timing check */
	char req[256], *raw, *split;
	struct strbuf in = STRBUF_INIT;
	socklen_t len;
	ssize_t n;
	int fd;

	if (family == AF_INET6) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;

		a->sin6_family = AF_INET6;
		a->sin6_addr = in6addr_loopback;
		a->sin6_port = htons((uint16_t)port);
		len = sizeof(*a);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;

		a->sin_family = AF_INET;
		a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		a->sin_port = htons((uint16_t)port);
		len = sizeof(*a);
	}
	fd = socket(family, SOCK_STREAM, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&ss, len) < 0) {
		close(fd);
		return -ECONNREFUSED;
	}
	snprintf(req, sizeof(req), "%s %s HTTP/1.0\r\nHost: test\r\n\r\n", method, path);
	if (write(fd, req, strlen(req)) < 0) {
		close(fd);
		return -EIO;
	}
	while ((n = read(fd, req, sizeof(req))) > 0)
		sb_append(&in, req, (size_t)n);
	close(fd);
	raw = sb_detach(&in);
	if (!raw)
		return -ENOMEM;
	split = strstr(raw, "\r\n\r\n");
	if (!split || sscanf(raw, "HTTP/1.%*d %d", &r->status) != 1) {
		free(raw);
		return -EPROTO;
	}
	*split = '\0';
	snprintf(r->head, sizeof(r->head), "%s", raw);
	snprintf(r->body, sizeof(r->body), "%s", split + 4);
	free(raw);
	return 0;
}

struct readiness {
	bool ready;
};

static bool check_ready(void *arg, char *why, size_t whylen)
{
	struct readiness *rd = arg;

	if (!rd->ready)
		snprintf(why, whylen, "store: database is not writable");
	return rd->ready;
}

static int count_open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

static void test_http_endpoints(void)
{
	struct readiness rd = { .ready = true };
	struct obs_registry *reg = sample_registry();
	struct http_reply *r = malloc(sizeof(*r));
	struct obs_http *srv;
	struct dt_err err;
	int fds = count_open_fds(), port;

	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	CU_ASSERT_EQUAL_FATAL(obs_http_start("127.0.0.1:0", reg, check_ready, &rd, &srv, &err), 0);
	port = obs_http_port(srv);
	CU_ASSERT(port > 0);

	CU_ASSERT_EQUAL(http_fetch(AF_INET, port, "GET", "/metrics", r), 0);
	CU_ASSERT_EQUAL(r->status, 200);
	CU_ASSERT_PTR_NOT_NULL(strcasestr(r->head, "\r\nContent-Type: text/plain; version=0.0.4"));
	DT_ASSERT_STR(r->body, expected_text);

	CU_ASSERT_EQUAL(http_fetch(AF_INET, port, "GET", "/healthz", r), 0);
	CU_ASSERT_EQUAL(r->status, 200);
	DT_ASSERT_STR(r->body, "ok\n");

	CU_ASSERT_EQUAL(http_fetch(AF_INET, port, "GET", "/readyz", r), 0);
	CU_ASSERT_EQUAL(r->status, 200);
	DT_ASSERT_STR(r->body, "ok\n");
	rd.ready = false;
	CU_ASSERT_EQUAL(http_fetch(AF_INET, port, "GET", "/readyz", r), 0);
	CU_ASSERT_EQUAL(r->status, 503);
	DT_ASSERT_STR(r->body, "store: database is not writable\n");
	CU_ASSERT_EQUAL(http_fetch(AF_INET, port, "GET", "/healthz", r), 0);
	CU_ASSERT_EQUAL(r->status, 200);        /* alive, though not ready */

	CU_ASSERT_EQUAL(http_fetch(AF_INET, port, "GET", "/nope", r), 0);
	CU_ASSERT_EQUAL(r->status, 404);
	CU_ASSERT_EQUAL(http_fetch(AF_INET, port, "POST", "/metrics", r), 0);
	CU_ASSERT_EQUAL(r->status, 405);
	CU_ASSERT_PTR_NOT_NULL(strcasestr(r->head, "\r\nAllow: GET, HEAD"));
	CU_ASSERT_EQUAL(http_fetch(AF_INET, port, "HEAD", "/healthz", r), 0);
	CU_ASSERT_EQUAL(r->status, 200);
	DT_ASSERT_STR(r->body, "");

	obs_http_stop(srv);
	/* the listener is closed: nothing answers, and no descriptor is left */
	CU_ASSERT_EQUAL(http_fetch(AF_INET, port, "GET", "/healthz", r), -ECONNREFUSED);
	CU_ASSERT_EQUAL(count_open_fds(), fds);
	free(r);
	obs_registry_free(reg);
}

/* A daemon's pages: /echo answers its path and query, /fail fails, the
 * rest is not the daemon's. */
static int echo_page(void *arg, const struct obs_http_request *req, struct obs_http_page *page)
{
	const char *path = obs_http_path(req), *name = obs_http_arg(req, "name");

	(*(int *)arg)++;
	if (!strcmp(path, "/fail"))
		return -EIO;
	if (strncmp(path, "/echo/", 6))
		return -ENOENT;
	if (obs_http_arg(req, "teapot")) {
		page->status = 418;
		page->content_type = "text/plain";
	}
	sb_printf(&page->body, "path=[%s] name=[%s]", path + 6, name ? name : "(none)");
	return 0;
}

static void test_http_pages(void)
{
	struct obs_registry *reg = sample_registry();
	struct http_reply *r = malloc(sizeof(*r));
	int calls = 0;
	struct obs_http_opts o = { .addr = "127.0.0.1:0", .reg = reg, .page = echo_page,
				   .page_arg = &calls };
	struct obs_http *srv;
	struct dt_err err;
	int port;

	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	CU_ASSERT_EQUAL_FATAL(obs_http_start_opts(&o, &srv, &err), 0);
	port = obs_http_port(srv);
	/* path and query decoded, '+' a space; the endpoint's own paths stay its */
	CU_ASSERT_EQUAL(http_fetch(AF_INET, port, "GET", "/echo/a%2Fb%20%3Cc%3E?name=x+y%26z", r), 0);
	CU_ASSERT_EQUAL(r->status, 200);
	DT_ASSERT_STR(r->body, "path=[a/b <c>] name=[x y&z]");
	CU_ASSERT_PTR_NOT_NULL(strcasestr(r->head, "\r\nContent-Type: text/html; charset=utf-8"));
	CU_ASSERT_PTR_NOT_NULL(strcasestr(r->head, "\r\nContent-Security-Policy: default-src 'none'"));
	CU_ASSERT_PTR_NOT_NULL(strcasestr(r->head, "\r\nX-Content-Type-Options: nosniff"));
	CU_ASSERT_PTR_NOT_NULL(strcasestr(r->head, "\r\nCache-Control: no-store"));
	CU_ASSERT_EQUAL(http_fetch(AF_INET, port, "GET", "/echo/t?teapot=1", r), 0);
	CU_ASSERT_EQUAL(r->status, 418);
	CU_ASSERT_PTR_NOT_NULL(strcasestr(r->head, "\r\nContent-Type: text/plain"));
	CU_ASSERT_EQUAL(http_fetch(AF_INET, port, "HEAD", "/echo/h", r), 0);
	CU_ASSERT_EQUAL(r->status, 200);
	DT_ASSERT_STR(r->body, "");
	CU_ASSERT_EQUAL(http_fetch(AF_INET, port, "GET", "/elsewhere", r), 0);
	CU_ASSERT_EQUAL(r->status, 404);
	CU_ASSERT_EQUAL(http_fetch(AF_INET, port, "GET", "/fail", r), 0);
	CU_ASSERT_EQUAL(r->status, 500);
	CU_ASSERT_EQUAL(http_fetch(AF_INET, port, "POST", "/echo/p", r), 0);
	CU_ASSERT_EQUAL(r->status, 405);            /* read-only: never reaches the page */
	CU_ASSERT_EQUAL(http_fetch(AF_INET, port, "GET", "/metrics", r), 0);
	DT_ASSERT_STR(r->body, expected_text);
	CU_ASSERT_EQUAL(calls, 5);
	obs_http_stop(srv);
	free(r);
	obs_registry_free(reg);
}

/* A connection that sent half a request line and then nothing. */
static int stalled_client(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    write(fd, "GET /metr", 9) != 9) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

static void test_http_slow_clients(void)
{
	struct obs_registry *reg;
	struct http_reply *r = malloc(sizeof(*r));
	struct obs_http *srv;
	struct dt_err err;
	int stalled[8], port, rc = -1;

	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	CU_ASSERT_EQUAL_FATAL(obs_registry_new(&reg, &err), 0);
	CU_ASSERT_EQUAL_FATAL(obs_http_start("127.0.0.1:0", reg, NULL, NULL, &srv, &err), 0);
	port = obs_http_port(srv);
	/* stalled clients do not hold up the server's one thread */
	for (int i = 0; i < 4; i++)
		stalled[i] = stalled_client(port);
	CU_ASSERT_EQUAL(http_fetch(AF_INET, port, "GET", "/healthz", r), 0);
	CU_ASSERT_EQUAL(r->status, 200);
	/* one address gets 8 connections at most: the next is closed unanswered */
	for (int i = 4; i < 8; i++)
		stalled[i] = stalled_client(port);
	for (int i = 0; i < 8; i++)
		CU_ASSERT(stalled[i] >= 0);
	CU_ASSERT_EQUAL(http_fetch(AF_INET, port, "GET", "/healthz", r), -EPROTO);
	for (int i = 0; i < 8; i++)
		if (stalled[i] >= 0)
			close(stalled[i]);
	/* the slots come back once the server has seen the closes */
	for (int tries = 0; tries < 100 && rc != 0; tries++) {
		rc = http_fetch(AF_INET, port, "GET", "/healthz", r);
		if (rc)
			usleep(20000);
	}
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_EQUAL(r->status, 200);
	obs_http_stop(srv);
	obs_registry_free(reg);
	free(r);
}

static void test_http_addresses(void)
{
	struct obs_registry *reg;
	struct http_reply r;
	struct obs_http *srv, *other;
	struct dt_err err;
	char addr[64];

	CU_ASSERT_EQUAL_FATAL(obs_registry_new(&reg, &err), 0);
	CU_ASSERT_EQUAL(obs_http_start("9090", reg, NULL, NULL, &srv, &err), -EINVAL);
	DT_ASSERT_STR(err.msg, "http: address \"9090\": expected HOST:PORT, :PORT or [IPV6]:PORT");
	CU_ASSERT_EQUAL(obs_http_start("127.0.0.1:99999", reg, NULL, NULL, &srv, &err), -EINVAL);
	CU_ASSERT_EQUAL(obs_http_start("127.0.0.1:http", reg, NULL, NULL, &srv, &err), -EINVAL);
	CU_ASSERT_EQUAL(obs_http_start("[::1]9090", reg, NULL, NULL, &srv, &err), -EINVAL);
	CU_ASSERT_EQUAL(obs_http_start("::1:9090", reg, NULL, NULL, &srv, &err), -EINVAL);

	/* ":PORT" takes every address, loopback included */
	CU_ASSERT_EQUAL_FATAL(obs_http_start(":0", reg, NULL, NULL, &srv, &err), 0);
	CU_ASSERT_EQUAL(http_fetch(AF_INET, obs_http_port(srv), "GET", "/readyz", &r), 0);
	CU_ASSERT_EQUAL(r.status, 200);
	/* a port in use is refused with a message naming the address */
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", obs_http_port(srv));
	CU_ASSERT_EQUAL(obs_http_start(addr, reg, NULL, NULL, &other, &err), -EADDRINUSE);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, addr));
	obs_http_stop(srv);

	if (obs_http_start("[::1]:0", reg, NULL, NULL, &srv, &err) == 0) {
		CU_ASSERT_EQUAL(http_fetch(AF_INET6, obs_http_port(srv), "GET", "/healthz", &r), 0);
		CU_ASSERT_EQUAL(r.status, 200);
		obs_http_stop(srv);
	} else {
		fprintf(stderr, "\n  no IPv6 loopback here (%s); [::1] not tested\n", err.msg);
	}
	obs_registry_free(reg);
}

DT_SUITE_MAIN("obs",
	      DT_TEST(test_logfmt_quoting),
	      DT_TEST(test_log_lines),
	      DT_TEST(test_log_level_parse),
	      DT_TEST(test_log_threads_never_interleave),
	      DT_TEST(test_render_exact),
	      DT_TEST(test_render_empty_callback_gauge),
	      DT_TEST(test_render_escaping_and_numbers),
	      DT_TEST(test_names_validated),
	      DT_TEST(test_series_lookup),
	      DT_TEST(test_concurrent_updates_sum),
	      DT_TEST(test_http_endpoints),
	      DT_TEST(test_http_pages),
	      DT_TEST(test_http_slow_clients),
	      DT_TEST(test_http_addresses))
