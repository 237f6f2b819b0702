#!/bin/bash
# faults.sh BUILD CASE - the coordinator and agent under faults, against the
# real binaries over loopback. CASE is one of:
#   restart  the coordinator SIGKILLed while 100 agents report (bench_load
#            --restart-at): every acknowledged report is in its database
#            before the restart, every agent is acknowledged again after it
#   disk     its database on a full file system (a 4 MiB tmpfs in a private
#            mount namespace): reports refused with UNAVAILABLE, /readyz 503,
#            the file intact (integrity_check) with every acknowledged node;
#            space freed: /readyz 200 and reports acknowledged again; the
#            same file read-only at start: exit 1, file byte-identical
#   rofs     the database of a running coordinator turns read-only (EROFS),
#            then fails with EIO, then only its syncs fail (tests/tools/
#            fault_io.c, preloaded, fails writes and syncs of the database
#            and its -wal while a trigger file exists): every report refused
#            with UNAVAILABLE, /readyz 503, queries answered; the fault
#            gone: /readyz 200 and reports acknowledged; after a restart
#            every acknowledged node is there and the file is intact
#   corrupt  a database of random bytes, and a truncated one, at start: a
#            clear error naming the file, exit 1, the file byte-identical
#   clients  silent calls, calls never read and slow connections next to
#            50 agents (bench_load --silent/--noread/--slow): every agent's
#            call succeeds
#   sysfs    `dratopo-agent run --interval 1s` on a fixture tree from which a
#            GPU disappears between probes: the coordinator records the drift
#            naming the GPU, the agent keeps running and exits 0 on SIGTERM
# Needs root for `disk` (prints SKIPPED and passes otherwise).
NAME="faults-${2:-}"
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
BUILD="$1"
CASE="${2:-}"
COORD="$BUILD/bin/dratopo-coordinator"
export GRPC_VERBOSITY=NONE

# coord_start DB [ARGS...]: start the coordinator (insecure, random ports)
# in the background; sets CPID, GRPC, HTTP (host:port) or fails. The words
# of COORD_PRE (e.g. `env LD_PRELOAD=...`) go before the command.
COORD_PRE=()
coord_start() {
	local db="$1" line
	shift
	: >"$TMP/coord.log"
	"${COORD_PRE[@]}" "$COORD" --insecure --listen 127.0.0.1:0 --http 127.0.0.1:0 --db "$db" "$@" \
		2>>"$TMP/coord.log" &
	CPID=$!
	for _ in $(seq 200); do
		line=$(grep 'event=start ' "$TMP/coord.log" | tail -1)
		[ -n "$line" ] && break
		kill -0 "$CPID" 2>/dev/null || break
		sleep 0.05
	done
	[ -n "$line" ] || { fail "coordinator did not start: $(tail -3 "$TMP/coord.log")"; return 1; }
	GRPC="127.0.0.1:$(sed -E 's/.* grpc_port=([0-9]+).*/\1/' <<<"$line")"
	HTTP="127.0.0.1:$(sed -E 's/.* http_port=([0-9]+).*/\1/' <<<"$line")"
}

# coord_stop: SIGTERM, and the exit status must be 0.
coord_stop() {
	kill -TERM "$CPID" 2>/dev/null
	wait "$CPID"
	local rc=$?
	[ "$rc" = 0 ] || fail "coordinator exit $rc after SIGTERM"
	no_sanitizer_report "$TMP/coord.log" "the coordinator's log"
	CPID=""
}
trap '[ -n "${CPID:-}" ] && kill -9 "$CPID" 2>/dev/null; rm -rf "$TMP"' EXIT

fixtures() {
	bash "$ROOT/tests/fixtures/agent/mksysfs.sh" "$TMP/fx" p5.48xlarge >/dev/null ||
		fail "mksysfs.sh"
}

# report NODE: one report from the p5.48xlarge fixture (0 when acknowledged).
report() {
	timeout 30 "$AGENT" run --once --insecure --coordinator "$GRPC" --node-name "$1" \
		--sysfs-root "$TMP/fx/p5.48xlarge" >"$TMP/once.out" 2>"$TMP/once.err"
}

readyz() {
	curl -s -o /dev/null -w '%{http_code}' "http://$HTTP/readyz"
}

