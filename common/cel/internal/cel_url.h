/* cel_url.h - Go's url.ParseRequestURI as the URL library (cel_lib_url.c)
 * implements it, for the format library's uri format, whose validate()
 * returns the parse error's text. */
#ifndef DT_CEL_URL_H
#define DT_CEL_URL_H

#include <stddef.h>

#include "cel_value.h"

/* 0 when s is a request URI. Otherwise -EINVAL with *msg a string (in the
 * evaluation's arena) worded as Go's *url.Error prints it:
 * `parse "s": invalid URI for request`; -ENOMEM with *msg the error value. */
int cel_url_check(struct cel_ctx *ctx, const char *s, size_t len, struct cel_value *msg);

#endif
