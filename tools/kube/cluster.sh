#!/bin/bash
# tools/kube/cluster.sh - a throwaway Kubernetes control plane on loopback,
# for dratopo's tests and development: etcd, kube-apiserver and
# kube-controller-manager built from upstream Go modules (tools/kube/k8s,
# tools/kube/etcd), a PKI made with openssl, and Karpenter's CRDs taken from
# Karpenter's own Go module, and dratopo's own CRDs (deploy/crds.yaml); on
# request Karpenter's own controller with its kwok cloud provider
# (tools/kube/karpenter), which launches NodeClaims as Node objects.
# Nothing built or downloaded enters the clone.
#
#   cluster.sh build [--karpenter]   build the binaries when missing; print their folder
#   cluster.sh up DIR [--karpenter [--instance-types FILE]]
#                                    start a control plane with all state under DIR
#   cluster.sh down DIR              stop what `up DIR` started (by pid)
#   cluster.sh restart DIR NAME      stop and start one process (etcd, kube-apiserver,
#                                    kube-controller-manager) with the same flags
#   cluster.sh karpenter DIR start [--instance-types FILE] | stop
#                                    Karpenter's kwok controller on DIR's control plane
#   cluster.sh crds                  print the folder holding Karpenter's CRD files
#
# `up` writes DIR/kubeconfig (an admin client certificate, O=system:masters),
# DIR/bin/kubectl, DIR/cluster.env (shell variables the tests read: API_SERVER,
# ETCD_ENDPOINT, PKI, KUBECONFIG, ...) and prints the export line.
# Binaries are cached in ${XDG_CACHE_HOME:-~/.cache}/dratopo/kube-HASH/bin,
# HASH taken from the tools modules' go.mod and go.sum, so a version bump
# builds afresh and nothing else does; Karpenter's in .../karpenter-HASH/bin.
#
# Karpenter (sigs.k8s.io/karpenter/kwok) runs with leader election off, its
# metrics and probes on free ports, its log in DIR/log/karpenter.log; its
# instance types are kwok's own list unless --instance-types names a file
# in kwok's format (the tests write one from `dratopo hwdb list -o json`).
# It creates the Node of each NodeClaim it launches (providerID kwok://),
# Karpenter registers it; nothing makes the Node Ready (KWOK's controller
# would: the tests play the kubelet) and nothing publishes ResourceSlices.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
KARPENTER_AWS_MODULE=github.com/aws/karpenter-provider-aws
KARPENTER_AWS_VERSION=v1.15.2
# Karpenter's go.mod asks for a newer Go than the machine's to build it; the
# go command takes that toolchain from the module proxy to unpack the module.
KARPENTER_GOTOOLCHAIN=go1.27.3
CRDS="karpenter.sh_nodepools karpenter.sh_nodeclaims karpenter.sh_nodeoverlays
	karpenter.k8s.aws_ec2nodeclasses"
KWOK_CRD=kwok/apis/crds/karpenter.kwok.sh_kwoknodeclasses.yaml
# The controllers a DRA cluster relies on: templates become ResourceClaims,
# Deployments make pods, owners are collected, namespaces deleted, default
# service accounts and kube-root-ca.crt created, aggregated roles filled.
CONTROLLERS=resourceclaim-controller,deployment-controller,replicaset-controller
CONTROLLERS=$CONTROLLERS,statefulset-controller,job-controller,garbage-collector-controller
CONTROLLERS=$CONTROLLERS,namespace-controller,serviceaccount-controller
CONTROLLERS=$CONTROLLERS,root-ca-certificate-publisher-controller
CONTROLLERS=$CONTROLLERS,clusterrole-aggregation-controller,device-taint-eviction-controller

say() { echo "kube: $*" >&2; }
die() { say "$*"; exit 1; }
now_ms() { date +%s%3N; }
secs_since() { local t=$(( $(now_ms) - $1 )); printf '%d.%01d' $((t / 1000)) $((t % 1000 / 100)); }

