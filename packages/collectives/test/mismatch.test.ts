/**
 * Ranks that disagree on a collective call (which collective, its length,
 * dtype, reduce op or root) fail fast instead of hanging or computing
 * garbage: every rank that made the mismatched call ends with the
 * CollectiveMismatchError (which names the first two ranks that disagree and
 * both calls), or with a RankFailedError naming such a rank; none returns.
 */
import { describe, expect, it } from 'vitest';
import { launch, CollectiveMismatchError, RankFailedError, describeCall, type Comm, type LaunchResult } from '@dtlab/runtime';
import { tensor } from '@dtlab/tensor';
import { allReduce, barrier, broadcast, reduce } from '../src/index.ts';
import { program } from './support/ranks.ts';

const N = 4;
const v = (len = 12, dtype: 'float32' | 'float64' = 'float32') => tensor(new Float64Array(len).fill(1), { dtype });

/**
 * Checks the rules every mismatch obeys, on any backend and whichever rank
 * announced first, and returns the mismatch errors by rank:
 * - no hang and no garbage: no deadlock, no timeout, and no rank returns;
 * - both ranks named in the error have it, and its message names both ranks and both calls;
 * - every other rank has the same CollectiveMismatchError, or a RankFailedError naming a rank that has it.
 */
function expectMismatchReported(r: LaunchResult): Map<number, CollectiveMismatchError> {
  expect(r.deadlock).toBeUndefined();
  const mismatches = new Map<number, CollectiveMismatchError>();
  for (const o of r.ranks) {
    if (o.error instanceof CollectiveMismatchError) mismatches.set(o.rank, o.error);
  }
  const first = [...mismatches.values()][0];
  expect(first, 'some rank has a CollectiveMismatchError').toBeDefined();
  expect(first!.rankA).not.toBe(first!.rankB);
  for (const named of [first!.rankA, first!.rankB]) expect(mismatches.has(named), `rank ${named}, named in the error, has it`).toBe(true);
  for (const e of mismatches.values()) {
    expect({ index: e.index, rankA: e.rankA, rankB: e.rankB }).toEqual({ index: first!.index, rankA: first!.rankA, rankB: first!.rankB });
    for (const text of [`rank ${e.rankA}`, `rank ${e.rankB}`, describeCall(e.callA), describeCall(e.callB)]) expect(e.message).toContain(text);
  }
  for (const o of r.ranks) {
    if (mismatches.has(o.rank)) continue;
    expect(o.status, `rank ${o.rank}`).toBe('error');
    expect(o.error, `rank ${o.rank}`).toBeInstanceOf(RankFailedError);
    expect(mismatches.has((o.error as RankFailedError).failedRank), `rank ${o.rank} blames rank ${(o.error as RankFailedError).failedRank}`).toBe(true);
  }
  return mismatches;
}

type Scenario = {
  what: string;
  /** The one rank that calls differently from all the others. */
  deviant: number;
  program: (comm: Comm) => Promise<unknown>;
  /** The field in which the two announced calls differ, and its value on rank 0 and on the deviant. */
  differs: [field: string, onRank0: string | number, onDeviant: string | number];
};

const SCENARIOS: Scenario[] = [
  {
    what: 'a different collective (broadcast among allReduces)',
    deviant: 2,
    program: (comm) => (comm.rank === 2 ? broadcast(comm, v()) : allReduce(comm, v())),
    differs: ['op', 'allReduce', 'broadcast'],
  },
  {
    what: 'a different length',
    deviant: 2,
    program: (comm) => allReduce(comm, v(comm.rank === 2 ? 10 : 12)),
    differs: ['count', 12, 10],
  },
  {
    what: 'a different dtype',
    deviant: 3,
    program: (comm) => allReduce(comm, v(12, comm.rank === 3 ? 'float64' : 'float32')),
    differs: ['dtype', 'float32', 'float64'],
  },
  {
    what: 'a different reduce op',
    deviant: 1,
    program: (comm) => allReduce(comm, v(), { op: comm.rank === 1 ? 'max' : 'sum', algorithm: 'tree' }),
    differs: ['reduceOp', 'sum', 'max'],
  },
  {
    what: 'a different root (broadcast from rank 1, or from rank 2 on rank 3)',
    deviant: 3,
    program: (comm) => broadcast(comm, v(), { src: comm.rank === 3 ? 2 : 1 }),
    differs: ['src', 1, 2],
    // Rank 1 is the root and rank 2 its child: neither waits for rank 0 or rank 3.
  },
  {
    what: 'a custom op of the same name with a different item size',
    deviant: 1,
    program: (comm) => allReduce(comm, v(), { op: { name: 'add', itemSize: comm.rank === 1 ? 2 : 4, combine: (a, b) => a.map((x, i) => x + b[i]!) } }),
    differs: ['itemSize', 4, 2],
  },
  {
    what: 'a different root of reduce',
    deviant: 2,
    program: (comm) => reduce(comm, v(), { dst: comm.rank === 2 ? 2 : 0 }),
    differs: ['dst', 0, 2],
    // In a reduce to rank 0, ranks 1 and 3 only send.
  },
];

