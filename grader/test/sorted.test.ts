import { expect, it } from 'vitest';
import { firstAtLeast } from '../src/sorted.ts';

it('finds the first value not below x in ascending values, the length past the end', () => {
  const v = Float32Array.from([-2, 0, 0, 1.5, 3]);
  expect([-3, -2, -1, 0, 1, 1.5, 2, 3, 4].map((x) => firstAtLeast(v, x))).toEqual([0, 0, 1, 1, 3, 3, 4, 4, 5]);
  expect(firstAtLeast([], 1)).toBe(0);
});
