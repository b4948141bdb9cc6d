/**
 * gather(comm, t, { dst }) gives dst every rank's t in rank order (copies,
 * shapes kept) and null to every other rank.
 */
import { expect, it } from 'vitest';
import fc from 'fast-check';
import { tensor, type DType, type Tensor } from '@dtlab/tensor';
import { gather } from '../src/index.ts';
import { runRanks } from './support/ranks.ts';
import { bitsOf, rankInput } from './support/reference.ts';
import { EDGE_CASES, runCaseArb } from './support/arbitraries.ts';

it('dst receives the tensors of ranks 0..N-1 in order, the others get null, for every dst', async () => {
  await fc.assert(
    fc.asyncProperty(runCaseArb, async ({ n, len, seed }) => {
      const dtype: DType = seed % 2 ? 'float32' : 'float64';
      const inputs = Array.from({ length: n }, (_, r) => rankInput(seed, r, len, dtype));
      for (let dst = 0; dst < n; dst++) {
        const { values } = await runRanks(n, async (comm) => {
          const t = tensor(inputs[comm.rank]!, { dtype });
          const got = await gather(comm, t, { dst });
          t.fill_(-7); // the gathered tensors are copies: later writes to t do not reach them
          return got;
        });
        values.forEach((got, r) => {
          if (r !== dst) expect(got, `rank ${r} is not dst ${dst}`).toBeNull();
        });
        const gathered = values[dst]!;
        expect(gathered).toHaveLength(n);
        gathered.forEach((t: Tensor, k) => {
          expect(t.dtype).toBe(dtype);
          expect(bitsOf(t.data()), `tensor ${k} at dst ${dst} of ${n}`).toEqual(bitsOf(tensor(inputs[k]!, { dtype }).data()));
        });
      }
    }),
    { seed: 1601, numRuns: 12, examples: EDGE_CASES },
  );
});

it('keeps each tensor shape and gathers to rank 0 by default', async () => {
  const { values } = await runRanks(3, async (comm) => gather(comm, tensor([[comm.rank, comm.rank + 0.5]])));
  expect(values[0]!.map((t) => t.toNested())).toEqual([[[0, 0.5]], [[1, 1.5]], [[2, 2.5]]]);
  expect(values.slice(1)).toEqual([null, null]);
});
