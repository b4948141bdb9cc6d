/**
 * Hidden checks of ex08-fsdp. They hold no answers: every run is drawn
 * from the grading seed, and every expectation is computed here at grade
 * time, from the single-process reference (data.ts) and the closed forms of
 * the bounds (the public checks' parameterBounds).
 *
 * The training runs: the public checks' MLP on 1 to 5 ranks, 4 steps, and
 * on 5 ranks a model with a bottleneck (a 1 → 1 layer of 2 parameters, so
 * that three of five ranks hold an empty shard of it). One launch per world
 * size serves the parity and traffic checks (`training`). Tolerance: the
 * public checks' TOLERANCE, rtol 1e-4 and atol 1e-5, for the reasons given
 * there.
 */
import { chunkBounds, deriveSeed } from '@dtlab/tensor';
import type { RankStats } from '@dtlab/runtime';
import type { CheckContext, CheckFn } from '@dtlab/grader';
import { BYTES_PER_ELEMENT, paramCount, unitsOf, type Experiment } from '../../checks/ex08-fsdp/data.ts';
import { TOLERANCE, backwardTrafficBound, expectGatherInBackward, expectParameterMemory, expectShardParity, experiment, measureFor, memoryNote, runTraining, type TrainingRun } from '../../checks/ex08-fsdp/checks.ts';

const STEPS = 4;
/** A model whose middle layer has fewer parameters than ranks: empty shards. */
const BOTTLENECK = [13, 40, 1, 1, 37, 11];

/** The training experiments with `worldSize` ranks; their seeds depend on the grading seed only, so every check below draws the same ones. */
function trainingExperiments(ctx: CheckContext, worldSize: number): Experiment[] {
  const base = { ...experiment(ctx, { steps: STEPS }), seed: deriveSeed(ctx.seed, 8, worldSize) };
  return worldSize === 5 ? [base, { ...base, sizes: BOTTLENECK, seed: deriveSeed(ctx.seed, 8, worldSize, 1) }] : [base];
}

/** The training runs with `worldSize` ranks, each launched by the first check that needs it. */
function training(ctx: CheckContext, worldSize: number): Promise<TrainingRun>[] {
  return trainingExperiments(ctx, worldSize).map((e) => ctx.shared(`ex08 training ${worldSize} ${e.seed}`, () => runTraining(ctx, e, worldSize)));
}

/**
 * The traffic of `steps` FSDP steps: per layer of n parameters, two
 * all-gathers (forward, backward) and one reduce-scatter, each sending at
 * most (N-1)·⌈n/N⌉ elements per rank: per rank at most 3·(N-1)·Σ⌈n_k/N⌉ a
 * step, and all ranks together at least (N-1)·(3·P - M), M the largest
 * layer: every shard must reach the N-1 other ranks for the forward,
 * (N-1)·P; every rank's gradient must leave it for the N-1 shards it does
 * not own, (N-1)·P; and every layer but one (which the backward may keep
 * from its forward, the public checks' held bound) must be gathered again
 * for the backward, (N-1)·(P - M). That is FSDP's 3·Ψ, where ZeRO 1 and 2,
 * or plain data parallelism with an all-reduce, send 2·Ψ.
 */
