/**
 * Exercise 4: DDP from scratch (reference solution).
 *
 * Rank 0's values are broadcast once, every tensor of the model (frozen ones
 * too). Then each trainable tensor, once however many layers share it, gets a
 * post-accumulate-grad hook that all-reduces its *gradient* with 'avg' on a
 * background stream. The hook is handed the parameter itself: all-reducing
 * that averages identical replicas (a no-op) and leaves every rank stepping
 * on its own gradient.
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
    for (const t of modelTensors(model)) await broadcast(comm, t, { src: 0 });
    return new DataParallel(comm, model);
  }

  private constructor(
    readonly comm: Comm,
    /** The wrapped model. */
    readonly model: nn.Module,
  ) {
    // Hooks fire in the same order on every rank (the backward graph is the
    // same), so the ranks start their all-reduces in the same order. A tied
    // weight gets one hook: two all-reduces of one gradient would race.
    for (const p of uniqueParameters(model)) {
      p.registerPostAccumulateGradHook((param) => {
        const grad = param.grad!;
        this.pending.push(comm.background(() => allReduce(comm, grad, { op: 'avg' }), 'all-reduce'));
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
