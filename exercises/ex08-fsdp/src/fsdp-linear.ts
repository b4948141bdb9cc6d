/**
 * Exercise 8: ZeRO stage 3 / FSDP, one layer at a time.
 *
 * Stage 3 shards the parameters themselves: between steps a rank keeps only
 * its shard of each layer's parameters, `chunkBounds(n, N)[rank]` of the
 * layer's n weights and biases laid end to end, and the optimizer steps the
 * shards. A layer's full parameters may exist only while the layer
 * computes: all-gathered just before it runs, and freed once it is done.
 * See README.md.
 *
 * You may use @dtlab/tensor, @dtlab/runtime and @dtlab/collectives.
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

  /**
   * `x·Wᵀ + b`, with W and b gathered just for this computation: `full` is
   * a local, so the gathered parameters are freed as soon as the layer is
   * done, and the rank is back to its shard.
   */
  async forward(x: Tensor): Promise<Tensor> {
    const full = await GatherParams.apply(this.shard, this);
    const { w, b } = split(full, this);
    return x.matmul(w.transpose(0, 1)).add(b);
  }
}

/**
 * The gather as an autograd function, so that gradients find their way back
 * to the shard: forward all-gathers the layer's full flat parameters from
 * every rank's shard; backward reduce-scatters their gradient with a mean,
 * so that this rank gets the averaged gradient of exactly its shard.
 */
class GatherParams extends autograd.Function {
  static override async forward(ctx: autograd.FunctionCtx, _shard: Tensor, layer: FsdpLinear): Promise<Tensor> {
    ctx.layer = layer;
    return layer.gather();
  }

  static override async backward(ctx: autograd.FunctionCtx, g: Tensor): Promise<(Tensor | null)[]> {
    const layer = ctx.layer as FsdpLinear;
    return [await reduceScatter(layer.comm, g, { op: 'avg' }), null];
  }
}

/** Views of W [out, in] and b [out] in the layer's full flat parameters. */
function split(full: Tensor, layer: FsdpLinear): { w: Tensor; b: Tensor } {
  const nw = layer.outFeatures * layer.inFeatures;
  return { w: full.slice(0, 0, nw).reshape([layer.outFeatures, layer.inFeatures]), b: full.slice(0, nw, nw + layer.outFeatures) };
}
