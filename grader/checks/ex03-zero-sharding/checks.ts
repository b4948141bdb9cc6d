/**
 * Public checks of ex03-zero-sharding. Each runs the submission's ZeroAdamW
 * on N rank workers, every rank with its own seeded gradients, and compares
 * every rank's parameters after each step with single-process AdamW on the
 * mean gradient, computed here.
 */
import { Tensor, bytesPerElement, chunkBounds, unflattenTensors } from '@dtlab/tensor';
import type { RankStats } from '@dtlab/runtime';
import { programPath, type CheckContext, type CheckFn, type RunSpec, type ValueShape } from '@dtlab/grader';
import { BYTES_PER_ELEMENT, CHECK_OPTIONS, expectedParamsByStep, paramCount, type GradSpec } from './data.ts';
import type { SavedCheckpoint, StepsResult } from './programs.ts';

const ENTRY = 'src/zero-adamw.ts';
const program = { module: programPath(import.meta.url, './programs.ts'), export: 'zeroSteps' };
const resume = { module: programPath(import.meta.url, './programs.ts'), export: 'resumeSteps' };

/**
 * 40·30 + 30 + 30·11 + 11 + 2 = 1573 elements: 1 mod 2, 3 and 4, so the
 * shards are uneven, and uneven in a way that tells the split rules apart:
 * chunkBounds gives 3 ranks 525, 524, 524 elements, while blocks of
 * ⌈P/N⌉ (torch.chunk's rule) would give 525, 525, 523. (For P ≡ 0 or N-1
 * mod N the two rules agree, so such a P would not show which one a
 * submission uses.)
 */
const SHAPES = [[40, 30], [30], [30, 11], [11], [2]];
const LAYOUT: ParamLayout = { names: SHAPES.map((_, i) => `params[${i}]`), shapes: SHAPES };

/** What the rank programs hand back: parameters after each step, and a checkpoint when one was asked for. */
const STEPS_RESULT: ValueShape = { object: { params: { array: 'tensor' } } };

/** Runs `steps` steps on `worldSize` ranks; returns the inputs and what every rank returned. */
export async function runSteps(ctx: CheckContext, worldSize: number, steps: number, extra: Partial<GradSpec> = {}): Promise<{ spec: GradSpec; outputs: StepsResult[]; stats: RankStats[] }> {
  const spec: GradSpec = { seed: ctx.seedFor('grads', worldSize), shapes: SHAPES, steps, opts: CHECK_OPTIONS, ...extra };
  const result = await ctx.run({ worldSize, program, args: [ctx.entry(ENTRY), spec], returns: STEPS_RESULT });
  return { spec, outputs: result.ranks.map((r) => r.value as StepsResult), stats: result.stats };
}

/** The parameters' names and shapes, to report a wrong value as `2.weight[3, 5]` rather than a flat index. */
export interface ParamLayout {
  names: string[];
  shapes: number[][];
}

/**
 * Compares every rank's parameters after each step with `expected[step]`
 * (flat), parameter by parameter; the first wrong value fails, naming the
 * step, the rank, the parameter and the index in it.
 */
export function expectParity(ctx: CheckContext, outputs: StepsResult[], expected: Tensor[], layout: ParamLayout, tol: { rtol: number; atol: number }, firstStep = 0): void {
  const worldSize = outputs.length;
  expected.forEach((want, s) => {
    const wantParams = unflattenTensors(want, layout.shapes);
    outputs.forEach((out, rank) => {
      const got = out.params[s];
      if (!got || got.numel !== want.numel) ctx.fail(`rank ${rank}: no parameters after step ${firstStep + s + 1} with ${worldSize} rank${worldSize === 1 ? '' : 's'}`, { rank, index: null, expected: `${want.numel} elements`, actual: got ? `${got.numel} elements` : 'none', label: 'parameters' });
      unflattenTensors(got, layout.shapes).forEach((g, i) =>
        ctx.expectClose(g, wantParams[i]!, { rank, label: `${layout.names[i]} after step ${firstStep + s + 1} with ${worldSize} rank${worldSize === 1 ? '' : 's'}`, ...tol }),
      );
    });
  });
}

/** Shard sizes under chunkBounds, for messages. */
export function shardSizes(p: number, worldSize: number): string {
  return chunkBounds(p, worldSize).map((b) => b.end - b.start).join(', ');
}

