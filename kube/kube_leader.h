/* kube_leader.h - leader election over a coordination.k8s.io/v1 Lease, as
 * client-go's tools/leaderelection does it, and the fence that keeps a
 * process that may have lost the Lease from writing.
 *
 *   struct kube_leader_opts o = { .name = "dratopo-coordinator",
 *                                 .identity = "dratopo-coordinator-7d9f_1a2b3c",
 *                                 .on_started = start, .on_stopped = stop, .arg = me };
 *   kube_leader_new(lease_client, &o, &le, &err);     // a client of its own
 *   kube_leader_fence(le, kc);                        // kc writes only while leading
 *   kube_leader_start(le, &err);
 *   ...
 *   kube_leader_release(le, 5000, &err);              // on SIGTERM: hand it over now
 *   kube_leader_free(le);
 *
 * The rules (client-go's, kubernetes-api.md §5.4):
 *   - every retry period the elector reads the Lease; one that does not
 *     exist is created, holding it;
 *   - a Lease held by someone else is taken over only once it has not
 *     changed for leaseDurationSeconds (the record's own value) on the
 *     LOCAL clock, counted from when this process saw it change: clocks of
 *     different machines are never compared, renewTime is never read as a
 *     time;
 *   - every write is a PUT carrying the resourceVersion that was read, so of
 *     two candidates exactly one wins (the other gets 409 Conflict);
 *   - a takeover increments leaseTransitions and sets acquireTime; a renewal
 *     keeps both;
 *   - a leader renews every retry period and steps down when no renewal
 *     succeeded within the renew deadline;
 *   - a release writes holderIdentity "" and leaseDurationSeconds 1, and
 *     anyone may take an unheld Lease at once.
 *
 * Two things beyond client-go:
 *   - the fence: leadership as this process may act on it ends at the send
 *     time of the last successful renewal plus the renew deadline, on a
 *     clock that keeps counting while the process is stopped or the machine
 *     suspended (CLOCK_BOOTTIME). Any other process waits at least the lease
 *     duration from when it saw that renewal, which it cannot have seen
 *     before it was sent; so the fence closes lease - renew deadline (5 s by
 *     default) before the Lease can have expired anywhere. A client fenced
 *     with kube_leader_fence checks it before every attempt of every write
 *     and again just before the request leaves (libcurl's pre-request
 *     callback), and bounds the attempt so that it cannot outlive the Lease;
 *   - followers watch the Lease as well as reading it, so they see each
 *     renewal when it happens, and wake at the moment the Lease they saw
 *     expires: a leader that dies is replaced within the lease duration of
 *     its last renewal (plus a request), not a retry period later.
 *
 * Threads: the elector runs one thread of its own (and an informer's for
 * the watch). The callbacks run on the elector's thread and must not block:
 * renewals wait for them. Everything else may be called from any thread. */
#ifndef DT_KUBE_LEADER_H
#define DT_KUBE_LEADER_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"
#include "kube.h"

/* client-go's defaults ("core clients default this value to 15 seconds",
 * 10 s, 2 s) and its jitter factor. */
#define KUBE_LEADER_LEASE_DURATION_MS 15000
#define KUBE_LEADER_RENEW_DEADLINE_MS 10000
#define KUBE_LEADER_RETRY_PERIOD_MS   2000
#define KUBE_LEADER_JITTER_FACTOR     1.2

