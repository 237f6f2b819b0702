/* obs_metrics.c - metric families, their series, and the text format. */
#include "obs_metrics.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "utf8.h"

enum obs_kind { KIND_COUNTER, KIND_GAUGE, KIND_HISTOGRAM, KIND_GAUGE_FUNC };

static const char *const kind_names[] = {
	[KIND_COUNTER] = "counter",
	[KIND_GAUGE] = "gauge",
	[KIND_HISTOGRAM] = "histogram",
	[KIND_GAUGE_FUNC] = "gauge",
};

struct obs_series {
	const struct obs_metric *metric;
	char *values[OBS_LABELS_MAX];
	/* counter: the count; gauge: the bits of a double */
	_Atomic uint64_t word;
	/* histogram only: */
	pthread_mutex_t lock;
	double sum;
	uint64_t count;
	uint64_t buckets[];     /* per bound (not cumulative), then +Inf */
};

struct obs_metric {
	enum obs_kind kind;
	char *name;
	char *help;
	size_t nlabels;
	char *labels[OBS_LABELS_MAX];
	double *bounds;
	size_t nbounds;
	obs_collect_fn fn;
	void *fn_arg;
	pthread_mutex_t lock;   /* guards the series array, kept sorted */
	struct obs_series **series;
	size_t nseries, cap;
};

struct obs_registry {
	pthread_mutex_t lock;   /* guards the metric array */
	struct obs_metric **metrics;
	size_t n, cap;
};

/* One series produced by a collector. */
struct collected {
	char *values[OBS_LABELS_MAX];
	double value;
	size_t order;           /* call order, so that the last one wins */
};

struct obs_collector {
	const struct obs_metric *metric;
	struct collected *items;
	size_t n, cap;
	bool oom;
};

const double obs_latency_bounds[] = {
	0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
};
const size_t obs_latency_nbounds = sizeof(obs_latency_bounds) / sizeof(obs_latency_bounds[0]);

/* ---- names ---- */

static bool valid_name(const char *s, bool colon)
{
	if (!s || !*s)
		return false;
	for (size_t i = 0; s[i]; i++) {
		char c = s[i];
		bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
			     (colon && c == ':');

		if (!alpha && !(i > 0 && c >= '0' && c <= '9'))
			return false;
	}
	return true;
}

static int check_labels(const char *name, const char *const *labels, bool histogram,
			size_t *nlabels, struct dt_err *err)
{
	size_t n = 0;

	for (; labels && labels[n]; n++) {
		const char *l = labels[n];

		if (n == OBS_LABELS_MAX)
			return dt_err_set(err, -EINVAL, "metric %s: more than %d labels",
					  name, OBS_LABELS_MAX);
		if (!valid_name(l, false) || strncmp(l, "__", 2) == 0)
			return dt_err_set(err, -EINVAL, "metric %s: invalid label name \"%s\"",
					  name, l);
		if (histogram && strcmp(l, "le") == 0)
			return dt_err_set(err, -EINVAL,
					  "metric %s: \"le\" is reserved in a histogram", name);
		for (size_t j = 0; j < n; j++)
			if (strcmp(labels[j], l) == 0)
				return dt_err_set(err, -EINVAL,
						  "metric %s: label \"%s\" given twice", name, l);
	}
	*nlabels = n;
	return 0;
}

/* ---- registry ---- */

int obs_registry_new(struct obs_registry **out, struct dt_err *err)
{
	struct obs_registry *reg = calloc(1, sizeof(*reg));

	if (!reg)
		return dt_err_set(err, -ENOMEM, "metrics registry: out of memory");
	pthread_mutex_init(&reg->lock, NULL);
	*out = reg;
	return 0;
}

static void free_values(char **values, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(values[i]);
}

