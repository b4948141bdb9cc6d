/**
 * Exercise 7: ZeRO stage 2 for AdamW (reference solution).
 *
 * Stage 1 (exercise 3) shards Adam's moments; stage 2 shards the gradients
 * too. The reduction already leaves each rank only the mean gradient of its
 * own shard, so the only question is *when* it runs. Run at the end of
 * backward, it needs every parameter's full gradient alive at once: the
 * gradient memory of plain data parallelism. Run as the gradients are
 * produced, it needs one bucket at a time: each parameter's gradient is
 * copied into its bucket the moment backward has finished it (a
 * post-accumulate-grad hook) and dropped, and a full bucket is reduced
 * straight away, each piece of it to the rank that owns it. The full
 * gradient then never lives on a rank: at most this rank's shard of the
 * mean, one bucket, and the gradient backward is producing.
 */
import { FlatBuffer, chunkBounds, noGrad, zeros, type ChunkBound, type Tensor, type TypedArray, type optim } from '@dtlab/tensor';
import type { Comm } from '@dtlab/runtime';
import { allGather, reduce } from '@dtlab/collectives';

/**
 * A checkpoint of one rank's optimizer state (`stateDict()`): what a sharded
 * checkpoint holds per rank in DeepSpeed or FSDP. It has the same fields as
 * ZeroState; its tensors are copies.
 */
export type ZeroStateDict = ZeroState;

/** All the optimizer state one rank keeps between steps: the step count and the two moments of its shard, nothing else. */
export interface ZeroState {
  /** Steps taken so far; the bias corrections use it. */
  step: number;
  /** First moment m of this rank's shard (`chunkBounds(P, N)[rank]` elements). */
  expAvg: Tensor;
  /** Second moment v of this rank's shard. */
  expAvgSq: Tensor;
}

/** Options of Zero2AdamW: AdamW's, and the size of a gradient bucket. */
export interface Zero2Options extends optim.AdamOptions {
  /**
   * Bytes of gradient per bucket (default 16 KiB). Parameters are put into
   * buckets in reverse order, the order in which backward produces their
   * gradients; a bucket is closed once it holds at least this many bytes, so
   * it holds at most this plus one parameter.
   */
  bucketBytes?: number;
}

/** The default bucket size, in bytes. */
export const DEFAULT_BUCKET_BYTES = 16 * 1024;

/**
 * A bucket: consecutive parameters whose gradients are reduced together.
 * Its elements are `start` to `end` of the flat buffer (the parameters'
 * regions end to end, since parameters in reverse order are adjacent).
 */
export interface Bucket {
  /** Indices of its parameters, in the order backward produces them (reverse parameter order). */
  params: number[];
  start: number;
  end: number;
}

/**
 * Cuts `numels` (parameter sizes, in parameter order, laid end to end from
 * `offsets`) into buckets in reverse order: each takes parameters until it
 * holds at least `bucketElements` elements.
 */
export function planBuckets(numels: readonly number[], offsets: readonly number[], bucketElements: number): Bucket[] {
  const buckets: Bucket[] = [];
  let current: number[] = [];
  let size = 0;
  const close = () => {
    if (current.length === 0) return;
    const first = current[current.length - 1]!;
    const last = current[0]!;
    buckets.push({ params: current, start: offsets[first]!, end: offsets[last]! + numels[last]! });
    current = [];
    size = 0;
  };
  for (let i = numels.length - 1; i >= 0; i--) {
    current.push(i);
    size += numels[i]!;
    if (size >= bucketElements) close();
  }
  close();
  return buckets;
}

/**
 * AdamW with ZeRO stage 2: the parameters are replicated on every rank,
 * rank r keeps Adam's moments and the mean gradient only for its shard,
 * elements `chunkBounds(P, N)[r]` of the P parameter elements laid end to
 * end, and updates only that shard. The gradients are reduced bucket by
 * bucket while backward runs, from hooks the constructor registers, so no
 * rank ever holds the full gradient: per rank, ⌈P/N⌉ elements of gradient
 * shard plus about one bucket, instead of P.
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
 * and, in each step, runs its own forward and `await loss.backwardAsync()`
 * on its own mini-batch, then `await optimizer.step()`.
 */
export class Zero2AdamW {
  /**
   * All the optimizer state this rank keeps between steps, and only that:
   * 2 moments × ⌈P/N⌉ elements × 4 bytes, about. A checkpoint
   * (`stateDict()`) must be all a fresh optimizer needs to go on training
   * exactly as this one would.
   */
  readonly state: ZeroState;
  /** The options with their defaults filled in (those of AdamW: lr 1e-3, betas (0.9, 0.999), eps 1e-8, weightDecay 1e-2). */
  readonly options: Required<optim.AdamOptions>;
  /** The buckets, in the order their gradients are produced. */
  readonly buckets: readonly Bucket[];
  /** The parameters as one flat buffer; the parameters are views of it. */
  private readonly flat: FlatBuffer;
  /** Chunk r of the flat buffer is rank r's shard. */
  private readonly shards: ChunkBound[];
  /** This rank's shard of the mean gradient, written bucket by bucket during backward. */
  private readonly gradShard: Tensor;
  /** For each parameter, its bucket. */
  private readonly bucketOf: number[];
  /** Per bucket: the gradients gathered so far (null until the first arrives, and again once reduced), and how many arrived. */
  private readonly filling: { buffer: Tensor | null; ready: number; reduced: boolean }[];
  /** The reductions started so far, one after another, so that every rank makes its collective calls in the same order. */
  private reductions: Promise<void> = Promise.resolve();

