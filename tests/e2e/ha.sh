#!/usr/bin/env bash
# ha.sh BUILD_DIR - three dratopo-coordinators with --leader-elect against the
# real API server of the kube fixture ($DT_KUBE_DIR), on client-go's default
# timings (lease 15 s, renew deadline 10 s, retry 2 s), while ha_agents
# streams reports (changing ones: nodes drift and recover, a type hwdb lacks
# is learned) to whichever coordinator takes them:
#   - never two leaders at once (every coordinator's dratopo_leader sampled
#     every 100 ms throughout), and the leader's pod alone carries the
#     leader label the Service selects;
#   - the leader killed with SIGKILL mid-stream: another leads within lease
#     duration + retry period; every acknowledged report is in the
#     NodeTopology objects; the learned type survives unchanged;
#   - the leader stopped with SIGSTOP past its lease, then continued: it
#     writes nothing after another took the Lease (the API server's audit
#     log of writes, by user agent), and serves as a follower;
#   - SIGTERM: the Lease is handed over at once;
#   - a node forgotten on the leader loses its NodeTopology at once; a
#     follower refuses to forget;
#   - pending pods (the seed's) get their NodeClaims from the first leader,
#     and no takeover creates one again: the same objects (names and uids)
#     at the end, no pod named by two of them, each new leader having
#     planned at once with none written;
#   - deploy/'s Deployment, PDB, CRDs and RBAC pass the API server's own
#     validation (kubectl apply --dry-run=server), and a wrong field fails.
NAME=ha; DRIVES="$1/bin/dratopo-coordinator"; . "$(dirname "$0")/lib.sh"
: "${DT_KUBE_DIR:?DT_KUBE_DIR is not set (the kube fixture)}"
export KUBECONFIG="$DT_KUBE_DIR/kubeconfig"
K="$DT_KUBE_DIR/bin/kubectl"
COORD="$1/bin/dratopo-coordinator"
AGENTS="$1/tests/ha_agents"
AUDIT="$DT_KUBE_DIR/log/audit.log"
NS="ha-$$"
LEASE_S=15 RETRY_S=2
declare -a PID PORT HTTP ID LINES
CLAIMS=

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
within() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a <= b) }'; }

cleanup() {
	local p f
	# a coordinator that died of a sanitizer's report: show it
	for f in "$TMP"/c[0-9].log; do
		[ -f "$f" ] && grep -Eq 'runtime error:|AddressSanitizer|LeakSanitizer' "$f" &&
			{ echo "--- $(basename "$f"):" >&2; grep -Ev '^ts=' "$f" | head -40 >&2; }
	done
	for p in "${PID[@]}" ${SAMPLER:-} ${STREAM:-}; do
		kill -CONT "$p" 2>/dev/null; kill -KILL "$p" 2>/dev/null
	done
	claims | while read -r n _; do "$K" delete nodeclaim "$n" --wait=false >/dev/null 2>&1; done
	"$K" delete ns "$NS" --wait=false >/dev/null 2>&1
	"$K" delete nodetopologies -l app.kubernetes.io/managed-by=dratopo-coordinator >/dev/null 2>&1
	"$K" delete learnedtypes --all >/dev/null 2>&1
	rm -rf "$TMP"
}
trap cleanup EXIT

# A clean slate: objects another test's coordinator left are not ours, and
# a NodeClaim another test left going (Karpenter's finalizer, no Karpenter
# running) would be capacity in flight that the seed's pods fit into.
"$K" delete nodetopologies --all >/dev/null 2>&1
"$K" delete learnedtypes --all >/dev/null 2>&1
for n in $("$K" get nodeclaims -o name 2>/dev/null); do
	"$K" patch "$n" --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1
	"$K" delete "$n" --wait=false >/dev/null 2>&1
done
for n in $(seq 1 100); do
	[ -z "$("$K" get nodeclaims -o name 2>/dev/null)" ] && break
	sleep 0.1
done
expect 0 "$K" create namespace "$NS"
for i in $(seq 1 50); do
	"$K" -n "$NS" get serviceaccount default >/dev/null 2>&1 && break
	sleep 0.2
done

# The coordinators' pods as the API server knows them (no kubelet runs
# them: the processes below play them), so that the leader label is real.
for i in 1 2 3; do
	printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: coord-%s, labels: {app.kubernetes.io/name: dratopo-coordinator}}\nspec: {containers: [{name: c, image: dratopo:0.1.0}]}\n' "$i" |
		"$K" -n "$NS" apply -f - >/dev/null || fail "pod coord-$i"
done

