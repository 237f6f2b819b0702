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

# NodeOverlays. spec.price makes p5e.48xlarge (no hwdb price) the H200 to
# launch, at the overlay's price, which the output names.
if expect 0 "$BIN" plan -f "$FIX/overlay-h200.yaml" "$SEED/ec2nodeclass.yaml" \
	"$SEED/large-gpu.yaml" -o json; then
	jqis '[.nodeClaims[] | [.instanceType, .pricePerHour, .priceOverlay]]' \
		'[["p5e.48xlarge",40,"p5e-reserved"]]' "overlay price"
	jqis '.totalPricePerHour' '40' "overlay total"
fi
if expect 0 "$BIN" plan -f "$FIX/overlay-h200.yaml" "$SEED/ec2nodeclass.yaml" \
	"$SEED/large-gpu.yaml" -o yaml; then
	has "$TMP/out" '^# price: 40\.0000 per hour, from NodeOverlay p5e-reserved$' "overlay yaml"
fi
# A second overlay of the same weight that prices p5e too conflicts: Karpenter
# ignores it (the one later in the alphabet decides), and plan warns; at a
# higher weight it decides instead.
cheaper() {
	cat "$FIX/overlay-h200.yaml"
	printf -- '---\napiVersion: karpenter.sh/v1alpha1\nkind: NodeOverlay\n'
	printf 'metadata: {name: a-cheaper}\nspec:\n  weight: %s\n' "$1"
	printf '  requirements: [{key: karpenter.k8s.aws/instance-family, operator: In, values: [p5e]}]\n'
	printf '  price: "30"\n'
}
cheaper 10 >"$TMP/conflict.yaml"
if expect 0 "$BIN" plan -f "$TMP/conflict.yaml" "$SEED/ec2nodeclass.yaml" \
	"$SEED/large-gpu.yaml" -o json; then
	jqis '[.nodeClaims[] | [.pricePerHour, .priceOverlay]]' '[[40,"p5e-reserved"]]' \
		"conflicting overlay ignored"
	has "$TMP/err" '^warning: NodeOverlay a-cheaper: conflicts with NodeOverlay p5e-reserved \(both of weight 10 set the price of p5e\.48xlarge in NodePool h200\)' \
		"conflict warning"
fi
cheaper 20 >"$TMP/conflict.yaml"
if expect 0 "$BIN" plan -f "$TMP/conflict.yaml" "$SEED/ec2nodeclass.yaml" \
	"$SEED/large-gpu.yaml" -o json; then
	jqis '[.nodeClaims[] | [.pricePerHour, .priceOverlay]]' '[[30,"a-cheaper"]]' \
		"higher weight decides"
	grep -q 'conflicts' "$TMP/err" && fail "no conflict at another weight"
fi
# Without the overlay the pool's H200 is p5en.48xlarge, p5e has no offering.
sed '/^---$/,$d' "$FIX/overlay-h200.yaml" >"$TMP/h200-pool.yaml"
if expect 0 "$BIN" plan -f "$TMP/h200-pool.yaml" "$SEED/ec2nodeclass.yaml" \
	"$SEED/large-gpu.yaml" -o json; then
	jqis '[.nodeClaims[].instanceType]' '["p5en.48xlarge"]' "no overlay: p5en"
	jqis '[.nodeClaims[].priceOverlay]' '[null]' "no overlay: hwdb price"
fi
# An adjustment needs a price to adjust: the pod's details say so.
cat >"$TMP/adjust.yaml" <<'YAML'
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: h200}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: gpu-dra}
      requirements:
      - {key: node.kubernetes.io/instance-type, operator: In, values: [p5e.48xlarge]}
---
apiVersion: karpenter.sh/v1alpha1
kind: NodeOverlay
metadata: {name: h200-discount}
spec:
  requirements: []
  priceAdjustment: "-20%"