  /**
   * Takes over `params`: they become views of one flat buffer (so a model
   * holding them sees every update), this rank's shard of the moments and of
   * the gradient is allocated, and a hook on every parameter hands its
   * gradient to its bucket as soon as backward has produced it.
   */
  constructor(
    private readonly comm: Comm,
    params: Tensor[],
    opts: Zero2Options = {},
  ) {
    const { bucketBytes = DEFAULT_BUCKET_BYTES, ...adam } = definedOptions(opts) as Zero2Options;
    this.options = { lr: 1e-3, betas: [0.9, 0.999], eps: 1e-8, weightDecay: 1e-2, ...adam };
    this.flat = FlatBuffer.adopt(params);
    this.shards = chunkBounds(this.flat.numel, comm.worldSize);
    const { start, end } = this.shards[comm.rank]!;
    const dtype = this.flat.buffer.dtype;
    this.state = { step: 0, expAvg: zeros([end - start], { dtype }), expAvgSq: zeros([end - start], { dtype }) };
    this.gradShard = zeros([end - start], { dtype });
    const elementBytes = dtype === 'float64' ? 8 : 4;
    this.buckets = planBuckets(params.map((p) => p.numel), this.flat.offsets, Math.max(1, Math.floor(bucketBytes / elementBytes)));
    this.bucketOf = new Array<number>(params.length);
    this.buckets.forEach((b, k) => b.params.forEach((i) => (this.bucketOf[i] = k)));
    this.filling = this.buckets.map(() => ({ buffer: null, ready: 0, reduced: false }));
    params.forEach((p, i) => p.registerPostAccumulateGradHook(() => this.gradReady(i)));
  }

  /**
   * Backward has produced parameter i's gradient: copy it into its bucket
   * and drop it, and once the bucket is complete, reduce it. The returned
   * promise settles when the reduction is done (`backwardAsync` waits for it,
   * so that the bucket is freed before backward goes on).
   */
  private gradReady(i: number): Promise<void> | undefined {
    const p = this.flat.tensors[i]!;
    const k = this.bucketOf[i]!;
    const b = this.buckets[k]!;
    const f = this.filling[k]!;
    if (f.reduced) throw new Error(`rank ${this.comm.rank}: parameter ${i} received a second gradient in one step; call optimizer.step() after each backward pass`);
    f.buffer ??= zeros([b.end - b.start], { dtype: this.flat.buffer.dtype });
    const at = this.flat.offsets[i]! - b.start;
    noGrad(() => f.buffer!.slice(0, at, at + p.numel).copy_(p.grad!.reshape([p.numel])));
    p.grad = null;
    f.ready++;
    return f.ready === b.params.length ? this.reduceBucket(k) : undefined;
  }

  /** Queues bucket k's reduction after those already started; resolves when it is done. */
  private reduceBucket(k: number): Promise<void> {
    const f = this.filling[k]!;
    f.reduced = true;
    this.reductions = this.reductions.then(() => this.reducePieces(k));
    return this.reductions;
  }

  /**
   * Reduces bucket k: each piece of it that falls in rank c's shard is
   * averaged over all ranks into rank c, which writes it into its gradient
   * shard. Then the bucket's memory goes.
   */
  private async reducePieces(k: number): Promise<void> {
    const b = this.buckets[k]!;
    const f = this.filling[k]!;
    const buffer = f.buffer ?? zeros([b.end - b.start], { dtype: this.flat.buffer.dtype });
    f.buffer = null;
    const mine = this.shards[this.comm.rank]!;
    for (const [c, s] of this.shards.entries()) {
      const lo = Math.max(b.start, s.start);
      const hi = Math.min(b.end, s.end);
      if (lo >= hi) continue;
      const piece = buffer.slice(0, lo - b.start, hi - b.start);
      await reduce(this.comm, piece, { dst: c, op: 'avg' });
      if (c === this.comm.rank) noGrad(() => this.gradShard.slice(0, lo - mine.start, hi - mine.start).copy_(piece));
    }
  }

  /**
   * One AdamW step of the data-parallel model. Each rank calls it after its
   * own backward pass on its own mini-batch; afterwards every rank holds the
   * same parameters, equal to one AdamW step on the mean of all ranks'
   * gradients. Parameters without a gradient count as a zero gradient.
   */
  async step(): Promise<void> {
    // Buckets with a parameter that got no gradient were never completed by the hooks.
    for (const [k, f] of this.filling.entries()) if (!f.reduced) void this.reduceBucket(k);
    await this.reductions;
    const { start, end } = this.shards[this.comm.rank]!;
    const shard = this.flat.buffer.slice(0, start, end).clone();
    this.state.step++;
    adamwUpdate(shard.data(), this.gradShard.data(), this.state.expAvg.data(), this.state.expAvgSq.data(), this.state.step, this.options);
    for (const f of this.filling) {
      f.ready = 0;
      f.reduced = false;
    }
    // Every rank needs the whole model for the next forward pass.
    const full = await allGather(this.comm, shard, { counts: this.shards.map((s) => s.end - s.start) });
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
   * copies what it restores: later steps leave `dict` as it was.
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
function definedOptions<T extends object>(opts: T): T {
  return Object.fromEntries(Object.entries(opts).filter(([, v]) => v !== undefined)) as T;
}
