import { describe, expect, it } from 'vitest';
import { launch, CommTimeoutError, RankTimeoutError } from '../src/index.ts';
import { program } from './support.ts';

describe('timeoutMs', () => {
  it('stops worker ranks stuck in a synchronous infinite loop or a never-resolving promise (status timeout, RankTimeoutError)', async () => {
    const timeoutMs = 1500;
    const r = await launch({ worldSize: 2, backend: 'workers', program: program('timeouts', 'stuckTwoWays'), timeoutMs, output: 'ignore' });

    expect(r.ranks.map((o) => o.status)).toEqual(['timeout', 'timeout']);
    for (const rank of [0, 1]) {
      expect(r.ranks[rank]!.error).toBeInstanceOf(RankTimeoutError);
      expect(r.ranks[rank]!.error).toMatchObject({ rank, timeoutMs });
      expect(r.ranks[rank]!.error!.message).toMatch(new RegExp(`^rank ${rank}: still running after ${timeoutMs} ms and not waiting for any message`));
    }
    // No hang: the launch ends once the limit passes. The bound is loose because
    // wallMs includes starting the workers, which is slow on a loaded machine.
    expect(r.wallMs).toBeLessThan(timeoutMs + 15_000);
  });

  it('stops a rank that floods the launching thread with messages, even when the launching thread polls for them', async () => {
    // With polling on, the launching thread handles messages as long as they keep coming; it must
    // still return to its event loop, or the timeout's timer would never fire and the launch would hang.
    const r = await launch({ worldSize: 2, backend: 'workers', program: program('timeouts', 'flood'), timeoutMs: 1000, pollUs: 1000, output: 'ignore' });

    expect(r.ranks.map((o) => o.status)).toEqual(['timeout', 'timeout']);
    // Each rank is stopped either running or waiting for its peer's next message.
    for (const o of r.ranks) expect(o.error instanceof RankTimeoutError || o.error instanceof CommTimeoutError).toBe(true);
    expect(r.trace.length).toBeGreaterThan(0);
  });

  it('stops an inline rank awaiting a promise that never resolves, and reports its peer waiting in recv with CommTimeoutError', async () => {
    // Inline ranks start at once, so rank 1 is surely waiting when time runs out (a worker might still be
    // starting). Inline cannot stop a synchronous infinite loop: such code must run on workers.
    const r = await launch({ worldSize: 2, program: program('timeouts', 'awaitForever'), timeoutMs: 300 });

    expect(r.ranks.map((o) => o.status)).toEqual(['timeout', 'timeout']);
    expect(r.ranks[0]!.error).toBeInstanceOf(RankTimeoutError);
    expect(r.ranks[1]!.error).toBeInstanceOf(CommTimeoutError);
    expect(r.ranks[1]!.error).toMatchObject({ rank: 1, during: 'recv from rank 0 (tag 0)' });
    expect(r.ranks[1]!.error!.message).toMatch(/^rank 1: timed out after \d+ ms waiting in recv from rank 0 \(tag 0\)$/);
    expect(r.wallMs).toBeLessThan(300 + 5000); // no hang (loose: timers run late on a loaded machine)
  });
});
