import { describe, expect, it } from 'vitest';
import { launch, DeadlockError } from '../src/index.ts';
import { BACKENDS, example, program } from './support.ts';

describe.each(BACKENDS)('deadlock detection (%s backend)', (backend) => {
  it('names every blocked rank, its peer and tag, and the cycle when ranks wait on each other', async () => {
    const r = await launch({ worldSize: 3, backend, program: program('deadlock', 'recvBeforeSend'), output: 'ignore' });

    expect(r.deadlock).toBeInstanceOf(DeadlockError);
    const d = r.deadlock!;
    expect(d.blocked).toEqual([
      { rank: 0, waitingFor: { op: 'recv', src: 2, tag: 3 } },
      { rank: 1, waitingFor: { op: 'recv', src: 0, tag: 3 } },
      { rank: 2, waitingFor: { op: 'recv', src: 1, tag: 3 } },
    ]);
    expect(d.cycle).toEqual([0, 2, 1]);
    expect(d.finished).toEqual([]);
    expect(d.message).toContain('rank 0 waits in recv from rank 2 (tag 3)');
    expect(d.message).toContain('rank 1 waits in recv from rank 0 (tag 3)');
    expect(d.message).toContain('rank 2 waits in recv from rank 1 (tag 3)');
    expect(d.message).toContain('cycle (each waits for the next): 0 -> 2 -> 1 -> 0');
    // Each blocked rank's recv fails with the deadlock, so every rank ends in 'error'.
    for (const o of r.ranks) {
      expect(o.status).toBe('error');
      expect(o.error).toMatchObject({ name: 'DeadlockError', cycle: [0, 2, 1] });
    }
    expect(r.trace).toEqual([]);
  });

  it('reports a rank waiting on a rank that already returned, with no cycle', async () => {
    const r = await launch({ worldSize: 2, backend, program: program('deadlock', 'waitsOnFinishedRank'), output: 'ignore' });

    expect(r.deadlock?.blocked).toEqual([{ rank: 0, waitingFor: { op: 'recv', src: 1, tag: 7 } }]);
    expect(r.deadlock?.cycle).toEqual([]);
    expect(r.deadlock?.finished).toEqual([1]);
    expect(r.deadlock?.message).toContain('already finished or failed: rank 1');
    expect(r.ranks.map((o) => o.status)).toEqual(['error', 'ok']);
    expect(r.ranks[1]!.value).toBe('returned');
  });

  it('reports a barrier that one rank never enters, naming the missing rank', async () => {
    const r = await launch({ worldSize: 3, backend, program: program('deadlock', 'barrierMissingRank'), output: 'ignore' });

    expect(r.deadlock?.blocked).toEqual([
      { rank: 0, waitingFor: { op: 'barrier', missing: [2] } },
      { rank: 1, waitingFor: { op: 'barrier', missing: [2] } },
    ]);
    expect(r.deadlock?.cycle).toEqual([]);
    expect(r.deadlock?.message).toContain('rank 0 waits in barrier (ranks not yet there: 2)');
    expect(r.deadlock?.message).toContain('every rank must call barrier() the same number of times');
    expect(r.ranks.map((o) => o.status)).toEqual(['error', 'error', 'ok']);
  });

  it('does not fire when the same ring sends before it receives', async () => {
    const r = await launch({ worldSize: 3, backend, program: program('deadlock', 'sendBeforeRecv'), output: 'ignore' });

    expect(r.deadlock).toBeUndefined();
    expect(r.ranks.map((o) => o.value)).toEqual([2, 0, 1]);
  });
});

describe('the deadlock example', () => {
  it('is the cycle case', async () => {
    const r = await launch({ worldSize: 3, program: example('deadlock') });
    expect(r.deadlock?.cycle).toEqual([0, 2, 1]);
  });
});
