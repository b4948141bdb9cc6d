/**
 * Rank programs of the ex04 checks: they run in the rank workers, build this
 * rank's replica and its part of the data, train with the submission's
 * DataParallel, and return copies of every tensor of the replica after the
 * broadcast and after each step.
 */
import type { Comm } from '@dtlab/runtime';
import { nn, optim, type Tensor } from '@dtlab/tensor';
import { loadExport, fencer } from '@dtlab/grader';
import { buildMlp, namedTensors, rankBatch, snapshot, type ModelBuilder, type TrainSpec, type Trajectory } from './data.ts';

/** What a DataParallel class must offer (see the exercise's README). */
export interface DataParallelLike {
  forward(...inputs: Tensor[]): Tensor;
  finishGradientSynchronization(): Promise<void>;
}
/** The submission's DataParallel class. */
export interface DataParallelClass {
  create(comm: Comm, module: nn.Module): Promise<DataParallelLike>;
}

/** Data-parallel training of the public checks' MLP with the submission's DataParallel (see trainWith). */
export function trainDataParallel(comm: Comm, entry: string, spec: TrainSpec, fences?: number[]): Promise<Trajectory> {
  return trainWith(comm, entry, spec, buildMlp, fences);
}

/**
 * Data-parallel training with the submission: this rank's replica (seeded
 * per rank when `spec.seedsDiffer`), wrapped, then `spec.steps` steps of
 * plain SGD, each on this rank's part of the step's batch. The tensors are
 * listed here, before the submission sees the model, and copied after the
 * broadcast and after every step: what the submission leaves in them is what
 * the check compares.
 *
 * With `fences` (2 a step, secret tags: ../ex07-zero-stage-2/fences.ts),
 * each step's backward is fenced: fence 2s just before it and fence 2s+1
 * just after it returns, before finishGradientSynchronization, so the
 * trace tells which all-reduces began during backward.
 */
export async function trainWith(comm: Comm, entry: string, spec: TrainSpec, build: ModelBuilder, fences?: number[]): Promise<Trajectory> {
  // Bound before the submission loads: it cannot hold a fence back or send one early.
  const fence = fences ? fencer(comm, fences) : null;
  const DataParallel = await loadExport<DataParallelClass>(entry, 'DataParallel');
  const model = build(spec, comm.rank);
  const tensors = namedTensors(model).map((e) => e.tensor);
  const sgd = new optim.SGD([...new Set(model.parameters())], { lr: spec.lr });
  const ddp = await DataParallel.create(comm, model);
  const out: Trajectory = { initial: snapshot(tensors), steps: [] };
  for (let s = 0; s < spec.steps; s++) {
    const { x, y } = rankBatch(spec, s, comm.rank);
    sgd.zeroGrad();
    const loss = nn.crossEntropy(ddp.forward(x), y);
    await fence?.(2 * s);
    loss.backward();
    await fence?.(2 * s + 1);
    await ddp.finishGradientSynchronization();
    sgd.step();
    out.steps.push(snapshot(tensors));
  }
  return out;
}
