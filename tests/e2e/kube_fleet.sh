#!/usr/bin/env bash
# kube_fleet.sh BUILD_DIR - the fleet's commands against a real API server
# and a real kubectl (the control plane of ctest's kube fixture, DT_KUBE_DIR):
#   - remedies both ways, exactly as the docs write the pipelines: a node in
#     drift -> `dratopo nodes -o yaml | kubectl apply -f -` creates its
#     DeviceTaintRules (the server accepts every one); the node recovers ->
#     the same apply still works (its input always holds the dratopo-drift
#     anchor: kubectl apply refuses one without objects) and `dratopo nodes
#     --lifts | kubectl delete --ignore-not-found -f -` removes the rules;
#     a second lift finds nothing and succeeds; a fleet that never drifted
#     applies the anchor alone;
#   - plan --coordinator counts the devices running pods hold, from what
#     `kubectl get pods,resourceclaims -o yaml` prints: a pod bound to a
#     fleet node whose claim the resourceclaim controller made from a
#     template and that is allocated there (its status written as the
#     scheduler writes it); and with the controller on (--kubeconfig),
#     from the cluster through its informers, no manifests given;
#   - a Node deleted from the API server: the fleet forgets its node.
NAME=kube_fleet; DRIVES="$1/bin/dratopo-coordinator"; . "$(dirname "$0")/lib.sh"
COORD="$1/bin/dratopo-coordinator"
FX="$1/fixtures/agent"
KDIR="${DT_KUBE_DIR:?set DT_KUBE_DIR to the directory of a control plane (tests/kube.cmake)}"
NS=dt-kube-fleet-$$      # its own: a namespace takes a while to go
export GRPC_VERBOSITY=NONE
[ -f "$KDIR/cluster.env" ] || { echo "FAIL: no control plane in $KDIR (kube_up)" >&2; exit 1; }
. "$KDIR/cluster.env"
export KUBECONFIG
KUBECTL="$KDIR/bin/kubectl"
. "$(dirname "$0")/kube_lib.sh"
cleanup() {
	drop_namespaces "$NS"   # its pod is bound to gpu-a, which no kubelet runs
	"$KUBECTL" delete node gpu-a --ignore-not-found >/dev/null 2>&1
	"$KUBECTL" delete devicetaintrules -l dratopo.io/node=gpu-b --ignore-not-found >/dev/null 2>&1
	"$KUBECTL" delete devicetaintrule dratopo-drift --ignore-not-found >/dev/null 2>&1
	e2e_cleanup
}
trap cleanup EXIT
[ -d "$FX/p5.48xlarge/sys" ] || bash "$ROOT/tests/fixtures/agent/mksysfs.sh" "$FX" >/dev/null

agent() {   # agent NODE FIXTURE
	expect 0 "$AGENT" run --once --coordinator "127.0.0.1:$PORT" --node-name "$1" \
		--sysfs-root "$FX/$2" --insecure
}
# pipe WHAT LEFT... -- RIGHT...: LEFT | RIGHT as the docs write it; both
# must succeed. RIGHT's output in $TMP/out, its errors in $TMP/err.
pipe() {
	local what=$1 i left=() rc
	shift
	for i in "$@"; do
		shift
		[ "$i" = -- ] && break
		left+=("$i")
	done
	timeout 60 "${left[@]}" 2>"$TMP/left.err" | timeout 60 "$@" >"$TMP/out" 2>"$TMP/err"
	rc=("${PIPESTATUS[@]}")
	no_sanitizer_report "$TMP/left.err" "$what"
	[ "${rc[0]}" = 0 ] || fail "$what: ${left[*]}: exit ${rc[0]}: $(head -3 "$TMP/left.err")"
	[ "${rc[1]}" = 0 ] || fail "$what: $*: exit ${rc[1]}: $(head -3 "$TMP/err")"
}
remote() { echo --coordinator "127.0.0.1:$PORT" --insecure; }
rules_of() {   # the names of node $1's rules in the cluster, sorted
	"$KUBECTL" get devicetaintrules -l "dratopo.io/node=$1" -o name | sed 's#.*/##' | sort
}
anchor_summary() {
	"$KUBECTL" get devicetaintrule dratopo-drift \
		-o jsonpath='{.metadata.annotations.dratopo\.io/remedies}'
}

# ---- A fleet that never drifted: the anchor alone ------------------------
start_coord "$TMP/c1.log" --db memory: --insecure --kube off   # kubectl does the applying here
agent gpu-a p5.48xlarge
pipe "apply, nothing in drift" "$BIN" nodes $(remote) -o yaml -- "$KUBECTL" apply -f -
has "$TMP/out" '^devicetaintrule.resource.k8s.io/dratopo-drift (created|configured|unchanged)$' \
	"the anchor applied"
[ "$(anchor_summary)" = "nodes in drift: 0, DeviceTaintRules: 0, Node taints: 0, nodes to lift: 0" ] ||
	fail "anchor summary with nothing in drift: $(anchor_summary)"
