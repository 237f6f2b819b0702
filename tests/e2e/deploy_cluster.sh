#!/usr/bin/env bash
# deploy_cluster.sh BUILD_DIR - deploy/namespace.yaml, deploy/agent.yaml and
# deploy/dratopo-agent-verify.yaml applied to a real kube-apiserver (tools/kube/cluster.sh up $DT_KUBE_DIR):
#   - every object is accepted with strict field validation (the DaemonSet's
#     node affinity and tolerations, the CronJob, the RBAC);
#   - Pod Security, as docs/agent.md says: under "restricted" the one thing
#     the agent's pods would violate is the hostPath /sys volume (so every
#     other setting meets restricted), "baseline" forbids that volume too
#     (so the namespace needs "privileged"), and in the namespace as shipped
#     nothing is refused or warned about;
#   - the CronJob's ServiceAccount may restart the agent DaemonSet, and only
#     that, and `kubectl rollout restart` as it does restart it.
# Each run works in namespaces of its own (the files' "dratopo" renamed).
NAME=deploy_cluster; DRIVES="$1/bin/dratopo"; . "$(dirname "$0")/lib.sh"
D="$ROOT/deploy"
: "${DT_KUBE_DIR:?DT_KUBE_DIR is not set (the kube fixture sets it)}"
export KUBECONFIG="$DT_KUBE_DIR/kubeconfig"
K="$DT_KUBE_DIR/bin/kubectl"
RUN="dt$$"
NSS=()
trap 'for n in "${NSS[@]}"; do "$K" delete namespace "$n" --wait=false >/dev/null 2>&1; done; rm -rf "$TMP"' EXIT

# in_ns NS FILE: FILE with its namespace renamed to NS
in_ns() {
	sed -e "s/^\( *namespace: \)dratopo\$/\1$1/" -e "s/^\(  name: \)dratopo\$/\1$1/" \
		-e "s/--namespace=dratopo\"/--namespace=$1\"/" "$2"
}

# ---- as shipped: accepted, nothing refused or warned about ----
NS="$RUN-agent"; NSS+=("$NS")
in_ns "$NS" "$D/namespace.yaml" >"$TMP/ns.yaml"
in_ns "$NS" "$D/agent.yaml" >"$TMP/agent.yaml"
expect 0 "$K" apply --validate=strict -f "$TMP/ns.yaml" -f "$TMP/agent.yaml"
has "$TMP/out" "^daemonset.apps/dratopo-agent created" "the DaemonSet is accepted"
has "$TMP/out" "^cronjob.batch/dratopo-agent-refresh created" "the CronJob is accepted"
grep -q 'Warning' "$TMP/err" && fail "warnings applying the agent: $(grep Warning "$TMP/err")"
expect 0 "$K" get namespace "$NS" -o jsonpath='{.metadata.labels.pod-security\.kubernetes\.io/enforce}'
[ "$(cat "$TMP/out")" = privileged ] || fail "the namespace enforces $(cat "$TMP/out")"
# the offline verify DaemonSet beside it: accepted, and its Namespace keeps
# the Pod Security labels
in_ns "$NS" "$D/dratopo-agent-verify.yaml" >"$TMP/verify.yaml"
expect 0 "$K" apply --validate=strict -f "$TMP/verify.yaml"
has "$TMP/out" "^daemonset.apps/dratopo-agent-verify created" "the verify DaemonSet is accepted"
grep -q 'Warning' "$TMP/err" && fail "warnings applying the verify DaemonSet: $(grep Warning "$TMP/err")"
expect 0 "$K" get namespace "$NS" -o jsonpath='{.metadata.labels.pod-security\.kubernetes\.io/enforce}'
[ "$(cat "$TMP/out")" = privileged ] || fail "after the verify file the namespace enforces $(cat "$TMP/out")"

# ---- Pod Security: restricted flags only the hostPath, baseline too ----
for level in restricted baseline; do
	ns="$RUN-$level"; NSS+=("$ns")
	expect 0 "$K" create namespace "$ns"
	expect 0 "$K" label namespace "$ns" "pod-security.kubernetes.io/warn=$level"
	in_ns "$ns" "$D/agent.yaml" >"$TMP/$level.yaml"
	expect 0 "$K" apply -f "$TMP/$level.yaml"
	grep 'would violate PodSecurity' "$TMP/err" >"$TMP/violations"
	[ "$(wc -l <"$TMP/violations")" = 1 ] ||
		fail "$level: one workload violates, the DaemonSet: $(cat "$TMP/violations")"
	case $level in
	restricted) want='would violate PodSecurity "restricted:latest": restricted volume types (volume "sys" uses restricted volume type "hostPath")' ;;
	baseline) want='would violate PodSecurity "baseline:latest": hostPath volumes (volume "sys")' ;;
	esac
	grep -qF "$want" "$TMP/violations" || fail "$level: $(cat "$TMP/violations"), want: $want"
done

# ---- the weekly restart: allowed exactly that ----
SA="system:serviceaccount:$NS:dratopo-agent-refresh"
expect 0 "$K" -n "$NS" auth can-i patch daemonsets/dratopo-agent --as="$SA"
expect 1 "$K" -n "$NS" auth can-i patch daemonsets/other --as="$SA"
expect 1 "$K" -n "$NS" auth can-i delete daemonsets/dratopo-agent --as="$SA"
expect 1 "$K" -n "$NS" auth can-i create pods --as="$SA"
# the CronJob's own command, as its ServiceAccount
args=$(sed -n 's/^ *args: \["rollout", "restart", "\(daemonset\/dratopo-agent\)".*/\1/p' "$D/agent.yaml")
[ "$args" = daemonset/dratopo-agent ] || fail "the CronJob's command: $args"
expect 0 "$K" -n "$NS" rollout restart "$args" --as="$SA"
expect 0 "$K" -n "$NS" get daemonset dratopo-agent \
	-o jsonpath='{.spec.template.metadata.annotations.kubectl\.kubernetes\.io/restartedAt}'
grep -Eq '^[0-9]{4}-[0-9]{2}-[0-9]{2}T' "$TMP/out" || fail "the pod template was not restarted"
e2e_finish
