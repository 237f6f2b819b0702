#!/bin/bash
# tests/e2e/cel_eval.sh BUILD_DIR - `dratopo cel eval` end to end: the
# printed forms design.md lists, exit codes (1 evaluation error, 2 compile
# error with position and caret line), --let, --device (a device entry and a
# ResourceSlice with --device-name), --repeat and --help.
NAME=cel_eval
. "$(dirname "$0")/lib.sh"
FIX="$ROOT/tests/fixtures/cel_lib"

# run CODE ARGS...: dratopo cel eval ARGS, check the exit status.
run() {
	local want="$1"
	shift
	expect "$want" "$BIN" cel eval "$@"
}

# prints EXPR WANT: the result prints exactly as WANT.
prints() {
	run 0 "$1" || return
	[ "$(cat "$TMP/out")" = "$2" ] || fail "cel eval '$1': got '$(cat "$TMP/out")', want '$2'"
}

# stderr_has TEXT: the last command's stderr contains TEXT.
stderr_has() {
	grep -qF -- "$1" "$TMP/err" || fail "stderr lacks '$1': $(head -3 "$TMP/err")"
}

# --- printed forms (design.md) ---
prints '-3' '-3'
prints '3u' '3u'
prints '1.0' '1.0'
prints '1e100' '1e+100'
prints 'double("inf")' 'double("inf")'
prints 'double("-inf")' 'double("-inf")'
prints 'double("nan")' 'double("nan")'
prints '0.1 + 0.2' '0.30000000000000004'
prints '"a\"b\\c\n\r\t\x01é"' '"a\"b\\c\n\r\t\x01é"'
prints 'b"\x00ab"' 'b"\x00ab"'
prints 'true' 'true'
prints 'null' 'null'
prints '[1, dyn("a")]' '[1, "a"]'
prints '{"k": 1}' '{"k": 1}'
prints 'int' 'int'
prints 'type(1u)' 'uint'
prints 'timestamp("2009-02-13T23:31:30Z")' 'timestamp("2009-02-13T23:31:30Z")'
prints 'duration("1h")' 'duration("3600s")'
prints 'optional.of(1)' 'optional.of(1)'
prints 'optional.none()' 'optional.none()'
prints 'quantity("100Gi")' 'quantity("100Gi")'
prints 'semver("1.2.3")' 'semver("1.2.3")'
# The libraries are all there.
prints '"a,b".split(",").join("-")' '"a-b"'
prints '[3, 1, 2].sort()' '[1, 2, 3]'
prints 'sets.contains([1, 2], [2])' 'true'
prints '"x1y22".findAll("[0-9]+")' '["1", "22"]'
prints 'url("https://e.com:8/p").getPort()' '"8"'
prints 'cidr("10.0.0.0/8").containsIP("10.2.3.4")' 'true'
prints '"%d GPUs".format([8])' '"8 GPUs"'
prints 'semver("v1.02", true)' 'semver("1.2.0")'
prints 'quantity("1Gi").add(quantity("1Gi"))' 'quantity("2Gi")'
# The format library: its values print as the calls that make them.
prints 'format.dns1123Label()' 'format.dns1123Label()'
prints 'format.named("uuid")' 'optional.of(format.uuid())'
prints 'format.named("nope")' 'optional.none()'
prints 'format.dns1123Label().validate("gpu-0")' 'optional.none()'
prints 'format.labelValue().validate("a b").hasValue()' 'true'
prints 'format.uri().validate("example.com")' 'optional.of(["parse \"example.com\": invalid URI for request"])'
prints 'format.named("date").value().validate("2023-02-29")' 'optional.of(["invalid date"])'

# --- exit 1: evaluation errors ---
run 1 '1 / 0' && stderr_has 'error: division by zero'
run 1 'semver("v1.0")' && stderr_has 'error: No Major.Minor.Patch elements found'
run 1 'format.dns1123LabelPrefix().validate("-")' && stderr_has 'slice bounds out of range [:-1]'
run 1 '"ab".matches("(a)\\1" + "")' && stderr_has 'error: error parsing regexp: invalid escape sequence'
# A constant pattern, duration or timestamp is checked when compiling (QA-60).
run 2 '"ab".matches("(a)\\1")' && stderr_has 'ERROR: <input>:1:14: invalid matches argument'
run 2 'duration("1x") > duration("1s")' && stderr_has 'ERROR: <input>:1:10: invalid duration argument'
run 1 '[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(a, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(b, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(c, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(d, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(e, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(f, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(g, true)))))))' &&
	stderr_has 'error: operation cancelled: actual cost limit exceeded'
