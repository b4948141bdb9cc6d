/**
 * Public checks of ex15-compute-optimal. The runs are drawn at grade time
 * from a known surface with 0.5% noise (data.ts: a surface drawn from the
 * grading seed, away from the constants the README prints, so that they
 * cannot stand in for a fit); the submission fits and
 * plans in one rank worker, and the checks compare with the surface:
 *
 * - an optimum of a given law within 0.5% of the closed form in N and in D
 *   (a numerical search on 6ND = C gets there as well), with 6·N·D ≤ C;
 * - fitted E, α and β within 5 standard errors of the surface's, the errors
 *   those of the least-squares fit on log L for the very runs drawn
 *   (σ²·(JᵀJ)⁻¹, data.ts); a right fit misses by more with probability
 *   below 1e-6;
 * - a plan (the submission's optimum of its own fit) within 5 standard
 *   errors of ln N_opt (the delta method through the closed form) plus 1%,
 *   in N and in D, with 6·N·D ≤ C.
 */
import { programPath, type CheckContext, type CheckFn } from '@dtlab/grader';
import { CHECKED, CHINCHILLA, PUBLIC_PLAN_FLOPS, Z_TOLERANCE, checkedErrors, drawPublicLaw, drawRuns, fitCovariance, logParamsError, optimum, type ScalingLaw } from './data.ts';
import { answersShape, type AllocationOut, type Answers, type FitCase, type OptimumCase } from './programs.ts';

const ENTRY = 'src/compute-optimal.ts';
const program = { module: programPath(import.meta.url, './programs.ts'), export: 'answerCases' };

/** Relative tolerance of an optimum of a given law. */
export const OPTIMUM_RTOL = 0.005;
/** Relative slack on top of the noise-derived tolerance of a plan. */
export const PLAN_SLACK = 0.01;
/** How far past the budget 6·N·D may go (rounding only). */
export const BUDGET_RTOL = 1e-9;

/** Asks the submission in one rank worker. */
export async function answer(ctx: CheckContext, fits: FitCase[], optima: OptimumCase[]): Promise<Answers> {
  const result = await ctx.run({ worldSize: 1, program, args: [ctx.entry(ENTRY), fits, optima], returns: answersShape(fits.length, optima.length) });
  return result.ranks[0]!.value as Answers;
}

const sci = (x: number) => (Number.isFinite(x) ? x.toExponential(3) : String(x));
const ratio = (a: AllocationOut) => (a.tokens / a.params).toPrecision(3);
export const describeLaw = (l: ScalingLaw) => `E ${l.E}, A ${l.A}, B ${l.B}, α ${l.alpha}, β ${l.beta}`;

/** Fails unless N and D are positive and finite and 6·N·D is at most the budget. */
function expectWithinBudget(ctx: CheckContext, got: AllocationOut, flops: number, what: string, index: number): void {
  if (!(got.params > 0 && got.tokens > 0 && Number.isFinite(got.params) && Number.isFinite(got.tokens))) {
    ctx.fail(`${what}: N = ${got.params}, D = ${got.tokens}: both must be positive, finite numbers`, { rank: null, index, expected: 'N > 0, D > 0', actual: `N ${got.params}, D ${got.tokens}`, label: 'the allocation' });
  }
  const spent = 6 * got.params * got.tokens;
  if (spent > flops * (1 + BUDGET_RTOL)) {
    ctx.fail(`${what}: 6·N·D = ${sci(spent)} FLOPs, over the budget of ${sci(flops)}: the allocation must fit the budget (C = 6·N·D)`, { rank: null, index, expected: `at most ${sci(flops)}`, actual: sci(spent), label: '6·N·D' });
  }
}

/** Each optimum of a given law against the closed form, within OPTIMUM_RTOL, and within budget. */
export function expectOptima(ctx: CheckContext, cases: OptimumCase[], got: AllocationOut[]): void {
  cases.forEach((c, i) => {
    const want = optimum(c.law, c.flops);
    const what = `case ${i}: computeOptimal(${describeLaw(c.law)}; C = ${sci(c.flops)} FLOPs)`;
    expectWithinBudget(ctx, got[i]!, c.flops, what, i);
    for (const k of ['params', 'tokens'] as const) {
      if (!(Math.abs(got[i]![k] / want[k] - 1) <= OPTIMUM_RTOL)) {
        ctx.fail(
          `${what}: ${k === 'params' ? 'N' : 'D'} = ${sci(got[i]![k])} (${ratio(got[i]!)} tokens per parameter); the loss is least on 6·N·D = C at N = ${sci(want.params)}, D = ${sci(want.tokens)} (${ratio(want)} tokens per parameter), within ${OPTIMUM_RTOL * 100}%. ` +
            `Minimise this law's loss along 6·N·D = C: the best ratio of tokens to parameters depends on its constants and on C`,
          { rank: null, index: i, expected: sci(want[k]), actual: sci(got[i]![k]), label: k === 'params' ? 'N (parameters)' : 'D (tokens)' },
        );
      }
    }
  });
  ctx.note(`${cases.length} budgets: N and D within ${OPTIMUM_RTOL * 100}% of the optimum, 6·N·D within the budget`);
}

