/**
 * The ex15 checks' loss surfaces, training runs and reference maths, made
 * from a seed at grade time. A run's loss is the surface's loss times
 * exp(σ·ε), ε standard normal, σ = NOISE_SIGMA: the seed-to-seed spread of a
 * final loss is a fraction of the loss. The tolerances of the checks are
 * derived from that noise: the least-squares fit on log L has covariance
 * σ²·(JᵀJ)⁻¹ (J the Jacobian of log L with respect to E, A, B, α, β at the
 * true surface, for the runs drawn), and a fitted value passes within
 * Z_TOLERANCE standard errors of the truth, computed for the very runs the
 * submission is given.
 */
import { Generator } from '@dtlab/tensor';

/** A loss surface L(N, D) = E + A / N^alpha + B / D^beta. */
export interface ScalingLaw {
  E: number;
  A: number;
  B: number;
  alpha: number;
  beta: number;
}

/** One small training run. */
export interface Run {
  params: number;
  tokens: number;
  loss: number;
}

/** Hoffmann et al. (2022), approach 3: the public surface. */
export const CHINCHILLA: ScalingLaw = { E: 1.69, A: 406.4, B: 410.7, alpha: 0.34, beta: 0.28 };

/** The relative noise of a run's loss: 0.5%. */
export const NOISE_SIGMA = 0.005;

/** How many standard errors a fitted value may be from the truth: a right fit misses by more with probability below 1e-6. */
export const Z_TOLERANCE = 5;

/** The runs each fit gets: 64, N from 10^7 to 3·10^9 parameters, D from 10^9 to 3·10^11 tokens (log-uniform). */
export const RUN_COUNT = 64;
export const RUN_PARAMS: [number, number] = [1e7, 3e9];
export const RUN_TOKENS: [number, number] = [1e9, 3e11];

/** The law's loss at (N, D). */
export function lawLoss(law: ScalingLaw, params: number, tokens: number): number {
  return law.E + law.A / params ** law.alpha + law.B / tokens ** law.beta;
}

const logUniform = (gen: Generator, [lo, hi]: [number, number]) => lo * (hi / lo) ** gen.uniform();

/** The training runs of one fit, drawn from `law` with the seed's noise. */
export function drawRuns(seed: number, law: ScalingLaw, count = RUN_COUNT): Run[] {
  const gen = new Generator(seed);
  return Array.from({ length: count }, () => {
    const params = Math.round(logUniform(gen, RUN_PARAMS));
    const tokens = Math.round(logUniform(gen, RUN_TOKENS));
    return { params, tokens, loss: lawLoss(law, params, tokens) * Math.exp(NOISE_SIGMA * gen.normal()) };
  });
}

/**
 * A hidden surface: E in [1.5, 2.2], A and B in [200, 1000], α in [0.25, 0.45], β in [0.2, 0.4],
 * drawn again until it is one a lab could meet and the runs pin down: between 5 and 500 tokens per
 * parameter at the optimum of every budget from 10^20 to 10^23 FLOPs, and standard errors of the
 * fitted α and β (for `runs` of the surface, see fitCovariance) below 0.02.
 */
export function drawLaw(seed: number, runSeed: number, accept: (law: ScalingLaw, runs: Run[], cov: number[][]) => boolean = () => true): ScalingLaw {
  const gen = new Generator(seed);
  const between = (lo: number, hi: number) => Number((lo + (hi - lo) * gen.uniform()).toPrecision(4));
  // About one draw in five is kept; the bound only stops a loop that cannot end.
  for (let tries = 0; tries < 10_000; tries++) {
    const law = { E: between(1.5, 2.2), A: between(200, 1000), B: between(200, 1000), alpha: between(0.25, 0.45), beta: between(0.2, 0.4) };
    const ratios = [1e20, 1e23].map((c) => optimum(law, c)).map((o) => o.tokens / o.params);
    if (ratios.some((r) => r < 5 || r > 500)) continue;
    const runs = drawRuns(runSeed, law);
    const cov = fitCovariance(law, runs);
    const se = exponentErrors(cov);
    if (se.alpha < 0.02 && se.beta < 0.02 && accept(law, runs, cov)) return law;
  }
  throw new Error(`drawLaw(${seed}): no surface in 10000 draws met the conditions; the ranges in drawLaw are inconsistent`);
}

/** The constants a fit is checked on, with the standard error of each in a fit's covariance. */
export const CHECKED = ['E', 'alpha', 'beta'] as const;
export type Checked = (typeof CHECKED)[number];

/** The standard errors of the fitted E, α and β. */
export function checkedErrors(cov: number[][]): Record<Checked, number> {
  return { E: Math.sqrt(cov[0]![0]!), ...exponentErrors(cov) };
}