[ -s "$TMP/out" ] && fail "an evaluation error printed a result"

# --- exit 2: compile errors with position and caret line ---
run 2 '1 +' && stderr_has 'ERROR: <input>:1:4:' && stderr_has ' | ...^'
run 2 'x + 1' && stderr_has "undeclared reference to 'x'" && stderr_has ' | ^'
run 2 '"a".charAt("b")' && stderr_has "found no matching overload for 'charAt'"
run 2 'quantity("1").sign()' && stderr_has 'ERROR: <input>:1:'
run 2 'format.uuid().validate(1)' && stderr_has "found no matching overload for 'validate'"

# --- --let ---
run 0 --let x=40 --let 'name="gpu"' 'x + 2 == 42 && name.upperAscii() == "GPU"' &&
	[ "$(cat "$TMP/out")" = true ] || fail "--let: $(cat "$TMP/out" "$TMP/err")"
run 0 --let 'l=[1, 2]' 'l.sum()' && [ "$(cat "$TMP/out")" = 3 ] || fail "--let list"
run 2 --let novalue 'novalue' && stderr_has 'NAME=EXPR'
run 2 --let '1x=3' 'true' && stderr_has 'not a CEL identifier'
run 2 --let 'in=3' 'true' && stderr_has 'not a CEL identifier'
# QA-95: worded as the parser words a bad value, with the synopsis
run 2 --let 'x' 'x' && stderr_has 'dratopo cel eval: --let: wants NAME=EXPR, got "x"' &&
	stderr_has 'usage: dratopo cel eval '
run 2 --let x=1 --let x=2 'x' && stderr_has "already declared"
run 2 --let device=1 'device'
run 2 --let 'x=1 +' 'x' && stderr_has 'ERROR: <input>:1:4:'
run 1 --let 'x=1 / 0' 'x' && stderr_has 'error: --let x: division by zero'
run 1 'device.driver' && stderr_has 'no such attribute: device'
run 1 --let x=1 'device.driver' && stderr_has 'no such attribute: device'

# --- --device: an entry with a driver ---
H200="$FIX/h200-device.yaml"
run 0 --device "$H200" 'device.attributes["gpu.nvidia.com"].cudaComputeCapability.compareTo(semver("9.0.0")) >= 0 && device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("100Gi")) >= 0' &&
	[ "$(cat "$TMP/out")" = true ] || fail "seed selector on the H200: $(cat "$TMP/out")"
run 0 --device "$H200" 'device.driver' && [ "$(cat "$TMP/out")" = '"gpu.nvidia.com"' ] ||
	fail "device.driver"
run 0 --device "$H200" 'device.attributes["gpu.nvidia.com"].productName' &&
	[ "$(cat "$TMP/out")" = '"NVIDIA H200"' ] || fail "unqualified attribute in the driver's domain"
run 0 --device "$H200" 'device.attributes["resource.kubernetes.io"].pcieRoot' &&
	[ "$(cat "$TMP/out")" = '"pci0000:44"' ] || fail "qualified attribute"
run 0 --device "$H200" 'device.capacity["gpu.nvidia.com"].memory' &&
	[ "$(cat "$TMP/out")" = 'quantity("143771Mi")' ] || fail "capacity as quantity"
run 0 --device "$H200" 'device.attributes["gpu.nvidia.com"].memoryMiB >= 102400' &&
	[ "$(cat "$TMP/out")" = true ] || fail "int attribute"
run 0 --device "$H200" 'device.attributes["unknown.example.com"]' &&
	[ "$(cat "$TMP/out")" = '{}' ] || fail "unknown domain is an empty map"
run 1 --device "$H200" 'device.attributes["gpu.nvidia.com"].missing' &&
	stderr_has 'no such key: missing'
run 1 --device "$FIX/bad-version.yaml" 'true' && stderr_has 'bad-version.yaml' &&
	stderr_has 'attributes[cudaComputeCapability].version'
