/**
 * Seeded randomness: a seed fixes the stream, different seeds and derived
 * seeds give different streams, and the distributions have the right range,
 * mean and variance. Nothing random is drawn without a seed.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { GENERATOR_ALGORITHM, Generator, deriveSeed, rand, randn, uniform } from '../src/index.ts';

const draw = (g: Generator, n: number, f: (g: Generator) => number) => Array.from({ length: n }, () => f(g));

describe('Generator', () => {
  it('gives the same numbers for the same seed', () => {
    fc.assert(
      fc.property(fc.integer(), (seed) => {
        expect(draw(new Generator(seed), 8, (g) => g.nextUint32())).toEqual(draw(new Generator(seed), 8, (g) => g.nextUint32()));
        expect(draw(new Generator(seed), 5, (g) => g.normal())).toEqual(draw(new Generator(seed), 5, (g) => g.normal()));
      }),
      { seed: 701, numRuns: 100 },
    );
  });

  it('gives different numbers for different seeds, including neighbouring seeds', () => {
    fc.assert(
      fc.property(fc.nat(2 ** 31), fc.integer({ min: 1, max: 1000 }), (seed, delta) => {
        expect(draw(new Generator(seed), 4, (g) => g.nextUint32())).not.toEqual(draw(new Generator(seed + delta), 4, (g) => g.nextUint32()));
      }),
      { seed: 702, numRuns: 200 },
    );
  });

  it('nextUint32 gives unsigned 32-bit integers', () => {
    const xs = draw(new Generator(3), 1000, (g) => g.nextUint32());
    expect(xs.every((x) => Number.isInteger(x) && x >= 0 && x < 2 ** 32)).toBe(true);
    // The top bit is set about half the time.
    const high = xs.filter((x) => x >= 2 ** 31).length;
    expect(high).toBeGreaterThan(400);
    expect(high).toBeLessThan(600);
  });

  it('uniform() covers [0, 1) evenly', () => {
    const xs = draw(new Generator(4), 100_000, (g) => g.uniform());
    expect(xs.every((x) => x >= 0 && x < 1)).toBe(true);
    const buckets = new Array<number>(10).fill(0);
    for (const x of xs) buckets[Math.floor(x * 10)]!++;
    // Each bucket expects 10000 ± 95 (one standard deviation).
    for (const b of buckets) expect(Math.abs(b - 10_000)).toBeLessThan(500);
  });

  it('permutation(n) is a permutation of [0, n), and depends on the seed', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 60 }), fc.integer(), (n, seed) => {
        const p = new Generator(seed).permutation(n);
        expect([...p].sort((a, b) => a - b)).toEqual(Array.from({ length: n }, (_, i) => i));
      }),
      { seed: 703, numRuns: 200 },
    );
    expect(new Generator(1).permutation(20)).not.toEqual(new Generator(2).permutation(20));
  });

  it('permutation(3) draws each of the 6 orders about equally often (an unbiased shuffle)', () => {
    const g = new Generator(6);
    const counts = new Map<string, number>();
    for (let i = 0; i < 6000; i++) {
      const key = g.permutation(3).join('');
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    expect([...counts.keys()].sort()).toEqual(['012', '021', '102', '120', '201', '210']);
    // Each expects 1000 ± 29 (one standard deviation).
    for (const c of counts.values()) expect(Math.abs(c - 1000)).toBeLessThan(150);
  });

  it('int(n) stays in [0, n) and hits every value', () => {
    const xs = draw(new Generator(5), 2000, (g) => g.int(7));
    expect(new Set(xs)).toEqual(new Set([0, 1, 2, 3, 4, 5, 6]));
  });

  it('rejects a seed that is not an integer', () => {
    expect(() => new Generator(1.5)).toThrow(TypeError);
    expect(() => new Generator(NaN)).toThrow(/seed must be an integer/);
  });

  it('names its algorithm for reports', () => {
    expect(GENERATOR_ALGORITHM).toBe('xoshiro128**');
  });
});

describe('deriveSeed', () => {
  it('is deterministic and gives an unsigned 32-bit integer', () => {
    expect(deriveSeed(42, 1, 2)).toBe(deriveSeed(42, 1, 2));
    fc.assert(
      fc.property(fc.integer(), fc.array(fc.nat(), { maxLength: 3 }), (seed, keys) => {
        const s = deriveSeed(seed, ...keys);
        expect(Number.isInteger(s) && s >= 0 && s < 2 ** 32).toBe(true);
      }),
      { seed: 704, numRuns: 100 },
    );
  });

  it('differs per key: one seed gives a distinct seed to each of 1000 ranks', () => {
    const seeds = Array.from({ length: 1000 }, (_, rank) => deriveSeed(7, rank));
    expect(new Set(seeds).size).toBe(1000);
  });

  it('differs per seed for the same key', () => {
    const seeds = Array.from({ length: 1000 }, (_, seed) => deriveSeed(seed, 3));
    expect(new Set(seeds).size).toBe(1000);
    expect(deriveSeed(1)).not.toBe(deriveSeed(2));
  });

  it('depends on the order of keys', () => {
    expect(deriveSeed(9, 1, 2)).not.toBe(deriveSeed(9, 2, 1));
    expect(deriveSeed(9, 0)).not.toBe(deriveSeed(9));
  });
});

describe('random tensors', () => {
  it('rand is in [0, 1) for float32 and float64', () => {
    for (const dtype of ['float32', 'float64'] as const) {
      const xs = rand([100_000], { seed: 11, dtype }).toArray();
      expect(xs.every((x) => x >= 0 && x < 1), dtype).toBe(true);
      const mean = xs.reduce((s, x) => s + x, 0) / xs.length;
      expect(Math.abs(mean - 0.5), dtype).toBeLessThan(0.01);
    }
  });

  it('randn has mean ≈ 0 and variance ≈ 1 over 10^5 samples', () => {
    for (const dtype of ['float32', 'float64'] as const) {
      const xs = randn([100_000], { seed: 12, dtype }).toArray();
      const mean = xs.reduce((s, x) => s + x, 0) / xs.length;
      const variance = xs.reduce((s, x) => s + (x - mean) ** 2, 0) / xs.length;
      // Standard errors: 0.003 for the mean, 0.0045 for the variance.
      expect(Math.abs(mean)).toBeLessThan(0.02);
      expect(Math.abs(variance - 1)).toBeLessThan(0.03);
      // About 68.3% of a normal lies within one standard deviation.
      const within = xs.filter((x) => Math.abs(x) < 1).length / xs.length;
      expect(Math.abs(within - 0.6827)).toBeLessThan(0.01);
    }
  });

  it('randn samples are uncorrelated, including the two of each Box-Muller pair', () => {
    const xs = randn([100_000], { seed: 15, dtype: 'float64' }).toArray();
    const corr = (lag: number, step: number) => {
      let s = 0;
      let n = 0;
      for (let i = 0; i + lag < xs.length; i += step, n++) s += xs[i]! * xs[i + lag]!;
      return s / n;
    };
    // Standard error about 0.0045 for 50000 pairs.
    expect(Math.abs(corr(1, 2))).toBeLessThan(0.03);
    expect(Math.abs(corr(2, 1))).toBeLessThan(0.03);
  });

  it('float32 rand draws 24 random bits per sample (multiples of 2^-24), so it can never round up to 1', () => {
    const xs = rand([10_000], { seed: 16 }).toArray();
    expect(xs.every((x) => Number.isInteger(x * 2 ** 24))).toBe(true);
  });

  it('the same seed gives the same tensor, a different seed a different one', () => {
    expect(randn([3, 4], { seed: 1 }).toArray()).toEqual(randn([3, 4], { seed: 1 }).toArray());
    expect(randn([3, 4], { seed: 1 }).toArray()).not.toEqual(randn([3, 4], { seed: 2 }).toArray());
    expect(rand([5], { seed: 1, dtype: 'float64' }).toArray()).toEqual(rand([5], { seed: 1, dtype: 'float64' }).toArray());
  });

  it('a generator continues its stream across calls', () => {
    const g = new Generator(13);
    const first = randn([3], { generator: g, dtype: 'float64' }).toArray();
    const second = randn([3], { generator: g, dtype: 'float64' }).toArray();
    expect(second).not.toEqual(first);
    expect([...first, ...second]).toEqual(randn([6], { seed: 13, dtype: 'float64' }).toArray());
  });

  it('uniform(low, high) stays in [low, high)', () => {
    const xs = uniform([10_000], -3, 5, { seed: 14, dtype: 'float64' }).toArray();
    expect(Math.min(...xs)).toBeGreaterThanOrEqual(-3);
    expect(Math.max(...xs)).toBeLessThan(5);
    expect(Math.min(...xs)).toBeLessThan(-2.9);
    expect(Math.max(...xs)).toBeGreaterThan(4.9);
  });

  it('random tensors honour requiresGrad', () => {
    expect(randn([2], { seed: 1, requiresGrad: true }).requiresGrad).toBe(true);
    expect(uniform([2], 0, 1, { seed: 1, requiresGrad: true }).requiresGrad).toBe(true);
  });

  it('without a seed throw a TypeError that says to pass a seed', () => {
    expect(() => randn([2], {})).toThrow(TypeError);
    expect(() => randn([2], {})).toThrow('randn: pass { seed } or { generator }');
    expect(() => rand([2], {})).toThrow(/rand: pass \{ seed \}/);
  });
});
