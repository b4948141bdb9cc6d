/**
 * `gradcheck`: compares autograd's gradients with central finite differences
 * in float64, input by input and element by element.
 *
 * It checks the vector-Jacobian product that backward computes: for a fixed
 * random weighting `v` of the outputs, the gradient of `sum(v · fn(x))`.
 */
import { Tensor } from '../tensor.ts';
import { randn } from '../creation.ts';
import { noGrad } from '../autograd/grad-mode.ts';
import { fmtShape } from '../errors.ts';

/** Options of `gradcheck`. */
export interface GradcheckOptions {
  /** Finite-difference step. */
  eps?: number;
  atol?: number;
  rtol?: number;
  /** Seed of the output weighting. */
  seed?: number;
}

/** A gradient that disagrees with finite differences. */
export class GradcheckError extends Error {
  override name = 'GradcheckError';
  constructor(
    message: string,
    /** Which input (position in the `inputs` list). */
    readonly input: number,
    /** Flat index of the element within that input. */
    readonly index: number,
    readonly analytic: number,
    readonly numeric: number,
  ) {
    super(message);
  }
}

/**
 * Checks `fn`'s gradients with respect to each of `inputs`. Inputs are copied
 * to float64 leaves that require grad; `fn` must be deterministic. Returns
 * true, or throws a `GradcheckError` naming the first failing input and index.
 */
export function gradcheck(fn: (...xs: Tensor[]) => Tensor, inputs: readonly Tensor[], opts: GradcheckOptions = {}): true {
  const { eps = 1e-6, atol = 1e-5, rtol = 1e-3, seed = 0 } = opts;
  const xs = inputs.map((t) => {
    const c = noGrad(() => t.double().clone());
    c.requiresGrad = true;
    return c;
  });
  const out0 = fn(...xs);
  const v = randn(out0.shape, { seed, dtype: 'float64' });
  const objective = () => noGrad(() => fn(...xs).double().mul(v).sum().item());
  out0.double().mul(v).sum().backward();
  xs.forEach((x, i) => {
    const analytic = x.grad ? x.grad.data() : new Float64Array(x.numel);
    const data = x._storage.data;
    for (let k = 0; k < x.numel; k++) {
      const orig = data[k]!;
      data[k] = orig + eps;
      const plus = objective();
      data[k] = orig - eps;
      const minus = objective();
      data[k] = orig;
      const numeric = (plus - minus) / (2 * eps);
      const a = analytic[k]!;
      if (!(Math.abs(a - numeric) <= atol + rtol * Math.abs(numeric))) {
        throw new GradcheckError(
          `gradcheck: input ${i} (shape ${fmtShape(x.shape)}) element ${k}: analytic gradient ${a} but finite differences give ${numeric} (|diff| ${Math.abs(a - numeric)})`,
          i, k, a, numeric,
        );
      }
    }
  });
  return true;
}
