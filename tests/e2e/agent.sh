#!/usr/bin/env bash
# agent.sh BUILD_DIR - dratopo-agent end to end on the fake sysfs trees:
# exit codes, the JSON contract, lspci agreeing on what the trees hold, and
# an unknown type learned, saved and then verified.
set -u
BUILD=${1:?usage: agent.sh BUILD_DIR}
AGENT="$BUILD/bin/dratopo-agent"
FX="$BUILD/fixtures/agent"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fails=0

[ -d "$FX/p5.48xlarge/sys" ] || bash "$(dirname "$0")/../fixtures/agent/mksysfs.sh" "$FX"

fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
pass() { echo "ok: $*"; }

# expect_rc WANT DESCRIPTION CMD... (stdout to $TMP/out, stderr to $TMP/err)
expect_rc() {
	local want=$1 what=$2; shift 2
	"$@" >"$TMP/out" 2>"$TMP/err"
	local rc=$?
	if [ "$rc" = "$want" ]; then pass "$what (exit $rc)"; else
		fail "$what: exit $rc, want $want"; sed 's/^/    /' "$TMP/err" | head -20; fi
}
expect_out() {   # expect_out PATTERN DESCRIPTION: grep -E on the last stdout
	if grep -Eq -- "$1" "$TMP/out"; then pass "$2"; else fail "$2: /$1/ not in output"; fi
}
expect_err() {
	if grep -Eq -- "$1" "$TMP/err"; then pass "$2"; else fail "$2: /$1/ not in stderr"; fi
}
count() { grep -Ec -- "$1" "$TMP/out"; }

# ---- lspci reads the same trees ----
for f in p5.48xlarge p4d.24xlarge p5en.48xlarge g6e.48xlarge g5.48xlarge \
	p5.48xlarge-degraded unknown; do
	entries=$(ls "$FX/$f/sys/bus/pci/devices" | wc -l)
	listed=$(lspci -A linux-sysfs -O sysfs.path="$FX/$f/sys/bus/pci" -n 2>"$TMP/lerr" | wc -l)
	if [ "$listed" = "$entries" ] && [ ! -s "$TMP/lerr" ]; then
		pass "lspci lists all $entries devices of $f"
	else
		fail "lspci lists $listed of $entries devices of $f: $(head -2 "$TMP/lerr")"
	fi
	# lspci and the agent agree on how many NVIDIA display controllers there are
	want=$(lspci -A linux-sysfs -O sysfs.path="$FX/$f/sys/bus/pci" -n | grep -Ec ' 030[02]: 10de:')
	expect_rc 0 "probe $f" "$AGENT" probe --sysfs-root "$FX/$f" -o json
	got=$(count '"kind": "gpu"')
	[ "$got" = "$want" ] && pass "$f: $got GPUs, as lspci" || fail "$f: $got GPUs, lspci says $want"
done

