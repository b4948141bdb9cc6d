import { describe, expect, it } from 'vitest';
import { launch, type TraceEvent } from '../src/index.ts';
import { program } from './support.ts';

/** Trace events without their seq (the order the fabric accepted them, which thread timing decides), sorted. */
function multiset(trace: TraceEvent[]): Omit<TraceEvent, 'seq'>[] {
  const key = (e: Omit<TraceEvent, 'seq'>) => JSON.stringify([e.src, e.dst, e.tag, e.vtStartUs, e.vtEndUs, e.bytes]);
  return trace.map(({ seq: _seq, ...rest }) => rest).sort((x, y) => key(x).localeCompare(key(y)));
}

describe('the inline and workers backends', () => {
  it('give the same values, the same trace events (ignoring seq) and the same stats for one program', async () => {
    const spec = { worldSize: 4, program: program('exchange', 'mixed'), output: 'ignore' } as const;
    const inline = await launch({ ...spec, backend: 'inline' });
    expect(inline.ok).toBe(true);
    // With and without the launching thread polling for messages (pollUs), which changes the timing only.
    for (const pollUs of [0, 1000]) {
      const workers = await launch({ ...spec, backend: 'workers', pollUs });
      expect(workers.ranks).toEqual(inline.ranks);
      expect(multiset(workers.trace)).toEqual(multiset(inline.trace));
      expect(workers.stats).toEqual(inline.stats);
    }
  });
});
