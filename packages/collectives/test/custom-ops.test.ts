/**
 * A custom reduce op is applied in rank order: with an associative but
 * non-commutative op (matrix product, item by item), every collective that
 * reduces gives exactly x0 · x1 · ... · x(N-1), as MPI's allred3 test checks.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Generator, chunkBounds, deriveSeed, tensor, type DType, type TypedArray } from '@dtlab/tensor';
import { launch, type Comm } from '@dtlab/runtime';
import { allReduce, reduce, reduceScatter, type CustomReduceOp } from '../src/index.ts';
import { runRanks } from './support/ranks.ts';
import { MAX_WORLD, seedArb } from './support/arbitraries.ts';

/** `a · b` for k×k matrices stored row-major. */
function matmul(a: ArrayLike<number>, b: ArrayLike<number>, k: number): number[] {
  const out = new Array<number>(k * k).fill(0);
  for (let i = 0; i < k; i++) for (let j = 0; j < k; j++) for (let m = 0; m < k; m++) out[i * k + j]! += a[i * k + m]! * b[m * k + j]!;
  return out;
}

/** The product of k×k matrices as a reduce op: `lower · higher`, item by item. */
function matrixProduct(k: number): CustomReduceOp {
  const size = k * k;
  return {
    name: `matmul${k}x${k}`,
    itemSize: size,
    combine(lower: TypedArray, higher: TypedArray) {
      const out = new Float64Array(lower.length);
      for (let at = 0; at < lower.length; at += size) out.set(matmul(lower.subarray(at, at + size), higher.subarray(at, at + size), k), at);
      return out;
    },
  };
}

/**
 * Rank `rank`'s `items` matrices. 3×3: random permutation matrices (a
 * non-abelian group, so products stay exact 0/1 matrices). 2×2: integer
 * entries in [-1, 2]; a product of 8 has entries below 2^16, exact in float32.
 */
function rankMatrices(seed: number, rank: number, items: number, k: number): Float64Array {
  const gen = new Generator(deriveSeed(seed, rank, k));
  const out = new Float64Array(items * k * k);
  for (let item = 0; item < items; item++) {
    const at = item * k * k;
    if (k === 3) {
      const perm = [0, 1, 2];
      for (let i = 2; i > 0; i--) {
        const j = Math.floor(gen.uniform() * (i + 1));
        [perm[i], perm[j]] = [perm[j]!, perm[i]!];
      }
      perm.forEach((p, row) => (out[at + row * 3 + p] = 1));
    } else {
      for (let e = 0; e < k * k; e++) out[at + e] = Math.floor(gen.uniform() * 4) - 1;
    }
  }
  return out;
}

/** The rank-ordered product x0 · x1 · ... · x(N-1), item by item, computed here. */
function orderedProduct(inputs: readonly Float64Array[], k: number): number[] {
  const size = k * k;
  const out: number[] = [];
  for (let at = 0; at < inputs[0]!.length; at += size) {
    let acc = Array.from(inputs[0]!.subarray(at, at + size));
    for (const x of inputs.slice(1)) acc = matmul(acc, x.subarray(at, at + size), k);
    out.push(...acc);
  }
  return out;
}

type Target = { name: string; run: (comm: Comm, t: ReturnType<typeof tensor>, op: CustomReduceOp) => Promise<number[] | null> };

const ALL_REDUCE_TARGETS: Target[] = (['ring', 'naive', 'tree'] as const).map((algorithm) => ({
  name: `allReduce (${algorithm})`,
  run: async (comm, t, op) => (await allReduce(comm, t, { op, algorithm })).toArray(),
}));

const caseArb = fc.record({
  n: fc.integer({ min: 1, max: MAX_WORLD }),
  items: fc.oneof(fc.constantFrom(0, 1, 2, 3, 7, 13), fc.integer({ min: 0, max: 30 })),
  k: fc.constantFrom(2, 3),
  dtype: fc.constantFrom<DType>('float32', 'float64'),
  seed: seedArb,
});
const EXAMPLES = [[{ n: 8, items: 3, k: 3, dtype: 'float64' as DType, seed: 1 }], [{ n: 5, items: 13, k: 2, dtype: 'float32' as DType, seed: 2 }], [{ n: 1, items: 2, k: 3, dtype: 'float32' as DType, seed: 3 }], [{ n: 6, items: 0, k: 2, dtype: 'float64' as DType, seed: 4 }]];

