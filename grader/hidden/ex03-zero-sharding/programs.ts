/**
 * Rank programs of the ex03 hidden checks (run in the rank workers).
 */
import { memory, type Comm } from '@dtlab/runtime';
import { flattenTensors, nn, noGrad, unflattenTensors, type Tensor } from '@dtlab/tensor';
import { loadExport } from '@dtlab/grader';
import { makeModel, miniBatch, type Experiment } from './experiment.ts';
import { expectCheckpointKept, loadableCheckpoint, markChangedSinceSave, saveCheckpoint, type SavedCheckpoint, type StepsResult, type ZeroAdamWClass } from '../../checks/ex03-zero-sharding/programs.ts';
import { fingerprintOf } from '../../checks/ex03-zero-sharding/data.ts';

/** One data-parallel training step on this rank's mini-batch: local gradients of the cross-entropy mean, then `optimizer.step()`. */
async function trainStep(comm: Comm, model: nn.MLP, optimizer: { step(): Promise<void> }, e: Experiment, s: number): Promise<void> {
  const { x, y } = miniBatch(e, comm.rank, s);
  model.zeroGrad();
  nn.crossEntropy(model.forward(x), y).backward();
  await optimizer.step();
}

/**
 * Data-parallel training with the submission's ZeroAdamW. Returns the
 * parameters after each step, and the checkpoint (`stateDict()`) saved after
 * `e.checkpointAfter` steps.
 */
export async function zeroTraining(comm: Comm, entry: string, e: Experiment): Promise<StepsResult> {
  const ZeroAdamW = await loadExport<ZeroAdamWClass>(entry, 'ZeroAdamW');
  const model = makeModel(e);
  const optimizer = new ZeroAdamW(comm, model.parameters(), e.opts);
  const out: StepsResult = { params: [] };
  let dict: unknown;
  for (let s = 0; s < e.steps; s++) {
    await trainStep(comm, model, optimizer, e, s);
    out.params.push(flattenTensors(model.parameters()));
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
  const ZeroAdamW = await loadExport<ZeroAdamWClass>(entry, 'ZeroAdamW');
  const model = makeModel(e);
  const values = unflattenTensors(start, model.parameters().map((p) => [...p.shape]));
  noGrad(() => model.parameters().forEach((p, i) => p.copy_(values[i]!)));
  const optimizer = new ZeroAdamW(comm, model.parameters(), e.opts);
  const mine = loadableCheckpoint(checkpoints[comm.rank]!);
  const loaded = fingerprintOf(mine);
  optimizer.loadStateDict(mine);
  const out: StepsResult = { params: [] };
  for (let s = e.checkpointAfter; s < e.steps; s++) {
    await trainStep(comm, model, optimizer, e, s);
    out.params.push(flattenTensors(model.parameters()));
  }
  expectCheckpointKept(mine, loaded);
  return out;
}

/**
 * The optimizer's memory on the virtual device: one backward (so that the
 * gradients exist), a trusted mark, then the submission's optimizer built
 * and stepped `e.steps` times, a trusted mark after each step (marks force a
 * collection first, so only what is still referenced counts). What the
 * optimizer keeps between steps, wherever it keeps it, is the growth from
 * the first mark. Marks carry `key`, the check's secret.
 */
export async function zeroMemory(comm: Comm, entry: string, e: Experiment, key: string): Promise<number> {
  const ZeroAdamW = await loadExport<ZeroAdamWClass>(entry, 'ZeroAdamW');
  const model = makeModel(e);
  const backward = (s: number) => {
    const { x, y } = miniBatch(e, comm.rank, s);
    model.zeroGrad();
    nn.crossEntropy(model.forward(x), y).backward();
  };
  backward(0);
  await memory.mark('before the optimizer', { key });
  const optimizer = new ZeroAdamW(comm, model.parameters(), e.opts);
  for (let s = 0; s < e.steps; s++) {
    if (s > 0) backward(s);
    await optimizer.step();
    await memory.mark(`after step ${s + 1}`, { key });
  }
  return e.steps;
}
