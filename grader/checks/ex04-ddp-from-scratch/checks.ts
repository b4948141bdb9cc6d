/**
 * Public checks of ex04-ddp-from-scratch. Each trains a seeded model with
 * the submission's DataParallel on N rank workers, every rank on its own
 * part of each step's batch, and compares every rank's tensors with one
 * process trained here, at grade time, on the combined batch.
 *
 * Tolerance: float32, rtol 1e-5 and atol 1e-6 on every tensor after every
 * SGD step. The two runs add the same numbers in different orders (a mean
 * over each rank's part, then a ring average, against one mean over the
 * whole batch); measured between the reference solution and the
 * reference over 120 runs of 4 steps (12 seeds, 1 to 5 ranks, the public MLP
 * and the hidden toy model), the worst |diff| / max(|expected|, 0.1) was
 * 2.4e-7, 40 times under tolerance. A gradient that is not averaged, or
 * averaged with the wrong weight, moves parameters by 1e-3 and more after
 * one step.
 */
import { nn, optim, type Tensor } from '@dtlab/tensor';
import { COLLECTIVE_TAG } from '@dtlab/collectives';
import type { TraceEvent } from '@dtlab/runtime';
import { programPath, fenceTags, type CheckContext, type CheckFn, type ValueShape } from '@dtlab/grader';
import { buildMlp, namedTensors, rankBatch, singleProcessTraining, snapshot, type ModelBuilder, type TrainSpec, type Trajectory } from './data.ts';

const ENTRY = 'src/data-parallel.ts';
const program = { module: programPath(import.meta.url, './programs.ts'), export: 'trainDataParallel' };
/** See the file comment. */
export const TOLERANCE = { rtol: 1e-5, atol: 1e-6 };

/** A spec of the public checks: a small tanh MLP, replicas seeded differently on every rank. */
export function mlpSpec(seed: number, steps: number): TrainSpec {
  return { seed, sizes: [5, 12, 9, 3], batchPerRank: 4, steps, lr: 0.5, seedsDiffer: true };
}

/** The shape every rank's Trajectory must have. */
function trajectoryShape(spec: TrainSpec, build: ModelBuilder): ValueShape {
  const k = namedTensors(build(spec, 0)).length;
  return { object: { initial: { array: 'tensor', length: k }, steps: { array: { array: 'tensor', length: k }, length: spec.steps } } };
}

/** A model and the rank program that trains it: the public MLP unless a check gives another. */
export interface Trainee {
  build: ModelBuilder;
  program: { module: string; export: string };
}
const MLP: Trainee = { build: buildMlp, program };

/** Runs the trainee's program on `worldSize` ranks and returns every rank's trajectory, unchecked. */
export async function runTraining(ctx: CheckContext, worldSize: number, spec: TrainSpec, trainee: Trainee = MLP): Promise<Trajectory[]> {
  const result = await ctx.run({ worldSize, program: trainee.program, args: [ctx.entry(ENTRY), spec], returns: trajectoryShape(spec, trainee.build) });
  return result.ranks.map((r) => r.value as Trajectory);
}

const ranksWord = (n: number) => `${n} rank${n === 1 ? '' : 's'}`;

/**
 * A run of the public MLP whose backward passes are fenced (programs.ts):
 * every rank's trajectory and the launch's trace, cut at the fences.
 */
export async function runFencedTraining(ctx: CheckContext, worldSize: number, spec: TrainSpec): Promise<{ outputs: Trajectory[]; trace: TraceEvent[]; fences: number[] }> {
  // Secret to this check and launch, so a submission cannot send one of its own.
  const fences = fenceTags(ctx.markKey(), `${spec.seed} ${worldSize}`, 2 * spec.steps);
  const result = await ctx.run({ worldSize, program, args: [ctx.entry(ENTRY), spec, fences], returns: trajectoryShape(spec, buildMlp) });
  return { outputs: result.ranks.map((r) => r.value as Trajectory), trace: result.trace, fences };
}

