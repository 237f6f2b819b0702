#!/bin/bash
# tests/e2e/hwdb.sh BUILD_DIR - `dratopo hwdb` end to end.
#
# For every instance type and every consumable-capacity mode, the YAML that
# `dratopo hwdb show` prints must load back through `dratopo validate` as
# valid ResourceSlices; JSON output, list, export, --hwdb-extra and the
# error paths (unknown type, bad mode, malformed extra) behave as
# design.md says.
NAME="e2e hwdb"
. "$(dirname "$0")/lib.sh"
FIX="$ROOT/tests/fixtures/hwdb"

# ---- list ----
expect 0 "$BIN" hwdb list || exit 1
types=$(awk 'NR > 1 { print $1 }' "$TMP/out")
n=$(echo "$types" | wc -l)
[ "$n" -ge 300 ] || fail "hwdb list shows $n types"
head -1 "$TMP/out" | grep -q '^NAME' || fail "hwdb list has no header"
expect 0 "$BIN" hwdb list -o json && grep -q '"instanceTypes"' "$TMP/out" ||
	fail "hwdb list -o json"
[ "$(grep -c '"name": "p5.48xlarge"' "$TMP/out")" = 1 ] || fail "p5.48xlarge not once in list json"
expect 0 "$BIN" hwdb list --family p5 &&
	[ "$(awk 'NR > 1' "$TMP/out" | wc -l)" = 2 ] || fail "--family p5 lists 2 types"
expect 2 "$BIN" hwdb list -o xml
expect 0 "$BIN" hwdb --help && grep -q '^  show ' "$TMP/out" || fail "hwdb --help"
expect 0 "$BIN" hwdb show --help && grep -q 'consumable-capacity' "$TMP/out" || fail "hwdb show --help"
expect 2 "$BIN" hwdb frobnicate

# ---- list filters ----
expect 0 "$BIN" hwdb list --efa
n=$(awk 'NR > 1' "$TMP/out" | wc -l)
[ "$n" -ge 300 ] || fail "hwdb list --efa shows $n types, not at least 300"
awk 'NR > 1 && $(NF - 2) == 0 { bad = 1 } END { exit bad }' "$TMP/out" ||
	fail "hwdb list --efa shows a type without EFAs"
expect 0 "$BIN" hwdb list --gpu
awk 'NR > 1 && $5 == 0 { bad = 1 } END { exit bad }' "$TMP/out" ||
	fail "hwdb list --gpu shows a type without GPUs"
awk 'NR > 1 { print $1 }' "$TMP/out" >"$TMP/gpu-types"
gpus=$(wc -l <"$TMP/gpu-types")
expect 0 "$BIN" hwdb list --gpu --efa
both=$(awk 'NR > 1' "$TMP/out" | wc -l)
[ "$both" -gt 0 ] && [ "$both" -lt "$gpus" ] || fail "--gpu --efa: $both of $gpus GPU types"
expect 0 "$BIN" hwdb list --efa --family c6in
[ "$(awk 'NR > 1 { print $1 }' "$TMP/out" | tr '\n' ' ')" = "c6in.32xlarge c6in.metal " ] ||
	fail "--efa --family c6in: $(cat "$TMP/out")"
expect 0 "$BIN" hwdb list --efa --region eu-west-1
awk 'NR > 1 && $NF == "-" { bad = 1 } END { exit bad }' "$TMP/out" ||
	fail "--region eu-west-1 lists a type without a price there"
awk 'NR > 2 && $NF + 0 < prev { bad = 1 } NR > 1 { prev = $NF + 0 } END { exit bad }' \
	"$TMP/out" || fail "--region eu-west-1 is not cheapest first"
grep -q '^c5n.9xlarge .* 2.1960$' "$TMP/out" || fail "c5n.9xlarge not at its eu-west-1 price"
expect 2 "$BIN" hwdb list --region mars-north-1
grep -q "no prices for 'mars-north-1'; it has: us-east-1, " "$TMP/err" || fail "bad --region"
expect 0 "$BIN" hwdb list --family trn1
grep -q 'AWS Trainium\*' "$TMP/out" || fail "trn1: accelerators not named"

