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
import { drawBudget, drawLaw, drawRuns, type ScalingLaw } from '../../checks/ex15-compute-optimal/data.ts';
import type { Answers, FitCase, OptimumCase } from '../../checks/ex15-compute-optimal/programs.ts';

/** Four drawn surfaces, 64 runs of each and a budget to plan; shared by the fit and plan checks. */
function drawnFits(ctx: CheckContext): Promise<{ laws: ScalingLaw[]; cases: FitCase[]; got: Answers }> {
  return ctx.shared('ex15 drawn fits', async () => {
    const gen = new Generator(ctx.seedFor('budgets'));
    const laws: ScalingLaw[] = [];
    const cases: FitCase[] = [];
    for (let i = 0; i < 4; i++) {
      const runSeed = ctx.seedFor('runs', i);
      const law = drawLaw(ctx.seedFor('law', i), runSeed);
      laws.push(law);
      cases.push({ runs: drawRuns(runSeed, law), flops: drawBudget(gen) });
    }
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
