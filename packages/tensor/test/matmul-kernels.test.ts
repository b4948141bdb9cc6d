/**
 * The two matmul kernels (WebAssembly SIMD and plain JavaScript) compute the
 * same numbers, bit for bit, as a naive float64 triple loop that sums each
 * element in order k = 0, 1, ..., K-1 and rounds once to the dtype. That is
 * checked with Object.is (so -0 differs from 0, and NaN equals NaN whatever
 * its payload) on random shapes (0, 1, sizes off the 4×4 tile, sizes across
 * the 128/256/512 blocks), random values with infinities, NaN, signed zeros
 * and subnormals mixed in, and operands of every layout the tensor ops hand
 * the kernel: dense, transposed, rows of a wider matrix, a batch or a row
 * repeated by a zero stride, batch-innermost, and a narrow slice of a very
 * wide matrix (which the WebAssembly side gathers rather than copies).
 */
import { afterEach, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Generator, type DType, type TypedArray, noGrad, randn, tensor } from '../src/index.ts';
import { type BatchView, WASM_MIN_MULADDS, bmmKernel, setMatmulKernel, usesWasm } from '../src/kernels/matmul.ts';
import { matmulJs } from '../src/kernels/matmul-js.ts';
import { wasmAvailable, wasmBmm } from '../src/kernels/matmul-wasm.ts';

const LAYOUTS = ['dense', 'transposed', 'padded', 'batchBroadcast', 'rowBroadcast', 'batchInner', 'narrow'] as const;
type Layout = (typeof LAYOUTS)[number];

const SPECIALS = [NaN, Infinity, -Infinity, 0, -0, 1e-45, -1e-40, 5e-324, 1e30, -3e38];

/** Random values in [-1, 1), with a special value in about one place in `specialEvery` (never, when 0). */
function values(n: number, dtype: DType, gen: Generator, specialEvery: number): TypedArray {
  const out = dtype === 'float64' ? new Float64Array(n) : new Float32Array(n);
  for (let i = 0; i < n; i++) {
    out[i] = specialEvery > 0 && gen.int(specialEvery) === 0 ? SPECIALS[gen.int(SPECIALS.length)]! : gen.uniform() * 2 - 1;
  }
  return out;
}

/** Element strides [batch, row, col] of a batch of `rows`×`cols` matrices in `layout`. */
function strides(layout: Layout, batch: number, rows: number, cols: number, pad: number): [number, number, number] {
  switch (layout) {
    case 'dense': return [rows * cols, cols, 1];
    case 'transposed': return [rows * cols, 1, rows];
    case 'padded': return [rows * (cols + pad), cols + pad, 1];
    case 'batchBroadcast': return [0, cols, 1];
    case 'rowBroadcast': return [cols, 0, 1];
    case 'batchInner': return [1, cols * batch, batch];
    case 'narrow': return [rows * (cols + 40), cols + 40, 1];
  }
}

/** A batch view in `layout` over fresh random storage, starting `offset` elements in. */
function operand(layout: Layout, batch: number, rows: number, cols: number, dtype: DType, gen: Generator, specialEvery: number, offset = 0, pad = 1): BatchView {
  const [bs, rs, cs] = strides(layout, batch, rows, cols, pad);
  const size = offset + (batch - 1) * bs + (rows - 1) * rs + (cols - 1) * cs + 1;
  return { data: values(Math.max(size, 0), dtype, gen, specialEvery), offset, batchStride: bs, rowStride: rs, colStride: cs };
}

const at = (v: BatchView, n: number, i: number, j: number) => v.data[v.offset + n * v.batchStride + i * v.rowStride + j * v.colStride]!;

/** The definition: per element, a float64 sum over k in order from 0, rounded once to the dtype. */
function reference(a: BatchView, b: BatchView, dtype: DType, batch: number, M: number, K: number, N: number): TypedArray {
  const out = dtype === 'float64' ? new Float64Array(batch * M * N) : new Float32Array(batch * M * N);
  for (let n = 0; n < batch; n++) {
    for (let i = 0; i < M; i++) {
      for (let j = 0; j < N; j++) {
        let s = 0;
        for (let k = 0; k < K; k++) s += at(a, n, i, k) * at(b, n, k, j);
        out[(n * M + i) * N + j] = s;
      }
    }
  }
  return out;
}

