/**
 * reduceScatter(comm, t, { op }) gives rank r chunk r (under chunkBounds) of
 * the elementwise reduction of every rank's t, and leaves t unchanged.
 */
import { expect, it } from 'vitest';
import fc from 'fast-check';
import { tensor, testing } from '@dtlab/tensor';
import { reduceScatter } from '../src/index.ts';
import { runRanks } from './support/ranks.ts';
import { BUILTIN_OPS, DTYPES, allInputs, bitsOf, chunkOf, reduceReference, tolerance } from './support/reference.ts';
import { EDGE_CASES, runCaseArb } from './support/arbitraries.ts';

const CASES = BUILTIN_OPS.flatMap((op) => DTYPES.map((dtype) => [op, dtype] as const));

it.each(CASES)('op %s on %s: rank r gets chunk r of the reference reduction', async (op, dtype) => {
  await fc.assert(
    fc.asyncProperty(runCaseArb, async ({ n, len, seed }) => {
      const inputs = allInputs(seed, n, len, dtype, op);
      const { values } = await runRanks(n, async (comm) => {
        const t = tensor(inputs[comm.rank]!, { dtype });
        const before = bitsOf(t.data());
        const mine = await reduceScatter(comm, t, { op });
        expect(bitsOf(t.data()), 'the input is not modified').toEqual(before);
        return mine;
      });
      const expected = reduceReference(op, inputs);
      values.forEach((mine, r) => {
        expect(mine.dtype).toBe(dtype);
        testing.assertClose(mine, chunkOf(expected, n, r), { ...tolerance(dtype, op), label: `rank ${r} of ${n}, ${len} elements` });
        expect(mine.shape).toEqual([chunkOf(expected, n, r).length]);
      });
    }),
    { seed: 1200 + CASES.findIndex(([o, d]) => o === op && d === dtype), numRuns: 20, examples: EDGE_CASES },
  );
});

it('reads a multi-dimensional tensor flat: 2 ranks, shape [2, 3], chunks of 3', async () => {
  const { values } = await runRanks(2, async (comm) => reduceScatter(comm, tensor([[1, 2, 3], [4, 5, 6]]).mul(comm.rank + 1)));
  expect(values.map((t) => t.toArray())).toEqual([
    [3, 6, 9],
    [12, 15, 18],
  ]);
});
