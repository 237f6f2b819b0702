#!/bin/sh
# tools/hwdb-import/run.sh - regenerate hwdb/efa-instance-types.yaml and hwdb/prices.yaml
# from the pinned public sources (Go modules, read as data) and the two files transcribed
# from AWS's documentation beside this script. Run from anywhere; needs go
# and the Go module proxy. The differences between sources go to stderr.
set -eu
KARPENTER=github.com/aws/karpenter-provider-aws@v1.15.2
EC2INFO=github.com/cristim/ec2-instances-info@v0.0.0-20250528091325-32acf84f42eb
EKSCTL=github.com/weaveworks/eksctl@v0.215.0

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# The module zip, unpacked: `go mod download` refuses a module whose go
# directive is newer than the toolchain, but still fetches its zip.
fetch() {
	zip=$(cd "$scratch" && GOFLAGS=-mod=mod go mod download -json "$1" 2>/dev/null |
		sed -n 's/^[[:space:]]*"Zip": "\(.*\)",$/\1/p')
	[ -n "$zip" ] && [ -f "$zip" ] || { echo "hwdb-import: cannot download $1" >&2; exit 1; }
	dir="$scratch/$(echo "$1" | tr '/@' '__')"
	mkdir -p "$dir" && (cd "$dir" && unzip -q "$zip")
	echo "$dir/${1%@*}@${1#*@}"
}

kp=$(fetch "$KARPENTER")
ei=$(fetch "$EC2INFO")
ek=$(fetch "$EKSCTL")
cd "$here"
go run . -karpenter "$kp" -karpenter-version "${KARPENTER#*@}" \
	-ec2info "$ei" -ec2info-version "${EC2INFO#*@}" \
	-eksctl "$ek" -eksctl-version "${EKSCTL#*@}" \
	-aws-specs "$here/aws-specs.tsv" -efa-generations "$here/aws-efa-generations.txt" \
	-gpu-types "$root/hwdb/instance-types.yaml" \
	-out-types "$root/hwdb/efa-instance-types.yaml" -out-prices "$root/hwdb/prices.yaml"
