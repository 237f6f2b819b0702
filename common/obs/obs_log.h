/* obs_log.h - logfmt event lines for the daemons (one line per event).
 *
 *   obs_log(OBS_INFO, "report", "node", name, "verdict", "match", NULL);
 *   -> ts=2026-12-03T05:59:01.123Z level=info event=report node=n1 verdict=match
 *
 *   struct obs_ev ev;
 *   obs_ev_begin(&ev, OBS_WARN, "store_error");
 *   obs_ev_str(&ev, "db", path);
 *   obs_ev_int(&ev, "code", rc);
 *   obs_ev_end(&ev);
 *
 * Each line is written to the log fd (stderr unless obs_log_set_fd says
 * otherwise) with one write(2) under a process-wide lock, so lines from
 * concurrent threads never interleave. Values are quoted and escaped per
 * logfmt when they need it. Every function is thread-safe.
 *
 * Secrets: values are text only. There is deliberately no call that takes a
 * byte buffer, a key, a certificate or a hex dump: callers log the name of a
 * TLS file or a certificate's subject, never what the file holds. */
#ifndef OBS_LOG_H
#define OBS_LOG_H

#include <stdbool.h>
#include <stdarg.h>

#include "err.h"
#include "strbuf.h"

enum obs_level {
	OBS_DEBUG,
	OBS_INFO,
	OBS_WARN,
	OBS_ERROR,
};

/* Events below level are dropped (default OBS_INFO). */
void obs_log_set_level(enum obs_level level);
bool obs_log_enabled(enum obs_level level);
/* "debug", "info", "warn" or "error" (for a --log-level flag). */
int obs_log_parse_level(const char *text, enum obs_level *out, struct dt_err *err);
/* The same as an option table's setter (common/opts' OPT_FUNC): sets the
 * process's level, dst unused. OBS_LOG_LEVEL_OPT is the daemons' row. */
int obs_log_level_opt(void *dst, const char *text, struct dt_err *err);
#define OBS_LOG_LEVEL_OPT                                                               \
	{ .name = "log-level", .type = OPT_FUNC, .arg = "L", .set = obs_log_level_opt, \
	  .help = "debug, info (default), warn, error" }
const char *obs_level_name(enum obs_level level);
/* Where lines go (default 2); returns the previous fd. The caller keeps
 * ownership of fd and must keep it open while it is set. */
int obs_log_set_fd(int fd);

/* One event with string fields: key, value pairs, ended by NULL. A NULL
 * value is written as "". */
void obs_log(enum obs_level level, const char *event, ...)
	__attribute__((sentinel));
/* One event with a single field whose value is formatted. */
void obs_logf(enum obs_level level, const char *event, const char *key,
	      const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* An event built field by field, for mixed types. When the level is
 * disabled the calls do nothing and allocate nothing. */
struct obs_ev {
	struct strbuf line;
	bool on;
};

void obs_ev_begin(struct obs_ev *ev, enum obs_level level, const char *event);
void obs_ev_str(struct obs_ev *ev, const char *key, const char *value);
void obs_ev_int(struct obs_ev *ev, const char *key, long long value);
void obs_ev_f(struct obs_ev *ev, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void obs_ev_vf(struct obs_ev *ev, const char *key, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));
/* Write the line and release the event's memory. */
void obs_ev_end(struct obs_ev *ev);

#endif
