#!/usr/bin/env bash
# kube_karpenter.sh BUILD_DIR - dratopo-coordinator with Karpenter's own
# controller (sigs.k8s.io/karpenter/kwok: Karpenter with a fake cloud that
# launches a NodeClaim by creating its Node) on the control plane of the
# kube fixture ($DT_KUBE_DIR). kwok offers hwdb's GPU instance types (a
# file in kwok's format written from `dratopo hwdb list -o json`), on
# demand in two zones. Two NodePools name KWOKNodeClasses: dt-sold-out
# (g6.xlarge, the cheapest) names one that does not exist, which kwok
# answers with InsufficientCapacity; dt-kwok (g6e) one that does.
#   - the pod's first NodeClaim (g6.xlarge) is deleted by Karpenter for
#     insufficient capacity; that offering is avoided and the next plan
#     takes g6e.xlarge from the other pool;
#   - Karpenter launches that NodeClaim and registers its Node; no further
#     NodeClaim appears while the node comes up (not ready, no slices yet)
#     nor once it is up (the test plays the kubelet, the node lifecycle
#     controller and the drivers: Ready, the not-ready taint lifted, hwdb's
#     slices published) and Karpenter initialized it;
#   - Karpenter makes no NodeClaim of its own for the DRA pod (its DRA
#     support is off, its default).
# Karpenter runs only for this test (it would launch, or fail for want of a
# KWOKNodeClass, the other tests' NodeClaims).
NAME=kube_karpenter
DRIVES="$1/bin/dratopo-coordinator"
. "$(dirname "$0")/lib.sh"
COORD="$1/bin/dratopo-coordinator"
. "$(dirname "$0")/kube_lib.sh"
CLUSTER="$ROOT/tools/kube/cluster.sh"
NS=dt-karp-$$
PID=
NODE=

cleanup() {
	[ -n "$PID" ] && kill -TERM "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
	# Karpenter takes down the NodeClaims the coordinator wrote (drain, Node,
	# instance) before it stops; what it has not finished is let go of
	drop_written_claims "$TMP/coord.log"
	"$K" wait --for=delete nodeclaims -l "karpenter.sh/nodepool in (dt-kwok,dt-sold-out)" \
		--timeout=60s >/dev/null 2>&1
	bash "$CLUSTER" karpenter "$DT_KUBE_DIR" stop >/dev/null 2>&1
	for n in $("$K" get nodeclaims,nodes -o name -l "karpenter.sh/nodepool in (dt-kwok,dt-sold-out)" 2>/dev/null); do
		"$K" patch "$n" --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1
		"$K" delete "$n" --wait=false >/dev/null 2>&1
	done
	# the drivers' slices the test published (no kubelet deletes them)
	[ -n "$NODE" ] && "$K" delete resourceslices --field-selector "spec.nodeName=$NODE" >/dev/null 2>&1
	"$K" delete nodepools dt-kwok dt-sold-out --wait=false >/dev/null 2>&1
	"$K" delete kwoknodeclasses dt-kwok --wait=false >/dev/null 2>&1
	drop_namespaces "$NS"
	rm -rf "$TMP"
}
trap cleanup EXIT

ours() { "$K" get nodeclaims -l app.kubernetes.io/managed-by=dratopo -o json; }
claims_of_pool() { ours | jq "[.items[] | select(.metadata.labels[\"karpenter.sh/nodepool\"] == \"$1\")]"; }

# A plan after this line of the log, and what it wrote.
plan_after() {   # plan_after LINES: waits for the next kube_plan line
	for _ in $(seq 1 300); do
		tail -n +$(($1 + 1)) "$TMP/coord.log" | grep -q 'event=kube_plan ' && break
		sleep 0.1
	done
	tail -n +$(($1 + 1)) "$TMP/coord.log" | grep 'event=kube_plan ' | head -1
}

