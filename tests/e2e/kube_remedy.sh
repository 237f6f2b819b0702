#!/usr/bin/env bash
# kube_remedy.sh BUILD_DIR - a drift an agent reports becomes
# DeviceTaintRules the real API server accepts and a taint on the Node, and
# both go away once the node matches again: dratopo-coordinator with
# --kubeconfig ($DT_KUBE_DIR's control plane) and dratopo-agent reporting
# the fake sysfs trees of the agent_sysfs fixture over loopback.
NAME=kube_remedy
DRIVES="$1/bin/dratopo-coordinator"
. "$(dirname "$0")/lib.sh"
COORD="$1/bin/dratopo-coordinator"
FX="$1/fixtures/agent"
. "$(dirname "$0")/kube_lib.sh"
NODE=dt-drift-$$
PID=
trap '[ -n "$PID" ] && kill "$PID" 2>/dev/null; wait 2>/dev/null
	drop_written_claims "$TMP/coord.log"
	"$K" get devicetaintrules -o name 2>/dev/null | grep "/dratopo-drift\.$NODE\." |
		xargs -r "$K" delete >/dev/null 2>&1
	"$K" delete node "$NODE" --wait=false >/dev/null 2>&1; rm -rf "$TMP"' EXIT

agent() {   # agent FIXTURE: one report for the node
	expect 0 "$AGENT" run --once --coordinator "127.0.0.1:$PORT" --node-name "$NODE" \
		--sysfs-root "$FX/$1" --insecure
}

rules() { "$K" get devicetaintrules -o json | jq -e "[.items[] | select(.metadata.name | startswith(\"dratopo-drift.$NODE.\"))] | length $1"; }

# The Node as the cluster has it, with a taint of someone else's to keep.
expect 0 "$K" apply -f - <<EOF
apiVersion: v1
kind: Node
metadata: {name: $NODE, labels: {node.kubernetes.io/instance-type: p5.48xlarge}}
spec:
  taints: [{key: example.com/other, value: keep, effect: NoSchedule}]
EOF

"$COORD" --insecure --listen 127.0.0.1:0 --db "$TMP/coord.db" --kubeconfig "$KUBECONFIG" \
	>"$TMP/coord.log" 2>&1 &
PID=$!
for _ in $(seq 1 100); do grep -q 'event=start ' "$TMP/coord.log" && break; sleep 0.1; done
PORT=$(grep -o 'grpc_port=[0-9]*' "$TMP/coord.log" | head -1 | cut -d= -f2)
[ -n "$PORT" ] || { fail "coordinator did not start: $(cat "$TMP/coord.log")"; e2e_finish; }

# Drift: a GPU and EFAs missing; the node keeps most of its devices, so
# its devices are tainted and the node is not (it is not unfit).
agent p5.48xlarge-degraded && jqis .verdict '"drift"' "degraded node in drift"
until_true 40 "DeviceTaintRules applied" rules '> 0'
expect 0 "$K" get devicetaintrules -o json
jqis "[.items[] | select(.metadata.name | startswith(\"dratopo-drift.$NODE.\")) | .metadata.labels[\"app.kubernetes.io/managed-by\"]] | unique" '["dratopo"]' "rules labelled as dratopo's"
jqis "[.items[] | select(.metadata.name | startswith(\"dratopo-drift.$NODE.\")) | .spec.taint.key] | unique" '["dratopo.io/drift"]' "the rules' taint"
expect 0 "$K" get node "$NODE" -o json
jqis '[.spec.taints[].key | select(startswith("node.kubernetes.io/") | not)] | sort' \
	'["example.com/other"]' "no node taint for a partial drift; the other taint kept"

# Repaired: the node matches again and the remedies are taken back.
agent p5.48xlarge && jqis .verdict '"match"' "repaired node matches"
until_true 40 "DeviceTaintRules lifted" rules '== 0'
expect 0 "$K" get node "$NODE" -o json
jqis '[.spec.taints[].key | select(startswith("node.kubernetes.io/") | not)]' \
	'["example.com/other"]' "the other taint still there"
has "$TMP/coord.log" 'event=device_taint_lifted ' "lift logged"
kill -TERM "$PID"; wait "$PID"; PID=
no_sanitizer_report "$TMP/coord.log" coordinator
e2e_finish