/**
 * Checks each rank's checkpoint (what `stateDict()` returned, as the rank
 * program read it: saveCheckpoint): a ZeroStateDict and nothing more, whose
 * moments are the rank's own shard, `chunkBounds(P, N)[rank]`, in float32.
 * Returns each checkpoint's bytes: 8 for the step count, and the moments'
 * elements.
 */
export function expectCheckpoints(ctx: CheckContext, checkpoints: (SavedCheckpoint | undefined)[], p: number, afterStep: number): number[] {
  const worldSize = checkpoints.length;
  const bounds = chunkBounds(p, worldSize);
  return checkpoints.map((c, rank) => {
    const label = `the checkpoint (stateDict()) after step ${afterStep} with ${worldSize} rank${worldSize === 1 ? '' : 's'} (P = ${p})`;
    const fail = (why: string, expected: string, actual: string) => ctx.fail(`rank ${rank}: ${label}: ${why}`, { rank, index: null, expected, actual, label });
    if (c === undefined) return fail("stateDict() returned nothing: it must return this rank's optimizer state (see ZeroStateDict)", 'a checkpoint', 'undefined');
    if ('invalid' in c) return fail(`${c.invalid}`, 'a ZeroStateDict', 'something else');
    if (c.extra.length) return fail(`it holds fields a ZeroStateDict has not (${c.extra.join(', ')}): keep all of this rank's optimizer state, and only it, in step, expAvg and expAvgSq`, 'step, expAvg, expAvgSq', [...c.extra, 'step', 'expAvg', 'expAvgSq'].join(', '));
    if (c.changedAfterSave !== undefined) return fail(`the object stateDict() returned changed during the steps after it (${c.changedAfterSave}): a checkpoint must be a copy of the state at that step, not the live state, or saving one after step ${afterStep} saves a later step's state`, `step ${afterStep}'s state`, 'a later state');
    const shard = bounds[rank]!.end - bounds[rank]!.start;
    const wide = c.dtypes.filter((d) => d !== 'float32');
    if (wide.length) return fail(`its moments are ${wide[0]}, ${bytesPerElement(wide[0] as 'float64')} bytes an element: keep them in the parameters' dtype, float32 (2 moments × ${shard} elements × 4 bytes)`, 'float32', wide[0]!);
    for (const [name, t] of [['expAvg', c.expAvg], ['expAvgSq', c.expAvgSq]] as const) {
      if (t.numel !== shard) {
        const more = t.numel > shard;
        fail(
          `its ${name} has ${t.numel} elements, where this rank's shard, chunkBounds(P, N)[${rank}] = elements ${bounds[rank]!.start} to ${bounds[rank]!.end}, has ${shard}: ${more ? (t.numel >= p ? 'it holds the moments of every element, not of this rank\'s shard' : 'the shard bounds differ from chunkBounds(P, N)') : 'the shard bounds differ from chunkBounds(P, N), or part of the state is kept somewhere else'}`,
          `${shard} elements`,
          `${t.numel} elements`,
        );
      }
    }
    return 8 + (c.expAvg.numel + c.expAvgSq.numel) * BYTES_PER_ELEMENT;
  });
}

/**
 * A rank's bytes per step after loading a checkpoint must not exceed its
 * bytes per step in the run that saved it (training resumes on the same
 * schedule): more means the load, or the steps after it, fetched state from
 * other ranks. 64 bytes of slack per step for bookkeeping messages.
 */
export function expectNoMoreTrafficAfterLoad(ctx: CheckContext, first: RankStats[], firstSteps: number, resumed: RankStats[], resumedSteps: number): void {
  for (const r of resumed) {
    const before = first[r.rank]!.bytesSent / firstSteps;
    const limit = Math.ceil(before * resumedSteps) + 64 * resumedSteps;
    if (r.bytesSent > limit) {
      ctx.fail(
        `rank ${r.rank} sent ${r.bytesSent} bytes in the ${resumedSteps} step${resumedSteps === 1 ? '' : 's'} after loading its checkpoint with ${resumed.length} rank${resumed.length === 1 ? '' : 's'}, more than the ${limit} its steps sent before (${Math.round(before)} bytes a step): loading a checkpoint must not fetch other ranks' optimizer state; each rank's checkpoint is all its state`,
        { rank: r.rank, index: null, expected: `<= ${limit}`, actual: r.bytesSent, label: `bytes sent by rank ${r.rank} after loading its checkpoint` },
      );
    }
  }
}

