/**
 * Public checks of ex13-profile-before-scaling. Each runs the submission's sumOverRanks on N
 * rank workers with seeded inputs and compares every rank's result with the
 * exact sum computed here, at grade time.
 */
import type { LaunchResult } from '@dtlab/runtime';
import type { Tensor } from '@dtlab/tensor';
import { programPath, type CheckContext, type CheckFn } from '@dtlab/grader';
import { expectedSum } from './data.ts';

const ENTRY = 'src/profile-before-scaling.ts';
const program = { module: programPath(import.meta.url, './programs.ts'), export: 'sumOnRanks' };

/** Runs the submission on `worldSize` ranks, once per length in `lengths`, and returns the launch (values not checked). */
export function runSums(ctx: CheckContext, worldSize: number, lengths: number[], seed: number): Promise<LaunchResult> {
  return ctx.run({ worldSize, program, args: [ctx.entry(ENTRY), seed, lengths] });
}

/** Runs the submission and fails at the first rank whose result is not the exact sum. */
export async function checkSums(ctx: CheckContext, worldSize: number, lengths: number[], seed: number): Promise<void> {
  const result = await runSums(ctx, worldSize, lengths, seed);
  lengths.forEach((n, k) => {
    const expected = expectedSum(seed, worldSize, n);
    for (const { rank, value } of result.ranks) {
      const got = Array.isArray(value) ? (value[k] as Tensor | undefined) : undefined;
      if (!got) ctx.fail(`rank ${rank} resolved to no tensor for its input of ${n} elements`, { rank, index: null, expected: `a tensor of ${n} elements`, actual: String(got), label: 'result' });
      ctx.expectClose(got, expected, { rank, label: `sum of ${n} element${n === 1 ? '' : 's'} over ${worldSize} rank${worldSize === 1 ? '' : 's'}`, rtol: 1e-6, atol: 1e-6 });
    }
  });
}

export const checks: Record<string, CheckFn> = {
  'two-ranks': async (ctx) => {
    await checkSums(ctx, 2, [8], ctx.seedFor('data'));
  },
  'three-ranks': async (ctx) => {
    await checkSums(ctx, 3, [9, 4], ctx.seedFor('data'));
  },
};
