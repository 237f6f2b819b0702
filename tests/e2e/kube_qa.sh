#!/usr/bin/env bash
# kube_qa.sh BUILD_DIR - the QA pass's controller cases (docs/qa.md, round 5)
# against the real control plane of the kube fixture ($DT_KUBE_DIR):
#   - QA-71: a pod pinned to a zone finds the NodeClaim in flight that was
#     made for a pod pinned there before (the claim's zone requirement is its
#     node's label): the second pod gets no second NodeClaim, and no pod is
#     provisioned twice.
#   - QA-74: a pod a scheduling gate holds (a queue such as Kueue admits it
#     later) gets no NodeClaim; once its gate is removed it gets one.
#   - QA-77: a pod asking for a device-plugin resource (nvidia.com/gpu) is
#     Karpenter's: no Warning Event from dratopo, no NodeClaim; one asking
#     for an extended resource a DeviceClass backs gets its NodeClaim.
#   - QA-84: --dry-run counts what it would write as dry-run writes only:
#     dratopo_kube_nodeclaims_written_total stays 0, kube_plan says written=0.
# Everything it makes is its own: a namespace, and a NodePool, EC2NodeClass
# and NodeOverlay named for the run, whose taint only its pods tolerate.
NAME=kube_qa
DRIVES="$1/bin/dratopo-coordinator"
. "$(dirname "$0")/lib.sh"
COORD="$1/bin/dratopo-coordinator"
. "$(dirname "$0")/kube_lib.sh"
NS=dt-qa-$$
POOL=dt-qa-$$
PID=

