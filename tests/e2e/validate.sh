#!/bin/bash
# tests/e2e/validate.sh BUILD_DIR - `dratopo validate` end to end: exit
# codes, the summary, the exact error lines, both ways of naming several
# files, JSON output and usage errors (design.md's contract).
NAME=validate.sh
. "$(dirname "$0")/lib.sh"
SEED="$ROOT/examples/seed"
FIX="$ROOT/tests/fixtures/model"

# same FILE TEXT: FILE holds exactly TEXT
same() {
	if ! diff -u <(printf '%s\n' "$2") "$1" >"$TMP/diff"; then
		fail "unexpected output in $1"
		cat "$TMP/diff" >&2
	fi
}

# The seed's manifests are valid: one summary line per kind, in kind order.
# (timesliced.yaml redefines the EC2NodeClass gpu-dra of ec2nodeclass.yaml:
# it is valid on its own, and a duplicate with it.)
seed=("$SEED/ec2nodeclass.yaml" "$SEED/gpu-efa-aligned.yaml" "$SEED/large-gpu.yaml"
	"$SEED/nodepool.yaml")
summary='ResourceClaimTemplate: 2 valid
Pod: 2 valid
NodePool: 1 valid
EC2NodeClass: 1 valid'
if expect 0 "$BIN" validate -f "${seed[@]}"; then
	same "$TMP/out" "$summary"
	[ -s "$TMP/err" ] && fail "the seed gives warnings: $(head -3 "$TMP/err")"
fi
# -f a -f b ... reads the same files as -f a b ...
args=()
for f in "${seed[@]}"; do args+=(-f "$f"); done
if expect 0 "$BIN" validate "${args[@]}"; then
	same "$TMP/out" "$summary"
fi
if expect 0 "$BIN" validate -f "$SEED/timesliced.yaml"; then
	[ -s "$TMP/err" ] && fail "timesliced.yaml gives warnings: $(head -3 "$TMP/err")"
fi

# The same object twice (kind, namespace, name; across files) is an error
# naming both places, and plan and allocate refuse it too.
dup="$SEED/ec2nodeclass.yaml: document 1 (EC2NodeClass gpu-dra): metadata.name: Duplicate value: \"gpu-dra\": also defined in $SEED/timesliced.yaml document 1"
for cmd in validate plan "allocate --node n"; do
	# shellcheck disable=SC2086
	if expect 1 "$BIN" $cmd -f "$SEED/timesliced.yaml" -f "$SEED/ec2nodeclass.yaml"; then
		grep -qxF "$dup" "$TMP/err" || { fail "$cmd: duplicate not reported"; head -3 "$TMP/err" >&2; }
	fi
done
if expect 1 "$BIN" validate -f "$SEED/nodepool.yaml" "$SEED/nodepool.yaml"; then
	same "$TMP/err" "$SEED/nodepool.yaml: document 1 (NodePool gpu-dra): metadata.name: Duplicate value: \"gpu-dra\": also defined in $SEED/nodepool.yaml document 1"
fi

# Items of nested Lists are named by their place: item 1.0 is items[1].items[0].
cat >"$TMP/lists.yaml" <<'YAML'
apiVersion: v1
kind: List
items:
- {apiVersion: resource.k8s.io/v1, kind: DeviceClass, metadata: {name: outer}}
- apiVersion: v1
  kind: List
  items:
  - {apiVersion: resource.k8s.io/v1, kind: DeviceClass, metadata: {name: Inner}}
  - {apiVersion: example.com/v1, kind: Widget, metadata: {name: w}}
YAML
if expect 1 "$BIN" validate -f "$TMP/lists.yaml"; then
	grep -q "^$TMP/lists.yaml: document 1, item 1.0 (DeviceClass Inner): metadata.name: Invalid value: \"Inner\"" "$TMP/err" ||
		fail "nested List item not named 1.0"
	grep -qxF "warning: $TMP/lists.yaml: document 1, item 1.1: skipping example.com/v1 Widget: not a kind dratopo reads" "$TMP/err" ||
		fail "skipped nested List item not named 1.1"
fi

