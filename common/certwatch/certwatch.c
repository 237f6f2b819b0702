/* certwatch.c - watching a daemon's TLS files (certwatch.h): one thread per
 * watcher, inotify on the files' directories plus a poll, the validity
 * dates read with OpenSSL, the metrics and the log lines. */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "certwatch.h"
#include "obs_log.h"

#define NS_PER_S 1000000000LL
#define DEFAULT_POLL_NS (10 * NS_PER_S)
#define DEFAULT_SETTLE_NS (100 * 1000000LL)
#define PEM_MAX_BYTES (1 << 20)
#define CA_MAX 64
#define N_FILES 3
#define N_WATCH (2 * N_FILES)           /* each file's directory, and its target's */

enum { F_CERT, F_KEY, F_CA };

/* What a path leads to now, following links: a renewed file differs. */
struct fingerprint {
	int err;                        /* errno of stat, 0 when it worked */
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime, ctime;
};

/* Validity windows in Unix seconds. */
struct validity {
	int64_t cert_nb, cert_na;
	size_t n_ca;
	int64_t ca_nb[CA_MAX], ca_na[CA_MAX];
};

struct certwatch {
	char *path[N_FILES];
	/* The watched directories (real paths, distinct): where each path is,
	 * and where it leads now (..data/tls.crt leads into ..2026_..._1/,
	 * and a copy over the file is written there). dir NULL: a free slot. */
	struct {
		char *dir;
		int wd;                 /* -1: not watched (yet) */
	} watch[N_WATCH];
	char role[16];
	certwatch_reload_fn reload;
	void *user;
	int64_t poll_ns, settle_ns;

	int ino_fd, wake_fd;
	pthread_t thread;
	atomic_bool stop, poke;

	struct fingerprint seen[N_FILES];
	bool last_failed;               /* the latest reload failed: retry at the next poll */
	char last_state[400];           /* the validity last logged ("" when valid) */

	pthread_mutex_t lock;           /* validity, reloads */
	struct validity v;
	unsigned long reloads;
	struct obs_series *reload_ok, *reload_failed;
};

static int64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * NS_PER_S + ts.tv_nsec;
}

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * NS_PER_S + ts.tv_nsec;
}

static void fingerprint(const char *path, struct fingerprint *fp)
{
	struct stat st;

	memset(fp, 0, sizeof(*fp));
	if (stat(path, &st)) {
		fp->err = errno;
		return;
	}
	fp->dev = st.st_dev;
	fp->ino = st.st_ino;
	fp->size = st.st_size;
	fp->mtime = st.st_mtim;
	fp->ctime = st.st_ctim;
}

static bool same_fingerprint(const struct fingerprint *a, const struct fingerprint *b)
{
	return a->err == b->err && a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec &&
	       a->ctime.tv_sec == b->ctime.tv_sec && a->ctime.tv_nsec == b->ctime.tv_nsec;
}

/* ---- validity dates ---- */

static int64_t asn1_unix(const ASN1_TIME *t)
{
	struct tm tm;

	if (!t || !ASN1_TIME_to_tm(t, &tm))
		return 0;
	return (int64_t)timegm(&tm);
}

/* The certificates of a PEM file: the first one's window (leaf), or every
 * one's (the CA bundle, up to CA_MAX). */
static int read_windows(const char *what, const char *path, bool leaf, struct validity *v,
			struct dt_err *err)
{
	struct stat st;
	FILE *f = fopen(path, "r");
	X509 *x;
	size_t n = 0;
	int rc = 0;

