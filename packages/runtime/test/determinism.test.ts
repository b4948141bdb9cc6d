import { describe, expect, it } from 'vitest';
import { launch } from '../src/index.ts';
import { program } from './support.ts';

describe('the inline backend', () => {
  it('gives the same values, trace (seq included) and stats on every run', async () => {
    const run = () => launch({ worldSize: 4, program: program('exchange', 'mixed') });
    const [a, b, c] = [await run(), await run(), await run()];

    expect(a.ok).toBe(true);
    expect(a.trace.length).toBeGreaterThan(0);
    for (const other of [b, c]) {
      expect(other.ranks).toEqual(a.ranks);
      expect(other.trace).toEqual(a.trace);
      expect(other.stats).toEqual(a.stats);
    }
  });
});
