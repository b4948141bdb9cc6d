/**
 * Rank programs of the ex07 checks: they run in the rank workers, train the
 * seeded MLP with the submission's Zero2AdamW, and return the parameters
 * after each step (and, when asked, the checkpoint). The memory program also
 * brackets one step's backward with memory marks made with the check's key,
 * so that the device reports what the gradients took, wherever the
 * submission kept them.
 */
import type { Comm } from '@dtlab/runtime';
import { memory } from '@dtlab/runtime';
import { chunkBounds, flattenTensors, nn, noGrad, unflattenTensors, zeros, type Tensor, type optim } from '@dtlab/tensor';
import { allGather } from '@dtlab/collectives';
import { loadExport, fencer } from '@dtlab/grader';
import { makeModel, miniBatch, optimizerParams, type Experiment } from './data.ts';
import { expectCheckpointKept, loadableCheckpoint, markChangedSinceSave, saveCheckpoint, type SavedCheckpoint, type StepsResult } from '../ex03-zero-sharding/programs.ts';
import { fingerprintOf } from '../ex03-zero-sharding/data.ts';

/** The submission's class, as the rank programs use it. */
export type Zero2AdamWClass = new (comm: Comm, params: Tensor[], opts: optim.AdamOptions & { bucketBytes?: number }) => {
  step(): Promise<void>;
  stateDict(): unknown;
  loadStateDict(dict: unknown): void;
};

/** Labels of the marks the memory program makes, in order (the backward's own marks come between the last two). */
export const MARKS = { base: 'before the optimizer', beforeForward: 'before forward', beforeBackward: 'before backward', inBackward: 'in backward', afterBackward: 'after backward' } as const;

/**
 * Where the memory program measures: the step (from 0) whose backward it
 * brackets, the key of its marks, and the tags of its fences (fences.ts):
 * fence 0 just before that step's backward, fence 1 just after it, fence 2
 * after that step's `optimizer.step()`.
 */
export interface Measure {
  step: number;
  key: string;
  fences: number[];
}

/** The fences of a measured step: before the backward, after it, after the optimizer's step. */
export const FENCES = { beforeBackward: 0, afterBackward: 1, afterStep: 2 } as const;

/** The submission's optimizer over `params`, with the experiment's options and bucket size. */
export function makeOptimizer(Zero2AdamW: Zero2AdamWClass, comm: Comm, e: Experiment, params: Tensor[]): InstanceType<Zero2AdamWClass> {
  return new Zero2AdamW(comm, params, { ...e.opts, bucketBytes: e.bucketBytes });
}

/**
 * One data-parallel training step on this rank's mini-batch: gradients set
 * to none, forward, `await loss.backwardAsync()`, `optimizer.step()`. With
 * `key`, marks before the forward, before and after the backward, and after
 * each parameter's gradient has been handed over (a hook of the check's own,
 * registered after the optimizer's, so it runs after them).
 */
async function trainStep(comm: Comm, model: nn.MLP, params: Tensor[], optimizer: { step(): Promise<void> }, e: Experiment, s: number, key?: string, fence?: (k: number) => Promise<void>): Promise<void> {
  for (const p of params) p.grad = null;
  if (key !== undefined) await memory.mark(MARKS.beforeForward, { key });
  const { x, y } = miniBatch(e, comm.rank, s);
  const loss = nn.crossEntropy(model.forward(x), y);
  let removers: (() => void)[] = [];
  if (key !== undefined) {
    await memory.mark(MARKS.beforeBackward, { key });
    // Once per layer (after its weight, the larger of its two parameters): a mark is a collection, which costs time.
    removers = params.filter((p) => p.ndim === 2).map((p) => p.registerPostAccumulateGradHook(() => memory.mark(MARKS.inBackward, { key }).then(() => undefined)));
  }
  await fence?.(FENCES.beforeBackward);
  await loss.backwardAsync();
  await fence?.(FENCES.afterBackward);
  if (key !== undefined) {
    await memory.mark(MARKS.afterBackward, { key });
    for (const remove of removers) remove();
  }
  await optimizer.step();
  await fence?.(FENCES.afterStep);
}

