/**
 * allGather(comm, t) gives every rank every rank's t, in rank order:
 * stacked along dim 0 when all tensors have one shape, or concatenated
 * flat with the `counts` option (like MPI_Allgatherv) when sizes differ.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { tensor, type DType } from '@dtlab/tensor';
import { allGather } from '../src/index.ts';
import { runRanks } from './support/ranks.ts';
import { DTYPES, bitsOf, rankInput } from './support/reference.ts';
import { EDGE_CASES, MAX_WORLD, runCaseArb, seedArb } from './support/arbitraries.ts';

/** The concatenation of `parts`, as the reference result. */
function concat(parts: readonly Float64Array[]): number[] {
  return parts.flatMap((p) => Array.from(p));
}

describe('allGather of equal sizes', () => {
  it.each(DTYPES)('1-D %s tensors of any length: every rank gets all of them in rank order', async (dtype) => {
    await fc.assert(
      fc.asyncProperty(runCaseArb, async ({ n, len, seed }) => {
        const inputs = Array.from({ length: n }, (_, r) => rankInput(seed, r, len, dtype));
        const { values } = await runRanks(n, async (comm) => {
          const t = tensor(inputs[comm.rank]!, { dtype });
          const before = bitsOf(t.data());
          const out = await allGather(comm, t);
          expect(bitsOf(t.data()), 'the input is not modified').toEqual(before);
          return out;
        });
        for (const out of values) {
          expect(out.dtype).toBe(dtype);
          expect(out.shape).toEqual([n * len]);
          expect(out.toArray()).toEqual(concat(inputs));
        }
      }),
      { seed: dtype === 'float32' ? 1301 : 1302, numRuns: 20, examples: EDGE_CASES },
    );
  });

  it('2-D tensors [rows, cols] are stacked along dim 0 into [N*rows, cols]', async () => {
    const shapeArb = fc.record({ n: fc.integer({ min: 1, max: MAX_WORLD }), rows: fc.integer({ min: 0, max: 5 }), cols: fc.integer({ min: 0, max: 7 }), seed: seedArb });
    await fc.assert(
      fc.asyncProperty(shapeArb, async ({ n, rows, cols, seed }) => {
        const dtype: DType = seed % 2 ? 'float32' : 'float64';
        const inputs = Array.from({ length: n }, (_, r) => rankInput(seed, r, rows * cols, dtype));
        const { values } = await runRanks(n, async (comm) => allGather(comm, tensor(inputs[comm.rank]!, { dtype }).reshape(rows, cols)));
        const expected = Array.from({ length: n * rows }, (_, i) => Array.from(inputs[Math.floor(i / rows)]!.subarray((i % rows) * cols, (i % rows + 1) * cols)));
        for (const out of values) {
          expect(out.shape).toEqual([n * rows, cols]);
          expect(out.toNested()).toEqual(expected);
        }
      }),
      { seed: 1303, numRuns: 25, examples: [[{ n: 1, rows: 0, cols: 3, seed: 0 }], [{ n: 4, rows: 2, cols: 3, seed: 1 }], [{ n: 3, rows: 1, cols: 0, seed: 2 }]] },
    );
  });

  it('0-d tensors (scalars) gather into a vector of N elements', async () => {
    const { values } = await runRanks(5, async (comm) => allGather(comm, tensor(10 * comm.rank)));
    for (const out of values) expect(out.toNested()).toEqual([0, 10, 20, 30, 40]);
  });
});

describe('allGather of uneven sizes with counts', () => {
  it('rank r contributes counts[r] elements (zero included); every rank gets the flat concatenation', async () => {
    const countsArb = fc.integer({ min: 1, max: MAX_WORLD }).chain((n) => fc.record({ counts: fc.array(fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 60 })), { minLength: n, maxLength: n }), seed: seedArb }));
    await fc.assert(
      fc.asyncProperty(countsArb, async ({ counts, seed }) => {
        const n = counts.length;
        const dtype: DType = seed % 2 ? 'float32' : 'float64';
        const inputs = counts.map((c, r) => rankInput(seed, r, c, dtype));
        const { values } = await runRanks(n, async (comm) => allGather(comm, tensor(inputs[comm.rank]!, { dtype }), { counts }));
        for (const out of values) {
          expect(out.shape).toEqual([counts.reduce((a, b) => a + b, 0)]);
          expect(out.toArray()).toEqual(concat(inputs));
        }
      }),
      { seed: 1304, numRuns: 40, examples: [[{ counts: [0], seed: 0 }], [{ counts: [3, 0, 0, 5], seed: 1 }], [{ counts: [0, 0, 0], seed: 2 }], [{ counts: [1, 2, 3, 4, 5, 6, 7, 8], seed: 3 }]] },
    );
  });

  it('reads a multi-dimensional tensor flat', async () => {
    const counts = [6, 2];
    const { values } = await runRanks(2, async (comm) => allGather(comm, comm.rank === 0 ? tensor([[1, 2, 3], [4, 5, 6]]) : tensor([7, 8]), { counts }));
    for (const out of values) expect(out.toNested()).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });
});
