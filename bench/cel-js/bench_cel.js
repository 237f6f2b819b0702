// bench/cel-js/bench_cel.js - @bufbuild/cel evaluating the DRA selector
// shape without Kubernetes types (it has no semver or quantity) against an
// H200 device given as plain objects. Prints one line:
//   bufbuild-cel plain: N evals, X ns/eval
// Usage: node bench_cel.js [SECONDS]
import { celEnv, parse, plan, isCelError } from "@bufbuild/cel";

const EXPR =
  'device.attributes["gpu.nvidia.com"].productName == "NVIDIA H200" && ' +
  'device.attributes["gpu.nvidia.com"].memoryMiB >= 102400';

const device = {
  driver: "gpu.nvidia.com",
  attributes: {
    "gpu.nvidia.com": {
      productName: "NVIDIA H200",
      architecture: "Hopper",
      memoryMiB: 143771n,
      index: 0n,
    },
  },
  allowMultipleAllocations: false,
};

const seconds = Number(process.argv[2] ?? 1);
const run = plan(celEnv(), parse(EXPR));
const first = run({ device });
if (isCelError(first) || first !== true) {
  console.error("bufbuild-cel: unexpected result:", first);
  process.exit(1);
}

// Warm up the JIT, then run batches until the time is spent.
for (let i = 0; i < 20000; i++) run({ device });
const batch = 10000;
let n = 0;
const t0 = process.hrtime.bigint();
const limit = BigInt(Math.round(seconds * 1e9));
let elapsed = 0n;
while (elapsed < limit) {
  for (let i = 0; i < batch; i++) run({ device });
  n += batch;
  elapsed = process.hrtime.bigint() - t0;
}
console.log(`bufbuild-cel plain: ${n} evals, ${(Number(elapsed) / n).toFixed(1)} ns/eval`);