/**
 * Every all-reduce of a step must begin during its backward, from a hook:
 * on every rank, every collective call that sends in a step (between fence
 * 2s and the next step's) must have sent its first message before the
 * fence after backward (a ring all-reduce sends its first chunk the moment
 * it starts). A call first seen after backward started late. Fences out of
 * order or missing fail too.
 */
export function expectAllReducesInBackward(ctx: CheckContext, trace: readonly TraceEvent[], worldSize: number, fences: readonly number[]): void {
  for (let rank = 0; rank < worldSize; rank++) {
    let next = 0;
    const during = new Set<number>();
    for (const e of trace) {
      if (e.src !== rank) continue;
      const at = fences.indexOf(e.tag);
      if (at >= 0 && e.dst === rank) {
        if (at !== next) ctx.fail(`rank ${rank} sent fence ${at} where fence ${next} was due: the check's fences around backward cannot be read`, { rank, index: null, expected: `fence ${next}`, actual: `fence ${at}`, label: 'fences around backward' });
        if (at % 2 === 0) during.clear();
        next++;
        continue;
      }
      if (e.dst === rank || e.tag < COLLECTIVE_TAG || next === 0) continue;
      const step = Math.floor((next - 1) / 2);
      if (next % 2 === 1) during.add(e.tag);
      else if (!during.has(e.tag)) {
        ctx.fail(`rank ${rank}: at step ${step + 1} with ${ranksWord(worldSize)}, collective call #${e.tag - COLLECTIVE_TAG} began only after backward() had returned: average each gradient from a hook (registerPostAccumulateGradHook) as soon as it is complete, while backward is still running, and only wait for the averages in finishGradientSynchronization`, {
          rank,
          index: e.tag - COLLECTIVE_TAG,
          expected: 'every all-reduce begun during backward',
          actual: 'begun after backward',
          label: `all-reduce #${e.tag - COLLECTIVE_TAG} of step ${step + 1}`,
        });
      }
    }
    if (next !== fences.length) ctx.fail(`rank ${rank} passed ${next} of the ${fences.length} fences around backward`, { rank, index: null, expected: fences.length, actual: next, label: 'fences around backward' });
  }
}

/**
 * rank `rank`'s tensors after one SGD step on its own part of the first
 * batch alone, from rank 0's model: what a rank holds after step 1 when its
 * gradient was never averaged with the other ranks'.
 */
function localFirstStep(spec: TrainSpec, rank: number, build: ModelBuilder): Tensor[] {
  const model = build(spec, 0);
  const tensors = namedTensors(model).map((e) => e.tensor);
  const sgd = new optim.SGD([...new Set(model.parameters())], { lr: spec.lr });
  const { x, y } = rankBatch(spec, 0, rank);
  nn.crossEntropy(model.forward(x), y).backward();
  sgd.step();
  return snapshot(tensors);
}

function close(a: Tensor, b: Tensor): boolean {
  const x = a.toArray();
  const y = b.toArray();
  return x.length === y.length && x.every((v, i) => Math.abs(v - y[i]!) <= TOLERANCE.atol + TOLERANCE.rtol * Math.abs(y[i]!));
}

/**
 * Compares every rank's trajectory with the single-process reference: after
 * `create` every tensor must be rank 0's exactly (a broadcast copies), and
 * after each step within TOLERANCE. Before failing at step 1 it says when a
 * rank holds what training on its own part alone gives.
 */
export function expectTrajectories(ctx: CheckContext, outputs: Trajectory[], spec: TrainSpec, build: ModelBuilder = buildMlp): void {
  const worldSize = outputs.length;
  const names = namedTensors(build(spec, 0));
  const expected = singleProcessTraining(spec, worldSize, build);
  outputs.forEach((out, rank) =>
    names.forEach(({ name, what }, i) =>
      ctx.expectEqual(out.initial[i]!, expected.initial[i]!, { rank, label: `${name}${what} when DataParallel.create resolved, against rank 0's initial value, with ${ranksWord(worldSize)}` }),
    ),
  );
  for (let s = 0; s < spec.steps; s++) {
    if (s === 0 && worldSize > 1) noteLocalSteps(ctx, outputs, spec, expected.steps[0]!, build);
    outputs.forEach((out, rank) =>
      names.forEach(({ name, what }, i) =>
        ctx.expectClose(out.steps[s]![i]!, expected.steps[s]![i]!, { rank, label: `${name}${what} after SGD step ${s + 1} with ${ranksWord(worldSize)}`, ...TOLERANCE }),
      ),
    );
  }
}

