/**
 * Rank programs of the ex11 checks: each rank builds its stage of the
 * seeded model, and for every step zeroes the gradients, hands the
 * submission's step its stage and its part of the batch (the inputs on the
 * first stage, the targets on the last), and takes an SGD step of its own
 * on the stage's parameters. It hands back, per step, the stage's gradients
 * and parameters (flat) and the loss the step reported.
 */
import { profile, type Comm } from '@dtlab/runtime';
import { Tensor, flattenTensors, nn, ones, optim, tensor, zeros } from '@dtlab/tensor';
import { loadExport, withWhatItLeft, type ValueShape } from '@dtlab/grader';
import { batchOf, makeStage, type PipelineSpec } from './data.ts';

/** The submission's step, as the rank programs call it. */
export type PipelineStep = (comm: Comm, stage: { forward(x: Tensor): Tensor }, batch: { inputs?: Tensor; targets?: readonly number[] }, microBatches: number) => Promise<number | null>;

/** What a rank hands back: per step, its stage's gradients and parameters (flat), and the loss its step reported (NaN for null). */
export interface TrainingResult {
  grads: Tensor[];
  params: Tensor[];
  losses: Tensor;
  /** Parameters (by index in the stage) that had no gradient after a step: "step 1: 2.weight". */
  missing: string[];
}

/** The shape `ctx.run` checks on what a rank returns. */
export function trainingShape(steps: number): ValueShape {
  return { object: { grads: { array: 'tensor', length: steps }, params: { array: 'tensor', length: steps }, losses: 'tensor', missing: { array: 'string' } } };
}

/** This rank's part of the batch: inputs on the first stage, targets on the last. */
function partOf(comm: Comm, spec: PipelineSpec, step: number): { inputs?: Tensor; targets?: readonly number[] } {
  const { inputs, targets } = batchOf(spec, step);
  return { ...(comm.rank === 0 ? { inputs } : {}), ...(comm.rank === comm.worldSize - 1 ? { targets: [...targets] } : {}) };
}

/** Trains `spec.steps` steps with the submission's pipeline step named `exportName`. */
export async function pipelineTraining(comm: Comm, entry: string, spec: PipelineSpec, exportName: string): Promise<TrainingResult> {
  const step = await loadExport<PipelineStep>(entry, exportName);
  const stage = makeStage(spec, comm.rank);
  const params = stage.parameters();
  const opt = new optim.SGD(params, { lr: spec.lr });
  const out: TrainingResult = { grads: [], params: [], losses: zeros([0]), missing: [] };
  const losses: number[] = [];
  for (let s = 0; s < spec.steps; s++) {
    opt.zeroGrad();
    const loss = await step(comm, stage, partOf(comm, spec, s), spec.microBatches);
    losses.push(typeof loss === 'number' ? loss : Number.NaN);
    params.forEach((p, i) => {
      if (!(p.grad instanceof Tensor)) out.missing.push(`step ${s + 1}: parameter ${i} of the stage`);
    });
    out.grads.push(flattenTensors(params.map((p) => (p.grad instanceof Tensor ? p.grad : zeros(p.shape, { dtype: p.dtype })))));
    opt.step();
    out.params.push(flattenTensors(params));
  }
  out.losses = tensor(losses, { dtype: 'float64' });
  return out;
}

/**
 * The label of the region in which the timed run's rank program does
 * micro-batch `k` (0 or 1) forward and backward through its stage itself:
 * the work the step must do m times, measured on this device, in this run.
 * The second one's backward adds into the gradients the first one left, as
 * every micro-batch's after the first does.
 */
export const referenceLabel = (key: string, k: number) => `reference micro-batch ${k} ${key}`;

/** The label of the region around the submission's timed step. */
export const stepLabel = (key: string) => `pipeline step ${key}`;

/**
 * One timed step on the virtual device. First the rank runs two
 * micro-batches (ceil(B/m) rows each) forward and backward through its
 * stage, the last stage's loss included, each in a region of its own
 * (referenceLabel): what a stage computes for its first micro-batch and
 * for each later one, which the check scales by m. Then the gradients are
 * zeroed, every stage starts together (a barrier), and the submission's
 * step runs inside a profiler region (stepLabel) whose label holds the
 * check's secret key, so that no region of the submission's adds to it.
 * Hands back what a training step does (gradients, parameters after SGD,
 * the loss), so that the timed step is checked for its values too.
 */
export async function timedStep(comm: Comm, entry: string, spec: PipelineSpec, exportName: string, key: string): Promise<TrainingResult> {
  const step = await loadExport<PipelineStep>(entry, exportName);
  const stage = makeStage(spec, comm.rank);
  const params = stage.parameters();
  const opt = new optim.SGD(params, { lr: spec.lr });
  const part = partOf(comm, spec, 0);
  const rows = Math.ceil(spec.batch / spec.microBatches);
  for (const k of [0, 1]) {
    profile.region(referenceLabel(key, k), () => {
      const x = zeros([rows, stage.layers[0]!.inFeatures], { dtype: spec.dtype });
      x.requiresGrad = true;
      const y = stage.forward(x);
      if (comm.rank === comm.worldSize - 1) nn.crossEntropy(y, part.targets!.slice(0, rows)).mul(rows / spec.batch).backward();
      else y.backward(ones(y.shape, { dtype: y.dtype }));
    });
  }
  opt.zeroGrad();
  await comm.barrier();
  // Background work the step never waited for is waited inside the region, so its time counts.
  const loss = await profile.region(stepLabel(key), () => withWhatItLeft(comm, () => step(comm, stage, part, spec.microBatches)));
  const missing: string[] = [];
  params.forEach((p, i) => {
    if (!(p.grad instanceof Tensor)) missing.push(`step 1: parameter ${i} of the stage`);
  });
  const grads = flattenTensors(params.map((p) => (p.grad instanceof Tensor ? p.grad : zeros(p.shape, { dtype: p.dtype }))));
  opt.step();
  return { grads: [grads], params: [flattenTensors(params)], losses: tensor([typeof loss === 'number' ? loss : Number.NaN], { dtype: 'float64' }), missing };
}
