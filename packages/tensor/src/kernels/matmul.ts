/**
 * The matrix-multiply primitive, batched: `C[n] = A[n]·B[n]` for a batch of
 * A (M×K) and B (K×N) read in place through their strides, written
 * contiguous, row-major, into C (batch×M×N).
 *
 * Two kernels compute it, with results equal bit for bit (both sum each
 * element in float64 in the order k = 0, 1, ..., K-1 and round once):
 *
 * - matmul-wasm.ts + matmul.wat: WebAssembly SIMD (f64x2), blocked for the
 *   caches, 4-5x faster than JavaScript on large products, but it copies
 *   the operands into its memory and the result out.
 * - matmul-js.ts: plain JavaScript, 4×4 register tiles, no copies.
 *
 * Products below WASM_MIN_MULADDS multiply-adds take the JavaScript kernel
 * (there the call and the copies cost more than the SIMD saves), and so does
 * every product where WebAssembly SIMD is missing.
 */
import type { TypedArray } from '../dtype.ts';
import { type MatrixView, matmulJs } from './matmul-js.ts';
import { type BatchView, wasmAvailable, wasmBmm } from './matmul-wasm.ts';

export type { BatchView, MatrixView };

/**
 * Multiply-adds (M·K·N) from which the WebAssembly kernel is used, per matrix
 * of the batch. Measured with bench/matmul-threshold.ts (node 20, one thread):
 * the kernels break even near 6×6×6 (216) in both dtypes; at 8×8×8 (512) the
 * WebAssembly kernel is 1.5-1.7x faster, at 4×4×4 (64) 0.5x. Thin products
 * follow the count, not the shape: a vector times a 256×256 matrix
 * (1×256×256) is already 1.9x faster in WebAssembly.
 */
export const WASM_MIN_MULADDS = 512;

/** Which kernel `bmmKernel` uses: chosen by size, or one forced (to compare them in tests and benchmarks). */
export type MatmulKernel = 'auto' | 'js' | 'wasm';

let choice: MatmulKernel = 'auto';

/**
 * Forces a kernel for every later product ('js' or 'wasm'; 'wasm' only where
 * it is available), or returns to choosing by size ('auto'). Returns the
 * previous setting, so a caller can restore it.
 */
export function setMatmulKernel(kind: MatmulKernel): MatmulKernel {
  const before = choice;
  choice = kind;
  return before;
}

/** True when `bmmKernel` would use the WebAssembly kernel for this product. */
export function usesWasm(M: number, K: number, N: number): boolean {
  if (choice === 'js' || !wasmAvailable()) return false;
  return choice === 'wasm' || M * K * N >= WASM_MIN_MULADDS;
}

/** Matrix `n` of a batch view. */
function matrixAt(v: BatchView, n: number): MatrixView {
  return { data: v.data, offset: v.offset + n * v.batchStride, rowStride: v.rowStride, colStride: v.colStride };
}

/**
 * Writes the batch of products `a[n]·b[n]` into `c` from index 0, row-major
 * (batch·M·N elements, overwritten). `a`, `b` and `c` share one dtype.
 */
export function bmmKernel(a: BatchView, b: BatchView, c: TypedArray, batch: number, M: number, K: number, N: number): void {
  if (batch === 0 || M === 0 || N === 0) return;
  if (K === 0) {
    c.fill(0, 0, batch * M * N);
    return;
  }
  if (usesWasm(M, K, N) && wasmBmm(a, b, c, batch, M, K, N)) return;
  for (let n = 0; n < batch; n++) matmulJs(matrixAt(a, n), matrixAt(b, n), c, n * M * N, M, K, N);
}
