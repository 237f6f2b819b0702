#!/usr/bin/env bash
# housekeeping.sh BUILD_DIR - the fleet forgets nodes that left and says so:
#   - a second coordinator on the same database refuses to start, naming the
#     holder's pid (a lock, not a hope); the lock goes with the process;
#   - `dratopo nodes --forget NAME` forgets a node (NOT_FOUND for a name the
#     fleet lacks, PERMISSION_DENIED for an agent's certificate), its type
#     leaves `dratopo types`, and it stays forgotten after a restart;
#   - --forget-after forgets a node silent that long (below --stale-after:
#     a usage error);
#   - the remedies of a drifted node name devices as the drivers do
#     (gpu-<minor>, DRANET's pci-<address>); once it matches again,
#     `dratopo nodes --lifts` prints them as DeviceTaintRule objects for
#     `kubectl delete -f -`, and `-o yaml` has no rule left for it (but the
#     dratopo-drift anchor, so that kubectl apply still gets an object).
NAME=housekeeping; DRIVES="$1/bin/dratopo-coordinator"; . "$(dirname "$0")/lib.sh"
COORD="$1/bin/dratopo-coordinator"
FX="$1/fixtures/agent"
CERTS="$TMP/tls"
export GRPC_VERBOSITY=NONE

[ -d "$FX/p5.48xlarge/sys" ] || bash "$ROOT/tests/fixtures/agent/mksysfs.sh" "$FX" >/dev/null
sh "$ROOT/tests/tls/mkcerts.sh" "$CERTS" gpu-a gpu-b gpu-c admin >/dev/null ||
	{ echo "mkcerts failed" >&2; exit 1; }
mtls() { echo --tls-cert "$CERTS/client-$1.pem" --tls-key "$CERTS/client-$1.key" --tls-ca "$CERTS/ca.pem"; }
SERVER=(--tls-cert "$CERTS/server.pem" --tls-key "$CERTS/server.key" --tls-ca "$CERTS/ca.pem")

agent() {   # agent NODE FIXTURE
	expect 0 "$AGENT" run --once --coordinator "127.0.0.1:$PORT" --node-name "$1" \
		--sysfs-root "$FX/$2" $(mtls "$1")
}
as() { local who=$1; shift; expect "$1" "$BIN" "${@:2}" --coordinator "127.0.0.1:$PORT" $(mtls "$who"); }

# ---- One coordinator per database ----------------------------------------
start_coord "$TMP/c1.log" --db "$TMP/fleet.db" "${SERVER[@]}"
expect 1 "$COORD" --listen 127.0.0.1:0 --db "$TMP/fleet.db" "${SERVER[@]}" &&
	has "$TMP/err" "fleet.db: the database is in use by another process \\(pid $COORD_PID, holding .*fleet.db.lock\\): one dratopo-coordinator per database" "second coordinator refused"
agent gpu-a p5.48xlarge
agent gpu-b g5.48xlarge
as admin 0 types && has "$TMP/out" '^g5\.48xlarge ' "types lists g5" && has "$TMP/out" '^p5\.48xlarge ' "types lists p5"

# ---- Forget by hand -------------------------------------------------------
as admin 1 nodes --forget nosuch && has "$TMP/err" 'no node nosuch' "forget an unknown node"
as gpu-a 1 nodes --forget gpu-b && has "$TMP/err" 'agents may not forget nodes' "an agent may not forget"
as admin 0 nodes --forget gpu-b && has "$TMP/err" 'forgot gpu-b' "forget"
as admin 0 nodes
grep -q '^gpu-b ' "$TMP/out" && fail "gpu-b still listed after --forget"
has "$TMP/out" '^gpu-a ' "gpu-a still listed"
as admin 0 types
grep -q '^g5\.48xlarge' "$TMP/out" && fail "a type with no node left stays in types"
grep -q 'event=node_forgotten node=gpu-b' "$TMP/c1.log" || fail "node_forgotten not logged"