YAML
if expect 3 "$BIN" plan -f "$TMP/adjust.yaml" "$SEED/large-gpu.yaml" -o json; then
	jqis '[.unschedulable[0].details[] | select(.instanceType == "p5e.48xlarge") | .reason]' \
		'["no on-demand offering: NodeOverlay h200-discount adjusts the price (-20%) but there is none to adjust; spec.price would set one"]' \
		"adjustment without a price"
fi
# +150% on g6 makes the two L4 pods go to another L4 type.
if expect 0 "$BIN" plan -f "$FIX/two-small.yaml" "$FIX/overlay-g6-dearer.yaml" -o json; then
	jqis '[.nodeClaims[].instanceType]' '["gr6.4xlarge","gr6.4xlarge"]' "dearer g6"
fi
if expect 0 "$BIN" plan -f "$FIX/two-small.yaml" -o json; then
	jqis '[.nodeClaims[].instanceType]' '["g6.xlarge","g6.xlarge"]' "g6 at hwdb price"
fi
# Overlay capacity: one example.com/fuse per g6.2xlarge, one per pod.
if expect 0 "$BIN" plan -f "$FIX/overlay-fuse.yaml" -o json; then
	jqis '[.nodeClaims[] | select(any(.pods[]; startswith("default/fuse-user-"))) | .instanceType]' \
		'["g6.2xlarge","g6.2xlarge"]' "fuse nodes"
fi
if expect 0 "$BIN" plan -f "$FIX/overlay-fuse.yaml" -o yaml; then
	has "$TMP/out" '^      example.com/fuse: "1"$' "fuse request in the NodeClaim"
fi
# Without the overlay nothing gives nodes example.com/fuse.
sed '1,/^---$/d' "$FIX/overlay-fuse.yaml" >"$TMP/fuse-pods.yaml"
if expect 3 "$BIN" plan -f "$TMP/fuse-pods.yaml" -o json; then
	jqis '[.unschedulable[].reason] | unique' \
		'["requests the extended resource example.com/fuse: dratopo plans DRA ResourceClaims, not device-plugin resources (no DeviceClass has extendedResourceName example.com/fuse, and no NodeOverlay gives nodes capacity of it)"]' \
		"fuse without overlay"
fi

# EFA only (32 vCPUs, 64Gi, one EFA): a type without GPUs, cheaper than every GPU type
# with an EFA that holds the pod (issue 24).
if expect 0 "$BIN" plan -f "$FIX/efa-only.yaml" -o json; then
	type=$(sed -n 's/^ *"instanceType": "\(.*\)",$/\1/p' "$TMP/out")
	price=$(sed -n 's/^ *"pricePerHour": \(.*\),$/\1/p' "$TMP/out")
	has "$TMP/out" '"region": "us-east-1"' "efa-only region"
	"$BIN" hwdb list --gpu --efa >"$TMP/gpus" || fail "hwdb list --gpu --efa"
	"$BIN" hwdb show "$type" -o json | grep -q '"gpus": \[\]' || fail "efa-only: $type has GPUs"
	# every GPU type that holds 32 vCPUs and 64Gi costs more
	awk -v p="$price" 'NR > 1 && $3 + 0 >= 36 && $4 + 0 >= 72 && $NF != "-" && $NF + 0 <= p {
		print; bad = 1 } END { exit bad }' "$TMP/gpus" ||
		fail "efa-only: $type at $price is not cheaper than every GPU type that fits"
fi

# A NodePool pinned to eu-west-1 is priced there; --region must agree with it.
if expect 0 "$BIN" plan -f "$FIX/efa-only.yaml" "$FIX/eu-west-1-pool.yaml" -o json; then
	has "$TMP/out" '"region": "eu-west-1"' "eu-west-1 pool region"
	type=$(sed -n 's/^ *"instanceType": "\(.*\)",$/\1/p' "$TMP/out")
	price=$(sed -n 's/^ *"pricePerHour": \(.*\),$/\1/p' "$TMP/out")
	"$BIN" hwdb list --region eu-west-1 --family "${type%%.*}" >"$TMP/eu" || fail "hwdb list eu"
	grep -q "^$type .* $(printf '%.4f' "$price")\$" "$TMP/eu" ||
		fail "eu-west-1: $type at $price is not hwdb's eu-west-1 price"
