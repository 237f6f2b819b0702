/* err.c - filling and prefixing struct dt_err messages. */
#include "err.h"

#include <stdio.h>
#include <string.h>

int dt_err_vset(struct dt_err *err, int code, const char *fmt, va_list ap)
{
	if (code > 0)
		code = -code;
	if (err) {
		err->code = code;
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	}
	return code;
}

int dt_err_set(struct dt_err *err, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	code = dt_err_vset(err, code, fmt, ap);
	va_end(ap);
	return code;
}

int dt_err_prefix(struct dt_err *err, const char *fmt, ...)
{
	char prefix[DT_ERR_MSG_MAX];
	char old[DT_ERR_MSG_MAX];
	va_list ap;

	if (!err)
		return -EINVAL;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof(old));
	snprintf(err->msg, sizeof(err->msg), "%s%s", prefix, old);
	return err->code;
}

void dt_err_clear(struct dt_err *err)
{
	if (err) {
		err->code = 0;
		err->msg[0] = '\0';
	}
}
