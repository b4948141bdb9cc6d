/**
 * Seeded randomness for questions and quiz draws. Everything a question shows
 * comes from one of these streams, so a seed (recorded in the attempt) gives
 * back the same variant on any machine, which is what makes an attempt
 * regradable instead of self-reported.
 */
import { Generator } from '@dtlab/tensor';

/** FNV-1a over the UTF-16 code units of `text`: a stable 32-bit key for a question id. */
export function hashString(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/**
 * Mixes a seed with keys into a new 32-bit seed. This is frozen: every
 * attempt file ever recorded is regraded by rebuilding its questions from
 * its seed through this function, so a change would grade old answers
 * against other questions. It is the derivation the tensor library's
 * `deriveSeed` used until that one changed: each value XORed into a
 * SplitMix32 state (which then adds 0x9e3779b9), the last state scrambled
 * by MurmurHash3's finaliser. Its weakness, lists of small keys meeting on
 * the same state, does not reach the course: its keys are 32-bit hashes of
 * question ids and a fixed stream key, and lists that differ only in their
 * last value never meet (each step is one-to-one in its value).
 */
export function mixSeed(seed: number, ...keys: number[]): number {
  let state = 0;
  for (const value of [seed, ...keys]) state = ((state ^ (value >>> 0)) + 0x9e3779b9) | 0;
  let z = Math.imul(state ^ (state >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  return (z ^ (z >>> 16)) >>> 0;
}

/** A seeded stream with the few draws a question needs. */
export class Rng {
  private readonly g: Generator;

  constructor(readonly seed: number) {
    this.g = new Generator(seed);
  }

  /** A uniform float in [0, 1). */
  uniform(): number {
    return this.g.uniform();
  }

  /** A uniform integer in [lo, hi], both ends included. */
  int(lo: number, hi: number): number {
    if (!Number.isInteger(lo) || !Number.isInteger(hi) || hi < lo) throw new RangeError(`Rng.int: need integers lo <= hi, got ${lo}, ${hi}`);
    return lo + Math.floor(this.g.uniform() * (hi - lo + 1));
  }

  /** One element of `items`, uniformly. */
  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('Rng.pick: nothing to pick from');
    return items[Math.floor(this.g.uniform() * items.length)]!;
  }

  /** A shuffled copy of `items` (Fisher-Yates). */
  shuffle<T>(items: readonly T[]): T[] {
    const out = items.slice();
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.floor(this.g.uniform() * (i + 1));
      [out[i], out[j]] = [out[j]!, out[i]!];
    }
    return out;
  }
}
