#!/usr/bin/env bash
# coordinator.sh BUILD_DIR - dratopo-coordinator with agents over loopback
# mTLS, end to end:
#   - verdicts: match (healthy p5), drift with verify's differences (the
#     degraded p5), unknown then learned (two nodes of a type hwdb lacks), a
#     conflict (a third node of that type with another shape);
#   - the exact output of `dratopo nodes` (table, json) and `dratopo types`,
#     hwdb show --coordinator for the learned type, plan --coordinator
#     placing pods on live nodes and leaving the drifted one out, the
#     learned type rejected for new nodes without a price and launched
#     with one sent in the request (--hwdb-extra, that plan only);
#   - /metrics, /readyz; refusals with the right gRPC status while everyone
#     else is served: a certificate from another CA, a node reporting for
#     another name, garbage, an oversized message, no deadline, a client that
#     never sends;
#   - SIGKILL in the middle of a stream of acknowledged reports: after a
#     restart on the same database every acknowledged report is there;
#   - SIGTERM exits 0; a corrupt database is refused and left untouched;
#   - an EFA type hwdb knows without its grouping (c6in.32xlarge): its first
#     node matches hwdb, the second completes the quorum and the grouping is
#     learned; hwdb show --coordinator gives hwdb's price with the learned
#     roots, and a plan puts a pod that wants the EFA on one root onto a new
#     c6in.32xlarge at hwdb's price, where a plan without the fleet cannot.
NAME=coordinator; . "$(dirname "$0")/lib.sh"
COORD="$1/bin/dratopo-coordinator"
CLIENT="$1/tests/coord_client"
FX="$1/fixtures/agent"
GOLD="$ROOT/tests/fixtures/coordinator"
CERTS="$TMP/tls"
export GRPC_VERBOSITY=NONE

[ -d "$FX/p5.48xlarge/sys" ] || bash "$ROOT/tests/fixtures/agent/mksysfs.sh" "$FX" >/dev/null
sh "$ROOT/tests/tls/mkcerts.sh" "$CERTS" gpu-a gpu-b new-1 new-2 new-3 admin >/dev/null ||
	{ echo "mkcerts failed" >&2; exit 1; }
TLS_ADMIN=(--tls-cert "$CERTS/client-admin.pem" --tls-key "$CERTS/client-admin.key"
	   --tls-ca "$CERTS/ca.pem")

mtls() { echo --tls-cert "$CERTS/client-$1.pem" --tls-key "$CERTS/client-$1.key" --tls-ca "$CERTS/ca.pem"; }
# agent NODE FIXTURE [ARGS...]: one report with NODE's certificate.
agent() {
	local node=$1 fx=$2; shift 2
	expect 0 "$AGENT" run --once --coordinator "127.0.0.1:$PORT" --node-name "$node" \
		--sysfs-root "$FX/$fx" $(mtls "$node") "$@"
}
# mask the report times, which differ on every run
mask_times() { sed -E 's/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z/TIME/g' "$1"; }
same_as() {   # same_as FILE GOLDEN WHAT (DRATOPO_GOLDEN=write: record it)
	[ "${DRATOPO_GOLDEN:-}" = write ] && mask_times "$1" >"$GOLD/$2"
	if ! diff -u "$GOLD/$2" <(mask_times "$1") >"$TMP/diff"; then
		fail "$3 differs from tests/fixtures/coordinator/$2:"; head -40 "$TMP/diff" >&2
	fi
}

# ---- verdicts ----
start_coord "$TMP/coord.log" --db "$TMP/fleet.db" --tls-cert "$CERTS/server.pem" \
	--tls-key "$CERTS/server.key" --tls-ca "$CERTS/ca.pem" --call-timeout 3s
agent gpu-a p5.48xlarge && jqis .verdict '"match"' "healthy p5"
expect 4 "$AGENT" verify --sysfs-root "$FX/p5.48xlarge-degraded" -o json
jq -c .differences "$TMP/out" >"$TMP/verify-diffs"
agent gpu-b p5.48xlarge-degraded && jqis .verdict '"drift"' "degraded p5" &&
	jqis .differences "$(cat "$TMP/verify-diffs")" "drift lines as verify words them"
agent new-1 unknown && jqis .verdict '"unknown"' "first node of a new type"
agent new-2 unknown && jqis .verdict '"learned"' "second node of the same shape"
agent new-3 p5en.48xlarge --instance-type p7.48xlarge && jqis .conflict true "third node, other shape" &&
	jqis .verdict '"drift"' "third node against the learned entry"
