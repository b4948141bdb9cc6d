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
 * Every job warms up for a few steps (the count varies: 2 or 3 for the
 * public job, 4 to 6 for the hidden ones, so that a profile that skips a
 * fixed number of steps the public job shows is caught) and pays extra for
 * its first batch. The hidden jobs run on a network drawn slower than the
 * fabric's (HIDDEN_NETWORKS), so that a plan must price the all-reduce on
 * `job.network`, not on the default it meets in the public job.
 */
import { Generator } from '@dtlab/tensor';
import type { CostModel } from '@dtlab/runtime';
import type { JobSpec } from './job.ts';
import type { Prediction, ScalingTarget } from './plan.ts';

/** What a job is bound by. */
export type Bottleneck = 'compute' | 'input' | 'communication' | 'memory';

/** An epoch is a multiple of 840 = lcm(1..8) batches, so that every rank count up to 8 divides it. */
const EPOCH_BATCHES = 840;

/** Which checks a job is for: the public job (the public tests use it too) or a hidden one. */
export type JobVariant = 'public' | 'hidden';

/**
 * Latencies and bandwidths of the hidden jobs' networks, drawn independently:
 * 2 to 4 times the fabric's latency (10 µs), a half to a fifth of its
 * bandwidth (1250 B/µs): at the fastest, each ring step of the all-reduce
 * costs twice the default's, so a plan priced on the default network
 * misses the all-reduce by half wherever it shows in a step. (makeTarget
 * finds a target on any curve: at worst an efficiency floor one rank meets.)
 */
export const HIDDEN_NETWORKS = { alphaUs: [20, 30, 40], bytesPerUs: [625, 312.5, 250] } as const;

/** A job bound by `kind`, drawn from `seed`, with at most `maxRanks` ranks; a hidden one warms up longer and runs on a drawn network. */
export function makeJob(kind: Bottleneck, seed: number, maxRanks: number, variant: JobVariant = 'public'): JobSpec {
  const g = new Generator(seed);
  const pick = <T>(xs: readonly T[]): T => xs[g.int(xs.length)]!;
  const warm = { warmupSteps: variant === 'hidden' ? 4 + g.int(3) : 2 + g.int(2), firstStepUs: 3000 + 500 * g.int(7), firstInputUs: 2000 + 500 * g.int(5), maxRanks, seed: g.int(1 << 30) };
  const job = (name: string, sizes: number[], batchPerRank: number, inputUs: number, elementwiseRounds = 0): JobSpec => ({
    name: `${name} ${sizes.join('-')}, batch ${batchPerRank} per rank`,
    sizes,
    elementwiseRounds,
    batchPerRank,
    epochExamples: EPOCH_BATCHES * batchPerRank,
    inputUs,
    ...warm,
  });
  const spec = ((): JobSpec => {
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
  })();
  // Drawn last, so that the job's other draws are those of a public job of the same seed.
  if (variant === 'public') return spec;
  const network: CostModel = { alphaUs: pick(HIDDEN_NETWORKS.alphaUs), bytesPerUs: pick(HIDDEN_NETWORKS.bytesPerUs) };
  return { ...spec, network };
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
