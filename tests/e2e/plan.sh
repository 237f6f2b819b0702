#!/bin/bash
# tests/e2e/plan.sh BUILD_DIR - `dratopo plan` end to end: the seed's three
# examples, the output formats, exit codes and usage errors.
set -u
BIN="$1/bin/dratopo"
SEED=examples/seed
FIX=tests/fixtures/plan
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail=0

check() {       # check NAME EXPECTED_RC ACTUAL_RC
	if [ "$2" != "$3" ]; then
		echo "FAIL $1: exit $3, want $2"
		sed 's/^/  | /' "$TMP/out" "$TMP/err" | head -20
		fail=1
	else
		echo "ok   $1"
	fi
}

has() {         # has NAME REGEX FILE
	if grep -Eq -- "$2" "$3"; then
		echo "ok   $1"
	else
		echo "FAIL $1: no /$2/ in $3"
		sed 's/^/  | /' "$3" | head -20
		fail=1
	fi
}

run() {         # run ARGS... -> $TMP/out, $TMP/err, $rc
	"$BIN" plan "$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
}

# The Hopper-or-newer 100Gi GPU goes to an H200 or Blackwell type.
run -f $SEED/nodepool.yaml -f $SEED/ec2nodeclass.yaml -f $SEED/large-gpu.yaml -o json
check "large-gpu exit" 0 $rc
has "large-gpu type" '"instanceType": "(p5e|p5en|p6-b200|p6-b300)\.' "$TMP/out"
has "large-gpu pod" '"default/inference"' "$TMP/out"

# GPU and EFA on one root: NodeClaim YAML asks for both drivers.
run -f $SEED/nodepool.yaml $SEED/ec2nodeclass.yaml $SEED/gpu-efa-aligned.yaml -o yaml
check "gpu-efa exit (-f a b c)" 0 $rc
has "gpu-efa NodeClaim" '^kind: NodeClaim' "$TMP/out"
has "gpu-efa drivers" 'karpenter.sh/requested-dra-drivers: dra.net,gpu.nvidia.com' "$TMP/out"
has "gpu-efa nodeClassRef" 'name: gpu-dra' "$TMP/out"
has "gpu-efa taint" 'key: nvidia.com/gpu' "$TMP/out"

# Eight replicas at four shares a GPU: all placed.
run -f $SEED/nodepool.yaml -f $SEED/timesliced.yaml -o json
check "timesliced exit" 0 $rc
[ "$(grep -cE '^ +"default/shared-inference-[a-z0-9]+-[a-z0-9]{5}",?$' "$TMP/out")" = 8 ]
check "timesliced eight pods" 0 $?
has "timesliced shares" '"shareID"' "$TMP/out"

# Table output, the default.
run -f $SEED/nodepool.yaml -f $SEED/ec2nodeclass.yaml -f $SEED/large-gpu.yaml
check "table exit" 0 $rc
has "table header" '^KIND +NAME +NODEPOOL +INSTANCE-TYPE' "$TMP/out"
has "table row" '^nodeclaim +gpu-dra-' "$TMP/out"

# Unschedulable pods: exit 3, one reason each, details in JSON.
run -f $SEED/nodepool.yaml -f $SEED/ec2nodeclass.yaml -f $FIX/unschedulable.yaml -o json
check "unschedulable exit" 3 $rc
has "unschedulable reason" '"pod": "default/too-many-gpus"' "$TMP/out"
has "unschedulable details" '"details"' "$TMP/out"
run -f $SEED/nodepool.yaml -f $SEED/ec2nodeclass.yaml -f $FIX/unschedulable.yaml
check "unschedulable table exit" 3 $rc
has "unschedulable row" '^unschedulable +default/no-toleration .*taint' "$TMP/out"

# JSON input, kind: List, a Job of parallelism 3 and completions 2: two pods.
run -f $FIX/list.json -o json
check "List exit" 0 $rc
[ "$(grep -cE '^ +"default/train-[a-z0-9]{5}",?$' "$TMP/out")" = 2 ]
check "Job pods" 0 $?

# --hwdb-extra: a cheaper type that satisfies the claim wins.
run --hwdb-extra $FIX/hwdb-extra.yaml -f $SEED/nodepool.yaml -f $SEED/ec2nodeclass.yaml \
	-f $SEED/large-gpu.yaml -o json
check "hwdb-extra exit" 0 $rc
has "hwdb-extra type" '"instanceType": "p5.2xlarge"' "$TMP/out"
printf 'instanceTypes:\n- name: broken\n' >"$TMP/extra.yaml"
run --hwdb-extra "$TMP/extra.yaml" -f $SEED/large-gpu.yaml
check "hwdb-extra invalid" 1 $rc
has "hwdb-extra message" 'extra.yaml' "$TMP/err"

# Usage and input errors.
run
check "no arguments" 2 $rc
run -f $SEED/large-gpu.yaml -o xml
check "bad output format" 2 $rc
run -f "$TMP/missing.yaml"
check "missing file" 1 $rc
run -f $SEED/large-gpu.yaml --coordinator 127.0.0.1:1 --insecure
check "coordinator away" 1 $rc
has "coordinator message" 'coordinator 127.0.0.1:1: UNAVAILABLE' "$TMP/err"
run -f $SEED/large-gpu.yaml --coordinator 127.0.0.1:1
check "coordinator without TLS options" 2 $rc
printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: "Bad_Name"\nspec:\n  containers: []\n' >"$TMP/bad.yaml"
run -f "$TMP/bad.yaml"
check "invalid manifest" 1 $rc
has "invalid manifest message" 'bad.yaml: document 1' "$TMP/err"
run --help
check "help" 0 $rc

exit $fail
