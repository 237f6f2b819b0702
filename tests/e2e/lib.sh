# tests/e2e/lib.sh - what the end-to-end scripts share. Source it after
# setting NAME; the script's first argument is the build directory.
#
#   NAME=hwdb; . "$(dirname "$0")/lib.sh"
#   expect 0 "$BIN" hwdb list && has "$TMP/out" '^p5\.48xlarge' "list"
#   e2e_finish
#
# BIN and AGENT are the built dratopo and dratopo-agent, ROOT the source
# tree, TMP a scratch directory removed on exit (with a coordinator
# start_coord left running). Every command runs with a
# time limit (E2E_TIMEOUT seconds, default 60) and fails the script when a
# sanitizer reports on its stderr. A script that drives another binary than
# dratopo names it in DRIVES before sourcing this file: that one must be built.
set -u
BIN="$1/bin/dratopo"
AGENT="$1/bin/dratopo-agent"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
TMP="$(mktemp -d)"
COORD_PID=""
# e2e_cleanup: the EXIT trap: a coordinator start_coord left running is
# killed, the scratch directory removed.
e2e_cleanup() {
	[ -n "$COORD_PID" ] && kill -9 "$COORD_PID" 2>/dev/null
	rm -rf "$TMP"
}
trap e2e_cleanup EXIT
failures=0

fail() {
	echo "FAIL: $*" >&2
	failures=$((failures + 1))
}

# no_sanitizer_report FILE WHAT: FILE (a stderr or a daemon's log) holds no
# report of ASan, LSan or UBSan (UBSan's lines are "file.c:LINE:COL: runtime
# error: ...", which a CEL runtime error is not).
no_sanitizer_report() {
	if grep -Eq ':[0-9]+:[0-9]+: runtime error:|AddressSanitizer|LeakSanitizer' "$1"; then
		fail "sanitizer report: $2"
	fi
}

# expect CODE CMD...: run CMD, check its exit status; output in $TMP/out, $TMP/err.
expect() {
	local want="$1" got
	shift
	timeout "${E2E_TIMEOUT:-60}" "$@" >"$TMP/out" 2>"$TMP/err"
	got=$?
	no_sanitizer_report "$TMP/err" "$*"
	if [ "$got" != "$want" ]; then
		fail "exit $got, want $want: $*"
		sed 's/^/  stderr: /' "$TMP/err" | head -5 >&2
		return 1
	fi
	return 0
}

# has FILE REGEX WHAT: FILE has a line matching the extended REGEX.
has() {
	grep -Eq -- "$2" "$1" || fail "$3: no line matching /$2/ in $(basename "$1")"
}

# jqis FILTER WANT [WHAT]: jq FILTER applied to $TMP/out prints WANT (compact).
jqis() {
	local got
	got=$(jq -c "$1" "$TMP/out" 2>&1)
	[ "$got" = "$2" ] || fail "${3:-jq}: $1 gave $got, want $2"
}

# start_coord LOG ARGS...: start $COORD (the script sets it) with ARGS on
# free ports (gRPC and --http), wait for its start line; sets COORD_PID,
# PORT and HTTP. One that does not start ends the script as failed.
start_coord() {
	local log=$1; shift
	: >"$log"
	"$COORD" --listen 127.0.0.1:0 --http 127.0.0.1:0 "$@" 2>"$log" &
	COORD_PID=$!
	for _ in $(seq 100); do
		grep -q 'event=start ' "$log" && break
		kill -0 "$COORD_PID" 2>/dev/null || break
		sleep 0.1
	done
	PORT=$(grep -o 'grpc_port=[0-9]*' "$log" | head -1 | cut -d= -f2)
	HTTP=$(grep -o 'http_port=[0-9]*' "$log" | head -1 | cut -d= -f2)
	[ -n "$PORT" ] || { fail "coordinator did not start: $(cat "$log")"; e2e_finish; }
}

# stop_coord [SIGNAL]: signal it (TERM), wait; its exit status in STOP_RC.
stop_coord() {
	kill -"${1:-TERM}" "$COORD_PID"
	wait "$COORD_PID"
	STOP_RC=$?
	COORD_PID=""
}

# e2e_finish [DETAIL]: the closing line, and the exit status.
e2e_finish() {
	if [ "$failures" -ne 0 ]; then
		echo "$NAME: $failures failure(s)" >&2
		exit 1
	fi
	echo "$NAME: all passed${1:+ ($1)}"
}

[ -x "${DRIVES:-$BIN}" ] || { echo "FAIL: ${DRIVES:-$BIN} not built" >&2; exit 1; }
