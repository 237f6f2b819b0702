#!/bin/bash
# bench/bench_plan_catalog.sh NEW_DRATOPO OLD_DRATOPO [PODS] - the planner with hwdb's
# catalogue against a peer build (e.g. main's, with the smaller catalogue), in one run:
# PODS pending pods (default 5000) on new nodes only, half CPU-only (1 CPU, 2Gi), half
# asking for one EFA through a ResourceClaimTemplate (2 CPUs, 4Gi), planned with
# `dratopo plan -o json`; prints the median CPU seconds of 5 runs of each, the ratio, and
# how many node claims and unschedulable pods each plan has (needs jq).
set -eu
NEW="$1"
OLD="$2"
PODS="${3:-5000}"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
{
	sed -n '/^apiVersion: resource.k8s.io\/v1$/,/^---$/p' "$(dirname "$0")/../tests/fixtures/plan/efa-only.yaml"
	cat <<'Y'
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-efa, namespace: bench}
spec: {spec: {devices: {requests: [{name: efa, exactly: {deviceClassName: efa.networking.k8s.aws}}]}}}
Y
	for i in $(seq 1 "$PODS"); do
		if [ $((i % 2)) = 0 ]; then
			printf -- '---\napiVersion: v1\nkind: Pod\nmetadata: {name: cpu-%d, namespace: bench}\nspec: {containers: [{name: c, image: x, resources: {requests: {cpu: "1", memory: 2Gi}}}]}\n' "$i"
		else
			printf -- '---\napiVersion: v1\nkind: Pod\nmetadata: {name: efa-%d, namespace: bench}\nspec: {resourceClaims: [{name: efa, resourceClaimTemplateName: one-efa}], containers: [{name: c, image: x, resources: {requests: {cpu: "2", memory: 4Gi}, claims: [{name: efa}]}}]}\n' "$i"
		fi
	done
} >"$TMP/pods.yaml"
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
run() {
	for _ in 1 2 3 4 5; do
		TIMEFORMAT='%U %S'
		{ time "$1" plan -f "$TMP/pods.yaml" -o json >"$TMP/out.json" 2>/dev/null || [ $? = 3 ]; } 2>"$TMP/t"
		awk '{ printf "%.3f\n", $1 + $2 }' "$TMP/t"
	done | median
}
# node claims and pods left unschedulable in the last run's plan
counts() { jq -r '"\(.nodeClaims | length) node claims, \([.unschedulable[]?] | length) pods unschedulable"' "$TMP/out.json"; }
old=$(run "$OLD"); oc=$(counts)
new=$(run "$NEW"); nc=$(counts)
printf '%d pods, new nodes: old %s s (%s), new %s s (%s), new/old %s\n' \
	"$PODS" "$old" "$oc" "$new" "$nc" "$(awk -v a="$old" -v b="$new" 'BEGIN { printf "%.2fx", b / a }')"
