import { describe, expect, it } from 'vitest';
import { launch, RankFailedError } from '../src/index.ts';
import { BACKENDS, program } from './support.ts';

describe.each(BACKENDS)('a rank that throws (%s backend)', (backend) => {
  it("fails its peers' pending receives with RankFailedError naming the root rank and its error", async () => {
    // Chain 0 <- 1 <- 2: rank 2 throws; rank 1 waits on rank 2; rank 0 waits on rank 1.
    const r = await launch({ worldSize: 3, backend, program: program('failures', 'chainFromLastRank'), output: 'ignore' });

    expect(r.ok).toBe(false);
    expect(r.deadlock).toBeUndefined();
    const [r0, r1, r2] = r.ranks;
    expect(r2).toMatchObject({ status: 'error', error: { name: 'Error', message: 'boom on rank 2' } });

    expect(r1!.status).toBe('error');
    expect(r1!.error).toBeInstanceOf(RankFailedError);
    expect(r1!.error).toMatchObject({ rank: 1, failedRank: 2, failedMessage: 'Error: boom on rank 2', during: 'recv from rank 2 (tag 0)' });
    expect(r1!.error!.message).toBe('rank 1: recv from rank 2 (tag 0) cannot complete because rank 2 failed: Error: boom on rank 2');

    // Rank 0 waited on rank 1, but the report names rank 2, where the failure started.
    expect(r0!.error).toBeInstanceOf(RankFailedError);
    expect(r0!.error).toMatchObject({ rank: 0, failedRank: 2, failedMessage: 'Error: boom on rank 2', during: 'recv from rank 1 (tag 0)' });
  });

  it('fails a later send to a failed rank at once, even one that failed in a cascade', async () => {
    const r = await launch({ worldSize: 3, backend, program: program('failures', 'sendAfterPeerFailed'), output: 'ignore' });

    expect(r.ranks[0]!.error).toBeInstanceOf(RankFailedError);
    expect(r.ranks[0]!.error).toMatchObject({ rank: 0, failedRank: 2, during: 'send to rank 1 (tag 0)' });
    expect(r.trace.filter((e) => e.src === 0)).toEqual([]);
  });
});
