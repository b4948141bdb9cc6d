/**
 * Exercise 9: Megatron MLP, column- then row-parallel (reference solution).
 *
 * The input x is the same on every rank, but each rank uses it only through
 * its own rows of W1, so each rank's gradient of x is a partial sum: the
 * contribution of its hidden units. Megatron's conjugate operator "f"
 * (identity forward, all-reduce backward) sits where x enters the parallel
 * region and adds those partial gradients up; its partner "g" (all-reduce
 * forward, identity backward) finishes the forward pass. One all-reduce of
 * [B, O] in forward, one of [B, D] in backward.
 */
import { autograd, chunkBounds, type Tensor } from '@dtlab/tensor';
import type { Comm } from '@dtlab/runtime';
import { allReduce } from '@dtlab/collectives';

/** The unsharded MLP's weights, in nn.Linear's layout (weight [out, in]). */
export interface MLPWeights {
  /** First layer, [H, D]. */
  w1: Tensor;
  /** First layer's bias, [H]. */
  b1: Tensor;
  /** Second layer, [O, H]. */
  w2: Tensor;
  /** Second layer's bias, [O]. */
  b2: Tensor;
}

/**
 * GeLU, in the tanh form GPT-2 and Megatron-LM use:
 * 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))). It is not linear, so
 * GeLU(a + b) is not GeLU(a) + GeLU(b). Part of the contract: the checks'
 * unsharded MLP uses exactly this function, so leave it as it is.
 */
export function gelu(x: Tensor): Tensor {
  const inner = x.add(x.pow(3).mul(0.044715)).mul(Math.sqrt(2 / Math.PI));
  return x.mul(inner.tanh().add(1)).mul(0.5);
}

/**
 * Megatron's "f", copy to the tensor-parallel region: the forward is the
 * identity (every rank already holds the whole input); the backward
 * all-reduces the gradient, because each rank's gradient of the input
 * covers only its own hidden units.
 */
export class CopyToParallel extends autograd.Function {
  static override forward(ctx: autograd.FunctionCtx, x: Tensor, comm: Comm): Tensor {
    ctx.comm = comm;
    return x;
  }

  static override async backward(ctx: autograd.FunctionCtx, grad: Tensor): Promise<(Tensor | null)[]> {
    const sum = grad.clone();
    await allReduce(ctx.comm as Comm, sum);
    return [sum, null];
  }
}

/**
 * Megatron's "g", reduce from the tensor-parallel region: the forward
 * all-reduces (sums) the ranks' partial results; the backward passes the
 * gradient through unchanged, since every rank's partial result contributed
 * to the sum with weight 1.
 */
export class ReduceFromParallel extends autograd.Function {
  static override async forward(_ctx: autograd.FunctionCtx, partial: Tensor, comm: Comm): Promise<Tensor> {
    const sum = partial.detach().clone();
    await allReduce(comm, sum);
    return sum;
  }

  static override backward(_ctx: autograd.FunctionCtx, grad: Tensor): (Tensor | null)[] {
    return [grad, null];
  }
}

/**
 * The MLP block y = GeLU(x·W1ᵀ + b1)·W2ᵀ + b2 on N tensor-parallel ranks.
 * Rank r holds the hidden units `chunkBounds(H, N)[r]` = [start, end):
 * `w1` = rows start..end of W1, `b1` those entries of b1, `w2` = columns
 * start..end of W2, and the whole `b2` (replicated). Each is a leaf that
 * requires grad, so after `backward` its `.grad` is this rank's shard of
 * the unsharded MLP's gradient.
 */
export class ParallelMLP {
  /** This rank's rows of W1: [end - start, D]. */
  readonly w1: Tensor;
  /** This rank's entries of b1: [end - start]. */
  readonly b1: Tensor;
  /** This rank's columns of W2: [O, end - start]. */
  readonly w2: Tensor;
  /** The whole b2, [O], the same on every rank. */
  readonly b2: Tensor;

  /**
   * Takes this rank's shard of the unsharded weights `full` (every rank
   * passes the same ones), as copies: the model owns its parameters.
   */
  constructor(
    private readonly comm: Comm,
    full: MLPWeights,
  ) {
    const hidden = full.w1.shape[0]!;
    const { start, end } = chunkBounds(hidden, comm.worldSize)[comm.rank]!;
    this.w1 = leaf(full.w1.slice(0, start, end));
    this.b1 = leaf(full.b1.slice(0, start, end));
    this.w2 = leaf(full.w2.slice(1, start, end));
    this.b2 = leaf(full.b2);
  }

  /** This rank's parameters: w1, b1, w2, b2. */
  parameters(): Tensor[] {
    return [this.w1, this.b1, this.w2, this.b2];
  }

  /**
   * The whole output y [B, O] for the whole input x [B, D] (the same x on
   * every rank), on every rank. Differentiable: after
   * `await loss.backwardAsync()` every parameter holds this rank's shard of
   * the unsharded gradient, and `x.grad` the whole gradient of x, as the
   * unsharded MLP would give it.
   */
  async forward(x: Tensor): Promise<Tensor> {
    // f: the forward is free, the backward sums the ranks' partial gradients of x.
    const xin = CopyToParallel.apply(x, this.comm);
    // Column-parallel: GeLU acts on whole pre-activations of this rank's hidden units.
    const h = gelu(xin.matmul(this.w1.transpose(0, 1)).add(this.b1));
    // Row-parallel: partial sums over the hidden units, added up by g; b2 once, after the sum.
    const y = await ReduceFromParallel.apply(h.matmul(this.w2.transpose(0, 1)), this.comm);
    return y.add(this.b2);
  }
}

/** A copy of `t` that is a leaf requiring grad. */
function leaf(t: Tensor): Tensor {
  const p = t.detach().clone();
  p.requiresGrad = true;
  return p;
}
