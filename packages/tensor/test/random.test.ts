/**
 * Seeded randomness: a seed fixes the stream, different seeds and derived
 * seeds give different streams, and the distributions have the right range,
 * mean and variance. Nothing random is drawn without a seed.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { GENERATOR_ALGORITHM, Generator, deriveSeed, rand, randn, uniform } from '../src/index.ts';
import { KEY_MULTIPLIER } from '../src/random.ts';

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

  it('keeps its stream: the first words of seeds 0 and 42 (a report that records a seed replays it)', () => {
    expect(draw(new Generator(0), 4, (g) => g.nextUint32())).toEqual([3809008728, 1133695204, 53579671, 2891528803]);
    expect(draw(new Generator(42), 4, (g) => g.nextUint32())).toEqual([2837322924, 544945897, 479756282, 3500138142]);
  });

  it('names its algorithm for reports', () => {
    expect(GENERATOR_ALGORITHM).toBe('xoshiro128**');
  });
});

describe('deriveSeed', () => {
  /** How many of the lists in the box [0, n0) x [0, n1) x ... give a seed some other list of the box gave. */
  const repeats = (dims: number[]): number => {
    const seen = new Set<number>();
    let count = 0;
    const walk = (prefix: number[]): void => {
      if (prefix.length === dims.length) {
        count++;
        seen.add(deriveSeed(prefix[0]!, ...prefix.slice(1)));
        return;
      }
      for (let k = 0; k < dims[prefix.length]!; k++) walk([...prefix, k]);
    };
    walk([]);
    return count - seen.size;
  };

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

  it('gives 102,400 distinct seeds to every (seed 0..3, step 0..199, rank 0..7, micro-batch 0..15)', () => {
    // The earlier XOR-and-add version repeated all but 240 of them; a random
    // 32-bit function would repeat about one (102400^2 / 2^33).
    expect(repeats([4, 200, 8, 16])).toBe(0);
  });

  it('stays one-to-one on other boxes of small keys: (seed, step, rank), (seed, 1000 + rank, step), five values', () => {
    expect(repeats([16, 500, 64])).toBe(0);
    const offset = new Set<number>();
    for (let seed = 0; seed < 8; seed++) for (let rank = 0; rank < 64; rank++) for (let step = 0; step < 200; step++) offset.add(deriveSeed(seed, 1000 + rank, step));
    expect(offset.size).toBe(8 * 64 * 200);
    expect(repeats([4, 12, 100, 8, 16])).toBe(0);
  });

  it('has the lattice KEY_MULTIPLIER documents, so the boxes it names are one-to-one', () => {
    // Two same-length lists collide exactly when their difference d has
    // sum d_j M^(n-1-j) = 0 mod 2^32; search for the shortest such d.
    const M = BigInt(KEY_MULTIPLIER);
    const MOD = 2n ** 32n;
    const powers = (n: number) => Array.from({ length: n }, (_, j) => Number((M ** BigInt(n - 1 - j)) % MOD));
    const signed = (r: number) => (r > 2 ** 31 ? r - 2 ** 32 : r);
    /** The smallest max|d| over nonzero d of n terms, searched up to `cap`; the last term is solved for. */
    const shortest = (n: number, cap: number): number => {
      const c = powers(n);
      let best = cap + 1;
      const walk = (j: number, acc: number, size: number): void => {
        if (j === n - 1) {
          if (size === 0) return;
          const last = Math.abs(signed((((-acc) % 2 ** 32) + 2 ** 32) % 2 ** 32));
          best = Math.min(best, Math.max(size, last));
          return;
        }
        for (let x = -(best - 1); x <= best - 1; x++) walk(j + 1, (acc + x * c[j]!) % 2 ** 32, Math.max(size, Math.abs(x)));
      };
      walk(0, 0, 0);
      return best;
    };
    expect(KEY_MULTIPLIER % 2).toBe(1);
    expect(shortest(2, 60_000)).toBe(58139);
    expect(shortest(3, 1100)).toBe(1064);
    expect(shortest(4, 130)).toBe(128);
  });

  it('changes when any one value changes: the seed or any key', () => {
    fc.assert(
      fc.property(fc.array(fc.integer(), { minLength: 1, maxLength: 5 }), fc.nat(4), fc.integer({ min: 1, max: 2 ** 32 - 1 }), (values, at, delta) => {
        const i = at % values.length;
        const changed = values.map((v, j) => (j === i ? v + delta : v));
        expect(deriveSeed(changed[0]!, ...changed.slice(1))).not.toBe(deriveSeed(values[0]!, ...values.slice(1)));
      }),
      { seed: 705, numRuns: 500 },
    );
  });

  it('moves about half the bits of the result when one key moves by one', () => {
    let flipped = 0;
    let pairs = 0;
    for (let step = 0; step < 200; step++)
      for (let rank = 0; rank < 8; rank++) {
        const here = deriveSeed(3, step, rank);
        for (const next of [deriveSeed(3, step + 1, rank), deriveSeed(3, step, rank + 1), deriveSeed(4, step, rank)]) {
          let d = (here ^ next) >>> 0;
          for (; d; d &= d - 1) flipped++;
          pairs++;
        }
      }
    // 4800 pairs of 32 bits: the mean is 16 with a standard error of 0.04.
    expect(Math.abs(flipped / pairs - 16)).toBeLessThan(0.3);
  });

  it('fills the low 8 bits evenly over a grid of small keys', () => {
    const counts = new Array<number>(256).fill(0);
    for (let seed = 0; seed < 4; seed++) for (let step = 0; step < 200; step++) for (let rank = 0; rank < 8; rank++) for (let i = 0; i < 16; i++) counts[deriveSeed(seed, step, rank, i) & 255]!++;
    const expected = (4 * 200 * 8 * 16) / 256;
    const chi2 = counts.reduce((s, c) => s + (c - expected) ** 2 / expected, 0);
    // 255 degrees of freedom: mean 255, standard deviation 22.6; 370 is about 5 of them.
    expect(chi2).toBeLessThan(370);
    // And the lowest bit alone: 51200 expected, standard deviation 160.
    const odd = counts.reduce((s, c, v) => s + (v & 1 ? c : 0), 0);
    expect(Math.abs(odd - 51_200)).toBeLessThan(800);
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
    for (let a = 0; a < 50; a++) for (let b = 0; b < 50; b++) if (a !== b) expect(deriveSeed(0, a, b, 7)).not.toBe(deriveSeed(0, b, a, 7));
  });

  it('tells a list from the list with a 0 appended: (a) and (a, 0) differ', () => {
    expect(deriveSeed(9, 0)).not.toBe(deriveSeed(9));
    fc.assert(
      fc.property(fc.array(fc.integer(), { minLength: 1, maxLength: 4 }), (values) => {
        expect(deriveSeed(values[0]!, ...values.slice(1), 0)).not.toBe(deriveSeed(values[0]!, ...values.slice(1)));
      }),
      { seed: 706, numRuns: 300 },
    );
    for (let a = 0; a < 2000; a++) expect(deriveSeed(5, a, 0)).not.toBe(deriveSeed(5, a));
  });

  it('reduces values modulo 2^32 and rejects values that are not integers', () => {
    expect(deriveSeed(-1, 2)).toBe(deriveSeed(2 ** 32 - 1, 2));
    expect(deriveSeed(1, 2 ** 32 + 5)).toBe(deriveSeed(1, 5));
    expect(() => deriveSeed(1.5)).toThrow(TypeError);
    expect(() => deriveSeed(1, 2, NaN)).toThrow('deriveSeed: key 1 must be an integer, got NaN');
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
