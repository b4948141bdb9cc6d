/**
 * Public checks of ex06-gradient-accumulation. Each runs the submission's
 * accumulateGradients on N rank workers, every rank on its own micro-batches
 * of different lengths, for a few SGD steps, and compares every rank's
 * gradients at every step, and its parameters after it, with one process
 * that trains here, at grade time, on every step's whole batch. The trace
 * check reads the fabric's record of every message, which student code
 * cannot forge, cut into steps at fences whose tags are secret.
 *
 * Tolerance: float32, rtol 1e-5 and atol 1e-7 on the gradients (a few
 * hundredths in size), rtol 1e-5 and atol 1e-6 on the parameters: the
 * runs add the same numbers in different orders (a sum per micro-batch, over
 * micro-batches, then a ring average, against one mean over the whole
 * batch). Measured between the reference solution and the reference over
 * 100 runs of 3 steps (5 seeds, 1 to 5 ranks, 1 to 4 micro-batches), the
 * worst difference was a tenth of the tolerance on the gradients and a
 * sixtieth on the parameters. Weighing micro-batches of 1 and 5 examples
 * alike moves gradients by a tenth of their size and more.
 */
import { COLLECTIVE_TAG } from '@dtlab/collectives';
import type { TraceEvent } from '@dtlab/runtime';
import type { Tensor } from '@dtlab/tensor';
import { programPath, fenceTags, type CheckContext, type CheckFn } from '@dtlab/grader';
import { drawLengths, makeModel, singleProcessTraining, type AccumulationRun, type AccumulationSpec } from './data.ts';

const ENTRY = 'src/gradient-accumulation.ts';
const program = { module: programPath(import.meta.url, './programs.ts'), export: 'accumulateSteps' };
export const GRAD_TOLERANCE = { rtol: 1e-5, atol: 1e-7 };
export const PARAM_TOLERANCE = { rtol: 1e-5, atol: 1e-6 };
/** The checks' model: P = 6·12+12 + 12·8+8 + 8·4+4 = 224 parameter elements. */
export const SIZES = [6, 12, 8, 4];

const ranksWord = (n: number) => `${n} rank${n === 1 ? '' : 's'}`;

/** A run: its spec, every rank's gradients and parameters, and the launch's trace. */
export interface Run {
  spec: AccumulationSpec;
  worldSize: number;
  outputs: AccumulationRun[];
  trace: TraceEvent[];
  /** The tags of the run's fences: before each step and after the last (fences.ts). */
  fences: number[];
}

/** Runs the submission on `worldSize` ranks over the spec's steps. */
export async function runAccumulation(ctx: CheckContext, spec: AccumulationSpec): Promise<Run> {
  const worldSize = spec.lengths[0]!.length;
  const k = makeModel(spec).parameters().length;
  const steps = spec.lengths.length;
  const each = { array: { array: 'tensor', length: k }, length: steps } as const;
  // Secret to this check and launch (its seed and world size), so a submission cannot send one.
  const fences = fenceTags(ctx.markKey(), `${spec.seed} ${worldSize}`, steps + 1);
  const result = await ctx.run({ worldSize, program, args: [ctx.entry(ENTRY), spec, fences], returns: { object: { grads: each, params: each } } });
  return { spec, worldSize, outputs: result.ranks.map((r) => r.value as AccumulationRun), trace: result.trace, fences };
}

/** A spec with lengths drawn from `seed`: `k` micro-batches holding `total` examples on each rank. */
export function spec(seed: number, worldSize: number, steps: number, k: number, total: number): AccumulationSpec {
  return { seed, sizes: SIZES, lr: 0.5, lengths: drawLengths(seed, steps, worldSize, k, total) };
}

function close(a: Tensor, b: Tensor, tol: { rtol: number; atol: number }): boolean {
  const x = a.toArray();
  const y = b.toArray();
  return x.length === y.length && x.every((v, i) => Math.abs(v - y[i]!) <= tol.atol + tol.rtol * Math.abs(y[i]!));
}

/**
 * Every rank's gradients at every step, and its parameters after it, must
 * equal one process on the step's whole batch. Before failing at the first
 * wrong gradient it says when the gradients are those of the mean of the
 * micro-batches' mean losses.
 */
export function expectTraining(ctx: CheckContext, run: Run): void {
  const { spec: s, worldSize, outputs } = run;
  const names = makeModel(s).namedParameters().map(([n]) => n);
  const want = singleProcessTraining(s);
  for (let step = 0; step < s.lengths.length; step++) {
    const lengths = s.lengths[step]!.map((l) => `[${l.join(', ')}]`).join(', ');
    const at = `step ${step + 1} with ${ranksWord(worldSize)} (micro-batch lengths by rank: ${lengths})`;
    const wrong = outputs.some((o) => o.grads[step]!.some((g, i) => !close(g, want.grads[step]![i]!, GRAD_TOLERANCE)));
    if (wrong && step === 0) {
      noteMeanOfMeans(ctx, run, want.grads[0]!);
      noteScaled(ctx, run, want.grads[0]!);
    }
    outputs.forEach((o, rank) =>
      names.forEach((name, i) => {
        const g = o.grads[step]![i]!;
        if (g.numel === 0 && want.grads[step]![i]!.numel > 0) ctx.fail(`rank ${rank}: ${name}.grad is null after accumulateGradients at ${at}: every parameter takes part in every micro-batch`, { rank, index: null, expected: 'a gradient', actual: 'null', label: `${name}.grad at ${at}` });
        ctx.expectClose(g, want.grads[step]![i]!, { rank, label: `${name}.grad at ${at}`, ...GRAD_TOLERANCE });
      }),
    );
    outputs.forEach((o, rank) => names.forEach((name, i) => ctx.expectClose(o.params[step]![i]!, want.params[step]![i]!, { rank, label: `${name} after the SGD step of ${at}`, ...PARAM_TOLERANCE })));
  }
}