find_go() {
	if command -v go >/dev/null 2>&1; then GO=$(command -v go)
	elif [ -x /usr/local/go/bin/go ]; then GO=/usr/local/go/bin/go
	else return 1; fi
	local v; v=$("$GO" env GOVERSION)     # go1.26.8
	v=${v#go}
	local major=${v%%.*} rest=${v#*.}; local minor=${rest%%.*}
	[ "$major" -gt 1 ] || [ "$minor" -ge 26 ] ||
		die "Go $v is too old: the tools modules need Go 1.26 (the machine's /usr/local/go)"
}

k8s_version() { sed -n 's/^[[:space:]]*k8s.io\/kubernetes \(v[0-9.]*\).*/\1/p' "$ROOT/tools/kube/k8s/go.mod" | head -1; }

bin_dir() {
	local hash
	hash=$(cat "$ROOT"/tools/kube/k8s/go.mod "$ROOT"/tools/kube/k8s/go.sum \
		"$ROOT"/tools/kube/etcd/go.mod "$ROOT"/tools/kube/etcd/go.sum | sha256sum | cut -c1-16)
	echo "${XDG_CACHE_HOME:-$HOME/.cache}/dratopo/kube-$hash/bin"
}

karpenter_version() { sed -n 's/^[[:space:]]*sigs.k8s.io\/karpenter \(v[0-9.]*\).*/\1/p' "$ROOT/tools/kube/karpenter/go.mod" | head -1; }

karpenter_bin_dir() {
	local hash
	hash=$(cat "$ROOT"/tools/kube/karpenter/go.mod "$ROOT"/tools/kube/karpenter/go.sum |
		sha256sum | cut -c1-16)
	echo "${XDG_CACHE_HOME:-$HOME/.cache}/dratopo/karpenter-$hash/bin"
}

# build_karpenter: Karpenter's kwok controller into its cache folder (under
# its lock); prints the binary. Its module asks for a newer Go than the
# machine's: the go command takes that toolchain from the module proxy.
build_karpenter() {
	local bin tmp t ver
	bin=$(karpenter_bin_dir)
	mkdir -p "$bin"
	exec 8>"$bin/../lock"
	flock 8
	if [ ! -x "$bin/karpenter-kwok" ]; then
		ver=$(karpenter_version)
		tmp=$(mktemp -d "$bin/../build.XXXXXX")
		say "building Karpenter's kwok controller $ver (cold: ten minutes and more on 2 cores)"
		t=$(now_ms)
		(cd "$ROOT/tools/kube/karpenter" && GOTOOLCHAIN=$KARPENTER_GOTOOLCHAIN CGO_ENABLED=0 \
			"$GO" build -trimpath -ldflags "-s -w -X sigs.k8s.io/karpenter/pkg/operator.Version=$ver" \
			-o "$tmp/karpenter-kwok" sigs.k8s.io/karpenter/kwok) >&2 ||
			{ rm -rf "$tmp"; die "building Karpenter's kwok controller failed"; }
		mv "$tmp/karpenter-kwok" "$bin/"
		rmdir "$tmp"
		say "built Karpenter's kwok controller in $(secs_since "$t") s"
	fi
	exec 8>&-
	echo "$bin/karpenter-kwok"
}

# The module's folder in Go's module cache (its CRDs: KWOKNodeClass).
karpenter_module_dir() {
	(cd "$ROOT/tools/kube/karpenter" && GOTOOLCHAIN=$KARPENTER_GOTOOLCHAIN "$GO" mod download -json \
		"sigs.k8s.io/karpenter@$(karpenter_version)" |
		sed -n 's/^[[:space:]]*"Dir": "\(.*\)",*$/\1/p')
}

# build: the four binaries into the cache folder (under a lock, so that two
# test runs never build at once), with --karpenter Karpenter's too; prints
# the folder of the four.
cmd_build() {
	local bin tmp t ver ldflags
	find_go || die "no Go toolchain (go on PATH or /usr/local/go): cannot build kube-apiserver"
	[ "${1:-}" != --karpenter ] || build_karpenter >/dev/null
	bin=$(bin_dir)
	mkdir -p "$bin"
	exec 9>"$bin/../lock"
	flock 9
	if [ ! -x "$bin/kube-apiserver" ] || [ ! -x "$bin/kube-controller-manager" ] ||
	   [ ! -x "$bin/kubectl" ]; then
		ver=$(k8s_version)
		ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$ver"
		ldflags="$ldflags -X k8s.io/component-base/version.gitMajor=1"
		ldflags="$ldflags -X k8s.io/component-base/version.gitMinor=$(echo "$ver" | cut -d. -f2)"
		ldflags="$ldflags -X k8s.io/component-base/version.gitTreeState=clean"
		tmp=$(mktemp -d "$bin/../build.XXXXXX")
		say "building kube-apiserver, kube-controller-manager, kubectl $ver (cold: tens of minutes on 2 cores)"
		t=$(now_ms)
		(cd "$ROOT/tools/kube/k8s" && CGO_ENABLED=0 "$GO" build -trimpath -ldflags "$ldflags" \
			-o "$tmp/" k8s.io/kubernetes/cmd/kube-apiserver \
			k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kubectl) ||
			{ rm -rf "$tmp"; die "building the Kubernetes binaries failed"; }
		mv "$tmp"/kube-apiserver "$tmp"/kube-controller-manager "$tmp"/kubectl "$bin/"
		rmdir "$tmp"
		say "built kube-apiserver, kube-controller-manager, kubectl in $(secs_since "$t") s"
	fi
	if [ ! -x "$bin/etcd" ]; then
		tmp=$(mktemp -d "$bin/../build.XXXXXX")
		say "building etcd"
		t=$(now_ms)
		(cd "$ROOT/tools/kube/etcd" && CGO_ENABLED=0 "$GO" build -trimpath -ldflags "-s -w" \
			-o "$tmp/etcd" go.etcd.io/etcd/server/v3) ||
			{ rm -rf "$tmp"; die "building etcd failed"; }
		mv "$tmp/etcd" "$bin/"
		rmdir "$tmp"
		say "built etcd in $(secs_since "$t") s"
	fi
	exec 9>&-
	echo "$bin"
}

# crds: Karpenter's module unpacked in Go's module cache (checked against
# the checksum database like any module); prints its CRD folder.
cmd_crds() {
	local dir
	find_go || die "no Go toolchain: cannot fetch Karpenter's CRDs"
	dir=$(cd /tmp && GOTOOLCHAIN=$KARPENTER_GOTOOLCHAIN GOFLAGS=-mod=mod "$GO" mod download -json \
		"$KARPENTER_AWS_MODULE@$KARPENTER_AWS_VERSION" |
		sed -n 's/^[[:space:]]*"Dir": "\(.*\)",*$/\1/p')
	[ -n "$dir" ] && [ -d "$dir/pkg/apis/crds" ] ||
		die "cannot download $KARPENTER_AWS_MODULE@$KARPENTER_AWS_VERSION from the Go module proxy"
	echo "$dir/pkg/apis/crds"
}

# A loopback port nobody listens on (a connection to it is refused), below
# the kernel's ephemeral range: a port an outgoing connection holds as its
# local port refuses connections too, yet cannot be bound (a busy machine's
# clients made kube-apiserver fail with "address already in use").
free_port() {
	local p i lo=32768
	read -r lo _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || lo=32768
	[ "$lo" -gt 12000 ] || lo=32768
	for i in $(seq 1 200); do
		p=$(( 10000 + (RANDOM * 32768 + RANDOM) % (lo - 10000) ))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			case " ${USED_PORTS:-} " in *" $p "*) continue ;; esac
			USED_PORTS="${USED_PORTS:-} $p"
			echo "$p"
			return 0
		fi
	done
	die "no free loopback port"
}

make_pki() {   # make_pki DIR/pki
	local d=$1
	mkdir -p "$d"
	cat >"$d/openssl.cnf" <<-'EOF'
	[req]
	distinguished_name = dn
	prompt = no
	[dn]
	[ca]
	basicConstraints = critical,CA:TRUE
	keyUsage = critical,keyCertSign,cRLSign,digitalSignature
	subjectKeyIdentifier = hash
	[server]
	basicConstraints = critical,CA:FALSE
	keyUsage = critical,digitalSignature,keyEncipherment
	extendedKeyUsage = serverAuth
	subjectAltName = IP:127.0.0.1,DNS:localhost
	authorityKeyIdentifier = keyid
	[client]
	basicConstraints = critical,CA:FALSE
	keyUsage = critical,digitalSignature,keyEncipherment
	extendedKeyUsage = clientAuth
	authorityKeyIdentifier = keyid
	EOF
	local ec="-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes"
	# shellcheck disable=SC2086
	{
	openssl req -config "$d/openssl.cnf" -x509 -extensions ca $ec -days 7 \
		-subj "/CN=dratopo-test-server-ca" -keyout "$d/ca.key" -out "$d/ca.crt"
	openssl req -config "$d/openssl.cnf" -x509 -extensions ca $ec -days 7 \
		-subj "/CN=dratopo-test-client-ca" -keyout "$d/client-ca.key" -out "$d/client-ca.crt"
	leaf server apiserver "/CN=kube-apiserver" ca
	leaf client admin "/O=system:masters/CN=dratopo-admin" client-ca
	leaf client kcm "/CN=system:kube-controller-manager" client-ca
	openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$d/sa.key"
	openssl pkey -in "$d/sa.key" -pubout -out "$d/sa.pub"
	} 2>"$d/openssl.log" || { cat "$d/openssl.log" >&2; die "openssl failed"; }
	chmod 600 "$d"/*.key
}

leaf() {   # leaf EXTENSIONS NAME SUBJECT CA   (in $d)
	openssl req -config "$d/openssl.cnf" -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
		-subj "$3" -keyout "$d/$2.key" -out "$d/$2.csr"
	openssl x509 -req -in "$d/$2.csr" -CA "$d/$4.crt" -CAkey "$d/$4.key" -CAcreateserial \
		-days 7 -extfile "$d/openssl.cnf" -extensions "$1" -out "$d/$2.crt"
	rm -f "$d/$2.csr"
}

write_kubeconfig() {   # write_kubeconfig FILE USER-CERT-NAME SERVER
	local p=$DIR/pki
	cat >"$1" <<-EOF
	apiVersion: v1
	kind: Config
	clusters:
	- name: dratopo-test
	  cluster:
	    server: $3
	    certificate-authority-data: $(base64 -w0 "$p/ca.crt")
	users:
	- name: $2
	  user:
	    client-certificate-data: $(base64 -w0 "$p/$2.crt")
	    client-key-data: $(base64 -w0 "$p/$2.key")
	contexts:
	- name: dratopo-test
	  context: {cluster: dratopo-test, user: $2, namespace: default}
	current-context: dratopo-test
	EOF
	chmod 600 "$1"
}

# start NAME ARGS...: run a binary in the background, detached, its output
# in DIR/log/NAME.log, its pid in DIR/run/NAME.pid, its command line in
# DIR/run/NAME.args (for restart).
start() {
	local name=$1; shift
	printf '%s\0' "$@" >"$DIR/run/$name.args"
	setsid "$BIN/$name" "$@" </dev/null >>"$DIR/log/$name.log" 2>&1 &
	echo $! >"$DIR/run/$name.pid"
}

start_again() {
	local name=$1 args=()
	while IFS= read -r -d '' a; do args+=("$a"); done <"$DIR/run/$name.args"
	setsid "$BIN/$name" "${args[@]}" </dev/null >>"$DIR/log/$name.log" 2>&1 &
	echo $! >"$DIR/run/$name.pid"
}

alive() { local pid; pid=$(cat "$DIR/run/$1.pid" 2>/dev/null) && kill -0 "$pid" 2>/dev/null; }

# wait_http NAME URL SECONDS [curl options]: until URL answers 200 ("ok").
wait_http() {
	local name=$1 url=$2 limit=$3 i; shift 3
	for i in $(seq 1 $((limit * 5))); do
		if [ "$(curl -s -o /dev/null -w '%{http_code}' "$@" "$url" 2>/dev/null)" = 200 ]; then
			return 0
		fi
		alive "$name" || { tail -n 20 "$DIR/log/$name.log" >&2; die "$name exited (log: $DIR/log/$name.log)"; }
		sleep 0.2
	done
	tail -n 20 "$DIR/log/$name.log" >&2
	die "$name did not become ready within $limit s ($url)"
}

stop() {   # stop NAME: TERM, then KILL after 10 s
	local pid i
	pid=$(cat "$DIR/run/$1.pid" 2>/dev/null) || return 0
	if kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null || true
		for i in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
		kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
		for i in $(seq 1 25); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
	fi
	rm -f "$DIR/run/$1.pid"
}

api_curl() { curl -s --cacert "$DIR/pki/ca.crt" --cert "$DIR/pki/admin.crt" --key "$DIR/pki/admin.key" "$@"; }

start_etcd() {
	start etcd --name=dratopo --data-dir="$DIR/etcd" \
		--listen-client-urls="http://127.0.0.1:$ETCD_PORT" \
		--advertise-client-urls="http://127.0.0.1:$ETCD_PORT" \
		--listen-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" \
		--initial-advertise-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" \
		--initial-cluster="dratopo=http://127.0.0.1:$ETCD_PEER_PORT" \
		--unsafe-no-fsync=true --log-level=warn
}

start_apiserver() {
	local p=$DIR/pki
	# configmaps bypass the watch cache so that a test can force a 410 with
	# an etcd compaction (dratopo watches no configmaps).
	start kube-apiserver --etcd-servers="http://127.0.0.1:$ETCD_PORT" \
		--bind-address=127.0.0.1 --secure-port="$API_PORT" \
		--advertise-address=127.0.0.1 --endpoint-reconciler-type=none \
		--tls-cert-file="$p/apiserver.crt" --tls-private-key-file="$p/apiserver.key" \
		--client-ca-file="$p/client-ca.crt" --authorization-mode=RBAC \
		--service-account-issuer=https://kubernetes.default.svc \
		--service-account-key-file="$p/sa.pub" --service-account-signing-key-file="$p/sa.key" \
		--service-cluster-ip-range=10.0.0.0/24 --allow-privileged=true \
		--watch-cache-sizes=configmaps#0 --feature-gates=DRAListTypeAttributes=true \
		--profiling=false \
		--audit-policy-file="$DIR/audit-policy.yaml" --audit-log-path="$DIR/log/audit.log" \
		--audit-log-format=json --audit-log-maxsize=200
}

# Who wrote what, when: every write request (not reads, not watches) as one
# JSON line in DIR/log/audit.log, for tests that must see which process
# wrote (the HA test: a coordinator that lost its Lease writes nothing).
write_audit_policy() {
	cat >"$DIR/audit-policy.yaml" <<-'EOF'
	apiVersion: audit.k8s.io/v1
	kind: Policy
	omitStages: [RequestReceived]
	rules:
	- level: Metadata
	  verbs: [create, update, patch, delete, deletecollection]
	- level: None
	EOF
}

start_kcm() {
	start kube-controller-manager --kubeconfig="$DIR/kcm.kubeconfig" \
		--controllers="$CONTROLLERS" --use-service-account-credentials=true \
		--leader-elect=false --secure-port=0 \
		--service-account-private-key-file="$DIR/pki/sa.key" --root-ca-file="$DIR/pki/ca.crt" \
		--feature-gates=DRAListTypeAttributes=true
}

load_env() {
	[ -f "$DIR/cluster.env" ] || die "$DIR holds no cluster (no cluster.env): run up first"
	# shellcheck disable=SC1091
	. "$DIR/cluster.env"
	BIN=$KUBE_BIN
}

cmd_up() {
	local t0 t crd_dir crd
	[ -n "${1:-}" ] || die "usage: cluster.sh up DIR [--karpenter [--instance-types FILE]]"
	case "${2:-}" in
	"") ;;
	--karpenter) ;;
	*) die "cluster.sh up: unknown option $2" ;;
	esac
	mkdir -p "$1"
	DIR=$(cd "$1" && pwd)
	if [ -f "$DIR/run/kube-apiserver.pid" ] && (load_env && alive kube-apiserver); then
		die "a control plane already runs under $DIR (cluster.sh down $DIR first)"
	fi
	BIN=$(cmd_build)
	crd_dir=$(cmd_crds)
	t0=$(now_ms)
	rm -rf "$DIR/etcd" "$DIR/pki" "$DIR/run" "$DIR/log" "$DIR/bin"
	mkdir -p "$DIR/run" "$DIR/log" "$DIR/bin"
	make_pki "$DIR/pki"
	write_audit_policy
	ETCD_PORT=$(free_port); ETCD_PEER_PORT=$(free_port); API_PORT=$(free_port)
	# each $(...) is a subshell, so free_port's USED_PORTS cannot keep them apart
	while [ "$ETCD_PEER_PORT" = "$ETCD_PORT" ]; do ETCD_PEER_PORT=$(free_port); done
	while [ "$API_PORT" = "$ETCD_PORT" ] || [ "$API_PORT" = "$ETCD_PEER_PORT" ]; do
		API_PORT=$(free_port)
	done
	local server="https://127.0.0.1:$API_PORT"
	write_kubeconfig "$DIR/kubeconfig" admin "$server"
	write_kubeconfig "$DIR/kcm.kubeconfig" kcm "$server"
	ln -sf "$BIN/kubectl" "$DIR/bin/kubectl"
	cat >"$DIR/cluster.env" <<-EOF
	KUBE_BIN=$BIN
	KUBE_DIR=$DIR
	KUBECONFIG=$DIR/kubeconfig
	API_SERVER=$server
	API_PORT=$API_PORT
	ETCD_ENDPOINT=http://127.0.0.1:$ETCD_PORT
	ETCD_PORT=$ETCD_PORT
	ETCD_PEER_PORT=$ETCD_PEER_PORT
	PKI=$DIR/pki
	CRD_DIR=$crd_dir
	EOF

	start_etcd
	wait_http etcd "http://127.0.0.1:$ETCD_PORT/health" 30
	t=$(now_ms)
	start_apiserver
	wait_http kube-apiserver "$server/readyz" 120 --cacert "$DIR/pki/ca.crt" \
		--cert "$DIR/pki/admin.crt" --key "$DIR/pki/admin.key"
	say "kube-apiserver ready in $(secs_since "$t") s"
	start_kcm
	for crd in $CRDS; do
		"$BIN/kubectl" --kubeconfig "$DIR/kubeconfig" apply --server-side \
			-f "$crd_dir/$crd.yaml" >/dev/null
	done
	# dratopo's own kinds (NodeTopology, LearnedType)
	"$BIN/kubectl" --kubeconfig "$DIR/kubeconfig" apply --server-side \
		-f "$ROOT/deploy/crds.yaml" >/dev/null
	"$BIN/kubectl" --kubeconfig "$DIR/kubeconfig" wait --for=condition=Established \
		--timeout=60s crd/nodepools.karpenter.sh crd/nodeclaims.karpenter.sh \
		crd/nodeoverlays.karpenter.sh crd/ec2nodeclasses.karpenter.k8s.aws \
		crd/nodetopologies.dratopo.io crd/learnedtypes.dratopo.io >/dev/null
	# Pods can be created once the default service account exists (the
	# ServiceAccount admission plugin asks for it).
	for t in $(seq 1 150); do
		"$BIN/kubectl" --kubeconfig "$DIR/kubeconfig" -n default get serviceaccount default \
			>/dev/null 2>&1 && break
		alive kube-controller-manager ||
			{ tail -n 20 "$DIR/log/kube-controller-manager.log" >&2; die "kube-controller-manager exited"; }
		sleep 0.2
	done
	say "control plane up in $(secs_since "$t0") s: etcd :$ETCD_PORT, kube-apiserver :$API_PORT, kube-controller-manager; Karpenter CRDs $KARPENTER_AWS_VERSION"
	if [ "${2:-}" = --karpenter ]; then
		shift 2
		karpenter_start "$@"
	fi
	echo "export KUBECONFIG=$DIR/kubeconfig PATH=$DIR/bin:\$PATH"
}

# karpenter_start [--instance-types FILE]: Karpenter's kwok controller on
# the control plane under $DIR, once its KWOKNodeClass CRD is Established
# and Karpenter answers its readiness probe.
karpenter_start() {
	local kbin mod itypes="" t metrics probe
	case "${1:-}" in
	"") ;;
	--instance-types) [ -f "${2:-}" ] || die "--instance-types: no such file: ${2:-}"
		itypes=$(cd "$(dirname "$2")" && pwd)/$(basename "$2") ;;
	*) die "cluster.sh karpenter: unknown option $1" ;;
	esac
	find_go || die "no Go toolchain (go on PATH or /usr/local/go): cannot build Karpenter"
	alive karpenter && die "Karpenter already runs under $DIR"
	load_env
	kbin=$(build_karpenter)
	mod=$(karpenter_module_dir)
	[ -n "$mod" ] && [ -f "$mod/$KWOK_CRD" ] ||
		die "cannot download sigs.k8s.io/karpenter@$(karpenter_version) from the Go module proxy"
	t=$(now_ms)
	"$BIN/kubectl" --kubeconfig "$DIR/kubeconfig" apply --server-side -f "$mod/$KWOK_CRD" >/dev/null
	"$BIN/kubectl" --kubeconfig "$DIR/kubeconfig" wait --for=condition=Established \
		--timeout=60s crd/kwoknodeclasses.karpenter.kwok.sh >/dev/null
	metrics=$(free_port); probe=$(free_port)
	printf '%s\0' --metrics-port="$metrics" --health-probe-port="$probe" \
		--disable-leader-election >"$DIR/run/karpenter.args"
	# controller-runtime reads KUBECONFIG; kwok its instance types file
	KUBECONFIG=$DIR/kubeconfig INSTANCE_TYPES_FILE_PATH=$itypes setsid "$kbin" \
		--metrics-port="$metrics" --health-probe-port="$probe" --disable-leader-election \
		</dev/null >>"$DIR/log/karpenter.log" 2>&1 &
	echo $! >"$DIR/run/karpenter.pid"
	wait_http karpenter "http://127.0.0.1:$probe/readyz" 120
	say "Karpenter $(karpenter_version) (kwok) ready in $(secs_since "$t") s: probes :$probe, log $DIR/log/karpenter.log${itypes:+, instance types $itypes}"
}

cmd_karpenter() {
	[ -n "${1:-}" ] && [ -n "${2:-}" ] ||
		die "usage: cluster.sh karpenter DIR start [--instance-types FILE] | stop"
	DIR=$(cd "$1" && pwd)
	case "$2" in
	start) shift 2; karpenter_start "$@" ;;
	stop) stop karpenter; say "stopped Karpenter under $DIR" ;;
	*) die "cluster.sh karpenter: start or stop, not $2" ;;
	esac
}

cmd_down() {
	[ -n "${1:-}" ] || die "usage: cluster.sh down DIR"
	[ -d "$1" ] || return 0
	DIR=$(cd "$1" && pwd)
	local n
	for n in karpenter kube-controller-manager kube-apiserver etcd; do stop "$n"; done
	say "stopped the control plane under $DIR"
}

cmd_restart() {
	[ -n "${1:-}" ] && [ -n "${2:-}" ] || die "usage: cluster.sh restart DIR NAME"
	DIR=$(cd "$1" && pwd)
	load_env
	stop "$2"
	start_again "$2"
	case $2 in
	etcd) wait_http etcd "$ETCD_ENDPOINT/health" 30 ;;
	kube-apiserver) wait_http kube-apiserver "$API_SERVER/readyz" 120 --cacert "$PKI/ca.crt" \
		--cert "$PKI/admin.crt" --key "$PKI/admin.key" ;;
	esac
}

case "${1:-}" in
build) shift; cmd_build "$@" ;;
crds) cmd_crds ;;
up) shift; cmd_up "$@" ;;
down) shift; cmd_down "$@" ;;
restart) shift; cmd_restart "$@" ;;
karpenter) shift; cmd_karpenter "$@" ;;
*) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
