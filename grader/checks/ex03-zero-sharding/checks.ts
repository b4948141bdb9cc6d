/**
 * Public checks of ex03-zero-sharding. Each runs the submission's ZeroAdamW
 * on N rank workers, every rank with its own seeded gradients, and compares
 * every rank's parameters after each step with single-process AdamW on the
 * mean gradient, computed here.
 */
import { chunkBounds, unflattenTensors, type Tensor } from '@dtlab/tensor';
import type { CheckContext, CheckFn } from '@dtlab/grader';
import { programPath } from '@dtlab/grader/program';
import { BYTES_PER_ELEMENT, CHECK_OPTIONS, STATE_SLACK_BYTES, expectedParamsByStep, paramCount, stateBytesRange, type GradSpec } from './data.ts';
import type { StepsResult } from './programs.ts';

const ENTRY = 'src/zero-adamw.ts';
const program = { module: programPath(import.meta.url, './programs.ts'), export: 'zeroSteps' };

/** 40·30 + 30 + 30·11 + 11 = 1571 elements: odd and 2 mod 3 and 3 mod 4, so the shards are uneven. */
const SHAPES = [[40, 30], [30], [30, 11], [11]];
const LAYOUT: ParamLayout = { names: SHAPES.map((_, i) => `params[${i}]`), shapes: SHAPES };

/** Runs `steps` steps on `worldSize` ranks; returns the inputs and what every rank returned. */
export async function runSteps(ctx: CheckContext, worldSize: number, steps: number): Promise<{ spec: GradSpec; outputs: StepsResult[] }> {
  const spec: GradSpec = { seed: ctx.seedFor('grads', worldSize), shapes: SHAPES, steps, opts: CHECK_OPTIONS };
  const result = await ctx.run({ worldSize, program, args: [ctx.entry(ENTRY), spec] });
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
export function expectParity(ctx: CheckContext, outputs: StepsResult[], expected: Tensor[], layout: ParamLayout, tol: { rtol: number; atol: number }): void {
  const worldSize = outputs.length;
  expected.forEach((want, s) => {
    const wantParams = unflattenTensors(want, layout.shapes);
    outputs.forEach((out, rank) =>
      unflattenTensors(out.params[s]!, layout.shapes).forEach((got, i) =>
        ctx.expectClose(got, wantParams[i]!, { rank, label: `${layout.names[i]} after step ${s + 1} with ${worldSize} ranks`, ...tol }),
      ),
    );
  });
}

/** Shard sizes under chunkBounds, for messages. */
export function shardSizes(p: number, worldSize: number): string {
  return chunkBounds(p, worldSize).map((b) => b.end - b.start).join(', ');
}

/**
 * Checks `retainedBytes(optimizer.state)` of every rank after every step:
 * at most two moments of ⌈P/N⌉ float32 elements plus the slack, and at
 * least the two moments of the rank's own shard (less means the state is
 * kept where the check cannot see it).
 */
export function expectStateBytes(ctx: CheckContext, outputs: StepsResult[], p: number): void {
  const worldSize = outputs.length;
  outputs.forEach(({ stateBytes }, rank) => {
    const { min, max } = stateBytesRange(p, worldSize, rank);
    stateBytes.forEach((bytes, s) => {
      const label = `retainedBytes(optimizer.state) after step ${s + 1} with ${worldSize} ranks (P = ${p})`;
      if (bytes > max) {
        ctx.fail(
          `rank ${rank}: ${label} is ${bytes} bytes, more than 2 moments × ⌈P/N⌉ = ${Math.ceil(p / worldSize)} elements × ${BYTES_PER_ELEMENT} bytes + ${STATE_SLACK_BYTES} bytes of slack = ${max}: the state holds more than this rank's shard`,
          { rank, index: s, expected: `<= ${max}`, actual: bytes, label },
        );
      }
      if (bytes < min) {
        ctx.fail(`rank ${rank}: ${label} is ${bytes} bytes, less than the two moments of its own shard (${min} bytes): keep all optimizer state in \`state\`, where it can be measured`, { rank, index: s, expected: `>= ${min}`, actual: bytes, label });
      }
    });
  });
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
    const { spec, outputs } = await runSteps(ctx, 3, 3);
    expectParity(ctx, outputs, expectedParamsByStep(spec, 3), LAYOUT, TOLERANCE);
    ctx.note(`P = ${paramCount(SHAPES)} parameter elements in shards of ${shardSizes(paramCount(SHAPES), 3)}: 3 steps match single-process AdamW on every rank`);
  },
  'state-size': async (ctx) => {
    const worldSize = 4;
    const { outputs } = await runSteps(ctx, worldSize, 2);
    const p = paramCount(SHAPES);
    expectStateBytes(ctx, outputs, p);
    ctx.note(`optimizer state per rank: ${outputs.map((o) => o.stateBytes.at(-1)).join(', ')} bytes (unsharded AdamW state would be ${2 * p * BYTES_PER_ELEMENT} bytes)`);
  },
};
