/**
 * The secret fences of the checks of ex02 and ex04-ex09 (src/fences.ts):
 * tags that only the key gives, and the trace cut into phases at them. The
 * corpus (mistakes.test.ts) shows them at work in real gradings; these pin
 * down the cutting on traces written by hand.
 */
import { describe, expect, it } from 'vitest';
import type { TraceEvent } from '@dtlab/runtime';
import { fenceTags, splitPhases } from '../src/fences.ts';

function event(src: number, dst: number, tag: number, bytes: number): TraceEvent {
  return { seq: 0, src, dst, tag, bytes, count: bytes / 4, dtype: 'float32', vtStartUs: 0, vtEndUs: 0 };
}

describe('fenceTags', () => {
  it('gives distinct tags above the collectives, the same for the same key and launch, others for another key or launch', () => {
    const tags = fenceTags('secret-key', 42, 3);
    expect(new Set(tags).size).toBe(3);
    for (const t of tags) {
      expect(Number.isSafeInteger(t)).toBe(true);
      expect(t).toBeGreaterThanOrEqual(2 ** 40);
      expect(t).toBeLessThan(2 ** 41);
    }
    expect(fenceTags('secret-key', 42, 3)).toEqual(tags);
    expect(fenceTags('other-key', 42, 3).some((t) => tags.includes(t))).toBe(false);
    expect(fenceTags('secret-key', 43, 3).some((t) => tags.includes(t))).toBe(false);
  });
});

describe('splitPhases', () => {
  const tags = fenceTags('k', 1, 2);
  const [f0, f1] = tags as [number, number];

  it('adds each rank\'s bytes into the phase between its fences, self-sends only into all', () => {
    const trace = [
      event(0, 1, 2 ** 30, 100), // before fence 0
      event(0, 0, f0, 0),
      event(1, 0, 2 ** 30 + 1, 40), // rank 1 before its fence 0
      event(1, 1, f0, 0),
      event(0, 1, 7, 12),
      event(0, 0, 9, 8), // a self-send in the backward
      event(1, 0, 2 ** 30 + 2, 20),
      event(0, 0, f1, 0),
      event(1, 1, f1, 0),
      event(1, 0, 3, 4), // after the last fence
    ];
    const phases = splitPhases(trace, 2, tags);
    expect(phases).toEqual([
      { rank: 0, toOthers: [100, 12, 0], all: [100, 20, 0], messages: [1, 2, 0], largest: [100, 12, 0], tags: [[2 ** 30], [7, 9], []], events: [[trace[0]], [trace[4], trace[5]], []] },
      { rank: 1, toOthers: [40, 20, 4], all: [40, 20, 4], messages: [1, 1, 1], largest: [40, 20, 4], tags: [[2 ** 30 + 1], [2 ** 30 + 2], [3]], events: [[trace[2]], [trace[6]], [trace[9]]] },
    ]);
  });

  it('fails on a fence out of order or repeated, and on one missing', () => {
    expect(splitPhases([event(0, 0, f1, 0), event(0, 0, f0, 0)], 1, tags)).toMatch(/rank 0 sent fence 1 .* where fence 0 was due/);
    expect(splitPhases([event(0, 0, f0, 0), event(0, 0, f0, 0), event(0, 0, f1, 0)], 1, tags)).toMatch(/fence 0 .* where fence 1 was due/);
    expect(splitPhases([event(0, 0, f0, 0), event(1, 1, f0, 0), event(1, 1, f1, 0)], 2, tags)).toMatch(/rank 0 passed 1 of the 2 fences/);
  });

  it('counts a fence tag sent to another rank as traffic, not as a fence', () => {
    const phases = splitPhases([event(0, 1, f0, 16), event(0, 0, f0, 0), event(0, 0, f1, 0), event(1, 1, f0, 0), event(1, 1, f1, 0)], 2, tags);
    expect(typeof phases === 'string' ? phases : phases[0]).toEqual({ rank: 0, toOthers: [16, 0, 0], all: [16, 0, 0], messages: [1, 0, 0], largest: [16, 0, 0], tags: [[f0], [], []], events: [[event(0, 1, f0, 16)], [], []] });
  });
});
