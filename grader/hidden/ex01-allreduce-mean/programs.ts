/**
 * Rank programs of the ex01 hidden checks (run in the rank workers).
 */
import { nn, optim, type Tensor } from '@dtlab/tensor';
import type { Comm } from '@dtlab/runtime';
import { loadExport } from '@dtlab/grader';
import { makeModel, miniBatch, type Experiment } from './experiment.ts';

type AllReduceMean = (comm: Comm, tensors: Tensor[]) => Promise<void>;

/**
 * One data-parallel SGD step: local gradients on this rank's mini-batch,
 * averaged by the submission, then the update. Returns the parameters after it.
 */
export async function dataParallelStep(comm: Comm, entry: string, e: Experiment): Promise<Tensor[]> {
  const allReduceMean = await loadExport<AllReduceMean>(entry, 'allReduceMean');
  const model = makeModel(e);
  const { x, y } = miniBatch(e, comm.rank);
  nn.crossEntropy(model.forward(x), y).backward();
  await allReduceMean(comm, model.parameters().map((p) => p.grad!));
  new optim.SGD(model.parameters(), { lr: e.lr }).step();
  return model.parameters().map((p) => p.detach());
}