# List-type attributes: valid as written; a list attribute caps the slice at
# 64 devices; list items count one each toward the 48 values of a device.
if ! expect 0 "$BIN" validate -f "$ROOT/tests/fixtures/alloc/list-attrs.yaml"; then
	fail "list-attrs.yaml should be valid"
fi
{
	printf 'apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\nspec:\n'
	printf '  driver: d.example.com\n  pool: {name: p, resourceSliceCount: 1}\n  allNodes: true\n'
	printf '  devices:\n  - name: l\n    attributes:\n      roots: {strings: [a, b]}\n'
	printf '      many: {ints: [%s]}\n' "$(seq -s, 1 47)"
	for i in $(seq 1 64); do printf '  - name: d%d\n' "$i"; done
} >"$TMP/list-slice.yaml"
if expect 1 "$BIN" validate -f "$TMP/list-slice.yaml"; then
	grep -qF "(ResourceSlice s): spec.devices: Too many: 65: must have at most 64 items" "$TMP/err" ||
		fail "64-device limit with list attributes: $(cat "$TMP/err")"
fi
sed -i '/^  - name: d[0-9]*$/d' "$TMP/list-slice.yaml"
if expect 1 "$BIN" validate -f "$TMP/list-slice.yaml"; then
	grep -qF "spec.devices[0].attributes: Invalid value: 49: the total number of attribute values (list items count individually) must not exceed 48" "$TMP/err" ||
		fail "48 attribute values: $(cat "$TMP/err")"
fi

# NodePool requirements: Gt/Lt take one non-negative integer (Karpenter's CRD).
cat >"$TMP/np.yaml" <<'YAML'
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: np}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: gpu-dra}
      requirements:
      - {key: karpenter.k8s.aws/instance-gpu-count, operator: Gt, values: ["three"]}
      - {key: karpenter.k8s.aws/instance-cpu, operator: Lt, values: ["-1"]}
      - {key: karpenter.k8s.aws/instance-cpu, operator: Gt, values: ["4"]}
YAML
for cmd in validate plan; do
	if expect 1 "$BIN" $cmd -f "$TMP/np.yaml"; then
		grep -qxF "$TMP/np.yaml: document 1 (NodePool np): spec.template.spec.requirements[0].values[0]: Invalid value: \"three\": requirements operator 'Gt' or 'Lt' must have a single positive integer value" "$TMP/err" ||
			fail "$cmd: Gt three not reported"
		grep -q 'requirements\[1\].values\[0\]: Invalid value: "-1"' "$TMP/err" ||
			fail "$cmd: Lt -1 not reported"
		grep -q 'requirements\[2\]' "$TMP/err" && fail "$cmd: Gt 4 reported"
	fi
done
# A directory: its *.yaml, *.yml and *.json files in name order, not
# recursively, not hidden ones (as kubectl apply -f DIR).
mkdir -p "$TMP/dir/sub" "$TMP/empty"
cp "$SEED/nodepool.yaml" "$TMP/dir/b.yml"
cp "$SEED/large-gpu.yaml" "$TMP/dir/a.yaml"
cp "$SEED/nodepool.yaml" "$TMP/dir/sub/c.yaml"
cp "$SEED/nodepool.yaml" "$TMP/dir/.hidden.yaml"
echo 'not: [a manifest' >"$TMP/dir/notes.txt"
printf '{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "x"}}' \
	>"$TMP/dir/c.json"
if expect 0 "$BIN" validate -f "$TMP/dir"; then
	same "$TMP/out" 'DeviceClass: 1 valid
ResourceClaimTemplate: 1 valid
Pod: 1 valid
NodePool: 1 valid'
fi
# Errors of a directory's files come in name order, named by file.
printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: "Bad"}\n' >"$TMP/dir/0.yaml"
printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: "Worse"}\n' >"$TMP/dir/z.yaml"
if expect 1 "$BIN" validate -f "$TMP/dir/"; then
	head -1 "$TMP/err" | grep -q "^$TMP/dir/0.yaml: document 1 (Pod default/Bad): metadata.name" ||
		fail "directory: first file's error not first"
	tail -1 "$TMP/err" | grep -q "^$TMP/dir/z.yaml: document 1 (Pod default/Worse): " ||
		fail "directory: last file's error not last"