static void metric_free(struct obs_metric *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nseries; i++) {
		free_values(m->series[i]->values, m->nlabels);
		pthread_mutex_destroy(&m->series[i]->lock);
		free(m->series[i]);
	}
	free(m->series);
	free_values(m->labels, m->nlabels);
	free(m->bounds);
	free(m->name);
	free(m->help);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

void obs_registry_free(struct obs_registry *reg)
{
	if (!reg)
		return;
	for (size_t i = 0; i < reg->n; i++)
		metric_free(reg->metrics[i]);
	free(reg->metrics);
	pthread_mutex_destroy(&reg->lock);
	free(reg);
}

static struct obs_metric *metric_alloc(enum obs_kind kind, const char *name,
				       const char *help, const char *const *labels,
				       size_t nlabels)
{
	struct obs_metric *m = calloc(1, sizeof(*m));
	bool ok;

	if (!m)
		return NULL;
	pthread_mutex_init(&m->lock, NULL);
	m->kind = kind;
	m->name = strdup(name);
	m->help = strdup(help ? help : "");
	ok = m->name && m->help;
	for (; ok && m->nlabels < nlabels; m->nlabels++)
		ok = (m->labels[m->nlabels] = strdup(labels[m->nlabels])) != NULL;
	if (!ok) {
		metric_free(m);
		return NULL;
	}
	return m;
}

/* Takes ownership of m, freeing it on failure. An unlabelled counter,
 * gauge or histogram gets its one series at once, so that it shows as
 * zero before its first update. */
static int registry_add(struct obs_registry *reg, struct obs_metric *m,
			struct obs_metric **out, struct dt_err *err)
{
	int rc = 0;

	if (m->nlabels == 0 && m->kind != KIND_GAUGE_FUNC && !obs_series_v(m, NULL)) {
		metric_free(m);
		return dt_err_set(err, -ENOMEM, "metric: out of memory");
	}
	pthread_mutex_lock(&reg->lock);
	for (size_t i = 0; i < reg->n; i++)
		if (strcmp(reg->metrics[i]->name, m->name) == 0)
			rc = dt_err_set(err, -EEXIST, "metric %s: already registered", m->name);
	if (!rc && DT_GROW(reg->metrics, reg->cap, reg->n + 1))
		rc = dt_err_set(err, -ENOMEM, "metric %s: out of memory", m->name);
	if (!rc)
		reg->metrics[reg->n++] = m;
	pthread_mutex_unlock(&reg->lock);
	if (rc) {
		metric_free(m);
		return rc;
	}
	if (out)
		*out = m;
	return 0;
}

static int metric_new(enum obs_kind kind, const char *name,
		      const char *help, const char *const *labels,
		      struct obs_metric **mp, struct dt_err *err)
{
	size_t nlabels = 0;
	int rc;

	if (!valid_name(name, true))
		return dt_err_set(err, -EINVAL, "invalid metric name \"%s\"",
				  name ? name : "(null)");
	rc = check_labels(name, labels, kind == KIND_HISTOGRAM, &nlabels, err);
	if (rc)
		return rc;
	*mp = metric_alloc(kind, name, help, labels, nlabels);
	if (!*mp)
		return dt_err_set(err, -ENOMEM, "metric %s: out of memory", name);
	return 0;
}

int obs_counter_new(struct obs_registry *reg, const char *name, const char *help,
		    const char *const *labels, struct obs_metric **out,
		    struct dt_err *err)
{
	struct obs_metric *m;
	int rc = metric_new(KIND_COUNTER, name, help, labels, &m, err);

	return rc ? rc : registry_add(reg, m, out, err);
}

int obs_gauge_new(struct obs_registry *reg, const char *name, const char *help,
		  const char *const *labels, struct obs_metric **out,
		  struct dt_err *err)
{
	struct obs_metric *m;
	int rc = metric_new(KIND_GAUGE, name, help, labels, &m, err);

	return rc ? rc : registry_add(reg, m, out, err);
}

