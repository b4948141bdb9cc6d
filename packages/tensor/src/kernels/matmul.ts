/**
 * The matrix-multiply primitive: `C = A·B` for contiguous row-major A (M×K)
 * and B (K×N), written into C (M×N).
 *
 * The loop order is i-k-j: the innermost loop runs along a row of B and a row
 * of C, both contiguous, so every load is sequential. Blocking over k keeps a
 * panel of B rows in cache while all rows of A in a block use it.
 */
import type { TypedArray } from '../dtype.ts';

const BLOCK_K = 64;
const BLOCK_I = 32;

/** Writes `A·B` into `c` at `cOff` (overwriting it). */
export function matmulKernel(
  a: TypedArray,
  aOff: number,
  b: TypedArray,
  bOff: number,
  c: TypedArray,
  cOff: number,
  M: number,
  K: number,
  N: number,
): void {
  c.fill(0, cOff, cOff + M * N);
  for (let i0 = 0; i0 < M; i0 += BLOCK_I) {
    const iEnd = Math.min(i0 + BLOCK_I, M);
    for (let k0 = 0; k0 < K; k0 += BLOCK_K) {
      const kEnd = Math.min(k0 + BLOCK_K, K);
      for (let i = i0; i < iEnd; i++) {
        const cRow = cOff + i * N;
        const aRow = aOff + i * K;
        for (let k = k0; k < kEnd; k++) {
          const aik = a[aRow + k]!;
          const bRow = bOff + k * N;
          for (let j = 0; j < N; j++) c[cRow + j] += aik * b[bRow + j]!;
        }
      }
    }
  }
}