run 1 --device "$FIX/bad-attr.yaml" 'true' && stderr_has 'attributes[productName]: exactly one of'
run 1 --device "$FIX/bad-capacity.yaml" 'true' && stderr_has 'capacity[memory].value'
# JSON, and the v1beta1 `basic` wrapper
run 0 --device "$FIX/h200-device.json" 'device.attributes["gpu.nvidia.com"].index == 1 && device.capacity["gpu.nvidia.com"].memory.isGreaterThan(quantity("100Gi"))' &&
	[ "$(cat "$TMP/out")" = true ] || fail "JSON device entry: $(cat "$TMP/out")"
printf 'driver: [unclosed\n' >"$TMP/broken.yaml"
run 1 --device "$TMP/broken.yaml" 'true' && stderr_has 'broken.yaml'
run 1 --device "$TMP/absent.yaml" 'true'

# --- --device: list-type attributes are lists of their element type ---
ALLOC_FIX="$FIX/../alloc/list-attrs.yaml"
run 0 --device "$ALLOC_FIX" --device-name nic-0 'device.attributes["dra.example.com"].pcieRoot' &&
	[ "$(cat "$TMP/out")" = '["pci0000:20", "pci0000:30"]' ] || fail "strings attribute: $(cat "$TMP/out")"
run 0 --device "$ALLOC_FIX" --device-name nic-0 'device.attributes["dra.example.com"].ports.size() == 2 && 2 in device.attributes["dra.example.com"].ports && device.attributes["dra.example.com"].ports.all(p, p > 0)' &&
	[ "$(cat "$TMP/out")" = true ] || fail "ints attribute with size, in, all"
run 0 --device "$ALLOC_FIX" --device-name nic-1 'device.attributes["dra.example.com"].pcieRoot.includes("pci0000:10") && device.attributes["dra.example.com"].type.includes("nic")' &&
	[ "$(cat "$TMP/out")" = true ] || fail "includes on a list and on a scalar"
run 1 'lists.range(49).includes(0)' &&
	stderr_has "'includes' function cannot be applied to lists longer than 48 values"
printf 'driver: d.io
attributes:
  v: {versions: ["1.0.0", "1.02"]}
' >"$TMP/badlist.yaml"
run 1 --device "$TMP/badlist.yaml" 'true' && stderr_has 'attributes[v].versions[1]'

# --- --device: a ResourceSlice ---
SLICE="$FIX/slice.yaml"
run 0 --device "$SLICE" --device-name efa-1 'device.allowMultipleAllocations && device.capacity["dra.net"].bandwidth == quantity("100G")' &&
	[ "$(cat "$TMP/out")" = true ] || fail "ResourceSlice device: $(cat "$TMP/out")"
run 0 --device "$SLICE" --device-name efa-0 'device.attributes["dra.net"].pciAddress' &&
	[ "$(cat "$TMP/out")" = '"0000:4f:00.0"' ] || fail "qualified name in the driver's domain"
run 1 --device "$SLICE" 'true' && stderr_has '--device-name'
run 1 --device "$SLICE" --device-name efa-9 'true' && stderr_has 'no device named efa-9'
# a multi-document file (hwdb's two slices) and a kind: List are searched whole
"$BIN" hwdb show p5.48xlarge -o yaml --node node-1 >"$TMP/p5.yaml"
run 0 --device "$TMP/p5.yaml" --device-name efa-3 'device.driver == "dra.net"' &&
	[ "$(cat "$TMP/out")" = true ] || fail "efa-3 of the second slice not found"
run 1 --device "$TMP/p5.yaml" 'true' && stderr_has 'the file holds 40 devices'
"$BIN" hwdb show p5.48xlarge -o json --node node-1 |
	jq '{apiVersion: "v1", kind: "List", items: .resourceSlices}' >"$TMP/list.json"
run 0 --device "$TMP/list.json" --device-name gpu-7 'device.driver' &&
	[ "$(cat "$TMP/out")" = '"gpu.nvidia.com"' ] || fail "gpu-7 of a List not found"

# --- --repeat ---
run 0 --device "$H200" --repeat 1000 'device.attributes["gpu.nvidia.com"].productName == "NVIDIA H200"' &&
	[ "$(cat "$TMP/out")" = true ] || fail "--repeat result"
grep -qE '^1000 evals, [0-9.]+ ns/eval$' "$TMP/err" || fail "--repeat line: $(cat "$TMP/err")"
run 2 --repeat 0 'true'
run 2 --repeat x 'true'

# --- usage ---
run 0 --help && grep -q 'usage: dratopo cel eval' "$TMP/out" || fail "--help"
run 2
run 2 '1' '2'
run 2 --device-name x 'true'

e2e_finish
