#!/bin/bash
# bench/bench_plan.sh [BUILD_DIR] [PODS NODES] - `dratopo plan` end to end (load,
# validate, plan, print JSON) on the synthetic cluster bench_plan generates,
# as pods and nodes double from 1/8 to the full size (default 10000 x 1000).
# Prints wall and CPU seconds per size; bench_plan run splits load and plan.
# Then bench_plan sched: kube-scheduler's DRA shape, pods/s net of loading,
# and those clusters through `dratopo plan -o json` with its phases apart.
set -eu
B="${1:-build}"
PODS="${2:-10000}"
NODES="${3:-1000}"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
printf '%8s %7s %10s %9s %9s %8s\n' pods nodes "yaml MB" "wall s" "cpu s" growth
prev=""
for div in 8 4 2 1; do
	p=$((PODS / div)); n=$((NODES / div))
	"$B/bench/bench_plan" gen "$p" "$n" >"$TMP/cluster.yaml"
	mb=$(awk -v s="$(stat -c %s "$TMP/cluster.yaml")" 'BEGIN { printf "%.1f", s / 1048576 }')
	TIMEFORMAT='%R %U %S'
	# exit 3 (some pod unschedulable) is a result, not a failure
	{ time "$B/bin/dratopo" plan -f "$TMP/cluster.yaml" -o json >/dev/null 2>&1 ||
		[ $? = 3 ]; } 2>"$TMP/time"
	wall=$(awk '{ printf "%.3f", $1 }' "$TMP/time")
	cpu=$(awk '{ printf "%.3f", $2 + $3 }' "$TMP/time")
	growth=$([ -n "$prev" ] && awk -v a="$prev" -v b="$cpu" 'BEGIN { printf "%.2fx", (a > 0 ? b / a : 0) }' || echo -)
	printf '%8d %7d %10s %9s %9s %8s\n' "$p" "$n" "$mb" "$wall" "$cpu" "$growth"
	prev=$cpu
done
# kube-scheduler's DRA shape (5,000 pods with one claim each on 500 nodes
# of 10 devices, then halved and doubled): plan CPU net of loading.
echo
"$B/bench/bench_plan" sched
# The same clusters through the command: `dratopo plan -f FILE -o json`
# timed whole (CPU s, one run), and its phases in-process (bench_plan cli:
# parse, validate, plan, JSON; medians of three runs).
for gen in gen-sched gen-sched-claims; do
	echo
	echo "dratopo plan -f \$(bench_plan $gen PODS NODES) -o json:"
	printf '%8s %7s %8s %8s %8s %9s %8s %8s %10s %8s\n' pods nodes "yaml MB" "cpu s" \
		"parse s" "validate" "plan s" "json s" "plan p/s" growth
	prev=""
	for f in 1 2 4 8 16; do
		p=$((5000 / 4 * f)); n=$((500 / 4 * f))
		"$B/bench/bench_plan" "$gen" "$p" "$n" >"$TMP/sched.yaml"
		mb=$(awk -v s="$(stat -c %s "$TMP/sched.yaml")" 'BEGIN { printf "%.1f", s / 1048576 }')
		TIMEFORMAT='%U %S'
		{ time "$B/bin/dratopo" plan -f "$TMP/sched.yaml" -o json >/dev/null 2>&1 ||
			[ $? = 3 ]; } 2>"$TMP/time"
		cpu=$(awk '{ printf "%.3f", $1 + $2 }' "$TMP/time")
		# "N pods: parse P s, validate V s, plan L s, json J s (plan R pods/s)"
		split=$("$B/bench/bench_plan" cli "$TMP/sched.yaml" |
			awk '{ printf "%8s %9s %8s %8s %10s", $4, $7, $10, $13, $16 }' | tr -d '(')
		growth=$([ -n "$prev" ] && awk -v a="$prev" -v b="$cpu" 'BEGIN { printf "%.2fx", (a > 0 ? b / a : 0) }' || echo -)
		printf '%8d %7d %8s %8s %s %8s\n' "$p" "$n" "$mb" "$cpu" "$split" "$growth"
		prev=$cpu
	done
done
