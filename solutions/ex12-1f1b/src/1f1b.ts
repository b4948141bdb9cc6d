/**
 * Exercise 12: 1F1B, one forward, one backward (reference solution).
 *
 * Stage s runs min(p - s - 1, m) warm-up forwards: exactly enough that its
 * first backward's gradient is on its way by the time it needs it (the
 * last stage needs none, stage 0 needs p - 1). Then it alternates one
 * forward and one backward, and cools down with the backwards left. So stage
 * s never holds more than min(p - s, m) micro-batches' activations, against
 * m for all-forward-all-backward, with the same bubble. A warm-up of p - 1
 * on every stage keeps up to p micro-batches alive on every stage (and runs
 * forwards of micro-batches that do not exist when m < p - 1).
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

/** What a stage keeps of a micro-batch between its forward and its backward. */
interface Saved {
  input: Tensor | null;
  output: Tensor;
}

/**
 * One training step on this rank, stage `comm.rank` of `comm.worldSize`
 * consecutive stages, with the 1F1B schedule: warm-up forwards, then one
 * forward and one backward in turn, then the remaining backwards. Micro-batch
 * j is rows `chunkBounds(B, m)[j]` of the batch. Afterwards every parameter
 * of `stage` holds in `.grad` (added to what it held) the gradient of the
 * whole batch's mean cross-entropy loss, as one process on the whole batch
 * would compute it; the caller zeroes the gradients before and steps the
 * optimizer after. Stage s holds at most min(p - s, m) micro-batches'
 * activations at any time.
 *
 * Resolves on the last stage to the whole batch's mean loss, on the others
 * to null.
 */
export async function oneFOneBStep(comm: Comm, stage: Stage, batch: PipelineBatch, microBatches: number): Promise<number | null> {
  const { rank, worldSize } = comm;
  const first = rank === 0;
  const last = rank === worldSize - 1;
  const m = microBatches;
  const batchSize = first ? batch.inputs!.shape[0]! : last ? batch.targets!.length : 0;
  const saved = new Map<number, Saved>();
  let loss = 0;

  const forward = async (j: number): Promise<void> => {
    let x: Tensor;
    if (first) {
      const { start, end } = chunkBounds(batchSize, m)[j]!;
      x = batch.inputs!.slice(0, start, end);
    } else {
      x = await comm.recv(rank - 1, { tag: j });
      x.requiresGrad = true;
    }
    const y = stage.forward(x);
    if (last) {
      const { start, end } = chunkBounds(batchSize, m)[j]!;
      const scaled = nn.crossEntropy(y, batch.targets!.slice(start, end)).mul((end - start) / batchSize);
      loss += scaled.item();
      saved.set(j, { input: first ? null : x, output: scaled });
    } else {
      comm.isend(rank + 1, y.detach(), { tag: j });
      saved.set(j, { input: first ? null : x, output: y });
    }
  };

  const backward = async (j: number): Promise<void> => {
    const { input, output } = saved.get(j)!;
    // Dropping the micro-batch's entry frees its activations once its backward is done.
    saved.delete(j);
    if (last) output.backward();
    else output.backward(await comm.recv(rank + 1, { tag: j }));
    if (!first) comm.isend(rank - 1, input!.grad!, { tag: j });
  };

  const warmup = Math.min(worldSize - rank - 1, m);
  let nextForward = 0;
  let nextBackward = 0;
  for (let i = 0; i < warmup; i++) await forward(nextForward++);
  for (let i = 0; i < m - warmup; i++) {
    await forward(nextForward++);
    await backward(nextBackward++);
  }
  for (let i = 0; i < warmup; i++) await backward(nextBackward++);
  return last ? loss : null;
}