[ "$("$KUBECTL" get devicetaintrule dratopo-drift -o jsonpath='{.spec.taint.effect} {.spec.deviceSelector.driver}')" = \
  "None dratopo.io" ] || fail "the anchor taints with effect None and selects driver dratopo.io"

# ---- Drift: the rules applied ----------------------------------------------
agent gpu-b p5.48xlarge-degraded
expect 0 "$BIN" nodes $(remote) -o yaml
grep '^  name: dratopo-drift\.' "$TMP/out" | sed 's/^  name: //' | sort >"$TMP/want"
[ "$(wc -l <"$TMP/want")" = 5 ] || fail "5 rules for the degraded p5, got $(wc -l <"$TMP/want")"
pipe "apply, gpu-b in drift" "$BIN" nodes $(remote) -o yaml -- "$KUBECTL" apply -f -
[ "$(grep -c ' created$' "$TMP/out")" = 5 ] || fail "apply created 5 rules: $(cat "$TMP/out")"
rules_of gpu-b >"$TMP/got"
diff -u "$TMP/want" "$TMP/got" >"$TMP/diff" || fail "the cluster's rules for gpu-b: $(cat "$TMP/diff")"
[ "$(anchor_summary)" = "nodes in drift: 1, DeviceTaintRules: 5, Node taints: 0, nodes to lift: 0" ] ||
	fail "anchor summary with gpu-b in drift: $(anchor_summary)"
# The server keeps what dratopo wrote: the drivers' device names, NoSchedule.
"$KUBECTL" get devicetaintrules -l dratopo.io/node=gpu-b \
	-o jsonpath='{range .items[*]}{.spec.deviceSelector.driver} {.spec.deviceSelector.pool} {.spec.deviceSelector.device} {.spec.taint.effect}{"\n"}{end}' \
	>"$TMP/sel"
has "$TMP/sel" '^gpu\.nvidia\.com gpu-b gpu-[0-7] NoSchedule$' "a GPU rule as stored"
has "$TMP/sel" '^dra\.net gpu-b pci-0000-[0-9a-f]{2}-00-0 NoSchedule$' "an EFA rule as stored"
pipe "apply again" "$BIN" nodes $(remote) -o yaml -- "$KUBECTL" apply -f -
[ "$(grep -c ' unchanged$' "$TMP/out")" = 6 ] || fail "a second apply changes nothing: $(cat "$TMP/out")"

# ---- Recovery: apply still works, the lifts delete the rules ----------------
agent gpu-b p5.48xlarge
pipe "apply after the recovery" "$BIN" nodes $(remote) -o yaml -- "$KUBECTL" apply -f -
[ "$(rules_of gpu-b | wc -l)" = 5 ] || fail "apply alone never deletes a rule"
[ "$(anchor_summary)" = "nodes in drift: 0, DeviceTaintRules: 0, Node taints: 0, nodes to lift: 1" ] ||
	fail "anchor summary after the recovery: $(anchor_summary)"
pipe "lift" "$BIN" nodes $(remote) --lifts -- "$KUBECTL" delete --ignore-not-found -f -
[ "$(grep -c ' deleted' "$TMP/out")" = 5 ] || fail "the lift deleted 5 rules: $(cat "$TMP/out")"
[ -z "$(rules_of gpu-b)" ] || fail "rules left after the lift: $(rules_of gpu-b | tr '\n' ' ')"
"$KUBECTL" get devicetaintrule dratopo-drift -o name >/dev/null 2>&1 || fail "the lift deleted the anchor"
pipe "lift again" "$BIN" nodes $(remote) --lifts -- "$KUBECTL" delete --ignore-not-found -f -
grep -q ' deleted' "$TMP/out" && fail "a second lift deleted something: $(cat "$TMP/out")"

# ---- Devices running pods hold, from kubectl's own output --------------------
template() {   # template NAME GPUS: a ResourceClaimTemplate for that many GPUs
	cat <<EOF
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: $1, namespace: $NS}
spec:
  spec:
    devices:
      requests:
      - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com, count: $2}}
EOF
}
expect 0 "$KUBECTL" create namespace "$NS"
{ template two 2; cat <<EOF
---
apiVersion: v1
kind: Pod
metadata: {name: running, namespace: $NS}
spec:
  nodeName: gpu-a
  resourceClaims:
  - {name: gpus, resourceClaimTemplateName: two}
  containers:
  - name: c
    image: busybox
    resources: {claims: [{name: gpus}]}
EOF
} >"$TMP/running.yaml"
expect 0 "$KUBECTL" apply -f "$TMP/running.yaml"
claim=""
for _ in $(seq 100); do      # the resourceclaim controller makes the claim
	claim=$("$KUBECTL" -n "$NS" get pod running \
		-o jsonpath='{.status.resourceClaimStatuses[0].resourceClaimName}' 2>/dev/null)
	[ -n "$claim" ] && break
	sleep 0.1
