/**
 * Where the WebAssembly matmul kernel starts to pay: times the JavaScript and
 * the WebAssembly kernels on the same products, small to medium, and prints
 * the ratio js_time / wasm_time (above 1: WebAssembly is faster) by the
 * number of multiply-adds M·K·N. matmul.ts's WASM_MIN_MULADDS comes from this.
 *
 *   pnpm --filter @dtlab/tensor exec tsx bench/matmul-threshold.ts [float32|float64]
 *
 * Samples alternate between the kernels, so a busy machine slows both alike;
 * a sample is 2 million multiply-adds (a few ms at most).
 */
import { Generator } from '../src/index.ts';
import { matmulJs } from '../src/kernels/matmul-js.ts';
import { type BatchView, wasmAvailable, wasmBmm } from '../src/kernels/matmul-wasm.ts';

const dtype = process.argv[2] === 'float64' ? 'float64' : 'float32';
if (!wasmAvailable()) {
  console.log('WebAssembly SIMD is not available here: every product takes the JavaScript kernel.');
  process.exit(0);
}

function filled(n: number, gen: Generator): Float32Array | Float64Array {
  const x = dtype === 'float64' ? new Float64Array(n) : new Float32Array(n);
  for (let i = 0; i < n; i++) x[i] = gen.uniform() * 2 - 1;
  return x;
}

/** Median of 9 alternating samples: milliseconds per call of each kernel on one M×K×N product. */
function race(M: number, K: number, N: number): [number, number] {
  const gen = new Generator(M * 1_000_000 + K * 1000 + N);
  const a = filled(M * K, gen);
  const b = filled(K * N, gen);
  const c = dtype === 'float64' ? new Float64Array(M * N) : new Float32Array(M * N);
  const av: BatchView = { data: a, offset: 0, batchStride: 0, rowStride: K, colStride: 1 };
  const bv: BatchView = { data: b, offset: 0, batchStride: 0, rowStride: N, colStride: 1 };
  const js = () => matmulJs(av, bv, c, 0, M, K, N);
  const wasm = () => void wasmBmm(av, bv, c, 1, M, K, N);
  const reps = Math.max(1, Math.round(2e6 / (M * K * N)));
  const time = (fn: () => void) => {
    const t0 = performance.now();
    for (let r = 0; r < reps; r++) fn();
    return (performance.now() - t0) / reps;
  };
  for (let w = 0; w < 3; w++) (time(js), time(wasm));
  const t: [number[], number[]] = [[], []];
  for (let s = 0; s < 9; s++) (t[0].push(time(js)), t[1].push(time(wasm)));
  const med = (xs: number[]) => xs.sort((x, y) => x - y)[4]!;
  return [med(t[0]), med(t[1])];
}

const shapes: [number, number, number][] = [];
for (const n of [4, 6, 8, 10, 12, 16, 20, 24, 32, 48, 64]) shapes.push([n, n, n]);
// Fewer than 4 rows (a vector times a matrix), where the JavaScript kernel skips packing.
for (const [m, k, n] of [[1, 64, 64], [1, 256, 256], [2, 256, 256], [3, 256, 256], [1, 784, 10], [3, 784, 256], [2, 8, 8]] as const) shapes.push([m, k, n]);
// Thin products, as in a small MLP's layers and their gradients.
for (const [m, k, n] of [[4, 64, 4], [8, 64, 8], [4, 256, 4], [64, 4, 64], [64, 8, 64], [16, 4, 16], [8, 16, 64], [64, 16, 8], [4, 16, 256], [32, 64, 10]] as const) shapes.push([m, k, n]);
shapes.sort((x, y) => x[0] * x[1] * x[2] - y[0] * y[1] * y[2]);

console.log(`js vs wasm matmul kernel, ${dtype}: ratio js_ms / wasm_ms (above 1: wasm faster)\n`);
console.log('M×K×N            M·K·N    js µs  wasm µs  ratio');
for (const [M, K, N] of shapes) {
  const [j, w] = race(M, K, N);
  console.log(`${`${M}×${K}×${N}`.padEnd(14)} ${String(M * K * N).padStart(8)} ${(j * 1e3).toFixed(2).padStart(8)} ${(w * 1e3).toFixed(2).padStart(8)} ${(j / w).toFixed(2).padStart(6)}`);
}