/**
 * Notes what a wrong first step equals, when it equals one of the two
 * classic wrong steps: each rank's own part alone (its gradient never
 * averaged), or the combined batch with N times the mean gradient (a sum).
 */
function noteLocalSteps(ctx: CheckContext, outputs: Trajectory[], spec: TrainSpec, want: Tensor[], build: ModelBuilder): void {
  const worldSize = outputs.length;
  const wrong = outputs.map((out) => out.steps[0]!.some((t, i) => !close(t, want[i]!)));
  const local = outputs.map((out, rank) => wrong[rank]! && localFirstStep(spec, rank, build).every((t, i) => close(out.steps[0]![i]!, t)));
  const ranks = local.flatMap((l, r) => (l ? [r] : []));
  if (ranks.length > 0) {
    const who = ranks.length === 1 ? `rank ${ranks[0]} holds` : `ranks ${ranks.join(', ')} each hold`;
    ctx.note(`after step 1, ${who} what one SGD step on the rank's own part of the batch alone gives: its gradients were not averaged with the other ranks' before the step`);
    return;
  }
  const summed = singleProcessTraining({ ...spec, steps: 1, lr: spec.lr * worldSize }, worldSize, build).steps[0]!;
  const sums = outputs.flatMap((out, rank) => (wrong[rank] && summed.every((t, i) => close(out.steps[0]![i]!, t)) ? [rank] : []));
  if (sums.length > 0) ctx.note(`after step 1, rank${sums.length === 1 ? '' : 's'} ${sums.join(', ')} hold${sums.length === 1 ? 's' : ''} one SGD step with ${worldSize} times the mean gradient of the combined batch: the sum over the ranks, not the mean`);
}

/** Compares every rank's tensors after the last step with rank 0's, bit for bit. */
export function expectRanksAgree(ctx: CheckContext, outputs: Trajectory[], spec: TrainSpec, build: ModelBuilder = buildMlp): void {
  const names = namedTensors(build(spec, 0));
  const last = (o: Trajectory) => o.steps[spec.steps - 1]!;
  outputs.slice(1).forEach((out, k) =>
    names.forEach(({ name, what }, i) => ctx.expectEqual(last(out)[i]!, last(outputs[0]!)[i]!, { rank: k + 1, label: `${name}${what} after step ${spec.steps}, against rank 0's, bit for bit` })),
  );
}

export const checks: Record<string, CheckFn> = {
  broadcast: async (ctx) => {
    const spec = mlpSpec(ctx.seedFor('model'), 0);
    expectTrajectories(ctx, await runTraining(ctx, 3, spec), spec);
    ctx.note('3 ranks built their replicas from different seeds: after create, every rank holds rank 0\'s values');
  },
  'two-ranks-sgd': async (ctx) => {
    const spec = mlpSpec(ctx.seedFor('model'), 3);
    const run = await runFencedTraining(ctx, 2, spec);
    expectTrajectories(ctx, run.outputs, spec);
    expectAllReducesInBackward(ctx, run.trace, 2, run.fences);
    ctx.note(`2 ranks, ${spec.steps} SGD steps: every tensor matches one process on the combined batch, and every all-reduce began during backward`);
  },
  'ranks-agree': async (ctx) => {
    const spec = mlpSpec(ctx.seedFor('model'), 3);
    const outputs = await runTraining(ctx, 3, spec);
    // The values first, so that a wrong rank is named as wrong; then the same bits everywhere.
    expectTrajectories(ctx, outputs, spec);
    expectRanksAgree(ctx, outputs, spec);
    ctx.note(`3 ranks, ${spec.steps} SGD steps: every rank holds bit for bit the same values, and they match one process`);
  },
};