done
[ -n "$claim" ] || { fail "the resourceclaim controller made no claim for the pod"; e2e_finish; }
uid=$("$KUBECTL" -n "$NS" get pod running -o jsonpath='{.metadata.uid}')
# Allocated on gpu-a's first two GPUs and reserved for the pod, as the
# scheduler writes it.
expect 0 "$KUBECTL" -n "$NS" patch resourceclaim "$claim" --subresource=status --type=merge -p \
	"{\"status\":{\"allocation\":{\"devices\":{\"results\":[
	 {\"request\":\"gpu\",\"driver\":\"gpu.nvidia.com\",\"pool\":\"gpu-a\",\"device\":\"gpu-0\"},
	 {\"request\":\"gpu\",\"driver\":\"gpu.nvidia.com\",\"pool\":\"gpu-a\",\"device\":\"gpu-1\"}]}},
	 \"reservedFor\":[{\"resource\":\"pods\",\"name\":\"running\",\"uid\":\"$uid\"}]}}"
expect 0 "$KUBECTL" -n "$NS" get pods,resourceclaims,resourceclaimtemplates -o yaml
cp "$TMP/out" "$TMP/cluster.yaml"
pinned() {   # pinned GPUS: a pending pod for gpu-a wanting that many GPUs
	cat <<EOF
apiVersion: v1
kind: Pod
metadata: {name: new, namespace: $NS}
spec:
  nodeSelector: {kubernetes.io/hostname: gpu-a}
  resourceClaims: [{name: gpus, resourceClaimTemplateName: want}]
  containers: [{name: c, image: busybox, resources: {claims: [{name: gpus}]}}]
---
EOF
	template want "$1"
}
pinned 7 >"$TMP/seven.yaml"
pinned 6 >"$TMP/six.yaml"
agent gpu-a p5.48xlarge              # fresh, so that it is plannable
expect 0 "$BIN" plan $(remote) -f "$TMP/seven.yaml" -o json &&
	jqis '[.existingNodes[].node]' '["gpu-a"]' "7 GPUs fit gpu-a when nothing runs"
expect 3 "$BIN" plan $(remote) -f "$TMP/cluster.yaml" -f "$TMP/seven.yaml" -o json &&
	jqis '.unschedulable | length' '1' "7 GPUs do not fit beside the running pod's 2"
expect 0 "$BIN" plan $(remote) -f "$TMP/cluster.yaml" -f "$TMP/six.yaml" -o json &&
	jqis '[.existingNodes[].claims[].results[].device]' \
	     '["gpu-2","gpu-3","gpu-4","gpu-5","gpu-6","gpu-7"]' \
	     "6 GPUs fit, none of the running pod's (counted once)"
grep -q . "$TMP/err" && fail "plan with the cluster's objects warned: $(head -3 "$TMP/err")"

stop_coord
no_sanitizer_report "$TMP/c1.log" "coordinator"

# ---- The controller on: the cluster's running pods and its Nodes --------
# With --kubeconfig, plan --coordinator counts what the controller's
# informers see running (no manifests of the cluster given), and the fleet
# forgets a node whose Node is deleted. (--dry-run: nothing else of the
# controller's is written meanwhile.)
printf 'apiVersion: v1\nkind: Node\nmetadata: {name: gpu-a, labels: {node.kubernetes.io/instance-type: p5.48xlarge}}\n' \
	>"$TMP/node.yaml"
expect 0 "$KUBECTL" apply -f "$TMP/node.yaml"
start_coord "$TMP/c2.log" --db memory: --insecure --kubeconfig "$KUBECONFIG" --dry-run
wait_log "$TMP/c2.log" 'event=kube_plan ' 60
agent gpu-a p5.48xlarge
expect 3 "$BIN" plan $(remote) -f "$TMP/seven.yaml" -o json &&
	jqis '.unschedulable | length' '1' "from the cluster: 7 GPUs do not fit beside the running pod's 2"
expect 0 "$BIN" plan $(remote) -f "$TMP/six.yaml" -o json &&
	jqis '[.existingNodes[].claims[].results[].device]' \
	     '["gpu-2","gpu-3","gpu-4","gpu-5","gpu-6","gpu-7"]' \
	     "from the cluster: 6 GPUs fit, none of the running pod's"
expect 0 "$BIN" nodes $(remote) -o json
jqis '[.nodes[].name] | index("gpu-a") != null' true "gpu-a in the fleet"
expect 0 "$KUBECTL" delete node gpu-a
wait_log "$TMP/c2.log" 'event=node_forgotten node=gpu-a' 30
expect 0 "$BIN" nodes $(remote) -o json
jqis '[.nodes[].name] | index("gpu-a")' null "a deleted Node's node forgotten"
stop_coord
no_sanitizer_report "$TMP/c2.log" "coordinator"
e2e_finish
