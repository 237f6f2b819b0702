#!/usr/bin/env bash
# agent.sh BUILD_DIR - dratopo-agent end to end on the fake sysfs trees:
# exit codes, the JSON contract, lspci agreeing on what the trees hold, and
# an unknown type learned, saved and then verified.
NAME=agent.sh DRIVES="$1/bin/dratopo-agent"
. "$(dirname "$0")/lib.sh"
FX="$1/fixtures/agent"

[ -d "$FX/p5.48xlarge/sys" ] || bash "$ROOT/tests/fixtures/agent/mksysfs.sh" "$FX"

# count_is REGEX N WHAT: N lines of $TMP/out match the extended REGEX.
count_is() {
	local got
	got=$(grep -Ec -- "$1" "$TMP/out")
	[ "$got" = "$2" ] || fail "$3: $got lines match /$1/, want $2"
}

# ---- lspci reads the same trees ----
for f in p5.48xlarge p4d.24xlarge p5en.48xlarge g6e.48xlarge g5.48xlarge \
	p5.48xlarge-degraded unknown; do
	entries=$(ls "$FX/$f/sys/bus/pci/devices" | wc -l)
	listed=$(lspci -A linux-sysfs -O sysfs.path="$FX/$f/sys/bus/pci" -n 2>"$TMP/lerr" | wc -l)
	[ "$listed" = "$entries" ] && [ ! -s "$TMP/lerr" ] ||
		fail "lspci lists $listed of $entries devices of $f: $(head -2 "$TMP/lerr")"
	# lspci and the agent agree on how many NVIDIA display controllers there are
	want=$(lspci -A linux-sysfs -O sysfs.path="$FX/$f/sys/bus/pci" -n | grep -Ec ' 030[02]: 10de:')
	expect 0 "$AGENT" probe --sysfs-root "$FX/$f" -o json
	count_is '"kind": "gpu"' "$want" "$f: GPUs, as lspci counts them"
done

# ---- probe ----
expect 0 "$AGENT" probe --sysfs-root "$FX/p5.48xlarge"
has "$TMP/out" '^p5.48xlarge: 8 GPUs, 32 EFAs on 8 PCIe roots' "text summary line"
has "$TMP/out" '^pci0000:44  numa 0  1 GPU, 4 EFAs$' "text root line"
has "$TMP/out" '├─ gpu 0000:53:00.0  10de:2330' "text GPU under its root"
expect 0 "$AGENT" probe --sysfs-root "$FX/p5.48xlarge" -o json
has "$TMP/out" '"instanceType": "p5.48xlarge"' "json instanceType"
has "$TMP/out" '"bdf": "0000:53:00.0"' "json GPU0 bdf"
has "$TMP/out" '"pcieRoot": "pci0000:44"' "json pcieRoot"
has "$TMP/out" '"rdmaDevice": "rdmap79s0"' "json rdma device"
count_is '"name": "pci0000:' 8 "json pcieRoots"
expect 0 "$AGENT" probe --sysfs-root "$FX/p5.48xlarge" -o yaml
has "$TMP/out" '^instanceType: p5.48xlarge' "yaml instanceType"
expect 0 "$AGENT" probe --sysfs-root "$FX/g5.48xlarge" -o json
has "$TMP/out" '"numaNode": null' "g5 NUMA is null"
expect 0 "$AGENT" probe --sysfs-root "$FX/broken"
has "$TMP/out" 'FELL OFF THE BUS' "fallen GPU marked in the tree"
has "$TMP/out" '^\(no PCIe root\)' "device without a root listed apart"
has "$TMP/err" '^warning: 0000:7d:00.0: libpci: Cannot open' "libpci error became a warning"
expect 0 "$AGENT" probe --sysfs-root "$FX/p5.48xlarge" \
	--instance-type p5e.48xlarge -o json
has "$TMP/out" '"instanceType": "p5e.48xlarge"' "overridden instanceType"

