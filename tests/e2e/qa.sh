#!/bin/bash
# tests/e2e/qa.sh BUILD_DIR - the QA pass's regression cases: inputs nobody
# wrote the module tests for, driven through the built binaries the way a
# user would, each checking the exit status and the key output. Only cases
# that behave correctly are here; the bugs found are in docs/qa.md.
NAME=qa.sh
. "$(dirname "$0")/lib.sh"
E2E_TIMEOUT=10
Q="$ROOT/tests/fixtures/qa"
SEED="$ROOT/examples/seed"

# ---- validate: API server limits and rules, every error reported ----

expect 1 "$BIN" validate -f "$Q/claim-33-requests.yaml" &&
	has "$TMP/err" "^$Q/claim-33-requests.yaml: document 1 \(ResourceClaim default/many\): spec\.devices\.requests: Too many: 33: must have at most 32 items$" \
		"33 requests"
expect 1 "$BIN" validate -f "$Q/slice-129-devices.yaml" &&
	has "$TMP/err" "^$Q/slice-129-devices.yaml: document 1 \(ResourceSlice big-slice\): spec\.devices: Too many: 129: must have at most 128 items$" \
		"129 devices"
expect 1 "$BIN" validate -f "$Q/selector-too-long.yaml" &&
	has "$TMP/err" "^$Q/selector-too-long.yaml: document 1 \(DeviceClass huge\): spec\.selectors\[0\]\.cel\.expression: Too long: may not be more than 10240 bytes$" \
		"10 KiB selector"
# QA-38: cel-go's cost estimate takes a size it cannot bound as unbounded (a
# comprehension over lists.range) and the device's maps at 32 entries each.
expect 1 "$BIN" validate -f "$Q/selector-cost-estimate.yaml" &&
	has "$TMP/err" "^$Q/selector-cost-estimate.yaml: document 1 \(ResourceClaimTemplate default/costly\): spec\.spec\.devices\.requests\[0\]\.exactly\.selectors\[0\]\.cel\.expression: Forbidden: too complex, exceeds cost limit$" \
		"comprehension over lists.range"
if expect 1 "$BIN" validate -f "$Q/selector-cost-nested.yaml"; then
	has "$TMP/err" "document 2 \(DeviceClass deeper\): spec\.selectors\[0\]\.cel\.expression: Forbidden: too complex, exceeds cost limit$" \
		"four nested comprehensions over attributes"
	[ "$(wc -l <"$TMP/err")" -eq 1 ] || fail "three nested comprehensions over attributes refused"
fi

# QA-60: constant patterns, durations and timestamps are checked when compiling.
if expect 1 "$BIN" validate -f "$Q/selector-bad-literals.yaml"; then
	p="^$Q/selector-bad-literals.yaml: document 1 \(DeviceClass bad-literals.example.com\): spec\.selectors"
	has "$TMP/err" "$p\[0\]\.cel\.expression: Invalid value: .*: compilation failed: ERROR: <input>:1:57: invalid matches argument$" \
		"bad constant pattern"
	has "$TMP/err" "$p\[1\]\.cel\.expression: .*ERROR: <input>:1:10: invalid duration argument$" "bad duration"
	has "$TMP/err" "$p\[2\]\.cel\.expression: .*ERROR: <input>:1:11: invalid timestamp argument$" "bad timestamp"
	grep -q 'selectors\[3\]' "$TMP/err" && fail "a good constant pattern refused"
fi

# QA-32: the label keys Karpenter's CRDs keep to themselves.
if expect 1 "$BIN" validate -f "$Q/nodepool-restricted.yaml"; then
	f="$Q/nodepool-restricted.yaml"
	p="^$f: document 1 \(NodePool restricted\): spec\.template\."
	has "$TMP/err" "${p}metadata\.labels: Invalid value: \"kubernetes.io/hostname\": label \"kubernetes.io/hostname\" is restricted$" \
		"hostname label"
	has "$TMP/err" "${p}metadata\.labels: Invalid value: \"karpenter.sh/nodepool\": label \"karpenter.sh/nodepool\" is restricted$" \
		"nodepool label"
	has "$TMP/err" "${p}metadata\.labels: Invalid value: \"example.k8s.io/team\": label domain \"k8s.io\" is restricted$" \
		"k8s.io label"
	has "$TMP/err" "${p}spec\.requirements\[2\]\.key: Invalid value: \"karpenter.sh/unknown\": label domain \"karpenter.sh\" is restricted$" \
		"karpenter.sh requirement"
	has "$TMP/err" "^$f: document 2 \(NodeClaim restricted-x1y2z\): spec\.requirements\[1\]\.key: Invalid value: \"kubernetes.io/hostname\": label \"kubernetes.io/hostname\" is restricted$" \
		"hostname in a NodeClaim"
	[ "$(wc -l <"$TMP/err")" -eq 10 ] || fail "restricted keys: $(wc -l <"$TMP/err") lines, want 10"
fi

# One file, two objects, many problems: all of them, each on its own line in
# the contract's form, and the unknown kind only warned about.
if expect 1 "$BIN" validate -f "$Q/bad-fields.yaml"; then
	f="$Q/bad-fields.yaml"
	c="^$f: document 1 \(ResourceClaim default/Bad_Name\): "
	s="^$f: document 2 \(ResourceSlice dup-devices\): "
	has "$TMP/err" "${c}metadata\.name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain" "bad name"
	has "$TMP/err" "${c}spec\.devices\.requests\[0\]: .*exactly one of \`exactly\` or \`firstAvailable\`" \
		"exactly + firstAvailable"
	has "$TMP/err" "${c}spec\.devices\.requests\[1\]\.exactly\.count: Invalid value: 2: must not be specified when allocationMode is 'All'" \
		"All with count"
	has "$TMP/err" "${c}spec\.devices\.requests\[2\]\.exactly\.selectors\[0\]\.cel\.expression: Invalid value: .*Syntax error" \
		"CEL syntax error"
	has "$TMP/err" "^ \| \.+\^$" "caret line of the CEL syntax error"
	has "$TMP/err" "${c}spec\.devices\.requests\[3\]\.exactly\.count: Invalid value: \"two\": must be an integer" \
		"count: \"two\""
	has "$TMP/err" "${c}spec\.devices\.requests\[4\]\.exactly\.deviceClassName: Invalid value: \"Not\.A\.DNS_name\"" \
		"bad class name"
	has "$TMP/err" "${c}spec\.devices\.requests\[4\]: Duplicate value: \"both\"" "duplicate request"
	has "$TMP/err" "${s}spec\.devices\[1\]: Duplicate value: \"gpu-0\"" "duplicate device"
	has "$TMP/err" "${s}spec\.devices\[2\]\.name: Invalid value: \"GPU_1\"" "bad device name"
	has "$TMP/err" "^$f: document 3: no matches for kind \"Widget\" in version \"resource\.k8s\.io/v1\" \(resource\.k8s\.io/v1 serves DeviceClass, " \
		"unknown kind of a group dratopo reads: an error, as kubectl apply fails it"
	[ -s "$TMP/out" ] && fail "bad-fields: summary printed although invalid"
