/**
 * `pnpm bench tensor [--quick]`: dtlab against TensorFlow.js (tfjs-core with
 * the pure-JS cpu backend), measured in the same process and run.
 *
 * Rows:
 * - float32 matmul C = A·B of n×n matrices, in GFLOP/s (2n³ flops), median of
 *   timed repetitions after warm-up. tfjs includes `dataSync()` so the product
 *   is really computed. The two products are compared element by element
 *   (max abs diff), so a fast but wrong kernel fails the benchmark.
 * - one training step of a 784-256-10 ReLU MLP at batch 64: forward,
 *   softmax cross-entropy, backward and an Adam update, in ms per step
 *   (median). tfjs starts from dtlab's initial weights, so the first losses
 *   must agree; that is checked too.
 *
 * The ratio column is dtlab/tfjs for GFLOP/s and tfjs_ms/dtlab_ms (speedup)
 * for ms/step: above 1 means dtlab is faster. Exits 1 if a check fails.
 *
 * torch on one thread is a third peer when Debian's python3-torch is
 * importable (torch.ts; `--no-torch` leaves it out), with the same checks.
 * Last, kernel.ts compares dtlab's two matmul kernels in the same run.
 */
import os from 'node:os';
import * as tf from '@tensorflow/tfjs-core';
import { loadTfjs } from './tfjs.ts';
import { TorchPeer, b64 } from './torch.ts';
import { benchKernels, printTargets, type KernelRow } from './kernel.ts';
import { benchMetering, printMetering, type MeteringRow } from './metering.ts';
import { meets, reportFigures, type BenchFigure } from '../../../scripts/bench-figures.ts';
import { type Tensor, nn, noGrad, optim, randn, Generator } from '../src/index.ts';

const quick = process.argv.includes('--quick');
const withTorch = !process.argv.includes('--no-torch');
const SEED = 20240611;

/** Median of a list of numbers. */
function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** How many times to call a function per timing. */
interface Reps {
  /** Untimed calls first, so that V8 has optimized the code. */
  warmup: number;
  /** Timed samples; the median is reported. */
  samples: number;
  /** Calls per sample (more than 1 for tiny sizes, where one call is too short to time well). */
  inner: number;
}

/**
 * Median milliseconds per call of `dtlab`, of `tfjs` and, when given, of
 * `torch` (which times `inner` calls itself and returns ms per call). Samples
 * alternate between them, so that a busy machine slows all alike and the
 * ratios hold.
 */
async function timePair(
  dtlab: () => void,
  tfjs: () => void,
  { warmup, samples, inner }: Reps,
  torch?: (calls: number) => Promise<number>,
): Promise<[number, number, number | undefined]> {
  for (let i = 0; i < warmup; i++) {
    dtlab();
    tfjs();
    await torch?.(inner);
  }
  const sample = (fn: () => void) => {
    const t0 = performance.now();
    for (let i = 0; i < inner; i++) fn();
    return (performance.now() - t0) / inner;
  };
  const times: [number[], number[], number[]] = [[], [], []];
  for (let s = 0; s < samples; s++) {
    times[0].push(sample(dtlab));
    times[1].push(sample(tfjs));
    if (torch) times[2].push(await torch(inner));
  }
  return [median(times[0]), median(times[1]), torch ? median(times[2]) : undefined];
}

interface Row {
  name: string;
  unit: string;
  dtlab: number;
  tfjs: number;
  /** Above 1 means dtlab is faster. */
  ratio: number;
  check: string;
  /** torch's figure in `unit`, when torch ran. */
  torch?: number;
  /** Against torch; above 1 means dtlab is faster. */
  torchRatio?: number;
  torchCheck?: string;
}

let failed = false;

