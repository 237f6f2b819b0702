#!/bin/bash
# tests/e2e/corpus_apiserver.sh BUILD_DIR [KUBE_DIR] - the upstream corpus
# (tests/fixtures/corpus/) against a real kube-apiserver: every file whose
# kinds the server serves is sent with a server-side dry run (kubectl apply;
# kubectl create for generateName, which apply refuses), after its
# namespaces are made for real, and the API server's verdict (accepted or
# refused) must be the one SOURCES.tsv records for `dratopo validate` - and
# dratopo's own. KUBE_DIR (default $DT_KUBE_DIR) holds a control plane from
# tools/dev kube-up; files of versions it does not serve (the beta and alpha
# APIs are off by default), and pods naming a PodGroup where the server has
# no PodGroups (their schedulingGroup is dropped unchecked there), are
# counted and left out: run it against one restarted with
# --runtime-config=api/all=true --feature-gates=AllAlpha=true,AllBeta=true
# to compare every file.
NAME=corpus_apiserver; . "$(dirname "$0")/lib.sh"
KDIR="${2:-${DT_KUBE_DIR:-}}"
[ -n "$KDIR" ] && [ -f "$KDIR/kubeconfig" ] || { echo "FAIL: no control plane (KUBE_DIR)" >&2; exit 1; }
export KUBECONFIG="$KDIR/kubeconfig"
K="$KDIR/bin/kubectl"
C="$ROOT/tests/fixtures/corpus"
SRC="$C/SOURCES.tsv"
E2E_TIMEOUT=120
# the namespaces made for the files go with the test (the dry runs made nothing in them)
trap '[ -f "$TMP/made-ns" ] && xargs -r "$K" delete namespace --wait=false <"$TMP/made-ns" >/dev/null 2>&1; e2e_cleanup' EXIT

# The kinds the server serves, as "group/version Kind" lines (discovery).
{
	"$K" get --raw /api/v1 | jq -r '.resources[] | select(.name | contains("/") | not) |
		"v1 " + .kind'
	for gv in $("$K" get --raw /apis | jq -r '.groups[].versions[].groupVersion'); do
		"$K" get --raw "/apis/$gv" | jq -r --arg gv "$gv" \
			'.resources[] | select(.name | contains("/") | not) | $gv + " " + .kind'
	done
} >"$TMP/served" || fail "discovery"

# split FILE: its documents, Namespaces apart (made for real), the rest to
# be sent; prints the apiVersion/kind pairs, or "unparsable".
split() {
	python3 - "$1" "$TMP/ns.yaml" "$TMP/rest.yaml" <<'PY'
import sys, yaml
try:
    docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d is not None]
except Exception:
    print("unparsable")
    sys.exit(0)
ns = [d for d in docs if isinstance(d, dict) and d.get("kind") == "Namespace"]
rest = [d for d in docs if d not in ns]
open(sys.argv[2], "w").write(yaml.safe_dump_all(ns) if ns else "")
open(sys.argv[3], "w").write(yaml.safe_dump_all(rest))
for d in rest:
    if isinstance(d, dict):
        print(d.get("apiVersion"), d.get("kind"))
PY
}

compared=0 skipped=0
while IFS=$'\t' read -r rel _ _ _ want_v _ _; do
	case "$rel" in '#'* | '') continue ;; esac
	f="$C/$rel"
	kinds=$(split "$f")
	if [ "$kinds" = unparsable ]; then
		cp "$f" "$TMP/rest.yaml"        # kubectl says its own parse error
		: >"$TMP/ns.yaml"
	else
		missing=$(echo "$kinds" | while read -r gv k; do
			grep -qxF "$gv $k" "$TMP/served" || echo "$gv $k"; done)
		# A file dratopo accepts of a version this server does not serve
		# (an API left off by its --runtime-config): a configuration
		# matter, left out. One dratopo refuses is compared: both must
		# refuse it.
		if [ -n "$missing" ] && [ "$want_v" = 0 ]; then
			skipped=$((skipped + 1))
			continue
		fi
		# A pod's schedulingGroup is dropped, unchecked, by a server
		# without the GenericWorkload gate: compared only where the
		# server serves PodGroups (the gate's API).
		if grep -q 'schedulingGroup' "$f" && ! grep -q ' PodGroup$' "$TMP/served"; then
			skipped=$((skipped + 1))
			continue
		fi
	fi
	[ -s "$TMP/ns.yaml" ] && "$K" apply -f "$TMP/ns.yaml" 2>/dev/null |
		sed -n 's#^namespace/\(.*\) created$#\1#p' >>"$TMP/made-ns"
	for ns in $(grep -hoE '^\s+namespace: *[a-z0-9-]+' "$f" | awk '{print $2}' | sort -u); do
		"$K" get namespace "$ns" >/dev/null 2>&1 || { "$K" create namespace "$ns" >/dev/null &&
			echo "$ns" >>"$TMP/made-ns"; }
	done
	verb=apply
	grep -q generateName "$f" && verb=create
	timeout 60 "$K" "$verb" --dry-run=server -f "$TMP/rest.yaml" >"$TMP/out" 2>"$TMP/err"
	got=$?
	[ "$got" -gt 1 ] && got=1
	compared=$((compared + 1))
	[ "$got" = "$want_v" ] || {
		fail "$rel: the API server says $got, SOURCES.tsv (validate) $want_v"
		sed 's/^/  /' "$TMP/err" | head -3 >&2
	}
	expect "$want_v" "$BIN" validate -f "$f"
done <"$SRC"
[ "$compared" -ge 15 ] || fail "only $compared files compared"
e2e_finish "$compared files compared, $skipped of versions the server does not serve"
