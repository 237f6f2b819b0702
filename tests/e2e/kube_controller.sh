#!/usr/bin/env bash
# kube_controller.sh BUILD_DIR - dratopo-coordinator as a Kubernetes
# controller against the real control plane of the kube fixture
# ($DT_KUBE_DIR: kube-apiserver, etcd, kube-controller-manager turning
# claim templates into ResourceClaims):
#   - the seed's manifests applied with kubectl lead to exactly the
#     NodeClaims that `dratopo plan` predicts offline for the same objects
#     dumped from the API server;
#   - the NodeClaims carry what Karpenter needs and what names their pods;
#   - a coordinator restarted creates no duplicate (in-flight NodeClaims are
#     capacity; names follow their content);
#   - a pod no node can take gets a Warning Event with the planner's reason;
#   - the status page lists the pending pods with where the plan puts them
#     and the NodeClaims in flight;
#   - --dry-run writes nothing and logs what it would write, once.
NAME=kube_controller
DRIVES="$1/bin/dratopo-coordinator"
. "$(dirname "$0")/lib.sh"
COORD="$1/bin/dratopo-coordinator"
. "$(dirname "$0")/kube_lib.sh"
NS=dt-ctrl-$$
SEED="$ROOT/examples/seed"
PID=

start_coord() {   # start_coord LOG [options]: the coordinator on this cluster
	local log=$1; shift
	"$COORD" --insecure --listen 127.0.0.1:0 --db "$TMP/coord.db" --kubeconfig "$KUBECONFIG" \
		"$@" >"$log" 2>&1 &
	PID=$!
}

stop_coord() {
	[ -n "$PID" ] || return 0
	kill -TERM "$PID" 2>/dev/null
	wait "$PID" 2>/dev/null
	PID=
}
NODE=ip-10-0-0-$$.ec2.internal
cleanup() {
	stop_coord
	drop_written_claims "$TMP"/coord*.log
	"$K" delete node "$NODE" --ignore-not-found >/dev/null 2>&1
	"$K" delete resourceslices --field-selector "spec.nodeName=$NODE" >/dev/null 2>&1
	drop_namespaces "$NS"
	"$K" delete nodepool gpu-dra --ignore-not-found >/dev/null 2>&1
	"$K" delete ec2nodeclass gpu-dra --ignore-not-found >/dev/null 2>&1
	rm -rf "$TMP"
}
trap cleanup EXIT

ours() { "$K" get nodeclaims -l app.kubernetes.io/managed-by=dratopo -o json; }

# The controller plans every pending pod and counts every NodeClaim: the
# offline plan below sees the same only in a cluster that holds nothing
# but this test's objects (NodeClaims are no input of `dratopo plan`).
quiet_cluster 60 || e2e_finish
expect 0 "$K" create namespace "$NS"
for _ in $(seq 1 100); do "$K" -n "$NS" get serviceaccount default >/dev/null 2>&1 && break; sleep 0.1; done
expect 0 "$K" apply -f "$SEED/nodepool.yaml" -f "$SEED/ec2nodeclass.yaml"
# the seed's time-sliced Deployment too: its EC2NodeClass (the same name,
# GPUs shared four ways) replaces the one above
expect 0 "$K" -n "$NS" apply -f "$SEED/large-gpu.yaml" -f "$SEED/gpu-efa-aligned.yaml" \
	-f "$SEED/timesliced.yaml"
# kube-controller-manager makes the Deployment's 8 pods and each pod's
# ResourceClaim from its template
for _ in $(seq 1 300); do
	[ "$("$K" -n "$NS" get resourceclaims --no-headers 2>/dev/null | wc -l)" = 10 ] && break
	sleep 0.1
done
[ "$("$K" -n "$NS" get pods --no-headers | wc -l)" = 10 ] || fail "10 pods (2 + the Deployment's 8)"
expect 0 "$K" -n "$NS" get resourceclaims --no-headers && has "$TMP/out" '^inference-gpu-' "claim from template"

# The offline plan of the same objects, as the API server has them.
expect 0 "$K" get pods,resourceclaims,resourceclaimtemplates,deviceclasses,nodes,resourceslices,nodepools,ec2nodeclasses,nodeoverlays -A -o yaml
cp "$TMP/out" "$TMP/dump.yaml"
# (exit 3 when some other test's pod is unschedulable: only ours count)
timeout 60 "$BIN" plan -f "$TMP/dump.yaml" -o json >"$TMP/out" 2>"$TMP/err"
rc=$?
[ "$rc" = 0 ] || [ "$rc" = 3 ] || fail "dratopo plan on the dump: exit $rc: $(head -3 "$TMP/err")"
no_sanitizer_report "$TMP/err" "dratopo plan"
jq -c "[.nodeClaims[] | select(.pods | any(startswith(\"$NS/\"))) | {t: .instanceType, p: (.pods | sort)}] | sort" \
	"$TMP/out" >"$TMP/offline"

