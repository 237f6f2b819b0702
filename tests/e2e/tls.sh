#!/usr/bin/env bash
# tls.sh BUILD_DIR - what the CLI, the agent and the coordinator say when
# the TLS settings of the two sides do not fit (QA-27): for each case the
# exact line `dratopo nodes` prints, and nothing of gRPC's own log on its
# stderr unless GRPC_VERBOSITY asks for it:
#   - a client certificate of another CA, an expired one;
#   - --insecure against an mTLS coordinator, TLS against an --insecure one;
#   - a --tls-ca that does not trust the coordinator, an expired coordinator
#     certificate, one for another name; nothing listening;
#   - the agent's report_failed line (diagnosed once per run of failures);
#   - the coordinator's tls_handshake_failed events.
# Four coordinators on ports they pick; only 127.0.0.1, so no name is
# resolved (no c-ares under LSan).
NAME=tls; DRIVES="$1/bin/dratopo-coordinator"; . "$(dirname "$0")/lib.sh"
COORD="$1/bin/dratopo-coordinator"
FX="$1/fixtures/agent"
C="$TMP/tls"
PIDS=()
unset GRPC_VERBOSITY    # the CLI's default: gRPC's lines stay off stderr
trap 'for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done; rm -rf "$TMP"' EXIT

[ -d "$FX/p5.48xlarge/sys" ] || bash "$ROOT/tests/fixtures/agent/mksysfs.sh" "$FX" >/dev/null
sh "$ROOT/tests/tls/mkcerts.sh" "$C" admin node-01 >/dev/null || { echo "mkcerts failed" >&2; exit 1; }

# start NAME ARGS...: a coordinator logging to $TMP/NAME.log; its address in ADDR_NAME.
start() {
	local name=$1 port=""; shift
	"$COORD" --listen 127.0.0.1:0 --db "$TMP/$name.db" "$@" 2>"$TMP/$name.log" &
	PIDS+=($!)
	for _ in $(seq 100); do
		port=$(grep -o 'grpc_port=[0-9]*' "$TMP/$name.log" | cut -d= -f2)
		[ -n "$port" ] && break
		kill -0 "${PIDS[-1]}" 2>/dev/null || break
		sleep 0.1
	done
	[ -n "$port" ] || { fail "coordinator $name did not start: $(cat "$TMP/$name.log")"; e2e_finish; }
	printf -v "ADDR_$name" '127.0.0.1:%s' "$port"
}
files() { echo --tls-cert "$C/$1.pem" --tls-key "$C/$1.key" --tls-ca "$C/$2.pem"; }

# says WHAT LINE: $TMP/err is exactly LINE (one line, no gRPC log before it).
says() {
	local got
	got=$(cat "$TMP/err")
	[ "$got" = "$2" ] || fail "$1: stderr is
  $got
want
  $2"
}

start mtls $(files server ca)
start plain --insecure
start expired $(files expired-server ca)
start wrongname $(files wrongname-server ca)
# a port nobody listens on: a coordinator's, after it stopped
start gone --insecure
kill "${PIDS[-1]}" && wait "${PIDS[-1]}" 2>/dev/null

# ---- the CLI ----
expect 0 "$BIN" nodes --coordinator "$ADDR_mtls" $(files client-admin ca) && says "good client" ""
expect 1 "$BIN" nodes --coordinator "$ADDR_mtls" $(files other-client ca) &&
	says "client certificate of another CA" "dratopo nodes: coordinator $ADDR_mtls: the coordinator refused this client's certificate during the TLS handshake: is --tls-cert $C/other-client.pem signed by the CA the coordinator trusts (its --tls-ca)? It is not signed by --tls-ca $C/ca.pem either (unable to get local issuer certificate)"
