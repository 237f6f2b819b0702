/* obs_metrics.h - a registry of counters, gauges and histograms, rendered
 * in the Prometheus text exposition format 0.0.4.
 *
 *   static const char *const by_verdict[] = { "verdict", NULL };
 *   struct obs_metric *reports;
 *
 *   obs_counter_new(reg, "dratopo_reports_total", "Reports received.",
 *                   by_verdict, &reports, &err);
 *   obs_inc(obs_series(reports, "match", NULL));
 *
 * A metric (a family) has a fixed list of label names; a series is one set
 * of label values, created on first use and kept for the registry's
 * lifetime. obs_series() takes the family's lock for a lookup; the returned
 * pointer may be kept, and updates through it are lock-free atomics
 * (histograms take a per-series lock) that never allocate. Every call is
 * thread-safe. Update calls accept NULL (what obs_series returns for a
 * wrong number of values or no memory) and do nothing with it, so a
 * metrics mistake never takes a daemon down; an update that does not fit
 * the metric's kind (obs_observe on a counter) is ignored too.
 *
 * Rendering is stable: families sorted by name, series by label values. */
#ifndef OBS_METRICS_H
#define OBS_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "strbuf.h"

#define OBS_LABELS_MAX 8
/* Series per metric: label values come partly from peers (an instance
 * type an agent reported), so their number is capped; past the cap
 * obs_series returns NULL and the update is dropped. */
#define OBS_SERIES_MAX 4096

struct obs_registry;
struct obs_metric;
struct obs_series;
struct obs_collector;

/* Computes a callback gauge's series at scrape time, by calling
 * obs_collect once per series. It runs on the scraping thread with no
 * registry lock held, so it may take its owner's locks. */
typedef void (*obs_collect_fn)(struct obs_collector *c, void *arg);

int obs_registry_new(struct obs_registry **out, struct dt_err *err);
void obs_registry_free(struct obs_registry *reg);

/* labels: NULL-terminated label names, or NULL for none. Names follow
 * Prometheus ([a-zA-Z_:][a-zA-Z0-9_:]* for metrics, no ':' and no leading
 * "__" for labels); a name already registered is -EEXIST. The metric is
 * owned by the registry; *out may be NULL when the caller keeps no handle. */
int obs_counter_new(struct obs_registry *reg, const char *name, const char *help,
		    const char *const *labels, struct obs_metric **out,
		    struct dt_err *err);
int obs_gauge_new(struct obs_registry *reg, const char *name, const char *help,
		  const char *const *labels, struct obs_metric **out,
		  struct dt_err *err);
/* bounds: the finite upper bounds, strictly increasing; +Inf is implied.
 * "le" may not be a label name. */
int obs_histogram_new(struct obs_registry *reg, const char *name, const char *help,
		      const char *const *labels, const double *bounds, size_t nbounds,
		      struct obs_metric **out, struct dt_err *err);
/* A gauge whose series fn computes at each scrape. */
int obs_gauge_func_new(struct obs_registry *reg, const char *name, const char *help,
		       const char *const *labels, obs_collect_fn fn, void *arg,
		       struct dt_err *err);

/* Bounds in seconds for RPC and store latencies (0.5 ms to 10 s). */
extern const double obs_latency_bounds[];
extern const size_t obs_latency_nbounds;

/* The series for these label values (NULL-terminated, as many as the
 * metric has labels), created on first use. */
struct obs_series *obs_series(struct obs_metric *m, ...) __attribute__((sentinel));
struct obs_series *obs_series_v(struct obs_metric *m, const char *const *values);

void obs_inc(struct obs_series *s);                     /* counter or gauge */
void obs_add(struct obs_series *s, uint64_t n);         /* counter */
void obs_set(struct obs_series *s, double v);           /* gauge */
void obs_gauge_add(struct obs_series *s, double delta); /* gauge */
void obs_observe(struct obs_series *s, double v);       /* histogram */

/* Inside an obs_collect_fn: one series, label values NULL-terminated. A
 * call with the wrong number of values is dropped; a label set given twice
 * keeps the last value. */
void obs_collect(struct obs_collector *c, double value, ...) __attribute__((sentinel));

/* Append the whole registry in the text format to out. */
int obs_registry_render(struct obs_registry *reg, struct strbuf *out,
			struct dt_err *err);

#endif