start_coord "$TMP/coord.log" --http 127.0.0.1:0
wait_log "$TMP/coord.log" 'event=kube_plan .*written=' 60
wait_log "$TMP/coord.log" 'event=nodeclaim_created' 30
ours >"$TMP/out" || fail "list NodeClaims"
jq -c "[.items[] | select(.metadata.annotations[\"dratopo.io/pods\"] | split(\",\") | any(startswith(\"$NS/\"))) | {t: .metadata.labels[\"node.kubernetes.io/instance-type\"], p: (.metadata.annotations[\"dratopo.io/pods\"] | split(\",\") | sort)}] | sort" \
	"$TMP/out" >"$TMP/online"
[ -s "$TMP/offline" ] && [ "$(cat "$TMP/offline")" != "[]" ] || fail "the offline plan has no NodeClaim"
cmp -s "$TMP/offline" "$TMP/online" || {
	fail "controller's NodeClaims $(cat "$TMP/online") differ from the offline plan's $(cat "$TMP/offline")"
	grep -E 'event=(kube_listed|kube_plan|nodeclaim_created|kube_plan_problem)' "$TMP/coord.log" |
		cut -c1-400 >&2
}
# what Karpenter needs: the pool's node class, the type, the capacity type, the pool label
jqis "[.items[] | select(.metadata.annotations[\"dratopo.io/pods\"] | contains(\"$NS/inference\"))][0] | [.spec.nodeClassRef.kind, .metadata.labels[\"karpenter.sh/nodepool\"], ([.spec.requirements[] | select(.key == \"karpenter.sh/capacity-type\") | .values[0]] | .[0])]" \
	'["EC2NodeClass","gpu-dra","on-demand"]' "NodeClaim fields"
# the pods use dra.net's EFAs: Karpenter attaches EFA interfaces only when
# asked (its DRA support off), so the NodeClaim asks for every EFA of its type
ours >"$TMP/out"
t=$(jq -r "[.items[] | select(.metadata.annotations[\"dratopo.io/pods\"] | contains(\"$NS/rdma-worker\"))][0].metadata.labels[\"node.kubernetes.io/instance-type\"]" "$TMP/out")
efas=$("$BIN" hwdb show "$t" -o json | jq '[.resourceSlices[].spec.devices[]? | select(.name | startswith("efa-"))] | length')
jqis "[.items[] | select(.metadata.annotations[\"dratopo.io/pods\"] | contains(\"$NS/rdma-worker\"))][0].spec.resources.requests[\"vpc.amazonaws.com/efa\"]" "\"$efas\"" "EFA request"
before=$(ours | jq '.items | length')

# The status page: the pods waiting for the NodeClaims written for them,
# and those NodeClaims, launching (nothing launches them here).
HTTP=$(grep -o 'http_port=[0-9]*' "$TMP/coord.log" | head -1 | cut -d= -f2)
inference=$(ours | jq -r "[.items[] | select(.metadata.annotations[\"dratopo.io/pods\"] | contains(\"$NS/inference\"))][0].metadata.name")
expect 0 "$K" -n "$NS" label pod rdma-worker page=1     # a plan that counts them in flight
wait_log "$TMP/coord.log" 'event=kube_plan .*nodeclaims=0 written=0' 30
expect 0 curl -sf --noproxy '*' "http://127.0.0.1:$HTTP/"
has "$TMP/out" 'data-watching="true"' "the page's in-flight section is fed"
has "$TMP/out" "<td class=\"mono\">$NS/inference</td>.*waiting for NodeClaim $inference to launch" \
	"the pending pod and where the plan puts it"
has "$TMP/out" "<td class=\"mono\">$inference</td><td>gpu-dra</td>.*<td>launching</td>" \
	"the NodeClaim in flight"

# A second batch of changes: the pods are held by the in-flight NodeClaim.
expect 0 "$K" -n "$NS" label pod inference touched=1
wait_log "$TMP/coord.log" 'event=kube_plan .*nodeclaims=0 written=0' 30
# Restarted: nothing new.
stop_coord
start_coord "$TMP/coord2.log"
wait_log "$TMP/coord2.log" 'event=kube_plan ' 60
[ "$(ours | jq '.items | length')" = "$before" ] || fail "a restarted coordinator created NodeClaims"
has "$TMP/coord2.log" 'event=kube_plan .*written=0' "no write after restart"