# wait_ready CODE: /readyz answers CODE within 15 s.
wait_ready() {
	for _ in $(seq 150); do
		[ "$(readyz)" = "$1" ] && return 0
		sleep 0.1
	done
	fail "/readyz is $(readyz), want $1"
}

case_restart() {
	expect 0 sh "$ROOT/bench/bench_load.sh" "$BUILD" --agents 100 --per-cert 10 --deadline-ms 30000 \
		--duration 16 --restart-at 7 --check --no-rss-check
	has "$TMP/out" '^kill check: [1-9][0-9]* agents acknowledged before the kill, 0 acknowledged' "kill check"
	has "$TMP/out" '^restart: 0 acknowledged reports lost, 0 agents never acknowledged again' "reconnect"
	has "$TMP/out" '^verdict: PASS' "verdict"
	sed -n '/^kill check/p;/^calls:/p;/^verdict/p' "$TMP/out"
}

# The body of `disk`, run inside a private mount namespace.
disk_inner() {
	local d="$TMP/disk" acked=() refused=0 n
	mkdir -p "$d"
	mount -t tmpfs -o size=4m tmpfs "$d" || { echo "SKIPPED: cannot mount a tmpfs"; return 0; }
	coord_start "$d/c.db" || return
	for n in ok-1 ok-2 ok-3; do
		report "$n" && acked+=("$n") || fail "report $n before the disk is full: $(cat "$TMP/once.err")"
	done
	[ "$(readyz)" = 200 ] || fail "/readyz $(readyz) before the disk is full"
	dd if=/dev/zero of="$d/fill" bs=64k 2>/dev/null
	for i in $(seq 1 40); do
		if report "full-$i"; then
			acked+=("full-$i")       # SQLite found room (a reused WAL page): acked is fine
		else
			grep -q UNAVAILABLE "$TMP/once.err" ||
				fail "report full-$i refused without UNAVAILABLE: $(cat "$TMP/once.err")"
			refused=$((refused + 1))
			[ "$refused" -ge 2 ] && break
		fi
	done
	[ "$refused" -ge 1 ] || fail "the disk is full and no report was refused"
	grep -q 'event=report_refused' "$TMP/coord.log" || fail "no report_refused line in the log"
	wait_ready 503
	curl -s "http://$HTTP/readyz" | grep -qi 'store' || fail "/readyz does not say why"
	rm -f "$d/fill"
	wait_ready 200
	report after-1 && acked+=("after-1") || fail "report after space returned: $(cat "$TMP/once.err")"
	coord_stop
	[ "$(sqlite3 "$d/c.db" 'PRAGMA integrity_check')" = ok ] || fail "integrity_check"
	for n in "${acked[@]}"; do
		[ "$(sqlite3 "$d/c.db" "SELECT count(*) FROM nodes WHERE name='$n'")" = 1 ] ||
			fail "acknowledged node $n is not in the database"
	done
	echo "disk: ${#acked[@]} acknowledged, $refused refused while full, all acknowledged present"

	# The same file on a read-only file system at start.
	cp "$d/c.db" "$TMP/before.db"
	mount -o remount,ro "$d" || { fail "remount read-only"; return; }
	expect 1 "$COORD" --insecure --listen 127.0.0.1:0 --db "$d/c.db"
	has "$TMP/err" "$d/c.db" "read-only: error names the file"
	has "$TMP/err" '[Rr]ead-only' "read-only: error says read-only"
	cmp -s "$d/c.db" "$TMP/before.db" || fail "read-only database changed"
	umount "$d"
}

case_disk() {
	if [ "$(id -u)" != 0 ]; then
		echo "SKIPPED: disk faults need root (a tmpfs in a private mount namespace)"
		return
	fi
	if ! unshare -m true 2>/dev/null; then
		echo "SKIPPED: unshare -m refused (no mount namespaces here)"
		return
	fi
	fixtures
	# Everything that mounts happens in the child; it reports by its output.
	export -f disk_inner coord_start coord_stop report readyz wait_ready fail expect has
	export TMP AGENT COORD ROOT
	unshare -m --propagation private bash -c 'failures=0; disk_inner; exit $failures' ||
		failures=$((failures + 1))
}