	if (!f)
		return dt_err_set(err, -errno, "%s %s: %s", what, path, strerror(errno));
	if (fstat(fileno(f), &st) == 0 && st.st_size > PEM_MAX_BYTES) {
		rc = dt_err_set(err, -EFBIG, "%s %s: larger than %d bytes", what, path, PEM_MAX_BYTES);
		goto out;
	}
	while ((x = PEM_read_X509(f, NULL, NULL, NULL))) {
		int64_t nb = asn1_unix(X509_get0_notBefore(x)), na = asn1_unix(X509_get0_notAfter(x));

		X509_free(x);
		if (leaf) {
			v->cert_nb = nb;
			v->cert_na = na;
			n = 1;
			break;
		}
		if (n < CA_MAX) {
			v->ca_nb[n] = nb;
			v->ca_na[n] = na;
			n++;
		}
	}
	ERR_clear_error();              /* the end of the file reads as an error */
	if (!n)
		rc = dt_err_set(err, -EINVAL, "%s %s: no PEM certificate in it", what, path);
	else if (!leaf)
		v->n_ca = n;
out:
	fclose(f);
	return rc;
}

static int read_validity(struct certwatch *w, struct validity *v, struct dt_err *err)
{
	char what[32];
	int rc;

	memset(v, 0, sizeof(*v));
	snprintf(what, sizeof(what), "%s certificate", w->role);
	rc = read_windows(what, w->path[F_CERT], true, v, err);
	return rc ? rc : read_windows("CA bundle", w->path[F_CA], false, v, err);
}

static void format_unix(int64_t t, char *buf, size_t len)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (!gmtime_r(&tt, &tm) || !strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, len, "?");
}

/* "" when valid at now (Unix s), else what is wrong. */
static void validity_problem(const struct certwatch *w, const struct validity *v, int64_t now,
			     char *buf, size_t len)
{
	int64_t latest = 0, earliest = INT64_MAX;
	char when[32];

	buf[0] = '\0';
	if (now > v->cert_na) {
		format_unix(v->cert_na, when, sizeof(when));
		snprintf(buf, len, "%s certificate %s expired at %s", w->role, w->path[F_CERT], when);
		return;
	}
	if (now < v->cert_nb) {
		format_unix(v->cert_nb, when, sizeof(when));
		snprintf(buf, len, "%s certificate %s is not valid before %s (is the clock right?)",
			 w->role, w->path[F_CERT], when);
		return;
	}
	for (size_t i = 0; i < v->n_ca; i++) {
		if (v->ca_nb[i] <= now && now <= v->ca_na[i])
			return;
		latest = v->ca_na[i] > latest ? v->ca_na[i] : latest;
		earliest = v->ca_nb[i] < earliest ? v->ca_nb[i] : earliest;
	}
	if (latest < now) {
		format_unix(latest, when, sizeof(when));
		snprintf(buf, len, "CA bundle %s: every certificate in it expired (the last at %s)",
			 w->path[F_CA], when);
	} else {
		format_unix(earliest, when, sizeof(when));
		snprintf(buf, len, "CA bundle %s: no certificate in it is valid now (the first from %s)",
			 w->path[F_CA], when);
	}
}

int certwatch_check(struct certwatch *w, int64_t now_ns, char *why, size_t len)
{
	struct validity v;

	pthread_mutex_lock(&w->lock);
	v = w->v;
	pthread_mutex_unlock(&w->lock);
	validity_problem(w, &v, now_ns / NS_PER_S, why, len);
	return why[0] ? -EKEYEXPIRED : 0;
}

unsigned long certwatch_reloads(struct certwatch *w)
{
	unsigned long n;

	pthread_mutex_lock(&w->lock);
	n = w->reloads;
	pthread_mutex_unlock(&w->lock);
	return n;
}

/* Log the validity when it changed since the last time it was logged. */
static void note_validity(struct certwatch *w)
{
	char why[sizeof(w->last_state)];

	certwatch_check(w, wall_ns(), why, sizeof(why));
	if (!strcmp(why, w->last_state))
		return;
	if (why[0])
		obs_log(OBS_ERROR, "tls_certificate_invalid", "role", w->role, "error", why, NULL);
	else
		obs_log(OBS_INFO, "tls_certificate_valid", "role", w->role, "cert", w->path[F_CERT],
			NULL);
	snprintf(w->last_state, sizeof(w->last_state), "%s", why);
}

