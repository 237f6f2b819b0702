#!/usr/bin/env bash
# rotate.sh BUILD_DIR - certificates rotated under running daemons, the way
# kubelet and cert-manager's CSI driver rotate them: a new directory and an
# atomic rename of the volume's ..data symlink, the files read through it.
#   - an agent started with an expired client certificate is unhealthy
#     (/healthz, /readyz, metrics) and logs why; renewed in place, it
#     reports at once, without a restart and without waiting its backoff;
#   - the coordinator's server certificate renewed in place is what new
#     connections get; a CA bundle extended in place lets the new CA's
#     clients in; an expired server certificate fails /readyz; a half-
#     written pair is refused with the old files kept;
#   - SIGHUP re-reads the files in both daemons (the agent lives on);
#   - the agent's /healthz, /readyz and /metrics, and its run options;
#   - SIGTERM of a coordinator with an agent connected;
#   - --version on every program, the coordinator's refused options.
NAME=rotate; DRIVES="$1/bin/dratopo-agent-run"; . "$(dirname "$0")/lib.sh"
COORD="$1/bin/dratopo-coordinator"
FX="$1/fixtures/agent"
C="$TMP/certs"          # the CA both daemons start with
N="$TMP/newca"          # the CA rotated in
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done; rm -rf "$TMP"' EXIT

[ -d "$FX/p5.48xlarge/sys" ] || bash "$ROOT/tests/fixtures/agent/mksysfs.sh" "$FX" >/dev/null
sh "$ROOT/tests/tls/mkcerts.sh" "$C" admin node-01 >/dev/null &&
	sh "$ROOT/tests/tls/mkcerts.sh" "$N" admin >/dev/null ||
	{ echo "mkcerts failed" >&2; exit 1; }

# A second server certificate of the first CA, for the renewal.
openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=coordinator \
	-keyout "$C/server2.key" -out "$TMP/server2.csr" 2>/dev/null &&
	printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' \
		>"$TMP/server2.ext" &&
	openssl x509 -req -in "$TMP/server2.csr" -CA "$C/ca.pem" -CAkey "$C/ca.key" -days 2 \
		-set_serial 0x5ec0de -extfile "$TMP/server2.ext" -out "$C/server2.pem" 2>/dev/null ||
	{ echo "openssl failed" >&2; exit 1; }

# volume DIR GEN CERT KEY CA: write generation GEN of a Secret volume as
# kubelet's atomic writer does; the files are DIR/tls.crt, tls.key, ca.crt.
volume() {
	local dir=$1 gen=$2 old
	mkdir -p "$dir/..$gen"
	cp "$3" "$dir/..$gen/tls.crt" && cp "$4" "$dir/..$gen/tls.key" && cp "$5" "$dir/..$gen/ca.crt"
	old=$(readlink "$dir/..data" 2>/dev/null)
	ln -s "..$gen" "$dir/..data_tmp" && mv -T "$dir/..data_tmp" "$dir/..data"
	for f in tls.crt tls.key ca.crt; do
		[ -L "$dir/$f" ] || ln -s "..data/$f" "$dir/$f"
	done
	[ -z "$old" ] || rm -rf "${dir:?}/$old"
}
vfiles() { echo --tls-cert "$1/tls.crt" --tls-key "$1/tls.key" --tls-ca "$1/ca.crt"; }

# wait_log FILE REGEX WHAT: wait (up to 20 s) for a line of FILE to match.
wait_log() {
	for _ in $(seq 200); do
		grep -Eq -- "$2" "$1" && return 0
		sleep 0.1
	done
	fail "$3: no line matching /$2/ in $(basename "$1"):"
	tail -5 "$1" | sed 's/^/    /' >&2
	return 1
}

