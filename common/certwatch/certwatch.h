/* certwatch.h - a daemon's TLS files, watched: reloaded when they change,
 * and the validity of the certificate in use known at any moment.
 *
 *   struct certwatch_opts o = { .cert = c, .key = k, .ca = ca, .role = "server",
 *                               .reload = reload_tls, .user = srv, .reg = reg };
 *   certwatch_start(&o, &w, &err);
 *   ...  certwatch_poke(w);             (SIGHUP: reload now)
 *   ...  certwatch_check(w, now, why, sizeof(why))   (a health check)
 *   certwatch_stop(w);
 *
 * Certificates are renewed in place: kubelet's Secret and projected
 * volumes and cert-manager's CSI driver write a new directory and swap the
 * `..data` symlink the files point through (an atomic rename in the
 * files' directory), and people copy over the files. A thread watches the
 * directories of the three files with inotify, waits for the writes to
 * settle, and calls reload when what the paths lead to changed (device,
 * inode, size, times); it also polls, for file systems without inotify and
 * for files that are links into other directories. A reload that fails
 * (a key of another certificate while the pair is half written) keeps the
 * old files and is retried at the next change or poll.
 *
 * The validity is that of the certificate in use (the first of --tls-cert)
 * and of the CA bundle (one certificate in it valid): an expired or
 * not-yet-valid one makes certwatch_check fail with the reason, is logged
 * once when it happens (event tls_certificate_invalid) and shows in the
 * metrics:
 *
 *   dratopo_tls_certificate_valid                      1 or 0, now
 *   dratopo_tls_not_after_timestamp_seconds{file}      cert, ca (the latest)
 *   dratopo_tls_not_before_timestamp_seconds{file}
 *   dratopo_tls_reloads_total{result}                  ok, failed (from 0)
 *
 * Log events: tls_reload (result, reason: changed or signal), and
 * tls_certificate_invalid / tls_certificate_valid. Only paths and dates
 * are logged, never what a file holds. */
#ifndef DT_CERTWATCH_H
#define DT_CERTWATCH_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "obs_metrics.h"

/* Apply the files as they are now; 0 when taken, else -errno with err.
 * Runs on the watcher's thread. */
typedef int (*certwatch_reload_fn)(void *user, struct dt_err *err);

struct certwatch_opts {
	const char *cert, *key, *ca;    /* the files (copied) */
	const char *role;               /* "server" or "client", for messages */
	certwatch_reload_fn reload;
	void *user;
	/* NULL: no metrics. Its gauges read the watcher: stop whatever
	 * scrapes reg before certwatch_stop (and, after a failed start, which
	 * may have registered some, do not scrape it: give up, as a daemon
	 * that cannot start does). */
	struct obs_registry *reg;
	int64_t poll_ns;                /* 0: 10 s */
	int64_t settle_ns;              /* after a change, before reading: 0: 100 ms */
};

struct certwatch;

/* Read the validity of the certificate and the CA bundle and start
 * watching. -EINVAL naming the file when one holds no certificate, -errno
 * when one cannot be read. */
int certwatch_start(const struct certwatch_opts *o, struct certwatch **out,
		    struct dt_err *err);
/* Stop the thread and free w (no reload runs after it returns). NULL is a
 * no-op. */
void certwatch_stop(struct certwatch *w);
/* Reload now, changed or not (SIGHUP); the watcher's thread does it. */
void certwatch_poke(struct certwatch *w);
/* 0 when the certificate in use and the CA bundle are valid at now_ns
 * (Unix ns); else -EKEYEXPIRED with "client certificate F expired at
 * 2026-12-02T08:35:24Z" or "... is not valid before ..." in why. */
int certwatch_check(struct certwatch *w, int64_t now_ns, char *why, size_t len);
/* Reloads so far that were taken (tests wait on it). */
unsigned long certwatch_reloads(struct certwatch *w);

#endif