describe.each(SCENARIOS)('$what (inline backend)', ({ deviant, program: rankProgram, differs: [field, onRank0, onDeviant] }) => {
  it(`names rank 0 and rank ${deviant} and fails every rank, none with a result`, async () => {
    const r = await launch({ worldSize: N, program: rankProgram, timeoutMs: 10_000 });
    const mismatches = expectMismatchReported(r);
    // Inline ranks start in rank order: rank 0 announces first, the deviant is the first to differ.
    for (const e of mismatches.values()) {
      expect(e).toMatchObject({ index: 0, rankA: 0, rankB: deviant });
      expect(e.callA[field]).toBe(onRank0);
      expect(e.callB[field]).toBe(onDeviant);
    }
  });
});

it('counts collective calls: a mismatch in the second call has index 1', async () => {
  const r = await launch({
    worldSize: N,
    timeoutMs: 10_000,
    program: async (comm: Comm) => {
      await barrier(comm);
      await allReduce(comm, v(), { algorithm: comm.rank === 1 ? 'naive' : 'ring' });
    },
  });
  const mismatches = expectMismatchReported(r);
  for (const e of mismatches.values()) {
    expect(e.index).toBe(1);
    expect([e.callA.algorithm, e.callB.algorithm].sort()).toEqual(['naive', 'ring']);
  }
});

it('is reported the same way on the workers backend, whichever rank announces first', async () => {
  // Worker startup is slow on a busy machine: the launch limit stays well inside the test's.
  const r = await launch({ worldSize: 3, backend: 'workers', program: program('mismatch', 'broadcastAmongAllReduces'), timeoutMs: 15_000 });
  const mismatches = expectMismatchReported(r);
  // Whoever announced first, the odd one out differs from it, so it is always named.
  const e = mismatches.get(1)!;
  expect(e).toBeInstanceOf(CollectiveMismatchError);
  expect([e.callA.op, e.callB.op].sort()).toEqual(['allReduce', 'broadcast']);
}, 40_000);

describe('ranks that could finish before the mismatch is found', () => {
  // A broadcast root only sends: it can return before the other root
  // announces. It still ends with the error, not with a result.
  it('two roots that only send: both ranks named in the mismatch get the error', async () => {
    const r = await launch({ worldSize: N, timeoutMs: 10_000, program: (comm: Comm) => broadcast(comm, v(), { src: comm.rank === 3 ? 3 : 0 }) });
    expect(r.ranks[0]!.error).toBeInstanceOf(CollectiveMismatchError);
    expect(r.ranks[3]!.error).toBeInstanceOf(CollectiveMismatchError);
  });

  // Naive all-reduce posts every send before its first wait, so a rank that
  // is not named could receive every buffer, wrong length included, and finish.
  it('naive allReduce with different lengths: the ranks not named fail too', async () => {
    const r = await launch({ worldSize: N, timeoutMs: 10_000, program: (comm: Comm) => allReduce(comm, v(comm.rank === 2 ? 14 : 12), { algorithm: 'naive' }) });
    expectMismatchReported(r);
  });
});

it('a rank that skips a collective: the deadlock says how many collective calls each rank started, and what to check', async () => {
  const r = await launch({ worldSize: 3, timeoutMs: 10_000, program: async (comm: Comm) => (comm.rank === 1 ? undefined : allReduce(comm, v())) });
  expect(r.deadlock).toBeDefined();
  expect(r.deadlock!.collectiveCalls).toEqual([1, 0, 1]);
  expect(r.deadlock!.message).toContain('collective calls started: rank 0: 1, rank 1: 0, rank 2: 1');
  expect(r.deadlock!.message).toContain('every rank must make every collective call, in the same order (check for a collective inside a branch on the rank, or a rank that returns early)');
});