# http PORT PATH: the status code in $TMP/code, the body in $TMP/body.
http() {
	curl -s -o "$TMP/body" -w '%{http_code}' "http://127.0.0.1:$1$2" >"$TMP/code" ||
		echo 000 >"$TMP/code"
}
# http_is PORT PATH CODE WHAT
http_is() {
	http "$1" "$2"
	[ "$(cat "$TMP/code")" = "$3" ] ||
		fail "$4: $2 answered $(cat "$TMP/code"), want $3: $(head -c 300 "$TMP/body")"
}
# metric PORT LINE WHAT: /metrics has the exact line
metric() {
	http "$1" /metrics
	grep -qxF -- "$2" "$TMP/body" || fail "$3: no line '$2' in /metrics"
}
# wait_metric PORT LINE WHAT: until /metrics has the exact line (up to 20 s);
# wait_metric -E PORT REGEX WHAT: until a line matches REGEX whole
wait_metric() {
	local how=-F
	[ "$1" != -E ] || { how=-E; shift; }
	for _ in $(seq 200); do
		http "$1" /metrics
		grep -qx "$how" -- "$2" "$TMP/body" && return 0
		sleep 0.1
	done
	fail "$3: no line of /metrics matched '$2'"
}
# port_of LOG KEY: KEY=N from the start line of LOG (waits up to 10 s)
port_of() {
	for _ in $(seq 100); do
		grep -o "$2=[0-9]*" "$1" | head -1 | cut -d= -f2 | grep . && return 0
		sleep 0.1
	done
	return 1
}
# serial_seen PORT: the serial of the certificate the coordinator presents now
serial_seen() {
	openssl s_client -connect "127.0.0.1:$1" -alpn h2 -cert "$C/client-admin.pem" \
		-key "$C/client-admin.key" -CAfile "$C/ca.pem" </dev/null 2>/dev/null |
		openssl x509 -noout -serial 2>/dev/null
}

CV="$TMP/coord-tls" AV="$TMP/agent-tls"
volume "$CV" gen1 "$C/server.pem" "$C/server.key" "$C/ca.pem"
volume "$AV" gen1 "$C/expired-client.pem" "$C/expired-client.key" "$C/ca.pem"

"$COORD" --listen 127.0.0.1:0 --http 127.0.0.1:0 --db "$TMP/fleet.db" $(vfiles "$CV") \
	2>"$TMP/coord.log" &
PIDS+=($!) CPID=$!
GRPC=$(port_of "$TMP/coord.log" grpc_port) && CHTTP=$(port_of "$TMP/coord.log" http_port) ||
	{ fail "the coordinator did not start: $(cat "$TMP/coord.log")"; e2e_finish; }

# ---- failure counters have their series before any failure ----
metric "$CHTTP" 'dratopo_rpc_failed_total{method="Report",code="UNAVAILABLE"} 0' "rpc failures from the start"
metric "$CHTTP" 'dratopo_rpc_failed_total{method="ListNodes",code="PERMISSION_DENIED"} 0' "every method"
metric "$CHTTP" 'dratopo_store_errors_total{op="commit"} 0' "store errors from the start"
metric "$CHTTP" 'dratopo_tls_reloads_total{result="failed"} 0' "TLS reload failures from the start"
metric "$CHTTP" "dratopo_tls_certificate_valid 1" "the coordinator's certificate is valid"

# ---- --version on every program ----
for prog in dratopo dratopo-agent dratopo-coordinator; do
	expect 0 "$1/bin/$prog" --version
	grep -Eqx "$prog [0-9]+\.[0-9]+\.[0-9]+" "$TMP/out" || fail "$prog --version: $(cat "$TMP/out")"
done
# and the coordinator's --listen names its port
expect 2 "$COORD" --listen 127.0.0.1 --insecure --db "$TMP/x.db"
has "$TMP/err" '^dratopo-coordinator: --listen: address "127.0.0.1" has no port' "--listen without a port"
expect 2 "$COORD" --listen 127.0.0.1:0 --insecure --db "$TMP/x.db" --interval 1m --stale-after 30s
has "$TMP/err" '^dratopo-coordinator: --stale-after must not be shorter than --interval' \
	"--stale-after shorter than --interval"
[ ! -e "$TMP/x.db" ] || fail "a refused start wrote a database"

# ---- the agent's options ----
expect 2 "$AGENT" run --coordinator 127.0.0.1:1 --insecure --interval 30s --unhealthy-after 10s
has "$TMP/err" '^dratopo-agent run: --unhealthy-after must not be shorter than --interval' \
	"unhealthy-after shorter than the interval"
expect 1 "$AGENT" run --coordinator 127.0.0.1:1 --insecure --http 127.0.0.1
has "$TMP/err" 'expected HOST:PORT' "--http without a port"
expect 2 "$AGENT" run --coordinator 127.0.0.1:1 --insecure --tls-server-name x
has "$TMP/err" '^dratopo-agent run: --insecure contradicts --tls-server-name' "server name without TLS"
expect 1 "$AGENT" run --coordinator 127.0.0.1:1 --insecure --http 127.0.0.1:$CHTTP \
	--sysfs-root "$FX/p5.48xlarge" --node-name node-01
