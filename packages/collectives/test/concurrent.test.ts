/**
 * Collectives in flight together on one Comm, as torch.distributed allows
 * with async_op=True (a DDP step overlaps the all-reduces of its gradient
 * buckets): every rank starts the same calls in the same order and awaits
 * them together. Each call sends on a tag of its own (COLLECTIVE_TAG + its
 * index), so no call takes another's messages, whatever their algorithms.
 */
import { describe, expect, it } from 'vitest';
import { launch, type Comm } from '@dtlab/runtime';
import { tensor, type Tensor } from '@dtlab/tensor';
import { allGather, allReduce, broadcast, reduce, reduceScatter, type AllReduceAlgorithm } from '../src/index.ts';
import { program, runRanks } from './support/ranks.ts';

/** Rank r's input of length `len` for call `k`: small integers, so every sum is exact. */
const input = (r: number, k: number, len: number) => tensor(Array.from({ length: len }, (_, i) => (r + 1) * 100 + k * 10 + (i % 7)));
const sumOver = (n: number, k: number, len: number) => Array.from({ length: len }, (_, i) => Array.from({ length: n }, (_, r) => (r + 1) * 100 + k * 10 + (i % 7)).reduce((a, b) => a + b, 0));

const ALGORITHMS: AllReduceAlgorithm[] = ['ring', 'tree', 'naive'];

describe('two collectives in flight on one Comm', () => {
  for (const n of [2, 3, 4, 5, 8]) {
    for (const algorithm of ALGORITHMS) {
      it(`${n} ranks: broadcast from rank ${n - 1} and a ${algorithm} allReduce, awaited together, both right`, async () => {
        const { values } = await runRanks(n, async (comm: Comm) => {
          const a = input(comm.rank, 0, 10);
          const b = input(comm.rank, 1, 40);
          await Promise.all([broadcast(comm, a, { src: n - 1 }), allReduce(comm, b, { algorithm })]);
          return { a: a.toArray(), b: b.toArray() };
        });
        for (const [rank, v] of values.entries()) {
          expect(v.a, `rank ${rank}: broadcast`).toEqual(input(n - 1, 0, 10).toArray());
          expect(v.b, `rank ${rank}: allReduce`).toEqual(sumOver(n, 1, 40));
        }
      });
    }
  }

  it('4 ranks: a tree allReduce and a ring allReduce together, both right', async () => {
    const { values } = await runRanks(4, async (comm: Comm) => {
      const a = input(comm.rank, 0, 13);
      const b = input(comm.rank, 1, 29);
      await Promise.all([allReduce(comm, a, { algorithm: 'tree' }), allReduce(comm, b, { algorithm: 'ring' })]);
      return [a.toArray(), b.toArray()];
    });
    for (const v of values) expect(v).toEqual([sumOver(4, 0, 13), sumOver(4, 1, 29)]);
  });
});

it('five different collectives in flight at once on 5 ranks, each right', async () => {
  const n = 5;
  const { values } = await runRanks(n, async (comm: Comm) => {
    const r = comm.rank;
    const ar = input(r, 0, 17);
    const bc = input(r, 1, 6);
    const rd = input(r, 2, 9);
    const [, , , gathered, mine] = await Promise.all([
      allReduce(comm, ar, { algorithm: 'naive' }),
      broadcast(comm, bc, { src: 2 }),
      reduce(comm, rd, { dst: 3 }),
      allGather(comm, input(r, 3, 4)),
      reduceScatter(comm, input(r, 4, 11)),
    ]);
    return { ar: ar.toArray(), bc: bc.toArray(), rd: rd.toArray(), gathered: (gathered as Tensor).toArray(), mine: (mine as Tensor).toArray() };
  });
  const scattered = sumOver(n, 4, 11);
  const bounds = [0, 3, 5, 7, 9, 11]; // chunkBounds(11, 5): 3, 2, 2, 2, 2
  for (const [r, v] of values.entries()) {
    expect(v.ar, `rank ${r}: allReduce`).toEqual(sumOver(n, 0, 17));
    expect(v.bc, `rank ${r}: broadcast`).toEqual(input(2, 1, 6).toArray());
    expect(v.rd, `rank ${r}: reduce`).toEqual(r === 3 ? sumOver(n, 2, 9) : input(r, 2, 9).toArray());
    expect(v.gathered, `rank ${r}: allGather`).toEqual(Array.from({ length: n }, (_, q) => input(q, 3, 4).toArray()).flat());
    expect(v.mine, `rank ${r}: reduceScatter`).toEqual(scattered.slice(bounds[r], bounds[r + 1]));
  }
});

it('on the workers backend too: broadcast and allReduce in flight together on 4 ranks', async () => {
  const r = await launch({ worldSize: 4, backend: 'workers', program: program('concurrent', 'broadcastWithAllReduce'), timeoutMs: 15_000 });
  expect(r.ok, JSON.stringify(r.ranks.map((o) => o.error?.message))).toBe(true);
  for (const o of r.ranks) expect(o.value).toEqual({ a: input(3, 0, 10).toArray(), b: sumOver(4, 1, 40) });
}, 40_000);
