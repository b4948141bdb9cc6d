/**
 * Rank programs of the ex11 checks: each rank builds its stage of the
 * seeded model, and for every step zeroes the gradients, hands the
 * submission's step its stage and its part of the batch (the inputs on the
 * first stage, the targets on the last), and takes an SGD step of its own
 * on the stage's parameters. It hands back, per step, the stage's gradients
 * and parameters (flat) and the loss the step reported.
 */
import { profile, type Comm } from '@dtlab/runtime';
import { Tensor, flattenTensors, optim, tensor, zeros } from '@dtlab/tensor';
import { loadExport, type ValueShape } from '@dtlab/grader';
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
 * One timed step on the virtual device: every stage starts together (a
 * barrier), and the step runs inside a profiler region whose label holds
 * the check's secret key, so that no region of the submission's adds to it.
 */
export async function timedStep(comm: Comm, entry: string, spec: PipelineSpec, exportName: string, key: string): Promise<number> {
  const step = await loadExport<PipelineStep>(entry, exportName);
  const stage = makeStage(spec, comm.rank);
  const part = partOf(comm, spec, 0);
  await comm.barrier();
  await profile.region(`pipeline step ${key}`, () => step(comm, stage, part, spec.microBatches));
  return 0;
}
