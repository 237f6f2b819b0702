#!/bin/bash
# tests/e2e/mig.sh BUILD_DIR - MIG end to end: what `dratopo hwdb show
# --mig` prints for every MIG-capable type validates and names the devices
# the NVIDIA driver would; impossible layouts are refused with the rule they
# break; and `dratopo plan` puts a claim for a MIG slice on the cheapest
# type whose GPUs, partitioned as the EC2NodeClass says, hold it.
NAME=mig; . "$(dirname "$0")/lib.sh"

MIG_TYPES="p4d.24xlarge p4de.24xlarge p5.4xlarge p5.48xlarge p5e.48xlarge p5en.48xlarge p6-b200.48xlarge"
# a static layout each GPU model can take
layout_for() {
	case "$1" in
	p4d.*) echo "3g.20gb,2g.10gb,1g.5gb,1g.5gb" ;;
	p4de.*) echo "all-1g.10gb" ;;
	p5.*) echo "3g.40gb,2g.20gb,2g.20gb" ;;
	p5e*) echo "all-3g.71gb" ;;
	p6-b200.*) echo "4g.90gb,3g.90gb" ;;
	esac
}

# ---- hwdb show --mig: validates, in both modes ----
for t in $MIG_TYPES; do
	for mig in dynamic "$(layout_for "$t")"; do
		expect 0 "$BIN" hwdb show "$t" --mig "$mig" || continue
		cp "$TMP/out" "$TMP/slices.yaml"
		expect 0 "$BIN" validate -f "$TMP/slices.yaml" ||
			fail "$t --mig $mig: dratopo validate refuses the slices"
	done
done

# Static: p5.48xlarge with 3g.40gb,2g.20gb,2g.20gb on every GPU: 24 MIG
# devices, named by profile and memory slices, no whole GPU, no counters.
expect 0 "$BIN" hwdb show p5.48xlarge --mig "3g.40gb,2g.20gb,2g.20gb" -o json
jqis '[.resourceSlices[0].spec.devices[].name] | length' '24' "static device count"
jqis '[.resourceSlices[0].spec.devices[0:3][].name]' \
	'["gpu-0-mig-2g20gb-0-1","gpu-0-mig-2g20gb-2-3","gpu-0-mig-3g40gb-4-7"]' "static names"
jqis '.resourceSlices[0].spec.devices[2].attributes | {type, profile, parentMinor, pcieRoot: .["resource.kubernetes.io/pcieRoot"]}' \
	'{"type":{"string":"mig"},"profile":{"string":"3g.40gb"},"parentMinor":{"int":0},"pcieRoot":{"string":"pci0000:44"}}' \
	"static attributes"
jqis '.resourceSlices[0].spec.devices[2].capacity | map_values(.value)' \
	'{"copyEngines":"3","decoders":"3","encoders":"0","jpegEngines":"3","memory":"40448Mi","multiprocessors":"60","ofaEngines":"0"}' \
	"static capacities"
jqis '[.resourceSlices[] | select(.spec.sharedCounters)] | length' '0' "static: no counters"

# Dynamic: p5.4xlarge, one H100: the whole GPU and 25 placements consuming
# gpu-0-counter-set, published in a slice of its own (1.35+).
expect 0 "$BIN" hwdb show p5.4xlarge --mig dynamic -o json
jqis '[.resourceSlices[] | select(.spec.driver == "gpu.nvidia.com")] | length' '2' "dynamic slices"
jqis '.resourceSlices[0].spec.devices | length' '26' "dynamic devices"
jqis '.resourceSlices[0].spec.pool.resourceSliceCount' '2' "dynamic pool slice count"
jqis '.resourceSlices[1].spec.sharedCounters[0].name' '"gpu-0-counter-set"' "counter set"
jqis '.resourceSlices[1].spec.sharedCounters[0].counters | map_values(.value)' \
	'{"copyengines":"8","decoders":"7","encoders":"0","jpegengines":"7","memory":"81152Mi","memory-slice-0":"1","memory-slice-1":"1","memory-slice-2":"1","memory-slice-3":"1","memory-slice-4":"1","memory-slice-5":"1","memory-slice-6":"1","memory-slice-7":"1","multiprocessors":"132","ofaengines":"1"}' \
	"counters"
jqis '[.resourceSlices[0].spec.devices[] | select(.name == "gpu-0-mig-1g20gb-6-7") | .consumesCounters[0].counters | keys[] | select(startswith("memory-slice"))]' \
	'["memory-slice-6","memory-slice-7"]' "a placement consumes its memory slices"

