/* strbuf.c - the growable output buffer. */
#include "strbuf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sb_init(struct strbuf *sb)
{
	sb->buf = NULL;
	sb->len = sb->cap = 0;
	sb->oom = false;
}

static bool sb_reserve(struct strbuf *sb, size_t extra)
{
	size_t need, cap;
	char *buf;

	if (sb->oom)
		return false;
	if (extra > (size_t)-1 / 2 - sb->len)
		goto fail;
	need = sb->len + extra + 1;
	if (need <= sb->cap)
		return true;
	cap = sb->cap ? sb->cap : 64;
	while (cap < need)
		cap *= 2;
	buf = realloc(sb->buf, cap);
	if (!buf)
		goto fail;
	sb->buf = buf;
	sb->cap = cap;
	return true;
fail:
	sb->oom = true;
	return false;
}

void sb_append_grow(struct strbuf *sb, const char *s, size_t n)
{
	if (!sb_reserve(sb, n))
		return;
	memcpy(sb->buf + sb->len, s, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
}

void sb_puts(struct strbuf *sb, const char *s)
{
	sb_append(sb, s, strlen(s));
}

void sb_vprintf(struct strbuf *sb, const char *fmt, va_list ap)
{
	va_list ap2;
	int n;

	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0 || !sb_reserve(sb, (size_t)n))
		return;
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	sb->len += (size_t)n;
}

void sb_printf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sb_vprintf(sb, fmt, ap);
	va_end(ap);
}

void sb_join_list(struct strbuf *sb, const char *list, char sep, const char *conj)
{
	const char *last = strrchr(list, sep);

	for (const char *p = list; *p; p++) {
		if (*p != sep) {
			sb_putc(sb, *p);
		} else if (p == last) {
			sb_putc(sb, ' ');
			sb_puts(sb, conj);
			sb_putc(sb, ' ');
		} else {
			sb_puts(sb, ", ");
		}
	}
}

void sb_repeat(struct strbuf *sb, char c, size_t n)
{
	if (!sb_reserve(sb, n))
		return;
	memset(sb->buf + sb->len, c, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
}

void sb_truncate(struct strbuf *sb, size_t len)
{
	if (len >= sb->len)
		return;
	sb->len = len;
	sb->buf[len] = '\0';
}

void sb_reset(struct strbuf *sb)
{
	sb->len = 0;
	if (sb->buf)
		sb->buf[0] = '\0';
}

const char *sb_str(const struct strbuf *sb)
{
	return sb->buf ? sb->buf : "";
}

char *sb_detach(struct strbuf *sb)
{
	char *s = sb->oom ? NULL : sb->buf;

	if (sb->oom)
		free(sb->buf);
	else if (!s)
		s = calloc(1, 1);
	sb_init(sb);
	return s;
}

int sb_error(const struct strbuf *sb)
{
	return sb->oom ? -ENOMEM : 0;
}

void sb_free(struct strbuf *sb)
{
	free(sb->buf);
	sb_init(sb);
}
