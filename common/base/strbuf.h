/* strbuf.h - a growable, NUL-terminated byte buffer for building output.
 *
 * Appends never fail loudly: on allocation failure the buffer remembers it
 * (sb->oom) and ignores further appends, so a writer checks once at the end
 * with sb_error(). */
#ifndef DT_STRBUF_H
#define DT_STRBUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

struct strbuf {
	char *buf;      /* always NUL-terminated once anything was appended */
	size_t len;
	size_t cap;
	bool oom;
};

#define STRBUF_INIT { NULL, 0, 0, false }

void sb_init(struct strbuf *sb);
/* Out of line: the append that has to grow the buffer first. */
void sb_append_grow(struct strbuf *sb, const char *s, size_t n);

/* Appends inline while the buffer has room: the writers (JSON, YAML)
 * append a few bytes at a time, hundreds of thousands of times. */
static inline void sb_append(struct strbuf *sb, const char *s, size_t n)
{
	if (sb->oom || n >= sb->cap - sb->len) {  /* also when nothing is allocated */
		sb_append_grow(sb, s, n);
		return;
	}
	memcpy(sb->buf + sb->len, s, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
}

static inline void sb_putc(struct strbuf *sb, char c)
{
	if (sb->oom || sb->cap - sb->len < 2) {
		sb_append_grow(sb, &c, 1);
		return;
	}
	sb->buf[sb->len++] = c;
	sb->buf[sb->len] = '\0';
}

void sb_puts(struct strbuf *sb, const char *s);
void sb_printf(struct strbuf *sb, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void sb_vprintf(struct strbuf *sb, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));
/* The items of list (separated by sep) as an English list: "a, b and c"
 * with conj "and", "a, b or c" with "or" (a message's alternatives). */
void sb_join_list(struct strbuf *sb, const char *list, char sep, const char *conj);
/* n copies of c (indentation, padding). */
void sb_repeat(struct strbuf *sb, char c, size_t n);
void sb_reset(struct strbuf *sb);           /* len = 0, keeps the memory */
/* Cut back to len bytes (no-op when already shorter): how a writer takes
 * back what it half wrote. */
void sb_truncate(struct strbuf *sb, size_t len);
/* The contents ("" when empty); valid until the next append. */
const char *sb_str(const struct strbuf *sb);
/* Hand the string to the caller (who frees it); NULL after an OOM. */
char *sb_detach(struct strbuf *sb);
/* 0, or -ENOMEM when an append was lost. */
int sb_error(const struct strbuf *sb);
void sb_free(struct strbuf *sb);

#endif
