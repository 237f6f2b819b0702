#!/usr/bin/env bash
# rel_regress.sh BUILD_DIR - regressions the reliability checks found in
# other modules, one case each (docs/reliability.md, "Findings"), kept so
# that they stay fixed.
NAME=rel_regress; . "$(dirname "$0")/lib.sh"

# Allocator reason text: remaining capacity of an overcommitted share.
F="$ROOT/tests/fixtures/rel/alloc-overcommitted-share.yaml"
if expect 3 "$BIN" allocate -f "$F" --node node-1; then
	has "$TMP/out" 'without the capacity \(mem: 1Gi asked' "the capacity reason"
	grep -Eq -- '-[0-9.]+[A-Za-z]* left' "$TMP/out" &&
		fail "reason says a negative amount is left: $(jq -r .unallocatable "$TMP/out")"
fi

e2e_finish
