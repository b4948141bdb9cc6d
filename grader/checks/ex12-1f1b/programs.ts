/**
 * Rank programs of the ex12 checks: each rank builds its stage of the
 * seeded model, and for every step zeroes the gradients, hands the
 * submission's step its stage and its part of the batch (the inputs on the
 * first stage, the targets on the last), and takes an SGD step of its own
 * on the stage's parameters. It hands back, per step, the stage's gradients
 * and parameters (flat), the loss the step reported, and the most
 * micro-batches the stage held at once.
 *
 * Micro-batches in flight are counted by the stage itself: a forward
 * registers a gradient hook on the output of the stage's first layer and
 * counts one more micro-batch alive; the hook runs when that micro-batch's
 * backward reaches the tensor, and counts it done.
 */
import { memory, profile, type Comm } from '@dtlab/runtime';
import { Tensor, flattenTensors, nn, optim, tensor, zeros } from '@dtlab/tensor';
import { loadExport, type ValueShape } from '@dtlab/grader';
import { batchOf, makeStage, type PipelineSpec } from './data.ts';

/** The submission's step, as the rank programs call it. */
export type PipelineStep = (comm: Comm, stage: { forward(x: Tensor): Tensor }, batch: { inputs?: Tensor; targets?: readonly number[] }, microBatches: number) => Promise<number | null>;

/** What a rank hands back: per step, its stage's gradients and parameters (flat), the loss its step reported (NaN for null), and the most micro-batches in flight. */
export interface TrainingResult {
  grads: Tensor[];
  params: Tensor[];
  losses: Tensor;
  /** Per step: the largest number of this stage's micro-batches whose forward had run and whose backward had not. */
  inFlight: Tensor;
  /** Parameters (by index in the stage) that had no gradient after a step. */
  missing: string[];
}

/** The shape `ctx.run` checks on what a rank returns. */
export function trainingShape(steps: number): ValueShape {
  return { object: { grads: { array: 'tensor', length: steps }, params: { array: 'tensor', length: steps }, losses: 'tensor', inFlight: 'tensor', missing: { array: 'string' } } };
}

/** A counter of micro-batches alive on a stage, and the probe that feeds it. */
function counter(): { probe: (h: Tensor) => void; reset(): number } {
  let alive = 0;
  let most = 0;
  return {
    probe: (h) => {
      if (!h.requiresGrad) return;
      alive++;
      most = Math.max(most, alive);
      h.registerHook(() => void alive--);
    },
    reset: () => {
      const m = most;
      alive = 0;
      most = 0;
      return m;
    },
  };
}

/** This rank's part of the batch: inputs on the first stage, targets on the last. */
function partOf(comm: Comm, spec: PipelineSpec, step: number): { inputs?: Tensor; targets?: readonly number[] } {
  const { inputs, targets } = batchOf(spec, step);
  return { ...(comm.rank === 0 ? { inputs } : {}), ...(comm.rank === comm.worldSize - 1 ? { targets: [...targets] } : {}) };
}

/** Trains `spec.steps` steps with the submission's pipeline step named `exportName`. */
export async function pipelineTraining(comm: Comm, entry: string, spec: PipelineSpec, exportName: string): Promise<TrainingResult> {
  const step = await loadExport<PipelineStep>(entry, exportName);
  const count = counter();
  const stage = makeStage(spec, comm.rank, count.probe);
  const params = stage.parameters();
  const opt = new optim.SGD(params, { lr: spec.lr });
  const out: TrainingResult = { grads: [], params: [], losses: zeros([0]), inFlight: zeros([0]), missing: [] };
  const losses: number[] = [];
  const inFlight: number[] = [];
  for (let s = 0; s < spec.steps; s++) {
    opt.zeroGrad();
    const loss = await step(comm, stage, partOf(comm, spec, s), spec.microBatches);
    losses.push(typeof loss === 'number' ? loss : Number.NaN);
    inFlight.push(count.reset());
    params.forEach((p, i) => {
      if (!(p.grad instanceof Tensor)) out.missing.push(`step ${s + 1}: parameter ${i} of the stage`);
    });
    out.grads.push(flattenTensors(params.map((p) => (p.grad instanceof Tensor ? p.grad : zeros(p.shape, { dtype: p.dtype })))));
    opt.step();
    out.params.push(flattenTensors(params));
  }
  out.losses = tensor(losses, { dtype: 'float64' });
  out.inFlight = tensor(inFlight, { dtype: 'float64' });
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

/**
 * The memory of one step on the virtual device, between trusted marks.
 * First this program measures what one micro-batch keeps alive on this
 * stage (its input and the stage's graph, and on the last stage the loss's
 * graph too, from a forward of the check's own), then frees it; then it
 * marks before and after the submission's step. Resolves to the bytes one micro-batch keeps; the
 * marks give the step's peak over the bytes in use before it.
 */
export async function memoryStep(comm: Comm, entry: string, spec: PipelineSpec, exportName: string, key: string): Promise<number> {
  const step = await loadExport<PipelineStep>(entry, exportName);
  const stage = makeStage(spec, comm.rank);
  const part = partOf(comm, spec, 0);
  const rows = Math.ceil(spec.batch / spec.microBatches);
  const width = stage.layers[0]!.inFeatures;
  const before = await memory.mark('calibrate: before', { key });
  let x: Tensor | null = zeros([rows, width], { dtype: spec.dtype });
  x.requiresGrad = true;
  let y: Tensor | null = stage.forward(x);
  if (comm.rank === comm.worldSize - 1) y = nn.crossEntropy(y, part.targets!.slice(0, rows));
  const kept = await memory.mark('calibrate: one micro-batch alive', { key });
  void y;
  x = null;
  y = null;
  await memory.mark('before the step', { key });
  await step(comm, stage, part, spec.microBatches);
  await memory.mark('after the step', { key });
  return (kept?.inUseBytes ?? 0) - (before?.inUseBytes ?? 0);
}