start() {   # start I: coordinator I, its ports and identity from its start lines
	local i=$1 log="$TMP/c$1.log" n
	POD_NAME="coord-$i" POD_NAMESPACE="$NS" "$COORD" --insecure --listen 127.0.0.1:0 \
		--http 127.0.0.1:0 --kubeconfig "$KUBECONFIG" --leader-elect \
		--leader-elect-resource-namespace "$NS" >"$log" 2>&1 &
	PID[$i]=$!
	for n in $(seq 1 100); do
		grep -q 'event=start ' "$log" && break
		sleep 0.1
	done
	PORT[$i]=$(grep -o 'grpc_port=[0-9]*' "$log" | head -1 | cut -d= -f2)
	HTTP[$i]=$(grep -o 'http_port=[0-9]*' "$log" | head -1 | cut -d= -f2)
	ID[$i]=$(grep -o 'identity=[^ ]*' "$log" | head -1 | cut -d= -f2)
	[ -n "${PORT[$i]}" ] && [ -n "${ID[$i]}" ] || { fail "coordinator $i did not start"; cat "$log" >&2; }
}
holder() { "$K" -n "$NS" get lease dratopo-coordinator -o jsonpath='{.spec.holderIdentity}' 2>/dev/null; }
index_of() { local i; for i in 1 2 3; do [ "${ID[$i]}" = "$1" ] && echo "$i"; done; }
# wait_holder OLD LIMIT_S: until someone other than OLD holds the Lease; prints the index
wait_holder() {
	local t0 h; t0=$(now)
	while within "$(secs "$t0" "$(now)")" "$2"; do
		h=$(holder)
		if [ -n "$h" ] && [ "$h" != "$1" ]; then index_of "$h"; return 0; fi
		sleep 0.05
	done
	return 1
}
acks() { local n; n=$(grep -c '^ack ' "$TMP/acks.log" 2>/dev/null); echo "${n:-0}"; }
wait_acks() {   # wait_acks N: N more acknowledged reports
	local want=$(( $(acks) + $1 )) n
	for n in $(seq 1 600); do [ "$(acks)" -ge "$want" ] && return 0; sleep 0.1; done
	fail "no $1 more acknowledged reports"
}
leader_label() { "$K" -n "$NS" get pods -l dratopo.io/role=leader -o jsonpath='{.items[*].metadata.name}'; }
# The NodeClaims for this test's pods: "name uid" lines, sorted.
claims() {
	"$K" get nodeclaims -l app.kubernetes.io/managed-by=dratopo -o json 2>/dev/null |
		jq -r "[.items[] | select(.metadata.annotations[\"dratopo.io/pods\"] // \"\" | split(\",\") |
			any(startswith(\"$NS/\"))) | .metadata.name + \" \" + .metadata.uid] | sort | .[]"
}
# Pods named by more than one NodeClaim (a NodeClaim created twice): "ns/pod N".
claimed_twice() {
	"$K" get nodeclaims -l app.kubernetes.io/managed-by=dratopo -o json 2>/dev/null |
		jq -r '[.items[].metadata.annotations["dratopo.io/pods"] // "" | split(",")[]
			| select(. != "")] | group_by(.) | .[] | select(length > 1)
			| .[0] + " " + (length | tostring)'
}
# planned_since I LINES: coordinator I has planned (its controller's
# kube_plan line) after the first LINES lines of its log; no NodeClaim new.
planned_since() {
	local n
	for n in $(seq 1 300); do
		tail -n +"$(($2 + 1))" "$TMP/c$1.log" | grep -q 'event=kube_plan ' && break
		sleep 0.1
	done
	tail -n +"$(($2 + 1))" "$TMP/c$1.log" | grep 'event=kube_plan ' | head -1 | grep -q ' written=0 ' ||
		fail "coordinator $1 did not plan at once after taking over, writing nothing new"
	[ "$(claims)" = "$CLAIMS" ] || fail "NodeClaims changed: $(claims | tr '\n' ' '), was $(echo "$CLAIMS" | tr '\n' ' ')"
	[ -z "$(claimed_twice)" ] || fail "pods in two NodeClaims: $(claimed_twice | tr '\n' ' ')"
}

# Pending pods with claims for the leader's controller to provision.
expect 0 "$K" apply -f "$ROOT/examples/seed/nodepool.yaml" -f "$ROOT/examples/seed/ec2nodeclass.yaml"
expect 0 "$K" -n "$NS" apply -f "$ROOT/examples/seed/large-gpu.yaml" \
	-f "$ROOT/examples/seed/gpu-efa-aligned.yaml"

for i in 1 2 3; do start "$i"; done
L=$(wait_holder "" 20) || { fail "nobody leads"; e2e_finish; }
echo "leader: coordinator $L (${ID[$L]})"

# Every coordinator's dratopo_leader, sampled: the most that say 1 at once.
(
	while :; do
		n=0
		for i in 1 2 3; do
			v=$(curl -s -m 1 "127.0.0.1:${HTTP[$i]}/metrics" 2>/dev/null | sed -n 's/^dratopo_leader //p')
			[ "$v" = 1 ] && n=$((n + 1))
		done
		echo "$n"
		sleep 0.1
	done
) >"$TMP/samples" &
SAMPLER=$!

ADDRS="127.0.0.1:${PORT[1]},127.0.0.1:${PORT[2]},127.0.0.1:${PORT[3]}"
"$AGENTS" send "$1/fixtures/agent" "$ADDRS" 30 100000 500 >"$TMP/acks.log" 2>"$TMP/agents.err" &
STREAM=$!
wait_acks 90
learned_at=$("$K" get learnedtype p7.48xlarge -o jsonpath='{.status.learnedTime}')
for n in $(seq 1 600); do [ -n "$(claims)" ] && break; sleep 0.1; done
sleep 2
CLAIMS=$(claims)
[ -n "$CLAIMS" ] || { fail "the leader wrote no NodeClaim for the pending pods";
	grep 'event=kube' "$TMP/c$L.log" | tail -20 >&2; }
echo "NodeClaims: $(echo "$CLAIMS" | grep -c .)"
[ -z "$(claimed_twice)" ] || fail "pods in two NodeClaims: $(claimed_twice | tr '\n' ' ')"
[ -n "$learned_at" ] || fail "the unknown fixture's type was not learned"
[ "$(leader_label)" = "coord-$L" ] || fail "leader label on '$(leader_label)', want coord-$L"
# the leader answers queries, a follower refuses them naming the leader
expect 0 "$BIN" nodes --coordinator "127.0.0.1:${PORT[$L]}" --insecure &&
	has "$TMP/out" '^ha-000 ' "the leader lists the fleet"
F=$(( L % 3 + 1 ))
expect 1 "$BIN" nodes --coordinator "127.0.0.1:${PORT[$F]}" --insecure &&
	has "$TMP/err" "UNAVAILABLE.*does not lead \\(Lease $NS/dratopo-coordinator is held by ${ID[$L]}\\)" \
	"a follower names the leader"

# 1. SIGKILL in the middle of the stream.
old=${ID[$L]}; t0=$(now)
for i in 1 2 3; do LINES[$i]=$(wc -l <"$TMP/c$i.log"); done
kill -KILL "${PID[$L]}"
N=$(wait_holder "$old" 30) || fail "nobody took over after SIGKILL"
took=$(secs "$t0" "$(now)")
echo "SIGKILL: coordinator $N leads after ${took}s (lease ${LEASE_S}s + retry ${RETRY_S}s)"
within "$took" $((LEASE_S + RETRY_S)) || fail "takeover after SIGKILL took ${took}s"
PID[$L]=
planned_since "$N" "${LINES[$N]}"
wait_acks 60
has "$TMP/c$N.log" 'event=takeover nodes=30' "the new leader rebuilt 30 nodes from the objects"
[ "$(leader_label)" = "coord-$N" ] || fail "leader label on '$(leader_label)', want coord-$N"
[ "$("$K" get learnedtype p7.48xlarge -o jsonpath='{.status.learnedTime}')" = "$learned_at" ] ||
	fail "the learned type was learned again"
grep '^ack ha-02[789]' "$TMP/acks.log" | tail -3 | grep -q ' learned ' ||
	fail "the learned type's nodes are not learned after the takeover"

# 2. SIGSTOP past the lease, then SIGCONT: nothing written after the loss.
L=$N; old=${ID[$L]}
for i in 1 2 3; do LINES[$i]=$(wc -l <"$TMP/c$i.log"); done
kill -STOP "${PID[$L]}"
N=$(wait_holder "$old" 30) || fail "nobody took over after SIGSTOP"
lost_at=$("$K" -n "$NS" get lease dratopo-coordinator -o jsonpath='{.spec.acquireTime}')
echo "SIGSTOP: coordinator $N leads since $lost_at"
planned_since "$N" "${LINES[$N]}"
sleep 3
kill -CONT "${PID[$L]}"
wait_acks 60
sleep 3
expect 0 "$AGENTS" audit "$AUDIT" "${ID[$L]}" "$lost_at" && has "$TMP/out" '^0 writes$' \
	"writes by the stopped leader after it lost the Lease: $(head -3 "$TMP/out")"
expect 0 "$AGENTS" audit "$AUDIT" "${ID[$N]}" "$lost_at" && has "$TMP/out" '^[1-9][0-9]* writes$' \
	"the new leader writes"
has "$TMP/c$L.log" 'event=leader_lost' "the stopped leader knows it lost"
[ "$(curl -s "127.0.0.1:${HTTP[$L]}/metrics" | sed -n 's/^dratopo_leader //p')" = 0 ] ||
	fail "the continued coordinator still says it leads"
[ "$(curl -s -o /dev/null -w '%{http_code}' "127.0.0.1:${HTTP[$L]}/readyz")" = 200 ] ||
	fail "the continued coordinator is not ready as a follower"
[ "$(leader_label)" = "coord-$N" ] || fail "leader label on '$(leader_label)', want coord-$N only"

# 3. SIGTERM: handed over at once.
F=$L; L=$N; old=${ID[$L]}; t0=$(now)
for i in 1 2 3; do LINES[$i]=$(wc -l <"$TMP/c$i.log"); done
kill -TERM "${PID[$L]}"
N=$(wait_holder "$old" 10) || fail "nobody took over after SIGTERM"
took=$(secs "$t0" "$(now)")
echo "SIGTERM: coordinator $N leads after ${took}s"
within "$took" "$RETRY_S" || fail "handover after SIGTERM took ${took}s"
[ "$N" = "$F" ] || fail "coordinator $F should have taken over"
planned_since "$N" "${LINES[$N]}"
wait "${PID[$L]}"; rc=$?
[ "$rc" = 0 ] || fail "the terminated leader exited $rc"
has "$TMP/c$L.log" 'event=leader_released' "the leader released its Lease"
PID[$L]=
wait_acks 60

# The stream ends; every acknowledged report is in the cluster.
kill "$STREAM"; wait "$STREAM" 2>/dev/null; STREAM=
expect 0 "$AGENTS" check "$KUBECONFIG" "$TMP/acks.log" || cat "$TMP/out" >&2
has "$TMP/out" '^30 nodes checked' "every node checked"
kill "$SAMPLER"; wait "$SAMPLER" 2>/dev/null; SAMPLER=
most=$(sort -n "$TMP/samples" | tail -1)
echo "leaders at once, sampled $(wc -l <"$TMP/samples") times: at most $most"
[ "$most" = 1 ] || fail "$most coordinators said they lead at once"

# A node forgotten (dratopo nodes --forget) leaves the cluster too: its
# NodeTopology is deleted before the answer; a follower refuses to forget.
F=$(for i in 1 2 3; do [ -z "${PID[$i]}" ] && echo "$i"; done | head -1)
start "$F"     # a follower again, where one was killed
expect 1 "$BIN" nodes --coordinator "127.0.0.1:${PORT[$F]}" --insecure --forget ha-000 &&
	has "$TMP/err" 'UNAVAILABLE.*does not lead' "a follower refuses to forget"
expect 0 "$K" get nodetopology ha-000
expect 0 "$BIN" nodes --coordinator "127.0.0.1:${PORT[$N]}" --insecure --forget ha-000
expect 1 "$K" get nodetopology ha-000 && has "$TMP/err" 'NotFound' "the forgotten node's NodeTopology deleted"
expect 0 "$BIN" nodes --coordinator "127.0.0.1:${PORT[$N]}" --insecure &&
	grep -q '^ha-000 ' "$TMP/out" && fail "the leader still lists ha-000"
for i in 1 2 3; do no_sanitizer_report "$TMP/c$i.log" "coordinator $i"; done

# deploy/: what this issue added passes the API server's validation.
expect 0 "$K" apply -f "$ROOT/deploy/namespace.yaml"
expect 0 "$K" apply --dry-run=server -f "$ROOT/deploy/crds.yaml" -f "$ROOT/deploy/rbac.yaml" \
	-f "$ROOT/deploy/coordinator.yaml" &&
	has "$TMP/out" 'poddisruptionbudget.policy/dratopo-coordinator (created|configured|unchanged) \(server dry run\)' "PDB" &&
	has "$TMP/out" 'deployment.apps/dratopo-coordinator (created|configured|unchanged) \(server dry run\)' "Deployment" &&
	has "$TMP/out" 'customresourcedefinition.apiextensions.k8s.io/nodetopologies.dratopo.io' "CRD" &&
	has "$TMP/out" 'role.rbac.authorization.k8s.io/dratopo-coordinator-leases' "Lease Role"
sed 's/maxUnavailable: 1$/maxUnavailable: most/' "$ROOT/deploy/coordinator.yaml" >"$TMP/bad.yaml"
expect 1 "$K" apply --dry-run=server -f "$TMP/bad.yaml" &&
	has "$TMP/err" 'maxUnavailable' "a bad PDB field named"
e2e_finish