/** Each fit's E, α and β within Z_TOLERANCE standard errors of the surface's. */
export function expectFits(ctx: CheckContext, laws: ScalingLaw[], cases: FitCase[], got: Answers['fits']): void {
  const names = { E: 'E', alpha: 'α', beta: 'β' } as const;
  laws.forEach((law, i) => {
    const cov = fitCovariance(law, cases[i]!.runs);
    // The floor too: the optimum does not depend on it, so only this says that a fit assumed it (Chinchilla's 1.69, say).
    const se = checkedErrors(cov);
    for (const k of CHECKED) {
      const tol = Z_TOLERANCE * se[k];
      if (!(Math.abs(got[i]![k] - law[k]) <= tol)) {
        ctx.fail(
          `fit ${i}: fitted ${names[k]} = ${got[i]![k]} from ${cases[i]!.runs.length} runs (fitted law: ${describeLaw(got[i]!)}), but the surface they were drawn from has ${law[k]}: ` +
            `with 0.5% noise a least-squares fit of log L lands within ${tol.toPrecision(3)} (${Z_TOLERANCE} standard errors). Fit all five constants, E included, to log L`,
          { rank: null, index: i, expected: law[k], actual: got[i]![k], label: `fitted ${k}` },
        );
      }
    }
  });
  ctx.note(`${laws.length} fit${laws.length === 1 ? '' : 's'}: E, α and β within ${Z_TOLERANCE} standard errors`);
}

/** Each plan (optimum of the submission's own fit) within the noise-derived tolerance of the surface's optimum, and within budget. */
export function expectPlans(ctx: CheckContext, laws: ScalingLaw[], cases: FitCase[], got: AllocationOut[]): void {
  laws.forEach((law, i) => {
    const { flops, runs } = cases[i]!;
    const want = optimum(law, flops);
    const what = `plan ${i}: computeOptimal(fitScalingLaw(runs), C = ${sci(flops)} FLOPs)`;
    expectWithinBudget(ctx, got[i]!, flops, what, i);
    const tol = Z_TOLERANCE * logParamsError(law, fitCovariance(law, runs), flops) + PLAN_SLACK;
    for (const k of ['params', 'tokens'] as const) {
      const off = Math.abs(Math.log(got[i]![k] / want[k]));
      if (!(off <= tol)) {
        ctx.fail(
          `${what}: ${k === 'params' ? 'N' : 'D'} = ${sci(got[i]![k])} (${ratio(got[i]!)} tokens per parameter), but the surface's optimum is N = ${sci(want.params)}, D = ${sci(want.tokens)} (${ratio(want)} tokens per parameter); ` +
            `a right fit of these runs plans within a factor ${Math.exp(tol).toPrecision(3)} of it. Check the fit first, then the optimum`,
          { rank: null, index: i, expected: sci(want[k]), actual: sci(got[i]![k]), label: k === 'params' ? 'planned N' : 'planned D' },
        );
      }
    }
  });
  ctx.note(`${laws.length} plan${laws.length === 1 ? '' : 's'} within the noise of the fit of the surface's optimum`);
}

/** Budgets of the public optimum check: 10^21, 10^22 and 10^23 FLOPs on the Chinchilla surface. */
const PUBLIC_OPTIMA: OptimumCase[] = [1e21, 1e22, 1e23].map((flops) => ({ law: CHINCHILLA, flops }));

/**
 * The public fit: 64 runs of a surface drawn from the grading seed away from
 * the constants the README prints (drawPublicLaw: neither Chinchilla's
 * exponents nor its tokens per parameter pass there), planned for 10^22
 * FLOPs; shared by the fit and plan checks. The public tests keep
 * Chinchilla's own surface.
 */
function publicFit(ctx: CheckContext): Promise<{ law: ScalingLaw; cases: FitCase[]; got: Answers }> {
  return ctx.shared('ex15 public fit', async () => {
    const runSeed = ctx.seedFor('public-runs');
    const law = drawPublicLaw(ctx.seedFor('public-law'), runSeed, PLAN_SLACK);
    const cases = [{ runs: drawRuns(runSeed, law), flops: PUBLIC_PLAN_FLOPS }];
    return { law, cases, got: await answer(ctx, cases, []) };
  });
}

export const checks: Record<string, CheckFn> = {
  'chinchilla-optimum': async (ctx) => {
    const got = await answer(ctx, [], PUBLIC_OPTIMA);
    expectOptima(ctx, PUBLIC_OPTIMA, got.optima);
  },
  'chinchilla-fit': async (ctx) => {
    const { law, cases, got } = await publicFit(ctx);
    expectFits(ctx, [law], cases, got.fits);
  },
  'chinchilla-plan': async (ctx) => {
    const { law, cases, got } = await publicFit(ctx);
    expectPlans(ctx, [law], cases, got.plans);
  },
};
