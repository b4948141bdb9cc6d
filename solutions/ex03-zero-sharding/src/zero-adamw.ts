/**
 * Exercise 3: ZeRO stage 1 for AdamW (reference solution).
 *
 * Sharding the optimizer state does not change what data parallelism needs:
 * every rank still sees a different mini-batch, so the gradient must be
 * averaged over all ranks before the update. ZeRO does that average with a
 * reduce-scatter, which leaves each rank only the averaged gradient of its
 * own shard: exactly what it needs to update that shard. The all-gather
 * afterwards then hands every rank the other shards. Together the two cost
 * 2(N-1)/N·P elements sent per rank, the same as the all-reduce of plain
 * data parallelism: the memory saving comes for free in communication.
 *
 * Skipping the reduction ("the all-gather makes the ranks agree anyway")
 * makes the ranks agree on a wrong model: shard r is updated from rank r's
 * mini-batch alone.
 */
import { FlatBuffer, chunkBounds, noGrad, zeros, type ChunkBound, type Tensor, type TypedArray, type optim } from '@dtlab/tensor';
import type { Comm } from '@dtlab/runtime';
import { allGather, reduceScatter } from '@dtlab/collectives';

/**
 * A checkpoint of one rank's optimizer state (`stateDict()`): what a sharded
 * checkpoint holds per rank in DeepSpeed or FSDP. It has the same fields as
 * ZeroState; its tensors are copies.
 */
export type ZeroStateDict = ZeroState;

/** All the optimizer state one rank keeps: the step count and the two moments of its shard, nothing else. */
export interface ZeroState {
  /** Steps taken so far; the bias corrections use it. */
  step: number;
  /** First moment m of this rank's shard (`chunkBounds(P, N)[rank]` elements). */
  expAvg: Tensor;
  /** Second moment v of this rank's shard. */
  expAvgSq: Tensor;
}

/**
 * AdamW with ZeRO stage 1: the parameters are replicated on every rank, but
 * rank r keeps Adam's moments only for its shard, elements
 * `chunkBounds(P, N)[r]` of the P parameter elements laid end to end, and
 * updates only that shard. Memory for optimizer state per rank:
 * 2·⌈P/N⌉ elements instead of 2·P.
 *
 * The update is torch's AdamW, the same as `optim.AdamW` (see
 * packages/tensor/src/optim/adam.ts): with g the gradient averaged over all
 * ranks and t the step count,
 *
 *     p = p·(1 - lr·weightDecay)
 *     m = β1·m + (1 - β1)·g
 *     v = β2·v + (1 - β2)·g²
 *     p = p - (lr / (1 - β1^t)) · m / (√v / √(1 - β2^t) + eps)
 *
 * Every rank constructs it with the same parameters (same shapes and values)
 * and calls `step()` the same number of times.
 */
export class ZeroAdamW {
  /**
   * All the optimizer state this rank keeps, and only that: 2 moments ×
   * ⌈P/N⌉ elements × 4 bytes, about, instead of 2·P. Keep no parameters,
   * gradients or communication buffers in it, and no optimizer state
   * anywhere else: a checkpoint (`stateDict()`) must be all a fresh
   * optimizer needs to go on training exactly as this one would.
   */
  readonly state: ZeroState;
  /** The options with their defaults filled in (those of AdamW: lr 1e-3, betas (0.9, 0.999), eps 1e-8, weightDecay 1e-2). */
  readonly options: Required<optim.AdamOptions>;
  /** The parameters as one flat buffer; the parameters are views of it. */
  private readonly flat: FlatBuffer;
  /** Chunk r of the flat buffer is rank r's shard. */
  private readonly shards: ChunkBound[];

  /**
   * Takes over `params`: they become views of one flat buffer (so a model
   * holding them sees every update), and this rank's shard of the moments
   * is allocated.
   */
  constructor(
    private readonly comm: Comm,
    params: Tensor[],
    opts: optim.AdamOptions = {},
  ) {
    this.options = { lr: 1e-3, betas: [0.9, 0.999], eps: 1e-8, weightDecay: 1e-2, ...definedOptions(opts) };
    this.flat = FlatBuffer.adopt(params);
    this.shards = chunkBounds(this.flat.numel, comm.worldSize);
    const { start, end } = this.shards[comm.rank]!;
    const dtype = this.flat.buffer.dtype;
    this.state = { step: 0, expAvg: zeros([end - start], { dtype }), expAvgSq: zeros([end - start], { dtype }) };
  }

