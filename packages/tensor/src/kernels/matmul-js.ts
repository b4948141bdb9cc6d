/**
 * The matrix product in plain JavaScript: `C = A·B` for A (M×K) and B (K×N)
 * read in place through their strides, written contiguous, row-major, into C
 * (M×N). matmul.ts uses it where the WebAssembly kernel does not pay (small
 * products) or cannot run; it is also the definition that kernel matches bit
 * for bit.
 *
 * JavaScript has no SIMD and V8 gives a loop about 16 float registers, so the
 * speed comes from doing many multiply-adds per load:
 *
 * - Register blocking. The inner loop computes a 4×4 tile of C in 16 local
 *   variables that stay in registers: per step of k it loads 4 values of A and
 *   4 of B and does 16 multiply-adds. The textbook i-k-j loop loads and stores
 *   an element of C for every multiply-add; this is about 4x faster.
 * - Packing. B is copied once into panels of 4 columns, laid out k-major
 *   (`[k][4]`), and each block of 4 rows of A likewise, so the inner loop reads
 *   two sequential streams whatever the operands' strides. A transposed or
 *   broadcast operand therefore needs no copy beforehand: packing is the copy,
 *   O(K·(M+N)) work against the product's O(M·N·K).
 * - Accumulation in float64. The packs are Float64Array and the accumulators
 *   are doubles, so a float32 product is summed in double precision and rounded
 *   once, when stored (more accurate than summing in float32, and no slower:
 *   V8 computes in doubles anyway).
 * - Edges. Packing pads missing rows and columns with zeros, so every tile is
 *   a full 4×4; only storing an edge tile checks bounds. Fewer than 4 rows in
 *   all (a vector times a matrix) take a plain row loop instead.
 */
import type { TypedArray } from '../dtype.ts';

/** A matrix read in place: element (i, j) is `data[offset + i·rowStride + j·colStride]`. */
export interface MatrixView {
  data: TypedArray;
  offset: number;
  rowStride: number;
  colStride: number;
}

/**
 * Tile size in both directions. 4×4 measured fastest against 2×4 and 4×2 (16
 * multiply-adds per 8 loads); larger tiles run out of x64's 16 float registers.
 */
const T = 4;

// Packing buffers, reused across calls (JS runs one kernel at a time per thread) and grown on demand.
let aPack = new Float64Array(0);
let bPack = new Float64Array(0);
let rowAcc = new Float64Array(0);
const tile = new Float64Array(T * T);

/**
 * Copies 4 lines of a matrix, each `K` long, into `dst[at + 4k + t]`. Line t
 * starts at `src[start + t·lineStride]` and steps by `kStride`; lines from
 * `lines` on are zeros (the edge of the matrix).
 */
function pack4(src: TypedArray, start: number, lineStride: number, kStride: number, lines: number, K: number, dst: Float64Array, at: number): void {
  for (let k = 0; k < K; k++) {
    const s = start + k * kStride;
    const d = at + T * k;
    for (let t = 0; t < T; t++) dst[d + t] = t < lines ? src[s + t * lineStride]! : 0;
  }
}

/**
 * The 4×4 tile of C from a packed block of A rows (`aPack`, at 0) and a packed
 * panel of B columns (`bPack` at `bAt`), written to `tile` row-major.
 */
function multiplyTile(K: number, bAt: number): void {
  const a = aPack;
  const b = bPack;
  let c00 = 0, c01 = 0, c02 = 0, c03 = 0;
  let c10 = 0, c11 = 0, c12 = 0, c13 = 0;
  let c20 = 0, c21 = 0, c22 = 0, c23 = 0;
  let c30 = 0, c31 = 0, c32 = 0, c33 = 0;
  for (let k = 0, ai = 0, bi = bAt; k < K; k++, ai += T, bi += T) {
    const a0 = a[ai]!, a1 = a[ai + 1]!, a2 = a[ai + 2]!, a3 = a[ai + 3]!;
    const b0 = b[bi]!, b1 = b[bi + 1]!, b2 = b[bi + 2]!, b3 = b[bi + 3]!;
    c00 += a0 * b0; c01 += a0 * b1; c02 += a0 * b2; c03 += a0 * b3;
    c10 += a1 * b0; c11 += a1 * b1; c12 += a1 * b2; c13 += a1 * b3;
    c20 += a2 * b0; c21 += a2 * b1; c22 += a2 * b2; c23 += a2 * b3;
    c30 += a3 * b0; c31 += a3 * b1; c32 += a3 * b2; c33 += a3 * b3;
  }
  tile[0] = c00; tile[1] = c01; tile[2] = c02; tile[3] = c03;
  tile[4] = c10; tile[5] = c11; tile[6] = c12; tile[7] = c13;
  tile[8] = c20; tile[9] = c21; tile[10] = c22; tile[11] = c23;
  tile[12] = c30; tile[13] = c31; tile[14] = c32; tile[15] = c33;
}

/**
 * `A·B` one row of C at a time, i-k-j, for M < 4 (a vector times a matrix):
 * there packing B would cost as much as the product itself.
 */
function matmulFewRows(a: MatrixView, b: MatrixView, c: TypedArray, cOff: number, M: number, K: number, N: number): void {
  if (rowAcc.length < N) rowAcc = new Float64Array(N);
  const acc = rowAcc;
  const bd = b.data;
  const bs = b.colStride;
  for (let i = 0; i < M; i++) {
    acc.fill(0, 0, N);
    for (let k = 0; k < K; k++) {
      const aik = a.data[a.offset + i * a.rowStride + k * a.colStride]!;
      for (let j = 0, q = b.offset + k * b.rowStride; j < N; j++, q += bs) acc[j] += aik * bd[q]!;
    }
    for (let j = 0; j < N; j++) c[cOff + i * N + j] = acc[j]!;
  }
}

/** Writes `A·B` into `c` at `cOff`, row-major M×N (overwriting it). */
export function matmulJs(a: MatrixView, b: MatrixView, c: TypedArray, cOff: number, M: number, K: number, N: number): void {
  if (M < T) return matmulFewRows(a, b, c, cOff, M, K, N);
  const panels = Math.ceil(N / T);
  if (bPack.length < panels * T * K) bPack = new Float64Array(panels * T * K);
  if (aPack.length < T * K) aPack = new Float64Array(T * K);
  // Panel p holds columns 4p..4p+3 of B: lines are columns (colStride apart), k runs down rows.
  for (let p = 0; p < panels; p++) {
    pack4(b.data, b.offset + p * T * b.colStride, b.colStride, b.rowStride, Math.min(T, N - p * T), K, bPack, p * T * K);
  }
  for (let i0 = 0; i0 < M; i0 += T) {
    const rows = Math.min(T, M - i0);
    // Rows i0..i0+3 of A: lines are rows (rowStride apart), k runs along columns.
    pack4(a.data, a.offset + i0 * a.rowStride, a.rowStride, a.colStride, rows, K, aPack, 0);
    for (let p = 0; p < panels; p++) {
      multiplyTile(K, p * T * K);
      const j0 = p * T;
      const cols = Math.min(T, N - j0);
      for (let r = 0; r < rows; r++) {
        const row = cOff + (i0 + r) * N + j0;
        for (let t = 0; t < cols; t++) c[row + t] = tile[r * T + t]!;
      }
    }
  }
}
