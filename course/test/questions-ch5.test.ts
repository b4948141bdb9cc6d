/**
 * Chapter 5's bank: every question for 50 attempt seeds, the way an attempt
 * draws them (the answer computes and is graded right, every misconception
 * and distractor wrong), then answers against references outside the
 * questions' own code: the fabric's virtual clock, bisection on the α-β
 * times, a numerical minimisation of the loss surface, and the formulas
 * turned around.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { allReduce, estimateTime } from '@dtlab/collectives';
import { launch } from '@dtlab/runtime';
import { full } from '@dtlab/tensor';
import bank5 from '../chapters/05-profiling-and-scaling/bank.ts';
import { ringRecursiveDoublingCrossoverBytes, ringTreeCrossoverBytes } from '../chapters/05-profiling-and-scaling/questions/collective-choice.ts';
import { CHINCHILLA_APPROACH_3, computeOptimal, lawLoss, type LossLaw } from '../chapters/05-profiling-and-scaling/questions/scaling-laws.ts';
import { sci } from '../chapters/05-profiling-and-scaling/questions/numbers.ts';
import { variantProblems } from '../src/check/bank.ts';
import { drawQuiz, formatNumber, present, regradeAttempt, variantSeed, type NumericVariant } from '../src/index.ts';
import { cleanup, cli, scratch } from './helpers.ts';

afterAll(cleanup);

const SEEDS = Array.from({ length: 50 }, (_, i) => i + 1);

/** The variant of question `id` for attempt seed `seed`. */
function variant(id: string, seed: number) {
  const q = bank5.questions.find((x) => x.id === id);
  if (!q) throw new Error(`no question ${id} in chapter 5's bank`);
  return present(q, variantSeed(seed, id));
}

/** The variant of a numeric question. */
function numericVariant(id: string, seed: number): NumericVariant & { options?: never } {
  const p = variant(id, seed);
  if (p.kind !== 'numeric') throw new Error(`${id} is not numeric`);
  return p as NumericVariant & { options?: never };
}

/** The number after `name = ` in a prompt (plain digits, with thousands commas allowed). */
function param(prompt: string, name: string): number {
  const m = new RegExp(`${name} = ([0-9][0-9,.]*)`).exec(prompt);
  if (!m) throw new Error(`no '${name} = ' in: ${prompt}`);
  return Number(m[1]!.replace(/,/g, '').replace(/\.$/, ''));
}

/** A number written by `sci` ("1.3·10^9", "10^21") or plainly. */
function readSci(text: string): number {
  const m = /^(?:([0-9.]+)·)?10\^(\d+)$/.exec(text);
  return m ? Number(m[1] ?? 1) * 10 ** Number(m[2]) : Number(text);
}

describe('chapter 5 bank', () => {
  it('has at least 15 questions, at least half of them numeric, with unique ids, all in use', () => {
    expect(bank5.chapter).toBe(5);
    expect(bank5.questions.length).toBeGreaterThanOrEqual(15);
    expect(bank5.questions.filter((q) => q.kind === 'numeric').length * 2).toBeGreaterThanOrEqual(bank5.questions.length);
    expect(new Set(bank5.questions.map((q) => q.id)).size).toBe(bank5.questions.length);
    expect(bank5.questions.every((q) => q.since <= bank5.revision && q.retired === undefined)).toBe(true);
  });

  for (const q of bank5.questions) {
    it(`${q.id}: 50 variants compute, grade their answer right and every misconception and distractor wrong`, () => {
      const prompts = new Set<string>();
      for (const seed of SEEDS) {
        const p = present(q, variantSeed(seed, q.id));
        expect(p.kind).toBe(q.kind);
        expect(variantProblems(p), `seed ${seed}`).toEqual([]);
        expect(p.explanation.length, `seed ${seed}`).toBeGreaterThan(40);
        if (p.kind === 'numeric') for (const m of p.misconceptions) expect(m.why.length, `seed ${seed}`).toBeGreaterThan(20);
        else for (const o of p.options) expect(o.why.length, `seed ${seed}`).toBeGreaterThan(20);
        prompts.add(p.prompt);
      }
      // Questions vary with the seed: that is what makes each attempt a new variant.
      expect(prompts.size).toBeGreaterThan(1);
    });
  }

  it('numeric questions name a distinct misconception in most variants', () => {
    for (const q of bank5.questions.filter((x) => x.kind === 'numeric')) {
      const withOne = SEEDS.filter((seed) => numericVariant(q.id, seed).misconceptions.length > 0).length;
      expect(withOne, q.id).toBeGreaterThanOrEqual(45);
    }
  });
});