fi

if expect 1 "$BIN" validate -f "$Q/policy-bad-step.yaml"; then
	p="^$Q/policy-bad-step.yaml: document 1 \(ResourceSlice shared-gpus\): spec\.devices"
	has "$TMP/err" "${p}\[0\]\.capacity\[memory\]\.requestPolicy\.validRange\.step: Invalid value: \"-1Gi\": must be greater than zero" \
		"negative step"
	has "$TMP/err" "${p}\[1\]\.capacity\[memory\]\.requestPolicy\.validValues\[1\]: .*sorted in ascending order" \
		"unsorted validValues"
	has "$TMP/err" "${p}\[1\]\.capacity\[memory\]\.requestPolicy\.validValues: .*default value is not valid" \
		"default not in validValues"
	has "$TMP/err" "${p}\[2\]\.capacity\[memory\]\.requestPolicy\.validRange\.max: .*min is larger than max" \
		"min > max"
	[ "$(grep -c ': document ' "$TMP/err")" = 5 ] || fail "policy-bad-step: want 5 errors"
fi

# Accepted shapes: JSON, anchors and merge keys, an empty document between
# two, stdin, and the slices hwdb prints.
expect 0 "$BIN" validate -f "$Q/claim.json" && has "$TMP/out" '^ResourceClaim: 1 valid$' "JSON input"
expect 0 "$BIN" validate -f "$Q/anchors.yaml" && has "$TMP/out" '^ResourceClaim: 1 valid$' "anchors"
expect 0 "$BIN" validate -f "$Q/multidoc-empty.yaml" && has "$TMP/out" '^DeviceClass: 2 valid$' \
	"empty document"
expect 0 "$BIN" validate -f - <"$Q/claim.json" && has "$TMP/out" '^ResourceClaim: 1 valid$' "stdin"
expect 1 "$BIN" validate -f "$Q/list-nested.yaml" &&
	has "$TMP/err" "\(DeviceClass inner\.example\.com\): spec\.selectors\[0\]\.cel\.expression: .*no matching overload" \
		"error inside a nested List"
for mode in disabled 4 memory unlimited; do
	for t in p5.48xlarge p4d.24xlarge g6.xlarge p5en.48xlarge; do
		"$BIN" hwdb show "$t" -o yaml --consumable-capacity "$mode" >"$TMP/slices.yaml" ||
			{ fail "hwdb show $t $mode"; continue; }
		expect 0 "$BIN" validate -f "$TMP/slices.yaml" &&
			has "$TMP/out" '^ResourceSlice: [12] valid$' "hwdb show $t ($mode) validates"
	done
done

# ---- garbage in: a clear error naming the file, never a crash or a hang ----

printf '\xa9\x01\x00binary' >"$TMP/binary.bin"
printf '%*s' 300 '' | tr ' ' '[' >"$TMP/deep.yaml"
printf 'a: &a [x, x, x, x, x, x, x, x, x, x]\n' >"$TMP/laughs.yaml"
for i in 1 2 3 4 5 6 7 8; do
	printf 'b%d: &b%d [*%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s]\n' "$i" "$i" \
		"$([ $i = 1 ] && echo a || echo b$((i - 1)))" \
		"$([ $i = 1 ] && echo a || echo b$((i - 1)))" \
		"$([ $i = 1 ] && echo a || echo b$((i - 1)))" \
		"$([ $i = 1 ] && echo a || echo b$((i - 1)))" \
		"$([ $i = 1 ] && echo a || echo b$((i - 1)))" \
		"$([ $i = 1 ] && echo a || echo b$((i - 1)))" \
		"$([ $i = 1 ] && echo a || echo b$((i - 1)))" \
		"$([ $i = 1 ] && echo a || echo b$((i - 1)))" \
		"$([ $i = 1 ] && echo a || echo b$((i - 1)))" \
		"$([ $i = 1 ] && echo a || echo b$((i - 1)))" >>"$TMP/laughs.yaml"
done
printf '{"apiVersion": "v1", "kind": "List", "items": [' >"$TMP/trunc.json"
for cmd in "validate" "plan" "allocate --node n"; do
	for f in binary.bin deep.yaml laughs.yaml trunc.json; do
		# shellcheck disable=SC2086
		expect 1 "$BIN" $cmd -f "$TMP/$f" && has "$TMP/err" "^$TMP/$f: document 1: " "$cmd $f"
	done
	# shellcheck disable=SC2086
	# a directory is read like kubectl apply -f DIR: its manifests, each one's errors
	expect 1 "$BIN" $cmd -f "$TMP" && has "$TMP/err" "^$TMP/deep.yaml: document 1: " "$cmd DIR" &&
		has "$TMP/err" "^$TMP/trunc.json: document 1: " "$cmd DIR"
	# shellcheck disable=SC2086
	expect 1 "$BIN" $cmd -f "$TMP/absent.yaml" && has "$TMP/err" "No such file or directory" "$cmd absent"
done
expect 1 "$BIN" validate -f "$TMP/laughs.yaml" && has "$TMP/err" "document too large" "alias bomb"
expect 1 "$BIN" validate -f "$TMP/deep.yaml" && has "$TMP/err" "nesting deeper than" "deep nesting"
expect 2 "$BIN" validate
expect 2 "$BIN" validate -f
expect 2 "$BIN" validate -o xml -f "$Q/claim.json"
expect 2 "$BIN" no-such-command
# QA-24: no --help line runs far past 80 columns (allocate had one of 134)
for c in validate "cel eval" "hwdb list" allocate plan nodes types; do
	# shellcheck disable=SC2086
	expect 0 "$BIN" $c --help && [ "$(awk 'length > 90' "$TMP/out" | wc -l)" = 0 ] ||
		fail "$c --help: lines over 90 columns"
