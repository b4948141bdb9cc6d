/**
 * dtlab's two matmul kernels against each other, in the same run: the
 * WebAssembly SIMD kernel that products now take, and the JavaScript kernel
 * that every product took before it (still the fallback, see
 * src/kernels/matmul.ts). Same rows as the main table: float32 matmul in
 * GFLOP/s and the MLP training step in ms. Samples alternate between the
 * kernels (switched with setMatmulKernel), so the ratio survives a busy
 * machine; the step runs the same model, so only the kernel differs.
 *
 * Then the issue-22 targets, each with the ratio measured in this run.
 */
import { Generator, nn, noGrad, optim, randn } from '../src/index.ts';
import { setMatmulKernel, usesWasm } from '../src/kernels/matmul.ts';

const SEED = 20240611;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/**
 * Median ms per call of `fn` as products are now dispatched ('auto': by size,
 * which takes WebAssembly for every product timed here) and with the 'js'
 * kernel forced, samples alternating.
 */
function raceKernels(fn: () => void, warmup: number, samples: number, inner: number): { wasm: number; js: number } {
  const sample = (kind: 'auto' | 'js') => {
    setMatmulKernel(kind);
    const t0 = performance.now();
    for (let i = 0; i < inner; i++) fn();
    return (performance.now() - t0) / inner;
  };
  for (let i = 0; i < warmup; i++) (sample('auto'), sample('js'));
  const t = { wasm: [] as number[], js: [] as number[] };
  for (let s = 0; s < samples; s++) (t.wasm.push(sample('auto')), t.js.push(sample('js')));
  setMatmulKernel('auto');
  return { wasm: median(t.wasm), js: median(t.js) };
}

/** One row of the kernel table. */
export interface KernelRow {
  name: string;
  unit: string;
  wasm: number;
  js: number;
  /** Above 1 means the WebAssembly kernel is faster. */
  ratio: number;
}

/** Times both kernels on the float32 256³ and 512³ products and on the 784-256-10 MLP step. */
export function benchKernels(quick: boolean): KernelRow[] {
  const rows: KernelRow[] = [];
  for (const n of [256, 512]) {
    const a = randn([n, n], { seed: SEED + n });
    const b = randn([n, n], { seed: SEED + n + 1 });
    const inner = Math.max(1, Math.round(3e7 / (2 * n ** 3)));
    const { wasm, js } = raceKernels(() => void noGrad(() => a.matmul(b)), quick ? 1 : 2, quick ? 5 : 9, inner);
    const gf = (ms: number) => (2 * n ** 3) / (ms * 1e6);
    rows.push({ name: `matmul ${n}x${n}x${n} f32`, unit: 'GFLOP/s', wasm: gf(wasm), js: gf(js), ratio: gf(wasm) / gf(js) });
  }
  const [B, D, H, C] = [64, 784, 256, 10];
  const x = randn([B, D], { seed: SEED });
  const gen = new Generator(SEED + 1);
  const labels = Array.from({ length: B }, () => gen.int(C));
  const model = new nn.MLP([D, H, C], { seed: SEED });
  const opt = new optim.Adam(model.parameters(), { lr: 1e-3 });
  const step = () => {
    opt.zeroGrad();
    nn.crossEntropy(model.forward(x), labels).backward();
    opt.step();
  };
  const { wasm, js } = raceKernels(step, quick ? 2 : 5, quick ? 7 : 25, 1);
  rows.push({ name: `MLP ${D}-${H}-${C} step, batch ${B}`, unit: 'ms/step', wasm, js, ratio: js / wasm });

  const head = ['benchmark', 'unit', 'wasm', 'js', 'wasm/js'];
  const body = rows.map((r) => [r.name, r.unit, r.wasm.toFixed(2), r.js.toFixed(2), `${r.ratio.toFixed(2)}x`]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((c) => c[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  console.log("dtlab's matmul kernels, same run: WebAssembly SIMD (now) vs JavaScript (before, and the fallback)");
  console.log(`(WebAssembly here: ${usesWasm(256, 256, 256) ? 'yes' : 'no, so both columns time JavaScript'}; ratio wasm/js for GFLOP/s, js_ms/wasm_ms for ms/step)\n`);
  console.log(line(head));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const b of body) console.log(line(b));
  return rows;
}

/** The issue-22 targets, met or not, from ratios measured in this run (torch's are absent when torch did not run). */
export function printTargets(torchRatios: { name: string; torchRatio?: number }[], kernels: KernelRow[]): void {
  const lines: [string, number | undefined, number][] = [];
  for (const n of [256, 512]) {
    const row = torchRatios.find((r) => r.name === `matmul ${n}x${n}x${n} f32`);
    lines.push([`matmul ${n}³ f32 vs torch (one thread)`, row?.torchRatio, 1.0]);
  }
  lines.push(['MLP step vs the JavaScript kernel', kernels.find((k) => k.unit === 'ms/step')?.ratio, 1.5]);
  console.log('\ntargets (issue 22, item 3)');
  for (const [what, got, want] of lines) {
    const verdict = got === undefined ? 'not measured (no torch)' : got >= want ? 'met' : 'NOT met';
    console.log(`  ${what.padEnd(40)} ${got === undefined ? '-' : `${got.toFixed(2)}x`}  target >= ${want.toFixed(1)}x  ${verdict}`);
  }
}
