/* kube_stream.c - a watch body cut into events. The bytes arrive as the
 * transport hands them over (a chunk may end inside an event or hold
 * several), so json-c's tokener keeps the partial value between calls and
 * each complete value is handed on as soon as its last byte came. One
 * value may not grow past max_value bytes: a broken or hostile server
 * cannot make the client buffer without bound. */
#include <limits.h>
#include <string.h>

#include "kube_internal.h"

int kube_stream_init(struct kube_stream *s, size_t max_value)
{
	memset(s, 0, sizeof(*s));
	s->tok = json_tokener_new_ex(DOC_MAX_DEPTH);
	s->max_value = max_value ? max_value : (32u << 20);
	return s->tok ? 0 : -ENOMEM;
}

void kube_stream_fini(struct kube_stream *s)
{
	if (s->tok)
		json_tokener_free(s->tok);
	s->tok = NULL;
}

void kube_stream_reset(struct kube_stream *s)
{
	json_tokener_reset(s->tok);
	s->in_value = 0;
}

static bool blank(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != ' ' && p[i] != '\n' && p[i] != '\r' && p[i] != '\t')
			return false;
	return true;
}

int kube_stream_feed(struct kube_stream *s, const char *buf, size_t len,
		     int (*fn)(void *arg, json_object *v), void *arg, struct dt_err *err)
{
	while (len) {
		int piece = len > INT_MAX / 2 ? INT_MAX / 2 : (int)len;
		json_object *v;
		enum json_tokener_error je;
		size_t used;
		int rc;

		/* White space between values is no part of one. */
		if (!s->in_value && blank(buf, 1)) {
			buf++;
			len--;
			continue;
		}
		v = json_tokener_parse_ex(s->tok, buf, piece);
		je = json_tokener_get_error(s->tok);
		used = v ? json_tokener_get_parse_end(s->tok) : (size_t)piece;
		if (!v && je != json_tokener_continue) {
			rc = dt_err_set(err, KUBE_EPROTO, "watch stream: not JSON: %s",
					json_tokener_error_desc(je));
			kube_stream_reset(s);
			return rc;
		}
		s->in_value += used;
		if (s->in_value > s->max_value) {
			json_object_put(v);
			kube_stream_reset(s);
			return dt_err_set(err, -E2BIG, "watch stream: an event exceeds %zu MiB",
					  s->max_value >> 20);
		}
		buf += used;
		len -= used;
		if (!v)
			continue;
		kube_stream_reset(s);
		rc = fn(arg, v);
		json_object_put(v);
		if (rc)
			return rc;
	}
	return 0;
}