done
# QA-63: plan --help lists every kind plan reads.
expect 0 "$BIN" plan --help && has "$TMP/out" "DaemonSet \\(node overhead\\), NodePool, EC2NodeClass, NodeOverlay" \
	"plan --help names DaemonSet and NodeOverlay"
# QA-22: plan names the option without its value, and a stray argument
expect 2 "$BIN" plan -f "$Q/claim.json" -o && has "$TMP/err" "^dratopo plan: option '-o' needs a value$" "plan -o"
expect 2 "$BIN" plan -o json "$Q/claim.json" &&
	has "$TMP/err" "^dratopo plan: unexpected argument '.*claim\.json' \(manifests follow -f\)$" "plan stray argument"

# ---- cel eval: printing forms, errors, runaway expressions ----

# cel_is EXPR WANT: dratopo cel eval EXPR prints WANT and exits 0
cel_is() {
	expect 0 "$BIN" cel eval "$1" && [ "$(cat "$TMP/out")" != "$2" ] &&
		fail "cel eval $1: printed $(cat "$TMP/out"), want $2"
	return 0
}
if "$BIN" cel eval 1 >/dev/null 2>&1; then
	cel_is '1 + 2' '3'
	cel_is '3u' '3u'
	cel_is '2.0 / 2.0' '1.0'
	cel_is '1e100' '1e+100'
	cel_is '0.1 + 0.2' '0.30000000000000004'
	cel_is '-1.0 / 0.0' 'double("-inf")'
	cel_is '0.0 / 0.0' 'double("nan")'
	cel_is '"q\"b\\n\n\t\x01é"' '"q\"b\\n\n\t\x01é"'
	cel_is 'bytes("é")' 'b"\xc3\xa9"'
	cel_is '[1, dyn("a")]' '[1, "a"]'
	cel_is '{"k": 1}' '{"k": 1}'
	cel_is 'type(1)' 'int'
	cel_is 'duration("1h")' 'duration("3600s")'
	cel_is 'timestamp("2009-02-13T23:31:30.5Z")' 'timestamp("2009-02-13T23:31:30.5Z")'
	cel_is 'optional.of(optional.none())' 'optional.of(optional.none())'
	cel_is 'quantity("1.5Gi")' 'quantity("1536Mi")'
	cel_is 'semver("1.2.3-rc.1+b")' 'semver("1.2.3-rc.1+b")'
	cel_is '-9223372036854775808' '-9223372036854775808'
	# the README's example, as pasted (QA-20: a literal of a string and an int
	# does not compile in the Kubernetes environment)
	cel_is '"%s has %d GPUs".format(["p5.48xlarge", dyn(8)])' '"p5.48xlarge has 8 GPUs"'
	expect 2 "$BIN" cel eval '"%s has %d GPUs".format(["p5.48xlarge", 8])'
	expect 1 "$BIN" cel eval '9223372036854775807 + 1' && has "$TMP/err" '^error: .*overflow' "overflow"
	expect 1 "$BIN" cel eval '1 / 0' && has "$TMP/err" '^error: division by zero' "division by zero"
	expect 2 "$BIN" cel eval '1 +' && has "$TMP/err" '^ \| \.\.\.\^$' "caret under the end"
	expect 2 "$BIN" cel eval 'foo' && has "$TMP/err" "undeclared reference to 'foo'" "undeclared"
	for e in 'lists.range(1000).all(a, lists.range(1000).all(b, lists.range(1000).all(c, true)))' \
		'lists.range(5000).map(x, lists.range(5000).map(y, x * y)).size()'; do
		expect 1 "$BIN" cel eval "$e" && has "$TMP/err" 'cost limit exceeded' "runaway: $e"
	done
	expect 0 "$BIN" cel eval --let 'x=[1, 2]' --let 'y=3' 'x.size() + y' && has "$TMP/out" '^5$' "--let"
	expect 2 "$BIN" cel eval --let 'x=1' --let 'x=2' 'x'
	expect 2 "$BIN" cel eval --let 'x' 'x'
	expect 2 "$BIN" cel eval --repeat 0 '1'
	# QA-36: an expression may start with '-'; where it reads as an option,
	# the message says to put it after --.
	cel_is '-(2 + 3)' '-5'
	cel_is '- 1' '-1'
	expect 1 "$BIN" cel eval '-(-9223372036854775808)' && has "$TMP/err" '^error: integer overflow' \
		"negated minimum"
	expect 2 "$BIN" cel eval -x &&
		has "$TMP/err" "^dratopo cel eval: unknown option '-x' \(an operand that starts with '-' goes after --\)$" "'-x' hint"
	expect 0 "$BIN" cel eval --let x=2 -- -x && has "$TMP/out" '^-2$' "-- then '-x'"
	expect 2 "$BIN" cel eval -- && has "$TMP/err" '^dratopo cel eval: no expression to evaluate$' "-- alone"
	if expect 0 "$BIN" cel eval --repeat 100 '1 + 1'; then
		has "$TMP/out" '^2$' "--repeat result"
		has "$TMP/err" '^100 evals, [0-9.]+ ns/eval$' "--repeat report"
	fi
	dev=(--device "$Q/p5-node1-slices.yaml" --device-name gpu-3)
	expect 0 "$BIN" cel eval "${dev[@]}" 'device.attributes["gpu.nvidia.com"].productName' &&
		has "$TMP/out" '^"NVIDIA H100 80GB HBM3"$' "--device attribute"
	expect 0 "$BIN" cel eval "${dev[@]}" 'device.capacity["gpu.nvidia.com"].memory' &&
		has "$TMP/out" '^quantity\("81152Mi"\)$' "--device capacity"
	expect 1 "$BIN" cel eval "${dev[@]}" 'device.attributes["gpu.nvidia.com"].nope' &&
		has "$TMP/err" 'no such key: nope' "--device missing attribute"
	expect 1 "$BIN" cel eval --device "$Q/p5-node1-slices.yaml" 'true' &&
		has "$TMP/err" 'device-name' "several devices: ask for --device-name"
else
	fail "cel eval is not part of this build"
fi

# ---- hwdb ----