/** The first index where `got` and `want` differ (Object.is), with both values, or null. */
function firstDifference(got: ArrayLike<number>, want: ArrayLike<number>): { index: number; got: number; want: number } | null {
  for (let i = 0; i < Math.max(got.length, want.length); i++) {
    if (!Object.is(got[i], want[i])) return { index: i, got: got[i]!, want: want[i]! };
  }
  return null;
}

/** Runs both kernels on one product and compares each with the reference. */
function checkProduct(layoutA: Layout, layoutB: Layout, dtype: DType, batch: number, M: number, K: number, N: number, seed: number, specialEvery: number): void {
  const gen = new Generator(seed);
  const a = operand(layoutA, batch, M, K, dtype, gen, specialEvery, gen.int(4), 1 + gen.int(3));
  const b = operand(layoutB, batch, K, N, dtype, gen, specialEvery, gen.int(4), 1 + gen.int(3));
  const want = reference(a, b, dtype, batch, M, K, N);
  const label = `${dtype} ${batch}×[${M}×${K}]·[${K}×${N}], A ${layoutA}, B ${layoutB}, seed ${seed}`;
  for (const kind of ['wasm', 'js'] as const) {
    setMatmulKernel(kind);
    const got = dtype === 'float64' ? new Float64Array(batch * M * N).fill(7) : new Float32Array(batch * M * N).fill(7);
    bmmKernel(a, b, got, batch, M, K, N);
    expect(firstDifference(got, want), `${kind} kernel, ${label}`).toBeNull();
  }
}

afterEach(() => {
  setMatmulKernel('auto');
});

describe('the WebAssembly kernel', () => {
  it('compiles here (Node has WebAssembly SIMD), so the fast path is really what the other tests exercise', () => {
    expect(wasmAvailable()).toBe(true);
    expect(usesWasm(64, 64, 64)).toBe(true);
  });

  it('is chosen from WASM_MIN_MULADDS (512) multiply-adds on, and the JavaScript kernel below', () => {
    expect(WASM_MIN_MULADDS).toBe(512);
    expect(usesWasm(8, 8, 8)).toBe(true);
    expect(usesWasm(7, 7, 7)).toBe(false);
    expect(usesWasm(2, 2, 2)).toBe(false);
    expect(usesWasm(1, 1024, 1)).toBe(true);
    setMatmulKernel('js');
    expect(usesWasm(512, 512, 512)).toBe(false);
    setMatmulKernel('wasm');
    expect(usesWasm(1, 1, 1)).toBe(true);
  });
});

describe('both kernels equal the float64 reference bit for bit', () => {
  const dim = fc.oneof(fc.integer({ min: 0, max: 9 }), fc.integer({ min: 10, max: 40 }));
  const layout = fc.constantFrom(...LAYOUTS);
  const dtype = fc.constantFrom<DType>('float32', 'float64');

  it('on random shapes, layouts and values', () => {
    fc.assert(
      fc.property(layout, layout, dtype, fc.integer({ min: 1, max: 3 }), dim, dim, dim, fc.nat(1e6), (la, lb, dt, batch, M, K, N, seed) => {
        checkProduct(la, lb, dt, batch, M, K, N, seed, 0);
      }),
      { seed: 2201, numRuns: 300 },
    );
  });

  it('with infinities, NaN, signed zeros and subnormals among the values', () => {
    fc.assert(
      fc.property(layout, layout, dtype, dim, dim, dim, fc.nat(1e6), (la, lb, dt, M, K, N, seed) => {
        checkProduct(la, lb, dt, 2, M, K, N, seed, 7);
      }),
      { seed: 2202, numRuns: 150 },
    );
  });

  it('across the cache blocks: 128 rows of A, 256 of the inner size, 512 columns of B', () => {
    for (const dt of ['float32', 'float64'] as const) {
      checkProduct('dense', 'dense', dt, 1, 129, 257, 513, 1, 0);
      checkProduct('transposed', 'padded', dt, 1, 128, 256, 512, 2, 0);
      checkProduct('padded', 'transposed', dt, 1, 131, 515, 6, 3, 0);
    }
  });

  it('for a vector times a matrix and a matrix times a vector', () => {
    for (const dt of ['float32', 'float64'] as const) {
      checkProduct('dense', 'dense', dt, 1, 1, 600, 300, 4, 0);
      checkProduct('dense', 'transposed', dt, 1, 300, 600, 1, 5, 0);
      checkProduct('dense', 'dense', dt, 3, 1, 1, 1030, 6, 0);
    }
  });

  it('after a large product has grown the WebAssembly memory, and a small one after it', () => {
    checkProduct('dense', 'dense', 'float64', 2, 300, 300, 300, 7, 0);
    checkProduct('dense', 'dense', 'float32', 1, 5, 6, 7, 8, 0);
  });
});