has "$TMP/err" "127.0.0.1:$CHTTP" "an --http port in use is named"

# ---- an agent whose certificate expired: unhealthy, and says why ----
"$AGENT" run --coordinator "127.0.0.1:$GRPC" $(vfiles "$AV") --http 127.0.0.1:0 \
	--interval 2s --sysfs-root "$FX/p5.48xlarge" --node-name node-01 --log-level debug \
	2>"$TMP/agent.log" &
PIDS+=($!) APID=$!
AHTTP=$(port_of "$TMP/agent.log" http_port) ||
	{ fail "the agent did not start: $(cat "$TMP/agent.log")"; e2e_finish; }
wait_log "$TMP/agent.log" 'level=error event=tls_certificate_invalid role=client error="client certificate .*/tls.crt expired at [0-9T:-]+Z"' \
	"the expired certificate is logged"
http_is "$AHTTP" /healthz 503 "expired client certificate"
grep -Eq "^client certificate $AV/tls.crt expired at [0-9T:-]+Z$" "$TMP/body" ||
	fail "/healthz says why: $(cat "$TMP/body")"
http_is "$AHTTP" /readyz 503 "expired client certificate"
metric "$AHTTP" "dratopo_tls_certificate_valid 0" "the agent's certificate is invalid"
metric "$AHTTP" 'dratopo_tls_reloads_total{result="failed"} 0' "failure counters from the start"
# it keeps trying, backing off (at least 2 s between tries by now)
wait_log "$TMP/agent.log" 'event=backoff retry_in=(([2-9][0-9]{3}|[1-9][0-9]{4,})ms|[0-9]+s)$' \
	"the agent backs off"
wait_metric -E "$AHTTP" 'dratopo_agent_consecutive_failures [3-9][0-9]*' "failures counted"
metric "$AHTTP" "dratopo_agent_reports_total 0" "nothing acknowledged"

# ---- renewed in place: reported at once, healthy, no restart ----
volume "$AV" gen2 "$C/client-node-01.pem" "$C/client-node-01.key" "$C/ca.pem"
wait_log "$TMP/agent.log" 'event=tls_reload role=client reason=changed result=ok' "the agent reloads"
wait_log "$TMP/agent.log" 'level=info event=reported node=node-01 seq=[0-9]+ verdict=match after_failures=[3-9]' \
	"the renewed certificate reports"
kill -0 "$APID" 2>/dev/null || fail "the agent restarted or died"
# at once: the TLS change sent the waiting report, not its backoff's timer
! sed -n '/event=tls_reload role=client/,/event=reported/p' "$TMP/agent.log" | grep -q 'event=backoff' ||
	fail "the agent waited for a backoff after the renewal"
http_is "$AHTTP" /healthz 200 "renewed client certificate"
http_is "$AHTTP" /readyz 200 "renewed client certificate"
metric "$AHTTP" "dratopo_tls_certificate_valid 1" "the agent's certificate is valid"
metric "$AHTTP" 'dratopo_tls_reloads_total{result="ok"} 1' "one reload"
metric "$AHTTP" 'dratopo_agent_verdict{verdict="match"} 1' "the coordinator's verdict"
grep -q '^dratopo_agent_report_failures_total{code="UNAVAILABLE"} [1-9]' "$TMP/body" ||
	fail "the failed reports are counted by status"
expect 0 "$BIN" nodes --coordinator "127.0.0.1:$GRPC" --tls-cert "$C/client-admin.pem" \
	--tls-key "$C/client-admin.key" --tls-ca "$C/ca.pem" -o json
jqis '[.nodes[] | {name, verdict}]' '[{"name":"node-01","verdict":"match"}]' "the node is in the fleet"
http_is "$AHTTP" /nothing 404 "other paths"

