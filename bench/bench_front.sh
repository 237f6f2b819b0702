#!/bin/bash
# bench/bench_front.sh [BUILD_DIR] [RUNS] - the front door (issue 20): what
# the kube-scheduler DRA shape's 5,000 pods (one claim each from a template,
# scheduler_perf's 5000pods_500nodes) add to `dratopo plan -f FILE -o json`
# over the same 500 nodes of 10 devices with no pods, in one hyperfine run,
# as YAML and as JSON (what the API server sends). Prints hyperfine's table
# and the time the pods add (target: under 50 ms), wall and CPU, JSON's
# ratio to YAML, and the load average around the run. With valgrind, also
# the instructions the pods add (callgrind: the same on a loaded machine,
# where wall time is mostly waiting). Needs hyperfine and python3-yaml (for
# the JSON copies).
set -eu
B="${1:-build}"
RUNS="${2:-20}"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
"$B/bench/bench_plan" gen-sched 5000 500 >"$TMP/pods.yaml"
"$B/bench/bench_plan" gen-sched 0 500 >"$TMP/nodes.yaml"
for f in pods nodes; do
	python3 -c 'import json, sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    print(json.dumps(d))' "$TMP/$f.yaml" >"$TMP/$f.json"
done
D="$B/bin/dratopo"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
hyperfine -N -w 3 -r "$RUNS" --export-json "$TMP/h.json" \
	-n 'yaml 5000 pods' "$D plan -f $TMP/pods.yaml -o json" \
	-n 'yaml no pods' "$D plan -f $TMP/nodes.yaml -o json" \
	-n 'json 5000 pods' "$D plan -f $TMP/pods.json -o json" \
	-n 'json no pods' "$D plan -f $TMP/nodes.json -o json" >&2
python3 - "$TMP/h.json" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
def ms(k, f="mean"): return r[k][f] * 1000
def cpu(k): return (r[k]["user"] + r[k]["system"]) * 1000
for fmt in ("yaml", "json"):
    p, n = f"{fmt} 5000 pods", f"{fmt} no pods"
    print(f"{fmt}: the 5,000 pods add {ms(p) - ms(n):.1f} ms wall "
          f"(median {ms(p, 'median') - ms(n, 'median'):.1f} ms), {cpu(p) - cpu(n):.1f} ms CPU; "
          f"whole plan {ms(p):.1f} ms")
print(f"json / yaml (5,000 pods, mean wall): {ms('json 5000 pods') / ms('yaml 5000 pods'):.2f}, "
      f"CPU: {cpu('json 5000 pods') / cpu('yaml 5000 pods'):.2f}")
PY
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
# Instructions (callgrind), what the pods add and JSON's ratio to YAML.
if command -v valgrind >/dev/null; then
	for f in pods nodes; do
		for fmt in yaml json; do
			valgrind --tool=callgrind --callgrind-out-file="$TMP/cg.$f.$fmt" \
				"$D" plan -f "$TMP/$f.$fmt" -o json >/dev/null 2>&1
		done
	done
	ir() { sed -n 's/^totals: //p' "$TMP/cg.$1"; }
	y=$(( $(ir pods.yaml) - $(ir nodes.yaml) )) j=$(( $(ir pods.json) - $(ir nodes.json) ))
	echo "instructions the 5,000 pods add: yaml $((y / 1000000)) million," \
		"json $((j / 1000000)) million; json / yaml $(awk "BEGIN { printf \"%.2f\", $j / $y }")"
fi
