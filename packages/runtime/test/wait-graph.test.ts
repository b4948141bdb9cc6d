import { describe, expect, it } from 'vitest';
import { findCycle } from '../src/fabric/wait-graph.ts';

describe('findCycle on the wait-for graph (rank -> ranks it waits for)', () => {
  it('finds a cycle, starting from its lowest rank', () => {
    expect(findCycle(new Map([[0, [2]], [1, [0]], [2, [1]]]))).toEqual([0, 2, 1]);
  });

  it('finds a two-rank cycle behind a rank that merely waits on it', () => {
    expect(findCycle(new Map([[0, [1]], [1, [2]], [2, [1]]]))).toEqual([1, 2]);
  });

  it('returns [] when every wait ends at a rank that waits for nothing (finished or failed)', () => {
    expect(findCycle(new Map([[0, [1]], [2, [1]]]))).toEqual([]);
  });

  it('follows every edge of a rank that waits on several (a barrier)', () => {
    expect(findCycle(new Map([[0, [3, 1]], [1, [0]]]))).toEqual([0, 1]);
  });
});