expect 1 "$BIN" nodes --coordinator "$ADDR_mtls" $(files expired-client ca)
has "$TMP/err" "^dratopo nodes: coordinator $ADDR_mtls: the coordinator refused this client's certificate during the TLS handshake: --tls-cert $C/expired-client.pem has expired \(not after [0-9T:-]+Z\): renew it\$" "expired client certificate"
expect 1 "$BIN" nodes --coordinator "$ADDR_mtls" --insecure &&
	says "--insecure against mTLS" "dratopo nodes: coordinator $ADDR_mtls: the coordinator speaks TLS: drop --insecure and give --tls-cert, --tls-key and --tls-ca"
expect 1 "$BIN" nodes --coordinator "$ADDR_plain" $(files client-admin ca) &&
	says "TLS against --insecure" "dratopo nodes: coordinator $ADDR_plain: the coordinator is not speaking TLS (started with --insecure?): give --insecure instead of the --tls-* files, or start it with --tls-cert, --tls-key and --tls-ca"
expect 1 "$BIN" nodes --coordinator "$ADDR_mtls" $(files client-admin other-ca)
has "$TMP/err" "^dratopo nodes: coordinator $ADDR_mtls: the coordinator's certificate is not trusted by --tls-ca $C/other-ca.pem: [a-z -]+ \(is that the CA that signed the coordinator's --tls-cert\?\)\$" "server not trusted"
[ "$(wc -l <"$TMP/err")" = 1 ] || fail "server not trusted: one line, no gRPC log: $(cat "$TMP/err")"
expect 1 "$BIN" nodes --coordinator "$ADDR_expired" $(files client-admin ca) &&
	says "expired coordinator certificate" "dratopo nodes: coordinator $ADDR_expired: the coordinator's certificate is not valid now: certificate has expired (renew the coordinator's --tls-cert, or check the clocks)"
expect 1 "$BIN" nodes --coordinator "$ADDR_wrongname" $(files client-admin ca) &&
	says "name mismatch" "dratopo nodes: coordinator $ADDR_wrongname: the coordinator's certificate is not for 127.0.0.1 (name mismatch: it names DNS:elsewhere.example): connect by one of those names, or give the coordinator a certificate with IP:127.0.0.1"
expect 1 "$BIN" types --coordinator "$ADDR_gone" --insecure &&
	says "nothing listening" "dratopo types: coordinator $ADDR_gone: connection refused: is the coordinator running, and is this its --listen address?"
expect 1 "$BIN" plan --coordinator "$ADDR_gone" $(files client-admin ca) -f "$ROOT/tests/fixtures/coordinator/one-gpu-pods.yaml" &&
	says "nothing listening (plan)" "dratopo plan: coordinator $ADDR_gone: connection refused: is the coordinator running, and is this its --listen address?"
# gRPC's own lines only when asked for, and then in the CLI's form
GRPC_VERBOSITY=ERROR expect 1 "$BIN" nodes --coordinator "$ADDR_mtls" $(files client-admin other-ca) &&
	has "$TMP/err" '^dratopo: grpc E [^ ]*ssl_transport_security\.cc:[0-9]+: Handshake failed' "GRPC_VERBOSITY shows gRPC's line"

# ---- TLS settings from the environment and a config file, a server name ----
# --tls-server-name: the name the certificate carries when the address is
# not one (a port-forward to localhost, an IP)
expect 0 "$BIN" nodes --coordinator "$ADDR_wrongname" $(files client-admin ca) \
	--tls-server-name elsewhere.example && says "--tls-server-name" ""
expect 1 "$BIN" nodes --coordinator "$ADDR_wrongname" $(files client-admin ca) \
	--tls-server-name nowhere.example &&
	says "a server name the certificate lacks" "dratopo nodes: coordinator $ADDR_wrongname: the coordinator's certificate is not for nowhere.example (--tls-server-name) (name mismatch: it names DNS:elsewhere.example): name one of those with --tls-server-name, or give the coordinator a certificate with DNS:nowhere.example"
expect 2 "$BIN" nodes --coordinator "$ADDR_plain" --insecure --tls-server-name x &&
	says "server name without TLS" "dratopo nodes: --insecure contradicts --tls-server-name"
