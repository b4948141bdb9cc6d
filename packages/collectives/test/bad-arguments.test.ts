/**
 * A collective called with a bad argument fails at once, on the rank that
 * passed it, with an error that names the rank and the argument; the other
 * ranks fail with RankFailedError naming that rank instead of hanging.
 */
import { describe, expect, it } from 'vitest';
import { launch, RankFailedError, type Comm } from '@dtlab/runtime';
import { tensor, type Tensor } from '@dtlab/tensor';
import { allGather, allReduce, allToAll, broadcast, gather, reduce, reduceScatter, scatter } from '../src/index.ts';

const N = 3;
const BAD_RANK = 1;

/** Runs `call` on N ranks, with the bad argument on BAD_RANK only; the others make a valid call. */
async function callWithBadArgumentOn(call: (comm: Comm, bad: boolean) => Promise<unknown>) {
  const r = await launch({ worldSize: N, timeoutMs: 10_000, program: (comm: Comm) => call(comm, comm.rank === BAD_RANK) });
  expect(r.deadlock).toBeUndefined();
  const bad = r.ranks[BAD_RANK]!;
  expect(bad.status).toBe('error');
  for (const o of r.ranks) {
    if (o.rank === BAD_RANK || o.status === 'ok') continue; // a rank may finish before it needs the bad one
    expect(o.error, `rank ${o.rank}`).toBeInstanceOf(RankFailedError);
    expect((o.error as RankFailedError).failedRank).toBe(BAD_RANK);
  }
  return bad.error!;
}

const t = (): Tensor => tensor([1, 2, 3, 4]);
const notATensor = [1, 2, 3, 4] as unknown as Tensor;

describe('a non-tensor input', () => {
  const calls: [string, string, (comm: Comm, bad: boolean) => Promise<unknown>][] = [
    ['allReduce', 'tensor', (comm, bad) => allReduce(comm, bad ? notATensor : t())],
    ['reduceScatter', 'tensor', (comm, bad) => reduceScatter(comm, bad ? notATensor : t())],
    ['allGather', 'tensor', (comm, bad) => allGather(comm, bad ? notATensor : t())],
    ['broadcast', 'tensor', (comm, bad) => broadcast(comm, bad ? notATensor : t())],
    ['reduce', 'tensor', (comm, bad) => reduce(comm, bad ? notATensor : t())],
    ['gather', 'tensor', (comm, bad) => gather(comm, bad ? notATensor : t())],
    ['allToAll', 'inputs\\[2\\]', (comm, bad) => allToAll(comm, [t(), t(), bad ? notATensor : t()])],
    ['scatter', 'chunks\\[0\\]', (comm) => scatter(comm, comm.rank === BAD_RANK ? [notATensor, t(), t()] : null, { src: BAD_RANK })],
  ];
  it.each(calls)('%s: a TypeError naming the rank and %s', async (name, argument, call) => {
    const err = await callWithBadArgumentOn(call);
    expect(err).toBeInstanceOf(TypeError);
    expect(err.message).toMatch(new RegExp(`^rank ${BAD_RANK}: ${name}: ${argument} must be a Tensor`));
  });
});

describe('a root out of range', () => {
  const calls: [string, string, number, (comm: Comm, root: number) => Promise<unknown>][] = [
    ['broadcast', 'src', N, (comm, root) => broadcast(comm, t(), { src: root })],
    ['broadcast', 'src', -1, (comm, root) => broadcast(comm, t(), { src: root })],
    ['reduce', 'dst', N, (comm, root) => reduce(comm, t(), { dst: root })],
    ['reduce', 'dst', 1.5, (comm, root) => reduce(comm, t(), { dst: root })],
    ['gather', 'dst', 7, (comm, root) => gather(comm, t(), { dst: root })],
    ['scatter', 'src', N, (comm, root) => scatter(comm, [t(), t(), t()], { src: root })],
  ];
  it.each(calls)('%s with %s = %s: a RangeError naming the rank, the argument and the valid ranks', async (name, argument, root, call) => {
    const err = await callWithBadArgumentOn((comm, bad) => call(comm, bad ? root : 0));
    expect(err).toBeInstanceOf(RangeError);
    expect(err.message).toBe(`rank ${BAD_RANK}: ${name}: ${argument} must be a rank in [0, ${N}), got ${root}`);
  });

  it('a string or null is not a rank: the message shows which', async () => {
    const asString = await callWithBadArgumentOn((comm, bad) => broadcast(comm, t(), { src: (bad ? '1' : 0) as number }));
    expect(asString.message).toBe(`rank ${BAD_RANK}: broadcast: src must be a rank in [0, ${N}), got the string "1"`);
    const asNull = await callWithBadArgumentOn((comm, bad) => reduce(comm, t(), { dst: (bad ? null : 0) as number }));
    expect(asNull.message).toBe(`rank ${BAD_RANK}: reduce: dst must be a rank in [0, ${N}), got null`);
  });
});

