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
import { Tensor, flattenTensors, nn, ones, optim, tensor, zeros } from '@dtlab/tensor';
import { loadExport, withWhatItLeft, type ValueShape } from '@dtlab/grader';
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

/** The figures of one step that every run hands back (see TrainingResult), read after the submission's step. */
function stepFigures(params: Tensor[], loss: unknown, inFlight: number, opt: optim.SGD, out: TrainingResult, losses: number[], inFlights: number[], step: number): void {
  losses.push(typeof loss === 'number' ? loss : Number.NaN);
  inFlights.push(inFlight);
  params.forEach((p, i) => {
    if (!(p.grad instanceof Tensor)) out.missing.push(`step ${step + 1}: parameter ${i} of the stage`);
  });
  out.grads.push(flattenTensors(params.map((p) => (p.grad instanceof Tensor ? p.grad : zeros(p.shape, { dtype: p.dtype })))));
  opt.step();
  out.params.push(flattenTensors(params));
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
    stepFigures(params, loss, count.reset(), opt, out, losses, inFlight, s);
  }
  out.losses = tensor(losses, { dtype: 'float64' });
  out.inFlight = tensor(inFlight, { dtype: 'float64' });
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
 * (referenceLabel): what a stage computes for its first micro-batch and for
 * each later one, which the check scales by m. Then the gradients and the
 * in-flight count are reset, every stage starts together (a barrier), and
 * the submission's step runs inside a profiler region (stepLabel) whose
 * label holds the check's secret key, so that no region of the
 * submission's adds to it. Hands back what a training step does
 * (gradients, parameters after SGD, the loss, the micro-batches in flight),
 * so that the timed step is checked for its values and its schedule too.
 */
export async function timedStep(comm: Comm, entry: string, spec: PipelineSpec, exportName: string, key: string): Promise<TrainingResult> {
  const step = await loadExport<PipelineStep>(entry, exportName);
  const count = counter();
  const stage = makeStage(spec, comm.rank, count.probe);
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
  count.reset();
  await comm.barrier();
  // Background work the step never waited for is waited inside the region, so its time counts.
  const loss = await profile.region(stepLabel(key), () => withWhatItLeft(comm, () => step(comm, stage, part, spec.microBatches)));
  const out: TrainingResult = { grads: [], params: [], losses: zeros([0]), inFlight: zeros([0]), missing: [] };
  const losses: number[] = [];
  const inFlight: number[] = [];
  stepFigures(params, loss, count.reset(), opt, out, losses, inFlight, 0);
  out.losses = tensor(losses, { dtype: 'float64' });
  out.inFlight = tensor(inFlight, { dtype: 'float64' });
  return out;
}

/** What the memory run hands back: the step's figures, as a training step's, and the bytes one micro-batch keeps. */
export interface MemoryResult extends TrainingResult {
  perMicroBatch: number;
}

/** The shape `ctx.run` checks on what the memory run returns. */
export const MEMORY_RESULT: ValueShape = { object: { grads: { array: 'tensor', length: 1 }, params: { array: 'tensor', length: 1 }, losses: 'tensor', inFlight: 'tensor', missing: { array: 'string' }, perMicroBatch: 'number' } };

/**
 * The memory of one step on the virtual device, between trusted marks.
 * First this program measures what one micro-batch keeps alive on this
 * stage (its input and the stage's graph, and on the last stage the loss's
 * graph too, from a forward of the check's own), then frees it; then it
 * marks before and after the submission's step. Hands back the bytes one
 * micro-batch keeps (the marks give the step's peak over the bytes in use
 * before it) and the step's figures, so that the measured step is checked
 * for its values and its schedule too.
 */
export async function memoryStep(comm: Comm, entry: string, spec: PipelineSpec, exportName: string, key: string): Promise<MemoryResult> {
  const step = await loadExport<PipelineStep>(entry, exportName);
  const count = counter();
  const stage = makeStage(spec, comm.rank, count.probe);
  const params = stage.parameters();
  const opt = new optim.SGD(params, { lr: spec.lr });
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
  count.reset();
  await memory.mark('before the step', { key });
  const loss = await step(comm, stage, part, spec.microBatches);
  await memory.mark('after the step', { key });
  const out: TrainingResult = { grads: [], params: [], losses: zeros([0]), inFlight: zeros([0]), missing: [] };
  const losses: number[] = [];
  const inFlight: number[] = [];
  stepFigures(params, loss, count.reset(), opt, out, losses, inFlight, 0);
  out.losses = tensor(losses, { dtype: 'float64' });
  out.inFlight = tensor(inFlight, { dtype: 'float64' });
  return { ...out, perMicroBatch: (kept?.inUseBytes ?? 0) - (before?.inUseBytes ?? 0) };
}