has "$TMP/coord.log" 'event=learned type=p7.48xlarge' "learned event"
has "$TMP/coord.log" 'event=conflict type=p7.48xlarge' "conflict event"

# ---- the fleet as the CLI shows it ----
expect 0 "$BIN" nodes --coordinator "127.0.0.1:$PORT" "${TLS_ADMIN[@]}" && same_as "$TMP/out" nodes.txt "nodes table"
expect 0 "$BIN" nodes --coordinator "127.0.0.1:$PORT" "${TLS_ADMIN[@]}" -o json && same_as "$TMP/out" nodes.json "nodes json"
jqis '[.nodes[] | select(.name == "new-1") | .verdict]' '["learned"]' "the first node became learned"
expect 0 "$BIN" types --coordinator "127.0.0.1:$PORT" "${TLS_ADMIN[@]}" && same_as "$TMP/out" types.txt "types table"
expect 0 "$BIN" nodes --coordinator "127.0.0.1:$PORT" "${TLS_ADMIN[@]}" --verdict drift -o json &&
	jqis '[.nodes[].name]' '["gpu-b","new-3"]' "nodes --verdict drift"
expect 0 "$BIN" hwdb show p7.48xlarge --coordinator "127.0.0.1:$PORT" "${TLS_ADMIN[@]}" -o json &&
	jqis '[.resourceSlices[].spec.devices | length]' '[8,8]' "learned p7.48xlarge: 8 GPUs, 8 EFAs" &&
	jqis '.instanceType.name' '"p7.48xlarge"' "learned entry's name" &&
	jqis '.instanceType.source' '"learned"' "learned entry's source"
expect 0 "$BIN" hwdb show p7.48xlarge --coordinator "127.0.0.1:$PORT" "${TLS_ADMIN[@]}" &&
	has "$TMP/out" '^# .*learned by the coordinator from its nodes' "learned entry's yaml says so"
expect 0 "$BIN" hwdb show p5.48xlarge --coordinator "127.0.0.1:$PORT" "${TLS_ADMIN[@]}" -o json &&
	jqis '.instanceType.source' '"coordinator"' "hwdb entry's source, as the coordinator has it"
expect 1 "$BIN" hwdb show p9.nope --coordinator "127.0.0.1:$PORT" "${TLS_ADMIN[@]}" &&
	has "$TMP/err" 'NOT_FOUND' "unknown type"
expect 1 "$BIN" nodes --coordinator "127.0.0.1:$PORT" --insecure &&
	has "$TMP/err" 'the coordinator speaks TLS: drop --insecure' "plaintext client against mTLS"
expect 2 "$BIN" nodes --coordinator "127.0.0.1:$PORT" --tls-cert "$CERTS/client-admin.pem"

# ---- planning against the live fleet ----
expect 0 "$BIN" plan --coordinator "127.0.0.1:$PORT" "${TLS_ADMIN[@]}" -o json \
	-f "$GOLD/one-gpu-pods.yaml"
jqis '[.existingNodes[] | {node, pods: (.pods | length)}]' \
	'[{"node":"gpu-a","pods":8},{"node":"new-1","pods":8},{"node":"new-2","pods":8}]' \
	"24 pods on the plannable nodes"
jqis '[.existingNodes[].node | select(. == "gpu-b" or . == "new-3")]' '[]' "drift and conflict left out"
jqis '[.nodeClaims[].pods | length] | add' '1' "the 25th pod needs a new node"
# the learned type for a new node: no price, the reason says so; a price
# sent with the plan (the exported entry, priced) launches it, for that
# plan only
expect 3 "$BIN" plan --coordinator "127.0.0.1:$PORT" "${TLS_ADMIN[@]}" -f "$GOLD/p7-pool.yaml" &&
	same_as "$TMP/out" plan-learned.txt "plan of a learned type without a price"
expect 3 "$BIN" plan --coordinator "127.0.0.1:$PORT" "${TLS_ADMIN[@]}" -o json -f "$GOLD/p7-pool.yaml" &&
	jqis '[.unschedulable[].details[] | select(.instanceType == "p7.48xlarge") | .reason]' \
		'["learned type, no price: give one with --hwdb-extra or a NodeOverlay"]' \
		"learned type without a price"
