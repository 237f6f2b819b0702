#!/usr/bin/env bash
# bench_kube.sh BUILD_DIR [PODS NODES] - the controller at scale, against a
# real control plane (tools/kube/cluster.sh), next to its limit in the same
# run: NODES existing p5.48xlarge Nodes (8 GPUs each) with the
# ResourceSlices hwdb predicts for them, created through the API, then PODS
# pending pods each claiming one GPU through a ResourceClaimTemplate, while
# dratopo-coordinator --kubeconfig watches. It prints the time from the
# last pod created to the last NodeClaim written, the coordinator's peak
# RSS, and `dratopo plan` on the same objects dumped from the API server
# (the offline plan: the limit). Defaults: 5000 pods, 500 nodes. Not in CI.
# DRATOPO_BENCH_KEEP=DIR keeps the coordinator's log and the dump there.
set -euo pipefail
B=$(cd "$1" && pwd)
PODS=${2:-5000}
NODES=${3:-500}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIR=$(mktemp -d /tmp/dratopo-bench-kube.XXXXXX)
PID=
cleanup() {
	if [ -n "${DRATOPO_BENCH_KEEP:-}" ]; then
		mkdir -p "$DRATOPO_BENCH_KEEP"
		cp "$DIR"/coord.log "$DIR"/dump.yaml "$DRATOPO_BENCH_KEEP"/ 2>/dev/null || true
	fi
	[ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
	bash "$ROOT/tools/kube/cluster.sh" down "$DIR/k8s" >/dev/null 2>&1 || true
	rm -rf "$DIR"
}
trap cleanup EXIT
now() { date +%s.%N; }

bash "$ROOT/tools/kube/cluster.sh" up "$DIR/k8s" >/dev/null
export KUBECONFIG="$DIR/k8s/kubeconfig"
K="$DIR/k8s/bin/kubectl"

# The pool, its node class, the template, the namespace.
cat >"$DIR/base.yaml" <<'EOF'
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: gpu}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: gpu}
      requirements:
      - {key: node.kubernetes.io/instance-type, operator: In, values: [p5.48xlarge]}
      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: gpu}
spec:
  role: KarpenterNodeRole
  amiSelectorTerms: [{alias: al2023@latest}]
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: bench}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: bench}}]
---
apiVersion: v1
kind: Namespace
metadata: {name: bench}
EOF
"$K" apply -f "$DIR/base.yaml" >/dev/null
for _ in $(seq 1 100); do "$K" -n bench get sa default >/dev/null 2>&1 && break; sleep 0.1; done
"$K" -n bench apply -f "$ROOT/tests/fixtures/kube/one-gpu.yaml" >/dev/null

# NODES nodes and their slices, through the API.
t0=$(now)
for i in $(seq 1 "$NODES"); do
	n=node-$i
	printf -- '---\napiVersion: v1\nkind: Node\nmetadata:\n  name: %s\n  labels: {kubernetes.io/hostname: %s, node.kubernetes.io/instance-type: p5.48xlarge, karpenter.sh/capacity-type: on-demand, karpenter.sh/nodepool: gpu}\nstatus:\n  allocatable: {cpu: "190", memory: 1900Gi, pods: "110"}\n' "$n" "$n"
done >"$DIR/nodes.yaml"
"$K" create -f "$DIR/nodes.yaml" >/dev/null
# Ready: the node lifecycle controller (not run) would lift the not-ready taint
"$K" taint nodes --all node.kubernetes.io/not-ready:NoSchedule- >/dev/null
for i in $(seq 1 "$NODES"); do
	"$B/bin/dratopo" hwdb show p5.48xlarge --node "node-$i" -o yaml
done >"$DIR/slices.yaml"
"$K" create -f "$DIR/slices.yaml" >/dev/null
echo "created $NODES nodes and their slices in $(awk "BEGIN{printf \"%.1f\", $(now) - $t0}") s"

# The coordinator, watching; then the pods.
"$B/bin/dratopo-coordinator" --insecure --listen 127.0.0.1:0 --db "$DIR/coord.db" \
	--kubeconfig "$KUBECONFIG" >"$DIR/coord.log" 2>&1 &
PID=$!
for _ in $(seq 1 300); do grep -q 'event=kube_plan\|event=start' "$DIR/coord.log" && break; sleep 0.1; done
for i in $(seq 1 "$PODS"); do
	printf -- '---\napiVersion: v1\nkind: Pod\nmetadata: {name: p-%d, namespace: bench}\nspec:\n  resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]\n  containers: [{name: c, image: busybox, resources: {claims: [{name: gpu}]}}]\n' "$i"
done >"$DIR/pods.yaml"
t0=$(now)
"$K" create -f "$DIR/pods.yaml" >/dev/null
last_pod=$(now)
echo "created $PODS pods in $(awk "BEGIN{printf \"%.1f\", $last_pod - $t0}") s"

# Until no NodeClaim was written for 20 s (and a plan came after the last pod).
quiet=0
while [ "$quiet" -lt 20 ]; do
	before=$(grep -c 'event=nodeclaim_created' "$DIR/coord.log" || true)
	sleep 1
	after=$(grep -c 'event=nodeclaim_created' "$DIR/coord.log" || true)
	if [ "$before" = "$after" ]; then quiet=$((quiet + 1)); else quiet=0; fi
done
last_claim=$(grep 'event=nodeclaim_created' "$DIR/coord.log" | tail -1 | sed -E 's/^ts=([^ ]*) .*/\1/')
last_claim_s=$(date -d "$last_claim" +%s.%N)
rss=$(awk '/VmHWM/ {print $2 / 1024 " MiB"}' "/proc/$PID/status")
claims=$("$K" get nodeclaims --no-headers | wc -l)
plans=$(grep -c 'event=kube_plan ' "$DIR/coord.log")
echo "controller: $claims NodeClaims, last one $(awk "BEGIN{printf \"%.1f\", $last_claim_s - $last_pod}") s after the last pod; $plans plans; peak RSS $rss"
grep 'event=kube_plan ' "$DIR/coord.log" | tail -3

# The limit: the offline plan of the same objects (without the NodeClaims).
"$K" get pods,resourceclaims,resourceclaimtemplates,nodes,resourceslices,nodepools,ec2nodeclasses -A -o yaml >"$DIR/dump.yaml"
t0=$(now)
"$B/bin/dratopo" plan -f "$DIR/dump.yaml" -o json >"$DIR/offline.json" || true
offline=$(awk "BEGIN{printf \"%.1f\", $(now) - $t0}")
echo "offline: dratopo plan on the dump: $(jq '.nodeClaims | length' "$DIR/offline.json") NodeClaims in $offline s (wall)"
echo "ratio: $(awk "BEGIN{printf \"%.2f\", ($last_claim_s - $last_pod) / $offline}")x the offline plan; load average $(cut -d' ' -f1-3 /proc/loadavg)"