# node_listed NAME: the running coordinator's ListNodes has NAME.
node_listed() {
	timeout 30 "$BIN" nodes --coordinator "$GRPC" --insecure -o json >"$TMP/nodes.json" \
		2>"$TMP/nodes.err" &&
		jq -e --arg n "$1" '[.. | objects | select(.name? == $n)] | length > 0' \
			"$TMP/nodes.json" >/dev/null
}

# One fault of `rofs`: while the trigger says MODE, TAG-1..3 are refused
# with UNAVAILABLE, /readyz is 503 with the store's reason matching WHY,
# every node acknowledged so far is still listed and no refused one is;
# then the trigger goes and TAG-after is acknowledged. Appends what was
# acknowledged to ACKED.
rofs_phase() {
	local mode="$1" tag="$2" why="$3" n i
	echo "$mode" >"$TRIGGER"
	for i in 1 2 3; do
		if report "$tag-$i"; then
			fail "$mode: report $tag-$i acknowledged while the database fails"
			ACKED+=("$tag-$i")      # then it must not be lost either
		else
			grep -q UNAVAILABLE "$TMP/once.err" ||
				fail "$mode: report $tag-$i refused without UNAVAILABLE: $(cat "$TMP/once.err")"
		fi
	done
	wait_ready 503
	curl -s "http://$HTTP/readyz" >"$TMP/readyz"
	has "$TMP/readyz" "^store: .*$why" "$mode: /readyz says why"
	for n in "${ACKED[@]}"; do
		node_listed "$n" || fail "$mode: node $n not listed while the database fails"
	done
	! node_listed "$tag-1" || fail "$mode: refused report $tag-1 is listed (memory not set back)"
	kill -0 "$CPID" 2>/dev/null || { fail "$mode: the coordinator died"; return 1; }
	rm -f "$TRIGGER"
	wait_ready 200
	if report "$tag-after"; then
		ACKED+=("$tag-after")
	else
		fail "$mode: report after the fault: $(cat "$TMP/once.err")"
	fi
}

case_rofs() {
	local shim="$BUILD/tests/fault_io.so" dir db asan refused n
	[ -f "$shim" ] || { fail "$shim is not built"; return; }
	fixtures
	dir=$(cd "$TMP" && pwd -P)      # canonical: the shim compares /proc/self/fd paths
	db="$dir/rofs.db"
	TRIGGER="$dir/fail"
	ACKED=()
	# An ASan build needs its runtime first in LD_PRELOAD: the same one
	# the binary links, so that the sanitizer stays on (and checks the shim).
	asan=$(ldd "$COORD" | awk '/libasan/ { print $3; exit }')
	COORD_PRE=(env "LD_PRELOAD=${asan:+$asan:}$shim" "FAULT_IO_PATH=$db"
		"FAULT_IO_TRIGGER=$TRIGGER")
	coord_start "$db" || return
	COORD_PRE=()
	for n in ok-1 ok-2; do
		report "$n" && ACKED+=("$n") || fail "report $n before the fault: $(cat "$TMP/once.err")"
	done
	[ "$(readyz)" = 200 ] || fail "/readyz $(readyz) before the fault"
	rofs_phase "EROFS" rofs 'not writable' &&
		rofs_phase "EIO" eio 'disk I/O error.*kernel log' &&
		rofs_phase "EIO sync" fsync 'disk I/O error' || return
	refused=$(grep -c 'event=report_refused' "$TMP/coord.log")
	[ "$refused" -ge 9 ] || fail "$refused report_refused lines in the log, want 9"
	grep -q 'event=store_error' "$TMP/coord.log" || fail "no store_error line in the log"
	coord_stop

	# A restart without the shim: every acknowledged node is there.
	coord_start "$db" || return
	for n in "${ACKED[@]}"; do
		node_listed "$n" || fail "acknowledged node $n lost after the restart"
	done
	report after-restart && ACKED+=(after-restart) || fail "report after the restart"
	coord_stop
	[ "$(sqlite3 "$db" 'PRAGMA integrity_check')" = ok ] || fail "integrity_check"
	for n in "${ACKED[@]}"; do
		[ "$(sqlite3 "$db" "SELECT count(*) FROM nodes WHERE name='$n'")" = 1 ] ||
			fail "acknowledged node $n is not in the database"
	done
	echo "rofs: ${#ACKED[@]} acknowledged, $refused refused during the faults, all acknowledged present"
}

