/**
 * The jobs and targets of the ex13 checks, made from a seed. Each job is
 * built to be bound by one thing, so that a planner that gets that one part
 * wrong chooses wrong:
 *
 * - compute-bound: a batch large enough that the device's step dwarfs the
 *   all-reduce and the input;
 * - input-bound: the host's input pipeline takes longer than the device's
 *   step, which hides the all-reduce until it outgrows the slack;
 * - communication-bound: one example per rank, so the all-reduce of the
 *   whole gradient costs more than the step's compute;
 * - memory-bound: narrow layers with elementwise ops that move more bytes than
 *   they compute, so the step takes far longer than its FLOPs at peak.
 *
 * Every job warms up for a few steps (the count varies) and pays extra for
 * its first batch.
 */
import { Generator } from '@dtlab/tensor';
import type { JobSpec } from './job.ts';
import type { Prediction, ScalingTarget } from './plan.ts';

/** What a job is bound by. */
export type Bottleneck = 'compute' | 'input' | 'communication' | 'memory';

/** An epoch is a multiple of 840 = lcm(1..8) batches, so that every rank count up to 8 divides it. */
const EPOCH_BATCHES = 840;

/** A job bound by `kind`, drawn from `seed`, with at most `maxRanks` ranks. */
export function makeJob(kind: Bottleneck, seed: number, maxRanks: number): JobSpec {
  const g = new Generator(seed);
  const pick = <T>(xs: readonly T[]): T => xs[g.int(xs.length)]!;
  const warm = { warmupSteps: 2 + g.int(2), firstStepUs: 3000 + 500 * g.int(7), firstInputUs: 2000 + 500 * g.int(5), maxRanks, seed: g.int(1 << 30) };
  const job = (name: string, sizes: number[], batchPerRank: number, inputUs: number, elementwiseRounds = 0): JobSpec => ({
    name: `${name} ${sizes.join('-')}, batch ${batchPerRank} per rank`,
    sizes,
    elementwiseRounds,
    batchPerRank,
    epochExamples: EPOCH_BATCHES * batchPerRank,
    inputUs,
    ...warm,
  });
  switch (kind) {
    case 'compute': {
      const h = pick([48, 64]);
      // The all-reduce is a tenth to a fifth of the step on 2 to 4 ranks: compute dominates, yet each rank added costs a few percent of efficiency.
      return job('compute-bound', [32, h, h, 8], pick([16, 24]), 100 + 20 * g.int(6));
    }
    case 'input': {
      const h = pick([40, 48]);
      // The device's step is about 4·b·P/1000 µs: the input takes 1.3 to 1.6 times that.
      const b = 16;
      const device = (6 * b * (32 * h + h * h + 8 * h)) / 1000;
      return job('input-bound', [32, h, h, 8], b, Math.round(device * (1.3 + 0.1 * g.int(4))));
    }
    case 'communication':
      return job('communication-bound', [32, pick([56, 64]), 64, 8], 1, 20 + 5 * g.int(4));
    case 'memory':
      return job('memory-bound', [16, pick([16, 24]), 24, 8], pick([16, 24]), 60 + 10 * g.int(4), 3 + g.int(3));
  }
}

/**
 * Relative gap between a target's answer and every other rank count's figure,
 * at least: the target sits halfway (geometrically) in the gap, so a
 * prediction within 1.5% of the device's chooses the same count. A sound
 * profile and plan predict the device to rounding; the mistakes miss by far
 * more.
 */
export const TARGET_GAP = 0.03;

/**
 * A target whose answer is clear of its boundary, of `kind` if the curve has
 * one (the other kind if not): for an epoch time, a count whose epoch is at
 * least TARGET_GAP shorter than every smaller count's; for an efficiency, a
 * count (not the largest) whose efficiency is at least TARGET_GAP above every
 * larger count's.
 */
export function makeTarget(curve: readonly Prediction[], seed: number, kind: ScalingTarget['kind']): { target: ScalingTarget; ranks: number } {
  const g = new Generator(seed);
  const epoch = (): { target: ScalingTarget; ranks: number } | null => {
    const ok = curve.flatMap((p, i) => {
      const above = i > 0 ? Math.min(...curve.slice(0, i).map((q) => q.epochUs)) : 0;
      return i > 0 && above >= p.epochUs * (1 + TARGET_GAP) ? [{ p, above }] : [];
    });
    if (!ok.length) return null;
    const { p, above } = ok[g.int(ok.length)]!;
    return { target: { kind: 'epoch-time', maxEpochUs: Math.round(Math.sqrt(p.epochUs * above)) }, ranks: p.ranks };
  };
  const efficiency = (): { target: ScalingTarget; ranks: number } | null => {
    const ok = curve.flatMap((p, i) => {
      const below = i + 1 < curve.length ? Math.max(...curve.slice(i + 1).map((q) => q.efficiency)) : Infinity;
      return i + 1 < curve.length && p.efficiency >= below * (1 + TARGET_GAP) ? [{ p, below }] : [];
    });
    if (!ok.length) return null;
    // A floor that one rank alone meets says little: prefer one that more ranks meet.
    const more = ok.filter(({ p }) => p.ranks > 1);
    const from = more.length ? more : ok;
    const { p, below } = from[g.int(from.length)]!;
    return { target: { kind: 'efficiency', minEfficiency: Math.round(Math.sqrt(p.efficiency * below) * 10000) / 10000 }, ranks: p.ranks };
  };
  const found = kind === 'epoch-time' ? (epoch() ?? efficiency()) : (efficiency() ?? epoch());
  if (!found) throw new Error(`BUG: no target clear of its boundary on the curve ${curve.map((p) => p.epochUs.toFixed(0)).join(', ')}`);
  return found;
}
