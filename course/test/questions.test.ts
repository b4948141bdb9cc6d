/**
 * Every question of chapters 1 to 3, for 50 attempt seeds, the way an
 * attempt draws them: the answer computes, each distractor differs from the
 * answer, the right answer is graded right and every misconception wrong.
 * Then a few answers against references outside the question's own code:
 * the fabric's virtual clock and traffic, and the ZeRO paper's figures.
 */
import { describe, expect, it } from 'vitest';
import { allReduce } from '@dtlab/collectives';
import { launch } from '@dtlab/runtime';
import { full } from '@dtlab/tensor';
import bank1 from '../chapters/01-data-parallelism/bank.ts';
import bank2 from '../chapters/02-sharding/bank.ts';
import bank3 from '../chapters/03-tensor-parallelism/bank.ts';
import { modelStateBytes } from '../chapters/02-sharding/questions/zero-memory.ts';
import { formatNumber, gradeAnswer, present, variantSeed, withinTolerance, type Bank, type NumericVariant } from '../src/index.ts';

const SEEDS = Array.from({ length: 50 }, (_, i) => i + 1);

function checkBank(bank: Bank): void {
  it('has at least 15 questions, a third of them numeric, with unique ids', () => {
    expect(bank.questions.length).toBeGreaterThanOrEqual(15);
    expect(bank.questions.filter((q) => q.kind === 'numeric').length * 3).toBeGreaterThanOrEqual(bank.questions.length);
    expect(new Set(bank.questions.map((q) => q.id)).size).toBe(bank.questions.length);
  });
  for (const q of bank.questions) {
    it(`${q.id}: 50 variants compute, grade their answer right and every misconception wrong`, () => {
      const prompts = new Set<string>();
      for (const seed of SEEDS) {
        const p = present(q, variantSeed(seed, q.id));
        prompts.add(p.prompt);
        expect(p.prompt.length, `seed ${seed}`).toBeGreaterThan(20);
        expect(p.explanation.length, `seed ${seed}`).toBeGreaterThan(20);
        if (p.kind === 'numeric') {
          expect(Number.isFinite(p.answer), `seed ${seed}`).toBe(true);
          expect(gradeAnswer(p, formatNumber(p.answer)).status, `seed ${seed}`).toBe('correct');
          if (p.format.unit) expect(gradeAnswer(p, `${formatNumber(p.answer)} ${p.format.unit}`).status, `seed ${seed}`).toBe('correct');
          for (const m of p.misconceptions) {
            expect(withinTolerance(m.value, p.answer, p.format.tolerance), `seed ${seed}: misconception ${m.value} vs ${p.answer}`).toBe(false);
            expect(gradeAnswer(p, formatNumber(m.value)).status, `seed ${seed}: ${m.why}`).toBe('wrong');
            expect(m.why.length).toBeGreaterThan(10);
          }
        } else {
          const right = p.options.filter((o) => o.correct);
          expect(right, `seed ${seed}`).toHaveLength(1);
          expect(p.options.length, `seed ${seed}`).toBeGreaterThanOrEqual(3);
          expect(new Set(p.options.map((o) => o.text)).size, `seed ${seed}`).toBe(p.options.length);
          for (const o of p.options) {
            expect(gradeAnswer(p, o.label).status, `seed ${seed} (${o.label})`).toBe(o.correct ? 'correct' : 'wrong');
            expect(o.why.length).toBeGreaterThan(10);
          }
        }
      }
      // Questions vary with the seed: that is what makes each attempt a new variant.
      expect(prompts.size).toBeGreaterThan(1);
    });
  }
}

describe('chapter 1 bank', () => checkBank(bank1));
describe('chapter 2 bank', () => checkBank(bank2));
describe('chapter 3 bank', () => checkBank(bank3));

/** The variant of question `id` in `bank` for attempt seed `seed`. */
function variant(bank: Bank, id: string, seed: number) {
  const q = bank.questions.find((x) => x.id === id)!;
  return present(q, variantSeed(seed, id));
}

/** The number after `name = ` in a prompt. */
function param(prompt: string, name: string): number {
  const m = new RegExp(`${name} = ([0-9.]+)`).exec(prompt);
  if (!m) throw new Error(`no '${name} = ' in: ${prompt}`);
  return Number(m[1]);
}