# ---- probe ----
expect_rc 0 "probe p5 text" "$AGENT" probe --sysfs-root "$FX/p5.48xlarge"
expect_out '^p5.48xlarge: 8 GPUs, 32 EFAs on 8 PCIe roots' "text summary line"
expect_out '^pci0000:44  numa 0  1 GPU, 4 EFAs$' "text root line"
expect_out '├─ gpu 0000:53:00.0  10de:2330' "text GPU under its root"
expect_rc 0 "probe p5 json" "$AGENT" probe --sysfs-root "$FX/p5.48xlarge" -o json
expect_out '"instanceType": "p5.48xlarge"' "json instanceType"
expect_out '"bdf": "0000:53:00.0"' "json GPU0 bdf"
expect_out '"pcieRoot": "pci0000:44"' "json pcieRoot"
expect_out '"rdmaDevice": "rdmap79s0"' "json rdma device"
[ "$(count '"name": "pci0000:')" = 8 ] && pass "json 8 pcieRoots" || fail "json pcieRoots"
expect_rc 0 "probe p5 yaml" "$AGENT" probe --sysfs-root "$FX/p5.48xlarge" -o yaml
expect_out '^instanceType: p5.48xlarge' "yaml instanceType"
expect_rc 0 "probe g5 json" "$AGENT" probe --sysfs-root "$FX/g5.48xlarge" -o json
expect_out '"numaNode": null' "g5 NUMA is null"
expect_rc 0 "probe broken host" "$AGENT" probe --sysfs-root "$FX/broken"
expect_out 'FELL OFF THE BUS' "fallen GPU marked in the tree"
expect_out '^\(no PCIe root\)' "device without a root listed apart"
expect_err '^warning: 0000:7d:00.0: libpci: Cannot open' "libpci error became a warning"
expect_rc 0 "--instance-type overrides DMI" "$AGENT" probe --sysfs-root "$FX/p5.48xlarge" \
	--instance-type p5e.48xlarge -o json
expect_out '"instanceType": "p5e.48xlarge"' "overridden instanceType"

# ---- verify ----
for f in p5.48xlarge p4d.24xlarge p5en.48xlarge g6e.48xlarge g5.48xlarge; do
	expect_rc 0 "verify $f" "$AGENT" verify --sysfs-root "$FX/$f"
	expect_out "^$f: match" "$f matches hwdb"
done
expect_rc 4 "verify degraded p5" "$AGENT" verify --sysfs-root "$FX/p5.48xlarge-degraded"
expect_out 'GPU count: hwdb has 8 for p5.48xlarge, this node has 7' "GPU count drift"
expect_out 'EFA count: hwdb has 32 for p5.48xlarge, this node has 30' "EFA count drift"
expect_out 'roots with 1 GPU \+ 2 EFAs: hwdb has 0, this node has 1 \(pci0000:44\)' "grouping drift"
expect_rc 4 "verify degraded p5 json" "$AGENT" verify --sysfs-root "$FX/p5.48xlarge-degraded" -o json
expect_out '"verdict": "drift"' "json verdict"
expect_rc 4 "verify p5 as p5en" "$AGENT" verify --sysfs-root "$FX/p5.48xlarge" --instance-type p5en.48xlarge
expect_out 'model 10de:2330' "model drift"
expect_rc 5 "verify unknown type" "$AGENT" verify --sysfs-root "$FX/unknown"
expect_out '^instanceTypes:' "proposed entry is an hwdb source file"
expect_out 'name: p7.48xlarge' "proposed entry is named for the type"
cp "$TMP/out" "$TMP/p7.yaml"
expect_rc 0 "verify with the learned entry" "$AGENT" verify --sysfs-root "$FX/unknown" \
	--hwdb-extra "$TMP/p7.yaml"
expect_out '^p7.48xlarge: match' "learned entry matches the node"

# ---- slices ----
expect_rc 0 "slices p5 json" "$AGENT" slices --sysfs-root "$FX/p5.48xlarge" --node-name node-a -o json
expect_out '"resourceSlices"' "slices json has resourceSlices"
expect_out '"instanceType"' "slices json has the facts, as hwdb show"
expect_out '"driver": "gpu.nvidia.com"' "GPU slice"
expect_out '"driver": "dra.net"' "EFA slice"
expect_rc 0 "slices p5 yaml" "$AGENT" slices --sysfs-root "$FX/p5.48xlarge" --node-name node-a
[ "$(count 'name: gpu-[0-9]+$')" = 8 ] && pass "8 GPU devices" || fail "GPU devices: $(count 'name: gpu-[0-9]+$')"
[ "$(count 'name: efa-[0-9]+$')" = 32 ] && pass "32 EFA devices" || fail "EFA devices: $(count 'name: efa-[0-9]+$')"
expect_out 'pool:' "slices carry their pool"
expect_rc 0 "slices degraded yaml" "$AGENT" slices --sysfs-root "$FX/p5.48xlarge-degraded" --node-name node-b
[ "$(count 'name: gpu-[0-9]+$')" = 7 ] && pass "7 GPU devices when one is gone" \
	|| fail "degraded GPU devices: $(count 'name: gpu-[0-9]+$')"
[ "$(count 'name: efa-[0-9]+$')" = 30 ] && pass "30 EFA devices when two are gone" \
	|| fail "degraded EFA devices: $(count 'name: efa-[0-9]+$')"
expect_rc 2 "bad consumable capacity" "$AGENT" slices --sysfs-root "$FX/p5.48xlarge" \
	--consumable-capacity shares

# the prediction for a node of a known type is what `dratopo hwdb show` says
if [ -x "$BUILD/bin/dratopo" ]; then
	for f in p5.48xlarge p4d.24xlarge p5en.48xlarge g6e.48xlarge g5.48xlarge; do
		"$BUILD/bin/dratopo" hwdb show "$f" --node node-1 | tail -n +2 >"$TMP/show"
		"$AGENT" slices --sysfs-root "$FX/$f" --node-name node-1 | tail -n +2 >"$TMP/pred"
		if cmp -s "$TMP/show" "$TMP/pred"; then pass "$f: slices = dratopo hwdb show"; else
			fail "$f: slices differ from dratopo hwdb show"
			diff "$TMP/show" "$TMP/pred" | head -10 | sed 's/^/    /'
		fi
	done
else
	echo "skip: $BUILD/bin/dratopo not built; slices not compared with hwdb show"
fi

# ---- the agent reads the sysfs tree and nothing else ----
# (the dynamic loader's files and, in sanitizer builds, the runtime's
# /proc/self reads are not the agent's)
if command -v strace >/dev/null 2>&1; then
	for c in probe verify slices; do
		strace -f -qq -e trace=open,openat,stat,newfstatat,lstat,readlink,access,execve \
			-o "$TMP/trace" "$AGENT" $c --sysfs-root "$FX/p5.48xlarge" --node-name n \
			>/dev/null 2>&1
		if ! grep -q "$FX/p5.48xlarge/sys" "$TMP/trace" 2>/dev/null; then
			echo "skip: strace could not trace $c here"
			continue
		fi
		# libgrpc (linked for `run`) sizes per-CPU stats when it is loaded:
		# glibc's sysconf(_SC_NPROCESSORS_CONF) reads cpu/possible. That is
		# the dynamic loader's doing, before main, not the probe's.
		outside=$(grep -E '"/' "$TMP/trace" | grep -v "\"$FX/p5.48xlarge/sys" |
			grep -Ev '\.so(\.[0-9]+)*"|"/etc/ld\.so\.(cache|preload)"|execve\(|"/proc/self/' |
			grep -v '"/sys/devices/system/cpu/possible"' | head -3)
		[ -z "$outside" ] && pass "$c opens nothing outside the sysfs tree" ||
			fail "$c looked outside the sysfs tree: $outside"
	done
else
	echo "skip: strace not installed; file access not checked"
fi

# ---- usage and failures ----
expect_rc 2 "no command" "$AGENT"
expect_rc 2 "unknown command" "$AGENT" frobnicate
expect_rc 2 "unknown format" "$AGENT" probe --sysfs-root "$FX/p5.48xlarge" -o xml
expect_rc 2 "unknown option" "$AGENT" probe --bogus
expect_rc 2 "missing option value" "$AGENT" probe --sysfs-root
expect_rc 1 "missing sysfs root" "$AGENT" probe --sysfs-root "$TMP/nothing"
expect_err 'sys/bus/pci/devices' "missing root names the directory"
expect_rc 2 "run needs a coordinator" "$AGENT" run --insecure
expect_err 'coordinator ADDR is required' "run explains itself"
expect_rc 2 "run needs TLS or --insecure" "$AGENT" run --coordinator localhost:1
expect_rc 1 "run --once, nobody listening" "$AGENT" run --once --insecure \
	--coordinator 127.0.0.1:1 --sysfs-root "$FX/p5.48xlarge" --node-name n
expect_err 'status=UNAVAILABLE' "run names the status"
expect_rc 0 "help" "$AGENT" --help

if [ "$fails" -ne 0 ]; then echo "agent.sh: $fails failures"; exit 1; fi
echo "agent.sh: all passed"