/* ---- reloading ---- */

static void do_reload(struct certwatch *w, const char *reason)
{
	struct dt_err err = { 0 };
	struct validity v;
	char na[32];
	int rc;

	for (int i = 0; i < N_FILES; i++)
		fingerprint(w->path[i], &w->seen[i]);
	rc = read_validity(w, &v, &err);
	if (!rc)
		rc = w->reload(w->user, &err);
	w->last_failed = rc != 0;
	if (rc) {
		obs_inc(w->reload_failed);
		obs_log(OBS_ERROR, "tls_reload", "role", w->role, "reason", reason, "result",
			"failed, old files kept", "error", err.msg, NULL);
		return;
	}
	pthread_mutex_lock(&w->lock);
	w->v = v;
	w->reloads++;
	pthread_mutex_unlock(&w->lock);
	obs_inc(w->reload_ok);
	format_unix(v.cert_na, na, sizeof(na));
	obs_log(OBS_INFO, "tls_reload", "role", w->role, "reason", reason, "result", "ok", "cert",
		w->path[F_CERT], "not_after", na, NULL);
	note_validity(w);
}

static bool files_changed(struct certwatch *w)
{
	for (int i = 0; i < N_FILES; i++) {
		struct fingerprint fp;

		fingerprint(w->path[i], &fp);
		if (!same_fingerprint(&fp, &w->seen[i]))
			return true;
	}
	return false;
}

/* The real directory of path (or of what it leads to) into out; false
 * when it does not exist now. */
static bool real_dir(const char *path, bool follow, char *out)
{
	char buf[PATH_MAX], *copy, *d;
	bool ok;

	if (follow && !realpath(path, buf))
		return false;
	if (!(copy = strdup(follow ? buf : path)))
		return false;
	d = dirname(copy);
	ok = realpath(d, out) != NULL;
	free(copy);
	return ok;
}

static bool wanted(char want[][PATH_MAX], size_t n, const char *dir)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(want[i], dir))
			return true;
	return false;
}

/* Watch the directories the paths are in and lead into now, and no
 * others: after a ..data swap the old target directory goes, the new one
 * comes; a directory that does not exist yet is tried again at the next
 * refresh. */
static void refresh_watches(struct certwatch *w)
{
	const uint32_t mask = IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE |
			      IN_CLOSE_WRITE | IN_MODIFY | IN_ATTRIB | IN_DELETE_SELF |
			      IN_MOVE_SELF;
	char want[N_WATCH][PATH_MAX];
	size_t n = 0;

	if (w->ino_fd < 0)
		return;
	for (int i = 0; i < N_FILES; i++)
		for (int follow = 0; follow < 2; follow++)
			if (real_dir(w->path[i], follow, want[n]) && !wanted(want, n, want[n]))
				n++;
	for (int j = 0; j < N_WATCH; j++) {
		if (!w->watch[j].dir || wanted(want, n, w->watch[j].dir))
			continue;
		if (w->watch[j].wd >= 0)
			inotify_rm_watch(w->ino_fd, w->watch[j].wd);
		free(w->watch[j].dir);
		w->watch[j].dir = NULL;
		w->watch[j].wd = -1;
	}
	for (size_t i = 0; i < n; i++) {
		int free_slot = -1, j;

		for (j = 0; j < N_WATCH && !(w->watch[j].dir && !strcmp(w->watch[j].dir, want[i])); j++)
			if (!w->watch[j].dir && free_slot < 0)
				free_slot = j;
		if (j == N_WATCH) {
			if (free_slot < 0 || !(w->watch[free_slot].dir = strdup(want[i])))
				continue;
			j = free_slot;
		}
		if (w->watch[j].wd < 0)
			w->watch[j].wd = inotify_add_watch(w->ino_fd, want[i], mask);
	}
}

/* Read every queued event; only that something happened matters (the
 * fingerprints say what), except a watch the kernel dropped (its
 * directory went away). */
