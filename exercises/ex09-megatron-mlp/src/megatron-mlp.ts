/**
 * Exercise 9: Megatron MLP, column- then row-parallel.
 *
 * A transformer's MLP block is y = GeLU(x·W1ᵀ + b1)·W2ᵀ + b2. With tensor
 * parallelism each of N ranks holds a slice of both weight matrices: the
 * hidden units are split into N chunks with `chunkBounds(H, N)`, rank r
 * keeps rows chunk r of W1 and b1 (the first layer is split by its output
 * columns, "column-parallel") and the same columns of W2 (the second layer
 * is split by its input rows, "row-parallel"). Every rank has the whole
 * input x and must end with the whole output y. See README.md.
 *
 * You may use @dtlab/tensor, @dtlab/runtime and @dtlab/collectives.
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
    // x is the same on every rank, so the column-parallel layer needs no
    // communication: each rank multiplies the whole input by its own rows of
    // W1 and applies GeLU to its own hidden units.
    const h = gelu(x.matmul(this.w1.transpose(0, 1)).add(this.b1));
    // Each rank's product with its columns of W2 is a partial sum over its
    // hidden units: one all-reduce adds them up and finishes the forward pass.
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