# ---- Names as the drivers write them; lifts as objects --------------------
agent gpu-c p5.48xlarge-degraded
as admin 0 nodes -o yaml
# The degraded p5's GPU 0000:a8:00.0 is gone: gpu-0 .. gpu-6 remain; its
# EFAs are named pci-<address>.
has "$TMP/out" '^  name: dratopo-drift\.gpu-c\.pci-0000-[0-9a-f]{2}-00-0$' "a rule names an EFA by DRANET's name"
has "$TMP/out" 'device: pci-0000-[0-9a-f]{2}-00-0$' "selector names DRANET's device"
grep -q 'efa-[0-9]' "$TMP/out" && fail "a rule still names a placeholder efa-N"
grep '^  name: dratopo-drift\.' "$TMP/out" | sed 's/^  name: //' | sort >"$TMP/drift-rules"
[ -s "$TMP/drift-rules" ] || fail "no rule for the drifted node"
expect 0 "$BIN" validate -f "$TMP/out"
agent gpu-c p5.48xlarge            # the node matches again
as admin 0 nodes -o yaml
grep -q '^  name: dratopo-drift\.gpu-c\.' "$TMP/out" && fail "-o yaml still applies rules after the recovery"
has "$TMP/out" '^  name: dratopo-drift$' "-o yaml keeps an object for kubectl apply: the anchor"
has "$TMP/out" 'node gpu-c matches again: its remedies are lifted by dratopo nodes --lifts' "-o yaml points to --lifts"
as admin 0 nodes --lifts
has "$TMP/out" '^# and its Node taint: kubectl taint nodes gpu-c dratopo.io/drift:NoSchedule-$' "node taint lift"
grep -A3 '^kind: DeviceTaintRule' "$TMP/out" | sed -n 's/^  name: //p' | sort >"$TMP/lifted"
missing=$(comm -23 "$TMP/drift-rules" "$TMP/lifted")
[ -z "$missing" ] || fail "--lifts misses rules the drift made: $missing"
[ "$(grep -c '^apiVersion: resource.k8s.io/v1$' "$TMP/out")" = "$(wc -l <"$TMP/lifted")" ] ||
	fail "every lift document is a resource.k8s.io/v1 object"
as admin 2 nodes --lifts --forget gpu-c && has "$TMP/err" 'go alone' "--lifts with --forget"

# ---- Forgotten for good: a restart does not bring gpu-b back --------------
stop_coord
start_coord "$TMP/c2.log" --db "$TMP/fleet.db" "${SERVER[@]}"
as admin 0 nodes
grep -q '^gpu-b ' "$TMP/out" && fail "gpu-b came back after a restart"
has "$TMP/out" '^gpu-a ' "gpu-a after the restart"
stop_coord

# ---- --forget-after --------------------------------------------------------
expect 2 "$COORD" --insecure --db "$TMP/x.db" --interval 1s --stale-after 10s --forget-after 5s &&
	has "$TMP/err" '\-\-forget-after must be at least --stale-after' "forget-after below stale-after"
start_coord "$TMP/c3.log" --db "$TMP/fleet.db" "${SERVER[@]}" --interval 1s --stale-after 1s \
	--forget-after 1s
# gpu-a and gpu-c have been silent for over a second: the sweeper (every
# quarter of --forget-after) forgets them; wait for it, bounded.
for _ in $(seq 50); do
	grep -q 'event=node_forgotten node=gpu-c' "$TMP/c3.log" && break
	sleep 0.2
done
as admin 0 nodes
grep -Eq '^gpu-(a|c) ' "$TMP/out" && fail "--forget-after left silent nodes: $(cat "$TMP/out")"
as admin 0 types
grep -q '^p5\.48xlarge' "$TMP/out" && fail "p5 stays in types with no node left"
stop_coord
no_sanitizer_report "$TMP/c1.log" "coordinator"
no_sanitizer_report "$TMP/c3.log" "coordinator"
e2e_finish
