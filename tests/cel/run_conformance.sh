#!/bin/sh
# run_conformance.sh RUNNER OUT.json - export the cel-spec conformance cases
# from the npm package (installed by tools/dev: npm ci in tests/cel) and run
# them through the C runner with the skip list.
set -eu
runner="$1"; out="$2"
dir="$(dirname "$0")"
if [ ! -d "$dir/node_modules/@bufbuild/cel-spec" ]; then
	echo "cel_conformance: run 'npm ci' in $dir first (tools/dev deps does)" >&2
	exit 1
fi
node "$dir/export.js" basic bindings_ext comparisons conversions fields fp_math \
	integer_math lists logic macros macros2 optionals parse plumbing string \
	string_ext timestamps type_deductions > "$out"
exec "$runner" "$out" "$dir/skip.txt" ${CEL_CONFORMANCE_FLAGS:-}