expect 0 "$BIN" hwdb export p7.48xlarge --coordinator "127.0.0.1:$PORT" "${TLS_ADMIN[@]}" &&
	sed 's/^\(  *\)onDemandPricePerHour: null$/\1onDemandPricePerHour: 98.5/' "$TMP/out" >"$TMP/p7-priced.yaml"
has "$TMP/p7-priced.yaml" 'onDemandPricePerHour: 98.5' "the exported learned entry, priced"
expect 0 "$BIN" plan --coordinator "127.0.0.1:$PORT" "${TLS_ADMIN[@]}" -o json -f "$GOLD/p7-pool.yaml" \
	--hwdb-extra "$TMP/p7-priced.yaml" &&
	jqis '[.nodeClaims[] | {instanceType, pricePerHour, pods}]' \
		'[{"instanceType":"p7.48xlarge","pricePerHour":98.5,"pods":["default/trainer"]}]' \
		"the priced learned type launched"
expect 3 "$BIN" plan --coordinator "127.0.0.1:$PORT" "${TLS_ADMIN[@]}" -o json -f "$GOLD/p7-pool.yaml" &&
	jqis '.nodeClaims | length' '0' "the price was that plan's only"
# or a NodeOverlay in the manifests prices it
cat >"$TMP/p7-overlay.yaml" <<'YAML'
apiVersion: karpenter.sh/v1alpha1
kind: NodeOverlay
metadata: {name: p7-price}
spec:
  requirements: [{key: node.kubernetes.io/instance-type, operator: In, values: [p7.48xlarge]}]
  price: "77.5"
YAML
expect 0 "$BIN" plan --coordinator "127.0.0.1:$PORT" "${TLS_ADMIN[@]}" -o json -f "$GOLD/p7-pool.yaml" \
	"$TMP/p7-overlay.yaml" &&
	jqis '[.nodeClaims[] | {instanceType, pricePerHour}]' \
		'[{"instanceType":"p7.48xlarge","pricePerHour":77.5}]' "the learned type priced by a NodeOverlay"
printf 'instanceTypes:\n- {name: zz.xlarge}\n' >"$TMP/bad-extra.yaml"
expect 1 "$BIN" plan --coordinator "127.0.0.1:$PORT" "${TLS_ADMIN[@]}" -f "$GOLD/p7-pool.yaml" \
	--hwdb-extra "$TMP/bad-extra.yaml" &&
	has "$TMP/err" 'dratopo plan: --hwdb-extra: .*bad-extra.yaml' "plan --coordinator: a bad extra named"
printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: Bad_Name}\nspec: {containers: [{name: c, image: x}]}\n' >"$TMP/bad.yaml"
expect 1 "$BIN" plan --coordinator "127.0.0.1:$PORT" "${TLS_ADMIN[@]}" -f "$TMP/bad.yaml" &&
	has "$TMP/err" 'bad.yaml: document 1 \(Pod default/Bad_Name\): metadata.name' "plan --coordinator: the validator's messages"

# ---- remedies: device taints for the drifted node, planning kept off them ----
expect 0 "$BIN" nodes --coordinator "127.0.0.1:$PORT" "${TLS_ADMIN[@]}" -o yaml
cp "$TMP/out" "$TMP/remedies.yaml"
[ "$(grep -c '^  name: dratopo-drift\.gpu-b\.' "$TMP/remedies.yaml")" = 5 ] ||
	fail "5 DeviceTaintRules for gpu-b: $(grep 'name: dratopo-drift' "$TMP/remedies.yaml")"
has "$TMP/remedies.yaml" '^  name: dratopo-drift\.gpu-b\.pci-0000-[0-9a-f]{2}-00-0$' "the EFAs left without their GPU (DRANET's names)"
has "$TMP/remedies.yaml" 'value: efa-missing' "the GPU left short of EFAs"
has "$TMP/remedies.yaml" '^  name: dratopo-drift\.new-3\.' "the node in drift against the learned entry"
grep -q 'dratopo-drift\.gpu-a\.' "$TMP/remedies.yaml" && fail "no rules for the healthy node"
expect 0 "$BIN" validate -f "$TMP/remedies.yaml"
# the node's slices, a 7-GPU pod for it, and no NodePool able to launch:
# it fits gpu-b without the rules, and not with them
expect 0 "$AGENT" slices --sysfs-root "$FX/p5.48xlarge-degraded" --node-name gpu-b -o yaml
cp "$TMP/out" "$TMP/gpu-b-slices.yaml"
cat >"$TMP/seven.yaml" <<'YAML'
apiVersion: v1
kind: Node
metadata:
  name: gpu-b
  labels: {kubernetes.io/hostname: gpu-b, node.kubernetes.io/instance-type: p5.48xlarge, kubernetes.io/arch: amd64}