# the environment
DRATOPO_TLS_CERT="$C/client-admin.pem" DRATOPO_TLS_KEY="$C/client-admin.key" \
	DRATOPO_TLS_CA="$C/ca.pem" DRATOPO_TLS_SERVER_NAME=elsewhere.example \
	expect 0 "$BIN" types --coordinator "$ADDR_wrongname" && says "settings from the environment" ""
DRATOPO_INSECURE=true expect 0 "$BIN" types --coordinator "$ADDR_plain" &&
	says "DRATOPO_INSECURE" ""
# flags win: --insecure is not mixed with the environment's files
DRATOPO_TLS_CERT="$C/client-admin.pem" DRATOPO_TLS_KEY="$C/client-admin.key" \
	DRATOPO_TLS_CA="$C/ca.pem" expect 0 "$BIN" types --coordinator "$ADDR_plain" --insecure &&
	says "flags win over the environment" ""
DRATOPO_INSECURE=maybe expect 2 "$BIN" types --coordinator "$ADDR_plain" &&
	says "a bad DRATOPO_INSECURE" 'dratopo types: $DRATOPO_INSECURE="maybe": expected true or false'
# a config file; its paths are relative to it
mkdir -p "$TMP/home/.config/dratopo" "$TMP/cfg"
cp "$C/client-admin.pem" "$C/client-admin.key" "$C/ca.pem" "$TMP/cfg/"
printf '# the CLI certificate\ntlsCert: client-admin.pem\ntlsKey: client-admin.key\ntlsCA: ca.pem\ntlsServerName: elsewhere.example\n' \
	>"$TMP/cfg/config.yaml"
DRATOPO_CONFIG="$TMP/cfg/config.yaml" expect 0 "$BIN" nodes --coordinator "$ADDR_wrongname" &&
	says "settings from \$DRATOPO_CONFIG" ""
cp "$TMP/cfg/config.yaml" "$TMP/home/.config/dratopo/config.yaml"
sed -i "s|: client-admin|: $TMP/cfg/client-admin|; s|: ca.pem|: $TMP/cfg/ca.pem|" \
	"$TMP/home/.config/dratopo/config.yaml"
HOME="$TMP/home" XDG_CONFIG_HOME= expect 0 "$BIN" hwdb show p5.48xlarge \
	--coordinator "$ADDR_wrongname" && says "~/.config/dratopo/config.yaml" ""
# the flags' --tls-server-name over the file's
HOME="$TMP/home" XDG_CONFIG_HOME= expect 1 "$BIN" nodes --coordinator "$ADDR_wrongname" \
	--tls-server-name nowhere.example
has "$TMP/err" "not for nowhere.example \(--tls-server-name\)" "flags win over the file"
HOME="$TMP/nohome" XDG_CONFIG_HOME= expect 2 "$BIN" nodes --coordinator "$ADDR_mtls" &&
	says "no settings anywhere" "dratopo nodes: no TLS settings: give --tls-cert, --tls-key and --tls-ca (or \$DRATOPO_TLS_CERT, _KEY and _CA, or tlsCert, tlsKey and tlsCA in $TMP/nohome/.config/dratopo/config.yaml), or --insecure"
printf 'tlsCert: a.pem\n' >"$TMP/cfg/half.yaml"
DRATOPO_CONFIG="$TMP/cfg/half.yaml" expect 2 "$BIN" nodes --coordinator "$ADDR_mtls" &&
	says "a half configuration" "dratopo nodes: mTLS needs --tls-cert, --tls-key and --tls-ca (missing --tls-key); plaintext needs --insecure (settings from the flags, \$DRATOPO_TLS_* and $TMP/cfg/half.yaml)"
printf 'tlsCert: a.pem\ntlsKye: b.key\n' >"$TMP/cfg/typo.yaml"
DRATOPO_CONFIG="$TMP/cfg/typo.yaml" expect 2 "$BIN" nodes --coordinator "$ADDR_mtls" &&
	says "a typo in the file" "dratopo nodes: $TMP/cfg/typo.yaml:2: unknown key \"tlsKye\" (tlsCert, tlsKey, tlsCA, tlsServerName, insecure)"