# kwok's instance types: hwdb's GPU types with an on-demand price.
expect 0 "$BIN" hwdb list -o json
jq '[.instanceTypes[] | select(.gpu.count > 0 and .onDemandPricePerHour != null) | {
	name, architecture: .arch, operatingSystems: ["linux"],
	resources: ({cpu: (.vcpu | tostring), memory: "\(.memoryMiB)Mi", pods: "110"} +
		(if .efa.count > 0 then {"vpc.amazonaws.com/efa": (.efa.count | tostring)} else {} end)),
	offerings: [("us-east-1a", "us-east-1b") as $z | {Price: .onDemandPricePerHour, Available: true,
		Requirements: [{key: "karpenter.sh/capacity-type", operator: "In", values: ["on-demand"]},
			{key: "topology.kubernetes.io/zone", operator: "In", values: [$z]}]}]}]' \
	"$TMP/out" >"$TMP/instance-types.json" || fail "kwok's instance types from hwdb"
cp "$TMP/instance-types.json" "$TMP/out"
jqis '[.[] | select(.name == "g6.xlarge" or .name == "g6e.xlarge")] | length' 2 "the test's types among kwok's"
E2E_TIMEOUT=1800 expect 0 bash "$CLUSTER" karpenter "$DT_KUBE_DIR" start \
	--instance-types "$TMP/instance-types.json"
has "$TMP/err" 'Karpenter .* ready in' "Karpenter started"

expect 0 "$K" create namespace "$NS"
for _ in $(seq 1 100); do "$K" -n "$NS" get serviceaccount default >/dev/null 2>&1 && break; sleep 0.1; done
cat >"$TMP/pools.yaml" <<'EOF'
apiVersion: karpenter.kwok.sh/v1alpha1
kind: KWOKNodeClass
metadata: {name: dt-kwok}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: dt-kwok}
spec:
  disruption: {consolidationPolicy: WhenEmpty, consolidateAfter: Never}
  template:
    spec:
      nodeClassRef: {group: karpenter.kwok.sh, kind: KWOKNodeClass, name: dt-kwok}
      requirements:
      - {key: node.kubernetes.io/instance-type, operator: In, values: [g6e.xlarge, g6e.2xlarge]}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: dt-sold-out}
spec:
  disruption: {consolidationPolicy: WhenEmpty, consolidateAfter: Never}
  template:
    spec:
      nodeClassRef: {group: karpenter.kwok.sh, kind: KWOKNodeClass, name: dt-sold-out}
      requirements:
      - {key: node.kubernetes.io/instance-type, operator: In, values: [g6.xlarge]}
EOF
expect 0 "$K" apply -f "$TMP/pools.yaml"
expect 0 "$K" -n "$NS" apply -f "$ROOT/tests/fixtures/kube/one-gpu.yaml"
cat >"$TMP/pod.yaml" <<EOF
apiVersion: v1
kind: Pod
metadata: {name: trainer, labels: {dratopo.io/test: $NS}}
spec:
  resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
  containers: [{name: c, image: busybox, resources: {claims: [{name: gpu}]}}]
EOF
expect 0 "$K" -n "$NS" apply -f "$TMP/pod.yaml"

"$COORD" --insecure --listen 127.0.0.1:0 --db "$TMP/coord.db" --kubeconfig "$KUBECONFIG" \
	>"$TMP/coord.log" 2>&1 &
PID=$!

# The cheapest offering first; kwok has no node class for it: Karpenter
# deletes the NodeClaim for insufficient capacity.
wait_log "$TMP/coord.log" 'event=nodeclaim_created name=dt-sold-out-[0-9a-f]+ instance_type=g6.xlarge' 60
wait_log "$TMP/coord.log" 'event=offering_unavailable nodeclaim=dt-sold-out-[0-9a-f]+ instance_type=g6.xlarge zone=any capacity_type=on-demand' 60
expect 0 "$K" get events -A --field-selector reason=InsufficientCapacityError -o json
jqis '[.items[] | select(.involvedObject.kind == "NodeClaim" and (.involvedObject.name | startswith("dt-sold-out-")))] | length > 0' \
	true "Karpenter's InsufficientCapacityError Event"
