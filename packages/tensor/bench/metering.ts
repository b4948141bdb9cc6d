/**
 * What the virtual device's meter costs: the same work timed with no meter
 * (as outside a launch) and inside a rank's meter context, as a rank of a
 * launch with a device runs it: every op charged by the roofline, every
 * storage counted on the device's memory (watched through the same
 * finalization registry the runtime gives a rank's meter), and the
 * context found through V8's promise hooks, by the scope the runtime installs
 * (PromiseHookScope, src/meter/promise-scope.ts).
 * Memory points (garbage collections) are not included: they happen at
 * message deliveries and marks, which this benchmark has none of; the
 * runtime README gives their cost.
 *
 * Samples alternate between off and on, so a busy machine slows both alike,
 * and the ratio is the median of each pair's on/off: a pair's two samples
 * are taken moments apart, so a machine whose speed drifts (other work
 * starting and stopping) moves both.
 */
import v8 from 'node:v8';
import vm from 'node:vm';
import { RankMeter, installAllocationHooks, runInContext, setMeterScope, type MeterContext, type RegistryWithCleanup } from '../src/meter/index.ts';
import { PromiseHookScope } from '../src/meter/promise-scope.ts';
import { Generator, nn, noGrad, optim, randn } from '../src/index.ts';


/**
 * The finalization registry a rank's meter gets from the runtime
 * (cleanupRegistry in @dtlab/runtime's src/device/collect.ts): with
 * cleanupSome, which V8 gives contexts made after its flag is set. Without it
 * the meter falls back to WeakRefs, which keep every buffer alive to the end
 * of the job that made it: a cost no rank of a launch pays.
 */
function runtimeRegistry(): RegistryWithCleanup | undefined {
  v8.setFlagsFromString('--harmony-weak-refs-with-cleanup-some');
  const R = vm.runInNewContext('FinalizationRegistry') as RegistryWithCleanup & { prototype: Record<string, unknown> };
  return typeof R.prototype.cleanupSome === 'function' ? R : undefined;
}

/** One row of the metering table. */
export interface MeteringRow {
  name: string;
  unit: string;
  off: number;
  on: number;
  /** Median over the pairs of samples of on/off. */
  ratio: number;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Median ms per call of `fn` without and with a meter context, samples alternating, and the median of the pairs' ratios. */
function offOn(fn: () => void, ctx: () => MeterContext, samples: number, warmup: number, inner: number): [number, number, number] {
  const time = (metered: boolean) => {
    const t0 = performance.now();
    if (metered) runInContext(ctx(), () => {
      for (let i = 0; i < inner; i++) fn();
    });
    else for (let i = 0; i < inner; i++) fn();
    return (performance.now() - t0) / inner;
  };
  for (let i = 0; i < warmup; i++) {
    time(false);
    time(true);
  }
  const off: number[] = [];
  const on: number[] = [];
  for (let s = 0; s < samples; s++) {
    off.push(time(false));
    on.push(time(true));
  }
  return [median(off), median(on), median(on.map((x, i) => x / off[i]!))];
}

/** Times an MLP training step and a matmul with metering off and on. */
export function benchMetering(quick: boolean, seed: number): MeteringRow[] {
  setMeterScope(new PromiseHookScope());
  installAllocationHooks();
  const device = { name: 'course', flopsPerUs: { float32: 1e4, float64: 5e3 }, memoryBytesPerUs: 8e4, capacityBytes: 2 ** 40 };
  // A fresh meter per sample, as each launch has its own, with the runtime's registry.
  const registry = runtimeRegistry();
  const ctx = () => new RankMeter({ rank: 0, device, ...(registry ? { registry } : {}) }).rootContext();

  const [B, D, H, C] = [64, 784, 256, 10];
  const x = randn([B, D], { seed });
  const gen = new Generator(seed + 1);
  const labels = Array.from({ length: B }, () => gen.int(C));
  const model = new nn.MLP([D, H, C], { seed });
  const opt = new optim.Adam(model.parameters(), { lr: 1e-3 });
  const step = () => {
    opt.zeroGrad();
    nn.crossEntropy(model.forward(x), labels).backward();
    opt.step();
  };
  const a = randn([256, 256], { seed: seed + 2 });
  const small = randn([16, 16], { seed: seed + 3 });
  const [mlpOff, mlpOn, mlpRatio] = offOn(step, ctx, quick ? 25 : 61, quick ? 3 : 5, 1);
  const [mmOff, mmOn, mmRatio] = offOn(() => void noGrad(() => a.matmul(a)), ctx, quick ? 15 : 41, 2, 1);
  // Many tiny ops: where a per-op cost would show most.
  const [tinyOff, tinyOn, tinyRatio] = offOn(() => void small.mul(small).add(1).relu().sum(), ctx, quick ? 9 : 31, 3, 2000);
  return [
    { name: `MLP ${D}-${H}-${C} step, batch ${B}`, unit: 'ms/step', off: mlpOff, on: mlpOn, ratio: mlpRatio },
    { name: 'matmul 256x256x256 f32', unit: 'ms', off: mmOff, on: mmOn, ratio: mmRatio },
    { name: '4 ops on 16x16 tensors', unit: 'µs', off: tinyOff * 1000, on: tinyOn * 1000, ratio: tinyRatio },
  ];
}

/** Prints the metering table; the target is on/off (the median of the pairs') <= 1.05 for the MLP step. */
export function printMetering(rows: MeteringRow[]): void {
  console.log('\nmetering: the virtual device meter off (as outside a launch) and on (a rank of a launch with a device), same run');
  const head = ['benchmark', 'unit', 'off', 'on', 'on/off (pairs)', 'target'];
  const body = rows.map((r, i) => {
    const ratio = r.ratio;
    return [r.name, r.unit, r.off.toFixed(2), r.on.toFixed(2), `${ratio.toFixed(3)}x`, i === 0 ? `<= 1.05x: ${ratio <= 1.05 ? 'met' : 'NOT met'}` : ''];
  });
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i <= 1 || i === 5 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ').trimEnd();
  console.log(line(head));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const b of body) console.log(line(b));
}
