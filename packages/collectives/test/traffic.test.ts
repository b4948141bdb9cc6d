/**
 * What each algorithm puts on the wire, read from the fabric's trace and
 * per-rank stats. With S the bytes of one rank's buffer and N ranks:
 * ring all-reduce sends 2(N-1)/N·S per rank, only to the next rank;
 * reduce-scatter and all-gather (N-1)/N·S; naive all-reduce (N-1)·S.
 *
 * When N does not divide the element count, a ring rank skips one chunk per
 * phase (its own, or its successor's), and a chunk is within one element of
 * S/N. So each phase is within one element of (N-1)/N·S, and the two ring
 * phases of all-reduce within two elements (strictly less: both bounds are
 * checked with `<`). Summed over all ranks, every chunk is skipped exactly
 * once per phase, so the totals are exact: (N-1)·S per phase.
 */
import { expect, it } from 'vitest';
import fc from 'fast-check';
import { bytesPerElement, chunkBounds, tensor, type DType } from '@dtlab/tensor';
import type { LaunchResult } from '@dtlab/runtime';
import { allGather, allReduce, reduceScatter } from '../src/index.ts';
import { runRanks } from './support/ranks.ts';
import { EDGE_CASES, runCaseArb } from './support/arbitraries.ts';

const dtypeOf = (seed: number): DType => (seed % 2 ? 'float32' : 'float64');

/** Bytes each rank sent, from the trace; checked against the fabric's own per-rank counters. */
function bytesSentByRank(r: LaunchResult, n: number): number[] {
  const sent = new Array<number>(n).fill(0);
  for (const e of r.trace) sent[e.src]! += e.bytes;
  expect(r.stats.map((s) => s.bytesSent)).toEqual(sent);
  return sent;
}

/** Expects `sent` per rank to be `ideal` when N divides len, and within `slack` elements (exclusive) otherwise. */
function expectPerRank(sent: number[], ideal: number, exact: boolean, slackBytes: number): void {
  sent.forEach((b, r) => {
    if (exact) expect(b, `rank ${r}`).toBeCloseTo(ideal, 9);
    else expect(Math.abs(b - ideal), `rank ${r} sent ${b} bytes, ideal ${ideal}`).toBeLessThan(slackBytes);
  });
}

it('ring allReduce: each rank sends 2(N-1)/N·S (within two elements if N does not divide the length), only to rank+1', async () => {
  await fc.assert(
    fc.asyncProperty(runCaseArb, async ({ n, len, seed }) => {
      const dtype = dtypeOf(seed);
      const e = bytesPerElement(dtype);
      const S = len * e;
      const { result } = await runRanks(n, async (comm) => allReduce(comm, tensor(new Float64Array(len), { dtype }), { algorithm: 'ring' }));
      for (const ev of result.trace) expect(ev.dst, `message ${ev.seq} from rank ${ev.src}`).toBe((ev.src + 1) % n);
      const sent = bytesSentByRank(result, n);
      expectPerRank(sent, (2 * (n - 1) * S) / n, len % n === 0, 2 * e);
      expect(sent.reduce((a, b) => a + b, 0)).toBe(2 * (n - 1) * S);
      // Each rank sends N-1 chunks per phase; a length-0 chunk is still a (0-byte) message.
      expect(result.stats.map((s) => s.messagesSent)).toEqual(new Array(n).fill(2 * (n - 1)));
    }),
    { seed: 2001, numRuns: 40, examples: EDGE_CASES },
  );
});

it('reduceScatter: each rank sends (N-1)/N·S (within one element), S - |chunk r| exactly', async () => {
  await fc.assert(
    fc.asyncProperty(runCaseArb, async ({ n, len, seed }) => {
      const dtype = dtypeOf(seed);
      const e = bytesPerElement(dtype);
      const { result } = await runRanks(n, async (comm) => reduceScatter(comm, tensor(new Float64Array(len), { dtype })));
      for (const ev of result.trace) expect(ev.dst).toBe((ev.src + 1) % n);
      const sent = bytesSentByRank(result, n);
      expectPerRank(sent, ((n - 1) * len * e) / n, len % n === 0, e);
      // A rank never sends its own chunk: it is where the reduction ends.
      const bounds = chunkBounds(len, n);
      expect(sent).toEqual(bounds.map((b) => (len - (b.end - b.start)) * e));
    }),
    { seed: 2002, numRuns: 40, examples: EDGE_CASES },
  );
});

it('allGather: each rank sends (N-1)/N·S of the gathered S (within one element), everything but its successor', async () => {
  await fc.assert(
    fc.asyncProperty(runCaseArb, async ({ n, len, seed }) => {
      const dtype = dtypeOf(seed);
      const e = bytesPerElement(dtype);
      // Rank r holds chunk r of a len-element buffer, so the gathered S is len elements.
      const counts = chunkBounds(len, n).map((b) => b.end - b.start);
      const { result } = await runRanks(n, async (comm) => allGather(comm, tensor(new Float64Array(counts[comm.rank]!), { dtype }), { counts }));
      for (const ev of result.trace) expect(ev.dst).toBe((ev.src + 1) % n);
      const sent = bytesSentByRank(result, n);
      expectPerRank(sent, ((n - 1) * len * e) / n, len % n === 0, e);
      // A rank never sends its successor's chunk: that chunk starts at the successor.
      expect(sent).toEqual(counts.map((_, r) => (len - counts[(r + 1) % n]!) * e));
    }),
    { seed: 2003, numRuns: 40, examples: EDGE_CASES },
  );
});

it('naive allReduce: each rank sends its whole buffer to each of the N-1 others: (N-1)·S', async () => {
  await fc.assert(
    fc.asyncProperty(runCaseArb, async ({ n, len, seed }) => {
      const dtype = dtypeOf(seed);
      const S = len * bytesPerElement(dtype);
      const { result } = await runRanks(n, async (comm) => allReduce(comm, tensor(new Float64Array(len), { dtype }), { algorithm: 'naive' }));
      expect(bytesSentByRank(result, n)).toEqual(new Array(n).fill((n - 1) * S));
      for (let src = 0; src < n; src++) {
        const out = result.trace.filter((ev) => ev.src === src);
        expect(out.map((ev) => ev.dst).sort()).toEqual([...Array(n).keys()].filter((d) => d !== src));
        for (const ev of out) expect(ev.bytes).toBe(S);
      }
    }),
    { seed: 2004, numRuns: 30, examples: EDGE_CASES },
  );
});
