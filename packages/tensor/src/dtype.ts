/**
 * Element types. dtlab has two: `float32` (the default, as in torch) and
 * `float64` (used by `gradcheck` and wherever a reference must be exact).
 */
import { allocateMetered } from './meter/allocation.ts';

/** An element type. */
export type DType = 'float32' | 'float64';

/** The storage behind a tensor of either dtype. */
export type TypedArray = Float32Array | Float64Array;

/**
 * Allocates zero-filled storage of `n` elements (of `shape`, for reports).
 * On a rank with a virtual device the storage is counted on its memory,
 * and an allocation past its capacity throws an out-of-memory error.
 */
export function allocate(dtype: DType, n: number, shape?: readonly number[]): TypedArray {
  return allocateMetered(dtype, n, shape);
}

/** The dtype that a typed array stores. */
export function dtypeOfArray(a: TypedArray): DType {
  return a instanceof Float64Array ? 'float64' : 'float32';
}

/** Bytes per element of `dtype`: 4 or 8. */
export function bytesPerElement(dtype: DType): number {
  return dtype === 'float64' ? 8 : 4;
}

/** Mixed dtypes promote to the wider one, as in torch: float32 op float64 is float64. */
export function promoteTypes(a: DType, b: DType): DType {
  return a === 'float64' || b === 'float64' ? 'float64' : 'float32';
}

/** Throws unless `d` names a dtype dtlab knows. */
export function checkDType(d: unknown, where: string): DType {
  if (d === 'float32' || d === 'float64') return d;
  throw new TypeError(`${where}: unknown dtype ${JSON.stringify(d)}; use 'float32' or 'float64'`);
}
