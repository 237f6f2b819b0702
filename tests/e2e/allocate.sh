#!/bin/bash
# tests/e2e/allocate.sh BUILD_DIR - `dratopo allocate` end to end: the
# JSON and YAML outputs, claims in use, constraints across requests, CEL
# selectors, shared devices, exit 3 with its reason, fatal errors (exit 1)
# and usage errors (exit 2), as design.md specifies. Needs jq.
NAME=allocate.sh
. "$(dirname "$0")/lib.sh"
FIX="$ROOT/tests/fixtures/alloc"

command -v jq >/dev/null || { echo "allocate.sh: jq is needed" >&2; exit 1; }

# Two claims of one pod, gpu-0 in use: the pair needs two GPUs and the NIC
# on one NUMA node (only NUMA 1 has two free), the big one >= 40Gi.
if expect 0 "$BIN" allocate -f "$FIX/node-gpus.yaml" "$FIX/claims-in-use.yaml" \
	"$FIX/claim-pair.yaml" --node node-1; then
	jqis '[.claims[].name]' '["ml/pair","ml/big"]'
	jqis '[.claims[0].allocation.devices.results[] | .request + "=" + .device]' \
		'["gpus=gpu-2","gpus=gpu-3","nic=nic-0"]'
	jqis '.claims[1].allocation.devices.results[0].device' '"gpu-1"'
	jqis '.claims[0].allocation.devices.results[2].driver' '"nic.example.com"'
	jqis '.claims[0].allocation.devices.results[0].pool' '"node-1"'
	jqis '.claims[0].allocation.nodeSelector.nodeSelectorTerms[0].matchFields[0]' \
		'{"key":"metadata.name","operator":"In","values":["node-1"]}'
fi

# The same with -f repeated, and YAML: the claims with status.allocation.
if expect 0 "$BIN" allocate -f "$FIX/node-gpus.yaml" -f "$FIX/claims-in-use.yaml" \
	-f "$FIX/claim-pair.yaml" --node=node-1 -o yaml; then
	grep -q '^kind: ResourceClaim$' "$TMP/out" || fail "yaml: no ResourceClaim"
	[ "$(grep -c '^---$' "$TMP/out")" = 1 ] || fail "yaml: want two documents"
	grep -q '^  allocation:$' "$TMP/out" || fail "yaml: no status.allocation"
	grep -q 'device: gpu-3' "$TMP/out" || fail "yaml: gpu-3 missing"
fi

# Without the claim in use, the pair takes NUMA 0.
if expect 0 "$BIN" allocate -f "$FIX/node-gpus.yaml" "$FIX/claim-pair.yaml" --node node-1; then
	jqis '[.claims[0].allocation.devices.results[] | .device]' '["gpu-2","gpu-3","nic-0"]'
	jqis '.claims[1].allocation.devices.results[0].device' '"gpu-0"'
fi

# Another node: nothing there, exit 3 with the reason on stdout.
if expect 3 "$BIN" allocate -f "$FIX/node-gpus.yaml" "$FIX/claim-pair.yaml" --node node-2; then
	jqis '.claims' '[]'
	jqis '.unallocatable' '"claim ml/pair, request gpus: node node-2 has no devices: no ResourceSlice of the input is for it (by nodeName, nodeSelector, allNodes or per-device node selection)"'
fi
# QA-92: the same with firstAvailable ending in an All subrequest (which
# wants at least one device): still "no devices", not "no combination".
cat >"$TMP/fa-all.yaml" <<'YAML'
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: fa, namespace: ml}
spec:
  devices:
    requests:
    - name: gpus
      firstAvailable:
      - {name: eight, deviceClassName: gpu.example.com, count: 8}
      - {name: every, deviceClassName: gpu.example.com, allocationMode: All}
YAML
if expect 3 "$BIN" allocate -f "$FIX/node-gpus.yaml" "$TMP/fa-all.yaml" --node node-2; then
	jqis '.unallocatable | test("request gpus/eight: node node-2 has no devices")' 'true'
fi
if expect 3 "$BIN" allocate -f "$FIX/node-gpus.yaml" "$FIX/claim-too-many.yaml" --node node-1; then
	jqis '.unallocatable | test("request gpus: 5 devices .* 4 of the node.s 5 devices match")' 'true'
fi