describe('allGather counts', () => {
  it('of the wrong length: a RangeError naming the rank, counts and the world size', async () => {
    const err = await callWithBadArgumentOn((comm, bad) => allGather(comm, t(), { counts: bad ? [4, 4] : [4, 4, 4] }));
    expect(err).toBeInstanceOf(RangeError);
    expect(err.message).toMatch(new RegExp(`^rank ${BAD_RANK}: allGather: counts must list ${N} non-negative integers.*got \\[4,4\\]`));
  });

  it('with a negative or fractional count: a RangeError naming the rank and counts', async () => {
    for (const counts of [[4, -1, 4], [4, 4, 0.5]]) {
      const err = await callWithBadArgumentOn((comm, bad) => allGather(comm, t(), { counts: bad ? counts : [4, 4, 4] }));
      expect(err.message).toMatch(new RegExp(`^rank ${BAD_RANK}: allGather: counts must list`));
    }
  });

  it("that do not match this rank's numel: a RangeError naming the rank, counts[rank] and the numel", async () => {
    const err = await callWithBadArgumentOn((comm, bad) => allGather(comm, bad ? tensor([1, 2]) : t(), { counts: [4, 4, 4] }));
    expect(err).toBeInstanceOf(RangeError);
    expect(err.message).toBe(`rank ${BAD_RANK}: allGather: counts[${BAD_RANK}] is 4 but this rank's tensor has 2 elements`);
  });
});

describe('one tensor per rank', () => {
  it('scatter: the src rank passing too few chunks, or none, gets a RangeError naming the rank and chunks', async () => {
    for (const chunks of [[t(), t()], null]) {
      const err = await callWithBadArgumentOn((comm) => scatter(comm, comm.rank === BAD_RANK ? chunks : null, { src: BAD_RANK }));
      expect(err).toBeInstanceOf(RangeError);
      expect(err.message).toMatch(new RegExp(`^rank ${BAD_RANK}: scatter: chunks must hold ${N} tensors \\(one per rank\\)`));
    }
  });

  it('allToAll: passing too few inputs gets a RangeError naming the rank and inputs', async () => {
    const err = await callWithBadArgumentOn((comm, bad) => allToAll(comm, bad ? [t()] : [t(), t(), t()]));
    expect(err).toBeInstanceOf(RangeError);
    expect(err.message).toMatch(new RegExp(`^rank ${BAD_RANK}: allToAll: inputs must hold ${N} tensors \\(one per rank\\), got 1`));
  });
});

describe('options', () => {
  it('an unknown reduce op: a TypeError naming the rank and op', async () => {
    const err = await callWithBadArgumentOn((comm, bad) => allReduce(comm, t(), { op: (bad ? 'mean' : 'sum') as 'sum' }));
    expect(err).toBeInstanceOf(TypeError);
    expect(err.message).toMatch(new RegExp(`^rank ${BAD_RANK}: allReduce: op must be 'sum', 'avg', 'prod', 'min', 'max' or a custom op.*got "mean"`));
  });

  it('an unknown algorithm: a TypeError naming the rank and algorithm', async () => {
    const err = await callWithBadArgumentOn((comm, bad) => allReduce(comm, t(), { algorithm: (bad ? 'butterfly' : 'ring') as 'ring' }));
    expect(err).toBeInstanceOf(TypeError);
    expect(err.message).toMatch(new RegExp(`^rank ${BAD_RANK}: allReduce: algorithm must be 'ring', 'naive' or 'tree', got "butterfly"`));
  });

  it('a custom op with an itemSize that is not a positive integer: a RangeError naming the rank and the op', async () => {
    const op = { name: 'halves', itemSize: 0.5, combine: (a: ArrayLike<number>) => a };
    const err = await callWithBadArgumentOn((comm, bad) => reduce(comm, t(), { op: bad ? op : 'sum' }));
    expect(err).toBeInstanceOf(RangeError);
    expect(err.message).toMatch(new RegExp(`^rank ${BAD_RANK}: reduce: custom op halves has itemSize 0.5`));
  });
});
