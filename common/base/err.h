/* err.h - the error struct every module fills at its boundary.
 *
 * Functions return 0 on success or a negative errno-style code; when they
 * fail they also write a human-readable message into a caller-supplied
 * struct dt_err (which may be NULL when the caller does not care). */
#ifndef DT_ERR_H
#define DT_ERR_H

#include <errno.h>
#include <stdarg.h>

#define DT_ERR_MSG_MAX 1024

struct dt_err {
	int code;                   /* negative errno, 0 when clear */
	char msg[DT_ERR_MSG_MAX];
};

/* Fill err (if not NULL) and return code, so `return dt_err_set(...)` works.
 * A positive code is negated. */
int dt_err_set(struct dt_err *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int dt_err_vset(struct dt_err *err, int code, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

/* Prepend context ("file.yaml: ") to an existing message; returns err->code. */
int dt_err_prefix(struct dt_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

void dt_err_clear(struct dt_err *err);

#endif