# Karpenter deletes a NodeClaim it cannot launch (insufficient capacity):
# that type is avoided for a while and the pods get another offering.
first=$(ours | jq -r "[.items[] | select(.metadata.annotations[\"dratopo.io/pods\"] | contains(\"$NS/inference\"))][0] | .metadata.name + \" \" + .metadata.labels[\"node.kubernetes.io/instance-type\"]")
expect 0 "$K" delete nodeclaim "${first% *}"
wait_log "$TMP/coord2.log" "event=offering_unavailable nodeclaim=${first% *} instance_type=${first#* }" 30
wait_log "$TMP/coord2.log" 'event=nodeclaim_created ' 30
ours >"$TMP/out"
jqis "[.items[] | select(.metadata.annotations[\"dratopo.io/pods\"] | contains(\"$NS/inference\"))] | length" 1 "one NodeClaim for the pods again"
jqis "[.items[] | select(.metadata.annotations[\"dratopo.io/pods\"] | contains(\"$NS/inference\")) | .metadata.labels[\"node.kubernetes.io/instance-type\"] != \"${first#* }\"] | .[0]" true "another instance type"
sleep 2         # the rest of that plan's writes
before=$(ours | jq '.items | length')

# Karpenter launched it: the NodeClaim registered as a Node, whose drivers
# published their slices (hwdb's prediction for the type). The pods fit
# there, so no further NodeClaim appears.
claim=$(ours | jq -r "[.items[] | select(.metadata.annotations[\"dratopo.io/pods\"] | contains(\"$NS/inference\"))][0] | .metadata.name + \" \" + .metadata.labels[\"node.kubernetes.io/instance-type\"]")
expect 0 "$K" patch nodeclaim "${claim% *}" --subresource=status --type=merge \
	-p "{\"status\":{\"nodeName\":\"$NODE\",\"providerID\":\"aws:///us-east-1a/i-0$$\"}}"
cat >"$TMP/node.yaml" <<EON
apiVersion: v1
kind: Node
metadata:
  name: $NODE
  labels: {kubernetes.io/hostname: $NODE, node.kubernetes.io/instance-type: ${claim#* },
           karpenter.sh/nodepool: gpu-dra, karpenter.sh/capacity-type: on-demand,
           topology.kubernetes.io/zone: us-east-1a}
spec:
  providerID: aws:///us-east-1a/i-0$$
  taints: [{key: nvidia.com/gpu, effect: NoSchedule}]
status:
  allocatable: {cpu: "190", memory: 1800Gi, pods: "110"}
  capacity: {cpu: "192", memory: 2000Gi, pods: "110"}
EON
expect 0 "$K" apply -f "$TMP/node.yaml"
# QA-76: registered, not ready (the API server's not-ready taint), no
# slices yet: the node still holds its pods, no second NodeClaim
lines=$(wc -l <"$TMP/coord2.log")
expect 0 "$K" -n "$NS" label pod inference step=registered
next_plan "$TMP/coord2.log" "$lines" 30 &&
	case $PLAN in *" nodeclaims=0 written=0 "*) ;;
	*) fail "a registered node not yet ready got its pods another NodeClaim: $PLAN" ;; esac
# Ready: the node lifecycle controller (not run here) lifts the API
# server's not-ready taint
expect 0 "$K" taint nodes "$NODE" node.kubernetes.io/not-ready:NoSchedule-
# the GPU driver published one GPU fewer than the plan counted on (shared
# four ways, as the EC2NodeClass says and the driver is configured)
expect 0 "$BIN" hwdb show "${claim#* }" --node "$NODE" --consumable-capacity 4 -o json
jq '{apiVersion: "v1", kind: "List", items: [.resourceSlices[] |
	if .spec.driver == "gpu.nvidia.com" then .spec.devices |= .[1:] else . end]}' \
	"$TMP/out" >"$TMP/slices.json"
gpus=$(jq '[.items[] | select(.spec.driver == "gpu.nvidia.com") | .spec.devices[]] | length' "$TMP/slices.json")
expect 0 "$K" apply -f "$TMP/slices.json"
lines=$(wc -l <"$TMP/coord2.log")
expect 0 "$K" -n "$NS" label pod rdma-worker touched=1
next_plan "$TMP/coord2.log" "$lines" 30 &&
	case $PLAN in *" nodeclaims=0 written=0 "*) ;;
	*) fail "a registered node's pods got another NodeClaim: $PLAN" ;; esac