describe('sci', () => {
  it('writes large numbers as a mantissa times a power of ten, and reads back', () => {
    expect(sci(1e21)).toBe('10^21');
    expect(sci(3e21)).toBe('3·10^21');
    expect(sci(1.3e9)).toBe('1.3·10^9');
    expect(sci(15_300_000)).toBe('1.53·10^7');
    expect(sci(123)).toBe('123');
    for (const x of [1e21, 2.7e9, 4.1e12, 5.76e23]) expect(readSci(sci(x))).toBeCloseTo(x, -Math.floor(Math.log10(x)) + 6);
  });
});

describe('chapter 5 answers against references', () => {
  it('amdahl-speedup stays under both N and 1/(1-p), and equals the time ratio it implies', () => {
    for (const seed of SEEDS) {
      const p = numericVariant('amdahl-speedup', seed);
      const total = Number(/takes (\d+) ms/.exec(p.prompt)![1]);
      const serial = Number(/and (\d+) ms that does not/.exec(p.prompt)![1]);
      const n = param(p.prompt, 'N');
      expect(p.answer).toBeLessThan(n);
      expect(p.answer).toBeLessThan(total / serial);
      // Simulated directly: N workers each do 1/N of the parallel work, then the serial part.
      expect(p.answer).toBeCloseTo(total / ((total - serial) / n + serial), 9);
    }
  });

  it('amdahl-required-fraction, put back into Amdahl\'s law, gives the speedup asked for', () => {
    for (const seed of SEEDS) {
      const p = numericVariant('amdahl-required-fraction', seed);
      const s = Number(/speedup of ([0-9.]+) on/.exec(p.prompt)![1]);
      const n = param(p.prompt, 'N');
      const frac = p.answer / 100;
      expect(1 / (1 - frac + frac / n)).toBeCloseTo(s, 9);
    }
  });

  it('weak-scaling-efficiency is examples per second on N ranks over N times one rank\'s', () => {
    for (const seed of SEEDS) {
      const p = numericVariant('weak-scaling-efficiency', seed);
      const micro = Number(/keeps (\d+) examples/.exec(p.prompt)![1]);
      const t1 = Number(/alone takes (\d+) ms/.exec(p.prompt)![1]);
      const n = param(p.prompt, 'N');
      const tn = Number(/each step takes ([0-9.]+) ms/.exec(p.prompt)![1]);
      const perSecond = (ranks: number, ms: number) => (ranks * micro * 1000) / ms;
      expect(p.answer).toBeCloseTo((100 * perSecond(n, tn)) / (n * perSecond(1, t1)), 9);
    }
  });

  it('dp-communication-bound-ranks is the first N where the ring (written out by hand) outlasts the compute, no later than 1 + T·B/(2S)', () => {
    for (const seed of SEEDS) {
      const p = numericVariant('dp-communication-bound-ranks', seed);
      const millions = Number(/model of (\d+) million/.exec(p.prompt)![1]);
      const computeUs = Number(/needs (\d+) ms/.exec(p.prompt)![1]) * 1000;
      const alpha = param(p.prompt, 'α');
      const bw = param(p.prompt, 'B');
      const bytes = millions * 4e6;
      const ring = (n: number) => 2 * (n - 1) * (alpha + (Math.ceil(bytes / 4 / n) * 4) / bw); // 2(N-1) chunks of whole float32s
      const n = p.answer;
      expect(ring(n)).toBeGreaterThanOrEqual(computeUs / n);
      expect(ring(n - 1)).toBeLessThan(computeUs / (n - 1));
      // The latency term only adds time, so the crossing comes at or before the bandwidth-only one, N ≥ 1 + T·B/(2S).
      expect(n).toBeLessThanOrEqual(Math.ceil(1 + (computeUs * bw) / (2 * bytes) - 1e-9));
    }
  });

  it('ring-tree-crossover is where the fabric\'s virtual clock turns from tree to ring', async () => {
    let checked = 0;
    for (const seed of SEEDS) {
      const p = numericVariant('ring-tree-crossover', seed);
      const n = param(p.prompt, 'N');
      if (n > 8) continue; // keep the launches small
      const alphaUs = param(p.prompt, 'α');
      const bytesPerUs = param(p.prompt, 'B');
      const cost = { alphaUs, bytesPerUs };
      const star = p.answer * 1e3;
      expect(star).toBeCloseTo(ringTreeCrossoverBytes(n, alphaUs, bytesPerUs), 6);
      const time = async (algorithm: 'ring' | 'tree', bytes: number) => {
        const count = Math.round(bytes / 4 / n) * n; // whole chunks, so the ring's chunks are equal
        const r = await launch({ worldSize: n, cost, program: async (comm) => void (await allReduce(comm, full([count], 1), { algorithm })) });
        expect(r.ok).toBe(true);
        return Math.max(...r.stats.map((s) => s.vtUs));
      };
      expect(await time('tree', star / 2)).toBeLessThan(await time('ring', star / 2));
      expect(await time('ring', star * 2)).toBeLessThan(await time('tree', star * 2));
      if (++checked === 3) break;
    }
    expect(checked).toBe(3);
  });

  it('the crossovers\' closed forms agree with bisection on the α-β times', () => {
    const bisect = (f: (s: number) => number, lo: number, hi: number) => {
      for (let i = 0; i < 200; i++) {
        const mid = (lo + hi) / 2;
        if (f(lo) * f(mid) <= 0) hi = mid;
        else lo = mid;
      }
      return (lo + hi) / 2;
    };
    for (const n of [4, 8, 16, 32, 64]) {
      for (const [alpha, bw] of [[10, 1250], [2, 25_000], [20, 3125]] as const) {
        const l = Math.ceil(Math.log2(n));
        const ring = (s: number) => 2 * (n - 1) * (alpha + s / (n * bw));
        const tree = (s: number) => estimateTime('allReduce', 'tree', s, n, { alphaUs: alpha, bytesPerUs: bw });
        const rd = (s: number) => l * (alpha + s / bw);
        expect(bisect((s) => ring(s) - tree(s), 1, 1e9) / ringTreeCrossoverBytes(n, alpha, bw)).toBeCloseTo(1, 6);
        expect(bisect((s) => ring(s) - rd(s), 1, 1e9) / ringRecursiveDoublingCrossoverBytes(n, alpha, bw)).toBeCloseTo(1, 6);
      }
    }
    // The reading's figures: 8 ranks, α = 10 µs, 1250 bytes per µs.
    expect(ringTreeCrossoverBytes(8, 10, 1250)).toBeCloseTo(23_529.4, 0);
    expect(ringRecursiveDoublingCrossoverBytes(8, 10, 1250)).toBeCloseTo(110_000, 6);
  });

  it('bucketing-speedup is what the fabric measures: k small all-reduces against one bucket', async () => {
    let checked = 0;
    for (const seed of SEEDS) {
      const p = numericVariant('bucketing-speedup', seed);
      const n = param(p.prompt, 'N');
      const [, k, kib] = /are (\d+) tensors of (\d+) KiB/.exec(p.prompt)!.map(Number);
      if (n > 8 || k! > 100) continue; // keep the launches small
      const elements = (kib! * 1024) / 4;
      const run = async (program: Parameters<typeof launch>[0]['program']) => {
        const r = await launch({ worldSize: n, program });
        expect(r.ok).toBe(true);
        return Math.max(...r.stats.map((s) => s.vtUs));
      };
      const separate = await run(async (comm) => {
        for (let i = 0; i < k!; i++) await allReduce(comm, full([elements], 1));
      });
      const bucket = await run(async (comm) => void (await allReduce(comm, full([elements * k!], 1))));
      expect(Math.abs(separate / bucket - p.answer) / p.answer, `seed ${seed}`).toBeLessThan(0.01);
      if (++checked === 2) break;
    }
    expect(checked).toBe(2);
  });

  it('mfu-from-tokens-per-second, turned around, gives back the tokens per second', () => {
    for (const seed of SEEDS) {
      const p = numericVariant('mfu-from-tokens-per-second', seed);
      const params = Number(/of ([0-9.]+) B parameters/.exec(p.prompt)![1]) * 1e9;
      const devices = Number(/on (\d+) GPUs/.exec(p.prompt)![1]);
      const peak = Number(/\((\d+) TFLOP\/s/.exec(p.prompt)![1]) * 1e12;
      const tps = readSci(/at ([0-9.·^]+) tokens per second/.exec(p.prompt)![1]!);
      expect(((p.answer / 100) * devices * peak) / (6 * params)).toBeCloseTo(tps, 3);
      expect(p.answer).toBeGreaterThan(0);
      expect(p.answer).toBeLessThan(100);
    }
  });

  it('compute-optimal-model-size is the minimum a numerical search finds along 6ND = C', () => {
    const searchMinimum = (law: LossLaw, c: number) => {
      // Golden-section search on log N: the loss along 6ND = C is unimodal in it.
      let lo = Math.log(1e5);
      let hi = Math.log(c / 6 / 1e5);
      const f = (x: number) => lawLoss(law, Math.exp(x), c / 6 / Math.exp(x));
      const r = (Math.sqrt(5) - 1) / 2;
      for (let i = 0; i < 200; i++) {
        const a = hi - r * (hi - lo);
        const b = lo + r * (hi - lo);
        if (f(a) < f(b)) hi = b;
        else lo = a;
      }
      return Math.exp((lo + hi) / 2);
    };
    for (const seed of SEEDS) {
      const p = numericVariant('compute-optimal-model-size', seed);
      const law: LossLaw = { E: param(p.prompt, 'E'), A: param(p.prompt, 'A'), B: param(p.prompt, 'B'), alpha: param(p.prompt, 'α'), beta: param(p.prompt, 'β') };
      const c = readSci(/budget C = ([0-9.·^]+) FLOPs/.exec(p.prompt)![1]!);
      expect(Math.abs(searchMinimum(law, c) / 1e9 / p.answer - 1), `seed ${seed}`).toBeLessThan(1e-4);
    }
  });

  it('the approach-3 constants imply far more than 20 tokens per parameter from 10^21 to 10^23 FLOPs, and the reading\'s figures', () => {
    for (const c of [1e21, 1e22, 1e23]) {
      const { n, d } = computeOptimal(CHINCHILLA_APPROACH_3, c);
      expect(6 * n * d).toBeCloseTo(c, -Math.log10(c) + 6);
      expect(d / n).toBeGreaterThan(40);
    }
    // Hoffmann et al., table 2: approach 3 puts N_opt ∝ C^0.46 (from the unrounded fit; the rounded constants give 0.45).
    const { alpha, beta } = CHINCHILLA_APPROACH_3;
    expect(Math.abs(beta / (alpha + beta) - 0.46)).toBeLessThan(0.01);
    const at22 = computeOptimal(CHINCHILLA_APPROACH_3, 1e22);
    expect(at22.n / 1e9).toBeCloseTo(5.16, 2);
    expect(at22.d / at22.n).toBeCloseTo(62.6, 1);
    expect(lawLoss(CHINCHILLA_APPROACH_3, at22.n, at22.d)).toBeCloseTo(2.1386, 3);
    const rule = Math.sqrt(1e22 / 120);
    expect(lawLoss(CHINCHILLA_APPROACH_3, rule, 20 * rule) - lawLoss(CHINCHILLA_APPROACH_3, at22.n, at22.d)).toBeCloseTo(0.007, 3);
  });

  it('optimal-tokens-per-parameter matches computeOptimal\'s D/N, and tokens-from-budget respects the budget', () => {
    for (const seed of SEEDS) {
      const p = numericVariant('optimal-tokens-per-parameter', seed);
      const c = readSci(/C = ([0-9.·^]+) FLOPs\?/.exec(p.prompt)![1]!);
      const { n, d } = computeOptimal(CHINCHILLA_APPROACH_3, c);
      expect(p.answer).toBeCloseTo(d / n, 9);
      const b = numericVariant('tokens-from-budget', seed);
      const budget = readSci(/C = ([0-9.·^]+) FLOPs/.exec(b.prompt)![1]!);
      const params = Number(/of ([0-9.]+) B parameters/.exec(b.prompt)![1]) * 1e9;
      expect(6 * params * b.answer * 1e9).toBeCloseTo(budget, -Math.log10(budget) + 6);
    }
  });

  it('power-law-exponent-from-two-runs recovers the exponent the losses were made with, despite their rounding', () => {
    for (const seed of SEEDS) {
      const p = numericVariant('power-law-exponent-from-two-runs', seed);
      const nearest = [0.27, 0.3, 0.34, 0.38].reduce((a, b) => (Math.abs(b - p.answer) < Math.abs(a - p.answer) ? b : a));
      expect(Math.abs(p.answer - nearest) / nearest, `seed ${seed}`).toBeLessThan(0.005);
    }
  });
});

describe('pnpm quiz 5', () => {
  it('writes an attempt\'s questions, grades them filled in, and records an attempt that regrades to the same score', async () => {
    const dir = scratch();
    const q = join(dir, 'answers.txt');
    const wrote = await cli('quiz', ['5', '--questions', q, '--seed', '2026', '--dir', dir]);
    expect(wrote.exitCode, wrote.stderr).toBe(0);
    const drawn = drawQuiz(bank5, 2026, { count: 10 });
    // Right answers, but a misconception (or a distractor) for question 4.
    const filled = readFileSync(q, 'utf8').replace(/^(\d+): $/gm, (_, n: string) => {
      const p = drawn[Number(n) - 1]!.presented;
      if (Number(n) === 4) return `${n}: ${p.kind === 'choice' ? p.options.find((o) => !o.correct)!.label : formatNumber(p.misconceptions[0]?.value ?? p.answer * 2 + 1)}`;
      return `${n}: ${p.kind === 'choice' ? p.options.find((o) => o.correct)!.label : formatNumber(p.answer)}`;
    });
    writeFileSync(q, filled);
    const r = await cli('quiz', ['5', '--answers', q, '--dir', dir]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout.match(/✓ Right\./g)).toHaveLength(9);
    expect(r.stdout.match(/✗ Wrong\./g)).toHaveLength(1);
    expect(r.stdout).toMatch(/Score: 9\/10 \(90%\): passed/);
    const regraded = await regradeAttempt(join(dir, '.course', 'quiz-5.json'));
    expect(regraded).toMatchObject({ status: 'graded', chapter: 5, score: 9, maxScore: 10, passed: true });
  });
});