async function benchMatmul(n: number, torch: TorchPeer | null): Promise<Row> {
  const a = randn([n, n], { seed: SEED + n });
  const b = randn([n, n], { seed: SEED + n + 1 });
  const ta = tf.tensor2d(Float32Array.from(a.data()), [n, n], 'float32');
  const tb = tf.tensor2d(Float32Array.from(b.data()), [n, n], 'float32');

  // Correctness first: both sides must compute the same product.
  const mine = noGrad(() => a.matmul(b)).data();
  const tc = tf.matMul(ta, tb);
  const theirs = tc.dataSync();
  tc.dispose();
  let maxDiff = 0;
  let maxAbs = 0;
  for (let i = 0; i < mine.length; i++) {
    maxDiff = Math.max(maxDiff, Math.abs(mine[i]! - theirs[i]!));
    maxAbs = Math.max(maxAbs, Math.abs(theirs[i]!));
  }
  // Rounding error of a float32 sum of n products grows like √n·eps·max|C| (eps ≈ 6e-8): this
  // tolerance leaves a wide margin, yet a single wrong or missing term (of size ~1) fails it.
  const tol = 1e-6 * Math.sqrt(n) * maxAbs;
  const ok = maxDiff <= tol && Number.isFinite(maxDiff);
  if (!ok) failed = true;
  const torchCheck = torch && (await checkTorch(torch.request({ op: 'matmul', n, a: b64(a.data() as Float32Array), b: b64(b.data() as Float32Array), c: b64(mine as Float32Array) }), 'max_diff', tol));

  const flops = 2 * n ** 3;
  // About 30 ms of work per sample at ~1 GFLOP/s, at least one call.
  const inner = Math.max(1, Math.round(3e7 / flops));
  const samples = quick ? 5 : n >= 512 ? 9 : 15;
  const [dtMs, tfMs, torchMs] = await timePair(
    () => void noGrad(() => a.matmul(b)),
    () => {
      const c = tf.matMul(ta, tb);
      c.dataSync();
      c.dispose();
    },
    { warmup: quick ? 1 : 3, samples, inner },
    torch && torchCheck ? (calls) => torch.time('matmul', calls) : undefined,
  );
  ta.dispose();
  tb.dispose();
  const gf = (ms: number) => flops / (ms * 1e6);
  return {
    name: `matmul ${n}x${n}x${n} f32`,
    unit: 'GFLOP/s',
    dtlab: gf(dtMs),
    tfjs: gf(tfMs),
    ratio: gf(dtMs) / gf(tfMs),
    check: `${ok ? 'ok' : 'FAIL'} max|diff| ${maxDiff.toExponential(1)}`,
    ...(torchMs === undefined ? {} : { torch: gf(torchMs), torchRatio: gf(dtMs) / gf(torchMs) }),
    ...(torchCheck ? { torchCheck } : {}),
  };
}

/**
 * Waits for torch's answer to a setup command and checks the number it
 * reports under `key` (a max |difference| from dtlab) against `tol`. A
 * failed check fails the benchmark; an error drops torch from the row.
 */
async function checkTorch(reply: Promise<Record<string, unknown>>, key: string, tol: number): Promise<string | null> {
  const r = await reply;
  if (typeof r[key] !== 'number') {
    console.warn(`warning: torch left out of a row: ${String(r.error)}`);
    return null;
  }
  const diff = r[key] as number;
  const ok = diff <= tol && Number.isFinite(diff);
  if (!ok) failed = true;
  return `${ok ? 'ok' : 'FAIL'} ${diff.toExponential(1)}`;
}