struct kube_leader_opts {
	const char *ns;                 /* the Lease's namespace; NULL: the client's */
	const char *name;               /* the Lease's name */
	const char *identity;           /* holderIdentity: unique per process */
	int64_t lease_duration_ms;      /* 0: 15 s */
	int64_t renew_deadline_ms;      /* 0: 10 s */
	int64_t retry_period_ms;        /* 0: 2 s */
	/* Leadership began (the fence is open), ended (it is closed: nothing
	 * of this process is written any more), or another holder was seen
	 * (holder "" when the Lease was released). May be NULL. */
	void (*on_started)(void *arg);
	void (*on_stopped)(void *arg);
	void (*on_new_holder)(void *arg, const char *holder);
	void *arg;
	/* Read the Lease only, never watch it (a test server without watches). */
	bool no_watch;
	/* The clock, in milliseconds; NULL: CLOCK_BOOTTIME. Tests drive a fake
	 * one with kube_leader_step instead of starting the thread. */
	int64_t (*now_ms)(void *clock_arg);
	void *clock_arg;
	/* Wall-clock time for acquireTime and renewTime, Unix ns; NULL:
	 * CLOCK_REALTIME. Written for people to read, never compared. */
	int64_t (*wall_ns)(void *clock_arg);
};

/* The options checked as client-go checks them: a name and an identity;
 * leaseDuration > renewDeadline > JitterFactor x retryPeriod > 0. err
 * names the values. 0 or -EINVAL. */
int kube_leader_validate(const struct kube_leader_opts *o, struct dt_err *err);

struct kube_leader;

/* An elector for the Lease o names, reading and writing it through c
 * (which it must not fence itself: give it a client of its own). Nothing
 * happens until kube_leader_start (or kube_leader_step). c must outlive
 * it; the options' strings are copied. */
int kube_leader_new(struct kube_client *c, const struct kube_leader_opts *o,
		    struct kube_leader **out, struct dt_err *err);
/* Start the elector's thread (and the watch). */
int kube_leader_start(struct kube_leader *le, struct dt_err *err);
/* One round as the thread runs it: acquire or renew, then end a
 * leadership whose fence has closed. Returns the milliseconds until the
 * next round is due (the thread sleeps that long, or until the watch
 * shows a change). For tests with a fake clock; never while the thread
 * runs. */
int64_t kube_leader_step(struct kube_leader *le);
/* Stop the thread and the watch. The leadership stays until its fence
 * closes: call kube_leader_release to hand it over. */
void kube_leader_stop(struct kube_leader *le);
/* Give the Lease up (SIGTERM): close the fence, wait up to drain_ms for
 * the fenced writes in flight, then write holderIdentity "" and
 * leaseDurationSeconds 1 with the resourceVersion of the last renewal, so
 * that a Lease someone else took meanwhile is left alone. 0 (also when
 * there was nothing to release), or a KUBE_E* code. Stops the thread
 * first. Fenced writes stay refused afterwards. */
int kube_leader_release(struct kube_leader *le, long drain_ms, struct dt_err *err);
void kube_leader_free(struct kube_leader *le);

/* Whether this process leads now: it holds the Lease and the fence is
 * open. Cheap (atomics); check it before deciding to write, and let the
 * fenced client refuse what slips through. */
bool kube_leader_leading(struct kube_leader *le);

/* Every write of c (POST, PUT, PATCH, DELETE; not its reads, watches
 * included) goes through le's fence: refused with KUBE_ENOTLEADER while
 * this process does not lead. le NULL takes the fence away; le must
 * outlive c's writes (free c, or take the fence away, before le). */
void kube_leader_fence(struct kube_leader *le, struct kube_client *c);

/* The fence by hand, for a write that does not go through a fenced
 * client: 0 and *budget_ms, the longest the write may take (it cannot
 * outlive the Lease), with the write counted in flight until
 * kube_leader_write_end; or KUBE_ENOTLEADER. */
int kube_leader_write_begin(struct kube_leader *le, int64_t *budget_ms);
void kube_leader_write_end(struct kube_leader *le);

struct kube_leader_status {
	bool leading;
	char holder[256];               /* the holder last seen; "" none */
	int64_t transitions;            /* leaseTransitions last seen */
	int64_t fence_left_ms;          /* leading: until the fence closes */
	uint64_t acquired, lost;        /* leaderships begun and ended here */
	uint64_t renewals, failures;    /* successful writes of the Lease; failed rounds */
};
void kube_leader_status(struct kube_leader *le, struct kube_leader_status *out);

#endif
