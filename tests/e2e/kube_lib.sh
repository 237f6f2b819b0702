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

# The tests share one control plane, and every coordinator plans every
# pending pod in it: what a test leaves (pods of a namespace still being
# deleted, NodeClaims its coordinator wrote for them) is capacity and
# demand to the next test's controller that an offline plan of its own
# objects does not see. Each test takes back all it made, and waits.

# drop_namespaces NS...: delete the namespaces and wait until they are gone.
# Their pods go first, forced: a pod bound to a Node no kubelet runs
# would stay Terminating forever, and its namespace with it.
drop_namespaces() {
	local ns
	for ns in "$@"; do
		"$K" -n "$ns" delete pods --all --force --grace-period=0 --wait=false >/dev/null 2>&1
		"$K" delete namespace "$ns" --ignore-not-found --wait=false >/dev/null 2>&1
	done
	for ns in "$@"; do
		"$K" wait --for=delete "namespace/$ns" --timeout=60s >/dev/null 2>&1 ||
			echo "cleanup: namespace $ns still there after 60 s" >&2
	done
}

# drop_written_claims LOG...: delete every NodeClaim that the coordinators
# of these logs wrote (for this test's pods or, in a shared cluster, any
# other pending pod they saw).
drop_written_claims() {
	grep -ho 'event=nodeclaim_created name=[^ ]*' "$@" 2>/dev/null | sed 's/.*name=//' | sort -u |
		while read -r n; do
			"$K" delete nodeclaim "$n" --ignore-not-found --wait=false >/dev/null 2>&1
		done
}

# quiet_cluster SECONDS: until no NodeClaim and no pending pod of another
# test is left (a test that compares the controller with an offline plan
# of its own objects needs a cluster that holds only them); names what
# is still there when the time is up.
quiet_cluster() {
	local left
	for _ in $(seq 1 $(($1 * 5))); do
		left=$({ "$K" get nodeclaims -o name
			"$K" get pods -A --field-selector status.phase=Pending \
				-o jsonpath='{range .items[*]}pod/{.metadata.namespace}/{.metadata.name}{"\n"}{end}'
		} 2>/dev/null | grep -v "^pod/$NS/")
		[ -z "$left" ] && return 0
		sleep 0.2
	done
	fail "left in the cluster by another test: $(echo $left)"
	return 1
}