function expectTraffic(ctx: CheckContext, e: Experiment, stats: RankStats[], steps: number): string {
  const worldSize = stats.length;
  const p = paramCount(e);
  const ceil = unitsOf(e).reduce((s, u) => s + Math.ceil(u.n / worldSize), 0);
  const perRankMax = steps * 3 * (worldSize - 1) * ceil * BYTES_PER_ELEMENT;
  const m = Math.max(...unitsOf(e).map((u) => u.n));
  const totalMin = steps * (worldSize - 1) * (3 * p - m) * BYTES_PER_ELEMENT;
  const ranks = `${worldSize} rank${worldSize === 1 ? '' : 's'}`;
  for (const { rank, bytesSent } of stats) {
    if (bytesSent > perRankMax) {
      ctx.fail(
        `rank ${rank} sent ${bytesSent} bytes in ${steps} steps with ${ranks} (P = ${p}), more than two all-gathers and one reduce-scatter of every layer need: ${steps} × 3·(N-1)·Σ⌈n_k/N⌉·4 = ${perRankMax}. Gather each layer's parameters once for its forward and once for its backward, and reduce-scatter its gradient once`,
        { rank, index: null, expected: `<= ${perRankMax}`, actual: bytesSent, label: `bytes sent by rank ${rank} in ${steps} steps` },
      );
    }
  }
  const total = stats.reduce((s, x) => s + x.bytesSent, 0);
  if (total < totalMin) {
    ctx.fail(
      `with ${ranks} (P = ${p}, M = ${m} the largest layer) all ranks together sent ${total} bytes in ${steps} steps, less than the ${totalMin} bytes (${steps} × (N-1)·(3·P - M)·4) that gathering every layer for the forward, reducing every gradient and gathering every layer but one again for the backward need: ${total <= steps * 2 * (worldSize - 1) * p * BYTES_PER_ELEMENT ? 'that is the 2·Ψ of ZeRO 1 and 2 (or of an all-reduce), not FSDP\'s 3·Ψ: the backward gathers the parameters again, since the forward let them go' : 'part of the exchange is missing'}`,
      { rank: null, index: null, expected: `>= ${totalMin}`, actual: total, label: `bytes sent by all ranks in ${steps} steps` },
    );
  }
  const most = Math.max(...stats.map((s) => s.bytesSent)) / steps;
  const dp = (2 * (worldSize - 1) * p * BYTES_PER_ELEMENT) / worldSize;
  return worldSize > 1 ? `N=${worldSize}: ${Math.round(most)} B a step, ${(most / dp).toFixed(2)}× the 2(N-1)/N·Ψ·4 = ${Math.round(dp)} of stages 1 and 2` : '';
}

export const checks: Record<string, CheckFn> = {
  'training-parity': async (ctx) => {
    for (const worldSize of ctx.manifest.worldSizes) for (const run of training(ctx, worldSize)) expectShardParity(ctx, await run, worldSize);
    const empty = chunkBounds(2, 5).filter((b) => b.end === b.start).length;
    ctx.note(`world sizes ${ctx.manifest.worldSizes.join(', ')}: ${STEPS} steps, every rank's shards and their gradients match single-process AdamW (rtol ${TOLERANCE.rtol}, atol ${TOLERANCE.atol}); with 5 ranks also a model with a layer of 2 parameters, of which ${empty} ranks hold an empty shard`);
  },
  'parameter-memory-sizes': async (ctx) => {
    const notes: string[] = [];
    // Two ranks on the checks' model; five on a deeper one of equal layers.
    for (const [worldSize, sizes] of [[2, undefined], [5, [13, 36, 36, 36, 36, 36, 36, 36, 11]]] as const) {
      const e = experiment(ctx, { steps: 2, ...(sizes ? { sizes: [...sizes] } : {}) }, 'memory', worldSize);
      const measure = measureFor(ctx, e, 1);
      const run = await runTraining(ctx, e, worldSize, measure);
      const figures = expectParameterMemory(ctx, run, worldSize);
      const sent = expectGatherInBackward(ctx, run, worldSize, measure);
      notes.push(`${memoryNote(figures, e, worldSize)}, backward sent ${sent} bytes (at least ${backwardTrafficBound(e, worldSize).bytes})`);
    }
    ctx.note(notes.join(' · '));
  },
  'communication-volume': async (ctx) => {
    const lines: string[] = [];
    for (const worldSize of ctx.manifest.worldSizes) {
      const [run] = training(ctx, worldSize);
      const { e, stats } = await run!;
      const line = expectTraffic(ctx, e, stats, STEPS);
      if (line) lines.push(line);
    }
    ctx.note(`bytes sent per rank within ${STEPS} × 3·(N-1)·Σ⌈n_k/N⌉·4 and in total at least ${STEPS} × (N-1)·(3·P - M)·4, for every world size · ${lines.join(' · ')}`);
  },
};
