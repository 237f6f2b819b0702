#!/usr/bin/env bash
# deploy.sh BUILD_DIR - the deployment files are well formed and say what
# docs/coordinator.md promises: every deploy/*.yaml passes deploy_check (kinds,
# required fields, references between objects), the Deployment passes
# `dratopo validate`, the security properties hold (read-only /sys, no
# privileges, two coordinator replicas on different nodes with a disruption
# budget that lets a drain evict one, anti-affinity that selects the replicas,
# a Service that selects the leader whose label RBAC lets it set, NODE_NAME
# from the downward API),
# a broken manifest is refused, and the systemd units pass systemd-analyze
# verify where systemd is present.
NAME=deploy; . "$(dirname "$0")/lib.sh"
CHECK="$1/tests/deploy_check"
D="$ROOT/deploy"

expect 0 "$CHECK" "$D"/namespace.yaml "$D"/certs.yaml "$D"/coordinator.yaml "$D"/agent.yaml \
	"$D"/dratopo-agent-verify.yaml "$D"/rbac.yaml "$D"/crds.yaml &&
	has "$TMP/out" '^[0-9]+ objects in 7 files: ok$' "deploy_check"

# The coordinator's Deployment is a kind dratopo reads: its pod spec validates.
expect 0 "$BIN" validate -f "$D/coordinator.yaml" && has "$TMP/out" 'Deployment' "validate"

# yq-free property checks on the parsed text.
grep -A3 'name: sys$' "$D/agent.yaml" | grep -q 'path: /sys' || fail "agent: hostPath /sys"
grep -q '{name: sys, mountPath: /host/sys, readOnly: true}' "$D/agent.yaml" ||
	fail "agent: /sys mounted read-only"
grep -q 'privileged: false' "$D/agent.yaml" || fail "agent: not privileged"
[ "$(grep -c 'allowPrivilegeEscalation: false' "$D/agent.yaml")" = \
  "$(grep -c ' image: ' "$D/agent.yaml")" ] ||
	fail "agent: every container without privilege escalation"
grep -q 'key: nvidia.com/gpu' "$D/agent.yaml" || fail "agent: tolerates nvidia.com/gpu"
# dratopo's own taint (the remedy's key, any effect): a drifted node keeps
# its agent, whose next matching report lifts the taint
taint=$(sed -n 's/^#define REM_TAINT_KEY *"\(.*\)"/\1/p' "$ROOT/coordinator/remedy/remedy.h")
[ -n "$taint" ] || fail "no REM_TAINT_KEY in remedy.h"
grep -A2 -- "- key: $taint\$" "$D/agent.yaml" | grep -q 'operator: Exists' ||
	fail "agent: tolerates $taint"
grep -A2 -- "- key: $taint\$" "$D/agent.yaml" | grep -q 'effect:' &&
	fail "agent: tolerates $taint with every effect"
# the probes and the port they use
grep -q -- '- --http=:9465' "$D/agent.yaml" || fail "agent: --http"
grep -q 'httpGet: {path: /healthz, port: metrics}' "$D/agent.yaml" || fail "agent: liveness /healthz"
grep -q 'httpGet: {path: /readyz, port: metrics}' "$D/agent.yaml" || fail "agent: readiness /readyz"
# nodes by a label every kubelet sets, the types being hwdb's (generated),
# in both DaemonSets that read /sys; both tolerate dratopo's taint
"$BIN" hwdb list -o json | jq -r '.instanceTypes[].name' | LC_ALL=C sort >"$TMP/hwdb-types"
[ -s "$TMP/hwdb-types" ] || fail "hwdb lists no instance type"
for f in agent.yaml dratopo-agent-verify.yaml; do
	sed -n '/# BEGIN generated/,/# END generated/p' "$D/$f" | sed -n 's/^ *- //p' >"$TMP/types"
	if ! cmp -s "$TMP/types" "$TMP/hwdb-types"; then
		fail "deploy/$f's instance types are not hwdb's: run tools/gen-agent-affinity $1"
		diff "$TMP/types" "$TMP/hwdb-types" | head -5 >&2
	fi
	grep -B3 -A3 'key: dratopo.io/agent$' "$D/$f" | grep -q 'values: \["true"\]' ||
		fail "$f: nodes labelled dratopo.io/agent=true too"
	grep -A1 -- "- key: $taint\$" "$D/$f" | grep -q 'operator: Exists' ||
		fail "$f: tolerates $taint"
	# a file that applies the Namespace too keeps its labels (an apply
	# without them would drop them)
	if grep -q '^kind: Namespace$' "$D/$f"; then
		grep -q 'pod-security.kubernetes.io/enforce: privileged' "$D/$f" ||
			fail "$f: its Namespace without the Pod Security label"
	fi
