/**
 * The reference scaling model of exercise 13, from one worker's measured
 * parts: the checks compute what the plan should be with it, at grade time,
 * from the checker's own measurement of one worker.
 *
 * With input time I (host) and device time C (forward, backward, update) of
 * one step on one worker after warm-up, and the gradient's ring all-reduce
 * A(N) = 2(N-1)·(α + ⌈S/(4N)⌉·4/β) on N ranks (S gradient bytes), a step on
 * N ranks takes
 *
 *     t(N) = max(I, C + A(N))
 *
 * since the next batch's input overlaps with the device's step (the job's
 * queue is one step deep), and the all-reduce sits between backward and the
 * update. An epoch of E examples at b per rank is ⌈E/(N·b)⌉ steps, so
 * T(N) = ⌈E/(N·b)⌉·t(N), the speedup is T(1)/T(N) and the scaling
 * efficiency speedup/N.
 */
import { estimateTime } from '@dtlab/collectives';
import type { CostModel } from '@dtlab/runtime';

/** What the plan is for: the fewest ranks for an epoch within a time, or the most ranks that keep an efficiency. */
export type ScalingTarget = { kind: 'epoch-time'; maxEpochUs: number } | { kind: 'efficiency'; minEfficiency: number };

/** What the reference model needs of a job. */
export interface JobFacts {
  batchPerRank: number;
  epochExamples: number;
  gradientBytes: number;
  network: CostModel;
  maxRanks: number;
}

/** One worker's steady-state parts, µs per step. */
export interface WorkerParts {
  inputUs: number;
  computeUs: number;
}

/** The prediction for one rank count. */
export interface Prediction {
  ranks: number;
  stepUs: number;
  commUs: number;
  epochSteps: number;
  epochUs: number;
  speedup: number;
  efficiency: number;
}

/** Steps in one epoch on `ranks` ranks. */
export function epochSteps(job: JobFacts, ranks: number): number {
  return Math.ceil(job.epochExamples / (ranks * job.batchPerRank));
}

/** The ring all-reduce of the gradient on `ranks` ranks, µs (the collectives' closed form, chunks in whole float32 elements). */
export function allReduceUs(job: JobFacts, ranks: number): number {
  return estimateTime('allReduce', 'ring', job.gradientBytes, ranks, job.network, { elementBytes: 4 });
}

/** t(N), T(N), the speedup and the efficiency for every rank count from 1 to the job's maximum. */
export function predictCurve(job: JobFacts, parts: WorkerParts): Prediction[] {
  const base = epochSteps(job, 1) * Math.max(parts.inputUs, parts.computeUs);
  return Array.from({ length: job.maxRanks }, (_, i) => {
    const ranks = i + 1;
    const commUs = allReduceUs(job, ranks);
    const stepUs = Math.max(parts.inputUs, parts.computeUs + commUs);
    const steps = epochSteps(job, ranks);
    const epochUs = steps * stepUs;
    const speedup = base / epochUs;
    return { ranks, stepUs, commUs, epochSteps: steps, epochUs, speedup, efficiency: speedup / ranks };
  });
}

/**
 * The rank count a target asks for: for an epoch time, the fewest ranks
 * whose epoch fits (the fastest, if none does); for an efficiency, the most
 * ranks whose efficiency is at least the floor (one rank, if no other is).
 */
export function chooseRanks(curve: readonly Prediction[], target: ScalingTarget): Prediction {
  if (target.kind === 'epoch-time') {
    return curve.find((p) => p.epochUs <= target.maxEpochUs) ?? curve.reduce((a, b) => (b.epochUs < a.epochUs ? b : a));
  }
  let best = curve[0]!;
  for (const p of curve) if (p.efficiency >= target.minEfficiency) best = p;
  return best;
}