/** How much farther apart than their two tolerances the two surfaces of a pair are (drawSeparatedPair). */
export const SEPARATION_MARGIN = 1.2;

/**
 * Two hidden surfaces (drawLaw) whose values of each of `keys` are farther
 * apart than the two fits' tolerances together (Z_TOLERANCE standard errors
 * of each, for its runs), times SEPARATION_MARGIN. A fit that holds one of
 * those constants at any one value instead of fitting it is then outside the
 * tolerance of at least one of the two: no value is within both. The first
 * surface is drawn again (from the next seed) if no second one fits it.
 */
export function drawSeparatedPair(seed: number, runSeeds: [number, number], keys: readonly Checked[]): [ScalingLaw, ScalingLaw] {
  const gen = new Generator(seed);
  for (let attempt = 0; attempt < 20; attempt++) {
    const first = drawLaw(gen.nextUint32(), runSeeds[0]);
    const tolFirst = checkedErrors(fitCovariance(first, drawRuns(runSeeds[0], first)));
    try {
      const second = drawLaw(gen.nextUint32(), runSeeds[1], (law, _runs, cov) => {
        const tol = checkedErrors(cov);
        return keys.every((k) => Math.abs(law[k] - first[k]) > SEPARATION_MARGIN * Z_TOLERANCE * (tol[k] + tolFirst[k]));
      });
      return [first, second];
    } catch {
      // no second surface far enough from this first one: another first one
    }
  }
  throw new Error(`drawSeparatedPair(${seed}): no pair of surfaces apart in ${keys.join(', ')} in 20 tries`);
}

/** The budget the public plan is made for: 10^22 FLOPs. */
export const PUBLIC_PLAN_FLOPS = 1e22;

/** How far past the plan's tolerance the printed constants' plans must land on the public surface (see drawPublicLaw). */
export const AWAY_MARGIN = 1.5;

/**
 * The public checks' surface: a hidden surface (drawLaw) that the constants
 * the README prints cannot stand in for, so that the public fit and plan
 * pass only for a fit of the runs:
 *
 * - Chinchilla's exponents miss it: |α - 0.34| or |β - 0.28| is more than
 *   AWAY_MARGIN × Z_TOLERANCE standard errors of the fit (a fit that returns
 *   the printed exponents fails the fit check);
 * - with those exponents, the best E, A and B for the runs' noise-free losses
 *   (weighted linear least squares, bestWithExponents) plan N for
 *   PUBLIC_PLAN_FLOPS off the surface's optimum by more than AWAY_MARGIN
 *   times the plan's tolerance (Z_TOLERANCE·SE(ln N_opt) + slack): the
 *   runs' noise moves such a three-constant fit's plan by about one standard
 *   error of ln N_opt, under a fifth of the tolerance, so the margin of half
 *   a tolerance covers it more than twice over;
 * - Chinchilla's tokens per parameter at PUBLIC_PLAN_FLOPS (62.6), applied to
 *   the budget, plans N off by more than AWAY_MARGIN times the tolerance.
 *
 * About one hidden surface in 40 qualifies (the exponents then lie well below
 * Chinchilla's); drawLaw's bound of 10000 draws is far from reached.
 */
export function drawPublicLaw(seed: number, runSeed: number, planSlack: number): ScalingLaw {
  const chinchilla = optimum(CHINCHILLA, PUBLIC_PLAN_FLOPS);
  const printedRatio = chinchilla.tokens / chinchilla.params;
  return drawLaw(seed, runSeed, (law, runs, cov) => {
    const se = exponentErrors(cov);
    const limit = AWAY_MARGIN * Z_TOLERANCE;
    if (!(Math.abs(law.alpha - CHINCHILLA.alpha) > limit * se.alpha || Math.abs(law.beta - CHINCHILLA.beta) > limit * se.beta)) return false;
    const want = Math.log(optimum(law, PUBLIC_PLAN_FLOPS).params);
    const tol = Z_TOLERANCE * logParamsError(law, cov, PUBLIC_PLAN_FLOPS) + planSlack;
    const printedFit = bestWithExponents(law, runs, CHINCHILLA.alpha, CHINCHILLA.beta);
    const offFit = Math.abs(Math.log(optimum(printedFit, PUBLIC_PLAN_FLOPS).params) - want);
    const offRatio = Math.abs(0.5 * Math.log(PUBLIC_PLAN_FLOPS / (6 * printedRatio)) - want);
    return offFit > AWAY_MARGIN * tol && offRatio > AWAY_MARGIN * tol;
  });
}

/**
 * The E, A and B that fit the runs' noise-free losses under `law` best with
 * the exponents held at `alpha` and `beta`: least squares of the relative
 * residual (L - f)/L, linear in E, A, B (close to least squares on log L).
 */