describe('a non-commutative custom op comes out in rank order', () => {
  it.each(ALL_REDUCE_TARGETS.map((t) => [t.name, t] as const))('%s: every rank holds x0 · x1 · ... · x(N-1)', async (_name, target) => {
    await fc.assert(
      fc.asyncProperty(caseArb, async ({ n, items, k, dtype, seed }) => {
        const inputs = Array.from({ length: n }, (_, r) => rankMatrices(seed, r, items, k));
        const { values } = await runRanks(n, async (comm) => target.run(comm, tensor(inputs[comm.rank]!, { dtype }), matrixProduct(k)));
        const expected = orderedProduct(inputs, k);
        values.forEach((v, r) => expect(v, `rank ${r} of ${n}`).toEqual(expected));
      }),
      { seed: 1900 + ALL_REDUCE_TARGETS.indexOf(target), numRuns: 25, examples: EXAMPLES },
    );
  });

  it('reduceScatter: rank r holds chunk r (split between whole matrices) of the ordered product', async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, async ({ n, items, k, dtype, seed }) => {
        const inputs = Array.from({ length: n }, (_, r) => rankMatrices(seed, r, items, k));
        const { values } = await runRanks(n, async (comm) => (await reduceScatter(comm, tensor(inputs[comm.rank]!, { dtype }), { op: matrixProduct(k) })).toArray());
        const expected = orderedProduct(inputs, k);
        const bounds = chunkBounds(items, n);
        values.forEach((v, r) => expect(v, `rank ${r} of ${n}`).toEqual(expected.slice(bounds[r]!.start * k * k, bounds[r]!.end * k * k)));
      }),
      { seed: 1910, numRuns: 40, examples: EXAMPLES },
    );
  });

  it('reduce: dst holds the ordered product, for dst 0 and every other dst', async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, async ({ n, items, k, dtype, seed }) => {
        const inputs = Array.from({ length: n }, (_, r) => rankMatrices(seed, r, items, k));
        const expected = orderedProduct(inputs, k);
        for (let dst = 0; dst < n; dst++) {
          const { values } = await runRanks(n, async (comm) => (await reduce(comm, tensor(inputs[comm.rank]!, { dtype }), { dst, op: matrixProduct(k) })).toArray());
          expect(values[dst], `dst ${dst} of ${n}`).toEqual(expected);
          values.forEach((v, r) => r !== dst && expect(v, `rank ${r} is not dst ${dst}`).toEqual(Array.from(inputs[r]!)));
        }
      }),
      { seed: 1911, numRuns: 20, examples: EXAMPLES },
    );
  });

  it('the order is observable: for these matrices the reversed product differs', async () => {
    // [[1,1],[0,1]] · [[1,0],[1,1]] = [[2,1],[1,1]], the other way round [[1,1],[1,2]].
    const x = [new Float64Array([1, 1, 0, 1]), new Float64Array([1, 0, 1, 1])];
    const { values } = await runRanks(2, async (comm) => (await allReduce(comm, tensor(x[comm.rank]!), { op: matrixProduct(2) })).toArray());
    expect(values).toEqual([
      [2, 1, 1, 1],
      [2, 1, 1, 1],
    ]);
  });
});

describe('a custom op whose itemSize does not divide the length', () => {
  const calls: [string, (comm: Comm, t: ReturnType<typeof tensor>, op: CustomReduceOp) => Promise<unknown>][] = [
    ['allReduce (ring)', (comm, t, op) => allReduce(comm, t, { op, algorithm: 'ring' })],
    ['allReduce (naive)', (comm, t, op) => allReduce(comm, t, { op, algorithm: 'naive' })],
    ['allReduce (tree)', (comm, t, op) => allReduce(comm, t, { op, algorithm: 'tree' })],
    ['reduceScatter', (comm, t, op) => reduceScatter(comm, t, { op })],
    ['reduce', (comm, t, op) => reduce(comm, t, { op, dst: comm.worldSize - 1 })],
  ];
  it.each(calls)('%s fails on every rank with a RangeError naming the rank, the op, its itemSize and the length', async (_name, call) => {
    for (const n of [1, 3]) {
      const r = await launch({ worldSize: n, program: (comm: Comm) => call(comm, tensor(new Float64Array(10)), matrixProduct(2)) });
      expect(r.deadlock).toBeUndefined();
      for (const o of r.ranks) {
        expect(o.status).toBe('error');
        expect(o.error).toBeInstanceOf(RangeError);
        expect(o.error!.message).toMatch(new RegExp(`rank ${o.rank}\\b`));
        expect(o.error!.message).toMatch(/matmul2x2/);
        expect(o.error!.message).toMatch(/\b4\b/);
        expect(o.error!.message).toMatch(/\b10\b/);
      }
    }
  });
});
