#!/bin/sh
# bench/bench_cel.sh BUILD_DIR [SECONDS] - dt_cel and @bufbuild/cel (npm)
# side by side on the DRA selector shape both can run, in the same run,
# and the seed's selector with semver and quantity (dt_cel only; the JS
# evaluator lacks those types). Installs bench/cel-js with `npm ci` when
# its node_modules is missing. Prints both throughputs and the ratio.
set -eu
build="${1:?usage: bench_cel.sh BUILD_DIR [SECONDS]}"
secs="${2:-1}"
dir="$(cd "$(dirname "$0")" && pwd)"
if [ ! -d "$dir/cel-js/node_modules/@bufbuild/cel" ]; then
	(cd "$dir/cel-js" && npm ci --no-audit --no-fund >/dev/null)
fi
c_out="$("$build/bench/bench_cel" "$secs")"
js_out="$(node "$dir/cel-js/bench_cel.js" "$secs")"
echo "$c_out"
echo "$js_out"
c_ns="$(echo "$c_out" | sed -n 's/^dt_cel plain: .*, \([0-9.]*\) ns\/eval$/\1/p')"
js_ns="$(echo "$js_out" | sed -n 's/.*, \([0-9.]*\) ns\/eval$/\1/p')"
awk -v c="$c_ns" -v j="$js_ns" 'BEGIN {
	printf "plain selector: dt_cel %.0f evals/s, @bufbuild/cel %.0f evals/s, ratio %.1fx\n",
	       1e9 / c, 1e9 / j, j / c
}'
