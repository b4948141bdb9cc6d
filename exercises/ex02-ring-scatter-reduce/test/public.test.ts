/**
 * Public tests of exercise 2. They run your ringScatterReduce on several
 * ranks in one thread (the inline backend, so breakpoints and stack traces
 * work), compare every rank's chunk with the sum computed directly, and read
 * the fabric's trace to see which messages went where.
 *
 *   pnpm test ex02        run them
 *   pnpm test:ui ex02     open them in the vitest UI
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { launch, type Comm, type LaunchResult } from '@dtlab/runtime';
import { chunkBounds, tensor, testing, type Tensor } from '@dtlab/tensor';
import { ringScatterReduce } from '../src/ring-scatter-reduce.ts';

/**
 * Rank r holds (i + 1) · 10^r at index i. In a sum over ranks each decimal
 * digit then counts one rank's contribution: index 0 of the sum over four
 * ranks is 1111, and 1011 would mean that rank 2's values never arrived.
 */
function inputOf(rank: number, n: number): Tensor {
  return tensor(Array.from({ length: n }, (_, i) => (i + 1) * 10 ** rank), { shape: [n] });
}

/** The sum over `worldSize` ranks of `inputOf`, computed directly. */
function expectedSum(worldSize: number, n: number): number[] {
  const ones = (10 ** worldSize - 1) / 9; // 1, 11, 111, ...
  return Array.from({ length: n }, (_, i) => (i + 1) * ones);
}

/** Runs ringScatterReduce on `worldSize` ranks with `n` elements each; returns every rank's chunk and the launch (with its trace). */
async function runScatterReduce(worldSize: number, n: number): Promise<{ chunks: Tensor[]; result: LaunchResult }> {
  const result = await launch({
    worldSize,
    program: async (comm: Comm) => ringScatterReduce(comm, inputOf(comm.rank, n)),
    timeoutMs: 10_000,
  });
  for (const r of result.ranks) if (r.status !== 'ok') throw r.error ?? new Error(`rank ${r.rank}: ${r.status}`);
  return { chunks: result.ranks.map((r) => r.value as Tensor), result };
}

/** Expects rank r's result to be chunk r of the sum, printing the first wrong value (rank, index, expected, actual). */
function expectChunksOfSum(chunks: Tensor[], worldSize: number, n: number): void {
  const sum = expectedSum(worldSize, n);
  chunkBounds(n, worldSize).forEach(({ start, end }, rank) => {
    const where = end - start > 1 ? `elements ${start} to ${end - 1} of ${n}` : end > start ? `element ${start} of ${n}` : `empty, of ${n} elements`;
    const label = `rank ${rank}, chunk ${rank} (${where}) with ${worldSize} ranks`;
    expect(chunks[rank]!.shape, `${label}: shape`).toEqual([end - start]);
    testing.assertClose(chunks[rank]!, sum.slice(start, end), { label, rtol: 1e-6, atol: 1e-6 });
  });
}

describe('ringScatterReduce', () => {
  for (const worldSize of [1, 2, 3, 4]) {
    it(`leaves chunk r of the sum on rank r, with ${worldSize} rank(s) and 12 elements`, async () => {
      const { chunks } = await runScatterReduce(worldSize, 12);
      expectChunksOfSum(chunks, worldSize, 12);
    });
  }

  it('splits lengths that N does not divide with chunkBounds: 10 elements on 3 ranks, 3 on 4 (one chunk empty)', async () => {
    for (const [worldSize, n] of [[3, 10], [4, 3]] as const) {
      const { chunks } = await runScatterReduce(worldSize, n);
      expectChunksOfSum(chunks, worldSize, n);
    }
  });

  it('sends only to the next rank: N-1 messages per rank, one chunk each (4 ranks, 12 elements)', async () => {
    const { result } = await runScatterReduce(4, 12);
    for (const e of result.trace) expect(e.dst, `message ${e.seq} from rank ${e.src} goes to`).toBe((e.src + 1) % 4);
    expect(result.stats.map((s) => s.messagesSent), 'messages sent by each rank').toEqual([3, 3, 3, 3]);
    for (const e of result.trace) expect(e.count, `elements in message ${e.seq} from rank ${e.src}`).toBe(3);
  });

  it('holds for any 1 to 6 ranks and 0 to 40 elements', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 6 }), fc.integer({ min: 0, max: 40 }), async (worldSize, n) => {
        const { chunks } = await runScatterReduce(worldSize, n);
        expectChunksOfSum(chunks, worldSize, n);
      }),
      { seed: 2, numRuns: 40 },
    );
  });
});