# ---- the coordinator's certificate renewed in place ----
want=$(openssl x509 -in "$C/server2.pem" -noout -serial)
[ "$(serial_seen "$GRPC")" != "$want" ] || fail "the new certificate is served before the swap"
volume "$CV" gen2 "$C/server2.pem" "$C/server2.key" "$C/ca.pem"
wait_log "$TMP/coord.log" 'event=tls_reload role=server reason=changed result=ok' "the coordinator reloads"
[ "$(serial_seen "$GRPC")" = "$want" ] || fail "new connections do not get the renewed certificate"
metric "$CHTTP" 'dratopo_tls_reloads_total{result="ok"} 1' "the coordinator counts it"

# ---- a CA bundle extended in place: the new CA's clients get in ----
expect 1 "$BIN" nodes --coordinator "127.0.0.1:$GRPC" --tls-cert "$N/client-admin.pem" \
	--tls-key "$N/client-admin.key" --tls-ca "$C/ca.pem"
cat "$C/ca.pem" "$N/ca.pem" >"$TMP/bundle.pem"
volume "$CV" gen3 "$C/server2.pem" "$C/server2.key" "$TMP/bundle.pem"
wait_metric "$CHTTP" 'dratopo_tls_reloads_total{result="ok"} 2' "the bundle is reloaded"
expect 0 "$BIN" nodes --coordinator "127.0.0.1:$GRPC" --tls-cert "$N/client-admin.pem" \
	--tls-key "$N/client-admin.key" --tls-ca "$C/ca.pem"

# ---- a half-written pair is refused, the old files stay ----
volume "$CV" gen4 "$C/server.pem" "$C/server2.key" "$TMP/bundle.pem"
wait_log "$TMP/coord.log" 'level=error event=tls_reload role=server reason=changed result="failed, old files kept" error="key .*/tls.key does not belong to certificate .*/tls.crt"' \
	"a mismatched pair is refused"
metric "$CHTTP" 'dratopo_tls_reloads_total{result="failed"} 1' "the refusal is counted"
expect 0 "$BIN" nodes --coordinator "127.0.0.1:$GRPC" --tls-cert "$C/client-admin.pem" \
	--tls-key "$C/client-admin.key" --tls-ca "$C/ca.pem"
[ "$(serial_seen "$GRPC")" = "$want" ] || fail "the old files are no longer served"

# ---- an expired server certificate fails readiness ----
volume "$CV" gen5 "$C/expired-server.pem" "$C/expired-server.key" "$TMP/bundle.pem"
wait_metric "$CHTTP" "dratopo_tls_certificate_valid 0" "the coordinator's certificate expired"
http_is "$CHTTP" /readyz 503 "expired server certificate"
grep -Eq "^server certificate $CV/tls.crt expired at [0-9T:-]+Z$" "$TMP/body" ||
	fail "/readyz says why: $(cat "$TMP/body")"
wait_log "$TMP/coord.log" 'level=error event=tls_certificate_invalid role=server' "and logs it"
volume "$CV" gen6 "$C/server.pem" "$C/server.key" "$TMP/bundle.pem"
wait_metric "$CHTTP" "dratopo_tls_certificate_valid 1" "a valid certificate again"
http_is "$CHTTP" /readyz 200 "valid server certificate"

# ---- SIGHUP: both daemons read their files again, the agent lives on ----
kill -HUP "$APID"
wait_log "$TMP/agent.log" 'event=tls_reload role=client reason=signal result=ok' "SIGHUP reloads the agent"
kill -HUP "$CPID"
wait_log "$TMP/coord.log" 'event=tls_reload role=server reason=signal result=ok' \
	"SIGHUP reloads the coordinator"
sleep 0.5
kill -0 "$APID" 2>/dev/null || fail "the agent died on SIGHUP"
kill -0 "$CPID" 2>/dev/null || fail "the coordinator died on SIGHUP"
http_is "$AHTTP" /healthz 200 "the agent after SIGHUP"

# ---- SIGTERM of the coordinator with the agent connected: it stops ----
kill -TERM "$CPID"
for _ in $(seq 100); do kill -0 "$CPID" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$CPID" 2>/dev/null; then
	fail "the coordinator did not stop on SIGTERM"
else
	wait "$CPID"; rc=$?
	[ "$rc" = 0 ] || fail "the coordinator exited $rc on SIGTERM"
fi
grep -q 'event=stopped' "$TMP/coord.log" || fail "no stopped line"
no_sanitizer_report "$TMP/coord.log" "coordinator"
kill -TERM "$APID"; wait "$APID"
no_sanitizer_report "$TMP/agent.log" "agent"

e2e_finish