fi
for cmd in validate plan "allocate --node n"; do
	# shellcheck disable=SC2086
	expect 1 "$BIN" $cmd -f "$TMP/empty" &&
		grep -q "^$TMP/empty: no manifests (\*.yaml, \*.yml, \*.json) in the directory" "$TMP/err" ||
		fail "$cmd: empty directory not reported"
done
# QA-99: a FIFO among a directory's manifests is refused, not opened (it
# waited forever for a writer); a directory named like a manifest is
# skipped; a pipe given alone is read (-f <(...)).
mkdir -p "$TMP/fifodir/d.yaml"
cp "$SEED/nodepool.yaml" "$TMP/fifodir/a.yaml"
mkfifo "$TMP/fifodir/b.yaml"
E2E_TIMEOUT=10 expect 1 "$BIN" validate -f "$TMP/fifodir" &&
	same "$TMP/err" "$TMP/fifodir/b.yaml: not a regular file (a FIFO, socket or device in a directory is not read)"
E2E_TIMEOUT=10 expect 0 "$BIN" validate -f <(cat "$SEED/nodepool.yaml") &&
	same "$TMP/out" 'NodePool: 1 valid'
# QA-102: past the 10,000 messages kept, the rest are counted, not given up
# on (the count was 2 of 2,000, as if the list being full were a failure);
# one is "1 more error".
for i in $(seq 0 10099); do
	printf -- '---\napiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: X%d}\n' "$i"
done >"$TMP/many-bad.yaml"
expect 1 "$BIN" validate -f "$TMP/many-bad.yaml" &&
	[ "$(tail -1 "$TMP/err")" = "dratopo validate: 100 more errors not shown" ] ||
	fail "many errors: '$(tail -1 "$TMP/err")'"
expect 1 "$BIN" validate -f "$TMP/many-bad.yaml" -o json &&
	[ "$(jq '.errorCount' "$TMP/out")" = 10100 ] || fail "many errors: errorCount"
head -n 40004 "$TMP/many-bad.yaml" >"$TMP/one-over.yaml"     # 10,001 documents
expect 1 "$BIN" allocate -f "$TMP/one-over.yaml" --node n &&
	[ "$(tail -1 "$TMP/err")" = "dratopo allocate: 1 more error not shown" ] ||
	fail "one over: '$(tail -1 "$TMP/err")'"
# plan reads a directory the same way.
if expect 0 "$BIN" plan -o json -f "$TMP/dir/sub" -f "$TMP/dir/a.yaml"; then
	grep -q '"nodeClaims"' "$TMP/out" || fail "plan -f DIR"
fi
# Standard input.
if expect 0 "$BIN" validate -f - <"$SEED/large-gpu.yaml"; then
	same "$TMP/out" 'ResourceClaimTemplate: 1 valid
Pod: 1 valid'
fi

# Invalid input: exit 1, every error on its own line, FILE: document N (KIND NS/NAME): PATH: message.
bad="$FIX/e2e-bad.yaml"
if expect 1 "$BIN" validate -f "$bad"; then
	same "$TMP/err" "warning: $bad: document 3: skipping example.com/v1 Widget: not a kind dratopo reads
