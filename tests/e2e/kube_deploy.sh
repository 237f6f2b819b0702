#!/usr/bin/env bash
# kube_deploy.sh BUILD_DIR - every manifest of deploy/ passes the real API
# server's validation (kubectl apply --dry-run=server against the control
# plane of the kube fixture, $DT_KUBE_DIR), and a broken one is refused with
# the API server's own message. cert-manager's kinds get minimal CRDs of
# our own first; the namespace is created for real (a dry run of objects in
# a namespace that does not exist fails before validation).
NAME=kube_deploy; . "$(dirname "$0")/lib.sh"
export KUBECONFIG="$DT_KUBE_DIR/kubeconfig"
K="$DT_KUBE_DIR/bin/kubectl"

expect 0 "$K" apply --server-side -f "$ROOT/tests/fixtures/kube/cert-manager-crds.yaml"
expect 0 "$K" wait --for=condition=Established --timeout=60s \
	crd/issuers.cert-manager.io crd/certificates.cert-manager.io
expect 0 "$K" apply -f "$ROOT/deploy/namespace.yaml"
# (another test may have applied rbac.yaml for real: configured/unchanged)
expect 0 "$K" apply --dry-run=server -f "$ROOT/deploy/" &&
	has "$TMP/out" 'clusterrole.rbac.authorization.k8s.io/dratopo-coordinator (created|configured|unchanged) \(server dry run\)' "ClusterRole" &&
	has "$TMP/out" 'deployment.apps/dratopo-coordinator created \(server dry run\)' "Deployment" &&
	has "$TMP/out" 'daemonset.apps/dratopo-agent created \(server dry run\)' "DaemonSet"
# a dry run writes nothing
expect 1 "$K" -n dratopo get deployment dratopo-coordinator

# A wrong field fails there: the API server's words.
sed 's/verbs: \[get, list, watch, patch\]/verbs: 42/' "$ROOT/deploy/rbac.yaml" >"$TMP/bad.yaml"
expect 1 "$K" apply --dry-run=server -f "$TMP/bad.yaml" &&
	has "$TMP/err" 'verbs' "bad verbs named"
sed 's/replicas: 2/replicas: -1/' "$ROOT/deploy/coordinator.yaml" >"$TMP/bad.yaml"
expect 1 "$K" apply --dry-run=server -f "$TMP/bad.yaml" &&
	has "$TMP/err" 'spec.replicas: Invalid value: -1' "negative replicas named"
e2e_finish