# ---- verify ----
for f in p5.48xlarge p4d.24xlarge p5en.48xlarge g6e.48xlarge g5.48xlarge; do
	expect 0 "$AGENT" verify --sysfs-root "$FX/$f"
	has "$TMP/out" "^$f: match" "$f matches hwdb"
done
expect 4 "$AGENT" verify --sysfs-root "$FX/p5.48xlarge-degraded"
has "$TMP/out" 'GPU count: hwdb has 8 for p5.48xlarge, this node has 7' "GPU count drift"
has "$TMP/out" 'EFA count: hwdb has 32 for p5.48xlarge, this node has 30' "EFA count drift"
has "$TMP/out" 'roots with 1 GPU \+ 2 EFAs: hwdb has 0, this node has 1 \(pci0000:44\)' "grouping drift"
expect 4 "$AGENT" verify --sysfs-root "$FX/p5.48xlarge-degraded" -o json
has "$TMP/out" '"verdict": "drift"' "json verdict"
expect 4 "$AGENT" verify --sysfs-root "$FX/p5.48xlarge" --instance-type p5en.48xlarge
has "$TMP/out" 'model 10de:2330' "model drift"
expect 5 "$AGENT" verify --sysfs-root "$FX/unknown"
has "$TMP/out" '^instanceTypes:' "proposed entry is an hwdb source file"
has "$TMP/out" 'name: p7.48xlarge' "proposed entry is named for the type"
cp "$TMP/out" "$TMP/p7.yaml"
expect 0 "$AGENT" verify --sysfs-root "$FX/unknown" \
	--hwdb-extra "$TMP/p7.yaml"
has "$TMP/out" '^p7.48xlarge: match' "learned entry matches the node"

# ---- slices ----
expect 0 "$AGENT" slices --sysfs-root "$FX/p5.48xlarge" --node-name node-a -o json
has "$TMP/out" '"resourceSlices"' "slices json has resourceSlices"
has "$TMP/out" '"instanceType"' "slices json has the facts, as hwdb show"
has "$TMP/out" '"driver": "gpu.nvidia.com"' "GPU slice"
has "$TMP/out" '"driver": "dra.net"' "EFA slice"
expect 0 "$AGENT" slices --sysfs-root "$FX/p5.48xlarge" --node-name node-a
count_is 'name: gpu-[0-9]+$' 8 "GPU devices"
# DRANET's names: pci- and the EFA's PCI address (docs/remedy.md)
count_is 'name: pci-0000-[0-9a-f]{2}-[0-9a-f]{2}-[0-7]$' 32 "EFA devices"
count_is 'name: efa-[0-9]+$' 0 "no placeholder EFA names on a live node"
has "$TMP/out" 'pool:' "slices carry their pool"
expect 0 "$AGENT" slices --sysfs-root "$FX/p5.48xlarge-degraded" --node-name node-b
count_is 'name: gpu-[0-9]+$' 7 "GPU devices when one is gone"
count_is 'name: pci-0000-[0-9a-f]{2}-[0-9a-f]{2}-[0-7]$' 30 "EFA devices when two are gone"
expect 2 "$AGENT" slices --sysfs-root "$FX/p5.48xlarge" \
	--consumable-capacity shares

# the prediction for a node of a known type is what `dratopo hwdb show` says,
# but for the EFAs' names: the node's own (pci-<address>) against hwdb's
# placeholders (efa-N, so marked)
if [ -x "$BIN" ]; then
	efa_names() { sed -E -e 's/name: (efa-[0-9]+|pci-0000-[0-9a-f-]+)$/name: EFA/' \
		-e '/dratopo.io\/placeholder-device-names: "true"/d'; }
	for f in p5.48xlarge p4d.24xlarge p5en.48xlarge g6e.48xlarge g5.48xlarge; do
		"$BIN" hwdb show "$f" --node node-1 | tail -n +2 | efa_names >"$TMP/show"
		"$AGENT" slices --sysfs-root "$FX/$f" --node-name node-1 | tail -n +2 | efa_names >"$TMP/pred"
		if ! cmp -s "$TMP/show" "$TMP/pred"; then
			fail "$f: slices differ from dratopo hwdb show"
			diff "$TMP/show" "$TMP/pred" | head -10 | sed 's/^/    /'
		fi
	done