status:
  allocatable: {cpu: '190', memory: 2000Gi, pods: '110'}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: gpus}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {deviceClassName: gpu.nvidia.com, count: 7}
---
apiVersion: v1
kind: Pod
metadata: {name: trainer}
spec:
  nodeSelector: {kubernetes.io/hostname: gpu-b}
  resourceClaims: [{name: gpus, resourceClaimName: gpus}]
  containers:
  - name: c
    image: busybox
    resources: {claims: [{name: gpus}]}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: full}
spec:
  limits: {cpu: '1'}
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
YAML
expect 0 "$BIN" plan -f "$TMP/seven.yaml" -f "$TMP/gpu-b-slices.yaml" -o json &&
	jqis '[.existingNodes[] | {node, pods: (.pods | length)}]' '[{"node":"gpu-b","pods":1}]' \
		"7 GPUs fit gpu-b without the rules"
expect 3 "$BIN" plan -f "$TMP/seven.yaml" -f "$TMP/gpu-b-slices.yaml" -f "$TMP/remedies.yaml" -o json &&
	jqis '[.existingNodes[]?.pods[]?] | length' '0' "with the rules the pod stays off gpu-b"
has "$TMP/out" 'dratopo.io/drift' "the taint named as the reason"

# ---- operations ----
expect 0 curl -sf "http://127.0.0.1:$HTTP/metrics"
has "$TMP/out" '^dratopo_reports_total\{verdict="match"\} 1$' "metrics: match reports"
has "$TMP/out" '^dratopo_reports_total\{verdict="drift"\} 2$' "metrics: drift reports"
has "$TMP/out" '^dratopo_nodes\{instance_type="p7.48xlarge",verdict="learned"\} 2$' "metrics: nodes"
has "$TMP/out" '^dratopo_learned_types 1$' "metrics: learned types"
has "$TMP/out" '^dratopo_conflicts 1$' "metrics: conflicts"
has "$TMP/out" '^dratopo_remedy_device_taint_rules [1-9][0-9]*$' "metrics: device taint rules"
has "$TMP/out" '^dratopo_remedy_node_taints [0-9]+$' "metrics: node taints"
has "$TMP/out" '^dratopo_rpc_duration_seconds_count\{method="Report"\} 5$' "metrics: latency"
expect 0 curl -sf "http://127.0.0.1:$HTTP/readyz"

# ---- refusals; the coordinator keeps serving ----
expect 1 "$AGENT" run --once --coordinator "127.0.0.1:$PORT" --node-name gpu-a \
	--sysfs-root "$FX/p5.48xlarge" --tls-cert "$CERTS/other-client.pem" \
	--tls-key "$CERTS/other-client.key" --tls-ca "$CERTS/ca.pem" &&
	has "$TMP/err" 'status=UNAVAILABLE' "certificate from another CA"
expect 1 "$AGENT" run --once --coordinator "127.0.0.1:$PORT" --node-name gpu-b \
	--sysfs-root "$FX/p5.48xlarge" $(mtls gpu-a) &&
	has "$TMP/err" 'status=PERMISSION_DENIED' "reporting for another node"
has "$TMP/coord.log" 'event=auth_refused method=Report .*cn=gpu-a node=gpu-b' "auth refusal logged"
for m in garbage:INVALID_ARGUMENT oversized:RESOURCE_EXHAUSTED nodeadline:INVALID_ARGUMENT; do
	expect 0 "$CLIENT" "${m%%:*}" "127.0.0.1:$PORT" $(mtls gpu-a | sed 's/--tls-[a-z]* //g') &&
		has "$TMP/out" "^status=${m#*:}\$" "${m%%:*} refused"
done
expect 0 "$CLIENT" silent "127.0.0.1:$PORT" $(mtls admin | sed 's/--tls-[a-z]* //g') &&
	has "$TMP/out" '^others=OK$' "served while a client hangs" &&
	has "$TMP/out" '^status=DEADLINE_EXCEEDED$' "silent client cut at --call-timeout"
agent gpu-a p5.48xlarge && jqis .verdict '"match"' "still serving after the refusals"