static int check_bounds(const char *name, const double *bounds, size_t nbounds,
			struct dt_err *err)
{
	for (size_t i = 0; i < nbounds; i++) {
		if (!isfinite(bounds[i]))
			return dt_err_set(err, -EINVAL,
					  "histogram %s: bound %zu is not finite (+Inf is implied)",
					  name, i);
		if (i > 0 && !(bounds[i] > bounds[i - 1]))
			return dt_err_set(err, -EINVAL,
					  "histogram %s: bounds must increase (bound %zu)", name, i);
	}
	return 0;
}

int obs_histogram_new(struct obs_registry *reg, const char *name, const char *help,
		      const char *const *labels, const double *bounds, size_t nbounds,
		      struct obs_metric **out, struct dt_err *err)
{
	struct obs_metric *m;
	int rc = check_bounds(name ? name : "(null)", bounds, nbounds, err);

	if (!rc)
		rc = metric_new(KIND_HISTOGRAM, name, help, labels, &m, err);
	if (rc)
		return rc;
	if (nbounds) {
		m->bounds = malloc(nbounds * sizeof(*m->bounds));
		if (!m->bounds) {
			metric_free(m);
			return dt_err_set(err, -ENOMEM, "histogram %s: out of memory", name);
		}
		memcpy(m->bounds, bounds, nbounds * sizeof(*m->bounds));
	}
	m->nbounds = nbounds;
	return registry_add(reg, m, out, err);
}

int obs_gauge_func_new(struct obs_registry *reg, const char *name, const char *help,
		       const char *const *labels, obs_collect_fn fn, void *arg,
		       struct dt_err *err)
{
	struct obs_metric *m;
	int rc;

	if (!fn)
		return dt_err_set(err, -EINVAL, "gauge %s: no callback", name ? name : "(null)");
	rc = metric_new(KIND_GAUGE_FUNC, name, help, labels, &m, err);
	if (rc)
		return rc;
	m->fn = fn;
	m->fn_arg = arg;
	return registry_add(reg, m, NULL, err);
}

/* ---- series ---- */

static int cmp_values(char *const *a, const char *const *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int c = strcmp(a[i], b[i]);

		if (c)
			return c;
	}
	return 0;
}