/** A training run to checkpoint and resume (see expectCheckpointRoundTrip). */
export interface RoundTrip {
  worldSize: number;
  /** Parameter elements. */
  p: number;
  /** Steps before the checkpoint, and in all. */
  checkpointAfter: number;
  steps: number;
  /** What every rank of the first run returned (its checkpoint included), and its traffic. */
  first: StepsResult[];
  firstStats: RankStats[];
  /** The reference parameters (flat) after each step of the whole run. */
  expected: Tensor[];
  layout: ParamLayout;
  tol: { rtol: number; atol: number };
  /** The launch that resumes from `checkpoints` (one per rank), starting at `expected[checkpointAfter - 1]`. */
  resume: (checkpoints: SavedCheckpoint[]) => RunSpec;
}

/**
 * The sharded-checkpoint round trip: every rank's checkpoint of the first
 * run must be a ZeroStateDict of its own shard, and a fresh optimizer per
 * rank, on workers that never ran the submission, that loads it must train
 * the remaining steps like single-process AdamW, sending no more a step than
 * before. State kept anywhere but in the checkpoint is lost on the way, and
 * the resumed run goes wrong. Returns the checkpoints' sizes.
 */
export async function expectCheckpointRoundTrip(ctx: CheckContext, t: RoundTrip): Promise<{ bytes: number[] }> {
  const k = t.checkpointAfter;
  const bytes = expectCheckpoints(ctx, t.first.map((o) => o.checkpoint), t.p, k);
  const checkpoints = t.first.map((o) => o.checkpoint!);
  const resumed = await ctx.run({ ...t.resume(checkpoints), returns: STEPS_RESULT, freshWorkers: true });
  const outputs = resumed.ranks.map((r) => r.value as StepsResult);
  const relabel = { ...t.layout, names: t.layout.names.map((n) => `${n} (resumed from the checkpoint after step ${k})`) };
  // Step s of the resumed run is step k + s of the whole run.
  expectParity(ctx, outputs, t.expected.slice(k), relabel, t.tol, k);
  expectNoMoreTrafficAfterLoad(ctx, t.firstStats, t.steps, resumed.stats, t.steps - k);
  return { bytes };
}

// The mean gradient is exact in these checks (see rankGrads), so only the
// order of float32 operations inside the update may differ from optim.AdamW.
const TOLERANCE = { rtol: 1e-5, atol: 1e-6 };

export const checks: Record<string, CheckFn> = {
  'one-step-two-ranks': async (ctx) => {
    const { spec, outputs } = await runSteps(ctx, 2, 1);
    expectParity(ctx, outputs, expectedParamsByStep(spec, 2), LAYOUT, TOLERANCE);
  },
  'three-ranks-uneven': async (ctx) => {
    // At step 2, params[1] and params[3] get no gradient on any rank: they count as a zero gradient.
    const { spec, outputs } = await runSteps(ctx, 3, 3, { noGrad: { 1: [1, 3] } });
    expectParity(ctx, outputs, expectedParamsByStep(spec, 3), LAYOUT, TOLERANCE);
    ctx.note(`P = ${paramCount(SHAPES)} parameter elements in shards of ${shardSizes(paramCount(SHAPES), 3)}: 3 steps match single-process AdamW on every rank (at step 2, params[1] and params[3] had no gradient)`);
  },
  'state-size': async (ctx) => {
    const worldSize = 4;
    const { spec, outputs, stats } = await runSteps(ctx, worldSize, 2, { checkpointAfter: 1 });
    const expected = expectedParamsByStep(spec, worldSize);
    expectParity(ctx, outputs, expected, LAYOUT, TOLERANCE);
    const p = paramCount(SHAPES);
    const { bytes } = await expectCheckpointRoundTrip(ctx, {
      worldSize,
      p,
      checkpointAfter: 1,
      steps: 2,
      first: outputs,
      firstStats: stats,
      expected,
      layout: LAYOUT,
      tol: TOLERANCE,
      resume: (checkpoints) => ({ worldSize, program: resume, args: [ctx.entry(ENTRY), spec, expected[0]!, checkpoints] }),
    });
    ctx.note(`checkpoint per rank: ${bytes.join(', ')} bytes (unsharded AdamW state would be ${2 * p * BYTES_PER_ELEMENT} bytes), and training resumed from it in parity`);
  },
};
