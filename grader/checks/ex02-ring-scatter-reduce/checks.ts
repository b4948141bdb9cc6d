/**
 * Public checks of ex02-ring-scatter-reduce. Each runs the submission's
 * ringScatterReduce on N rank workers with seeded inputs and compares every
 * rank's chunk with chunk r of the exact sum computed here, or reads the
 * fabric's trace of the same launch.
 */
import type { CheckFn } from '@dtlab/grader';
import { ringCalls, sharedSeed } from './ring-run.ts';
import { expectChunksOfSum, expectNextRankOnly } from './ring-rules.ts';

export const checks: Record<string, CheckFn> = {
  'two-ranks': async (ctx) => {
    // 8 splits evenly; 5 gives rank 0 one element more than rank 1.
    expectChunksOfSum(ctx, await ringCalls(ctx, 2, [8, 5], sharedSeed(ctx, 1, 2)));
  },
  'three-and-four-ranks': async (ctx) => {
    for (const worldSize of [3, 4]) expectChunksOfSum(ctx, await ringCalls(ctx, worldSize, [6 * worldSize], sharedSeed(ctx, 1, worldSize)));
  },
  'ring-neighbours': async (ctx) => {
    // The four-rank launch of 'three-and-four-ranks', read from the trace.
    expectNextRankOnly(ctx, await ringCalls(ctx, 4, [24], sharedSeed(ctx, 1, 4)));
    ctx.note('4 ranks: every message went from rank r to rank (r+1) mod 4');
  },
};
