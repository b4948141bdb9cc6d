/**
 * Hidden checks of ex05-bucketed-overlap: parity on every world size of the
 * manifest with bucket sizes that give one, two and three buckets; a model
 * whose gradients complete in a different order on different ranks, which
 * only launching the buckets in bucket order survives; and the overlap on
 * four ranks. Every expectation is computed here at grade time from seeds
 * drawn from the grading seed.
 */
import { CheckFailure, programPath, type CheckFn } from '@dtlab/grader';
import { buildMlp, expectedBuckets, type BucketSpec } from '../../checks/ex05-bucketed-overlap/data.ts';
import { expectOverlap, expectParity, overlapSpec, runTraining, tracedCalls, type Trainee } from '../../checks/ex05-bucketed-overlap/checks.ts';
import { BRANCHING_BUCKET_BYTES, BRANCHING_SIZES, branchingBatch, buildBranching } from './branching-model.ts';

const programs = programPath(import.meta.url, './programs.ts');
const branching: Trainee = { build: buildBranching, batch: branchingBatch, train: { module: programs, export: 'trainBranching' }, timed: { module: programs, export: 'timeBranching' } };
/**
 * An MLP whose layers differ in size: in reverse order its parameters hold
 * 5, 55, 11, 176, 16 and 112 elements (P = 375), so buckets do not fall on
 * layer boundaries, and filling them from the other end gives other sizes.
 */
const SIZES = [7, 16, 11, 5];
/**
 * bucketBytes giving 1 bucket (all 375), 2 (247, then a partial 128) and 3
 * (60, 187, 128) under the README's rule; the check confirms the count.
 */
const CAPS = [375 * 4, 200 * 4, 60 * 4];

export const checks: Record<string, CheckFn> = {
  'world-sizes': async (ctx) => {
    for (const worldSize of ctx.manifest.worldSizes) {
      const bucketBytes = CAPS[worldSize % 3]!;
      const spec: BucketSpec = { seed: ctx.seedFor('mlp', worldSize), sizes: SIZES, batchPerRank: 3, steps: 4, lr: 0.4, bucketBytes };
      const buckets = expectedBuckets(buildMlp(spec, 0), bucketBytes);
      if (buckets.length !== [1, 2, 3][worldSize % 3]) throw new Error(`BUG: bucketBytes ${bucketBytes} gives ${buckets.length} buckets`);
      expectParity(ctx, await runTraining(ctx, worldSize, spec));
    }
    ctx.note(`world sizes ${ctx.manifest.worldSizes.join(', ')} with 1, 2 or 3 buckets: 4 SGD steps of every rank match one process on the combined batch, bit for bit the same on every rank`);
  },
  'launch-order': async (ctx) => {
    for (const worldSize of [2, 3, 4]) {
      const spec: BucketSpec = { seed: ctx.seedFor('branching', worldSize), sizes: BRANCHING_SIZES, batchPerRank: 4, steps: 3, lr: 0.4, bucketBytes: BRANCHING_BUCKET_BYTES };
      const buckets = expectedBuckets(buildBranching(spec, 0), spec.bucketBytes);
      let run;
      try {
        run = await runTraining(ctx, worldSize, spec, branching);
      } catch (e) {
        if (e instanceof CheckFailure && /collective mismatch/.test(e.message)) {
          ctx.note(`with ${worldSize} ranks, the even ranks' batches route the model's heads one way and the odd ranks' the other, so their gradients complete in different orders; the buckets (${buckets.map((b) => `${b.names.join(', ')}: ${b.elements}`).join('; ')}) must still be launched in the same order on every rank`);
        }
        throw e;
      }
      expectParity(ctx, run, branching);
      // Every rank took part in every call: the fabric matched them by position, so they were the same calls.
      for (const [s, calls] of tracedCalls(ctx, run).entries()) {
        const silent = calls.find((c) => c.silent.length > 0);
        const name = silent && (silent.index === null ? `the plain sends tagged ${silent.tag}` : `collective call #${silent.index}`);
        if (silent) ctx.fail(`step ${s + 1} with ${worldSize} ranks: ranks ${silent.silent.join(', ')} sent nothing in ${name}`, { rank: silent.silent[0]!, index: silent.index, expected: 'every rank sends in every all-reduce', actual: 'no message', label: `${name}` });
      }
    }
    ctx.note('2, 3 and 4 ranks whose gradients complete in different orders: every rank launched the same all-reduces in the same order, and training matched one process');
  },
  'overlap-four-ranks': async (ctx) => {
    const run = await runTraining(ctx, 4, overlapSpec(ctx.seedFor('overlap')), undefined, true);
    expectParity(ctx, run);
    expectOverlap(ctx, run, expectedBuckets(buildMlp(run.spec, 0), run.spec.bucketBytes));
  },
};
