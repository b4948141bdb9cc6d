/**
 * Hidden checks of ex03-zero-sharding.
 *
 * The training experiment: N ranks start from the same seeded MLP
 * (16-63-48-10, tanh: P = 4633 parameter elements, 1 mod 2, 3 and 4 and 3
 * mod 5, so that for every N from 3 to 5 chunkBounds(P, N) differs from
 * blocks of ⌈P/N⌉, torch.chunk's rule), each takes its own mini-batch of 6 examples per step, and they
 * train 5 steps with the submission's ZeroAdamW (loss: cross-entropy mean).
 * The reference is single-process optim.AdamW on the combined batch of
 * 6·N examples, computed here. One launch per world size serves all three
 * checks below (see `training`).
 *
 * Tolerance of the parity: float32, rtol 1e-4 and atol 1e-5 on every
 * parameter after every step. The two computations add the same numbers in
 * different orders (per-rank means then a ring average, against one mean
 * over the combined batch). With eps = 1e-3 (see CHECK_OPTIONS) the worst
 * difference measured between the reference solution and the reference,
 * over 150 experiments of 5 steps, was 6e-8: 300 times under tolerance.
 * (With torch's default eps 1e-8 it reached 1.4e-5: Adam's g/(|g| + eps)
 * turns the rounding of a near-zero gradient into a visible step.)
 */
import { chunkBounds, deriveSeed } from '@dtlab/tensor';
import type { RankStats } from '@dtlab/runtime';
import { programPath, type CheckContext, type CheckFn } from '@dtlab/grader';
import { makeModel, singleProcessTraining, type Experiment } from './experiment.ts';
import { BYTES_PER_ELEMENT, CHECK_OPTIONS } from '../../checks/ex03-zero-sharding/data.ts';
import { expectCheckpointRoundTrip, expectParity, shardSizes, type ParamLayout } from '../../checks/ex03-zero-sharding/checks.ts';
import type { StepsResult } from '../../checks/ex03-zero-sharding/programs.ts';

const ENTRY = 'src/zero-adamw.ts';
const program = { module: programPath(import.meta.url, './programs.ts'), export: 'zeroTraining' };
const resume = { module: programPath(import.meta.url, './programs.ts'), export: 'resumeTraining' };
const memoryProgram = { module: programPath(import.meta.url, './programs.ts'), export: 'zeroMemory' };
/** Every rank checkpoints after this many steps; the memory check resumes from there. */
const CHECKPOINT_AFTER = 3;
const SIZES = [16, 63, 48, 10];
const STEPS = 5;
const TOLERANCE = { rtol: 1e-4, atol: 1e-5 };

/** The experiment with `worldSize` ranks; its seed depends on the grading seed only, so every check below draws the same one. */
function experiment(ctx: CheckContext, worldSize: number): Experiment {
  return { seed: deriveSeed(ctx.seed, 3, worldSize), sizes: SIZES, batchPerRank: 6, steps: STEPS, opts: CHECK_OPTIONS, checkpointAfter: CHECKPOINT_AFTER };
}

/** One training launch: what every rank returned and the fabric's per-rank traffic. */
interface TrainingRun {
  e: Experiment;
  outputs: StepsResult[];
  stats: RankStats[];
}

/**
 * The training run with `worldSize` ranks, launched by the first check that
 * needs it: parity, memory and traffic are three views of the same run, and a
 * launch of 5 workers costs seconds on a loaded machine. A failed launch fails
 * every check that needs it.
 */
function training(ctx: CheckContext, worldSize: number): Promise<TrainingRun> {
  const e = experiment(ctx, worldSize);
  return ctx.shared(`ex03 training ${worldSize} ${e.seed}`, () =>
    ctx.run({ worldSize, program, args: [ctx.entry(ENTRY), e], returns: { object: { params: { array: 'tensor', length: e.steps } } } }).then((r) => ({ e, outputs: r.ranks.map((o) => o.value as StepsResult), stats: r.stats })),
  );
}

function layout(e: Experiment): ParamLayout {
  const named = makeModel(e).namedParameters();
  return { names: named.map(([n]) => n), shapes: named.map(([, p]) => [...p.shape]) };
}

const paramCount = (e: Experiment) => makeModel(e).numParameters();

