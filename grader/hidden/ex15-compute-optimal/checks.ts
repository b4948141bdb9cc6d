/**
 * Hidden checks of ex15-compute-optimal: the public comparisons (and their
 * tolerances) on surfaces and budgets drawn from the grading seed (data.ts:
 * E, A, B, α, β in ranges around Chinchilla's, each surface one with 5 to
 * 500 tokens per parameter at the optimum and exponents the runs pin down;
 * budgets from 10^20 to 10^23 FLOPs).
 */
import type { CheckContext, CheckFn } from '@dtlab/grader';
import { Generator } from '@dtlab/tensor';
import { answer, expectFits, expectOptima, expectPlans } from '../../checks/ex15-compute-optimal/checks.ts';
import { drawBudget, drawLaw, drawRuns, drawSeparatedPair, type ScalingLaw } from '../../checks/ex15-compute-optimal/data.ts';
import type { Answers, FitCase, OptimumCase } from '../../checks/ex15-compute-optimal/programs.ts';

/**
 * Four drawn surfaces, 64 runs of each and a budget to plan; shared by the
 * fit and plan checks. Two pairs (drawSeparatedPair): the first two surfaces
 * are apart in α and β, the last two in E, each by more than the two fits'
 * tolerances, so that a fit holding any of the three at a value of its
 * choosing fails on one surface of a pair, whatever the value.
 */
function drawnFits(ctx: CheckContext): Promise<{ laws: ScalingLaw[]; cases: FitCase[]; got: Answers }> {
  return ctx.shared('ex15 drawn fits', async () => {
    const gen = new Generator(ctx.seedFor('budgets'));
    const runSeeds = [0, 1, 2, 3].map((i) => ctx.seedFor('runs', i));
    const laws: ScalingLaw[] = [
      ...drawSeparatedPair(ctx.seedFor('law', 0), [runSeeds[0]!, runSeeds[1]!], ['alpha', 'beta']),
      ...drawSeparatedPair(ctx.seedFor('law', 1), [runSeeds[2]!, runSeeds[3]!], ['E']),
    ];
    const cases: FitCase[] = laws.map((law, i) => ({ runs: drawRuns(runSeeds[i]!, law), flops: drawBudget(gen) }));
    return { laws, cases, got: await answer(ctx, cases, []) };
  });
}

export const checks: Record<string, CheckFn> = {
  'drawn-optima': async (ctx) => {
    const gen = new Generator(ctx.seedFor('optima'));
    const cases: OptimumCase[] = Array.from({ length: 6 }, (_, i) => ({ law: drawLaw(ctx.seedFor('optimum-law', i), ctx.seedFor('optimum-runs', i)), flops: drawBudget(gen) }));
    const got = await answer(ctx, [], cases);
    expectOptima(ctx, cases, got.optima);
  },
  'drawn-fits': async (ctx) => {
    const { laws, cases, got } = await drawnFits(ctx);
    expectFits(ctx, laws, cases, got.fits);
  },
  'drawn-plans': async (ctx) => {
    const { laws, cases, got } = await drawnFits(ctx);
    expectPlans(ctx, laws, cases, got.plans);
  },
};