expect 1 "$BIN" hwdb show nope.xlarge && has "$TMP/err" "unknown instance type 'nope\.xlarge'" "unknown type"
# QA-66: the suggestion ignores case; QA-67: "1 GPU", not "1 GPUs"
expect 1 "$BIN" hwdb show P5.48XLARGE && has "$TMP/err" "(did you mean 'p5\.48xlarge'\?)" "upper-case type"
expect 2 "$BIN" hwdb show p5.4xlarge --mig "disabled;3g.40gb" &&
	has "$TMP/err" "2 GPU entries, p5\.4xlarge has 1 GPU \(give one" "MIG layout entries on one GPU"
for mode in 0 -3 bogus 99999999999999999999; do
	expect 2 "$BIN" hwdb show p5.48xlarge --consumable-capacity "$mode" &&
		has "$TMP/err" "invalid consumable capacity mode" "mode $mode"
done
expect 2 "$BIN" hwdb list -o xml
# QA-23: an unknown family is an error, not an empty table
expect 1 "$BIN" hwdb list --family p55 && has "$TMP/err" "no instance type of family 'p55'" "unknown family"
expect 0 "$BIN" hwdb list --family p5e -o json && jqis '[.instanceTypes[].name]' '["p5e.48xlarge"]' "family p5e"
# list is cheapest first (types without a price last)
if expect 0 "$BIN" hwdb list -o json; then
	jqis '[.instanceTypes[] | .onDemandPricePerHour | select(. != null)] | . == sort' true \
		"hwdb list sorted by price"
fi
# QA-81: --region's JSON names the region its order follows
if expect 0 "$BIN" hwdb list --efa --region eu-west-1 -o json; then
	jqis '.region' '"eu-west-1"' "QA-81: list -o json names the region"
	jqis '[.instanceTypes[] | .onDemandPrices["eu-west-1"]] | . == sort' true \
		"QA-81: sorted by the region's prices"
fi
# QA-82: filters that leave nothing say so (an empty result, exit 0)
expect 0 "$BIN" hwdb list --efa --family p5 --region eu-west-1 &&
	has "$TMP/err" "no instance type matches these filters \(--region eu-west-1 lists only" \
		"QA-82: an empty list says so"

# ---- allocate: the scheduler's semantics on one node ----

A=("$BIN" allocate -f "$Q/classes.yaml")
# distinctAttribute over 2 GPUs; 1 GPU + 4 EFAs on one PCIe root
if expect 0 "${A[@]}" -f "$Q/p5-node1-slices.yaml" -f "$Q/alloc-scenarios.yaml" --node node-1; then
	jqis '.claims | map(.name)' '["ml/pair","ml/aligned"]' "allocate order"
	jqis '.claims[0].allocation.devices.results | map(.device) | unique | length' 2 "pair: 2 GPUs"
	jqis '[.claims[1].allocation.devices.results[] | select(.request == "efa")] | length' 4 \
		"aligned: 4 EFAs"
	"$BIN" hwdb show p5.48xlarge -o json | jq -c '[.resourceSlices[].spec.devices[] |
		{(.name): .attributes["resource.kubernetes.io/pcieRoot"].string}] | add' >"$TMP/roots.json"
	roots=$(jq -c --slurpfile r "$TMP/roots.json" \
		'[.claims[1].allocation.devices.results[].device | $r[0][.]] | unique | length' "$TMP/out")
	[ "$roots" = 1 ] || fail "aligned: devices on $roots PCIe roots, want 1"
	roots=$(jq -c --slurpfile r "$TMP/roots.json" \
		'[.claims[0].allocation.devices.results[].device | $r[0][.]] | unique | length' "$TMP/out")
	[ "$roots" = 2 ] || fail "pair: GPUs on $roots PCIe roots, want 2 (distinctAttribute)"
fi
# matchAttribute on the root for 2 GPUs: one GPU per root on a p5
if expect 3 "${A[@]}" -f "$Q/p5-node1-slices.yaml" -f "$Q/alloc-same-root.yaml" --node node-1; then
	jqis '.claims' '[]' "same-root: no claims"
	jqis '.unallocatable | length > 0' true "same-root: a reason"
fi
# QA-65: a whole GPU with too little memory; the reason gives asked and available.
expect 3 "${A[@]}" -f "$Q/p5-node1-slices.yaml" -f "$Q/alloc-capacity-over.yaml" --node node-1 &&
	jqis '.unallocatable | test("8 without the capacity \\(memory: 100Gi asked, 81152Mi left\\)$")' true \
		"memory over a whole GPU's"
# QA-68: templates and workloads alone: an empty result, and a warning that says why.
expect 0 "${A[@]}" -f "$Q/alloc-templates-only.yaml" --node node-1 && jqis '.claims' '[]' "nothing to allocate" &&
	has "$TMP/err" "^warning: nothing to allocate: no ResourceClaim in the input \(allocate makes no claims from ResourceClaimTemplates or pods: 'dratopo plan' does\)$" \
		"nothing to allocate, said"
T=(-f "$Q/alloc-tainted.yaml" --node node-2)
if expect 0 "${A[@]}" "${T[@]}" -f "$Q/alloc-taint-claims.yaml"; then
	jqis '.claims[0].allocation.devices.results[0].device' '"gpu-0"' "tolerated taint"
	jqis '.claims[0].allocation.devices.results[0].tolerations[0].key' '"example.com/broken"' \
		"tolerations copied"
fi
expect 3 "${A[@]}" "${T[@]}" -f "$Q/alloc-taint-intolerant.yaml" &&
	jqis '.unallocatable | test("default/intolerant")' true "untolerated taint"
expect 3 "${A[@]}" "${T[@]}" -f "$Q/alloc-all-mode.yaml" &&
	jqis '.unallocatable | test("all 2 matching devices")' true "All mode with a tainted device"
expect 0 "${A[@]}" "${T[@]}" -f "$Q/alloc-first-available.yaml" &&
	jqis '.claims[0].allocation.devices.results | map([.request, .device])' '[["gpu/any-40g","gpu-1"]]' \
		"firstAvailable falls back"
expect 1 "${A[@]}" "${T[@]}" -f "$Q/alloc-unknown-class.yaml" &&
	has "$TMP/err" "tpu\.example\.com" "unknown class named"
