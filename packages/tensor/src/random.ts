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

function splitmix32(state: number): [number, number] {
  state = (state + 0x9e3779b9) | 0;
  let z = state;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  return [state, (z ^ (z >>> 16)) >>> 0];
}

/** Mixes a seed with extra integer keys (a rank, a step) into a new 32-bit seed. */
export function deriveSeed(seed: number, ...keys: number[]): number {
  // Start from 0: starting from `seed` would XOR the seed with itself in the
  // first round and make the result independent of it.
  let s = 0;
  let out = 0;
  for (const k of [seed, ...keys]) [s, out] = splitmix32((s ^ (k >>> 0)) >>> 0);
  return out >>> 0;
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
