#!/bin/bash
# corpus.sh - every subcommand of dratopo that reads manifests, over every
# file of the upstream corpus (tests/fixtures/corpus/, issue 20): none may
# crash, hang or make a sanitizer speak, whatever the file holds, and
# validate and plan give the outcome SOURCES.tsv records for the file, which
# must list every file with its origin.
NAME=corpus; . "$(dirname "$0")/lib.sh"
C="$ROOT/tests/fixtures/corpus"
SRC="$C/SOURCES.tsv"

# run WHAT CMD...: CMD ends by itself (0 to 3: no signal, no timeout) and
# says nothing a sanitizer would; its output is left in $TMP/out, $TMP/err.
run() {
	local what="$1" got
	shift
	timeout "${E2E_TIMEOUT:-60}" "$@" >"$TMP/out" 2>"$TMP/err"
	got=$?
	no_sanitizer_report "$TMP/err" "$what"
	[ "$got" -le 3 ] || fail "$what: exit $got (a crash, a hang or a usage error)"
	return "$got"
}

n=0
for f in "$C"/*/*.yaml; do
	rel="${f#"$C"/}"
	line=$(awk -F'\t' -v f="$rel" '$1 == f' "$SRC")
	if [ -z "$line" ]; then
		fail "$rel: not in SOURCES.tsv"
		continue
	fi
	IFS=$'\t' read -r _ repo path commit want_v want_p outcome <<<"$line"
	[ -n "$repo" ] && [ -n "$path" ] && [ -n "$commit" ] || fail "$rel: no origin"
	n=$((n + 1))

	run "validate $rel" "$BIN" validate -f "$f"
	got=$?
	[ "$got" = "$want_v" ] || fail "validate $rel: exit $got, want $want_v"
	cat "$TMP/out" "$TMP/err" >"$TMP/all"
	run "plan $rel" "$BIN" plan -f "$f" -o json
	got=$?
	[ "$got" = "$want_p" ] || fail "plan $rel: exit $got, want $want_p"
	cat "$TMP/out" "$TMP/err" >>"$TMP/all"
	grep -Eq -- "$outcome" "$TMP/all" || fail "$rel: no line matching /$outcome/"

	# The other ways in: the same files must not break them either.
	run "validate -o json $rel" "$BIN" validate -f "$f" -o json
	run "plan -o yaml $rel" "$BIN" plan -f "$f" -o yaml
	run "plan -o table $rel" "$BIN" plan -f "$f" -o table
	run "allocate $rel" "$BIN" allocate -f "$f" --node node-0
	run "allocate -o yaml $rel" "$BIN" allocate -f "$f" --node node-0 -o yaml
	run "cel eval --device $rel" "$BIN" cel eval --device "$f" 'true'
	run "plan over stdin $rel" "$BIN" plan -f - -o json <"$f"
done
# Every file together, as a user pointing dratopo at the whole folder.
run "validate, the whole corpus" "$BIN" validate -f "$C"/*/*.yaml
run "plan, the whole corpus" "$BIN" plan -f "$C"/*/*.yaml -o json
[ "$n" -ge 25 ] || fail "only $n corpus files"
e2e_finish "$n upstream files, 9 ways each"
