/**
 * matmul follows torch.matmul for 1-D, 2-D and 3-D operands and agrees with a
 * naive triple loop. Small integer entries keep every sum exact, so results
 * compare with equality in float32 as well as float64.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ShapeError, type DType, tensor } from '../src/index.ts';
import { matmulRef, smallInts } from './support/reference.ts';

/** The product of `a` [B?,M,K] and `b` [B?,K,N] batch by batch; an unbatched operand is reused for every batch. */
function batchedRef(a: number[], b: number[], batch: number, aBatched: boolean, bBatched: boolean, m: number, k: number, n: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < batch; i++) {
    const ai = aBatched ? a.slice(i * m * k, (i + 1) * m * k) : a;
    const bi = bBatched ? b.slice(i * k * n, (i + 1) * k * n) : b;
    out.push(...matmulRef(ai, bi, m, k, n));
  }
  return out;
}

const dimsArb = fc.record({
  batch: fc.integer({ min: 1, max: 3 }),
  m: fc.integer({ min: 1, max: 6 }),
  k: fc.integer({ min: 0, max: 6 }),
  n: fc.integer({ min: 1, max: 6 }),
  seed: fc.nat(1000),
  dtype: fc.constantFrom<DType>('float32', 'float64'),
});

describe('matmul values', () => {
  it('2-D · 2-D is the naive triple loop', () => {
    fc.assert(
      fc.property(dimsArb, ({ m, k, n, seed, dtype }) => {
        const a = smallInts(m * k, seed);
        const b = smallInts(k * n, seed + 1);
        const out = tensor(a, { shape: [m, k], dtype }).matmul(tensor(b, { shape: [k, n], dtype }));
        expect(out.shape).toEqual([m, n]);
        expect(out.dtype).toBe(dtype);
        expect(out.toArray()).toEqual(matmulRef(a, b, m, k, n));
      }),
      { seed: 501, numRuns: 150 },
    );
  });

  it('1-D · 1-D is the dot product, a scalar', () => {
    const out = tensor([1, 2, 3]).matmul(tensor([4, -5, 6]));
    expect(out.shape).toEqual([]);
    expect(out.item()).toBe(1 * 4 - 2 * 5 + 3 * 6);
  });

  it('2-D · 1-D treats the vector as a column and drops that dim', () => {
    fc.assert(
      fc.property(dimsArb, ({ m, k, seed }) => {
        const a = smallInts(m * k, seed);
        const v = smallInts(k, seed + 1);
        const out = tensor(a, { shape: [m, k] }).matmul(tensor(v));
        expect(out.shape).toEqual([m]);
        expect(out.toArray()).toEqual(matmulRef(a, v, m, k, 1));
      }),
      { seed: 502, numRuns: 50 },
    );
  });

  it('1-D · 2-D treats the vector as a row and drops that dim', () => {
    fc.assert(
      fc.property(dimsArb, ({ k, n, seed }) => {
        const v = smallInts(k, seed);
        const b = smallInts(k * n, seed + 1);
        const out = tensor(v).matmul(tensor(b, { shape: [k, n] }));
        expect(out.shape).toEqual([n]);
        expect(out.toArray()).toEqual(matmulRef(v, b, 1, k, n));
      }),
      { seed: 503, numRuns: 50 },
    );
  });

  it('3-D · 3-D multiplies batch by batch, and a 2-D operand is broadcast over the batch', () => {
    fc.assert(
      fc.property(dimsArb, fc.constantFrom<[boolean, boolean]>([true, true], [true, false], [false, true]), ({ batch, m, k, n, seed }, [ab, bb]) => {
        const a = smallInts((ab ? batch : 1) * m * k, seed);
        const b = smallInts((bb ? batch : 1) * k * n, seed + 1);
        const ta = tensor(a, { shape: ab ? [batch, m, k] : [m, k] });
        const tb = tensor(b, { shape: bb ? [batch, k, n] : [k, n] });
        const out = ta.matmul(tb);
        expect(out.shape).toEqual([batch, m, n]);
        expect(out.toArray()).toEqual(batchedRef(a, b, batch, ab, bb, m, k, n));
      }),
      { seed: 504, numRuns: 100 },
    );
  });

  it('a batch of size 1 broadcasts against a larger batch', () => {
    const a = smallInts(2 * 3, 7);
    const b = smallInts(4 * 3 * 2, 8);
    const out = tensor(a, { shape: [1, 2, 3] }).matmul(tensor(b, { shape: [4, 3, 2] }));
    expect(out.shape).toEqual([4, 2, 2]);
    expect(out.toArray()).toEqual(batchedRef(a, b, 4, false, true, 2, 3, 2));
  });

  it('3-D · 1-D and 1-D · 3-D drop the vector dim', () => {
    const a = smallInts(2 * 3 * 4, 1);
    const v = smallInts(4, 2);
    expect(tensor(a, { shape: [2, 3, 4] }).matmul(tensor(v)).toArray()).toEqual(batchedRef(a, v, 2, true, false, 3, 4, 1));
    const w = smallInts(3, 3);
    const out = tensor(w).matmul(tensor(a, { shape: [2, 3, 4] }));
    expect(out.shape).toEqual([2, 4]);
    expect(out.toArray()).toEqual(batchedRef(w, a, 2, false, true, 1, 3, 4));
  });

  it('reads transposed and sliced operands by their logical layout', () => {
    fc.assert(
      fc.property(dimsArb, ({ m, k, n, seed }) => {
        const a = smallInts(m * k, seed);
        const b = smallInts(k * n, seed + 1);
        // Store a transposed, then transpose back: same logical [m,k], strided layout.
        const aT: number[] = [];
        for (let j = 0; j < k; j++) for (let i = 0; i < m; i++) aT.push(a[i * k + j]!);
        const ta = tensor(aT, { shape: [k, m] }).transpose();
        // b sits in the middle columns of a wider tensor.
        const wide: number[] = [];
        for (let p = 0; p < k; p++) wide.push(99, ...b.slice(p * n, (p + 1) * n), -99);
        const tb = tensor(wide, { shape: [k, n + 2] }).slice(1, 1, n + 1);
        expect(ta.matmul(tb).toArray()).toEqual(matmulRef(a, b, m, k, n));
      }),
      { seed: 505, numRuns: 100 },
    );
  });

  it('stays exact across the kernel\'s blocking boundaries (sizes above 64)', () => {
    const [m, k, n] = [37, 70, 33];
    const a = smallInts(m * k, 11);
    const b = smallInts(k * n, 12);
    const out = tensor(a, { shape: [m, k], dtype: 'float64' }).matmul(tensor(b, { shape: [k, n], dtype: 'float64' }));
    expect(out.toArray()).toEqual(matmulRef(a, b, m, k, n));
  });

  it('an inner size of 0 gives zeros', () => {
    expect(tensor([], { shape: [2, 0] }).matmul(tensor([], { shape: [0, 3] })).toArray()).toEqual([0, 0, 0, 0, 0, 0]);
  });

  it('float32 · float64 promotes to float64', () => {
    const out = tensor([[1, 2]], { dtype: 'float32' }).matmul(tensor([[1e-10], [1]], { dtype: 'float64' }));
    expect(out.dtype).toBe('float64');
    expect(out.item()).toBe(1e-10 + 2);
  });
});

describe('matmul shape errors', () => {
  it('names both shapes and the mismatched inner sizes', () => {
    expect(() => tensor(smallInts(12, 1), { shape: [3, 4] }).matmul(tensor(smallInts(10, 1), { shape: [5, 2] }))).toThrow(
      'matmul: shapes [3,4] and [5,2] do not align: 4 != 5',
    );
  });

  it('rejects batches that cannot broadcast', () => {
    expect(() => tensor(smallInts(12, 1), { shape: [2, 2, 3] }).matmul(tensor(smallInts(18, 1), { shape: [3, 3, 2] }))).toThrow(ShapeError);
  });

  it('rejects 0-D and 4-D operands', () => {
    expect(() => tensor(2).matmul(tensor([1]))).toThrow(ShapeError);
    expect(() => tensor(smallInts(16, 1), { shape: [1, 2, 2, 4] }).matmul(tensor(smallInts(4, 1), { shape: [4, 1] }))).toThrow(/1-D, 2-D and 3-D/);
  });
});