printf 'insecure: maybe\n' >"$TMP/cfg/bool.yaml"
DRATOPO_CONFIG="$TMP/cfg/bool.yaml" expect 2 "$BIN" nodes --coordinator "$ADDR_mtls" &&
	says "a non-boolean insecure" "dratopo nodes: $TMP/cfg/bool.yaml:1: insecure: expected true or false"
DRATOPO_CONFIG="$TMP/cfg/missing.yaml" expect 2 "$BIN" nodes --coordinator "$ADDR_mtls" &&
	says "a missing \$DRATOPO_CONFIG" "dratopo nodes: \$DRATOPO_CONFIG: cannot read $TMP/cfg/missing.yaml: No such file or directory"
# the agent takes --tls-server-name too
expect 0 "$AGENT" run --once --coordinator "$ADDR_wrongname" --node-name node-01 \
	--sysfs-root "$FX/p5.48xlarge" $(files client-node-01 ca) --tls-server-name elsewhere.example
jqis '.verdict' '"match"' "agent with --tls-server-name"

# ---- the agent ----
expect 1 "$AGENT" run --once --coordinator "$ADDR_mtls" --node-name node-01 \
	--sysfs-root "$FX/p5.48xlarge" $(files other-client ca)
has "$TMP/err" "^ts=[^ ]+ level=warn event=report_failed coordinator=$ADDR_mtls status=UNAVAILABLE error=\"coordinator $ADDR_mtls: the coordinator refused this client's certificate during the TLS handshake: is --tls-cert $C/other-client.pem signed" "agent: diagnosed refusal"
grep -Ev '^ts=[^ ]+ level=[a-z]+ event=' "$TMP/err" | grep -q . && fail "agent: a line that is not logfmt: $(grep -Ev '^ts=' "$TMP/err" | head -1)"
# A run of failures is diagnosed and logged at warn once; the retries are
# debug. Wait (bounded, 30 s for retries 1 s, 2 s, 4 s apart) for three
# failures, then count.
"$AGENT" run --coordinator "$ADDR_plain" --node-name node-01 --sysfs-root "$FX/p5.48xlarge" \
	$(files client-node-01 ca) 2>"$TMP/agent.log" &
PIDS+=($!)
for _ in $(seq 300); do
	[ "$(grep -c 'event=backoff' "$TMP/agent.log")" -ge 3 ] && break
	sleep 0.1
done
kill "${PIDS[-1]}" && wait "${PIDS[-1]}" 2>/dev/null
no_sanitizer_report "$TMP/agent.log" "agent run"
[ "$(grep -c 'event=backoff' "$TMP/agent.log")" -ge 3 ] || fail "agent: no three retries: $(cat "$TMP/agent.log")"
[ "$(grep -c 'event=report_failed' "$TMP/agent.log")" = 1 ] ||
	fail "agent: one report_failed per run of failures: $(grep -c 'event=report_failed' "$TMP/agent.log")"
has "$TMP/agent.log" "event=report_failed .*error=\"coordinator $ADDR_plain: the coordinator is not speaking TLS \(started with --insecure\?\)" "agent: TLS against --insecure"

# ---- the coordinators' side ----
for name in mtls plain expired wrongname; do
	no_sanitizer_report "$TMP/$name.log" "coordinator $name"
	grep -q 'event=grpc .*Handshake failed' "$TMP/$name.log" &&
		fail "coordinator $name: a handshake failure logged as a raw gRPC line"
done
has "$TMP/mtls.log" '^ts=[^ ]+ level=warn event=tls_handshake_failed reason="certificate verify failed" hint="a client certificate that --tls-ca does not verify \(another CA.s, or expired\)"$' "coordinator: refused client certificate"
has "$TMP/mtls.log" 'event=tls_handshake_failed reason="wrong version number" hint="a client not speaking TLS' "coordinator: plaintext client"
grep -Eq 'BEGIN|PRIVATE' "$TMP/mtls.log" && fail "coordinator: certificate or key bytes in the log"

e2e_finish
