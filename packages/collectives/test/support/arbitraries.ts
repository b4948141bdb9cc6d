/**
 * fast-check arbitraries for collective runs: a world size of 1..8 and a
 * buffer length up to a few hundred, biased towards the lengths that break
 * chunking: 0, 1, lengths below N, primes and lengths that N does not divide.
 */
import fc from 'fast-check';

export const MAX_WORLD = 8;
export const MAX_LEN = 300;

/** Lengths that every property should meet: empty, single, small and large primes. */
export const SPECIAL_LENGTHS = [0, 1, 2, 3, 5, 7, 11, 13, 31, 97, 101, 257, 293];

/** A length for `n` ranks. */
export function lengthArb(n: number): fc.Arbitrary<number> {
  return fc.oneof(
    fc.constantFrom(...SPECIAL_LENGTHS),
    fc.integer({ min: 0, max: n - 1 }), // fewer elements than ranks: some chunks are empty
    fc.tuple(fc.integer({ min: 0, max: Math.floor(MAX_LEN / n) - 1 }), fc.integer({ min: 1, max: Math.max(1, n - 1) })).map(([k, j]) => k * n + (n > 1 ? j : 0)), // not a multiple of n
    fc.integer({ min: 0, max: Math.floor(MAX_LEN / n) }).map((k) => k * n), // a multiple of n
    fc.integer({ min: 0, max: MAX_LEN }),
  );
}

/** A run: world size, length and the seed of the inputs. */
export interface RunCase {
  n: number;
  len: number;
  seed: number;
}

export const seedArb = fc.integer({ min: 0, max: 2 ** 31 - 1 });

/** World size 1..8, a length for it, and a data seed. */
export const runCaseArb: fc.Arbitrary<RunCase> = fc.integer({ min: 1, max: MAX_WORLD }).chain((n) => fc.record({ n: fc.constant(n), len: lengthArb(n), seed: seedArb }));

/** Cases every property starts with, whatever fast-check draws next. */
export const EDGE_CASES: [RunCase][] = [
  [{ n: 1, len: 0, seed: 1 }],
  [{ n: 1, len: 5, seed: 2 }],
  [{ n: 8, len: 0, seed: 3 }],
  [{ n: 8, len: 1, seed: 4 }],
  [{ n: 8, len: 7, seed: 5 }],
  [{ n: 3, len: 10, seed: 6 }],
  [{ n: 7, len: 97, seed: 7 }],
  [{ n: 5, len: 257, seed: 8 }],
  [{ n: 4, len: 64, seed: 9 }],
  [{ n: 6, len: 293, seed: 10 }],
];