/**
 * The ring collectives keep the last chunk they received, per Comm, to carry
 * the first message of their next call (collectives' message-buffers.ts): a
 * chunk of about ⌈P/N⌉ elements that an optimizer's all-gather leaves behind
 * for good. One all-gather of P elements here, before the first mark, puts
 * that chunk into the baseline, so that what the optimizer keeps between
 * steps is measured without it.
 */
async function warmUpCollectives(comm: Comm, p: number): Promise<void> {
  const counts = chunkBounds(p, comm.worldSize).map((b) => b.end - b.start);
  await allGather(comm, zeros([counts[comm.rank]!]), { counts });
}

/**
 * Data-parallel training with the submission's Zero2AdamW. Returns the
 * parameters after each step, and the checkpoint (`stateDict()`) saved after
 * `e.checkpointAfter` steps. With `measure`, marks before the optimizer is
 * built and around step `measure.step` (see trainStep), fences around
 * that step's backward and after its optimizer step, and keeps no
 * parameters until the last step, so that nothing of its own sits between
 * the marks.
 */
export async function zero2Training(comm: Comm, entry: string, e: Experiment, measure?: Measure): Promise<StepsResult> {
  // Before the submission is loaded: the fence keeps the Comm's own methods.
  const fence = measure ? fencer(comm, measure.fences) : undefined;
  const Zero2AdamW = await loadExport<Zero2AdamWClass>(entry, 'Zero2AdamW');
  const model = makeModel(e);
  const params = optimizerParams(e, model);
  if (measure) {
    await warmUpCollectives(comm, params.reduce((n, p) => n + p.numel, 0));
    await memory.mark(MARKS.base, { key: measure.key });
  }
  const optimizer = makeOptimizer(Zero2AdamW, comm, e, params);
  const out: StepsResult = { params: [] };
  let dict: unknown;
  for (let s = 0; s < e.steps; s++) {
    const measured = measure?.step === s;
    await trainStep(comm, model, params, optimizer, e, s, measured ? measure.key : undefined, measured ? fence : undefined);
    if (!measure || s + 1 === e.steps) out.params.push(flattenTensors(params));
    if (s + 1 === e.checkpointAfter) out.checkpoint = saveCheckpoint((dict = optimizer.stateDict()));
  }
  markChangedSinceSave(out, dict);
  return out;
}

/**
 * Training resumed from the checkpoints, on workers that never ran the
 * submission: the model at the reference parameters after
 * `e.checkpointAfter` steps, a fresh optimizer that loads this rank's
 * checkpoint, then the remaining steps. Returns the parameters after each.
 */
export async function resumeTraining(comm: Comm, entry: string, e: Experiment, start: Tensor, checkpoints: SavedCheckpoint[]): Promise<StepsResult> {
  const Zero2AdamW = await loadExport<Zero2AdamWClass>(entry, 'Zero2AdamW');
  const model = makeModel(e);
  const params = optimizerParams(e, model);
  const values = unflattenTensors(start, params.map((p) => [...p.shape]));
  noGrad(() => params.forEach((p, i) => p.copy_(values[i]!)));
  const optimizer = makeOptimizer(Zero2AdamW, comm, e, params);
  const mine = loadableCheckpoint(checkpoints[comm.rank]!);
  const loaded = fingerprintOf(mine);
  optimizer.loadStateDict(mine);
  const out: StepsResult = { params: [] };
  for (let s = e.checkpointAfter ?? 0; s < e.steps; s++) {
    await trainStep(comm, model, params, optimizer, e, s);
    out.params.push(flattenTensors(params));
  }
  expectCheckpointKept(mine, loaded);
  return out;
}
