/**
 * allReduce(comm, t, { op, algorithm }) leaves on every rank, in place, the
 * elementwise reduction of every rank's t: the same values a single process
 * computes, and the very same bits on every rank.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { tensor, testing, type Tensor } from '@dtlab/tensor';
import { allReduce } from '../src/index.ts';
import { runRanks } from './support/ranks.ts';
import { ALGORITHMS, BUILTIN_OPS, DTYPES, allInputs, bitsOf, reduceReference, tolerance } from './support/reference.ts';
import { EDGE_CASES, runCaseArb } from './support/arbitraries.ts';

const CASES = BUILTIN_OPS.flatMap((op) => DTYPES.map((dtype) => [op, dtype] as const));

describe.each(ALGORITHMS)('allReduce with the %s algorithm', (algorithm) => {
  it.each(CASES)('op %s on %s: every rank holds the reference reduction, bit-for-bit the same on all ranks', async (op, dtype) => {
    await fc.assert(
      fc.asyncProperty(runCaseArb, async ({ n, len, seed }) => {
        const inputs = allInputs(seed, n, len, dtype, op);
        const { values } = await runRanks(n, async (comm) => {
          const t = tensor(inputs[comm.rank]!, { dtype });
          const returned = await allReduce(comm, t, { op, algorithm });
          expect(returned).toBe(t); // in place, as torch.distributed.all_reduce
          return t;
        });
        const expected = reduceReference(op, inputs);
        values.forEach((t: Tensor, r) => {
          expect(t.dtype).toBe(dtype);
          expect(t.shape).toEqual([len]);
          testing.assertClose(t, expected, { ...tolerance(dtype, op), label: `rank ${r} of ${n}, ${len} elements` });
        });
        for (let r = 1; r < n; r++) expect(bitsOf(values[r]!.data()), `rank ${r} vs rank 0`).toEqual(bitsOf(values[0]!.data()));
      }),
      { seed: 1100 + CASES.findIndex(([o, d]) => o === op && d === dtype), numRuns: 20, examples: EDGE_CASES },
    );
  });

  it('keeps the shape of a multi-dimensional tensor and reduces it element by element', async () => {
    const n = 3;
    const { values } = await runRanks(n, async (comm) => {
      const t = tensor([[comm.rank, 1], [2, 10 * comm.rank], [-comm.rank, 0.5]], { dtype: 'float64' });
      return allReduce(comm, t, { algorithm });
    });
    for (const t of values) expect(t.toNested()).toEqual([[0 + 1 + 2, 3], [6, 30], [-3, 1.5]]);
  });
});

it('uses sum and the ring algorithm when no options are given', async () => {
  const { values, result } = await runRanks(4, async (comm) => allReduce(comm, tensor([comm.rank + 1, 1, 2, 3])));
  for (const t of values) expect(t.toArray()).toEqual([10, 4, 8, 12]);
  for (const e of result.trace) expect(e.dst).toBe((e.src + 1) % 4);
});
