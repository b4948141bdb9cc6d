/**
 * Exercise 4: DDP from scratch.
 *
 * A data-parallel wrapper: every rank holds the whole model and trains on its
 * own part of the batch. The wrapper makes the replicas one model: it
 * broadcasts rank 0's values once, at the start, and after every backward
 * pass it leaves every parameter's gradient averaged over the ranks, so that
 * each rank's optimizer takes the step one process would take on the
 * combined batch. See README.md.
 *
 * You may use @dtlab/tensor, @dtlab/runtime and @dtlab/collectives.
 */
import type { Tensor, nn } from '@dtlab/tensor';
import type { Comm, Work } from '@dtlab/runtime';
import { allReduce, broadcast } from '@dtlab/collectives';
import { modelTensors, uniqueParameters } from './model-tensors.ts';

/**
 * Wraps one rank's replica of a model for data-parallel training, as
 * torch's DistributedDataParallel does. A training step on every rank:
 *
 *     model.zeroGrad();
 *     const loss = nn.crossEntropy(ddp.forward(x), labels);   // this rank's part of the batch
 *     loss.backward();
 *     await ddp.finishGradientSynchronization();
 *     optimizer.step();                                        // the same step on every rank
 *
 * After `finishGradientSynchronization()` every parameter's `.grad` holds the
 * mean over the ranks of their gradients; a parameter that got no gradient
 * keeps `.grad` null.
 */
export class DataParallel {
  /** The averaging started during the current backward pass, still running. */
  private readonly pending: Work<unknown>[] = [];

  /**
   * Wraps `model` on this rank. Every rank calls it with its own replica
   * (the replicas may start from different values); when it resolves, every
   * tensor of every rank's replica, frozen ones included, holds rank 0's value.
   */
  static async create(comm: Comm, model: nn.Module): Promise<DataParallel> {
    // Every rank must start from the same model, so everyone takes rank 0's values.
    for (const t of modelTensors(model)) await broadcast(comm, t, { src: 0 });
    return new DataParallel(comm, model);
  }

  private constructor(
    readonly comm: Comm,
    /** The wrapped model. */
    readonly model: nn.Module,
  ) {
    // A parameter's post-accumulate-grad hook runs as soon as its gradient is
    // complete in a backward pass: start averaging it right there, on a
    // background stream, so the exchange overlaps with the rest of backward.
    // The hook hands over the tensor, and all-reducing it with 'avg' leaves
    // the mean over all ranks in it.
    for (const p of uniqueParameters(model)) {
      p.registerPostAccumulateGradHook((t) => {
        this.pending.push(comm.background(() => allReduce(comm, t, { op: 'avg' }), 'all-reduce'));
      });
    }
  }

  /** Runs the wrapped model's forward pass. */
  forward(...inputs: Tensor[]): Tensor {
    return this.model.forward(...inputs);
  }

  /**
   * Waits until every gradient of the backward pass just run has been
   * averaged over the ranks. Call it after `backward()` and before the
   * optimizer step, on every rank.
   */
  async finishGradientSynchronization(): Promise<void> {
    for (const work of this.pending.splice(0)) await work.wait();
  }
}