export const checks: Record<string, CheckFn> = {
  'training-parity': async (ctx) => {
    for (const worldSize of ctx.manifest.worldSizes) {
      const { e, outputs } = await training(ctx, worldSize);
      expectParity(ctx, outputs, singleProcessTraining(e, worldSize), layout(e), TOLERANCE);
    }
    ctx.note(`world sizes ${ctx.manifest.worldSizes.join(', ')}: ${STEPS} steps of every rank match single-process AdamW on the combined batch (rtol ${TOLERANCE.rtol}, atol ${TOLERANCE.atol})`);
  },
  'optimizer-memory': async (ctx) => {
    const sizes: string[] = [];
    for (const worldSize of ctx.manifest.worldSizes) {
      const { e, outputs } = await training(ctx, worldSize);
      const expected = singleProcessTraining(e, worldSize);
      const { bytes } = await expectCheckpointRoundTrip(ctx, {
        worldSize,
        p: paramCount(e),
        checkpointAfter: CHECKPOINT_AFTER,
        steps: STEPS,
        first: outputs,
        firstStats: (await training(ctx, worldSize)).stats,
        expected,
        layout: layout(e),
        tol: TOLERANCE,
        resume: (checkpoints) => ({ worldSize, program: resume, args: [ctx.entry(ENTRY), e, expected[CHECKPOINT_AFTER - 1]!, checkpoints] }),
      });
      sizes.push(`N=${worldSize}: ${Math.max(...bytes)} B`);
    }
    ctx.note(`every rank's checkpoint held the moments of its own shard, in float32, and nothing else; the largest · ${sizes.join(' · ')}; from them, fresh optimizers resumed training in parity, sending no more a step than before`);
    const kept: string[] = [];
    for (const worldSize of ctx.manifest.worldSizes) kept.push(`N=${worldSize}: ${await expectDeviceState(ctx, worldSize)}`);
    ctx.note(`on the virtual device, the memory the optimizer kept between steps, per rank · ${kept.join(' · ')}`);
  },
  'communication-volume': async (ctx) => {
    for (const worldSize of ctx.manifest.worldSizes) {
      const { e, stats } = await training(ctx, worldSize);
      expectTraffic(ctx, stats, paramCount(e), STEPS, `in ${STEPS} steps`);
    }
    ctx.note(`bytes sent per rank within ${STEPS} × 2·(N-1)·⌈P/N⌉·4, and in total at least ${STEPS} × 2·(N-1)·P·4, for every world size`);
  },
};

/**
 * What the optimizer keeps between steps may be at most its two moments of
 * this rank's shard, 2·|shard|·4 bytes, one more shard-sized buffer (a
 * working copy of its parameters' shard) and STATE_SLACK_BYTES for its own
 * bookkeeping, measured on the virtual device (trusted marks before the
 * optimizer exists and after each step, see zeroMemory): the device counts
 * every buffer the rank holds, wherever the code keeps it (a WeakMap, a
 * #private field, a closure, a raw typed array), so state the checkpoint
 * does not show is counted here. Returns the largest figure, for the note.
 */
