/* obs_http.h - the daemons' operations endpoint on libmicrohttpd:
 *
 *   GET /metrics  the registry in the Prometheus text format 0.0.4
 *   GET /healthz  200 "ok" while the process serves at all, or, with a live
 *                 callback (obs_http_opts.live), when it says so, else 503
 *   GET /readyz   200 "ok" when the ready callback says so, else 503 and
 *                 the reason it gave
 *   other paths   the daemon's pages, when it serves any (obs_http_opts.page),
 *                 else 404
 *   methods other than GET and HEAD 405 (the endpoint is read-only).
 *
 * The server runs on one internal thread with non-blocking sockets, a cap
 * on connections (in all and per client address), a per-connection memory
 * cap and an idle timeout, so a slow or stuck client costs one slot until
 * the timeout and never blocks other scrapes. */
#ifndef OBS_HTTP_H
#define OBS_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"
#include "obs_metrics.h"
#include "strbuf.h"

struct obs_http;

/* True when ready; otherwise writes a one-line reason into why. Called on
 * the server thread for every /readyz request. */
typedef bool (*obs_ready_fn)(void *arg, char *why, size_t whylen);

/* ---- Pages: the paths the daemon serves itself (the coordinator's status
 * pages). ---- */

struct obs_http_request;

/* The request's path, %-decoded ("/types/p5.48xlarge"). */
const char *obs_http_path(const struct obs_http_request *r);
/* A query argument, decoded ("+" is a space); NULL when absent. */
const char *obs_http_arg(const struct obs_http_request *r, const char *key);

struct obs_http_page {
	unsigned status;                /* 200 unless the page sets another */
	const char *content_type;       /* static text; default HTML, UTF-8 */
	struct strbuf body;             /* the server sends and frees it */
};

/* Serve req into page: 0 when it is served (whatever its status), -ENOENT
 * for a path it does not know (404), another negative code for a failure
 * (500; the page's body is dropped). Runs on the server thread, so a slow
 * page delays the scrapes behind it: keep pages bounded. Every page goes
 * out with headers that keep it inert: no caching, no framing, no
 * sniffing, no referrer, and a content security policy that allows no
 * script, no outside resource and no form target but the server. */
typedef int (*obs_page_fn)(void *arg, const struct obs_http_request *req,
			   struct obs_http_page *page);

struct obs_http_opts {
	const char *addr;               /* as obs_http_start's */
	struct obs_registry *reg;
	obs_ready_fn ready;             /* may be NULL */
	void *ready_arg;
	/* /healthz, for a daemon whose liveness is more than "the process
	 * answers" (the agent: a report acknowledged recently); NULL: 200
	 * while it serves. Same contract as ready. */
	obs_ready_fn live;
	void *live_arg;
	obs_page_fn page;               /* may be NULL: other paths are 404 */
	void *page_arg;                 /* must outlive the server */
};

/* obs_http_start with pages. */
int obs_http_start_opts(const struct obs_http_opts *o, struct obs_http **out,
			struct dt_err *err);

/* addr: "HOST:PORT", ":PORT" (every address, IPv6 and IPv4 where the host
 * has both) or "[IPV6]:PORT"; PORT 0 picks a free port (obs_http_port).
 * ready may be NULL (always ready). reg and ready_arg must outlive the
 * server. */
int obs_http_start(const char *addr, struct obs_registry *reg, obs_ready_fn ready,
		   void *ready_arg, struct obs_http **out, struct dt_err *err);
/* The port the server listens on. */
int obs_http_port(const struct obs_http *srv);
/* Close the listener and every connection, join the thread, free srv. */
void obs_http_stop(struct obs_http *srv);

#endif
