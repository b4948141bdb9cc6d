/**
 * The JavaScript half of the WebAssembly SIMD matrix product (the other half,
 * and the reasoning behind its loops, is matmul.wat).
 *
 * WebAssembly reads only its own memory, so a product goes:
 *
 *   copy A and B into the module's memory (a memcpy for dense or transposed
 *   views, a strided gather otherwise), run `gemm` once per matrix of the
 *   batch, copy the batch of results out (one memcpy).
 *
 * The copies are O(M·K + K·N + M·N) against the product's O(M·N·K); at small
 * sizes they are what dominates, which is why matmul.ts sends small products
 * to the JavaScript kernel instead.
 *
 * The module is compiled on first use, synchronously (1.1 KB, well under the
 * 4 KB that browsers allow on their main thread). Where WebAssembly or its SIMD
 * is missing, compiling fails once and every product takes the JavaScript
 * kernel. The memory grows as products need it and never shrinks: its peak is
 * about the operands and result of the largest product so far, in their dtype,
 * plus its float64 accumulators (8·M·N bytes) and 1.3 MiB of packing space.
 */
import type { TypedArray } from '../dtype.ts';
import { MATMUL_WASM_BASE64 } from './matmul-wasm-bytes.ts';

/**
 * A batch of matrices read in place: element (i, j) of matrix `n` is
 * `data[offset + n·batchStride + i·rowStride + j·colStride]` (a batch stride
 * of 0 repeats one matrix, as `expand` does).
 */
export interface BatchView {
  data: TypedArray;
  offset: number;
  batchStride: number;
  rowStride: number;
  colStride: number;
}

/** Blocking sizes baked into matmul.wat: rows of A and columns of B per pack, and k per pack. */
const MC = 128;
const NC = 512;
const KC = 256;

/** Bytes of packing space `gemm` needs: an MC×KC pack of A and a KC×NC pack of B, in float64. */
const WORK_BYTES = (MC + NC) * KC * 8;

/** Past this much memory the product falls back to JavaScript (byte offsets must stay within int32). */
const MAX_BYTES = 2 ** 30;

const PAGE = 65536;

type Gemm = (
  M: number, K: number, N: number,
  a: number, ars: number, acs: number,
  b: number, brs: number, bcs: number,
  out: number, c: number, work: number, f32: number,
) => void;

interface Kernel {
  memory: { buffer: ArrayBuffer; grow(pages: number): number };
  gemm: Gemm;
}

// The parts of the WebAssembly global used here (the project's TypeScript libraries do not declare it).
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object) => { exports: Record<string, unknown> };
}

/** The module's bytes, decoded from the embedded base64. */
export function matmulWasmBytes(): Uint8Array {
  const text = atob(MATMUL_WASM_BASE64);
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  return bytes;
}

/** The compiled kernel; null once compiling has failed; undefined until first asked for. */
let kernel: Kernel | null | undefined;

function load(): Kernel | null {
  if (kernel !== undefined) return kernel;
  try {
    const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;
    const { exports } = new wasm.Instance(new wasm.Module(matmulWasmBytes()));
    kernel = { memory: exports.memory as Kernel['memory'], gemm: exports.gemm as Gemm };
  } catch {
    kernel = null;
  }
  return kernel;
}

/** True when WebAssembly SIMD is available here, so `wasmBmm` can run. */
export function wasmAvailable(): boolean {
  return load() !== null;
}

/** Rounds a byte count up to a whole cache line, so that every region starts aligned. */
const align = (bytes: number) => Math.ceil(bytes / 64) * 64;

/**
 * Bytes an operand takes in the module's memory, and how it gets there.
 * A view whose elements all lie within a span at most twice its size (dense,
 * transposed, a slice of a slightly wider matrix, a broadcast batch) is
 * copied as that span and keeps its strides; any other is gathered into a
 * dense row-major batch.
 */
function layout(v: BatchView, batch: number, rows: number, cols: number): { span: number; gather: boolean } {
  const { batchStride: bs, rowStride: rs, colStride: cs } = v;
  const count = batch * rows * cols;
  if (bs >= 0 && rs >= 0 && cs >= 0) {
    const span = (batch - 1) * bs + (rows - 1) * rs + (cols - 1) * cs + 1;
    if (span <= 2 * count) return { span, gather: false };
  }
  return { span: count, gather: true };
}

/**
 * Writes operand `v` into `heap` at element `at` as `layout` decided, and
 * returns its element strides there: [batch, row, column].
 */
function place(v: BatchView, batch: number, rows: number, cols: number, heap: TypedArray, at: number, gather: boolean, span: number): [number, number, number] {
  if (!gather) {
    heap.set(v.data.subarray(v.offset, v.offset + span), at);
    return [v.batchStride, v.rowStride, v.colStride];
  }
  const { data, batchStride: bs, rowStride: rs, colStride: cs } = v;
  let o = at;
  for (let n = 0; n < batch; n++) {
    for (let i = 0; i < rows; i++) {
      for (let j = 0, q = v.offset + n * bs + i * rs; j < cols; j++, q += cs) heap[o++] = data[q]!;
    }
  }
  return [rows * cols, cols, 1];
}

/**
 * `c[n] = a[n]·b[n]` for each matrix n of the batch, written contiguous and
 * row-major into `c` from index 0 (batch·M·N elements, overwritten). All
 * three arrays have one dtype, float32 or float64; M, N and K are at least 1.
 * Returns false, having done nothing, when the kernel is unavailable or the
 * product would need more memory than it may take; the caller then computes
 * it in JavaScript.
 */
export function wasmBmm(a: BatchView, b: BatchView, c: TypedArray, batch: number, M: number, K: number, N: number): boolean {
  const k = load();
  if (k === null) return false;
  const f32 = c instanceof Float32Array;
  const esz = f32 ? 4 : 8;
  const la = layout(a, batch, M, K);
  const lb = layout(b, batch, K, N);
  const cBytes = Math.ceil(M / 4) * 4 * Math.ceil(N / 4) * 4 * 8;
  // Regions, in bytes: A, B, the float64 accumulators, the packs, the batch of results.
  const aAt = 0;
  const bAt = aAt + align(la.span * esz);
  const cAt = bAt + align(lb.span * esz);
  const workAt = cAt + align(cBytes);
  const outAt = workAt + WORK_BYTES;
  const end = outAt + batch * M * N * esz;
  if (end > MAX_BYTES) return false;
  const have = k.memory.buffer.byteLength;
  if (end > have) {
    try {
      k.memory.grow(Math.ceil((end - have) / PAGE));
    } catch {
      return false;
    }
  }
  const buffer = k.memory.buffer;
  const heap = f32 ? new Float32Array(buffer) : new Float64Array(buffer);
  const [abs, ars, acs] = place(a, batch, M, K, heap, aAt / esz, la.gather, la.span);
  const [bbs, brs, bcs] = place(b, batch, K, N, heap, bAt / esz, lb.gather, lb.span);
  const f = f32 ? 1 : 0;
  for (let n = 0; n < batch; n++) {
    k.gemm(M, K, N, aAt + n * abs * esz, ars, acs, bAt + n * bbs * esz, brs, bcs, outAt + n * M * N * esz, cAt, workAt, f);
  }
  c.set(heap.subarray(outAt / esz, outAt / esz + batch * M * N));
  return true;
}
