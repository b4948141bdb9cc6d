/**
 * Exercise 6: gradient accumulation.
 *
 * A batch too large for one pass is split into micro-batches: forward and
 * backward on each in turn, the gradients adding up in `.grad`, one
 * optimizer step at the end. With data parallelism the gradients must also
 * be averaged over the ranks, and exchanging them once per step is enough:
 * DDP's `no_sync()` skips the all-reduce on every micro-batch but the last.
 * See README.md.
 *
 * You may use @dtlab/tensor, @dtlab/runtime and @dtlab/collectives.
 */
import { flattenTensors, noGrad, unflattenTensors, nn, type Tensor } from '@dtlab/tensor';
import type { Comm } from '@dtlab/runtime';
import { allReduce } from '@dtlab/collectives';
import { uniqueParameters } from './model-tensors.ts';

/** One micro-batch: inputs of shape [n, features] and the n class labels. */
export interface MicroBatch {
  x: Tensor;
  y: number[];
}

/**
 * Computes the gradient of one optimizer step on every rank. This rank's part
 * of the step's batch is `microBatches` (their lengths may differ); every rank
 * has the same number of micro-batches, and the same number of examples in
 * all. Called with every `.grad` null; afterwards every parameter's `.grad`
 * holds, on every rank, the gradient of the mean cross-entropy over every
 * example of the step: all micro-batches of all ranks, each example weighing
 * the same. The ranks exchange gradients once per step, with one all-reduce.
 */
export async function accumulateGradients(comm: Comm, model: nn.Module, microBatches: MicroBatch[]): Promise<void> {
  const k = microBatches.length;
  for (const { x, y } of microBatches) {
    // The step's loss is the mean of the micro-batches' mean losses: dividing
    // each by their number makes the gradients that add up in .grad their mean.
    nn.crossEntropy(model.forward(x), y).div(k).backward();
  }
  // Once per step, after the last micro-batch: average the accumulated
  // gradients over the ranks, all of them laid end to end in one all-reduce.
  const params = uniqueParameters(model).filter((p) => p.grad !== null);
  const flat = flattenTensors(params.map((p) => p.grad!));
  await allReduce(comm, flat, { op: 'avg' });
  const averaged = unflattenTensors(flat, params.map((p) => p.shape));
  noGrad(() => params.forEach((p, i) => p.grad!.copy_(averaged[i]!)));
}
