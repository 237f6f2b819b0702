# tests/e2e/kube_lib.sh - what the end-to-end tests against the kube
# fixture's control plane share; source it after lib.sh. Sets KUBECONFIG
# and K (its kubectl) from $DT_KUBE_DIR.
#
#   wait_log "$TMP/coord.log" 'event=kube_plan ' 30
#   until_true 40 "DeviceTaintRules applied" rules '> 0'
#   next_plan "$TMP/coord.log" "$lines" 30 && case $PLAN in ...
export KUBECONFIG="$DT_KUBE_DIR/kubeconfig"
K="$DT_KUBE_DIR/bin/kubectl"

# wait_log FILE REGEX SECONDS: until FILE (a daemon's log) has a line
# matching the extended REGEX.
wait_log() {
	for _ in $(seq 1 $(($3 * 10))); do
		grep -Eq -- "$2" "$1" && return 0
		sleep 0.1
	done
	fail "no line matching /$2/ in $(basename "$1") within $3 s"
	tail -5 "$1" >&2
	return 1
}

# next_plan FILE LINES SECONDS: PLAN gets the first kube_plan line that
# FILE (the coordinator's log) has after its first LINES lines, within
# SECONDS; empty, and a failure, when none came.
next_plan() {
	for _ in $(seq 1 $(($3 * 10))); do
		PLAN=$(tail -n +$(($2 + 1)) "$1" | grep -m1 'event=kube_plan ') && return 0
		sleep 0.1
	done
	PLAN=
	fail "no plan in $(basename "$1") within $3 s"
	return 1
}

# until_true SECONDS WHAT CMD...: until CMD succeeds (its output dropped).
until_true() {
	local limit=$1 what=$2
	shift 2
	for _ in $(seq 1 $((limit * 5))); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	fail "$what: not within $limit s"
	return 1
}
