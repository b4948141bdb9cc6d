/**
 * Hidden checks of ex07-zero-stage-2. They hold no answers: every run is
 * drawn from the grading seed, and every expectation is computed here at
 * grade time, from the single-process reference (data.ts) and the closed
 * forms of the bounds (the public checks' gradientBounds).
 *
 * The training runs: the public checks' deep MLP (P = 11533) on 1 to 5
 * ranks, 4 steps, with a different bucket size per world size (one element:
 * every parameter its own bucket; 64 KiB: one bucket for the whole model),
 * and with 5 ranks a parameter that gets no gradient. One launch per world
 * size serves the parity, traffic and checkpoint checks (`training`).
 * Tolerance: the public checks' TOLERANCE, rtol 1e-4 and atol 1e-5, for the
 * reasons given there.
 */
import { chunkBounds, deriveSeed } from '@dtlab/tensor';
import type { RankStats } from '@dtlab/runtime';
import { programPath, type CheckContext, type CheckFn } from '@dtlab/grader';
import { expectCheckpointRoundTrip, shardSizes } from '../../checks/ex03-zero-sharding/checks.ts';
import { BYTES_PER_ELEMENT, paramCount, singleProcessTraining, type Experiment } from '../../checks/ex07-zero-stage-2/data.ts';
import { TOLERANCE, expectGradientMemory, expectReductionDuringBackward, expectTrainingParity, experiment, layoutOf, measureFor, memoryNote, runTraining, trafficNote, type TrainingRun } from '../../checks/ex07-zero-stage-2/checks.ts';

const ENTRY = 'src/zero2-adamw.ts';
const resume = { module: programPath(import.meta.url, '../../checks/ex07-zero-stage-2/programs.ts'), export: 'resumeTraining' };
const STEPS = 4;
/** Every rank checkpoints after this many steps; checkpoint-resume resumes from there. */
const CHECKPOINT_AFTER = 2;
/** Bucket size per world size: one element (a bucket per parameter), two layers, the whole model, and in between. */
const BUCKETS: Record<number, number> = { 1: 4096, 2: 1, 3: 65536, 4: 2048, 5: 4096 };

/** The training experiment with `worldSize` ranks; its seed depends on the grading seed only, so every check below draws the same one. */
function trainingExperiment(ctx: CheckContext, worldSize: number): Experiment {
  const base = experiment(ctx, { steps: STEPS, bucketBytes: BUCKETS[worldSize] ?? 4096, checkpointAfter: CHECKPOINT_AFTER, ...(worldSize === 5 ? { unused: [5] } : {}) });
  return { ...base, seed: deriveSeed(ctx.seed, 7, worldSize) };
}

/** The training run with `worldSize` ranks, launched by the first check that needs it. */
function training(ctx: CheckContext, worldSize: number): Promise<TrainingRun> {
  const e = trainingExperiment(ctx, worldSize);
  return ctx.shared(`ex07 training ${worldSize} ${e.seed}`, () => runTraining(ctx, e, worldSize));
}

/**
 * The traffic of `steps` ZeRO-2 steps over P elements, against plain data
 * parallelism's ring all-reduce of the gradient, 2(N-1)/N·P a step: every
 * rank sends at most 2·(N-1)·⌈P/N⌉ elements a step (each bucket's pieces
 * that other ranks own, at most P - P/N in all, then the all-gather's), and
 * all ranks together at least 2·(N-1)·P (every rank's gradient must leave it
 * for the N-1 shards it does not own, every updated shard must reach N-1
 * ranks).
 */
function expectTraffic(ctx: CheckContext, stats: RankStats[], p: number, steps: number): void {
  const worldSize = stats.length;
  const perRankMax = steps * 2 * (worldSize - 1) * Math.ceil(p / worldSize) * BYTES_PER_ELEMENT;
  const totalMin = steps * 2 * (worldSize - 1) * p * BYTES_PER_ELEMENT;
  const ranks = `${worldSize} rank${worldSize === 1 ? '' : 's'}`;
  for (const { rank, bytesSent } of stats) {
    if (bytesSent > perRankMax) {
      ctx.fail(
        `rank ${rank} sent ${bytesSent} bytes in ${steps} steps with ${ranks} (P = ${p}, shards of ${shardSizes(p, worldSize)}), more than the ring all-reduce of plain data parallelism sends: ${steps} × 2·(N-1)·⌈P/N⌉·4 = ${perRankMax}. ZeRO stage 2 reduces each piece of a bucket once, to its owner, and gathers the updated shards once: it needs no more`,
        { rank, index: null, expected: `<= ${perRankMax}`, actual: bytesSent, label: `bytes sent by rank ${rank} in ${steps} steps` },
      );
    }
  }
  const total = stats.reduce((s, x) => s + x.bytesSent, 0);
  if (total < totalMin) {
    ctx.fail(
      `with ${ranks} (P = ${p}) all ranks together sent ${total} bytes in ${steps} steps, less than the ${totalMin} bytes (${steps} × 2·(N-1)·P·4) that averaging every gradient element and handing out every updated parameter need: part of the exchange is missing`,
      { rank: null, index: null, expected: `>= ${totalMin}`, actual: total, label: `bytes sent by all ranks in ${steps} steps` },
    );
  }
}

