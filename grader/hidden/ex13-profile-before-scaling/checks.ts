/**
 * Hidden checks of ex13-profile-before-scaling. They hold no answers: every input comes from
 * the grading seed (recorded in the rubric), and checkSums computes the
 * expected sums here, at grade time, from the same seeded inputs the ranks
 * build. The trace check reads the fabric's record of every message, which
 * student code cannot forge.
 */
import type { CheckFn } from '@dtlab/grader';
import { checkSums, runSums } from '../../checks/ex13-profile-before-scaling/checks.ts';

export const checks: Record<string, CheckFn> = {
  'world-sizes': async (ctx) => {
    for (const worldSize of ctx.manifest.worldSizes) await checkSums(ctx, worldSize, [0, 1, 7, 100], ctx.seedFor('sizes', worldSize));
    ctx.note(`world sizes ${ctx.manifest.worldSizes.join(', ')}, lengths 0, 1, 7 and 100: every rank holds the exact sum`);
  },
  'ring-neighbours': async (ctx) => {
    for (const worldSize of ctx.manifest.worldSizes) {
      const { trace } = await runSums(ctx, worldSize, [5], ctx.seedFor('trace', worldSize));
      const wrong = trace.find((e) => e.dst !== (e.src + 1) % worldSize);
      if (wrong) {
        ctx.fail(`with ${worldSize} ranks, rank ${wrong.src} sent a message to rank ${wrong.dst}: a rank may send only to the next rank, (r + 1) mod ${worldSize}`, {
          rank: wrong.src,
          index: null,
          expected: `to rank ${(wrong.src + 1) % worldSize}`,
          actual: `to rank ${wrong.dst}`,
          label: 'destination of a message',
        });
      }
    }
    ctx.note(`world sizes ${ctx.manifest.worldSizes.join(', ')}: every message went from rank r to rank (r + 1) mod N`);
  },
};