/* Index of the series with these values, or where it would go. */
static size_t series_find(const struct obs_metric *m, const char *const *values, bool *found)
{
	size_t lo = 0, hi = m->nseries;

	*found = false;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = cmp_values(m->series[mid]->values, values, m->nlabels);

		if (c == 0) {
			*found = true;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static struct obs_series *series_alloc(struct obs_metric *m, const char *const *values)
{
	size_t nbuckets = m->kind == KIND_HISTOGRAM ? m->nbounds + 1 : 0;
	struct obs_series *s = calloc(1, sizeof(*s) + nbuckets * sizeof(s->buckets[0]));

	if (!s)
		return NULL;
	s->metric = m;
	pthread_mutex_init(&s->lock, NULL);
	for (size_t i = 0; i < m->nlabels; i++) {
		s->values[i] = strdup(values[i]);
		if (!s->values[i]) {
			free_values(s->values, i);
			pthread_mutex_destroy(&s->lock);
			free(s);
			return NULL;
		}
	}
	return s;
}

static bool series_insert(struct obs_metric *m, size_t at, struct obs_series *s)
{
	if (DT_GROW(m->series, m->cap, m->nseries + 1))
		return false;
	memmove(m->series + at + 1, m->series + at, (m->nseries - at) * sizeof(*m->series));
	m->series[at] = s;
	m->nseries++;
	return true;
}

struct obs_series *obs_series_v(struct obs_metric *m, const char *const *values)
{
	struct obs_series *s = NULL;
	bool found;
	size_t at;

	if (!m || m->kind == KIND_GAUGE_FUNC)
		return NULL;
	for (size_t i = 0; i < m->nlabels; i++)
		if (!values || !values[i])
			return NULL;
	if (values && values[m->nlabels])
		return NULL;
	pthread_mutex_lock(&m->lock);
	at = series_find(m, values, &found);
	if (found) {
		s = m->series[at];
	} else if (m->nseries < OBS_SERIES_MAX) {
		s = series_alloc(m, values);
		if (s && !series_insert(m, at, s)) {
			free_values(s->values, m->nlabels);
			pthread_mutex_destroy(&s->lock);
			free(s);
			s = NULL;
		}
	}
	pthread_mutex_unlock(&m->lock);
	return s;
}

/* Gathers NULL-terminated label values into values[OBS_LABELS_MAX + 1];
 * false when there are too many. */
static bool gather_values(va_list ap, const char **values)
{
	size_t n = 0;
	const char *v;

	while ((v = va_arg(ap, const char *)) != NULL) {
		if (n == OBS_LABELS_MAX)
			return false;
		values[n++] = v;
	}
	values[n] = NULL;
	return true;
}

struct obs_series *obs_series(struct obs_metric *m, ...)
{
	const char *values[OBS_LABELS_MAX + 1];
	bool ok;
	va_list ap;

	va_start(ap, m);
	ok = gather_values(ap, values);
	va_end(ap);
	return ok ? obs_series_v(m, values) : NULL;
}

static double bits_to_double(uint64_t bits)
{
	double d;

	memcpy(&d, &bits, sizeof(d));
	return d;
}

static uint64_t double_to_bits(double d)
{
	uint64_t bits;

	memcpy(&bits, &d, sizeof(bits));
	return bits;
}

static bool is_kind(const struct obs_series *s, enum obs_kind kind)
{
	return s && s->metric->kind == kind;
}

void obs_add(struct obs_series *s, uint64_t n)
{
	if (is_kind(s, KIND_COUNTER))
		atomic_fetch_add_explicit(&s->word, n, memory_order_relaxed);
}

void obs_set(struct obs_series *s, double v)
{
	if (is_kind(s, KIND_GAUGE))
		atomic_store_explicit(&s->word, double_to_bits(v), memory_order_relaxed);
}

void obs_gauge_add(struct obs_series *s, double delta)
{
	uint64_t old;

	if (!is_kind(s, KIND_GAUGE))
		return;
	old = atomic_load_explicit(&s->word, memory_order_relaxed);
	while (!atomic_compare_exchange_weak_explicit(
		&s->word, &old, double_to_bits(bits_to_double(old) + delta),
		memory_order_relaxed, memory_order_relaxed))
		;
}

void obs_inc(struct obs_series *s)
{
	if (is_kind(s, KIND_COUNTER))
		obs_add(s, 1);
	else
		obs_gauge_add(s, 1);
}

void obs_observe(struct obs_series *s, double v)
{
	const struct obs_metric *m;
	size_t i = 0;

	if (!is_kind(s, KIND_HISTOGRAM))
		return;
	m = s->metric;
	while (i < m->nbounds && !(v <= m->bounds[i]))
		i++;            /* NaN falls through to +Inf, as in client_golang */
	pthread_mutex_lock(&s->lock);
	s->buckets[i]++;
	s->count++;
	s->sum += v;
	pthread_mutex_unlock(&s->lock);
}

/* ---- callback gauges ---- */

void obs_collect(struct obs_collector *c, double value, ...)
{
	const char *values[OBS_LABELS_MAX + 1];
	struct collected *it;
	size_t n = 0;
	bool ok;
	va_list ap;

	va_start(ap, value);
	ok = gather_values(ap, values);
	va_end(ap);
	while (ok && values[n])
		n++;
	if (!ok || n != c->metric->nlabels || c->oom)
		return;
	if (DT_GROW(c->items, c->cap, c->n + 1)) {
		c->oom = true;
		return;
	}
	it = &c->items[c->n];
	for (size_t i = 0; i < n; i++) {
		it->values[i] = strdup(values[i]);
		if (!it->values[i]) {
			free_values(it->values, i);
			c->oom = true;
			return;
		}
	}
	it->value = value;
	it->order = c->n++;
}

static int cmp_collected(const void *pa, const void *pb, void *nlabels)
{
	const struct collected *a = pa, *b = pb;
	int c = cmp_values(a->values, (const char *const *)b->values, *(size_t *)nlabels);

	if (c)
		return c;
	return a->order < b->order ? -1 : a->order > b->order;
}

static void collector_sort(struct obs_collector *c)
{
	size_t nlabels = c->metric->nlabels;

	if (c->n > 1)   /* no series: items is NULL, which qsort_r may not be given */
		qsort_r(c->items, c->n, sizeof(*c->items), cmp_collected, &nlabels);
}

static void collector_free(struct obs_collector *c)
{
	for (size_t i = 0; i < c->n; i++)
		free_values(c->items[i].values, c->metric->nlabels);
	free(c->items);
}

/* ---- text format ---- */

/* The shortest decimal that reads back as v, in the form Go's
 * strconv.FormatFloat(v, 'g', -1, 64) gives (what Prometheus clients
 * print): exponent notation below 1e-4 and from 1e+06 on. */
static void format_double(char buf[32], double v)
{
	int prec, exp;

	if (isnan(v)) {
		strcpy(buf, "NaN");
		return;
	}
	if (isinf(v)) {
		strcpy(buf, v > 0 ? "+Inf" : "-Inf");
		return;
	}
	for (prec = 1; prec < 17; prec++) {
		snprintf(buf, 32, "%.*e", prec - 1, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	snprintf(buf, 32, "%.*e", prec - 1, v);
	exp = atoi(strchr(buf, 'e') + 1);
	if (exp >= -4 && exp < 6)
		snprintf(buf, 32, "%.*f", prec - 1 - exp > 0 ? prec - 1 - exp : 0, v);
}

/* HELP text and label values: escaped as the format says, and valid
 * UTF-8 (which a scraper requires) whatever a peer sent: a byte that does
 * not start a valid sequence becomes U+FFFD. */
static void put_escaped(struct strbuf *out, const char *s, bool quote)
{
	size_t len = strlen(s);

	for (size_t i = 0; i < len;) {
		uint32_t cp;
		size_t n = utf8_decode(s + i, len - i, &cp);

		if (s[i] == '\\')
			sb_puts(out, "\\\\");
		else if (s[i] == '\n')
			sb_puts(out, "\\n");
		else if (quote && s[i] == '"')
			sb_puts(out, "\\\"");
		else if (n == 0)
			sb_puts(out, "\xef\xbf\xbd");
		else
			sb_append(out, s + i, n);
		i += n ? n : 1;
	}
}

/* name{l1="v1",...,extra_name="extra_value"} value\n */
static void put_sample(struct strbuf *out, const struct obs_metric *m, const char *suffix,
		       char *const *values, const char *le, const char *value)
{
	bool any = m->nlabels || le;

	sb_puts(out, m->name);
	sb_puts(out, suffix);
	if (any)
		sb_putc(out, '{');
	for (size_t i = 0; i < m->nlabels; i++) {
		sb_printf(out, "%s%s=\"", i ? "," : "", m->labels[i]);
		put_escaped(out, values[i], true);
		sb_putc(out, '"');
	}
	if (le)
		sb_printf(out, "%sle=\"%s\"", m->nlabels ? "," : "", le);
	if (any)
		sb_putc(out, '}');
	sb_printf(out, " %s\n", value);
}

static void put_header(struct strbuf *out, const struct obs_metric *m)
{
	sb_printf(out, "# HELP %s ", m->name);
	put_escaped(out, m->help, false);
	sb_printf(out, "\n# TYPE %s %s\n", m->name, kind_names[m->kind]);
}

static void render_histogram(struct strbuf *out, const struct obs_metric *m,
			     struct obs_series *s)
{
	uint64_t cumulative = 0;
	char le[32], num[32];

	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i <= m->nbounds; i++) {
		cumulative += s->buckets[i];
		if (i < m->nbounds)
			format_double(le, m->bounds[i]);
		else
			strcpy(le, "+Inf");
		snprintf(num, sizeof(num), "%llu", (unsigned long long)cumulative);
		put_sample(out, m, "_bucket", s->values, le, num);
	}
	format_double(num, s->sum);
	put_sample(out, m, "_sum", s->values, NULL, num);
	snprintf(num, sizeof(num), "%llu", (unsigned long long)s->count);
	put_sample(out, m, "_count", s->values, NULL, num);
	pthread_mutex_unlock(&s->lock);
}

static void render_series(struct strbuf *out, struct obs_metric *m)
{
	char num[32];

	pthread_mutex_lock(&m->lock);
	if (m->nseries)
		put_header(out, m);
	for (size_t i = 0; i < m->nseries; i++) {
		struct obs_series *s = m->series[i];
		uint64_t word = atomic_load_explicit(&s->word, memory_order_relaxed);

		if (m->kind == KIND_HISTOGRAM) {
			render_histogram(out, m, s);
			continue;
		}
		if (m->kind == KIND_COUNTER)
			snprintf(num, sizeof(num), "%llu", (unsigned long long)word);
		else
			format_double(num, bits_to_double(word));
		put_sample(out, m, "", s->values, NULL, num);
	}
	pthread_mutex_unlock(&m->lock);
}

static int render_func(struct strbuf *out, const struct obs_metric *m)
{
	struct obs_collector c = { .metric = m };
	char num[32];

	m->fn(&c, m->fn_arg);
	if (c.oom) {
		collector_free(&c);
		return -ENOMEM;
	}
	collector_sort(&c);
	for (size_t i = 0; i < c.n; i++) {
		bool last = i + 1 == c.n ||
			    cmp_values(c.items[i].values,
				       (const char *const *)c.items[i + 1].values, m->nlabels);

		if (i == 0)
			put_header(out, m);
		if (!last)
			continue;       /* a later call gave this label set again */
		format_double(num, c.items[i].value);
		put_sample(out, m, "", c.items[i].values, NULL, num);
	}
	collector_free(&c);
	return 0;
}

static int cmp_metric_names(const void *a, const void *b)
{
	const struct obs_metric *const *ma = a, *const *mb = b;

	return strcmp((*ma)->name, (*mb)->name);
}

/* Metrics are never removed, so a copy of the pointers taken under the
 * lock stays valid; callbacks then run without the registry lock. */
static int snapshot(struct obs_registry *reg, struct obs_metric ***out, size_t *n)
{
	int rc = 0;

	pthread_mutex_lock(&reg->lock);
	*n = reg->n;
	*out = malloc((reg->n ? reg->n : 1) * sizeof(**out));
	if (*out)
		memcpy(*out, reg->metrics, reg->n * sizeof(**out));
	else
		rc = -ENOMEM;
	pthread_mutex_unlock(&reg->lock);
	if (!rc)
		qsort(*out, *n, sizeof(**out), cmp_metric_names);
	return rc;
}

int obs_registry_render(struct obs_registry *reg, struct strbuf *out, struct dt_err *err)
{
	struct obs_metric **metrics;
	size_t n;
	int rc = snapshot(reg, &metrics, &n);

	for (size_t i = 0; !rc && i < n; i++) {
		if (metrics[i]->kind == KIND_GAUGE_FUNC)
			rc = render_func(out, metrics[i]);
		else
			render_series(out, metrics[i]);
	}
	free(metrics);
	if (!rc)
		rc = sb_error(out);
	if (rc)
		return dt_err_set(err, rc, "metrics: out of memory while rendering");
	return 0;
}