S=(-f "$Q/alloc-shared.yaml" --node node-3)
if expect 0 "${A[@]}" "${S[@]}" -f "$Q/alloc-shared-fit.yaml"; then
	jqis '.claims | map(.allocation.devices.results[0] | [.device, .consumedCapacity.memory])' \
		'[["gpu-0","20Gi"],["gpu-0","10Gi"]]' "request policy rounding next to a holder"
	jqis '[.claims[].allocation.devices.results[0].shareID | test("^[0-9a-f-]{36}$")] | all' true \
		"shareIDs"
	# QA-39: the fields of a result in design.md's order
	jqis '.claims[0].allocation.devices.results[0] | keys_unsorted' \
		'["request","driver","pool","device","shareID","consumedCapacity"]' "result field order"
fi
expect 3 "${A[@]}" "${S[@]}" -f "$Q/alloc-shared-over.yaml"
# -o yaml gives the claims with status.allocation: valid, and in use when
# read back (gpu-0 then holds 70Gi of 80Gi: 10Gi still fits, 11Gi rounds to 20Gi)
if expect 0 "${A[@]}" "${S[@]}" -f "$Q/alloc-shared-fit.yaml" -o yaml; then
	cp "$TMP/out" "$TMP/allocated.yaml"
	expect 0 "$BIN" validate -f "$TMP/allocated.yaml" && has "$TMP/out" '^ResourceClaim: 2 valid$' \
		"allocate -o yaml validates"
	for m in 10Gi 11Gi; do
		sed "s/41Gi/$m/; s/too-big/next/" "$Q/alloc-shared-over.yaml" >"$TMP/next.yaml"
		want=0
		[ "$m" = 11Gi ] && want=3
		expect "$want" "${A[@]}" "${S[@]}" -f "$TMP/allocated.yaml" -f "$TMP/next.yaml" ||
			fail "allocated claims read back: $m"
	done
fi

# ---- plan ----

if expect 0 "$BIN" plan -o json -f "$Q/plan-h100-pair.yaml"; then
	jqis '[.nodeClaims[] | [.pods[0], .instanceType]] | sort' \
		'[["ml/ampere","p4de.24xlarge"],["ml/trainer","p5.48xlarge"]]' "H100 pair, Ampere 40Gi"
fi
expect 0 "$BIN" plan -o json -f "$Q/plan-resources.yaml" &&
	jqis '[.nodeClaims[] | [.nodePool, .instanceType]]' '[["g6-small","g6.16xlarge"]]' \
		"CPU and memory force a bigger g6"
# QA-34: NodeClaim requests in Quantity's canonical form, as Karpenter writes them.
expect 0 "$BIN" plan -o yaml -f "$Q/plan-resources.yaml" &&
	has "$TMP/out" '^      cpu: "40"$' "NodeClaim cpu canonical" &&
	has "$TMP/out" '^      memory: 150Gi$' "NodeClaim memory canonical"
if expect 3 "$BIN" plan -o json -f "$Q/plan-taints-selectors.yaml"; then
	jqis '[.nodeClaims[] | [.pods[0], .nodePool, .instanceType]] | sort' \
		'[["default/plain","arm","g5g.xlarge"],["default/tolerant","four-gpu","g4dn.12xlarge"]]' \
		"taints, Gt/Lt, nodeSelector"
	jqis '.unschedulable | map(.pod)' '["default/picky"]' "picky unschedulable"
	jqis '.unschedulable[0].reason | test("taint nvidia.com/gpu:NoSchedule not tolerated") and test("kubernetes.io/arch=amd64")' \
		true "actionable reason"
fi
if expect 0 "$BIN" plan -o json -f "$Q/plan-workloads.yaml"; then
	jqis '[.nodeClaims[].pods | length] | add' 7 "3 + 2 + 2 pods"
	jqis '[.nodeClaims[] | select(.instanceType == "p5.48xlarge")] | length' 2 "StatefulSet on p5"
	jqis '[.nodeClaims[] | select(any(.claims[]; .claim == "team/shared-gpu")) | .pods | length]' '[2]' \
		"shared claim: both Job pods on one node"
	jqis '.totalPricePerHour == ([.nodeClaims[].pricePerHour] | add)' true "total is the sum"
fi
if expect 0 "$BIN" plan -o yaml -f "$Q/plan-workloads.yaml"; then
	cp "$TMP/out" "$TMP/nodeclaims.yaml"
	expect 0 "$BIN" validate -f "$TMP/nodeclaims.yaml" && has "$TMP/out" '^NodeClaim: 6 valid$' \
		"plan -o yaml validates"
fi
if expect 0 "$BIN" plan -o json -f "$Q/p5-node1-slices.yaml" -f "$Q/plan-existing.yaml"; then
	jqis '.existingNodes | map([.node, .pods])' '[["node-1",["default/first"]]]' "existing node first"
	jqis '[.existingNodes[0].claims[0].results[].device] | sort' '["gpu-6","gpu-7"]' \
		"the free GPUs of the existing node"
	jqis '[.nodeClaims[] | [.pods, .instanceType]]' '[[["default/second"],"g5g.16xlarge"]]' \
		"the second pod on the cheapest 2-GPU type"
fi
if expect 3 "$BIN" plan -o json -f "$Q/plan-unschedulable.yaml"; then
	jqis '.nodeClaims' '[]' "nothing to launch"
	jqis '.unschedulable | map(.pod) | sort' '["default/huge-memory","default/sixteen","default/tpu"]' \
		"all three unschedulable"
	jqis '[.unschedulable[] | select(.pod == "default/huge-memory") | .reason | test("memory")]' \
		'[true]' "memory named"
fi
if expect 3 "$BIN" plan -o table -f "$Q/plan-unschedulable.yaml"; then
	[ "$(grep -c '^unschedulable ' "$TMP/out")" = 3 ] || fail "table: 3 unschedulable rows"
fi
expect 0 "$BIN" plan -o json -f "$Q/plan-gpu-memory.yaml" &&
	jqis '[.nodeClaims[] | [.instanceType, (.pods | length)]]' '[["g6e.xlarge",2],["g6e.xlarge",2]]' \
		"GPU memory sharing packs two 20Gi pods per L40S"
expect 0 "$BIN" plan -o json -f "$Q/plan-init-containers.yaml" &&
	jqis '[.nodeClaims[] | [.instanceType, .pods]]' '[["g5g.16xlarge",["default/with-init"]]]' \
		"init container requests; bound pod not planned"
