#!/bin/bash
# tests/e2e/plan.sh BUILD_DIR - `dratopo plan` end to end: the seed's three
# examples, the output formats, exit codes and usage errors.
NAME=plan.sh
. "$(dirname "$0")/lib.sh"
SEED="$ROOT/examples/seed"
FIX="$ROOT/tests/fixtures/plan"

# The Hopper-or-newer 100Gi GPU goes to an H200 or Blackwell type.
if expect 0 "$BIN" plan -f "$SEED/nodepool.yaml" -f "$SEED/ec2nodeclass.yaml" \
	-f "$SEED/large-gpu.yaml" -o json; then
	has "$TMP/out" '"instanceType": "(p5e|p5en|p6-b200|p6-b300)\.' "large-gpu type"
	has "$TMP/out" '"default/inference"' "large-gpu pod"
fi

# GPU and EFA on one root (-f a b c): NodeClaim YAML asks for both drivers.
if expect 0 "$BIN" plan -f "$SEED/nodepool.yaml" "$SEED/ec2nodeclass.yaml" \
	"$SEED/gpu-efa-aligned.yaml" -o yaml; then
	has "$TMP/out" '^kind: NodeClaim' "gpu-efa NodeClaim"
	has "$TMP/out" 'karpenter.sh/requested-dra-drivers: dra.net,gpu.nvidia.com' "gpu-efa drivers"
	has "$TMP/out" 'name: gpu-dra' "gpu-efa nodeClassRef"
	has "$TMP/out" 'key: nvidia.com/gpu' "gpu-efa taint"
fi

# Eight replicas at four shares a GPU: all placed.
if expect 0 "$BIN" plan -f "$SEED/nodepool.yaml" -f "$SEED/timesliced.yaml" -o json; then
	[ "$(grep -cE '^ +"default/shared-inference-[a-z0-9]+-[a-z0-9]{5}",?$' "$TMP/out")" = 8 ] ||
		fail "timesliced: want eight pods"
	has "$TMP/out" '"shareID"' "timesliced shares"
fi

# Table output, the default.
if expect 0 "$BIN" plan -f "$SEED/nodepool.yaml" -f "$SEED/ec2nodeclass.yaml" \
	-f "$SEED/large-gpu.yaml"; then
	has "$TMP/out" '^KIND +NAME +NODEPOOL +INSTANCE-TYPE' "table header"
	has "$TMP/out" '^nodeclaim +gpu-dra-' "table row"
fi

# Unschedulable pods: exit 3, one reason each, details in JSON.
if expect 3 "$BIN" plan -f "$SEED/nodepool.yaml" -f "$SEED/ec2nodeclass.yaml" \
	-f "$FIX/unschedulable.yaml" -o json; then
	has "$TMP/out" '"pod": "default/too-many-gpus"' "unschedulable reason"
	has "$TMP/out" '"details"' "unschedulable details"
fi
if expect 3 "$BIN" plan -f "$SEED/nodepool.yaml" -f "$SEED/ec2nodeclass.yaml" \
	-f "$FIX/unschedulable.yaml"; then
	has "$TMP/out" '^unschedulable +default/no-toleration .*taint' "unschedulable row"
fi

# JSON input, kind: List, a Job of parallelism 3 and completions 2: two pods.
if expect 0 "$BIN" plan -f "$FIX/list.json" -o json; then
	[ "$(grep -cE '^ +"default/train-[a-z0-9]{5}",?$' "$TMP/out")" = 2 ] ||
		fail "List: want the Job's two pods"
fi

# --hwdb-extra: a cheaper type that satisfies the claim wins.
if expect 0 "$BIN" plan --hwdb-extra "$FIX/hwdb-extra.yaml" -f "$SEED/nodepool.yaml" \
	-f "$SEED/ec2nodeclass.yaml" -f "$SEED/large-gpu.yaml" -o json; then
	has "$TMP/out" '"instanceType": "p5.2xlarge"' "hwdb-extra type"
fi
printf 'instanceTypes:\n- name: broken\n' >"$TMP/extra.yaml"
expect 1 "$BIN" plan --hwdb-extra "$TMP/extra.yaml" -f "$SEED/large-gpu.yaml" &&
	has "$TMP/err" 'extra.yaml' "hwdb-extra message"

# Usage and input errors.
expect 2 "$BIN" plan
expect 2 "$BIN" plan -f "$SEED/large-gpu.yaml" -o xml
expect 1 "$BIN" plan -f "$TMP/missing.yaml"
expect 1 "$BIN" plan -f "$SEED/large-gpu.yaml" --coordinator 127.0.0.1:1 --insecure &&
	has "$TMP/err" 'coordinator 127.0.0.1:1: UNAVAILABLE' "coordinator message"
expect 2 "$BIN" plan -f "$SEED/large-gpu.yaml" --coordinator 127.0.0.1:1
printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: "Bad_Name"\nspec:\n  containers: []\n' >"$TMP/bad.yaml"
expect 1 "$BIN" plan -f "$TMP/bad.yaml" &&
	has "$TMP/err" 'bad.yaml: document 1' "invalid manifest message"
expect 0 "$BIN" plan --help

e2e_finish
