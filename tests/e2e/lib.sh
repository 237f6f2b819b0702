# tests/e2e/lib.sh - what the end-to-end scripts share. Source it after
# setting NAME; the script's first argument is the build directory.
#
#   NAME=hwdb; . "$(dirname "$0")/lib.sh"
#   expect 0 "$BIN" hwdb list && has "$TMP/out" '^p5\.48xlarge' "list"
#   e2e_finish
#
# BIN and AGENT are the built dratopo and dratopo-agent, ROOT the source
# tree, TMP a scratch directory removed on exit. Every command runs with a
# time limit (E2E_TIMEOUT seconds, default 60) and fails the script when a
# sanitizer reports on its stderr.
set -u
BIN="$1/bin/dratopo"
AGENT="$1/bin/dratopo-agent"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
failures=0

fail() {
	echo "FAIL: $*" >&2
	failures=$((failures + 1))
}

# expect CODE CMD...: run CMD, check its exit status; output in $TMP/out, $TMP/err.
expect() {
	local want="$1" got
	shift
	timeout "${E2E_TIMEOUT:-60}" "$@" >"$TMP/out" 2>"$TMP/err"
	got=$?
	# UBSan's lines are "FILE:LINE:COL: runtime error: ..."; a CEL message may say
	# "runtime error" too (format.dns1123LabelPrefix().validate("-")).
	grep -Eq ':[0-9]+:[0-9]+: runtime error:|AddressSanitizer|LeakSanitizer' "$TMP/err" &&
		fail "sanitizer report: $*"
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

# jqis FILTER WANT WHAT: jq FILTER applied to $TMP/out prints WANT (compact).
jqis() {
	local got
	got=$(jq -c "$1" "$TMP/out" 2>&1)
	[ "$got" = "$2" ] || fail "$3: $1 gave $got, want $2"
}

# e2e_finish [DETAIL]: the closing line, and the exit status.
e2e_finish() {
	if [ "$failures" -ne 0 ]; then
		echo "$NAME: $failures failure(s)" >&2
		exit 1
	fi
	echo "$NAME: all passed${1:+ ($1)}"
}

[ -x "$BIN" ] || { echo "FAIL: $BIN not built" >&2; exit 1; }