expect 0 "$BIN" plan -o json -f "$Q/plan-pool-limits.yaml" &&
	jqis '[.nodeClaims[] | [.nodePool, .instanceType]]' \
		'[["small","g6.xlarge"],["small","g6.xlarge"],["big","g6.xlarge"]]' "weight first, then limits"
# a claim over the 32-result limit fails its pods only
if expect 3 "$BIN" plan -o json -f "$Q/plan-over-limit.yaml"; then
	jqis '[.nodeClaims[].pods | length] | add' 5 "Deployment and Job still planned"
	jqis '.unschedulable | map(.pod)' '["team/train-0","team/train-1"]' "StatefulSet pods unschedulable"
	jqis '[.unschedulable[].reason | test("exceeds the claim limit of 32")] | all' true "limit named"
fi
if expect 3 "$BIN" plan -o json -f "$Q/plan-missing-refs.yaml"; then
	jqis '.unschedulable | map([.pod, .reason])' \
		'[["ml/no-claim","resourceClaim ml/does-not-exist not found"],["ml/wrong-ns","resourceClaimTemplate ml/one-gpu not found"]]' \
		"unresolved references"
fi
expect 1 "$BIN" validate -f "$Q/pod-undeclared-claim.yaml" &&
	has "$TMP/err" 'spec\.containers\[0\]\.resources\.claims\[0\]: Not found: "nothing"' "undeclared claim"
if expect 1 "$BIN" validate -f "$Q/claim-more-bad.yaml"; then
	has "$TMP/err" 'metadata\.name: Invalid value: "a+": must be no more than 253 characters' "254-char name"
	has "$TMP/err" 'requests\[0\]\.firstAvailable: Too many: 9: must have at most 8 items' "9 subrequests"
	has "$TMP/err" 'tolerations\[0\]\.operator: Unsupported value: "Sometimes"' "toleration operator"
	has "$TMP/err" 'constraints\[0\]\.requests\[0\]: Invalid value: "nope"' "constraint request"
	has "$TMP/err" 'document 2 \(ResourceClaim default/\): metadata\.name: Required value' "no name"
	[ "$(grep -c ': document ' "$TMP/err")" = 5 ] || fail "claim-more-bad: want 5 errors (count 0 defaults to 1)"
fi
# the README's validate example (QA-19): the seed's files but one of its two
# EC2NodeClasses named gpu-dra; all five together are a duplicate
expect 0 "$BIN" validate -f "$SEED"/{nodepool,ec2nodeclass,large-gpu,gpu-efa-aligned}.yaml &&
	has "$TMP/out" '^Pod: 2 valid$' "README validate example"