else
	echo "skip: $BIN not built; slices not compared with hwdb show"
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
		outside=$(grep -E '"/' "$TMP/trace" | grep -v "\"$FX/p5.48xlarge/sys" |
			grep -Ev '\.so(\.[0-9]+)*"|"/etc/ld\.so\.(cache|preload)"|execve\(|"/proc/self/' |
			head -3)
		[ -z "$outside" ] ||
			fail "$c looked outside the sysfs tree: $outside"
		# the one-shot commands do not load the RPC stack (`run` is its own program)
		loaded=$(grep -Eo 'lib(grpc|gpr|ssl|crypto|protobuf-c|microhttpd|absl)[^"/]*\.so[^"]*' \
			"$TMP/trace" | sort -u | head -3)
		[ -z "$loaded" ] || fail "$c loaded the RPC stack: $loaded"
	done
else
	echo "skip: strace not installed; file access not checked"
fi

# ---- usage and failures ----
expect 2 "$AGENT"
expect 2 "$AGENT" frobnicate
expect 2 "$AGENT" probe --sysfs-root "$FX/p5.48xlarge" -o xml
expect 2 "$AGENT" probe --bogus
expect 2 "$AGENT" probe --sysfs-root
expect 1 "$AGENT" probe --sysfs-root "$TMP/nothing"
has "$TMP/err" 'sys/bus/pci/devices' "missing root names the directory"
expect 2 "$AGENT" run --insecure
has "$TMP/err" 'coordinator ADDR is required' "run explains itself"
expect 2 "$AGENT" run --coordinator localhost:1
expect 1 "$AGENT" run --once --insecure \
	--coordinator 127.0.0.1:1 --sysfs-root "$FX/p5.48xlarge" --node-name n
has "$TMP/err" 'status=UNAVAILABLE' "run names the status"
# a name no Node can have is refused before anything is probed or sent
expect 2 "$AGENT" run --once --insecure \
	--coordinator 127.0.0.1:1 --sysfs-root "$FX/p5.48xlarge" --node-name Bad_Name
has "$TMP/err" '^dratopo-agent run: --node-name "Bad_Name": a lowercase RFC 1123 subdomain' \
	"run refuses a bad node name"
NODE_NAME=gpu_1 expect 2 "$AGENT" slices --sysfs-root "$FX/p5.48xlarge"
has "$TMP/err" '^dratopo-agent slices: \$NODE_NAME "gpu_1": a lowercase RFC 1123' \
	"slices says where the name came from"
# QA-96: the command's own name and its synopsis, as every usage error
has "$TMP/err" '^usage: dratopo-agent slices ' "bad node name: the synopsis"
expect 0 "$AGENT" --help
expect 0 "$AGENT" --version
grep -qx 'dratopo-agent [0-9][0-9.]*' "$TMP/out" || fail "--version prints 'dratopo-agent VERSION'"
expect 0 "$AGENT" run --version
grep -qx 'dratopo-agent [0-9][0-9.]*' "$TMP/out" || fail "run --version prints the same version"

# `run` is dratopo-agent-run, found beside dratopo-agent (however it was
# started); without it, run says what is missing
mkdir -p "$TMP/lonely"
cp "$AGENT" "$TMP/lonely/dratopo-agent"
expect 1 "$TMP/lonely/dratopo-agent" run --coordinator 127.0.0.1:1 --insecure --once
has "$TMP/err" "cannot start $TMP/lonely/dratopo-agent-run: No such file or directory" \
	"run names the program it needs"
pushd "$(dirname "$AGENT")" >/dev/null
expect 2 ./dratopo-agent run --insecure
popd >/dev/null
has "$TMP/err" 'coordinator ADDR is required' "run found beside a relative path"
PATH="$(dirname "$AGENT"):$PATH" expect 2 dratopo-agent run --insecure
has "$TMP/err" 'coordinator ADDR is required' "run found beside a program found on PATH"

e2e_finish