export const checks: Record<string, CheckFn> = {
  'training-parity': async (ctx) => {
    for (const worldSize of ctx.manifest.worldSizes) expectTrainingParity(ctx, await training(ctx, worldSize), worldSize);
    ctx.note(`world sizes ${ctx.manifest.worldSizes.join(', ')}, bucket sizes ${ctx.manifest.worldSizes.map((n) => `${BUCKETS[n]} B`).join(', ')}: ${STEPS} steps of every rank match single-process AdamW on the combined batch (rtol ${TOLERANCE.rtol}, atol ${TOLERANCE.atol})`);
  },
  'gradient-memory-sizes': async (ctx) => {
    const notes: string[] = [];
    // Two ranks with buckets of about a layer, three with a bucket per parameter, five with about four layers.
    for (const [worldSize, bucketBytes] of [[2, 2048], [3, 1], [5, 8192]] as const) {
      const e = experiment(ctx, { steps: 2, bucketBytes }, 'memory', worldSize);
      const measure = measureFor(ctx, e, 1);
      const run = await runTraining(ctx, e, worldSize, measure);
      const figures = expectGradientMemory(ctx, run, worldSize, measure);
      const traffic = expectReductionDuringBackward(ctx, run, worldSize, measure);
      notes.push(`${memoryNote(figures, e, worldSize)}, ${trafficNote(traffic, e, worldSize)} (bucketBytes ${bucketBytes})`);
    }
    ctx.note(notes.join(' · '));
  },
  'communication-volume': async (ctx) => {
    const lines: string[] = [];
    for (const worldSize of ctx.manifest.worldSizes) {
      const { e, stats } = await training(ctx, worldSize);
      const p = paramCount(e);
      expectTraffic(ctx, stats, p, STEPS);
      const most = Math.max(...stats.map((s) => s.bytesSent)) / STEPS;
      const dp = (2 * (worldSize - 1) * p * BYTES_PER_ELEMENT) / worldSize;
      if (worldSize > 1) lines.push(`N=${worldSize}: ${Math.round(most)} B a step, ${(most / dp).toFixed(3)}× data parallelism's 2(N-1)/N·P·4 = ${Math.round(dp)}`);
    }
    ctx.note(`bytes sent per rank within ${STEPS} × 2·(N-1)·⌈P/N⌉·4, and in total at least ${STEPS} × 2·(N-1)·P·4, for every world size · ${lines.join(' · ')}`);
  },
  'checkpoint-resume': async (ctx) => {
    const sizes: string[] = [];
    for (const worldSize of ctx.manifest.worldSizes) {
      const run = await training(ctx, worldSize);
      const expected = singleProcessTraining(run.e, worldSize);
      const { bytes } = await expectCheckpointRoundTrip(ctx, {
        worldSize,
        p: paramCount(run.e),
        checkpointAfter: CHECKPOINT_AFTER,
        steps: STEPS,
        first: run.outputs,
        firstStats: run.stats,
        expected,
        layout: layoutOf(run.e),
        tol: TOLERANCE,
        resume: (checkpoints) => ({ worldSize, program: resume, args: [ctx.entry(ENTRY), run.e, expected[CHECKPOINT_AFTER - 1]!, checkpoints] }),
      });
      const own = chunkBounds(paramCount(run.e), worldSize).map((b) => b.end - b.start);
      sizes.push(`N=${worldSize}: ${Math.max(...bytes)} B (shards of ${Math.max(...own)} elements)`);
    }
    ctx.note(`every rank's checkpoint held the float32 moments of its own shard and nothing else; the largest · ${sizes.join(' · ')}; fresh optimizers resumed training from them in parity, sending no more a step than before`);
  },
};
