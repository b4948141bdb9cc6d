import { describe, expect, it } from 'vitest';
import { launch } from '../src/index.ts';
import { program } from './support.ts';

describe('module-level state', () => {
  it('is per rank under workers: a counter every rank increments stays 1 on each', async () => {
    const r = await launch({ worldSize: 3, backend: 'workers', program: program('module-state', 'bumpCounter'), output: 'ignore' });

    expect(r.ranks.map((o) => o.value)).toEqual([1, 1, 1]);
  });

  it('is shared under inline (one module instance for all ranks): the counter reaches worldSize', async () => {
    // This is why untrusted code and checks of isolation run on workers.
    const r = await launch({ worldSize: 3, program: program('module-state', 'bumpCounter') });

    expect(r.ranks.map((o) => o.value)).toEqual([3, 3, 3]);
  });
});