/** Notes when the first step's gradients are those of the mean of the micro-batches' mean losses. */
function noteMeanOfMeans(ctx: CheckContext, run: Run, want: Tensor[]): void {
  const tempting = singleProcessTraining({ ...run.spec, lengths: run.spec.lengths.slice(0, 1) }, 'micro-batches').grads[0]!;
  const ranks = run.outputs.flatMap((o, r) => (o.grads[0]!.every((g, i) => close(g, tempting[i]!, GRAD_TOLERANCE)) ? [r] : []));
  if (ranks.length === run.outputs.length && !tempting.every((g, i) => close(g, want[i]!, GRAD_TOLERANCE))) {
    ctx.note(`at step 1 every rank holds the gradient of the mean of its micro-batches' mean losses (averaged over the ranks), not of the mean over the step's examples: with micro-batches of ${run.spec.lengths[0]![0]!.join(', ')} examples, an example of the shortest weighs ${Math.max(...run.spec.lengths[0]![0]!) / Math.min(...run.spec.lengths[0]![0]!)} times one of the longest`);
  }
}

/**
 * Notes when every rank's first-step gradients are all one constant times
 * the right ones (a sum where a mean belongs, a count divided twice), naming
 * the factor beside the rank's example count n and the rank count N, which
 * are what such factors are made of.
 */
function noteScaled(ctx: CheckContext, run: Run, want: Tensor[]): void {
  const w = want.flatMap((g) => g.toArray());
  const ww = w.reduce((sum, v) => sum + v * v, 0);
  if (!(ww > 0)) return;
  const factors = run.outputs.map((o) => {
    const g = o.grads[0]!.flatMap((t) => t.toArray());
    if (g.length !== w.length) return null;
    const c = g.reduce((sum, v, i) => sum + v * w[i]!, 0) / ww;
    const tol = { rtol: 1e-4, atol: 1e-6 };
    return g.every((v, i) => Math.abs(v - c * w[i]!) <= tol.atol + tol.rtol * Math.abs(c * w[i]!)) ? c : null;
  });
  const c = factors[0];
  if (c == null || factors.some((f) => f == null || Math.abs(f - c) > 1e-4 * Math.abs(c)) || Math.abs(c - 1) < 1e-3) return;
  const n = run.spec.lengths[0]![0]!.reduce((sum, l) => sum + l, 0);
  ctx.note(`at step 1 every rank's gradients are ${Number(c.toPrecision(4))} times the right ones (this run: n = ${n} examples per rank, N = ${run.worldSize} ranks): the direction is right and the scale is not; the step's loss is the mean over its N·n examples, counted once`);
}

/** One step's traffic, from the trace: what the ranks sent each other between their fences. */
export interface StepTraffic {
  /** Bytes all ranks sent each other with each collective tag (COLLECTIVE_TAG + the call's index): one entry a collective call. */
  collective: Map<number, number>;
  /** Bytes all ranks sent each other with each other tag: plain sends, each tag counted as one call. */
  plain: Map<number, number>;
  /** Bytes all ranks sent each other, whatever the tag (trace `bytes`). */
  bytes: number;
}

/**
 * Each step's traffic, from the trace: a rank's messages to other ranks
 * between its fence before step s and the next belong to step s
 * (fences.ts: secret tags, one before every step and one after the last).
 * Every message counts, whatever its tag: the collectives tag a rank's i-th
 * call COLLECTIVE_TAG + i, and any other tag is a plain send, an exchange
 * of its own. Returns a message instead when a rank's fences are out of
 * order or missing, or a rank sent to another before the first fence or
 * after the last (no step was running then).
 */
