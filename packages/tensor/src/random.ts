/**
 * Seeded random numbers. The algorithm is xoshiro128** (Blackman and Vigna),
 * a 128-bit-state generator built from 32-bit operations, seeded through
 * SplitMix32 so that nearby seeds give unrelated streams. A given seed yields
 * the same numbers on every run, machine, backend and rank.
 *
 * Normal samples use the Box-Muller transform, two uniforms per pair.
 */

/** Name of the algorithm behind `Generator`, for reports that record seeds. */
export const GENERATOR_ALGORITHM = 'xoshiro128**';

/** MurmurHash3's 32-bit finaliser: a bijection on 32-bit words in which every input bit moves about half the output bits. */
function fmix32(z: number): number {
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  return (z ^ (z >>> 16)) >>> 0;
}

function splitmix32(state: number): [number, number] {
  state = (state + 0x9e3779b9) | 0;
  return [state, fmix32(state)];
}

/**
 * The odd multiplier of deriveSeed's polynomial (exported for the test of
 * the figures below, not from the package), picked among candidates for
 * its lattice: the shortest nonzero (d0, d1) with d0*M + d1 = 0 (mod 2^32) has
 * max|d| = 58139, for three terms 1064, for four 128 (close to the best
 * possible, about 2^16, 2^10.7 and 2^8). It is 3 mod 4, so swapping two
 * neighbouring keys changes the result unless they differ by exactly 2^31.
 */
export const KEY_MULTIPLIER = 0x81b3ac9b;

/**
 * Mixes a seed with extra integer keys (a step, a rank, an index) into a new
 * 32-bit seed. Every value is reduced modulo 2^32 and must be an integer.
 *
 * It reads `[seed, ...keys]` as the digits of a polynomial in an odd
 * multiplier M modulo 2^32, with the list's length as the leading digit
 * (h = n*M^n + seed*M^(n-1) + ... + last key), then scrambles h with
 * MurmurHash3's finaliser, a bijection. What that guarantees, for lists of
 * the same length:
 *
 * - changing any one value (the seed or any key) always changes the result,
 *   since M is odd, so every power of M is invertible modulo 2^32;
 * - lists whose values all lie in [0, 58139) (two values), [0, 1064) (three)
 *   or [0, 128) (four) never collide, because two of them collide exactly
 *   when their difference is a lattice vector (see KEY_MULTIPLIER); bigger
 *   boxes of small keys were checked directly (test/random.test.ts);
 * - the order of the keys matters; and appending a 0 (or any even key) to a
 *   list always changes the result, since it changes h by an odd amount.
 *
 * Lists with large keys (hashes of names) collide about as often as random
 * 32-bit values do, about once in 2^32 pairs; no 32-bit seed can do better
 * for every list.
 *
 * The earlier version XORed each value into a SplitMix32 state and added the
 * constant g, so the state after (seed, a, b) was ((((seed + g) ^ a) + g) ^ b) + g:
 * lists of small keys that differed in two places often met on the same
 * state (20,800 of 24,000 (step, rank, index) seeds repeated), and a training
 * run drew the same batch at different steps. Hashing the state after every
 * key, as a random function would, is not enough either: 32 bits collide
 * about once among 10^5 lists (the birthday bound), where the polynomial
 * stays one-to-one on such grids of small keys.
 */
export function deriveSeed(seed: number, ...keys: number[]): number {
  const values = [seed, ...keys];
  let h = values.length;
  values.forEach((v, i) => {
    if (!Number.isInteger(v)) throw new TypeError(`deriveSeed: ${i === 0 ? 'the seed' : `key ${i - 1}`} must be an integer, got ${v}`);
    h = (Math.imul(h, KEY_MULTIPLIER) + (v | 0)) | 0;
  });
  return fmix32(h);
}

/** A seeded xoshiro128** stream of uniform and normal numbers. */
export class Generator {
  private s0 = 0;
  private s1 = 0;
  private s2 = 0;
  private s3 = 0;
  private spareNormal: number | null = null;

  /** `seed` is any integer; it is reduced to 32 bits. */
  constructor(readonly seed: number) {
    if (!Number.isFinite(seed) || !Number.isInteger(seed)) throw new TypeError(`Generator: seed must be an integer, got ${seed}`);
    let s = seed >>> 0;
    let w: number;
    [s, w] = splitmix32(s); this.s0 = w;
    [s, w] = splitmix32(s); this.s1 = w;
    [s, w] = splitmix32(s); this.s2 = w;
    [, w] = splitmix32(s); this.s3 = w;
  }

  /** The next 32 random bits as an unsigned integer. */
  nextUint32(): number {
    const result = Math.imul(rotl(Math.imul(this.s1, 5), 7), 9) >>> 0;
    const t = this.s1 << 9;
    this.s2 ^= this.s0;
    this.s3 ^= this.s1;
    this.s1 ^= this.s2;
    this.s0 ^= this.s3;
    this.s2 ^= t;
    this.s3 = rotl(this.s3, 11);
    return result;
  }

  /** A uniform double in [0, 1) with 53 random bits. */
  uniform(): number {
    const hi = this.nextUint32() >>> 5;
    const lo = this.nextUint32() >>> 6;
    return (hi * 67108864 + lo) / 9007199254740992;
  }

  /** A standard normal sample (mean 0, variance 1). */
  normal(): number {
    if (this.spareNormal !== null) {
      const z = this.spareNormal;
      this.spareNormal = null;
      return z;
    }
    const u1 = 1 - this.uniform(); // in (0, 1], so log is finite
    const u2 = this.uniform();
    const r = Math.sqrt(-2 * Math.log(u1));
    this.spareNormal = r * Math.sin(2 * Math.PI * u2);
    return r * Math.cos(2 * Math.PI * u2);
  }

  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.uniform() * n);
  }

  /** A Fisher-Yates shuffle of `[0, n)`. */
  permutation(n: number): number[] {
    const p = Array.from({ length: n }, (_, i) => i);
    for (let i = n - 1; i > 0; i--) {
      const j = this.int(i + 1);
      [p[i], p[j]] = [p[j]!, p[i]!];
    }
    return p;
  }
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}
