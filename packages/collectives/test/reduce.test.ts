/**
 * reduce(comm, t, { dst, op }) writes the reduction of every rank's t into
 * dst's t, in place; every other rank's t is left exactly as it was.
 */
import { expect, it } from 'vitest';
import fc from 'fast-check';
import { tensor, testing, type DType } from '@dtlab/tensor';
import { reduce } from '../src/index.ts';
import { runRanks } from './support/ranks.ts';
import { BUILTIN_OPS, allInputs, bitsOf, reduceReference, tolerance } from './support/reference.ts';
import { EDGE_CASES, runCaseArb } from './support/arbitraries.ts';

it.each(BUILTIN_OPS)('op %s: dst holds the reference reduction and the other ranks are untouched, for every dst', async (op) => {
  await fc.assert(
    fc.asyncProperty(runCaseArb, async ({ n, len, seed }) => {
      const dtype: DType = seed % 2 ? 'float32' : 'float64';
      const inputs = allInputs(seed, n, len, dtype, op);
      const expected = reduceReference(op, inputs);
      for (let dst = 0; dst < n; dst++) {
        const { values } = await runRanks(n, async (comm) => {
          const t = tensor(inputs[comm.rank]!, { dtype });
          expect(await reduce(comm, t, { dst, op })).toBe(t);
          return t;
        });
        values.forEach((t, r) => {
          if (r === dst) testing.assertClose(t, expected, { ...tolerance(dtype, op), label: `dst ${dst} of ${n}, ${len} ${dtype} elements` });
          else expect(bitsOf(t.data()), `rank ${r} (not dst ${dst}) is unchanged`).toEqual(bitsOf(tensor(inputs[r]!, { dtype }).data()));
        });
      }
    }),
    { seed: 1500 + BUILTIN_OPS.indexOf(op), numRuns: 12, examples: EDGE_CASES },
  );
});

it('reduces with sum into rank 0 by default', async () => {
  const { values } = await runRanks(4, async (comm) => reduce(comm, tensor([comm.rank, 1])));
  expect(values.map((t) => t.toArray())).toEqual([[6, 4], [1, 1], [2, 1], [3, 1]]);
});
