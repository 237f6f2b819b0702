#!/usr/bin/env bash
# deploy.sh BUILD_DIR - the deployment files are well formed and say what
# docs/coordinator.md promises: every deploy/*.yaml passes deploy_check (kinds,
# required fields, references between objects), the Deployment passes
# `dratopo validate`, the security properties hold (read-only /sys, no
# privileges, two coordinator replicas on different nodes with a disruption
# budget, a Service that selects the leader, NODE_NAME from the downward API),
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
[ "$(grep -c 'allowPrivilegeEscalation: false' "$D/agent.yaml")" = 3 ] ||
	fail "agent: every container without privilege escalation"
grep -q 'key: nvidia.com/gpu' "$D/agent.yaml" || fail "agent: tolerates nvidia.com/gpu"
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
