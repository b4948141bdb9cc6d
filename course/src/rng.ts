/**
 * Seeded randomness for questions and quiz draws. Everything a question shows
 * comes from one of these streams, so a seed (recorded in the attempt) gives
 * back the same variant on any machine, which is what makes an attempt
 * regradable instead of self-reported.
 */
import { Generator, deriveSeed } from '@dtlab/tensor';

/** FNV-1a over the UTF-16 code units of `text`: a stable 32-bit key for a question id. */
export function hashString(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** Mixes a seed with keys into a new 32-bit seed (the tensor library's `deriveSeed`). */
export function mixSeed(seed: number, ...keys: number[]): number {
  return deriveSeed(seed, ...keys);
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