fi
expect 0 "$BIN" plan -f "$FIX/efa-only.yaml" "$FIX/eu-west-1-pool.yaml" &&
	has "$TMP/out" '^total [0-9.]+ per hour in eu-west-1, 1 node claim' "table names the region"
expect 3 "$BIN" plan -f "$FIX/efa-only.yaml" "$FIX/eu-west-1-pool.yaml" --region us-east-1 &&
	has "$TMP/out" 'requires topology.kubernetes.io/region eu-west-1, and the cluster runs in us-east-1' \
		"pool outside --region"
expect 0 "$BIN" plan -f "$FIX/efa-only.yaml" --region ap-south-1 -o json &&
	has "$TMP/out" '"region": "ap-south-1"' "--region prices there"
expect 2 "$BIN" plan -f "$FIX/efa-only.yaml" --region mars-north-1 &&
	has "$TMP/err" "no prices for 'mars-north-1'; it has: us-east-1, " "bad --region"

# Workload-level claims (issue 20): a PodGroup's pods share the group's
# claim made from the template, so the plan allocates it once and puts the
# pods together; the same template without a group gives each pod its own.
if expect 0 "$BIN" plan -f "$FIX/podgroup-shared-claim.yaml" -o json; then
	jqis '[.nodeClaims[] | select(.pods[0] | startswith("ml/trainers-")) | .pods | length]' '[2]' \
		"group: both pods on one node"
	jqis '[.nodeClaims[] | select(.pods[0] | startswith("ml/trainers-")) | .claims[].claim]' \
		'["ml/trainers-gpu-tzrkr"]' "group: one claim, named for the PodGroup"
	jqis '[.nodeClaims[] | select(.pods[0] | startswith("ml/solo-")) | .claims | length]' '[1,1]' \
		"no group: a claim per pod"
	jqis '.totalPricePerHour' '0.606' "one GPU for the group, one per solo pod"
fi
sed 's/podGroupName: trainers/podGroupName: absent/' "$FIX/podgroup-shared-claim.yaml" >"$TMP/nogroup.yaml"
expect 3 "$BIN" plan -f "$TMP/nogroup.yaml" -o json &&
	jqis '[.unschedulable[].reason] | unique' \
		'["podGroup ml/absent not found (the scheduler keeps the pod pending until it exists)"]' \
		"a missing PodGroup"
# generateName pods (scheduler_perf's): named as the API server names them,
# planned, not a crash (issue 20).
if expect 0 "$BIN" plan -f "$ROOT/tests/fixtures/corpus/scheduler-perf/pod-with-claim-template.yaml" \
	"$ROOT/tests/fixtures/corpus/scheduler-perf/deviceclass.yaml" "$FIX/sched-template.yaml" -o json; then
	jqis '.existingNodes[0].pods | map(test("^default/test-dra[bcdfghjklmnpqrstvwxz2456789]{5}$"))' '[true]' \
		"a generated pod name"
fi

# Usage and input errors.
expect 2 "$BIN" plan
expect 2 "$BIN" plan -f "$SEED/large-gpu.yaml" -o xml
expect 1 "$BIN" plan -f "$TMP/missing.yaml"
expect 1 "$BIN" plan -f "$SEED/large-gpu.yaml" --coordinator 127.0.0.1:1 --insecure &&
	has "$TMP/err" 'coordinator 127.0.0.1:1: connection refused' "coordinator message"
expect 2 "$BIN" plan -f "$SEED/large-gpu.yaml" --coordinator 127.0.0.1:1
printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: "Bad_Name"\nspec:\n  containers: []\n' >"$TMP/bad.yaml"
expect 1 "$BIN" plan -f "$TMP/bad.yaml" &&
	has "$TMP/err" 'bad.yaml: document 1' "invalid manifest message"
