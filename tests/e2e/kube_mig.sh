#!/usr/bin/env bash
# kube_mig.sh BUILD_DIR - a NodeClaim in flight counts with the MIG devices
# its EC2NodeClass's layout (karpenter.k8s.aws/nvidia-mig-layout) makes its
# GPUs publish: two pods each asking for one 1g.10gb MIG slice get one
# NodeClaim, and a later plan, with that NodeClaim in flight, writes
# nothing (counted with whole GPUs, the node would hold neither pod and a
# second NodeClaim would follow). Against the kube fixture's control plane.
NAME=kube_mig
DRIVES="$1/bin/dratopo-coordinator"
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/kube_lib.sh"
COORD="$1/bin/dratopo-coordinator"
NS=dt-mig-$$
PID=
trap '[ -n "$PID" ] && kill "$PID" 2>/dev/null; wait 2>/dev/null
	drop_written_claims "$TMP/coord.log"
	drop_namespaces "$NS"
	"$K" delete nodepool gpu-mig --wait=false >/dev/null 2>&1
	"$K" delete ec2nodeclass gpu-mig --wait=false >/dev/null 2>&1
	"$K" delete deviceclass mig.nvidia.com --wait=false >/dev/null 2>&1
	rm -rf "$TMP"' EXIT

expect 0 "$K" create namespace "$NS"
for _ in $(seq 1 100); do "$K" -n "$NS" get serviceaccount default >/dev/null 2>&1 && break; sleep 0.1; done
sed -e 's/MIG_LAYOUT/all-1g.10gb/; s/MIG_COUNT/1/; s/MIG_PROFILE/1g.10gb/' \
	"$ROOT/tests/fixtures/plan/mig.yaml" >"$TMP/mig.yaml"
sed -e 's/name: mig-user/name: mig-user-2/' "$TMP/mig.yaml" | awk '/^kind: Pod/,0' |
	sed '1i apiVersion: v1' >"$TMP/second.yaml"
expect 0 "$K" -n "$NS" apply -f "$TMP/mig.yaml" -f "$TMP/second.yaml"
[ "$("$K" -n "$NS" get pods --no-headers | wc -l)" = 2 ] || fail "two MIG pods"

"$COORD" --insecure --listen 127.0.0.1:0 --db "$TMP/coord.db" --kubeconfig "$KUBECONFIG" \
	>"$TMP/coord.log" 2>&1 &
PID=$!
wait_log "$TMP/coord.log" "event=nodeclaim_created name=gpu-mig-[0-9a-f]+ .*pods=$NS/mig-user" 60
has "$TMP/coord.log" "event=nodeclaim_created .*pods=$NS/mig-user(-2)?,$NS/mig-user(-2)?\$" \
	"one NodeClaim for both pods"
lines=$(wc -l <"$TMP/coord.log")
expect 0 "$K" -n "$NS" label pod mig-user again=1
next_plan "$TMP/coord.log" "$lines" 30
# (the plan logs once its writes are done)
[ "$(grep -c "event=nodeclaim_created .*$NS/" "$TMP/coord.log")" = 1 ] ||
	fail "the in-flight NodeClaim did not hold its MIG pods: $(grep "nodeclaim_created .*$NS/" "$TMP/coord.log")"
no_sanitizer_report "$TMP/coord.log" "dratopo-coordinator"
e2e_finish
