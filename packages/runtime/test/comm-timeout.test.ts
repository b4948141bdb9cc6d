import { describe, expect, it } from 'vitest';
import { launch, CommTimeoutError } from '../src/index.ts';
import { BACKENDS, program } from './support.ts';

describe.each(BACKENDS)('commTimeoutMs (%s backend)', (backend) => {
  it('fails a single wait that lasts longer with CommTimeoutError, while the rank it waits on runs on', async () => {
    // Rank 1 is busy (sleeping, not waiting in a communication call), so this is no deadlock.
    const r = await launch({ worldSize: 2, backend, program: program('timeouts', 'silentPeer'), args: [1000], commTimeoutMs: 150, output: 'ignore' });

    expect(r.ranks[0]!.status).toBe('error');
    expect(r.ranks[0]!.error).toBeInstanceOf(CommTimeoutError);
    const e = r.ranks[0]!.error as CommTimeoutError;
    expect(e).toMatchObject({ rank: 0, during: 'recv from rank 1 (tag 0)' });
    expect(e.waitedMs).toBeGreaterThanOrEqual(140);
    expect(e.message).toMatch(/^rank 0: timed out after \d+ ms waiting in recv from rank 1 \(tag 0\)$/);
    expect(r.ranks[1]).toMatchObject({ status: 'ok', value: 'slept' });
    expect(r.deadlock).toBeUndefined();
  });
});
