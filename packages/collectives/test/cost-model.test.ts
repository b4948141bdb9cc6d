/**
 * estimateTime(op, algorithm, S, N, cost) is the closed form of what the
 * runtime's virtual clock measures for a collective under the alpha-beta
 * model: equal when N divides the buffer into equal chunks (and, for the
 * binomial trees, N is a power of two), an upper bound otherwise.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { bytesPerElement, chunkBounds, tensor, zeros, type DType, type Tensor } from '@dtlab/tensor';
import type { Comm, CostModel } from '@dtlab/runtime';
import { allGather, allReduce, allToAll, barrier, broadcast, estimateTime, gather, reduce, reduceScatter, scatter, type CostedOp } from '../src/index.ts';
import { runRanks, virtualTime } from './support/ranks.ts';
import { EDGE_CASES, runCaseArb } from './support/arbitraries.ts';

/** A network where latency and bandwidth terms are both visible: 7 µs per message, 3 bytes per µs. */
const COST: CostModel = { alphaUs: 7, bytesPerUs: 3 };

const isPowerOfTwo = (n: number): boolean => (n & (n - 1)) === 0;
const dtypeOf = (seed: number): DType => (seed % 2 ? 'float32' : 'float64');

/** Rank `rank`'s piece of a `len`-element buffer split under chunkBounds. */
const pieceOf = (len: number, n: number, rank: number, dtype: DType): Tensor => {
  const b = chunkBounds(len, n)[rank]!;
  return zeros([b.end - b.start], { dtype });
};

interface Case {
  op: CostedOp;
  algorithm: string;
  /** Runs the collective on one rank, on a problem of `len` elements (see `elements`); `root` for rooted ops. */
  run: (comm: Comm, len: number, dtype: DType, root: number) => Promise<unknown>;
  /** The S of the formula, in elements: the buffer the cost model's table names for this op. */
  elements: (len: number, n: number) => number;
  /** When the formula is exact rather than an upper bound. */
  exact: (len: number, n: number) => boolean;
}

const CASES: Case[] = [
  { op: 'allReduce', algorithm: 'ring', run: (c, len, d) => allReduce(c, zeros([len], { dtype: d }), { algorithm: 'ring' }), elements: (len) => len, exact: (len, n) => len % n === 0 },
  { op: 'allReduce', algorithm: 'tree', run: (c, len, d) => allReduce(c, zeros([len], { dtype: d }), { algorithm: 'tree' }), elements: (len) => len, exact: (_, n) => isPowerOfTwo(n) },
  { op: 'allReduce', algorithm: 'naive', run: (c, len, d) => allReduce(c, zeros([len], { dtype: d }), { algorithm: 'naive' }), elements: (len) => len, exact: () => true },
  { op: 'reduceScatter', algorithm: 'ring', run: (c, len, d) => reduceScatter(c, zeros([len], { dtype: d })), elements: (len) => len, exact: (len, n) => len % n === 0 },
  // allGather's S is the gathered output: rank r holds chunk r of it.
  { op: 'allGather', algorithm: 'ring', run: (c, len, d) => allGather(c, pieceOf(len, c.worldSize, c.rank, d), { counts: chunkBounds(len, c.worldSize).map((b) => b.end - b.start) }), elements: (len) => len, exact: (len, n) => len % n === 0 },
  { op: 'broadcast', algorithm: 'tree', run: (c, len, d, root) => broadcast(c, zeros([len], { dtype: d }), { src: root }), elements: (len) => len, exact: (_, n) => isPowerOfTwo(n) },
  { op: 'reduce', algorithm: 'tree', run: (c, len, d, root) => reduce(c, zeros([len], { dtype: d }), { dst: root }), elements: (len) => len, exact: (_, n) => isPowerOfTwo(n) },
  // gather needs one shape on every rank: each rank sends len elements, so S = N·len.
  { op: 'gather', algorithm: 'direct', run: (c, len, d, root) => gather(c, zeros([len], { dtype: d }), { dst: root }), elements: (len, n) => n * len, exact: () => true },
  // scatter's S is the root's whole input, chunk r going to rank r.
  { op: 'scatter', algorithm: 'direct', run: (c, len, d, root) => scatter(c, c.rank === root ? Array.from({ length: c.worldSize }, (_, r) => pieceOf(len, c.worldSize, r, d)) : null, { src: root }), elements: (len) => len, exact: (len, n) => len % n === 0 },
  // allToAll's S is each rank's input: N pieces of chunkBounds(len, N).
  { op: 'allToAll', algorithm: 'pairwise', run: (c, len, d) => allToAll(c, Array.from({ length: c.worldSize }, (_, r) => pieceOf(len, c.worldSize, r, d))), elements: (len) => len, exact: (len, n) => len % n === 0 },
  { op: 'barrier', algorithm: '-', run: (c) => barrier(c), elements: () => 0, exact: () => true },
];