async function benchMlp(torch: TorchPeer | null): Promise<Row> {
  const [B, D, H, C] = [64, 784, 256, 10];
  const x = randn([B, D], { seed: SEED });
  const gen = new Generator(SEED + 1);
  const labels = Array.from({ length: B }, () => gen.int(C));

  // dtlab: the model as a student writes it.
  const model = new nn.MLP([D, H, C], { seed: SEED });
  const opt = new optim.Adam(model.parameters(), { lr: 1e-3 });
  const dtStep = (): number => {
    opt.zeroGrad();
    const loss = nn.crossEntropy(model.forward(x), labels);
    loss.backward();
    opt.step();
    return loss.item();
  };

  // tfjs: the same initial weights, stored [in, out] as tfjs layers keep them.
  const [l1, l2] = [model.layers[0] as nn.Linear, model.layers[2] as nn.Linear];
  // A copy: tfjs may keep the array it is given, and dtlab's Adam updates its own in place.
  const asVar = (t: Tensor, transpose: boolean) => {
    const v = transpose ? t.transpose(0, 1) : t;
    return tf.variable(tf.tensor(Float32Array.from(v.data()), [...v.shape], 'float32'));
  };
  const w1 = asVar(l1.weight, true);
  const b1 = asVar(l1.bias!, false);
  const w2 = asVar(l2.weight, true);
  const b2 = asVar(l2.bias!, false);
  const tx = tf.tensor2d(Float32Array.from(x.data()), [B, D], 'float32');
  const ty = tf.cast(tf.oneHot(tf.tensor1d(labels, 'int32'), C), 'float32');
  // eps 1e-8 as torch and dtlab (tfjs defaults to 1e-7).
  const tfOpt = tf.train.adam(1e-3, 0.9, 0.999, 1e-8);
  const tfStep = (): number => {
    const loss = tfOpt.minimize(() => {
      const h = tf.relu(tf.add(tf.matMul(tx, w1), b1));
      const logits = tf.add(tf.matMul(h, w2), b2);
      return tf.losses.softmaxCrossEntropy(ty, logits) as tf.Scalar;
    }, true)!;
    const v = loss.dataSync()[0]!;
    loss.dispose();
    return v;
  };

  // torch gets the same initial weights (its Linear keeps them [out, in], as dtlab does).
  const torchSetup = torch?.request({
    op: 'mlp', batch: B, inputs: D, hidden: H, classes: C, lr: 1e-3, x: b64(x.data() as Float32Array), labels: b64(Int32Array.from(labels)),
    w1: b64(Float32Array.from(l1.weight.data())), b1: b64(Float32Array.from(l1.bias!.data())),
    w2: b64(Float32Array.from(l2.weight.data())), b2: b64(Float32Array.from(l2.bias!.data())),
  });

  // Same start, same data, same optimizer: the first two losses must agree.
  const dtLoss = [dtStep(), dtStep()];
  const tfLoss = [tfStep(), tfStep()];
  const lossDiff = Math.max(...dtLoss.map((l, i) => Math.abs(l - tfLoss[i]!)));
  const ok = lossDiff <= 1e-4;
  if (!ok) failed = true;
  const torchCheck = torchSetup && (await checkTorch(torchSetup.then((r) => {
    const losses = r.losses as number[] | undefined;
    return losses ? { diff: Math.max(...dtLoss.map((l, i) => Math.abs(l - losses[i]!))) } : r;
  }), 'diff', 1e-4));

  const tensorsBefore = tf.memory().numTensors;
  const [dtMs, tfMs, torchMs] = await timePair(
    () => void dtStep(),
    () => void tfStep(),
    { warmup: quick ? 2 : 5, samples: quick ? 7 : 25, inner: 1 },
    torch && torchCheck ? (calls) => torch.time('mlp', calls) : undefined,
  );
  if (tf.memory().numTensors !== tensorsBefore) console.warn(`warning: tfjs leaked ${tf.memory().numTensors - tensorsBefore} tensors`);
  tf.dispose([w1, b1, w2, b2, tx, ty]);
  tfOpt.dispose();
  return {
    name: `MLP ${D}-${H}-${C} step, batch ${B}`,
    unit: 'ms/step',
    dtlab: dtMs,
    tfjs: tfMs,
    ratio: tfMs / dtMs,
    check: `${ok ? 'ok' : 'FAIL'} |loss diff| ${lossDiff.toExponential(1)}`,
    ...(torchMs === undefined ? {} : { torch: torchMs, torchRatio: torchMs / dtMs }),
    ...(torchCheck ? { torchCheck } : {}),
  };
}

