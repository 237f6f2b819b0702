/* obs_http.h - the daemons' operations endpoint on libmicrohttpd:
 *
 *   GET /metrics  the registry in the Prometheus text format 0.0.4
 *   GET /healthz  200 "ok" while the process serves at all, or, with a live
 *                 callback (obs_http_set_live), when it says so, else 503
 *   GET /readyz   200 "ok" when the ready callback says so, else 503 and
 *                 the reason it gave
 *   other paths 404; methods other than GET and HEAD 405.
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

struct obs_http;

/* True when ready; otherwise writes a one-line reason into why. Called on
 * the server thread for every /readyz request. */
typedef bool (*obs_ready_fn)(void *arg, char *why, size_t whylen);

/* addr: "HOST:PORT", ":PORT" (every address, IPv6 and IPv4 where the host
 * has both) or "[IPV6]:PORT"; PORT 0 picks a free port (obs_http_port).
 * ready may be NULL (always ready). reg and ready_arg must outlive the
 * server. */
int obs_http_start(const char *addr, struct obs_registry *reg, obs_ready_fn ready,
		   void *ready_arg, struct obs_http **out, struct dt_err *err);
/* From now on /healthz asks live (same contract as ready): for a daemon
 * whose liveness is more than "the process answers" (the agent: a report
 * acknowledged recently). NULL goes back to always live. */
void obs_http_set_live(struct obs_http *srv, obs_ready_fn live, void *arg);
/* The port the server listens on. */
int obs_http_port(const struct obs_http *srv);
/* Close the listener and every connection, join the thread, free srv. */
void obs_http_stop(struct obs_http *srv);

#endif
