/**
 * Public tests of exercise 15. They draw noisy runs from Chinchilla's
 * approach-3 surface (Hoffmann et al., 2022), fit them with your
 * fitScalingLaw, and compare your computeOptimal with a brute-force search
 * for the least loss along 6·N·D = C.
 *
 *   pnpm test ex15        run them
 *   pnpm test:ui ex15     open them in the vitest UI
 */
import { describe, expect, it } from 'vitest';
import { Generator } from '@dtlab/tensor';
import { computeOptimal, fitScalingLaw, type Run, type ScalingLaw } from '../src/compute-optimal.ts';

const CHINCHILLA: ScalingLaw = { E: 1.69, A: 406.4, B: 410.7, alpha: 0.34, beta: 0.28 };
const loss = (l: ScalingLaw, n: number, d: number) => l.E + l.A / n ** l.alpha + l.B / d ** l.beta;

/** The N with the least loss on 6·N·D = C, by scanning N on a fine logarithmic grid (10^5 to 10^14 parameters). */
function searchOptimum(law: ScalingLaw, flops: number): number {
  let best = { n: NaN, l: Infinity };
  for (let e = 5; e <= 14; e += 1e-4) {
    const n = 10 ** e;
    const l = loss(law, n, flops / (6 * n));
    if (l < best.l) best = { n, l };
  }
  return best.n;
}

/** 64 runs with N from 10^7 to 3·10^9 and D from 10^9 to 3·10^11, losses with 0.5% noise. */
function noisyRuns(seed: number): Run[] {
  const gen = new Generator(seed);
  const between = (lo: number, hi: number) => lo * (hi / lo) ** gen.uniform();
  return Array.from({ length: 64 }, () => {
    const params = Math.round(between(1e7, 3e9));
    const tokens = Math.round(between(1e9, 3e11));
    return { params, tokens, loss: loss(CHINCHILLA, params, tokens) * Math.exp(0.005 * gen.normal()) };
  });
}

describe('computeOptimal on Chinchilla’s surface', () => {
  for (const flops of [1e21, 1e22, 1e23]) {
    it(`spends ${flops.toExponential(0)} FLOPs where the loss is least`, () => {
      const got = computeOptimal({ ...CHINCHILLA }, flops);
      const n = searchOptimum(CHINCHILLA, flops);
      const msg = `got N = ${got.params.toExponential(3)}, D = ${got.tokens.toExponential(3)} (${(got.tokens / got.params).toFixed(1)} tokens per parameter); the search finds N = ${n.toExponential(3)} (${(flops / (6 * n * n)).toFixed(1)} tokens per parameter)`;
      expect(6 * got.params * got.tokens, '6·N·D within the budget').toBeLessThanOrEqual(flops * (1 + 1e-9));
      expect(Math.abs(got.params / n - 1), msg).toBeLessThan(0.01);
      expect(loss(CHINCHILLA, got.params, got.tokens), msg).toBeLessThanOrEqual(loss(CHINCHILLA, n, flops / (6 * n)) + 1e-9);
    });
  }
});

describe('fitScalingLaw', () => {
  for (const seed of [1, 2]) {
    it(`recovers Chinchilla’s exponents from 64 noisy runs (seed ${seed})`, () => {
      const fit = fitScalingLaw(noisyRuns(seed));
      const msg = `fitted E ${fit.E}, A ${fit.A}, B ${fit.B}, α ${fit.alpha}, β ${fit.beta}; the runs come from E 1.69, A 406.4, B 410.7, α 0.34, β 0.28`;
      // 0.05 is about 5 standard errors of a least-squares fit of log L for such runs.
      expect(Math.abs(fit.alpha - 0.34), msg).toBeLessThan(0.05);
      expect(Math.abs(fit.beta - 0.28), msg).toBeLessThan(0.05);
    });
  }
});
