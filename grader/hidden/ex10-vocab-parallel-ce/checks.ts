/**
 * Hidden checks of ex10-vocab-parallel-ce. They hold no answers: logits and
 * targets come from the grading seed, and the full cross-entropy is
 * computed here, at grade time, in float64.
 *
 * - world-sizes: 1 to 4 ranks, vocabularies that no N divides, one small
 *   enough (V = 7) that shards hold one or two classes, targets on the
 *   first and the last column of every shard;
 * - extreme-logits: rows whose logits all sit near +200 (exp overflows
 *   float32 without a shift), near -500 (exp underflows to 0 without one),
 *   and rows where the first shard's logits sit near -1000 and the others'
 *   near +60 (a shift by any one shard's maximum overflows another shard's
 *   exp), and rows near +800 and near -1000, where exp overflows or
 *   underflows in float64 too, so that computing in float64 is no shift, on
 *   2, 3 and 4 ranks;
 * - traffic-every-size: all of these runs send a few values per token,
 *   whatever V is (scores only when world-sizes passed).
 */
import { deriveSeed } from '@dtlab/tensor';
import type { CheckContext, CheckFn } from '@dtlab/grader';
import { expectFewValuesPerToken, expectGradient, expectLoss, runLoss } from '../../checks/ex10-vocab-parallel-ce/checks.ts';
import type { LogitsSpec } from '../../checks/ex10-vocab-parallel-ce/data.ts';

/** The world-sizes runs: V = 2003 (a prime) and V = 7, for every world size of the manifest. */
function sizeSpecs(ctx: CheckContext): LogitsSpec[] {
  return ctx.manifest.worldSizes.flatMap((worldSize) => [
    { seed: deriveSeed(ctx.seed, 10, worldSize, 1), batch: 9, vocab: 2003, worldSize },
    { seed: deriveSeed(ctx.seed, 10, worldSize, 2), batch: 6, vocab: 7, worldSize },
  ]);
}

/** The extreme runs: every kind of extreme row, then plain ones. */
function extremeSpecs(ctx: CheckContext): LogitsSpec[] {
  return ctx.manifest.worldSizes.filter((n) => n > 1).map((worldSize) => ({ seed: deriveSeed(ctx.seed, 11, worldSize), batch: 7, vocab: 503, worldSize, extreme: ['high', 'low', 'split', 'very-high', 'very-low'] as LogitsSpec['extreme'] }));
}

export const checks: Record<string, CheckFn> = {
  'world-sizes': async (ctx) => {
    for (const spec of sizeSpecs(ctx)) {
      const run = await runLoss(ctx, spec);
      expectLoss(ctx, run);
      expectGradient(ctx, run);
    }
    ctx.note(`world sizes ${ctx.manifest.worldSizes.join(', ')}, V = 2003 and V = 7, targets on the edges of every shard: the loss and every rank's gradient match the full cross-entropy`);
  },
  'extreme-logits': async (ctx) => {
    for (const spec of extremeSpecs(ctx)) {
      const run = await runLoss(ctx, spec);
      expectLoss(ctx, run);
      expectGradient(ctx, run);
    }
    ctx.note('2 to 4 ranks with rows of logits near +200, near -500, split -1000 / +60 between shards, near +800 and near -1000 (beyond float64 exp without a shift): the loss and the gradient stay finite and exact');
  },
  'traffic-every-size': async (ctx) => {
    for (const spec of sizeSpecs(ctx)) {
      if (spec.worldSize > 1 && spec.vocab > 100) ctx.note(expectFewValuesPerToken(ctx, await runLoss(ctx, spec)));
    }
  },
};