# ---- show: every type, every mode, validates ----
# One validate for all the files (a process per file is most of this test's
# time under the sanitizers); where it refuses, each file alone says which.
shown=()
for t in $types; do
	modes="disabled 4 memory unlimited"
	# the modes change GPUs only: a type without any publishes the same slices
	grep -qx "$t" "$TMP/gpu-types" || modes=disabled
	for mode in $modes; do
		out="$TMP/$t-$mode.yaml"
		# a node of its own per file: one validate takes them all
		if ! "$BIN" hwdb show "$t" -o yaml --consumable-capacity "$mode" --node "$t-$mode" \
			>"$out" 2>"$TMP/err"; then
			fail "hwdb show $t --consumable-capacity $mode"
			continue
		fi
		grep -q '^kind: ResourceSlice' "$out" || fail "$t ($mode): no ResourceSlice"
		shown+=(-f "$out")
	done
done
if ! "$BIN" validate "${shown[@]}" >"$TMP/vout" 2>"$TMP/verr"; then
	for ((i = 1; i < ${#shown[@]}; i += 2)); do
		"$BIN" validate -f "${shown[i]}" >/dev/null 2>"$TMP/verr" && continue
		fail "${shown[i]##*/}: dratopo validate refuses hwdb show's output"
		head -5 "$TMP/verr" >&2
	done
fi
slices=$(cat "$TMP"/*-disabled.yaml "$TMP"/*-4.yaml "$TMP"/*-memory.yaml "$TMP"/*-unlimited.yaml |
	grep -c '^kind: ResourceSlice')
grep -qx "ResourceSlice: $slices valid" "$TMP/vout" ||
	fail "validate did not take all $slices slices: $(cat "$TMP/vout")"

# ---- show: content ----
expect 0 "$BIN" hwdb show p5.48xlarge -o yaml
[ "$(grep -c '^kind: ResourceSlice' "$TMP/out")" = 2 ] || fail "p5.48xlarge: 2 slices"
[ "$(grep -c 'name: efa-' "$TMP/out")" = 32 ] || fail "p5.48xlarge: 32 EFAs"
[ "$(grep -c 'name: gpu-' "$TMP/out")" = 8 ] || fail "p5.48xlarge: 8 GPUs"
expect 0 "$BIN" hwdb show p5.48xlarge -o json
grep -q '"instanceType"' "$TMP/out" && grep -q '"resourceSlices"' "$TMP/out" ||
	fail "show -o json lacks instanceType/resourceSlices"
expect 0 "$BIN" hwdb show g5.xlarge --consumable-capacity 4
grep -q 'allowMultipleAllocations: true' "$TMP/out" || fail "share mode: allowMultipleAllocations"
grep -q 'shares' "$TMP/out" || fail "share mode: shares capacity"
expect 0 "$BIN" hwdb show g5.xlarge --node node-1 && grep -q 'nodeName: node-1' "$TMP/out" ||
	fail "--node"

# ---- errors ----
expect 1 "$BIN" hwdb show p5.48xlarg && grep -q "did you mean 'p5.48xlarge'" "$TMP/err" ||
	fail "unknown type: no hint"
for bad in 0 -1 shares 4.5 memory=true 1Gi; do
	expect 2 "$BIN" hwdb show p5.48xlarge --consumable-capacity "$bad"
done
expect 2 "$BIN" hwdb show
expect 2 "$BIN" hwdb show p5.48xlarge -o table

# ---- extras ----
expect 0 "$BIN" hwdb show zz9.24xlarge --hwdb-extra "$FIX/extra-add.yaml" -o yaml &&
	"$BIN" validate -f "$TMP/out" >/dev/null 2>&1 || fail "extra type does not show/validate"
expect 0 "$BIN" hwdb list --hwdb-extra "$FIX/extra-override.yaml" &&
	grep '^g5.xlarge ' "$TMP/out" | grep -q '99.5000' || fail "override not in force"
expect 1 "$BIN" hwdb list --hwdb-extra "$FIX/bad-pcieroot.yaml" &&
	grep -q 'bad-pcieroot.yaml.*instanceTypes\[1\] (zz9.xlarge): gpu.devices\[1\].pcieRoot' "$TMP/err" ||
	fail "malformed extra: message does not name file, entry and field"

# ---- export round trip: the whole db as an extra changes nothing ----
expect 0 "$BIN" hwdb export && cp "$TMP/out" "$TMP/all.yaml"
"$BIN" hwdb list -o json >"$TMP/a.json"
"$BIN" hwdb list -o json --hwdb-extra "$TMP/all.yaml" | sed 's/"source": "extra"/"source": "builtin"/' >"$TMP/b.json"
cmp -s "$TMP/a.json" "$TMP/b.json" || fail "export does not read back to the same data"

e2e_finish "$n types"