function printTable(rows: Row[]): void {
  const head = ['benchmark', 'unit', 'dtlab', 'tfjs-cpu', 'dtlab/tfjs', 'check', 'torch', 'dtlab/torch', 'torch check'];
  const body = rows.map((r) => [
    r.name, r.unit, r.dtlab.toFixed(2), r.tfjs.toFixed(2), `${r.ratio.toFixed(2)}x`, r.check,
    r.torch?.toFixed(2) ?? '-', r.torchRatio === undefined ? '-' : `${r.torchRatio.toFixed(2)}x`, r.torchCheck ?? '-',
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const left = new Set([0, 1, 5, 8]);
  const line = (cells: string[]) => cells.map((c, i) => (left.has(i) ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ').trimEnd();
  console.log(line(head));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const b of body) console.log(line(b));
}

/** This run's rows for `pnpm bench all`: the issue-22 targets (torch, the kernel, metering) and tfjs as a peer. */
function figures(rows: Row[], kernels: KernelRow[], metering: MeteringRow[], torchName: string | null): BenchFigure[] {
  const out: BenchFigure[] = [];
  for (const r of rows.filter((x) => x.unit === 'GFLOP/s' && !x.name.startsWith('matmul 64x'))) {
    const ratio = r.torchRatio ?? null;
    out.push({ bench: 'tensor', figure: `${r.name} vs torch`, unit: r.unit, dtlab: r.dtlab, peer: r.torch ?? null, peerName: torchName ?? 'torch (not importable here)', ratio, target: '>= 1.0x', met: meets(ratio, '>=', 1.0) });
  }
  for (const r of rows) out.push({ bench: 'tensor', figure: `${r.name} vs tfjs`, unit: r.unit, dtlab: r.dtlab, peer: r.tfjs, peerName: `tfjs-core ${tf.version_core}, cpu`, ratio: r.ratio, target: '-', met: null });
  const step = kernels.find((k) => k.unit === 'ms/step');
  if (step) out.push({ bench: 'tensor', figure: `${step.name}, WebAssembly kernel vs JavaScript`, unit: step.unit, dtlab: step.wasm, peer: step.js, peerName: 'the JavaScript kernel (before)', ratio: step.ratio, target: '>= 1.5x', met: meets(step.ratio, '>=', 1.5) });
  const m = metering[0];
  if (m) out.push({ bench: 'tensor', figure: `${m.name}, metered vs not`, unit: m.unit, dtlab: m.on, peer: m.off, peerName: 'the same step with no meter', ratio: m.ratio, target: '<= 1.05x', met: meets(m.ratio, '<=', 1.05) });
  return out;
}

async function main(): Promise<void> {
  await loadTfjs();
  const cpus = os.cpus();
  console.log(`dtlab vs tfjs-core ${tf.version_core} (backend '${tf.getBackend()}')${quick ? ', --quick' : ''}`);
  console.log(`machine: ${cpus[0]?.model ?? 'unknown cpu'}, ${cpus.length} cores, node ${process.version}, ${os.platform()} ${os.arch()}`);
  const started = withTorch ? await TorchPeer.start() : { skipped: '--no-torch given' };
  const torch = started instanceof TorchPeer ? started : null;
  const t = started instanceof TorchPeer ? started.info : null;
  console.log(t ? `peer: torch ${t.torch}, ${t.threads} thread, BLAS ${t.blas}` : `peer: no torch column: ${(started as { skipped: string }).skipped}.`);
  console.log(`date: ${new Date().toISOString().slice(0, 10)}, seed ${SEED}\n`);
  const rows: Row[] = [];
  for (const n of [64, 256, 512]) rows.push(await benchMatmul(n, torch));
  rows.push(await benchMlp(torch));
  torch?.close();
  printTable(rows);
  console.log('\nratio: dtlab/peer for GFLOP/s, peer_ms/dtlab_ms (speedup) for ms/step; above 1x is dtlab faster.');
  console.log('torch check: max|diff| of the product from dtlab\'s, |loss diff| over the first two steps.\n');
  const kernels = benchKernels(quick);
  printTargets(rows, kernels);
  const metering = benchMetering(quick, SEED);
  printMetering(metering);
  reportFigures(figures(rows, kernels, metering, t ? `torch ${t.torch}, ${t.threads} thread` : null));
  if (failed) {
    console.error('\nbench: a correctness check failed (see the check column): dtlab and tfjs disagree.');
    process.exit(1);
  }
}

await main();