case_corrupt() {
	local db="$TMP/corrupt.db"
	head -c 65536 /dev/urandom >"$db"
	cp "$db" "$TMP/before"
	expect 1 "$COORD" --insecure --listen 127.0.0.1:0 --db "$db"
	has "$TMP/err" "$db" "random bytes: error names the file"
	cmp -s "$db" "$TMP/before" || fail "random bytes: the file changed"
	[ ! -e "$db-wal" ] || fail "random bytes: a -wal file appeared"

	# A real database cut in half.
	fixtures
	coord_start "$TMP/good.db" || return
	for n in a b c d e f; do report "$n" || fail "report $n"; done
	coord_stop
	head -c $(( $(stat -c %s "$TMP/good.db") / 2 )) "$TMP/good.db" >"$TMP/half.db"
	cp "$TMP/half.db" "$TMP/before"
	expect 1 "$COORD" --insecure --listen 127.0.0.1:0 --db "$TMP/half.db"
	has "$TMP/err" "$TMP/half.db" "truncated: error names the file"
	cmp -s "$TMP/half.db" "$TMP/before" || fail "truncated: the file changed"
	sed 's/^/  /' "$TMP/err" | head -2
}

case_clients() {
	expect 0 sh "$ROOT/bench/bench_load.sh" "$BUILD" --agents 50 --per-cert 10 --deadline-ms 30000 \
		--duration 15 --silent 20 --noread 20 --slow 20 --check --no-rss-check
	has "$TMP/out" '^verdict: PASS' "verdict"
	has "$TMP/out" '^faults: silent calls ended by the server' "faults ran"
	sed -n '/^faults:/p;/^calls:/p;/^latency/p;/^verdict/p' "$TMP/out"
}

# verdict NODE: the coordinator's verdict for NODE, from its database.
verdict() {
	sqlite3 "$TMP/s.db" "SELECT verdict FROM nodes WHERE name='$1'" 2>/dev/null
}

case_sysfs() {
	local gone="0000:a8:00.0" apid rc sys dev
	fixtures
	sys="$TMP/fx/p5.48xlarge/sys"
	coord_start "$TMP/s.db" || return
	"$AGENT" run --insecure --interval 1s --coordinator "$GRPC" --node-name drifty \
		--sysfs-root "$TMP/fx/p5.48xlarge" 2>"$TMP/agent.log" &
	apid=$!
	for _ in $(seq 100); do [ "$(verdict drifty)" = match ] && break; sleep 0.1; done
	[ "$(verdict drifty)" = match ] || fail "first verdict $(verdict drifty), want match"
	# The GPU goes away as a hot-unplug does: its bus link, then its directory.
	dev=$(readlink -f "$sys/bus/pci/devices/$gone")
	rm -f "$sys/bus/pci/devices/$gone"
	rm -rf "$dev"
	for _ in $(seq 100); do [ "$(verdict drifty)" = drift ] && break; sleep 0.1; done
	[ "$(verdict drifty)" = drift ] || fail "verdict after the GPU left: $(verdict drifty), want drift"
	sqlite3 "$TMP/s.db" "SELECT hex(differences) FROM nodes WHERE name='drifty'" | xxd -r -p |
		tr '\0' '\n' >"$TMP/diff"
	has "$TMP/diff" 'GPU|gpu' "the drift names a GPU"
	sed 's/^/  difference: /' "$TMP/diff" | head -3
	kill -0 "$apid" 2>/dev/null || fail "the agent died after the GPU left"
	kill -TERM "$apid"
	wait "$apid"
	rc=$?
	[ "$rc" = 0 ] || fail "agent exit $rc after SIGTERM"
	no_sanitizer_report "$TMP/agent.log" "the agent's log"
	coord_stop
}

case "$CASE" in
restart | disk | rofs | corrupt | clients | sysfs) "case_$CASE" ;;
*) echo "usage: faults.sh BUILD restart|disk|rofs|corrupt|clients|sysfs" >&2; exit 2 ;;
esac
e2e_finish