done
grep -q 'nvidia.com/gpu.present' "$D"/*.yaml && fail "a label only GPU Feature Discovery sets"
# the namespace's Pod Security level (hostPath needs privileged), said in the docs
grep -q 'pod-security.kubernetes.io/enforce: privileged' "$D/namespace.yaml" ||
	fail "namespace: Pod Security privileged for the hostPath /sys"
grep -q 'Pod Security' "$ROOT/docs/agent.md" || fail "docs/agent.md: the Pod Security level"
# certificates: the agent's renewed by a weekly rolling restart, the names
# port-forward and in-cluster clients use on the server's
grep -q 'args: \["rollout", "restart", "daemonset/dratopo-agent"' "$D/agent.yaml" ||
	fail "agent: the weekly restart that renews certificates"
for n in localhost dratopo-coordinator.dratopo.svc; do
	grep -q -- "^  - $n\$" "$D/certs.yaml" || fail "certs: the server certificate names $n"
done
grep -A1 'ipAddresses:' "$D/certs.yaml" | grep -q -- '- 127.0.0.1' ||
	fail "certs: the server certificate names 127.0.0.1"
grep -q 'fieldPath: spec.nodeName' "$D/agent.yaml" || fail "agent: NODE_NAME from the downward API"
grep -q 'replicas: 2' "$D/coordinator.yaml" || fail "coordinator: two replicas"
grep -q -- '- --leader-elect$' "$D/coordinator.yaml" || fail "coordinator: leader election"
grep -A2 'requiredDuringSchedulingIgnoredDuringExecution' "$D/coordinator.yaml" |
	grep -q 'topologyKey: kubernetes.io/hostname' || fail "coordinator: one replica per node"
grep -A3 'preferredDuringSchedulingIgnoredDuringExecution' "$D/coordinator.yaml" |
	grep -q 'topologyKey: topology.kubernetes.io/zone' || fail "coordinator: spread over zones"
grep -q '^kind: PodDisruptionBudget$' "$D/coordinator.yaml" || fail "coordinator: a PDB"
grep -q 'dratopo.io/role: leader' "$D/coordinator.yaml" || fail "coordinator: Service selects the leader"
grep -q 'fieldPath: metadata.name' "$D/coordinator.yaml" || fail "coordinator: POD_NAME"
grep -q 'PersistentVolumeClaim' "$D/coordinator.yaml" && fail "coordinator: no volume (the fleet is in the cluster)"
for k in Issuer Certificate; do
	grep -q "^kind: $k$" "$D/certs.yaml" || fail "certs: a $k"
done

# A broken manifest is refused, each problem named.
sed -e 's/secretName: dratopo-coordinator-tls/secretName: nope/' \
    -e 's/mountPath: \/etc\/dratopo\/tls/mountPth: x/' \
    -e 's/dratopo.io\/role: leader/app: other/' "$D/coordinator.yaml" >"$TMP/bad.yaml"
expect 1 "$CHECK" "$D/namespace.yaml" "$D/certs.yaml" "$TMP/bad.yaml" &&
	has "$TMP/err" 'Deployment dratopo-coordinator\): secret.secretName' "bad secret" &&
	has "$TMP/err" 'Service dratopo-coordinator\): spec.selector: selects no workload' "bad selector" &&
	has "$TMP/err" 'volumeMounts: entry 0 needs a name and a mountPath' "bad mount"
# The HA deployment broken three ways, each named: a budget that never lets
# a drain evict a replica, anti-affinity that keeps nothing apart, a leader
# label the coordinator may not set (its Role without pods' patch).
ALL=("$D/namespace.yaml" "$D/certs.yaml" "$D/crds.yaml")
sed 's/maxUnavailable: 1$/minAvailable: 2/' "$D/coordinator.yaml" >"$TMP/pdb.yaml"
expect 1 "$CHECK" "${ALL[@]}" "$D/rbac.yaml" "$TMP/pdb.yaml" &&
	has "$TMP/err" 'PodDisruptionBudget dratopo-coordinator\): spec.minAvailable: 2 of the 2 replicas of Deployment dratopo-coordinator allows no voluntary eviction' "PDB that blocks drains"
sed 's/maxUnavailable: 1$/maxUnavailable: 0/' "$D/coordinator.yaml" >"$TMP/pdb0.yaml"
expect 1 "$CHECK" "${ALL[@]}" "$D/rbac.yaml" "$TMP/pdb0.yaml" &&
	has "$TMP/err" 'spec.maxUnavailable: 0 allows no voluntary eviction' "PDB of 0"
sed '/requiredDuringScheduling/,/preferredDuring/ s/name: dratopo-coordinator$/name: other/' \
	"$D/coordinator.yaml" >"$TMP/aa.yaml"
expect 1 "$CHECK" "${ALL[@]}" "$D/rbac.yaml" "$TMP/aa.yaml" &&
	has "$TMP/err" 'requiredDuringSchedulingIgnoredDuringExecution\[0\].labelSelector: selects none of its own pods' "anti-affinity that keeps nothing apart"
[ "$(grep -c 'selects none of its own pods' "$TMP/err")" = 1 ] || fail "only the broken term named"
sed 's/verbs: \[get, list, patch\]/verbs: [get, list]/' "$D/rbac.yaml" >"$TMP/rbac.yaml"
expect 1 "$CHECK" "${ALL[@]}" "$TMP/rbac.yaml" "$D/coordinator.yaml" &&
	has "$TMP/err" "Service dratopo-coordinator\\): spec.selector: dratopo.io/role is set on Deployment dratopo-coordinator's pods at run time, but ServiceAccount dratopo-coordinator may not patch pods in dratopo" "leader label without RBAC"
printf 'apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: x}\n' >"$TMP/ds.yaml"
expect 1 "$CHECK" "$TMP/ds.yaml" &&
	has "$TMP/err" 'metadata.namespace: required' "namespace required" &&
	has "$TMP/err" 'spec.template.spec.containers: required' "containers required"
printf 'kind: [\n' >"$TMP/garbage.yaml"
expect 1 "$CHECK" "$TMP/garbage.yaml"

# systemd units: systemd-analyze verify (the binaries replaced by /bin/true).
if command -v systemd-analyze >/dev/null 2>&1; then
	mkdir -p "$TMP/units"
	for u in dratopo-agent.service dratopo-coordinator.service dratopo-agent-verify.service \
		 dratopo-agent-verify.timer; do
		sed -E "s#/usr/local/bin/dratopo[a-z-]*#/bin/true#" "$ROOT/systemd/$u" >"$TMP/units/$u"
	done
	out=$(cd "$TMP/units" && systemd-analyze verify --man=no ./*.service 2>&1 |
		grep -v -e 'ConditionPathIsDirectory' -e 'Failed to .*bus' -e 'cgroup' -e '^$')
	[ -z "$out" ] || fail "systemd-analyze verify: $out"
fi
e2e_finish
