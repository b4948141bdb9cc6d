import { describe, expect, it } from 'vitest';
import { launch, RankFailedError } from '../src/index.ts';
import { program } from './support.ts';

describe('a worker rank that calls process.exit', () => {
  it("ends that rank with status 'killed' and fails its peer's recv, while the launcher carries on", async () => {
    const r = await launch({ worldSize: 2, backend: 'workers', program: program('process-exit', 'exitOnRank1'), output: 'ignore' });

    expect(r.ranks[1]!.status).toBe('killed');
    expect(r.ranks[1]!.error!.message).toBe('rank 1: its worker exited (code 3) before the program returned: did it call process.exit()?');
    expect(r.ranks[0]!.status).toBe('error');
    expect(r.ranks[0]!.error).toBeInstanceOf(RankFailedError);
    expect(r.ranks[0]!.error).toMatchObject({ failedRank: 1 });
  });
});