describe.each(CASES.map((c) => [`${c.op} (${c.algorithm})`, c] as const))('%s', (_name, { op, algorithm, run, elements, exact }) => {
  it('takes exactly estimateTime when the split is even, and at most estimateTime otherwise', async () => {
    await fc.assert(
      fc.asyncProperty(runCaseArb, async ({ n, len, seed }) => {
        const dtype = dtypeOf(seed);
        const e = bytesPerElement(dtype);
        const root = seed % n;
        const { result } = await runRanks(n, (comm) => run(comm, len, dtype, root), { cost: COST });
        const measured = virtualTime(result);
        const estimate = estimateTime(op, algorithm, elements(len, n) * e, n, COST, { elementBytes: e });
        const where = `N=${n}, ${len} ${dtype} elements, root ${root}: measured ${measured} µs, estimate ${estimate} µs`;
        if (exact(len, n)) expect(measured, where).toBeCloseTo(estimate, 6);
        else expect(measured, where).toBeLessThanOrEqual(estimate + 1e-9);
      }),
      { seed: 2100 + CASES.findIndex((c) => c.op === op && c.algorithm === algorithm), numRuns: 30, examples: EDGE_CASES },
    );
  });
});

describe('estimateTime', () => {
  it('uses the default algorithm of each op when none is given', () => {
    expect(estimateTime('allReduce', undefined, 800, 4, COST)).toBe(estimateTime('allReduce', 'ring', 800, 4, COST));
    expect(estimateTime('broadcast', undefined, 800, 4, COST)).toBe(estimateTime('broadcast', 'tree', 800, 4, COST));
  });

  it('is 0 on one rank and grows with the bytes', () => {
    expect(estimateTime('allReduce', 'ring', 1e6, 1, COST)).toBe(0);
    expect(estimateTime('allReduce', 'ring', 2e6, 8, COST)).toBeGreaterThan(estimateTime('allReduce', 'ring', 1e6, 8, COST));
  });

  it('without elementBytes rounds chunks to bytes: exact for even splits of any dtype', () => {
    // 12 float64 elements on 4 ranks: 24-byte chunks either way.
    expect(estimateTime('allReduce', 'ring', 96, 4, COST)).toBe(estimateTime('allReduce', 'ring', 96, 4, COST, { elementBytes: 8 }));
  });

  it('rejects an unknown algorithm and a bad world size by name', () => {
    expect(() => estimateTime('allReduce', 'butterfly', 8, 4, COST)).toThrow(/no cost formula for allReduce with algorithm 'butterfly'/);
    expect(() => estimateTime('allReduce', 'ring', 8, 0, COST)).toThrow(/worldSize must be a positive integer, got 0/);
    expect(() => estimateTime('allReduce', 'ring', -1, 2, COST)).toThrow(/bytes must be non-negative, got -1/);
  });
});

// Uneven split worked by hand: 5 float32 elements on 4 ranks are chunks of 2, 1, 1, 1.
// Chunk 0 (8 bytes) crosses 3 links in each ring phase, so the run takes
// 6·(alpha + 8/B): more than a formula with S/N = 5 bytes per chunk would say.
it('ring allReduce of 5 float32 on 4 ranks takes 6·(alpha + 8 bytes / B), the largest chunk on every hop', async () => {
  const { result } = await runRanks(4, (comm) => allReduce(comm, tensor([1, 2, 3, 4, 5])), { cost: COST });
  expect(virtualTime(result)).toBeCloseTo(6 * (COST.alphaUs + 8 / COST.bytesPerUs), 9);
  expect(estimateTime('allReduce', 'ring', 20, 4, COST, { elementBytes: 4 })).toBeCloseTo(6 * (COST.alphaUs + 8 / COST.bytesPerUs), 9);
});