# ---- the drifted node repaired: the lift ----
agent gpu-b p5.48xlarge && jqis .verdict '"match"' "gpu-b repaired"
expect 0 "$BIN" nodes --coordinator "127.0.0.1:$PORT" "${TLS_ADMIN[@]}" -o yaml
has "$TMP/out" '^# node gpu-b matches again: its remedies are lifted by dratopo nodes --lifts' "-o yaml points to the lift"
grep -q '^  name: dratopo-drift\.gpu-b\.' "$TMP/out" && fail "no rules left for gpu-b"
expect 0 "$BIN" nodes --coordinator "127.0.0.1:$PORT" "${TLS_ADMIN[@]}" --lifts
has "$TMP/out" '^  name: dratopo-drift\.gpu-b\.gpu-0$' "the lift of gpu-b's rules, as objects"
has "$TMP/out" '^# and its Node taint: kubectl taint nodes gpu-b dratopo.io/drift:NoSchedule-$' "the lift of its node taint"
agent gpu-b p5.48xlarge-degraded && jqis .verdict '"drift"' "gpu-b degraded again (the state the restart checks)"

# ---- SIGTERM, restart: the state is back ----
stop_coord TERM
[ "$STOP_RC" = 0 ] || fail "SIGTERM: exit $STOP_RC"
has "$TMP/coord.log" 'event=stopped' "stopped cleanly"
start_coord "$TMP/coord2.log" --db "$TMP/fleet.db" --tls-cert "$CERTS/server.pem" \
	--tls-key "$CERTS/server.key" --tls-ca "$CERTS/ca.pem"
has "$TMP/coord2.log" 'event=start .*nodes=5 types=2' "restart restores the fleet"
expect 0 "$BIN" nodes --coordinator "127.0.0.1:$PORT" "${TLS_ADMIN[@]}" -o json && same_as "$TMP/out" nodes.json "nodes after restart"
# Repaired, then a restart: its last report matches, and only its record
# remembers the drift whose remedies are still to be lifted.
agent gpu-b p5.48xlarge && jqis .verdict '"match"' "gpu-b repaired after the restart"
stop_coord TERM
start_coord "$TMP/coord3.log" --db "$TMP/fleet.db" --tls-cert "$CERTS/server.pem" \
	--tls-key "$CERTS/server.key" --tls-ca "$CERTS/ca.pem"
expect 0 "$BIN" nodes --coordinator "127.0.0.1:$PORT" "${TLS_ADMIN[@]}" --lifts
has "$TMP/out" '^# and its Node taint: kubectl taint nodes gpu-b dratopo.io/drift:NoSchedule-$' "the lift of a node repaired before a restart"
stop_coord TERM

# ---- SIGKILL in the middle of a stream of acknowledged reports ----
start_coord "$TMP/kill.log" --db "$TMP/kill.db" --insecure
"$CLIENT" stream "127.0.0.1:$PORT" --insecure 100000 "$FX/p5.48xlarge" >"$TMP/acked" 2>/dev/null &
STREAM=$!
for _ in $(seq 300); do [ "$(wc -l <"$TMP/acked")" -ge 200 ] && break; sleep 0.05; done
stop_coord KILL
wait "$STREAM"
acked=$(wc -l <"$TMP/acked")
[ "$acked" -ge 200 ] || fail "the stream acknowledged only $acked reports before the kill"
start_coord "$TMP/kill2.log" --db "$TMP/kill.db" --insecure
expect 0 "$BIN" nodes --coordinator "127.0.0.1:$PORT" --insecure -o json
jq -r '.nodes[].name' "$TMP/out" | sort >"$TMP/stored"
missing=$(comm -23 <(sort "$TMP/acked") "$TMP/stored" | wc -l)
[ "$missing" = 0 ] || fail "SIGKILL: $missing of $acked acknowledged reports missing after the restart"
echo "SIGKILL: $acked acknowledged, $(wc -l <"$TMP/stored") stored, $missing missing"
stop_coord TERM