expect 0 "$BIN" plan --help

# QA-100: a pool shared by two existing nodes (a slice with a nodeSelector)
# is allocated once for the cluster: its two devices go to one pod, placed
# or running, and the other pod gets neither on the other node.
if expect 3 "$BIN" plan -f "$FIX/shared-pool.yaml" -o json; then
	jqis '[.existingNodes[].pods[]]' '["default/p0"]' "one pod on the shared pool"
	jqis '[.unschedulable[].pod]' '["default/p1"]' "the other not on the same devices"
	jqis '.unschedulable[0].reason | test("n2: .*0 of those are available: 2 in use")' 'true' \
		"the devices are in use on n2 too"
fi
sed '/^metadata: {name: p0}$/{n;s/^spec:$/spec:\n  nodeName: n1/}' \
	"$FIX/shared-pool.yaml" >"$TMP/shared-bound.yaml"
grep -q 'nodeName: n1' "$TMP/shared-bound.yaml" || fail "shared-bound.yaml not made"
if expect 3 "$BIN" plan -f "$TMP/shared-bound.yaml" -o json; then
	jqis '[.unschedulable[].pod]' '["default/p1"]' "a running pod holds the shared devices"
fi

# QA-103: pod-level resources (spec.resources, PodLevelResources) stand for
# the pod: 300Gi asked at the pod level does not fit a c6in (256Gi), though
# its container asks for nothing; a pod-level limit alone counts the same.
cat >"$TMP/podlevel.yaml" <<'YAML'
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: p}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: d}
      requirements: [{key: karpenter.k8s.aws/instance-family, operator: In, values: [c6in]}]
---
apiVersion: v1
kind: Pod
metadata: {name: big}
spec:
  resources:
    requests: {cpu: "30", memory: 300Gi}
  containers: [{name: c, image: x}]
YAML
expect 0 "$BIN" validate -f "$TMP/podlevel.yaml"
expect 3 "$BIN" plan -f "$TMP/podlevel.yaml" -o json &&
	jqis '.unschedulable[0].reason | test("too small")' 'true' "pod-level memory counted"
sed 's/requests: {cpu: "30", memory: 300Gi}/limits: {memory: 300Gi}/' "$TMP/podlevel.yaml" >"$TMP/podlimit.yaml"
expect 3 "$BIN" plan -f "$TMP/podlimit.yaml" -o json
sed 's/memory: 300Gi/memory: 200Gi/' "$TMP/podlevel.yaml" >"$TMP/podfits.yaml"
expect 0 "$BIN" plan -f "$TMP/podfits.yaml" -o json &&
	jqis '.nodeClaims[0].instanceType | startswith("c6in.")' 'true' "200Gi fits a c6in"

# QA-104: a sidecar (an init container with restartPolicy Always) runs
# beside the containers: 150Gi + 150Gi does not fit a c6in, where a plain
# init container of 150Gi beside a 150Gi container does.
{ sed -n '1,/^---$/p' "$TMP/podlevel.yaml"; cat <<'YAML'; } >"$TMP/side.yaml"
apiVersion: v1
kind: Pod
metadata: {name: side}
spec:
  initContainers:
  - {name: proxy, image: x, restartPolicy: Always, resources: {requests: {memory: 150Gi}}}
  containers: [{name: c, image: x, resources: {requests: {memory: 150Gi}}}]
YAML
expect 0 "$BIN" validate -f "$TMP/side.yaml"
expect 3 "$BIN" plan -f "$TMP/side.yaml" -o json &&
	jqis '.unschedulable[0].reason | test("too small")' 'true' "a sidecar counts with the containers"
sed '/restartPolicy: Always/s/restartPolicy: Always, //' "$TMP/side.yaml" >"$TMP/init.yaml"
expect 0 "$BIN" plan -f "$TMP/init.yaml" -o json

e2e_finish
