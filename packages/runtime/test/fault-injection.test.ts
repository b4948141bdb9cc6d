import { describe, expect, it } from 'vitest';
import { launch, InjectedFaultError, RankFailedError } from '../src/index.ts';
import { BACKENDS, program } from './support.ts';

describe.each(BACKENDS)('fault injection (%s backend)', (backend) => {
  it("crashes rank r at its k-th communication op with InjectedFaultError; its peer's recv fails with RankFailedError", async () => {
    // Rank 1's ops in a ping-pong: recv (#1), send (#2), ...: it crashes as it sends its first reply,
    // while rank 0 waits for that reply.
    const r = await launch({ worldSize: 2, backend, program: program('exchange', 'pingPong'), args: [3], faults: [{ kind: 'crash', rank: 1, atOp: 2 }], output: 'ignore' });

    expect(r.ranks[1]!.status).toBe('error');
    expect(r.ranks[1]!.error).toBeInstanceOf(InjectedFaultError);
    expect(r.ranks[1]!.error).toMatchObject({ rank: 1, opIndex: 2, op: 'send' });
    expect(r.ranks[1]!.error!.message).toBe('rank 1: injected crash at its communication op #2 (send)');
    expect(r.ranks[0]!.error).toBeInstanceOf(RankFailedError);
    expect(r.ranks[0]!.error).toMatchObject({
      rank: 0,
      failedRank: 1,
      failedMessage: 'InjectedFaultError: rank 1: injected crash at its communication op #2 (send)',
      during: 'recv from rank 1 (tag 0)',
    });
    // Only the message before the crash was sent.
    expect(r.trace.map((e) => [e.src, e.dst])).toEqual([[0, 1]]);
  });

  it('delays every message on one link by exactly the given virtual time, and no other', async () => {
    // Rank 0 sends 400 bytes to rank 1, then to rank 2. With alpha 10 µs and 100 bytes/µs each takes
    // 10 + 4 = 14 µs; the second leaves when the link is free, at 4 µs. The 0 -> 1 link adds 25 µs.
    const r = await launch({
      worldSize: 3,
      backend,
      program: program('exchange', 'fanOut'),
      cost: { alphaUs: 10, bytesPerUs: 100 },
      faults: [{ kind: 'delay', src: 0, dst: 1, us: 25 }],
      output: 'ignore',
    });

    expect(r.ranks.map((o) => o.value)).toEqual([0, 100, 200]);
    expect(r.trace.map(({ src, dst, vtStartUs, vtEndUs }) => ({ src, dst, vtStartUs, vtEndUs }))).toEqual([
      { src: 0, dst: 1, vtStartUs: 0, vtEndUs: 14 + 25 },
      { src: 0, dst: 2, vtStartUs: 4, vtEndUs: 18 },
    ]);
    expect(r.stats.map((s) => s.vtUs)).toEqual([0, 14 + 25, 18]);
  });
});