[ "$(ours | jq '.items | length')" = "$before" ] || fail "NodeClaims after registration"
# ...which is a Warning on the Node and a log line
wait_log "$TMP/coord2.log" "event=slices_differ node=$NODE" 30
has "$TMP/coord2.log" "event=slices_differ .*gpu.nvidia.com: $gpus devices on [0-9]+ PCIe roots, the plan counted $((gpus + 1)) on [0-9]+" "the difference in words"
for _ in $(seq 1 50); do
	"$K" get events -A --field-selector reason=SlicesDiffer -o json | jq -e '.items | length > 0' >/dev/null && break
	sleep 0.2
done
expect 0 "$K" get events -A --field-selector reason=SlicesDiffer -o json
jqis "[.items[] | select(.involvedObject.name == \"$NODE\") | .type] | unique" '["Warning"]' "SlicesDiffer Event on the Node"

# A pod no node can take: a Warning Event with the reason.
cat >"$TMP/huge.yaml" <<'EOF'
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: too-many-gpus}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu.nvidia.com, count: 64}
---
apiVersion: v1
kind: Pod
metadata: {name: greedy}
spec:
  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
  resourceClaims: [{name: gpu, resourceClaimTemplateName: too-many-gpus}]
  containers: [{name: c, image: busybox, resources: {claims: [{name: gpu}]}}]
EOF
expect 0 "$K" -n "$NS" apply -f "$TMP/huge.yaml"
for _ in $(seq 1 100); do
	"$K" -n "$NS" get events --field-selector reason=FailedProvisioning -o json 2>/dev/null |
		jq -e '.items | length > 0' >/dev/null && break
	sleep 0.2
done
expect 0 "$K" -n "$NS" get events --field-selector reason=FailedProvisioning -o json
# (kubectl shows events.k8s.io Events as core/v1 ones: involvedObject, message)
jqis "[.items[] | select(.involvedObject.name == \"greedy\")] | length > 0" true "Warning Event on the pod"
jq -r '.items[] | select(.involvedObject.name == "greedy") | .message' "$TMP/out" |
	grep -q 'exceeds the claim limit of 32' || fail "the Event gives the planner's reason"
jqis "[.items[] | .type] | unique" '["Warning"]' "Event type"
[ "$(ours | jq '.items | length')" = "$before" ] || fail "an unplaceable pod got a NodeClaim"
stop_coord

# --dry-run: with the NodeClaims and the node gone, the pods are planned
# again, logged, and nothing is written.
"$K" delete node "$NODE" >/dev/null || fail "delete node"
"$K" delete resourceslices --field-selector "spec.nodeName=$NODE" >/dev/null || fail "delete slices"
ours | jq -r ".items[] | select(.metadata.annotations[\"dratopo.io/pods\"] | contains(\"$NS/\")) | .metadata.name" |
	while read -r n; do "$K" delete nodeclaim "$n" >/dev/null; done
before=$(ours | jq '.items | length')
sed -e 's/name: inference/name: inference-two/' "$SEED/large-gpu.yaml" |
	"$K" -n "$NS" apply -f - >/dev/null || fail "apply inference-two"
start_coord "$TMP/coord3.log" --dry-run
wait_log "$TMP/coord3.log" 'event=kube_dry_run verb=apply resource=nodeclaims.karpenter.sh' 60
has "$TMP/coord3.log" "event=kube_dry_run .*pods=[^ ]*$NS/inference-two" "dry run names the pod"
# another plan of the same pods: the same would-be write is not logged again
n=$(grep -c 'event=kube_plan ' "$TMP/coord3.log")
expect 0 "$K" -n "$NS" label pod inference-two again=1
for _ in $(seq 1 300); do
	[ "$(grep -c 'event=kube_plan ' "$TMP/coord3.log")" -gt "$n" ] && break
	sleep 0.1
done
[ "$(grep -c 'event=kube_plan ' "$TMP/coord3.log")" -gt "$n" ] || fail "no second dry-run plan"
[ "$(grep -c "event=kube_dry_run .*pods=[^ ]*$NS/inference-two" "$TMP/coord3.log")" = 1 ] ||
	fail "the dry run logged the same NodeClaim twice"
[ "$(ours | jq '.items | length')" = "$before" ] || fail "--dry-run wrote a NodeClaim"
stop_coord
for f in "$TMP"/coord*.log; do no_sanitizer_report "$f" "$(basename "$f")"; done

# Clean up the NodeClaims this test made (by uid, as the controller would).
ours | jq -r ".items[] | select(.metadata.annotations[\"dratopo.io/pods\"] | contains(\"$NS/\")) | .metadata.name" |
	while read -r n; do "$K" delete nodeclaim "$n" --wait=false >/dev/null; done
e2e_finish