stop_coord() {
	[ -n "$PID" ] || return 0
	kill -TERM "$PID" 2>/dev/null
	wait "$PID" 2>/dev/null
	PID=
}
cleanup() {
	stop_coord
	"$K" delete nodeclaims -l "karpenter.sh/nodepool=$POOL" --wait=false >/dev/null 2>&1
	"$K" delete nodepool "$POOL" --wait=false >/dev/null 2>&1
	for kind in nodeoverlay ec2nodeclass deviceclass; do
		"$K" delete "$kind" "$POOL" --wait=false >/dev/null 2>&1
	done
	drop_written_claims "$TMP"/*.log
	drop_namespaces "$NS"
	rm -rf "$TMP"
}
trap cleanup EXIT

# plans_after N SECONDS: until the log has more than N kube_plan lines.
plans_after() {
	for _ in $(seq 1 $(($2 * 10))); do
		[ "$(grep -c 'event=kube_plan ' "$TMP/coord.log")" -gt "$1" ] && return 0
		sleep 0.1
	done
	fail "no plan after the ${1}th within $2 s"
	tail -5 "$TMP/coord.log" >&2
	return 1
}

# ours [WORD]: our pool's NodeClaims (those of pods named WORD-...) as
# their sorted pod lists, sorted
ours() {
	"$K" get nodeclaims -l "karpenter.sh/nodepool=$POOL" -o json |
		jq -c --arg w "/${1:-}" '[.items[] | .metadata.annotations["dratopo.io/pods"] |
			split(",") | sort | select(any(contains($w)))] | sort'
}

expect 0 "$K" create namespace "$NS"
for _ in $(seq 1 100); do "$K" -n "$NS" get serviceaccount default >/dev/null 2>&1 && break; sleep 0.1; done
# g6.12xlarge (4 GPUs) priced under a g6.xlarge, so that one node would hold
# both zonal pods: without the zone label on the in-flight node, the second
# plan made one new node for both, the first pod's second. The gated pod
# needs 5 GPUs (a g6.48xlarge), so that it can never take the zonal node.
cat >"$TMP/pool.yaml" <<EOF
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: $POOL}
spec:
  role: KarpenterNodeRole-qa
  amiSelectorTerms: [{alias: al2023@latest}]
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: qa}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: qa}}]
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: $POOL}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: $POOL}
      requirements:
      - {key: node.kubernetes.io/instance-type, operator: In, values: [g6.xlarge, g6.12xlarge, g6.48xlarge]}
      taints: [{key: $POOL, effect: NoSchedule}]
---
apiVersion: karpenter.sh/v1alpha1
kind: NodeOverlay
metadata: {name: $POOL}
spec:
  weight: 100
  requirements:
  - {key: karpenter.sh/nodepool, operator: In, values: [$POOL]}
  - {key: node.kubernetes.io/instance-type, operator: In, values: [g6.12xlarge]}
  price: "0.10"
EOF
cat >"$TMP/app.yaml" <<EOF
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu.nvidia.com}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: five-gpus}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu.nvidia.com, count: 5}
---
apiVersion: v1
kind: Pod
metadata: {name: gated}
spec:
  schedulingGates: [{name: example.com/queue}]
  tolerations: [{key: $POOL, operator: Exists}]
  resourceClaims: [{name: gpu, resourceClaimTemplateName: five-gpus}]
  containers:
  - name: c
    image: busybox
    resources: {claims: [{name: gpu}]}
EOF
pod() {   # pod NAME: one GPU, pinned to us-east-1a
	cat <<EOF
apiVersion: v1
kind: Pod
metadata: {name: $1}
spec:
  nodeSelector: {topology.kubernetes.io/zone: us-east-1a}
  tolerations: [{key: $POOL, operator: Exists}]
  resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
  containers:
  - name: c
    image: busybox
    resources: {claims: [{name: gpu}]}
EOF
}
expect 0 "$K" apply -f "$TMP/pool.yaml"
expect 0 "$K" -n "$NS" apply -f "$TMP/app.yaml"
pod zonal-1 >"$TMP/p1.yaml"
pod zonal-2 >"$TMP/p2.yaml"
expect 0 "$K" -n "$NS" apply -f "$TMP/p1.yaml"

"$COORD" --insecure --listen 127.0.0.1:0 --db "$TMP/coord.db" --kubeconfig "$KUBECONFIG" \
	>"$TMP/coord.log" 2>&1 &
PID=$!
for _ in $(seq 1 300); do
	[ "$(ours zonal)" = "[[\"$NS/zonal-1\"]]" ] && break
	sleep 0.1
done
got=$(ours zonal)
[ "$got" = "[[\"$NS/zonal-1\"]]" ] || fail "QA-71: first NodeClaim: $got"
zone=$("$K" get nodeclaims -l "karpenter.sh/nodepool=$POOL" -o json |
	jq -r '.items[] | select(.metadata.annotations["dratopo.io/pods"] | contains("zonal-1")) |
		.spec.requirements[] | select(.key == "topology.kubernetes.io/zone") | .values | join(",")')
[ "$zone" = us-east-1a ] || fail "QA-71: the NodeClaim's zone requirement is '$zone'"

n=$(grep -c 'event=kube_plan ' "$TMP/coord.log")
expect 0 "$K" -n "$NS" apply -f "$TMP/p2.yaml"
plans_after "$n" 30
sleep 1.5            # and whatever plan the pod's ResourceClaim starts
got=$(ours zonal)
[ "$got" = "[[\"$NS/zonal-1\"]]" ] ||
	fail "QA-71: zonal-2 fits the NodeClaim in flight in its zone, yet the NodeClaims are $got"

# QA-74: the gated pod (applied first) has had its plans: still no NodeClaim
got=$(ours)
case "$got" in *"$NS/gated"*) fail "QA-74: the gated pod got a NodeClaim: $got" ;; esac
n=$(grep -c 'event=kube_plan ' "$TMP/coord.log")
expect 0 "$K" -n "$NS" patch pod gated --type=json -p '[{"op":"remove","path":"/spec/schedulingGates"}]'
plans_after "$n" 30
for _ in $(seq 1 100); do
	case "$(ours)" in *"$NS/gated"*) break ;; esac
	sleep 0.1
done
got=$(ours)
case "$got" in *"[\"$NS/gated\"]"*) ;; *) fail "QA-74: the pod ungated got no NodeClaim of its own: $got" ;; esac

# QA-77: a device-plugin pod and a pod of a DRA-backed extended resource
# (pinned to another zone, so that it needs a node of its own)
cat >"$TMP/extres.yaml" <<EOF
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: $POOL}
spec:
  selectors: [{cel: {expression: 'device.driver == "gpu.nvidia.com"'}}]
  extendedResourceName: example.com/$POOL
---
apiVersion: v1
kind: Pod
metadata: {name: legacy, namespace: $NS}
spec:
  tolerations: [{key: $POOL, operator: Exists}]
  containers:
  - name: c
    image: busybox
    resources: {limits: {nvidia.com/gpu: 1}}
---
apiVersion: v1
kind: Pod
metadata: {name: extres, namespace: $NS}
spec:
  nodeSelector: {topology.kubernetes.io/zone: us-east-1b}
  tolerations: [{key: $POOL, operator: Exists}]
  containers:
  - name: c
    image: busybox
    resources: {limits: {example.com/$POOL: 1}}
EOF
n=$(grep -c 'event=kube_plan ' "$TMP/coord.log")
expect 0 "$K" apply -f "$TMP/extres.yaml"
plans_after "$n" 30
for _ in $(seq 1 100); do
	[ "$(ours extres)" = "[[\"$NS/extres\"]]" ] && break
	sleep 0.1
done
got=$(ours extres)
[ "$got" = "[[\"$NS/extres\"]]" ] || fail "QA-77: the DRA extended-resource pod's NodeClaims: $got"
sleep 1.5            # the Events are written in the background
expect 0 "$K" -n "$NS" get events.events.k8s.io -o json
jqis '[.items[] | select(.regarding.name == "legacy" and .reportingController == "dratopo.io/coordinator") | .note]' \
	'[]' "QA-77: dratopo's Events on the device-plugin pod"
case "$(ours)" in *"$NS/legacy"*) fail "QA-77: the device-plugin pod got a NodeClaim: $(ours)" ;; esac
stop_coord
no_sanitizer_report "$TMP/coord.log" "dratopo-coordinator"

# QA-84: a pod pinned to a zone no NodeClaim is in, planned by a dry run
pod zonal-3 | sed 's/us-east-1a/us-east-1c/' >"$TMP/p3.yaml"
expect 0 "$K" -n "$NS" apply -f "$TMP/p3.yaml"
"$COORD" --insecure --listen 127.0.0.1:0 --http 127.0.0.1:0 --db "$TMP/coord.db" \
	--kubeconfig "$KUBECONFIG" --dry-run >"$TMP/dry.log" 2>&1 &
PID=$!
for _ in $(seq 1 300); do
	grep -q "event=kube_dry_run .*pods=$NS/zonal-3" "$TMP/dry.log" && break
	sleep 0.1
done
has "$TMP/dry.log" "event=kube_dry_run verb=apply resource=nodeclaims.karpenter.sh .*pods=$NS/zonal-3" \
	"QA-84: the dry run's NodeClaim"
port=$(sed -n 's/.* http_port=\([0-9]*\).*/\1/p' "$TMP/dry.log" | head -1)
curl -sf "http://127.0.0.1:$port/metrics" >"$TMP/metrics" || fail "QA-84: /metrics on port '$port'"
has "$TMP/metrics" '^dratopo_kube_nodeclaims_written_total 0$' "QA-84: nothing counted as written"
has "$TMP/metrics" '^dratopo_kube_dry_run_writes_total\{verb="apply",resource="nodeclaims.karpenter.sh"\} [1-9]' \
	"QA-84: counted as a dry-run write"
grep 'event=kube_plan ' "$TMP/dry.log" | grep -qv ' written=0 ' && fail "QA-84: a dry-run plan says it wrote"
case "$(ours zonal-3)" in *zonal-3*) fail "QA-84: the dry run wrote a NodeClaim" ;; esac
stop_coord
no_sanitizer_report "$TMP/dry.log" "dratopo-coordinator --dry-run"
e2e_finish