# ---- an EFA type hwdb knows without its grouping: learned, then planned ----
bash "$ROOT/tests/fixtures/agent/mksysfs.sh" "$TMP/fx" c6in.32xlarge >/dev/null || fail "mksysfs.sh c6in.32xlarge"
start_coord "$TMP/hpc.log" --db "$TMP/hpc.db" --insecure
hpc() {   # hpc NODE: one report of a c6in.32xlarge, plaintext
	expect 0 "$AGENT" run --once --coordinator "127.0.0.1:$PORT" --node-name "$1" \
		--sysfs-root "$TMP/fx/c6in.32xlarge" --insecure
}
expect 0 "$BIN" hwdb show c6in.32xlarge -o json &&
	jqis '[.resourceSlices[].spec.devices[].attributes["resource.kubernetes.io/pcieRoot"]]' '[null,null]' \
		"hwdb alone: c6in.32xlarge's EFA roots unknown"
hpc hpc-1 && jqis .verdict '"match"' "first c6in.32xlarge: hwdb's entry, which has no grouping"
hpc hpc-2 && jqis .verdict '"learned"' "second c6in.32xlarge: the grouping learned"
has "$TMP/hpc.log" 'event=learned type=c6in.32xlarge shape="v1 2\*\(efa1x1d0f:efa1\)"' "learned event"
expect 0 "$BIN" hwdb show c6in.32xlarge --coordinator "127.0.0.1:$PORT" --insecure -o json &&
	jqis '.instanceType.source' '"learned"' "the coordinator's entry: learned" &&
	jqis '[.instanceType.onDemandPricePerHour, .instanceType.vcpu]' '[7.2576,128]' "hwdb's price and size kept" &&
	jqis '[.resourceSlices[].spec.devices[].attributes["resource.kubernetes.io/pcieRoot"].string]' \
		'["pci0000:00","pci0000:80"]' "the learned roots"
expect 3 "$BIN" plan -f "$GOLD/efa-root-pods.yaml" -o json &&
	jqis '.nodeClaims | length' '0' "without the fleet no type holds an EFA on pci0000:80"
expect 0 "$BIN" plan --coordinator "127.0.0.1:$PORT" --insecure -f "$GOLD/efa-root-pods.yaml" -o json &&
	jqis '[.existingNodes[] | {node, pods: (.pods | length)}]' \
		'[{"node":"hpc-1","pods":1},{"node":"hpc-2","pods":1}]' "one such pod on each live node" &&
	jqis '[.nodeClaims[] | {instanceType, pricePerHour, pods: (.pods | length)}]' \
		'[{"instanceType":"c6in.32xlarge","pricePerHour":7.2576,"pods":1}]' \
		"the third on a new c6in.32xlarge, planned with the learned grouping at hwdb's price"
stop_coord TERM

# ---- a corrupt database is refused, never rewritten ----
head -c 8192 /dev/urandom >"$TMP/corrupt.db"
cp "$TMP/corrupt.db" "$TMP/corrupt.orig"
expect 1 "$COORD" --listen 127.0.0.1:0 --db "$TMP/corrupt.db" --insecure &&
	has "$TMP/err" 'corrupt.db' "the error names the database"
cmp -s "$TMP/corrupt.db" "$TMP/corrupt.orig" || fail "the corrupt database was modified"
expect 2 "$COORD" --listen 127.0.0.1:0 --db "$TMP/x.db"
has "$TMP/err" 'insecure' "no TLS and no --insecure is a usage error"
# leader election: only in a cluster, with the fleet there (no --db), on
# timings client-go accepts; --leader-elect=false turns it off
expect 2 env -u KUBERNETES_SERVICE_HOST "$COORD" --insecure --leader-elect &&
	has "$TMP/err" '^dratopo-coordinator: --leader-elect needs a cluster' "election without a cluster"
printf 'apiVersion: v1\nkind: Config\n' >"$TMP/kubeconfig"
expect 2 "$COORD" --insecure --kubeconfig "$TMP/kubeconfig" --leader-elect --db "$TMP/x.db" &&
	has "$TMP/err" '^dratopo-coordinator: --db: with --leader-elect the fleet lives in the cluster' \
	"election with a database file"
expect 2 "$COORD" --insecure --kubeconfig "$TMP/kubeconfig" --leader-elect \
	--leader-elect-renew-deadline 20s &&
	has "$TMP/err" 'the lease duration \(15000ms\) must be greater than the renew deadline \(20000ms\)' \
	"client-go's timing rule"
expect 2 "$COORD" --insecure --leader-elect=maybe &&
	has "$TMP/err" "^dratopo-coordinator: --leader-elect: 'maybe' is neither true nor false" \
	"a boolean that is neither"
e2e_finish "$acked reports acknowledged before SIGKILL, none lost"