describe('the kernel under the tensor API', () => {
  /** The same expression computed with each kernel forced in turn. */
  function withEach(fn: () => number[]): { wasm: number[]; js: number[] } {
    setMatmulKernel('wasm');
    const wasm = fn();
    setMatmulKernel('js');
    const js = fn();
    return { wasm, js };
  }

  it('gives the JavaScript kernel\'s values for transposed, sliced, expanded, batched and 1-D operands', () => {
    const dt: DType[] = ['float32', 'float64'];
    for (const dtype of dt) {
      const a = randn([3, 37, 29], { seed: 1, dtype });
      const b = randn([29, 41], { seed: 2, dtype });
      const cases: Record<string, () => number[]> = {
        'batched · broadcast 2-D': () => a.matmul(b).toArray(),
        'transposed views': () => b.transpose(0, 1).matmul(a.transpose(1, 2)).toArray(),
        'sliced rows and columns': () => a.slice(1, 3, 30).matmul(b.slice(1, 2, 39)).toArray(),
        'expanded batch': () => a.slice(0, 0, 1).expand([4, 37, 29]).matmul(randn([4, 29, 5], { seed: 3, dtype })).toArray(),
        'vector · batched': () => randn([37], { seed: 4, dtype }).matmul(a).toArray(),
        'batched · vector': () => a.matmul(randn([29], { seed: 5, dtype })).toArray(),
      };
      for (const [name, fn] of Object.entries(cases)) {
        const { wasm, js } = withEach(() => noGrad(fn));
        expect(firstDifference(wasm, js), `${dtype} ${name}`).toBeNull();
      }
    }
  });

  it('gives the same gradients through backward (A·G and Gᵀ products on transposed views)', () => {
    const run = () => {
      const x = randn([20, 30], { seed: 6, requiresGrad: true });
      const w = randn([10, 30], { seed: 7, requiresGrad: true });
      x.matmul(w.transpose(0, 1)).tanh().sum().backward();
      return [...x.grad!.toArray(), ...w.grad!.toArray()];
    };
    const { wasm, js } = withEach(run);
    expect(firstDifference(wasm, js)).toBeNull();
  });

  it('an inner size of 0 gives zeros with either kernel', () => {
    for (const kind of ['wasm', 'js'] as const) {
      setMatmulKernel(kind);
      expect(tensor([], { shape: [5, 0] }).matmul(tensor([], { shape: [0, 6] })).toArray()).toEqual(new Array(30).fill(0));
    }
  });

  it('writes every element of the result (no stale value from an earlier product survives)', () => {
    setMatmulKernel('wasm');
    const big = randn([64, 64], { seed: 8 });
    noGrad(() => big.matmul(big));
    const small = tensor([[1, 2], [3, 4]]);
    expect(small.matmul(small).toArray()).toEqual([7, 10, 15, 22]);
  });
});

describe('wasmBmm', () => {
  it('leaves float32 and float64 results of the same product consistent: float32 is the float64 sum rounded once', () => {
    const gen = new Generator(9);
    const a32 = values(40 * 50, 'float32', gen, 0);
    const b32 = values(50 * 30, 'float32', gen, 0);
    const view = (data: TypedArray, cols: number): BatchView => ({ data, offset: 0, batchStride: 0, rowStride: cols, colStride: 1 });
    const c32 = new Float32Array(40 * 30);
    const c64 = new Float64Array(40 * 30);
    expect(wasmBmm(view(a32, 50), view(b32, 30), c32, 1, 40, 50, 30)).toBe(true);
    expect(wasmBmm(view(Float64Array.from(a32), 50), view(Float64Array.from(b32), 30), c64, 1, 40, 50, 30)).toBe(true);
    expect(firstDifference(c32, Float32Array.from(c64))).toBeNull();
    // And the JavaScript kernel agrees with both.
    const cjs = new Float32Array(40 * 30);
    matmulJs({ data: a32, offset: 0, rowStride: 50, colStride: 1 }, { data: b32, offset: 0, rowStride: 30, colStride: 1 }, cjs, 0, 40, 50, 30);
    expect(firstDifference(cjs, c32)).toBeNull();
  });
});