static void drain_events(struct certwatch *w)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n;

	while ((n = read(w->ino_fd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + n;) {
			struct inotify_event *ev = (struct inotify_event *)p;

			if (ev->mask & IN_IGNORED)
				for (int i = 0; i < N_WATCH; i++)
					if (w->watch[i].wd == ev->wd)
						w->watch[i].wd = -1;
			p += sizeof(*ev) + ev->len;
		}
	}
}

static void *watch_main(void *arg)
{
	struct certwatch *w = arg;
	int64_t next_poll = mono_ns() + w->poll_ns, settle_at = 0;

	note_validity(w);
	while (!atomic_load(&w->stop)) {
		struct pollfd p[2] = { { w->wake_fd, POLLIN, 0 }, { w->ino_fd, POLLIN, 0 } };
		int64_t now = mono_ns(), until = settle_at ? settle_at : next_poll;
		uint64_t v;

		if (poll(p, w->ino_fd >= 0 ? 2 : 1,
			 until > now ? (int)((until - now) / 1000000 + 1) : 0) < 0 && errno != EINTR)
			break;
		if (p[0].revents & POLLIN && read(w->wake_fd, &v, sizeof(v)) < 0)
			continue;
		if (atomic_load(&w->stop))
			break;
		if (w->ino_fd >= 0 && p[1].revents & POLLIN) {
			drain_events(w);
			refresh_watches(w);
			if (!settle_at)
				settle_at = mono_ns() + w->settle_ns;
		}
		if (atomic_exchange(&w->poke, false))
			do_reload(w, "signal");
		now = mono_ns();
		if (settle_at && now >= settle_at) {
			settle_at = 0;
			if (files_changed(w))
				do_reload(w, "changed");
		}
		if (now >= next_poll) {
			next_poll = now + w->poll_ns;
			refresh_watches(w);
			if (files_changed(w) || w->last_failed)
				do_reload(w, "changed");
			note_validity(w);
		}
	}
	return NULL;
}

/* ---- metrics ---- */

static void collect_valid(struct obs_collector *c, void *arg)
{
	char why[400];

	obs_collect(c, certwatch_check(arg, wall_ns(), why, sizeof(why)) ? 0.0 : 1.0, NULL);
}

static void collect_dates(struct obs_collector *c, struct certwatch *w, bool after)
{
	struct validity v;
	int64_t ca = 0;

	pthread_mutex_lock(&w->lock);
	v = w->v;
	pthread_mutex_unlock(&w->lock);
	for (size_t i = 0; i < v.n_ca; i++) {
		int64_t t = after ? v.ca_na[i] : v.ca_nb[i];

		if (i == 0 || (after ? t > ca : t < ca))
			ca = t;
	}
	obs_collect(c, (double)(after ? v.cert_na : v.cert_nb), "cert", NULL);
	obs_collect(c, (double)ca, "ca", NULL);
}

static void collect_not_after(struct obs_collector *c, void *arg)
{
	collect_dates(c, arg, true);
}

static void collect_not_before(struct obs_collector *c, void *arg)
{
	collect_dates(c, arg, false);
}

static int metrics_init(struct certwatch *w, struct obs_registry *reg, struct dt_err *err)
{
	static const char *const by_file[] = { "file", NULL };
	static const char *const by_result[] = { "result", NULL };
	struct obs_metric *reloads;
	int rc;

	rc = obs_gauge_func_new(reg, "dratopo_tls_certificate_valid",
				"1 when the TLS certificate in use and the CA bundle are valid now.",
				NULL, collect_valid, w, err);
	if (!rc)
		rc = obs_gauge_func_new(reg, "dratopo_tls_not_after_timestamp_seconds",
					"When the certificate in use (cert) and the CA bundle's "
					"latest certificate (ca) expire.", by_file, collect_not_after,
					w, err);
	if (!rc)
		rc = obs_gauge_func_new(reg, "dratopo_tls_not_before_timestamp_seconds",
					"From when the certificate in use (cert) and the CA bundle's "
					"earliest certificate (ca) are valid.", by_file,
					collect_not_before, w, err);
	if (!rc)
		rc = obs_counter_new(reg, "dratopo_tls_reloads_total",
				     "TLS file reloads, by result (failed: the old files kept).",
				     by_result, &reloads, err);
	if (rc)
		return rc;
	w->reload_ok = obs_series(reloads, "ok", NULL);
	w->reload_failed = obs_series(reloads, "failed", NULL);
	obs_add(w->reload_ok, 0);
	obs_add(w->reload_failed, 0);
	return 0;
}