$bad: document 1 (ResourceClaimTemplate default/large-gpu): spec.spec.devices.requests[0].exactly.count: Invalid value: -1: must be greater than zero
$bad: document 2 (ResourceSlice node-1): spec: Required value: exactly one of \`nodeName\`, \`nodeSelector\`, \`allNodes\`, \`perDeviceNodeSelection\` is required
$bad: document 2 (ResourceSlice node-1): spec.devices[0].attributes[cudaComputeCapability].version: Invalid value: \"9.0\": must be a string compatible with semver.org spec 2.0.0"
	[ -s "$TMP/out" ] && fail "summary printed although invalid"
fi
# Errors of every file, in the order of the files; valid files do not hide them.
if expect 1 "$BIN" validate -f "$SEED/nodepool.yaml" "$bad" "$FIX/malformed/dupkey.yaml"; then
	[ "$(grep -v '^warning: ' "$TMP/err" | grep -c ': document ')" = 4 ] || fail "want 4 error lines"
	tail -1 "$TMP/err" | grep -q "^$FIX/malformed/dupkey.yaml: document 1: line 3, column 1: mapping key \"kind\" already defined at line 2\$" ||
		fail "duplicate key error missing or out of order"
fi
# A missing file is an input error, reported with its name.
if expect 1 "$BIN" validate -f "$TMP/none.yaml"; then
	grep -q "^$TMP/none.yaml: " "$TMP/err" || fail "missing file not named"
fi

# JSON report.
if expect 1 "$BIN" validate -o json -f "$bad"; then
	grep -q '"valid": false' "$TMP/out" || fail "json: valid"
	grep -q '"errorCount": 3' "$TMP/out" || fail "json: errorCount"
	grep -q '"ResourceSlice": 1' "$TMP/out" || fail "json: objects"
	grep -q 'must be greater than zero' "$TMP/out" || fail "json: errors"
	grep -q 'skipping example.com/v1 Widget' "$TMP/out" || fail "json: warnings"
fi
expect 0 "$BIN" validate -ojson -f "$SEED/nodepool.yaml" && grep -q '"valid": true' "$TMP/out" ||
	fail "-ojson"
if expect 0 "$BIN" validate -f "$SEED/nodepool.yaml" --output json; then
	grep -q '"valid": true' "$TMP/out" || fail "json: valid true"
	grep -q '"NodePool": 1' "$TMP/out" || fail "json: NodePool count"
fi

# CEL selectors are compiled, and their errors worded as the API server does.
cat >"$TMP/cel.yaml" <<'YAML'
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: broken}
spec:
  selectors:
  - cel: {expression: 'device.driver == "gpu.nvidia.com"'}
  - cel: {expression: 'device.driver =='}
YAML
if expect 1 "$BIN" validate -f "$TMP/cel.yaml"; then
	grep -q "^$TMP/cel.yaml: document 1 (DeviceClass broken): spec.selectors\[1\].cel.expression: Invalid value: \"device.driver ==\": compilation failed: ERROR: <input>:1:17: " "$TMP/err" ||
		fail "CEL compile error not reported as the API server does"
	grep -q 'selectors\[0\]' "$TMP/err" && fail "valid selector reported"
fi

# Unknown fields in the types read field by field: errors in the API
# server's words under kubectl's strict field validation (checked against
# kube-apiserver v1.37.2), on stderr and in "errors" in JSON.
cat >"$TMP/typo.yaml" <<'YAML'
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c, labels: {team: a}}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {deviceClassName: gpu.example.com, cout: 2}
---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  nodeSelector: {a: b}
  resourceClaims: [{name: gpu, resourceClaimName: c}]
  containers:
  - name: c
    image: busybox
    command: [sleep]
    resources: {claims: [{name: gpu, requst: gpu}]}
YAML
typo1="$TMP/typo.yaml: document 1 (ResourceClaim default/c): strict decoding error: unknown field \"spec.devices.requests[0].exactly.cout\""
typo2="$TMP/typo.yaml: document 2 (Pod default/p): strict decoding error: unknown field \"spec.containers[0].resources.claims[0].requst\""
if expect 1 "$BIN" validate -f "$TMP/typo.yaml"; then
	same "$TMP/err" "$typo1
$typo2"
fi
if expect 1 "$BIN" validate -o json -f "$TMP/typo.yaml"; then
	jqis '.errors[0]' "$(printf '%s' "$typo1" | jq -Rc .)" "json: the unknown field in errors"
	jqis '.valid' false "json: an unknown field makes it invalid"
fi
# The seed's manifests give no warnings (checked above); neither does a
# Pod's or EC2NodeClass's other fields.
expect 0 "$BIN" validate -f "$SEED/ec2nodeclass.yaml" && [ ! -s "$TMP/err" ] ||
	fail "EC2NodeClass fields warned about"

# resource.k8s.io/v1beta2 reads as v1; v1beta1 is converted (requests
# without `exactly`); other versions of DRA kinds are errors.
printf 'apiVersion: resource.k8s.io/v1beta2\nkind: ResourceClaim\nmetadata: {name: a, namespace: b}\nspec: {devices: {requests: [{name: g, exactly: {deviceClassName: c}}]}}\n' >"$TMP/b2.yaml"
if expect 0 "$BIN" validate -f - <"$TMP/b2.yaml"; then
	same "$TMP/out" 'ResourceClaim: 1 valid'
	[ -s "$TMP/err" ] && fail "v1beta2: unexpected stderr: $(head -2 "$TMP/err")"
fi
printf 'apiVersion: resource.k8s.io/v1beta1\nkind: ResourceClaim\nmetadata: {name: a}\nspec: {devices: {requests: [{name: g, deviceClassName: c, count: 0}]}}\n' >"$TMP/b1.yaml"
expect 0 "$BIN" validate -f "$TMP/b1.yaml" && same "$TMP/out" 'ResourceClaim: 1 valid'
sed -i 's/v1beta1/v1alpha3/' "$TMP/b1.yaml"
if expect 1 "$BIN" validate -f "$TMP/b1.yaml"; then
	grep -qxF "$TMP/b1.yaml: document 1: no matches for kind \"ResourceClaim\" in version \"resource.k8s.io/v1alpha3\" (ResourceClaim is served in resource.k8s.io/v1, v1beta2 and v1beta1)" "$TMP/err" ||
		fail "v1alpha3 not reported"
fi
# A file whose every document was skipped is not valid.
printf 'apiVersion: example.com/v1\nkind: Widget\n---\napiVersion: v1\nkind: Namespace\n' >"$TMP/skipped.yaml"
if expect 1 "$BIN" validate -f "$TMP/skipped.yaml"; then
	grep -q "^dratopo validate: no object to validate: all 2 documents were skipped" "$TMP/err" ||
		fail "all skipped: no message"
	[ -s "$TMP/out" ] && fail "all skipped: summary printed"
fi
expect 1 "$BIN" validate -o json -f "$TMP/skipped.yaml" && grep -q '"valid": false' "$TMP/out" ||
	fail "all skipped: json valid"

# NodeOverlay: the fixtures are valid; the CRD's rules with their messages.
if expect 0 "$BIN" validate -f "$ROOT/tests/fixtures/plan/overlay-h200.yaml" \
	"$ROOT/tests/fixtures/plan/overlay-g6-dearer.yaml"; then
	same "$TMP/out" 'NodePool: 1 valid
NodeOverlay: 2 valid'
fi
cat >"$TMP/overlay.yaml" <<'YAML'
apiVersion: karpenter.sh/v1alpha1
kind: NodeOverlay
metadata: {name: bad}
spec:
  weight: 0
  requirements:
  - {key: karpenter.sh/team, operator: In}
  price: "1.5"
  priceAdjustment: "10%"
  capacity: {cpu: "1"}
YAML
P="$TMP/overlay.yaml: document 1 (NodeOverlay bad): "
if expect 1 "$BIN" validate -f "$TMP/overlay.yaml"; then
	same "$TMP/err" "${P}spec.requirements[0].key: Invalid value: \"string\": label domain \"karpenter.sh\" is restricted
${P}spec.requirements: Invalid value: \"array\": requirements with operator 'In' must have a value defined
${P}spec.priceAdjustment: Invalid value: \"10%\": should match '^(([+-]{1}(\\d*\\.?\\d+))|(\\+{1}\\d*\\.?\\d+%)|(^(-\\d{1,2}(\\.\\d+)?%)\$)|(-100%))\$'
${P}spec.capacity: Invalid value: \"object\": invalid resource restricted
${P}spec.weight: Invalid value: 0: should be greater than or equal to 1
${P}spec: Invalid value: \"object\": cannot set both 'price' and 'priceAdjustment'"
fi
# plan refuses the same input.
expect 1 "$BIN" plan -f "$TMP/overlay.yaml" &&
	has "$TMP/err" "NodeOverlay bad\): spec: Invalid value" "plan validates overlays"

# Usage errors exit 2; --help exits 0.
expect 2 "$BIN" validate
expect 2 "$BIN" validate -f
expect 2 "$BIN" validate -o yaml -f "$bad"
expect 2 "$BIN" validate --frobnicate -f "$bad"
expect 2 "$BIN" validate "$bad"
if expect 0 "$BIN" validate --help; then
	grep -q '^usage: dratopo validate -f FILE' "$TMP/out" || fail "--help text"
fi

e2e_finish
