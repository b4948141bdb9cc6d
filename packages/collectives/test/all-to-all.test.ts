/**
 * allToAll(comm, inputs): inputs[i] of rank r goes to rank i, so rank r
 * resolves to [rank 0's inputs[r], ..., rank N-1's inputs[r]]. Tensors of
 * one exchange may differ in size.
 */
import { expect, it } from 'vitest';
import fc from 'fast-check';
import { deriveSeed, tensor, type DType } from '@dtlab/tensor';
import { allToAll } from '../src/index.ts';
import { runRanks } from './support/ranks.ts';
import { rankInput } from './support/reference.ts';
import { EDGE_CASES, runCaseArb } from './support/arbitraries.ts';

it('rank r receives inputs[r] of every rank, in rank order (any sizes, including empty)', async () => {
  await fc.assert(
    fc.asyncProperty(runCaseArb, async ({ n, len, seed }) => {
      const dtype: DType = seed % 2 ? 'float32' : 'float64';
      // The piece rank `from` sends to rank `to`: its length varies with the pair.
      const piece = (from: number, to: number): Float64Array => rankInput(deriveSeed(seed, to), from, (len + 3 * from + to) % (len + 1), dtype);
      const { values } = await runRanks(n, async (comm) => {
        const inputs = Array.from({ length: n }, (_, to) => tensor(piece(comm.rank, to), { dtype }));
        const out = await allToAll(comm, inputs);
        inputs.forEach((t) => t.fill_(-7)); // what a rank got is a copy
        return out;
      });
      values.forEach((out, r) => {
        expect(out).toHaveLength(n);
        out.forEach((t, from) => expect(t.toArray(), `rank ${r}: the piece from rank ${from}`).toEqual(Array.from(piece(from, r))));
      });
    }),
    { seed: 1801, numRuns: 25, examples: EDGE_CASES },
  );
});