describe('answers against references', () => {
  it('ring-time-alpha-beta equals the fabric\'s virtual clock for the same network', async () => {
    let checked = 0;
    for (const seed of SEEDS) {
      const p = variant(bank1, 'ring-time-alpha-beta', seed) as NumericVariant;
      const mib = param(p.prompt, 'S');
      if (mib > 4) continue; // keep the launches small
      const n = param(p.prompt, 'N');
      const alphaUs = param(p.prompt, 'α');
      const bytesPerUs = Number(/\((\d+) bytes per µs\)/.exec(p.prompt)![1]);
      const result = await launch({ worldSize: n, cost: { alphaUs, bytesPerUs }, program: async (comm) => void (await allReduce(comm, full([(mib * 2 ** 20) / 4], 1))) });
      expect(result.ok).toBe(true);
      const measuredMs = Math.max(...result.stats.map((s) => s.vtUs)) / 1000;
      expect(Math.abs(measuredMs - p.answer) / p.answer, `seed ${seed}`).toBeLessThan(1e-9);
      if (++checked === 3) break;
    }
    expect(checked).toBe(3);
  });

  it('ring-bytes-per-rank\'s 2(N-1)/N is what each rank sends on the fabric', async () => {
    for (const seed of [1, 2, 3]) {
      const p = variant(bank1, 'ring-bytes-per-rank', seed) as NumericVariant;
      const n = param(p.prompt, 'N');
      const s = param(p.prompt, 'S');
      const count = n * 1000; // a small buffer of the same shape: the ratio does not depend on S
      const result = await launch({ worldSize: n, program: async (comm) => void (await allReduce(comm, full([count], 1))) });
      const ratio = Math.max(...result.stats.map((x) => x.bytesSent)) / (count * 4);
      expect(p.answer / s).toBeCloseTo(ratio, 12);
    }
  });

  it('uneven-chunk-size follows torch.tensor_split\'s sizes: ⌊n/N⌋, plus one for the first n mod N', () => {
    for (const seed of SEEDS) {
      const p = variant(bank1, 'uneven-chunk-size', seed) as NumericVariant;
      const [, n, parts, rank] = /buffer of (\d+) elements.*N = (\d+).*rank (\d+)'s chunk/.exec(p.prompt)!.map(Number);
      expect(p.answer, `seed ${seed}`).toBe(Math.floor(n! / parts!) + (rank! < n! % parts! ? 1 : 0));
    }
  });

  it('tp-mlp-allreduce-bytes\'s 2(N-1)/N of the [b, s, h] output is what each rank sends on the fabric', async () => {
    for (const seed of [1, 2, 3]) {
      const p = variant(bank3, 'tp-mlp-allreduce-bytes', seed) as NumericVariant;
      const n = param(p.prompt, 'N');
      const [b, s, h] = ['b', 's', 'h'].map((k) => param(p.prompt, k)) as [number, number, number];
      const count = n * 512; // a small tensor on the same ranks: the ratio does not depend on its size
      const result = await launch({ worldSize: n, program: async (comm) => void (await allReduce(comm, full([count], 1))) });
      const ratio = Math.max(...result.stats.map((x) => x.bytesSent)) / (count * 4);
      expect((p.answer * 1e6) / (b * s * h * 2)).toBeCloseTo(ratio, 9);
    }
  });

  it('tp-dp-traffic-crossover: at T = 4h the fabric carries the same bytes for both', async () => {
    const p = variant(bank3, 'tp-dp-traffic-crossover', 1) as NumericVariant;
    const h = 16; // the crossover is T = 4h for every h; a small one keeps the launches small
    expect(p.answer / param(p.prompt, 'h')).toBe(4);
    const tp = await launch({ worldSize: 4, program: async (comm) => { await allReduce(comm, full([4 * h, h], 1)); await allReduce(comm, full([4 * h, h], 1)); } });
    const dp = await launch({ worldSize: 4, program: async (comm) => void (await allReduce(comm, full([8 * h * h], 1))) });
    expect(tp.stats.map((x) => x.bytesSent)).toEqual(dp.stats.map((x) => x.bytesSent));
  });

  it('the ZeRO memory formulas give the ZeRO paper\'s figures for 7.5 B parameters on 64 ranks', () => {
    // Rajbhandari et al. (2020), figure 1: 120 GB, 31.4 GB, 16.6 GB, 1.9 GB.
    expect(modelStateBytes(0, 7.5, 64)).toBeCloseTo(120, 6);
    expect(modelStateBytes(1, 7.5, 64)).toBeCloseTo(31.4, 1);
    expect(modelStateBytes(2, 7.5, 64)).toBeCloseTo(16.6, 1);
    expect(modelStateBytes(3, 7.5, 64)).toBeCloseTo(1.9, 1);
  });

  it('zero-stage-memory answers the formula of the stage it names', () => {
    for (const seed of SEEDS) {
      const p = variant(bank2, 'zero-stage-memory', seed) as NumericVariant;
      const stage = Number(/ZeRO stage (\d)/.exec(p.prompt)![1]);
      const psi = param(p.prompt, 'Ψ');
      const n = param(p.prompt, 'N');
      const want = stage === 1 ? 4 * psi + (12 * psi) / n : stage === 2 ? 2 * psi + (14 * psi) / n : (16 * psi) / n;
      expect(p.answer, `seed ${seed}`).toBeCloseTo(want, 9);
    }
  });
});