  /**
   * One AdamW step of the data-parallel model. Each rank calls it after its
   * own backward pass on its own mini-batch; afterwards every rank holds the
   * same parameters, equal to one AdamW step on the mean of all ranks'
   * gradients. Parameters without a gradient count as a zero gradient.
   */
  async step(): Promise<void> {
    const { rank } = this.comm;
    const { start, end } = this.shards[rank]!;
    // The mean gradient, but only the part this rank updates. Every rank saw
    // a different mini-batch, so the mean needs every rank's contribution.
    const grad = await reduceScatter(this.comm, this.flat.flatGrads(), { op: 'avg' });
    const shard = this.flat.buffer.slice(0, start, end).clone();
    this.state.step++;
    adamwUpdate(shard.data(), grad.data(), this.state.expAvg.data(), this.state.expAvgSq.data(), this.state.step, this.options);
    // Every rank needs the whole model for the next forward pass.
    const full = await allGather(this.comm, shard, { counts: this.shards.map((b) => b.end - b.start) });
    noGrad(() => this.flat.buffer.copy_(full));
  }

  /**
   * A checkpoint of this rank's optimizer state: the step count and copies
   * of the moments of its shard (a sharded checkpoint, as DeepSpeed and
   * FSDP save one file per rank). Training resumes from it with
   * `loadStateDict`, on a fresh optimizer of the same rank and world size.
   */
  stateDict(): ZeroStateDict {
    return { step: this.state.step, expAvg: this.state.expAvg.clone(), expAvgSq: this.state.expAvgSq.clone() };
  }

  /**
   * Restores the state `stateDict()` returned on this rank (of an optimizer
   * over parameters of the same shapes, with the same world size): the next
   * `step()` then does exactly what the saved optimizer's would have. It
   * copies what it restores: later steps leave `dict` as it was, so it can
   * be loaded again.
   */
  loadStateDict(dict: ZeroStateDict): void {
    const n = this.state.expAvg.numel;
    if (dict.expAvg.numel !== n || dict.expAvgSq.numel !== n) {
      throw new RangeError(`rank ${this.comm.rank}: loadStateDict: the checkpoint's moments have ${dict.expAvg.numel} and ${dict.expAvgSq.numel} elements, but this rank's shard has ${n}: load the checkpoint of the same rank, saved with the same world size`);
    }
    this.state.step = dict.step;
    noGrad(() => {
      this.state.expAvg.copy_(dict.expAvg.reshape([n]));
      this.state.expAvgSq.copy_(dict.expAvgSq.reshape([n]));
    });
  }
}

/**
 * AdamW on dense arrays, in place: `w` (parameters), `m` and `v` (moments)
 * are updated from `g`; `step` counts from 1. The same arithmetic, in the
 * same order, as optim.AdamW, so one rank reproduces it bit for bit.
 * (The arrays are the whole storage of tensors this class owns, so
 * `data()` returns the storage itself and writes land in the tensors.)
 */
function adamwUpdate(w: TypedArray, g: TypedArray, m: TypedArray, v: TypedArray, step: number, opts: Required<optim.AdamOptions>): void {
  const { lr, betas: [b1, b2], eps, weightDecay } = opts;
  const stepSize = lr / (1 - b1 ** step);
  const bc2Sqrt = Math.sqrt(1 - b2 ** step);
  const decay = 1 - lr * weightDecay;
  for (let i = 0; i < w.length; i++) {
    const wi = w[i]! * decay;
    m[i] = b1 * m[i]! + (1 - b1) * g[i]!;
    v[i] = b2 * v[i]! + (1 - b2) * g[i]! * g[i]!;
    w[i] = wi - (stepSize * m[i]!) / (Math.sqrt(v[i]!) / bc2Sqrt + eps);
  }
}

/** `opts` without undefined entries, so that `{ lr: undefined }` keeps the default (as in torch). */
function definedOptions(opts: optim.AdamOptions): optim.AdamOptions {
  return Object.fromEntries(Object.entries(opts).filter(([, v]) => v !== undefined));
}
