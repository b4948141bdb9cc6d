/**
 * Inputs of the ex03 public checks, made from a seed, and what the checks
 * expect. Rank programs (in the rank workers) and checks (in the grading
 * process) both call these, so the checker knows every rank's gradients
 * without receiving them from student code.
 */
import { Generator, Tensor, deriveSeed, flattenTensors, optim, tensor } from '@dtlab/tensor';

/** A run of the optimizer on given gradients: parameter shapes, steps, AdamW options. */
export interface GradSpec {
  seed: number;
  shapes: number[][];
  steps: number;
  opts: Required<optim.AdamOptions>;
  /** Parameters (by index) that get no gradient (`.grad` null on every rank) at a step, by step (from 0). */
  noGrad?: Record<number, number[]>;
  /** Save a checkpoint (`stateDict()`) after this many steps. */
  checkpointAfter?: number;
}

/**
 * AdamW options of the checks. eps is large next to the gradients (about
 * 1e-2) on purpose: Adam's update g/|g| cannot tell a mean from a sum, but
 * m̂/(√v̂ + eps) can when eps matters. It also keeps float32 rounding of a
 * near-zero gradient from flipping an update.
 */
export const CHECK_OPTIONS: Required<optim.AdamOptions> = { lr: 0.01, betas: [0.9, 0.99], eps: 1e-3, weightDecay: 0.1 };

/** Bytes per element of the parameters and moments (float32). */
export const BYTES_PER_ELEMENT = 4;


const numel = (shape: number[]) => shape.reduce((a, b) => a * b, 1);

/** The initial parameters (the same on every rank). */
export function initialParams(spec: GradSpec): Tensor[] {
  const gen = new Generator(deriveSeed(spec.seed, 0));
  return spec.shapes.map((shape) => tensor(Array.from({ length: numel(shape) }, () => gen.normal()), { shape, requiresGrad: true }));
}

/**
 * Rank `rank`'s gradients at step `step` (from 0): multiples of 1/1024 up to
 * 1/64, so that sums over ranks are exact in float32 and the mean is one
 * rounding, whatever the order of the additions.
 */
export function rankGrads(spec: GradSpec, rank: number, step: number): (Tensor | null)[] {
  const gen = new Generator(deriveSeed(spec.seed, 1 + rank, step));
  const none = new Set(spec.noGrad?.[step] ?? []);
  return spec.shapes.map((shape, i) => {
    const g = tensor(Array.from({ length: numel(shape) }, () => (gen.int(33) - 16) / 1024), { shape });
    return none.has(i) ? null : g;
  });
}

/** The mean over `worldSize` ranks of `rankGrads` (exact sum, one rounding to float32). */
export function meanGrads(spec: GradSpec, worldSize: number, step: number): Tensor[] {
  const all = Array.from({ length: worldSize }, (_, r) => rankGrads(spec, r, step));
  return spec.shapes.map((shape, i) => {
    const sum = new Float64Array(numel(shape));
    // A parameter without a gradient counts as a zero gradient (the exercise's contract).
    for (const grads of all) grads[i]?.data().forEach((v, k) => (sum[k]! += v));
    return tensor(Float32Array.from(sum, (v) => v / worldSize), { shape });
  });
}

/** Single-process AdamW on the mean gradients: the flat parameters every rank must hold after each step. */
export function expectedParamsByStep(spec: GradSpec, worldSize: number): Tensor[] {
  const params = initialParams(spec);
  const adamw = new optim.AdamW(params, spec.opts);
  const after: Tensor[] = [];
  for (let s = 0; s < spec.steps; s++) {
    meanGrads(spec, worldSize, s).forEach((g, i) => (params[i]!.grad = g));
    adamw.step();
    after.push(flattenTensors(params));
  }
  return after;
}

/** Total parameter elements P of `shapes`. */
export function paramCount(shapes: number[][]): number {
  return shapes.reduce((n, s) => n + numel(s), 0);
}

/**
 * A text that changes when anything in `value` changes (tensors by their
 * elements, bit for bit): to tell whether a checkpoint was changed after it
 * was loaded.
 */
export function fingerprintOf(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v instanceof Tensor) return { tensor: v.dtype, shape: v.shape, bits: Array.from(new Uint32Array(Float64Array.from(v.toArray().flat(Infinity as 1) as number[]).buffer)) };
    if (ArrayBuffer.isView(v)) return { view: Array.from(v as unknown as ArrayLike<number>) };
    return v;
  });
}