# ---- impossible layouts: refused, naming the rule (exit 2) ----
refuse() {      # refuse TYPE LAYOUT REGEX
	expect 2 "$BIN" hwdb show "$1" --mig "$2" && has "$TMP/err" "$3" "refuse $1 $2"
}
refuse p5.48xlarge "4g.40gb,4g.40gb" "2 instances of 4g.40gb, a GPU holds at most 1"
refuse p5.48xlarge "4g.40gb,3g.40gb,1g.10gb" "need 8 compute slices, a GPU has 7"
refuse p5.48xlarge "3g.40gb,3g.40gb,1g.10gb" "need 9 memory slices, a GPU has 8"
refuse p5.48xlarge "all-1g.5gb" 'no MIG profile "1g.5gb"'
refuse p5.48xlarge "all-7g.80gb;disabled" "2 GPU entries, p5.48xlarge has 8 GPUs"
refuse g6.xlarge dynamic "NVIDIA L4 has no MIG profiles"
refuse p5.48xlarge "1g.10gb!" "cannot be in a profile name"
# QA-94: an option's bad value is a usage error as the parser words it
# (the synopsis follows), an unknown type is named by the command it hit
expect 2 "$BIN" hwdb show p5.48xlarge --mig "1g.10gb,,1g.10gb" &&
	[ "$(head -1 "$TMP/err")" = 'dratopo hwdb show: --mig: MIG layout "1g.10gb,,1g.10gb": GPU entry 0: an empty profile name' ] &&
	grep -q "^usage: dratopo hwdb show" "$TMP/err" || fail "--mig value error as a usage error"
expect 2 "$BIN" hwdb show p5.48xlarge --consumable-capacity 0 &&
	grep -q "^usage: dratopo hwdb show" "$TMP/err" || fail "--consumable-capacity value error as a usage error"
expect 1 "$BIN" hwdb export p5.48xlargee &&
	has "$TMP/err" "^dratopo hwdb export: unknown instance type 'p5.48xlargee' \(did you mean 'p5.48xlarge'\?\)" "export names itself"
expect 2 "$BIN" hwdb show p5.4xlarge --mig dynamic --consumable-capacity 4 &&
	has "$TMP/err" "cannot be combined with dynamic MIG" "dynamic + sharing"

# ---- dratopo plan: a MIG claim on the cheapest type that holds it ----
plan_mig() {    # plan_mig LAYOUT COUNT PROFILE: plan tests/fixtures/plan/mig.yaml
	sed -e "s/MIG_LAYOUT/$1/" -e "s/MIG_COUNT/$2/" -e "s/MIG_PROFILE/$3/" \
		"$ROOT/tests/fixtures/plan/mig.yaml" >"$TMP/mig.yaml"
}
type_is() {     # type_is WANT WHAT
	jqis '[.nodeClaims[].instanceType]' "[\"$1\"]" "$2"
}
plan_mig all-1g.10gb 1 1g.10gb
expect 0 "$BIN" plan -f "$TMP/mig.yaml" -o json && type_is p5.4xlarge "one 1g.10gb: one H100"
jqis '.nodeClaims[0].claims[0].results[0].device' '"gpu-0-mig-1g10gb-0"' "the MIG device"
# eight in one claim: seven fit an H100, an A100-40GB holds four per GPU
plan_mig all-1g.10gb 8 1g.10gb
expect 0 "$BIN" plan -f "$TMP/mig.yaml" -o json && type_is p4d.24xlarge "eight 1g.10gb"
# only H200 has 3g.71gb; p5e has no on-demand price
plan_mig dynamic 1 3g.71gb
expect 0 "$BIN" plan -f "$TMP/mig.yaml" -o json && type_is p5en.48xlarge "dynamic 3g.71gb"
# dynamic: two 3g.40gb share one H100's counters
plan_mig dynamic 2 3g.40gb
expect 0 "$BIN" plan -f "$TMP/mig.yaml" -o json && type_is p5.4xlarge "dynamic two 3g.40gb"
# a layout no GPU can take leaves the pod unschedulable, with the reason
plan_mig all-1g.10gb 1 3g.40gb
expect 3 "$BIN" plan -f "$TMP/mig.yaml" -o json &&
	has "$TMP/out" "whose GPUs cannot take the MIG layout" "layout reject reason"
plan_mig "4g.40gb,4g.40gb" 1 4g.40gb
expect 3 "$BIN" plan -f "$TMP/mig.yaml" -o json &&
	has "$TMP/out" "2 instances of 4g.40gb, a GPU holds at most 1" "impossible layout"
# a malformed one is invalid input, refused before planning (as validate does)
plan_mig "bogus!" 1 1g.10gb
expect 1 "$BIN" plan -f "$TMP/mig.yaml" -o json &&
	has "$TMP/err" "nvidia-mig-layout\]: MIG layout \"bogus!\"" "bad annotation"

e2e_finish