async function expectDeviceState(ctx: CheckContext, worldSize: number): Promise<string> {
  const e = experiment(ctx, worldSize);
  const p = paramCount(e);
  const key = ctx.markKey();
  const r = await ctx.run({ worldSize, program: memoryProgram, args: [ctx.entry(ENTRY), e, key], device: 'course', markKey: key, memoryPoints: 'marks', returns: 'number' });
  const bounds = chunkBounds(p, worldSize);
  const figures = r.device!.ranks.map((d) => {
    const marks = d.memory.marks.filter((m) => m.trusted);
    const before = marks.find((m) => m.label === 'before the optimizer');
    const after = marks.filter((m) => m.label.startsWith('after step '));
    if (!before || after.length !== e.steps) ctx.fail(`rank ${d.rank}: the memory marks of the check's program did not all arrive (${marks.map((m) => m.label).join(', ') || 'none'})`);
    return { rank: d.rank, kept: Math.max(...after.map((m) => m.inUseBytes)) - before!.inUseBytes, after };
  });
  for (const f of figures) {
    const shard = bounds[f.rank]!.end - bounds[f.rank]!.start;
    const moments = 2 * shard * BYTES_PER_ELEMENT;
    const limit = moments + shard * BYTES_PER_ELEMENT + STATE_SLACK_BYTES;
    if (f.kept > limit) {
      const worst = f.after.reduce((a, b) => (b.inUseBytes > a.inUseBytes ? b : a));
      const beyond = f.kept - moments;
      const floats = Math.round(beyond / BYTES_PER_ELEMENT);
      const what = floats >= p - 1 ? `${floats} floats, P = ${p} or more: a full-size buffer (a copy of every parameter, gradient or moment)` : `${floats} floats, more than the shard's ${shard}`;
      ctx.fail(
        `rank ${f.rank}: with ${worldSize} rank${worldSize === 1 ? '' : 's'} (P = ${p}) the optimizer kept ${f.kept} bytes between steps (measured on the virtual device ${worst.label}): ${beyond} bytes beyond its two moments of this rank's shard (2 × ${shard} × 4 = ${moments}), ${what}. It may keep one working copy of its shard (${shard * BYTES_PER_ELEMENT} bytes) and ${STATE_SLACK_BYTES} for bookkeeping; ZeRO keeps only the shard of everything the optimizer owns. The device counts every buffer a rank holds, wherever the code keeps it`,
        { rank: f.rank, index: null, expected: `<= ${limit} bytes`, actual: `${f.kept} bytes`, label: `optimizer memory of rank ${f.rank} with ${worldSize} ranks` },
      );
    }
  }
  return `${Math.max(...figures.map((f) => f.kept))} B (2·⌈P/N⌉·4 = ${2 * Math.ceil(p / worldSize) * BYTES_PER_ELEMENT} B)`;
}

/** Bytes an optimizer may keep between steps beyond its moments: a step counter and small bookkeeping, not a buffer of P. */
const STATE_SLACK_BYTES = 1024;

/**
 * The traffic of `steps` ZeRO-1 steps over P elements: a reduce-scatter and
 * an all-gather of P elements a step, so every rank sends at most
 * 2·(N-1)·⌈P/N⌉ elements a step (shards of ⌈P/N⌉ bound any rank), and all
 * ranks together at least 2·(N-1)·P (every rank's gradient must leave it,
 * every shard must reach N-1 ranks).
 */
function expectTraffic(ctx: CheckContext, stats: RankStats[], p: number, steps: number, when: string): void {
  const worldSize = stats.length;
  const perRankMax = steps * 2 * (worldSize - 1) * Math.ceil(p / worldSize) * BYTES_PER_ELEMENT;
  const totalMin = steps * 2 * (worldSize - 1) * p * BYTES_PER_ELEMENT;
  // What the ring collectives send, exactly: all chunks but our own, then all but our successor's.
  const shard = chunkBounds(p, worldSize).map((b) => b.end - b.start);
  const ring = (r: number) => steps * (2 * p - shard[r]! - shard[(r + 1) % worldSize]!) * BYTES_PER_ELEMENT;
  const ranks = `${worldSize} rank${worldSize === 1 ? '' : 's'}`;
  for (const { rank, bytesSent } of stats) {
    if (bytesSent > perRankMax) {
      ctx.fail(
        `rank ${rank} sent ${bytesSent} bytes ${when} with ${ranks} (P = ${p}), more than a reduce-scatter and an all-gather of P float32 need: ${steps} × 2·(N-1)·⌈P/N⌉·4 = ${perRankMax} (a ring with shards of ${shardSizes(p, worldSize)} sends ${ring(rank)})`,
        { rank, index: null, expected: `<= ${perRankMax}`, actual: bytesSent, label: `bytes sent by rank ${rank} ${when}` },
      );
    }
  }
  const total = stats.reduce((s, x) => s + x.bytesSent, 0);
  if (total < totalMin) {
    ctx.fail(
      `with ${ranks} (P = ${p}) all ranks together sent ${total} bytes ${when}, less than the ${totalMin} bytes (${steps} × 2·(N-1)·P·4) that averaging the gradients and gathering the parameters need: part of the exchange is missing`,
      { rank: null, index: null, expected: `>= ${totalMin}`, actual: total, label: `bytes sent by all ranks ${when}` },
    );
  }
}
