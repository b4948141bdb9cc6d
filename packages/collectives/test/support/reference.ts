/**
 * The single-process reference: every rank's input, drawn from a seed, and
 * the reduction of all of them computed here in float64, in rank order,
 * without any message passing.
 */
import { Generator, chunkBounds, deriveSeed, type DType, type TypedArray } from '@dtlab/tensor';

/** The built-in reduce ops. */
export const BUILTIN_OPS = ['sum', 'avg', 'prod', 'min', 'max'] as const;
export type BuiltinOp = (typeof BUILTIN_OPS)[number];

/** The all-reduce algorithms. */
export const ALGORITHMS = ['ring', 'naive', 'tree'] as const;

export const DTYPES = ['float32', 'float64'] as const satisfies readonly DType[];

/**
 * Rank `rank`'s `len` input values for `op`, exactly representable in
 * `dtype`. `prod` draws magnitudes in [0.5, 1.5] with random signs, so a
 * product of up to 8 of them stays between 2^-8 and 26 and is well
 * conditioned; the other ops draw from [-1, 1).
 */
export function rankInput(seed: number, rank: number, len: number, dtype: DType, op: BuiltinOp = 'sum'): Float64Array {
  const gen = new Generator(deriveSeed(seed, rank));
  const out = new Float64Array(len);
  for (let i = 0; i < len; i++) {
    const u = gen.uniform();
    out[i] = op === 'prod' ? (gen.uniform() < 0.5 ? -1 : 1) * (0.5 + u) : 2 * u - 1;
  }
  return dtype === 'float32' ? Float64Array.from(Float32Array.from(out)) : out;
}

/** Every rank's input (see `rankInput`). */
export function allInputs(seed: number, worldSize: number, len: number, dtype: DType, op: BuiltinOp = 'sum'): Float64Array[] {
  return Array.from({ length: worldSize }, (_, r) => rankInput(seed, r, len, dtype, op));
}

/** The elementwise reduction of `inputs` with `op`, in float64, folded in rank order. */
export function reduceReference(op: BuiltinOp, inputs: readonly Float64Array[]): Float64Array {
  const out = Float64Array.from(inputs[0]!);
  for (const x of inputs.slice(1)) {
    for (let i = 0; i < out.length; i++) {
      const a = out[i]!;
      const b = x[i]!;
      out[i] = op === 'prod' ? a * b : op === 'min' ? Math.min(a, b) : op === 'max' ? Math.max(a, b) : a + b;
    }
  }
  if (op === 'avg') for (let i = 0; i < out.length; i++) out[i]! /= inputs.length;
  return out;
}

/**
 * Tolerances for comparing a collective's result with the float64
 * reference. min and max pick one of the inputs and must be exact. Sums
 * and products of at most 8 terms of magnitude <= 1.5 in float32 carry a
 * rounding error below 8 * 2^-24 * 26 ~ 1.3e-5 relative to the largest
 * partial result, hence these bounds (float64: the same with 2^-53).
 */
export function tolerance(dtype: DType, op: BuiltinOp): { rtol: number; atol: number } {
  if (op === 'min' || op === 'max') return { rtol: 0, atol: 0 };
  return dtype === 'float32' ? { rtol: 2e-5, atol: 2e-5 } : { rtol: 1e-12, atol: 1e-12 };
}

/** Chunk `rank` of `values` under the uneven-split rule. */
export function chunkOf(values: Float64Array, worldSize: number, rank: number): Float64Array {
  const b = chunkBounds(values.length, worldSize)[rank]!;
  return values.slice(b.start, b.end);
}

/** The bytes of a typed array, for bitwise comparisons. */
export function bitsOf(a: TypedArray): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength).slice();
}
