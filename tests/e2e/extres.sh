#!/bin/bash
# tests/e2e/extres.sh BUILD_DIR - extended resources backed by DRA, end to
# end: pods asking for a DeviceClass's extendedResourceName (or its
# implicit deviceclass.resource.kubernetes.io/<class> name) plan exactly as
# the same pods written with ResourceClaims; nvidia.com/gpu with no such
# class stays a device-plugin pod; bad extendedResourceNames are refused.
NAME=extres; . "$(dirname "$0")/lib.sh"
FIX="$ROOT/tests/fixtures/plan"

expect 0 "$BIN" plan -f "$FIX/extres.yaml" -o json && cp "$TMP/out" "$TMP/ext.json"
expect 0 "$BIN" plan -f "$FIX/extres-claims.yaml" -o json && cp "$TMP/out" "$TMP/claims.json"
for q in '[.nodeClaims[].instanceType] | sort' '.totalPricePerHour' \
	 '[.nodeClaims[].pods | length] | sort' '[.nodeClaims[].claims[].results | length] | sort'; do
	a=$(jq -c "$q" "$TMP/ext.json") b=$(jq -c "$q" "$TMP/claims.json")
	[ "$a" = "$b" ] || fail "extended resources vs claims: $q: $a, want $b"
done
cp "$TMP/ext.json" "$TMP/out"
jqis '[.nodeClaims[].claims[].claim | select(test("^default/implicit-extended-resources-[a-z0-9]{5}$"))] | length' \
	'1' "the implicit name's claim"
jqis '[.nodeClaims[].claims[] | select(.claim | startswith("default/sidecar-")) | .results[].request] | sort' \
	'["container-0-request-0","container-1-request-0","container-1-request-0"]' \
	"one request per container"
jqis '.unschedulable | length' '0' "all placed"

# nvidia.com/gpu without a class naming it: not a DRA pod, as before
cat >"$TMP/plugin.yaml" <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: plugin}
spec:
  containers:
  - name: m
    image: busybox
    resources:
      limits: {nvidia.com/gpu: "1"}
YAML
expect 3 "$BIN" plan -f "$TMP/plugin.yaml" -o json &&
	has "$TMP/out" 'requests the extended resource nvidia.com/gpu \(not a DRA pod\)' "device plugin pod"
# ... and beside ResourceClaims the pod is a DRA pod: the plugin resource is
# named as the problem, the pod not called "not a DRA pod" (issue 20)
cat >"$TMP/both.yaml" <<'YAML'
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu}
spec:
  spec:
    devices:
      requests:
      - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}
---
apiVersion: v1
kind: Pod
metadata: {name: both}
spec:
  resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
  containers:
  - name: m
    image: busybox
    resources:
      claims: [{name: gpu}]
      limits: {nvidia.com/gpu: "1"}
YAML
expect 3 "$BIN" plan -f "$TMP/both.yaml" -o json &&
	has "$TMP/out" 'requests the extended resource nvidia.com/gpu besides its ResourceClaims: dratopo plans DRA ResourceClaims, not device-plugin resources' "claims and a plugin resource" &&
	! grep -q 'not a DRA pod' "$TMP/out" || fail "claims and a plugin resource: called not a DRA pod"
# ... and with a class that names it, a DRA pod on the cheapest GPU
cat >"$TMP/class.yaml" <<'YAML'
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.nvidia.com}
spec:
  selectors:
  - cel: {expression: 'device.driver == "gpu.nvidia.com" && device.attributes["gpu.nvidia.com"].type == "gpu"'}
  extendedResourceName: nvidia.com/gpu
YAML
expect 0 "$BIN" plan -f "$TMP/plugin.yaml" "$TMP/class.yaml" -o json &&
	jqis '.nodeClaims[0].claims[0].claim | startswith("default/plugin-extended-resources-")' 'true' \
		"nvidia.com/gpu through the class"
# fractional counts: the API server refuses them before anything is planned
sed 's/"1"}/"500m"}/' "$TMP/plugin.yaml" >"$TMP/frac.yaml"
expect 1 "$BIN" plan -f "$TMP/frac.yaml" "$TMP/class.yaml" -o json &&
	has "$TMP/err" "must be an integer" "fractional count"

# the API server's rules for extendedResourceName
for bad in gpu kubernetes.io/gpu requests.example.com/gpu 'example.com/bad name'; do
	sed "s|extendedResourceName: nvidia.com/gpu|extendedResourceName: \"$bad\"|" \
		"$TMP/class.yaml" >"$TMP/bad.yaml"
	expect 1 "$BIN" validate -f "$TMP/bad.yaml" &&
		has "$TMP/err" "extendedResourceName.*valid extended resource name" "refuse $bad"
done
expect 0 "$BIN" validate -f "$TMP/class.yaml"

# QA-97: two classes with one extendedResourceName: the one created later
# backs it (and of two created at once, the name that sorts first), not
# the first in the input
cat >"$TMP/two.yaml" <<'YAML'
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: a-l4, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  extendedResourceName: example.com/gpu
  selectors:
  - cel: {expression: 'device.driver == "gpu.nvidia.com" && device.attributes["gpu.nvidia.com"].productName.contains("L4")'}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: b-h100, creationTimestamp: "2026-02-01T00:00:00+05:00"}
spec:
  extendedResourceName: example.com/gpu
  selectors:
  - cel: {expression: 'device.driver == "gpu.nvidia.com" && device.attributes["gpu.nvidia.com"].productName.contains("H100")'}
---
apiVersion: v1
kind: Pod
metadata: {name: x}
spec:
  containers:
  - {name: m, image: x, resources: {limits: {example.com/gpu: "1"}}}
YAML
expect 0 "$BIN" plan -f "$TMP/two.yaml" -o json &&
	jqis '.nodeClaims[0].instanceType | startswith("p5")' 'true' "the later class (H100)"
sed 's/2026-02-01T00:00:00+05:00/2026-01-01T05:00:00+05:00/' "$TMP/two.yaml" >"$TMP/tie.yaml"
expect 0 "$BIN" plan -f "$TMP/tie.yaml" -o json &&
	jqis '.nodeClaims[0].instanceType | test("^(g6|g6f|gr6)\\.")' 'true' "a tie: the name first (L4)"

e2e_finish
