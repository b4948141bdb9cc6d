/**
 * Public checks of ex03-zero-sharding. Each runs the submission's ZeroAdamW
 * on N rank workers, every rank with its own seeded gradients, and compares
 * every rank's parameters after each step with single-process AdamW on the
 * mean gradient, computed here.
 */
import { Tensor, bytesPerElement, chunkBounds, unflattenTensors } from '@dtlab/tensor';
import type { LaunchResult } from '@dtlab/runtime';
import { programPath, type CheckContext, type CheckFn, type RunSpec, type ValueShape } from '@dtlab/grader';
import { BYTES_PER_ELEMENT, CHECK_OPTIONS, STATE_SLACK_BYTES, checkpointBytes, expectedParamsByStep, paramCount, stateBytesRange, type GradSpec } from './data.ts';
import type { StepsResult } from './programs.ts';

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
export async function runSteps(ctx: CheckContext, worldSize: number, steps: number, extra: Partial<GradSpec> = {}): Promise<{ spec: GradSpec; outputs: StepsResult[] }> {
  const spec: GradSpec = { seed: ctx.seedFor('grads', worldSize), shapes: SHAPES, steps, opts: CHECK_OPTIONS, ...extra };
  const result = await ctx.run({ worldSize, program, args: [ctx.entry(ENTRY), spec], returns: STEPS_RESULT });
  return { spec, outputs: result.ranks.map((r) => r.value as StepsResult) };
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

/** The tensors inside a checkpoint, however it is laid out. */
function tensorsIn(value: unknown, seen = new Set<unknown>()): Tensor[] {
  if (value instanceof Tensor) return [value];
  if (value === null || typeof value !== 'object' || seen.has(value)) return [];
  seen.add(value);
  return Object.values(value as Record<string, unknown>).flatMap((v) => tensorsIn(v, seen));
}

/**
 * Checks each rank's checkpoint (what `stateDict()` returned, counted by
 * checkpointBytes): at most two moments of ⌈P/N⌉ float32 elements plus the
 * slack, and at least the two moments of the rank's own shard (less cannot
 * be all the state, and the resumed run then goes wrong anyway).
 */
export function expectCheckpointBytes(ctx: CheckContext, checkpoints: unknown[], p: number, afterStep: number): number[] {
  const worldSize = checkpoints.length;
  return checkpoints.map((checkpoint, rank) => {
    const bytes = checkpointBytes(checkpoint);
    const { min, max } = stateBytesRange(p, worldSize, rank);
    const label = `the checkpoint (stateDict()) after step ${afterStep} with ${worldSize} rank${worldSize === 1 ? '' : 's'} (P = ${p})`;
    if (bytes > max) {
      const wide = tensorsIn(checkpoint).filter((t) => t.dtype !== 'float32');
      const why = wide.length
        ? `its moments are ${wide[0]!.dtype} (${wide.map((t) => t.numel).join(' and ')} elements, ${bytesPerElement(wide[0]!.dtype)} bytes each): keep them in the parameters' dtype, float32`
        : "it holds more than this rank's shard of the optimizer state";
      ctx.fail(
        `rank ${rank}: ${label} holds ${bytes} bytes, more than 2 moments × ⌈P/N⌉ = ${Math.ceil(p / worldSize)} elements × ${BYTES_PER_ELEMENT} bytes + ${STATE_SLACK_BYTES} bytes of slack = ${max}: ${why}`,
        { rank, index: null, expected: `<= ${max}`, actual: bytes, label },
      );
    }
    if (bytes < min) {
      ctx.fail(
        `rank ${rank}: ${label} holds ${bytes} bytes, less than the two moments of its own shard (${min} bytes): either the shard bounds differ from chunkBounds(P, N) (rank ${rank}'s shard has ${min / (2 * BYTES_PER_ELEMENT)} elements), or the moments are kept somewhere the checkpoint leaves out`,
        { rank, index: null, expected: `>= ${min}`, actual: bytes, label },
      );
    }
    return bytes;
  });
}

/** A training run to checkpoint and resume (see expectCheckpointRoundTrip). */
export interface RoundTrip {
  worldSize: number;
  /** Parameter elements. */
  p: number;
  /** Steps before the checkpoint. */
  checkpointAfter: number;
  /** What every rank of the first run returned (its checkpoint included). */
  first: StepsResult[];
  /** The reference parameters (flat) after each step of the whole run. */
  expected: Tensor[];
  layout: ParamLayout;
  tol: { rtol: number; atol: number };
  /** The launch that resumes from `checkpoints` (one per rank), starting at `expected[checkpointAfter - 1]`. */
  resume: (checkpoints: unknown[]) => RunSpec;
}

/**
 * The sharded-checkpoint round trip: every rank's checkpoint of the first
 * run must be the size of one shard of the state, and a fresh optimizer per
 * rank, on workers that never ran the submission, that loads it must train
 * the remaining steps like single-process AdamW. State kept anywhere but in
 * the checkpoint (a WeakMap, a private field, beside decoys of the right
 * size) is lost on the way, and the resumed run goes wrong. Returns the
 * checkpoints' sizes and the resumed launch.
 */
export async function expectCheckpointRoundTrip(ctx: CheckContext, t: RoundTrip): Promise<{ bytes: number[]; resumed: LaunchResult }> {
  const k = t.checkpointAfter;
  const checkpoints = t.first.map((o, rank) => {
    if (o.checkpoint === undefined) ctx.fail(`rank ${rank}: stateDict() returned nothing after step ${k} with ${t.worldSize} rank${t.worldSize === 1 ? '' : 's'}: it must return this rank's optimizer state (see ZeroStateDict)`, { rank, index: null, expected: 'a checkpoint', actual: 'undefined', label: 'stateDict()' });
    return o.checkpoint;
  });
  const bytes = expectCheckpointBytes(ctx, checkpoints, t.p, k);
  const resumed = await ctx.run({ ...t.resume(checkpoints), returns: STEPS_RESULT, freshWorkers: true });
  const outputs = resumed.ranks.map((r) => r.value as StepsResult);
  const relabel = { ...t.layout, names: t.layout.names.map((n) => `${n} (resumed from the checkpoint after step ${k})`) };
  // Step s of the resumed run is step k + s of the whole run.
  expectParity(ctx, outputs, t.expected.slice(k), relabel, t.tol, k);
  return { bytes, resumed };
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
    const { spec, outputs } = await runSteps(ctx, worldSize, 2, { checkpointAfter: 1 });
    const expected = expectedParamsByStep(spec, worldSize);
    expectParity(ctx, outputs, expected, LAYOUT, TOLERANCE);
    const p = paramCount(SHAPES);
    const { bytes } = await expectCheckpointRoundTrip(ctx, {
      worldSize,
      p,
      checkpointAfter: 1,
      first: outputs,
      expected,
      layout: LAYOUT,
      tol: TOLERANCE,
      resume: (checkpoints) => ({ worldSize, program: resume, args: [ctx.entry(ENTRY), spec, expected[0]!, checkpoints] }),
    });
    ctx.note(`checkpoint per rank: ${bytes.join(', ')} bytes (unsharded AdamW state would be ${2 * p * BYTES_PER_ELEMENT} bytes), and training resumed from it in parity`);
  },
};
