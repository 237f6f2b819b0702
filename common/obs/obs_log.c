/* obs_log.c - logfmt lines: quoting, the timestamp, and the single write. */
#include "obs_log.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "escape.h"

static const char *const level_names[] = {
	[OBS_DEBUG] = "debug",
	[OBS_INFO] = "info",
	[OBS_WARN] = "warn",
	[OBS_ERROR] = "error",
};

static atomic_int log_level = OBS_INFO;
static atomic_int log_fd = 2;
/* Serializes writers, so that a line longer than PIPE_BUF (which write(2)
 * may not keep whole on a pipe) still never meets another one. */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

void obs_log_set_level(enum obs_level level)
{
	atomic_store(&log_level, (int)level);
}

bool obs_log_enabled(enum obs_level level)
{
	return (int)level >= atomic_load(&log_level);
}

const char *obs_level_name(enum obs_level level)
{
	if ((unsigned)level >= sizeof(level_names) / sizeof(level_names[0]))
		return "unknown";
	return level_names[level];
}

int obs_log_parse_level(const char *text, enum obs_level *out, struct dt_err *err)
{
	for (size_t i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++) {
		if (strcmp(text, level_names[i]) == 0) {
			*out = (enum obs_level)i;
			return 0;
		}
	}
	return dt_err_set(err, -EINVAL,
			  "log level \"%s\": expected debug, info, warn or error", text);
}

int obs_log_level_opt(void *dst, const char *text, struct dt_err *err)
{
	enum obs_level level;

	(void)dst;
	if (obs_log_parse_level(text, &level, err))
		return -EINVAL;
	obs_log_set_level(level);
	return 0;
}

int obs_log_set_fd(int fd)
{
	return atomic_exchange(&log_fd, fd);
}

/* Keys are program constants; one that would break the line is still
 * written, with the offending bytes replaced. */
static void put_key(struct strbuf *sb, const char *key)
{
	if (!key || !*key)
		key = "_";
	for (; *key; key++) {
		unsigned char c = (unsigned char)*key;

		sb_putc(sb, c <= ' ' || c == 0x7f || c == '"' || c == '=' ? '_' : (char)c);
	}
}

static void put_timestamp(struct strbuf *sb)
{
	struct timespec now;
	struct tm tm;
	char buf[32];

	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
	sb_printf(sb, "ts=%s.%03ldZ", buf, now.tv_nsec / 1000000);
}

static void write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;     /* nowhere left to report a failed log write */
		buf += n;
		len -= (size_t)n;
	}
}

static void emit_line(struct strbuf *line)
{
	static const char oom_line[] = "level=error event=log_oom\n";
	const char *buf = oom_line;
	size_t len = sizeof(oom_line) - 1;

	sb_putc(line, '\n');
	if (!sb_error(line)) {
		buf = line->buf;
		len = line->len;
	}
	pthread_mutex_lock(&log_lock);
	write_all(atomic_load(&log_fd), buf, len);
	pthread_mutex_unlock(&log_lock);
}

void obs_ev_begin(struct obs_ev *ev, enum obs_level level, const char *event)
{
	sb_init(&ev->line);
	ev->on = obs_log_enabled(level);
	if (!ev->on)
		return;
	put_timestamp(&ev->line);
	sb_printf(&ev->line, " level=%s event=", obs_level_name(level));
	sb_logfmt_value(&ev->line, event ? event : "");
}

static void put_field_key(struct obs_ev *ev, const char *key)
{
	sb_putc(&ev->line, ' ');
	put_key(&ev->line, key);
	sb_putc(&ev->line, '=');
}

void obs_ev_str(struct obs_ev *ev, const char *key, const char *value)
{
	if (!ev->on)
		return;
	put_field_key(ev, key);
	sb_logfmt_value(&ev->line, value ? value : "");
}

void obs_ev_int(struct obs_ev *ev, const char *key, long long value)
{
	if (!ev->on)
		return;
	put_field_key(ev, key);
	sb_printf(&ev->line, "%lld", value);
}

void obs_ev_vf(struct obs_ev *ev, const char *key, const char *fmt, va_list ap)
{
	va_list copy;
	char *text;
	int n;

	if (!ev->on)
		return;
	va_copy(copy, ap);
	n = vsnprintf(NULL, 0, fmt, copy);
	va_end(copy);
	text = n >= 0 ? malloc((size_t)n + 1) : NULL;
	if (!text) {
		ev->line.oom = true;    /* the line becomes the log_oom line */
		return;
	}
	vsnprintf(text, (size_t)n + 1, fmt, ap);
	obs_ev_str(ev, key, text);
	free(text);
}

void obs_ev_f(struct obs_ev *ev, const char *key, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	obs_ev_vf(ev, key, fmt, ap);
	va_end(ap);
}

void obs_ev_end(struct obs_ev *ev)
{
	if (ev->on)
		emit_line(&ev->line);
	sb_free(&ev->line);
	ev->on = false;
}

void obs_log(enum obs_level level, const char *event, ...)
{
	struct obs_ev ev;
	const char *key;
	va_list ap;

	obs_ev_begin(&ev, level, event);
	if (!ev.on)
		return;
	va_start(ap, event);
	while ((key = va_arg(ap, const char *)) != NULL)
		obs_ev_str(&ev, key, va_arg(ap, const char *));
	va_end(ap);
	obs_ev_end(&ev);
}

void obs_logf(enum obs_level level, const char *event, const char *key,
	      const char *fmt, ...)
{
	struct obs_ev ev;
	va_list ap;

	obs_ev_begin(&ev, level, event);
	if (!ev.on)
		return;
	va_start(ap, fmt);
	obs_ev_vf(&ev, key, fmt, ap);
	va_end(ap);
	obs_ev_end(&ev);
}
