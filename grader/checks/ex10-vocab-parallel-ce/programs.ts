/**
 * Rank programs of the ex10 checks: they run in the rank workers, hand the
 * submission this rank's columns of the seeded logits (a leaf that requires
 * grad), run its loss forward and backward, and return the loss and the
 * gradient of those columns.
 */
import type { Comm } from '@dtlab/runtime';
import { Tensor, tensor, zeros } from '@dtlab/tensor';
import { loadExport, type ValueShape } from '@dtlab/grader';
import { makeBatch, shardOf, type LogitsSpec } from './data.ts';

type VocabParallelCrossEntropy = (comm: Comm, logits: Tensor, targets: readonly number[], vocabSize: number) => Promise<Tensor>;

/** What a rank hands back: the loss (one element) and its logits' gradient (empty, with `missing`, when there was none). */
export interface LossResult {
  loss: Tensor;
  grad: Tensor;
  missing: string[];
}

/** The shape `ctx.run` checks on what a rank returns. */
export const LOSS_RESULT: ValueShape = { object: { loss: 'tensor', grad: 'tensor', missing: { array: 'string' } } };

/** Runs the submission's loss on this rank's shard, then its backward. */
export async function lossPass(comm: Comm, entry: string, spec: LogitsSpec): Promise<LossResult> {
  const vocabParallelCrossEntropy = await loadExport<VocabParallelCrossEntropy>(entry, 'vocabParallelCrossEntropy');
  const { logits, targets } = makeBatch(spec);
  const mine = shardOf(logits, comm.worldSize, comm.rank);
  mine.requiresGrad = true;
  const loss = await vocabParallelCrossEntropy(comm, mine, [...targets], spec.vocab);
  if (!(loss instanceof Tensor) || loss.numel !== 1) {
    throw new TypeError(`vocabParallelCrossEntropy must resolve to a one-element tensor (the mean loss), but it resolved to ${loss instanceof Tensor ? `a tensor of shape [${loss.shape.join(', ')}]` : typeof loss}`);
  }
  const value = tensor([loss.item()], { dtype: 'float64' });
  await loss.backwardAsync();
  const missing: string[] = [];
  const grad = mine.grad instanceof Tensor ? mine.grad.detach().clone() : (missing.push(`logits.grad (${mine.grad === null ? 'null' : typeof mine.grad})`), zeros([0]));
  return { loss: value, grad, missing };
}
