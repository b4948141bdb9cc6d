/**
 * The matrix-multiply primitive, batched: `C[n] = A[n]·B[n]` for a batch of
 * A (M×K) and B (K×N) read in place through their strides, written
 * contiguous, row-major, into C (batch×M×N).
 *
 * Two kernels compute it, with results equal bit for bit (both sum each
 * element in float64 in the order k = 0, 1, ..., K-1 and round once):
 *
 * - matmul-wasm.ts + matmul.wat: WebAssembly SIMD (f64x2), blocked for the
 *   caches, about 3x faster than JavaScript on large products, but it copies
 *   the operands into its memory and the result out.
 * - matmul-js.ts: plain JavaScript, 4×4 register tiles, no copies.
 *
 * Products below WASM_MIN_FLOPS multiply-adds take the JavaScript kernel
 * (there the copies cost more than the SIMD saves), and so do products with
 * fewer than 4 rows (a vector times a matrix: packing B would cost as much as
 * the product), and every product where WebAssembly SIMD is missing.
 */
import type { TypedArray } from '../dtype.ts';
import { type MatrixView, matmulJs } from './matmul-js.ts';
import { type BatchView, wasmAvailable, wasmBmm } from './matmul-wasm.ts';

export type { BatchView, MatrixView };

/**
 * Multiply-adds (M·K·N) from which the WebAssembly kernel is used. Measured
 * on this repository's 2-core machine (bench/matmul-threshold.ts): the two
 * kernels break even at about 16×16×16 for square products and at about
 * 8×64×8 for thin ones; this threshold sits a little above both.
 */
export const WASM_MIN_FLOPS = 8192;

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
  return choice === 'wasm' || (M >= 4 && M * K * N >= WASM_MIN_FLOPS);
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
