/**
 * Exercise 8: ZeRO stage 3 / FSDP, one layer at a time (reference solution).
 *
 * Stage 3 shards the parameters themselves: between steps a rank keeps only
 * its shard of each layer's parameters, `chunkBounds(n, N)[rank]` of the
 * layer's n weights and biases laid end to end, and the optimizer steps the
 * shards. A layer's full parameters exist only while the layer computes:
 * all-gathered just before its forward and dropped right after it, gathered
 * again just before its backward and dropped after it, once its gradient
 * has been reduce-scattered into the shard's gradient.
 *
 * The trap is autograd itself: a layer written with ordinary tensor ops on
 * the gathered parameters (`x.matmul(w.transpose(0, 1))`) makes autograd
 * save `w` for the backward pass, so every layer's gathered parameters stay
 * alive from its forward to its backward: at the end of the forward, the
 * whole model, the memory of plain data parallelism. A custom autograd
 * function decides what it saves: here the layer's input only, and its
 * backward gathers the parameters again. That second gather of each step is
 * stage 3's price: 3Ψ of traffic a step against 2Ψ for stages 1 and 2.
 */
import { autograd, cat, chunkBounds, noGrad, type ChunkBound, type Tensor, type nn } from '@dtlab/tensor';
import type { Comm } from '@dtlab/runtime';
import { allGather, reduceScatter } from '@dtlab/collectives';

/**
 * One layer `y = x·Wᵀ + b` whose parameters are sharded across the ranks.
 * Rank r keeps only `shard`: elements `chunkBounds(n, N)[r]` of the layer's
 * n = out·in + out parameters laid end to end (W row by row, then b), as a
 * 1-D leaf tensor that requires grad. After `await loss.backwardAsync()`,
 * `shard.grad` holds the same elements of the gradient averaged over all
 * ranks, with the shard's shape, so that an optimizer stepping the shards
 * (AdamW, which is elementwise) trains the model exactly as one process on
 * the combined batch would.
 */
export class FsdpLinear {
  /** This rank's shard of the layer's flat parameters [W (out × in, row by row), b (out)]: a 1-D leaf that requires grad. */
  readonly shard: Tensor;
  readonly inFeatures: number;
  readonly outFeatures: number;
  /** Chunk r of the layer's flat parameters is rank r's shard. */
  readonly bounds: readonly ChunkBound[];

  /**
   * Shards `linear` (which must have a bias): keeps a copy of this rank's
   * chunk of its flat parameters, and nothing else of it, so that the full
   * parameters go once the caller drops `linear`.
   */
  constructor(
    readonly comm: Comm,
    linear: nn.Linear,
  ) {
    if (!linear.bias) throw new TypeError(`rank ${comm.rank}: FsdpLinear: the layer (${linear.inFeatures} → ${linear.outFeatures}) has no bias; this exercise shards layers with one`);
    this.inFeatures = linear.inFeatures;
    this.outFeatures = linear.outFeatures;
    const nw = this.outFeatures * this.inFeatures;
    this.bounds = chunkBounds(nw + this.outFeatures, comm.worldSize);
    const { start, end } = this.bounds[comm.rank]!;
    this.shard = noGrad(() => cat([linear.weight.reshape([nw]), linear.bias!]).slice(0, start, end).clone());
    this.shard.requiresGrad = true;
  }

  /** The layer's full flat parameters, gathered from every rank's shard: a new tensor that only the caller holds. */
  gather(): Promise<Tensor> {
    return allGather(this.comm, this.shard.detach(), { counts: this.bounds.map((b) => b.end - b.start) });
  }

  /** `x·Wᵀ + b`, with W and b gathered for the computation and dropped after it (see FsdpLinearFunction). */
  forward(x: Tensor): Promise<Tensor> {
    return FsdpLinearFunction.apply(x, this.shard, this);
  }
}

/**
 * The layer as one custom autograd function, so that what the backward pass
 * keeps is its own choice. Forward: gather W and b, compute x·Wᵀ + b, save
 * only x. Backward: gather W and b again, compute the three gradients, and
 * reduce-scatter the flat [dW, db] with a mean, so that this rank gets the
 * averaged gradient of exactly its shard, as the shard's gradient.
 */
class FsdpLinearFunction extends autograd.Function {
  static override async forward(ctx: autograd.FunctionCtx, x: Tensor, _shard: Tensor, layer: FsdpLinear): Promise<Tensor> {
    ctx.layer = layer;
    ctx.saveForBackward(x);
    const full = await layer.gather();
    // Code after an await runs with grad recording on again: keep the computation out of the graph.
    return noGrad(() => {
      const { w, b } = split(full, layer);
      return x.matmul(w.transpose(0, 1)).add(b);
    });
  }

  static override async backward(ctx: autograd.FunctionCtx, g: Tensor): Promise<(Tensor | null)[]> {
    const layer = ctx.layer as FsdpLinear;
    const [x] = ctx.savedTensors;
    const full = await layer.gather();
    const { gx, flatGrad } = noGrad(() => {
      const { w } = split(full, layer);
      const gw = g.transpose(0, 1).matmul(x!); // dL/dW = gᵀ·x, [out, in]
      return { gx: ctx.needsInputGrad[0] ? g.matmul(w) : null, flatGrad: cat([gw.reshape([gw.numel]), g.sum(0)]) };
    });
    const shardGrad = await reduceScatter(layer.comm, flatGrad, { op: 'avg' });
    return [gx, shardGrad, null];
  }
}

/** Views of W [out, in] and b [out] in the layer's full flat parameters. */
function split(full: Tensor, layer: FsdpLinear): { w: Tensor; b: Tensor } {
  const nw = layer.outFeatures * layer.inFeatures;
  return { w: full.slice(0, 0, nw).reshape([layer.outFeatures, layer.inFeatures]), b: full.slice(0, nw, nw + layer.outFeatures) };
}