export function bestWithExponents(law: ScalingLaw, runs: Run[], alpha: number, beta: number): ScalingLaw {
  const m = Array.from({ length: 3 }, () => new Array<number>(3).fill(0));
  const v = new Array<number>(3).fill(0);
  for (const r of runs) {
    const loss = lawLoss(law, r.params, r.tokens);
    const f = [1, r.params ** -alpha, r.tokens ** -beta];
    for (let i = 0; i < 3; i++) {
      v[i]! += (f[i]! * loss) / loss ** 2;
      for (let j = 0; j < 3; j++) m[i]![j]! += (f[i]! * f[j]!) / loss ** 2;
    }
  }
  const inv = invert(m);
  const [E, A, B] = inv.map((row) => row.reduce((s, x, j) => s + x * v[j]!, 0));
  return { E: E!, A: A!, B: B!, alpha, beta };
}

/** A budget in FLOPs, log-uniform in [10^20, 10^23]. */
export function drawBudget(gen: Generator): number {
  return Number((10 ** (20 + 3 * gen.uniform())).toPrecision(3));
}

/** The compute-optimal N and D of `law` for `flops`, in closed form (the README's formula). */
export function optimum(law: ScalingLaw, flops: number): { params: number; tokens: number } {
  const { A, B, alpha, beta } = law;
  const g = ((alpha * A) / (beta * B)) ** (1 / (alpha + beta));
  const params = g * (flops / 6) ** (beta / (alpha + beta));
  return { params, tokens: flops / (6 * params) };
}

/** Inverts a small symmetric positive definite matrix (Gauss-Jordan with partial pivoting). */
function invert(m: number[][]): number[][] {
  const k = m.length;
  const a = m.map((row, i) => [...row, ...Array.from({ length: k }, (_, j) => (i === j ? 1 : 0))]);
  for (let c = 0; c < k; c++) {
    let p = c;
    for (let r = c + 1; r < k; r++) if (Math.abs(a[r]![c]!) > Math.abs(a[p]![c]!)) p = r;
    [a[c], a[p]] = [a[p]!, a[c]!];
    const d = a[c]![c]!;
    for (let j = 0; j < 2 * k; j++) a[c]![j]! /= d;
    for (let r = 0; r < k; r++) {
      if (r === c) continue;
      const f = a[r]![c]!;
      for (let j = 0; j < 2 * k; j++) a[r]![j]! -= f * a[c]![j]!;
    }
  }
  return a.map((row) => row.slice(k));
}

/** Parameter order of the covariance: E, A, B, α, β. */
const toTheta = (l: ScalingLaw) => [l.E, l.A, l.B, l.alpha, l.beta];
const fromTheta = (t: number[]): ScalingLaw => ({ E: t[0]!, A: t[1]!, B: t[2]!, alpha: t[3]!, beta: t[4]! });

/** σ²·(JᵀJ)⁻¹: the covariance of the least-squares fit on log L for these runs' (N, D), at the true law. */
export function fitCovariance(law: ScalingLaw, runs: Run[]): number[][] {
  const jtj = Array.from({ length: 5 }, () => new Array<number>(5).fill(0));
  for (const r of runs) {
    const pn = r.params ** -law.alpha;
    const pd = r.tokens ** -law.beta;
    const f = lawLoss(law, r.params, r.tokens);
    const g = [1 / f, pn / f, pd / f, (-law.A * pn * Math.log(r.params)) / f, (-law.B * pd * Math.log(r.tokens)) / f];
    for (let i = 0; i < 5; i++) for (let j = 0; j < 5; j++) jtj[i]![j]! += g[i]! * g[j]!;
  }
  return invert(jtj).map((row) => row.map((x) => NOISE_SIGMA ** 2 * x));
}

/** The standard errors of the fitted α and β. */
export function exponentErrors(cov: number[][]): { alpha: number; beta: number } {
  return { alpha: Math.sqrt(cov[3]![3]!), beta: Math.sqrt(cov[4]![4]!) };
}

/**
 * The standard error of ln N_opt(θ̂, C) for a fitted law (the delta method:
 * the gradient of ln N_opt with respect to θ, by central differences, with
 * the covariance). ln D_opt = ln(C/6) - ln N_opt has the same error.
 */
export function logParamsError(law: ScalingLaw, cov: number[][], flops: number): number {
  const theta = toTheta(law);
  const grad = theta.map((t, i) => {
    const h = Math.abs(t) * 1e-6;
    const up = [...theta];
    const down = [...theta];
    up[i] = t + h;
    down[i] = t - h;
    return (Math.log(optimum(fromTheta(up), flops).params) - Math.log(optimum(fromTheta(down), flops).params)) / (2 * h);
  });
  let v = 0;
  for (let i = 0; i < 5; i++) for (let j = 0; j < 5; j++) v += grad[i]! * cov[i]![j]! * grad[j]!;
  return Math.sqrt(v);
}
