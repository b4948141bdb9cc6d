/**
 * Exercise 10: vocabulary-parallel cross-entropy.
 *
 * A language model's last layer maps each token's hidden state to logits
 * over the whole vocabulary, V of them (50 000 or more). With tensor
 * parallelism that layer is column-parallel, so rank r ends with the logits
 * of its slice of the vocabulary only, `chunkBounds(V, N)[r]`. Gathering
 * B·V logits onto every rank would cost more than the layer itself; compute
 * the loss and its gradient from the shards instead. See README.md.
 *
 * You may use @dtlab/tensor, @dtlab/runtime and @dtlab/collectives.
 */
import { autograd, chunkBounds, tensor, type Tensor } from '@dtlab/tensor';
import type { Comm } from '@dtlab/runtime';
import { allReduce } from '@dtlab/collectives';

/**
 * The mean cross-entropy of logits sharded by vocabulary, as a custom
 * autograd function: forward(logits [B, V_r], targets, vocabStart, comm)
 * gives the scalar mean loss over the B tokens, the same on every rank;
 * backward gives the gradient of this rank's logits.
 */
export class VocabParallelCrossEntropy extends autograd.Function {
  static override async forward(ctx: autograd.FunctionCtx, logits: Tensor, targets: readonly number[], vocabStart: number, comm: Comm): Promise<Tensor> {
    const [batch, width] = logits.shape as [number, number];
    const z = logits.detach();
    // Subtract each row's maximum before exp, so that large logits cannot
    // overflow. Each rank knows the maximum of its own shard, which is all
    // the shift needs: log-softmax does not change when a row is shifted.
    const max = z.max(1, true);
    const shifted = z.sub(max).detach();
    const exps = shifted.exp().detach();
    const sumExp = exps.sum(1).detach().clone();
    // Only the rank whose shard holds a token's target knows its logit; the others add 0.
    // The sums of exponentials and the target logits of all ranks add up to the whole row's.
    const onehot = new Float64Array(batch * width);
    const picked = new Float64Array(batch);
    const values = shifted.contiguous().data();
    targets.forEach((t, i) => {
      const local = t - vocabStart;
      if (local < 0 || local >= width) return;
      onehot[i * width + local] = 1;
      picked[i] = values[i * width + local]!;
    });
    const targetLogit = tensor(picked, { dtype: z.dtype });
    await allReduce(comm, sumExp);
    await allReduce(comm, targetLogit);
    ctx.saveForBackward(exps.div(sumExp.reshape([batch, 1])).detach(), tensor(onehot, { shape: [batch, width], dtype: z.dtype }));
    ctx.batch = batch;
    return sumExp.log().sub(targetLogit).mean().detach();
  }

  static override backward(ctx: autograd.FunctionCtx, grad: Tensor): (Tensor | null)[] {
    const [softmax, onehot] = ctx.savedTensors as [Tensor, Tensor];
    // d(mean loss)/dz = (softmax - one-hot) / B, this rank's columns only.
    return [softmax.sub(onehot).mul(grad).div(ctx.batch as number), null, null, null];
  }
}

/**
 * The mean over the B tokens of -log softmax(z)[i, targets[i]], where z
 * [B, V] are logits that no rank holds whole: this rank holds `logits`, the
 * columns `chunkBounds(vocabSize, N)[rank]` of z. `targets` are the B
 * tokens' classes in [0, V), the same on every rank. Resolves to the scalar
 * loss, the same on every rank; differentiable, so after
 * `await loss.backwardAsync()` `logits.grad` is this rank's columns of the
 * full gradient. Never gathers the logits.
 */
export async function vocabParallelCrossEntropy(comm: Comm, logits: Tensor, targets: readonly number[], vocabSize: number): Promise<Tensor> {
  const { start, end } = chunkBounds(vocabSize, comm.worldSize)[comm.rank]!;
  if (logits.ndim !== 2 || logits.shape[1] !== end - start || logits.shape[0] !== targets.length) {
    throw new RangeError(`rank ${comm.rank}: vocabParallelCrossEntropy: expected logits [${targets.length}, ${end - start}] (columns ${start} to ${end - 1} of ${vocabSize}), got [${logits.shape.join(', ')}]`);
  }
  return VocabParallelCrossEntropy.apply(logits, targets, start, comm);
}
