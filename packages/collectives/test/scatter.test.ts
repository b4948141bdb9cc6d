/**
 * scatter(comm, chunks, { src }) sends chunks[r] of src to rank r: every
 * rank resolves to a copy of its own chunk (shape and dtype kept, sizes may
 * differ); the other ranks pass null.
 */
import { expect, it } from 'vitest';
import fc from 'fast-check';
import { chunkBounds, tensor, type DType } from '@dtlab/tensor';
import { scatter } from '../src/index.ts';
import { runRanks } from './support/ranks.ts';
import { rankInput } from './support/reference.ts';
import { EDGE_CASES, runCaseArb } from './support/arbitraries.ts';

it('rank r gets chunk r of the src tensor split under chunkBounds, for every src', async () => {
  await fc.assert(
    fc.asyncProperty(runCaseArb, async ({ n, len, seed }) => {
      const dtype: DType = seed % 2 ? 'float32' : 'float64';
      const whole = rankInput(seed, 0, len, dtype);
      const pieces = chunkBounds(len, n).map((b) => whole.slice(b.start, b.end));
      for (let src = 0; src < n; src++) {
        const { values } = await runRanks(n, async (comm) => {
          const chunks = comm.rank === src ? pieces.map((p) => tensor(p, { dtype })) : null;
          const mine = await scatter(comm, chunks, { src });
          chunks?.forEach((c) => c.fill_(-7)); // what a rank got is a copy
          return mine;
        });
        values.forEach((t, r) => {
          expect(t.dtype).toBe(dtype);
          expect(t.toArray(), `rank ${r} of ${n}, src ${src}`).toEqual(Array.from(pieces[r]!));
        });
      }
    }),
    { seed: 1701, numRuns: 12, examples: EDGE_CASES },
  );
});

it('keeps each chunk shape and scatters from rank 0 by default', async () => {
  const { values } = await runRanks(2, async (comm) => scatter(comm, comm.rank === 0 ? [tensor([[1, 2], [3, 4]]), tensor([[5], [6], [7]])] : null));
  expect(values.map((t) => t.toNested())).toEqual([[[1, 2], [3, 4]], [[5], [6], [7]]]);
});
