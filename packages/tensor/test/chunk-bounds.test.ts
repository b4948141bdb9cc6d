/**
 * chunkBounds(n, parts) is the kit's one uneven-split rule: `parts`
 * contiguous chunks that tile [0, n), the first n % parts one element longer.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { chunkBounds } from '../src/index.ts';

describe('chunkBounds', () => {
  it('tiles [0, n) exactly with `parts` contiguous chunks, for all n and parts', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 200 }), fc.integer({ min: 1, max: 40 }), (n, parts) => {
        const bounds = chunkBounds(n, parts);
        expect(bounds).toHaveLength(parts);
        expect(bounds[0]!.start).toBe(0);
        expect(bounds[parts - 1]!.end).toBe(n);
        bounds.forEach((b, i) => {
          expect(b.end).toBeGreaterThanOrEqual(b.start);
          if (i > 0) expect(b.start).toBe(bounds[i - 1]!.end);
        });
        // Every element lies in exactly one chunk.
        const owners = new Array<number>(n).fill(0);
        for (const b of bounds) for (let k = b.start; k < b.end; k++) owners[k]!++;
        expect(owners.every((c) => c === 1)).toBe(true);
      }),
      { seed: 301, numRuns: 500 },
    );
  });

  it('gives the first n % parts chunks one extra element, so sizes differ by at most one', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 200 }), fc.integer({ min: 1, max: 40 }), (n, parts) => {
        const sizes = chunkBounds(n, parts).map((b) => b.end - b.start);
        const small = Math.floor(n / parts);
        sizes.forEach((s, i) => expect(s).toBe(i < n % parts ? small + 1 : small));
      }),
      { seed: 302, numRuns: 500 },
    );
  });

  it('splits 10 into 4 as 3, 3, 2, 2 and 2 into 4 as 1, 1, 0, 0', () => {
    expect(chunkBounds(10, 4)).toEqual([
      { start: 0, end: 3 },
      { start: 3, end: 6 },
      { start: 6, end: 8 },
      { start: 8, end: 10 },
    ]);
    expect(chunkBounds(2, 4).map((b) => b.end - b.start)).toEqual([1, 1, 0, 0]);
  });

  it('rejects a negative or fractional n and fewer than one part', () => {
    expect(() => chunkBounds(-1, 2)).toThrow(RangeError);
    expect(() => chunkBounds(2.5, 2)).toThrow(RangeError);
    expect(() => chunkBounds(4, 0)).toThrow(/parts must be a positive integer/);
  });
});