/* ---- start and stop ---- */

static void watch_free(struct certwatch *w)
{
	for (int i = 0; i < N_FILES; i++)
		free(w->path[i]);
	for (int i = 0; i < N_WATCH; i++)
		free(w->watch[i].dir);
	if (w->ino_fd >= 0)
		close(w->ino_fd);
	if (w->wake_fd >= 0)
		close(w->wake_fd);
	pthread_mutex_destroy(&w->lock);
	free(w);
}

int certwatch_start(const struct certwatch_opts *o, struct certwatch **out, struct dt_err *err)
{
	struct certwatch *w;
	int rc;

	*out = NULL;
	if (!o->cert || !o->key || !o->ca || !o->reload)
		return dt_err_set(err, -EINVAL, "certwatch: three files and a reload function needed");
	if (!(w = calloc(1, sizeof(*w))))
		return dt_err_set(err, -ENOMEM, "out of memory");
	pthread_mutex_init(&w->lock, NULL);
	w->ino_fd = w->wake_fd = -1;
	for (int i = 0; i < N_WATCH; i++)
		w->watch[i].wd = -1;
	snprintf(w->role, sizeof(w->role), "%s", o->role ? o->role : "TLS");
	w->reload = o->reload;
	w->user = o->user;
	w->poll_ns = o->poll_ns > 0 ? o->poll_ns : DEFAULT_POLL_NS;
	w->settle_ns = o->settle_ns > 0 ? o->settle_ns : DEFAULT_SETTLE_NS;
	if (!(w->path[F_CERT] = strdup(o->cert)) || !(w->path[F_KEY] = strdup(o->key)) ||
	    !(w->path[F_CA] = strdup(o->ca))) {
		rc = dt_err_set(err, -ENOMEM, "out of memory");
		goto fail;
	}
	for (int i = 0; i < N_FILES; i++)
		fingerprint(w->path[i], &w->seen[i]);
	if ((rc = read_validity(w, &w->v, err)))
		goto fail;
	w->ino_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);   /* -1: the poll alone */
	w->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (w->wake_fd < 0) {
		rc = dt_err_set(err, -errno, "certwatch: eventfd: %s", strerror(errno));
		goto fail;
	}
	/* Last of what can fail: the registry keeps the gauges' pointer to w. */
	if (o->reg && (rc = metrics_init(w, o->reg, err)))
		goto fail;
	refresh_watches(w);
	if ((rc = -pthread_create(&w->thread, NULL, watch_main, w))) {
		dt_err_set(err, rc, "certwatch: cannot start its thread");
		goto fail;
	}
	*out = w;
	return 0;
fail:
	watch_free(w);
	return rc;
}

static void wake(struct certwatch *w)
{
	uint64_t one = 1;

	if (write(w->wake_fd, &one, sizeof(one)) < 0)
		return;             /* the counter is full: a wake-up is pending anyway */
}

void certwatch_poke(struct certwatch *w)
{
	if (!w)
		return;
	atomic_store(&w->poke, true);
	wake(w);
}

void certwatch_stop(struct certwatch *w)
{
	if (!w)
		return;
	atomic_store(&w->stop, true);
	wake(w);
	pthread_join(w->thread, NULL);
	watch_free(w);
}
