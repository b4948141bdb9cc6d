/**
 * Every collective works on one rank (it returns its own data and sends
 * nothing) and on empty tensors (it returns empty results on every rank).
 */
import { describe, expect, it } from 'vitest';
import { tensor, zeros, type Tensor } from '@dtlab/tensor';
import type { Comm } from '@dtlab/runtime';
import { allGather, allReduce, allToAll, barrier, broadcast, gather, reduce, reduceScatter, scatter } from '../src/index.ts';
import { runRanks } from './support/ranks.ts';

/** Each op, run on `t` (rank r's input), reporting what the caller ends up with as plain numbers. */
const OPS: [string, (comm: Comm, t: Tensor) => Promise<unknown>][] = [
  ['allReduce (ring)', async (c, t) => (await allReduce(c, t, { op: 'prod', algorithm: 'ring' })).toArray()],
  ['allReduce (naive)', async (c, t) => (await allReduce(c, t, { op: 'max', algorithm: 'naive' })).toArray()],
  ['allReduce (tree)', async (c, t) => (await allReduce(c, t, { op: 'avg', algorithm: 'tree' })).toArray()],
  ['reduceScatter', async (c, t) => (await reduceScatter(c, t, { op: 'min' })).toArray()],
  ['allGather', async (c, t) => (await allGather(c, t)).toArray()],
  ['allGather with counts', async (c, t) => (await allGather(c, t, { counts: new Array(c.worldSize).fill(t.numel) })).toArray()],
  ['broadcast', async (c, t) => (await broadcast(c, t, { src: c.worldSize - 1 })).toArray()],
  ['reduce', async (c, t) => (await reduce(c, t, { dst: c.worldSize - 1, op: 'sum' })).toArray()],
  ['gather', async (c, t) => (await gather(c, t))?.map((x) => x.toArray()) ?? null],
  ['scatter', async (c, t) => (await scatter(c, c.rank === 0 ? new Array(c.worldSize).fill(t) : null)).toArray()],
  ['allToAll', async (c, t) => (await allToAll(c, new Array(c.worldSize).fill(t))).map((x) => x.toArray())],
  ['barrier', async (c) => (await barrier(c)) ?? 'passed'],
];

describe('on one rank', () => {
  it.each(OPS)('%s gives back the rank its own data and sends no message', async (name, op) => {
    const { values, result } = await runRanks(1, (comm) => op(comm, tensor([3, -1, 2.5])));
    const own = [3, -1, 2.5];
    const expected: Record<string, unknown> = { gather: [own], allToAll: [own], barrier: 'passed' };
    expect(values[0]).toEqual(expected[name] ?? own);
    expect(result.trace).toEqual([]);
  });
});

describe('on empty tensors', () => {
  it.each(OPS)('%s gives every rank empty results, for 1 to 5 ranks', async (name, op) => {
    for (const n of [1, 2, 5]) {
      const { values } = await runRanks(n, (comm) => op(comm, zeros([0])));
      values.forEach((v, r) => {
        const expected: Record<string, unknown> = { gather: r === 0 ? new Array(n).fill([]) : null, allToAll: new Array(n).fill([]), barrier: 'passed' };
        expect(v, `${name} on rank ${r} of ${n}`).toEqual(name in expected ? expected[name] : []);
      });
    }
  });
});