# Node labels decide which nodeSelector slices a node sees; the result
# carries the slice's selector.
if expect 0 "$BIN" allocate -f "$FIX/zone-slice.yaml" --node node-7; then
	jqis '.claims[0].allocation.devices.results[0].device' '"vol-0"'
	jqis '.claims[0].allocation.nodeSelector.nodeSelectorTerms[0].matchExpressions[0]' \
		'{"key":"zone","operator":"In","values":["a"]}'
fi
expect 3 "$BIN" allocate -f "$FIX/zone-slice.yaml" --node node-8

# Shared GPU: 5Gi rounds up to 8Gi, the default share takes 4Gi.
if expect 0 "$BIN" allocate -f "$FIX/shared-gpu.yaml" --node node-1; then
	jqis '[.claims[].allocation.devices.results[0].consumedCapacity.memory]' '["8Gi","4Gi"]'
	jqis '[.claims[].allocation.devices.results[0].shareID | test("^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")]' '[true,true]'
	jqis '.claims[0].allocation.devices.results[0].shareID != .claims[1].allocation.devices.results[0].shareID' 'true'
fi

# A running claim holding the shared GPU without a shareID holds it whole:
# neither claim gets it. The same claim with a shareID is one share of it.
if expect 3 "$BIN" allocate -f "$FIX/shared-gpu.yaml" "$FIX/shared-gpu-held.yaml" --node node-1; then
	jqis '.claims' '[]'
	grep -q 'request gpu: .*1 of the node.s 1 devices match the selectors, 0 of those are available: 1 in use' \
		"$TMP/err" || fail "held shared GPU: reason: $(cat "$TMP/err")"
fi
sed 's/^        device: gpu-0$/        device: gpu-0\n        shareID: 11111111-1111-4111-8111-111111111111\n        consumedCapacity: {memory: 4Gi}/' \
	"$FIX/shared-gpu-held.yaml" >"$TMP/shared-held.yaml"
if expect 0 "$BIN" allocate -f "$FIX/shared-gpu.yaml" "$TMP/shared-held.yaml" --node node-1; then
	jqis '[.claims[].allocation.devices.results[0].consumedCapacity.memory]' '["8Gi","4Gi"]'
fi

# List-type attributes: matchAttribute and distinctAttribute as sets. The
# GPU on pci0000:10 and the NIC whose roots include it; two NICs whose roots
# are disjoint do not exist (both reach pci0000:20).
if expect 0 "$BIN" allocate -f "$FIX/list-attrs.yaml" "$FIX/claim-gpu-nic-root.yaml" --node node-1; then
	jqis '[.claims[0].allocation.devices.results[] | .request + "=" + .device]' '["gpu=gpu-0","nic=nic-1"]'
fi
if expect 3 "$BIN" allocate -f "$FIX/list-attrs.yaml" "$FIX/claim-distinct-nics.yaml" --node node-1; then
	grep -q 'claim default/two-nics: no combination .*(distinctAttribute dra.example.com/pcieRoot)' \
		"$TMP/err" || fail "distinct NICs: reason: $(cat "$TMP/err")"
fi
sed 's/pci0000:20, pci0000:30/pci0000:30/' "$FIX/list-attrs.yaml" >"$TMP/list-disjoint.yaml"
if expect 0 "$BIN" allocate -f "$TMP/list-disjoint.yaml" "$FIX/claim-distinct-nics.yaml" --node node-1; then
	jqis '[.claims[0].allocation.devices.results[] | .device]' '["nic-0","nic-1"]'
fi
if expect 0 "$BIN" allocate -o yaml -f "$FIX/list-attrs.yaml" "$FIX/claim-gpu-nic-root.yaml" --node node-1; then
	grep -q 'device: nic-1' "$TMP/out" || fail "list attributes: -o yaml"
fi