export function trafficPerStep(trace: readonly TraceEvent[], worldSize: number, fences: readonly number[]): StepTraffic[] | string {
  const steps = fences.length - 1;
  const perStep: StepTraffic[] = Array.from({ length: steps }, () => ({ collective: new Map(), plain: new Map(), bytes: 0 }));
  const phase = new Array<number>(worldSize).fill(0);
  for (const e of trace) {
    const at = fences.indexOf(e.tag);
    if (at >= 0 && e.src === e.dst) {
      if (at !== phase[e.src]) return `rank ${e.src} sent fence ${at} (of ${fences.length}) where fence ${phase[e.src]} was due`;
      phase[e.src]!++;
      continue;
    }
    if (e.src === e.dst || phase[e.src] === undefined) continue;
    const step = phase[e.src]! - 1;
    if (step < 0 || step >= steps) return `rank ${e.src} sent ${e.bytes} bytes to rank ${e.dst} (tag ${e.tag}) ${step < 0 ? 'before the first step began' : 'after the last step had ended'}`;
    const t = perStep[step]!;
    const calls = e.tag >= COLLECTIVE_TAG ? t.collective : t.plain;
    calls.set(e.tag, (calls.get(e.tag) ?? 0) + e.bytes);
    t.bytes += e.bytes;
  }
  const short = phase.findIndex((k) => k !== fences.length);
  if (short >= 0) return `rank ${short} passed ${phase[short]} of the ${fences.length} fences`;
  return perStep;
}

/**
 * Exactly one exchange per optimizer step, carrying every gradient element
 * once: one collective call, no plain sends, and 2(N-1)·P·4 bytes in all,
 * what a ring all-reduce of P float32 elements on N ranks sends (each of
 * its N chunks crosses N-1 links twice). A sync after every micro-batch
 * sends k times that, whatever tags it uses.
 */
export function expectOneAllReduce(ctx: CheckContext, run: Run): void {
  const { spec: s, worldSize, trace } = run;
  if (worldSize < 2) throw new Error('BUG: a one-rank launch sends no messages to count');
  const p = makeModel(s).numParameters();
  const k = s.lengths[0]![0]!.length;
  const want = 2 * (worldSize - 1) * p * 4;
  const traffic = trafficPerStep(trace, worldSize, run.fences);
  if (typeof traffic === 'string') {
    ctx.fail(`with ${ranksWord(worldSize)} and ${k} micro-batches, the steps' traffic cannot be read from the trace: ${traffic}. The check fences each step with messages of its own; send only to other ranks, and only from inside accumulateGradients`, { rank: null, index: null, expected: 'every message inside a step', actual: traffic, label: `the trace with ${ranksWord(worldSize)}` });
  }
  traffic.forEach((t, step) => {
    const at = `step ${step + 1} with ${ranksWord(worldSize)} and ${k} micro-batches`;
    if (t.collective.size !== 1 || t.plain.size > 0) {
      const sizes = [...t.collective.values()].map((b) => b / 4 / (2 * (worldSize - 1)));
      const plain = t.plain.size > 0 ? `, and plain sends under ${t.plain.size} tag${t.plain.size === 1 ? '' : 's'} of their own (${[...t.plain.values()].reduce((a, b) => a + b, 0)} bytes, an exchange a tag)` : '';
      ctx.fail(`${at} made ${t.collective.size} collective call${t.collective.size === 1 ? '' : 's'}${sizes.length ? ` (all-reduces of ${sizes.join(', ')} elements)` : ''}${plain}: the ranks must exchange the step's gradients once, after the last micro-batch, in one all-reduce of all ${p} gradient elements`, {
        rank: null,
        index: null,
        expected: '1 collective call and no plain sends',
        actual: `${t.collective.size} collective calls, ${t.plain.size} plain-send tags`,
        label: `collective calls in ${at}`,
      });
    }
    if (t.bytes !== want) {
      ctx.fail(`the one collective call of ${at} sent ${t.bytes} bytes over all ranks, what a ring all-reduce of ${t.bytes / 4 / (2 * (worldSize - 1))} float32 elements sends; one ring all-reduce of all ${p} gradient elements sends 2(N-1)·P·4 = ${want} bytes`, {
        rank: null,
        index: null,
        expected: `${want} bytes`,
        actual: `${t.bytes} bytes`,
        label: `bytes all-reduced in ${at}`,
      });
    }
  });
}

export const checks: Record<string, CheckFn> = {
  'equal-lengths': async (ctx) => {
    const s: AccumulationSpec = { seed: ctx.seedFor('equal'), sizes: SIZES, lr: 0.5, lengths: [0, 1].map(() => [[3, 3, 3], [3, 3, 3]]) };
    expectTraining(ctx, await runAccumulation(ctx, s));
    ctx.note('2 ranks, 2 steps of 3 micro-batches of 3 examples: every gradient matches one process on the whole batch');
  },
  'unequal-lengths': async (ctx) => {
    const s: AccumulationSpec = { seed: ctx.seedFor('unequal'), sizes: SIZES, lr: 0.5, lengths: [[[5, 2, 1], [1, 3, 4]], [[2, 2, 4], [6, 1, 1]]] };
    expectTraining(ctx, await runAccumulation(ctx, s));
    ctx.note('2 ranks, 2 steps of 3 micro-batches of different lengths: every gradient matches one process on the whole batch');
  },
  'one-all-reduce': async (ctx) => {
    const run = await runAccumulation(ctx, spec(ctx.seedFor('trace'), 3, 2, 4, 9));
    expectTraining(ctx, run);
    expectOneAllReduce(ctx, run);
    ctx.note('3 ranks, 2 steps of 4 micro-batches: one all-reduce of every gradient element a step');
  },
};
