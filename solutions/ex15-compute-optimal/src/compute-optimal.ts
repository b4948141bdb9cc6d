/**
 * Exercise 15: Spend a compute budget (reference solution).
 *
 * The fit minimises the squared error of log L, as Hoffmann et al. (2022,
 * approach 3) do: the noise of a training run's final loss is a fraction of
 * the loss, so in log space every run weighs the same. It starts from a
 * variable projection (for fixed exponents the law is linear in E, A and B:
 * a 3x3 least-squares solve per (α, β) of a grid) and finishes with
 * Levenberg-Marquardt steps on all five parameters. The optimum for a budget
 * is the closed form of minimising the law on the curve 6·N·D = C.
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

/** The law's loss at (N, D). */
export function lawLoss(law: ScalingLaw, params: number, tokens: number): number {
  return law.E + law.A / params ** law.alpha + law.B / tokens ** law.beta;
}

/** Solves the k x k system m·x = v in place by Gaussian elimination with partial pivoting; null if singular. */
function solve(m: number[][], v: number[]): number[] | null {
  const k = v.length;
  for (let c = 0; c < k; c++) {
    let p = c;
    for (let r = c + 1; r < k; r++) if (Math.abs(m[r]![c]!) > Math.abs(m[p]![c]!)) p = r;
    if (Math.abs(m[p]![c]!) < 1e-300) return null;
    [m[c], m[p]] = [m[p]!, m[c]!];
    [v[c], v[p]] = [v[p]!, v[c]!];
    for (let r = c + 1; r < k; r++) {
      const f = m[r]![c]! / m[c]![c]!;
      for (let j = c; j < k; j++) m[r]![j]! -= f * m[c]![j]!;
      v[r]! -= f * v[c]!;
    }
  }
  const x = new Array<number>(k).fill(0);
  for (let r = k - 1; r >= 0; r--) {
    let s = v[r]!;
    for (let j = r + 1; j < k; j++) s -= m[r]![j]! * x[j]!;
    x[r] = s / m[r]![r]!;
  }
  return x;
}

/** Sum of squared log residuals of `law` on `runs` (Infinity where the law is not positive). */
function logError(law: ScalingLaw, runs: Run[]): number {
  let s = 0;
  for (const r of runs) {
    const f = lawLoss(law, r.params, r.tokens);
    if (!(f > 0)) return Infinity;
    s += (Math.log(f) - Math.log(r.loss)) ** 2;
  }
  return s;
}

/** For fixed exponents, E, A and B by linear least squares on L, weighted by 1/L² (the log error to first order). */
function projectLinear(runs: Run[], alpha: number, beta: number): ScalingLaw | null {
  const m = [[0, 0, 0], [0, 0, 0], [0, 0, 0]];
  const v = [0, 0, 0];
  for (const r of runs) {
    const x = [1, r.params ** -alpha, r.tokens ** -beta];
    const w = 1 / r.loss ** 2;
    for (let i = 0; i < 3; i++) {
      v[i]! += w * x[i]! * r.loss;
      for (let j = 0; j < 3; j++) m[i]![j]! += w * x[i]! * x[j]!;
    }
  }
  const s = solve(m, v);
  return s && { E: s[0]!, A: s[1]!, B: s[2]!, alpha, beta };
}

/**
 * Fits E + A/N^α + B/D^β to the runs by least squares on log L. Needs runs
 * that vary both N and D (a dozen or more).
 */
export function fitScalingLaw(runs: Run[]): ScalingLaw {
  // 1. A grid over the exponents, each with its best E, A, B: a start near the optimum whatever the surface.
  let best: ScalingLaw | null = null;
  let bestErr = Infinity;
  for (let a = 0.05; a <= 1.0; a += 0.01) {
    for (let b = 0.05; b <= 1.0; b += 0.01) {
      const law = projectLinear(runs, a, b);
      if (!law) continue;
      const err = logError(law, runs);
      if (err < bestErr) [best, bestErr] = [law, err];
    }
  }
  if (!best) throw new Error('fitScalingLaw: the runs do not determine the law (vary both N and D)');
  // 2. Levenberg-Marquardt on θ = (E, A, B, α, β), residuals log f(θ) - log L.
  let theta = [best.E, best.A, best.B, best.alpha, best.beta];
  const toLaw = (t: number[]): ScalingLaw => ({ E: t[0]!, A: t[1]!, B: t[2]!, alpha: t[3]!, beta: t[4]! });
  let err = logError(toLaw(theta), runs);
  let lambda = 1e-3;
  for (let it = 0; it < 200 && lambda < 1e12; it++) {
    const jtj = Array.from({ length: 5 }, () => new Array<number>(5).fill(0));
    const jtr = new Array<number>(5).fill(0);
    const [, A, B, alpha, beta] = theta as [number, number, number, number, number];
    for (const r of runs) {
      const pn = r.params ** -alpha;
      const pd = r.tokens ** -beta;
      const f = theta[0]! + A * pn + B * pd;
      const res = Math.log(f) - Math.log(r.loss);
      const g = [1 / f, pn / f, pd / f, (-A * pn * Math.log(r.params)) / f, (-B * pd * Math.log(r.tokens)) / f];
      for (let i = 0; i < 5; i++) {
        jtr[i]! += g[i]! * res;
        for (let j = 0; j < 5; j++) jtj[i]![j]! += g[i]! * g[j]!;
      }
    }
    const m = jtj.map((row, i) => row.map((x, j) => (i === j ? x * (1 + lambda) : x)));
    const step = solve(m, jtr.map((x) => -x));
    const next = step && theta.map((t, i) => t + step[i]!);
    const nextErr = next ? logError(toLaw(next), runs) : Infinity;
    if (next && nextErr < err) {
      const done = err - nextErr < 1e-15 * (1 + err);
      [theta, err] = [next, nextErr];
      lambda /= 10;
      if (done) break;
    } else {
      lambda *= 10;
    }
  }
  return toLaw(theta);
}

/**
 * The N and D that minimise `law` for a budget of `flops` FLOPs, with
 * C = 6·N·D (about 6 FLOPs per parameter per token, forward and backward).
 * On that curve the loss is E + A/N^α + B·(6N/C)^β; setting its derivative
 * to zero gives N_opt = G·(C/6)^(β/(α+β)) with G = (αA/(βB))^(1/(α+β)), and
 * D_opt = C/(6·N_opt).
 */
export function computeOptimal(law: ScalingLaw, flops: number): Allocation {
  const { A, B, alpha, beta } = law;
  const g = ((alpha * A) / (beta * B)) ** (1 / (alpha + beta));
  const params = g * (flops / 6) ** (beta / (alpha + beta));
  return { params, tokens: flops / (6 * params) };
}
