/**
 * Exercise 11: GPipe, micro-batches through the stages (reference solution).
 *
 * One process on the whole batch minimises the mean loss over its B
 * examples, (1/B)·Σ_i loss_i. Micro-batch j's cross-entropy is the mean over
 * its own n_j rows, so the whole batch's loss is Σ_j (n_j / B)·loss_j: each
 * micro-batch's loss is scaled by its share of the batch before its
 * backward, and the gradients accumulated over the micro-batches are then
 * the whole batch's. Backpropagating each undivided mean sums m means
 * instead of averaging them.
 */
import { chunkBounds, nn, type Tensor } from '@dtlab/tensor';
import type { Comm } from '@dtlab/runtime';

/** What one pipeline stage gets for a step: the first stage the inputs, the last stage the targets. */
export interface PipelineBatch {
  /** Stage 0 only: the whole batch's inputs, [B, D]. */
  inputs?: Tensor;
  /** The last stage only: the B examples' classes. */
  targets?: readonly number[];
}

/** A stage of the model: consecutive layers; `forward` maps a micro-batch's activations to the next stage's. */
export interface Stage {
  forward(x: Tensor): Tensor;
}

/** Micro-batch j of m: rows chunkBounds(B, m)[j] of the batch. */
function rowsOf(batchSize: number, m: number, j: number): { start: number; end: number } {
  return chunkBounds(batchSize, m)[j]!;
}

/**
 * One GPipe training step on this rank, stage `comm.rank` of `comm.worldSize`
 * consecutive stages: the batch is cut into `microBatches` micro-batches
 * (rows `chunkBounds(B, m)[j]`), all their forwards run, then all their
 * backwards (all-forward-all-backward). Activations go to the next stage,
 * gradients of them to the previous one. Afterwards every parameter of
 * `stage` holds in `.grad` (added to what it held, as backward does) the
 * gradient of the whole batch's mean cross-entropy loss, exactly as one
 * process on the whole batch would compute it. The caller zeroes the
 * gradients before and steps the optimizer after.
 *
 * Resolves on the last stage to the whole batch's mean loss, on the others
 * to null.
 */
export async function gpipeStep(comm: Comm, stage: Stage, batch: PipelineBatch, microBatches: number): Promise<number | null> {
  const { rank, worldSize } = comm;
  const first = rank === 0;
  const last = rank === worldSize - 1;
  const m = microBatches;
  const batchSize = first ? batch.inputs!.shape[0]! : last ? batch.targets!.length : 0;
  const inputs: (Tensor | null)[] = [];
  const outputs: Tensor[] = [];
  let loss = 0;

  // All forwards: micro-batch j's activations arrive with tag j and leave with tag j.
  for (let j = 0; j < m; j++) {
    let x: Tensor;
    if (first) {
      const { start, end } = rowsOf(batchSize, m, j);
      x = batch.inputs!.slice(0, start, end);
    } else {
      x = await comm.recv(rank - 1, { tag: j });
      x.requiresGrad = true;
    }
    const y = stage.forward(x);
    inputs.push(first ? null : x);
    if (last) {
      const { start, end } = rowsOf(batchSize, m, j);
      // The whole batch's mean loss is Σ_j (n_j / B)·loss_j: scale each micro-batch by its share.
      const scaled = nn.crossEntropy(y, batch.targets!.slice(start, end)).mul((end - start) / batchSize);
      loss += scaled.item();
      outputs.push(scaled);
    } else {
      comm.isend(rank + 1, y.detach(), { tag: j });
      outputs.push(y);
    }
  }

  // All backwards, in the same order: micro-batch j's gradient arrives with tag j.
  for (let j = 0; j < m; j++) {
    const y = outputs[j]!;
    if (last) y.backward();
    else y.backward(await comm.recv(rank + 1, { tag: j }));
    if (!first) comm.isend(rank - 1, inputs[j]!.grad!, { tag: j });
  }
  return last ? loss : null;
}