# hwdb's slices of a p5.48xlarge (one GPU per PCIe root, driverVersion
# node-uniform): two GPUs and an EFA on one root do not exist, one GPU does;
# the driverVersion constraint holds among the GPUs of the node.
if "$BIN" hwdb show p5.48xlarge -o yaml >"$TMP/p5.yaml" 2>/dev/null; then
	if expect 3 "$BIN" allocate -f "$TMP/p5.yaml" "$FIX/claim-gpu-efa-root.yaml" \
		--node p5.48xlarge; then
		jqis '.unallocatable | test("matchAttribute resource.kubernetes.io/pcieRoot")' 'true'
	fi
	sed 's/count: 2/count: 1/' "$FIX/claim-gpu-efa-root.yaml" >"$TMP/one.yaml"
	if expect 0 "$BIN" allocate -f "$TMP/p5.yaml" "$TMP/one.yaml" --node p5.48xlarge; then
		jqis '[.claims[0].allocation.devices.results[] | .device]' '["gpu-0","efa-0"]'
	fi
	sed '/- matchAttribute: resource.kubernetes.io.pcieRoot/d' \
		"$FIX/claim-gpu-efa-root.yaml" >"$TMP/two.yaml"
	if expect 0 "$BIN" allocate -f "$TMP/p5.yaml" "$TMP/two.yaml" --node p5.48xlarge; then
		jqis '[.claims[0].allocation.devices.results[] | .device]' \
			'["gpu-0","gpu-1","efa-0"]'
	fi
	# A typo is fatal, with the scheduler's hint; driverVersion is "no match".
	if expect 1 "$BIN" allocate -f "$TMP/p5.yaml" "$FIX/claim-uniform-typo.yaml" \
		--node p5.48xlarge; then
		grep -q "CEL runtime error: no such key: productNmae (consider using CEL optional chaining" \
			"$TMP/err" || fail "uniform typo: $(cat "$TMP/err")"
	fi
	sed 's/productNmae == "H100"/driverVersion.isGreaterThan(semver("1.0.0"))/' \
		"$FIX/claim-uniform-typo.yaml" >"$TMP/uniform.yaml"
	expect 3 "$BIN" allocate -f "$TMP/p5.yaml" "$TMP/uniform.yaml" --node p5.48xlarge
else
	echo "allocate.sh: hwdb not in this build, skipping the p5.48xlarge cases" >&2
fi

# The reason names why matching devices are not available: the taint.
if expect 3 "$BIN" allocate -f "$FIX/tainted-gpu.yaml" --node node-1; then
	jqis '.unallocatable | endswith(": 1 with the taint example.com/broken=ecc:NoSchedule not tolerated")' 'true'
fi

# A DeviceTaintRule taints the device it selects as a slice taint would;
# None and rules selecting other pools change nothing; the reason names it.
if expect 3 "$BIN" allocate -f "$FIX/taint-rule.yaml" --node node-1; then
	jqis '.unallocatable | endswith(": 1 with the taint example.com/broken=ecc:NoSchedule (DeviceTaintRule node-1-gpu-1-broken) not tolerated")' 'true'
fi

# Fatal errors: unknown class, CEL runtime error.
if expect 1 "$BIN" allocate -f "$FIX/node-gpus.yaml" "$FIX/claim-unknown-class.yaml" --node node-1; then
	grep -q "claim default/lost, request gpu: could not retrieve device class tpu.example.com" \
		"$TMP/err" || fail "unknown class: $(cat "$TMP/err")"
fi
if expect 1 "$BIN" allocate -f "$FIX/node-gpus.yaml" "$FIX/claim-cel-error.yaml" --node node-1; then
	grep -q "claim default/typo, request gpu: selector #0 on device gpu.example.com/node-1/gpu-0: CEL runtime error" \
		"$TMP/err" || fail "CEL error: $(cat "$TMP/err")"
fi
# Invalid input is reported the way `dratopo validate` does.
printf 'apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: bad}\nspec:\n  devices:\n    requests:\n    - name: BAD\n      exactly: {deviceClassName: gpu.example.com}\n' >"$TMP/bad.yaml"
if expect 1 "$BIN" allocate -f "$TMP/bad.yaml" --node node-1; then
	grep -q "bad.yaml: document 1 (ResourceClaim default/bad): spec.devices.requests\[0\].name" \
		"$TMP/err" || fail "invalid input: $(cat "$TMP/err")"
fi

# Usage errors and help.
expect 2 "$BIN" allocate -f "$FIX/node-gpus.yaml"
expect 2 "$BIN" allocate --node node-1
expect 2 "$BIN" allocate -f "$FIX/node-gpus.yaml" --node node-1 -o table
expect 2 "$BIN" allocate -f "$FIX/node-gpus.yaml" --node node-1 --bogus
if expect 0 "$BIN" allocate --help; then
	grep -q "^usage: dratopo allocate -f FILE... --node NODE" "$TMP/out" || fail "help text"
fi

e2e_finish
