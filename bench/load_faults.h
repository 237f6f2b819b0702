/* load_faults.h - misbehaving clients the load bench runs next to its
 * agents, so that a run shows the coordinator serving them normally
 * meanwhile:
 *   silent  calls that send their headers and never their message (held
 *           open until the server's deadline cap ends them, then again);
 *   noread  ListNodes calls whose answers are never read, on a connection
 *           whose flow-control window is 1 KiB (each held 10 s, then again);
 *   slow    plain TCP connections that write one byte every 200 ms (a
 *           handshake that never finishes; reconnected when dropped).
 * One thread drives them all. */
#ifndef DT_LOAD_FAULTS_H
#define DT_LOAD_FAULTS_H

#include "rpc.h"

struct load_faults;

int load_faults_start(const char *addr, const struct rpc_tls *tls, unsigned silent,
		      unsigned noread, unsigned slow, struct load_faults **out, struct dt_err *err);
/* Stop, print what the misbehaving clients saw, free. NULL is a no-op. */
void load_faults_stop(struct load_faults *f);

#endif
