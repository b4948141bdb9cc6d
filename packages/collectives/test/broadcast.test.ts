/**
 * broadcast(comm, t, { src }) overwrites t on every rank with src's t, in
 * place, bit for bit; src's own t is left as it was.
 */
import { expect, it } from 'vitest';
import fc from 'fast-check';
import { tensor, type DType } from '@dtlab/tensor';
import { broadcast } from '../src/index.ts';
import { runRanks } from './support/ranks.ts';
import { DTYPES, bitsOf, rankInput } from './support/reference.ts';
import { EDGE_CASES, runCaseArb } from './support/arbitraries.ts';

it.each(DTYPES)('every rank ends with exactly the %s tensor of src, for every src', async (dtype: DType) => {
  await fc.assert(
    fc.asyncProperty(runCaseArb, async ({ n, len, seed }) => {
      const inputs = Array.from({ length: n }, (_, r) => rankInput(seed, r, len, dtype));
      for (let src = 0; src < n; src++) {
        const { values } = await runRanks(n, async (comm) => {
          const t = tensor(inputs[comm.rank]!, { dtype });
          expect(await broadcast(comm, t, { src })).toBe(t);
          return t;
        });
        const expected = bitsOf(tensor(inputs[src]!, { dtype }).data());
        values.forEach((t, r) => expect(bitsOf(t.data()), `rank ${r} of ${n}, src ${src}`).toEqual(expected));
      }
    }),
    { seed: dtype === 'float32' ? 1401 : 1402, numRuns: 12, examples: EDGE_CASES },
  );
});

it('broadcasts from rank 0 by default and keeps the shape', async () => {
  const { values } = await runRanks(3, async (comm) => broadcast(comm, tensor([[comm.rank, 1], [2, comm.rank]])));
  for (const t of values) expect(t.toNested()).toEqual([[0, 1], [2, 0]]);
});