# ...and the next plan takes another offering, which Karpenter launches
wait_log "$TMP/coord.log" 'event=nodeclaim_created name=dt-kwok-[0-9a-f]+ instance_type=g6e.xlarge' 60
claim=$(grep -o 'event=nodeclaim_created name=dt-kwok-[0-9a-f]*' "$TMP/coord.log" | head -1 | sed 's/.*name=//')
node_of() { "$K" get nodeclaim "$claim" -o jsonpath='{.status.nodeName}'; }
until_true 90 "Karpenter registered $claim" sh -c "[ -n \"\$('$K' get nodeclaim $claim -o jsonpath='{.status.nodeName}')\" ]"
NODE=$(node_of)
expect 0 "$K" get nodeclaim "$claim" -o json
jqis '[.status.conditions[] | select(.type == "Launched" or .type == "Registered") | .status]' \
	'["True","True"]' "Launched and Registered by Karpenter"
jqis '.status.providerID | startswith("kwok://")' true "launched by kwok"
expect 0 "$K" get node "$NODE" -o json
jqis '[.metadata.labels["node.kubernetes.io/instance-type"], .metadata.labels["karpenter.sh/nodepool"], .metadata.labels["karpenter.sh/registered"]]' \
	'["g6e.xlarge","dt-kwok","true"]' "the Node Karpenter registered"
[ "$(ours | jq '[.items[] | select(.metadata.annotations["dratopo.io/pods"] == "'"$NS"'/trainer")] | length')" = 1 ] ||
	fail "one NodeClaim for the pod"

# The node is registered but not up: not ready, no slices. It holds the
# pod all the same (as Karpenter's scheduler counts uninitialized nodes).
lines=$(wc -l <"$TMP/coord.log")
expect 0 "$K" -n "$NS" label pod trainer step=registered
got=$(plan_after "$lines")
case $got in *"nodeclaims=0 written=0"*) ;; *) fail "a plan while the node comes up wrote: $got" ;; esac

# The kubelet (KWOK's part) says Ready, the node lifecycle controller
# lifts the not-ready taint, the GPU driver publishes its slices: Karpenter
# initializes the node.
expect 0 "$BIN" hwdb show g6e.xlarge --node "$NODE" -o json
jq '{apiVersion: "v1", kind: "List", items: .resourceSlices}' "$TMP/out" >"$TMP/slices.json"
expect 0 "$K" apply -f "$TMP/slices.json"
now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
expect 0 "$K" patch node "$NODE" --subresource=status --type=merge -p \
	"{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\",\"reason\":\"KubeletReady\",\"lastHeartbeatTime\":\"$now\",\"lastTransitionTime\":\"$now\"}]}}"
expect 0 "$K" taint nodes "$NODE" node.kubernetes.io/not-ready:NoSchedule-
until_true 90 "Karpenter initialized $claim" sh -c \
	"'$K' get nodeclaim $claim -o json | jq -e '.status.conditions[] | select(.type == \"Initialized\" and .status == \"True\")'"
lines=$(wc -l <"$TMP/coord.log")
expect 0 "$K" -n "$NS" label pod trainer --overwrite step=initialized
got=$(plan_after "$lines")
case $got in *"nodeclaims=0 written=0"*) ;; *) fail "a plan once the node is up wrote: $got" ;; esac
wait_log "$TMP/coord.log" "event=slices_match node=$NODE" 30
[ "$(claims_of_pool dt-kwok | jq length)" = 1 ] || fail "NodeClaims of dt-kwok: $(claims_of_pool dt-kwok | jq -c '[.[].metadata.name]')"
# Karpenter left the DRA pod to dratopo: every NodeClaim of these pools is ours
expect 0 "$K" get nodeclaims -o json
jqis '[.items[] | select(.metadata.labels["karpenter.sh/nodepool"] | startswith("dt-")) | .metadata.labels["app.kubernetes.io/managed-by"]] | unique' \
	'["dratopo"]' "no NodeClaim of Karpenter's own"
no_sanitizer_report "$TMP/coord.log" "dratopo-coordinator"
e2e_finish