expect 1 "$BIN" validate -f "$SEED"/*.yaml &&
	has "$TMP/err" 'EC2NodeClass gpu-dra\): metadata\.name: Duplicate value: "gpu-dra"' "seed: duplicate class"
expect 0 "$BIN" plan -o json -f "$SEED/gpu-efa-aligned.yaml" -f "$SEED/nodepool.yaml" \
	-f "$SEED/ec2nodeclass.yaml" &&
	jqis '[.nodeClaims[] | [.nodePool, .instanceType]]' '[["gpu-dra","p5.4xlarge"]]' "seed GPU+EFA"

# QA-17: the default classes on MIG layouts: a whole GPU is never a MIG slice
if expect 3 "$BIN" plan -o json -f "$Q/plan-mig-classes.yaml"; then
	jqis '[.nodeClaims[] | [.pods[0], .instanceType, .claims[0].results[0].device]]' \
		'[["default/whole","g6.xlarge","gpu-0"],["default/slice","p5.4xlarge","gpu-0-mig-1g10gb-0"]]' \
		"gpu.nvidia.com: whole GPUs; mig.nvidia.com: slices"
	jqis '.unschedulable | map(.pod)' '["default/whole-h100"]' "no whole H100 under all-1g.10gb"
fi
# QA-18: a selector error is only named on a device the request's class selects
if expect 3 "$BIN" plan -o json -f "$Q/plan-class-hint.yaml"; then
	jqis '.unschedulable[0].reason | test("0 of the node.s 2 devices match the selectors")' true \
		"no GPU has 140Gi"
	jqis '.unschedulable[0].reason | test("dra.net|efa-0")' false "no EFA in a GPU request's reason"
fi
# QA-26: validate checks the EC2NodeClass annotations plan reads, in plan's
# words; a profile no hwdb GPU has is only a warning; plan refuses the same
f="$Q/ec2nodeclass-bad-annotations.yaml"
a="^$f: document 1 \(EC2NodeClass nc\): metadata\.annotations\[karpenter\.k8s\.aws/nvidia"
for cmd in validate plan; do
	expect 1 "$BIN" $cmd -f "$f" &&
		has "$TMP/err" "${a}-consumable-capacity\]: invalid consumable capacity mode \"lots\": must be" \
			"$cmd: bad consumable capacity"
done
expect 1 "$BIN" validate -f "$f" &&
	has "$TMP/err" "^warning: ${a#^}-mig-layout\]: no GPU in hwdb has MIG profile \"9g\.99gb\"" \
		"unknown MIG profile warned about"
[ "$(grep -c ': document ' "$TMP/err")" = 2 ] || fail "bad annotations: want 1 error, 1 warning"
sed -e 's/"9g.99gb"/"all-1g.10gb;bogus!"/' -e 's/"lots"/"4"/' "$f" >"$TMP/nc-mig.yaml"
expect 1 "$BIN" validate -f "$TMP/nc-mig.yaml" &&
	has "$TMP/err" "nvidia-mig-layout\]: MIG layout \"all-1g\.10gb;bogus!\": GPU entry 1: '!' cannot be" \
		"bad MIG layout syntax"
sed -e 's/"9g.99gb"/"3g.40gb,2g.20gb;disabled"/' -e 's/"lots"/"memory"/' "$f" >"$TMP/nc-ok.yaml"
expect 0 "$BIN" validate -f "$TMP/nc-ok.yaml" && has "$TMP/out" '^EC2NodeClass: 1 valid$' "good annotations"
[ -s "$TMP/err" ] && fail "good annotations: a warning"
# QA-33: the EC2NodeClass and NodePool CRDs' schema and rules, in the API
# server's words
f="$Q/karpenter-unchecked.yaml"
if expect 1 "$BIN" validate -f "$f"; then
	p="^$f: document 1 \(NodePool unchecked\): spec\."
	has "$TMP/err" "${p}disruption\.consolidationPolicy: Unsupported value: \"Sometimes\"" \
		"consolidationPolicy enum"
	has "$TMP/err" "${p}disruption\.consolidateAfter: Invalid value: \"5q\": should match" \
		"consolidateAfter pattern"
	has "$TMP/err" "${p}template\.spec\.expireAfter: Invalid value: \"1y\": should match" \
		"expireAfter pattern"
	p="^$f: document 2 \(EC2NodeClass unchecked\): spec"
	has "$TMP/err" "${p}: Invalid value: \"object\": must specify exactly one of \['role', 'instanceProfile'\]" \
		"role or instanceProfile"
	has "$TMP/err" "${p}\.subnetSelectorTerms: Invalid value: \"array\": subnetSelectorTerms cannot be empty" \
		"no subnet term"
	has "$TMP/err" "${p}\.securityGroupSelectorTerms: Invalid value: \"array\": expected at least one, got none" \
		"empty security group term"
	has "$TMP/err" "${p}\.amiSelectorTerms\[0\]\.alias: Invalid value: \"string\": 'alias' is improperly formatted" \
		"alias format"
	has "$TMP/err" "${p}\.metadataOptions\.httpTokens: Unsupported value: \"sometimes\"" "httpTokens enum"
	has "$TMP/err" "${p}\.blockDeviceMappings\[0\]\.ebs\.volumeSize: Invalid value: \"10Xi\": should match" \
		"volumeSize pattern"
	[ -s "$TMP/out" ] && fail "QA-33: an object still called valid"
fi
# QA-41: a metav1.Time that is no RFC 3339 time is refused as the API
# server's decoder refuses it, the field named
f="$Q/taint-time-added.yaml"
expect 1 "$BIN" validate -f "$f" &&
	has "$TMP/err" "^$f: document 1 \(ResourceSlice taint-time\): spec\.devices\[0\]\.taints\[0\]\.timeAdded: parsing time \"yesterday\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"yesterday\" as \"2006\"$" \
		"timeAdded refused"
sed 's/timeAdded: yesterday/timeAdded: 2026-01-02T03:04:05Z/' "$f" >"$TMP/time-ok.yaml"
expect 0 "$BIN" validate -f "$TMP/time-ok.yaml" && has "$TMP/out" '^ResourceSlice: 1 valid$' "RFC 3339 timeAdded"
# QA-29: plan reports every problem in one run, load and validation
# together, in validate's order and words (validate adds its warning)
f="$Q/plan-two-stage-errors.yaml"
if expect 1 "$BIN" validate -f "$f"; then
	grep -v '^warning: ' "$TMP/err" >"$TMP/validate-errors"
	if expect 1 "$BIN" plan -f "$f"; then
		[ "$(grep -c "^$f: document " "$TMP/err")" = 12 ] || fail "plan: want 12 errors at once"
		cmp -s "$TMP/err" "$TMP/validate-errors" || fail "plan's errors differ from validate's"
		has "$TMP/err" "document 1 \(DeviceTaintRule bad-rule\): spec\.taint\.effect: Unsupported" \
			"plan: a validation error beside the decode errors"
	fi
fi

# QA-31: a new node's host name is its own; a pod pinned to another host
# never goes there.
if expect 3 "$BIN" plan -o json -f "$Q/plan-hostname.yaml"; then
	jqis '[.unschedulable[].pod] | sort' '["default/affinity-elsewhere","default/pinned-elsewhere"]' \
		"pods pinned to absent hosts are unschedulable"
	jqis '.existingNodes[0].pods' '["default/pinned-node-a"]' "pinned pod on its node"
	jqis '[.nodeClaims[].pods[]] | sort' '["default/any-host","default/not-there"]' \
		"NotIn and Exists on the host name fit a new node"
	jqis '.unschedulable[] | select(.pod == "default/pinned-elsewhere") | .reason |
		test("a new node has a host name of its own")' true "hostname reason"
fi

# QA-61: a pod pinned to a zone its NodePool leaves out; the reason names the pool's zones.
if expect 3 "$BIN" plan -o json -f "$Q/plan-zone-excluded.yaml"; then
	z='the NodePool requires topology.kubernetes.io/zone In \\[us-east-1a us-east-1b\\]'
	jqis "[.unschedulable[] | [.pod, (.reason | test(\"nodeSelector topology.kubernetes.io/zone=us-east-1c: $z\"))]]" \
		'[["default/in-c",true],["default/in-c-or-d",false]]' "nodeSelector outside the pool's zones"
	jqis ".unschedulable[1].reason | test(\"zone In \\\\[us-east-1c us-east-1d\\\\] does not match: $z\")" true \
		"node affinity outside the pool's zones"
	jqis '[.nodeClaims[] | .pods[0], (.requirements[] | select(.key == "topology.kubernetes.io/zone") | .values)]' \
		'["default/not-a",["us-east-1b"]]' "NotIn narrows to the pool's other zone"
fi

# QA-16: a Job's pods must say OnFailure or Never.
expect 1 "$BIN" validate -f "$Q/job-restart-always.yaml" &&
	[ "$(grep -c 'spec\.template\.spec\.restartPolicy: Required value: valid values: "OnFailure", "Never"' "$TMP/err")" = 2 ] ||
	fail "both Jobs refused for their restartPolicy"

# QA-37: a node lives in one zone; each NodeClaim names its pods' zone.
if expect 0 "$BIN" plan -o json -f "$Q/plan-zones.yaml"; then
	jqis '[.nodeClaims[] | [.pods[0], (.requirements[] |
		select(.key == "topology.kubernetes.io/zone") | .operator, .values[0])]] | sort' \
		'[["default/in-zone-a","In","us-east-1a"],["default/in-zone-b","In","us-east-1b"]]' \
		"pods pinned to two zones, two NodeClaims in their zones"
fi
if expect 0 "$BIN" plan -f "$Q/plan-zones.yaml"; then
	has "$TMP/out" '^nodeclaim .*  zone=us-east-1a; default/in-zone-a$' "the table names the zone"
fi
if expect 0 "$BIN" plan -o yaml -f "$Q/plan-zones.yaml"; then
	[ "$(grep -c '^  - key: topology.kubernetes.io/zone$' "$TMP/out")" = 2 ] ||
		fail "each NodeClaim's YAML carries its zone requirement"
fi

# QA-79: a NodeClaim whose pods use EFAs asks for every EFA of its type, as
# the controller's do (Karpenter with its DRA support off attaches none
# otherwise); one without asks for none
if expect 0 "$BIN" plan -o yaml -f "$ROOT/tests/fixtures/plan/efa-only.yaml"; then
	t=$(sed -n 's/^  *node.kubernetes.io\/instance-type: //p' "$TMP/out")
	n=$("$BIN" hwdb show "$t" -o json | jq '.instanceType.efa.count')
	[ -n "$t" ] && [ "$n" -gt 0 ] 2>/dev/null || fail "QA-79: no EFA type in the plan ($t, $n)"
	has "$TMP/out" "^      vpc.amazonaws.com/efa: \"$n\"\$" "QA-79: the EFA request of $t"
fi
expect 0 "$BIN" plan -o yaml -f "$ROOT/examples/seed/large-gpu.yaml" &&
	! grep -q 'vpc.amazonaws.com/efa' "$TMP/out" || fail "QA-79: an EFA request without EFA pods"

# ---- addresses (QA-21): a port over 65535 is refused, never wrapped around ----

COORD="${BIN%/dratopo}/dratopo-coordinator"
if [ -x "$COORD" ]; then
	expect 2 "$COORD" --listen 127.0.0.1:99999 --db memory: --insecure &&
		has "$TMP/err" 'listen: address "127\.0\.0\.1:99999": port 99999 is not 0-65535' "coordinator --listen"
	expect 1 "$BIN" nodes --coordinator localhost:70000 --insecure &&
		has "$TMP/err" 'port 70000 is not 0-65535' "nodes --coordinator"
	expect 1 "$AGENT" run --coordinator localhost:99999 --insecure --node-name n --once &&
		has "$TMP/err" 'port 99999 is not 0-65535' "agent run --coordinator"
fi

# ---- agent: the fixture trees and one broken by hand ----

if [ -x "$AGENT" ] && bash "$ROOT/tests/fixtures/agent/mksysfs.sh" "$TMP/sysfs" p5.48xlarge p4d.24xlarge \
	g5.48xlarge p5.48xlarge-degraded unknown broken >/dev/null 2>&1; then
	for t in p5.48xlarge p4d.24xlarge g5.48xlarge; do
		expect 0 "$AGENT" verify --sysfs-root "$TMP/sysfs/$t" && has "$TMP/out" "^$t: match" "verify $t"
		if expect 0 "$AGENT" slices --sysfs-root "$TMP/sysfs/$t"; then
			cp "$TMP/out" "$TMP/agent-slices.yaml"
			expect 0 "$BIN" validate -f "$TMP/agent-slices.yaml" || fail "agent slices of $t invalid"
		fi
	done
	expect 4 "$AGENT" verify --sysfs-root "$TMP/sysfs/p5.48xlarge-degraded" &&
		has "$TMP/out" "GPU count: hwdb has 8 for p5\.48xlarge, this node has 7" "degraded"
	# unknown type: exit 5 with an entry that --hwdb-extra takes back
	if expect 5 "$AGENT" verify --sysfs-root "$TMP/sysfs/unknown"; then
		cp "$TMP/out" "$TMP/learned.yaml"
		expect 0 "$AGENT" verify --sysfs-root "$TMP/sysfs/unknown" --hwdb-extra "$TMP/learned.yaml" ||
			fail "learned entry does not match its own node"
		expect 0 "$BIN" hwdb show p7.48xlarge --hwdb-extra "$TMP/learned.yaml" -o yaml
		# QA-22: --hwdb-extra more than once (priced, so that plan may launch them)
		sed 's/onDemandPricePerHour: null/onDemandPricePerHour: 7.5/' "$TMP/learned.yaml" >"$TMP/p7.yaml"
		sed 's/p7\.48xlarge/p8.48xlarge/' "$TMP/p7.yaml" >"$TMP/p8.yaml"
		expect 0 "$BIN" plan -o json -f "$Q/plan-two-extras.yaml" --hwdb-extra "$TMP/p7.yaml" \
			--hwdb-extra "$TMP/p8.yaml" &&
			jqis '[.nodeClaims[] | [.pods[0], .instanceType]]' \
				'[["default/on-p7","p7.48xlarge"],["default/on-p8","p8.48xlarge"]]' \
				"plan --hwdb-extra twice"
	fi
	expect 4 "$AGENT" verify --sysfs-root "$TMP/sysfs/broken"
	# break a p5 further: garbage NUMA node, a class that is a directory,
	# a dangling device link, a binary product name
	B="$TMP/sysfs/p5.48xlarge"
	D="$B/sys/bus/pci/devices"
	g=$(readlink -f "$D/0000:53:00.0") && echo abc >"$g/numa_node"
	g=$(readlink -f "$D/0000:75:00.0") && rm "$g/class" && mkdir "$g/class"
	ln -s ../../../devices/pci0000:ff/0000:ff:00.0 "$D/0000:ff:00.0"
	if expect 0 "$AGENT" probe --sysfs-root "$B" -o json; then
		jqis '.devices[] | select(.bdf == "0000:53:00.0") | .numaNode' null "garbage numa_node"
		jqis '[.devices[] | select(.kind == "gpu")] | length' 7 "class directory skips one GPU"
		has "$TMP/err" '0000:53:00\.0: numa_node "abc"' "numa warning"
		has "$TMP/err" '0000:75:00\.0/class: not a regular file' "class warning"
		has "$TMP/err" '0000:ff:00\.0: .*No such file' "dangling link warning"
	fi
	head -c 4096 /dev/urandom >"$B/sys/devices/virtual/dmi/id/product_name"
	expect 0 "$AGENT" probe --sysfs-root "$B" -o json && jqis '.instanceType' null "binary product name"
	expect 1 "$AGENT" verify --sysfs-root "$B" && has "$TMP/err" "pass --instance-type" "no type: hint"
	expect 4 "$AGENT" verify --sysfs-root "$B" --instance-type p5.48xlarge -o json &&
		jqis '.verdict' '"drift"' "drift with --instance-type"
	expect 1 "$AGENT" probe --sysfs-root "$TMP/absent" && has "$TMP/err" "is --sysfs-root right" "no tree"
else
	fail "dratopo-agent or the sysfs fixtures missing"
fi

e2e_finish
